//! Running loaded programs on solana-sbpf: the VM configuration, the builtins (kfuncs and
//! helpers) and one memory arena per controller.
//!
//! Programs run as SBPF v3, whose encoding of everything clang emits for `-mcpu=v1`..`v3` is
//! eBPF's (JMP32, pc-relative calls, `lddw`); [`crate::rewrite`] mends the two places where
//! its semantics differ. Every memory access is translated and bounds-checked, in the
//! interpreter and in the x86-64 JIT alike, and an instruction meter stops a program after
//! [`INSTRUCTION_BUDGET`] instructions: a program cannot read or write outside its regions,
//! nor run forever (docs/decisions.md, "BPF programs run on solana-sbpf, not rbpf").

use crate::{abi, kfuncs};
use crate::layout::{Block, SOCK_SIZE};
use crate::loader::Image;
use crate::memory::{self, ARENA_VM, READONLY_VM, SOCK_VM};
use solana_sbpf::aligned_memory::AlignedMemory;
use solana_sbpf::ebpf::HOST_ALIGN;
use solana_sbpf::elf::Executable;
use solana_sbpf::error::EbpfError;
use solana_sbpf::memory_region::{AccessType, HostBuffer, MemoryMapping, MemoryRegion};
use solana_sbpf::program::{BuiltinFunctionDefinition, BuiltinProgram, FunctionRegistry, SBPFVersion};
use solana_sbpf::verifier::RequisiteVerifier;
use solana_sbpf::vm::{CallFrame, Config, ContextObject, EbpfVm, ExecutionMode};
use std::ptr::NonNull;
use std::sync::Arc;

/// Instructions one hook call may execute before it is stopped as a fault. Linux bounds a
/// program statically (at most 1,000,000 instructions verified); a hook of the objects this
/// crate is tested with executes at most a few hundred, so only a program that does not end
/// reaches it.
pub const INSTRUCTION_BUDGET: u64 = 1_000_000;

const VERSION: SBPFVersion = SBPFVersion::V3;

/// How programs execute.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Engine {
    /// The x86-64 JIT where solana-sbpf has one (x86-64, not Windows), the interpreter elsewhere.
    #[default]
    Auto,
    /// Always the interpreter (for tests and measurements).
    Interpreter,
}

/// Whether this build has solana-sbpf's JIT.
pub const HAS_JIT: bool = cfg!(all(target_arch = "x86_64", not(target_os = "windows")));

/// What the builtins and the VM see of one controller during a call.
///
/// Once mapped, the arena and the stack are reached only through the memory mapping
/// ([`Ctx::guest`]), never through `arena` and `stack` themselves: a new borrow of them would
/// invalidate the pointers the mapping (and the JIT's code) holds. The two fields only keep the
/// memory alive.
pub struct Ctx {
    remaining: u64,
    mapping: MemoryMapping,
    arena: AlignedMemory<HOST_ALIGN>,
    stack: AlignedMemory<HOST_ALIGN>,
    now_ns: u64,
    hz: u32,
}

impl ContextObject for Ctx {
    fn consume(&mut self, amount: u64) {
        self.remaining = self.remaining.saturating_sub(amount);
    }
    fn get_remaining(&self) -> u64 {
        self.remaining
    }
    fn active_mapping_ptr(&mut self) -> NonNull<MemoryMapping> {
        NonNull::from(&mut self.mapping)
    }
}

type BuiltinError = Box<dyn std::error::Error>;

impl Ctx {
    /// `len` writable bytes of guest memory at VM address `vm_addr`, through the mapping.
    fn guest(&mut self, vm_addr: u64, len: usize) -> Result<&mut [u8], String> {
        match Result::from(self.mapping.map(AccessType::Store, vm_addr, len as u64)) {
            // SAFETY: the mapping's regions point at memory this `Ctx` keeps alive (see the
            // struct's doc), and `&mut self` makes the returned slice the only way to it until
            // it is dropped.
            Ok(HostBuffer::Mutable(p)) => Ok(unsafe { &mut *p }),
            Ok(HostBuffer::Immutable(_)) => Err(format!("{vm_addr:#x} is read-only")),
            Err(e) => Err(e.to_string()),
        }
    }

    /// The whole arena (for a copy of the controller).
    fn arena_bytes(&mut self) -> Vec<u8> {
        let len = self.arena.len();
        self.guest(ARENA_VM, len).map(|b| b.to_vec()).expect("the arena is mapped")
    }

