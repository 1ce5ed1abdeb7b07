//! What a run reports (`docs/results-format.md`), serialisable to JSON.
//!
//! The field names are the column names, and they carry their unit (since 0.3;
//! `docs/results-format.md`, "Column names"): `_s`, `_bps`, `_pkts`, `_bytes`, `_ratio`; event
//! counts named by a plural noun and flags keep their names. The series' keys are written by
//! hand in the `Serialize` impls below (and in `vegaslab-py`'s typed columns), where the struct
//! fields keep their short internal names (`time`, `cwnd`, ...). Python's
//! `vegaslab.results.RENAMED_COLUMNS` lists the names of 0.2.

use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;
use vegaslab_cc::Nanos;

/// A time of the run (integer nanoseconds) as the seconds its tables and `meta` report: `t /
/// 1e9`, which is correctly rounded (1e9 is exact in a double), so every time a scenario can
/// write in decimal is reported as that decimal (30 s as 30.0, not the 30.000000000000004 of
/// `vegaslab_cc::secs`, a product with the inexact 1e-9). The simulation itself keeps `secs`,
/// ns-2's arithmetic, which its results depend on.
pub fn reported_secs(t: Nanos) -> f64 {
    t as f64 / 1e9
}

#[derive(Clone, Debug, Serialize)]
pub struct RunMeta {
    pub scenario: String,
    pub source: String,
    pub seed: u64,
    pub version: String,
    pub duration_s: f64,
    pub wall_time_s: f64,
    pub events: u64,
    /// Packets whose transmission started on a link by the end of the run (`departed_pkts`),
    /// summed over every link direction: the packet-hops, the work any packet-level simulator
    /// does for the scenario (comparable across simulators, unlike events).
    pub packet_hops: u64,
    /// Packets delivered by an event to a node at the same instant as an earlier one
    /// (express hops excepted: their next link has no other feeder), i.e. where ns-2's order
    /// of same-instant events decides who goes first (`event`).
    pub same_instant_arrivals: u64,
    /// Events that ran before an event scheduled earlier here because ns-2 would have
    /// scheduled them earlier (`event`): where the tie rule changed the order.
    pub tie_reorders: u64,
    /// Set when the run stopped before its end because the scenario exceeded a limit the
    /// simulator found only while running (see `Simulator::run`); absent otherwise, so the
    /// results of every complete run are unchanged. `run_text` turns it into a scenario error
    /// of kind `TooLarge`: such partial results are never shown as a run's results.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aborted: Option<Aborted>,
    /// The flow entries whose congestion window reached their receiver window `tcp.window`
    /// (ns-2's `window_`, 20 packets by default) at some time, in scenario order; flows never
    /// capped are left out. Kept in `meta` rather than as a column of `flows`, so the flow
    /// table (and the golden summaries built from it) are unchanged; `vegaslab.Results`
    /// shows it as `summary["window_limited_s"]` and `window_limited_flows()`.
    pub window_limited: Vec<WindowLimited>,
    /// The packet trace this run wrote (`[trace]`): file, format, lines, truncated; absent
    /// without `[trace]`, so other runs' results are unchanged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<crate::trace::TraceInfo>,
    /// The flow entries and UDP sources, in scenario order, between whose endpoints there are
    /// several shortest paths, so that the routing's tie rule (ns-2's: by node number, see
    /// `sim::routing`) chose the route at the start of the run. Absent when there is none, so
    /// the results of other runs are unchanged.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub route_ties: Vec<RouteTie>,
}

/// A route chosen by the tie rule among equal-length paths (`RunMeta::route_ties`).
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct RouteTie {
    /// The flow entry's or UDP source's name.
    pub flow: String,
    /// Shortest paths between the endpoints (hop count; saturating).
    pub equal_paths: u64,
    /// The nodes of the route taken, from the sender to the receiver.
    pub path: Vec<String>,
    /// The ACKs' route, from the receiver to the sender (empty for a UDP source); it need
    /// not be `path` reversed, as each node's table chooses by its own search (as in ns-2).
    pub ack_path: Vec<String>,
}

/// A flow entry capped by its receiver window (`RunMeta::window_limited`).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct WindowLimited {
    pub flow: String,
    /// The flow's `tcp.window`, packets.
    pub window: f64,
    /// Time during which cwnd >= window (`Flow::integrate_cwnd`), summed over a per-flow
    /// entry's connections, s.
    pub limited_s: f64,
    /// `limited_s` over the flow's active time (`end_s - start_s` of its row in `flows`); for a
    /// per-flow entry the sum over connections may exceed it (several are open at once).
    pub share: f64,
}

