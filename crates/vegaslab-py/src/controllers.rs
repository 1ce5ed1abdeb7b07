//! Python congestion controllers (`cc = "py:package.module:Class"`, a subclass of
//! `vegaslab.Controller`): the host the simulator asks to build them
//! ([`vegaslab_cc::external::ExternalControllers`]) and the Rust controller that calls the
//! Python instance's hooks.
//!
//! Each hook takes the GIL for its call (`Python::with_gil`; the run itself releases it) and
//! hands the hook a [`Window`] with the sender's variables, plus the ACK, RTT sample, loss or
//! event as a small read-only object; after the hook the window's `cwnd` and `ssthresh` are read
//! back. A hook the class does not override is not called: the Rust default runs instead, which
//! the Python base class mirrors. The first exception a hook raises is kept
//! ([`Failure`]); from then on no hook calls Python, the run stops at its next progress check,
//! and `vegaslab._core.run` raises `ControllerError` naming the class and the hook, with the
//! Python exception as its cause.

use pyo3::prelude::*;
use pyo3::types::PyDict;
use pyo3::{create_exception, intern};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use vegaslab_cc::controller::{Ack, CaState, CongestionControl, CwndEvent, Cut, Loss, LossKind, RttSample, Window as CcWindow};
use vegaslab_cc::external::{intern as intern_name, ExternalControllers, ExternalSpec};
use vegaslab_cc::TcpConfig;

create_exception!(
    _core,
    ControllerError,
    pyo3::exceptions::PyRuntimeError,
    "A Python controller's hook raised, or handed back a value the sender cannot use; the message names the class and the hook."
);

/// The sender's variables as a hook sees them (`vegaslab_cc::controller::Window`): `cwnd` and
/// `ssthresh` may be set, the rest is read only.
#[pyclass(module = "vegaslab", name = "Window")]
pub struct Window {
    /// Congestion window, packets.
    #[pyo3(get, set)]
    cwnd: f64,
    /// Slow-start threshold, packets.
    #[pyo3(get, set)]
    ssthresh: i64,
    /// Next sequence number to send (ns-2 `t_seqno_`, Linux `snd_nxt`).
    #[pyo3(get)]
    next_seq: i64,
    /// Highest cumulatively acknowledged sequence number (ns-2 `last_ack_`).
    #[pyo3(get)]
    last_ack: i64,
    /// Receiver window, packets.
    #[pyo3(get)]
    max_window: f64,
    /// Whether the sender is limited by cwnd (Linux `tcp_is_cwnd_limited`).
    #[pyo3(get)]
    cwnd_limited: bool,
}

#[pymethods]
impl Window {
    /// Packets sent and not yet cumulatively acknowledged.
    #[getter]
    fn in_flight(&self) -> i64 {
        self.next_seq - self.last_ack
    }

    /// cwnd < ssthresh (Linux `tcp_in_slow_start`).
    #[getter]
    fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh as f64
    }

    fn __repr__(&self) -> String {
        format!("Window(cwnd={}, ssthresh={}, in_flight={})", self.cwnd, self.ssthresh, self.in_flight())
    }
}

impl Window {
    fn of(w: &CcWindow) -> Self {
        Window { cwnd: w.cwnd, ssthresh: w.ssthresh, next_seq: w.next_seq, last_ack: w.last_ack, max_window: w.max_window, cwnd_limited: w.cwnd_limited }
    }
}

/// A new cumulative ACK (`cong_avoid`): `seqno`, `acked` packets, `now` (ns) and `elapsed`
/// (seconds since the first packet).
#[pyclass(module = "vegaslab", name = "Ack", frozen, get_all)]
pub struct PyAck {
    seqno: i64,
    acked: i64,
    now: u64,
    elapsed: f64,
}

/// An RTT sample (`pkts_acked`): `now` (ns), `rtt` (s), `rtt_us` (whole microseconds, as
/// Linux), and the router-reported queueing times `queue_forward_s`/`queue_backward_s` (None
/// unless the ACK carried them).
#[pyclass(module = "vegaslab", name = "RttSample", frozen, get_all)]
pub struct PyRttSample {
    now: u64,
    rtt: f64,
    rtt_us: i64,
    queue_forward_s: Option<f64>,
    queue_backward_s: Option<f64>,
}

/// A loss (`ssthresh`): `kind` ("fast_retransmit" or "timeout") and `window`, the window the
/// reduction starts from (packets).
#[pyclass(module = "vegaslab", name = "Loss", frozen, get_all)]
pub struct PyLoss {
    kind: &'static str,
    window: f64,
}

