//! TCP applications with their own clocks: ON/OFF users, NPS flows and Pareto-paced flows.
//!
//! FTP and file transfers hand their data over once at the flow's start (`Flow::app_packets`);
//! the applications here schedule themselves with `Event::App(2 x flow + process)` (process 0:
//! ON/OFF switches or flow arrivals; process 1: the pacing clock of `pareto-paced`) and tell
//! the simulator what to hand to the sender ([`Hand`]).
//!
//! - **onoff** (the AdaVegas paper: Maor and Mansour, "AdaVegas: Adaptive Control for TCP
//!   Vegas", section IV: "Each user alternates between ON periods, in which it
//!   tries to send packets greedily, and OFF periods, in which it is not active", both Pareto
//!   with shape 1.5): at ON the sender gets infinite data (`app_send(None)`), at OFF the data
//!   is cut to what was already sent (`app_stop()`); outstanding packets are still delivered
//!   and retransmitted.
//!   *Window across OFF periods*: what ns-2's one-way `Agent/TCP` does with its defaults, which
//!   the sender already implements. Its retransmission timer stays armed when everything is
//!   acknowledged (`newtimer()` re-arms it while `t_seqno_ > ack`, always true once data was
//!   sent), so an idle sender sees the timer fire one RTO into the OFF period; with
//!   `slow_start_restart_ true` (the default) and nothing outstanding, Reno/NewReno set cwnd to
//!   1 and keep ssthresh (`restart_bugfix_`), and the Vegas agent, which has no idle exception,
//!   sets cwnd to 2 and halves ssthresh (to 2 after the backed-off repeats). These firings are
//!   not counted as `timeouts`. So the window persists across an OFF period shorter than the
//!   RTO, and an ON period after a longer one starts again from a small window (in Vegas'
//!   case in congestion avoidance at cwnd 2). `onoff` changes none of this.
//! - **nps** (the grids paper: Weigle and Feng, "A Case for TCP Vegas in High-Performance
//!   Computational Grids", section 3, Tables 2-3: "all packets for a given flow ... are
//!   presented to TCP at the same time"): flows arrive as a Poisson process (exponential gaps
//!   of mean `mean_interarrival`); the first arrives one inter-flow time after the start ("the
//!   start of Pareto and NPS flows is delayed by the inter-flow time on average"); each has a
//!   Pareto length (mean `mean_flow_size`, shape `flow_shape`), rounded up to whole packets
//!   and handed over at once (`app_send(Some(n))`). With `connection = "shared"` (the default)
//!   successive flows share the entry's connection; with `"per-flow"` each arrival opens its own
//!   connection (`take_arrival`; the simulator's `open_connection`) which gets that flow's data.
//! - **pareto-paced** (the grids "Pareto" model: "a Pareto on/off distribution for packet
//!   spacing"): arrivals and lengths as NPS, but the pending data is released one packet at a
//!   time at `rate` during ON bursts and not during OFF, with ns-2's
//!   `Application/Traffic/Pareto` clock: bursts of N packets (Pareto, mean `mean_on / interval`,
//!   rounded, at least 1) spaced by `interval = packet_size x 8 / rate`, then one interval plus
//!   a Pareto OFF time. The clock pauses when no data is pending and resumes at the next
//!   arrival, no earlier than the release it was waiting for.
//!
//! A flow is *active* (the sampled `active` column) while an ON/OFF user is ON, and while an
//! NPS or paced application has data not yet acknowledged (pending or in the sender); FTP flows
//! are active from start to stop, file transfers until their last byte is acknowledged.
//!
//! Random streams: flow `f`'s application draws from `rng::stream(seed, 4 << 32 | f)` (see
//! `sim/build.rs`).

use crate::flow::Flow;
use crate::scenario::AppSpec;
use crate::udp::{exponential, pareto_mean, pareto_scaled};
use rand_chacha::ChaCha8Rng;
use vegaslab_cc::{Nanos, Sender};

/// What the application hands to its sender now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hand {
    Nothing,
    /// Infinite data (`app_send(None)`).
    Greedy,
    /// This many more packets (`app_send(Some(n))`).
    Packets(i64),
    /// No more data beyond what was sent (`app_stop()`).
    Stop,
}

/// Process ids carried by `Event::App(2 x flow + process)`.
pub const PROCESS_MAIN: u32 = 0;
pub const PROCESS_PACING: u32 = 1;

