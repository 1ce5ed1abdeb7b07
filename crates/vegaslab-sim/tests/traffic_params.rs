//! Traffic parameters are validated with errors that name the field: TCP applications
//! (`[[flows]] app = { kind = ... }`) and UDP sources (`[[udp]]`).

use vegaslab_sim::{run_text, scenario::parse};

const NET: &str = r#"
[run]
duration = "10s"

[[links]]
endpoints = ["S1", "R1"]
bandwidth = "10Mbps"
delay = "1ms"

[[links]]
endpoints = ["R1", "D1"]
bandwidth = "1Mbps"
delay = "10ms"

[[links]]
endpoints = ["X1", "X2"]
bandwidth = "1Mbps"
delay = "10ms"
"#;

fn with_app(app: &str) -> String {
    format!("{NET}\n[[flows]]\nfrom = \"S1\"\nto = \"D1\"\ncc = \"vegas\"\napp = {app}\n")
}

fn with_udp(udp: &str) -> String {
    format!("{NET}\n[[flows]]\nfrom = \"S1\"\nto = \"D1\"\ncc = \"reno\"\n\n[[udp]]\n{udp}\n")
}

fn error(text: &str) -> String {
    parse(text, "case.toml", &[]).expect_err("should be rejected").to_string()
}

/// Errors found when the network is built (load on the source's path, routing).
fn run_error(text: &str) -> String {
    run_text(text, "case.toml", None, &[], |_, _| true).expect_err("should be rejected").to_string()
}

const ONOFF: &str = r#"{ kind = "onoff", mean_on = "5s", mean_off = "6s", shape = 1.5 }"#;
const NPS: &str = r#"{ kind = "nps", mean_interarrival = "0.5s", mean_flow_size = "100KB", flow_shape = 1.5 }"#;
const PACED: &str = r#"{ kind = "pareto-paced", mean_interarrival = "0.5s", mean_flow_size = "100KB", flow_shape = 1.5, rate = "5Mbps", mean_on = "30ms", mean_off = "70ms", shape = 1.5 }"#;

#[test]
fn the_valid_traffic_models_parse() {
    for app in [ONOFF, NPS, PACED, r#"{ kind = "file", size = "1MB" }"#, r#"{ kind = "ftp" }"#, r#""ftp""#] {
        parse(&with_app(app), "case.toml", &[]).unwrap_or_else(|e| panic!("{app}: {e}"));
    }
    let udp = [
        "from = \"S1\"\nto = \"D1\"\npacket_size = 1000\nmodel = \"cbr\"\nrate = \"500kbps\"",
        "from = \"S1\"\nto = \"D1\"\npacket_size = 1000\nmodel = \"cbr\"\ninterval = \"10ms\"\nrandom = true",
        "from = \"D1\"\nto = \"S1\"\npacket_size = 1000\nmodel = \"exp-onoff\"\nrate = \"2Mbps\"\nmean_on = \"10ms\"\nload = 0.9",
        "from = \"D1\"\nto = \"S1\"\npacket_size = 1000\nmodel = \"exp-onoff\"\nrate = \"2Mbps\"\nmean_on = \"10ms\"\nmean_rate = \"900kbps\"",
        "from = \"D1\"\nto = \"S1\"\npacket_size = 1000\nmodel = \"exp-onoff\"\nrate = \"2Mbps\"\nmean_on = \"10ms\"\nmean_off = \"12ms\"",
        "from = \"D1\"\nto = \"S1\"\npacket_size = 1000\nmodel = \"pareto-onoff\"\nrate = \"2Mbps\"\nmean_on = \"10ms\"\nmean_off = \"12ms\"",
    ];
    for u in udp {
        let sc = parse(&with_udp(u), "case.toml", &[]).unwrap_or_else(|e| panic!("{u}: {e}"));
        assert_eq!(sc.udp.len(), 1);
        assert_eq!(sc.udp[0].name, "udp0");
    }
}

