//! Links: bandwidth, delay and its changes (schedule or trace file), queue discipline
//! (DropTail, RED, linear RED, CoDel), packet error rate and deterministic loss patterns, per
//! direction.

use super::context::{NetBuilder, DEFAULT_QUEUE_LIMIT};
use super::limits::{self, MAX_DELAY_POINTS, MAX_LOSS_INDEX, MAX_LOSS_PACKETS, MAX_TIME_NS, MAX_TRACE_BYTES};
use super::reader::{check_name, describe, Obj};
use super::{DirectionSpec, ErrorKind, LinkSpec, QueueSpec, ScenarioError};
use super::files;
use super::param_source::unboxed;
use crate::queue::{self, DropTailSpec, LossPattern};
use toml::Value;

/// The properties of one link read from a table; `defaults` fills what it omits.
#[derive(Clone)]
pub struct LinkProps {
    pub bandwidth_fwd: f64,
    pub bandwidth_rev: f64,
    pub delay: u64,
    pub schedule: Vec<(u64, u64)>,
    pub queue: QueueSpec,
    /// Packet error rates a -> b and b -> a.
    pub error_fwd: f64,
    pub error_rev: f64,
    /// `queue_forward` / `queue_reverse`: a direction's own queue (`None`: `queue`).
    pub queue_fwd: Option<QueueSpec>,
    pub queue_rev: Option<QueueSpec>,
    /// Deterministic loss patterns a -> b and b -> a (`loss`, `loss_forward`, `loss_reverse`).
    pub loss_fwd: Option<LossPattern>,
    pub loss_rev: Option<LossPattern>,
    /// `down`: intervals during which the link is down in both directions ([`read_down`]).
    pub down: Vec<(u64, u64)>,
}

impl LinkProps {
    /// The properties of a link already built, so that a `[[links]]` entry with `at` can
    /// change some of them and keep the rest (`amend_link`). `queue` is the forward
    /// direction's; the reverse direction keeps its own as `queue_reverse`.
    fn of(link: &LinkSpec) -> Self {
        let (f, r) = (&link.forward, &link.reverse);
        LinkProps {
            bandwidth_fwd: f.bandwidth_bps,
            bandwidth_rev: r.bandwidth_bps,
            delay: f.delay,
            schedule: f.delay_schedule.clone(),
            queue: f.queue.clone(),
            error_fwd: f.error_rate,
            error_rev: r.error_rate,
            queue_fwd: None,
            queue_rev: Some(r.queue.clone()),
            loss_fwd: f.loss.clone(),
            loss_rev: r.loss.clone(),
            down: link.down.clone(),
        }
    }
}

/// Keys every link table accepts (a builder's, `[[links]]`' with its own `endpoints`, `at`
/// and `range` besides).
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
    "queue_forward",
    "queue_reverse",
    "loss",
    "loss_forward",
    "loss_reverse",
    "down",
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
        None => defaults.map(|d| d.queue.clone()).unwrap_or(QueueSpec::DropTail(DropTailSpec { limit: DEFAULT_QUEUE_LIMIT })),
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
    let (queue_fwd, queue_rev) = read_direction_queues(t, defaults)?;
    let (loss_fwd, loss_rev) = read_direction_losses(t, defaults)?;
    let down = match read_down(t)? {
        Some(down) => down,
        None => defaults.map(|d| d.down.clone()).unwrap_or_default(),
    };
    Ok(LinkProps { bandwidth_fwd, bandwidth_rev, delay, schedule, queue, error_fwd, error_rev, queue_fwd, queue_rev, loss_fwd, loss_rev, down })
}

