//! From ELF bytes to programs ready for the VM: the struct_ops map and its hooks, each hook's
//! instructions with kfunc, helper, global-data and CO-RE relocations applied, checked
//! ([`crate::verify`]) and rewritten to Linux's semantics ([`crate::rewrite`]).
//!
//! The object is what `clang -O2 -g -target bpf` writes for `SEC("struct_ops")` programs and a
//! `SEC(".struct_ops")` `struct tcp_congestion_ops`: programs in a `struct_ops` text section,
//! the map's bytes in `.struct_ops` with relocations (`.rel.struct_ops`) from each hook's slot
//! to its program, the map described by BTF (`DATASEC .struct_ops` -> `VAR` -> struct). libbpf
//! does the same work for the kernel (tools/lib/bpf/libbpf.c, `bpf_object__collect_st_ops_relos`
//! and `bpf_object__relocate`); aya-obj cannot parse struct_ops objects (docs/decisions.md,
//! "BPF objects are loaded by the crate's own loader").

use crate::abi;
use crate::btf::{self, Btf, Kind};
use crate::core;
use crate::insn::{self, Insn, CALL, LDDW};
use crate::memory::{self, ARENA_VM, READONLY_VM};
use crate::{rewrite, verify};
use object::{Object, ObjectSection, ObjectSymbol, RelocationTarget, SectionIndex};
use std::collections::HashMap;

/// A program for one hook.
pub struct Program {
    /// Linux's name of the hook (`cong_avoid`).
    pub hook: &'static str,
    /// The program's symbol in the object.
    pub symbol: String,
    /// The instructions relocated (kfunc, helper, data and CO-RE), before the rewriting for
    /// the VM: what libbpf would hand the kernel, but for the call and data targets.
    pub relocated: Vec<u8>,
    /// Instructions, ready for the VM.
    pub code: Vec<u8>,
}

/// A loaded object.
pub struct Image {
    /// The struct_ops `name` (what Linux registers).
    pub ops_name: String,
    /// The struct_ops map that runs: its variable's name.
    pub map_name: String,
    pub programs: Vec<Program>,
    /// The read-only region: `.rodata*` sections, then the `.kconfig` values.
    pub readonly: Vec<u8>,
    /// The initial bytes of the writable data (`.data*`, `.bss*`), placed at
    /// [`memory::DATA`] in each controller's arena.
    pub writable: Vec<u8>,
}

/// The most bytes an object's data sections may hold together (`.rodata`, `.data`, `.bss`): far more than a
/// congestion control needs (bpf_cubic's cube-root table is 64 bytes), few enough that every
/// controller's copy is cheap.
const MAX_DATA: u64 = 1 << 20;

fn elf_error(e: object::Error) -> String {
    format!("the file is not a valid ELF object ({e})")
}

/// Where a data section lives: its VM address.
struct Placement {
    sections: HashMap<SectionIndex, u64>,
    readonly: Vec<u8>,
    writable: Vec<u8>,
    kconfig: HashMap<String, u64>,
}

impl Placement {
    /// `.rodata*` in the read-only region, `.data*` and `.bss*` in the arena; other data
    /// sections (`.maps`, ...) are placed nowhere, and a reference to them is refused.
    fn of(f: &object::File) -> Result<Placement, String> {
        let mut p = Placement { sections: HashMap::new(), readonly: vec![], writable: vec![], kconfig: HashMap::new() };
        for s in f.sections() {
            let name = s.name().map_err(elf_error)?;
            let readonly = name.starts_with(".rodata");
            if !(readonly || name.starts_with(".data") || name.starts_with(".bss")) {
                continue;
            }
            if s.relocations().next().is_some() {
                return Err(format!("the object's section {name} holds relocated pointers, which the simulator does not support"));
            }
            // One bound for all data sections together: a `.bss` takes no bytes in the file, so
            // many small headers could otherwise ask for any amount of memory.
            let placed = p.readonly.len() as u64 + p.writable.len() as u64;
            if placed.saturating_add(s.size()) > MAX_DATA {
                return Err(format!("the object's data sections hold more than the {MAX_DATA} bytes the simulator gives an object's data (at section {name})"));
            }
            let bytes = if s.kind() == object::SectionKind::UninitializedData { vec![0; s.size() as usize] } else { s.data().map_err(elf_error)?.to_vec() };
            let (region, base) = if readonly { (&mut p.readonly, READONLY_VM) } else { (&mut p.writable, ARENA_VM + memory::DATA as u64) };
            let at = memory::align8(region.len());
            region.resize(at, 0);
            region.extend_from_slice(&bytes);
            p.sections.insert(s.index(), base + at as u64);
        }
        Ok(p)
    }

