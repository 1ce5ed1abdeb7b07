//! UDP sources: `[[udp]]` entries (ns-2 `Agent/UDP` + `Application/Traffic/*` + `Agent/Null`).
//!
//! ```toml
//! [[udp]]
//! name = "vbr"            # unique among [[udp]]; default "udp<i>"
//! from = "D3"
//! to = "S3"
//! start = "50s"           # default 0
//! stop = "200s"           # optional
//! packet_size = 1000      # bytes on the wire, required
//! model = "exp-onoff"     # "cbr" | "exp-onoff" | "pareto-onoff"
//! rate = "2Mbps"          # peak rate (the rate while ON; the rate of a CBR source)
//! mean_on = "10ms"
//! load = 0.9              # or mean_off = "12ms", or mean_rate = "900kbps"
//! ```
//!
//! See `docs/scenario-format.md` ("UDP sources") for how `load` maps to the mean OFF time.

use super::apps::{mean_time, pareto_shape};
use super::context::{NetBuilder, FOREVER};
use super::reader::{describe, Obj};
use super::ScenarioError;
use std::collections::HashMap;
use vegaslab_cc::Nanos;

#[derive(Clone, Debug, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct UdpSpec {
    pub name: String,
    pub from: usize,
    pub to: usize,
    #[serde(rename = "start_ns")]
    pub start: Nanos,
    #[serde(rename = "stop_ns")]
    pub stop: Option<Nanos>,
    /// Bytes per packet on the wire.
    pub packet_size: u32,
    pub model: UdpModel,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum UdpModel {
    /// ns-2 `Application/Traffic/CBR`: one packet every `interval` seconds from `start`;
    /// `random` adds ns-2's uniform jitter of +-interval/2 (`random_ 1`).
    #[serde(rename = "cbr")]
    Cbr { interval: f64, random: bool },
    /// ns-2 `Application/Traffic/Exponential` (RoVegas's VBR sources: the RoVegas paper, Chan et
    /// al., "Design and performance evaluation of an improved TCP congestion avoidance scheme",
    /// section 4).
    #[serde(rename = "exp-onoff")]
    ExpOnOff { rate_bps: f64, mean_on: f64, off: OffTime },
    /// ns-2 `Application/Traffic/Pareto`.
    #[serde(rename = "pareto-onoff")]
    ParetoOnOff { rate_bps: f64, mean_on: f64, mean_off: f64, shape: f64 },
}

/// How the mean OFF time of an exponential ON/OFF source is given.
#[derive(Clone, Debug, PartialEq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum OffTime {
    /// Seconds.
    Mean(f64),
    /// Long-run mean sending rate, bit/s (the OFF time is derived).
    MeanRate(f64),
    /// Mean rate = `load` x `reference_bps`; no reference: the narrowest link direction on the
    /// source's path (the RoVegas paper: "load 0.9" on its 1 Mbit/s bottleneck = 900 kbit/s).
    Load { load: f64, reference_bps: Option<f64> },
}

const COMMON: &[&str] = &["name", "from", "to", "start", "stop", "packet_size", "model"];

pub fn build_udp(root: &Obj, duration: Nanos, net: &NetBuilder) -> Result<Vec<UdpSpec>, ScenarioError> {
    let Some(items) = root.array("udp")? else { return Ok(Vec::new()) };
    if items.len() > super::limits::MAX_UDP_SOURCES {
        let message = format!("has {} sources; at most {} are allowed", items.len(), super::limits::MAX_UDP_SOURCES);
        return Err(root.err_kind("udp", super::ErrorKind::TooLarge, message));
    }
    let mut out: Vec<UdpSpec> = Vec::with_capacity(items.len());
    let mut seen: HashMap<String, usize> = HashMap::new();
    for (i, v) in items.iter().enumerate() {
        let u = Obj::new(root.ctx, v, &format!("udp[{i}]"))?;
        let spec = read_source(&u, i, duration, net)?;
        if let Some(j) = seen.insert(spec.name.clone(), i) {
            return Err(u.err("name", format!("\"{}\" is already the name of udp[{j}]", spec.name)));
        }
        out.push(spec);
    }
    Ok(out)
}

