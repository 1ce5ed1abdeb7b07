//! The sender's scoreboard: what Linux keeps per segment between `snd_una` and `snd_nxt`
//! (the `sacked` bits of each skb and its last transmission time) and the counts
//! `tcp_packets_in_flight` reads (`packets_out`, `sacked_out`, `lost_out`, `retrans_out`).
//!
//! Segments are whole packets numbered as the senders here number them; a SACK block is a
//! half-open range of them. The rules are those of `tcp_sacktag_one`, `tcp_clean_rtx_queue`
//! and `tcp_mark_skb_lost` (`net/ipv4/tcp_input.c`); RFC 2018 section 3 defines the blocks.

use crate::Nanos;
use std::collections::VecDeque;

/// Selectively acknowledged (`TCPCB_SACKED_ACKED`).
pub const SACKED: u8 = 1;
/// A retransmission of it is believed in flight (`TCPCB_SACKED_RETRANS`).
pub const RETRANS: u8 = 2;
/// Marked lost (`TCPCB_LOST`).
pub const LOST: u8 = 4;
/// Retransmitted at least once (`TCPCB_EVER_RETRANS`).
pub const EVER_RETRANS: u8 = 8;

/// One segment on the scoreboard.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Seg {
    /// When it was last (re)transmitted (`skb_mstamp`).
    pub sent: Nanos,
    pub flags: u8,
}

impl Seg {
    pub fn has(&self, flag: u8) -> bool {
        self.flags & flag != 0
    }
}

/// What one cumulative ACK removed from the scoreboard (`tcp_clean_rtx_queue`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cleaned {
    /// Segments newly delivered: acknowledged now and not SACKed before.
    pub delivered: i64,
    /// Send times of the oldest and newest of those never retransmitted (`first_ackt`,
    /// `last_ackt`), for RTT samples.
    pub first_sent: Option<Nanos>,
    pub last_sent: Option<Nanos>,
    /// A retransmitted segment was among those acknowledged (`FLAG_RETRANS_DATA_ACKED`):
    /// Karn's rule voids this ACK's RTT samples.
    pub retrans_acked: bool,
    /// The lowest newly delivered segment never retransmitted (F-RTO's evidence).
    pub lowest_original: Option<i64>,
}

/// What SACK blocks newly marked (`tcp_sacktag_write_queue`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tagged {
    /// Segments newly SACKed.
    pub sacked: i64,
    /// Send times of the oldest and newest newly SACKed segments never retransmitted
    /// (`first_sackt`, `last_sackt`).
    pub first_sent: Option<Nanos>,
    pub last_sent: Option<Nanos>,
    /// The lowest newly SACKed segment never retransmitted (F-RTO's evidence).
    pub lowest_original: Option<i64>,
}

/// The segments in flight from `una` on, and Linux's counts over them.
#[derive(Clone, Debug, Default)]
pub struct Scoreboard {
    /// Segment `una + i` is `segs[i]`.
    segs: VecDeque<Seg>,
    /// The first unacknowledged segment (`snd_una`).
    pub una: i64,
    pub sacked_out: i64,
    pub lost_out: i64,
    pub retrans_out: i64,
    /// One past the highest SACKed segment (`tcp_highest_sack_seq`), `una` when none.
    pub highest_sack: i64,
}

impl Scoreboard {
    pub fn new(una: i64) -> Self {
        Scoreboard { una, highest_sack: una, ..Default::default() }
    }

    /// Segments sent and not cumulatively acknowledged (`packets_out`).
    pub fn packets_out(&self) -> i64 {
        self.segs.len() as i64
    }

    /// One past the last segment sent (`snd_nxt`).
    pub fn nxt(&self) -> i64 {
        self.una + self.packets_out()
    }

    /// Linux's pipe (`tcp_packets_in_flight`): segments out, less those SACKed or lost, plus
    /// retransmissions in flight.
    pub fn in_flight(&self) -> i64 {
        self.packets_out() - (self.sacked_out + self.lost_out) + self.retrans_out
    }

    pub fn get(&self, seq: i64) -> Option<&Seg> {
        usize::try_from(seq - self.una).ok().and_then(|i| self.segs.get(i))
    }

