//! Linux's RTT estimator and retransmission timeout (`tcp_rtt_estimator`, `tcp_set_rto`,
//! `tcp_update_rtt_min` in `net/ipv4/tcp_input.c`), in Linux's units: microseconds, the
//! smoothed RTT scaled by 8.
//!
//! Not RFC 6298's RTO = SRTT + 4 RTTVAR with a 1 s floor: Linux's variance term never falls
//! below the minimum RTO (200 ms, `TCP_RTO_MIN`), so RTO >= SRTT + 200 ms, and a falling RTT
//! raises the deviation only an eighth as fast as a rising one (RFC 6298 section 2 has one
//! gain for both). The first sample m gives SRTT = m and RTO = m + max(2m, 200 ms).

use crate::Nanos;

/// Microseconds in a nanosecond count, truncated (Linux's `tcp_stamp_us_delta` works in µs).
pub fn micros(ns: Nanos) -> i64 {
    (ns / 1_000) as i64
}

/// A Linux timer's delay: rounded up to the next whole millisecond, as a timer armed in
/// jiffies at `HZ = 1000` (`usecs_to_jiffies`) fires.
pub fn jiffies_ns(us: i64) -> Nanos {
    let us = us.max(0) as u64;
    us.div_ceil(1_000) * 1_000_000
}

/// The RTT state of a Linux sender.
#[derive(Clone, Debug)]
pub struct LinuxRtt {
    /// Smoothed RTT x 8, µs (`srtt_us`); 0 before the first sample.
    pub srtt8: i64,
    /// Mean deviation x 4, µs (`mdev_us`).
    mdev4: i64,
    /// Largest `mdev4` in the current round (`mdev_max_us`).
    mdev_max4: i64,
    /// The variance term of the RTO, µs (`rttvar_us`).
    rttvar: i64,
    /// The round the variance decays with: it ends when the ACK point passes it (`rtt_seq`).
    rtt_seq: i64,
    /// Minimum RTO, µs (`TCP_RTO_MIN`, the scenario's `tcp.min_rto`).
    rto_min: i64,
    /// Maximum RTO, µs (`TCP_RTO_MAX`, `tcp.max_rto`).
    rto_max: i64,
    /// Current RTO before back-off, µs (`icsk_rto`).
    rto: i64,
    /// Exponential back-off count (`icsk_backoff`); reset only by a valid sample.
    pub backoff: u32,
    /// Windowed minimum RTT, µs (`tcp_min_rtt`), and when it was taken.
    min_rtt: Option<(i64, Nanos)>,
}

/// The window of the minimum-RTT filter (`tcp_min_rtt_wlen`, 300 s).
const MIN_RTT_WINDOW: Nanos = 300_000_000_000;

impl LinuxRtt {
    /// Before any sample: the RTO is `initial_rto` (`TCP_TIMEOUT_INIT`, 1 s).
    pub fn new(min_rto: f64, max_rto: f64, initial_rto: f64) -> Self {
        let us = |s: f64| (s * 1e6).round() as i64;
        LinuxRtt {
            srtt8: 0,
            mdev4: 0,
            mdev_max4: 0,
            rttvar: 0,
            rtt_seq: 0,
            rto_min: us(min_rto),
            rto_max: us(max_rto),
            rto: us(initial_rto).min(us(max_rto)),
            backoff: 0,
            min_rtt: None,
        }
    }

    /// The smoothed RTT in µs (0 before the first sample).
    pub fn srtt_us(&self) -> i64 {
        self.srtt8 >> 3
    }

    /// The windowed minimum RTT in µs (`tcp_min_rtt`; before any sample Linux's `~0U`).
    pub fn min_rtt_us(&self) -> i64 {
        self.min_rtt.map_or(i64::from(u32::MAX), |(m, _)| m)
    }

    /// A valid sample: `seq_rtt` feeds the estimator, `ca_rtt` the minimum filter
    /// (`tcp_ack_update_rtt`); the back-off is cleared (RFC 6298 section 5, Linux likewise).
    /// `snd_una` and `snd_nxt` mark the estimator's rounds.
    pub fn sample(&mut self, seq_rtt_us: i64, ca_rtt_us: i64, now: Nanos, snd_una: i64, snd_nxt: i64) {
        self.update_min(ca_rtt_us, now);
        self.estimate(seq_rtt_us, snd_una, snd_nxt);
        self.rto = ((self.srtt8 >> 3) + self.rttvar).min(self.rto_max);
        self.backoff = 0;
    }

    /// `tcp_update_rtt_min`: a windowed minimum; a sample older than the window gives way.
    fn update_min(&mut self, rtt_us: i64, now: Nanos) {
        let rtt = rtt_us.max(1);
        match self.min_rtt {
            Some((m, at)) if rtt > m && now.saturating_sub(at) <= MIN_RTT_WINDOW => {}
            _ => self.min_rtt = Some((rtt, now)),
        }
    }

