//! A path-aware reader over parsed TOML: each accessor knows its field path, so every error
//! says exactly which field is wrong and what range is allowed.

use super::limits::{self, MAX_BANDWIDTH_BPS, MAX_DELAY_NS, MAX_SIZE_BYTES, MAX_TIME_NS, MIN_BANDWIDTH_BPS};
use super::spelling::edit_distance;
use super::{ErrorKind, ScenarioError};
use crate::units;
use toml::{value::Table, Value};

/// The file name errors are reported against, and where the files the scenario reads are
/// recorded (for the normalised scenario's `files`).
#[derive(Clone, Copy)]
pub struct Ctx<'a> {
    pub file: &'a str,
    pub files_read: &'a std::cell::RefCell<Vec<super::FileRef>>,
    /// The BPF objects loaded so far (`cc = { bpf = ... }`), each loaded once per reading.
    pub objects: &'a super::object_cache::LoadedObjects,
}

impl<'a> Ctx<'a> {
    /// Record that the scenario read `bytes` from the file `name` for `field`; returns their
    /// hex SHA-256.
    pub fn record_file(&self, field: &str, name: &str, bytes: &[u8]) -> String {
        use sha2::{Digest, Sha256};
        let sha256: String = Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect();
        let file = super::FileRef { field: field.to_string(), name: name.to_string(), sha256: sha256.clone(), bytes: bytes.len() as u64 };
        self.files_read.borrow_mut().push(file);
        sha256
    }

    /// An error of kind [`ErrorKind::Invalid`]; see [`Ctx::err_kind`].
    pub fn err(&self, path: &str, message: impl Into<String>) -> ScenarioError {
        self.err_kind(path, ErrorKind::Invalid, message)
    }

    pub fn err_kind(&self, path: &str, kind: ErrorKind, message: impl Into<String>) -> ScenarioError {
        ScenarioError::new(self.file, path, kind, message)
    }
}

/// A TOML table being read, with its path.
pub struct Obj<'a> {
    pub ctx: Ctx<'a>,
    pub table: &'a Table,
    pub path: String,
}

/// A value as quoted in an error message: strings escaped and everything cut short, so that a
/// message never carries control characters or a whole table.
pub fn describe(v: &Value) -> String {
    match v {
        Value::String(s) => limits::quote_short(s),
        other => {
            let text = other.to_string();
            if text.chars().count() > 60 {
                format!("{}...", text.chars().take(60).collect::<String>())
            } else {
                text
            }
        }
    }
}

impl<'a> Obj<'a> {
    pub fn new(ctx: Ctx<'a>, value: &'a Value, path: &str) -> Result<Self, ScenarioError> {
        match value.as_table() {
            Some(table) => Ok(Obj { ctx, table, path: path.to_string() }),
            None => Err(ctx.err_kind(path, ErrorKind::WrongType, format!("must be a table, got {}", describe(value)))),
        }
    }

    /// The dotted path of `key` in this table. A key that is not a plain name (empty, or with
    /// spaces, quotes or control characters) is shown quoted, as TOML would write it, so that an
    /// error always names a visible field.
    pub fn field_path(&self, key: &str) -> String {
        let plain = !key.is_empty() && key.bytes().all(|b| b.is_ascii_alphanumeric() || b"_-.[]".contains(&b));
        let key = if plain { key.to_string() } else { limits::quote_short(key) };
        if self.path.is_empty() {
            key
        } else {
            format!("{}.{}", self.path, key)
        }
    }

    pub fn err(&self, key: &str, message: impl Into<String>) -> ScenarioError {
        self.ctx.err(&self.field_path(key), message)
    }

    pub fn err_kind(&self, key: &str, kind: ErrorKind, message: impl Into<String>) -> ScenarioError {
        self.ctx.err_kind(&self.field_path(key), kind, message)
    }

