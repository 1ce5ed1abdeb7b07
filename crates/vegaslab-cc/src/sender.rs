//! A one-way TCP sender: the shared state ([`crate::state`]), a loss-recovery machine
//! (ns-2's `TcpAgent` Reno/NewReno recovery, [`crate::tcp_agent`], or ns-2's Vegas agent,
//! [`crate::vegas_agent`]) and a congestion controller
//! ([`crate::controller::CongestionControl`]) that the recovery machine drives. Which
//! recovery machine an algorithm gets is its parameters' [`SenderKind`].

use crate::config::{Stack, TcpConfig};
use crate::controller::CongestionControl;
use crate::params::SenderKind;
use crate::registry::AlgorithmSpec;
pub use crate::state::{AckInfo, CwndAction, QueueingTimes, Segment, SenderState, SenderStats, MAX_SEQ};
use crate::linux::LinuxAgent;
use crate::tcp_agent::TcpAgent;
use crate::vegas_agent::VegasAgent;
use crate::{secs, Nanos};

/// The loss-recovery machine of a sender.
#[derive(Clone, Debug)]
enum Recovery {
    TcpAgent(TcpAgent),
    VegasAgent(Box<VegasAgent>),
    Linux(Box<LinuxAgent>),
}

/// A one-way TCP sender: shared state, its loss-recovery machine and its controller.
///
/// In C order: the controller and the recovery machine, which every ACK reads,
/// fill the first 64 bytes, so that the state's lines ([`SenderState`]) start on a line
/// boundary when the sender does (vegaslab-sim's `Flow` places it so).
#[derive(Clone, Debug)]
#[repr(C)]
pub struct Sender {
    cc: Box<dyn CongestionControl>,
    recovery: Recovery,
    pub state: SenderState,
    /// [`Sender::set_rtt_samples_read`].
    samples_read: bool,
}

const _: () = assert!(std::mem::offset_of!(Sender, state) == 64);

impl Sender {
    /// The sender and controller of a registered algorithm: Linux's machinery on Linux's stack
    /// (`tcp.stack`), else the algorithm's own sender, where a Linux-flavour algorithm takes the
    /// NewReno sender (its ns-2-stack form).
    pub fn new(cfg: TcpConfig, algorithm: AlgorithmSpec) -> Self {
        let cc = algorithm.controller(&cfg);
        let kind = match (cfg.stack, algorithm.sender()) {
            (Stack::Linux, _) => SenderKind::Linux,
            (Stack::Ns2, SenderKind::Linux) => SenderKind::TcpAgent { newreno: true },
            (Stack::Ns2, kind) => kind,
        };
        let mut sender = Self::with_controller(cfg, kind, cc);
        // Only a router-assist algorithm's controller tags segments (`SenderState::tag`).
        sender.state.router_assist = algorithm.router_assist().is_some();
        sender
    }

    /// A sender of the given kind driving any controller (tests, tools, new algorithms).
    pub fn with_controller(cfg: TcpConfig, kind: SenderKind, mut cc: Box<dyn CongestionControl>) -> Self {
        let mut state = SenderState::new(cfg);
        let recovery = match kind {
            SenderKind::TcpAgent { newreno } => {
                let mut agent = TcpAgent::new(newreno);
                agent.set_opencwnd(cc.cong_avoid_is_opencwnd());
                Recovery::TcpAgent(agent)
            }
            SenderKind::VegasAgent => Recovery::VegasAgent(Box::default()),
            SenderKind::Linux => {
                state.ssthresh = LinuxAgent::INITIAL_SSTHRESH;
                let opts = state.cfg.linux.unwrap_or_default();
                Recovery::Linux(Box::new(LinuxAgent::new(opts, &state)))
            }
        };
        let mut w = state.window();
        cc.init(&mut w);
        state.apply(&w);
        state.track_slow_start();
        Sender { state, recovery, cc, samples_read: true }
    }

    /// Whether anything reads [`SenderState::last_rtt_sample`] (a monitor's RTT series); it is
    /// assumed so until told otherwise. When nothing does and the controller uses no RTT
    /// samples ([`CongestionControl::uses_rtt_samples`]), the Reno-family sender takes none
    /// (`TcpAgent::set_sampling`): results are the same, with less work per packet and ACK.
    /// Call before the first packet.
    pub fn set_rtt_samples_read(&mut self, read: bool) {
        self.samples_read = read;
        let sampling = read || self.cc.uses_rtt_samples();
        if let Recovery::TcpAgent(r) = &mut self.recovery {
            r.set_sampling(sampling);
        }
    }

