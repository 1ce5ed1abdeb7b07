//! One direction of a link: a queue, a transmitter and a propagation pipe.
//!
//! A FIFO link knows each packet's fate when it arrives: it starts transmission at
//! max(now, end of the previous transmission), takes size x 8 / bandwidth to send, and
//! reaches the far node a propagation delay later (the delay in force when its transmission
//! starts, as ns-2's `LinkDelay` applies it). So the channel keeps packets in a single pipe
//! ordered by arrival time and needs one pending event, for the head of the pipe.
//!
//! The waiting queue is the set of accepted packets whose transmission has not started;
//! only their start times (and sizes, for the end of the run) are kept, and the time-weighted
//! occupancy statistics are integrated as those start times pass.
//!
//! Counting departures. A packet departs (leaves the queue onto the link) when its
//! transmission starts, as ns-2's queue monitor counts `pdepartures_`/`bdepartures_` at
//! dequeue. Its start time is known when it is accepted, so `accept` counts it then, and
//! `finish` takes back, at the end of the run, the packets whose transmission had not started
//! by then: the same result as counting at each start, with no counting on the per-packet
//! path as start times pass. What `finish` takes back needs each waiting packet's size and
//! fate, kept with its start time (16-byte entries; docs/decisions.md, "Departures are
//! counted at acceptance").
//!
//! A queue discipline that drops at dequeue (CoDel) breaks the first rule: a packet's fate
//! is known only when it reaches the head of the queue. Such a channel holds arriving packets
//! and decides each at its dequeue (`deferred`); the rest of this file is the same for it.
//!
//! Files: this one, the channel's state and the per-packet path (waiting queue and
//! transmitter); `pipe`, the propagation pipe and its deliveries; `end`, link failures and the
//! end of the run; `sampling`, a monitored queue's samples; `stats`, the queue's counters and
//! occupancy; `clock`, conversions to and from ns-2's double clock; `deferred`, the
//! dequeue-time path. The queue disciplines themselves are in `crate::queue`, the loss models
//! on the link in `crate::loss`.

mod clock;
mod deferred;
mod end;
mod pipe;
mod sampling;
mod stats;

use crate::delay::DelayModel;
use crate::packet::Packet;
use crate::queue::{droptail_admits, Arrival, Discipline, PacketErrors, PatternLosses, QueueDiscipline, Red, Verdict};
use crate::scenario::{DirectionSpec, QueueSpec};
use clock::{ns_of, start_clock_of};
pub use deferred::{Dequeued, Fate};
use deferred::Deferred;
use pipe::Piped;
pub use stats::QueueStats;
use std::collections::VecDeque;
use vegaslab_cc::Nanos;

/// Where an arriving packet went.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Admission {
    /// Accepted; waits `queued` before its transmission starts and reaches the far node at
    /// `arrives_at`, which ns-2's double clock reads as `clock` (see `Channel::accept`).
    Accepted { arrives_at: Nanos, queued: Nanos, clock: f64, start_clock: f64 },
    /// Dropped by the queue on arrival.
    Dropped,
    /// Transmitted but lost after the link (the packet-error model or the loss pattern): it
    /// occupied the link and never arrives.
    Corrupted,
}

/// An accepted packet waiting for its transmission: when it starts, and what `finish` takes
/// back if the run ends first (the size and fate are read only there).
#[derive(Clone, Copy, Debug)]
struct Waiting {
    start: Nanos,
    /// `start` on ns-2's double clock (`accept`).
    start_clock: f64,
    /// When ns-2 scheduled the resume event that starts it: the previous transmission's
    /// start on the double clock (`start_clock` less the previous packet's transmission time).
    resume_since: f64,
    bytes: u32,
    /// The packet-error model or the loss pattern will lose it (counted in `errors`).
    corrupted: bool,
}