#[derive(Clone, Debug)]
enum Kind {
    OnOff { mean_on: f64, mean_off: f64, shape: f64, first_on: bool },
    Nps,
    Paced {
        /// Nanoseconds between packets of a burst.
        interval: f64,
        /// Pareto scales of the burst length (packets) and OFF time (nanoseconds).
        burst_scale: f64,
        off_scale: f64,
        shape: f64,
        /// Packets left in the current burst.
        rem: u64,
        /// A pacing event is scheduled.
        pacing: bool,
        /// Earliest time the next packet may be released.
        next_release: Nanos,
    },
}

pub struct App {
    kind: Kind,
    rng: ChaCha8Rng,
    /// Flow arrivals (NPS, paced): mean gap (s), mean size (bytes), shape, packet payload.
    mean_interarrival: f64,
    mean_size: f64,
    size_shape: f64,
    packet_size: u32,
    /// Packets arrived but not yet handed to the sender (paced).
    backlog: i64,
    on: bool,
    stopped: bool,
    /// Flows that arrived (NPS, paced) or ON periods begun (onoff).
    pub arrivals: u64,
    /// Length (packets) of a flow that arrived during the last call, not yet taken
    /// (`take_arrival`; the simulator opens a connection for it when `per_flow`).
    arrived: Option<i64>,
    /// `connection = "per-flow"` (NPS, paced).
    pub per_flow: bool,
}

/// Seconds -> nanoseconds for a random duration (at least 1 ns; saturating).
#[inline]
fn ns(s: f64) -> Nanos {
    // `max(1)` after the cast: a NaN would cast to 0.
    ((s * 1e9).round().clamp(1.0, 4e18) as Nanos).max(1)
}

impl App {
    /// The runtime for a flow's application; `None` for FTP and file transfers.
    pub fn new(spec: &AppSpec, packet_size: u32, rng: ChaCha8Rng) -> Option<App> {
        let mut app = App {
            kind: Kind::Nps,
            rng,
            mean_interarrival: 0.0,
            mean_size: 0.0,
            size_shape: 0.0,
            packet_size,
            backlog: 0,
            on: false,
            stopped: false,
            arrivals: 0,
            arrived: None,
            per_flow: false,
        };
        match spec {
            AppSpec::Ftp | AppSpec::File { .. } | AppSpec::FilePackets { .. } => return None,
            AppSpec::OnOff(p) => {
                app.kind = Kind::OnOff { mean_on: p.mean_on, mean_off: p.mean_off, shape: p.shape, first_on: p.first_on };
            }
            AppSpec::Nps(a) => {
                app.mean_interarrival = a.mean_interarrival;
                app.mean_size = a.mean_size;
                app.size_shape = a.size_shape;
                app.per_flow = a.per_flow;
            }
            AppSpec::ParetoPaced(p) => {
                app.mean_interarrival = p.arrivals.mean_interarrival;
                app.mean_size = p.arrivals.mean_size;
                app.size_shape = p.arrivals.size_shape;
                app.per_flow = p.arrivals.per_flow;
                let interval = packet_size as f64 * 8.0 / p.rate_bps;
                let k = (p.shape - 1.0) / p.shape;
                app.kind = Kind::Paced {
                    interval: interval * 1e9,
                    burst_scale: p.mean_on / interval * k,
                    off_scale: p.mean_off * 1e9 * k,
                    shape: p.shape,
                    rem: 0,
                    pacing: false,
                    next_release: 0,
                };
            }
        }
        Some(app)
    }

    /// The flow starts at `now`. `schedule(t, process)` books an `Event::App`.
    pub fn start(&mut self, now: Nanos, schedule: &mut impl FnMut(Nanos, u32)) -> Hand {
        match self.kind {
            Kind::OnOff { mean_on, mean_off, shape, first_on } => {
                self.on = first_on;
                if first_on {
                    self.arrivals += 1;
                    schedule(now.saturating_add(ns(pareto_mean(&mut self.rng, mean_on, shape))), PROCESS_MAIN);
                    Hand::Greedy
                } else {
                    schedule(now.saturating_add(ns(pareto_mean(&mut self.rng, mean_off, shape))), PROCESS_MAIN);
                    Hand::Nothing
                }
            }
            Kind::Nps | Kind::Paced { .. } => {
                schedule(now.saturating_add(ns(exponential(&mut self.rng, self.mean_interarrival))), PROCESS_MAIN);
                Hand::Nothing
            }
        }
    }

    /// The flow stops: nothing more is handed over (the simulator calls `app_stop`).
    pub fn stop(&mut self) {
        self.stopped = true;
        self.on = false;
        self.backlog = 0;
    }

