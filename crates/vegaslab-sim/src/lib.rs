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
pub mod loss;
pub mod packet;
pub mod queue;
pub mod results;
pub mod rng;
pub mod scenario;
pub mod sim;
pub mod table_columns;
pub mod trace;
pub mod udp;
pub mod units;

pub use results::{RunResults, Series};
pub use scenario::{ErrorKind, Scenario, ScenarioError};
pub use sim::Simulator;

pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The git commit this core was built from, `+dirty` if tracked files had changes, or
/// `unknown` outside a git checkout (see `build.rs`).
pub const SOURCE_REVISION: &str = env!("VEGASLAB_SOURCE_REVISION");

/// Refuse a run whose time series would not fit in memory (`scenario::limits`), before any
/// of it is allocated: a 1 ns sample interval or a 10^7 s run with monitors on is an error
/// that says how much memory it would take, never an allocation failure that aborts.
pub(crate) fn check_recording_size(scenario: &Scenario) -> Result<(), ScenarioError> {
    use scenario::limits::{human_bytes, recorded_bytes, MAX_RECORDED_BYTES};
    let m = &scenario.monitor;
    let queues = if m.all_queues { scenario.links.len() * 2 } else { m.queues.len() };
    let bytes = recorded_bytes(scenario.duration, scenario.sample_interval, scenario.flows.len(), queues, m.cwnd, m.throughput);
    if bytes <= MAX_RECORDED_BYTES {
        return Ok(());
    }
    let samples = scenario.duration / scenario.sample_interval + 1;
    let message = format!(
        "the monitors would record {samples} samples for each of {} flow and {queues} queue series, about {} (at most {} allowed): raise run.sample_interval, shorten run.duration or monitor less",
        scenario.flows.len(),
        human_bytes(bytes),
        human_bytes(MAX_RECORDED_BYTES)
    );
    Err(ScenarioError::new(&scenario.source, "run.sample_interval", ErrorKind::TooLarge, message))
}

/// Parse, validate and run a scenario given as TOML text.
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
    // Link, flow and source counts are bounded by the scenario reader (`scenario::limits`),
    // so that they fit the event indices.
    // Per-flow connections take event indices too: refuse runs expected to come near the limit.
    let mut expected = scenario.flows.len() as f64;
    let mut heaviest = None;
    for f in &scenario.flows {
        let arrivals = match &f.app {
            scenario::AppSpec::Nps(a) | scenario::AppSpec::ParetoPaced(scenario::PacedSpec { arrivals: a, .. }) if a.per_flow => a,
            _ => continue,
        };
        let end = f.stop.unwrap_or(scenario.duration).min(scenario.duration);
        expected += end.saturating_sub(f.start) as f64 / 1e9 / arrivals.mean_interarrival;
        heaviest.get_or_insert(f.name.clone());
    }
    if expected * 2.0 > crate::event::MAX_INDEX as f64 {
        return Err(ScenarioError::new(
            source,
            "flows.app.connection",
            ErrorKind::TooLarge,
            format!(
                "connection = \"per-flow\" would open about {expected:.0} TCP connections (flows plus expected flow arrivals, e.g. of {}); at most {} fit the event indices with margin: shorten the run, lengthen mean_interarrival or use connection = \"shared\"",
                heaviest.unwrap_or_default(),
                crate::event::MAX_INDEX / 2
            ),
        ));
    }
    let normalized = options.normalized.then(|| scenario::normalize::to_json(&scenario));
    let mut sim = Simulator::new(scenario);
    let unroutable = sim.unroutable_flows();
    if !unroutable.is_empty() {
        let message = format!("no path between the endpoints of: {}", unroutable.join(", "));
        return Err(ScenarioError::new(source, "flows", ErrorKind::Reference, message));
    }
    let unroutable = sim.unroutable_udp();
    if !unroutable.is_empty() {
        let message = format!("no path between the endpoints of UDP source(s): {}", unroutable.join(", "));
        return Err(ScenarioError::new(source, "udp", ErrorKind::Reference, message));
    }
    if let Some((path, message)) = sim.invalid_udp() {
        return Err(ScenarioError::new(source, &path, ErrorKind::OutOfRange, message));
    }
    let blind = sim.flows_without_aqt_router();
    if !blind.is_empty() {
        let message = format!(
            "RoVegas flow(s) {} cross no AQT-enabled router; list at least one router on their path",
            blind.join(", ")
        );
        return Err(ScenarioError::new(source, "aqt.routers", ErrorKind::Reference, message));
    }
    if let Some(dir) = options.trace_dir {
        sim.open_trace(dir)?;
    }
    let results = sim.run(progress);
    // A run the simulator had to stop on a limit (e.g. more per-flow connections than event
    // indices) is an error naming the field, not a partial result that looks complete.
    if let Some(a) = &results.meta.aborted {
        return Err(ScenarioError::new(source, &a.field, ErrorKind::TooLarge, a.message.clone()));
    }
    Ok((results, normalized))
}
