//! RoVegas (the RoVegas paper: Chan et al., "Design and performance evaluation of an improved
//! TCP congestion avoidance scheme", section 3; docs/papers.md): Vegas whose rounds discount
//! the queueing time that AQT-enabled routers stamp into probing packets, so that congestion
//! on the backward path is not taken for congestion on the forward path.
//!
//! RoVegas is classic Vegas' rule ([`Classic`]) plus the router-assist input ([`RouterAssist`]):
//! the controller marks probing packets (`tag_segment`; the AQT option travels on the wire)
//! and reads the queueing times their ACKs carry. The sender knows nothing of it.
//!
//! The paper states its rule with cwnd and one RTT; ns-2's agent, which the authors extended
//! (ns-2.1b9a), computes per round with the mean RTT, packets sent in the round (actual) and
//! packets outstanding (expected). We keep ns-2's round and apply the paper's two changes to
//! it: (1) baseRTT = min over probing ACKs of RTT - (AQT + AQT-echo), plain RTT otherwise
//! (per sample, and for the round-end check with the round's mean queueing times);
//! (2) actual' = rttLen / (rtt - QT_b), QT_b the mean backward queueing time (AQT) of the
//! round's probing ACKs. diff and the +1 / -1 / hold rule are then Vegas' own.
//!
//! # The Linux flavour ([`RoVegasLinuxRule`])
//!
//! Classic Linux Vegas ([`crate::vegas_linux`], integer µs, whole packets) with the same two
//! changes, through the machinery's router-assist hooks. Queueing times arrive in seconds from
//! the simulated routers and are taken in whole µs, truncated ([`queueing_us`]), as an AQT
//! option would carry them.
//! (1) The baseRTT candidate of a probing sample is its RTT (µs + 1, as every Linux sample)
//! minus AQT + AQT-echo, saturating at 1 µs ([`LinuxRule::sample_base_rtt_us`]); a sample
//! without queueing times is its own candidate.
//! (2) The round's diff uses minRTT - QT_b ([`LinuxRule::round_rtt_us`]), QT_b the mean AQT of
//! the round's probing ACKs in integer µs (sum / count, truncated); when QT_b is not below
//! minRTT (inconsistent stamps) the minimum is kept, as the ns-2 form keeps the mean RTT.
//! The sums restart with every round ([`LinuxRule::round_reset`]). Thresholds compare as
//! integers (ceil(alpha), floor(beta), [`crate::vegas_linux::Thresholds`]).
//!
//! **Linux flavour: where the integer form decides differently from the ns-2 form.**
//!
//! 1. *Minimum RTT minus mean QT_b, not mean RTT minus mean QT_b.* ns-2's actual' =
//!    rttLen / (mean RTT - QT_b); Linux's diff = cwnd x (minRTT - QT_b - baseRTT) / baseRTT.
//!    With QT_b varying inside a round, the sample holding the minimum RTT need not have the
//!    mean backward queueing, so the two can see different forward queueing.
//! 2. *No round-end baseRTT check.* ns-2 also tries mean RTT - (mean QT_b + mean QT_f) as a
//!    baseRTT candidate at each round's end, and takes it unconditionally when the round
//!    sent at most one packet; Linux takes only the per-sample candidates (baseRTT = all-time
//!    minimum, as `tcp_vegas.c`).
//! 3. *Saturation.* ns-2's candidate rtt - (QT_b + QT_f) may go to 0 or below (baseRTT <= 0
//!    then stalls its diff); Linux's saturates at 1 µs.
//! 4. *Truncation.* Queueing times, RTTs and diff are truncated to whole µs / packets; ns-2
//!    rounds delta to the nearest packet.
//! 5. *+1 at once, decrease lowers ssthresh, Linux slow start and Reno below three samples*,
//!    as for classic Vegas in the Linux flavour.

use crate::config::{TcpConfig, VariantFlavour};
use crate::controller::{CongestionControl, QueueingTimes};
use crate::heuristics::{read_alpha_beta, with_heuristic};
use crate::params::{params_allowed, AlgorithmParams, Param, ParamError, ParamKind, ParamSource, SenderKind};
use crate::controller::RttSample;
use crate::vegas::{read_gamma, read_variant_flavour, sender_for, Classic, ALPHA, BETA, GAMMA, VARIANT_FLAVOUR};
use crate::vegas_linux::{queueing_us, LinuxAction, LinuxRound, LinuxRule, LinuxVegas};
use crate::vegas_ns2::{CaAction, Ns2Vegas, Round, VegasRule};
use serde::{Deserialize, Serialize};

