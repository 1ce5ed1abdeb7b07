//! TCP Vegas (Brakmo and Peterson) in three flavours: ns-2's agent (the papers' simulator),
//! Linux's `tcp_vegas.c` and ns-3's `TcpVegas` (docs/vegas-implementations.md). This file is the
//! algorithm: its parameters, how a scenario names them, and the classic alpha/beta rule in
//! the ns-2 form ([`crate::vegas_ns2`]) and the Linux form ([`crate::vegas_linux`]); the ns-3
//! flavour is [`crate::vegas_ns3`].

use crate::config::{Flavour, TcpConfig, VariantFlavour};
use crate::controller::CongestionControl;
use crate::heuristics::{read_alpha_beta, with_heuristic, MAX_PACKETS};
use crate::params::{params_allowed, AlgorithmParams, Param, ParamError, ParamKind, ParamSource, SenderKind};
use crate::vegas_linux::{LinuxAction, LinuxRound, LinuxRule, LinuxVegas, Region, Thresholds};
use crate::vegas_ns2::{CaAction, Ns2Vegas, Round, VegasRule};
use crate::vegas_ns3::Ns3Vegas;
use serde::{Deserialize, Serialize};

/// Brakmo-Peterson Vegas as ns-2 codes it: delta > beta: -1; delta < alpha: +1; hold.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Classic {
    pub alpha: f64,
    pub beta: f64,
}

impl Classic {
    /// The decision, shared with the rules that only add to it (RoVegas).
    pub fn decide(&self, r: &Round) -> CaAction {
        let d = r.delta as f64;
        if d > self.beta {
            CaAction::Decrease
        } else if d < self.alpha {
            CaAction::Increase(1.0 / r.cwnd)
        } else {
            CaAction::Hold
        }
    }
}

impl VegasRule for Classic {
    fn name(&self) -> &'static str {
        "vegas"
    }
    fn congestion_avoidance(&mut self, r: &Round) -> CaAction {
        self.decide(r)
    }
    fn variables(&self, out: &mut Vec<(&'static str, f64)>) {
        out.extend([("alpha", self.alpha), ("beta", self.beta)]);
    }
}

/// Vegas' parameters: thresholds in packets and the flavour.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct VegasParams {
    pub alpha: f64,
    pub beta: f64,
    pub gamma: f64,
    pub flavour: Flavour,
}

impl VegasParams {
    /// The flavour's own defaults: ns-2 1/3/1, Linux and ns-3 2/4/1.
    pub fn defaults_for(flavour: Flavour) -> Self {
        let (alpha, beta) = match flavour {
            Flavour::Ns2 => (1.0, 3.0),
            Flavour::Linux | Flavour::Ns3 => (2.0, 4.0),
        };
        VegasParams { alpha, beta, gamma: 1.0, flavour }
    }
}

impl Default for VegasParams {
    fn default() -> Self {
        Self::defaults_for(Flavour::Ns2)
    }
}

/// Largest gamma accepted, packets.
pub const MAX_GAMMA: f64 = 1e9;

/// `params.alpha`: the lower threshold on diff.
pub static ALPHA: Param = Param {
    name: "alpha",
    kind: ParamKind::Number { lo: 0.0, hi: MAX_PACKETS },
    unit: "packets",
    doc: "diff below alpha: grow cwnd by one packet per round",
    cite: "Brakmo and Peterson 1995, section 3.2; ns-2 v_alpha_ 1, Linux tcp_vegas.c alpha 2",
};

/// `params.beta`: the upper threshold on diff.
pub static BETA: Param = Param {
    name: "beta",
    kind: ParamKind::Number { lo: 0.0, hi: MAX_PACKETS },
    unit: "packets",
    doc: "diff above beta: shrink cwnd by one packet per round (beta >= alpha)",
    cite: "Brakmo and Peterson 1995, section 3.2; ns-2 v_beta_ 3, Linux tcp_vegas.c beta 4",
};

/// `params.gamma`: the slow-start exit threshold.
pub static GAMMA: Param = Param {
    name: "gamma",
    kind: ParamKind::Number { lo: 0.0, hi: MAX_GAMMA },
    unit: "packets",
    doc: "diff above gamma in slow start: leave slow start",
    cite: "Brakmo and Peterson 1995, section 3.3; ns-2 v_gamma_ 1, Linux tcp_vegas.c gamma 1",
};

/// `params.flavour` of Vegas.
pub static FLAVOUR: Param = Param {
    name: "flavour",
    kind: ParamKind::Choice { values: &["ns2", "linux", "ns3"] },
    unit: "",
    doc: "whose Vegas: ns-2's agent (the papers' simulator), Linux's tcp_vegas.c or ns-3's TcpVegas",
    cite: "docs/vegas-implementations.md",
};

