//! CO-RE ("compile once, run everywhere") field relocations resolved against the simulator's
//! socket layout ([`crate::layout`]) instead of a kernel's BTF.
//!
//! A record names an instruction, a local root type and an access string (`"0:12:3"`: index
//! 0 on the root, then member 12, then member 3). The path is followed through the object's
//! own BTF to the (declaring struct, member) it ends on, which [`crate::layout::find`] places.
//! Kinds 0-5 (byte offset, byte size, exists, signed, left shift, right shift) are computed as
//! libbpf does (tools/lib/bpf/relo_core.c, `bpf_core_calc_field_relo`), bitfields included;
//! type and enum kinds (6-12) are refused. A field the simulator does not offer is refused
//! naming it, where libbpf would poison the instruction silently.

use crate::btf::{Btf, CoreRelo, Kind};
use crate::layout::{self, Field, EMBEDDED};

/// Names of `enum bpf_core_relo_kind`, by value.
const KIND_NAMES: [&str; 13] = [
    "field_byte_offset",
    "field_byte_size",
    "field_exists",
    "field_signed",
    "field_lshift_u64",
    "field_rshift_u64",
    "type_id_local",
    "type_id_target",
    "type_exists",
    "type_size",
    "enumval_exists",
    "enumval_value",
    "type_matches",
];

/// The member an access string ends on, as the object's BTF declares it.
#[derive(Debug)]
pub struct Access {
    /// (declaring struct, member) for each member step.
    pub path: Vec<(String, String)>,
    /// An array index after the last member (`icsk_ca_priv[i]`), in bytes from its start.
    pub index_bytes: u32,
    /// The last member's local bit offset from the start of its struct.
    pub local_bit_offset: u32,
    /// The last member's local width in bytes and bitfield width in bits (0: not a bitfield).
    pub local_size: u32,
    pub local_bitfield: u32,
    /// Local byte offset of the whole access from the root (what the instruction holds now).
    pub local_offset: u32,
}

/// Follow `relo`'s access string through the object's BTF.
pub fn access(btf: &Btf, relo: &CoreRelo) -> Result<Access, String> {
    let bad = || format!("the object's CO-RE access string \"{}\" is malformed", relo.access);
    let idx: Vec<u32> = relo.access.split(':').map(|s| s.parse().map_err(|_| bad())).collect::<Result<_, _>>()?;
    let mut id = btf.resolve(relo.type_id)?;
    let root_size = btf.size_of(id).unwrap_or(0);
    let mut bits: u64 = u64::from(idx[0]).saturating_mul(u64::from(root_size)).saturating_mul(8);
    let mut a = Access { path: vec![], index_bytes: 0, local_bit_offset: 0, local_size: 0, local_bitfield: 0, local_offset: 0 };
    for &i in &idx[1..] {
        id = btf.resolve(id)?;
        let t = btf.get(id)?;
        match &t.kind {
            Kind::Struct { members, .. } | Kind::Union { members, .. } => {
                if a.index_bytes != 0 {
                    return Err(format!("the object reaches into an element of {}, which the simulator does not offer", a.path.last().map_or(String::new(), |(s, m)| format!("{s}.{m}"))));
                }
                let m = members.get(i as usize).ok_or_else(bad)?;
                a.path.push((t.name.clone(), m.name.clone()));
                bits = bits.saturating_add(u64::from(m.bit_offset));
                a.local_bit_offset = m.bit_offset;
                a.local_bitfield = m.bitfield_size;
                a.local_size = btf.size_of(m.type_id)?;
                id = m.type_id;
            }
            Kind::Array { elem, .. } => {
                let size = btf.size_of(*elem)?;
                a.index_bytes = i.checked_mul(size).and_then(|b| b.checked_add(a.index_bytes)).ok_or_else(bad)?;
                bits = bits.saturating_add(u64::from(i) * u64::from(size) * 8);
                id = *elem;
            }
            _ => return Err(bad()),
        }
    }
    a.local_offset = u32::try_from(bits / 8).map_err(|_| bad())?;
    Ok(a)
}

