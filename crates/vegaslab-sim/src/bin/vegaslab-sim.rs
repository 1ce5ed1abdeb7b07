//! Minimal Rust front end: run one scenario file and print the results as JSON.
//!
//! Usage: `vegaslab-sim FILE.toml [--seed N] [--set key=value ...] [--trace-dir DIR]`. A
//! scenario's `[trace]` is written into `DIR` (an existing directory), never elsewhere; a trace
//! not written (no `--trace-dir`, or the disk full) is said on stderr and the exit status is 1,
//! after the results. The Python CLI
//! (`vegaslab run`) is the full-featured one; this exists for benchmarking and debugging
//! without Python. Bad arguments get a message and exit status 2; a closed standard output
//! (`vegaslab-sim x.toml | head`) ends it quietly with status 1 rather than a panic.

use std::io::Write;
use std::process::ExitCode;

const USAGE: &str = "usage: vegaslab-sim FILE.toml [--seed N] [--set key=value ...] [--trace-dir DIR]";

/// The command line, parsed.
struct Args {
    file: String,
    seed: Option<u64>,
    overrides: Vec<String>,
    trace_dir: Option<std::path::PathBuf>,
}

/// The command line, or a message naming the bad argument.
fn parse_args(args: Vec<String>) -> Result<Args, String> {
    let mut file = None;
    let mut seed = None;
    let mut overrides = Vec::new();
    let mut trace_dir = None;
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--seed" => {
                let value = it.next().ok_or("--seed needs a value: an integer 0 to 2^64-1")?;
                seed = Some(value.parse().map_err(|_| {
                    format!("--seed {value:?}: not an integer 0 to 2^64-1")
                })?);
            }
            "--set" => overrides.push(it.next().ok_or("--set needs a value: key=value")?),
            "--trace-dir" => trace_dir = Some(it.next().ok_or("--trace-dir needs a value: an existing directory")?.into()),
            flag if flag.starts_with("--") => return Err(format!("unknown option {flag}")),
            _ if file.is_some() => return Err(format!("one scenario file only, got a second: {a}")),
            _ => file = Some(a),
        }
    }
    Ok(Args { file: file.ok_or("no scenario file given")?, seed, overrides, trace_dir })
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.is_empty() || args.iter().any(|a| a == "-h" || a == "--help") {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    }
    let Args { file, seed, overrides, trace_dir } = match parse_args(args) {
        Ok(parsed) => parsed,
        Err(e) => {
            eprintln!("vegaslab-sim: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let text = match std::fs::read_to_string(&file) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{file}: cannot read: {e}");
            return ExitCode::from(2);
        }
    };
    // The command line hosts no Python: a scenario naming a Python controller is refused.
    let options = vegaslab_sim::RunOptions { normalized: false, trace_dir: trace_dir.as_deref(), controllers: None };
    match vegaslab_sim::run_text_with(&text, &file, seed, &overrides, |_, _| true, &options) {
        Ok((r, _)) => match writeln!(std::io::stdout().lock(), "{}", r.to_json()) {
            // The results are out; a trace that was asked for and not written fails the run.
            Ok(()) => match r.meta.trace.as_ref().and_then(|t| t.error.as_ref()) {
                Some(error) => {
                    eprintln!("vegaslab-sim: {error}");
                    ExitCode::from(1)
                }
                None => ExitCode::SUCCESS,
            },
            Err(e) => {
                eprintln!("vegaslab-sim: writing the results failed: {e}");
                ExitCode::from(1)
            }
        },
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(2)
        }
    }
}
