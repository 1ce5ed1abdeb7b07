//! A TCP flow: the sender (from `vegaslab-cc`), ns-2's `TCPSink` at the far end, the
//! application feeding the sender, and the flow's counters.

use crate::rng::{stream, STREAM_FLOW_BASE};
use crate::linux_receiver::LinuxReceiver;
use crate::scenario::{AppSpec, FlowSpec};
use rand::Rng;
use std::collections::VecDeque;
use vegaslab_cc::params::SenderKind;
use vegaslab_cc::{AlgorithmSpec, Nanos, Sender, TcpConfig};

/// The tick-clock phase (ns-2 `boot_time_`) of TCP connection `index`: a flow entry's index,
/// or a per-flow connection's index in the simulator's list of connections. The scenario's
/// `tcp.tick_phase` when set (decided: one set phase applies to every connection of the
/// flow, as one ns-2 agent reused would keep it), else [`seeded_tick_phase`].
pub fn tick_phase(tcp: &TcpConfig, seed: u64, index: usize) -> f64 {
    tcp.tick_phase.unwrap_or_else(|| seeded_tick_phase(seed, index, tcp.tick))
}

/// The phase a seeded connection draws: uniform in [0, tick) from the run seed's own stream
/// for connection `index`, as ns-2 draws `boot_time_` at each agent's reset. Public so that
/// the ns-2 bridge can hand ns-2 exactly the phase a seeded run uses.
pub fn seeded_tick_phase(seed: u64, index: usize, tick: f64) -> f64 {
    stream(seed, STREAM_FLOW_BASE + index as u64).gen::<f64>() * tick
}

/// ns-2 `Agent/TCPSink`: one cumulative ACK per data packet, no delay; the ACK carries the
/// highest sequence number received in order.
#[derive(Clone, Debug, Default)]
pub struct Sink {
    /// Next sequence number expected in order.
    next: i64,
    /// Arrivals at or beyond `next`: slot k is sequence number next + k.
    received: VecDeque<bool>,
    /// Sequence number that is a SYN (carries no data), if any.
    syn_seq: Option<i64>,
    /// Unique data packets delivered in order.
    pub delivered_pkts: u64,
}

impl Sink {
    pub fn new(syn_seq: Option<i64>) -> Self {
        Sink { syn_seq, ..Default::default() }
    }

    /// The next sequence number expected in order (`rcv_nxt`).
    pub fn next(&self) -> i64 {
        self.next
    }

    /// Whether data beyond the in-order point is held (out of order).
    pub fn holds_out_of_order(&self) -> bool {
        !self.received.is_empty()
    }

    /// Whether `seq` is the connection's SYN.
    pub fn is_syn(&self, seq: i64) -> bool {
        self.syn_seq == Some(seq)
    }

    /// Free the reordering buffer (a finished per-flow connection).
    pub fn release_buffers(&mut self) {
        self.received = VecDeque::new();
    }

    /// Receive `seq`; returns the cumulative ACK to send. Always inlined: it is most of every
    /// data packet's arrival (`Simulator::at_sink`).
    #[inline(always)]
    pub fn receive(&mut self, seq: i64) -> i64 {
        if seq == self.next && self.received.is_empty() {
            // In order with nothing held: the general case's result without touching the
            // reordering buffer (with many flows, a cache miss).
            if Some(seq) != self.syn_seq {
                self.delivered_pkts += 1;
            }
            self.next += 1;
        } else if seq >= self.next {
            let k = (seq - self.next) as usize;
            if self.received.len() <= k {
                self.received.resize(k + 1, false);
            }
            self.received[k] = true;
            while self.received.front() == Some(&true) {
                self.received.pop_front();
                if Some(self.next) != self.syn_seq {
                    self.delivered_pkts += 1;
                }
                self.next += 1;
            }
        }
        self.next - 1
    }
}

