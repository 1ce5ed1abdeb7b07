//! Readable quantities in scenario files: `"20ms"`, `"1.5Mbps"`, `"10MB"`.
//!
//! Decimal prefixes throughout (1 kbps = 1000 bit/s, 1 MB = 1,000,000 bytes), as ns-2 parses
//! `1Mb`. Bare numbers are taken in the base unit (seconds, bit/s, bytes).

/// Parse a time into integer nanoseconds.
pub fn parse_time(text: &str) -> Result<i128, String> {
    let (num, unit) = split(text)?;
    let scale = match unit {
        "" | "s" | "sec" => 1e9,
        "ms" => 1e6,
        "us" | "µs" => 1e3,
        "ns" => 1.0,
        "min" => 60e9,
        _ => return Err(format!("unknown time unit '{unit}' (use ns, us, ms, s or min)")),
    };
    Ok((num * scale).round() as i128)
}

/// Parse a bandwidth into bit/s.
pub fn parse_bandwidth(text: &str) -> Result<f64, String> {
    let (num, unit) = split(text)?;
    let scale = match unit {
        "" | "bps" | "b" | "bit/s" => 1.0,
        "kbps" | "Kbps" | "kb" | "Kb" | "kbit/s" => 1e3,
        "Mbps" | "mbps" | "Mb" | "Mbit/s" => 1e6,
        "Gbps" | "gbps" | "Gb" | "Gbit/s" => 1e9,
        "Tbps" | "tbps" | "Tb" | "Tbit/s" => 1e12,
        _ => return Err(format!("unknown bandwidth unit '{unit}' (use bps, kbps, Mbps, Gbps or Tbps)")),
    };
    Ok(num * scale)
}

/// Parse a size into bytes.
pub fn parse_size(text: &str) -> Result<f64, String> {
    let (num, unit) = split(text)?;
    let scale = match unit {
        "" | "B" | "bytes" => 1.0,
        "KB" | "kB" | "kb" => 1e3,
        "MB" | "mb" => 1e6,
        "GB" | "gb" => 1e9,
        _ => return Err(format!("unknown size unit '{unit}' (use B, KB, MB or GB)")),
    };
    Ok(num * scale)
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