#[test]
fn an_onoff_shape_of_one_is_rejected_because_the_mean_is_undefined() {
    let e = error(&with_app(r#"{ kind = "onoff", mean_on = "5s", mean_off = "6s", shape = 1 }"#));
    assert!(e.starts_with("case.toml: flows[0].app.shape: must be > 1"), "{e}");
    assert!(e.contains("mean is undefined"), "{e}");
}

#[test]
fn an_onoff_shape_below_one_is_rejected() {
    let e = error(&with_app(r#"{ kind = "onoff", mean_on = "5s", mean_off = "6s", shape = 0.8 }"#));
    assert!(e.starts_with("case.toml: flows[0].app.shape: must be > 1"), "{e}");
}

#[test]
fn an_nps_flow_shape_of_one_is_rejected() {
    let e = error(&with_app(r#"{ kind = "nps", mean_interarrival = "0.5s", mean_flow_size = "1MB", flow_shape = 1.0 }"#));
    assert!(e.starts_with("case.toml: flows[0].app.flow_shape: must be > 1"), "{e}");
}

#[test]
fn a_paced_on_off_shape_of_one_is_rejected() {
    let e = error(&with_app(&PACED.replace("shape = 1.5 }", "shape = 1 }")));
    assert!(e.starts_with("case.toml: flows[0].app.shape: must be > 1"), "{e}");
}

#[test]
fn a_zero_mean_on_time_is_rejected() {
    let e = error(&with_app(r#"{ kind = "onoff", mean_on = "0s", mean_off = "6s" }"#));
    assert_eq!(e, "case.toml: flows[0].app.mean_on: must be > 0 s and <= 10000000 s, got \"0s\"");
}

#[test]
fn a_missing_mean_off_time_is_required() {
    let e = error(&with_app(r#"{ kind = "onoff", mean_on = "5s" }"#));
    assert!(e.starts_with("case.toml: flows[0].app.mean_off: is required"), "{e}");
}

#[test]
fn a_negative_interarrival_time_is_rejected() {
    let e = error(&with_app(r#"{ kind = "nps", mean_interarrival = "-1s", mean_flow_size = "1MB" }"#));
    assert!(e.starts_with("case.toml: flows[0].app.mean_interarrival: must be > 0 s"), "{e}");
}

#[test]
fn a_zero_mean_flow_size_is_rejected() {
    let e = error(&with_app(r#"{ kind = "nps", mean_interarrival = "1s", mean_flow_size = "0MB" }"#));
    assert!(e.starts_with("case.toml: flows[0].app.mean_flow_size: must be between 1 bytes and 1e15 bytes (1 PB)"), "{e}");
}

#[test]
fn a_paced_application_needs_its_on_rate() {
    let e = error(&with_app(&PACED.replace("rate = \"5Mbps\", ", "")));
    assert!(e.starts_with("case.toml: flows[0].app.rate: is required"), "{e}");
}

#[test]
fn a_misspelled_application_field_suggests_the_right_one() {
    let e = error(&with_app(r#"{ kind = "onoff", mean_onn = "5s", mean_off = "6s" }"#));
    assert!(e.contains("flows[0].app.mean_onn: unknown field (did you mean 'mean_on'?)"), "{e}");
}

#[test]
fn an_application_of_another_kind_rejects_foreign_fields() {
    let e = error(&with_app(r#"{ kind = "nps", mean_interarrival = "1s", mean_flow_size = "1MB", mean_on = "5s" }"#));
    assert!(e.contains("flows[0].app.mean_on: unknown field"), "{e}");
}

#[test]
fn a_traffic_model_named_as_a_bare_string_asks_for_its_parameters() {
    let e = error(&with_app(r#""onoff""#));
    assert!(e.starts_with("case.toml: flows[0].app: \"onoff\" needs parameters"), "{e}");
}

#[test]
fn an_unknown_application_kind_lists_the_allowed_ones() {
    let e = error(&with_app(r#"{ kind = "telnet" }"#));
    assert_eq!(e, "case.toml: flows[0].app.kind: unknown application \"telnet\" (allowed: ftp, file, onoff, nps, pareto-paced)");
}

#[test]
fn file_size_beside_an_application_table_is_rejected() {
    let text = with_app(ONOFF) + "file_size = \"1MB\"\n";
    let e = error(&text);
    assert!(e.starts_with("case.toml: flows[0].file_size: give the size inside the app table"), "{e}");
}

#[test]
fn a_udp_pareto_shape_of_one_is_rejected() {
    let e = error(&with_udp("from = \"S1\"\nto = \"D1\"\npacket_size = 1000\nmodel = \"pareto-onoff\"\nrate = \"2Mbps\"\nmean_on = \"10ms\"\nmean_off = \"12ms\"\nshape = 1"));
    assert!(e.starts_with("case.toml: udp[0].shape: must be > 1"), "{e}");
}

#[test]
fn a_udp_source_needs_a_model_and_a_packet_size() {
    let e = error(&with_udp("from = \"S1\"\nto = \"D1\"\npacket_size = 1000"));
    assert!(e.starts_with("case.toml: udp[0].model: is required"), "{e}");
    let e = error(&with_udp("from = \"S1\"\nto = \"D1\"\nmodel = \"cbr\"\nrate = \"1Mbps\""));
    assert!(e.starts_with("case.toml: udp[0].packet_size: is required"), "{e}");
    let e = error(&with_udp("from = \"S1\"\nto = \"D1\"\npacket_size = 0\nmodel = \"cbr\"\nrate = \"1Mbps\""));
    assert!(e.starts_with("case.toml: udp[0].packet_size: must be between 1"), "{e}");
}

#[test]
fn an_unknown_udp_model_lists_the_allowed_ones() {
    let e = error(&with_udp("from = \"S1\"\nto = \"D1\"\npacket_size = 1000\nmodel = \"poisson\""));
    assert_eq!(e, "case.toml: udp[0].model: unknown model \"poisson\" (allowed: cbr, exp-onoff, pareto-onoff)");
}

#[test]
fn a_cbr_source_takes_a_rate_or_an_interval_not_both() {
    let e = error(&with_udp("from = \"S1\"\nto = \"D1\"\npacket_size = 1000\nmodel = \"cbr\"\nrate = \"1Mbps\"\ninterval = \"8ms\""));
    assert!(e.starts_with("case.toml: udp[0].interval: give either rate or interval"), "{e}");
    let e = error(&with_udp("from = \"S1\"\nto = \"D1\"\npacket_size = 1000\nmodel = \"cbr\""));
    assert!(e.starts_with("case.toml: udp[0].rate: is required (or interval)"), "{e}");
}

#[test]
fn a_field_of_another_udp_model_is_rejected() {
    let e = error(&with_udp("from = \"S1\"\nto = \"D1\"\npacket_size = 1000\nmodel = \"cbr\"\nrate = \"1Mbps\"\nshape = 1.5"));
    assert!(e.contains("udp[0].shape: unknown field"), "{e}");
}

#[test]
fn an_exponential_source_takes_exactly_one_of_mean_off_mean_rate_or_load() {
    let base = "from = \"D1\"\nto = \"S1\"\npacket_size = 1000\nmodel = \"exp-onoff\"\nrate = \"2Mbps\"\nmean_on = \"10ms\"";
    let e = error(&with_udp(&format!("{base}\nload = 0.5\nmean_off = \"10ms\"")));
    assert!(e.contains("give exactly one of mean_off, mean_rate or load"), "{e}");
    let e = error(&with_udp(base));
    assert!(e.starts_with("case.toml: udp[0].mean_off: give exactly one"), "{e}");
    let e = error(&with_udp(&format!("{base}\nmean_off = \"10ms\"\nload_reference = \"1Mbps\"")));
    assert!(e.starts_with("case.toml: udp[0].load_reference: only applies with load"), "{e}");
}

#[test]
fn a_mean_rate_above_the_on_rate_is_rejected() {
    let base = "from = \"D1\"\nto = \"S1\"\npacket_size = 1000\nmodel = \"exp-onoff\"\nrate = \"2Mbps\"\nmean_on = \"10ms\"";
    let e = error(&with_udp(&format!("{base}\nmean_rate = \"3Mbps\"")));
    assert!(e.starts_with("case.toml: udp[0].mean_rate: gives a mean rate of 3000000 bit/s, above the rate while ON"), "{e}");
    let e = error(&with_udp(&format!("{base}\nload = 0.5\nload_reference = \"10Mbps\"")));
    assert!(e.starts_with("case.toml: udp[0].load: gives a mean rate of 5000000 bit/s"), "{e}");
    let e = error(&with_udp(&format!("{base}\nload = -0.5")));
    assert!(e.starts_with("case.toml: udp[0].load: must be >= 0"), "{e}");
}

#[test]
fn a_load_too_high_for_the_sources_path_is_rejected_when_the_network_is_built() {
    // The default reference is the narrowest link on the path (1 Mbit/s): load 2.5 asks for
    // 2.5 Mbit/s from a source that sends 2 Mbit/s while ON.
    let text = with_udp("from = \"D1\"\nto = \"S1\"\npacket_size = 1000\nmodel = \"exp-onoff\"\nrate = \"2Mbps\"\nmean_on = \"10ms\"\nload = 2.5");
    let e = run_error(&text);
    assert!(e.starts_with("case.toml: udp[0].load: gives a mean rate of 2500000 bit/s (load x 1000000 bit/s)"), "{e}");
}

#[test]
fn a_udp_source_without_a_path_is_rejected() {
    let e = run_error(&with_udp("name = \"lost\"\nfrom = \"S1\"\nto = \"X2\"\npacket_size = 1000\nmodel = \"cbr\"\nrate = \"1Mbps\""));
    assert_eq!(e, "case.toml: udp: no path between the endpoints of UDP source(s): lost");
}

#[test]
fn udp_names_must_be_unique_and_endpoints_distinct() {
    let one = "name = \"v\"\nfrom = \"S1\"\nto = \"D1\"\npacket_size = 1000\nmodel = \"cbr\"\nrate = \"1Mbps\"";
    let e = error(&with_udp(&format!("{one}\n\n[[udp]]\n{one}")));
    assert_eq!(e, "case.toml: udp[1].name: \"v\" is already the name of udp[0]");
    let e = error(&with_udp("from = \"S1\"\nto = \"S1\"\npacket_size = 1000\nmodel = \"cbr\"\nrate = \"1Mbps\""));
    assert_eq!(e, "case.toml: udp[0].to: must differ from 'from'");
    let e = error(&with_udp("from = \"S1\"\nto = \"Z9\"\npacket_size = 1000\nmodel = \"cbr\"\nrate = \"1Mbps\""));
    assert!(e.starts_with("case.toml: udp[0].to: no node named \"Z9\""), "{e}");
}

#[test]
fn a_udp_stop_before_its_start_is_rejected() {
    let e = error(&with_udp("from = \"S1\"\nto = \"D1\"\npacket_size = 1000\nmodel = \"cbr\"\nrate = \"1Mbps\"\nstart = \"5s\"\nstop = \"2s\""));
    assert_eq!(e, "case.toml: udp[0].stop: must be after start");
    let e = error(&with_udp("from = \"S1\"\nto = \"D1\"\npacket_size = 1000\nmodel = \"cbr\"\nrate = \"1Mbps\"\nstart = \"50s\""));
    assert!(e.starts_with("case.toml: udp[0].start: must be before the end of the run"), "{e}");
}

#[test]
fn udp_must_be_an_array_of_tables() {
    let text = format!("udp = 3\n{NET}\n[[flows]]\nfrom = \"S1\"\nto = \"D1\"\ncc = \"reno\"\n");
    let e = error(&text);
    assert_eq!(e, "case.toml: udp: must be an array, got 3");
}
