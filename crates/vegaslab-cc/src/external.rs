//! Controllers written outside this crate: a scenario names one as
//! `cc = "py:package.module:Class"`, a Python class (`vegaslab.Controller`) that only a Python
//! host can run.
//!
//! The crate reads and records the name ([`ExternalSpec`]: module path and class name, checked
//! for shape only) and builds nothing itself: the program that runs the simulation supplies an
//! [`ExternalControllers`] host (the Python binding does), which the scenario's flows are bound
//! to before the run ([`crate::AlgorithmSpec::hosted`]). Without a host the run is refused, so
//! that neither this crate nor the simulator depends on a Python interpreter
//! (docs/decisions.md, "External controllers come from a factory the host supplies").

use crate::config::TcpConfig;
use crate::controller::CongestionControl;
use crate::params::{AlgorithmParams, ParamError, ParamSource, SenderKind};
use schemars::JsonSchema;
use serde::Serialize;
use std::collections::HashSet;
use std::fmt;
use std::sync::{Arc, Mutex, OnceLock};

/// The prefix of an external controller's `cc` name.
pub const PREFIX: &str = "py:";

/// An external controller's name: `py:<module>:<class>`, the module a dotted Python path
/// (`package.module`) and the class an identifier.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ExternalSpec {
    /// The dotted module path (`package.module`).
    pub module: String,
    /// The class name in that module.
    pub class: String,
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c == '_' || c.is_alphabetic()) && chars.all(|c| c == '_' || c.is_alphanumeric())
}

impl ExternalSpec {
    /// `None` when `cc` is not an external name (no [`PREFIX`]); else the spec, or why its
    /// shape is wrong.
    pub fn parse(cc: &str) -> Option<Result<Self, String>> {
        let rest = cc.strip_prefix(PREFIX)?;
        let shape = || format!("\"{cc}\" is not a Python controller name: expected \"py:package.module:Class\"");
        let Some((module, class)) = rest.split_once(':') else {
            return Some(Err(shape()));
        };
        if !module.split('.').all(is_identifier) {
            return Some(Err(format!("{}; \"{module}\" is not a dotted module path", shape())));
        }
        if !is_identifier(class) {
            return Some(Err(format!("{}; \"{class}\" is not a class name", shape())));
        }
        Some(Ok(ExternalSpec { module: module.to_string(), class: class.to_string() }))
    }

    /// The `cc` name, `py:<module>:<class>`, as results show it (interned: one copy per name
    /// for the program's life).
    pub fn cc_name(&self) -> &'static str {
        intern(&format!("{PREFIX}{}:{}", self.module, self.class))
    }
}

impl fmt::Display for ExternalSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{PREFIX}{}:{}", self.module, self.class)
    }
}

/// A name that lives as long as the program, kept once however often it is asked for: the
/// controller interface names algorithms and their variables with `&'static str`, and an
/// external controller's names are known only at run time.
pub fn intern(name: &str) -> &'static str {
    static NAMES: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
    let mut names = NAMES.get_or_init(Default::default).lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(&known) = names.get(name) {
        return known;
    }
    let leaked: &'static str = Box::leak(name.to_string().into_boxed_str());
    names.insert(leaked);
    leaked
}

/// What builds external controllers: supplied by the program that hosts them (the Python
/// binding), never by the simulator.
pub trait ExternalControllers: Send + Sync + fmt::Debug {
    /// Whether `spec` names a controller this host can build (the module imports, the class
    /// exists and is a controller); `Err` says why, in one sentence. `Ok` carries the SHA-256
    /// (hex) of the code that defines it, if the host knows it: the normalised scenario
    /// records it, so that a results store keyed by that scenario never serves a run of
    /// earlier code. Called once per flow before the run.
    fn check(&self, spec: &ExternalSpec) -> Result<Option<String>, String>;
    /// A fresh controller for one connection.
    fn build(&self, spec: &ExternalSpec, cfg: &TcpConfig) -> Box<dyn CongestionControl>;
}

