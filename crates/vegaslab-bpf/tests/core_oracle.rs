//! The loader's CO-RE relocations agree with aya-obj's (a maintained implementation of
//! libbpf's rules) when aya-obj relocates the same objects against a BTF that describes the
//! simulator's socket (`layout::FIELDS`): every instruction either relocation touches gets the
//! same offset and immediate.
//!
//! aya-obj does not parse struct_ops programs, so the test renames their section to one it
//! reads (`kprobe`, padded to the same length) in the ELF and BTF string tables first.

mod common;

use aya_obj::btf::Btf;
use vegaslab_bpf::insn::{CALL, LDDW};
use vegaslab_bpf::layout::{ACK_SAMPLE_SIZE, FIELDS, SOCK_SIZE};
use vegaslab_bpf::loader;

/// A raw BTF blob: the socket's structs with the simulator's offsets, each embedding member
/// (`tcp_sock.inet_conn`, ...) at offset 0, overlapping its struct's own fields as BTF allows.
fn simulator_btf() -> Vec<u8> {
    let mut strings: Vec<u8> = vec![0];
    let mut name = |n: &str| {
        let at = strings.len() as u32;
        strings.extend_from_slice(n.as_bytes());
        strings.push(0);
        at
    };
    let mut types: Vec<u32> = vec![];
    // ids 1-4: the integers; id 5: u64[13], the private area
    let ints = [("unsigned char", 1, false), ("unsigned int", 4, false), ("long long unsigned int", 8, false), ("int", 4, true)];
    for (n, size, signed) in ints {
        types.extend([name(n), 1 << 24, size, (u32::from(signed) << 24) | (size * 8)]);
    }
    let int_id = |size: u32, signed: bool| match (size, signed) {
        (1, _) => 1,
        (8, _) => 3,
        (_, true) => 4,
        _ => 2,
    };
    types.extend([0, 3 << 24, 0, 3, 2, 13]);
    let structs = ["sock", "inet_sock", "inet_connection_sock", "tcp_sock", "ack_sample"];
    let struct_id = |n: &str| 6 + structs.iter().position(|s| *s == n).unwrap() as u32;
    for st in structs {
        let mut members: Vec<(u32, u32, u32, u32)> = vec![]; // name, type, bit offset, bitfield bits
        let embedded = match st {
            "inet_sock" => Some(("sk", "sock")),
            "inet_connection_sock" => Some(("icsk_inet", "inet_sock")),
            "tcp_sock" => Some(("inet_conn", "inet_connection_sock")),
            _ => None,
        };
        if let Some((member, of)) = embedded {
            members.push((name(member), struct_id(of), 0, 0));
        }
        for f in FIELDS.iter().filter(|f| f.strukt == st) {
            let ty = if f.member == "icsk_ca_priv" { 5 } else { int_id(f.size, f.signed) };
            let (pos, bits) = f.bits.map_or((0, 0), |b| (b.pos, b.len));
            members.push((name(f.member), ty, f.offset * 8 + pos, bits));
        }
        let kflag = u32::from(members.iter().any(|m| m.3 != 0));
        let size = if st == "ack_sample" { ACK_SAMPLE_SIZE } else { SOCK_SIZE } as u32;
        types.extend([name(st), (kflag << 31) | (4 << 24) | members.len() as u32, size]);
        for (n, t, bit_off, bits) in members {
            types.extend([n, t, if kflag == 1 { (bits << 24) | bit_off } else { bit_off }]);
        }
    }
    let types: Vec<u8> = types.iter().flat_map(|x| x.to_le_bytes()).collect();
    let mut out = vec![0x9f, 0xeb, 1, 0];
    for x in [24, 0, types.len() as u32, types.len() as u32, strings.len() as u32] {
        out.extend_from_slice(&x.to_le_bytes());
    }
    out.extend_from_slice(&types);
    out.extend_from_slice(&strings);
    out
}

/// `struct_ops` renamed to `kprobe` wherever it is a whole string (or the tail of
/// `.relstruct_ops`, which the ELF string table shares with the section's own name).
fn renamed(bytes: &[u8]) -> Vec<u8> {
    let (from, to) = (b"struct_ops\0", b"kprobe\0\0\0\0\0");
    let mut out = bytes.to_vec();
    let mut i = 1;
    while i + from.len() <= out.len() {
        if &out[i..i + from.len()] == from && matches!(out[i - 1], 0 | b'l' | b'.') {
            out[i..i + from.len()].copy_from_slice(to);
            i += from.len();
        } else {
            i += 1;
        }
    }
    out
}

/// An instruction's opcode, offset and immediate.
type Fields = (u8, i16, i32);

/// aya-obj's instructions of each function: (name, before CO-RE, after).
fn aya_functions(bytes: &[u8]) -> Vec<(String, Vec<Fields>, Vec<Fields>)> {
    let data = renamed(bytes);
    let before = aya_obj::Object::parse(&data).expect("aya-obj parses the renamed object");
    let mut after = aya_obj::Object::parse(&data).unwrap();
    let target = Btf::parse(&simulator_btf(), object::Endianness::Little).expect("the simulator's BTF");
    after.relocate_btf(&target).unwrap_or_else(|e| panic!("aya-obj relocate_btf: {e}"));
    let insns = |f: &aya_obj::Function| f.instructions.iter().map(|i| (i.code, i.off, i.imm)).collect::<Vec<_>>();
    after.functions.values().map(|f| (f.name.clone(), insns(before.functions.values().find(|g| g.name == f.name).unwrap()), insns(f))).collect()
}

fn core_agrees_with_aya_obj(rel: &str) {
    let Some(bytes) = common::object_bytes(rel) else { return };
    let image = loader::load(&bytes, None, vegaslab_bpf::DEFAULT_HZ).unwrap_or_else(|e| panic!("{rel}: {e}"));
    let aya = aya_functions(&bytes);
    let mut patched = 0;
    for p in &image.programs {
        let (_, before, after) = aya.iter().find(|(n, _, _)| *n == p.symbol).unwrap_or_else(|| panic!("{rel}: aya-obj has no {}", p.symbol));
        let mine: Vec<Fields> = (0..p.relocated.len() / 8).map(|k| vegaslab_bpf::insn::Insn::at(&p.relocated, k)).map(|i| (i.op, i.off, i.imm)).collect();
        assert_eq!(mine.len(), after.len(), "{rel} {}", p.symbol);
        for k in 0..mine.len() {
            // Calls and 64-bit loads are bound to the simulator's builtins and memory instead.
            let bound = matches!(before[k].0, CALL | LDDW) || (k > 0 && before[k - 1].0 == LDDW);
            if bound {
                continue;
            }
            patched += usize::from(after[k] != before[k]);
            assert_eq!(mine[k], after[k], "{rel} {} instruction {k}: aya-obj {:?} (was {:?}), the loader {:?}", p.symbol, after[k], before[k], mine[k]);
        }
    }
    assert!(patched > 10, "{rel}: only {patched} instructions relocated");
}

#[test]
fn bpf_cubic_is_relocated_as_aya_obj_relocates_it() {
    core_agrees_with_aya_obj("selftests/bpf_cubic.bpf.o");
}

#[test]
fn the_vegas_family_is_relocated_as_aya_obj_relocates_it() {
    for rel in ["vl_vegas.bpf.o", "vl_vegas_a.bpf.o", "vl_adavegas.bpf.o", "vl_vegas_1.bpf.o", "vl_vegas_8.bpf.o"] {
        core_agrees_with_aya_obj(rel);
    }
}
