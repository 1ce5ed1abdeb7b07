//! CUBIC (Linux `tcp_cubic.c` semantics, integer) against values worked out by hand from
//! RFC 9438's real-number formulas, with the constants C = 0.4 and beta_cubic = 0.7 (RFC 9438
//! section 4.1.1). Where Linux's integer form cannot hit the real value exactly, each test
//! states the bound and derives it from the units (see the `cubic` module docs):
//!
//! - curve time t and K are whole 1/1024 s, each truncated (< 1/1024 s each);
//! - Linux's C is 410/1024 = 0.400390625, which also makes K shorter by the factor
//!   cbrt(0.4 / 0.400390625);
//! - the cubic term is truncated to whole packets (< 1 packet).
//!
//! The driver below calls the hooks in the order the Linux-like sender does: `pkts_acked`
//! (when the ACK has a sample), then `cong_avoid`, then the sender fills the window.

use vegaslab_cc::controller::{
    Ack, CaState, CongestionControl, Cut, CwndEvent, Loss, LossKind, RttSample, Window,
};
use vegaslab_cc::cubic::{read, Cubic, CubicParams, INFINITE_SSTHRESH};
use vegaslab_cc::params::SenderKind;

mod common;
use common::params::{Table, Value};

/// Nanoseconds per millisecond / second.
const MS: u64 = 1_000_000;
const SEC: u64 = 1_000_000_000;

/// RFC 9438 constants (section 4.1.1).
const C: f64 = 0.4;
const BETA: f64 = 0.7;
/// Linux's C: cube_rtt_scale / 1024 = 41 * 10 / 1024.
const C_LINUX: f64 = 410.0 / 1024.0;
/// One unit of Linux's curve time, seconds.
const UNIT: f64 = 1.0 / 1024.0;

/// An RTT of `us` microseconds in the sender's seconds, such that `rtt_us()` gives `us`
/// back exactly (the half microsecond survives the truncation).
fn rtt_of_us(us: u64) -> f64 {
    (us as f64 + 0.5) * 1e-6
}

/// A controller and the sender's window, driven like the Linux-like sender.
struct Conn {
    cc: Cubic,
    w: Window,
}

impl Conn {
    /// A connection with `cwnd` packets sent (packets 0..cwnd outstanding).
    fn new(p: CubicParams, cwnd: f64, max_window: f64) -> Conn {
        let mut w = Window {
            cwnd,
            ssthresh: 20,
            next_seq: 0,
            last_ack: -1,
            max_window,
            cwnd_limited: true,
        };
        let mut cc = Cubic::new(p);
        cc.init(&mut w);
        w.next_seq = w.cwnd as i64;
        Conn { cc, w }
    }

    /// The next packet is acknowledged at `now` (ns) with an RTT sample of `rtt_us`.
    fn ack(&mut self, now: u64, rtt_us: Option<u64>) {
        self.ack_n(now, rtt_us, 1);
    }

    /// `acked` packets are acknowledged by one ACK.
    fn ack_n(&mut self, now: u64, rtt_us: Option<u64>, acked: i64) {
        self.w.last_ack += acked;
        if let Some(us) = rtt_us {
            let sample = RttSample {
                now,
                rtt: rtt_of_us(us),
                queueing: None,
            };
            self.cc.pkts_acked(&mut self.w, &sample);
        }
        let ack = Ack {
            seqno: self.w.last_ack,
            acked,
            now,
            elapsed: now as f64 * 1e-9,
        };
        self.cc.cong_avoid(&mut self.w, &ack);
        self.w.next_seq = self
            .w
            .next_seq
            .max(self.w.last_ack + 1 + self.w.cwnd as i64);
    }

    /// A loss detected now; the sender applies the cut and enters recovery.
    fn loss(&mut self, kind: LossKind) -> Cut {
        let cut = self.cc.ssthresh(
            &self.w,
            &Loss {
                kind,
                window: self.w.cwnd,
            },
        );
        self.w.cwnd = cut.cwnd;
        self.w.ssthresh = cut.ssthresh;
        let state = match kind {
            LossKind::FastRetransmit => CaState::Recovery,
            LossKind::Timeout => CaState::Loss,
        };
        self.cc.set_state(&self.w, state);
        cut
    }

    /// A fast retransmit at cwnd `cwnd`, and recovery ends at once.
    fn fast_retransmit_at(&mut self, cwnd: f64) -> Cut {
        self.w.cwnd = cwnd;
        let cut = self.loss(LossKind::FastRetransmit);
        self.cc.set_state(&self.w, CaState::Open);
        cut
    }
}

