//! Sender configuration: ns-2's `Agent/TCP` defaults, and which implementation's semantics a
//! controller follows ([`Flavour`]).

use serde::{Deserialize, Serialize};


/// The `Agent/TCP` knobs that change results, with ns-2.35's defaults
/// (docs/vegas-implementations.md, "ns-2 TCP defaults and conventions").
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct TcpConfig {
    /// Receiver-window cap in packets (ns-2 `window_`, default 20).
    pub window: f64,
    /// Initial window in packets (`windowInit_`, default 2).
    pub window_init: f64,
    /// Payload bytes per data packet (`packetSize_`, default 1000).
    pub packet_size: u32,
    /// TCP/IP header bytes added to Reno/NewReno data packets, and the size of their SYN
    /// (`tcpip_base_hdr_size_`, default 40).
    pub header_bytes: u32,
    /// Size of the sink's ACKs in bytes (ns-2 `Agent/TCPSink` `packetSize_`, default 40).
    pub ack_size: u32,
    /// Model a 40-byte SYN as sequence number 0 (`syn_`, default true). The ns-2 Vegas agent
    /// never sends one; see [`TcpConfig::vegas_headers`].
    pub syn: bool,
    /// Hold the window at one packet until the first ACK (`delay_growth_`, default true).
    pub delay_growth: bool,
    /// Packets sent per ACK at most; 0 = unlimited (`maxburst_`).
    pub max_burst: u32,
    /// Duplicate ACKs that trigger fast retransmit (`numdupacks_`, default 3).
    pub dupacks: i64,
    /// Timer granularity in seconds (`tcpTick_`, default 0.01).
    pub tick: f64,
    /// Minimum RTO in seconds (`minrto_`, default 0.2).
    pub min_rto: f64,
    /// Maximum RTO in seconds (`maxrto_`, default 60).
    pub max_rto: f64,
    /// RTO before the first RTT sample, seconds (`rtxcur_init_`, default 3).
    pub initial_rto: f64,
    /// Send a new packet on the first and second duplicate ACK (`singledup_`, default on).
    pub limited_transmit: bool,
    /// Give ns-2 Vegas packets the TCP/IP header and SYN that Reno gets. Off by default:
    /// ns-2's Vegas agent sends exactly `packetSize_` bytes and no SYN.
    pub vegas_headers: bool,
    /// Offset of the sender's tick clock in seconds (ns-2 `boot_time_`, drawn uniformly in
    /// [0, tick) at reset): the value the sender runs with. The simulator fills it in when it
    /// creates the sender, from [`TcpConfig::tick_phase`]; as a scenario setting it is always 0.
    pub boot_time: f64,
    /// The scenario's `tcp.tick_phase`: the tick clock's phase in seconds, `0 <= phase < tick`,
    /// or `None` ("seeded", the default), in which case the simulator draws it uniformly in
    /// [0, tick) from the run seed, one draw per connection, as ns-2 draws `boot_time_` from
    /// its RNG. Set, the phase stays fixed whatever the seed and applies to every connection
    /// of the flow; the ns-2 bridge gives ns-2 the same value, drawn or set. Left out of the
    /// normalised scenario when seeded, so the results store's keys of earlier runs did not
    /// move.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tick_phase: Option<f64>,
    /// Which NewReno partial ACKs restart the retransmission timer: the first of a recovery
    /// only (ns-2's default, `newreno_changes1_ 1`; RFC 2582's "Impatient" variant), or
    /// every one (Linux, which re-arms the RTO whenever `snd_una` advances; RFC 6582's
    /// "Slow-but-Steady"). Left out of the normalised scenario at its default.
    #[serde(skip_serializing_if = "PartialAckTimer::is_first")]
    pub partial_ack_timer: PartialAckTimer,
    /// What a retransmission timeout does when nothing is outstanding (the sender sat idle
    /// past one RTO): ns-2's `slow_start_restart_`, default on. On, Reno and NewReno close
    /// the window to one packet and keep ssthresh (`restart_bugfix_`) and the Vegas agent
    /// restarts from 2 with ssthresh halved; off, the timeout leaves the window as it is (the
    /// Reno agents still re-arm the timer; the Vegas agent returns at once, as ns-2's
    /// `VegasTcpAgent::timeout` does), so an application that pauses keeps its window. Left
    /// out of the normalised scenario when on.
    #[serde(skip_serializing_if = "is_true")]
    pub slow_start_restart: bool,
    /// Whose TCP machinery runs the connection: ns-2's agents (the papers' simulator) or
    /// Linux's (SACK, RACK-TLP, PRR, Linux's RTO, delayed ACKs; [`crate::linux`]). Left out of
    /// the normalised scenario when ns-2's.
    #[serde(skip_serializing_if = "Stack::is_ns2")]
    pub stack: Stack,
    /// The Linux stack's switches (`tcp.linux`), present exactly when [`TcpConfig::stack`] is
    /// Linux.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub linux: Option<LinuxTcp>,
}

