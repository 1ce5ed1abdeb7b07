//! TCP Vegas-A (the Vegas-A paper: Srijith et al., "TCP Vegas-A: Improving the Performance of
//! TCP Vegas", Computer Communications 28 (2005), section 3; docs/papers.md): Vegas whose
//! alpha and beta adapt with the throughput trend.
//!
//! Only the once-per-round congestion-avoidance decision changes; slow start, the RTT
//! bookkeeping and loss recovery are the ns-2 Vegas agent's ([`crate::vegas_ns2::Ns2Vegas`]
//! on [`crate::vegas_agent`]), which the paper's authors modified ("The TCP/Vegas agent of
//! NS2 ... was modified to implement Vegas-A", section 4). This module is that rule
//! ([`VegasAState`], a [`VegasRule`]) and its Linux-flavour twin ([`VegasALinux`], a
//! [`LinuxRule`]).
//!
//! # The pseudo-code (section 3, lines 01-26) and how each line maps to code
//!
//! `diff` is the agent's `delta` (round((expected - actual) x baseRTT), packets); `Th(t)` is
//! this round's `actual` (packets sent in the round / mean RTT of the round) and `Th(t-rtt)`
//! the previous round's. "cwnd = cwnd + 1" is the agent's congestion-avoidance increase
//! (+1/cwnd per ACK over the next round, [`CaAction::Increase`]), "cwnd = cwnd - 1" its
//! decrease (-1 at once, at least 2, [`CaAction::Decrease`]), as the ns-2 agent the paper
//! modified does for classic Vegas.
//!
//! ```text
//! 01 if beta > diff > alpha {
//! 02     if Th(t) >= Th(t-rtt) {
//! 03         cwnd = cwnd + 1
//! 04         alpha = alpha + 1, beta = beta + 1
//! 05     }
//! 06     else if Th(t) <= Th(t-rtt) {
//! 07         no update of cwnd, alpha, beta
//! 08     }
//! 09 }
//! 10 else if diff <= alpha {
//! 11     if alpha >= 1 and Th(t) >= Th(t-rtt) {
//! 12         cwnd = cwnd + 1
//! 13     }
//! 14     else if alpha > 1 and Th(t) < Th(t-rtt) {
//! 15         cwnd = cwnd - 1, alpha = alpha - 1, beta = beta - 1
//! 16     }
//! 17     else if alpha == 1
//! 18         cwnd = cwnd + 1
//! 19 }
//! 20 else if diff > beta {
//! 21     if (alpha > 1) { alpha = alpha - 1, beta = beta - 1 }
//! 22     cwnd = cwnd - 1
//! 23 }
//! 24 else {
//! 25     no update of cwnd, alpha, beta
//! 26 }
//! ```
//!
//! (The text extraction of the paper scrambles the line numbers; the numbering above is the
//! one its prose uses: "Lines 01-09 kicks in when diff falls between alpha and beta", "In line 3
//! ... the sending rate is increased", "In line 4 ... alpha and beta are increased", "Lines
//! 10-19 tackle the situation when diff falls below alpha", "at line 15 the cwnd and inflated
//! alpha and beta have to be decreased", "we decrease alpha and beta in lines 20-22".)
//!
//! # Where the pseudo-code is ambiguous, and what this code does
//!
//! 1. **Th(t) == Th(t-rtt) inside (alpha, beta): line 02 (`>=`) or line 06 (`<=`)?** Read as
//!    the if / else-if chain it is written as, line 02 is tested first and takes the tie
//!    (probe: cwnd, alpha and beta + 1); line 06's `<=` then only ever sees `<`. The prose of
//!    line 3 ("the throughput has been increasing") supports the other reading, that a flat
//!    throughput is no reason to probe (line 06 takes the tie). Both are defensible and the
//!    difference matters in a deterministic simulator, where a saturated bottleneck gives
//!    bit-identical Th from round to round; so it is a named option,
//!    [`EqualThroughput`] (scenario parameter `equal_throughput = "increase" | "hold"`), with
//!    the literal chain order (`"increase"`) as the default.
//! 2. **diff == alpha** is caught by line 10 (`diff <= alpha`): line 01 needs a strict
//!    `diff > alpha`. (Classic Vegas holds at diff == alpha; Vegas-A does not.) The
//!    comparisons are written out; no second reading.
//! 3. **diff == beta** (with alpha < beta) fails line 01 (`beta > diff`), line 10 and line 20
//!    (`diff > beta`) and falls to the final else (lines 24-25): no change, if the comparisons
//!    are read exactly as printed ([`AtBeta::Hold`], a named option). But the prose
//!    says lines 01-09 act "when diff falls between alpha and beta" (classic Vegas' "between"
//!    includes beta), and the literal reading cannot give the paper's rerouting result: in a
//!    noise-free simulation the post-reroute decrease stops exactly at diff == beta (e.g.
//!    cwnd 4 with baseRTT 48 ms and RTT 228 ms: diff = round(4 x (1 - 48/228)) = 3 = beta),
//!    where lines 24-25 hold cwnd for good and Vegas-A delivers what Vegas does (see
//!    `tests/vegas_a.rs`), while the paper reports 940 vs 217 kbit/s and describes the climb
//!    from "diff falls between alpha and beta". The authors modified ns-2's Vegas agent, whose
//!    final `else` is the hold region alpha <= delta <= beta (`delta > beta` and
//!    `delta < alpha` are tested first); Vegas-A's probing lines 01-09 replace that region, so
//!    its code most plausibly included diff == beta. The inclusive reading is therefore the
//!    default, [`AtBeta::Between`]: diff == beta > alpha takes lines 01-09. The literal one
//!    stays available (`at_beta = "hold"`) and the va-reroute report shows both. With
//!    alpha == beta, diff == alpha == beta goes to line 10 under both.
//! 4. **Th(t) == Th(t-rtt) with diff <= alpha**: line 11 says `>=`, line 14 `<`, so the tie
//!    takes line 11 (cwnd + 1). Not ambiguous; the [`EqualThroughput`] option does not apply.
//! 5. **Line 17 (`alpha == 1`)** can only be reached with alpha == 1 and Th(t) < Th(t-rtt) (any
//!    other alpha >= 1 is caught by line 11 or 14). alpha never falls below 1: it starts at
//!    a whole number >= 1 (the scenario parser enforces it) and lines 15 and 21 only
//!    decrement it when it is > 1. Should a hand-built state have alpha < 1, line 10 matches
//!    and none of 11/14/17 does: nothing happens (reported as line 10).
//! 6. **The first round, with no Th(t-rtt).** The paper keeps Th(t-rtt) in "an extra internal
//!    variable" of the ns-2 agent; ns-2 initialises agent variables to 0, so the first
//!    comparison is against 0 and the throughput counts as having risen. We do the same
//!    (`prev_th: None` compares as 0, and the trend reads +1). In practice the first
//!    congestion-avoidance round always has a predecessor, because slow-start rounds record
//!    their Th too (next point).
//! 7. **Which round is "one RTT before".** The ns-2 agent computes `actual` at the end of
//!    every round, slow start included; "the value calculated during previous RTT cycle" is
//!    therefore the previous round's, whatever its phase. The agent reports slow-start rounds
//!    to the rule ([`VegasAState::observe`]) so that the first congestion-avoidance round
//!    compares with the last slow-start round.
//!
//! alpha and beta have no upper bound in the paper (line 04); none is imposed here.
//!
//! # The Linux flavour ([`VegasALinux`])
//!
//! The same lines 01-26 on the Linux Vegas machinery ([`crate::vegas_linux`]), in integer
//! kernel units: alpha and beta are whole numbers (`u64`; the reader already requires whole
//! initial values and the lines only step them by 1), diff is Linux's integer
//! cwnd x (minRTT - baseRTT) / baseRTT, "cwnd = cwnd + 1" is +1 packet at the round's end
//! ([`LinuxAction::Increase`]) and "cwnd = cwnd - 1" is -1 packet followed by mainline Linux
//! Vegas' ssthresh = min(ssthresh, cwnd) on the decremented cwnd ([`LinuxAction::Decrease`];
//! the paper says nothing of ssthresh). The ambiguity options
//! ([`EqualThroughput`], [`AtBeta`]) and points 1-7 above apply unchanged.
//!
//! **Th(t).** Linux's Vegas keeps no `actual` rate: it has the packets sent in the round
//! ([`LinuxRound::sent`], `snd_nxt` now minus at the round's start) and the round's minimum
//! RTT ([`LinuxRound::rtt_us`], the RTT its diff uses). Th(t) = sent / minRTT, the Linux
//! counterpart of ns-2's rttLen / mean RTT built from what the Linux round measures: the rate
//! the round's own diff judges, no extra per-round state (a mean would need a sum of samples,
//! which the kernel's 104 bytes of private state can hold but `tcp_vegas.c` does not keep),
//! and no division. Th(t) >= Th(t-rtt) is decided exactly by cross-multiplying,
//! sent_t x minRTT_(t-rtt) >= sent_(t-rtt) x minRTT_t in `u128` (no overflow, no rounding).
//! The previous round is the previous round with three samples or more, slow start included
//! (point 7; rounds that fell back to Reno measured no RTT and are skipped); before any, Th(t-rtt)
//! is 0 (point 6: (sent, rtt) = (0, 1)).
//!
//! **Linux flavour: where the integer form decides differently from the ns-2 form.**
//!
//! 1. *Throughput ties are exact.* ns-2 compares two `f64` rates rttLen / mean RTT, equal only
//!    when the floats happen to coincide (same rttLen and bit-identical mean RTT, or a lucky
//!    rounding); the integer cross-product says "equal" whenever the two fractions are equal,
//!    e.g. 10 packets over 50,000 µs against 20 over 100,000 µs. So line 02 vs 06
//!    ([`EqualThroughput`]) and line 11's `>=` see ties more often, and never a false tie
//!    or a false order from float rounding.
//! 2. *Minimum RTT, not mean.* Th(t) and diff use the round's minimum RTT; ns-2 uses the mean
//!    of the round's samples. Queueing that builds within a round moves ns-2's Th and delta
//!    but not Linux's until the minimum moves.
//! 3. *diff is truncated, not rounded, and is never negative.* ns-2's
//!    delta = round((expected - actual) x baseRTT) from outstanding and sent packets; Linux's
//!    diff = floor(cwnd x (minRTT - baseRTT) / baseRTT). A true difference of 1.6 packets is
//!    delta 2 but diff 1, so the boundaries diff <= alpha (line 10), diff > beta (line 20) and
//!    diff == beta (point 3) fall at other measurements.
//! 4. *+1 at once.* ns-2 grows +1/cwnd per ACK over the next round, and only while
//!    cwnd - outstanding <= 2; Linux adds the packet at the round's end, unconditionally.
//! 5. *Decrease also lowers ssthresh* to the decremented cwnd (as mainline `tcp_vegas.c`), so a
//!    decrease round keeps the flow out of slow start; ns-2's -1 leaves ssthresh alone.
//! 6. *Slow start and fewer than three samples* are Linux's (exit at diff > gamma to
//!    target + 1, every round; Reno below three samples), not ns-2's every-other-round slow
//!    start with the cwnd/8 exit.

