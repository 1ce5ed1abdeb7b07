//! Queue disciplines: what a link direction's queue does with a packet when it arrives
//! (enqueue) and when it leaves the queue for the link (dequeue).
//!
//! Each discipline is one file implementing [`QueueDiscipline`] and the registry's
//! [`registry::Kind`] (its `kind` names and declared keys, how it reads a queue table, how it
//! is built), registered by one line in the list below, from which the registry generates the
//! scenario's [`QueueSpec`] and the running [`Discipline`] a channel holds:
//! - `droptail`: ns-2's DropTail (`kind = "droptail"`);
//! - `red`: RED as ns-2's `Queue/RED` (`"red"`) and the grids paper's linear RED
//!   (`"red-linear"`);
//! - `codel`: CoDel, RFC 8289 (`"codel"`), the one that drops at dequeue.
//!
//! RoVegas's AQT-enabled router is not a discipline (it decides nothing): `aqt` is the hook
//! the channel applies to a probing packet as it leaves the queue. Packet errors and loss
//! patterns act after the link (`crate::loss`, re-exported here).
//!
//! ## What a discipline sees
//!
//! At enqueue ([`Arrival`]): the time, the packets *waiting* (not counting the one in
//! transmission, as ns-2's and Linux's queue objects count them: the link holds the packet it
//! is transmitting), whether the link is idle and since when, and the packet's size. At
//! dequeue ([`Departure`]): the time, the packet's enqueue time (so its sojourn time), its size
//! and the bytes left waiting behind it.
//!
//! ## When fates are decided
//!
//! A discipline that never drops at dequeue (DropTail, RED) lets the channel decide a packet's
//! whole hop when it arrives: its transmission starts when the packets ahead of it have been
//! sent, all known by then (`crate::channel`). One that may drop at dequeue
//! ([`QueueDiscipline::drops_at_dequeue`], CoDel) makes the channel hold arriving packets and
//! decide each at its dequeue time, in order (`crate::channel::deferred`).

pub mod aqt;
pub mod registry;

pub use crate::loss::{LossPattern, PacketErrors, PatternLosses};
pub use registry::{kind_doc, Kind, KindDoc, Placement, QueueKey, DEFAULT_LIMIT};
use vegaslab_cc::Nanos;

/// The kind of a queue table that does not name one: ns-2's default queue, DropTail.
pub const DEFAULT_KIND: &str = "droptail";

registry::disciplines! {
    /// ns-2's DropTail; see [`DropTail`].
    DropTail in droptail,
    /// RED (`kind = "red"`) or the grids paper's linear RED (`kind = "red-linear"`); see [`Red`].
    Red in red,
    /// CoDel, RFC 8289 (`kind = "codel"`); see [`CoDel`].
    CoDel in codel,
}

/// A discipline's decision on a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Accept,
    /// A drop the discipline chose (RED's random drop, CoDel's drop at dequeue).
    Early,
    /// Over the hard limit, or RED's average over the top threshold.
    Forced,
}

/// A packet arriving at the queue.
#[derive(Clone, Copy, Debug)]
pub struct Arrival {
    pub now: Nanos,
    /// Packets waiting, not counting the one in transmission.
    pub waiting: u64,
    /// When the link fell idle, if it is idle now (nothing waiting or in transmission).
    pub idle_since: Option<Nanos>,
    pub bytes: u32,
}

/// The packet at the head of the queue leaving it for the link.
#[derive(Clone, Copy, Debug)]
pub struct Departure {
    pub now: Nanos,
    /// When the packet joined the queue: `now - enqueued_at` is its sojourn time.
    pub enqueued_at: Nanos,
    pub bytes: u32,
    /// Bytes still waiting behind it.
    pub backlog_bytes: u64,
}

/// A queue discipline. The channel calls `enqueue` for every arriving packet and, if
/// `drops_at_dequeue`, `dequeue` for every packet leaving the queue in order and `idle` when
/// the transmitter falls free and finds the queue empty.
pub trait QueueDiscipline {
    /// May the arriving packet join the queue?
    fn enqueue(&mut self, a: &Arrival) -> Verdict;

    /// May the head packet go to the link? Anything but `Accept` drops it, and the next
    /// packet is dequeued at the same instant.
    fn dequeue(&mut self, _d: &Departure) -> Verdict {
        Verdict::Accept
    }

    /// The transmitter fell free at `now` and found nothing waiting.
    fn idle(&mut self, _now: Nanos) {}

    /// Whether `dequeue` may drop: the channel then decides fates at dequeue.
    fn drops_at_dequeue(&self) -> bool {
        false
    }
}
