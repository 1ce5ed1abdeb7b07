//! Links: bandwidth, delay and its changes (schedule or trace file), queue discipline
//! (DropTail, RED, linear RED) and packet error rate, per direction.

use super::build::{NetBuilder, DEFAULT_QUEUE_LIMIT};
use super::limits::{self, MAX_DELAY_POINTS, MAX_TIME_NS, MAX_TRACE_BYTES};
use super::reader::{check_name, describe, Obj};
use super::{DirectionSpec, ErrorKind, LinkSpec, QueueSpec, ScenarioError};
use crate::queue::{RedSpec, RedVariant, RedWeight};
use toml::Value;

/// The properties of one link read from a table; `defaults` fills what it omits.
pub struct LinkProps {
    pub bandwidth_fwd: f64,
    pub bandwidth_rev: f64,
    pub delay: u64,
    pub schedule: Vec<(u64, u64)>,
    pub queue: QueueSpec,
    /// Packet error rates a -> b and b -> a.
    pub error_fwd: f64,
    pub error_rev: f64,
}

/// Keys every link table accepts.
pub const LINK_KEYS: &[&str] = &[
    "bandwidth",
    "bandwidth_forward",
    "bandwidth_reverse",
    "delay",
    "delay_schedule",
    "delay_trace",
    "queue",
    "error_rate",
    "error_rate_forward",
    "error_rate_reverse",
];

pub fn read_link_props(t: &Obj, defaults: Option<&LinkProps>, extra: &[&str]) -> Result<LinkProps, ScenarioError> {
    let mut allowed = LINK_KEYS.to_vec();
    allowed.extend_from_slice(extra);
    t.deny_unknown(&allowed)?;
    let bw = t.bandwidth("bandwidth")?;
    let bandwidth_fwd = t.bandwidth("bandwidth_forward")?.or(bw).or(defaults.map(|d| d.bandwidth_fwd));
    let bandwidth_rev = t.bandwidth("bandwidth_reverse")?.or(bw).or(defaults.map(|d| d.bandwidth_rev));
    let (Some(bandwidth_fwd), Some(bandwidth_rev)) = (bandwidth_fwd, bandwidth_rev) else {
        return Err(t.err("bandwidth", "is required, e.g. bandwidth = \"10Mbps\""));
    };
    if t.get("delay_trace").is_some() && t.get("delay_schedule").is_some() {
        return Err(t.err("delay_trace", "give either delay_schedule or delay_trace, not both"));
    }
    let trace = read_delay_trace(t)?;
    let delay = match t.delay("delay")? {
        Some(d) => d,
        None => match (&trace, defaults) {
            // Before the trace's first point the link has the first point's delay.
            (Some(points), _) => points[0].1,
            (None, Some(d)) => d.delay,
            (None, None) => return Err(t.err("delay", "is required, e.g. delay = \"10ms\"")),
        },
    };
    let schedule = match (trace, t.array("delay_schedule")?) {
        (Some(points), _) => points,
        (None, Some(items)) => {
            if items.len() > MAX_DELAY_POINTS {
                let message = format!("has {} entries; at most {MAX_DELAY_POINTS} are allowed", items.len());
                return Err(t.err_kind("delay_schedule", ErrorKind::TooLarge, message));
            }
            let mut out: Vec<(u64, u64)> = Vec::new();
            for (i, item) in items.iter().enumerate() {
                let e = Obj::new(t.ctx, item, &t.field_path(&format!("delay_schedule[{i}]")))?;
                e.deny_unknown(&["at", "delay"])?;
                let at = e.time("at", 0, MAX_TIME_NS)?.ok_or_else(|| e.err("at", "is required"))?;
                let d = e.delay("delay")?.ok_or_else(|| e.err("delay", "is required"))?;
                if let Some(&(prev, _)) = out.last() {
                    if at < prev {
                        return Err(e.err("at", "delay changes must be in time order"));
                    }
                }
                out.push((at, d));
            }
            out
        }
        (None, None) => defaults.map(|d| d.schedule.clone()).unwrap_or_default(),
    };
    let queue = match t.table("queue")? {
        Some(q) => read_queue(&q)?,
        None => defaults.map(|d| d.queue.clone()).unwrap_or(QueueSpec::DropTail { limit: DEFAULT_QUEUE_LIMIT }),
    };
    let rate = |key: &str| -> Result<Option<f64>, ScenarioError> {
        match t.number(key, f64::MIN, f64::MAX)? {
            Some(r) if !(0.0..1.0).contains(&r) => Err(t.err_kind(key, ErrorKind::OutOfRange, format!("must be >= 0 and < 1, got {r}"))),
            other => Ok(other),
        }
    };
    let both = rate("error_rate")?;
    let error_fwd = rate("error_rate_forward")?.or(both).or(defaults.map(|d| d.error_fwd)).unwrap_or(0.0);
    let error_rev = rate("error_rate_reverse")?.or(both).or(defaults.map(|d| d.error_rev)).unwrap_or(0.0);
    Ok(LinkProps { bandwidth_fwd, bandwidth_rev, delay, schedule, queue, error_fwd, error_rev })
}

