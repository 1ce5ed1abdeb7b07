//! The pending events, in a *radix heap* (Ahuja, Mehlhorn, Orlin and Tarjan, 1990) that pops
//! them in ns-2's order (`order`). It relies on the simulation being monotone: nothing is
//! scheduled before the last event popped. Bucket 0 holds the events at `last`; every other event sits at the level of the highest bit in
//! which its time differs from `last` (five bits a level), in the bucket of its time's
//! bits there (`level_and_digit`). Scheduling appends to a bucket; popping reads bucket 0,
//! and when that is empty takes the lowest non-empty bucket, makes its earliest time the new
//! `last` and spreads its events over the lower levels (all empty at that moment; the other
//! buckets of its level and the higher levels stay as they are, since the new `last` agrees
//! with the old one above the level and every such event differs from both at or above it).
//! An event only ever moves to lower levels or bucket 0, so it moves at most 13 times, in
//! practice a few.
//!
//! Scheduling order comes free: a bucket only ever gets events appended in scheduling order,
//! or the whole of one higher bucket's events, in their order, while it is empty; so every
//! bucket is in scheduling order. Bucket 0 (all at one time) is the exception that keeps the
//! tie order: it is stably sorted by (double, `since`, code) when a refill fills it,
//! and an event scheduled into it goes after every event whose key is at most its own
//! (almost always at the end: an event scheduled at the current time for the current time
//! has the latest `since`). No sequence number is stored, so there is none to run out (the old heap
//! renumbered its 40-bit one).
//!
//! Why a radix heap: scheduling is an append and a pop mostly a short sequential scan of a
//! small bucket, where a binary or d-ary heap's compare chains mispredict and its sift-downs
//! miss the cache at many flows. It is within noise of the best heap tried at 50 flows and the
//! fastest from 5,000 flows on (docs/decisions.md, "Pending events in a radix heap";
//! measurements in docs/performance.md, "The event queue").
//!
//! Should anything ever be scheduled before `last` (a bug elsewhere: time would run
//! backwards; no scenario of the test suite does, checked by making this path panic), it
//! goes to a small binary heap that pops first, ordered by (time, scheduling order): exactly
//! where the previous heap put it, so even then the pop order is unchanged.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use vegaslab_cc::Nanos;

use super::order::{reorder_ties, scripted_clock, tie_key, EarlyKey, Entry, Moment};
use super::Event;

/// Bits of time a bucket level covers: level `l` holds the events whose time first differs
/// from `last` in bits `5l .. 5l + 4` (the top level, 12, in bits 60-63 only: 16 of its 32
/// buckets are never used), one bucket per value of those bits (its digit).
///
/// 32 buckets a level, not one bucket a bit: a refill spreads an event over at most one
/// level per five bits between its time and `last`, so with many pending events it moves
/// fewer times (docs/decisions.md, "Five bits a level in the event queue"). `Occupied` holds
/// a level's digits, and the levels, in `u32` bits (digits of more than 5 bits, or of 1 bit
/// with its 64 levels, would overflow its shifts: a panic in the tests' debug build).
const DIGIT_BITS: u32 = 5;
const DIGITS: usize = 1 << DIGIT_BITS;
const LEVELS: usize = u64::BITS.div_ceil(DIGIT_BITS) as usize;
/// Bucket 0 (events at `last`), then `DIGITS` buckets a level.
const BUCKETS: usize = 1 + LEVELS * DIGITS;

/// The level and digit of the bucket of an event at `time` when the last bucket minimum was
/// `last` (`time > last`): the level of the highest bit in which they differ, and `time`'s
/// bits at that level. An event's digit exceeds `last`'s there, so within a level, and from
/// level to level, lower buckets hold earlier events.
#[inline(always)]
fn level_and_digit(time: Nanos, last: Nanos) -> (usize, usize) {
    debug_assert!(time > last);
    let level = (u64::BITS - 1 - (time ^ last).leading_zeros()) / DIGIT_BITS;
    (level as usize, (time >> (level * DIGIT_BITS)) as usize & (DIGITS - 1))
}