/// Laid out in C order by use, in 64-byte lines from a 64-byte boundary: with thousands of
/// flows a channel is rarely in cache when a packet reaches it, and each of its lines touched
/// is a miss (docs/decisions.md, "Hot structs are laid out by use in cache lines"). Line 0
/// holds the transmitter's times and memos; line 1 the waiting queue and the four counters an
/// accepted packet changes; line 2 the occupancy integrals and rarer counters; line 3 the
/// pipe, its tail's arrival time, the pending delivery and the flags; the rest (the queue
/// discipline, error models, the delay schedule, sampling, the configuration) is read only on
/// its own paths. So a packet that finds the queue empty (every hop but a bottleneck's) touches
/// lines 0, 1 and 3, a delivery line 3 alone. To make room, the discipline, loss and delay-schedule cases
/// are told by flags in line 3, a constant delay sits in `delay_memo` from the start, and
/// `scheduled` is two words with a sentinel. Keeping the tail's arrival time (`tail_at`) lets
/// an accepted packet go behind the tail without reading the pipe's buffer, and `push_pipe`
/// says whether the head changed, so that `Simulator::hops` skips `schedule_channel` when it
/// did not. The prefetching that uses line 3 is described at `sim::PREFETCH_FROM_CHANNELS`;
/// layouts tried and not kept are in docs/performance.md, "Tried and not kept".
#[repr(C, align(64))]
pub struct Channel {
    // Line 0.
    /// A monitored queue's next sample time (`Nanos::MAX`: not monitored) and sampling period;
    /// see `start_sampling`.
    next_sample: Nanos,
    busy_until: Nanos,
    /// `busy_until` on ns-2's double clock: when its queue's resume event fires.
    busy_clock: f64,
    /// Transmission time of the last packet size seen (most packets share a size), in
    /// nanoseconds and as ns-2's double (`8.0 * size / bandwidth` seconds); the size is
    /// `tx_memo_bytes`.
    tx_memo: (Nanos, f64),
    /// The propagation delay last used, in nanoseconds and as ns-2's double (`ns / 1e9`).
    delay_memo: (Nanos, f64),
    tx_memo_bytes: u32,
    /// The DropTail limit (`queue`; unused for other disciplines): the plain channel's copy of
    /// `accept` reads it here rather than through `discipline`.
    limit: u32,
    // Lines 1 and 2.
    /// Accepted packets still waiting, in order of their transmission start.
    waiting: VecDeque<Waiting>,
    pub stats: QueueStats,
    /// A monitored queue's sampling period (cold; it fills line 2, `QueueStats` being 88 bytes).
    sample_interval: Nanos,
    // Line 3.
    /// Packets propagating or waiting, by arrival time at the far node, each with the time
    /// its transmission starts (where ns-2 schedules its arrival: see `event`).
    pipe: VecDeque<Piped>,
    /// Time and `since` bits (`event`) of the pending delivery event; `since` is
    /// `NOT_SCHEDULED` when none is (no `since` has its sign bit set): an event superseded
    /// by an earlier head, popped later, matches neither. Two words instead of an `Option`'s
    /// three, to make room for `tail_at`.
    pub scheduled_at: Nanos,
    pub scheduled_since: u64,
    /// Arrival time of the pipe's last packet (meaningful while the pipe is not empty): an
    /// accepted packet goes behind it without reading the pipe's buffer (`push_pipe`).
    tail_at: Nanos,
    pub to: u32,
    /// What sets this channel's per-packet path apart from a plain one (DropTail, lossless,
    /// a constant delay, ties by ns-2's doubles): `DISCIPLINE`, `LOSSY`, `DELAY_VARIES`,
    /// `EXACT_CLOCK` and `DEFERRED` bits, none for a plain channel (`accept`).
    special: u8,
    /// Packets leaving this channel are handed on at their arrival without an event
    /// (`express`; `Simulator::hops`). Here in line 3, read anyway, rather than in a vector
    /// of the simulator's with a bounds check.
    pub hands_on: bool,
    // Cold (`aqt_enabled` is read for probing packets only, `down` in runs with failures).
    /// The sending node is an AQT-enabled router: probing packets get their queueing time
    /// added to the AQT option (RoVegas).
    pub aqt_enabled: bool,
    /// The link is down (`fail`): nothing may be admitted (the simulator drops packets routed
    /// here with `refuse`).
    pub down: bool,
    pub from: u32,
    /// The link has a `down` schedule: `errors` is reported for it.
    pub can_fail: bool,
    pub bandwidth_bps: f64,
    delay: DelayModel,
    queue: QueueSpec,
    /// The queue discipline (`crate::queue`), consulted when `special` has `DISCIPLINE`.
    discipline: Box<Discipline>,
    /// Packets held for a discipline that decides at dequeue (`DEFERRED`; `deferred`).
    deferred: Option<Box<Deferred>>,
    /// Packet-error model, if the direction has a non-zero error rate.
    errors: Option<Box<PacketErrors>>,
    /// Deterministic loss pattern, if the direction has one (`loss`).
    pattern: Option<Box<PatternLosses>>,
    /// The waiting-queue length at each sample time taken so far.
    samples: Vec<u64>,
}

