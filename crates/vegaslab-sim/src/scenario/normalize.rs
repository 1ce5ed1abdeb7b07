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

/// The normalised document as canonical JSON text.
pub fn to_json(scenario: &Scenario) -> String {
    to_value(scenario).to_string()
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