/// The index in `EventQueue::buckets` of a level's digit.
#[inline(always)]
fn bucket_index((level, digit): (usize, usize)) -> usize {
    1 + level * DIGITS + digit
}

/// Which buckets but bucket 0 hold events: a bit per level that has any, and each level's
/// bit per digit.
#[derive(Default)]
struct Occupied {
    levels: u32,
    digits: [u32; LEVELS],
}

impl Occupied {
    /// Mark a level's digit occupied; returns its bucket's index (`bucket_index`).
    #[inline(always)]
    fn occupy(&mut self, (level, digit): (usize, usize)) -> usize {
        self.digits[level] |= 1 << digit;
        self.levels |= 1 << level;
        bucket_index((level, digit))
    }

    #[inline(always)]
    fn is_empty(&self) -> bool {
        self.levels == 0
    }

    /// The lowest occupied bucket's index (there is one), taken out of the set.
    #[inline(always)]
    fn take_lowest(&mut self) -> usize {
        let level = self.levels.trailing_zeros() as usize;
        let digits = self.digits[level];
        let rest = digits & (digits - 1);
        self.digits[level] = rest;
        if rest == 0 {
            self.levels &= !(1 << level);
        }
        bucket_index((level, digits.trailing_zeros() as usize))
    }
}

/// `v.push(e)` for an entry built from its fields (`schedule_since`), stored field by field.
/// `Vec::push` may call its allocator, so the compiler built the entry on the stack and
/// copied it over in 16-byte loads, each spanning two narrower stores the processor cannot
/// forward from: perf put 66% of `schedule_since`'s samples (5% of the benchmark's, 13% at
/// 5,000 flows) on that load. A plain write of `e` here did the same.
#[inline(always)]
fn push_fields(v: &mut Vec<Entry>, e: Entry) {
    if v.len() == v.capacity() {
        return push_grown_fields(v, e.at, e.code, e.clock, e.since);
    }
    // SAFETY: the capacity exceeds the length (just ensured), so slot `len` is allocated
    // and unused; each field is written before the length covers the slot.
    unsafe {
        let slot = v.as_mut_ptr().add(v.len());
        std::ptr::addr_of_mut!((*slot).at).write(e.at);
        std::ptr::addr_of_mut!((*slot).code).write(e.code);
        std::ptr::addr_of_mut!((*slot).clock).write(e.clock);
        std::ptr::addr_of_mut!((*slot).since).write(e.since);
        v.set_len(v.len() + 1);
    }
}

/// `v.push(e)` for an entry read from another bucket (`refill`): copied as read, in 16-byte
/// halves that `pop`'s 16-byte load can forward from (written field by field, as
/// `push_fields` does, that load put 20% of `run`'s samples at 5,000 flows on itself).
#[inline(always)]
fn push_entry(v: &mut Vec<Entry>, e: &Entry) {
    if v.len() == v.capacity() {
        return push_grown(v, e);
    }
    // SAFETY: as in `push_fields`.
    unsafe {
        v.as_mut_ptr().add(v.len()).write(*e);
        v.set_len(v.len() + 1);
    }
}

/// `push_fields` or `push_entry` into a full vector: out of line with the growth, so that
/// the callers' common case keeps nothing live across a call (`schedule_since`).
#[cold]
#[inline(never)]
fn push_grown(v: &mut Vec<Entry>, e: &Entry) {
    v.push(*e);
}

/// `push_grown` for `push_fields`, given the entry's fields: in registers, not built on the
/// caller's stack in case the vector is full.
#[cold]
#[inline(never)]
fn push_grown_fields(v: &mut Vec<Entry>, at: Nanos, code: u32, clock: u64, since: u64) {
    v.push(Entry { at, code, clock, since });
}

