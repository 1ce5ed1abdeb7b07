//! The channel's unit tests: transmission and arrival times, ns-2's double clock, limits,
//! sampling, the end-of-run accounting and the loss models on the link.

use super::clock::I64_LIMIT;
use super::*;

fn pkt(size: u32) -> Packet {
    Packet { seqno: 0, flow: 0, size, dst: 1, kind: crate::packet::Kind::Data, probe: false, aqt: 0, aqt_echo: 0, clock: 0.0, report: 0 }
}

#[test]
fn nanoseconds_of_a_double_are_those_of_the_saturating_conversion() {
    let edges = [
        0.0, -0.0, 1e-10, 4.9e-10, 5e-10, 0.187047326, 200.0, 1e9, 9.223372036854775e9,
        9.223372036854776e9, 1e10, 1e300, -1e-10, -9e-10, -1.5e-9, -1.0, f64::INFINITY, f64::NEG_INFINITY,
        f64::NAN,
    ];
    for clock in edges {
        assert_eq!(ns_of(clock), (clock * 1e9 + 0.5) as Nanos, "clock {clock}");
    }
    assert_eq!(ns_of(f64::NAN), 0);
    assert_eq!(ns_of(1e300), Nanos::MAX);
    // The last double below 2^63 ns and the first at it.
    let below = f64::from_bits(I64_LIMIT.to_bits() - 1);
    assert_eq!(ns_of((below - 0.5) / 1e9), ((below - 0.5) / 1e9 * 1e9 + 0.5) as Nanos);
}

/// A packet arriving at `now`, its ns-2 double consistent with it (as in a run).
fn pkt_at(size: u32, now: Nanos) -> Packet {
    Packet { clock: now as f64 / 1e9, ..pkt(size) }
}

fn chan(limit: u32) -> Channel {
    Channel::new(
        0,
        1,
        &DirectionSpec {
            bandwidth_bps: 1e6,
            delay: 10_000_000,
            delay_schedule: vec![(1_000_000_000, 100_000_000)],
            queue: QueueSpec::DropTail(crate::queue::DropTailSpec { limit }),
            error_rate: 0.0,
            loss: None,
        },
        1,
        0,
    )
}

#[test]
fn droptail_limit_counts_the_packet_in_transmission() {
    // limit 3: one transmitting + 2 waiting; the fourth back-to-back arrival drops.
    let mut c = chan(3);
    let got: Vec<bool> = (0..4).map(|i| matches!({ let _ = i; c.admit(0, pkt_at(1000, 0)) }, Admission::Accepted { .. })).collect();
    assert_eq!(got, vec![true, true, true, false]);
    assert_eq!(c.queue_len(), 2);
}

#[test]
fn a_droptail_waiting_ring_grows_no_larger_than_the_queue_can_hold() {
    // Limit 1,000: at most 999 wait. Doubling alone would reach a 1,024-entry ring.
    let mut c = chan(1000);
    for _ in 0..2000 {
        c.admit(0, pkt_at(1000, 0));
    }
    assert_eq!(c.queue_len(), 999);
    assert_eq!(c.waiting.capacity(), 999);
    // Below the limit it still doubles: 5 waiting packets in a ring of 8.
    let mut small = chan(1000);
    for _ in 0..6 {
        small.admit(0, pkt_at(1000, 0));
    }
    assert_eq!((small.queue_len(), small.waiting.capacity()), (5, 8));
}

#[test]
fn arrival_time_is_start_plus_transmission_plus_delay() {
    let mut c = chan(50);
    // 1000 bytes at 1 Mbps = 8 ms; delay 10 ms.
    assert_eq!(times(c.admit(0, pkt_at(1000, 0))), Some((18_000_000, 0)));
    // Second waits for the first: starts at 8 ms.
    assert_eq!(times(c.admit(0, pkt_at(1000, 0))), Some((26_000_000, 8_000_000)));
}