    fn get_mut(&mut self, seq: i64) -> Option<&mut Seg> {
        usize::try_from(seq - self.una).ok().and_then(|i| self.segs.get_mut(i))
    }

    /// The segments with their sequence numbers, oldest first.
    pub fn iter(&self) -> impl Iterator<Item = (i64, &Seg)> {
        let una = self.una;
        self.segs.iter().enumerate().map(move |(i, s)| (una + i as i64, s))
    }

    /// A new segment `nxt()` leaves at `now`.
    pub fn push_new(&mut self, now: Nanos) {
        self.segs.push_back(Seg { sent: now, flags: 0 });
    }

    /// Segment `seq` is retransmitted at `now` (`tcp_retransmit_skb`): a retransmission in
    /// flight, and ever retransmitted.
    pub fn retransmit(&mut self, seq: i64, now: Nanos) {
        let Some(s) = self.get_mut(seq) else { return };
        let fresh = !s.has(RETRANS);
        s.flags |= RETRANS | EVER_RETRANS;
        s.sent = now;
        if fresh {
            self.retrans_out += 1;
        }
    }

    /// Forget every loss mark (`tcp_undo_cwnd_reduction` with `unmark_loss`): the losses were
    /// spurious. Retransmissions in flight stay counted.
    pub fn unmark_lost(&mut self) {
        for s in self.segs.iter_mut() {
            s.flags &= !LOST;
        }
        self.lost_out = 0;
    }

    /// Segment `seq` is sent again as a tail loss probe (`__tcp_retransmit_skb` without
    /// `tcp_retransmit_skb`'s accounting): ever retransmitted, not counted in flight.
    pub fn touch(&mut self, seq: i64, now: Nanos) {
        if let Some(s) = self.get_mut(seq) {
            s.flags |= EVER_RETRANS;
            s.sent = now;
        }
    }

    /// Mark `seq` lost (`tcp_mark_skb_lost`): never a SACKed one; a lost retransmission loses
    /// its in-flight retransmission (to be sent again). Returns whether anything changed.
    pub fn mark_lost(&mut self, seq: i64) -> bool {
        let Some(s) = self.get_mut(seq) else { return false };
        if s.has(SACKED) {
            return false;
        }
        if s.has(LOST) {
            if s.has(RETRANS) {
                s.flags &= !RETRANS;
                self.retrans_out -= 1;
                return true;
            }
            return false;
        }
        s.flags |= LOST;
        self.lost_out += 1;
        true
    }

    /// The SACK block [lo, hi) arrived (`tcp_sacktag_one` for each segment newly in it).
    /// `on_sacked(seq, seg)` sees each newly SACKed segment before it is tagged (RACK's
    /// advance, reordering detection).
    pub fn sack(&mut self, lo: i64, hi: i64, mut on_sacked: impl FnMut(i64, Seg)) -> Tagged {
        let mut t = Tagged::default();
        let (lo, hi) = (lo.max(self.una), hi.min(self.nxt()));
        for seq in lo..hi {
            let i = (seq - self.una) as usize;
            let s = self.segs[i];
            if s.has(SACKED) {
                continue;
            }
            on_sacked(seq, s);
            let mut flags = s.flags;
            if flags & RETRANS != 0 {
                // A retransmission that was lost and is now SACKed: both marks go.
                if flags & LOST != 0 {
                    flags &= !(LOST | RETRANS);
                    self.lost_out -= 1;
                    self.retrans_out -= 1;
                }
            } else {
                if flags & EVER_RETRANS == 0 {
                    t.lowest_original.get_or_insert(seq);
                    t.first_sent.get_or_insert(s.sent);
                    t.last_sent = Some(t.last_sent.map_or(s.sent, |l: Nanos| l.max(s.sent)));
                }
                if flags & LOST != 0 {
                    flags &= !LOST;
                    self.lost_out -= 1;
                }
            }
            self.segs[i].flags = flags | SACKED;
            self.sacked_out += 1;
            t.sacked += 1;
            self.highest_sack = self.highest_sack.max(seq + 1);
        }
        t
    }

