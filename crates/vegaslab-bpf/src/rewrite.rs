//! Load-time rewriting that gives a program Linux's eBPF semantics on the SBPF v3 VM, where the
//! two differ:
//!
//! - **Division by zero.** Linux defines `x / 0 = 0` and `x % 0 = x` (the verifier patches
//!   every division by a register that way; include/linux/filter.h, "BPF_DIV ... by zero"), SBPF
//!   stops the program with an error. Each `div`/`mod` by a register becomes Linux's guarded
//!   sequence: test the divisor, take Linux's result when it is 0, divide otherwise
//!   (docs/decisions.md, "BPF division by zero is patched to Linux's result").
//! - **32-bit results.** eBPF zero-extends every 32-bit ALU result into the 64-bit register;
//!   SBPF v3 sign-extends the results of 32-bit `add`, `sub` and `mul`. Each is followed by
//!   `w = w` (`mov32`), which zero-extends in both.
//!
//! Inserting instructions moves later ones, so every jump's offset is recomputed to land on
//! the first instruction of its original target's replacement.

use crate::insn::*;

/// `jne dst, 0, +off` (64-bit or 32-bit compare).
fn jne0(reg: u8, off: i16, wide: bool) -> Insn {
    Insn { op: if wide { 0x55 } else { 0x56 }, dst: reg, src: 0, off, imm: 0 }
}

/// What instruction `i` becomes (itself when nothing differs).
fn replacement(i: Insn) -> Vec<Insn> {
    let class = i.class();
    if !matches!(class, CLASS_ALU | CLASS_ALU64) {
        return vec![i];
    }
    let op = i.op & 0xf0;
    let wide = class == CLASS_ALU64;
    let by_register = i.op & SRC_REG != 0;
    let mov = |imm_or_self: Option<i32>| match imm_or_self {
        // dst = 0
        Some(v) => Insn { op: if wide { 0xb7 } else { 0xb4 }, dst: i.dst, src: 0, off: 0, imm: v },
        // w_dst = w_dst: the 32-bit truncation, zero-extended
        None => Insn { op: 0xbc, dst: i.dst, src: i.dst, off: 0, imm: 0 },
    };
    let ja = |off: i16| Insn { op: JA, dst: 0, src: 0, off, imm: 0 };
    match op {
        OP_DIV if by_register => vec![jne0(i.src, 2, wide), mov(Some(0)), ja(1), i],
        OP_MOD if by_register && wide => vec![Insn { op: 0x15, dst: i.src, src: 0, off: 1, imm: 0 }, i],
        OP_MOD if by_register => vec![jne0(i.src, 2, false), mov(None), ja(1), i],
        OP_ADD | OP_SUB | OP_MUL if !wide => vec![i, mov(None)],
        _ => vec![i],
    }
}

/// The program with Linux's semantics on the VM; `Err` if a recomputed jump no longer fits
/// its 16-bit offset.
pub fn for_sbpf(name: &str, code: &[u8]) -> Result<Vec<u8>, String> {
    let n = code.len() / 8;
    let mut pieces: Vec<(usize, Vec<Insn>)> = Vec::with_capacity(n);
    let mut new_start = vec![0usize; n + 1];
    let (mut pc, mut at) = (0, 0);
    while pc < n {
        let i = Insn::at(code, pc);
        let piece = if i.op == LDDW { vec![i, Insn::at(code, pc + 1)] } else { replacement(i) };
        debug_assert!(!i.is_jump() || piece.len() == 1, "jumps are never replaced");
        for k in 0..i.width() {
            new_start[pc + k] = at + k;
        }
        at += piece.len();
        pieces.push((pc, piece));
        pc += i.width();
    }
    new_start[n] = at;
    let mut out = Vec::with_capacity(at * 8);
    for (pc, piece) in pieces {
        let piece_is_jump = piece.len() == 1 && piece[0].is_jump();
        for (k, mut i) in piece.into_iter().enumerate() {
            // An original jump is its own piece; inserted ones are relative within their
            // piece already.
            if k == 0 && piece_is_jump {
                let target = (pc as i64 + 1 + i64::from(i.off)) as usize;
                let off = new_start[target] as i64 - (new_start[pc] as i64 + 1);
                i.off = i16::try_from(off).map_err(|_| format!("the object's {name} program is too long for its jumps once division by zero is guarded"))?;
            }
            out.extend_from_slice(&i.encode());
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(code: &[u8]) -> Vec<Insn> {
        (0..code.len() / 8).map(|pc| Insn::at(code, pc)).collect()
    }

    #[test]
    fn a_jump_over_a_guarded_division_lands_on_its_old_target() {
        // 0: jeq r1, 0, +1 -> 2; 1: r0 /= r2; 2: exit
        let code: Vec<u8> = [Insn { op: 0x15, dst: 1, src: 0, off: 1, imm: 0 }, Insn { op: 0x3f, dst: 0, src: 2, off: 0, imm: 0 }, Insn { op: EXIT, dst: 0, src: 0, off: 0, imm: 0 }]
            .iter()
            .flat_map(|i| i.encode())
            .collect();
        let out = decode(&for_sbpf("t", &code).unwrap());
        assert_eq!(out.len(), 6);
        assert_eq!(out[0].off, 4, "the jump now skips the four-instruction guard");
        assert_eq!(out[5].op, EXIT);
    }

    #[test]
    fn a_32_bit_add_is_followed_by_a_zero_extension() {
        let code = Insn { op: 0x04, dst: 3, src: 0, off: 0, imm: -1 }.encode();
        let out = decode(&for_sbpf("t", &code).unwrap());
        assert_eq!(out[1], Insn { op: 0xbc, dst: 3, src: 3, off: 0, imm: 0 });
    }
}
