//! Reading the `[sweep]` table into its [`spec`](super::spec): the seeds, each axis (one path,
//! or a zip of several), each member's path and its listed values or range, with an error
//! naming the field for anything the format does not allow (docs/sweep-format.md, "Axes" and
//! "Errors"). Whether a value suits its field is not decided here but by the core, when every
//! point is validated.

use super::names::read_name;
use super::path::{overlap, parse_steps, PathStep};
use super::plan::Origin;
use super::range::read_range;
use super::seeds::{read_seeds, SeedSpec};
use super::spec::{AxisSpec, MemberSpec, Source};
use super::value::{ParamType, ParamValue};
use crate::scenario::limits::{quote_short, MAX_RUNS};
use crate::scenario::reader::{describe, Obj};
use crate::scenario::{ErrorKind, ScenarioError};
use toml::Value;

/// Read the `[sweep]` table: its seeds and its axes, in file order. Two axes (or two members of
/// a zip) may not sweep one field, nor one field and a field inside it.
pub(super) fn read_sweep(sweep: &Obj) -> Result<(Option<SeedSpec>, Vec<AxisSpec>), ScenarioError> {
    sweep.deny_unknown(&["seeds", "axis"])?;
    let seeds = read_seeds(sweep)?;

    let mut axes = Vec::new();
    let mut taken: Vec<(Vec<PathStep>, String)> = Vec::new();
    for (i, item) in sweep.array("axis")?.map(|a| a.as_slice()).unwrap_or(&[]).iter().enumerate() {
        let at = format!("axis[{i}]");
        let axis = Obj::new(sweep.ctx, item, &sweep.field_path(&at))?;
        let spec = read_axis(&axis)?;
        for m in &spec.members {
            // Two axes (or two members of a zip) on one field, or one inside the other.
            if let Some(steps) = &m.steps {
                if let Some((_, other)) = taken.iter().find(|(s, _)| overlap(s, steps)) {
                    let message = format!("overlaps {other}: each field may be swept by one axis only");
                    return Err(sweep.ctx.err_kind(&format!("{}.path", m.origin.at), ErrorKind::Conflict, message));
                }
                taken.push((steps.clone(), format!("{}.path ({})", m.origin.at, quote_short(&m.path))));
            }
        }
        axes.push(spec);
    }
    Ok((seeds, axes))
}

fn read_axis(axis: &Obj) -> Result<AxisSpec, ScenarioError> {
    axis.deny_unknown(&["name", "path", "values", "range", "zip"])?;
    let name = read_name(axis)?;
    let members = match axis.get("zip") {
        Some(_) => {
            for key in ["path", "values", "range"] {
                if axis.get(key).is_some() {
                    let message = "a zip axis takes its paths and values in its zip entries, not beside them";
                    return Err(axis.err_kind(key, ErrorKind::Conflict, message));
                }
            }
            let entries = axis.array("zip")?.expect("present");
            if entries.is_empty() {
                return Err(axis.err_kind("zip", ErrorKind::OutOfRange, "must hold at least one { path, values } entry"));
            }
            let mut members = Vec::new();
            for (k, entry) in entries.iter().enumerate() {
                let member = Obj::new(axis.ctx, entry, &axis.field_path(&format!("zip[{k}]")))?;
                member.deny_unknown(&["name", "path", "values", "range"])?;
                let name = read_name(&member)?;
                members.push(read_member(&member, name)?);
            }
            members
        }
        None => vec![read_member(axis, None)?],
    };
    Ok(AxisSpec { name, at: axis.path.clone(), members })
}

/// A one-path axis (`obj` is the axis) or a zip entry: `path` and `values` or `range`.
fn read_member(obj: &Obj, name: Option<String>) -> Result<MemberSpec, ScenarioError> {
    let path = obj
        .string("path")?
        .ok_or_else(|| obj.err_kind("path", ErrorKind::Missing, "is required: the field to sweep, as --set takes it (e.g. \"flows[0].params.alpha\")"))?
        .trim()
        .to_string();
    if path.is_empty() {
        return Err(obj.err_kind("path", ErrorKind::OutOfRange, "must name a field, e.g. \"flows[0].params.alpha\""));
    }
    let steps = parse_steps(&path);
    if let Some(steps) = &steps {
        if steps.first() == Some(&PathStep::Key("sweep".into())) {
            return Err(obj.err_kind("path", ErrorKind::Conflict, format!("cannot sweep the sweep itself, got {}", quote_short(&path))));
        }
        if steps[..] == [PathStep::Key("run".into()), PathStep::Key("seed".into())] {
            return Err(obj.err_kind("path", ErrorKind::Conflict, "run.seed is swept with sweep.seeds (a count or a list), not with an axis"));
        }
    }
    let origin = |from_range| Origin { at: obj.path.clone(), from_range };
    let source = match (obj.get("values"), obj.get("range")) {
        (Some(_), Some(_)) => return Err(obj.err_kind("range", ErrorKind::Conflict, "give values or range, not both")),
        (None, None) => {
            return Err(obj.err_kind("values", ErrorKind::Missing, "is required: a list of values, or a range = { start, stop, step | num }"))
        }
        (Some(_), None) => {
            let items = obj.array("values")?.expect("present");
            read_values(obj, items)?
        }
        (None, Some(_)) => Source::Range(read_range(&obj.table("range")?.expect("present"))?),
    };
    let from_range = matches!(source, Source::Range(_));
    Ok(MemberSpec { name, path, steps, source, origin: origin(from_range) })
}

/// A `values` list: scalars of one type, integers and floats mixing as floats (the column and
/// what runs agree).
fn read_values(obj: &Obj, items: &[Value]) -> Result<Source, ScenarioError> {
    if items.is_empty() {
        return Err(obj.err_kind("values", ErrorKind::OutOfRange, format!("must hold 1 to {MAX_RUNS} values, got an empty list")));
    }
    let mut values = Vec::with_capacity(items.len());
    for (j, item) in items.iter().enumerate() {
        let at = format!("values[{j}]");
        let v = match item {
            Value::Integer(i) => ParamValue::Integer(*i),
            Value::Float(x) if x.is_finite() => ParamValue::Float(*x),
            Value::Float(x) => return Err(obj.err_kind(&at, ErrorKind::OutOfRange, format!("must be a finite number, got {x}"))),
            Value::String(s) => ParamValue::String(s.clone()),
            Value::Boolean(b) => ParamValue::Bool(*b),
            other => {
                let message = format!("must be a string, integer, float or boolean (sweep a table's fields one by one), got {}", describe(other));
                return Err(obj.err_kind(&at, ErrorKind::WrongType, message));
            }
        };
        values.push(v);
    }
    // One type per parameter; integers and floats mix as floats.
    let first = values[0].ty();
    let numeric = |t: ParamType| matches!(t, ParamType::Integer | ParamType::Float);
    for (j, v) in values.iter().enumerate() {
        let t = v.ty();
        if t != first && !(numeric(t) && numeric(first)) {
            let message = format!(
                "must be of one type with values[0] ({}), got {} {}: a sweep parameter has one type (integers and floats may mix)",
                first.as_str(),
                t.as_str(),
                describe(&items[j])
            );
            return Err(obj.err_kind(&format!("values[{j}]"), ErrorKind::WrongType, message));
        }
    }
    if values.iter().any(|v| v.ty() == ParamType::Float) {
        for v in &mut values {
            if let ParamValue::Integer(i) = *v {
                *v = ParamValue::Float(i as f64);
            }
        }
    }
    Ok(Source::List(values))
}
