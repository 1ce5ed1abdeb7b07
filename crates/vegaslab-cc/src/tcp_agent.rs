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
//!   ACK (`newreno_changes1_`; `tcp.partial_ack_timer = "every"` resets it on each, as Linux
//!   does), and deflating the window by the amount acknowledged minus
//!   one (`partial_window_deflation_`).
//! - A coarse timeout sets cwnd to 1 and ssthresh to half the window (at least 2), backs off
//!   the timer and resends from the first unacknowledged packet.
//!
//! The window decisions are the controller's ([`CongestionControl`]): `cong_avoid` on each new
//! ACK outside recovery (after `pkts_acked` with the ACK's RTT sample, if the acknowledged
//! packet was sent once: Linux's order), `ssthresh` for the cut on a fast retransmit or a
//! timeout, `set_state` on entering recovery (Recovery), a timeout (Loss) and leaving either
//! (Open: fast recovery ends, or everything outstanding at the timeout is acknowledged),
//! `cwnd_event(TxStart)` when new data leaves with nothing in flight.
//!
//! **The NewReno sender of the other flavours.** The `ns3` flavour, and the `linux` flavour on
//! ns-2's stack (`tcp.stack = "ns2"`; Linux's stack is [`crate::linux`]), run on this machine in
//! NewReno mode, with RTT samples from a per-packet send-time log (Karn's rule), as `tcp_ack`
//! takes them; `tcp.partial_ack_timer = "every"` re-arms the RTO on every partial ACK, as Linux
//! does (the default is ns-2's).

use crate::config::PartialAckTimer;
use crate::controller::{Ack, CaState, CongestionControl, CwndEvent, Loss, LossKind, RttSample};
use crate::state::{grown_len, send_much_with, slowdown, AckInfo, CwndAction, Segment, SenderState};
use crate::Nanos;

/// Send times of outstanding packets, for RTT samples (Karn: only packets sent once).
///
/// One array of 8-byte slots, so a send and an ACK touch one line, not two: a sample needs a
/// slot's send time only while the slot's packet was sent exactly once, so the slot holds
/// that time then, `MANY` (NaN) once it was sent again, and `NEVER` (minus infinity) before
/// it was first used; send times are finite.
#[derive(Clone, Debug)]
struct SendLog {
    slots: Vec<f64>,
    mask: i64,
}

/// A slot never used (as the zero transmit count before).
const NEVER: f64 = f64::NEG_INFINITY;
/// A slot whose packet was sent more than once: no sample.
const MANY: f64 = f64::NAN;

impl SendLog {
    /// A ring of `cap` slots; only the prefix touched so far is stored (slots fill from 0
    /// upwards), so a short connection with a large window costs little memory.
    fn new(window: f64) -> Self {
        let cap = ((window.max(1.0) as usize) + 4).next_power_of_two() * 2;
        SendLog { slots: Vec::new(), mask: cap as i64 - 1 }
    }
    /// Sequence number `seq` was sent at `t`: a fresh packet starts its slot over; a resent
    /// one was sent before (or, in a slot never used, counts as sent once).
    fn record(&mut self, seq: i64, t: f64, fresh: bool) {
        let i = (seq & self.mask) as usize;
        if i >= self.slots.len() {
            self.grow(i);
        }
        let slot = &mut self.slots[i];
        *slot = if fresh || *slot == NEVER { t } else { MANY };
    }
    #[cold]
    #[inline(never)]
    fn grow(&mut self, i: usize) {
        let n = grown_len(self.slots.len(), i, self.mask as usize + 1);
        self.slots.resize(n, NEVER);
    }

    fn sample(&self, seq: i64, now: f64) -> Option<f64> {
        let i = (seq & self.mask) as usize;
        self.slots.get(i).filter(|t| t.is_finite()).map(|t| now - t)
    }
}

/// Reno-family recovery state (ns-2 `RenoTcpAgent` / `NewRenoTcpAgent`).
#[derive(Clone, Debug)]
pub struct TcpAgent {
    newreno: bool,
    /// Window inflation during fast recovery (ns-2 `dupwnd_`).
    pub dupwnd: i64,
    firstpartial: bool,
    /// RTT samples are taken (the send log is kept): see [`TcpAgent::set_sampling`].
    sampling: bool,
    log: Option<SendLog>,
    /// In the Loss state: a timeout cut the window and not everything then outstanding is
    /// acknowledged yet (the controller hears `set_state(Open)` when it is).
    after_timeout: bool,
    /// The controller's `cong_avoid` is `opencwnd` ([`TcpAgent::set_opencwnd`]).
    opencwnd: bool,
}

