//! Linux's TCP sender (6.x, default sysctls): the machinery around a congestion controller
//! that decides when segments are sent, found lost and sent again, and how the window moves
//! while loss is repaired. The `tcp.stack = "linux"` sender; ns-2's agents
//! ([`crate::tcp_agent`], [`crate::vegas_agent`]) are untouched by it.
//!
//! Per ACK, in `tcp_ack`'s order (`net/ipv4/tcp_input.c`):
//! 1. the SACK blocks update the scoreboard ([`scoreboard`], `tcp_sacktag_write_queue`;
//!    RFC 2018), then the cumulative ACK removes what it covers (`tcp_clean_rtx_queue`);
//! 2. RTT samples as `tcp_ack_update_rtt` takes them: from the oldest and newest segment
//!    newly delivered that was sent once (Karn's rule: none if retransmitted data is
//!    acknowledged), else from the newest SACKed, else from the echoed timestamp in whole
//!    milliseconds (RFC 7323 section 4); they feed Linux's RTO ([`rtt`]) and the
//!    controller's `pkts_acked`;
//! 3. the tail-loss-probe outcome (`tcp_process_tlp_ack`, RFC 8985 section 7.4);
//! 4. the state machine (`tcp_fastretrans_alert`): recovery ends when everything sent before
//!    it is acknowledged (cwnd = ssthresh after a fast recovery, `tcp_end_cwnd_reduction`);
//!    RACK marks losses ([`rack`], RFC 8985 section 6); a loss found in Open or Disorder
//!    enters Recovery with the controller's `ssthresh` (`tcp_enter_recovery`);
//! 5. the window: proportional rate reduction in Recovery and CWR (`tcp_cwnd_reduction`,
//!    RFC 6937 with Linux's bound: the slow-start reduction bound only on ACKs that advance
//!    `snd_una` and find no new loss), else the controller's `cong_avoid` if the ACK
//!    acknowledged data, told whether the sender is cwnd-limited (`tcp_is_cwnd_limited`);
//! 6. the timer: the tail loss probe in Open and CWR (PTO = 2 SRTT + 2 ms, or + 200 ms with a
//!    single segment out, `tcp_schedule_loss_probe`), else the RTO, now + RTO
//!    (`tcp_rearm_rto`, RFC 6298 section 5.3), unless RACK armed its reordering timer;
//! 7. retransmissions of the segments marked lost, in order, while the pipe is below cwnd
//!    (`tcp_xmit_retransmit_queue`), then new data (`tcp_write_xmit`).
//!
//! The pipe is Linux's (`tcp_packets_in_flight`): segments out less those SACKed or lost,
//! plus retransmissions in flight; a segment leaves while the pipe is below cwnd. An RTO
//! marks everything not SACKed lost (`tcp_enter_loss`), sets cwnd to the pipe plus one,
//! backs the timer off and resends the first segment; recovery from it slow-starts through
//! the controller's `cong_avoid`.
//!
//! A reduction that proves spurious is undone (`tcp_try_undo_loss`, `tcp_try_undo_recovery`):
//! an ACK echoing a timestamp from before the first retransmission (Eifel, RFC 3522), or
//! F-RTO's verdict after a timeout (RFC 5682). Not modelled, each named in docs/decisions.md:
//! undo by DSACKs and partial undo (the paths here neither reorder nor duplicate), the
//! adaptation of RACK's reordering window to DSACKs, pacing, TSO, ECN, and
//! `tcp_cwnd_application_limited`.

pub mod rack;
pub mod rtt;
pub mod scoreboard;

use crate::config::LinuxTcp;
use crate::controller::{Ack, CaState, CongestionControl, CwndEvent, Loss, LossKind, RttSample};
use crate::cubic::INFINITE_SSTHRESH;
pub use crate::state::LinuxAck;
use crate::state::{AckInfo, Segment, SenderState};
use crate::{secs, Nanos};
use rack::Rack;
use rtt::{jiffies_ns, micros, LinuxRtt};
use scoreboard::{Scoreboard, EVER_RETRANS, LOST, RETRANS, SACKED};

/// Which timer holds the connection's one retransmission-timer slot (`icsk_pending`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Timer {
    Rto,
    /// The tail loss probe.
    Probe,
    /// RACK's reordering timer.
    Reorder,
}

/// Linux's congestion states (`tcp_ca_state`), Disorder and CWR included: the controller
/// hears every change (`set_state`, before the change, as Linux calls it).
fn in_reduction(state: CaState) -> bool {
    matches!(state, CaState::Recovery | CaState::Cwr)
}

/// The Linux sender's machinery.
#[derive(Clone, Debug)]
pub struct LinuxAgent {
    opts: LinuxTcp,
    board: Scoreboard,
    rtt: LinuxRtt,
    rack: Rack,
    state: CaState,
    /// `snd_nxt` when the current reduction or loss episode began (`high_seq`).
    high_seq: i64,
    /// cwnd when the reduction began (`prior_cwnd`).
    prior_cwnd: f64,
    prr_delivered: i64,
    prr_out: i64,
    /// `snd_nxt` after a tail loss probe, while its outcome is open (`tlp_high_seq`).
    tlp_high_seq: Option<i64>,
    /// The probe was a retransmission (`tlp_retrans`).
    tlp_retrans: bool,
    timer: Option<Timer>,
    /// The duplicate-ACK threshold and reordering degree (`tp->reordering`, `tcp.dupacks`).
    reordering: i64,
    /// Duplicate ACKs counted as SACKed segments without SACK (`tcp_add_reno_sack`).
    reno_sacked: i64,
    /// RTO retransmissions since `snd_una` last advanced (`icsk_retransmits`).
    rto_retransmits: u32,
    /// Segments marked lost so far (`tp->lost`).
    lost_total: u64,
    /// `tcp_cwnd_validate`'s record: cwnd-limited in the current window, the most segments
    /// out in it, and the window's end.
    is_cwnd_limited: bool,
    max_packets_out: i64,
    cwnd_usage_seq: i64,
    /// The first ACK (of the SYN, or of the first segment) has arrived.
    established: bool,
    /// Undo of a reduction found spurious: `snd_una` when the episode began (`undo_marker`),
    /// while undo is possible, and ssthresh before the cut (`prior_ssthresh`).
    undo_marker: Option<i64>,
    prior_ssthresh: i64,
    /// The timestamp of the episode's first retransmission (`retrans_stamp`), ms.
    retrans_stamp: Option<u32>,
    /// F-RTO (RFC 5682, SACK-enhanced, `tcp_frto = 2`) is judging the last RTO.
    frto: bool,
    /// What the ACK being processed says, for the state machine.
    flags: AckFlags,
}