    /// What [`Sender::set_rtt_samples_read`] was told (`true` by default).
    pub fn rtt_samples_read(&self) -> bool {
        self.samples_read
    }

    /// Which recovery machine drives the controller.
    pub fn kind(&self) -> SenderKind {
        match &self.recovery {
            Recovery::TcpAgent(t) => SenderKind::TcpAgent { newreno: t.is_newreno() },
            Recovery::VegasAgent(_) => SenderKind::VegasAgent,
            Recovery::Linux(_) => SenderKind::Linux,
        }
    }

    /// A full data packet's bytes on the wire and the header bytes among them, as the agents'
    /// `output` sizes it: payload plus `tcp.header_bytes`, except ns-2's Vegas agent, which
    /// sends exactly `packetSize_` (no header) unless `tcp.vegas_headers`. A SYN and the
    /// RoVegas option are apart.
    pub fn data_wire_bytes(&self) -> (u32, u32) {
        let c = &self.state.cfg;
        let header = match self.kind() {
            SenderKind::VegasAgent if !c.vegas_headers => 0,
            _ => c.header_bytes,
        };
        (c.packet_size + header, header)
    }

    /// The controller (for tests and tools: `controller().as_any().downcast_ref::<T>()`).
    pub fn controller(&self) -> &dyn CongestionControl {
        &*self.cc
    }

    /// The ns-2 Vegas agent's recovery state, if this sender is one.
    pub fn vegas_agent(&self) -> Option<&VegasAgent> {
        match &self.recovery {
            Recovery::VegasAgent(v) => Some(v),
            _ => None,
        }
    }

    /// The Linux machinery, if this sender runs on Linux's stack.
    pub fn linux_agent(&self) -> Option<&LinuxAgent> {
        match &self.recovery {
            Recovery::Linux(l) => Some(l),
            _ => None,
        }
    }

    /// Reno-family window inflation during fast recovery (ns-2 `dupwnd_`), if a `TcpAgent`.
    pub fn dupwnd(&self) -> Option<i64> {
        match &self.recovery {
            Recovery::TcpAgent(t) => Some(t.dupwnd),
            _ => None,
        }
    }

    /// The application hands over `packets` more packets (`None`: infinite, an FTP source),
    /// with the sender's clock read as the integer time (see [`Sender::app_send_at`]).
    pub fn app_send(&mut self, now: Nanos, packets: Option<i64>) {
        self.app_send_at(now, secs(now), packets)
    }

    /// [`Sender::app_send`] at `now` whose clock in seconds is `clock`
    /// ([`SenderState::clock`]: the simulator passes ns-2's double-precision time, or the
    /// integer time in seconds, as its `run.clock` says). The `_at` entry points are the
    /// simulator's; the plain ones, for tests and tools, read the clock as `secs(now)`.
    pub fn app_send_at(&mut self, now: Nanos, clock: f64, packets: Option<i64>) {
        self.state.clock = clock;
        match packets {
            None => {
                if self.state.curseq <= MAX_SEQ {
                    self.state.curseq = MAX_SEQ;
                }
            }
            Some(n) => {
                self.state.curseq += n;
                if n > 0 {
                    self.state.closed = false;
                }
            }
        }
        let burst = self.state.cfg.max_burst;
        self.send_much(now, burst);
        self.state.track_slow_start();
    }

    /// The application stops: no new data beyond what was already sent.
    pub fn app_stop(&mut self) {
        let s = &mut self.state;
        if s.curseq > s.t_seqno {
            s.curseq = s.t_seqno.max(s.maxseq + 1);
        }
    }

    /// An ACK arrives (the clock read as the integer time, see [`Sender::app_send_at`]).
    pub fn on_ack(&mut self, now: Nanos, ack: &AckInfo) {
        self.on_ack_at(now, secs(now), ack)
    }

    /// An ACK arrives at `now`, whose clock in seconds is `clock`.
    pub fn on_ack_at(&mut self, now: Nanos, clock: f64, ack: &AckInfo) {
        self.state.clock = clock;
        self.state.stats.acks_received += 1;
        let cc = &mut *self.cc;
        match &mut self.recovery {
            Recovery::TcpAgent(r) => r.recv(&mut self.state, cc, now, ack),
            Recovery::VegasAgent(v) => v.recv(&mut self.state, cc, now, ack),
            Recovery::Linux(l) => l.recv(&mut self.state, cc, now, ack),
        }
        self.state.track_slow_start();
    }

