//! Cost of one `cong_avoid` call: the simulator's Rust CUBIC, the kernel selftests' bpf_cubic
//! and the project's vl_vegas in the VM's interpreter and JIT, each through the same
//! `CongestionControl` interface the senders use.
//!
//! `cargo run --release -p vegaslab-bpf --example hook_cost [CALLS]` (objects from `make bpf`).
//! Prints one line per controller: nanoseconds per call, the median of five timed rounds.

use std::hint::black_box;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;
use vegaslab_bpf::{BpfController, BpfObject, Engine, Fault, LoadOptions};
use vegaslab_cc::controller::{Ack, CongestionControl, Window};
use vegaslab_cc::cubic::{Cubic, CubicParams};

/// ns per `cong_avoid` over `calls` ACKs of one packet each, 10 µs apart; the window restarts
/// from 100 packets whenever it passes 5,000.
fn ns_per_call(cc: &mut dyn CongestionControl, calls: u64) -> f64 {
    let mut w = Window { cwnd: 10.0, ssthresh: 20, next_seq: 10, last_ack: 0, max_window: 100_000.0, cwnd_limited: true };
    cc.init(&mut w);
    let mut rounds = vec![];
    let mut now = 1_000_000_000u64;
    let mut seq = 0i64;
    for _ in 0..5 {
        let start = Instant::now();
        for _ in 0..calls {
            now += 10_000;
            seq += 1;
            cc.cong_avoid(&mut w, black_box(&Ack { seqno: seq, acked: 1, now, elapsed: 0.0 }));
            w.last_ack = seq;
            w.next_seq = seq + w.cwnd as i64;
            if w.cwnd > 5000.0 {
                w.cwnd = 100.0;
            }
        }
        rounds.push(start.elapsed().as_nanos() as f64 / calls as f64);
    }
    rounds.sort_by(f64::total_cmp);
    rounds[2]
}

fn main() {
    let calls: u64 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(1_000_000);
    let build = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../kernel/build");
    println!("ns per cong_avoid call ({calls} calls, median of 5 rounds)");
    println!("{:<40} {:>8.1}", "Rust Cubic (native)", ns_per_call(&mut Cubic::new(CubicParams::default()), calls));
    for rel in ["selftests/bpf_cubic.bpf.o", "vl_vegas.bpf.o"] {
        let path = build.join(rel);
        let Ok(bytes) = std::fs::read(&path) else {
            println!("{rel}: not built (make bpf)");
            continue;
        };
        for (engine, label) in [(Engine::Interpreter, "interpreter"), (Engine::Auto, "JIT")] {
            let object = match BpfObject::load(&bytes, &LoadOptions { engine, ..LoadOptions::default() }) {
                Ok(o) => Arc::new(o),
                Err(e) => {
                    println!("{rel}: {e}");
                    continue;
                }
            };
            let fault = Arc::new(Fault::default());
            let mut cc = BpfController::new(object, fault.clone());
            let ns = ns_per_call(&mut cc, calls);
            let name = format!("{} ({label})", rel.trim_start_matches("selftests/"));
            match fault.get() {
                None => println!("{name:<40} {ns:>8.1}"),
                Some(f) => println!("{name:<40} {f}"),
            }
        }
    }
    if !vegaslab_bpf::runtime::HAS_JIT {
        println!("(this build has no JIT: \"JIT\" runs the interpreter)");
    }
}
