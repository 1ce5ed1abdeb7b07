//! Reno (`Agent/TCP/Reno`) behaviour, state x event, against ns-2.35 semantics
//! (docs/vegas-implementations.md, "ns-2 TCP defaults and conventions"; ns-2 tcp.cc /
//! tcp-reno.cc). Every expected number is worked out by
//! hand in the comments; none is obtained by calling the code's own formulas.
//!
//! Conventions: sequence numbers count packets; the sink acknowledges every packet with the
//! highest in-order sequence number received (ns-2 TCPSink); times are in milliseconds.

mod common;
use common::*;

use vegaslab_cc::sender::CwndAction;
use vegaslab_cc::reno::RenoParams;
use vegaslab_cc::{spec, AlgorithmSpec, Sender, TcpConfig};

/// ns-2 defaults except a receiver window large enough not to interfere.
fn cfg() -> TcpConfig {
    TcpConfig {
        window: 100.0,
        ..Default::default()
    }
}

/// Reno with a 100 ms RTT and every packet delivered, grown to cwnd 11:
///
/// | t (ms) | ACK | cwnd after | sent         |
/// |--------|-----|------------|--------------|
/// | 0      | -   | 1          | SYN 0        |
/// | 100    | 0   | 2 (windowInit) | 1, 2     |
/// | 200    | 1,2 | 3, 4       | 3 4, 5 6     |
/// | 300    | 3-6 | 5..8       | 7 .. 14      |
/// | 400    | 7-9 | 9..11      | 15 .. 20     |
///
/// State: cwnd 11, ssthresh 100, last_ack 9, packets 10..=20 outstanding, t_seqno 21.
///
/// RTT samples (one timed packet per RTT: 0, 1, 3, 7, each 100 ms = 10 ticks of 10 ms):
/// srtt stays 10 ticks; rttvar (x4) goes 20 (first sample: rtt/2 x 4), then
/// 20 - 20/4 = 15, 15 - 3 = 12, 12 - 3 = 9; RTO = srtt + rttvar = 10 + 9 = 19 ticks = 0.19 s,
/// raised to min_rto 0.2 s. The last new ACK (9, at 400 ms) re-armed the timer: 600 ms.
fn reno_at_cwnd_11(alg: AlgorithmSpec) -> Sender {
    let mut s = Sender::new(cfg(), alg);
    assert_eq!(seqs(&start(&mut s, 0)), vec![0]);
    assert_eq!(seqs(&ack(&mut s, 100, 0)), vec![1, 2]);
    let mut sent = Vec::new();
    for a in 1..=2 {
        sent.extend(seqs(&ack(&mut s, 200, a)));
    }
    for a in 3..=6 {
        sent.extend(seqs(&ack(&mut s, 300, a)));
    }
    for a in 7..=9 {
        sent.extend(seqs(&ack(&mut s, 400, a)));
    }
    assert_eq!(sent, (3..=20).collect::<Vec<_>>());
    assert_eq!(s.cwnd(), 11.0);
    assert_eq!(s.state.t_seqno, 21);
    s
}

/// From `reno_at_cwnd_11`, packet 10 is lost; packets 11 and 12 arrive at 500 and 501 ms
/// and produce the first two duplicate ACKs of 9.
fn reno_after_two_dupacks(alg: AlgorithmSpec) -> Sender {
    let mut s = reno_at_cwnd_11(alg);
    ack(&mut s, 500, 9);
    ack(&mut s, 501, 9);
    s
}

// ---------------------------------------------------------------------------------------
// Connection start and window growth
// ---------------------------------------------------------------------------------------

#[test]
fn the_first_segment_is_a_40_byte_syn_and_cwnd_is_one_until_it_is_acked() {
    let mut s = Sender::new(cfg(), spec("reno", RenoParams::RENO));
    let segs = start(&mut s, 0);
    // syn_ and delay_growth_: cwnd 1, so only the SYN goes out.
    assert_eq!(segs.len(), 1);
    assert_eq!(segs[0].seqno, 0);
    assert!(segs[0].syn);
    assert_eq!(segs[0].wire_bytes, 40);
    assert_eq!(segs[0].payload_bytes, 0);
    assert!(!segs[0].retransmission);
    assert_eq!(s.cwnd(), 1.0);
    assert_eq!(s.ssthresh(), 100); // initial ssthresh = window_
}

