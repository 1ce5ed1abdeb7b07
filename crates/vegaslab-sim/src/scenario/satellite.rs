//! Satellite topology builders (Vegas-A §5): `[geo]`, a bent-pipe GEO path between two
//! terminals, and `[leo]`, the terminal-to-terminal path over an Iridium-like constellation
//! whose delay follows the satellites (`crate::leo`). Both reduce the satellite path to one
//! full-duplex link between the two terminals; `docs/satellite-model.md` says why and what
//! that leaves out.
//!
//! ```toml
//! [geo]                     # all optional; defaults are the Vegas-A / ns-2 set-up
//! terminals = [{ name = "NY", lat = 40.9, lon = -73.9 }, { name = "SF", lat = 37.8, lon = -122.4 }]
//! satellite_lon = -95       # degrees east
//! bandwidth = "1.5Mbps"
//! queue = { kind = "droptail", limit = 50 }
//! error_rate = 0.005        # packet error rate
//! error_at = "SF"           # the terminal whose received packets are corrupted, or "both"
//!
//! [leo]
//! terminals = [{ name = "Berkeley", lat = 37.9, lon = -122.3 }, { name = "Boston", lat = 42.3, lon = -71.1 }]
//! altitude = 780            # km
//! separation = 32.72        # degrees between satellites in a plane
//! seam = 22                 # degrees
//! planes = 6
//! step = "1s"               # delay sampling step
//! ```

use super::context::NetBuilder;
use super::links::{add_link, read_queue, LinkProps};
use super::reader::Obj;
use super::{QueueSpec, ScenarioError};
use crate::leo::{self, Constellation, Handoff, Terminal};

/// ns-2 `GEO_ALTITUDE` (km).
pub const GEO_ALTITUDE_KM: f64 = 35_786.0;

/// New York and San Francisco as ns-2's `tcl/ex/sat-repeater.tcl` places them, the GEO
/// satellite at 95 W.
fn geo_default_terminals() -> [Terminal; 2] {
    [Terminal::new("NY", 40.9, -73.9), Terminal::new("SF", 37.8, -122.4)]
}

/// Slant range (km) from a terminal to a GEO satellite at `sat_lon` (both turn with the Earth).
pub fn geo_slant_km(t: &Terminal, sat_lon: f64) -> f64 {
    let r = leo::EARTH_RADIUS_KM;
    let rs = r + GEO_ALTITUDE_KM;
    let (lat, dlon) = (t.lat.to_radians(), (t.lon - sat_lon).to_radians());
    let cos_angle = lat.cos() * dlon.cos();
    (r * r + rs * rs - 2.0 * r * rs * cos_angle).sqrt()
}

/// One-way delay (s) terminal -> satellite -> terminal.
pub fn geo_delay_s(a: &Terminal, b: &Terminal, sat_lon: f64) -> f64 {
    (geo_slant_km(a, sat_lon) + geo_slant_km(b, sat_lon)) / leo::LIGHT_KM_S
}

fn read_terminals(o: &Obj, defaults: [Terminal; 2]) -> Result<[Terminal; 2], ScenarioError> {
    let Some(items) = o.array("terminals")? else { return Ok(defaults) };
    if items.len() != 2 {
        return Err(o.err("terminals", format!("must list exactly two terminals, got {}", items.len())));
    }
    let mut out = Vec::new();
    for (i, v) in items.iter().enumerate() {
        let t = Obj::new(o.ctx, v, &o.field_path(&format!("terminals[{i}]")))?;
        t.deny_unknown(&["name", "lat", "lon"])?;
        let name = t.req_string("name")?;
        super::reader::check_name(&t, "name", name)?;
        let lat = t.number("lat", -90.0, 90.0)?.ok_or_else(|| t.err("lat", "is required (degrees, north positive)"))?;
        let lon = t.number("lon", -180.0, 180.0)?.ok_or_else(|| t.err("lon", "is required (degrees, east positive)"))?;
        out.push(Terminal::new(name, lat, lon));
    }
    if out[0].name == out[1].name {
        return Err(o.err("terminals", "the two terminals need different names"));
    }
    let b = out.pop().unwrap();
    let a = out.pop().unwrap();
    Ok([a, b])
}

/// The common link keys: bandwidth, queue, error rate and where it applies.
fn read_props(o: &Obj, terms: &[Terminal; 2], delay: u64, schedule: Vec<(u64, u64)>) -> Result<LinkProps, ScenarioError> {
    let bw = o.bandwidth("bandwidth")?.unwrap_or(1.5e6);
    let queue = match o.table("queue")? {
        Some(q) => read_queue(&q)?,
        None => QueueSpec::DropTail(crate::queue::DropTailSpec { limit: 50 }),
    };
    let rate = match o.number("error_rate", f64::MIN, f64::MAX)? {
        Some(r) if !(0.0..1.0).contains(&r) => {
            return Err(o.err_kind("error_rate", super::ErrorKind::OutOfRange, format!("must be >= 0 and < 1, got {r}")))
        }
        other => other.unwrap_or(0.0),
    };
    // Forward = first terminal -> second.
    let (error_fwd, error_rev) = match o.string("error_at")? {
        None => (rate, 0.0),
        Some("both") => (rate, rate),
        Some(n) if n == terms[1].name => (rate, 0.0),
        Some(n) if n == terms[0].name => (0.0, rate),
        Some(n) => return Err(o.err("error_at", format!("must be \"both\", \"{}\" or \"{}\", got \"{n}\"", terms[0].name, terms[1].name))),
    };
    Ok(LinkProps { bandwidth_fwd: bw, bandwidth_rev: bw, delay, schedule, queue, error_fwd, error_rev, queue_fwd: None, queue_rev: None, loss_fwd: None, loss_rev: None, down: Vec::new() })
}

