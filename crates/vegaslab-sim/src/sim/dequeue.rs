//! Channels whose queue discipline drops at dequeue (CoDel; `channel::deferred`): their
//! arrivals, the dequeues due as time passes, and their one pending event, which stands at the
//! next delivery or the next dequeue, whichever comes first.
//!
//! Dequeues are decided in time order (`Channel::dequeue_next`): those due before an arrival
//! when the arrival comes, those due at an instant after its arrivals, and those due with
//! nothing arriving at the channel's event. A packet taken to such a channel by an express
//! hop (ahead of the clock) is no exception: arrivals at one channel come in time order, and
//! the channel's event is never later than its next dequeue, so no dequeue is decided after
//! a later one or behind the clock.

use super::clocks::event_clock;
use super::Simulator;
use crate::channel::{Admission, Dequeued, Fate, NOT_SCHEDULED};
use crate::event::Event;
use crate::packet::Packet;
use vegaslab_cc::Nanos;

/// Marks a deferred channel's `scheduled_since` (a `since` is a non-negative double, so its
/// sign bit is clear; and the marked value is never `NOT_SCHEDULED`, a NaN's bits).
const DEFERRED_EVENT: u64 = 1 << 63;

impl Simulator {
    /// Packet `p` reaches deferred channel `c` at `t` (`hops`): the dequeues due before `t`,
    /// then the arrival (held, or dropped if the discipline refuses it), then the dequeues due
    /// at `t`, and the channel's next event.
    #[cold]
    #[inline(never)]
    pub(super) fn deferred_arrival(&mut self, c: usize, p: Packet, t: Nanos) {
        self.run_dequeues(c, t, false);
        if !self.channels[c].hold(t, p) {
            if self.tracer.is_some() {
                self.trace_hop(c, &p, t, Admission::Dropped);
            }
            self.count_lost(&p);
        }
        self.run_dequeues(c, t, true);
        self.schedule_deferred(c);
    }

    /// A delivery event whose channel's pending event is not it (`on_delivery`): superseded,
    /// or a deferred channel's own event, whose `scheduled_since` carries `DEFERRED_EVENT`.
    #[cold]
    #[inline(never)]
    pub(super) fn on_unmatched_delivery(&mut self, c: usize) {
        let ch = &self.channels[c];
        if ch.is_deferred() && ch.scheduled_since == self.events.popped_since() | DEFERRED_EVENT && ch.scheduled_at == self.now {
            self.channels[c].scheduled_since = NOT_SCHEDULED;
            self.on_deferred_event(c);
        }
    }

    /// Deferred channel `c`'s event: the dequeues due now, then the delivery of its head
    /// packet if it arrives now, then its next event.
    fn on_deferred_event(&mut self, c: usize) {
        self.run_dequeues(c, self.now, true);
        if self.channels[c].head_time().is_some_and(|(at, ..)| at <= self.now) {
            let node = self.channels[c].to;
            let seen = &mut self.last_arrival[node as usize];
            if *seen == self.now {
                self.same_instant_arrivals += 1;
            }
            *seen = self.now;
            if let Some(p) = self.channels[c].pop_arrived(self.now) {
                self.hops(p, node, self.now);
            }
        }
        self.schedule_deferred(c);
    }

    /// Decide channel `c`'s dequeues due before `upto` (or at it, if `inclusive`), counting
    /// the packets the discipline drops or the link loses.
    pub(super) fn run_dequeues(&mut self, c: usize, upto: Nanos, inclusive: bool) {
        while let Some(d) = self.channels[c].dequeue_next(upto, inclusive) {
            if self.tracer.is_some() {
                self.trace_dequeued(c, &d);
            }
            if !matches!(d.fate, Fate::Sent { .. }) {
                self.count_lost(&d.packet);
            }
        }
    }

    /// Schedule deferred channel `c`'s next event, its head packet's delivery or its next
    /// dequeue, whichever is first, unless an event for it or an earlier one is pending. A
    /// delivery's event is ordered as `schedule_channel` orders it; a dequeue's at its own
    /// double, with the same `since` (ns-2 has no CoDel to follow here).
    pub(super) fn schedule_deferred(&mut self, c: usize) {
        let mode = self.scenario.clock;
        let ch = &mut self.channels[c];
        let delivery = ch.head_time().map(|(at, start, start_clock, clock)| (at, event_clock(mode, start_clock, start), event_clock(mode, clock, at)));
        let dequeue = ch.next_dequeue().map(|(at, clock)| {
            let clock = event_clock(mode, clock, at);
            (at, clock, clock)
        });
        let next = match (delivery, dequeue) {
            (Some(d), Some(q)) => Some(if q.0 < d.0 { q } else { d }),
            (d, q) => d.or(q),
        };
        if let Some((at, since_clock, clock)) = next {
            if !ch.is_scheduled() || at < ch.scheduled_at {
                (ch.scheduled_at, ch.scheduled_since) = (at, since_clock.max(0.0).to_bits() | DEFERRED_EVENT);
                self.events.schedule_since(at, since_clock, clock, Event::Delivery(c as u32));
            }
        }
    }

    /// Record a dequeue of a deferred channel in the packet trace.
    #[cold]
    #[inline(never)]
    fn trace_dequeued(&mut self, c: usize, d: &Dequeued) {
        let (parent, stream) = self.traced_connection(&d.packet);
        let Some(tr) = self.tracer.as_deref_mut() else { return };
        let ch = &self.channels[c];
        tr.dequeued(c, ch.from, ch.to, parent, stream, d);
    }
}
