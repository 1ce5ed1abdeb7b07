//! Linux's receiver, beside ns-2's sink: when it acknowledges and what its ACKs report
//! (`net/ipv4/tcp_input.c`: `tcp_event_data_recv`, `__tcp_ack_snd_check`,
//! `tcp_sack_new_ofo_skb`, `tcp_dsack_set`; `net/ipv4/tcp_output.c`: `tcp_send_delayed_ack`).
//!
//! - **When** (with `tcp.linux.delayed_ack`; else every segment is acknowledged at once): at
//!   once when more than one full segment arrived in order since the last ACK (so every second
//!   segment), during quick-ACK mode (16 ACKs at the start, and after duplicate data), when a
//!   segment fills the last hole, and for the first three out-of-order segments at one
//!   cumulative point; later out-of-order ACKs are compressed to one per millisecond
//!   (`tcp_comp_sack_delay_ns`); otherwise after the delayed-ACK timer, `ato`: 40 ms
//!   (`TCP_ATO_MIN`) for a bulk flow, adapted to the gaps between arrivals, doubled when the
//!   timer fires with an ACK owed, never beyond 200 ms (`TCP_DELACK_MAX`). RFC 5681 section
//!   4.2 and RFC 1122 section 4.2.3.2 leave these choices open; these are Linux's.
//! - **What** (with `tcp.linux.sack`): SACK blocks, the most recently changed first (RFC 2018
//!   section 4), at most three beside the timestamp option, a DSACK for duplicate data first
//!   (RFC 2883); the timestamp echo (RFC 7323 section 4.3: the segment at the left edge when
//!   the last ACK was sent). The ACK grows by the SACK option's bytes.
//!
//! ACKs reach the sender through a ring of reports keyed by a 16-bit number the ACK packet
//! carries ([`LinuxReceiver::take`]); a data segment carries its timestamp value.

use std::collections::VecDeque;
use vegaslab_cc::config::LinuxTcp;
use vegaslab_cc::linux::LinuxAck;
use vegaslab_cc::Nanos;

/// `TCP_ATO_MIN` and `TCP_DELACK_MIN`: 40 ms.
const ATO_MIN: Nanos = 40_000_000;
/// `tcp_delack_max`: the delayed-ACK timer's bound (200 ms less a jiffy).
const DELACK_MAX: Nanos = 199_000_000;
/// `TCP_MAX_QUICKACKS`.
const MAX_QUICKACKS: u32 = 16;
/// `TCP_FASTRETRANS_THRESH`: immediate ACKs per cumulative point with data out of order.
const IMMEDIATE_OOO_ACKS: u32 = 3;
/// `tcp_comp_sack_delay_ns`: the delay of a compressed SACK.
const COMPRESSED_SACK_DELAY: Nanos = 1_000_000;
/// SACK blocks kept (`TCP_NUM_SACKS`).
const KEPT_BLOCKS: usize = 4;
/// Reports kept for ACKs in flight; older ones (their ACKs lost) are dropped.
const KEPT_REPORTS: usize = 1 << 15;

/// An ACK the receiver sends now: its cumulative point, the number of its report and the
/// bytes its SACK option adds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutgoingAck {
    pub cum: i64,
    pub report: u16,
    pub option_bytes: u32,
}

#[derive(Clone, Debug)]
pub struct LinuxReceiver {
    opts: LinuxTcp,
    /// SACK blocks [lo, hi), most recent first.
    blocks: Vec<(i64, i64)>,
    dsack: Option<i64>,
    /// `rcv_nxt` when the last ACK was sent (`rcv_wup`).
    wup: i64,
    quick: u32,
    /// The delayed-ACK timeout; 0 until the first data segment.
    ato: Nanos,
    last_arrival: Nanos,
    /// An ACK must go at the next decision (`ICSK_ACK_NOW`).
    ack_now: bool,
    /// Data arrived that no ACK has covered yet (`ICSK_ACK_SCHED`).
    owed: bool,
    /// When the pending delayed or compressed ACK goes, and whether it is a compressed one.
    pub deadline: Option<Nanos>,
    compressed: bool,
    /// When the deadline was set (the order of events at one instant).
    pub armed_at: Nanos,
    dup_acks: u32,
    dup_acks_at: i64,
    /// The timestamp the next ACK echoes (`ts_recent`), milliseconds.
    ts_recent: Option<u32>,
    next_report: u16,
    reports: VecDeque<(u16, LinuxAck)>,
}

