//! Every registered algorithm's declared parameters against its reader, through the scenario
//! reader a user's file goes through. Nothing here names an algorithm: a new entry in
//! `vegaslab_cc::ALGORITHMS` is checked by being registered.
//!
//! - the keys `params` accepts are exactly the declared ones;
//! - every parameter written out at its default gives the same normalised scenario as leaving
//!   it out, in every flavour;
//! - a value just outside a declared range, an undeclared choice and a wrong type are refused
//!   with an error on that very key; every declared choice is accepted, or refused only for
//!   another key (a heuristic without its inputs);
//! - the registry document lists every algorithm with a default for every parameter the
//!   normalised form holds.

use serde_json::Value;
use vegaslab_cc::params::{Param, ParamKind};
use vegaslab_cc::registry::Entry;
use vegaslab_cc::ALGORITHMS;
use vegaslab_sim::registry::{as_toml, default_of, document, flavours, normalised_params, FLAVOUR};
use vegaslab_sim::{ErrorKind, ScenarioError};

fn params_with(flavour: Option<&str>, set: &[(&str, toml::Value)]) -> toml::Table {
    let mut t = toml::Table::new();
    if let Some(f) = flavour {
        t.insert(FLAVOUR.into(), f.into());
    }
    for (k, v) in set {
        t.insert(k.to_string(), v.clone());
    }
    t
}

fn declared(entry: &Entry) -> Vec<&'static Param> {
    (entry.params)()
}

/// The error for `set` on `entry` in `flavour`, which must be refused.
fn refused(entry: &Entry, flavour: Option<&str>, set: (&str, toml::Value)) -> ScenarioError {
    let what = format!("{}: params.{} = {}", entry.name, set.0, set.1);
    match normalised_params(entry.name, params_with(flavour, &[set])) {
        Ok(v) => panic!("{what} was accepted: {v}"),
        Err(e) => e,
    }
}

fn assert_on_key(e: &ScenarioError, key: &str, what: &str) {
    assert_eq!(e.path, format!("flows[0].params.{key}"), "{what}: error on another field: {e}");
}

#[test]
fn the_keys_params_accepts_are_exactly_the_declared_ones() {
    for entry in ALGORITHMS {
        let e = refused(entry, None, ("no_such_parameter", 1.into()));
        assert_eq!(e.kind, ErrorKind::UnknownField, "{}: {e}", entry.name);
        let names: Vec<&str> = declared(entry).iter().map(|p| p.name).collect();
        if names.is_empty() {
            assert!(e.message.contains("takes no params"), "{}: {e}", entry.name);
            continue;
        }
        let allowed = e.message.split("allowed here: ").nth(1).unwrap_or_else(|| panic!("{}: no list in {e}", entry.name));
        let mut allowed: Vec<&str> = allowed.split(", ").map(str::trim).collect();
        let mut names = names;
        allowed.sort_unstable();
        names.sort_unstable();
        assert_eq!(allowed, names, "{}: the reader's keys differ from the declared ones", entry.name);
    }
}

#[test]
fn every_parameter_written_at_its_default_equals_leaving_it_out_in_every_flavour() {
    let mut checked = 0;
    for entry in ALGORITHMS {
        for flavour in std::iter::once(None).chain(flavours(entry)).collect::<std::collections::BTreeSet<_>>() {
            let plain = normalised_params(entry.name, params_with(flavour, &[])).unwrap();
            for param in declared(entry) {
                if param.name == FLAVOUR && flavour.is_some() {
                    continue; // the flavour's own default is checked in the pass without one
                }
                let default = default_of(entry.name, param, flavour).unwrap();
                if default.is_null() {
                    continue; // an input without a default (a heuristic's)
                }
                let value = as_toml(&default).unwrap_or_else(|| panic!("{}: {}: default {default}", entry.name, param.name));
                let spelled = normalised_params(entry.name, params_with(flavour, &[(param.name, value)]))
                    .unwrap_or_else(|e| panic!("{} {flavour:?}: {} = {default}: {e}", entry.name, param.name));
                assert_eq!(spelled, plain, "{} {flavour:?}: {} = {default} changed the scenario", entry.name, param.name);
                checked += 1;
            }
        }
    }
    assert!(checked >= 60, "only {checked} defaults were checked");
}

