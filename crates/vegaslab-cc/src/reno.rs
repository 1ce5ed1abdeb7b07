//! Reno and NewReno loss recovery with ns-2's semantics (`Agent/TCP/Reno`,
//! `Agent/TCP/Newreno` at their ns-2.35 defaults).
//!
//! - Fast retransmit on the `numdupacks_`-th duplicate ACK, window halved
//!   (`ssthresh = cwnd = window / 2`), then inflated by one per further duplicate ACK
//!   (`dupwnd`); limited transmit sends a new packet on the first two duplicates.
//! - Reno leaves recovery on the first new ACK; a later third duplicate ACK in the same
//!   window may trigger another fast retransmit only while `last_cwnd_action` is still
//!   DupAck or the ACK point has passed `recover` (ns-2 `bugFix_`).
//! - NewReno (RFC 2582, "careful" variant) stays in recovery across partial ACKs,
//!   retransmitting the next hole at once, resetting the timer only on the first partial
//!   ACK (`newreno_changes1_`), and deflating the window by the amount acknowledged minus
//!   one (`partial_window_deflation_`).
//! - A coarse timeout sets cwnd to 1 and ssthresh to half the window (at least 2), backs off
//!   the timer and resends from the first unacknowledged packet.
//!
//! The window increase on new ACKs is pluggable ([`Increase`]): ns-2's `opencwnd` for Reno
//! and NewReno, or the Linux / ns-3 Vegas flavours.

use crate::config::VegasParams;
use crate::sender::{send_much_with, slowdown, AckInfo, CwndAction, Segment, SenderState};
use crate::vegas_linux::LinuxVegas;
use crate::vegas_ns3::Ns3Vegas;
use crate::{secs, Nanos};

/// How the window grows on a new ACK outside recovery.
#[derive(Clone, Debug)]
pub enum Increase {
    /// ns-2 `opencwnd`: slow start, then +1/cwnd per ACK.
    Standard,
    LinuxVegas(LinuxVegas),
    Ns3Vegas(Ns3Vegas),
}

/// Send times of outstanding packets, for RTT samples (Karn: only packets sent once).
#[derive(Clone, Debug)]
struct SendLog {
    times: Vec<f64>,
    transmits: Vec<u8>,
    mask: i64,
}

impl SendLog {
    /// A ring of `cap` slots (zeroed); only the prefix touched so far is stored (slots fill
    /// from 0 upwards), so a short connection with a large window costs little memory.
    fn new(window: f64) -> Self {
        let cap = ((window.max(1.0) as usize) + 4).next_power_of_two() * 2;
        SendLog { times: Vec::new(), transmits: Vec::new(), mask: cap as i64 - 1 }
    }
    fn record(&mut self, seq: i64, t: f64, fresh: bool) {
        let i = (seq & self.mask) as usize;
        if i >= self.times.len() {
            self.grow(i);
        }
        self.times[i] = t;
        self.transmits[i] = if fresh { 1 } else { self.transmits[i].saturating_add(1) };
    }
    #[cold]
    #[inline(never)]
    fn grow(&mut self, i: usize) {
        let n = (i + 1).next_power_of_two().max(64).min(self.mask as usize + 1);
        self.times.resize(n, 0.0);
        self.transmits.resize(n, 0);
    }

    fn sample(&self, seq: i64, now: f64) -> Option<f64> {
        let i = (seq & self.mask) as usize;
        (self.transmits.get(i) == Some(&1)).then(|| now - self.times[i])
    }
}

/// Reno-family recovery state.
#[derive(Clone, Debug)]
pub struct RenoRecovery {
    newreno: bool,
    /// Window inflation during fast recovery (ns-2 `dupwnd_`).
    pub dupwnd: i64,
    firstpartial: bool,
    pub increase: Increase,
    log: Option<SendLog>,
}

impl RenoRecovery {
    /// Drop the send log (see `Sender::release_buffers`).
    pub(crate) fn release_buffers(&mut self) {
        self.log = None;
    }

    pub fn reno() -> Self {
        Self::with(false, Increase::Standard)
    }
    pub fn newreno() -> Self {
        Self::with(true, Increase::Standard)
    }
    pub fn linux_vegas(p: VegasParams) -> Self {
        Self::with(true, Increase::LinuxVegas(LinuxVegas::new(p)))
    }
    pub fn ns3_vegas(p: VegasParams) -> Self {
        Self::with(true, Increase::Ns3Vegas(Ns3Vegas::new(p)))
    }
    fn with(newreno: bool, increase: Increase) -> Self {
        RenoRecovery { newreno, dupwnd: 0, firstpartial: false, increase, log: None }
    }

    /// Reno's window: cwnd inflated by the duplicate ACKs, capped by the receiver window.
    pub fn window(&self, s: &SenderState) -> i64 {
        let win = s.cwnd as i64 + self.dupwnd;
        win.min(s.cfg.window as i64)
    }

