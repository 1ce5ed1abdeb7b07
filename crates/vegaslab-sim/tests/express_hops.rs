//! Express hops (src/express.rs) skip events that cannot change anything: results with and
//! without them must be identical, only the event count differs.

mod common;

fn assert_same(text: &str) {
    let (with, without) = common::assert_express_hops_change_nothing(text);
    assert!(with < without, "express hops should save events ({with} vs {without})");
}

const DUMBBELL: &str = r#"
[run]
duration = "20s"
[dumbbell]
pairs = 6
access = { bandwidth = "10Mbps", delay = "2ms" }
bottleneck = { bandwidth = "3Mbps", delay = "10ms", queue = { limit = 20 } }
[[flows]]
pairs = "1-3"
cc = "newreno"
tcp = { window = 64 }
[[flows]]
pairs = "4-6"
cc = "vegas"
start = "1s"
tcp = { window = 64 }
"#;

#[test]
fn congested_dumbbell_gives_identical_results_with_and_without_express_hops() {
    assert_same(DUMBBELL);
}

#[test]
fn two_way_traffic_gives_identical_results_with_and_without_express_hops() {
    // D1 also sends to S1: its ACK channel carries a sender's data, so fewer hops qualify.
    let text = format!("{DUMBBELL}\n[[flows]]\nname = \"back\"\nfrom = \"D1\"\nto = \"S1\"\ncc = \"reno\"\n");
    assert_same(&text);
}

#[test]
fn delay_schedules_and_monitors_give_identical_results_with_and_without_express_hops() {
    let text = r#"
[run]
duration = "30s"
[[links]]
endpoints = ["S1", "R1"]
bandwidth = "1Mbps"
delay = "10ms"
delay_schedule = [{ at = "10s", delay = "100ms" }, { at = "20s", delay = "5ms" }]
[[links]]
endpoints = ["R1", "R2"]
bandwidth = "500kbps"
delay = "5ms"
queue = { limit = 10 }
[[links]]
endpoints = ["R2", "D1"]
bandwidth = "1Mbps"
delay = "5ms"
[[flows]]
from = "S1"
to = "D1"
cc = "newreno"
tcp = { window = 100 }
[monitor]
cwnd = true
throughput = true
queues = ["R1->R2"]
"#;
    assert_same(text);
}
