//! Files a scenario names (`links[i].delay_trace`, a flow's `cc = { bpf = "..." }`): where
//! they are found and how they are read.
//!
//! A path is absolute, or relative to the scenario file's directory (the current directory
//! when the scenario did not come from a file). Only a regular file is read (not a device, a
//! pipe or a directory: `/dev/zero` would never end), and never more than the caller's limit;
//! what was read is recorded with its SHA-256 for the normalised scenario's `files`.

use super::limits;
use super::reader::{Ctx, Obj};
use super::{ErrorKind, ScenarioError};

/// A file a scenario named, read.
pub struct NamedFile {
    /// Its bytes.
    pub bytes: Vec<u8>,
    /// The resolved path as errors show it (printable, shortened).
    pub shown: String,
    /// Hex SHA-256 of the bytes.
    pub sha256: String,
}

/// The file named by the string field `key` of `t`, if given: [`read_path`] for that field.
pub fn read_named(t: &Obj, key: &str, what: &str, limit: u64) -> Result<Option<NamedFile>, ScenarioError> {
    let Some(name) = t.string(key)? else { return Ok(None) };
    read_path(t.ctx, &t.field_path(key), name, what, limit).map(Some)
}

/// The file `name` that the scenario's field `field` names: resolved ([`resolve_relative`]),
/// checked to be a regular file of at most `limit` bytes, read, and recorded
/// (`Ctx::record_file`). `what` names the kind of file in messages ("a delay trace"). Every
/// error is of kind [`ErrorKind::File`] at `field`.
pub fn read_path(ctx: Ctx, field: &str, name: &str, what: &str, limit: u64) -> Result<NamedFile, ScenarioError> {
    let path = resolve_relative(ctx.file, name);
    let shown = limits::printable(&path.display().to_string());
    let file_err = |message: String| ctx.err_kind(field, ErrorKind::File, message);
    let meta = std::fs::metadata(&path).map_err(|e| file_err(format!("cannot read {shown}: {}", io_reason(&e))))?;
    if !meta.is_file() {
        return Err(file_err(format!("{shown} is not a regular file")));
    }
    if meta.len() > limit {
        return Err(file_err(format!("{shown} has {} bytes; {what} may have at most {} MiB", meta.len(), limit >> 20)));
    }
    let bytes = read_at_most(&path, limit).map_err(|e| file_err(format!("cannot read {shown}: {}", io_reason(&e))))?;
    let sha256 = ctx.record_file(field, name, &bytes);
    Ok(NamedFile { bytes, shown, sha256 })
}

/// An I/O error's reason without the OS error number.
fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file".to_string(),
        std::io::ErrorKind::PermissionDenied => "permission denied".to_string(),
        _ => e.to_string(),
    }
}

/// The file's bytes, refusing to read more than `limit` (the file may grow after `metadata`).
fn read_at_most(path: &std::path::Path, limit: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(path)?.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(std::io::Error::other(format!("larger than {} MiB", limit >> 20)));
    }
    Ok(bytes)
}

/// A path named in a scenario: absolute, or relative to the scenario file's directory (the
/// current directory when the scenario did not come from a file).
pub fn resolve_relative(source: &str, name: &str) -> std::path::PathBuf {
    let p = std::path::Path::new(name);
    if p.is_absolute() {
        return p.to_path_buf();
    }
    let src = std::path::Path::new(source);
    match src.parent() {
        Some(dir) if src.is_file() => dir.join(p),
        _ => p.to_path_buf(),
    }
}
