//! The Linux `tcp_vegas.c` flavour (docs/vegas-implementations.md, "Linux and ns-3 Vegas"): the
//! Vegas machinery every variant shares in the `linux` flavour, on the Linux-like sender
//! (NewReno recovery, [`crate::tcp_agent`]), in the integer units a kernel (or BPF) program
//! has: RTTs in microseconds (`u64`), cwnd in whole packets, an integer diff, and no floating
//! point in any decision. Behaviour, paraphrased:
//!
//! - RTT samples are taken in microseconds plus one (so a zero sample still counts);
//!   baseRTT is the all-time minimum, minRTT the round's minimum.
//! - A round ends on the first ACK beyond the sequence number that was next to send when
//!   the round began. With fewer than three samples in the round, Reno's increase applies.
//! - Otherwise diff = cwnd x (minRTT - baseRTT) / baseRTT in integer arithmetic and
//!   target = cwnd x baseRTT / minRTT. In slow start, diff > gamma ends slow start with
//!   cwnd = min(cwnd, target + 1) and ssthresh = min(ssthresh, cwnd - 1); in congestion
//!   avoidance the rule decides ([`LinuxRule`]; classic Vegas: diff > beta: cwnd - 1 and
//!   ssthresh = min(ssthresh, cwnd - 1), diff < alpha: cwnd + 1, else hold). cwnd stays in
//!   [2, receiver window], and ssthresh is raised to at least 3/4 of cwnd.
//! - During loss recovery Vegas is off and Reno rules (`set_state`); it restarts when
//!   recovery ends.
//!
//! # Whole packets throughout
//!
//! cwnd stays a whole number of packets, as the kernel's `snd_cwnd`: Reno's increase (the
//! fallback below three samples, and the rule while Vegas is off) is Linux's
//! `tcp_reno_cong_avoid` with its ACK counter (`snd_cwnd_cnt`: +1 packet once a window's worth
//! of packets has been acknowledged; in slow start + acked, not beyond ssthresh), and the loss
//! cut ([`CongestionControl::ssthresh`]) is `tcp_reno_ssthresh`, ssthresh = max(cwnd / 2, 2)
//! in integer division, with cwnd = ssthresh after a fast retransmit (where Linux's PRR ends)
//! and 1 after a timeout. Not ns-2's float `opencwnd` (+1/cwnd per ACK) and halving: they
//! leave fractions of a packet in cwnd that no kernel or BPF program can hold, and that the
//! decision vectors could not give a C port.
//!
//! # Thresholds as integers
//!
//! alpha, beta and gamma are read as (possibly fractional) numbers of packets; diff is a whole
//! number, so each comparison has an exact integer form, fixed when the controller is built
//! ([`Thresholds`]): `diff < alpha` is `diff < ceil(alpha)`, `diff > beta` is
//! `diff > floor(beta)`, `diff > gamma` is `diff > floor(gamma)`. The decisions are the ones
//! the float comparisons made; only the arithmetic is a kernel's.
//!
//! # Router assist (RoVegas)
//!
//! Three hooks let a rule discount router-reported queueing ([`crate::rovegas`]):
//! [`LinuxRule::sample_base_rtt_us`] (the baseRTT candidate of a sample),
//! [`LinuxRule::round_rtt_us`] (the RTT the round's diff uses) and [`LinuxRule::round_reset`]
//! (a round ended or Vegas restarted). Plain Vegas leaves all three at their defaults.

use crate::controller::{Ack, CaState, CongestionControl, Cut, CwndEvent, Loss, RttSample, Window};

/// What one Linux-flavour round measured, in kernel units.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinuxRound {
    /// All-time minimum RTT, µs (+1).
    pub base_rtt_us: u64,
    /// This round's RTT for diff, µs (+1): the round's minimum, or what
    /// [`LinuxRule::round_rtt_us`] made of it (RoVegas).
    pub rtt_us: u64,
    /// RTT samples in the round (>= 3 here).
    pub samples: u32,
    /// cwnd at the round's end, whole packets.
    pub cwnd: u64,
    /// cwnd x baseRTT / minRTT, packets (integer division).
    pub target: u64,
    /// cwnd x (minRTT - baseRTT) / baseRTT, packets (integer division).
    pub diff: u64,
    /// Packets sent during the round (next to send now minus next to send at its start; 0 if
    /// a timeout pulled the send point back below the round's start).
    pub sent: u64,
}

