//! Link models in whole runs: packet errors, delay traces and the GEO bent pipe.

use std::io::Write;
use vegaslab_sim::{scenario, ErrorKind, Simulator};

fn run_text(text: &str, source: &str, seed: u64) -> serde_json::Value {
    let mut sc = scenario::parse(text, source, &[]).unwrap();
    sc.seed = seed;
    let r = Simulator::build(sc).expect("a valid scenario").run(|_, _| true);
    let mut v: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
    v["meta"] = serde_json::Value::Null;
    v
}

const ONE_LINK: &str = r#"
[run]
duration = "60s"
[[links]]
endpoints = ["A", "B"]
bandwidth = "1Mbps"
delay = "20ms"
error_rate_forward = 0.01
[[flows]]
from = "A"
to = "B"
cc = "newreno"
tcp = { window = 50 }
"#;

#[test]
fn packet_errors_hit_about_the_error_rate_and_count_as_losses() {
    let v = run_text(ONE_LINK, "t.toml", 1);
    let fwd = &v["queues"][0];
    assert_eq!(fwd["queue"], "A->B");
    let (errors, departures) = (fwd["error_pkts"].as_u64().unwrap(), fwd["departed_pkts"].as_u64().unwrap());
    let rate = errors as f64 / departures as f64;
    assert!((0.005..0.02).contains(&rate), "{errors}/{departures}");
    // The reverse direction has no error model and reports no error counter.
    assert!(v["queues"][1].get("error_pkts").is_none());
    let f = &v["flows"][0];
    assert!(f["retransmitted_pkts"].as_u64().unwrap() >= errors / 2);
    // Conservation: what was sent is received, dropped (here: corrupted) or still in flight.
    let sent = f["sent_pkts"].as_u64().unwrap();
    let accounted = f["received_pkts"].as_u64().unwrap() + f["dropped_pkts"].as_u64().unwrap() + f["in_flight_pkts"].as_u64().unwrap();
    assert_eq!(sent, accounted);
}

#[test]
fn packet_errors_are_deterministic_per_seed() {
    assert_eq!(run_text(ONE_LINK, "t.toml", 5), run_text(ONE_LINK, "t.toml", 5));
    assert_ne!(run_text(ONE_LINK, "t.toml", 5)["queues"][0]["error_pkts"], run_text(ONE_LINK, "t.toml", 6)["queues"][0]["error_pkts"]);
}

#[test]
fn a_zero_error_rate_changes_nothing() {
    let with_zero = ONE_LINK.replace("error_rate_forward = 0.01", "error_rate = 0");
    let without = ONE_LINK.replace("error_rate_forward = 0.01\n", "");
    assert_eq!(run_text(&with_zero, "t.toml", 1), run_text(&without, "t.toml", 1));
}

fn write_trace(dir: &std::path::Path, name: &str, body: &str) {
    let mut f = std::fs::File::create(dir.join(name)).unwrap();
    f.write_all(body.as_bytes()).unwrap();
}