/// Pending events in a radix heap; see the module documentation.
pub struct EventQueue {
    /// No bucketed event is earlier than this: the time bucket 0 holds.
    last: Nanos,
    /// The events of bucket 0 and of each level's digits (`bucket_index`), each in
    /// scheduling order. Bucket 0 is read from `head` on and cleared when read to the end.
    /// In place (10 KB), not behind a pointer of its own: one load less per bucket reached.
    buckets: [Vec<Entry>; BUCKETS],
    head: usize,
    /// Which buckets but bucket 0 are not empty.
    occupied: Occupied,
    len: usize,
    /// Events scheduled before `last` (never, in a correct simulation), keyed by (time,
    /// earlier `since` first, scheduling number); they pop before every bucketed event.
    early: BinaryHeap<Reverse<EarlyKey>>,
    early_seq: u64,
    /// Events that ns-2's order put before an event scheduled earlier here (diagnostics).
    reordered: u64,
    /// The event popped last (`Moment`; `set_instant` moves it along an express hop).
    instant: Moment,
    /// `run.tie_order = "shuffled"`: the key of `shuffled_rank` (`None`: scheduling order).
    shuffle: Option<u64>,
    /// Track `ahead` (`track_ahead`); off, refills do only what ordering needs.
    hints: bool,
    /// The code of the earliest event the last refill moved to a lower bucket (`NO_HINT`:
    /// none): after bucket 0's, the next to pop unless something earlier is scheduled
    /// meanwhile. Only a hint (`next_code`).
    ahead: u32,
}

/// The code of no event (`ahead`, `next_code`): codes have `EVENT_BITS` bits.
pub const NO_HINT: u32 = u32::MAX;

impl Default for EventQueue {
    fn default() -> Self {
        EventQueue {
            last: 0,
            buckets: std::array::from_fn(|_| Vec::new()),
            head: 0,
            occupied: Occupied::default(),
            len: 0,
            early: BinaryHeap::new(),
            early_seq: 0,
            reordered: 0,
            instant: Moment::default(),
            shuffle: None,
            hints: false,
            ahead: NO_HINT,
        }
    }
}

/// The index of the earliest event of a non-empty bucket: the first at the earliest time,
/// that is the first scheduled among those.
#[inline(always)]
fn index_of_earliest(bucket: &[Entry]) -> usize {
    let (mut first, mut earliest) = (0, bucket[0].at);
    for (i, e) in bucket.iter().enumerate().skip(1) {
        if e.at < earliest {
            (first, earliest) = (i, e.at);
        }
    }
    first
}

impl EventQueue {
    /// A queue that orders fully tied events by `shuffled_rank` with `key` (`run.tie_order =
    /// "shuffled"`) instead of by scheduling order.
    pub fn with_shuffled_ties(key: u64) -> Self {
        EventQueue { shuffle: Some(key), ..EventQueue::default() }
    }

    /// Schedule `event` at `at`; `since` is the instant ns-2 would have scheduled it (see the
    /// module documentation; the current time unless the event stands for one ns-2 schedules
    /// earlier). Its ns-2 double is `at`'s own (`scripted_clock`): for events at times the
    /// scenario wrote, as ns-2 reads them from the bridge's script.
    #[inline]
    pub fn schedule(&mut self, at: Nanos, since: Nanos, event: Event) {
        self.schedule_clocked(at, since, scripted_clock(at), event)
    }

    /// [`EventQueue::schedule`] with the double time ns-2 would give the event (`clock`, in
    /// seconds, non-negative; see `scenario::SenderClock`), which orders it among the events
    /// at the same nanosecond. `since`'s double is the current instant's (`set_instant`) when
    /// `since` is the current time, else `since`'s own (`scripted_clock`).
    #[inline]
    pub fn schedule_clocked(&mut self, at: Nanos, since: Nanos, clock: f64, event: Event) {
        let since_clock = if since == self.instant.at { self.instant.clock } else { scripted_clock(since) };
        self.schedule_since(at, since_clock, clock, event)
    }

