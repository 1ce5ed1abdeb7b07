//! Static routing: hop-count shortest paths, ties broken by node number as ns-2 breaks them.
//!
//! The rule is ns-2.35's (`RouteLogic::compute_routes`, `routing/route.cc`, which `rtproto
//! Static` and `rtproto Session` both use): every node runs Dijkstra from itself over unit link
//! costs, settling nodes in order of (distance, node number), and a node takes the route of
//! the first settled neighbour that reaches it at its distance. So the next hop from `n`
//! toward `d` is found backwards from `d`: step to the lowest-numbered neighbour one hop
//! nearer to `n`, and so on, until a neighbour of `n`. Node numbers are the scenario's node
//! indices (the order nodes are first named), which are ns-2's node ids in the bridge's script,
//! so the order of links matters only through the node numbers it gives; where a node pair has
//! parallel links (ns-2 keeps one), the lowest-index channel is taken. `NO_ROUTE` when `d` is unreachable or `n == d`.
//! Where several shortest paths join a flow's endpoints, the run says so
//! (`RunMeta::route_ties`).
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
//! - *The core* needs breadth-first searches (restricted to the core, whose distances are the
//!   full graph's), one from each core node a path leaves through toward each core node some
//!   path ends behind, its answer kept for every destination hanging from that core node. A
//!   dumbbell, parking lot or LTE tree has no core at all.
//!
//! `tests::routes_match_the_dense_reference_table` checks every (node, destination) pair of
//! random graphs with trees, cycles and parallel links against a dense table computed by
//! ns-2's procedure.
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
use crate::results::RouteTie;

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

    /// The flow entries and UDP sources whose route the tie rule chose among several
    /// shortest paths (`RunMeta::route_ties`).
    pub(super) fn find_route_ties(&self) -> Vec<RouteTie> {
        let sc = &self.scenario;
        let ends = sc.flows.iter().map(|f| (&f.name, f.from, f.to, true)).chain(sc.udp.iter().map(|u| (&u.name, u.from, u.to, false)));
        let mut ties = Vec::new();
        for (name, from, to, acked) in ends {
            let (s, d) = (from as u32, to as u32);
            let mut router = self.router.borrow_mut();
            if s == d || !router.reachable(s, d) {
                continue;
            }
            let equal_paths = router.equal_paths(s, d);
            drop(router);
            if equal_paths > 1 {
                let path = self.node_path(s, d);
                let ack_path = if acked { self.node_path(d, s) } else { Vec::new() };
                ties.push(RouteTie { flow: name.clone(), equal_paths, path, ack_path });
            }
        }
        ties
    }

    /// The names of the nodes on the route from `from` to `to` (reachable).
    fn node_path(&self, from: u32, to: u32) -> Vec<String> {
        let mut out = vec![self.scenario.nodes[from as usize].clone()];
        let mut node = from;
        while node != to {
            node = self.channels[self.route(node, to) as usize].to;
            out.push(self.scenario.nodes[node as usize].clone());
        }
        out
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
