//! Helpers shared by the controller tests: drive a sans-IO sender with millisecond times and
//! look at what it sent.
#![allow(dead_code)]

pub mod params;
pub mod path;

use vegaslab_cc::{AckInfo, Segment, Sender};

pub const MS: u64 = 1_000_000;

pub fn ms(t: u64) -> u64 {
    t * MS
}

/// Segments the sender queued since the last call.
pub fn drain(s: &mut Sender) -> Vec<Segment> {
    s.drain_segments().collect()
}

pub fn seqs(segs: &[Segment]) -> Vec<i64> {
    segs.iter().map(|g| g.seqno).collect()
}

/// The application starts an infinite (FTP) transfer at `t_ms`.
pub fn start(s: &mut Sender, t_ms: u64) -> Vec<Segment> {
    s.app_send(ms(t_ms), None);
    drain(s)
}

/// One ACK carrying cumulative sequence number `seq` arrives at `t_ms`; returns what was sent.
pub fn ack(s: &mut Sender, t_ms: u64, seq: i64) -> Vec<Segment> {
    s.on_ack(ms(t_ms), &AckInfo { seqno: seq, ..Default::default() });
    drain(s)
}

/// Reno-family window inflation during fast recovery.
pub fn dupwnd(s: &Sender) -> i64 {
    s.dupwnd().expect("a Reno-family sender")
}

pub fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}
