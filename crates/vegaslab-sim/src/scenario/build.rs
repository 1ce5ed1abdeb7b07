//! TOML value -> validated [`Scenario`]. See `docs/scenario-format.md` for the schema.

use super::reader::{describe, Ctx, Obj};
use super::{AppSpec, DirectionSpec, FlowSpec, LinkSpec, MonitorSpec, QueueSpec, Scenario, ScenarioError};
use std::collections::HashMap;
use toml::Value;
use vegaslab_cc::{Algorithm, TcpConfig, VegasFlavour, VegasParams};

const FOREVER: i128 = i64::MAX as i128;
/// ns-2's default queue limit (`Queue set limit_ 50`).
pub const DEFAULT_QUEUE_LIMIT: u32 = 50;

/// Validate a parsed TOML document.
pub fn from_value(value: &Value, source: &str) -> Result<Scenario, ScenarioError> {
    let ctx = Ctx { file: source };
    let root = Obj::new(ctx, value, "")?;
    root.deny_unknown(&["meta", "variant", "run", "links", "dumbbell", "flows", "monitor"])?;

    let id = match root.table("meta")? {
        Some(meta) => meta.string("id")?.map(str::to_string),
        None => None,
    }
    .unwrap_or_else(|| file_stem(source));

    let run = root.table("run")?.ok_or_else(|| ctx.err("run", "is required (a [run] table with at least duration)"))?;
    run.deny_unknown(&["duration", "seed", "sample_interval"])?;
    let duration = run.time("duration", 1, FOREVER)?.ok_or_else(|| run.err("duration", "is required, e.g. duration = \"200s\""))?;
    let seed = run.integer("seed", 0, i64::MAX)?.unwrap_or(1) as u64;
    let sample_interval = run.time("sample_interval", 1, FOREVER)?.unwrap_or(100_000_000);

    let mut net = NetBuilder::default();
    if let Some(db) = root.table("dumbbell")? {
        build_dumbbell(&db, &mut net)?;
    }
    if let Some(links) = root.array("links")? {
        for (i, lv) in links.iter().enumerate() {
            let link = Obj::new(ctx, lv, &format!("links[{i}]"))?;
            build_link(&link, &mut net)?;
        }
    }
    if net.links.is_empty() {
        return Err(ctx.err("links", "the scenario has no links: give [[links]] or a [dumbbell]"));
    }

    let mut flows = Vec::new();
    let flow_values = root.array("flows")?.ok_or_else(|| ctx.err("flows", "is required: at least one [[flows]] entry"))?;
    for (i, fv) in flow_values.iter().enumerate() {
        let f = Obj::new(ctx, fv, &format!("flows[{i}]"))?;
        build_flows(&f, i, duration, &net, &mut flows)?;
    }
    let mut seen = HashMap::new();
    for (i, f) in flows.iter().enumerate() {
        if let Some(j) = seen.insert(f.name.clone(), i) {
            return Err(ctx.err(&format!("flows[{i}].name"), format!("\"{}\" is already the name of flows[{j}]", f.name)));
        }
    }

    let monitor = match root.table("monitor")? {
        Some(m) => build_monitor(&m, &net)?,
        None => MonitorSpec::default(),
    };

    Ok(Scenario {
        source: source.to_string(),
        id,
        duration,
        seed,
        sample_interval,
        nodes: net.nodes,
        links: net.links,
        flows,
        monitor,
    })
}

fn file_stem(source: &str) -> String {
    std::path::Path::new(source)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| source.to_string())
}

#[derive(Default)]
struct NetBuilder {
    nodes: Vec<String>,
    index: HashMap<String, usize>,
    links: Vec<LinkSpec>,
    dumbbell_pairs: usize,
}

impl NetBuilder {
    fn node(&mut self, name: &str) -> usize {
        if let Some(&i) = self.index.get(name) {
            return i;
        }
        self.nodes.push(name.to_string());
        self.index.insert(name.to_string(), self.nodes.len() - 1);
        self.nodes.len() - 1
    }

    fn find(&self, obj: &Obj, key: &str, name: &str) -> Result<usize, ScenarioError> {
        self.index.get(name).copied().ok_or_else(|| {
            let mut known: Vec<&str> = self.nodes.iter().map(String::as_str).collect();
            known.truncate(12);
            obj.err(key, format!("no node named \"{name}\" (nodes: {}{})", known.join(", "), if self.nodes.len() > 12 { ", ..." } else { "" }))
        })
    }
}

/// The properties of one link read from a table; `defaults` fills what it omits.
struct LinkProps {
    bandwidth_fwd: f64,
    bandwidth_rev: f64,
    delay: u64,
    schedule: Vec<(u64, u64)>,
    queue: QueueSpec,
}

