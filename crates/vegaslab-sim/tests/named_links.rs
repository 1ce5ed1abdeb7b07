//! The links of the built-in topologies set like `[[links]]`' own (`down` and every other
//! link key, by name with `at`), `[[links]]` groups (`range`), one dumbbell pair by number
//! (`pairs = "3"`), and routes between equal-length paths (ns-2's tie rule, `route_ties`).

mod common;

use serde_json::Value;
use vegaslab_sim::scenario::parse;
use vegaslab_sim::Simulator;

/// A two-pair dumbbell running Reno on pair 1, 6 s; `bottleneck_extra` goes into the
/// bottleneck's table, `more` after everything.
fn dumbbell(bottleneck_extra: &str, more: &str) -> String {
    format!(
        r#"
[run]
duration = "6s"
[dumbbell]
pairs = 2
access = {{ bandwidth = "10Mbps", delay = "2ms" }}
bottleneck = {{ bandwidth = "1Mbps", delay = "10ms"{bottleneck_extra} }}
[[flows]]
pairs = "1"
cc = "reno"
{more}
"#
    )
}

/// The dumbbell above written out as `[[links]]`, in the order the builder adds them.
fn dumbbell_as_links(bottleneck_extra: &str) -> String {
    let link = |a: &str, b: &str, props: &str| format!("[[links]]\nendpoints = [\"{a}\", \"{b}\"]\n{props}\n");
    let access = "bandwidth = \"10Mbps\"\ndelay = \"2ms\"";
    let bottleneck = format!("bandwidth = \"1Mbps\"\ndelay = \"10ms\"\n{bottleneck_extra}");
    let mut text = String::from("[run]\nduration = \"6s\"\n");
    text += &link("S1", "R1", access);
    text += &link("S2", "R1", access);
    text += &link("R1", "R2", &bottleneck);
    text += &link("R2", "D1", access);
    text += &link("R2", "D2", access);
    text + "[[flows]]\nname = \"reno1\"\nfrom = \"S1\"\nto = \"D1\"\ncc = \"reno\"\n"
}

/// The normalised scenario, without its id (which follows the file name).
fn normalised(text: &str) -> Value {
    let mut v = serde_json::to_value(common::accepted(text, &[])).unwrap();
    v["id"] = Value::Null;
    v
}

fn run_json(text: &str) -> Value {
    let sim = Simulator::build(parse(text, "t.toml", &[]).unwrap()).expect("a valid scenario");
    serde_json::from_str(&sim.run(|_, _| true).to_json()).unwrap()
}

fn delivered(results: &Value, flow: &str) -> u64 {
    let row = results["flows"].as_array().unwrap().iter().find(|r| r["flow"] == flow).unwrap();
    row["delivered_pkts"].as_u64().or_else(|| row["delivered_pkts"].as_f64().map(|x| x as u64)).unwrap()
}

