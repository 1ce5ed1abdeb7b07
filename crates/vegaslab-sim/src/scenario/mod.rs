//! The scenario: what to simulate, validated once.
//!
//! A scenario comes from TOML text (`docs/scenario-format.md`), optionally edited by
//! `key=value` overrides, and is checked field by field into the typed [`Scenario`]. Every
//! error names the file, the field path and what was expected ([`ScenarioError`]).

mod algorithms;
pub use algorithms::{bind_external, require_hosted};
pub use files::resolve_relative;
mod apps;
mod aqt;
mod build;
mod context;
mod bpf;
mod files;
mod object_cache;
pub mod limits;
mod flows;
mod links;
pub mod normalize;
mod overrides;
mod param_source;
pub mod precheck;
pub mod schema;
mod reader;
mod recording;
mod satellite;
pub(crate) mod spelling;
pub mod sweep;
mod topologies;
mod udp;

pub use build::from_value;

pub use normalize::normalize;
pub use overrides::apply_overrides;
pub use sweep::Sweep;
pub use apps::{FlowArrivals, OnOffSpec, PacedSpec};
pub use udp::{OffTime, UdpModel, UdpSpec};
pub use recording::read_trace;

use serde::Serialize;
use std::fmt;
use vegaslab_cc::{AlgorithmSpec, Nanos, TcpConfig};

/// What is wrong with a scenario, so that callers (Python, the fuzz tests, tools) can tell
/// kinds of error apart without matching message text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ErrorKind {
    /// Not valid TOML, not UTF-8, or an override that is not `key=value`.
    Syntax,
    /// A key the schema does not know.
    UnknownField,
    /// A required field is absent.
    Missing,
    /// A value of the wrong type (a string where a number belongs, ...).
    WrongType,
    /// A value outside its allowed range (the message gives the range).
    OutOfRange,
    /// A name that refers to nothing (a node, link or flow), or endpoints with no path.
    Reference,
    /// Fields that cannot go together, or a duplicate.
    Conflict,
    /// The run would need more memory or more event indices than allowed (the message says
    /// how much).
    TooLarge,
    /// A file the scenario refers to cannot be used (missing, not a regular file, too large,
    /// malformed).
    File,
    /// Anything else the schema rejects.
    Invalid,
}

impl ErrorKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Syntax => "syntax",
            ErrorKind::UnknownField => "unknown-field",
            ErrorKind::Missing => "missing",
            ErrorKind::WrongType => "wrong-type",
            ErrorKind::OutOfRange => "out-of-range",
            ErrorKind::Reference => "reference",
            ErrorKind::Conflict => "conflict",
            ErrorKind::TooLarge => "too-large",
            ErrorKind::File => "file",
            ErrorKind::Invalid => "invalid",
        }
    }
}

/// A bad scenario: `file: path: message`, with its [`ErrorKind`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    pub file: String,
    pub path: String,
    pub message: String,
    pub kind: ErrorKind,
}

impl ScenarioError {
    pub fn new(file: &str, path: &str, kind: ErrorKind, message: impl Into<String>) -> Self {
        ScenarioError { file: file.to_string(), path: path.to_string(), message: message.into(), kind }
    }

    /// The same error with another kind.
    pub fn with_kind(mut self, kind: ErrorKind) -> Self {
        self.kind = kind;
        self
    }
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "{}: {}", self.file, self.message)
        } else {
            write!(f, "{}: {}: {}", self.file, self.path, self.message)
        }
    }
}

impl std::error::Error for ScenarioError {}

/// A validated scenario. Node and link indices are positions in `nodes` and `links`.
///
/// Serialised, it is the *normalised scenario* (see [`normalize`]): every default filled in,
/// times in integer nanoseconds (`*_ns`), bandwidths in bit/s, sizes in bytes, and no file
/// path (the content of referenced files is part of it, and their hashes are in `files`).
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct Scenario {
    /// Where it came from (file name), for messages and metadata. Not part of the normalised
    /// scenario: moving a file must not change what it describes.
    #[serde(skip)]
    pub source: String,
    /// `meta.id`, else the file stem.
    pub id: String,
    #[serde(rename = "duration_ns")]
    pub duration: Nanos,
    pub seed: u64,
    #[serde(rename = "sample_interval_ns")]
    pub sample_interval: Nanos,
    /// `run.clock`: the senders' clock in seconds ([`SenderClock`]).
    pub clock: SenderClock,
    /// `run.tie_order`: the order of events that tie on every key ns-2's order has
    /// ([`TieOrder`]). Left out of the normalised scenario when it is the default, so every
    /// scenario written before it normalises (and is stored) as before.
    #[serde(skip_serializing_if = "TieOrder::is_default")]
    pub tie_order: TieOrder,
    pub nodes: Vec<String>,
    pub links: Vec<LinkSpec>,
    pub flows: Vec<FlowSpec>,
    pub monitor: MonitorSpec,
    /// Nodes that are AQT-enabled routers (RoVegas): they add each probing packet's queueing
    /// time to its AQT option.
    pub aqt_routers: Vec<usize>,
    /// UDP sources (`[[udp]]`), see `udp`.
    pub udp: Vec<UdpSpec>,
    /// Files the scenario read (delay traces), with their content hashes.
    pub files: Vec<FileRef>,
    /// `[trace]`, absent by default (and then absent from the normalised scenario).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<TraceSpec>,
}

