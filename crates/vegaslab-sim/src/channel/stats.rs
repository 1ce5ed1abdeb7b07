//! Counters and time-weighted occupancy of a channel's queue (`QueueStats`).

use super::Waiting;
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
    pub(super) last_change: Nanos,
    /// Bytes of those packets (a packet in transmission at the end counts whole).
    pub bytes_sent: u64,
    /// The low 64 bits of the busy time (`busy_ns`); the high ones are `busy_hi`.
    pub(super) busy_lo: u64,
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

    pub(super) fn set_busy_ns(&mut self, v: u128) {
        (self.busy_hi, self.busy_lo) = ((v >> 64) as u64, v as u64);
    }

    /// `busy_ns += tx`, the high half touched only on a carry.
    #[inline]
    pub(super) fn add_busy(&mut self, tx: Nanos) {
        let (lo, carry) = self.busy_lo.overflowing_add(tx);
        self.busy_lo = lo;
        if carry {
            self.busy_hi += 1;
        }
    }

    #[inline]
    pub(super) fn integrate(&mut self, len: u64, t: Nanos) {
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
    pub(super) fn take_back(&mut self, w: &Waiting) {
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
