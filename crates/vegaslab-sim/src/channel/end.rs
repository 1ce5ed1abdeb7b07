//! The link's ends: a failure (`down`), arrivals while it is down, and the end of the run,
//! each bringing the queue's counters to that moment.

use super::{Channel, DEFERRED};
use crate::packet::Packet;
use vegaslab_cc::Nanos;

impl Channel {
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
        if self.special & DEFERRED != 0 {
            // Held packets were never counted as departures: they are dropped as they are.
            self.drop_held(lost);
        }
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
        if self.special & DEFERRED != 0 {
            self.finish_held();
        }
        for w in self.waiting.drain(..) {
            self.stats.take_back(&w);
            self.stats.backlog += 1;
        }
        let overhang = self.busy_until.saturating_sub(end);
        self.stats.set_busy_ns(self.stats.busy_ns().saturating_sub(overhang as u128));
        self.busy_until = self.busy_until.min(end);
    }
}
