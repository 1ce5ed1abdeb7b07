//! What a scenario may name, as one document: every algorithm of the congestion-control
//! registry (`vegaslab_cc::ALGORITHMS`) and every queue discipline of the queue registry
//! (`crate::queue::registry`), with their parameters, kinds, ranges, units, meanings,
//! citations and defaults. The Python package (`vegaslab.registry`), the docs generator, the
//! kernel build and the tests read them from here; none lists them.
//!
//! The defaults are not declared anywhere but in each algorithm's parameter struct: this
//! module reads them back from the normalised scenario of a flow that leaves the parameter
//! out, through the same reader a scenario goes through ([`normalised_params`]), once per
//! flavour where the algorithm has flavours. A parameter absent from the normalised form
//! (a heuristic input, or a flavour left out at its default) has as default the declared
//! choice that normalises to the same document, or none.

use serde_json::{json, Map, Value};
use vegaslab_cc::params::{Param, ParamKind};
use vegaslab_cc::registry::{Entry, LinuxForm};
use vegaslab_cc::ALGORITHMS;

use crate::queue::{self, KindDoc};
use crate::scenario::{from_value, normalize::to_value, ErrorKind, ScenarioError};

/// Layout version of [`document`]; it changes when the layout does.
pub const FORMAT: u32 = 2;

/// The key of the flavour parameter, whose values an algorithm's defaults may depend on.
pub const FLAVOUR: &str = "flavour";

/// The flavours of an entry (the values of its `flavour` parameter), or `[None]`.
pub fn flavours(entry: &Entry) -> Vec<Option<&'static str>> {
    match (entry.params)().iter().find(|p| p.name == FLAVOUR).map(|p| p.kind) {
        Some(ParamKind::Choice { values }) => values.iter().map(|v| Some(*v)).collect(),
        _ => vec![None],
    }
}

/// A one-flow scenario of algorithm `cc` with these `params` (a TOML table), on a link with
/// this queue table (the default queue when `None`).
fn one_flow(cc: &str, params: toml::Table, queue: Option<toml::Value>) -> toml::Value {
    let mut flow = toml::Table::new();
    for (k, v) in [("name", "f"), ("from", "S"), ("to", "D"), ("cc", cc)] {
        flow.insert(k.into(), v.into());
    }
    if !params.is_empty() {
        flow.insert("params".into(), params.into());
    }
    let mut link = toml::Table::new();
    link.insert("endpoints".into(), toml::Value::Array(vec!["S".into(), "D".into()]));
    link.insert("bandwidth".into(), "1Mbps".into());
    link.insert("delay".into(), "10ms".into());
    if let Some(q) = queue {
        link.insert("queue".into(), q);
    }
    let mut run = toml::Table::new();
    run.insert("duration".into(), "1s".into());
    let mut root = toml::Table::new();
    root.insert("run".into(), run.into());
    root.insert("links".into(), toml::Value::Array(vec![link.into()]));
    root.insert("flows".into(), toml::Value::Array(vec![flow.into()]));
    root.into()
}

/// The normalised algorithm (`{"<tag>": params}` or `"<tag>"`) of a flow of `cc` with
/// `params`, read as a scenario's would be (errors name `flows[0].params.<key>`).
pub fn normalised_params(cc: &str, params: toml::Table) -> Result<Value, ScenarioError> {
    let scenario = from_value(&one_flow(cc, params, None), "registry")?;
    Ok(to_value(&scenario)["flows"][0]["algorithm"].clone())
}

/// A JSON value as the TOML value a scenario would write for it.
pub fn as_toml(value: &Value) -> Option<toml::Value> {
    Some(match value {
        Value::Bool(b) => toml::Value::Boolean(*b),
        Value::Number(n) if n.is_i64() => toml::Value::Integer(n.as_i64()?),
        Value::Number(n) => toml::Value::Float(n.as_f64()?),
        Value::String(s) => toml::Value::String(s.clone()),
        _ => return None,
    })
}

/// The parameters of a normalised algorithm (`{}` for a bare tag).
fn fields(normalised: &Value) -> Map<String, Value> {
    match normalised {
        Value::Object(m) => m.values().next().and_then(Value::as_object).cloned().unwrap_or_default(),
        _ => Map::new(),
    }
}

/// The params table that sets the flavour, if any.
fn with_flavour(flavour: Option<&str>) -> toml::Table {
    let mut t = toml::Table::new();
    if let Some(f) = flavour {
        t.insert(FLAVOUR.into(), f.into());
    }
    t
}

/// The default of `param` for `cc` in `flavour` (`Value::Null`: none).
pub fn default_of(cc: &str, param: &Param, flavour: Option<&str>) -> Result<Value, ScenarioError> {
    if param.name == FLAVOUR && flavour.is_some() {
        return default_of(cc, param, None);
    }
    let plain = normalised_params(cc, with_flavour(flavour))?;
    if let Some(v) = fields(&plain).get(param.name) {
        return Ok(v.clone());
    }
    if let ParamKind::Choice { values } = param.kind {
        for v in values {
            let mut t = with_flavour(flavour);
            t.insert(param.name.into(), (*v).into());
            if normalised_params(cc, t).is_ok_and(|n| n == plain) {
                return Ok(Value::String(v.to_string()));
            }
        }
    }
    Ok(Value::Null)
}

fn kind_json(kind: ParamKind) -> Value {
    serde_json::to_value(kind).expect("a parameter kind serialises")
}

