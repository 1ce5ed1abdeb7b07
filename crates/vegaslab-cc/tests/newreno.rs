//! NewReno (`Agent/TCP/Newreno`, RFC 2582 careful variant) behaviour against ns-2.35
//! semantics at its defaults: newreno_changes1_ 1 (timer reset only on the first partial
//! ACK), partial_window_deflation_ 1, exit_recovery_fix_ 0, bugFix_ on.
//! Expected numbers are worked out by hand in the comments.

mod common;
use common::*;

use vegaslab_cc::sender::CwndAction;
use vegaslab_cc::reno::RenoParams;
use vegaslab_cc::{spec, Sender, TcpConfig};

fn cfg() -> TcpConfig {
    TcpConfig {
        window: 100.0,
        ..Default::default()
    }
}

/// NewReno with a 100 ms RTT, grown loss-free to cwnd 11 (SYN at 0 ms; ACK 0 at 100 ms:
/// cwnd 2; ACKs 1-2 at 200, 3-6 at 300, 7-9 at 400 ms: +1 each). Packets 10..=20 are out,
/// t_seqno 21, and the RTO is 0.19 s raised to min_rto 0.2 s (samples of 100 ms: srtt 10
/// ticks, rttvar x4 20 -> 15 -> 12 -> 9, RTO 10 + 9 = 19 ticks).
fn newreno_at_cwnd_11() -> Sender {
    let mut s = Sender::new(cfg(), spec("newreno", RenoParams::NEWRENO));
    s.app_send(0, None);
    drain(&mut s);
    ack(&mut s, 100, 0);
    for (t, acks) in [(200, 1..=2), (300, 3..=6), (400, 7..=9)] {
        for a in acks {
            ack(&mut s, t, a);
        }
    }
    assert_eq!(s.cwnd(), 11.0);
    assert_eq!(s.state.t_seqno, 21);
    s
}

/// From cwnd 11, packet 10 is lost: the next three arrivals give duplicate ACKs of 9 at 500,
/// 501, 502 ms. The first two duplicates send 21 and 22 (limited transmit), the third fast-retransmits 10:
/// ssthresh int(11/2) = 5, cwnd 5.5, dupwnd 3, recover = maxseq = 22, timer 502 + 200 ms.
fn newreno_in_fast_recovery() -> Sender {
    let mut s = newreno_at_cwnd_11();
    assert_eq!(seqs(&ack(&mut s, 500, 9)), vec![21]);
    assert_eq!(seqs(&ack(&mut s, 501, 9)), vec![22]);
    assert_eq!(seqs(&ack(&mut s, 502, 9)), vec![10]);
    assert_eq!(s.cwnd(), 5.5);
    assert_eq!(s.ssthresh(), 5);
    assert_eq!(dupwnd(&s), 3);
    assert_eq!(s.state.recover, 22);
    assert_eq!(s.rtx_deadline(), Some(ms(702)));
    s
}

/// Three losses, 10, 13 and 16, in one window (continuing `newreno_in_fast_recovery`):
///
/// | t (ms) | ACK | from      | dupwnd | window int(5.5)+dupwnd | sent |
/// |--------|-----|-----------|--------|------------------------|------|
/// | 503    | 9   | 15        | 4      | 9                      | -    |
/// | 504-507| 9   | 17..20    | 5..8   | ..13 (9 + 13 = 22)     | -    |
/// | 600    | 9   | 21        | 9      | 14 (9 + 14 = 23)       | 23   |
/// | 601    | 9   | 22        | 10     | 15                     | 24   |
///
/// Returns the sender just before the retransmitted 10 comes back (t_seqno 25).
fn newreno_with_holes_at_10_13_16() -> Sender {
    let mut s = newreno_in_fast_recovery();
    for t in 503..=507 {
        assert!(ack(&mut s, t, 9).is_empty());
    }
    assert_eq!(dupwnd(&s), 8);
    assert_eq!(seqs(&ack(&mut s, 600, 9)), vec![23]);
    assert_eq!(seqs(&ack(&mut s, 601, 9)), vec![24]);
    assert_eq!(dupwnd(&s), 10);
    assert_eq!(s.state.dupacks, 10);
    s
}

// ---------------------------------------------------------------------------------------
// Partial ACKs
// ---------------------------------------------------------------------------------------