#[test]
fn a_link_failure_on_a_dumbbells_bottleneck_is_one_key_of_its_table() {
    let failing = dumbbell(r#", down = [["2s", "4s"]]"#, "");
    // The same network written as five [[links]] with `down` on R1 - R2: the same scenario.
    assert_eq!(normalised(&failing), normalised(&dumbbell_as_links(r#"down = [["2s", "4s"]]"#)));
    let sc = common::accepted(&failing, &[]);
    let r1r2 = sc.links.iter().find(|l| sc.nodes[l.a] == "R1" && sc.nodes[l.b] == "R2").unwrap();
    assert_eq!(r1r2.down, vec![(2_000_000_000, 4_000_000_000)]);
    assert!(sc.links.iter().filter(|l| !l.down.is_empty()).count() == 1);
    // Two of six seconds without the only path: far fewer packets arrive.
    let (up, down) = (run_json(&dumbbell("", "")), run_json(&failing));
    assert!(delivered(&down, "reno1") * 10 < delivered(&up, "reno1") * 8, "{} vs {}", delivered(&down, "reno1"), delivered(&up, "reno1"));
}

#[test]
fn at_changes_a_built_link_by_name_or_by_its_nodes_and_keeps_its_other_keys() {
    let by_name = dumbbell("", "[[links]]\nat = \"bottleneck\"\ndown = [[\"2s\", \"4s\"]]\n");
    assert_eq!(normalised(&by_name), normalised(&dumbbell(r#", down = [["2s", "4s"]]"#, "")));
    let by_nodes = dumbbell("", "[[links]]\nat = [\"R2\", \"R1\"]\ndown = [[\"2s\", \"4s\"]]\n");
    assert_eq!(normalised(&by_nodes), normalised(&by_name));
    // One access link of the shared `access` table: its queue and error rate change, its
    // bandwidth and delay stay, the other pair's link is untouched.
    let one = dumbbell("", "[[links]]\nat = [\"S2\", \"R1\"]\nqueue = { limit = 7 }\nerror_rate_forward = 0.01\n");
    let sc = common::accepted(&one, &[]);
    let link = |a: &str| sc.links.iter().find(|l| sc.nodes[l.a] == a).unwrap();
    let (s1, s2) = (link("S1"), link("S2"));
    assert_eq!(s2.forward.bandwidth_bps, 10e6);
    assert_eq!(s2.forward.delay, 2_000_000);
    assert_eq!(s2.forward.error_rate, 0.01);
    assert_eq!(s2.reverse.error_rate, 0.0);
    assert_eq!(serde_json::to_value(&s2.forward.queue).unwrap()["limit"], 7);
    assert_eq!(serde_json::to_value(&s2.reverse.queue).unwrap()["limit"], 7);
    assert_eq!(serde_json::to_value(&s1.forward.queue).unwrap()["limit"], 50);
    assert_eq!(s1.forward.error_rate, 0.0);
}

#[test]
fn at_and_endpoints_mistakes_are_errors_that_say_what_to_write() {
    let e = common::rejected(&dumbbell("", "[[links]]\nat = \"bottlenek\"\ndown = [[\"2s\", \"4s\"]]\n"), &[]);
    assert!(e.contains("links[0].at") && e.contains("no link named \"bottlenek\"") && e.contains("bottleneck"), "{e}");
    let e = common::rejected(&dumbbell("", "[[links]]\nat = [\"S1\", \"S2\"]\ndelay = \"1ms\"\n"), &[]);
    assert!(e.contains("links[0].at") && e.contains("S1 and S2 are not linked"), "{e}");
    let e = common::rejected(&dumbbell("", "[[links]]\nat = [\"S1\", \"X\"]\ndelay = \"1ms\"\n"), &[]);
    assert!(e.contains("links[0].at[1]") && e.contains("no node named \"X\""), "{e}");
    let e = common::rejected(&dumbbell("", "[[links]]\nat = \"bottleneck\"\nendpoints = [\"R1\", \"R2\"]\n"), &[]);
    assert!(e.contains("links[0].at") && e.contains("not both"), "{e}");
    let e = common::rejected(&dumbbell("", "[[links]]\nendpoints = [\"R1\", \"R2\"]\nbandwidth = \"1Mbps\"\ndelay = \"1ms\"\n"), &[]);
    assert!(e.contains("already linked") && e.contains("at = [\"R1\", \"R2\"]"), "{e}");
    let e = common::rejected(&dumbbell(", dwon = []", ""), &[]);
    assert!(e.contains("dumbbell.bottleneck.dwon") && e.contains("did you mean 'down'?"), "{e}");
}

#[test]
fn a_links_range_makes_one_link_per_number_as_written_out() {
    let group = r#"
[run]
duration = "1s"
[[links]]
endpoints = ["S{i}", "R"]
range = "1-3"
bandwidth = "2Mbps"
delay = "3ms"
[[links]]
endpoints = ["R", "D"]
bandwidth = "1Mbps"
delay = "1ms"
[[links]]
at = ["S{i}", "R"]
range = "2"
down = [["0.2s", "0.4s"]]
[[flows]]
from = "S1"
to = "D"
cc = "reno"
"#;
    let mut written = String::from("[run]\nduration = \"1s\"\n");
    for k in 1..=3 {
        let down = if k == 2 { "down = [[\"0.2s\", \"0.4s\"]]\n" } else { "" };
        written += &format!("[[links]]\nendpoints = [\"S{k}\", \"R\"]\nbandwidth = \"2Mbps\"\ndelay = \"3ms\"\n{down}");
    }
    written += "[[links]]\nendpoints = [\"R\", \"D\"]\nbandwidth = \"1Mbps\"\ndelay = \"1ms\"\n[[flows]]\nfrom = \"S1\"\nto = \"D\"\ncc = \"reno\"\n";
    assert_eq!(normalised(group), normalised(&written));
    let e = common::rejected(&group.replace("[\"S{i}\", \"R\"]\nrange = \"1-3\"", "[\"S1\", \"R\"]\nrange = \"1-3\""), &[]);
    assert!(e.contains("links[0].range") && e.contains("needs {i}"), "{e}");
    let e = common::rejected(&group.replace("range = \"1-3\"\n", ""), &[]);
    assert!(e.contains("links[0].endpoints[0]") && e.contains("range"), "{e}");
    let e = common::rejected(&group.replace("range = \"1-3\"", "range = \"1-a\""), &[]);
    assert!(e.contains("links[0].range") && e.contains("first-last"), "{e}");
    let e = common::rejected(&group.replace("range = \"1-3\"", "range = \"1-99999999\""), &[]);
    assert!(e.contains("links[0].range") && e.contains("at most"), "{e}");
}

#[test]
fn pairs_takes_one_pair_by_number_and_a_count_gets_the_fix() {
    let one = dumbbell("", "[[flows]]\npairs = \"2\"\ncc = \"vegas\"\n");
    let sc = common::accepted(&one, &[]);
    let f = sc.flows.iter().find(|f| f.name == "vegas2").unwrap();
    assert_eq!((sc.nodes[f.from].as_str(), sc.nodes[f.to].as_str()), ("S2", "D2"));
    assert_eq!(sc.flows.len(), 2);
    let e = common::rejected(&dumbbell("", "[[flows]]\npairs = 2\ncc = \"vegas\"\n"), &[]);
    assert!(e.contains("flows[1].pairs") && e.contains("pairs = \"1-2\"") && e.contains("pairs = \"2\""), "{e}");
    let e = common::rejected(&dumbbell("", "").replace("pairs = 2", "pairs = \"2\""), &[]);
    assert!(e.contains("dumbbell.pairs") && e.contains("without quotes"), "{e}");
}

/// A diamond S - {A, B} - D whose two paths have equal length: nodes are numbered in the
/// order they are first named, so `first` (named first) has the lower number.
fn diamond(first: &str, second: &str, flip_links: bool) -> String {
    let link = |a: &str, b: &str| format!("[[links]]\nendpoints = [\"{a}\", \"{b}\"]\nbandwidth = \"1Mbps\"\ndelay = \"5ms\"\n");
    let (x, y) = if flip_links { (second, first) } else { (first, second) };
    format!(
        "[run]\nduration = \"1s\"\n[[links]]\nendpoints = [\"{first}\", \"{second}\"]\nbandwidth = \"1Mbps\"\ndelay = \"90ms\"\n{}{}{}{}[[flows]]\nname = \"f\"\nfrom = \"S\"\nto = \"D\"\ncc = \"newreno\"\n",
        link("S", x),
        link("S", y),
        link(x, "D"),
        link(y, "D"),
    )
}

#[test]
fn equal_length_paths_are_chosen_by_node_number_whatever_the_link_order_and_reported() {
    for (first, second) in [("A", "B"), ("B", "A")] {
        for flip in [false, true] {
            let text = diamond(first, second, flip);
            let meta = &run_json(&text)["meta"];
            let ties = meta["route_ties"].as_array().unwrap_or_else(|| panic!("no route_ties in {meta}"));
            assert_eq!(ties.len(), 1, "{meta}");
            assert_eq!(ties[0]["flow"], "f");
            assert_eq!(ties[0]["equal_paths"], 2);
            // ns-2: the destination's lowest-numbered neighbour nearer the source.
            assert_eq!(ties[0]["path"], serde_json::json!(["S", first, "D"]), "{first} named first, links flipped: {flip}");
            assert_eq!(ties[0]["ack_path"], serde_json::json!(["D", first, "S"]));
        }
    }
    // One shortest path: no tie is reported.
    let meta = run_json(&dumbbell("", ""))["meta"].clone();
    assert!(meta.get("route_ties").is_none(), "{meta}");
}

#[test]
fn at_reaches_the_links_of_every_builder() {
    let lte = r#"
[run]
duration = "1s"
[lte]
enbs = 1
ues_per_enb = 2
server_link = { bandwidth = "100Mbps", delay = "2ms" }
enb_link = { bandwidth = "5Mbps", delay = "2ms" }
ue_link = { bandwidth = "1Mbps", delay = "2ms" }
[[links]]
at = "server_link"
down = [["0.2s", "0.3s"]]
[[links]]
at = ["UE2", "eNB1"]
delay = "7ms"
[[flows]]
from = "server"
to = "UE1"
cc = "reno"
"#;
    let sc = common::accepted(lte, &[]);
    let between = |a: &str, b: &str| sc.links.iter().find(|l| sc.nodes[l.a] == a && sc.nodes[l.b] == b).unwrap();
    assert_eq!(between("server", "aGW").down, vec![(200_000_000, 300_000_000)]);
    assert_eq!(between("eNB1", "UE2").forward.delay, 7_000_000);
    assert_eq!(between("eNB1", "UE1").forward.delay, 2_000_000);
    let parking = r#"
[run]
duration = "1s"
[parking_lot]
routers = 3
router_link = { bandwidth = "1Mbps", delay = "20ms" }
access = { bandwidth = "2Mbps", delay = "10ms" }
hosts = { S1 = "R1", D1 = "R3" }
[[links]]
at = ["R2", "R3"]
down = [["0.2s", "0.3s"]]
[[flows]]
from = "S1"
to = "D1"
cc = "reno"
"#;
    let sc = common::accepted(parking, &[]);
    let failing: Vec<(&str, &str)> = sc.links.iter().filter(|l| !l.down.is_empty()).map(|l| (sc.nodes[l.a].as_str(), sc.nodes[l.b].as_str())).collect();
    assert_eq!(failing, vec![("R2", "R3")]);
    let e = common::rejected(&parking.replace("[\"R2\", \"R3\"]", "\"bottleneck\""), &[]);
    assert!(e.contains("no link named \"bottleneck\" (named links: none in this scenario)"), "{e}");
}
