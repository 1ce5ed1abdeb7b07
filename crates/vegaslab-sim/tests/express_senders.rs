//! Packets taken at the node where they end ahead of the clock (src/express.rs, "Packets to
//! an end node": ACKs to their senders, data to their sinks) change nothing but the
//! event count: each scenario runs three ways (every express hop; express hops but packets to
//! end nodes through events; no express hop at all) and must give the same results, with
//! fewer events where end nodes may run ahead.

use serde_json::Value;
use vegaslab_sim::scenario::parse;
use vegaslab_sim::Simulator;

/// Results (metadata blanked) and event count of `text` run with `how` applied.
fn run(text: &str, how: fn(Simulator) -> Simulator) -> (Value, u64) {
    let sim = how(Simulator::build(parse(text, "t.toml", &[]).unwrap()).expect("a valid scenario"));
    let r = sim.run(|_, _| true);
    let events = r.meta.events;
    let mut v: Value = serde_json::from_str(&r.to_json()).unwrap();
    v["meta"] = Value::Null;
    (v, events)
}

/// The three ways give the same results; returns (events with senders ahead, without).
fn three_ways(text: &str) -> (u64, u64) {
    let (all, e_all) = run(text, |s| s);
    let (hops, e_hops) = run(text, Simulator::without_express_to_senders);
    let (none, e_none) = run(text, Simulator::without_express_hops);
    assert_eq!(all, hops, "ACKs handed to senders ahead of the clock changed the results");
    assert_eq!(hops, none, "express hops changed the results");
    assert!(e_all <= e_hops && e_hops <= e_none, "events {e_all} / {e_hops} / {e_none}");
    (e_all, e_hops)
}

/// Six pairs over a congested bottleneck, three NewReno and three Vegas, the Vegas flows
/// starting later; `extra` adds to it.
fn dumbbell(queue: u32, extra: &str) -> String {
    format!(
        r#"
[run]
duration = "20s"
[dumbbell]
pairs = 6
access = {{ bandwidth = "10Mbps", delay = "2ms" }}
bottleneck = {{ bandwidth = "3Mbps", delay = "10ms", queue = {{ limit = {queue} }} }}
[[flows]]
pairs = "1-3"
cc = "newreno"
tcp = {{ window = 64 }}
[[flows]]
pairs = "4-6"
cc = "vegas"
start = "1s"
tcp = {{ window = 64 }}
{extra}
"#
    )
}

#[test]
fn senders_run_ahead_on_a_congested_dumbbell_and_change_nothing() {
    let (ahead, evented) = three_ways(&dumbbell(20, ""));
    assert!(ahead < evented, "senders should take fewer events ({ahead} vs {evented})");
}

#[test]
fn retransmission_timeouts_stop_a_sender_running_ahead_and_change_nothing() {
    // A two-packet buffer: drops, timeouts and backed-off timers at every turn.
    let text = dumbbell(2, "");
    let (v, _) = run(&text, |s| s);
    let timeouts: i64 = v["flows"].as_array().unwrap().iter().map(|f| f["timeouts"].as_i64().unwrap()).sum();
    assert!(timeouts > 0, "the scenario should time out");
    three_ways(&text);
}

#[test]
fn monitor_samples_of_the_senders_state_stop_it_running_ahead_and_change_nothing() {
    // Every 10 ms the cwnd, RTT and activity of each sender are read.
    let text = dumbbell(20, "[monitor]\ncwnd = true\nthroughput = true\n").replace("duration = \"20s\"", "duration = \"20s\"\nsample_interval = \"10ms\"");
    assert!(text.contains("sample_interval"));
    three_ways(&text);
}

#[test]
fn flows_stopping_and_sharing_a_sender_node_change_nothing() {
    // S1 sends two flows (neither alone on its first link); two flows stop mid-run.
    let extra = r#"
[[flows]]
name = "second-from-s1"
from = "S1"
to = "D2"
cc = "reno"
stop = "12s"
[[flows]]
name = "stopping"
from = "S6"
to = "D6"
cc = "vegas"
start = "2s"
stop = "7.5s"
"#;
    three_ways(&dumbbell(20, extra));
}