/// `run.clock`: what a sender reads as the time in seconds where ns-2's TCP agents read
/// `Scheduler::clock()`: Vegas's send times and RTT samples (hence its `diff` against alpha
/// and beta), `firstsent_`, and the RTT samples behind the retransmission timeout.
///
/// ns-2 keeps time in a double that it accumulates: each event is scheduled at the
/// scheduler's double time plus a double delay (a transmission time `8.0 * size /
/// bandwidth`, a propagation delay, a timeout), so after many hops the clock is a few
/// units in the last place away from the exact time. On a busy bottleneck RTTs are whole
/// multiples of the packet time and Vegas's `diff` often lands exactly on a threshold in
/// exact arithmetic; ns-2's rounding then decides the side (1.9999999999999993 is not 2),
/// and the flow's course with it (one grids network-1 setting moves by 12%).
///
/// `"ns2"` (the default, since the papers ran ns-2) carries beside every event the
/// double ns-2 would have computed for it, by ns-2's own sums: a packet's arrival is its
/// transmission start plus (transmission time plus delay), a transmission starts at the
/// packet's arrival or at the end of the previous transmission (the later one, as ns-2's
/// event order decides), a sink answers at the data's arrival, a timer fires at its arming
/// time plus the timeout, and times written in the scenario (flow starts, application
/// events, UDP sends) are `ns / 1e9`, the double Tcl reads from the bridge's script.
/// `"exact"` reads the integer time in seconds (`ns * 1e-9`), the clock of a simulator without
/// accumulated rounding.
///
/// What reads it: ns-2's sender machinery, which every algorithm runs on (the RTT samples
/// it hands every controller, the Linux and ns-3 flavours' included, and the timed packet's
/// sample behind the retransmission timeout), and the ns-2 Vegas agent (send times and
/// `diff` of the ns-2 flavours of Vegas, Vegas-A, AdaVegas and RoVegas).
///
/// The doubles also order events at the same nanosecond, as ns-2 orders them (`event`); with
/// `"exact"` those ties go by scheduling instant alone. Approximations: a UDP source's clock
/// and an application's events are their integer times' doubles, not ns-2's own sums (a CBR
/// source accumulates its intervals).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SenderClock {
    #[default]
    Ns2,
    Exact,
}

/// `run.tie_order`: which of several events at the same nanosecond, with the same ns-2 double
/// and the same ns-2 scheduling instant (`since`), runs first (the order `event` documents).
///
/// Such events are independent: any order is a correct simulation, and which one is taken is
/// an artefact of the simulator. ns-2 takes the order its scheduler inserted them, which
/// follows chains of such ties back to where the script created the flows. `"ns2"` (the
/// default) takes the lower channel or flow first (`event`'s module documentation): ns-2's
/// order in the cases checked on traces, not in every case. Where many flows send in
/// lock-step (equal paths, equal starts) the same side of every tie wins again and again,
/// which can tilt a result: Floyd and Jacobson's phase effects ("On Traffic Phase Effects in
/// Packet-Switched Gateways", 1992). On the benchmark (`bench/grids-net2`: 25 Reno and 25
/// Vegas flows started together, 200 s, seeds 1-20) Reno's share of the delivered bytes has
/// mean 63.53% with `"ns2"`, 63.78% with `"shuffled"` and 63.55% in ns-2.35 itself
/// (docs/ns2-reference-numbers.md, "Benchmark").
///
/// `"shuffled"` orders each set of tied events by a hash of the event, its time and
/// a number drawn from the run's seed (`rng::STREAM_TIES`): an order that differs from
/// instant to instant and from seed to seed, and is the same on every machine for the same
/// seed. It keeps every other key (time, double, `since`), so causality and ns-2's modelled
/// order are untouched; it is a check of how much a conclusion owes to tie-breaking, not a
/// model of ns-2 (the ns-2 bridge refuses it). Events scheduled before the queue's current
/// time (never, in a correct simulation) keep their order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TieOrder {
    #[default]
    Ns2,
    Shuffled,
}

impl TieOrder {
    fn is_default(&self) -> bool {
        *self == TieOrder::default()
    }
}

/// A file a scenario refers to, identified by its content (the path is only for people).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct FileRef {
    /// The field that names it, e.g. `links[2].delay_trace`.
    pub field: String,
    /// The name as written in the scenario (not resolved: paths are not identity).
    pub name: String,
    /// Hex SHA-256 of the bytes read.
    pub sha256: String,
    pub bytes: u64,
}

/// A full-duplex link between nodes `a` and `b`.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct LinkSpec {
    pub a: usize,
    pub b: usize,
    /// Direction a -> b.
    pub forward: DirectionSpec,
    /// Direction b -> a.
    pub reverse: DirectionSpec,
    /// `links[].down`: intervals [from, to) in ns during which both directions are down, in
    /// time order, disjoint, 0 < from < to (times after the run's end never happen). Left out of the normalised scenario
    /// when empty, so scenarios without failures normalise (and are stored) as before.
    #[serde(skip_serializing_if = "Vec::is_empty", rename = "down_ns")]
    pub down: Vec<(u64, u64)>,
}

