//! What the simulator cannot run is refused at load time in one sentence naming it; what goes
//! wrong at run time (an access outside the program's memory, a loop that does not end) is a
//! fault that leaves the window alone, never a crash or a hang. The objects come from
//! tests/objects/hostile.bpf.c (kernel/Makefile, test-objects); garbage is made here.

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};
use vegaslab_bpf::{BpfController, BpfObject, Engine, Fault, LoadOptions};
use vegaslab_cc::controller::{Ack, CongestionControl, Loss, LossKind, Window};

/// One sentence: no line break, no trailing period.
fn assert_one_sentence(err: &str) {
    assert!(!err.contains('\n') && !err.ends_with('.') && !err.is_empty(), "not one sentence: {err:?}");
}

fn refused(variant: &str, named: &str) {
    let Some(err) = common::refusal(&format!("test-objects/{variant}.bpf.o")) else { return };
    assert_one_sentence(&err);
    assert!(err.contains(named), "{variant}: {err}");
}

#[test]
fn an_unknown_helper_is_refused_by_name_and_number() {
    refused("helper", "the object calls BPF helper bpf_get_prandom_u32 (#7) from cong_avoid, which the simulator does not provide (it provides: bpf_jiffies64, bpf_ktime_get_ns)");
}

#[test]
fn an_unknown_field_is_refused_by_struct_and_member() {
    refused("field", "the object reads tcp_sock.rcv_wnd in cong_avoid, which the simulator's socket does not offer");
}

#[test]
fn an_unknown_kfunc_is_refused_by_name() {
    refused("kfunc", "the object calls kfunc cubictcp_cong_avoid from cong_avoid, which the simulator does not provide");
}

#[test]
fn a_hook_the_simulator_does_not_call_is_refused_by_name() {
    refused("hook", "defines the hook in_ack_event, which the simulator does not call");
}

#[test]
fn a_bpf_map_is_refused_by_name() {
    refused("map", "the object uses BPF map hostile_map from cong_avoid, which the simulator does not provide");
}

/// Data sections are bounded together, not one by one: many zeroed sections, which take no
/// bytes in the file, cannot ask for any amount of memory.
#[test]
fn data_sections_over_the_bound_together_are_refused() {
    refused("bigdata", "the object's data sections hold more than the 1048576 bytes the simulator gives an object's data");
}

#[test]
fn a_bpf_atomic_is_refused() {
    refused("atomic", "the object's cong_avoid program uses a BPF atomic operation");
}

#[test]
fn bpf_dctcp_needs_its_map_named_and_is_refused_for_its_in_ack_event_hook() {
    let Some(bytes) = common::object_bytes("selftests/bpf_dctcp.bpf.o") else { return };
    let err = BpfObject::load(&bytes, &LoadOptions::default()).unwrap_err().to_string();
    assert!(err.contains("2 struct_ops maps") && err.contains("dctcp_nouse") && err.contains("dctcp"), "{err}");
    let named = LoadOptions { map: Some("dctcp".into()), ..LoadOptions::default() };
    let err = BpfObject::load(&bytes, &named).unwrap_err().to_string();
    assert_one_sentence(&err);
    assert!(err.contains("struct_ops map dctcp defines the hook in_ack_event"), "{err}");
}

#[test]
fn garbage_is_not_an_elf_object() {
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let garbage: Vec<u8> = (0..4096)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    for bytes in [&garbage[..], b"\x7fELF", b""] {
        let err = BpfObject::load(bytes, &LoadOptions::default()).unwrap_err().to_string();
        assert_one_sentence(&err);
        assert!(err.starts_with("the file is not an ELF object"), "{err}");
    }
}

#[test]
fn every_truncation_of_an_object_is_refused_without_a_panic() {
    let Some(bytes) = common::object_bytes("vl_vegas.bpf.o") else { return };
    let step = (bytes.len() / 200).max(1);
    for len in (0..bytes.len()).step_by(step) {
        let err = BpfObject::load(&bytes[..len], &LoadOptions::default()).unwrap_err().to_string();
        assert_one_sentence(&err);
    }
}

