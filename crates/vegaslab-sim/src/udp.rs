//! UDP sources and sinks: open-loop traffic (ns-2 `Agent/UDP` driven by an
//! `Application/Traffic/*` generator, received by an `Agent/Null`-like counter).
//!
//! A source sends `packet_size`-byte packets (the wire size; ns-2's UDP agent adds no header)
//! at the times its generator gives, from `start` until `stop` (a send due exactly at `stop`
//! is not made). Generators follow ns-2.35 (`tools/cbr_traffic.cc`, `expoo.cc`, `pareto.cc`,
//! `trafgen.cc`):
//!
//! - **CBR** sends its first packet at `start`, then one every `interval` (optionally with
//!   ns-2's `random_` jitter, uniform in +-interval/2).
//! - **ON/OFF** (exponential or Pareto) works in whole packets: a burst of N packets spaced
//!   by `interval = packet_size x 8 / rate`, then an idle gap of one interval plus an OFF
//!   time. N is the ON-time draw in packets (mean `mean_on / interval`) rounded to the
//!   nearest integer, at least 1. As in ns-2's `TrafficGenerator::start`, the first gap is
//!   drawn at `start`, so a source begins with an OFF period: its first packet leaves at
//!   `start + interval + OFF`. The Pareto source draws N from a Pareto of scale
//!   `mean_burst x (shape - 1) / shape` and OFF from one of scale `mean_off x (shape - 1) / shape`,
//!   so the means are the given ones.
//!
//! **Load** (the RoVegas paper: Chan et al., "Design and performance evaluation of an improved
//! TCP congestion avoidance scheme", section 4: "VBR sources ... exponentially distributed ON-OFF
//! ... average ON period 10 ms ... 2 Mbit/s" with the mean rate "set by the load", 0.9 ->
//! 900 kbit/s on its 1 Mbit/s router links): the mean rate r = load x reference bandwidth (by
//! default the narrowest link direction on the source's path). One ON/OFF cycle sends E[N]
//! packets in E[N] x interval + mean OFF, so r = peak x E[N] x interval / (E[N] x interval +
//! OFF), i.e. OFF = E[N] x interval x (peak / r - 1). E[N] is the exact mean of ns-2's rounded
//! burst, max(1, round(X)) with X exponential of mean m = mean_on / interval:
//! E[N] = e^(-1/2m) / (1 - e^(-1/m)) + (1 - e^(-1/2m)); with m = 2.5 (10 ms at 2 Mbit/s, 1000-byte
//! packets) E[N] = 2.66 rather than 2.5, and using the nominal 2.5 would overshoot a 900 kbit/s
//! target by 3.5%. Load 0 is a silent source (the zero point of RoVegas's load sweeps).
//!
//! Random streams: source `i` draws from `rng::stream(seed, 3 << 32 | i)` (see `sim/build.rs`).

use crate::scenario::{OffTime, UdpModel, UdpSpec};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use vegaslab_cc::Nanos;

/// An exponential draw of mean `mean` (inverse transform, as ns-2's `ExponentialRandomVariable`).
#[inline]
pub fn exponential(rng: &mut ChaCha8Rng, mean: f64) -> f64 {
    let u: f64 = rng.gen(); // [0, 1)
    -mean * (1.0 - u).ln()
}

/// A Pareto draw of scale (minimum) `scale` and shape `shape`: scale / U^(1/shape), as ns-2's
/// `RNG::pareto`.
#[inline]
pub fn pareto_scaled(rng: &mut ChaCha8Rng, scale: f64, shape: f64) -> f64 {
    let u: f64 = rng.gen();
    scale / (1.0 - u).powf(1.0 / shape)
}

/// A Pareto draw with the given mean (shape > 1): scale = mean x (shape - 1) / shape.
#[inline]
pub fn pareto_mean(rng: &mut ChaCha8Rng, mean: f64, shape: f64) -> f64 {
    pareto_scaled(rng, mean * (shape - 1.0) / shape, shape)
}

/// Mean of ns-2's exponential burst length in packets, max(1, int(X + 0.5)) for X
/// exponential with mean `m` (see the module documentation).
pub fn ns2_mean_exp_burst(m: f64) -> f64 {
    if m <= 0.0 {
        return 1.0;
    }
    let half = (-0.5 / m).exp();
    half / (1.0 - (-1.0 / m).exp()) + (1.0 - half)
}

/// Counters of one source and its sink.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UdpStats {
    pub sent_pkts: u64,
    pub sent_bytes: u64,
    pub received_pkts: u64,
    pub received_bytes: u64,
    pub dropped_pkts: u64,
    pub dropped_bytes: u64,
}

#[derive(Clone, Debug)]
enum Generator {
    /// Never sends (load 0).
    Silent,
    /// Times in nanoseconds.
    Cbr { interval: f64, random: bool },
    ExpOnOff { interval: f64, mean_burst: f64, mean_off: f64, rem: u64 },
    ParetoOnOff { interval: f64, burst_scale: f64, off_scale: f64, shape: f64, rem: u64 },
}

