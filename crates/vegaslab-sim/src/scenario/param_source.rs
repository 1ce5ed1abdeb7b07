//! A scenario table as the registries' readers see it ([`ParamSource`]): an algorithm's
//! `params` table (`algorithms`) and a link's queue table (`links`). Every error is the
//! reader's [`ScenarioError`], boxed on the way through the registry's reader and unboxed on
//! the way back, so it names the file and the field.

use super::reader::Obj;
use super::ScenarioError;
use vegaslab_cc::params::{ParamError, ParamSource};

/// A scenario error as a registry reader returns it.
pub fn boxed(e: ScenarioError) -> ParamError {
    ParamError(Box::new(e))
}

/// The scenario error a registry reader returned; an error not made by a [`ParamSource`]
/// here (none is expected) is reported against `field` of `table`.
pub fn unboxed(e: ParamError, table: &Obj, field: &str) -> ScenarioError {
    match e.0.downcast::<ScenarioError>() {
        Ok(e) => *e,
        Err(other) => table.err(field, other.to_string()),
    }
}

impl ParamSource for Obj<'_> {
    fn is_set(&self, key: &str) -> bool {
        self.get(key).is_some()
    }
    fn number(&self, key: &str, lo: f64, hi: f64) -> Result<Option<f64>, ParamError> {
        Obj::number(self, key, lo, hi).map_err(boxed)
    }
    fn integer(&self, key: &str, lo: i64, hi: i64) -> Result<Option<i64>, ParamError> {
        Obj::integer(self, key, lo, hi).map_err(boxed)
    }
    fn string(&self, key: &str) -> Result<Option<String>, ParamError> {
        Obj::string(self, key).map(|s| s.map(str::to_string)).map_err(boxed)
    }
    fn boolean(&self, key: &str) -> Result<Option<bool>, ParamError> {
        match self.get(key) {
            Some(_) => self.bool(key, false).map(Some).map_err(boxed),
            None => Ok(None),
        }
    }
    fn time(&self, key: &str, lo_ns: u64, hi_ns: u64) -> Result<Option<u64>, ParamError> {
        Obj::time(self, key, lo_ns.into(), hi_ns.into()).map_err(boxed)
    }
    fn deny_unknown(&self, allowed: &[&str]) -> Result<(), ParamError> {
        Obj::deny_unknown(self, allowed).map_err(boxed)
    }
    fn error(&self, key: &str, message: String) -> ParamError {
        boxed(self.err(key, message))
    }
}
