//! `vegaslab run` stays light and honest, and its errors help: hints that point at the right
//! field, flow-name patterns that must expand, overrides of one flow of a group by name, RED's
//! average queue in the queue series, and the time a flow spent capped by its receiver window.

mod common;

use vegaslab_sim::scenario::{normalize, normalize::to_value, parse, ErrorKind};
use vegaslab_sim::{units, Simulator};

const BASE: &str = common::ONE_LINK;

fn error_of(overrides: &[&str]) -> String {
    common::rejected(BASE, overrides)
}

// ------------------------------------------------------------------------ error hints

#[test]
fn params_on_an_algorithm_without_params_says_it_takes_none() {
    let e = error_of(&["flows[0].params.alpha=1"]);
    assert!(e.starts_with("case.toml: flows[0].params.alpha: unknown field"), "{e}");
    assert!(e.contains("\"reno\" takes no params"), "{e}");
    assert!(!e.contains("allowed here: "), "an empty list of allowed keys says nothing: {e}");
    let e = error_of(&["flows[0].cc=newreno", "flows[0].params.x=1"]);
    assert!(e.contains("\"newreno\" takes no params"), "{e}");
}

#[test]
fn ns2_and_red_paper_names_of_red_fields_suggest_ours() {
    let red = r#"links[0].queue={ kind = "red", min = 3, max = 10 }"#;
    for (alias, ours) in [("max_th", "max"), ("maxthresh_", "max"), ("thresh_", "min"), ("min_th", "min"), ("q_weight_", "weight"), ("linterm_", "max_p")] {
        let e = error_of(&[red, &format!("links[0].queue.{alias}=5")]);
        assert!(e.contains(&format!("links[0].queue.{alias}: unknown field (did you mean '{ours}'?")), "{alias}: {e}");
        // Still rejected: an alias is a hint, never a second spelling.
        assert!(e.contains("allowed here: kind, limit, min, max"), "{e}");
    }
    // The linear variant has no max_p: linterm_ gets no hint towards a field it cannot take.
    let e = error_of(&[r#"links[0].queue={ kind = "red-linear", min = 3, max = 10 }"#, "links[0].queue.linterm_=5"]);
    assert!(!e.contains("max_p"), "{e}");
}

#[test]
fn an_index_into_a_key_the_scenario_lacks_is_an_unknown_key_not_an_empty_list() {
    let e = parse(BASE, "case.toml", &common::sets(&["flow[0].cc=vegas"])).unwrap_err();
    assert_eq!(e.kind, ErrorKind::UnknownField, "{e}");
    assert_eq!(e.path, "flow[0].cc");
    assert!(e.message.contains("unknown key 'flow'") && e.message.contains("did you mean 'flows'?"), "{e}");
    assert!(!e.message.contains("0 entries"), "{e}");
    // A new table on the way is still made (params of a flow that has none).
    common::accepted(BASE, &["flows[0].cc=vegas", "flows[0].params.alpha=2"]);
}

#[test]
fn an_unknown_bandwidth_unit_lists_every_accepted_spelling_from_the_parsers_table() {
    let e = error_of(&["links[0].bandwidth=10Mb/s"]);
    assert!(e.starts_with("case.toml: links[0].bandwidth: unknown bandwidth unit 'Mb/s'"), "{e}");
    for (spellings, _) in units::BANDWIDTH_UNITS {
        for s in *spellings {
            assert!(e.contains(s), "{s} missing from: {e}");
        }
    }
    assert!(e.contains("did you mean"), "{e}");
    // Every listed spelling is accepted, at its scale.
    for (spellings, scale) in units::BANDWIDTH_UNITS {
        for s in *spellings {
            assert_eq!(units::parse_bandwidth(&format!("2{s}")).unwrap(), 2.0 * scale, "{s}");
        }
    }
    let e = units::parse_size("3 parsecs").unwrap_err();
    assert!(e.contains("accepted: B, bytes, KB"), "{e}");
}

// ------------------------------------------------------------------------ name patterns

const DUMBBELL: &str = r#"
[run]
duration = "2s"
[dumbbell]
pairs = 12
access = { bandwidth = "10Mbps", delay = "1ms" }
bottleneck = { bandwidth = "5Mbps", delay = "10ms" }
[[flows]]
name = "vegas{i}"
range = "1-12"
from = "S{i}"
to = "D{i}"
cc = "vegas"
params = { alpha = 2, beta = 4 }
"#;

#[test]
fn a_placeholder_in_a_single_flow_name_is_rejected_naming_the_field() {
    let e = error_of(&["flows[0].name=vegas{i}"]);
    assert!(e.starts_with("case.toml: flows[0].name: has the placeholder {i}, but this entry is a single flow"), "{e}");
    let e = error_of(&["flows[0].to=D{i}"]);
    assert!(e.starts_with("case.toml: flows[0].to: has the placeholder {i}"), "{e}");
}

#[test]
fn a_placeholder_the_group_does_not_define_is_rejected() {
    let e = common::rejected(DUMBBELL, &["flows[0].name=vegas{j}"]);
    assert!(e.starts_with("case.toml: flows[0].name: has \"{j}\", which the range group does not define"), "{e}");
    let e = common::rejected(DUMBBELL, &["flows[0].name=vegas{i"]);
    assert!(e.starts_with("case.toml: flows[0].name: has \"{\""), "{e}");
}

#[test]
fn a_pairs_group_replaces_the_placeholder_in_its_name() {
    let sc = common::accepted(DUMBBELL, &["flows[0]={ name = \"v{i}-x\", pairs = \"3-4\", cc = \"reno\" }"]);
    let names: Vec<&str> = sc.flows.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["v3-x", "v4-x"]);
}

#[test]
fn duplicate_flow_names_name_the_entries_not_positions_in_the_expanded_list() {
    // The group's vegas12 is flows[0]'s 12th flow; a second entry named vegas12 is flows[1].
    let text = format!("{DUMBBELL}\n[[flows]]\nname = \"vegas12\"\nfrom = \"S1\"\nto = \"D1\"\ncc = \"reno\"\n");
    let e = parse(&text, "case.toml", &[]).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Conflict);
    assert_eq!(e.path, "flows[1].name", "{e}");
    assert!(e.message.starts_with("\"vegas12\" is already the name of flows[0] (a range or pairs group"), "{e}");
}

