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

use crate::delay::DelayModel;
use crate::packet::Packet;
use crate::queue::{droptail_admits, PacketErrors, PatternLosses, Red, Verdict};
use crate::scenario::{DirectionSpec, QueueSpec};
use std::collections::VecDeque;
use vegaslab_cc::Nanos;

/// Counters and time-weighted occupancy of a channel's queue.
///
/// Laid out in C order (see `Channel`): first the counters every accepted packet changes, then
/// the occupancy integrals (changed only while packets wait), then the rarer counters.
///
/// The arrival count is derived (`arrivals`), not stored, and the busy time is kept as two
/// 64-bit halves whose high half changes only on a carry: so the four counters an accepted
/// packet changes fit, with the waiting queue, in one line of `Channel`, and a packet that
/// finds the queue empty touches no other statistics line.
#[repr(C)]
#[derive(Clone, Debug, Default)]
pub struct QueueStats {
    /// Packets whose transmission started (by the end of the run, once `Channel::finish` ran;
    /// before that, every accepted packet).
    pub departures: u64,
    /// Between the two counters: adjacent, the compiler adds to both with one vector
    /// addition, five instructions where two do.
    last_change: Nanos,
    /// Bytes of those packets (a packet in transmission at the end counts whole).
    pub bytes_sent: u64,
    /// The low 64 bits of the busy time (`busy_ns`); the high ones are `busy_hi`.
    busy_lo: u64,
    area: f64,
    area_sq: f64,
    pub max_len: u64,
    pub drops: u64,
    /// Packets transmitted and then lost: to the packet-error model or the loss pattern, or
    /// on the link when it went down (of those counted in `departures`).
    pub errors: u64,
    /// Packets accepted whose transmission had not started at the end of the run (set by
    /// `Channel::finish`): arrivals = departures + drops + backlog.
    pub backlog: u64,
    busy_hi: u64,
}

impl QueueStats {
    /// Packets that arrived at the queue: each one is accepted (a departure, or part of the
    /// backlog at the end) or dropped, and a departure taken back becomes a drop or backlog,
    /// so this holds at every moment, not only at the end.
    pub fn arrivals(&self) -> u64 {
        self.departures + self.drops + self.backlog
    }

    /// Transmission time of accepted packets, for utilisation (after `Channel::finish`: the
    /// part within the run).
    pub fn busy_ns(&self) -> u128 {
        (self.busy_hi as u128) << 64 | self.busy_lo as u128
    }

    fn set_busy_ns(&mut self, v: u128) {
        (self.busy_hi, self.busy_lo) = ((v >> 64) as u64, v as u64);
    }

    /// `busy_ns += tx`, the high half touched only on a carry.
    #[inline]
    fn add_busy(&mut self, tx: Nanos) {
        let (lo, carry) = self.busy_lo.overflowing_add(tx);
        self.busy_lo = lo;
        if carry {
            self.busy_hi += 1;
        }
    }

    #[inline]
    fn integrate(&mut self, len: u64, t: Nanos) {
        // An empty queue adds exactly +0.0 to both sums: skip the arithmetic (most links are
        // empty most of the time).
        if len > 0 && t > self.last_change {
            // Through i64: the same values (times stay below `limits::MAX_TIME_NS` plus the
            // path's delays, far below 2^63), in one instruction each instead of x86-64's
            // longer unsigned-to-float sequence; this runs at every arrival and start.
            let dt = (t - self.last_change) as i64 as f64;
            let l = len as i64 as f64;
            self.area += l * dt;
            self.area_sq += l * l * dt;
        }
        self.last_change = self.last_change.max(t);
    }

    /// An accepted packet whose transmission did not start after all (the run ended, or the
    /// link failed, first): it leaves `departures`, `bytes_sent` and, if corrupted, `errors`.
    fn take_back(&mut self, w: &Waiting) {
        self.departures -= 1;
        self.bytes_sent -= w.bytes as u64;
        self.errors -= w.corrupted as u64;
    }

    /// Time-weighted mean and standard deviation of the waiting-queue length over [0, end].
    pub fn mean_std(&self, end: Nanos) -> (f64, f64) {
        if end == 0 {
            return (0.0, 0.0);
        }
        let mean = self.area / end as f64;
        let var = (self.area_sq / end as f64 - mean * mean).max(0.0);
        (mean, var.sqrt())
    }
}

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
/// pipe, its tail's arrival time, the pending delivery and the flags; the rest (RED state,
/// error models, the delay schedule, sampling, the configuration) is read only on its own
/// paths. So a packet that finds the queue empty (every hop but a bottleneck's) touches lines
/// 0, 1 and 3, a delivery line 3 alone. To make room, the RED, loss and delay-schedule cases
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
    /// The DropTail limit (`queue`; unused for RED).
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
    /// a constant delay, ties by ns-2's doubles): `RED_QUEUE`, `LOSSY`, `DELAY_VARIES` and
    /// `EXACT_CLOCK` bits, none for a plain channel (`accept`).
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
    /// RED state when the queue is RED (`queue`).
    red: Option<Box<Red>>,
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

