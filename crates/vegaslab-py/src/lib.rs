//! `vegaslab._core`: the thin bridge between Python and the Rust simulator. It converts a
//! scenario in (TOML text + overrides) and results out through one function, `run`: `meta` as
//! JSON, every table and time series as typed Arrow columns (`arrow`), and nothing else. A Rust
//! panic never reaches Python as such: it becomes `SimulationError`.

mod arrow;
mod controllers;

use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use vegaslab_sim::table_columns;
use vegaslab_sim::RunResults;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
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
    options: &mut vegaslab_sim::RunOptions<'_>,
    controllers: Option<PyObject>,
) -> PyResult<(RunResults, Option<String>)> {
    let mut callback_error: Option<PyErr> = None;
    let mut last = Instant::now();
    // Python controllers: built by the host, whose first hook error stops the run.
    let host = controllers.map(|loader| Arc::new(controllers::PythonHost::new(loader)));
    let failure = host.as_ref().map(|h| h.failure.clone());
    if let Some(host) = &host {
        options.controllers = Some(host.clone());
    }
    let outcome = py.allow_threads(|| {
        catch_unwind(AssertUnwindSafe(|| {
            vegaslab_sim::run_text_with(toml_text, source_name, seed, &overrides, |sim_s, dur_s| {
                if failure.as_ref().is_some_and(|f| f.failed()) {
                    return false;
                }
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
    // A controller's error outranks what it made of the run (a result stopped early, or none).
    if let Some(e) = failure.and_then(|f| f.take()) {
        return Err(e);
    }
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

/// Run a scenario: the one way results cross into Python. Returns `(meta, tables, normalized)`:
/// the results' `meta` as JSON text (scalars and short lists: version, seed, counts, warnings),
/// every table and time series as an Arrow record batch (`arrow::ArrowBatch`, imported with
/// pyarrow through the Arrow PyCapsule interface) under its name, `flows`, `queues`, `links`,
/// `udp`, `series_flows` and `series_queues`, and, with `normalized`, the normalised scenario
/// that ran as canonical JSON (`normalize_scenario`'s text, from the same parse; else None).
/// `trace_dir`: the directory a `[trace]` is created in (under its plain name; an existing
/// file there is a `ScenarioError`); without it no trace is written, and `meta.trace.error`
/// says so. A table that cannot become Arrow columns is a `SimulationError` naming the run.
/// `controllers`: the loader of Python controllers (`vegaslab.controller.load`), without which a
/// scenario naming one (`py:package.module:Class`) is a `ScenarioError`; a hook's exception is a
/// `ControllerError` (`controllers`).
#[pyfunction]
#[pyo3(signature = (toml_text, source_name, seed=None, overrides=Vec::new(), progress=None, trace_dir=None, normalized=false, controllers=None))]
#[allow(clippy::too_many_arguments)]
fn run(
    py: Python<'_>,
    toml_text: &str,
    source_name: &str,
    seed: Option<u64>,
    overrides: Vec<String>,
    progress: Option<PyObject>,
    trace_dir: Option<std::path::PathBuf>,
    normalized: bool,
    controllers: Option<PyObject>,
) -> PyResult<(String, PyObject, Option<String>)> {
    let mut options = vegaslab_sim::RunOptions { normalized, trace_dir: trace_dir.as_deref(), controllers: None };
    let (results, normalized_text) = run_results(py, toml_text, source_name, seed, overrides, progress, &mut options, controllers)?;
    if normalized && normalized_text.is_none() {
        return Err(SimulationError::new_err(format!("{source_name}: no normalised scenario")));
    }
    let meta = serde_json::to_string(&results.meta).map_err(|e| SimulationError::new_err(format!("{source_name}: {e}")))?;
    let built = py.allow_threads(|| catch_unwind(AssertUnwindSafe(|| batches(results))));
    let batches = match built {
        Err(panic) => Err(SimulationError::new_err(format!("{source_name}: internal simulator error: {}", panic_message(panic)))),
        Ok(Err(e)) => Err(SimulationError::new_err(format!("{source_name}: results table: {e}"))),
        Ok(Ok(b)) => Ok(b),
    }?;
    let tables = PyDict::new_bound(py);
    for (name, batch) in batches {
        tables.set_item(name, Py::new(py, batch)?)?;
    }
    Ok((meta, tables.into_any().unbind(), normalized_text))
}

/// Every table and time series of a run as a batch, under the name Python knows it by; the
/// results are consumed, so their columns move into the batches instead of being copied.
fn batches(results: RunResults) -> Result<Vec<(&'static str, arrow::ArrowBatch)>, String> {
    let RunResults { flows, queues, links, udp, series, .. } = results;
    let table = |rows: Result<table_columns::Table, table_columns::ColumnsError>| -> Result<arrow::ArrowBatch, String> {
        arrow::table_batch(rows.map_err(|e| e.to_string())?).map_err(|e| e.to_string())
    };
    Ok(vec![
        ("flows", table(table_columns::table(&flows))?),
        ("queues", table(table_columns::table(&queues))?),
        ("links", table(table_columns::table(&links))?),
        ("udp", table(table_columns::table(&udp))?),
        ("series_flows", arrow::flow_series_batch(series.flows).map_err(|e| e.to_string())?),
        ("series_queues", arrow::queue_series_batch(series.queues).map_err(|e| e.to_string())?),
    ])
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

/// The Python controllers' host for a loader (`vegaslab.controller.load`), if one is given.
fn python_host(loader: Option<PyObject>) -> Option<Arc<dyn vegaslab_cc::external::ExternalControllers>> {
    loader.map(|l| Arc::new(controllers::PythonHost::new(l)) as Arc<dyn vegaslab_cc::external::ExternalControllers>)
}

/// `scenario` with its Python controllers bound to `host` (which records the hash of each
/// class's source); unchanged without a host.
fn hosted(
    mut scenario: vegaslab_sim::Scenario,
    host: Option<&Arc<dyn vegaslab_cc::external::ExternalControllers>>,
) -> Result<vegaslab_sim::Scenario, vegaslab_sim::ScenarioError> {
    if host.is_some() {
        vegaslab_sim::scenario::bind_external(&mut scenario, host)?;
    }
    Ok(scenario)
}

/// The normalised scenario (`vegaslab_sim::scenario::normalize`): every default filled in,
/// units fixed, referenced files hashed, no paths; canonical JSON text. With `controllers`
/// (`vegaslab.controller.load`), a Python controller's entry records its module's SHA-256.
#[pyfunction]
#[pyo3(signature = (toml_text, source_name, seed=None, overrides=Vec::new(), controllers=None))]
fn normalize_scenario(
    py: Python<'_>,
    toml_text: &str,
    source_name: &str,
    seed: Option<u64>,
    overrides: Vec<String>,
    controllers: Option<PyObject>,
) -> PyResult<String> {
    let host = python_host(controllers);
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        vegaslab_sim::scenario::normalize(toml_text, source_name, seed, &overrides).and_then(|s| hosted(s, host.as_ref()))
    }))
        .map_err(|p| SimulationError::new_err(format!("{source_name}: internal simulator error: {}", panic_message(p))))?;
    let scenario = outcome.map_err(|e| scenario_error(py, &e))?;
    Ok(vegaslab_sim::scenario::normalize::to_json(&scenario))
}

/// `normalize_scenario` for each of `seeds`, the text parsed and checked once: the normalised
/// scenarios of one sweep point's seeds (they differ in `seed` only). The GIL is released.
#[pyfunction]
#[pyo3(signature = (toml_text, source_name, seeds, overrides=Vec::new(), controllers=None))]
fn normalize_scenario_seeds(
    py: Python<'_>,
    toml_text: &str,
    source_name: &str,
    seeds: Vec<u64>,
    overrides: Vec<String>,
    controllers: Option<PyObject>,
) -> PyResult<Vec<String>> {
    let host = python_host(controllers);
    let outcome = py.allow_threads(|| {
        catch_unwind(AssertUnwindSafe(|| {
            let scenario = vegaslab_sim::scenario::normalize(toml_text, source_name, None, &overrides);
            scenario.and_then(|s| hosted(s, host.as_ref())).map(|mut scenario| {
                seeds
                    .iter()
                    .map(|&seed| {
                        scenario.seed = seed;
                        vegaslab_sim::scenario::normalize::to_json(&scenario)
                    })
                    .collect::<Vec<_>>()
            })
        }))
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

/// Where a file that a scenario read from `source` names as `name` is (a delay trace, a BPF
/// object): the core's one rule (`vegaslab_sim::scenario::resolve_relative`), for the programs
/// that open the same file again (the kernel testbed).
#[pyfunction]
fn scenario_file_path(source: &str, name: &str) -> String {
    vegaslab_sim::scenario::resolve_relative(source, name).to_string_lossy().into_owned()
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
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_class::<arrow::ArrowBatch>()?;
    controllers::add_classes(m)?;
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
    m.add_function(wrap_pyfunction!(scenario_file_path, m)?)?;
    m.add_function(wrap_pyfunction!(scenario_schema, m)?)?;
    m.add("MAX_SCENARIO_BYTES", vegaslab_sim::scenario::limits::MAX_SCENARIO_BYTES)?;
    m.add("ScenarioError", m.py().get_type_bound::<ScenarioError>())?;
    m.add("SimulationError", m.py().get_type_bound::<SimulationError>())?;
    Ok(())
}