fn defaults() -> CubicParams {
    CubicParams::default()
}

/// RFC 9438 equation 1: W_cubic(t) = C (t - K)^3 + W_max.
fn w_cubic(t: f64, k: f64, w_max: f64) -> f64 {
    C * (t - k).powi(3) + w_max
}

/// How far Linux's integer target may be from W_cubic(t), packets. The integer curve uses
/// t and K truncated to 1/1024 s (each < 1 unit off) and K itself computed for Linux's C,
/// which is cbrt(C / C_LINUX) of the RFC's; so |t - K| is off by at most
/// `dt = 2 units + K (1 - cbrt(C / C_LINUX))`, which moves the curve by at most its slope
/// 3 C_LINUX (|t - K| + dt)^2 times dt. Using C_LINUX instead of C adds
/// |C_LINUX - C| |t - K|^3, and truncating the cubic term to whole packets adds < 1.
fn target_bound(t: f64, k: f64) -> f64 {
    let dt = 2.0 * UNIT + k * (1.0 - (C / C_LINUX).cbrt());
    let x = (t - k).abs();
    1.0 + 3.0 * C_LINUX * (x + dt).powi(2) * dt + (C_LINUX - C) * x.powi(3)
}

// ---------------------------------------------------------------------------------------
// Window increase function (RFC 9438 section 4.2)
// ---------------------------------------------------------------------------------------

/// W_max = 100 packets, beta 0.7: the loss leaves cwnd_epoch = 70, and
/// K = cbrt(W_max (1 - beta) / C) = cbrt(100 x 0.3 / 0.4) = cbrt(75) = 4.2172 s.
#[test]
fn k_after_a_loss_at_100_packets_is_cube_root_of_75_seconds() {
    let k_rfc = (100.0 * (1.0 - BETA) / C).cbrt();
    assert!((k_rfc - 4.2172).abs() < 1e-4);

    let mut c = Conn::new(defaults(), 100.0, 10_000.0);
    c.fast_retransmit_at(100.0);
    assert_eq!(c.w.cwnd, 70.0);
    c.ack(10 * SEC, None); // the epoch starts on the first ACK after the loss
    assert_k_within_linux_quantisation(c.cc.k_units(), k_rfc);
}

/// Linux's K is the RFC's K for its C (shorter by the factor cbrt(C / C_LINUX)), truncated
/// to whole 1/1024 s: in (K', K'] - 1/1024 s with K' = K_rfc cbrt(C / C_LINUX).
fn assert_k_within_linux_quantisation(k_units: u64, k_rfc: f64) {
    let k = k_units as f64 * UNIT;
    let hi = k_rfc * (C / C_LINUX).cbrt() + 1e-9;
    let lo = hi - UNIT;
    assert!(
        lo < k && k <= hi,
        "K = {k} s not in ({lo}, {hi}] (RFC {k_rfc} s)"
    );
}

/// W_cubic(t) = 0.4 (t - 4.2172)^3 + 100 at t = 0, 1 s, K, 2K and 10 s:
/// 70, 100 - 0.4 x 3.2172^3 = 86.68, 100, 100 + 0.4 x 75 = 130, 100 + 0.4 x 5.7828^3 = 177.35.
/// The controller evaluates the curve at t + delay_min (the RFC's W_cubic(t + RTT)); with no
/// RTT sample delay_min is 0, so an ACK at epoch + t gives the target for t.
#[test]
fn target_follows_the_rfc_cubic_curve_after_a_loss_at_100_packets() {
    let k = 4.2172_f64;
    let expected = [
        (0.0, 70.0),
        (1.0, 86.68),
        (k, 100.0),
        (2.0 * k, 130.0),
        (10.0, 177.35),
    ];
    for (t, w) in expected {
        assert!(
            (w_cubic(t, (75.0_f64).cbrt(), 100.0) - w).abs() < 0.01,
            "hand value at {t}"
        );
    }

    let mut c = Conn::new(defaults(), 100.0, 10_000.0);
    c.fast_retransmit_at(100.0);
    let epoch = 10 * SEC;
    for (t, w) in expected {
        c.ack(epoch + (t * 1e9) as u64, None);
        assert_eq!(c.cc.epoch_start_us(), Some(epoch / 1000));
        let target = c.cc.target() as f64;
        let bound = target_bound(t, k);
        assert!(
            (target - w).abs() <= bound,
            "t = {t}: target {target}, RFC {w}, bound {bound}"
        );
    }
}

