//! Parameter sweeps: the `[sweep]` table of a scenario file, expanded into the points of a
//! study (`docs/sweep-format.md` is the user's description; this is the reference).
//!
//! ```toml
//! [sweep]
//! seeds = 10                                   # 1..=10; or a list; default: [run.seed]
//! [[sweep.axis]]
//! path = "flows[1].params.alpha"               # any --set path
//! values = [1, 2, 4, 8]
//! [[sweep.axis]]
//! path = "links[1].queue.limit"
//! range = { start = 10, stop = 50, step = 10 }  # or num = 5, scale = "linear" | "log"
//! [[sweep.axis]]
//! name = "thresholds"
//! zip = [ { path = "flows[0].params.alpha", values = [1, 2] },
//!         { path = "flows[0].params.beta",  values = [3, 4] } ]
//! ```
//!
//! What was decided, and why:
//!
//! - **One override mechanism.** A point is a list of `path=value` strings, exactly what
//!   `--set` takes, so any point can be re-run by hand (`vegaslab run FILE --set ...`) and a
//!   sweep needs no second way of editing scenarios. The user's own overrides are applied to
//!   the document first (so `--set sweep.seeds=3` edits the sweep itself) and the point's
//!   after them, so on a swept path the axis wins.
//! - **Product, last axis fastest.** Points are the Cartesian product of the axes in file
//!   order, numbered row-major (the last axis varies fastest), like nested loops written in
//!   the order of the file and like numpy's C order; a zip axis is one axis whose members
//!   vary together. Seeds are not an axis of the point list: every point runs once per seed.
//! - **The base scenario runs alone.** The core's `parse`/`run` ignore `[sweep]`, so
//!   `vegaslab run FILE` runs the base scenario (no axis applied). The base must itself be
//!   valid: it is what `run` runs and what every point starts from.
//! - **Every point is validated here**, by building the scenario with its overrides, so a
//!   sweep that expands never fails later on a bad combination. A value that is bad on its
//!   own is blamed on its place in the file (`sweep.axis[1].values[3]`, or
//!   `sweep.axis[1].range` for a generated value); a point whose values are each fine alone
//!   but not together names the axis whose field the core rejected, and the whole point.
//! - **Typed scalar values.** Values are strings, integers, floats or booleans, one type per
//!   parameter (integers and floats may mix; the parameter is then float and every value is
//!   converted, so the column and what runs agree). Tables and arrays are refused: a typed
//!   column per parameter is the point of a sweep; sweep a table's fields instead.
//! - **Ranges.** `step` ranges run from `start` while `<= stop` (stop is included when it
//!   lands on a step, within a relative 1e-9 for floats); `num` ranges give `num` values from
//!   `start` to `stop` inclusive, evenly spaced (`linear`, the default) or evenly spaced in
//!   log10 (`log`, start > 0). Generated floats are rounded to 12 significant digits, so a
//!   0.1 step gives 0.3, not 0.30000000000000004. A range is integer when `start`, `stop`
//!   (and `step`) are integers and, for `num` ranges, every value is a whole number;
//!   otherwise it is float.
//! - **Distinct points, bounded size.** Repeated values (or, in a zip, repeated tuples) are
//!   an error, since they would run the same thing twice under one key. The number of runs
//!   (points x seeds) is at most [`MAX_RUNS`], checked from the axes' lengths before anything
//!   is generated, so a typo (`step = 1e-9`) is an error, not an allocation.
//! - **No sweeping of the seed or the sweep.** `run.seed` is swept with `seeds`, and a path
//!   into `sweep` is refused; two axes may not set the same field or one inside the other.
//!
//! One job per file, the shared types in leaves that name none of their users:
//!
//! - `value.rs`: a swept value and its type, and the `--set` text that applies it.
//! - `path.rs`: override paths as steps, to compare fields by meaning.
//! - `plan.rs`: the expanded plan ([`Sweep`], [`Axis`], [`Param`], [`Point`]) and its JSON.
//! - `spec.rs`: what the `[sweep]` table says before expansion.
//! - `read.rs`: the `[sweep]` table read into specs, field by field; `seeds.rs` its `seeds`,
//!   `range.rs` its ranges (read, counted, generated), `names.rs` its names.
//! - `size.rs`: the number of runs, checked from the lengths alone.
//! - `axes.rs`: an axis's values generated and checked distinct; `points.rs` the product.
//! - `validate.rs`: every value and point built by the core, each error blamed on its place.
//! - `expand.rs`: the steps above in order ([`expand()`], [`expand_until`]).

mod axes;
mod expand;
mod names;
mod path;
mod plan;
mod points;
mod range;
mod read;
mod seeds;
mod size;
mod spec;
mod validate;
mod value;

pub use super::limits::MAX_RUNS;
pub use expand::{expand, expand_until};
pub use names::{MAX_NAME_CHARS, RESERVED_NAMES};
pub use plan::{Axis, Param, Point, Sweep, FORMAT};
pub use value::{ParamType, ParamValue};
