//! The ranges every physical quantity and every size of a scenario must lie in: one place,
//! read by the field readers (`reader.rs`), the builders and the run's memory check.
//!
//! Why these numbers: the clock counts integer nanoseconds in a `u64` (584 years), and a
//! packet's time is a sum of many terms (start, transmission and propagation on every hop).
//! Bounding each term far below the clock's range keeps every sum exact without wrap-around:
//! a run of at most [`MAX_TIME_NS`] plus 20,000 hops of at most [`MAX_DELAY_NS`] each stays
//! below 10^17 ns, a hundredth of the clock's range. Bandwidths and sizes are bounded so that
//! a transmission time is at least the clock's 1 ns resolution and at most a few months.
//! Each bound is far outside anything the papers (or any real network) use, so it rejects
//! only input that is a mistake.

use super::{ErrorKind, Scenario, ScenarioError};

/// Longest simulated time, and the largest time a scenario may name (start, stop, schedule
/// points): 10^7 s, about 116 days.
pub const MAX_TIME_NS: i128 = 10_000_000 * 1_000_000_000;

/// Largest one-way propagation delay of a link direction: one hour (Earth to Mars is at most
/// 22 minutes).
pub const MAX_DELAY_NS: i128 = 3_600 * 1_000_000_000;

/// Smallest bandwidth, bit/s (a 1,000-byte packet then takes 8,000 s to send).
pub const MIN_BANDWIDTH_BPS: f64 = 1.0;

/// Largest bandwidth, bit/s: 10 Tbit/s. With the smallest packet (1 byte) a transmission still
/// takes at least the clock's 1 ns resolution (0.8 ps rounds up to 1 ns; see `channel/mod.rs`).
pub const MAX_BANDWIDTH_BPS: f64 = 1e13;

/// Largest size in bytes (a file transfer, a mean flow size): 1 PB.
pub const MAX_SIZE_BYTES: f64 = 1e15;

/// Most packets in a file transfer given as a packet count (`app = { kind = "file", packets
/// = N }`): 10^12. The sender numbers packets below `vegaslab_cc::MAX_SEQ` (2^40, about
/// 1.1 x 10^12; an infinite source is that sequence number), so a larger count would pass
/// for an infinite FTP source and never complete; 10^12 leaves room for the SYN.
pub const MAX_FILE_PACKETS: i64 = 1_000_000_000_000;

/// Longest name of a node, flow or UDP source, and the characters it may use. Names end up in
/// file names, table columns, claim references and the ns-2 bridge's Tcl script, so they are
/// restricted to characters that mean nothing special in any of them.
pub const MAX_NAME_LEN: usize = 64;
pub const NAME_CHARS: &str = "letters, digits, '_' and '-'";

/// Whether `name` is a valid node, flow or source name: 1..=[`MAX_NAME_LEN`] ASCII letters,
/// digits, `_` or `-`.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty() && name.len() <= MAX_NAME_LEN && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Why `name` is not a valid name (for messages), quoting at most its first 40 characters
/// with control characters escaped.
pub fn name_problem(name: &str) -> String {
    format!("must be 1 to {MAX_NAME_LEN} characters of {NAME_CHARS}, got {}", quote_short(name))
}

/// `text` quoted for an error message: escaped (no control characters reach a terminal or a
/// log) and cut to 40 characters.
pub fn quote_short(text: &str) -> String {
    const MAX: usize = 40;
    let cut: String = text.chars().take(MAX).collect();
    let more = if text.chars().count() > MAX { "..." } else { "" };
    format!("{:?}{more}", cut)
}

/// `text` with control characters escaped (`\n`, `\u{1b}`), not quoted and not cut: for
/// file paths in messages.
pub fn printable(text: &str) -> String {
    text.chars().map(|c| if c.is_control() { c.escape_debug().to_string() } else { c.to_string() }).collect()
}

/// Most flows (after `range` and `pairs` expansion) a scenario may have: each takes two event
/// indices (`event::MAX_INDEX`).
pub const MAX_FLOWS: usize = 1 << 20;

/// Most nodes and links a scenario may have (each link is two directions, each with an event
/// index).
pub const MAX_NODES: usize = 1 << 20;
pub const MAX_LINKS: usize = 1 << 20;

/// Most `down` intervals one link may have (each is two route recomputations).
pub const MAX_DOWN_INTERVALS: usize = 10_000;

/// Most link changes (two per `down` interval) of a run, over all links. Each distinct instant
/// recomputes the routes of every used pair, and a change is named by its index in an event
/// (`event::MAX_INDEX`, 2^21 - 1), which this keeps far below.
pub const MAX_LINK_CHANGES: usize = 100_000;

/// Most UDP sources (each has an event index).
pub const MAX_UDP_SOURCES: usize = 1 << 20;

/// Most runs (points x seeds) one sweep may have: 10^6, a hundred times the largest study
/// the project plans for (10,000 runs), and small enough that the expanded plan (override
/// strings of every point) stays within a few hundred megabytes.
pub const MAX_RUNS: u64 = 1_000_000;