/// Laid out in C order by use, from a 64-byte boundary: with thousands of flows a flow is
/// rarely in cache when its packet or ACK arrives, and each line touched is a miss
/// (docs/decisions.md, "Hot structs are laid out by use in cache lines"). Line 0 holds what
/// a data packet at the sink reads and counts and what an ACK at the sender checks first;
/// line 1 the sink; line 2 the rest of what an ACK, a timer or a finished connection
/// touches; then the sender (its own lines), and everything read only at set-up, at the end
/// or on rare paths after it. So `Sink::receive` takes an in-order packet without touching
/// its reordering buffer, and `integrate_cwnd` reads the application only once the sender
/// has completed.
#[repr(C, align(64))]
pub struct Flow {
    // Line 0.
    pub src: u32,
    pub dst: u32,
    /// The flow entry this is a connection of (its own index for a flow entry).
    pub parent: u32,
    /// `tcp.ack_size`, read here by every data packet reaching the sink.
    pub(crate) ack_size: u32,
    pub received_pkts: u64,
    pub received_bytes: u64,
    /// Received bytes per sample interval, when throughput is monitored.
    pub bins: Vec<u64>,
    /// A per-flow connection (`connection = "per-flow"`), opened at run time.
    pub child: bool,
    /// A per-flow connection whose data is all acknowledged: its sender's buffers are freed,
    /// later ACKs are counted (`late_acks`) and ignored, its timer is ignored.
    pub finished: bool,
    /// The connection runs Linux's stack: its receiver is [`Flow::linux`].
    pub(crate) on_linux: bool,
    // Line 1.
    pub sink: Sink,
    // Line 2.
    /// Earliest scheduled timer event for this flow, if any.
    pub timer_pending: Option<Nanos>,
    /// Integral of cwnd over time (packet-nanoseconds) and when it was last brought up to date.
    pub cwnd_area: f64,
    pub cwnd_since: Nanos,
    /// `tcp.window`, read here by every `integrate_cwnd` (the `tcp` table is on a cold line).
    pub(crate) window: f64,
    /// Size of the AQT option, for a RoVegas flow (its ACKs to probing packets carry it too).
    pub aqt_option_bytes: Option<u32>,
    /// What `Simulator::sender_may_run_ahead` reads of the start and stop, on this line: a
    /// packet's arrival `at` may run ahead of the clock only if `at < run_ahead_start` (`start`
    /// until the flow's start event has run, `Nanos::MAX` after: `started || at < start`) and
    /// `at < run_ahead_stop` (`stop`, or `Nanos::MAX` without one). No arrival it is asked
    /// about is at `Nanos::MAX` (an express hop's arrival is before the run's end).
    ///
    /// Here because `start`, `started` and `stop` are on a cold line, a cache miss at each
    /// ACK that reaches a host ahead of the clock.
    pub(crate) run_ahead_start: Nanos,
    pub(crate) run_ahead_stop: Nanos,
    // From line 3 on.
    pub sender: Sender,
    pub name: String,
    pub cc: &'static str,
    pub start: Nanos,
    pub stop: Option<Nanos>,
    pub app: AppSpec,
    pub tcp: TcpConfig,
    pub dropped_pkts: u64,
    /// The algorithm, for the connections this flow entry opens.
    pub algorithm: AlgorithmSpec,
    /// Packets of this connection's flow the application has not handed over yet (paced).
    pub pending: i64,
    pub late_acks: u64,
    /// Its start event has run (`Simulator::on_flow_start`).
    pub started: bool,
    /// Time (ns) up to `cwnd_since` during which cwnd was at least the receiver window
    /// `tcp.window` (ns-2 `window_`), so the window, not congestion control, capped the
    /// flow: see [`Flow::integrate_cwnd`].
    pub window_limited_ns: u64,
    /// Linux's receiver (`tcp.stack = "linux"`): when to acknowledge and what to report.
    pub linux: Option<Box<LinuxReceiver>>,
}

// The lines `Flow` documents.
const _: () = {
    use std::mem::offset_of;
    assert!(offset_of!(Flow, finished) < 64);
    assert!(offset_of!(Flow, sink) == 64 && std::mem::size_of::<Sink>() == 64);
    assert!(offset_of!(Flow, aqt_option_bytes) + 8 <= 192);
    assert!(offset_of!(Flow, run_ahead_start) >= 128 && offset_of!(Flow, run_ahead_stop) + 8 <= 192);
    // The sender from line 3, so its state's lines are cache lines (`vegaslab_cc::SenderState`).
    assert!(offset_of!(Flow, sender) == 192);
};

impl Flow {
    /// Linux's receiver beside the sink, on Linux's stack.
    fn with_linux_receiver(mut self) -> Self {
        if let Some(opts) = self.tcp.linux {
            self.on_linux = true;
            self.linux = Some(Box::new(LinuxReceiver::new(opts)));
        }
        self
    }

