//! TCP applications: what feeds a flow's sender (`[[flows]] app = ...`).
//!
//! `app = "ftp"` and `app = "file"` (with `file_size`) are the simple forms; a file is also
//! `app = { kind = "file", size = "5MB" }` or, as a packet count, `{ kind = "file", packets =
//! 1000 }` (`read_file`). The traffic models
//! of the papers take a table, `app = { kind = "...", ... }`:
//!
//! - `onoff`: AdaVegas users (the AdaVegas paper: Maor and Mansour, "AdaVegas: Adaptive Control
//!   for TCP Vegas", section IV): Pareto ON and OFF periods, greedy while ON.
//! - `nps`: "No Packet Spacing" (the grids paper: Weigle and Feng, "A Case for TCP Vegas in
//!   High-Performance Computational Grids", section 3, Tables 2-3): Poisson flow arrivals,
//!   Pareto flow lengths, each flow handed to TCP at once.
//! - `pareto-paced`: the grids "Pareto" (interactive) model: as `nps`, but the data is handed to
//!   TCP at the ON rate during Pareto ON periods (ns-2 `Application/Traffic/Pareto` spacing).
//!
//! `nps` and `pareto-paced` take `connection = "shared"` (default: successive flows join the
//! entry's one long-lived connection) or `"per-flow"` (each flow opens its own connection).
//!
//! Every mean must be > 0, and every Pareto shape > 1 (for shape <= 1 the Pareto mean is
//! infinite, so a "mean" ON time or flow length would mean nothing).

use super::context::FOREVER;
use super::limits::MAX_FILE_PACKETS;
use super::reader::{describe, Obj};
use super::{AppSpec, ScenarioError};
use toml::Value;

/// Pareto ON/OFF user (the AdaVegas paper, section IV): greedy while ON, silent while OFF.
#[derive(Clone, Debug, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct OnOffSpec {
    /// Mean ON and OFF durations, seconds.
    pub mean_on: f64,
    pub mean_off: f64,
    /// Pareto shape of both periods (the paper: 1.5).
    pub shape: f64,
    /// Whether the user begins with an ON period at the flow's start (else with an OFF one).
    pub first_on: bool,
}

/// Poisson flow arrivals with Pareto flow lengths (the grids paper, Table 3).
#[derive(Clone, Debug, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct FlowArrivals {
    /// Mean time between flow arrivals (exponential), seconds.
    pub mean_interarrival: f64,
    /// Mean flow length, bytes (Pareto).
    pub mean_size: f64,
    pub size_shape: f64,
    /// `connection = "per-flow"`: each arriving flow opens its own TCP connection (starting
    /// from slow start) instead of joining the entry's one long-lived connection ("shared").
    pub per_flow: bool,
}

/// The grids "Pareto" model: flow arrivals as NPS, data released at `rate_bps` during Pareto
/// ON periods (bursts of packets, ns-2 `Application/Traffic/Pareto`), none during OFF.
#[derive(Clone, Debug, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct PacedSpec {
    pub arrivals: FlowArrivals,
    pub rate_bps: f64,
    /// Mean ON and OFF durations, seconds.
    pub mean_on: f64,
    pub mean_off: f64,
    pub shape: f64,
}

/// The default Pareto shape: every paper here uses 1.5.
pub const DEFAULT_SHAPE: f64 = 1.5;

/// Read a flow's `app` (and the legacy flat `file_size`).
pub fn read_app(f: &Obj) -> Result<AppSpec, ScenarioError> {
    let Some(v) = f.get("app") else {
        if f.get("file_size").is_some() {
            return Err(f.err("file_size", "only applies with app = \"file\""));
        }
        return Ok(AppSpec::Ftp);
    };
    match v {
        Value::String(kind) => match kind.as_str() {
            "ftp" => {
                if f.get("file_size").is_some() {
                    return Err(f.err("file_size", "only applies with app = \"file\""));
                }
                Ok(AppSpec::Ftp)
            }
            "file" => {
                let bytes = f.size("file_size", 1.0)?.ok_or_else(|| {
                    f.err("file_size", "is required with app = \"file\", e.g. \"5MB\" (for a packet count write app = { kind = \"file\", packets = 1000 })")
                })?;
                Ok(AppSpec::File { bytes: bytes.round() as u64 })
            }
            "onoff" | "nps" | "pareto-paced" => Err(f.err(
                "app",
                format!("\"{kind}\" needs parameters: write app = {{ kind = \"{kind}\", ... }} (see docs/scenario-format.md)"),
            )),
            other => Err(f.err("app", format!("unknown application \"{other}\" (allowed: ftp, file, onoff, nps, pareto-paced)"))),
        },
        Value::Table(_) => {
            if f.get("file_size").is_some() {
                return Err(f.err("file_size", "give the size inside the app table: app = { kind = \"file\", size = \"5MB\" }"));
            }
            let t = f.table("app")?.expect("present");
            read_app_table(&t)
        }
        other => Err(f.err("app", format!("must be a string (\"ftp\", \"file\") or a table {{ kind = ... }}, got {}", describe(other)))),
    }
}

