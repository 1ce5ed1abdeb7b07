//! ns-2's Vegas agent (`Agent/TCP/Vegas`, USC NetBSD Vegas) as a sender: its own loss
//! recovery, driving any controller (docs/vegas-implementations.md, "ns-2's Vegas agent").
//! The Vegas window rule itself (rounds, slow start every other round, the alpha/beta decision) is the
//! controller's ([`crate::vegas`] and the variants).
//!
//! What the agent does, per ACK:
//! 1. RTT samples come from a fine-grained send-time table indexed by sequence number modulo
//!    the receiver window (`v_sendtime_`, `v_transmits_`); only packets sent once give
//!    samples. Each sample goes to the controller (`pkts_acked`) and updates a fine-grained
//!    timeout (Jacobson mean/deviation, plus 1/16). The first ACK initialises both from the
//!    time since the first send (`cwnd_event(FirstAck)`).
//! 2. On a new ACK the controller's `cong_avoid` runs before the ACK's own sample is taken
//!    (`VegasTcpAgent::recv` ends the round first).
//! 3. Duplicate ACKs (and the first two new ACKs after a retransmission) retransmit the
//!    oldest unacknowledged packet at once if its fine-grained timer expired, or on the
//!    third duplicate; the window is then cut to 2 / half / three quarters (the agent's cut,
//!    Brakmo and Peterson's), inflated by the duplicates and deflated on the next new ACK
//!    (with ssthresh 2). The controller hears `set_state(Recovery)`.
//! 4. A coarse timeout sets cwnd to 2 and ssthresh to half the window; the controller hears
//!    `set_state(Loss)`.
//! 5. Segments: exactly `packetSize_` bytes and no SYN (unless `vegas_headers`), plus any
//!    router-assist option the controller asks for (`tag_segment`).

use crate::controller::{Ack, CaState, CongestionControl, CwndEvent, RttSample};
use crate::state::{grown_len, send_much_with, slowdown, AckInfo, CwndAction, QueueingTimes, Segment, SenderState};
use crate::Nanos;

/// The ns-2 Vegas agent's recovery state (names follow ns-2's `v_*` variables).
#[derive(Clone, Debug)]
pub struct VegasAgent {
    /// Time (Vegas clock) of the last window cut on a retransmission.
    t_cwnd_changed: f64,
    firstrecv: f64,
    v_slowstart: f64,
    v_sa: f64,
    v_sd: f64,
    /// Fine-grained retransmission timeout, seconds.
    pub v_timeout: f64,
    v_worried: i64,
    v_newcwnd: f64,
    v_maxwnd: i64,
    /// ns-2's two tables of `v_maxwnd` slots, `v_sendtime_` and `v_transmits_` (filled with
    /// -1 and 0), as one table of (send time, transmits): only the prefix touched so far is
    /// stored (slots fill from 0 upwards), the rest reads as its initial value. A short
    /// connection with a large window thus costs little memory.
    ///
    /// One table, not two: every send and every ACK reads or writes both values of a slot,
    /// which are then one cache line. The clearing loop's `% v_maxwnd` is a compare instead
    /// of a division.
    v_table: Vec<(f64, i32)>,
}

impl Default for VegasAgent {
    fn default() -> Self {
        VegasAgent {
            t_cwnd_changed: 0.0,
            firstrecv: -1.0,
            v_slowstart: 2.0,
            v_sa: 0.0,
            v_sd: 0.0,
            v_timeout: 1000.0,
            v_worried: 0,
            v_newcwnd: 0.0,
            v_maxwnd: 0,
            v_table: Vec::new(),
        }
    }
}

impl VegasAgent {
    /// Drop the send-time tables (see `Sender::release_buffers`).
    pub(crate) fn release_buffers(&mut self) {
        self.v_table = Vec::new();
    }

    /// ns-2's Vegas clock: seconds since the first packet was sent, on the sender's clock
    /// (`SenderState::clock`, ns-2's double-precision scheduler time by default).
    fn vegastime(s: &SenderState) -> f64 {
        s.elapsed()
    }

    /// ns-2's `seqno % v_maxwnd`. Every caller's sequence number is at least 0 (one past an
    /// ACK point, which starts at -1), so the remainder is taken unsigned: the same value
    /// without `rem_euclid`'s sign fix-up and overflow test.
    fn slot(&self, seq: i64) -> usize {
        debug_assert!(seq >= 0 && self.v_maxwnd > 0);
        (seq as u64 % self.v_maxwnd as u64) as usize
    }

    #[inline]
    fn sendtime(&self, i: usize) -> f64 {
        self.v_table.get(i).map_or(-1.0, |e| e.0)
    }

    #[inline]
    fn transmits(&self, i: usize) -> i32 {
        self.v_table.get(i).map_or(0, |e| e.1)
    }

    /// Store slot `i` (grow the stored prefix geometrically, up to `v_maxwnd`).
    #[inline(always)]
    fn touch(&mut self, i: usize) {
        if i >= self.v_table.len() {
            self.grow(i);
        }
    }

