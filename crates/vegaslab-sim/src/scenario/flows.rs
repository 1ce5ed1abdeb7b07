//! Flows: endpoints, algorithm, application, TCP options.

use super::algorithms::{cc_label, read_algorithm};
use super::context::{NetBuilder, FOREVER};
use super::limits::{self, MAX_FLOWS};
use super::reader::{describe, Obj};
use super::{ErrorKind, FlowSpec, ScenarioError};
use crate::units;
use toml::Value;
use vegaslab_cc::config::{LinuxTcp, Stack};
use vegaslab_cc::params::SenderKind;
use vegaslab_cc::{PartialAckTimer, TcpConfig};

/// The fields a member of a group may change (`members.<name>`): everything but what makes
/// the group (its endpoints, names and span).
const MEMBER_FIELDS: &[&str] = &["cc", "start", "stop", "app", "file_size", "params", "tcp"];

/// `"first-last"` of a `range` or `pairs` field (whole numbers, `first <= last`), or one
/// number `"k"`, the span `k-k` (one pair of a dumbbell: `pairs = "3"`).
pub(crate) fn parse_span(text: &str) -> Option<(usize, usize)> {
    let Some((a, b)) = text.split_once('-') else {
        let k = text.trim().parse::<usize>().ok()?;
        return Some((k, k));
    };
    let (a, b) = (a.trim().parse::<usize>().ok()?, b.trim().parse::<usize>().ok()?);
    (a <= b).then_some((a, b))
}

/// The name of a flow of entry `i`: member `k` of a `range`/`pairs` group, or the entry itself
/// (`k = None`). In a group, `{i}` in the name is replaced by `k`, else `k` is appended; without
/// a name a group's flows are `<cc><k>` and a single flow `flow<i>`. The one rule, used to
/// build the flows and to find a flow by name for an override (`flows[NAME]`).
pub(crate) fn flow_name(name: Option<&str>, cc: &str, i: usize, k: Option<usize>) -> String {
    match (name, k) {
        (Some(n), Some(k)) if n.contains("{i}") => n.replace("{i}", &k.to_string()),
        (Some(n), Some(k)) => format!("{n}{k}"),
        (Some(n), None) => n.to_string(),
        (None, Some(k)) => format!("{cc}{k}"),
        (None, None) => format!("flow{i}"),
    }
}

/// The names of the flows entry `i` of the raw `flows` list expands into, in order, as
/// [`build_flows`] names them; empty when the entry is too malformed to say (validation then
/// reports it). For `flows[NAME]` overrides, which act before validation.
pub(crate) fn entry_names(entry: &Value, i: usize) -> Vec<String> {
    let Some(t) = entry.as_table() else { return Vec::new() };
    let name = t.get("name").and_then(Value::as_str);
    let cc = cc_label(t.get("cc"));
    let span = t.get("pairs").or_else(|| t.get("range")).map(|v| v.as_str().and_then(parse_span));
    match span {
        None => vec![flow_name(name, cc, i, None)],
        Some(None) => Vec::new(),
        // At most MAX_FLOWS names: a larger span is an error of its own.
        Some(Some((a, b))) if b - a < MAX_FLOWS => (a..=b).map(|k| flow_name(name, cc, i, Some(k))).collect(),
        Some(Some(_)) => Vec::new(),
    }
}

/// The `{...}` placeholders in `text`, with an unclosed `{` or a lone `}` as itself.
fn placeholders(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find(['{', '}']) {
        if rest[open..].starts_with('}') {
            out.push("}");
            rest = &rest[open + 1..];
            continue;
        }
        match rest[open..].find('}') {
            Some(close) => {
                out.push(&rest[open..open + close + 1]);
                rest = &rest[open + close + 1..];
            }
            None => {
                out.push("{");
                break;
            }
        }
    }
    out
}

