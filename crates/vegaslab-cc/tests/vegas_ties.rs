//! Vegas ties: rounds whose delta sits exactly on ns-2's rounding boundary
//! (`int(x + 0.5)` with x + 0.5 a whole number), counted per controller in
//! `Ns2Vegas::ties` ([`TieStats`]). Timings are synthetic lockstep batches as in
//! `tests/vegas_ns2.rs`; every expected count is worked out in the comments.

mod common;
use common::*;

use std::ops::RangeInclusive;

use vegaslab_cc::vegas::{Classic, VegasParams};
use vegaslab_cc::vegas_ns2::{Ns2Vegas, TieStats};
use vegaslab_cc::{spec, Flavour, Sender, TcpConfig};

fn vegas_nosyn() -> Sender {
    Sender::new(
        TcpConfig { window: 100.0, syn: false, ..Default::default() },
        spec("vegas", VegasParams::defaults_for(Flavour::Ns2)),
    )
}

fn batch(s: &mut Sender, t_ms: u64, acks: RangeInclusive<i64>) {
    for a in acks {
        ack(s, t_ms, a);
    }
}

fn ties(s: &Sender) -> TieStats {
    s.controller().as_any().downcast_ref::<Ns2Vegas<Classic>>().expect("an ns-2 Vegas controller").ties
}

/// Slow start to the acting round at b3 (tests/vegas_ns2.rs's table), with b2 at `b2_ms`:
/// packets 4..=7, sent at 200 ms, are acknowledged at `b2_ms`, so the round ending at b3
/// has rtt = b2_ms - 200 ms, baseRTT 0.1 s, rttLen 4, outstanding 4 and
/// x + 0.5 = 4 - 4 x 0.1 / rtt + 0.5 = 4.5 - 0.4 / rtt.
/// Rounds: b0 ends the first (slow start's off round), b1 acts, b2 off, b3 acts: two
/// decisions.
fn startup_to_b3(b2_ms: u64) -> Sender {
    let mut s = vegas_nosyn();
    s.app_send(0, None);
    drain(&mut s);
    batch(&mut s, 100, 0..=1);
    batch(&mut s, 200, 2..=3);
    batch(&mut s, b2_ms, 4..=7);
    batch(&mut s, b2_ms + 100, 8..=11);
    s
}

#[test]
fn a_slow_start_round_with_x_plus_half_exactly_2_is_a_decisive_tie() {
    // rtt 0.16 s: x + 0.5 = 4.5 - 2.5 = 2 exactly. delta 2 > gamma 1 leaves slow start,
    // delta 1 would not: decisive. b1's round (rtt 0.1: x + 0.5 = 0.5) is no tie.
    let s = startup_to_b3(360);
    assert_eq!(ties(&s), TieStats { decisions: 2, exact: 1, near: 1, decisive: 1 });
}

#[test]
fn a_round_one_millisecond_off_the_tie_is_not_counted() {
    // rtt 0.159 s: x + 0.5 = 4.5 - 0.4 / 0.159 = 1.984...: not a tie.
    let s = startup_to_b3(359);
    assert_eq!(ties(&s), TieStats { decisions: 2, exact: 0, near: 0, decisive: 0 });
}

#[test]
fn a_tie_where_both_sides_act_alike_is_not_decisive() {
    // b2 at 1000 ms: rtt 0.8 s, x + 0.5 = 4.5 - 0.5 = 4 exactly; delta 4 and delta 3 are
    // both > gamma 1: a tie, not decisive.
    let s = startup_to_b3(1000);
    assert_eq!(ties(&s), TieStats { decisions: 2, exact: 1, near: 1, decisive: 0 });
}

/// `startup_to_b3(360)` and one more batch (12..=19 at 560 ms), with each call's clock
/// (`SenderState::clock`) given: the integer times' doubles, except that the b2 batch's ACKs
/// read `b2_clock`.
fn startup_to_b3_with_b2_clock(b2_clock: f64) -> Sender {
    let mut s = vegas_nosyn();
    let at = |s: &mut Sender, t_ms: u64, clock: f64, acks: RangeInclusive<i64>| {
        for a in acks {
            s.on_ack_at(ms(t_ms), clock, &vegaslab_cc::AckInfo { seqno: a, ..Default::default() });
            drain(s);
        }
    };
    s.app_send_at(0, 0.0, None);
    drain(&mut s);
    at(&mut s, 100, 0.1, 0..=1);
    at(&mut s, 200, 0.2, 2..=3);
    at(&mut s, 360, b2_clock, 4..=7);
    at(&mut s, 460, 0.46, 8..=11);
    at(&mut s, 560, 0.56, 12..=19);
    s
}

#[test]
fn the_decision_at_a_tie_follows_the_senders_clock_not_the_integer_time() {
    // The integer times of `a_slow_start_round_with_x_plus_half_exactly_2_is_a_decisive_tie`
    // (rtt exactly 0.16 s, x + 0.5 exactly 2), then one more batch. Read on doubles, the RTT
    // is b2's clock minus 0.2: with b2 read as 0.36 that is 0.15999999999999998, x + 0.5 is
    // just below 2 and the flow stays in slow start; with b2 one unit in the last place
    // later (as an accumulated clock can have it) the RTT is 0.16 or above and the flow
    // leaves slow start, its ssthresh falling to the window.
    let on_the_double = startup_to_b3_with_b2_clock(0.36);
    let one_ulp_later = startup_to_b3_with_b2_clock(f64::from_bits(0.36f64.to_bits() + 1));
    assert_eq!(on_the_double.state.ssthresh, vegas_nosyn().state.ssthresh);
    assert!(one_ulp_later.state.ssthresh < 10, "{}", one_ulp_later.state.ssthresh);
}
