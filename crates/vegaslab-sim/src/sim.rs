//! The simulator: builds the network from a [`Scenario`] and runs the event loop.

use crate::apps::{plain_active, App, Hand};
use crate::channel::{Admission, Channel};
use crate::event::{Event, EventQueue, MAX_INDEX};
use crate::express::{express_channels, Route};
use crate::flow::Flow;
use crate::packet::{Kind, Packet};
use crate::results::{FlowResult, FlowSeries, LinkResult, QueueResult, QueueSeries, RunMeta, RunResults, Series, UdpResult};
use crate::rng::stream;
use crate::scenario::Scenario;
use crate::udp::UdpSource;
use rand::Rng;
use std::collections::VecDeque;
use std::time::Instant;
use vegaslab_cc::{secs, AckInfo, Nanos, QueueingTimes};

const NO_ROUTE: u32 = u32::MAX;
/// Random-stream ids (see `rng`): flows take 1 + index (tick phase); RED and packet errors
/// of channel c take (1 << 32) + c and (2 << 32) + c (`queue`); UDP source i takes
/// (3 << 32) | i (`udp`); the application of flow f takes (4 << 32) | f (`apps`).
const STREAM_FLOW_BASE: u64 = 1;
const STREAM_UDP_BASE: u64 = 3 << 32;
const STREAM_APP_BASE: u64 = 4 << 32;

/// The connections of a flow entry with `connection = "per-flow"` (see `open_connection`).
/// Connections are appended to `Simulator::flows` at run time (after the entries), so packets
/// and timers identify them by index exactly as flows.
#[derive(Default)]
struct Connections {
    /// Open connections (not all data acknowledged), oldest first.
    open: Vec<u32>,
    /// Connections with data the application has not handed over yet, oldest first.
    queue: VecDeque<u32>,
    opened: u64,
}

pub struct Simulator {
    scenario: Scenario,
    now: Nanos,
    events: EventQueue,
    channels: Vec<Channel>,
    /// Channel index from node n toward destination row r: `next_hop[r * nodes + n]`.
    next_hop: Vec<u32>,
    /// Row of `next_hop` for each destination node (`NO_ROUTE` if none is needed).
    dest_row: Vec<u32>,
    /// Reused buffer for packets a sender emits.
    outgoing: Vec<Packet>,
    flows: Vec<Flow>,
    /// Flow entries of the scenario: `flows[..entries]`; the rest are per-flow connections.
    entries: usize,
    /// Per entry: its per-flow connections (empty for other entries).
    conns: Vec<Connections>,
    /// Applications with their own clock, per flow (`None`: FTP or file).
    apps: Vec<Option<App>>,
    udp: Vec<UdpSource>,
    /// A UDP source whose parameters cannot work on its path: (field path, message).
    udp_error: Option<(String, String)>,
    monitored_queues: Vec<usize>,
    /// Packets leaving channel c are handed on at arrival without an event (`express`).
    express_from: Vec<bool>,
    flow_series: FlowSeries,
    queue_series: QueueSeries,
    events_processed: u64,
}

