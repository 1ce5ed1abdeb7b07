//! `tcp.tick_phase`: the phase of each sender's tick clock (ns-2 `boot_time_`), "seeded" (drawn
//! from the run seed, the default) or set, so that one ns-2 run can be replayed.

mod common;

use serde_json::Value;
use vegaslab_sim::flow::{seeded_tick_phase, tick_phase};
use vegaslab_sim::scenario::normalize::{normalize, to_value};

/// One Reno flow through a 10-packet bottleneck, losses every cycle, with no lower bound on
/// the RTO: the retransmission timer, whose RTT samples are counted in ticks of the
/// phase-shifted clock, then shapes the result.
const CONGESTED: &str = r#"
[run]
duration = "30s"
seed = 3
[dumbbell]
pairs = 1
access = { bandwidth = "10Mbps", delay = "1ms" }
bottleneck = { bandwidth = "1Mbps", delay = "10ms", queue = { kind = "droptail", limit = 10 } }
[[flows]]
pairs = "1-1"
cc = "reno"
tcp = { window = 100, min_rto = 0 }
"#;

fn error_of(overrides: &[&str]) -> String {
    common::rejected(common::ONE_LINK, overrides)
}

fn run(overrides: &[&str], seed: Option<u64>) -> Value {
    let r = vegaslab_sim::run_text(CONGESTED, "t.toml", seed, &common::sets(overrides), |_, _| true).unwrap();
    let mut v: Value = serde_json::from_str(&r.to_json()).unwrap();
    v["meta"] = Value::Null;
    v
}

fn normalized_tcp(overrides: &[&str]) -> Value {
    let sc = normalize(common::ONE_LINK, "case.toml", None, &common::sets(overrides)).unwrap();
    to_value(&sc)["flows"][0]["tcp"].clone()
}

#[test]
fn a_negative_phase_names_the_field_and_the_range() {
    assert_eq!(
        error_of(&["flows[0].tcp.tick_phase=\"-3ms\""]),
        "case.toml: flows[0].tcp.tick_phase: must be \"seeded\" or a time >= 0 s and < tick (0.01 s), got \"-3ms\""
    );
}

#[test]
fn a_phase_of_a_whole_tick_or_more_is_refused_against_the_flows_own_tick() {
    assert_eq!(
        error_of(&["flows[0].tcp.tick_phase=0.01"]),
        "case.toml: flows[0].tcp.tick_phase: must be \"seeded\" or a time >= 0 s and < tick (0.01 s), got 0.01"
    );
    // Within a longer tick the same phase is fine.
    let sc = common::accepted(common::ONE_LINK, &["flows[0].tcp.tick=\"100ms\"", "flows[0].tcp.tick_phase=0.01"]);
    assert_eq!(sc.flows[0].tcp.tick_phase, Some(0.01));
}

#[test]
fn a_phase_that_is_not_a_time_or_seeded_is_a_type_error() {
    let e = error_of(&["flows[0].tcp.tick_phase=\"random\""]);
    assert!(e.starts_with("case.toml: flows[0].tcp.tick_phase: must be \"seeded\" or a time >= 0 s and < tick (0.01 s) ("), "{e}");
    assert!(e.ends_with("got \"random\""), "{e}");
    let e = error_of(&["flows[0].tcp.tick_phase=true"]);
    assert_eq!(e, "case.toml: flows[0].tcp.tick_phase: must be \"seeded\" or a time >= 0 s and < tick (0.01 s), got true");
}

#[test]
fn seeded_is_the_default_and_is_left_out_of_the_normalised_scenario() {
    let plain = normalized_tcp(&[]);
    assert!(plain.get("tick_phase").is_none(), "{plain}");
    assert_eq!(plain, normalized_tcp(&["flows[0].tcp.tick_phase=\"seeded\""]));
}

#[test]
fn a_set_phase_is_carried_in_seconds_and_a_number_keeps_every_bit() {
    assert_eq!(normalized_tcp(&["flows[0].tcp.tick_phase=\"3ms\""])["tick_phase"], 0.003);
    assert_eq!(normalized_tcp(&["flows[0].tcp.tick_phase=0"])["tick_phase"], 0.0);
    let exact = 0.004_321_987_654_321_123_f64;
    let v = normalized_tcp(&[&format!("flows[0].tcp.tick_phase={exact:?}")]);
    assert_eq!(v["tick_phase"].as_f64().unwrap().to_bits(), exact.to_bits());
}

#[test]
fn setting_the_phase_a_seeded_run_draws_replays_that_run_exactly() {
    let seeded = run(&[], None);
    let drawn = seeded_tick_phase(3, 0, 0.01);
    assert!((0.0..0.01).contains(&drawn));
    assert_eq!(seeded, run(&[&format!("flows[0].tcp.tick_phase={drawn:?}")], None));
    // A set phase makes the run independent of the seed (its only randomness here), which
    // otherwise moves it.
    assert_ne!(seeded["flows"], run(&[], Some(11))["flows"]);
    let set = run(&[&format!("flows[0].tcp.tick_phase={drawn:?}")], Some(11));
    assert_eq!(seeded["flows"], set["flows"]);
}

#[test]
fn the_phase_changes_what_a_congested_reno_flow_does() {
    // Not a tautology of the key: phases at both ends of the tick give other retransmission
    // timeouts and so other counts.
    let early = run(&["flows[0].tcp.tick_phase=0"], None);
    let late = run(&["flows[0].tcp.tick_phase=\"9.9ms\""], None);
    assert_ne!(early["flows"], late["flows"]);
}

#[test]
fn a_set_phase_applies_to_every_connection_of_the_flow_and_seeded_ones_draw_their_own() {
    let sc = common::accepted(common::ONE_LINK, &["flows[0].tcp.tick_phase=\"2ms\""]);
    let tcp = &sc.flows[0].tcp;
    for connection in [0, 1, 7, 1000] {
        assert_eq!(tick_phase(tcp, 5, connection), 0.002);
    }
    let seeded = &common::accepted(common::ONE_LINK, &[]).flows[0].tcp;
    assert_eq!(tick_phase(seeded, 5, 0), seeded_tick_phase(5, 0, 0.01));
    assert_ne!(tick_phase(seeded, 5, 0), tick_phase(seeded, 5, 1));
}