    /// `tcp_rtt_estimator`: Jacobson's estimator with Linux's asymmetric deviation gain and
    /// its per-round decay of the variance towards the round's largest deviation.
    fn estimate(&mut self, m_us: i64, snd_una: i64, snd_nxt: i64) {
        let mut m = m_us;
        if self.srtt8 != 0 {
            m -= self.srtt8 >> 3; // the error
            self.srtt8 += m; // srtt += error / 8
            if m < 0 {
                // A falling RTT: the deviation grows by an eighth of the usual gain at most.
                m = -m - (self.mdev4 >> 2);
                if m > 0 {
                    m >>= 3;
                }
            } else {
                m -= self.mdev4 >> 2;
            }
            self.mdev4 += m; // mdev += (|error| - mdev) / 4, in x4 units
            if self.mdev4 > self.mdev_max4 {
                self.mdev_max4 = self.mdev4;
                if self.mdev_max4 > self.rttvar {
                    self.rttvar = self.mdev_max4;
                }
            }
            if snd_una > self.rtt_seq {
                // A round ended: let the variance decay towards the round's largest deviation.
                if self.mdev_max4 < self.rttvar {
                    self.rttvar -= (self.rttvar - self.mdev_max4) >> 2;
                }
                self.rtt_seq = snd_nxt;
                self.mdev_max4 = self.rto_min;
            }
        } else {
            // The first sample.
            self.srtt8 = m << 3;
            self.mdev4 = m << 1; // so that RTO = 3 x the first sample
            self.rttvar = self.mdev4.max(self.rto_min);
            self.mdev_max4 = self.rttvar;
            self.rtt_seq = snd_nxt;
        }
        self.srtt8 = self.srtt8.max(1);
    }

    /// The RTO before back-off, µs (`icsk_rto`).
    pub fn rto_us(&self) -> i64 {
        self.rto
    }

    /// The timer's delay with the back-off: `min(rto << backoff, TCP_RTO_MAX)`, in whole
    /// milliseconds (`inet_csk_rto_backoff`).
    pub fn backed_off_ns(&self) -> Nanos {
        let shifted = (self.rto.max(1) as u64) << self.backoff;
        jiffies_ns(shifted.min(self.rto_max as u64) as i64)
    }

    /// The RTO fired: back off once more (`icsk_backoff++`; the shift stops mattering long
    /// before its bound, the cap being reached).
    pub fn back_off(&mut self) {
        self.backoff = (self.backoff + 1).min(MAX_BACKOFF);
    }
}

/// The largest back-off shift kept: any RTO shifted this far is beyond `TCP_RTO_MAX`.
const MAX_BACKOFF: u32 = 31;

#[cfg(test)]
mod tests {
    use super::*;

    fn rtt() -> LinuxRtt {
        LinuxRtt::new(0.2, 120.0, 1.0)
    }

    #[test]
    fn the_first_sample_sets_rto_to_the_sample_plus_the_larger_of_twice_it_and_rto_min() {
        let mut r = rtt();
        assert_eq!(r.rto_us(), 1_000_000);
        r.sample(40_000, 40_000, 0, 1, 10);
        assert_eq!(r.srtt_us(), 40_000);
        assert_eq!(r.rto_us(), 40_000 + 200_000);
        let mut r = rtt();
        r.sample(300_000, 300_000, 0, 1, 10);
        assert_eq!(r.rto_us(), 300_000 + 600_000);
    }

    #[test]
    fn the_rto_never_falls_below_srtt_plus_rto_min_on_a_steady_path() {
        let mut r = rtt();
        for i in 0..1000 {
            r.sample(40_000, 40_000, 0, i, i + 10);
        }
        assert_eq!(r.srtt_us(), 40_000);
        assert_eq!(r.rto_us(), 240_000);
    }

    #[test]
    fn a_falling_rtt_raises_the_deviation_less_than_a_rising_one() {
        let (mut down, mut up) = (rtt(), rtt());
        down.sample(100_000, 100_000, 0, 1, 2);
        up.sample(100_000, 100_000, 0, 1, 2);
        down.sample(20_000, 20_000, 0, 1, 2);
        up.sample(180_000, 180_000, 0, 1, 2);
        assert!(down.mdev4 < up.mdev4, "{} vs {}", down.mdev4, up.mdev4);
    }

    #[test]
    fn back_off_doubles_the_timer_up_to_the_maximum_and_a_sample_clears_it() {
        let mut r = rtt();
        r.sample(40_000, 40_000, 0, 1, 2);
        assert_eq!(r.backed_off_ns(), 240_000_000);
        r.back_off();
        assert_eq!(r.backed_off_ns(), 480_000_000);
        for _ in 0..40 {
            r.back_off();
        }
        assert_eq!(r.backed_off_ns(), 120_000_000_000);
        r.sample(40_000, 40_000, 0, 1, 2);
        assert_eq!(r.backed_off_ns(), 240_000_000);
    }

    #[test]
    fn timers_round_up_to_whole_milliseconds() {
        assert_eq!(jiffies_ns(1), 1_000_000);
        assert_eq!(jiffies_ns(2_000), 2_000_000);
        assert_eq!(jiffies_ns(2_001), 3_000_000);
    }

    #[test]
    fn the_minimum_rtt_keeps_the_smallest_sample_within_its_window() {
        let mut r = rtt();
        r.sample(50_000, 50_000, 0, 1, 2);
        r.sample(40_000, 40_000, 1, 1, 2);
        r.sample(60_000, 60_000, 2, 1, 2);
        assert_eq!(r.min_rtt_us(), 40_000);
        r.sample(60_000, 60_000, 1 + MIN_RTT_WINDOW + 1, 1, 2);
        assert_eq!(r.min_rtt_us(), 60_000);
    }
}
