//! An axis's values generated from its spec, and checked to be distinct: a repeated value (or,
//! in a zip, a repeated entry) would run one point twice under one key (docs/sweep-format.md,
//! "Axes", **Distinct points**). Also the names of the axis and its columns, by default taken
//! from the paths (**Names**).

use super::plan::{Axis, Param};
use super::range::{range_values, SIGNIFICANT_DIGITS};
use super::spec::{AxisSpec, Source};
use super::value::{ParamValue, ValueKey};
use crate::scenario::reader::Ctx;
use crate::scenario::{ErrorKind, ScenarioError};
use std::collections::HashMap;

/// The axis of `spec`, its values generated (its length was bounded already).
pub(super) fn build_axis(ctx: Ctx, spec: AxisSpec) -> Result<Axis, ScenarioError> {
    let one = spec.members.len() == 1;
    let mut params = Vec::with_capacity(spec.members.len());
    for m in spec.members {
        let values = match m.source {
            Source::List(values) => values,
            Source::Range(r) => range_values(&r),
        };
        // Unreachable after the readers' checks (a list is non-empty, a range's stop >= start),
        // but an empty member must be an error, never an index panic.
        let Some(first_type) = values.first().map(ParamValue::ty) else {
            return Err(ctx.err_kind(&m.origin.at, ErrorKind::OutOfRange, "gives no values"));
        };
        // Repeated values would run one point twice; in a zip only whole entries must differ.
        if one {
            let mut seen = HashMap::new();
            for (j, v) in values.iter().enumerate() {
                let Some(i) = seen.insert(v.key(), j) else { continue };
                let message = if m.origin.from_range {
                    format!("gives {} twice after rounding to {SIGNIFICANT_DIGITS} significant digits: use a larger step or fewer values", v.to_override())
                } else {
                    format!("repeats values[{i}] ({}): every point must differ", v.to_override())
                };
                return Err(ctx.err_kind(&m.origin.value(j), ErrorKind::Conflict, message));
            }
        }
        // A one-path axis's name names its column too.
        let name = m.name.or_else(|| if one { spec.name.clone() } else { None }).unwrap_or_else(|| m.path.clone());
        params.push(Param { name, path: m.path, ty: first_type, values, origin: m.origin });
    }
    let len = params[0].values.len();
    if params.len() > 1 {
        let mut seen = HashMap::new();
        for j in 0..len {
            let key: Vec<ValueKey> = params.iter().map(|p| p.values[j].key()).collect();
            if let Some(i) = seen.insert(key, j) {
                let message = format!("entry {j} of every zip member repeats entry {i}: every point must differ");
                return Err(ctx.err_kind(&format!("{}.zip", spec.at), ErrorKind::Conflict, message));
            }
        }
    }
    let name = spec.name.unwrap_or_else(|| params.iter().map(|p| p.name.as_str()).collect::<Vec<_>>().join("+"));
    Ok(Axis { name, len, params })
}