pub struct UdpSource {
    pub name: String,
    pub model: &'static str,
    pub src: u32,
    pub dst: u32,
    pub start: Nanos,
    pub stop: Option<Nanos>,
    pub packet_size: u32,
    /// Long-run mean sending rate the parameters imply, bit/s (before rounding effects for
    /// the Pareto source), for the results table.
    pub nominal_rate_bps: f64,
    gen: Generator,
    rng: ChaCha8Rng,
    /// Time of the next send, nanoseconds as f64 (ns-2 accumulates double seconds; integer
    /// rounding happens once per send, so spacing errors never accumulate).
    next_at: f64,
    /// Sequence number of the next packet.
    pub seq: i64,
    pub stats: UdpStats,
}

impl UdpSource {
    /// `path_min_bps`: the narrowest link direction on the source's path, the default load
    /// reference. Errors are `(field, message)` for the scenario's `udp[i]` entry.
    pub fn new(spec: &UdpSpec, path_min_bps: f64, rng: ChaCha8Rng) -> Result<Self, (&'static str, String)> {
        let bits = spec.packet_size as f64 * 8.0;
        let (model, gen, nominal) = match &spec.model {
            UdpModel::Cbr { interval, random } => ("cbr", Generator::Cbr { interval: interval * 1e9, random: *random }, bits / interval),
            UdpModel::ExpOnOff { rate_bps, mean_on, off } => {
                let interval = bits / rate_bps;
                let m = mean_on / interval;
                let mean_burst_time = ns2_mean_exp_burst(m) * interval;
                let mean_off = match off {
                    OffTime::Mean(s) => *s,
                    OffTime::MeanRate(r) => off_for_rate(mean_burst_time, *rate_bps, *r),
                    OffTime::Load { load, reference_bps } => {
                        let r = load * reference_bps.unwrap_or(path_min_bps);
                        if r > *rate_bps {
                            return Err((
                                "load",
                                format!("gives a mean rate of {r} bit/s (load x {} bit/s), above the rate while ON ({rate_bps} bit/s)", reference_bps.unwrap_or(path_min_bps)),
                            ));
                        }
                        off_for_rate(mean_burst_time, *rate_bps, r)
                    }
                };
                let gen = if mean_off.is_infinite() {
                    Generator::Silent
                } else {
                    Generator::ExpOnOff { interval: interval * 1e9, mean_burst: m, mean_off: mean_off * 1e9, rem: 0 }
                };
                let nominal = if mean_off.is_infinite() { 0.0 } else { rate_bps * mean_burst_time / (mean_burst_time + mean_off) };
                ("exp-onoff", gen, nominal)
            }
            UdpModel::ParetoOnOff { rate_bps, mean_on, mean_off, shape } => {
                let interval = bits / rate_bps;
                let k = (shape - 1.0) / shape;
                let gen = Generator::ParetoOnOff {
                    interval: interval * 1e9,
                    burst_scale: mean_on / interval * k,
                    off_scale: mean_off * 1e9 * k,
                    shape: *shape,
                    rem: 0,
                };
                ("pareto-onoff", gen, rate_bps * mean_on / (mean_on + mean_off))
            }
        };
        Ok(UdpSource {
            name: spec.name.clone(),
            model,
            src: spec.from as u32,
            dst: spec.to as u32,
            start: spec.start,
            stop: spec.stop,
            packet_size: spec.packet_size,
            nominal_rate_bps: nominal,
            gen,
            rng,
            next_at: spec.start as f64,
            seq: 0,
            stats: UdpStats::default(),
        })
    }

    /// When the first packet leaves, if ever.
    pub fn first_send(&mut self) -> Option<Nanos> {
        match self.gen {
            Generator::Silent => None,
            Generator::Cbr { .. } => Some(self.start),
            _ => {
                self.next_at = self.start as f64 + self.next_interval();
                Some(self.next_at.round() as Nanos)
            }
        }
    }

    /// Whether a send due at `t` happens (before `stop`).
    #[inline]
    pub fn sends_at(&self, t: Nanos) -> bool {
        self.stop.is_none_or(|s| t < s)
    }

    /// Account for one packet sent now; returns its sequence number and when the next leaves.
    pub fn sent(&mut self) -> (i64, Nanos) {
        let seq = self.seq;
        self.seq += 1;
        self.stats.sent_pkts += 1;
        self.stats.sent_bytes += self.packet_size as u64;
        let before = self.next_at;
        self.next_at += self.next_interval();
        if self.next_at <= before || self.next_at.is_nan() {
            // A gap below the clock's float resolution this late in a run (or a NaN): time must
            // still move on, or the source would send at one instant forever.
            self.next_at = before.next_up();
        }
        (seq, self.next_at.round() as Nanos)
    }

