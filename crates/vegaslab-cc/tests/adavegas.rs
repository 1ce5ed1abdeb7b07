//! AdaVegas (the AdaVegas paper: Maor and Mansour, "AdaVegas: Adaptive Control for TCP Vegas",
//! section III-B, Table I) and the fixed-increment presets Vegas_1 and
//! Vegas_8: every Table I row, the succ counter and its reset, the lastInc rule, the loss
//! hook (through a `Sender`: the cut is the agent's, succ restarts), and Vegas_1 == classic
//! ns-2 Vegas ACK for ACK.
//!
//! The rule reads only `delta` and `cwnd` of a round; cwnd is 10 in the constructed rounds,
//! so "+ inc packets per round" is `Increase(inc/10)` per ACK over the next round.

mod common;
use common::path::{simulate, Path};
use common::MS;

use vegaslab_cc::adavegas::{fixed_increment, table_i, AdaRound, AdaVegasState};
use vegaslab_cc::adavegas::{AdaVegasParams, FixedIncrement, VegasIncParams};
use vegaslab_cc::vegas::{Classic, VegasParams};
use vegaslab_cc::vegas_ns2::{CaAction, Ns2Vegas, Round, VegasRule};
use vegaslab_cc::{spec, AlgorithmSpec, Flavour, Sender};

const CWND: f64 = 10.0;

fn round(delta: i64) -> Round {
    Round {
        rtt: 0.12,
        base_rtt: 0.1,
        rtt_len: 10,
        outstanding: 10,
        actual: 83.0,
        expected: 100.0,
        delta,
        cwnd: CWND,
        backward_qt: 0.0,
    }
}

/// A delta below any alpha of Table I (an increase round).
const LOW: i64 = -100;
/// A delta above any beta of Table I (a congested round).
const HIGH: i64 = 100;

fn inc(n: f64) -> CaAction {
    CaAction::Increase(n / CWND)
}

#[test]
fn table_i_rows_with_the_third_row_read_as_8_to_15() {
    for succ in 0..=3 {
        assert_eq!(table_i(succ), (1.0, 3.0, 1), "succ {succ}");
    }
    for succ in 4..=7 {
        assert_eq!(table_i(succ), (2.0, 4.0, 2), "succ {succ}");
    }
    // Printed "4 <= succ <= 15": a typo for 8..=15 (else rows 2 and 3 would overlap).
    for succ in 8..=15 {
        assert_eq!(table_i(succ), (2.0, 4.0, 4), "succ {succ}");
    }
    for succ in [16, 17, 100, u32::MAX] {
        assert_eq!(table_i(succ), (4.0, 8.0, 8), "succ {succ}");
    }
}

#[test]
fn starts_as_vegas_1() {
    let a = AdaVegasState::new();
    assert_eq!((a.succ, a.alpha, a.beta, a.inc, a.last_inc), (0, 1.0, 3.0, 1, 1));
}

#[test]
fn successive_increase_rounds_walk_down_table_i() {
    // Round k (k = 1, 2, ...) sets succ = k, then alpha/beta/inc from Table I for k, and
    // grows by the new inc: rounds 1-3 +1, 4-7 +2, 8-15 +4, 16- +8.
    let mut a = AdaVegasState::new();
    for k in 1..=20u32 {
        let act = a.congestion_avoidance(&round(LOW));
        let (al, be, i) = table_i(k);
        let want = match k {
            1..=3 => 1,
            4..=7 => 2,
            8..=15 => 4,
            _ => 8,
        };
        assert_eq!(i, want);
        assert_eq!(act, inc(want as f64), "round {k}");
        assert_eq!((a.succ, a.alpha, a.beta, a.inc, a.last_inc), (k, al, be, want, want), "round {k}");
        assert_eq!(a.last_round, AdaRound::Increase);
    }
}

#[test]
fn increase_test_is_delta_below_alpha_strictly() {
    // alpha 1: delta 0 increases, delta 1 (== alpha) is steady (classic boundary).
    let mut a = AdaVegasState::new();
    assert_eq!(a.congestion_avoidance(&round(0)), inc(1.0));
    assert_eq!(a.congestion_avoidance(&round(1)), CaAction::Hold);
    assert_eq!(a.last_round, AdaRound::Steady);
    // delta 3 == beta is steady too; 4 > beta is congestion.
    assert_eq!(a.congestion_avoidance(&round(3)), CaAction::Hold);
    assert_eq!(a.congestion_avoidance(&round(4)), CaAction::DecreaseBy(1.0));
}

