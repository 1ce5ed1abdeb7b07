//! Decision vectors for porting: for each algorithm in the Linux flavour, a
//! generated, checked-in CSV of hook calls with their integer inputs and the controller's
//! outputs, so that a C (kernel / BPF) port can replay the same file and must produce the
//! same cwnd and ssthresh on every row. Columns, units and replay: `tests/vectors/README.md`.
//!
//! The inputs come from a seeded model of a Linux sender (a small LCG, no dependencies):
//! per ACK, `pkts_acked` with an RTT sample (most ACKs; some carry none, as Karn's rule and
//! stretch ACKs leave), then `cong_avoid`; now and then a loss: `ssthresh` then
//! `set_state(Recovery)` (fast retransmit: ACKs give samples but no `cong_avoid` until
//! `set_state(Open)` when the data outstanding at the loss is acknowledged) or
//! `set_state(Loss)` (timeout: cwnd 1, Reno grows it through `cong_avoid` until `Open`);
//! some losses prove spurious, and `undo_cwnd` restores the window when their recovery ends.
//! Some epochs are application-limited (the sender fills only part of cwnd, and is then not
//! cwnd-limited in Linux's `tcp_is_cwnd_limited` sense); now and then the application pauses
//! until everything is acknowledged, and sending again after that idle time is a
//! `cwnd_event(TxStart)`. A file holds connections of 1,000 ACKs, as many as it takes to end 10,000 rounds; each
//! starts with `init` on a fresh controller (cwnd 2, ssthresh 0x7fffffff). Files are stored
//! gzip-compressed. The RTT is baseRTT + forward queueing + backward queueing + jitter, the forward queueing
//! that of a bottleneck whose bandwidth-delay product (2..36 packets) changes per epoch of a
//! few rounds (cwnd beyond it queues, and diff follows), so that slow
//! start and its exit, increase, hold and decrease rounds, rounds with fewer than three
//! samples, exact throughput ties (zero-jitter epochs) and RoVegas' router-reported queueing
//! (probing ACKs, heavy backward queueing) all occur; [`coverage`] checks that they do.
//!
//! `VEGASLAB_UPDATE_VECTORS=1 cargo test -p vegaslab-cc --test decision_vectors` rewrites the
//! files; otherwise each generated file must equal the checked-in one line by line (the first
//! differing line is named), and a missing file is a failure, never a silent creation.

use std::fmt::Write as _;
use std::path::PathBuf;

use vegaslab_cc::controller::{Ack, CaState, CongestionControl, CwndEvent, Loss, LossKind, QueueingTimes, RttSample, Window};
use vegaslab_cc::params::AlgorithmParams;
use vegaslab_cc::registry::{AlgorithmSpec, LinuxForm};
use vegaslab_cc::{TcpConfig, ALGORITHMS};

mod common;
use common::params::{Table, Value};

/// Every registered algorithm whose Linux form is vegaslab's model of Linux code (the
/// registry's `LinuxForm::Flavour` in its linux flavour, and `LinuxForm::Native`, e.g. CUBIC),
/// with its default parameters: file name and algorithm.
fn algorithms() -> Vec<(&'static str, AlgorithmSpec)> {
    ALGORITHMS
        .iter()
        .filter(|e| e.models_linux())
        .map(|e| {
            let linux = if e.linux == LinuxForm::Flavour { vec![("flavour", Value::Str("linux"))] } else { vec![] };
            let source = Table(linux);
            let spec = AlgorithmSpec::read(e.name, &source).expect("registered").unwrap_or_else(|err| panic!("{}: {err:?}", e.name));
            (e.name, spec)
        })
        .collect()
}

