//! The simulator: builds the network from a [`Scenario`] and runs the event loop.

use crate::apps::{plain_active, App, Hand};
use crate::channel::{Admission, Channel, NOT_SCHEDULED};
use crate::event::{scripted_clock, Event, EventQueue, Moment, MAX_INDEX};
use crate::express::{express_channels, express_nodes, Route};
use crate::flow::Flow;
use crate::packet::{Kind, Packet};
use crate::results::{Aborted, WindowLimited, FlowResult, FlowSeries, LinkResult, QueueResult, QueueSeries, RunMeta, RunResults, Series, UdpResult};
use crate::rng::{stream, STREAM_APP_BASE, STREAM_TIES, STREAM_UDP_BASE};
use crate::scenario::{Scenario, SenderClock, TieOrder};
use crate::udp::UdpSource;
use std::cell::RefCell;
use std::collections::VecDeque;
use std::time::{Duration, Instant};
use vegaslab_cc::{secs, AckInfo, Nanos, QueueingTimes};

const NO_ROUTE: u32 = u32::MAX;

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
    /// Next hops used by some flow's or UDP source's path (`routing`).
    routes: routing::RouteTable,
    /// Computes a next hop missing from `routes` (none should be: see `route`).
    router: RefCell<routing::Router>,
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
    /// Per node, in one word: whether packets ending there may be taken at their arrival
    /// without an event when `node_may_run_ahead` says so at the time (`express`, "Packets to
    /// an end node": `express_nodes`, less nodes with a clocked application or more than
    /// `MAX_SENDERS_AHEAD` senders) and, if so, the flows sending from it, whose timers and stops are
    /// checked per packet (`senders_may_run_ahead`): `NODE_NEVER_AHEAD`, `NODE_NO_SENDERS`,
    /// one flow's index, or `NODE_SENDER_LIST | i` for the list at `sender_lists[i]` (its
    /// length, then its flows).
    ///
    /// Decided (issue 11, cost per packet-hop at many flows): before, each packet reaching
    /// an end node read a per-node flag, the node's `Vec` of senders and that vector's
    /// own heap buffer, three cache misses with thousands of hosts; now one word per node
    /// (and the sender's line, read anyway by its ACK).
    node_ahead: Vec<u32>,
    sender_lists: Vec<u32>,
    /// A sender is sending (`flush_sender`): an ACK reached through its packets takes an event.
    in_sender: bool,
    /// When the next `Event::Sample` reads the flows' state (`Nanos::MAX`: none pending).
    next_flow_sample: Nanos,
    flow_series: FlowSeries,
    queue_series: QueueSeries,
    events_processed: u64,
    /// Time of the latest evented packet arrival at each node, and the count of arrivals at
    /// a node at the same instant as an earlier one (`RunMeta::same_instant_arrivals`).
    last_arrival: Vec<Nanos>,
    same_instant_arrivals: u64,
    /// Most TCP connections (flows and per-flow connections) the run may hold: an event
    /// carries a flow index in `MAX_INDEX` bits.
    connection_limit: usize,
    /// The run stopped early on a limit (`RunMeta::aborted`).
    aborted: Option<Aborted>,
    /// Links going down and up (`links[].down`), `None` without any.
    failures: Option<Box<Failures>>,
    /// Express hops carry a packet only if it arrives before this: the run's end (plus 1 ns)
    /// or the first route change, whichever is first (see `on_route_change`).
    express_until: Nanos,
    /// The packet trace (`[trace]`, `crate::trace`); `None` (the default) costs one branch per
    /// packet hop. Measured (2026-11-25, issue 14) with tracing off: +2.5% instructions on the
    /// benchmark's 10 s slice (391.3 M -> 401.0 M), wall time within the machine's noise (8
    /// interleaved runs: min 0.773 -> 0.781 s, median 0.817 -> 0.807 s). Tried and not kept:
    /// the test folded into the link-failure gate with a separate traced hop (408.6 M), and a
    /// copy of `arrive` per case chosen by a const parameter (417.5 M): both changed how the
    /// loop was inlined. Zero cost needs the event loop itself to be chosen once per run.
    /// Tried again (issue 11, 2026-11-28), not kept: `hops` in two copies, one for plain
    /// runs (no failures, trace or prefetching, `run.clock = "ns2"`) with those tests folded
    /// away: 1,662.7 M -> 1,725.2 M instructions on the 50 s slice, because with two callers
    /// `at_sink`, `push_pipe`, `node_may_run_ahead` and `Sink::receive` were no longer
    /// inlined; 1,670.6 M with the first three forced inline. Also not kept: inlining
    /// `schedule_channel` into `on_delivery` (+23 M) and `on_delivery` out of `run` (+15 M).
    tracer: Option<Box<crate::trace::Tracer>>,
    /// Where the trace went, or why it could not be written (`RunMeta::trace`).
    trace_info: Option<crate::trace::TraceInfo>,
    /// Prefetch what the next delivery and a long waiting queue will read (`prefetch_next`,
    /// `Channel::prefetch_waiting`): runs with at least `PREFETCH_FROM_CHANNELS` channels.
    prefetch: bool,
    /// `failures` or `prefetch`: one test per packet-hop for both when neither applies
    /// (issue 11; benchmark 50 s slice 1,603.7 M -> 1,596.1 M instructions).
    failures_or_prefetch: bool,
}

/// Runs with this many channels or more prefetch (`Simulator::prefetch_next`).
///
/// Decided (issue 11, cost per packet-hop at many flows): from 5,000 flows on, most of a
/// delivery's time was two dependent cache misses, the channel's line 3 and then its pipe's
/// head (perf at 20,000 flows: 19% and 36% of `run`'s samples), and the next event is
/// known before the current one runs: bucket 0's next entry, or the earliest entry the last
/// refill moved (`EventQueue::next_code`; it named the next delivery 74% of the time at
/// 20,000 flows, 67% at 5,000, with the event queue's one bucket a bit; with its 32-bucket
/// levels, 2026-11-29, not counted again, the time at 5,000 and 20,000 flows was
/// unchanged). So each event first asks for the next delivery's channel line, and a
/// delivery, once it holds its packet, for the next one's pipe head; an arrival
/// at a channel asks for its waiting queue's entry 8 places ahead (a bottleneck's front is a
/// miss at every arrival: 12% of `hops`' samples at 5,000 flows). Hints only: results are
/// bit-identical. Measured (2026-11-25, release binary, interleaved runs on the shared
/// 2-core VM, medians of `meta.wall_time_s`; "off" is this code with the threshold out of
/// reach, so it has the other changes of the same commit: `push_fields`, `Channel::tail_at`):
///
/// | scenario (`scripts/bench_scale.py`'s dumbbells) | before  | off     | prefetching |
/// |--------------------------------------------------|---------|---------|-------------|
/// | 20,000 flows, 400 ms simulated, 9 runs            | 3.09 s  | 3.21 s  | 2.74 s      |
/// | 20,000 flows, 2 s simulated, 3 runs               | 10.27 s |         | 9.45 s      |
/// | 5,000 flows, 1 s simulated, 9 runs                | 1.19 s  | 1.21 s  | 1.18 s      |
/// | 500 flows, 2 s simulated, 15 runs                 | 0.119 s | 0.118 s | 0.115 s     |
/// | benchmark (50 flows, 202 channels), 5 runs        |         | 0.811 s | 0.848 s     |
///
/// The waiting-queue prefetch came on top, in another batch at 20,000 flows, 400 ms (7
/// runs): 3.07 s before, 2.79 s without it, 2.67 s with it. At 5,000 flows every variant
/// stayed within the machine's noise. Small runs lose (everything is in cache and the hints
/// cost instructions), hence the threshold, between the benchmark's 202 channels and 500
/// flows' 2,002. Below it the gate costs a branch per event and per hop (429.0 M -> 431.8 M
/// instructions on the benchmark's 10 s slice). Tried, not kept: a lookahead of two events
/// (at each event the channel line of the one after next, and the next one's head) was no
/// faster at 20,000 flows than one and cost 6% more instructions on the benchmark before the
/// gate; noting events scheduled after a refill in the hint left its hit rate at 74.0%.
const PREFETCH_FROM_CHANNELS: usize = 1024;

/// The link changes of a run and what rebuilding the routes needs.
// A change is named by its index in an event (`Event::Route`).
const _: () = assert!(crate::scenario::limits::MAX_LINK_CHANGES <= MAX_INDEX as usize);

struct Failures {
    /// (time, link index, goes down), in time order (links in scenario order at one instant).
    changes: Vec<(Nanos, u32, bool)>,
    /// Every (source, destination) pair a packet may travel (as for `RouteTable::build`).
    pairs: Vec<(u32, u32)>,
}

/// The event loop calls `progress` at least this often in wall time (and every 0x3fff events),
/// so an interrupt (Python's Ctrl-C is checked in the callback) always gets through.
const PROGRESS_WALL: Duration = Duration::from_millis(50);
/// Most senders on one node for which packets reaching it may be taken ahead of the clock
/// (`node_may_run_ahead` checks each of them per packet).
const MAX_SENDERS_AHEAD: usize = 16;
/// `Simulator::node_ahead`'s words: packets ending at the node take events; the node sends
/// no flow; the mark of a list of its senders (below it, one flow's index).
const NODE_NEVER_AHEAD: u32 = u32::MAX;
const NODE_NO_SENDERS: u32 = u32::MAX - 1;
const NODE_SENDER_LIST: u32 = 1 << 31;
/// Events between two looks at the wall clock (a look costs about 20 ns). No event runs long:
/// transmissions take at least 1 ns (`Channel::tx_time`), so an event handles only packets
/// already in a pipe when it started, and hops and ACKs handed on at once follow loop-free
/// paths.
const WALL_CHECK_EVERY: u64 = 128;
const _: () = assert!(0x4000 % WALL_CHECK_EVERY == 0);

