//! Links going down and up (`links[].down`): routes recomputed at each change, ns-2's packet
//! fates at the failure (see src/sim/failures.rs), express hops changing nothing.

mod common;

use serde_json::Value;

/// S1 - R1 = R2 - D1 with a backup R1 - R3 - R2 (one hop longer): Reno, 8 s.
fn diamond(down: &str, backup: bool, extra: &str) -> String {
    let backup_links = if backup {
        r#"
[[links]]
endpoints = ["R1", "R3"]
bandwidth = "1Mbps"
delay = "10ms"
[[links]]
endpoints = ["R3", "R2"]
bandwidth = "1Mbps"
delay = "10ms"
"#
    } else {
        ""
    };
    format!(
        r#"
[run]
duration = "8s"
[[links]]
endpoints = ["S1", "R1"]
bandwidth = "10Mbps"
delay = "1ms"
[[links]]
endpoints = ["R1", "R2"]
bandwidth = "1Mbps"
delay = "10ms"
{down}
[[links]]
endpoints = ["R2", "D1"]
bandwidth = "10Mbps"
delay = "1ms"
{backup_links}
[[flows]]
from = "S1"
to = "D1"
cc = "reno"
tcp = {{ window = 100, packet_size = 1000 }}
{extra}
"#
    )
}

fn run(text: &str) -> Value {
    common::run_express(text, true).0
}

fn row<'a>(v: &'a Value, table: &str, key: &str, name: &str) -> &'a Value {
    v[table].as_array().unwrap().iter().find(|r| r[key] == name).unwrap_or_else(|| panic!("no {table} {name}"))
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

#[test]
fn without_a_down_schedule_the_backup_path_is_never_used() {
    let v = run(&diamond("", true, ""));
    assert_eq!(u(&row(&v, "links", "link", "R1->R3")["sent_bytes"]), 0);
    // No failure possible: no `errors` column for the link.
    assert!(row(&v, "queues", "queue", "R1->R2").get("error_pkts").is_none());
}

#[test]
fn routes_switch_to_the_backup_at_the_failure_and_back_at_the_repair() {
    let down = r#"down = [["2s", "4s"]]"#;
    // Until the failure nothing takes the backup.
    let early = run(&diamond(down, true, "").replace("duration = \"8s\"", "duration = \"1.999s\""));
    assert_eq!(u(&row(&early, "links", "link", "R1->R3")["sent_bytes"]), 0);
    // During the failure the backup carries the data (at most 2 s at 1 Mbit/s; Reno recovers
    // from the losses first) ...
    let at_5 = run(&diamond(down, true, "").replace("duration = \"8s\"", "duration = \"5s\""));
    let backup_5 = u(&row(&at_5, "links", "link", "R1->R3")["sent_bytes"]);
    assert!(backup_5 > 100_000 && backup_5 <= 250_000, "{backup_5}");
    // ... and after the repair nothing more: the same bytes at 8 s, while R1 -> R2 carries on.
    let full = run(&diamond(down, true, ""));
    assert_eq!(u(&row(&full, "links", "link", "R1->R3")["sent_bytes"]), backup_5);
    let primary = |v: &Value| u(&row(v, "links", "link", "R1->R2")["sent_bytes"]);
    assert!(primary(&full) > primary(&at_5) + 300_000);
    // The ACKs came back over the backup too.
    assert!(u(&row(&full, "links", "link", "R3->R1")["sent_bytes"]) > 0);
}

