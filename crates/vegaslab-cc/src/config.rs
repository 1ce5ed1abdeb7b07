//! Sender configuration: ns-2's `Agent/TCP` defaults and the algorithm choice.

use serde::{Deserialize, Serialize};

pub use crate::adavegas::{AdaVegasParams, VegasIncParams};
pub use crate::vegas_a::{AtBeta, EqualThroughput, VegasAParams};

/// The `Agent/TCP` knobs that change results, with ns-2.35's defaults
/// (`shared/REFERENCE.md`, "ns-2 TCP defaults and conventions").
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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
    /// [0, tick) at reset). The simulator draws it from the run seed.
    pub boot_time: f64,
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
        }
    }
}

/// Which Vegas implementation to follow (`shared/REFERENCE.md`, "Linux and ns-3 Vegas").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum VegasFlavour {
    /// ns-2's `Agent/TCP/Vegas` (the papers' simulator): mean RTT per round, every-other-round
    /// slow start, cwnd/8 exit, fine-grained retransmission and the 3/4 cut. Default.
    #[default]
    Ns2,
    /// Linux `tcp_vegas.c`: minimum RTT per round, integer diff, Reno below 3 samples.
    Linux,
    /// ns-3 `TcpVegas`: minimum RTT, diff = cwnd - floor(cwnd x base / rtt), NewReno below
    /// 3 samples.
    Ns3,
}

/// Vegas thresholds, in packets.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct VegasParams {
    pub alpha: f64,
    pub beta: f64,
    pub gamma: f64,
    pub flavour: VegasFlavour,
}

impl VegasParams {
    /// The flavour's own defaults: ns-2 1/3/1, Linux and ns-3 2/4/1.
    pub fn defaults_for(flavour: VegasFlavour) -> Self {
        let (alpha, beta) = match flavour {
            VegasFlavour::Ns2 => (1.0, 3.0),
            VegasFlavour::Linux | VegasFlavour::Ns3 => (2.0, 4.0),
        };
        VegasParams { alpha, beta, gamma: 1.0, flavour }
    }
}

/// The congestion-control algorithm of one sender.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Algorithm {
    /// ns-2 `Agent/TCP/Reno`.
    Reno,
    /// ns-2 `Agent/TCP/Newreno` (RFC 2582, "careful" variant, partial window deflation).
    NewReno,
    /// Vegas in the chosen flavour.
    Vegas(VegasParams),
    /// RoVegas (rovegas.txt section 3): ns-2 Vegas whose rounds discount the queueing time
    /// that AQT-enabled routers report for the backward path.
    RoVegas(RoVegasParams),
    /// Vegas-A (vegas-a.txt section 3): ns-2 Vegas with alpha/beta adapted to the throughput
    /// trend.
    VegasA(VegasAParams),
    /// AdaVegas (adavegas.txt section III-B): ns-2 Vegas with the Table I adaptive increment.
    AdaVegas(AdaVegasParams),
    /// ns-2 Vegas with a fixed increment per round: adavegas.txt's Vegas_1 and Vegas_8.
    VegasInc(VegasIncParams),
}

/// RoVegas parameters.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct RoVegasParams {
    /// Thresholds, in packets (the paper: alpha 1, beta 3).
    pub alpha: f64,
    pub beta: f64,
    pub gamma: f64,
    /// Every n-th data packet carries the AQT option (1 = every packet, the default: the
    /// paper does not say how often RoVegas probes).
    pub probe_every: u32,
    /// Bytes the AQT IP option adds to a probing packet: type and length (1 byte each), AQT
    /// and AQT-echo (4 bytes each), padded to a 4-byte multiple = 12. The paper's Fig. 1 gives
    /// the fields but not their sizes.
    pub option_bytes: u32,
}

impl Default for RoVegasParams {
    fn default() -> Self {
        RoVegasParams { alpha: 1.0, beta: 3.0, gamma: 1.0, probe_every: 1, option_bytes: 12 }
    }
}

impl Algorithm {
    /// Short name used in results tables.
    pub fn name(&self) -> &'static str {
        match self {
            Algorithm::Reno => "reno",
            Algorithm::NewReno => "newreno",
            Algorithm::Vegas(_) => "vegas",
            Algorithm::RoVegas(_) => "rovegas",
            Algorithm::VegasA(_) => "vegas-a",
            Algorithm::AdaVegas(_) => "adavegas",
            Algorithm::VegasInc(p) => p.name(),
        }
    }
}
