//! One direction of a link: a queue, a transmitter and a propagation pipe.
//!
//! A FIFO link knows each packet's fate when it arrives: it starts transmission at
//! max(now, end of the previous transmission), takes size x 8 / bandwidth to send, and
//! reaches the far node a propagation delay later (the delay in force when its transmission
//! starts, as ns-2's `LinkDelay` applies it). So the channel keeps packets in a single pipe
//! ordered by arrival time and needs one pending event, for the head of the pipe.
//!
//! The waiting queue is the set of accepted packets whose transmission has not started;
//! only their start times are kept, and the time-weighted occupancy statistics are
//! integrated as those start times pass.

use crate::delay::DelayModel;
use crate::packet::Packet;
use crate::queue::{droptail_admits, PacketErrors, Red, Verdict};
use crate::scenario::{DirectionSpec, QueueSpec};
use std::collections::VecDeque;
use vegaslab_cc::Nanos;

/// Counters and time-weighted occupancy of a channel's queue.
#[derive(Clone, Debug, Default)]
pub struct QueueStats {
    pub arrivals: u64,
    pub drops: u64,
    /// Packets whose transmission started.
    pub departures: u64,
    pub bytes_sent: u64,
    /// Packets transmitted and then lost to the packet-error model.
    pub errors: u64,
    pub max_len: u64,
    area: f64,
    area_sq: f64,
    last_change: Nanos,
    /// Transmission time of accepted packets, for utilisation.
    pub busy_ns: u128,
}

impl QueueStats {
    #[inline]
    fn integrate(&mut self, len: u64, t: Nanos) {
        // An empty queue adds exactly +0.0 to both sums: skip the arithmetic (most links are
        // empty most of the time).
        if len > 0 && t > self.last_change {
            // Through i64: the same values (times stay below `limits::MAX_TIME_NS` plus the
            // path's delays, far below 2^63), in one instruction each instead of x86-64's
            // longer unsigned-to-float sequence; this runs at every arrival and start.
            let dt = (t - self.last_change) as i64 as f64;
            let l = len as i64 as f64;
            self.area += l * dt;
            self.area_sq += l * l * dt;
        }
        self.last_change = self.last_change.max(t);
    }

    /// Time-weighted mean and standard deviation of the waiting-queue length over [0, end].
    pub fn mean_std(&self, end: Nanos) -> (f64, f64) {
        if end == 0 {
            return (0.0, 0.0);
        }
        let mean = self.area / end as f64;
        let var = (self.area_sq / end as f64 - mean * mean).max(0.0);
        (mean, var.sqrt())
    }
}

/// Where an arriving packet went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admission {
    /// Accepted; waits `queued` before its transmission starts and reaches the far node at
    /// `arrives_at`.
    Accepted { arrives_at: Nanos, queued: Nanos },
    /// Dropped by the queue on arrival.
    Dropped,
    /// Transmitted but corrupted on the link (a packet-error model): it occupied the link and
    /// never arrives.
    Corrupted,
}

pub struct Channel {
    pub from: u32,
    pub to: u32,
    pub bandwidth_bps: f64,
    delay: DelayModel,
    queue: QueueSpec,
    /// RED state when the queue is RED (`queue`).
    red: Option<Box<Red>>,
    /// Packet-error model, if the direction has a non-zero error rate.
    errors: Option<Box<PacketErrors>>,
    /// Start times of accepted packets still waiting, in order.
    waiting: VecDeque<Nanos>,
    busy_until: Nanos,
    /// Packets propagating or waiting, by arrival time at the far node.
    pipe: VecDeque<(Nanos, Packet)>,
    /// Time of the pending delivery event, if one is scheduled.
    pub scheduled: Option<Nanos>,
    pub stats: QueueStats,
    /// Transmission time of the last packet size seen (most packets share a size).
    tx_memo: (u32, Nanos),
    /// The sending node is an AQT-enabled router: probing packets get their queueing time
    /// added to the AQT option (RoVegas).
    pub aqt_enabled: bool,
    /// A monitored queue's next sample time (`Nanos::MAX`: not monitored) and sampling period;
    /// see `start_sampling`.
    next_sample: Nanos,
    sample_interval: Nanos,
    /// The waiting-queue length at each sample time taken so far.
    samples: Vec<u64>,
}