/// Rounds per file, at least: the generator adds connections until this many rounds ended.
const ROUNDS: usize = 10_000;
/// ACKs per connection (a fresh controller after each).
const CONNECTION_ACKS: usize = 1_000;
/// Receiver window (Linux `snd_cwnd_clamp`), packets.
const CLAMP: i64 = 40;
/// Linux's initial ssthresh (`TCP_INFINITE_SSTHRESH`).
const INFINITE_SSTHRESH: i64 = 0x7fff_ffff;
/// Base round-trip propagation, µs.
const BASE_US: u64 = 50_000;

/// Knuth's MMIX LCG; the high bits are the output.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

/// Which branches a generated file went through.
#[derive(Debug, Default)]
struct Coverage {
    rows: usize,
    rounds: usize,
    rounds_below_3_samples: usize,
    slow_start_exits: usize,
    ca_increase: usize,
    ca_hold: usize,
    ca_decrease: usize,
    fast_retransmits: usize,
    timeouts: usize,
    opens: usize,
    probes: usize,
    /// Reno's increase (a round with fewer than three samples, or Vegas off after a timeout)
    /// with the sender cwnd-limited, and without.
    reno_cwnd_limited: usize,
    reno_not_cwnd_limited: usize,
    idle_restarts: usize,
    undos: usize,
}

/// The recovery state of the modelled sender.
#[derive(Clone, Copy, PartialEq)]
enum Phase {
    Open,
    Recovery,
    Loss,
}

struct Gen {
    cc: Box<dyn CongestionControl>,
    w: Window,
    now_us: u64,
    csv: String,
    cov: Coverage,
}

fn opt(x: Option<u64>) -> String {
    x.map_or(String::new(), |v| v.to_string())
}

fn whole(x: f64, what: &str, row: usize) -> i64 {
    assert!(x.fract() == 0.0 && x.is_finite(), "row {row}: {what} {x} is not a whole number of packets");
    x as i64
}

impl Gen {
    /// One CSV row: the hook, its inputs, the window before and the controller's outputs.
    #[allow(clippy::too_many_arguments)]
    fn row(&mut self, hook: &str, rtt_us: Option<u64>, q: Option<(u64, u64)>, seqno: Option<i64>, acked: Option<i64>, arg: &str, before: &Window) {
        let n = self.cov.rows + 2; // file line (after the header)
        let (cwnd_in, cwnd_out) = (whole(before.cwnd, "cwnd in", n), whole(self.w.cwnd, "cwnd out", n));
        let _ = writeln!(
            self.csv,
            "{hook},{},{},{},{},{},{},{arg},{},{},{},{},{cwnd_in},{},{cwnd_out},{}",
            self.now_us,
            opt(rtt_us),
            opt(q.map(|q| q.0)),
            opt(q.map(|q| q.1)),
            seqno.map_or(String::new(), |s| s.to_string()),
            acked.map_or(String::new(), |s| s.to_string()),
            before.next_seq,
            before.last_ack,
            CLAMP,
            u8::from(before.cwnd_limited),
            before.ssthresh,
            self.w.ssthresh,
        );
        self.cov.rows += 1;
    }

    fn pkts_acked(&mut self, rtt_us: u64, q: Option<(u64, u64)>) {
        // Half a microsecond over, so that the controller's truncation gives rtt_us back.
        let secs = |x: u64| (x as f64 + 0.5) / 1e6;
        let sample = RttSample {
            now: self.now_us * 1000,
            rtt: secs(rtt_us),
            queueing: q.map(|(b, f)| QueueingTimes { backward: secs(b), forward: secs(f) }),
        };
        assert_eq!(sample.rtt_us(), rtt_us as i64);
        let before = self.w;
        self.cc.pkts_acked(&mut self.w, &sample);
        self.row("pkts_acked", Some(rtt_us), q, None, None, "", &before);
    }

    fn cong_avoid(&mut self, seqno: i64, acked: i64) {
        let before = self.w;
        let ack = Ack { seqno, acked, now: self.now_us * 1000, elapsed: self.now_us as f64 * 1e-6 };
        self.cc.cong_avoid(&mut self.w, &ack);
        self.row("cong_avoid", None, None, Some(seqno), Some(acked), "", &before);
    }

