//! `vegaslab._core`: the thin bridge between Python and the Rust simulator. It converts a
//! scenario in (TOML text + overrides) and results out (JSON, or the tables and time series as
//! typed columns of bytes), and nothing else. A Rust
//! panic never reaches Python as such: it becomes `SimulationError`.

use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use vegaslab_sim::results::QueueColumn;
use vegaslab_sim::table_columns;
use vegaslab_sim::{RunResults, Series};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

create_exception!(_core, ScenarioError, PyValueError, "The scenario is invalid; the message names the file and field.");
create_exception!(_core, SimulationError, PyRuntimeError, "The simulator failed (an internal error).");

const PROGRESS_EVERY: Duration = Duration::from_millis(200);

/// A Python `ScenarioError` carrying the error's parts as attributes: `file`, `field` (the
/// dotted path, "" for the whole file), `kind` (`ErrorKind::as_str`) and `reason`.
fn scenario_error(py: Python<'_>, e: &vegaslab_sim::ScenarioError) -> PyErr {
    let err = ScenarioError::new_err(e.to_string());
    let value = err.value_bound(py);
    for (name, v) in [("file", e.file.as_str()), ("field", e.path.as_str()), ("kind", e.kind.as_str()), ("reason", e.message.as_str())] {
        // Setting an attribute on a fresh exception object cannot fail in practice; if it
        // did, the message still says everything.
        let _ = value.setattr(name, v);
    }
    err
}

fn panic_message(p: Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_string()
    }
}

/// Run a scenario, releasing the GIL; Ctrl-C and the progress callback are served every
/// `PROGRESS_EVERY` of wall time. `options`: the normalised scenario's canonical JSON too,
/// and the packet trace's directory (`vegaslab_sim::run_text_with`).
fn run_results(
    py: Python<'_>,
    toml_text: &str,
    source_name: &str,
    seed: Option<u64>,
    overrides: Vec<String>,
    progress: Option<PyObject>,
    options: &vegaslab_sim::RunOptions<'_>,
) -> PyResult<(RunResults, Option<String>)> {
    let mut callback_error: Option<PyErr> = None;
    let mut last = Instant::now();
    let outcome = py.allow_threads(|| {
        catch_unwind(AssertUnwindSafe(|| {
            vegaslab_sim::run_text_with(toml_text, source_name, seed, &overrides, |sim_s, dur_s| {
                if last.elapsed() < PROGRESS_EVERY {
                    return true;
                }
                last = Instant::now();
                Python::with_gil(|py| {
                    if let Err(e) = py.check_signals() {
                        callback_error = Some(e);
                        return false;
                    }
                    if let Some(cb) = &progress {
                        if let Err(e) = cb.call1(py, (sim_s, dur_s)) {
                            callback_error = Some(e);
                            return false;
                        }
                    }
                    true
                })
            }, options)
        }))
    });
    match outcome {
        Err(panic) => Err(SimulationError::new_err(format!(
            "{source_name}: internal simulator error: {}",
            panic_message(panic)
        ))),
        Ok(Err(e)) => Err(scenario_error(py, &e)),
        Ok(Ok(results)) => match callback_error {
            Some(e) => Err(e),
            None => Ok(results),
        },
    }
}

/// Run a scenario; returns the results as JSON (`docs/results-format.md`).
#[pyfunction]
#[pyo3(signature = (toml_text, source_name, seed=None, overrides=Vec::new(), progress=None))]
fn run_scenario(
    py: Python<'_>,
    toml_text: &str,
    source_name: &str,
    seed: Option<u64>,
    overrides: Vec<String>,
    progress: Option<PyObject>,
) -> PyResult<String> {
    Ok(run_results(py, toml_text, source_name, seed, overrides, progress, &Default::default())?.0.to_json())
}

/// Run a scenario; returns `(json, series)`: the results as JSON without the time series (its
/// `series` holds empty columns), and the time series as columns of little-endian bytes
/// (`series_columns`), which Python wraps with numpy without parsing anything.
#[pyfunction]
#[pyo3(signature = (toml_text, source_name, seed=None, overrides=Vec::new(), progress=None))]
fn run_scenario_columns(
    py: Python<'_>,
    toml_text: &str,
    source_name: &str,
    seed: Option<u64>,
    overrides: Vec<String>,
    progress: Option<PyObject>,
) -> PyResult<(String, PyObject)> {
    let (mut results, _) = run_results(py, toml_text, source_name, seed, overrides, progress, &Default::default())?;
    let series = std::mem::take(&mut results.series);
    Ok((results.to_json(), series_columns(py, &series)?))
}

