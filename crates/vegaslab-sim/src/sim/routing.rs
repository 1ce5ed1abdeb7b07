//! Static routing: hop-count shortest paths, ties broken by the lowest channel index.
//!
//! The rule (unchanged since the first version, which built a dense nodes x destinations
//! table with one breadth-first search per destination): from node `n` toward `d`, take the
//! lowest-index channel `n -> m` with `dist_d(m) + 1 == dist_d(n)`; `NO_ROUTE` when `d` is
//! unreachable or `n == d`.
//!
//! The same rule is computed in near-linear time and memory (a dense table does not scale to
//! thousands of pairs). Only the (node, destination) entries that some flow or UDP path uses
//! are computed and stored ([`RouteTable`], `table.rs`); [`Router`] (`router.rs`) finds them:
//! - *Tree-like parts are peeled.* Nodes of (distinct-neighbour) degree <= 1 are removed
//!   repeatedly; what is left is the 2-core. Each peeled node keeps the neighbour it hung from
//!   (`parent`), so the peeled nodes form trees rooted at core nodes (or, for a component
//!   with no cycle, at its last peeled node). Between two nodes of one tree the only path is
//!   the tree path; a tree node reaches anything outside its tree through its parent; and no
//!   shortest path between core nodes enters a tree (it would leave through the node it
//!   entered by). So the rule above gives exactly: the tree path, or up to the root, through
//!   the core, and down to the destination. Where a tree path offers parallel links, the
//!   lowest-index channel is taken, as the rule says.
//! - *The core* needs breadth-first searches, one per core node that some path ends behind
//!   (restricted to the core, whose distances are the full graph's), reused for every
//!   destination hanging from the same core node. A dumbbell, parking lot or LTE tree has no
//!   core at all.
//!
//! `tests::routes_match_the_dense_reference_table` checks every (node, destination) pair of
//! random graphs with trees, cycles and parallel links against the dense reference.
//!
//! Here too the simulator's look-ups: `route` at every packet-hop, and the paths of flows and
//! UDP sources (for the checks before a run and the express hops).

mod router;
mod table;
#[cfg(test)]
mod tests;

pub(super) use router::Router;
pub(super) use table::RouteTable;

use super::Simulator;
use crate::express::Route;

/// No node, no row, not reached (`Router`'s and `RouteTable`'s mark).
const NONE: u32 = u32::MAX;

impl Simulator {
    /// The channel from `node` toward `dst` (`NO_ROUTE`: none, or `node == dst`).
    #[inline]
    pub(super) fn route(&self, node: u32, dst: u32) -> u32 {
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

    /// Channels of a flow's data path and ACK path (static routing).
    pub(super) fn flow_route(&self, f: usize) -> Route {
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
        Route { data: path(src, dst), ack: path(dst, src), receiver_clock: self.flows[f].on_linux }
    }

    /// Channels of a UDP source's path (one-way).
    pub(super) fn udp_route(&self, i: usize) -> Route {
        let u = &self.scenario.udp[i];
        let mut data = Vec::new();
        let mut node = u.from as u32;
        while node != u.to as u32 {
            let c = self.route(node, u.to as u32);
            data.push(c);
            node = self.channels[c as usize].to;
        }
        Route { data, ack: Vec::new(), receiver_clock: false }
    }
}
