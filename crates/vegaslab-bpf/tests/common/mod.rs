//! Finding the objects `make bpf` builds (kernel/build): a missing one skips the test with a
//! printed reason, or fails it when `VEGASLAB_REQUIRE_BPF=1` (as `make test` sets).
#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::Arc;
use vegaslab_bpf::{BpfObject, Engine, LoadOptions};

/// kernel/build, from this crate's directory.
pub fn build_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../kernel/build")
}

/// The bytes of `kernel/build/<rel>`, or `None` (test skipped) when it was not built.
pub fn object_bytes(rel: &str) -> Option<Vec<u8>> {
    let path = build_dir().join(rel);
    match std::fs::read(&path) {
        Ok(b) => Some(b),
        Err(e) => {
            let why = format!("{} is missing ({e}): build it with `make bpf`", path.display());
            if std::env::var("VEGASLAB_REQUIRE_BPF").as_deref() == Ok("1") {
                panic!("{why}");
            }
            eprintln!("skipped: {why}");
            None
        }
    }
}

/// `kernel/build/<rel>` loaded with `engine` (default options otherwise); `None` when absent.
pub fn load(rel: &str, engine: Engine) -> Option<Arc<BpfObject>> {
    let bytes = object_bytes(rel)?;
    let opts = LoadOptions { engine, ..LoadOptions::default() };
    Some(Arc::new(BpfObject::load(&bytes, &opts).unwrap_or_else(|e| panic!("{rel}: {e}"))))
}

/// The refusal of `kernel/build/<rel>`; `None` when absent.
pub fn refusal(rel: &str) -> Option<String> {
    let bytes = object_bytes(rel)?;
    match BpfObject::load(&bytes, &LoadOptions::default()) {
        Ok(o) => panic!("{rel} loaded (hooks {:?}) but should be refused", o.hooks()),
        Err(e) => Some(e.to_string()),
    }
}