#[test]
fn a_partial_ack_keeps_recovery_and_retransmits_the_next_hole_at_once() {
    let mut s = newreno_with_holes_at_10_13_16();
    // The retransmitted 10 arrives; 11 and 12 were in, 13 is missing: ACK 12 < recover 22.
    let segs = ack(&mut s, 602, 12);
    assert_eq!(s.state.last_cwnd_action, CwndAction::DupAck); // still recovering
    assert_eq!(s.state.last_ack, 12);
    assert_eq!(segs[0].seqno, 13);
    assert!(segs[0].retransmission);
    // Deflation: 3 packets acked; dupwnd 10 > 3, so dupwnd -= 3 - 1 -> 8; cwnd stays 5.5.
    assert_eq!(dupwnd(&s), 8);
    assert_eq!(s.cwnd(), 5.5);
    assert_eq!(s.ssthresh(), 5);
    // Then send_much with maxburst 2: window 5 + 8 = 13, 12 + 13 = 25 = t_seqno -> 25 only.
    assert_eq!(seqs(&segs), vec![13, 25]);
    // dupacks is not reset by a partial ACK (ns-2 partialnewack leaves it).
    assert_eq!(s.state.dupacks, 10);
}

#[test]
fn a_partial_ack_covering_more_than_the_inflation_takes_the_rest_from_cwnd() {
    let mut s = newreno_in_fast_recovery(); // cwnd 5.5, dupwnd 3, last_ack 9
                                            // The retransmitted 10 arrives with 11..=15 in and 16 lost (the ACKs of 13..=15 were
                                            // lost on the way back): ACK 15.
    let segs = ack(&mut s, 602, 15);
    // deflate = 15 - 9 = 6 >= dupwnd 3: cwnd -= 6 - 3 -> 5.5 - 3 = 2.5; dupwnd = 1.
    assert_eq!(s.cwnd(), 2.5);
    assert_eq!(dupwnd(&s), 1);
    // Retransmit 16; window int(2.5) + 1 = 3, 15 + 3 = 18 < t_seqno 23: nothing new.
    assert_eq!(seqs(&segs), vec![16]);
    assert!(segs[0].retransmission);
    assert_eq!(s.state.last_cwnd_action, CwndAction::DupAck);
}

#[test]
fn partial_window_deflation_never_takes_cwnd_below_one() {
    let mut s = newreno_in_fast_recovery();
    // ACK 21 < recover 22: deflate 12, dupwnd 3 -> cwnd 5.5 - 9 = -3.5, floored at 1.
    let segs = ack(&mut s, 602, 21);
    assert_eq!(s.cwnd(), 1.0);
    assert_eq!(dupwnd(&s), 1);
    // Resend 22; then window int(1) + dupwnd 1 = 2, 21 + 2 = 23 = t_seqno -> 23 as well.
    assert_eq!(seqs(&segs), vec![22, 23]);
    assert!(segs[0].retransmission && !segs[1].retransmission);
}

#[test]
fn duplicate_acks_after_a_partial_ack_only_inflate_they_never_start_a_second_fast_retransmit() {
    let mut s = newreno_with_holes_at_10_13_16();
    ack(&mut s, 602, 12); // partial: resend 13, dupwnd 8, dupacks stays 10
                          // 23 and 24 (sent at 600, 601 ms) arrive: duplicates of 12, dupacks 11 and 12.
                          // They inflate (dupwnd 9, 10; window 14, 15 -> 12 + 14 = 26, 27) and send new data.
    assert_eq!(seqs(&ack(&mut s, 700, 12)), vec![26]);
    assert_eq!(seqs(&ack(&mut s, 701, 12)), vec![27]);
    // A third duplicate in a row: still only inflation, no retransmission.
    let segs = ack(&mut s, 701, 12);
    assert!(segs.iter().all(|g| !g.retransmission));
    assert_eq!(dupwnd(&s), 11);
    assert_eq!(s.stats().fast_retransmits, 1);
    assert_eq!(s.ssthresh(), 5);
    assert_eq!(s.cwnd(), 5.5);
}

#[test]
fn the_retransmission_timer_is_reset_on_the_first_partial_ack_only() {
    let mut s = newreno_with_holes_at_10_13_16();
    assert_eq!(s.rtx_deadline(), Some(ms(702))); // armed by the fast retransmit
    ack(&mut s, 602, 12);
    // First partial ACK: newtimer, RTO 0.2 s (no new sample: the timed packet 23 is not
    // yet acknowledged) -> 602 + 200.
    assert_eq!(s.rtx_deadline(), Some(ms(802)));
    ack(&mut s, 700, 12); // dup: sends 26
    ack(&mut s, 701, 12); // dup: sends 27
                          // The retransmitted 13 arrives: 14 and 15 were in, 16 is missing -> second partial ACK.
    let segs = ack(&mut s, 702, 15);
    assert_eq!(segs[0].seqno, 16);
    assert!(segs[0].retransmission);
    // deflate 3 from dupwnd 10 -> 8; window 5 + 8 = 13, 15 + 13 = 28 = t_seqno -> 28.
    assert_eq!(seqs(&segs), vec![16, 28]);
    assert_eq!(dupwnd(&s), 8);
    // newreno_changes1_: the timer keeps its first-partial deadline.
    assert_eq!(s.rtx_deadline(), Some(ms(802)));
}

