//! `sweep.seeds`: a count (seeds 1 to N) or a list of distinct seeds; without it, the one seed
//! is the scenario's `run.seed` (docs/sweep-format.md, "What a sweep means", **Seeds**). Seeds
//! are not an axis: every point runs once per seed.

use crate::scenario::limits::MAX_RUNS;
use crate::scenario::reader::{describe, Obj};
use crate::scenario::{ErrorKind, ScenarioError};
use std::collections::HashMap;
use toml::Value;

pub(super) enum SeedSpec {
    Count(u64),
    List(Vec<u64>),
}

/// Read `seeds` of the `[sweep]` table `sweep`; `None` when it is absent.
pub(super) fn read_seeds(sweep: &Obj) -> Result<Option<SeedSpec>, ScenarioError> {
    let seeds = match sweep.get("seeds") {
        None => None,
        Some(Value::Integer(_)) => Some(SeedSpec::Count(sweep.integer("seeds", 1, MAX_RUNS as i64)?.unwrap_or(1) as u64)),
        Some(Value::Array(items)) => {
            if items.is_empty() {
                return Err(sweep.err_kind("seeds", ErrorKind::OutOfRange, format!("must hold 1 to {MAX_RUNS} seeds, got an empty list")));
            }
            let mut list = Vec::with_capacity(items.len());
            let mut seen = HashMap::new();
            for (i, item) in items.iter().enumerate() {
                let at = format!("seeds[{i}]");
                let seed = match item {
                    Value::Integer(s) if *s >= 0 => *s as u64,
                    Value::Integer(s) => {
                        return Err(sweep.err_kind(&at, ErrorKind::OutOfRange, format!("must be between 0 and {}, got {s}", i64::MAX)))
                    }
                    other => return Err(sweep.err_kind(&at, ErrorKind::WrongType, format!("must be a whole number, got {}", describe(other)))),
                };
                if let Some(j) = seen.insert(seed, i) {
                    return Err(sweep.err_kind(&at, ErrorKind::Conflict, format!("repeats seeds[{j}] ({seed})")));
                }
                list.push(seed);
            }
            Some(SeedSpec::List(list))
        }
        Some(other) => {
            let message = format!("must be a count of seeds (1 to {MAX_RUNS}) or a list of seeds, got {}", describe(other));
            return Err(sweep.err_kind("seeds", ErrorKind::WrongType, message));
        }
    };
    Ok(seeds)
}

/// How many seeds `spec` gives, without listing them.
pub(super) fn seed_count(spec: Option<&SeedSpec>) -> u128 {
    match spec {
        Some(SeedSpec::Count(n)) => *n as u128,
        Some(SeedSpec::List(list)) => list.len() as u128,
        None => 1,
    }
}

/// The seeds of `spec`, in run order; `base_seed` (the scenario's `run.seed`) when absent.
pub(super) fn seeds(spec: Option<SeedSpec>, base_seed: u64) -> Vec<u64> {
    match spec {
        Some(SeedSpec::Count(n)) => (1..=n).collect(),
        Some(SeedSpec::List(list)) => list,
        None => vec![base_seed],
    }
}
