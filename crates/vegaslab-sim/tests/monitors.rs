//! Monitors cost nothing when off and little when on: a monitored queue samples
//! itself as its clock passes each sample time (`Channel::start_sampling`), so monitoring
//! keeps express hops, adds no event, and changes no result.

mod common;

use serde_json::Value;

/// A dumbbell whose egress and ACK channels are express hops, with queues that fill: the
/// egress R2->D1 is fed only by the bottleneck, so its packets arrive ahead of the clock.
const DUMBBELL: &str = r#"
[run]
duration = "20s"
sample_interval = "10ms"
[dumbbell]
pairs = 4
access = { bandwidth = "10Mbps", delay = "2ms" }
egress = { bandwidth = "2Mbps", delay = "3ms", queue = { limit = 30 } }
bottleneck = { bandwidth = "6Mbps", delay = "10ms", queue = { limit = 25 } }
[[flows]]
pairs = "1-2"
cc = "newreno"
tcp = { window = 64 }
[[flows]]
pairs = "3-4"
cc = "vegas"
start = "1s"
tcp = { window = 64 }
"#;

const ALL_MONITORS: &str = "[monitor]\ncwnd = true\nthroughput = true\nall_queues = true\n";

fn with_monitors() -> String {
    format!("{DUMBBELL}\n{ALL_MONITORS}")
}

fn queue_series(v: &Value) -> &Value {
    &v["series"]["queues"]
}

#[test]
fn monitors_change_no_result() {
    let (plain, _) = common::run_express(DUMBBELL, true);
    let (monitored, _) = common::run_express(&with_monitors(), true);
    for table in ["flows", "queues", "links", "udp"] {
        assert_eq!(plain[table], monitored[table], "table {table} moved when the monitors were switched on");
    }
}

#[test]
fn monitoring_queues_adds_no_event() {
    let queues_only = format!("{DUMBBELL}\n[monitor]\nall_queues = true\n");
    let (_, plain) = common::run_express(DUMBBELL, true);
    let (v, monitored) = common::run_express(&queues_only, true);
    assert_eq!(plain, monitored, "a monitored queue must not cost events");
    // 20 s at 10 ms: 2000 samples of each of the 18 channels (9 links).
    assert_eq!(queue_series(&v)["time_s"].as_array().unwrap().len(), 2000 * 18);
}

#[test]
fn queue_samples_are_identical_with_and_without_express_hops() {
    // Without express hops every packet reaches a queue through an event at its arrival time,
    // so the queue is read at the simulation's clock: the reference.
    let (with, ea) = common::run_express(&with_monitors(), true);
    let (without, eb) = common::run_express(&with_monitors(), false);
    assert!(ea < eb, "express hops should stay on monitored links ({ea} vs {eb})");
    assert_eq!(queue_series(&with), queue_series(&without));
    // The egress queues really were busy, so the comparison means something.
    let lengths = queue_series(&with)["length_pkts"].as_array().unwrap();
    let queue = queue_series(&with)["queue"].as_array().unwrap();
    let peak = lengths.iter().zip(queue).filter(|(_, q)| *q == "R2->D1").map(|(l, _)| l.as_u64().unwrap()).max();
    assert!(peak.unwrap_or(0) >= 5, "the express egress queue should fill: peak {peak:?}");
}

#[test]
fn a_stopped_run_keeps_the_samples_up_to_where_it_stopped() {
    let sc = vegaslab_sim::scenario::parse(&with_monitors(), "t.toml", &[]).unwrap();
    // Stopped at the first progress report (after 16,384 events, a fraction of the run).
    let r = vegaslab_sim::Simulator::build(sc).expect("a valid scenario").run(|_, _| false);
    let v: Value = serde_json::from_str(&r.to_json()).unwrap();
    let times: Vec<f64> = queue_series(&v)["time_s"].as_array().unwrap().iter().map(|t| t.as_f64().unwrap()).collect();
    assert!(!times.is_empty() && times.len() < 2000 * 18, "{} samples", times.len());
    assert_eq!(times.len() % 18, 0, "every queue has a sample at each time");
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "rows are in time order");
}
