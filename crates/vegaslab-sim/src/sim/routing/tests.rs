//! The routing against the first version's dense table, on random graphs.

use super::{RouteTable, Router};
use crate::channel::Channel;
use crate::scenario::{DirectionSpec, QueueSpec};
use crate::sim::NO_ROUTE;
use rand::{Rng, SeedableRng};
use std::collections::VecDeque;

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
    let spec = DirectionSpec { bandwidth_bps: 1e6, delay: 0, delay_schedule: vec![], queue: QueueSpec::DropTail(crate::queue::DropTailSpec { limit: 10 }), error_rate: 0.0, loss: None };
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
