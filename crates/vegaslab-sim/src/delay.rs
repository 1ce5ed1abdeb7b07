//! Propagation-delay models of a link direction: constant, scheduled changes, and a trace
//! file, all held as one step function of time.
//!
//! A link's delay is `base` until the first change point, then each point's delay from its
//! time on (a step function: no interpolation between points). A packet takes the delay in
//! force when its transmission starts, as ns-2's `LinkDelay` applies `delay_`.
//!
//! - `delay = "10ms"`: constant.
//! - `delay_schedule = [{ at = "20s", delay = "100ms" }]`: changes at given times.
//! - `delay_trace = "path/to/trace.csv"`: changes read from a file (see [`parse_trace`]).
//! - The `[leo]` builder fills the schedule from the constellation model (`leo.rs`).
//!
//! A delay that changes lets a later packet overtake an earlier one (when the delay falls), so
//! such a channel does not "keep order" and express hops are not used through it.

use vegaslab_cc::Nanos;

/// A step function of time: `base`, then `(at, delay)` points in time order.
#[derive(Clone, Debug, Default)]
pub struct DelayModel {
    base: Nanos,
    points: Vec<(Nanos, Nanos)>,
    /// Index of the first point not yet in force at the last `at_mut` time.
    cursor: usize,
}

impl DelayModel {
    /// `points` must be in non-decreasing time order (the scenario reader checks it); among
    /// points with equal times the last wins.
    pub fn new(base: Nanos, points: Vec<(Nanos, Nanos)>) -> Self {
        debug_assert!(points.windows(2).all(|w| w[0].0 <= w[1].0), "delay points out of order");
        DelayModel { base, points, cursor: 0 }
    }

    /// Delay in force at time `t`.
    pub fn at(&self, t: Nanos) -> Nanos {
        match self.points.partition_point(|&(at, _)| at <= t) {
            0 => self.base,
            i => self.points[i - 1].1,
        }
    }

    /// Delay in force at `t`, fast for non-decreasing `t` (a channel's transmission starts are):
    /// amortised O(1) with a cursor, falling back to a binary search if `t` goes back.
    #[inline]
    pub fn at_mut(&mut self, t: Nanos) -> Nanos {
        if self.points.is_empty() {
            return self.base;
        }
        if self.cursor > 0 && self.points[self.cursor - 1].0 > t {
            self.cursor = self.points.partition_point(|&(at, _)| at <= t);
        } else {
            while self.cursor < self.points.len() && self.points[self.cursor].0 <= t {
                self.cursor += 1;
            }
        }
        match self.cursor {
            0 => self.base,
            i => self.points[i - 1].1,
        }
    }

    /// The delay never changes (so packets leave in the order they arrive).
    pub fn is_constant(&self) -> bool {
        self.points.iter().all(|&(_, d)| d == self.base)
    }

    pub fn base(&self) -> Nanos {
        self.base
    }

    pub fn points(&self) -> &[(Nanos, Nanos)] {
        &self.points
    }
}

/// Parse a delay trace: one `time, delay` pair per line.
///
/// - Fields are separated by a comma, a semicolon or white space. Each is a time with a unit
///   (`"20ms"`) or a bare number in seconds.
/// - Blank lines and lines starting with `#` are skipped; so is a first line that starts with a
///   letter (a header such as `time,delay`).
/// - Times must not decrease; delays must be >= 0. At least one point is required.
///
/// Errors are `(line number, message)`; line numbers start at 1.
pub fn parse_trace(text: &str) -> Result<Vec<(Nanos, Nanos)>, (usize, String)> {
    let mut out: Vec<(Nanos, Nanos)> = Vec::new();
    let mut seen_data = false;
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if !seen_data && out.is_empty() && line.chars().next().is_some_and(|c| c.is_ascii_alphabetic()) {
            seen_data = true; // a header
            continue;
        }
        seen_data = true;
        let fields: Vec<&str> = line.split(|c: char| c == ',' || c == ';' || c.is_whitespace()).filter(|f| !f.is_empty()).collect();
        if fields.len() != 2 {
            return Err((n, format!("expected two fields \"time, delay\", got {}", fields.len())));
        }
        // Errors name the line and the field, and quote nothing of the file: a trace may be any
        // file the user can read, and a message can end up in a shared report.
        let time = |s: &str, what: &str, max: i128| -> Result<Nanos, (usize, String)> {
            let v = crate::units::parse_time(s).map_err(|_| (n, format!("the {what} field is not a time like \"10ms\" or seconds")))?;
            if !(0..=max).contains(&v) {
                return Err((n, format!("the {what} must be between 0 and {} s", max / 1_000_000_000)));
            }
            Ok(v as Nanos)
        };
        let at = time(fields[0], "time", crate::scenario::limits::MAX_TIME_NS)?;
        let d = time(fields[1], "delay", crate::scenario::limits::MAX_DELAY_NS)?;
        if let Some(&(prev, _)) = out.last() {
            if at < prev {
                return Err((n, format!("times must not decrease ({} s after {} s)", at as f64 * 1e-9, prev as f64 * 1e-9)));
            }
        }
        out.push((at, d));
    }
    if out.is_empty() {
        return Err((0, "the trace has no (time, delay) lines".to_string()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn step_function_holds_each_delay_until_the_next_point() {
        let mut m = DelayModel::new(10, vec![(100, 20), (200, 5)]);
        assert_eq!((m.at(0), m.at(99), m.at(100), m.at(150), m.at(200), m.at(10_000)), (10, 10, 20, 20, 5, 5));
        let got: Vec<Nanos> = [0, 100, 150, 250, 120, 90, 300].iter().map(|&t| m.at_mut(t)).collect();
        assert_eq!(got, vec![10, 20, 20, 5, 20, 10, 5]);
        assert!(!m.is_constant());
        assert!(DelayModel::new(7, vec![(5, 7)]).is_constant());
    }

    #[test]
    fn trace_accepts_units_headers_and_comments() {
        let t = "time,delay\n# comment\n0, 10ms\n1.5 0.02\n\n2s;30ms\n";
        assert_eq!(parse_trace(t).unwrap(), vec![(0, 10_000_000), (1_500_000_000, 20_000_000), (2_000_000_000, 30_000_000)]);
    }

    #[test]
    fn trace_errors_name_the_line() {
        assert_eq!(parse_trace("0 1ms\n2 1ms\n1 1ms\n").unwrap_err().0, 3);
        assert_eq!(parse_trace("0 -1ms\n").unwrap_err().0, 1);
        assert_eq!(parse_trace("0 1ms 5\n").unwrap_err().0, 1);
        assert_eq!(parse_trace("0 1ms\nx y\n").unwrap_err().0, 2);
        assert_eq!(parse_trace("# nothing\n").unwrap_err().0, 0);
    }
}