impl TcpAgent {
    /// Reno recovery (`newreno` false) or NewReno's.
    pub fn new(newreno: bool) -> Self {
        TcpAgent { newreno, dupwnd: 0, firstpartial: false, sampling: true, log: None, after_timeout: false, opencwnd: false }
    }

    /// Whether to take RTT samples (on by default): off, the sender keeps no send log, and
    /// neither the controller's `pkts_acked` nor `SenderState::last_rtt_sample` hears of
    /// samples. Only for a sender whose controller ignores samples and whose last sample
    /// nobody reads (`Sender::set_rtt_samples_read`); set before the first packet.
    ///
    /// ns-2's Reno takes no RTT samples but the timed packet's, so without a monitor's RTT
    /// series the log would be work for nobody.
    pub(crate) fn set_sampling(&mut self, on: bool) {
        self.sampling = on;
    }

    /// Whether the controller's `cong_avoid` is `opencwnd` alone
    /// ([`CongestionControl::cong_avoid_is_opencwnd`]): a new ACK then opens the window
    /// without calling the controller. Set with the controller, which a sender never swaps.
    ///
    /// Reno's window rule is applied in place, not through the trait object: that call
    /// builds the ACK's record and the window on the stack for every new ACK.
    pub(crate) fn set_opencwnd(&mut self, on: bool) {
        self.opencwnd = on;
    }

    /// The send log, created at the first packet, if samples are taken.
    fn send_log(&mut self, window: f64) -> Option<&mut SendLog> {
        if self.sampling {
            Some(self.log.get_or_insert_with(|| SendLog::new(window)))
        } else {
            None
        }
    }

    pub fn is_newreno(&self) -> bool {
        self.newreno
    }

    /// Drop the send log (see `Sender::release_buffers`).
    pub(crate) fn release_buffers(&mut self) {
        self.log = None;
    }

    fn windowd(&self, s: &SenderState) -> f64 {
        (s.cwnd + self.dupwnd as f64).min(s.cfg.window)
    }

    pub fn send_much(&mut self, s: &mut SenderState, cc: &mut dyn CongestionControl, now: Nanos, burst: u32) {
        let dupwnd = self.dupwnd;
        let window = |s: &SenderState| inflated_window(s, dupwnd);
        // CA_EVENT_TX_START: new data is about to leave with nothing in flight.
        if s.highest_ack == s.maxseq && s.t_seqno > s.maxseq && s.t_seqno < s.curseq && s.t_seqno <= s.highest_ack + window(s) {
            let mut w = s.window();
            cc.cwnd_event(&mut w, CwndEvent::TxStart { now, last_send: s.last_send });
            s.apply(&w);
        }
        let mut log = self.send_log(s.cfg.window);
        send_much_with(s, now, burst, window(s), |s, now, seq| output(s, log.as_deref_mut(), cc, now, seq));
    }

    fn output(&mut self, s: &mut SenderState, cc: &mut dyn CongestionControl, now: Nanos, seq: i64) {
        let log = self.send_log(s.cfg.window);
        output(s, log, cc, now, seq);
    }

    /// ns-2 `send_one`: limited transmit on the first and second duplicate ACK.
    fn send_one(&mut self, s: &mut SenderState, cc: &mut dyn CongestionControl, now: Nanos) {
        if s.t_seqno as f64 <= s.highest_ack as f64 + s.cfg.window
            && s.t_seqno < s.curseq
            && s.t_seqno as f64 <= s.highest_ack as f64 + s.cwnd + s.dupacks as f64
        {
            let seq = s.t_seqno;
            self.output(s, cc, now, seq);
            s.t_seqno += 1;
        }
    }

