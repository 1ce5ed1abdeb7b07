//! The run's tables (`crate::results`): per flow entry, per queue, per link direction and per
//! UDP source, with the run's meta data and the sampled series. Every statistic is taken at
//! the run's `duration` (see `run`).

use super::Simulator;
use crate::channel::Channel;
use crate::flow::Flow;
use crate::packet::Kind;
use crate::results::{reported_secs, FlowResult, LinkResult, QueueResult, RunMeta, RunResults, Series, UdpResult, WindowLimited};
use crate::scenario::Scenario;

impl Simulator {
    /// The run's results (`wall_time_s`: the run's wall time, for `meta`).
    pub(super) fn results(mut self, wall_time_s: f64) -> RunResults {
        let rows = self.flow_series.time.len();
        for col in self.flow_series.extra.values_mut() {
            col.resize(rows, None);
        }
        let (in_flight, udp_in_flight) = self.in_flight();
        let (flows, window_limited) = self.flow_results(&in_flight);
        let queues = self.queue_results();
        let links = self.link_results();
        let udp = self.udp_results(&udp_in_flight);
        let sc = &self.scenario;
        let dur_s = reported_secs(sc.duration);
        RunResults {
            meta: RunMeta {
                scenario: sc.id.clone(),
                source: sc.source.clone(),
                seed: sc.seed,
                version: crate::VERSION.to_string(),
                duration_s: dur_s,
                wall_time_s,
                events: self.events_processed,
                packet_hops: self.channels.iter().map(|c| c.stats.departures).sum(),
                same_instant_arrivals: self.same_instant_arrivals,
                tie_reorders: self.events.reordered(),
                aborted: self.aborted.clone(),
                window_limited,
                trace: self.trace_info.take(),
                route_ties: std::mem::take(&mut self.route_ties),
            },
            flows,
            queues,
            links,
            udp,
            series: Series { flows: self.flow_series, queues: self.queue_series },
        }
    }

    /// Packets still in the channels (queued or on the wire) at the end: data per flow and
    /// datagrams per UDP source.
    fn in_flight(&self) -> (Vec<u64>, Vec<u64>) {
        let mut in_flight = vec![0u64; self.flows.len()];
        let mut udp_in_flight = vec![0u64; self.udp.len()];
        for p in self.channels.iter().flat_map(Channel::packets) {
            match p.kind {
                Kind::Data => in_flight[p.flow as usize] += 1,
                Kind::Udp => udp_in_flight[p.flow as usize] += 1,
                Kind::Ack => {}
            }
        }
        (in_flight, udp_in_flight)
    }