/// The curve is evaluated one minimum RTT ahead (RFC 9438 section 4.2: W_cubic(t + RTT);
/// Linux adds delay_min). With a 500 ms sample before the loss, the ACK that starts the epoch
/// gets W_cubic(0.5) = 100 + 0.4 (0.5 - 4.2172)^3 = 100 - 0.4 x 51.36 = 79.45, and an ACK
/// 1 s later W_cubic(1.5) = 100 + 0.4 (1.5 - 4.2172)^3 = 100 - 0.4 x 20.06 = 91.98.
#[test]
fn target_is_evaluated_one_minimum_rtt_ahead() {
    let k = 4.2172_f64;
    let mut c = Conn::new(
        CubicParams {
            hystart: false,
            ..defaults()
        },
        100.0,
        10_000.0,
    );
    c.ack(SEC, Some(500_000));
    c.fast_retransmit_at(100.0);
    let epoch = 10 * SEC;
    for (after, t, w) in [(0, 0.5, 79.45), (SEC, 1.5, 91.98)] {
        c.ack(epoch + after, None);
        let target = c.cc.target() as f64;
        let bound = target_bound(t, k);
        assert!(
            (target - w).abs() <= bound,
            "t = {t}: target {target}, RFC {w}, bound {bound}"
        );
    }
}

// ---------------------------------------------------------------------------------------
// Multiplicative decrease and fast convergence (sections 4.6, 4.7)
// ---------------------------------------------------------------------------------------

/// ssthresh = cwnd x beta: 100 -> 70, 1000 -> 700, 10 -> 7 (Linux: 717/1024, truncated:
/// 70.02 -> 70, 700.2 -> 700, 7.002 -> 7); cwnd continues from ssthresh.
#[test]
fn loss_cuts_to_seven_tenths_of_cwnd() {
    for (cwnd, ss) in [(100.0, 70), (1000.0, 700), (10.0, 7)] {
        let mut c = Conn::new(defaults(), cwnd, 10_000.0);
        let cut = c.fast_retransmit_at(cwnd);
        assert_eq!(
            cut,
            Cut {
                ssthresh: ss,
                cwnd: ss as f64
            },
            "cwnd {cwnd}"
        );
        assert_eq!(c.cc.w_max(), cwnd as u64);
    }
}

/// A loss at cwnd 80 below the last W_max 100 remembers W_max = 80 (1 + 0.7) / 2 = 68
/// (Linux 80 x 1741 / 2048 = 68.007 -> 68), and cuts to 80 x 0.7 = 56; without fast
/// convergence W_max is 80. A loss above the last W_max (120) remembers 120.
#[test]
fn fast_convergence_lowers_w_max_after_a_loss_below_the_last_one() {
    let mut c = Conn::new(defaults(), 100.0, 10_000.0);
    c.fast_retransmit_at(100.0);
    let cut = c.fast_retransmit_at(80.0);
    assert_eq!(c.cc.w_max(), 68);
    assert_eq!(cut.ssthresh, 56);

    let mut c = Conn::new(
        CubicParams {
            fast_convergence: false,
            ..defaults()
        },
        100.0,
        1e4,
    );
    c.fast_retransmit_at(100.0);
    c.fast_retransmit_at(80.0);
    assert_eq!(c.cc.w_max(), 80);

    let mut c = Conn::new(defaults(), 100.0, 10_000.0);
    c.fast_retransmit_at(100.0);
    c.fast_retransmit_at(120.0);
    assert_eq!(c.cc.w_max(), 120);
}

/// With a fast convergence W_max (68) above cwnd_epoch (80 x 0.7 = 56), K = cbrt((68 - 56) /
/// 0.4) = cbrt(30) = 3.1072 s.
#[test]
fn k_after_fast_convergence_uses_the_lowered_w_max() {
    let mut c = Conn::new(defaults(), 100.0, 10_000.0);
    c.fast_retransmit_at(100.0);
    c.fast_retransmit_at(80.0);
    c.ack(10 * SEC, None);
    let k_rfc = ((68.0 - 56.0) / C).cbrt();
    assert!((k_rfc - 3.1072).abs() < 1e-4);
    assert_k_within_linux_quantisation(c.cc.k_units(), k_rfc);
}

// ---------------------------------------------------------------------------------------
// Reno-friendly region (section 4.3)
// ---------------------------------------------------------------------------------------