#[test]
fn a_config_hz_of_zero_is_refused() {
    let Some(bytes) = common::object_bytes("selftests/bpf_cubic.bpf.o") else { return };
    let err = BpfObject::load(&bytes, &LoadOptions { hz: 0, ..LoadOptions::default() }).unwrap_err().to_string();
    assert_eq!(err, "CONFIG_HZ must be between 1 and 1000000, not 0");
}

fn window() -> Window {
    Window { cwnd: 10.0, ssthresh: 5, next_seq: 20, last_ack: 10, max_window: 100.0, cwnd_limited: true }
}

fn ack(seqno: i64, acked: i64) -> Ack {
    Ack { seqno, acked, now: 1_000_000, elapsed: 0.001 }
}

/// The object's cong_avoid on `window()` in each engine: the window after it and the fault.
fn cong_avoid_once(variant: &str) -> Option<Vec<(Window, Option<String>, Duration)>> {
    let mut out = vec![];
    for engine in [Engine::Interpreter, Engine::Auto] {
        let object = common::load(&format!("test-objects/{variant}.bpf.o"), engine)?;
        let fault = Arc::new(Fault::default());
        let mut cc = BpfController::new(object, fault.clone());
        let mut w = window();
        let start = Instant::now();
        cc.cong_avoid(&mut w, &ack(1000, 1));
        out.push((w, fault.get(), start.elapsed()));
    }
    Some(out)
}

/// `variant`'s cong_avoid, in each engine, ends as a fault saying `what` within a second or
/// two, and leaves the window alone.
fn faults(variant: &str, what: &str) {
    let Some(runs) = cong_avoid_once(variant) else { return };
    for (w, fault, took) in runs {
        assert_eq!(w, window());
        let fault = fault.expect("a fault");
        assert!(fault.starts_with(&format!("the BPF program hostile failed in cong_avoid at 0.001 s of simulated time: {what}")), "{fault}");
        assert!(took < Duration::from_secs(2), "{took:?}");
    }
}

#[test]
fn an_out_of_bounds_write_is_a_fault_that_leaves_the_window_alone() {
    faults("oob", "Access violation");
}

#[test]
fn an_endless_loop_is_stopped_by_the_instruction_budget() {
    faults("loop", "it ran past its budget of 1000000 instructions");
}

#[test]
fn after_a_fault_every_hook_of_the_run_does_nothing() {
    let Some(object) = common::load("test-objects/oob.bpf.o", Engine::Auto) else { return };
    let Some(plain) = common::load("test-objects/plain.bpf.o", Engine::Auto) else { return };
    let fault = Arc::new(Fault::default());
    let mut bad = BpfController::new(object, fault.clone());
    let mut good = BpfController::new(plain, fault.clone());
    let mut w = window();
    bad.cong_avoid(&mut w, &ack(1000, 1));
    let first = fault.get();
    good.cong_avoid(&mut w, &ack(1000, 1));
    let cut = good.ssthresh(&w, &Loss { kind: LossKind::FastRetransmit, window: w.cwnd });
    assert_eq!(w, window());
    assert_eq!((cut.ssthresh, cut.cwnd), (w.ssthresh, w.cwnd));
    assert_eq!(fault.get(), first, "the first fault is kept");
}

#[test]
fn a_division_by_zero_gives_linuxs_result() {
    let Some(object) = common::load("test-objects/plain.bpf.o", Engine::Auto) else { return };
    let mut cc = BpfController::new(object, Arc::new(Fault::default()));
    let mut w = window();
    // ack = seqno + 1 = 0: ssthresh = 10 / 0 = 0, cwnd = 10 % 0 + 1 call = 11
    cc.cong_avoid(&mut w, &ack(-1, 2));
    assert_eq!((w.cwnd, w.ssthresh), (11.0, 0));
    let mut w = window();
    // ack 3: ssthresh = 10 / 3, cwnd = 10 % 3 + 2 calls
    cc.cong_avoid(&mut w, &ack(2, 2));
    assert_eq!((w.cwnd, w.ssthresh), (3.0, 3));
}