    /// ns-2 `next_interval()`: the gap to the next packet, nanoseconds.
    fn next_interval(&mut self) -> f64 {
        match &mut self.gen {
            Generator::Silent => f64::INFINITY,
            Generator::Cbr { interval, random } => {
                let mut t = *interval;
                if *random {
                    let u: f64 = self.rng.gen();
                    t += *interval * (u - 0.5);
                }
                t
            }
            Generator::ExpOnOff { interval, mean_burst, mean_off, rem } => {
                let mut t = *interval;
                if *rem == 0 {
                    *rem = ((exponential(&mut self.rng, *mean_burst) + 0.5) as u64).max(1);
                    t += exponential(&mut self.rng, *mean_off);
                }
                *rem -= 1;
                t
            }
            Generator::ParetoOnOff { interval, burst_scale, off_scale, shape, rem } => {
                let mut t = *interval;
                if *rem == 0 {
                    let n = pareto_scaled(&mut self.rng, *burst_scale, *shape) + 0.5;
                    *rem = (n.min(1e18) as u64).max(1);
                    t += pareto_scaled(&mut self.rng, *off_scale, *shape);
                }
                *rem -= 1;
                t
            }
        }
    }
}

/// Mean OFF time (s) giving mean rate `r` for bursts of mean duration `burst` (s) at `peak`;
/// infinite (a silent source) for r = 0.
fn off_for_rate(burst: f64, peak: f64, r: f64) -> f64 {
    if r <= 0.0 {
        f64::INFINITY
    } else {
        (burst * (peak / r - 1.0)).max(0.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::stream;

    fn spec(model: UdpModel) -> UdpSpec {
        UdpSpec { name: "u".into(), from: 0, to: 1, start: 1_000_000_000, stop: None, packet_size: 1000, model }
    }

    #[test]
    fn ns2_exponential_burst_mean_accounts_for_rounding_and_the_minimum_of_one() {
        // Monte Carlo of max(1, int(X + 0.5)), X ~ Exp(2.5).
        let mut rng = stream(9, 1);
        let n = 400_000;
        let sum: u64 = (0..n).map(|_| ((exponential(&mut rng, 2.5) + 0.5) as u64).max(1)).sum();
        let mc = sum as f64 / n as f64;
        let exact = ns2_mean_exp_burst(2.5);
        assert!((mc - exact).abs() < 0.01, "{mc} vs {exact}");
        assert!((exact - 2.664).abs() < 0.001, "{exact}");
    }

    #[test]
    fn cbr_sends_at_start_then_every_interval() {
        let mut s = UdpSource::new(&spec(UdpModel::Cbr { interval: 0.004, random: false }), 1e6, stream(1, 3 << 32)).unwrap();
        assert_eq!(s.first_send(), Some(1_000_000_000));
        let times: Vec<Nanos> = (0..3).map(|_| s.sent().1).collect();
        assert_eq!(times, vec![1_004_000_000, 1_008_000_000, 1_012_000_000]);
        assert_eq!(s.stats.sent_pkts, 3);
    }

    #[test]
    fn a_load_of_point_nine_gives_900_kbps_on_a_1_mbps_reference() {
        let model = UdpModel::ExpOnOff { rate_bps: 2e6, mean_on: 0.010, off: OffTime::Load { load: 0.9, reference_bps: None } };
        let mut s = UdpSource::new(&spec(model), 1e6, stream(1, 3 << 32)).unwrap();
        assert!((s.nominal_rate_bps - 900e3).abs() < 1e-6);
        let first = s.first_send().unwrap();
        let mut last = first;
        for _ in 0..200_000 {
            last = s.sent().1;
        }
        let rate = s.stats.sent_bytes as f64 * 8.0 / ((last - first) as f64 / 1e9);
        assert!((rate / 900e3 - 1.0).abs() < 0.01, "measured {rate}");
    }

    #[test]
    fn load_zero_is_a_silent_source_and_too_much_load_is_an_error() {
        let model = |load| UdpModel::ExpOnOff { rate_bps: 2e6, mean_on: 0.010, off: OffTime::Load { load, reference_bps: None } };
        let mut s = UdpSource::new(&spec(model(0.0)), 1e6, stream(1, 3 << 32)).unwrap();
        assert_eq!(s.first_send(), None);
        let err = UdpSource::new(&spec(model(2.5)), 1e6, stream(1, 3 << 32)).err().unwrap();
        assert_eq!(err.0, "load");
    }

    #[test]
    fn pareto_onoff_means_match_the_parameters() {
        // 1000-byte packets at 8 Mbit/s: 1 ms apart; ON 30 ms, OFF 70 ms -> mean rate 2.4 Mbit/s.
        let model = UdpModel::ParetoOnOff { rate_bps: 8e6, mean_on: 0.030, mean_off: 0.070, shape: 1.9 };
        let mut s = UdpSource::new(&spec(model), 1e6, stream(2, 3 << 32)).unwrap();
        assert!((s.nominal_rate_bps - 2.4e6).abs() < 1e-3);
        let first = s.first_send().unwrap();
        let mut last = first;
        for _ in 0..400_000 {
            last = s.sent().1;
        }
        let rate = s.stats.sent_bytes as f64 * 8.0 / ((last - first) as f64 / 1e9);
        // Heavy tails converge slowly; the rounding of bursts adds a little.
        assert!((rate / 2.4e6 - 1.0).abs() < 0.1, "measured {rate}");
    }
}