impl Channel {
    /// Channel number `index` of a run with this `seed` (its random streams, see `queue`).
    pub fn new(from: u32, to: u32, spec: &DirectionSpec, seed: u64, index: usize) -> Self {
        Channel {
            from,
            to,
            bandwidth_bps: spec.bandwidth_bps,
            delay: DelayModel::new(spec.delay, spec.delay_schedule.clone()),
            queue: spec.queue.clone(),
            red: match &spec.queue {
                QueueSpec::Red(r) => Some(Box::new(Red::new(r, spec.bandwidth_bps, spec.delay, seed, index))),
                QueueSpec::DropTail { .. } => None,
            },
            errors: PacketErrors::new(spec.error_rate, seed, index),
            waiting: VecDeque::new(),
            busy_until: 0,
            pipe: VecDeque::new(),
            scheduled: None,
            stats: QueueStats::default(),
            tx_memo: (0, 0),
            aqt_enabled: false,
            next_sample: Nanos::MAX,
            sample_interval: 0,
            samples: Vec::new(),
        }
    }

    /// Monitor this queue: record its waiting length at every multiple of `interval` (from
    /// `interval` on).
    ///
    /// Decided: a queue samples itself as its own clock passes each sample time, instead of
    /// being read by a sampling event. A channel's clock is the time of the latest packet it
    /// accepted; on an express hop (`express`) that lies ahead of the simulation's clock, so
    /// an event reading the queue at the current time would see packets that have not arrived
    /// yet. Arrivals at one channel come in time order (a channel fed by an express hop has a
    /// single order-keeping feeder; any other is fed at the current time), so when an arrival
    /// later than a sample time comes, every packet the queue holds arrived at or before that
    /// time: the sample is the length then. A sample at time T therefore counts every packet
    /// that arrived at or before T and whose transmission starts after T. Monitoring costs a
    /// comparison per arrival and keeps express hops on monitored links, and nothing a
    /// monitor does can change a result (`monitors_change_no_result` in the tests).
    pub fn start_sampling(&mut self, interval: Nanos) {
        self.sample_interval = interval.max(1);
        self.next_sample = self.sample_interval;
    }

    /// Record every sample due strictly before `t`.
    #[cold]
    fn sample_before(&mut self, t: Nanos) {
        while self.next_sample < t {
            self.advance(self.next_sample);
            self.samples.push(self.waiting.len() as u64);
            self.next_sample = self.next_sample.saturating_add(self.sample_interval);
        }
    }

    /// The run stopped at `stop`: the samples at every sample time up to and including `stop`
    /// (a channel whose clock ran ahead of `stop` may have taken later ones; they are cut).
    pub fn finish_sampling(&mut self, stop: Nanos) -> Vec<u64> {
        if self.sample_interval == 0 {
            return Vec::new(); // not monitored
        }
        self.sample_before(stop.saturating_add(1));
        let mut samples = std::mem::take(&mut self.samples);
        samples.truncate((stop / self.sample_interval) as usize);
        samples
    }

    pub fn queue_spec(&self) -> &QueueSpec {
        &self.queue
    }

    /// Propagation delay in force at time `t`.
    pub fn delay_at(&self, t: Nanos) -> Nanos {
        self.delay.at(t)
    }

    /// RED state (average, early and forced drops) if the queue is RED.
    pub fn red(&self) -> Option<&Red> {
        self.red.as_deref()
    }

    /// The direction has a packet-error model.
    pub fn has_error_model(&self) -> bool {
        self.errors.is_some()
    }

    /// RED's decision for an arrival seeing `len` waiting (out of line: DropTail stays lean).
    #[cold]
    fn red_admits(&mut self, now: Nanos, len: u64) -> bool {
        // Idle = nothing waiting and the transmitter free: since its last transmission ended.
        let idle = (len == 0 && self.busy_until <= now).then_some(self.busy_until);
        let red = self.red.as_mut().expect("RED queue has RED state");
        red.arrive(now, len as usize, idle) == Verdict::Accept
    }

    /// Transmission time of `bytes`, rounded to the nearest nanosecond (halves up), and at
    /// least 1 ns.
    ///
    /// Decided: a transmission never takes zero time. With a zero transmission time and a zero
    /// delay a packet would arrive at the instant it was sent, so an ACK could clock out data
    /// whose ACK comes back at the same instant, forever: simulated time would stand still
    /// inside one event and the run (and Ctrl-C) would hang. With at least 1 ns every accepted
    /// packet arrives strictly later than it was sent, so an event only handles packets already
    /// in a pipe when it started. It cannot change an ordinary scenario: 1 ns is the
    /// transmission time of 12.5 bytes at 100 Gbit/s, below any packet with headers. (The
    /// float-to-integer cast saturates, so a zero or tiny bandwidth gives `Nanos::MAX`, "never".)
    #[inline]
    pub fn tx_time(&mut self, bytes: u32) -> Nanos {
        if self.tx_memo.0 != bytes {
            let tx = ((bytes as f64 * 8.0 * 1e9) / self.bandwidth_bps + 0.5) as Nanos;
            self.tx_memo = (bytes, tx.max(1));
        }
        self.tx_memo.1
    }

