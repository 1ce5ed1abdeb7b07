//! The order pending events pop in: ns-2's (docs/ns2-reference-numbers.md, "Benchmark").
//!
//! ns-2's scheduler runs events by their double time, and events at the same double
//! first-in first-out: in the order they were scheduled. Its events are scheduled at
//! different moments than ours: a packet's arrival at the far end of a link is scheduled when
//! its transmission starts (`LinkDelay::recv`), while here a link's next delivery is scheduled
//! when its packet becomes the head of the link's pipe, and express hops skip events. So every
//! event carries the instant ns-2 would have scheduled it (`since`, as ns-2's double: a
//! delivery's transmission start; otherwise the double of the event being processed when it
//! is scheduled (`Moment`), or of its own integer time when it stands for one ns-2 schedules
//! at another time, such as a retransmission timer's last reset), and events pop by (time,
//! ns-2's double time, `since`'s double, event code, scheduling order here).
//!
//! The double: ns-2's clock is a double accumulated by sums (`scenario::SenderClock`). Each
//! event carries the double ns-2 would give it (a delivery: its packet's clock; a
//! retransmission timer: its armed clock plus the timeout; every other event: its time's own
//! double, as ns-2 reads it from the script), and it decides first among events at the same
//! nanosecond; `since` decides between equal doubles. With `run.clock = "exact"` every event
//! carries its time's own double and `since`'s, so ties go by `since` alone. The integer time
//! stays the first key (the radix heap needs integers): the doubles of different nanoseconds
//! are in the nanoseconds' order because, with `"ns2"`, a link's integer times are ns-2's
//! doubles rounded to the nanosecond (`Channel::accept`), not sums of rounded transmission
//! times, which drift about 50 ns ahead of ns-2's doubles within 0.19 s on the benchmark and
//! put two arrivals ns-2 has 5e-17 s apart 4 ns apart here, the other way round.
//!
//! Two events tied on time, double and `since` go by their code (`Event::encode`: deliveries,
//! then flow starts, stops, timers and so on, each by channel or flow number), then by our
//! scheduling order: ns-2's chains of ties mostly start where the script created the flows,
//! in their order, so the lower channel or flow goes first, and the code, unlike our
//! scheduling order, does not depend on express hops (docs/decisions.md, "Same-instant ties
//! go by what the events are"; `tests/monitors.rs`).
//! With it the benchmark's trace equals ns-2's for its first 6 s and the staggered
//! lte-alpha-beta run's for 10 s (`tests/test_trace_ns2.py`); where it differs from ns-2's
//! chain the same file pins a case. `run.tie_order = "shuffled"` (`scenario::TieOrder`)
//! replaces the code by a hash drawn from the seed, to measure what a result owes to it.
//!
//! An entry is 32 bytes: the time, the code and the bits of both doubles (a non-negative
//! double's bits order as its value does). A timer re-armed lazily (scheduled when its older
//! deadline pops, not when it was armed) gets its `since` from its integer arming time, not
//! from the double of the event that armed it.

use vegaslab_cc::Nanos;

/// One pending event: its time, its `Event::encode`d code, and the bits (`f64::to_bits`: a
/// non-negative double's bits order as its value does) of its ns-2 double time and of the
/// ns-2 double at which ns-2 would have scheduled it (`since`; see the module documentation).
#[derive(Clone, Copy, Debug)]
pub(super) struct Entry {
    pub(super) at: Nanos,
    pub(super) code: u32,
    pub(super) clock: u64,
    pub(super) since: u64,
}

/// The event being processed: its time, its ns-2 double, and the double at which ns-2 would
/// have scheduled it (what is scheduled now is scheduled at `at` and `clock`; an arrival at a
/// queue tied with its resume event goes by `since`, `Channel::accept`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Moment {
    pub at: Nanos,
    pub clock: f64,
    pub since: f64,
}

/// An early event's key: time, ns-2 double, earlier `since` first, code, scheduling number.
pub(super) type EarlyKey = (Nanos, u64, u64, u32, u64);

/// Order of two events at the same time: the smaller ns-2 double first, then the earlier
/// `since`, then the smaller code (see the module documentation), or with `run.tie_order =
/// "shuffled"` (`shuffle` is the run's key) `shuffled_rank` in place of the code; events equal
/// in all three keep their scheduling order.
#[inline]
pub(super) fn tie_key(e: &Entry, shuffle: Option<u64>) -> (u64, u64, u64) {
    let third = match shuffle {
        None => e.code as u64,
        Some(key) => shuffled_rank(e, key),
    };
    (e.clock, e.since, third)
}