/// An event outside the ACK path (`cwnd_event`): `kind` ("first_ack", "tx_start" or
/// "cwnd_restart"), with `elapsed` (s, first_ack) or `now` and `last_send` (ns, tx_start).
#[pyclass(module = "vegaslab", name = "CwndEvent", frozen, get_all)]
pub struct PyCwndEvent {
    kind: &'static str,
    elapsed: Option<f64>,
    now: Option<u64>,
    last_send: Option<u64>,
}

/// The first error of a run's Python controllers, shared by them and the run.
#[derive(Debug, Default)]
pub struct Failure {
    failed: AtomicBool,
    first: Mutex<Option<PyErr>>,
}

impl Failure {
    /// Whether a hook has failed (cheap: read on every hook and progress check).
    pub fn failed(&self) -> bool {
        self.failed.load(Ordering::Relaxed)
    }

    fn record(&self, py: Python<'_>, name: &str, hook: &str, cause: PyErr) {
        let mut first = self.first.lock().unwrap_or_else(|p| p.into_inner());
        if first.is_none() {
            let err = ControllerError::new_err(format!("the Python controller \"{name}\" failed in {hook}: {}", describe(py, &cause)));
            err.set_cause(py, Some(cause));
            *first = Some(err);
        }
        self.failed.store(true, Ordering::Relaxed);
    }

    /// The first error, taken.
    pub fn take(&self) -> Option<PyErr> {
        self.first.lock().unwrap_or_else(|p| p.into_inner()).take()
    }
}

/// `TypeName: message` of a Python exception.
fn describe(py: Python<'_>, e: &PyErr) -> String {
    let kind = e.get_type_bound(py).qualname().map(|n| n.to_string()).unwrap_or_else(|_| "Exception".into());
    let text = e.value_bound(py).str().map(|s| s.to_string()).unwrap_or_default();
    if text.is_empty() {
        kind
    } else {
        format!("{kind}: {text}")
    }
}

/// A class the loader accepted, the hooks it overrides and the hash of its module's source.
#[derive(Debug)]
struct Class {
    class: PyObject,
    hooks: Hooks,
    source_sha256: Option<String>,
}

/// Which optional hooks a class overrides (`cong_avoid` is always called).
#[derive(Clone, Copy, Debug, Default)]
struct Hooks {
    init: bool,
    pkts_acked: bool,
    ssthresh: bool,
    set_state: bool,
    cwnd_event: bool,
    undo_cwnd: bool,
    variables: bool,
}

impl Hooks {
    fn of(names: &[String]) -> Self {
        let has = |n: &str| names.iter().any(|m| m == n);
        Hooks {
            init: has("init"),
            pkts_acked: has("pkts_acked"),
            ssthresh: has("ssthresh"),
            set_state: has("set_state"),
            cwnd_event: has("cwnd_event"),
            undo_cwnd: has("undo_cwnd"),
            variables: has("variables"),
        }
    }
}

/// The host of one run's Python controllers. `loader(spec_text)` (`vegaslab.controller.load`)
/// imports the class and returns it with the names of the hooks it overrides and the SHA-256
/// of its module's source (or None), or raises a `ValueError` saying why it cannot (module,
/// class, not a Controller subclass).
#[derive(Debug)]
pub struct PythonHost {
    loader: PyObject,
    classes: Mutex<HashMap<String, Arc<Class>>>,
    pub failure: Arc<Failure>,
}

impl PythonHost {
    pub fn new(loader: PyObject) -> Self {
        PythonHost { loader, classes: Mutex::default(), failure: Arc::default() }
    }
}

impl ExternalControllers for PythonHost {
    fn check(&self, spec: &ExternalSpec) -> Result<Option<String>, String> {
        let key = spec.to_string();
        if let Some(class) = self.classes.lock().unwrap_or_else(|p| p.into_inner()).get(&key) {
            return Ok(class.source_sha256.clone());
        }
        Python::with_gil(|py| {
            let loaded = self.loader.call1(py, (key.as_str(),)).and_then(|r| r.extract::<(PyObject, Vec<String>, Option<String>)>(py));
            match loaded {
                Ok((class, hooks, source_sha256)) => {
                    let class = Arc::new(Class { class, hooks: Hooks::of(&hooks), source_sha256: source_sha256.clone() });
                    self.classes.lock().unwrap_or_else(|p| p.into_inner()).insert(key, class);
                    Ok(source_sha256)
                }
                Err(e) => Err(e.value_bound(py).str().map(|s| s.to_string()).unwrap_or_else(|_| describe(py, &e))),
            }
        })
    }