    /// Process one ACK (ns-2 `RenoTcpAgent::recv` / `NewRenoTcpAgent::recv`).
    pub fn recv(&mut self, s: &mut SenderState, cc: &mut dyn CongestionControl, now: Nanos, ack: &AckInfo) {
        let seqno = ack.seqno;
        if seqno > s.last_ack {
            let full = !self.newreno
                || seqno >= s.recover
                || s.last_cwnd_action != CwndAction::DupAck;
            if full {
                // Everything outstanding at a timeout is acknowledged: the Loss state ends
                // (Linux: `snd_una >= high_seq` takes TCP_CA_Loss back to Open).
                if self.after_timeout && seqno >= s.recover {
                    self.after_timeout = false;
                    Self::recovered(s, cc);
                }
                if self.newreno {
                    if self.dupwnd > 0 {
                        self.dupwnd = 0;
                        if s.last_cwnd_action == CwndAction::DupAck {
                            s.last_cwnd_action = CwndAction::Exited;
                            Self::recovered(s, cc);
                        }
                    }
                    self.firstpartial = false;
                } else {
                    if s.last_cwnd_action == CwndAction::DupAck {
                        s.last_cwnd_action = CwndAction::Exited;
                        Self::recovered(s, cc);
                    }
                    self.dupwnd = 0;
                }
                self.recv_newack(s, cc, now, seqno, ack);
                if s.last_ack == 0 && s.cfg.delay_growth {
                    s.cwnd = s.window_init;
                }
            } else {
                self.partial_ack(s, cc, now, seqno);
            }
        } else if seqno == s.last_ack {
            s.dupacks += 1;
            if s.dupacks == s.cfg.dupacks {
                self.dupack_action(s, cc, now);
            } else if s.dupacks > s.cfg.dupacks && s.last_cwnd_action == CwndAction::DupAck {
                self.dupwnd += 1;
            } else if s.dupacks < s.cfg.dupacks && s.cfg.limited_transmit {
                self.send_one(s, cc, now);
            }
        }
        // aggressive_maxburst_ is on in ns-2, so even an old ACK may clock out data.
        let burst = s.cfg.max_burst;
        if self.newreno {
            if s.dupacks == 0 {
                self.send_much(s, cc, now, burst);
            } else if s.dupacks > s.cfg.dupacks - 1 {
                self.send_much(s, cc, now, 2);
            }
        } else if s.dupacks == 0 || s.dupacks > s.cfg.dupacks - 1 {
            self.send_much(s, cc, now, burst);
        }
    }

    /// A new ACK outside recovery: ns-2 `recv_newack_helper`.
    fn recv_newack(&mut self, s: &mut SenderState, cc: &mut dyn CongestionControl, now: Nanos, seqno: i64, ack: &AckInfo) {
        let t = s.clock;
        let sample = self.log.as_ref().and_then(|l| l.sample(seqno, t));
        let acked = seqno - s.last_ack;
        s.newack(now, seqno);
        let mut w = s.window();
        if let Some(rtt) = sample {
            s.note_rtt_sample(rtt);
            cc.pkts_acked(&mut w, &RttSample { now, rtt, queueing: ack.queueing });
        }
        if self.opencwnd {
            crate::controller::opencwnd(&mut w);
        } else {
            cc.cong_avoid(&mut w, &Ack { seqno, acked, now, elapsed: s.elapsed() });
        }
        s.apply(&w);
        s.check_finished(now);
    }

    /// NewReno partial ACK: stay in recovery and retransmit the next hole.
    fn partial_ack(&mut self, s: &mut SenderState, cc: &mut dyn CongestionControl, now: Nanos, seqno: i64) {
        if !self.firstpartial || s.cfg.partial_ack_timer == PartialAckTimer::Every {
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
            s.rto.reset_backoff();
        }
        let next = s.last_ack + 1;
        self.output(s, cc, now, next);
    }

    /// The `numdupacks_`-th duplicate ACK (ns-2 `dupack_action`).
    fn dupack_action(&mut self, s: &mut SenderState, cc: &mut dyn CongestionControl, now: Nanos) {
        let recovered = s.highest_ack > s.recover;
        // Reno may fast-retransmit again while still in recovery; NewReno may not.
        let allow = !self.newreno && s.last_cwnd_action == CwndAction::DupAck;
        // bugfix_ss_: allow fast retransmit when the first data packet is dropped.
        if !(recovered || allow || s.highest_ack == 0) {
            return; // bugFix_: no second fast retransmit within one window
        }
        s.recover = s.maxseq;
        s.last_cwnd_action = CwndAction::DupAck;
        self.cut(s, cc, LossKind::FastRetransmit);
        s.reset_rtx_timer(now, true, false);
        let next = s.last_ack + 1;
        self.output(s, cc, now, next);
        s.stats.fast_retransmits += 1;
        self.dupwnd = s.cfg.dupacks;
    }

