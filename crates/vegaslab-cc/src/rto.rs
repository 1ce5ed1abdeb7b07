//! ns-2's coarse retransmission-timeout estimator (`TcpAgent::rtt_update`, `rtt_timeout`,
//! `rtt_backoff` semantics): RTT samples are measured in clock ticks, smoothed in fixed point
//! (srtt with 3 fractional bits, rttvar with 2), and the RTO is srtt + 4 x rttvar, clamped
//! to [min_rto, max_rto] after back-off (RFC 2988 ordering) and never below two ticks.

use crate::config::TcpConfig;
use crate::{nanos, Nanos};

const SRTT_BITS: u32 = 3;
const RTTVAR_BITS: u32 = 2;
/// RTO = srtt + 2^RTTVAR_EXP x rttvar.
const RTTVAR_EXP: u32 = 2;

#[derive(Clone, Debug)]
pub struct RtoEstimator {
    tick: f64,
    min_rto: f64,
    max_rto: f64,
    boot_time: f64,
    /// Last sample, in ticks.
    pub rtt_ticks: i64,
    /// Smoothed RTT x 8, in ticks (0 until the first sample).
    pub srtt: i64,
    /// RTT variation x 4, in ticks.
    pub rttvar: i64,
    /// Current un-backed-off RTO, seconds.
    rtxcur: f64,
    /// Exponential back-off multiplier (1, 2, 4, ...).
    backoff: i64,
    /// [`RtoEstimator::timeout`] and the same in nanoseconds, brought up to date whenever
    /// `rtxcur` or `backoff` changes.
    /// Kept, not recomputed per arming: the timer is re-armed on every new ACK, the RTO
    /// changes about once a round trip.
    timeout: f64,
    timeout_ns: Nanos,
}

impl RtoEstimator {
    pub fn new(cfg: &TcpConfig) -> Self {
        let mut e = RtoEstimator {
            tick: cfg.tick,
            min_rto: cfg.min_rto,
            max_rto: cfg.max_rto,
            boot_time: cfg.boot_time,
            rtt_ticks: 0,
            srtt: 0,
            // ns-2's rttvar_init_ (12 s) only matters before the first sample, when srtt is 0
            // and the first sample overwrites it; rtxcur starts at initial_rto.
            rttvar: ((12.0 / cfg.tick) as i64) << RTTVAR_BITS,
            rtxcur: cfg.initial_rto,
            backoff: 1,
            timeout: 0.0,
            timeout_ns: 0,
        };
        e.refresh();
        e
    }

    /// Current un-backed-off RTO, seconds.
    pub fn rtxcur(&self) -> f64 {
        self.rtxcur
    }

    /// Exponential back-off multiplier (1, 2, 4, ...).
    pub fn backoff(&self) -> i64 {
        self.backoff
    }

    /// Back to no back-off (an RTT sample of the timed packet, a partial ACK).
    pub fn reset_backoff(&mut self) {
        self.backoff = 1;
        self.refresh();
    }

    /// Feed one RTT sample `tao` (seconds) taken at `now` (seconds). The sample is rounded
    /// to ticks of the sender's clock, whose phase is `boot_time`.
    pub fn update(&mut self, now: f64, tao: f64) {
        let sendtime = now - tao + self.boot_time;
        let tickoff = sendtime % self.tick;
        self.rtt_ticks = ((tao + tickoff) / self.tick) as i64;
        if self.rtt_ticks < 1 {
            self.rtt_ticks = 1;
        }
        if self.srtt != 0 {
            // ns-2 keeps the difference in a 16-bit short.
            let mut delta = (self.rtt_ticks - (self.srtt >> SRTT_BITS)) as i16 as i64;
            self.srtt += delta;
            if self.srtt <= 0 {
                self.srtt = 1;
            }
            if delta < 0 {
                delta = -delta;
            }
            delta -= self.rttvar >> RTTVAR_BITS;
            self.rttvar += delta;
            if self.rttvar <= 0 {
                self.rttvar = 1;
            }
        } else {
            self.srtt = self.rtt_ticks << SRTT_BITS;
            self.rttvar = self.rtt_ticks << (RTTVAR_BITS - 1);
        }
        let scaled = (self.rttvar << (RTTVAR_EXP + (SRTT_BITS - RTTVAR_BITS))) + self.srtt;
        self.rtxcur = (scaled >> SRTT_BITS) as f64 * self.tick;
        self.refresh();
    }

