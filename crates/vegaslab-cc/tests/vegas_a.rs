//! Vegas-A (the Vegas-A paper: Srijith et al., "TCP Vegas-A: Improving the Performance of TCP
//! Vegas", section 3, pseudo-code lines 01-26): every branch with a constructed
//! round (the rule called directly), the tie rule of lines 02/06, the first round, the
//! slow-start bookkeeping of Th(t-rtt), and end to end through a `Sender` on a small
//! bottleneck path (the paper's rerouting experiment in miniature).
//!
//! Notation in the comments: a = alpha, b = beta, Th = this round's actual rate, prev =
//! Th(t-rtt). The rule only reads `delta`, `actual` and `cwnd` of a round; cwnd is 10 in the
//! constructed rounds, so "cwnd + 1" is `Increase(1/10)` per ACK over the next round.

mod common;
use common::path::{delivered_between, simulate, Path, Run};
use common::MS;

use vegaslab_cc::vegas::VegasParams;
use vegaslab_cc::vegas_ns2::{CaAction, Ns2Vegas, Round, VegasRule};
use vegaslab_cc::vegas_a::{AtBeta, EqualThroughput, VegasAParams, VegasAState};
use vegaslab_cc::{spec, Flavour, Sender, TcpConfig};

const CWND: f64 = 10.0;
const GROW: CaAction = CaAction::Increase(1.0 / CWND);

fn round(delta: i64, actual: f64) -> Round {
    Round {
        rtt: 0.12,
        base_rtt: 0.1,
        rtt_len: 10,
        outstanding: 10,
        actual,
        expected: 100.0,
        delta,
        cwnd: CWND,
        backward_qt: 0.0,
    }
}

/// A Vegas-A state with alpha/beta `a`/`b` whose previous round had Th = `prev`.
fn state(a: f64, b: f64, prev: f64) -> VegasAState {
    let mut s = VegasAState::new(&VegasAParams { alpha: a, beta: b, ..Default::default() });
    s.prev_th = Some(prev);
    s
}

/// Run one congestion-avoidance round; return (action, alpha, beta, line).
fn step(s: &mut VegasAState, delta: i64, th: f64) -> (CaAction, f64, f64, u8) {
    let act = s.congestion_avoidance(&round(delta, th));
    (act, s.alpha, s.beta, s.last_line)
}

#[test]
fn defaults_are_the_papers_one_and_three() {
    let p = VegasAParams::default();
    assert_eq!((p.alpha, p.beta, p.gamma, p.equal_throughput), (1.0, 3.0, 1.0, EqualThroughput::Increase));
}

// ---- lines 01-09: beta > diff > alpha ----

#[test]
fn line_03_rising_throughput_between_thresholds_probes_and_raises_both_thresholds() {
    // a 1 < diff 2 < b 3, Th 110 >= prev 100: line 02 -> cwnd + 1 (03), a, b + 1 (04).
    let mut s = state(1.0, 3.0, 100.0);
    assert_eq!(step(&mut s, 2, 110.0), (GROW, 2.0, 4.0, 3));
    assert_eq!(s.trend, 1);
}

#[test]
fn line_07_falling_throughput_between_thresholds_changes_nothing() {
    // a 1 < diff 2 < b 3, Th 90 < prev 100: line 06 -> no update (07).
    let mut s = state(1.0, 3.0, 100.0);
    assert_eq!(step(&mut s, 2, 90.0), (CaAction::Hold, 1.0, 3.0, 7));
    assert_eq!(s.trend, -1);
}

#[test]
fn equal_throughput_between_thresholds_takes_line_02_by_default() {
    // Th 100 == prev 100: line 02 (>=) is tested first -> cwnd, a, b + 1.
    let mut s = state(1.0, 3.0, 100.0);
    assert_eq!(step(&mut s, 2, 100.0), (GROW, 2.0, 4.0, 3));
    assert_eq!(s.trend, 0);
}

#[test]
fn equal_throughput_between_thresholds_takes_line_06_with_the_hold_option() {
    let mut s = state(1.0, 3.0, 100.0);
    s.equal_throughput = EqualThroughput::Hold;
    assert_eq!(step(&mut s, 2, 100.0), (CaAction::Hold, 1.0, 3.0, 7));
    // The option changes only the tie: a rise still probes.
    assert_eq!(step(&mut s, 2, 101.0), (GROW, 2.0, 4.0, 3));
}

// ---- lines 10-19: diff <= alpha ----