/// One parameter of one algorithm: its declaration and its default (the same in every
/// flavour: `default`; otherwise `default_by_flavour`).
fn param_json(entry: &Entry, param: &Param) -> Result<Value, ScenarioError> {
    let mut by_flavour = Map::new();
    for f in flavours(entry) {
        by_flavour.insert(f.unwrap_or("").to_string(), default_of(entry.name, param, f)?);
    }
    let mut out = json!({
        "name": param.name,
        "kind": kind_json(param.kind),
        "unit": param.unit,
        "doc": param.doc,
        "cite": param.cite,
    });
    let first = by_flavour.values().next().cloned().unwrap_or(Value::Null);
    if by_flavour.values().all(|v| *v == first) {
        out["default"] = first;
    } else {
        out["default_by_flavour"] = Value::Object(by_flavour);
    }
    Ok(out)
}

/// The normalised queue (`{"kind", ...}`, the forward direction's) of a one-link scenario
/// whose queue table is `table` (TOML), read as a scenario's would be (errors name
/// `links[0].queue.<key>`).
pub fn normalised_queue(table: &str) -> Result<Value, ScenarioError> {
    let queue: toml::Value = toml::from_str::<toml::Table>(&format!("queue = {table}"))
        .map_err(|e| ScenarioError::new("registry", "links[0].queue", ErrorKind::Syntax, e.to_string()))?["queue"].clone();
    let scenario = from_value(&one_flow("reno", toml::Table::new(), Some(queue)), "registry")?;
    Ok(to_value(&scenario)["links"][0]["forward"]["queue"].clone())
}

/// One queue kind: its declaration, and each key's default read from the normalised queue
/// of its minimal table (`null` for a required key).
fn queue_json(kind: &KindDoc) -> Result<Value, ScenarioError> {
    let minimal = normalised_queue(kind.minimal)?;
    let keys: Vec<Value> = kind.keys.iter().map(|k| {
        let default = if k.required { Value::Null } else { minimal.get(k.field).cloned().unwrap_or(Value::Null) };
        json!({
            "name": k.param.name,
            "field": k.field,
            "required": k.required,
            "kind": kind_json(k.param.kind),
            "unit": k.param.unit,
            "doc": k.param.doc,
            "cite": k.param.cite,
            "default": default,
        })
    }).collect();
    Ok(json!({
        "name": kind.name,
        "about": kind.about,
        "cite": kind.cite,
        "minimal": kind.minimal,
        "keys": keys,
        "aliases": kind.aliases.iter().map(|(name, key, note)| json!({"name": name, "key": key, "note": note})).collect::<Vec<_>>(),
    }))
}

/// The registry as a JSON document: `{"format", "algorithms": [{"name", "tag", "display", "about",
/// "flavours", "linux": {"form": "flavour" | "native" | "kernel" | "none", "kernel_name"}, "params":
/// [{"name", "kind", "unit", "doc", "cite", "default" | "default_by_flavour"}]}], "queues":
/// [{"name", "about", "cite", "minimal", "keys": [{"name", "field", "required", "kind", "unit",
/// "doc", "cite", "default"}], "aliases": [{"name", "key", "note"}]}], "bpf": ...}`, algorithms and
/// queue kinds in registry order (`LinuxForm` says what the forms mean), and what a compiled BPF
/// object may use ([`bpf_json`]).
pub fn document() -> Result<Value, ScenarioError> {
    let mut algorithms = Vec::new();
    for entry in ALGORITHMS {
        let params = (entry.params)().iter().map(|p| param_json(entry, p)).collect::<Result<Vec<_>, _>>()?;
        let flavours: Vec<&str> = flavours(entry).into_iter().flatten().collect();
        let form = match entry.linux {
            LinuxForm::Flavour => "flavour",
            LinuxForm::Native(_) => "native",
            LinuxForm::Kernel(_) => "kernel",
            LinuxForm::None => "none",
        };
        algorithms.push(json!({
            "name": entry.name,
            "tag": entry.tag,
            "display": entry.display,
            "about": entry.about,
            "flavours": flavours,
            "linux": { "form": form, "kernel_name": entry.kernel_name() },
            "params": params,
        }));
    }
    let queues = queue::kinds().map(queue_json).collect::<Result<Vec<_>, _>>()?;
    Ok(json!({ "format": FORMAT, "algorithms": algorithms, "queues": queues, "bpf": bpf_json() }))
}

/// What the simulator offers a compiled BPF object (`cc = { bpf = ... }`, `vegaslab_bpf`):
/// `{"hooks", "helpers": [{"id", "name"}], "kfuncs", "kconfig", "hz": {"default", "values"},
/// "fields": [{"struct", "member", "bytes", "signed", "bits": [first, count] | null, "holds"}]}`.
pub fn bpf_json() -> Value {
    use vegaslab_bpf::{abi, layout};
    let fields: Vec<Value> = layout::FIELDS
        .iter()
        .map(|f| {
            json!({
                "struct": f.strukt,
                "member": f.member,
                "bytes": f.size,
                "signed": f.signed,
                "bits": f.bits.map(|b| [b.pos, b.len]),
                "holds": f.holds,
            })
        })
        .collect();
    json!({
        "hooks": abi::HOOKS,
        "helpers": abi::HELPERS.iter().map(|(id, name)| json!({"id": id, "name": name})).collect::<Vec<_>>(),
        "kfuncs": abi::KFUNCS,
        "kconfig": abi::KCONFIG,
        "hz": { "default": vegaslab_cc::bpf_record::DEFAULT_HZ, "values": vegaslab_cc::bpf_record::HZ_VALUES },
        "fields": fields,
    })
}
