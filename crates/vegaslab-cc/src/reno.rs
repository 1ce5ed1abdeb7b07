//! Reno and NewReno's window rule as ns-2's `TcpAgent` codes it (`opencwnd` with
//! `windowOption_ 1`, `slowdown()` halving). The two differ only in loss recovery, which is
//! the sender's ([`crate::tcp_agent`]): ns-2 `Agent/TCP/Reno` and `Agent/TCP/Newreno`
//! (RFC 2582, "careful" variant).

use crate::config::TcpConfig;
use crate::controller::{Ack, CongestionControl, Window};
use crate::params::{AlgorithmParams, Param, ParamError, ParamSource, SenderKind};
use serde::Serialize;

/// ns-2 `opencwnd`, Reno's window rule; kept with the controller interface, where a sender
/// may apply it without naming this module (`CongestionControl::cong_avoid_is_opencwnd`).
pub use crate::controller::opencwnd;

/// The Reno window rule (the loss cut is the trait's default, ns-2's halving).
#[derive(Clone, Copy, Debug, Default)]
pub struct Reno {
    newreno: bool,
}

impl CongestionControl for Reno {
    fn name(&self) -> &'static str {
        if self.newreno {
            "newreno"
        } else {
            "reno"
        }
    }

    fn cong_avoid(&mut self, w: &mut Window, _ack: &Ack) {
        opencwnd(w);
    }

    /// ns-2's Reno window rule reads no RTT sample (its `pkts_acked` is the default).
    fn uses_rtt_samples(&self) -> bool {
        false
    }

    /// `cong_avoid` is `opencwnd` alone (`newreno` changes only the sender's recovery).
    fn cong_avoid_is_opencwnd(&self) -> bool {
        true
    }
}

/// Reno and NewReno take no parameters; `newreno` picks the recovery.
#[derive(Clone, Copy, Debug, Default, Serialize, schemars::JsonSchema)]
pub struct RenoParams {
    #[serde(skip)]
    pub newreno: bool,
}

impl RenoParams {
    pub const RENO: RenoParams = RenoParams { newreno: false };
    pub const NEWRENO: RenoParams = RenoParams { newreno: true };
}

impl AlgorithmParams for RenoParams {
    fn controller(&self, _cfg: &TcpConfig) -> Box<dyn CongestionControl> {
        Box::new(Reno { newreno: self.newreno })
    }
    fn sender(&self) -> SenderKind {
        SenderKind::TcpAgent { newreno: self.newreno }
    }
    fn clone_box(&self) -> Box<dyn AlgorithmParams> {
        Box::new(*self)
    }
}

/// Reno and NewReno have no parameters (the sender's settings are the `tcp` table's).
pub fn params() -> Vec<&'static Param> {
    Vec::new()
}

/// The registry's reader for `cc = "reno"`: no parameters.
pub fn read_reno(p: &dyn ParamSource) -> Result<Box<dyn AlgorithmParams>, ParamError> {
    p.deny_unknown(&[])?;
    Ok(Box::new(RenoParams::RENO))
}

/// The registry's reader for `cc = "newreno"`: no parameters.
pub fn read_newreno(p: &dyn ParamSource) -> Result<Box<dyn AlgorithmParams>, ParamError> {
    p.deny_unknown(&[])?;
    Ok(Box::new(RenoParams::NEWRENO))
}
