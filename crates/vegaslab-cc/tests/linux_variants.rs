//! Every Vegas variant in the Linux flavour: the integer rules with hand-computed
//! rounds, driven through the controller's hooks as the Linux-like sender drives them, and
//! each variant through a whole `Sender` on the test path.
//!
//! Conventions of the hand computations: a sample of `us` microseconds is counted as `us + 1`
//! (Linux's `vrtt`), so the samples below are one less than the round numbers they aim at.
//! diff = cwnd x (minRTT - baseRTT) / baseRTT, truncated. A round ends on the first ACK past
//! the sequence number that was next to send when it began; `sent` is next_seq at its end
//! minus next_seq at its start.

mod common;

use common::path::{simulate, Path};
use vegaslab_cc::adavegas::{AdaVegasParams, AdaVegasState, FixedIncrement, VegasIncParams};
use vegaslab_cc::controller::{Ack, CaState, CongestionControl, QueueingTimes, RttSample, Window};
use vegaslab_cc::params::AlgorithmParams;
use vegaslab_cc::rovegas::{RoVegasLinuxRule, RoVegasParams};
use vegaslab_cc::vegas::VegasParams;
use vegaslab_cc::vegas_a::{EqualThroughput, VegasALinux, VegasAParams};
use vegaslab_cc::vegas_linux::LinuxVegas;
use vegaslab_cc::config::VariantFlavour;
use vegaslab_cc::{spec, AlgorithmSpec, Flavour, TcpConfig};

// ------------------------------------------------------------------------- hook driver

/// A controller and the window it works on, driven round by round.
struct Drive {
    cc: Box<dyn CongestionControl>,
    w: Window,
    /// next_seq when the current round began.
    beg: i64,
}

impl Drive {
    /// cwnd 20, ssthresh 10 (congestion avoidance), next_seq 100, receiver window 1000;
    /// Vegas enabled from next_seq 100 (`set_state(Open)`, as after a recovery).
    fn new(params: &dyn AlgorithmParams) -> Self {
        let mut cc = params.controller(&TcpConfig::default());
        let w = Window { cwnd: 20.0, ssthresh: 10, next_seq: 100, last_ack: 99, max_window: 1000.0, cwnd_limited: true };
        cc.set_state(&w, CaState::Open);
        Drive { cc, w, beg: 100 }
    }

    fn sample(&mut self, us: u64, queueing: Option<(u64, u64)>) {
        let to_s = |x: u64| (x as f64 + 0.5) / 1e6; // truncates back to x exactly
        let q = queueing.map(|(b, f)| QueueingTimes { backward: to_s(b), forward: to_s(f) });
        let s = RttSample { now: 0, rtt: to_s(us), queueing: q };
        assert_eq!(s.rtt_us(), us as i64);
        self.cc.pkts_acked(&mut self.w, &s);
    }

    /// One round: `samples` (µs, optional backward/forward queueing in µs), `sent` packets sent
    /// during it; its first ACK past the start ends it. Returns cwnd after.
    fn round(&mut self, samples: &[(u64, Option<(u64, u64)>)], sent: i64) -> f64 {
        for &(us, q) in samples {
            self.sample(us, q);
        }
        self.w.next_seq = self.beg + sent;
        let seqno = self.beg; // snd_una = beg + 1 > beg: the round ends
        self.w.last_ack = seqno;
        self.cc.cong_avoid(&mut self.w, &Ack { seqno, acked: 1, now: 0, elapsed: 0.0 });
        self.beg = self.w.next_seq;
        self.w.cwnd
    }

    /// A round of three samples of `us` each.
    fn round3(&mut self, us: u64, sent: i64) -> f64 {
        self.round(&[(us, None); 3], sent)
    }

    fn rule<R: 'static>(&self) -> &R {
        &self.cc.as_any().downcast_ref::<LinuxVegas<R>>().expect("a Linux-flavour controller").rule
    }
}

fn linux_vegas_a() -> VegasAParams {
    VegasAParams { flavour: VariantFlavour::Linux, ..Default::default() }
}

// ------------------------------------------------------------------------------- Vegas-A

