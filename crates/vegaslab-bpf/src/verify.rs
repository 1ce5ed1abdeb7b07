//! Load-time checks of a program's instructions, each failure one sentence naming what the
//! simulator lacks: helpers it does not provide, BPF atomics, calls to BPF subprograms,
//! instructions beyond `-mcpu=v3` (signed division, sign-extending moves and loads, byte
//! swaps, long jumps), division by the constant 0, and jumps that leave the program or land
//! inside a 64-bit immediate load.
//!
//! Loops are not refused: Linux accepts bounded loops, and the VM's instruction budget stops
//! one that does not end ([`crate::runtime::INSTRUCTION_BUDGET`]). Memory accesses are not
//! checked here either: the VM translates every one of them at run time.

use crate::abi;
use crate::insn::*;

/// Check program `name` (the hook it implements) before relocation. `kfunc_calls`: the slots
/// of `call` instructions the ELF relocates to an undefined symbol (kfuncs), which the loader
/// resolves.
pub fn check(name: &str, code: &[u8], kfunc_calls: &[usize]) -> Result<(), String> {
    if code.is_empty() || !code.len().is_multiple_of(8) {
        return Err(format!("the object's {name} program is {} bytes long, not a whole number of instructions", code.len()));
    }
    let n = code.len() / 8;
    let mut starts = vec![false; n];
    let mut pc = 0;
    while pc < n {
        let i = Insn::at(code, pc);
        starts[pc] = true;
        if i.op == LDDW && (pc + 1 >= n || Insn::at(code, pc + 1).op != 0) {
            return Err(format!("the object's {name} program has a truncated 64-bit load at instruction {pc}"));
        }
        check_one(name, pc, &i, kfunc_calls)?;
        pc += i.width();
    }
    for pc in (0..n).filter(|&pc| starts[pc]) {
        let i = Insn::at(code, pc);
        if i.is_jump() {
            let target = pc as i64 + 1 + i64::from(i.off);
            if target < 0 || target >= n as i64 || !starts[target as usize] {
                return Err(format!("the object's {name} program jumps outside its instructions at instruction {pc}"));
            }
        }
    }
    Ok(())
}

fn check_one(name: &str, pc: usize, i: &Insn, kfunc_calls: &[usize]) -> Result<(), String> {
    let unsupported = || Err(format!("the object's {name} program uses opcode {:#04x} at instruction {pc}, which the simulator's VM does not implement (it runs the -mcpu=v1..v3 instruction set)", i.op));
    match i.class() {
        CLASS_LD if i.op == LDDW => {
            if i.src != 0 {
                return Err(format!("the object's {name} program loads a kernel object reference (lddw source {}) at instruction {pc}, which the simulator does not provide", i.src));
            }
        }
        CLASS_LDX | CLASS_ST | CLASS_STX => {
            let mode = i.op & 0xe0;
            if i.class() == CLASS_STX && mode == MODE_ATOMIC {
                return Err(format!("the object's {name} program uses a BPF atomic operation (opcode {:#04x}, e.g. __sync_fetch_and_add) at instruction {pc}, which the simulator's VM does not implement", i.op));
            }
            // Mode 0x60 (MEM) only: no legacy packet access, no sign-extending loads (v4).
            if mode != 0x60 {
                return unsupported();
            }
        }
        CLASS_ALU | CLASS_ALU64 => {
            let op = i.op & 0xf0;
            if op > OP_END || (op == OP_END && i.class() == CLASS_ALU64) || i.off != 0 {
                return unsupported();
            }
            if matches!(op, OP_DIV | OP_MOD) && i.op & SRC_REG == 0 && i.imm == 0 {
                return Err(format!("the object's {name} program divides by the constant 0 at instruction {pc}"));
            }
        }
        CLASS_JMP | CLASS_JMP32 => {
            let op = i.op & 0xf0;
            // ja, call and exit exist in the 64-bit class only, with an immediate.
            let special = matches!(op, 0x00 | 0x80 | 0x90);
            if op > 0xd0 || (special && (i.class() == CLASS_JMP32 || !matches!(i.op, JA | CALL | EXIT))) {
                return unsupported();
            }
            if i.op == CALL {
                return check_call(name, pc, i, kfunc_calls);
            }
        }
        _ => return unsupported(),
    }
    Ok(())
}