/// What one ACK did, as `tcp_fastretrans_alert` and F-RTO read it (Linux's `FLAG_*`).
#[derive(Clone, Copy, Debug, Default)]
struct AckFlags {
    /// `FLAG_SND_UNA_ADVANCED`.
    advanced: bool,
    /// `FLAG_DATA_SACKED`.
    sacked: bool,
    /// A duplicate ACK: nothing acknowledged or SACKed.
    dupack: bool,
    /// `FLAG_ORIG_SACK_ACKED`: data sent once and sent before the episode was delivered.
    original_delivered: bool,
    /// The timestamp echoed (TSecr), ms.
    echo: Option<u32>,
}

/// What the Loss state resends on an ACK (`REXMIT_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Rexmit {
    None,
    /// The segments marked lost.
    Lost,
    /// New data instead (F-RTO's step 2b).
    New,
}

impl LinuxAgent {
    pub fn new(opts: LinuxTcp, s: &SenderState) -> Self {
        let cfg = &s.cfg;
        LinuxAgent {
            opts,
            board: Scoreboard::new(0),
            rtt: LinuxRtt::new(cfg.min_rto, cfg.max_rto, cfg.initial_rto),
            rack: Rack::default(),
            state: CaState::Open,
            high_seq: 0,
            prior_cwnd: 0.0,
            prr_delivered: 0,
            prr_out: 0,
            tlp_high_seq: None,
            tlp_retrans: false,
            timer: None,
            reordering: cfg.dupacks,
            reno_sacked: 0,
            rto_retransmits: 0,
            lost_total: 0,
            is_cwnd_limited: false,
            max_packets_out: 0,
            cwnd_usage_seq: 0,
            established: false,
            undo_marker: None,
            prior_ssthresh: 0,
            retrans_stamp: None,
            frto: false,
            flags: AckFlags::default(),
        }
    }

    /// The initial ssthresh of a Linux connection (`TCP_INFINITE_SSTHRESH`), set before the
    /// controller's `init`.
    pub const INITIAL_SSTHRESH: i64 = INFINITE_SSTHRESH;

    /// The congestion state (for tests and tools).
    pub fn ca_state(&self) -> CaState {
        self.state
    }

    /// The pipe (`tcp_packets_in_flight`), duplicate ACKs counted as SACKs without SACK.
    fn in_flight(&self) -> i64 {
        self.board.in_flight() - self.reno_sacked
    }

    fn sacked_out(&self) -> i64 {
        self.board.sacked_out + self.reno_sacked
    }

    /// What the controller sees, with Linux's cwnd-limited verdict.
    fn window(&self, s: &SenderState) -> crate::controller::Window {
        let mut w = s.window();
        w.cwnd_limited = !self.opts.cwnd_limited || self.cwnd_limited(s);
        w
    }

    /// `tcp_is_cwnd_limited`: cwnd-limited at some point in the current window, or in slow
    /// start with cwnd below twice the most segments out.
    fn cwnd_limited(&self, s: &SenderState) -> bool {
        self.is_cwnd_limited || (s.cwnd < s.ssthresh as f64 && s.cwnd < 2.0 * self.max_packets_out as f64)
    }

    fn set_state(&mut self, s: &SenderState, cc: &mut dyn CongestionControl, state: CaState) {
        if self.state != state {
            cc.set_state(&self.window(s), state);
            self.state = state;
        }
    }

    /// Keep the shared state's view of the sequence space up to date.
    fn sync(&self, s: &mut SenderState) {
        s.t_seqno = self.board.nxt();
        s.last_ack = self.board.una - 1;
        s.highest_ack = s.last_ack;
        s.maxseq = s.maxseq.max(self.board.nxt() - 1);
    }

    /// The application has data, or an ACK opened the window: send what may leave.
    pub fn send_much(&mut self, s: &mut SenderState, cc: &mut dyn CongestionControl, now: Nanos) {
        self.idle_restart(s, cc, now);
        self.write_xmit(s, cc, now, false);
        self.sync(s);
    }

    /// RFC 2861 restart after idle (`tcp_slow_start_after_idle_check`, `tcp_cwnd_restart`):
    /// nothing out and nothing sent for longer than the RTO halves cwnd once per RTO elapsed,
    /// down to the initial window.
    fn idle_restart(&mut self, s: &mut SenderState, cc: &mut dyn CongestionControl, now: Nanos) {
        if !self.opts.slow_start_after_idle || !self.established || self.board.packets_out() > 0 || s.t_seqno >= s.curseq {
            return;
        }
        let rto = self.rtt.backed_off_ns().max(1);
        let mut idle = now.saturating_sub(s.last_send);
        if idle <= rto {
            return;
        }
        let mut w = self.window(s);
        cc.cwnd_event(&mut w, CwndEvent::CwndRestart);
        s.apply(&w);
        s.ssthresh = current_ssthresh(s);
        let restart = s.window_init.min(s.cwnd);
        let mut cwnd = s.cwnd;
        while idle > rto && cwnd > restart {
            idle -= rto;
            cwnd = (cwnd / 2.0).floor();
        }
        s.cwnd = cwnd.max(restart);
    }