    /// [`EventQueue::schedule_clocked`] with the double of the instant ns-2 would have
    /// scheduled it given (`since_clock`): a delivery's transmission start. Always inlined:
    /// with the bucket's level and digit to find, the compiler stopped inlining it into
    /// `Simulator::schedule_channel` (benchmark 50 s slice +1% instructions).
    #[inline(always)]
    pub fn schedule_since(&mut self, at: Nanos, since_clock: f64, clock: f64, event: Event) {
        debug_assert!(clock >= 0.0, "negative clock {clock}");
        self.len += 1;
        let entry = Entry { at, code: event.encode(), clock: clock.to_bits(), since: since_clock.max(0.0).to_bits() };
        if at > self.last {
            // The bit first, so that a full bucket's growth is the last thing done: a tail
            // call, with nothing to keep for after it (`Simulator::schedule_channel`).
            let b = self.occupied.occupy(level_and_digit(at, self.last));
            push_fields(&mut self.buckets[b], entry);
        } else {
            self.schedule_at_or_before_last(at, entry.code, entry.clock, entry.since);
        }
    }

    /// `schedule_since` for an event at `last` (bucket 0: one in 260,000 on the benchmark) or,
    /// never in a correct simulation, before it.
    ///
    /// Out of line, as is a full bucket's growth (`push_grown`), so that the common case, an
    /// append to a later bucket, is inlined into its callers (`Simulator::schedule_channel`)
    /// with no entry built on the stack for the rare paths and no call of its own.
    #[cold]
    #[inline(never)]
    fn schedule_at_or_before_last(&mut self, at: Nanos, code: u32, clock: u64, since: u64) {
        let entry = Entry { at, code, clock, since };
        if entry.at < self.last {
            self.schedule_early(entry);
        } else {
            self.schedule_now(entry);
        }
    }

    /// Into bucket 0 (at `last`), after every pending event there whose key (`tie_key`) is
    /// at most its own.
    #[inline]
    fn schedule_now(&mut self, entry: Entry) {
        let zero = &mut self.buckets[0];
        match zero.last() {
            Some(tail) if zero.len() > self.head && tie_key(tail, self.shuffle) > tie_key(&entry, self.shuffle) => {
                let key = tie_key(&entry, self.shuffle);
                let pos = self.head + zero[self.head..].partition_point(|e| tie_key(e, self.shuffle) <= key);
                zero.insert(pos, entry);
                self.reordered += 1;
            }
            _ => push_fields(zero, entry),
        }
    }

