//! Sans-IO TCP senders and congestion controllers for vegaslab.
//!
//! Nothing in this crate reads a clock or touches a network: every entry point takes `now`
//! (integer nanoseconds of simulated time) and the measurements it needs, and the sender
//! reports what it wants transmitted through [`Sender::drain_segments`] and when it wants to
//! be woken through [`Sender::rtx_deadline`]. The simulator (`vegaslab-sim`) and, later, the
//! BPF ports drive the same code.
//!
//! The reference semantics are ns-2.35's one-way TCP agents (`Agent/TCP/Reno`,
//! `Agent/TCP/Newreno`, `Agent/TCP/Vegas`), which every paper in this project used, and
//! Linux's and ns-3's Vegas as flavours; see docs/vegas-implementations.md.
//!
//! # Module graph
//!
//! Each module uses only those on the lines below it (arrows name them); there is no cycle
//! (`tests/module_graph.rs` checks it from the sources). The algorithms are leaves that only
//! the registry list ([`ALGORITHMS`], in this file) names: no sender names an algorithm and
//! no algorithm names a sender, so a new algorithm is one file, its `pub mod` line and its
//! registry entry here.
//!
//! ```text
//! sender                          -> registry, tcp_agent, vegas_agent, state
//! registry                        -> ALGORITHMS (lib.rs) -> reno, vegas, vegas_a, adavegas,
//!                                                           rovegas, cubic   (algorithms)
//!   vegas_a, adavegas, rovegas    -> vegas, vegas_ns2, vegas_linux, heuristics
//!   vegas                         -> vegas_ns2, vegas_linux, vegas_ns3, heuristics
//!   vegas_ns3                     -> reno
//!   reno, cubic, vegas_ns2, vegas_linux                         (the interface only)
//! registry                        -> external                   (controllers a host builds)
//! registry                        -> bpf_record                 (BPF objects, as recorded)
//! tcp_agent, vegas_agent          -> state -> rto                          (senders)
//! controller, params, heuristics, config                                (the interface)
//! ```
//!
//! - [`controller`]: the congestion-control trait ([`controller::CongestionControl`]), shaped
//!   like Linux's `tcp_congestion_ops`, and what its hooks see.
//! - [`params`]: what an algorithm gives the registry: parameters, reader, sender kind.
//! - [`config`]: the ns-2 `Agent/TCP` knobs ([`TcpConfig`]) and the [`Flavour`].
//! - [`state`]: the shared sender state (ns-2 `TcpAgent` variables); [`rto`]: ns-2's
//!   coarse-grained retransmission-timeout estimator.
//! - Senders (loss recovery, driving any controller): [`tcp_agent`] (ns-2 Reno/NewReno
//!   recovery; in NewReno mode also the ns-3 flavour's), [`vegas_agent`] (ns-2's Vegas agent,
//!   fine-grained retransmission), [`linux`] (Linux's TCP stack: SACK, RACK-TLP, PRR, Linux's
//!   RTO); [`sender`]: the [`Sender`] that joins them.
//! - Algorithms, one file each: [`reno`] (Reno, NewReno), [`vegas`] (Vegas in the ns2, linux
//!   and ns3 flavours), [`vegas_a`] (Vegas-A), [`adavegas`] (AdaVegas, Vegas_1, Vegas_8),
//!   [`rovegas`] (RoVegas), [`cubic`] (CUBIC with HyStart); the Vegas machinery they share
//!   per flavour: [`vegas_ns2`], [`vegas_linux`], [`vegas_ns3`]; [`heuristics`]:
//!   Weigle-Feng alpha/beta settings and reading alpha/beta from params.
//! - [`registry`]: scenario names to algorithms ([`AlgorithmSpec`]); the list itself is
//!   [`ALGORITHMS`], here.
//! - [`external`]: controllers written outside the crate (`cc = "py:package.module:Class"`),
//!   built by a host the running program supplies ([`external::ExternalControllers`]).
//! - [`bpf_record`]: a compiled BPF struct_ops object named by a scenario (`cc = { bpf =
//!   "algo.bpf.o" }`), as the normalised scenario records it; the `vegaslab-bpf` crate runs it.

// The interface, the senders and the Vegas machinery.
pub mod bpf_record;
pub mod config;
pub mod controller;
pub mod external;
pub mod heuristics;
pub mod linux;
pub mod params;
pub mod registry;
pub mod rto;
pub mod sender;
pub mod state;
pub mod tcp_agent;
pub mod vegas_agent;
pub mod vegas_linux;
pub mod vegas_ns2;
pub mod vegas_ns3;

