//! Topology builders: a few numbers expand into nodes and links (dumbbell, ...).

use super::context::NetBuilder;
use super::links::{add_link, read_link_props, LinkProps};
use super::reader::Obj;
use super::ScenarioError;
use toml::Value;

/// S1..Sn - R1 - R2 - D1..Dn.
pub fn build_dumbbell(db: &Obj, net: &mut NetBuilder) -> Result<(), ScenarioError> {
    db.deny_unknown(&["pairs", "access", "egress", "bottleneck"])?;
    let pairs = db.integer("pairs", 1, 100_000)?.ok_or_else(|| db.err("pairs", "is required"))? as usize;
    let per_pair = |key: &str| -> Result<Vec<LinkProps>, ScenarioError> {
        match db.get(key) {
            None => Ok(Vec::new()),
            Some(Value::Array(items)) => {
                if items.len() != pairs {
                    return Err(db.err(key, format!("has {} entries but pairs = {pairs}", items.len())));
                }
                items
                    .iter()
                    .enumerate()
                    .map(|(i, v)| read_link_props(&Obj::new(db.ctx, v, &db.field_path(&format!("{key}[{i}]")))?, None, &[]))
                    .collect()
            }
            Some(_) => {
                let t = db.table(key)?.expect("present");
                let p = read_link_props(&t, None, &[])?;
                Ok((0..pairs).map(|_| p.clone()).collect())
            }
        }
    };
    let access = per_pair("access")?;
    if access.is_empty() {
        return Err(db.err("access", "is required: the S_i - R1 links"));
    }
    let egress = per_pair("egress")?;
    let bottleneck_t = db.table("bottleneck")?.ok_or_else(|| db.err("bottleneck", "is required: the R1 - R2 link"))?;
    let bottleneck = read_link_props(&bottleneck_t, None, &[])?;
    for (i, p) in access.iter().enumerate() {
        add_link(net, &format!("S{}", i + 1), "R1", p);
    }
    let index = add_link(net, "R1", "R2", &bottleneck);
    net.link_names.insert("bottleneck".to_string(), index);
    for i in 0..pairs {
        let p = egress.get(i).unwrap_or(&access[i]);
        add_link(net, "R2", &format!("D{}", i + 1), p);
    }
    net.dumbbell_pairs = pairs;
    Ok(())
}


/// `[parking_lot]`: a chain of routers R1 - R2 - ... - Rn with hosts attached to chosen
/// routers (the RoVegas paper: Chan et al., "Design and performance evaluation of an improved
/// TCP congestion avoidance scheme", Fig. 3: cross traffic joins and leaves at intermediate
/// routers).
///
/// ```toml
/// [parking_lot]
/// routers = 4
/// router_link = { bandwidth = "1Mbps", delay = "20ms", queue = { limit = 50 } }
/// access = { bandwidth = "2Mbps", delay = "10ms" }      # default for every host link
/// hosts = { S1 = "R1", D1 = "R4", S3 = "R2", D3 = "R1" }
/// ```
pub fn build_parking_lot(pl: &Obj, net: &mut NetBuilder) -> Result<(), ScenarioError> {
    pl.deny_unknown(&["routers", "router_link", "access", "hosts"])?;
    let routers = pl.integer("routers", 2, 10_000)?.ok_or_else(|| pl.err("routers", "is required (at least 2)"))? as usize;
    let rl = pl.table("router_link")?.ok_or_else(|| pl.err("router_link", "is required: the R_i - R_i+1 links"))?;
    let router_link = read_link_props(&rl, None, &[])?;
    let access_t = pl.table("access")?.ok_or_else(|| pl.err("access", "is required: the host - router links"))?;
    let access = read_link_props(&access_t, None, &[])?;
    for i in 1..routers {
        add_link(net, &format!("R{i}"), &format!("R{}", i + 1), &router_link);
    }
    let hosts = pl.table("hosts")?.ok_or_else(|| pl.err("hosts", "is required: host name = router name"))?;
    for (host, router) in hosts.table.iter() {
        let path = format!("hosts.{host}");
        super::reader::check_name(pl, &path, host)?;
        let router = router.as_str().ok_or_else(|| pl.ctx.err(&format!("parking_lot.{path}"), "must be a router name like \"R2\""))?;
        let index: Option<usize> = router.strip_prefix('R').and_then(|n| n.parse().ok());
        if !matches!(index, Some(k) if k >= 1 && k <= routers) {
            return Err(pl.ctx.err(&format!("parking_lot.{path}"), format!("must be one of R1..R{routers}, got \"{router}\"")));
        }
        if host.starts_with('R') && host[1..].parse::<usize>().is_ok() {
            return Err(pl.ctx.err(&format!("parking_lot.{path}"), "host names R<number> are taken by the routers"));
        }
        add_link(net, host, router, &access);
    }
    Ok(())
}

/// `[lte]`: the LTE-like tree of the LTE paper (Abed et al., "Characterization and observation
/// of (transmission control protocol) TCP-Vegas performance with different parameters over
/// (Long term evolution) LTE networks", Fig. 3, Table 1): server - aGW - eNB1..eNBk,
/// each eNB serving `ues_per_enb` UEs (UE1..UEn numbered across eNBs).
///
/// The paper calls the aGW - eNB links "simplex"; TCP's ACKs must still return, so they are
/// modelled as full-duplex links of the same rate (an ns-2 duplex link is two simplex links);
/// the data direction is what the paper constrains. UEs are wired (the paper ignores mobility).
///
/// ```toml
/// [lte]
/// enbs = 2
/// ues_per_enb = 6
/// server_link = { bandwidth = "100Mbps", delay = "2ms" }
/// enb_link = { bandwidth = "5Mbps", delay = "2ms" }
/// ue_link = { bandwidth = "1Mbps", delay = "2ms" }
/// ```
pub fn build_lte(lte: &Obj, net: &mut NetBuilder) -> Result<(), ScenarioError> {
    lte.deny_unknown(&["enbs", "ues_per_enb", "server_link", "enb_link", "ue_link"])?;
    let enbs = lte.integer("enbs", 1, 10_000)?.unwrap_or(2) as usize;
    let ues = lte.integer("ues_per_enb", 1, 100_000)?.unwrap_or(6) as usize;
    if enbs * ues > super::limits::MAX_NODES {
        let message = format!("enbs x ues_per_enb = {} UEs; at most {} nodes are allowed", enbs * ues, super::limits::MAX_NODES);
        return Err(lte.err_kind("ues_per_enb", super::ErrorKind::TooLarge, message));
    }
    let link = |key: &str| -> Result<LinkProps, ScenarioError> {
        let t = lte.table(key)?.ok_or_else(|| lte.err(key, "is required"))?;
        read_link_props(&t, None, &[])
    };
    let (server, enb, ue) = (link("server_link")?, link("enb_link")?, link("ue_link")?);
    let index = add_link(net, "server", "aGW", &server);
    net.link_names.insert("server_link".to_string(), index);
    let mut k = 0;
    for e in 1..=enbs {
        add_link(net, "aGW", &format!("eNB{e}"), &enb);
        for _ in 0..ues {
            k += 1;
            add_link(net, &format!("eNB{e}"), &format!("UE{k}"), &ue);
        }
    }
    Ok(())
}
