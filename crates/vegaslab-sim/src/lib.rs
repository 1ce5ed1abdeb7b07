//! vegaslab-sim: a deterministic packet-level simulator for TCP congestion-control research.
//!
//! Flow of one run: TOML text -> [`scenario::parse`] (validated, errors name file and field)
//! -> [`Simulator`] (event loop in integer nanoseconds) -> [`RunResults`] (JSON for Python).
//!
//! Module map: [`units`] (quantities), [`scenario`] (schema and validation), [`event`] (the
//! queue), [`packet`] (pool), [`channel`] (one link direction: queue, transmitter, pipe),
//! [`flow`] (sender + sink + application), [`sim`] (the loop), [`results`], [`rng`].

pub mod apps;
pub mod channel;
pub mod delay;
pub mod event;
pub mod express;
pub mod flow;
pub mod leo;
pub mod linux_receiver;
pub mod loss;
pub mod packet;
pub mod queue;
pub mod registry;
pub mod results;
pub mod rng;
pub mod scenario;
pub mod sim;
pub mod table_columns;
pub mod trace;
pub mod udp;
pub mod units;

pub use results::{AbortKind, RunResults, Series};
pub use scenario::{ErrorKind, Scenario, ScenarioError};
pub use sim::Simulator;

pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The git commit this core was built from, `+dirty` if tracked files had changes, or
/// `unknown` outside a git checkout (see `build.rs`).
pub const SOURCE_REVISION: &str = env!("VEGASLAB_SOURCE_REVISION");

/// Parse, validate and run a scenario given as TOML text: [`scenario::parse`], then
/// [`Simulator::build`] (the checks that need the whole scenario or its routes), then the run.
///
/// A `[trace]` is recorded but not written (`RunMeta::trace` says so): give its output
/// directory with [`run_text_with`].
pub fn run_text(
    text: &str,
    source: &str,
    seed: Option<u64>,
    overrides: &[String],
    progress: impl FnMut(f64, f64) -> bool,
) -> Result<RunResults, ScenarioError> {
    run_text_with(text, source, seed, overrides, progress, &RunOptions::default()).map(|(results, _)| results)
}

/// What a run writes or returns besides its results ([`run_text_with`]).
#[derive(Clone, Debug, Default)]
pub struct RunOptions<'a> {
    /// Also return the normalised scenario's canonical JSON (`scenario::normalize::to_json`)
    /// of the very scenario that ran: what provenance records, without a second parse of the
    /// text and its files (a file changed in between cannot make the record differ from the
    /// run).
    pub normalized: bool,
    /// The directory the packet trace (`[trace]`) is created in, under its plain name
    /// (`Simulator::open_trace`). The scenario names the file only, never where it goes.
    pub trace_dir: Option<&'a std::path::Path>,
    /// What builds the scenario's external controllers (`cc = "py:package.module:Class"`):
    /// the Python binding supplies it. Without it such a scenario is refused.
    pub controllers: Option<std::sync::Arc<dyn vegaslab_cc::external::ExternalControllers>>,
}

/// [`run_text`] with [`RunOptions`]: the normalised scenario, the trace's directory.
pub fn run_text_with(
    text: &str,
    source: &str,
    seed: Option<u64>,
    overrides: &[String],
    progress: impl FnMut(f64, f64) -> bool,
    options: &RunOptions<'_>,
) -> Result<(RunResults, Option<String>), ScenarioError> {
    let mut scenario = scenario::parse(text, source, overrides)?;
    if let Some(seed) = seed {
        scenario.seed = seed;
    }
    scenario::bind_external(&mut scenario, options.controllers.as_ref())?;
    let normalized = options.normalized.then(|| scenario::normalize::to_json(&scenario));
    let mut sim = Simulator::build(scenario)?;
    if let Some(dir) = options.trace_dir {
        sim.open_trace(dir)?;
    }
    let results = sim.run(progress);
    // A run the simulator had to stop on a limit (e.g. more per-flow connections than event
    // indices) or on a BPF program's fault is an error naming the field, not a partial result
    // that looks complete.
    if let Some(a) = &results.meta.aborted {
        let kind = match a.kind {
            AbortKind::Limit => ErrorKind::TooLarge,
            AbortKind::Fault => ErrorKind::File,
        };
        return Err(ScenarioError::new(source, &a.field, kind, a.message.clone()));
    }
    Ok((results, normalized))
}