/// RoVegas parameters.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RoVegasParams {
    /// Thresholds, in packets (the paper: alpha 1, beta 3).
    pub alpha: f64,
    pub beta: f64,
    pub gamma: f64,
    /// Every n-th data packet carries the AQT option (1 = every packet, the default: the
    /// paper does not say how often RoVegas probes).
    pub probe_every: u32,
    /// Bytes the AQT IP option adds to a probing packet: type and length (1 byte each), AQT
    /// and AQT-echo (4 bytes each), padded to a 4-byte multiple = 12. The paper's Fig. 1 gives
    /// the fields but not their sizes.
    pub option_bytes: u32,
    /// ns2 (default; left out of the normalised scenario) or linux.
    #[serde(default, skip_serializing_if = "VariantFlavour::is_ns2")]
    pub flavour: VariantFlavour,
}

impl Default for RoVegasParams {
    fn default() -> Self {
        RoVegasParams { alpha: 1.0, beta: 3.0, gamma: 1.0, probe_every: 1, option_bytes: 12, flavour: VariantFlavour::Ns2 }
    }
}

/// The router-assist input: which packets probe, and the queueing times their ACKs report.
#[derive(Clone, Debug, PartialEq)]
pub struct RouterAssist {
    pub probe_every: u32,
    pub option_bytes: u32,
    sent: u64,
    backward_sum: f64,
    forward_sum: f64,
    probes: u32,
}

impl RouterAssist {
    pub fn new(probe_every: u32, option_bytes: u32) -> Self {
        RouterAssist { probe_every: probe_every.max(1), option_bytes, sent: 0, backward_sum: 0.0, forward_sum: 0.0, probes: 0 }
    }

    /// Every `probe_every`-th segment probes and carries the option.
    pub fn tag_segment(&mut self) -> Option<u32> {
        let probe = self.sent.is_multiple_of(self.probe_every as u64);
        self.sent += 1;
        probe.then_some(self.option_bytes)
    }

    /// A probing ACK's queueing times join the round's sums.
    pub fn record(&mut self, q: QueueingTimes) {
        self.backward_sum += q.backward;
        self.forward_sum += q.forward;
        self.probes += 1;
    }

    /// The round's mean (backward, forward) queueing times, 0 without probing ACKs; resets.
    pub fn take_round_means(&mut self) -> (f64, f64) {
        if self.probes == 0 {
            return (0.0, 0.0);
        }
        let n = self.probes as f64;
        let q = (self.backward_sum / n, self.forward_sum / n);
        (self.backward_sum, self.forward_sum, self.probes) = (0.0, 0.0, 0);
        q
    }
}

/// RoVegas' ns-2 rule: classic Vegas with the router-assist input.
#[derive(Clone, Debug, PartialEq)]
pub struct RoVegasRule {
    pub classic: Classic,
    pub assist: RouterAssist,
}

impl VegasRule for RoVegasRule {
    fn name(&self) -> &'static str {
        "rovegas"
    }
    fn congestion_avoidance(&mut self, r: &Round) -> CaAction {
        self.classic.decide(r)
    }
    fn variables(&self, out: &mut Vec<(&'static str, f64)>) {
        out.extend([("alpha", self.classic.alpha), ("beta", self.classic.beta)]);
    }
    fn tag_segment(&mut self) -> Option<u32> {
        self.assist.tag_segment()
    }
    /// A probing ACK's RTT without its queueing sets baseRTT (the RoVegas paper, section 3,
    /// baseRTT pseudo-code).
    fn sample_base_rtt(&mut self, rtt: f64, queueing: Option<QueueingTimes>) -> f64 {
        match queueing {
            Some(q) => {
                self.assist.record(q);
                rtt - (q.backward + q.forward)
            }
            None => rtt,
        }
    }
    fn round_queueing(&mut self) -> (f64, f64) {
        self.assist.take_round_means()
    }
}

/// RoVegas' Linux rule: classic Linux Vegas with the router-assist input in integer µs
/// (module docs, "The Linux flavour").
#[derive(Clone, Debug, PartialEq)]
pub struct RoVegasLinuxRule {
    pub classic: Classic,
    /// Which segments probe (its float sums are the ns-2 form's and stay unused here).
    pub assist: RouterAssist,
    /// Sum of the round's probing ACKs' backward queueing (AQT), µs.
    backward_sum_us: u64,
    /// Probing ACKs in the round.
    probes: u64,
}

impl RoVegasLinuxRule {
    pub fn new(classic: Classic, assist: RouterAssist) -> Self {
        RoVegasLinuxRule { classic, assist, backward_sum_us: 0, probes: 0 }
    }
}

