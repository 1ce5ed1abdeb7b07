//! The event queue: a binary heap ordered by (time, insertion sequence), so simultaneous
//! events run in the order they were scheduled and every run is reproducible.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use vegaslab_cc::Nanos;

/// What happens. Links need one pending event each (their next delivery), flows one each
/// for their retransmission timer; see `DESIGN.md`, "Speed, by design".
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Event {
    /// The packet at the head of channel `0`'s pipe reaches the far node.
    Delivery(u32),
    FlowStart(u32),
    FlowStop(u32),
    /// Flow `0`'s retransmission timer may be due.
    Timer(u32),
    /// Sample the monitored time series.
    Sample,
}

#[derive(Default)]
pub struct EventQueue {
    heap: BinaryHeap<Reverse<(Nanos, u64, Event)>>,
    seq: u64,
}

impl EventQueue {
    pub fn schedule(&mut self, at: Nanos, ev: Event) {
        self.seq += 1;
        self.heap.push(Reverse((at, self.seq, ev)));
    }

    pub fn pop(&mut self) -> Option<(Nanos, Event)> {
        self.heap.pop().map(|Reverse((t, _, e))| (t, e))
    }

    pub fn peek_time(&self) -> Option<Nanos> {
        self.heap.peek().map(|Reverse((t, _, _))| *t)
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
}
