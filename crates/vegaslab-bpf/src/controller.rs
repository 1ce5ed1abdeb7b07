//! [`BpfController`]: a loaded object as a [`CongestionControl`], its hooks called where Linux's
//! stack calls them (`vegaslab_cc::linux`).
//!
//! Before each hook the sender's [`Window`] is copied into the socket block
//! ([`crate::layout`]); after a hook that may change the window, `snd_cwnd` and
//! `snd_ssthresh` are copied back when the program changed them. `snd_cwnd_cnt`,
//! `prior_cwnd`, the private area (`icsk_ca_priv`) and the object's `.data`/`.bss` are the
//! controller's own and persist between hooks, as the socket's do in Linux; a loss resets
//! them as Linux's `tcp_init_cwnd_reduction` and `tcp_enter_loss` do (`prior_cwnd = cwnd`,
//! `snd_cwnd_cnt = 0`).
//!
//! Hooks the senders call without a time (`init`, `ssthresh`, `set_state`, `undo_cwnd`,
//! `cwnd_event(CwndRestart)`) run at the latest time a hook was given (`tcp_mstamp`,
//! `bpf_ktime_get_ns`, `bpf_jiffies64`). What a program writes to the window in `set_state` or
//! `undo_cwnd` is not copied back (the trait gives them `&Window`); `undo_cwnd` answers with
//! its return value, as Linux's does. `lsndtime` is set from `CwndEvent::TxStart`'s previous
//! send time, which is what Linux's `CA_EVENT_TX_START` sees there (where CUBIC reads it).
//!
//! Every object defines `ssthresh`, `cong_avoid` and `undo_cwnd`, which Linux requires (the
//! loader refuses an object without them); a hook of the others the object does not define is
//! not called, as in Linux.
//!
//! A program that fails at run time (access violation, instruction budget, a kfunc's error)
//! leaves the window as it was, records the first failure in the run's [`Fault`], and every
//! later hook of every controller sharing that `Fault` does nothing; the program's host stops
//! the run and reports it.

use crate::kfuncs;
use crate::layout::*;
use crate::runtime::Vm;
use crate::BpfObject;
use std::sync::{Arc, OnceLock};
use vegaslab_cc::controller::{Ack, CaState, CongestionControl, Cut, CwndEvent, Loss, RttSample, Window};
use vegaslab_cc::Nanos;

/// The first run-time failure of a run's BPF controllers (shared by them; thread-safe).
#[derive(Debug, Default)]
pub struct Fault {
    first: OnceLock<String>,
}

impl Fault {
    /// The failure, as one sentence: "the BPF program bpf_cubic failed in cong_avoid: ...".
    pub fn get(&self) -> Option<String> {
        self.first.get().cloned()
    }

    fn is_set(&self) -> bool {
        self.first.get().is_some()
    }

    fn record(&self, ops_name: &str, hook: &str, now: Nanos, message: &str) {
        let _ = self.first.set(format!("the BPF program {ops_name} failed in {hook} at {} s of simulated time: {message}", now as f64 / 1e9));
    }
}

/// Linux's `TCP_INFINITE_SSTHRESH`, the largest ssthresh the socket holds.
const INFINITE_SSTHRESH: i64 = 0x7fff_ffff;

/// `enum tcp_ca_state`.
fn linux_state(s: CaState) -> u32 {
    match s {
        CaState::Open => 0,
        CaState::Disorder => 1,
        CaState::Cwr => 2,
        CaState::Recovery => 3,
        CaState::Loss => 4,
    }
}

/// Hook indices into the object's programs, looked up once: the three Linux requires, and
/// the optional ones the object may define.
#[derive(Clone, Copy, Debug)]
struct Hooks {
    ssthresh: usize,
    cong_avoid: usize,
    undo_cwnd: usize,
    init: Option<usize>,
    set_state: Option<usize>,
    cwnd_event: Option<usize>,
    pkts_acked: Option<usize>,
}

/// A compiled struct_ops congestion control running in the VM, one per connection.
pub struct BpfController {
    object: Arc<BpfObject>,
    fault: Arc<Fault>,
    vm: Vm,
    hooks: Hooks,
    name: &'static str,
    /// Linux's `icsk_ca_state` as the sender last set it.
    state: CaState,
    /// The latest simulated time a hook was given; hooks without one (`ssthresh`,
    /// `set_state`, ...) run at it.
    now: Nanos,
}