    /// The VM address of kernel config value `name`, placed in the read-only region on first use.
    fn kconfig(&mut self, name: &str, hz: u32) -> Result<u64, String> {
        if let Some(&a) = self.kconfig.get(name) {
            return Ok(a);
        }
        if !abi::KCONFIG.contains(&name) {
            if !name.starts_with("CONFIG_") {
                return Err(format!("the object refers to the kernel symbol {name} (an extern __ksym variable), which the simulator does not provide"));
            }
            return Err(format!("the object reads kernel config {name}, which the simulator does not provide (it provides: {})", abi::list(abi::KCONFIG)));
        }
        let at = memory::align8(self.readonly.len());
        self.readonly.resize(at, 0);
        self.readonly.extend_from_slice(&u64::from(hz).to_le_bytes());
        let addr = READONLY_VM + at as u64;
        self.kconfig.insert(name.to_string(), addr);
        Ok(addr)
    }
}

/// The struct_ops maps: (BTF VAR name, type id of the struct, ELF section name).
fn struct_ops_maps(btf: &Btf) -> Vec<(String, u32, String)> {
    let mut maps = vec![];
    for t in btf.types() {
        if let Kind::DataSec { vars } = &t.kind {
            if t.name == ".struct_ops" || t.name == ".struct_ops.link" {
                for &(var, _, _) in vars {
                    if let Ok(v) = btf.get(var) {
                        if let Kind::Var(st) = v.kind {
                            maps.push((v.name.clone(), st, t.name.clone()));
                        }
                    }
                }
            }
        }
    }
    maps
}

