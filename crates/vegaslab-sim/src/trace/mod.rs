//! Per-packet traces of chosen links and flows (`[trace]`, docs/scenario-format.md): ns-2's
//! trace lines or a classic libpcap file. Off by default; a run without `[trace]` carries a
//! `None` and pays one branch per packet hop.
//!
//! **Events.** Every packet a traced link direction is offered gives ns-2's events for that
//! hop: `+` (offered to the queue; ns-2's `EnqT` sits before the queue, so a dropped packet
//! has a `+` too), then `d` (dropped by the queue) or `-` (its transmission starts) and `r`
//! (it reaches the far node). A packet the packet-error model or the loss pattern loses gets
//! `+`, `-` and `d` at the time it would have been received. The core has no dequeue or
//! receive event of its own for most hops (a packet's whole hop is decided when it is
//! offered, and express hops skip events: `express`), so all of a hop's records are made
//! when the packet is offered, each with its own time, and the file is written in time order
//! at the end of the run. Records are kept in memory until then: at most `max_lines`
//! (`limits::MAX_TRACE_LINES`), after which recording stops and `meta.trace.truncated` says so;
//! a pcap keeps only the records it captures, so `max_lines` counts its records.
//!
//! **Times** are ns-2's: the event's double-precision clock (`run.clock = "ns2"`, see
//! `scenario::SenderClock`) rounded to the microsecond and printed with `%.15g`, as ns-2's
//! `BaseTrace::round` and `TIME_FORMAT` do; with `run.clock = "exact"` the integer time's
//! double. The transmission start's double is `max(arrival, end of the previous
//! transmission)` with the end summed as `Channel::accept` sums it (the tracer keeps that sum
//! per traced direction, so the channel is untouched).
//!
//! **Fields** as ns-2's `Trace::format` (no `show_tcphdr_`): `ev time from to type size flags
//! fid src.port dst.port seqno uid`. Node numbers are the normalised scenario's node indices
//! and fid the flow's index, as the ns-2 bridge numbers them (`vegaslab.ns2.translate`); a
//! port is the agent's slot at its node in the bridge's attach order (each flow's sender at
//! its source, then its sink at its destination, flows in order). Type `tcp` for data,
//! `ack` for ACKs, `udp` for UDP datagrams (fid = flow count + source index). Flags are
//! ns-2's seven dashes (no ECN here). Differences from ns-2, decided: the `uid` is this
//! trace's own number of the packet's hop (its `+`, `-`, `r` or `d` share it), not ns-2's
//! global packet id: packets here carry no id (a 40-byte value on the hot path), so
//! scripts that match a packet across hops by uid should match by (fid, type, seqno)
//! instead; and lines of one instant are in the order this run made them, which is ns-2's
//! only as far as the event order is (compare sorted within an instant).
//!
//! **pcap** (`pcap`): a capture at a point of the network, each packet once, with both
//! directions of a connection, as `tcpdump` on a host's interface records it. A listed link
//! direction `A->B` is a capture at `A`'s interface to `B`: the packets `A` offers to the link
//! (at their `+`, before its queue, so a packet the queue drops is captured) and the packets
//! reaching `A` over `B->A` (their `r`). Without `links`, each traced flow is captured at its
//! sender: its data as offered to the first link and its ACKs as they reach the sender back
//! (a UDP source's datagrams as offered). Timestamps in microseconds (the event's clock as
//! above). The packets' headers: [`pcap`].

pub mod pcap;

use crate::packet::{Kind, Packet};
use crate::scenario::{Scenario, TraceFormat};
use pcap::Stream;
use serde::Serialize;
use std::io::Write;
use std::path::{Path, PathBuf};
use vegaslab_cc::Nanos;

