//! The normalised scenario: the one resolved form of a scenario that everything downstream
//! reads (the ns-2 bridge, the results cache key, provenance records, the docs' defaults).
//!
//! It is the validated [`Scenario`] serialised as JSON: every default filled in by the core
//! (the only owner of defaults and units), times in integer nanoseconds (fields ending in
//! `_ns`) except the few the models keep as float seconds (the TCP timers `tick`, `min_rto`,
//! `max_rto`, `initial_rto`, and the traffic models' means `mean_on`, `mean_off`,
//! `mean_interarrival` and CBR `interval`), bandwidths in bit/s, sizes in bytes, nodes referred to by index into `nodes`, the
//! content of every referenced file included (a delay trace becomes `delay_schedule_ns`) and
//! identified by its SHA-256 in `files`, and no file system path. Object keys are sorted, and
//! numbers print in their shortest round-trip form, so equal scenarios give equal text on any
//! machine. `format` numbers the layout; it changes when the layout does.

use super::{parse, Scenario, ScenarioError};

/// Layout version of the normalised document (its `format` field).
pub const FORMAT: u32 = 1;

/// Parse and validate `text` (with `overrides`; `seed` replaces `run.seed` when given), as a
/// run would.
pub fn normalize(text: &str, source: &str, seed: Option<u64>, overrides: &[String]) -> Result<Scenario, ScenarioError> {
    let mut scenario = parse(text, source, overrides)?;
    if let Some(seed) = seed {
        scenario.seed = seed;
    }
    Ok(scenario)
}

/// The normalised document of a validated scenario, as a JSON value.
pub fn to_value(scenario: &Scenario) -> serde_json::Value {
    let mut value = serde_json::to_value(scenario).expect("a validated scenario serialises (finite numbers, string keys)");
    value
        .as_object_mut()
        .expect("a scenario serialises to an object")
        .insert("format".to_string(), FORMAT.into());
    value
}

/// The normalised document as canonical JSON text: keys sorted, no spaces, floats as Python
/// prints them (`PythonFloats`). So the text is exactly what Python's
/// `json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)` makes of it,
/// and its SHA-256 is `vegaslab.scenario_hash` of the parsed document: Python hashes the core's
/// text as it comes instead of parsing and printing it again (at 20,000 flows that would take
/// 1.3 s of a 1 ms run's `vegaslab.run`).
pub fn to_json(scenario: &Scenario) -> String {
    let mut out = Vec::new();
    let mut writer = serde_json::Serializer::with_formatter(&mut out, PythonFloats);
    serde::Serialize::serialize(&to_value(scenario), &mut writer).expect("a JSON value serialises");
    String::from_utf8(out).expect("serde_json writes UTF-8")
}

/// serde_json's compact output with each float written as Python's `repr` writes it (the
/// shortest digits that round-trip, as serde_json's own; fixed notation for a decimal exponent
/// from -4 to 15 with at least one digit after the point, otherwise `d.ddde+XX` with a sign
/// and at least two exponent digits): `1e-05` and `2.5e-07` where serde_json writes `0.00001`
/// and `2.5e-7`. Integers, strings (escaped alike: `\n`, `\u001f`, nothing beyond ASCII) and
/// key order need nothing: a `serde_json::Value`'s objects are sorted maps.
struct PythonFloats;

impl serde_json::ser::Formatter for PythonFloats {
    fn write_f64<W: ?Sized + std::io::Write>(&mut self, writer: &mut W, value: f64) -> std::io::Result<()> {
        writer.write_all(python_repr(value).as_bytes())
    }

    fn write_f32<W: ?Sized + std::io::Write>(&mut self, writer: &mut W, value: f32) -> std::io::Result<()> {
        self.write_f64(writer, value.into())
    }
}

