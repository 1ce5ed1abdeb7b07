//! Packet traces (`[trace]`, `vegaslab_sim::trace`): ns-2's line format, filters, limits.

use vegaslab_sim::scenario::parse;
use vegaslab_sim::sim::Simulator;
use vegaslab_sim::trace::{format_g15, ns2_time};

/// One Reno flow over two links: S -> R (10 Mbit/s, 1 ms) -> D (1 Mbit/s, 5 ms), 1040-byte
/// packets (1000 + 40 header).
const BASE: &str = r#"
[run]
duration = "30ms"
[[links]]
endpoints = ["S", "R"]
bandwidth = "10Mbps"
delay = "1ms"
[[links]]
endpoints = ["R", "D"]
bandwidth = "1Mbps"
delay = "5ms"
[[flows]]
name = "f1"
from = "S"
to = "D"
cc = "reno"
start = "1ms"
"#;

/// A fresh, empty directory for one test's trace.
fn fresh_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("vegaslab-trace-test-{}-{name}", std::process::id()));
    std::fs::remove_dir_all(&dir).ok();
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Run `text` with its trace created in `dir`.
fn traced_run(text: &str, dir: &std::path::Path) -> vegaslab_sim::RunResults {
    let mut sim = Simulator::build(parse(text, "t.toml", &[]).unwrap()).expect("a valid scenario");
    sim.open_trace(dir).unwrap().expect("the scenario has a [trace]");
    sim.run(|_, _| true)
}

fn run_trace(extra: &str, name: &str) -> (Vec<String>, vegaslab_sim::trace::TraceInfo) {
    let dir = fresh_dir(name);
    let r = traced_run(&format!("{BASE}\n[trace]\nfile = \"t.tr\"\n{extra}"), &dir);
    let info = r.meta.trace.clone().expect("trace info");
    let lines = std::fs::read_to_string(dir.join("t.tr")).unwrap().lines().map(str::to_string).collect();
    std::fs::remove_dir_all(&dir).ok();
    (lines, info)
}

#[test]
fn times_print_as_ns2_rounds_and_prints_them() {
    // floor(x * 1e6 + 0.5) / 1e6 with %.15g.
    assert_eq!(ns2_time(0.0), "0");
    assert_eq!(ns2_time(1.0), "1");
    assert_eq!(ns2_time(0.0144100000000001), "0.01441");
    assert_eq!(ns2_time(1.0242015999999934), "1.024202");
    assert_eq!(ns2_time(12.5), "12.5");
    assert_eq!(format_g15(1e-5), "1e-05");
    assert_eq!(format_g15(123456.789), "123456.789");
}

#[test]
fn the_first_packet_gives_ns2s_lines_with_hand_computed_times() {
    let (lines, info) = run_trace("", "first");
    // Reno's SYN (40 bytes, seqno 0) at 1 ms: enqueued and sent at once on S->R (node 0 ->
    // 1); it reaches R after 40 * 8 / 10e6 = 32 us plus 1 ms: 2.032 ms; on R->D 320 us + 5 ms:
    // 7.352 ms. Sender S.0, sink D.0; fid 0; uid = the hop's number in this trace.
    assert_eq!(
        &lines[..6],
        &[
            "+ 0.001 0 1 tcp 40 ------- 0 0.0 2.0 0 0",
            "- 0.001 0 1 tcp 40 ------- 0 0.0 2.0 0 0",
            "r 0.002032 0 1 tcp 40 ------- 0 0.0 2.0 0 0",
            "+ 0.002032 1 2 tcp 40 ------- 0 0.0 2.0 0 1",
            "- 0.002032 1 2 tcp 40 ------- 0 0.0 2.0 0 1",
            "r 0.007352 1 2 tcp 40 ------- 0 0.0 2.0 0 1",
        ]
    );
    // The sink's ACK (40 bytes, ackno 0) goes back D -> R -> S as `ack` from D.0 to S.0.
    assert_eq!(lines[6], "+ 0.007352 2 1 ack 40 ------- 0 2.0 0.0 0 2");
    assert_eq!(info.format, "ns2");
    assert_eq!(info.lines, lines.len() as u64);
    assert!(!info.truncated);
}

