//! TOML value -> validated [`Scenario`]. See `docs/scenario-format.md` for the schema.

use super::reader::{describe, Ctx, Obj};
use super::flows::build_flows;
use super::links::build_link;
use super::topologies::{build_dumbbell, build_lte, build_parking_lot};
use super::{ErrorKind, FlowSpec, LinkSpec, MonitorSpec, Scenario, ScenarioError, SenderClock, TieOrder, TraceFormat, TraceSpec, UdpSpec};
use std::collections::HashMap;
use toml::Value;

/// The largest time a field may take unless it says otherwise (see `limits`).
pub const FOREVER: i128 = super::limits::MAX_TIME_NS;
/// ns-2's default queue limit (`Queue set limit_ 50`).
pub const DEFAULT_QUEUE_LIMIT: u32 = 50;

/// Validate a parsed TOML document.
pub fn from_value(value: &Value, source: &str) -> Result<Scenario, ScenarioError> {
    let files_read = std::cell::RefCell::new(Vec::new());
    let ctx = Ctx { file: source, files_read: &files_read };
    let root = Obj::new(ctx, value, "")?;
    // `sweep` is read by `sweep::expand`; a run of the file is the base scenario, no axis applied.
    root.deny_unknown(&["meta", "variant", "sweep", "run", "links", "dumbbell", "flows", "monitor", "aqt", "parking_lot", "lte", "udp", "geo", "leo", "trace"])?;

    let id = match root.table("meta")? {
        Some(meta) => meta.name("id")?.map(str::to_string),
        None => None,
    }
    .unwrap_or_else(|| file_stem(source));

    let run = root.table("run")?.ok_or_else(|| ctx.err("run", "is required (a [run] table with at least duration)"))?;
    run.deny_unknown(&["duration", "seed", "sample_interval", "clock", "tie_order"])?;
    let duration = run.time("duration", 1, FOREVER)?.ok_or_else(|| run.err("duration", "is required, e.g. duration = \"200s\""))?;
    let seed = run.integer("seed", 0, i64::MAX)?.unwrap_or(1) as u64;
    let sample_interval = run.time("sample_interval", 1, FOREVER)?.unwrap_or(100_000_000);
    let clock = match run.string("clock")?.unwrap_or("ns2") {
        "ns2" => SenderClock::Ns2,
        "exact" => SenderClock::Exact,
        other => return Err(run.err("clock", format!("must be \"ns2\" (ns-2's double-precision clock, the default) or \"exact\" (the integer time), got \"{other}\""))),
    };
    let tie_order = match run.string("tie_order")?.unwrap_or("ns2") {
        "ns2" => TieOrder::Ns2,
        "shuffled" => TieOrder::Shuffled,
        other => return Err(run.err("tie_order", format!("must be \"ns2\" (ties by event, lower channel or flow first; the default) or \"shuffled\" (ties in an order drawn from the seed), got \"{other}\""))),
    };

    let mut net = NetBuilder::default();
    if let Some(db) = root.table("dumbbell")? {
        build_dumbbell(&db, &mut net)?;
    }
    if let Some(pl) = root.table("parking_lot")? {
        build_parking_lot(&pl, &mut net)?;
    }
    if let Some(lte) = root.table("lte")? {
        build_lte(&lte, &mut net)?;
    }
    if let Some(geo) = root.table("geo")? {
        super::satellite::build_geo(&geo, &mut net)?;
    }
    if let Some(leo) = root.table("leo")? {
        super::satellite::build_leo(&leo, &mut net, duration)?;
    }
    if let Some(links) = root.array("links")? {
        if links.len() + net.links.len() > super::limits::MAX_LINKS {
            let message = format!("{} links in all; at most {} are allowed", links.len() + net.links.len(), super::limits::MAX_LINKS);
            return Err(ctx.err_kind("links", ErrorKind::TooLarge, message));
        }
        for (i, lv) in links.iter().enumerate() {
            let link = Obj::new(ctx, lv, &format!("links[{i}]"))?;
            build_link(&link, &mut net)?;
        }
    }
    if net.links.is_empty() {
        return Err(ctx.err("links", "the scenario has no links: give [[links]] or a [dumbbell]"));
    }
    // Builders and [[links]] together (an LTE tree adds a link per eNB to its UEs).
    let (nodes, links) = (net.nodes.len(), net.links.len());
    if nodes > super::limits::MAX_NODES || links > super::limits::MAX_LINKS {
        let message = format!(
            "{nodes} nodes and {links} links in all; at most {} nodes and {} links are allowed",
            super::limits::MAX_NODES,
            super::limits::MAX_LINKS
        );
        return Err(ctx.err_kind("links", ErrorKind::TooLarge, message));
    }

    let mut flows = Vec::new();
    // The entry each flow comes from, for messages (a group's flows share one).
    let mut entry_of = Vec::new();
    let flow_values = root.array("flows")?.ok_or_else(|| ctx.err("flows", "is required: at least one [[flows]] entry"))?;
    for (i, fv) in flow_values.iter().enumerate() {
        let f = Obj::new(ctx, fv, &format!("flows[{i}]"))?;
        build_flows(&f, i, duration, &net, &mut flows)?;
        entry_of.resize(flows.len(), i);
    }
    // Names identify flows in results and in `flows[NAME]` overrides: one flow per name. The
    // message names the entries (not positions in the expanded list) and, for a group, how its
    // names were made.
    let mut seen = HashMap::new();
    for (i, f) in flows.iter().enumerate() {
        if let Some(j) = seen.insert(f.name.clone(), i) {
            let (entry, first) = (entry_of[i], entry_of[j]);
            let grouped = |e: usize| flow_values[e].get("range").or_else(|| flow_values[e].get("pairs")).is_some();
            let how = if grouped(entry) || grouped(first) {
                " (a range or pairs group names its flows by its name with {i} replaced, or the number appended)"
            } else {
                ""
            };
            let whose = if entry == first { "another flow of this entry".to_string() } else { format!("flows[{first}]") };
            let message = format!("\"{}\" is already the name of {whose}{how}", f.name);
            return Err(ctx.err_kind(&format!("flows[{entry}].name"), ErrorKind::Conflict, message));
        }
    }

    let monitor = match root.table("monitor")? {
        Some(m) => build_monitor(&m, &net)?,
        None => MonitorSpec::default(),
    };

    let aqt_routers = match root.table("aqt")? {
        Some(aqt) => read_aqt_routers(&aqt, &net)?,
        None => Vec::new(),
    };

    let udp = super::udp::build_udp(&root, duration, &net)?;
    let trace = match root.table("trace")? {
        Some(t) => Some(read_trace(&t, &net, &flows, &udp)?),
        None => None,
    };
    let changes: usize = net.links.iter().map(|l| 2 * l.down.len()).sum();
    if changes > super::limits::MAX_LINK_CHANGES {
        let message = format!("the links' down intervals make {changes} link changes in all; at most {} are allowed", super::limits::MAX_LINK_CHANGES);
        return Err(ctx.err_kind("links", ErrorKind::TooLarge, message));
    }

    let scenario = Scenario {
        aqt_routers,
        udp,
        source: source.to_string(),
        id,
        duration,
        seed,
        sample_interval,
        clock,
        tie_order,
        nodes: net.nodes,
        links: net.links,
        flows,
        monitor,
        files: files_read.into_inner(),
        trace,
    };
    crate::check_recording_size(&scenario)?;
    Ok(scenario)
}