use crate::config::{TcpConfig, VariantFlavour};
use crate::controller::CongestionControl;
use crate::heuristics::{read_alpha_beta, with_heuristic, MAX_PACKETS};
use crate::params::{params_allowed, AlgorithmParams, Param, ParamError, ParamKind, ParamSource, SenderKind};
use crate::vegas::{read_gamma, read_variant_flavour, sender_for, GAMMA, VARIANT_FLAVOUR};
use crate::vegas_linux::{LinuxAction, LinuxRound, LinuxRule, LinuxVegas};
use crate::vegas_ns2::{CaAction, Ns2Vegas, Round, VegasRule};
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;

/// Which of the overlapping lines 02 (`Th(t) >= Th(t-rtt)`) and 06 (`Th(t) <= Th(t-rtt)`)
/// takes a round whose throughput equals the previous round's while alpha < diff < beta.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum EqualThroughput {
    /// Line 02, tested first in the if / else-if chain: cwnd, alpha and beta + 1. Default.
    #[default]
    Increase,
    /// Line 06: no update (the prose of line 3 asks for a throughput that "has been
    /// increasing").
    Hold,
}

/// Which lines take a round with diff == beta > alpha (module docs, point 3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum AtBeta {
    /// The final else, lines 24-25: no update (the comparisons exactly as printed).
    Hold,
    /// Lines 01-09, as if line 01 read `beta >= diff > alpha` ("when diff falls between
    /// alpha and beta", and ns-2's hold region that Vegas-A replaced). Default.
    #[default]
    Between,
}

