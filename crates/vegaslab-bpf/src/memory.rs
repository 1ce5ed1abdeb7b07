//! Where an object's memory lives in the VM's address space.
//!
//! Two regions besides the stack:
//! - the read-only region (`.rodata*` sections, then the `.kconfig` values), one copy per
//!   loaded object, shared by its controllers;
//! - the arena, one per controller: `[ctx | sock | ack_sample | .data* | .bss*]`. `ctx` is
//!   `BPF_PROG`'s argument array (r1 points at it: one u64 per argument, `ctx[0]` the socket);
//!   `sock` is the socket block of [`crate::layout`]; `ack_sample` is `pkts_acked`'s sample.
//!
//! `.data` and `.bss` are per controller: in Linux they belong to the loaded object and all
//! its sockets share them (docs/decisions.md, "A BPF object's .bss is per controller").
//! The VM translates every access; one outside these regions is an access violation.

use crate::layout::{ACK_SAMPLE_SIZE, SOCK_SIZE};
use solana_sbpf::ebpf;

/// VM address of the read-only region (the region SBPF reserves for bytecode, which this
/// crate never maps: programs run from the executable, not from VM memory).
pub const READONLY_VM: u64 = ebpf::MM_BYTECODE_START;
/// VM address of a controller's arena.
pub const ARENA_VM: u64 = ebpf::MM_INPUT_START;

/// Byte offset of `ctx` (the hook's arguments) in the arena.
pub const CTX: usize = 0;
/// Room for the arguments: `BPF_PROG` passes at most a handful (`cong_avoid`: sk, ack, acked).
pub const CTX_SIZE: usize = 64;
/// Byte offset of the socket block in the arena.
pub const SOCK: usize = CTX + CTX_SIZE;
/// Byte offset of the ack_sample block in the arena.
pub const ACK: usize = SOCK + SOCK_SIZE;
/// Byte offset of the object's writable data (`.data*`, then `.bss*`) in the arena.
pub const DATA: usize = ACK + ACK_SAMPLE_SIZE;

/// VM address of the socket block (what `ctx[0]` holds).
pub const SOCK_VM: u64 = ARENA_VM + SOCK as u64;
/// VM address of the ack_sample block.
pub const ACK_VM: u64 = ARENA_VM + ACK as u64;

/// `n` rounded up to a multiple of 8 (sections and values are placed 8-aligned).
pub fn align8(n: usize) -> usize {
    n.div_ceil(8) * 8
}