#[test]
fn a_steady_round_resets_succ_and_the_next_increase_starts_from_row_one() {
    // 16 increases: alpha/beta/inc 4/8/8. A steady round (delta 5 in [4, 8]) -> succ 0, but
    // alpha/beta/inc are only re-read on increase rounds: still 4/8/8. The next increase
    // (delta 3 < 4) -> succ 1 -> 1/3/1, + 1 packet.
    let mut a = AdaVegasState::new();
    for _ in 0..16 {
        a.congestion_avoidance(&round(LOW));
    }
    assert_eq!((a.succ, a.inc), (16, 8));
    assert_eq!(a.congestion_avoidance(&round(5)), CaAction::Hold);
    assert_eq!((a.succ, a.alpha, a.beta, a.inc), (0, 4.0, 8.0, 8));
    assert_eq!(a.congestion_avoidance(&round(3)), inc(1.0));
    assert_eq!((a.succ, a.alpha, a.beta, a.inc, a.last_inc), (1, 1.0, 3.0, 1, 1));
}

#[test]
fn a_congested_round_resets_succ() {
    let mut a = AdaVegasState::new();
    for _ in 0..5 {
        a.congestion_avoidance(&round(LOW));
    }
    assert_eq!(a.succ, 5);
    a.congestion_avoidance(&round(HIGH));
    assert_eq!(a.succ, 0);
    assert_eq!(a.last_round, AdaRound::Congested);
}

#[test]
fn congestion_halves_last_inc_then_decreases_by_it() {
    // After 16 increases lastInc = 8. Congested rounds: lastInc 4 (cwnd - 4), 2, 1, 1.
    let mut a = AdaVegasState::new();
    for _ in 0..16 {
        a.congestion_avoidance(&round(LOW));
    }
    assert_eq!(a.last_inc, 8);
    for want in [4.0, 2.0, 1.0, 1.0] {
        assert_eq!(a.congestion_avoidance(&round(HIGH)), CaAction::DecreaseBy(want));
        assert_eq!(a.last_inc as f64, want);
    }
}

#[test]
fn two_steady_rounds_reset_last_inc_to_one() {
    // lastInc 8; one steady round keeps it (a congestion now would decrease by 4); the
    // second consecutive steady round resets it to 1 (a congestion then decreases by 1).
    let mut a = AdaVegasState::new();
    for _ in 0..16 {
        a.congestion_avoidance(&round(LOW));
    }
    a.congestion_avoidance(&round(5));
    assert_eq!((a.steady, a.last_inc), (1, 8));
    let mut b = a.clone();
    assert_eq!(b.congestion_avoidance(&round(HIGH)), CaAction::DecreaseBy(4.0));
    a.congestion_avoidance(&round(5));
    assert_eq!((a.steady, a.last_inc), (2, 1));
    assert_eq!(a.congestion_avoidance(&round(HIGH)), CaAction::DecreaseBy(1.0));
}

#[test]
fn steady_rounds_must_be_consecutive_to_reset_last_inc() {
    // increase (inc 2 at succ 4..7) / steady / increase / steady: never two steady in a row.
    let mut a = AdaVegasState::new();
    for _ in 0..4 {
        a.congestion_avoidance(&round(LOW));
    }
    assert_eq!(a.last_inc, 2);
    a.congestion_avoidance(&round(3)); // steady (2 <= 3 <= 4)
    a.congestion_avoidance(&round(0)); // increase: succ 1, inc 1, lastInc 1
    assert_eq!((a.succ, a.last_inc, a.steady), (1, 1, 0));
    // A congested round right after an increase of 1 decreases by max(1/2, 1) = 1.
    assert_eq!(a.congestion_avoidance(&round(HIGH)), CaAction::DecreaseBy(1.0));
    // Steady once after that: count 1 only.
    a.congestion_avoidance(&round(2));
    assert_eq!(a.steady, 1);
}

#[test]
fn on_loss_ends_the_run_of_increases_only() {
    let mut a = AdaVegasState::new();
    for _ in 0..10 {
        a.congestion_avoidance(&round(LOW));
    }
    a.on_loss();
    assert_eq!((a.succ, a.steady, a.alpha, a.beta, a.inc, a.last_inc), (0, 0, 2.0, 4.0, 4, 4));
    // The next increase round is succ 1: back to 1/3/1.
    assert_eq!(a.congestion_avoidance(&round(LOW)), inc(1.0));
    assert_eq!(a.succ, 1);
}

