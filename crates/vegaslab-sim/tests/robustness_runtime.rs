//! The run loop never hangs, crashes or goes quadratic on extreme but accepted scenarios:
//! zero-length transmissions, very long paths, very many hosts, too many per-flow
//! connections.

mod common;

use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};
use vegaslab_sim::scenario::parse;
use vegaslab_sim::{RunResults, Simulator};

/// Run `text` on a thread with a `stack`-byte stack; the results, or a failure if the run
/// takes longer than `limit` (the thread is left behind: the test process ends anyway).
fn run_within(text: String, stack: usize, limit: Duration, progress: impl FnMut(f64, f64) -> bool + Send + 'static) -> RunResults {
    let (tx, rx) = mpsc::channel();
    thread::Builder::new()
        .stack_size(stack)
        .spawn(move || {
            let sc = parse(&text, "t.toml", &[]).expect("valid scenario");
            let _ = tx.send(Simulator::build(sc).expect("a valid scenario").run(progress));
        })
        .unwrap();
    rx.recv_timeout(limit).unwrap_or_else(|e| panic!("the run did not return within {limit:?}: {e}"))
}

#[test]
fn zero_length_transmissions_cannot_stall_the_clock_or_the_interrupt() {
    // At 10 Tbit/s a 41-byte packet takes 0.03 ns: it used to round to 0, and with a 0 ms delay
    // each ACK clocked out data whose ACK came back at the same instant, inside one event
    // forever; the progress callback (where Python checks Ctrl-C) was never reached.
    let text = r#"
[run]
duration = "10s"
[[links]]
endpoints = ["A", "B"]
bandwidth = "10Tbps"
delay = "0ms"
[[flows]]
from = "A"
to = "B"
cc = "reno"
tcp = { packet_size = 1, window = 1000 }
"#;
    let started = Instant::now();
    let r = run_within(text.to_string(), 8 << 20, Duration::from_secs(20), |_, _| false);
    assert!(started.elapsed() < Duration::from_secs(20));
    // Stopped by the first progress call: simulated time had moved on.
    assert!(r.meta.events > 0);
    assert!(r.flows[0].received_pkts > 0, "{:?}", r.flows[0]);
}

#[test]
fn progress_is_reported_while_the_clock_advances_in_nanoseconds() {
    // The same link run to the end of a short duration: every packet takes at least 1 ns, so
    // time advances and the run ends.
    let text = r#"
[run]
duration = "20us"
[[links]]
endpoints = ["A", "B"]
bandwidth = "10Tbps"
delay = "0ms"
[[flows]]
from = "A"
to = "B"
cc = "reno"
tcp = { packet_size = 1, window = 20 }
"#;
    let r = run_within(text.to_string(), 8 << 20, Duration::from_secs(20), |_, _| true);
    // Window 20, one packet per nanosecond at most: bounded by the duration.
    assert!(r.flows[0].received_pkts > 100 && r.flows[0].received_pkts <= 20_000, "{:?}", r.flows[0]);
}

/// Nodes N0..N{links} in a line, one flow end to end.
fn chain(links: usize) -> String {
    let mut t = String::from("[run]\nduration = \"50ms\"\n");
    for i in 0..links {
        t += &format!("[[links]]\nendpoints = [\"N{i}\", \"N{}\"]\nbandwidth = \"10Gbps\"\ndelay = \"0ms\"\n", i + 1);
    }
    t += &format!("[[flows]]\nfrom = \"N0\"\nto = \"N{links}\"\ncc = \"reno\"\ntcp = {{ window = 4 }}\n");
    t
}

#[test]
fn a_20000_link_chain_runs_in_a_small_stack_with_express_hops() {
    // Every hop but the last ACK hop is an express hop: they used to nest one call per hop
    // and overflowed the stack. A 1 MiB stack is plenty for a loop.
    let r = run_within(chain(20_000), 1 << 20, Duration::from_secs(60), |_, _| true);
    assert!(r.flows[0].received_pkts > 0, "{:?}", r.flows[0]);
}

#[test]
fn express_hops_along_a_long_chain_change_nothing() {
    let (with, without) = common::assert_express_hops_change_nothing(&chain(500));
    assert!(with < without, "{with} vs {without}");
}

fn dumbbell(pairs: usize) -> String {
    format!(
        r#"
[run]
duration = "1ms"
[dumbbell]
pairs = {pairs}
access = {{ bandwidth = "100Mbps", delay = "2ms" }}
bottleneck = {{ bandwidth = "1Gbps", delay = "10ms", queue = {{ limit = 1000 }} }}
[[flows]]
pairs = "1-{pairs}"
cc = "reno"
"#
    )
}

#[test]
fn a_10000_pair_dumbbell_sets_up_in_near_linear_time() {
    // A dense routing table (nodes x destinations: 20,002 x 20,000 entries, 1.6 GB) with a
    // breadth-first search per destination takes 24 s even in a release build; this code sets
    // up in well under a second in a debug build. 20 s tells the two apart in either build and
    // on a busy host.
    let sc = parse(&dumbbell(10_000), "t.toml", &[]).unwrap();
    let started = Instant::now();
    let sim = Simulator::build(sc);
    let took = started.elapsed();
    if let Err(e) = sim {
        panic!("the dumbbell is refused: {e}");
    }
    assert!(took < Duration::from_secs(20), "set-up took {took:?}");
}

const PER_FLOW: &str = r#"
[run]
duration = "30s"
[[links]]
endpoints = ["S", "D"]
bandwidth = "10Mbps"
delay = "5ms"
[[flows]]
name = "nps"
from = "S"
to = "D"
cc = "reno"
app = { kind = "nps", mean_interarrival = "0.1s", mean_flow_size = "20KB", connection = "per-flow" }
"#;

#[test]
fn more_per_flow_connections_than_fit_stop_the_run_with_a_reason_not_a_panic() {
    let sc = parse(PER_FLOW, "t.toml", &[]).unwrap();
    let full = Simulator::build(sc.clone()).expect("a valid scenario").run(|_, _| true);
    assert!(full.meta.aborted.is_none());
    let opened = full.flows[0].connections.unwrap();
    assert!(opened > 100, "{opened}");
    // Room for the entry and 40 connections.
    let r = Simulator::build(sc).expect("a valid scenario").with_connection_limit(41).run(|_, _| true);
    let why = r.meta.aborted.as_ref().expect("the run says why it stopped");
    assert_eq!(why.field, "flows.app.connection");
    assert!(why.message.contains("nps") && why.message.contains("41 TCP connections"), "{}", why.message);
    assert_eq!(r.flows[0].connections, Some(40));
    assert!(r.meta.events < full.meta.events);
    // The JSON of complete runs has no `aborted` key; a stopped run's has.
    assert!(!full.to_json().contains("aborted"));
    assert!(r.to_json().contains("\"aborted\""));
}
