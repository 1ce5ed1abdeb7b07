//! Inputs at and beyond the edge of what the clock and memory can hold: each is a scenario
//! error that names the field and the allowed range, never a wrapped
//! number, an impossible result or an allocation failure.

use vegaslab_sim::{scenario, ErrorKind, ScenarioError};

const BASE: &str = r#"
[run]
duration = "2s"
[[links]]
endpoints = ["S", "D"]
bandwidth = "1Mbps"
delay = "10ms"
[[flows]]
name = "f"
from = "S"
to = "D"
cc = "vegas"
"#;

fn parse_with(overrides: &[&str]) -> Result<scenario::Scenario, ScenarioError> {
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    scenario::parse(BASE, "base.toml", &overrides)
}

fn error(overrides: &[&str]) -> ScenarioError {
    match parse_with(overrides) {
        Ok(_) => panic!("{overrides:?} was accepted"),
        Err(e) => e,
    }
}

#[test]
fn nan_and_infinity_are_rejected_for_every_kind_of_quantity() {
    for (set, field) in [
        ("links[0].delay=nan", "links[0].delay"),
        ("links[0].delay=inf", "links[0].delay"),
        ("links[0].bandwidth=nan", "links[0].bandwidth"),
        ("links[0].bandwidth=inf", "links[0].bandwidth"),
        ("flows[0].start=nan", "flows[0].start"),
        ("flows[0].start=-inf", "flows[0].start"),
        ("flows[0].stop=inf", "flows[0].stop"),
        ("links[0].delay_schedule=[{at=nan, delay=\"1ms\"}]", "links[0].delay_schedule[0].at"),
        ("run.duration=nan", "run.duration"),
        ("flows[0].app={kind=\"file\", size=nan}", "flows[0].app.size"),
        ("flows[0].app={kind=\"file\", size=inf}", "flows[0].app.size"),
    ] {
        let e = error(&[set]);
        assert_eq!(e.path, field, "{set}: {e}");
        assert!(matches!(e.kind, ErrorKind::WrongType | ErrorKind::OutOfRange), "{set}: {e}");
    }
}

#[test]
fn bandwidths_outside_1_bps_to_10_tbps_are_rejected() {
    for bw in ["1e-300", "\"1e-300bps\"", "0.5", "\"20Tbps\"", "1e14"] {
        let e = error(&[&format!("links[0].bandwidth={bw}")]);
        assert_eq!((e.path.as_str(), e.kind), ("links[0].bandwidth", ErrorKind::OutOfRange), "{bw}: {e}");
        assert!(e.message.contains("between 1 bit/s and 10 Tbit/s"), "{e}");
    }
    assert!(parse_with(&["links[0].bandwidth=\"10Gbps\""]).is_ok());
}

#[test]
fn times_and_delays_beyond_the_clock_budget_are_rejected() {
    let e = error(&["run.duration=\"1e9s\""]);
    assert_eq!((e.path.as_str(), e.kind), ("run.duration", ErrorKind::OutOfRange), "{e}");
    let e = error(&["links[0].delay=\"2h\""]);
    assert_eq!(e.path, "links[0].delay", "{e}");
    let e = error(&["links[0].delay=\"18446744073.7s\""]);
    assert!(e.message.contains("3600 s"), "{e}");
    let e = error(&["flows[0].start=1e300"]);
    assert_eq!(e.path, "flows[0].start", "{e}");
}

#[test]
fn a_tiny_sample_interval_with_monitors_is_too_large_and_says_how_much_memory() {
    let e = error(&["run.sample_interval=\"1ns\"", "monitor.throughput=true"]);
    assert_eq!((e.path.as_str(), e.kind), ("run.sample_interval", ErrorKind::TooLarge), "{e}");
    assert!(e.message.contains("GB"), "{e}");
    // Without monitors nothing is recorded, so the same interval is fine.
    assert!(parse_with(&["run.sample_interval=\"1ns\""]).is_ok());
    let e = error(&["run.duration=\"1e7s\"", "monitor.cwnd=true"]);
    assert_eq!(e.kind, ErrorKind::TooLarge, "{e}");
}

#[test]
fn names_must_be_plain_so_no_later_step_can_misread_them() {
    for bad in ["\"a\\nexec touch /tmp/x\"", "\"[exec ls]\"", "\"a b\"", "\"\"", "\"$x\""] {
        let e = error(&[&format!("flows[0].name={bad}")]);
        assert_eq!((e.path.as_str(), e.kind), ("flows[0].name", ErrorKind::OutOfRange), "{bad}: {e}");
        assert!(!e.to_string().contains('\n'), "the message carries no raw newline: {e:?}");
    }
    let e = error(&["links[0].endpoints=[\"S\", \"D;rm\"]"]);
    assert_eq!(e.path, "links[0].endpoints[1]", "{e}");
    let e = error(&["meta.id=\"x y\""]);
    assert_eq!(e.path, "meta.id", "{e}");
}