#[test]
fn a_link_filter_keeps_that_direction_only_and_a_waiting_packet_is_dequeued_when_its_transmission_starts() {
    let (lines, _) = run_trace("links = [\"R->D\"]", "link");
    assert!(lines.iter().all(|l| l.split(' ').nth(2) == Some("1") && l.split(' ').nth(3) == Some("2")), "{lines:?}");
    // After the SYN's ACK, two 1040-byte packets leave S 32 us... : the second waits on R->D
    // for the first's 8.32 ms transmission, so its `-` comes 8.32 ms after the first's.
    let starts: Vec<f64> = lines.iter().filter(|l| l.starts_with("- ") && l.contains(" tcp 1040 ")).map(|l| l.split(' ').nth(1).unwrap().parse().unwrap()).collect();
    assert!(starts.len() >= 2, "{lines:?}");
    assert!((starts[1] - starts[0] - 0.00832).abs() < 1.5e-6, "{starts:?}");
}

#[test]
fn max_lines_stops_recording_and_says_so() {
    let (lines, info) = run_trace("max_lines = 5", "max");
    assert_eq!(lines.len(), 5);
    assert!(info.truncated);
}

/// A pcap's records: (microseconds, captured bytes, original length).
fn pcap_records(bytes: &[u8]) -> Vec<(u64, Vec<u8>, u32)> {
    let word = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
    let mut out = Vec::new();
    let mut at = 24;
    while at < bytes.len() {
        let (us, caplen, orig) = (word(at) as u64 * 1_000_000 + word(at + 4) as u64, word(at + 8) as usize, word(at + 12));
        out.push((us, bytes[at + 16..at + 16 + caplen].to_vec(), orig));
        at += 16 + caplen;
    }
    out
}

#[test]
fn a_pcap_trace_has_the_classic_header_and_raw_ipv4_records_starting_with_the_syn() {
    let dir = fresh_dir("pcap");
    let r = traced_run(&format!("{BASE}\n[trace]\nformat = \"pcap\"\nfile = \"t.pcap\"\nlinks = [\"R->D\"]\n"), &dir);
    let bytes = std::fs::read(dir.join("t.pcap")).unwrap();
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(&bytes[..4], &0xa1b2c3d4u32.to_le_bytes());
    assert_eq!(u32::from_le_bytes(bytes[20..24].try_into().unwrap()), 101, "LINKTYPE_RAW");
    let recs = pcap_records(&bytes);
    // The first record: the SYN offered at R to R->D at 2.032 ms; its 40 bytes and the 4 of
    // the window-scale option, all captured.
    let (us, ip, orig) = &recs[0];
    assert_eq!((*us, ip.len(), *orig), (2032, 44, 44));
    assert_eq!(ip[0], 0x45);
    assert_eq!(ip[9], 6, "TCP");
    assert_eq!(&ip[12..16], &[10, 0, 0, 0], "node 0");
    assert_eq!(&ip[16..20], &[10, 0, 0, 2], "node 2");
    assert_eq!(ip[33], 0x02, "SYN");
    assert_eq!(r.meta.trace.unwrap().lines, recs.len() as u64);
}

#[test]
fn a_pcap_of_a_link_direction_holds_what_its_first_node_sends_on_it_and_receives_back() {
    let dir = fresh_dir("pcap-both");
    traced_run(&format!("{BASE}\n[trace]\nformat = \"pcap\"\nfile = \"t.pcap\"\nlinks = [\"R->D\"]\n"), &dir);
    let recs = pcap_records(&std::fs::read(dir.join("t.pcap")).unwrap());
    std::fs::remove_dir_all(&dir).ok();
    // The same run's ns-2 events: `+` on R->D (node 1 -> 2), `r` on D->R (2 -> 1).
    let (lines, _) = run_trace("links = [\"R->D\", \"D->R\"]", "pcap-both-ns2");
    let expected: Vec<(u64, u32)> = lines
        .iter()
        .map(|l| l.split(' ').collect::<Vec<_>>())
        .filter(|f| (f[0] == "+" && f[2] == "1") || (f[0] == "r" && f[2] == "2"))
        .map(|f| (((f[1].parse::<f64>().unwrap()) * 1e6).round() as u64, f[5].parse().unwrap()))
        .collect();
    // Each record's size is the packet's, but for the window-scale option a SYN and a SYN-ACK
    // carry beyond it.
    let got: Vec<(u64, u32)> = recs.iter().map(|(us, ip, orig)| (*us, orig - syn_option(ip))).collect();
    assert_eq!(got, expected);
    assert_eq!(recs.iter().filter(|(_, ip, _)| syn_option(ip) > 0).count(), 2, "the SYN and the SYN-ACK");
    // Both directions: data from node 0 and ACKs to it.
    assert!(recs.iter().any(|(_, ip, _)| ip[15] == 0) && recs.iter().any(|(_, ip, _)| ip[19] == 0));
}