/// The congestion-avoidance outcome of one Linux-flavour round.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinuxAction {
    /// cwnd += n packets now.
    Increase(u64),
    /// cwnd -= n packets now, and ssthresh = min(ssthresh, cwnd - 1) (`tcp_vegas.c`).
    Decrease(u64),
    Hold,
}

/// alpha and beta as integers for an integer diff (module docs, "Thresholds as integers").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Thresholds {
    /// ceil(alpha): `diff < alpha` is `diff < self.alpha`.
    pub alpha: u64,
    /// floor(beta): `diff > beta` is `diff > self.beta`.
    pub beta: u64,
}

/// Where an integer diff falls against [`Thresholds`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Region {
    /// diff < alpha.
    Below,
    /// alpha <= diff <= beta.
    Between,
    /// diff > beta.
    Above,
}

impl Thresholds {
    /// From thresholds in packets (>= 0, as the readers enforce; a negative one counts as 0).
    pub fn from_packets(alpha: f64, beta: f64) -> Self {
        Thresholds { alpha: alpha.max(0.0).ceil() as u64, beta: beta.max(0.0).floor() as u64 }
    }

    /// Classic Vegas' order: diff > beta first, then diff < alpha.
    pub fn region(&self, diff: u64) -> Region {
        if diff > self.beta {
            Region::Above
        } else if diff < self.alpha {
            Region::Below
        } else {
            Region::Between
        }
    }
}

/// floor(gamma) for `diff > gamma` with an integer diff.
pub fn gamma_threshold(gamma: f64) -> u64 {
    gamma.max(0.0).floor() as u64
}

/// A queueing time reported in seconds (the simulated routers' unit) in whole microseconds,
/// truncated, as an AQT option would carry it to a kernel.
pub fn queueing_us(seconds: f64) -> u64 {
    if seconds > 0.0 {
        (seconds * 1e6) as u64
    } else {
        0
    }
}