#[test]
fn line_12_diff_below_alpha_with_rising_throughput_grows_without_touching_thresholds() {
    // a 3, b 5, diff 2 <= 3; a >= 1 and Th 120 >= prev 100: cwnd + 1 only.
    let mut s = state(3.0, 5.0, 100.0);
    assert_eq!(step(&mut s, 2, 120.0), (GROW, 3.0, 5.0, 12));
}

#[test]
fn line_12_takes_equal_throughput_whatever_the_tie_option() {
    // Line 11 is `>=` and line 14 strict `<`: a tie is line 12 under both options.
    for tie in [EqualThroughput::Increase, EqualThroughput::Hold] {
        let mut s = state(3.0, 5.0, 100.0);
        s.equal_throughput = tie;
        assert_eq!(step(&mut s, 2, 100.0), (GROW, 3.0, 5.0, 12));
    }
}

#[test]
fn diff_equal_to_alpha_is_caught_by_line_10_not_line_01() {
    // diff 1 == a 1: line 01 needs diff > a strictly; line 10 (diff <= a) -> line 12.
    let mut s = state(1.0, 3.0, 100.0);
    assert_eq!(step(&mut s, 1, 100.0), (GROW, 1.0, 3.0, 12));
    // Same at a 4, b 6 with falling Th: line 14 -> 15.
    let mut s = state(4.0, 6.0, 100.0);
    assert_eq!(step(&mut s, 4, 99.0), (CaAction::Decrease, 3.0, 5.0, 15));
}

#[test]
fn negative_diff_is_below_alpha() {
    // diff -2 <= a 1, Th up: line 12.
    let mut s = state(1.0, 3.0, 100.0);
    assert_eq!(step(&mut s, -2, 130.0), (GROW, 1.0, 3.0, 12));
}

#[test]
fn line_15_inflated_alpha_and_falling_throughput_shrinks_cwnd_alpha_and_beta() {
    // a 3 > 1, diff 2 <= 3, Th 80 < prev 100: cwnd - 1, a 2, b 4.
    let mut s = state(3.0, 5.0, 100.0);
    assert_eq!(step(&mut s, 2, 80.0), (CaAction::Decrease, 2.0, 4.0, 15));
}

#[test]
fn line_18_alpha_one_with_falling_throughput_still_grows() {
    // a 1: line 11 fails (Th 80 < 100), line 14 fails (a > 1 false), line 17 a == 1 -> 18.
    let mut s = state(1.0, 3.0, 100.0);
    assert_eq!(step(&mut s, 0, 80.0), (GROW, 1.0, 3.0, 18));
}

#[test]
fn alpha_below_one_matches_line_10_and_nothing_inside_it() {
    // Hand-built a 0.5 (the parser never allows it): 11 (a >= 1), 14 (a > 1), 17 (a == 1)
    // all fail -> no action, reported as line 10.
    let mut s = state(0.5, 3.0, 100.0);
    assert_eq!(step(&mut s, 0, 80.0), (CaAction::Hold, 0.5, 3.0, 10));
}

// ---- lines 20-23: diff > beta ----

#[test]
fn line_22_diff_above_beta_with_inflated_alpha_shrinks_all_three() {
    // diff 6 > b 5, a 3 > 1: a 2, b 4 (21), cwnd - 1 (22). Throughput trend is irrelevant.
    for th in [80.0, 100.0, 120.0] {
        let mut s = state(3.0, 5.0, 100.0);
        assert_eq!(step(&mut s, 6, th), (CaAction::Decrease, 2.0, 4.0, 22));
    }
}

#[test]
fn line_22_diff_above_beta_with_alpha_one_keeps_the_thresholds() {
    // diff 4 > b 3, a 1: line 21's guard fails, cwnd - 1 only.
    let mut s = state(1.0, 3.0, 100.0);
    assert_eq!(step(&mut s, 4, 120.0), (CaAction::Decrease, 1.0, 3.0, 22));
}

// ---- lines 24-26: the final else ----

#[test]
fn diff_equal_to_beta_takes_lines_01_09_with_the_between_option() {
    // at_beta = between: diff 3 == b 3 > a 1 -> line 01; Th flat -> 02 -> probe; Th down -> 07.
    let mut s = state(1.0, 3.0, 100.0);
    s.at_beta = AtBeta::Between;
    assert_eq!(step(&mut s, 3, 100.0), (GROW, 2.0, 4.0, 3));
    assert_eq!(step(&mut s, 4, 90.0), (CaAction::Hold, 2.0, 4.0, 7));
    // Above beta is still line 22; a == b == diff is still line 10.
    assert_eq!(step(&mut s, 5, 90.0), (CaAction::Decrease, 1.0, 3.0, 22));
    let mut s = state(2.0, 2.0, 100.0);
    s.at_beta = AtBeta::Between;
    assert_eq!(step(&mut s, 2, 100.0), (GROW, 2.0, 2.0, 12));
}

