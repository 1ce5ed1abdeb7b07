//! What the senders are given to send, and when: flow starts and stops, applications with
//! their own clock (`crate::apps`), per-flow connections (`connection = "per-flow"`: one
//! connection per flow arrival) and UDP sources (`crate::udp`).

use super::Simulator;
use crate::apps::Hand;
use crate::event::{scripted_clock, Event};
use crate::packet::{Kind, Packet};
use crate::results::{AbortKind, Aborted};
use vegaslab_cc::{secs, Nanos};

impl Simulator {
    /// A per-flow connection whose data is all handed over and acknowledged is over: keep its
    /// counters, free its sender's tables and its sink's buffer.
    pub(super) fn finish_if_done(&mut self, f: usize) {
        let flow = &mut self.flows[f];
        let st = &flow.sender.state;
        if flow.finished || flow.pending > 0 || st.highest_ack < st.curseq - 1 {
            return;
        }
        flow.integrate_cwnd(self.now);
        flow.finished = true;
        flow.timer_pending = None;
        flow.sender.release_buffers();
        flow.sink.release_buffers();
        let open = &mut self.conns[flow.parent as usize].open;
        if let Some(i) = open.iter().position(|&c| c as usize == f) {
            open.remove(i);
        }
    }

    /// A flow arrives at a per-flow entry: open a new connection (fresh sender and sink) for
    /// its `packets`, which the application hands over (at once, or paced).
    fn open_connection(&mut self, entry: usize, packets: i64) {
        let c = self.flows.len();
        if c >= self.connection_limit {
            // `run_text` refuses runs expected to come near the limit; chance can still get
            // here. The run stops (the caller reports an error): dropping this flow arrival
            // and later ones would give results that look complete but are not.
            if self.aborted.is_none() {
                self.aborted = Some(Aborted {
                    field: "flows.app.connection".to_string(),
                    message: format!(
                        "flow {}: the run needed more than {} TCP connections (connection = \"per-flow\" opens one per flow arrival) and was stopped at {} s: shorten the run, lengthen mean_interarrival or use connection = \"shared\"",
                        self.flows[entry].name,
                        self.connection_limit,
                        secs(self.now)
                    ),
                    kind: AbortKind::Limit,
                });
            }
            return;
        }
        let boot_time = crate::flow::tick_phase(&self.flows[entry].tcp, self.scenario.seed, c);
        let mut conn = self.flows[entry].connection(entry as u32, self.now, boot_time);
        conn.pending = packets;
        self.flows.push(conn);
        let e = &mut self.conns[entry];
        e.open.push(c as u32);
        e.queue.push_back(c as u32);
        e.opened += 1;
    }

    /// What a per-flow entry's application hands over goes to its connections, oldest flow
    /// first (each flow's packets to its own connection).
    fn hand_over_per_flow(&mut self, f: usize, hand: Hand) {
        if let Some(n) = self.apps[f].as_mut().and_then(|a| a.take_arrival()) {
            self.open_connection(f, n);
        }
        let Hand::Packets(mut k) = hand else { return };
        while k > 0 {
            let Some(&c) = self.conns[f].queue.front() else { break };
            let c = c as usize;
            let m = k.min(self.flows[c].pending);
            self.flows[c].pending -= m;
            k -= m;
            if self.flows[c].pending == 0 {
                self.conns[f].queue.pop_front();
            }
            let clock = self.scripted_clock();
            self.flows[c].sender.app_send_at(self.now, clock, Some(m));
            self.flush_sender(c);
        }
    }

    /// Flow `f` starts: an application with its own clock starts it and hands over what it
    /// has; an FTP or file flow gives its sender all its data (FTP: without end).
    pub(super) fn on_flow_start(&mut self, f: usize) {
        self.flows[f].started = true;
        self.flows[f].run_ahead_start = Nanos::MAX;
        if self.apps[f].is_some() {
            let (apps, events, now) = (&mut self.apps, &mut self.events, self.now);
            let hand = apps[f].as_mut().expect("app").start(now, &mut |t, k| events.schedule(t, now, Event::App(2 * f as u32 + k)));
            self.hand_over(f, hand);
            return;
        }
        let n = self.flows[f].app_packets();
        let clock = self.scripted_clock();
        self.flows[f].sender.app_send_at(self.now, clock, n);
        self.flush_sender(f);
    }

    /// Flow `f` stops (`stop`): its application and sender take no new data; a per-flow
    /// entry's connections finish once what they sent is acknowledged.
    pub(super) fn on_flow_stop(&mut self, f: usize) {
        if let Some(app) = &mut self.apps[f] {
            app.stop();
        }
        self.flows[f].sender.app_stop();
        self.conns[f].queue.clear();
        for c in self.conns[f].open.clone() {
            let c = c as usize;
            self.flows[c].pending = 0;
            self.flows[c].sender.app_stop();
            self.finish_if_done(c);
        }
    }

    /// An application's clock (`Event::App(2 x flow + process)`).
    pub(super) fn on_app(&mut self, index: u32) {
        let (f, process) = ((index / 2) as usize, index % 2);
        let (apps, events, now) = (&mut self.apps, &mut self.events, self.now);
        let Some(app) = apps[f].as_mut() else { return };
        let hand = app.on_event(now, process, &mut |t, k| events.schedule(t, now, Event::App(2 * f as u32 + k)));
        self.hand_over(f, hand);
    }

    /// What flow `f`'s application hands over goes to its sender (to its connections for a
    /// per-flow entry), which sends what it may at once.
    fn hand_over(&mut self, f: usize, hand: Hand) {
        if self.apps[f].as_ref().is_some_and(|a| a.per_flow) {
            return self.hand_over_per_flow(f, hand);
        }
        let clock = self.scripted_clock();
        match hand {
            Hand::Nothing => return,
            Hand::Greedy => self.flows[f].sender.app_send_at(self.now, clock, None),
            Hand::Packets(n) => self.flows[f].sender.app_send_at(self.now, clock, Some(n)),
            Hand::Stop => self.flows[f].sender.app_stop(),
        }
        self.flush_sender(f);
    }

    /// UDP source `i` sends a packet now and books its next one.
    pub(super) fn on_source(&mut self, i: usize) {
        let s = &mut self.udp[i];
        if !s.sends_at(self.now) {
            return;
        }
        let (seqno, next) = s.sent();
        // A UDP source's send clock is its integer time's double, not ns-2's CBR's own sums
        // (`next_interval`): only TCP senders read clocks here.
        let clock = scripted_clock(self.now);
        let p = Packet { kind: Kind::Udp, flow: i as u32, seqno, size: s.packet_size, dst: s.dst, probe: false, aqt: 0, aqt_echo: 0, clock, report: 0 };
        let src = s.src;
        if next <= self.scenario.duration && s.sends_at(next) {
            self.events.schedule(next, self.now, Event::Source(i as u32));
        }
        self.arrive(p, src, self.now);
    }
}
