//! The dequeue-time path: a channel whose queue discipline may drop at dequeue (CoDel).
//!
//! Such a channel cannot decide a packet's hop when it arrives (`Channel::accept`): whether it
//! is sent depends on its sojourn time and on the queue behind it when it reaches the head. So
//! it holds arriving packets, in order, and decides each at its *dequeue time*: the later of
//! its arrival and the moment the transmitter falls free (the end of the previous
//! transmission, or the previous dequeue if that was a drop, which takes no link time).
//!
//! Dequeues are decided lazily but in time order: the simulator calls [`Channel::dequeue_next`]
//! for every dequeue due before a packet arrives, then holds the packet, then for the dequeues
//! due at that instant (so a packet arriving at an idle link leaves at once, as ns-2's
//! `Queue::recv` sends it), and the channel's pending event stands at its next dequeue when
//! that comes before its next delivery (`Simulator::schedule_deferred`). Within one instant a
//! dequeue sees the packets that arrived before it was decided: an arrival decides its
//! instant's dequeues after joining the queue, the channel's event those still due when it
//! runs. Every held packet arrived by the time a dequeue is decided (no dequeue waits past
//! a later arrival), so the bytes behind the head are those of the held packets.
//!
//! The waiting queue (`Channel::waiting`) keeps one entry per held packet, with no start time
//! (`Nanos::MAX`: it leaves only through `dequeue_next`), so the length samples, the occupancy
//! integrals and the maximum count held packets as they count waiting ones elsewhere. A
//! departure is counted when the transmission starts, not at acceptance: `finish` has nothing
//! to take back, and held packets at the end are the backlog.

use super::clock::{ns_of, start_clock_of};
use super::{Channel, Waiting, DEFERRED, EXACT_CLOCK, LOSSY};
use crate::packet::Packet;
use crate::queue::{aqt, Arrival, Departure, QueueDiscipline, Verdict};
use std::collections::VecDeque;
use vegaslab_cc::Nanos;

/// The packets a deferred channel holds.
#[derive(Default)]
pub(super) struct Deferred {
    /// Packets in the queue, oldest first, each with the time it joined.
    held: VecDeque<(Nanos, Packet)>,
    /// Their bytes.
    bytes: u64,
}

/// A packet leaving a deferred channel's queue (`Channel::dequeue_next`).
#[derive(Clone, Copy, Debug)]
pub struct Dequeued {
    /// The packet as it arrived at the queue.
    pub packet: Packet,
    pub enqueued_at: Nanos,
    /// When it left the queue, in nanoseconds and on ns-2's double clock.
    pub left_at: Nanos,
    pub left_clock: f64,
    pub fate: Fate,
}

/// What became of a packet leaving a deferred channel's queue.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Fate {
    /// Transmitted; reaches the far node at `arrives_at` (`clock` on ns-2's double clock).
    Sent { arrives_at: Nanos, clock: f64 },
    /// Transmitted, then lost to the packet-error model or the loss pattern; it would have
    /// arrived at `arrives_at`.
    Lost { arrives_at: Nanos, clock: f64 },
    /// Dropped by the discipline at dequeue.
    Dropped,
}

impl Channel {
    /// The queue discipline decides at dequeue: arrivals go to `hold`, not `accept`.
    #[inline]
    pub fn is_deferred(&self) -> bool {
        self.special & DEFERRED != 0
    }

    /// A packet arrives at `now` (after every dequeue due before `now`): it joins the queue if
    /// the discipline admits it. Returns whether it did (a refused packet counts as a drop).
    pub fn hold(&mut self, now: Nanos, packet: Packet) -> bool {
        self.sample_up_to(now);
        self.advance(now);
        let waiting = self.waiting.len() as u64;
        let idle_since = (waiting == 0 && self.busy_until <= now).then_some(self.busy_until);
        if self.discipline.enqueue(&Arrival { now, waiting, idle_since, bytes: packet.size }) != Verdict::Accept {
            self.stats.drops += 1;
            return false;
        }
        self.waiting.push_back(Waiting { start: Nanos::MAX, start_clock: 0.0, resume_since: 0.0, bytes: packet.size, corrupted: false });
        self.stats.max_len = self.stats.max_len.max(self.waiting.len() as u64);
        let d = self.deferred.as_deref_mut().expect("a deferred channel holds packets");
        d.held.push_back((now, packet));
        d.bytes += packet.size as u64;
        true
    }