    fn ssthresh(&mut self, kind: LossKind) {
        let before = self.w;
        let cut = self.cc.ssthresh(&self.w, &Loss { kind, window: self.w.cwnd });
        self.w.ssthresh = cut.ssthresh;
        self.w.cwnd = cut.cwnd;
        let arg = match kind {
            LossKind::FastRetransmit => "fast_retransmit",
            LossKind::Timeout => "timeout",
        };
        self.row("ssthresh", None, None, None, None, arg, &before);
    }

    /// Sending resumes with nothing in flight after `idle_us` (Linux `CA_EVENT_TX_START`).
    fn tx_start(&mut self, idle_us: u64) {
        let before = self.w;
        let last_send = self.now_us * 1000;
        self.now_us += idle_us;
        self.cc.cwnd_event(&mut self.w, CwndEvent::TxStart { now: self.now_us * 1000, last_send });
        self.row("cwnd_event", None, None, None, None, "tx_start", &before);
    }

    /// A loss proved spurious: the sender sets cwnd to what `undo_cwnd` returns.
    fn undo_cwnd(&mut self) {
        let before = self.w;
        self.w.cwnd = self.cc.undo_cwnd(&self.w);
        self.row("undo_cwnd", None, None, None, None, "", &before);
    }

    fn set_state(&mut self, state: CaState) {
        let before = self.w;
        self.cc.set_state(&self.w, state);
        let arg = match state {
            CaState::Open => "open",
            CaState::Recovery => "recovery",
            CaState::Loss => "loss",
            CaState::Disorder => "disorder",
            CaState::Cwr => "cwr",
        };
        self.row("set_state", None, None, None, None, arg, &before);
    }
}

pub const HEADER: &str =
    "hook,now_us,rtt_us,qb_us,qf_us,seqno,acked,arg,next_seq,last_ack,clamp,cwnd_limited,cwnd,ssthresh,cwnd_out,ssthresh_out";

