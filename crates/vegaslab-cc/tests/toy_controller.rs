//! A controller written from scratch against the trait alone, driven by both senders: what a
//! new algorithm needs is its own file (here, this test), one registry line to give it a
//! scenario name, and its tests. Nothing else in the crate changes.
//!
//! The toy is a fixed-increment AIMD: +`step` packets per window of ACKs, and the cut keeps
//! three quarters of the window. Its numbers are checked by hand below.

mod common;
use common::path::{simulate_sender, Path};
use common::*;

use vegaslab_cc::controller::{Ack, CongestionControl, Cut, Loss, LossKind, Window};
use vegaslab_cc::params::SenderKind;
use vegaslab_cc::{Sender, TcpConfig};

#[derive(Clone, Debug)]
struct Toy {
    step: f64,
    losses: u32,
}

impl CongestionControl for Toy {
    fn name(&self) -> &'static str {
        "toy"
    }

    fn cong_avoid(&mut self, w: &mut Window, _ack: &Ack) {
        w.cwnd += self.step / w.cwnd;
    }

    fn ssthresh(&mut self, _w: &Window, loss: &Loss) -> Cut {
        self.losses += 1;
        let kept = (loss.window * 3.0 / 4.0).max(2.0);
        let cwnd = if loss.kind == LossKind::Timeout { 1.0 } else { kept };
        Cut { ssthresh: kept as i64, cwnd }
    }

    fn variables(&self, out: &mut Vec<(&'static str, f64)>) {
        out.push(("losses", self.losses as f64));
    }
}

fn toy_sender(kind: SenderKind) -> Sender {
    let cfg = TcpConfig { window: 100.0, syn: false, ..Default::default() };
    Sender::with_controller(cfg, kind, Box::new(Toy { step: 2.0, losses: 0 }))
}

#[test]
fn a_toy_controller_grows_its_window_by_its_own_rule_on_the_reno_sender() {
    let mut s = toy_sender(SenderKind::TcpAgent { newreno: true });
    start(&mut s, 0); // packets 0 and 1 (windowInit 2, no SYN)
    // ACK 0: the toy adds 2/2 = 1, then ns-2's first-ACK rule (delay_growth) sets cwnd
    // to windowInit, 2.
    ack(&mut s, 100, 0);
    assert!(close(s.cwnd(), 2.0), "cwnd {}", s.cwnd());
    // ACK 1: + 2/2; ACK 2: + 2/3.
    ack(&mut s, 100, 1);
    assert!(close(s.cwnd(), 3.0), "cwnd {}", s.cwnd());
    ack(&mut s, 100, 2);
    assert!(close(s.cwnd(), 3.0 + 2.0 / 3.0), "cwnd {}", s.cwnd());
    assert_eq!(s.controller().name(), "toy");
    assert_eq!(s.probe(), vec![("losses", 0.0)]);
}

#[test]
fn a_toy_controller_decides_the_cut_on_a_fast_retransmit() {
    let mut s = toy_sender(SenderKind::TcpAgent { newreno: false });
    start(&mut s, 0);
    let mut t = 100;
    let mut acked = 0;
    while s.cwnd() < 8.0 {
        ack(&mut s, t, acked);
        acked += 1;
        t += 1;
    }
    let before = s.cwnd();
    for _ in 0..3 {
        ack(&mut s, t, acked - 1); // three duplicates: fast retransmit
    }
    // Reno's window at the cut is cwnd (no inflation yet): 3/4 of it, not ns-2's half.
    assert!(close(s.cwnd(), before * 0.75), "cwnd {} from {before}", s.cwnd());
    assert_eq!(s.ssthresh(), (before * 0.75) as i64);
    assert_eq!(s.probe(), vec![("losses", 1.0)]);
}

#[test]
fn a_toy_controller_runs_on_both_senders_over_a_lossy_path() {
    let path = Path { rate: 10e6, limit: 20, rtt0: 40 * MS, rtt1: 40 * MS, switch_at: u64::MAX, drop_every: 0 };
    for kind in [SenderKind::TcpAgent { newreno: true }, SenderKind::VegasAgent] {
        let run = simulate_sender(toy_sender(kind), &path, 20_000 * MS, |_| false);
        let s = &run.sender;
        assert!(run.drops > 0, "{kind:?}: the queue should overflow");
        // ns-2's Vegas agent cuts by its own rule (3/4 on a fine-grained retransmission, 2 on a
        // timeout) and only tells the controller (set_state); the Reno-family sender asks it.
        assert!(s.probe()[0].1 > 0.0 || kind == SenderKind::VegasAgent, "{kind:?}: the toy decided no cut");
        assert!(s.stats().pkts_sent > 1000, "{kind:?}: sent only {}", s.stats().pkts_sent);
        assert!(s.cwnd() >= 1.0 && s.cwnd() <= 100.0, "{kind:?}: cwnd {}", s.cwnd());
    }
}