impl Simulator {
    pub fn new(scenario: Scenario) -> Self {
        let mut channels = Vec::with_capacity(scenario.links.len() * 2);
        for l in &scenario.links {
            channels.push(Channel::new(l.a as u32, l.b as u32, &l.forward, scenario.seed, channels.len()));
            channels.push(Channel::new(l.b as u32, l.a as u32, &l.reverse, scenario.seed, channels.len()));
        }
        for c in &mut channels {
            c.aqt_enabled = scenario.aqt_routers.contains(&(c.from as usize));
        }
        let flows: Vec<Flow> = scenario
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let mut rng = stream(scenario.seed, STREAM_FLOW_BASE + i as u64);
                // ns-2 draws each sender's tick-clock phase uniformly in [0, tick).
                let boot_time = rng.gen::<f64>() * f.tcp.tick;
                let mut flow = Flow::new(f, boot_time);
                flow.parent = i as u32;
                flow
            })
            .collect();
        let apps = scenario
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| App::new(&f.app, f.tcp.packet_size, stream(scenario.seed, STREAM_APP_BASE | i as u64)))
            .collect();
        let mut dests: Vec<u32> = flows.iter().flat_map(|f| [f.src, f.dst]).collect();
        dests.extend(scenario.udp.iter().map(|u| u.to as u32));
        dests.sort_unstable();
        dests.dedup();
        let (next_hop, dest_row) = routes(scenario.nodes.len(), &channels, &dests);
        let monitored_queues = (0..channels.len())
            .filter(|&c| {
                let ch = &channels[c];
                scenario.monitor.all_queues
                    || scenario.monitor.queues.contains(&(ch.from as usize, ch.to as usize))
            })
            .collect();
        let mut sim = Simulator {
            scenario,
            now: 0,
            events: EventQueue::default(),
            channels,
            next_hop,
            dest_row,
            outgoing: Vec::new(),
            entries: flows.len(),
            conns: (0..flows.len()).map(|_| Connections::default()).collect(),
            flows,
            apps,
            udp: Vec::new(),
            udp_error: None,
            monitored_queues,
            flow_series: FlowSeries::default(),
            queue_series: QueueSeries::default(),
            events_processed: 0,
            express_from: Vec::new(),
        };
        if sim.unroutable_udp().is_empty() {
            sim.build_udp_sources();
        }
        if sim.unroutable_flows().is_empty() && sim.unroutable_udp().is_empty() {
            let mut routes: Vec<Route> = (0..sim.flows.len()).map(|f| sim.flow_route(f)).collect();
            routes.extend((0..sim.scenario.udp.len()).map(|i| sim.udp_route(i)));
            sim.express_from = express_channels(&sim.channels, &routes, &sim.monitored_queues);
        } else {
            sim.express_from = vec![false; sim.channels.len()];
        }
        sim
    }

    /// Process every hop through an event (for checking that express hops change nothing).
    pub fn without_express_hops(mut self) -> Self {
        self.express_from.iter_mut().for_each(|e| *e = false);
        self
    }

    fn build_udp_sources(&mut self) {
        for i in 0..self.scenario.udp.len() {
            let path_min = self.udp_route(i).data.iter().map(|&c| self.channels[c as usize].bandwidth_bps).fold(f64::INFINITY, f64::min);
            let rng = stream(self.scenario.seed, STREAM_UDP_BASE | i as u64);
            match UdpSource::new(&self.scenario.udp[i], path_min, rng) {
                Ok(s) => self.udp.push(s),
                Err((field, message)) => {
                    self.udp_error.get_or_insert((format!("udp[{i}].{field}"), message));
                }
            }
        }
    }

    /// A UDP source whose parameters do not fit its path, as (field path, message).
    pub fn invalid_udp(&self) -> Option<(String, String)> {
        self.udp_error.clone()
    }

    /// UDP sources whose destination cannot be reached (checked before running).
    pub fn unroutable_udp(&self) -> Vec<String> {
        self.scenario.udp.iter().filter(|u| self.route(u.from as u32, u.to as u32) == NO_ROUTE).map(|u| u.name.clone()).collect()
    }

    /// Channels of a UDP source's path (one-way).
    fn udp_route(&self, i: usize) -> Route {
        let u = &self.scenario.udp[i];
        let mut data = Vec::new();
        let mut node = u.from as u32;
        while node != u.to as u32 {
            let c = self.route(node, u.to as u32);
            data.push(c);
            node = self.channels[c as usize].to;
        }
        Route { data, ack: Vec::new() }
    }

    /// RoVegas flows whose round-trip path crosses no AQT-enabled router: they could never
    /// learn a queueing time (checked before running).
    pub fn flows_without_aqt_router(&self) -> Vec<String> {
        (0..self.flows.len())
            .filter(|&f| self.flows[f].aqt_option_bytes.is_some())
            .filter(|&f| {
                let r = self.flow_route(f);
                !r.data.iter().chain(&r.ack).any(|&c| self.channels[c as usize].aqt_enabled)
            })
            .map(|f| self.flows[f].name.clone())
            .collect()
    }

    /// Channels of a flow's data path and ACK path (static routing).
    fn flow_route(&self, f: usize) -> Route {
        let (src, dst) = (self.flows[f].src, self.flows[f].dst);
        let path = |from: u32, to: u32| {
            let mut out = Vec::new();
            let mut node = from;
            while node != to {
                let c = self.route(node, to);
                out.push(c);
                node = self.channels[c as usize].to;
            }
            out
        };
        Route { data: path(src, dst), ack: path(dst, src) }
    }

    /// Flows whose endpoints have no path between them (checked before running).
    pub fn unroutable_flows(&self) -> Vec<String> {
        self.flows
            .iter()
            .filter(|f| self.route(f.src, f.dst) == NO_ROUTE || self.route(f.dst, f.src) == NO_ROUTE)
            .map(|f| f.name.clone())
            .collect()
    }

    #[inline]
    fn route(&self, node: u32, dst: u32) -> u32 {
        let row = self.dest_row[dst as usize] as usize;
        self.next_hop[row * self.scenario.nodes.len() + node as usize]
    }

    /// Run to the end. `progress(sim_seconds, duration_seconds)` is called every few
    /// thousand events; returning false stops the run early (results cover what ran).
    pub fn run(mut self, mut progress: impl FnMut(f64, f64) -> bool) -> RunResults {
        let wall = Instant::now();
        let duration = self.scenario.duration;
        for i in 0..self.flows.len() {
            let f = &self.flows[i];
            self.events.schedule(f.start, Event::FlowStart(i as u32));
            if let Some(stop) = f.stop {
                if stop < duration {
                    self.events.schedule(stop, Event::FlowStop(i as u32));
                }
            }
        }
        for i in 0..self.udp.len() {
            if let Some(t) = self.udp[i].first_send() {
                if self.udp[i].sends_at(t) {
                    self.events.schedule(t, Event::Source(i as u32));
                }
            }
        }
        let m = &self.scenario.monitor;
        if m.cwnd || m.throughput || !self.monitored_queues.is_empty() {
            if m.throughput {
                let bins = (duration / self.scenario.sample_interval + 1) as usize;
                for f in &mut self.flows {
                    f.bins = vec![0; bins];
                }
            }
            self.events.schedule(self.scenario.sample_interval, Event::Sample);
        }
        let dur_s = secs(duration);
        while let Some((t, ev)) = self.events.pop() {
            if t > duration {
                break; // the rest lies beyond the run
            }
            self.now = t;
            self.events_processed += 1;
            match ev {
                Event::Delivery(c) => self.on_delivery(c as usize),
                Event::FlowStart(f) => self.on_flow_start(f as usize),
                Event::FlowStop(f) => self.on_flow_stop(f as usize),
                Event::Timer(f) => self.on_timer(f as usize),
                Event::Sample => self.on_sample(),
                Event::Source(i) => self.on_source(i as usize),
                Event::App(i) => self.on_app(i),
            }
            if self.events_processed & 0x3fff == 0 && !progress(secs(t), dur_s) {
                break;
            }
        }
        self.now = duration;
        for c in &mut self.channels {
            c.advance(duration);
        }
        self.results(wall.elapsed().as_secs_f64())
    }

    fn on_delivery(&mut self, c: usize) {
        if self.channels[c].scheduled != Some(self.now) {
            return; // superseded by an earlier head
        }
        self.channels[c].scheduled = None;
        let node = self.channels[c].to;
        while let Some(p) = self.channels[c].pop_arrived(self.now) {
            self.arrive(p, node, self.now);
        }
        self.schedule_channel(c);
    }

    fn schedule_channel(&mut self, c: usize) {
        let ch = &mut self.channels[c];
        if let Some(head) = ch.head_time() {
            if ch.scheduled.is_none_or(|s| head < s) {
                ch.scheduled = Some(head);
                self.events.schedule(head, Event::Delivery(c as u32));
            }
        }
    }

    /// A packet is at `node` at time `t`: deliver it locally or forward it. `t` is the
    /// current time except on express hops, where it is the packet's (later) arrival time.
    fn arrive(&mut self, mut p: Packet, node: u32, t: Nanos) {
        if p.dst == node {
            match p.kind {
                Kind::Data => self.at_sink(p, t),
                Kind::Ack => {
                    debug_assert_eq!(t, self.now, "ACKs reach senders only through events");
                    let f = p.flow as usize;
                    if self.flows[f].finished {
                        // Only a per-flow connection finishes; it ignores late ACKs.
                        self.flows[f].late_acks += 1;
                        return;
                    }
                    let queueing = p.probe.then(|| QueueingTimes { backward: secs(p.aqt as u64), forward: secs(p.aqt_echo as u64) });
                    self.flows[f].integrate_cwnd(self.now);
                    self.flows[f].sender.on_ack(self.now, &AckInfo { seqno: p.seqno, queueing });
                    self.flush_sender(f);
                    if self.flows[f].child {
                        self.finish_if_done(f);
                    }
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
        match self.channels[c].accept(t, p.size) {
            Admission::Accepted { arrives_at, queued } => {
                if p.probe && self.channels[c].aqt_enabled {
                    p.aqt = p.aqt.saturating_add(queued.min(u32::MAX as u64) as u32);
                }
                if self.express_from[c] && arrives_at <= self.scenario.duration {
                    let far = self.channels[c].to;
                    self.arrive(p, far, arrives_at);
                } else {
                    self.channels[c].push_pipe(arrives_at, p);
                    self.schedule_channel(c);
                }
            }
            Admission::Dropped | Admission::Corrupted => match p.kind {
                Kind::Data => self.flows[p.flow as usize].dropped_pkts += 1,
                Kind::Udp => {
                    let s = &mut self.udp[p.flow as usize].stats;
                    s.dropped_pkts += 1;
                    s.dropped_bytes += p.size as u64;
                }
                Kind::Ack => {}
            },
        }
    }

    /// A data packet reaches its sink at time `t`: count it and answer with an ACK.
    fn at_sink(&mut self, p: Packet, t: Nanos) {
        let f = &mut self.flows[p.flow as usize];
        f.received_pkts += 1;
        f.received_bytes += p.size as u64;
        if !f.bins.is_empty() {
            let bin = (t / self.scenario.sample_interval) as usize;
            if let Some(b) = f.bins.get_mut(bin) {
                *b += p.size as u64;
            }
        }
        let (child, parent) = (f.child, f.parent as usize);
        let ack = f.sink.receive(p.seqno);
        // A probing packet is answered by a probing ACK: fresh AQT, the data's AQT echoed.
        let size = f.tcp.ack_size + if p.probe { f.aqt_option_bytes.unwrap_or(0) } else { 0 };
        let ack_packet = Packet { kind: Kind::Ack, seqno: ack, size, dst: f.src, flow: p.flow, probe: p.probe, aqt: 0, aqt_echo: p.aqt };
        if child {
            // A per-flow connection's bytes go to its entry's throughput bins.
            let parent = &mut self.flows[parent];
            if !parent.bins.is_empty() {
                let bin = (t / self.scenario.sample_interval) as usize;
                if let Some(b) = parent.bins.get_mut(bin) {
                    *b += p.size as u64;
                }
            }
        }
        self.arrive(ack_packet, p.dst, t);
    }

    /// A per-flow connection whose data is all handed over and acknowledged is over: keep its
    /// counters, free its sender's tables and its sink's buffer.
    fn finish_if_done(&mut self, f: usize) {
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
        if c > MAX_INDEX as usize {
            // Checked against the expected count before running (lib.rs); a heavy tail can
            // still get here.
            panic!(
                "flow {}: more than {MAX_INDEX} TCP connections in one run (connection = \"per-flow\"); event indices hold 21 bits: shorten the run or use connection = \"shared\"",
                self.flows[entry].name
            );
        }
        let mut rng = stream(self.scenario.seed, STREAM_FLOW_BASE + c as u64);
        let boot_time = rng.gen::<f64>() * self.flows[entry].tcp.tick;
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
            self.flows[c].sender.app_send(self.now, Some(m));
            self.flush_sender(c);
        }
    }

    fn on_flow_start(&mut self, f: usize) {
        if self.apps[f].is_some() {
            let (apps, events, now) = (&mut self.apps, &mut self.events, self.now);
            let hand = apps[f].as_mut().expect("app").start(now, &mut |t, k| events.schedule(t, Event::App(2 * f as u32 + k)));
            self.hand_over(f, hand);
            return;
        }
        let n = self.flows[f].app_packets();
        self.flows[f].sender.app_send(self.now, n);
        self.flush_sender(f);
    }

    fn on_flow_stop(&mut self, f: usize) {
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
    fn on_app(&mut self, index: u32) {
        let (f, process) = ((index / 2) as usize, index % 2);
        let (apps, events, now) = (&mut self.apps, &mut self.events, self.now);
        let Some(app) = apps[f].as_mut() else { return };
        let hand = app.on_event(now, process, &mut |t, k| events.schedule(t, Event::App(2 * f as u32 + k)));
        self.hand_over(f, hand);
    }

    fn hand_over(&mut self, f: usize, hand: Hand) {
        if self.apps[f].as_ref().is_some_and(|a| a.per_flow) {
            return self.hand_over_per_flow(f, hand);
        }
        match hand {
            Hand::Nothing => return,
            Hand::Greedy => self.flows[f].sender.app_send(self.now, None),
            Hand::Packets(n) => self.flows[f].sender.app_send(self.now, Some(n)),
            Hand::Stop => self.flows[f].sender.app_stop(),
        }
        self.flush_sender(f);
    }

    /// UDP source `i` sends a packet now and books its next one.
    fn on_source(&mut self, i: usize) {
        let s = &mut self.udp[i];
        if !s.sends_at(self.now) {
            return;
        }
        let (seqno, next) = s.sent();
        let p = Packet { kind: Kind::Udp, flow: i as u32, seqno, size: s.packet_size, dst: s.dst, probe: false, aqt: 0, aqt_echo: 0 };
        let src = s.src;
        if next <= self.scenario.duration && s.sends_at(next) {
            self.events.schedule(next, Event::Source(i as u32));
        }
        self.arrive(p, src, self.now);
    }

    /// Put the sender's queued segments on the wire and keep its timer scheduled.
    fn flush_sender(&mut self, f: usize) {
        let (src, dst) = (self.flows[f].src, self.flows[f].dst);
        let mut out = std::mem::take(&mut self.outgoing);
        for seg in self.flows[f].sender.drain_segments() {
            out.push(Packet { kind: Kind::Data, flow: f as u32, seqno: seg.seqno, size: seg.wire_bytes, dst, probe: seg.probe, aqt: 0, aqt_echo: 0 });
        }
        for &p in &out {
            self.arrive(p, src, self.now);
        }
        out.clear();
        self.outgoing = out;
        self.arm_timer(f);
    }

    fn arm_timer(&mut self, f: usize) {
        let flow = &mut self.flows[f];
        if let Some(d) = flow.sender.rtx_deadline() {
            if flow.timer_pending.is_none_or(|p| d < p) {
                flow.timer_pending = Some(d);
                self.events.schedule(d, Event::Timer(f as u32));
            }
        }
    }

    fn on_timer(&mut self, f: usize) {
        let flow = &mut self.flows[f];
        if flow.timer_pending == Some(self.now) {
            flow.timer_pending = None;
        }
        if flow.finished {
            return; // a finished per-flow connection has nothing left to send
        }
        match flow.sender.rtx_deadline() {
            Some(d) if d <= self.now => {
                flow.integrate_cwnd(self.now);
                flow.sender.on_timer(self.now);
                self.flush_sender(f);
            }
            Some(_) => self.arm_timer(f),
            None => {}
        }
    }

    fn on_sample(&mut self) {
        let t = secs(self.now);
        let m = &self.scenario.monitor;
        if m.cwnd || m.throughput {
            let interval = self.scenario.sample_interval;
            let bin = (self.now / interval) as usize;
            for (i, f) in self.flows[..self.entries].iter().enumerate() {
                let s = &mut self.flow_series;
                if self.apps[i].as_ref().is_some_and(|a| a.per_flow) {
                    // Per-flow: cwnd summed over the open connections; ssthresh, RTT and the
                    // algorithm's variables of the newest open one; active while any is open.
                    let open = &self.conns[i].open;
                    let newest = open.last().map(|&c| &self.flows[c as usize].sender);
                    s.active.push((!open.is_empty()) as u8);
                    s.time.push(t);
                    s.flow.push(f.name.clone());
                    s.cwnd.push(m.cwnd.then(|| open.iter().map(|&c| self.flows[c as usize].sender.cwnd()).sum()));
                    s.ssthresh.push(if m.cwnd { newest.map(|n| n.ssthresh() as f64) } else { None });
                    s.rtt.push(if m.cwnd { newest.and_then(|n| n.state.last_rtt_sample) } else { None });
                    let bytes = bin.checked_sub(1).and_then(|b| f.bins.get(b)).copied();
                    s.throughput_bps.push(if m.throughput { bytes.map(|b| b as f64 * 8.0 / secs(interval)) } else { None });
                    if let (true, Some(n)) = (m.cwnd, newest) {
                        let row = s.time.len() - 1;
                        for (name, value) in n.probe() {
                            let col = s.extra.entry(name.to_string()).or_default();
                            col.resize(row, None);
                            col.push(Some(value).filter(|v| v.is_finite()));
                        }
                    }
                    continue;
                }
                let active = match &self.apps[i] {
                    Some(app) => app.active(&f.sender),
                    None => plain_active(f, self.now),
                };
                s.active.push(active as u8);
                s.time.push(t);
                s.flow.push(f.name.clone());
                let st = &f.sender.state;
                s.cwnd.push(m.cwnd.then_some(st.cwnd));
                s.ssthresh.push(m.cwnd.then_some(st.ssthresh as f64));
                s.rtt.push(if m.cwnd { st.last_rtt_sample } else { None });
                // The bin that just closed: (t - interval, t].
                let bytes = bin.checked_sub(1).and_then(|b| f.bins.get(b)).copied();
                s.throughput_bps.push(if m.throughput { bytes.map(|b| b as f64 * 8.0 / secs(interval)) } else { None });
                if m.cwnd {
                    let row = s.time.len() - 1;
                    for (name, value) in f.sender.probe() {
                        let col = s.extra.entry(name.to_string()).or_default();
                        col.resize(row, None);
                        col.push(Some(value).filter(|v| v.is_finite()));
                    }
                }
            }
        }
        for &c in &self.monitored_queues {
            let ch = &mut self.channels[c];
            ch.advance(self.now);
            self.queue_series.time.push(t);
            self.queue_series.queue.push(channel_name(&self.scenario, ch));
            self.queue_series.length.push(ch.queue_len() as u64);
        }
        let next = self.now + self.scenario.sample_interval;
        if next <= self.scenario.duration {
            self.events.schedule(next, Event::Sample);
        }
    }

    fn results(mut self, wall_time_s: f64) -> RunResults {
        let rows = self.flow_series.time.len();
        for col in self.flow_series.extra.values_mut() {
            col.resize(rows, None);
        }
        let sc = &self.scenario;
        let duration = sc.duration;
        let dur_s = secs(duration);
        let mut in_flight = vec![0u64; self.flows.len()];
        let mut udp_in_flight = vec![0u64; self.udp.len()];
        for p in self.channels.iter().flat_map(Channel::packets) {
            match p.kind {
                Kind::Data => in_flight[p.flow as usize] += 1,
                Kind::Udp => udp_in_flight[p.flow as usize] += 1,
                Kind::Ack => {}
            }
        }
        // Per-flow entries: one row aggregating their connections.
        let mut members: Vec<Vec<usize>> = (0..self.entries).map(|i| vec![i]).collect();
        for (i, m) in members.iter_mut().enumerate() {
            if self.apps[i].as_ref().is_some_and(|a| a.per_flow) {
                m.clear();
            }
        }
        for c in self.entries..self.flows.len() {
            members[self.flows[c].parent as usize].push(c);
        }
        let flows = self.flows[..self.entries]
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let per_flow = self.apps[i].as_ref().is_some_and(|a| a.per_flow);
                let group = || members[i].iter().map(|&c| &self.flows[c]);
                let mut st = vegaslab_cc::SenderStats::default();
                for g in group() {
                    let s = g.sender.stats();
                    st.pkts_sent += s.pkts_sent;
                    st.bytes_sent += s.bytes_sent;
                    st.retransmitted_pkts += s.retransmitted_pkts;
                    st.fast_retransmits += s.fast_retransmits;
                    st.timeouts += s.timeouts;
                    st.slow_start_entries += s.slow_start_entries;
                }
                let received_pkts: u64 = group().map(|g| g.received_pkts).sum();
                let received_bytes: u64 = group().map(|g| g.received_bytes).sum();
                let delivered_pkts: u64 = group().map(|g| g.sink.delivered_pkts).sum();
                let dropped_pkts: u64 = group().map(|g| g.dropped_pkts).sum();
                let in_flight_pkts: u64 = members[i].iter().map(|&c| in_flight[c]).sum();
                // cwnd of the open connections (all of them for a plain flow).
                let final_cwnd: f64 = group().filter(|g| !g.finished).map(|g| g.sender.cwnd()).sum();
                let final_ssthresh = members[i].last().map_or(f.sender.ssthresh(), |&c| self.flows[c].sender.ssthresh());
                // Applications with their own clock (apps) hand data over many times: the
                // sender's "all acknowledged" moments are not a completion.
                let done = if self.apps[i].is_some() { None } else { f.sender.completed_at() };
                let completion = done.map(|t| secs(t.saturating_sub(f.start)));
                let end = match done {
                    Some(t) => t,
                    None => f.stop.unwrap_or(duration).min(duration),
                };
                let active = secs(end.saturating_sub(f.start));
                let delivered_bytes = delivered_pkts * f.tcp.packet_size as u64;
                FlowResult {
                    flow: f.name.clone(),
                    cc: f.cc.to_string(),
                    from: sc.nodes[f.src as usize].clone(),
                    to: sc.nodes[f.dst as usize].clone(),
                    start_s: secs(f.start),
                    end_s: secs(end),
                    connections: per_flow.then_some(self.conns[i].opened),
                    open_connections: per_flow.then_some(self.conns[i].open.len() as u64),
                    late_acks: per_flow.then(|| group().map(|g| g.late_acks).sum()),
                    data_pkts_sent: st.pkts_sent,
                    data_bytes_sent: st.bytes_sent,
                    retransmitted_pkts: st.retransmitted_pkts,
                    fast_retransmits: st.fast_retransmits,
                    timeouts: st.timeouts,
                    slow_start_entries: st.slow_start_entries,
                    received_pkts,
                    received_bytes,
                    delivered_pkts,
                    delivered_bytes,
                    throughput_bps: received_bytes as f64 * 8.0 / dur_s,
                    goodput_bps: delivered_bytes as f64 * 8.0 / dur_s,
                    active_throughput_bps: if active > 0.0 { received_bytes as f64 * 8.0 / active } else { 0.0 },
                    completion_time_s: completion,
                    final_cwnd,
                    mean_cwnd: {
                        // Summed over the connections (a finished one stopped integrating).
                        let mut area = 0.0;
                        for g in group() {
                            area += g.cwnd_area;
                            if !g.finished && end > g.cwnd_since {
                                area += g.sender.cwnd() * (end - g.cwnd_since) as f64;
                            }
                        }
                        let span = end.saturating_sub(f.start);
                        if span > 0 { area / span as f64 } else { final_cwnd }
                    },
                    final_ssthresh,
                    in_flight_pkts,
                    dropped_pkts,
                }
            })
            .collect();
        let queues = self
            .channels
            .iter()
            .map(|c| {
                let (mean, std) = c.stats.mean_std(duration);
                QueueResult {
                    queue: channel_name(sc, c),
                    kind: c.queue_spec().kind().to_string(),
                    limit: c.queue_spec().limit(),
                    arrivals: c.stats.arrivals,
                    drops: c.stats.drops,
                    departures: c.stats.departures,
                    loss_rate: if c.stats.arrivals > 0 { c.stats.drops as f64 / c.stats.arrivals as f64 } else { 0.0 },
                    mean_len: mean,
                    std_len: std,
                    max_len: c.stats.max_len,
                    errors: c.has_error_model().then_some(c.stats.errors),
                    early_drops: c.red().map(|r| r.early_drops),
                    forced_drops: c.red().map(|r| r.forced_drops),
                }
            })
            .collect();
        let links = self
            .channels
            .iter()
            .map(|c| {
                let busy = c.stats.busy_ns.saturating_sub(c.busy_overhang(duration) as u128);
                LinkResult {
                    link: channel_name(sc, c),
                    bandwidth_bps: c.bandwidth_bps,
                    bytes_sent: c.stats.bytes_sent,
                    utilisation: busy as f64 / duration as f64,
                }
            })
            .collect();
        RunResults {
            meta: RunMeta {
                scenario: sc.id.clone(),
                source: sc.source.clone(),
                seed: sc.seed,
                version: crate::VERSION.to_string(),
                duration_s: dur_s,
                wall_time_s,
                events: self.events_processed,
            },
            flows,
            queues,
            links,
            udp: self
                .udp
                .iter()
                .zip(&udp_in_flight)
                .map(|(u, &in_flight_pkts)| {
                    let end = u.stop.unwrap_or(duration).min(duration);
                    let span = secs(end.saturating_sub(u.start));
                    let per_span = |bytes: u64| if span > 0.0 { bytes as f64 * 8.0 / span } else { 0.0 };
                    UdpResult {
                        source: u.name.clone(),
                        model: u.model.to_string(),
                        from: sc.nodes[u.src as usize].clone(),
                        to: sc.nodes[u.dst as usize].clone(),
                        start_s: secs(u.start),
                        end_s: secs(end),
                        sent_pkts: u.stats.sent_pkts,
                        sent_bytes: u.stats.sent_bytes,
                        received_pkts: u.stats.received_pkts,
                        received_bytes: u.stats.received_bytes,
                        dropped_pkts: u.stats.dropped_pkts,
                        dropped_bytes: u.stats.dropped_bytes,
                        in_flight_pkts,
                        throughput_bps: u.stats.received_bytes as f64 * 8.0 / dur_s,
                        active_throughput_bps: per_span(u.stats.received_bytes),
                        offered_bps: per_span(u.stats.sent_bytes),
                        nominal_rate_bps: u.nominal_rate_bps,
                    }
                })
                .collect(),
            series: Series { flows: self.flow_series, queues: self.queue_series },
        }
    }
}