    /// Retransmission timeout (ns-2 `RenoTcpAgent::timeout` then `TcpAgent::timeout`).
    pub fn timeout(&mut self, s: &mut SenderState, cc: &mut dyn CongestionControl, now: Nanos) {
        self.dupwnd = 0;
        s.dupacks = 0;
        if s.cwnd < 1.0 {
            s.cwnd = 1.0;
        }
        let idle = s.highest_ack == s.maxseq;
        if idle && !s.cfg.slow_start_restart {
            // slow_start_restart_ off: with nothing outstanding the timeout leaves the window
            // and ssthresh alone; the timer is re-armed and sending resumes below.
        } else {
            s.recover = s.maxseq;
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
                self.cut(s, cc, LossKind::Timeout);
            }
        }
        s.reset_rtx_timer(now, false, !idle);
        s.last_cwnd_action = CwndAction::Timeout;
        let burst = s.cfg.max_burst;
        self.send_much(s, cc, now, burst);
    }

    /// The controller's cut for a loss (ns-2 `slowdown()` by default), then Recovery or Loss.
    fn cut(&mut self, s: &mut SenderState, cc: &mut dyn CongestionControl, kind: LossKind) {
        let w = s.window();
        let cut = cc.ssthresh(&w, &Loss { kind, window: self.windowd(s) });
        s.ssthresh = cut.ssthresh;
        s.cwnd = cut.cwnd;
        s.first_decrease = false;
        let state = match kind {
            LossKind::FastRetransmit => CaState::Recovery,
            LossKind::Timeout => CaState::Loss,
        };
        self.after_timeout = kind == LossKind::Timeout;
        cc.set_state(&s.window(), state);
    }

    /// Loss recovery ended on a new ACK (fast recovery, or the Loss state after a timeout).
    fn recovered(s: &SenderState, cc: &mut dyn CongestionControl) {
        cc.set_state(&s.window(), CaState::Open);
    }
}

/// cwnd plus the duplicate-ACK inflation, capped by the receiver window (ns-2 `window()`).
fn inflated_window(s: &SenderState, dupwnd: i64) -> i64 {
    (s.cwnd as i64 + dupwnd).min(s.cfg.window as i64)
}

/// ns-2 `TcpAgent::output`: a 40-byte SYN as sequence number 0 when modelled, else
/// payload plus header; the SYN adds one to the sequence space the first time.
///
/// Inlined, into `send_much` above all, where most packets leave.
#[inline(always)]
fn output(s: &mut SenderState, log: Option<&mut SendLog>, cc: &mut dyn CongestionControl, now: Nanos, seqno: i64) {
    let syn = seqno == 0 && s.cfg.syn;
    if syn && s.maxseq == -1 {
        s.curseq += 1;
    }
    let (mut wire, payload) = if syn {
        (s.cfg.header_bytes, 0)
    } else {
        (s.cfg.packet_size + s.cfg.header_bytes, s.cfg.packet_size)
    };
    let option = if syn { None } else { s.tag(cc) };
    wire += option.unwrap_or(0);
    let force_timer = s.highest_ack == s.maxseq;
    let fresh = seqno > s.maxseq;
    if let Some(log) = log {
        log.record(seqno, s.clock, fresh);
    }
    s.emit(
        now,
        Segment { timestamp_ms: 0, seqno, wire_bytes: wire, payload_bytes: payload, syn, retransmission: !fresh, probe: option.is_some() },
        force_timer,
    );
}

#[cfg(test)]
mod tests {
    use super::SendLog;

    #[test]
    fn send_log_samples_only_packets_sent_once() {
        let mut log = SendLog::new(10.0);
        assert_eq!(log.sample(3, 1.0), None); // never sent
        log.record(0, 0.0, true);
        log.record(1, 0.25, true);
        assert_eq!(log.sample(0, 1.0), Some(1.0)); // sent once at time 0: a sample
        log.record(1, 0.5, false); // resent
        assert_eq!(log.sample(1, 1.0), None);
        log.record(1, 0.75, false); // and again
        assert_eq!(log.sample(1, 1.0), None);
        // A resend into a slot never used counts as the first send (as the count did).
        log.record(2, 0.5, false);
        assert_eq!(log.sample(2, 1.0), Some(0.5));
        // The ring comes round: a fresh packet starts its slot over.
        let cap = log.mask + 1;
        log.record(1 + cap, 2.0, true);
        assert_eq!(log.sample(1 + cap, 2.5), Some(0.5));
    }
}
