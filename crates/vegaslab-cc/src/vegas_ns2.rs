//! The Vegas controller as ns-2's Vegas agent computes it (Brakmo and Peterson's Vegas as
//! coded in ns-2's `Agent/TCP/Vegas`; docs/vegas-implementations.md, "ns-2's Vegas agent"): the
//! machinery every Vegas variant shares in the ns-2 flavour. Each variant composes it with
//! its own once-per-round rule ([`VegasRule`]: classic Vegas in [`crate::vegas`], Vegas-A,
//! AdaVegas, Vegas_1/8 and RoVegas in their files).
//!
//! The controller ([`Ns2Vegas`]), driven by ns-2's Vegas agent ([`crate::vegas_agent`]):
//! 1. Each RTT sample (`pkts_acked`: packets sent once) updates baseRTT (all-time minimum)
//!    and the round's sum and count; the first ACK sets baseRTT to the time since the first
//!    send (`cwnd_event(FirstAck)`).
//! 2. A round ends with the first ACK at or beyond the sequence number that was next to
//!    send when the round began (`cong_avoid`). Then rtt = mean of the round's samples (else
//!    the round's elapsed time), rttLen = packets sent in the round, actual = rttLen / rtt,
//!    expected = outstanding / baseRTT, delta = round((expected - actual) x baseRTT).
//! 3. Slow start acts every other round: delta > gamma ends it (ssthresh 2, cwnd -= cwnd/8);
//!    else the window doubles over the round. Congestion avoidance asks the [`VegasRule`].
//! 4. The per-ACK increment is applied only while cwnd - outstanding <= 2.
//!
//! Loss cuts (fine-grained retransmission, 3/4; timeout, 2) are the agent's; the rule hears
//! of them through `set_state` ([`VegasRule::on_loss`]).

use crate::controller::{Ack, CaState, CongestionControl, CwndEvent, QueueingTimes, RttSample, Window};
pub use crate::controller::TieStats;

/// What the sender measured over one round, handed to the window rule.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Round {
    /// Mean RTT of the round's samples (or the round's duration), seconds.
    pub rtt: f64,
    /// Minimum RTT seen so far, seconds (already updated with this round).
    pub base_rtt: f64,
    /// Packets sent during the round.
    pub rtt_len: i64,
    /// Packets outstanding now (next to send minus last acknowledged).
    pub outstanding: i64,
    /// rtt_len / rtt, packets per second (Th(t) in the Vegas-A paper).
    pub actual: f64,
    /// outstanding / base_rtt, packets per second.
    pub expected: f64,
    /// round((expected - actual) x base_rtt), packets.
    pub delta: i64,
    pub cwnd: f64,
    /// Mean backward queueing time of the round's probing ACKs (RoVegas; 0 otherwise).
    pub backward_qt: f64,
}

/// The congestion-avoidance outcome of one round.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CaAction {
    /// cwnd -= 1 now (at least 2) and no growth this round.
    Decrease,
    /// cwnd -= this many packets now (at least 2) and no growth this round (AdaVegas' lastInc).
    DecreaseBy(f64),
    /// Grow by this much per ACK during the next round (1/cwnd ~ +1 per round).
    Increase(f64),
    Hold,
}