/// The bytes of the window-scale option a SYN or SYN-ACK record carries beyond the packet's size.
fn syn_option(ip: &[u8]) -> u32 {
    if tcp_of(ip).0[13] & 0x02 != 0 { 4 } else { 0 }
}

/// The TCP header of a captured record (the IP header's length read from it), and the IP
/// packet's total length.
fn tcp_of(ip: &[u8]) -> (&[u8], u16) {
    (&ip[(ip[0] & 0x0f) as usize * 4..], u16::from_be_bytes([ip[2], ip[3]]))
}

#[test]
fn a_pcap_without_links_captures_each_flow_at_its_sender_from_handshake_to_fin() {
    let dir = fresh_dir("pcap-sender");
    let text = format!("{BASE}\n[flows.app]\nkind = \"file\"\npackets = 5\n[trace]\nformat = \"pcap\"\nfile = \"t.pcap\"\n");
    let text = text.replace("duration = \"30ms\"", "duration = \"1s\"");
    traced_run(&text, &dir);
    let recs = pcap_records(&std::fs::read(dir.join("t.pcap")).unwrap());
    std::fs::remove_dir_all(&dir).ok();
    // Data from S (node 0), each packet once (SYN + 5, no loss), and its ACKs back at S.
    let (data, acks): (Vec<_>, Vec<_>) = recs.iter().partition(|(_, ip, _)| ip[15] == 0);
    assert_eq!((data.len(), acks.len()), (6, 6));
    let flags: Vec<u8> = data.iter().map(|(_, ip, _)| tcp_of(ip).0[13]).collect();
    assert_eq!(flags, [0x02, 0x18, 0x18, 0x18, 0x18, 0x19], "SYN, data with ACK, the last with FIN");
    let seq = |ip: &[u8]| u32::from_be_bytes(tcp_of(ip).0[4..8].try_into().unwrap());
    let ack = |ip: &[u8]| u32::from_be_bytes(tcp_of(ip).0[8..12].try_into().unwrap());
    // Each packet starts where the one before ends (SYN: 1 number; data: 1000 bytes), and the
    // last ACK covers the FIN.
    let isn = seq(&data[0].1);
    for (k, (_, ip, _)) in data.iter().enumerate().skip(1) {
        assert_eq!(seq(ip), isn.wrapping_add(1 + 1000 * (k as u32 - 1)));
        assert_eq!(tcp_of(ip).1, 1040, "the packet's size on the wire");
    }
    assert_eq!(ack(&acks[5].1), isn.wrapping_add(1 + 5 * 1000 + 1));
    // The answer to the SYN is the SYN-ACK, the others plain ACKs; 40 bytes each (and the
    // SYN-ACK's window-scale option).
    let ack_flags: Vec<u8> = acks.iter().map(|(_, ip, _)| tcp_of(ip).0[13]).collect();
    assert_eq!(ack_flags, [0x12, 0x10, 0x10, 0x10, 0x10, 0x10]);
    assert!(acks.iter().all(|(_, ip, _)| tcp_of(ip).1 as u32 == 40 + syn_option(ip)));
    assert_eq!(seq(&acks[1].1), seq(&acks[0].1).wrapping_add(1), "the SYN-ACK takes one number");
}

#[test]
fn bad_trace_fields_name_the_field_and_the_allowed_values() {
    let bad = |extra: &str| parse(&format!("{BASE}\n[trace]\n{extra}"), "t.toml", &[]).unwrap_err().to_string();
    let e = bad("format = \"pcapng\"");
    assert!(e.contains("trace.format") && e.contains("\"ns2\"") && e.contains("\"pcap\""), "{e}");
    let e = bad("links = [\"S->D\"]");
    assert!(e.contains("trace.links[0]") && e.contains("no link S->D"), "{e}");
    let e = bad("flows = [\"f9\"]");
    assert!(e.contains("trace.flows[0]") && e.contains("f1"), "{e}");
    let e = bad("max_lines = 0");
    assert!(e.contains("trace.max_lines"), "{e}");
    let e = bad("max_lines = 99999999999");
    assert!(e.contains("trace.max_lines") && e.contains("5000000"), "{e}");
    let e = bad("every = true");
    assert!(e.contains("every"), "{e}");
}