    /// A flow entry's connection. `rtt_monitored`: a monitor reads its RTT samples (the
    /// `cwnd` series; `Sender::set_rtt_samples_read`).
    pub fn new(spec: &FlowSpec, boot_time: f64, rtt_monitored: bool) -> Self {
        let tcp = TcpConfig { boot_time, ..spec.tcp.clone() };
        let mut sender = Sender::new(tcp.clone(), spec.algorithm.clone());
        sender.set_rtt_samples_read(rtt_monitored);
        let uses_syn = tcp.syn && sender.kind() != SenderKind::VegasAgent;
        Flow {
            name: spec.name.clone(),
            cc: spec.algorithm.name(),
            src: spec.from as u32,
            dst: spec.to as u32,
            sender,
            sink: Sink::new(uses_syn.then_some(0)),
            start: spec.start,
            stop: spec.stop,
            run_ahead_start: spec.start,
            run_ahead_stop: spec.stop.unwrap_or(Nanos::MAX),
            app: spec.app.clone(),
            ack_size: tcp.ack_size,
            window: tcp.window,
            tcp,
            timer_pending: None,
            received_pkts: 0,
            received_bytes: 0,
            dropped_pkts: 0,
            cwnd_area: 0.0,
            cwnd_since: spec.start,
            window_limited_ns: 0,
            bins: Vec::new(),
            aqt_option_bytes: spec.algorithm.router_assist(),
            algorithm: spec.algorithm.clone(),
            parent: 0,
            child: false,
            finished: false,
            pending: 0,
            late_acks: 0,
            started: false,
            on_linux: false,
            linux: None,
        }
        .with_linux_receiver()
    }

    /// This connection's byte numbering in a pcap trace (`trace::pcap`), `conn` its index. Its
    /// last packet is known for a transfer of a fixed size (a file, or a per-flow entry's
    /// flow) once the application has handed it all over.
    pub fn pcap_stream(&self, conn: u32) -> crate::trace::pcap::Stream {
        let (wire, header) = self.sender.data_wire_bytes();
        let st = &self.sender.state;
        let sized = self.child || matches!(self.app, AppSpec::File { .. } | AppSpec::FilePackets { .. });
        let known_end = sized && self.stop.is_none() && self.pending == 0 && st.curseq < vegaslab_cc::state::MAX_SEQ;
        crate::trace::pcap::Stream::new(conn, wire, header, self.sink.is_syn(0), known_end.then(|| st.curseq - 1))
    }

    /// A new connection of this flow entry (index `parent`), opened at `now`: a fresh sender
    /// (same algorithm and TCP settings) and a fresh sink.
    pub fn connection(&self, parent: u32, now: Nanos, boot_time: f64) -> Flow {
        let tcp = TcpConfig { boot_time, ..self.tcp.clone() };
        let mut sender = Sender::new(tcp.clone(), self.algorithm.clone());
        sender.set_rtt_samples_read(self.sender.rtt_samples_read());
        Flow {
            name: self.name.clone(),
            cc: self.cc,
            src: self.src,
            dst: self.dst,
            sender,
            sink: Sink::new(self.sink.syn_seq),
            start: now,
            stop: self.stop,
            run_ahead_start: now,
            run_ahead_stop: self.stop.unwrap_or(Nanos::MAX),
            app: self.app.clone(),
            ack_size: tcp.ack_size,
            window: tcp.window,
            tcp,
            timer_pending: None,
            received_pkts: 0,
            received_bytes: 0,
            dropped_pkts: 0,
            cwnd_area: 0.0,
            cwnd_since: now,
            window_limited_ns: 0,
            bins: Vec::new(),
            aqt_option_bytes: self.aqt_option_bytes,
            algorithm: self.algorithm.clone(),
            parent,
            child: true,
            finished: false,
            pending: 0,
            late_acks: 0,
            started: false,
            on_linux: false,
            linux: None,
        }
        .with_linux_receiver()
    }

