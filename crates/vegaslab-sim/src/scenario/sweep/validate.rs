//! Every value and every point built into a scenario by the core, so that a sweep that expands
//! never fails later on a bad combination, and each error blamed on its place in the file
//! (docs/sweep-format.md, "Errors"): a value bad on its own on `sweep.axis[1].values[3]` (or
//! `sweep.axis[1].range` for a generated value), a path the scenario cannot follow on the
//! axis's `path`, and a point whose values are each fine alone but not together on the axis
//! whose field the core rejected, with the whole point in the message.

use super::path::{is_prefix, overlap, parse_steps, PathStep};
use super::plan::{Axis, Point};
use crate::scenario::limits::quote_short;
use crate::scenario::overrides::apply_overrides;
use crate::scenario::{from_value, ErrorKind, ScenarioError};
use toml::Value;

/// Whether `error` is about the field at `steps` or one inside/around it.
fn related(error_path: &str, steps: &[PathStep]) -> bool {
    match parse_steps(error_path) {
        Some(e) => overlap(&e, steps),
        None => false,
    }
}

/// Try every value of parameter `m` of `axis` on the base document, together with its zip
/// partners' values at the same position (members of a zip vary together, so only their
/// combination has to be valid: an (alpha, beta) pair, RED's (min, max)). An error is blamed on
/// the member whose field the core rejected, else on parameter `m`.
pub(super) fn check_param_alone(doc: &Value, source: &str, axis: &Axis, m: usize) -> Result<(), ScenarioError> {
    let param = &axis.params[m];
    let steps = parse_steps(&param.path);
    for (j, v) in param.values.iter().enumerate() {
        let mut d = doc.clone();
        let partners: Vec<String> =
            axis.params.iter().enumerate().filter(|&(k, _)| k != m).map(|(_, p)| format!("{}={}", p.path, p.values[j].to_override())).collect();
        // A partner whose own path cannot be followed is reported when that partner is checked.
        if apply_overrides(&mut d, &partners).is_err() {
            continue;
        }
        let set = format!("{}={}", param.path, v.to_override());
        if let Err((_, message, _)) = apply_overrides(&mut d, &[set]) {
            // The path cannot be followed in this scenario (whatever the value).
            // A path that does not read as one is a syntax error; one that reads but leads
            // nowhere in this scenario refers to nothing.
            let kind = if steps.is_some() { ErrorKind::Reference } else { ErrorKind::Syntax };
            let message = format!("{}: {message}", quote_short(&param.path));
            return Err(ScenarioError::new(source, &format!("{}.path", param.origin.at), kind, message));
        }
        if let Err(e) = from_value(&d, source) {
            let is_path = e.kind == ErrorKind::UnknownField && parse_steps(&e.path).zip(steps.as_ref()).is_some_and(|(e, s)| is_prefix(&e, s));
            if is_path {
                let field = if e.path == param.path { String::new() } else { format!("{}: ", e.path) };
                let message = format!("{field}{}", e.message);
                return Err(ScenarioError::new(source, &format!("{}.path", param.origin.at), e.kind, message));
            }
            let blamed = axis.params.iter().find(|p| p.path == e.path).unwrap_or(param);
            let field = if e.path == blamed.path || e.path.is_empty() { String::new() } else { format!("{}: ", e.path) };
            let message = format!("{}{field}{}", blamed.origin.value_prefix(j, &blamed.values[j]), e.message);
            return Err(ScenarioError::new(source, &blamed.origin.value(j), e.kind, message));
        }
    }
    Ok(())
}

/// Build the scenario of one point; an error names the axis whose field was rejected.
pub(super) fn check_point(doc: &Value, source: &str, axes: &[Axis], point: &Point) -> Result<(), ScenarioError> {
    let mut d = doc.clone();
    apply_overrides(&mut d, &point.overrides).map_err(|(path, message, kind)| ScenarioError::new(source, &path, kind, message))?;
    let Err(e) = from_value(&d, source) else { return Ok(()) };
    let field = if e.path.is_empty() { String::new() } else { format!("{}: ", e.path) };
    let with = point.overrides.join(", ");
    for (k, axis) in axes.iter().enumerate() {
        for p in &axis.params {
            if parse_steps(&p.path).is_some_and(|s| related(&e.path, &s)) {
                let j = point.coords[k];
                let message = format!("{}{field}{} (in point {}: {with})", p.origin.value_prefix(j, &p.values[j]), e.message, point.index);
                return Err(ScenarioError::new(source, &p.origin.value(j), e.kind, message));
            }
        }
    }
    let message = format!("point {} ({with}): {field}{}", point.index, e.message);
    Err(ScenarioError::new(source, "sweep", e.kind, message))
}
