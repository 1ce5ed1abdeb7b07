//! A packet's way through the network: deliveries at the far end of a channel, forwarding
//! hop by hop (`hops`), and the express hops that take a packet on without an event when
//! that gives what the event would (`express`).

use super::clocks::event_clock;
use super::{Simulator, NODE_NEVER_AHEAD, NODE_NO_SENDERS, NODE_SENDER_LIST, NO_ROUTE};
use crate::channel::{Admission, NOT_SCHEDULED};
use crate::event::{Event, Moment};
use crate::packet::{Kind, Packet};
use crate::scenario::SenderClock;
use vegaslab_cc::Nanos;

impl Simulator {
    /// Channel `c`'s delivery event: its head packet reaches the far node now and goes on
    /// from there (`hops`); then the next head's delivery is scheduled. Inlined into the
    /// event loop, its one caller: the commonest event, whose call would otherwise cost
    /// about 3% of the benchmark's instructions (docs/performance.md).
    #[inline(always)]
    pub(super) fn on_delivery(&mut self, c: usize) {
        let ch = &self.channels[c];
        if ch.scheduled_since != self.events.popped_since() || ch.scheduled_at != self.now {
            // Superseded by an earlier head, or a deferred channel's event (`dequeue`), whose
            // `scheduled_since` is marked so that this common path need not tell it apart.
            return self.on_unmatched_delivery(c);
        }
        self.channels[c].scheduled_since = NOT_SCHEDULED;
        let node = self.channels[c].to;
        let seen = &mut self.last_arrival[node as usize];
        if *seen == self.now {
            self.same_instant_arrivals += 1;
        }
        *seen = self.now;
        // One packet per event: a second packet arriving at the same time takes its own
        // event, ordered by its own transmission start among other links' (`event`).
        if let Some(p) = self.channels[c].pop_arrived(self.now) {
            if self.prefetch {
                self.prefetch_next_head();
            }
            // `hops`, not `arrive`: nothing from here to the next pop reads the current
            // instant (`schedule_channel` gives its event's doubles), so it need not be put back.
            self.hops(p, node, self.now);
        }
        self.schedule_channel(c);
    }

    /// Schedule the delivery of channel `c`'s head packet, unless an event for it or an
    /// earlier one is pending. ns-2 schedules a packet's arrival when its transmission
    /// starts: that is the event's `since`; its double time is the packet's clock.
    ///
    /// `run.clock = "exact"` has its own copy (`schedule_channel_exact`), so that the
    /// default's has no call to come back from (`exact_clock`) and saves no registers; with
    /// `EventQueue::schedule_since`'s growth a tail call, it needs no frame at all.
    fn schedule_channel(&mut self, c: usize) {
        match self.scenario.clock {
            SenderClock::Ns2 => self.schedule_channel_in(SenderClock::Ns2, c),
            SenderClock::Exact => self.schedule_channel_exact(c),
        }
    }

    #[inline(never)]
    fn schedule_channel_exact(&mut self, c: usize) {
        self.schedule_channel_in(SenderClock::Exact, c)
    }

    /// `schedule_channel` with `run.clock = mode`.
    #[inline(always)]
    fn schedule_channel_in(&mut self, mode: SenderClock, c: usize) {
        let ch = &mut self.channels[c];
        if let Some((head, start, start_clock, clock)) = ch.head_time() {
            if !ch.is_scheduled() || head < ch.scheduled_at {
                let since_clock = event_clock(mode, start_clock, start);
                (ch.scheduled_at, ch.scheduled_since) = (head, since_clock.max(0.0).to_bits());
                let clock = event_clock(mode, clock, head);
                self.events.schedule_since(head, since_clock, clock, Event::Delivery(c as u32));
            }
        }
    }

