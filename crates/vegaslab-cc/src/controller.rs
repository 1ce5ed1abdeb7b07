//! The congestion-control interface: one trait with the hooks of Linux's
//! `struct tcp_congestion_ops` (`include/net/tcp.h`), driven without I/O.
//!
//! A sender ([`crate::tcp_agent`] or [`crate::vegas_agent`]) owns sequence numbers, timers,
//! retransmission and loss recovery; a controller owns the window decisions. The sender calls
//! the hooks at the points Linux calls the same-named operations, with `now` and the
//! measurements passed in; the controller changes only [`Window::cwnd`] and
//! [`Window::ssthresh`] (the sender copies them back after the call).
//!
//! | hook | Linux op | called by the senders when |
//! |---|---|---|
//! | [`init`](CongestionControl::init) | `init` | the sender is created |
//! | [`pkts_acked`](CongestionControl::pkts_acked) | `pkts_acked` | an ACK gives an RTT sample (a packet sent once, Karn) |
//! | [`cong_avoid`](CongestionControl::cong_avoid) | `cong_avoid` | a new cumulative ACK outside loss recovery |
//! | [`ssthresh`](CongestionControl::ssthresh) | `ssthresh` | a loss is detected (fast retransmit or timeout) |
//! | [`set_state`](CongestionControl::set_state) | `set_state` | recovery is entered or left |
//! | [`cwnd_event`](CongestionControl::cwnd_event) | `cwnd_event` | the first ACK; sending resumes after idle |
//! | [`undo_cwnd`](CongestionControl::undo_cwnd) | `undo_cwnd` | never by the ns-2 senders (neither models spurious-loss undo); the decision vectors and the kernel ports |
//!
//! Two hooks exist for what Linux does elsewhere: [`tag_segment`](CongestionControl::tag_segment)
//! (RoVegas asks routers to stamp queueing times into chosen packets: the RoVegas paper, Chan
//! et al., "Design and performance evaluation of an improved TCP congestion avoidance scheme",
//! section 3)
//! and [`variables`](CongestionControl::variables) (the algorithm's own variables for the
//! time series). The ns-2 Vegas agent's fine-grained retransmission on duplicate ACKs is the
//! agent's (a sender), which tells the controller through `set_state`.
//!
//! Call order on a new ACK differs between the two senders, as it does between ns-2 and
//! Linux: the ns-2 Reno/NewReno agent and Linux's stack ([`crate::linux`]) call `pkts_acked` before
//! `cong_avoid`; ns-2's Vegas agent ends the round in `cong_avoid` first and adds the ACK's
//! sample after (`VegasTcpAgent::recv`).

use crate::Nanos;
use std::any::Any;
use std::fmt;

/// The part of the sender a controller reads and changes. Windows count packets: ns-2 keeps
/// fractions of a packet in `cwnd`; the Linux-flavour controllers keep it whole.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Window {
    /// Congestion window, packets (written back by the sender).
    pub cwnd: f64,
    /// Slow-start threshold, packets (written back by the sender).
    pub ssthresh: i64,
    /// Next sequence number to send (ns-2 `t_seqno_`, Linux `snd_nxt`); read only.
    pub next_seq: i64,
    /// Highest cumulatively acknowledged sequence number (ns-2 `last_ack_`; Linux
    /// `snd_una - 1`); read only.
    pub last_ack: i64,
    /// Receiver window, packets (ns-2 `window_`, Linux `snd_cwnd_clamp`); read only.
    pub max_window: f64,
    /// Whether the sender is limited by cwnd rather than by the application or the receiver
    /// window (Linux `tcp_is_cwnd_limited`, `include/net/tcp.h`): Linux's Reno increase
    /// (`tcp_reno_cong_avoid`, also Vegas' fallback) and CUBIC's `bictcp_cong_avoid` return
    /// early otherwise; `tcp_vegas_cong_avoid`'s own rounds and slow start do not ask. ns-2's
    /// senders grow regardless and always say `true`; the
    /// Linux sender computes it (`crate::linux`). Read only.
    pub cwnd_limited: bool,
}