    #[cold]
    #[inline(never)]
    fn grow(&mut self, i: usize) {
        let n = grown_len(self.v_table.len(), i, self.v_maxwnd as usize);
        self.v_table.resize(n, (-1.0, 0));
    }

    /// `TcpAgent::window()`: cwnd capped by the receiver window (no inflation term).
    fn window(s: &SenderState) -> i64 {
        if s.cwnd < s.cfg.window {
            s.cwnd as i64
        } else {
            s.cfg.window as i64
        }
    }

    pub fn send_much(&mut self, s: &mut SenderState, cc: &mut dyn CongestionControl, now: Nanos, burst: u32) {
        send_much_with(s, now, burst, Self::window(s), |s, now, seq| self.output(s, cc, now, seq));
    }

    /// `VegasTcpAgent::output`: record a fine-grained send time and transmit count.
    fn output(&mut self, s: &mut SenderState, cc: &mut dyn CongestionControl, now: Nanos, seqno: i64) {
        if seqno == 0 {
            // ns-2 sizes the tables by the receiver window at the first packet.
            self.v_maxwnd = (s.cfg.window as i64).max(1);
            self.v_table.clear();
        }
        let i = self.slot(seqno);
        self.touch(i);
        let slot = &mut self.v_table[i];
        slot.0 = Self::vegastime(s);
        slot.1 += 1;
        let mut wire = s.cfg.packet_size + if s.cfg.vegas_headers { s.cfg.header_bytes } else { 0 };
        let option = s.tag(cc);
        wire += option.unwrap_or(0);
        let fresh = seqno > s.maxseq;
        s.emit(
            now,
            Segment {
                timestamp_ms: 0,
                seqno,
                wire_bytes: wire,
                payload_bytes: s.cfg.packet_size,
                syn: false,
                retransmission: !fresh,
                probe: option.is_some(),
            },
            false,
        );
    }

    /// The oldest unacknowledged packet (ack + 1) if its fine-grained timer expired.
    fn expired(&self, s: &SenderState, ack: i64) -> Option<i64> {
        let elapsed = Self::vegastime(s) - self.sendtime(self.slot(ack + 1));
        (elapsed >= self.v_timeout).then_some(ack + 1)
    }

    /// Process one ACK (`VegasTcpAgent::recv`).
    pub fn recv(&mut self, s: &mut SenderState, cc: &mut dyn CongestionControl, now: Nanos, ack: &AckInfo) {
        let t = Self::vegastime(s);
        let seqno = ack.seqno;
        if self.firstrecv < 0.0 {
            // The first ACK initialises the RTT state with the time since the first send.
            self.firstrecv = t;
            self.v_sa = t * 8.0;
            self.v_sd = t;
            self.v_timeout = ((self.v_sa / 4.0) + self.v_sd) / 2.0;
            let mut w = s.window();
            cc.cwnd_event(&mut w, CwndEvent::FirstAck { elapsed: t });
            s.apply(&w);
        }
        if seqno > s.last_ack {
            self.new_ack(s, cc, now, t, seqno, ack.queueing);
        } else if seqno == s.last_ack {
            self.dup_ack(s, cc, now, t, seqno);
        }
        if s.dupacks == 0 || s.dupacks > s.cfg.dupacks - 1 {
            let burst = s.cfg.max_burst;
            self.send_much(s, cc, now, burst);
        }
    }

    fn new_ack(
        &mut self,
        s: &mut SenderState,
        cc: &mut dyn CongestionControl,
        now: Nanos,
        t: f64,
        seqno: i64,
        queueing: Option<QueueingTimes>,
    ) {
        if s.last_ack == 0 && s.cfg.delay_growth {
            s.cwnd = s.window_init;
        }
        // Deflate a window inflated by duplicate ACKs during recovery.
        if s.dupacks > s.cfg.dupacks && s.cwnd > self.v_newcwnd {
            s.cwnd = self.v_newcwnd;
            s.ssthresh = 2;
        }
        let oldack = s.last_ack;
        s.newack(now, seqno);
        s.check_finished(now);

        // The controller's per-ACK (and once-per-round) window decision, before this ACK's
        // own RTT sample, as ns-2 orders them.
        let mut w = s.window();
        cc.cong_avoid(&mut w, &Ack { seqno, acked: seqno - oldack, now, elapsed: t });
        s.apply(&w);

        self.take_rtt_sample(s, cc, now, t, seqno, oldack, queueing);

        // The first two new ACKs after a retransmission: resend if another timer expired.
        if self.v_worried > 0 {
            self.v_worried -= 1;
            match self.expired(s, seqno) {
                Some(seq) => {
                    s.dupacks = s.cfg.dupacks;
                    self.output(s, cc, now, seq);
                    s.stats.fast_retransmits += 1;
                }
                None => self.v_worried = 0,
            }
        }
    }

