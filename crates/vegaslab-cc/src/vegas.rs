//! The ns-2 Vegas agent (`Agent/TCP/Vegas`, USC NetBSD Vegas), as behaviour
//! (`shared/REFERENCE.md`, "ns-2's Vegas agent"), with the once-per-round window rule
//! factored out so the variants (Vegas-A, AdaVegas, ...) reuse everything else.
//!
//! Per ACK:
//! 1. RTT samples come from a fine-grained send-time table indexed by sequence number
//!    modulo the receiver window (`v_sendtime_`, `v_transmits_`); only packets sent once
//!    give samples. Each sample updates baseRTT (all-time minimum), the round's sum and
//!    count, and a fine-grained timeout (Jacobson mean/deviation, plus 1/16).
//! 2. A round ends with the first ACK at or beyond the sequence number that was next to
//!    send when the round began. Then rtt = mean of the round's samples (else the round's
//!    elapsed time), rttLen = packets sent in the round, actual = rttLen / rtt,
//!    expected = outstanding / baseRTT, delta = round((expected - actual) x baseRTT).
//! 3. Slow start acts every other round: delta > gamma ends it (ssthresh 2, cwnd -= cwnd/8);
//!    else the window doubles over the round. Congestion avoidance asks the [`Rule`].
//! 4. The per-ACK increment is applied only while cwnd - outstanding <= 2.
//! 5. Duplicate ACKs (and the first two new ACKs after a retransmission) retransmit the
//!    oldest unacknowledged packet at once if its fine-grained timer expired, or on the
//!    third duplicate; the window is then cut to 2 / half / three quarters, inflated by the
//!    duplicates and deflated on the next new ACK (with ssthresh 2).
//! 6. A coarse timeout sets cwnd to 2 and ssthresh to half the window.

use crate::adavegas::{fixed_increment, AdaVegasState};
use crate::config::{RoVegasParams, TcpConfig, VegasParams};
use crate::vegas_a::VegasAState;
use crate::sender::{send_much_with, slowdown, AckInfo, CwndAction, QueueingTimes, Segment, SenderState};
use crate::{secs, Nanos};

/// What the sender measured over one round, handed to the window rule.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Round {
    /// Mean RTT of the round's samples (or the round's duration), seconds.
    pub rtt: f64,
    /// Minimum RTT seen so far, seconds (already updated with this round).
    pub base_rtt: f64,
    /// Packets sent during the round.
    pub rtt_len: i64,
    /// Packets outstanding now (next to send minus last acknowledged).
    pub outstanding: i64,
    /// rtt_len / rtt, packets per second (Th(t) in the Vegas-A paper).
    pub actual: f64,
    /// outstanding / base_rtt, packets per second.
    pub expected: f64,
    /// round((expected - actual) x base_rtt), packets.
    pub delta: i64,
    pub cwnd: f64,
    /// Mean backward queueing time of the round's probing ACKs (RoVegas; 0 otherwise).
    pub backward_qt: f64,
}

/// The congestion-avoidance outcome of one round.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CaAction {
    /// cwnd -= 1 now (at least 2) and no growth this round.
    Decrease,
    /// cwnd -= this many packets now (at least 2) and no growth this round (AdaVegas' lastInc).
    DecreaseBy(f64),
    /// Grow by this much per ACK during the next round (1/cwnd ~ +1 per round).
    Increase(f64),
    Hold,
}

/// Once-per-round congestion-avoidance rules. Variants are added as the papers require;
/// each keeps its own state and cites its paper.
#[derive(Clone, Debug, PartialEq)]
pub enum Rule {
    /// Brakmo-Peterson Vegas as ns-2 codes it: delta > beta: -1; delta < alpha: +1; hold.
    Classic { alpha: f64, beta: f64 },
    /// Vegas-A (vegas-a.txt section 3): alpha/beta follow the throughput trend.
    VegasA(VegasAState),
    /// AdaVegas (adavegas.txt section III-B, Table I): adaptive increment.
    AdaVegas(AdaVegasState),
    /// Vegas with + inc packets per increase round (adavegas.txt's Vegas_1 / Vegas_8).
    FixedIncrement { alpha: f64, beta: f64, inc: f64 },
}

