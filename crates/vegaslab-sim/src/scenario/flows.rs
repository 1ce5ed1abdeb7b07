//! Flows: endpoints, algorithm, application, TCP options.

use super::algorithms::read_algorithm;
use super::build::{NetBuilder, FOREVER};
use super::limits::{self, MAX_FLOWS};
use super::reader::{describe, Obj};
use super::{ErrorKind, FlowSpec, ScenarioError};
use crate::units;
use toml::Value;
use vegaslab_cc::{PartialAckTimer, TcpConfig};

pub fn build_flows(f: &Obj, i: usize, duration: u64, net: &NetBuilder, out: &mut Vec<FlowSpec>) -> Result<(), ScenarioError> {
    f.deny_unknown(&["name", "from", "to", "cc", "start", "stop", "app", "file_size", "params", "tcp", "pairs", "range"])?;
    // `pairs = "1-25"` expands into one flow per dumbbell pair S_k -> D_k.
    let range = match f.string("pairs")? {
        None => None,
        Some(text) => {
            if net.dumbbell_pairs == 0 {
                return Err(f.err("pairs", "needs a [dumbbell]"));
            }
            let parsed = text
                .split_once('-')
                .and_then(|(a, b)| Some((a.trim().parse::<usize>().ok()?, b.trim().parse::<usize>().ok()?)));
            match parsed {
                Some((a, b)) if a >= 1 && a <= b && b <= net.dumbbell_pairs => {
                    too_many_flows(f, "pairs", out.len(), b - a + 1)?;
                    Some((a, b))
                }
                _ => return Err(f.err("pairs", format!("must be \"first-last\" within 1-{}, got \"{text}\"", net.dumbbell_pairs))),
            }
        }
    };
    let base_name = f.string("name")?.map(str::to_string);
    let cc = f.req_string("cc")?;
    let start = f.time("start", 0, FOREVER)?.unwrap_or(0);
    if start >= duration {
        return Err(f.err("start", format!("must be before the end of the run ({} s), got {}", duration as f64 / 1e9, describe(f.get("start").unwrap()))));
    }
    let stop = f.time("stop", 0, FOREVER)?;
    if let Some(stop) = stop {
        if stop <= start {
            return Err(f.err("stop", "must be after start"));
        }
    }
    // ftp, file, and the traffic models of the papers (onoff, nps, pareto-paced): see apps.rs.
    let app = super::apps::read_app(f)?;
    let algorithm = read_algorithm(f, cc)?;
    let tcp = match f.table("tcp")? {
        Some(t) => read_tcp(&t)?,
        None => TcpConfig::default(),
    };

    let endpoints: Vec<(String, usize, usize)> = match range {
        Some((a, b)) => {
            if f.get("from").is_some() || f.get("to").is_some() {
                return Err(f.err("pairs", "give either pairs or from/to, not both"));
            }
            let stem = base_name.clone().unwrap_or_else(|| cc.to_string());
            (a..=b)
                .map(|k| {
                    let from = net.index[&format!("S{k}")];
                    let to = net.index[&format!("D{k}")];
                    (format!("{stem}{k}"), from, to)
                })
                .collect()
        }
        None => {
            let from_name = f.req_string("from")?;
            let to_name = f.req_string("to")?;
            // `range = "1-12"` repeats the entry with `{i}` in from/to/name replaced by 1..12.
            let ks: Vec<Option<usize>> = match f.string("range")? {
                None => vec![None],
                Some(text) => {
                    let parsed = text
                        .split_once('-')
                        .and_then(|(a, b)| Some((a.trim().parse::<usize>().ok()?, b.trim().parse::<usize>().ok()?)));
                    match parsed {
                        Some((a, b)) if a <= b => {
                            too_many_flows(f, "range", out.len(), b - a + 1)?;
                            (a..=b).map(Some).collect()
                        }
                        _ => return Err(f.err("range", format!("must be \"first-last\", e.g. \"1-12\", got \"{text}\""))),
                    }
                }
            };
            if ks[0].is_some() && !(from_name.contains("{i}") || to_name.contains("{i}")) {
                return Err(f.err("range", "needs {i} in from or to, e.g. to = \"UE{i}\""));
            }
            let mut out = Vec::with_capacity(ks.len());
            for k in ks {
                let subst = |text: &str| match k {
                    Some(k) => text.replace("{i}", &k.to_string()),
                    None => text.to_string(),
                };
                let from = net.find(f, "from", &subst(from_name))?;
                let to = net.find(f, "to", &subst(to_name))?;
                if from == to {
                    return Err(f.err("to", "must differ from 'from'"));
                }
                let name = match (&base_name, k) {
                    (Some(n), Some(k)) if n.contains("{i}") => n.replace("{i}", &k.to_string()),
                    (Some(n), Some(k)) => format!("{n}{k}"),
                    (Some(n), None) => n.clone(),
                    (None, Some(k)) => format!("{cc}{k}"),
                    (None, None) => format!("flow{i}"),
                };
                out.push((name, from, to));
            }
            out
        }
    };
    if let Some((name, _, _)) = endpoints.iter().find(|(name, _, _)| !limits::valid_name(name)) {
        let key = if f.get("name").is_some() { "name" } else { "cc" };
        let message = format!(
            "gives the flow name {}; names must be 1 to {} characters of {}",
            limits::quote_short(name),
            limits::MAX_NAME_LEN,
            limits::NAME_CHARS
        );
        return Err(f.err_kind(key, ErrorKind::OutOfRange, message));
    }
    too_many_flows(f, "name", out.len(), endpoints.len())?;
    for (name, from, to) in endpoints {
        out.push(FlowSpec { name, from, to, algorithm: algorithm.clone(), tcp: tcp.clone(), start, stop, app: app.clone() });
    }
    Ok(())
}