    fn windowd(&self, s: &SenderState) -> f64 {
        (s.cwnd + self.dupwnd as f64).min(s.cfg.window)
    }

    pub fn send_much(&mut self, s: &mut SenderState, now: Nanos, burst: u32) {
        let dupwnd = self.dupwnd;
        let log = self.log.get_or_insert_with(|| SendLog::new(s.cfg.window));
        send_much_with(
            s,
            now,
            burst,
            |s| (s.cwnd as i64 + dupwnd).min(s.cfg.window as i64),
            |s, now, seq| output(s, log, now, seq),
        );
    }

    fn output(&mut self, s: &mut SenderState, now: Nanos, seq: i64) {
        let log = self.log.get_or_insert_with(|| SendLog::new(s.cfg.window));
        output(s, log, now, seq);
    }

    /// ns-2 `send_one`: limited transmit on the first and second duplicate ACK.
    fn send_one(&mut self, s: &mut SenderState, now: Nanos) {
        if s.t_seqno as f64 <= s.highest_ack as f64 + s.cfg.window
            && s.t_seqno < s.curseq
            && s.t_seqno as f64 <= s.highest_ack as f64 + s.cwnd + s.dupacks as f64
        {
            let seq = s.t_seqno;
            self.output(s, now, seq);
            s.t_seqno += 1;
        }
    }

    /// Process one ACK (ns-2 `RenoTcpAgent::recv` / `NewRenoTcpAgent::recv`).
    pub fn recv(&mut self, s: &mut SenderState, now: Nanos, ack: &AckInfo) {
        let seqno = ack.seqno;
        if seqno > s.last_ack {
            let full = !self.newreno
                || seqno >= s.recover
                || s.last_cwnd_action != CwndAction::DupAck;
            if full {
                if self.newreno {
                    if self.dupwnd > 0 {
                        self.dupwnd = 0;
                        if s.last_cwnd_action == CwndAction::DupAck {
                            s.last_cwnd_action = CwndAction::Exited;
                            self.on_recovered(s);
                        }
                    }
                    self.firstpartial = false;
                } else {
                    if s.last_cwnd_action == CwndAction::DupAck {
                        s.last_cwnd_action = CwndAction::Exited;
                        self.on_recovered(s);
                    }
                    self.dupwnd = 0;
                }
                self.recv_newack(s, now, seqno);
                if s.last_ack == 0 && s.cfg.delay_growth {
                    s.cwnd = s.window_init;
                }
            } else {
                self.partial_ack(s, now, seqno);
            }
        } else if seqno == s.last_ack {
            s.dupacks += 1;
            if s.dupacks == s.cfg.dupacks {
                self.dupack_action(s, now);
            } else if s.dupacks > s.cfg.dupacks && s.last_cwnd_action == CwndAction::DupAck {
                self.dupwnd += 1;
            } else if s.dupacks < s.cfg.dupacks && s.cfg.limited_transmit {
                self.send_one(s, now);
            }
        }
        // aggressive_maxburst_ is on in ns-2, so even an old ACK may clock out data.
        let burst = s.cfg.max_burst;
        if self.newreno {
            if s.dupacks == 0 {
                self.send_much(s, now, burst);
            } else if s.dupacks > s.cfg.dupacks - 1 {
                self.send_much(s, now, 2);
            }
        } else if s.dupacks == 0 || s.dupacks > s.cfg.dupacks - 1 {
            self.send_much(s, now, burst);
        }
    }

    /// A new ACK outside recovery: ns-2 `recv_newack_helper`.
    fn recv_newack(&mut self, s: &mut SenderState, now: Nanos, seqno: i64) {
        let t = secs(now);
        let sample = self.log.as_ref().and_then(|l| l.sample(seqno, t));
        s.newack(now, seqno);
        if let Some(rtt) = sample {
            s.note_rtt_sample(rtt);
        }
        match &mut self.increase {
            Increase::Standard => s.opencwnd(),
            Increase::LinuxVegas(v) => {
                if let Some(rtt) = sample {
                    v.pkts_acked(rtt);
                }
                v.cong_avoid(s, seqno);
            }
            Increase::Ns3Vegas(v) => {
                if let Some(rtt) = sample {
                    v.pkts_acked(rtt);
                }
                v.increase_window(s, seqno);
            }
        }
        s.check_finished(now);
    }

    /// NewReno partial ACK: stay in recovery and retransmit the next hole.
    fn partial_ack(&mut self, s: &mut SenderState, now: Nanos, seqno: i64) {
        if !self.firstpartial {
            self.firstpartial = true;
            s.newtimer(now, seqno);
        }
        // Partial window deflation: take back what was acknowledged, less one.
        let deflate = seqno - s.last_ack;
        if self.dupwnd > deflate {
            self.dupwnd -= deflate - 1;
        } else {
            s.cwnd -= (deflate - self.dupwnd) as f64;
            self.dupwnd = 1;
        }
        if s.cwnd < 1.0 {
            s.cwnd = 1.0;
        }
        s.last_ack = seqno;
        s.highest_ack = seqno;
        if s.t_seqno < seqno + 1 {
            s.t_seqno = seqno + 1;
        }
        if s.rtt_active && seqno >= s.rtt_seq {
            s.rtt_active = false;
            s.rto.backoff = 1;
        }
        let next = s.last_ack + 1;
        self.output(s, now, next);
    }

