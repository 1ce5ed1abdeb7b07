//! Building a run from its scenario: `Simulator::build`, the one way to make a simulator,
//! which makes every check a scenario must pass between reading and running.

use super::failures::Failures;
use super::results::channel_name;
use super::routing;
use super::{Connections, Simulator, MAX_SENDERS_AHEAD, NODE_NEVER_AHEAD, NODE_NO_SENDERS, NODE_SENDER_LIST, NO_ROUTE, PREFETCH_FROM_CHANNELS};
use crate::apps::App;
use crate::channel::Channel;
use crate::event::{EventQueue, MAX_INDEX};
use crate::express::{express_channels, express_nodes, Route};
use crate::flow::Flow;
use crate::results::{FlowSeries, QueueSeries};
use crate::rng::{stream, STREAM_APP_BASE, STREAM_TIES, STREAM_UDP_BASE};
use crate::scenario::{self, AppSpec, ErrorKind, PacedSpec, Scenario, ScenarioError, SenderClock, TieOrder};
use crate::udp::UdpSource;
use std::cell::RefCell;
use vegaslab_cc::Nanos;

impl Simulator {
    /// The run of `scenario`, or why it cannot run: the one way to make a simulator. It makes
    /// every check that lies between reading a scenario and running it, in this order (the
    /// first that fails is the error, which `run_text` reports as it is):
    ///
    /// 1. the monitors' series fit in memory (`run.sample_interval`; `scenario::parse` makes
    ///    this check too, this one covers a scenario changed after it was read);
    /// 2. the link directions, flows and UDP sources fit the event indices (the reader's limits
    ///    keep a read scenario far below);
    /// 3. the TCP connections expected from `connection = "per-flow"` applications fit them
    ///    with margin (`flows.app.connection`);
    /// 4. every flow's endpoints have a path both ways (`flows`);
    /// 5. every UDP source's destination can be reached (`udp`);
    /// 6. every UDP source's parameters work on its path (`udp[i].<field>`, e.g. a rate above
    ///    the path's bottleneck);
    /// 7. every RoVegas flow crosses an AQT-enabled router (`aqt.routers`).
    ///
    /// Checks 1-3 come before anything is allocated; 4-7 need the routes and are made on the
    /// network once built.
    ///
    /// What changes how a valid run goes, not whether it is valid, is set on the result:
    /// `with_connection_limit`, `without_express_hops`, `without_express_to_senders`,
    /// `open_trace`. None of them reads or changes what these checks read (the scenario, the
    /// routes), so applying them after validation cannot let an invalid run through, and a
    /// separate options type would only repeat them.
    pub fn build(scenario: Scenario) -> Result<Self, ScenarioError> {
        scenario::limits::check_recording_size(&scenario)?;
        scenario::require_hosted(&scenario)?;
        check_event_indices(&scenario)?;
        check_per_flow_connections(&scenario)?;
        let sim = Simulator::assemble(scenario);
        let source = sim.scenario.source.as_str();
        let unroutable = sim.unroutable_flows();
        if !unroutable.is_empty() {
            let message = format!("no path between the endpoints of: {}", unroutable.join(", "));
            return Err(ScenarioError::new(source, "flows", ErrorKind::Reference, message));
        }
        let unroutable = sim.unroutable_udp();
        if !unroutable.is_empty() {
            let message = format!("no path between the endpoints of UDP source(s): {}", unroutable.join(", "));
            return Err(ScenarioError::new(source, "udp", ErrorKind::Reference, message));
        }
        if let Some((path, message)) = &sim.udp_error {
            return Err(ScenarioError::new(source, path, ErrorKind::OutOfRange, message.clone()));
        }
        let blind = sim.flows_without_aqt_router();
        if !blind.is_empty() {
            let message = format!(
                "RoVegas flow(s) {} cross no AQT-enabled router; list at least one router on their path",
                blind.join(", ")
            );
            return Err(ScenarioError::new(source, "aqt.routers", ErrorKind::Reference, message));
        }
        Ok(sim)
    }