/// Vegas-A's parameters.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct VegasAParams {
    /// Initial alpha and beta, packets (the paper: 1 and 3). Whole numbers, 1 <= alpha <= beta.
    pub alpha: f64,
    pub beta: f64,
    /// Slow-start exit threshold of the ns-2 agent (default 1).
    pub gamma: f64,
    /// Tie rule for lines 02 / 06.
    pub equal_throughput: EqualThroughput,
    /// Where diff == beta goes.
    pub at_beta: AtBeta,
    /// ns2 (default; left out of the normalised scenario) or linux.
    #[serde(default, skip_serializing_if = "VariantFlavour::is_ns2")]
    pub flavour: VariantFlavour,
}

impl Default for VegasAParams {
    fn default() -> Self {
        VegasAParams {
            alpha: 1.0,
            beta: 3.0,
            gamma: 1.0,
            equal_throughput: EqualThroughput::Increase,
            at_beta: AtBeta::Between,
            flavour: VariantFlavour::Ns2,
        }
    }
}

/// Vegas-A's per-connection state.
#[derive(Clone, Debug, PartialEq)]
pub struct VegasAState {
    pub alpha: f64,
    pub beta: f64,
    pub equal_throughput: EqualThroughput,
    pub at_beta: AtBeta,
    /// Th(t-rtt): the previous round's actual rate, packets/s (None before the first round).
    pub prev_th: Option<f64>,
    /// Sign of Th(t) - Th(t-rtt) at the last round: +1, -1 or 0 (0 before any round).
    pub trend: i8,
    /// The pseudo-code line whose action the last congestion-avoidance round took: 3 (lines
    /// 03-04), 7, 12, 15, 18, 22 (lines 21-22), 25, or 10 (line 10 matched, none of 11/14/17);
    /// 0 before any congestion-avoidance round.
    pub last_line: u8,
}