#[test]
fn flow_counts_are_checked_before_the_flows_are_built() {
    let text = format!(
        "{BASE}\n[lte]\nenbs = 1\nues_per_enb = 3\nserver_link = {{ bandwidth = \"1Mbps\", delay = \"1ms\" }}\nenb_link = {{ bandwidth = \"1Mbps\", delay = \"1ms\" }}\nue_link = {{ bandwidth = \"1Mbps\", delay = \"1ms\" }}\n{}",
        "[[flows]]\nfrom = \"server\"\nto = \"UE{i}\"\ncc = \"reno\"\nrange = \"1-10000000\"\n"
    );
    let e = scenario::parse(&text, "many.toml", &[]).unwrap_err();
    assert_eq!(e.kind, ErrorKind::TooLarge, "{e}");
    assert!(e.message.contains("at most 1048576"), "{e}");
}

#[test]
fn a_huge_lte_tree_is_too_large_before_it_is_built() {
    let text = "[run]\nduration = \"1s\"\n[lte]\nenbs = 10000\nues_per_enb = 100000\nserver_link = { bandwidth = \"1Mbps\", delay = \"1ms\" }\nenb_link = { bandwidth = \"1Mbps\", delay = \"1ms\" }\nue_link = { bandwidth = \"1Mbps\", delay = \"1ms\" }\n[[flows]]\nfrom = \"server\"\nto = \"UE1\"\ncc = \"reno\"\n";
    let e = scenario::parse(text, "lte.toml", &[]).unwrap_err();
    assert_eq!((e.path.as_str(), e.kind), ("lte.ues_per_enb", ErrorKind::TooLarge), "{e}");
}

#[test]
fn a_syntax_error_quotes_the_position_not_the_line() {
    let text = format!("[run]\nduration = \"1s\"\nx = {}", "[".repeat(200_000));
    let e = scenario::parse(&text, "deep.toml", &[]).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Syntax);
    assert!(e.message.starts_with("not valid TOML at line 3, column"), "{e}");
    assert!(e.message.len() < 300, "{} characters", e.message.len());
}

#[test]
fn forty_thousand_links_validate_with_a_linear_duplicate_check() {
    let mut text = String::from("[run]\nduration = \"1s\"\n");
    for i in 0..40_000 {
        text.push_str(&format!("[[links]]\nendpoints = [\"N{i}\", \"N{}\"]\nbandwidth = \"1Mbps\"\ndelay = \"1ms\"\n", i + 1));
    }
    text.push_str("[[links]]\nendpoints = [\"N7\", \"N6\"]\nbandwidth = \"1Mbps\"\ndelay = \"1ms\"\n");
    text.push_str("[[flows]]\nfrom = \"N0\"\nto = \"N1\"\ncc = \"reno\"\n");
    let e = scenario::parse(&text, "chain.toml", &[]).unwrap_err();
    assert_eq!((e.path.as_str(), e.kind), ("links[40000].endpoints", ErrorKind::Conflict), "{e}");
}

#[test]
fn vegas_a_rules_keep_their_defaults_when_other_params_are_given() {
    let plain = parse_with(&["flows[0].cc=\"vegas-a\""]).unwrap();
    let with_alpha = parse_with(&["flows[0].cc=\"vegas-a\"", "flows[0].params.alpha=1"]).unwrap();
    assert_eq!(format!("{:?}", plain.flows[0].algorithm), format!("{:?}", with_alpha.flows[0].algorithm));
}

#[test]
fn a_droptail_limit_of_one_which_would_drop_every_packet_is_rejected() {
    let e = error(&["links[0].queue={limit=1}"]);
    assert_eq!((e.path.as_str(), e.kind), ("links[0].queue.limit", ErrorKind::OutOfRange), "{e}");
    assert!(e.message.contains("between 2 and"), "{e}");
    assert!(parse_with(&["links[0].queue={limit=2}"]).is_ok());
}

#[test]
fn an_unknown_key_that_is_empty_or_odd_is_named_quoted() {
    let text = format!("{BASE}\n[\"\"]\nx = 1\n");
    let e = scenario::parse(&text, "odd.toml", &[]).unwrap_err();
    assert_eq!((e.path.as_str(), e.kind), ("\"\"", ErrorKind::UnknownField), "{e}");
    let text = format!("{BASE}\n[\"a.b c\"]\nx = 1\n");
    assert_eq!(scenario::parse(&text, "odd.toml", &[]).unwrap_err().path, "\"a.b c\"");
}

#[test]
fn two_million_flow_samples_are_refused_before_recording() {
    // 2 s at 1 us with one flow's cwnd recorded: 2,000,001 samples, about 2.4 GB on the way to
    // pandas (measured 2.6 GB and 24 s before this check).
    let e = error(&["run.sample_interval=\"1us\"", "monitor.cwnd=true"]);
    assert_eq!(e.kind, ErrorKind::TooLarge, "{e}");
}