#[test]
fn packets_queued_and_in_flight_at_the_failure_are_lost_and_counted() {
    let v = run(&diamond(r#"down = [["2s", "4s"]]"#, true, ""));
    let q = row(&v, "queues", "queue", "R1->R2");
    // A saturated 1 Mbit/s link: its queue is full at 2 s and a packet is in transmission or
    // propagating (10 ms = 1.25 packets).
    let (drops, errors) = (u(&q["dropped_pkts"]), u(&q["error_pkts"]));
    assert!(errors >= 1 && errors <= 3, "{q}");
    assert_eq!(u(&q["arrived_pkts"]), u(&q["departed_pkts"]) + drops + u(&q["backlog_pkts"]), "{q}");
    let f = &v["flows"][0];
    assert_eq!(u(&f["sent_pkts"]), u(&f["received_pkts"]) + u(&f["dropped_pkts"]) + u(&f["in_flight_pkts"]), "{f}");
    // The same run cut just before the failure: every drop after it is a failure loss.
    let before = run(&diamond(r#"down = [["2s", "4s"]]"#, true, "").replace("duration = \"8s\"", "duration = \"1.999999999s\""));
    let qb = row(&before, "queues", "queue", "R1->R2");
    let waiting = u(&qb["backlog_pkts"]);
    assert!(waiting > 10, "{qb}");
    let cut = run(&diamond(r#"down = [["2s", "4s"]]"#, true, "").replace("duration = \"8s\"", "duration = \"2s\""));
    let qc = row(&cut, "queues", "queue", "R1->R2");
    // At 2 s: the waiting packets became drops (no departure), the started ones errors.
    assert_eq!(u(&qc["dropped_pkts"]), u(&qb["dropped_pkts"]) + waiting, "{qc} vs {qb}");
    assert_eq!(u(&qc["backlog_pkts"]), 0);
    assert_eq!(u(&qc["departed_pkts"]), u(&qb["departed_pkts"]));
    assert_eq!(u(&cut["flows"][0]["in_flight_pkts"]) + u(&cut["flows"][0]["dropped_pkts"]), u(&before["flows"][0]["in_flight_pkts"]) + u(&before["flows"][0]["dropped_pkts"]));
}

#[test]
fn a_flow_without_a_backup_stalls_loses_what_it_sends_and_recovers_at_the_repair() {
    let down = r#"down = [["2s", "4s"]]"#;
    let at_4 = run(&diamond(down, false, "").replace("duration = \"8s\"", "duration = \"4s\""));
    let at_2 = run(&diamond(down, false, "").replace("duration = \"8s\"", "duration = \"2s\""));
    let rcv = |v: &Value| u(&v["flows"][0]["received_pkts"]);
    let sent = |v: &Value| u(&v["flows"][0]["sent_pkts"]);
    // Nothing arrives while the link is down (a packet already past it may).
    assert!(rcv(&at_4) <= rcv(&at_2) + 2, "{} vs {}", rcv(&at_4), rcv(&at_2));
    // What the sender sends meanwhile (timeouts) reaches R1 by the old route and is dropped at the
    // down link: counted there as arrivals and drops.
    assert!(sent(&at_4) > sent(&at_2));
    let q4 = row(&at_4, "queues", "queue", "R1->R2");
    let q2 = row(&at_2, "queues", "queue", "R1->R2");
    assert_eq!(u(&q4["arrived_pkts"]) - u(&q2["arrived_pkts"]), u(&q4["dropped_pkts"]) - u(&q2["dropped_pkts"]));
    assert_eq!(u(&q4["departed_pkts"]), u(&q2["departed_pkts"]));
    // ACKs for data past the link at the failure are dropped on R2 -> R1 the same way.
    let full = run(&diamond(down, false, ""));
    assert!(rcv(&full) > rcv(&at_4) + 300, "recovers: {} vs {}", rcv(&full), rcv(&at_4));
    let f = &full["flows"][0];
    assert_eq!(u(&f["sent_pkts"]), u(&f["received_pkts"]) + u(&f["dropped_pkts"]) + u(&f["in_flight_pkts"]), "{f}");
}

#[test]
fn link_failures_give_identical_results_with_and_without_express_hops() {
    let udp = r#"
[[udp]]
name = "cbr"
from = "S1"
to = "D1"
model = "cbr"
rate = "200kbps"
packet_size = 500
"#;
    for backup in [true, false] {
        for down in [r#"down = [["2s", "4s"]]"#, r#"down = [["1.0005s", "1.5s"], ["3s", "6.25s"]]"#] {
            common::assert_express_hops_change_nothing(&diamond(down, backup, udp));
            common::assert_express_hops_change_nothing(&diamond(down, backup, ""));
        }
    }
}

#[test]
fn a_failure_is_deterministic() {
    let text = diamond(r#"down = [["2s", "4s"]]"#, true, "");
    assert_eq!(run(&text), run(&text));
}

#[test]
fn bad_down_schedules_are_errors_naming_the_field() {
    let base = diamond("", true, "");
    let with = |down: &str| common::rejected(&base.replace("endpoints = [\"R1\", \"R2\"]", &format!("endpoints = [\"R1\", \"R2\"]\ndown = {down}")), &[]);
    let e = with(r#"[["4s", "2s"]]"#);
    assert!(e.contains("links[1].down[0]") && e.contains("must end after it starts"), "{e}");
    let e = with(r#"[["2s", "4s"], ["3s", "5s"]]"#);
    assert!(e.contains("links[1].down[1]") && e.contains("must start after down[0] ends"), "{e}");
    let e = with(r#"[["2s", "4s"], ["4s", "5s"]]"#);
    assert!(e.contains("links[1].down[1]"), "{e}");
    let e = with(r#"[["0s", "4s"]]"#);
    assert!(e.contains("links[1].down[0][0]"), "{e}");
    let e = with(r#"[["2s", "1e9s"]]"#);
    assert!(e.contains("links[1].down[0][1]") && e.contains("10000000"), "{e}");
    let e = with(r#"["2s", "4s"]"#);
    assert!(e.contains("links[1].down[0]") && e.contains("interval"), "{e}");
    let e = with(r#"[["2s", "x"]]"#);
    assert!(e.contains("links[1].down[0][1]"), "{e}");
}

#[test]
fn more_link_changes_than_the_run_limit_are_an_error_naming_the_links() {
    // Six links with 9,000 one-millisecond outages each: 108,000 changes, over the 100,000 a
    // run may have (each names its change by index in an event).
    let intervals: Vec<String> = (0..9_000u64).map(|i| format!("[\"{}ms\", \"{}ms\"]", 2 * i + 1, 2 * i + 2)).collect();
    let down = format!("down = [{}]", intervals.join(", "));
    let mut text = String::from("[run]\nduration = \"1s\"\n");
    for (a, b) in [("S", "A"), ("A", "B"), ("B", "C"), ("C", "D"), ("D", "E"), ("E", "F")] {
        text += &format!("[[links]]\nendpoints = [\"{a}\", \"{b}\"]\nbandwidth = \"1Mbps\"\ndelay = \"1ms\"\n{down}\n");
    }
    text += "[[flows]]\nfrom = \"S\"\nto = \"F\"\ncc = \"reno\"\n";
    let e = common::rejected(&text, &[]);
    assert!(e.contains("links: the links' down intervals make 108000 link changes in all; at most 100000 are allowed"), "{e}");
}