/// After a loss at 100 packets on a 10 ms path, the cubic curve climbs slowly (W_cubic(0.4 s)
/// = 100 - 0.4 x 3.8172^3 = 77.8) while the Reno estimate W_est = 70 + alpha x acked / cwnd,
/// alpha = 3 (1 - 0.7) / (1 + 0.7) = 0.5294, gains about half a packet per round: cwnd
/// follows W_est. The RFC value is integrated per ACK with the controller's cwnd.
///
/// Linux folds ACKs into W_est only when it recomputes (cwnd changed, or 1/32 s passed), so
/// the comparison is made on every ACK that follows a cwnd change, where nothing is pending.
/// There, Linux's W_est is whole and counts one packet per floor(cwnd x 15 / 8) ACKed
/// packets (strictly more than that many first), against the RFC's cwnd / alpha =
/// 1.8889 cwnd: it is below the RFC value by less than 1 + 1 / (1.875 cwnd), and above it
/// by at most the growth G times the rate excess (0.0139 cwnd + 1) / (1.875 cwnd - 1)
/// (1.5% at cwnd 70). Each whole step is counted at the cwnd of its last ACK, which differs
/// from the RFC's per-ACK cwnd by at most one packet: 1 / cwnd of a packet either way.
#[test]
fn cwnd_follows_the_reno_estimate_where_cubic_is_slower() {
    let alpha = 3.0 * (1.0 - BETA) / (1.0 + BETA);
    assert!((alpha - 0.5294).abs() < 1e-4);
    let mut c = Conn::new(defaults(), 100.0, 10_000.0);
    c.fast_retransmit_at(100.0);
    let epoch = 10 * SEC;
    let rtt = 10 * MS;
    let cwnd_min = 70.0;
    let rate = (0.0139 * cwnd_min + 1.0) / (1.875 * cwnd_min - 1.0);
    let mut w_est = 70.0_f64;
    let mut now = epoch;
    let mut last_cwnd = 0.0;
    let mut checked = 0;
    for round in 0..40 {
        let n = c.w.cwnd as u64;
        for i in 0..n {
            now = epoch + round * rtt + i * rtt / n;
            let cwnd = c.w.cwnd;
            w_est += alpha / cwnd;
            c.ack(now, None);
            if cwnd != last_cwnd {
                let linux = c.cc.w_est() as f64;
                let (lo, hi) = (
                    -(1.0 + 1.0 / (1.875 * cwnd_min) + 1.0 / cwnd_min),
                    (w_est - 70.0) * rate + 1.0 / cwnd_min,
                );
                let d = linux - w_est;
                assert!(
                    lo <= d && d <= hi,
                    "W_est {linux}, RFC {w_est:.3}: {d:.3} not in [{lo:.3}, {hi:.3}]"
                );
                checked += 1;
            }
            last_cwnd = cwnd;
        }
    }
    assert!(checked > 15);
    let t = (now - epoch) as f64 * 1e-9;
    assert!(
        w_cubic(t, (75.0_f64).cbrt(), 100.0) + 10.0 < w_est,
        "not in the Reno-friendly region"
    );
    // cwnd follows W_est: it closes a gap of d in cwnd / d ACKs, and W_est steps every
    // 1.875 rounds, so cwnd is at most 2 behind and never ahead (the curve is below).
    let linux = c.cc.w_est() as f64;
    assert!(
        c.w.cwnd <= linux && c.w.cwnd >= linux - 2.0,
        "cwnd {} W_est {linux}",
        c.w.cwnd
    );
}

// ---------------------------------------------------------------------------------------
// Slow start (section 4.10; Linux tcp_slow_start and HyStart)
// ---------------------------------------------------------------------------------------

/// Slow start grows by the packets each ACK acknowledges (10 + 3 = 13, + 1 = 14), not beyond
/// ssthresh (16: 14 + 5 stops at 16); the 3 left over go to the congestion-avoidance credit,
/// which needs cnt = 20 packets (before any loss) for +1: 17 more make 20 and cwnd 17.
#[test]
fn slow_start_grows_by_acked_up_to_ssthresh_then_counts_the_rest() {
    let mut c = Conn::new(
        CubicParams {
            hystart: false,
            ..defaults()
        },
        10.0,
        1000.0,
    );
    assert_eq!(c.w.ssthresh, INFINITE_SSTHRESH);
    c.ack_n(SEC, None, 3);
    assert_eq!(c.w.cwnd, 13.0);
    c.ack_n(SEC + MS, None, 1);
    assert_eq!(c.w.cwnd, 14.0);
    c.w.ssthresh = 16;
    c.ack_n(SEC + 2 * MS, None, 5);
    assert_eq!(c.w.cwnd, 16.0);
    assert_eq!(c.cc.cnt(), 20);
    c.ack_n(SEC + 3 * MS, None, 16);
    assert_eq!(c.w.cwnd, 16.0);
    c.ack_n(SEC + 4 * MS, None, 1);
    assert_eq!(c.w.cwnd, 17.0);
}

