//! The decision vectors of the Rust controllers (crates/vegaslab-cc/tests/vectors, format and
//! replay rules in its README) replayed through the BPF objects built from the same
//! algorithms, hook by hook through `BpfController`, in the interpreter and the JIT: the
//! project's Vegas family must decide as the Rust controllers do on every row, and the kernel
//! selftests' bpf_cubic as the Rust CUBIC does but for its jiffies clock.

mod common;

use flate2::read::GzDecoder;
use std::io::Read;
use std::path::PathBuf;
use std::sync::Arc;
use vegaslab_bpf::{BpfController, BpfObject, Engine, Fault, LoadOptions};
use vegaslab_cc::controller::{Ack, CaState, CongestionControl, CwndEvent, Loss, LossKind, RttSample, Window};

const HEADER: &str = "hook,now_us,rtt_us,qb_us,qf_us,seqno,acked,arg,next_seq,last_ack,clamp,cwnd_limited,cwnd,ssthresh,cwnd_out,ssthresh_out";

/// One row of a vector file.
struct Row {
    /// Line in the file (the header is line 1).
    line: usize,
    text: String,
    hook: String,
    now_us: u64,
    rtt_us: Option<i64>,
    seqno: Option<i64>,
    acked: Option<i64>,
    arg: String,
    window: Window,
    out: (i64, i64),
}

fn read_vectors(name: &str) -> Vec<Row> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("../vegaslab-cc/tests/vectors/{name}-linux.csv.gz"));
    let mut text = String::new();
    GzDecoder::new(std::fs::File::open(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))).read_to_string(&mut text).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some(HEADER), "{name}: the columns changed");
    lines
        .enumerate()
        .map(|(k, l)| {
            let f: Vec<&str> = l.split(',').collect();
            assert_eq!(f.len(), 16, "{name} line {}: {l}", k + 2);
            let num = |i: usize| f[i].parse::<i64>().unwrap_or_else(|_| panic!("{name} line {}: column {i} of {l}", k + 2));
            let opt = |i: usize| (!f[i].is_empty()).then(|| num(i));
            Row {
                line: k + 2,
                text: l.to_string(),
                hook: f[0].to_string(),
                now_us: num(1) as u64,
                rtt_us: opt(2),
                seqno: opt(5),
                acked: opt(6),
                arg: f[7].to_string(),
                window: Window { cwnd: num(12) as f64, ssthresh: num(13), next_seq: num(8), last_ack: num(9), max_window: num(10) as f64, cwnd_limited: num(11) == 1 },
                out: (num(14), num(15)),
            }
        })
        .collect()
}

/// The window after each row's hook: (cwnd, ssthresh).
type Outputs = Vec<(i64, i64)>;

/// The window after each row's hook, replayed as the README says.
fn replay(rows: &[Row], object: &Arc<BpfObject>) -> Outputs {
    replay_connections(rows, object, false)
}

/// `replay`, with one controller for every connection when `one_controller` (its `init`
/// starts each), a fresh one per `init` row otherwise.
fn replay_connections(rows: &[Row], object: &Arc<BpfObject>, one_controller: bool) -> Outputs {
    let fault = Arc::new(Fault::default());
    let mut cc: Option<BpfController> = None;
    let mut prev_now_us = 0;
    let mut out = Vec::with_capacity(rows.len());
    for r in rows {
        let mut w = r.window;
        let now = r.now_us * 1000;
        if r.hook == "init" && (cc.is_none() || !one_controller) {
            cc = Some(BpfController::new(object.clone(), fault.clone()));
        }
        let c = cc.as_mut().expect("the file starts with init");
        match r.hook.as_str() {
            "init" => c.init(&mut w),
            "pkts_acked" => {
                // Half a microsecond over, so that the controller's truncation gives rtt_us back.
                let rtt = (r.rtt_us.unwrap() as f64 + 0.5) / 1e6;
                c.pkts_acked(&mut w, &RttSample { now, rtt, queueing: None });
            }
            "cong_avoid" => c.cong_avoid(&mut w, &Ack { seqno: r.seqno.unwrap(), acked: r.acked.unwrap(), now, elapsed: now as f64 * 1e-9 }),
            "ssthresh" => {
                let kind = if r.arg == "timeout" { LossKind::Timeout } else { LossKind::FastRetransmit };
                let cut = c.ssthresh(&w, &Loss { kind, window: w.cwnd });
                (w.ssthresh, w.cwnd) = (cut.ssthresh, cut.cwnd);
            }
            "set_state" => {
                let state = match r.arg.as_str() {
                    "open" => CaState::Open,
                    "recovery" => CaState::Recovery,
                    "loss" => CaState::Loss,
                    "disorder" => CaState::Disorder,
                    "cwr" => CaState::Cwr,
                    other => panic!("line {}: set_state {other}", r.line),
                };
                c.set_state(&w, state);
            }
            // The sender last sent at the previous row's time, before the idle period.
            "cwnd_event" => c.cwnd_event(&mut w, CwndEvent::TxStart { now, last_send: prev_now_us * 1000 }),
            "undo_cwnd" => w.cwnd = c.undo_cwnd(&w),
            other => panic!("line {}: unknown hook {other}", r.line),
        }
        assert_eq!(fault.get(), None, "line {}: {}", r.line, r.text);
        prev_now_us = r.now_us;
        out.push((w.cwnd as i64, w.ssthresh));
    }
    out
}

