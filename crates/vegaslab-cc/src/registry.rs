//! The registry: scenario `cc` names to parameter readers and controller constructors.
//!
//! Each algorithm's file owns its parameters (one struct with one `Default`), how a scenario's
//! `params` table is read into them ([`ParamSource`]), and the controller they build. The
//! list of algorithms is [`crate::ALGORITHMS`], next to their `pub mod` lines in `lib.rs`:
//! adding one is its own file, its `pub mod` line and its entry there (CONTRIBUTING.md); the
//! registry's tests then cover its parameters without further edits.
//!
//! Each entry also lists the parameters its `params` table accepts ([`Param`]: name, kind and
//! range, unit, meaning, citation), so that everything that lists algorithms or parameters
//! (the docs, the Python package, the kernel build, the tests) reads them from here.
//!
//! A flow's algorithm travels as an [`AlgorithmSpec`]: the registry entry plus its parameters.
//! It serialises (in the normalised scenario, and so in the results cache key) as the entry's
//! tag with the parameters, e.g. `{"Vegas": {"alpha": 1.0, ...}}`, or the bare tag for an
//! algorithm without parameters (`"Reno"`). An external controller (`py:package.module:Class`,
//! [`crate::external`]) travels in the same type, tagged `"Python"`.

use crate::config::TcpConfig;
use crate::controller::CongestionControl;
use crate::external::{ExternalControllers, ExternalParams, ExternalSpec};
use crate::bpf_record::{BpfRecord, BPF_TAG};
pub use crate::params::{AlgorithmParams, Param, ParamError, ParamKind, ParamSource, ReadParams, SenderKind};
use crate::ALGORITHMS;
use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::ser::{SerializeMap, Serializer};
use std::fmt;
use std::sync::Arc;

/// A registry entry.
pub struct Entry {
    /// The scenario's `cc` name.
    pub name: &'static str,
    /// The name in the normalised scenario (`{"<tag>": params}`).
    pub tag: &'static str,
    /// Serialise as the bare tag (an algorithm without parameters).
    pub unit: bool,
    /// Read `params` (an empty source when the table is absent).
    pub read: ReadParams,
    /// The keys its `params` table accepts, declared in the algorithm's file.
    pub params: fn() -> Vec<&'static Param>,
    /// Its name as the papers and figures print it ("Vegas-A", "NewReno", "CUBIC").
    pub display: &'static str,
    /// What it is, in one line, and the source it follows.
    pub about: &'static str,
    /// How it exists in Linux: what the testbed runs and what the kernel build ports.
    pub linux: LinuxForm,
    /// The JSON Schema of its parameters in the normalised scenario ([`schema_of`] of its
    /// parameter struct; unused when `unit`).
    pub schema: fn(&mut SchemaGenerator) -> Schema,
}

/// The schema of parameter struct `T`, as a registry entry names it.
pub fn schema_of<T: JsonSchema>(generator: &mut SchemaGenerator) -> Schema {
    generator.subschema_for::<T>()
}

/// How an algorithm exists in Linux.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinuxForm {
    /// It has a `linux` flavour (`params.flavour = "linux"`), and vegaslab ports that form to
    /// the kernel as a BPF struct_ops congestion control named [`Entry::kernel_name`]
    /// (`kernel/vegaslab.bpf.c`); its Linux-flavour decisions are pinned by decision vectors.
    Flavour,
    /// It is Linux's own algorithm, modelled as Linux codes it (no other flavour); the
    /// testbed runs the kernel's module of this name, and its decisions are pinned by decision
    /// vectors.
    Native(&'static str),
    /// The testbed runs the kernel's module of this name, which the model does not follow
    /// line by line (ns-2's agents have no Linux form of their own).
    Kernel(&'static str),
    /// None: the algorithm exists in the simulator only, and the testbed refuses it.
    None,
}

impl Entry {
    /// The name of the congestion control the testbed sets on its sockets (at most 15
    /// characters, Linux's `TCP_CA_NAME_MAX` less the NUL); `None` for a simulator-only one.
    pub fn kernel_name(&self) -> Option<String> {
        match self.linux {
            LinuxForm::Flavour => Some(format!("vl_{}", self.name.replace('-', "_"))),
            LinuxForm::Native(name) | LinuxForm::Kernel(name) => Some(name.to_string()),
            LinuxForm::None => None,
        }
    }

    /// Whether its Linux form is vegaslab's model of Linux code (a flavour or a native
    /// algorithm), whose decisions the decision vectors pin.
    pub fn models_linux(&self) -> bool {
        matches!(self.linux, LinuxForm::Flavour | LinuxForm::Native(_))
    }
}

/// The entry for a `cc` name.
pub fn lookup(name: &str) -> Option<&'static Entry> {
    ALGORITHMS.iter().find(|e| e.name == name)
}

