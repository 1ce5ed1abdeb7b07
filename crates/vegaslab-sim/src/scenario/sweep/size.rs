//! A sweep's size, from its axes' lengths alone, checked before any value is generated: the
//! runs (points x seeds) are at most [`MAX_RUNS`], so a typo (`step = 1e-9`) is an error
//! naming the count, not an allocation (docs/sweep-format.md, "Limits"). The members of a zip
//! must have one length.

use super::range::range_len;
use super::seeds::{seed_count, SeedSpec};
use super::spec::{AxisSpec, MemberSpec, Source};
use crate::scenario::limits::MAX_RUNS;
use crate::scenario::reader::Ctx;
use crate::scenario::{ErrorKind, ScenarioError};

/// Refuse a sweep of more than [`MAX_RUNS`] runs, or a zip whose members differ in length.
pub(super) fn check_size(ctx: Ctx, seed_spec: Option<&SeedSpec>, axis_specs: &[AxisSpec]) -> Result<(), ScenarioError> {
    let seed_count = seed_count(seed_spec);
    let mut points: u128 = 1;
    for axis in axis_specs {
        let len = axis_len(ctx, axis)?;
        points = points.saturating_mul(len);
    }
    let runs = points.saturating_mul(seed_count);
    if runs > MAX_RUNS as u128 {
        let message = format!(
            "{} points x {seed_count} seeds = {} runs; at most {MAX_RUNS} runs are allowed: use fewer values, a larger step or fewer seeds",
            show_count(points),
            show_count(runs)
        );
        return Err(ctx.err_kind("sweep", ErrorKind::TooLarge, message));
    }
    Ok(())
}

/// A count for a message; the saturated counts of an absurd sweep as "more than 10^19".
fn show_count(n: u128) -> String {
    if n >= u64::MAX as u128 {
        "more than 10^19".to_string()
    } else {
        n.to_string()
    }
}

fn member_len(m: &MemberSpec) -> u128 {
    match &m.source {
        Source::List(v) => v.len() as u128,
        Source::Range(r) => range_len(r),
    }
}

/// An axis's length; the members of a zip must agree.
fn axis_len(ctx: Ctx, axis: &AxisSpec) -> Result<u128, ScenarioError> {
    let first = member_len(&axis.members[0]);
    for (k, m) in axis.members.iter().enumerate().skip(1) {
        let len = member_len(m);
        if len != first {
            let message = format!(
                "has {} values but {}.zip[0] has {}: the entries of a zip vary together and must have equal lengths",
                show_count(len),
                axis.at,
                show_count(first)
            );
            return Err(ctx.err_kind(&format!("{}.zip[{k}]", axis.at), ErrorKind::Conflict, message));
        }
    }
    Ok(first)
}
