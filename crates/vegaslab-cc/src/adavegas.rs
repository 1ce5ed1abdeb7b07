//! AdaVegas (the AdaVegas paper: Maor and Mansour, "AdaVegas: Adaptive Control for TCP Vegas",
//! section III-B and Table I; docs/papers.md) and the fixed-increment Vegas
//! presets the paper compares it with, Vegas_1 (alpha 1, beta 3, inc 1) and Vegas_8
//! (alpha 4, beta 8, inc 8).
//!
//! Only the once-per-round congestion-avoidance decision changes; slow start, RTT bookkeeping
//! and loss recovery are the ns-2 Vegas agent's ([`crate::vegas_ns2::Ns2Vegas`]): "Our basic
//! methodology has been to leave other parts of TCP Vegas algorithm unchanged" (III-B).
//!
//! # AdaVegas, as section III-B reads, and the decisions taken
//!
//! * **The three regions.** III-A and III-B state the Vegas decision as "If Delta < alpha ...
//!   increases", "If Delta > beta ... decreases", steady otherwise, and "Like TCP Vegas,
//!   AdaVegas increases the congestion window size when Delta < alpha". The lastInc paragraph
//!   restates the regions loosely as "(i.e., Delta <= alpha)" and "(i.e., Delta >= beta)".
//!   We keep the primary, ns-2 Vegas boundaries (increase: delta < alpha; congestion:
//!   delta > beta; steady: alpha <= delta <= beta), so that the first row of Table I is
//!   exactly Vegas_1, which the paper says AdaVegas "converges to".
//! * **succ** counts the successive rounds with delta < alpha (III-B, item 2). "Whenever
//!   Delta < alpha AdaVegas updates succ and then sets alpha, beta and inc to the
//!   corresponding values": on an increase round succ += 1 first, then alpha, beta, inc come
//!   from Table I for the new succ, and the window grows by the new inc over the next round
//!   ([`CaAction::Increase`] of inc/cwnd per ACK). Any other round (steady or congested)
//!   ends the run: succ = 0. alpha, beta and inc are only re-read on increase rounds, as the
//!   text says, so after a run of 16 the steady band stays 4..8 until the next increase
//!   round, which (succ = 1) brings back 1, 3, 1.
//! * **Table I** (see [`table_i`]): succ 0-3 -> 1, 3, 1; 4-7 -> 2, 4, 2; 8-15 -> 2, 4, 4;
//!   16 and more -> 4, 8, 8. The paper prints the third row as "4 <= succ <= 15", which
//!   overlaps the second row; it is a typo for 8 <= succ <= 15 (the rows double inc at
//!   succ = 4, 8, 16: "we double the increment rate when switching from one strategy to the
//!   next").
//! * **lastInc** (III-B, last paragraph): "whenever AdaVegas expands the window ... it sets
//!   lastInc <- inc. After two RTTs of steady state (i.e., alpha < Delta < beta) AdaVegas
//!   resets lastInc (lastInc <- 1). When congestion is detected (i.e., Delta >= beta)
//!   AdaVegas sets lastInc <- max(lastInc/2, 1) and decreases the window by lastInc." So:
//!   increase round: lastInc = inc; the second consecutive steady round (and later ones):
//!   lastInc = 1; congested round: lastInc = max(lastInc / 2, 1) (integer halving: inc is a
//!   whole number of packets; 8 -> 4 -> 2 -> 1 -> 1), then cwnd -= lastInc at once, at least
//!   2, like the agent's -1 ([`CaAction::DecreaseBy`]). "Two RTTs of steady state" are two
//!   consecutive steady rounds; an increase or congested round restarts the count.
//! * **Loss.** "When a packet is dropped AdaVegas cuts the window in half, similar to TCP
//!   Vegas and TCP reno": the cut is the agent's own (in ns-2, which the paper used, the
//!   fine-grained retransmission cuts to 3/4, or half for a repeated retransmission, and a
//!   coarse timeout to 2) and is reused unchanged. The paper gives no AdaVegas state change
//!   on loss; the agent calls [`AdaVegasState::on_loss`], which ends the run of successful
//!   increases (succ = 0) and the steady count, since a loss is not a successful increase.
//!   alpha, beta, inc and lastInc are left as they are (re-read on the next increase round).
//!
//! # The Linux flavour
//!
//! [`AdaVegasState`] and [`FixedIncrement`] are also [`LinuxRule`]s, on the Linux Vegas
//! machinery ([`crate::vegas_linux`]), in integer kernel units. AdaVegas' Table I, succ, the
//! lastInc halving (`max(lastInc / 2, 1)`, integer) and the steady count are integers
//! already and the same code ([`AdaVegasState::step`]) runs in both flavours; only the region
//! of a round comes from Linux's integer diff instead of ns-2's delta, and the window moves at
//! the round's end: increase round +inc packets ([`LinuxAction::Increase`]), congested round
//! -lastInc packets, then mainline Linux Vegas' ssthresh = min(ssthresh, cwnd) on the
//! decremented cwnd ([`LinuxAction::Decrease`]; the paper says nothing of ssthresh). Table I's alpha and beta are whole numbers, so
//! `diff < alpha` and `diff > beta` are plain integer comparisons ([`table_i_whole`]).
//! Vegas_1 / Vegas_8 compare with [`Thresholds`] (ceil(alpha), floor(beta); their alpha and
//! beta are whole) and add inc packets at the round's end (inc is whole in both presets; a
//! hand-built fractional inc is truncated).
//!
//! **Linux flavour: where the integer form decides differently from the ns-2 form.**
//!
//! 1. *+inc at once vs spread over the round.* ns-2 grows inc/cwnd per ACK during the round
//!    after the decision, and only while cwnd - outstanding <= 2, so Vegas_8's "+8" (and
//!    AdaVegas' +2/+4/+8) can come out smaller when the sender does not keep up, and the
//!    window reaches its new size only by the next round's end. Linux adds all inc packets
//!    when the round ends (`cwnd += inc`, then clamped to [2, receiver window]); the next
//!    round already runs with them, so a burst of up to inc extra packets leaves at once.
//! 2. *diff is truncated, not rounded.* Linux's floor(cwnd x (minRTT - baseRTT) / baseRTT)
//!    against ns-2's round((expected - actual) x baseRTT): a true 1.6 packets is an increase
//!    round for alpha 2 in Linux (diff 1) and a steady one in ns-2 (delta 2), so succ runs
//!    and the steady count can differ at the same measurements.
//! 3. *Minimum RTT, not mean*, for diff.
//! 4. *A decrease also lowers ssthresh* to the decremented cwnd (mainline `tcp_vegas.c`); ns-2
//!    leaves ssthresh.
//! 5. *Loss.* The cut is the Linux sender's (half the window, whole packets; 1 after a
//!    timeout), not ns-2's 3/4; [`AdaVegasState::on_loss`] (succ and the steady count to 0)
//!    runs on entering recovery in both flavours.
//! 6. *Slow start and fewer than three samples* are Linux's (exit at diff > gamma to
//!    target + 1; Reno below three samples), not ns-2's.