/// Slow start with cwnd 16 (the HyStart low window) and ACKs 5 ms apart (no ack train): the
/// first round (packets 0..15) has RTT `base_us`, which becomes delay_min; with 100 ms the
/// threshold is clamp(100 / 8, 4, 16) = 12.5 ms. The second round starts at the ACK of
/// packet 16 (the first sent after the round began) and runs to packet 47; its first 8
/// samples (packets 16..23) set the round's minimum RTT, and from the 9th (packet 24, when
/// cwnd is 16 + 24 = 40) HyStart compares it with delay_min + threshold. Returns the packet
/// whose ACK ended slow start, checking that ssthresh became the cwnd the sample saw and that
/// this ACK added nothing.
fn delay_round(p: CubicParams, base_us: u64, rtt_us: u64) -> (Conn, Option<i64>) {
    let mut c = Conn::new(p, 16.0, 10_000.0);
    let mut now = SEC;
    for seq in 0..48 {
        now += 5 * MS;
        let rtt = if seq < 16 { base_us } else { rtt_us };
        let before = c.w.cwnd;
        c.ack(now, Some(rtt));
        if c.cc.hystart_found() {
            assert_eq!(c.w.ssthresh as f64, before, "ssthresh = cwnd at the exit");
            assert_eq!(c.w.cwnd, before, "no slow-start growth on the exit ACK");
            return (c, Some(seq));
        }
    }
    (c, None)
}

#[test]
fn hystart_delay_increase_ends_slow_start_with_ssthresh_at_cwnd() {
    let (c, exit) = delay_round(defaults(), 100_000, 112_501);
    assert_eq!(exit, Some(24), "exit on the 9th sample of the second round");
    assert_eq!(c.w.ssthresh, 40);
    assert!(!c.w.in_slow_start());
}

#[test]
fn hystart_delay_threshold_is_one_eighth_of_min_rtt_clamped_to_4_and_16_ms() {
    // (base, threshold): 100 ms -> 12.5 ms; 10 ms -> 1.25 clamped to 4 ms; 200 ms -> 25
    // clamped to 16 ms. At base + threshold: no exit (the test is "greater than").
    for (base, thresh) in [(100_000, 12_500), (10_000, 4_000), (200_000, 16_000)] {
        let (c, exit) = delay_round(defaults(), base, base + thresh);
        assert_eq!(exit, None, "base {base}: exit at exactly the threshold");
        assert!(c.w.in_slow_start());
        let (_, exit) = delay_round(defaults(), base, base + thresh + 1);
        assert_eq!(exit, Some(24), "base {base}: no exit above the threshold");
    }
}

/// The same rounds with hystart_low_window 41: below it HyStart neither decides nor counts
/// samples (Linux returns before both), so the second round's 8 counted samples are packets
/// 25..32 (cwnd 41..48) and the 9th, packet 33 at cwnd 16 + 33 = 49, ends slow start.
#[test]
fn hystart_does_not_act_below_the_low_window() {
    let p = CubicParams {
        hystart_low_window: 41,
        ..defaults()
    };
    let (c, exit) = delay_round(p, 100_000, 112_501);
    assert_eq!(exit, Some(33));
    assert_eq!(c.w.ssthresh, 49);
}

/// Ack train: cwnd 64, the first round's ACKs arrive 1 ms apart with RTT 100 ms (delay_min
/// 100 ms, threshold delay_min / 2 = 50 ms). The round starts at the ACK of packet 0; the
/// ACK of packet 51 (51 ms later, > 50 ms) ends slow start with ssthresh = cwnd =
/// 64 + 51 = 115. With ACKs 2.001 ms apart (> hystart_ack_delta_us 2 ms) the train breaks
/// at once and slow start goes on; at exactly 2 ms it continues and the exit comes at
/// packet 26 (52 ms > 50 ms).
fn train(spacing_ns: u64) -> (Conn, Option<i64>) {
    let mut c = Conn::new(defaults(), 64.0, 10_000.0);
    let mut now = SEC;
    for seq in 0..64 {
        let before = c.w.cwnd;
        c.ack(now, Some(100_000));
        if c.cc.hystart_found() {
            assert_eq!(c.w.ssthresh as f64, before);
            return (c, Some(seq));
        }
        now += spacing_ns;
    }
    (c, None)
}

