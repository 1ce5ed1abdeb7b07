//! The clocks senders and the event order read (`run.clock`, `scenario::SenderClock`): with
//! `"ns2"` the double ns-2 would have accumulated for each event, with `"exact"` the integer
//! time's own.

use super::Simulator;
use crate::event::scripted_clock;
use crate::scenario::SenderClock;
use vegaslab_cc::{secs, Nanos};

impl Simulator {
    /// What a sender reads as the time now (`run.clock`, `scenario::SenderClock`), given
    /// ns-2's double for the current event.
    pub(super) fn sender_clock(&self, ns2: f64) -> f64 {
        match self.scenario.clock {
            SenderClock::Ns2 => ns2,
            SenderClock::Exact => secs(self.now),
        }
    }

    /// The sender clock of an event at a time the scenario wrote (a flow's start, an
    /// application's event): ns-2's double for it is the one Tcl reads from the bridge's
    /// `ns / 1e9`.
    pub(super) fn scripted_clock(&self) -> f64 {
        self.sender_clock(scripted_clock(self.now))
    }
}

/// The double time that orders an event among those at the same nanosecond (`event`): ns-2's
/// (`ns2`) with `run.clock = "ns2"`; with `"exact"` the integer time's own, so ties keep the
/// `since` and scheduling order alone.
#[inline]
pub(super) fn event_clock(mode: SenderClock, ns2: f64, at: Nanos) -> f64 {
    match mode {
        SenderClock::Ns2 => ns2,
        SenderClock::Exact => exact_clock(at),
    }
}

/// `event_clock` with `"exact"`, out of line: inlined, the compiler converted and divided
/// on every call whatever the setting and then chose.
#[inline(never)]
fn exact_clock(at: Nanos) -> f64 {
    scripted_clock(at)
}
