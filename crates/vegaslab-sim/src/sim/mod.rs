//! The simulator: builds the network from a [`Scenario`] and runs the event loop.
//!
//! This file holds the [`Simulator`]'s state and the event loop (`run`), which hands each
//! event to its room:
//! - `build`: `Simulator::build`, the checks a scenario must pass before a run and the
//!   construction of its network;
//! - `routing`: next hops (static routes, rebuilt after link changes) and the paths;
//! - `hops`: a packet's way through the network, deliveries and the express hops (`express`);
//! - `dequeue`: arrivals at, and events of, channels whose discipline drops at dequeue;
//! - `transport`: TCP senders and sinks: ACKs, data, retransmission timers;
//! - `applications`: flow starts and stops, applications with their own clock, per-flow
//!   connections, UDP sources;
//! - `failures`: links going down and up (ns-2's `rtmodel-at` with `Session` routing);
//! - `monitors`: the flow and queue series, and the packet trace;
//! - `clocks`: the ns-2 double clocks senders and events read (`run.clock`);
//! - `results`: the run's tables.

mod applications;
mod build;
mod clocks;
mod dequeue;
mod failures;
mod hops;
mod monitors;
mod results;
mod routing;
mod transport;

use crate::apps::App;
use crate::channel::Channel;
use crate::event::{Event, EventQueue};
use crate::flow::Flow;
use crate::results::{AbortKind, Aborted, FlowSeries, QueueSeries, RunResults};
use crate::scenario::Scenario;
use crate::udp::UdpSource;
use failures::Failures;
use std::cell::RefCell;
use std::collections::VecDeque;
use std::time::{Duration, Instant};
use vegaslab_cc::{secs, Nanos};

/// `route`'s answer where there is no next hop.
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

/// One run: the network built from a [`Scenario`] (`build`), run to its end by `run`, which
/// returns its results. Time is integer nanoseconds; events at the same nanosecond run in
/// ns-2's order (`event`).
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
    /// One word per node, so that a packet reaching an end node costs one cache line (and
    /// the sender's, read anyway by its ACK), not a flag, a `Vec` and its heap buffer.
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
    /// The run stopped early on a limit or a fault (`RunMeta::aborted`).
    aborted: Option<Aborted>,
    /// The flows whose controllers can fault while the run goes on (loaded BPF programs):
    /// asked at each progress check and at the end ([`Simulator::check_faults`]).
    faulting_flows: Vec<usize>,
    /// Links going down and up (`links[].down`), `None` without any.
    failures: Option<Box<Failures>>,
    /// Express hops carry a packet only if it arrives before this: the run's end (plus 1 ns)
    /// or the first route change, whichever is first (see `on_route_change`).
    express_until: Nanos,
    /// The packet trace (`[trace]`, `crate::trace`); `None` (the default) costs one branch per
    /// packet hop. Zero cost would need the event loop itself to be chosen once per run: a
    /// second copy of the forwarding loop changes what the compiler inlines into it, which
    /// cost more than the branch.
    tracer: Option<Box<crate::trace::Tracer>>,
    /// Where the trace went, or why it could not be written (`RunMeta::trace`).
    trace_info: Option<crate::trace::TraceInfo>,
    /// Flows and UDP sources whose route a tie chose (`RunMeta::route_ties`).
    route_ties: Vec<crate::results::RouteTie>,
    /// Prefetch what the next delivery and a long waiting queue will read (`prefetch_next`,
    /// `Channel::prefetch_waiting`): runs with at least `PREFETCH_FROM_CHANNELS` channels.
    prefetch: bool,
    /// `failures`, `prefetch` or a channel whose discipline decides at dequeue
    /// (`Channel::is_deferred`; `dequeue`): one test per packet-hop for the three when none
    /// applies.
    rare_hop_checks: bool,
}

/// Runs with this many channels or more prefetch (`Simulator::prefetch_next`).
///
/// Why: at many flows most of a delivery's time is two dependent cache misses, the channel's
/// line 3 and then its pipe's head, and the next event is known before the current one runs
/// (`EventQueue::next_code`: bucket 0's next entry, or the earliest entry the last refill
/// moved). So each event first asks for the next delivery's channel line, and a delivery,
/// once it holds its packet, for the next one's pipe head; an arrival at a channel asks for
/// its waiting queue's entry 8 places ahead (a bottleneck's front is a miss at every
/// arrival). Hints only: results are bit-identical. Small runs lose (everything is in cache
/// and the hints cost instructions), hence the threshold, between the benchmark's 202
/// channels and 500 flows' 2,002; below it the gate costs a branch per event and per hop.
const PREFETCH_FROM_CHANNELS: usize = 1024;

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
    /// Run to the end. `progress(sim_seconds, duration_seconds)` is called every few
    /// thousand events and at least every 50 ms of wall time; returning false stops the run
    /// early (results cover what ran).
    ///
    /// A limit found only while running (more per-flow connections than the event indices
    /// hold) also stops the run at that moment, with `meta.aborted` saying why.
    ///
    /// Never inlined into its caller: as a function of its own, the event loop gets the
    /// inlining of its hot paths (a delivery, the event queue's refill) that a caller's
    /// budget would not leave it (docs/performance.md, "The event loop stays a function").
    #[inline(never)]
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
                if self.check_faults() {
                    stop = t;
                    break;
                }
                if !progress(secs(t), dur_s) {
                    stop = t;
                    break;
                }
            }
        }
        self.check_faults();
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

    /// Whether a flow's loaded program has faulted (`AlgorithmParams::fault`); the first fault
    /// becomes the run's abort, an error of the field that named the program (`run_text_with`),
    /// so that no results of a run whose controller stopped deciding look complete.
    fn check_faults(&mut self) -> bool {
        if self.aborted.is_some() {
            return true;
        }
        if let Some(fault) = self.faulting_flows.iter().find_map(|&i| self.scenario.flows[i].algorithm.params().fault()) {
            self.aborted = Some(Aborted { field: fault.field, message: fault.message, kind: AbortKind::Fault });
        }
        self.aborted.is_some()
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
}
