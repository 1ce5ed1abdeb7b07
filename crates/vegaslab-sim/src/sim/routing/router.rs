//! The routing rule's paths (see `routing`): the peeled forest, the core's adjacency and
//! breadth-first searches over the core.

use super::NONE;
use crate::sim::NO_ROUTE;
use crate::channel::Channel;
use std::collections::VecDeque;

/// The peeled forest, the core's adjacency and a reusable breadth-first search.
pub struct Router {
    /// Per node, its outgoing channels as (far node, channel), sorted: a binary search
    /// finds the lowest-index channel to a given neighbour.
    pub(super) out: Vec<Vec<(u32, u32)>>,
    /// Per core node, channels to other core nodes in ascending index order.
    core_out: Vec<Vec<u32>>,
    pub(super) to: Vec<u32>,
    parent: Vec<u32>,
    depth: Vec<u32>,
    pub(super) root: Vec<u32>,
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
    pub(super) fn reachable(&mut self, s: u32, d: u32) -> bool {
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
