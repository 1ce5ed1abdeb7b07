//! `connection = "per-flow"` for NPS and Pareto-paced applications: each arriving flow opens
//! its own TCP connection (fresh sender from slow start, fresh sink), in parallel with the
//! entry's other open connections; results keep one row per flow entry.

mod common;

use serde_json::Value;
use vegaslab_sim::apps::App;
use vegaslab_sim::rng::stream;
use vegaslab_sim::scenario::parse;

const SCENARIO: &str = r#"
[run]
duration = "30s"
seed = 7
[dumbbell]
pairs = 4
access = { bandwidth = "10Mbps", delay = "2ms" }
bottleneck = { bandwidth = "3Mbps", delay = "10ms", queue = { limit = 30 } }
[[flows]]
name = "ftp"
pairs = "1-1"
cc = "newreno"
tcp = { window = 64 }
[[flows]]
name = "nps"
pairs = "2-2"
cc = "reno"
tcp = { window = 64 }
app = { kind = "nps", mean_interarrival = "1s", mean_flow_size = "200KB", connection = "per-flow" }
[[flows]]
name = "vnps"
pairs = "3-3"
cc = "vegas"
tcp = { window = 64 }
app = { kind = "nps", mean_interarrival = "0.5s", mean_flow_size = "400KB", connection = "per-flow" }
[[flows]]
name = "paced"
pairs = "4-4"
cc = "vegas"
tcp = { window = 64 }
app = { kind = "pareto-paced", mean_interarrival = "1s", mean_flow_size = "200KB", rate = "2Mbps", mean_on = "30ms", mean_off = "70ms", connection = "per-flow" }
[monitor]
cwnd = true
throughput = true
"#;

fn run(text: &str) -> Value {
    let r = vegaslab_sim::run_text(text, "t.toml", None, &[], |_, _| true).unwrap();
    let mut v: Value = serde_json::from_str(&r.to_json()).unwrap();
    v["meta"] = Value::Null;
    v
}

fn row<'a>(r: &'a Value, name: &str) -> &'a Value {
    r["flows"].as_array().unwrap().iter().find(|f| f["flow"] == name).unwrap_or_else(|| panic!("no row {name}"))
}

fn u(v: &Value, key: &str) -> u64 {
    v[key].as_u64().unwrap_or_else(|| panic!("{key} missing in {v}"))
}

/// Flow arrivals the application of flow entry `index` schedules before `duration`.
fn scheduled_arrivals(text: &str, index: usize) -> u64 {
    let sc = parse(text, "t.toml", &[]).unwrap();
    let f = &sc.flows[index];
    let mut app = App::new(&f.app, f.tcp.packet_size, stream(sc.seed, 4 << 32 | index as u64)).unwrap();
    let mut next = Vec::new();
    app.start(f.start, &mut |t, p| next.push((t, p)));
    loop {
        next.sort();
        let (t, p) = next.remove(0);
        if t > sc.duration {
            return app.arrivals;
        }
        // The application's clock does not depend on the network: replay it whole (paced
        // releases draw burst lengths from the same stream).
        app.on_event(t, p, &mut |t, p| next.push((t, p)));
    }
}

#[test]
fn each_arrival_opens_a_connection_that_starts_in_slow_start() {
    let r = run(SCENARIO);
    for (i, name) in [(1, "nps2"), (2, "vnps3"), (3, "paced4")] {
        let f = row(&r, name);
        let n = u(f, "connections");
        assert_eq!(n, scheduled_arrivals(SCENARIO, i), "{name}");
        assert!(n >= 10, "{name}: {n}");
        // Every connection begins in slow start (cwnd 1 < ssthresh): one entry each at least.
        assert!(u(f, "slow_start_entries") >= n, "{name}: {f}");
    }
    // FTP rows do not carry connection columns.
    assert!(row(&r, "ftp1").get("connections").is_none());
}

#[test]
fn connections_run_in_parallel_and_finished_ones_are_released() {
    let r = run(SCENARIO);
    let f = row(&r, "vnps3");
    let (n, open) = (u(f, "connections"), u(f, "open_connections"));
    assert!(open >= 2, "overloaded: flows pile up in parallel ({open} open)");
    assert!(open < n, "some connections finished and were released ({open} of {n})");
    // Summed cwnd of the open connections exceeds what one connection in slow start holds at
    // some sample (several connections in parallel).
    let s = &r["series"]["flows"];
    let mut max_cwnd = 0.0f64;
    for k in 0..s["time_s"].as_array().unwrap().len() {
        if s["flow"][k] == "vnps3" {
            max_cwnd = max_cwnd.max(s["cwnd_pkts"][k].as_f64().unwrap_or(0.0));
        }
    }
    assert!(max_cwnd > 2.0, "{max_cwnd}");
    let nps = row(&r, "nps2");
    assert!(u(nps, "open_connections") < u(nps, "connections"));
}

#[test]
fn conservation_per_entry() {
    let r = run(SCENARIO);
    for f in r["flows"].as_array().unwrap() {
        assert_eq!(
            u(f, "sent_pkts"),
            u(f, "received_pkts") + u(f, "dropped_pkts") + u(f, "in_flight_pkts"),
            "{}",
            f["flow"]
        );
    }
}

#[test]
fn express_hops_change_nothing_with_per_flow_connections() {
    common::assert_express_hops_change_nothing(SCENARIO);
}

#[test]
fn same_seed_same_results() {
    assert_eq!(run(SCENARIO), run(SCENARIO));
}

#[test]
fn per_flow_differs_from_shared_and_shared_is_the_default() {
    let shared = SCENARIO.replace(", connection = \"per-flow\"", "");
    let explicit = SCENARIO.replace("connection = \"per-flow\"", "connection = \"shared\"");
    assert_eq!(run(&shared), run(&explicit));
    let a = run(&shared);
    assert!(row(&a, "nps2").get("connections").is_none());
    assert_ne!(a, run(SCENARIO));
}

#[test]
fn connection_is_validated() {
    let bad = SCENARIO.replacen("connection = \"per-flow\"", "connection = \"each\"", 1);
    let e = parse(&bad, "t.toml", &[]).unwrap_err().to_string();
    assert!(e.contains("connection") && e.contains("per-flow"), "{e}");
    let onoff = SCENARIO.replacen(
        "app = { kind = \"nps\", mean_interarrival = \"1s\", mean_flow_size = \"200KB\", connection = \"per-flow\" }",
        "app = { kind = \"onoff\", mean_on = \"1s\", mean_off = \"1s\", connection = \"per-flow\" }",
        1,
    );
    let e = parse(&onoff, "t.toml", &[]).unwrap_err().to_string();
    assert!(e.contains("connection"), "{e}");
}

#[test]
fn too_many_connections_are_refused_before_running() {
    let long = SCENARIO.replace("duration = \"30s\"", "duration = \"2000000s\"");
    // Sampled rarely, so that the recording-size check lets it through to the connection count.
    let sparse = ["run.sample_interval=\"1000s\"".to_string()];
    let e = vegaslab_sim::run_text(&long, "t.toml", None, &sparse, |_, _| true).unwrap_err().to_string();
    assert!(e.contains("connection") && e.contains("per-flow"), "{e}");
}