#[test]
fn hystart_ack_train_longer_than_half_the_min_rtt_ends_slow_start() {
    let (c, exit) = train(MS);
    assert_eq!(exit, Some(51));
    assert_eq!(c.w.ssthresh, 115);
    assert!(!c.w.in_slow_start());
    assert_eq!(train(2 * MS).1, Some(26));
    assert_eq!(train(2 * MS + 1000).1, None);
}

// ---------------------------------------------------------------------------------------
// Idle restart, timeout, undo, limits
// ---------------------------------------------------------------------------------------

/// Epoch at 10 s, last ACK at 11 s (t = 1 s: target 86.68 by the RFC), idle until 16 s: the
/// TxStart event moves the epoch to 15 s, so an ACK at 16 s is again at t = 1 s of the curve
/// (without the shift it would be t = 6 s, 100 + 0.4 x 1.7828^3 = 102.3).
#[test]
fn tx_start_after_idle_shifts_the_epoch_by_the_idle_time() {
    let mut c = Conn::new(defaults(), 100.0, 10_000.0);
    c.fast_retransmit_at(100.0);
    c.ack(10 * SEC, None);
    c.ack(11 * SEC, None);
    let before = c.cc.target();
    assert!((before as f64 - 86.68).abs() <= target_bound(1.0, 4.2172));
    c.cc.cwnd_event(&mut c.w, CwndEvent::TxStart { now: 16 * SEC, last_send: 11 * SEC });
    assert_eq!(c.cc.epoch_start_us(), Some(15_000_000));
    c.ack(16 * SEC, None);
    assert_eq!(c.cc.target(), before);
}

#[test]
fn tx_start_without_an_epoch_changes_nothing() {
    let mut c = Conn::new(defaults(), 10.0, 1000.0);
    c.cc.cwnd_event(&mut c.w, CwndEvent::TxStart { now: 5 * SEC, last_send: 0 });
    assert_eq!(c.cc.epoch_start_us(), None);
}

/// A timeout: ssthresh = 0.7 cwnd, cwnd restarts at 1, and `set_state(Loss)` forgets W_max,
/// the minimum RTT and HyStart's exit (Linux's `bictcp_reset`).
#[test]
fn timeout_restarts_at_one_packet_and_forgets_the_curve() {
    let (mut c, _) = train(MS);
    assert!(c.cc.hystart_found());
    assert_eq!(c.cc.delay_min_us(), 100_000);
    c.w.cwnd = 100.0;
    let cut = c.loss(LossKind::Timeout);
    assert_eq!(
        cut,
        Cut {
            ssthresh: 70,
            cwnd: 1.0
        }
    );
    assert_eq!(c.cc.w_max(), 0);
    assert_eq!(c.cc.delay_min_us(), 0);
    assert!(!c.cc.hystart_found());
    assert_eq!(c.cc.epoch_start_us(), None);
}

/// Linux's tcp_reno_undo_cwnd: max(cwnd, cwnd when the loss was detected).
#[test]
fn undo_restores_the_window_before_the_loss() {
    let mut c = Conn::new(defaults(), 100.0, 10_000.0);
    c.fast_retransmit_at(100.0);
    assert_eq!(c.cc.undo_cwnd(&c.w), 100.0);
    c.w.cwnd = 120.0;
    assert_eq!(c.cc.undo_cwnd(&c.w), 120.0);
}

#[test]
fn loss_never_cuts_below_two_packets() {
    for cwnd in [1.0, 2.0, 2.9, 3.0] {
        let mut c = Conn::new(defaults(), cwnd, 100.0);
        c.w.cwnd = cwnd;
        let cut = c.loss(LossKind::FastRetransmit);
        assert_eq!(
            cut,
            Cut {
                ssthresh: 2,
                cwnd: 2.0
            },
            "cwnd {cwnd}"
        );
    }
}

#[test]
fn cwnd_never_exceeds_the_receiver_window() {
    let mut c = Conn::new(
        CubicParams {
            hystart: false,
            ..defaults()
        },
        10.0,
        50.0,
    );
    c.ack_n(SEC, None, 100);
    assert_eq!(c.w.cwnd, 50.0);
    for i in 0..2000 {
        c.ack_n(SEC + i * 10 * MS, Some(10_000), 2);
        assert!(c.w.cwnd <= 50.0);
    }
    assert_eq!(c.w.cwnd, 50.0);
}

