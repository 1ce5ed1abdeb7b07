//! `[sweep]` tables: expansion order, ranges, seeds, the base scenario, and a clear error
//! (file, field, allowed range, kind) for every bad axis.

use vegaslab_sim::scenario::sweep::{expand, ParamType, ParamValue, Sweep, MAX_RUNS};
use vegaslab_sim::scenario::{apply_overrides, from_value, parse};
use vegaslab_sim::ErrorKind;

/// Two links (S-R, R-D) and two Vegas flows S -> D, 10 s; flow f1's beta is high so that
/// its alpha can be swept alone.
const BASE: &str = r#"
[run]
duration = "10s"
seed = 7

[[links]]
endpoints = ["S", "R"]
bandwidth = "10Mbps"
delay = "5ms"

[[links]]
endpoints = ["R", "D"]
bandwidth = "1Mbps"
delay = "20ms"

[[flows]]
name = "f0"
from = "S"
to = "D"
cc = "vegas"

[[flows]]
name = "f1"
from = "S"
to = "D"
cc = "vegas"
params = { beta = 10000 }
"#;

fn with(sweep: &str) -> String {
    format!("{BASE}\n{sweep}")
}

fn ok(sweep: &str) -> Sweep {
    expand(&with(sweep), "study.toml", &[]).unwrap_or_else(|e| panic!("should expand: {e}"))
}

/// The error's text and kind.
fn bad(sweep: &str) -> (String, ErrorKind) {
    bad_with(sweep, &[])
}

fn bad_with(sweep: &str, overrides: &[&str]) -> (String, ErrorKind) {
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    let e = expand(&with(sweep), "study.toml", &overrides).expect_err("should be rejected");
    (e.to_string(), e.kind)
}

fn ints(xs: &[i64]) -> Vec<ParamValue> {
    xs.iter().map(|&x| ParamValue::Integer(x)).collect()
}

fn floats(xs: &[f64]) -> Vec<ParamValue> {
    xs.iter().map(|&x| ParamValue::Float(x)).collect()
}

// ------------------------------------------------------------------ expansion

#[test]
fn a_file_without_sweep_is_one_point_with_the_scenario_seed() {
    let s = expand(BASE, "study.toml", &[]).unwrap();
    assert!(s.axes.is_empty());
    assert_eq!(s.points.len(), 1);
    assert!(s.points[0].overrides.is_empty());
    assert_eq!(s.seeds, vec![7]);
    assert_eq!(s.runs, 1);
}