impl LinuxReceiver {
    pub fn new(opts: LinuxTcp) -> Self {
        LinuxReceiver {
            opts,
            blocks: Vec::new(),
            dsack: None,
            wup: 0,
            quick: 0,
            ato: 0,
            last_arrival: 0,
            ack_now: false,
            owed: false,
            deadline: None,
            compressed: false,
            armed_at: 0,
            dup_acks: 0,
            dup_acks_at: -1,
            ts_recent: None,
            next_report: 0,
            reports: VecDeque::new(),
        }
    }

    /// Segment `seq` with timestamp value `tsval` (ms) arrived at `now`; the in-order
    /// point moved from `nxt_before` to `nxt` (ns-2's sink keeps it). `syn`: the segment is
    /// the connection's SYN. Returns the ACK to send at once, if any.
    pub fn receive(&mut self, seq: i64, tsval: u32, nxt_before: i64, nxt: i64, syn: bool, now: Nanos) -> Option<OutgoingAck> {
        if seq <= self.wup {
            self.ts_recent = Some(tsval);
        }
        if syn {
            self.wup = nxt;
            return Some(self.send(nxt));
        }
        let duplicate = seq < nxt_before || self.blocks.iter().any(|&(lo, hi)| lo <= seq && seq < hi);
        if duplicate {
            // `tcp_dsack_set`, `tcp_enter_quickack_mode`.
            if self.opts.sack {
                self.dsack = Some(seq);
            }
            self.quick = self.quick.max(MAX_QUICKACKS);
            self.ato = ATO_MIN;
        } else if nxt > nxt_before {
            self.data_recv(now);
            let had_holes = !self.blocks.is_empty();
            self.blocks.retain(|&(lo, _)| lo > nxt);
            if had_holes && self.blocks.is_empty() {
                self.ack_now = true; // the last hole is filled (RFC 5681 section 4.2)
            }
        } else {
            self.add_block(seq);
        }
        self.owed = true;
        if !self.opts.delayed_ack || self.ack_now || nxt - self.wup > 1 || self.quick > 0 {
            return Some(self.send(nxt));
        }
        if !self.blocks.is_empty() && self.opts.sack {
            if self.dup_acks_at != nxt {
                self.dup_acks_at = nxt;
                self.dup_acks = 0;
            }
            if self.dup_acks < IMMEDIATE_OOO_ACKS {
                self.dup_acks += 1;
                return Some(self.send(nxt));
            }
            if self.deadline.is_none() {
                self.arm(now, now + COMPRESSED_SACK_DELAY, true);
            }
            return None;
        }
        if !self.opts.sack && !self.blocks.is_empty() {
            return Some(self.send(nxt)); // without SACK every out-of-order segment is a dupack
        }
        // The delayed ACK (`tcp_send_delayed_ack`).
        let ato = self.ato.min(DELACK_MAX);
        match self.deadline {
            Some(d) if d <= now + ato / 4 => return Some(self.send(nxt)),
            Some(d) => self.arm(now, d.min(now + ato), false),
            None => self.arm(now, now + ato, false),
        }
        None
    }

    fn arm(&mut self, now: Nanos, at: Nanos, compressed: bool) {
        self.deadline = Some(at);
        self.compressed = compressed;
        self.armed_at = now;
    }

