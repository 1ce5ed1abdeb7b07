//! TOML value -> validated [`Scenario`]. See `docs/scenario-format.md` for the schema.
//!
//! This file orchestrates: it reads `[run]`, hands the network under construction
//! (`context::NetBuilder`) to each table's reader in turn (topologies, links, flows, monitors,
//! UDP sources, the trace) and makes the checks that span tables (names, totals). The readers
//! share `context`, never this file.

use super::aqt::read_aqt_routers;
use super::context::{NetBuilder, FOREVER};
use super::flows::build_flows;
use super::links::build_links;
use super::object_cache::LoadedObjects;
use super::reader::{Ctx, Obj};
use super::recording::{build_monitor, read_trace};
use super::topologies::{build_dumbbell, build_lte, build_parking_lot};
use super::{ErrorKind, MonitorSpec, Scenario, ScenarioError, SenderClock, TieOrder};
use std::collections::HashMap;
use toml::Value;

/// Validate a parsed TOML document.
pub fn from_value(value: &Value, source: &str) -> Result<Scenario, ScenarioError> {
    let files_read = std::cell::RefCell::new(Vec::new());
    let objects = LoadedObjects::default();
    let ctx = Ctx { file: source, files_read: &files_read, objects: &objects };
    let root = Obj::new(ctx, value, "")?;
    // `sweep` is read by `sweep::expand`; a run of the file is the base scenario, no axis applied.
    root.deny_unknown(&["meta", "variant", "sweep", "run", "links", "dumbbell", "flows", "monitor", "aqt", "parking_lot", "lte", "udp", "geo", "leo", "trace"])?;

    let id = match root.table("meta")? {
        Some(meta) => meta.name("id")?.map(str::to_string),
        None => None,
    }
    .unwrap_or_else(|| file_stem(source));

    let run = root.table("run")?.ok_or_else(|| ctx.err("run", "is required (a [run] table with at least duration)"))?;
    run.deny_unknown(&["duration", "seed", "sample_interval", "clock", "tie_order"])?;
    let duration = run.time("duration", 1, FOREVER)?.ok_or_else(|| run.err("duration", "is required, e.g. duration = \"200s\""))?;
    let seed = run.integer("seed", 0, i64::MAX)?.unwrap_or(1) as u64;
    let sample_interval = run.time("sample_interval", 1, FOREVER)?.unwrap_or(100_000_000);
    let clock = match run.string("clock")?.unwrap_or("ns2") {
        "ns2" => SenderClock::Ns2,
        "exact" => SenderClock::Exact,
        other => return Err(run.err("clock", format!("must be \"ns2\" (ns-2's double-precision clock, the default) or \"exact\" (the integer time), got \"{other}\""))),
    };
    let tie_order = match run.string("tie_order")?.unwrap_or("ns2") {
        "ns2" => TieOrder::Ns2,
        "shuffled" => TieOrder::Shuffled,
        other => return Err(run.err("tie_order", format!("must be \"ns2\" (ties by event, lower channel or flow first; the default) or \"shuffled\" (ties in an order drawn from the seed), got \"{other}\""))),
    };

    let mut net = NetBuilder::default();
    if let Some(db) = root.table("dumbbell")? {
        build_dumbbell(&db, &mut net)?;
    }
    if let Some(pl) = root.table("parking_lot")? {
        build_parking_lot(&pl, &mut net)?;
    }
    if let Some(lte) = root.table("lte")? {
        build_lte(&lte, &mut net)?;
    }
    if let Some(geo) = root.table("geo")? {
        super::satellite::build_geo(&geo, &mut net)?;
    }
    if let Some(leo) = root.table("leo")? {
        super::satellite::build_leo(&leo, &mut net, duration)?;
    }
    if let Some(links) = root.array("links")? {
        if links.len() + net.links.len() > super::limits::MAX_LINKS {
            let message = format!("{} links in all; at most {} are allowed", links.len() + net.links.len(), super::limits::MAX_LINKS);
            return Err(ctx.err_kind("links", ErrorKind::TooLarge, message));
        }
        for (i, lv) in links.iter().enumerate() {
            let link = Obj::new(ctx, lv, &format!("links[{i}]"))?;
            build_links(&link, &mut net)?;
        }
    }
    if net.links.is_empty() {
        return Err(ctx.err("links", "the scenario has no links: give [[links]] or a [dumbbell]"));
    }
    // Builders and [[links]] together (an LTE tree adds a link per eNB to its UEs).
    let (nodes, links) = (net.nodes.len(), net.links.len());
    if nodes > super::limits::MAX_NODES || links > super::limits::MAX_LINKS {
        let message = format!(
            "{nodes} nodes and {links} links in all; at most {} nodes and {} links are allowed",
            super::limits::MAX_NODES,
            super::limits::MAX_LINKS
        );
        return Err(ctx.err_kind("links", ErrorKind::TooLarge, message));
    }

    let mut flows = Vec::new();
    // The entry each flow comes from, for messages (a group's flows share one).
    let mut entry_of = Vec::new();
    let flow_values = root.array("flows")?.ok_or_else(|| ctx.err("flows", "is required: at least one [[flows]] entry"))?;
    for (i, fv) in flow_values.iter().enumerate() {
        let f = Obj::new(ctx, fv, &format!("flows[{i}]"))?;
        build_flows(&f, i, duration, &net, &mut flows)?;
        entry_of.resize(flows.len(), i);
    }
    // Names identify flows in results and in `flows[NAME]` overrides: one flow per name. The
    // message names the entries (not positions in the expanded list) and, for a group, how its
    // names were made.
    let mut seen = HashMap::new();
    for (i, f) in flows.iter().enumerate() {
        if let Some(j) = seen.insert(f.name.clone(), i) {
            let (entry, first) = (entry_of[i], entry_of[j]);
            let grouped = |e: usize| flow_values[e].get("range").or_else(|| flow_values[e].get("pairs")).is_some();
            let how = if grouped(entry) || grouped(first) {
                " (a range or pairs group names its flows by its name with {i} replaced, or the number appended)"
            } else {
                ""
            };
            let whose = if entry == first { "another flow of this entry".to_string() } else { format!("flows[{first}]") };
            let message = format!("\"{}\" is already the name of {whose}{how}", f.name);
            return Err(ctx.err_kind(&format!("flows[{entry}].name"), ErrorKind::Conflict, message));
        }
    }

    let monitor = match root.table("monitor")? {
        Some(m) => build_monitor(&m, &net)?,
        None => MonitorSpec::default(),
    };

    let aqt_routers = match root.table("aqt")? {
        Some(aqt) => read_aqt_routers(&aqt, &net)?,
        None => Vec::new(),
    };

    let udp = super::udp::build_udp(&root, duration, &net)?;
    let trace = match root.table("trace")? {
        Some(t) => Some(read_trace(&t, &net, &flows, &udp)?),
        None => None,
    };
    let changes: usize = net.links.iter().map(|l| 2 * l.down.len()).sum();
    if changes > super::limits::MAX_LINK_CHANGES {
        let message = format!("the links' down intervals make {changes} link changes in all; at most {} are allowed", super::limits::MAX_LINK_CHANGES);
        return Err(ctx.err_kind("links", ErrorKind::TooLarge, message));
    }

    let scenario = Scenario {
        aqt_routers,
        udp,
        source: source.to_string(),
        id,
        duration,
        seed,
        sample_interval,
        clock,
        tie_order,
        nodes: net.nodes,
        links: net.links,
        flows,
        monitor,
        files: files_read.into_inner(),
        trace,
    };
    super::limits::check_recording_size(&scenario)?;
    Ok(scenario)
}

fn file_stem(source: &str) -> String {
    std::path::Path::new(source)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| source.to_string())
}
