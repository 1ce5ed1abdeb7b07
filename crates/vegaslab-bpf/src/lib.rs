//! Compiled BPF struct_ops congestion controls run in a userspace VM as vegaslab controllers.
//!
//! The very `.bpf.o` Linux loads with `bpftool struct_ops register` (a `SEC(".struct_ops")`
//! `struct tcp_congestion_ops` and its `SEC("struct_ops")` programs, compiled by clang with
//! `-g`) is loaded here ([`BpfObject::load`]): its ELF and BTF read, its CO-RE field relocations
//! resolved against the simulator's own socket layout, its kfunc and helper calls bound to
//! implementations with Linux's semantics, its global data placed in VM memory. Each
//! connection gets a [`BpfController`], a [`vegaslab_cc::controller::CongestionControl`]
//! whose hooks run the programs in solana-sbpf (x86-64 JIT, or its interpreter), every memory
//! access checked and every call bounded by an instruction budget.
//!
//! Whatever the simulator cannot provide is refused at load time in one sentence naming it
//! ([`LoadError`]); a program that fails at run time is a [`Fault`], never a crash.
//!
//! Modules, each one job:
//! - [`btf`]: the BTF and `.BTF.ext` reader;
//! - [`layout`]: the socket fields offered to objects, where they live;
//! - [`abi`]: hooks, helpers, kfuncs and kernel config values offered, Linux's helper names;
//! - [`loader`]: ELF to programs (struct_ops map, relocations), with [`core`] (CO-RE),
//!   [`verify`] (load-time checks) and [`rewrite`] (Linux's semantics on the VM);
//! - [`memory`]: the VM address map; [`insn`]: the instruction encoding;
//! - [`kfuncs`]: Linux's Reno kfuncs and the time helpers;
//! - [`runtime`]: the VM, its builtins and a controller's memory;
//! - [`controller`]: [`BpfController`] and [`Fault`].

pub mod abi;
pub mod btf;
pub mod controller;
pub mod core;
pub mod insn;
pub mod kfuncs;
pub mod layout;
pub mod loader;
pub mod memory;
pub mod rewrite;
pub mod runtime;
pub mod verify;

pub use controller::{BpfController, Fault};
pub use runtime::Engine;

use std::fmt;

/// How to load an object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadOptions {
    /// The struct_ops map to run, by name, when the object defines several (bpf_dctcp.c
    /// defines `dctcp` and `dctcp_nouse`); `None` takes the only one.
    pub map: Option<String>,
    /// `CONFIG_HZ`: the rate of `bpf_jiffies64` and of `extern ... CONFIG_HZ __kconfig`
    /// (docs/decisions.md, "BPF objects see CONFIG_HZ 250").
    pub hz: u32,
    pub engine: Engine,
}

/// The testbed kernel's `CONFIG_HZ` (Debian's default), the default of [`LoadOptions::hz`]:
/// the core's fact, which the scenario reader also reads.
pub use vegaslab_cc::bpf_record::DEFAULT_HZ;

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions { map: None, hz: DEFAULT_HZ, engine: Engine::Auto }
    }
}

/// Why an object was refused: one sentence naming the helper, kfunc, field, hook or map.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadError(String);

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for LoadError {}

/// A loaded object: its programs checked, relocated and (with [`Engine::Auto`]) compiled.
/// Immutable; controllers share it. Controllers running on several threads at once contend
/// for it (solana-sbpf takes a lock on a compiled program at every call): parallel runs are
/// quicker each with its own, and loading is cheap (a fraction of a millisecond).
pub struct BpfObject {
    ops_name: String,
    map_name: String,
    hz: u32,
    programs: std::sync::Arc<runtime::Programs>,
}

impl fmt::Debug for BpfObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BpfObject").field("ops_name", &self.ops_name).field("hooks", &self.hooks()).field("hz", &self.hz).finish()
    }
}

/// `text` with control characters escaped (`\n`): names an object supplies (symbols, BTF
/// strings, its struct_ops name) may hold any byte, and a refusal stays one line.
fn one_line(text: &str) -> String {
    text.chars().map(|c| if c.is_control() { c.escape_default().to_string() } else { c.to_string() }).collect()
}

/// The largest `CONFIG_HZ` accepted: one tick per microsecond.
const MAX_HZ: u32 = 1_000_000;

impl BpfObject {
    /// Load an object from its bytes.
    pub fn load(bytes: &[u8], opts: &LoadOptions) -> Result<BpfObject, LoadError> {
        if !(1..=MAX_HZ).contains(&opts.hz) {
            return Err(LoadError(format!("CONFIG_HZ must be between 1 and {MAX_HZ}, not {}", opts.hz)));
        }
        let refused = |message: String| LoadError(one_line(&message));
        let image = loader::load(bytes, opts.map.as_deref(), opts.hz).map_err(refused)?;
        let programs = std::sync::Arc::new(runtime::Programs::new(&image, opts.engine, opts.hz).map_err(refused)?);
        // A controller's memory maps the same way every time: map it once here.
        runtime::Vm::new(&programs).map_err(refused)?;
        Ok(BpfObject { ops_name: one_line(&image.ops_name), map_name: one_line(&image.map_name), hz: opts.hz, programs })
    }

    /// The struct_ops `name` (what Linux registers).
    pub fn ops_name(&self) -> &str {
        &self.ops_name
    }

    /// The struct_ops map that runs (the variable of type `struct tcp_congestion_ops`).
    pub fn map_name(&self) -> &str {
        &self.map_name
    }

    /// The hooks the object defines, Linux's names, in the object's order.
    pub fn hooks(&self) -> Vec<&'static str> {
        self.programs.hooks().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send_sync<T: Send + Sync>() {}
    fn assert_send<T: Send>() {}

    #[test]
    fn objects_are_shared_across_threads_and_controllers_move_between_them() {
        assert_send_sync::<BpfObject>();
        assert_send_sync::<Fault>();
        assert_send::<BpfController>();
    }
}
