//! Every registered queue discipline's declared keys against its reader, through the scenario
//! reader a user's file goes through. Nothing here names a discipline: a new line in the
//! registry (`queue/mod.rs`) is checked by being registered.
//!
//! - each kind's minimal table is valid, and leaving out any of its required keys is refused on
//!   that key;
//! - the keys a queue table accepts are exactly `kind` and the declared ones;
//! - each declared key lands where its declaration says the normalised scenario holds it;
//! - a value just outside a declared range and a wrong type are refused on that very key;
//! - the registry document lists every kind with a default for every optional key.

use serde_json::Value;
use vegaslab_cc::params::ParamKind;
use vegaslab_sim::queue::{self, KindDoc, QueueKey};
use vegaslab_sim::registry::{as_toml, document, normalised_queue};
use vegaslab_sim::{ErrorKind, ScenarioError};

/// The kind's minimal table with `key` set to `value` (TOML), or left out when `value` is
/// `None`.
fn table_with(kind: &KindDoc, key: &str, value: Option<&str>) -> String {
    let mut t: toml::Table = toml::from_str(&format!("q = {}", kind.minimal)).expect("minimal is TOML");
    let mut q = t.remove("q").and_then(|q| q.as_table().cloned()).expect("minimal is a table");
    q.remove(key);
    if let Some(v) = value {
        let v: toml::Table = toml::from_str(&format!("v = {v}")).expect("a TOML value");
        q.insert(key.into(), v["v"].clone());
    }
    toml::Value::Table(q).to_string()
}

fn refused(table: &str) -> ScenarioError {
    match normalised_queue(table) {
        Ok(v) => panic!("{table} was accepted: {v}"),
        Err(e) => e,
    }
}

fn all_keys() -> impl Iterator<Item = (&'static KindDoc, &'static QueueKey)> {
    queue::kinds().flat_map(|k| k.keys.iter().map(move |key| (k, key)))
}

#[test]
fn every_kind_has_a_valid_minimal_table_and_its_required_keys_are_required() {
    let mut required = 0;
    for kind in queue::kinds() {
        normalised_queue(kind.minimal).unwrap_or_else(|e| panic!("{}: minimal table refused: {e}", kind.name));
        for key in kind.keys.iter().filter(|k| k.required) {
            let e = refused(&table_with(kind, key.param.name, None));
            assert_eq!(e.path, format!("links[0].queue.{}", key.param.name), "{}: {e}", kind.name);
            required += 1;
        }
    }
    assert!(required >= 4, "only {required} required keys were checked");
}

#[test]
fn the_keys_a_queue_table_accepts_are_exactly_kind_and_the_declared_ones() {
    for kind in queue::kinds() {
        let e = refused(&table_with(kind, "no_such_key", Some("1")));
        assert_eq!(e.kind, ErrorKind::UnknownField, "{}: {e}", kind.name);
        let allowed = e.message.split("allowed here: ").nth(1).unwrap_or_else(|| panic!("{}: no list in {e}", kind.name));
        let mut allowed: Vec<&str> = allowed.split(", ").map(str::trim).collect();
        let mut declared: Vec<&str> = kind.keys.iter().map(|k| k.param.name).collect();
        declared.push("kind");
        allowed.sort_unstable();
        declared.sort_unstable();
        assert_eq!(allowed, declared, "{}", kind.name);
    }
}

/// A scalar of the normalised form, which may hold a number tagged by what it is (RED's
/// weight is `{"fixed": w}` or `"auto"`).
fn scalar(v: &Value) -> &Value {
    match v.as_object() {
        Some(m) if m.len() == 1 => m.values().next().expect("one value"),
        _ => v,
    }
}

/// A value of `key` other than its default, inside its declared range.
fn probe(key: &QueueKey, default: &Value) -> String {
    let default = scalar(default);
    match key.param.kind {
        ParamKind::Boolean => (!default.as_bool().expect("a boolean default")).to_string(),
        ParamKind::Time { .. } => format!("\"{}ns\"", default.as_u64().expect("a time default in ns") * 7 / 5),
        ParamKind::Integer { .. } => (default.as_i64().expect("an integer default") + 1).to_string(),
        ParamKind::Number { .. } => format!("{:?}", default.as_f64().expect("a number default") * 1.25),
        ParamKind::Choice { values } => format!("\"{}\"", values.iter().find(|v| default != *v).expect("two choices")),
    }
}