#[test]
fn tracing_changes_no_result() {
    let plain = Simulator::build(parse(BASE, "t.toml", &[]).unwrap()).expect("a valid scenario").run(|_, _| true);
    let dir = fresh_dir("same");
    let traced = traced_run(&format!("{BASE}\n[trace]\n"), &dir);
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(serde_json::to_string(&plain.flows).unwrap(), serde_json::to_string(&traced.flows).unwrap());
    assert_eq!(serde_json::to_string(&plain.queues).unwrap(), serde_json::to_string(&traced.queues).unwrap());
}

#[test]
fn a_trace_file_is_a_plain_name_with_its_formats_suffix_never_a_path() {
    let bad = |file: &str, format: &str| {
        parse(&format!("{BASE}\n[trace]\nformat = \"{format}\"\nfile = {file:?}\n"), "t.toml", &[]).unwrap_err().to_string()
    };
    for file in ["/etc/passwd.tr", "../up.tr", "sub/t.tr", "./t.tr", ".hidden.tr", "t .tr", "", ".tr", "t*.tr", "C:\\\\t.tr"] {
        let e = bad(file, "ns2");
        assert!(e.contains("trace.file") && (e.contains("plain file name") || e.contains("must end in")), "{file:?}: {e}");
    }
    let e = bad("t.txt", "ns2");
    assert!(e.contains("trace.file") && e.contains("\".tr\""), "{e}");
    let e = bad("t.tr", "pcap");
    assert!(e.contains("trace.file") && e.contains("\".pcap\""), "{e}");
    let long = format!("{}.tr", "a".repeat(200));
    assert!(bad(&long, "ns2").contains("at most 128"));
    assert!(parse(&format!("{BASE}\n[trace]\nfile = \"run-1_a.b.tr\"\n"), "t.toml", &[]).is_ok());
}

#[test]
fn a_trace_never_replaces_a_file_or_writes_through_a_planted_link() {
    let dir = fresh_dir("planted");
    let victim = dir.join("victim.txt");
    std::fs::write(&victim, "keep me").unwrap();
    std::fs::write(dir.join("t.tr"), "an older trace").unwrap();
    std::os::unix::fs::symlink(&victim, dir.join("l.tr")).unwrap();
    std::os::unix::fs::symlink(dir.join("nowhere"), dir.join("dangling.tr")).unwrap();
    for name in ["t.tr", "l.tr", "dangling.tr"] {
        let mut sim = Simulator::build(parse(&format!("{BASE}\n[trace]\nfile = \"{name}\"\n"), "t.toml", &[]).unwrap()).expect("a valid scenario");
        let e = sim.open_trace(&dir).unwrap_err().to_string();
        assert!(e.contains("trace.file") && e.contains(name) && e.contains("already exists"), "{e}");
    }
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
    assert_eq!(std::fs::read_to_string(dir.join("t.tr")).unwrap(), "an older trace");
    assert!(!dir.join("nowhere").exists());
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_trace_that_cannot_be_created_is_an_error_before_the_run_naming_the_path() {
    let missing = std::env::temp_dir().join(format!("vegaslab-no-such-dir-{}", std::process::id()));
    let mut sim = Simulator::build(parse(&format!("{BASE}\n[trace]\n"), "t.toml", &[]).unwrap()).expect("a valid scenario");
    let e = sim.open_trace(&missing).unwrap_err().to_string();
    assert!(e.contains("trace.file") && e.contains(&missing.join("trace.tr").display().to_string()) && e.contains("cannot create"), "{e}");
}

#[test]
fn a_trace_without_an_output_directory_is_recorded_as_not_written_and_the_results_stand() {
    let traced = Simulator::build(parse(&format!("{BASE}\n[trace]\n"), "t.toml", &[]).unwrap()).expect("a valid scenario").run(|_, _| true);
    let info = traced.meta.trace.clone().expect("trace info");
    assert!(info.error.as_deref().is_some_and(|e| e.contains("no output directory")) && info.lines == 0, "{info:?}");
    let plain = Simulator::build(parse(BASE, "t.toml", &[]).unwrap()).expect("a valid scenario").run(|_, _| true);
    assert_eq!(traced.flows[0].sent_pkts, plain.flows[0].sent_pkts);
}