/// A once-per-round congestion-avoidance rule in the Linux flavour, in integer units. Each
/// variant implements it in its own file, next to its ns-2 rule.
pub trait LinuxRule: Clone + std::fmt::Debug + Send + 'static {
    fn name(&self) -> &'static str;
    /// One congestion-avoidance round.
    fn congestion_avoidance(&mut self, r: &LinuxRound) -> LinuxAction;
    /// A slow-start round with enough samples ended (for rules that remember every round).
    fn observe_slow_start(&mut self, _r: &LinuxRound) {}
    /// Loss recovery began (Recovery or Loss).
    fn on_loss(&mut self) {}
    /// The rule's variables for the time series.
    fn variables(&self, _out: &mut Vec<(&'static str, f64)>) {}
    /// Router assist (RoVegas): a segment is about to be sent; `Some(bytes)` makes it a probe.
    fn tag_segment(&mut self) -> Option<u32> {
        None
    }
    /// Router assist: the baseRTT candidate of one sample (µs, already + 1), given the
    /// queueing times its ACK carried. Called for every sample. Plain Vegas: the sample.
    fn sample_base_rtt_us(&mut self, rtt_us: u64, _sample: &RttSample) -> u64 {
        rtt_us
    }
    /// Router assist: the RTT the round's diff uses, from the round's minimum (µs, + 1).
    /// Called once per round with three samples or more. Plain Vegas: the minimum itself.
    fn round_rtt_us(&mut self, min_rtt_us: u64) -> u64 {
        min_rtt_us
    }
    /// Router assist: the round's samples are forgotten (a round ended, with or without
    /// enough samples, or Vegas restarted after recovery).
    fn round_reset(&mut self) {}
}

/// The Linux Vegas machinery with a rule.
#[derive(Clone, Debug)]
pub struct LinuxVegas<R> {
    pub rule: R,
    /// Slow-start exit threshold, packets, as given (decisions use [`gamma_threshold`] of it,
    /// fixed at construction).
    pub gamma: f64,
    gamma_whole: u64,
    base_rtt_us: u64,
    min_rtt_us: u64,
    cnt_rtt: u32,
    beg_snd_nxt: i64,
    doing_vegas_now: bool,
    /// Packets acknowledged towards the next +1 of Reno's increase (Linux `snd_cwnd_cnt`).
    cwnd_cnt: u64,
}

impl<R: LinuxRule> LinuxVegas<R> {
    pub fn new(rule: R, gamma: f64) -> Self {
        LinuxVegas {
            rule,
            gamma,
            gamma_whole: gamma_threshold(gamma),
            base_rtt_us: u32::MAX as u64,
            min_rtt_us: u32::MAX as u64,
            cnt_rtt: 0,
            beg_snd_nxt: 0,
            doing_vegas_now: true,
            cwnd_cnt: 0,
        }
    }

    /// All-time minimum RTT so far, µs (+1); `u32::MAX` before any sample.
    pub fn base_rtt_us(&self) -> u64 {
        self.base_rtt_us
    }

    /// Whether Vegas decides (Open state) or Reno does (recovery).
    pub fn doing_vegas(&self) -> bool {
        self.doing_vegas_now
    }

    /// `vegas_enable`: a fresh round from `snd_nxt`.
    fn enable(&mut self, snd_nxt: i64) {
        self.doing_vegas_now = true;
        self.beg_snd_nxt = snd_nxt;
        self.reset_round();
    }

    fn reset_round(&mut self) {
        self.cnt_rtt = 0;
        self.min_rtt_us = u32::MAX as u64;
        self.rule.round_reset();
    }

    fn round(&mut self, s: &mut Window, sent: u64, acked: i64) {
        let rtt = self.rule.round_rtt_us(self.min_rtt_us).max(1);
        let base = self.base_rtt_us;
        let mut cwnd = s.cwnd.floor() as i64;
        let target = cwnd as u64 * base / rtt;
        let diff = cwnd as u64 * (rtt.saturating_sub(base)) / base;
        let round = LinuxRound {
            base_rtt_us: base,
            rtt_us: rtt,
            samples: self.cnt_rtt,
            cwnd: cwnd as u64,
            target,
            diff,
            sent,
        };
        let in_slow_start = cwnd < s.ssthresh;
        if diff > self.gamma_whole && in_slow_start {
            self.rule.observe_slow_start(&round);
            cwnd = cwnd.min(target as i64 + 1);
            s.ssthresh = s.ssthresh.min(cwnd - 1);
        } else if in_slow_start {
            self.rule.observe_slow_start(&round);
            s.cwnd = cwnd as f64;
            slow_start(s, acked);
            cwnd = s.cwnd as i64;
        } else {
            match self.rule.congestion_avoidance(&round) {
                LinuxAction::Decrease(n) => {
                    cwnd -= n as i64;
                    s.ssthresh = s.ssthresh.min(cwnd - 1);
                }
                LinuxAction::Increase(n) => cwnd += n as i64,
                LinuxAction::Hold => {}
            }
        }
        cwnd = cwnd.clamp(2, s.max_window as i64);
        s.cwnd = cwnd as f64;
        s.ssthresh = s.ssthresh.max((cwnd >> 1) + (cwnd >> 2));
    }

    /// Linux `tcp_reno_cong_avoid` for `acked` packets, whole packets: slow start adds
    /// `acked` up to ssthresh; what is left counts towards +1 per window's worth of ACKs
    /// (`tcp_cong_avoid_ai` with `snd_cwnd_cnt`). Capped by the receiver window.
    fn reno_cong_avoid(&mut self, s: &mut Window, acked: i64) {
        let mut cwnd = s.cwnd.floor() as i64;
        let mut acked = acked.max(0);
        if cwnd < s.ssthresh {
            let grown = (cwnd + acked).min(s.ssthresh);
            acked -= grown - cwnd;
            cwnd = grown;
        }
        if acked > 0 {
            let w = cwnd.max(1) as u64;
            if self.cwnd_cnt >= w {
                self.cwnd_cnt = 0;
                cwnd += 1;
            }
            self.cwnd_cnt += acked as u64;
            if self.cwnd_cnt >= w {
                let more = self.cwnd_cnt / w;
                self.cwnd_cnt -= more * w;
                cwnd += more as i64;
            }
        }
        s.cwnd = (cwnd as f64).min(s.max_window.floor());
    }
}

impl<R: LinuxRule> CongestionControl for LinuxVegas<R> {
    fn name(&self) -> &'static str {
        self.rule.name()
    }

    /// `vegas_pkts_acked`: one RTT sample.
    fn pkts_acked(&mut self, _w: &mut Window, sample: &RttSample) {
        if sample.rtt < 0.0 {
            return;
        }
        let vrtt = sample.rtt_us() as u64 + 1;
        let base_candidate = self.rule.sample_base_rtt_us(vrtt, sample);
        self.base_rtt_us = self.base_rtt_us.min(base_candidate);
        self.min_rtt_us = self.min_rtt_us.min(vrtt);
        self.cnt_rtt += 1;
    }

    /// `tcp_reno_ssthresh`: ssthresh = max(cwnd / 2, 2) in whole packets; cwnd = ssthresh
    /// after a fast retransmit (where Linux's rate-halving recovery ends), 1 after a timeout.
    fn ssthresh(&mut self, w: &Window, loss: &Loss) -> Cut {
        Cut::from_ssthresh((w.cwnd.floor() as i64 >> 1).max(2), loss)
    }

    /// `vegas_state`: Vegas runs only in the Open state.
    fn set_state(&mut self, w: &Window, state: CaState) {
        if state == CaState::Open {
            self.enable(w.next_seq);
        } else {
            self.doing_vegas_now = false;
            self.rule.on_loss();
        }
    }

    /// `vegas_cong_avoid` for a new cumulative ACK.
    fn cong_avoid(&mut self, s: &mut Window, ack: &Ack) {
        if !self.doing_vegas_now {
            self.reno_cong_avoid(s, ack.acked);
            return;
        }
        let snd_una = ack.seqno + 1;
        if snd_una > self.beg_snd_nxt {
            let sent = (s.next_seq - self.beg_snd_nxt).max(0) as u64;
            self.beg_snd_nxt = s.next_seq;
            if self.cnt_rtt <= 2 {
                self.reno_cong_avoid(s, ack.acked);
            } else {
                self.round(s, sent, ack.acked);
            }
            self.reset_round();
        } else if s.in_slow_start() {
            slow_start(s, ack.acked);
        }
    }

    /// `tcp_vegas_cwnd_event`: sending resumes after idle (`CA_EVENT_TX_START`): start over
    /// (`tcp_vegas_init`: forget baseRTT, Vegas on, a fresh round).
    fn cwnd_event(&mut self, w: &mut Window, event: CwndEvent) {
        if let CwndEvent::TxStart { .. } = event {
            self.base_rtt_us = u32::MAX as u64;
            self.enable(w.next_seq);
        }
    }

    fn tag_segment(&mut self) -> Option<u32> {
        self.rule.tag_segment()
    }

    fn variables(&self, out: &mut Vec<(&'static str, f64)>) {
        self.rule.variables(out);
    }
}

/// Linux `tcp_slow_start` for `acked` packets: grow by that many, not beyond ssthresh nor the
/// receiver window (`snd_cwnd_clamp`); Vegas drops what is left over.
fn slow_start(s: &mut Window, acked: i64) {
    s.cwnd = (s.cwnd + acked.max(0) as f64).min(s.ssthresh as f64).min(s.max_window.floor()).max(s.cwnd);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controller::LossKind;

    /// Classic Vegas' decision (as `crate::vegas::Classic` makes it), local so that this
    /// module does not depend on an algorithm.
    #[derive(Clone, Debug)]
    struct Classic {
        alpha: f64,
        beta: f64,
    }

    impl LinuxRule for Classic {
        fn name(&self) -> &'static str {
            "vegas"
        }
        fn congestion_avoidance(&mut self, r: &LinuxRound) -> LinuxAction {
            match Thresholds::from_packets(self.alpha, self.beta).region(r.diff) {
                Region::Above => LinuxAction::Decrease(1),
                Region::Below => LinuxAction::Increase(1),
                Region::Between => LinuxAction::Hold,
            }
        }
    }

    fn state(cwnd: f64, ssthresh: i64) -> Window {
        Window { cwnd, ssthresh, next_seq: 100, last_ack: -1, max_window: 1000.0, cwnd_limited: true }
    }

    fn sample(v: &mut LinuxVegas<Classic>, rtt: f64) {
        v.pkts_acked(&mut state(1.0, 1), &RttSample { now: 0, rtt, queueing: None });
    }

    fn ack(seqno: i64) -> Ack {
        Ack { seqno, acked: 1, now: 0, elapsed: 0.0 }
    }

    fn linux_vegas() -> LinuxVegas<Classic> {
        LinuxVegas::new(Classic { alpha: 2.0, beta: 4.0 }, 1.0)
    }

    fn vegas_with_round(base: f64, rtt: f64) -> LinuxVegas<Classic> {
        let mut v = linux_vegas();
        sample(&mut v, base);
        v.enable(0);
        for _ in 0..3 {
            sample(&mut v, rtt);
        }
        v
    }

    #[test]
    fn reference_example_cwnd_20_base_100ms_rtt_109ms_increases() {
        // diff = 20 x 9000 / 100001 = 1 (integer) < alpha 2: +1.
        let mut s = state(20.0, 10);
        let mut v = vegas_with_round(0.100, 0.109);
        v.cong_avoid(&mut s, &ack(50));
        assert_eq!(s.cwnd, 21.0);
    }

    #[test]
    fn diff_above_beta_decreases_by_one() {
        // diff = 20 x 30000 / 100001 = 5 > beta 4: -1.
        let mut s = state(20.0, 10);
        let mut v = vegas_with_round(0.100, 0.130);
        v.cong_avoid(&mut s, &ack(50));
        assert_eq!(s.cwnd, 19.0);
    }

    #[test]
    fn fewer_than_three_samples_falls_back_to_integer_reno() {
        // cwnd 20 >= ssthresh 10: one ACK counts towards the next +1 (after 20 ACKs).
        let mut s = state(20.0, 10);
        let mut v = linux_vegas();
        sample(&mut v, 0.1);
        v.cong_avoid(&mut s, &ack(50));
        assert_eq!(s.cwnd, 20.0);
        assert_eq!(v.cwnd_cnt, 1);
    }

    #[test]
    fn reno_fallback_adds_one_packet_per_window_of_acks() {
        // Vegas off (recovery): Reno alone. 20 ACKs of one packet at cwnd 20: +1 on the 20th.
        let mut s = state(20.0, 10);
        let mut v = linux_vegas();
        v.set_state(&s, CaState::Recovery);
        for i in 0..19 {
            v.cong_avoid(&mut s, &ack(i));
            assert_eq!(s.cwnd, 20.0, "ACK {i}");
        }
        v.cong_avoid(&mut s, &ack(19));
        assert_eq!(s.cwnd, 21.0);
        assert_eq!(v.cwnd_cnt, 0);
    }

    #[test]
    fn reno_fallback_in_slow_start_adds_acked_up_to_ssthresh_then_counts_the_rest() {
        // cwnd 8, ssthresh 10, an ACK of 5 packets: +2 to ssthresh, 3 counted towards +1.
        let mut s = state(8.0, 10);
        let mut v = linux_vegas();
        v.set_state(&s, CaState::Loss);
        v.cong_avoid(&mut s, &Ack { seqno: 5, acked: 5, now: 0, elapsed: 0.0 });
        assert_eq!(s.cwnd, 10.0);
        assert_eq!(v.cwnd_cnt, 3);
    }

    #[test]
    fn loss_cut_is_whole_half_window_at_least_two() {
        let mut v = linux_vegas();
        let s = state(21.0, 100);
        let fr = v.ssthresh(&s, &Loss { kind: LossKind::FastRetransmit, window: 21.0 });
        assert_eq!(fr, Cut { ssthresh: 10, cwnd: 10.0 });
        let to = v.ssthresh(&state(3.0, 100), &Loss { kind: LossKind::Timeout, window: 3.0 });
        assert_eq!(to, Cut { ssthresh: 2, cwnd: 1.0 });
    }

    #[test]
    fn fractional_thresholds_compare_as_ceil_alpha_and_floor_beta() {
        let t = Thresholds::from_packets(1.5, 3.5);
        assert_eq!(t, Thresholds { alpha: 2, beta: 3 });
        // diff 1 < 1.5: below; diff 2 is not < 1.5 and not > 3.5: between; 4 > 3.5: above.
        assert_eq!(t.region(1), Region::Below);
        assert_eq!(t.region(2), Region::Between);
        assert_eq!(t.region(3), Region::Between);
        assert_eq!(t.region(4), Region::Above);
        assert_eq!(gamma_threshold(1.9), 1);
    }

    #[test]
    fn slow_start_exit_caps_cwnd_at_target_plus_one() {
        // cwnd 20 < ssthresh 100; samples padded by 1 us: base 100001, rtt 200001.
        // diff = 20 x 100000 / 100001 = 19 > gamma; target = 2000020 / 200001 = 10.
        let mut s = state(20.0, 100);
        let mut v = vegas_with_round(0.100, 0.200);
        v.cong_avoid(&mut s, &ack(50));
        assert_eq!(s.cwnd, 11.0);
        // ssthresh = min(100, 11 - 1) = 10, then max(10, 5 + 2) = 10.
        assert_eq!(s.ssthresh, 10);
    }
}