/// `[geo]`: terminal A - (GEO bent pipe) - terminal B.
pub fn build_geo(g: &Obj, net: &mut NetBuilder) -> Result<(), ScenarioError> {
    g.deny_unknown(&["terminals", "satellite_lon", "bandwidth", "queue", "error_rate", "error_at", "delay"])?;
    let terms = read_terminals(g, geo_default_terminals())?;
    let sat_lon = g.number("satellite_lon", -180.0, 180.0)?.unwrap_or(-95.0);
    let delay = match g.delay("delay")? {
        Some(d) => d,
        None => (geo_delay_s(&terms[0], &terms[1], sat_lon) * 1e9).round() as u64,
    };
    let props = read_props(g, &terms, delay, Vec::new())?;
    add_link(net, &terms[0].name, &terms[1].name, &props);
    Ok(())
}

/// `[leo]`: terminal A - (constellation path) - terminal B, the delay sampled over the run.
pub fn build_leo(l: &Obj, net: &mut NetBuilder, duration: u64) -> Result<(), ScenarioError> {
    l.deny_unknown(&[
        "terminals",
        "altitude",
        "period",
        "separation",
        "seam",
        "planes",
        "inclination",
        "elevation_mask",
        "isl_latitude_limit",
        "handoff",
        "handoff_interval",
        "earth_rotation",
        "step",
        "epoch",
        "extra_delay",
        "bandwidth",
        "queue",
        "error_rate",
        "error_at",
    ])?;
    let terms = read_terminals(l, [leo::berkeley(), leo::boston()])?;
    let altitude = l.number("altitude", 100.0, 10_000.0)?.unwrap_or(780.0);
    let period = l.time("period", 1, super::limits::MAX_TIME_NS)?.map(|ns| ns as f64 * 1e-9);
    let separation = l.number("separation", 1.0, 180.0)?.unwrap_or(360.0 / 11.0);
    let seam = l.number("seam", 0.0, 180.0)?.unwrap_or(22.0);
    let planes = l.integer("planes", 1, 100)?.unwrap_or(6) as usize;
    let mut c = Constellation::from_separations(altitude, period, separation, seam, planes);
    if let Some(i) = l.number("inclination", 0.0, 180.0)? {
        c.inclination_deg = i;
    }
    if let Some(m) = l.number("elevation_mask", 0.0, 90.0)? {
        c.elevation_mask_deg = m;
    }
    if let Some(m) = l.number("isl_latitude_limit", 0.0, 90.0)? {
        c.isl_latitude_limit_deg = m;
    }
    c.handoff = match l.string("handoff")? {
        None | Some("sticky") => Handoff::Sticky,
        Some("nearest") => Handoff::Nearest,
        Some(o) => return Err(l.err("handoff", format!("must be \"sticky\" or \"nearest\", got \"{o}\""))),
    };
    if let Some(h) = l.time("handoff_interval", 1, super::limits::MAX_TIME_NS)? {
        c.handoff_interval_s = h as f64 * 1e-9;
    }
    c.earth_rotation = l.bool("earth_rotation", true)?;
    let step = l.time("step", 1_000_000, super::limits::MAX_TIME_NS)?.unwrap_or(1_000_000_000);
    let epoch = l.time("epoch", 0, super::limits::MAX_TIME_NS)?.unwrap_or(0) as f64 * 1e-9;
    let extra = l.delay("extra_delay")?.unwrap_or(0);
    let points = duration / step + 1;
    if points > super::limits::MAX_DELAY_POINTS as u64 {
        let message = format!(
            "samples the path delay {points} times over the run (duration / step); at most {} are allowed: use a longer step",
            super::limits::MAX_DELAY_POINTS
        );
        return Err(l.err_kind("step", super::ErrorKind::TooLarge, message));
    }
    let samples = leo::path_delays(&c, &terms[0], &terms[1], duration as f64 * 1e-9, step as f64 * 1e-9, epoch);
    let mut schedule: Vec<(u64, u64)> = Vec::with_capacity(samples.len());
    for (i, s) in samples.iter().enumerate() {
        let Some(d) = s.delay_s else {
            return Err(l.err(
                "terminals",
                format!("no path between {} and {} at t = {} s (no visible satellite or no ISL route)", terms[0].name, terms[1].name, s.t),
            ));
        };
        let d = (d * 1e9).round() as u64 + extra;
        if schedule.last().is_none_or(|&(_, prev)| prev != d) {
            schedule.push((i as u64 * step, d));
        }
    }
    let base = schedule[0].1;
    schedule.remove(0);
    let props = read_props(l, &terms, base, schedule)?;
    add_link(net, &terms[0].name, &terms[1].name, &props);
    Ok(())
}
