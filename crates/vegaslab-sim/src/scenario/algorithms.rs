//! Congestion-control algorithms and their parameters (`flows[i].cc`, `flows[i].params`).
//!
//! The names, parameters, their defaults and ranges are the algorithms' own
//! (`vegaslab_cc::registry`); this module only lets them read the `params` table through the
//! scenario reader, so that every error names the file and field.

use super::param_source::{boxed, unboxed};
use super::reader::{describe, Obj};
use toml::Value;
use super::{ErrorKind, Scenario, ScenarioError};
use vegaslab_cc::bpf_record::BPF_PREFIX;
use vegaslab_cc::external::{ExternalControllers, ExternalSpec};
use vegaslab_cc::params::{ParamError, ParamSource};
use std::sync::Arc;
use vegaslab_cc::registry::{self, AlgorithmSpec};

/// A flow's `params` table (or its absence) as the algorithms read it.
struct Params<'a, 'b> {
    flow: &'b Obj<'a>,
    /// The `cc` name, for "takes no params".
    cc: &'b str,
    table: Option<Obj<'a>>,
}

impl ParamSource for Params<'_, '_> {
    fn is_set(&self, key: &str) -> bool {
        self.table.as_ref().is_some_and(|t| t.is_set(key))
    }
    fn number(&self, key: &str, lo: f64, hi: f64) -> Result<Option<f64>, ParamError> {
        self.table.as_ref().map_or(Ok(None), |t| ParamSource::number(t, key, lo, hi))
    }
    fn integer(&self, key: &str, lo: i64, hi: i64) -> Result<Option<i64>, ParamError> {
        self.table.as_ref().map_or(Ok(None), |t| ParamSource::integer(t, key, lo, hi))
    }
    fn string(&self, key: &str) -> Result<Option<String>, ParamError> {
        self.table.as_ref().map_or(Ok(None), |t| ParamSource::string(t, key))
    }
    fn boolean(&self, key: &str) -> Result<Option<bool>, ParamError> {
        self.table.as_ref().map_or(Ok(None), |t| t.boolean(key))
    }
    fn time(&self, key: &str, lo_ns: u64, hi_ns: u64) -> Result<Option<u64>, ParamError> {
        self.table.as_ref().map_or(Ok(None), |t| ParamSource::time(t, key, lo_ns, hi_ns))
    }
    fn deny_unknown(&self, allowed: &[&str]) -> Result<(), ParamError> {
        let none = format!("\"{}\" takes no params (remove the params table; the sender's settings are in the tcp table)", self.cc);
        self.table.as_ref().map_or(Ok(()), |t| t.deny_unknown_with(allowed, &[], Some(&none)).map_err(boxed))
    }
    fn error(&self, key: &str, message: String) -> ParamError {
        match &self.table {
            Some(t) => t.error(key, message),
            None => boxed(self.flow.err(&format!("params.{key}"), message)),
        }
    }
}

/// The flow's algorithm: `cc` names one in the registry or a Python controller
/// (`py:package.module:Class`, [`read_named_algorithm`]), or a compiled BPF object as a table
/// (`{ bpf = "algo.bpf.o" }`) or its short form (`"bpf:algo.bpf.o"`) ([`super::bpf`]).
pub fn read_algorithm(f: &Obj) -> Result<AlgorithmSpec, ScenarioError> {
    match f.get("cc") {
        Some(Value::Table(_)) => {
            if f.table("params")?.is_some_and(|p| !p.table.is_empty()) {
                return Err(f.err_kind("params", ErrorKind::UnknownField, "a BPF object takes no params: its parameters are compiled into it"));
            }
            let cc = f.table("cc")?.expect("a table");
            super::bpf::read_bpf_table(&cc)
        }
        Some(Value::String(cc)) => match super::bpf::read_bpf_name(f, cc) {
            Some(spec) => spec,
            None => read_named_algorithm(f, cc),
        },
        None => Err(f.err_kind("cc", ErrorKind::Missing, "is required")),
        Some(other) => Err(f.err_kind("cc", ErrorKind::WrongType, format!("must be an algorithm's name or a BPF object {{ bpf = \"algo.bpf.o\" }}, got {}", describe(other)))),
    }
}

/// The name a flow's `cc` gives its group's members (`<label><k>`), from the scenario's text
/// alone: the algorithm's name, or a BPF object's file name ([`super::bpf::object_label`]).
pub fn cc_label(cc: Option<&Value>) -> &str {
    match cc {
        Some(Value::String(name)) => match name.strip_prefix(BPF_PREFIX) {
            Some(path) => super::bpf::object_label(path),
            None => name,
        },
        Some(Value::Table(t)) => super::bpf::object_label(t.get("bpf").and_then(Value::as_str).unwrap_or("")),
        _ => "",
    }
}

/// The algorithm a `cc` name gives, read through the registry; a `py:package.module:Class`
/// name is an external controller (`vegaslab_cc::external`), checked here for shape only.
fn read_named_algorithm(f: &Obj, cc: &str) -> Result<AlgorithmSpec, ScenarioError> {
    let params = Params { flow: f, cc, table: f.table("params")? };
    if let Some(spec) = ExternalSpec::parse(cc) {
        let spec = spec.map_err(|e| f.err("cc", e))?;
        return AlgorithmSpec::external(spec, &params).map_err(|e| unboxed(e, f, "params"));
    }
    match AlgorithmSpec::read(cc, &params) {
        Some(Ok(spec)) => Ok(spec),
        Some(Err(e)) => Err(unboxed(e, f, "params")),
        None => {
            let names: Vec<&str> = registry::names().collect();
            Err(f.err("cc", format!("unknown congestion control \"{cc}\" (allowed: {}), or a Python controller \"py:package.module:Class\", or a BPF object \"bpf:algo.bpf.o\" or {{ bpf = \"algo.bpf.o\", ... }}", names.join(", "))))
        }
    }
}

/// The scenario's external controllers bound to `host`, which checks that it can build each;
/// without a host, the first flow that names one is refused ([`require_hosted`]).
pub fn bind_external(scenario: &mut Scenario, host: Option<&Arc<dyn ExternalControllers>>) -> Result<(), ScenarioError> {
    let Some(host) = host else {
        return require_hosted(scenario);
    };
    for (i, flow) in scenario.flows.iter_mut().enumerate() {
        flow.algorithm = flow.algorithm.hosted(host).map_err(|e| ScenarioError::new(&scenario.source, &format!("flows[{i}].cc"), ErrorKind::Reference, e))?;
    }
    Ok(())
}

/// Refuse a flow whose external controller has no host: only a program that embeds Python
/// (the `vegaslab` package) runs one.
pub fn require_hosted(scenario: &Scenario) -> Result<(), ScenarioError> {
    for (i, flow) in scenario.flows.iter().enumerate() {
        if flow.algorithm.external_params().is_some_and(|p| !p.is_hosted()) {
            return Err(ScenarioError::new(
                &scenario.source,
                &format!("flows[{i}].cc"),
                ErrorKind::Invalid,
                format!("\"{}\" is a Python controller, which only runs from Python (vegaslab.run or the vegaslab command), not here", flow.algorithm.name()),
            ));
        }
    }
    Ok(())
}
