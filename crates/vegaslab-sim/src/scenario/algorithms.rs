//! Congestion-control algorithms and their parameters (`flows[i].cc`, `flows[i].params`).
//!
//! The names, parameters, their defaults and ranges are the algorithms' own
//! (`vegaslab_cc::registry`); this module only lets them read the `params` table through the
//! scenario reader, so that every error names the file and field.

use super::param_source::{boxed, unboxed};
use super::reader::Obj;
use super::ScenarioError;
use vegaslab_cc::params::{ParamError, ParamSource};
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

/// The flow's algorithm, read through the registry.
pub fn read_algorithm(f: &Obj, cc: &str) -> Result<AlgorithmSpec, ScenarioError> {
    let params = Params { flow: f, cc, table: f.table("params")? };
    match AlgorithmSpec::read(cc, &params) {
        Some(Ok(spec)) => Ok(spec),
        Some(Err(e)) => Err(unboxed(e, f, "params")),
        None => {
            let names: Vec<&str> = registry::names().collect();
            Err(f.err("cc", format!("unknown congestion control \"{cc}\" (allowed: {})", names.join(", "))))
        }
    }
}
