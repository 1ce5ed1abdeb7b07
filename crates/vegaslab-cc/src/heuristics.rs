//! Weigle and Feng's heuristics for Vegas' alpha and beta (the grids paper: Weigle and Feng, "A
//! Case for TCP Vegas in High-Performance Computational Grids", LA-UR-01-3420, sections
//! 4.1-4.3; docs/papers.md). Pure functions of the router configuration; all values in packets.
//!
//! The paper's idea: a Vegas flow keeps between alpha and beta packets queued, a Reno flow
//! takes whatever buffer Vegas leaves, so alpha and beta should follow the (effective) queue
//! space a fair flow can hold. Python's `vegaslab.heuristics` calls these functions (through
//! `vegaslab._core.heuristic`), and a scenario can name them in a Vegas-family flow's params (`heuristic = "queue" | "red" |
//! "red-exact" | "red-per-flow"`, docs/scenario-format.md).

use std::fmt;

/// An (alpha, beta) pair in packets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Thresholds {
    pub alpha: u64,
    pub beta: u64,
}

/// An input a heuristic cannot use: the input's name and what is wrong with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeuristicError {
    /// The offending input, as the scenario parameter is named (`queue`, `red_min`,
    /// `red_max`, `flows`).
    pub input: &'static str,
    pub message: String,
}

impl fmt::Display for HeuristicError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.input, self.message)
    }
}

impl std::error::Error for HeuristicError {}

fn err(input: &'static str, message: String) -> HeuristicError {
    HeuristicError { input, message }
}

/// Section 4.1 (network 1, varied queue sizes): "set alpha = floor(Queue Size / 3 - 1) and set
/// beta = floor(Queue Size / 3)", i.e. alpha = floor(q/3) - 1, beta = floor(q/3). Derived from
/// Reno taking 75% of the bandwidth and Vegas 100%, bandwidth following buffer occupancy.
///
/// The paper sweeps q from 4 (alpha 0, beta 1). q = 25 gives alpha 7, beta 8. Needs q >= 3
/// (below, alpha would be negative).
pub fn from_queue_size(queue: u64) -> Result<Thresholds, HeuristicError> {
    if queue < 3 {
        return Err(err("queue", format!("must be >= 3 packets (alpha = floor(queue/3) - 1 would be negative), got {queue}")));
    }
    let third = queue / 3;
    Ok(Thresholds { alpha: third - 1, beta: third })
}

/// Section 4.2 (network 1, varied RED thresholds), first heuristic: the RED thresholds are the
/// "apparent queue size", and alpha = RED_min - 2, beta = RED_max - 2. Needs
/// 2 <= RED_min <= RED_max.
pub fn from_red(red_min: u64, red_max: u64) -> Result<Thresholds, HeuristicError> {
    if red_min < 2 {
        return Err(err("red_min", format!("must be >= 2 packets (alpha = red_min - 2 would be negative), got {red_min}")));
    }
    check_red_order(red_min, red_max)?;
    Ok(Thresholds { alpha: red_min - 2, beta: red_max - 2 })
}

/// Section 4.2, second heuristic: alpha = RED_min, beta = RED_max ("lets Vegas win everywhere
/// but raises loss and lowers utilisation"). Needs 1 <= RED_min <= RED_max.
pub fn from_red_exact(red_min: u64, red_max: u64) -> Result<Thresholds, HeuristicError> {
    if red_min < 1 {
        return Err(err("red_min", format!("must be >= 1 packet, got {red_min}")));
    }
    check_red_order(red_min, red_max)?;
    Ok(Thresholds { alpha: red_min, beta: red_max })
}

fn check_red_order(red_min: u64, red_max: u64) -> Result<(), HeuristicError> {
    if red_max < red_min {
        return Err(err("red_max", format!("must be >= red_min ({red_min}), got {red_max}")));
    }
    Ok(())
}

