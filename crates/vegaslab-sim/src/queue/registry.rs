//! The disciplines a link direction's queue may have: the scenario's [`QueueSpec`] (what a
//! scenario file names) and the running [`Discipline`], one variant each, dispatched by `match`.
//! Adding a discipline is a file in `queue/`, a variant in each enum and its arm in each `match`.

use serde::Serialize;

use super::{Arrival, CoDel, CoDelSpec, Departure, DropTail, QueueDiscipline, Red, RedSpec, RedVariant, Verdict};
use vegaslab_cc::Nanos;

#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum QueueSpec {
    /// ns-2 DropTail: a limit of `limit` packets counts the one being transmitted.
    DropTail { limit: u32 },
    /// RED (`kind = "red"`) or the grids paper's linear RED (`kind = "red-linear"`); see [`Red`].
    Red(RedSpec),
    /// CoDel, RFC 8289 (`kind = "codel"`); see [`CoDel`].
    CoDel(CoDelSpec),
}

impl QueueSpec {
    pub fn kind(&self) -> &'static str {
        match self {
            QueueSpec::DropTail { .. } => "droptail",
            QueueSpec::Red(r) if r.variant == RedVariant::Linear => "red-linear",
            QueueSpec::Red(_) => "red",
            QueueSpec::CoDel(_) => "codel",
        }
    }
    pub fn limit(&self) -> u32 {
        match self {
            QueueSpec::DropTail { limit } => *limit,
            QueueSpec::Red(r) => r.limit,
            QueueSpec::CoDel(c) => c.limit,
        }
    }
}

/// A channel's queue discipline. Its variants differ in size (RED's random stream is large);
/// the channel holds it boxed, off its hot lines, so none is boxed again here.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
pub enum Discipline {
    DropTail(DropTail),
    Red(Red),
    CoDel(CoDel),
}

impl Discipline {
    /// The discipline `spec` names for channel number `channel` of a run with this `seed` (its
    /// random stream: `crate::rng`), on a link of this bandwidth and propagation delay.
    pub fn new(spec: &QueueSpec, bandwidth_bps: f64, delay: Nanos, seed: u64, channel: usize) -> Self {
        match spec {
            QueueSpec::DropTail { limit } => Discipline::DropTail(DropTail { limit: *limit }),
            QueueSpec::Red(r) => Discipline::Red(Red::new(r, bandwidth_bps, delay, seed, channel)),
            QueueSpec::CoDel(c) => Discipline::CoDel(CoDel::new(c)),
        }
    }
}

impl QueueDiscipline for Discipline {
    #[inline]
    fn enqueue(&mut self, a: &Arrival) -> Verdict {
        match self {
            Discipline::DropTail(q) => q.enqueue(a),
            Discipline::Red(q) => q.enqueue(a),
            Discipline::CoDel(q) => q.enqueue(a),
        }
    }

    #[inline]
    fn dequeue(&mut self, d: &Departure) -> Verdict {
        match self {
            Discipline::DropTail(q) => q.dequeue(d),
            Discipline::Red(q) => q.dequeue(d),
            Discipline::CoDel(q) => q.dequeue(d),
        }
    }

    #[inline]
    fn idle(&mut self, now: Nanos) {
        match self {
            Discipline::DropTail(q) => q.idle(now),
            Discipline::Red(q) => q.idle(now),
            Discipline::CoDel(q) => q.idle(now),
        }
    }

    fn drops_at_dequeue(&self) -> bool {
        match self {
            Discipline::DropTail(q) => q.drops_at_dequeue(),
            Discipline::Red(q) => q.drops_at_dequeue(),
            Discipline::CoDel(q) => q.drops_at_dequeue(),
        }
    }
}
