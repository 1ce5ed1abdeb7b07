//! The shared one-way TCP sender state: ns-2 `TcpAgent`'s variables and bookkeeping, used by
//! both loss-recovery machines ([`crate::tcp_agent`], [`crate::vegas_agent`]).
//!
//! Windows are in packets and sequence numbers count packets, as in ns-2. The sender keeps
//! ns-2's variable meanings: `t_seqno` is the next sequence number to send, `highest_ack` /
//! `last_ack` the cumulative ACK point, `maxseq` the highest sequence number ever sent,
//! `curseq` one past the last sequence number the application has handed over.

use crate::config::TcpConfig;
pub use crate::controller::QueueingTimes;
use crate::controller::{CongestionControl, Window};
use crate::rto::RtoEstimator;
use crate::Nanos;

/// "Infinite" data for an FTP source (ns-2 `TCP_MAXSEQ`).
pub const MAX_SEQ: i64 = 1 << 40;

/// What the last window change was caused by (ns-2 `last_cwnd_action_`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CwndAction {
    None,
    Timeout,
    DupAck,
    /// Left fast recovery on a new ACK.
    Exited,
}

/// One packet the sender wants on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    pub seqno: i64,
    /// Size on the wire in bytes (payload plus any header).
    pub wire_bytes: u32,
    /// Application bytes carried (0 for a SYN).
    pub payload_bytes: u32,
    pub syn: bool,
    pub retransmission: bool,
    /// The timestamp option's value in milliseconds (RFC 7323; the Linux stack's segments,
    /// 0 on ns-2's).
    pub timestamp_ms: u32,
    /// Carries the RoVegas AQT IP option (a "probing packet" in the RoVegas paper: Chan et al.,
    /// "Design and performance evaluation of an improved TCP congestion avoidance scheme",
    /// section 3).
    pub probe: bool,
}

/// What the sender learns from one ACK.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AckInfo {
    /// Cumulative ACK: the highest in-order sequence number received.
    pub seqno: i64,
    /// Present when the ACK is a probing packet (carries the AQT option).
    pub queueing: Option<QueueingTimes>,
    /// What a Linux receiver adds (SACK blocks, DSACK, timestamp echo); the Linux stack only.
    pub linux: Option<LinuxAck>,
}

/// The receiver's report on one ACK beyond the cumulative point: Linux's receiver puts SACK
/// blocks (most recent first, RFC 2018 section 4), a DSACK (RFC 2883) and the timestamp echo
/// on its ACKs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinuxAck {
    /// SACK blocks, half-open ranges of segments; `blocks[..count]` are used.
    pub blocks: [(i64, i64); 4],
    pub count: u8,
    /// A duplicate segment the receiver reports (DSACK), if any.
    pub dsack: Option<i64>,
    /// The timestamp the ACK echoes (TSecr, milliseconds), if timestamps are on.
    pub echo_ms: Option<u32>,
}

impl LinuxAck {
    pub fn blocks(&self) -> &[(i64, i64)] {
        &self.blocks[..self.count as usize]
    }
}


/// Counters reported per flow.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SenderStats {
    /// Packets handed to the network, retransmissions and any SYN included.
    pub pkts_sent: u64,
    pub bytes_sent: u64,
    pub retransmitted_pkts: u64,
    /// Retransmissions triggered by duplicate ACKs (Reno fast retransmit, Vegas
    /// fine-grained or third-duplicate retransmission).
    pub fast_retransmits: u64,
    /// Coarse retransmission timeouts with data outstanding.
    pub timeouts: u64,
    /// Times the sender entered slow start (cwnd < ssthresh), the initial one included.
    pub slow_start_entries: u64,
    pub acks_received: u64,
}