impl std::fmt::Debug for BpfController {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BpfController").field("name", &self.name).field("state", &self.state).field("now", &self.now).finish_non_exhaustive()
    }
}

impl Clone for BpfController {
    fn clone(&self) -> Self {
        BpfController {
            object: self.object.clone(),
            fault: self.fault.clone(),
            // The same regions as the original's, which mapped when the object was loaded
            // (`BpfObject::load` maps them once): a copy cannot fail to map.
            vm: self.vm.duplicate().expect("the regions mapped when the object was loaded"),
            hooks: self.hooks,
            name: self.name,
            state: self.state,
            now: self.now,
        }
    }
}

impl BpfController {
    /// A controller for one connection: zero socket and private area, the object's initial
    /// `.data` and zero `.bss`; failures go to `fault`.
    pub fn new(object: Arc<BpfObject>, fault: Arc<Fault>) -> BpfController {
        let p = &object.programs;
        // The loader refuses an object without the hooks Linux requires.
        let required = |hook| p.index(hook).unwrap_or_else(|| unreachable!("the loader let through an object without {hook}"));
        let hooks = Hooks {
            ssthresh: required("ssthresh"),
            cong_avoid: required("cong_avoid"),
            undo_cwnd: required("undo_cwnd"),
            init: p.index("init"),
            set_state: p.index("set_state"),
            cwnd_event: p.index("cwnd_event"),
            pkts_acked: p.index("pkts_acked"),
        };
        // `BpfObject::load` mapped these regions once already: mapping them again cannot fail.
        let mut vm = Vm::new(p).expect("the regions mapped when the object was loaded");
        vm.sock().set_u32(&MSS_CACHE, 1);
        let name = vegaslab_cc::external::intern(&format!("bpf:{}", object.ops_name));
        BpfController { object, fault, vm, hooks, name, state: CaState::Open, now: 0 }
    }

    /// The sender's window into the socket block; returns the `snd_cwnd` and `snd_ssthresh`
    /// written.
    fn copy_in(&mut self, w: &Window) -> (u32, u32) {
        let cwnd = (w.cwnd.floor().max(1.0)).min(f64::from(u32::MAX)) as u32;
        let state = linux_state(self.state);
        let now_us = self.now / 1000;
        let ssthresh = w.ssthresh.clamp(0, INFINITE_SSTHRESH) as u32;
        let mut sk = self.vm.sock();
        sk.set_u32(&SND_CWND, cwnd);
        sk.set_u32(&SND_SSTHRESH, ssthresh);
        sk.set_u32(&SND_CWND_CLAMP, w.max_window.max(0.0).min(f64::from(u32::MAX)) as u32);
        sk.set_u32(&SND_NXT, w.next_seq as u32);
        sk.set_u32(&SND_UNA, (w.last_ack + 1) as u32);
        sk.set_u32(&PACKETS_OUT, w.in_flight().clamp(0, i64::from(u32::MAX)) as u32);
        sk.set_u64(&TCP_MSTAMP, now_us);
        // tcp_is_cwnd_limited() answers the sender's verdict: the flag, or slow start's
        // "cwnd < 2 * max_packets_out", which cwnd / 2 keeps false.
        sk.set_bits(&IS_CWND_LIMITED, u32::from(w.cwnd_limited));
        sk.set_u32(&MAX_PACKETS_OUT, if w.cwnd_limited { cwnd } else { cwnd / 2 });
        sk.set_bits(&ICSK_CA_STATE, state);
        (cwnd, ssthresh)
    }

    /// The program's changes to the window back into `w`.
    fn copy_out(&mut self, w: &mut Window, before: (u32, u32)) {
        let sk = self.vm.sock();
        let (cwnd, ssthresh) = (sk.u32(&SND_CWND), sk.u32(&SND_SSTHRESH));
        if cwnd != before.0 {
            w.cwnd = f64::from(cwnd);
        }
        if ssthresh != before.1 {
            w.ssthresh = i64::from(ssthresh);
        }
    }

    /// Run `hook`'s program (index `index`) with `args`; `None` after a fault (recorded).
    fn run(&mut self, hook: &str, index: usize, args: &[u64]) -> Option<u64> {
        match self.vm.call(index, self.now, args) {
            Ok(r0) => Some(r0),
            Err(e) => {
                self.fault.record(&self.object.ops_name, hook, self.now, &e);
                None
            }
        }
    }