    /// The `numdupacks_`-th duplicate ACK (ns-2 `dupack_action`).
    fn dupack_action(&mut self, s: &mut SenderState, now: Nanos) {
        let recovered = s.highest_ack > s.recover;
        // Reno may fast-retransmit again while still in recovery; NewReno may not.
        let allow = !self.newreno && s.last_cwnd_action == CwndAction::DupAck;
        // bugfix_ss_: allow fast retransmit when the first data packet is dropped.
        if !(recovered || allow || s.highest_ack == 0) {
            return; // bugFix_: no second fast retransmit within one window
        }
        s.recover = s.maxseq;
        s.last_cwnd_action = CwndAction::DupAck;
        let (cwnd_before, ssthresh_before) = (s.cwnd, s.ssthresh);
        let w = self.windowd(s);
        s.slowdown(slowdown::SSTHRESH_HALF | slowdown::CWND_HALF, w);
        if let Increase::Ns3Vegas(_) = self.increase {
            s.ssthresh = Ns3Vegas::ssthresh_on_loss(cwnd_before, ssthresh_before);
            s.cwnd = s.ssthresh as f64;
        }
        self.on_loss();
        s.reset_rtx_timer(now, true, false);
        let next = s.last_ack + 1;
        self.output(s, now, next);
        s.stats.fast_retransmits += 1;
        self.dupwnd = s.cfg.dupacks;
    }

    /// Retransmission timeout (ns-2 `RenoTcpAgent::timeout` then `TcpAgent::timeout`).
    pub fn timeout(&mut self, s: &mut SenderState, now: Nanos) {
        self.dupwnd = 0;
        s.dupacks = 0;
        s.recover = s.maxseq;
        if s.cwnd < 1.0 {
            s.cwnd = 1.0;
        }
        let idle = s.highest_ack == s.maxseq;
        if s.highest_ack == -1 && s.window_init > 1.0 {
            // First packet lost: do not use a larger initial window (bugfix_ss_).
            s.window_init = 1.0;
        }
        if idle {
            // No outstanding data (restart_bugfix_): do not cut ssthresh.
            s.slowdown(slowdown::CWND_ONE, self.windowd(s));
        } else {
            s.stats.timeouts += 1;
            s.last_cwnd_action = CwndAction::Timeout;
            let (cwnd_before, ssthresh_before) = (s.cwnd, s.ssthresh);
            let w = self.windowd(s);
            s.slowdown(slowdown::SSTHRESH_HALF | slowdown::CWND_RESTART, w);
            if let Increase::Ns3Vegas(_) = self.increase {
                s.ssthresh = Ns3Vegas::ssthresh_on_loss(cwnd_before, ssthresh_before);
            }
            self.on_loss();
        }
        s.reset_rtx_timer(now, false, !idle);
        s.last_cwnd_action = CwndAction::Timeout;
        let burst = s.cfg.max_burst;
        self.send_much(s, now, burst);
    }

    fn on_loss(&mut self) {
        match &mut self.increase {
            Increase::Standard => {}
            Increase::LinuxVegas(v) => v.disable(),
            Increase::Ns3Vegas(v) => v.disable(),
        }
    }

    fn on_recovered(&mut self, s: &SenderState) {
        match &mut self.increase {
            Increase::Standard => {}
            Increase::LinuxVegas(v) => v.enable(s.t_seqno),
            Increase::Ns3Vegas(v) => v.enable(s.t_seqno),
        }
    }
}

/// ns-2 `TcpAgent::output`: a 40-byte SYN as sequence number 0 when modelled, else
/// payload plus header; the SYN adds one to the sequence space the first time.
fn output(s: &mut SenderState, log: &mut SendLog, now: Nanos, seqno: i64) {
    let syn = seqno == 0 && s.cfg.syn;
    if syn && s.maxseq == -1 {
        s.curseq += 1;
    }
    let (wire, payload) = if syn {
        (s.cfg.header_bytes, 0)
    } else {
        (s.cfg.packet_size + s.cfg.header_bytes, s.cfg.packet_size)
    };
    let force_timer = s.highest_ack == s.maxseq;
    let fresh = seqno > s.maxseq;
    log.record(seqno, secs(now), fresh);
    s.emit(
        now,
        Segment { seqno, wire_bytes: wire, payload_bytes: payload, syn, retransmission: !fresh, probe: false },
        force_timer,
    );
}
