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
    /// Per core node, channels to other core nodes by the far node's number (then channel).
    core_out: Vec<Vec<u32>>,
    pub(super) to: Vec<u32>,
    parent: Vec<u32>,
    depth: Vec<u32>,
    pub(super) root: Vec<u32>,
    /// Connected component of each node (its lowest node), for `reachable`.
    component: Vec<u32>,
    /// Breadth-first search distances over the core from `bfs_root` (`NONE`: not reached),
    /// and the number of shortest paths from it (saturating).
    dist: Vec<u32>,
    paths: Vec<u64>,
    touched: Vec<u32>,
    bfs_root: u32,
    /// `next_core[n]`: the core node after `n` on the way to core node `next_root`
    /// (`NONE`: not yet found), so each (node, destination root) costs one search.
    next_core: Vec<u32>,
    next_touched: Vec<u32>,
    next_root: u32,
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
                // `out[n]` is sorted by (neighbour, channel): neighbours by node number.
                out[n].iter().filter(|&&(m, _)| core[m as usize] && m as usize != n).map(|&(_, c)| c).collect()
            })
            .collect();
        let component = components(&neighbours);
        Router {
            component,
            out,
            core_out,
            to: channels.iter().map(|c| c.to).collect(),
            parent,
            depth,
            root,
            dist: vec![NONE; nodes],
            paths: vec![0; nodes],
            touched: Vec::new(),
            bfs_root: NONE,
            next_core: vec![NONE; nodes],
            next_touched: Vec::new(),
            next_root: NONE,
        }
    }

    /// The lowest-index channel from `n` to its neighbour `m`.
    fn channel(&self, n: u32, m: u32) -> u32 {
        let o = &self.out[n as usize];
        let i = o.partition_point(|&(t, _)| t < m);
        debug_assert!(o.get(i).is_some_and(|&(t, _)| t == m), "{n} and {m} are not neighbours");
        o[i].1
    }

    /// Distances over the core from core node `r`, and the number of shortest paths.
    fn bfs(&mut self, r: u32) {
        if self.bfs_root == r {
            return;
        }
        for &n in &self.touched {
            self.dist[n as usize] = NONE;
            self.paths[n as usize] = 0;
        }
        self.touched.clear();
        self.bfs_root = r;
        self.dist[r as usize] = 0;
        self.paths[r as usize] = 1;
        self.touched.push(r);
        let mut frontier = VecDeque::from([r]);
        while let Some(n) = frontier.pop_front() {
            let d = self.dist[n as usize] + 1;
            let through = self.paths[n as usize];
            let mut previous = NONE as usize;
            for &c in &self.core_out[n as usize] {
                let m = self.to[c as usize] as usize;
                if m == previous {
                    continue; // a parallel link: the same paths (sorted by neighbour)
                }
                previous = m;
                if self.dist[m] == NONE {
                    self.dist[m] = d;
                    self.touched.push(m as u32);
                    frontier.push_back(m as u32);
                }
                if self.dist[m] == d {
                    self.paths[m] = self.paths[m].saturating_add(through);
                }
            }
        }
    }

    /// `d` can be reached from `s`.
    pub(super) fn reachable(&self, s: u32, d: u32) -> bool {
        self.component[s as usize] == self.component[d as usize]
    }

    /// The number of shortest paths from `s` to `d` (reachable), counting a node pair's
    /// parallel links once (ns-2 knows one link per node pair); saturating. More than one
    /// means that the tie rule (`next_core`) chose the route.
    pub fn equal_paths(&mut self, s: u32, d: u32) -> u64 {
        let (rs, rd) = (self.root[s as usize], self.root[d as usize]);
        if rs == rd {
            return 1; // one tree: one path
        }
        self.bfs(rs);
        self.paths[rd as usize]
    }

    /// The core node after core node `n` on the way to core node `r` (`n != r`, connected),
    /// by ns-2's rule: `RouteLogic::compute_routes` (ns-2.35 `routing/route.cc`) runs
    /// Dijkstra from `n`, settling nodes in order of (distance, node number) and giving a
    /// node the route of the first settled neighbour that reaches it at its distance. With
    /// hop counts that neighbour is the lowest-numbered one a hop nearer to `n`, so the path
    /// is found backwards from `r`, each time to the lowest-numbered neighbour one hop
    /// nearer to `n`, and its first node is the next hop.
    fn next_core(&mut self, n: u32, r: u32) -> u32 {
        if self.next_root != r {
            for &m in &self.next_touched {
                self.next_core[m as usize] = NONE;
            }
            self.next_touched.clear();
            self.next_root = r;
        }
        if self.next_core[n as usize] != NONE {
            return self.next_core[n as usize];
        }
        self.bfs(n);
        let mut w = r;
        while self.dist[w as usize] > 1 {
            let dw = self.dist[w as usize];
            let c = *self.core_out[w as usize]
                .iter()
                .find(|&&c| self.dist[self.to[c as usize] as usize].wrapping_add(1) == dw)
                .expect("a core node on a shortest path has a neighbour one hop nearer");
            w = self.to[c as usize];
        }
        self.next_core[n as usize] = w;
        self.next_touched.push(n);
        w
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
        while self.root[n as usize] != rd {
            let m = self.next_core(n, rd);
            if !hop(n, self.channel(n, m)) {
                return;
            }
            n = m;
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

/// The connected component of each node, named by its lowest node.
fn components(neighbours: &[Vec<u32>]) -> Vec<u32> {
    let mut component = vec![NONE; neighbours.len()];
    let mut stack = Vec::new();
    for start in 0..neighbours.len() {
        if component[start] != NONE {
            continue;
        }
        component[start] = start as u32;
        stack.push(start as u32);
        while let Some(n) = stack.pop() {
            for &m in &neighbours[n as usize] {
                if component[m as usize] == NONE {
                    component[m as usize] = start as u32;
                    stack.push(m);
                }
            }
        }
    }
    component
}