impl Window {
    /// cwnd < ssthresh (`tcp_in_slow_start`).
    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh as f64
    }

    /// Packets sent and not yet cumulatively acknowledged.
    pub fn in_flight(&self) -> i64 {
        self.next_seq - self.last_ack
    }
}

/// A new cumulative ACK, as `cong_avoid` sees it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ack {
    /// The highest in-order sequence number received.
    pub seqno: i64,
    /// Packets this ACK newly acknowledges (Linux's `acked`).
    pub acked: i64,
    pub now: Nanos,
    /// Seconds since the sender's first packet (ns-2's Vegas clock, `vegastime()`).
    pub elapsed: f64,
}

/// Queueing times reported by AQT-enabled routers (the RoVegas paper, section 3), seconds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct QueueingTimes {
    /// AQT of the ACK: queueing on the backward path (receiver to sender).
    pub backward: f64,
    /// AQT-echo: queueing the acknowledged data packet met on the forward path.
    pub forward: f64,
}

/// One RTT sample (`struct ack_sample` in Linux).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RttSample {
    /// When the ACK arrived.
    pub now: Nanos,
    /// Seconds (ns-2's agents measure in floating-point seconds).
    pub rtt: f64,
    /// Present when the ACK carried router-reported queueing times (RoVegas probes).
    pub queueing: Option<QueueingTimes>,
}

impl RttSample {
    /// The sample in whole microseconds, as Linux's `rtt_us` (truncated; negative stays
    /// negative, which Linux treats as "no sample").
    pub fn rtt_us(&self) -> i64 {
        (self.rtt * 1e6) as i64
    }
}

/// What detected a loss.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LossKind {
    /// The `numdupacks_`-th duplicate ACK (Linux: entering `TCP_CA_Recovery`).
    FastRetransmit,
    /// The retransmission timer fired with data outstanding (`TCP_CA_Loss`).
    Timeout,
}

/// A loss, as `ssthresh` sees it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Loss {
    pub kind: LossKind,
    /// The window the reduction starts from: cwnd plus any duplicate-ACK inflation, capped
    /// by the receiver window (ns-2's `windowd()`).
    pub window: f64,
}

/// The window after a loss: the new ssthresh and the cwnd to continue from. Linux's
/// `ssthresh` op returns only the threshold; the cwnd is here because the three simulators
/// differ there (ns-2: half the window, unrounded, or 1 after a timeout; ns-3 Vegas: cwnd =
/// ssthresh).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cut {
    pub ssthresh: i64,
    pub cwnd: f64,
}

impl Cut {
    /// ns-2's `slowdown()` with `precisionReduce_` and `decrease_num_` 0.5: ssthresh = half
    /// the window (at least 2); cwnd = half the window after a fast retransmit, 1 after a
    /// timeout. Reno's and NewReno's reduction, and the default of [`CongestionControl::ssthresh`].
    pub fn ns2_halving(loss: &Loss) -> Cut {
        let half = loss.window / 2.0;
        let cwnd = match loss.kind {
            LossKind::FastRetransmit => half,
            LossKind::Timeout => 1.0,
        };
        Cut { ssthresh: (half as i64).max(2), cwnd }
    }

    /// The given ssthresh, with cwnd continuing from it after a fast retransmit (where Linux's
    /// and ns-3's recovery end) or from one packet after a timeout.
    pub fn from_ssthresh(ssthresh: i64, loss: &Loss) -> Cut {
        let cwnd = match loss.kind {
            LossKind::FastRetransmit => ssthresh as f64,
            LossKind::Timeout => 1.0,
        };
        Cut { ssthresh, cwnd }
    }
}