/// What the run's trace wrote (`RunMeta::trace`).
#[derive(Clone, Debug, Serialize)]
pub struct TraceInfo {
    /// The trace's file name (`trace.file`, a plain name), inside the output directory the
    /// caller gave ([`Tracer::open`]).
    pub file: String,
    pub format: String,
    /// Lines (ns-2) or records (pcap) written.
    pub lines: u64,
    /// Recording stopped at `max_lines`.
    pub truncated: bool,
    /// Why the file was not written, naming the path and the operating system's error; the
    /// run's results stand, and the callers report it as a failure (`vegaslab.run` raises).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Clone, Copy, Debug)]
struct Rec {
    t: Nanos,
    clock: f64,
    ev: u8,
    from: u32,
    to: u32,
    kind: Kind,
    size: u32,
    /// The flow entry (TCP) or `n_flows` + the UDP source's index: ns-2's fid.
    flow: u32,
    /// The packet's connection (`Packet::flow`): the entry's own, or one a per-flow entry opened.
    conn: u32,
    seqno: i64,
    uid: u64,
    probe: bool,
    aqt: u32,
    aqt_echo: u32,
    /// The sink's answer to the SYN (`pcap`): the first ACK of packet 0 on this direction.
    syn_ack: bool,
}

/// Which records a pcap keeps (`[trace] links`, module docs).
#[derive(Clone, Debug)]
enum Capture {
    /// The ns-2 format: every event.
    Everything,
    /// A capture at `A`'s interface to `B` for each listed `(A, B)`.
    Links(Vec<(u32, u32)>),
    /// A capture at each traced flow's sender.
    Senders,
}

/// Per traced channel: its nodes and the transmitter's end on ns-2's double clock.
#[derive(Clone, Copy, Debug)]
struct Shadow {
    busy_clock: f64,
    bandwidth_bps: f64,
}

pub struct Tracer {
    /// Per channel: traced (with its shadow clock) or not.
    channels: Vec<Option<Shadow>>,
    /// Per flow entry: traced. Empty: every flow.
    flows: Vec<bool>,
    udp_traced: bool,
    n_flows: u32,
    /// Per flow: (source node, port, destination node, port) as the ns-2 bridge attaches.
    endpoints: Vec<(u32, u32, u32, u32)>,
    udp_endpoints: Vec<(u32, u32, u32, u32)>,
    exact_clock: bool,
    capture: Capture,
    /// Per flow entry: the RoVegas AQT option's bytes on a probing packet (0: none).
    aqt_bytes: Vec<u32>,
    /// Per connection seen: its byte numbering (pcap).
    streams: Vec<Option<Stream>>,
    /// (channel, connection) pairs whose SYN-ACK has crossed the channel (pcap).
    syn_acks: std::collections::HashSet<(u32, u32)>,
    recs: Vec<Rec>,
    max_lines: u64,
    truncated: bool,
    hops: u64,
    format: TraceFormat,
    /// The plain file name (`trace.file`).
    name: String,
    /// The file, created by [`Tracer::open`] before the run; `None` when no output
    /// directory was given (the trace is then recorded as not written).
    out: Option<(std::fs::File, PathBuf)>,
}

/// ns-2's trace time: `floor(x * 1e6 + 0.5) / 1e6` printed as `%.15g`.
pub fn ns2_time(x: f64) -> String {
    format_g15((x * 1e6 + 0.5).floor() / 1e6)
}

/// C's `%.15g` for a finite double.
pub fn format_g15(v: f64) -> String {
    if v == 0.0 {
        return "0".to_string();
    }
    let e = format!("{v:.14e}");
    let (mant, exp) = e.split_once('e').expect("exponent");
    let x: i32 = exp.parse().expect("exponent digits");
    let strip = |s: String| if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.').to_string() } else { s };
    if !(-4..15).contains(&x) {
        let m = strip(mant.to_string());
        format!("{m}e{}{:02}", if x < 0 { '-' } else { '+' }, x.abs())
    } else {
        strip(format!("{v:.*}", (14 - x) as usize))
    }
}

impl Tracer {
    /// The run's tracer, if the scenario asks for a trace. `channels`: (from, to, bandwidth)
    /// of each channel, in the simulator's order (link i's directions at 2i and 2i + 1).
    pub fn new(sc: &Scenario, channels: &[(u32, u32, f64)]) -> Option<Box<Tracer>> {
        let spec = sc.trace.as_ref()?;
        let pcap = spec.format == TraceFormat::Pcap;
        // A pcap's capture at A toward B also takes what arrives at A over B->A.
        let traced_link = |a: u32, b: u32| {
            let (a, b) = (a as usize, b as usize);
            spec.links.is_empty() || spec.links.contains(&(a, b)) || (pcap && spec.links.contains(&(b, a)))
        };
        let capture = match (pcap, spec.links.is_empty()) {
            (false, _) => Capture::Everything,
            (true, true) => Capture::Senders,
            (true, false) => Capture::Links(spec.links.iter().map(|&(a, b)| (a as u32, b as u32)).collect()),
        };
        let chans = channels
            .iter()
            .map(|&(a, b, bw)| traced_link(a, b).then_some(Shadow { busy_clock: 0.0, bandwidth_bps: bw }))
            .collect();
        let flows = if spec.flows.is_empty() { Vec::new() } else { (0..sc.flows.len()).map(|i| spec.flows.contains(&i)).collect() };
        // Agent slots in the bridge's attach order: per flow, the sender then the sink.
        let mut next_port = vec![0u32; sc.nodes.len()];
        let mut slot = |n: usize| {
            let p = next_port[n];
            next_port[n] += 1;
            p
        };
        let endpoints = sc.flows.iter().map(|f| (f.from as u32, slot(f.from), f.to as u32, slot(f.to))).collect();
        let udp_endpoints = sc.udp.iter().map(|u| (u.from as u32, slot(u.from), u.to as u32, slot(u.to))).collect();
        Some(Box::new(Tracer {
            channels: chans,
            udp_traced: spec.flows.is_empty(),
            flows,
            n_flows: sc.flows.len() as u32,
            endpoints,
            udp_endpoints,
            capture,
            aqt_bytes: sc.flows.iter().map(|f| f.algorithm.router_assist().unwrap_or(0)).collect(),
            streams: Vec::new(),
            syn_acks: std::collections::HashSet::new(),
            exact_clock: sc.clock == crate::scenario::SenderClock::Exact,
            recs: Vec::new(),
            max_lines: spec.max_lines,
            truncated: false,
            hops: 0,
            format: spec.format,
            name: spec.file.clone(),
            out: None,
        }))
    }