/// `params.flavour` of a Vegas variant (no ns-3 form: ns-3 has none of the variants).
pub static VARIANT_FLAVOUR: Param = Param {
    name: "flavour",
    kind: ParamKind::Choice { values: &["ns2", "linux"] },
    unit: "",
    doc: "the variant on ns-2's Vegas agent (as its paper) or on Linux's tcp_vegas.c",
    cite: "docs/vegas-implementations.md",
};

/// Vegas' parameters, in the order the docs list them.
pub fn params() -> Vec<&'static Param> {
    with_heuristic(&[&ALPHA, &BETA, &GAMMA, &FLAVOUR])
}

/// `params.flavour`, default ns2.
pub fn read_flavour(p: &dyn ParamSource) -> Result<Flavour, ParamError> {
    Ok(match FLAVOUR.choice(p)?.as_deref() {
        None | Some("ns2") => Flavour::Ns2,
        Some("linux") => Flavour::Linux,
        Some("ns3") => Flavour::Ns3,
        Some(other) => {
            return Err(p.error("flavour", format!("unknown Vegas flavour \"{other}\" (allowed: ns2, linux, ns3)")));
        }
    })
}

/// `params.flavour` of a Vegas variant, default ns2 (`what` names the variant in the error).
pub fn read_variant_flavour(p: &dyn ParamSource, what: &str) -> Result<VariantFlavour, ParamError> {
    Ok(match VARIANT_FLAVOUR.choice(p)?.as_deref() {
        None | Some("ns2") => VariantFlavour::Ns2,
        Some("linux") => VariantFlavour::Linux,
        Some("ns3") => {
            return Err(p.error("flavour", format!("{what} has no ns-3 flavour (ns-3 has no {what}; allowed: ns2, linux)")));
        }
        Some(other) => {
            return Err(p.error("flavour", format!("unknown flavour \"{other}\" (allowed: ns2, linux)")));
        }
    })
}

/// `params.gamma` over `default`.
pub fn read_gamma(p: &dyn ParamSource, default: f64) -> Result<f64, ParamError> {
    Ok(GAMMA.number(p)?.unwrap_or(default))
}

/// The registry's reader for `cc = "vegas"`.
pub fn read(p: &dyn ParamSource) -> Result<Box<dyn AlgorithmParams>, ParamError> {
    let mut v = VegasParams::defaults_for(read_flavour(p)?);
    p.deny_unknown(&params_allowed(&params()))?;
    read_alpha_beta(p, (&ALPHA, &BETA), &mut v.alpha, &mut v.beta)?;
    v.gamma = read_gamma(p, v.gamma)?;
    Ok(Box::new(v))
}

impl AlgorithmParams for VegasParams {
    fn controller(&self, _cfg: &TcpConfig) -> Box<dyn CongestionControl> {
        let classic = Classic { alpha: self.alpha, beta: self.beta };
        match self.flavour {
            Flavour::Ns2 => Box::new(Ns2Vegas::new(classic, self.gamma)),
            Flavour::Linux => Box::new(LinuxVegas::new(classic, self.gamma)),
            Flavour::Ns3 => Box::new(Ns3Vegas::new(self.alpha, self.beta, self.gamma)),
        }
    }

    fn sender(&self) -> SenderKind {
        sender_for(self.flavour)
    }

    fn clone_box(&self) -> Box<dyn AlgorithmParams> {
        Box::new(*self)
    }
}

/// The sender of a flavour: ns-2's Vegas agent, Linux's machinery (a scenario's default
/// `tcp.stack` for the flavour is Linux's), or for ns-3 the NewReno sender.
pub fn sender_for(flavour: Flavour) -> SenderKind {
    match flavour {
        Flavour::Ns2 => SenderKind::VegasAgent,
        Flavour::Linux => SenderKind::Linux,
        Flavour::Ns3 => SenderKind::TcpAgent { newreno: true },
    }
}

impl LinuxRule for Classic {
    fn name(&self) -> &'static str {
        "vegas"
    }
    /// diff > beta: -1; diff < alpha: +1; hold (`tcp_vegas.c`), with the integer thresholds
    /// ceil(alpha) and floor(beta) ([`Thresholds`]): the same decisions as comparing the
    /// integer diff with the fractional alpha and beta.
    fn congestion_avoidance(&mut self, r: &LinuxRound) -> LinuxAction {
        match Thresholds::from_packets(self.alpha, self.beta).region(r.diff) {
            Region::Above => LinuxAction::Decrease(1),
            Region::Below => LinuxAction::Increase(1),
            Region::Between => LinuxAction::Hold,
        }
    }
}