fn file_stem(source: &str) -> String {
    std::path::Path::new(source)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| source.to_string())
}

#[derive(Default)]
pub struct NetBuilder {
    pub nodes: Vec<String>,
    pub index: HashMap<String, usize>,
    pub links: Vec<LinkSpec>,
    pub dumbbell_pairs: usize,
    /// Node pairs (lower index first) that have a link, for the duplicate check.
    pub linked: std::collections::HashSet<(usize, usize)>,
}

impl NetBuilder {
    pub fn node(&mut self, name: &str) -> usize {
        if let Some(&i) = self.index.get(name) {
            return i;
        }
        self.nodes.push(name.to_string());
        self.index.insert(name.to_string(), self.nodes.len() - 1);
        self.nodes.len() - 1
    }

    /// Whether the nodes named `a` and `b` are already linked.
    pub fn linked(&self, a: &str, b: &str) -> bool {
        match (self.index.get(a), self.index.get(b)) {
            (Some(&x), Some(&y)) => self.linked.contains(&(x.min(y), x.max(y))),
            _ => false,
        }
    }

    pub fn find(&self, obj: &Obj, key: &str, name: &str) -> Result<usize, ScenarioError> {
        self.index.get(name).copied().ok_or_else(|| {
            let mut known: Vec<&str> = self.nodes.iter().map(String::as_str).collect();
            known.truncate(12);
            let more = if self.nodes.len() > 12 { ", ..." } else { "" };
            obj.err_kind(key, ErrorKind::Reference, format!("no node named \"{name}\" (nodes: {}{more})", known.join(", ")))
        })
    }
}