fn read_source(u: &Obj, i: usize, duration: Nanos, net: &NetBuilder) -> Result<UdpSpec, ScenarioError> {
    let model_name = u.string("model")?.ok_or_else(|| u.err("model", "is required: \"cbr\", \"exp-onoff\" or \"pareto-onoff\""))?;
    let extra: &[&str] = match model_name {
        "cbr" => &["rate", "interval", "random"],
        "exp-onoff" => &["rate", "mean_on", "mean_off", "mean_rate", "load", "load_reference"],
        "pareto-onoff" => &["rate", "mean_on", "mean_off", "shape"],
        other => return Err(u.err("model", format!("unknown model \"{other}\" (allowed: cbr, exp-onoff, pareto-onoff)"))),
    };
    u.deny_unknown(&[COMMON, extra].concat())?;
    let name = u.name("name")?.map(str::to_string).unwrap_or_else(|| format!("udp{i}"));
    let from = net.find(u, "from", u.req_string("from")?)?;
    let to = net.find(u, "to", u.req_string("to")?)?;
    if from == to {
        return Err(u.err("to", "must differ from 'from'"));
    }
    let start = u.time("start", 0, FOREVER)?.unwrap_or(0);
    if start >= duration {
        return Err(u.err("start", format!("must be before the end of the run ({} s), got {}", duration as f64 / 1e9, describe(u.get("start").unwrap()))));
    }
    let stop = u.time("stop", 0, FOREVER)?;
    if matches!(stop, Some(s) if s <= start) {
        return Err(u.err("stop", "must be after start"));
    }
    let packet_size = u
        .integer("packet_size", 1, 1_000_000)?
        .ok_or_else(|| u.err("packet_size", "is required: bytes per packet, e.g. 1000"))? as u32;
    let bits = packet_size as f64 * 8.0;
    let peak = |u: &Obj| u.bandwidth("rate")?.ok_or_else(|| u.err("rate", "is required: the sending rate while ON, e.g. \"2Mbps\""));
    let model = match model_name {
        "cbr" => {
            let interval = match (u.bandwidth("rate")?, u.time("interval", 1, FOREVER)?) {
                (Some(_), Some(_)) => return Err(u.err("interval", "give either rate or interval, not both")),
                (Some(rate), None) => bits / rate,
                (None, Some(ns)) => ns as f64 / 1e9,
                (None, None) => return Err(u.err("rate", "is required (or interval): e.g. rate = \"10Mbps\"")),
            };
            UdpModel::Cbr { interval, random: u.bool("random", false)? }
        }
        "exp-onoff" => {
            let rate_bps = peak(u)?;
            let mean_on = mean_time(u, "mean_on")?;
            let given: Vec<&str> = ["mean_off", "mean_rate", "load"].into_iter().filter(|k| u.get(k).is_some()).collect();
            if given.len() != 1 {
                let key = given.get(1).copied().unwrap_or("mean_off");
                return Err(u.err(key, "give exactly one of mean_off, mean_rate or load"));
            }
            if u.get("load_reference").is_some() && given[0] != "load" {
                return Err(u.err("load_reference", "only applies with load"));
            }
            let off = match given[0] {
                "mean_off" => OffTime::Mean(mean_time(u, "mean_off")?),
                "mean_rate" => {
                    let r = u.bandwidth("mean_rate")?.expect("present");
                    check_mean_rate(u, "mean_rate", r, rate_bps)?;
                    OffTime::MeanRate(r)
                }
                _ => {
                    let load = u.number("load", 0.0, 1e300)?.expect("present");
                    let reference_bps = u.bandwidth("load_reference")?;
                    if let Some(reference) = reference_bps {
                        check_mean_rate(u, "load", load * reference, rate_bps)?;
                    }
                    OffTime::Load { load, reference_bps }
                }
            };
            UdpModel::ExpOnOff { rate_bps, mean_on, off }
        }
        _ => UdpModel::ParetoOnOff {
            rate_bps: peak(u)?,
            mean_on: mean_time(u, "mean_on")?,
            mean_off: mean_time(u, "mean_off")?,
            shape: pareto_shape(u, "shape")?,
        },
    };
    Ok(UdpSpec { name, from, to, start, stop, packet_size, model })
}

/// The long-run mean rate of an ON/OFF source cannot exceed its rate while ON.
fn check_mean_rate(u: &Obj, key: &str, mean: f64, peak: f64) -> Result<(), ScenarioError> {
    if mean > peak {
        return Err(u.err(key, format!("gives a mean rate of {mean} bit/s, above the rate while ON ({peak} bit/s)")));
    }
    Ok(())
}
