//! Express hops (src/express.rs) with the traffic sources: UDP datagrams merge into channels
//! (their source is a local feeder of its first channel) and applications with their own
//! clocks inject data between deliveries. Results with and without express hops must be
//! identical; only the event count may differ.

mod common;

fn assert_same(text: &str) -> (u64, u64) {
    common::assert_express_hops_change_nothing(text)
}

const DUMBBELL: &str = r#"
[run]
duration = "30s"
[dumbbell]
pairs = 6
access = { bandwidth = "10Mbps", delay = "2ms" }
bottleneck = { bandwidth = "3Mbps", delay = "10ms", queue = { limit = 30 } }
[[flows]]
pairs = "1-2"
cc = "newreno"
tcp = { window = 64 }
[[flows]]
name = "user"
pairs = "3-3"
cc = "vegas"
tcp = { window = 64 }
app = { kind = "onoff", mean_on = "3s", mean_off = "2s" }
[[flows]]
name = "nps"
pairs = "4-4"
cc = "reno"
tcp = { window = 64 }
app = { kind = "nps", mean_interarrival = "1s", mean_flow_size = "200KB" }
[[flows]]
name = "paced"
pairs = "5-5"
cc = "vegas"
tcp = { window = 64 }
app = { kind = "pareto-paced", mean_interarrival = "1s", mean_flow_size = "200KB", rate = "2Mbps", mean_on = "30ms", mean_off = "70ms" }
"#;

#[test]
fn onoff_nps_and_paced_applications_give_identical_results_with_and_without_express_hops() {
    let (ea, eb) = assert_same(DUMBBELL);
    assert!(ea < eb, "the egress hops should still be expressed ({ea} vs {eb})");
}

#[test]
fn udp_sources_sharing_the_forward_and_backward_paths_give_identical_results() {
    // One source shares the bottleneck with the TCP data, one loads the ACK path (backward
    // traffic, as RoVegas's VBR sources), one is a CBR source on a pair of its own.
    let text = format!(
        r#"{DUMBBELL}
[[udp]]
name = "fwd"
from = "S6"
to = "D6"
packet_size = 1000
model = "pareto-onoff"
rate = "2Mbps"
mean_on = "20ms"
mean_off = "40ms"
[[udp]]
name = "back"
from = "D6"
to = "S6"
start = "5s"
packet_size = 1000
model = "exp-onoff"
rate = "2Mbps"
mean_on = "10ms"
load = 0.6
[[udp]]
name = "cbr"
from = "S6"
to = "D6"
packet_size = 500
model = "cbr"
rate = "300kbps"
random = true
"#
    );
    assert_same(&text);
}

#[test]
fn a_udp_source_injecting_mid_path_keeps_express_hops_exact() {
    // The source at R2 feeds the egress channel R2->D1, which the bottleneck alone would feed
    // otherwise: unless the source counts as a feeder, the bottleneck would hand packets
    // straight into R2->D1 ahead of the datagrams injected there at earlier times.
    let text = format!(
        "{DUMBBELL}\n[[udp]]\nname = \"mid\"\nfrom = \"R2\"\nto = \"D1\"\npacket_size = 1000\nmodel = \"cbr\"\nrate = \"9Mbps\"\n\n[[udp]]\nname = \"mid-back\"\nfrom = \"R1\"\nto = \"S3\"\npacket_size = 1000\nmodel = \"cbr\"\nrate = \"5Mbps\"\n"
    );
    let (a, _) = common::run_express(&text, true);
    assert!(a["udp"][0]["dropped_pkts"].as_u64().unwrap() > 0 || a["flows"][0]["dropped_pkts"].as_u64().unwrap() > 0);
    assert_same(&text);
}

#[test]
fn monitored_series_with_the_active_flag_are_identical_with_and_without_express_hops() {
    let text = format!(
        "{DUMBBELL}\n[monitor]\ncwnd = true\nthroughput = true\nqueues = [\"R1->R2\"]\n\n[[udp]]\nfrom = \"D6\"\nto = \"S6\"\npacket_size = 1000\nmodel = \"exp-onoff\"\nrate = \"2Mbps\"\nmean_on = \"10ms\"\nmean_rate = \"800kbps\"\n"
    );
    let (a, _) = common::run_express(&text, true);
    let active = a["series"]["flows"]["active"].as_array().unwrap();
    assert!(active.iter().any(|x| x == 0) && active.iter().any(|x| x == 1));
    assert_same(&text);
}