/// Run a scenario; returns `(meta, tables, series, normalized)`: the results' `meta` as JSON,
/// the tables (`flows`, `queues`, `links`, `udp`) as typed columns (`table_columns`), the time
/// series as `run_scenario_columns` gives them, and the normalised scenario that ran as
/// canonical JSON (`normalize_scenario`'s text, from the same parse). No table is written as
/// text (at 100,000 flows it would be hundreds of megabytes). `trace_dir`: the directory a `[trace]` is
/// created in (under its plain name; an existing file there is a `ScenarioError`); without
/// it a trace is not written, and `meta.trace.error` says so. The other run functions never
/// write a trace.
#[pyfunction]
#[pyo3(signature = (toml_text, source_name, seed=None, overrides=Vec::new(), progress=None, trace_dir=None))]
fn run_scenario_tables(
    py: Python<'_>,
    toml_text: &str,
    source_name: &str,
    seed: Option<u64>,
    overrides: Vec<String>,
    progress: Option<PyObject>,
    trace_dir: Option<std::path::PathBuf>,
) -> PyResult<(String, PyObject, PyObject, String)> {
    let options = vegaslab_sim::RunOptions { normalized: true, trace_dir: trace_dir.as_deref() };
    let (results, normalized) = run_results(py, toml_text, source_name, seed, overrides, progress, &options)?;
    let meta = serde_json::to_string(&results.meta).map_err(|e| SimulationError::new_err(format!("{source_name}: {e}")))?;
    let tables = PyDict::new_bound(py);
    tables.set_item("flows", rows_dict(py, source_name, &results.flows)?)?;
    tables.set_item("queues", rows_dict(py, source_name, &results.queues)?)?;
    tables.set_item("links", rows_dict(py, source_name, &results.links)?)?;
    tables.set_item("udp", rows_dict(py, source_name, &results.udp)?)?;
    let normalized = normalized.ok_or_else(|| SimulationError::new_err(format!("{source_name}: no normalised scenario")))?;
    Ok((meta, tables.into_any().unbind(), series_columns(py, &results.series)?, normalized))
}

/// A table as `{"rows": n, "columns": [(name, kind, values, present), ...]}` in the table's
/// column order: `kind` is `"f64"`, `"i64"`, `"u64"` (values: little-endian bytes), `"bool"`
/// (bytes, one per row), `"str"` (a list of str) or `"none"` (no row has a value; values
/// None); `present` is None when every row has a value, else one byte per row (1: has one).
/// One results table's rows as `table_dict`'s columns; a row that cannot become columns is a
/// `SimulationError` naming the run.
fn rows_dict<T: serde::Serialize>(py: Python<'_>, source_name: &str, rows: &[T]) -> PyResult<PyObject> {
    let table = table_columns::table(rows)
        .map_err(|e| SimulationError::new_err(format!("{source_name}: results table: {e}")))?;
    table_dict(py, &table)
}

fn table_dict(py: Python<'_>, t: &table_columns::Table) -> PyResult<PyObject> {
    use table_columns::Values;
    let columns = pyo3::types::PyList::empty_bound(py);
    for c in &t.columns {
        let (kind, values): (&str, PyObject) = match &c.values {
            Values::F64(v) => ("f64", f64_bytes(py, v.iter().copied()).into_any().unbind()),
            Values::I64(v) => ("i64", le_bytes(py, v.iter().map(|x| x.to_le_bytes())).into_any().unbind()),
            Values::U64(v) => ("u64", le_bytes(py, v.iter().map(|x| x.to_le_bytes())).into_any().unbind()),
            Values::Bool(v) => ("bool", le_bytes(py, v.iter().map(|&x| [x as u8])).into_any().unbind()),
            Values::Str(v) => ("str", v.to_object(py)),
            Values::Unknown => ("none", py.None()),
        };
        let present: PyObject = if c.complete() {
            py.None()
        } else {
            le_bytes(py, c.present.iter().map(|&p| [p as u8])).into_any().unbind()
        };
        columns.append((c.name, kind, values, present))?;
    }
    let out = PyDict::new_bound(py);
    out.set_item("rows", t.rows)?;
    out.set_item("columns", columns)?;
    Ok(out.into_any().unbind())
}

