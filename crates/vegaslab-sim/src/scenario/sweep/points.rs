//! The points of a sweep: the Cartesian product of its axes in file order, numbered row-major
//! with the last axis varying fastest, like nested loops written in the order of the file and
//! like numpy's C order (docs/sweep-format.md, "What a sweep means", **Points**). A zip axis is
//! one axis whose members vary together.

use super::plan::{Axis, Point};

/// Every point of `axes`, each with its coordinates, its `path=value` overrides and its values.
pub(super) fn build_points(axes: &[Axis]) -> Vec<Point> {
    let total: usize = axes.iter().map(|a| a.len).product();
    let nparams: usize = axes.iter().map(|a| a.params.len()).sum();
    // The override text of every value, made once.
    let texts: Vec<Vec<Vec<String>>> = axes
        .iter()
        .map(|a| a.params.iter().map(|p| p.values.iter().map(|v| format!("{}={}", p.path, v.to_override())).collect()).collect())
        .collect();
    let mut points = Vec::with_capacity(total);
    let mut coords = vec![0usize; axes.len()];
    for index in 0..total {
        let mut overrides = Vec::with_capacity(nparams);
        let mut values = Vec::with_capacity(nparams);
        for (k, axis) in axes.iter().enumerate() {
            for (m, p) in axis.params.iter().enumerate() {
                overrides.push(texts[k][m][coords[k]].clone());
                values.push(p.values[coords[k]].clone());
            }
        }
        points.push(Point { index, coords: coords.clone(), overrides, values });
        // Odometer: the last axis fastest.
        for k in (0..axes.len()).rev() {
            coords[k] += 1;
            if coords[k] < axes[k].len {
                break;
            }
            coords[k] = 0;
        }
    }
    points
}