#[test]
fn arrival_clock_is_ns2s_double_sum() {
    // ns-2 (LinkDelay::recv): a transmission starts at the arrival when the link is
    // free, else at the previous one's end (the queue's resume event, start + txt); the
    // far node sees it at start + (txt + delay), each step rounded to a double.
    let mut c = chan(50);
    let txt = 8.0 * 1000.0 / 1e6;
    let delay = 10_000_000u64 as f64 / 1e9;
    // An arrival clock at which the order of the sums matters for both packets.
    let arrival = 0.159_685_4;
    let first = c.admit(159_685_400, Packet { clock: arrival, ..pkt(1000) });
    let second = c.admit(159_685_400, Packet { clock: arrival, ..pkt(1000) });
    let clock = |a: Admission| match a {
        Admission::Accepted { clock, .. } => clock,
        _ => panic!("accepted"),
    };
    assert_eq!(clock(first), arrival + (txt + delay));
    assert_eq!(clock(second), (arrival + txt) + (txt + delay));
    // Summed in another order the doubles differ: the order is part of the rule.
    assert_ne!(clock(first), (arrival + txt) + delay);
    assert_ne!(clock(second), ((arrival + txt) + txt) + delay);
    // A packet arriving after the link fell idle starts at its own clock, and takes the
    // delay in force then (100 ms from 1 s on) as its double.
    let late = 2.000_000_000_000_000_4;
    let new_delay = 100_000_000u64 as f64 / 1e9;
    assert_eq!(clock(c.admit(2_000_000_000, Packet { clock: late, ..pkt(1000) })), late + (txt + new_delay));
}

#[test]
fn an_arrival_whose_double_precedes_the_transmission_start_finds_the_queue_full() {
    // Limit 2: one packet in transmission, one waiting. A (0-8 ms) and B (waits, starts
    // at 8 ms) fill it; C arrives at exactly 8 ms. In ns-2 B starts at the queue's resume
    // event, double 0.008 (0 + txt); if C's double is one unit in the last place below,
    // C runs first, finds B still waiting and is dropped; at or above, B has left.
    let c_at = |clock: f64, ties_by_clock: bool| {
        let mut c = chan(2);
        c.set_ties_by_clock(ties_by_clock);
        c.admit(0, pkt_at(1000, 0));
        c.admit(0, pkt_at(1000, 0));
        c.admit(8_000_000, Packet { clock, ..pkt(1000) })
    };
    let resume: f64 = 8.0 * 1000.0 / 1e6;
    let below = f64::from_bits(resume.to_bits() - 1);
    assert_eq!(c_at(below, true), Admission::Dropped);
    assert!(matches!(c_at(resume, true), Admission::Accepted { .. }));
    assert!(matches!(c_at(f64::from_bits(resume.to_bits() + 1), true), Admission::Accepted { .. }));
    // Without ns-2's doubles (run.clock = "exact") the transmission due now has started.
    assert!(matches!(c_at(below, false), Admission::Accepted { .. }));
}

#[test]
fn delay_in_force_at_transmission_start_applies() {
    let mut c = chan(50);
    // Starts at 1.5 s, after the change to 100 ms.
    assert_eq!(times(c.admit(1_500_000_000, pkt_at(1000, 1_500_000_000))), Some((1_608_000_000, 0)));
}

/// An admission's arrival time and queueing delay (None: not accepted).
fn times(a: Admission) -> Option<(Nanos, Nanos)> {
    match a {
        Admission::Accepted { arrives_at, queued, .. } => Some((arrives_at, queued)),
        _ => None,
    }
}

fn chan_with(bandwidth_bps: f64, delay: Nanos) -> Channel {
    let spec = DirectionSpec { bandwidth_bps, delay, delay_schedule: vec![], queue: QueueSpec::DropTail(crate::queue::DropTailSpec { limit: 50 }), error_rate: 0.0, loss: None };
    Channel::new(0, 1, &spec, 1, 0)
}

#[test]
fn a_transmission_takes_at_least_one_nanosecond() {
    // 41 bytes at 1 Pbit/s would round to 0 ns.
    let mut c = chan_with(1e15, 0);
    assert_eq!(c.tx_time(41), 1);
    assert_eq!(times(c.admit(5, pkt_at(41, 5))), Some((6, 0)));
    assert_eq!(times(c.admit(5, pkt_at(41, 5))), Some((7, 1)));
    // Rounding to the nearest nanosecond is unchanged above 1 ns: 1040 bytes at 10 Mbit/s.
    assert_eq!(chan_with(10e6, 0).tx_time(1040), 832_000);
}

