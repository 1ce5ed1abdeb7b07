//! The kernel selftests' bpf_cubic and the project's vl_vegas load and run as controllers.

mod common;

use std::sync::Arc;
use vegaslab_bpf::{BpfController, Engine, Fault};
use vegaslab_cc::controller::{Ack, CongestionControl, RttSample, Window};

/// A window that grows through slow start on ACKs one packet at a time.
fn run_acks(cc: &mut BpfController, acks: i64) -> Window {
    let mut w = Window { cwnd: 2.0, ssthresh: 0x7fff_ffff, next_seq: 2, last_ack: 0, max_window: 1000.0, cwnd_limited: true };
    cc.init(&mut w);
    let mut now = 1_000_000_000u64;
    for seq in 1..=acks {
        now += 1_000_000;
        cc.pkts_acked(&mut w, &RttSample { now, rtt: 0.05, queueing: None });
        cc.cong_avoid(&mut w, &Ack { seqno: seq, acked: 1, now, elapsed: 0.0 });
        w.last_ack = seq;
        w.next_seq = seq + w.cwnd as i64;
    }
    w
}

#[test]
fn bpf_cubic_and_vl_vegas_grow_a_window_in_slow_start() {
    for (rel, name) in [("selftests/bpf_cubic.bpf.o", "bpf:bpf_cubic"), ("vl_vegas.bpf.o", "bpf:vl_vegas")] {
        for engine in [Engine::Interpreter, Engine::Auto] {
            let Some(object) = common::load(rel, engine) else { return };
            let fault = Arc::new(Fault::default());
            let mut cc = BpfController::new(object, fault.clone());
            assert_eq!(cc.name(), name);
            let w = run_acks(&mut cc, 20);
            assert_eq!(fault.get(), None);
            assert!(w.cwnd > 2.0, "{rel} ({engine:?}): cwnd {}", w.cwnd);
        }
    }
}
