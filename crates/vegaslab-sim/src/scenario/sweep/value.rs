//! A swept value and its type, and the `--set` text that applies it.
//!
//! A sweep's values are typed scalars, one type per parameter (docs/sweep-format.md, "Axes",
//! **Types**): the plan's columns are typed, and each value is written as the override text
//! that parses back to exactly it, so a point can be re-run by hand with `--set`.

use serde::Serialize;
use toml::Value;

/// A swept value, typed.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ParamValue {
    Integer(i64),
    Float(f64),
    String(String),
    Bool(bool),
}

/// The type of a parameter's values (its column type).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ParamType {
    Integer,
    Float,
    String,
    #[serde(rename = "boolean")]
    Bool,
}

impl ParamType {
    pub(super) fn as_str(self) -> &'static str {
        match self {
            ParamType::Integer => "integer",
            ParamType::Float => "float",
            ParamType::String => "string",
            ParamType::Bool => "boolean",
        }
    }
}

impl ParamValue {
    pub(super) fn ty(&self) -> ParamType {
        match self {
            ParamValue::Integer(_) => ParamType::Integer,
            ParamValue::Float(_) => ParamType::Float,
            ParamValue::String(_) => ParamType::String,
            ParamValue::Bool(_) => ParamType::Bool,
        }
    }

    /// The value as `--set` takes it: it parses back to exactly this value and type. Floats
    /// always carry a `.` or an exponent (Rust's shortest round-trip form), strings are
    /// written bare when TOML would not read them as anything else (`vegas`, `10ms`), else
    /// quoted (`"10"`, `"true"`, `" x"`).
    pub fn to_override(&self) -> String {
        match self {
            ParamValue::Integer(i) => i.to_string(),
            ParamValue::Float(x) => format!("{x:?}"),
            ParamValue::Bool(b) => b.to_string(),
            ParamValue::String(s) => {
                let bare_ok = !s.is_empty()
                    && s.trim() == s
                    && !s.chars().any(char::is_control)
                    && toml::from_str::<toml::value::Table>(&format!("v = {s}")).is_err();
                if bare_ok {
                    s.clone()
                } else {
                    Value::String(s.clone()).to_string()
                }
            }
        }
    }

    /// A key that is equal for equal values (floats by value, with -0 = 0).
    pub(super) fn key(&self) -> ValueKey {
        match self {
            ParamValue::Integer(i) => ValueKey::Integer(*i),
            ParamValue::Float(x) => ValueKey::Float((x + 0.0).to_bits()),
            ParamValue::String(s) => ValueKey::String(s.clone()),
            ParamValue::Bool(b) => ValueKey::Bool(*b),
        }
    }
}

/// A [`ParamValue`] as a hash key, to find repeated values (a float by its bits, since `f64`
/// is not `Eq`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) enum ValueKey {
    Integer(i64),
    Float(u64),
    String(String),
    Bool(bool),
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::overrides::apply_overrides;

    fn reparsed(v: &ParamValue) -> Value {
        let mut doc: Value = toml::from_str("").unwrap();
        apply_overrides(&mut doc, &[format!("x={}", v.to_override())]).unwrap();
        doc["x"].clone()
    }

    #[test]
    fn override_text_parses_back_to_the_same_value_and_type() {
        let cases = [
            ParamValue::Integer(-3),
            ParamValue::Float(2.0),
            ParamValue::Float(0.1),
            ParamValue::Float(1e-7),
            ParamValue::Float(1e300),
            ParamValue::Float(-0.5),
            ParamValue::Bool(true),
            ParamValue::String("vegas".into()),
            ParamValue::String("10ms".into()),
            ParamValue::String("10".into()),
            ParamValue::String("true".into()),
            ParamValue::String(" padded ".into()),
            ParamValue::String("a \"quoted\" = b".into()),
            ParamValue::String(String::new()),
            ParamValue::String("inf".into()),
        ];
        for v in cases {
            let back = reparsed(&v);
            let same = match (&v, &back) {
                (ParamValue::Integer(a), Value::Integer(b)) => a == b,
                (ParamValue::Float(a), Value::Float(b)) => a.to_bits() == b.to_bits(),
                (ParamValue::Bool(a), Value::Boolean(b)) => a == b,
                (ParamValue::String(a), Value::String(b)) => a == b,
                _ => false,
            };
            assert!(same, "{v:?} -> {:?} -> {back:?}", v.to_override());
        }
    }

    #[test]
    fn plain_strings_are_written_bare_and_ambiguous_ones_quoted() {
        assert_eq!(ParamValue::String("vegas".into()).to_override(), "vegas");
        assert_eq!(ParamValue::String("10".into()).to_override(), "\"10\"");
        assert_eq!(ParamValue::Float(2.0).to_override(), "2.0");
    }
}