/// Sections 4.3-4.4 (networks 2-4): RED_min / N is "the effective fair queueing space per
/// flow", and alpha and beta "may then be set slightly smaller than this value"; "using
/// RED_min / N often results in unfairly poor performance for Reno flows".
///
/// "Slightly below", numerically: beta = the largest whole number strictly below
/// RED_min / N, i.e. floor((RED_min - 1) / N), and alpha = beta - 1 (the same one-packet gap
/// as section 4.1's floor(q/3) - 1, floor(q/3)). Network 3 (RED_min 8948, N = 100):
/// 8948/100 = 89.48, alpha 88, beta 89 -- the paper's "slightly less than 8948/100 ~ 89" and
/// its crossover "near 89" (section 4.5). Network 2 (6711, 50): 134.22 -> 133, 134. When
/// N divides RED_min exactly (e.g. 9000/100 = 90) beta is 89, still strictly below. Needs
/// RED_min > N (else beta would be 0 and alpha negative).
pub fn from_red_per_flow(red_min: u64, flows: u64) -> Result<Thresholds, HeuristicError> {
    if flows < 1 {
        return Err(err("flows", format!("must be >= 1, got {flows}")));
    }
    if red_min <= flows {
        return Err(err(
            "red_min",
            format!("must be > flows ({flows}) so that alpha, beta just below red_min/flows are >= 0, got {red_min}"),
        ));
    }
    let beta = (red_min - 1) / flows;
    Ok(Thresholds { alpha: beta - 1, beta })
}

// ---- reading alpha and beta from a scenario's params ----

use crate::params::{Param, ParamError, ParamKind, ParamSource};

/// The heuristics a Vegas-family flow may name (`params.heuristic`).
pub const HEURISTICS: &[&str] = &["queue", "red", "red-exact", "red-per-flow"];

/// Largest alpha/beta/heuristic input accepted, packets.
pub const MAX_PACKETS: f64 = 1e9;

const INPUT_RANGE: ParamKind = ParamKind::Integer { lo: 0, hi: MAX_PACKETS as i64 };

/// `params.heuristic`: alpha and beta from the router's configuration instead of given.
pub static HEURISTIC: Param = Param {
    name: "heuristic",
    kind: ParamKind::Choice { values: HEURISTICS },
    unit: "",
    doc: "set alpha and beta from the bottleneck's queue (queue) or RED thresholds (red, red-exact, red-per-flow)",
    cite: "the grids paper, sections 4.1-4.3",
};

/// `params.queue`: the bottleneck's DropTail buffer, input of `heuristic = "queue"`.
pub static QUEUE: Param = Param {
    name: "queue",
    kind: INPUT_RANGE,
    unit: "packets",
    doc: "the bottleneck's buffer, for heuristic = \"queue\"",
    cite: "the grids paper, section 4.1",
};

/// `params.red_min`: RED's minimum threshold, input of the RED heuristics.
pub static RED_MIN: Param = Param {
    name: "red_min",
    kind: INPUT_RANGE,
    unit: "packets",
    doc: "the bottleneck's RED minimum threshold, for the red heuristics",
    cite: "the grids paper, sections 4.2-4.3",
};

/// `params.red_max`: RED's maximum threshold, input of `red` and `red-exact`.
pub static RED_MAX: Param = Param {
    name: "red_max",
    kind: INPUT_RANGE,
    unit: "packets",
    doc: "the bottleneck's RED maximum threshold, for heuristic = \"red\" or \"red-exact\"",
    cite: "the grids paper, section 4.2",
};

/// `params.flows`: the number of flows sharing the bottleneck, input of `red-per-flow`.
pub static FLOWS: Param = Param {
    name: "flows",
    kind: INPUT_RANGE,
    unit: "flows",
    doc: "the flows sharing the bottleneck, for heuristic = \"red-per-flow\"",
    cite: "the grids paper, section 4.3",
};

/// The heuristic and its inputs, as a Vegas-family algorithm lists them among its parameters.
pub static HEURISTIC_PARAMS: [&Param; 5] = [&HEURISTIC, &QUEUE, &RED_MIN, &RED_MAX, &FLOWS];

/// The inputs of the heuristics.
fn heuristic_inputs() -> impl Iterator<Item = &'static str> {
    HEURISTIC_PARAMS[1..].iter().map(|p| p.name)
}

