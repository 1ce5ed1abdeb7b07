//! What an algorithm file gives the registry: its parameters ([`AlgorithmParams`]), read from
//! a scenario through a [`ParamSource`], and the sender that drives its controller
//! ([`SenderKind`]). A leaf of the module graph: algorithms depend on it, the registry lists
//! the algorithms.

use crate::config::TcpConfig;
use crate::controller::CongestionControl;
use std::fmt;

/// Where an algorithm's parameters come from: the scenario reader's `params` table. Every
/// error is made by the source, so it names the file and field as the reader does.
pub trait ParamSource {
    /// Whether `key` is given.
    fn is_set(&self, key: &str) -> bool;
    /// A number in [lo, hi], if given.
    fn number(&self, key: &str, lo: f64, hi: f64) -> Result<Option<f64>, ParamError>;
    /// A whole number in [lo, hi], if given.
    fn integer(&self, key: &str, lo: i64, hi: i64) -> Result<Option<i64>, ParamError>;
    /// A string, if given.
    fn string(&self, key: &str) -> Result<Option<String>, ParamError>;
    /// A boolean, if given.
    fn boolean(&self, key: &str) -> Result<Option<bool>, ParamError>;
    /// A time (`"20ms"` or seconds) in [lo_ns, hi_ns] nanoseconds, if given.
    fn time(&self, key: &str, lo_ns: u64, hi_ns: u64) -> Result<Option<u64>, ParamError>;
    /// Refuse any key not in `allowed`.
    fn deny_unknown(&self, allowed: &[&str]) -> Result<(), ParamError>;
    /// An error about `key` with this message.
    fn error(&self, key: &str, message: String) -> ParamError;
}

/// An algorithm's parameter reader, as the registry holds it.
pub type ReadParams = fn(&dyn ParamSource) -> Result<Box<dyn AlgorithmParams>, ParamError>;

/// A controller's fault while the run goes on ([`AlgorithmParams::fault`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fault {
    /// The scenario field that named the faulting code (`flows[2].cc.bpf`).
    pub field: String,
    /// What went wrong, in one sentence (which program, hook and simulated time).
    pub message: String,
}

/// An error made by a [`ParamSource`] (the reader's own error type, boxed).
#[derive(Debug)]
pub struct ParamError(pub Box<dyn std::error::Error + Send + Sync>);

/// Which sender drives an algorithm's controller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SenderKind {
    /// ns-2's `TcpAgent` with Reno (`newreno` false) or NewReno loss recovery
    /// ([`crate::tcp_agent`]). With NewReno recovery this is also the sender of the `ns3`
    /// flavour, and of the `linux` flavour on ns-2's stack.
    TcpAgent { newreno: bool },
    /// ns-2's Vegas agent: fine-grained retransmission on duplicate ACKs ([`crate::vegas_agent`]).
    VegasAgent,
    /// Linux's machinery (`tcp.stack = "linux"`, [`crate::linux`]): chosen by the TCP
    /// settings, never by an algorithm.
    Linux,
}

/// One algorithm's parameters, read from a scenario: what builds its controller.
pub trait AlgorithmParams: erased_serde::Serialize + fmt::Debug + Send + Sync {
    /// A fresh controller for one connection.
    fn controller(&self, cfg: &TcpConfig) -> Box<dyn CongestionControl>;
    /// The sender that drives it.
    fn sender(&self) -> SenderKind;
    /// The `cc` name in results when it differs from the registry name (e.g. a preset).
    fn results_name(&self) -> Option<&'static str> {
        None
    }
    /// Router assist (RoVegas): bytes of the option a probing packet carries, which the
    /// receiver echoes on its ACK. `None`: no router assist, and the controller never tags a
    /// segment (a [`crate::Sender`] built from the algorithm does not ask it).
    fn router_assist(&self) -> Option<u32> {
        None
    }
    /// Whether its controllers can fail while the run goes on (a loaded program's fault, as a
    /// BPF object's access violation): the simulator then asks [`AlgorithmParams::fault`] at
    /// its progress checks and at the end. Default `false`.
    fn can_fault(&self) -> bool {
        false
    }
    /// The first fault of the controllers built from these parameters: the run stops with it
    /// as its error. Default: never.
    fn fault(&self) -> Option<Fault> {
        None
    }
    fn clone_box(&self) -> Box<dyn AlgorithmParams>;
}