// ------------------------------------------------------------------------ one flow of a group

fn alpha_of(v: &serde_json::Value, flow: usize) -> f64 {
    v["flows"][flow]["algorithm"]["Vegas"]["alpha"].as_f64().unwrap()
}

#[test]
fn an_override_by_flow_name_changes_that_flow_of_a_group_alone() {
    let plain = to_value(&normalize(DUMBBELL, "case.toml", None, &[]).unwrap());
    let set = to_value(&normalize(DUMBBELL, "case.toml", None, &common::sets(&["flows[vegas7].params.alpha=3", "flows[vegas7].tcp.window=50"])).unwrap());
    for k in 0..12 {
        let name = format!("vegas{}", k + 1);
        assert_eq!(set["flows"][k]["name"], name.as_str(), "order and names are kept");
        if k == 6 {
            assert_eq!(alpha_of(&set, k), 3.0);
            assert_eq!(set["flows"][k]["algorithm"]["Vegas"]["beta"].as_f64(), Some(4.0), "the group's other params stay");
            assert_eq!(set["flows"][k]["tcp"]["window"].as_f64(), Some(50.0));
        } else {
            assert_eq!(set["flows"][k], plain["flows"][k], "{name} must not change");
        }
    }
    // A single flow is set directly by its name.
    let one = to_value(&normalize(BASE, "case.toml", None, &common::sets(&["flows[flow0].start=1s"])).unwrap());
    assert_eq!(one["flows"][0]["start_ns"], 1_000_000_000u64);
}

