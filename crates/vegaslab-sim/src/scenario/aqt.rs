//! `[aqt]`: the routers that add a packet's queueing time to its AQT option (the RoVegas paper: Chan
//! et al., `vegaslab_cc::rovegas`).

use super::context::NetBuilder;
use super::reader::{describe, Obj};
use super::ScenarioError;

/// `[aqt] routers = ["R1", "R2"]`: the AQT-enabled routers (partial deployment allowed).
pub fn read_aqt_routers(aqt: &Obj, net: &NetBuilder) -> Result<Vec<usize>, ScenarioError> {
    aqt.deny_unknown(&["routers"])?;
    let mut out = Vec::new();
    for (i, v) in aqt.array("routers")?.map(|a| a.as_slice()).unwrap_or(&[]).iter().enumerate() {
        let path = format!("routers[{i}]");
        let name = v.as_str().ok_or_else(|| aqt.err(&path, format!("must be a node name, got {}", describe(v))))?;
        out.push(net.find(aqt, &path, name)?);
    }
    Ok(out)
}

