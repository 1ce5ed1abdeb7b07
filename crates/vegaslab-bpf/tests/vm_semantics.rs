//! The VM runs eBPF's semantics where SBPF's differ: division by zero gives Linux's result,
//! and 32-bit results are zero-extended; a program cannot write its read-only data, and a
//! kfunc takes only the socket; in both engines.

use vegaslab_bpf::insn::{Insn, CALL, EXIT, LDDW};
use vegaslab_bpf::memory::{ARENA_VM, READONLY_VM};
use vegaslab_bpf::loader::{Image, Program};
use vegaslab_bpf::runtime::{Programs, Vm};
use vegaslab_bpf::{abi, rewrite, Engine};

fn ins(op: u8, dst: u8, src: u8, imm: i32) -> Insn {
    Insn { op, dst, src, off: 0, imm }
}

/// r0 (or the VM's error) after running `insns` (then `exit`) as the `init` hook with
/// `readonly` as the read-only region, in each engine.
fn run_with(readonly: &[u8], insns: &[Insn]) -> Vec<Result<u64, String>> {
    let mut code: Vec<u8> = insns.iter().flat_map(|i| i.encode()).collect();
    code.extend_from_slice(&ins(EXIT, 0, 0, 0).encode());
    let program = Program { hook: "init", symbol: "t_init".into(), code: rewrite::for_sbpf("init", &code).unwrap(), relocated: code };
    let image = Image { ops_name: "t".into(), map_name: "t".into(), programs: vec![program], readonly: readonly.to_vec(), writable: vec![] };
    [Engine::Interpreter, Engine::Auto]
        .into_iter()
        .map(|engine| {
            let programs = std::sync::Arc::new(Programs::new(&image, engine, 250).unwrap());
            let mut vm = Vm::new(&programs).unwrap();
            vm.call(0, 0, &[])
        })
        .collect()
}

/// r0 after running `insns`, in each engine.
fn run(insns: &[Insn]) -> Vec<u64> {
    run_with(&[], insns).into_iter().map(Result::unwrap).collect()
}

/// `lddw r<dst>, value`.
fn lddw(dst: u8, value: u64) -> [Insn; 2] {
    [ins(LDDW, dst, 0, value as u32 as i32), ins(0, 0, 0, (value >> 32) as u32 as i32)]
}

#[test]
fn a_64_bit_division_by_a_zero_register_gives_zero() {
    assert_eq!(run(&[ins(0xb7, 0, 0, 7), ins(0xb7, 1, 0, 0), ins(0x3f, 0, 1, 0)]), [0, 0]);
}

#[test]
fn a_64_bit_modulo_by_a_zero_register_keeps_the_dividend() {
    assert_eq!(run(&[ins(0xb7, 0, 0, 7), ins(0xb7, 1, 0, 0), ins(0x9f, 0, 1, 0)]), [7, 7]);
}

#[test]
fn a_32_bit_division_by_a_register_zero_in_its_low_half_gives_zero() {
    let [a, b] = lddw(1, 1 << 32); // the low 32 bits are 0
    assert_eq!(run(&[ins(0xb7, 0, 0, 7), a, b, ins(0x3c, 0, 1, 0)]), [0, 0]);
}

#[test]
fn a_32_bit_modulo_by_zero_keeps_the_low_half_of_the_dividend() {
    let [a, b] = lddw(0, (5 << 32) | 7);
    assert_eq!(run(&[a, b, ins(0xb7, 1, 0, 0), ins(0x9c, 0, 1, 0)]), [7, 7]);
}

#[test]
fn a_division_by_a_nonzero_register_divides() {
    assert_eq!(run(&[ins(0xb7, 0, 0, 23), ins(0xb7, 1, 0, 5), ins(0x3f, 0, 1, 0)]), [4, 4]);
    assert_eq!(run(&[ins(0xb7, 0, 0, 23), ins(0xb7, 1, 0, 5), ins(0x9f, 0, 1, 0)]), [3, 3]);
}

#[test]
fn a_32_bit_add_past_i32_max_is_zero_extended() {
    // w0 = 0x7fffffff; w0 += 1: eBPF gives 0x0000_0000_8000_0000
    assert_eq!(run(&[ins(0xb4, 0, 0, 0x7fff_ffff), ins(0x04, 0, 0, 1)]), [0x8000_0000, 0x8000_0000]);
}

#[test]
fn a_32_bit_subtract_and_multiply_are_zero_extended() {
    assert_eq!(run(&[ins(0xb4, 0, 0, 0), ins(0x14, 0, 0, 1)]), [0xffff_ffff, 0xffff_ffff]);
    assert_eq!(run(&[ins(0xb4, 0, 0, 0x4000_0000), ins(0xb4, 1, 0, 2), ins(0x2c, 0, 1, 0)]), [0x8000_0000, 0x8000_0000]);
}

#[test]
fn read_only_data_reads_and_cannot_be_written() {
    let [a, b] = lddw(1, READONLY_VM);
    let load = ins(0x79, 0, 1, 0); // r0 = *(u64 *)(r1 + 0)
    assert_eq!(run_with(&42u64.to_le_bytes(), &[a, b, load]), [Ok(42), Ok(42)]);
    let store = ins(0x7a, 1, 0, 7); // *(u64 *)(r1 + 0) = 7
    for r in run_with(&42u64.to_le_bytes(), &[a, b, store]) {
        assert!(r.as_ref().unwrap_err().starts_with("Access violation"), "{r:?}");
    }
}

#[test]
fn a_kfunc_given_another_pointer_than_the_socket_is_an_error() {
    let [a, b] = lddw(1, ARENA_VM); // the argument array, not the socket
    let call = ins(CALL, 0, 0, abi::builtin_key("tcp_reno_ssthresh") as i32);
    for r in run_with(&[], &[a, b, call]) {
        assert!(r.as_ref().unwrap_err().contains("tcp_reno_ssthresh was passed 0x400000000, which is not the socket"), "{r:?}");
    }
}