fn check_call(name: &str, pc: usize, i: &Insn, kfunc_calls: &[usize]) -> Result<(), String> {
    match i.src {
        0 => {
            let id = i.imm as u32;
            if abi::HELPERS.iter().any(|(h, _)| *h == id) {
                return Ok(());
            }
            let named = abi::helper_name(id).map_or_else(|| format!("#{id}"), |n| format!("{n} (#{id})"));
            Err(format!(
                "the object calls BPF helper {named} from {name}, which the simulator does not provide (it provides: {})",
                abi::list(abi::HELPERS.iter().map(|(_, n)| *n))
            ))
        }
        1 if kfunc_calls.contains(&pc) => Ok(()),
        1 => Err(format!("the object's {name} program calls a BPF subprogram at instruction {pc}, which the simulator does not support (make the function __always_inline)")),
        src => Err(format!("the object's {name} program makes a call of kind {src} at instruction {pc}, which the simulator does not support")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prog(insns: &[Insn]) -> Vec<u8> {
        insns.iter().flat_map(|i| i.encode()).collect()
    }
    fn ins(op: u8, dst: u8, src: u8, off: i16, imm: i32) -> Insn {
        Insn { op, dst, src, off, imm }
    }

    #[test]
    fn a_backward_jump_is_accepted() {
        let code = prog(&[ins(0xb7, 0, 0, 0, 0), ins(0x07, 0, 0, 0, 1), ins(0x05, 0, 0, -2, 0), ins(EXIT, 0, 0, 0, 0)]);
        assert!(check("cong_avoid", &code, &[]).is_ok());
    }

    #[test]
    fn a_jump_into_the_second_half_of_a_64_bit_load_is_refused() {
        let code = prog(&[ins(0x05, 0, 0, 1, 0), ins(LDDW, 1, 0, 0, 5), ins(0, 0, 0, 0, 0), ins(EXIT, 0, 0, 0, 0)]);
        let err = check("init", &code, &[]).unwrap_err();
        assert!(err.contains("jumps outside its instructions at instruction 0"), "{err}");
    }

    #[test]
    fn a_signed_division_is_refused_by_its_opcode() {
        let code = prog(&[ins(0x3f, 0, 1, 1, 0), ins(EXIT, 0, 0, 0, 0)]);
        let err = check("ssthresh", &code, &[]).unwrap_err();
        assert!(err.contains("opcode 0x3f at instruction 0"), "{err}");
    }

    #[test]
    fn a_division_by_the_constant_zero_is_refused() {
        let code = prog(&[ins(0x37, 0, 0, 0, 0), ins(EXIT, 0, 0, 0, 0)]);
        assert!(check("ssthresh", &code, &[]).unwrap_err().contains("divides by the constant 0"));
    }

    #[test]
    fn a_call_to_a_bpf_subprogram_is_refused_and_a_kfunc_call_is_not() {
        let code = prog(&[ins(CALL, 0, 1, 0, 1), ins(EXIT, 0, 0, 0, 0), ins(EXIT, 0, 0, 0, 0)]);
        assert!(check("init", &code, &[]).unwrap_err().contains("calls a BPF subprogram at instruction 0"));
        assert!(check("init", &code, &[0]).is_ok());
    }

    #[test]
    fn an_unnamed_helper_is_refused_by_its_number() {
        let code = prog(&[ins(CALL, 0, 0, 0, 999), ins(EXIT, 0, 0, 0, 0)]);
        assert!(check("init", &code, &[]).unwrap_err().contains("BPF helper #999 from init"));
    }
}
