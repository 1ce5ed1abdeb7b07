//! `Simulator::build`, the one way to make a simulator: it makes every check between reading a
//! scenario and running it, in the order its documentation gives, and checks a scenario
//! changed in code after it was read.

mod common;

use vegaslab_sim::scenario::parse;
use vegaslab_sim::{ErrorKind, Scenario, ScenarioError, Simulator};

/// S1 - D1 with a Reno flow, and X1 - X2 with no path to them.
const ISLANDS: &str = r#"
[run]
duration = "10s"

[[links]]
endpoints = ["S1", "D1"]
bandwidth = "1Mbps"
delay = "10ms"

[[links]]
endpoints = ["X1", "X2"]
bandwidth = "1Mbps"
delay = "10ms"

[[flows]]
from = "S1"
to = "D1"
cc = "reno"
"#;

/// A flow to the other island.
const ASTRAY_FLOW: &str = "\n[[flows]]\nname = \"astray\"\nfrom = \"S1\"\nto = \"X1\"\ncc = \"reno\"\n";
/// A UDP source to the other island.
const LOST_UDP: &str = "\n[[udp]]\nname = \"lost\"\nfrom = \"S1\"\nto = \"X2\"\npacket_size = 1000\nmodel = \"cbr\"\nrate = \"1Mbps\"\n";
/// A UDP source asking its 1 Mbit/s path for 2.5 Mbit/s from a 2 Mbit/s ON rate.
const GREEDY_UDP: &str = "\n[[udp]]\nname = \"greedy\"\nfrom = \"D1\"\nto = \"S1\"\npacket_size = 1000\nmodel = \"exp-onoff\"\nrate = \"2Mbps\"\nmean_on = \"10ms\"\nload = 2.5\n";
/// A RoVegas flow with no AQT-enabled router on its path.
const BLIND_ROVEGAS: &str = "\n[[flows]]\nname = \"blind\"\nfrom = \"S1\"\nto = \"D1\"\ncc = \"rovegas\"\n";

fn build(scenario: Scenario) -> Result<Simulator, ScenarioError> {
    Simulator::build(scenario)
}

fn build_error(parts: &[&str]) -> String {
    let text: String = std::iter::once(ISLANDS).chain(parts.iter().copied()).collect();
    build(parse(&text, "case.toml", &[]).expect("the reader accepts it")).err().expect("build refuses it").to_string()
}

#[test]
fn the_route_checks_report_flows_then_udp_paths_then_udp_parameters_then_aqt_routers() {
    let all = [ASTRAY_FLOW, LOST_UDP, GREEDY_UDP, BLIND_ROVEGAS];
    assert_eq!(build_error(&all), "case.toml: flows: no path between the endpoints of: astray");
    assert_eq!(build_error(&all[1..]), "case.toml: udp: no path between the endpoints of UDP source(s): lost");
    let e = build_error(&all[2..]);
    assert!(e.starts_with("case.toml: udp[0].load: gives a mean rate of 2500000 bit/s (load x 1000000 bit/s)"), "{e}");
    assert_eq!(
        build_error(&all[3..]),
        "case.toml: aqt.routers: RoVegas flow(s) blind cross no AQT-enabled router; list at least one router on their path"
    );
    assert!(build(parse(ISLANDS, "case.toml", &[]).unwrap()).is_ok());
}

#[test]
fn run_text_reports_the_error_of_build_unchanged() {
    let text = format!("{ISLANDS}{LOST_UDP}");
    let direct = build(parse(&text, "case.toml", &[]).unwrap()).err().unwrap();
    let through_run = vegaslab_sim::run_text(&text, "case.toml", None, &[], |_, _| true).err().unwrap();
    assert_eq!(direct, through_run);
    assert_eq!(direct.kind, ErrorKind::Reference);
}

#[test]
fn a_scenario_changed_after_reading_is_checked_for_the_memory_its_series_take() {
    let mut sc = parse(common::ONE_LINK, "case.toml", &common::sets(&["monitor.cwnd=true"])).unwrap();
    sc.sample_interval = 1;
    let e = build(sc).err().expect("a 1 ns sample interval over 10 s is refused");
    assert_eq!((e.path.as_str(), e.kind), ("run.sample_interval", ErrorKind::TooLarge));
    assert!(e.message.starts_with("the monitors would record 10000000001 samples"), "{}", e.message);
}