/// Most lines (ns-2 format) or events (pcap) a packet trace (`[trace]`) may record, and its
/// default: a line is about 60 bytes and is held in memory (48 bytes) until the run ends, so
/// the largest trace is about 300 MB on disk and 240 MB in memory; the default, 10^6 lines,
/// about 60 MB. A run that reaches the limit stops recording and says so
/// (`meta.trace.truncated`): no scenario fills the disk unasked.
pub const MAX_TRACE_LINES: u64 = 5_000_000;
pub const DEFAULT_TRACE_LINES: u64 = 1_000_000;

/// Largest delay trace file, bytes.
pub const MAX_TRACE_BYTES: u64 = 64 << 20;

/// Largest BPF object file a scenario may name (`cc = { bpf = "..." }`): congestion controls
/// compile to kilobytes (the kernel selftests' CUBIC, with debug info, to about 60 KiB).
pub const MAX_BPF_OBJECT_BYTES: u64 = 16 << 20;

/// Largest scenario text, bytes: 64 MiB, room for a file that writes the most flows (2^20)
/// as one `[[flows]]` table each (53 MB); larger sets are written with `range` and `pairs`
/// groups. Checked before the text is parsed (`precheck`), it bounds what parsing may cost:
/// the parsed tree of a text takes up to about a hundred times its size.
pub const MAX_SCENARIO_BYTES: usize = 64 << 20;

/// Most change points in one link direction's delay (a schedule, a trace or the LEO model).
pub const MAX_DELAY_POINTS: usize = 10_000_000;

/// Memory a run may plan to use for what it records, bytes: 1 GiB. The run's time series and
/// the JSON and pandas copies made of them scale with (series) x (samples); see
/// [`recorded_bytes`]. The largest catalog entry records about 150,000 flow samples (180 MB by
/// this estimate), so the cap leaves it a margin of six.
pub const MAX_RECORDED_BYTES: f64 = (1u64 << 30) as f64;

/// Bytes per recorded sample over the whole pipeline (Rust row, JSON text, Python's parse of
/// it, pandas columns), measured: 2,000,000 flow samples peaked at 2.6 GB.
const BYTES_PER_FLOW_SAMPLE: f64 = 1_200.0;
const BYTES_PER_QUEUE_SAMPLE: f64 = 400.0;
const BYTES_PER_THROUGHPUT_BIN: f64 = 8.0;

/// Estimated bytes the run's monitors will record: samples per series times the number of
/// series, at the costs above.
pub fn recorded_bytes(duration_ns: u64, sample_interval_ns: u64, flows: usize, queues: usize, cwnd: bool, throughput: bool) -> f64 {
    let samples = (duration_ns / sample_interval_ns.max(1)) as f64 + 1.0;
    let mut bytes = 0.0;
    if cwnd || throughput {
        bytes += samples * flows as f64 * BYTES_PER_FLOW_SAMPLE;
    }
    if throughput {
        bytes += samples * flows as f64 * BYTES_PER_THROUGHPUT_BIN;
    }
    bytes + samples * queues as f64 * BYTES_PER_QUEUE_SAMPLE
}

/// `bytes` for people: "12.3 GB".
pub fn human_bytes(bytes: f64) -> String {
    if bytes >= 1e9 {
        format!("{:.1} GB", bytes / 1e9)
    } else {
        format!("{:.0} MB", bytes / 1e6)
    }
}

/// Refuse a run whose time series would not fit in memory, before any of it is allocated:
/// a 1 ns sample interval or a 10^7 s run with monitors on is an error that says how much
/// memory it would take, never an allocation failure that aborts. `from_value` checks the
/// scenario it reads; `Simulator::build` checks again, for a scenario changed after reading.
pub(crate) fn check_recording_size(scenario: &Scenario) -> Result<(), ScenarioError> {
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

/// Most packet indices one loss list (`loss = { packets = [...] }`) may give: far more than a
/// controlled experiment lists by hand, and a bounded allocation per link table.
pub const MAX_LOSS_PACKETS: usize = 100_000;

/// The largest packet index or period of a loss pattern: beyond the packets any run can send
/// (10^7 s at 10^8 packets/s), and exact in the f64 of a JSON reader.
pub const MAX_LOSS_INDEX: u64 = 1_000_000_000_000_000;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_allow_letters_digits_underscore_and_dash_only() {
        for ok in ["S1", "reno_1", "vegas-a", "UE12", "x"] {
            assert!(valid_name(ok), "{ok}");
        }
        for bad in ["", "a b", "a\nexec", "a;b", "[x]", "$v", "{i}", "a.b", "é", &"x".repeat(65)] {
            assert!(!valid_name(bad), "{bad:?}");
        }
    }

    #[test]
    fn quoted_names_are_escaped_and_cut() {
        assert_eq!(quote_short("a\nb"), "\"a\\nb\"");
        assert!(quote_short(&"y".repeat(100)).ends_with("\"..."));
    }

    #[test]
    fn the_largest_times_sum_far_below_the_clock_range() {
        let worst = MAX_TIME_NS + 20_000 * MAX_DELAY_NS;
        assert!(worst < u64::MAX as i128 / 100);
    }
}
