//! Sans-IO TCP senders and congestion controllers for vegaslab.
//!
//! Nothing in this crate reads a clock or touches a network: every entry point takes `now`
//! (integer nanoseconds of simulated time) and the measurements it needs, and the sender
//! reports what it wants transmitted through [`Sender::drain_segments`] and when it wants to
//! be woken through [`Sender::rtx_deadline`]. The simulator (`vegaslab-sim`) and, later, the
//! BPF ports drive the same code.
//!
//! The reference semantics are ns-2.35's one-way TCP agents (`Agent/TCP/Reno`,
//! `Agent/TCP/Newreno`, `Agent/TCP/Vegas`), which every paper in this project used; see
//! `shared/REFERENCE.md`. Module map:
//!
//! - [`config`]: the ns-2 `Agent/TCP` knobs ([`TcpConfig`]) and algorithm choice ([`Algorithm`]).
//! - [`rto`]: ns-2's coarse-grained (tick-based) retransmission-timeout estimator.
//! - [`sender`]: the shared sender machinery (ns-2 `TcpAgent`): windows, sending, new ACKs,
//!   window reductions, the retransmission timer.
//! - [`reno`]: Reno and NewReno (RFC 2582) loss recovery as ns-2 implements them.
//! - [`vegas`]: the ns-2 Vegas agent (rounds, fine-grained retransmission, 3/4 cut) with a
//!   pluggable once-per-round rule ([`vegas::VegasRule`]).
//! - [`vegas_a`], [`adavegas`]: Vegas-A and AdaVegas (with Vegas_1/Vegas_8) as
//!   [`vegas::Rule`]s of the ns-2 agent; [`heuristics`]: Weigle-Feng alpha/beta settings.
//! - [`vegas_linux`], [`vegas_ns3`]: the Linux and ns-3 Vegas flavours, which ride on
//!   NewReno loss recovery.

pub mod adavegas;
pub mod config;
pub mod heuristics;
pub mod reno;
pub mod rto;
pub mod sender;
pub mod vegas;
pub mod vegas_a;
pub mod vegas_linux;
pub mod vegas_ns3;

pub use config::{Algorithm, RoVegasParams, TcpConfig, VegasFlavour, VegasParams};
pub use config::{AdaVegasParams, AtBeta, EqualThroughput, VegasAParams, VegasIncParams};
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
