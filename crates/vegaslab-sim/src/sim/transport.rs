//! TCP at both ends: a sender reacting to its ACKs and its retransmission timer and putting
//! its segments on the wire, a sink answering data with ACKs (ns-2's `TCPSink`).

use super::clocks::event_clock;
use super::Simulator;
use crate::event::Event;
use crate::packet::{Kind, Packet};
use crate::linux_receiver::{Arrival, OutgoingAck};
use vegaslab_cc::{secs, AckInfo, Nanos, QueueingTimes};

impl Simulator {
    /// An ACK reaches its sender at `t`: the sender reacts and sends what it may. `t` is the
    /// current time, or the ACK's arrival ahead of the clock (an express hop): the current
    /// time is `t` while the sender reacts, as in the event it stands for. Out of line, so
    /// that `hops` is the forwarding loop alone. One function for both cases: one call per
    /// ACK.
    #[inline(never)]
    pub(super) fn at_sender(&mut self, p: &Packet, t: Nanos) {
        let now = std::mem::replace(&mut self.now, t);
        self.react(p);
        self.now = now;
    }

    /// `at_sender`'s reaction, at the current time.
    #[inline(always)]
    fn react(&mut self, p: &Packet) {
        let f = p.flow as usize;
        if self.flows[f].finished {
            // Only a per-flow connection finishes; it ignores late ACKs.
            self.flows[f].late_acks += 1;
            return;
        }
        let queueing = if p.probe { queueing_times(p) } else { None };
        let flow = &mut self.flows[f];
        flow.integrate_cwnd(self.now);
        let linux = if flow.on_linux { flow.linux.as_mut().and_then(|r| r.take(p.report)) } else { None };
        let clock = self.sender_clock(p.clock);
        self.flows[f].sender.on_ack_at(self.now, clock, &AckInfo { seqno: p.seqno, queueing, linux });
        self.flush_sender(f);
        if self.flows[f].child {
            self.finish_if_done(f);
        }
    }

    /// A data packet reaches ns-2's sink at time `t`: count it; returns the ACK to send from
    /// the sink (for `arrive`). Inlined into `hops` (out of line it costs more).
    pub(super) fn at_sink(&mut self, p: Packet, t: Nanos) -> (Packet, u32, Nanos) {
        self.count_arrival(&p, t);
        let f = &mut self.flows[p.flow as usize];
        let (child, parent) = (f.child, f.parent as usize);
        let ack = f.sink.receive(p.seqno);
        // A probing packet is answered by a probing ACK: fresh AQT, the data's AQT echoed.
        let size = f.ack_size + if p.probe { f.aqt_option_bytes.unwrap_or(0) } else { 0 };
        // ns-2's TCPSink answers within the data packet's arrival event: the same clock.
        let ack_packet = Packet { kind: Kind::Ack, seqno: ack, size, dst: f.src, flow: p.flow, probe: p.probe, aqt: 0, aqt_echo: p.aqt, clock: p.clock, report: 0 };
        if child {
            self.count_child_bytes(parent, t, p.size);
        }
        (ack_packet, p.dst, t)
    }

    /// A data packet's arrival counted at its flow: packets, bytes and the throughput bin.
    #[inline(always)]
    fn count_arrival(&mut self, p: &Packet, t: Nanos) {
        let f = &mut self.flows[p.flow as usize];
        f.received_pkts += 1;
        f.received_bytes += p.size as u64;
        if !f.bins.is_empty() {
            let bin = (t / self.scenario.sample_interval) as usize;
            if let Some(b) = f.bins.get_mut(bin) {
                *b += p.size as u64;
            }
        }
    }

    /// `at_sink` for a connection on Linux's stack: ns-2's sink keeps the in-order point,
    /// Linux's receiver decides whether an ACK goes now (`None`: it waits for its timer) and
    /// what it reports. Out of line: ns-2's sink is the hot path.
    #[cold]
    #[inline(never)]
    pub(super) fn at_linux_sink(&mut self, p: Packet, t: Nanos) -> Option<(Packet, u32, Nanos)> {
        self.count_arrival(&p, t);
        let f = &mut self.flows[p.flow as usize];
        let (child, parent) = (f.child, f.parent as usize);
        let (nxt_before, held_before) = (f.sink.next(), f.sink.holds_out_of_order());
        let nxt = f.sink.receive(p.seqno) + 1;
        let arrival = Arrival {
            seq: p.seqno,
            tsval: p.aqt_echo,
            nxt_before,
            nxt,
            had_out_of_order: held_before,
            out_of_order: f.sink.holds_out_of_order(),
            syn: f.sink.is_syn(p.seqno),
        };
        let outgoing = self.linux_receive(p.flow as usize, arrival, t);
        if child {
            self.count_child_bytes(parent, t, p.size);
        }
        let out = outgoing?;
        let f = &self.flows[p.flow as usize];
        let size = f.ack_size + out.option_bytes + if p.probe { f.aqt_option_bytes.unwrap_or(0) } else { 0 };
        let ack_packet = Packet { kind: Kind::Ack, seqno: out.cum, size, dst: f.src, flow: p.flow, probe: p.probe, aqt: 0, aqt_echo: p.aqt, clock: p.clock, report: out.report };
        Some((ack_packet, p.dst, t))
    }

    /// A per-flow connection's bytes go to its entry's throughput bins.
    fn count_child_bytes(&mut self, parent: usize, t: Nanos, size: u32) {
        let parent = &mut self.flows[parent];
        if !parent.bins.is_empty() {
            let bin = (t / self.scenario.sample_interval) as usize;
            if let Some(b) = parent.bins.get_mut(bin) {
                *b += size as u64;
            }
        }
    }

