//! What a run records: `[monitor]` (the time series) and `[trace]` (the packet trace,
//! `crate::trace`).

use super::context::NetBuilder;
use super::reader::{describe, Obj};
use super::{ErrorKind, FlowSpec, MonitorSpec, ScenarioError, TraceFormat, TraceSpec, UdpSpec};

/// `[monitor]`: which flow series to record (`cwnd`, `throughput`) and which link directions'
/// queues (`queues = ["R1->R2"]`, or `all_queues`).
pub fn build_monitor(m: &Obj, net: &NetBuilder) -> Result<MonitorSpec, ScenarioError> {
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

/// `[trace] links = ["R1->R2"], flows = ["f1"], format = "ns2" | "pcap", file = "...",
/// max_lines = N` (`crate::trace`). `links` and `flows` both filter (a hop is traced when its
/// direction is listed and its packet's flow is listed; an absent or empty list lets
/// everything through), so `[trace]` alone traces every packet hop, as ns-2's `trace-all`;
/// `file` defaults to `trace.tr` (ns2) or `trace.pcap` and must be a plain name
/// (`trace_file_name`).
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
