//! CUBIC with HyStart, as Linux's `net/ipv4/tcp_cubic.c` (v2.3, upstream as of 2025,
//! including the HyStart round-start fix of commit 25c1a9ca53db) decides, in integer kernel
//! units, for the NewReno sender (`SenderKind::TcpAgent { newreno: true }`) or Linux's stack.
//!
//! The reference for what the curve *should* be is RFC 9438; the tests in `tests/cubic.rs`
//! check this integer form against values computed by hand from the RFC's real-number
//! formulas. Behaviour, paraphrased (RFC 9438 sections in brackets):
//!
//! - **Window increase** [4.2]: after a loss, an *epoch* starts on the first `cong_avoid`.
//!   `W_max` is the window before the loss; `K = cbrt((W_max - cwnd_epoch) / C)` is the time
//!   the curve takes to climb back to it; the target `W(t) = C (t - K)^3 + W_max` is evaluated
//!   one minimum RTT ahead (`t + delay_min`, the RFC's `W_cubic(t + RTT)`), and cwnd grows by
//!   one packet every `cnt = cwnd / (target - cwnd)` acknowledged packets (at most one packet
//!   per two acknowledged, the RFC's 1.5 cwnd cap; `100 cwnd` when the target is not above
//!   cwnd). Before the first loss (`W_max` = 0) the curve starts at cwnd with K = 0, and cnt
//!   is at most 20 (5% per round).
//! - **Reno-friendly region** [4.3]: an estimate of what Reno with the same beta would have,
//!   `W_est`, grows by one packet per `cwnd * 15 / 8` acknowledged packets (Linux's
//!   `beta_scale`, the integer form of `1 / alpha_cubic`); when `W_est` > cwnd, cnt is lowered
//!   to `cwnd / (W_est - cwnd)`.
//! - **Multiplicative decrease** [4.6]: ssthresh = `max(cwnd * beta / 1024, 2)` with beta
//!   717 (0.7002); after a fast retransmit cwnd continues from ssthresh (the end of Linux's
//!   rate-halving reduction), after a timeout from 1.
//! - **Fast convergence** [4.7]: a loss below the previous `W_max` sets
//!   `W_max = cwnd * (1024 + beta) / 2048` instead of cwnd.
//! - **Timeout** [4.8]: `set_state(Loss)` forgets everything (W_max, epoch, minimum RTT,
//!   HyStart), as Linux's `bictcp_reset`.
//! - **Slow start** [4.10; Linux uses its own HyStart, not the RFC's HyStart++]: cwnd grows
//!   by the packets acknowledged, not beyond ssthresh (`tcp_slow_start`); what is left of the
//!   ACK goes to the cubic increase (`tcp_cong_avoid_ai`). HyStart ends slow start
//!   (ssthresh = cwnd) once cwnd >= `hystart_low_window` and, within one round, either the
//!   ACKs keep arriving within `hystart_ack_delta_us` of each other for longer than half the
//!   minimum RTT (ack train), or the minimum of the round's first 8 RTT samples exceeds the
//!   all-time minimum by `clamp(delay_min / 8, 4 ms, 16 ms)` (delay increase). A round ends
//!   on the first ACK of a packet sent after it began (`snd_una > end_seq`, here
//!   `last_ack >= end_seq` with `end_seq` = [`Window::next_seq`] at the round's start).
//! - **Idle restart**: `cwnd_event(TxStart)` moves the epoch forward by the idle time, so the
//!   curve resumes where it left off.
//! - **Undo**: `undo_cwnd` is Linux's `tcp_reno_undo_cwnd`, `max(cwnd, cwnd at the loss)`.
//!
//! # Units and integer choices (where this can differ from RFC 9438's real numbers)
//!
//! - **Clock: microseconds** (`now / 1000`, truncated) for everything, as if the kernel ran
//!   at HZ = 1,000,000. Modern Linux keeps HyStart on the microsecond `tcp_mstamp` but the
//!   epoch on jiffies (HZ 100..1000); a µs epoch clock makes the curve independent of HZ.
//!   Consequences: the epoch time is quantised to 1 µs before the conversion to 1/1024 s
//!   (Linux HZ=1000: 1 ms first, so a kernel can lag this curve by up to 1 ms); "at most
//!   once per jiffy" becomes "at most once per µs"; the `HZ / 32` recomputation interval is
//!   31,250 µs; the "1 second after an epoch starts" RTT-sample discard is 1,000,000 µs.
//!   Times are `u64` and never wrap (Linux's `u32` jiffies/µs wrap; not reachable here).
//!   "No epoch" is `None` rather than Linux's `epoch_start == 0`.
//! - **Curve time in 1/1024 s** (`BICTCP_HZ` = 10): `t = ((now - epoch + delay_min) << 10)
//!   / 10^6`, truncated: up to 1/1024 s (0.98 ms) behind the real t.
//! - **C = 410 / 1024 = 0.400390625**, not 0.4: Linux's `cube_rtt_scale = bic_scale * 10`
//!   with `bic_scale` 41; the curve is `target = origin ± (410 * |t - K|^3) >> 40` (t and K
//!   in 1/1024 s), truncated to whole packets (at most 1 packet below the real value
//!   above the origin, at most 1 above it below the origin).
//! - **K** = `icbrt(cube_factor * (W_max - cwnd))` in 1/1024 s, `cube_factor =
//!   floor(2^40 / (bic_scale * 10))` = 2,681,735,677: K for C = 0.40039 (0.033% shorter than
//!   for C = 0.4), then truncated by the integer cube root (< 1/1024 s). The root is exact
//!   (`floor(cbrt(x))`, restoring digit-by-digit, integer-only so a BPF program can compute
//!   it), not Linux's 64-entry table plus one Newton step, which approximates it to about
//!   0.2%: a kernel's K can differ from this one by that much.
//! - **beta = 717 / 1024 = 0.7002**: ssthresh = `floor(cwnd * 717 / 1024)`, within one
//!   packet below `0.7 cwnd` (e.g. cwnd 100: 70, RFC 70; cwnd 10: 7, RFC 7).
//! - **alpha_cubic**: Linux grows `W_est` by one per `floor(cwnd * 15 / 8)` ACKed packets,
//!   `15 = floor(8 (1024 + beta) / 3 / (1024 - beta))`: alpha = 8/15 = 0.5333 per round
//!   instead of the RFC's `3 (1 - 0.7) / (1 + 0.7)` = 0.5294 (0.74% faster), and `W_est`
//!   is a whole number of packets (up to 1 below the RFC's real value).
//! - **Overflow**: Linux computes `410 * offs^3` in 64 bits, which wraps once |t - K| passes
//!   about 5.7 minutes; here it is computed in 128 bits and the target saturates at
//!   `u32::MAX`. `cube_factor * (W_max - cwnd)` saturates at `u64::MAX` (unreachable with
//!   the default `bic_scale` below 6.8e9 packets).
//!
//! # Mapping to the simulated sender
//!
//! - The sender's cwnd is `f64` (ns-2) and may hold fractions after NewReno's partial-ACK
//!   deflation; every hook reads `floor(cwnd)` (at least 1) and writes whole packets. Linux's
//!   `snd_cwnd_cnt` (ACKed packets toward the next +1) is kept here.
//! - `w.max_window` is `snd_cwnd_clamp`.
//! - `cong_avoid` grows nothing when the sender is not cwnd-limited
//!   ([`Window::cwnd_limited`], Linux's `tcp_is_cwnd_limited` test at the top of
//!   `bictcp_cong_avoid`). ns-2's senders are bulk sources and always say they are.
//! - A HyStart exit sets ssthresh in `pkts_acked`, as Linux does, before the `cong_avoid`
//!   of the same ACK.
//! - HyStart's ack-train threshold is `delay_min / 2` with no TSO/GRO cushion: Linux adds
//!   `min(1 ms, 4 GSO-max-size segments at the pacing rate)` for aggregation delays the
//!   simulator does not have (no TSO, GRO or pacing; Linux halves the threshold only when not
//!   pacing, which is the case here).
//! - The idle shift uses the sender's last transmission time (`TxStart::last_send`, Linux's
//!   `lsndtime`).
//! - `set_state(Loss)` restarts the HyStart round at the last time the controller saw (an ACK
//!   or event); Linux uses the time of the timeout. Either way the first ACK after a timeout
//!   is more than `hystart_ack_delta_us` later, so the round's ack-train test is off.
//! - Initial ssthresh: Linux sockets start with ssthresh "infinite" (`0x7fffffff`); `init`
//!   sets that, replacing the scenario's ns-2 `window_`-based value, and Linux's
//!   `initial_ssthresh` applies only with HyStart off (as in the kernel).