    fn build(&self, spec: &ExternalSpec, _cfg: &TcpConfig) -> Box<dyn CongestionControl> {
        let name = spec.cc_name();
        let class = self.classes.lock().unwrap_or_else(|p| p.into_inner()).get(&spec.to_string()).cloned();
        let Some(class) = class else {
            // `check` runs before any build (`vegaslab_sim::scenario::bind_external`).
            unreachable!("{name}: built before it was checked")
        };
        let instance = Python::with_gil(|py| match class.class.call0(py) {
            Ok(obj) => Some(obj),
            Err(e) => {
                self.failure.record(py, name, "__init__", e);
                None
            }
        });
        Box::new(PyController { instance, name, hooks: class.hooks, failure: self.failure.clone() })
    }
}

/// One connection's Python controller. `instance` is `None` when its constructor raised (the
/// run is stopping then).
#[derive(Debug)]
pub struct PyController {
    instance: Option<PyObject>,
    name: &'static str,
    hooks: Hooks,
    failure: Arc<Failure>,
}

impl PyController {
    /// Call `hook` with the window (`f` makes the call); read back `cwnd` and `ssthresh` when
    /// `write_back`. `None` when Python has failed, now or before.
    fn call<R>(
        &self,
        hook: &'static str,
        w: &mut CcWindow,
        write_back: bool,
        f: impl FnOnce(Python<'_>, &Bound<'_, PyAny>, &Bound<'_, Window>) -> PyResult<R>,
    ) -> Option<R> {
        if self.failure.failed() {
            return None;
        }
        let instance = self.instance.as_ref()?;
        Python::with_gil(|py| {
            let outcome = Bound::new(py, Window::of(w)).and_then(|win| {
                let r = f(py, instance.bind(py), &win)?;
                if write_back {
                    let back = win.borrow();
                    if !(back.cwnd.is_finite() && back.cwnd > 0.0) {
                        return Err(pyo3::exceptions::PyValueError::new_err(format!("set cwnd to {}: it must be a finite number of packets > 0", back.cwnd)));
                    }
                    if back.ssthresh <= 0 {
                        return Err(pyo3::exceptions::PyValueError::new_err(format!("set ssthresh to {}: it must be a whole number of packets > 0", back.ssthresh)));
                    }
                    w.cwnd = back.cwnd;
                    w.ssthresh = back.ssthresh;
                }
                Ok(r)
            });
            outcome.map_err(|e| self.failure.record(py, self.name, hook, e)).ok()
        })
    }
}

impl Clone for PyController {
    /// A deep copy of the Python instance (`copy.deepcopy`), so that the copy's state is its own.
    fn clone(&self) -> Self {
        let instance = Python::with_gil(|py| {
            let instance = self.instance.as_ref()?;
            let copied = py.import_bound("copy").and_then(|copy| copy.call_method1("deepcopy", (instance,)));
            copied.map(|c| c.unbind()).map_err(|e| self.failure.record(py, self.name, "copy.deepcopy", e)).ok()
        });
        PyController { instance, name: self.name, hooks: self.hooks, failure: self.failure.clone() }
    }
}

fn state_name(s: CaState) -> &'static str {
    match s {
        CaState::Open => "open",
        CaState::Disorder => "disorder",
        CaState::Cwr => "cwr",
        CaState::Recovery => "recovery",
        CaState::Loss => "loss",
    }
}