    /// When the next dequeue is due, in nanoseconds and on ns-2's double clock; `None` when
    /// nothing is held.
    pub fn next_dequeue(&self) -> Option<(Nanos, f64)> {
        let &(at, p) = self.deferred.as_deref()?.held.front()?;
        Some((at.max(self.busy_until), start_clock_of(p.clock, self.busy_clock)))
    }

    /// Decide the next dequeue if it is due before `upto` (or at `upto`, if `inclusive`):
    /// the discipline drops the head packet or it is transmitted (put in the pipe, as
    /// `accept` would have). `None` when no dequeue is due.
    pub fn dequeue_next(&mut self, upto: Nanos, inclusive: bool) -> Option<Dequeued> {
        let (at, left_clock) = self.next_dequeue()?;
        if at > upto || (at == upto && !inclusive) {
            return None;
        }
        let d = self.deferred.as_deref_mut().expect("held");
        let (enqueued_at, packet) = d.held.pop_front().expect("held");
        d.bytes -= packet.size as u64;
        let backlog_bytes = d.bytes;
        if enqueued_at > self.busy_until {
            // The transmitter fell free before this packet came and found nothing waiting.
            self.discipline.idle(self.busy_until);
        }
        self.sample_up_to(at);
        self.stats.integrate(self.waiting.len() as u64, at);
        self.waiting.pop_front();
        let departure = Departure { now: at, enqueued_at, bytes: packet.size, backlog_bytes };
        if self.discipline.dequeue(&departure) != Verdict::Accept {
            self.stats.drops += 1;
            // A drop takes no link time: the next packet may leave at this same instant.
            (self.busy_until, self.busy_clock) = (at, left_clock);
            return Some(Dequeued { packet, enqueued_at, left_at: at, left_clock, fate: Fate::Dropped });
        }
        // Transmitted: the transmitter's times as `accept_with` sets them.
        let special = self.special;
        let ties_by_clock = special & EXACT_CLOCK == 0;
        let (tx, txt) = self.tx_times(packet.size);
        self.busy_clock = left_clock + txt;
        self.busy_until = if ties_by_clock { ns_of(self.busy_clock).max(at.saturating_add(1)) } else { at.saturating_add(tx) };
        self.stats.departures += 1;
        self.stats.bytes_sent += packet.size as u64;
        self.stats.add_busy(tx);
        let (delay, delay_clock) = self.delays_at(special, at);
        let clock = left_clock + (txt + delay_clock);
        let arrives_at = if ties_by_clock { ns_of(clock).max(self.busy_until) } else { self.busy_until.saturating_add(delay) };
        if special & LOSSY != 0 && self.loses_on_link() {
            self.stats.errors += 1;
            return Some(Dequeued { packet, enqueued_at, left_at: at, left_clock, fate: Fate::Lost { arrives_at, clock } });
        }
        let mut sent = Packet { clock, ..packet };
        if sent.probe && self.aqt_enabled {
            sent.aqt = aqt::stamped(sent.aqt, at - enqueued_at);
        }
        self.push_pipe_dequeued(arrives_at, at, left_clock, sent);
        Some(Dequeued { packet, enqueued_at, left_at: at, left_clock, fate: Fate::Sent { arrives_at, clock } })
    }

    /// The link fails: every held packet is dropped and handed to `lost` (`fail`).
    pub(super) fn drop_held(&mut self, lost: &mut Vec<Packet>) {
        let Some(d) = self.deferred.as_deref_mut() else { return };
        self.stats.drops += d.held.len() as u64;
        lost.extend(d.held.drain(..).map(|(_, p)| p));
        d.bytes = 0;
        self.waiting.clear();
    }

    /// The run ends: the held packets are the backlog (`finish`; none was counted as a
    /// departure).
    pub(super) fn finish_held(&mut self) {
        let Some(d) = self.deferred.as_deref_mut() else { return };
        self.stats.backlog += d.held.len() as u64;
        d.held.clear();
        d.bytes = 0;
        self.waiting.clear();
    }
}