/// [`TcpConfig::stack`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Stack {
    /// ns-2.35's `Agent/TCP` family and `TCPSink`: one cumulative ACK per packet, no SACK.
    #[default]
    Ns2,
    /// Linux's TCP (6.x with its default sysctls), as [`crate::linux`] models it.
    Linux,
}

impl Stack {
    pub fn is_ns2(&self) -> bool {
        *self == Stack::Ns2
    }

    /// The scenario names, in the order the docs list them.
    pub const NAMES: [&'static str; 2] = ["ns2", "linux"];

    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "ns2" => Some(Stack::Ns2),
            "linux" => Some(Stack::Linux),
            _ => None,
        }
    }
}

/// The mechanisms of Linux's TCP that the Linux stack models, each a switch whose default is
/// what Linux does with its default sysctls, so that switching one off shows what it moves.
/// The scenario's `tcp.linux` table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct LinuxTcp {
    /// Selective acknowledgements (RFC 2018; `net.ipv4.tcp_sack = 1`): the receiver reports
    /// what arrived out of order, the sender keeps a scoreboard. Off: the receiver sends only
    /// cumulative ACKs and the sender counts duplicate ACKs (`tcp_add_reno_sack`).
    pub sack: bool,
    /// RACK-TLP loss detection (RFC 8985; `tcp_recovery = 1`, `tcp_early_retrans = 3`): a
    /// segment is lost when one sent later was delivered and a reordering window has passed,
    /// and a tail loss probe fires after two smoothed RTTs of silence. Off: a segment is lost
    /// once `dupacks` segments above it are delivered (RFC 6675's DupThresh), no probe.
    pub rack_tlp: bool,
    /// Proportional rate reduction in recovery (RFC 6937 with Linux's reduction bound,
    /// `tcp_cwnd_reduction`). Off: cwnd drops to ssthresh when recovery starts (RFC 5681).
    pub prr: bool,
    /// The receiver delays ACKs as Linux does (`__tcp_ack_snd_check`): an ACK for every second
    /// full segment, at once for out-of-order data and holes filled, 16 quick ACKs at the start,
    /// else after the delayed-ACK timer (40 ms at least, `TCP_DELACK_MIN`). Off: one ACK per
    /// segment.
    pub delayed_ack: bool,
    /// TCP timestamps (RFC 7323; `tcp_timestamps = 1`): an ACK of retransmitted data still
    /// gives an RTT sample, in whole milliseconds (`tcp_ack_update_rtt`); Karn's rule holds
    /// without them.
    pub timestamps: bool,
    /// Window growth only while the sender is limited by cwnd (`tcp_is_cwnd_limited`, read by
    /// `tcp_reno_cong_avoid`). Off: the window grows on every ACK, as in ns-2.
    pub cwnd_limited: bool,
    /// Restart from a smaller window after an idle period longer than the RTO (RFC 2861,
    /// `tcp_slow_start_after_idle = 1`, `tcp_cwnd_restart`).
    pub slow_start_after_idle: bool,
    /// Undo a reduction that proves spurious: an ACK echoing a timestamp older than the first
    /// retransmission (Eifel detection, RFC 3522; `tcp_packet_delayed`), or F-RTO's verdict
    /// after a timeout (RFC 5682, `tcp_frto = 2`), which also sends new data rather than
    /// retransmissions on the first ACK after a timeout.
    pub undo: bool,
}

impl Default for LinuxTcp {
    fn default() -> Self {
        LinuxTcp { sack: true, rack_tlp: true, prr: true, delayed_ack: true, timestamps: true, cwnd_limited: true, slow_start_after_idle: true, undo: true }
    }
}