/// One direction of a link.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct DirectionSpec {
    pub bandwidth_bps: f64,
    /// Propagation delay, and the scheduled changes `(at, new delay)` in time order.
    #[serde(rename = "delay_ns")]
    pub delay: Nanos,
    #[serde(rename = "delay_schedule_ns")]
    pub delay_schedule: Vec<(Nanos, Nanos)>,
    pub queue: QueueSpec,
    /// Probability that a transmitted packet is lost (packet error rate), 0 <= rate < 1.
    pub error_rate: f64,
    /// Deterministic losses (`loss = { ... }`), if any. Left out of the normalised scenario
    /// when absent, so that scenarios without one normalise (and are stored) as before.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loss: Option<crate::queue::LossPattern>,
}

/// A link direction's queue: defined with the disciplines (`queue::registry`), so the queue
/// layer never reads the scenario's types.
pub use crate::queue::QueueSpec;

#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct FlowSpec {
    pub name: String,
    pub from: usize,
    pub to: usize,
    pub algorithm: AlgorithmSpec,
    pub tcp: TcpConfig,
    #[serde(rename = "start_ns")]
    pub start: Nanos,
    #[serde(rename = "stop_ns")]
    pub stop: Option<Nanos>,
    pub app: AppSpec,
}

#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum AppSpec {
    /// Always has data (ns-2 `Application/FTP` started with `start`).
    Ftp,
    /// A transfer of this many bytes, handed to TCP at once (`$ftp send bytes`).
    File { bytes: u64 },
    /// A transfer of this many whole packets, handed to TCP at once (`app = { kind = "file",
    /// packets = N }`; ns-2 `$ftp produce N`). Kept apart from `File` rather than turned into
    /// bytes, so that the normalised scenario says what the user asked for and the ns-2 bridge
    /// writes ns-2's own packet-count command (see `scenario::apps`).
    FilePackets { packets: u64 },
    /// Pareto ON/OFF user, greedy while ON (`app = { kind = "onoff", ... }`, see `crate::apps`).
    #[serde(rename = "onoff")]
    OnOff(OnOffSpec),
    /// Poisson flow arrivals, Pareto lengths, each handed over at once (`kind = "nps"`).
    Nps(FlowArrivals),
    /// As `Nps`, data released at an ON rate during Pareto ON periods (`kind = "pareto-paced"`).
    ParetoPaced(PacedSpec),
}

/// Which time series to record; all off by default.
#[derive(Clone, Debug, Default, Serialize, schemars::JsonSchema)]
pub struct MonitorSpec {
    pub cwnd: bool,
    pub throughput: bool,
    /// Link directions `(from node, to node)` whose queue length is sampled.
    pub queues: Vec<(usize, usize)>,
    pub all_queues: bool,
}

/// `[trace]`: a per-packet trace of chosen link directions and flows (`crate::trace`).
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct TraceSpec {
    /// Link directions `(from node, to node)`; empty: every direction.
    pub links: Vec<(usize, usize)>,
    /// Flow entries (indices); empty: every flow (and every UDP source).
    pub flows: Vec<usize>,
    pub format: TraceFormat,
    /// The file's plain name (`trace_file_name`): the caller chooses the directory it goes
    /// in (`RunOptions::trace_dir`); a scenario never names an output location.
    pub file: String,
    pub max_lines: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TraceFormat {
    /// ns-2's trace lines (`Trace::format`).
    Ns2,
    /// A classic libpcap file, LINKTYPE_RAW, synthesized IPv4/TCP headers.
    Pcap,
}

/// A TOML syntax error as "not valid TOML at line L, column C: what", without the echo of the
/// source line that the parser's own message carries (a line may be megabytes long, or hold
/// text that should not be repeated).
fn toml_error(text: &str, e: &toml::de::Error) -> String {
    let what: String = e.message().split_whitespace().collect::<Vec<_>>().join(" ").chars().filter(|c| !c.is_control()).take(200).collect();
    match e.span() {
        Some(span) => {
            let before = &text.as_bytes()[..span.start.min(text.len())];
            let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
            let column = before.iter().rev().take_while(|&&b| b != b'\n').count() + 1;
            format!("not valid TOML at line {line}, column {column}: {what}")
        }
        None => format!("not valid TOML: {what}"),
    }
}

/// Parse TOML text (plus overrides) into a validated scenario.
pub fn parse(text: &str, source: &str, overrides: &[String]) -> Result<Scenario, ScenarioError> {
    precheck::precheck(text, source)?;
    let mut value: toml::Value = toml::from_str(text).map_err(|e| ScenarioError::new(source, "", ErrorKind::Syntax, toml_error(text, &e)))?;
    apply_overrides(&mut value, overrides)
        .map_err(|(path, message, kind)| ScenarioError::new(source, &path, kind, message))?;
    from_value(&value, source)
}