    /// The whole stack (for a copy of the controller).
    fn stack_bytes(&mut self) -> Vec<u8> {
        let len = self.stack.len();
        self.guest(solana_sbpf::ebpf::MM_STACK_START, len).map(|b| b.to_vec()).expect("the stack is mapped")
    }

    /// The socket block, after checking that `ptr` (a kfunc's argument) points at it.
    fn sock(&mut self, kfunc: &str, ptr: u64) -> Result<Block<'_>, BuiltinError> {
        if ptr != SOCK_VM {
            return Err(format!("{kfunc} was passed {ptr:#x}, which is not the socket").into());
        }
        Ok(Block(self.guest(SOCK_VM, SOCK_SIZE)?))
    }
}

macro_rules! builtin {
    ($ty:ident, |$c:ident, $a:ident, $b:ident, $d:ident| $body:expr) => {
        struct $ty;
        impl BuiltinFunctionDefinition<Ctx> for $ty {
            type Error = BuiltinError;
            fn rust($c: &mut Ctx, $a: u64, $b: u64, $d: u64, _: u64, _: u64) -> Result<u64, BuiltinError> {
                $body
            }
        }
    };
}

builtin!(SlowStart, |c, sk, acked, _x| Ok(u64::from(kfuncs::tcp_slow_start(&mut c.sock("tcp_slow_start", sk)?, acked as u32))));
builtin!(CongAvoidAi, |c, sk, w, acked| {
    kfuncs::tcp_cong_avoid_ai(&mut c.sock("tcp_cong_avoid_ai", sk)?, w as u32, acked as u32)?;
    Ok(0)
});
builtin!(RenoCongAvoid, |c, sk, _ack, acked| {
    kfuncs::tcp_reno_cong_avoid(&mut c.sock("tcp_reno_cong_avoid", sk)?, acked as u32)?;
    Ok(0)
});
builtin!(RenoSsthresh, |c, sk, _y, _x| Ok(u64::from(kfuncs::tcp_reno_ssthresh(&c.sock("tcp_reno_ssthresh", sk)?))));
builtin!(RenoUndo, |c, sk, _y, _x| Ok(u64::from(kfuncs::tcp_reno_undo_cwnd(&c.sock("tcp_reno_undo_cwnd", sk)?))));
builtin!(Jiffies64, |c, _z, _y, _x| Ok(kfuncs::jiffies64(c.now_ns, c.hz)));
builtin!(KtimeGetNs, |c, _z, _y, _x| Ok(c.now_ns));

fn config() -> Config {
    Config {
        enabled_sbpf_versions: VERSION..=VERSION,
        // No BPF-to-BPF calls (the loader refuses them): one frame.
        max_call_depth: 1,
        noop_instruction_rate: 0,
        sanitize_user_provided_values: false,
        aligned_memory_mapping: true,
        enable_instruction_meter: true,
        ..Config::default()
    }
}

/// Registers a builtin under the name objects call it by.
type Register = fn(&mut BuiltinProgram<Ctx>, &str) -> Result<(), solana_sbpf::elf::ElfError>;

/// The implementation of kfunc or helper `name` (the names are `abi`'s).
fn implementation(name: &str) -> Option<Register> {
    Some(match name {
        "tcp_slow_start" => SlowStart::register,
        "tcp_cong_avoid_ai" => CongAvoidAi::register,
        "tcp_reno_cong_avoid" => RenoCongAvoid::register,
        "tcp_reno_ssthresh" => RenoSsthresh::register,
        "tcp_reno_undo_cwnd" => RenoUndo::register,
        "bpf_jiffies64" => Jiffies64::register,
        "bpf_ktime_get_ns" => KtimeGetNs::register,
        _ => return None,
    })
}

/// Every kfunc and helper `abi` offers, registered with the VM.
fn builtins() -> Result<BuiltinProgram<Ctx>, String> {
    let mut p = BuiltinProgram::new_loader(config());
    for name in abi::KFUNCS.iter().copied().chain(abi::HELPERS.iter().map(|(_, n)| *n)) {
        let register = implementation(name).ok_or_else(|| format!("the simulator offers {name} but implements no such builtin"))?;
        register(&mut p, name).map_err(|e| format!("the VM refused builtin {name}: {e}"))?;
    }
    Ok(p)
}