    /// The retransmission timer fired (the caller checks `now >= rtx_deadline`), the clock
    /// read as the integer time (see [`Sender::app_send_at`]).
    pub fn on_timer(&mut self, now: Nanos) {
        self.on_timer_at(now, secs(now))
    }

    /// The retransmission timer fired at `now`, whose clock in seconds is `clock` (ns-2's:
    /// [`Sender::rtx_clock`]).
    pub fn on_timer_at(&mut self, now: Nanos, clock: f64) {
        self.state.clock = clock;
        self.state.rtx_deadline = None;
        let cc = &mut *self.cc;
        match &mut self.recovery {
            Recovery::TcpAgent(r) => r.timeout(&mut self.state, cc, now),
            Recovery::VegasAgent(v) => v.timeout(&mut self.state, cc, now),
            Recovery::Linux(l) => l.timeout(&mut self.state, cc, now),
        }
        self.state.track_slow_start();
    }

    /// Free the send-time tables and buffers (sized by the window) of a sender that will not
    /// be used again; its counters, cwnd and ssthresh stay readable. Only for a connection
    /// that is over: any later `on_ack`, `on_timer` or `app_send` would misbehave.
    pub fn release_buffers(&mut self) {
        self.state.outbox = Vec::new();
        self.state.rtx_deadline = None;
        match &mut self.recovery {
            Recovery::TcpAgent(r) => r.release_buffers(),
            Recovery::VegasAgent(v) => v.release_buffers(),
            Recovery::Linux(_) => {}
        }
    }

    /// When the retransmission timer wants to fire, if armed.
    pub fn rtx_deadline(&self) -> Option<Nanos> {
        self.state.rtx_deadline
    }

    /// When the retransmission timer was last armed.
    pub fn rtx_armed_at(&self) -> Nanos {
        self.state.rtx_armed_at
    }

    /// The clock at which the armed retransmission timer fires (ns-2's double: the clock when
    /// it was armed plus the timeout).
    pub fn rtx_clock(&self) -> f64 {
        self.state.rtx_clock
    }

    /// Take the segments queued for transmission since the last call.
    pub fn drain_segments(&mut self) -> std::vec::Drain<'_, Segment> {
        self.state.outbox.drain(..)
    }

    /// Take the segments queued for transmission since the last call as the queue itself, to
    /// send them while the sender may be called again; hand it back with
    /// [`Sender::give_back_segments`] so that its buffer is reused (the simulator's way:
    /// no copy into a second buffer).
    pub fn take_segments(&mut self) -> Vec<Segment> {
        std::mem::take(&mut self.state.outbox)
    }

    /// Return the queue taken by [`Sender::take_segments`], its segments sent: its buffer
    /// serves again, unless the sender queued new segments meanwhile (they stay).
    pub fn give_back_segments(&mut self, mut segments: Vec<Segment>) {
        if self.state.outbox.capacity() == 0 {
            segments.clear();
            self.state.outbox = segments;
        }
    }

    pub fn cwnd(&self) -> f64 {
        self.state.cwnd
    }

    pub fn ssthresh(&self) -> i64 {
        self.state.ssthresh
    }

    pub fn stats(&self) -> &SenderStats {
        &self.state.stats
    }

    /// When all application data was acknowledged, for a finite transfer.
    pub fn completed_at(&self) -> Option<Nanos> {
        self.state.done_at
    }

    /// Extra per-algorithm variables worth plotting (e.g. Vegas-A's alpha and beta).
    pub fn probe(&self) -> Vec<(&'static str, f64)> {
        let mut out = Vec::new();
        self.cc.variables(&mut out);
        out
    }

    fn send_much(&mut self, now: Nanos, burst: u32) {
        let cc = &mut *self.cc;
        match &mut self.recovery {
            Recovery::TcpAgent(r) => r.send_much(&mut self.state, cc, now, burst),
            Recovery::VegasAgent(v) => v.send_much(&mut self.state, cc, now, burst),
            Recovery::Linux(l) => l.send_much(&mut self.state, cc, now),
        }
    }
}