/// `Channel::special` bits. The queue is RED (`red`).
const RED_QUEUE: u8 = 1;
/// The direction has a loss pattern or a packet-error model (`pattern`, `errors`).
const LOSSY: u8 = 2;
/// The delay has a schedule (`delay`); else `delay_memo` holds the constant delay.
const DELAY_VARIES: u8 = 4;
/// Same-nanosecond arrivals and transmission starts are not ordered by ns-2's doubles
/// (`run.clock = "exact"`; see `advance_for_arrival`).
const EXACT_CLOCK: u8 = 8;

/// The nanosecond nearest a time on ns-2's double clock (halves up, as `tx_times` rounds;
/// saturating: `Nanos::MAX` for an infinite or absurd time). Adding a half and truncating, not
/// `f64::round`, which is a libm call on baseline x86-64 (9% of the benchmark's time).
///
/// Every time below 2^63 ns (292 years) converts with one signed truncation; `as u64`'s
/// saturating conversion is a 16-instruction sequence on x86-64, on every packet-hop. Both
/// give the same value for every input (a test checks the edges); the rest (negative, NaN,
/// beyond) still saturates through `as`.
///
/// On x86-64 the range test is the conversion's own: `cvttsd2si` gives `i64::MIN` for a
/// NaN or a value beyond an `i64`, and a value in (-1, 0) truncates to 0 as `as` saturates
/// it, so a non-negative result is the answer and anything else goes the slow way: two
/// comparisons fewer per call, two calls per packet-hop.
#[inline]
fn ns_of(clock: f64) -> Nanos {
    let ns = clock * 1e9 + 0.5;
    match truncated(ns) {
        Some(t) => t,
        None => saturating_ns(ns),
    }
}

/// `ns as Nanos` where no saturation is involved: the truncation of an `ns` in (-1, 2^63)
/// (in [0, 2^63) off x86-64); `None` for the rest, which `saturating_ns` converts.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn truncated(ns: f64) -> Option<Nanos> {
    use std::arch::x86_64::{_mm_cvttsd_si64, _mm_set_sd};
    // SAFETY: SSE2, all these need, is part of every x86-64 processor (the target's baseline).
    let t = unsafe { _mm_cvttsd_si64(_mm_set_sd(ns)) };
    (t >= 0).then_some(t as Nanos)
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn truncated(ns: f64) -> Option<Nanos> {
    // SAFETY: `ns` is finite and within [0, 2^63), so its truncation fits an i64.
    (0.0..I64_LIMIT).contains(&ns).then(|| unsafe { ns.to_int_unchecked::<i64>() as Nanos })
}

/// `ns_of` beyond an `i64`: out of line, so that the common case stays one branch and one
/// conversion (inlined, the compiler computed both and picked one, which cost more).
#[cold]
#[inline(never)]
fn saturating_ns(ns: f64) -> Nanos {
    ns as Nanos
}

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

/// When a transmission starts on ns-2's double clock: `arrival.max(busy)`, the later of the
/// packet's arrival and the end of the transmission before it, for clocks that are never NaN
/// (sums of finite non-negative doubles). `f64::max` also picks the other operand of a NaN,
/// which costs x86-64 five more instructions (a NaN mask and a blend) at every packet-hop.
/// The same value for every non-NaN pair, signed zeros included (ties give `arrival`, as
/// the code compiled for `max` does; ns-2's clock never is -0).
#[inline(always)]
fn start_clock_of(arrival: f64, busy: f64) -> f64 {
    debug_assert!(!arrival.is_nan() && !busy.is_nan());
    if busy > arrival {
        busy
    } else {
        arrival
    }
}

/// 2^63 as a double: the first value an `i64` cannot hold.
#[cfg(any(test, not(target_arch = "x86_64")))]
const I64_LIMIT: f64 = 9_223_372_036_854_775_808.0;

/// A packet in the pipe: when it reaches the far node, when its transmission starts, in
/// nanoseconds and on ns-2's double clock (where ns-2 schedules its arrival: see `event`).
#[derive(Clone, Copy, Debug)]
struct Piped {
    at: Nanos,
    start: Nanos,
    start_clock: f64,
    packet: Packet,
}