use crate::config::TcpConfig;
use crate::controller::{Ack, CaState, CongestionControl, Cut, CwndEvent, Loss, LossKind};
use crate::controller::{RttSample, Window};
use crate::params::{params_allowed, AlgorithmParams, Param, ParamError, ParamKind, ParamSource, SenderKind};
use crate::Nanos;
use serde::Serialize;

/// `BICTCP_BETA_SCALE`: beta is in 1/1024.
const BETA_SCALE: u64 = 1024;
/// `BICTCP_HZ`: the curve's time unit is 1/2^10 s.
const CURVE_HZ_SHIFT: u32 = 10;
/// Microseconds per second: the clock's "HZ".
const USEC_PER_SEC: u64 = 1_000_000;
/// Linux recomputes the curve at most every HZ/32 when cwnd has not changed.
const RECOMPUTE_INTERVAL_US: u64 = USEC_PER_SEC / 32;
/// RTT samples within one second of an epoch's start are not used (right after recovery).
const SAMPLE_DISCARD_US: u64 = USEC_PER_SEC;
/// Linux's `TCP_INFINITE_SSTHRESH`.
pub const INFINITE_SSTHRESH: i64 = 0x7fff_ffff;
/// HyStart: samples per round that decide the round's minimum RTT.
pub const HYSTART_MIN_SAMPLES: u32 = 8;
/// HyStart delay threshold bounds, µs.
pub const HYSTART_DELAY_MIN_US: u64 = 4_000;
pub const HYSTART_DELAY_MAX_US: u64 = 16_000;
/// `hystart_detect` bits.
pub const HYSTART_ACK_TRAIN: u32 = 1;
pub const HYSTART_DELAY: u32 = 2;