fn channel_name(sc: &Scenario, c: &Channel) -> String {
    format!("{}->{}", sc.nodes[c.from as usize], sc.nodes[c.to as usize])
}

/// Static shortest-path (hop count) routing toward each destination, ties broken by the
/// lowest channel index, as a table `next_hop[row * nodes + node]`.
fn routes(nodes: usize, channels: &[Channel], dests: &[u32]) -> (Vec<u32>, Vec<u32>) {
    let mut incoming: Vec<Vec<usize>> = vec![Vec::new(); nodes];
    for (i, c) in channels.iter().enumerate() {
        incoming[c.to as usize].push(i);
    }
    let mut table = vec![NO_ROUTE; nodes * dests.len()];
    let mut rows = vec![NO_ROUTE; nodes];
    for (row, &d) in dests.iter().enumerate() {
        rows[d as usize] = row as u32;
        let mut dist = vec![usize::MAX; nodes];
        dist[d as usize] = 0;
        let mut frontier = VecDeque::from([d as usize]);
        while let Some(n) = frontier.pop_front() {
            for &ci in &incoming[n] {
                let from = channels[ci].from as usize;
                if dist[from] == usize::MAX {
                    dist[from] = dist[n] + 1;
                    frontier.push_back(from);
                }
            }
        }
        for (ci, c) in channels.iter().enumerate() {
            let (from, to) = (c.from as usize, c.to as usize);
            if dist[from] != usize::MAX && dist[to] != usize::MAX && dist[to] + 1 == dist[from] {
                let slot = &mut table[row * nodes + from];
                if *slot == NO_ROUTE {
                    *slot = ci as u32;
                }
            }
        }
    }
    (table, rows)
}
