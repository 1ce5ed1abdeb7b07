//! Linux's TCP stack (`tcp.stack = "linux"`) in whole runs: how it repairs chosen losses, how
//! its receiver acknowledges, which flows run on it, and what it refuses. Each mechanism's
//! switch (`tcp.linux`) is checked to move what it is there for.

mod common;

use vegaslab_sim::{scenario, Simulator};

fn run(text: &str, overrides: &[&str]) -> serde_json::Value {
    let sc = scenario::parse(text, "t.toml", &common::sets(overrides)).unwrap();
    let r = Simulator::build(sc).expect("a valid scenario").run(|_, _| true);
    serde_json::from_str(&r.to_json()).unwrap()
}

/// A 10 Mbit/s link with a 20 ms delay each way (a 40 ms round trip plus transmission) and a
/// queue that never fills, and one Linux-flavour Vegas flow sending a 200-packet file. The
/// forward direction's packets are numbered from 0 in the order it sends them: the SYN is 0,
/// data segment k is k while nothing was resent.
const FILE: &str = r#"
[run]
duration = "20s"
[[links]]
endpoints = ["A", "B"]
bandwidth = "10Mbps"
delay = "20ms"
queue = { limit = 1000 }
[[flows]]
from = "A"
to = "B"
cc = "vegas"
params = { flavour = "linux" }
app = { kind = "file", packets = 200 }
"#;

fn flow(v: &serde_json::Value, key: &str) -> f64 {
    v["flows"][0][key].as_f64().unwrap_or_else(|| panic!("flows[0].{key} in {}", v["flows"][0]))
}

/// ACKs the receiver sent: what the reverse direction transmitted.
fn acks(v: &serde_json::Value) -> u64 {
    v["queues"][1]["departed_pkts"].as_u64().unwrap()
}

#[test]
fn one_lost_segment_costs_one_retransmission_and_no_timeout() {
    let clean = run(FILE, &[]);
    let lossy = run(FILE, &["links[0].loss_forward={packets=[50]}"]);
    assert_eq!(flow(&clean, "retransmitted_pkts"), 0.0);
    assert_eq!((flow(&lossy, "retransmitted_pkts"), flow(&lossy, "timeouts")), (1.0, 0.0));
    // SACK and RACK repair it within a few round trips of the loss.
    let delay = flow(&lossy, "completion_time_s") - flow(&clean, "completion_time_s");
    assert!(delay < 0.2, "the loss delayed completion by {delay} s");
}

#[test]
fn lost_last_segments_are_repaired_by_the_tail_loss_probe_not_the_rto() {
    // Indices 199 and 200 are the file's last two segments: no later segment is SACKed, so
    // only a timer finds them. The probe (2 SRTT + 2 ms with two segments out) resends the
    // last one; its SACK shows the other lost, and recovery resends it.
    let tail = "links[0].loss_forward={packets=[199, 200]}";
    let probe = run(FILE, &[tail]);
    assert_eq!((flow(&probe, "retransmitted_pkts"), flow(&probe, "timeouts")), (2.0, 0.0));
    let rto = run(FILE, &[tail, "flows[0].tcp.linux.rack_tlp=false"]);
    assert_eq!(flow(&rto, "timeouts"), 1.0, "without the probe only the RTO repairs a tail loss");
    let gain = flow(&rto, "completion_time_s") - flow(&probe, "completion_time_s");
    assert!(gain > 0.05, "the probe saved {gain} s");
}

#[test]
fn a_single_segment_tail_waits_as_long_for_the_probe_as_for_the_rto() {
    // With one segment out the probe allows for a delayed ACK (+200 ms, `tcp_rto_min`) and is
    // capped by the RTO: Linux repairs a lone lost last segment no sooner with the probe.
    let tail = "links[0].loss_forward={packets=[200]}";
    let probe = run(FILE, &[tail]);
    let rto = run(FILE, &[tail, "flows[0].tcp.linux.rack_tlp=false"]);
    assert_eq!((flow(&probe, "timeouts"), flow(&rto, "timeouts")), (0.0, 1.0));
    assert_eq!(flow(&probe, "completion_time_s"), flow(&rto, "completion_time_s"));
}