/// The compiled programs of one object, shared by its controllers.
pub struct Programs {
    loader: Arc<BuiltinProgram<Ctx>>,
    /// (hook, executable) in the object's order.
    hooks: Vec<(&'static str, Executable<Ctx>)>,
    readonly: Vec<u8>,
    writable: Vec<u8>,
    jit: bool,
    hz: u32,
}

impl Programs {
    /// Verify (and on `Engine::Auto` JIT-compile) `image`'s programs.
    pub fn new(image: &Image, engine: Engine, hz: u32) -> Result<Programs, String> {
        let loader = Arc::new(builtins()?);
        let jit = HAS_JIT && engine == Engine::Auto;
        let mut hooks = vec![];
        for p in &image.programs {
            let exe = Executable::from_text_bytes(&p.code, loader.clone(), VERSION, FunctionRegistry::default())
                .map_err(|e| format!("the object's {} program is not valid for the VM ({e})", p.hook))?;
            exe.verify::<RequisiteVerifier>().map_err(|e| format!("the object's {} program is not valid for the VM ({e})", p.hook))?;
            #[cfg(all(target_arch = "x86_64", not(target_os = "windows")))]
            if jit {
                exe.jit_compile().map_err(|e| format!("the VM could not compile the object's {} program ({e})", p.hook))?;
            }
            hooks.push((p.hook, exe));
        }
        Ok(Programs { loader, hooks, readonly: image.readonly.clone(), writable: image.writable.clone(), jit, hz })
    }

    /// The hooks, in the object's order.
    pub fn hooks(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.hooks.iter().map(|(h, _)| *h)
    }

    /// The index of `hook`'s program, if the object defines it.
    pub fn index(&self, hook: &str) -> Option<usize> {
        self.hooks.iter().position(|(h, _)| *h == hook)
    }
}

/// One controller's VM: its arena (`ctx | sock | ack_sample | .data | .bss`), its stack and
/// solana-sbpf's machine state, made once and kept between calls.
pub struct Vm {
    /// solana-sbpf's machine, pointing at `*ctx`, and the one way to it once made
    /// ([`Vm::ctx_mut`]). Declared first: dropped before `ctx` is freed. In an `UnsafeCell` so
    /// that [`Vm::duplicate`] can read the context through it from `&self`.
    engine: std::cell::UnsafeCell<EbpfVm<'static, Ctx>>,
    /// The programs this VM runs, whose read-only region its memory mapping points at: kept
    /// alive here as long as the mapping.
    programs: Arc<Programs>,
    /// The registers every call starts from (r10 at the top of the stack frame).
    registers: [u64; 12],
    /// Owned (from `Box::into_raw`, freed in `drop`); used only to free it: every access goes
    /// through `engine`'s pointer, derived from this one.
    ctx: NonNull<Ctx>,
    frames: Vec<CallFrame>,
}

// SAFETY: the memory mapping points only at the arena and stack this `Vm` owns and at the
// read-only region of the `Programs` it keeps alive (its `Arc`); `engine` points at
// this `Vm`'s own `Ctx`; a `Vm` is used by one thread at a time (`&mut self`).
unsafe impl Send for Vm {}

impl Drop for Vm {
    fn drop(&mut self) {
        // SAFETY: `ctx` came from `Box::into_raw` and is freed once, here; `engine` is not
        // used again.
        drop(unsafe { Box::from_raw(self.ctx.as_ptr()) });
    }
}

impl Vm {
    /// A fresh VM for a controller of `programs`: zero socket, initial `.data`, zero `.bss`.
    pub fn new(programs: &Arc<Programs>) -> Result<Vm, String> {
        let mut arena = AlignedMemory::zero_filled(memory::DATA + programs.writable.len());
        arena.as_slice_mut()[memory::DATA..].copy_from_slice(&programs.writable);
        let stack = AlignedMemory::zero_filled(config().stack_size());
        Vm::with_memory(programs, arena, stack)
    }