    /// Create the trace's file in `dir` before the run, so that a directory that cannot take
    /// it is an error before anything is simulated. The name is the scenario's plain
    /// `trace.file`; the file is created new (`O_CREAT | O_EXCL`, which also refuses a
    /// symbolic link planted at the name, dangling or not), never truncated or written
    /// through a link. Returns its path.
    pub fn open(&mut self, dir: &Path) -> std::io::Result<PathBuf> {
        let path = dir.join(&self.name);
        let file = std::fs::OpenOptions::new().write(true).create_new(true).open(&path)?;
        self.out = Some((file, path.clone()));
        Ok(path)
    }

    fn clock_of(&self, t: Nanos, clock: f64) -> f64 {
        if self.exact_clock {
            t as f64 / 1e9
        } else {
            clock
        }
    }

    fn push(&mut self, r: Rec) {
        if !self.captured(&r) {
            return;
        }
        if (self.recs.len() as u64) < self.max_lines {
            self.recs.push(r);
        } else {
            self.truncated = true;
        }
    }

    /// A packet left the queue of channel `c`, one whose discipline decides at dequeue
    /// (`channel::deferred`): its `+` at its arrival, then `d` when the discipline dropped it,
    /// or `-` and `r` (or `d` at the time it would have arrived, when the link lost it). Such
    /// a channel's shadow transmitter is not used: the dequeue gives its own double.
    #[cold]
    #[inline(never)]
    pub fn dequeued(&mut self, c: usize, from: u32, to: u32, parent: u32, stream: Option<Stream>, d: &crate::channel::Dequeued) {
        use crate::channel::Fate;
        if self.channels[c].is_none() {
            return;
        }
        let p = &d.packet;
        if !self.traced(p, parent) {
            return;
        }
        let t = d.enqueued_at;
        let base = self.record(c, p, (from, to), parent, stream, t);
        self.hops += 1;
        self.push(base);
        let left = Rec { ev: b'-', t: d.left_at, clock: self.clock_of(d.left_at, d.left_clock), ..base };
        match d.fate {
            Fate::Dropped => self.push(Rec { ev: b'd', ..left }),
            Fate::Sent { arrives_at, clock } => {
                self.push(left);
                self.push(Rec { ev: b'r', t: arrives_at, clock: self.clock_of(arrives_at, clock), ..base });
            }
            Fate::Lost { arrives_at, clock } => {
                self.push(left);
                self.push(Rec { ev: b'd', t: arrives_at, clock: self.clock_of(arrives_at, clock), ..base });
            }
        }
    }