    /// Bring the cwnd integral, and the time spent window-limited, up to `now` (call before
    /// the sender acts).
    ///
    /// Window-limited time is measured here, where cwnd can change (each ACK and each timeout
    /// reaches the sender through this call): exact, one comparison per ACK, no event or
    /// per-packet work of its own. Since the last call cwnd held its value, so the interval
    /// counts whole when that value was at least `tcp.window`:
    /// the sender then sends at most `window` packets per round trip (ns-2's `min(cwnd_,
    /// window_)`), whatever the algorithm asks. `>=` rather than `>`: at `cwnd = window` the
    /// window is what stops a further increase from sending more.
    #[inline]
    pub fn integrate_cwnd(&mut self, now: Nanos) {
        // A finished file transfer's timer keeps firing (as in ns-2); its cwnd no longer
        // counts. Other applications (on/off, NPS) may "finish" and resume many times.
        // The sender's completion first: the application (a cold line) is read only then.
        let done = self.sender.completed_at().filter(|_| matches!(self.app, AppSpec::File { .. } | AppSpec::FilePackets { .. }));
        let upto = done.map_or(now, |done| now.min(done));
        if upto > self.cwnd_since {
            let cwnd = self.sender.cwnd();
            self.cwnd_area += cwnd * ns_as_f64(upto - self.cwnd_since);
            if cwnd >= self.window {
                self.window_limited_ns += upto - self.cwnd_since;
            }
            self.cwnd_since = upto;
        }
    }

    /// The window-limited time up to `end` (ns): what `integrate_cwnd` has counted plus the
    /// interval since, for a connection still open at the end of the run.
    pub fn window_limited_until(&self, end: Nanos) -> u64 {
        let open = !self.finished && end > self.cwnd_since && self.sender.cwnd() >= self.window;
        self.window_limited_ns + if open { end - self.cwnd_since } else { 0 }
    }

    /// Packets the application hands over at start (`None` = infinite).
    pub fn app_packets(&self) -> Option<i64> {
        match self.app {
            AppSpec::Ftp => None,
            AppSpec::File { bytes } => {
                let size = self.tcp.packet_size as u64;
                Some(bytes.div_ceil(size) as i64)
            }
            // At most MAX_FILE_PACKETS (10^12): fits an i64 and stays below MAX_SEQ.
            AppSpec::FilePackets { packets } => Some(packets as i64),
            // Applications with their own clock hand data over later (`apps`).
            AppSpec::OnOff(_) | AppSpec::Nps(_) | AppSpec::ParetoPaced(_) => Some(0),
        }
    }

    /// Data packets cumulatively acknowledged at this connection's sender: its highest ACK
    /// (ns-2 `ack_`, -1 before any ACK) plus one, less the SYN when the connection numbers a
    /// SYN 0 (Reno/NewReno with `syn`; ns-2's Vegas agent sends none). So it counts unique
    /// payload packets, as `delivered_pkts` does at the sink, and never exceeds it (an ACK
    /// reaches the sender only after the sink sent it).
    pub fn acked_pkts(&self) -> u64 {
        let syn = i64::from(self.sink.syn_seq.is_some());
        (self.sender.state.highest_ack + 1 - syn).max(0) as u64
    }
}

/// A duration within a run as `f64`, through a signed conversion: one instruction on x86-64
/// where the unsigned one takes seven (every ACK integrates cwnd). The same value: a run
/// lasts at most `limits::MAX_TIME_NS` (10^16 ns), far below 2^63. (Written as a match on
/// `i64::try_from` with the unsigned conversion for the rest, it compiles back to the
/// unsigned conversion.)
#[inline]
fn ns_as_f64(d: u64) -> f64 {
    debug_assert!(d <= i64::MAX as u64);
    d as i64 as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sink_acks_the_highest_in_order_packet() {
        let mut s = Sink::new(None);
        assert_eq!(s.receive(0), 0);
        assert_eq!(s.receive(1), 1);
        assert_eq!(s.receive(3), 1); // hole at 2: duplicate ACK
        assert_eq!(s.receive(4), 1);
        assert_eq!(s.receive(2), 4); // hole filled: jumps over 3 and 4
        assert_eq!(s.receive(2), 4); // duplicate
        assert_eq!(s.delivered_pkts, 5);
    }

    #[test]
    fn sink_does_not_count_the_syn_as_data() {
        let mut s = Sink::new(Some(0));
        s.receive(0);
        s.receive(1);
        assert_eq!(s.delivered_pkts, 1);
    }

    #[test]
    fn sink_handles_long_out_of_order_runs() {
        let mut s = Sink::new(None);
        for seq in (1..50).rev() {
            assert_eq!(s.receive(seq), -1);
        }
        assert_eq!(s.receive(0), 49);
        assert_eq!(s.receive(50), 50);
        assert_eq!(s.delivered_pkts, 51);
    }
}