fn read_link_props(t: &Obj, defaults: Option<&LinkProps>, extra: &[&str]) -> Result<LinkProps, ScenarioError> {
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

fn add_link(net: &mut NetBuilder, a: &str, b: &str, p: &LinkProps) {
    let (a, b) = (net.node(a), net.node(b));
    let dir = |bw: f64| DirectionSpec { bandwidth_bps: bw, delay: p.delay, delay_schedule: p.schedule.clone(), queue: p.queue.clone() };
    net.links.push(LinkSpec { a, b, forward: dir(p.bandwidth_fwd), reverse: dir(p.bandwidth_rev) });
}

fn build_link(link: &Obj, net: &mut NetBuilder) -> Result<(), ScenarioError> {
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

/// S1..Sn - R1 - R2 - D1..Dn.
fn build_dumbbell(db: &Obj, net: &mut NetBuilder) -> Result<(), ScenarioError> {
    db.deny_unknown(&["pairs", "access", "egress", "bottleneck"])?;
    let pairs = db.integer("pairs", 1, 100_000)?.ok_or_else(|| db.err("pairs", "is required"))? as usize;
    let per_pair = |key: &str| -> Result<Vec<LinkProps>, ScenarioError> {
        match db.get(key) {
            None => Ok(Vec::new()),
            Some(Value::Array(items)) => {
                if items.len() != pairs {
                    return Err(db.err(key, format!("has {} entries but pairs = {pairs}", items.len())));
                }
                items
                    .iter()
                    .enumerate()
                    .map(|(i, v)| read_link_props(&Obj::new(db.ctx, v, &db.field_path(&format!("{key}[{i}]")))?, None, &[]))
                    .collect()
            }
            Some(_) => {
                let t = db.table(key)?.expect("present");
                let p = read_link_props(&t, None, &[])?;
                Ok((0..pairs).map(|_| LinkProps { schedule: p.schedule.clone(), queue: p.queue.clone(), ..p }).collect())
            }
        }
    };
    let access = per_pair("access")?;
    if access.is_empty() {
        return Err(db.err("access", "is required: the S_i - R1 links"));
    }
    let egress = per_pair("egress")?;
    let bottleneck_t = db.table("bottleneck")?.ok_or_else(|| db.err("bottleneck", "is required: the R1 - R2 link"))?;
    let bottleneck = read_link_props(&bottleneck_t, None, &[])?;
    for (i, p) in access.iter().enumerate() {
        add_link(net, &format!("S{}", i + 1), "R1", p);
    }
    add_link(net, "R1", "R2", &bottleneck);
    for i in 0..pairs {
        let p = egress.get(i).unwrap_or(&access[i]);
        add_link(net, "R2", &format!("D{}", i + 1), p);
    }
    net.dumbbell_pairs = pairs;
    Ok(())
}

fn build_flows(f: &Obj, i: usize, duration: u64, net: &NetBuilder, out: &mut Vec<FlowSpec>) -> Result<(), ScenarioError> {
    f.deny_unknown(&["name", "from", "to", "cc", "start", "stop", "app", "file_size", "params", "tcp", "pairs"])?;
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
                Some((a, b)) if a >= 1 && a <= b && b <= net.dumbbell_pairs => Some((a, b)),
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
    let app = match f.string("app")?.unwrap_or("ftp") {
        "ftp" => {
            if f.get("file_size").is_some() {
                return Err(f.err("file_size", "only applies with app = \"file\""));
            }
            AppSpec::Ftp
        }
        "file" => {
            let bytes = f.size("file_size", 1.0)?.ok_or_else(|| f.err("file_size", "is required with app = \"file\", e.g. \"5MB\""))?;
            AppSpec::File { bytes: bytes.round() as u64 }
        }
        other => return Err(f.err("app", format!("unknown application \"{other}\" (allowed: ftp, file)"))),
    };
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
            let from = net.find(f, "from", from_name)?;
            let to = net.find(f, "to", to_name)?;
            if from == to {
                return Err(f.err("to", "must differ from 'from'"));
            }
            vec![(base_name.unwrap_or_else(|| format!("flow{i}")), from, to)]
        }
    };
    for (name, from, to) in endpoints {
        out.push(FlowSpec { name, from, to, algorithm: algorithm.clone(), tcp: tcp.clone(), start, stop, app: app.clone() });
    }
    Ok(())
}

fn read_algorithm(f: &Obj, cc: &str) -> Result<Algorithm, ScenarioError> {
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
        other => Err(f.err("cc", format!("unknown congestion control \"{other}\" (allowed: reno, newreno, vegas)"))),
    }
}

fn read_tcp(t: &Obj) -> Result<TcpConfig, ScenarioError> {
    t.deny_unknown(&[
        "window", "window_init", "packet_size", "header_bytes", "ack_size", "syn", "delay_growth", "max_burst", "dupacks",
        "tick", "min_rto", "max_rto", "initial_rto", "limited_transmit", "vegas_headers",
    ])?;
    let d = TcpConfig::default();
    let secs = |key: &str, lo: i128, default: f64| -> Result<f64, ScenarioError> {
        Ok(t.time(key, lo, FOREVER)?.map(|ns| ns as f64 / 1e9).unwrap_or(default))
    };
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
        tick: secs("tick", 1, d.tick)?,
        min_rto: secs("min_rto", 0, d.min_rto)?,
        max_rto: secs("max_rto", 1, d.max_rto)?,
        initial_rto: secs("initial_rto", 1, d.initial_rto)?,
        limited_transmit: t.bool("limited_transmit", d.limited_transmit)?,
        vegas_headers: t.bool("vegas_headers", d.vegas_headers)?,
        boot_time: 0.0,
    };
    if cfg.max_rto < cfg.min_rto {
        return Err(t.err("max_rto", format!("must be >= min_rto ({} s)", cfg.min_rto)));
    }
    Ok(cfg)
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