/// `delay_trace = "file"`: (time, delay) lines, resolved against the scenario file's directory.
///
/// Only a regular file of at most [`MAX_TRACE_BYTES`] is read (not a device, a pipe or a
/// directory: `/dev/zero` would never end), and errors quote the offending token only, never
/// whole lines of the file.
fn read_delay_trace(t: &Obj) -> Result<Option<Vec<(u64, u64)>>, ScenarioError> {
    let Some(name) = t.string("delay_trace")? else { return Ok(None) };
    let path = resolve_relative(t.ctx.file, name);
    let shown = limits::printable(&path.display().to_string());
    let file_err = |message: String| t.err_kind("delay_trace", ErrorKind::File, message);
    let meta = std::fs::metadata(&path).map_err(|e| file_err(format!("cannot read {shown}: {}", io_reason(&e))))?;
    if !meta.is_file() {
        return Err(file_err(format!("{shown} is not a regular file")));
    }
    if meta.len() > MAX_TRACE_BYTES {
        return Err(file_err(format!("{shown} has {} bytes; a delay trace may have at most {} MiB", meta.len(), MAX_TRACE_BYTES >> 20)));
    }
    let bytes = read_at_most(&path, MAX_TRACE_BYTES).map_err(|e| file_err(format!("cannot read {shown}: {}", io_reason(&e))))?;
    let text = std::str::from_utf8(&bytes).map_err(|e| file_err(format!("{shown} is not UTF-8 text (bad byte at offset {})", e.valid_up_to())))?;
    t.ctx.record_file(&t.field_path("delay_trace"), name, &bytes);
    let points = crate::delay::parse_trace(text).map_err(|(line, msg)| {
        if line == 0 {
            file_err(format!("{shown}: {msg}"))
        } else {
            file_err(format!("{shown}:{line}: {msg}"))
        }
    })?;
    if points.len() > MAX_DELAY_POINTS {
        return Err(t.err_kind("delay_trace", ErrorKind::TooLarge, format!("{shown} has {} points; at most {MAX_DELAY_POINTS} are allowed", points.len())));
    }
    Ok(Some(points))
}

/// An I/O error's reason without the OS error number.
fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file".to_string(),
        std::io::ErrorKind::PermissionDenied => "permission denied".to_string(),
        _ => e.to_string(),
    }
}

/// The file's bytes, refusing to read more than `limit` (the file may grow after `metadata`).
fn read_at_most(path: &std::path::Path, limit: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(path)?.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(std::io::Error::other(format!("larger than {} MiB", limit >> 20)));
    }
    Ok(bytes)
}

/// A path named in a scenario: absolute, or relative to the scenario file's directory (the
/// current directory when the scenario did not come from a file).
pub fn resolve_relative(source: &str, name: &str) -> std::path::PathBuf {
    let p = std::path::Path::new(name);
    if p.is_absolute() {
        return p.to_path_buf();
    }
    let src = std::path::Path::new(source);
    match src.parent() {
        Some(dir) if src.is_file() => dir.join(p),
        _ => p.to_path_buf(),
    }
}

const QUEUE_KINDS: &str = "droptail, red, red-linear";