#[test]
fn the_syn_ack_opens_the_initial_window_of_two_full_sized_packets() {
    let mut s = Sender::new(cfg(), spec("reno", RenoParams::RENO));
    start(&mut s, 0);
    let segs = ack(&mut s, 100, 0);
    // opencwnd would give 2 anyway; then last_ack == 0 sets cwnd = windowInit_ = 2.
    assert_eq!(s.cwnd(), 2.0);
    assert_eq!(seqs(&segs), vec![1, 2]);
    for g in &segs {
        assert!(!g.syn);
        assert_eq!(g.payload_bytes, 1000);
        assert_eq!(g.wire_bytes, 1040); // packetSize_ + 40-byte header
        assert!(!g.retransmission);
    }
}

#[test]
fn slow_start_adds_one_packet_per_ack_and_each_ack_releases_two_packets() {
    let mut s = Sender::new(cfg(), spec("reno", RenoParams::RENO));
    start(&mut s, 0);
    ack(&mut s, 100, 0); // cwnd 2, packets 1 and 2 out
                         // After k data ACKs in slow start cwnd = 2 + k; the ACK point moves by one and the
                         // window by one, so each ACK sends two new packets: ACK k sends 2k+1 and 2k+2.
    for k in 1..=5 {
        let segs = ack(&mut s, 200, k);
        assert_eq!(s.cwnd(), 2.0 + k as f64, "after {k} ACKs");
        assert_eq!(seqs(&segs), vec![2 * k + 1, 2 * k + 2], "sent on ACK {k}");
    }
}

#[test]
fn congestion_avoidance_adds_one_over_cwnd_per_ack() {
    // window_ 10 makes the initial ssthresh 10.
    let mut s = Sender::new(
        TcpConfig {
            window: 10.0,
            ..Default::default()
        },
        spec("reno", RenoParams::RENO),
    );
    start(&mut s, 0);
    ack(&mut s, 100, 0); // cwnd 2
    for k in 1..=8 {
        ack(&mut s, 200, k); // slow start: 2 + 8 = 10
    }
    assert_eq!(s.cwnd(), 10.0);
    assert_eq!(s.ssthresh(), 10);
    ack(&mut s, 300, 9);
    // cwnd 10 is not below ssthresh 10: +1/10.
    assert!(close(s.cwnd(), 10.1), "cwnd {}", s.cwnd());
}

// ---------------------------------------------------------------------------------------
// Duplicate ACKs: limited transmit, fast retransmit, fast recovery
// ---------------------------------------------------------------------------------------

#[test]
fn first_and_second_duplicate_acks_each_send_one_new_packet() {
    let mut s = reno_at_cwnd_11(spec("reno", RenoParams::RENO));
    // send_one: t_seqno 21 <= highest_ack 9 + cwnd 11 + dupacks 1 = 21 -> send 21.
    assert_eq!(seqs(&ack(&mut s, 500, 9)), vec![21]);
    assert_eq!(s.state.dupacks, 1);
    // 22 <= 9 + 11 + 2 = 22 -> send 22.
    assert_eq!(seqs(&ack(&mut s, 501, 9)), vec![22]);
    assert_eq!(s.state.dupacks, 2);
    assert_eq!(s.cwnd(), 11.0); // no window change before the third duplicate
    assert_eq!(dupwnd(&s), 0);
}

#[test]
fn without_limited_transmit_the_first_two_duplicate_acks_send_nothing() {
    let mut c = cfg();
    c.limited_transmit = false;
    let mut s = Sender::new(c, spec("reno", RenoParams::RENO));
    start(&mut s, 0);
    ack(&mut s, 100, 0);
    ack(&mut s, 200, 1); // cwnd 3, packets 2..=4 out
    assert!(ack(&mut s, 300, 1).is_empty());
    assert!(ack(&mut s, 301, 1).is_empty());
}

#[test]
fn third_duplicate_ack_retransmits_the_first_unacked_packet_and_halves_the_window() {
    let mut s = reno_after_two_dupacks(spec("reno", RenoParams::RENO));
    let segs = ack(&mut s, 502, 9);
    // Window before the cut: cwnd 11 + dupwnd 0 = 11.
    // ssthresh = int(11 / 2) = 5; cwnd = 11 / 2 = 5.5 (precisionReduce_ keeps the half).
    assert_eq!(s.ssthresh(), 5);
    assert_eq!(s.cwnd(), 5.5);
    // Retransmit last_ack + 1 = 10, nothing else: window int(5.5) + 3 = 8, 9 + 8 < 23.
    assert_eq!(seqs(&segs), vec![10]);
    assert!(segs[0].retransmission);
    assert_eq!(dupwnd(&s), 3); // numdupacks_
    assert_eq!(s.state.recover, 22); // maxseq_ when recovery began
    assert_eq!(s.state.last_cwnd_action, CwndAction::DupAck);
    assert_eq!(s.stats().fast_retransmits, 1);
    // reset_rtx_timer(1, 0): re-armed without back-off, RTO 0.2 s -> 502 + 200 ms.
    assert_eq!(s.rtx_deadline(), Some(ms(702)));
}