/// Shared sender state: the fields of ns-2's `TcpAgent` that the algorithms here use.
///
/// Laid out in C order by use, in 64-byte lines from the start of the struct (a `Sender` puts
/// it on a line boundary of the simulator's flow: see vegaslab-sim's `Flow`): with thousands
/// of flows a sender is rarely in cache when its ACK arrives, and each line touched is a
/// miss (docs/decisions.md, "Hot structs are laid out by use in cache lines"). Line 0 holds
/// the sequence numbers and window every ACK reads; line 1 the retransmission timer and the
/// completion; line 2 the timed packet, the send queue and the flags; line 3 the counters;
/// then the RTO estimator and the configuration (each also read per ACK, in part), and the
/// last RTT sample. Results do not depend on the layout.
#[derive(Clone, Debug)]
#[repr(C)]
pub struct SenderState {
    // Line 0.
    /// The sender's clock now, in seconds: what ns-2's `Scheduler::clock()` returns during
    /// the call. The simulator sets it before every call into the sender; every time the
    /// ns-2 machinery stores or compares in seconds (`firstsent_`, the timed packet's
    /// `rtt_ts`, Vegas's send times, the RTT samples behind the RTO) is read from it, never
    /// from the integer `now`. ns-2 accumulates its clock in doubles (each event's time is
    /// its scheduler's time plus a delay), so near-equal quantities such as Vegas's `diff`
    /// land on either side of a threshold as its rounding has it; the
    /// simulator's `run.clock` chooses whether this is that double or the integer time.
    pub clock: f64,
    pub cwnd: f64,
    pub t_seqno: i64,
    pub last_ack: i64,
    pub highest_ack: i64,
    pub maxseq: i64,
    pub dupacks: i64,
    pub curseq: i64,
    // Line 1.
    pub ssthresh: i64,
    pub rtx_deadline: Option<Nanos>,
    /// When the retransmission timer was last armed (ns-2 schedules the timer's expiry
    /// then: it decides the order of events at the same time, see vegaslab-sim's `event`).
    pub rtx_armed_at: Nanos,
    /// The clock at which the retransmission timer will fire: the clock when it was armed
    /// plus the timeout, as ns-2's `TimerHandler::resched` computes it.
    pub rtx_clock: f64,
    /// When the last segment was queued for transmission (Linux `lsndtime`).
    pub last_send: Nanos,
    /// Completion: time the whole application data was acknowledged.
    pub done_at: Option<Nanos>,
    // Line 2.
    /// Time the first packet was sent (ns-2 `firstsent_`, reset whenever t_seqno is 0).
    pub firstsent: f64,
    pub rtt_seq: i64,
    pub rtt_ts: f64,
    pub(crate) outbox: Vec<Segment>,
    pub recover: i64,
    pub rtt_active: bool,
    pub closed: bool,
    /// The controller may tag segments as router-assist probes: ask it per data segment
    /// ([`SenderState::tag`]).
    pub(crate) router_assist: bool,
    in_slow_start: bool,
    pub first_decrease: bool,
    pub last_cwnd_action: CwndAction,
    // Line 3.
    pub stats: SenderStats,
    /// Initial window; ns-2 drops it to 1 when the very first packet is lost.
    pub window_init: f64,
    // From line 4 on.
    pub rto: RtoEstimator,
    pub cfg: TcpConfig,
    /// Last RTT sample of a packet sent once (seconds), for monitoring and the
    /// Linux/ns-3 flavours.
    pub last_rtt_sample: Option<f64>,
}

// The lines `SenderState` documents.
const _: () = {
    use std::mem::offset_of;
    assert!(offset_of!(SenderState, curseq) + 8 == 64);
    assert!(offset_of!(SenderState, done_at) + 16 == 128);
    assert!(offset_of!(SenderState, last_cwnd_action) < 192);
    assert!(offset_of!(SenderState, stats) == 192 && offset_of!(SenderState, window_init) + 8 == 256);
};

/// Kinds of window reduction, ns-2's `slowdown()` flags.
pub mod slowdown {
    pub const SSTHRESH_HALF: u32 = 1;
    pub const CWND_HALF: u32 = 2;
    pub const CWND_RESTART: u32 = 4;
    pub const CWND_ONE: u32 = 8;
}

