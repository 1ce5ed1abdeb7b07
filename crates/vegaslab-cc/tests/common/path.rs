//! A one-way path for end-to-end controller tests: a DropTail bottleneck, propagation that may
//! change once (a reroute), a cumulative-ACK receiver; no simulator crate involved.

use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap, VecDeque};
use vegaslab_cc::{AckInfo, AlgorithmSpec, Sender, TcpConfig};

/// One-way path: a DropTail bottleneck of `rate` bit/s holding `limit` packets (the one in
/// transmission included), then propagation; the round-trip propagation delay is `rtt0`
/// for packets leaving the bottleneck before `switch_at` and `rtt1` after (a reroute). The
/// receiver ACKs every packet cumulatively.
pub struct Path {
    pub rate: f64,
    pub limit: usize,
    pub rtt0: u64,
    pub rtt1: u64,
    pub switch_at: u64,
    /// Drop the first transmission of every packet whose seqno % drop_every == 1 (0: none).
    pub drop_every: i64,
}

pub struct Run {
    pub sender: Sender,
    /// (time, packets delivered in order so far) at every ACK.
    pub delivered: Vec<(u64, i64)>,
    /// probe() at every ACK.
    pub probes: Vec<Vec<(&'static str, f64)>>,
    pub drops: u64,
}


/// A registered algorithm on `path` (receiver window 200 packets); see [`simulate_sender`].
pub fn simulate(alg: AlgorithmSpec, path: &Path, end: u64, each_ack: impl FnMut(&Sender) -> bool) -> Run {
    simulate_sender(Sender::new(TcpConfig { window: 200.0, ..Default::default() }, alg), path, end, each_ack)
}

/// Run `s` on `path` until `end` ns, or until `each_ack` (called after every ACK and timer) returns true.
pub fn simulate_sender(mut s: Sender, path: &Path, end: u64, mut each_ack: impl FnMut(&Sender) -> bool) -> Run {
    let mut acks: BinaryHeap<Reverse<(u64, u64, i64)>> = BinaryHeap::new();
    let mut in_queue: VecDeque<u64> = VecDeque::new();
    let (mut busy_until, mut order, mut drops) = (0u64, 0u64, 0u64);
    let mut received = BTreeSet::new();
    let mut next_expected = 0i64;
    let mut run = Run { sender: s.clone(), delivered: Vec::new(), probes: Vec::new(), drops: 0 };
    let mut now = 0u64;
    s.app_send(0, None);
    loop {
        for seg in s.drain_segments().collect::<Vec<_>>() {
            while in_queue.front().is_some_and(|&d| d <= now) {
                in_queue.pop_front();
            }
            if path.drop_every > 0 && seg.seqno % path.drop_every == 1 && !seg.retransmission {
                drops += 1;
                continue;
            }
            if in_queue.len() >= path.limit {
                drops += 1;
                continue;
            }
            let tx = (seg.wire_bytes as f64 * 8.0 / path.rate * 1e9) as u64;
            let dep = busy_until.max(now) + tx;
            busy_until = dep;
            in_queue.push_back(dep);
            let rtt = if dep < path.switch_at { path.rtt0 } else { path.rtt1 };
            order += 1;
            acks.push(Reverse((dep + rtt, order, seg.seqno)));
        }
        let next_ack = acks.peek().map(|Reverse((t, _, _))| *t);
        let timer = s.rtx_deadline();
        let t = match (next_ack, timer) {
            (Some(a), Some(d)) => a.min(d),
            (Some(a), None) => a,
            (None, Some(d)) => d,
            (None, None) => break,
        };
        if t > end {
            break;
        }
        now = t;
        if timer == Some(t) && next_ack.is_none_or(|a| a > t) {
            s.on_timer(now);
            if each_ack(&s) {
                break;
            }
            continue;
        }
        let Reverse((_, _, seq)) = acks.pop().unwrap();
        received.insert(seq);
        while received.remove(&next_expected) {
            next_expected += 1;
        }
        s.on_ack(now, &AckInfo { seqno: next_expected - 1, ..Default::default() });
        run.delivered.push((now, next_expected));
        run.probes.push(s.probe());
        if each_ack(&s) {
            break;
        }
    }
    run.sender = s;
    run.drops = drops;
    run
}


/// Packets delivered between `from` and `to`.
pub fn delivered_between(run: &Run, from: u64, to: u64) -> i64 {
    let at = |t: u64| run.delivered.iter().take_while(|(x, _)| *x <= t).last().map_or(0, |(_, n)| *n);
    at(to) - at(from)
}