/// `[aqt] routers = ["R1", "R2"]`: the AQT-enabled routers (partial deployment allowed).
fn read_aqt_routers(aqt: &Obj, net: &NetBuilder) -> Result<Vec<usize>, ScenarioError> {
    aqt.deny_unknown(&["routers"])?;
    let mut out = Vec::new();
    for (i, v) in aqt.array("routers")?.map(|a| a.as_slice()).unwrap_or(&[]).iter().enumerate() {
        let path = format!("routers[{i}]");
        let name = v.as_str().ok_or_else(|| aqt.err(&path, format!("must be a node name, got {}", describe(v))))?;
        out.push(net.find(aqt, &path, name)?);
    }
    Ok(out)
}

fn build_monitor(m: &Obj, net: &NetBuilder) -> Result<MonitorSpec, ScenarioError> {
    m.deny_unknown(&["cwnd", "throughput", "queues", "all_queues"])?;
    let mut spec = MonitorSpec {
        cwnd: m.bool("cwnd", false)?,
        throughput: m.bool("throughput", false)?,
        queues: Vec::new(),
        all_queues: m.bool("all_queues", false)?,
    };
    if let Some(items) = m.array("queues")? {
        for (i, item) in items.iter().enumerate() {
            let path = format!("queues[{i}]");
            let name = item.as_str().ok_or_else(|| m.err(&path, format!("must be a string like \"R1->R2\", got {}", describe(item))))?;
            let (a, b) = name.split_once("->").ok_or_else(|| m.err(&path, format!("must look like \"R1->R2\", got \"{name}\"")))?;
            let (a, b) = (net.find(m, &path, a.trim())?, net.find(m, &path, b.trim())?);
            if !net.links.iter().any(|l| (l.a == a && l.b == b) || (l.a == b && l.b == a)) {
                return Err(m.err(&path, format!("there is no link {name}")));
            }
            spec.queues.push((a, b));
        }
    }
    Ok(spec)
}

/// `[trace] links = ["R1->R2"], flows = ["f1"], format = "ns2" | "pcap", file = "...",
/// max_lines = N` (`crate::trace`). `links` and `flows` both filter (a hop is traced when its
/// direction is listed and its packet's flow is listed; an absent or empty list lets
/// everything through), so `[trace]` alone traces every packet hop, as ns-2's `trace-all`;
/// `file` defaults to `trace.tr` (ns2) or `trace.pcap` and must be a plain name
/// (`trace_file_name`).
/// The trace's file name checked: a plain name (letters, digits, `_`, `-` and `.`, not
/// starting with `.`, at most 128 characters) ending in `.tr` for the ns-2 format or `.pcap`
/// for pcap. A scenario may be shared or downloaded, so it names the file only: the output
/// directory is the caller's (`vegaslab run --out`, `Results.to_dir`), and the suffix is how
/// a run directory's own files are told from others'.
pub fn trace_file_name(name: &str, format: TraceFormat) -> Result<String, String> {
    let (suffix, format_name) = match format {
        TraceFormat::Ns2 => (".tr", "ns2"),
        TraceFormat::Pcap => (".pcap", "pcap"),
    };
    let shown: String = name.chars().take(80).flat_map(char::escape_default).collect();
    let plain = !name.is_empty()
        && name.len() <= 128
        && !name.starts_with('.')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    if !plain {
        return Err(format!(
            "must be a plain file name (letters, digits, '_', '-' and '.', not starting with '.', at most 128 characters; no directory: the trace goes into the run's output directory), got \"{shown}\""
        ));
    }
    if name.len() <= suffix.len() || !name.ends_with(suffix) {
        return Err(format!("must end in \"{suffix}\" for format = \"{}\", got \"{shown}\"", format_name));
    }
    Ok(name.to_string())
}