/// Python's `repr` of a finite float (`PythonFloats`). Rust's `{:e}` gives the shortest
/// round-trip digits, as Python's repr does; only the layout differs.
fn python_repr(value: f64) -> String {
    let sci = format!("{value:e}"); // "-1.2345e-7", "1e16", "0e0"
    let (mantissa, exponent) = sci.split_once('e').expect("{:e} writes an exponent");
    let exponent: i32 = exponent.parse().expect("{:e} writes an integer exponent");
    let (sign, mantissa) = mantissa.strip_prefix('-').map_or(("", mantissa), |m| ("-", m));
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    if (-4..16).contains(&exponent) {
        let point = exponent + 1; // digits before the decimal point
        if point <= 0 {
            format!("{sign}0.{}{digits}", "0".repeat(-point as usize))
        } else if digits.len() <= point as usize {
            format!("{sign}{digits}{}.0", "0".repeat(point as usize - digits.len()))
        } else {
            let (whole, fraction) = digits.split_at(point as usize);
            format!("{sign}{whole}.{fraction}")
        }
    } else {
        let (first, rest) = digits.split_at(1);
        let fraction = if rest.is_empty() { String::new() } else { format!(".{rest}") };
        format!("{sign}{first}{fraction}e{}{:02}", if exponent < 0 { '-' } else { '+' }, exponent.abs())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = r#"
[run]
duration = "10s"
[[links]]
endpoints = ["S", "D"]
bandwidth = "1Mbps"
delay = "10ms"
[[flows]]
from = "S"
to = "D"
cc = "vegas"
"#;

    #[test]
    fn floats_are_written_as_python_writes_them() {
        // Each pair: a value and Python 3's repr of it.
        let cases = [
            (1e-5, "1e-05"), (2.5e-7, "2.5e-07"), (0.0001, "0.0001"), (0.000123, "0.000123"), (0.1, "0.1"),
            (1.0, "1.0"), (100.0, "100.0"), (1234567.0, "1234567.0"), (1e15, "1000000000000000.0"),
            (1e16, "1e+16"), (123456789012345680.0, "1.2345678901234568e+17"), (1e22, "1e+22"),
            (-0.0, "-0.0"), (0.0, "0.0"), (-2.5, "-2.5"), (5e-324, "5e-324"), (1.7976931348623157e308, "1.7976931348623157e+308"),
            (0.30000000000000004, "0.30000000000000004"), (1.5e-100, "1.5e-100"), (9999999999999998.0, "9999999999999998.0"),
        ];
        for (value, python) in cases {
            assert_eq!(python_repr(value), python, "{value:e}");
        }
    }

    #[test]
    fn the_canonical_text_has_sorted_keys_and_python_floats() {
        let text = to_json(&normalize(TEXT, "x.toml", None, &["links[0].error_rate_forward=0.00001".into()]).unwrap());
        assert!(text.starts_with(r#"{"aqt_routers":"#) && !text.contains(' '));
        assert!(text.contains(r#""error_rate":1e-05"#), "{text}");
    }

    #[test]
    fn defaults_are_filled_in_with_units_in_the_field_names() {
        let v = to_value(&normalize(TEXT, "x.toml", None, &[]).unwrap());
        assert_eq!(v["format"], 1);
        assert_eq!(v["duration_ns"], 10_000_000_000u64);
        assert_eq!(v["links"][0]["forward"]["delay_ns"], 10_000_000u64);
        assert_eq!(v["links"][0]["forward"]["queue"]["kind"], "droptail");
        assert_eq!(v["links"][0]["forward"]["queue"]["limit"], 50);
        assert_eq!(v["flows"][0]["tcp"]["window"], 20.0);
        assert_eq!(v["flows"][0]["algorithm"]["Vegas"]["alpha"], 1.0);
        assert!(v.get("source").is_none(), "no file path in the normalised scenario");
    }

    #[test]
    fn spelling_a_default_out_gives_the_same_document() {
        let plain = to_json(&normalize(TEXT, "a.toml", None, &[]).unwrap());
        let spelled = to_json(
            &normalize(TEXT, "elsewhere/a.toml", None, &["flows[0].tcp.window=20".into(), "links[0].delay=\"0.01s\"".into()]).unwrap(),
        );
        assert_eq!(plain, spelled);
    }

    #[test]
    fn the_seed_argument_replaces_the_scenario_seed() {
        let v = to_value(&normalize(TEXT, "x.toml", Some(7), &["run.seed=3".into()]).unwrap());
        assert_eq!(v["seed"], 7);
    }
}