/// Every `cc` name, in registry order.
pub fn names() -> impl Iterator<Item = &'static str> {
    ALGORITHMS.iter().map(|e| e.name)
}

/// A flow's algorithm: a registry entry and its parameters, an external controller
/// ([`crate::external`]: `py:package.module:Class`, built by the host that runs the simulation),
/// or a compiled BPF object ([`crate::bpf_record`], loaded by the `vegaslab-bpf` crate).
#[derive(Clone)]
pub struct AlgorithmSpec {
    form: Form,
}

enum Form {
    Registered { entry: &'static Entry, params: Box<dyn AlgorithmParams> },
    External(ExternalParams),
    /// Parameters that serialise as a [`BpfRecord`] and build the object's controllers.
    Bpf(Box<dyn AlgorithmParams>),
}

impl Clone for Form {
    fn clone(&self) -> Self {
        match self {
            Form::Registered { entry, params } => Form::Registered { entry, params: params.clone_box() },
            Form::External(p) => Form::External(p.clone()),
            Form::Bpf(params) => Form::Bpf(params.clone_box()),
        }
    }
}

/// The tag of an external controller in the normalised scenario: `{"Python": {"module": ...,
/// "class": ..., "recovery": ..., "source_sha256": ...}}` ([`ExternalParams`]).
pub const EXTERNAL_TAG: &str = "Python";

impl AlgorithmSpec {
    /// Read the algorithm `name` with its parameters; `None` for a name not in the registry.
    pub fn read(name: &str, params: &dyn ParamSource) -> Option<Result<Self, ParamError>> {
        let entry = lookup(name)?;
        Some((entry.read)(params).map(|params| AlgorithmSpec { form: Form::Registered { entry, params } }))
    }

    /// An external controller (`py:package.module:Class`) with its `params` table; it runs once
    /// bound to a host ([`AlgorithmSpec::hosted`]).
    pub fn external(spec: ExternalSpec, params: &dyn ParamSource) -> Result<Self, ParamError> {
        ExternalParams::read(spec, params).map(|p| AlgorithmSpec { form: Form::External(p) })
    }

    /// A loaded BPF object: `params` serialise as its [`BpfRecord`] (the normalised scenario's
    /// `{"Bpf": ...}`) and name it in results ([`AlgorithmParams::results_name`]).
    pub fn bpf(params: Box<dyn AlgorithmParams>) -> Self {
        AlgorithmSpec { form: Form::Bpf(params) }
    }

    /// Build directly from parameters (tests, tools).
    pub fn new(name: &str, params: Box<dyn AlgorithmParams>) -> Option<Self> {
        Some(AlgorithmSpec { form: Form::Registered { entry: lookup(name)?, params } })
    }

    /// The `cc` name shown in results.
    pub fn name(&self) -> &'static str {
        match &self.form {
            Form::Registered { entry, params } => params.results_name().unwrap_or(entry.name),
            Form::External(p) => p.spec.cc_name(),
            Form::Bpf(params) => params.results_name().unwrap_or(BPF_TAG),
        }
    }

    pub fn params(&self) -> &dyn AlgorithmParams {
        match &self.form {
            Form::Registered { params, .. } | Form::Bpf(params) => &**params,
            Form::External(p) => p,
        }
    }

