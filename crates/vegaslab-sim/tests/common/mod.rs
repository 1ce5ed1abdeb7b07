//! Helpers shared by the scenario tests: a minimal valid scenario and ways to parse it with
//! `key=value` overrides.
#![allow(dead_code)]

use vegaslab_sim::scenario::{parse, Scenario};
use vegaslab_sim::Simulator;

/// One 1 Mbps / 10 ms link S1 - D1 and one Reno flow over it, 10 s.
pub const ONE_LINK: &str = r#"
[run]
duration = "10s"

[[links]]
endpoints = ["S1", "D1"]
bandwidth = "1Mbps"
delay = "10ms"

[[flows]]
from = "S1"
to = "D1"
cc = "reno"
"#;

pub fn sets(overrides: &[&str]) -> Vec<String> {
    overrides.iter().map(|s| s.to_string()).collect()
}

/// Parse `base` (reported as `case.toml`) with overrides; it must be accepted.
pub fn accepted(base: &str, overrides: &[&str]) -> Scenario {
    parse(base, "case.toml", &sets(overrides)).expect("should be accepted")
}

/// Parse `base` (reported as `case.toml`) with overrides; it must be rejected: the message.
pub fn rejected(base: &str, overrides: &[&str]) -> String {
    parse(base, "case.toml", &sets(overrides)).expect_err("should be rejected").to_string()
}

/// Run `text` with or without express hops: the results (metadata blanked) and the event count.
pub fn run_express(text: &str, express: bool) -> (serde_json::Value, u64) {
    let sc = parse(text, "t.toml", &[]).unwrap();
    let sim = Simulator::build(sc).expect("a valid scenario");
    let sim = if express { sim } else { sim.without_express_hops() };
    let r = sim.run(|_, _| true);
    let events = r.meta.events;
    let mut v: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
    v["meta"] = serde_json::Value::Null;
    (v, events)
}

/// Express hops change nothing but the event count: (events with, events without).
pub fn assert_express_hops_change_nothing(text: &str) -> (u64, u64) {
    let (a, ea) = run_express(text, true);
    let (b, eb) = run_express(text, false);
    assert_eq!(a, b);
    assert!(ea <= eb, "express hops must not add events ({ea} vs {eb})");
    (ea, eb)
}
