//! Bug reproducers for the Linux / ns-3 Vegas flavours found by the property driver
//! (tests/properties.rs). Expected numbers are worked out by hand in the comments.

mod common;
use common::*;

use vegaslab_cc::vegas::VegasParams;
use vegaslab_cc::{spec, Flavour, Sender, TcpConfig};

/// ns-3 flavour, SYN acknowledged after 1 ms (baseRTT 1 ms), then a 100 ms path:
///
/// | t (ms) | ACK   | what happens                                              | cwnd |
/// |--------|-------|-----------------------------------------------------------|------|
/// | 1      | 0     | 1 sample, NewReno increase; last_ack 0 -> windowInit 2     | 2    |
/// | 101    | 1, 2  | each ends a round with 1 sample: NewReno +1                | 4    |
/// | 201    | 3     | mid-round, slow start +1                                  | 5    |
/// | 201    | 4     | ends a round with 2 samples: NewReno +1                    | 6    |
/// | 201    | 5, 6  | mid-round: +1 each                                        | 8    |
/// | 301    | 7     | mid-round: +1                                             | 9    |
/// | 301    | 8     | ends a round with 4 samples (min 100 ms): target =        | 1    |
/// |        |       | floor(9 x 0.001/0.1) = 0, diff 9 > gamma in slow start:   |      |
/// |        |       | cwnd = min(9, 0 + 1) = 1, ssthresh max(min(100, 0), 2) = 2 |      |
///
/// Packets 9..=16 are outstanding.
fn ns3_vegas_after_exit_to_cwnd_1() -> Sender {
    let alg = spec("vegas", VegasParams::defaults_for(Flavour::Ns3));
    let mut s = Sender::new(
        TcpConfig {
            window: 100.0,
            ..Default::default()
        },
        alg,
    );
    s.app_send(0, None);
    assert_eq!(seqs(&drain(&mut s)), vec![0]);
    assert_eq!(seqs(&ack(&mut s, 1, 0)), vec![1, 2]);
    for a in 1..=2 {
        ack(&mut s, 101, a);
    }
    for a in 3..=6 {
        ack(&mut s, 201, a);
    }
    ack(&mut s, 301, 7);
    assert_eq!(s.cwnd(), 9.0);
    assert!(ack(&mut s, 301, 8).is_empty());
    assert_eq!(s.cwnd(), 1.0);
    assert_eq!(s.ssthresh(), 2);
    assert_eq!(s.state.t_seqno, 17);
    s
}

#[test]
fn ns3_flavour_fast_retransmit_never_takes_cwnd_below_one_packet() {
    let mut s = ns3_vegas_after_exit_to_cwnd_1();
    // Packet 9 is lost; 10, 11, 12 arrive: three duplicates of 8.
    ack(&mut s, 302, 8);
    ack(&mut s, 303, 8);
    let segs = ack(&mut s, 304, 8);
    assert_eq!(seqs(&segs), vec![9]); // fast retransmit
    assert_eq!(s.ssthresh(), 2);
    // The code halves windowd 1 -> cwnd 0.5. ns-3 would have cwnd = ssthresh = 2.
    assert!(s.cwnd() >= 1.0, "cwnd {} below one packet", s.cwnd());
}

/// Linux flavour: a retransmission timeout turns Vegas off (TCP_CA_Loss, Reno's increase
/// rules) and acknowledging everything that was outstanding at the timeout turns it back on
/// (Open). Before the fix the Linux-like sender never left Loss, so one timeout made a Linux
/// Vegas flow Reno for good.
#[test]
fn linux_flavour_vegas_resumes_after_a_timeout_once_everything_outstanding_is_acknowledged() {
    use vegaslab_cc::vegas::Classic;
    use vegaslab_cc::vegas_linux::LinuxVegas;
    let doing_vegas = |s: &Sender| {
        s.controller().as_any().downcast_ref::<LinuxVegas<Classic>>().expect("Linux Vegas").doing_vegas()
    };
    let alg = spec("vegas", VegasParams::defaults_for(Flavour::Linux));
    let mut s = Sender::new(TcpConfig { window: 100.0, syn: false, ..Default::default() }, alg);
    assert_eq!(seqs(&start(&mut s, 0)), vec![0, 1]);
    ack(&mut s, 100, 0);
    ack(&mut s, 100, 1); // packets 2..=5 in flight
    assert!(doing_vegas(&s));
    let deadline = s.rtx_deadline().expect("timer armed");
    s.on_timer(deadline);
    let resent = seqs(&drain(&mut s));
    assert_eq!(resent, vec![2], "a timeout resends the first unacknowledged packet");
    assert!(!doing_vegas(&s), "Loss: Reno rules");
    let t = deadline / MS + 100;
    ack(&mut s, t, 3); // not yet everything outstanding at the timeout (up to 5)
    assert!(!doing_vegas(&s));
    ack(&mut s, t + 1, 5);
    assert!(doing_vegas(&s), "everything outstanding at the timeout acknowledged: Open again");
}
