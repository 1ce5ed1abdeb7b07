//! RED and error-rate parameters are validated with clear errors naming the field.

use vegaslab_sim::queue::{RedVariant, RedWeight};
mod common;

use vegaslab_sim::scenario::{parse, QueueSpec};

const BASE: &str = r#"
[run]
duration = "10s"

[[links]]
endpoints = ["S1", "D1"]
bandwidth = "1Mbps"
delay = "10ms"
queue = { kind = "red", limit = 25, min = 4, max = 8, max_p = 0.1, weight = 0.002, gentle = false }

[[flows]]
from = "S1"
to = "D1"
cc = "reno"
"#;

fn error_of(overrides: &[&str]) -> String {
    common::rejected(BASE, overrides)
}

fn queue_of(overrides: &[&str]) -> QueueSpec {
    common::accepted(BASE, overrides).links[0].forward.queue.clone()
}

#[test]
fn the_documented_red_example_parses() {
    let QueueSpec::Red(r) = queue_of(&[]) else { panic!("not RED") };
    assert_eq!(r.variant, RedVariant::Classic);
    assert_eq!((r.limit, r.min_th, r.max_th, r.max_p, r.weight, r.gentle, r.wait), (25, 4.0, 8.0, 0.1, RedWeight::Fixed(0.002), false, true));
    assert_eq!(r.mean_pktsize, 500);
}

#[test]
fn red_linear_is_a_kind_and_has_no_max_p() {
    let QueueSpec::Red(r) = queue_of(&["links[0].queue={kind=\"red-linear\", limit=25, min=4, max=8}"]) else { panic!() };
    assert_eq!((r.variant, r.max_p), (RedVariant::Linear, 1.0));
    let e = error_of(&["links[0].queue={kind=\"red-linear\", limit=25, min=4, max=8, max_p=0.1}"]);
    assert!(e.starts_with("case.toml: links[0].queue.max_p: unknown field"), "{e}");
}

#[test]
fn weight_auto_is_accepted() {
    let QueueSpec::Red(r) = queue_of(&["links[0].queue.weight=auto"]) else { panic!() };
    assert_eq!(r.weight, RedWeight::Auto);
}

#[test]
fn max_must_exceed_min() {
    assert_eq!(error_of(&["links[0].queue.max=4"]), "case.toml: links[0].queue.max: must be > min (4), got 4");
}

#[test]
fn min_must_not_be_negative() {
    assert_eq!(error_of(&["links[0].queue.min=-1"]), "case.toml: links[0].queue.min: must be >= 0 packets, got -1");
}

#[test]
fn max_p_must_be_a_probability() {
    assert_eq!(error_of(&["links[0].queue.max_p=0"]), "case.toml: links[0].queue.max_p: must be in (0, 1], got 0");
    assert_eq!(error_of(&["links[0].queue.max_p=1.5"]), "case.toml: links[0].queue.max_p: must be in (0, 1], got 1.5");
}

#[test]
fn weight_must_be_in_zero_one_or_auto() {
    assert_eq!(error_of(&["links[0].queue.weight=0"]), "case.toml: links[0].queue.weight: must be in (0, 1] or \"auto\", got 0");
    assert_eq!(error_of(&["links[0].queue.weight=\"fast\""]), "case.toml: links[0].queue.weight: must be a number in (0, 1] or \"auto\", got \"fast\"");
}

#[test]
fn limit_must_exceed_max() {
    assert_eq!(error_of(&["links[0].queue.limit=8"]), "case.toml: links[0].queue.limit: must be > max (8), got 8");
}

#[test]
fn thresholds_are_required() {
    assert_eq!(
        error_of(&["links[0].queue={kind=\"red\", limit=25, max=8}"]),
        "case.toml: links[0].queue.min: is required (the lower threshold on the average queue, packets)"
    );
}

#[test]
fn unknown_queue_kind_lists_the_registered_kinds() {
    let kinds: Vec<&str> = vegaslab_sim::queue::kinds().map(|k| k.name).collect();
    assert_eq!(kinds[..4], ["droptail", "red", "red-linear", "codel"]);
    assert_eq!(
        error_of(&["links[0].queue.kind=fifo"]),
        format!("case.toml: links[0].queue.kind: unknown queue kind \"fifo\" (allowed: {})", kinds.join(", "))
    );
}

#[test]
fn droptail_rejects_red_fields() {
    let e = error_of(&["links[0].queue={kind=\"droptail\", limit=25, min=4}"]);
    assert!(e.starts_with("case.toml: links[0].queue.min: unknown field"), "{e}");
}

#[test]
fn error_rate_must_be_below_one() {
    assert_eq!(error_of(&["links[0].error_rate=1"]), "case.toml: links[0].error_rate: must be >= 0 and < 1, got 1");
    assert_eq!(error_of(&["links[0].error_rate=-0.1"]), "case.toml: links[0].error_rate: must be >= 0 and < 1, got -0.1");
}

#[test]
fn error_rate_applies_per_direction() {
    let o = vec!["links[0].error_rate=0.01".to_string(), "links[0].error_rate_reverse=0.002".to_string()];
    let sc = parse(BASE, "case.toml", &o).unwrap();
    assert_eq!((sc.links[0].forward.error_rate, sc.links[0].reverse.error_rate), (0.01, 0.002));
}
