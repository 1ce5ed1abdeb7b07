//! Deterministic loss patterns (`loss`, `loss_forward`, `loss_reverse`) and per-direction queue
//! disciplines (`queue_forward`, `queue_reverse`) in whole runs.

mod common;

use vegaslab_sim::{scenario, ErrorKind, Simulator};

fn run(text: &str, overrides: &[&str]) -> serde_json::Value {
    let sc = scenario::parse(text, "t.toml", &common::sets(overrides)).unwrap();
    let r = Simulator::build(sc).expect("a valid scenario").run(|_, _| true);
    serde_json::from_str(&r.to_json()).unwrap()
}

/// A 1 Mbit/s, 10 ms link A - B carrying one CBR source A -> B: 1000-byte packets every
/// 10 ms (0.8 Mbit/s, so the queue never drops), from 0 to 1 s: 100 packets, indices 0..99.
/// (A TCP flow on another link, C - D, because a scenario needs one.)
const CBR: &str = r#"
[run]
duration = "2s"
[[links]]
endpoints = ["A", "B"]
bandwidth = "1Mbps"
delay = "10ms"
[[udp]]
name = "cbr"
from = "A"
to = "B"
model = "cbr"
packet_size = 1000
interval = "10ms"
stop = "0.995s"
[[links]]
endpoints = ["C", "D"]
bandwidth = "1Mbps"
delay = "10ms"
[[flows]]
from = "C"
to = "D"
cc = "reno"
"#;

fn udp_counts(v: &serde_json::Value) -> (u64, u64, u64) {
    let u = &v["udp"][0];
    (u["sent_pkts"].as_u64().unwrap(), u["received_pkts"].as_u64().unwrap(), u["dropped_pkts"].as_u64().unwrap())
}

#[test]
fn a_list_loses_exactly_the_listed_packets_counted_from_zero() {
    let v = run(CBR, &["links[0].loss={packets=[99, 0, 17, 1000]}"]);
    // 0, 17 and 99 are sent; 1000 never is.
    assert_eq!(udp_counts(&v), (100, 97, 3));
    assert_eq!(v["queues"][0]["error_pkts"], 3);
    // Off by one: [100] is past the last packet, [99] the last one.
    assert_eq!(udp_counts(&run(CBR, &["links[0].loss={packets=[100]}"])), (100, 100, 0));
    assert_eq!(udp_counts(&run(CBR, &["links[0].loss={packets=[99]}"])), (100, 99, 1));
}

#[test]
fn a_periodic_pattern_loses_bursts_from_first_every_period() {
    // From 3, every 10, bursts of 2: 3, 4, 13, 14, ..., 93, 94 = 20 packets.
    let v = run(CBR, &["links[0].loss={every=10, first=3, burst=2}"]);
    assert_eq!(udp_counts(&v), (100, 80, 20));
    // From 0 (the default), one in 7: 0, 7, ..., 98 = 15 packets.
    assert_eq!(udp_counts(&run(CBR, &["links[0].loss={every=7}"])), (100, 85, 15));
    // first = 98 and 99 lose two and one packet (the last is index 99).
    assert_eq!(udp_counts(&run(CBR, &["links[0].loss={every=1000, first=98, burst=2}"])), (100, 98, 2));
    assert_eq!(udp_counts(&run(CBR, &["links[0].loss={every=1000, first=99, burst=2}"])), (100, 99, 1));
}

#[test]
fn a_pattern_counts_only_its_own_direction() {
    // The CBR packets go A -> B: a reverse pattern sees nothing, a forward one everything.
    let v = run(CBR, &["links[0].loss_reverse={every=1}"]);
    assert_eq!(udp_counts(&v), (100, 100, 0));
    assert_eq!((v["queues"][0].get("error_pkts"), &v["queues"][1]["error_pkts"]), (None, &serde_json::json!(0)));
    let v = run(CBR, &["links[0].loss_forward={packets=[5]}", "links[0].loss={every=1}"]);
    assert_eq!(udp_counts(&v), (100, 99, 1), "loss_forward wins over loss");
}