/// The sender's NewReno deflation may leave a fraction: the controller works on the floor
/// and writes a whole number back.
#[test]
fn fractional_cwnd_from_the_sender_is_floored() {
    let mut c = Conn::new(
        CubicParams {
            hystart: false,
            ..defaults()
        },
        10.0,
        1000.0,
    );
    c.fast_retransmit_at(40.0);
    assert_eq!(c.w.ssthresh, 28);
    // Congestion avoidance from 28.6: floor 28, and the first ACK of the epoch adds credit only.
    c.w.cwnd = 28.6;
    c.ack(SEC, None);
    assert_eq!(c.w.cwnd, 28.0);
    // Slow start from 26.6: floor 26, + 1 = 27 (not 27.6).
    c.w.cwnd = 26.6;
    c.ack(SEC + MS, None);
    assert_eq!(c.w.cwnd, 27.0);
}

// ---------------------------------------------------------------------------------------
// Parameters and registry glue
// ---------------------------------------------------------------------------------------

fn read_err(table: Vec<(&'static str, Value)>) -> String {
    read(&Table(table)).unwrap_err().0.to_string()
}

#[test]
fn params_default_to_linux_module_defaults() {
    let p = read(&Table(vec![])).unwrap();
    let d = format!("{p:?}");
    assert_eq!(d, format!("{:?}", CubicParams::default()));
    assert_eq!(
        CubicParams::default(),
        CubicParams {
            beta: 717,
            fast_convergence: true,
            tcp_friendliness: true,
            hystart: true,
            hystart_detect: 3,
            hystart_low_window: 16,
            hystart_ack_delta_us: 2000,
            bic_scale: 41,
            initial_ssthresh: 0,
        }
    );
    assert_eq!(p.sender(), SenderKind::TcpAgent { newreno: true });
    let cc = p.controller(&Default::default());
    assert_eq!(cc.name(), "cubic");
}

#[test]
fn params_are_read_over_the_defaults() {
    let p = read(&Table(vec![
        ("beta", Value::Int(819)),
        ("hystart", Value::Bool(false)),
        ("hystart_detect", Value::Int(2)),
        ("initial_ssthresh", Value::Int(50)),
    ]))
    .unwrap();
    let want = CubicParams {
        beta: 819,
        hystart: false,
        hystart_detect: 2,
        initial_ssthresh: 50,
        ..CubicParams::default()
    };
    assert_eq!(format!("{p:?}"), format!("{want:?}"));
    // initial_ssthresh applies with HyStart off, as in Linux.
    let mut w = Window {
        cwnd: 2.0,
        ssthresh: 20,
        next_seq: 0,
        last_ack: -1,
        max_window: 100.0,
        cwnd_limited: true,
    };
    p.controller(&Default::default()).init(&mut w);
    assert_eq!(w.ssthresh, 50);
}

#[test]
fn params_out_of_range_or_unknown_are_refused_by_name() {
    assert_eq!(
        read_err(vec![("beta", Value::Int(1024))]),
        "params.beta: 1024 not in [1, 1023]"
    );
    assert_eq!(
        read_err(vec![("beta", Value::Int(0))]),
        "params.beta: 0 not in [1, 1023]"
    );
    assert_eq!(
        read_err(vec![("hystart_detect", Value::Int(4))]),
        "params.hystart_detect: 4 not in [0, 3]"
    );
    assert_eq!(
        read_err(vec![("bic_scale", Value::Int(0))]),
        "params.bic_scale: 0 not in [1, 1024]"
    );
    assert!(read_err(vec![("alpha", Value::Int(1))]).starts_with("params.alpha: unknown key"));
    assert_eq!(
        read_err(vec![("hystart", Value::Int(1))]),
        "params.hystart: not a boolean"
    );
}

#[test]
fn variables_expose_w_max_k_and_hystart() {
    let mut c = Conn::new(defaults(), 100.0, 10_000.0);
    c.fast_retransmit_at(100.0);
    c.ack(10 * SEC, None);
    let mut out = Vec::new();
    c.cc.variables(&mut out);
    let get = |name: &str| {
        out.iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| *v)
            .unwrap()
    };
    assert_eq!(get("w_max"), 100.0);
    assert_eq!(get("k_ms"), c.cc.k_units() as f64 * 1000.0 / 1024.0);
    assert_eq!(get("hystart_found"), 0.0);
}

// ---------------------------------------------------------------------------------------
// A long generated run
// ---------------------------------------------------------------------------------------

