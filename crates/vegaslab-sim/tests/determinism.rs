//! Determinism of whole runs, checked by `cargo test` alone: the same scenario and
//! seed give the same results twice in one process, in two threads at once and in two separate
//! processes (the `vegaslab-sim` binary), and a different seed changes only what the seed feeds
//! (each sender's tick-clock phase, random traffic), the same way every time.
//!
//! "The same results" is the whole results document (`RunResults::to_json`: meta, every table
//! and every time series) with one field left out, `meta.wall_time_s`, the only quantity
//! measured rather than simulated. It is cut out of the text (`without_wall_time`), so the rest
//! is compared byte for byte.
//!
//! The scenarios are catalog entries cut short (20-30 s of simulated time, a few tenths of a
//! second per run in a debug build): Reno, NewReno and Vegas (ns-2 flavour, the default) over the
//! Vegas-A paper's paths, and RoVegas's single-bottleneck set-up with its exponential ON/OFF UDP
//! source started at 1 s, so that random traffic is part of every check.

use std::path::{Path, PathBuf};
use std::process::Command;

struct Run {
    label: &'static str,
    file: &'static str,
    overrides: &'static [&'static str],
}

/// Every scenario the checks run, each with one controller or traffic model to cover.
const RUNS: &[Run] = &[
    Run { label: "reno", file: "va-reroute.toml", overrides: &["flows[0].cc=reno", "run.duration=30s"] },
    Run {
        label: "newreno",
        file: "va-buffer.toml",
        overrides: &["flows[0].cc=newreno", "links[1].queue.limit=10", "run.duration=30s"],
    },
    Run { label: "vegas-ns2", file: "va-reroute.toml", overrides: &["flows[0].cc=vegas", "flows[0].params.flavour=ns2", "run.duration=30s"] },
    Run { label: "random-udp", file: "rv-single.toml", overrides: &["udp[0].start=1s", "run.duration=20s"] },
];

/// The scenario with random traffic (exponential ON/OFF UDP): a new seed must move it.
const RANDOM: &str = "random-udp";

fn scenario_path(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/vegaslab/catalog_data").join(file)
}

fn overrides(run: &Run) -> Vec<String> {
    run.overrides.iter().map(|s| s.to_string()).collect()
}

/// The results document of one run in this process, without its wall time.
fn run_here(run: &Run, seed: u64) -> String {
    let path = scenario_path(run.file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let results = vegaslab_sim::run_text(&text, &path.to_string_lossy(), Some(seed), &overrides(run), |_, _| true)
        .unwrap_or_else(|e| panic!("{}: {e}", run.label));
    without_wall_time(&results.to_json())
}

/// The results text with `"wall_time_s":<number>,` removed from meta; it must occur exactly once.
fn without_wall_time(json: &str) -> String {
    const KEY: &str = "\"wall_time_s\":";
    assert_eq!(json.matches(KEY).count(), 1, "meta.wall_time_s should occur once in the results");
    let start = json.find(KEY).unwrap();
    let len = json[start..].find([',', '}']).expect("a value after wall_time_s");
    let end = if json[start + len..].starts_with(',') { start + len + 1 } else { start + len };
    let out = format!("{}{}", &json[..start], &json[end..]);
    assert!(out.len() < json.len() && serde_json::from_str::<serde_json::Value>(&out).is_ok(), "cutting wall_time_s broke the JSON");
    out
}

/// The first byte where two documents differ, with a little context, for failure messages.
fn first_difference(a: &str, b: &str) -> String {
    let i = a.bytes().zip(b.bytes()).position(|(x, y)| x != y).unwrap_or(a.len().min(b.len()));
    let ctx = |s: &str| s.get(i.saturating_sub(80)..(i + 80).min(s.len())).unwrap_or("").to_string();
    format!("lengths {} and {}, first difference at byte {i}:\n  {}\n  {}", a.len(), b.len(), ctx(a), ctx(b))
}

fn assert_same(label: &str, what: &str, a: &str, b: &str) {
    assert!(a == b, "{label}: {what} differ; {}", first_difference(a, b));
}

#[test]
fn same_scenario_and_seed_give_identical_results_twice_in_one_process() {
    for run in RUNS {
        let first = run_here(run, 7);
        let second = run_here(run, 7);
        assert_same(run.label, "two runs in one process", &first, &second);
    }
}

#[test]
fn same_scenario_and_seed_give_identical_results_in_two_threads_at_once() {
    for run in RUNS {
        let (a, b) = std::thread::scope(|s| {
            let a = s.spawn(|| run_here(run, 7));
            let b = s.spawn(|| run_here(run, 7));
            (a.join().expect("thread a"), b.join().expect("thread b"))
        });
        assert_same(run.label, "runs in two concurrent threads", &a, &b);
    }
}

/// The `vegaslab-sim` binary prints the results document; two processes started at once must
/// print the same bytes (once the wall time is cut), and the same as the library gives here.
#[test]
fn same_scenario_and_seed_give_byte_identical_output_in_two_processes() {
    for run in RUNS {
        let path = scenario_path(run.file);
        let spawn = || {
            let mut cmd = Command::new(env!("CARGO_BIN_EXE_vegaslab-sim"));
            cmd.arg(&path).args(["--seed", "7"]);
            for o in run.overrides {
                cmd.args(["--set", o]);
            }
            cmd.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped()).spawn().expect("start vegaslab-sim")
        };
        let children = [spawn(), spawn()];
        let outs: Vec<String> = children
            .into_iter()
            .map(|c| {
                let out = c.wait_with_output().expect("vegaslab-sim output");
                assert!(out.status.success(), "{}: vegaslab-sim failed: {}", run.label, String::from_utf8_lossy(&out.stderr));
                let text = String::from_utf8(out.stdout).expect("UTF-8 output");
                without_wall_time(text.strip_suffix('\n').expect("one line of JSON"))
            })
            .collect();
        assert_same(run.label, "outputs of two processes", &outs[0], &outs[1]);
        assert_same(run.label, "the binary's output and the library's results", &outs[0], &run_here(run, 7));
    }
}