use crate::config::{TcpConfig, VariantFlavour};
use crate::controller::CongestionControl;
use crate::heuristics::deny_fixed;
use crate::params::{params_allowed, AlgorithmParams, Param, ParamError, ParamSource, SenderKind};
use crate::vegas::{read_gamma, read_variant_flavour, sender_for, GAMMA, VARIANT_FLAVOUR};
use crate::vegas_linux::{LinuxAction, LinuxRound, LinuxRule, LinuxVegas, Region, Thresholds};
use crate::vegas_ns2::{CaAction, Ns2Vegas, Round, VegasRule};
use serde::{Deserialize, Serialize};

/// AdaVegas' parameters: Table I is fixed (the paper's), only the agent's gamma is free.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AdaVegasParams {
    /// Slow-start exit threshold of the ns-2 agent (default 1).
    pub gamma: f64,
    /// ns2 (default; left out of the normalised scenario) or linux.
    #[serde(default, skip_serializing_if = "VariantFlavour::is_ns2")]
    pub flavour: VariantFlavour,
}

impl Default for AdaVegasParams {
    fn default() -> Self {
        AdaVegasParams { gamma: 1.0, flavour: VariantFlavour::Ns2 }
    }
}

/// A fixed-increment Vegas: delta < alpha: + inc packets per round; delta > beta: -1;
/// hold otherwise. inc = 1 is classic ns-2 Vegas.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct VegasIncParams {
    pub alpha: f64,
    pub beta: f64,
    /// Packets added per round on an increase round.
    pub inc: f64,
    /// Slow-start exit threshold of the ns-2 agent (default 1).
    pub gamma: f64,
    /// ns2 (default; left out of the normalised scenario) or linux.
    #[serde(default, skip_serializing_if = "VariantFlavour::is_ns2")]
    pub flavour: VariantFlavour,
}

