//! A `params` table in memory, for reading an algorithm's parameters without the scenario
//! reader: integers and booleans checked as the scenario reader checks them (a value outside
//! [lo, hi] is refused with a message naming the key and range), and strings.

use vegaslab_cc::params::{ParamError, ParamSource};

pub struct Table(pub Vec<(&'static str, Value)>);

#[derive(Clone, Copy)]
pub enum Value {
    Int(i64),
    Bool(bool),
    Str(&'static str),
}

#[derive(Debug)]
struct Msg(String);
impl std::fmt::Display for Msg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for Msg {}

impl Table {
    fn get(&self, key: &str) -> Option<Value> {
        self.0.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
    }
}

impl ParamSource for Table {
    fn is_set(&self, key: &str) -> bool {
        self.get(key).is_some()
    }
    fn number(&self, key: &str, _lo: f64, _hi: f64) -> Result<Option<f64>, ParamError> {
        match self.get(key) {
            None => Ok(None),
            Some(_) => Err(self.error(key, "numbers are not used here".into())),
        }
    }
    fn integer(&self, key: &str, lo: i64, hi: i64) -> Result<Option<i64>, ParamError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Int(v)) if (lo..=hi).contains(&v) => Ok(Some(v)),
            Some(Value::Int(v)) => Err(self.error(key, format!("{v} not in [{lo}, {hi}]"))),
            Some(_) => Err(self.error(key, "not an integer".into())),
        }
    }
    fn string(&self, key: &str) -> Result<Option<String>, ParamError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Str(s)) => Ok(Some(s.to_string())),
            Some(_) => Err(self.error(key, "not a string".into())),
        }
    }
    fn boolean(&self, key: &str) -> Result<Option<bool>, ParamError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(b)),
            Some(_) => Err(self.error(key, "not a boolean".into())),
        }
    }
    fn time(&self, key: &str, _lo: u64, _hi: u64) -> Result<Option<u64>, ParamError> {
        match self.get(key) {
            None => Ok(None),
            Some(_) => Err(self.error(key, "times are not used here".into())),
        }
    }
    fn deny_unknown(&self, allowed: &[&str]) -> Result<(), ParamError> {
        match self.0.iter().find(|(k, _)| !allowed.contains(k)) {
            Some((k, _)) => Err(self.error(k, format!("unknown key (allowed: {allowed:?})"))),
            None => Ok(()),
        }
    }
    fn error(&self, key: &str, message: String) -> ParamError {
        ParamError(Box::new(Msg(format!("params.{key}: {message}"))))
    }
}
