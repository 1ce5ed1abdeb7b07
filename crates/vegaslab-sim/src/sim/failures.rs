//! Links going down and up (`links[].down`, ns-2's `$ns rtmodel-at T down|up A B` under
//! `$ns rtproto Session`).
//!
//! The routing model is ns-2's `Session` routing (measured against ns-2.35): at the instant
//! of a change every route is recomputed from the links that are up (the same hop-count
//! shortest paths and tie rule as the static routes, `routing`), with no control traffic and
//! no convergence delay. (ns-2's distance-vector `DV` sends its route updates as packets that
//! queue with the data, which no model without those packets matches.)
//!
//! Packet fates, as ns-2.35 gives them (`Link::down`: `DynamicLink` at the link's head,
//! `Queue::reset`, `LinkDelay::reset` of a dynamic link):
//! - at the failure, in both directions, the packets waiting in the queue are dropped by the
//!   queue (`drops`; they never departed), and the packet in transmission and those
//!   propagating are lost on the link (`errors`: they departed);
//! - while the link is down, a packet routed onto it is dropped at its head (`arrivals` and
//!   `drops`);
//! - a node that cannot reach a destination any more keeps its last route to it (ns-2's
//!   `populate_flat_classifiers` only writes reachable entries), so packets toward it follow
//!   the old path to the down link and are dropped there; a flow without a backup path keeps
//!   sending (timeouts back off) and recovers at the repair;
//! - the transmitter of a failed direction stays busy until the aborted transmission would
//!   have ended (ns-2's queue stays blocked until then).
//!
//! Every lost data packet counts in its flow's `dropped_pkts`, every lost datagram in its UDP
//! source's.

use super::routing;
use super::{Simulator, NO_ROUTE};
use crate::channel::NOT_SCHEDULED;
use crate::event::{Event, MAX_INDEX};
use crate::packet::{Kind, Packet};
use crate::scenario::Scenario;
use vegaslab_cc::Nanos;

// A change is named by its index in an event (`Event::Route`).
const _: () = assert!(crate::scenario::limits::MAX_LINK_CHANGES <= MAX_INDEX as usize);

/// The link changes of a run and what rebuilding the routes needs.
pub(super) struct Failures {
    /// (time, link index, goes down), in time order (links in scenario order at one instant).
    pub(super) changes: Vec<(Nanos, u32, bool)>,
    /// Every (source, destination) pair a packet may travel (as for `RouteTable::build`).
    pairs: Vec<(u32, u32)>,
}

impl Failures {
    /// The changes `scenario` makes, in time order; `None` without any.
    pub(super) fn of(scenario: &Scenario, pairs: &[(u32, u32)]) -> Option<Box<Failures>> {
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
    pub(super) fn schedule_route_changes(&mut self) {
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
    pub(super) fn on_route_change(&mut self, k: usize) {
        let f = self.failures.take().expect("route events come from failures");
        let mut lost = Vec::new();
        for &(t, link, down) in f.changes[k..].iter().take_while(|c| c.0 == f.changes[k].0) {
            debug_assert_eq!(t, self.now);
            for c in [2 * link as usize, 2 * link as usize + 1] {
                if down {
                    if self.channels[c].is_deferred() {
                        // Dequeues due before the failure happened (a transmission due exactly
                        // at it is still queued, as in `Channel::fail`).
                        self.run_dequeues(c, self.now, false);
                    }
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
    pub(super) fn lost_without_link(&mut self, p: Packet, c: usize, t: Nanos) {
        if c != NO_ROUTE as usize {
            self.channels[c].refuse(t);
        }
        self.count_lost(&p);
    }

    /// A packet lost (dropped by a queue, lost on a link or to a failure): its flow's or UDP
    /// source's drop count.
    #[inline]
    pub(super) fn count_lost(&mut self, p: &Packet) {
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