impl SenderState {
    pub(crate) fn new(cfg: TcpConfig) -> Self {
        // ns-2 set_initial_window(): one packet while a SYN exchange is modelled.
        let cwnd = if cfg.syn && cfg.delay_growth { 1.0 } else { cfg.window_init };
        SenderState {
            t_seqno: 0,
            curseq: 0,
            highest_ack: -1,
            last_ack: -1,
            maxseq: -1,
            dupacks: 0,
            cwnd,
            ssthresh: cfg.window as i64,
            recover: 0,
            last_cwnd_action: CwndAction::None,
            first_decrease: true,
            window_init: cfg.window_init,
            rto: RtoEstimator::new(&cfg),
            rtt_active: false,
            rtt_seq: -1,
            rtt_ts: 0.0,
            firstsent: 0.0,
            clock: 0.0,
            rtx_clock: 0.0,
            closed: false,
            done_at: None,
            rtx_deadline: None,
            rtx_armed_at: 0,
            last_send: 0,
            last_rtt_sample: None,
            stats: SenderStats::default(),
            outbox: Vec::with_capacity(8),
            router_assist: true,
            in_slow_start: false,
            cfg,
        }
    }

    /// Packets sent but not yet cumulatively acknowledged.
    pub fn outstanding(&self) -> i64 {
        self.t_seqno - self.last_ack
    }

    /// What a controller sees and may change ([`Window`]).
    pub fn window(&self) -> Window {
        Window {
            cwnd: self.cwnd,
            ssthresh: self.ssthresh,
            next_seq: self.t_seqno,
            last_ack: self.last_ack,
            max_window: self.cfg.window,
            cwnd_limited: true,
        }
    }

    /// Take back the controller's cwnd and ssthresh.
    pub fn apply(&mut self, w: &Window) {
        self.cwnd = w.cwnd;
        self.ssthresh = w.ssthresh;
    }

    /// Seconds since the first packet was sent (ns-2's Vegas clock).
    pub fn elapsed(&self) -> f64 {
        self.clock - self.firstsent
    }

    /// Arm the retransmission timer with the current RTO (ns-2 `set_rtx_timer`).
    /// The timeout and its nanoseconds come ready from the estimator
    /// (`RtoEstimator::timeout_ns`), not computed and converted per arming.
    pub fn set_rtx_timer(&mut self, now: Nanos) {
        self.rtx_deadline = Some(now.saturating_add(self.rto.timeout_ns()));
        self.rtx_clock = self.clock + self.rto.timeout();
        self.rtx_armed_at = now;
    }

    /// ns-2 `reset_rtx_timer(mild, backoff)`: optionally back off, re-arm, and unless `mild`
    /// go back to the first unacknowledged packet.
    pub fn reset_rtx_timer(&mut self, now: Nanos, mild: bool, backoff: bool) {
        if backoff {
            self.rto.back_off();
        }
        self.set_rtx_timer(now);
        if !mild {
            self.t_seqno = self.highest_ack + 1;
        }
        self.rtt_active = false;
    }

    /// ns-2 `newtimer`: keep the timer running while data is outstanding, else cancel it.
    pub fn newtimer(&mut self, now: Nanos, ack: i64) {
        if self.t_seqno > ack || ack < self.maxseq || self.cwnd < 1.0 {
            self.set_rtx_timer(now);
        } else {
            self.rtx_deadline = None;
        }
    }

    /// ns-2 `newack` (with `timerfix_`): advance the ACK point, take the timed RTT sample,
    /// then re-arm or cancel the timer.
    ///
    /// Inlined into each agent's new-ACK path (every new ACK); a plain `#[inline]` leaves it
    /// out of line.
    #[inline(always)]
    pub fn newack(&mut self, now: Nanos, ack: i64) {
        let t = self.clock;
        self.dupacks = 0;
        self.last_ack = ack;
        self.highest_ack = ack;
        if self.t_seqno < ack + 1 {
            self.t_seqno = ack + 1;
        }
        if self.rtt_active && ack >= self.rtt_seq {
            self.rto.reset_backoff();
            self.rtt_active = false;
            self.rto.update(t, t - self.rtt_ts);
        }
        self.newtimer(now, ack);
    }

    /// ns-2 `slowdown(how)` with `precisionReduce_` on and `decrease_num_` 0.5; `windowd` is
    /// the (possibly inflated) window in packets the reduction starts from.
    pub fn slowdown(&mut self, how: u32, windowd: f64) {
        let halfwin = windowd / 2.0;
        if how & slowdown::SSTHRESH_HALF != 0 {
            // First decrease, slow start, after a timeout, or decrease_num_ = 0.5: all halve.
            self.ssthresh = halfwin as i64;
        }
        if how & slowdown::CWND_HALF != 0 {
            self.cwnd = halfwin;
        } else if how & slowdown::CWND_RESTART != 0 {
            self.cwnd = 1.0; // int(wnd_restart_)
        } else if how & slowdown::CWND_ONE != 0 {
            self.cwnd = 1.0;
        }
        if self.ssthresh < 2 {
            self.ssthresh = 2;
        }
        self.first_decrease = false;
    }