/// A `{...}` in `name`, `from` or `to` must be one the entry expands: only a `range` or
/// `pairs` group defines a placeholder, `{i}`. Anything else would stay in the text (a flow
/// named `vegas{i}`, a node `S{j}` that does not exist), so it is an error naming the field
/// rather than a later lookup failing with a less useful message.
fn check_placeholders(f: &Obj, group: Option<&str>) -> Result<(), ScenarioError> {
    for key in ["name", "from", "to"] {
        let Some(text) = f.get(key).and_then(Value::as_str) else { continue };
        for p in placeholders(text) {
            let message = match group {
                None if p == "{i}" => "has the placeholder {i}, but this entry is a single flow: {i} is replaced only in a group (add range = \"1-N\", or pairs = \"1-N\" on a dumbbell), or remove it".to_string(),
                None => format!("has {}: names have no placeholders outside a group (range or pairs), and then only {{i}}", limits::quote_short(p)),
                Some(g) if p != "{i}" => format!("has {}, which the {g} group does not define: the only placeholder is {{i}}, the member's number", limits::quote_short(p)),
                Some(_) => continue,
            };
            return Err(f.err(key, message));
        }
    }
    Ok(())
}

/// `a` with the tables of `b` merged in, key by key (a member's `params = { alpha = 4 }`
/// changes alpha and keeps the group's other params); any other value of `b` replaces `a`'s.
fn merged(a: &Value, b: &Value) -> Value {
    match (a, b) {
        (Value::Table(x), Value::Table(y)) => {
            let mut out = x.clone();
            for (k, v) in y {
                let value = match x.get(k) {
                    Some(old) => merged(old, v),
                    None => v.clone(),
                };
                out.insert(k.clone(), value);
            }
            Value::Table(out)
        }
        _ => b.clone(),
    }
}

/// What a flow entry (or a member of a group) sets for each of its flows.
struct Settings {
    start: u64,
    stop: Option<u64>,
    app: super::AppSpec,
    algorithm: vegaslab_cc::AlgorithmSpec,
    tcp: TcpConfig,
}

fn read_settings(f: &Obj, duration: u64) -> Result<Settings, ScenarioError> {
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
    let algorithm = read_algorithm(f)?;
    let cc = algorithm.name();
    // A Linux-flavour algorithm runs on Linux's stack unless the scenario says otherwise.
    let default_stack = if algorithm.sender() == SenderKind::Linux { Stack::Linux } else { Stack::Ns2 };
    let tcp = match f.table("tcp")? {
        Some(t) => read_tcp(&t, default_stack)?,
        None => stack_config(default_stack),
    };
    if tcp.stack == Stack::Linux && algorithm.sender() == SenderKind::VegasAgent {
        let message = format!("\"linux\" runs Linux's TCP machinery, which {cc}'s ns-2 form (ns-2's Vegas agent) does not fit: set params.flavour = \"linux\" or tcp.stack = \"ns2\"");
        return Err(match f.table("tcp")? {
            Some(t) => t.err("stack", message),
            None => f.err("tcp", message),
        });
    }
    Ok(Settings { start, stop, app, algorithm, tcp })
}

/// A list of names for a message: all of them when few, else the count and the first few.
pub(crate) fn some_names(names: &[String]) -> String {
    const SHOWN: usize = 8;
    if names.len() <= SHOWN {
        names.join(", ")
    } else {
        format!("{} flows: {}, ..., {}", names.len(), names[..SHOWN - 1].join(", "), names[names.len() - 1])
    }
}

