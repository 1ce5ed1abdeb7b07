//! Every TCP parameter: writing its default value explicitly gives the same normalised
//! scenario as leaving it out (one `Default`, and the reader never substitutes a default of its
//! own). The parameter list comes from the reader's own "allowed here" message, so a parameter
//! added later is covered without editing this test. The algorithms' parameters are checked
//! from their registry declarations (`algorithm_registry.rs`).

use vegaslab_sim::scenario::{normalize, normalize::to_value};

fn scenario(cc: &str) -> String {
    format!(
        r#"
[run]
duration = "2s"
[[links]]
endpoints = ["S", "D"]
bandwidth = "1Mbps"
delay = "10ms"
[[flows]]
name = "f"
from = "S"
to = "D"
cc = "{cc}"
"#
    )
}

/// The keys a table accepts, read from the error for an unknown key in it.
fn allowed_keys(text: &str, table: &str) -> Vec<String> {
    let e = normalize(text, "t.toml", None, &[format!("flows[0].{table}.no_such_key=1")]).unwrap_err();
    let list = e.message.split("allowed here: ").nth(1).unwrap_or_else(|| panic!("no allowed list in {e}"));
    list.split(", ").map(|k| k.trim().to_string()).collect()
}

fn as_override(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(s) => format!("\"{s}\""),
        other => other.to_string(),
    }
}

fn check_table(cc: &str, table: &str, defaults: impl Fn(&serde_json::Value) -> serde_json::Value) -> usize {
    let text = scenario(cc);
    let plain = to_value(&normalize(&text, "t.toml", None, &[]).unwrap());
    let values = defaults(&plain);
    let mut checked = 0;
    for key in allowed_keys(&text, table) {
        let Some(value) = values.get(&key) else { continue }; // an input with no default (heuristic, queue, ...)
        let set = format!("flows[0].{table}.{key}={}", as_override(value));
        let spelled = normalize(&text, "t.toml", None, &[set.clone()]).unwrap_or_else(|e| panic!("{cc}: {set}: {e}"));
        assert_eq!(to_value(&spelled), plain, "{cc}: {set} changed the scenario");
        checked += 1;
    }
    checked
}

#[test]
fn every_tcp_parameter_set_to_its_default_equals_leaving_it_out() {
    let checked = check_table("reno", "tcp", |v| v["flows"][0]["tcp"].clone());
    assert!(checked >= 14, "only {checked} tcp parameters were checked");
}