impl VegasIncParams {
    /// Vegas_1 (the AdaVegas paper, section II): alpha 1, beta 3, inc 1 (= classic ns-2 Vegas).
    pub const VEGAS_1: VegasIncParams = VegasIncParams { alpha: 1.0, beta: 3.0, inc: 1.0, gamma: 1.0, flavour: VariantFlavour::Ns2 };
    /// Vegas_8 (the AdaVegas paper, section II): alpha 4, beta 8, inc 8.
    pub const VEGAS_8: VegasIncParams = VegasIncParams { alpha: 4.0, beta: 8.0, inc: 8.0, gamma: 1.0, flavour: VariantFlavour::Ns2 };

    /// "vegas_1", "vegas_8", or "vegas_inc" for any other combination (gamma is ignored).
    pub fn name(&self) -> &'static str {
        let same = |p: &VegasIncParams| p.alpha == self.alpha && p.beta == self.beta && p.inc == self.inc;
        if same(&Self::VEGAS_1) {
            "vegas_1"
        } else if same(&Self::VEGAS_8) {
            "vegas_8"
        } else {
            "vegas_inc"
        }
    }
}

/// The fixed-increment rule ([`FixedIncrement`]): classic Vegas' tests and its -1 decrease,
/// with + inc per round. With inc = 1 the increase is `1.0 / cwnd`, bit for bit classic
/// Vegas' (`inc / cwnd` with inc = 1.0).
pub fn fixed_increment(alpha: f64, beta: f64, inc: f64, r: &Round) -> CaAction {
    let d = r.delta as f64;
    if d > beta {
        CaAction::Decrease
    } else if d < alpha {
        CaAction::Increase(inc / r.cwnd)
    } else {
        CaAction::Hold
    }
}

/// Table I in whole packets: (alpha, beta, inc) for a value of succ. The third row is
/// printed "4 <= succ <= 15" in the paper, a typo for 8 <= succ <= 15 (module docs).
pub fn table_i_whole(succ: u32) -> (u32, u32, u32) {
    match succ {
        0..=3 => (1, 3, 1),
        4..=7 => (2, 4, 2),
        8..=15 => (2, 4, 4),
        _ => (4, 8, 8),
    }
}

/// Table I with alpha and beta as the ns-2 form compares them (the same whole numbers).
pub fn table_i(succ: u32) -> (f64, f64, u32) {
    let (alpha, beta, inc) = table_i_whole(succ);
    (alpha as f64, beta as f64, inc)
}

/// What an AdaVegas round does to the window, in whole packets, whatever the flavour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AdaStep {
    /// Grow by inc packets over (ns-2) or at the end of (Linux) the round.
    Increase(u32),
    /// Shrink by lastInc packets now.
    DecreaseBy(u32),
    Hold,
}

/// What the last congestion-avoidance round was, for tests and plots.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AdaRound {
    None,
    Increase,
    Steady,
    Congested,
}

/// AdaVegas' per-connection state (section III-B).
#[derive(Clone, Debug, PartialEq)]
pub struct AdaVegasState {
    /// Successive rounds with delta < alpha.
    pub succ: u32,
    /// The succ whose Table I row alpha, beta and inc hold (they are re-read only on increase
    /// rounds); the Linux form compares with that row's whole numbers.
    pub table_row: u32,
    pub alpha: f64,
    pub beta: f64,
    /// Packets added per round on an increase round.
    pub inc: u32,
    /// The last increase rate, the size of the next congestion decrease (before halving).
    pub last_inc: u32,
    /// Consecutive steady rounds (alpha <= delta <= beta).
    pub steady: u32,
    pub last_round: AdaRound,
}

impl Default for AdaVegasState {
    fn default() -> Self {
        Self::new()
    }
}

impl AdaVegasState {
    /// succ 0: Table I's first row (alpha 1, beta 3, inc 1), lastInc 1.
    pub fn new() -> Self {
        let (alpha, beta, inc) = table_i(0);
        AdaVegasState { succ: 0, table_row: 0, alpha, beta, inc, last_inc: 1, steady: 0, last_round: AdaRound::None }
    }

