//! RACK: loss detection by time (RFC 8985 section 6, Linux `net/ipv4/tcp_recovery.c`).
//!
//! A segment is lost once a segment sent after it has been delivered and a reordering window
//! has passed since: `remaining = rack.rtt + reo_wnd - (now - sent) <= 0`. The window is a
//! quarter of the minimum RTT, or none at all while no reordering has been seen and recovery
//! is under way or `reordering` segments are SACKed (RACK's stand-in for the duplicate-ACK
//! threshold, `tcp_rack_reo_wnd`).

use super::scoreboard::{Scoreboard, Seg, EVER_RETRANS, LOST, RETRANS, SACKED};
use super::rtt::micros;
use crate::Nanos;

/// RACK's state (`tp->rack`).
#[derive(Clone, Debug, Default)]
pub struct Rack {
    /// Send time and sequence number of the most recently sent segment known delivered
    /// (`rack.mstamp`, `rack.end_seq`).
    sent: Nanos,
    seq: i64,
    /// The RTT of the last delivered segment processed, µs (`rack.rtt_us`).
    pub rtt_us: i64,
    /// Something newly delivered since the last detection (`rack.advanced`).
    advanced: bool,
    /// Reordering seen on this connection (`tp->reord_seen`).
    pub reord_seen: u32,
}

impl Rack {
    /// A segment was newly delivered, SACKed or cumulatively acknowledged
    /// (`tcp_rack_advance`). The delivery of a retransmitted segment sooner than the minimum
    /// RTT after its retransmission is taken for its original's and ignored.
    pub fn advance(&mut self, seq: i64, seg: Seg, now: Nanos, min_rtt_us: i64) {
        let rtt_us = micros(now.saturating_sub(seg.sent));
        if seg.flags & (RETRANS | EVER_RETRANS) != 0 && rtt_us < min_rtt_us {
            return;
        }
        self.advanced = true;
        self.rtt_us = rtt_us;
        if (seg.sent, seq) > (self.sent, self.seq) {
            self.sent = seg.sent;
            self.seq = seq;
        }
    }

    /// Run the detection at the next ACK whatever it delivers (after an undo: Linux's
    /// `rack.advanced = 1`).
    pub fn force_detection(&mut self) {
        self.advanced = true;
    }

    /// The reordering window, µs (`tcp_rack_reo_wnd`).
    pub fn reo_wnd_us(&self, in_recovery: bool, sacked_out: i64, reordering: i64, min_rtt_us: i64, srtt_us: i64) -> i64 {
        if self.reord_seen == 0 && (in_recovery || sacked_out >= reordering) {
            return 0;
        }
        (min_rtt_us >> 2).min(srtt_us)
    }

    /// Mark lost what RACK finds lost (`tcp_rack_detect_loss`), if anything was delivered since
    /// the last call (`tcp_rack_mark_lost`). Returns the segments newly marked (lost
    /// retransmissions included) and, when a segment still waits out its window, the delay
    /// after which the reordering timer should run the detection again.
    pub fn mark_lost(&mut self, board: &mut Scoreboard, now: Nanos, reo_wnd_us: i64) -> (u64, Option<i64>) {
        if !self.advanced {
            return (0, None);
        }
        self.advanced = false;
        self.detect(board, now, reo_wnd_us)
    }

    /// The detection itself, also run by the reordering timer.
    pub fn detect(&mut self, board: &mut Scoreboard, now: Nanos, reo_wnd_us: i64) -> (u64, Option<i64>) {
        let mut lost = Vec::new();
        let mut wait = 0i64;
        for (seq, s) in board.iter() {
            // Skip what is SACKed, and what is marked lost and not yet retransmitted.
            if s.has(SACKED) || (s.has(LOST) && !s.has(RETRANS)) {
                continue;
            }
            // Only segments sent before the most recently sent delivered one. A segment sent
            // once that is not is the first of the rest: every segment after it was first sent
            // later, and resent later still (`tsorted_sent_queue`'s order, here by sequence).
            if (s.sent, seq) >= (self.sent, self.seq) {
                if s.has(EVER_RETRANS) {
                    continue;
                }
                break;
            }
            let remaining = self.rtt_us + reo_wnd_us - micros(now.saturating_sub(s.sent));
            if remaining <= 0 {
                lost.push(seq);
            } else {
                wait = wait.max(remaining);
            }
        }
        let marked = lost.into_iter().filter(|&seq| board.mark_lost(seq)).count() as u64;
        (marked, (wait > 0).then_some(wait))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hole_is_lost_once_a_later_segment_is_delivered_and_the_window_has_passed() {
        let mut b = Scoreboard::new(1);
        for t in [0, 1_000_000, 2_000_000] {
            b.push_new(t);
        }
        let mut r = Rack::default();
        // Segment 3 (sent at 2 ms) is SACKed at 42 ms: RTT 40 ms.
        let now = 42_000_000;
        b.sack(3, 4, |seq, seg| r.advance(seq, seg, now, 40_000));
        // With a 10 ms window segment 1 (sent at 0) waits until 40 + 10 ms after its send.
        let (lost, wait) = r.mark_lost(&mut b, now, 10_000);
        assert_eq!(lost, 0);
        assert_eq!(wait, Some(9_000), "segment 1 waits 40 + 10 - 42 ms, segment 2 (sent 1 ms later) 9 ms");
        let (lost, wait) = r.detect(&mut b, 50_000_000, 10_000);
        assert_eq!((lost, wait), (1, Some(1_000)));
        let (lost, _) = r.detect(&mut b, 51_000_000, 10_000);
        assert_eq!(lost, 1);
        assert_eq!(b.lost_out, 2);
    }

    #[test]
    fn without_reordering_the_window_closes_in_recovery_and_at_the_duplicate_threshold() {
        let r = Rack::default();
        assert_eq!(r.reo_wnd_us(false, 2, 3, 40_000, 50_000), 10_000);
        assert_eq!(r.reo_wnd_us(false, 3, 3, 40_000, 50_000), 0);
        assert_eq!(r.reo_wnd_us(true, 0, 3, 40_000, 50_000), 0);
        let seen = Rack { reord_seen: 1, ..Default::default() };
        assert_eq!(seen.reo_wnd_us(true, 9, 3, 40_000, 5_000), 5_000, "bounded by srtt");
    }

    #[test]
    fn a_retransmission_acknowledged_sooner_than_the_minimum_rtt_is_taken_for_its_original() {
        let mut r = Rack::default();
        let seg = Seg { sent: 100_000_000, flags: EVER_RETRANS };
        r.advance(5, seg, 110_000_000, 40_000);
        assert_eq!(r.rtt_us, 0);
        r.advance(5, seg, 150_000_000, 40_000);
        assert_eq!(r.rtt_us, 50_000);
    }
}
