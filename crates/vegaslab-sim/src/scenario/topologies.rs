//! Topology builders: a few numbers expand into nodes and links (dumbbell, ...).

use super::build::NetBuilder;
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
                Ok((0..pairs).map(|_| LinkProps { schedule: p.schedule.clone(), queue: p.queue.clone(), ..p }).collect())
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
    add_link(net, "R1", "R2", &bottleneck);
    for i in 0..pairs {
        let p = egress.get(i).unwrap_or(&access[i]);
        add_link(net, "R2", &format!("D{}", i + 1), p);
    }
    net.dumbbell_pairs = pairs;
    Ok(())
}