pub fn build_flows(f: &Obj, i: usize, duration: u64, net: &NetBuilder, out: &mut Vec<FlowSpec>) -> Result<(), ScenarioError> {
    f.deny_unknown(&["name", "from", "to", "cc", "start", "stop", "app", "file_size", "params", "tcp", "pairs", "range", "members"])?;
    // `pairs = "1-25"` expands into one flow per dumbbell pair S_k -> D_k.
    if let Some(Value::Integer(k)) = f.get("pairs") {
        let message = format!("must be a string naming pairs, not a count: pairs = \"1-{k}\" for the first {k} pairs, pairs = \"{k}\" for pair {k} alone");
        return Err(f.err_kind("pairs", ErrorKind::WrongType, message));
    }
    let range = match f.string("pairs")? {
        None => None,
        Some(text) => {
            if net.dumbbell_pairs == 0 {
                return Err(f.err("pairs", "needs a [dumbbell]"));
            }
            match parse_span(text) {
                Some((a, b)) if a >= 1 && b <= net.dumbbell_pairs => {
                    too_many_flows(f, "pairs", out.len(), b - a + 1)?;
                    Some((a, b))
                }
                _ => return Err(f.err("pairs", format!("must be \"first-last\" or one pair's number, within 1-{}, got \"{text}\"", net.dumbbell_pairs))),
            }
        }
    };
    let group = if range.is_some() { Some("pairs") } else if f.get("range").is_some() { Some("range") } else { None };
    check_placeholders(f, group)?;
    let base_name = f.string("name")?;
    let settings = read_settings(f, duration)?;
    let cc = cc_label(f.get("cc"));

    // (name, from, to, k) of each flow; k is the member's number in a group.
    let endpoints: Vec<(String, usize, usize, Option<usize>)> = match range {
        Some((a, b)) => {
            if f.get("from").is_some() || f.get("to").is_some() {
                return Err(f.err("pairs", "give either pairs or from/to, not both"));
            }
            (a..=b)
                .map(|k| {
                    let from = net.index[&format!("S{k}")];
                    let to = net.index[&format!("D{k}")];
                    (flow_name(base_name, cc, i, Some(k)), from, to, Some(k))
                })
                .collect()
        }
        None => {
            let from_name = f.req_string("from")?;
            let to_name = f.req_string("to")?;
            // `range = "1-12"` repeats the entry with `{i}` in from/to/name replaced by 1..12.
            let ks: Vec<Option<usize>> = match f.string("range")? {
                None => vec![None],
                Some(text) => match parse_span(text) {
                    Some((a, b)) => {
                        too_many_flows(f, "range", out.len(), b - a + 1)?;
                        (a..=b).map(Some).collect()
                    }
                    None => return Err(f.err("range", format!("must be \"first-last\", e.g. \"1-12\", or one number, e.g. \"3\", got \"{text}\""))),
                },
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
                out.push((flow_name(base_name, cc, i, k), from, to, k));
            }
            out
        }
    };
    if let Some((name, ..)) = endpoints.iter().find(|(name, ..)| !limits::valid_name(name)) {
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
    let members = read_members(f, group, &endpoints, duration)?;
    for (name, from, to, _) in endpoints {
        let s = members.iter().find(|(n, _)| *n == name).map_or(&settings, |(_, s)| s);
        let (algorithm, tcp, start, stop, app) = (s.algorithm.clone(), s.tcp.clone(), s.start, s.stop, s.app.clone());
        out.push(FlowSpec { name, from, to, algorithm, tcp, start, stop, app });
    }
    Ok(())
}

/// `members = { <flow name> = { params = { alpha = 4 } } }`: settings of single flows of a
/// `range` or `pairs` group (what `--set 'flows[vegas7].params.alpha=4'` writes). A member's
/// table is merged into its entry's (tables key by key), and the result is read as an entry of
/// its own, so each of its errors names `flows[i].members.<name>.<field>`.
/// The group keeps its place and its flows their order, names and indices (and so their seeded
/// draws): only the named flow's settings change.
fn read_members(f: &Obj, group: Option<&str>, flows: &[(String, usize, usize, Option<usize>)], duration: u64) -> Result<Vec<(String, Settings)>, ScenarioError> {
    let Some(members) = f.table("members")? else { return Ok(Vec::new()) };
    if group.is_none() {
        return Err(f.err("members", "applies to a group (range or pairs) only; set a single flow's fields directly"));
    }
    let mut entry = f.table.clone();
    entry.remove("members");
    let entry = Value::Table(entry);
    let mut out = Vec::new();
    for (name, value) in members.table {
        if !flows.iter().any(|(n, ..)| n == name) {
            let names: Vec<String> = flows.iter().map(|(n, ..)| n.clone()).collect();
            return Err(members.err_kind(name, ErrorKind::Reference, format!("is not a flow of this group (its flows: {})", some_names(&names))));
        }
        let member = Obj::new(members.ctx, value, &members.field_path(name))?;
        if let Some(key) = ["name", "from", "to", "range", "pairs", "members"].into_iter().find(|k| member.get(k).is_some()) {
            let message = format!("belongs to the whole group and cannot differ for one flow; a member may set: {}", MEMBER_FIELDS.join(", "));
            return Err(member.err_kind(key, ErrorKind::UnknownField, message));
        }
        member.deny_unknown(MEMBER_FIELDS)?;
        let whole = merged(&entry, value);
        let obj = Obj::new(members.ctx, &whole, &members.field_path(name))?;
        out.push((name.clone(), read_settings(&obj, duration)?));
    }
    Ok(out)
}

/// An error unless `adding` more flows to the `existing` ones stays within [`MAX_FLOWS`].
fn too_many_flows(f: &Obj, key: &str, existing: usize, adding: usize) -> Result<(), ScenarioError> {
    if existing + adding <= MAX_FLOWS {
        return Ok(());
    }
    let message = format!("would make {} flows in all; at most {MAX_FLOWS} are allowed", existing + adding);
    Err(f.err_kind(key, ErrorKind::TooLarge, message))
}

/// The `tcp` settings of a flow that gives none, on `stack`.
fn stack_config(stack: Stack) -> TcpConfig {
    let d = stack.defaults();
    TcpConfig {
        window: d.window,
        window_init: d.window_init,
        header_bytes: d.header_bytes,
        ack_size: d.ack_size,
        initial_rto: d.initial_rto,
        max_rto: d.max_rto,
        stack,
        linux: (stack == Stack::Linux).then(LinuxTcp::default),
        ..TcpConfig::default()
    }
}

/// The keys of `tcp` that only ns-2's stack reads.
const NS2_ONLY: [&str; 6] =
    ["tick", "tick_phase", "limited_transmit", "vegas_headers", "partial_ack_timer", "slow_start_restart"];

/// `tcp.stack` (default: `default_stack`, the algorithm's) and `tcp.linux`, the Linux stack's
/// switches.
fn read_stack(t: &Obj, default_stack: Stack) -> Result<(Stack, Option<LinuxTcp>), ScenarioError> {
    let stack = match t.string("stack")? {
        None => default_stack,
        Some(name) => Stack::from_name(name)
            .ok_or_else(|| t.err("stack", format!("must be one of {}, got {name:?}", Stack::NAMES.join(", "))))?,
    };
    let table = t.table("linux")?;
    if stack == Stack::Ns2 {
        if table.is_some() {
            return Err(t.err("linux", "sets the Linux stack's mechanisms and needs tcp.stack = \"linux\""));
        }
        return Ok((stack, None));
    }
    if let Some(key) = NS2_ONLY.into_iter().find(|k| t.get(k).is_some()) {
        return Err(t.err(key, "is a setting of ns-2's stack; tcp.stack is \"linux\" here"));
    }
    let d = LinuxTcp::default();
    let Some(l) = table else { return Ok((stack, Some(d))) };
    l.deny_unknown(&LinuxTcp::NAMES)?;
    Ok((
        stack,
        Some(LinuxTcp {
            sack: l.bool("sack", d.sack)?,
            rack_tlp: l.bool("rack_tlp", d.rack_tlp)?,
            prr: l.bool("prr", d.prr)?,
            delayed_ack: l.bool("delayed_ack", d.delayed_ack)?,
            timestamps: l.bool("timestamps", d.timestamps)?,
            cwnd_limited: l.bool("cwnd_limited", d.cwnd_limited)?,
            slow_start_after_idle: l.bool("slow_start_after_idle", d.slow_start_after_idle)?,
            undo: l.bool("undo", d.undo)?,
        }),
    ))
}

fn read_tcp(t: &Obj, default_stack: Stack) -> Result<TcpConfig, ScenarioError> {
    t.deny_unknown(&[
        "window", "window_init", "packet_size", "header_bytes", "ack_size", "syn", "delay_growth", "max_burst", "dupacks",
        "tick", "tick_phase", "min_rto", "max_rto", "initial_rto", "limited_transmit", "vegas_headers",
        "partial_ack_timer", "slow_start_restart", "stack", "linux",
    ])?;
    let (stack, linux) = read_stack(t, default_stack)?;
    let d = stack_config(stack);
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
        slow_start_restart: t.bool("slow_start_restart", d.slow_start_restart)?,
        stack,
        linux,
    };
    if cfg.max_rto < cfg.min_rto {
        return Err(t.err("max_rto", format!("must be >= min_rto ({} s)", cfg.min_rto)));
    }
    Ok(cfg)
}

/// `tcp.tick_phase`: the phase of the sender's tick clock (ns-2 `boot_time_`), `"seeded"` (the
/// default: drawn from the run seed, `None`) or a time `>= 0` and `< tick`. A number is
/// seconds taken exactly, with full double precision, so that any phase (one a seeded run
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