#[test]
fn global_data_is_per_controller_and_a_clone_carries_it_on() {
    let Some(object) = common::load("test-objects/plain.bpf.o", Engine::Auto) else { return };
    let fault = Arc::new(Fault::default());
    let mut a = BpfController::new(object.clone(), fault.clone());
    let mut w = window();
    a.cong_avoid(&mut w, &ack(2, 2)); // a's first call
    let mut b = BpfController::new(object, fault.clone());
    let mut c = a.clone();
    let calls = |cc: &mut BpfController| {
        let mut w = window();
        cc.cong_avoid(&mut w, &ack(2, 2));
        w.cwnd as i64 - 10 % 3 // the object's call counter
    };
    assert_eq!(calls(&mut b), 1);
    assert_eq!(calls(&mut c), 2);
    assert_eq!(calls(&mut a), 2);
}

/// Linux refuses a congestion control without `ssthresh`, `cong_avoid` or `undo_cwnd`
/// (`tcp_validate_congestion_control`): so does the simulator, naming the first missing hook.
#[test]
fn an_object_without_the_hooks_linux_requires_is_refused_naming_one() {
    let Some(err) = common::refusal("test-objects/empty.bpf.o") else { return };
    assert!(err.contains("has no ssthresh program, which Linux requires of every congestion control (ssthresh, cong_avoid, undo_cwnd"), "{err}");
}

/// The byte ranges of the sections the loader reads: programs, the struct_ops map, BTF,
/// relocations, symbols.
fn loader_sections(bytes: &[u8]) -> Vec<std::ops::Range<usize>> {
    use object::{Object, ObjectSection};
    let f = object::File::parse(bytes).unwrap();
    f.sections()
        .filter(|s| s.name().is_ok_and(|n| n == "struct_ops" || n.starts_with(".struct_ops") || n.starts_with(".BTF") || n.starts_with(".rel") || n == ".symtab" || n == ".strtab" || n.starts_with(".rodata")))
        .filter_map(|s| s.file_range())
        .map(|(start, len)| start as usize..(start + len) as usize)
        .filter(|r| !r.is_empty())
        .collect()
}

/// Corrupted copies tried per object.
const CORRUPTIONS: u32 = 4000;

/// An object with one byte changed where the loader reads (its programs, map, BTF,
/// relocations, symbols) loads or is refused, and one that loads runs its hooks to a result or
/// a fault: never a panic.
#[test]
fn a_corrupted_object_is_refused_or_runs_but_never_panics() {
    for rel in ["vl_vegas.bpf.o", "selftests/bpf_cubic.bpf.o"] {
        let Some(bytes) = common::object_bytes(rel) else { return };
        let ranges = loader_sections(&bytes);
        let (mut loaded, mut refused) = (0, 0);
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for k in 0..CORRUPTIONS {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let r = &ranges[(x % ranges.len() as u64) as usize];
            let at = r.start + ((x >> 16) % r.len() as u64) as usize;
            let mut bad = bytes.clone();
            bad[at] ^= (x >> 40) as u8 | 1;
            let engine = if k % 2 == 0 { Engine::Interpreter } else { Engine::Auto };
            match BpfObject::load(&bad, &LoadOptions { engine, ..LoadOptions::default() }) {
                Err(e) => {
                    assert_one_sentence(&e.to_string());
                    refused += 1;
                }
                Ok(object) => {
                    let mut cc = BpfController::new(Arc::new(object), Arc::new(Fault::default()));
                    let mut w = window();
                    cc.init(&mut w);
                    cc.cong_avoid(&mut w, &ack(11, 1));
                    cc.ssthresh(&w, &Loss { kind: LossKind::Timeout, window: w.cwnd });
                    loaded += 1;
                }
            }
        }
        assert!(loaded > 0 && refused > 0, "{rel}: {loaded} loaded, {refused} refused");
        eprintln!("{rel}: of {CORRUPTIONS} one-byte corruptions, {loaded} loaded and ran, {refused} were refused");
    }
}