    /// Clear the table entries of the newly acknowledged packets and, if the acknowledged
    /// packet was sent once, take its RTT sample. The clearing walks slot indices upward and
    /// stops at the end of the table, as ns-2's loop does, so a range that wraps around the
    /// table is not cleared (an ns-2 artefact kept on purpose).
    #[allow(clippy::too_many_arguments)]
    fn take_rtt_sample(
        &mut self,
        s: &mut SenderState,
        cc: &mut dyn CongestionControl,
        now: Nanos,
        t: f64,
        seqno: i64,
        oldack: i64,
        queueing: Option<QueueingTimes>,
    ) {
        let i = self.slot(seqno);
        let send_time = self.sendtime(i);
        let transmits = self.transmits(i);
        let mut range = seqno - oldack;
        let last = i as i64;
        let mut k = self.slot(oldack + 1) as i64;
        while k <= last && range > 0 {
            // Slots beyond the stored prefix already hold these values.
            if let Some(e) = self.v_table.get_mut(k as usize) {
                *e = (-1.0, 0);
            }
            // (k + 1) % v_maxwnd without a division: k < v_maxwnd here.
            k += 1;
            if k == self.v_maxwnd {
                k = 0;
            }
            range -= 1;
        }
        if send_time != 0.0 && transmits == 1 {
            let rtt = t - send_time;
            let mut w = s.window();
            cc.pkts_acked(&mut w, &RttSample { now, rtt, queueing });
            s.apply(&w);
            if rtt > 0.0 {
                s.note_rtt_sample(rtt);
                let mut n = rtt - self.v_sa / 8.0;
                self.v_sa += n;
                n = n.abs();
                n -= self.v_sd / 4.0;
                self.v_sd += n;
                self.v_timeout = ((self.v_sa / 4.0) + self.v_sd) / 2.0;
                self.v_timeout += self.v_timeout / 16.0;
            }
        }
    }

    fn dup_ack(&mut self, s: &mut SenderState, cc: &mut dyn CongestionControl, now: Nanos, t: f64, seqno: i64) {
        s.dupacks += 1;
        let expired = self.expired(s, seqno);
        if expired.is_some() || s.dupacks == s.cfg.dupacks {
            let slot = self.slot(s.last_ack + 1);
            let send_time = self.sendtime(slot);
            let transmits = self.transmits(slot);
            // bugFix_: no repeated fast retransmits right after a coarse timeout.
            if s.highest_ack > s.recover || s.last_cwnd_action != CwndAction::Timeout {
                let mut win = Self::window(s);
                s.last_cwnd_action = CwndAction::DupAck;
                s.recover = s.maxseq;
                self.v_worried = 2.min(s.t_seqno - s.last_ack);
                if transmits > 1 {
                    self.v_timeout *= 2.0;
                } else {
                    self.v_timeout += self.v_timeout / 8.0;
                }
                // Cut the window only if it has not changed since the packet was sent.
                if self.t_cwnd_changed < send_time {
                    if win <= 3 {
                        win = 2;
                    } else if transmits > 1 {
                        win >>= 1;
                    } else {
                        win -= win >> 2;
                    }
                    self.v_newcwnd = win as f64;
                    s.cwnd = self.v_newcwnd + s.dupacks as f64;
                    self.t_cwnd_changed = t;
                    cc.set_state(&s.window(), CaState::Recovery);
                }
                s.reset_rtx_timer(now, true, true);
                let seq = expired.unwrap_or(s.last_ack + 1);
                self.output(s, cc, now, seq);
                s.stats.fast_retransmits += 1;
                if transmits == 1 {
                    s.dupacks = s.cfg.dupacks;
                }
            }
        } else if s.dupacks > s.cfg.dupacks {
            s.cwnd += 1.0;
        }
    }

    /// Coarse retransmission timeout (`VegasTcpAgent::timeout`).
    pub fn timeout(&mut self, s: &mut SenderState, cc: &mut dyn CongestionControl, now: Nanos) {
        if s.highest_ack == s.maxseq && !s.cfg.slow_start_restart {
            // slow_start_restart_ off: nothing outstanding, so ns-2's Vegas agent does nothing
            // at all (the timer is not re-armed; the next send arms it).
            return;
        }
        s.dupacks = 0;
        s.recover = s.maxseq;
        s.last_cwnd_action = CwndAction::Timeout;
        if s.highest_ack != s.maxseq {
            // ns-2 counts every firing (nrexmit_); only those with data outstanding are
            // timeouts in our results.
            s.stats.timeouts += 1;
        }
        s.reset_rtx_timer(now, false, true);
        let w = s.cwnd.min(s.cfg.window);
        s.slowdown(slowdown::CWND_RESTART | slowdown::SSTHRESH_HALF, w);
        s.cwnd = self.v_slowstart;
        cc.set_state(&s.window(), CaState::Loss);
        self.v_newcwnd = 0.0;
        self.t_cwnd_changed = Self::vegastime(s);
        self.send_much(s, cc, now, 0);
    }
}