/// One Reno file transfer of 30 packets A -> B, no SYN, window 4: the data packets leave in
/// sequence order until the first loss, and each ACK of the sink goes back B -> A.
const RENO: &str = r#"
[run]
duration = "20s"
[[links]]
endpoints = ["A", "B"]
bandwidth = "1Mbps"
delay = "10ms"
[[flows]]
from = "A"
to = "B"
cc = "reno"
app = { kind = "file", size = 30000 }
tcp = { window = 4, syn = false, packet_size = 1000 }
"#;

fn flow_counts(v: &serde_json::Value) -> (u64, u64, u64) {
    let f = &v["flows"][0];
    (f["sent_pkts"].as_u64().unwrap(), f["dropped_pkts"].as_u64().unwrap(), f["retransmitted_pkts"].as_u64().unwrap())
}

#[test]
fn lost_data_packets_count_as_flow_drops_and_are_retransmitted() {
    let clean = run(RENO, &[]);
    assert_eq!(flow_counts(&clean), (30, 0, 0));
    let v = run(RENO, &["links[0].loss_forward={packets=[5]}"]);
    assert_eq!(flow_counts(&v), (31, 1, 1));
    assert_eq!(v["queues"][0]["error_pkts"], 1);
    assert!(v["flows"][0]["completion_time_s"].as_f64().unwrap() > clean["flows"][0]["completion_time_s"].as_f64().unwrap());
}

#[test]
fn lost_acks_count_in_the_reverse_direction_and_not_as_data_drops() {
    // Both directions lose their packet 2: the third data packet and the third ACK.
    let v = run(RENO, &["links[0].loss={packets=[2]}"]);
    assert_eq!((&v["queues"][0]["error_pkts"], &v["queues"][1]["error_pkts"]), (&serde_json::json!(1), &serde_json::json!(1)));
    assert_eq!(flow_counts(&v).1, 1, "only the data packet is a flow drop");
    // Only the ACK: cumulative ACKs cover it, nothing is retransmitted.
    let v = run(RENO, &["links[0].loss_reverse={packets=[2]}"]);
    assert_eq!(flow_counts(&v), (30, 0, 0));
    assert_eq!(v["queues"][1]["error_pkts"], 1);
}

#[test]
fn a_run_without_patterns_normalises_and_runs_as_before() {
    let sc = scenario::parse(RENO, "t.toml", &[]).unwrap();
    let doc = scenario::normalize::to_value(&sc);
    assert!(doc["links"][0]["forward"].get("loss").is_none());
    // An empty list is a pattern that loses nothing: the same run, with an error counter.
    let empty = run(RENO, &["links[0].loss={packets=[]}"]);
    let plain = run(RENO, &[]);
    assert_eq!(empty["flows"], plain["flows"]);
    assert_eq!(empty["queues"][0]["error_pkts"], 0);
}

