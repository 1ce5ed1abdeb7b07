//! Axis and parameter names: their form when read, and their uniqueness once every axis is
//! known (docs/sweep-format.md, "Axes", **Names**). They become the plan's columns and, later,
//! the dimensions and coordinates of an array view, so they are short, printable, distinct and
//! not one of the plan's own columns.

use super::plan::Axis;
use crate::scenario::limits::quote_short;
use crate::scenario::reader::{Ctx, Obj};
use crate::scenario::{ErrorKind, ScenarioError};
use std::collections::HashMap;

/// Longest axis or parameter name, in characters.
pub const MAX_NAME_CHARS: usize = 128;

/// Column names the plan's table uses for itself; no parameter may take them.
pub const RESERVED_NAMES: &[&str] = &["point", "seed", "overrides"];

/// The optional `name` of an axis or zip entry.
pub(super) fn read_name(obj: &Obj) -> Result<Option<String>, ScenarioError> {
    let Some(name) = obj.string("name")? else { return Ok(None) };
    let n = name.chars().count();
    if n == 0 || n > MAX_NAME_CHARS || name.chars().any(char::is_control) || name.trim() != name {
        let message = format!(
            "must be 1 to {MAX_NAME_CHARS} characters, without control characters or surrounding spaces, got {}",
            quote_short(name)
        );
        return Err(obj.err_kind("name", ErrorKind::OutOfRange, message));
    }
    Ok(Some(name.to_string()))
}

/// Axis names and parameter (column) names are unique across the sweep and not reserved. A
/// one-path axis and its parameter share one name.
pub(super) fn check_names(ctx: Ctx, axes: &[Axis]) -> Result<(), ScenarioError> {
    let mut taken: HashMap<&str, String> = HashMap::new();
    for (i, axis) in axes.iter().enumerate() {
        let mut names: Vec<(&str, String)> = Vec::new();
        if axis.params.len() > 1 {
            names.push((&axis.name, format!("sweep.axis[{i}]")));
        }
        for p in &axis.params {
            names.push((&p.name, p.origin.at.clone()));
        }
        for (name, at) in names {
            if RESERVED_NAMES.contains(&name) {
                let message = format!("must not be {} (reserved names: {})", quote_short(name), RESERVED_NAMES.join(", "));
                return Err(ctx.err_kind(&format!("{at}.name"), ErrorKind::Conflict, message));
            }
            if let Some(other) = taken.insert(name, at.clone()) {
                let message = format!("{} is already the name of {other}; give one of them a distinct name", quote_short(name));
                return Err(ctx.err_kind(&format!("{at}.name"), ErrorKind::Conflict, message));
            }
        }
    }
    Ok(())
}