/// Why a run stopped early: the scenario field responsible and a message saying what to change.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Aborted {
    pub field: String,
    pub message: String,
    pub kind: AbortKind,
}

/// What stopped a run early.
#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum AbortKind {
    /// A limit of the simulator (more connections than event indices).
    Limit,
    /// A flow's loaded program (a BPF object) faulted: an access violation, its instruction
    /// budget.
    Fault,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct FlowResult {
    pub flow: String,
    pub cc: String,
    pub from: String,
    pub to: String,
    pub start_s: f64,
    pub end_s: f64,
    /// `connection = "per-flow"` entries only: connections opened (one per flow arrival),
    /// still open at the end, and ACKs that reached a connection after it finished.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub connections: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub open_connections: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub late_acks: Option<u64>,
    /// ns-2-flavour Vegas senders only (`vegaslab_cc::vegas_ns2::TieStats`): rounds whose
    /// delta decided something, those where delta's rounding sat exactly on its boundary
    /// (ns-2's double clock may decide them the other way), and those of them where the
    /// other side would have acted differently.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vegas_decisions: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vegas_threshold_ties: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vegas_decisive_ties: Option<u64>,
    pub sent_pkts: u64,
    pub sent_bytes: u64,
    pub retransmitted_pkts: u64,
    pub fast_retransmits: u64,
    pub timeouts: u64,
    pub slow_start_entries: u64,
    pub received_pkts: u64,
    pub received_bytes: u64,
    pub delivered_pkts: u64,
    pub delivered_bytes: u64,
    /// Data packets cumulatively acknowledged at the sender (ns-2 `ack_ + 1`, less the SYN;
    /// `Flow::acked_pkts`), summed over a per-flow entry's connections.
    pub acked_pkts: u64,
    pub throughput_bps: f64,
    pub goodput_bps: f64,
    pub active_throughput_bps: f64,
    pub completion_time_s: Option<f64>,
    pub final_cwnd_pkts: f64,
    /// Time-weighted mean cwnd (packets) from the flow's start to its end.
    pub mean_cwnd_pkts: f64,
    pub final_ssthresh_pkts: i64,
    pub in_flight_pkts: u64,
    pub dropped_pkts: u64,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct QueueResult {
    pub queue: String,
    pub kind: String,
    pub limit_pkts: u32,
    pub arrived_pkts: u64,
    pub dropped_pkts: u64,
    /// Packets whose transmission started by the end of the run (counted when it starts, as
    /// ns-2's queue monitor counts at dequeue; a start exactly at the end counts).
    pub departed_pkts: u64,
    /// Packets accepted and still waiting at the end of the run (their transmission had not
    /// started): arrived_pkts = departed_pkts + dropped_pkts + backlog_pkts.
    pub backlog_pkts: u64,
    pub loss_ratio: f64,
    pub mean_len_pkts: f64,
    pub std_len_pkts: f64,
    pub max_len_pkts: u64,
    /// Packets lost to the packet-error model (only for directions with an error rate).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_pkts: Option<u64>,
    /// RED queues only: random (unforced) drops and forced drops (average over the top
    /// threshold, or the hard limit); `dropped_pkts` = early + forced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub early_dropped_pkts: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub forced_dropped_pkts: Option<u64>,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct LinkResult {
    pub link: String,
    pub bandwidth_bps: f64,
    /// Bytes of the packets whose transmission started by the end of the run (`departed_pkts`;
    /// one in transmission at the end counts whole).
    pub sent_bytes: u64,
    /// Transmission time within the run over the run's duration.
    pub utilisation_ratio: f64,
}

/// Long-format per-flow samples: one row per (time, flow). Rows name their flow by index into
/// `names` (interned: no string per row); the JSON form writes the name itself, as before.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FlowSeries {
    pub time: Vec<f64>,
    /// Index into `names`, per row.
    pub flow: Vec<u32>,
    /// The flow entries' names, in scenario order.
    pub names: Vec<String>,
    pub cwnd: Vec<Option<f64>>,
    pub ssthresh: Vec<Option<f64>>,
    pub rtt: Vec<Option<f64>>,
    pub throughput_bps: Vec<Option<f64>>,
    /// 1 while the flow is active (an ON/OFF user ON, unacknowledged application data, an FTP
    /// flow between start and stop; see `apps`), else 0: the users Jain's index is taken over.
    pub active: Vec<u8>,
    /// Algorithm variables worth plotting (e.g. Vegas-A's alpha and beta), one column each;
    /// null where a flow's algorithm has no such variable.
    pub extra: std::collections::BTreeMap<String, Vec<Option<f64>>>,
}