    /// One of this application's events is due.
    pub fn on_event(&mut self, now: Nanos, process: u32, schedule: &mut impl FnMut(Nanos, u32)) -> Hand {
        if self.stopped {
            return Hand::Nothing;
        }
        if process == PROCESS_PACING {
            if let Kind::Paced { pacing, .. } = &mut self.kind {
                *pacing = false;
            }
            return self.release(now, schedule);
        }
        match self.kind {
            Kind::OnOff { mean_on, mean_off, shape, .. } => {
                if self.on {
                    self.on = false;
                    schedule(now.saturating_add(ns(pareto_mean(&mut self.rng, mean_off, shape))), PROCESS_MAIN);
                    Hand::Stop
                } else {
                    self.on = true;
                    self.arrivals += 1;
                    schedule(now.saturating_add(ns(pareto_mean(&mut self.rng, mean_on, shape))), PROCESS_MAIN);
                    Hand::Greedy
                }
            }
            Kind::Nps => {
                let n = self.arrive(now, schedule);
                Hand::Packets(n)
            }
            Kind::Paced { .. } => {
                let n = self.arrive(now, schedule);
                self.backlog = self.backlog.saturating_add(n);
                let Kind::Paced { pacing, next_release, .. } = &mut self.kind else { unreachable!() };
                if *pacing {
                    Hand::Nothing
                } else if *next_release <= now {
                    self.release(now, schedule)
                } else {
                    *pacing = true;
                    schedule(*next_release, PROCESS_PACING);
                    Hand::Nothing
                }
            }
        }
    }

    /// A flow arrives: draw its length in packets and book the next arrival.
    fn arrive(&mut self, now: Nanos, schedule: &mut impl FnMut(Nanos, u32)) -> i64 {
        self.arrivals += 1;
        let bytes = pareto_mean(&mut self.rng, self.mean_size, self.size_shape);
        let packets = (bytes / self.packet_size as f64).ceil().clamp(1.0, 1e15) as i64;
        schedule(now.saturating_add(ns(exponential(&mut self.rng, self.mean_interarrival))), PROCESS_MAIN);
        self.arrived = Some(packets);
        packets
    }

    /// The length (packets) of a flow that arrived in the last `on_event`, once.
    pub fn take_arrival(&mut self) -> Option<i64> {
        self.arrived.take()
    }

    /// Paced: release one pending packet now and book the next release.
    fn release(&mut self, now: Nanos, schedule: &mut impl FnMut(Nanos, u32)) -> Hand {
        let Kind::Paced { interval, burst_scale, off_scale, shape, rem, pacing, next_release } = &mut self.kind else {
            return Hand::Nothing;
        };
        if self.backlog == 0 {
            return Hand::Nothing;
        }
        if *rem == 0 {
            // A new ON burst (ns-2 POO_Traffic::next_interval draws its length in packets).
            *rem = ((pareto_scaled(&mut self.rng, *burst_scale, *shape) + 0.5).min(1e18) as u64).max(1);
        }
        self.backlog -= 1;
        *rem -= 1;
        let mut gap = *interval;
        if *rem == 0 {
            gap += pareto_scaled(&mut self.rng, *off_scale, *shape);
        }
        *next_release = now.saturating_add(gap.round().max(1.0).min(4e18) as Nanos);
        if self.backlog > 0 {
            *pacing = true;
            schedule(*next_release, PROCESS_PACING);
        }
        Hand::Packets(1)
    }

    /// The sampled `active` flag (see the module documentation).
    pub fn active(&self, sender: &Sender) -> bool {
        if self.stopped {
            return false;
        }
        match self.kind {
            Kind::OnOff { .. } => self.on,
            Kind::Nps | Kind::Paced { .. } => self.backlog > 0 || sender.state.highest_ack < sender.state.curseq - 1,
        }
    }

    /// Packets waiting in the application (paced).
    pub fn backlog(&self) -> i64 {
        self.backlog
    }
}