/// The concatenated little-endian bytes of each value.
fn le_bytes<'py, const N: usize>(py: Python<'py>, values: impl ExactSizeIterator<Item = [u8; N]>) -> Bound<'py, PyBytes> {
    let mut out = Vec::with_capacity(values.len() * N);
    for v in values {
        out.extend_from_slice(&v);
    }
    PyBytes::new_bound(py, &out)
}

fn f64_bytes<'py>(py: Python<'py>, values: impl ExactSizeIterator<Item = f64>) -> Bound<'py, PyBytes> {
    le_bytes(py, values.map(f64::to_le_bytes))
}

fn u32_bytes<'py>(py: Python<'py>, values: &[u32]) -> Bound<'py, PyBytes> {
    le_bytes(py, values.iter().map(|v| v.to_le_bytes()))
}

fn nullable<'py>(py: Python<'py>, column: &[Option<f64>]) -> Bound<'py, PyBytes> {
    f64_bytes(py, column.iter().map(|v| v.unwrap_or(f64::NAN)))
}

/// The time series as `{"flows": {...}, "queues": {...}}`, each column `bytes`: `time_s` and the
/// value columns little-endian f64 (NaN where the JSON form has null), `active` u8, the
/// interned `flow` / `queue` column u32 indices into the `names` list, `length_pkts` f64; the
/// queues' further columns (`avg_pkts` with a RED queue monitored) in `queues["extra"]`.
fn series_columns(py: Python<'_>, s: &Series) -> PyResult<PyObject> {
    let f = &s.flows;
    let flows = PyDict::new_bound(py);
    flows.set_item("time_s", f64_bytes(py, f.time.iter().copied()))?;
    flows.set_item("flow", u32_bytes(py, &f.flow))?;
    flows.set_item("names", f.names.clone())?;
    flows.set_item("cwnd_pkts", nullable(py, &f.cwnd))?;
    flows.set_item("ssthresh_pkts", nullable(py, &f.ssthresh))?;
    flows.set_item("rtt_s", nullable(py, &f.rtt))?;
    flows.set_item("throughput_bps", nullable(py, &f.throughput_bps))?;
    flows.set_item("active", PyBytes::new_bound(py, &f.active))?;
    let extra = PyDict::new_bound(py);
    for (name, column) in &f.extra {
        extra.set_item(name, nullable(py, column))?;
    }
    flows.set_item("extra", extra)?;
    let q = &s.queues;
    let queues = PyDict::new_bound(py);
    queues.set_item("time_s", f64_bytes(py, q.time.iter().copied()))?;
    queues.set_item("queue", u32_bytes(py, &q.queue))?;
    queues.set_item("names", q.names.clone())?;
    queues.set_item("length_pkts", f64_bytes(py, q.length.iter().map(|&n| n as f64)))?;
    // Further value columns in the core's own list (`QueueSeries::value_columns`; RED's `avg_pkts`
    // when a monitored queue is RED), as the flows' `extra`: Python reads whatever is listed.
    let extra = PyDict::new_bound(py);
    for (name, column) in q.value_columns() {
        if let QueueColumn::Nullable(v) = column {
            extra.set_item(name, nullable(py, v))?;
        }
    }
    queues.set_item("extra", extra)?;
    let out = PyDict::new_bound(py);
    out.set_item("flows", flows)?;
    out.set_item("queues", queues)?;
    Ok(out.into_any().unbind())
}

/// The checks a scenario text gets before it is parsed (`scenario::precheck`: its size and
/// its `[[flows]]`, `[[links]]` and `[[udp]]` counts), so that Python can apply them before
/// its own parse of a file (`vegaslab.load_scenario`).
#[pyfunction]
fn precheck_scenario(py: Python<'_>, toml_text: &str, source_name: &str) -> PyResult<()> {
    vegaslab_sim::scenario::precheck::precheck(toml_text, source_name).map_err(|e| scenario_error(py, &e))
}