impl Channel {
    /// Channel number `index` of a run with this `seed` (its random streams, see `queue`).
    pub fn new(from: u32, to: u32, spec: &DirectionSpec, seed: u64, index: usize) -> Self {
        let errors = PacketErrors::new(spec.error_rate, seed, index);
        let pattern = PatternLosses::new(&spec.loss);
        let delay = DelayModel::new(spec.delay, spec.delay_schedule.clone());
        let delay_varies = !delay.points().is_empty();
        let lossy = errors.is_some() || pattern.is_some();
        let red_queue = matches!(spec.queue, QueueSpec::Red(_));
        Channel {
            next_sample: Nanos::MAX,
            busy_until: 0,
            busy_clock: 0.0,
            tx_memo: (0, 0.0),
            // The constant delay (`delays_at`); a schedule's memo is refreshed as it changes.
            delay_memo: (spec.delay, spec.delay as f64 / 1e9),
            tx_memo_bytes: 0,
            limit: match spec.queue {
                QueueSpec::DropTail { limit } => limit,
                QueueSpec::Red(_) => 0,
            },
            waiting: VecDeque::new(),
            stats: QueueStats::default(),
            pipe: VecDeque::new(),
            scheduled_at: 0,
            scheduled_since: NOT_SCHEDULED,
            tail_at: 0,
            to,
            special: if red_queue { RED_QUEUE } else { 0 } | if lossy { LOSSY } else { 0 } | if delay_varies { DELAY_VARIES } else { 0 },
            hands_on: false,
            aqt_enabled: false,
            down: false,
            from,
            can_fail: false,
            bandwidth_bps: spec.bandwidth_bps,
            delay,
            queue: spec.queue.clone(),
            red: match &spec.queue {
                QueueSpec::Red(r) => Some(Box::new(Red::new(r, spec.bandwidth_bps, spec.delay, seed, index))),
                QueueSpec::DropTail { .. } => None,
            },
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

    /// Monitor this queue: record its waiting length at every multiple of `interval` (from
    /// `interval` on).
    ///
    /// The queue samples itself as its own clock passes each sample time, not by a sampling
    /// event, which would see packets an express hop put here ahead of the simulation's clock
    /// (docs/decisions.md, "Queues sample themselves"). Arrivals at one channel come in time
    /// order, so when an arrival later than a sample time comes, the queue holds exactly the
    /// packets of that time: a sample at time T counts every packet that arrived at or
    /// before T and whose transmission starts after T. Nothing a monitor does can change a
    /// result (`monitors_change_no_result` in the tests).
    pub fn start_sampling(&mut self, interval: Nanos) {
        self.sample_interval = interval.max(1);
        self.next_sample = self.sample_interval;
    }

    /// Record the samples due before an arrival (or change) at `now`, if any are.
    #[inline]
    fn sample_up_to(&mut self, now: Nanos) {
        if self.next_sample < now {
            self.sample_before(now);
        }
    }

    /// Record every sample due strictly before `t`.
    #[cold]
    fn sample_before(&mut self, t: Nanos) {
        while self.next_sample < t {
            self.advance(self.next_sample);
            self.samples.push(self.waiting.len() as u64);
            if let Some(red) = self.red.as_deref_mut() {
                red.avg_samples.push(red.avg);
            }
            self.next_sample = self.next_sample.saturating_add(self.sample_interval);
        }
    }

    /// The run stopped at `stop`: the samples at every sample time up to and including `stop`
    /// (a channel whose clock ran ahead of `stop` may have taken later ones; they are cut).
    pub fn finish_sampling(&mut self, stop: Nanos) -> Vec<u64> {
        if self.sample_interval == 0 {
            return Vec::new(); // not monitored
        }
        self.sample_before(stop.saturating_add(1));
        let mut samples = std::mem::take(&mut self.samples);
        samples.truncate((stop / self.sample_interval) as usize);
        samples
    }

    /// A monitored RED queue's average at the sample times of `finish_sampling` (call it
    /// first); `None` for other queues.
    pub fn finish_avg_sampling(&mut self, stop: Nanos) -> Option<Vec<f64>> {
        let red = self.red.as_deref_mut()?;
        let mut avg = std::mem::take(&mut red.avg_samples);
        avg.truncate((stop / self.sample_interval.max(1)) as usize);
        Some(avg)
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
        self.red.as_deref()
    }

    /// The direction has a packet-error model.
    pub fn has_error_model(&self) -> bool {
        self.errors.is_some() || self.pattern.is_some()
    }

    /// RED's decision for an arrival seeing `len` waiting (out of line: DropTail stays lean).
    #[cold]
    fn red_admits(&mut self, now: Nanos, len: u64) -> bool {
        // Idle = nothing waiting and the transmitter free: since its last transmission ended.
        let idle = (len == 0 && self.busy_until <= now).then_some(self.busy_until);
        let red = self.red.as_mut().expect("RED queue has RED state");
        red.arrive(now, len as usize, idle) == Verdict::Accept
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
        let ties_by_clock = special & EXACT_CLOCK == 0;
        self.sample_up_to(now);
        self.advance_for_arrival(special, now, clock, since);
        let len = self.waiting.len() as u64;
        let accept = if special & RED_QUEUE != 0 { self.red_admits(now, len) } else { droptail_admits(len, self.limit) };
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
        let most = if special & RED_QUEUE == 0 { (self.limit as usize).saturating_sub(1) } else { usize::MAX };
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

    /// Put an accepted packet in the pipe: it reaches the far node at `at`, its transmission
    /// starts at `start`. Returns whether it became the head (the pipe was empty, or it
    /// overtook every packet), the only case in which a scheduled delivery may change.
    pub fn push_pipe(&mut self, at: Nanos, start: Nanos, start_clock: f64, packet: Packet) -> bool {
        let piped = Piped { at, start, start_clock, packet };
        if !self.pipe.is_empty() && at < self.tail_at {
            // The delay fell: this packet overtakes earlier ones.
            let pos = self.pipe.partition_point(|q| q.at <= at);
            self.pipe.insert(pos, piped);
            return pos == 0;
        }
        let was_empty = self.pipe.is_empty();
        self.pipe.push_back(piped);
        self.tail_at = at;
        was_empty
    }

    /// A delivery is scheduled for this channel (it may be a superseded one).
    #[inline]
    pub fn is_scheduled(&self) -> bool {
        self.scheduled_since != NOT_SCHEDULED
    }

    /// Ask the cache for what a delivery reads first: line 3 (the pipe, `scheduled`, `to`).
    #[inline]
    pub fn prefetch_delivery(&self) {
        prefetch(std::ptr::addr_of!(self.pipe).cast());
    }

    /// Ask the cache for the waiting packet `WAITING_AHEAD` places behind the first: on a
    /// long queue (a bottleneck's) the next arrivals read the waiting queue's front, a line
    /// written long before and evicted since.
    #[inline]
    pub fn prefetch_waiting(&self) {
        if let Some(w) = self.waiting.get(WAITING_AHEAD) {
            prefetch((w as *const Waiting).cast());
        }
    }

    /// Ask the cache for the pipe's head packet (read from line 3, which should be cached).
    #[inline]
    pub fn prefetch_head(&self) {
        if let Some(q) = self.pipe.front() {
            prefetch((q as *const Piped).cast());
        }
    }

    /// No packet is waiting, in transmission or propagating (`packets` is empty).
    #[inline]
    pub fn pipe_is_empty(&self) -> bool {
        self.pipe.is_empty()
    }

    /// Packets accepted and not yet delivered (waiting, in transmission or propagating).
    pub fn packets(&self) -> impl Iterator<Item = &Packet> {
        self.pipe.iter().map(|q| &q.packet)
    }

    /// The earliest arrival still in the pipe, when that packet's transmission starts (in
    /// nanoseconds and on ns-2's double clock), and its arrival on ns-2's double clock.
    pub fn head_time(&self) -> Option<(Nanos, Nanos, f64, f64)> {
        self.pipe.front().map(|q| (q.at, q.start, q.start_clock, q.packet.clock))
    }

    /// Take the head packet if it arrives at or before `now`.
    pub fn pop_arrived(&mut self, now: Nanos) -> Option<Packet> {
        match self.pipe.front() {
            Some(q) if q.at <= now => {
                let p = q.packet;
                self.pipe.pop_front();
                Some(p)
            }
            _ => None,
        }
    }

    /// The link goes down at `now` (see `Failures` in `sim`): every packet it holds is lost
    /// and handed to `lost`. Those whose transmission had not started (start at or after
    /// `now`: in ns-2 a transmission due exactly at the failure is still queued, its start
    /// event coming after the failure's) are dropped by the queue: they leave `departures`,
    /// `bytes_sent`, `busy_ns` (and `errors` if corrupted) and count in `drops`. Those in
    /// transmission or propagating were transmitted and count in `errors` (lost on the link).
    /// The transmitter stays busy until the aborted transmission would have ended.
    pub fn fail(&mut self, now: Nanos, lost: &mut Vec<Packet>) {
        self.sample_up_to(now);
        self.advance(now.saturating_sub(1));
        self.stats.integrate(self.waiting.len() as u64, now);
        let mut waiting_intact = 0;
        let mut first_start = None;
        while let Some(w) = self.waiting.pop_front() {
            first_start.get_or_insert(w.start);
            let tx = self.tx_time(w.bytes);
            self.stats.take_back(&w);
            self.stats.set_busy_ns(self.stats.busy_ns() - tx as u128);
            self.stats.drops += 1;
            waiting_intact += !w.corrupted as usize;
        }
        if let Some(start) = first_start {
            self.busy_until = start;
            // Its double: the integer end's own (the aborted transmissions' sums are gone; a
            // packet accepted after the repair starts at its own clock unless the link is
            // still busy then, which needs a repair within one transmission).
            self.busy_clock = crate::event::scripted_clock(start);
        }
        self.stats.errors += (self.pipe.len() - waiting_intact) as u64;
        lost.extend(self.pipe.drain(..).map(|q| q.packet));
        self.down = true;
    }

    /// A packet arrives at time `now` while the link is down: counted as an arrival the queue
    /// dropped.
    pub fn refuse(&mut self, now: Nanos) {
        self.sample_up_to(now);
        self.advance(now);
        self.stats.drops += 1;
    }

    /// The run ended at `end`: bring the counters to that moment. The waiting queue drains to
    /// `end` (as `advance`); the packets still waiting then had not started their
    /// transmission, so they leave `departures`, `bytes_sent` and `errors` and make up
    /// `backlog`; `busy_ns` keeps only transmission time up to `end`.
    ///
    /// The tie: a transmission starting exactly at `end` has started. It counts as a
    /// departure with all its bytes and adds no busy time, the rule the queue-length samples
    /// and `mean_len` follow (a packet whose transmission starts at T no longer waits at T),
    /// so `backlog` equals the queue-length sample at `end`.
    ///
    /// A corrupted packet that had not started was not transmitted: it leaves `errors` with
    /// `departures` (errors stay a part of departures). Its fate was drawn at acceptance and
    /// stays drawn, so the random streams are untouched.
    ///
    /// Busy time. Every accepted packet was accepted at or before `end` (no event or express
    /// hop beyond the run's end is processed), so from `end` the link is busy without a gap
    /// until `busy_until`: the time after `end` is exactly `busy_until - end`.
    ///
    /// Call once, after the last arrival; a second call changes nothing.
    pub fn finish(&mut self, end: Nanos) {
        self.advance(end);
        for w in self.waiting.drain(..) {
            self.stats.take_back(&w);
            self.stats.backlog += 1;
        }
        let overhang = self.busy_until.saturating_sub(end);
        self.stats.set_busy_ns(self.stats.busy_ns().saturating_sub(overhang as u128));
        self.busy_until = self.busy_until.min(end);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkt(size: u32) -> Packet {
        Packet { seqno: 0, flow: 0, size, dst: 1, kind: crate::packet::Kind::Data, probe: false, aqt: 0, aqt_echo: 0, clock: 0.0 }
    }

    #[test]
    fn nanoseconds_of_a_double_are_those_of_the_saturating_conversion() {
        let edges = [
            0.0, -0.0, 1e-10, 4.9e-10, 5e-10, 0.187047326, 200.0, 1e9, 9.223372036854775e9,
            9.223372036854776e9, 1e10, 1e300, -1e-10, -9e-10, -1.5e-9, -1.0, f64::INFINITY, f64::NEG_INFINITY,
            f64::NAN,
        ];
        for clock in edges {
            assert_eq!(ns_of(clock), (clock * 1e9 + 0.5) as Nanos, "clock {clock}");
        }
        assert_eq!(ns_of(f64::NAN), 0);
        assert_eq!(ns_of(1e300), Nanos::MAX);
        // The last double below 2^63 ns and the first at it.
        let below = f64::from_bits(I64_LIMIT.to_bits() - 1);
        assert_eq!(ns_of((below - 0.5) / 1e9), ((below - 0.5) / 1e9 * 1e9 + 0.5) as Nanos);
    }

    /// A packet arriving at `now`, its ns-2 double consistent with it (as in a run).
    fn pkt_at(size: u32, now: Nanos) -> Packet {
        Packet { clock: now as f64 / 1e9, ..pkt(size) }
    }

    fn chan(limit: u32) -> Channel {
        Channel::new(
            0,
            1,
            &DirectionSpec {
                bandwidth_bps: 1e6,
                delay: 10_000_000,
                delay_schedule: vec![(1_000_000_000, 100_000_000)],
                queue: QueueSpec::DropTail { limit },
                error_rate: 0.0,
                loss: None,
            },
            1,
            0,
        )
    }

    #[test]
    fn droptail_limit_counts_the_packet_in_transmission() {
        // limit 3: one transmitting + 2 waiting; the fourth back-to-back arrival drops.
        let mut c = chan(3);
        let got: Vec<bool> = (0..4).map(|i| matches!({ let _ = i; c.admit(0, pkt_at(1000, 0)) }, Admission::Accepted { .. })).collect();
        assert_eq!(got, vec![true, true, true, false]);
        assert_eq!(c.queue_len(), 2);
    }

    #[test]
    fn a_droptail_waiting_ring_grows_no_larger_than_the_queue_can_hold() {
        // Limit 1,000: at most 999 wait. Doubling alone would reach a 1,024-entry ring.
        let mut c = chan(1000);
        for _ in 0..2000 {
            c.admit(0, pkt_at(1000, 0));
        }
        assert_eq!(c.queue_len(), 999);
        assert_eq!(c.waiting.capacity(), 999);
        // Below the limit it still doubles: 5 waiting packets in a ring of 8.
        let mut small = chan(1000);
        for _ in 0..6 {
            small.admit(0, pkt_at(1000, 0));
        }
        assert_eq!((small.queue_len(), small.waiting.capacity()), (5, 8));
    }

    #[test]
    fn arrival_time_is_start_plus_transmission_plus_delay() {
        let mut c = chan(50);
        // 1000 bytes at 1 Mbps = 8 ms; delay 10 ms.
        assert_eq!(times(c.admit(0, pkt_at(1000, 0))), Some((18_000_000, 0)));
        // Second waits for the first: starts at 8 ms.
        assert_eq!(times(c.admit(0, pkt_at(1000, 0))), Some((26_000_000, 8_000_000)));
    }

    #[test]
    fn arrival_clock_is_ns2s_double_sum() {
        // ns-2 (LinkDelay::recv): a transmission starts at the arrival when the link is
        // free, else at the previous one's end (the queue's resume event, start + txt); the
        // far node sees it at start + (txt + delay), each step rounded to a double.
        let mut c = chan(50);
        let txt = 8.0 * 1000.0 / 1e6;
        let delay = 10_000_000u64 as f64 / 1e9;
        // An arrival clock at which the order of the sums matters for both packets.
        let arrival = 0.159_685_4;
        let first = c.admit(159_685_400, Packet { clock: arrival, ..pkt(1000) });
        let second = c.admit(159_685_400, Packet { clock: arrival, ..pkt(1000) });
        let clock = |a: Admission| match a {
            Admission::Accepted { clock, .. } => clock,
            _ => panic!("accepted"),
        };
        assert_eq!(clock(first), arrival + (txt + delay));
        assert_eq!(clock(second), (arrival + txt) + (txt + delay));
        // Summed in another order the doubles differ: the order is part of the rule.
        assert_ne!(clock(first), (arrival + txt) + delay);
        assert_ne!(clock(second), ((arrival + txt) + txt) + delay);
        // A packet arriving after the link fell idle starts at its own clock, and takes the
        // delay in force then (100 ms from 1 s on) as its double.
        let late = 2.000_000_000_000_000_4;
        let new_delay = 100_000_000u64 as f64 / 1e9;
        assert_eq!(clock(c.admit(2_000_000_000, Packet { clock: late, ..pkt(1000) })), late + (txt + new_delay));
    }

    #[test]
    fn an_arrival_whose_double_precedes_the_transmission_start_finds_the_queue_full() {
        // Limit 2: one packet in transmission, one waiting. A (0-8 ms) and B (waits, starts
        // at 8 ms) fill it; C arrives at exactly 8 ms. In ns-2 B starts at the queue's resume
        // event, double 0.008 (0 + txt); if C's double is one unit in the last place below,
        // C runs first, finds B still waiting and is dropped; at or above, B has left.
        let c_at = |clock: f64, ties_by_clock: bool| {
            let mut c = chan(2);
            c.set_ties_by_clock(ties_by_clock);
            c.admit(0, pkt_at(1000, 0));
            c.admit(0, pkt_at(1000, 0));
            c.admit(8_000_000, Packet { clock, ..pkt(1000) })
        };
        let resume: f64 = 8.0 * 1000.0 / 1e6;
        let below = f64::from_bits(resume.to_bits() - 1);
        assert_eq!(c_at(below, true), Admission::Dropped);
        assert!(matches!(c_at(resume, true), Admission::Accepted { .. }));
        assert!(matches!(c_at(f64::from_bits(resume.to_bits() + 1), true), Admission::Accepted { .. }));
        // Without ns-2's doubles (run.clock = "exact") the transmission due now has started.
        assert!(matches!(c_at(below, false), Admission::Accepted { .. }));
    }

    #[test]
    fn delay_in_force_at_transmission_start_applies() {
        let mut c = chan(50);
        // Starts at 1.5 s, after the change to 100 ms.
        assert_eq!(times(c.admit(1_500_000_000, pkt_at(1000, 1_500_000_000))), Some((1_608_000_000, 0)));
    }

    /// An admission's arrival time and queueing delay (None: not accepted).
    fn times(a: Admission) -> Option<(Nanos, Nanos)> {
        match a {
            Admission::Accepted { arrives_at, queued, .. } => Some((arrives_at, queued)),
            _ => None,
        }
    }

    fn chan_with(bandwidth_bps: f64, delay: Nanos) -> Channel {
        let spec = DirectionSpec { bandwidth_bps, delay, delay_schedule: vec![], queue: QueueSpec::DropTail { limit: 50 }, error_rate: 0.0, loss: None };
        Channel::new(0, 1, &spec, 1, 0)
    }

    #[test]
    fn a_transmission_takes_at_least_one_nanosecond() {
        // 41 bytes at 1 Pbit/s would round to 0 ns.
        let mut c = chan_with(1e15, 0);
        assert_eq!(c.tx_time(41), 1);
        assert_eq!(times(c.admit(5, pkt_at(41, 5))), Some((6, 0)));
        assert_eq!(times(c.admit(5, pkt_at(41, 5))), Some((7, 1)));
        // Rounding to the nearest nanosecond is unchanged above 1 ns: 1040 bytes at 10 Mbit/s.
        assert_eq!(chan_with(10e6, 0).tx_time(1040), 832_000);
    }

    #[test]
    fn a_huge_delay_saturates_instead_of_wrapping_to_zero() {
        // About 584 years: start + tx + delay exceeds u64.
        let mut c = chan_with(1e6, Nanos::MAX - 10);
        let Admission::Accepted { arrives_at, .. } = c.admit(1_000_000_000, pkt_at(1000, 1_000_000_000)) else { panic!("accepted") };
        assert_eq!(arrives_at, Nanos::MAX);
        // A zero bandwidth transmits forever; the next packet waits "forever" too.
        let mut z = chan_with(0.0, 0);
        let Admission::Accepted { arrives_at, .. } = z.admit(1, pkt_at(1000, 1)) else { panic!("accepted") };
        assert_eq!(arrives_at, Nanos::MAX);
        assert!(matches!(z.admit(2, pkt_at(1000, 2)), Admission::Accepted { arrives_at: Nanos::MAX, .. }));
    }

    #[test]
    fn a_monitored_queue_samples_its_length_as_its_clock_passes_each_sample_time() {
        let mut c = chan(50);
        c.start_sampling(5_000_000);
        // 1000 bytes take 8 ms: four at 0 ms transmit 0-8, 8-16, 16-24 and 24-32 ms.
        for _ in 0..4 {
            c.admit(0, pkt_at(1000, 0));
        }
        // Nothing is sampled until an arrival later than a sample time comes.
        assert!(c.samples.is_empty());
        // At 30 ms: the samples at 5-25 ms are taken first, without this packet.
        c.admit(30_000_000, pkt_at(1000, 30_000_000));
        assert_eq!(c.samples, vec![3, 2, 2, 1, 0]);
        // The sample at 30 ms counts the packet that arrived then (it waits until 32 ms).
        assert_eq!(c.finish_sampling(30_000_000), vec![3, 2, 2, 1, 0, 1]);
    }

    #[test]
    fn samples_taken_ahead_of_where_the_run_stopped_are_cut() {
        let mut c = chan(50);
        c.start_sampling(5_000_000);
        c.admit(0, pkt_at(1000, 0));
        c.admit(0, pkt_at(1000, 0));
        c.admit(23_000_000, pkt_at(1000, 23_000_000)); // an express hop, ahead of the run's clock
        assert_eq!(c.finish_sampling(12_000_000), vec![1, 0]);
    }

    /// Three 1000-byte packets at 0 on an idle 1 Mbit/s link: each takes 8 ms, so they
    /// transmit 0-8, 8-16 and 16-24 ms.
    fn three_at_once(error_rate: f64) -> Channel {
        let spec = DirectionSpec { bandwidth_bps: 1e6, delay: 0, delay_schedule: vec![], queue: QueueSpec::DropTail { limit: 50 }, error_rate, loss: None };
        let mut c = Channel::new(0, 1, &spec, 1, 0);
        for _ in 0..3 {
            c.admit(0, pkt_at(1000, 0));
        }
        c
    }

    #[test]
    fn a_run_ending_mid_transmission_counts_the_started_packets_and_the_busy_time_within_it() {
        // Stopped at 12 ms, half-way through the second packet: the third has not started.
        let mut c = three_at_once(0.0);
        c.finish(12_000_000);
        let s = &c.stats;
        assert_eq!((s.arrivals(), s.drops, s.departures, s.backlog), (3, 0, 2, 1));
        assert_eq!(s.bytes_sent, 2000);
        assert_eq!(s.busy_ns(), 8_000_000 + 4_000_000); // the first whole, the elapsed half of the second
        // Finishing again changes nothing.
        c.finish(12_000_000);
        assert_eq!((c.stats.departures, c.stats.backlog, c.stats.bytes_sent, c.stats.busy_ns()), (2, 1, 2000, 12_000_000));
    }

    #[test]
    fn a_transmission_starting_exactly_at_the_end_has_started() {
        // The third packet starts at 16 ms, the end: a departure with its bytes and no busy time.
        let mut c = three_at_once(0.0);
        c.finish(16_000_000);
        let s = &c.stats;
        assert_eq!((s.departures, s.backlog, s.bytes_sent, s.busy_ns()), (3, 0, 3000, 16_000_000));
        // One nanosecond earlier it had not.
        let mut c = three_at_once(0.0);
        c.finish(16_000_000 - 1);
        assert_eq!((c.stats.departures, c.stats.backlog, c.stats.bytes_sent), (2, 1, 2000));
    }

    #[test]
    fn a_run_ending_after_every_transmission_keeps_all_counts() {
        let mut c = three_at_once(0.0);
        c.finish(30_000_000);
        let s = &c.stats;
        assert_eq!((s.departures, s.backlog, s.bytes_sent, s.busy_ns()), (3, 0, 3000, 24_000_000));
    }

    /// 1000-, 500- and 1500-byte packets at 0 on a 1 Mbit/s link whose delay changes: they
    /// transmit 0-8, 8-12 and 12-24 ms.
    fn three_sizes(delay_schedule: Vec<(Nanos, Nanos)>) -> Channel {
        let spec = DirectionSpec { bandwidth_bps: 1e6, delay: 100_000_000, delay_schedule, queue: QueueSpec::DropTail { limit: 50 }, error_rate: 0.0, loss: None };
        let mut c = Channel::new(0, 1, &spec, 1, 0);
        for size in [1000, 500, 1500] {
            c.admit(0, pkt_at(size, 0));
        }
        c
    }

    #[test]
    fn the_bytes_taken_back_are_those_of_the_packets_still_waiting_even_when_one_overtook_others() {
        // The delay falls to 1 ms at 10 ms: the third packet (start 12 ms) arrives at 25 ms,
        // ahead of the first two (108 and 112 ms), so it heads the pipe.
        let mut c = three_sizes(vec![(10_000_000, 1_000_000)]);
        assert_eq!(c.head_time().map(|(t, start, _, _)| (t, start)), Some((25_000_000, 12_000_000)));
        c.finish(10_000_000);
        assert_eq!((c.stats.departures, c.stats.backlog, c.stats.bytes_sent), (2, 1, 1500));
        let mut c = three_sizes(vec![(10_000_000, 1_000_000)]);
        c.finish(7_000_000);
        assert_eq!((c.stats.departures, c.stats.backlog, c.stats.bytes_sent), (1, 2, 1000));
        assert_eq!(c.stats.busy_ns(), 7_000_000);
    }

    #[test]
    fn a_waiting_packet_arriving_with_one_already_sent_is_told_apart_by_acceptance_order() {
        // From 5 ms the delay is 96 ms: the second packet (start 8 ms, sent by 12 ms) arrives at
        // 108 ms, with the first (sent 0-8 ms, 100 ms delay).
        let mut c = three_sizes(vec![(5_000_000, 96_000_000)]);
        let arrivals: Vec<(Nanos, u32)> = c.pipe.iter().map(|q| (q.at, q.packet.size)).collect();
        assert_eq!(arrivals, vec![(108_000_000, 1000), (108_000_000, 500), (120_000_000, 1500)]);
        c.finish(7_000_000);
        assert_eq!((c.stats.departures, c.stats.backlog, c.stats.bytes_sent), (1, 2, 1000));
    }

    #[test]
    fn finishing_counts_exactly_the_packets_whose_transmission_started() {
        // Mixed sizes, bursts, a delay that rises and falls, half the packets corrupted: the
        // counts after `finish` equal those taken from each packet's own start time.
        for end_ms in [0u64, 3, 40, 95, 161, 250, 400] {
            let end = end_ms * 1_000_000;
            let spec = DirectionSpec {
                bandwidth_bps: 1e6,
                delay: 30_000_000,
                delay_schedule: vec![(50_000_000, 90_000_000), (120_000_000, 2_000_000), (200_000_000, 40_000_000)],
                queue: QueueSpec::DropTail { limit: 20 },
                error_rate: 0.5,
                loss: None,
            };
            let mut c = Channel::new(0, 1, &spec, 7, 0);
            let (mut started, mut bytes, mut errors, mut arrivals) = (0, 0, 0, 0);
            for i in 0..120u64 {
                let now = (i / 6) * 15_000_000; // six at a time, every 15 ms
                if now > end {
                    break;
                }
                let size = [40, 1040, 576, 1500][(i % 4) as usize];
                arrivals += 1;
                let start = match c.admit(now, pkt_at(size, now)) {
                    Admission::Accepted { queued, .. } => Some((now + queued, false)),
                    Admission::Corrupted => Some((now.max(c.busy_until - c.tx_time(size)), true)),
                    Admission::Dropped => None,
                };
                if let Some((start, corrupted)) = start {
                    if start <= end {
                        started += 1;
                        bytes += size as u64;
                        errors += corrupted as u64;
                    }
                }
            }
            c.finish(end);
            let s = &c.stats;
            assert_eq!((s.departures, s.bytes_sent, s.errors), (started, bytes, errors), "end {end_ms} ms");
            assert_eq!(s.arrivals(), arrivals);
            assert_eq!(s.arrivals(), s.departures + s.drops + s.backlog, "end {end_ms} ms");
        }
    }

    #[test]
    fn a_corrupted_packet_that_had_not_started_is_no_error() {
        // Every packet is corrupted; at 12 ms two have been transmitted (and lost).
        let mut c = three_at_once(1.0);
        assert_eq!(c.stats.errors, 3);
        c.finish(12_000_000);
        assert_eq!((c.stats.departures, c.stats.errors, c.stats.backlog), (2, 2, 1));
    }

    #[test]
    fn mean_queue_length_is_time_weighted() {
        let mut c = chan(50);
        c.admit(0, pkt_at(1000, 0)); // transmits 0-8 ms
        c.admit(0, pkt_at(1000, 0)); // waits 0-8 ms
        c.advance(16_000_000);
        let (mean, _) = c.stats.mean_std(16_000_000);
        assert!((mean - 0.5).abs() < 1e-12, "{mean}");
    }

    #[test]
    fn a_loss_pattern_counts_the_transmitted_packets_only_and_loses_the_listed_ones() {
        // limit 3: of five back-to-back packets the queue takes three (transmitted 0, 1, 2) and
        // drops two, which the pattern never sees; the next packet, at 1 s, is transmitted
        // packet 3. The list [1, 3] loses the second packet sent and the one at 1 s.
        let loss = crate::queue::LossPattern::List { packets: vec![1, 3].into() };
        let spec = DirectionSpec { bandwidth_bps: 1e6, delay: 0, delay_schedule: vec![], queue: QueueSpec::DropTail { limit: 3 }, error_rate: 0.0, loss: Some(loss) };
        let mut c = Channel::new(0, 1, &spec, 1, 0);
        let mut admissions: Vec<Admission> = (0..5).map(|_| c.admit(0, pkt_at(1000, 0))).collect();
        admissions.push(c.admit(1_000_000_000, pkt_at(1000, 1_000_000_000)));
        let fates: Vec<&str> = admissions
            .into_iter()
            .map(|a| match a {
                Admission::Accepted { .. } => "sent",
                Admission::Dropped => "dropped",
                Admission::Corrupted => "lost",
            })
            .collect();
        assert_eq!(fates, vec!["sent", "lost", "sent", "dropped", "dropped", "lost"]);
        assert!(c.has_error_model());
        assert_eq!((c.stats.arrivals(), c.stats.drops, c.stats.departures, c.stats.errors), (6, 2, 4, 2));
    }

    #[test]
    fn a_pattern_and_an_error_rate_both_apply_and_a_packet_is_lost_once() {
        // every = 2 from 0 loses the even-numbered packets; an error rate just below 1 loses the
        // rest (its draws are made for the odd ones only): every packet is lost, once each.
        let loss = crate::queue::LossPattern::Periodic { every: 2, first: 0, burst: 1 };
        let spec = DirectionSpec { bandwidth_bps: 1e6, delay: 0, delay_schedule: vec![], queue: QueueSpec::DropTail { limit: 50 }, error_rate: 0.999_999_999, loss: Some(loss) };
        let mut c = Channel::new(0, 1, &spec, 1, 0);
        for i in 0..10u64 {
            assert_eq!(c.admit(i * 10_000_000, pkt_at(1000, i * 10_000_000)), Admission::Corrupted);
        }
        assert_eq!((c.stats.departures, c.stats.errors), (10, 10));
    }
}