#[test]
fn probe_reports_the_adaptive_variables() {
    let mut a = AdaVegasState::new();
    for _ in 0..4 {
        a.congestion_avoidance(&round(LOW));
    }
    assert_eq!(
        a.probe(),
        vec![("alpha", 2.0), ("beta", 4.0), ("inc", 2.0), ("succ", 4.0), ("last_inc", 2.0)]
    );
}

#[test]
fn fixed_increment_presets() {
    // Vegas_8: alpha 4, beta 8: delta 3 -> +8; 4..=8 hold; 9 -> -1 (plain Vegas' decrease).
    let p = VegasIncParams::VEGAS_8;
    assert_eq!((p.alpha, p.beta, p.inc), (4.0, 8.0, 8.0));
    assert_eq!(fixed_increment(p.alpha, p.beta, p.inc, &round(3)), inc(8.0));
    assert_eq!(fixed_increment(p.alpha, p.beta, p.inc, &round(4)), CaAction::Hold);
    assert_eq!(fixed_increment(p.alpha, p.beta, p.inc, &round(8)), CaAction::Hold);
    assert_eq!(fixed_increment(p.alpha, p.beta, p.inc, &round(9)), CaAction::Decrease);
    assert_eq!(VegasIncParams::VEGAS_1.name(), "vegas_1");
    assert_eq!(VegasIncParams::VEGAS_8.name(), "vegas_8");
    assert_eq!(VegasIncParams { inc: 2.0, ..VegasIncParams::VEGAS_1 }.name(), "vegas_inc");
}

#[test]
fn vegas_1_rule_equals_classic_rule_bit_for_bit() {
    let p = VegasIncParams::VEGAS_1;
    let mut classic = Classic { alpha: 1.0, beta: 3.0 };
    let mut v1 = FixedIncrement { alpha: p.alpha, beta: p.beta, inc: p.inc, name: "vegas_1" };
    for delta in -5..=10 {
        for cwnd in [2.0, 3.0, 7.3, 10.0, 33.3333] {
            let r = Round { cwnd, ..round(delta) };
            assert_eq!(classic.congestion_avoidance(&r), v1.congestion_avoidance(&r), "delta {delta} cwnd {cwnd}");
        }
    }
}

// ---- through a Sender on a bottleneck path ----

fn vegas_1() -> AlgorithmSpec {
    spec("vegas_1", VegasIncParams::VEGAS_1)
}

fn ada(s: &Sender) -> &AdaVegasState {
    &s.controller().as_any().downcast_ref::<Ns2Vegas<AdaVegasState>>().expect("an ns-2 AdaVegas controller").rule
}

#[test]
fn vegas_1_sender_behaves_exactly_like_classic_vegas_including_losses() {
    // A 10-packet buffer at 1 Mbit/s with a 40 ms -> 100 ms reroute at 10 s and every 300th
    // packet's first transmission lost: slow start, congestion avoidance, fine-grained
    // retransmissions, window cuts (and timeouts, if any) all happen. The
    // two senders must agree on every cwnd, ssthresh and counter after every event.
    let path = Path { rate: 1e6, limit: 10, rtt0: 40 * MS, rtt1: 100 * MS, switch_at: 10_000 * MS, drop_every: 300 };
    let end = 60_000 * MS;
    let mut trace_classic = Vec::new();
    let mut trace_v1 = Vec::new();
    let classic = simulate(spec("vegas", VegasParams::defaults_for(Flavour::Ns2)), &path, end, |s| {
        trace_classic.push((s.cwnd().to_bits(), s.ssthresh(), s.stats().clone()));
        false
    });
    let v1 = simulate(vegas_1(), &path, end, |s| {
        trace_v1.push((s.cwnd().to_bits(), s.ssthresh(), s.stats().clone()));
        false
    });
    assert!(classic.drops > 0, "the path should force losses");
    assert!(classic.sender.stats().fast_retransmits > 0);
    assert_eq!(trace_classic.len(), trace_v1.len());
    assert!(trace_classic == trace_v1, "Vegas_1 diverged from classic Vegas");
    assert_eq!(classic.delivered, v1.delivered);
    assert_eq!(v1.sender.controller().name(), "vegas_1");
}