impl Rule {
    /// A slow-start round ended (rules that track every round's measurements, e.g. Vegas-A's
    /// Th(t-rtt), see them here).
    pub fn observe_slow_start(&mut self, r: &Round) {
        if let Rule::VegasA(v) = self {
            v.observe(r);
        }
    }

    /// The agent cut the window for a loss (fine-grained/third-duplicate retransmission cut,
    /// or coarse timeout).
    pub fn on_loss(&mut self) {
        if let Rule::AdaVegas(a) = self {
            a.on_loss();
        }
    }

    pub fn congestion_avoidance(&mut self, r: &Round) -> CaAction {
        match self {
            Rule::VegasA(v) => v.congestion_avoidance(r),
            Rule::AdaVegas(a) => a.congestion_avoidance(r),
            Rule::FixedIncrement { alpha, beta, inc } => fixed_increment(*alpha, *beta, *inc, r),
            Rule::Classic { alpha, beta } => {
                let d = r.delta as f64;
                if d > *beta {
                    CaAction::Decrease
                } else if d < *alpha {
                    CaAction::Increase(1.0 / r.cwnd)
                } else {
                    CaAction::Hold
                }
            }
        }
    }

    pub fn probe(&self) -> Vec<(&'static str, f64)> {
        match self {
            Rule::Classic { alpha, beta } => vec![("alpha", *alpha), ("beta", *beta)],
            Rule::VegasA(v) => v.probe(),
            Rule::AdaVegas(a) => a.probe(),
            Rule::FixedIncrement { alpha, beta, inc } => vec![("alpha", *alpha), ("beta", *beta), ("inc", *inc)],
        }
    }
}

/// State of the ns-2 Vegas agent (names follow ns-2's `v_*` variables).
#[derive(Clone, Debug)]
pub struct VegasAgent {
    pub rule: Rule,
    pub gamma: f64,
    /// Time (Vegas clock) of the last window cut on a retransmission.
    t_cwnd_changed: f64,
    firstrecv: f64,
    v_slowstart: f64,
    v_sa: f64,
    v_sd: f64,
    /// Fine-grained retransmission timeout, seconds.
    pub v_timeout: f64,
    v_worried: i64,
    v_begseq: i64,
    v_begtime: f64,
    v_cnt_rtt: i64,
    v_sum_rtt: f64,
    pub v_base_rtt: f64,
    v_incr: f64,
    v_inc_flag: bool,
    pub v_rtt: f64,
    pub v_actual: f64,
    v_newcwnd: f64,
    v_maxwnd: i64,
    /// Tables of `v_maxwnd` slots (ns-2 fills them with -1 and 0): only the prefix touched
    /// so far is stored (slots fill from 0 upwards), the rest reads as its initial value.
    /// A short connection with a large window thus costs little memory.
    v_sendtime: Vec<f64>,
    v_transmits: Vec<i32>,
    /// Last round's measurements, for monitoring.
    pub last_round: Option<Round>,
    /// RoVegas: use the queueing times AQT-enabled routers report (None for plain Vegas).
    router_assist: Option<RouterAssist>,
}

/// RoVegas' router assistance (rovegas.txt section 3) on top of the ns-2 Vegas agent.
///
/// The paper states its rule with cwnd and one RTT; ns-2's agent, which the authors extended
/// (ns-2.1b9a), computes per round with the mean RTT, packets sent in the round (actual) and
/// packets outstanding (expected). We keep ns-2's round and apply the paper's two changes to
/// it: (1) baseRTT = min over probing ACKs of RTT - (AQT + AQT-echo), plain RTT otherwise
/// (per sample, and for the round-end check with the round's mean queueing times);
/// (2) actual' = rttLen / (rtt - QT_b), QT_b the mean backward queueing time (AQT) of the
/// round's probing ACKs. diff and the +1 / -1 / hold rule are then Vegas' own.
#[derive(Clone, Debug)]
struct RouterAssist {
    probe_every: u32,
    option_bytes: u32,
    sent: u64,
    backward_sum: f64,
    forward_sum: f64,
    probes: u32,
}

