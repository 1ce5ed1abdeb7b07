//! The routing entries the paths use, stored for one look-up per packet-hop.

use super::{Router, NONE};
use crate::sim::NO_ROUTE;

/// The routing entries some path uses, looked up at every hop as (node, destination):
/// a node with a row finds its channel in one load (`rows[row_start[n] + dest_col[d]]`);
/// any other node searches its few entries, sorted by destination.
/// Every node gets a row when all rows fit in `MAX_DENSE` entries (the whole table is
/// then dense); otherwise the nodes with the most entries (routers) do, as many as fit.
///
/// Why rows: a router on the path of thousands of flows would otherwise search tens of
/// thousands of entries at every hop, dependent loads that miss the cache (a hash map is no
/// better: one random load into a table of megabytes). A router's row is one load from an
/// array the size of the destinations, which its traffic keeps in cache.
pub struct RouteTable {
    /// Column of each node as a destination: its index among the destinations, or for a
    /// node no path ends at, the column past them all, `UNUSED` in every row.
    ///
    /// Rows have a last column of `UNUSED` that destinations without a path point to, and a
    /// row is named by where it starts, so a look-up needs no test of the destination and no
    /// multiplication. (The extra column adds one entry per row to `MAX_DENSE`'s; which nodes
    /// get rows is unchanged.)
    dest_col: Vec<u32>,
    /// The rows' columns are the destination nodes themselves (`rows[row_start[n] + d]`,
    /// `UNUSED` where no path ends), so a look-up does not read `dest_col`.
    ///
    /// Why: `dest_col` is as long as the nodes, so with thousands of flows reading it too
    /// would be a second cache miss, dependent on the first. Used when the rows fit at the
    /// nodes' width (a dumbbell's two routers: 2 x 200,002 entries at 100,000 flows).
    cols_are_nodes: bool,
    /// Where each node's row starts in `rows`; `NONE`: its entries are in `small`;
    /// `UNIFORM | c`: every entry of the node is channel `c`, the node's one link (below).
    ///
    /// A node with one outgoing link whose recorded entries all take it (every end host of
    /// a dumbbell) answers `get` from its `row_start` alone, instead of searching `small`
    /// (two more loads, `start` and `small`, each a cache miss with many hosts). Only in
    /// the table `build` makes, used before any link changes, when every look-up is of a
    /// recorded pair (packets only travel recorded paths) and so answered as before;
    /// `get_recorded` still answers exactly (`rebuild` reads the previous table through
    /// it), and `rebuild`'s tables have no `UNIFORM` node.
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
    /// One look-up per packet-hop: the row look-up reads its three arrays without bounds
    /// checks, after one test that both nodes are in the table; `assemble` checks once what
    /// makes that safe. A node beyond the table panics on its index, not with a message of
    /// its own, which cost instructions on every look-up.
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
