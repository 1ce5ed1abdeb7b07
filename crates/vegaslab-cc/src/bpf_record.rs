//! A compiled BPF struct_ops congestion control named by a scenario
//! (`cc = { bpf = "algo.bpf.o" }`): what the normalised scenario records of it.
//!
//! The object itself is loaded and run by the `vegaslab-bpf` crate (a userspace eBPF VM); this
//! crate holds only its record, so that the scenario's schema, which this crate owns for every
//! algorithm form ([`crate::AlgorithmSpec`]), names the form, and a results store keyed by the
//! normalised scenario never serves a run of another object (`sha256`).

use schemars::JsonSchema;
use serde::Serialize;

/// The tag of a BPF object in the normalised scenario: `{"Bpf": {"path", "name", "map", "hz",
/// "sha256"}}`.
pub const BPF_TAG: &str = "Bpf";

/// The prefix of a BPF object's `cc` name in results: `bpf:<struct_ops name>`.
pub const BPF_PREFIX: &str = "bpf:";

/// CONFIG_HZ an object sees when the scenario does not say (`hz`): the jiffies clock of the
/// kernel on this project's testbed machines (`bpf_jiffies64`, the `.kconfig` extern
/// `CONFIG_HZ`), so that an object runs in the simulator with the clock it has in the kernel.
pub const DEFAULT_HZ: u32 = 250;

/// The values of CONFIG_HZ Linux offers (`kernel/Kconfig.hz`).
pub const HZ_VALUES: &[u32] = &[100, 250, 300, 1000];

/// A BPF object as the normalised scenario records it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct BpfRecord {
    /// The path as written in the scenario (absolute, or relative to the scenario file's
    /// directory); identity is `sha256`.
    pub path: String,
    /// The struct_ops `name` the object registers (what Linux's `tcp_congestion_control`
    /// would show).
    pub name: String,
    /// The struct_ops map (the variable of type `struct tcp_congestion_ops`) that runs.
    pub map: String,
    /// CONFIG_HZ the object sees.
    pub hz: u32,
    /// Hex SHA-256 of the object file.
    pub sha256: String,
}

impl BpfRecord {
    /// The `cc` name in results, `bpf:<name>` (interned: one copy per name for the program's
    /// life).
    pub fn cc_name(&self) -> &'static str {
        crate::external::intern(&format!("{BPF_PREFIX}{}", self.name))
    }
}