    /// Packet `p` (as it arrived: its clock is the arrival's) was offered to channel `c`
    /// (from `from` to `to`) at `t` with this outcome. `parent`: the flow entry of a TCP
    /// packet's connection (a per-flow connection's entry), for the flow filter. `stream`: a
    /// TCP packet's connection's byte numbering (`pcap::Stream`), for a pcap.
    #[cold]
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    pub fn hop(&mut self, c: usize, from: u32, to: u32, p: &Packet, parent: u32, stream: Option<Stream>, t: Nanos, adm: &crate::channel::Admission, delay_at: impl FnOnce(Nanos) -> Nanos) {
        let Some(sh) = self.channels[c] else { return };
        use crate::channel::Admission;
        let base = if self.traced(p, parent) { Some(self.record(c, p, (from, to), parent, stream, t)) } else { None };
        // The shadow transmitter advances for every accepted packet, traced or not.
        let txt = 8.0 * p.size as f64 / sh.bandwidth_bps;
        let start_clock = p.clock.max(sh.busy_clock);
        match *adm {
            Admission::Dropped => {
                if let Some(base) = base {
                    self.hops += 1;
                    self.push(base);
                    self.push(Rec { ev: b'd', ..base });
                }
            }
            Admission::Accepted { arrives_at, queued, clock, .. } => {
                self.channels[c] = Some(Shadow { busy_clock: start_clock + txt, ..sh });
                if let Some(base) = base {
                    self.hops += 1;
                    let start = t + queued;
                    self.push(base);
                    self.push(Rec { ev: b'-', t: start, clock: self.clock_of(start, start_clock), ..base });
                    self.push(Rec { ev: b'r', t: arrives_at, clock: self.clock_of(arrives_at, clock), ..base });
                }
            }
            Admission::Corrupted => {
                self.channels[c] = Some(Shadow { busy_clock: start_clock + txt, ..sh });
                if let Some(base) = base {
                    self.hops += 1;
                    // Queued until the transmitter is free: the integer start from the clock.
                    let start_ns = t.max((start_clock * 1e9).round() as Nanos);
                    let tx = ((p.size as f64 * 8.0 * 1e9) / sh.bandwidth_bps + 0.5) as Nanos;
                    let delay = delay_at(start_ns);
                    let at = start_ns + tx.max(1) + delay;
                    let at_clock = start_clock + (txt + delay as f64 / 1e9);
                    self.push(base);
                    self.push(Rec { ev: b'-', t: start_ns, clock: self.clock_of(start_ns, start_clock), ..base });
                    self.push(Rec { ev: b'd', t: at, clock: self.clock_of(at, at_clock), ..base });
                }
            }
        }
    }

    /// Whether the flow filter lets packet `p` of flow entry `parent` through.
    fn traced(&self, p: &Packet, parent: u32) -> bool {
        match p.kind {
            Kind::Udp => self.udp_traced,
            _ => self.flows.is_empty() || self.flows.get(parent as usize).copied().unwrap_or(false),
        }
    }

    /// The `+` record of a traced hop of `p` over channel `c` (numbered as the next hop), its
    /// connection's numbering kept for the pcap.
    fn record(&mut self, c: usize, p: &Packet, (from, to): (u32, u32), parent: u32, stream: Option<Stream>, t: Nanos) -> Rec {
        let (flow, conn) = if p.kind == Kind::Udp { (self.n_flows + p.flow, self.n_flows + p.flow) } else { (parent, p.flow) };
        let mut syn_ack = false;
        if let (Some(s), TraceFormat::Pcap) = (stream, self.format) {
            if self.streams.len() <= conn as usize {
                self.streams.resize(conn as usize + 1, None);
            }
            self.streams[conn as usize] = Some(s);
            syn_ack = p.kind == Kind::Ack && p.seqno == 0 && self.syn_acks.insert((c as u32, conn));
        }
        let clock = self.clock_of(t, p.clock);
        Rec { t, clock, ev: b'+', from, to, kind: p.kind, size: p.size, flow, conn, seqno: p.seqno, uid: self.hops, probe: p.probe, aqt: p.aqt, aqt_echo: p.aqt_echo, syn_ack }
    }

    /// Whether a pcap keeps record `r` (module docs); the ns-2 format keeps every one.
    fn captured(&self, r: &Rec) -> bool {
        match &self.capture {
            Capture::Everything => true,
            Capture::Links(links) => (r.ev == b'+' && links.contains(&(r.from, r.to))) || (r.ev == b'r' && links.contains(&(r.to, r.from))),
            Capture::Senders => {
                let (s, _, d, _) = self.ends(r);
                match r.kind {
                    Kind::Ack => r.ev == b'r' && r.to == d,
                    _ => r.ev == b'+' && r.from == s,
                }
            }
        }
    }

    fn ends(&self, r: &Rec) -> (u32, u32, u32, u32) {
        let (s, sp, d, dp) = if r.kind == Kind::Udp {
            self.udp_endpoints[(r.flow - self.n_flows) as usize]
        } else {
            self.endpoints[r.flow as usize]
        };
        if r.kind == Kind::Ack {
            (d, dp, s, sp)
        } else {
            (s, sp, d, dp)
        }
    }

    /// One record as ns-2's trace line (no newline).
    fn ns2_line(&self, r: &Rec) -> String {
        let ty = match r.kind {
            Kind::Data => "tcp",
            Kind::Ack => "ack",
            Kind::Udp => "udp",
        };
        let (s, sp, d, dp) = self.ends(r);
        format!("{} {} {} {} {ty} {} ------- {} {s}.{sp} {d}.{dp} {} {}", r.ev as char, ns2_time(r.clock), r.from, r.to, r.size, r.flow, r.seqno, r.uid)
    }

