//! What the run records besides its counters: the flows' series (cwnd, RTT, throughput,
//! the algorithm's variables) sampled every `sample_interval`, the monitored queues' lengths,
//! and the packet trace (`crate::trace`).

use super::Simulator;
use crate::apps::plain_active;
use crate::channel::Admission;
use crate::event::Event;
use crate::packet::Packet;
use vegaslab_cc::{secs, Nanos};

impl Simulator {
    /// The flows' sample event: one row per flow entry (a per-flow entry's connections
    /// summed), then the next sample is booked.
    pub(super) fn on_sample(&mut self) {
        let t = secs(self.now);
        let m = &self.scenario.monitor;
        if m.cwnd || m.throughput {
            let interval = self.scenario.sample_interval;
            let bin = (self.now / interval) as usize;
            for (i, f) in self.flows[..self.entries].iter().enumerate() {
                let s = &mut self.flow_series;
                if self.apps[i].as_ref().is_some_and(|a| a.per_flow) {
                    // Per-flow: cwnd summed over the open connections; ssthresh, RTT and the
                    // algorithm's variables of the newest open one; active while any is open.
                    let open = &self.conns[i].open;
                    let newest = open.last().map(|&c| &self.flows[c as usize].sender);
                    s.active.push((!open.is_empty()) as u8);
                    s.time.push(t);
                    s.flow.push(i as u32);
                    s.cwnd.push(m.cwnd.then(|| open.iter().map(|&c| self.flows[c as usize].sender.cwnd()).sum()));
                    s.ssthresh.push(if m.cwnd { newest.map(|n| n.ssthresh() as f64) } else { None });
                    s.rtt.push(if m.cwnd { newest.and_then(|n| n.state.last_rtt_sample) } else { None });
                    let bytes = bin.checked_sub(1).and_then(|b| f.bins.get(b)).copied();
                    s.throughput_bps.push(if m.throughput { bytes.map(|b| b as f64 * 8.0 / secs(interval)) } else { None });
                    if let (true, Some(n)) = (m.cwnd, newest) {
                        let row = s.time.len() - 1;
                        for (name, value) in n.probe() {
                            let col = s.extra.entry(name.to_string()).or_default();
                            col.resize(row, None);
                            col.push(Some(value).filter(|v| v.is_finite()));
                        }
                    }
                    continue;
                }
                let active = match &self.apps[i] {
                    Some(app) => app.active(&f.sender),
                    None => plain_active(f, self.now),
                };
                s.active.push(active as u8);
                s.time.push(t);
                s.flow.push(i as u32);
                let st = &f.sender.state;
                s.cwnd.push(m.cwnd.then_some(st.cwnd));
                s.ssthresh.push(m.cwnd.then_some(st.ssthresh as f64));
                s.rtt.push(if m.cwnd { st.last_rtt_sample } else { None });
                // The bin that just closed: (t - interval, t].
                let bytes = bin.checked_sub(1).and_then(|b| f.bins.get(b)).copied();
                s.throughput_bps.push(if m.throughput { bytes.map(|b| b as f64 * 8.0 / secs(interval)) } else { None });
                if m.cwnd {
                    let row = s.time.len() - 1;
                    for (name, value) in f.sender.probe() {
                        let col = s.extra.entry(name.to_string()).or_default();
                        col.resize(row, None);
                        col.push(Some(value).filter(|v| v.is_finite()));
                    }
                }
            }
        }
        let next = self.now.saturating_add(self.scenario.sample_interval);
        self.next_flow_sample = Nanos::MAX;
        if next <= self.scenario.duration {
            self.events.schedule(next, self.now, Event::Sample);
            self.next_flow_sample = next;
        }
    }