    /// `tcp_write_xmit`: new segments while the pipe is below cwnd and the receiver's window
    /// allows (`probe`: one segment whatever cwnd says, the loss probe's).
    fn write_xmit(&mut self, s: &mut SenderState, cc: &mut dyn CongestionControl, now: Nanos, probe: bool) -> i64 {
        let mut sent = 0;
        let mut cwnd_limited = false;
        let window_end = self.board.una + s.cfg.window as i64;
        while self.board.nxt() < s.curseq && self.board.nxt() < window_end {
            if self.in_flight() >= s.cwnd as i64 && !(probe && sent == 0) {
                cwnd_limited = true;
                break;
            }
            let seq = self.board.nxt();
            if !(seq == 0 && s.cfg.syn) {
                self.data_sent(s, cc, now);
            }
            let first = self.board.packets_out() == 0;
            self.board.push_new(now);
            self.output(s, cc, now, seq, false);
            sent += 1;
            if first || self.timer == Some(Timer::Probe) {
                // `tcp_event_new_data_sent`: the timer restarts from this segment.
                self.rearm_rto(s, now);
            }
            if probe {
                break;
            }
        }
        // However the loop ended, a full pipe is cwnd-limited (`tcp_write_xmit`).
        cwnd_limited |= self.in_flight() >= s.cwnd as i64;
        if sent > 0 || cwnd_limited {
            self.cwnd_validate(cwnd_limited);
        }
        if sent > 0 {
            if in_reduction(self.state) {
                self.prr_out += sent;
            }
            if !probe {
                self.schedule_probe(s, now, false);
            }
        }
        sent
    }

    /// A data segment, new or resent, is about to leave: with nothing in flight the controller
    /// hears CA_EVENT_TX_START (`tcp_event_data_sent`, for every transmission).
    fn data_sent(&mut self, s: &mut SenderState, cc: &mut dyn CongestionControl, now: Nanos) {
        if self.in_flight() == 0 {
            let mut w = self.window(s);
            cc.cwnd_event(&mut w, CwndEvent::TxStart { now, last_send: s.last_send });
            s.apply(&w);
        }
    }

    /// `tcp_cwnd_validate`: remember, per window, whether the sender was cwnd-limited and the
    /// most segments it had out.
    fn cwnd_validate(&mut self, cwnd_limited: bool) {
        let packets_out = self.board.packets_out();
        if self.board.una >= self.cwnd_usage_seq || cwnd_limited || (!self.is_cwnd_limited && packets_out > self.max_packets_out) {
            self.is_cwnd_limited = cwnd_limited;
            self.max_packets_out = packets_out;
            self.cwnd_usage_seq = self.board.nxt();
        }
    }

    /// Put segment `seq` on the wire (new or again).
    fn output(&mut self, s: &mut SenderState, cc: &mut dyn CongestionControl, now: Nanos, seq: i64, again: bool) {
        let syn = seq == 0 && s.cfg.syn;
        if syn && s.maxseq == -1 {
            s.curseq += 1; // the SYN takes a sequence number of its own
        }
        let (mut wire, payload) = if syn { (s.cfg.header_bytes, 0) } else { (s.cfg.packet_size + s.cfg.header_bytes, s.cfg.packet_size) };
        let option = if syn { None } else { s.tag(cc) };
        wire += option.unwrap_or(0);
        s.stats.pkts_sent += 1;
        s.stats.bytes_sent += wire as u64;
        if again {
            s.stats.retransmitted_pkts += 1;
        }
        s.maxseq = s.maxseq.max(seq);
        s.last_send = now;
        s.outbox.push(Segment { timestamp_ms: timestamp_ms(now), seqno: seq, wire_bytes: wire, payload_bytes: payload, syn, retransmission: again, probe: option.is_some() });
    }

    /// Arm the one timer slot.
    fn arm(&mut self, s: &mut SenderState, kind: Timer, delay: Nanos, now: Nanos) {
        self.timer = Some(kind);
        s.rtx_deadline = Some(now.saturating_add(delay));
        s.rtx_armed_at = now;
        s.rtx_clock = s.clock + secs(delay);
    }

    fn cancel(&mut self, s: &mut SenderState) {
        self.timer = None;
        s.rtx_deadline = None;
    }

    /// `tcp_rearm_rto`: the RTO from now, or from the first segment's send when a probe or
    /// reordering timer gives way to it; none with nothing out.
    fn rearm_rto(&mut self, s: &mut SenderState, now: Nanos) {
        if self.board.packets_out() == 0 {
            self.cancel(s);
            return;
        }
        let mut delay = self.rtt.backed_off_ns();
        if matches!(self.timer, Some(Timer::Probe | Timer::Reorder)) {
            let head = self.board.get(self.board.una).map_or(now, |h| h.sent);
            let left = (head + delay) as i64 - now as i64;
            delay = jiffies_ns(left.max(1_000) / 1_000);
        }
        self.arm(s, Timer::Rto, delay, now);
    }

    /// `tcp_schedule_loss_probe`: the probe timer, in Open or CWR with SACK and RACK-TLP on;
    /// `from_ack`: the RTO bound is a whole RTO, else what is left of the first segment's.
    fn schedule_probe(&mut self, s: &mut SenderState, now: Nanos, from_ack: bool) -> bool {
        if !self.opts.rack_tlp || !self.opts.sack || self.board.packets_out() == 0 || !matches!(self.state, CaState::Open | CaState::Cwr) {
            return false;
        }
        let srtt = self.rtt.srtt_us();
        let mut timeout = if srtt > 0 {
            let extra = if self.board.packets_out() == 1 { jiffies_ns(micros((s.cfg.min_rto * 1e9) as Nanos)) } else { 2_000_000 };
            jiffies_ns(2 * srtt) + extra
        } else {
            jiffies_ns((s.cfg.initial_rto * 1e6) as i64)
        };
        let rto_left = if from_ack {
            self.rtt.backed_off_ns() as i64
        } else {
            let head = self.board.get(self.board.una).map_or(now, |h| h.sent);
            (head + self.rtt.backed_off_ns()) as i64 - now as i64
        };
        if rto_left > 0 {
            timeout = timeout.min(jiffies_ns(rto_left / 1_000));
        }
        self.arm(s, Timer::Probe, timeout, now);
        true
    }