/// Round 0: base 100,000 µs, sent 20, diff 0 <= alpha 1 with Th rising from 0: line 12,
/// cwnd 20 -> 21; Th(t-rtt) = 20 / 100,000. Round 1 at minRTT 110,000: diff =
/// 21 x 10,000 / 100,000 = 2 (2.1 truncated), between alpha 1 and beta 3.
fn vegas_a_at_diff_2(sent_in_round_1: i64, params: VegasAParams) -> Drive {
    let mut d = Drive::new(&params);
    assert_eq!(d.round3(99_999, 20), 21.0);
    assert_eq!(d.rule::<VegasALinux>().last_line, 12);
    d.round3(109_999, sent_in_round_1);
    d
}

#[test]
fn vegas_a_linux_between_alpha_and_beta_with_rising_throughput_probes_cwnd_alpha_beta_up() {
    // Th(t) = 23 / 110,000 vs Th(t-rtt) = 20 / 100,000: 23 x 100,000 = 2.3e6 > 20 x 110,000.
    let d = vegas_a_at_diff_2(23, linux_vegas_a());
    let r = d.rule::<VegasALinux>();
    assert_eq!(d.w.cwnd, 22.0);
    assert_eq!((r.alpha, r.beta, r.trend, r.last_line), (2, 4, 1, 3));
}

#[test]
fn vegas_a_linux_between_alpha_and_beta_with_falling_throughput_holds() {
    // 21 x 100,000 = 2.1e6 < 20 x 110,000 = 2.2e6: line 06-07.
    let d = vegas_a_at_diff_2(21, linux_vegas_a());
    let r = d.rule::<VegasALinux>();
    assert_eq!(d.w.cwnd, 21.0);
    assert_eq!((r.alpha, r.beta, r.trend, r.last_line), (1, 3, -1, 7));
}

#[test]
fn vegas_a_linux_throughput_tie_is_exact_and_follows_the_tie_option() {
    // 22 / 110,000 == 20 / 100,000 exactly (22 x 100,000 = 20 x 110,000 = 2.2e6).
    let d = vegas_a_at_diff_2(22, linux_vegas_a());
    let r = d.rule::<VegasALinux>();
    assert_eq!((d.w.cwnd, r.trend, r.last_line), (22.0, 0, 3), "tie takes line 02 by default");
    let hold = VegasAParams { equal_throughput: EqualThroughput::Hold, ..linux_vegas_a() };
    let d = vegas_a_at_diff_2(22, hold);
    let r = d.rule::<VegasALinux>();
    assert_eq!((d.w.cwnd, r.alpha, r.trend, r.last_line), (21.0, 1, 0, 7), "hold: line 06");
}

#[test]
fn vegas_a_linux_above_beta_decreases_cwnd_and_lowers_ssthresh() {
    // Round 1 at minRTT 130,000: diff = 21 x 30,000 / 100,000 = 6 > beta 3, alpha 1 stays:
    // line 22, cwnd 21 -> 20, ssthresh = min(15, 19) = 15, then >= 3/4 cwnd (10 + 5 = 15).
    let mut d = Drive::new(&linux_vegas_a());
    d.round3(99_999, 20);
    assert_eq!(d.w.ssthresh, 15); // after round 0: max(10, 21/2 + 21/4 = 10 + 5)
    assert_eq!(d.round3(129_999, 21), 20.0);
    let r = d.rule::<VegasALinux>();
    assert_eq!((r.alpha, r.beta, r.last_line), (1, 3, 22));
    assert_eq!(d.w.ssthresh, 15);
}

// ------------------------------------------------------------------------------ AdaVegas