fn scratch(tag: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("vegaslab-links-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

const TRACE_LINK: &str = r#"
[run]
duration = "30s"
[[links]]
endpoints = ["A", "B"]
bandwidth = "1Mbps"
delay_trace = "traces/d.csv"
[[flows]]
from = "A"
to = "B"
cc = "vegas"
"#;

#[test]
fn a_delay_trace_equals_the_same_delay_schedule() {
    let dir = scratch("trace");
    std::fs::create_dir_all(dir.join("traces")).unwrap();
    write_trace(&dir.join("traces"), "d.csv", "time,delay\n0,10ms\n10,100ms\n20s,5ms\n");
    let source = dir.join("s.toml");
    std::fs::write(&source, TRACE_LINK).unwrap();
    let sc = scenario::parse(TRACE_LINK, source.to_str().unwrap(), &[]).unwrap();
    assert_eq!(sc.links[0].forward.delay, 10_000_000);
    assert_eq!(sc.links[0].forward.delay_schedule, vec![(0, 10_000_000), (10_000_000_000, 100_000_000), (20_000_000_000, 5_000_000)]);
    let sched = TRACE_LINK.replace(
        "delay_trace = \"traces/d.csv\"",
        "delay = \"10ms\"\ndelay_schedule = [{ at = \"10s\", delay = \"100ms\" }, { at = \"20s\", delay = \"5ms\" }]",
    );
    assert_eq!(run_text(TRACE_LINK, source.to_str().unwrap(), 1)["flows"], run_text(&sched, "t.toml", 1)["flows"]);
}

#[test]
fn delay_trace_errors_name_the_file_and_line() {
    let dir = scratch("bad");
    std::fs::create_dir_all(dir.join("traces")).unwrap();
    let source = dir.join("s.toml");
    std::fs::write(&source, TRACE_LINK).unwrap();
    let src = source.to_str().unwrap();
    write_trace(&dir.join("traces"), "d.csv", "0 10ms\n5 20ms\n3 1ms\n");
    let e = scenario::parse(TRACE_LINK, src, &[]).unwrap_err().to_string();
    let shown = dir.join("traces").join("d.csv").display().to_string();
    assert_eq!(e, format!("{src}: links[0].delay_trace: {shown}:3: times must not decrease (3 s after 5 s)"));
    write_trace(&dir.join("traces"), "d.csv", "0 10ms\n5 -2ms\n");
    let e = scenario::parse(TRACE_LINK, src, &[]).unwrap_err().to_string();
    assert!(e.ends_with(&format!("{shown}:2: the delay must be between 0 and 3600 s")), "{e}");
    std::fs::remove_file(dir.join("traces").join("d.csv")).unwrap();
    let e = scenario::parse(TRACE_LINK, src, &[]).unwrap_err().to_string();
    assert!(e.starts_with(&format!("{src}: links[0].delay_trace: cannot read {shown}")), "{e}");
    let both = TRACE_LINK.replace("delay_trace", "delay_schedule = []\ndelay_trace");
    let e = scenario::parse(&both, src, &[]).unwrap_err().to_string();
    assert!(e.ends_with("give either delay_schedule or delay_trace, not both"), "{e}");
}

#[test]
fn delay_trace_must_be_a_small_regular_file_and_errors_do_not_echo_its_lines() {
    let dir = scratch("files");
    std::fs::create_dir_all(dir.join("traces")).unwrap();
    let source = dir.join("s.toml");
    std::fs::write(&source, TRACE_LINK).unwrap();
    let src = source.to_str().unwrap();
    for device in ["/dev/zero", "/dev/null"] {
        let text = TRACE_LINK.replace("traces/d.csv", device);
        let e = scenario::parse(&text, src, &[]).unwrap_err();
        assert_eq!(e.kind, ErrorKind::File, "{e}");
        assert!(e.to_string().ends_with(&format!("{device} is not a regular file")), "{e}");
    }
    let text = TRACE_LINK.replace("traces/d.csv", "traces");
    assert!(scenario::parse(&text, src, &[]).unwrap_err().to_string().ends_with("is not a regular file"));
    let big = "0 10ms\n".repeat((64 << 20) / 7 + 1);
    write_trace(&dir.join("traces"), "d.csv", &big);
    let e = scenario::parse(TRACE_LINK, src, &[]).unwrap_err().to_string();
    assert!(e.contains("a delay trace may have at most 64 MiB"), "{e}");
    write_trace(&dir.join("traces"), "d.csv", "0 10ms\n1 SECRET-TOKEN-xyz and more words\n");
    let e = scenario::parse(TRACE_LINK, src, &[]).unwrap_err().to_string();
    assert!(!e.contains("SECRET") && !e.contains("more words"), "{e}");
    assert!(e.ends_with(":2: expected two fields \"time, delay\", got 5"), "{e}");
    write_trace(&dir.join("traces"), "d.csv", "0 10ms\n1 SECRET-TOKEN\n");
    let e = scenario::parse(TRACE_LINK, src, &[]).unwrap_err().to_string();
    assert!(e.ends_with(":2: the delay field is not a time like \"10ms\" or seconds"), "{e}");
    assert!(!e.contains("SECRET"), "{e}");
}

#[test]
fn a_584_year_delay_in_a_trace_is_rejected_not_wrapped_to_zero() {
    let dir = scratch("huge");
    std::fs::create_dir_all(dir.join("traces")).unwrap();
    let source = dir.join("s.toml");
    std::fs::write(&source, TRACE_LINK).unwrap();
    write_trace(&dir.join("traces"), "d.csv", "0 10ms\n1 18446744073.7s\n");
    let e = scenario::parse(TRACE_LINK, source.to_str().unwrap(), &[]).unwrap_err().to_string();
    assert!(e.ends_with(":2: the delay must be between 0 and 3600 s"), "{e}");
}

const GEO: &str = r#"
[run]
duration = "100s"
[geo]
error_rate = 0.005
[[flows]]
from = "NY"
to = "SF"
cc = "vegas"
tcp = { window = 200 }
"#;

#[test]
fn geo_builder_makes_the_vegas_a_bent_pipe() {
    let sc = scenario::parse(GEO, "geo.toml", &[]).unwrap();
    assert_eq!(sc.nodes, vec!["NY", "SF"]);
    let l = &sc.links[0];
    assert_eq!((l.forward.bandwidth_bps, l.reverse.bandwidth_bps), (1.5e6, 1.5e6));
    assert_eq!(l.forward.queue, scenario::QueueSpec::DropTail(vegaslab_sim::queue::DropTailSpec { limit: 50 }));
    // NY (40.9 N 73.9 W) and SF (37.8 N 122.4 W) to a GEO satellite at 95 W: about 37,940 km
    // and 37,960 km of slant range, so ~253 ms one way (RTT ~506 ms + transmission).
    let d = l.forward.delay as f64 * 1e-9;
    assert!((d - 0.2532).abs() < 0.001, "{d}");
    assert!(l.forward.delay_schedule.is_empty());
    // Errors on the receiving terminal's side only (ns-2's sat-repeater.tcl), data direction.
    assert_eq!((l.forward.error_rate, l.reverse.error_rate), (0.005, 0.0));
    let both = scenario::parse(&GEO.replace("error_rate = 0.005", "error_rate = 0.005\nerror_at = \"both\""), "geo.toml", &[]).unwrap();
    assert_eq!((both.links[0].forward.error_rate, both.links[0].reverse.error_rate), (0.005, 0.005));
    let v = run_text(GEO, "geo.toml", 1);
    assert!(v["queues"][0]["error_pkts"].as_u64().unwrap() > 0);
}

#[test]
fn geo_parameters_are_validated() {
    let e = scenario::parse(&GEO.replace("error_rate = 0.005", "error_at = \"LA\""), "geo.toml", &[]).unwrap_err().to_string();
    assert_eq!(e, "geo.toml: geo.error_at: must be \"both\", \"NY\" or \"SF\", got \"LA\"");
    let e = scenario::parse(&GEO.replace("error_rate = 0.005", "error_rate = 1.0"), "geo.toml", &[]).unwrap_err().to_string();
    assert_eq!(e, "geo.toml: geo.error_rate: must be >= 0 and < 1, got 1");
}

// ------------------------------------------------- what a link reports at the end of a run

/// A 2 Mbit/s CBR source into a 1 Mbit/s bottleneck with a 100-packet queue: the queue is
/// full from about 0.8 s on, so a packet offered late in the run waits about 0.8 s and many
/// accepted packets are still waiting when the run ends.
const OVERLOADED: &str = include_str!("../../../tests/data/overloaded-link.toml");

fn u(v: &serde_json::Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not an unsigned integer: {v}"))
}

#[test]
fn a_congested_link_reports_no_more_departures_or_bytes_than_its_bandwidth_can_carry() {
    let v = run_text(OVERLOADED, "t.toml", 1);
    let q = v["queues"].as_array().unwrap().iter().find(|q| q["queue"] == "R->D").unwrap();
    let l = v["links"].as_array().unwrap().iter().find(|l| l["link"] == "R->D").unwrap();
    let (duration_ns, packet_ns) = (10_000_000_000u64, 8_000_000u64); // 1000 bytes at 1 Mbit/s
    let departures = u(&q["departed_pkts"]);
    // Transmissions start back to back: at most one per packet time, the last one at most at
    // the end of the run.
    assert!(departures * packet_ns <= duration_ns + packet_ns, "{departures} departures in 10 s");
    assert!(u(&l["sent_bytes"]) * 8 * 1000 <= duration_ns + packet_ns, "{} bytes in 10 s", l["sent_bytes"]);
    // The link is busy from the first packet on: it sends all it can.
    assert!(departures * packet_ns > duration_ns - 10 * packet_ns, "{departures}");
    // Every arrival is dropped, transmitted or still waiting at the end.
    let backlog = u(&q["backlog_pkts"]);
    assert!(backlog > 90 && backlog <= u(&q["max_len_pkts"]), "{q}");
    assert_eq!(u(&q["arrived_pkts"]), departures + u(&q["dropped_pkts"]) + backlog, "{q}");
    assert_eq!(v["udp"][0]["dropped_pkts"], q["dropped_pkts"]);
}