/// Load `bytes`: the map named `map` (or the only one), `CONFIG_HZ` = `hz`.
pub fn load(bytes: &[u8], map: Option<&str>, hz: u32) -> Result<Image, String> {
    let f = object::File::parse(bytes).map_err(|e| format!("the file is not an ELF object ({e})"))?;
    if f.architecture() != object::Architecture::Bpf {
        return Err(format!("the ELF object is for {:?}, not BPF (compile with clang -target bpf)", f.architecture()));
    }
    if !f.is_little_endian() {
        return Err("the BPF object is big-endian, which the simulator does not read (compile with -target bpfel)".into());
    }
    let btf_section = f.section_by_name(".BTF").ok_or("the object has no .BTF section (compile with clang -g)")?.data().map_err(elf_error)?;
    let btf = Btf::parse(btf_section)?;
    let relos = match f.section_by_name(".BTF.ext") {
        Some(s) => btf::parse_core_relos(s.data().map_err(elf_error)?, btf_section)?,
        None => vec![],
    };

    // The struct_ops map.
    let maps = struct_ops_maps(&btf);
    let names = || abi::list(maps.iter().map(|m| m.0.as_str()));
    let chosen = match map {
        Some(want) => maps.iter().find(|m| m.0 == want).ok_or_else(|| format!("the object has no struct_ops map {want} (it has: {})", names()))?,
        None if maps.len() == 1 => &maps[0],
        None if maps.is_empty() => return Err("the object defines no struct_ops map (SEC(\".struct_ops\")): it is not a congestion control".into()),
        None => return Err(format!("the object defines {} struct_ops maps ({}): name the one to run", maps.len(), names())),
    };
    let (map_name, map_type, section_name) = chosen;
    let st = btf.get(btf.resolve(*map_type)?)?;
    let Kind::Struct { members, .. } = &st.kind else { return Err(format!("the struct_ops map {map_name} is not a struct")) };
    if st.name != "tcp_congestion_ops" {
        return Err(format!("the struct_ops map {map_name} is a struct {}, not a congestion control (struct tcp_congestion_ops)", st.name));
    }
    let ops = f.section_by_name(section_name).ok_or_else(|| format!("the object has no {section_name} section for its struct_ops map {map_name}"))?;
    let ops_data = ops.data().map_err(elf_error)?;
    // The DATASEC's offsets are 0 in clang's output (libbpf fixes them up): the ELF symbol
    // of the map gives its place in the section.
    let map_off = f
        .symbols()
        .find(|s| s.name() == Ok(map_name.as_str()) && s.section_index() == Some(ops.index()))
        .map(|s| s.address())
        .ok_or_else(|| format!("the object has no symbol for its struct_ops map {map_name}"))?;
    let mut slot_program = HashMap::new();
    for (off, r) in ops.relocations() {
        if let RelocationTarget::Symbol(si) = r.target() {
            slot_program.insert(off, si);
        }
    }
    let mut ops_name = String::new();
    let mut hooks = vec![];
    for m in members {
        let at = map_off.saturating_add(u64::from(m.bit_offset / 8));
        if let Some(sym) = slot_program.get(&at) {
            let hook = abi::HOOKS.iter().find(|h| **h == m.name).ok_or_else(|| {
                format!("the object's struct_ops map {map_name} defines the hook {}, which the simulator does not call (it calls: {})", m.name, abi::list(abi::HOOKS))
            })?;
            hooks.push((*hook, *sym));
        } else if m.name == "name" {
            let raw = ops_data.get(at as usize..(at as usize).saturating_add(16)).ok_or("the object's struct_ops map lies outside its section")?;
            ops_name = String::from_utf8_lossy(&raw[..raw.iter().position(|&c| c == 0).unwrap_or(raw.len())]).into_owned();
        }
    }
    if ops_name.is_empty() {
        return Err(format!("the object's struct_ops map {map_name} has no name"));
    }
    if let Some(missing) = abi::REQUIRED_HOOKS.iter().find(|h| !hooks.iter().any(|(have, _)| have == *h)) {
        return Err(format!(
            "the object's struct_ops map {map_name} has no {missing} program, which Linux requires of every congestion control ({}; the kernel refuses it too)",
            abi::list(abi::REQUIRED_HOOKS)
        ));
    }

    let mut place = Placement::of(&f)?;
    let mut programs = vec![];
    for (hook, sym) in hooks {
        let sym = f.symbol_by_index(sym).map_err(elf_error)?;
        let fname = sym.name().map_err(elf_error)?.to_string();
        let section = f.section_by_index(sym.section_index().ok_or_else(|| format!("the object's program {fname} is not defined in it"))?).map_err(elf_error)?;
        let section_name = section.name().map_err(elf_error)?.to_string();
        let data = section.data().map_err(elf_error)?;
        let (start, len) = (sym.address() as usize, sym.size() as usize);
        let mut code = start.checked_add(len).and_then(|end| data.get(start..end)).ok_or_else(|| format!("the object's program {fname} lies outside its section"))?.to_vec();
        // ELF relocations inside the program: kfunc calls and global data.
        let mut kfunc_calls = vec![];
        let mut relocated = vec![];
        for (off, r) in section.relocations() {
            // Only relocations at an instruction of this program (a crafted offset may be anything).
            let Some(rel) = usize::try_from(off).ok().and_then(|o| o.checked_sub(start)).filter(|r| r.saturating_add(8) <= len && r % 8 == 0) else {
                continue;
            };
            let RelocationTarget::Symbol(si) = r.target() else { continue };
            let target = f.symbol_by_index(si).map_err(elf_error)?;
            let pc = rel / 8;
            if Insn::at(&code, pc).op == CALL && target.is_undefined() {
                kfunc_calls.push(pc);
            }
            relocated.push((pc, target));
        }
        verify::check(hook, &code, &kfunc_calls)?;
        // Helper calls: Linux's helper id becomes the VM's key for the builtin.
        for pc in 0..code.len() / 8 {
            let i = Insn::at(&code, pc);
            if i.op == CALL && i.src == 0 {
                let name = abi::HELPERS.iter().find(|(id, _)| *id == i.imm as u32).map(|(_, n)| *n).expect("verified helper");
                insn::set_imm(&mut code, pc, abi::builtin_key(name));
            }
        }
        for (pc, target) in relocated {
            let i = Insn::at(&code, pc);
            let tname = target.name().map_err(elf_error)?.to_string();
            match i.op {
                CALL => {
                    if !abi::KFUNCS.contains(&tname.as_str()) {
                        return Err(format!("the object calls kfunc {tname} from {hook}, which the simulator does not provide (it provides: {})", abi::list(abi::KFUNCS)));
                    }
                    insn::set_src(&mut code, pc, 0);
                    insn::set_imm(&mut code, pc, abi::builtin_key(&tname));
                }
                LDDW => {
                    let addr = if target.is_undefined() {
                        place.kconfig(&tname, hz)?
                    } else {
                        let ti = target.section_index().ok_or_else(|| format!("the object's {hook} program refers to {tname}, which is in no section"))?;
                        let tsec = f.section_by_index(ti).map_err(elf_error)?;
                        let tsec_name = tsec.name().map_err(elf_error)?;
                        let base = place.sections.get(&ti).ok_or_else(|| {
                            if tsec_name == ".maps" {
                                format!("the object uses BPF map {tname} from {hook}, which the simulator does not provide (controllers keep their state in the socket's private area)")
                            } else {
                                format!("the object's {hook} program refers to {tname} in section {tsec_name}, which the simulator does not load")
                            }
                        })?;
                        // Section symbols have value 0 and the offset in the instruction.
                        let within = target.address().checked_add(u64::from(i.imm as u32)).ok_or("a data relocation overflows")?;
                        if within >= tsec.size().max(1) {
                            return Err(format!("the object's {hook} program refers past the end of section {tsec_name}"));
                        }
                        base + within
                    };
                    insn::set_imm64(&mut code, pc, addr);
                }
                op => return Err(format!("the object's {hook} program has an ELF relocation on opcode {op:#04x} at instruction {pc}, which the simulator does not support")),
            }
        }
        apply_core(&btf, &relos, &section_name, start, len, hook, &mut code)?;
        let for_vm = rewrite::for_sbpf(hook, &code)?;
        programs.push(Program { hook, symbol: fname, relocated: code, code: for_vm });
    }
    Ok(Image { ops_name, map_name: map_name.clone(), programs, readonly: place.readonly, writable: place.writable })
}