/// The value to patch into the instruction for `relo`, and the local value the instruction
/// holds now (for byte offsets: the check libbpf also makes).
pub fn resolve(btf: &Btf, relo: &CoreRelo, program: &str, shifted: &[(String, String)]) -> Result<(u64, u64), String> {
    let a = access(btf, relo)?;
    let Some((strukt, member)) = a.path.last().cloned() else {
        return Err(format!("the object's {program} program relocates a whole type (CO-RE {}), which the simulator does not support", kind_name(relo.kind)));
    };
    if relo.kind >= 6 {
        return Err(format!("the object's {program} program uses a CO-RE {} relocation on {strukt}.{member}, which the simulator does not support", kind_name(relo.kind)));
    }
    for (s, m) in &a.path[..a.path.len() - 1] {
        if !EMBEDDED.contains(&(s.as_str(), m.as_str())) {
            return Err(not_offered(program, s, m));
        }
    }
    let Some(f) = layout::find(&strukt, &member) else {
        if relo.kind == 2 {
            return Ok((0, 1)); // bpf_core_field_exists(): no
        }
        return Err(not_offered(program, &strukt, &member));
    };
    check_shape(&a, f, &strukt, &member, shifted)?;
    let value = field_value(f, a.index_bytes, relo.kind)?;
    Ok((value, u64::from(a.local_offset)))
}

fn kind_name(kind: u32) -> String {
    KIND_NAMES.get(kind as usize).map_or_else(|| format!("kind {kind}"), |n| (*n).to_string())
}

fn not_offered(program: &str, strukt: &str, member: &str) -> String {
    format!(
        "the object reads {strukt}.{member} in {program}, which the simulator's socket does not offer (it offers: {})",
        crate::abi::list(layout::FIELDS.iter().map(|f| format!("{}.{}", f.strukt, f.member)))
    )
}

/// The object's idea of the field must be the simulator's: same width, and a bitfield at the
/// same bit position unless the program shifts it by relocated amounts (`shifted`: fields
/// with a `field_lshift_u64` record in the program, `BPF_CORE_READ_BITFIELD`).
fn check_shape(a: &Access, f: &Field, strukt: &str, member: &str, shifted: &[(String, String)]) -> Result<(), String> {
    match f.bits {
        None if a.local_bitfield != 0 => Err(format!("the object declares {strukt}.{member} as a bitfield, which the simulator's socket holds as a whole field")),
        None if a.index_bytes == 0 && a.local_size != f.size => {
            Err(format!("the object's {strukt}.{member} is {} bytes wide and the simulator's {}: rebuild it against a Linux 6.12 vmlinux.h", a.local_size, f.size))
        }
        Some(b) if a.local_bitfield != b.len => Err(format!("the object's bitfield {strukt}.{member} is {} bits wide and the simulator's {}", a.local_bitfield, b.len)),
        Some(b) if a.local_bit_offset % 8 != b.pos && !shifted.iter().any(|(s, m)| s == strukt && m == member) => Err(format!(
            "the object reads bitfield {strukt}.{member} at bit {} of its byte without BPF_CORE_READ_BITFIELD, and the simulator keeps it at bit {}",
            a.local_bit_offset % 8,
            b.pos
        )),
        _ => Ok(()),
    }
}

/// libbpf's arithmetic for field kinds 0-5 on the simulator's field (little endian).
fn field_value(f: &Field, index_bytes: u32, kind: u32) -> Result<u64, String> {
    let (byte_off, byte_size, bit_off, bit_size) = match f.bits {
        None => {
            if index_bytes >= f.size {
                return Err(format!("the object indexes {}.{} beyond its {} bytes", f.strukt, f.member, f.size));
            }
            let off = f.offset + index_bytes;
            (off, f.size - index_bytes, off * 8, (f.size - index_bytes) * 8)
        }
        Some(b) => {
            let bit_off = f.offset * 8 + b.pos;
            let mut size = f.size;
            let mut off = bit_off / 8 / size * size;
            while bit_off + b.len - off * 8 > size * 8 {
                size *= 2;
                off = bit_off / 8 / size * size;
            }
            (off, size, bit_off, b.len)
        }
    };
    Ok(match kind {
        0 => u64::from(byte_off),
        1 => u64::from(byte_size),
        2 => 1,
        3 => u64::from(f.signed),
        4 => u64::from(64 - (bit_off + bit_size - byte_off * 8)),
        _ => u64::from(64 - bit_size),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_one_bit_field_at_bit_3_shifts_as_libbpf_computes() {
        let f = layout::IS_CWND_LIMITED;
        assert_eq!(field_value(&f, 0, 0).unwrap(), u64::from(f.offset));
        assert_eq!(field_value(&f, 0, 1).unwrap(), 1);
        // the bit ends up in bit 63 after << 60, then >> 63 isolates it
        assert_eq!(field_value(&f, 0, 4).unwrap(), 60);
        assert_eq!(field_value(&f, 0, 5).unwrap(), 63);
    }

    #[test]
    fn a_signed_field_says_so() {
        assert_eq!(field_value(&layout::ACK_RTT_US, 0, 3).unwrap(), 1);
        assert_eq!(field_value(&layout::SND_CWND, 0, 3).unwrap(), 0);
    }
}