/// An error unless `adding` more flows to the `existing` ones stays within [`MAX_FLOWS`].
fn too_many_flows(f: &Obj, key: &str, existing: usize, adding: usize) -> Result<(), ScenarioError> {
    if existing + adding <= MAX_FLOWS {
        return Ok(());
    }
    let message = format!("would make {} flows in all; at most {MAX_FLOWS} are allowed", existing + adding);
    Err(f.err_kind(key, ErrorKind::TooLarge, message))
}

fn read_tcp(t: &Obj) -> Result<TcpConfig, ScenarioError> {
    t.deny_unknown(&[
        "window", "window_init", "packet_size", "header_bytes", "ack_size", "syn", "delay_growth", "max_burst", "dupacks",
        "tick", "tick_phase", "min_rto", "max_rto", "initial_rto", "limited_transmit", "vegas_headers",
        "partial_ack_timer",
    ])?;
    let d = TcpConfig::default();
    let secs = |key: &str, lo: i128, default: f64| -> Result<f64, ScenarioError> {
        Ok(t.time(key, lo, FOREVER)?.map(|ns| ns as f64 / 1e9).unwrap_or(default))
    };
    let tick = secs("tick", 1, d.tick)?;
    let cfg = TcpConfig {
        window: t.number("window", 1.0, 1e8)?.unwrap_or(d.window),
        window_init: t.number("window_init", 1.0, 1e6)?.unwrap_or(d.window_init),
        packet_size: t.integer("packet_size", 1, 1_000_000)?.map(|x| x as u32).unwrap_or(d.packet_size),
        header_bytes: t.integer("header_bytes", 0, 65_535)?.map(|x| x as u32).unwrap_or(d.header_bytes),
        ack_size: t.integer("ack_size", 1, 65_535)?.map(|x| x as u32).unwrap_or(d.ack_size),
        syn: t.bool("syn", d.syn)?,
        delay_growth: t.bool("delay_growth", d.delay_growth)?,
        max_burst: t.integer("max_burst", 0, 1_000_000)?.map(|x| x as u32).unwrap_or(d.max_burst),
        dupacks: t.integer("dupacks", 1, 10_000)?.unwrap_or(d.dupacks),
        tick,
        min_rto: secs("min_rto", 0, d.min_rto)?,
        max_rto: secs("max_rto", 1, d.max_rto)?,
        initial_rto: secs("initial_rto", 1, d.initial_rto)?,
        limited_transmit: t.bool("limited_transmit", d.limited_transmit)?,
        vegas_headers: t.bool("vegas_headers", d.vegas_headers)?,
        boot_time: 0.0,
        tick_phase: read_tick_phase(t, tick)?,
        partial_ack_timer: match t.string("partial_ack_timer")? {
            None => d.partial_ack_timer,
            Some(name) => PartialAckTimer::from_name(name).ok_or_else(|| {
                t.err("partial_ack_timer", format!("must be one of {}, got {name:?}", PartialAckTimer::NAMES.join(", ")))
            })?,
        },
    };
    if cfg.max_rto < cfg.min_rto {
        return Err(t.err("max_rto", format!("must be >= min_rto ({} s)", cfg.min_rto)));
    }
    Ok(cfg)
}

/// `tcp.tick_phase`: the phase of the sender's tick clock (ns-2 `boot_time_`), `"seeded"` (the
/// default: drawn from the run seed, `None`) or a time `>= 0` and `< tick`. Decided: a number
/// is seconds taken exactly, with full double precision, so that any phase (one a seeded run
/// drew, say) can be set again bit for bit; a string with a unit (`"3ms"`) is rounded to the
/// nanosecond like every other time.
fn read_tick_phase(t: &Obj, tick: f64) -> Result<Option<f64>, ScenarioError> {
    const KEY: &str = "tick_phase";
    let Some(v) = t.get(KEY) else { return Ok(None) };
    let allowed = format!("must be \"seeded\" or a time >= 0 s and < tick ({tick} s)");
    let phase = match v {
        Value::String(s) if s == "seeded" => return Ok(None),
        Value::String(s) => match units::parse_time(s) {
            Ok(ns) => ns as f64 / 1e9,
            Err(why) => return Err(t.err_kind(KEY, ErrorKind::WrongType, format!("{allowed} ({why}), got {}", describe(v)))),
        },
        Value::Integer(i) => *i as f64,
        Value::Float(x) => *x,
        _ => return Err(t.err_kind(KEY, ErrorKind::WrongType, format!("{allowed}, got {}", describe(v)))),
    };
    if !(phase >= 0.0 && phase < tick) {
        return Err(t.err_kind(KEY, ErrorKind::OutOfRange, format!("{allowed}, got {}", describe(v))));
    }
    // -0.0 and 0.0 are the same phase: one normalised form.
    Ok(Some(phase + 0.0))
}