// The lines `Channel` documents: the waiting queue and the statistics start line 1, the
// occupancy integrals line 2, the pipe line 3, and the hot flags end within line 3.
const _: () = {
    use std::mem::offset_of;
    assert!(offset_of!(Channel, waiting) == 64);
    assert!(offset_of!(Channel, stats) + offset_of!(QueueStats, busy_lo) + 8 == 128);
    assert!(offset_of!(Channel, pipe) == 192);
    assert!(offset_of!(Channel, hands_on) < 256);
};

/// The waiting ring's first capacity (`grow_waiting`), as `VecDeque` would choose for
/// entries of its size.
const WAITING_FIRST_CAPACITY: usize = 4;

/// `Channel::special` bits. The queue is not DropTail: `discipline` decides admissions.
const DISCIPLINE: u8 = 1;
/// The direction has a loss pattern or a packet-error model (`pattern`, `errors`).
const LOSSY: u8 = 2;
/// The delay has a schedule (`delay`); else `delay_memo` holds the constant delay.
const DELAY_VARIES: u8 = 4;
/// Same-nanosecond arrivals and transmission starts are not ordered by ns-2's doubles
/// (`run.clock = "exact"`; see `advance_for_arrival`).
const EXACT_CLOCK: u8 = 8;
/// The discipline drops at dequeue: packets wait in `deferred` until their dequeue is decided
/// (`Simulator::hops` hands them to `deferred_arrival` rather than `accept`).
const DEFERRED: u8 = 16;

/// `Channel::scheduled_since` when no delivery is scheduled.
pub const NOT_SCHEDULED: u64 = u64::MAX;

/// How far ahead of the waiting queue's front `prefetch_waiting` asks (two entries a line).
const WAITING_AHEAD: usize = 8;