    /// The external controller's parameters; `None` for a registered algorithm.
    pub fn external_params(&self) -> Option<&ExternalParams> {
        match &self.form {
            Form::External(p) => Some(p),
            Form::Registered { .. } | Form::Bpf(_) => None,
        }
    }

    /// The same algorithm with an external controller bound to `host` (which checks that it
    /// can build it; `Err` says why); a registered algorithm is returned as it is.
    pub fn hosted(&self, host: &Arc<dyn ExternalControllers>) -> Result<Self, String> {
        match &self.form {
            Form::External(p) => Ok(AlgorithmSpec { form: Form::External(p.hosted(host.clone())?) }),
            Form::Registered { .. } | Form::Bpf(_) => Ok(self.clone()),
        }
    }

    pub fn controller(&self, cfg: &TcpConfig) -> Box<dyn CongestionControl> {
        self.params().controller(cfg)
    }

    pub fn sender(&self) -> SenderKind {
        self.params().sender()
    }

    pub fn router_assist(&self) -> Option<u32> {
        self.params().router_assist()
    }
}

impl fmt::Debug for AlgorithmSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.form {
            Form::Registered { entry, params } => write!(f, "{}({:?})", entry.name, params),
            Form::External(p) => write!(f, "{:?}", p),
            Form::Bpf(params) => write!(f, "{:?}", params),
        }
    }
}

impl serde::Serialize for AlgorithmSpec {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let map = match &self.form {
            Form::Registered { entry, .. } if entry.unit => return s.serialize_str(entry.tag),
            Form::Registered { entry, params } => {
                let mut map = s.serialize_map(Some(1))?;
                map.serialize_entry(entry.tag, &**params)?;
                map
            }
            Form::External(p) => {
                let mut map = s.serialize_map(Some(1))?;
                map.serialize_entry(EXTERNAL_TAG, p)?;
                map
            }
            Form::Bpf(params) => {
                let mut map = s.serialize_map(Some(1))?;
                map.serialize_entry(BPF_TAG, &**params)?;
                map
            }
        };
        map.end()
    }
}

/// A flow's algorithm in the normalised scenario: one of the registered forms, the bare tag of
/// an algorithm without parameters or `{"<tag>": parameters}` (entries sharing a tag share a
/// form), an external controller's `{"Python": {"module", "class", "recovery"}}`, or a BPF
/// object's `{"Bpf": {"path", "name", "map", "hz", "sha256"}}`.
impl JsonSchema for AlgorithmSpec {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Algorithm".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let mut forms = Vec::new();
        let mut tags = Vec::new();
        for entry in ALGORITHMS {
            if tags.contains(&entry.tag) {
                continue;
            }
            tags.push(entry.tag);
            forms.push(if entry.unit {
                json_schema!({ "const": entry.tag })
            } else {
                let params = (entry.schema)(generator);
                json_schema!({
                    "type": "object",
                    "properties": { entry.tag: params },
                    "required": [entry.tag],
                    "additionalProperties": false,
                })
            });
        }
        let external = generator.subschema_for::<ExternalParams>();
        forms.push(json_schema!({
            "type": "object",
            "properties": { EXTERNAL_TAG: external },
            "required": [EXTERNAL_TAG],
            "additionalProperties": false,
        }));
        let bpf = generator.subschema_for::<BpfRecord>();
        forms.push(json_schema!({
            "type": "object",
            "properties": { BPF_TAG: bpf },
            "required": [BPF_TAG],
            "additionalProperties": false,
        }));
        json_schema!({ "oneOf": forms })
    }
}

/// The spec of a registered algorithm with the given parameters, for tests and tools.
/// Panics on a name not in the registry (a programming error, never scenario input).
pub fn spec(name: &str, params: impl AlgorithmParams + 'static) -> AlgorithmSpec {
    AlgorithmSpec::new(name, Box::new(params)).unwrap_or_else(|| panic!("no algorithm {name:?} in the registry"))
}
