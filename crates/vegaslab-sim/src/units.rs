//! Readable quantities in scenario files: `"20ms"`, `"1.5Mbps"`, `"10MB"`.
//!
//! Decimal prefixes throughout (1 kbps = 1000 bit/s, 1 MB = 1,000,000 bytes), as ns-2 parses
//! `1Mb`. Bare numbers are taken in the base unit (seconds, bit/s, bytes).

/// The accepted spellings of each unit and its scale, in the order error messages list them:
/// the one owner of which suffixes a scenario may write (the parsers below read them, and an
/// unknown unit's error lists them all, so `docs/scenario-format.md` takes its table of units
/// from these messages, through `scripts/gen_docs.py`).
pub const TIME_UNITS: &[(&[&str], f64)] = &[
    (&["ns"], 1.0),
    (&["us", "µs"], 1e3),
    (&["ms"], 1e6),
    (&["s", "sec"], 1e9),
    (&["min"], 60e9),
];

/// See [`TIME_UNITS`]; bit/s, decimal prefixes.
pub const BANDWIDTH_UNITS: &[(&[&str], f64)] = &[
    (&["bps", "b", "bit/s"], 1.0),
    (&["kbps", "Kbps", "kb", "Kb", "kbit/s"], 1e3),
    (&["Mbps", "mbps", "Mb", "Mbit/s"], 1e6),
    (&["Gbps", "gbps", "Gb", "Gbit/s"], 1e9),
    (&["Tbps", "tbps", "Tb", "Tbit/s"], 1e12),
];

/// See [`TIME_UNITS`]; bytes, decimal prefixes.
pub const SIZE_UNITS: &[(&[&str], f64)] = &[
    (&["B", "bytes"], 1.0),
    (&["KB", "kB", "kb"], 1e3),
    (&["MB", "mb"], 1e6),
    (&["GB", "gb"], 1e9),
];

/// The scale of `unit` in `table` (a missing unit is the base unit), or an error listing
/// every accepted spelling, with the closest one first when a spelling is near (`"Mb/s"`:
/// did you mean `"Mbit/s"`?).
fn scale_of(kind: &str, unit: &str, table: &[(&[&str], f64)], base: f64) -> Result<f64, String> {
    if unit.is_empty() {
        return Ok(base);
    }
    if let Some((_, scale)) = table.iter().find(|(names, _)| names.contains(&unit)) {
        return Ok(*scale);
    }
    let all: Vec<&str> = table.iter().flat_map(|(names, _)| names.iter().copied()).collect();
    let near = all
        .iter()
        .map(|name| (crate::scenario::spelling::edit_distance(&name.to_lowercase(), &unit.to_lowercase()), *name))
        .filter(|(d, _)| *d <= 2)
        .min_by_key(|(d, _)| *d)
        .map(|(_, name)| format!("did you mean '{name}'? "))
        .unwrap_or_default();
    let unit = crate::scenario::limits::printable(&unit.chars().take(40).collect::<String>());
    Err(format!("unknown {kind} unit '{unit}' ({near}accepted: {})", all.join(", ")))
}

/// Parse a time into integer nanoseconds (a bare number is seconds).
pub fn parse_time(text: &str) -> Result<i128, String> {
    let (num, unit) = split(text)?;
    let scale = scale_of("time", unit, TIME_UNITS, 1e9)?;
    Ok((num * scale).round() as i128)
}

/// Parse a bandwidth into bit/s.
pub fn parse_bandwidth(text: &str) -> Result<f64, String> {
    let (num, unit) = split(text)?;
    Ok(num * scale_of("bandwidth", unit, BANDWIDTH_UNITS, 1.0)?)
}

/// Parse a size into bytes.
pub fn parse_size(text: &str) -> Result<f64, String> {
    let (num, unit) = split(text)?;
    Ok(num * scale_of("size", unit, SIZE_UNITS, 1.0)?)
}

fn split(text: &str) -> Result<(f64, &str), String> {
    let t = text.trim();
    let end = t
        .char_indices()
        .find(|(_, c)| !(c.is_ascii_digit() || *c == '.' || *c == '-' || *c == '+' || *c == 'e' || *c == 'E'))
        .map(|(i, _)| i)
        .unwrap_or(t.len());
    // An 'e' that starts a unit (none of ours do) would be misread; keep exponent only if
    // followed by a digit or sign.
    let (mut num_part, mut unit) = t.split_at(end);
    if let Some(pos) = num_part.find(['e', 'E']) {
        if !num_part[pos + 1..].starts_with(|c: char| c.is_ascii_digit() || c == '-' || c == '+') {
            unit = &t[pos..];
            num_part = &t[..pos];
        }
    }
    let num: f64 = num_part
        .parse()
        .map_err(|_| format!("expected a number with a unit, got \"{text}\""))?;
    if !num.is_finite() {
        return Err(format!("expected a finite number, got \"{text}\""));
    }
    Ok((num, unit.trim()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_convert_to_nanoseconds() {
        assert_eq!(parse_time("20ms").unwrap(), 20_000_000);
        assert_eq!(parse_time("1.5s").unwrap(), 1_500_000_000);
        assert_eq!(parse_time("250 us").unwrap(), 250_000);
        assert_eq!(parse_time("3").unwrap(), 3_000_000_000);
        assert_eq!(parse_time("-3s").unwrap(), -3_000_000_000);
    }

    #[test]
    fn bandwidths_use_decimal_prefixes() {
        assert_eq!(parse_bandwidth("1Mbps").unwrap(), 1e6);
        assert_eq!(parse_bandwidth("1.55Mbps").unwrap(), 1.55e6);
        assert_eq!(parse_bandwidth("800kbps").unwrap(), 8e5);
        assert_eq!(parse_bandwidth("1Gb").unwrap(), 1e9);
    }

    #[test]
    fn sizes_use_decimal_prefixes() {
        assert_eq!(parse_size("10MB").unwrap(), 1e7);
        assert_eq!(parse_size("1500B").unwrap(), 1500.0);
    }

    #[test]
    fn unknown_units_are_named_in_the_error() {
        let e = parse_time("5 fortnights").unwrap_err();
        assert!(e.contains("fortnights"), "{e}");
        assert!(parse_bandwidth("fast").is_err());
    }
}