impl VegasAgent {
    /// Drop the send-time tables (see `Sender::release_buffers`).
    pub(crate) fn release_buffers(&mut self) {
        self.v_sendtime = Vec::new();
        self.v_transmits = Vec::new();
    }

    /// Classic ns-2 Vegas with the given alpha/beta/gamma.
    pub fn classic(cfg: &TcpConfig, p: VegasParams) -> Self {
        Self::with_rule(cfg, Rule::Classic { alpha: p.alpha, beta: p.beta }, p.gamma)
    }

    pub fn with_rule(cfg: &TcpConfig, rule: Rule, gamma: f64) -> Self {
        let _ = cfg;
        VegasAgent {
            rule,
            gamma,
            t_cwnd_changed: 0.0,
            firstrecv: -1.0,
            v_slowstart: 2.0,
            v_sa: 0.0,
            v_sd: 0.0,
            v_timeout: 1000.0,
            v_worried: 0,
            v_begseq: 0,
            v_begtime: 0.0,
            v_cnt_rtt: 0,
            v_sum_rtt: 0.0,
            v_base_rtt: 1e9,
            v_incr: 0.0,
            v_inc_flag: true,
            v_rtt: 0.0,
            v_actual: 0.0,
            v_newcwnd: 0.0,
            v_maxwnd: 0,
            v_sendtime: Vec::new(),
            v_transmits: Vec::new(),
            last_round: None,
            router_assist: None,
        }
    }

    /// RoVegas: Vegas with router-reported queueing times (see [`RouterAssist`]).
    pub fn rovegas(cfg: &TcpConfig, p: RoVegasParams) -> Self {
        let mut agent = Self::with_rule(cfg, Rule::Classic { alpha: p.alpha, beta: p.beta }, p.gamma);
        agent.router_assist = Some(RouterAssist {
            probe_every: p.probe_every.max(1),
            option_bytes: p.option_bytes,
            sent: 0,
            backward_sum: 0.0,
            forward_sum: 0.0,
            probes: 0,
        });
        agent
    }

    pub fn probe(&self) -> Vec<(&'static str, f64)> {
        let mut v = self.rule.probe();
        v.push(("base_rtt", if self.v_base_rtt < 1e8 { self.v_base_rtt } else { f64::NAN }));
        v
    }

    /// ns-2's Vegas clock: seconds since the first packet was sent.
    fn vegastime(s: &SenderState, now: Nanos) -> f64 {
        secs(now) - s.firstsent
    }

    fn slot(&self, seq: i64) -> usize {
        seq.rem_euclid(self.v_maxwnd) as usize
    }

    #[inline]
    fn sendtime(&self, i: usize) -> f64 {
        self.v_sendtime.get(i).copied().unwrap_or(-1.0)
    }

    #[inline]
    fn transmits(&self, i: usize) -> i32 {
        self.v_transmits.get(i).copied().unwrap_or(0)
    }

    /// Store slot `i` (grow the stored prefix geometrically, up to `v_maxwnd`).
    #[inline(always)]
    fn touch(&mut self, i: usize) {
        if i >= self.v_sendtime.len() {
            self.grow(i);
        }
    }

    #[cold]
    #[inline(never)]
    fn grow(&mut self, i: usize) {
        let n = (i + 1).next_power_of_two().max(64).min(self.v_maxwnd as usize);
        self.v_sendtime.resize(n, -1.0);
        self.v_transmits.resize(n, 0);
    }

    /// `TcpAgent::window()`: cwnd capped by the receiver window (no inflation term).
    fn window(s: &SenderState) -> i64 {
        if s.cwnd < s.cfg.window {
            s.cwnd as i64
        } else {
            s.cfg.window as i64
        }
    }

    pub fn send_much(&mut self, s: &mut SenderState, now: Nanos, burst: u32) {
        send_much_with(s, now, burst, Self::window, |s, now, seq| self.output(s, now, seq));
    }