    /// `tcp_set_xmit_timer`: after an ACK that acknowledged data.
    fn set_xmit_timer(&mut self, s: &mut SenderState, now: Nanos) {
        if !self.schedule_probe(s, now, true) {
            self.rearm_rto(s, now);
        }
    }

    /// Process one ACK.
    pub fn recv(&mut self, s: &mut SenderState, cc: &mut dyn CongestionControl, now: Nanos, ack: &AckInfo) {
        let una = ack.seqno + 1;
        if una > self.board.nxt() {
            return; // acknowledges what was never sent
        }
        let prior_una = self.board.una;
        let prior_lost = self.lost_total;
        let advanced = una > prior_una;
        let min_rtt = self.rtt.min_rtt_us();
        // 1. The scoreboard: SACK blocks, then the cumulative ACK.
        let mut tagged = scoreboard::Tagged::default();
        let report = ack.linux.filter(|_| self.opts.sack);
        let mut dsack_probe = false;
        if let Some(r) = &report {
            let (rack, highest) = (&mut self.rack, self.board.highest_sack);
            // In sequence order, as `tcp_sacktag_write_queue` walks them.
            let mut blocks = r.blocks;
            blocks[..r.count as usize].sort_unstable();
            for &(lo, hi) in &blocks[..r.count as usize] {
                let t = self.board.sack(lo, hi, |seq, seg| {
                    if seg.flags & EVER_RETRANS == 0 && seq < highest {
                        rack.reord_seen += 1; // delivered out of the order it was sent
                    }
                    rack.advance(seq, seg, now, min_rtt);
                });
                tagged.sacked += t.sacked;
                tagged.first_sent = match (tagged.first_sent, t.first_sent) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                };
                tagged.last_sent = tagged.last_sent.max(t.last_sent);
            }
            dsack_probe = r.dsack.is_some_and(|d| self.tlp_high_seq == Some(d + 1));
        }
        if una < prior_una {
            // An old ACK: its SACK information only, for the state machine (`tcp_ack`'s old_ack).
            if tagged.sacked > 0 {
                self.flags = AckFlags { sacked: true, echo: ack.linux.and_then(|r| r.echo_ms), ..AckFlags::default() };
                let (_, retransmit) = self.fastretrans_alert(s, cc, now, false);
                if retransmit {
                    self.xmit_retransmit_queue(s, cc, now);
                }
                self.sync(s);
            }
            return;
        }
        let rack = &mut self.rack;
        let cleaned = self.board.ack(una, |seq, seg| rack.advance(seq, seg, now, min_rtt));
        let dupack = !advanced && tagged.sacked == 0 && self.board.packets_out() > 0;
        if !self.opts.sack {
            self.count_reno_dupacks(cleaned.delivered, advanced, dupack);
        }
        if advanced {
            self.rto_retransmits = 0;
        }
        if advanced && !self.established {
            self.established = true;
            if s.cfg.syn {
                self.handshake_done(s, cc, now, &cleaned);
                return;
            }
        }
        let delivered = cleaned.delivered + tagged.sacked + i64::from(!self.opts.sack && dupack);
        let original = cleaned.lowest_original.into_iter().chain(tagged.lowest_original).min();
        self.flags = AckFlags {
            advanced,
            sacked: tagged.sacked > 0,
            dupack,
            original_delivered: original.is_some_and(|q| q < self.high_seq),
            echo: ack.linux.and_then(|r| r.echo_ms).filter(|_| self.opts.timestamps),
        };
        // 2. RTT samples (`tcp_clean_rtx_queue`, `tcp_ack_update_rtt`).
        let age = |t: Option<Nanos>| t.map(|t| micros(now.saturating_sub(t)));
        let (mut seq_rtt, mut ca_rtt) = if cleaned.retrans_acked { (None, None) } else { (age(cleaned.first_sent), age(cleaned.last_sent)) };
        if tagged.first_sent.is_some() {
            ca_rtt = age(tagged.last_sent);
            if seq_rtt.is_none() {
                seq_rtt = age(tagged.first_sent);
            }
        }
        if seq_rtt.is_none() && advanced && self.opts.timestamps {
            if let Some(echo) = ack.linux.and_then(|r| r.echo_ms) {
                // The timestamp clock ticks in milliseconds; a sample is at least one tick.
                let ms = i64::from(timestamp_ms(now)) - i64::from(echo);
                let us = ms.max(1) * 1_000;
                seq_rtt = Some(us);
                ca_rtt = Some(us);
            }
        }
        if let (Some(seq_rtt), Some(ca_rtt)) = (seq_rtt, ca_rtt) {
            self.rtt.sample(seq_rtt, ca_rtt, now, self.board.una, self.board.nxt());
        }
        self.sync(s);
        if let Some(rtt) = ca_rtt {
            let rtt = rtt as f64 / 1e6;
            s.note_rtt_sample(rtt);
            let mut w = self.window(s);
            cc.pkts_acked(&mut w, &RttSample { now, rtt, queueing: ack.queueing });
            s.apply(&w);
        }
        // 3. The outcome of a tail loss probe.
        if let Some(high) = self.tlp_high_seq {
            self.process_probe_ack(s, cc, una, high, advanced, tagged.sacked > 0, dsack_probe);
        }
        // 4. The state machine, when the ACK is not a plain in-order one.
        let dubious = dupack || tagged.sacked > 0 || report.is_some_and(|r| r.dsack.is_some()) || self.state != CaState::Open;
        // The timer restarts on an ACK of data, and on a SACK of data sent before the first
        // segment's last transmission (`tcp_clean_rtx_queue`'s FLAG_SET_XMIT_TIMER).
        let head_sent = self.board.get(self.board.una).map(|h| h.sent);
        let sack_rearm = !advanced && tagged.first_sent.zip(head_sent).is_some_and(|(f, h)| f < h);
        let mut rearm = advanced || sack_rearm;
        let mut retransmit = false;
        if dubious {
            let (armed, rexmit) = self.fastretrans_alert(s, cc, now, advanced);
            if armed {
                rearm = false;
            }
            retransmit = rexmit;
        }
        if rearm {
            self.set_xmit_timer(s, now);
        }
        // 5. The window.
        let newly_lost = (self.lost_total - prior_lost) as i64;
        if in_reduction(self.state) {
            self.cwnd_reduction(s, delivered, newly_lost, advanced);
        } else if advanced || (self.reordering > s.cfg.dupacks && delivered > 0) {
            let mut w = self.window(s);
            cc.cong_avoid(&mut w, &Ack { seqno: ack.seqno, acked: delivered, now, elapsed: s.elapsed() });
            s.apply(&w);
        }
        // 6. Retransmissions, then new data.
        if retransmit {
            self.xmit_retransmit_queue(s, cc, now);
        }
        self.write_xmit(s, cc, now, false);
        self.sync(s);
        #[cfg(debug_assertions)]
        self.board.check();
        if una >= s.curseq {
            s.check_finished(now);
        }
    }

    /// The SYN is acknowledged: its RTT sample seeds the estimator (`tcp_ack_update_rtt` on the
    /// SYN-ACK), cwnd becomes the initial window (`tcp_init_transfer`, RFC 6928; with ns-2's
    /// `delay_growth`, which holds it at one segment until then), and the data starts. The
    /// controller is not told: Linux initialises it after this ACK, with nothing learnt from it.
    fn handshake_done(&mut self, s: &mut SenderState, cc: &mut dyn CongestionControl, now: Nanos, cleaned: &scoreboard::Cleaned) {
        if let (Some(first), false) = (cleaned.first_sent, cleaned.retrans_acked) {
            let rtt = micros(now.saturating_sub(first));
            self.rtt.sample(rtt, rtt, now, self.board.una, self.board.nxt());
        }
        if s.cfg.delay_growth {
            s.cwnd = s.window_init;
        }
        self.sync(s);
        self.write_xmit(s, cc, now, false);
        self.set_xmit_timer(s, now);
        self.sync(s);
    }

    /// Without SACK each duplicate ACK stands for a segment that arrived (`tcp_add_reno_sack`);
    /// a cumulative ACK takes them back (`tcp_remove_reno_sacks`).
    fn count_reno_dupacks(&mut self, acked: i64, advanced: bool, dupack: bool) {
        if advanced {
            if self.state == CaState::Recovery {
                self.reno_sacked = (self.reno_sacked - (acked - 1).max(0)).max(0);
            } else {
                self.reno_sacked = 0;
            }
        }
        if dupack {
            self.reno_sacked = (self.reno_sacked + 1).min((self.board.packets_out() - self.board.lost_out).max(0));
        }
    }

    /// RACK's window with this connection's state.
    fn reo_wnd(&self) -> i64 {
        let in_recovery = matches!(self.state, CaState::Recovery | CaState::Loss);
        self.rack.reo_wnd_us(in_recovery, self.sacked_out(), self.reordering, self.rtt.min_rtt_us(), self.rtt.srtt_us())
    }

    /// `tcp_identify_packet_loss`: RACK's marks (arming its timer when a segment still waits
    /// out its window: returns true then), or without RACK the duplicate threshold.
    fn identify_loss(&mut self, s: &mut SenderState, now: Nanos, una_advanced: bool) -> bool {
        if self.board.packets_out() == 0 {
            return false;
        }
        if !self.opts.sack {
            // `tcp_newreno_mark_lost`: the first segment, at the duplicate threshold or on a
            // partial ACK in recovery.
            if (!matches!(self.state, CaState::Recovery | CaState::Loss) && self.reno_sacked >= self.reordering)
                || (self.state == CaState::Recovery && una_advanced)
            {
                let una = self.board.una;
                if self.board.get(una).is_some_and(|h| !h.has(LOST)) && self.board.mark_lost(una) {
                    self.lost_total += 1;
                }
            }
            return false;
        }
        if !self.opts.rack_tlp {
            self.lost_total += self.mark_by_dupthresh();
            return false;
        }
        let reo = self.reo_wnd();
        let (marked, wait) = self.rack.mark_lost(&mut self.board, now, reo);
        self.lost_total += marked;
        if let Some(wait_us) = wait {
            // The reordering timer: the wait plus two jiffies, bounded by the RTO.
            let delay = (jiffies_ns(wait_us) + 2_000_000).min(self.rtt.backed_off_ns());
            self.arm(s, Timer::Reorder, delay, now);
            return true;
        }
        false
    }

    /// Without RACK: a segment is lost once `reordering` segments above it are SACKed
    /// (RFC 6675 section 4, IsLost).
    fn mark_by_dupthresh(&mut self) -> u64 {
        let mut above = 0;
        let mut lost = Vec::new();
        let segs: Vec<(i64, u8)> = self.board.iter().map(|(q, s)| (q, s.flags)).collect();
        for &(seq, flags) in segs.iter().rev() {
            if flags & SACKED != 0 {
                above += 1;
            } else if above >= self.reordering && flags & LOST == 0 {
                lost.push(seq);
            }
        }
        lost.into_iter().filter(|&q| self.board.mark_lost(q)).count() as u64
    }

    /// `tcp_fastretrans_alert`, for the states modelled. Returns (the reordering timer was
    /// armed, lost segments are to be retransmitted).
    fn fastretrans_alert(&mut self, s: &mut SenderState, cc: &mut dyn CongestionControl, now: Nanos, advanced: bool) -> (bool, bool) {
        let una = self.board.una;
        // D. Leaving a state once everything sent before it is acknowledged (Loss: below).
        if self.state == CaState::Open {
            self.retrans_stamp = None;
        } else if una >= self.high_seq {
            match self.state {
                CaState::Cwr if una != self.high_seq => {
                    self.end_cwnd_reduction(s);
                    self.set_state(s, cc, CaState::Open);
                }
                CaState::Recovery => {
                    // Without SACK the state holds until something beyond it is acknowledged.
                    if !(self.opts.sack || una > self.high_seq) {
                        return (false, false);
                    }
                    self.try_undo_recovery(s, cc);
                    self.end_cwnd_reduction(s);
                    self.reno_sacked = 0;
                }
                _ => {}
            }
        }
        // E. The state's own processing.
        match self.state {
            CaState::Recovery => (self.identify_loss(s, now, advanced), true),
            CaState::Loss => {
                let rexmit = self.process_loss(s, cc);
                let prior_retrans = self.board.retrans_out;
                let armed = self.identify_loss(s, now, advanced);
                // A retransmission found lost ends the Loss state in a recovery of its own
                // (FLAG_LOST_RETRANS), as an undo does in Open.
                let lost_retrans = self.board.retrans_out < prior_retrans;
                if self.state == CaState::Open || lost_retrans {
                    return self.open_branch(s, cc, now, advanced, armed);
                }
                (armed, rexmit == Rexmit::Lost)
            }
            _ => self.open_branch(s, cc, now, advanced, false),
        }
    }

    /// The Open, Disorder and CWR states' processing: a loss found starts a recovery.
    fn open_branch(&mut self, s: &mut SenderState, cc: &mut dyn CongestionControl, now: Nanos, advanced: bool, armed: bool) -> (bool, bool) {
        let armed = armed || self.identify_loss(s, now, advanced);
        if self.board.lost_out == 0 {
            // `tcp_try_to_open`: a CWR in progress runs its course.
            if !self.any_retrans_done() {
                self.retrans_stamp = None;
            }
            if self.state != CaState::Cwr {
                self.try_keep_open(s, cc);
            }
            return (armed, false);
        }
        self.enter_recovery(s, cc);
        (armed, true)
    }

    /// `tcp_process_loss`: the Loss state on an ACK, F-RTO included (RFC 5682 section 3.1).
    fn process_loss(&mut self, s: &mut SenderState, cc: &mut dyn CongestionControl) -> Rexmit {
        let f = self.flags;
        let recovered = self.board.una >= self.high_seq;
        if f.advanced && self.try_undo_loss(s, cc, false) {
            return Rexmit::None;
        }
        if self.frto {
            // Step 3b: data never resent and sent before the timeout arrived: it was spurious.
            if f.original_delivered && self.try_undo_loss(s, cc, true) {
                return Rexmit::None;
            }
            if self.board.nxt() > self.high_seq {
                if f.sacked || f.dupack {
                    self.frto = false; // step 3a: the loss was real
                }
            } else if f.advanced && !recovered {
                // Step 2b: new data, not retransmissions, while the window allows.
                self.high_seq = self.board.nxt();
                if self.board.nxt() < s.curseq && self.board.nxt() < self.board.una + s.cfg.window as i64 {
                    return Rexmit::New;
                }
                self.frto = false;
            }
        }
        if recovered {
            self.try_undo_recovery(s, cc);
            return Rexmit::None;
        }
        Rexmit::Lost
    }

    /// `tcp_packet_delayed`: the ACK echoes a timestamp older than the first retransmission,
    /// so an original transmission arrived (Eifel detection, RFC 3522).
    fn packet_delayed(&self) -> bool {
        match (self.retrans_stamp, self.flags.echo) {
            (Some(stamp), Some(echo)) => (echo.wrapping_sub(stamp) as i32) < 0,
            _ => false,
        }
    }

    /// `tcp_may_undo`: undo is armed and the reduction proved spurious. (Linux also undoes once
    /// DSACKs have reported every retransmission as needless; the paths here never duplicate.)
    fn may_undo(&self) -> bool {
        self.opts.undo && self.undo_marker.is_some() && self.packet_delayed()
    }

    /// `tcp_undo_cwnd_reduction`: the window and threshold from before the reduction.
    fn undo_cwnd_reduction(&mut self, s: &mut SenderState, cc: &mut dyn CongestionControl, unmark_loss: bool) {
        if unmark_loss {
            self.board.unmark_lost();
        }
        if self.prior_ssthresh > 0 {
            s.cwnd = cc.undo_cwnd(&self.window(s));
            s.ssthresh = s.ssthresh.max(self.prior_ssthresh);
        }
        self.undo_marker = None;
        self.rack.force_detection();
    }

    /// `tcp_try_undo_loss`: a spurious RTO is undone, the state Open again.
    fn try_undo_loss(&mut self, s: &mut SenderState, cc: &mut dyn CongestionControl, frto_undo: bool) -> bool {
        if !(frto_undo || self.may_undo()) {
            return false;
        }
        self.undo_cwnd_reduction(s, cc, true);
        self.rto_retransmits = 0;
        self.set_state(s, cc, CaState::Open);
        true
    }

    /// `tcp_try_undo_recovery`: the episode ends (Open), undone if it proved spurious.
    fn try_undo_recovery(&mut self, s: &mut SenderState, cc: &mut dyn CongestionControl) {
        if self.may_undo() {
            self.undo_cwnd_reduction(s, cc, false);
        }
        self.set_state(s, cc, CaState::Open);
    }

    /// `tcp_init_undo`: a reduction begins that may be undone.
    fn init_undo(&mut self) {
        self.undo_marker = Some(self.board.una);
    }

    /// `tcp_any_retrans_done`: a retransmission is in flight or the first segment was resent.
    fn any_retrans_done(&self) -> bool {
        self.board.retrans_out > 0 || self.board.get(self.board.una).is_some_and(|h| h.has(EVER_RETRANS))
    }

    /// A retransmission leaves: the episode's first one stamps it (`retrans_stamp`).
    fn note_retransmission(&mut self, now: Nanos) {
        self.retrans_stamp.get_or_insert(timestamp_ms(now));
    }

    /// `tcp_try_keep_open`: Disorder while anything is SACKed, lost or retransmitted, else Open.
    fn try_keep_open(&mut self, s: &mut SenderState, cc: &mut dyn CongestionControl) {
        let state = if self.sacked_out() + self.board.lost_out > 0 || self.any_retrans_done() { CaState::Disorder } else { CaState::Open };
        if self.state != state {
            self.set_state(s, cc, state);
            self.high_seq = self.board.nxt();
        }
    }

    /// `tcp_init_cwnd_reduction`: a new reduction episode with the controller's ssthresh.
    fn init_cwnd_reduction(&mut self, s: &mut SenderState, cc: &mut dyn CongestionControl, kind: LossKind) {
        self.high_seq = self.board.nxt();
        self.tlp_high_seq = None;
        self.prior_cwnd = s.cwnd;
        self.prr_delivered = 0;
        self.prr_out = 0;
        let w = self.window(s);
        s.ssthresh = cc.ssthresh(&w, &Loss { kind, window: s.cwnd }).ssthresh;
        s.first_decrease = false;
    }

    /// `tcp_enter_recovery`.
    fn enter_recovery(&mut self, s: &mut SenderState, cc: &mut dyn CongestionControl) {
        self.prior_ssthresh = 0;
        self.init_undo();
        if !in_reduction(self.state) {
            self.prior_ssthresh = current_ssthresh(s);
            self.init_cwnd_reduction(s, cc, LossKind::FastRetransmit);
        }
        self.set_state(s, cc, CaState::Recovery);
        if !self.opts.prr {
            s.cwnd = s.ssthresh as f64; // RFC 5681 section 3.2 step 2, without inflation
        }
    }

    /// `tcp_end_cwnd_reduction`: cwnd = ssthresh when the reduction ends.
    fn end_cwnd_reduction(&mut self, s: &mut SenderState) {
        if s.ssthresh < INFINITE_SSTHRESH && (self.state == CaState::Cwr || self.undo_marker.is_some()) {
            s.cwnd = s.ssthresh as f64;
        }
    }

    /// `tcp_cwnd_reduction` (RFC 6937 section 3, Linux's bound): cwnd = pipe + what may be
    /// sent on this ACK.
    fn cwnd_reduction(&mut self, s: &mut SenderState, delivered: i64, newly_lost: i64, una_advanced: bool) {
        if !self.opts.prr {
            return;
        }
        if delivered <= 0 || self.prior_cwnd < 1.0 {
            return;
        }
        let in_flight = self.in_flight();
        let delta = s.ssthresh - in_flight;
        self.prr_delivered += delivered;
        let mut sndcnt = if delta < 0 {
            // Proportional: out so far, in step with the reduction ssthresh / prior_cwnd.
            let prior = self.prior_cwnd as i64;
            (s.ssthresh * self.prr_delivered + prior - 1) / prior - self.prr_out
        } else {
            // Conservation, plus one (slow-start reduction bound) on an ACK that advanced
            // the cumulative point and revealed no new loss.
            let mut n = (self.prr_delivered - self.prr_out).max(delivered);
            if una_advanced && newly_lost == 0 {
                n += 1;
            }
            n.min(delta)
        };
        // The fast retransmit leaves at once.
        sndcnt = sndcnt.max(i64::from(self.prr_out == 0));
        s.cwnd = (in_flight + sndcnt) as f64;
    }

    /// `tcp_process_tlp_ack`: a probe repaired a loss if the ACK covers beyond it and the probe
    /// was a retransmission the receiver did not report as a duplicate: a one-shot reduction.
    #[allow(clippy::too_many_arguments)]
    fn process_probe_ack(&mut self, s: &mut SenderState, cc: &mut dyn CongestionControl, una: i64, high: i64, advanced: bool, sacked: bool, dsack_probe: bool) {
        if una < high {
            return;
        }
        if !self.tlp_retrans || dsack_probe {
            self.tlp_high_seq = None;
        } else if una > high {
            self.init_cwnd_reduction(s, cc, LossKind::FastRetransmit);
            self.set_state(s, cc, CaState::Cwr);
            self.end_cwnd_reduction(s);
            self.try_keep_open(s, cc);
        } else if !(advanced || sacked) {
            self.tlp_high_seq = None;
        }
    }

    /// `tcp_xmit_retransmit_queue`: the segments marked lost, in order, while the pipe is
    /// below cwnd; the timer restarts when the first one goes.
    fn xmit_retransmit_queue(&mut self, s: &mut SenderState, cc: &mut dyn CongestionControl, now: Nanos) {
        let mut rearm = false;
        for seq in self.board.una..self.board.nxt() {
            if s.cwnd as i64 - self.in_flight() <= 0 || self.board.retrans_out >= self.board.lost_out {
                break;
            }
            if !self.board.get(seq).is_some_and(|g| g.has(LOST) && !g.has(SACKED) && !g.has(RETRANS)) {
                continue;
            }
            self.data_sent(s, cc, now);
            self.note_retransmission(now);
            self.board.retransmit(seq, now);
            self.output(s, cc, now, seq, true);
            if self.state != CaState::Loss {
                s.stats.fast_retransmits += 1; // Linux's TCPFastRetrans; in Loss they are slow-start ones
            }
            if in_reduction(self.state) {
                self.prr_out += 1;
            }
            if seq == self.board.una && self.timer != Some(Timer::Reorder) {
                rearm = true;
            }
        }
        if rearm {
            let delay = self.rtt.backed_off_ns();
            self.arm(s, Timer::Rto, delay, now);
        }
    }

    /// The timer slot fired.
    pub fn timeout(&mut self, s: &mut SenderState, cc: &mut dyn CongestionControl, now: Nanos) {
        // The slot stays with a probe or reordering timer until its handler re-arms it, so
        // that the RTO then counts from the first segment's send (`tcp_write_timer_handler`
        // clears it only for the RTO).
        let Some(kind) = self.timer else { return };
        if kind == Timer::Rto {
            self.timer = None;
        }
        match kind {
            Timer::Rto => self.retransmit_timer(s, cc, now),
            Timer::Probe => self.send_loss_probe(s, cc, now),
            Timer::Reorder => self.reorder_timeout(s, cc, now),
        }
        self.sync(s);
    }

    /// `tcp_retransmit_timer` and `tcp_enter_loss`.
    fn retransmit_timer(&mut self, s: &mut SenderState, cc: &mut dyn CongestionControl, now: Nanos) {
        if self.board.packets_out() == 0 {
            return;
        }
        s.stats.timeouts += 1;
        // F-RTO judges a new episode, or a timeout that recurs (`tcp_enter_loss`).
        self.frto = self.opts.undo && (!matches!(self.state, CaState::Recovery | CaState::Loss) || self.rto_retransmits > 0);
        let reduce = matches!(self.state, CaState::Open | CaState::Disorder)
            || self.high_seq <= self.board.una
            || (self.state == CaState::Loss && self.rto_retransmits == 0);
        // Everything not SACKed is lost, but for segments sent within the last RACK RTT
        // after the first (`tcp_timeout_mark_lost`).
        let rack_rtt = self.rack.rtt_us;
        let una = self.board.una;
        let marks: Vec<i64> = self
            .board
            .iter()
            .filter(|(q, g)| *q == una || rack_rtt - micros(now.saturating_sub(g.sent)) <= 0)
            .map(|(q, _)| q)
            .collect();
        for q in marks {
            if self.board.mark_lost(q) {
                self.lost_total += 1;
            }
        }
        self.reno_sacked = 0;
        if reduce {
            self.prior_ssthresh = current_ssthresh(s);
            self.prior_cwnd = s.cwnd;
            self.init_undo();
            let w = self.window(s);
            s.ssthresh = cc.ssthresh(&w, &Loss { kind: LossKind::Timeout, window: s.cwnd }).ssthresh;
            s.first_decrease = false;
        }
        s.cwnd = (self.in_flight() + 1) as f64;
        self.set_state(s, cc, CaState::Loss);
        self.high_seq = self.board.nxt();
        self.tlp_high_seq = None;
        // Resend the first segment, back the timer off.
        self.rto_retransmits += 1;
        if self.board.get(una).is_some_and(|h| !h.has(SACKED)) {
            self.data_sent(s, cc, now);
            self.note_retransmission(now);
            self.board.retransmit(una, now);
            self.output(s, cc, now, una, true);
        }
        self.rtt.back_off();
        let delay = self.rtt.backed_off_ns();
        self.arm(s, Timer::Rto, delay, now);
    }

    /// `tcp_send_loss_probe`: one new segment if there is one, else the last segment again.
    fn send_loss_probe(&mut self, s: &mut SenderState, cc: &mut dyn CongestionControl, now: Nanos) {
        if self.tlp_high_seq.is_none() {
            self.tlp_retrans = false;
            let sent = self.write_xmit(s, cc, now, true) > 0;
            let probed = sent || {
                let last = self.board.nxt() - 1;
                match self.board.get(last) {
                    Some(g) if !g.has(SACKED) => {
                        // A probe's retransmission is not counted in flight (`__tcp_retransmit_skb`).
                        self.data_sent(s, cc, now);
                        self.note_retransmission(now);
                        self.board.touch(last, now);
                        self.output(s, cc, now, last, true);
                        self.tlp_retrans = true;
                        true
                    }
                    _ => false,
                }
            };
            if probed {
                self.tlp_high_seq = Some(self.board.nxt());
                self.timer = None; // the RTO restarts from now
            }
        }
        self.rearm_rto(s, now);
    }

    /// `tcp_rack_reo_timeout`: detection again; a loss found starts recovery with one PRR
    /// step, and the lost segments go out.
    fn reorder_timeout(&mut self, s: &mut SenderState, cc: &mut dyn CongestionControl, now: Nanos) {
        let prior_in_flight = self.in_flight();
        let prior_lost = self.lost_total;
        let reo = self.reo_wnd();
        let (marked, _) = self.rack.detect(&mut self.board, now, reo);
        self.lost_total += marked;
        if self.in_flight() != prior_in_flight {
            if self.state != CaState::Recovery {
                self.enter_recovery(s, cc);
                let newly_lost = (self.lost_total - prior_lost) as i64;
                self.cwnd_reduction(s, 1, newly_lost, false);
            }
            self.xmit_retransmit_queue(s, cc, now);
        }
        // Linux re-arms the RTO here, not the reordering timer.
        if self.timer != Some(Timer::Rto) {
            self.rearm_rto(s, now);
        }
    }
}

/// The timestamp clock (`tcp_time_stamp_ts`, 1 kHz; its random offset changes no difference).
fn timestamp_ms(now: Nanos) -> u32 {
    (now / 1_000_000) as u32
}

/// `tcp_current_ssthresh`: the larger of ssthresh and three quarters of cwnd.
fn current_ssthresh(s: &SenderState) -> i64 {
    s.ssthresh.max((s.cwnd as i64 >> 1) + (s.cwnd as i64 >> 2))
}