    /// Let the waiting queue drain up to time `t`, integrating its occupancy.
    pub fn advance(&mut self, t: Nanos) {
        while let Some(&start) = self.waiting.front() {
            if start > t {
                break;
            }
            self.stats.integrate(self.waiting.len() as u64, start);
            self.waiting.pop_front();
        }
        self.stats.integrate(self.waiting.len() as u64, t);
    }

    /// Packets waiting (not the one in transmission) at the last `advance`.
    pub fn queue_len(&self) -> usize {
        self.waiting.len()
    }

    /// A packet arrives at time `now`: queue it (and put it in the pipe) or drop it.
    pub fn admit(&mut self, now: Nanos, packet: Packet) -> Admission {
        let admission = self.accept(now, packet.size);
        if let Admission::Accepted { arrives_at, .. } = admission {
            self.push_pipe(arrives_at, packet);
        }
        admission
    }

    /// Decide a packet's fate and account for it, without putting it in the pipe: the
    /// caller hands an accepted packet straight to the far node (see `express`).
    pub fn accept(&mut self, now: Nanos, bytes: u32) -> Admission {
        if self.next_sample < now {
            self.sample_before(now);
        }
        self.advance(now);
        self.stats.arrivals += 1;
        let len = self.waiting.len() as u64;
        let accept = match self.queue {
            QueueSpec::DropTail { limit } => droptail_admits(len, limit),
            QueueSpec::Red(_) => self.red_admits(now, len),
        };
        if !accept {
            self.stats.drops += 1;
            return Admission::Dropped;
        }
        let start = now.max(self.busy_until);
        let tx = self.tx_time(bytes);
        // Saturating: an absurd bandwidth or delay means "never", not a wrapped-around
        // "at once" (`Nanos::MAX` lies beyond any run's end).
        self.busy_until = start.saturating_add(tx);
        if start > now {
            self.waiting.push_back(start);
            self.stats.max_len = self.stats.max_len.max(self.waiting.len() as u64);
        }
        self.stats.departures += 1;
        self.stats.bytes_sent += bytes as u64;
        self.stats.busy_ns += tx as u128;
        if let Some(e) = &mut self.errors {
            // Transmitted (it used the queue and the link), then lost.
            if e.corrupts() {
                self.stats.errors += 1;
                return Admission::Corrupted;
            }
        }
        Admission::Accepted { arrives_at: self.busy_until.saturating_add(self.delay.at_mut(start)), queued: start - now }
    }

    /// The propagation delay never changes, so packets leave in the order they arrive.
    pub fn keeps_order(&self) -> bool {
        self.delay.is_constant()
    }

    pub fn push_pipe(&mut self, at: Nanos, packet: Packet) {
        match self.pipe.back() {
            Some(&(last, _)) if at < last => {
                // The delay fell: this packet overtakes earlier ones.
                let pos = self.pipe.partition_point(|&(t, _)| t <= at);
                self.pipe.insert(pos, (at, packet));
            }
            _ => self.pipe.push_back((at, packet)),
        }
    }

    /// Packets accepted and not yet delivered (waiting, in transmission or propagating).
    pub fn packets(&self) -> impl Iterator<Item = &Packet> {
        self.pipe.iter().map(|(_, p)| p)
    }

    /// The earliest arrival still in the pipe.
    pub fn head_time(&self) -> Option<Nanos> {
        self.pipe.front().map(|&(t, _)| t)
    }

    /// Take the head packet if it arrives at or before `now`.
    pub fn pop_arrived(&mut self, now: Nanos) -> Option<Packet> {
        match self.pipe.front() {
            Some(&(t, p)) if t <= now => {
                self.pipe.pop_front();
                Some(p)
            }
            _ => None,
        }
    }