#[test]
fn adavegas_linux_increase_rounds_add_table_i_inc_at_each_round_end() {
    // diff 0 every round (all samples at baseRTT): succ 1, 2, 3 -> inc 1; 4..7 -> inc 2;
    // 8 -> inc 4. cwnd 20 -> 21 -> 22 -> 23 -> 25 -> 27 -> 29 -> 31 -> 35.
    let mut d = Drive::new(&AdaVegasParams { flavour: VariantFlavour::Linux, ..Default::default() });
    let mut cwnds = Vec::new();
    for _ in 0..8 {
        let sent = d.w.cwnd as i64;
        cwnds.push(d.round3(99_999, sent));
    }
    assert_eq!(cwnds, vec![21.0, 22.0, 23.0, 25.0, 27.0, 29.0, 31.0, 35.0]);
    let a = d.rule::<AdaVegasState>();
    assert_eq!((a.succ, a.inc, a.last_inc, a.alpha, a.beta), (8, 4, 4, 2.0, 4.0));
    // A congested round: minRTT 120,000, diff = 35 x 20,000 / 100,000 = 7 > beta 4:
    // lastInc = max(4 / 2, 1) = 2, cwnd 35 -> 33, succ 0.
    assert_eq!(d.round3(119_999, 35), 33.0);
    let a = d.rule::<AdaVegasState>();
    assert_eq!((a.succ, a.last_inc), (0, 2));
    // Two steady rounds (diff = 33 x 10,000 / 100,000 = 3, in [2, 4]) reset lastInc to 1.
    assert_eq!(d.round3(109_999, 33), 33.0);
    assert_eq!(d.rule::<AdaVegasState>().last_inc, 2);
    assert_eq!(d.round3(109_999, 33), 33.0);
    assert_eq!(d.rule::<AdaVegasState>().last_inc, 1);
}

// ------------------------------------------------------------------------ Vegas_1 / Vegas_8

#[test]
fn vegas_8_linux_adds_8_packets_at_the_round_end_and_nothing_mid_round() {
    let mut d = Drive::new(&VegasIncParams { flavour: VariantFlavour::Linux, ..VegasIncParams::VEGAS_8 });
    assert_eq!(d.rule::<FixedIncrement>().inc, 8.0);
    // Mid-round ACK (seqno below the round's start): no change in congestion avoidance.
    d.w.next_seq = 110;
    d.cc.cong_avoid(&mut d.w, &Ack { seqno: 95, acked: 1, now: 0, elapsed: 0.0 });
    assert_eq!(d.w.cwnd, 20.0);
    // diff 0 < alpha 4: +8 at once.
    assert_eq!(d.round3(99_999, 20), 28.0);
    // diff = 28 x 40,000 / 100,000 = 11 > beta 8: -1.
    assert_eq!(d.round3(139_999, 28), 27.0);
    // diff = 27 x 20,000 / 100,000 = 5, in [4, 8]: hold.
    assert_eq!(d.round3(119_999, 27), 27.0);
}

#[test]
fn vegas_1_linux_adds_one_packet_per_increase_round() {
    let mut d = Drive::new(&VegasIncParams { flavour: VariantFlavour::Linux, ..VegasIncParams::VEGAS_1 });
    assert_eq!(d.round3(99_999, 20), 21.0);
    assert_eq!(d.round3(99_999, 21), 22.0);
}

// ------------------------------------------------------------------------------- RoVegas

/// Round 0 at baseRTT 100,000 µs without queueing, then rounds whose every ACK met 50 ms of
/// backward queueing (a probe reporting AQT 50,000 µs, AQT-echo 0): RTT 150,000 µs on the
/// same forward path.
fn backward_queueing_rounds(params: &dyn AlgorithmParams, rounds: usize) -> Vec<f64> {
    let mut d = Drive::new(params);
    let mut cwnds = vec![d.round(&[(99_999, Some((0, 0))); 3], 20)];
    for _ in 0..rounds {
        let sent = d.w.cwnd as i64;
        cwnds.push(d.round(&[(149_999, Some((50_000, 0))); 3], sent));
    }
    cwnds
}

#[test]
fn rovegas_linux_ignores_backward_queueing_where_linux_vegas_backs_off() {
    let vegas = VegasParams { alpha: 1.0, beta: 3.0, ..VegasParams::defaults_for(Flavour::Linux) };
    let rovegas = RoVegasParams { flavour: VariantFlavour::Linux, ..Default::default() };
    // Linux Vegas: diff = 21 x 50,000 / 100,000 = 10 > 3: -1 per round.
    assert_eq!(backward_queueing_rounds(&vegas, 4), vec![21.0, 20.0, 19.0, 18.0, 17.0]);
    // RoVegas: the round's RTT is 150,000 - 50,000 = 100,000 = baseRTT: diff 0 < 1: +1.
    assert_eq!(backward_queueing_rounds(&rovegas, 4), vec![21.0, 22.0, 23.0, 24.0, 25.0]);
}

