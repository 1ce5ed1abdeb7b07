//! AdaVegas (Maor and Mansour, "AdaVegas: Adaptive Control for TCP Vegas";
//! `shared/papers/adavegas.txt`, section III-B and Table I) and the fixed-increment Vegas
//! presets the paper compares it with, Vegas_1 (alpha 1, beta 3, inc 1) and Vegas_8
//! (alpha 4, beta 8, inc 8).
//!
//! Only the once-per-round congestion-avoidance decision changes; slow start, RTT bookkeeping
//! and loss recovery are the ns-2 Vegas agent's ([`crate::vegas::VegasAgent`]): "Our basic
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

use crate::vegas::{CaAction, Round};
use serde::{Deserialize, Serialize};

/// AdaVegas' parameters: Table I is fixed (the paper's), only the agent's gamma is free.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct AdaVegasParams {
    /// Slow-start exit threshold of the ns-2 agent (default 1).
    pub gamma: f64,
}

impl Default for AdaVegasParams {
    fn default() -> Self {
        AdaVegasParams { gamma: 1.0 }
    }
}

/// A fixed-increment Vegas: delta < alpha: + inc packets per round; delta > beta: -1;
/// hold otherwise. inc = 1 is classic ns-2 Vegas.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct VegasIncParams {
    pub alpha: f64,
    pub beta: f64,
    /// Packets added per round on an increase round.
    pub inc: f64,
    /// Slow-start exit threshold of the ns-2 agent (default 1).
    pub gamma: f64,
}

impl VegasIncParams {
    /// Vegas_1 (adavegas.txt section II): alpha 1, beta 3, inc 1 (= classic ns-2 Vegas).
    pub const VEGAS_1: VegasIncParams = VegasIncParams { alpha: 1.0, beta: 3.0, inc: 1.0, gamma: 1.0 };
    /// Vegas_8 (adavegas.txt section II): alpha 4, beta 8, inc 8.
    pub const VEGAS_8: VegasIncParams = VegasIncParams { alpha: 4.0, beta: 8.0, inc: 8.0, gamma: 1.0 };

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

/// The fixed-increment rule ([`crate::vegas::Rule::FixedIncrement`]): classic Vegas' tests
/// and its -1 decrease, with + inc per round. With inc = 1 the increase is `1.0 / cwnd`,
/// bit for bit classic Vegas' (`inc / cwnd` with inc = 1.0).
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

/// Table I: (alpha, beta, inc) for a value of succ. The third row is printed
/// "4 <= succ <= 15" in the paper, a typo for 8 <= succ <= 15 (module docs).
pub fn table_i(succ: u32) -> (f64, f64, u32) {
    match succ {
        0..=3 => (1.0, 3.0, 1),
        4..=7 => (2.0, 4.0, 2),
        8..=15 => (2.0, 4.0, 4),
        _ => (4.0, 8.0, 8),
    }
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
        AdaVegasState { succ: 0, alpha, beta, inc, last_inc: 1, steady: 0, last_round: AdaRound::None }
    }

    /// One congestion-avoidance round.
    pub fn congestion_avoidance(&mut self, r: &Round) -> CaAction {
        let d = r.delta as f64;
        if d < self.alpha {
            // "Whenever Delta < alpha AdaVegas updates succ and then sets alpha, beta and inc"
            self.succ = self.succ.saturating_add(1);
            (self.alpha, self.beta, self.inc) = table_i(self.succ);
            // "whenever AdaVegas expands the window ... it sets lastInc <- inc"
            self.last_inc = self.inc;
            self.steady = 0;
            self.last_round = AdaRound::Increase;
            CaAction::Increase(self.inc as f64 / r.cwnd)
        } else if d > self.beta {
            // "When congestion is detected ... lastInc <- max(lastInc/2, 1) and decreases the
            // window by lastInc"
            self.succ = 0;
            self.steady = 0;
            self.last_inc = (self.last_inc / 2).max(1);
            self.last_round = AdaRound::Congested;
            CaAction::DecreaseBy(self.last_inc as f64)
        } else {
            // "After two RTTs of steady state ... AdaVegas resets lastInc (lastInc <- 1)"
            self.succ = 0;
            self.steady = self.steady.saturating_add(1);
            if self.steady >= 2 {
                self.last_inc = 1;
            }
            self.last_round = AdaRound::Steady;
            CaAction::Hold
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