impl Simulator {
    pub fn new(scenario: Scenario) -> Self {
        let mut channels = Vec::with_capacity(scenario.links.len() * 2);
        for l in &scenario.links {
            channels.push(Channel::new(l.a as u32, l.b as u32, &l.forward, scenario.seed, channels.len()));
            channels.push(Channel::new(l.b as u32, l.a as u32, &l.reverse, scenario.seed, channels.len()));
        }
        // Sets, not list scans: both lists may be as long as the channel list.
        let aqt_routers: std::collections::HashSet<usize> = scenario.aqt_routers.iter().copied().collect();
        for c in &mut channels {
            c.aqt_enabled = aqt_routers.contains(&(c.from as usize));
            c.set_ties_by_clock(scenario.clock == SenderClock::Ns2);
        }
        let monitored: std::collections::HashSet<(usize, usize)> = scenario.monitor.queues.iter().copied().collect();
        let flows: Vec<Flow> = scenario
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let mut flow = Flow::new(f, crate::flow::tick_phase(&f.tcp, scenario.seed, i), scenario.monitor.cwnd);
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
        // Every path a packet can take: flows both ways (per-flow connections share their
        // entry's endpoints), UDP sources one way.
        let mut pairs: Vec<(u32, u32)> = flows.iter().flat_map(|f| [(f.src, f.dst), (f.dst, f.src)]).collect();
        pairs.extend(scenario.udp.iter().map(|u| (u.from as u32, u.to as u32)));
        let n_nodes = scenario.nodes.len();
        let mut router = routing::Router::new(n_nodes, &channels);
        let routes = routing::RouteTable::build(&mut router, n_nodes, &pairs);
        let failures = Failures::of(&scenario, &pairs);
        // `arrives_at < express_until` is `arrives_at <= duration` without failures.
        let express_until = failures.as_ref().map_or(Nanos::MAX, |f| f.changes[0].0).min(scenario.duration + 1);
        let monitored_queues = (0..channels.len())
            .filter(|&c| {
                let ch = &channels[c];
                scenario.monitor.all_queues || monitored.contains(&(ch.from as usize, ch.to as usize))
            })
            .collect();
        let mut events = event_queue(&scenario);
        let prefetch = channels.len() >= PREFETCH_FROM_CHANNELS;
        if prefetch {
            events.track_ahead();
        }
        let mut sim = Simulator {
            scenario,
            now: 0,
            events,
            channels,
            routes,
            router: RefCell::new(router),
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
            last_arrival: vec![Nanos::MAX; n_nodes],
            same_instant_arrivals: 0,
            node_ahead: Vec::new(),
            sender_lists: Vec::new(),
            in_sender: false,
            next_flow_sample: Nanos::MAX,
            connection_limit: MAX_INDEX as usize + 1,
            aborted: None,
            express_until,
            tracer: None,
            trace_info: None,
            failures_or_prefetch: failures.is_some() || prefetch,
            failures,
            prefetch,
        };
        let chans: Vec<(u32, u32, f64)> = sim.channels.iter().map(|c| (c.from, c.to, c.bandwidth_bps)).collect();
        sim.tracer = crate::trace::Tracer::new(&sim.scenario, &chans);
        if let Some(f) = &sim.failures {
            for &(_, link, _) in &f.changes {
                sim.channels[2 * link as usize].can_fail = true;
                sim.channels[2 * link as usize + 1].can_fail = true;
            }
        }
        // The series' interned names: rows store indices.
        sim.flow_series.names = sim.flows[..sim.entries].iter().map(|f| f.name.clone()).collect();
        sim.queue_series.names =
            sim.monitored_queues.iter().map(|&c| channel_name(&sim.scenario, &sim.channels[c])).collect();
        // `run_text` refuses these counts before building; a direct user gets a clean stop.
        let too_many = sim.channels.len() > MAX_INDEX as usize + 1
            || sim.flows.len() * 2 > MAX_INDEX as usize + 1
            || sim.scenario.udp.len() > MAX_INDEX as usize + 1;
        if too_many {
            sim.aborted = Some(Aborted {
                field: String::new(),
                message: format!(
                    "at most {} link directions, {} flows and {} UDP sources fit the event indices",
                    MAX_INDEX + 1,
                    MAX_INDEX / 2 + 1,
                    MAX_INDEX + 1
                ),
            });
        }
        if sim.unroutable_udp().is_empty() {
            sim.build_udp_sources();
        }
        if sim.unroutable_flows().is_empty() && sim.unroutable_udp().is_empty() {
            let mut routes: Vec<Route> = (0..sim.flows.len()).map(|f| sim.flow_route(f)).collect();
            routes.extend((0..sim.scenario.udp.len()).map(|i| sim.udp_route(i)));
            for (c, hands_on) in express_channels(&sim.channels, &routes).into_iter().enumerate() {
                sim.channels[c].hands_on = hands_on;
            }
            let mut express_node = express_nodes(n_nodes, &sim.channels, &routes);
            let mut node_senders = vec![Vec::new(); n_nodes];
            for f in 0..sim.flows.len() {
                let src = sim.flows[f].src as usize;
                node_senders[src].push(f as u32);
                // A sender with its own clock sends at times no arrival decides.
                if sim.apps[f].is_some() {
                    express_node[src] = false;
                }
            }
            for (n, senders) in node_senders.iter().enumerate() {
                // Checked per packet, one by one: a node sending many flows is left to events.
                if senders.len() > MAX_SENDERS_AHEAD {
                    express_node[n] = false;
                }
            }
            sim.set_node_ahead(&express_node, &node_senders);
        } else {
            sim.node_ahead = vec![NODE_NEVER_AHEAD; n_nodes];
        }
        sim
    }

    /// `node_ahead` and `sender_lists` from whether each node qualifies and its senders.
    fn set_node_ahead(&mut self, express_node: &[bool], node_senders: &[Vec<u32>]) {
        self.sender_lists.clear();
        self.node_ahead = (0..express_node.len())
            .map(|n| match node_senders[n].as_slice() {
                _ if !express_node[n] => NODE_NEVER_AHEAD,
                [] => NODE_NO_SENDERS,
                &[f] => {
                    assert!(f < NODE_SENDER_LIST, "a flow index below the list mark");
                    f
                }
                list => {
                    let i = self.sender_lists.len() as u32;
                    assert!(i < NODE_NO_SENDERS - NODE_SENDER_LIST, "sender lists within their mark's range");
                    self.sender_lists.push(list.len() as u32);
                    self.sender_lists.extend_from_slice(list);
                    NODE_SENDER_LIST | i
                }
            })
            .collect();
    }

    /// Lower the number of TCP connections a run may hold (flows plus per-flow connections;
    /// normally what the event indices can carry), to test what happens when it is exceeded.
    #[doc(hidden)]
    pub fn with_connection_limit(mut self, limit: usize) -> Self {
        self.connection_limit = limit.min(MAX_INDEX as usize + 1);
        self
    }

    /// Process every hop through an event (for checking that express hops change nothing).
    pub fn without_express_hops(mut self) -> Self {
        self.channels.iter_mut().for_each(|c| c.hands_on = false);
        self.without_express_to_senders()
    }

