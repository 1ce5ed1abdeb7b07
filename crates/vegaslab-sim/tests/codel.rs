//! CoDel (RFC 8289, `kind = "codel"`) in whole runs and in the scenario format: it holds a
//! long-lived TCP flow's standing queue near its target where DropTail fills its buffer, it is
//! read, checked and normalised like the other queues, and it works with overrides, express
//! hops and a packet trace.

mod common;

use vegaslab_sim::queue::CoDelSpec;
use vegaslab_sim::scenario::{self, QueueSpec};
use vegaslab_sim::Simulator;

fn run(text: &str) -> serde_json::Value {
    let sc = scenario::parse(text, "t.toml", &[]).unwrap();
    let r = Simulator::build(sc).expect("a valid scenario").run(|_, _| true);
    let mut v: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
    v["meta"] = serde_json::Value::Null;
    v
}

/// One long-lived flow of `cc` through a 10 Mbit/s, 20 ms bottleneck with this queue, 1500-byte
/// packets (1.2 ms each on the bottleneck), 60 s.
fn one_flow(cc: &str, queue: &str) -> String {
    format!(
        r#"
[run]
duration = "60s"
[dumbbell]
pairs = 1
access = {{ bandwidth = "100Mbps", delay = "1ms" }}
bottleneck = {{ bandwidth = "10Mbps", delay = "20ms", queue = {queue} }}
[[flows]]
from = "S1"
to = "D1"
cc = "{cc}"
tcp = {{ window = 1000, packet_size = 1460 }}
"#
    )
}

fn bottleneck(v: &serde_json::Value) -> &serde_json::Value {
    v["queues"].as_array().unwrap().iter().find(|q| q["queue"] == "R1->R2").unwrap()
}

/// The bottleneck's mean queueing delay, ms: its mean length times a packet's transmission time.
fn mean_delay_ms(q: &serde_json::Value) -> f64 {
    q["mean_len_pkts"].as_f64().unwrap() * 1.2
}

