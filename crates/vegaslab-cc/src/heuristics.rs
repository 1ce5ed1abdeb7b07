//! Weigle and Feng's heuristics for Vegas' alpha and beta ("A Case for TCP Vegas in
//! High-Performance Computational Grids", LA-UR-01-3420; `shared/papers/vegas-grids.txt`,
//! sections 4.1-4.3). Pure functions of the router configuration; all values in packets.
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
