//! Simultaneous arrivals run in ns-2's order: by the instant ns-2 scheduled each
//! arrival (when the packet's transmission started), then first in, first out.

use vegaslab_sim::{scenario, Simulator};

const SCENARIO: &str = include_str!("../../../tests/data/simultaneous-arrivals.toml");

#[test]
fn the_arrival_whose_transmission_started_first_is_served_first_as_in_ns2() {
    let sc = scenario::parse(SCENARIO, "simultaneous-arrivals.toml", &[]).unwrap();
    let v: serde_json::Value = serde_json::from_str(&Simulator::build(sc).expect("a valid scenario").run(|_, _| true).to_json()).unwrap();
    let drops: Vec<(String, u64)> =
        v["udp"].as_array().unwrap().iter().map(|u| (u["source"].as_str().unwrap().to_string(), u["dropped_pkts"].as_u64().unwrap())).collect();
    // ns-2.35 drops B's packet (trace: "d 0.019531 2 3 cbr 1000 ------- 2"); scheduling order
    // here (B's arrival was scheduled first, at its admission) would drop A's.
    assert_eq!(drops, vec![("a".to_string(), 0), ("b".to_string(), 1)]);
    assert_eq!(v["meta"]["same_instant_arrivals"], 1);
    assert_eq!(v["meta"]["tie_reorders"], 1);
}