// The algorithms, one file each, and the registry's list of them: adding an algorithm is its
// file, its `pub mod` line and its entry below, and its tests.
pub mod adavegas;
pub mod cubic;
pub mod reno;
pub mod rovegas;
pub mod vegas;
pub mod vegas_a;

use registry::{Entry, LinuxForm};

/// Every algorithm a scenario may name, in the order error messages list them.
pub static ALGORITHMS: &[Entry] = &[
    Entry {
        name: "reno",
        tag: "Reno",
        unit: true,
        read: reno::read_reno,
        params: reno::params,
        display: "Reno",
        about: "TCP Reno (RFC 5681), as ns-2's Agent/TCP/Reno",
        linux: LinuxForm::Kernel("reno"),
        schema: registry::schema_of::<reno::RenoParams>,
    },
    Entry {
        name: "newreno",
        tag: "NewReno",
        unit: true,
        read: reno::read_newreno,
        params: reno::params,
        display: "NewReno",
        about: "TCP NewReno (RFC 6582), as ns-2's Agent/TCP/Newreno",
        linux: LinuxForm::Kernel("reno"),
        schema: registry::schema_of::<reno::RenoParams>,
    },
    Entry {
        name: "vegas",
        tag: "Vegas",
        unit: false,
        read: vegas::read,
        params: vegas::params,
        display: "Vegas",
        about: "TCP Vegas (Brakmo and Peterson 1995) in the ns-2, Linux and ns-3 flavours",
        linux: LinuxForm::Flavour,
        schema: registry::schema_of::<vegas::VegasParams>,
    },
    Entry {
        name: "rovegas",
        tag: "RoVegas",
        unit: false,
        read: rovegas::read,
        params: rovegas::params,
        display: "RoVegas",
        about: "RoVegas: Vegas that discounts backward-path queueing stamped by routers (the RoVegas paper)",
        linux: LinuxForm::Flavour,
        schema: registry::schema_of::<rovegas::RoVegasParams>,
    },
    Entry {
        name: "vegas-a",
        tag: "VegasA",
        unit: false,
        read: vegas_a::read,
        params: vegas_a::params,
        display: "Vegas-A",
        about: "Vegas-A: alpha and beta adapt with the throughput trend (the Vegas-A paper, section 3)",
        linux: LinuxForm::Flavour,
        schema: registry::schema_of::<vegas_a::VegasAParams>,
    },
    Entry {
        name: "adavegas",
        tag: "AdaVegas",
        unit: false,
        read: adavegas::read,
        params: adavegas::params,
        display: "AdaVegas",
        about: "AdaVegas: increment, alpha and beta from the count of successive increases (the AdaVegas paper, Table I)",
        linux: LinuxForm::Flavour,
        schema: registry::schema_of::<adavegas::AdaVegasParams>,
    },
    Entry {
        name: "vegas_1",
        tag: "VegasInc",
        unit: false,
        read: adavegas::read_vegas_1,
        params: adavegas::params,
        display: "Vegas_1",
        about: "Vegas_1: the AdaVegas paper's fixed-increment Vegas preset with increment 1 (section II)",
        linux: LinuxForm::Flavour,
        schema: registry::schema_of::<adavegas::VegasIncParams>,
    },
    Entry {
        name: "vegas_8",
        tag: "VegasInc",
        unit: false,
        read: adavegas::read_vegas_8,
        params: adavegas::params,
        display: "Vegas_8",
        about: "Vegas_8: the AdaVegas paper's fixed-increment Vegas preset with increment 8 (section II)",
        linux: LinuxForm::Flavour,
        schema: registry::schema_of::<adavegas::VegasIncParams>,
    },
    Entry {
        name: "cubic",
        tag: "Cubic",
        unit: false,
        read: cubic::read,
        params: cubic::params,
        display: "CUBIC",
        about: "CUBIC with HyStart (RFC 9438), as Linux's tcp_cubic.c",
        linux: LinuxForm::Native("cubic"),
        schema: registry::schema_of::<cubic::CubicParams>,
    },
];

pub use config::{Flavour, PartialAckTimer, TcpConfig};
pub use registry::{spec, AlgorithmSpec};
pub use sender::{AckInfo, QueueingTimes, Segment, Sender, SenderStats};

/// Simulated time in integer nanoseconds.
pub type Nanos = u64;

/// Nanoseconds to seconds, the unit ns-2's agents compute in.
#[inline]
pub fn secs(t: Nanos) -> f64 {
    t as f64 * 1e-9
}

/// Seconds to the nearest nanosecond (never negative; halves round up).
#[inline]
pub fn nanos(s: f64) -> Nanos {
    if s <= 0.0 {
        0
    } else {
        (s * 1e9 + 0.5) as Nanos
    }
}
