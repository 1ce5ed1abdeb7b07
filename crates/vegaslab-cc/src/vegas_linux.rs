//! The Linux `tcp_vegas.c` flavour (`shared/REFERENCE.md`, "Linux and ns-3 Vegas"), on
//! top of NewReno loss recovery. Behaviour, paraphrased:
//!
//! - RTT samples are taken in microseconds plus one (so a zero sample still counts);
//!   baseRTT is the all-time minimum, minRTT the round's minimum.
//! - A round ends on the first ACK beyond the sequence number that was next to send when
//!   the round began. With fewer than three samples in the round, Reno's increase applies.
//! - Otherwise diff = cwnd x (minRTT - baseRTT) / baseRTT in integer arithmetic and
//!   target = cwnd x baseRTT / minRTT. In slow start, diff > gamma ends slow start with
//!   cwnd = min(cwnd, target + 1) and ssthresh = min(ssthresh, cwnd - 1); in congestion
//!   avoidance diff > beta: cwnd - 1, diff < alpha: cwnd + 1, else hold. cwnd stays >= 2,
//!   and ssthresh is raised to at least 3/4 of cwnd.
//! - During loss recovery Vegas is off and Reno rules; it restarts when recovery ends.

use crate::config::VegasParams;
use crate::sender::SenderState;

#[derive(Clone, Debug)]
pub struct LinuxVegas {
    p: VegasParams,
    base_rtt_us: u64,
    min_rtt_us: u64,
    cnt_rtt: u32,
    beg_snd_nxt: i64,
    doing_vegas_now: bool,
}

impl LinuxVegas {
    pub fn new(p: VegasParams) -> Self {
        LinuxVegas {
            p,
            base_rtt_us: u32::MAX as u64,
            min_rtt_us: u32::MAX as u64,
            cnt_rtt: 0,
            beg_snd_nxt: 0,
            doing_vegas_now: true,
        }
    }

    /// `pkts_acked`: one RTT sample in seconds.
    pub fn pkts_acked(&mut self, rtt: f64) {
        if rtt < 0.0 {
            return;
        }
        let vrtt = (rtt * 1e6) as u64 + 1;
        self.base_rtt_us = self.base_rtt_us.min(vrtt);
        self.min_rtt_us = self.min_rtt_us.min(vrtt);
        self.cnt_rtt += 1;
    }

    pub fn enable(&mut self, snd_nxt: i64) {
        self.doing_vegas_now = true;
        self.beg_snd_nxt = snd_nxt;
        self.cnt_rtt = 0;
        self.min_rtt_us = u32::MAX as u64;
    }

    pub fn disable(&mut self) {
        self.doing_vegas_now = false;
    }

    /// `cong_avoid` for a new cumulative ACK of packet `ack`.
    pub fn cong_avoid(&mut self, s: &mut SenderState, ack: i64) {
        if !self.doing_vegas_now {
            s.opencwnd();
            return;
        }
        let snd_una = ack + 1;
        if snd_una > self.beg_snd_nxt {
            self.beg_snd_nxt = s.t_seqno;
            if self.cnt_rtt <= 2 {
                s.opencwnd();
            } else {
                self.round(s);
            }
            self.cnt_rtt = 0;
            self.min_rtt_us = u32::MAX as u64;
        } else if s.cwnd < s.ssthresh as f64 {
            slow_start(s);
        }
    }

    fn round(&mut self, s: &mut SenderState) {
        let rtt = self.min_rtt_us;
        let base = self.base_rtt_us;
        let mut cwnd = s.cwnd.floor() as i64;
        let target = (cwnd as u64 * base / rtt) as i64;
        let diff = (cwnd as u64 * (rtt - base) / base) as f64;
        let in_slow_start = (cwnd as f64) < s.ssthresh as f64;
        if diff > self.p.gamma && in_slow_start {
            cwnd = cwnd.min(target + 1);
            s.ssthresh = s.ssthresh.min(cwnd - 1);
        } else if in_slow_start {
            s.cwnd = cwnd as f64;
            slow_start(s);
            cwnd = s.cwnd as i64;
        } else if diff > self.p.beta {
            cwnd -= 1;
            s.ssthresh = s.ssthresh.min(cwnd - 1);
        } else if diff < self.p.alpha {
            cwnd += 1;
        }
        cwnd = cwnd.clamp(2, s.cfg.window as i64);
        s.cwnd = cwnd as f64;
        s.ssthresh = s.ssthresh.max((cwnd >> 1) + (cwnd >> 2));
    }
}

/// Linux `tcp_slow_start` for one ACKed packet: grow by one, not beyond ssthresh.
fn slow_start(s: &mut SenderState) {
    s.cwnd = (s.cwnd + 1.0).min(s.ssthresh as f64).max(s.cwnd);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::VegasFlavour;

    fn state(cwnd: f64, ssthresh: i64) -> SenderState {
        crate::sender::test_state(cwnd, ssthresh)
    }

    fn vegas_with_round(base: f64, rtt: f64) -> LinuxVegas {
        let mut v = LinuxVegas::new(VegasParams::defaults_for(VegasFlavour::Linux));
        v.pkts_acked(base);
        v.enable(0);
        for _ in 0..3 {
            v.pkts_acked(rtt);
        }
        v
    }

    #[test]
    fn reference_example_cwnd_20_base_100ms_rtt_109ms_increases() {
        // diff = 20 x 9000 / 100001 = 1 (integer) < alpha 2: +1.
        let mut s = state(20.0, 10);
        let mut v = vegas_with_round(0.100, 0.109);
        v.cong_avoid(&mut s, 50);
        assert_eq!(s.cwnd, 21.0);
    }

    #[test]
    fn diff_above_beta_decreases_by_one() {
        // diff = 20 x 30000 / 100001 = 5 > beta 4: -1.
        let mut s = state(20.0, 10);
        let mut v = vegas_with_round(0.100, 0.130);
        v.cong_avoid(&mut s, 50);
        assert_eq!(s.cwnd, 19.0);
    }

    #[test]
    fn fewer_than_three_samples_falls_back_to_reno() {
        let mut s = state(20.0, 10);
        let mut v = LinuxVegas::new(VegasParams::defaults_for(VegasFlavour::Linux));
        v.pkts_acked(0.1);
        v.cong_avoid(&mut s, 50);
        assert!((s.cwnd - 20.05).abs() < 1e-12);
    }

    #[test]
    fn slow_start_exit_caps_cwnd_at_target_plus_one() {
        // cwnd 20 < ssthresh 100; samples padded by 1 us: base 100001, rtt 200001.
        // diff = 20 x 100000 / 100001 = 19 > gamma; target = 2000020 / 200001 = 10.
        let mut s = state(20.0, 100);
        let mut v = vegas_with_round(0.100, 0.200);
        v.cong_avoid(&mut s, 50);
        assert_eq!(s.cwnd, 11.0);
        // ssthresh = min(100, 11 - 1) = 10, then max(10, 5 + 2) = 10.
        assert_eq!(s.ssthresh, 10);
    }
}