    /// `VegasTcpAgent::output`: record a fine-grained send time and transmit count.
    fn output(&mut self, s: &mut SenderState, now: Nanos, seqno: i64) {
        if seqno == 0 {
            // ns-2 sizes the tables by the receiver window at the first packet.
            self.v_maxwnd = (s.cfg.window as i64).max(1);
            self.v_sendtime.clear();
            self.v_transmits.clear();
        }
        let i = self.slot(seqno);
        self.touch(i);
        self.v_sendtime[i] = Self::vegastime(s, now);
        self.v_transmits[i] += 1;
        let mut wire = s.cfg.packet_size + if s.cfg.vegas_headers { s.cfg.header_bytes } else { 0 };
        let probe = match &mut self.router_assist {
            Some(ra) => {
                let probe = ra.sent % ra.probe_every as u64 == 0;
                ra.sent += 1;
                if probe {
                    wire += ra.option_bytes; // the AQT option travels on the wire
                }
                probe
            }
            None => false,
        };
        let fresh = seqno > s.maxseq;
        s.emit(
            now,
            Segment {
                seqno,
                wire_bytes: wire,
                payload_bytes: s.cfg.packet_size,
                syn: false,
                retransmission: !fresh,
                probe,
            },
            false,
        );
    }

    /// The oldest unacknowledged packet (ack + 1) if its fine-grained timer expired.
    fn expired(&self, s: &SenderState, now: Nanos, ack: i64) -> Option<i64> {
        let elapsed = Self::vegastime(s, now) - self.sendtime(self.slot(ack + 1));
        (elapsed >= self.v_timeout).then_some(ack + 1)
    }

    /// Process one ACK (`VegasTcpAgent::recv`).
    pub fn recv(&mut self, s: &mut SenderState, now: Nanos, ack: &AckInfo) {
        let t = Self::vegastime(s, now);
        let seqno = ack.seqno;
        if self.firstrecv < 0.0 {
            // The first ACK initialises the RTT state with the time since the first send.
            self.firstrecv = t;
            self.v_base_rtt = t;
            self.v_rtt = t;
            self.v_sa = t * 8.0;
            self.v_sd = t;
            self.v_timeout = ((self.v_sa / 4.0) + self.v_sd) / 2.0;
        }
        if seqno > s.last_ack {
            self.new_ack(s, now, t, seqno, ack.queueing);
        } else if seqno == s.last_ack {
            self.dup_ack(s, now, t, seqno);
        }
        if s.dupacks == 0 || s.dupacks > s.cfg.dupacks - 1 {
            let burst = s.cfg.max_burst;
            self.send_much(s, now, burst);
        }
    }

    fn new_ack(&mut self, s: &mut SenderState, now: Nanos, t: f64, seqno: i64, queueing: Option<QueueingTimes>) {
        if s.last_ack == 0 && s.cfg.delay_growth {
            s.cwnd = s.window_init;
        }
        // Deflate a window inflated by duplicate ACKs during recovery.
        if s.dupacks > s.cfg.dupacks && s.cwnd > self.v_newcwnd {
            s.cwnd = self.v_newcwnd;
            s.ssthresh = 2;
        }
        let oldack = s.last_ack;
        s.newack(now, seqno);
        s.check_finished(now);

        if seqno >= self.v_begseq {
            self.end_round(s, t);
        }
        // A slow-start increment stops once cwnd reaches ssthresh within the round.
        if self.v_incr == 1.0 && s.cwnd >= s.ssthresh as f64 {
            self.v_incr = 0.0;
        }
        // Grow only while the sender keeps up with the window.
        if self.v_incr > 0.0 && (s.cwnd - (s.t_seqno - s.last_ack) as f64) <= 2.0 {
            s.cwnd += self.v_incr;
        }

        self.take_rtt_sample(s, t, seqno, oldack, queueing);

        // The first two new ACKs after a retransmission: resend if another timer expired.
        if self.v_worried > 0 {
            self.v_worried -= 1;
            match self.expired(s, now, seqno) {
                Some(seq) => {
                    s.dupacks = s.cfg.dupacks;
                    self.output(s, now, seq);
                    s.stats.fast_retransmits += 1;
                }
                None => self.v_worried = 0,
            }
        }
    }