impl VegasAState {
    pub fn new(p: &VegasAParams) -> Self {
        VegasAState {
            alpha: p.alpha,
            beta: p.beta,
            equal_throughput: p.equal_throughput,
            at_beta: p.at_beta,
            prev_th: None,
            trend: 0,
            last_line: 0,
        }
    }

    /// Record this round's Th(t) as the next round's Th(t-rtt); returns Th(t-rtt) for this
    /// round (0 when there was no previous round, see the module docs, point 6).
    fn shift(&mut self, th: f64) -> f64 {
        let prev = self.prev_th.unwrap_or(0.0);
        self.prev_th = Some(th);
        self.trend = if th > prev {
            1
        } else if th < prev {
            -1
        } else {
            0
        };
        prev
    }

    /// A slow-start round ended: only remember its Th (module docs, point 7).
    pub fn observe(&mut self, r: &Round) {
        self.shift(r.actual);
    }

    /// One congestion-avoidance round: section 3, lines 01-26.
    pub fn congestion_avoidance(&mut self, r: &Round) -> CaAction {
        let th = r.actual; // Th(t)
        let prev = self.shift(th); // Th(t-rtt)
        let diff = r.delta as f64;
        let grow = CaAction::Increase(1.0 / r.cwnd);
        // Line 02 vs line 06 on a tie (module docs, point 1).
        let line02 = match self.equal_throughput {
            EqualThroughput::Increase => th >= prev,
            EqualThroughput::Hold => th > prev,
        };
        let at_beta = self.at_beta == AtBeta::Between && diff == self.beta; // point 3
        if (self.beta > diff || at_beta) && diff > self.alpha {
            // 01: beta > diff > alpha
            if line02 {
                // 02: Th(t) >= Th(t-rtt)
                self.alpha += 1.0; // 04: alpha = alpha + 1
                self.beta += 1.0; // 04: beta = beta + 1
                self.last_line = 3;
                grow // 03: cwnd = cwnd + 1
            } else {
                // 06: Th(t) <= Th(t-rtt)
                self.last_line = 7;
                CaAction::Hold // 07: no update of cwnd, alpha, beta
            }
        } else if diff <= self.alpha {
            // 10: diff <= alpha
            if self.alpha >= 1.0 && th >= prev {
                // 11: alpha >= 1 and Th(t) >= Th(t-rtt)
                self.last_line = 12;
                grow // 12: cwnd = cwnd + 1
            } else if self.alpha > 1.0 && th < prev {
                // 14: alpha > 1 and Th(t) < Th(t-rtt)
                self.alpha -= 1.0; // 15: alpha = alpha - 1
                self.beta -= 1.0; // 15: beta = beta - 1
                self.last_line = 15;
                CaAction::Decrease // 15: cwnd = cwnd - 1
            } else if self.alpha == 1.0 {
                // 17: alpha == 1
                self.last_line = 18;
                grow // 18: cwnd = cwnd + 1
            } else {
                // 10 matched but none of 11, 14, 17 (alpha < 1; module docs, point 5).
                self.last_line = 10;
                CaAction::Hold
            }
        } else if diff > self.beta {
            // 20: diff > beta
            if self.alpha > 1.0 {
                // 21: if (alpha > 1) { alpha = alpha - 1, beta = beta - 1 }
                self.alpha -= 1.0;
                self.beta -= 1.0;
            }
            self.last_line = 22;
            CaAction::Decrease // 22: cwnd = cwnd - 1
        } else {
            // 24: else (diff == beta > alpha, module docs, point 3)
            self.last_line = 25;
            CaAction::Hold // 25: no update of cwnd, alpha, beta
        }
    }