#[test]
fn line_25_diff_equal_to_beta_changes_nothing_in_the_literal_reading() {
    // at_beta = hold (the comparisons as printed). diff 3 == b 3: not 01 (b > diff false),
    // not 10 (3 <= 1 false), not 20 (3 > 3 false).
    for th in [80.0, 100.0, 120.0] {
        let mut s = state(1.0, 3.0, 100.0);
        s.at_beta = AtBeta::Hold;
        assert_eq!(step(&mut s, 3, th), (CaAction::Hold, 1.0, 3.0, 25));
    }
}

#[test]
fn alpha_equal_to_beta_sends_diff_equal_to_both_to_line_10() {
    // a = b = 2, diff 2: 01 impossible, 10 (2 <= 2) -> Th up: 12; Th down (a 2 > 1): 15.
    let mut s = state(2.0, 2.0, 100.0);
    assert_eq!(step(&mut s, 2, 100.0), (GROW, 2.0, 2.0, 12));
    let mut s = state(2.0, 2.0, 100.0);
    assert_eq!(step(&mut s, 2, 90.0), (CaAction::Decrease, 1.0, 1.0, 15));
}

// ---- Th(t-rtt) bookkeeping ----

#[test]
fn first_round_compares_with_zero_so_the_throughput_counts_as_risen() {
    // No previous round: Th(t-rtt) = 0 (ns-2's zero-initialised variable). diff 2 in (1, 3):
    // line 02 -> probe; trend +1.
    let mut s = VegasAState::new(&VegasAParams::default());
    assert_eq!(s.trend, 0);
    assert_eq!(step(&mut s, 2, 50.0), (GROW, 2.0, 4.0, 3));
    assert_eq!((s.trend, s.prev_th), (1, Some(50.0)));
}

#[test]
fn each_round_becomes_the_next_rounds_previous_throughput() {
    // Rounds Th 100, 90, 95 with diff 2 at a/b 1/3 (then 2/4 after a probe):
    // r1: prev None (0) -> 02 -> probe, a/b 2/4; r2: 90 < 100 -> 07 (diff 2 not in (2, 4):
    // diff 2 <= a 2 -> line 10: a 2 > 1, Th down -> 15, a/b 1/3); r3: 95 > 90, diff 2 in
    // (1, 3) -> 03, a/b 2/4.
    let mut s = VegasAState::new(&VegasAParams::default());
    assert_eq!(step(&mut s, 2, 100.0), (GROW, 2.0, 4.0, 3));
    assert_eq!(step(&mut s, 2, 90.0), (CaAction::Decrease, 1.0, 3.0, 15));
    assert_eq!(step(&mut s, 2, 95.0), (GROW, 2.0, 4.0, 3));
}

#[test]
fn slow_start_rounds_set_the_previous_throughput_without_acting() {
    // A slow-start round with Th 200 is observed; the first CA round (Th 150, diff 2 in
    // (1, 3)) sees prev 200 -> line 06/07, not the "first round" probe.
    let mut rule = VegasAState::new(&VegasAParams::default());
    VegasRule::observe_slow_start(&mut rule, &round(0, 200.0));
    assert_eq!((rule.prev_th, rule.alpha, rule.beta, rule.last_line), (Some(200.0), 1.0, 3.0, 0));
    assert_eq!(VegasRule::congestion_avoidance(&mut rule, &round(2, 150.0)), CaAction::Hold);
    assert_eq!(rule.probe(), vec![("alpha", 1.0), ("beta", 3.0), ("trend", -1.0)]);
}

#[test]
fn probe_reports_alpha_beta_and_trend() {
    let mut s = state(1.0, 3.0, 100.0);
    step(&mut s, 2, 110.0);
    assert_eq!(s.probe(), vec![("alpha", 2.0), ("beta", 4.0), ("trend", 1.0)]);
    step(&mut s, 3, 110.0); // diff 3 in (2, 4), tie -> 03; trend 0
    assert_eq!(s.probe(), vec![("alpha", 3.0), ("beta", 5.0), ("trend", 0.0)]);
}

// ---- end to end: a Sender on a bottleneck path ----

fn vegas_a_rule(s: &Sender) -> &VegasAState {
    &s.controller().as_any().downcast_ref::<Ns2Vegas<VegasAState>>().expect("an ns-2 Vegas-A controller").rule
}