#[test]
fn each_direction_gets_its_own_queue_discipline() {
    let v = run(RENO, &["links[0].queue_forward={kind=\"red\", min=3, max=9, limit=20}", "links[0].queue_reverse={limit=5}"]);
    let q: Vec<(String, String, u64)> = v["queues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| (q["queue"].as_str().unwrap().to_string(), q["kind"].as_str().unwrap().to_string(), q["limit_pkts"].as_u64().unwrap()))
        .collect();
    assert_eq!(q, vec![("A->B".into(), "red".into(), 20), ("B->A".into(), "droptail".into(), 5)]);
    // Each defaults to `queue`, and overrides it.
    let sc = scenario::parse(RENO, "t.toml", &common::sets(&["links[0].queue={limit=7}", "links[0].queue_reverse={limit=3}"])).unwrap();
    assert_eq!((sc.links[0].forward.queue.limit(), sc.links[0].reverse.queue.limit()), (7, 3));
}

#[test]
fn topology_builders_take_the_per_direction_keys() {
    let text = r#"
[run]
duration = "1s"
[dumbbell]
pairs = 2
access = { bandwidth = "10Mbps", delay = "1ms", loss_reverse = { every = 3 } }
bottleneck = { bandwidth = "1Mbps", delay = "10ms", queue_reverse = { limit = 4 }, loss = { packets = [1] } }
[[flows]]
from = "S1"
to = "D1"
cc = "reno"
"#;
    let sc = scenario::parse(text, "t.toml", &[]).unwrap();
    let bottleneck = sc.links.iter().find(|l| sc.nodes[l.a] == "R1" && sc.nodes[l.b] == "R2").unwrap();
    assert_eq!((bottleneck.forward.queue.limit(), bottleneck.reverse.queue.limit()), (50, 4));
    assert!(bottleneck.forward.loss.is_some() && bottleneck.reverse.loss.is_some());
    let access: Vec<_> = sc.links.iter().filter(|l| sc.nodes[l.b] == "R1").collect();
    assert_eq!(access.len(), 2);
    assert!(access.iter().all(|l| l.forward.loss.is_none() && l.reverse.loss.is_some()));
}

fn rejected(overrides: &[&str]) -> vegaslab_sim::ScenarioError {
    scenario::parse(CBR, "case.toml", &common::sets(overrides)).expect_err("should be rejected")
}

#[test]
fn bad_loss_patterns_name_the_field_and_what_is_allowed() {
    for (set, path, kind, message) in [
        ("links[0].loss={packets=[3, -1]}", "links[0].loss.packets[1]", ErrorKind::OutOfRange, "must be a packet index >= 0 and <= 1000000000000000 (0 is the first packet the direction sends), got -1"),
        ("links[0].loss={packets=[3, \"x\"]}", "links[0].loss.packets[1]", ErrorKind::WrongType, "must be a whole number (a packet index), got \"x\""),
        ("links[0].loss={packets=[3, 1.5]}", "links[0].loss.packets[1]", ErrorKind::WrongType, "must be a whole number (a packet index), got 1.5"),
        ("links[0].loss_forward={packets=[17, 3, 17]}", "links[0].loss_forward.packets[2]", ErrorKind::Conflict, "packet index 17 is listed twice"),
        ("links[0].loss={packets=[3], every=2}", "links[0].loss.every", ErrorKind::Conflict, "give either packets = [...] or every = n (with first, burst), not both"),
        ("links[0].loss={every=0}", "links[0].loss.every", ErrorKind::OutOfRange, "must be between 1 and 1000000000000000, got 0"),
        ("links[0].loss={every=5, first=-1}", "links[0].loss.first", ErrorKind::OutOfRange, "must be between 0 and 1000000000000000, got -1"),
        ("links[0].loss={every=5, burst=6}", "links[0].loss.burst", ErrorKind::OutOfRange, "must be <= every (5), got 6"),
        ("links[0].loss={every=5, burst=0}", "links[0].loss.burst", ErrorKind::OutOfRange, "must be between 1 and 1000000000000000, got 0"),
        ("links[0].loss={first=5}", "links[0].loss.every", ErrorKind::Missing, "is required: give packets = [i, ...] (packet indices from 0) or every = n (one packet in n)"),
        ("links[0].loss_reverse=3", "links[0].loss_reverse", ErrorKind::WrongType, "must be a table, got 3"),
        ("links[0].loss={packets=3}", "links[0].loss.packets", ErrorKind::WrongType, "must be an array, got 3"),
    ] {
        let e = rejected(&[set]);
        assert_eq!((e.path.as_str(), e.kind, e.message.as_str()), (path, kind, message), "{set}");
    }
    let e = rejected(&["links[0].loss={period=5}"]);
    assert_eq!(e.kind, ErrorKind::UnknownField);
    assert!(e.to_string().starts_with("case.toml: links[0].loss.period: unknown field; allowed here: packets, every, first, burst"), "{e}");
}

#[test]
fn a_loss_list_longer_than_the_limit_is_refused_before_it_is_kept() {
    let long = format!("links[0].loss={{packets=[{}]}}", (0..100_001).map(|i| i.to_string()).collect::<Vec<_>>().join(","));
    let e = rejected(&[&long]);
    assert_eq!((e.path.as_str(), e.kind), ("links[0].loss.packets", ErrorKind::TooLarge));
    assert_eq!(e.message, "lists 100001 packets; at most 100000 are allowed");
}

#[test]
fn bad_per_direction_queues_name_their_field() {
    let e = rejected(&["links[0].queue_reverse={kind=\"fifo\"}"]);
    assert_eq!(e.path, "links[0].queue_reverse.kind");
    assert!(e.message.starts_with("unknown queue kind \"fifo\""), "{e}");
    let e = rejected(&["links[0].queue_forward={limit=1}"]);
    assert_eq!(e.path, "links[0].queue_forward.limit");
}