    /// A packet sent at `node` at time `t` (the current time), by a sender or a UDP source:
    /// deliver it locally or forward it, along express hops too (`hops`).
    ///
    /// The event queue's current instant is not saved and put back around `hops`, which
    /// moves it only for an ACK reaching its sender, and a packet sent within an event never
    /// brings one there within it: while a sender sends (`in_sender`) its packets take no
    /// express hop into an end node, no channel into a sender hands packets on
    /// (`express_channels`), and a UDP datagram has no ACK. Debug builds check it.
    #[inline]
    pub(super) fn arrive(&mut self, p: Packet, node: u32, t: Nanos) {
        debug_assert!(p.kind != Kind::Ack, "arrive sends data and datagrams");
        #[cfg(debug_assertions)]
        let instant = self.events.instant();
        self.hops(p, node, t);
        #[cfg(debug_assertions)]
        assert_eq!(instant, self.events.instant(), "a packet sent within an event moved its instant");
    }

    /// `arrive`'s hops. `t` is the current time except on express hops, where it is the
    /// packet's (later) arrival time, and the current instant's with it (below).
    ///
    /// A loop, not recursion: an express hop hands the packet on, and a sink reached that way
    /// answers with an ACK that travels on, for as many hops as the paths have (a 20,000-link
    /// chain overflowed the stack when each hop was a nested call). Each turn is one hop of a
    /// loop-free path, so the loop ends: express hops (the only turns that continue without an
    /// event) happen only before the first link change, while routes are the static ones.
    ///
    /// An express hop moves the current instant in locals (`since`, what `accept` reads, and
    /// `clock_now`), written to the event queue only for a sender, its one other reader (a
    /// timer is scheduled at the instant), not at every express hop.
    pub(super) fn hops(&mut self, mut p: Packet, mut node: u32, mut t: Nanos) {
        // The current instant is at `t` (the caller's event, or the ACK `at_sender` handles).
        let Moment { at: _, clock: mut clock_now, mut since } = self.events.instant();
        loop {
            if p.dst == node {
                match p.kind {
                    Kind::Data => {
                        if self.flows[p.flow as usize].on_linux {
                            match self.at_linux_sink(p, t) {
                                Some(ack) => (p, node, t) = ack,
                                None => return, // Linux's receiver delays its ACK
                            }
                        } else {
                            (p, node, t) = self.at_sink(p, t);
                        }
                        continue;
                    }
                    Kind::Ack => {
                        self.events.set_instant(Moment { at: t, clock: clock_now, since });
                        self.at_sender(&p, t)
                    }
                    Kind::Udp => {
                        let s = &mut self.udp[p.flow as usize].stats;
                        s.received_pkts += 1;
                        s.received_bytes += p.size as u64;
                    }
                }
                return;
            }
            let c = self.route(node, p.dst) as usize;
            // Only a run with link failures can meet a down link or a pair without a route
            // (`failures` gates both checks; without failures every used pair has a route,
            // checked before the run); only one with a discipline that drops at dequeue
            // reaches a channel that holds its packets (`dequeue`).
            if self.rare_hop_checks {
                if self.failures.is_some() && (c == NO_ROUTE as usize || self.channels[c].down) {
                    return self.lost_without_link(p, c, t);
                }
                if self.channels[c].is_deferred() {
                    return self.deferred_arrival(c, p, t);
                }
                if self.prefetch {
                    self.channels[c].prefetch_waiting();
                }
            }
            let admission = self.channels[c].accept(t, p.size, p.clock, since);
            // The trace gets the admission in each arm, rebuilt from its parts: handed the
            // admission itself, the compiler kept that in memory and read its two doubles back
            // in one load wider than the writes, which the processor cannot forward (a store-
            // forwarding stall on every hop). Rebuilt only where the trace is written
            // (`trace_accepted`, and a fresh value for a lost packet), and not returned in
            // memory by `Channel::lost_on_link`: any one of the three kept the admission in
            // memory, five stores per packet-hop that nothing read.
            match admission {
                Admission::Accepted { arrives_at, queued, clock, start_clock } => {
                    if self.tracer.is_some() {
                        self.trace_accepted(c, &p, t, (arrives_at, queued), (clock, start_clock));
                    }
                    // RoVegas's AQT router: the hook on dequeue, where the wait is known now.
                    if p.probe && self.channels[c].aqt_enabled {
                        p.aqt = crate::queue::aqt::stamped(p.aqt, queued);
                    }
                    if (self.channels[c].hands_on || self.node_may_run_ahead(&p, c, arrives_at)) && arrives_at < self.express_until {
                        // What the far node does happens in the delivery event this hop stands
                        // for: at the packet's arrival, scheduled at its transmission start.
                        p.clock = clock;
                        since = event_clock(self.scenario.clock, start_clock, t + queued);
                        (node, t) = (self.channels[c].to, arrives_at);
                        clock_now = event_clock(self.scenario.clock, clock, t);
                        continue;
                    }
                    // The new clock goes straight into the pipe's copy (written into `p` first,
                    // it was read back by the copy in a wider load, the same stall as above).
                    let ch = &mut self.channels[c];
                    let head_changed = ch.push_pipe(arrives_at, t + queued, start_clock, Packet { clock, ..p });
                    // A packet behind the head changes nothing to schedule when the head's
                    // delivery is scheduled (a scheduled delivery is never later than the
                    // head): skipping `schedule_channel` then saves reading the head.
                    if head_changed || !ch.is_scheduled() {
                        self.schedule_channel(c);
                    }
                }
                Admission::Dropped | Admission::Corrupted => {
                    if self.tracer.is_some() {
                        let lost = if matches!(admission, Admission::Dropped) { Admission::Dropped } else { Admission::Corrupted };
                        self.trace_hop(c, &p, t, lost);
                    }
                    self.count_lost(&p)
                }
            }
            return;
        }
    }

