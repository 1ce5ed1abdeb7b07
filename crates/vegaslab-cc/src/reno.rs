//! Reno and NewReno's window rule as ns-2's `TcpAgent` codes it (`opencwnd` with
//! `windowOption_ 1`, `slowdown()` halving), and as Linux codes it (`tcp_slow_start`,
//! `tcp_reno_cong_avoid`: [`LinuxReno`] on Linux's stack, and the Linux Vegas family's
//! fallback). The two differ only in loss recovery, which is
//! the sender's ([`crate::tcp_agent`]): ns-2 `Agent/TCP/Reno` and `Agent/TCP/Newreno`
//! (RFC 2582, "careful" variant).

use crate::config::{Stack, TcpConfig};
use crate::controller::{Ack, CongestionControl, Cut, Loss, Window};
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

/// Linux `tcp_slow_start` for `acked` packets, whole packets: cwnd = min(cwnd + acked,
/// ssthresh), then capped by the receiver window (`snd_cwnd_clamp`); returns the packets left
/// over (acked minus the growth before the cap), which Reno's increase goes on with and Vegas
/// drops.
pub fn slow_start(s: &mut Window, acked: i64) -> i64 {
    let cwnd = s.cwnd.floor() as i64;
    let acked = acked.max(0);
    let grown = (cwnd + acked).min(s.ssthresh);
    s.cwnd = (grown as f64).min(s.max_window.floor());
    acked - (grown - cwnd)
}

/// Linux `tcp_reno_cong_avoid` for `acked` packets, whole packets: nothing unless the
/// sender is cwnd-limited (`tcp_is_cwnd_limited`); in slow start `tcp_slow_start` adds
/// `acked` up to ssthresh, and if nothing is left that is all; otherwise (and always in
/// congestion avoidance, even for 0 packets) `tcp_cong_avoid_ai` with w = the cwnd now:
/// credit from a larger window first gives +1, then `acked` counts towards +1 per w
/// acknowledged packets (`snd_cwnd_cnt`). Capped by the receiver window.
pub fn reno_cong_avoid(cwnd_cnt: &mut u64, s: &mut Window, acked: i64) {
    if !s.cwnd_limited {
        return;
    }
    let mut acked = acked.max(0);
    if s.in_slow_start() {
        acked = slow_start(s, acked);
        if acked == 0 {
            return;
        }
    }
    let mut cwnd = s.cwnd.floor() as i64;
    // Linux's snd_cwnd is never 0; the guard keeps the division defined.
    let w = cwnd.max(1) as u64;
    if *cwnd_cnt >= w {
        *cwnd_cnt = 0;
        cwnd += 1;
    }
    *cwnd_cnt += acked as u64;
    if *cwnd_cnt >= w {
        let more = *cwnd_cnt / w;
        *cwnd_cnt -= more * w;
        cwnd += more as i64;
    }
    s.cwnd = (cwnd as f64).min(s.max_window.floor());
}

/// Reno as Linux has it (`net/ipv4/tcp_cong.c`), for Linux's stack: `tcp_reno_cong_avoid`
/// (whole packets, an ACK counter, growth only while cwnd-limited), `tcp_reno_ssthresh`
/// (half of cwnd, at least 2) and `tcp_reno_undo_cwnd`. Reno and NewReno are one algorithm
/// there: the recovery is the stack's.
#[derive(Clone, Copy, Debug, Default)]
pub struct LinuxReno {
    newreno: bool,
    /// `snd_cwnd_cnt`.
    cwnd_cnt: u64,
    /// cwnd at the last loss (`prior_cwnd`).
    prior_cwnd: f64,
}

impl CongestionControl for LinuxReno {
    fn name(&self) -> &'static str {
        if self.newreno {
            "newreno"
        } else {
            "reno"
        }
    }

    fn cong_avoid(&mut self, w: &mut Window, ack: &Ack) {
        reno_cong_avoid(&mut self.cwnd_cnt, w, ack.acked);
    }

    fn uses_rtt_samples(&self) -> bool {
        false
    }

    fn ssthresh(&mut self, w: &Window, loss: &Loss) -> Cut {
        self.prior_cwnd = w.cwnd;
        self.cwnd_cnt = 0;
        Cut::from_ssthresh((w.cwnd.floor() as i64 >> 1).max(2), loss)
    }

    fn undo_cwnd(&mut self, w: &Window) -> f64 {
        w.cwnd.max(self.prior_cwnd)
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
    /// ns-2's window rule on ns-2's stack, Linux's on Linux's ([`LinuxReno`]).
    fn controller(&self, cfg: &TcpConfig) -> Box<dyn CongestionControl> {
        if cfg.stack == Stack::Linux {
            return Box::new(LinuxReno { newreno: self.newreno, ..Default::default() });
        }
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