    /// Transmission time that falls after `end` (the tail of a transmission cut by the end
    /// of the run), to subtract from `busy_ns` for utilisation.
    pub fn busy_overhang(&self, end: Nanos) -> Nanos {
        self.busy_until.saturating_sub(end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkt(size: u32) -> Packet {
        Packet { seqno: 0, flow: 0, size, dst: 1, kind: crate::packet::Kind::Data, probe: false, aqt: 0, aqt_echo: 0 }
    }

    fn chan(limit: u32) -> Channel {
        Channel::new(
            0,
            1,
            &DirectionSpec {
                bandwidth_bps: 1e6,
                delay: 10_000_000,
                delay_schedule: vec![(1_000_000_000, 100_000_000)],
                queue: QueueSpec::DropTail { limit },
                error_rate: 0.0,
            },
            1,
            0,
        )
    }

    #[test]
    fn droptail_limit_counts_the_packet_in_transmission() {
        // limit 3: one transmitting + 2 waiting; the fourth back-to-back arrival drops.
        let mut c = chan(3);
        let got: Vec<bool> = (0..4).map(|i| matches!({ let _ = i; c.admit(0, pkt(1000)) }, Admission::Accepted { .. })).collect();
        assert_eq!(got, vec![true, true, true, false]);
        assert_eq!(c.queue_len(), 2);
    }

    #[test]
    fn arrival_time_is_start_plus_transmission_plus_delay() {
        let mut c = chan(50);
        // 1000 bytes at 1 Mbps = 8 ms; delay 10 ms.
        assert_eq!(c.admit(0, pkt(1000)), Admission::Accepted { arrives_at: 18_000_000, queued: 0 });
        // Second waits for the first: starts at 8 ms.
        assert_eq!(c.admit(0, pkt(1000)), Admission::Accepted { arrives_at: 26_000_000, queued: 8_000_000 });
    }

    #[test]
    fn delay_in_force_at_transmission_start_applies() {
        let mut c = chan(50);
        // Starts at 1.5 s, after the change to 100 ms.
        assert_eq!(c.admit(1_500_000_000, pkt(1000)), Admission::Accepted { arrives_at: 1_608_000_000, queued: 0 });
    }

    fn chan_with(bandwidth_bps: f64, delay: Nanos) -> Channel {
        let spec = DirectionSpec { bandwidth_bps, delay, delay_schedule: vec![], queue: QueueSpec::DropTail { limit: 50 }, error_rate: 0.0 };
        Channel::new(0, 1, &spec, 1, 0)
    }

    #[test]
    fn a_transmission_takes_at_least_one_nanosecond() {
        // 41 bytes at 1 Pbit/s would round to 0 ns.
        let mut c = chan_with(1e15, 0);
        assert_eq!(c.tx_time(41), 1);
        assert_eq!(c.admit(5, pkt(41)), Admission::Accepted { arrives_at: 6, queued: 0 });
        assert_eq!(c.admit(5, pkt(41)), Admission::Accepted { arrives_at: 7, queued: 1 });
        // Rounding to the nearest nanosecond is unchanged above 1 ns: 1040 bytes at 10 Mbit/s.
        assert_eq!(chan_with(10e6, 0).tx_time(1040), 832_000);
    }

    #[test]
    fn a_huge_delay_saturates_instead_of_wrapping_to_zero() {
        // About 584 years: start + tx + delay exceeds u64.
        let mut c = chan_with(1e6, Nanos::MAX - 10);
        let Admission::Accepted { arrives_at, .. } = c.admit(1_000_000_000, pkt(1000)) else { panic!("accepted") };
        assert_eq!(arrives_at, Nanos::MAX);
        // A zero bandwidth transmits forever; the next packet waits "forever" too.
        let mut z = chan_with(0.0, 0);
        let Admission::Accepted { arrives_at, .. } = z.admit(1, pkt(1000)) else { panic!("accepted") };
        assert_eq!(arrives_at, Nanos::MAX);
        assert!(matches!(z.admit(2, pkt(1000)), Admission::Accepted { arrives_at: Nanos::MAX, .. }));
    }

    #[test]
    fn a_monitored_queue_samples_its_length_as_its_clock_passes_each_sample_time() {
        let mut c = chan(50);
        c.start_sampling(5_000_000);
        // 1000 bytes take 8 ms: four at 0 ms transmit 0-8, 8-16, 16-24 and 24-32 ms.
        for _ in 0..4 {
            c.admit(0, pkt(1000));
        }
        // Nothing is sampled until an arrival later than a sample time comes.
        assert!(c.samples.is_empty());
        // At 30 ms: the samples at 5-25 ms are taken first, without this packet.
        c.admit(30_000_000, pkt(1000));
        assert_eq!(c.samples, vec![3, 2, 2, 1, 0]);
        // The sample at 30 ms counts the packet that arrived then (it waits until 32 ms).
        assert_eq!(c.finish_sampling(30_000_000), vec![3, 2, 2, 1, 0, 1]);
    }

    #[test]
    fn samples_taken_ahead_of_where_the_run_stopped_are_cut() {
        let mut c = chan(50);
        c.start_sampling(5_000_000);
        c.admit(0, pkt(1000));
        c.admit(0, pkt(1000));
        c.admit(23_000_000, pkt(1000)); // an express hop, ahead of the run's clock
        assert_eq!(c.finish_sampling(12_000_000), vec![1, 0]);
    }

    #[test]
    fn mean_queue_length_is_time_weighted() {
        let mut c = chan(50);
        c.admit(0, pkt(1000)); // transmits 0-8 ms
        c.admit(0, pkt(1000)); // waits 0-8 ms
        c.advance(16_000_000);
        let (mean, _) = c.stats.mean_std(16_000_000);
        assert!((mean - 0.5).abs() < 1e-12, "{mean}");
    }
}