    /// The monitored queues' samples (each queue takes its own, see `Channel::start_sampling`)
    /// as rows by time, then queue, up to the time the run stopped.
    pub(super) fn collect_queue_samples(&mut self, stop: Nanos) {
        let per_queue: Vec<Vec<u64>> = self.monitored_queues.iter().map(|&c| self.channels[c].finish_sampling(stop)).collect();
        let avgs: Vec<Option<Vec<f64>>> = self.monitored_queues.iter().map(|&c| self.channels[c].finish_avg_sampling(stop)).collect();
        let any_red = avgs.iter().any(Option::is_some);
        let count = per_queue.iter().map(Vec::len).min().unwrap_or(0);
        let interval = self.scenario.sample_interval;
        let s = &mut self.queue_series;
        for k in 0..count {
            let t = secs(interval * (k as Nanos + 1));
            for (j, lengths) in per_queue.iter().enumerate() {
                s.time.push(t);
                s.queue.push(j as u32);
                s.length.push(lengths[k]);
                if any_red {
                    s.avg.push(avgs[j].as_ref().map(|a| a[k]));
                }
            }
        }
    }

    /// Record a hop in the packet trace (`crate::trace`); out of line, so that `arrive` pays
    /// only the test of `tracer`.
    #[cold]
    #[inline(never)]
    pub(super) fn trace_hop(&mut self, c: usize, p: &Packet, t: Nanos, admission: Admission) {
        let (parent, stream) = self.traced_connection(p);
        let Some(tr) = self.tracer.as_deref_mut() else { return };
        let ch = &self.channels[c];
        tr.hop(c, ch.from, ch.to, p, parent, stream, t, &admission, |at| ch.delay_at(at));
    }

    /// A packet's flow entry (its connection's, for TCP) and its connection's byte numbering
    /// for a pcap (`None` for UDP or the ns-2 format).
    pub(super) fn traced_connection(&self, p: &Packet) -> (u32, Option<crate::trace::pcap::Stream>) {
        if p.kind == crate::packet::Kind::Udp {
            return (p.flow, None);
        }
        let Some(f) = self.flows.get(p.flow as usize) else { return (p.flow, None) };
        let pcap = self.scenario.trace.as_ref().is_some_and(|t| t.format == crate::scenario::TraceFormat::Pcap);
        (f.parent, pcap.then(|| f.pcap_stream(p.flow)))
    }

    /// `trace_hop` for an accepted packet, given the admission's parts: built here, it
    /// is only in memory when traced (see `hops` and `Channel::lost_on_link`).
    #[cold]
    #[inline(never)]
    pub(super) fn trace_accepted(&mut self, c: usize, p: &Packet, t: Nanos, (arrives_at, queued): (Nanos, Nanos), (clock, start_clock): (f64, f64)) {
        self.trace_hop(c, p, t, Admission::Accepted { arrives_at, queued, clock, start_clock });
    }

    /// Create the packet trace's file (`[trace] file`, a plain name) in `dir`, the output
    /// directory the caller names, before the run (`trace::Tracer::open`): an existing file
    /// or planted link of that name, or a directory that cannot take it, is an error naming
    /// the path now, not after the run. `Ok(None)` when the scenario has no `[trace]`. A run
    /// whose trace was never opened records it as not written (`RunMeta::trace`).
    pub fn open_trace(&mut self, dir: &std::path::Path) -> Result<Option<std::path::PathBuf>, crate::ScenarioError> {
        let Some(tracer) = self.tracer.as_deref_mut() else { return Ok(None) };
        tracer.open(dir).map(Some).map_err(|e| {
            let path = dir.join(&self.scenario.trace.as_ref().map_or(String::new(), |t| t.file.clone()));
            let why = if e.kind() == std::io::ErrorKind::AlreadyExists {
                "already exists; a trace never replaces a file: remove it or give another output directory".to_string()
            } else {
                format!("cannot create the trace: {e}")
            };
            crate::ScenarioError::new(&self.scenario.source, "trace.file", crate::ErrorKind::File, format!("{}: {why}", path.display()))
        })
    }
}
