//! eBPF instruction encoding (the kernel's Documentation/bpf/standardization/instruction-set.rst):
//! 8 bytes, `opcode | dst:4 src:4 | off:i16 | imm:i32`, little endian; `lddw` takes two slots.

/// Instruction classes (low 3 bits of the opcode).
pub const CLASS_LD: u8 = 0;
pub const CLASS_LDX: u8 = 1;
pub const CLASS_ST: u8 = 2;
pub const CLASS_STX: u8 = 3;
pub const CLASS_ALU: u8 = 4;
pub const CLASS_JMP: u8 = 5;
pub const CLASS_JMP32: u8 = 6;
pub const CLASS_ALU64: u8 = 7;

/// `lddw`: a 64-bit immediate in two slots.
pub const LDDW: u8 = 0x18;
/// `call imm`.
pub const CALL: u8 = 0x85;
/// `exit`.
pub const EXIT: u8 = 0x95;
/// `ja off`.
pub const JA: u8 = 0x05;
/// Memory mode of an atomic read-modify-write (`lock xadd` and friends).
pub const MODE_ATOMIC: u8 = 0xc0;
/// ALU operations (high 4 bits of the opcode).
pub const OP_ADD: u8 = 0x00;
pub const OP_SUB: u8 = 0x10;
pub const OP_MUL: u8 = 0x20;
pub const OP_DIV: u8 = 0x30;
pub const OP_MOD: u8 = 0x90;
pub const OP_MOV: u8 = 0xb0;
pub const OP_END: u8 = 0xd0;
/// Source-operand bit: register (X) rather than immediate (K).
pub const SRC_REG: u8 = 0x08;

/// One decoded slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Insn {
    pub op: u8,
    pub dst: u8,
    pub src: u8,
    pub off: i16,
    pub imm: i32,
}

impl Insn {
    /// Decode slot `pc` of `code` (which must hold it).
    pub fn at(code: &[u8], pc: usize) -> Insn {
        let b = &code[pc * 8..pc * 8 + 8];
        Insn { op: b[0], dst: b[1] & 0x0f, src: b[1] >> 4, off: i16::from_le_bytes([b[2], b[3]]), imm: i32::from_le_bytes([b[4], b[5], b[6], b[7]]) }
    }

    /// The 8 bytes of this slot.
    pub fn encode(&self) -> [u8; 8] {
        let mut b = [0u8; 8];
        b[0] = self.op;
        b[1] = (self.src << 4) | (self.dst & 0x0f);
        b[2..4].copy_from_slice(&self.off.to_le_bytes());
        b[4..8].copy_from_slice(&self.imm.to_le_bytes());
        b
    }

    pub fn class(&self) -> u8 {
        self.op & 7
    }

    /// A conditional or unconditional jump with a pc-relative `off` (not `call`/`exit`).
    pub fn is_jump(&self) -> bool {
        matches!(self.class(), CLASS_JMP | CLASS_JMP32) && self.op != CALL && self.op != EXIT
    }

    /// Slots this instruction takes (2 for `lddw`).
    pub fn width(&self) -> usize {
        if self.op == LDDW {
            2
        } else {
            1
        }
    }
}

/// Write `imm` into slot `pc`.
pub fn set_imm(code: &mut [u8], pc: usize, imm: u32) {
    code[pc * 8 + 4..pc * 8 + 8].copy_from_slice(&imm.to_le_bytes());
}

/// Write `src` into slot `pc`'s source register.
pub fn set_src(code: &mut [u8], pc: usize, src: u8) {
    code[pc * 8 + 1] = (code[pc * 8 + 1] & 0x0f) | (src << 4);
}

/// Write `off` into slot `pc`.
pub fn set_off(code: &mut [u8], pc: usize, off: i16) {
    code[pc * 8 + 2..pc * 8 + 4].copy_from_slice(&off.to_le_bytes());
}

/// Write a 64-bit value into the `lddw` at slot `pc` (low half in its imm, high half in the
/// next slot's).
pub fn set_imm64(code: &mut [u8], pc: usize, value: u64) {
    set_imm(code, pc, value as u32);
    set_imm(code, pc + 1, (value >> 32) as u32);
}