#[test]
fn an_override_of_an_unknown_flow_name_lists_the_names() {
    let e = parse(DUMBBELL, "case.toml", &common::sets(&["flows[vegas13].params.alpha=3"])).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Reference);
    assert_eq!(e.path, "flows[vegas13].params.alpha");
    assert!(e.message.starts_with("no flow named \"vegas13\" (the scenario's flows: 12 flows: vegas1, vegas2"), "{e}");
    assert!(e.message.contains("..., vegas12)"), "{e}");
}

#[test]
fn a_group_member_override_reports_errors_under_its_members_path() {
    let e = common::rejected(DUMBBELL, &["flows[vegas7].params.alpha=-1"]);
    assert!(e.starts_with("case.toml: flows[0].members.vegas7.params.alpha: must be"), "{e}");
    // Endpoints and names belong to the group.
    let e = common::rejected(DUMBBELL, &["flows[vegas7].from=S2"]);
    assert!(e.starts_with("case.toml: flows[0].members.vegas7.from: belongs to the whole group and cannot differ for one flow; a member may set: cc, start"), "{e}");
    let e = common::rejected(DUMBBELL, &["flows[0].members.vegas99.cc=reno"]);
    assert!(e.starts_with("case.toml: flows[0].members.vegas99: is not a flow of this group (its flows: 12 flows: vegas1"), "{e}");
    let e = error_of(&["flows[0].members.flow0.cc=vegas"]);
    assert!(e.starts_with("case.toml: flows[0].members: applies to a group"), "{e}");
}

// ------------------------------------------------------------------------ RED's average queue

fn red_run(queue: &str, extra: &str) -> serde_json::Value {
    let text = format!(
        r#"
[run]
duration = "20s"
sample_interval = "50ms"
[dumbbell]
pairs = 3
access = {{ bandwidth = "10Mbps", delay = "2ms" }}
bottleneck = {{ bandwidth = "1.5Mbps", delay = "10ms", queue = {queue} }}
[[flows]]
pairs = "1-3"
cc = "reno"
tcp = {{ window = 100 }}
{extra}
"#
    );
    let r = Simulator::build(parse(&text, "t.toml", &[]).unwrap()).expect("a valid scenario").run(|_, _| true);
    let mut v: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
    v["meta"]["wall_time_s"] = serde_json::Value::Null;
    v
}

const RED: &str = r#"{ kind = "red", limit = 40, min = 5, max = 15, weight = 0.02 }"#;

#[test]
fn a_monitored_red_queue_reports_its_average_beside_its_length() {
    let v = red_run(RED, "[monitor]\nqueues = [\"R1->R2\", \"S1->R1\"]");
    let q = &v["series"]["queues"];
    let (names, lengths, avgs) = (q["queue"].as_array().unwrap(), q["length_pkts"].as_array().unwrap(), q["avg_pkts"].as_array().expect("an avg column"));
    assert_eq!(avgs.len(), lengths.len());
    let mut red = Vec::new();
    for ((name, length), avg) in names.iter().zip(lengths).zip(avgs) {
        if name == "R1->R2" {
            let a = avg.as_f64().expect("a RED row has an average");
            assert!((0.0..=40.0).contains(&a), "{a}");
            red.push((length.as_f64().unwrap(), a));
        } else {
            assert!(avg.is_null(), "a DropTail queue has no average: {avg}");
        }
    }
    assert_eq!(red.len(), 400, "one sample per 50 ms");
    // The EWMA follows the queue: over the busy second half their means agree within a third,
    // and it is smoother than the queue (a smaller spread between samples).
    let half = &red[200..];
    let mean = |f: &dyn Fn(&(f64, f64)) -> f64| half.iter().map(f).sum::<f64>() / half.len() as f64;
    let (ml, ma) = (mean(&|s| s.0), mean(&|s| s.1));
    assert!(ma > 1.0 && (ma - ml).abs() < ml / 3.0, "mean length {ml}, mean average {ma}");
    let jumps = |f: &dyn Fn(&(f64, f64)) -> f64| half.windows(2).map(|w| (f(&w[1]) - f(&w[0])).abs()).sum::<f64>();
    assert!(jumps(&|s| s.1) < jumps(&|s| s.0), "the average moves less than the queue");
}

