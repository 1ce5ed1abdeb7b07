//! File transfers given as a packet count (`app = { kind = "file", packets =
//! N }`, ns-2's `$ftp produce N`) and the sender-side count of acknowledged packets
//! (`acked_pkts`, ns-2's `ack_ + 1` less the SYN).

mod common;

use serde_json::Value;
use vegaslab_sim::scenario::normalize::{normalize, to_value};
use vegaslab_sim::scenario::{parse, AppSpec};

/// S1 - R1 10 Mbps 1 ms, R1 - D1 1 Mbps 10 ms with a 5-packet DropTail queue (slow start
/// overflows it, so a transfer loses and retransmits packets), 60 s.
const LOSSY: &str = r#"
[run]
duration = "60s"

[[links]]
endpoints = ["S1", "R1"]
bandwidth = "10Mbps"
delay = "1ms"

[[links]]
endpoints = ["R1", "D1"]
bandwidth = "1Mbps"
delay = "10ms"
queue = { kind = "droptail", limit = 5 }

[[flows]]
name = "f"
from = "S1"
to = "D1"
cc = "reno"
tcp = { window = 64 }
"#;

fn with_app(base: &str, app: &str) -> String {
    format!("{base}app = {app}\n")
}

fn error(text: &str) -> String {
    parse(text, "case.toml", &[]).expect_err("should be rejected").to_string()
}

fn run(text: &str, overrides: &[&str]) -> Value {
    let r = vegaslab_sim::run_text(text, "t.toml", None, &common::sets(overrides), |_, _| true).unwrap();
    let mut v: Value = serde_json::from_str(&r.to_json()).unwrap();
    v["meta"] = Value::Null;
    v
}

fn u(v: &Value, key: &str) -> u64 {
    v[key].as_u64().unwrap_or_else(|| panic!("{key} missing in {v}"))
}

// ------------------------------------------------------------------------- parsing