    /// The once-per-round computation (ns-2's "begin of once per-rtt actions").
    fn end_round(&mut self, s: &mut SenderState, t: f64) {
        let rtt = if self.v_cnt_rtt > 0 {
            self.v_sum_rtt / self.v_cnt_rtt as f64
        } else {
            t - self.v_begtime
        };
        self.v_sum_rtt = 0.0;
        self.v_cnt_rtt = 0;
        let (backward_qt, forward_qt) = match &mut self.router_assist {
            Some(ra) if ra.probes > 0 => {
                let n = ra.probes as f64;
                let q = (ra.backward_sum / n, ra.forward_sum / n);
                (ra.backward_sum, ra.forward_sum, ra.probes) = (0.0, 0.0, 0);
                q
            }
            _ => (0.0, 0.0),
        };
        let rtt_len = s.t_seqno - self.v_begseq;
        if rtt > 0.0 {
            // RoVegas: the round's RTT without queueing (rovegas.txt, baseRTT pseudo-code).
            let base_candidate = rtt - (backward_qt + forward_qt);
            if base_candidate < self.v_base_rtt || rtt_len <= 1 {
                self.v_base_rtt = base_candidate;
            }
            // RoVegas eq. (2): actual' excludes the backward queueing time.
            let forward_rtt = if rtt - backward_qt > 0.0 { rtt - backward_qt } else { rtt };
            self.v_actual = rtt_len as f64 / forward_rtt;
            let outstanding = s.t_seqno - s.last_ack;
            let expected = outstanding as f64 / self.v_base_rtt;
            let delta = ((expected - self.v_actual) * self.v_base_rtt + 0.5) as i64;
            let round = Round {
                rtt,
                base_rtt: self.v_base_rtt,
                rtt_len,
                outstanding,
                actual: self.v_actual,
                expected,
                delta,
                cwnd: s.cwnd,
                backward_qt,
            };
            self.last_round = Some(round);
            if s.cwnd < s.ssthresh as f64 {
                self.rule.observe_slow_start(&round);
                // Slow start: act only every other round.
                self.v_inc_flag = !self.v_inc_flag;
                if !self.v_inc_flag {
                    self.v_incr = 0.0;
                } else if delta as f64 > self.gamma {
                    s.ssthresh = 2;
                    s.cwnd -= s.cwnd / 8.0;
                    if s.cwnd < 2.0 {
                        s.cwnd = 2.0;
                    }
                    self.v_incr = 0.0;
                } else {
                    self.v_incr = 1.0;
                }
            } else {
                match self.rule.congestion_avoidance(&round) {
                    a @ (CaAction::Decrease | CaAction::DecreaseBy(_)) => {
                        s.cwnd -= if let CaAction::DecreaseBy(n) = a { n } else { 1.0 };
                        if s.cwnd < 2.0 {
                            s.cwnd = 2.0;
                        }
                        self.v_incr = 0.0;
                    }
                    CaAction::Increase(incr) => self.v_incr = incr,
                    CaAction::Hold => self.v_incr = 0.0,
                }
            }
        }
        self.v_begseq = s.t_seqno;
        self.v_begtime = t;
    }

