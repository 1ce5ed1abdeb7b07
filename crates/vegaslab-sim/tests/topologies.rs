//! Topology builders expand a few numbers into the right nodes and links; flow ranges expand
//! into one flow per index.

use vegaslab_sim::scenario::{parse, Scenario};

fn links_of(sc: &Scenario) -> Vec<(String, String)> {
    sc.links.iter().map(|l| (sc.nodes[l.a].clone(), sc.nodes[l.b].clone())).collect()
}

const LTE: &str = r#"
[run]
duration = "5s"
[lte]
enbs = 2
ues_per_enb = 6
server_link = { bandwidth = "100Mbps", delay = "2ms" }
enb_link = { bandwidth = "5Mbps", delay = "2ms" }
ue_link = { bandwidth = "1Mbps", delay = "2ms" }
[[flows]]
name = "ue{i}"
from = "server"
to = "UE{i}"
range = "1-12"
cc = "reno"
"#;

#[test]
fn lte_tree_has_a_server_an_agw_two_enbs_and_six_ues_each() {
    let sc = parse(LTE, "lte.toml", &[]).unwrap();
    assert_eq!(sc.nodes.len(), 1 + 1 + 2 + 12);
    let links = links_of(&sc);
    assert_eq!(links.len(), 1 + 2 + 12);
    assert!(links.contains(&("server".into(), "aGW".into())));
    assert!(links.contains(&("aGW".into(), "eNB2".into())));
    // UEs 1-6 hang off eNB1, 7-12 off eNB2.
    assert!(links.contains(&("eNB1".into(), "UE6".into())));
    assert!(links.contains(&("eNB2".into(), "UE7".into())));
    let enb_link = &sc.links[1];
    assert_eq!(enb_link.forward.bandwidth_bps, 5e6);
}

#[test]
fn a_flow_range_expands_into_one_named_flow_per_index() {
    let sc = parse(LTE, "lte.toml", &[]).unwrap();
    let names: Vec<&str> = sc.flows.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names.len(), 12);
    assert_eq!(names[0], "ue1");
    assert_eq!(names[11], "ue12");
    assert_eq!(sc.nodes[sc.flows[11].to], "UE12");
}

#[test]
fn a_flow_range_without_a_placeholder_is_rejected() {
    let e = parse(LTE, "lte.toml", &["flows[0].to=UE1".into()]).unwrap_err().to_string();
    assert_eq!(e, "lte.toml: flows[0].range: needs {i} in from or to, e.g. to = \"UE{i}\"");
}

const PARKING: &str = r#"
[run]
duration = "5s"
[parking_lot]
routers = 4
router_link = { bandwidth = "1Mbps", delay = "20ms" }
access = { bandwidth = "2Mbps", delay = "10ms" }
hosts = { S1 = "R1", D1 = "R4", S3 = "R2", D3 = "R1" }
[[flows]]
from = "S1"
to = "D1"
cc = "vegas"
"#;

#[test]
fn parking_lot_chains_routers_and_attaches_hosts_where_asked() {
    let sc = parse(PARKING, "pl.toml", &[]).unwrap();
    let links = links_of(&sc);
    for l in [("R1", "R2"), ("R2", "R3"), ("R3", "R4"), ("S1", "R1"), ("D1", "R4"), ("S3", "R2"), ("D3", "R1")] {
        assert!(links.contains(&(l.0.to_string(), l.1.to_string())), "missing {l:?}");
    }
    assert_eq!(links.len(), 3 + 4);
}

#[test]
fn parking_lot_hosts_must_name_existing_routers() {
    let e = parse(PARKING, "pl.toml", &["parking_lot.hosts.S9=\"R7\"".into()]).unwrap_err().to_string();
    assert_eq!(e, "pl.toml: parking_lot.hosts.S9: must be one of R1..R4, got \"R7\"");
}

#[test]
fn a_parking_lot_flow_crosses_every_router() {
    let r = vegaslab_sim::run_text(PARKING, "pl.toml", None, &[], |_, _| true).unwrap();
    let hops: Vec<&str> = r.queues.iter().filter(|q| q.arrived_pkts > 0).map(|q| q.queue.as_str()).collect();
    for q in ["S1->R1", "R1->R2", "R2->R3", "R3->R4", "R4->D1", "D1->R4", "R4->R3", "R3->R2", "R2->R1", "R1->S1"] {
        assert!(hops.contains(&q), "no traffic on {q}: {hops:?}");
    }
}