/// A hint to bring the line at `p` into the cache (no effect on results; a no-op off x86-64).
#[inline(always)]
pub(crate) fn prefetch(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults and changes no memory, whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

impl Channel {
    /// Channel number `index` of a run with this `seed` (its random streams, see `queue`).
    pub fn new(from: u32, to: u32, spec: &DirectionSpec, seed: u64, index: usize) -> Self {
        let errors = PacketErrors::new(spec.error_rate, seed, index);
        let pattern = PatternLosses::new(&spec.loss);
        let delay = DelayModel::new(spec.delay, spec.delay_schedule.clone());
        let delay_varies = !delay.points().is_empty();
        let lossy = errors.is_some() || pattern.is_some();
        let discipline = Discipline::new(&spec.queue, spec.bandwidth_bps, spec.delay, seed, index);
        let (droptail, deferred) = (matches!(discipline, Discipline::DropTail(_)), discipline.drops_at_dequeue());
        Channel {
            next_sample: Nanos::MAX,
            busy_until: 0,
            busy_clock: 0.0,
            tx_memo: (0, 0.0),
            // The constant delay (`delays_at`); a schedule's memo is refreshed as it changes.
            delay_memo: (spec.delay, spec.delay as f64 / 1e9),
            tx_memo_bytes: 0,
            limit: match &discipline {
                Discipline::DropTail(q) => q.limit,
                _ => 0,
            },
            waiting: VecDeque::new(),
            stats: QueueStats::default(),
            pipe: VecDeque::new(),
            scheduled_at: 0,
            scheduled_since: NOT_SCHEDULED,
            tail_at: 0,
            to,
            special: if droptail { 0 } else { DISCIPLINE }
                | if lossy { LOSSY } else { 0 }
                | if delay_varies { DELAY_VARIES } else { 0 }
                | if deferred { DEFERRED } else { 0 },
            hands_on: false,
            aqt_enabled: false,
            down: false,
            from,
            can_fail: false,
            bandwidth_bps: spec.bandwidth_bps,
            delay,
            queue: spec.queue.clone(),
            discipline: Box::new(discipline),
            deferred: deferred.then(Box::default),
            errors,
            pattern,
            sample_interval: 0,
            samples: Vec::new(),
        }
    }

    /// Whether same-nanosecond arrivals and transmission starts are ordered by ns-2's doubles
    /// (`run.clock = "ns2"`, the default; see `advance_for_arrival`).
    pub fn set_ties_by_clock(&mut self, on: bool) {
        self.special = if on { self.special & !EXACT_CLOCK } else { self.special | EXACT_CLOCK };
    }

    pub fn queue_spec(&self) -> &QueueSpec {
        &self.queue
    }

    /// Propagation delay in force at time `t`.
    pub fn delay_at(&self, t: Nanos) -> Nanos {
        self.delay.at(t)
    }

    /// RED state (average, early and forced drops) if the queue is RED.
    pub fn red(&self) -> Option<&Red> {
        match &*self.discipline {
            Discipline::Red(red) => Some(red),
            _ => None,
        }
    }

    /// The queue discipline.
    pub fn discipline(&self) -> &Discipline {
        &self.discipline
    }

    /// The direction has a packet-error model.
    pub fn has_error_model(&self) -> bool {
        self.errors.is_some() || self.pattern.is_some()
    }

    /// The discipline's decision for an arrival of `bytes` seeing `len` waiting (out of line:
    /// DropTail stays lean).
    #[cold]
    fn discipline_admits(&mut self, now: Nanos, len: u64, bytes: u32) -> bool {
        // Idle = nothing waiting and the transmitter free: since its last transmission ended.
        let idle_since = (len == 0 && self.busy_until <= now).then_some(self.busy_until);
        self.discipline.enqueue(&Arrival { now, waiting: len, idle_since, bytes }) == Verdict::Accept
    }

    /// Transmission time of `bytes`, rounded to the nearest nanosecond (halves up), and at
    /// least 1 ns.
    ///
    /// At least 1 ns, so that every accepted packet arrives strictly later than it was sent
    /// and simulated time cannot stand still inside one event (docs/decisions.md, "A
    /// transmission never takes zero time"). (The float-to-integer cast saturates, so a zero
    /// or tiny bandwidth gives `Nanos::MAX`, "never".)
    #[inline]
    pub fn tx_time(&mut self, bytes: u32) -> Nanos {
        self.tx_times(bytes).0
    }

    /// The transmission time of `bytes` in nanoseconds (`tx_time`) and in ns-2's double
    /// seconds, `8. * size / bandwidth_` (ns-2's `LinkDelay::txtime`), in that order of
    /// operations.
    #[inline]
    fn tx_times(&mut self, bytes: u32) -> (Nanos, f64) {
        if self.tx_memo_bytes != bytes {
            self.memo_tx_times(bytes);
        }
        self.tx_memo
    }

    /// `tx_times` for a size other than the last: out of line, so that the packet-hop loop
    /// does not load its constants into registers at every call (one hop in 28 needs it on
    /// the benchmark).
    #[cold]
    #[inline(never)]
    fn memo_tx_times(&mut self, bytes: u32) {
        let tx = ((bytes as f64 * 8.0 * 1e9) / self.bandwidth_bps + 0.5) as Nanos;
        self.tx_memo_bytes = bytes;
        self.tx_memo = (tx.max(1), 8.0 * bytes as f64 / self.bandwidth_bps);
    }

    /// The propagation delay in force at `t` in nanoseconds and as ns-2's double: the
    /// bridge writes a delay of `ns` nanoseconds as the shortest text of `ns / 1e9`, which
    /// Tcl reads back as exactly that double.
    #[inline(always)]
    fn delays_at(&mut self, special: u8, t: Nanos) -> (Nanos, f64) {
        if special & DELAY_VARIES != 0 {
            self.scheduled_delay_at(t);
        }
        self.delay_memo
    }

    /// `delays_at` for a delay with a schedule: brings `delay_memo` to the delay at `t`.
    #[cold]
    fn scheduled_delay_at(&mut self, t: Nanos) {
        let d = self.delay.at_mut(t);
        if self.delay_memo.0 != d {
            self.delay_memo = (d, d as f64 / 1e9);
        }
    }

    /// Let the waiting queue drain up to time `t`, integrating its occupancy.
    pub fn advance(&mut self, t: Nanos) {
        while let Some(&Waiting { start, .. }) = self.waiting.front() {
            if start > t {
                break;
            }
            self.stats.integrate(self.waiting.len() as u64, start);
            self.waiting.pop_front();
        }
        self.stats.integrate(self.waiting.len() as u64, t);
    }

    /// `advance` for an arrival at `now` whose ns-2 double is `clock`, during an event ns-2
    /// scheduled at the double `since`. A transmission due to start at `now` itself has
    /// started for this arrival only if ns-2 runs its queue's resume event first: when the
    /// resume's double (`Waiting::start_clock`) is below the arrival's, or equal to it with
    /// the resume scheduled no later (`Waiting::resume_since`; ns-2 runs events of one double
    /// in the order it scheduled them; decided: the resume when both were scheduled at the
    /// same double). Otherwise the arrival finds that packet still waiting, which matters to a
    /// full queue. With `run.clock = "exact"` (`ties_by_clock` off) every such transmission
    /// has started, as before doubles were modelled.
    #[inline(always)]
    fn advance_for_arrival(&mut self, special: u8, now: Nanos, clock: f64, since: f64) {
        let ties_by_clock = special & EXACT_CLOCK == 0;
        while let Some(&Waiting { start, start_clock, resume_since, .. }) = self.waiting.front() {
            let resume_later = start_clock > clock || (start_clock == clock && resume_since > since);
            if start > now || (start == now && ties_by_clock && resume_later) {
                break;
            }
            self.stats.integrate(self.waiting.len() as u64, start);
            self.waiting.pop_front();
        }
        self.stats.integrate(self.waiting.len() as u64, now);
    }

    /// Packets waiting (not the one in transmission) at the last `advance`.
    pub fn queue_len(&self) -> usize {
        self.waiting.len()
    }

    /// A packet arrives at time `now`: queue it (and put it in the pipe) or drop it.
    pub fn admit(&mut self, now: Nanos, mut packet: Packet) -> Admission {
        let admission = self.accept(now, packet.size, packet.clock, packet.clock);
        if let Admission::Accepted { arrives_at, queued, clock, start_clock } = admission {
            packet.clock = clock;
            self.push_pipe(arrives_at, now + queued, start_clock, packet);
        }
        admission
    }

    /// Decide a packet's fate and account for it, without putting it in the pipe: the
    /// caller hands an accepted packet straight to the far node (see `express`).
    ///
    /// `clock` is ns-2's double time of the packet's arrival here (`scenario::SenderClock`).
    /// ns-2 starts a transmission at the arrival if the link is free, else when its queue's
    /// resume event fires at the end of the previous transmission; at an integer tie of the
    /// two, ns-2 runs whichever has the smaller double first and the transmission starts
    /// at the later of the two. So the start is `max(clock, busy_clock)` in every case, the
    /// end `start + txt`, and the arrival at the far node `start + (txt + delay)`, summed as
    /// `LinkDelay::recv` schedules it. `since` is the double at which ns-2 scheduled the
    /// event the packet arrives in (`advance_for_arrival`).
    ///
    /// With `run.clock = "ns2"` the transmission's end and the arrival in nanoseconds are
    /// those doubles rounded to the nanosecond (`ns_of`), not sums of rounded times: a busy
    /// queue would otherwise add up each packet's rounding (79,483.87 ns counted as 79,484
    /// for 1540 bytes at 155 Mbit/s), drift tens of nanoseconds from ns-2's time and run
    /// events ns-2 has in one order in the other (docs/decisions.md, "Link times are ns-2's
    /// doubles rounded"). With `"exact"` times are the integer sums.
    ///
    /// A plain channel (no `special` bit: DropTail, lossless, a constant delay, ties by
    /// ns-2's doubles; every channel of the benchmark) has its own copy of this path, where
    /// those four cases cannot arise: one test of `special` per packet-hop instead of five,
    /// and the folded constants let the compiler keep more in registers.
    #[inline]
    pub fn accept(&mut self, now: Nanos, bytes: u32, clock: f64, since: f64) -> Admission {
        match self.special {
            0 => self.accept_with(0, now, bytes, clock, since),
            special => self.accept_with(special, now, bytes, clock, since),
        }
    }

    /// `accept` for a channel whose `special` bits are `special`.
    #[inline(always)]
    fn accept_with(&mut self, special: u8, now: Nanos, bytes: u32, clock: f64, since: f64) -> Admission {
        debug_assert!(special & DEFERRED == 0, "a deferred channel's arrivals go to `hold`");
        let ties_by_clock = special & EXACT_CLOCK == 0;
        self.sample_up_to(now);
        self.advance_for_arrival(special, now, clock, since);
        let len = self.waiting.len() as u64;
        let accept = if special & DISCIPLINE != 0 { self.discipline_admits(now, len, bytes) } else { droptail_admits(len, self.limit) };
        if !accept {
            self.stats.drops += 1;
            return Admission::Dropped;
        }
        let start = now.max(self.busy_until);
        let txt_previous = self.tx_memo.1;
        let (tx, txt) = self.tx_times(bytes);
        // Saturating: an absurd bandwidth or delay means "never", not a wrapped-around
        // "at once" (`Nanos::MAX` lies beyond any run's end).
        let start_clock = start_clock_of(clock, self.busy_clock);
        self.busy_clock = start_clock + txt;
        self.busy_until = if ties_by_clock { ns_of(self.busy_clock).max(start.saturating_add(1)) } else { start.saturating_add(tx) };
        if start > now {
            let resume_since = start_clock - txt_previous;
            if self.waiting.len() == self.waiting.capacity() {
                self.grow_waiting(special);
            }
            self.waiting.push_back(Waiting { start, start_clock, resume_since, bytes, corrupted: false });
            self.stats.max_len = self.stats.max_len.max(self.waiting.len() as u64);
        }
        // Counted now, taken back by `finish` if the transmission has not started by the end.
        self.stats.departures += 1;
        self.stats.bytes_sent += bytes as u64;
        self.stats.add_busy(tx);
        if special & LOSSY != 0 && self.loses_on_link() {
            self.lost_on_link(now, start);
            return Admission::Corrupted;
        }
        let (delay, delay_clock) = self.delays_at(special, start);
        let arrival_clock = start_clock + (txt + delay_clock);
        let arrives_at = if ties_by_clock { ns_of(arrival_clock).max(self.busy_until) } else { self.busy_until.saturating_add(delay) };
        Admission::Accepted { arrives_at, queued: start - now, clock: arrival_clock, start_clock }
    }

    /// Room for one more waiting packet: the ring doubles, but a DropTail queue's no further
    /// than the most it can hold (`droptail_admits`: `limit - 1` waiting beside the packet in
    /// transmission).
    ///
    /// Left to `VecDeque`, the ring's capacity would double past the limit, up to twice what
    /// the queue can ever use (a 16.8 M-entry ring for the 13.4 M packets of
    /// `scripts/bench_scale.py`'s 100,000-flow bottleneck). Capacity changes no result.
    #[cold]
    #[inline(never)]
    fn grow_waiting(&mut self, special: u8) {
        let len = self.waiting.len();
        let doubled = (2 * len).max(WAITING_FIRST_CAPACITY);
        let most = if special & DISCIPLINE == 0 { (self.limit as usize).saturating_sub(1) } else { usize::MAX };
        self.waiting.reserve_exact(doubled.min(most).max(len + 1) - len);
    }

    /// Whether the loss pattern or the packet-error model loses the packet just transmitted.
    ///
    /// The pattern comes first and counts every transmitted packet; the random model draws
    /// only for the packets it lets through, as in ns-2 with both error models chained after
    /// the link, the pattern's nearer the link (see `LossPattern`).
    #[cold]
    fn loses_on_link(&mut self) -> bool {
        if let Some(p) = &mut self.pattern {
            if p.loses_next() {
                return true;
            }
        }
        // Transmitted (it uses the queue and the link), then lost.
        self.errors.as_mut().is_some_and(|e| e.corrupts())
    }

    /// A packet accepted at `now` (its transmission starting at `start`) that the loss pattern
    /// or the packet-error model loses after the link: counted in `errors` (taken back by
    /// `finish` if its transmission had not started by the end).
    ///
    /// It returns nothing (`accept` returns `Admission::Corrupted`): returning the admission,
    /// in memory, made the compiler write every accepted packet's admission to the stack as
    /// well, five stores per packet-hop that nothing read (see `Simulator::hops`).
    #[cold]
    fn lost_on_link(&mut self, now: Nanos, start: Nanos) {
        self.stats.errors += 1;
        if start > now {
            self.waiting.back_mut().expect("just pushed").corrupted = true;
        }
    }

    /// The propagation delay never changes, so packets leave in the order they arrive.
    pub fn keeps_order(&self) -> bool {
        self.delay.is_constant()
    }

}

#[cfg(test)]
mod tests;