    /// Linux's receiver of flow `f` takes a segment at `t`: the ACK to send now, if any; a
    /// delayed one keeps the flow's timer.
    #[cold]
    #[inline(never)]
    fn linux_receive(&mut self, f: usize, arrival: Arrival, t: Nanos) -> Option<OutgoingAck> {
        let out = self.flows[f].linux.as_mut()?.receive(arrival, t);
        self.arm_timer(f);
        out
    }

    /// Flow `f`'s receiver sends the ACK its timer was holding, from the receiving host.
    fn linux_delayed_ack(&mut self, f: usize) {
        let flow = &mut self.flows[f];
        let nxt = flow.sink.next();
        let Some(out) = flow.linux.as_mut().and_then(|r| r.on_timer(nxt)) else { return };
        let size = flow.ack_size + out.option_bytes;
        let clock = secs(self.now);
        let p = Packet { kind: Kind::Ack, seqno: out.cum, size, dst: flow.src, flow: f as u32, probe: false, aqt: 0, aqt_echo: 0, clock, report: out.report };
        let from = flow.dst;
        // An ACK leaving its host takes the link's event; it reaches no sender within this one.
        self.hops(p, from, self.now);
    }

    /// Put the sender's queued segments on the wire and keep its timer scheduled.
    ///
    /// Each segment goes on the wire straight from the sender's queue, which is taken for the
    /// loop and handed back for reuse (an ACK usually releases one segment, so a second
    /// vector and loop would be most of the cost). Inlined into its callers (`at_sender`
    /// above all, every ACK).
    #[inline(always)]
    pub(super) fn flush_sender(&mut self, f: usize) {
        let flow = &mut self.flows[f];
        let (src, dst) = (flow.src, flow.dst);
        // Sent within the sender's current event: its clock.
        let clock = flow.sender.state.clock;
        let segments = flow.sender.take_segments();
        if !segments.is_empty() {
            let in_sender = std::mem::replace(&mut self.in_sender, true);
            for seg in &segments {
                let p = Packet { kind: Kind::Data, flow: f as u32, seqno: seg.seqno, size: seg.wire_bytes, dst, probe: seg.probe, aqt: 0, aqt_echo: seg.timestamp_ms, clock, report: 0 };
                self.arrive(p, src, self.now);
            }
            self.in_sender = in_sender;
        }
        self.flows[f].sender.give_back_segments(segments);
        self.arm_timer(f);
    }

    /// Keep flow `f`'s retransmission timer scheduled: an event no later than its deadline.
    ///
    /// Inlined (into `flush_sender`, every ACK), with the scheduling out of line: a new ACK
    /// moves the deadline later, so a pending event almost always stays.
    #[inline(always)]
    fn arm_timer(&mut self, f: usize) {
        let flow = &self.flows[f];
        if let Some(d) = flow.sender.rtx_deadline() {
            if flow.timer_pending.is_none_or(|p| d < p) {
                self.schedule_timer(f, d);
            }
        }
        if self.flows[f].on_linux {
            self.arm_receiver_timer(f);
        }
    }

    /// `arm_timer`'s new event, at the deadline `d`.
    #[inline(never)]
    fn schedule_timer(&mut self, f: usize, d: Nanos) {
        let flow = &mut self.flows[f];
        flow.timer_pending = Some(d);
        let clock = event_clock(self.scenario.clock, flow.sender.rtx_clock(), d);
        self.events.schedule_clocked(d, flow.sender.rtx_armed_at(), clock, Event::Timer(f as u32));
    }

    /// The flow's one timer event also serves its Linux receiver's delayed ACK.
    #[cold]
    #[inline(never)]
    fn arm_receiver_timer(&mut self, f: usize) {
        let flow = &mut self.flows[f];
        let Some(r) = flow.linux.as_ref() else { return };
        let Some(d) = r.deadline else { return };
        if flow.timer_pending.is_none_or(|p| d < p) {
            flow.timer_pending = Some(d);
            let clock = event_clock(self.scenario.clock, secs(d), d);
            self.events.schedule_clocked(d, r.armed_at, clock, Event::Timer(f as u32));
        }
    }

    /// Flow `f`'s timer event: a retransmission timeout if the deadline has come, else the
    /// event is booked again at the deadline (an ACK moved it later).
    pub(super) fn on_timer(&mut self, f: usize) {
        let clock = self.sender_clock(self.flows[f].sender.rtx_clock());
        let flow = &mut self.flows[f];
        if flow.timer_pending == Some(self.now) {
            flow.timer_pending = None;
        }
        if flow.finished {
            return; // a finished per-flow connection has nothing left to send
        }
        if flow.on_linux && flow.linux.as_ref().and_then(|r| r.deadline).is_some_and(|d| d <= self.now) {
            self.linux_delayed_ack(f);
        }
        let flow = &mut self.flows[f];
        match flow.sender.rtx_deadline() {
            Some(d) if d <= self.now => {
                flow.integrate_cwnd(self.now);
                flow.sender.on_timer_at(self.now, clock);
                self.flush_sender(f);
            }
            Some(_) => self.arm_timer(f),
            None if self.flows[f].on_linux => self.arm_timer(f),
            None => {}
        }
    }
}

/// The router-reported queueing times a probing ACK carries (RoVegas), in seconds.
///
/// Out of line: inlined, the compiler converted both times on every ACK, probe or not, and
/// then chose.
#[cold]
#[inline(never)]
fn queueing_times(p: &Packet) -> Option<QueueingTimes> {
    Some(QueueingTimes { backward: secs(p.aqt as u64), forward: secs(p.aqt_echo as u64) })
}
