//! Bad input gets a clear error naming the file, the field and what is allowed; never a panic.

mod common;

use vegaslab_sim::scenario::parse;

const BASE: &str = common::ONE_LINK;

fn error_of(overrides: &[&str]) -> String {
    common::rejected(BASE, overrides)
}

#[test]
fn the_base_scenario_is_valid() {
    let sc = parse(BASE, "case.toml", &[]).unwrap();
    assert_eq!(sc.flows.len(), 1);
    assert_eq!(sc.duration, 10_000_000_000);
}

#[test]
fn negative_start_names_the_flow_field_and_the_range() {
    assert_eq!(error_of(&["flows[0].start=-3s"]), "case.toml: flows[0].start: must be >= 0 s and <= 10000000 s, got \"-3s\"");
}

#[test]
fn start_after_the_run_ends_is_rejected() {
    let e = error_of(&["flows[0].start=20s"]);
    assert!(e.starts_with("case.toml: flows[0].start: must be before the end of the run"), "{e}");
}

#[test]
fn misspelled_field_suggests_the_right_one() {
    let e = error_of(&["links[0].bandwith=2Mbps"]);
    assert!(e.contains("links[0].bandwith: unknown field (did you mean 'bandwidth'?)"), "{e}");
}

#[test]
fn unknown_algorithm_lists_the_allowed_ones() {
    let e = error_of(&["flows[0].cc=bbr"]);
    assert!(e.starts_with("case.toml: flows[0].cc: unknown congestion control \"bbr\" (allowed: reno, newreno, vegas"), "{e}");
    assert!(e.ends_with("vegas_8, cubic), or a Python controller \"py:package.module:Class\", or a BPF object \"bpf:algo.bpf.o\" or { bpf = \"algo.bpf.o\", ... }"), "{e}");
}

#[test]
fn vegas_beta_below_alpha_is_rejected() {
    let e = error_of(&["flows[0].cc=vegas", "flows[0].params.alpha=5", "flows[0].params.beta=3"]);
    assert_eq!(e, "case.toml: flows[0].params.beta: must be >= alpha (5), got 3");
}

#[test]
fn reno_takes_no_parameters() {
    let e = error_of(&["flows[0].params.alpha=2"]);
    assert!(e.starts_with("case.toml: flows[0].params.alpha: unknown field"), "{e}");
}

#[test]
fn zero_bandwidth_and_bad_units_are_rejected() {
    assert_eq!(error_of(&["links[0].bandwidth=0"]), "case.toml: links[0].bandwidth: must be between 1 bit/s and 10 Tbit/s, got 0");
    let e = error_of(&["links[0].delay=5 parsecs"]);
    assert!(e.starts_with("case.toml: links[0].delay: unknown time unit 'parsecs'"), "{e}");
}

#[test]
fn queue_limit_out_of_range_is_rejected() {
    assert_eq!(
        error_of(&["links[0].queue.limit=0"]),
        "case.toml: links[0].queue.limit: must be between 2 and 100000000, got 0"
    );
}

#[test]
fn flows_between_unknown_nodes_are_rejected() {
    let e = error_of(&["flows[0].to=D9"]);
    assert!(e.starts_with("case.toml: flows[0].to: no node named \"D9\""), "{e}");
}

#[test]
fn file_transfers_need_a_size() {
    assert_eq!(
        error_of(&["flows[0].app=file"]),
        "case.toml: flows[0].file_size: is required with app = \"file\", e.g. \"5MB\" (for a packet count write app = { kind = \"file\", packets = 1000 })"
    );
}

#[test]
fn missing_duration_and_invalid_toml_are_explained() {
    let e = parse("[run]\n", "x.toml", &[]).unwrap_err().to_string();
    assert_eq!(e, "x.toml: run.duration: is required, e.g. duration = \"200s\"");
    let e = parse("[run\n", "x.toml", &[]).unwrap_err().to_string();
    assert!(e.starts_with("x.toml: not valid TOML"), "{e}");
}

#[test]
fn delay_schedule_must_be_in_time_order() {
    let e = error_of(&["links[0].delay_schedule=[{at=\"5s\", delay=\"1ms\"}, {at=\"2s\", delay=\"2ms\"}]"]);
    assert_eq!(e, "case.toml: links[0].delay_schedule[1].at: delay changes must be in time order");
}

#[test]
fn duplicate_flow_names_are_rejected() {
    let text = format!("{BASE}\n[[flows]]\nfrom = \"S1\"\nto = \"D1\"\ncc = \"vegas\"\nname = \"flow0\"\n");
    let e = parse(&text, "case.toml", &[]).unwrap_err().to_string();
    assert_eq!(e, "case.toml: flows[1].name: \"flow0\" is already the name of flows[0]");
}

#[test]
fn monitor_queue_names_must_be_links() {
    let e = error_of(&["monitor.queues=[\"S1->X\"]"]);
    assert!(e.starts_with("case.toml: monitor.queues[0]: no node named \"X\""), "{e}");
}

#[test]
fn rovegas_without_an_aqt_router_on_its_path_is_rejected() {
    let e = vegaslab_sim::run_text(BASE, "case.toml", None, &["flows[0].cc=rovegas".into()], |_, _| true)
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "case.toml: aqt.routers: RoVegas flow(s) flow0 cross no AQT-enabled router; list at least one router on their path"
    );
}

#[test]
fn aqt_routers_must_exist_and_rovegas_option_size_is_bounded() {
    assert!(error_of(&["aqt.routers=[\"R9\"]"]).starts_with("case.toml: aqt.routers[0]: no node named \"R9\""));
    assert_eq!(
        error_of(&["flows[0].cc=rovegas", "flows[0].params.option_bytes=44"]),
        "case.toml: flows[0].params.option_bytes: must be between 0 and 40, got 44"
    );
}

#[test]
fn each_error_says_what_kind_of_mistake_it_is() {
    use vegaslab_sim::ErrorKind;
    let kind = |o: &[&str]| parse(BASE, "case.toml", &o.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap_err().kind;
    assert_eq!(kind(&["flows[0].start=-3s"]), ErrorKind::OutOfRange);
    assert_eq!(kind(&["links[0].bandwith=2Mbps"]), ErrorKind::UnknownField);
    assert_eq!(kind(&["flows[0].start=[1]"]), ErrorKind::WrongType);
    assert_eq!(kind(&["flows[0].to=\"nowhere\""]), ErrorKind::Reference);
    assert_eq!(kind(&["run.duration"]), ErrorKind::Syntax);
    assert_eq!(parse("[run", "case.toml", &[]).unwrap_err().kind, ErrorKind::Syntax);
}

#[test]
fn an_unknown_sender_clock_names_both_choices() {
    assert_eq!(
        error_of(&["run.clock=float"]),
        "case.toml: run.clock: must be \"ns2\" (ns-2's double-precision clock, the default) or \"exact\" (the integer time), got \"float\""
    );
    let e = error_of(&["run.clock=3"]);
    assert!(e.starts_with("case.toml: run.clock: "), "{e}");
}
