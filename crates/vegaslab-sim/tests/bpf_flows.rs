//! Flows driven by compiled BPF struct_ops objects (`cc = { bpf = "algo.bpf.o" }`): the
//! scenario reads and records the object, every problem with it is one sentence on the flow's
//! field, a run of the project's kernel Vegas object equals a run of the Rust Linux-flavour
//! Vegas it was written from, and a program that faults stops the run with an error.
//!
//! The objects are built by `make bpf` (kernel/Makefile) into `kernel/build/`: the project's
//! `vl_<name>.bpf.o`, the kernel selftests' `selftests/bpf_cubic.bpf.o` and the test objects of
//! `crates/vegaslab-bpf/tests/objects/`. Without them these tests are skipped with a message,
//! or fail when `VEGASLAB_REQUIRE_BPF=1` (as `make test` sets).

mod common;
use common::*;

use std::path::PathBuf;
use vegaslab_sim::{run_text_with, RunOptions};

fn built(rel: &str) -> Option<PathBuf> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../kernel/build").join(rel);
    if path.is_file() {
        return Some(path.canonicalize().unwrap());
    }
    assert!(std::env::var("VEGASLAB_REQUIRE_BPF").as_deref() != Ok("1"), "{} is missing: run `make bpf`", path.display());
    eprintln!("skipped: {} is missing (run `make bpf`)", path.display());
    None
}

/// Two flows on a 2 Mbit/s, 20 ms dumbbell-like link with a 20-packet queue: slow start
/// overflows it, so loss recovery, `ssthresh`, `set_state` and `undo` paths all run.
const LINK: &str = r#"
[run]
duration = "30s"

[[links]]
endpoints = ["S1", "D1"]
bandwidth = "2Mbps"
delay = "20ms"
queue = { limit = 20 }

[[flows]]
from = "S1"
to = "D1"
cc = "reno"

[[flows]]
from = "S1"
to = "D1"
cc = "reno"
start = "3s"

[monitor]
cwnd = true
"#;

fn with_cc(ccs: &[String]) -> Vec<String> {
    ccs.iter().enumerate().map(|(i, cc)| format!("flows[{i}].cc={cc}")).collect()
}

fn bpf(path: &std::path::Path) -> String {
    format!("{{ bpf = \"{}\" }}", path.display())
}

/// The run's flows and cwnd series, as JSON, without `meta` (wall times).
fn outcome(overrides: &[String]) -> Result<serde_json::Value, String> {
    let (results, _) = run_text_with(LINK, "case.toml", None, overrides, |_, _| true, &RunOptions::default()).map_err(|e| e.to_string())?;
    let mut doc: serde_json::Value = serde_json::from_str(&results.to_json()).unwrap();
    doc["meta"] = serde_json::Value::Null;
    Ok(doc)
}

#[test]
fn a_bpf_flow_is_named_after_its_object_and_recorded_with_its_hash() {
    let Some(obj) = built("vl_vegas.bpf.o") else { return };
    let sc = accepted(LINK, &[&format!("flows[0].cc={}", bpf(&obj))]);
    assert_eq!(sc.flows[0].algorithm.name(), "bpf:vl_vegas");
    let doc: serde_json::Value = serde_json::from_str(&vegaslab_sim::scenario::normalize::to_json(&sc)).unwrap();
    let record = &doc["flows"][0]["algorithm"]["Bpf"];
    assert_eq!(record["name"], "vl_vegas");
    assert_eq!(record["hz"], 250);
    assert_eq!(record["path"], obj.display().to_string());
    let sha = record["sha256"].as_str().unwrap();
    assert_eq!(sha.len(), 64);
    let files = doc["files"].as_array().unwrap();
    assert!(files.iter().any(|f| f["field"] == "flows[0].cc.bpf" && f["sha256"] == sha), "{files:?}");
    assert_eq!(sc.flows[0].tcp.stack, vegaslab_cc::config::Stack::Linux);
}

#[test]
fn the_kernel_vegas_object_runs_as_the_rust_vegas_it_was_written_from() {
    for name in ["vegas", "vegas-a", "adavegas"] {
        let Some(obj) = built(&format!("vl_{}.bpf.o", name.replace('-', "_"))) else { return };
        let native = outcome(&[with_cc(&[name.to_string(), name.to_string()]), sets(&["flows[0].params.flavour=linux", "flows[1].params.flavour=linux"])].concat()).unwrap();
        let object = outcome(&with_cc(&[bpf(&obj), bpf(&obj)])).unwrap();
        for key in ["flows", "series_flows"] {
            let strip = |doc: &serde_json::Value| {
                let mut v = doc[key].clone();
                for row in v.as_array_mut().into_iter().flatten() {
                    row.as_object_mut().map(|r| r.remove("cc"));
                }
                v
            };
            assert_eq!(strip(&native), strip(&object), "{name}: {key} differ between the Rust controller and {}", obj.display());
        }
    }
}