/// Validate a scenario without running it; returns a JSON summary of what it describes.
#[pyfunction]
#[pyo3(signature = (toml_text, source_name, overrides=Vec::new()))]
fn validate_scenario(py: Python<'_>, toml_text: &str, source_name: &str, overrides: Vec<String>) -> PyResult<String> {
    let parsed = catch_unwind(|| vegaslab_sim::scenario::parse(toml_text, source_name, &overrides))
        .map_err(|p| SimulationError::new_err(format!("{source_name}: internal simulator error: {}", panic_message(p))))?;
    let sc = parsed.map_err(|e| scenario_error(py, &e))?;
    let flows: Vec<serde_json::Value> = sc
        .flows
        .iter()
        .map(|f| serde_json::json!({"name": f.name, "cc": f.algorithm.name(), "from": sc.nodes[f.from], "to": sc.nodes[f.to]}))
        .collect();
    let summary = serde_json::json!({
        "id": sc.id,
        "duration_s": sc.duration as f64 / 1e9,
        "seed": sc.seed,
        "nodes": sc.nodes,
        "links": sc.links.len(),
        "flows": flows,
    });
    Ok(summary.to_string())
}

/// Weigle and Feng's alpha/beta heuristics (the grids paper, "A Case for TCP Vegas in
/// High-Performance Computational Grids", sections 4.1-4.3), computed by
/// the core (`vegaslab_cc::heuristics`), so that Python and scenarios share one copy.
/// `name` is one of the scenario's `heuristic` names; `inputs` the packet counts it takes, in
/// order. Returns `(alpha, beta)`; a bad input raises ValueError naming it.
#[pyfunction]
fn heuristic(name: &str, inputs: Vec<u64>) -> PyResult<(u64, u64)> {
    use vegaslab_cc::heuristics as h;
    let arity = |n: usize| -> PyResult<()> {
        if inputs.len() == n {
            Ok(())
        } else {
            Err(PyValueError::new_err(format!("heuristic \"{name}\" takes {n} inputs, got {}", inputs.len())))
        }
    };
    let result = match name {
        "queue" => arity(1).map(|_| h::from_queue_size(inputs[0]))?,
        "red" => arity(2).map(|_| h::from_red(inputs[0], inputs[1]))?,
        "red-exact" => arity(2).map(|_| h::from_red_exact(inputs[0], inputs[1]))?,
        "red-per-flow" => arity(2).map(|_| h::from_red_per_flow(inputs[0], inputs[1]))?,
        other => return Err(PyValueError::new_err(format!("unknown heuristic \"{other}\" (allowed: queue, red, red-exact, red-per-flow)"))),
    };
    result.map(|t| (t.alpha, t.beta)).map_err(|e| PyValueError::new_err(format!("{}: {}", e.input, e.message)))
}

/// The normalised scenario (`vegaslab_sim::scenario::normalize`): every default filled in,
/// units fixed, referenced files hashed, no paths; canonical JSON text.
#[pyfunction]
#[pyo3(signature = (toml_text, source_name, seed=None, overrides=Vec::new()))]
fn normalize_scenario(
    py: Python<'_>,
    toml_text: &str,
    source_name: &str,
    seed: Option<u64>,
    overrides: Vec<String>,
) -> PyResult<String> {
    let outcome = catch_unwind(|| vegaslab_sim::scenario::normalize(toml_text, source_name, seed, &overrides))
        .map_err(|p| SimulationError::new_err(format!("{source_name}: internal simulator error: {}", panic_message(p))))?;
    let scenario = outcome.map_err(|e| scenario_error(py, &e))?;
    Ok(vegaslab_sim::scenario::normalize::to_json(&scenario))
}

/// `normalize_scenario` for each of `seeds`, the text parsed and checked once: the normalised
/// scenarios of one sweep point's seeds (they differ in `seed` only). The GIL is released.
#[pyfunction]
#[pyo3(signature = (toml_text, source_name, seeds, overrides=Vec::new()))]
fn normalize_scenario_seeds(
    py: Python<'_>,
    toml_text: &str,
    source_name: &str,
    seeds: Vec<u64>,
    overrides: Vec<String>,
) -> PyResult<Vec<String>> {
    let outcome = py.allow_threads(|| {
        catch_unwind(|| {
            vegaslab_sim::scenario::normalize(toml_text, source_name, None, &overrides).map(|mut scenario| {
                seeds
                    .iter()
                    .map(|&seed| {
                        scenario.seed = seed;
                        vegaslab_sim::scenario::normalize::to_json(&scenario)
                    })
                    .collect::<Vec<_>>()
            })
        })
    });
    let outcome = outcome.map_err(|p| SimulationError::new_err(format!("{source_name}: internal simulator error: {}", panic_message(p))))?;
    outcome.map_err(|e| scenario_error(py, &e))
}

