//! RED in whole runs: drops happen early (before the hard limit), are counted as early or
//! forced, are deterministic for a seed, and DropTail runs are untouched.

use vegaslab_sim::{scenario, Simulator};

fn run(text: &str, seed: u64) -> serde_json::Value {
    let mut sc = scenario::parse(text, "t.toml", &[]).unwrap();
    sc.seed = seed;
    let r = Simulator::build(sc).expect("a valid scenario").run(|_, _| true);
    let mut v: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
    v["meta"] = serde_json::Value::Null;
    v
}

fn net1(queue: &str) -> String {
    // The grids paper's network 1: 10 Mbps / 4 ms access, 1.55 Mbps / 4 ms bottleneck, buffer 25.
    format!(
        r#"
[run]
duration = "30s"
[dumbbell]
pairs = 2
access = {{ bandwidth = "10Mbps", delay = "4ms" }}
bottleneck = {{ bandwidth = "1.55Mbps", delay = "4ms", queue = {queue} }}
[[flows]]
from = "S1"
to = "D1"
cc = "reno"
tcp = {{ window = 100, packet_size = 1500 }}
[[flows]]
from = "S2"
to = "D2"
cc = "vegas"
tcp = {{ window = 100, packet_size = 1500 }}
"#
    )
}

fn bottleneck(v: &serde_json::Value) -> &serde_json::Value {
    v["queues"].as_array().unwrap().iter().find(|q| q["queue"] == "R1->R2").unwrap()
}

#[test]
fn red_drops_early_and_counts_early_and_forced_drops() {
    let v = run(&net1(r#"{ kind = "red", limit = 25, min = 4, max = 8, max_p = 0.1, weight = 0.002 }"#), 1);
    let q = bottleneck(&v);
    assert_eq!(q["kind"], "red");
    let (drops, early, forced) = (q["dropped_pkts"].as_u64().unwrap(), q["early_dropped_pkts"].as_u64().unwrap(), q["forced_dropped_pkts"].as_u64().unwrap());
    assert!(drops > 0);
    assert_eq!(drops, early + forced);
    assert!(early > 0, "RED should drop some packets at random: {q}");
    // RED keeps the queue far below the 25-packet limit most of the time.
    assert!(q["mean_len_pkts"].as_f64().unwrap() < 12.0, "{q}");
    // DropTail queues report no RED counters.
    assert!(v["queues"][0].get("early_dropped_pkts").is_none());
}

#[test]
fn red_linear_drops_early_too() {
    let v = run(&net1(r#"{ kind = "red-linear", limit = 25, min = 4, max = 8 }"#), 1);
    let q = bottleneck(&v);
    assert_eq!(q["kind"], "red-linear");
    assert!(q["early_dropped_pkts"].as_u64().unwrap() > 0, "{q}");
}

#[test]
fn red_runs_are_identical_for_a_seed_and_differ_between_seeds() {
    let text = net1(r#"{ kind = "red", limit = 25, min = 4, max = 8, max_p = 0.1, weight = 0.02 }"#);
    assert_eq!(run(&text, 7), run(&text, 7));
    assert_ne!(bottleneck(&run(&text, 7)), bottleneck(&run(&text, 8)));
}

#[test]
fn gentle_red_and_auto_weight_run() {
    let v = run(&net1(r#"{ kind = "red", limit = 25, min = 4, max = 8, max_p = 0.1, weight = "auto", gentle = true }"#), 3);
    assert!(bottleneck(&v)["dropped_pkts"].as_u64().unwrap() > 0);
}

#[test]
fn a_red_queue_with_high_thresholds_behaves_like_droptail_with_one_more_slot() {
    // Thresholds never reached: only hard-limit drops, and ns-2's RED limit L holds L waiting
    // packets, as a DropTail limit of L + 1.
    let v_red = run(&net1(r#"{ kind = "red", limit = 24, min = 22, max = 23, weight = 0.000001 }"#), 1);
    let v_dt = run(&net1(r#"{ kind = "droptail", limit = 25 }"#), 1);
    assert_eq!(v_red["flows"], v_dt["flows"]);
    assert_eq!(bottleneck(&v_red)["early_dropped_pkts"], 0);
    assert_eq!(bottleneck(&v_red)["dropped_pkts"], bottleneck(&v_dt)["dropped_pkts"]);
}
