//! Congestion-control algorithms and their parameters (`flows[i].cc`, `flows[i].params`).

use super::reader::Obj;
use super::ScenarioError;
use vegaslab_cc::heuristics::{self, Thresholds};
use vegaslab_cc::{
    AdaVegasParams, Algorithm, AtBeta, EqualThroughput, RoVegasParams, VegasAParams, VegasFlavour, VegasIncParams,
    VegasParams,
};

/// Every `cc` name a flow may use. One spelling each, the papers' own: "vegas-a" (the paper's
/// "Vegas-A"), "adavegas", "vegas_1" / "vegas_8" (adavegas.txt's "Vegas_1" / "Vegas_8").
pub const ALGORITHMS: &[&str] = &["reno", "newreno", "vegas", "rovegas", "vegas-a", "adavegas", "vegas_1", "vegas_8"];

/// The Weigle-Feng alpha/beta heuristics a Vegas-family flow may name (`params.heuristic`).
pub const HEURISTICS: &[&str] = &["queue", "red", "red-exact", "red-per-flow"];

/// The inputs of the heuristics (`params.queue`, ...).
const HEURISTIC_INPUTS: &[&str] = &["queue", "red_min", "red_max", "flows"];

/// Largest alpha/beta/heuristic input accepted, packets.
const MAX_PACKETS: f64 = 1e9;

/// `allowed` plus the heuristic keys.
fn with_heuristic_keys<'a>(allowed: &[&'a str]) -> Vec<&'a str> {
    let mut v = allowed.to_vec();
    v.push("heuristic");
    v.extend_from_slice(HEURISTIC_INPUTS);
    v
}

/// alpha and beta from `params.heuristic`, if one is named (vegas-grids.txt sections 4.1-4.3,
/// `vegaslab_cc::heuristics`). The heuristic's inputs are required, inputs it does not use
/// and an explicit alpha or beta are errors, and so are heuristic inputs without a heuristic.
fn heuristic_thresholds(p: &Obj) -> Result<Option<Thresholds>, ScenarioError> {
    let Some(h) = p.string("heuristic")? else {
        if let Some(k) = HEURISTIC_INPUTS.iter().find(|k| p.get(k).is_some()) {
            return Err(p.err(k, format!("is only used with a heuristic (heuristic = {})", quoted(HEURISTICS))));
        }
        return Ok(None);
    };
    let uses: &[&str] = match h {
        "queue" => &["queue"],
        "red" | "red-exact" => &["red_min", "red_max"],
        "red-per-flow" => &["red_min", "flows"],
        other => {
            return Err(p.err("heuristic", format!("unknown heuristic \"{other}\" (allowed: {})", quoted(HEURISTICS))));
        }
    };
    for k in ["alpha", "beta"] {
        if p.get(k).is_some() {
            return Err(p.err(k, format!("cannot be given with heuristic = \"{h}\", which sets alpha and beta")));
        }
    }
    if let Some(k) = HEURISTIC_INPUTS.iter().find(|k| p.get(k).is_some() && !uses.contains(k)) {
        return Err(p.err(k, format!("is not used by heuristic = \"{h}\" (it uses: {})", uses.join(", "))));
    }
    let input = |k: &str| -> Result<u64, ScenarioError> {
        p.integer(k, 0, MAX_PACKETS as i64)?
            .map(|x| x as u64)
            .ok_or_else(|| p.err(k, format!("is required by heuristic = \"{h}\"")))
    };
    let t = match h {
        "queue" => heuristics::from_queue_size(input("queue")?),
        "red" => heuristics::from_red(input("red_min")?, input("red_max")?),
        "red-exact" => heuristics::from_red_exact(input("red_min")?, input("red_max")?),
        _ => heuristics::from_red_per_flow(input("red_min")?, input("flows")?),
    };
    t.map(Some).map_err(|e| p.err(e.input, e.message))
}

fn quoted(names: &[&str]) -> String {
    names.iter().map(|n| format!("\"{n}\"")).collect::<Vec<_>>().join(", ")
}

/// alpha and beta for a Vegas-family flow: from a heuristic, or the explicit values (each in
/// [lo, MAX_PACKETS]) over the defaults; beta >= alpha either way.
fn alpha_beta(p: &Obj, lo: f64, alpha: &mut f64, beta: &mut f64) -> Result<(), ScenarioError> {
    if let Some(t) = heuristic_thresholds(p)? {
        (*alpha, *beta) = (t.alpha as f64, t.beta as f64);
        if *alpha < lo {
            return Err(p.err(
                "heuristic",
                format!("gives alpha {} and beta {}, but alpha must be >= {lo} here", t.alpha, t.beta),
            ));
        }
        return Ok(());
    }
    *alpha = p.number("alpha", lo, MAX_PACKETS)?.unwrap_or(*alpha);
    *beta = p.number("beta", lo, MAX_PACKETS)?.unwrap_or(*beta);
    if *beta < *alpha {
        return Err(p.err("beta", format!("must be >= alpha ({alpha}), got {beta}")));
    }
    Ok(())
}

/// Reject parameters a preset fixes, naming the preset.
fn deny_fixed(p: &Obj, fixed: &[&str], why: &str) -> Result<(), ScenarioError> {
    for k in fixed.iter().chain(std::iter::once(&"heuristic")).chain(HEURISTIC_INPUTS) {
        if p.get(k).is_some() {
            return Err(p.err(k, format!("cannot be set: {why}")));
        }
    }
    Ok(())
}

