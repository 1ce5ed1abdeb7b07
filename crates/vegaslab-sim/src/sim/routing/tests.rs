//! The routing against a dense table computed as ns-2 computes its routes, on random graphs.

use super::{RouteTable, Router};
use crate::channel::Channel;
use crate::scenario::{DirectionSpec, QueueSpec};
use crate::sim::NO_ROUTE;
use rand::{Rng, SeedableRng};
use std::collections::VecDeque;

/// A dense reference table by ns-2.35's own procedure (`RouteLogic::compute_routes`,
/// `routing/route.cc`): for every source `k`, Dijkstra over unit costs that settles the
/// unsettled node of least distance, the lowest-numbered on a tie, and gives a node the
/// route of the first settled node that strictly shortens its distance (a neighbour of `k`
/// keeps itself as its route). Returns `table[row * nodes + k]`, the channel from `k` toward
/// `dests[row]` (the lowest-index channel to the chosen neighbour), and the rows of the
/// destinations.
fn dense_routes(nodes: usize, channels: &[Channel], dests: &[u32]) -> (Vec<u32>, Vec<u32>) {
    const INF: usize = usize::MAX;
    let mut adjacent = vec![false; nodes * nodes];
    for c in channels {
        if c.from != c.to {
            adjacent[c.from as usize * nodes + c.to as usize] = true;
        }
    }
    let lowest_channel = |k: usize, m: usize| channels.iter().position(|c| c.from as usize == k && c.to as usize == m).expect("neighbours") as u32;
    let mut next = vec![INF; nodes * nodes]; // next[k * nodes + w]: the next node from k toward w
    for k in 0..nodes {
        let mut dist = vec![INF; nodes];
        let mut settled = vec![false; nodes];
        settled[k] = true;
        for v in 0..nodes {
            if adjacent[k * nodes + v] {
                dist[v] = 1;
                next[k * nodes + v] = v;
            }
        }
        while let Some(o) = (0..nodes).filter(|&w| !settled[w] && dist[w] != INF).min_by_key(|&w| (dist[w], w)) {
            settled[o] = true;
            for w in 0..nodes {
                if !settled[w] && adjacent[o * nodes + w] && dist[o] + 1 < dist[w] {
                    dist[w] = dist[o] + 1;
                    next[k * nodes + w] = next[k * nodes + o];
                }
            }
        }
    }
    let mut table = vec![NO_ROUTE; nodes * dests.len()];
    let mut rows = vec![NO_ROUTE; nodes];
    for (row, &d) in dests.iter().enumerate() {
        rows[d as usize] = row as u32;
        for k in 0..nodes {
            let m = next[k * nodes + d as usize];
            if k != d as usize && m != INF {
                table[row * nodes + k] = lowest_channel(k, m);
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

/// The number of shortest paths from `s` to every node, a node pair's parallel links once.
fn shortest_path_counts(nodes: usize, channels: &[Channel], s: usize) -> Vec<u64> {
    let mut adjacent = vec![Vec::new(); nodes];
    for c in channels {
        if c.from != c.to && !adjacent[c.from as usize].contains(&(c.to as usize)) {
            adjacent[c.from as usize].push(c.to as usize);
        }
    }
    let (mut dist, mut count) = (vec![usize::MAX; nodes], vec![0u64; nodes]);
    (dist[s], count[s]) = (0, 1);
    let mut frontier = VecDeque::from([s]);
    while let Some(n) = frontier.pop_front() {
        for &m in &adjacent[n] {
            if dist[m] == usize::MAX {
                dist[m] = dist[n] + 1;
                frontier.push_back(m);
            }
            if dist[m] == dist[n] + 1 {
                count[m] += count[n];
            }
        }
    }
    count
}

#[test]
fn equal_paths_counts_the_shortest_paths_a_tie_rule_chooses_among() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    for case in 0..200 {
        let nodes = rng.gen_range(2..16usize);
        let mut links: Vec<(u32, u32)> = (1..nodes as u32).map(|n| (rng.gen_range(0..n), n)).collect();
        for _ in 0..rng.gen_range(0..6) {
            let (a, b) = (rng.gen_range(0..nodes as u32), rng.gen_range(0..nodes as u32));
            if a != b {
                links.push((a, b));
            }
        }
        let channels = channels_of(&links);
        let mut router = Router::new(nodes, &channels);
        for s in 0..nodes {
            let want = shortest_path_counts(nodes, &channels, s);
            for (d, &count) in want.iter().enumerate() {
                if s != d {
                    assert_eq!(router.equal_paths(s as u32, d as u32), count, "case {case}: {s} -> {d} in {links:?}");
                }
            }
        }
    }
}