#[test]
fn a_huge_delay_saturates_instead_of_wrapping_to_zero() {
    // About 584 years: start + tx + delay exceeds u64.
    let mut c = chan_with(1e6, Nanos::MAX - 10);
    let Admission::Accepted { arrives_at, .. } = c.admit(1_000_000_000, pkt_at(1000, 1_000_000_000)) else { panic!("accepted") };
    assert_eq!(arrives_at, Nanos::MAX);
    // A zero bandwidth transmits forever; the next packet waits "forever" too.
    let mut z = chan_with(0.0, 0);
    let Admission::Accepted { arrives_at, .. } = z.admit(1, pkt_at(1000, 1)) else { panic!("accepted") };
    assert_eq!(arrives_at, Nanos::MAX);
    assert!(matches!(z.admit(2, pkt_at(1000, 2)), Admission::Accepted { arrives_at: Nanos::MAX, .. }));
}

#[test]
fn a_monitored_queue_samples_its_length_as_its_clock_passes_each_sample_time() {
    let mut c = chan(50);
    c.start_sampling(5_000_000);
    // 1000 bytes take 8 ms: four at 0 ms transmit 0-8, 8-16, 16-24 and 24-32 ms.
    for _ in 0..4 {
        c.admit(0, pkt_at(1000, 0));
    }
    // Nothing is sampled until an arrival later than a sample time comes.
    assert!(c.samples.is_empty());
    // At 30 ms: the samples at 5-25 ms are taken first, without this packet.
    c.admit(30_000_000, pkt_at(1000, 30_000_000));
    assert_eq!(c.samples, vec![3, 2, 2, 1, 0]);
    // The sample at 30 ms counts the packet that arrived then (it waits until 32 ms).
    assert_eq!(c.finish_sampling(30_000_000), vec![3, 2, 2, 1, 0, 1]);
}

#[test]
fn samples_taken_ahead_of_where_the_run_stopped_are_cut() {
    let mut c = chan(50);
    c.start_sampling(5_000_000);
    c.admit(0, pkt_at(1000, 0));
    c.admit(0, pkt_at(1000, 0));
    c.admit(23_000_000, pkt_at(1000, 23_000_000)); // an express hop, ahead of the run's clock
    assert_eq!(c.finish_sampling(12_000_000), vec![1, 0]);
}

/// Three 1000-byte packets at 0 on an idle 1 Mbit/s link: each takes 8 ms, so they
/// transmit 0-8, 8-16 and 16-24 ms.
fn three_at_once(error_rate: f64) -> Channel {
    let spec = DirectionSpec { bandwidth_bps: 1e6, delay: 0, delay_schedule: vec![], queue: QueueSpec::DropTail(crate::queue::DropTailSpec { limit: 50 }), error_rate, loss: None };
    let mut c = Channel::new(0, 1, &spec, 1, 0);
    for _ in 0..3 {
        c.admit(0, pkt_at(1000, 0));
    }
    c
}

#[test]
fn a_run_ending_mid_transmission_counts_the_started_packets_and_the_busy_time_within_it() {
    // Stopped at 12 ms, half-way through the second packet: the third has not started.
    let mut c = three_at_once(0.0);
    c.finish(12_000_000);
    let s = &c.stats;
    assert_eq!((s.arrivals(), s.drops, s.departures, s.backlog), (3, 0, 2, 1));
    assert_eq!(s.bytes_sent, 2000);
    assert_eq!(s.busy_ns(), 8_000_000 + 4_000_000); // the first whole, the elapsed half of the second
    // Finishing again changes nothing.
    c.finish(12_000_000);
    assert_eq!((c.stats.departures, c.stats.backlog, c.stats.bytes_sent, c.stats.busy_ns()), (2, 1, 2000, 12_000_000));
}

#[test]
fn a_transmission_starting_exactly_at_the_end_has_started() {
    // The third packet starts at 16 ms, the end: a departure with its bytes and no busy time.
    let mut c = three_at_once(0.0);
    c.finish(16_000_000);
    let s = &c.stats;
    assert_eq!((s.departures, s.backlog, s.bytes_sent, s.busy_ns()), (3, 0, 3000, 16_000_000));
    // One nanosecond earlier it had not.
    let mut c = three_at_once(0.0);
    c.finish(16_000_000 - 1);
    assert_eq!((c.stats.departures, c.stats.backlog, c.stats.bytes_sent), (2, 1, 2000));
}

