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
/// Reports kept for ACKs in flight; older ones (their ACKs lost) are dropped. Well below half
/// the 16-bit report numbers, so that [`LinuxReceiver::take`] tells older from newer.
const KEPT_REPORTS: usize = 1 << 14;
/// `tcp_comp_sack_nr`: ACKs compressed into one at most.
const MAX_COMPRESSED_ACKS: u32 = 44;
/// `TCP_SACK_BLOCKS_EXPECTED`: blocks a compressed ACK may leave out of date.
const SACK_BLOCKS_EXPECTED: usize = 2;
/// `TCP_RTO_MIN` and `TCP_TIMEOUT_INIT`, for the receiver's own RTO.
const RTO_MIN: Nanos = 200_000_000;
const INITIAL_RTO: Nanos = 1_000_000_000;

/// One segment's arrival, as the receiver sees it: ns-2's sink keeps the in-order point and the
/// data held beyond it.
#[derive(Clone, Copy, Debug)]
pub struct Arrival {
    pub seq: i64,
    /// Its timestamp value, ms.
    pub tsval: u32,
    /// The in-order point (`rcv_nxt`) before and after it.
    pub nxt_before: i64,
    pub nxt: i64,
    /// Data was held out of order before it, and is after it.
    pub had_out_of_order: bool,
    pub out_of_order: bool,
    /// It is the connection's SYN.
    pub syn: bool,
}

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
    /// ACKs compressed since the last one sent (`compressed_ack`).
    compressed_acks: u32,
    /// When the SYN arrived, and the receiver's RTO (`icsk_rto`).
    syn_at: Option<Nanos>,
    rto: Nanos,
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
            compressed_acks: 0,
            syn_at: None,
            rto: INITIAL_RTO,
            ts_recent: None,
            next_report: 0,
            reports: VecDeque::new(),
        }
    }

    /// A segment arrived at `now` ([`Arrival`]): the ACK to send at once, if any.
    pub fn receive(&mut self, a: Arrival, now: Nanos) -> Option<OutgoingAck> {
        if a.seq <= self.wup {
            self.ts_recent = Some(a.tsval);
        }
        if a.syn {
            self.syn_at = Some(now);
            self.wup = a.nxt;
            return Some(self.send(a.nxt));
        }
        let mut flushed = None;
        if a.seq < a.nxt_before {
            // Old data (`tcp_data_queue`): a DSACK, and quick ACKs again.
            if self.opts.sack {
                self.dsack = Some(a.seq);
            }
            self.enter_quickack_mode();
        } else if a.nxt > a.nxt_before {
            self.data_recv(now);
            self.blocks.retain(|&(lo, _)| lo > a.nxt);
            if a.had_out_of_order && !a.out_of_order {
                self.ack_now = true; // the last hole is filled (RFC 5681 section 4.2)
            }
        } else {
            // Out of order (`tcp_data_queue_ofo`): a duplicate of held data is reported as a
            // DSACK with its block moved first.
            let held = self.blocks.iter().any(|&(lo, hi)| lo <= a.seq && a.seq < hi);
            if held && self.opts.sack {
                self.dsack = Some(a.seq);
            }
            flushed = self.add_block(a.seq, a.nxt);
        }
        self.owed = true;
        if !self.opts.delayed_ack || self.ack_now || a.nxt - self.wup > 1 || self.quick > 0 {
            return Some(self.send(a.nxt));
        }
        if a.out_of_order {
            if !self.opts.sack {
                return Some(self.send(a.nxt)); // without SACK every out-of-order segment is a dupack
            }
            if self.dup_acks_at != a.nxt {
                self.dup_acks_at = a.nxt;
                self.dup_acks = 0;
            }
            if self.dup_acks < IMMEDIATE_OOO_ACKS || self.compressed_acks >= MAX_COMPRESSED_ACKS {
                self.dup_acks += 1;
                return Some(self.send(a.nxt));
            }
            // A compressed SACK (`tcp_comp_sack_delay_ns`).
            self.compressed_acks += 1;
            if self.deadline.is_none() {
                self.arm(now, now + COMPRESSED_SACK_DELAY, true);
            }
            return flushed;
        }
        // The delayed ACK (`tcp_send_delayed_ack`).
        let ato = self.ato.min(DELACK_MAX);
        match self.deadline {
            Some(d) if d <= now + ato / 4 => return Some(self.send(a.nxt)),
            Some(d) => self.arm(now, d.min(now + ato), false),
            None => self.arm(now, now + ato, false),
        }
        flushed
    }

    /// `tcp_enter_quickack_mode`: quick ACKs again, the timeout at its minimum.
    fn enter_quickack_mode(&mut self) {
        self.quick = self.quick.max(MAX_QUICKACKS);
        self.ato = ATO_MIN;
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

    /// `tcp_event_data_recv`: quick ACKs at the first segment and after a silence longer than
    /// the RTO, the timeout adapted to the gap (never beyond the RTO).
    fn data_recv(&mut self, now: Nanos) {
        if self.ato == 0 {
            // The receiver's RTO: its handshake's round trip (the SYN to the first data) plus
            // `TCP_RTO_MIN`, or `TCP_TIMEOUT_INIT` without a SYN.
            self.rto = self.syn_at.map_or(INITIAL_RTO, |syn| now.saturating_sub(syn) + RTO_MIN);
            self.quick = self.quick.max(MAX_QUICKACKS);
            self.ato = ATO_MIN;
        } else {
            let gap = now.saturating_sub(self.last_arrival);
            if gap <= ATO_MIN / 2 {
                self.ato = self.ato / 2 + ATO_MIN / 2;
            } else if gap < self.ato {
                self.ato = (self.ato / 2 + gap).min(self.rto);
            } else if gap > self.rto {
                self.quick = self.quick.max(MAX_QUICKACKS);
            }
        }
        self.last_arrival = now;
    }

    /// `tcp_sack_new_ofo_skb`: the block holding `seq` grows or is new, and goes first. A
    /// pending compressed ACK leaves first, with the blocks as they were, when the segment
    /// touches a block beyond the first two or adds one (`tcp_sack_compress_send_ack`): its
    /// report would otherwise miss blocks the option has no room for. Returns that ACK.
    fn add_block(&mut self, seq: i64, nxt: i64) -> Option<OutgoingAck> {
        let found = self.blocks.iter().position(|&(lo, hi)| lo <= seq + 1 && seq <= hi);
        let index = found.unwrap_or(self.blocks.len());
        let flushed = (index >= SACK_BLOCKS_EXPECTED && self.compressed_acks > 0 && self.opts.sack).then(|| {
            self.compressed_acks -= 1;
            self.send(nxt)
        });
        if let Some(i) = found {
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
        flushed
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
        self.compressed_acks = 0;
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

    /// Segment `seq` moving the in-order point from `nxt_before` to `nxt`, with data held out
    /// of order before and after as given.
    fn arrival(seq: i64, nxt_before: i64, nxt: i64, held: (bool, bool)) -> Arrival {
        Arrival { seq, tsval: 0, nxt_before, nxt, had_out_of_order: held.0, out_of_order: held.1, syn: false }
    }

    /// Feed segments in order from `from` with 1 ms gaps; returns which got an ACK at once.
    fn in_order(r: &mut LinuxReceiver, from: i64, n: i64, t0: Nanos) -> Vec<bool> {
        (from..from + n).map(|seq| r.receive(arrival(seq, seq, seq + 1, (false, false)), t0 + (seq - from) as Nanos * 1_000_000).is_some()).collect()
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
        assert!(r.receive(arrival(16, 16, 17, (false, false)), 100_000_000).is_none());
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
            let ack = r.receive(arrival(seq, 20, 20, (seq != 21, true)), 50_000_000).expect("immediate");
            assert_eq!(ack.cum, 19);
            r.take(ack.report);
        }
        let ack = r.receive(arrival(25, 20, 20, (true, true)), 51_000_000);
        assert!(ack.is_none(), "the fourth ACK at one point is compressed");
        let ack = r.on_timer(20).unwrap();
        let report = r.take(ack.report).unwrap();
        assert_eq!(report.blocks(), &[(24, 26), (21, 23)]);
        assert_eq!(ack.option_bytes, 20);
        // The retransmission fills the hole: an immediate ACK of everything.
        let ack = r.receive(arrival(20, 20, 23, (true, true)), 60_000_000).unwrap();
        assert_eq!(ack.cum, 22);
        let report = r.take(ack.report).unwrap();
        assert_eq!(report.blocks(), &[(24, 26)]);
    }

    #[test]
    fn duplicate_data_is_reported_as_a_dsack_first() {
        let mut r = receiver();
        in_order(&mut r, 0, 20, 0);
        let ack = r.receive(arrival(5, 20, 20, (false, false)), 30_000_000).expect("a duplicate is acknowledged at once");
        let report = r.take(ack.report).unwrap();
        assert_eq!(report.dsack, Some(5));
    }

    #[test]
    fn a_pending_compressed_ack_leaves_before_a_third_block_would_push_one_out() {
        let mut r = receiver();
        in_order(&mut r, 0, 20, 0);
        // Holes at 20, 23: blocks (21, 23) and (24, 25), then 25 is compressed.
        for (seq, held) in [(21, false), (22, true), (24, true)] {
            r.receive(arrival(seq, 20, 20, (held, true)), 50_000_000).expect("immediate");
        }
        assert!(r.receive(arrival(25, 20, 20, (true, true)), 50_100_000).is_none());
        // 27 opens a third block: the compressed ACK goes first, without it.
        let ack = r.receive(arrival(27, 20, 20, (true, true)), 50_200_000).expect("the pending ACK");
        assert_eq!(r.take(ack.report).unwrap().blocks(), &[(24, 26), (21, 23)]);
        assert!(r.deadline.is_some(), "27's own ACK is compressed in turn");
    }

    #[test]
    fn a_duplicate_of_held_data_is_a_dsack_without_quick_acks() {
        let mut r = receiver();
        in_order(&mut r, 0, 20, 0);
        for (seq, held) in [(21, false), (22, true), (23, true)] {
            r.receive(arrival(seq, 20, 20, (held, true)), 50_000_000).expect("immediate");
        }
        assert!(r.receive(arrival(22, 20, 20, (true, true)), 50_100_000).is_none(), "compressed, not a quick ACK");
        let ack = r.on_timer(20).unwrap();
        assert_eq!(r.take(ack.report).unwrap().dsack, Some(22));
    }

    #[test]
    fn reports_of_lost_acks_are_dropped_and_an_overtaken_ack_finds_none() {
        let mut r = receiver();
        let ids: Vec<u16> = (0..3).map(|seq| r.receive(arrival(seq, seq, seq + 1, (false, false)), 0).unwrap().report).collect();
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