    fn with_memory(programs: &Arc<Programs>, mut arena: AlignedMemory<HOST_ALIGN>, mut stack: AlignedMemory<HOST_ALIGN>) -> Result<Vm, String> {
        let cfg = config();
        let regions = vec![
            MemoryRegion::new(std::ptr::slice_from_raw_parts(programs.readonly.as_ptr(), programs.readonly.len()), READONLY_VM),
            MemoryRegion::new(&mut stack, solana_sbpf::ebpf::MM_STACK_START),
            MemoryRegion::new(&mut arena, ARENA_VM),
        ];
        // SAFETY: the regions stay valid for the mapping's life: `arena` and `stack` move into
        // the same `Ctx` as the mapping (their heap buffers do not move), and `readonly` is the
        // `Programs`' own, which this VM keeps alive (`Vm::programs`).
        let mapping = unsafe { MemoryMapping::new(regions, &cfg, VERSION) }.map_err(|e| format!("the VM could not map the controller's memory ({e})"))?;
        let stack_len = stack.len();
        let ctx = NonNull::from(Box::leak(Box::new(Ctx { remaining: 0, mapping, arena, stack, now_ns: 0, hz: programs.hz })));
        // SAFETY: `*ctx` lives until this `Vm` drops, after `engine` (see `Drop`), and is
        // reached only through `engine`'s pointer, derived here from `ctx`.
        let engine = EbpfVm::new(programs.loader.clone(), VERSION, unsafe { &mut *ctx.as_ptr() }, stack_len);
        let registers = engine.registers;
        Ok(Vm { engine: std::cell::UnsafeCell::new(engine), programs: programs.clone(), registers, ctx, frames: vec![CallFrame::default(); cfg.max_call_depth] })
    }

    fn ctx_mut(&mut self) -> &mut Ctx {
        self.engine.get_mut().context()
    }

    /// A copy with the same memory (a controller is `Clone`).
    pub fn duplicate(&self) -> Result<Vm, String> {
        // SAFETY: a `Vm` is used by one thread at a time and no call runs during `&self`, so
        // nothing else reaches the engine or its context while this reads them.
        let ctx = unsafe { &mut *self.engine.get() }.context();
        let (arena, stack, now_ns) = (AlignedMemory::from_slice(&ctx.arena_bytes()), AlignedMemory::from_slice(&ctx.stack_bytes()), ctx.now_ns);
        let mut vm = Vm::with_memory(&self.programs, arena, stack)?;
        vm.ctx_mut().now_ns = now_ns;
        Ok(vm)
    }

    /// The arena's socket block.
    pub fn sock(&mut self) -> Block<'_> {
        Block(self.ctx_mut().guest(SOCK_VM, SOCK_SIZE).expect("the socket block is mapped"))
    }

    /// The arena's ack_sample block.
    pub fn ack_sample(&mut self) -> Block<'_> {
        Block(self.ctx_mut().guest(memory::ACK_VM, crate::layout::ACK_SAMPLE_SIZE).expect("the ack_sample block is mapped"))
    }

    /// Run program `index` of this VM's programs at `now_ns` with `BPF_PROG` arguments `args`
    /// after the socket; its return value (r0), or the VM's error.
    pub fn call(&mut self, index: usize, now_ns: u64, args: &[u64]) -> Result<u64, String> {
        let ctx = self.ctx_mut();
        let ctx_args = ctx.guest(ARENA_VM + memory::CTX as u64, memory::CTX_SIZE).expect("the hook's arguments are mapped");
        ctx_args[..8].copy_from_slice(&SOCK_VM.to_le_bytes());
        for (k, a) in args.iter().enumerate() {
            ctx_args[8 + 8 * k..16 + 8 * k].copy_from_slice(&a.to_le_bytes());
        }
        ctx.remaining = INSTRUCTION_BUDGET;
        ctx.now_ns = now_ns;
        let programs = &self.programs;
        let Some((_, exe)) = programs.hooks.get(index) else { return Err(format!("the object has no program {index}")) };
        let engine = self.engine.get_mut();
        // Every call starts from the same registers, whatever the last one left.
        engine.registers = self.registers;
        engine.registers[1] = ARENA_VM + memory::CTX as u64;
        engine.call_depth = 0;
        let mut mode = if programs.jit { ExecutionMode::Jit } else { ExecutionMode::Interpreted };
        let (_, result) = engine.execute_program(exe, &mut mode, &mut self.frames);
        Result::from(result).map_err(|e| match e {
            EbpfError::ExceededMaxInstructions => format!("it ran past its budget of {INSTRUCTION_BUDGET} instructions (a loop that does not end?)"),
            e => e.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_offered_kfunc_and_helper_is_implemented() {
        assert!(builtins().is_ok(), "{:?}", builtins().err());
    }
}