#[test]
fn a_run_ending_after_every_transmission_keeps_all_counts() {
    let mut c = three_at_once(0.0);
    c.finish(30_000_000);
    let s = &c.stats;
    assert_eq!((s.departures, s.backlog, s.bytes_sent, s.busy_ns()), (3, 0, 3000, 24_000_000));
}

/// 1000-, 500- and 1500-byte packets at 0 on a 1 Mbit/s link whose delay changes: they
/// transmit 0-8, 8-12 and 12-24 ms.
fn three_sizes(delay_schedule: Vec<(Nanos, Nanos)>) -> Channel {
    let spec = DirectionSpec { bandwidth_bps: 1e6, delay: 100_000_000, delay_schedule, queue: QueueSpec::DropTail(crate::queue::DropTailSpec { limit: 50 }), error_rate: 0.0, loss: None };
    let mut c = Channel::new(0, 1, &spec, 1, 0);
    for size in [1000, 500, 1500] {
        c.admit(0, pkt_at(size, 0));
    }
    c
}

#[test]
fn the_bytes_taken_back_are_those_of_the_packets_still_waiting_even_when_one_overtook_others() {
    // The delay falls to 1 ms at 10 ms: the third packet (start 12 ms) arrives at 25 ms,
    // ahead of the first two (108 and 112 ms), so it heads the pipe.
    let mut c = three_sizes(vec![(10_000_000, 1_000_000)]);
    assert_eq!(c.head_time().map(|(t, start, _, _)| (t, start)), Some((25_000_000, 12_000_000)));
    c.finish(10_000_000);
    assert_eq!((c.stats.departures, c.stats.backlog, c.stats.bytes_sent), (2, 1, 1500));
    let mut c = three_sizes(vec![(10_000_000, 1_000_000)]);
    c.finish(7_000_000);
    assert_eq!((c.stats.departures, c.stats.backlog, c.stats.bytes_sent), (1, 2, 1000));
    assert_eq!(c.stats.busy_ns(), 7_000_000);
}

#[test]
fn a_waiting_packet_arriving_with_one_already_sent_is_told_apart_by_acceptance_order() {
    // From 5 ms the delay is 96 ms: the second packet (start 8 ms, sent by 12 ms) arrives at
    // 108 ms, with the first (sent 0-8 ms, 100 ms delay).
    let mut c = three_sizes(vec![(5_000_000, 96_000_000)]);
    let arrivals: Vec<(Nanos, u32)> = c.pipe.iter().map(|q| (q.at, q.packet.size)).collect();
    assert_eq!(arrivals, vec![(108_000_000, 1000), (108_000_000, 500), (120_000_000, 1500)]);
    c.finish(7_000_000);
    assert_eq!((c.stats.departures, c.stats.backlog, c.stats.bytes_sent), (1, 2, 1000));
}

#[test]
fn finishing_counts_exactly_the_packets_whose_transmission_started() {
    // Mixed sizes, bursts, a delay that rises and falls, half the packets corrupted: the
    // counts after `finish` equal those taken from each packet's own start time.
    for end_ms in [0u64, 3, 40, 95, 161, 250, 400] {
        let end = end_ms * 1_000_000;
        let spec = DirectionSpec {
            bandwidth_bps: 1e6,
            delay: 30_000_000,
            delay_schedule: vec![(50_000_000, 90_000_000), (120_000_000, 2_000_000), (200_000_000, 40_000_000)],
            queue: QueueSpec::DropTail(crate::queue::DropTailSpec { limit: 20 }),
            error_rate: 0.5,
            loss: None,
        };
        let mut c = Channel::new(0, 1, &spec, 7, 0);
        let (mut started, mut bytes, mut errors, mut arrivals) = (0, 0, 0, 0);
        for i in 0..120u64 {
            let now = (i / 6) * 15_000_000; // six at a time, every 15 ms
            if now > end {
                break;
            }
            let size = [40, 1040, 576, 1500][(i % 4) as usize];
            arrivals += 1;
            let start = match c.admit(now, pkt_at(size, now)) {
                Admission::Accepted { queued, .. } => Some((now + queued, false)),
                Admission::Corrupted => Some((now.max(c.busy_until - c.tx_time(size)), true)),
                Admission::Dropped => None,
            };
            if let Some((start, corrupted)) = start {
                if start <= end {
                    started += 1;
                    bytes += size as u64;
                    errors += corrupted as u64;
                }
            }
        }
        c.finish(end);
        let s = &c.stats;
        assert_eq!((s.departures, s.bytes_sent, s.errors), (started, bytes, errors), "end {end_ms} ms");
        assert_eq!(s.arrivals(), arrivals);
        assert_eq!(s.arrivals(), s.departures + s.drops + s.backlog, "end {end_ms} ms");
    }
}

