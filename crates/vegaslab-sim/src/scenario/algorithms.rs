//! Congestion-control algorithms and their parameters (`flows[i].cc`, `flows[i].params`).

use super::reader::Obj;
use super::ScenarioError;
use vegaslab_cc::{Algorithm, RoVegasParams, VegasFlavour, VegasParams};

/// Every `cc` name a flow may use.
pub const ALGORITHMS: &[&str] = &["reno", "newreno", "vegas", "rovegas"];

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
                p.deny_unknown(&["alpha", "beta", "gamma", "flavour"])?;
                v.alpha = p.number("alpha", 0.0, 1e9)?.unwrap_or(v.alpha);
                v.beta = p.number("beta", 0.0, 1e9)?.unwrap_or(v.beta);
                v.gamma = p.number("gamma", 0.0, 1e9)?.unwrap_or(v.gamma);
                if v.beta < v.alpha {
                    return Err(p.err("beta", format!("must be >= alpha ({}), got {}", v.alpha, v.beta)));
                }
            }
            Ok(Algorithm::Vegas(v))
        }
        "rovegas" => {
            let mut r = RoVegasParams::default();
            if let Some(p) = &params {
                p.deny_unknown(&["alpha", "beta", "gamma", "probe_every", "option_bytes"])?;
                r.alpha = p.number("alpha", 0.0, 1e9)?.unwrap_or(r.alpha);
                r.beta = p.number("beta", 0.0, 1e9)?.unwrap_or(r.beta);
                r.gamma = p.number("gamma", 0.0, 1e9)?.unwrap_or(r.gamma);
                r.probe_every = p.integer("probe_every", 1, 1_000_000)?.map(|x| x as u32).unwrap_or(r.probe_every);
                // IP options take at most 40 bytes.
                r.option_bytes = p.integer("option_bytes", 0, 40)?.map(|x| x as u32).unwrap_or(r.option_bytes);
                if r.beta < r.alpha {
                    return Err(p.err("beta", format!("must be >= alpha ({}), got {}", r.alpha, r.beta)));
                }
            }
            Ok(Algorithm::RoVegas(r))
        }
        other => Err(f.err("cc", format!("unknown congestion control \"{other}\" (allowed: {})", ALGORITHMS.join(", ")))),
    }
}