/// Rows whose replayed window differs from the file's.
fn differing<'a>(rows: &'a [Row], got: &[(i64, i64)]) -> Vec<(&'a Row, (i64, i64))> {
    rows.iter().zip(got).filter(|(r, g)| r.out != **g).map(|(r, g)| (r, *g)).collect()
}

fn first_difference(name: &str, rows: &[Row], got: &[(i64, i64)]) -> Option<String> {
    let d = differing(rows, got);
    d.first().map(|(r, g)| format!("{name}: {} of {} rows differ; first at line {}: {}\n  cwnd_out, ssthresh_out expected {:?}, got {g:?}", d.len(), rows.len(), r.line, r.text, r.out))
}

/// Both engines: the rows of `vectors` replayed through `object` (kernel/build), or `None`
/// when the object was not built.
fn replay_both(vectors: &str, object: &str, hz: u32) -> Option<(Vec<Row>, Outputs)> {
    let bytes = common::object_bytes(object)?;
    let rows = read_vectors(vectors);
    let load = |engine| Arc::new(BpfObject::load(&bytes, &LoadOptions { engine, hz, ..LoadOptions::default() }).unwrap_or_else(|e| panic!("{object}: {e}")));
    let interpreted = replay(&rows, &load(Engine::Interpreter));
    let jit = replay(&rows, &load(Engine::Auto));
    if let Some(i) = interpreted.iter().zip(&jit).position(|(a, b)| a != b) {
        panic!("{object}: the interpreter and the JIT differ first at line {}: {} ({:?} vs {:?})", rows[i].line, rows[i].text, interpreted[i], jit[i]);
    }
    Some((rows, interpreted))
}

fn vegas_family_member_decides_as_the_rust_controller(vectors: &str, object: &str) {
    let Some((rows, got)) = replay_both(vectors, object, vegaslab_bpf::DEFAULT_HZ) else { return };
    assert!(rows.len() > 50_000, "{vectors}: {} rows", rows.len());
    if let Some(msg) = first_difference(vectors, &rows, &got) {
        panic!("{msg}");
    }
}

#[test]
fn the_vegas_object_decides_as_the_rust_vegas_on_every_row_in_both_engines() {
    vegas_family_member_decides_as_the_rust_controller("vegas", "vl_vegas.bpf.o");
}

#[test]
fn the_vegas_a_object_decides_as_the_rust_vegas_a_on_every_row_in_both_engines() {
    vegas_family_member_decides_as_the_rust_controller("vegas-a", "vl_vegas_a.bpf.o");
}

#[test]
fn the_adavegas_object_decides_as_the_rust_adavegas_on_every_row_in_both_engines() {
    vegas_family_member_decides_as_the_rust_controller("adavegas", "vl_adavegas.bpf.o");
}

#[test]
fn the_vegas_1_object_decides_as_the_rust_vegas_1_on_every_row_in_both_engines() {
    vegas_family_member_decides_as_the_rust_controller("vegas_1", "vl_vegas_1.bpf.o");
}

#[test]
fn the_vegas_8_object_decides_as_the_rust_vegas_8_on_every_row_in_both_engines() {
    vegas_family_member_decides_as_the_rust_controller("vegas_8", "vl_vegas_8.bpf.o");
}

/// Each row's connection number (a connection starts at each `init` row).
fn connections(rows: &[Row]) -> Vec<usize> {
    let mut n = 0;
    rows.iter()
        .map(|r| {
            n += usize::from(r.hook == "init");
            n
        })
        .collect()
}

/// A `pkts_acked` row where exactly one side ended slow start by HyStart (ssthresh set to the
/// window, the other left it).
fn hystart_exits_differ(r: &Row, got: (i64, i64)) -> bool {
    let exits = |ssthresh: i64| ssthresh != r.window.ssthresh && ssthresh == r.window.cwnd as i64;
    r.hook == "pkts_acked" && exits(r.out.1) != exits(got.1)
}