    /// The delayed or compressed ACK is due (`tcp_delack_timer_handler`): the ACK owed, if any.
    pub fn on_timer(&mut self, nxt: i64) -> Option<OutgoingAck> {
        self.deadline = None;
        if !self.owed {
            return None;
        }
        if !self.compressed {
            self.ato = (self.ato * 2).min(DELACK_MAX); // a delayed ACK was missed: inflate
        }
        Some(self.send(nxt))
    }

    /// `tcp_event_data_recv`: quick ACKs at the first segment, the timeout adapted to the gap.
    fn data_recv(&mut self, now: Nanos) {
        if self.ato == 0 {
            self.quick = self.quick.max(MAX_QUICKACKS);
            self.ato = ATO_MIN;
        } else {
            let gap = now.saturating_sub(self.last_arrival);
            if gap <= ATO_MIN / 2 {
                self.ato = self.ato / 2 + ATO_MIN / 2;
            } else if gap < self.ato {
                self.ato = (self.ato / 2 + gap).min(DELACK_MAX);
            }
        }
        self.last_arrival = now;
    }

    /// `tcp_sack_new_ofo_skb`: the block holding `seq` grows or is new, and goes first.
    fn add_block(&mut self, seq: i64) {
        if let Some(i) = self.blocks.iter().position(|&(lo, hi)| seq + 1 == lo || seq == hi) {
            let (lo, hi) = self.blocks.remove(i);
            let mut block = (lo.min(seq), hi.max(seq + 1));
            // Coalesce with any block the grown one now touches.
            self.blocks.retain(|&(l, h)| {
                let touches = l <= block.1 && h >= block.0;
                if touches {
                    block = (block.0.min(l), block.1.max(h));
                }
                !touches
            });
            self.blocks.insert(0, block);
        } else {
            self.blocks.truncate(KEPT_BLOCKS - 1);
            self.blocks.insert(0, (seq, seq + 1));
        }
    }

    /// Send an ACK now: its report is kept for the sender.
    fn send(&mut self, nxt: i64) -> OutgoingAck {
        let mut report = LinuxAck { echo_ms: self.ts_recent.filter(|_| self.opts.timestamps), ..Default::default() };
        let mut option_blocks = 0;
        if self.opts.sack {
            report.dsack = self.dsack.take();
            // Beside the timestamp option three blocks fit, a DSACK among them.
            let room = if self.opts.timestamps { 3 } else { 4 } - usize::from(report.dsack.is_some());
            let n = self.blocks.len().min(room);
            report.blocks[..n].copy_from_slice(&self.blocks[..n]);
            report.count = n as u8;
            option_blocks = n + usize::from(report.dsack.is_some());
        }
        self.wup = nxt;
        self.owed = false;
        self.ack_now = false;
        self.deadline = None;
        if self.quick > 0 {
            self.quick -= 1;
            if self.quick == 0 {
                self.ato = ATO_MIN;
            }
        }
        let id = self.next_report;
        self.next_report = self.next_report.wrapping_add(1);
        if self.reports.len() >= KEPT_REPORTS {
            self.reports.pop_front();
        }
        self.reports.push_back((id, report));
        OutgoingAck { cum: nxt - 1, report: id, option_bytes: sack_option_bytes(option_blocks) }
    }

    /// The report of ACK `id`, as it reaches the sender; reports of earlier ACKs (lost on the
    /// way) are dropped. `None` for an ACK whose report is gone (overtaken on a rerouted path).
    pub fn take(&mut self, id: u16) -> Option<LinuxAck> {
        while let Some(&(front, report)) = self.reports.front() {
            if front == id {
                self.reports.pop_front();
                return Some(report);
            }
            if (id.wrapping_sub(front) as i16) < 0 {
                return None; // the front is newer than this ACK
            }
            self.reports.pop_front();
        }
        None
    }
}