    /// Time-series columns: alpha, beta and the throughput trend (+1 / -1 / 0).
    pub fn probe(&self) -> Vec<(&'static str, f64)> {
        vec![("alpha", self.alpha), ("beta", self.beta), ("trend", self.trend as f64)]
    }
}

impl VegasRule for VegasAState {
    fn name(&self) -> &'static str {
        "vegas-a"
    }
    fn congestion_avoidance(&mut self, r: &Round) -> CaAction {
        VegasAState::congestion_avoidance(self, r)
    }
    fn observe_slow_start(&mut self, r: &Round) {
        self.observe(r);
    }
    fn variables(&self, out: &mut Vec<(&'static str, f64)>) {
        out.extend(self.probe());
    }
}

/// Vegas-A's state in the Linux flavour (module docs, "The Linux flavour"): whole-number
/// alpha and beta, Th as (packets sent, RTT in µs) pairs compared by cross-multiplication.
#[derive(Clone, Debug, PartialEq)]
pub struct VegasALinux {
    pub alpha: u64,
    pub beta: u64,
    pub equal_throughput: EqualThroughput,
    pub at_beta: AtBeta,
    /// Th(t-rtt) as (packets sent in the round, the round's minimum RTT in µs + 1); None
    /// before the first round with three samples.
    pub prev: Option<(u64, u64)>,
    /// Sign of Th(t) - Th(t-rtt) at the last round: +1, -1 or 0 (0 before any round).
    pub trend: i8,
    /// The pseudo-code line the last congestion-avoidance round took, as [`VegasAState::last_line`].
    pub last_line: u8,
}

impl VegasALinux {
    /// From the parameters; alpha and beta are whole numbers >= 1 (the reader's check).
    pub fn new(p: &VegasAParams) -> Self {
        VegasALinux {
            alpha: p.alpha as u64,
            beta: p.beta as u64,
            equal_throughput: p.equal_throughput,
            at_beta: p.at_beta,
            prev: None,
            trend: 0,
            last_line: 0,
        }
    }

