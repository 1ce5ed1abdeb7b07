//! A reader for the BTF an object carries (`.BTF`) and the CO-RE records of `.BTF.ext`: enough
//! to find the struct_ops map, name its hooks and resolve field relocations.
//!
//! Formats: the kernel's `Documentation/bpf/btf.rst` (type section: a 12-byte `struct
//! btf_type` per type, followed by kind-specific data; string section) and `.BTF.ext`'s
//! `core_relo` subsection (`struct bpf_core_relo`: insn_off, type_id, access_str_off, kind).
//! Only little-endian objects (what `clang -target bpf` writes on x86 and arm hosts) are read.
//! Every read is bounds-checked: a malformed section is an `Err` naming what is wrong, never a
//! panic.

/// One member of a struct or union.
#[derive(Debug, Clone)]
pub struct Member {
    pub name: String,
    pub type_id: u32,
    /// Offset of the member within its struct, in bits.
    pub bit_offset: u32,
    /// Width of a bitfield in bits; 0 for an ordinary member.
    pub bitfield_size: u32,
}

/// A BTF type's kind and its kind-specific data.
#[derive(Debug, Clone)]
pub enum Kind {
    Void,
    Int { size: u32, signed: bool },
    Ptr(u32),
    Array { elem: u32, nelems: u32 },
    Struct { size: u32, members: Vec<Member> },
    Union { size: u32, members: Vec<Member> },
    Enum { size: u32 },
    Fwd,
    Typedef(u32),
    /// `volatile`, `const`, `restrict`, `type_tag`: the type they qualify.
    Modifier(u32),
    Func,
    FuncProto,
    /// A global variable of the given type.
    Var(u32),
    /// A data section's variables: (type id of the VAR, offset, size).
    DataSec { vars: Vec<(u32, u32, u32)> },
    Float(u32),
    DeclTag,
}

/// A named type.
#[derive(Debug, Clone)]
pub struct Type {
    pub name: String,
    pub kind: Kind,
}

/// The types of one object, indexed by type id (0 is `void`).
pub struct Btf {
    types: Vec<Type>,
}

/// The deepest chain of typedefs, modifiers or nested arrays followed before giving up (a
/// well-formed object needs a handful; a crafted one could loop).
const MAX_DEPTH: usize = 64;

fn u32_at(d: &[u8], o: usize) -> Result<u32, String> {
    o.checked_add(4)
        .and_then(|end| d.get(o..end))
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .ok_or_else(|| format!("the BTF data ends inside a record at byte {o}"))
}

fn slice(d: &[u8], start: usize, len: usize, what: &str) -> Result<Vec<u8>, String> {
    start
        .checked_add(len)
        .and_then(|end| d.get(start..end))
        .map(<[u8]>::to_vec)
        .ok_or_else(|| format!("the BTF {what} lies outside the section"))
}

fn string_at(strings: &[u8], off: u32) -> String {
    let s = strings.get(off as usize..).unwrap_or(&[]);
    let end = s.iter().position(|&c| c == 0).unwrap_or(s.len());
    String::from_utf8_lossy(&s[..end]).into_owned()
}

impl Btf {
    /// Parse a `.BTF` section.
    pub fn parse(d: &[u8]) -> Result<Btf, String> {
        if u32_at(d, 0)? & 0xffff != 0xeb9f {
            return Err("the .BTF section does not start with the little-endian BTF magic 0xeb9f".into());
        }
        let hdr_len = u32_at(d, 4)? as usize;
        let (type_off, type_len) = (u32_at(d, 8)? as usize, u32_at(d, 12)? as usize);
        let (str_off, str_len) = (u32_at(d, 16)? as usize, u32_at(d, 20)? as usize);
        let ts = slice(d, hdr_len.saturating_add(type_off), type_len, "type section")?;
        let strings = slice(d, hdr_len.saturating_add(str_off), str_len, "string section")?;
        let mut types = vec![Type { name: String::new(), kind: Kind::Void }];
        let mut o = 0usize;
        while o < ts.len() {
            let name = string_at(&strings, u32_at(&ts, o)?);
            let info = u32_at(&ts, o + 4)?;
            let size_or_type = u32_at(&ts, o + 8)?;
            o += 12;
            let vlen = (info & 0xffff) as usize;
            let kflag = info >> 31 == 1;
            let members = |o: &mut usize| -> Result<Vec<Member>, String> {
                let mut members = Vec::with_capacity(vlen);
                for _ in 0..vlen {
                    let off = u32_at(&ts, *o + 8)?;
                    let (bit_offset, bitfield_size) = if kflag { (off & 0xff_ffff, off >> 24) } else { (off, 0) };
                    members.push(Member { name: string_at(&strings, u32_at(&ts, *o)?), type_id: u32_at(&ts, *o + 4)?, bit_offset, bitfield_size });
                    *o += 12;
                }
                Ok(members)
            };
            let kind = match (info >> 24) & 0x1f {
                1 => {
                    let encoding = u32_at(&ts, o)?;
                    o += 4;
                    Kind::Int { size: size_or_type, signed: (encoding >> 24) & 1 == 1 }
                }
                2 => Kind::Ptr(size_or_type),
                3 => {
                    let (elem, nelems) = (u32_at(&ts, o)?, u32_at(&ts, o + 8)?);
                    o += 12;
                    Kind::Array { elem, nelems }
                }
                4 => Kind::Struct { size: size_or_type, members: members(&mut o)? },
                5 => Kind::Union { size: size_or_type, members: members(&mut o)? },
                6 => {
                    o += 8 * vlen;
                    Kind::Enum { size: size_or_type }
                }
                7 => Kind::Fwd,
                8 => Kind::Typedef(size_or_type),
                9 | 10 | 11 | 18 => Kind::Modifier(size_or_type),
                12 => Kind::Func,
                13 => {
                    o += 8 * vlen;
                    Kind::FuncProto
                }
                14 => {
                    o += 4;
                    Kind::Var(size_or_type)
                }
                15 => {
                    let mut vars = Vec::with_capacity(vlen);
                    for _ in 0..vlen {
                        vars.push((u32_at(&ts, o)?, u32_at(&ts, o + 4)?, u32_at(&ts, o + 8)?));
                        o += 12;
                    }
                    Kind::DataSec { vars }
                }
                16 => Kind::Float(size_or_type),
                17 => {
                    o += 4;
                    Kind::DeclTag
                }
                19 => {
                    o += 12 * vlen;
                    Kind::Enum { size: size_or_type }
                }
                k => return Err(format!("the .BTF section holds a type of unknown kind {k}")),
            };
            types.push(Type { name, kind });
        }
        Ok(Btf { types })
    }