#[test]
fn each_declared_key_lands_where_its_declaration_says() {
    let mut checked = 0;
    for (kind, key) in all_keys() {
        let minimal = normalised_queue(kind.minimal).expect("valid");
        let default = minimal.get(key.field).unwrap_or_else(|| panic!("{}: no field {} in {minimal}", kind.name, key.field));
        let value = probe(key, default);
        let changed = normalised_queue(&table_with(kind, key.param.name, Some(&value)))
            .unwrap_or_else(|e| panic!("{}: {} = {value} refused: {e}", kind.name, key.param.name));
        assert_ne!(changed.get(key.field), Some(default), "{}: {} = {value} did not move {}", kind.name, key.param.name, key.field);
        let moved: Vec<&String> = changed.as_object().expect("an object").iter().filter(|(f, v)| minimal.get(f.as_str()) != Some(v)).map(|(f, _)| f).collect();
        assert_eq!(moved, vec![key.field], "{}: {} = {value} moved other fields", kind.name, key.param.name);
        checked += 1;
    }
    assert!(checked >= 15, "only {checked} keys were checked");
}

#[test]
fn values_outside_a_declared_range_and_wrong_types_are_refused_on_their_key() {
    let mut checked = 0;
    for (kind, key) in all_keys() {
        let mut bad: Vec<String> = match key.param.kind {
            ParamKind::Integer { lo, hi } => [lo.checked_sub(1), hi.checked_add(1)].into_iter().flatten().map(|v| v.to_string()).collect(),
            // Twice the top: times pass through f64, where top + 1 ns rounds to the top.
            ParamKind::Time { lo_ns, hi_ns } => [lo_ns.checked_sub(1), Some(hi_ns.saturating_mul(2))].into_iter().flatten().map(|v| format!("\"{v}ns\"")).collect(),
            ParamKind::Number { lo, hi } => [lo - 1.0, hi * 2.0 + 1.0].into_iter().filter(|v| *v < lo || *v > hi).map(|v| format!("{v:?}")).collect(),
            ParamKind::Choice { .. } => vec!["\"no-such-choice\"".into()],
            ParamKind::Boolean => vec![],
        };
        bad.push("[1, 2]".into());
        for value in bad {
            let e = refused(&table_with(kind, key.param.name, Some(&value)));
            assert_eq!(e.path, format!("links[0].queue.{}", key.param.name), "{}: {} = {value}: {e}", kind.name, key.param.name);
            checked += 1;
        }
    }
    assert!(checked >= 25, "only {checked} values were checked");
}

#[test]
fn the_registry_document_lists_every_kind_with_a_default_for_every_optional_key() {
    let doc = document().expect("the registry document");
    let listed: Vec<&str> = doc["queues"].as_array().expect("queues").iter().filter_map(|q| q["name"].as_str()).collect();
    let kinds: Vec<&str> = queue::kinds().map(|k| k.name).collect();
    assert_eq!(listed, kinds);
    for q in doc["queues"].as_array().expect("queues") {
        for key in q["keys"].as_array().expect("keys") {
            let required = key["required"].as_bool().expect("required");
            assert_eq!(key["default"].is_null(), required, "{}.{}", q["name"], key["name"]);
            if !required {
                // A default written out gives the same queue as leaving the key out.
                let kind = queue::kind_doc(q["name"].as_str().expect("name")).expect("registered");
                let name = key["name"].as_str().expect("name");
                let spelled = match scalar(&key["default"]) {
                    Value::Number(n) if key["kind"]["type"] == "time" => format!("\"{n}ns\""),
                    other => as_toml(other).expect("a scalar default").to_string(),
                };
                assert_eq!(normalised_queue(&table_with(kind, name, Some(&spelled))).expect("valid"),
                           normalised_queue(kind.minimal).expect("valid"), "{}.{name} = {spelled}", kind.name);
            }
        }
    }
}
