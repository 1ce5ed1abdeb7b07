//! The `vegaslab-sim` binary's own argument handling: every bad argument gets a message naming
//! it and exit status 2, and a reader that closes the pipe early gets no panic.

use std::io::Read;
use std::process::{Command, Stdio};

fn vegaslab_sim(args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_vegaslab-sim")).args(args).output().expect("start vegaslab-sim");
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

fn scenario() -> String {
    format!("{}/../../python/vegaslab/catalog_data/bench/grids-net2.toml", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn a_seed_that_is_not_an_integer_is_named_in_the_error() {
    let (code, err) = vegaslab_sim(&[&scenario(), "--seed", "abc"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("--seed \"abc\": not an integer"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn options_without_a_file_or_value_get_a_message_not_a_panic() {
    for args in [&["--seed", "1"][..], &["--seed"], &["x.toml", "--set"], &["x.toml", "--bogus"], &["a.toml", "b.toml"]] {
        let (code, err) = vegaslab_sim(args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(err.contains("usage: vegaslab-sim") && !err.contains("panicked"), "{args:?}: {err}");
    }
}

#[test]
fn a_reader_closing_the_pipe_early_ends_the_binary_without_a_panic() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_vegaslab-sim"))
        .arg(scenario())
        .args(["--set", "run.duration=1s"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start vegaslab-sim");
    drop(child.stdout.take()); // as `vegaslab-sim x.toml | head -c 0` would
    let mut err = String::new();
    child.stderr.take().expect("stderr").read_to_string(&mut err).expect("read stderr");
    let status = child.wait().expect("wait");
    assert_eq!(status.code(), Some(1), "{err}");
    assert!(err.contains("writing the results failed") && !err.contains("panicked"), "{err}");
}

#[test]
fn a_trace_goes_into_the_trace_dir_and_without_one_the_run_says_so_and_exits_1() {
    let dir = std::env::temp_dir().join(format!("vegaslab-sim-trace-{}", std::process::id()));
    std::fs::remove_dir_all(&dir).ok();
    std::fs::create_dir_all(&dir).unwrap();
    let set = ["--set", "run.duration=0.2s", "--set", "trace.file=t.tr"];
    let (code, err) = vegaslab_sim(&[&[scenario().as_str()][..], &set].concat());
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("t.tr: not written: no output directory was given for the trace"), "{err}");
    let (code, err) = vegaslab_sim(&[&[scenario().as_str()][..], &set, &["--trace-dir", dir.to_str().unwrap()]].concat());
    assert_eq!(code, Some(0), "{err}");
    assert!(std::fs::metadata(dir.join("t.tr")).unwrap().len() > 0);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_python_controller_is_refused_in_one_sentence_naming_the_flows_field() {
    let (code, err) = vegaslab_sim(&[&scenario(), "--set", "flows[0].cc=py:my_algos.reno2:Reno2"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("flows[0].cc: \"py:my_algos.reno2:Reno2\" is a Python controller, which only runs from Python"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}