#[test]
fn lossy_links_and_two_way_traffic_change_nothing() {
    let extra = r#"
[[flows]]
name = "back"
from = "D1"
to = "S1"
cc = "reno"
"#;
    let text = dumbbell(20, extra).replace(r#"access = { bandwidth = "10Mbps", delay = "2ms" }"#, r#"access = { bandwidth = "10Mbps", delay = "2ms", error_rate = 0.01 }"#);
    assert!(text.contains("error_rate"));
    three_ways(&text);
}

#[test]
fn a_sender_whose_own_packets_reach_its_acks_without_an_event_takes_one_and_changes_nothing() {
    // One path with no merge point: a data packet and its ACK are handed on hop by hop from
    // the sender's own sending, so the ACK meets its sender while it is still sending; it
    // must wait for its event (the sender would otherwise run inside itself).
    let text = r#"
[run]
duration = "10s"
[[links]]
endpoints = ["S1", "R1"]
bandwidth = "10Mbps"
delay = "5ms"
[[links]]
endpoints = ["R1", "D1"]
bandwidth = "1Mbps"
delay = "10ms"
queue = { limit = 8 }
[[flows]]
from = "S1"
to = "D1"
cc = "vegas"
tcp = { window = 40 }
"#;
    three_ways(text);
}

#[test]
fn acks_overtaking_on_a_link_whose_delay_falls_change_nothing() {
    // Two flows keep ACKs in flight on their access links all the time; the access links'
    // delay falls from 40 ms to 1 ms, so ACKs sent after the fall overtake those sent before
    // it on the way to their senders, which see them out of order, as they do with events.
    let text = r#"
[run]
duration = "12s"
[[links]]
endpoints = ["S1", "R1"]
bandwidth = "10Mbps"
delay = "40ms"
delay_schedule = [{ at = "5s", delay = "1ms" }, { at = "8s", delay = "40ms" }]
[[links]]
endpoints = ["S2", "R1"]
bandwidth = "10Mbps"
delay = "40ms"
delay_schedule = [{ at = "5.5s", delay = "1ms" }, { at = "9s", delay = "40ms" }]
[[links]]
endpoints = ["R1", "R2"]
bandwidth = "20Mbps"
delay = "5ms"
[[links]]
endpoints = ["R2", "D1"]
bandwidth = "10Mbps"
delay = "2ms"
[[links]]
endpoints = ["R2", "D2"]
bandwidth = "10Mbps"
delay = "2ms"
[[flows]]
from = "S1"
to = "D1"
cc = "vegas"
tcp = { window = 150 }
[[flows]]
from = "S2"
to = "D2"
cc = "newreno"
tcp = { window = 150 }
"#;
    three_ways(text);
}

/// A dumbbell with traffic both ways: each S_i sends to D_i and D_i to S_i, so every end node
/// has a sender and a sink, and its one link out carries both one's data and the other's ACKs;
/// the reverse flows start at `reverse_start`.
fn two_way(reverse_start: &str) -> String {
    let mut text = dumbbell(20, "");
    for i in 1..=6 {
        text += &format!("[[flows]]\nname = \"back{i}\"\nfrom = \"D{i}\"\nto = \"S{i}\"\ncc = \"{}\"\nstart = \"{reverse_start}\"\ntcp = {{ window = 64 }}\n", if i % 2 == 0 { "vegas" } else { "reno" });
    }
    text
}

#[test]
fn end_nodes_with_a_sender_and_a_sink_run_ahead_with_traffic_both_ways_and_change_nothing() {
    let (ahead, evented) = three_ways(&two_way("0.5s"));
    assert!(ahead < evented, "end nodes should take fewer events ({ahead} vs {evented})");
}

#[test]
fn a_sender_starting_on_a_node_that_already_receives_stops_it_running_ahead_and_changes_nothing() {
    // D_i's senders start at 7.25 s while D_i's sinks have been receiving since 0-1 s: before
    // the start, what reaches D_i may run ahead only up to it.
    three_ways(&two_way("7.25s"));
}

#[test]
fn a_udp_source_on_an_end_node_keeps_it_to_events_and_changes_nothing() {
    // S1 and D1 also send on/off UDP traffic into the links their TCP sender and sink use:
    // the datagrams leave at their sources' own times, so nothing reaching those nodes may
    // run ahead of them.
    let extra = r#"
[[udp]]
name = "s1-out"
from = "S1"
to = "D1"
packet_size = 500
model = "exp-onoff"
rate = "1Mbps"
mean_on = "30ms"
mean_off = "30ms"
[[udp]]
name = "d1-out"
from = "D1"
to = "S1"
packet_size = 500
model = "exp-onoff"
rate = "1Mbps"
mean_on = "30ms"
mean_off = "30ms"
"#;
    three_ways(&(two_way("0.5s") + extra));
}