/// CUBIC's parameters: Linux's module parameters, with Linux's defaults.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct CubicParams {
    /// Multiplicative decrease, in 1/1024 (717 = 0.7002, RFC 9438 beta_cubic 0.7).
    pub beta: u32,
    /// Lower W_max on a loss below the previous one (RFC 9438 section 4.7).
    pub fast_convergence: bool,
    /// Grow at least as fast as the Reno estimate W_est (RFC 9438 section 4.3).
    pub tcp_friendliness: bool,
    /// Hybrid slow start.
    pub hystart: bool,
    /// HyStart detectors: 1 ack train, 2 delay increase, 3 both.
    pub hystart_detect: u32,
    /// HyStart acts only from this cwnd (packets).
    pub hystart_low_window: u32,
    /// ACKs closer than this (µs) continue an ack train.
    pub hystart_ack_delta_us: u32,
    /// C in 1/1024 per 100 ms of RTT: C = bic_scale * 10 / 1024 (41: 0.4004).
    pub bic_scale: u32,
    /// ssthresh at the start, packets, used only with HyStart off; 0 = "infinite".
    pub initial_ssthresh: u32,
}

impl Default for CubicParams {
    fn default() -> Self {
        CubicParams {
            beta: 717,
            fast_convergence: true,
            tcp_friendliness: true,
            hystart: true,
            hystart_detect: HYSTART_ACK_TRAIN | HYSTART_DELAY,
            hystart_low_window: 16,
            hystart_ack_delta_us: 2000,
            bic_scale: 41,
            initial_ssthresh: 0,
        }
    }
}

impl AlgorithmParams for CubicParams {
    fn controller(&self, _cfg: &TcpConfig) -> Box<dyn CongestionControl> {
        Box::new(Cubic::new(self.clone()))
    }

    fn sender(&self) -> SenderKind {
        SenderKind::TcpAgent { newreno: true }
    }

    fn clone_box(&self) -> Box<dyn AlgorithmParams> {
        Box::new(self.clone())
    }
}