/// Loss-recovery states the senders report (Linux `tcp_ca_state`; ns-2's senders have Open,
/// Recovery and Loss).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaState {
    /// Normal operation; entered again when recovery ends.
    Open,
    /// Something is SACKed, lost or retransmitted but no loss is declared yet (the Linux
    /// stack only).
    Disorder,
    /// A one-time reduction without recovery: a tail loss probe repaired a loss (the Linux
    /// stack only).
    Cwr,
    /// Fast retransmit / fast recovery (the ns-2 Vegas agent: a fine-grained retransmission cut).
    Recovery,
    /// After a retransmission timeout.
    Loss,
}

/// Events outside the ACK path (Linux `tcp_ca_event`, plus ns-2 Vegas' first ACK).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CwndEvent {
    /// The first ACK of the connection, `elapsed` seconds after the first packet was sent
    /// (ns-2's Vegas agent initialises its RTT state from it).
    FirstAck { elapsed: f64 },
    /// Sending new data with nothing in flight (`CA_EVENT_TX_START`); `last_send` is when the
    /// sender last transmitted (Linux's `lsndtime`), so `now - last_send` is the idle time.
    TxStart { now: Nanos, last_send: Nanos },
    /// The window restarts after an idle period longer than the RTO (`CA_EVENT_CWND_RESTART`,
    /// RFC 2861; the Linux stack only).
    CwndRestart,
}

/// Copying and inspecting a boxed controller; implemented for every `Clone` controller.
pub trait ControllerBase {
    /// A boxed copy (a sender is `Clone`).
    fn clone_box(&self) -> Box<dyn CongestionControl>;
    /// For tests and tools: `as_any().downcast_ref::<T>()`.
    fn as_any(&self) -> &dyn Any;
}