/// A once-per-round congestion-avoidance rule of the ns-2 Vegas controller. Each variant
/// (Vegas-A, AdaVegas, Vegas_1/8, RoVegas) implements it in its own file.
pub trait VegasRule: Clone + std::fmt::Debug + Send + 'static {
    /// The `cc` name in results.
    fn name(&self) -> &'static str;

    /// One congestion-avoidance round.
    fn congestion_avoidance(&mut self, r: &Round) -> CaAction;

    /// A slow-start round ended (rules that track every round's measurements, e.g. Vegas-A's
    /// Th(t-rtt), see them here).
    fn observe_slow_start(&mut self, _r: &Round) {}

    /// The agent cut the window for a loss (fine-grained/third-duplicate retransmission cut,
    /// or coarse timeout).
    fn on_loss(&mut self) {}

    /// The rule's variables for the time series.
    fn variables(&self, out: &mut Vec<(&'static str, f64)>);

    /// Router assist (RoVegas): a segment is about to be sent; `Some(bytes)` makes it a probe.
    fn tag_segment(&mut self) -> Option<u32> {
        None
    }

    /// Router assist: the baseRTT candidate of one RTT sample (> 0 s), given the queueing
    /// times its ACK carried. Plain Vegas: the sample itself.
    fn sample_base_rtt(&mut self, rtt: f64, _queueing: Option<QueueingTimes>) -> f64 {
        rtt
    }

    /// Router assist: the round's mean (backward, forward) queueing times, and reset them.
    /// Plain Vegas: none.
    fn round_queueing(&mut self) -> (f64, f64) {
        (0.0, 0.0)
    }
}

/// The ns-2 Vegas controller with a once-per-round rule (names follow ns-2's `v_*` variables).
#[derive(Clone, Debug)]
pub struct Ns2Vegas<R> {
    pub rule: R,
    pub gamma: f64,
    v_begseq: i64,
    v_begtime: f64,
    v_cnt_rtt: i64,
    v_sum_rtt: f64,
    pub v_base_rtt: f64,
    v_incr: f64,
    v_inc_flag: bool,
    pub v_rtt: f64,
    pub v_actual: f64,
    /// Last round's measurements, for monitoring.
    pub last_round: Option<Round>,
    /// How often delta's rounding landed on (or next to) a decision threshold.
    pub ties: TieStats,
    /// The round's RTT samples summed in whole nanoseconds, and baseRTT as a fraction of
    /// nanoseconds (`None`: not an exact sample mean, e.g. RoVegas' queue-corrected one),
    /// for judging ties exactly ([`TieStats`]).
    exact_sum_ns: i128,
    exact_base: Option<Ratio>,
}

/// Distance from a whole number below which the double `x + 0.5` counts as a near tie: far
/// above the rounding noise of the doubles (~1e-12 here) and far below any real step of
/// delta (x moves in steps of about 1/rttLen).
pub const TIE_EPSILON: f64 = 1e-9;

/// A duration in nanoseconds as a fraction `num / den` (a round's mean RTT).
type Ratio = (i128, i128);

/// Seconds back to whole nanoseconds (every time here is a whole number of nanoseconds; the
/// double's error is far below half a nanosecond for any run length the clock allows).
///
/// Below 2^53 ns (104 days) the rounding is done in 64-bit integers, without calls of libm's
/// `round` and `__fixdfti` per RTT sample: the integer part converts exactly and the fraction
/// left is exact, so rounding half away from zero by hand equals `f64::round`.
fn ns_of(secs: f64) -> i128 {
    let x = secs * 1e9;
    if x.abs() < (1u64 << 53) as f64 {
        let whole = x as i64;
        let frac = x - whole as f64;
        (whole + i64::from(frac >= 0.5) - i64::from(frac <= -0.5)) as i128
    } else {
        x.round() as i128
    }
}

impl<R: VegasRule> Ns2Vegas<R> {
    pub fn new(rule: R, gamma: f64) -> Self {
        Ns2Vegas {
            rule,
            gamma,
            v_begseq: 0,
            v_begtime: 0.0,
            v_cnt_rtt: 0,
            v_sum_rtt: 0.0,
            v_base_rtt: 1e9,
            v_incr: 0.0,
            v_inc_flag: true,
            v_rtt: 0.0,
            v_actual: 0.0,
            last_round: None,
            ties: TieStats::default(),
            exact_sum_ns: 0,
            exact_base: None,
        }
    }

    /// Count one decision ([`TieStats`]): `x_half` is the double `(expected - actual) x
    /// baseRTT + 0.5`, `exact` the same round's rtt, baseRTT and the packet counts on the
    /// integer timeline (`None`: not judged exactly), `acts(delta)` the action for a delta.
    fn note_tie<A: PartialEq>(&mut self, x_half: f64, delta: i64, exact: Option<(Ratio, Ratio, i64, i64)>, acts: impl Fn(&mut Self, i64) -> A) {
        self.ties.decisions += 1;
        // ns-2 truncates toward zero (`int(x + 0.5)`): a whole k > 0 separates k - 1 from k, a
        // whole k < 0 separates k from k + 1, and 0 (inside (-1, 1), all truncated to 0) is
        // no boundary.
        let k = x_half.round();
        if k == 0.0 {
            return;
        }
        self.ties.near += ((x_half - k).abs() < TIE_EPSILON) as u64;
        // Judged exactly only on sample means (RoVegas' corrected rounds count in `near` only).
        let Some(((rn, rd), (bn, bd), out, len)) = exact else { return };
        // x + 0.5 = out + 1/2 - len * base / rtt = k
        //   <=>  (2 (out - k) + 1) * base_den * rtt_num = 2 len * base_num * rtt_den.
        let ki = k as i128;
        if (2 * (out as i128 - ki) + 1) * bd * rn != 2 * len as i128 * bn * rd {
            return;
        }
        self.ties.exact += 1;
        let (below, above) = if k > 0.0 { (k as i64 - 1, k as i64) } else { (k as i64, k as i64 + 1) };
        let other = if delta == below { above } else { below };
        if acts(self, delta) != acts(self, other) {
            self.ties.decisive += 1;
        }
    }

    /// The once-per-round computation (ns-2's "begin of once per-rtt actions").
    fn end_round(&mut self, s: &mut Window, t: f64) {
        let (rtt, exact_rtt) = if self.v_cnt_rtt > 0 {
            (self.v_sum_rtt / self.v_cnt_rtt as f64, (self.exact_sum_ns, self.v_cnt_rtt as i128))
        } else {
            (t - self.v_begtime, (ns_of(t - self.v_begtime), 1))
        };
        self.v_sum_rtt = 0.0;
        self.v_cnt_rtt = 0;
        self.exact_sum_ns = 0;
        let (backward_qt, forward_qt) = self.rule.round_queueing();
        let rtt_len = s.next_seq - self.v_begseq;
        if rtt > 0.0 {
            // RoVegas: the round's RTT without queueing (the baseRTT pseudo-code of the RoVegas
            // paper, Chan et al., "Design and performance evaluation of an improved TCP
            // congestion avoidance scheme", section 3).
            let base_candidate = rtt - (backward_qt + forward_qt);
            let corrected = backward_qt != 0.0 || forward_qt != 0.0;
            if base_candidate < self.v_base_rtt || rtt_len <= 1 {
                self.v_base_rtt = base_candidate;
                self.exact_base = (!corrected).then_some(exact_rtt);
            }
            // RoVegas eq. (2): actual' excludes the backward queueing time.
            let forward_rtt = if rtt - backward_qt > 0.0 { rtt - backward_qt } else { rtt };
            self.v_actual = rtt_len as f64 / forward_rtt;
            let outstanding = s.next_seq - s.last_ack;
            let expected = outstanding as f64 / self.v_base_rtt;
            let x_half = (expected - self.v_actual) * self.v_base_rtt + 0.5;
            let delta = x_half as i64;
            let round = Round {
                rtt,
                base_rtt: self.v_base_rtt,
                rtt_len,
                outstanding,
                actual: self.v_actual,
                expected,
                delta,
                cwnd: s.cwnd,
                backward_qt,
            };
            self.last_round = Some(round);
            let exact = match self.exact_base {
                Some(base) if !corrected => Some((exact_rtt, base, outstanding, rtt_len)),
                _ => None,
            };
            let slow_start = s.cwnd < s.ssthresh as f64;
            if slow_start && self.v_inc_flag {
                // Slow start's off round (the flag flips to 0 below): delta decides nothing.
            } else if slow_start {
                let gamma = self.gamma;
                self.note_tie(x_half, delta, exact, |_, d| d as f64 > gamma);
            } else {
                self.note_tie(x_half, delta, exact, |me, d| {
                    let mut rule = me.rule.clone();
                    rule.congestion_avoidance(&Round { delta: d, ..round })
                });
            }
            if slow_start {
                self.rule.observe_slow_start(&round);
                // Slow start: act only every other round.
                self.v_inc_flag = !self.v_inc_flag;
                if !self.v_inc_flag {
                    self.v_incr = 0.0;
                } else if delta as f64 > self.gamma {
                    s.ssthresh = 2;
                    s.cwnd -= s.cwnd / 8.0;
                    if s.cwnd < 2.0 {
                        s.cwnd = 2.0;
                    }
                    self.v_incr = 0.0;
                } else {
                    self.v_incr = 1.0;
                }
            } else {
                match self.rule.congestion_avoidance(&round) {
                    a @ (CaAction::Decrease | CaAction::DecreaseBy(_)) => {
                        s.cwnd -= if let CaAction::DecreaseBy(n) = a { n } else { 1.0 };
                        if s.cwnd < 2.0 {
                            s.cwnd = 2.0;
                        }
                        self.v_incr = 0.0;
                    }
                    CaAction::Increase(incr) => self.v_incr = incr,
                    CaAction::Hold => self.v_incr = 0.0,
                }
            }
        }
        self.v_begseq = s.next_seq;
        self.v_begtime = t;
    }

}

impl<R: VegasRule> CongestionControl for Ns2Vegas<R> {
    fn name(&self) -> &'static str {
        self.rule.name()
    }

    fn threshold_ties(&self) -> Option<TieStats> {
        Some(self.ties)
    }

    fn cwnd_event(&mut self, _w: &mut Window, event: CwndEvent) {
        if let CwndEvent::FirstAck { elapsed } = event {
            self.v_base_rtt = elapsed;
            self.v_rtt = elapsed;
            self.exact_base = Some((ns_of(elapsed), 1));
        }
    }

    fn cong_avoid(&mut self, w: &mut Window, ack: &Ack) {
        if ack.seqno >= self.v_begseq {
            self.end_round(w, ack.elapsed);
        }
        // A slow-start increment stops once cwnd reaches ssthresh within the round.
        if self.v_incr == 1.0 && w.cwnd >= w.ssthresh as f64 {
            self.v_incr = 0.0;
        }
        // Grow only while the sender keeps up with the window.
        if self.v_incr > 0.0 && (w.cwnd - (w.next_seq - w.last_ack) as f64) <= 2.0 {
            w.cwnd += self.v_incr;
        }
    }

    fn pkts_acked(&mut self, _w: &mut Window, sample: &RttSample) {
        let rtt = sample.rtt;
        self.v_sum_rtt += rtt;
        self.v_cnt_rtt += 1;
        self.exact_sum_ns += ns_of(rtt);
        if rtt > 0.0 {
            self.v_rtt = rtt;
            let base_candidate = self.rule.sample_base_rtt(rtt, sample.queueing);
            if base_candidate < self.v_base_rtt {
                self.v_base_rtt = base_candidate;
                self.exact_base = (base_candidate == rtt).then_some((ns_of(rtt), 1));
            }
        }
    }

    fn set_state(&mut self, _w: &Window, state: CaState) {
        if state != CaState::Open {
            self.rule.on_loss();
        }
    }

    fn tag_segment(&mut self) -> Option<u32> {
        self.rule.tag_segment()
    }

    fn variables(&self, out: &mut Vec<(&'static str, f64)>) {
        self.rule.variables(out);
        out.push(("base_rtt_s", if self.v_base_rtt < 1e8 { self.v_base_rtt } else { f64::NAN }));
    }
}

#[cfg(test)]
mod tests {
    use super::ns_of;

    #[test]
    fn ns_of_rounds_as_f64_round_does() {
        let reference = |s: f64| (s * 1e9).round() as i128;
        let mut cases = vec![0.0, -0.0, 0.5e-9, -0.5e-9, 1.5e-9, 2.5e-9, -2.5e-9, 0.49999999999999994e-9, 1e-3, 0.0123456789, 3.0e6, -3.0e6, 1e10, -1e10, f64::NAN];
        // Every half and near-half of a nanosecond over a few ranges.
        for k in [0i64, 1, 7, 1_000_003, 123_456_789_012, (1 << 52) - 3] {
            for d in [-0.5, -0.49999999999999994, 0.49999999999999994, 0.5, 0.25, -0.75] {
                let ns = k as f64 + d;
                cases.push(ns / 1e9);
                cases.push(-ns / 1e9);
            }
        }
        for s in cases {
            assert_eq!(ns_of(s), reference(s), "{s:e}");
        }
    }
}