fn read_app_table(t: &Obj) -> Result<AppSpec, ScenarioError> {
    let kind = t.req_string("kind")?;
    match kind {
        "ftp" => {
            t.deny_unknown(&["kind"])?;
            Ok(AppSpec::Ftp)
        }
        "file" => {
            t.deny_unknown(&["kind", "size", "packets"])?;
            read_file(t)
        }
        "onoff" => {
            t.deny_unknown(&["kind", "mean_on", "mean_off", "shape", "first"])?;
            let first_on = match t.string("first")?.unwrap_or("on") {
                "on" => true,
                "off" => false,
                other => return Err(t.err("first", format!("must be \"on\" or \"off\", got \"{other}\""))),
            };
            Ok(AppSpec::OnOff(OnOffSpec {
                mean_on: mean_time(t, "mean_on")?,
                mean_off: mean_time(t, "mean_off")?,
                shape: pareto_shape(t, "shape")?,
                first_on,
            }))
        }
        "nps" => {
            t.deny_unknown(&["kind", "mean_interarrival", "mean_flow_size", "flow_shape", "connection"])?;
            Ok(AppSpec::Nps(read_arrivals(t)?))
        }
        "pareto-paced" => {
            t.deny_unknown(&["kind", "mean_interarrival", "mean_flow_size", "flow_shape", "connection", "rate", "mean_on", "mean_off", "shape"])?;
            let arrivals = read_arrivals(t)?;
            let rate_bps = t.bandwidth("rate")?.ok_or_else(|| t.err("rate", "is required: the rate while ON, e.g. \"100Mbps\""))?;
            Ok(AppSpec::ParetoPaced(PacedSpec {
                arrivals,
                rate_bps,
                mean_on: mean_time(t, "mean_on")?,
                mean_off: mean_time(t, "mean_off")?,
                shape: pareto_shape(t, "shape")?,
            }))
        }
        other => Err(t.err("kind", format!("unknown application \"{other}\" (allowed: ftp, file, onoff, nps, pareto-paced)"))),
    }
}

/// `app = { kind = "file", ... }`: exactly one of `size` (bytes) and `packets` (a count).
///
/// A byte size is rounded up to whole packets, as ns-2's `TcpAgent::sendmsg` does (a partial
/// last packet is sent as a full `packetSize_` packet); `packets = N` says "N packets" even
/// when the packet size changes, and the ns-2 bridge writes it as `$app produce N`
/// (docs/decisions.md, "File sizes in packets"). It must be a TOML integer from 1 to
/// [`MAX_FILE_PACKETS`]: a fraction of a packet is not a packet count. There is no flat form
/// (`file_packets` next to `app = "file"`): the flat `file_size` is kept for old scenarios.
fn read_file(t: &Obj) -> Result<AppSpec, ScenarioError> {
    if t.get("packets").is_some() {
        if t.get("size").is_some() {
            return Err(t.err("packets", "give either size (bytes) or packets (a packet count), not both"));
        }
        let packets = t.integer("packets", 1, MAX_FILE_PACKETS)?.expect("present");
        return Ok(AppSpec::FilePackets { packets: packets as u64 });
    }
    let bytes = t
        .size("size", 1.0)?
        .ok_or_else(|| t.err("size", "is required for a file: size = \"5MB\" (bytes) or packets = 1000 (a packet count)"))?;
    Ok(AppSpec::File { bytes: bytes.round() as u64 })
}

fn read_arrivals(t: &Obj) -> Result<FlowArrivals, ScenarioError> {
    let mean_size = t
        .size("mean_flow_size", 1.0)?
        .ok_or_else(|| t.err("mean_flow_size", "is required: the mean flow length, e.g. \"10MB\""))?;
    let per_flow = match t.string("connection")?.unwrap_or("shared") {
        "shared" => false,
        "per-flow" => true,
        other => return Err(t.err("connection", format!("must be \"shared\" or \"per-flow\", got \"{other}\""))),
    };
    Ok(FlowArrivals {
        mean_interarrival: mean_time(t, "mean_interarrival")?,
        mean_size,
        size_shape: pareto_shape(t, "flow_shape")?,
        per_flow,
    })
}

/// A required mean duration, > 0, in seconds.
pub(crate) fn mean_time(t: &Obj, key: &str) -> Result<f64, ScenarioError> {
    let ns = t.time(key, 1, FOREVER)?.ok_or_else(|| t.err(key, "is required (a mean duration > 0, e.g. \"50s\")"))?;
    Ok(ns as f64 / 1e9)
}

/// A Pareto shape (default 1.5); must exceed 1 so that the distribution has a mean.
pub(crate) fn pareto_shape(t: &Obj, key: &str) -> Result<f64, ScenarioError> {
    let shape = t.number(key, -1e300, 1e300)?.unwrap_or(DEFAULT_SHAPE);
    if !(shape > 1.0) {
        return Err(t.err(
            key,
            format!("must be > 1: for a Pareto shape <= 1 the mean is undefined (infinite), so the given mean cannot hold; got {shape}"),
        ));
    }
    Ok(shape)
}