/// The vectors of one algorithm, and what they covered.
fn generate(name: &str, params: &dyn AlgorithmParams) -> (String, Coverage) {
    let seed = name.bytes().fold(0x5eed_u64, |h, b| h.wrapping_mul(31).wrapping_add(b as u64));
    let mut rng = Lcg(seed);
    let cfg = TcpConfig { window: CLAMP as f64, ..Default::default() };
    let fresh = Window { cwnd: 2.0, ssthresh: INFINITE_SSTHRESH, next_seq: 0, last_ack: -1, max_window: CLAMP as f64, cwnd_limited: true };
    let mut g = Gen { cc: params.controller(&cfg), w: fresh, now_us: 0, csv: format!("{HEADER}\n"), cov: Coverage::default() };

    let mut phase = Phase::Open;
    let mut recover = 0i64; // recovery ends when this is acknowledged
    let mut beg = 0i64; // the kernel's round start, mirrored to count rounds
    let mut round_samples = 0usize;
    // Epoch: the bottleneck's bdp, jitter, sampling, probing and backward queueing, and the
    // share of cwnd the application fills (percent).
    let (mut epoch_left, mut bdp, mut jitter, mut sample_pct, mut probe_pct, mut backward) = (0u32, 2u64, 0u64, 100u64, 0u64, 0u64);
    let mut app_pct = 100u64;
    // The application pauses until everything is acknowledged (idle), then sends again.
    let mut pausing = false;
    // The loss in progress will prove spurious (undo when its recovery ends), and the
    // ssthresh to restore then (Linux prior_ssthresh: tcp_current_ssthresh at the loss).
    let (mut spurious, mut prior_ssthresh) = (false, 0i64);

    for i in 0.. {
        // A new connection every CONNECTION_ACKS ACKs: a fresh controller, `init`, initial
        // window 2 and an infinite ssthresh (so slow start and its exit recur); none once
        // ROUNDS rounds have ended.
        if i % CONNECTION_ACKS == 0 {
            if g.cov.rounds >= ROUNDS {
                break;
            }
            g.cc = params.controller(&cfg);
            g.w = fresh;
            let before = g.w;
            g.cc.init(&mut g.w);
            g.row("init", None, None, None, None, "", &before);
            g.w.next_seq = g.w.cwnd as i64; // the first flight
            (phase, recover, beg, round_samples, epoch_left, pausing, spurious) = (Phase::Open, 0, 0, 0, 0, false, false);
        }
        if epoch_left == 0 {
            epoch_left = 20 + rng.below(120) as u32; // ACKs
            bdp = 2 + rng.below(35);
            jitter = [0, 0, 50, 400][rng.below(4) as usize];
            sample_pct = [100, 100, 90, 30][rng.below(4) as usize];
            probe_pct = [0, 50, 100][rng.below(3) as usize];
            backward = [0, 0, 2_000, 25_000][rng.below(4) as usize];
            app_pct = [100, 100, 100, 100, 100, 100, 60, 30][rng.below(8) as usize];
        }
        epoch_left -= 1;

        // The ACK: one packet, or a stretch ACK of up to a quarter of the window (delayed and
        // aggregated ACKs; it also keeps rounds to a few ACKs each, so that a file holds
        // ROUNDS rounds in little space); never beyond what was sent.
        let in_flight = g.w.next_seq - 1 - g.w.last_ack;
        if in_flight <= 0 {
            if pausing && phase == Phase::Open {
                // Idle with nothing in flight: the next send is a TX_START.
                pausing = false;
                g.tx_start(BASE_US * (1 + rng.below(40)));
                g.cov.idle_restarts += 1;
                (beg, round_samples) = (g.w.next_seq, 0);
            }
            g.w.next_seq = g.w.last_ack + 1 + (g.w.cwnd as i64).max(1);
            g.w.cwnd_limited = true;
            continue;
        }
        let cwnd = (g.w.cwnd as u64).max(1);
        let acked = match rng.below(4) {
            0 => 1,
            _ => 1 + rng.below((cwnd / 4).max(1)) as i64,
        }
        .min(in_flight);
        let seqno = g.w.last_ack + acked;
        g.now_us += BASE_US * acked as u64 / cwnd + rng.below(200);
        g.w.last_ack = seqno;

        // Its RTT sample.
        if rng.below(100) < sample_pct {
            // A bottleneck holding bdp packets in flight without queueing: the rest queue.
            let forward = BASE_US * cwnd.saturating_sub(bdp) / bdp;
            let qb = if backward > 0 { backward / 2 + rng.below(backward) } else { 0 };
            let rtt = BASE_US + forward + qb + if jitter > 0 { rng.below(jitter) } else { 0 };
            let q = rng.chance(probe_pct).then_some((qb, forward));
            g.cov.probes += q.is_some() as usize;
            g.pkts_acked(rtt, q);
            round_samples += 1;
        }

        match phase {
            Phase::Recovery => {
                if seqno >= recover {
                    phase = Phase::Open;
                    if spurious {
                        g.undo_cwnd();
                        g.w.ssthresh = g.w.ssthresh.max(prior_ssthresh);
                        g.cov.undos += 1;
                    }
                    g.set_state(CaState::Open);
                    g.cov.opens += 1;
                    (beg, round_samples) = (g.w.next_seq, 0);
                }
            }
            Phase::Open | Phase::Loss => {
                let before = g.w;
                let round_end = phase == Phase::Open && seqno + 1 > beg;
                g.cong_avoid(seqno, acked);
                if phase == Phase::Loss || (round_end && round_samples < 3) {
                    if before.cwnd_limited {
                        g.cov.reno_cwnd_limited += 1;
                    } else {
                        g.cov.reno_not_cwnd_limited += 1;
                    }
                }
                if round_end {
                    g.cov.rounds += 1;
                    if round_samples < 3 {
                        g.cov.rounds_below_3_samples += 1;
                    } else if before.cwnd < before.ssthresh as f64 {
                        if g.w.cwnd < before.cwnd || g.w.ssthresh < before.ssthresh {
                            g.cov.slow_start_exits += 1;
                        }
                    } else if g.w.cwnd > before.cwnd {
                        g.cov.ca_increase += 1;
                    } else if g.w.cwnd < before.cwnd {
                        g.cov.ca_decrease += 1;
                    } else {
                        g.cov.ca_hold += 1;
                    }
                    (beg, round_samples) = (g.w.next_seq, 0);
                }
                if phase == Phase::Loss && seqno >= recover {
                    phase = Phase::Open;
                    if spurious {
                        g.undo_cwnd();
                        g.w.ssthresh = g.w.ssthresh.max(prior_ssthresh);
                        g.cov.undos += 1;
                    }
                    g.set_state(CaState::Open);
                    g.cov.opens += 1;
                    (beg, round_samples) = (g.w.next_seq, 0);
                }
            }
        }

        // A loss now and then, detected on this ACK (outside recovery).
        if phase == Phase::Open && rng.below(1000) < 6 {
            let kind = if rng.chance(50) { LossKind::FastRetransmit } else { LossKind::Timeout };
            let cwnd = g.w.cwnd as i64;
            prior_ssthresh = g.w.ssthresh.max((cwnd >> 1) + (cwnd >> 2));
            spurious = rng.chance(20);
            g.ssthresh(kind);
            // Fast retransmit: recovery lasts until everything outstanding is acknowledged.
            // Timeout: the sender goes back to the first unacknowledged packet; its ACK ends
            // the Loss state (the rest of the flight was lost with it), so Vegas restarts in
            // slow start from a small cwnd.
            recover = g.w.next_seq - 1;
            if kind == LossKind::FastRetransmit {
                phase = Phase::Recovery;
                g.cov.fast_retransmits += 1;
                g.set_state(CaState::Recovery);
            } else {
                phase = Phase::Loss;
                g.cov.timeouts += 1;
                g.set_state(CaState::Loss);
                g.w.next_seq = g.w.last_ack + 1; // go back to the first unacknowledged packet
                recover = g.w.next_seq;
                epoch_left = 0; // a new path (a reroute as the timeout's cause): new bdp
            }
        }

        // The application pauses now and then (outside recovery), until all is acknowledged.
        if phase == Phase::Open && !pausing && rng.below(1000) < 4 {
            pausing = true;
        }

        // Send what the window and the application allow. cwnd-limited as Linux's
        // tcp_is_cwnd_limited has it: the window was full when sending stopped, or, in slow
        // start, cwnd is below twice what is in flight.
        let cwnd = (g.w.cwnd as i64).max(1);
        if !pausing {
            let wanted = if app_pct == 100 { cwnd } else { (cwnd * app_pct as i64 / 100).max(1) };
            g.w.next_seq = g.w.next_seq.max(g.w.last_ack + 1 + wanted);
        }
        let out = g.w.next_seq - 1 - g.w.last_ack;
        g.w.cwnd_limited = out >= cwnd || ((cwnd as f64) < g.w.ssthresh as f64 && cwnd < 2 * out);
    }
    (g.csv, g.cov)
}