#[test]
fn values_outside_a_declared_range_are_refused_on_their_key() {
    let mut checked = 0;
    for entry in ALGORITHMS {
        for param in declared(entry) {
            let outside: Vec<toml::Value> = match param.kind {
                ParamKind::Number { lo, hi } => vec![(lo - 1.0).into(), (hi * 2.0 + 1.0).into()],
                ParamKind::Integer { lo, hi } => [lo.checked_sub(1), hi.checked_add(1)].into_iter().flatten().map(Into::into).collect(),
                ParamKind::Choice { .. } => vec!["no-such-choice".into(), 1.into()],
                ParamKind::Boolean => vec!["yes".into(), 1.into()],
                ParamKind::Time { lo_ns, hi_ns } => [lo_ns.checked_sub(1), hi_ns.checked_add(1)].into_iter().flatten().map(|ns| format!("{ns}ns").into()).collect(),
            };
            for value in outside {
                let what = format!("{}: {} = {value}", entry.name, param.name);
                let e = refused(entry, None, (param.name, value));
                assert_on_key(&e, param.name, &what);
                assert!(
                    matches!(e.kind, ErrorKind::OutOfRange | ErrorKind::WrongType | ErrorKind::Invalid),
                    "{what}: {:?}: {e}",
                    e.kind
                );
                checked += 1;
            }
        }
    }
    assert!(checked >= 80, "only {checked} values were checked");
}

#[test]
fn every_declared_choice_is_accepted_or_refused_only_for_another_key() {
    for entry in ALGORITHMS {
        for param in declared(entry) {
            let ParamKind::Choice { values } = param.kind else { continue };
            for v in values {
                if let Err(e) = normalised_params(entry.name, params_with(None, &[(param.name, (*v).into())])) {
                    assert_ne!(e.path, format!("flows[0].params.{}", param.name), "{}: {} = {v:?}: {e}", entry.name, param.name);
                }
            }
        }
    }
}

#[test]
fn the_registry_document_lists_every_algorithm_with_its_defaults() {
    let doc = document().unwrap();
    let listed: Vec<&str> = doc["algorithms"].as_array().unwrap().iter().map(|a| a["name"].as_str().unwrap()).collect();
    let registered: Vec<&str> = ALGORITHMS.iter().map(|e| e.name).collect();
    assert_eq!(listed, registered);
    assert!(listed.contains(&"cubic"));
    for a in doc["algorithms"].as_array().unwrap() {
        let normalised = normalised_params(a["name"].as_str().unwrap(), toml::Table::new()).unwrap();
        let fields = normalised.as_object().and_then(|m| m.values().next()).and_then(Value::as_object).cloned().unwrap_or_default();
        for p in a["params"].as_array().unwrap() {
            let name = p["name"].as_str().unwrap();
            let has_default = !p["default"].is_null() || p.get("default_by_flavour").is_some();
            if fields.contains_key(name) {
                assert!(has_default, "{}: {name} is in the normalised scenario but has no default", a["name"]);
            }
            assert!(!p["cite"].as_str().unwrap().is_empty() && !p["doc"].as_str().unwrap().is_empty(), "{}: {name}", a["name"]);
        }
    }
    // A default that depends on the flavour is listed per flavour (Vegas: ns-2 1/3, Linux 2/4).
    let vegas = doc["algorithms"].as_array().unwrap().iter().find(|a| a["name"] == "vegas").unwrap();
    let alpha = vegas["params"].as_array().unwrap().iter().find(|p| p["name"] == "alpha").unwrap();
    assert_eq!(alpha["default_by_flavour"]["ns2"], 1.0);
    assert_eq!(alpha["default_by_flavour"]["linux"], 2.0);
}

#[test]
fn an_algorithm_with_a_linux_flavour_is_ported_and_one_without_is_linux_s_own() {
    use vegaslab_cc::registry::LinuxForm;
    for entry in ALGORITHMS {
        let has_linux_flavour = flavours(entry).contains(&Some("linux"));
        assert_eq!(entry.linux == LinuxForm::Flavour, has_linux_flavour, "{}: {:?}", entry.name, entry.linux);
        let name = entry.kernel_name();
        assert_eq!(name.is_none(), entry.linux == LinuxForm::None, "{}", entry.name);
        assert!(name.as_ref().is_none_or(|n| n.len() <= 15), "{}: {name:?}", entry.name);
    }
}