/// Patch the CO-RE records that fall inside the program at `start..start + len` of `section`.
fn apply_core(btf: &Btf, relos: &[btf::CoreRelo], section: &str, start: usize, len: usize, hook: &str, code: &mut [u8]) -> Result<(), String> {
    let mine: Vec<&btf::CoreRelo> = relos.iter().filter(|r| r.section == section && (start..start + len).contains(&(r.insn_off as usize))).collect();
    let shifted: Vec<(String, String)> = mine.iter().filter(|r| r.kind == 4).filter_map(|r| core::access(btf, r).ok()).filter_map(|a| a.path.last().cloned()).collect();
    for r in mine {
        let pc = (r.insn_off as usize - start) / 8;
        let (value, local) = core::resolve(btf, r, hook, &shifted)?;
        let i = Insn::at(code, pc);
        let mismatch = || format!("the object's {hook} program has a CO-RE relocation at instruction {pc} that does not match the instruction");
        match i.class() {
            insn::CLASS_LDX | insn::CLASS_ST | insn::CLASS_STX => {
                if r.kind == 0 && i64::from(i.off) != local as i64 {
                    return Err(mismatch());
                }
                insn::set_off(code, pc, i16::try_from(value).map_err(|_| mismatch())?);
            }
            insn::CLASS_ALU | insn::CLASS_ALU64 if i.op & insn::SRC_REG == 0 => insn::set_imm(code, pc, value as u32),
            insn::CLASS_LD if i.op == LDDW => insn::set_imm64(code, pc, value),
            _ => return Err(mismatch()),
        }
    }
    Ok(())
}
