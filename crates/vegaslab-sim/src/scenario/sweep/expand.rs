//! The expansion of a scenario's `[sweep]` into its plan, step by step: apply the user's
//! overrides, read the sweep, check its size from the lengths alone, generate and name the
//! axes, validate each value alone, then form the points and validate each one. The order is
//! what makes errors useful: a value bad on its own is reported on its own place before any
//! point is built (docs/sweep-format.md, "Errors").

use super::axes::build_axis;
use super::names::check_names;
use super::plan::{Sweep, FORMAT};
use super::points::build_points;
use super::read::read_sweep;
use super::seeds::seeds;
use super::size::check_size;
use super::validate::{check_param_alone, check_point};
use crate::scenario::overrides::apply_overrides;
use crate::scenario::precheck::precheck;
use crate::scenario::object_cache::LoadedObjects;
use crate::scenario::reader::{Ctx, Obj};
use crate::scenario::{from_value, toml_error, ErrorKind, ScenarioError};
use toml::Value;

/// Expand the `[sweep]` table of scenario `text` (with the user's `overrides`) into its
/// points, validating every point. A file without `[sweep]` is a sweep of one point (the base
/// scenario) and one seed.
pub fn expand(text: &str, source: &str, overrides: &[String]) -> Result<Sweep, ScenarioError> {
    expand_until(text, source, overrides, &mut || false).map(|sweep| sweep.expect("never stopped"))
}

/// How many values or points are validated between two calls of [`expand_until`]'s `stop`.
const STOP_CHECK_EVERY: usize = 1024;

/// [`expand`], asking `stop` every `STOP_CHECK_EVERY` (1024) validations whether to give up
/// (Ctrl-C while a large sweep is planned): `Ok(None)` when it did.
pub fn expand_until(text: &str, source: &str, overrides: &[String], stop: &mut dyn FnMut() -> bool) -> Result<Option<Sweep>, ScenarioError> {
    precheck(text, source)?;
    let mut doc: Value = toml::from_str(text).map_err(|e| ScenarioError::new(source, "", ErrorKind::Syntax, toml_error(text, &e)))?;
    apply_overrides(&mut doc, overrides).map_err(|(path, message, kind)| ScenarioError::new(source, &path, kind, message))?;
    let base = from_value(&doc, source)?;

    let files_read = std::cell::RefCell::new(Vec::new());
    let objects = LoadedObjects::default();
    let ctx = Ctx { file: source, files_read: &files_read, objects: &objects };
    let root = Obj::new(ctx, &doc, "")?;
    let (seed_spec, axis_specs) = match root.table("sweep")? {
        Some(sweep) => read_sweep(&sweep)?,
        None => (None, Vec::new()),
    };

    // Size first, from the lengths alone.
    check_size(ctx, seed_spec.as_ref(), &axis_specs)?;
    let seeds = seeds(seed_spec, base.seed);

    // Generate and check each axis's values.
    let mut axes = Vec::with_capacity(axis_specs.len());
    for spec in axis_specs {
        axes.push(build_axis(ctx, spec)?);
    }
    check_names(ctx, &axes)?;

    // Each value alone on the base scenario, so that a bad value is blamed on its own place.
    let mut checked = 0usize;
    let mut stopped = || {
        checked += 1;
        checked % STOP_CHECK_EVERY == 0 && stop()
    };
    for axis in &axes {
        for m in 0..axis.params.len() {
            check_param_alone(&doc, source, axis, m)?;
            if stopped() {
                return Ok(None);
            }
        }
    }

    let sweep_points = build_points(&axes);
    // With one axis, every point was just validated on its own.
    if axes.len() > 1 {
        for point in &sweep_points {
            check_point(&doc, source, &axes, point)?;
            if stopped() {
                return Ok(None);
            }
        }
    }

    let runs = sweep_points.len() as u64 * seeds.len() as u64;
    Ok(Some(Sweep { format: FORMAT, source: source.to_string(), overrides: overrides.to_vec(), axes, seeds, points: sweep_points, runs }))
}