/// `queue_forward` / `queue_reverse`: the queue of one direction, each defaulting to `queue`
/// (as `bandwidth_forward` defaults to `bandwidth`), e.g. RED towards a receiver and a small
/// DropTail queue for the ACKs coming back. Each is a whole queue table, read as `queue` is.
fn read_direction_queues(t: &Obj, defaults: Option<&LinkProps>) -> Result<(Option<QueueSpec>, Option<QueueSpec>), ScenarioError> {
    let one = |key: &str, default: Option<&QueueSpec>| -> Result<Option<QueueSpec>, ScenarioError> {
        match t.table(key)? {
            Some(q) => read_queue(&q).map(Some),
            // Without `queue` here either, a default's own per-direction queue applies.
            None if t.get("queue").is_none() => Ok(default.cloned()),
            None => Ok(None),
        }
    };
    Ok((one("queue_forward", defaults.and_then(|d| d.queue_fwd.as_ref()))?, one("queue_reverse", defaults.and_then(|d| d.queue_rev.as_ref()))?))
}

/// `loss`, `loss_forward`, `loss_reverse`: deterministic loss patterns, per direction as
/// `error_rate` is (`loss` applies to both directions, each `loss_*` to its own and wins).
fn read_direction_losses(t: &Obj, defaults: Option<&LinkProps>) -> Result<(Option<LossPattern>, Option<LossPattern>), ScenarioError> {
    let both = read_loss(t, "loss")?;
    let fwd = read_loss(t, "loss_forward")?.or_else(|| both.clone()).or_else(|| defaults.and_then(|d| d.loss_fwd.clone()));
    let rev = read_loss(t, "loss_reverse")?.or(both).or_else(|| defaults.and_then(|d| d.loss_rev.clone()));
    Ok((fwd, rev))
}

/// One loss-pattern table: `{ packets = [i, ...] }` or `{ every = n, first = i, burst = b }`.
///
/// Packets are numbered from 0 in the order the direction transmits them, counting
/// every packet the queue accepts (data, ACKs and UDP alike; see `queue::LossPattern`), so a
/// list is ns-2's `ErrorModel/List` as it is and the periodic form reads the same way (`first`
/// is an index, not ns-2's `offset_`, whose 0 and 1 both mean the first packet). A list may be
/// given in any order and is kept sorted; an index listed twice is an error (ns-2 refuses it
/// too). `first` defaults to 0 and `burst` (consecutive packets lost from each start, ns-2's
/// `burstlen_`) to 1; `burst = every` loses every packet from `first` on.
fn read_loss(t: &Obj, key: &str) -> Result<Option<LossPattern>, ScenarioError> {
    let Some(l) = t.table(key)? else { return Ok(None) };
    l.deny_unknown(&["packets", "every", "first", "burst"])?;
    let max = MAX_LOSS_INDEX as i64;
    if let Some(items) = l.array("packets")? {
        if let Some(other) = ["every", "first", "burst"].into_iter().find(|k| l.get(k).is_some()) {
            return Err(l.err_kind(other, ErrorKind::Conflict, "give either packets = [...] or every = n (with first, burst), not both"));
        }
        if items.len() > MAX_LOSS_PACKETS {
            let message = format!("lists {} packets; at most {MAX_LOSS_PACKETS} are allowed", items.len());
            return Err(l.err_kind("packets", ErrorKind::TooLarge, message));
        }
        let mut packets = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let field = format!("packets[{i}]");
            match item {
                Value::Integer(n) if (0..=max).contains(n) => packets.push(*n as u64),
                Value::Integer(n) => {
                    let message = format!("must be a packet index >= 0 and <= {MAX_LOSS_INDEX} (0 is the first packet the direction sends), got {n}");
                    return Err(l.err_kind(&field, ErrorKind::OutOfRange, message));
                }
                other => return Err(l.err_kind(&field, ErrorKind::WrongType, format!("must be a whole number (a packet index), got {}", describe(other)))),
            }
        }
        let mut sorted = packets.clone();
        sorted.sort_unstable();
        if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
            let at = packets.iter().rposition(|&p| p == w[0]).expect("present");
            return Err(l.err_kind(&format!("packets[{at}]"), ErrorKind::Conflict, format!("packet index {} is listed twice", w[0])));
        }
        return Ok(Some(LossPattern::List { packets: sorted.into() }));
    }
    let every = l.integer("every", 1, max)?.ok_or_else(|| l.err_kind("every", ErrorKind::Missing, "is required: give packets = [i, ...] (packet indices from 0) or every = n (one packet in n)"))? as u64;
    let first = l.integer("first", 0, max)?.unwrap_or(0) as u64;
    let burst = l.integer("burst", 1, max)?.unwrap_or(1) as u64;
    if burst > every {
        return Err(l.err_kind("burst", ErrorKind::OutOfRange, format!("must be <= every ({every}), got {burst}")));
    }
    Ok(Some(LossPattern::Periodic { every, first, burst }))
}