#[test]
fn sack_repairs_several_holes_of_one_window_sooner_than_duplicate_acks_alone() {
    let holes = "links[0].loss_forward={packets=[100, 103, 106, 109, 112]}";
    let sack = run(FILE, &[holes]);
    let reno = run(FILE, &[holes, "flows[0].tcp.linux.sack=false"]);
    for v in [&sack, &reno] {
        assert_eq!(flow(v, "retransmitted_pkts"), 5.0);
    }
    assert_eq!(flow(&sack, "timeouts"), 0.0);
    // Without SACK the sender learns of one hole per round trip (about 41 ms each).
    let gain = flow(&reno, "completion_time_s") - flow(&sack, "completion_time_s");
    assert!(gain > 0.1, "SACK saved {gain} s");
}

#[test]
fn the_receiver_acknowledges_every_second_segment_after_sixteen_quick_acks() {
    let v = run(FILE, &[]);
    // The SYN's ACK, 16 quick ACKs, then one per two of the remaining 184 segments.
    assert_eq!(acks(&v), 1 + 16 + 184 / 2);
    let every = run(FILE, &["flows[0].tcp.linux.delayed_ack=false"]);
    assert_eq!(acks(&every), 201);
}

#[test]
fn a_lone_last_segment_is_acknowledged_after_the_delayed_ack_timer() {
    // 17 segments: 16 quick ACKs, then the 17th waits 40 ms for its ACK.
    let short = r#"
[run]
duration = "5s"
[[links]]
endpoints = ["A", "B"]
bandwidth = "10Mbps"
delay = "20ms"
[[flows]]
from = "A"
to = "B"
cc = "vegas"
params = { flavour = "linux" }
app = { kind = "file", packets = 17 }
"#;
    let delayed = run(short, &[]);
    let at_once = run(short, &["flows[0].tcp.linux.delayed_ack=false"]);
    let wait = flow(&delayed, "completion_time_s") - flow(&at_once, "completion_time_s");
    assert!((wait - 0.040).abs() < 0.002, "the last ACK waited {wait} s");
}

#[test]
fn the_linux_flavour_runs_on_linux_stack_unless_told_otherwise() {
    let linux = common::accepted(FILE, &[]);
    assert_eq!(linux.flows[0].tcp.stack, vegaslab_cc::config::Stack::Linux);
    assert_eq!(linux.flows[0].tcp.window_init, 10.0, "Linux's initial window");
    let ns2 = common::accepted(FILE, &["flows[0].tcp.stack=ns2"]);
    assert!(ns2.flows[0].tcp.linux.is_none());
    assert_eq!(ns2.flows[0].tcp.window_init, 2.0, "ns-2's initial window");
    let reno = common::accepted(common::ONE_LINK, &[]);
    assert_eq!(reno.flows[0].tcp.stack, vegaslab_cc::config::Stack::Ns2);
    // The two stacks differ in results.
    assert_ne!(run(FILE, &[])["flows"], run(FILE, &["flows[0].tcp.stack=ns2"])["flows"]);
}

#[test]
fn the_stacks_refuse_each_others_settings_naming_the_field() {
    let m = common::rejected(FILE, &["flows[0].tcp.partial_ack_timer=every"]);
    assert!(m.contains("flows[0].tcp.partial_ack_timer") && m.contains("ns-2's stack"), "{m}");
    let m = common::rejected(common::ONE_LINK, &["flows[0].tcp.linux.sack=false"]);
    assert!(m.contains("flows[0].tcp.linux") && m.contains("stack = \"linux\""), "{m}");
    let m = common::rejected(FILE, &["flows[0].tcp.linux.sak=false"]);
    assert!(m.contains("sak"), "{m}");
    let m = common::rejected(FILE, &["flows[0].tcp.stack=bsd"]);
    assert!(m.contains("flows[0].tcp.stack") && m.contains("ns2, linux"), "{m}");
    // ns-2's Vegas agent does not fit Linux's stack.
    let m = common::rejected(FILE, &["flows[0].params.flavour=ns2", "flows[0].tcp.stack=linux"]);
    assert!(m.contains("flows[0].tcp.stack") && m.contains("flavour"), "{m}");
}