    /// One row per flow entry (a per-flow entry's connections summed into its row), and the
    /// flows whose window limited them (`RunMeta::window_limited`).
    fn flow_results(&self, in_flight: &[u64]) -> (Vec<FlowResult>, Vec<WindowLimited>) {
        let sc = &self.scenario;
        let duration = sc.duration;
        let dur_s = reported_secs(duration);
        // Per-flow entries: one row aggregating their connections.
        let mut members: Vec<Vec<usize>> = (0..self.entries).map(|i| vec![i]).collect();
        for (i, m) in members.iter_mut().enumerate() {
            if self.apps[i].as_ref().is_some_and(|a| a.per_flow) {
                m.clear();
            }
        }
        for c in self.entries..self.flows.len() {
            members[self.flows[c].parent as usize].push(c);
        }
        let mut window_limited = Vec::new();
        let flows: Vec<FlowResult> = self.flows[..self.entries]
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let per_flow = self.apps[i].as_ref().is_some_and(|a| a.per_flow);
                let group = || members[i].iter().map(|&c| &self.flows[c]);
                let mut st = vegaslab_cc::SenderStats::default();
                for g in group() {
                    let s = g.sender.stats();
                    st.pkts_sent += s.pkts_sent;
                    st.bytes_sent += s.bytes_sent;
                    st.retransmitted_pkts += s.retransmitted_pkts;
                    st.fast_retransmits += s.fast_retransmits;
                    st.timeouts += s.timeouts;
                    st.slow_start_entries += s.slow_start_entries;
                }
                let received_pkts: u64 = group().map(|g| g.received_pkts).sum();
                let received_bytes: u64 = group().map(|g| g.received_bytes).sum();
                let delivered_pkts: u64 = group().map(|g| g.sink.delivered_pkts).sum();
                let dropped_pkts: u64 = group().map(|g| g.dropped_pkts).sum();
                let in_flight_pkts: u64 = members[i].iter().map(|&c| in_flight[c]).sum();
                // cwnd of the open connections (all of them for a plain flow).
                let final_cwnd: f64 = group().filter(|g| !g.finished).map(|g| g.sender.cwnd()).sum();
                let final_ssthresh = members[i].last().map_or(f.sender.ssthresh(), |&c| self.flows[c].sender.ssthresh());
                // Applications with their own clock (apps) hand data over many times: the
                // sender's "all acknowledged" moments are not a completion.
                let done = if self.apps[i].is_some() { None } else { f.sender.completed_at() };
                let completion = done.map(|t| reported_secs(t.saturating_sub(f.start)));
                let end = match done {
                    Some(t) => t,
                    None => f.stop.unwrap_or(duration).min(duration),
                };
                let active = reported_secs(end.saturating_sub(f.start));
                let limited: u64 = group().map(|g| g.window_limited_until(end)).sum();
                if limited > 0 {
                    let share = if active > 0.0 { reported_secs(limited) / active } else { 0.0 };
                    window_limited.push(WindowLimited { flow: f.name.clone(), window: f.tcp.window, limited_s: reported_secs(limited), share });
                }
                let delivered_bytes = delivered_pkts.saturating_mul(f.tcp.packet_size as u64);
                // An entry whose algorithm counts ties reports them, 0 if it never opened a connection.
                let ties = f.sender.controller().threshold_ties().map(|_| group().filter_map(|g| g.sender.controller().threshold_ties()).sum::<vegaslab_cc::controller::TieStats>());
                FlowResult {
                    flow: f.name.clone(),
                    cc: f.cc.to_string(),
                    from: sc.nodes[f.src as usize].clone(),
                    to: sc.nodes[f.dst as usize].clone(),
                    start_s: reported_secs(f.start),
                    end_s: reported_secs(end),
                    connections: per_flow.then_some(self.conns[i].opened),
                    open_connections: per_flow.then_some(self.conns[i].open.len() as u64),
                    late_acks: per_flow.then(|| group().map(|g| g.late_acks).sum()),
                    vegas_decisions: ties.map(|t| t.decisions),
                    vegas_threshold_ties: ties.map(|t| t.exact),
                    vegas_decisive_ties: ties.map(|t| t.decisive),
                    sent_pkts: st.pkts_sent,
                    sent_bytes: st.bytes_sent,
                    retransmitted_pkts: st.retransmitted_pkts,
                    fast_retransmits: st.fast_retransmits,
                    timeouts: st.timeouts,
                    slow_start_entries: st.slow_start_entries,
                    received_pkts,
                    received_bytes,
                    delivered_pkts,
                    delivered_bytes,
                    acked_pkts: group().map(Flow::acked_pkts).sum(),
                    throughput_bps: received_bytes as f64 * 8.0 / dur_s,
                    goodput_bps: delivered_bytes as f64 * 8.0 / dur_s,
                    active_throughput_bps: if active > 0.0 { received_bytes as f64 * 8.0 / active } else { 0.0 },
                    completion_time_s: completion,
                    final_cwnd_pkts: final_cwnd,
                    mean_cwnd_pkts: {
                        // Summed over the connections (a finished one stopped integrating).
                        let mut area = 0.0;
                        for g in group() {
                            area += g.cwnd_area;
                            if !g.finished && end > g.cwnd_since {
                                area += g.sender.cwnd() * (end - g.cwnd_since) as f64;
                            }
                        }
                        let span = end.saturating_sub(f.start);
                        if span > 0 { area / span as f64 } else { final_cwnd }
                    },
                    final_ssthresh_pkts: final_ssthresh,
                    in_flight_pkts,
                    dropped_pkts,
                }
            })
            .collect();
        (flows, window_limited)
    }

    /// One row per channel (link direction): its queue's counters and length statistics.
    fn queue_results(&self) -> Vec<QueueResult> {
        let sc = &self.scenario;
        let duration = sc.duration;
        self
            .channels
            .iter()
            .map(|c| {
                let (mean, std) = c.stats.mean_std(duration);
                QueueResult {
                    queue: channel_name(sc, c),
                    kind: c.queue_spec().kind().to_string(),
                    limit_pkts: c.queue_spec().limit(),
                    arrived_pkts: c.stats.arrivals(),
                    dropped_pkts: c.stats.drops,
                    departed_pkts: c.stats.departures,
                    backlog_pkts: c.stats.backlog,
                    loss_ratio: if c.stats.arrivals() > 0 { c.stats.drops as f64 / c.stats.arrivals() as f64 } else { 0.0 },
                    mean_len_pkts: mean,
                    std_len_pkts: std,
                    max_len_pkts: c.stats.max_len,
                    error_pkts: (c.has_error_model() || c.can_fail).then_some(c.stats.errors),
                    early_dropped_pkts: c.red().map(|r| r.early_drops),
                    forced_dropped_pkts: c.red().map(|r| r.forced_drops),
                }
            })
            .collect()
    }

    /// One row per channel (link direction): bytes sent and utilisation.
    fn link_results(&self) -> Vec<LinkResult> {
        let sc = &self.scenario;
        let duration = sc.duration;
        self
            .channels
            .iter()
            .map(|c| {
                LinkResult {
                    link: channel_name(sc, c),
                    bandwidth_bps: c.bandwidth_bps,
                    sent_bytes: c.stats.bytes_sent,
                    utilisation_ratio: c.stats.busy_ns() as f64 / duration as f64,
                }
            })
            .collect()
    }

    /// One row per UDP source.
    fn udp_results(&self, udp_in_flight: &[u64]) -> Vec<UdpResult> {
        let sc = &self.scenario;
        let duration = sc.duration;
        let dur_s = reported_secs(duration);
        self
            .udp
            .iter()
            .zip(udp_in_flight)
            .map(|(u, &in_flight_pkts)| {
                let end = u.stop.unwrap_or(duration).min(duration);
                let span = reported_secs(end.saturating_sub(u.start));
                let per_span = |bytes: u64| if span > 0.0 { bytes as f64 * 8.0 / span } else { 0.0 };
                UdpResult {
                    source: u.name.clone(),
                    model: u.model.to_string(),
                    from: sc.nodes[u.src as usize].clone(),
                    to: sc.nodes[u.dst as usize].clone(),
                    start_s: reported_secs(u.start),
                    end_s: reported_secs(end),
                    sent_pkts: u.stats.sent_pkts,
                    sent_bytes: u.stats.sent_bytes,
                    received_pkts: u.stats.received_pkts,
                    received_bytes: u.stats.received_bytes,
                    dropped_pkts: u.stats.dropped_pkts,
                    dropped_bytes: u.stats.dropped_bytes,
                    in_flight_pkts,
                    throughput_bps: u.stats.received_bytes as f64 * 8.0 / dur_s,
                    active_throughput_bps: per_span(u.stats.received_bytes),
                    offered_bps: per_span(u.stats.sent_bytes),
                    nominal_rate_bps: u.nominal_rate_bps,
                }
            })
            .collect()
    }
}

/// A channel's name in the tables: `from->to` by node names.
pub(super) fn channel_name(sc: &Scenario, c: &Channel) -> String {
    format!("{}->{}", sc.nodes[c.from as usize], sc.nodes[c.to as usize])
}