erased_serde::serialize_trait_object!(AlgorithmParams);


/// The values a declared parameter ([`Param`]) takes.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum ParamKind {
    /// A number in [lo, hi].
    Number { lo: f64, hi: f64 },
    /// A whole number in [lo, hi].
    Integer { lo: i64, hi: i64 },
    /// One of these strings.
    Choice { values: &'static [&'static str] },
    /// `true` or `false`.
    Boolean,
    /// A time in [lo_ns, hi_ns] nanoseconds, written `"20ms"` or as seconds.
    Time { lo_ns: u64, hi_ns: u64 },
}

/// One key of an algorithm's `params` table, declared once in the algorithm's file and listed
/// by its registry entry ([`crate::registry::Entry::params`]). The declaration is what the
/// reader checks a value against ([`Param::number`], [`Param::integer`], [`Param::boolean`];
/// [`params_allowed`] for unknown keys) and what the docs, the Python package and the tests
/// read; the default is not restated here: it is what the algorithm's parameters hold when the
/// key is absent (the one `Default` of its parameter struct), read back by whoever shows it.
#[derive(Debug, serde::Serialize)]
pub struct Param {
    pub name: &'static str,
    pub kind: ParamKind,
    /// The unit of a number ("packets", "µs", "1/1024", ...); empty when it has none.
    pub unit: &'static str,
    /// What it sets, in one sentence.
    pub doc: &'static str,
    /// Where its meaning and default come from (paper section, RFC, ns-2 or Linux source).
    pub cite: &'static str,
}

impl Param {
    /// The value of a [`ParamKind::Number`] parameter, if given, checked against its range.
    pub fn number(&self, p: &dyn ParamSource) -> Result<Option<f64>, ParamError> {
        match self.kind {
            ParamKind::Number { lo, hi } => p.number(self.name, lo, hi),
            other => Err(self.misdeclared(p, "a number", other)),
        }
    }

    /// The value of a [`ParamKind::Integer`] parameter, if given, checked against its range.
    pub fn integer(&self, p: &dyn ParamSource) -> Result<Option<i64>, ParamError> {
        match self.kind {
            ParamKind::Integer { lo, hi } => p.integer(self.name, lo, hi),
            other => Err(self.misdeclared(p, "a whole number", other)),
        }
    }

    /// The value of a [`ParamKind::Boolean`] parameter, if given.
    pub fn boolean(&self, p: &dyn ParamSource) -> Result<Option<bool>, ParamError> {
        match self.kind {
            ParamKind::Boolean => p.boolean(self.name),
            other => Err(self.misdeclared(p, "a boolean", other)),
        }
    }

    /// The nanoseconds of a [`ParamKind::Time`] parameter, if given, checked against its range.
    pub fn time(&self, p: &dyn ParamSource) -> Result<Option<u64>, ParamError> {
        match self.kind {
            ParamKind::Time { lo_ns, hi_ns } => p.time(self.name, lo_ns, hi_ns),
            other => Err(self.misdeclared(p, "a time", other)),
        }
    }

    /// The string of a [`ParamKind::Choice`] parameter, if given; the reader matches it
    /// against the declared values and says what each means when it refuses one.
    pub fn choice(&self, p: &dyn ParamSource) -> Result<Option<String>, ParamError> {
        match self.kind {
            ParamKind::Choice { .. } => p.string(self.name),
            other => Err(self.misdeclared(p, "a choice", other)),
        }
    }

    /// A reader asked for a kind the declaration does not have: a programming error, reported
    /// as an error (never a panic) and caught by the registry's tests.
    fn misdeclared(&self, p: &dyn ParamSource, asked: &str, declared: ParamKind) -> ParamError {
        p.error(self.name, format!("internal error: read as {asked} but declared as {declared:?}"))
    }
}

/// The names of `params`, as [`ParamSource::deny_unknown`] takes them.
pub fn params_allowed(params: &[&Param]) -> Vec<&'static str> {
    params.iter().map(|p| p.name).collect()
}