fn vectors_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/vectors")
}

fn file_of(name: &str) -> PathBuf {
    vectors_dir().join(format!("{name}-linux.csv.gz"))
}

/// The checked-in files are gzip-compressed CSV (`zcat` them to read).
fn write_gz(path: &PathBuf, text: &str) {
    use flate2::{write::GzEncoder, Compression};
    use std::io::Write;
    let mut gz = GzEncoder::new(Vec::new(), Compression::best());
    gz.write_all(text.as_bytes()).unwrap();
    let bytes = gz.finish().unwrap();
    std::fs::write(path, bytes).unwrap_or_else(|e| panic!("{}: cannot write: {e}", path.display()));
}

fn read_gz(path: &PathBuf) -> Option<String> {
    use std::io::Read;
    let file = std::fs::File::open(path).ok()?;
    let mut text = String::new();
    flate2::read::GzDecoder::new(file)
        .read_to_string(&mut text)
        .unwrap_or_else(|e| panic!("{}: not a gzip-compressed CSV: {e}", path.display()));
    Some(text)
}

#[test]
fn every_linux_algorithm_decides_as_its_checked_in_vectors() {
    let update = std::env::var_os("VEGASLAB_UPDATE_VECTORS").is_some_and(|v| v == "1");
    let mut failures = Vec::new();
    for (name, spec) in algorithms() {
        let (csv, _) = generate(name, spec.params());
        let path = file_of(name);
        if update {
            std::fs::create_dir_all(vectors_dir()).unwrap();
            write_gz(&path, &csv);
            continue;
        }
        let Some(expected) = read_gz(&path) else {
            failures.push(format!(
                "{}: missing (generate it with VEGASLAB_UPDATE_VECTORS=1 cargo test -p vegaslab-cc --test decision_vectors)",
                path.display()
            ));
            continue;
        };
        let mut got = csv.lines();
        let mut want = expected.lines();
        for line in 1.. {
            match (got.next(), want.next()) {
                (None, None) => break,
                (g, w) if g == w => {}
                (g, w) => {
                    failures.push(format!(
                        "{}:{line}: the controller now gives\n  {}\nwhere the file has\n  {}",
                        path.display(),
                        g.unwrap_or("<end of output>"),
                        w.unwrap_or("<end of file>")
                    ));
                    break;
                }
            }
        }
    }
    assert!(failures.is_empty(), "decision vectors differ:\n{}", failures.join("\n"));
}