pub fn read_trace(t: &Obj, net: &NetBuilder, flows: &[FlowSpec], udp: &[UdpSpec]) -> Result<TraceSpec, ScenarioError> {
    t.deny_unknown(&["links", "flows", "format", "file", "max_lines"])?;
    let format = match t.string("format")?.unwrap_or("ns2") {
        "ns2" => TraceFormat::Ns2,
        "pcap" => TraceFormat::Pcap,
        other => return Err(t.err_kind("format", ErrorKind::OutOfRange, format!("must be \"ns2\" (ns-2's trace lines) or \"pcap\" (a libpcap file), got \"{}\"", other.chars().take(40).collect::<String>()))),
    };
    let file = match t.string("file")? {
        Some(f) => trace_file_name(f, format).map_err(|why| t.err("file", why))?,
        None => match format {
            TraceFormat::Ns2 => "trace.tr".to_string(),
            TraceFormat::Pcap => "trace.pcap".to_string(),
        },
    };
    let max = super::limits::MAX_TRACE_LINES as i64;
    let max_lines = t.integer("max_lines", 1, max)?.map_or(super::limits::DEFAULT_TRACE_LINES, |n| n as u64);
    let mut spec = TraceSpec { links: Vec::new(), flows: Vec::new(), format, file, max_lines };
    for (i, item) in t.array("links")?.map(|a| a.as_slice()).unwrap_or(&[]).iter().enumerate() {
        let path = format!("links[{i}]");
        let name = item.as_str().ok_or_else(|| t.err_kind(&path, ErrorKind::WrongType, format!("must be a link direction like \"R1->R2\", got {}", describe(item))))?;
        let (a, b) = name.split_once("->").ok_or_else(|| t.err(&path, format!("must look like \"R1->R2\" (a link direction), got \"{}\"", name.chars().take(80).collect::<String>())))?;
        let (a, b) = (net.find(t, &path, a.trim())?, net.find(t, &path, b.trim())?);
        if !net.links.iter().any(|l| (l.a == a && l.b == b) || (l.a == b && l.b == a)) {
            return Err(t.err_kind(&path, ErrorKind::Reference, format!("there is no link {name}")));
        }
        spec.links.push((a, b));
    }
    for (i, item) in t.array("flows")?.map(|a| a.as_slice()).unwrap_or(&[]).iter().enumerate() {
        let path = format!("flows[{i}]");
        let name = item.as_str().ok_or_else(|| t.err_kind(&path, ErrorKind::WrongType, format!("must be a flow name, got {}", describe(item))))?;
        let Some(k) = flows.iter().position(|f| f.name == name) else {
            let mut known: Vec<&str> = flows.iter().map(|f| f.name.as_str()).take(12).collect();
            if flows.len() > 12 {
                known.push("...");
            }
            let udp_hint = if udp.iter().any(|u| u.name == name) { " (UDP sources are traced when flows is empty)" } else { "" };
            return Err(t.err_kind(&path, ErrorKind::Reference, format!("no flow named \"{}\" (flows: {}){udp_hint}", name.chars().take(80).collect::<String>(), known.join(", "))));
        };
        spec.flows.push(k);
    }
    Ok(spec)
}