/// Which of ns-2's loss-recovery senders drives an external controller on ns-2's stack
/// (`params.recovery`); Linux's stack brings its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Recovery {
    /// ns-2's `Agent/TCP/Reno` recovery, as `cc = "reno"`.
    Reno,
    /// ns-2's `Agent/TCP/Newreno` recovery, as `cc = "newreno"`.
    Newreno,
}

/// An external controller's parameters: its name, the sender that drives it and, once bound,
/// its host.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct ExternalParams {
    #[serde(flatten)]
    pub spec: ExternalSpec,
    /// The ns-2 recovery that drives it (`params.recovery`, default `reno`).
    pub recovery: Recovery,
    /// SHA-256 (hex) of the code that defines the class, as its host reported it
    /// ([`ExternalControllers::check`]); absent until bound to a host that knows it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_sha256: Option<String>,
    #[serde(skip)]
    #[schemars(skip)]
    host: Option<Arc<dyn ExternalControllers>>,
}

/// The keys an external controller's `params` table accepts.
pub const PARAM_KEYS: &[&str] = &["recovery"];

impl ExternalParams {
    /// Read `params` (only `recovery`: "reno" or "newreno").
    pub fn read(spec: ExternalSpec, p: &dyn ParamSource) -> Result<Self, ParamError> {
        p.deny_unknown(PARAM_KEYS)?;
        let recovery = match p.string("recovery")?.as_deref() {
            None | Some("reno") => Recovery::Reno,
            Some("newreno") => Recovery::Newreno,
            Some(other) => return Err(p.error("recovery", format!("must be \"reno\" or \"newreno\", got \"{other}\""))),
        };
        Ok(ExternalParams { spec, recovery, source_sha256: None, host: None })
    }

    /// Bound to `host`, which has checked that it can build the controller (and says what
    /// code defines it).
    pub fn hosted(&self, host: Arc<dyn ExternalControllers>) -> Result<Self, String> {
        let source_sha256 = host.check(&self.spec)?;
        Ok(ExternalParams { host: Some(host), source_sha256, ..self.clone() })
    }

    /// Whether a host is bound.
    pub fn is_hosted(&self) -> bool {
        self.host.is_some()
    }
}

impl AlgorithmParams for ExternalParams {
    /// The host's controller. A spec without a host never reaches a sender: the simulator
    /// refuses the scenario first (`Simulator::build`).
    fn controller(&self, cfg: &TcpConfig) -> Box<dyn CongestionControl> {
        let host = self.host.as_ref().unwrap_or_else(|| panic!("{}: no host for an external controller", self.spec));
        host.build(&self.spec, cfg)
    }

    fn sender(&self) -> SenderKind {
        SenderKind::TcpAgent { newreno: self.recovery == Recovery::Newreno }
    }

    fn results_name(&self) -> Option<&'static str> {
        Some(self.spec.cc_name())
    }

    fn clone_box(&self) -> Box<dyn AlgorithmParams> {
        Box::new(self.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_python_name_is_read_into_module_and_class() {
        let spec = ExternalSpec::parse("py:my_algos.reno2:Reno2").unwrap().unwrap();
        assert_eq!(spec, ExternalSpec { module: "my_algos.reno2".into(), class: "Reno2".into() });
        assert_eq!(spec.cc_name(), "py:my_algos.reno2:Reno2");
    }

    #[test]
    fn a_registered_name_is_not_an_external_one() {
        assert!(ExternalSpec::parse("reno").is_none());
    }

    #[test]
    fn malformed_python_names_say_the_expected_shape() {
        for bad in ["py:", "py:mod", "py:mod:", "py::Cls", "py:a..b:Cls", "py:mod:Cls.x", "py:1mod:Cls", "py:mod:Cls:x"] {
            let err = ExternalSpec::parse(bad).unwrap().unwrap_err();
            assert!(err.contains("expected \"py:package.module:Class\""), "{bad}: {err}");
        }
    }

    #[test]
    fn an_interned_name_is_kept_once() {
        let a = intern("a_variable_s");
        let b = intern(&String::from("a_variable_s"));
        assert!(std::ptr::eq(a, b));
    }
}