#[test]
fn a_corrupted_packet_that_had_not_started_is_no_error() {
    // Every packet is corrupted; at 12 ms two have been transmitted (and lost).
    let mut c = three_at_once(1.0);
    assert_eq!(c.stats.errors, 3);
    c.finish(12_000_000);
    assert_eq!((c.stats.departures, c.stats.errors, c.stats.backlog), (2, 2, 1));
}

#[test]
fn mean_queue_length_is_time_weighted() {
    let mut c = chan(50);
    c.admit(0, pkt_at(1000, 0)); // transmits 0-8 ms
    c.admit(0, pkt_at(1000, 0)); // waits 0-8 ms
    c.advance(16_000_000);
    let (mean, _) = c.stats.mean_std(16_000_000);
    assert!((mean - 0.5).abs() < 1e-12, "{mean}");
}

#[test]
fn a_loss_pattern_counts_the_transmitted_packets_only_and_loses_the_listed_ones() {
    // limit 3: of five back-to-back packets the queue takes three (transmitted 0, 1, 2) and
    // drops two, which the pattern never sees; the next packet, at 1 s, is transmitted
    // packet 3. The list [1, 3] loses the second packet sent and the one at 1 s.
    let loss = crate::queue::LossPattern::List { packets: vec![1, 3].into() };
    let spec = DirectionSpec { bandwidth_bps: 1e6, delay: 0, delay_schedule: vec![], queue: QueueSpec::DropTail(crate::queue::DropTailSpec { limit: 3 }), error_rate: 0.0, loss: Some(loss) };
    let mut c = Channel::new(0, 1, &spec, 1, 0);
    let mut admissions: Vec<Admission> = (0..5).map(|_| c.admit(0, pkt_at(1000, 0))).collect();
    admissions.push(c.admit(1_000_000_000, pkt_at(1000, 1_000_000_000)));
    let fates: Vec<&str> = admissions
        .into_iter()
        .map(|a| match a {
            Admission::Accepted { .. } => "sent",
            Admission::Dropped => "dropped",
            Admission::Corrupted => "lost",
        })
        .collect();
    assert_eq!(fates, vec!["sent", "lost", "sent", "dropped", "dropped", "lost"]);
    assert!(c.has_error_model());
    assert_eq!((c.stats.arrivals(), c.stats.drops, c.stats.departures, c.stats.errors), (6, 2, 4, 2));
}

#[test]
fn a_pattern_and_an_error_rate_both_apply_and_a_packet_is_lost_once() {
    // every = 2 from 0 loses the even-numbered packets; an error rate just below 1 loses the
    // rest (its draws are made for the odd ones only): every packet is lost, once each.
    let loss = crate::queue::LossPattern::Periodic { every: 2, first: 0, burst: 1 };
    let spec = DirectionSpec { bandwidth_bps: 1e6, delay: 0, delay_schedule: vec![], queue: QueueSpec::DropTail(crate::queue::DropTailSpec { limit: 50 }), error_rate: 0.999_999_999, loss: Some(loss) };
    let mut c = Channel::new(0, 1, &spec, 1, 0);
    for i in 0..10u64 {
        assert_eq!(c.admit(i * 10_000_000, pkt_at(1000, i * 10_000_000)), Admission::Corrupted);
    }
    assert_eq!((c.stats.departures, c.stats.errors), (10, 10));
}