/// `active` for flows without an [`App`]: FTP from start until stop, a file transfer until
/// its last byte is acknowledged (or stop).
pub fn plain_active(flow: &Flow, now: Nanos) -> bool {
    now >= flow.start && flow.stop.is_none_or(|s| now < s) && flow.sender.completed_at().is_none_or(|t| now < t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::stream;
    use crate::scenario::{FlowArrivals, OnOffSpec, PacedSpec};

    #[test]
    fn onoff_user_alternates_greedy_and_stop() {
        let spec = AppSpec::OnOff(OnOffSpec { mean_on: 1.0, mean_off: 2.0, shape: 1.5, first_on: true });
        let mut app = App::new(&spec, 1000, stream(1, 4 << 32)).unwrap();
        let mut booked = Vec::new();
        assert_eq!(app.start(0, &mut |t, p| booked.push((t, p))), Hand::Greedy);
        assert!(app.on);
        let (t1, p) = booked[0];
        assert_eq!(p, PROCESS_MAIN);
        // Pareto ON of mean 1 s, shape 1.5: at least the scale, 1/3 s.
        assert!(t1 >= 333_333_333, "{t1}");
        assert_eq!(app.on_event(t1, p, &mut |t, p| booked.push((t, p))), Hand::Stop);
        assert!(!app.on);
        assert!(booked[1].0 >= t1 + 666_666_666);
        assert_eq!(app.on_event(booked[1].0, PROCESS_MAIN, &mut |t, p| booked.push((t, p))), Hand::Greedy);
        app.stop();
        assert_eq!(app.on_event(booked[2].0, PROCESS_MAIN, &mut |_, _| panic!("no booking after stop")), Hand::Nothing);
    }

    #[test]
    fn onoff_periods_have_the_requested_means() {
        let spec = AppSpec::OnOff(OnOffSpec { mean_on: 50.0, mean_off: 60.0, shape: 1.5, first_on: true });
        let mut app = App::new(&spec, 1000, stream(3, 4 << 32)).unwrap();
        let mut next = Vec::new();
        app.start(0, &mut |t, _| next.push(t));
        let (mut on_total, mut off_total, mut now) = (0u128, 0u128, 0u64);
        for _ in 0..200_000 {
            let t = next.pop().unwrap();
            if app.on { on_total += (t - now) as u128 } else { off_total += (t - now) as u128 }
            now = t;
            app.on_event(now, PROCESS_MAIN, &mut |t, _| next.push(t));
        }
        let (on_mean, off_mean) = (on_total as f64 / 1e14, off_total as f64 / 1e14);
        // Shape 1.5 has infinite variance: allow a wide band.
        assert!((on_mean / 50.0 - 1.0).abs() < 0.15, "{on_mean}");
        assert!((off_mean / 60.0 - 1.0).abs() < 0.15, "{off_mean}");
    }

    #[test]
    fn nps_first_flow_arrives_one_interflow_time_after_start_with_whole_packets() {
        let spec = AppSpec::Nps(FlowArrivals { mean_interarrival: 0.5, mean_size: 10e6, size_shape: 1.5, per_flow: false });
        let mut app = App::new(&spec, 1500, stream(4, 4 << 32)).unwrap();
        let mut next = Vec::new();
        assert_eq!(app.start(1_000_000_000, &mut |t, _| next.push(t)), Hand::Nothing);
        let t = next.pop().unwrap();
        assert!(t > 1_000_000_000);
        let Hand::Packets(n) = app.on_event(t, PROCESS_MAIN, &mut |t, _| next.push(t)) else { panic!() };
        // Pareto of mean 10 MB, shape 1.5: at least 10/3 MB = 2223 packets of 1500 bytes.
        assert!(n >= 2223, "{n}");
        assert_eq!(next.len(), 1);
    }

    #[test]
    fn paced_releases_one_packet_per_interval_within_a_burst() {
        let spec = AppSpec::ParetoPaced(PacedSpec {
            arrivals: FlowArrivals { mean_interarrival: 0.5, mean_size: 10e6, size_shape: 1.5, per_flow: false },
            rate_bps: 12e6, // 1500-byte packets every 1 ms
            mean_on: 0.030,
            mean_off: 0.070,
            shape: 1.5,
        });
        let mut app = App::new(&spec, 1500, stream(5, 4 << 32)).unwrap();
        let mut booked: Vec<(Nanos, u32)> = Vec::new();
        app.start(0, &mut |t, p| booked.push((t, p)));
        let (t0, _) = booked.pop().unwrap();
        // The arrival releases the first packet at once and books the next release.
        assert_eq!(app.on_event(t0, PROCESS_MAIN, &mut |t, p| booked.push((t, p))), Hand::Packets(1));
        let pacing: Vec<_> = booked.iter().filter(|b| b.1 == PROCESS_PACING).copied().collect();
        assert_eq!(pacing.len(), 1);
        let gap = pacing[0].0 - t0;
        assert!(gap == 1_000_000 || gap > 1_000_000 + 70_000_000 / 3 - 1, "{gap}");
        assert!(app.backlog() > 2000);
    }
}