#[test]
fn vegas_8_grows_faster_than_vegas_1_in_congestion_avoidance() {
    // Ample buffer, 10 Mbit/s, 100 ms: after slow start exits, Vegas_8 adds ~8 packets a
    // round, Vegas_1 ~1, so Vegas_8 delivers more in the first seconds.
    let path = Path { rate: 10e6, limit: 1000, rtt0: 100 * MS, rtt1: 100 * MS, switch_at: u64::MAX, drop_every: 0 };
    let end = 8_000 * MS;
    let v1 = simulate(vegas_1(), &path, end, |_| false);
    let v8 = simulate(spec("vegas_8", VegasIncParams::VEGAS_8), &path, end, |_| false);
    assert!(
        v8.delivered.last().unwrap().1 > v1.delivered.last().unwrap().1,
        "Vegas_8 {:?} vs Vegas_1 {:?}",
        v8.delivered.last(),
        v1.delivered.last()
    );
}

#[test]
fn adavegas_coarse_timeout_uses_the_agents_cut_and_resets_succ() {
    // Run AdaVegas on a clean path until it has a run of increases, then fire the coarse
    // timer by hand: the agent sets cwnd to 2 (ns-2's timeout, not a halving by the rule)
    // and the loss hook resets succ.
    let path = Path { rate: 10e6, limit: 1000, rtt0: 100 * MS, rtt1: 100 * MS, switch_at: u64::MAX, drop_every: 0 };
    let run = simulate(spec("adavegas", AdaVegasParams::default()), &path, 60_000 * MS, |s| ada(s).succ >= 5);
    let mut s = run.sender;
    let now = run.delivered.last().unwrap().0;
    assert!(ada(&s).succ > 0, "expected a run of increases, state {:?}", ada(&s));
    let before = ada(&s).clone();
    s.on_timer(now);
    assert_eq!(s.cwnd(), 2.0);
    let after = ada(&s);
    assert_eq!(after.succ, 0);
    assert_eq!((after.alpha, after.beta, after.inc, after.last_inc), (before.alpha, before.beta, before.inc, before.last_inc));
    assert_eq!(s.controller().name(), "adavegas");
}

#[test]
fn adavegas_retransmission_cut_resets_succ() {
    // Every 500th packet's first transmission is lost: fine-grained retransmissions. At
    // least one of them cuts the window while succ > 0, and succ is 0 right after.
    let path = Path { rate: 10e6, limit: 1000, rtt0: 100 * MS, rtt1: 100 * MS, switch_at: u64::MAX, drop_every: 500 };
    let mut seen = Vec::new();
    let run = simulate(spec("adavegas", AdaVegasParams::default()), &path, 60_000 * MS, |s| {
        seen.push((s.stats().fast_retransmits, ada(s).succ, s.cwnd()));
        false
    });
    assert!(run.drops > 0);
    let hits = seen
        .windows(2)
        .filter(|w| w[1].0 > w[0].0 && w[0].1 > 0 && w[1].1 == 0 && w[1].2 < w[0].2)
        .count();
    assert!(hits > 0, "no retransmission cut reset succ");
}

#[test]
fn adavegas_congestion_after_a_fast_ramp_cuts_cwnd_by_half_the_last_increment() {
    // 5 Mbit/s, 200 ms (125 packets in flight fill the pipe), ample buffer: after slow
    // start AdaVegas ramps up (inc 1, 2, 4, 8 per round); when the queue builds past beta
    // the first congested round halves lastInc (8 -> 4 or 4 -> 2) and the agent takes that
    // many packets off cwnd at once (CaAction::DecreaseBy), with no growth that round.
    let path = Path { rate: 5e6, limit: 1000, rtt0: 200 * MS, rtt1: 200 * MS, switch_at: u64::MAX, drop_every: 0 };
    let mut cuts = Vec::new();
    let mut prev: Option<(f64, AdaRound, u32)> = None;
    simulate(spec("adavegas", AdaVegasParams::default()), &path, 60_000 * MS, |s| {
        let a = ada(s);
        if let Some((cwnd, round, last_inc)) = prev {
            if a.last_round == AdaRound::Congested && (round != AdaRound::Congested || last_inc != a.last_inc) {
                cuts.push((last_inc, a.last_inc, cwnd - s.cwnd()));
            }
        }
        prev = Some((s.cwnd(), a.last_round, a.last_inc));
        false
    });
    let big = cuts.iter().find(|(before, _, _)| *before >= 4).expect("a congested round after inc >= 4");
    let (before, after, cut) = *big;
    assert_eq!(after, before / 2);
    assert_eq!(cut, after as f64, "cuts {cuts:?}");
}