    /// Th(t) = sent / rtt against Th(t-rtt) (0 before any round, module docs point 6), exactly:
    /// sent_t x rtt_prev vs sent_prev x rtt_t. Records this round as the next round's Th(t-rtt).
    fn shift(&mut self, sent: u64, rtt_us: u64) -> Ordering {
        let (prev_sent, prev_rtt) = self.prev.unwrap_or((0, 1));
        let ord = (sent as u128 * prev_rtt as u128).cmp(&(prev_sent as u128 * rtt_us as u128));
        self.prev = Some((sent, rtt_us));
        self.trend = match ord {
            Ordering::Greater => 1,
            Ordering::Less => -1,
            Ordering::Equal => 0,
        };
        ord
    }

    /// One congestion-avoidance round: section 3, lines 01-26, in integers.
    pub fn congestion_avoidance(&mut self, r: &LinuxRound) -> LinuxAction {
        let ord = self.shift(r.sent, r.rtt_us); // Th(t) vs Th(t-rtt)
        let diff = r.diff;
        let line02 = match self.equal_throughput {
            EqualThroughput::Increase => ord != Ordering::Less,
            EqualThroughput::Hold => ord == Ordering::Greater,
        };
        let at_beta = self.at_beta == AtBeta::Between && diff == self.beta; // point 3
        if (self.beta > diff || at_beta) && diff > self.alpha {
            // 01: beta > diff > alpha
            if line02 {
                // 02: Th(t) >= Th(t-rtt); 03-04: cwnd, alpha, beta + 1
                self.alpha += 1;
                self.beta += 1;
                self.last_line = 3;
                LinuxAction::Increase(1)
            } else {
                // 06-07: no update
                self.last_line = 7;
                LinuxAction::Hold
            }
        } else if diff <= self.alpha {
            // 10: diff <= alpha
            if self.alpha >= 1 && ord != Ordering::Less {
                // 11-12: alpha >= 1 and Th(t) >= Th(t-rtt): cwnd + 1
                self.last_line = 12;
                LinuxAction::Increase(1)
            } else if self.alpha > 1 && ord == Ordering::Less {
                // 14-15: alpha > 1 and Th(t) < Th(t-rtt): cwnd, alpha, beta - 1
                self.alpha -= 1;
                self.beta = self.beta.saturating_sub(1);
                self.last_line = 15;
                LinuxAction::Decrease(1)
            } else if self.alpha == 1 {
                // 17-18: alpha == 1: cwnd + 1
                self.last_line = 18;
                LinuxAction::Increase(1)
            } else {
                // 10 matched but none of 11, 14, 17 (alpha 0, a hand-built state; point 5)
                self.last_line = 10;
                LinuxAction::Hold
            }
        } else if diff > self.beta {
            // 20-22: diff > beta: alpha, beta - 1 if alpha > 1; cwnd - 1
            if self.alpha > 1 {
                self.alpha -= 1;
                self.beta = self.beta.saturating_sub(1);
            }
            self.last_line = 22;
            LinuxAction::Decrease(1)
        } else {
            // 24-25: diff == beta > alpha with at_beta = "hold": no update
            self.last_line = 25;
            LinuxAction::Hold
        }
    }
}

impl LinuxRule for VegasALinux {
    fn name(&self) -> &'static str {
        "vegas-a"
    }
    fn congestion_avoidance(&mut self, r: &LinuxRound) -> LinuxAction {
        VegasALinux::congestion_avoidance(self, r)
    }
    /// A slow-start round only records its Th (point 7).
    fn observe_slow_start(&mut self, r: &LinuxRound) {
        self.shift(r.sent, r.rtt_us);
    }
    fn variables(&self, out: &mut Vec<(&'static str, f64)>) {
        out.extend([("alpha", self.alpha as f64), ("beta", self.beta as f64), ("trend", self.trend as f64)]);
    }
}

impl AlgorithmParams for VegasAParams {
    fn controller(&self, _cfg: &TcpConfig) -> Box<dyn CongestionControl> {
        match self.flavour {
            VariantFlavour::Ns2 => Box::new(Ns2Vegas::new(VegasAState::new(self), self.gamma)),
            VariantFlavour::Linux => Box::new(LinuxVegas::new(VegasALinux::new(self), self.gamma)),
        }
    }
    fn sender(&self) -> SenderKind {
        sender_for(self.flavour.into())
    }
    fn clone_box(&self) -> Box<dyn AlgorithmParams> {
        Box::new(*self)
    }
}