    /// Record an RTT sample of a packet that was sent once.
    pub fn note_rtt_sample(&mut self, rtt: f64) {
        self.last_rtt_sample = Some(rtt);
    }

    /// The router-assist option of the next data segment: the controller's `tag_segment`, if
    /// it may tag (RoVegas picks its probing packets; the option travels on the wire).
    ///
    /// A controller is asked only if its algorithm declares router assist
    /// (`AlgorithmParams::router_assist`, which also sizes the sink's answers to probes): every
    /// other one answers `None`, and a call through the trait object per packet is not free. A
    /// sender built around a bare controller (`Sender::with_controller`) asks on every segment.
    #[inline]
    pub(crate) fn tag(&self, cc: &mut dyn CongestionControl) -> Option<u32> {
        if self.router_assist {
            cc.tag_segment()
        } else {
            None
        }
    }

    /// Queue a segment for transmission and update ns-2's send-side bookkeeping
    /// (`maxseq_`, the timed packet, counters, the timer).
    pub fn emit(&mut self, now: Nanos, seg: Segment, force_timer: bool) {
        self.stats.pkts_sent += 1;
        self.stats.bytes_sent += seg.wire_bytes as u64;
        if seg.seqno > self.maxseq {
            self.maxseq = seg.seqno;
            if !self.rtt_active {
                self.rtt_active = true;
                if seg.seqno > self.rtt_seq {
                    self.rtt_seq = seg.seqno;
                    self.rtt_ts = self.clock;
                }
            }
        } else {
            self.stats.retransmitted_pkts += 1;
        }
        self.outbox.push(seg);
        self.last_send = now;
        if self.rtx_deadline.is_none() || force_timer {
            self.set_rtx_timer(now);
        }
    }

    /// The application's data is all acknowledged: remember when (ns-2 `finish()`).
    pub fn check_finished(&mut self, now: Nanos) {
        if self.highest_ack >= self.curseq - 1 && !self.closed {
            self.closed = true;
            if self.curseq < MAX_SEQ {
                self.done_at = Some(now);
            }
        }
    }

    pub(crate) fn track_slow_start(&mut self) {
        let ss = self.cwnd < self.ssthresh as f64;
        if ss && !self.in_slow_start {
            self.stats.slow_start_entries += 1;
        }
        self.in_slow_start = ss;
    }
}

/// The new length of a per-sequence-number table (the Reno agent's send log, the Vegas agent's
/// send times) of length `len` that must hold slot `i`, in a ring of `cap` slots: the table
/// stores the prefix touched so far, so that a short connection with a large window costs
/// little memory.
///
/// It grows eightfold (from 64 slots, up to `cap`), not twofold: a long connection walks
/// through every slot early on, and each growth copies what is stored.
pub(crate) fn grown_len(len: usize, i: usize, cap: usize) -> usize {
    (len * 8).max(i + 1).next_power_of_two().max(64).min(cap)
}

/// ns-2 `send_much`: send while the window allows, at most `burst` packets (0 = no limit).
/// `win` is the machinery's window (ns-2 `window()`), `output` its output.
///
/// The window is read once, by the caller. ns-2 reads it again after each packet, but sending
/// changes neither cwnd, nor the duplicate-ACK inflation, nor the receiver window (`output`
/// records and queues), so it would read the same value.
pub fn send_much_with(
    s: &mut SenderState,
    now: Nanos,
    burst: u32,
    win: i64,
    mut output: impl FnMut(&mut SenderState, Nanos, i64),
) {
    if s.t_seqno == 0 {
        s.firstsent = s.clock;
    }
    let mut sent = 0u32;
    while s.t_seqno <= s.highest_ack + win && s.t_seqno < s.curseq {
        let seq = s.t_seqno;
        output(s, now, seq);
        sent += 1;
        s.t_seqno += 1;
        if burst > 0 && sent == burst {
            break;
        }
    }
}