/// `delay_trace = "file"`: (time, delay) lines, resolved against the scenario file's directory
/// and read as [`files::read_named`] reads any file a scenario names. Errors quote the
/// offending token only, never whole lines of the file.
fn read_delay_trace(t: &Obj) -> Result<Option<Vec<(u64, u64)>>, ScenarioError> {
    let Some(file) = files::read_named(t, "delay_trace", "a delay trace", MAX_TRACE_BYTES)? else { return Ok(None) };
    let shown = &file.shown;
    let file_err = |message: String| t.err_kind("delay_trace", ErrorKind::File, message);
    let text = std::str::from_utf8(&file.bytes).map_err(|e| file_err(format!("{shown} is not UTF-8 text (bad byte at offset {})", e.valid_up_to())))?;
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

/// A queue table, read through the queue registry (`crate::queue::registry`): its `kind`
/// (default [`queue::DEFAULT_KIND`]) names the discipline, whose declared keys are the only ones allowed.
pub fn read_queue(q: &Obj) -> Result<QueueSpec, ScenarioError> {
    let kind = q.string("kind")?.unwrap_or(queue::DEFAULT_KIND);
    let Some(doc) = queue::kind_doc(kind) else {
        let kinds: Vec<&str> = queue::kinds().map(|k| k.name).collect();
        return Err(q.err("kind", format!("unknown queue kind \"{kind}\" (allowed: {})", kinds.join(", "))));
    };
    let mut allowed = vec!["kind"];
    allowed.extend(doc.keys.iter().map(|k| k.param.name));
    q.deny_unknown_with(&allowed, doc.aliases, None)?;
    match QueueSpec::read(kind, q) {
        Some(spec) => spec.map_err(|e| unboxed(e, q, "kind")),
        None => Err(q.err("kind", format!("internal error: queue kind \"{kind}\" is declared but not read"))),
    }
}

/// The link `a` - `b` with properties `p` (`forward` is `a` -> `b`).
fn link_spec(a: usize, b: usize, p: &LinkProps) -> LinkSpec {
    let dir = |bw: f64, error_rate: f64, queue: &Option<QueueSpec>, loss: &Option<LossPattern>| DirectionSpec {
        bandwidth_bps: bw,
        delay: p.delay,
        delay_schedule: p.schedule.clone(),
        queue: queue.clone().unwrap_or_else(|| p.queue.clone()),
        error_rate,
        loss: loss.clone(),
    };
    LinkSpec {
        a,
        b,
        forward: dir(p.bandwidth_fwd, p.error_fwd, &p.queue_fwd, &p.loss_fwd),
        reverse: dir(p.bandwidth_rev, p.error_rev, &p.queue_rev, &p.loss_rev),
        down: p.down.clone(),
    }
}

/// Add the link `a` - `b` (nodes made as they are first named); returns its index.
pub fn add_link(net: &mut NetBuilder, a: &str, b: &str, p: &LinkProps) -> usize {
    let (a, b) = (net.node(a), net.node(b));
    net.linked.insert((a.min(b), a.max(b)), net.links.len());
    net.links.push(link_spec(a, b, p));
    net.links.len() - 1
}

/// One `[[links]]` entry: a new link (`endpoints`), or changes to a link already built
/// (`at`: a topology's link by its name, such as `"bottleneck"`, or any link by its two
/// nodes); with `range = "first-last"`, one of either per number, `{i}` in the node names
/// replaced by it (as a `[[flows]]` group's `range`).
pub fn build_links(link: &Obj, net: &mut NetBuilder) -> Result<(), ScenarioError> {
    let ks: Vec<Option<usize>> = match link.string("range")? {
        None => vec![None],
        Some(text) => match super::flows::parse_span(text) {
            Some((a, b)) if b - a < limits::MAX_LINKS => (a..=b).map(Some).collect(),
            Some((a, b)) => {
                let message = format!("makes {} links; at most {} are allowed", b - a + 1, limits::MAX_LINKS);
                return Err(link.err_kind("range", ErrorKind::TooLarge, message));
            }
            None => return Err(link.err("range", format!("must be \"first-last\" (e.g. \"1-12\") or one number (\"3\"), got {}", limits::quote_short(text)))),
        },
    };
    let key = if link.get("at").is_some() { "at" } else { "endpoints" };
    if link.get("at").is_some() && link.get("endpoints").is_some() {
        return Err(link.err_kind("at", ErrorKind::Conflict, "give either endpoints (a new link) or at (a link already built), not both"));
    }
    let names = read_link_ends(link, key)?;
    let grouped = ks[0].is_some();
    if grouped && !names.iter().any(|n| n.contains("{i}")) {
        return Err(link.err("range", format!("needs {{i}} in {key}, e.g. {key} = [\"S{{i}}\", \"R1\"]")));
    }
    if let Some(i) = names.iter().position(|n| n.contains('{') || n.contains('}')).filter(|_| !grouped) {
        return Err(link.err(&format!("{key}[{i}]"), "has a placeholder, but this entry is one link: {i} is replaced only with range = \"first-last\""));
    }
    for k in ks {
        let ends: Vec<String> = names.iter().map(|n| k.map_or_else(|| n.to_string(), |k| n.replace("{i}", &k.to_string()))).collect();
        if key == "at" {
            amend_link(link, &ends, net)?;
        } else {
            new_link(link, [&ends[0], &ends[1]], net)?;
        }
    }
    Ok(())
}

/// `endpoints` or `at`: two node names, or for `at` one link name.
fn read_link_ends(link: &Obj, key: &str) -> Result<Vec<String>, ScenarioError> {
    if key == "at" {
        if let Some(name) = link.get("at").and_then(Value::as_str) {
            return Ok(vec![name.to_string()]);
        }
    }
    let example = if key == "at" { "at = \"bottleneck\" or at = [\"S1\", \"R1\"]" } else { "endpoints = [\"S1\", \"R1\"]" };
    let ends = link.array(key)?.ok_or_else(|| link.err_kind(key, ErrorKind::Missing, format!("is required, e.g. {example}")))?;
    let names: Vec<&str> = ends.iter().filter_map(Value::as_str).collect();
    if names.len() != 2 || ends.len() != 2 {
        return Err(link.err(key, format!("must be two node names, got {}", describe(link.get(key).expect("present")))));
    }
    for (i, name) in names.iter().enumerate() {
        // A group's `{i}` is checked once replaced.
        if !name.contains("{i}") {
            check_name(link, &format!("{key}[{i}]"), name)?;
        }
    }
    Ok(names.into_iter().map(str::to_string).collect())
}

fn new_link(link: &Obj, names: [&str; 2], net: &mut NetBuilder) -> Result<(), ScenarioError> {
    let props = read_link_props(link, None, &["endpoints", "range"])?;
    for (i, name) in names.iter().enumerate() {
        check_name(link, &format!("endpoints[{i}]"), name)?;
    }
    if names[0] == names[1] {
        return Err(link.err("endpoints", "a link must join two different nodes"));
    }
    if net.link_between(names[0], names[1]).is_some() {
        let message = format!("{a} and {b} are already linked; to change that link write at = [\"{a}\", \"{b}\"] instead of endpoints", a = names[0], b = names[1]);
        return Err(link.err_kind("endpoints", ErrorKind::Conflict, message));
    }
    add_link(net, names[0], names[1], &props);
    Ok(())
}

/// `at`: the link changed, by name (`NetBuilder::link_names`) or by its two nodes; the
/// entry's keys replace that link's and the others stay (`read_link_props`'s defaults).
fn amend_link(link: &Obj, at: &[String], net: &mut NetBuilder) -> Result<(), ScenarioError> {
    let index = match at {
        [name] => *net.link_names.get(name).ok_or_else(|| {
            let mut known: Vec<&str> = net.link_names.keys().map(String::as_str).collect();
            known.sort_unstable();
            let known = if known.is_empty() { "none in this scenario".to_string() } else { known.join(", ") };
            let message = format!("no link named {} (named links: {known}); any link can be given by its nodes, e.g. at = [\"S1\", \"R1\"]", limits::quote_short(name));
            link.err_kind("at", ErrorKind::Reference, message)
        })?,
        [a, b] => {
            for (i, name) in [a, b].into_iter().enumerate() {
                check_name(link, &format!("at[{i}]"), name)?;
                net.find(link, &format!("at[{i}]"), name)?;
            }
            net.link_between(a, b).ok_or_else(|| {
                link.err_kind("at", ErrorKind::Reference, format!("{a} and {b} are not linked (at changes a link already built; endpoints makes a new one)"))
            })?
        }
        _ => unreachable!("read_link_ends gives one name or two"),
    };
    let old = &net.links[index];
    let props = read_link_props(link, Some(&LinkProps::of(old)), &["at", "range"])?;
    net.links[index] = link_spec(old.a, old.b, &props);
    Ok(())
}

/// `down = [["10s", "15s"], ...]`: intervals during which the link is down in both directions
/// (ns-2's `$ns rtmodel-at FROM down A B` and `$ns rtmodel-at TO up A B`, with routes
/// recomputed at each change as ns-2's `rtproto Session` does; see `Simulator::on_route_change`),
/// in any link table (a builder's shared table: each of its links); `None` when absent.
///
/// Intervals rather than a list of {at, state} events, so that a schedule cannot say "down"
/// twice or start with "up". Each interval must start after 0 (ns-2 ignores a route
/// change at time 0: "Cannot set event in the past") and end after it starts; intervals must be
/// in time order and must not touch (a link up and down at the same instant would be two
/// changes ns-2 runs in one step). Times after the run's end are allowed and never happen (as
/// in ns-2), so that shortening a run (`--set run.duration=...`) needs no other change.
fn read_down(link: &Obj) -> Result<Option<Vec<(u64, u64)>>, ScenarioError> {
    let Some(items) = link.array("down")? else { return Ok(None) };
    if items.len() > super::limits::MAX_DOWN_INTERVALS {
        let message = format!("has {} intervals; at most {} are allowed", items.len(), super::limits::MAX_DOWN_INTERVALS);
        return Err(link.err_kind("down", ErrorKind::TooLarge, message));
    }
    let shown = |ns: u64| format!("{} s", ns as f64 / 1e9);
    let mut out: Vec<(u64, u64)> = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let key = format!("down[{i}]");
        let Some(pair) = item.as_array().filter(|a| a.len() == 2) else {
            return Err(link.err(&key, format!("must be an interval [from, to] such as [\"10s\", \"15s\"], got {}", describe(item))));
        };
        let mut ends = [0u64; 2];
        for (j, v) in pair.iter().enumerate() {
            let table = toml::Value::Table(toml::map::Map::from_iter([("t".to_string(), v.clone())]));
            let obj = Obj::new(link.ctx, &table, &link.field_path(&format!("{key}[{j}]")))?;
            ends[j] = obj.time("t", 1, MAX_TIME_NS as i128).map_err(|e| retarget(e, &link.field_path(&format!("{key}[{j}]"))))?.expect("present");
        }
        let [from, to] = ends;
        if to <= from {
            return Err(link.err(&key, format!("must end after it starts, got [{}, {}]", shown(from), shown(to))));
        }
        if let Some(&(_, prev_to)) = out.last() {
            if from <= prev_to {
                return Err(link.err(&key, format!("must start after down[{}] ends ({}): intervals in time order, not touching, got {}", i - 1, shown(prev_to), shown(from))));
            }
        }
        out.push((from, to));
    }
    Ok(Some(out))
}

/// An error read through a one-key stand-in table (`t`), named by the real field instead.
fn retarget(mut e: ScenarioError, field: &str) -> ScenarioError {
    e.path = field.to_string();
    e
}