/// Per-queue samples: one row per (time, queue), the queue by index into `names`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct QueueSeries {
    pub time: Vec<f64>,
    pub queue: Vec<u32>,
    /// The monitored queues' names ("A->B"), in the order they are sampled.
    pub names: Vec<String>,
    pub length: Vec<u64>,
    /// RED's average queue length (packets; the EWMA its drop decision uses) at the same
    /// times, on the rows of RED queues (`red` and `red-linear`); null on other queues' rows.
    /// The column exists when a monitored queue is RED, else it is empty and left out (as an
    /// algorithm-variable column of `FlowSeries` is), so runs without RED have no such column.
    pub avg: Vec<Option<f64>>,
}

impl QueueSeries {
    /// The value columns after `time_s` and `queue`, in order, as the JSON form and the typed
    /// columns of `vegaslab._core` write them: the one list both read (`length_pkts` as f64 there).
    pub fn value_columns(&self) -> Vec<(&'static str, QueueColumn<'_>)> {
        let mut out = vec![("length_pkts", QueueColumn::Count(&self.length))];
        if !self.avg.is_empty() {
            out.push(("avg_pkts", QueueColumn::Nullable(&self.avg)));
        }
        out
    }
}

/// A value column of [`QueueSeries`].
#[derive(Clone, Copy, Debug)]
pub enum QueueColumn<'a> {
    Count(&'a [u64]),
    Nullable(&'a [Option<f64>]),
}

impl Serialize for QueueColumn<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            QueueColumn::Count(v) => v.serialize(s),
            QueueColumn::Nullable(v) => v.serialize(s),
        }
    }
}

/// A column of names written from indices (the JSON form of an interned column).
struct Named<'a>(&'a [u32], &'a [String]);

impl Serialize for Named<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(|&i| self.1[i as usize].as_str()))
    }
}

impl Serialize for FlowSeries {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(7 + self.extra.len()))?;
        m.serialize_entry("time_s", &self.time)?;
        m.serialize_entry("flow", &Named(&self.flow, &self.names))?;
        m.serialize_entry("cwnd_pkts", &self.cwnd)?;
        m.serialize_entry("ssthresh_pkts", &self.ssthresh)?;
        m.serialize_entry("rtt_s", &self.rtt)?;
        m.serialize_entry("throughput_bps", &self.throughput_bps)?;
        m.serialize_entry("active", &self.active)?;
        for (name, column) in &self.extra {
            m.serialize_entry(name, column)?;
        }
        m.end()
    }
}

impl Serialize for QueueSeries {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let columns = self.value_columns();
        let mut m = s.serialize_map(Some(2 + columns.len()))?;
        m.serialize_entry("time_s", &self.time)?;
        m.serialize_entry("queue", &Named(&self.queue, &self.names))?;
        for (name, column) in &columns {
            m.serialize_entry(name, column)?;
        }
        m.end()
    }
}

#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Series {
    pub flows: FlowSeries,
    pub queues: QueueSeries,
}

/// One UDP source and its sink (`[[udp]]`).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct UdpResult {
    pub source: String,
    pub model: String,
    pub from: String,
    pub to: String,
    pub start_s: f64,
    pub end_s: f64,
    pub sent_pkts: u64,
    pub sent_bytes: u64,
    pub received_pkts: u64,
    pub received_bytes: u64,
    pub dropped_pkts: u64,
    pub dropped_bytes: u64,
    pub in_flight_pkts: u64,
    /// received_bytes x 8 / run duration.
    pub throughput_bps: f64,
    /// received_bytes x 8 / (end_s - start_s).
    pub active_throughput_bps: f64,
    /// sent_bytes x 8 / (end_s - start_s): the offered load.
    pub offered_bps: f64,
    /// The long-run mean rate the parameters ask for.
    pub nominal_rate_bps: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct RunResults {
    pub meta: RunMeta,
    pub flows: Vec<FlowResult>,
    pub queues: Vec<QueueResult>,
    pub links: Vec<LinkResult>,
    pub udp: Vec<UdpResult>,
    pub series: Series,
}

impl RunResults {
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("results serialise")
    }
}

#[cfg(test)]
mod tests {
    use super::reported_secs;

    #[test]
    fn reported_times_are_the_decimal_a_scenario_writes() {
        for (ns, s) in [(30_000_000_000u64, 30.0), (120_000_000_000, 120.0), (1_000_000_000_000, 1000.0), (321_521_760_000, 321.52176), (100_000_000, 0.1)] {
            assert_eq!(reported_secs(ns), s, "{ns} ns");
        }
        assert_ne!(vegaslab_cc::secs(30_000_000_000), 30.0, "the simulation's conversion differs, so this test can fail");
    }
}