#[test]
fn there_is_a_vector_file_for_every_linux_model_and_no_other() {
    let mut files: Vec<String> = std::fs::read_dir(vectors_dir())
        .unwrap()
        .filter_map(|f| f.ok()?.file_name().to_str()?.strip_suffix("-linux.csv.gz").map(str::to_string))
        .collect();
    files.sort();
    let mut expected: Vec<String> = algorithms().into_iter().map(|(name, _)| name.to_string()).collect();
    expected.sort();
    assert_eq!(files, expected);
}

#[test]
fn the_generated_inputs_exercise_every_branch() {
    for (name, spec) in algorithms() {
        let (csv, c) = generate(name, spec.params());
        eprintln!("{name}: {} bytes, {c:?}", csv.len());
        assert!(c.rounds >= ROUNDS, "{name}: only {} rounds", c.rounds);
        let compressed = std::fs::metadata(file_of(name)).map(|m| m.len()).unwrap_or(0);
        assert!(compressed < 2_000_000, "{name}: {compressed} bytes compressed");
        assert!(c.fast_retransmits > 0 && c.timeouts > 0 && c.opens > 0, "{name}: {c:?}");
        assert!(c.probes > 0, "{name}: no probing ACKs: {c:?}");
        assert!(c.ca_increase > 0 && c.ca_hold > 0, "{name}: {c:?}");
        assert!(c.idle_restarts > 0 && c.undos > 0, "{name}: {c:?}");
        assert!(c.reno_cwnd_limited > 0 && c.reno_not_cwnd_limited > 0, "{name}: {c:?}");
        if name == "cubic" {
            continue; // no rounds of its own: it never decreases in cong_avoid
        }
        assert!(c.rounds_below_3_samples > 0, "{name}: {c:?}");
        assert!(c.slow_start_exits >= 5, "{name}: too few slow-start exits: {c:?}");
        assert!(c.ca_decrease > 0, "{name}: {c:?}");
    }
}