    /// The timeout to arm now, seconds (RFC 2988: min_rto applied before back-off).
    pub fn timeout(&self) -> f64 {
        self.timeout
    }

    /// [`RtoEstimator::timeout`] rounded to nanoseconds.
    pub fn timeout_ns(&self) -> Nanos {
        self.timeout_ns
    }

    fn refresh(&mut self) {
        self.timeout = self.compute_timeout();
        self.timeout_ns = nanos(self.timeout);
    }

    fn compute_timeout(&self) -> f64 {
        let mut t = if self.rtxcur < self.min_rto {
            self.min_rto * self.backoff as f64
        } else {
            self.rtxcur * self.backoff as f64
        };
        if t > self.max_rto {
            t = self.max_rto;
        }
        if t < 2.0 * self.tick {
            t = 2.0 * self.tick;
        }
        t
    }

    /// Double the back-off (ns-2 `rtt_backoff`); past 8x, fold srtt into rttvar.
    pub fn back_off(&mut self) {
        if self.backoff < 64 || self.timeout() < self.max_rto {
            self.backoff <<= 1;
        }
        if self.backoff > 8 {
            self.rttvar += self.srtt >> SRTT_BITS;
            self.srtt = 0;
        }
        self.refresh();
    }

    /// Smoothed RTT in seconds (0 before the first sample).
    pub fn srtt_secs(&self) -> f64 {
        (self.srtt >> SRTT_BITS) as f64 * self.tick
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn est() -> RtoEstimator {
        RtoEstimator::new(&TcpConfig::default())
    }

    #[test]
    fn before_any_sample_the_timeout_is_the_initial_rto() {
        assert_eq!(est().timeout(), 3.0);
    }

    #[test]
    fn first_sample_sets_srtt_to_the_sample_and_rttvar_to_half_of_it() {
        let mut e = est();
        // 100 ms sent at t=0 with boot_time 0: exactly 10 ticks.
        e.update(0.1, 0.1);
        assert_eq!(e.rtt_ticks, 10);
        assert_eq!(e.srtt, 80); // 10 << 3
        assert_eq!(e.rttvar, 20); // 10 << 1, i.e. 5 ticks x 4
        // RTO = srtt + 4 rttvar = 10 + 4*5 = 30 ticks = 0.3 s.
        assert!((e.rtxcur - 0.3).abs() < 1e-12);
        assert!((e.timeout() - 0.3).abs() < 1e-12);
    }

    #[test]
    fn small_rto_is_raised_to_min_rto_before_backoff() {
        let mut e = est();
        e.update(0.02, 0.02); // 2 ticks: rto = 2 + 4*1 = 6 ticks = 60 ms
        assert!((e.rtxcur - 0.06).abs() < 1e-12);
        assert!((e.timeout() - 0.2).abs() < 1e-12);
        e.back_off();
        assert!((e.timeout() - 0.4).abs() < 1e-12);
    }

    #[test]
    fn backoff_beyond_eight_clobbers_srtt_into_rttvar() {
        let mut e = est();
        e.update(0.1, 0.1);
        for _ in 0..4 {
            e.back_off();
        }
        assert_eq!(e.backoff, 16);
        assert_eq!(e.srtt, 0);
        assert!(e.timeout() <= 60.0);
    }

    #[test]
    fn sample_phase_follows_the_tick_clock() {
        // A 15 ms sample sent at tick phase 0.008: (0.015 + 0.008) / 0.01 = 2 ticks.
        let mut e = est();
        e.update(0.023, 0.015);
        assert_eq!(e.rtt_ticks, 2);
    }
}