    /// Records in time order (stable: a hop's records, and hops, in the order made).
    fn sorted(&mut self) {
        self.recs.sort_by(|a, b| a.t.cmp(&b.t).then(a.clock.total_cmp(&b.clock)));
    }

    /// Write the trace into the file [`Tracer::open`] created and say what was written. A file
    /// that cannot be written (disk full, I/O error) is removed, and `error` names its path
    /// and the operating system's error; without [`Tracer::open`], `error` says no
    /// directory was given.
    pub fn finish(mut self, end: Nanos) -> TraceInfo {
        let format = match self.format {
            TraceFormat::Ns2 => "ns2",
            TraceFormat::Pcap => "pcap",
        };
        let (lines, truncated, error) = match self.out.take() {
            None => (0, false, Some(format!("{}: not written: no output directory was given for the trace", self.name))),
            Some((file, path)) => match self.write(file, end) {
                Ok(lines) => (lines, self.truncated, None),
                Err(e) => {
                    // Ours (created new by `open`): a partial trace is worse than none.
                    let _ = std::fs::remove_file(&path);
                    (0, false, Some(format!("{}: cannot write the trace: {e}", path.display())))
                }
            },
        };
        TraceInfo { file: self.name.clone(), format: format.to_string(), lines, truncated, error }
    }

    /// The records up to `end`, in time order, into `file`; returns the lines (ns-2) or
    /// records (pcap) written.
    fn write(&mut self, file: std::fs::File, end: Nanos) -> std::io::Result<u64> {
        self.recs.retain(|r| r.t <= end);
        self.sorted();
        let mut w = std::io::BufWriter::new(file);
        match self.format {
            TraceFormat::Ns2 => {
                for r in &self.recs {
                    writeln!(w, "{}", self.ns2_line(r))?;
                }
            }
            TraceFormat::Pcap => self.write_pcap(&mut w)?,
        }
        w.into_inner().map_err(|e| e.into_error())?.sync_all()?;
        Ok(self.recs.len() as u64)
    }

    /// The ns-2 lines in order (tests).
    pub fn lines(mut self) -> Vec<String> {
        self.sorted();
        self.recs.iter().map(|r| self.ns2_line(r)).collect()
    }

    fn write_pcap(&self, w: &mut impl Write) -> std::io::Result<()> {
        pcap::write_header(w)?;
        for r in &self.recs {
            let us = (r.clock * 1e6 + 0.5).floor() as u64;
            pcap::write_record(w, us, &pcap::headers(&self.pcap_packet(r)), r.size)?;
        }
        Ok(())
    }

    /// Record `r` as the packet a capture sees (`pcap`).
    fn pcap_packet(&self, r: &Rec) -> pcap::Packet {
        let (s, sp, d, dp) = self.ends(r);
        // A connection a per-flow entry opened is its own stream: its own sender port.
        let own = |port: u32| if r.conn == r.flow || r.kind == Kind::Udp { 1024 + port as u16 } else { 32768 + (r.conn % 32768) as u16 };
        let (sport, dport) = match r.kind {
            Kind::Ack => (1024 + sp as u16, own(dp)),
            _ => (own(sp), 1024 + dp as u16),
        };
        let option = if r.probe { self.aqt_bytes.get(r.flow as usize).copied().unwrap_or(0) } else { 0 };
        let ip_option = (option, r.aqt, r.aqt_echo);
        let header = 20 + option / 4 * 4;
        // `record` keeps every TCP connection's numbering; the fallback is never taken.
        let stream = || self.streams.get(r.conn as usize).copied().flatten().unwrap_or_else(|| Stream::new(r.conn, r.size, 40, false, None));
        let l4 = match r.kind {
            Kind::Udp => pcap::L4::Udp { payload: r.size.saturating_sub(header + 8) },
            Kind::Data => {
                let st = stream();
                let (seq, ack, flags) = st.data(r.seqno);
                pcap::L4::Tcp { seq, ack, flags, options: st.tcp_options, payload: st.len(r.seqno) }
            }
            Kind::Ack => {
                let st = stream();
                let (seq, ack, flags) = st.ack(r.seqno, r.syn_ack);
                let options = (r.size.saturating_sub(header + 20) / 4 * 4).min(40);
                pcap::L4::Tcp { seq, ack, flags, options, payload: 0 }
            }
        };
        pcap::Packet { src: (s, sport), dst: (d, dport), id: r.uid as u16, ip_option, l4 }
    }
}
