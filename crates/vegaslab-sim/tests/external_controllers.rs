//! External controllers (`cc = "py:package.module:Class"`): the scenario schema accepts the
//! name by shape, the normalised scenario records it, a run without a host is refused with one
//! sentence naming the flow's field, and with a host the controllers it builds drive the
//! flows. The host here is a Rust one that builds the registry's own Reno, so a hosted run must
//! equal `cc = "reno"` exactly.

mod common;
use common::*;

use std::sync::Arc;
use vegaslab_cc::controller::CongestionControl;
use vegaslab_cc::external::{ExternalControllers, ExternalSpec};
use vegaslab_cc::{spec, TcpConfig};
use vegaslab_sim::{run_text_with, RunOptions};

/// Builds the registry's Reno for `py:hosted.reno:Reno` and knows no other name.
#[derive(Debug)]
struct RenoHost;

impl ExternalControllers for RenoHost {
    fn check(&self, spec: &ExternalSpec) -> Result<Option<String>, String> {
        if spec.module == "hosted.reno" && spec.class == "Reno" {
            Ok(Some("0123abcd".into()))
        } else {
            Err(format!("no module named \"{}\"", spec.module))
        }
    }

    fn build(&self, _spec: &ExternalSpec, cfg: &TcpConfig) -> Box<dyn CongestionControl> {
        spec("reno", vegaslab_cc::reno::RenoParams::RENO).controller(cfg)
    }
}

/// A lossy single link: a 5-packet queue at 1 Mbps makes Reno lose packets every few seconds.
const LOSSY: &[&str] = &["links[0].queue.limit=5"];

fn run(cc: &str, host: Option<Arc<dyn ExternalControllers>>) -> Result<String, String> {
    let mut overrides = sets(LOSSY);
    overrides.push(format!("flows[0].cc={cc}"));
    let options = RunOptions { controllers: host, ..Default::default() };
    let (results, _) = run_text_with(ONE_LINK, "case.toml", None, &overrides, |_, _| true, &options).map_err(|e| e.to_string())?;
    let mut doc: serde_json::Value = serde_json::from_str(&results.to_json()).unwrap();
    doc["meta"] = serde_json::Value::Null;
    Ok(doc.to_string())
}

#[test]
fn a_python_controller_name_is_accepted_and_recorded_in_the_normalised_scenario() {
    let sc = accepted(ONE_LINK, &["flows[0].cc=py:my_algos.reno2:Reno2", "flows[0].params.recovery=newreno"]);
    assert_eq!(sc.flows[0].algorithm.name(), "py:my_algos.reno2:Reno2");
    let doc: serde_json::Value = serde_json::from_str(&vegaslab_sim::scenario::normalize::to_json(&sc)).unwrap();
    assert_eq!(
        doc["flows"][0]["algorithm"],
        serde_json::json!({"Python": {"module": "my_algos.reno2", "class": "Reno2", "recovery": "newreno"}})
    );
}

#[test]
fn a_hosted_controller_records_the_hash_of_its_code_in_the_normalised_scenario() {
    let mut sc = accepted(ONE_LINK, &["flows[0].cc=py:hosted.reno:Reno"]);
    let host: Arc<dyn ExternalControllers> = Arc::new(RenoHost);
    vegaslab_sim::scenario::bind_external(&mut sc, Some(&host)).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&vegaslab_sim::scenario::normalize::to_json(&sc)).unwrap();
    assert_eq!(doc["flows"][0]["algorithm"]["Python"]["source_sha256"], "0123abcd");
}

#[test]
fn a_malformed_python_controller_name_names_the_flows_cc_field() {
    let err = rejected(ONE_LINK, &["flows[0].cc=py:my_algos.reno2"]);
    assert!(err.starts_with("case.toml: flows[0].cc: "), "{err}");
    assert!(err.contains("expected \"py:package.module:Class\""), "{err}");
}

#[test]
fn an_unknown_recovery_for_a_python_controller_names_its_params_field() {
    let err = rejected(ONE_LINK, &["flows[0].cc=py:a.b:C", "flows[0].params.recovery=vegas"]);
    assert!(err.contains("flows[0].params.recovery"), "{err}");
}

#[test]
fn a_python_controller_without_a_host_is_refused_in_one_sentence() {
    let err = run("py:hosted.reno:Reno", None).unwrap_err();
    assert_eq!(
        err,
        "case.toml: flows[0].cc: \"py:hosted.reno:Reno\" is a Python controller, which only runs from Python \
         (vegaslab.run or the vegaslab command), not here"
    );
    // Building the simulator directly is refused the same way.
    let sc = accepted(ONE_LINK, &["flows[0].cc=py:hosted.reno:Reno"]);
    let err = vegaslab_sim::Simulator::build(sc).err().expect("refused").to_string();
    assert!(err.contains("only runs from Python"), "{err}");
}

#[test]
fn a_name_the_host_cannot_build_is_refused_naming_the_flows_cc_field() {
    let err = run("py:elsewhere:Reno", Some(Arc::new(RenoHost))).unwrap_err();
    assert_eq!(err, "case.toml: flows[0].cc: no module named \"elsewhere\"");
}

#[test]
fn a_hosted_controller_drives_the_flow_as_the_native_one_does() {
    let native = run("reno", None).unwrap();
    let hosted = run("py:hosted.reno:Reno", Some(Arc::new(RenoHost))).unwrap();
    assert!(native.contains("\"dropped_pkts\""), "the comparison needs the flows table");
    assert_eq!(hosted.replace("py:hosted.reno:Reno", "reno"), native);
}