/// A tied event's place under `run.tie_order = "shuffled"`: its time and code mixed with the
/// run's key by SplitMix64's finaliser (Steele, Lea and Flood, "Fast Splittable Pseudorandom
/// Number Generators", 2014), so the order changes from instant to instant and seed to seed.
/// Two tied events never share a code (one pending delivery per channel, one timer per flow,
/// and so on), so their ranks differ unless the 64-bit hashes collide, and then scheduling
/// order decides.
#[inline]
fn shuffled_rank(e: &Entry, key: u64) -> u64 {
    let mut z = e.at.rotate_left(32) ^ (e.code as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ key;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// ns-2's double for an event at a time the scenario wrote: the double Tcl reads from the
/// bridge's `ns / 1e9`.
#[inline]
pub(crate) fn scripted_clock(at: Nanos) -> f64 {
    at as f64 / 1e9
}

/// Sort same-time events by `tie_key` (stably: scheduling order among equals); returns how
/// many moved ahead of an event scheduled before them.
#[cold]
pub(super) fn reorder_ties(zero: &mut [Entry], shuffle: Option<u64>) -> u64 {
    let mut moved = 0;
    let mut largest = (0, 0, 0);
    for e in zero.iter() {
        // An event with a smaller key than one before it will overtake that one.
        let key = tie_key(e, shuffle);
        if key < largest {
            moved += 1;
        }
        largest = largest.max(key);
    }
    zero.sort_by_key(|e| tie_key(e, shuffle));
    moved
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{Event, EventQueue};

    #[test]
    fn events_tied_on_time_double_and_since_pop_in_the_order_of_what_they_are() {
        let mut q = EventQueue::default();
        q.schedule(5, 0, Event::Timer(2));
        q.schedule(3, 0, Event::Sample);
        q.schedule(5, 0, Event::Timer(1));
        q.schedule(5, 0, Event::Delivery(9));
        assert_eq!(q.pop(), Some((3, Event::Sample)));
        // By code: deliveries before timers, lower channel or flow numbers first, whichever
        // was scheduled first (so an express hop, which schedules ahead of time, changes
        // nothing).
        assert_eq!(q.pop(), Some((5, Event::Delivery(9))));
        assert_eq!(q.pop(), Some((5, Event::Timer(1))));
        assert_eq!(q.pop(), Some((5, Event::Timer(2))));
        assert_eq!(q.pop(), None);
    }

    /// Pop every event, with the order of deliveries 0..n scheduled at one time in that
    /// order, into a queue made by `make`.
    fn tied_order(make: impl Fn() -> EventQueue, n: u32, at: Nanos) -> Vec<u32> {
        let mut q = make();
        for c in 0..n {
            q.schedule(at, 0, Event::Delivery(c));
        }
        std::iter::from_fn(|| q.pop())
            .map(|(_, e)| match e {
                Event::Delivery(c) => c,
                other => panic!("{other:?}"),
            })
            .collect()
    }

    #[test]
    fn shuffled_ties_are_a_permutation_fixed_by_the_key_and_different_from_instant_to_instant() {
        let scheduled: Vec<u32> = (0..16).collect();
        assert_eq!(tied_order(EventQueue::default, 16, 500), scheduled);
        let a = tied_order(|| EventQueue::with_shuffled_ties(7), 16, 500);
        let mut sorted = a.clone();
        sorted.sort();
        assert_eq!(sorted, scheduled, "every event pops once");
        assert_ne!(a, scheduled);
        assert_eq!(a, tied_order(|| EventQueue::with_shuffled_ties(7), 16, 500), "same key, same order");
        assert_ne!(a, tied_order(|| EventQueue::with_shuffled_ties(8), 16, 500), "another key");
        assert_ne!(a, tied_order(|| EventQueue::with_shuffled_ties(7), 16, 501), "another instant");
    }

    #[test]
    fn shuffled_ties_keep_the_double_and_since_order() {
        let mut q = EventQueue::with_shuffled_ties(3);
        q.schedule_clocked(100, 90, 1e-7, Event::Delivery(1));
        q.schedule_clocked(100, 40, 1e-7, Event::Delivery(2)); // earlier since: first of the 1e-7s
        q.schedule_clocked(100, 90, 0.99e-7, Event::Delivery(3)); // smaller double: first of all
        for c in 4..12 {
            q.schedule_clocked(100, 90, 1e-7, Event::Delivery(c)); // tie with 1: shuffled among them
        }
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).map(|(_, e)| e).collect();
        assert_eq!(&order[..2], &[Event::Delivery(3), Event::Delivery(2)]);
        // Scheduled at the current time into a non-empty bucket 0: placed by the same key.
        let mut q = EventQueue::with_shuffled_ties(3);
        q.schedule(50, 50, Event::Sample);
        assert_eq!(q.pop(), Some((50, Event::Sample)));
        let mut pushed = EventQueue::with_shuffled_ties(3);
        for c in 0..8 {
            q.schedule(50, 50, Event::Delivery(c));
            pushed.schedule(50, 0, Event::Delivery(c));
        }
        pushed.schedule(40, 0, Event::Sample);
        assert_eq!(pushed.pop(), Some((40, Event::Sample)));
        let now: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        let refilled: Vec<_> = std::iter::from_fn(|| pushed.pop()).collect();
        assert_eq!(now, refilled, "inserted one by one or sorted at a refill, the same order");
    }

    #[test]
    fn simultaneous_events_pop_in_the_order_ns2_scheduled_them() {
        let mut q = EventQueue::default();
        q.schedule(100, 90, Event::Delivery(1)); // transmission started at 90
        q.schedule(100, 40, Event::Delivery(2)); // started at 40: ns-2 scheduled it first
        q.schedule(100, 90, Event::Delivery(3)); // same instant as 1: scheduling order
        q.schedule(50, 50, Event::Sample);
        assert_eq!(q.pop(), Some((50, Event::Sample)));
        // At the current time: after every event with an earlier or equal `since`.
        q.schedule(100, 0, Event::Timer(7));
        assert_eq!(q.pop(), Some((100, Event::Timer(7))));
        assert_eq!(q.pop(), Some((100, Event::Delivery(2))));
        q.schedule(100, 60, Event::Delivery(4)); // into bucket 0, before 1 and 3
        q.schedule(100, 100, Event::Delivery(5)); // scheduled now: last
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).map(|(_, e)| e).collect();
        assert_eq!(order, vec![Event::Delivery(4), Event::Delivery(1), Event::Delivery(3), Event::Delivery(5)]);
    }

    #[test]
    fn simultaneous_events_pop_by_ns2s_double_before_since() {
        // Three arrivals at the same nanosecond whose doubles (ns-2's accumulated clock) differ
        // in the last place: ns-2 runs the smallest double first, whatever it scheduled first.
        let mut q = EventQueue::default();
        let t = 19_531_250;
        let exact = scripted_clock(t);
        let (below, above) = (f64::from_bits(exact.to_bits() - 1), f64::from_bits(exact.to_bits() + 1));
        q.schedule_clocked(t, t - 9_000, above, Event::Delivery(1)); // scheduled first
        q.schedule_clocked(t, t - 5_000, exact, Event::Delivery(2));
        q.schedule_clocked(t, t - 1_000, below, Event::Delivery(3));
        q.schedule_clocked(t, t - 7_000, exact, Event::Delivery(4)); // same double as 2, earlier since
        assert_eq!(q.pop(), Some((t, Event::Delivery(3))));
        // Into bucket 0 while it is being read: by its double too.
        q.schedule_clocked(t, t, below, Event::Timer(5));
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).map(|(_, e)| e).collect();
        assert_eq!(order, vec![Event::Timer(5), Event::Delivery(4), Event::Delivery(2), Event::Delivery(1)]);
    }

    #[test]
    fn events_scheduled_long_before_keep_their_order() {
        let mut q = EventQueue::default();
        let t = 10_000_000_000; // 10 s
        q.schedule(t, 0, Event::FlowStart(1));
        q.schedule(t, t - 1_000, Event::Delivery(2));
        // 2^32 + 5 ns before (once saturated in a 32-bit `ahead`): after FlowStart(1), before
        // Delivery(2).
        q.schedule(t, t - ((1 << 32) + 5), Event::FlowStart(3));
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).map(|(_, e)| e).collect();
        assert_eq!(order, vec![Event::FlowStart(1), Event::FlowStart(3), Event::Delivery(2)]);
    }
}