    pub fn get(&self, key: &str) -> Option<&'a Value> {
        self.table.get(key)
    }

    /// Reject keys this table does not know, suggesting the closest known one.
    pub fn deny_unknown(&self, allowed: &[&str]) -> Result<(), ScenarioError> {
        self.deny_unknown_with(allowed, &[], None)
    }

    /// [`Obj::deny_unknown`] with `aliases`, other names of the allowed keys (ns-2's, the
    /// literature's), and `none_allowed`, what to say when `allowed` is empty.
    ///
    /// An alias only points at the key (`max_th` is `max` here); it is never accepted in its
    /// place, so a scenario has one spelling of each field. An alias (`(name, key,
    /// note)`; `name` compared without case and trailing underscores, as ns-2 writes `thresh_`)
    /// beats the closest spelling: `max_th` is nearer to `max_p` in letters but means `max`.
    /// With nothing allowed the message says so instead of an empty list.
    pub fn deny_unknown_with(&self, allowed: &[&str], aliases: &[(&str, &str, &str)], none_allowed: Option<&str>) -> Result<(), ScenarioError> {
        for key in self.table.keys() {
            if allowed.contains(&key.as_str()) {
                continue;
            }
            if allowed.is_empty() {
                let why = none_allowed.unwrap_or("this table takes no fields");
                return Err(self.err_kind(key, ErrorKind::UnknownField, format!("unknown field: {why}")));
            }
            let plain = key.trim_end_matches('_').to_ascii_lowercase();
            let alias = aliases
                .iter()
                .find(|(name, target, _)| *name == plain && allowed.contains(target))
                .map(|(_, target, note)| format!(" (did you mean '{target}'? {note})"));
            let hint = alias.unwrap_or_else(|| {
                allowed
                    .iter()
                    .min_by_key(|a| edit_distance(a, key))
                    .filter(|a| edit_distance(a, key) <= 3)
                    .map(|a| format!(" (did you mean '{a}'?)"))
                    .unwrap_or_default()
            });
            return Err(self.err_kind(key, ErrorKind::UnknownField, format!("unknown field{hint}; allowed here: {}", allowed.join(", "))));
        }
        Ok(())
    }

    pub fn table(&self, key: &str) -> Result<Option<Obj<'a>>, ScenarioError> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => Obj::new(self.ctx, v, &self.field_path(key)).map(Some),
        }
    }

    pub fn array(&self, key: &str) -> Result<Option<&'a Vec<Value>>, ScenarioError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Array(a)) => Ok(Some(a)),
            Some(v) => Err(self.err_kind(key, ErrorKind::WrongType, format!("must be an array, got {}", describe(v)))),
        }
    }

    pub fn string(&self, key: &str) -> Result<Option<&'a str>, ScenarioError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.as_str())),
            Some(v) => Err(self.err_kind(key, ErrorKind::WrongType, format!("must be a string, got {}", describe(v)))),
        }
    }

    pub fn req_string(&self, key: &str) -> Result<&'a str, ScenarioError> {
        self.string(key)?.ok_or_else(|| self.err_kind(key, ErrorKind::Missing, "is required"))
    }

    pub fn bool(&self, key: &str, default: bool) -> Result<bool, ScenarioError> {
        match self.get(key) {
            None => Ok(default),
            Some(Value::Boolean(b)) => Ok(*b),
            Some(v) => Err(self.err_kind(key, ErrorKind::WrongType, format!("must be true or false, got {}", describe(v)))),
        }
    }

    /// A number within `[lo, hi]`.
    pub fn number(&self, key: &str, lo: f64, hi: f64) -> Result<Option<f64>, ScenarioError> {
        let x = match self.get(key) {
            None => return Ok(None),
            Some(Value::Integer(i)) => *i as f64,
            Some(Value::Float(f)) => *f,
            Some(v) => return Err(self.err_kind(key, ErrorKind::WrongType, format!("must be a number, got {}", describe(v)))),
        };
        if !(x >= lo && x <= hi) || !x.is_finite() {
            return Err(self.err_kind(key, ErrorKind::OutOfRange, range_message(lo, hi, &x.to_string())));
        }
        Ok(Some(x))
    }

    /// A whole number within `[lo, hi]`.
    pub fn integer(&self, key: &str, lo: i64, hi: i64) -> Result<Option<i64>, ScenarioError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Integer(i)) if *i >= lo && *i <= hi => Ok(Some(*i)),
            Some(Value::Integer(i)) => {
                Err(self.err_kind(key, ErrorKind::OutOfRange, integer_range_message(lo, hi, &i.to_string())))
            }
            // A number in quotes: say how to write it (TOML keeps "1" a string).
            Some(Value::String(text)) if text.trim().parse::<i64>().is_ok() => {
                let message = format!("must be a whole number, got the string {}: write {key} = {} without quotes", describe(&Value::String(text.clone())), text.trim());
                Err(self.err_kind(key, ErrorKind::WrongType, message))
            }
            Some(v) => Err(self.err_kind(key, ErrorKind::WrongType, format!("must be a whole number, got {}", describe(v)))),
        }
    }

    /// A time (`"20ms"` or seconds) within `[lo, hi]` nanoseconds; `hi` is capped at
    /// [`MAX_TIME_NS`] whatever the caller asks.
    pub fn time(&self, key: &str, lo: i128, hi: i128) -> Result<Option<u64>, ScenarioError> {
        let Some(v) = self.get(key) else { return Ok(None) };
        let hi = hi.min(MAX_TIME_NS);
        // Float-to-integer casts saturate, so no value (1e300 s, -1e300 s) can wrap around;
        // NaN and infinity are refused by `quantity`.
        let ns = quantity(v, units::parse_time, |x| (x * 1e9).round() as i128).map_err(|m| self.err_kind(key, ErrorKind::WrongType, m))?;
        if ns < lo || ns > hi {
            return Err(self.err_kind(key, ErrorKind::OutOfRange, time_range_message(lo, hi, &describe(v))));
        }
        Ok(Some(ns as u64))
    }

    /// A one-way propagation delay: a time within 0..=[`MAX_DELAY_NS`].
    pub fn delay(&self, key: &str) -> Result<Option<u64>, ScenarioError> {
        self.time(key, 0, MAX_DELAY_NS)
    }

    /// A bandwidth in bit/s within [`MIN_BANDWIDTH_BPS`, `MAX_BANDWIDTH_BPS`].
    pub fn bandwidth(&self, key: &str) -> Result<Option<f64>, ScenarioError> {
        let Some(v) = self.get(key) else { return Ok(None) };
        let bps = quantity(v, units::parse_bandwidth, |x| x).map_err(|m| self.err_kind(key, ErrorKind::WrongType, m))?;
        if !(MIN_BANDWIDTH_BPS..=MAX_BANDWIDTH_BPS).contains(&bps) {
            let message = format!("must be between 1 bit/s and 10 Tbit/s, got {}", describe(v));
            return Err(self.err_kind(key, ErrorKind::OutOfRange, message));
        }
        Ok(Some(bps))
    }

    /// A size in bytes within [`min`, `MAX_SIZE_BYTES`].
    pub fn size(&self, key: &str, min: f64) -> Result<Option<f64>, ScenarioError> {
        let Some(v) = self.get(key) else { return Ok(None) };
        let b = quantity(v, units::parse_size, |x| x).map_err(|m| self.err_kind(key, ErrorKind::WrongType, m))?;
        if !(b >= min && b <= MAX_SIZE_BYTES) {
            return Err(self.err_kind(key, ErrorKind::OutOfRange, format!("must be between {min} bytes and 1e15 bytes (1 PB), got {}", describe(v))));
        }
        Ok(Some(b))
    }

    /// A node, flow or source name (see [`limits::valid_name`]).
    pub fn name(&self, key: &str) -> Result<Option<&'a str>, ScenarioError> {
        let Some(name) = self.string(key)? else { return Ok(None) };
        check_name(self, key, name)?;
        Ok(Some(name))
    }
}