/// `params.alpha` of Vegas-A: the initial lower threshold, a whole number >= 1 (Vegas-A steps
/// it by 1 and tests alpha == 1 and alpha > 1).
pub static ALPHA: Param = Param {
    name: "alpha",
    kind: ParamKind::Number { lo: 1.0, hi: MAX_PACKETS },
    unit: "packets (whole)",
    doc: "the initial alpha, which Vegas-A then moves with the throughput trend",
    cite: "the Vegas-A paper, section 3, lines 01-21 (alpha = 1 initially)",
};

/// `params.beta` of Vegas-A: the initial upper threshold, a whole number >= alpha.
pub static BETA: Param = Param {
    name: "beta",
    kind: ParamKind::Number { lo: 1.0, hi: MAX_PACKETS },
    unit: "packets (whole)",
    doc: "the initial beta, which Vegas-A moves with alpha",
    cite: "the Vegas-A paper, section 3 (beta = 3 initially)",
};

/// `params.equal_throughput`: the tie rule of lines 02 and 06 ([`EqualThroughput`]).
pub static EQUAL_THROUGHPUT: Param = Param {
    name: "equal_throughput",
    kind: ParamKind::Choice { values: &["increase", "hold"] },
    unit: "",
    doc: "Th(t) = Th(t-rtt) inside (alpha, beta): increase (line 02) or hold (line 06)",
    cite: "the Vegas-A paper, section 3, lines 02-07",
};

/// `params.at_beta`: the rule for diff == beta ([`AtBeta`]).
pub static AT_BETA: Param = Param {
    name: "at_beta",
    kind: ParamKind::Choice { values: &["between", "hold"] },
    unit: "",
    doc: "diff = beta > alpha: as between alpha and beta (lines 01-09) or hold (lines 24-25)",
    cite: "the Vegas-A paper, section 3, lines 01 and 24-25",
};

/// Vegas-A's parameters, in the order the docs list them.
pub fn params() -> Vec<&'static Param> {
    with_heuristic(&[&ALPHA, &BETA, &GAMMA, &EQUAL_THROUGHPUT, &AT_BETA, &VARIANT_FLAVOUR])
}

/// The registry's reader for `cc = "vegas-a"`.
pub fn read(p: &dyn ParamSource) -> Result<Box<dyn AlgorithmParams>, ParamError> {
    let mut v = VegasAParams::default();
    p.deny_unknown(&params_allowed(&params()))?;
    v.flavour = read_variant_flavour(p, "Vegas-A")?;
    read_alpha_beta(p, (&ALPHA, &BETA), &mut v.alpha, &mut v.beta)?;
    for (k, x) in [("alpha", v.alpha), ("beta", v.beta)] {
        if x.fract() != 0.0 {
            return Err(p.error(
                k,
                format!("must be a whole number of packets for Vegas-A (it steps alpha and beta by 1), got {x}"),
            ));
        }
    }
    v.gamma = read_gamma(p, v.gamma)?;
    v.equal_throughput = match EQUAL_THROUGHPUT.choice(p)?.as_deref() {
        None => v.equal_throughput,
        Some("increase") => EqualThroughput::Increase,
        Some("hold") => EqualThroughput::Hold,
        Some(other) => {
            return Err(p.error(
                "equal_throughput",
                format!("unknown tie rule \"{other}\" (allowed: \"increase\" (line 02, default), \"hold\" (line 06))"),
            ))
        }
    };
    v.at_beta = match AT_BETA.choice(p)?.as_deref() {
        None => v.at_beta,
        Some("hold") => AtBeta::Hold,
        Some("between") => AtBeta::Between,
        Some(other) => {
            return Err(p.error(
                "at_beta",
                format!("unknown rule \"{other}\" (allowed: \"between\" (lines 01-09, default), \"hold\" (lines 24-25))"),
            ))
        }
    };
    Ok(Box::new(v))
}
