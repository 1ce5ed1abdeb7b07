//! Links: bandwidth, delay and its changes, queue discipline, per direction.

use super::build::{NetBuilder, FOREVER, DEFAULT_QUEUE_LIMIT};
use super::reader::{describe, Obj};
use super::{DirectionSpec, LinkSpec, QueueSpec, ScenarioError};
use toml::Value;

/// The properties of one link read from a table; `defaults` fills what it omits.
pub struct LinkProps {
    pub bandwidth_fwd: f64,
    pub bandwidth_rev: f64,
    pub delay: u64,
    pub schedule: Vec<(u64, u64)>,
    pub queue: QueueSpec,
}

pub fn read_link_props(t: &Obj, defaults: Option<&LinkProps>, extra: &[&str]) -> Result<LinkProps, ScenarioError> {
    let mut allowed = vec!["bandwidth", "bandwidth_forward", "bandwidth_reverse", "delay", "delay_schedule", "queue"];
    allowed.extend_from_slice(extra);
    t.deny_unknown(&allowed)?;
    let bw = t.bandwidth("bandwidth")?;
    let bandwidth_fwd = t.bandwidth("bandwidth_forward")?.or(bw).or(defaults.map(|d| d.bandwidth_fwd));
    let bandwidth_rev = t.bandwidth("bandwidth_reverse")?.or(bw).or(defaults.map(|d| d.bandwidth_rev));
    let (Some(bandwidth_fwd), Some(bandwidth_rev)) = (bandwidth_fwd, bandwidth_rev) else {
        return Err(t.err("bandwidth", "is required, e.g. bandwidth = \"10Mbps\""));
    };
    let delay = match t.time("delay", 0, FOREVER)? {
        Some(d) => d,
        None => defaults.map(|d| d.delay).ok_or_else(|| t.err("delay", "is required, e.g. delay = \"10ms\""))?,
    };
    let schedule = match t.array("delay_schedule")? {
        Some(items) => {
            let mut out: Vec<(u64, u64)> = Vec::new();
            for (i, item) in items.iter().enumerate() {
                let e = Obj::new(t.ctx, item, &t.field_path(&format!("delay_schedule[{i}]")))?;
                e.deny_unknown(&["at", "delay"])?;
                let at = e.time("at", 0, FOREVER)?.ok_or_else(|| e.err("at", "is required"))?;
                let d = e.time("delay", 0, FOREVER)?.ok_or_else(|| e.err("delay", "is required"))?;
                if let Some(&(prev, _)) = out.last() {
                    if at < prev {
                        return Err(e.err("at", "delay changes must be in time order"));
                    }
                }
                out.push((at, d));
            }
            out
        }
        None => defaults.map(|d| d.schedule.clone()).unwrap_or_default(),
    };
    let queue = match t.table("queue")? {
        Some(q) => read_queue(&q)?,
        None => defaults.map(|d| d.queue.clone()).unwrap_or(QueueSpec::DropTail { limit: DEFAULT_QUEUE_LIMIT }),
    };
    Ok(LinkProps { bandwidth_fwd, bandwidth_rev, delay, schedule, queue })
}

fn read_queue(q: &Obj) -> Result<QueueSpec, ScenarioError> {
    q.deny_unknown(&["kind", "limit"])?;
    let kind = q.string("kind")?.unwrap_or("droptail");
    match kind {
        "droptail" => {
            let limit = q.integer("limit", 1, 100_000_000)?.unwrap_or(DEFAULT_QUEUE_LIMIT as i64) as u32;
            Ok(QueueSpec::DropTail { limit })
        }
        other => Err(q.err("kind", format!("unknown queue kind \"{other}\" (allowed: droptail)"))),
    }
}

pub fn add_link(net: &mut NetBuilder, a: &str, b: &str, p: &LinkProps) {
    let (a, b) = (net.node(a), net.node(b));
    let dir = |bw: f64| DirectionSpec { bandwidth_bps: bw, delay: p.delay, delay_schedule: p.schedule.clone(), queue: p.queue.clone() };
    net.links.push(LinkSpec { a, b, forward: dir(p.bandwidth_fwd), reverse: dir(p.bandwidth_rev) });
}

pub fn build_link(link: &Obj, net: &mut NetBuilder) -> Result<(), ScenarioError> {
    let props = read_link_props(link, None, &["endpoints"])?;
    let ends = link.array("endpoints")?.ok_or_else(|| link.err("endpoints", "is required, e.g. endpoints = [\"S1\", \"R1\"]"))?;
    let names: Vec<&str> = ends.iter().filter_map(Value::as_str).collect();
    if names.len() != 2 || ends.len() != 2 {
        return Err(link.err("endpoints", format!("must be two node names, got {}", describe(link.get("endpoints").unwrap()))));
    }
    if names[0] == names[1] {
        return Err(link.err("endpoints", "a link must join two different nodes"));
    }
    let exists = net.links.iter().any(|l| {
        let (x, y) = (&net.nodes[l.a], &net.nodes[l.b]);
        (x == names[0] && y == names[1]) || (x == names[1] && y == names[0])
    });
    if exists {
        return Err(link.err("endpoints", format!("{} and {} are already linked", names[0], names[1])));
    }
    add_link(net, names[0], names[1], &props);
    Ok(())
}

