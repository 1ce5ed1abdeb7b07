//! ns-2's DropTail (`queue/drop-tail.cc`; `kind = "droptail"`): a packet is dropped when the
//! queue is full.

use super::registry::{Kind, KindDoc, Placement, QueueKey};
use super::{Arrival, QueueDiscipline, Verdict};
use vegaslab_cc::params::{Param, ParamError, ParamKind, ParamSource};

/// A DropTail configuration (`queue = { kind = "droptail", limit = 50 }`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct DropTailSpec {
    /// Packets the queue holds, counting the one in transmission (ns-2's `limit_`).
    pub limit: u32,
}

/// A DropTail queue of `limit` packets, counting the one in transmission.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DropTail {
    pub limit: u32,
}

const LIMIT: QueueKey = QueueKey {
    param: Param {
        name: "limit",
        // As in ns-2, the limit counts the packet being sent and a packet is queued before the
        // link takes it, so a limit of 1 would drop every packet: the least is 2.
        kind: ParamKind::Integer { lo: 2, hi: 100_000_000 },
        unit: "packets",
        doc: "the packets the queue holds, counting the one being transmitted",
        cite: "ns-2 queue/drop-tail.cc, Queue limit_ (default 50, ns-default.tcl)",
    },
    field: "limit",
    required: false,
};

/// ns-2 DropTail: drop when (waiting + 1) >= limit, so limit - 1 wait and one is in
/// transmission. (The plain channel's copy of `accept` calls this with the limit it keeps in
/// its first cache line, not through [`super::Discipline`].)
#[inline(always)]
pub fn droptail_admits(waiting: u64, limit: u32) -> bool {
    waiting + 1 < limit as u64
}

impl QueueDiscipline for DropTail {
    fn enqueue(&mut self, a: &Arrival) -> Verdict {
        if droptail_admits(a.waiting, self.limit) {
            Verdict::Accept
        } else {
            Verdict::Forced
        }
    }
}

impl Kind for DropTail {
    type Spec = DropTailSpec;
    const KINDS: &'static [KindDoc] = &[KindDoc {
        name: "droptail",
        about: "drop an arriving packet when the queue is full; the default kind",
        cite: "ns-2 queue/drop-tail.cc",
        keys: &[LIMIT],
        minimal: "{ kind = \"droptail\" }",
        aliases: &[],
    }];

    fn read(_kind: &str, table: &dyn ParamSource) -> Result<DropTailSpec, ParamError> {
        let limit = LIMIT.limit(table)?;
        Ok(DropTailSpec { limit })
    }
    fn kind_of(_spec: &DropTailSpec) -> &'static str {
        "droptail"
    }
    fn limit(spec: &DropTailSpec) -> u32 {
        spec.limit
    }
    fn build(spec: &DropTailSpec, _on: &Placement) -> DropTail {
        DropTail { limit: spec.limit }
    }
}
