//! The Vegas variants' `cc` names and parameters (vegas-a, adavegas, vegas_1, vegas_8) and
//! the Weigle-Feng heuristics in flow params: accepted values and clear range errors.

use serde_json::Value;
use vegaslab_cc::adavegas::{AdaVegasParams, VegasIncParams};
use vegaslab_cc::vegas_a::{AtBeta, EqualThroughput, VegasAParams};
use vegaslab_cc::{spec, AlgorithmSpec};
mod common;


const BASE: &str = common::ONE_LINK;

/// The flow's algorithm as the normalised scenario holds it (`{"<tag>": params}`).
fn algorithm_of(overrides: &[&str]) -> Value {
    json(&common::accepted(BASE, overrides).flows[0].algorithm)
}

fn json(a: &AlgorithmSpec) -> Value {
    serde_json::to_value(a).unwrap()
}

fn name_of(overrides: &[&str]) -> &'static str {
    common::accepted(BASE, overrides).flows[0].algorithm.name()
}

/// The parameters of an algorithm with parameters.
fn params(a: &Value) -> &Value {
    a.as_object().and_then(|m| m.values().next()).unwrap_or_else(|| panic!("no params: {a}"))
}

fn error_of(overrides: &[&str]) -> String {
    common::rejected(BASE, overrides)
}

// ---- names ----

#[test]
fn new_cc_names_parse_to_their_algorithms_with_the_papers_defaults() {
    assert_eq!(algorithm_of(&["flows[0].cc=vegas-a"]), json(&spec("vegas-a", VegasAParams::default())));
    assert_eq!(algorithm_of(&["flows[0].cc=adavegas"]), json(&spec("adavegas", AdaVegasParams::default())));
    assert_eq!(algorithm_of(&["flows[0].cc=vegas_1"]), json(&spec("vegas_1", VegasIncParams::VEGAS_1)));
    assert_eq!(algorithm_of(&["flows[0].cc=vegas_8"]), json(&spec("vegas_8", VegasIncParams::VEGAS_8)));
    for (cc, name) in [("vegas-a", "vegas-a"), ("adavegas", "adavegas"), ("vegas_1", "vegas_1"), ("vegas_8", "vegas_8")] {
        assert_eq!(name_of(&[&format!("flows[0].cc={cc}")]), name);
    }
}

#[test]
fn unknown_cc_lists_the_new_names_and_other_spellings_are_rejected() {
    let e = error_of(&["flows[0].cc=vegasa"]);
    assert!(e.contains("allowed: reno, newreno, vegas, rovegas, vegas-a, adavegas, vegas_1, vegas_8, cubic), or a Python controller \"py:package.module:Class\", or a BPF object \"bpf:algo.bpf.o\" or { bpf = \"algo.bpf.o\", ... }"), "{e}");
    error_of(&["flows[0].cc=vegas_a"]);
    error_of(&["flows[0].cc=vegas-1"]);
}

// ---- vegas-a ----

#[test]
fn vegas_a_accepts_initial_thresholds_gamma_and_both_tie_options() {
    let a = algorithm_of(&[
        "flows[0].cc=vegas-a",
        "flows[0].params.alpha=2",
        "flows[0].params.beta=6",
        "flows[0].params.gamma=2",
        "flows[0].params.equal_throughput=hold",
        "flows[0].params.at_beta=between",
    ]);
    assert_eq!(
        a,
        json(&spec(
            "vegas-a",
            VegasAParams {
                alpha: 2.0,
                beta: 6.0,
                gamma: 2.0,
                equal_throughput: EqualThroughput::Hold,
                at_beta: AtBeta::Between,
                ..Default::default()
            }
        ))
    );
    // Whole numbers written as floats are fine.
    let a = algorithm_of(&["flows[0].cc=vegas-a", "flows[0].params.alpha=3.0", "flows[0].params.beta=3.0"]);
    assert_eq!((a["VegasA"]["alpha"].as_f64(), a["VegasA"]["beta"].as_f64()), (Some(3.0), Some(3.0)));
}

#[test]
fn vegas_a_alpha_must_be_at_least_one() {
    let e = error_of(&["flows[0].cc=vegas-a", "flows[0].params.alpha=0"]);
    assert!(e.starts_with("case.toml: flows[0].params.alpha: must be"), "{e}");
    assert!(e.contains("got 0"), "{e}");
}

#[test]
fn vegas_a_thresholds_must_be_whole_numbers() {
    let e = error_of(&["flows[0].cc=vegas-a", "flows[0].params.alpha=1.5"]);
    assert_eq!(
        e,
        "case.toml: flows[0].params.alpha: must be a whole number of packets for Vegas-A (it steps alpha and beta by 1), got 1.5"
    );
    let e = error_of(&["flows[0].cc=vegas-a", "flows[0].params.beta=3.5"]);
    assert!(e.starts_with("case.toml: flows[0].params.beta: must be a whole number"), "{e}");
}

