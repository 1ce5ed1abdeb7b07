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
    /// Refuse any key not in `allowed`.
    fn deny_unknown(&self, allowed: &[&str]) -> Result<(), ParamError>;
    /// An error about `key` with this message.
    fn error(&self, key: &str, message: String) -> ParamError;
}

/// An algorithm's parameter reader, as the registry holds it.
pub type ReadParams = fn(&dyn ParamSource) -> Result<Box<dyn AlgorithmParams>, ParamError>;

/// An error made by a [`ParamSource`] (the reader's own error type, boxed).
#[derive(Debug)]
pub struct ParamError(pub Box<dyn std::error::Error + Send + Sync>);

/// Which sender drives an algorithm's controller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SenderKind {
    /// ns-2's `TcpAgent` with Reno (`newreno` false) or NewReno loss recovery
    /// ([`crate::tcp_agent`]). With NewReno recovery this is also the Linux-like sender of
    /// the `linux` and `ns3` flavours.
    TcpAgent { newreno: bool },
    /// ns-2's Vegas agent: fine-grained retransmission on duplicate ACKs ([`crate::vegas_agent`]).
    VegasAgent,
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
    fn clone_box(&self) -> Box<dyn AlgorithmParams>;
}

erased_serde::serialize_trait_object!(AlgorithmParams);