#[test]
fn axes_multiply_with_the_last_axis_fastest() {
    let s = ok(r#"
[[sweep.axis]]
path = "flows[1].params.alpha"
values = [1, 2, 4]
[[sweep.axis]]
path = "links[1].queue.limit"
values = [10, 20]
"#);
    assert_eq!(s.points.len(), 6);
    let got: Vec<Vec<String>> = s.points.iter().map(|p| p.overrides.clone()).collect();
    let mut want = Vec::new();
    for a in [1, 2, 4] {
        for q in [10, 20] {
            want.push(vec![format!("flows[1].params.alpha={a}"), format!("links[1].queue.limit={q}")]);
        }
    }
    assert_eq!(got, want);
    assert_eq!(s.points[3].coords, vec![1, 1]);
    assert_eq!(s.points[3].values, ints(&[2, 20]));
    assert!(s.points.iter().enumerate().all(|(i, p)| p.index == i));
}

#[test]
fn each_point_runs_the_same_as_the_override_strings_given_to_parse() {
    let s = ok(r#"
[[sweep.axis]]
path = "flows[0].cc"
values = ["vegas", "newreno"]
[[sweep.axis]]
path = "links[1].delay"
values = ["20ms", "40ms"]
"#);
    let p = &s.points[3];
    assert_eq!(p.overrides, vec!["flows[0].cc=newreno".to_string(), "links[1].delay=40ms".to_string()]);
    let sc = parse(&with(""), "study.toml", &s.run_overrides(3)).unwrap();
    assert_eq!(sc.flows[0].algorithm.name(), "newreno");
    assert_eq!(sc.links[1].forward.delay, 40_000_000);
}

#[test]
fn a_zip_axis_varies_its_paths_together() {
    let s = ok(r#"
[[sweep.axis]]
name = "thresholds"
zip = [ { path = "flows[0].params.alpha", values = [1, 2] }, { path = "flows[0].params.beta", values = [3, 4] } ]
[[sweep.axis]]
path = "links[1].queue.limit"
values = [10, 20, 30]
"#);
    assert_eq!(s.axes[0].name, "thresholds");
    assert_eq!(s.axes[0].len, 2);
    let names: Vec<&str> = s.params().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["flows[0].params.alpha", "flows[0].params.beta", "links[1].queue.limit"]);
    assert_eq!(s.points.len(), 6);
    assert_eq!(s.points[4].values, ints(&[2, 4, 20]));
    assert_eq!(s.points[4].coords, vec![1, 1]);
}

#[test]
fn a_zip_without_a_name_is_named_after_its_columns() {
    let s = ok(r#"
[[sweep.axis]]
zip = [ { path = "flows[0].params.alpha", values = [1, 2], name = "a" }, { path = "flows[0].params.beta", values = [3, 4], name = "b" } ]
"#);
    assert_eq!(s.axes[0].name, "a+b");
}

#[test]
fn an_axis_name_names_its_column() {
    let s = ok("[[sweep.axis]]\nname = \"alpha\"\npath = \"flows[1].params.alpha\"\nvalues = [1, 2]\n");
    assert_eq!(s.axes[0].name, "alpha");
    assert_eq!(s.axes[0].params[0].name, "alpha");
    assert_eq!(s.axes[0].params[0].path, "flows[1].params.alpha");
}

#[test]
fn values_keep_their_type_and_integers_mixed_with_floats_become_floats() {
    let s = ok(r#"
[[sweep.axis]]
path = "flows[1].params.alpha"
values = [1, 2.5]
[[sweep.axis]]
path = "monitor.cwnd"
values = [true, false]
[[sweep.axis]]
path = "flows[0].cc"
values = ["vegas", "reno"]
"#);
    let types: Vec<ParamType> = s.params().map(|p| p.ty).collect();
    assert_eq!(types, [ParamType::Float, ParamType::Bool, ParamType::String]);
    assert_eq!(s.axes[0].params[0].values, floats(&[1.0, 2.5]));
    assert_eq!(s.points[0].overrides[0], "flows[1].params.alpha=1.0");
}

#[test]
fn user_overrides_apply_under_every_point_and_can_edit_the_sweep() {
    let sweep = "[sweep]\nseeds = 10\n[[sweep.axis]]\npath = \"flows[1].params.alpha\"\nvalues = [1, 2]\n";
    let user = vec!["sweep.seeds=3".to_string(), "links[0].bandwidth=\"5Mbps\"".to_string(), "flows[1].params.alpha=9".to_string()];
    // (The user's alpha 9 is valid with f1's beta; the axis replaces it.)
    let s = expand(&with(sweep), "study.toml", &user).unwrap();
    assert_eq!(s.seeds, vec![1, 2, 3]);
    assert_eq!(s.overrides, user);
    let all = s.run_overrides(1);
    assert_eq!(&all[..3], &user[..]);
    assert_eq!(all[3], "flows[1].params.alpha=2");
    // The point is applied after the user's overrides, so on a swept path the axis wins.
    let sc = parse(&with(sweep), "study.toml", &all).unwrap();
    assert_eq!(sc.links[0].forward.bandwidth_bps, 5e6);
    let json: serde_json::Value = serde_json::to_value(&sc.flows[1].algorithm).unwrap();
    assert_eq!(json["Vegas"]["alpha"], 2.0);
}

#[test]
fn the_ordinary_parse_of_a_file_with_a_sweep_is_the_base_scenario() {
    let text = with("[sweep]\nseeds = 3\n[[sweep.axis]]\npath = \"links[1].queue.limit\"\nvalues = [10, 20]\n");
    let sc = parse(&text, "study.toml", &[]).unwrap();
    assert_eq!(sc.links[1].forward.queue.limit(), 50, "no axis applied");
    assert_eq!(sc.seed, 7);
}

#[test]
fn the_core_still_rejects_unknown_root_keys_next_to_sweep() {
    let e = parse(&with("[swep]\nseeds = 3\n"), "study.toml", &[]).unwrap_err();
    assert_eq!(e.kind, ErrorKind::UnknownField);
    assert!(e.to_string().contains("swep: unknown field (did you mean 'sweep'?)"), "{e}");
}

#[test]
fn the_sweep_json_carries_typed_values() {
    let s = ok("[[sweep.axis]]\npath = \"flows[1].params.alpha\"\nvalues = [1.0, 2.0]\n[[sweep.axis]]\npath = \"monitor.cwnd\"\nvalues = [true]\n[[sweep.axis]]\npath = \"flows[0].cc\"\nvalues = [\"reno\"]\n[[sweep.axis]]\npath = \"links[0].queue.limit\"\nvalues = [9]\n");
    let v: serde_json::Value = serde_json::from_str(&s.to_json()).unwrap();
    assert_eq!(v["format"], 1);
    let types: Vec<&str> = (0..4).map(|k| v["axes"][k]["params"][0]["type"].as_str().unwrap()).collect();
    assert_eq!(types, ["float", "boolean", "string", "integer"]);
    assert_eq!(v["points"][1]["values"], serde_json::json!([2.0, true, "reno", 9]));
    assert!(v["points"][1]["values"][0].is_f64());
    assert_eq!(v["points"][1]["overrides"][0], "flows[1].params.alpha=2.0");
    assert_eq!(v["runs"], 2);
}

// ------------------------------------------------------------------ seeds

#[test]
fn a_seed_count_means_seeds_one_to_n() {
    assert_eq!(ok("[sweep]\nseeds = 4\n").seeds, vec![1, 2, 3, 4]);
}

#[test]
fn a_seed_list_is_kept_in_order() {
    let s = ok("[sweep]\nseeds = [9, 0, 4]\n[[sweep.axis]]\npath = \"flows[1].params.alpha\"\nvalues = [1, 2]\n");
    assert_eq!(s.seeds, vec![9, 0, 4]);
    assert_eq!(s.runs, 6);
}

#[test]
fn seed_errors_name_the_field_and_range() {
    assert_eq!(bad("[sweep]\nseeds = 0\n"), ("study.toml: sweep.seeds: must be between 1 and 1000000, got 0".into(), ErrorKind::OutOfRange));
    assert_eq!(bad("[sweep]\nseeds = []\n").1, ErrorKind::OutOfRange);
    assert_eq!(bad("[sweep]\nseeds = [1, 2, 1]\n"), ("study.toml: sweep.seeds[2]: repeats seeds[0] (1)".into(), ErrorKind::Conflict));
    assert_eq!(bad("[sweep]\nseeds = [-1]\n").1, ErrorKind::OutOfRange);
    assert_eq!(bad("[sweep]\nseeds = [1.5]\n").1, ErrorKind::WrongType);
    assert_eq!(bad("[sweep]\nseeds = \"ten\"\n").1, ErrorKind::WrongType);
}

// ------------------------------------------------------------------ ranges

fn range_values(range: &str) -> Vec<ParamValue> {
    ok(&format!("[[sweep.axis]]\npath = \"flows[1].params.alpha\"\nrange = {range}\n")).axes[0].params[0].values.clone()
}

#[test]
fn an_integer_step_range_includes_a_stop_that_lands_on_a_step() {
    let s = ok("[[sweep.axis]]\npath = \"links[1].queue.limit\"\nrange = { start = 10, stop = 50, step = 10 }\n");
    assert_eq!(s.axes[0].params[0].values, ints(&[10, 20, 30, 40, 50]));
    assert_eq!(s.axes[0].params[0].ty, ParamType::Integer);
    assert_eq!(range_values("{ start = 1, stop = 10, step = 4 }"), ints(&[1, 5, 9]));
}

#[test]
fn a_float_step_range_gives_round_values() {
    assert_eq!(range_values("{ start = 0.1, stop = 0.5, step = 0.1 }"), floats(&[0.1, 0.2, 0.3, 0.4, 0.5]));
    assert_eq!(range_values("{ start = 0, stop = 0.3, step = 0.1 }"), floats(&[0.0, 0.1, 0.2, 0.3]));
}

#[test]
fn a_linear_num_range_is_integer_when_every_value_is_whole() {
    assert_eq!(range_values("{ start = 10, stop = 50, num = 5 }"), ints(&[10, 20, 30, 40, 50]));
    assert_eq!(range_values("{ start = 1, stop = 2, num = 3 }"), floats(&[1.0, 1.5, 2.0]));
    assert_eq!(range_values("{ start = 3, stop = 9, num = 1 }"), ints(&[3]));
}

#[test]
fn a_log_range_is_evenly_spaced_in_log10() {
    assert_eq!(range_values("{ start = 1, stop = 1000, num = 4, scale = \"log\" }"), ints(&[1, 10, 100, 1000]));
    assert_eq!(range_values("{ start = 1, stop = 100, num = 3, scale = \"log\" }"), ints(&[1, 10, 100]));
    let v = range_values("{ start = 1, stop = 10, num = 3, scale = \"log\" }");
    assert_eq!(v, floats(&[1.0, 3.16227766017, 10.0]));
}

#[test]
fn range_errors_name_the_field_and_the_allowed_range() {
    let axis = |r: &str| bad(&format!("[[sweep.axis]]\npath = \"flows[1].params.alpha\"\nrange = {r}\n"));
    assert_eq!(
        axis("{ start = 1, stop = 5, step = 0 }"),
        ("study.toml: sweep.axis[0].range.step: must be > 0, got 0".into(), ErrorKind::OutOfRange)
    );
    assert_eq!(axis("{ start = 1, stop = 5, step = -1 }").1, ErrorKind::OutOfRange);
    assert_eq!(
        axis("{ start = 1, stop = 5, num = 0 }"),
        ("study.toml: sweep.axis[0].range.num: must be between 1 and 1000000, got 0".into(), ErrorKind::OutOfRange)
    );
    assert_eq!(
        axis("{ start = 0, stop = 5, num = 3, scale = \"log\" }"),
        ("study.toml: sweep.axis[0].range.start: must be > 0 for scale = \"log\", got 0".into(), ErrorKind::OutOfRange)
    );
    assert_eq!(
        axis("{ start = 5, stop = 1, step = 1 }"),
        ("study.toml: sweep.axis[0].range.stop: must be >= start (5), got 1".into(), ErrorKind::OutOfRange)
    );
    assert_eq!(axis("{ start = 1, stop = 5, step = 1, num = 3 }").1, ErrorKind::Conflict);
    assert_eq!(axis("{ start = 1, stop = 5 }").1, ErrorKind::Missing);
    assert_eq!(axis("{ stop = 5, step = 1 }").1, ErrorKind::Missing);
    assert_eq!(axis("{ start = 1, stop = 5, step = 1, scale = \"log\" }").1, ErrorKind::Conflict);
    assert_eq!(
        axis("{ start = 1, stop = 5, num = 3, scale = \"cubic\" }"),
        ("study.toml: sweep.axis[0].range.scale: must be \"linear\" or \"log\", got \"cubic\"".into(), ErrorKind::OutOfRange)
    );
    assert_eq!(axis("{ start = 1, stop = 5, num = 3, ste = 1 }").1, ErrorKind::UnknownField);
    assert_eq!(axis("{ start = \"1\", stop = 5, num = 3 }").1, ErrorKind::WrongType);
    assert_eq!(axis("{ start = 1, stop = inf, num = 3 }").1, ErrorKind::OutOfRange);
}

#[test]
fn a_range_whose_rounded_values_repeat_is_rejected() {
    let (e, kind) = bad("[[sweep.axis]]\npath = \"flows[1].params.alpha\"\nrange = { start = 1, stop = 1.000000000001, step = 1e-13 }\n");
    assert_eq!(kind, ErrorKind::Conflict);
    assert!(e.starts_with("study.toml: sweep.axis[0].range: gives 1.0 twice after rounding to 12 significant digits"), "{e}");
}

#[test]
fn a_generated_value_the_scenario_rejects_names_the_range_and_the_value() {
    let (e, kind) = bad("[[sweep.axis]]\npath = \"links[1].queue.limit\"\nrange = { start = 10, stop = 20, step = 2.5 }\n");
    assert_eq!(kind, ErrorKind::WrongType);
    assert!(e.starts_with("study.toml: sweep.axis[0].range: value 0 (10.0): must be a whole number"), "{e}");
}

// ------------------------------------------------------------------ size

#[test]
fn too_many_runs_is_refused_before_anything_is_generated() {
    // 10^12 values: generating them would exhaust memory; the count is checked first.
    let (e, kind) = bad("[[sweep.axis]]\npath = \"flows[1].params.alpha\"\nrange = { start = 0, stop = 1, step = 1e-12 }\n");
    assert_eq!(kind, ErrorKind::TooLarge);
    assert!(e.starts_with("study.toml: sweep: 1000000000001 points x 1 seeds = 1000000000001 runs; at most 1000000 runs"), "{e}");
}

#[test]
fn the_run_bound_counts_points_times_seeds() {
    let axis = |n: u64| format!("[[sweep.axis]]\npath = \"flows[1].params.alpha\"\nrange = {{ start = 1, stop = {n}, step = 1 }}\n");
    let (e, kind) = bad(&format!("[sweep]\nseeds = 2\n{}", axis(MAX_RUNS / 2 + 1)));
    assert_eq!(kind, ErrorKind::TooLarge);
    assert!(e.contains("500001 points x 2 seeds = 1000002 runs"), "{e}");
    let (e, _) = bad(&format!("{}{}{}", axis(1_000_000), axis(1_000_000).replace("flows[1]", "flows[0]"), axis(1_000_000).replace("flows[1].params.alpha", "links[0].queue.limit")));
    assert!(e.contains("runs; at most 1000000"), "{e}");
}

// ------------------------------------------------------------------ bad axes

#[test]
fn a_bad_value_names_the_axis_value_and_the_core_message() {
    let (e, kind) = bad("[[sweep.axis]]\npath = \"flows[0].cc\"\nvalues = [\"vegas\"]\n[[sweep.axis]]\npath = \"links[1].queue.limit\"\nvalues = [10, 20, 30, 0]\n");
    assert_eq!(kind, ErrorKind::OutOfRange);
    let core = parse(BASE, "study.toml", &["links[1].queue.limit=0".into()]).unwrap_err();
    assert_eq!(e, format!("study.toml: sweep.axis[1].values[3]: {}", core.message));
}

#[test]
fn a_value_rejected_on_another_field_names_that_field() {
    // alpha 5 alone is above f0's default beta (3): the core blames beta.
    let (e, _) = bad("[[sweep.axis]]\npath = \"flows[0].params.alpha\"\nvalues = [1, 5]\n");
    assert_eq!(e, "study.toml: sweep.axis[0].values[1]: flows[0].params.beta: must be >= alpha (5), got 3");
}

#[test]
fn a_combination_of_good_values_that_fails_names_the_axis_and_the_point() {
    let (e, kind) = bad(r#"
[[sweep.axis]]
path = "flows[0].params.alpha"
values = [1, 3]
[[sweep.axis]]
path = "flows[0].params.beta"
values = [3, 2]
"#);
    // alpha 3 and beta 2 are each valid alone (the other at its default, 1 and 3), not together.
    assert_eq!(kind, ErrorKind::Invalid);
    assert_eq!(
        e,
        "study.toml: sweep.axis[1].values[1]: flows[0].params.beta: must be >= alpha (3), got 2 (in point 3: flows[0].params.alpha=3, flows[0].params.beta=2)"
    );
}

#[test]
fn a_path_the_scenario_rejects_is_an_error_at_the_path() {
    let axis = |p: &str| bad(&format!("[[sweep.axis]]\npath = \"{p}\"\nvalues = [1]\n"));
    let (e, kind) = axis("flows[5].params.alpha");
    assert_eq!(kind, ErrorKind::Reference);
    assert_eq!(e, "study.toml: sweep.axis[0].path: \"flows[5].params.alpha\": no entry [5]: the list has 2 entries");
    let (e, kind) = axis("links[0].bandwith");
    assert_eq!(kind, ErrorKind::UnknownField);
    assert!(e.starts_with("study.toml: sweep.axis[0].path: unknown field (did you mean 'bandwidth'?)"), "{e}");
    let (e, kind) = axis("links[0].nothing.deeper");
    assert_eq!(kind, ErrorKind::UnknownField);
    assert!(e.starts_with("study.toml: sweep.axis[0].path: links[0].nothing: unknown field"), "{e}");
    assert_eq!(axis("flows[x].cc").1, ErrorKind::Syntax);
}

#[test]
fn sweeping_the_seed_or_the_sweep_itself_is_refused() {
    let axis = |p: &str| bad(&format!("[[sweep.axis]]\npath = \"{p}\"\nvalues = [1, 2]\n"));
    let (e, kind) = axis("run.seed");
    assert_eq!(kind, ErrorKind::Conflict);
    assert!(e.starts_with("study.toml: sweep.axis[0].path: run.seed is swept with sweep.seeds"), "{e}");
    assert_eq!(axis("sweep.seeds").1, ErrorKind::Conflict);
}

#[test]
fn duplicate_and_nested_paths_across_axes_are_refused() {
    let (e, kind) = bad(r#"
[[sweep.axis]]
path = "flows[1].params.alpha"
values = [1, 2]
[[sweep.axis]]
path = "flows[01].params.alpha"
values = [1, 2]
"#);
    assert_eq!(kind, ErrorKind::Conflict);
    assert_eq!(e, "study.toml: sweep.axis[1].path: overlaps sweep.axis[0].path (\"flows[1].params.alpha\"): each field may be swept by one axis only");
    let (_, kind) = bad("[[sweep.axis]]\npath = \"links[1].queue\"\nvalues = [\"x\"]\n[[sweep.axis]]\nzip = [ { path = \"links[1].queue.limit\", values = [1] } ]\n");
    assert_eq!(kind, ErrorKind::Conflict);
}

#[test]
fn zip_errors_name_the_entry() {
    let (e, kind) = bad("[[sweep.axis]]\nzip = [ { path = \"flows[0].params.alpha\", values = [1, 2] }, { path = \"flows[0].params.beta\", values = [3, 4, 5] } ]\n");
    assert_eq!(kind, ErrorKind::Conflict);
    assert_eq!(e, "study.toml: sweep.axis[0].zip[1]: has 3 values but sweep.axis[0].zip[0] has 2: the entries of a zip vary together and must have equal lengths");
    assert_eq!(bad("[[sweep.axis]]\nzip = []\n").1, ErrorKind::OutOfRange);
    assert_eq!(bad("[[sweep.axis]]\npath = \"flows[0].cc\"\nzip = [ { path = \"flows[0].params.alpha\", values = [1] } ]\n").1, ErrorKind::Conflict);
    let (e, kind) = bad("[[sweep.axis]]\nzip = [ { path = \"flows[0].params.alpha\", values = [1, 1] }, { path = \"flows[0].params.beta\", values = [3, 3] } ]\n");
    assert_eq!(kind, ErrorKind::Conflict);
    assert!(e.starts_with("study.toml: sweep.axis[0].zip: entry 1 of every zip member repeats entry 0"), "{e}");
    // Members may repeat on their own as long as the tuples differ.
    ok("[[sweep.axis]]\nzip = [ { path = \"flows[0].params.alpha\", values = [1, 1] }, { path = \"flows[0].params.beta\", values = [3, 4] } ]\n");
    let (e, kind) = bad("[[sweep.axis]]\nzip = [ { path = \"flows[0].params.alpha\", valus = [1] } ]\n");
    assert_eq!(kind, ErrorKind::UnknownField);
    assert!(e.starts_with("study.toml: sweep.axis[0].zip[0].valus: unknown field (did you mean 'values'?)"), "{e}");
}

#[test]
fn unknown_and_missing_axis_keys_are_named() {
    let (e, kind) = bad("[[sweep.axis]]\npath = \"flows[0].cc\"\nvalue = [\"reno\"]\n");
    assert_eq!(kind, ErrorKind::UnknownField);
    assert!(e.starts_with("study.toml: sweep.axis[0].value: unknown field (did you mean 'values'?); allowed here: name, path, values, range, zip"), "{e}");
    assert_eq!(bad("[[sweep.axis]]\nvalues = [1]\n").1, ErrorKind::Missing);
    assert_eq!(bad("[[sweep.axis]]\npath = \"flows[0].cc\"\n").1, ErrorKind::Missing);
    assert_eq!(bad("[[sweep.axis]]\npath = \"flows[0].cc\"\nvalues = [\"reno\"]\nrange = { start = 1, stop = 2, num = 2 }\n").1, ErrorKind::Conflict);
    let (e, kind) = bad("[sweep]\nsed = 3\n");
    assert_eq!(kind, ErrorKind::UnknownField);
    assert!(e.starts_with("study.toml: sweep.sed: unknown field (did you mean 'seeds'?)"), "{e}");
    assert_eq!(bad("[[sweep.axis]]\npath = 3\nvalues = [1]\n").1, ErrorKind::WrongType);
    let e = expand(&format!("sweep = 3\n{BASE}"), "study.toml", &[]).unwrap_err();
    assert_eq!((e.path.as_str(), e.kind), ("sweep", ErrorKind::WrongType));
}

#[test]
fn empty_mixed_repeated_and_non_scalar_values_are_refused() {
    let axis = |v: &str| bad(&format!("[[sweep.axis]]\npath = \"flows[1].params.alpha\"\nvalues = {v}\n"));
    assert_eq!(
        axis("[]"),
        ("study.toml: sweep.axis[0].values: must hold 1 to 1000000 values, got an empty list".into(), ErrorKind::OutOfRange)
    );
    let (e, kind) = axis("[1, \"2\"]");
    assert_eq!(kind, ErrorKind::WrongType);
    assert!(e.starts_with("study.toml: sweep.axis[0].values[1]: must be of one type with values[0] (integer), got string \"2\""), "{e}");
    assert_eq!(axis("[1, 2, 1.0]"), ("study.toml: sweep.axis[0].values[2]: repeats values[0] (1.0): every point must differ".into(), ErrorKind::Conflict));
    assert_eq!(axis("[[1, 2]]").1, ErrorKind::WrongType);
    assert_eq!(axis("[{ a = 1 }]").1, ErrorKind::WrongType);
    assert_eq!(axis("[nan]").1, ErrorKind::OutOfRange);
    assert_eq!(axis("\"1, 2\"").1, ErrorKind::WrongType);
}

#[test]
fn names_must_be_distinct_printable_and_not_reserved() {
    let (e, kind) = bad("[[sweep.axis]]\nname = \"seed\"\npath = \"flows[1].params.alpha\"\nvalues = [1]\n");
    assert_eq!(kind, ErrorKind::Conflict);
    assert!(e.starts_with("study.toml: sweep.axis[0].name: must not be \"seed\" (reserved names: point, seed, overrides)"), "{e}");
    let (e, kind) = bad("[[sweep.axis]]\nname = \"x\"\npath = \"flows[1].params.alpha\"\nvalues = [1]\n[[sweep.axis]]\nname = \"x\"\npath = \"flows[0].cc\"\nvalues = [\"reno\"]\n");
    assert_eq!(kind, ErrorKind::Conflict);
    assert_eq!(e, "study.toml: sweep.axis[1].name: \"x\" is already the name of sweep.axis[0]; give one of them a distinct name");
    assert_eq!(bad("[[sweep.axis]]\nname = \"\"\npath = \"flows[1].params.alpha\"\nvalues = [1]\n").1, ErrorKind::OutOfRange);
    assert_eq!(bad("[[sweep.axis]]\nname = \"a\\u001b\"\npath = \"flows[1].params.alpha\"\nvalues = [1]\n").1, ErrorKind::OutOfRange);
}

#[test]
fn an_invalid_base_scenario_is_reported_as_such() {
    let text = format!("{BASE}\n[[sweep.axis]]\npath = \"flows[1].params.alpha\"\nvalues = [1]\n").replace("duration = \"10s\"", "duration = \"-1s\"");
    let e = expand(&text, "study.toml", &[]).unwrap_err();
    assert!(e.to_string().starts_with("study.toml: run.duration: "), "{e}");
}

#[test]
fn a_bad_user_override_is_reported_with_its_path() {
    let (e, kind) = bad_with("", &["flows[9].cc=reno"]);
    assert_eq!(kind, ErrorKind::Syntax);
    assert!(e.starts_with("study.toml: flows[9].cc: no entry [9]"), "{e}");
}

#[test]
fn every_point_of_a_three_axis_sweep_parses_to_its_values() {
    let s = ok(r#"
[sweep]
seeds = [1, 2]
[[sweep.axis]]
path = "flows[1].params.alpha"
range = { start = 1, stop = 3, num = 3 }
[[sweep.axis]]
path = "links[1].queue.limit"
values = [5, 50]
[[sweep.axis]]
path = "flows[0].cc"
values = ["vegas", "reno", "newreno"]
"#);
    assert_eq!(s.points.len(), 18);
    assert_eq!(s.runs, 36);
    for (i, p) in s.points.iter().enumerate() {
        let mut doc: toml::Value = toml::from_str(&with("")).unwrap();
        apply_overrides(&mut doc, &s.run_overrides(i)).unwrap();
        let sc = from_value(&doc, "study.toml").unwrap();
        assert_eq!(ParamValue::Integer(sc.links[1].forward.queue.limit() as i64), p.values[1]);
        assert_eq!(ParamValue::String(sc.flows[0].algorithm.name().to_string()), p.values[2]);
    }
}

/// Expansion speed at scale (not a timed test: `cargo test --release -p vegaslab-sim --test
/// sweep -- --ignored --nocapture` prints the times).
#[test]
#[ignore]
fn large_sweeps_expand_and_validate_every_point() {
    for (a, b, seeds) in [(100, 100, 1), (1000, 1000, 1)] {
        let sweep = format!(
            "[sweep]\nseeds = {seeds}\n[[sweep.axis]]\npath = \"flows[1].params.alpha\"\nrange = {{ start = 1, stop = {a}, step = 1 }}\n[[sweep.axis]]\npath = \"links[1].queue.limit\"\nrange = {{ start = 2, stop = {b}, step = 1 }}\n"
        );
        let t = std::time::Instant::now();
        let s = ok(&sweep);
        let expanded = t.elapsed();
        let json = s.to_json();
        println!("{} points: expanded and validated in {:.2?}, JSON {} MB in {:.2?} more", s.points.len(), expanded, json.len() / 1_000_000, t.elapsed() - expanded);
        assert_eq!(s.runs, (a * (b - 1) * seeds) as u64);
    }
}

#[test]
fn zip_members_are_validated_together_so_a_pair_valid_only_as_a_pair_is_accepted() {
    // f0 keeps the default beta (3): alpha 5 alone would be rejected, (5, 6) together is fine.
    let s = ok(r#"
[[sweep.axis]]
name = "thresholds"
zip = [ { path = "flows[0].params.alpha", values = [5, 10] }, { path = "flows[0].params.beta", values = [6, 12] } ]
"#);
    assert_eq!(s.points.len(), 2);
    // A pair that is invalid together is still blamed on the member the core rejected.
    let (e, kind) = bad(r#"
[[sweep.axis]]
zip = [ { path = "flows[0].params.alpha", values = [5, 10] }, { path = "flows[0].params.beta", values = [6, 8] } ]
"#);
    assert_eq!(kind, ErrorKind::Invalid, "{e}");
    assert!(e.contains("sweep.axis[0].zip[1].values[1]"), "{e}");
}

#[test]
fn a_backwards_range_of_large_integers_is_an_error_not_a_panic() {
    // 2^60 and 2^60 - 1 are the same f64: compared as floats the range looked empty, not backwards.
    let (e, kind) = bad(r#"
[[sweep.axis]]
path = "flows[1].params.alpha"
range = { start = 1152921504606846976, stop = 1152921504606846975, step = 1 }
"#);
    assert_eq!(kind, ErrorKind::OutOfRange, "{e}");
    assert!(e.contains("stop: must be >= start"), "{e}");
}