#[test]
fn vegas_a_beta_below_alpha_is_rejected() {
    let e = error_of(&["flows[0].cc=vegas-a", "flows[0].params.alpha=4"]);
    assert_eq!(e, "case.toml: flows[0].params.beta: must be >= alpha (4), got 3");
}

#[test]
fn vegas_a_unknown_tie_rules_are_rejected_with_the_allowed_values() {
    let e = error_of(&["flows[0].cc=vegas-a", "flows[0].params.equal_throughput=probe"]);
    assert!(e.starts_with("case.toml: flows[0].params.equal_throughput: unknown tie rule \"probe\""), "{e}");
    assert!(e.contains("\"increase\"") && e.contains("\"hold\""), "{e}");
    let e = error_of(&["flows[0].cc=vegas-a", "flows[0].params.at_beta=above"]);
    assert!(e.starts_with("case.toml: flows[0].params.at_beta: unknown rule \"above\""), "{e}");
}

#[test]
fn vegas_a_rejects_unknown_params() {
    let e = error_of(&["flows[0].cc=vegas-a", "flows[0].params.inc=2"]);
    assert!(e.contains("flows[0].params.inc: unknown field"), "{e}");
}

// ---- adavegas and the presets ----

#[test]
fn adavegas_takes_gamma_only_and_names_table_i_for_the_rest() {
    assert_eq!(
        algorithm_of(&["flows[0].cc=adavegas", "flows[0].params.gamma=2"]),
        json(&spec("adavegas", AdaVegasParams { gamma: 2.0, ..Default::default() }))
    );
    for k in ["alpha", "beta", "inc"] {
        let e = error_of(&["flows[0].cc=adavegas", &format!("flows[0].params.{k}=2")]);
        assert_eq!(
            e,
            format!("case.toml: flows[0].params.{k}: cannot be set: AdaVegas takes alpha, beta and inc from Table I of its paper")
        );
    }
    let e = error_of(&["flows[0].cc=adavegas", "flows[0].params.gama=2"]);
    assert!(e.contains("did you mean 'gamma'?"), "{e}");
    let e = error_of(&["flows[0].cc=adavegas", "flows[0].params.gamma=-1"]);
    assert!(e.starts_with("case.toml: flows[0].params.gamma: must be"), "{e}");
}

#[test]
fn presets_fix_alpha_beta_inc() {
    let e = error_of(&["flows[0].cc=vegas_8", "flows[0].params.inc=4"]);
    assert_eq!(e, "case.toml: flows[0].params.inc: cannot be set: the vegas_8 preset fixes alpha 4, beta 8, inc 8 (the AdaVegas paper, section II)");
    let e = error_of(&["flows[0].cc=vegas_1", "flows[0].params.alpha=2"]);
    assert!(e.starts_with("case.toml: flows[0].params.alpha: cannot be set: the vegas_1 preset fixes alpha 1, beta 3, inc 1"), "{e}");
    let e = error_of(&["flows[0].cc=vegas_1", "flows[0].params.heuristic=queue", "flows[0].params.queue=25"]);
    assert!(e.contains("flows[0].params.heuristic: cannot be set"), "{e}");
    let a = algorithm_of(&["flows[0].cc=vegas_8", "flows[0].params.gamma=3"]);
    assert_eq!((a["VegasInc"]["gamma"].as_f64(), a["VegasInc"]["inc"].as_f64()), (Some(3.0), Some(8.0)));
}

// ---- heuristics ----

fn alpha_beta(a: &Value) -> (f64, f64) {
    let p = params(a);
    (p["alpha"].as_f64().expect("alpha"), p["beta"].as_f64().expect("beta"))
}

#[test]
fn heuristics_set_alpha_and_beta_from_the_papers_numbers() {
    // q = 25 -> 7, 8 (section 4.1); RED 4/8 -> 2, 6 and 4, 8 (4.2); 8948/100 -> 88, 89 (4.3).
    let cases: [(&[&str], (f64, f64)); 4] = [
        (&["flows[0].params.heuristic=queue", "flows[0].params.queue=25"], (7.0, 8.0)),
        (&["flows[0].params.heuristic=red", "flows[0].params.red_min=4", "flows[0].params.red_max=8"], (2.0, 6.0)),
        (&["flows[0].params.heuristic=red-exact", "flows[0].params.red_min=4", "flows[0].params.red_max=8"], (4.0, 8.0)),
        (&["flows[0].params.heuristic=red-per-flow", "flows[0].params.red_min=8948", "flows[0].params.flows=100"], (88.0, 89.0)),
    ];
    for cc in ["vegas", "rovegas", "vegas-a"] {
        for (sets, want) in &cases {
            let mut o = vec![format!("flows[0].cc={cc}")];
            o.extend(sets.iter().map(|s| s.to_string()));
            let o: Vec<&str> = o.iter().map(|s| s.as_str()).collect();
            assert_eq!(alpha_beta(&algorithm_of(&o)), *want, "{cc} {sets:?}");
        }
    }
    // The Linux flavour takes them too.
    let a = algorithm_of(&["flows[0].cc=vegas", "flows[0].params.flavour=linux", "flows[0].params.heuristic=queue", "flows[0].params.queue=30"]);
    assert_eq!(alpha_beta(&a), (9.0, 10.0));
}