/// Linux's `tcp_cubic.c` module parameters, declared once: what `params` accepts and the docs
/// list (defaults: [`CubicParams::default`]).
pub static BETA: Param = Param {
    name: "beta",
    kind: ParamKind::Integer { lo: 1, hi: 1023 },
    unit: "1/1024",
    doc: "multiplicative decrease factor (717: 0.7); below 1024 so that a decrease decreases",
    cite: "RFC 9438 section 4.6 (beta_cubic 0.7); Linux tcp_cubic.c beta",
};
pub static FAST_CONVERGENCE: Param = Param {
    name: "fast_convergence",
    kind: ParamKind::Boolean,
    unit: "",
    doc: "lower W_max further on a loss below the previous one",
    cite: "RFC 9438 section 4.7; Linux tcp_cubic.c fast_convergence",
};
pub static TCP_FRIENDLINESS: Param = Param {
    name: "tcp_friendliness",
    kind: ParamKind::Boolean,
    unit: "",
    doc: "grow at least as fast as the Reno estimate W_est",
    cite: "RFC 9438 section 4.3; Linux tcp_cubic.c tcp_friendliness",
};
pub static HYSTART: Param = Param {
    name: "hystart",
    kind: ParamKind::Boolean,
    unit: "",
    doc: "hybrid slow start: leave slow start on an ACK train or a delay increase",
    cite: "Ha and Rhee 2011 (HyStart); Linux tcp_cubic.c hystart",
};
pub static HYSTART_DETECT: Param = Param {
    name: "hystart_detect",
    kind: ParamKind::Integer { lo: 0, hi: 3 },
    unit: "bits",
    doc: "HyStart detectors: 1 ACK train, 2 delay increase, 3 both",
    cite: "Linux tcp_cubic.c hystart_detect",
};
pub static HYSTART_LOW_WINDOW: Param = Param {
    name: "hystart_low_window",
    kind: ParamKind::Integer { lo: 1, hi: 1_000_000 },
    unit: "packets",
    doc: "HyStart acts only from this cwnd",
    cite: "Linux tcp_cubic.c hystart_low_window",
};
pub static HYSTART_ACK_DELTA_US: Param = Param {
    name: "hystart_ack_delta_us",
    kind: ParamKind::Integer { lo: 0, hi: 1_000_000 },
    unit: "µs",
    doc: "ACKs closer than this continue an ACK train",
    cite: "Linux tcp_cubic.c hystart_ack_delta_us",
};
pub static BIC_SCALE: Param = Param {
    name: "bic_scale",
    kind: ParamKind::Integer { lo: 1, hi: 1024 },
    unit: "10/1024",
    doc: "C = bic_scale * 10 / 1024 (41: 0.4); at least 1 so that the cube factor is finite",
    cite: "RFC 9438 section 4.2 (C = 0.4); Linux tcp_cubic.c bic_scale",
};
pub static INITIAL_SSTHRESH: Param = Param {
    name: "initial_ssthresh",
    kind: ParamKind::Integer { lo: 0, hi: INFINITE_SSTHRESH },
    unit: "packets",
    doc: "ssthresh at the start, used only with HyStart off; 0 means infinite",
    cite: "Linux tcp_cubic.c initial_ssthresh",
};

/// CUBIC's parameters, in the order the docs list them.
pub fn params() -> Vec<&'static Param> {
    vec![
        &BETA,
        &FAST_CONVERGENCE,
        &TCP_FRIENDLINESS,
        &HYSTART,
        &HYSTART_DETECT,
        &HYSTART_LOW_WINDOW,
        &HYSTART_ACK_DELTA_US,
        &BIC_SCALE,
        &INITIAL_SSTHRESH,
    ]
}

/// Read a scenario's `params` for `cc = "cubic"` over [`CubicParams::default`].
pub fn read(p: &dyn ParamSource) -> Result<Box<dyn AlgorithmParams>, ParamError> {
    p.deny_unknown(&params_allowed(&params()))?;
    let mut c = CubicParams::default();
    for (param, v) in [
        (&BETA, &mut c.beta),
        (&HYSTART_DETECT, &mut c.hystart_detect),
        (&HYSTART_LOW_WINDOW, &mut c.hystart_low_window),
        (&HYSTART_ACK_DELTA_US, &mut c.hystart_ack_delta_us),
        (&BIC_SCALE, &mut c.bic_scale),
        (&INITIAL_SSTHRESH, &mut c.initial_ssthresh),
    ] {
        if let Some(x) = param.integer(p)? {
            *v = x as u32;
        }
    }
    for (param, v) in [
        (&FAST_CONVERGENCE, &mut c.fast_convergence),
        (&TCP_FRIENDLINESS, &mut c.tcp_friendliness),
        (&HYSTART, &mut c.hystart),
    ] {
        if let Some(b) = param.boolean(p)? {
            *v = b;
        }
    }
    Ok(Box::new(c))
}