    /// Clear the table entries of the newly acknowledged packets and, if the acknowledged
    /// packet was sent once, take its RTT sample. The clearing walks slot indices upward and
    /// stops at the end of the table, as ns-2's loop does, so a range that wraps around the
    /// table is not cleared (an ns-2 artefact kept on purpose).
    fn take_rtt_sample(
        &mut self,
        s: &mut SenderState,
        t: f64,
        seqno: i64,
        oldack: i64,
        queueing: Option<QueueingTimes>,
    ) {
        let i = self.slot(seqno);
        let send_time = self.sendtime(i);
        let transmits = self.transmits(i);
        let mut range = seqno - oldack;
        let last = self.slot(seqno) as i64;
        let mut k = self.slot(oldack + 1) as i64;
        while k <= last && range > 0 {
            // Slots beyond the stored prefix already hold these values.
            if let (Some(t), Some(n)) = (self.v_sendtime.get_mut(k as usize), self.v_transmits.get_mut(k as usize)) {
                *t = -1.0;
                *n = 0;
            }
            k = (k + 1) % self.v_maxwnd;
            range -= 1;
        }
        if send_time != 0.0 && transmits == 1 {
            let rtt = t - send_time;
            self.v_sum_rtt += rtt;
            self.v_cnt_rtt += 1;
            if rtt > 0.0 {
                self.v_rtt = rtt;
                s.note_rtt_sample(rtt);
                // RoVegas: a probing ACK's RTT without its queueing sets baseRTT.
                let mut base_candidate = self.v_rtt;
                if let (Some(ra), Some(q)) = (&mut self.router_assist, queueing) {
                    base_candidate = rtt - (q.backward + q.forward);
                    ra.backward_sum += q.backward;
                    ra.forward_sum += q.forward;
                    ra.probes += 1;
                }
                if base_candidate < self.v_base_rtt {
                    self.v_base_rtt = base_candidate;
                }
                let mut n = self.v_rtt - self.v_sa / 8.0;
                self.v_sa += n;
                n = n.abs();
                n -= self.v_sd / 4.0;
                self.v_sd += n;
                self.v_timeout = ((self.v_sa / 4.0) + self.v_sd) / 2.0;
                self.v_timeout += self.v_timeout / 16.0;
            }
        }
    }

    fn dup_ack(&mut self, s: &mut SenderState, now: Nanos, t: f64, seqno: i64) {
        s.dupacks += 1;
        let expired = self.expired(s, now, seqno);
        if expired.is_some() || s.dupacks == s.cfg.dupacks {
            let slot = self.slot(s.last_ack + 1);
            let send_time = self.sendtime(slot);
            let transmits = self.transmits(slot);
            // bugFix_: no repeated fast retransmits right after a coarse timeout.
            if s.highest_ack > s.recover || s.last_cwnd_action != CwndAction::Timeout {
                let mut win = Self::window(s);
                s.last_cwnd_action = CwndAction::DupAck;
                s.recover = s.maxseq;
                self.v_worried = 2.min(s.t_seqno - s.last_ack);
                if transmits > 1 {
                    self.v_timeout *= 2.0;
                } else {
                    self.v_timeout += self.v_timeout / 8.0;
                }
                // Cut the window only if it has not changed since the packet was sent.
                if self.t_cwnd_changed < send_time {
                    if win <= 3 {
                        win = 2;
                    } else if transmits > 1 {
                        win >>= 1;
                    } else {
                        win -= win >> 2;
                    }
                    self.v_newcwnd = win as f64;
                    s.cwnd = self.v_newcwnd + s.dupacks as f64;
                    self.t_cwnd_changed = t;
                    self.rule.on_loss();
                }
                s.reset_rtx_timer(now, true, true);
                let seq = expired.unwrap_or(s.last_ack + 1);
                self.output(s, now, seq);
                s.stats.fast_retransmits += 1;
                if transmits == 1 {
                    s.dupacks = s.cfg.dupacks;
                }
            }
        } else if s.dupacks > s.cfg.dupacks {
            s.cwnd += 1.0;
        }
    }

    /// Coarse retransmission timeout (`VegasTcpAgent::timeout`).
    pub fn timeout(&mut self, s: &mut SenderState, now: Nanos) {
        s.dupacks = 0;
        s.recover = s.maxseq;
        s.last_cwnd_action = CwndAction::Timeout;
        if s.highest_ack != s.maxseq {
            // ns-2 counts every firing (nrexmit_); only those with data outstanding are
            // timeouts in our results.
            s.stats.timeouts += 1;
        }
        s.reset_rtx_timer(now, false, true);
        let w = s.cwnd.min(s.cfg.window);
        s.slowdown(slowdown::CWND_RESTART | slowdown::SSTHRESH_HALF, w);
        s.cwnd = self.v_slowstart;
        self.rule.on_loss();
        self.v_newcwnd = 0.0;
        self.t_cwnd_changed = Self::vegastime(s, now);
        self.send_much(s, now, 0);
    }
}