    #[cold]
    fn schedule_early(&mut self, e: Entry) {
        self.early_seq += 1;
        self.early.push(Reverse((e.at, e.clock, e.since, e.code, self.early_seq)));
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(Nanos, Event)> {
        if !self.early.is_empty() {
            return self.pop_early();
        }
        let e = if !self.buckets[0].is_empty() {
            self.pop_zero()
        } else if self.occupied.is_empty() {
            return None;
        } else {
            match self.refill() {
                Some(lone) => lone,
                None => self.pop_zero(),
            }
        };
        self.instant = Moment { at: e.at, clock: f64::from_bits(e.clock), since: f64::from_bits(e.since) };
        self.len -= 1;
        Some((e.at, Event::decode(e.code)))
    }

    /// Take bucket 0's next event (there is one).
    #[inline]
    fn pop_zero(&mut self) -> Entry {
        let zero = &mut self.buckets[0];
        let e = zero[self.head];
        self.head += 1;
        if self.head == zero.len() {
            zero.clear();
            self.head = 0;
        }
        e
    }

    #[cold]
    fn pop_early(&mut self) -> Option<(Nanos, Event)> {
        let Reverse((at, clock, since, code, _)) = self.early.pop()?;
        self.instant = Moment { at, clock: f64::from_bits(clock), since: f64::from_bits(since) };
        self.len -= 1;
        Some((at, Event::decode(code)))
    }

    /// The current instant: the event popped last, or the delivery an express hop stands for
    /// while it processes a packet ahead of the clock.
    #[inline]
    pub fn instant(&self) -> Moment {
        self.instant
    }

    /// Move the current instant (an express hop processes a packet at its arrival, ahead of
    /// the clock: what it schedules is scheduled at that time and double, as the delivery
    /// event it stands for would have); `instant` gives the one to restore.
    #[inline]
    pub fn set_instant(&mut self, instant: Moment) {
        self.instant = instant;
    }

    /// Bucket 0 is empty: the lowest non-empty bucket's earliest time becomes `last`, and its
    /// events, in order, go to the buckets they now belong in (all lower, all empty); those
    /// at `last` are then put in `since` order. The earliest event is returned instead, to pop
    /// at once, when it is alone at `last` (`take_lone_event` when alone in bucket `k`).
    ///
    /// The earliest event (the first at `last`, in scheduling order) is taken out before the
    /// others are spread, so that, alone at `last` as at almost every refill, it is never
    /// appended to bucket 0 and popped back.
    fn refill(&mut self) -> Option<Entry> {
        let k = self.occupied.take_lowest();
        if self.buckets[k].len() == 1 {
            return Some(self.take_lone_event(k));
        }
        let mut from = std::mem::take(&mut self.buckets[k]);
        let first = index_of_earliest(&from);
        let earliest = from[first];
        self.last = earliest.at;
        self.spread_around(&from, first);
        from.clear();
        self.buckets[k] = from; // keep its allocation
        let zero = &mut self.buckets[0];
        if zero.is_empty() {
            return Some(earliest);
        }
        // Tied with events at `last`, all scheduled after it (it is the first at `last`).
        zero.insert(0, earliest);
        if !zero.is_sorted_by_key(|e| tie_key(e, self.shuffle)) {
            self.reordered += reorder_ties(zero, self.shuffle);
        }
        None
    }

    /// `refill`'s spreading of bucket `from`'s events but the one at `skip` (the earliest,
    /// whose time is now `last`) over the lower buckets, in order. `refill` finds the earliest
    /// with its time and index in one pass.
    #[inline(always)]
    fn spread_around(&mut self, from: &[Entry], skip: usize) {
        let last = self.last;
        if self.hints {
            // The next event after bucket 0's: the earliest of those moved to lower buckets
            // (every other bucket holds later events).
            let mut ahead = (Nanos::MAX, NO_HINT);
            for entry in from[..skip].iter().chain(&from[skip + 1..]) {
                let b = self.spread_one(entry, last);
                if b > 0 && entry.at < ahead.0 {
                    ahead = (entry.at, entry.code);
                }
            }
            self.ahead = ahead.1;
        } else {
            // Two loops around the earliest, not one with a test per event. (Setting the
            // occupied bit without the branch costs more instructions.)
            for entry in &from[..skip] {
                self.spread_one(entry, last);
            }
            for entry in &from[skip + 1..] {
                self.spread_one(entry, last);
            }
        }
    }

    /// Append `entry` to the bucket it belongs in now that `last` is `last`; returns that bucket.
    #[inline(always)]
    fn spread_one(&mut self, entry: &Entry, last: Nanos) -> usize {
        if entry.at == last {
            push_entry(&mut self.buckets[0], entry);
            return 0;
        }
        let b = self.occupied.occupy(level_and_digit(entry.at, last));
        push_entry(&mut self.buckets[b], entry);
        b
    }

    /// `refill` from bucket `k` holding a single event: it is the next to pop, so it is taken
    /// out at once (its time becomes `last`), leaving bucket 0 empty and every other bucket as
    /// it is; nothing is moved to a lower bucket, so there is no hint.
    ///
    /// On the benchmark the next event is alone in its bucket at half of all refills, and
    /// almost every pop refills (bucket 0 rarely holds two events). This is at the pop, where
    /// the event is known to be next; at scheduling it is not.
    #[inline]
    fn take_lone_event(&mut self, k: usize) -> Entry {
        let e = self.buckets[k].pop().expect("a lone event");
        self.last = e.at;
        self.ahead = NO_HINT;
        e
    }

    pub fn len(&self) -> usize {
        self.len
    }

    /// Keep the hint `next_code` gives when bucket 0 runs out (a comparison per event a
    /// refill moves; off by default).
    pub fn track_ahead(&mut self) {
        self.hints = true;
    }

    /// The code of the event likely to pop next (`NO_HINT`: not known): bucket 0's next,
    /// else the last refill's `ahead` (`track_ahead`). A hint for prefetching only: an
    /// event scheduled meanwhile may come first, and nothing but a prefetch depends on it.
    #[inline]
    pub fn next_code(&self) -> u32 {
        match self.buckets[0].get(self.head) {
            Some(e) => e.code,
            None => self.ahead,
        }
    }

    /// The `since` bits (`f64::to_bits`) of the event popped last (read before an express hop
    /// moves the current `Moment`: it tells a stale delivery from its replacement).
    pub fn popped_since(&self) -> u64 {
        self.instant.since.to_bits()
    }

    /// How many events ns-2's order moved ahead of an event scheduled before them here.
    pub fn reordered(&self) -> u64 {
        self.reordered
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::MAX_INDEX;

    #[test]
    fn an_event_scheduled_in_the_past_pops_first_as_the_heap_did() {
        let mut q = EventQueue::default();
        q.schedule(10, 0, Event::Sample);
        q.schedule(20, 0, Event::Timer(0));
        assert_eq!(q.pop(), Some((10, Event::Sample)));
        q.schedule(7, 0, Event::Timer(1)); // before the last pop: time would run backwards
        q.schedule(5, 0, Event::Timer(2));
        q.schedule(7, 0, Event::Timer(3));
        assert_eq!(q.len(), 4);
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(order, vec![(5, Event::Timer(2)), (7, Event::Timer(1)), (7, Event::Timer(3)), (20, Event::Timer(0))]);
        assert!(q.is_empty());
    }

    #[test]
    fn times_at_the_top_of_the_range_keep_their_order() {
        let mut q = EventQueue::default();
        q.schedule(Nanos::MAX, 0, Event::Timer(1));
        q.schedule(Nanos::MAX - 1, 0, Event::Timer(2));
        q.schedule(1 << 63, 0, Event::Timer(3));
        q.schedule(Nanos::MAX, 0, Event::Timer(4));
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            vec![(1 << 63, Event::Timer(3)), (Nanos::MAX - 1, Event::Timer(2)), (Nanos::MAX, Event::Timer(1)), (Nanos::MAX, Event::Timer(4))]
        );
    }

    #[test]
    fn levels_are_five_bits_of_the_highest_difference_and_the_top_one_four() {
        assert_eq!(level_and_digit(32, 31), (1, 1));
        assert_eq!(level_and_digit(31, 0), (0, 31));
        assert_eq!(level_and_digit(1 << 59, (1 << 59) - 1), (11, 16));
        assert_eq!(level_and_digit(Nanos::MAX, 0), (12, 15));
        assert_eq!(level_and_digit(Nanos::MAX, Nanos::MAX - 1), (0, 31));
    }

    #[test]
    fn events_either_side_of_every_level_boundary_pop_as_the_reference_with_and_without_hints() {
        for hints in [false, true] {
            let (mut q, mut r) = (EventQueue::default(), Reference::default());
            if hints {
                q.track_ahead();
            }
            let (mut n, mut last): (u32, Nanos) = (0, 0);
            for _ in 0..4 {
                for level in (0..LEVELS as u32).rev() {
                    let b = 1u64 << (DIGIT_BITS * level);
                    for d in [b - 1, b, b + 1, b | b >> 1, b.saturating_mul(17), b.saturating_mul(31)] {
                        let t = last.saturating_add(d);
                        q.schedule_since(t, 0.0, scripted_clock(t), Event::Timer(n));
                        r.schedule(t, 0.0, scripted_clock(t), Event::Timer(n));
                        n += 1;
                    }
                }
                for _ in 0..20 {
                    let got = q.pop();
                    assert_eq!(got, r.pop());
                    if let Some((t, _)) = got {
                        last = t;
                    }
                }
            }
            while let Some(got) = q.pop() {
                assert_eq!(Some(got), r.pop());
            }
            assert!(r.pop().is_none() && q.occupied.is_empty());
        }
    }

    /// The reference: a binary heap of (time, smaller double first, smaller `since` double
    /// first, event code, scheduling number).
    #[derive(Default)]
    struct Reference {
        heap: BinaryHeap<Reverse<(Nanos, OrdClock, OrdClock, u32, u64)>>,
        seq: u64,
    }

    /// A double ordered by its value (`total_cmp`), not by its bits as the queue does.
    #[derive(Clone, Copy, PartialEq)]
    struct OrdClock(f64);
    impl Eq for OrdClock {}
    impl PartialOrd for OrdClock {
        fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
            Some(self.cmp(other))
        }
    }
    impl Ord for OrdClock {
        fn cmp(&self, other: &Self) -> std::cmp::Ordering {
            self.0.total_cmp(&other.0)
        }
    }