/// `floor(cbrt(x))`, exactly, in integer arithmetic (binary restoring method, one bit of the
/// root per step). See the module docs for why not Linux's table + Newton approximation.
pub fn cubic_root(x: u64) -> u64 {
    let mut rem = x;
    let mut root: u64 = 0;
    // 64 bits = 22 groups of 3 bits (the top group has one bit).
    let mut shift: i32 = 63;
    while shift >= 0 {
        root <<= 1;
        // (2r + 1)^3 - (2r)^3 = 12 r^2 + 6 r + 1, scaled: 3 * root * (root + 1) + 1 with
        // root already doubled.
        let step = 3 * root * (root + 1) + 1;
        if (rem >> shift) >= step {
            rem -= step << shift;
            root += 1;
        }
        shift -= 3;
    }
    root
}

/// CUBIC's per-connection state (Linux `struct bictcp` plus `snd_cwnd_cnt` and
/// `prior_cwnd`, which Linux keeps in the socket).
#[derive(Clone, Debug)]
pub struct Cubic {
    p: CubicParams,
    /// `beta_scale`: ACKed packets per W_est increment, in 1/8 of cwnd.
    beta_scale: u64,
    /// `cube_rtt_scale`: C in 1/1024.
    cube_rtt_scale: u64,
    /// `cube_factor`: 2^40 / (bic_scale * 10), so that K = cbrt(cube_factor * (W_max - cwnd)).
    cube_factor: u64,
    /// ACKed packets per +1 cwnd.
    cnt: u64,
    /// W_max, packets (`last_max_cwnd`).
    last_max_cwnd: u64,
    /// cwnd at the last curve computation, and when.
    last_cwnd: u64,
    last_time_us: u64,
    /// W_max of the current epoch's curve (or cwnd at its start before the first loss).
    origin_point: u64,
    /// K, 1/1024 s.
    k: u64,
    /// The all-time minimum RTT, µs (0: none yet).
    delay_min_us: u64,
    /// Start of the epoch, µs.
    epoch_start_us: Option<u64>,
    /// ACKed packets not yet counted into W_est.
    ack_cnt: u64,
    /// W_est, packets (`tcp_cwnd`).
    tcp_cwnd: u64,
    /// The last curve target, packets (for tests and the time series; Linux keeps it local).
    target: u64,
    /// HyStart.
    found: bool,
    sample_cnt: u32,
    round_start_us: u64,
    end_seq: i64,
    last_ack_us: u64,
    curr_rtt_us: u64,
    /// Linux `snd_cwnd_cnt`.
    cwnd_cnt: u64,
    /// Linux `prior_cwnd`: cwnd when the last loss was detected.
    prior_cwnd: u64,
    /// The last time the controller saw (an ACK, an RTT sample or an event), µs.
    last_seen_us: Option<u64>,
}

fn us(now: Nanos) -> u64 {
    now / 1000
}

/// The sender's cwnd in whole packets (floor, at least 1).
fn whole(cwnd: f64) -> u64 {
    if cwnd >= 1.0 {
        cwnd.floor() as u64
    } else {
        1
    }
}

impl Cubic {
    pub fn new(p: CubicParams) -> Self {
        let beta = p.beta as u64;
        let bic_scale = p.bic_scale.max(1) as u64;
        Cubic {
            beta_scale: 8 * (BETA_SCALE + beta) / 3 / (BETA_SCALE - beta).max(1),
            cube_rtt_scale: bic_scale * 10,
            cube_factor: (1u64 << (10 + 3 * CURVE_HZ_SHIFT)) / (bic_scale * 10),
            p,
            cnt: 0,
            last_max_cwnd: 0,
            last_cwnd: 0,
            last_time_us: 0,
            origin_point: 0,
            k: 0,
            delay_min_us: 0,
            epoch_start_us: None,
            ack_cnt: 0,
            tcp_cwnd: 0,
            target: 0,
            found: false,
            sample_cnt: 0,
            round_start_us: 0,
            end_seq: 0,
            last_ack_us: 0,
            curr_rtt_us: u64::MAX,
            cwnd_cnt: 0,
            prior_cwnd: 0,
            last_seen_us: None,
        }
    }