#[test]
fn a_missing_object_is_an_error_on_the_flows_bpf_field() {
    let err = rejected(LINK, &["flows[0].cc={ bpf = \"/nonexistent/algo.bpf.o\" }"]);
    assert!(err.starts_with("case.toml: flows[0].cc.bpf: "), "{err}");
    assert!(err.contains("no such file"), "{err}");
}

#[test]
fn a_file_that_is_not_a_bpf_object_is_refused_in_one_sentence() {
    let dir = std::env::temp_dir().join(format!("vegaslab-bpf-flows-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("garbage.bpf.o");
    std::fs::write(&path, b"this is not an ELF file at all").unwrap();
    let err = rejected(LINK, &[&format!("flows[0].cc={}", bpf(&path))]);
    std::fs::remove_dir_all(&dir).ok();
    assert!(err.starts_with("case.toml: flows[0].cc.bpf: "), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}

#[test]
fn a_bpf_table_accepts_only_its_own_keys_and_linux_hz_values() {
    let Some(obj) = built("vl_vegas.bpf.o") else { return };
    let err = rejected(LINK, &[&format!("flows[0].cc={{ bpf = \"{}\", hertz = 100 }}", obj.display())]);
    assert!(err.contains("flows[0].cc.hertz") && err.contains("allowed here: bpf, map, hz, engine"), "{err}");
    let err = rejected(LINK, &[&format!("flows[0].cc={{ bpf = \"{}\", hz = 200 }}", obj.display())]);
    assert!(err.contains("flows[0].cc.hz") && err.contains("100, 250, 300, 1000"), "{err}");
    let err = rejected(LINK, &[&format!("flows[0].cc={}", bpf(&obj)), "flows[0].params.alpha=2"]);
    assert!(err.contains("flows[0].params") && err.contains("takes no params"), "{err}");
}

#[test]
fn a_cc_that_is_neither_a_name_nor_a_table_says_both_forms() {
    let err = rejected(LINK, &["flows[0].cc=3"]);
    assert!(err.contains("flows[0].cc") && err.contains("{ bpf = \"algo.bpf.o\" }"), "{err}");
}

#[test]
fn the_short_form_bpf_name_is_the_table_with_every_option_at_its_default() {
    let Some(obj) = built("vl_vegas.bpf.o") else { return };
    let short = accepted(LINK, &[&format!("flows[0].cc=bpf:{}", obj.display())]);
    let table = accepted(LINK, &[&format!("flows[0].cc={}", bpf(&obj))]);
    let json = |sc: &vegaslab_sim::scenario::Scenario| vegaslab_sim::scenario::normalize::to_json(sc);
    assert_eq!(json(&short), json(&table).replace("flows[0].cc.bpf", "flows[0].cc"));
    let err = rejected(LINK, &["flows[0].cc=bpf:"]);
    assert!(err.contains("flows[0].cc: \"bpf:\" names no file"), "{err}");
    let err = rejected(LINK, &["flows[0].cc=bpf:/nonexistent.bpf.o"]);
    assert!(err.starts_with("case.toml: flows[0].cc: cannot read /nonexistent.bpf.o: no such file"), "{err}");
}

#[test]
fn group_members_of_a_bpf_flow_are_named_after_the_object_file() {
    let Some(obj) = built("vl_vegas.bpf.o") else { return };
    let text = format!(
        "[run]\nduration = \"5s\"\n[dumbbell]\npairs = 2\naccess = {{ bandwidth = \"10Mbps\", delay = \"4ms\" }}\nbottleneck = {{ bandwidth = \"2Mbps\", delay = \"10ms\" }}\n[[flows]]\npairs = \"1-2\"\ncc = {}\n",
        bpf(&obj)
    );
    let sc = accepted(&text, &["flows[vl_vegas2].start=1s"]);
    let names: Vec<&str> = sc.flows.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["vl_vegas1", "vl_vegas2"]);
    assert_eq!(sc.flows[1].start, 1_000_000_000);
}

#[test]
fn a_program_that_faults_stops_the_run_with_an_error_naming_the_flow_and_hook() {
    let Some(obj) = built("test-objects/oob.bpf.o") else { return };
    let err = outcome(&with_cc(&[bpf(&obj)])).unwrap_err();
    assert!(err.starts_with("case.toml: flows[0].cc.bpf: the BPF program hostile failed in cong_avoid at "), "{err}");
    assert!(err.contains(" s of simulated time: Access violation"), "{err}");
}