    /// The network of `scenario`: two channels per link, the flows with their applications,
    /// the routes of every path, and which hops and nodes may run ahead of the clock
    /// (`express`). Unchecked: `build` checks the scenario before and the network after.
    fn assemble(scenario: Scenario) -> Self {
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
        let any_deferred = channels.iter().any(|c| c.is_deferred());
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
        let faulting_flows = scenario.flows.iter().enumerate().filter(|(_, f)| f.algorithm.params().can_fault()).map(|(i, _)| i).collect();
        let mut sim = Simulator {
            faulting_flows,
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
            route_ties: Vec::new(),
            rare_hop_checks: failures.is_some() || prefetch || any_deferred,
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
        sim.route_ties = sim.find_route_ties();
        // The series' interned names: rows store indices.
        sim.flow_series.names = sim.flows[..sim.entries].iter().map(|f| f.name.clone()).collect();
        sim.queue_series.names =
            sim.monitored_queues.iter().map(|&c| channel_name(&sim.scenario, &sim.channels[c])).collect();
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
                // Linux's receiver has timers too (the flow's timer event holds them): its node
                // runs ahead only as far as they allow.
                if sim.flows[f].on_linux {
                    node_senders[sim.flows[f].dst as usize].push(f as u32);
                }
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

    /// UDP sources whose destination cannot be reached (`build` refuses them).
    fn unroutable_udp(&self) -> Vec<String> {
        self.scenario.udp.iter().filter(|u| self.route(u.from as u32, u.to as u32) == NO_ROUTE).map(|u| u.name.clone()).collect()
    }

    /// RoVegas flows whose round-trip path crosses no AQT-enabled router: they could never
    /// learn a queueing time (`build` refuses them).
    fn flows_without_aqt_router(&self) -> Vec<String> {
        (0..self.flows.len())
            .filter(|&f| self.flows[f].aqt_option_bytes.is_some())
            .filter(|&f| {
                let r = self.flow_route(f);
                !r.data.iter().chain(&r.ack).any(|&c| self.channels[c as usize].aqt_enabled)
            })
            .map(|f| self.flows[f].name.clone())
            .collect()
    }

    /// Flows whose endpoints have no path between them (`build` refuses them).
    fn unroutable_flows(&self) -> Vec<String> {
        self.flows
            .iter()
            .filter(|f| self.route(f.src, f.dst) == NO_ROUTE || self.route(f.dst, f.src) == NO_ROUTE)
            .map(|f| f.name.clone())
            .collect()
    }
}

/// The run's event queue: ties in scheduling order, or shuffled by a key drawn from the seed
/// (`run.tie_order`, `scenario::TieOrder`).
fn event_queue(scenario: &Scenario) -> EventQueue {
    match scenario.tie_order {
        TieOrder::Ns2 => EventQueue::default(),
        TieOrder::Shuffled => EventQueue::with_shuffled_ties(rand::RngCore::next_u64(&mut stream(scenario.seed, STREAM_TIES))),
    }
}

/// Links, flows and UDP sources index events in `MAX_INDEX` bits (`event`): a scenario with
/// more than fit is refused. The reader's limits (`scenario::limits`) keep a read scenario
/// far below; a scenario made or changed in code is checked here.
fn check_event_indices(scenario: &Scenario) -> Result<(), ScenarioError> {
    let fits = MAX_INDEX as usize + 1;
    if scenario.links.len() * 2 <= fits && scenario.flows.len() * 2 <= fits && scenario.udp.len() <= fits {
        return Ok(());
    }
    let message = format!(
        "at most {} link directions, {} flows and {} UDP sources fit the event indices",
        MAX_INDEX + 1,
        MAX_INDEX / 2 + 1,
        MAX_INDEX + 1
    );
    Err(ScenarioError::new(&scenario.source, "", ErrorKind::TooLarge, message))
}

/// Per-flow connections take event indices too (`connection = "per-flow"`: a connection per
/// flow arrival): refuse a run expected to come near the limit. The expectation is the flows
/// plus each per-flow entry's mean number of arrivals over its active time.
fn check_per_flow_connections(scenario: &Scenario) -> Result<(), ScenarioError> {
    let mut expected = scenario.flows.len() as f64;
    let mut heaviest = None;
    for f in &scenario.flows {
        let arrivals = match &f.app {
            AppSpec::Nps(a) | AppSpec::ParetoPaced(PacedSpec { arrivals: a, .. }) if a.per_flow => a,
            _ => continue,
        };
        let end = f.stop.unwrap_or(scenario.duration).min(scenario.duration);
        expected += end.saturating_sub(f.start) as f64 / 1e9 / arrivals.mean_interarrival;
        heaviest.get_or_insert(f.name.clone());
    }
    if expected * 2.0 > MAX_INDEX as f64 {
        return Err(ScenarioError::new(
            &scenario.source,
            "flows.app.connection",
            ErrorKind::TooLarge,
            format!(
                "connection = \"per-flow\" would open about {expected:.0} TCP connections (flows plus expected flow arrivals, e.g. of {}); at most {} fit the event indices with margin: shorten the run, lengthen mean_interarrival or use connection = \"shared\"",
                heaviest.unwrap_or_default(),
                MAX_INDEX / 2
            ),
        ));
    }
    Ok(())
}
