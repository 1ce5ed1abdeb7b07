//! The propagation pipe: accepted packets by arrival time at the far node, the head whose
//! delivery the channel's one pending event stands for, and the cache hints for it.

use super::{prefetch, Channel, Waiting, NOT_SCHEDULED, WAITING_AHEAD};
use crate::packet::Packet;
use vegaslab_cc::Nanos;

/// A packet in the pipe: when it reaches the far node, when its transmission starts, in
/// nanoseconds and on ns-2's double clock (where ns-2 schedules its arrival: see `event`).
#[derive(Clone, Copy, Debug)]
pub(super) struct Piped {
    pub(super) at: Nanos,
    pub(super) start: Nanos,
    pub(super) start_clock: f64,
    pub(super) packet: Packet,
}

impl Channel {
    /// Put an accepted packet in the pipe: it reaches the far node at `at`, its transmission
    /// starts at `start`. Returns whether it became the head (the pipe was empty, or it
    /// overtook every packet), the only case in which a scheduled delivery may change.
    pub fn push_pipe(&mut self, at: Nanos, start: Nanos, start_clock: f64, packet: Packet) -> bool {
        let piped = Piped { at, start, start_clock, packet };
        if !self.pipe.is_empty() && at < self.tail_at {
            // The delay fell: this packet overtakes earlier ones.
            let pos = self.pipe.partition_point(|q| q.at <= at);
            self.pipe.insert(pos, piped);
            return pos == 0;
        }
        let was_empty = self.pipe.is_empty();
        self.pipe.push_back(piped);
        self.tail_at = at;
        was_empty
    }

    /// `push_pipe` for a packet a deferred channel transmits (`dequeue_next`). Its own code,
    /// sharing neither `push_pipe` nor `VecDeque::insert` with it: a second caller of either
    /// changed how the compiler inlined them into `Simulator::hops` (benchmark 50 s slice
    /// +1.3% to +3.4% instructions).
    #[cold]
    #[inline(never)]
    pub(super) fn push_pipe_dequeued(&mut self, at: Nanos, start: Nanos, start_clock: f64, packet: Packet) {
        // Behind every packet arriving no later (a delay that fell lets it overtake some).
        let pos = if !self.pipe.is_empty() && at < self.tail_at { self.pipe.partition_point(|q| q.at <= at) } else { self.pipe.len() };
        let mut behind = self.pipe.split_off(pos);
        self.pipe.push_back(Piped { at, start, start_clock, packet });
        self.pipe.append(&mut behind);
        self.tail_at = self.pipe.back().map_or(at, |q| q.at);
    }

    /// A delivery is scheduled for this channel (it may be a superseded one).
    #[inline]
    pub fn is_scheduled(&self) -> bool {
        self.scheduled_since != NOT_SCHEDULED
    }

    /// Ask the cache for what a delivery reads first: line 3 (the pipe, `scheduled`, `to`).
    #[inline]
    pub fn prefetch_delivery(&self) {
        prefetch(std::ptr::addr_of!(self.pipe).cast());
    }

    /// Ask the cache for the waiting packet `WAITING_AHEAD` places behind the first: on a
    /// long queue (a bottleneck's) the next arrivals read the waiting queue's front, a line
    /// written long before and evicted since.
    #[inline]
    pub fn prefetch_waiting(&self) {
        if let Some(w) = self.waiting.get(WAITING_AHEAD) {
            prefetch((w as *const Waiting).cast());
        }
    }

    /// Ask the cache for the pipe's head packet (read from line 3, which should be cached).
    #[inline]
    pub fn prefetch_head(&self) {
        if let Some(q) = self.pipe.front() {
            prefetch((q as *const Piped).cast());
        }
    }

    /// No packet is waiting, in transmission or propagating (`packets` is empty).
    #[inline]
    pub fn pipe_is_empty(&self) -> bool {
        self.pipe.is_empty()
    }

    /// Packets accepted and not yet delivered (waiting, in transmission or propagating).
    pub fn packets(&self) -> impl Iterator<Item = &Packet> {
        self.pipe.iter().map(|q| &q.packet)
    }

    /// The earliest arrival still in the pipe, when that packet's transmission starts (in
    /// nanoseconds and on ns-2's double clock), and its arrival on ns-2's double clock.
    pub fn head_time(&self) -> Option<(Nanos, Nanos, f64, f64)> {
        self.pipe.front().map(|q| (q.at, q.start, q.start_clock, q.packet.clock))
    }

    /// Take the head packet if it arrives at or before `now`.
    pub fn pop_arrived(&mut self, now: Nanos) -> Option<Packet> {
        match self.pipe.front() {
            Some(q) if q.at <= now => {
                let p = q.packet;
                self.pipe.pop_front();
                Some(p)
            }
            _ => None,
        }
    }
}