pub fn read_queue(q: &Obj) -> Result<QueueSpec, ScenarioError> {
    let kind = q.string("kind")?.unwrap_or("droptail");
    match kind {
        "droptail" => {
            q.deny_unknown(&["kind", "limit"])?;
            // As in ns-2, the limit counts the packet being sent and a packet is queued before
            // the link takes it, so a limit of 1 would drop every packet: the least is 2.
            let limit = q.integer("limit", 2, 100_000_000)?.unwrap_or(DEFAULT_QUEUE_LIMIT as i64) as u32;
            Ok(QueueSpec::DropTail { limit })
        }
        "red" | "red-linear" => {
            let linear = kind == "red-linear";
            let mut keys = vec!["kind", "limit", "min", "max", "weight", "mean_pktsize"];
            if !linear {
                keys.extend_from_slice(&["max_p", "gentle", "wait"]);
            }
            q.deny_unknown(&keys)?;
            let variant = if linear { RedVariant::Linear } else { RedVariant::Classic };
            let min = q.number("min", f64::MIN, f64::MAX)?.ok_or_else(|| q.err("min", "is required (the lower threshold on the average queue, packets)"))?;
            let max = q.number("max", f64::MIN, f64::MAX)?.ok_or_else(|| q.err("max", "is required (the upper threshold on the average queue, packets)"))?;
            let limit = q.integer("limit", 1, 100_000_000)?.unwrap_or(DEFAULT_QUEUE_LIMIT as i64) as u32;
            let mut spec = RedSpec::new(variant, limit, min, max);
            if linear {
                spec.max_p = 1.0;
            } else if let Some(p) = q.number("max_p", f64::MIN, f64::MAX)? {
                spec.max_p = p;
            }
            spec.weight = match q.get("weight") {
                None => spec.weight,
                Some(Value::String(s)) if s == "auto" => RedWeight::Auto,
                Some(Value::String(s)) => return Err(q.err("weight", format!("must be a number in (0, 1] or \"auto\", got \"{s}\""))),
                Some(_) => RedWeight::Fixed(q.number("weight", f64::MIN, f64::MAX)?.expect("present")),
            };
            spec.gentle = q.bool("gentle", false)?;
            spec.wait = q.bool("wait", true)?;
            if let Some(s) = q.integer("mean_pktsize", 1, 1_000_000_000)? {
                spec.mean_pktsize = s as u32;
            }
            spec.validate().map_err(|(field, msg)| q.err(field, msg))?;
            Ok(QueueSpec::Red(spec))
        }
        other => Err(q.err("kind", format!("unknown queue kind \"{other}\" (allowed: {QUEUE_KINDS})"))),
    }
}

pub fn add_link(net: &mut NetBuilder, a: &str, b: &str, p: &LinkProps) {
    let (a, b) = (net.node(a), net.node(b));
    net.linked.insert((a.min(b), a.max(b)));
    let dir = |bw: f64, error_rate: f64| DirectionSpec { bandwidth_bps: bw, delay: p.delay, delay_schedule: p.schedule.clone(), queue: p.queue.clone(), error_rate };
    net.links.push(LinkSpec { a, b, forward: dir(p.bandwidth_fwd, p.error_fwd), reverse: dir(p.bandwidth_rev, p.error_rev) });
}

pub fn build_link(link: &Obj, net: &mut NetBuilder) -> Result<(), ScenarioError> {
    let props = read_link_props(link, None, &["endpoints"])?;
    let ends = link.array("endpoints")?.ok_or_else(|| link.err("endpoints", "is required, e.g. endpoints = [\"S1\", \"R1\"]"))?;
    let names: Vec<&str> = ends.iter().filter_map(Value::as_str).collect();
    if names.len() != 2 || ends.len() != 2 {
        return Err(link.err("endpoints", format!("must be two node names, got {}", describe(link.get("endpoints").unwrap()))));
    }
    for (i, name) in names.iter().enumerate() {
        check_name(link, &format!("endpoints[{i}]"), name)?;
    }
    if names[0] == names[1] {
        return Err(link.err("endpoints", "a link must join two different nodes"));
    }
    if net.linked(names[0], names[1]) {
        return Err(link.err_kind("endpoints", ErrorKind::Conflict, format!("{} and {} are already linked", names[0], names[1])));
    }
    add_link(net, names[0], names[1], &props);
    Ok(())
}