#[test]
fn reno_and_cubic_run_on_linux_stack_when_asked() {
    for cc in ["reno", "newreno", "cubic"] {
        let set = format!("flows[0].cc={cc}");
        let v = run(FILE, &[&set, "flows[0].params={}", "flows[0].tcp.stack=linux", "links[0].loss_forward={packets=[50]}"]);
        assert_eq!((flow(&v, "retransmitted_pkts"), flow(&v, "timeouts")), (1.0, 0.0), "{cc}");
    }
}

#[test]
fn runs_on_linux_stack_are_deterministic() {
    let text = FILE.replace("packets = 200", "packets = 5000");
    let a = run(&text, &["links[0].error_rate=0.01"]);
    let b = run(&text, &["links[0].error_rate=0.01"]);
    assert_eq!(a["flows"], b["flows"]);
    assert!(flow(&a, "retransmitted_pkts") > 10.0);
}

#[test]
fn a_spurious_timeout_after_a_delay_jump_is_undone_not_repaired_by_going_back() {
    // The path's delay jumps from 40 ms to 840 ms round trip at 10 s: the RTO fires before the
    // delayed ACKs arrive. The first of them echoes a timestamp older than the retransmission
    // (and acknowledges data never resent): the timeout was spurious and is undone.
    let jump = r#"
[run]
duration = "15s"
[[links]]
endpoints = ["S", "R"]
bandwidth = "1Gbps"
delay = "1ms"
delay_schedule = [{ at = "10s", delay = "400ms" }]
[[links]]
endpoints = ["R", "D"]
bandwidth = "20Mbps"
delay = "19ms"
queue = { limit = 67 }
[[flows]]
from = "S"
to = "D"
cc = "vegas"
params = { flavour = "linux" }
tcp = { packet_size = 1448 }
"#;
    let undone = run(jump, &[]);
    let kept = run(jump, &["flows[0].tcp.linux.undo=false"]);
    assert_eq!((flow(&undone, "timeouts"), flow(&kept, "timeouts")), (1.0, 1.0));
    let extra = flow(&kept, "retransmitted_pkts") - flow(&undone, "retransmitted_pkts");
    assert!(extra > 20.0, "without undo the sender resent {extra} more segments");
    // Timestamps alone (Eifel) or F-RTO alone find it.
    let eifel = run(jump, &["flows[0].tcp.linux.timestamps=true"]);
    let frto = run(jump, &["flows[0].tcp.linux.timestamps=false"]);
    assert_eq!(flow(&eifel, "retransmitted_pkts"), flow(&undone, "retransmitted_pkts"));
    assert!(flow(&frto, "retransmitted_pkts") < flow(&kept, "retransmitted_pkts") - 20.0);
}

#[test]
fn express_hops_change_nothing_with_linux_receivers_and_their_timers() {
    // Losses (recoveries, probes, compressed SACKs) and delayed ACKs in one run, two flows
    // sharing a bottleneck, one of them on ns-2's stack.
    let dumbbell = r#"
[run]
duration = "8s"
[dumbbell]
pairs = 2
access = { bandwidth = "100Mbps", delay = "1ms" }
bottleneck = { bandwidth = "10Mbps", delay = "20ms", queue = { kind = "droptail", limit = 30 } }
[[flows]]
pairs = "1-1"
cc = "vegas"
params = { flavour = "linux" }
[[flows]]
pairs = "2-2"
cc = "newreno"
tcp = { stack = "linux" }
app = { kind = "file", packets = 3000 }
"#;
    let (with, without) = common::assert_express_hops_change_nothing(dumbbell);
    assert!(with < without, "the Linux receivers' nodes still run ahead ({with} vs {without} events)");
    common::assert_express_hops_change_nothing(&FILE.replace("queue = { limit = 1000 }", "error_rate = 0.02"));
}