    /// Express hops, but every ACK reaches its sender through an event (for checking that
    /// ACKs handed to their senders ahead of the clock change nothing).
    #[doc(hidden)]
    pub fn without_express_to_senders(mut self) -> Self {
        self.node_ahead.iter_mut().for_each(|e| *e = NODE_NEVER_AHEAD);
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

    /// Create the packet trace's file (`[trace] file`, a plain name) in `dir`, the output
    /// directory the caller names, before the run (`trace::Tracer::open`): an existing file
    /// or planted link of that name, or a directory that cannot take it, is an error naming
    /// the path now, not after the run. `Ok(None)` when the scenario has no `[trace]`. A run
    /// whose trace was never opened records it as not written (`RunMeta::trace`).
    pub fn open_trace(&mut self, dir: &std::path::Path) -> Result<Option<std::path::PathBuf>, crate::ScenarioError> {
        let Some(tracer) = self.tracer.as_deref_mut() else { return Ok(None) };
        tracer.open(dir).map(Some).map_err(|e| {
            let path = dir.join(&self.scenario.trace.as_ref().map_or(String::new(), |t| t.file.clone()));
            let why = if e.kind() == std::io::ErrorKind::AlreadyExists {
                "already exists; a trace never replaces a file: remove it or give another output directory".to_string()
            } else {
                format!("cannot create the trace: {e}")
            };
            crate::ScenarioError::new(&self.scenario.source, "trace.file", crate::ErrorKind::File, format!("{}: {why}", path.display()))
        })
    }

    /// Flows whose endpoints have no path between them (checked before running).
    pub fn unroutable_flows(&self) -> Vec<String> {
        self.flows
            .iter()
            .filter(|f| self.route(f.src, f.dst) == NO_ROUTE || self.route(f.dst, f.src) == NO_ROUTE)
            .map(|f| f.name.clone())
            .collect()
    }

    /// The channel from `node` toward `dst` (`NO_ROUTE`: none, or `node == dst`).
    #[inline]
    fn route(&self, node: u32, dst: u32) -> u32 {
        match self.routes.get(node, dst) {
            Some(c) => c,
            None => self.route_unrecorded(node, dst),
        }
    }

    /// Packets only travel the recorded paths; this keeps `route` total anyway.
    #[cold]
    #[inline(never)]
    fn route_unrecorded(&self, node: u32, dst: u32) -> u32 {
        self.router.borrow_mut().next_hop(node, dst)
    }

    /// Run to the end. `progress(sim_seconds, duration_seconds)` is called every few
    /// thousand events and at least every 50 ms of wall time; returning false stops the run
    /// early (results cover what ran).
    ///
    /// A limit found only while running (more per-flow connections than the event indices
    /// hold) also stops the run at that moment, with `meta.aborted` saying why.
    pub fn run(mut self, mut progress: impl FnMut(f64, f64) -> bool) -> RunResults {
        let wall = Instant::now();
        if self.aborted.is_some() {
            return self.results(0.0);
        }
        let duration = self.scenario.duration;
        for i in 0..self.flows.len() {
            let f = &self.flows[i];
            self.events.schedule(f.start, 0, Event::FlowStart(i as u32));
            if let Some(stop) = f.stop {
                if stop < duration {
                    self.events.schedule(stop, 0, Event::FlowStop(i as u32));
                }
            }
        }
        for i in 0..self.udp.len() {
            if let Some(t) = self.udp[i].first_send() {
                if self.udp[i].sends_at(t) {
                    self.events.schedule(t, 0, Event::Source(i as u32));
                }
            }
        }
        self.schedule_route_changes();
        for &c in &self.monitored_queues {
            self.channels[c].start_sampling(self.scenario.sample_interval);
        }
        let m = &self.scenario.monitor;
        if m.cwnd || m.throughput {
            if m.throughput {
                let bins = (duration / self.scenario.sample_interval).saturating_add(1) as usize;
                for f in &mut self.flows {
                    f.bins = vec![0; bins];
                }
            }
            self.events.schedule(self.scenario.sample_interval, 0, Event::Sample);
            self.next_flow_sample = self.scenario.sample_interval;
        }
        let dur_s = secs(duration);
        let mut last_progress = wall;
        // Where the run stopped: its end, or the event at which it was stopped.
        let mut stop = duration;
        while let Some((t, ev)) = self.events.pop() {
            if t > duration {
                break; // the rest lies beyond the run
            }
            self.now = t;
            self.events_processed += 1;
            if self.prefetch {
                self.prefetch_next();
            }
            match ev {
                Event::Delivery(c) => self.on_delivery(c as usize),
                Event::FlowStart(f) => self.on_flow_start(f as usize),
                Event::FlowStop(f) => self.on_flow_stop(f as usize),
                Event::Timer(f) => self.on_timer(f as usize),
                Event::Sample => self.on_sample(),
                Event::Source(i) => self.on_source(i as usize),
                Event::App(i) => self.on_app(i),
                Event::Route(k) => self.on_route_change(k as usize),
            }
            if self.aborted.is_some() {
                stop = t;
                break;
            }
            // Every 0x4000th event is also a multiple of `WALL_CHECK_EVERY`: one test per event.
            let n = self.events_processed;
            if n.is_multiple_of(WALL_CHECK_EVERY) && (n & 0x3fff == 0 || last_progress.elapsed() >= PROGRESS_WALL) {
                last_progress = Instant::now();
                if !progress(secs(t), dur_s) {
                    stop = t;
                    break;
                }
            }
        }
        self.collect_queue_samples(stop);
        self.now = duration;
        // Every queue and link statistic is taken at `duration`, also for a run stopped early
        // (its packets already accepted keep their fates; `mean_len`, utilisation and the
        // throughputs are over `duration` too): one end for all, so arrivals = departures +
        // drops + backlog holds in any case. `run_text` never returns a run stopped on a limit
        // as results, and the Python layer raises on a stopped callback or Ctrl-C.
        for c in &mut self.channels {
            c.finish(duration);
        }
        self.trace_info = self.tracer.take().map(|tr| tr.finish(duration));
        self.results(wall.elapsed().as_secs_f64())
    }

    /// Overlap the next delivery's cache misses with this event: its channel's line now, its
    /// pipe's head once this delivery has its packet (`prefetch_next_head`). Hints only
    /// (`EventQueue::next_code`): nothing reads what they fetch any sooner.
    #[inline]
    fn prefetch_next(&self) {
        if let Some(c) = Event::delivery_channel(self.events.next_code()) {
            if let Some(ch) = self.channels.get(c as usize) {
                ch.prefetch_delivery();
            }
        }
    }

    #[inline]
    fn prefetch_next_head(&self) {
        if let Some(c) = Event::delivery_channel(self.events.next_code()) {
            if let Some(ch) = self.channels.get(c as usize) {
                ch.prefetch_head();
            }
        }
    }

    fn on_delivery(&mut self, c: usize) {
        let ch = &self.channels[c];
        if ch.scheduled_since != self.events.popped_since() || ch.scheduled_at != self.now {
            return; // superseded by an earlier head
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
    /// Decided (issue 11): `run.clock = "exact"` has its own copy (`schedule_channel_exact`),
    /// so that the default's has no call to come back from (`exact_clock`) and saves no
    /// registers; with `EventQueue::schedule_since`'s growth a tail call, it needs no frame
    /// at all (benchmark 50 s slice: 1,620.5 M -> 1,603.7 M instructions).
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
    /// Decided (issue 11): the event queue's current instant is not saved and put back around
    /// `hops`, which moves it only for an ACK reaching its sender, and a packet sent within
    /// an event never brings one there within it: while a sender sends (`in_sender`) its
    /// packets take no express hop into an end node, no channel into a sender hands packets
    /// on (`express_channels`), and a UDP datagram has no ACK. Benchmark 50 s slice:
    /// 1,380.0 M -> 1,374.3 M instructions.
    #[inline]
    fn arrive(&mut self, p: Packet, node: u32, t: Nanos) {
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
    /// Decided (issue 11): an express hop moves the current instant in locals (`since`, what
    /// `accept` reads, and `clock_now`), written to the event queue only for a sender, its one
    /// other reader (a timer is scheduled at the instant), not at every express hop.
    /// Benchmark 50 s slice: 1,385.6 M -> 1,380.0 M instructions (with the instant written
    /// only when an express hop had moved it, an `Option`: 1,384.3 M).
    fn hops(&mut self, mut p: Packet, mut node: u32, mut t: Nanos) {
        // The current instant is at `t` (the caller's event, or the ACK `at_sender` handles).
        let Moment { at: _, clock: mut clock_now, mut since } = self.events.instant();
        loop {
            if p.dst == node {
                match p.kind {
                    Kind::Data => {
                        (p, node, t) = self.at_sink(p, t);
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
            // checked before the run).
            if self.failures_or_prefetch {
                if self.failures.is_some() && (c == NO_ROUTE as usize || self.channels[c].down) {
                    return self.lost_without_link(p, c, t);
                }
                if self.prefetch {
                    self.channels[c].prefetch_waiting();
                }
            }
            let admission = self.channels[c].accept(t, p.size, p.clock, since);
            // The trace gets the admission in each arm, rebuilt from its parts: handed the
            // admission itself, the compiler kept that in memory and read its two doubles back
            // in one load wider than the writes, which the processor cannot forward (perf put
            // ~10% of the benchmark's samples on that load; issue 11). Rebuilt only where the
            // trace is written (`trace_accepted`, and a fresh value for a lost packet), and
            // not returned in memory by `Channel::lost_on_link`: any one of the three kept the
            // admission in memory, five stores per packet-hop that nothing read (benchmark
            // 50 s slice: 1,762.7 M -> 1,743.9 M instructions).
            match admission {
                Admission::Accepted { arrives_at, queued, clock, start_clock } => {
                    if self.tracer.is_some() {
                        self.trace_accepted(c, &p, t, (arrives_at, queued), (clock, start_clock));
                    }
                    if p.probe && self.channels[c].aqt_enabled {
                        p.aqt = p.aqt.saturating_add(queued.min(u32::MAX as u64) as u32);
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
    /// Decided: a packet behind another in `c`'s pipe takes an event, so on a link whose pipe
    /// never drains (a long delay and a steady stream) the node stops running ahead once one
    /// packet could not. Draining such a pipe ahead of the clock is left for later.
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

    /// An ACK reaches its sender at `t`: the sender reacts and sends what it may. `t` is the
    /// current time, or the ACK's arrival ahead of the clock (an express hop): the current
    /// time is `t` while the sender reacts, as in the event it stands for. Out of line, so
    /// that `hops` is the forwarding loop alone.
    ///
    /// Decided (issue 11): one function for both cases, not a second one around it that moved
    /// the clock for an ACK ahead of it (two calls per ACK). Measured: 1,420.2 M -> 1,415.2 M
    /// instructions on the benchmark's 50 s slice.
    #[inline(never)]
    fn at_sender(&mut self, p: &Packet, t: Nanos) {
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
        self.flows[f].integrate_cwnd(self.now);
        let clock = self.sender_clock(p.clock);
        self.flows[f].sender.on_ack_at(self.now, clock, &AckInfo { seqno: p.seqno, queueing });
        self.flush_sender(f);
        if self.flows[f].child {
            self.finish_if_done(f);
        }
    }

    /// Record a hop in the packet trace (`crate::trace`); out of line, so that `arrive` pays
    /// only the test of `tracer`.
    #[cold]
    #[inline(never)]
    fn trace_hop(&mut self, c: usize, p: &Packet, t: Nanos, admission: Admission) {
        let Some(tr) = self.tracer.as_deref_mut() else { return };
        let ch = &self.channels[c];
        let parent = self.flows.get(p.flow as usize).map_or(p.flow, |f| f.parent);
        tr.hop(c, ch.from, ch.to, p, parent, t, &admission, |at| ch.delay_at(at));
    }

    /// `trace_hop` for an accepted packet, given the admission's parts: built here, it
    /// is only in memory when traced (issue 11; see `Channel::lost_on_link`).
    #[cold]
    #[inline(never)]
    fn trace_accepted(&mut self, c: usize, p: &Packet, t: Nanos, (arrives_at, queued): (Nanos, Nanos), (clock, start_clock): (f64, f64)) {
        self.trace_hop(c, p, t, Admission::Accepted { arrives_at, queued, clock, start_clock });
    }

    /// A data packet reaches its sink at time `t`: count it; returns the ACK to send from
    /// the sink (for `arrive`). Inlined into `hops` (tried out of line, issue 11: 1,596.1 M
    /// -> 1,600.1 M instructions on the benchmark's 50 s slice).
    fn at_sink(&mut self, p: Packet, t: Nanos) -> (Packet, u32, Nanos) {
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
        let size = f.ack_size + if p.probe { f.aqt_option_bytes.unwrap_or(0) } else { 0 };
        // ns-2's TCPSink answers within the data packet's arrival event: the same clock.
        let ack_packet = Packet { kind: Kind::Ack, seqno: ack, size, dst: f.src, flow: p.flow, probe: p.probe, aqt: 0, aqt_echo: p.aqt, clock: p.clock };
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
        (ack_packet, p.dst, t)
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
        if c >= self.connection_limit {
            // `run_text` refuses runs expected to come near the limit; chance can still get
            // here. Decided: stop the run (the caller reports an error) rather than drop this
            // flow arrival and later ones, which would give results that look complete but
            // are not.
            if self.aborted.is_none() {
                self.aborted = Some(Aborted {
                    field: "flows.app.connection".to_string(),
                    message: format!(
                        "flow {}: the run needed more than {} TCP connections (connection = \"per-flow\" opens one per flow arrival) and was stopped at {} s: shorten the run, lengthen mean_interarrival or use connection = \"shared\"",
                        self.flows[entry].name,
                        self.connection_limit,
                        secs(self.now)
                    ),
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

    fn on_flow_start(&mut self, f: usize) {
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
        let hand = app.on_event(now, process, &mut |t, k| events.schedule(t, now, Event::App(2 * f as u32 + k)));
        self.hand_over(f, hand);
    }

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
    fn on_source(&mut self, i: usize) {
        let s = &mut self.udp[i];
        if !s.sends_at(self.now) {
            return;
        }
        let (seqno, next) = s.sent();
        // Decided: a UDP source's send clock is its integer time's double. ns-2's CBR
        // accumulates its own sums (`next_interval`); only TCP senders read clocks here.
        let clock = scripted_clock(self.now);
        let p = Packet { kind: Kind::Udp, flow: i as u32, seqno, size: s.packet_size, dst: s.dst, probe: false, aqt: 0, aqt_echo: 0, clock };
        let src = s.src;
        if next <= self.scenario.duration && s.sends_at(next) {
            self.events.schedule(next, self.now, Event::Source(i as u32));
        }
        self.arrive(p, src, self.now);
    }

    /// What a sender reads as the time now (`run.clock`, `scenario::SenderClock`), given
    /// ns-2's double for the current event.
    fn sender_clock(&self, ns2: f64) -> f64 {
        match self.scenario.clock {
            SenderClock::Ns2 => ns2,
            SenderClock::Exact => secs(self.now),
        }
    }

    /// The sender clock of an event at a time the scenario wrote (a flow's start, an
    /// application's event): ns-2's double for it is the one Tcl reads from the bridge's
    /// `ns / 1e9`.
    fn scripted_clock(&self) -> f64 {
        self.sender_clock(scripted_clock(self.now))
    }

    /// Put the sender's queued segments on the wire and keep its timer scheduled.
    ///
    /// Decided (issue 11, the sender path): each segment goes on the wire straight from the
    /// sender's queue, which is taken for the loop and handed back for reuse. Before, the
    /// segments were drained into a second vector of packets that a second loop then sent (one
    /// segment per ACK on the benchmark, so the two loops' set-up was most of the cost).
    /// Measured (2026-11-28, results bit-identical): 1,881.0 M -> 1,853.1 M instructions on
    /// the benchmark's 50 s slice (10 s slice: 382.2 M -> 376.3 M). Inlined into its callers
    /// (`at_sender` above all, every ACK): 1,779.3 M -> 1,766.8 M.
    #[inline(always)]
    fn flush_sender(&mut self, f: usize) {
        let flow = &mut self.flows[f];
        let (src, dst) = (flow.src, flow.dst);
        // Sent within the sender's current event: its clock.
        let clock = flow.sender.state.clock;
        let segments = flow.sender.take_segments();
        if !segments.is_empty() {
            let in_sender = std::mem::replace(&mut self.in_sender, true);
            for seg in &segments {
                let p = Packet { kind: Kind::Data, flow: f as u32, seqno: seg.seqno, size: seg.wire_bytes, dst, probe: seg.probe, aqt: 0, aqt_echo: 0, clock };
                self.arrive(p, src, self.now);
            }
            self.in_sender = in_sender;
        }
        self.flows[f].sender.give_back_segments(segments);
        self.arm_timer(f);
    }

    /// Keep flow `f`'s retransmission timer scheduled: an event no later than its deadline.
    ///
    /// Decided (issue 11): inlined (into `flush_sender`, every ACK), with the scheduling out
    /// of line: a new ACK moves the deadline later, so a pending event almost always stays.
    /// Measured: 1,415.2 M -> 1,400.8 M instructions on the benchmark's 50 s slice.
    #[inline(always)]
    fn arm_timer(&mut self, f: usize) {
        let flow = &self.flows[f];
        if let Some(d) = flow.sender.rtx_deadline() {
            if flow.timer_pending.is_none_or(|p| d < p) {
                self.schedule_timer(f, d);
            }
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

    fn on_timer(&mut self, f: usize) {
        let clock = self.sender_clock(self.flows[f].sender.rtx_clock());
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
                flow.sender.on_timer_at(self.now, clock);
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
                    s.flow.push(i as u32);
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
                s.flow.push(i as u32);
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
        let next = self.now.saturating_add(self.scenario.sample_interval);
        self.next_flow_sample = Nanos::MAX;
        if next <= self.scenario.duration {
            self.events.schedule(next, self.now, Event::Sample);
            self.next_flow_sample = next;
        }
    }

    /// The monitored queues' samples (each queue takes its own, see `Channel::start_sampling`)
    /// as rows by time, then queue, up to the time the run stopped.
    fn collect_queue_samples(&mut self, stop: Nanos) {
        let per_queue: Vec<Vec<u64>> = self.monitored_queues.iter().map(|&c| self.channels[c].finish_sampling(stop)).collect();
        let avgs: Vec<Option<Vec<f64>>> = self.monitored_queues.iter().map(|&c| self.channels[c].finish_avg_sampling(stop)).collect();
        let any_red = avgs.iter().any(Option::is_some);
        let count = per_queue.iter().map(Vec::len).min().unwrap_or(0);
        let interval = self.scenario.sample_interval;
        let s = &mut self.queue_series;
        for k in 0..count {
            let t = secs(interval * (k as Nanos + 1));
            for (j, lengths) in per_queue.iter().enumerate() {
                s.time.push(t);
                s.queue.push(j as u32);
                s.length.push(lengths[k]);
                if any_red {
                    s.avg.push(avgs[j].as_ref().map(|a| a[k]));
                }
            }
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
        let mut window_limited = Vec::new();
        let flows: Vec<FlowResult> = self.flows[..self.entries]
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
                let limited: u64 = group().map(|g| g.window_limited_until(end)).sum();
                if limited > 0 {
                    let share = if active > 0.0 { secs(limited) / active } else { 0.0 };
                    window_limited.push(WindowLimited { flow: f.name.clone(), window: f.tcp.window, limited_s: secs(limited), share });
                }
                let delivered_bytes = delivered_pkts.saturating_mul(f.tcp.packet_size as u64);
                // An entry whose algorithm counts ties reports them, 0 if it never opened a connection.
                let ties = f.sender.controller().threshold_ties().map(|_| group().filter_map(|g| g.sender.controller().threshold_ties()).sum::<vegaslab_cc::controller::TieStats>());
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
                    vegas_decisions: ties.map(|t| t.decisions),
                    vegas_threshold_ties: ties.map(|t| t.exact),
                    vegas_decisive_ties: ties.map(|t| t.decisive),
                    sent_pkts: st.pkts_sent,
                    sent_bytes: st.bytes_sent,
                    retransmitted_pkts: st.retransmitted_pkts,
                    fast_retransmits: st.fast_retransmits,
                    timeouts: st.timeouts,
                    slow_start_entries: st.slow_start_entries,
                    received_pkts,
                    received_bytes,
                    delivered_pkts,
                    delivered_bytes,
                    acked_pkts: group().map(Flow::acked_pkts).sum(),
                    throughput_bps: received_bytes as f64 * 8.0 / dur_s,
                    goodput_bps: delivered_bytes as f64 * 8.0 / dur_s,
                    active_throughput_bps: if active > 0.0 { received_bytes as f64 * 8.0 / active } else { 0.0 },
                    completion_time_s: completion,
                    final_cwnd_pkts: final_cwnd,
                    mean_cwnd_pkts: {
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
                    final_ssthresh_pkts: final_ssthresh,
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
                    limit_pkts: c.queue_spec().limit(),
                    arrived_pkts: c.stats.arrivals(),
                    dropped_pkts: c.stats.drops,
                    departed_pkts: c.stats.departures,
                    backlog_pkts: c.stats.backlog,
                    loss_ratio: if c.stats.arrivals() > 0 { c.stats.drops as f64 / c.stats.arrivals() as f64 } else { 0.0 },
                    mean_len_pkts: mean,
                    std_len_pkts: std,
                    max_len_pkts: c.stats.max_len,
                    error_pkts: (c.has_error_model() || c.can_fail).then_some(c.stats.errors),
                    early_dropped_pkts: c.red().map(|r| r.early_drops),
                    forced_dropped_pkts: c.red().map(|r| r.forced_drops),
                }
            })
            .collect();
        let links = self
            .channels
            .iter()
            .map(|c| {
                LinkResult {
                    link: channel_name(sc, c),
                    bandwidth_bps: c.bandwidth_bps,
                    sent_bytes: c.stats.bytes_sent,
                    utilisation_ratio: c.stats.busy_ns() as f64 / duration as f64,
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
                packet_hops: self.channels.iter().map(|c| c.stats.departures).sum(),
                same_instant_arrivals: self.same_instant_arrivals,
                tie_reorders: self.events.reordered(),
                aborted: self.aborted.clone(),
                window_limited,
                trace: self.trace_info.take(),
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

/// Links going down and up (`links[].down`, ns-2's `$ns rtmodel-at T down|up A B` under
/// `$ns rtproto Session`).
///
/// Decided, the routing model: ns-2's `Session` routing, measured against ns-2.35 (issue 12):
/// at the instant of a change every route is recomputed from the links that are up (the same
/// hop-count shortest paths and tie rule as the static routes, `routing`), with no control
/// traffic and no convergence delay. ns-2's distance-vector `DV` reacts the same way at the
/// failed link's own nodes when a neighbour offers a backup (the packets' fates were the same
/// in a diamond), but its route updates are packets that queue with the data and shift its
/// timings (by 40 us on a 1 Mbit/s link), so no model without those packets matches it.
///
/// Packet fates, as ns-2.35 gives them (`Link::down`: `DynamicLink` at the link's head,
/// `Queue::reset`, `LinkDelay::reset` of a dynamic link):
/// - at the failure, in both directions, the packets waiting in the queue are dropped by the
///   queue (`drops`; they never departed), and the packet in transmission and those
///   propagating are lost on the link (`errors`: they departed);
/// - while the link is down, a packet routed onto it is dropped at its head (`arrivals` and
///   `drops`);
/// - a node that cannot reach a destination any more keeps its last route to it (ns-2's
///   `populate_flat_classifiers` only writes reachable entries), so packets toward it follow
///   the old path to the down link and are dropped there; a flow without a backup path keeps
///   sending (timeouts back off) and recovers at the repair;
/// - the transmitter of a failed direction stays busy until the aborted transmission would
///   have ended (ns-2's queue stays blocked until then).
/// Every lost data packet counts in its flow's `dropped_pkts`, every lost datagram in its UDP
/// source's.
impl Failures {
    fn of(scenario: &Scenario, pairs: &[(u32, u32)]) -> Option<Box<Failures>> {
        let mut changes: Vec<(Nanos, u32, bool)> = Vec::new();
        for (l, link) in scenario.links.iter().enumerate() {
            for &(from, to) in &link.down {
                changes.push((from, l as u32, true));
                changes.push((to, l as u32, false));
            }
        }
        if changes.is_empty() {
            return None;
        }
        changes.sort_by_key(|&(t, l, _)| (t, l));
        Some(Box::new(Failures { changes, pairs: pairs.to_vec() }))
    }
}

impl Simulator {
    /// One event per instant at which some link changes, scheduled at time 0 after the flows'
    /// starts and stops, as ns-2 schedules its route changes at `$ns run` after the script's
    /// `$ns at` commands: a change and a packet arriving at the same instant run in ns-2's
    /// order (`event`).
    fn schedule_route_changes(&mut self) {
        let Some(f) = &self.failures else { return };
        let mut last = None;
        for (k, &(t, _, _)) in f.changes.iter().enumerate() {
            if last != Some(t) && t <= self.scenario.duration {
                self.events.schedule(t, 0, Event::Route(k as u32));
            }
            last = Some(t);
        }
    }

    /// Apply every link change at this instant (from change `k` on), then recompute the
    /// routes of every used pair once.
    ///
    /// Express hops (`express`) assume fixed routes: from the first change on they carry no
    /// packet (`express_until`; a packet arriving exactly at a change takes an event), so no
    /// packet is handed past a change, over a link that went down, or along a route the change
    /// made stale. Results stay identical with and without them.
    fn on_route_change(&mut self, k: usize) {
        let f = self.failures.take().expect("route events come from failures");
        let mut lost = Vec::new();
        for &(t, link, down) in f.changes[k..].iter().take_while(|c| c.0 == f.changes[k].0) {
            debug_assert_eq!(t, self.now);
            for c in [2 * link as usize, 2 * link as usize + 1] {
                if down {
                    self.channels[c].fail(self.now, &mut lost);
                    self.channels[c].scheduled_since = NOT_SCHEDULED; // its pending delivery finds nothing
                } else {
                    self.channels[c].down = false;
                }
            }
        }
        for p in lost.drain(..) {
            self.count_lost(&p);
        }
        let n_nodes = self.scenario.nodes.len();
        let mut router = routing::Router::new(n_nodes, &self.channels);
        let down: Vec<bool> = self.channels.iter().map(|c| c.down).collect();
        self.routes = routing::RouteTable::rebuild(&mut router, n_nodes, &f.pairs, &self.routes, &down);
        *self.router.borrow_mut() = router;
        self.failures = Some(f);
    }

    /// A packet at `node` has no route (`c == NO_ROUTE`), or its route is a link that is down:
    /// it is lost there. A down link counts it as an arrival it dropped.
    #[cold]
    #[inline(never)]
    fn lost_without_link(&mut self, p: Packet, c: usize, t: Nanos) {
        if c != NO_ROUTE as usize {
            self.channels[c].refuse(t);
        }
        self.count_lost(&p);
    }

    /// A packet lost (dropped by a queue, lost on a link or to a failure): its flow's or UDP
    /// source's drop count.
    #[inline]
    fn count_lost(&mut self, p: &Packet) {
        match p.kind {
            Kind::Data => self.flows[p.flow as usize].dropped_pkts += 1,
            Kind::Udp => {
                let s = &mut self.udp[p.flow as usize].stats;
                s.dropped_pkts += 1;
                s.dropped_bytes += p.size as u64;
            }
            Kind::Ack => {}
        }
    }
}

/// The router-reported queueing times a probing ACK carries (RoVegas), in seconds.
///
/// Out of line (issue 11): inlined, the compiler converted both times on every ACK, probe or
/// not, and then chose. Measured (2026-11-28, results bit-identical): 358.7 M -> 357.9 M
/// instructions on the benchmark's 10 s slice.
#[cold]
#[inline(never)]
fn queueing_times(p: &Packet) -> Option<QueueingTimes> {
    Some(QueueingTimes { backward: secs(p.aqt as u64), forward: secs(p.aqt_echo as u64) })
}

/// The run's event queue: ties in scheduling order, or shuffled by a key drawn from the seed
/// (`run.tie_order`, `scenario::TieOrder`).
fn event_queue(scenario: &Scenario) -> EventQueue {
    match scenario.tie_order {
        TieOrder::Ns2 => EventQueue::default(),
        TieOrder::Shuffled => EventQueue::with_shuffled_ties(rand::RngCore::next_u64(&mut stream(scenario.seed, STREAM_TIES))),
    }
}

/// The double time that orders an event among those at the same nanosecond (`event`): ns-2's
/// (`ns2`) with `run.clock = "ns2"`; with `"exact"` the integer time's own, so ties keep the
/// `since` and scheduling order alone.
#[inline]
fn event_clock(mode: SenderClock, ns2: f64, at: Nanos) -> f64 {
    match mode {
        SenderClock::Ns2 => ns2,
        SenderClock::Exact => exact_clock(at),
    }
}

/// `event_clock` with `"exact"`, out of line: inlined, the compiler converted and divided
/// on every call whatever the setting and then chose (1.8% of the benchmark's instructions).
#[inline(never)]
fn exact_clock(at: Nanos) -> f64 {
    scripted_clock(at)
}

fn channel_name(sc: &Scenario, c: &Channel) -> String {
    format!("{}->{}", sc.nodes[c.from as usize], sc.nodes[c.to as usize])
}

/// Static routing: hop-count shortest paths, ties broken by the lowest channel index.
///
/// The rule (unchanged since the first version, which built a dense nodes x destinations
/// table with one breadth-first search per destination): from node `n` toward `d`, take the
/// lowest-index channel `n -> m` with `dist_d(m) + 1 == dist_d(n)`; `NO_ROUTE` when `d` is
/// unreachable or `n == d`.
///
/// Decided: the same rule, computed in near-linear time and memory, because the dense table
/// took 1.6 GB and 24 s to set up a 10,000-pair dumbbell. Only the (node, destination)
/// entries that some flow or UDP path uses are computed and stored ([`RouteTable`]):
/// - *Tree-like parts are peeled.* Nodes of (distinct-neighbour) degree <= 1 are removed
///   repeatedly; what is left is the 2-core. Each peeled node keeps the neighbour it hung from
///   (`parent`), so the peeled nodes form trees rooted at core nodes (or, for a component
///   with no cycle, at its last peeled node). Between two nodes of one tree the only path is
///   the tree path; a tree node reaches anything outside its tree through its parent; and no
///   shortest path between core nodes enters a tree (it would leave through the node it
///   entered by). So the rule above gives exactly: the tree path, or up to the root, through
///   the core, and down to the destination. Where a tree path offers parallel links, the
///   lowest-index channel is taken, as the rule says.
/// - *The core* needs breadth-first searches, one per core node that some path ends behind
///   (restricted to the core, whose distances are the full graph's), reused for every
///   destination hanging from the same core node. A dumbbell, parking lot or LTE tree has no
///   core at all.
///
/// `tests::routes_match_the_dense_reference_table` checks every (node, destination) pair of
/// random graphs with trees, cycles and parallel links against the dense reference.
mod routing {
    use super::NO_ROUTE;
    use crate::channel::Channel;
    use std::collections::VecDeque;

    const NONE: u32 = u32::MAX;

    /// The peeled forest, the core's adjacency and a reusable breadth-first search.
    pub struct Router {
        /// Per node, its outgoing channels as (far node, channel), sorted: a binary search
        /// finds the lowest-index channel to a given neighbour.
        out: Vec<Vec<(u32, u32)>>,
        /// Per core node, channels to other core nodes in ascending index order.
        core_out: Vec<Vec<u32>>,
        to: Vec<u32>,
        parent: Vec<u32>,
        depth: Vec<u32>,
        root: Vec<u32>,
        core: Vec<bool>,
        /// Breadth-first search distances over the core from `bfs_root` (`NONE`: not reached).
        dist: Vec<u32>,
        touched: Vec<u32>,
        bfs_root: u32,
    }

    impl Router {
        pub fn new(nodes: usize, channels: &[Channel]) -> Self {
            let mut out: Vec<Vec<(u32, u32)>> = vec![Vec::new(); nodes];
            for (i, c) in channels.iter().enumerate() {
                if c.down {
                    continue; // a link that is down carries nothing (`Failures`)
                }
                out[c.from as usize].push((c.to, i as u32));
            }
            let mut neighbours: Vec<Vec<u32>> = Vec::with_capacity(nodes);
            for (n, o) in out.iter_mut().enumerate() {
                o.sort_unstable();
                let mut nb: Vec<u32> = o.iter().map(|&(m, _)| m).filter(|&m| m as usize != n).collect();
                nb.dedup();
                neighbours.push(nb);
            }
            // Peel nodes of degree <= 1 (links come in both directions: the graph is undirected).
            let mut degree: Vec<usize> = neighbours.iter().map(Vec::len).collect();
            let mut removed = vec![false; nodes];
            let mut parent = vec![NONE; nodes];
            let mut stack: Vec<u32> = (0..nodes as u32).filter(|&n| degree[n as usize] <= 1).collect();
            let mut order = Vec::new();
            while let Some(v) = stack.pop() {
                let v = v as usize;
                removed[v] = true;
                order.push(v);
                if let Some(&u) = neighbours[v].iter().find(|&&u| !removed[u as usize]) {
                    parent[v] = u;
                    degree[u as usize] -= 1;
                    if degree[u as usize] == 1 {
                        stack.push(u);
                    }
                }
            }
            let core: Vec<bool> = removed.iter().map(|r| !r).collect();
            let mut depth = vec![0u32; nodes];
            let mut root: Vec<u32> = (0..nodes as u32).collect();
            // A parent is peeled after its children (or never): reverse order sees it first.
            for &v in order.iter().rev() {
                let p = parent[v];
                if p != NONE {
                    depth[v] = depth[p as usize] + 1;
                    root[v] = root[p as usize];
                }
            }
            let core_out = (0..nodes)
                .map(|n| {
                    if !core[n] {
                        return Vec::new();
                    }
                    let mut cs: Vec<u32> = out[n].iter().filter(|&&(m, _)| core[m as usize] && m as usize != n).map(|&(_, c)| c).collect();
                    cs.sort_unstable();
                    cs
                })
                .collect();
            Router {
                out,
                core_out,
                to: channels.iter().map(|c| c.to).collect(),
                parent,
                depth,
                root,
                core,
                dist: vec![NONE; nodes],
                touched: Vec::new(),
                bfs_root: NONE,
            }
        }

        /// The lowest-index channel from `n` to its neighbour `m`.
        fn channel(&self, n: u32, m: u32) -> u32 {
            let o = &self.out[n as usize];
            let i = o.partition_point(|&(t, _)| t < m);
            debug_assert!(o.get(i).is_some_and(|&(t, _)| t == m), "{n} and {m} are not neighbours");
            o[i].1
        }

        /// Distances over the core toward core node `r`.
        fn bfs(&mut self, r: u32) {
            if self.bfs_root == r {
                return;
            }
            for &n in &self.touched {
                self.dist[n as usize] = NONE;
            }
            self.touched.clear();
            self.bfs_root = r;
            self.dist[r as usize] = 0;
            self.touched.push(r);
            let mut frontier = VecDeque::from([r]);
            while let Some(n) = frontier.pop_front() {
                let d = self.dist[n as usize] + 1;
                for &c in &self.core_out[n as usize] {
                    let m = self.to[c as usize];
                    if self.dist[m as usize] == NONE {
                        self.dist[m as usize] = d;
                        self.touched.push(m);
                        frontier.push_back(m);
                    }
                }
            }
        }

        /// `d` can be reached from `s` (`s != d`); leaves the search toward `d`'s root done.
        fn reachable(&mut self, s: u32, d: u32) -> bool {
            let (rs, rd) = (self.root[s as usize], self.root[d as usize]);
            if rs == rd {
                return true;
            }
            if !self.core[rs as usize] || !self.core[rd as usize] {
                return false; // a component without a cycle is one tree
            }
            self.bfs(rd);
            self.dist[rs as usize] != NONE
        }

        /// Call `hop(node, channel)` along the path from `s` to `d` (reachable, `s != d`) until
        /// it returns false.
        pub fn walk(&mut self, s: u32, d: u32, hop: &mut impl FnMut(u32, u32) -> bool) {
            let rd = self.root[d as usize];
            let mut n = s;
            // Up to the root of `s`'s tree, unless `d` hangs in the same tree.
            while self.root[n as usize] != rd && self.parent[n as usize] != NONE {
                let p = self.parent[n as usize];
                if !hop(n, self.channel(n, p)) {
                    return;
                }
                n = p;
            }
            // Through the core to the root of `d`'s tree.
            if self.root[n as usize] != rd {
                self.bfs(rd);
                while n != rd {
                    let dn = self.dist[n as usize];
                    let c = *self.core_out[n as usize]
                        .iter()
                        .find(|&&c| self.dist[self.to[c as usize] as usize].wrapping_add(1) == dn)
                        .expect("a core node on a reachable path has a next hop");
                    if !hop(n, c) {
                        return;
                    }
                    n = self.to[c as usize];
                }
            }
            // The tree path from `n` to `d`: up to their lowest common ancestor, then down.
            let (mut a, mut b) = (n, d);
            let mut up = Vec::new();
            let mut down = Vec::new();
            while self.depth[a as usize] > self.depth[b as usize] {
                up.push(a);
                a = self.parent[a as usize];
            }
            while self.depth[b as usize] > self.depth[a as usize] {
                down.push(b);
                b = self.parent[b as usize];
            }
            while a != b {
                up.push(a);
                a = self.parent[a as usize];
                down.push(b);
                b = self.parent[b as usize];
            }
            for &x in &up {
                let p = self.parent[x as usize];
                if !hop(x, self.channel(x, p)) {
                    return;
                }
            }
            for &x in down.iter().rev() {
                let p = self.parent[x as usize];
                if !hop(p, self.channel(p, x)) {
                    return;
                }
            }
        }

        /// The next hop from `n` toward `d` by itself (no table): `NO_ROUTE` if none.
        pub fn next_hop(&mut self, n: u32, d: u32) -> u32 {
            if n == d || !self.reachable(n, d) {
                return NO_ROUTE;
            }
            let mut first = NO_ROUTE;
            self.walk(n, d, &mut |_, c| {
                first = c;
                false
            });
            first
        }
    }

    /// The routing entries some path uses, looked up at every hop as (node, destination):
    /// a node with a row finds its channel in one load (`rows[row_start[n] + dest_col[d]]`);
    /// any other node searches its few entries, sorted by destination.
    /// Every node gets a row when all rows fit in `MAX_DENSE` entries (the whole table is
    /// then dense); otherwise the nodes with the most entries (routers) do, as many as fit.
    ///
    /// Decided for issue 11: nodes without a row used to be every node of a large scenario,
    /// and a router on the path of 20,000 flows binary-searched 40,000 entries at every hop,
    /// 16 dependent loads that missed the cache (16% of the run time at 20,000 flows); a hash
    /// map was no better (one random load into a table of megabytes). A router's row is one
    /// load from an array the size of the destinations, which its traffic keeps in cache.
    pub struct RouteTable {
        /// Column of each node as a destination: its index among the destinations, or for a
        /// node no path ends at, the column past them all, `UNUSED` in every row.
        ///
        /// Decided (issue 11, one look-up per packet-hop): rows have a last column of
        /// `UNUSED` that destinations without a path point to, and a row is named by where it
        /// starts, so a look-up needs no test of the destination and no multiplication.
        /// Benchmark 50 s slice: 1,676.6 M -> 1,662.7 M instructions. (The extra column
        /// adds one entry per row to `MAX_DENSE`'s; which nodes get rows is unchanged.)
        dest_col: Vec<u32>,
        /// The rows' columns are the destination nodes themselves (`rows[row_start[n] + d]`,
        /// `UNUSED` where no path ends), so a look-up does not read `dest_col`.
        ///
        /// Decided (issue 11, cost per packet-hop at many flows): `dest_col` is as long as the
        /// nodes, so with thousands of flows a router's look-up missed the cache twice, one
        /// dependent load after the other (`dest_col[d]`, then the row). When the rows fit at
        /// the nodes' width (a dumbbell's two routers: 2 x 200,002 entries at 100,000 flows),
        /// the column is the destination itself. Measured with `row_start`'s `UNIFORM` below.
        cols_are_nodes: bool,
        /// Where each node's row starts in `rows`; `NONE`: its entries are in `small`;
        /// `UNIFORM | c`: every entry of the node is channel `c`, the node's one link (below).
        ///
        /// Decided (issue 11): a node with one outgoing link whose recorded entries all take
        /// it (every end host of a dumbbell) answers `get` from its `row_start` alone, instead
        /// of searching `small` (two more loads, `start` and `small`, each a cache miss with
        /// many hosts). Only in the table `build` makes, used before any link changes, when
        /// every look-up is of a recorded pair (packets only travel recorded paths) and so
        /// answered as before; `get_recorded` still answers exactly (`rebuild` reads the
        /// previous table through it), and `rebuild`'s tables have no `UNIFORM` node.
        row_start: Vec<u32>,
        rows: Vec<u32>,
        /// The nodes without a row: (destination, channel) sorted by destination, node `n`'s
        /// from `start[n]` to `start[n + 1]`.
        start: Vec<u32>,
        small: Vec<(u32, u32)>,
    }

    /// Most row entries, all rows together (16 MiB).
    const MAX_DENSE: usize = 1 << 22;
    /// A row slot no path uses.
    const UNUSED: u32 = u32::MAX - 1;
    /// When not every node's row fits, only a node with more entries than this gets one.
    const ROW_MIN_ENTRIES: u32 = 32;
    /// `RouteTable::row_start`'s mark of a node whose every entry is one channel (its low bits).
    const UNIFORM: u32 = 1 << 31;

    impl RouteTable {
        /// Entries for every node on the path of each (source, destination) pair; an
        /// unreachable pair gets a `NO_ROUTE` entry at its source.
        pub fn build(router: &mut Router, nodes: usize, pairs: &[(u32, u32)]) -> Self {
            Self::build_with(router, nodes, pairs, MAX_DENSE, ROW_MIN_ENTRIES)
        }

        /// `build`, with rows of at most `max_dense` entries in all, and (when not every
        /// node's row fits) rows only for nodes with more than `row_min_entries` entries.
        pub fn build_with(router: &mut Router, nodes: usize, pairs: &[(u32, u32)], max_dense: usize, row_min_entries: u32) -> Self {
            let entries = Self::entries(router, nodes, pairs, None);
            let mut table = Self::assemble(nodes, entries, max_dense, row_min_entries);
            table.mark_uniform(router);
            table
        }

        /// Mark the nodes without a row whose recorded entries are all their one outgoing
        /// link (`row_start`'s `UNIFORM`). For the table `build` makes only: see `row_start`.
        fn mark_uniform(&mut self, router: &Router) {
            for n in 0..self.row_start.len() {
                if self.row_start[n] != NONE || router.out[n].len() != 1 {
                    continue;
                }
                let c = router.out[n][0].1;
                let entries = &self.small[self.start[n] as usize..self.start[n + 1] as usize];
                if !entries.is_empty() && c < UNIFORM && entries.iter().all(|&(_, e)| e == c) {
                    self.row_start[n] = UNIFORM | c;
                }
            }
        }

        /// The table after links changed (`Failures`): `router` knows only the links that are
        /// up. A pair whose destination cannot be reached keeps, at each node, the entry of
        /// `previous` (ns-2 keeps the classifier entries its route computation does not
        /// write): from the source, the old next hops are followed until one is a link that
        /// is down (`down[c]`; packets are dropped there) or a node has none (`NO_ROUTE`).
        /// Linear in the paths' lengths, as `build`.
        ///
        /// Two known differences from ns-2, both after overlapping failures only: ns-2 keeps
        /// an entry for every node pair, this table only for nodes on some used path, so a
        /// node that was on no used path the last time it could reach the destination has no
        /// old entry here (its packets are dropped, `NO_ROUTE`); and old entries that form a
        /// loop (ns-2: packets circle until their TTL expires) end at the node closing it.
        pub fn rebuild(router: &mut Router, nodes: usize, pairs: &[(u32, u32)], previous: &RouteTable, down: &[bool]) -> Self {
            let entries = Self::entries(router, nodes, pairs, Some((previous, down)));
            Self::assemble(nodes, entries, MAX_DENSE, ROW_MIN_ENTRIES)
        }

        /// (node, destination, channel) for every node on the path of each pair; unreachable
        /// pairs get `NO_ROUTE` at their source, or with `stale`, the old entries (`rebuild`).
        fn entries(router: &mut Router, nodes: usize, pairs: &[(u32, u32)], stale: Option<(&RouteTable, &[bool])>) -> Vec<(u32, u32, u32)> {
            let mut pairs: Vec<(u32, u32)> = pairs.iter().copied().filter(|&(s, d)| s != d).collect();
            // Group by destination, destinations hanging from the same core node together
            // (one breadth-first search each).
            pairs.sort_unstable_by_key(|&(s, d)| (router.root[d as usize], d, s));
            pairs.dedup();
            let mut entries: Vec<(u32, u32, u32)> = Vec::new();
            // stamp[n] == group: (n, destination of the group) is already recorded.
            let mut stamp = vec![NONE; nodes];
            let mut group = 0u32;
            let mut last_dst = NONE;
            // Loop detection for `stale_walk`: on_walk[n] == walk while walk `walk` visits n.
            let mut on_walk = if stale.is_some() { vec![0u32; nodes] } else { Vec::new() };
            let mut walk = 0u32;
            for &(s, d) in &pairs {
                if d != last_dst {
                    last_dst = d;
                    group += 1;
                }
                if stamp[s as usize] == group {
                    continue;
                }
                if !router.reachable(s, d) {
                    if let Some((previous, down)) = stale {
                        walk += 1;
                        Self::stale_walk(previous, down, &router.to, (s, d), (&mut stamp, group), (&mut on_walk, walk), &mut entries);
                        continue;
                    }
                    stamp[s as usize] = group;
                    entries.push((s, d, NO_ROUTE));
                    continue;
                }
                router.walk(s, d, &mut |n, c| {
                    if stamp[n as usize] == group {
                        return false; // the rest of the path is recorded
                    }
                    stamp[n as usize] = group;
                    entries.push((n, d, c));
                    true
                });
            }
            entries
        }

        /// Follow `previous`'s entries toward `d` from `s` (see `rebuild`), recording them.
        #[allow(clippy::too_many_arguments)]
        fn stale_walk(previous: &RouteTable, down: &[bool], to: &[u32], (s, d): (u32, u32), (stamp, group): (&mut [u32], u32), (on_walk, walk): (&mut [u32], u32), entries: &mut Vec<(u32, u32, u32)>) {
            let mut n = s;
            loop {
                if on_walk[n as usize] == walk {
                    // The old entries loop back to n: the node closing the loop drops instead.
                    entries.last_mut().expect("a loop has a closing entry").2 = NO_ROUTE;
                    return;
                }
                if stamp[n as usize] == group {
                    return; // joins a walk recorded before (loop-free)
                }
                stamp[n as usize] = group;
                on_walk[n as usize] = walk;
                let c = previous.get_recorded(n, d).unwrap_or(NO_ROUTE);
                entries.push((n, d, c));
                if c == NO_ROUTE || down[c as usize] {
                    return;
                }
                n = to[c as usize];
            }
        }

        /// The table of `entries` (see the type's documentation for the layout).
        fn assemble(nodes: usize, mut entries: Vec<(u32, u32, u32)>, max_dense: usize, row_min_entries: u32) -> Self {
            let mut dests: Vec<u32> = entries.iter().map(|&(_, d, _)| d).collect();
            dests.sort_unstable();
            dests.dedup();
            let mut dest_col = vec![dests.len() as u32; nodes];
            for (i, &d) in dests.iter().enumerate() {
                dest_col[d as usize] = i as u32;
            }
            let width = dests.len() + 1;
            let mut table = RouteTable { dest_col, cols_are_nodes: false, row_start: Vec::new(), rows: Vec::new(), start: Vec::new(), small: Vec::new() };
            // Every node gets a row when all fit, else those with the most entries, as many as fit.
            let row_min_entries = if dests.len().saturating_mul(nodes) <= max_dense { 0 } else { row_min_entries };
            let mut count = vec![0u32; nodes];
            for &(n, _, _) in &entries {
                count[n as usize] += 1;
            }
            let mut big: Vec<u32> = (0..nodes as u32).filter(|&n| count[n as usize] > row_min_entries).collect();
            big.sort_unstable_by_key(|&n| (std::cmp::Reverse(count[n as usize]), n));
            big.truncate(max_dense / dests.len().max(1));
            // The same rows at the nodes' width when they fit (`cols_are_nodes`).
            table.cols_are_nodes = big.len().saturating_mul(nodes) <= max_dense;
            let width = if table.cols_are_nodes {
                for (d, col) in table.dest_col.iter_mut().enumerate() {
                    *col = d as u32;
                }
                nodes
            } else {
                width
            };
            table.row_start = vec![NONE; nodes];
            for (i, &n) in big.iter().enumerate() {
                table.row_start[n as usize] = (i * width) as u32;
            }
            table.rows = vec![UNUSED; big.len() * width];
            entries.sort_unstable();
            table.start = vec![0u32; nodes + 1];
            for &(n, d, c) in &entries {
                match table.row_start[n as usize] {
                    NONE => {
                        table.start[n as usize + 1] += 1;
                        table.small.push((d, c));
                    }
                    row => table.rows[row as usize + table.dest_col[d as usize] as usize] = c,
                }
            }
            for i in 0..nodes {
                table.start[i + 1] += table.start[i];
            }
            // What `get` reads without bounds checks: one row start and one column per node,
            // every column within a row, every row within `rows`.
            // With `cols_are_nodes`, the column is the destination node, below `nodes` = `width`.
            // A row start is below `UNIFORM` (`mark_uniform` marks only nodes without a row).
            assert!(table.row_start.len() == nodes && table.dest_col.len() == nodes);
            assert!(table.dest_col.iter().all(|&col| (col as usize) < width));
            assert!(!table.cols_are_nodes || width == nodes);
            assert!(table.rows.len() < UNIFORM as usize);
            assert!(table.row_start.iter().all(|&row| row == NONE || row as usize + width <= table.rows.len()));
            table
        }

        /// The recorded next hop from `n` toward `d`, if recorded.
        ///
        /// Decided (issue 11, one look-up per packet-hop): the row look-up reads its three
        /// arrays without bounds checks, after one test that both nodes are in the table;
        /// `assemble` checks once what makes that safe. Benchmark 50 s slice: 1,400.8 M -> 1,385.6 M
        /// instructions (with a panic message for a node beyond the table in place of the
        /// index's: 1,389.4 M).
        #[inline(always)]
        pub fn get(&self, n: u32, d: u32) -> Option<u32> {
            let (n, d) = (n as usize, d as usize);
            if n.max(d) >= self.row_start.len() {
                return self.get_out_of_range(n, d);
            }
            // SAFETY: `row_start` has one entry per node (`assemble` asserts it), and `n` is
            // below that count (tested above).
            let row = unsafe { *self.row_start.get_unchecked(n) };
            if row < UNIFORM {
                // SAFETY: `dest_col` has one entry per node too, and `d` is below that count;
                // every column (with `cols_are_nodes`, `d` itself) is below a row's width and
                // every row's entries lie within `rows` (`assemble` asserts both), so the sum
                // indexes `rows`.
                let col = if self.cols_are_nodes { d } else { unsafe { *self.dest_col.get_unchecked(d) as usize } };
                let c = unsafe { *self.rows.get_unchecked(row as usize + col) };
                return (c != UNUSED).then_some(c);
            }
            // A node is no next hop toward itself (`route`'s `NO_ROUTE`, as for any node).
            if row != NONE && n != d {
                return Some(row & !UNIFORM);
            }
            self.get_small(n, d)
        }

        /// `get`, exactly as recorded: `None` for a pair without an entry, also at a
        /// `UNIFORM` node (`rebuild` follows the previous table's entries through it).
        pub fn get_recorded(&self, n: u32, d: u32) -> Option<u32> {
            match self.row_start.get(n as usize) {
                Some(&row) if row != NONE && row & UNIFORM != 0 => self.get_small(n as usize, d as usize),
                _ => self.get(n, d),
            }
        }

        /// The entry of `n` (a node without a row) toward `d` in `small`.
        fn get_small(&self, n: usize, d: usize) -> Option<u32> {
            let entries = &self.small[self.start[n] as usize..self.start[n + 1] as usize];
            entries.binary_search_by_key(&(d as u32), |&(dst, _)| dst).ok().map(|i| entries[i].1)
        }

        /// `get` for a node beyond the table (a bug elsewhere): the index of whichever node
        /// is beyond it panics, as before the test.
        #[cold]
        #[inline(never)]
        fn get_out_of_range(&self, n: usize, d: usize) -> Option<u32> {
            Some(self.row_start[n].max(self.dest_col[d]))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::routing::{RouteTable, Router};
    use super::*;
    use crate::scenario::{DirectionSpec, QueueSpec};
    use rand::{Rng, SeedableRng};

    /// The first version's dense table (one breadth-first search per destination): the
    /// reference the routing must match exactly.
    fn dense_routes(nodes: usize, channels: &[Channel], dests: &[u32]) -> (Vec<u32>, Vec<u32>) {
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

    fn channels_of(links: &[(u32, u32)]) -> Vec<Channel> {
        let spec = DirectionSpec { bandwidth_bps: 1e6, delay: 0, delay_schedule: vec![], queue: QueueSpec::DropTail { limit: 10 }, error_rate: 0.0, loss: None };
        links.iter().flat_map(|&(a, b)| [Channel::new(a, b, &spec, 1, 0), Channel::new(b, a, &spec, 1, 0)]).collect()
    }

    #[test]
    fn routes_match_the_dense_reference_table() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        for case in 0..300 {
            let nodes = rng.gen_range(1..40usize);
            // Random trees, extra edges (cycles), parallel links and several components.
            let mut links = Vec::new();
            for n in 1..nodes as u32 {
                if rng.gen_bool(0.9) {
                    links.push((rng.gen_range(0..n), n));
                }
            }
            for _ in 0..rng.gen_range(0..(case % 5) * 3 + 1) {
                let (a, b) = (rng.gen_range(0..nodes as u32), rng.gen_range(0..nodes as u32));
                if a != b {
                    links.push((a, b));
                }
            }
            if !links.is_empty() && rng.gen_bool(0.3) {
                let l = links[rng.gen_range(0..links.len())];
                links.push(if rng.gen_bool(0.5) { l } else { (l.1, l.0) });
            }
            // Shuffle so low channel indices are not always tree edges.
            for i in (1..links.len()).rev() {
                links.swap(i, rng.gen_range(0..=i));
            }
            let channels = channels_of(&links);
            let all: Vec<u32> = (0..nodes as u32).collect();
            let (table, rows) = dense_routes(nodes, &channels, &all);
            let pairs: Vec<(u32, u32)> = all.iter().flat_map(|&s| all.iter().map(move |&d| (s, d))).collect();
            let mut router = Router::new(nodes, &channels);
            let dense = RouteTable::build(&mut router, nodes, &pairs);
            let sparse = RouteTable::build_with(&mut router, nodes, &pairs, 0, 0);
            // Too large for one table: dense rows for the busiest nodes (as many as fit), the
            // other nodes' entries searched.
            let rows_too = RouteTable::build_with(&mut router, nodes, &pairs, nodes * nodes / 2, case as u32 % 3);
            let mut fresh = Router::new(nodes, &channels);
            for &(n, d) in &pairs {
                let want = table[rows[d as usize] as usize * nodes + n as usize];
                for table in [&dense, &sparse, &rows_too] {
                    let got = if n == d { NO_ROUTE } else { table.get(n, d).expect("every pair recorded") };
                    assert_eq!(got, want, "case {case}: {n} -> {d} in {links:?}");
                    assert_eq!(table.get_recorded(n, d), table.get(n, d), "case {case}: recorded {n} -> {d}");
                }
                assert_eq!(fresh.next_hop(n, d), want, "case {case}: next_hop {n} -> {d} in {links:?}");
            }
        }
    }
}