impl CongestionControl for PyController {
    fn name(&self) -> &'static str {
        self.name
    }

    fn init(&mut self, w: &mut CcWindow) {
        if self.hooks.init {
            self.call("init", w, true, |py, obj, win| obj.call_method1(intern!(py, "init"), (win,)).map(drop));
        }
    }

    fn pkts_acked(&mut self, w: &mut CcWindow, sample: &RttSample) {
        if !self.hooks.pkts_acked {
            return;
        }
        let s = PyRttSample {
            now: sample.now,
            rtt: sample.rtt,
            rtt_us: sample.rtt_us(),
            queue_forward_s: sample.queueing.map(|q| q.forward),
            queue_backward_s: sample.queueing.map(|q| q.backward),
        };
        self.call("pkts_acked", w, true, |py, obj, win| obj.call_method1(intern!(py, "pkts_acked"), (win, s)).map(drop));
    }

    fn cong_avoid(&mut self, w: &mut CcWindow, ack: &Ack) {
        let a = PyAck { seqno: ack.seqno, acked: ack.acked, now: ack.now, elapsed: ack.elapsed };
        self.call("cong_avoid", w, true, |py, obj, win| obj.call_method1(intern!(py, "cong_avoid"), (win, a)).map(drop));
    }

    fn uses_rtt_samples(&self) -> bool {
        self.hooks.pkts_acked
    }

    /// An `int` is Linux's answer (the new ssthresh; cwnd continues from it after a fast
    /// retransmit, from 1 after a timeout: [`Cut::from_ssthresh`]); `(ssthresh, cwnd)` sets both.
    fn ssthresh(&mut self, w: &CcWindow, loss: &Loss) -> Cut {
        if !self.hooks.ssthresh {
            return Cut::ns2_halving(loss);
        }
        let kind = match loss.kind {
            LossKind::FastRetransmit => "fast_retransmit",
            LossKind::Timeout => "timeout",
        };
        let l = PyLoss { kind, window: loss.window };
        let mut copy = *w;
        let cut = self.call("ssthresh", &mut copy, false, |py, obj, win| {
            let r = obj.call_method1(intern!(py, "ssthresh"), (win, l))?;
            let cut = match r.extract::<i64>() {
                Ok(ssthresh) => Cut::from_ssthresh(ssthresh, loss),
                Err(_) => {
                    let (ssthresh, cwnd) = r.extract::<(i64, f64)>().map_err(|_| {
                        pyo3::exceptions::PyTypeError::new_err(format!("returned {}; expected an int (ssthresh) or a tuple (ssthresh, cwnd)", r.repr().map(|s| s.to_string()).unwrap_or_default()))
                    })?;
                    Cut { ssthresh, cwnd }
                }
            };
            if cut.ssthresh <= 0 || !(cut.cwnd.is_finite() && cut.cwnd > 0.0) {
                return Err(pyo3::exceptions::PyValueError::new_err(format!("returned ssthresh {} and cwnd {}; both must be > 0", cut.ssthresh, cut.cwnd)));
            }
            Ok(cut)
        });
        cut.unwrap_or_else(|| Cut { ssthresh: w.ssthresh, cwnd: w.cwnd })
    }

    fn set_state(&mut self, w: &CcWindow, state: CaState) {
        if self.hooks.set_state {
            let mut copy = *w;
            self.call("set_state", &mut copy, false, |py, obj, win| obj.call_method1(intern!(py, "set_state"), (win, state_name(state))).map(drop));
        }
    }

    fn cwnd_event(&mut self, w: &mut CcWindow, event: CwndEvent) {
        if !self.hooks.cwnd_event {
            return;
        }
        let e = match event {
            CwndEvent::FirstAck { elapsed } => PyCwndEvent { kind: "first_ack", elapsed: Some(elapsed), now: None, last_send: None },
            CwndEvent::TxStart { now, last_send } => PyCwndEvent { kind: "tx_start", elapsed: None, now: Some(now), last_send: Some(last_send) },
            CwndEvent::CwndRestart => PyCwndEvent { kind: "cwnd_restart", elapsed: None, now: None, last_send: None },
        };
        self.call("cwnd_event", w, true, |py, obj, win| obj.call_method1(intern!(py, "cwnd_event"), (win, e)).map(drop));
    }

    fn undo_cwnd(&mut self, w: &CcWindow) -> f64 {
        if !self.hooks.undo_cwnd {
            return w.cwnd;
        }
        let mut copy = *w;
        let cwnd = self.call("undo_cwnd", &mut copy, false, |py, obj, win| obj.call_method1(intern!(py, "undo_cwnd"), (win,))?.extract::<f64>());
        cwnd.unwrap_or(w.cwnd)
    }

    /// `variables()` returns a dict of name to number; the names are column names, the same
    /// on every call.
    fn variables(&self, out: &mut Vec<(&'static str, f64)>) {
        if !self.hooks.variables || self.failure.failed() {
            return;
        }
        let Some(instance) = self.instance.as_ref() else { return };
        Python::with_gil(|py| {
            let read = instance.bind(py).call_method0(intern!(py, "variables")).and_then(|d| {
                let d = d.downcast_into::<PyDict>().map_err(PyErr::from)?;
                d.iter().map(|(k, v)| Ok((intern_name(&k.extract::<String>()?), v.extract::<f64>()?))).collect::<PyResult<Vec<_>>>()
            });
            match read {
                Ok(vars) => out.extend(vars),
                Err(e) => self.failure.record(py, self.name, "variables", e),
            }
        });
    }
}

/// The hook-side classes, for `vegaslab.controller` to re-export.
pub fn add_classes(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Window>()?;
    m.add_class::<PyAck>()?;
    m.add_class::<PyRttSample>()?;
    m.add_class::<PyLoss>()?;
    m.add_class::<PyCwndEvent>()?;
    m.add("ControllerError", m.py().get_type_bound::<ControllerError>())?;
    Ok(())
}