    pub fn params(&self) -> &CubicParams {
        &self.p
    }

    /// W_max, packets.
    pub fn w_max(&self) -> u64 {
        self.last_max_cwnd
    }

    /// K of the current epoch, in 1/1024 s.
    pub fn k_units(&self) -> u64 {
        self.k
    }

    /// The curve's target at the last computation, packets.
    pub fn target(&self) -> u64 {
        self.target
    }

    /// The Reno estimate W_est, packets.
    pub fn w_est(&self) -> u64 {
        self.tcp_cwnd
    }

    /// ACKed packets per +1 cwnd at the last computation.
    pub fn cnt(&self) -> u64 {
        self.cnt
    }

    /// The start of the current epoch, µs.
    pub fn epoch_start_us(&self) -> Option<u64> {
        self.epoch_start_us
    }

    /// The minimum RTT, µs (0: no sample yet).
    pub fn delay_min_us(&self) -> u64 {
        self.delay_min_us
    }

    /// Whether HyStart has ended slow start.
    pub fn hystart_found(&self) -> bool {
        self.found
    }

    /// `bictcp_reset`: forget the curve, the minimum RTT and HyStart's exit.
    fn reset(&mut self) {
        let fresh = Cubic::new(self.p.clone());
        *self = Cubic {
            round_start_us: self.round_start_us,
            end_seq: self.end_seq,
            last_ack_us: self.last_ack_us,
            curr_rtt_us: self.curr_rtt_us,
            sample_cnt: self.sample_cnt,
            cwnd_cnt: self.cwnd_cnt,
            prior_cwnd: self.prior_cwnd,
            last_seen_us: self.last_seen_us,
            ..fresh
        };
    }

    /// `bictcp_hystart_reset`: a new HyStart round starts now, ending once everything sent
    /// so far is acknowledged.
    fn hystart_reset(&mut self, now_us: u64, next_seq: i64) {
        self.round_start_us = now_us;
        self.last_ack_us = now_us;
        self.end_seq = next_seq;
        self.curr_rtt_us = u64::MAX;
        self.sample_cnt = 0;
    }

    /// `bictcp_update`: recompute `cnt` for a window of `cwnd` packets after `acked` packets.
    fn update(&mut self, cwnd: u64, acked: u64, now_us: u64) {
        self.ack_cnt += acked;

        if self.last_cwnd == cwnd
            && now_us.saturating_sub(self.last_time_us) <= RECOMPUTE_INTERVAL_US
        {
            return;
        }

        // The curve is recomputed at most once per clock tick; W_est still counts the ACK.
        if !(self.epoch_start_us.is_some() && now_us == self.last_time_us) {
            self.last_cwnd = cwnd;
            self.last_time_us = now_us;

            let epoch = match self.epoch_start_us {
                Some(e) => e,
                None => {
                    self.epoch_start_us = Some(now_us);
                    self.ack_cnt = acked;
                    self.tcp_cwnd = cwnd;
                    if self.last_max_cwnd <= cwnd {
                        self.k = 0;
                        self.origin_point = cwnd;
                    } else {
                        let gap = self.last_max_cwnd - cwnd;
                        self.k = cubic_root(self.cube_factor.saturating_mul(gap));
                        self.origin_point = self.last_max_cwnd;
                    }
                    now_us
                }
            };

            // t in 1/1024 s, one minimum RTT ahead.
            let t = ((now_us.saturating_sub(epoch) + self.delay_min_us) << CURVE_HZ_SHIFT)
                / USEC_PER_SEC;
            let offs = t.abs_diff(self.k) as u128;
            let delta =
                (self.cube_rtt_scale as u128 * offs * offs * offs) >> (10 + 3 * CURVE_HZ_SHIFT);
            let delta = delta.min(u32::MAX as u128) as u64;
            self.target = if t < self.k {
                self.origin_point.saturating_sub(delta)
            } else {
                (self.origin_point + delta).min(u32::MAX as u64)
            };

            self.cnt = if self.target > cwnd {
                cwnd / (self.target - cwnd)
            } else {
                100 * cwnd
            };
            // Before any loss the bandwidth is unknown: at least 5% per round.
            if self.last_max_cwnd == 0 && self.cnt > 20 {
                self.cnt = 20;
            }
        }

        if self.p.tcp_friendliness {
            // At least 1: Linux loops forever when `cwnd * beta_scale < 8` (beta near 0 and
            // cwnd 1..3); unreachable with the default beta.
            let per_packet = ((cwnd * self.beta_scale) >> 3).max(1);
            if self.ack_cnt > per_packet {
                let n = (self.ack_cnt - 1) / per_packet;
                self.ack_cnt -= n * per_packet;
                self.tcp_cwnd += n;
            }
            if self.tcp_cwnd > cwnd {
                let max_cnt = cwnd / (self.tcp_cwnd - cwnd);
                self.cnt = self.cnt.min(max_cnt);
            }
        }

        // At most +1 per 2 ACKed packets: 1.5 cwnd per round.
        self.cnt = self.cnt.max(2);
    }

