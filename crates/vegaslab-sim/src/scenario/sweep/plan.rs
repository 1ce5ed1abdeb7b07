//! The expanded sweep, the plan of every run: its axes, parameters, points and seeds, and the
//! JSON the Python side reads (docs/sweep-format.md, "The plan").

use super::value::{ParamType, ParamValue};
use serde::Serialize;

/// Layout version of the JSON of a [`Sweep`] (its `format` field).
pub const FORMAT: u32 = 1;

/// One swept field: its column name, its `--set` path and its values.
#[derive(Clone, Debug, Serialize)]
pub struct Param {
    /// Column name: the member's `name`, else (for a one-path axis) the axis's `name`, else
    /// the path.
    pub name: String,
    pub path: String,
    #[serde(rename = "type")]
    pub ty: ParamType,
    pub values: Vec<ParamValue>,
    /// Where the values are written, for messages: `sweep.axis[1].values` or
    /// `sweep.axis[1].zip[0].range`.
    #[serde(skip)]
    pub(super) origin: Origin,
}

/// Where a parameter's values are written in the file, so that an error names the value's own
/// place (docs/sweep-format.md, "Errors").
#[derive(Clone, Debug)]
pub(super) struct Origin {
    /// `sweep.axis[1]` or `sweep.axis[1].zip[0]`.
    pub(super) at: String,
    pub(super) from_range: bool,
}

impl Origin {
    /// Where value `j` is written.
    pub(super) fn value(&self, j: usize) -> String {
        if self.from_range {
            format!("{}.range", self.at)
        } else {
            format!("{}.values[{j}]", self.at)
        }
    }

    /// A message prefix for value `j` of a range ("value 3 (40): "), empty for a listed value.
    pub(super) fn value_prefix(&self, j: usize, v: &ParamValue) -> String {
        if self.from_range {
            format!("value {j} ({}): ", v.to_override())
        } else {
            String::new()
        }
    }
}

/// One axis: one parameter, or several that vary together (a zip); all of length `len`.
#[derive(Clone, Debug, Serialize)]
pub struct Axis {
    /// The axis's `name`, else its parameters' names joined by `+`.
    pub name: String,
    pub len: usize,
    pub params: Vec<Param>,
}

/// One point of the sweep.
#[derive(Clone, Debug, Serialize)]
pub struct Point {
    /// Position in [`Sweep::points`] (row-major over the axes, last axis fastest).
    pub index: usize,
    /// The index into each axis's values, one per axis.
    pub coords: Vec<usize>,
    /// The point's `path=value` overrides, one per parameter in axis order: applied after
    /// the user's overrides ([`Sweep::overrides`]).
    pub overrides: Vec<String>,
    /// The point's value of each parameter, in the order of [`Sweep::params`].
    pub values: Vec<ParamValue>,
}

/// An expanded sweep: the plan of every run.
#[derive(Clone, Debug, Serialize)]
pub struct Sweep {
    pub format: u32,
    /// The scenario file's name (for messages; not part of any run's identity).
    pub source: String,
    /// The user's overrides, applied before every point's.
    pub overrides: Vec<String>,
    pub axes: Vec<Axis>,
    pub seeds: Vec<u64>,
    pub points: Vec<Point>,
    /// `points.len() * seeds.len()`.
    pub runs: u64,
}

impl Sweep {
    /// The parameters of every axis, in order (the order of [`Point::values`]).
    pub fn params(&self) -> impl Iterator<Item = &Param> {
        self.axes.iter().flat_map(|a| a.params.iter())
    }

    /// All the overrides of point `i`: the user's, then the point's.
    pub fn run_overrides(&self, i: usize) -> Vec<String> {
        self.overrides.iter().chain(self.points[i].overrides.iter()).cloned().collect()
    }

    /// The plan as JSON text (`docs/sweep-format.md`).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a sweep serialises (finite numbers, string keys)")
    }
}