    /// One congestion-avoidance round of the ns-2 form: the region from ns-2's delta.
    pub fn congestion_avoidance(&mut self, r: &Round) -> CaAction {
        let d = r.delta as f64;
        let region = if d < self.alpha {
            Region::Below
        } else if d > self.beta {
            Region::Above
        } else {
            Region::Between
        };
        match self.step(region) {
            AdaStep::Increase(inc) => CaAction::Increase(inc as f64 / r.cwnd),
            AdaStep::DecreaseBy(n) => CaAction::DecreaseBy(n as f64),
            AdaStep::Hold => CaAction::Hold,
        }
    }

    /// One congestion-avoidance round of the Linux form: the region from Linux's integer
    /// diff against Table I's whole alpha and beta.
    pub fn congestion_avoidance_linux(&mut self, r: &LinuxRound) -> LinuxAction {
        let (alpha, beta, _) = table_i_whole(self.table_row);
        let region = Thresholds { alpha: alpha as u64, beta: beta as u64 }.region(r.diff);
        match self.step(region) {
            AdaStep::Increase(inc) => LinuxAction::Increase(inc as u64),
            AdaStep::DecreaseBy(n) => LinuxAction::Decrease(n as u64),
            AdaStep::Hold => LinuxAction::Hold,
        }
    }

    /// Section III-B for a round in `region` (shared by both flavours; integers only).
    pub fn step(&mut self, region: Region) -> AdaStep {
        match region {
            Region::Below => {
                // "Whenever Delta < alpha AdaVegas updates succ and then sets alpha, beta and inc"
                self.succ = self.succ.saturating_add(1);
                self.table_row = self.succ;
                (self.alpha, self.beta, self.inc) = table_i(self.succ);
                // "whenever AdaVegas expands the window ... it sets lastInc <- inc"
                self.last_inc = self.inc;
                self.steady = 0;
                self.last_round = AdaRound::Increase;
                AdaStep::Increase(self.inc)
            }
            Region::Above => {
                // "When congestion is detected ... lastInc <- max(lastInc/2, 1) and decreases
                // the window by lastInc"
                self.succ = 0;
                self.steady = 0;
                self.last_inc = (self.last_inc / 2).max(1);
                self.last_round = AdaRound::Congested;
                AdaStep::DecreaseBy(self.last_inc)
            }
            Region::Between => {
                // "After two RTTs of steady state ... AdaVegas resets lastInc (lastInc <- 1)"
                self.succ = 0;
                self.steady = self.steady.saturating_add(1);
                if self.steady >= 2 {
                    self.last_inc = 1;
                }
                self.last_round = AdaRound::Steady;
                AdaStep::Hold
            }
        }
    }

    /// A loss cut the window (the agent's cut): the run of successful increases is over.
    pub fn on_loss(&mut self) {
        self.succ = 0;
        self.steady = 0;
    }

    /// Time-series columns: alpha, beta, inc, succ, lastInc.
    pub fn probe(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("alpha", self.alpha),
            ("beta", self.beta),
            ("inc", self.inc as f64),
            ("succ", self.succ as f64),
            ("last_inc", self.last_inc as f64),
        ]
    }
}

/// Vegas with + inc packets per increase round (the AdaVegas paper's Vegas_1 / Vegas_8) as a rule.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FixedIncrement {
    pub alpha: f64,
    pub beta: f64,
    pub inc: f64,
    /// The `cc` name in results ("vegas_1", "vegas_8" or "vegas_inc").
    pub name: &'static str,
}

impl VegasRule for FixedIncrement {
    fn name(&self) -> &'static str {
        self.name
    }
    fn congestion_avoidance(&mut self, r: &Round) -> CaAction {
        fixed_increment(self.alpha, self.beta, self.inc, r)
    }
    fn variables(&self, out: &mut Vec<(&'static str, f64)>) {
        out.extend([("alpha", self.alpha), ("beta", self.beta), ("inc", self.inc)]);
    }
}

impl VegasRule for AdaVegasState {
    fn name(&self) -> &'static str {
        "adavegas"
    }
    fn congestion_avoidance(&mut self, r: &Round) -> CaAction {
        AdaVegasState::congestion_avoidance(self, r)
    }
    fn on_loss(&mut self) {
        AdaVegasState::on_loss(self);
    }
    fn variables(&self, out: &mut Vec<(&'static str, f64)>) {
        out.extend(self.probe());
    }
}

impl LinuxRule for AdaVegasState {
    fn name(&self) -> &'static str {
        "adavegas"
    }
    fn congestion_avoidance(&mut self, r: &LinuxRound) -> LinuxAction {
        self.congestion_avoidance_linux(r)
    }
    fn on_loss(&mut self) {
        AdaVegasState::on_loss(self);
    }
    fn variables(&self, out: &mut Vec<(&'static str, f64)>) {
        out.extend(self.probe());
    }
}