pub fn read_algorithm(f: &Obj, cc: &str) -> Result<Algorithm, ScenarioError> {
    let params = f.table("params")?;
    match cc {
        "reno" | "newreno" => {
            if let Some(p) = &params {
                p.deny_unknown(&[])?;
            }
            Ok(if cc == "reno" { Algorithm::Reno } else { Algorithm::NewReno })
        }
        "vegas" => {
            let flavour = match params.as_ref().map(|p| p.string("flavour")).transpose()?.flatten().unwrap_or("ns2") {
                "ns2" => VegasFlavour::Ns2,
                "linux" => VegasFlavour::Linux,
                "ns3" => VegasFlavour::Ns3,
                other => {
                    let p = params.as_ref().unwrap();
                    return Err(p.err("flavour", format!("unknown Vegas flavour \"{other}\" (allowed: ns2, linux, ns3)")));
                }
            };
            let mut v = VegasParams::defaults_for(flavour);
            if let Some(p) = &params {
                p.deny_unknown(&with_heuristic_keys(&["alpha", "beta", "gamma", "flavour"]))?;
                alpha_beta(p, 0.0, &mut v.alpha, &mut v.beta)?;
                v.gamma = p.number("gamma", 0.0, 1e9)?.unwrap_or(v.gamma);
            }
            Ok(Algorithm::Vegas(v))
        }
        "rovegas" => {
            let mut r = RoVegasParams::default();
            if let Some(p) = &params {
                p.deny_unknown(&with_heuristic_keys(&["alpha", "beta", "gamma", "probe_every", "option_bytes"]))?;
                alpha_beta(p, 0.0, &mut r.alpha, &mut r.beta)?;
                r.gamma = p.number("gamma", 0.0, 1e9)?.unwrap_or(r.gamma);
                r.probe_every = p.integer("probe_every", 1, 1_000_000)?.map(|x| x as u32).unwrap_or(r.probe_every);
                // IP options take at most 40 bytes.
                r.option_bytes = p.integer("option_bytes", 0, 40)?.map(|x| x as u32).unwrap_or(r.option_bytes);
            }
            Ok(Algorithm::RoVegas(r))
        }
        "vegas-a" => {
            let mut v = VegasAParams::default();
            if let Some(p) = &params {
                p.deny_unknown(&with_heuristic_keys(&["alpha", "beta", "gamma", "equal_throughput", "at_beta"]))?;
                // Initial alpha/beta: whole numbers >= 1 (Vegas-A steps them by 1 and tests
                // alpha == 1 / alpha > 1, vegas-a.txt lines 11-21).
                alpha_beta(p, 1.0, &mut v.alpha, &mut v.beta)?;
                for (k, x) in [("alpha", v.alpha), ("beta", v.beta)] {
                    if x.fract() != 0.0 {
                        return Err(p.err(
                            k,
                            format!("must be a whole number of packets for Vegas-A (it steps alpha and beta by 1), got {x}"),
                        ));
                    }
                }
                v.gamma = p.number("gamma", 0.0, 1e9)?.unwrap_or(v.gamma);
                // A rule left out keeps `VegasAParams::default()` (the one owner of defaults).
                v.equal_throughput = match p.string("equal_throughput")? {
                    None => v.equal_throughput,
                    Some("increase") => EqualThroughput::Increase,
                    Some("hold") => EqualThroughput::Hold,
                    Some(other) => {
                        return Err(p.err(
                            "equal_throughput",
                            format!("unknown tie rule \"{other}\" (allowed: \"increase\" (line 02, default), \"hold\" (line 06))"),
                        ))
                    }
                };
                v.at_beta = match p.string("at_beta")? {
                    None => v.at_beta,
                    Some("hold") => AtBeta::Hold,
                    Some("between") => AtBeta::Between,
                    Some(other) => {
                        return Err(p.err(
                            "at_beta",
                            format!("unknown rule \"{other}\" (allowed: \"between\" (lines 01-09, default), \"hold\" (lines 24-25))"),
                        ))
                    }
                };
            }
            Ok(Algorithm::VegasA(v))
        }
        "adavegas" => {
            let mut a = AdaVegasParams::default();
            if let Some(p) = &params {
                deny_fixed(p, &["alpha", "beta", "inc"], "AdaVegas takes alpha, beta and inc from Table I of its paper")?;
                p.deny_unknown(&["gamma"])?;
                a.gamma = p.number("gamma", 0.0, 1e9)?.unwrap_or(a.gamma);
            }
            Ok(Algorithm::AdaVegas(a))
        }
        "vegas_1" | "vegas_8" => {
            let mut v = if cc == "vegas_1" { VegasIncParams::VEGAS_1 } else { VegasIncParams::VEGAS_8 };
            if let Some(p) = &params {
                let why = format!(
                    "the {cc} preset fixes alpha {}, beta {}, inc {} (adavegas.txt)",
                    v.alpha, v.beta, v.inc
                );
                deny_fixed(p, &["alpha", "beta", "inc"], &why)?;
                p.deny_unknown(&["gamma"])?;
                v.gamma = p.number("gamma", 0.0, 1e9)?.unwrap_or(v.gamma);
            }
            Ok(Algorithm::VegasInc(v))
        }
        other => Err(f.err("cc", format!("unknown congestion control \"{other}\" (allowed: {})", ALGORITHMS.join(", ")))),
    }
}