    impl Reference {
        fn schedule(&mut self, at: Nanos, since_clock: f64, clock: f64, event: Event) {
            self.seq += 1;
            self.heap.push(Reverse((at, OrdClock(clock), OrdClock(since_clock), event.encode(), self.seq)));
        }
        fn pop(&mut self) -> Option<(Nanos, Event)> {
            self.heap.pop().map(|Reverse((at, _, _, code, _))| (at, Event::decode(code)))
        }
    }

    /// One step of a random schedule: pop, or schedule at a time picked by `how` from `raw`
    /// relative to `base` (the last time popped when `monotone`, else 0): the same time again
    /// (bursts of ties), a little later, a lot later, saturating at `Nanos::MAX`, or just under
    /// it; scheduled ns-2-wise at that time, at the base, a little or a lot before (bit
    /// patterns of `raw`), so `since` ties and inversions are common. The events carry a
    /// running number, so ties are told apart.
    fn drive(ops: &[(u8, u64)], monotone: bool) -> Result<(), proptest::test_runner::TestCaseError> {
        use proptest::prelude::*;
        let (mut q, mut r) = (EventQueue::default(), Reference::default());
        if ops.len() % 2 == 1 {
            q.track_ahead(); // the refills' other loop (`spread_around`), which runs use
        }
        let mut base: Nanos = 0;
        for (n, &(how, raw)) in ops.iter().enumerate() {
            if how % 8 == 0 {
                let got = q.pop();
                prop_assert_eq!(got, r.pop());
                if let (Some((t, _)), true) = (got, monotone) {
                    base = t;
                }
            } else {
                let at = match how % 8 {
                    1 | 2 => base,
                    3 => base.saturating_add(raw % 16),
                    4 => base.saturating_add(raw % 5_000_000),
                    5 => base.saturating_add(raw),
                    6 => (Nanos::MAX - raw % 4).max(base),
                    _ => base.saturating_add(raw >> (raw % 64)),
                };
                let index = n as u32 & MAX_INDEX;
                let event = [Event::Delivery(index), Event::Timer(index), Event::App(index)][usize::from(how / 8) % 3];
                let since = match (raw >> 8) % 4 {
                    0 => at,
                    1 => base.min(at),
                    2 => at.saturating_sub((raw >> 12) % 8),
                    _ => at.saturating_sub(raw >> 20),
                };
                // ns-2's double: the time's own, or a few units in the last place off it
                // (ties of doubles common, inversions against `since` too).
                let clock = f64::from_bits(match (raw >> 30) % 4 {
                    0 | 1 => scripted_clock(at).to_bits(),
                    2 => scripted_clock(at).to_bits() + (raw >> 32) % 3,
                    _ => scripted_clock(at).to_bits().saturating_sub((raw >> 32) % 3),
                });
                // `since`'s double: its own, or a unit in the last place off it.
                let since_clock = f64::from_bits(scripted_clock(since).to_bits() + (raw >> 40) % 2);
                q.schedule_since(at, since_clock, clock, event);
                r.schedule(at, since_clock, clock, event);
            }
            prop_assert_eq!(q.len(), r.heap.len());
        }
        loop {
            let got = q.pop();
            prop_assert_eq!(got, r.pop());
            if got.is_none() {
                prop_assert!(q.is_empty());
                return Ok(());
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn pops_in_the_same_order_as_a_binary_heap_of_time_since_and_sequence(
            ops in proptest::collection::vec((proptest::num::u8::ANY, proptest::num::u64::ANY), 0..600)
        ) {
            drive(&ops, true)?;
        }

        #[test]
        fn pops_in_the_same_order_even_when_events_are_scheduled_in_the_past(
            ops in proptest::collection::vec((proptest::num::u8::ANY, proptest::num::u64::ANY), 0..600)
        ) {
            drive(&ops, false)?;
        }
    }
}