    /// The type with id `id`.
    pub fn get(&self, id: u32) -> Result<&Type, String> {
        self.types.get(id as usize).ok_or_else(|| format!("the BTF refers to type id {id}, beyond its {} types", self.types.len()))
    }

    /// `id` with typedefs and modifiers (`const`, `volatile`, ...) skipped.
    pub fn resolve(&self, mut id: u32) -> Result<u32, String> {
        for _ in 0..MAX_DEPTH {
            match self.get(id)?.kind {
                Kind::Typedef(t) | Kind::Modifier(t) => id = t,
                _ => return Ok(id),
            }
        }
        Err(format!("the BTF's typedef chain from type id {id} does not end"))
    }

    /// The size in bytes of a value of type `id`.
    pub fn size_of(&self, id: u32) -> Result<u32, String> {
        let mut id = self.resolve(id)?;
        let mut count: u32 = 1;
        for _ in 0..MAX_DEPTH {
            let size = match &self.get(id)?.kind {
                Kind::Int { size, .. } | Kind::Struct { size, .. } | Kind::Union { size, .. } | Kind::Enum { size } | Kind::Float(size) => *size,
                Kind::Ptr(_) => 8,
                Kind::Array { elem, nelems } => {
                    count = count.checked_mul(*nelems).ok_or("a BTF array's size overflows")?;
                    id = self.resolve(*elem)?;
                    continue;
                }
                _ => return Err(format!("the BTF type {} has no size", self.get(id)?.name)),
            };
            return count.checked_mul(size).ok_or_else(|| "a BTF array's size overflows".to_string());
        }
        Err(format!("the BTF's array nesting from type id {id} does not end"))
    }

    /// Every type, in id order (id 0, `void`, first).
    pub fn types(&self) -> &[Type] {
        &self.types
    }
}

/// One CO-RE relocation record of `.BTF.ext`.
#[derive(Debug, Clone)]
pub struct CoreRelo {
    /// The program section the instruction is in.
    pub section: String,
    /// Byte offset of the instruction within its section.
    pub insn_off: u32,
    /// The local (object's) BTF type the access string starts from.
    pub type_id: u32,
    /// The access string, `"0:12:3"`: an array index on the root, then member or array indices.
    pub access: String,
    /// `enum bpf_core_relo_kind`: 0 byte offset, 1 byte size, 2 exists, 3 signed, 4 lshift,
    /// 5 rshift; 6-12 are type and enum relocations.
    pub kind: u32,
}

/// The CO-RE records of a `.BTF.ext` section (its strings are the `.BTF` section's).
pub fn parse_core_relos(ext: &[u8], btf_section: &[u8]) -> Result<Vec<CoreRelo>, String> {
    let hdr_len = u32_at(ext, 4)? as usize;
    if hdr_len < 32 {
        return Ok(vec![]); // a BTF.ext without the core_relo subsection
    }
    let (off, len) = (u32_at(ext, 24)? as usize, u32_at(ext, 28)? as usize);
    let d = slice(ext, hdr_len.saturating_add(off), len, "CO-RE relocation subsection")?;
    if d.is_empty() {
        return Ok(vec![]);
    }
    let strings = {
        let hdr = u32_at(btf_section, 4)? as usize;
        slice(btf_section, hdr.saturating_add(u32_at(btf_section, 16)? as usize), u32_at(btf_section, 20)? as usize, "string section")?
    };
    let record = u32_at(&d, 0)? as usize;
    if record < 16 {
        return Err(format!("the .BTF.ext CO-RE records are {record} bytes, fewer than the 16 of struct bpf_core_relo"));
    }
    let mut o = 4;
    let mut out = vec![];
    while o < d.len() {
        let section = string_at(&strings, u32_at(&d, o)?);
        let n = u32_at(&d, o + 4)? as usize;
        o += 8;
        for _ in 0..n {
            out.push(CoreRelo {
                section: section.clone(),
                insn_off: u32_at(&d, o)?,
                type_id: u32_at(&d, o + 4)?,
                access: string_at(&strings, u32_at(&d, o + 8)?),
                kind: u32_at(&d, o + 12)?,
            });
            o = o.checked_add(record).ok_or("the .BTF.ext CO-RE records overflow")?;
        }
    }
    Ok(out)
}