impl LinuxRule for FixedIncrement {
    fn name(&self) -> &'static str {
        self.name
    }
    /// diff > floor(beta): -1; diff < ceil(alpha): + inc packets at the round's end; hold.
    fn congestion_avoidance(&mut self, r: &LinuxRound) -> LinuxAction {
        match Thresholds::from_packets(self.alpha, self.beta).region(r.diff) {
            Region::Above => LinuxAction::Decrease(1),
            Region::Below => LinuxAction::Increase(self.inc.max(0.0) as u64),
            Region::Between => LinuxAction::Hold,
        }
    }
    fn variables(&self, out: &mut Vec<(&'static str, f64)>) {
        out.extend([("alpha", self.alpha), ("beta", self.beta), ("inc", self.inc)]);
    }
}

impl AlgorithmParams for AdaVegasParams {
    fn controller(&self, _cfg: &TcpConfig) -> Box<dyn CongestionControl> {
        match self.flavour {
            VariantFlavour::Ns2 => Box::new(Ns2Vegas::new(AdaVegasState::new(), self.gamma)),
            VariantFlavour::Linux => Box::new(LinuxVegas::new(AdaVegasState::new(), self.gamma)),
        }
    }
    fn sender(&self) -> SenderKind {
        sender_for(self.flavour.into())
    }
    fn clone_box(&self) -> Box<dyn AlgorithmParams> {
        Box::new(*self)
    }
}

impl AlgorithmParams for VegasIncParams {
    fn controller(&self, _cfg: &TcpConfig) -> Box<dyn CongestionControl> {
        let rule = FixedIncrement { alpha: self.alpha, beta: self.beta, inc: self.inc, name: self.name() };
        match self.flavour {
            VariantFlavour::Ns2 => Box::new(Ns2Vegas::new(rule, self.gamma)),
            VariantFlavour::Linux => Box::new(LinuxVegas::new(rule, self.gamma)),
        }
    }
    fn sender(&self) -> SenderKind {
        sender_for(self.flavour.into())
    }
    fn results_name(&self) -> Option<&'static str> {
        Some(self.name())
    }
    fn clone_box(&self) -> Box<dyn AlgorithmParams> {
        Box::new(*self)
    }
}

/// The parameters of AdaVegas and of the Vegas_1 and Vegas_8 presets: alpha, beta and inc are
/// fixed (Table I, section II), so only the agent's gamma and the flavour are free.
pub fn params() -> Vec<&'static Param> {
    vec![&GAMMA, &VARIANT_FLAVOUR]
}

/// The registry's reader for `cc = "adavegas"`.
pub fn read(p: &dyn ParamSource) -> Result<Box<dyn AlgorithmParams>, ParamError> {
    let mut a = AdaVegasParams::default();
    deny_fixed(p, &["alpha", "beta", "inc"], "AdaVegas takes alpha, beta and inc from Table I of its paper")?;
    p.deny_unknown(&params_allowed(&params()))?;
    a.flavour = read_variant_flavour(p, "AdaVegas")?;
    a.gamma = read_gamma(p, a.gamma)?;
    Ok(Box::new(a))
}

fn read_preset(p: &dyn ParamSource, name: &str, preset: VegasIncParams) -> Result<Box<dyn AlgorithmParams>, ParamError> {
    let mut v = preset;
    let why = format!("the {name} preset fixes alpha {}, beta {}, inc {} (the AdaVegas paper, section II)", v.alpha, v.beta, v.inc);
    deny_fixed(p, &["alpha", "beta", "inc"], &why)?;
    p.deny_unknown(&params_allowed(&params()))?;
    v.flavour = read_variant_flavour(p, name)?;
    v.gamma = read_gamma(p, v.gamma)?;
    Ok(Box::new(v))
}

/// The registry's reader for `cc = "vegas_1"`.
pub fn read_vegas_1(p: &dyn ParamSource) -> Result<Box<dyn AlgorithmParams>, ParamError> {
    read_preset(p, "vegas_1", VegasIncParams::VEGAS_1)
}

/// The registry's reader for `cc = "vegas_8"`.
pub fn read_vegas_8(p: &dyn ParamSource) -> Result<Box<dyn AlgorithmParams>, ParamError> {
    read_preset(p, "vegas_8", VegasIncParams::VEGAS_8)
}