    /// The cumulative ACK point moved to `una` (every segment below it arrived).
    /// `on_acked(seq, seg)` sees each segment removed that was not SACKed before (RACK's
    /// advance).
    pub fn ack(&mut self, una: i64, mut on_acked: impl FnMut(i64, Seg)) -> Cleaned {
        let mut c = Cleaned::default();
        while self.una < una {
            let Some(s) = self.segs.pop_front() else {
                self.una = una;
                break;
            };
            let seq = self.una;
            self.una += 1;
            if s.has(RETRANS) {
                self.retrans_out -= 1;
            }
            if s.has(RETRANS) || s.has(EVER_RETRANS) {
                c.retrans_acked = true;
            } else if !s.has(SACKED) {
                c.lowest_original.get_or_insert(seq);
                c.first_sent.get_or_insert(s.sent);
                c.last_sent = Some(s.sent);
            }
            if s.has(SACKED) {
                self.sacked_out -= 1;
            } else {
                c.delivered += 1;
                on_acked(seq, s);
            }
            if s.has(LOST) {
                self.lost_out -= 1;
            }
        }
        self.highest_sack = self.highest_sack.max(self.una);
        c
    }

    /// The counts agree with the marks (tests, and debug builds after every ACK).
    #[cfg(any(test, debug_assertions))]
    pub fn check(&self) {
        let count = |f: u8| self.segs.iter().filter(|s| s.has(f)).count() as i64;
        assert_eq!(self.sacked_out, count(SACKED));
        assert_eq!(self.lost_out, count(LOST));
        assert_eq!(self.retrans_out, count(RETRANS));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board(n: i64) -> Scoreboard {
        let mut b = Scoreboard::new(1);
        for t in 0..n {
            b.push_new(t as Nanos);
        }
        b
    }

    #[test]
    fn sacked_and_lost_segments_leave_the_pipe_and_retransmissions_join_it() {
        let mut b = board(10);
        assert_eq!(b.in_flight(), 10);
        b.sack(3, 6, |_, _| {});
        assert_eq!((b.sacked_out, b.in_flight()), (3, 7));
        assert!(b.mark_lost(1));
        assert!(b.mark_lost(2));
        assert!(!b.mark_lost(4), "a SACKed segment is never marked lost");
        assert_eq!(b.in_flight(), 5);
        b.retransmit(1, 20);
        assert_eq!((b.retrans_out, b.in_flight()), (1, 6));
        b.check();
    }

    #[test]
    fn a_cumulative_ack_counts_what_it_newly_delivers_and_voids_samples_of_retransmitted_data() {
        let mut b = board(6);
        b.sack(3, 5, |_, _| {});
        let c = b.ack(3, |_, _| {});
        assert_eq!((c.delivered, c.first_sent, c.last_sent, c.retrans_acked), (2, Some(0), Some(1), false));
        b.mark_lost(5);
        b.retransmit(5, 9);
        let c = b.ack(7, |_, _| {});
        assert_eq!(c.delivered, 2, "4 and 5 were SACKed already, 5 and 6 are new");
        assert!(c.retrans_acked);
        assert_eq!((b.packets_out(), b.sacked_out, b.lost_out, b.retrans_out), (0, 0, 0, 0));
        b.check();
    }

    #[test]
    fn a_lost_retransmission_is_marked_again_and_leaves_the_pipe() {
        let mut b = board(4);
        b.mark_lost(1);
        b.retransmit(1, 10);
        assert_eq!(b.in_flight(), 4);
        assert!(b.mark_lost(1), "the retransmission is lost too");
        assert_eq!((b.retrans_out, b.lost_out, b.in_flight()), (0, 1, 3));
        b.check();
    }

    #[test]
    fn sack_blocks_outside_the_window_change_nothing() {
        let mut b = board(4);
        let t = b.sack(-5, 1, |_, _| {});
        assert_eq!(t.sacked, 0);
        let t = b.sack(5, 9, |_, _| {});
        assert_eq!(t.sacked, 0);
        assert_eq!(b.highest_sack, 1);
        b.check();
    }
}