#[test]
fn the_average_column_changes_no_other_result_and_is_absent_without_red() {
    let watched = red_run(RED, "[monitor]\nqueues = [\"R1->R2\"]");
    let unwatched = red_run(RED, "");
    for key in ["flows", "queues", "links"] {
        assert_eq!(watched[key], unwatched[key], "{key}");
    }
    let droptail = red_run(r#"{ kind = "droptail", limit = 40 }"#, "[monitor]\nqueues = [\"R1->R2\"]");
    assert!(droptail["series"]["queues"].get("avg_pkts").is_none(), "no RED queue monitored: no avg column");
    let linear = red_run(r#"{ kind = "red-linear", limit = 40, min = 5, max = 15 }"#, "[monitor]\nqueues = [\"R1->R2\"]");
    assert!(linear["series"]["queues"]["avg_pkts"][100].as_f64().is_some(), "linear RED has an average too");
}

// ------------------------------------------------------------------------ window-limited flows

fn window_run(window: u32, monitor: bool) -> serde_json::Value {
    // A fat, long pipe (10 Mbps, 100 ms RTT: 125 packets in flight) and no loss: Reno's cwnd
    // grows far past a 20-packet window.
    let text = format!(
        r#"
[run]
duration = "20s"
sample_interval = "10ms"
[[links]]
endpoints = ["S", "D"]
bandwidth = "10Mbps"
delay = "50ms"
queue = {{ limit = 1000 }}
[[flows]]
name = "big"
from = "S"
to = "D"
cc = "reno"
start = "1s"
tcp = {{ window = {window} }}
[[flows]]
name = "other"
from = "D"
to = "S"
cc = "vegas"
start = "2s"
tcp = {{ window = 10000 }}
[monitor]
cwnd = {monitor}
"#
    );
    let r = Simulator::build(parse(&text, "t.toml", &[]).unwrap()).expect("a valid scenario").run(|_, _| true);
    serde_json::from_str(&r.to_json()).unwrap()
}

#[test]
fn a_flow_capped_by_its_window_is_reported_with_the_time_and_share() {
    let v = window_run(20, true);
    let limited = v["meta"]["window_limited"].as_array().unwrap();
    assert_eq!(limited.len(), 1, "only the capped flow: {limited:?}");
    let w = &limited[0];
    assert_eq!(w["flow"], "big");
    assert_eq!(w["window"].as_f64(), Some(20.0));
    let (limited_s, share) = (w["limited_s"].as_f64().unwrap(), w["share"].as_f64().unwrap());
    assert!((share - limited_s / 19.0).abs() < 1e-12, "share of the 19 s the flow ran");
    // Independently: the share of 10 ms cwnd samples at or above the window, within a few
    // samples of the time-weighted measure.
    let s = &v["series"]["flows"];
    let (flows, cwnd, time) = (s["flow"].as_array().unwrap(), s["cwnd_pkts"].as_array().unwrap(), s["time_s"].as_array().unwrap());
    let at_cap = (0..flows.len())
        .filter(|&k| flows[k] == "big" && time[k].as_f64().unwrap() > 1.0 && cwnd[k].as_f64().unwrap() >= 20.0)
        .count();
    assert!((at_cap as f64 * 0.01 - limited_s).abs() < 0.05, "{at_cap} samples at the cap vs {limited_s} s");
    assert!(share > 0.8, "{share}");
}

#[test]
fn an_uncapped_run_reports_no_window_limited_flow_and_monitoring_changes_nothing() {
    let v = window_run(10_000, false);
    assert_eq!(v["meta"]["window_limited"], serde_json::json!([]));
    let (a, b) = (window_run(20, false), window_run(20, true));
    assert_eq!(a["meta"]["window_limited"], b["meta"]["window_limited"]);
    assert_eq!(a["flows"], b["flows"]);
}