#[test]
fn sender_builds_the_vegas_a_rule_with_the_initial_thresholds() {
    let s = Sender::new(TcpConfig::default(), spec("vegas-a", VegasAParams { alpha: 2.0, beta: 5.0, ..Default::default() }));
    let r = vegas_a_rule(&s);
    assert_eq!((r.alpha, r.beta, r.prev_th), (2.0, 5.0, None));
    assert_eq!(s.controller().name(), "vegas-a");
    assert_eq!(s.probe()[..3], [("alpha", 2.0), ("beta", 5.0), ("trend", 0.0)]);
}

#[test]
fn end_to_end_reroute_literal_reading_stalls_at_diff_equal_beta_and_the_between_reading_recovers() {
    // The Vegas-A paper's section 4.1 in miniature: 1 Mbit/s bottleneck (1000-byte packets: 8 ms
    // each), 50-packet DropTail, propagation RTT 40 ms rising to 220 ms at 20 s. baseRTT
    // stays 48 ms (40 + 8 ms transmission), so after the reroute a window of w packets, all
    // of them in flight, gives diff = round(w x (1 - 48/228)) = round(0.79 w): w 5 -> 4 > 3
    // (line 22, cwnd - 1); w 4 -> round(3.16) = 3 = beta.
    //
    // Literal reading (at_beta = hold): diff == beta is the final else (lines 24-25): cwnd stays 4
    // for good, exactly like Vegas (whose rule at diff 3 also holds): 4 packets per 228 ms
    // = 17.5 packets/s, 700 packets in 40 s, identical for both.
    //
    // `at_beta = between` (the default): diff 3 == beta -> lines 01-02 with Th flat (tie -> line 02):
    // cwnd 5, alpha/beta 2/4; diff round(3.95) = 4 == beta -> again; cwnd 6, 3/5, diff
    // round(4.74) = 5 ... each round adds one packet and keeps diff at beta, until the link
    // is full (28.5 packets in flight per 228 ms at 125 packets/s). The paper: Vegas-A
    // 940 kbit/s, Vegas 217 kbit/s over 200 s.
    let path = Path { rate: 1e6, limit: 50, rtt0: 40 * MS, rtt1: 220 * MS, switch_at: 20_000 * MS, drop_every: 0 };
    let end = 120_000 * MS;
    let vegas = simulate(spec("vegas", VegasParams::defaults_for(Flavour::Ns2)), &path, end, |_| false);
    let literal =
        simulate(spec("vegas-a", VegasAParams { at_beta: AtBeta::Hold, ..Default::default() }), &path, end, |_| false);
    let between = simulate(spec("vegas-a", VegasAParams::default()), &path, end, |_| false);
    assert_eq!(VegasAParams::default().at_beta, AtBeta::Between);

    // Before the reroute all fill the link (~125 packets/s): > 1150 packets in 10..20 s.
    for run in [&vegas, &literal, &between] {
        let n = delivered_between(run, 10_000 * MS, 20_000 * MS);
        assert!(n > 1150, "pre-reroute delivery {n}");
    }
    let window = |r: &Run| delivered_between(r, 80_000 * MS, 120_000 * MS);
    let (v, l, b) = (window(&vegas), window(&literal), window(&between));
    // 4 packets per 228 ms over 40 s = 701.75 (+-2 by where the window edges fall).
    assert!((698..=704).contains(&v), "Vegas {v}");
    assert!((698..=704).contains(&l), "literal Vegas-A stalls with Vegas: {l}");
    assert_eq!(literal.sender.cwnd().floor(), 4.0);
    assert_eq!(vegas_a_rule(&literal.sender).last_line, 25);
    assert!(b > 4500, "between-reading Vegas-A should nearly fill the link (5000 max), got {b}");
    assert!(between.sender.cwnd() > 25.0, "cwnd {}", between.sender.cwnd());
    // alpha and beta have no ceiling: the between reading keeps probing until the 50-packet
    // buffer overflows once (the paper's Table 7: Vegas-A retransmits 1-2 packets where
    // Vegas loses none).
    assert_eq!((vegas.drops, literal.drops), (0, 0));
    assert!((1..=5).contains(&between.drops), "{} drops", between.drops);

    // Along the run alpha >= 1 and beta - alpha == 2 (they move together, lines 04, 15, 21),
    // and the thresholds did move; plain Vegas' never do.
    for run in [&literal, &between] {
        assert!(run.probes.iter().all(|p| p[0].1 >= 1.0 && p[1].1 - p[0].1 == 2.0));
        assert!(run.probes.iter().any(|p| p[0].1 > 1.0), "alpha never left 1");
    }
    assert!(vegas.probes.iter().all(|p| p[0].1 == 1.0 && p[1].1 == 3.0));
}