    /// A hook that may change the window: copy in, run, copy back unless it failed.
    fn window_hook(&mut self, w: &mut Window, hook: &str, index: usize, args: &[u64]) {
        if self.fault.is_set() {
            return;
        }
        let before = self.copy_in(w);
        if self.run(hook, index, args).is_some() {
            self.copy_out(w, before);
        }
    }
}

impl CongestionControl for BpfController {
    fn name(&self) -> &'static str {
        self.name
    }

    /// Linux zeroes the private area before `init` (`tcp_assign_congestion_control`), and a
    /// new socket starts with no ACK count and no window before a loss.
    fn init(&mut self, w: &mut Window) {
        let mut sk = self.vm.sock();
        let priv_area = ICSK_CA_PRIV.offset as usize..(ICSK_CA_PRIV.offset + ICSK_CA_PRIV.size) as usize;
        sk.0[priv_area].fill(0);
        sk.set_u32(&SND_CWND_CNT, 0);
        sk.set_u32(&PRIOR_CWND, 0);
        if let Some(index) = self.hooks.init {
            self.window_hook(w, "init", index, &[]);
        }
    }

    fn pkts_acked(&mut self, w: &mut Window, sample: &RttSample) {
        self.now = sample.now;
        let Some(index) = self.hooks.pkts_acked else { return };
        let in_flight = w.in_flight().clamp(0, i64::from(u32::MAX)) as u32;
        let mut ack = self.vm.ack_sample();
        ack.set_u32(&ACK_PKTS_ACKED, 1);
        ack.set_u32(&ACK_RTT_US, sample.rtt_us().clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32 as u32);
        ack.set_u32(&ACK_IN_FLIGHT, in_flight);
        self.window_hook(w, "pkts_acked", index, &[crate::memory::ACK_VM]);
    }

    fn cong_avoid(&mut self, w: &mut Window, ack: &Ack) {
        self.now = ack.now;
        let acked = ack.acked.clamp(0, i64::from(u32::MAX)) as u32;
        let args = [(ack.seqno + 1) as u32 as u64, u64::from(acked)];
        self.window_hook(w, "cong_avoid", self.hooks.cong_avoid, &args);
    }

    fn uses_rtt_samples(&self) -> bool {
        self.hooks.pkts_acked.is_some()
    }

    fn ssthresh(&mut self, w: &Window, loss: &Loss) -> Cut {
        let unchanged = Cut { ssthresh: w.ssthresh, cwnd: w.cwnd };
        if self.fault.is_set() {
            return unchanged;
        }
        self.copy_in(w);
        let mut sk = self.vm.sock();
        let cwnd = sk.u32(&SND_CWND);
        sk.set_u32(&PRIOR_CWND, cwnd);
        sk.set_u32(&SND_CWND_CNT, 0);
        match self.run("ssthresh", self.hooks.ssthresh, &[]) {
            Some(r0) => Cut::from_ssthresh(i64::from(r0 as u32), loss),
            None => unchanged,
        }
    }

    fn set_state(&mut self, w: &Window, state: CaState) {
        if self.fault.is_set() {
            return;
        }
        if let Some(i) = self.hooks.set_state {
            self.copy_in(w);
            self.run("set_state", i, &[u64::from(linux_state(state))]);
        }
        self.state = state;
    }

    fn cwnd_event(&mut self, w: &mut Window, event: CwndEvent) {
        let arg = match event {
            CwndEvent::TxStart { now, last_send } => {
                self.now = now;
                let lsndtime = kfuncs::jiffies64(last_send, self.object.hz) as u32;
                self.vm.sock().set_u32(&LSNDTIME, lsndtime);
                0 // CA_EVENT_TX_START
            }
            CwndEvent::CwndRestart => 1, // CA_EVENT_CWND_RESTART
            CwndEvent::FirstAck { .. } => return, // ns-2's, not a Linux event
        };
        let Some(index) = self.hooks.cwnd_event else { return };
        self.window_hook(w, "cwnd_event", index, &[arg]);
    }

    fn undo_cwnd(&mut self, w: &Window) -> f64 {
        if self.fault.is_set() {
            return w.cwnd;
        }
        self.copy_in(w);
        self.run("undo_cwnd", self.hooks.undo_cwnd, &[]).map_or(w.cwnd, |r0| f64::from(r0 as u32))
    }
}