impl<T: CongestionControl + Clone + 'static> ControllerBase for T {
    fn clone_box(&self) -> Box<dyn CongestionControl> {
        Box::new(self.clone())
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// ns-2 `opencwnd` with `windowOption_ 1`: +1 per ACK below ssthresh, else +1/cwnd. Reno's
/// window rule (`reno`), also the fallback of the Linux and ns-3 Vegas flavours
/// (`tcp_reno_cong_avoid`). Here rather than in `reno`, so that a sender may apply it itself
/// ([`CongestionControl::cong_avoid_is_opencwnd`]) without naming an algorithm's module.
pub fn opencwnd(w: &mut Window) {
    if w.cwnd < w.ssthresh as f64 {
        w.cwnd += 1.0;
    } else {
        w.cwnd += 1.0 / w.cwnd;
    }
}

/// A congestion controller (derive `Clone`; [`ControllerBase`] comes with it). See the module
/// docs for when each hook is called. Every hook but `name` and `cong_avoid` has a default
/// that does nothing (or ns-2's Reno reduction, for `ssthresh`).
pub trait CongestionControl: ControllerBase + fmt::Debug + Send {
    /// The `cc` name shown in results.
    fn name(&self) -> &'static str;

    /// The connection starts (`init`); may set the initial window.
    fn init(&mut self, _w: &mut Window) {}

    /// An RTT sample from an ACK (`pkts_acked`); may change the window, as Linux's HyStart
    /// sets ssthresh here.
    fn pkts_acked(&mut self, _w: &mut Window, _sample: &RttSample) {}

    /// A new cumulative ACK outside loss recovery (`cong_avoid`): grow (or shrink) the window.
    fn cong_avoid(&mut self, w: &mut Window, ack: &Ack);

    /// Whether `pkts_acked` uses RTT samples. Default `true`; a controller that keeps the
    /// default `pkts_acked` (which ignores them) may answer `false`, and a sender then need
    /// not take samples for it (`TcpAgent::set_sampling`). Not a Linux op.
    fn uses_rtt_samples(&self) -> bool {
        true
    }

    /// Whether `cong_avoid` is ns-2's `opencwnd` ([`opencwnd`]) and nothing else,
    /// reading no state of the controller's and keeping none: a sender may then apply that
    /// rule itself instead of calling `cong_avoid` (`TcpAgent`'s new ACK). Default `false`.
    /// Not a Linux op.
    fn cong_avoid_is_opencwnd(&self) -> bool {
        false
    }

    /// A loss (`ssthresh`): the reduced window. Default: ns-2's halving ([`Cut::ns2_halving`]).
    fn ssthresh(&mut self, _w: &Window, loss: &Loss) -> Cut {
        Cut::ns2_halving(loss)
    }

    /// The sender entered or left loss recovery (`set_state`).
    fn set_state(&mut self, _w: &Window, _state: CaState) {}

    /// An event outside the ACK path (`cwnd_event`).
    fn cwnd_event(&mut self, _w: &mut Window, _event: CwndEvent) {}

    /// The window to restore when a loss proves spurious (`undo_cwnd`). Default: keep the
    /// current one. The simulated senders never call it (neither models DSACK/Eifel undo).
    fn undo_cwnd(&mut self, w: &Window) -> f64 {
        w.cwnd
    }

    /// A data segment is about to be sent: `Some(bytes)` makes it a router-assist probe
    /// carrying an IP option of that many bytes (RoVegas' AQT option); default `None`.
    fn tag_segment(&mut self) -> Option<u32> {
        None
    }

    /// The algorithm's own variables (name, value) for the time series, appended to `out`. A
    /// name is a column name: a time ends in `_s` (`base_rtt_s`), while the papers' parameters
    /// keep the papers' names (`alpha`, `beta`, `inc`: packets; docs/results-format.md).
    fn variables(&self, _out: &mut Vec<(&'static str, f64)>) {}

    /// ns-2-flavour Vegas: how often delta's rounding sat on a decision boundary
    /// ([`TieStats`]); `None` for every other algorithm.
    fn threshold_ties(&self) -> Option<TieStats> {
        None
    }
}

impl Clone for Box<dyn CongestionControl> {
    fn clone(&self) -> Self {
        self.clone_box()
    }
}

/// How often a once-per-round decision sat exactly on delta's rounding boundary.
///
/// ns-2 rounds delta as `int(x + 0.5)` with `x = (expected - actual) x baseRTT`. When the
/// exact value of `x + 0.5` is a whole number `k` other than 0, the last bit of a double
/// decides between delta = k and k - 1 (k > 0; k and k + 1 for k < 0: ns-2 truncates toward
/// zero, so 0 is no boundary), and ns-2 (whose clock accumulates double-precision sums) and this
/// simulator (integer nanoseconds, converted to seconds) can land on different sides. Such
/// a round is a *tie*; it is *decisive* when the rule (or slow start's `delta > gamma`)
/// acts differently for the two values.
///
/// A tie is judged exactly on the integer-nanosecond timeline (a cross-multiplication in
/// i128), since a double's clock noise hides most ties (docs/decisions.md, "Vegas ties are
/// judged in exact arithmetic"). `near`, a tolerance count on the double, checks the exact
/// one. RoVegas rounds that subtract router queueing times count in `near` only.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TieStats {
    /// Rounds whose delta decided something: acting slow-start rounds and every
    /// congestion-avoidance round (rtt > 0).
    pub decisions: u64,
    /// Decisions where `x + 0.5` is exactly a whole number (not 0) on the integer-ns timeline.
    pub exact: u64,
    /// Decisions where the double `x + 0.5` is within [`crate::vegas_ns2::TIE_EPSILON`] of a
    /// whole number (not 0).
    pub near: u64,
    /// Exact ties at which delta on the other side of the boundary changes the action.
    pub decisive: u64,
}

impl std::ops::Add for TieStats {
    type Output = TieStats;
    fn add(self, o: TieStats) -> TieStats {
        TieStats { decisions: self.decisions + o.decisions, exact: self.exact + o.exact, near: self.near + o.near, decisive: self.decisive + o.decisive }
    }
}

impl std::iter::Sum for TieStats {
    fn sum<I: Iterator<Item = TieStats>>(iter: I) -> TieStats {
        iter.fold(TieStats::default(), |a, b| a + b)
    }
}