#[test]
fn rovegas_linux_base_rtt_discounts_forward_and_backward_queueing_saturating_at_1_us() {
    let mut d = Drive::new(&RoVegasParams { flavour: VariantFlavour::Linux, ..Default::default() });
    // 120,000 + 1 - (15,000 + 5,000) = 100,001.
    d.sample(120_000, Some((15_000, 5_000)));
    let base = |d: &Drive| d.cc.as_any().downcast_ref::<LinuxVegas<RoVegasLinuxRule>>().unwrap().base_rtt_us();
    assert_eq!(base(&d), 100_001);
    // Stamps larger than the RTT: 1 µs, not 0 (or an underflow).
    d.sample(1_000, Some((5_000, 5_000)));
    assert_eq!(base(&d), 1);
}

#[test]
fn rovegas_linux_round_without_probes_is_classic_linux_vegas() {
    // No queueing times: round RTT = minRTT; diff = 21 x 30,000 / 100,000 = 6 > 3: -1.
    let mut d = Drive::new(&RoVegasParams { flavour: VariantFlavour::Linux, ..Default::default() });
    d.round3(99_999, 20);
    assert_eq!(d.round3(129_999, 21), 20.0);
}

// --------------------------------------------------------------- whole senders on a path

/// Every variant in the Linux flavour.
fn linux_variants() -> Vec<AlgorithmSpec> {
    vec![
        spec("vegas", VegasParams::defaults_for(Flavour::Linux)),
        spec("vegas-a", linux_vegas_a()),
        spec("adavegas", AdaVegasParams { flavour: VariantFlavour::Linux, ..Default::default() }),
        spec("vegas_1", VegasIncParams { flavour: VariantFlavour::Linux, ..VegasIncParams::VEGAS_1 }),
        spec("vegas_8", VegasIncParams { flavour: VariantFlavour::Linux, ..VegasIncParams::VEGAS_8 }),
        spec("rovegas", RoVegasParams { flavour: VariantFlavour::Linux, ..Default::default() }),
    ]
}

const MS: u64 = 1_000_000;
const S: u64 = 1_000_000_000;

#[test]
fn every_linux_variant_keeps_a_whole_cwnd_within_2_and_the_window_after_slow_start() {
    // 2 Mbit/s, 100-packet buffer, 100 ms, rerouted to 200 ms at 20 s: no loss.
    let path = Path { rate: 2e6, limit: 100, rtt0: 100 * MS, rtt1: 200 * MS, switch_at: 20 * S, drop_every: 0 };
    for alg in linux_variants() {
        let name = alg.name();
        let mut left_slow_start = false;
        let mut max_cwnd = 0.0f64;
        let run = simulate(alg, &path, 40 * S, |s| {
            let cwnd = s.cwnd();
            assert_eq!(cwnd.fract(), 0.0, "{name}: cwnd {cwnd} is not whole");
            assert!(cwnd <= 200.0, "{name}: cwnd {cwnd} above the window");
            left_slow_start |= cwnd >= s.ssthresh() as f64;
            if left_slow_start {
                assert!(cwnd >= 2.0, "{name}: cwnd {cwnd} below 2 after slow start");
            }
            max_cwnd = max_cwnd.max(cwnd);
            false
        });
        assert!(left_slow_start, "{name}: never left slow start");
        assert!(max_cwnd >= 10.0, "{name}: window never opened (max {max_cwnd})");
        assert_eq!(run.drops, 0, "{name}: the path was meant to be loss-free");
        assert!(run.delivered.last().unwrap().1 > 2_000, "{name}: delivered too little");
    }
}

#[test]
fn every_linux_variant_keeps_a_whole_cwnd_through_losses() {
    // Every 97th packet's first transmission is lost: fast retransmits and recovery.
    let path = Path { rate: 2e6, limit: 30, rtt0: 100 * MS, rtt1: 100 * MS, switch_at: u64::MAX, drop_every: 97 };
    for alg in linux_variants() {
        let name = alg.name();
        let run = simulate(alg, &path, 40 * S, |s| {
            let cwnd = s.cwnd();
            assert_eq!(cwnd.fract(), 0.0, "{name}: cwnd {cwnd} is not whole");
            assert!((1.0..=200.0).contains(&cwnd), "{name}: cwnd {cwnd} outside [1, 200]");
            false
        });
        assert!(run.drops > 0 && run.sender.stats().fast_retransmits > 0, "{name}: no loss recovery exercised");
    }
}
