//! The Linux `tcp_vegas.c` flavour (docs/vegas-implementations.md, "Linux and ns-3 Vegas"): the
//! Vegas machinery every variant shares in the `linux` flavour, on Linux's TCP stack
//! ([`crate::linux`]; with `tcp.stack = "ns2"` the NewReno sender), in the integer units a kernel (or BPF) program
//! has: RTTs in microseconds (`u64`), cwnd in whole packets, an integer diff, and no floating
//! point in any decision. Behaviour, paraphrased:
//!
//! - RTT samples are taken in microseconds plus one (so a zero sample still counts);
//!   baseRTT is the all-time minimum, minRTT the round's minimum.
//! - A round ends on the first ACK beyond the sequence number that was next to send when
//!   the round began. With fewer than three samples in the round, Reno's increase applies.
//! - Otherwise diff = cwnd x (minRTT - baseRTT) / baseRTT in integer arithmetic and
//!   target = cwnd x baseRTT / minRTT. In slow start, diff > gamma ends slow start with
//!   cwnd = min(cwnd, target + 1) and then ssthresh = min(ssthresh, cwnd), the new cwnd; in
//!   congestion avoidance the rule decides ([`LinuxRule`]; classic Vegas: diff > beta: cwnd - 1
//!   and then ssthresh = min(ssthresh, cwnd), the decremented cwnd; diff < alpha: cwnd + 1, else
//!   hold). That is mainline `tcp_vegas_ssthresh()`, `min(snd_ssthresh, snd_cwnd)` read after
//!   each branch has changed `snd_cwnd` (not 2.6-era kernels' `snd_cwnd - 1`). cwnd stays
//!   in [2, receiver window] (clamped after ssthresh was taken, as `tcp_vegas_cong_avoid`
//!   does), and ssthresh is raised to at least 3/4 of cwnd (`tcp_current_ssthresh`).
//! - During loss recovery Vegas is off and Reno rules (`set_state`); it restarts when
//!   recovery ends.
//! - Reno's increase (`tcp_reno_cong_avoid`) grows nothing when the sender is not
//!   cwnd-limited ([`Window::cwnd_limited`], Linux `tcp_is_cwnd_limited`). Vegas' own round
//!   and its per-ACK slow start do not ask: `tcp_vegas_cong_avoid` calls `tcp_slow_start`
//!   directly, and only its Reno fallback makes the check.
//! - A loss remembers the window for undo and restarts Reno's ACK counter (what the kernel
//!   does around the `ssthresh` call: `prior_cwnd = snd_cwnd`, `snd_cwnd_cnt = 0`, in
//!   `tcp_init_cwnd_reduction` and `tcp_enter_loss`); `undo_cwnd` is `tcp_reno_undo_cwnd`,
//!   max(cwnd, prior_cwnd).
//!
//! # Whole packets throughout
//!
//! cwnd stays a whole number of packets, as the kernel's `snd_cwnd`: Reno's increase (the
//! fallback below three samples, and the rule while Vegas is off) is Linux's
//! `tcp_reno_cong_avoid` with its ACK counter (`snd_cwnd_cnt`: +1 packet once a window's worth
//! of packets has been acknowledged; in slow start + acked, not beyond ssthresh, the rest
//! counted), and the loss
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
use crate::reno::{reno_cong_avoid, slow_start};

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
    /// cwnd -= n packets now, then ssthresh = min(ssthresh, cwnd) with the decremented cwnd
    /// (mainline `tcp_vegas.c`, `tcp_vegas_ssthresh`).
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
    /// cwnd when the last loss was detected, whole packets (Linux `prior_cwnd`; 0 before any).
    prior_cwnd: u64,
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
            prior_cwnd: 0,
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
            // tcp_vegas_ssthresh after the cap: min(ssthresh, the capped cwnd).
            s.ssthresh = s.ssthresh.min(cwnd);
        } else if in_slow_start {
            self.rule.observe_slow_start(&round);
            s.cwnd = cwnd as f64;
            slow_start(s, acked);
            cwnd = s.cwnd as i64;
        } else {
            match self.rule.congestion_avoidance(&round) {
                LinuxAction::Decrease(n) => {
                    cwnd -= n as i64;
                    // tcp_vegas_ssthresh after the decrement, before the clamp to 2 below.
                    s.ssthresh = s.ssthresh.min(cwnd);
                }
                LinuxAction::Increase(n) => cwnd += n as i64,
                LinuxAction::Hold => {}
            }
        }
        cwnd = cwnd.clamp(2, s.max_window as i64);
        s.cwnd = cwnd as f64;
        s.ssthresh = s.ssthresh.max((cwnd >> 1) + (cwnd >> 2));
    }

    /// Linux `tcp_reno_cong_avoid` ([`reno_cong_avoid`]) with this connection's ACK counter.
    fn reno_cong_avoid(&mut self, s: &mut Window, acked: i64) {
        reno_cong_avoid(&mut self.cwnd_cnt, s, acked);
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
    /// Also what the kernel does to the socket around this call (`tcp_init_cwnd_reduction`,
    /// `tcp_enter_loss`): the window is remembered for undo (`prior_cwnd`) and Reno's ACK
    /// counter restarts (`snd_cwnd_cnt = 0`).
    fn ssthresh(&mut self, w: &Window, loss: &Loss) -> Cut {
        let cwnd = w.cwnd.floor() as i64;
        self.prior_cwnd = cwnd.max(0) as u64;
        self.cwnd_cnt = 0;
        Cut::from_ssthresh((cwnd >> 1).max(2), loss)
    }

    /// `tcp_reno_undo_cwnd`: the window before the loss, if larger than the current one.
    fn undo_cwnd(&mut self, w: &Window) -> f64 {
        w.cwnd.max(self.prior_cwnd as f64)
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

    /// `tcp_vegas_cwnd_event`: sending resumes after idle (`CA_EVENT_TX_START`, or
    /// `CA_EVENT_CWND_RESTART` on the Linux stack): start over
    /// (`tcp_vegas_init`: forget baseRTT, Vegas on, a fresh round).
    fn cwnd_event(&mut self, w: &mut Window, event: CwndEvent) {
        if let CwndEvent::TxStart { .. } | CwndEvent::CwndRestart = event {
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
        // Mainline tcp_vegas_ssthresh on the capped cwnd: min(100, 11) = 11, then
        // max(11, 5 + 2) = 11 (the 2.6-era cwnd - 1 form would give 10).
        assert_eq!(s.ssthresh, 11);
    }

    #[test]
    fn a_vegas_decrease_takes_ssthresh_from_the_decremented_cwnd() {
        // Congestion avoidance (cwnd 20 = ssthresh 20), diff 5 > beta 4: cwnd 19, then
        // ssthresh = min(20, 19) = 19 and max(19, 9 + 4) = 19 (cwnd - 1 would give 18).
        let mut s = state(20.0, 20);
        let mut v = vegas_with_round(0.100, 0.130);
        v.cong_avoid(&mut s, &ack(50));
        assert_eq!((s.cwnd, s.ssthresh), (19.0, 19));
    }

    #[test]
    fn a_vegas_decrease_at_two_packets_takes_ssthresh_before_the_clamp_to_two() {
        // cwnd 2 = ssthresh 2, diff = 2 x 400000 / 100001 = 7 > beta: cwnd 1, ssthresh
        // min(2, 1) = 1; then cwnd is clamped back to 2 and ssthresh stays max(1, 1 + 0) = 1.
        let mut s = state(2.0, 2);
        let mut v = vegas_with_round(0.100, 0.500);
        v.cong_avoid(&mut s, &ack(50));
        assert_eq!((s.cwnd, s.ssthresh), (2.0, 1));
    }

    #[test]
    fn the_reno_fallback_grows_nothing_when_the_sender_is_not_cwnd_limited() {
        let mut v = linux_vegas();
        let mut s = Window { cwnd_limited: false, ..state(8.0, 10) };
        v.set_state(&s, CaState::Recovery);
        v.cong_avoid(&mut s, &Ack { seqno: 5, acked: 5, now: 0, elapsed: 0.0 });
        assert_eq!((s.cwnd, v.cwnd_cnt), (8.0, 0));
        // Fewer than three samples at a round's end: the same fallback, the same check.
        let mut v = linux_vegas();
        let mut s = Window { cwnd_limited: false, ..state(20.0, 10) };
        for i in 0..40 {
            v.cong_avoid(&mut s, &ack(i));
        }
        assert_eq!((s.cwnd, v.cwnd_cnt), (20.0, 0));
    }

    #[test]
    fn vegas_slow_start_within_a_round_grows_even_when_not_cwnd_limited() {
        // tcp_vegas_cong_avoid calls tcp_slow_start itself, without tcp_is_cwnd_limited.
        let mut v = linux_vegas();
        v.enable(100);
        let mut s = Window { cwnd_limited: false, ..state(4.0, 10) };
        v.cong_avoid(&mut s, &Ack { seqno: 10, acked: 3, now: 0, elapsed: 0.0 });
        assert_eq!(s.cwnd, 7.0);
    }

    #[test]
    fn the_reno_fallback_spends_credit_from_a_larger_window_even_on_an_ack_of_nothing() {
        // tcp_cong_avoid_ai: snd_cwnd_cnt >= w gives +1 before acked is counted, acked 0 too.
        let mut v = linux_vegas();
        let mut s = state(10.0, 5);
        v.set_state(&s, CaState::Recovery);
        v.cwnd_cnt = 12;
        v.cong_avoid(&mut s, &Ack { seqno: 0, acked: 0, now: 0, elapsed: 0.0 });
        assert_eq!((s.cwnd, v.cwnd_cnt), (11.0, 0));
    }

    #[test]
    fn slow_start_leftover_uses_the_window_after_slow_start_for_the_increase() {
        // cwnd 9, ssthresh 10, 12 packets: +1 to 10, 11 left; w = 10: +1 (cnt 1).
        let mut v = linux_vegas();
        let mut s = state(9.0, 10);
        v.set_state(&s, CaState::Loss);
        v.cong_avoid(&mut s, &Ack { seqno: 12, acked: 12, now: 0, elapsed: 0.0 });
        assert_eq!((s.cwnd, v.cwnd_cnt), (11.0, 1));
    }

    #[test]
    fn undo_restores_the_window_before_the_loss_if_larger() {
        let mut v = linux_vegas();
        assert_eq!(v.undo_cwnd(&state(7.0, 100)), 7.0);
        v.ssthresh(&state(21.0, 100), &Loss { kind: LossKind::FastRetransmit, window: 21.0 });
        assert_eq!(v.undo_cwnd(&state(10.0, 10)), 21.0);
        assert_eq!(v.undo_cwnd(&state(30.0, 10)), 30.0);
    }

    #[test]
    fn a_loss_restarts_renos_ack_counter() {
        let mut v = linux_vegas();
        let mut s = state(20.0, 10);
        v.set_state(&s, CaState::Recovery);
        for i in 0..5 {
            v.cong_avoid(&mut s, &ack(i));
        }
        assert_eq!(v.cwnd_cnt, 5);
        v.ssthresh(&s, &Loss { kind: LossKind::Timeout, window: 20.0 });
        assert_eq!(v.cwnd_cnt, 0);
    }
}
