//! What the readers of a scenario share while it is built: the network so far (nodes by name,
//! links, which node pairs are linked) and the defaults every reader applies. `build` creates
//! it and hands it to the readers (`links`, `topologies`, `satellite`, `flows`, `udp`, ...);
//! it names none of them, so no reader imports anything back from `build`.

use super::reader::Obj;
use super::{ErrorKind, LinkSpec, ScenarioError};
use std::collections::HashMap;

/// The largest time a field may take unless it says otherwise (see `limits`).
pub const FOREVER: i128 = super::limits::MAX_TIME_NS;
/// ns-2's default queue limit (`Queue set limit_ 50`), the queue registry's.
pub use crate::queue::DEFAULT_LIMIT as DEFAULT_QUEUE_LIMIT;

/// The network as read so far: the topology tables and `[[links]]` add to it, flows, monitors
/// and UDP sources look node names up in it.
#[derive(Default)]
pub struct NetBuilder {
    pub nodes: Vec<String>,
    pub index: HashMap<String, usize>,
    pub links: Vec<LinkSpec>,
    pub dumbbell_pairs: usize,
    /// Links a topology names (the dumbbell's `"bottleneck"`), for `[[links]]`' `at`.
    pub link_names: HashMap<String, usize>,
    /// Node pairs (lower index first) that have a link, with the link's index: for the
    /// duplicate check and `[[links]]`' `at`.
    pub linked: HashMap<(usize, usize), usize>,
}

impl NetBuilder {
    pub fn node(&mut self, name: &str) -> usize {
        if let Some(&i) = self.index.get(name) {
            return i;
        }
        self.nodes.push(name.to_string());
        self.index.insert(name.to_string(), self.nodes.len() - 1);
        self.nodes.len() - 1
    }

    /// The index of the link between the nodes named `a` and `b`, if they are linked.
    pub fn link_between(&self, a: &str, b: &str) -> Option<usize> {
        let (&x, &y) = (self.index.get(a)?, self.index.get(b)?);
        self.linked.get(&(x.min(y), x.max(y))).copied()
    }

    pub fn find(&self, obj: &Obj, key: &str, name: &str) -> Result<usize, ScenarioError> {
        self.index.get(name).copied().ok_or_else(|| {
            let mut known: Vec<&str> = self.nodes.iter().map(String::as_str).collect();
            known.truncate(12);
            let more = if self.nodes.len() > 12 { ", ..." } else { "" };
            obj.err_kind(key, ErrorKind::Reference, format!("no node named \"{name}\" (nodes: {}{more})", known.join(", ")))
        })
    }
}