    /// `hystart_update` for one RTT sample of `delay` µs with cwnd `cwnd`.
    fn hystart_update(&mut self, w: &mut Window, cwnd: u64, delay: u64, now_us: u64) {
        if w.last_ack + 1 > self.end_seq {
            self.hystart_reset(now_us, w.next_seq);
        }
        if cwnd < self.p.hystart_low_window as u64 {
            return;
        }
        if self.p.hystart_detect & HYSTART_ACK_TRAIN != 0
            && now_us.saturating_sub(self.last_ack_us) <= self.p.hystart_ack_delta_us as u64
        {
            self.last_ack_us = now_us;
            let threshold = self.delay_min_us >> 1;
            if now_us.saturating_sub(self.round_start_us) > threshold {
                self.found = true;
                w.ssthresh = cwnd as i64;
            }
        }
        if self.p.hystart_detect & HYSTART_DELAY != 0 {
            self.curr_rtt_us = self.curr_rtt_us.min(delay);
            if self.sample_cnt < HYSTART_MIN_SAMPLES {
                self.sample_cnt += 1;
            } else {
                let thresh =
                    (self.delay_min_us >> 3).clamp(HYSTART_DELAY_MIN_US, HYSTART_DELAY_MAX_US);
                if self.curr_rtt_us > self.delay_min_us + thresh {
                    self.found = true;
                    w.ssthresh = cwnd as i64;
                }
            }
        }
    }

    fn clamp(w: &Window) -> u64 {
        whole(w.max_window)
    }
}