#[test]
fn codel_keeps_a_long_lived_flows_standing_queue_near_target_where_droptail_fills_the_buffer() {
    for cc in ["reno", "newreno"] {
        let codel = run(&one_flow(cc, r#"{ kind = "codel", limit = 200 }"#));
        let droptail = run(&one_flow(cc, r#"{ kind = "droptail", limit = 200 }"#));
        let (c, d) = (bottleneck(&codel), bottleneck(&droptail));
        assert_eq!(c["kind"], "codel");
        // DropTail: the flow fills the 200-packet buffer (240 ms) before each loss.
        assert!(mean_delay_ms(d) > 100.0, "{cc} droptail: {d}");
        assert!(d["max_len_pkts"].as_u64().unwrap() >= 198, "{cc} droptail: {d}");
        // CoDel: a standing queue of a few target times (5 ms), reached by drops at dequeue
        // long before the buffer is full.
        assert!(mean_delay_ms(c) < 15.0, "{cc} codel: {c}");
        assert!(c["max_len_pkts"].as_u64().unwrap() < 150, "{cc} codel: {c}");
        assert!(c["dropped_pkts"].as_u64().unwrap() > 0, "{cc} codel: {c}");
        // The link stays busy.
        let link = codel["links"].as_array().unwrap().iter().find(|l| l["link"] == "R1->R2").unwrap();
        assert!(link["utilisation_ratio"].as_f64().unwrap() > 0.8, "{cc} codel: {link}");
        // Every packet is accounted for.
        let n = |k: &str| c[k].as_u64().unwrap();
        assert_eq!(n("arrived_pkts"), n("departed_pkts") + n("dropped_pkts") + n("backlog_pkts"), "{c}");
    }
}

#[test]
fn a_larger_target_allows_a_longer_standing_queue() {
    let mean = |target: &str| mean_delay_ms(bottleneck(&run(&one_flow("reno", &format!(r#"{{ kind = "codel", limit = 200, target = "{target}" }}"#)))));
    let (small, large) = (mean("5ms"), mean("30ms"));
    assert!(large > small + 10.0, "{small} ms, {large} ms");
}

#[test]
fn codel_runs_are_deterministic_and_unchanged_by_express_hops() {
    let text = one_flow("reno", r#"{ kind = "codel", limit = 100, target = "3ms", interval = "50ms" }"#).replace("60s", "20s");
    assert_eq!(run(&text), run(&text));
    common::assert_express_hops_change_nothing(&text);
    // A chain whose every hop but the bottleneck's may hand packets on.
    let chain = r#"
[run]
duration = "10s"
[[links]]
endpoints = ["S", "A"]
bandwidth = "100Mbps"
delay = "1ms"
[[links]]
endpoints = ["A", "B"]
bandwidth = "5Mbps"
delay = "10ms"
queue = { kind = "codel", limit = 100 }
[[links]]
endpoints = ["B", "D"]
bandwidth = "100Mbps"
delay = "1ms"
[[flows]]
from = "S"
to = "D"
cc = "newreno"
tcp = { window = 500 }
"#;
    common::assert_express_hops_change_nothing(chain);
}

#[test]
fn a_codel_link_whose_delay_falls_delivers_overtaking_packets_in_arrival_order() {
    // The bottleneck's delay falls from 200 ms to 2 ms at 3 s: packets sent after the change
    // overtake those still propagating. Every packet is accounted for, and express hops
    // change nothing.
    let text = one_flow("newreno", r#"{ kind = "codel", limit = 100 }"#)
        .replace("60s", "8s")
        .replace(r#"delay = "20ms", queue"#, r#"delay = "200ms", delay_schedule = [{ at = "3s", delay = "2ms" }], queue"#);
    let v = run(&text);
    let q = bottleneck(&v);
    let n = |k: &str| q[k].as_u64().unwrap();
    assert_eq!(n("arrived_pkts"), n("departed_pkts") + n("dropped_pkts") + n("backlog_pkts"), "{q}");
    assert!(v["flows"][0]["delivered_pkts"].as_u64().unwrap() > 1000, "{}", v["flows"][0]);
    common::assert_express_hops_change_nothing(&text);
}

const BASE: &str = r#"
[run]
duration = "10s"

[[links]]
endpoints = ["S1", "D1"]
bandwidth = "1Mbps"
delay = "10ms"
queue = { kind = "codel", limit = 100 }

[[flows]]
from = "S1"
to = "D1"
cc = "reno"
"#;

fn codel_of(overrides: &[&str]) -> CoDelSpec {
    match common::accepted(BASE, overrides).links[0].forward.queue.clone() {
        QueueSpec::CoDel(c) => c,
        other => panic!("not CoDel: {other:?}"),
    }
}

#[test]
fn target_and_interval_default_to_linux_s_5_ms_and_100_ms() {
    assert_eq!(codel_of(&[]), CoDelSpec { limit: 100, target: 5_000_000, interval: 100_000_000 });
    assert_eq!(codel_of(&["links[0].queue={kind=\"codel\"}"]).limit, 50);
}

#[test]
fn target_interval_and_limit_can_be_set_and_overridden() {
    let c = codel_of(&["links[0].queue.target=\"2ms\"", "links[0].queue.interval=\"40ms\"", "links[0].queue.limit=30"]);
    assert_eq!(c, CoDelSpec { limit: 30, target: 2_000_000, interval: 40_000_000 });
    // Numbers are seconds, as for every time.
    assert_eq!(codel_of(&["links[0].queue.target=0.01"]).target, 10_000_000);
}

#[test]
fn the_normalised_scenario_carries_kind_limit_target_and_interval() {
    let sc = common::accepted(BASE, &["links[0].queue.target=\"7ms\""]);
    let v = scenario::normalize::to_value(&sc);
    let q = &v["links"][0]["forward"]["queue"];
    assert_eq!(q, &serde_json::json!({ "kind": "codel", "limit": 100, "target_ns": 7_000_000, "interval_ns": 100_000_000 }));
}

#[test]
fn bad_codel_parameters_are_refused_naming_the_field_and_range() {
    let e = |o: &[&str]| common::rejected(BASE, o);
    assert_eq!(e(&["links[0].queue.target=0"]), "case.toml: links[0].queue.target: must be > 0 s and <= 10000000 s, got 0");
    assert_eq!(e(&["links[0].queue.interval=\"20000000s\""]), "case.toml: links[0].queue.interval: must be > 0 s and <= 10000000 s, got \"20000000s\"");
    assert_eq!(e(&["links[0].queue.interval=\"5ms\""]), "case.toml: links[0].queue.interval: must be > target (0.005 s), got 0.005 s");
    assert_eq!(e(&["links[0].queue.target=\"200ms\""]), "case.toml: links[0].queue.interval: must be > target (0.2 s), got 0.1 s");
    assert_eq!(e(&["links[0].queue.limit=0"]), "case.toml: links[0].queue.limit: must be between 1 and 100000000, got 0");
    let unknown = e(&["links[0].queue.min=3"]);
    assert!(unknown.starts_with("case.toml: links[0].queue.min: unknown field"), "{unknown}");
}

#[test]
fn a_sweep_axis_over_target_gives_one_run_per_value() {
    let text = format!("{BASE}\n[sweep]\n[[sweep.axis]]\npath = \"links[0].queue.target\"\nvalues = [\"2ms\", \"8ms\"]\n");
    let plan = scenario::sweep::expand(&text, "case.toml", &[]).expect("a valid sweep");
    let targets: Vec<u64> = (0..plan.points.len())
        .map(|i| match &scenario::parse(&text, "case.toml", &plan.run_overrides(i)).unwrap().links[0].forward.queue {
            QueueSpec::CoDel(c) => c.target,
            q => panic!("{q:?}"),
        })
        .collect();
    assert_eq!(targets, vec![2_000_000, 8_000_000]);
}

#[test]
fn a_traced_codel_link_records_drops_at_dequeue_with_their_own_time() {
    let text = format!(
        "{}\n[trace]\nfile = \"t.tr\"\nlinks = [\"R1->R2\"]\n",
        one_flow("reno", r#"{ kind = "codel", limit = 200 }"#).replace("60s", "10s")
    );
    let sc = scenario::parse(&text, "t.toml", &[]).unwrap();
    let dir = std::env::temp_dir().join(format!("vegaslab-codel-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut sim = Simulator::build(sc).expect("a valid scenario");
    let path = sim.open_trace(&dir).unwrap().unwrap();
    let r = sim.run(|_, _| true);
    let trace = std::fs::read_to_string(&path).unwrap();
    std::fs::remove_dir_all(&dir).ok();
    let q = r.queues.iter().find(|q| q.queue == "R1->R2").unwrap();
    let drops = trace.lines().filter(|l| l.starts_with("d ")).count() as u64;
    assert_eq!(drops, q.dropped_pkts);
    assert!(drops > 0);
    // A packet dropped at dequeue waited first: its `d` is later than its `+`.
    // (uid, time) of each record of one kind; a hop's records share its uid (the last field).
    let times = |ev: &str| -> Vec<(String, f64)> {
        trace
            .lines()
            .filter(|l| l.starts_with(ev))
            .map(|l| {
                let f: Vec<&str> = l.split(' ').collect();
                (f[f.len() - 1].to_string(), f[1].parse().unwrap())
            })
            .collect()
    };
    let offered: std::collections::HashMap<String, f64> = times("+ ").into_iter().collect();
    assert!(times("d ").iter().any(|(uid, t)| *t > offered[uid] + 0.004), "no drop after a wait");
}
