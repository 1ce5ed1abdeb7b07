//! The event queue: a binary heap ordered by (time, insertion sequence), so simultaneous
//! events run in the order they were scheduled and every run is reproducible.

use dary_heap::QuaternaryHeap;
use std::cmp::Reverse;
use vegaslab_cc::Nanos;

/// What happens. Links need one pending event each (their next delivery), flows one each
/// for their retransmission timer; see `DESIGN.md`, "Speed, by design".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// The packet at the head of channel `0`'s pipe reaches the far node.
    Delivery(u32),
    FlowStart(u32),
    FlowStop(u32),
    /// Flow `0`'s retransmission timer may be due.
    Timer(u32),
    /// Sample the monitored time series.
    Sample,
    /// UDP source `0` sends its next packet (`udp`).
    Source(u32),
    /// A TCP application's clock: index = 2 x flow + process (`apps`).
    App(u32),
}

/// Bits of the key that hold the event (kind in the top 3, index in the rest).
const EVENT_BITS: u32 = 24;
const INDEX_BITS: u32 = EVENT_BITS - 3;
/// Largest channel or flow index an event can carry.
pub const MAX_INDEX: u32 = (1 << INDEX_BITS) - 1;

impl Event {
    fn encode(self) -> u32 {
        let (kind, index) = match self {
            Event::Delivery(i) => (0, i),
            Event::FlowStart(i) => (1, i),
            Event::FlowStop(i) => (2, i),
            Event::Timer(i) => (3, i),
            Event::Sample => (4, 0),
            Event::Source(i) => (5, i),
            Event::App(i) => (6, i),
        };
        debug_assert!(index <= MAX_INDEX);
        (kind << INDEX_BITS) | index
    }

    fn decode(code: u32) -> Event {
        let index = code & MAX_INDEX;
        match code >> INDEX_BITS {
            0 => Event::Delivery(index),
            1 => Event::FlowStart(index),
            2 => Event::FlowStop(index),
            3 => Event::Timer(index),
            4 => Event::Sample,
            5 => Event::Source(index),
            _ => Event::App(index),
        }
    }
}

/// Largest scheduling sequence number a key holds (40 bits).
const MAX_SEQ: u64 = (1 << (64 - EVENT_BITS)) - 1;

/// Pending events in a 4-ary heap of single `u128` keys: time (high 64 bits), scheduling
/// sequence number (next 40), event (low 24). Keys are unique, so simultaneous events run in
/// the order they were scheduled and every run is reproducible.
#[derive(Default)]
pub struct EventQueue {
    heap: QuaternaryHeap<Reverse<u128>>,
    seq: u64,
}

impl EventQueue {
    #[inline]
    pub fn schedule(&mut self, at: Nanos, event: Event) {
        if self.seq >= MAX_SEQ {
            self.renumber();
        }
        self.seq += 1;
        let key = ((at as u128) << 64) | ((self.seq as u128) << EVENT_BITS) | event.encode() as u128;
        self.heap.push(Reverse(key));
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(Nanos, Event)> {
        self.heap.pop().map(|Reverse(key)| ((key >> 64) as Nanos, Event::decode(key as u32 & ((1 << EVENT_BITS) - 1))))
    }

    /// The sequence numbers ran out (after 2^40 - 1 schedulings, some days of simulating):
    /// number the pending events again from 1 in the order they will pop. Ties keep their
    /// order and later events still sort after them, so nothing changes but the numbers;
    /// without this the sequence would spill into the time bits and scramble the order.
    #[cold]
    fn renumber(&mut self) {
        let mut keys: Vec<u128> = std::mem::take(&mut self.heap).into_iter().map(|Reverse(k)| k).collect();
        keys.sort_unstable();
        let low = (1u128 << EVENT_BITS) - 1;
        for (i, k) in keys.iter_mut().enumerate() {
            *k = (*k >> 64 << 64) | ((i as u128 + 1) << EVENT_BITS) | (*k & low);
        }
        self.seq = keys.len() as u64;
        self.heap = keys.into_iter().map(Reverse).collect();
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simultaneous_events_pop_in_scheduling_order() {
        let mut q = EventQueue::default();
        q.schedule(5, Event::Timer(2));
        q.schedule(3, Event::Sample);
        q.schedule(5, Event::Timer(1));
        assert_eq!(q.pop(), Some((3, Event::Sample)));
        assert_eq!(q.pop(), Some((5, Event::Timer(2))));
        assert_eq!(q.pop(), Some((5, Event::Timer(1))));
        assert_eq!(q.pop(), None);
    }

    #[test]
    fn order_survives_running_out_of_sequence_numbers() {
        let mut q = EventQueue { seq: MAX_SEQ - 2, ..Default::default() };
        q.schedule(7, Event::Timer(1));
        q.schedule(5, Event::Timer(2));
        q.schedule(7, Event::Timer(3)); // numbers ran out: renumbered first
        q.schedule(7, Event::Timer(4));
        q.schedule(5, Event::Timer(5));
        assert!(q.seq < 10, "renumbered: {}", q.seq);
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            vec![(5, Event::Timer(2)), (5, Event::Timer(5)), (7, Event::Timer(1)), (7, Event::Timer(3)), (7, Event::Timer(4))]
        );
    }

    #[test]
    fn events_survive_packing_into_the_key() {
        let mut q = EventQueue::default();
        for ev in [
            Event::Delivery(MAX_INDEX),
            Event::FlowStart(7),
            Event::FlowStop(0),
            Event::Timer(123),
            Event::Sample,
            Event::Source(MAX_INDEX),
            Event::App(5),
        ] {
            q.schedule(42, ev);
            assert_eq!(q.pop(), Some((42, ev)));
        }
    }
}
