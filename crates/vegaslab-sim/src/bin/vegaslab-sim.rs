//! Minimal Rust front end: run one scenario file and print the results as JSON.
//!
//! Usage: `vegaslab-sim FILE.toml [--seed N] [--set key=value ...]`. The Python CLI
//! (`vegaslab run`) is the full-featured one; this exists for benchmarking and debugging
//! without Python.

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.is_empty() || args.iter().any(|a| a == "-h" || a == "--help") {
        eprintln!("usage: vegaslab-sim FILE.toml [--seed N] [--set key=value ...]");
        return ExitCode::from(2);
    }
    let mut file = None;
    let mut seed = None;
    let mut overrides = Vec::new();
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--seed" => seed = it.next().and_then(|s| s.parse().ok()),
            "--set" => overrides.extend(it.next()),
            _ => file = Some(a),
        }
    }
    let file = file.expect("a scenario file");
    let text = match std::fs::read_to_string(&file) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{file}: cannot read: {e}");
            return ExitCode::from(2);
        }
    };
    match vegaslab_sim::run_text(&text, &file, seed, &overrides, |_, _| true) {
        Ok(r) => {
            println!("{}", r.to_json());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(2)
        }
    }
}