#[test]
fn each_further_duplicate_ack_inflates_the_window_and_clocks_out_new_data_when_it_allows() {
    let mut s = reno_after_two_dupacks(spec("reno", RenoParams::RENO));
    ack(&mut s, 502, 9); // fast retransmit: cwnd 5.5, dupwnd 3, t_seqno 23
                         // Duplicate n (n >= 4) makes dupwnd n; the window int(5.5) + n lets 23 out once
                         // 9 + 5 + n >= 23, i.e. n >= 9.
    for n in 4..=8 {
        let segs = ack(&mut s, 500 + n as u64, 9);
        assert_eq!(dupwnd(&s), n);
        assert!(segs.is_empty(), "dup {n} sent {:?}", seqs(&segs));
    }
    assert_eq!(seqs(&ack(&mut s, 509, 9)), vec![23]);
    assert_eq!(dupwnd(&s), 9);
    assert_eq!(seqs(&ack(&mut s, 510, 9)), vec![24]);
    assert_eq!(dupwnd(&s), 10);
    // The halved cwnd itself does not move during recovery.
    assert_eq!(s.cwnd(), 5.5);
    assert_eq!(s.stats().fast_retransmits, 1);
}

#[test]
fn a_new_ack_ends_fast_recovery_deflating_to_the_halved_window_plus_one_over_cwnd() {
    let mut s = reno_after_two_dupacks(spec("reno", RenoParams::RENO));
    for n in 3..=12 {
        ack(&mut s, 499 + n as u64, 9); // dups 3..=12: 23..=26 sent on dups 9..=12
    }
    assert_eq!(s.state.t_seqno, 27);
    // The retransmitted 10 arrives (sent at 502 ms); 11..=22 are in: cumulative ACK 22.
    let segs = ack(&mut s, 602, 22);
    assert_eq!(dupwnd(&s), 0);
    assert_eq!(s.state.last_cwnd_action, CwndAction::Exited);
    // cwnd 5.5 >= ssthresh 5: congestion avoidance, 5.5 + 1/5.5 = 5.5 + 2/11.
    assert!(close(s.cwnd(), 5.5 + 2.0 / 11.0), "cwnd {}", s.cwnd());
    assert_eq!(s.ssthresh(), 5);
    // Window int(5.68) = 5: 22 + 5 = 27, so only 27 goes out.
    assert_eq!(seqs(&segs), vec![27]);
}

#[test]
fn reno_leaves_recovery_on_a_partial_ack_and_a_later_third_dup_ack_in_that_window_does_not_fast_retransmit(
) {
    let mut s = reno_after_two_dupacks(spec("reno", RenoParams::RENO));
    ack(&mut s, 502, 9); // fast retransmit of 10, recover = 22
                         // Packet 13 was lost as well: the retransmitted 10 brings a partial ACK of 12.
    ack(&mut s, 602, 12);
    assert_eq!(dupwnd(&s), 0);
    assert_eq!(s.state.last_cwnd_action, CwndAction::Exited);
    assert!(close(s.cwnd(), 5.5 + 2.0 / 11.0));
    // Three duplicates of 12: highest_ack 12 is not above recover 22 and the last action
    // was not a dupack action, so bugFix_ forbids another fast retransmit.
    for t in 603..=605 {
        let segs = ack(&mut s, t, 12);
        assert!(segs.iter().all(|g| !g.retransmission), "at {t}: {:?}", segs);
    }
    assert_eq!(s.state.dupacks, 3);
    assert_eq!(s.stats().fast_retransmits, 1);
    assert_eq!(s.ssthresh(), 5);
}

// ---------------------------------------------------------------------------------------
// Retransmission timer
// ---------------------------------------------------------------------------------------

#[test]
fn before_any_rtt_sample_the_timer_uses_the_initial_rto_of_3_s() {
    let mut s = Sender::new(cfg(), spec("reno", RenoParams::RENO));
    start(&mut s, 0);
    assert_eq!(s.rtx_deadline(), Some(ms(3000)));
}

#[test]
fn first_rtt_sample_of_100_ms_gives_an_rto_of_300_ms() {
    let mut s = Sender::new(cfg(), spec("reno", RenoParams::RENO));
    start(&mut s, 0);
    ack(&mut s, 100, 0);
    // boot_time 0, tick 10 ms: the sample is 10 ticks. First sample: srtt = 10,
    // rttvar = 10/2 = 5; RTO = srtt + 4 x rttvar = 10 + 20 = 30 ticks = 0.3 s.
    assert_eq!(s.rtx_deadline(), Some(ms(100 + 300)));
}