/// What identifies each row: equal whatever the seed (names, endpoints, configured rates).
fn identity(doc: &serde_json::Value) -> serde_json::Value {
    let pick = |table: &str, keys: &[&str]| -> serde_json::Value {
        let rows = doc[table].as_array().unwrap_or_else(|| panic!("no {table} table"));
        rows.iter().map(|r| keys.iter().map(|k| r[*k].clone()).collect::<Vec<_>>()).collect()
    };
    serde_json::json!({
        "scenario": doc["meta"]["scenario"],
        "duration_s": doc["meta"]["duration_s"],
        "flows": pick("flows", &["flow", "cc", "from", "to", "start_s"]),
        "queues": pick("queues", &["queue", "kind", "limit_pkts"]),
        "links": pick("links", &["link", "bandwidth_bps"]),
        "udp": pick("udp", &["source", "model", "from", "to", "start_s", "nominal_rate_bps"]),
    })
}

/// A new seed redraws only the random quantities: every run's entities and set-up stay the
/// same, meta records the seed, each seed's results are reproducible, and in the scenario with
/// random traffic the results do move (so the seed reaches the generators).
#[test]
fn a_different_seed_changes_only_seeded_quantities_deterministically() {
    for run in RUNS {
        let a = run_here(run, 1);
        let b = run_here(run, 2);
        assert_same(run.label, "two runs with seed 2", &b, &run_here(run, 2));
        let (da, db): (serde_json::Value, serde_json::Value) = (serde_json::from_str(&a).unwrap(), serde_json::from_str(&b).unwrap());
        assert_eq!((da["meta"]["seed"].as_u64(), db["meta"]["seed"].as_u64()), (Some(1), Some(2)), "{}", run.label);
        assert_eq!(identity(&da), identity(&db), "{}: a new seed changed what the run simulates", run.label);
        if run.label == RANDOM {
            let udp = |d: &serde_json::Value| d["udp"][0]["sent_pkts"].as_u64().expect("udp[0].sent_pkts");
            assert_ne!(udp(&da), udp(&db), "{}: seeds 1 and 2 sent the same UDP packet count", run.label);
            assert_ne!(da["flows"], db["flows"], "{}: the random traffic did not affect the TCP flow", run.label);
        }
    }
}

/// The wall-time cut removes exactly that field, so a change anywhere else still shows.
#[test]
fn only_the_wall_time_is_left_out_of_the_comparison() {
    let doc = r#"{"meta":{"seed":1,"duration_s":2.0,"wall_time_s":0.123,"events":9},"flows":[]}"#;
    assert_eq!(without_wall_time(doc), r#"{"meta":{"seed":1,"duration_s":2.0,"events":9},"flows":[]}"#);
    let other = doc.replace("0.123", "5.5");
    assert_eq!(without_wall_time(doc), without_wall_time(&other));
    let changed = doc.replace("\"events\":9", "\"events\":10");
    assert_ne!(without_wall_time(doc), without_wall_time(&changed));
}
