//! The ns-3 `TcpVegas` flavour on the Linux-like sender's NewReno loss recovery
//! (docs/vegas-implementations.md, "Linux and ns-3 Vegas"); everything ns-3-specific is in
//! this file. It differs from Linux in how diff is computed: target = floor(cwnd x baseRTT /
//! minRTT) and
//! diff = cwnd - target, in floating point before the floor; RTT samples are not padded.
//! The slow-start exit sets ssthresh = max(min(ssthresh, cwnd - 1), 2); after each round
//! ssthresh is raised to at least 3/4 of cwnd. Fewer than three samples: NewReno increase.
//!
//! On loss, ns-3's `TcpVegas::GetSsThresh` replaces halving (the `ssthresh` hook):
//! ssthresh = max(min(ssthresh, cwnd - 1), 2) packets; after a fast retransmit cwnd restarts
//! from that ssthresh (ns-3's recovery), after a timeout from one packet. The duplicate-ACK
//! inflation during recovery is the NewReno machinery's (ns-2 style), a named simplification
//! of ns-3's recovery.

use crate::controller::{Ack, CaState, CongestionControl, Cut, Loss, RttSample, Window};
use crate::reno::opencwnd;

/// ns-3's thresholds, packets.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Thresholds {
    alpha: f64,
    beta: f64,
    gamma: f64,
}

#[derive(Clone, Debug)]
pub struct Ns3Vegas {
    p: Thresholds,
    base_rtt: f64,
    min_rtt: f64,
    cnt_rtt: u32,
    beg_snd_nxt: i64,
    doing_vegas_now: bool,
}

impl Ns3Vegas {
    pub fn new(alpha: f64, beta: f64, gamma: f64) -> Self {
        Ns3Vegas {
            p: Thresholds { alpha, beta, gamma },
            base_rtt: f64::INFINITY,
            min_rtt: f64::INFINITY,
            cnt_rtt: 0,
            beg_snd_nxt: 0,
            doing_vegas_now: true,
        }
    }

    fn enable(&mut self, next_tx: i64) {
        self.doing_vegas_now = true;
        self.beg_snd_nxt = next_tx;
        self.cnt_rtt = 0;
        self.min_rtt = f64::INFINITY;
    }

    /// ns-3 `TcpVegas::GetSsThresh`, in packets, from the window before the loss.
    pub fn ssthresh_on_loss(cwnd: f64, ssthresh: i64) -> i64 {
        ssthresh.min(cwnd as i64 - 1).max(2)
    }

    fn ssthresh_after_cut(s: &Window, cwnd: i64) -> i64 {
        s.ssthresh.min(cwnd - 1).max(2)
    }

    /// `IncreaseWindow` for a new cumulative ACK of packet `ack`.
    fn increase_window(&mut self, s: &mut Window, ack: i64) {
        if !self.doing_vegas_now {
            opencwnd(s);
            return;
        }
        let last_acked = ack + 1;
        if last_acked >= self.beg_snd_nxt {
            self.beg_snd_nxt = s.next_seq;
            if self.cnt_rtt <= 2 {
                opencwnd(s);
            } else {
                let mut cwnd = s.cwnd as i64;
                let target = (cwnd as f64 * (self.base_rtt / self.min_rtt)) as i64;
                let diff = (cwnd - target) as f64;
                let in_slow_start = s.cwnd < s.ssthresh as f64;
                if diff > self.p.gamma && in_slow_start {
                    cwnd = cwnd.min(target + 1);
                    s.cwnd = cwnd as f64;
                    s.ssthresh = Self::ssthresh_after_cut(s, cwnd);
                } else if in_slow_start {
                    s.cwnd += 1.0;
                } else if diff > self.p.beta {
                    cwnd -= 1;
                    s.cwnd = cwnd as f64;
                    s.ssthresh = Self::ssthresh_after_cut(s, cwnd);
                } else if diff < self.p.alpha {
                    s.cwnd = (cwnd + 1) as f64;
                }
                let c = s.cwnd as i64;
                s.ssthresh = s.ssthresh.max(3 * c / 4);
            }
            self.cnt_rtt = 0;
            self.min_rtt = f64::INFINITY;
        } else if s.cwnd < s.ssthresh as f64 {
            s.cwnd += 1.0;
        }
    }
}

impl CongestionControl for Ns3Vegas {
    fn name(&self) -> &'static str {
        "vegas"
    }

    fn pkts_acked(&mut self, _w: &mut Window, sample: &RttSample) {
        let rtt = sample.rtt;
        if rtt <= 0.0 {
            return;
        }
        self.min_rtt = self.min_rtt.min(rtt);
        self.base_rtt = self.base_rtt.min(rtt);
        self.cnt_rtt += 1;
    }

    fn cong_avoid(&mut self, w: &mut Window, ack: &Ack) {
        self.increase_window(w, ack.seqno);
    }

    /// `TcpVegas::GetSsThresh`; cwnd continues from it after a fast retransmit (ns-3's
    /// recovery), from one packet after a timeout.
    fn ssthresh(&mut self, w: &Window, loss: &Loss) -> Cut {
        Cut::from_ssthresh(Self::ssthresh_on_loss(w.cwnd, w.ssthresh), loss)
    }

    fn set_state(&mut self, w: &Window, state: CaState) {
        if state == CaState::Open {
            self.enable(w.next_seq);
        } else {
            self.doing_vegas_now = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(cwnd: f64, ssthresh: i64) -> Window {
        Window { cwnd, ssthresh, next_seq: 100, last_ack: -1, max_window: 1000.0, cwnd_limited: true }
    }

    fn ns3() -> Ns3Vegas {
        Ns3Vegas::new(2.0, 4.0, 1.0)
    }

    fn sample(v: &mut Ns3Vegas, rtt: f64) {
        v.pkts_acked(&mut state(1.0, 1), &RttSample { now: 0, rtt, queueing: None });
    }

    #[test]
    fn reference_example_cwnd_20_base_100ms_rtt_109ms_holds() {
        // target = floor(20 x 100/109) = 18, diff = 2: alpha 2 <= diff <= beta 4: hold.
        let mut s = state(20.0, 10);
        let mut v = ns3();
        for rtt in [0.100, 0.109, 0.109, 0.109] {
            sample(&mut v, rtt);
        }
        v.enable(0);
        for _ in 0..3 {
            sample(&mut v, 0.109);
        }
        v.increase_window(&mut s, 50);
        assert_eq!(s.cwnd, 20.0);
    }

    #[test]
    fn small_queue_increases_by_one() {
        // base 100, rtt 104: target = floor(19.23) = 19, diff 1 < alpha: +1.
        let mut s = state(20.0, 10);
        let mut v = ns3();
        sample(&mut v, 0.100);
        v.enable(0);
        for _ in 0..3 {
            sample(&mut v, 0.104);
        }
        v.increase_window(&mut s, 50);
        assert_eq!(s.cwnd, 21.0);
    }
}