/// Expand the scenario's `[sweep]` table (`vegaslab_sim::scenario::sweep::expand`, format in
/// docs/sweep-format.md) with the user's overrides: the plan of every run as JSON. Every point
/// is validated, which can take a while for a large sweep, so the GIL is released meanwhile
/// and Ctrl-C is served every `PROGRESS_EVERY` (a `KeyboardInterrupt`).
#[pyfunction]
#[pyo3(signature = (toml_text, source_name, overrides=Vec::new()))]
fn expand_sweep(py: Python<'_>, toml_text: &str, source_name: &str, overrides: Vec<String>) -> PyResult<String> {
    let mut interrupted: Option<PyErr> = None;
    let mut last = Instant::now();
    let outcome = py.allow_threads(|| {
        catch_unwind(AssertUnwindSafe(|| {
            let mut stop = || {
                if last.elapsed() < PROGRESS_EVERY {
                    return false;
                }
                last = Instant::now();
                interrupted = Python::with_gil(|py| py.check_signals().err());
                interrupted.is_some()
            };
            vegaslab_sim::scenario::sweep::expand_until(toml_text, source_name, &overrides, &mut stop).map(|s| s.map(|s| s.to_json()))
        }))
    });
    match outcome {
        Err(panic) => Err(SimulationError::new_err(format!("{source_name}: internal simulator error: {}", panic_message(panic)))),
        Ok(Err(e)) => Err(scenario_error(py, &e)),
        Ok(Ok(Some(json))) => Ok(json),
        Ok(Ok(None)) => Err(interrupted.unwrap_or_else(|| SimulationError::new_err(format!("{source_name}: the sweep's expansion stopped")))),
    }
}

/// The tick-clock phase in seconds that connection `index` of a run with `seed` draws when its
/// flow's `tcp.tick_phase` is "seeded" (`vegaslab_sim::flow::seeded_tick_phase`): the ns-2
/// bridge hands it to ns-2 so that both simulators run with the same phase.
#[pyfunction]
fn seeded_tick_phase(seed: u64, index: usize, tick: f64) -> f64 {
    vegaslab_sim::flow::seeded_tick_phase(seed, index, tick)
}

/// The registry (`vegaslab_sim::registry::document`) as JSON text: every algorithm a scenario
/// may name, with its parameters' kinds, ranges, units, meanings, citations and defaults.
#[pyfunction]
fn registry() -> PyResult<String> {
    let outcome = catch_unwind(vegaslab_sim::registry::document)
        .map_err(|p| SimulationError::new_err(format!("internal simulator error: {}", panic_message(p))))?;
    let doc = outcome.map_err(|e| SimulationError::new_err(format!("internal simulator error: the registry: {e}")))?;
    Ok(doc.to_string())
}

/// The JSON Schema of the normalised scenario (`vegaslab_sim::scenario::schema`), as JSON text.
#[pyfunction]
fn scenario_schema() -> PyResult<String> {
    catch_unwind(|| vegaslab_sim::scenario::schema::schema().to_string())
        .map_err(|p| SimulationError::new_err(format!("internal simulator error: {}", panic_message(p))))
}

#[pyfunction]
fn version() -> &'static str {
    vegaslab_sim::VERSION
}

/// The git revision the core was built from (`+dirty` with uncommitted changes, `unknown`
/// outside a checkout).
#[pyfunction]
fn source_revision() -> &'static str {
    vegaslab_sim::SOURCE_REVISION
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(run_scenario_columns, m)?)?;
    m.add_function(wrap_pyfunction!(run_scenario_tables, m)?)?;
    m.add_function(wrap_pyfunction!(validate_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(normalize_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(normalize_scenario_seeds, m)?)?;
    m.add_function(wrap_pyfunction!(source_revision, m)?)?;
    m.add_function(wrap_pyfunction!(heuristic, m)?)?;
    m.add_function(wrap_pyfunction!(seeded_tick_phase, m)?)?;
    m.add_function(wrap_pyfunction!(expand_sweep, m)?)?;
    m.add_function(wrap_pyfunction!(precheck_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(registry, m)?)?;
    m.add_function(wrap_pyfunction!(scenario_schema, m)?)?;
    m.add("MAX_SCENARIO_BYTES", vegaslab_sim::scenario::limits::MAX_SCENARIO_BYTES)?;
    m.add("ScenarioError", m.py().get_type_bound::<ScenarioError>())?;
    m.add("SimulationError", m.py().get_type_bound::<SimulationError>())?;
    Ok(())
}
