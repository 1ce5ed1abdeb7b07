//! A flow's congestion control as a compiled BPF struct_ops object:
//! `cc = { bpf = "algo.bpf.o", map = "name", hz = 250, engine = "auto" }`, or its short form
//! `cc = "bpf:algo.bpf.o"` (docs/scenario-format.md).
//!
//! The object is read and loaded here, at parse time, so that everything wrong with it (not
//! ELF, a helper, kfunc, socket field or hook the simulator does not offer) is a
//! [`ScenarioError`] of kind [`ErrorKind::File`] naming `flows[i].cc.bpf`, before anything
//! runs. Its controllers ([`vegaslab_bpf::BpfController`]) run the programs in a userspace
//! eBPF VM on Linux's stack; a program that faults while the run goes on (an access violation,
//! the instruction budget) stops the run with that fault as its error
//! ([`AlgorithmParams::fault`]).

use super::files;
use super::limits::MAX_BPF_OBJECT_BYTES;
use super::reader::{Ctx, Obj};
use super::{ErrorKind, ScenarioError};
use serde::Serialize;
use std::sync::Arc;
use vegaslab_bpf::{BpfController, BpfObject, Engine, Fault, LoadOptions};
use vegaslab_cc::bpf_record::{BpfRecord, BPF_PREFIX, DEFAULT_HZ, HZ_VALUES};
use vegaslab_cc::controller::CongestionControl;
use vegaslab_cc::params::{AlgorithmParams, SenderKind};
use vegaslab_cc::{AlgorithmSpec, TcpConfig};

/// The keys of a `cc = { bpf = ... }` table.
const KEYS: &[&str] = &["bpf", "map", "hz", "engine"];

/// A loaded object and the record the normalised scenario keeps of it. Every controller built
/// from it shares the object (immutable) and one [`Fault`], the first fault of any of them.
#[derive(Clone, Debug)]
pub struct BpfParams {
    record: BpfRecord,
    /// The field that named the object (`flows[i].cc.bpf`, or `flows[i].cc` for the short
    /// form): where a fault is reported.
    field: String,
    object: Arc<BpfObject>,
    fault: Arc<Fault>,
}

impl Serialize for BpfParams {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.record.serialize(s)
    }
}

impl AlgorithmParams for BpfParams {
    fn controller(&self, _cfg: &TcpConfig) -> Box<dyn CongestionControl> {
        Box::new(BpfController::new(self.object.clone(), self.fault.clone()))
    }

    /// Linux's machinery: the object is Linux congestion control and reads Linux's socket.
    fn sender(&self) -> SenderKind {
        SenderKind::Linux
    }

    fn results_name(&self) -> Option<&'static str> {
        Some(self.record.cc_name())
    }

    fn can_fault(&self) -> bool {
        true
    }

    fn fault(&self) -> Option<vegaslab_cc::params::Fault> {
        self.fault.get().map(|message| vegaslab_cc::params::Fault { field: self.field.clone(), message })
    }

    fn clone_box(&self) -> Box<dyn AlgorithmParams> {
        Box::new(self.clone())
    }
}

/// The flow's `cc` table, `{ bpf = "path", map = "name", hz = 250, engine = "auto" }`, loaded.
pub fn read_bpf_table(t: &Obj) -> Result<AlgorithmSpec, ScenarioError> {
    t.deny_unknown(KEYS)?;
    let path = t.req_string("bpf")?;
    let map = t.string("map")?.map(str::to_string);
    // Any whole number is read, so that a wrong one is told the values Linux allows.
    let hz = match t.integer("hz", i64::MIN, i64::MAX)? {
        None => DEFAULT_HZ,
        Some(hz) if HZ_VALUES.iter().any(|&v| i64::from(v) == hz) => hz as u32,
        Some(hz) => {
            let allowed: Vec<String> = HZ_VALUES.iter().map(u32::to_string).collect();
            return Err(t.err_kind("hz", ErrorKind::OutOfRange, format!("must be one of Linux's CONFIG_HZ values ({}), got {hz}", allowed.join(", "))));
        }
    };
    // Which VM runs the programs: the speed changes, never a result (the crate's tests replay
    // every decision vector on both), so the normalised scenario does not record it.
    let engine = match t.string("engine")? {
        None | Some("auto") => Engine::Auto,
        Some("interpreter") => Engine::Interpreter,
        Some(other) => {
            return Err(t.err_kind("engine", ErrorKind::OutOfRange, format!("must be \"auto\" (the JIT where the platform has one) or \"interpreter\", got \"{other}\"")));
        }
    };
    load(t.ctx, &t.field_path("bpf"), path, LoadOptions { map, hz, engine })
}

/// The flow's `cc = "bpf:path"`, the short form of `{ bpf = "path" }` (every option at its
/// default), which a sweep's axis and `--set` can give as a plain string.
pub fn read_bpf_name(f: &Obj, cc: &str) -> Option<Result<AlgorithmSpec, ScenarioError>> {
    let path = cc.strip_prefix(BPF_PREFIX)?;
    if path.is_empty() {
        return Some(Err(f.err("cc", format!("\"{cc}\" names no file: write \"{BPF_PREFIX}path/to/algo.bpf.o\""))));
    }
    Some(load(f.ctx, &f.field_path("cc"), path, LoadOptions::default()))
}

/// Read the object `path` named by `field` and load it with `options`.
fn load(ctx: Ctx, field: &str, path: &str, options: LoadOptions) -> Result<AlgorithmSpec, ScenarioError> {
    let file = files::read_path(ctx, field, path, "a BPF object", MAX_BPF_OBJECT_BYTES)?;
    let object = ctx.objects.load(&file.bytes, &file.sha256, &options).map_err(|e| ctx.err_kind(field, ErrorKind::File, format!("{}: {e}", file.shown)))?;
    let record = BpfRecord { path: path.to_string(), name: object.ops_name().to_string(), map: object.map_name().to_string(), hz: options.hz, sha256: file.sha256 };
    Ok(AlgorithmSpec::bpf(Box::new(BpfParams { record, field: field.to_string(), object, fault: Arc::default() })))
}

/// The name a BPF flow's group members are named after (`<label><k>`), from its `cc` (the
/// table or the `bpf:` string): the object's file name without its directory and its `.o` /
/// `.bpf.o` ending, known from the scenario's text alone (flow names are resolved before any
/// object is loaded, for `flows[NAME]` overrides).
pub fn object_label(path: &str) -> &str {
    let file = path.rsplit(['/', '\\']).next().unwrap_or(path);
    file.strip_suffix(".bpf.o").or_else(|| file.strip_suffix(".o")).unwrap_or(file)
}