// ---------------------------------------------------------------------------------------
// Leaving recovery
// ---------------------------------------------------------------------------------------

#[test]
fn a_full_ack_at_recover_exits_recovery() {
    let mut s = newreno_in_fast_recovery();
    // Only 10 was lost (the three duplicates so far came from 11, 12, 13). The duplicates
    // from 14..=20 (503..=509 ms) make dupwnd 4..=10 and, from dupwnd 9 (window 5 + 9,
    // 9 + 14 = 23), release 23 and 24; those from 21 and 22 (600, 601) release 25 and 26.
    for t in 503..=509 {
        ack(&mut s, t, 9);
    }
    ack(&mut s, 600, 9);
    ack(&mut s, 601, 9);
    assert_eq!(dupwnd(&s), 12);
    assert_eq!(s.state.t_seqno, 27);
    // The retransmitted 10 arrives: 11..=22 are in; ACK 22 >= recover 22.
    let segs = ack(&mut s, 602, 22);
    assert_eq!(dupwnd(&s), 0);
    assert_eq!(s.state.last_cwnd_action, CwndAction::Exited);
    assert_eq!(s.state.dupacks, 0);
    // No exit_recovery_fix_: cwnd is the halved 5.5, then +1/5.5 (5.5 >= ssthresh 5).
    assert!(close(s.cwnd(), 5.5 + 2.0 / 11.0), "cwnd {}", s.cwnd());
    // Window int(5.68) = 5: 22 + 5 = 27 = t_seqno -> 27 only.
    assert_eq!(seqs(&segs), vec![27]);
}

#[test]
fn after_a_full_ack_equal_to_recover_three_duplicates_do_not_fast_retransmit() {
    let mut s = newreno_in_fast_recovery();
    let segs = ack(&mut s, 602, 22); // full ACK: cwnd 5.5 + 2/11, window 5 -> 23..=27
    assert_eq!(seqs(&segs), vec![23, 24, 25, 26, 27]);
    // Careful variant: highest_ack 22 == recover 22 is not "recovered" (needs >).
    // Limited transmit still works: 28 <= 22 + 5.68 + 1, 29 <= 22 + 5.68 + 2.
    assert_eq!(seqs(&ack(&mut s, 603, 22)), vec![28]);
    assert_eq!(seqs(&ack(&mut s, 604, 22)), vec![29]);
    let segs = ack(&mut s, 605, 22);
    assert!(segs.is_empty(), "{:?}", seqs(&segs));
    assert_eq!(s.stats().fast_retransmits, 1);
    assert_eq!(s.ssthresh(), 5);
    assert_eq!(dupwnd(&s), 0);
}

#[test]
fn once_the_ack_point_passes_recover_a_third_duplicate_starts_a_new_fast_retransmit() {
    let mut s = newreno_in_fast_recovery();
    ack(&mut s, 602, 22); // exit, sends 23..=27
    ack(&mut s, 603, 23); // 23 > recover 22
    ack(&mut s, 604, 23);
    ack(&mut s, 605, 23);
    let segs = ack(&mut s, 606, 23);
    assert_eq!(segs[0].seqno, 24);
    assert!(segs[0].retransmission);
    assert_eq!(s.stats().fast_retransmits, 2);
    // Window before the cut: 5.5 + 2/11 + 1/(5.5 + 2/11) ~ 5.86; ssthresh int(2.93) = 2.
    assert_eq!(s.ssthresh(), 2);
    assert!(s.cwnd() > 2.9 && s.cwnd() < 2.95, "cwnd {}", s.cwnd());
}

#[test]
fn after_a_timeout_in_recovery_three_duplicates_below_recover_do_not_fast_retransmit() {
    let mut s = newreno_in_fast_recovery();
    s.on_timer(ms(702));
    // Timeout: dupwnd 0 first, so the window is cwnd 5.5: ssthresh int(2.75) = 2 (min 2);
    // cwnd 1; go back to 10.
    assert_eq!(seqs(&drain(&mut s)), vec![10]);
    assert_eq!(s.cwnd(), 1.0);
    assert_eq!(s.ssthresh(), 2);
    assert_eq!(dupwnd(&s), 0);
    assert_eq!(s.state.recover, 22);
    // Late duplicates of 9. Limited transmit goes on from t_seqno (11, 12: resends).
    assert_eq!(seqs(&ack(&mut s, 703, 9)), vec![11]);
    assert_eq!(seqs(&ack(&mut s, 704, 9)), vec![12]);
    // Third: highest_ack 9 <= recover 22 and NewReno never allows a repeat -> nothing.
    assert!(ack(&mut s, 705, 9).is_empty());
    assert_eq!(s.stats().fast_retransmits, 1);
    assert_eq!(s.cwnd(), 1.0);
    assert_eq!(s.ssthresh(), 2);
}