impl LinuxRule for RoVegasLinuxRule {
    fn name(&self) -> &'static str {
        "rovegas"
    }
    fn congestion_avoidance(&mut self, r: &LinuxRound) -> LinuxAction {
        LinuxRule::congestion_avoidance(&mut self.classic, r)
    }
    fn variables(&self, out: &mut Vec<(&'static str, f64)>) {
        out.extend([("alpha", self.classic.alpha), ("beta", self.classic.beta)]);
    }
    fn tag_segment(&mut self) -> Option<u32> {
        self.assist.tag_segment()
    }
    /// A probing sample's RTT without its queueing, at least 1 µs (point (1)).
    fn sample_base_rtt_us(&mut self, rtt_us: u64, sample: &RttSample) -> u64 {
        match sample.queueing {
            Some(q) => {
                let backward = queueing_us(q.backward);
                self.backward_sum_us += backward;
                self.probes += 1;
                rtt_us.saturating_sub(backward + queueing_us(q.forward)).max(1)
            }
            None => rtt_us,
        }
    }
    /// minRTT - mean QT_b of the round's probes; the minimum when that is not positive.
    fn round_rtt_us(&mut self, min_rtt_us: u64) -> u64 {
        if self.probes == 0 {
            return min_rtt_us;
        }
        let mean_backward = self.backward_sum_us / self.probes;
        if mean_backward < min_rtt_us {
            min_rtt_us - mean_backward
        } else {
            min_rtt_us
        }
    }
    fn round_reset(&mut self) {
        self.backward_sum_us = 0;
        self.probes = 0;
    }
}

impl AlgorithmParams for RoVegasParams {
    fn controller(&self, _cfg: &TcpConfig) -> Box<dyn CongestionControl> {
        let classic = Classic { alpha: self.alpha, beta: self.beta };
        let assist = RouterAssist::new(self.probe_every, self.option_bytes);
        match self.flavour {
            VariantFlavour::Ns2 => Box::new(Ns2Vegas::new(RoVegasRule { classic, assist }, self.gamma)),
            VariantFlavour::Linux => Box::new(LinuxVegas::new(RoVegasLinuxRule::new(classic, assist), self.gamma)),
        }
    }
    fn sender(&self) -> SenderKind {
        sender_for(self.flavour.into())
    }
    fn router_assist(&self) -> Option<u32> {
        Some(self.option_bytes)
    }
    fn clone_box(&self) -> Box<dyn AlgorithmParams> {
        Box::new(*self)
    }
}

/// `params.probe_every`: every how many packets one carries the AQT option.
pub static PROBE_EVERY: Param = Param {
    name: "probe_every",
    kind: ParamKind::Integer { lo: 1, hi: 1_000_000 },
    unit: "packets",
    doc: "one packet in this many is a probing packet that routers stamp",
    cite: "the RoVegas paper, section 3 (which packets probe is left open; every packet by default)",
};

/// `params.option_bytes`: the size of the AQT option a probing packet carries.
pub static OPTION_BYTES: Param = Param {
    name: "option_bytes",
    kind: ParamKind::Integer { lo: 0, hi: 40 },
    unit: "bytes",
    doc: "bytes the AQT option adds to a probing packet and its ACK (IP options take at most 40)",
    cite: "the RoVegas paper, section 3 and Fig. 1 (the AQT option); RFC 791 section 3.1 (IP options)",
};

/// RoVegas' parameters, in the order the docs list them.
pub fn params() -> Vec<&'static Param> {
    with_heuristic(&[&ALPHA, &BETA, &GAMMA, &PROBE_EVERY, &OPTION_BYTES, &VARIANT_FLAVOUR])
}

/// The registry's reader for `cc = "rovegas"`.
pub fn read(p: &dyn ParamSource) -> Result<Box<dyn AlgorithmParams>, ParamError> {
    let mut r = RoVegasParams::default();
    p.deny_unknown(&params_allowed(&params()))?;
    r.flavour = read_variant_flavour(p, "RoVegas")?;
    read_alpha_beta(p, (&ALPHA, &BETA), &mut r.alpha, &mut r.beta)?;
    r.gamma = read_gamma(p, r.gamma)?;
    r.probe_every = PROBE_EVERY.integer(p)?.map(|x| x as u32).unwrap_or(r.probe_every);
    r.option_bytes = OPTION_BYTES.integer(p)?.map(|x| x as u32).unwrap_or(r.option_bytes);
    Ok(Box::new(r))
}