/// Numerical Recipes' 64-bit LCG; the top bits as a uniform number in [0, 1).
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// 100,000 ACKs in four runs (receiver windows 20, 64, 1000 and 100,000 packets): an RTT that
/// wanders between 5 ms and 400 ms with queueing jitter, stretch ACKs, missing and negative
/// samples, fast retransmits (with NewReno's fractional deflation on the way out), timeouts,
/// undo calls and idle periods. The controller never panics and keeps cwnd whole and in
/// [1, max_window]; ssthresh after a loss is at least 2.
#[test]
fn hundred_thousand_random_acks_keep_cwnd_whole_and_within_limits() {
    let mut total = 0;
    for (seed, max_window) in [(1u64, 20.0), (2, 64.0), (3, 1000.0), (4, 100_000.0)] {
        let mut rng = Lcg(seed);
        let mut c = Conn::new(defaults(), 2.0, max_window);
        let mut now = SEC;
        let mut base = 20_000.0_f64; // µs
        let mut recovery = 0;
        let check = |w: &Window, what: &str| {
            assert_eq!(w.cwnd, w.cwnd.floor(), "{what}: cwnd {} not whole", w.cwnd);
            assert!(
                w.cwnd >= 1.0 && w.cwnd <= max_window,
                "{what}: cwnd {}",
                w.cwnd
            );
        };
        for _ in 0..25_000 {
            total += 1;
            base = (base * (0.95 + 0.1 * rng.next())).clamp(5_000.0, 400_000.0);
            let rtt = base * (1.0 + 0.5 * rng.next());
            now += (rtt * 1000.0 / c.w.cwnd.max(1.0)) as u64 + 1;
            let r = rng.next();
            if r < 0.002 && recovery == 0 {
                let cut = c.loss(LossKind::FastRetransmit);
                assert!(cut.ssthresh >= 2);
                check(&c.w, "fast retransmit");
                recovery = 1 + (rng.next() * 5.0) as u32;
                continue;
            }
            if r < 0.0022 {
                let cut = c.loss(LossKind::Timeout);
                assert!(cut.ssthresh >= 2);
                check(&c.w, "timeout");
                recovery = 0;
                continue;
            }
            if r < 0.0025 {
                let last_send = now;
                now += (rng.next() * 10e9) as u64;
                c.cc.cwnd_event(&mut c.w, CwndEvent::TxStart { now, last_send });
                check(&c.w, "tx start");
            }
            let acked = 1 + (rng.next() * 3.0) as i64;
            let sample = match rng.next() {
                x if x < 0.1 => None,
                x if x < 0.15 => Some(RttSample {
                    now,
                    rtt: -1.0,
                    queueing: None,
                }),
                _ => Some(RttSample {
                    now,
                    rtt: rtt * 1e-6,
                    queueing: None,
                }),
            };
            c.w.last_ack += acked;
            if let Some(s) = sample {
                c.cc.pkts_acked(&mut c.w, &s);
            }
            if recovery > 0 {
                recovery -= 1;
                if recovery == 0 {
                    // NewReno leaves recovery, possibly with a fraction after deflation.
                    c.w.cwnd = (c.w.cwnd - rng.next()).max(1.0);
                    c.cc.set_state(&c.w, CaState::Open);
                }
                continue;
            }
            let ack = Ack {
                seqno: c.w.last_ack,
                acked,
                now,
                elapsed: 0.0,
            };
            c.cc.cong_avoid(&mut c.w, &ack);
            check(&c.w, "cong_avoid");
            c.w.next_seq = c.w.next_seq.max(c.w.last_ack + 1 + c.w.cwnd as i64);
            let undo = c.cc.undo_cwnd(&c.w);
            assert!(undo >= c.w.cwnd && undo == undo.floor());
        }
    }
    assert_eq!(total, 100_000);
}

#[test]
fn cong_avoid_grows_nothing_when_the_sender_is_not_cwnd_limited() {
    // bictcp_cong_avoid returns at once unless tcp_is_cwnd_limited: neither slow start
    // (cwnd 10 < ssthresh 20) nor the curve moves, and the same ACKs grow a limited sender.
    let p = CubicParams { hystart: false, ..CubicParams::default() };
    let mut idle = Conn::new(p.clone(), 10.0, 100.0);
    idle.w.cwnd_limited = false;
    let mut busy = Conn::new(p.clone(), 10.0, 100.0);
    for i in 0..5 {
        idle.ack(i * MS, Some(50_000));
        busy.ack(i * MS, Some(50_000));
    }
    assert_eq!(idle.w.cwnd, 10.0);
    assert_eq!(busy.w.cwnd, 15.0);
}