#[test]
fn a_small_rto_is_raised_to_min_rto() {
    let mut s = Sender::new(cfg(), spec("reno", RenoParams::RENO));
    start(&mut s, 0);
    ack(&mut s, 20, 0);
    // 20 ms = 2 ticks: RTO = 2 + 4 x 1 = 6 ticks = 60 ms < min_rto 200 ms.
    assert_eq!(s.rtx_deadline(), Some(ms(20 + 200)));
}

#[test]
fn timeout_sets_cwnd_to_one_halves_ssthresh_and_resends_from_the_ack_point() {
    let mut s = reno_at_cwnd_11(spec("reno", RenoParams::RENO));
    assert_eq!(s.rtx_deadline(), Some(ms(600)));
    s.on_timer(ms(600));
    let segs = drain(&mut s);
    assert_eq!(s.cwnd(), 1.0);
    assert_eq!(s.ssthresh(), 5); // int(11 / 2)
    assert_eq!(seqs(&segs), vec![10]); // last_ack + 1, and only it (cwnd 1)
    assert!(segs[0].retransmission);
    assert_eq!(s.state.t_seqno, 11);
    assert_eq!(s.state.recover, 20);
    assert_eq!(s.state.last_cwnd_action, CwndAction::Timeout);
    assert_eq!(s.stats().timeouts, 1);
}

#[test]
fn timeout_backs_off_the_next_rto_and_a_second_timeout_keeps_ssthresh_at_least_two() {
    let mut s = reno_at_cwnd_11(spec("reno", RenoParams::RENO));
    s.on_timer(ms(600));
    assert_eq!(seqs(&drain(&mut s)), vec![10]);
    // Back-off 2: min_rto 0.2 s (RTO 0.19 s is below it) x 2 = 0.4 s.
    assert_eq!(s.rtx_deadline(), Some(ms(1000)));
    s.on_timer(ms(1000));
    // Back-off 4: 0.8 s.
    assert_eq!(s.rtx_deadline(), Some(ms(1800)));
    // ssthresh = int(cwnd 1 / 2) = 0, raised to 2.
    assert_eq!(s.ssthresh(), 2);
    assert_eq!(s.cwnd(), 1.0);
    assert_eq!(seqs(&drain(&mut s)), vec![10]);
}

#[test]
fn after_a_timeout_new_acks_slow_start_again_and_go_back_n_from_the_ack_point() {
    let mut s = reno_at_cwnd_11(spec("reno", RenoParams::RENO));
    s.on_timer(ms(600)); // resends 10
    drain(&mut s);
    let segs = ack(&mut s, 700, 10);
    // cwnd 1 < ssthresh 5: +1 -> 2; window 2 from ACK 10: 11 and 12, both already sent once.
    assert_eq!(s.cwnd(), 2.0);
    assert_eq!(seqs(&segs), vec![11, 12]);
    assert!(segs.iter().all(|g| g.retransmission));
    // No RTT sample (the only timed packet was cancelled by the timeout; Karn), so the
    // back-off stays at 2: the timer is 0.2 x 2 = 0.4 s from now.
    assert_eq!(s.rtx_deadline(), Some(ms(1100)));
}

/// Without RTT samples (nothing reads them and Reno's rule uses none: `set_rtt_samples_read`),
/// Reno and NewReno send, cut and arm their timer exactly as with them, through losses, fast
/// recoveries and a reroute.
#[test]
fn without_rtt_samples_reno_behaves_the_same() {
    use common::path::{simulate_sender, Path};
    let path = Path { rate: 2e6, limit: 12, rtt0: 40 * MS, rtt1: 90 * MS, switch_at: 5_000 * MS, drop_every: 97 };
    for params in [RenoParams::RENO, RenoParams::NEWRENO] {
        let name = if params.newreno { "newreno" } else { "reno" };
        let trace = |read: bool| {
            let mut sender = Sender::new(TcpConfig { window: 200.0, ..Default::default() }, spec(name, params));
            sender.set_rtt_samples_read(read);
            let mut steps = Vec::new();
            let run = simulate_sender(sender, &path, 20_000 * MS, |s| {
                steps.push((s.cwnd().to_bits(), s.ssthresh(), s.rtx_deadline(), s.stats().clone()));
                false
            });
            (steps, run.delivered, run.drops, run.sender.state.last_rtt_sample.is_some())
        };
        let (with, without) = (trace(true), trace(false));
        assert!(with.2 > 0 && with.3 && !without.3, "{name}: losses and samples as intended");
        assert_eq!(with.0, without.0, "{name}");
        assert_eq!((with.1, with.2), (without.1, without.2), "{name}");
    }
}