impl CongestionControl for Cubic {
    fn name(&self) -> &'static str {
        "cubic"
    }

    fn init(&mut self, w: &mut Window) {
        let p = self.p.clone();
        *self = Cubic::new(p);
        w.cwnd = whole(w.cwnd).min(Self::clamp(w)) as f64;
        w.ssthresh = INFINITE_SSTHRESH;
        if self.p.hystart {
            self.hystart_reset(0, w.next_seq);
        } else if self.p.initial_ssthresh != 0 {
            w.ssthresh = self.p.initial_ssthresh as i64;
        }
    }

    fn pkts_acked(&mut self, w: &mut Window, sample: &RttSample) {
        let now = us(sample.now);
        self.last_seen_us = Some(now);
        let rtt = sample.rtt_us();
        if rtt < 0 {
            return;
        }
        if let Some(e) = self.epoch_start_us {
            if now.saturating_sub(e) < SAMPLE_DISCARD_US {
                return;
            }
        }
        let delay = (rtt as u64).max(1);
        if self.delay_min_us == 0 || self.delay_min_us > delay {
            self.delay_min_us = delay;
        }
        let cwnd = whole(w.cwnd);
        if !self.found && (cwnd as i64) < w.ssthresh && self.p.hystart {
            self.hystart_update(w, cwnd, delay, now);
        }
    }

    fn cong_avoid(&mut self, w: &mut Window, ack: &Ack) {
        let now = us(ack.now);
        self.last_seen_us = Some(now);
        if !w.cwnd_limited {
            return;
        }
        let clamp = Self::clamp(w);
        let mut cwnd = whole(w.cwnd);
        let mut acked = ack.acked.max(0) as u64;
        if (cwnd as i64) < w.ssthresh {
            // tcp_slow_start: grow by `acked`, not beyond ssthresh; the rest goes on below.
            let ssthresh = w.ssthresh.max(0) as u64;
            let grown = (cwnd + acked).min(ssthresh).max(cwnd);
            acked -= grown - cwnd;
            cwnd = grown.min(clamp);
            if acked == 0 {
                w.cwnd = cwnd.max(1) as f64;
                return;
            }
        }
        self.update(cwnd, acked, now);
        // tcp_cong_avoid_ai with w = cnt.
        let step = self.cnt;
        if self.cwnd_cnt >= step {
            self.cwnd_cnt = 0;
            cwnd += 1;
        }
        self.cwnd_cnt += acked;
        if self.cwnd_cnt >= step {
            let n = self.cwnd_cnt / step;
            self.cwnd_cnt -= n * step;
            cwnd += n;
        }
        w.cwnd = cwnd.min(clamp).max(1) as f64;
    }

    fn ssthresh(&mut self, w: &Window, loss: &Loss) -> Cut {
        let cwnd = whole(w.cwnd);
        // Linux's tcp_init_cwnd_reduction / tcp_enter_loss: remember the window for undo and
        // restart the additive-increase credit.
        self.prior_cwnd = cwnd;
        self.cwnd_cnt = 0;
        self.epoch_start_us = None;
        let beta = self.p.beta as u64;
        self.last_max_cwnd = if cwnd < self.last_max_cwnd && self.p.fast_convergence {
            cwnd * (BETA_SCALE + beta) / (2 * BETA_SCALE)
        } else {
            cwnd
        };
        let ssthresh = (cwnd * beta / BETA_SCALE).max(2);
        let cwnd = match loss.kind {
            LossKind::FastRetransmit => ssthresh.min(Self::clamp(w)),
            LossKind::Timeout => 1,
        };
        Cut {
            ssthresh: ssthresh as i64,
            cwnd: cwnd as f64,
        }
    }

    fn set_state(&mut self, w: &Window, state: CaState) {
        if state == CaState::Loss {
            self.reset();
            self.hystart_reset(self.last_seen_us.unwrap_or(0), w.next_seq);
        }
    }

    fn cwnd_event(&mut self, _w: &mut Window, event: CwndEvent) {
        if let CwndEvent::TxStart { now, last_send } = event {
            // bictcp_cwnd_event: shift the epoch by the idle time since the last send.
            let (now, last) = (us(now), us(last_send));
            if let Some(epoch) = self.epoch_start_us {
                if now > last {
                    self.epoch_start_us = Some((epoch + (now - last)).min(now));
                }
            }
            self.last_seen_us = Some(now);
        }
    }

    fn undo_cwnd(&mut self, w: &Window) -> f64 {
        whole(w.cwnd).max(self.prior_cwnd) as f64
    }

    fn variables(&self, out: &mut Vec<(&'static str, f64)>) {
        out.push(("w_max", self.last_max_cwnd as f64));
        out.push(("k_ms", self.k as f64 * 1000.0 / 1024.0));
        out.push(("target", self.target as f64));
        out.push(("w_est", self.tcp_cwnd as f64));
        out.push(("delay_min_ms", self.delay_min_us as f64 / 1000.0));
        out.push(("hystart_found", if self.found { 1.0 } else { 0.0 }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cubic_root_is_the_exact_floor() {
        for x in (0u64..5000).chain([u64::MAX, u64::MAX - 1, 1 << 63, 80_452_070_310]) {
            let r = cubic_root(x) as u128;
            assert!(r * r * r <= x as u128, "{x}");
            assert!((r + 1) * (r + 1) * (r + 1) > x as u128, "{x}");
        }
        for r in [1u64, 2, 3, 1000, 4317, 2_642_245] {
            assert_eq!(cubic_root(r * r * r), r);
            assert_eq!(cubic_root(r * r * r - 1), r - 1);
        }
    }

    #[test]
    fn linux_constants_for_default_parameters() {
        let c = Cubic::new(CubicParams::default());
        assert_eq!(c.beta_scale, 15);
        assert_eq!(c.cube_rtt_scale, 410);
        assert_eq!(c.cube_factor, 2_681_735_677);
    }
}