impl LinuxTcp {
    /// The switches' scenario names, in the order the docs list them.
    pub const NAMES: [&'static str; 8] = ["sack", "rack_tlp", "prr", "delayed_ack", "timestamps", "cwnd_limited", "slow_start_after_idle", "undo"];
}

/// The `tcp` values that differ between the stacks when a scenario leaves them out: Linux's
/// are its compile-time constants and the testbed's set-up.
pub struct StackDefaults {
    /// Initial window (`TCP_INIT_CWND`, RFC 6928).
    pub window_init: f64,
    /// RTO before the first sample (`TCP_TIMEOUT_INIT`).
    pub initial_rto: f64,
    /// Largest RTO (`TCP_RTO_MAX`).
    pub max_rto: f64,
    /// Receiver window in packets: Linux's receive buffers grow (the testbed lets them reach
    /// 64 MiB), so no window a scenario here reaches limits a flow.
    pub window: f64,
    /// IPv4 + TCP headers with the timestamp option (20 + 20 + 12 bytes).
    pub header_bytes: u32,
    /// A pure ACK with the timestamp option; SACK blocks add to it per ACK.
    pub ack_size: u32,
}

impl Stack {
    /// The defaults of the values that depend on the stack ([`StackDefaults`]).
    pub fn defaults(self) -> StackDefaults {
        let d = TcpConfig::default();
        match self {
            Stack::Ns2 => StackDefaults { window_init: d.window_init, initial_rto: d.initial_rto, max_rto: d.max_rto, window: d.window, header_bytes: d.header_bytes, ack_size: d.ack_size },
            Stack::Linux => StackDefaults { window_init: 10.0, initial_rto: 1.0, max_rto: 120.0, window: 100_000.0, header_bytes: 52, ack_size: 52 },
        }
    }
}

/// [`TcpConfig::partial_ack_timer`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum PartialAckTimer {
    /// The first partial ACK of a recovery restarts the timer (ns-2.35's default).
    #[default]
    First,
    /// Every partial ACK restarts it (Linux).
    Every,
}

fn is_true(b: &bool) -> bool {
    *b
}

impl PartialAckTimer {
    pub fn is_first(&self) -> bool {
        *self == PartialAckTimer::First
    }

    /// The scenario names, in the order the docs list them.
    pub const NAMES: [&'static str; 2] = ["first", "every"];

    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "first" => Some(PartialAckTimer::First),
            "every" => Some(PartialAckTimer::Every),
            _ => None,
        }
    }
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            window: 20.0,
            window_init: 2.0,
            packet_size: 1000,
            header_bytes: 40,
            ack_size: 40,
            syn: true,
            delay_growth: true,
            max_burst: 0,
            dupacks: 3,
            tick: 0.01,
            min_rto: 0.2,
            max_rto: 60.0,
            initial_rto: 3.0,
            limited_transmit: true,
            vegas_headers: false,
            boot_time: 0.0,
            tick_phase: None,
            partial_ack_timer: PartialAckTimer::First,
            slow_start_restart: true,
            stack: Stack::Ns2,
            linux: None,
        }
    }
}

/// Which implementation's semantics a Vegas-family controller and its sender follow
/// (docs/vegas-implementations.md, "Linux and ns-3 Vegas"); the scenario's `params.flavour`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Flavour {
    /// ns-2's `Agent/TCP/Vegas` (the papers' simulator): mean RTT per round, every-other-round
    /// slow start, cwnd/8 exit, fine-grained retransmission and the 3/4 cut. Default.
    #[default]
    Ns2,
    /// Linux `tcp_vegas.c`: minimum RTT per round, integer diff, Reno below 3 samples; the
    /// variants' rules in integer kernel units (µs, whole packets). On Linux's stack by default
    /// ([`Stack`]), else on the NewReno sender.
    Linux,
    /// ns-3 `TcpVegas`: minimum RTT, diff = cwnd - floor(cwnd x base / rtt), NewReno below
    /// 3 samples.
    Ns3,
}

/// The flavours of the Vegas variants (Vegas-A, AdaVegas, Vegas_1/8, RoVegas): ns-2's Vegas
/// agent (the papers' form) or Linux's Vegas machinery; ns-3 has none of the variants.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum VariantFlavour {
    #[default]
    Ns2,
    Linux,
}

impl VariantFlavour {
    /// ns-2 is the default, left out of the normalised scenario (the variants gained a
    /// flavour later; their cache keys did not move).
    pub fn is_ns2(&self) -> bool {
        *self == VariantFlavour::Ns2
    }
}

impl From<VariantFlavour> for Flavour {
    fn from(f: VariantFlavour) -> Flavour {
        match f {
            VariantFlavour::Ns2 => Flavour::Ns2,
            VariantFlavour::Linux => Flavour::Linux,
        }
    }
}