/// The SACK option's bytes on the wire for `blocks` blocks: kind and length, 8 bytes a
/// block, padded to a 4-byte boundary with NOPs (RFC 2018 section 3).
pub fn sack_option_bytes(blocks: usize) -> u32 {
    if blocks == 0 {
        0
    } else {
        ((2 + 8 * blocks as u32) + 3) / 4 * 4
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn receiver() -> LinuxReceiver {
        LinuxReceiver::new(LinuxTcp::default())
    }

    /// Feed segments in order from `from` with 1 ms gaps; returns which got an ACK at once.
    fn in_order(r: &mut LinuxReceiver, from: i64, n: i64, t0: Nanos) -> Vec<bool> {
        (from..from + n).map(|seq| r.receive(seq, 0, seq, seq + 1, false, t0 + (seq - from) as Nanos * 1_000_000).is_some()).collect()
    }

    #[test]
    fn the_first_sixteen_segments_are_acknowledged_at_once_then_every_second_one() {
        let mut r = receiver();
        let acks = in_order(&mut r, 0, 24, 0);
        assert!(acks[..16].iter().all(|a| *a));
        assert_eq!(&acks[16..], &[false, true, false, true, false, true, false, true]);
    }

    #[test]
    fn a_lone_segment_waits_for_the_forty_millisecond_timer() {
        let mut r = receiver();
        in_order(&mut r, 0, 16, 0);
        assert!(r.receive(16, 0, 16, 17, false, 100_000_000).is_none());
        assert_eq!(r.deadline, Some(140_000_000));
        let ack = r.on_timer(17).expect("an ACK was owed");
        assert_eq!(ack.cum, 16);
        assert_eq!(r.on_timer(17), None, "nothing owed any more");
    }

    #[test]
    fn out_of_order_data_is_reported_most_recent_block_first_and_a_filled_hole_acked_at_once() {
        let mut r = receiver();
        in_order(&mut r, 0, 20, 0);
        // 20 is lost; 21, 22 and 24 arrive.
        for seq in [21, 22, 24] {
            let ack = r.receive(seq, 0, 20, 20, false, 50_000_000).expect("immediate");
            assert_eq!(ack.cum, 19);
            r.take(ack.report);
        }
        let ack = r.receive(25, 0, 20, 20, false, 51_000_000);
        assert!(ack.is_none(), "the fourth ACK at one point is compressed");
        let ack = r.on_timer(20).unwrap();
        let report = r.take(ack.report).unwrap();
        assert_eq!(report.blocks(), &[(24, 26), (21, 23)]);
        assert_eq!(ack.option_bytes, 20);
        // The retransmission fills the hole: an immediate ACK of everything.
        let ack = r.receive(20, 0, 20, 23, false, 60_000_000).unwrap();
        assert_eq!(ack.cum, 22);
        let report = r.take(ack.report).unwrap();
        assert_eq!(report.blocks(), &[(24, 26)]);
    }

    #[test]
    fn duplicate_data_is_reported_as_a_dsack_first() {
        let mut r = receiver();
        in_order(&mut r, 0, 20, 0);
        let ack = r.receive(5, 0, 20, 20, false, 30_000_000).expect("a duplicate is acknowledged at once");
        let report = r.take(ack.report).unwrap();
        assert_eq!(report.dsack, Some(5));
    }

    #[test]
    fn reports_of_lost_acks_are_dropped_and_an_overtaken_ack_finds_none() {
        let mut r = receiver();
        let ids: Vec<u16> = (0..3).map(|seq| r.receive(seq, 0, seq, seq + 1, false, 0).unwrap().report).collect();
        assert!(r.take(ids[2]).is_some());
        assert!(r.take(ids[0]).is_none());
    }

    #[test]
    fn without_delayed_acks_every_segment_is_acknowledged() {
        let mut r = LinuxReceiver::new(LinuxTcp { delayed_ack: false, ..Default::default() });
        assert!(in_order(&mut r, 0, 40, 0).iter().all(|a| *a));
    }

    #[test]
    fn the_sack_option_is_padded_to_four_bytes() {
        assert_eq!([0, 1, 2, 3, 4].map(sack_option_bytes), [0, 12, 20, 28, 36]);
    }
}