/// The kernel selftests' bpf_cubic decides as the Rust CUBIC but in two documented ways: its
/// curve runs on jiffies (`tcp_jiffies32`, CONFIG_HZ) where the Rust port counts µs, and it
/// starts a HyStart round in `cong_avoid` (when cwnd-limited in slow start) where Linux 6.12's
/// tcp_cubic, which the Rust port follows, starts it in `hystart_update` on every sample.
/// With CONFIG_HZ = 1,000,000 the clocks agree, and a connection differs only from a row
/// where HyStart's exit differs; at the testbed's 250, the other connections differ only in
/// congestion-avoidance `cong_avoid` rows, where the curve's time is read.
#[test]
fn bpf_cubic_differs_from_the_rust_cubic_only_by_its_jiffies_clock_and_its_hystart_round() {
    let Some((rows, at_1mhz)) = replay_both("cubic", "selftests/bpf_cubic.bpf.o", 1_000_000) else { return };
    let Some((_, at_250)) = replay_both("cubic", "selftests/bpf_cubic.bpf.o", 250) else { return };
    let conn = connections(&rows);
    let mut hystart_conns = std::collections::BTreeSet::new();
    for (k, r) in rows.iter().enumerate() {
        if r.out != at_1mhz[k] && !hystart_conns.contains(&conn[k]) {
            assert!(hystart_exits_differ(r, at_1mhz[k]), "HZ 1,000,000: line {} differs before any HyStart exit does: {} (got {:?})", r.line, r.text, at_1mhz[k]);
            hystart_conns.insert(conn[k]);
        }
    }
    let mut clock_rows = 0;
    for (k, r) in rows.iter().enumerate() {
        if r.out != at_250[k] && !hystart_conns.contains(&conn[k]) {
            let in_avoidance = r.hook == "cong_avoid" && r.window.cwnd as i64 >= r.window.ssthresh;
            assert!(in_avoidance, "HZ 250: line {} differs outside congestion avoidance: {} (got {:?})", r.line, r.text, at_250[k]);
            clock_rows += 1;
        }
    }
    eprintln!(
        "cubic vectors: {} rows in {} connections; HZ 1,000,000: {} rows differ, in {} connections whose HyStart exit differs; HZ 250: {} rows differ, {} of them congestion-avoidance rows of other connections (the jiffies clock)",
        rows.len(),
        conn.last().copied().unwrap_or(0),
        differing(&rows, &at_1mhz).len(),
        hystart_conns.len(),
        differing(&rows, &at_250).len(),
        clock_rows
    );
}

/// bpf_cubic compiled with `-mcpu=v3` (32-bit ALU and jumps, clang 18's default) decides as
/// the `-mcpu=v1` build on every row: the VM's 32-bit arithmetic is eBPF's.
#[test]
fn bpf_cubic_built_for_v3_decides_as_the_v1_build_on_every_row() {
    let Some((rows, v1)) = replay_both("cubic", "selftests/bpf_cubic.bpf.o", vegaslab_bpf::DEFAULT_HZ) else { return };
    let Some((_, v3)) = replay_both("cubic", "selftests/bpf_cubic_v3.bpf.o", vegaslab_bpf::DEFAULT_HZ) else { return };
    if let Some(k) = v1.iter().zip(&v3).position(|(a, b)| a != b) {
        panic!("line {}: {} v1 {:?}, v3 {:?}", rows[k].line, rows[k].text, v1[k], v3[k]);
    }
}

/// `init` starts a connection afresh on a used controller too (Reno's ACK count and the window
/// before a loss back to 0, the private area zeroed): one controller replaying every
/// connection decides as fresh ones.
#[test]
fn init_starts_a_connection_afresh_on_a_used_controller() {
    let Some(object) = common::load("vl_vegas.bpf.o", Engine::Auto) else { return };
    let rows = read_vectors("vegas");
    assert!(rows.iter().filter(|r| r.hook == "init").count() > 1);
    if let Some(msg) = first_difference("vegas with one controller", &rows, &replay_connections(&rows, &object, true)) {
        panic!("{msg}");
    }
}

/// RoVegas needs socket storage and BPF atomics, which the simulator does not provide.
#[test]
fn the_rovegas_object_is_refused_naming_socket_storage() {
    let Some(err) = common::refusal("vl_rovegas.bpf.o") else { return };
    assert!(err.contains("BPF helper bpf_sk_storage_get (#107)"), "{err}");
}

/// Every registered algorithm with a kernel version (its Linux flavour, built by `make bpf` as
/// `kernel/build/<kernel name>.bpf.o`) has its vectors replayed above through that object, or
/// its object is refused by the simulator; only then does the C twin of the objects
/// (kernel/replay.c, tests/test_kernel.py) replay its vectors instead.
#[test]
fn every_kernel_object_is_replayed_through_itself_unless_the_simulator_refuses_it() {
    use vegaslab_cc::registry::LinuxForm;
    const REPLAYED_HERE: &[&str] = &["vegas", "vegas-a", "adavegas", "vegas_1", "vegas_8"];
    for entry in vegaslab_cc::ALGORITHMS.iter().filter(|e| e.linux == LinuxForm::Flavour) {
        let kernel = entry.kernel_name().expect("a Linux flavour has a kernel name");
        let Some(bytes) = common::object_bytes(&format!("{kernel}.bpf.o")) else { return };
        let loads = BpfObject::load(&bytes, &LoadOptions::default()).is_ok();
        assert_eq!(loads, REPLAYED_HERE.contains(&entry.name), "{}: the simulator {} {kernel}.bpf.o", entry.name, if loads { "loads" } else { "refuses" });
    }
}