    /// Whether `p`, just accepted onto channel `c` toward the node where it ends, may be taken
    /// there at its arrival `at` without an event (`express`, "Packets to an end node"): the
    /// node qualifies (`node_ahead`), no sender is sending (`in_sender`), nothing waits in
    /// `c` ahead of it and nothing sent later can overtake it there (`c`'s delay is constant),
    /// no monitor samples the flows before `at`, and none of the node's senders has an event
    /// of its own before `at` (`sender_may_run_ahead`).
    ///
    /// A packet behind another in `c`'s pipe takes an event, so on a link whose pipe never
    /// drains (a long delay and a steady stream) the node stops running ahead once one packet
    /// could not.
    #[inline]
    fn node_may_run_ahead(&self, p: &Packet, c: usize, at: Nanos) -> bool {
        let node = self.channels[c].to;
        p.dst == node
            && !self.in_sender
            && at < self.next_flow_sample
            && self.channels[c].pipe_is_empty()
            && self.channels[c].keeps_order()
            && self.senders_may_run_ahead(node, at)
    }

    /// The node qualifies (`node_ahead`) and every flow sending from it may run ahead to
    /// `at` (`sender_may_run_ahead`), read from `node_ahead`.
    #[inline]
    fn senders_may_run_ahead(&self, node: u32, at: Nanos) -> bool {
        let v = self.node_ahead[node as usize];
        if v < NODE_SENDER_LIST {
            return self.sender_may_run_ahead(v as usize, at);
        }
        match v {
            NODE_NEVER_AHEAD => false,
            NODE_NO_SENDERS => true,
            _ => {
                let i = (v - NODE_SENDER_LIST) as usize;
                let n = self.sender_lists[i] as usize;
                self.sender_lists[i + 1..i + 1 + n].iter().all(|&f| self.sender_may_run_ahead(f as usize, at))
            }
        }
    }

    /// Nothing of flow `f`'s own happens before `at` (strictly): it does not start (it has,
    /// or starts later), no retransmission timer falls due (its deadline, and its pending
    /// event, which may fire or re-arm) and it does not stop. Then processing what reaches its
    /// node at `at` ahead of the clock gives what the event at `at` would give.
    #[inline]
    fn sender_may_run_ahead(&self, f: usize, at: Nanos) -> bool {
        let flow = &self.flows[f];
        debug_assert_eq!(at < flow.run_ahead_start, flow.started || at < flow.start);
        debug_assert_eq!(at < flow.run_ahead_stop, flow.stop.is_none_or(|s| at < s));
        at < flow.run_ahead_start
            && at < flow.run_ahead_stop
            && flow.timer_pending.is_none_or(|p| at < p)
            && flow.sender.rtx_deadline().is_none_or(|d| at < d)
    }
}