/// An error unless `name` is a valid name (the field `key` of `obj` holds it).
pub fn check_name(obj: &Obj, key: &str, name: &str) -> Result<(), ScenarioError> {
    if limits::valid_name(name) {
        Ok(())
    } else {
        Err(obj.err_kind(key, ErrorKind::OutOfRange, limits::name_problem(name)))
    }
}

fn quantity<T>(v: &Value, parse: fn(&str) -> Result<T, String>, from_number: fn(f64) -> T) -> Result<T, String> {
    match v {
        Value::String(s) => parse(s),
        Value::Integer(i) => Ok(from_number(*i as f64)),
        Value::Float(f) if f.is_finite() => Ok(from_number(*f)),
        Value::Float(f) => Err(format!("must be a finite number, got {f}")),
        other => Err(format!("must be a quantity like \"10ms\" or a number, got {}", describe(other))),
    }
}

/// "must be between lo and hi": whole numbers print as such (not through f64, which would show
/// i64::MAX as 9223372036854776000).
fn range_message(lo: f64, hi: f64, got: &str) -> String {
    let show = |x: f64| if x.fract() == 0.0 && x.abs() < 9e15 { format!("{}", x as i64) } else { format!("{x}") };
    if hi == f64::MAX || hi >= 1e300 {
        format!("must be >= {}, got {got}", show(lo))
    } else {
        format!("must be between {} and {}, got {got}", show(lo), show(hi))
    }
}

/// [`range_message`] for whole numbers.
fn integer_range_message(lo: i64, hi: i64, got: &str) -> String {
    if hi == i64::MAX {
        format!("must be >= {lo}, got {got}")
    } else {
        format!("must be between {lo} and {hi}, got {got}")
    }
}

/// "must be >= 0 s and <= 10000000 s": a time's allowed range, the lower bound first as the
/// one people usually hit; a bound of 1 ns reads as "> 0 s".
fn time_range_message(lo: i128, hi: i128, got: &str) -> String {
    let s = |ns: i128| format!("{} s", ns as f64 / 1e9);
    let lower = if lo == 1 { "> 0 s".to_string() } else { format!(">= {}", s(lo)) };
    format!("must be {lower} and <= {}, got {got}", s(hi))
}
