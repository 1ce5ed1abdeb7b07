//! What happens in a run and when: an [`Event`] is one thing the simulator does at an instant
//! (a delivery at the end of a link, a flow's start, stop or timer, a sample, a UDP or
//! application send, a route change), carried as a 24-bit code; the pending events wait in an
//! [`EventQueue`] and pop in ns-2's order, so simultaneous events run in the order ns-2 would
//! run them and every run is reproducible.
//!
//! In two modules: `order` is that order (the keys an event carries: its time, ns-2's double time
//! and the instant ns-2 would have scheduled it, then its code; the `Moment` being processed;
//! the shuffled tie order), and `queue` is the radix heap that pops by it.

mod order;
mod queue;

pub use order::Moment;
pub(crate) use order::scripted_clock;
pub use queue::{EventQueue, NO_HINT};

/// What happens. Links need one pending event each (their next delivery), flows one each
/// for their retransmission timer.
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
    /// Links go down or up (`links[].down`) and routes are recomputed: index = the first of
    /// the run's link changes at this instant (`Simulator::on_route_change`).
    Route(u32),
}

/// Bits of an event's code: kind in the top 3, index in the rest.
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
            Event::Route(i) => (7, i),
        };
        debug_assert!(index <= MAX_INDEX);
        (kind << INDEX_BITS) | index
    }

    /// The channel of a delivery's code (`EventQueue::next_code`), `None` for any other
    /// event or `NO_HINT`.
    #[inline]
    pub fn delivery_channel(code: u32) -> Option<u32> {
        (code <= MAX_INDEX).then_some(code)
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
            6 => Event::App(index),
            _ => Event::Route(index),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
            q.schedule(42, 0, ev);
            assert_eq!(q.pop(), Some((42, ev)));
        }
    }
}