#[test]
fn a_file_given_in_packets_is_a_packet_count_in_the_normalised_scenario() {
    let text = with_app(LOSSY, r#"{ kind = "file", packets = 1000 }"#);
    let sc = parse(&text, "case.toml", &[]).unwrap();
    assert_eq!(sc.flows[0].app, AppSpec::FilePackets { packets: 1000 });
    let doc = to_value(&normalize(&text, "case.toml", None, &[]).unwrap());
    assert_eq!(doc["flows"][0]["app"], serde_json::json!({"kind": "file-packets", "packets": 1000}));
    // The byte form is unchanged.
    let text = with_app(LOSSY, r#"{ kind = "file", size = "1MB" }"#);
    let doc = to_value(&normalize(&text, "case.toml", None, &[]).unwrap());
    assert_eq!(doc["flows"][0]["app"], serde_json::json!({"kind": "file", "bytes": 1_000_000}));
}

#[test]
fn a_file_with_both_size_and_packets_is_rejected() {
    let e = error(&with_app(LOSSY, r#"{ kind = "file", size = "1MB", packets = 1000 }"#));
    assert_eq!(e, "case.toml: flows[0].app.packets: give either size (bytes) or packets (a packet count), not both");
}

#[test]
fn a_file_with_neither_size_nor_packets_names_both() {
    let e = error(&with_app(LOSSY, r#"{ kind = "file" }"#));
    assert_eq!(e, "case.toml: flows[0].app.size: is required for a file: size = \"5MB\" (bytes) or packets = 1000 (a packet count)");
}

#[test]
fn a_file_of_zero_packets_is_rejected() {
    let e = error(&with_app(LOSSY, r#"{ kind = "file", packets = 0 }"#));
    assert!(e.starts_with("case.toml: flows[0].app.packets: must be"), "{e}");
    assert!(e.contains("1") && e.contains("got 0"), "{e}");
}

#[test]
fn a_fractional_or_textual_packet_count_is_rejected() {
    for bad in ["1.5", "1e3", "\"1000\"", "\"1000 packets\""] {
        let e = error(&with_app(LOSSY, &format!("{{ kind = \"file\", packets = {bad} }}")));
        assert!(e.starts_with("case.toml: flows[0].app.packets: must be a whole number"), "{bad}: {e}");
    }
}

#[test]
fn a_packet_count_beyond_the_sequence_space_is_rejected() {
    let e = error(&with_app(LOSSY, r#"{ kind = "file", packets = 1000000000001 }"#));
    assert!(e.starts_with("case.toml: flows[0].app.packets: must be"), "{e}");
    assert!(e.contains("1000000000000") && e.contains("got 1000000000001"), "{e}");
    // The largest count is accepted.
    parse(&with_app(LOSSY, r#"{ kind = "file", packets = 1000000000000 }"#), "case.toml", &[]).unwrap();
}

#[test]
fn the_flat_file_form_points_to_the_packet_form() {
    let e = error(&with_app(LOSSY, r#""file""#));
    assert_eq!(
        e,
        "case.toml: flows[0].file_size: is required with app = \"file\", e.g. \"5MB\" (for a packet count write app = { kind = \"file\", packets = 1000 })"
    );
}

// ------------------------------------------------------------------------- running

/// Reno (which numbers a SYN 0) and Vegas (no SYN), through a queue that drops.
#[test]
fn a_packet_count_file_sends_exactly_that_many_distinct_data_packets_and_completes() {
    for (cc, syn) in [("reno", 1), ("newreno", 1), ("vegas", 0)] {
        for (n, packet_size) in [(1u64, 1000), (317, 1000), (317, 536), (2000, 1460)] {
            let text = with_app(LOSSY, &format!("{{ kind = \"file\", packets = {n} }}"));
            let r = run(&text, &[&format!("flows[0].cc={cc}"), &format!("flows[0].tcp.packet_size={packet_size}")]);
            let f = &r["flows"][0];
            let sent = u(f, "sent_pkts");
            let retx = u(f, "retransmitted_pkts");
            // Every packet sent is new data, a retransmission or the SYN.
            assert_eq!(sent - retx - syn, n, "{cc} n={n} size={packet_size}: {f}");
            assert_eq!(u(f, "delivered_pkts"), n, "{cc} n={n}");
            assert_eq!(u(f, "acked_pkts"), n, "{cc} n={n}");
            assert_eq!(u(f, "delivered_bytes"), n * packet_size, "{cc} n={n}");
            assert!(f["completion_time_s"].as_f64().is_some_and(|t| t > 0.0), "{cc} n={n}: {f}");
            if n == 2000 && cc != "vegas" {
                assert!(retx > 0, "{cc}: the case should lose packets: {f}");
            }
        }
    }
}

#[test]
fn packets_and_the_same_size_in_bytes_are_the_same_run() {
    for cc in ["reno", "vegas"] {
        let set = format!("flows[0].cc={cc}");
        let packets = run(&with_app(LOSSY, r#"{ kind = "file", packets = 1500 }"#), &[&set]);
        let bytes = run(&with_app(LOSSY, r#"{ kind = "file", size = "1.5MB" }"#), &[&set]);
        assert_eq!(packets, bytes, "{cc}");
        // A byte size with a partial last packet rounds up, as ns-2's sendmsg does.
        let partial = run(&with_app(LOSSY, r#"{ kind = "file", size = "1499001B" }"#), &[&set]);
        assert_eq!(packets, partial, "{cc}");
    }
}

// ------------------------------------------------------------------------- acked_pkts

/// One Reno flow over `common::ONE_LINK` (1 Mbps, 10 ms, defaults: 1000-byte payload + 40-byte
/// header, 40-byte SYN and ACKs, initial window 2 after the SYN), timed by hand:
/// the SYN takes 0.32 ms to send and reaches D1 at 10.32 ms, its ACK S1 at 20.64 ms; packets
/// 1 and 2 (8.32 ms each) then reach D1 at 38.96 and 47.28 ms, and their ACKs S1 at 49.28
/// and 57.60 ms.
#[test]
fn acked_pkts_counts_the_acks_that_reached_the_sender_by_the_end() {
    for (end, received, acked) in [("20ms", 0, 0), ("21ms", 0, 0), ("45ms", 1, 0), ("50ms", 2, 1), ("58ms", 2, 2)] {
        let r = run(common::ONE_LINK, &[&format!("run.duration={end}")]);
        let f = &r["flows"][0];
        assert_eq!(u(f, "delivered_pkts"), received, "{end}: {f}");
        assert_eq!(u(f, "acked_pkts"), acked, "{end}: {f}");
        assert!(u(f, "acked_pkts") <= u(f, "sent_pkts"), "{end}");
    }
}

#[test]
fn acked_pkts_never_exceeds_delivered_or_sent() {
    for cc in ["reno", "newreno", "vegas", "vegas-a", "cubic"] {
        let r = run(LOSSY, &[&format!("flows[0].cc={cc}")]);
        let f = &r["flows"][0];
        let (acked, delivered, sent) = (u(f, "acked_pkts"), u(f, "delivered_pkts"), u(f, "sent_pkts"));
        assert!(acked <= delivered && delivered <= sent, "{cc}: {f}");
        // A long-lived flow has ACKs on their way at the end: at most a window behind.
        assert!(acked + 64 >= delivered && acked > 1000, "{cc}: {f}");
    }
}

/// A per-flow NPS entry opens one connection per arrival; its row sums the connections.
/// Arrivals stop at 5 s and the run goes on to 60 s, so every connection finishes: each
/// acknowledged all its packets, so the sum equals what the sinks delivered.
#[test]
fn acked_pkts_of_a_per_flow_entry_sums_its_connections() {
    let text = format!(
        "{LOSSY}stop = \"5s\"\napp = {{ kind = \"nps\", mean_interarrival = \"0.5s\", mean_flow_size = \"20KB\", connection = \"per-flow\" }}\n"
    );
    let r = run(&text, &["run.seed=3", "links[1].queue.limit=50"]);
    let f = &r["flows"][0];
    assert!(u(f, "connections") >= 3, "{f}");
    assert_eq!(u(f, "open_connections"), 0, "{f}");
    assert!(u(f, "delivered_pkts") > 20, "{f}");
    assert_eq!(u(f, "acked_pkts"), u(f, "delivered_pkts"), "{f}");
}