/// `own` (an algorithm's parameters) followed by the heuristic and its inputs.
pub fn with_heuristic(own: &[&'static Param]) -> Vec<&'static Param> {
    own.iter().copied().chain(HEURISTIC_PARAMS).collect()
}

fn quoted(names: &[&str]) -> String {
    names.iter().map(|n| format!("\"{n}\"")).collect::<Vec<_>>().join(", ")
}

/// alpha and beta from `params.heuristic`, if one is named (sections 4.1-4.3). The
/// heuristic's inputs are required, inputs it does not use and an explicit alpha or beta are
/// errors, and so are heuristic inputs without a heuristic.
fn heuristic_thresholds(p: &dyn ParamSource) -> Result<Option<Thresholds>, ParamError> {
    let Some(h) = HEURISTIC.choice(p)? else {
        if let Some(k) = heuristic_inputs().find(|k| p.is_set(k)) {
            return Err(p.error(k, format!("is only used with a heuristic (heuristic = {})", quoted(HEURISTICS))));
        }
        return Ok(None);
    };
    let uses: &[&str] = match h.as_str() {
        "queue" => &["queue"],
        "red" | "red-exact" => &["red_min", "red_max"],
        "red-per-flow" => &["red_min", "flows"],
        other => {
            return Err(p.error("heuristic", format!("unknown heuristic \"{other}\" (allowed: {})", quoted(HEURISTICS))));
        }
    };
    for k in ["alpha", "beta"] {
        if p.is_set(k) {
            return Err(p.error(k, format!("cannot be given with heuristic = \"{h}\", which sets alpha and beta")));
        }
    }
    if let Some(k) = heuristic_inputs().find(|k| p.is_set(k) && !uses.contains(k)) {
        return Err(p.error(k, format!("is not used by heuristic = \"{h}\" (it uses: {})", uses.join(", "))));
    }
    let input = |param: &Param| -> Result<u64, ParamError> {
        param
            .integer(p)?
            .map(|x| x as u64)
            .ok_or_else(|| p.error(param.name, format!("is required by heuristic = \"{h}\"")))
    };
    let t = match h.as_str() {
        "queue" => from_queue_size(input(&QUEUE)?),
        "red" => from_red(input(&RED_MIN)?, input(&RED_MAX)?),
        "red-exact" => from_red_exact(input(&RED_MIN)?, input(&RED_MAX)?),
        _ => from_red_per_flow(input(&RED_MIN)?, input(&FLOWS)?),
    };
    t.map(Some).map_err(|e| p.error(e.input, e.message))
}

/// alpha and beta for a Vegas-family flow: from a heuristic, or the explicit values (each in
/// its declared range, `alpha_param` and `beta_param`) over the defaults already in `alpha`
/// and `beta`; beta >= alpha either way.
pub fn read_alpha_beta(
    p: &dyn ParamSource,
    (alpha_param, beta_param): (&Param, &Param),
    alpha: &mut f64,
    beta: &mut f64,
) -> Result<(), ParamError> {
    let lo = match alpha_param.kind {
        ParamKind::Number { lo, .. } => lo,
        _ => 0.0,
    };
    if let Some(t) = heuristic_thresholds(p)? {
        (*alpha, *beta) = (t.alpha as f64, t.beta as f64);
        if *alpha < lo {
            return Err(p.error(
                "heuristic",
                format!("gives alpha {} and beta {}, but alpha must be >= {lo} here", t.alpha, t.beta),
            ));
        }
        return Ok(());
    }
    *alpha = alpha_param.number(p)?.unwrap_or(*alpha);
    *beta = beta_param.number(p)?.unwrap_or(*beta);
    if *beta < *alpha {
        return Err(p.error("beta", format!("must be >= alpha ({alpha}), got {beta}")));
    }
    Ok(())
}

/// Refuse parameters a preset fixes (and the heuristic keys), naming the preset.
pub fn deny_fixed(p: &dyn ParamSource, fixed: &[&str], why: &str) -> Result<(), ParamError> {
    for k in fixed.iter().copied().chain(HEURISTIC_PARAMS.iter().map(|p| p.name)) {
        if p.is_set(k) {
            return Err(p.error(k, format!("cannot be set: {why}")));
        }
    }
    Ok(())
}