#[test]
fn heuristic_and_explicit_thresholds_conflict() {
    let e = error_of(&["flows[0].cc=vegas", "flows[0].params.heuristic=queue", "flows[0].params.queue=25", "flows[0].params.alpha=2"]);
    assert_eq!(e, "case.toml: flows[0].params.alpha: cannot be given with heuristic = \"queue\", which sets alpha and beta");
    let e = error_of(&["flows[0].cc=vegas-a", "flows[0].params.heuristic=red", "flows[0].params.red_min=4", "flows[0].params.red_max=8", "flows[0].params.beta=9"]);
    assert!(e.starts_with("case.toml: flows[0].params.beta: cannot be given with heuristic = \"red\""), "{e}");
}

#[test]
fn heuristic_inputs_are_required_and_checked() {
    let e = error_of(&["flows[0].cc=vegas", "flows[0].params.heuristic=queue"]);
    assert_eq!(e, "case.toml: flows[0].params.queue: is required by heuristic = \"queue\"");
    let e = error_of(&["flows[0].cc=vegas", "flows[0].params.heuristic=red-per-flow", "flows[0].params.red_min=8948"]);
    assert_eq!(e, "case.toml: flows[0].params.flows: is required by heuristic = \"red-per-flow\"");
    let e = error_of(&["flows[0].cc=vegas", "flows[0].params.heuristic=queue", "flows[0].params.queue=2"]);
    assert!(e.starts_with("case.toml: flows[0].params.queue: must be >= 3 packets"), "{e}");
    let e = error_of(&["flows[0].cc=vegas", "flows[0].params.heuristic=red", "flows[0].params.red_min=8", "flows[0].params.red_max=4"]);
    assert_eq!(e, "case.toml: flows[0].params.red_max: must be >= red_min (8), got 4");
    let e = error_of(&["flows[0].cc=vegas", "flows[0].params.heuristic=red-per-flow", "flows[0].params.red_min=50", "flows[0].params.flows=100"]);
    assert!(e.starts_with("case.toml: flows[0].params.red_min: must be > flows (100)"), "{e}");
    let e = error_of(&["flows[0].cc=vegas", "flows[0].params.heuristic=queue", "flows[0].params.queue=-4"]);
    assert!(e.starts_with("case.toml: flows[0].params.queue: must be"), "{e}");
    let e = error_of(&["flows[0].cc=vegas", "flows[0].params.heuristic=queue", "flows[0].params.queue=25.5"]);
    assert!(e.starts_with("case.toml: flows[0].params.queue: must be a whole number"), "{e}");
}

#[test]
fn heuristic_inputs_must_match_the_heuristic() {
    let e = error_of(&["flows[0].cc=vegas", "flows[0].params.heuristic=queue", "flows[0].params.queue=25", "flows[0].params.red_min=4"]);
    assert_eq!(e, "case.toml: flows[0].params.red_min: is not used by heuristic = \"queue\" (it uses: queue)");
    let e = error_of(&["flows[0].cc=vegas", "flows[0].params.queue=25"]);
    assert!(e.starts_with("case.toml: flows[0].params.queue: is only used with a heuristic (heuristic = \"queue\", \"red\""), "{e}");
}

#[test]
fn unknown_heuristic_lists_the_allowed_ones() {
    let e = error_of(&["flows[0].cc=vegas", "flows[0].params.heuristic=buffer"]);
    assert_eq!(
        e,
        "case.toml: flows[0].params.heuristic: unknown heuristic \"buffer\" (allowed: \"queue\", \"red\", \"red-exact\", \"red-per-flow\")"
    );
}

#[test]
fn vegas_a_rejects_a_heuristic_that_gives_alpha_zero() {
    // q = 5: floor(5/3) = 1 -> alpha 0, beta 1: fine for Vegas, not for Vegas-A (alpha >= 1).
    assert_eq!(alpha_beta(&algorithm_of(&["flows[0].cc=vegas", "flows[0].params.heuristic=queue", "flows[0].params.queue=5"])), (0.0, 1.0));
    let e = error_of(&["flows[0].cc=vegas-a", "flows[0].params.heuristic=queue", "flows[0].params.queue=5"]);
    assert_eq!(e, "case.toml: flows[0].params.heuristic: gives alpha 0 and beta 1, but alpha must be >= 1 here");
}
