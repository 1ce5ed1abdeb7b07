//! The crate's module graph (documented in `src/lib.rs`) has no cycle, and the algorithms are
//! its leaves: no sender, no state and no interface module names an algorithm; only the
//! registry (and the sender facade, through the registry's `AlgorithmSpec`) knows them.
//! Read from the sources (code lines, not doc comments), so a new `use crate::...` that
//! closes a cycle fails here.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Module name -> the crate modules it names (`crate::<module>` anywhere in its source).
fn module_graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let modules: BTreeSet<String> = std::fs::read_dir(&src)
        .unwrap()
        .filter_map(|e| {
            let p = e.unwrap().path();
            (p.extension()? == "rs").then(|| p.file_stem().unwrap().to_string_lossy().into_owned())
        })
        .filter(|m| m != "lib")
        .collect();
    let mut graph = BTreeMap::new();
    for m in &modules {
        let source = std::fs::read_to_string(src.join(format!("{m}.rs"))).unwrap();
        // Code only: doc links (`[`crate::tcp_agent`]`) are not dependencies.
        let text: String = source.lines().filter(|l| !l.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n");
        let mut deps = BTreeSet::new();
        for (i, _) in text.match_indices("crate::") {
            let rest = &text[i + "crate::".len()..];
            let mut names: Vec<&str> = Vec::new();
            if let Some(list) = rest.strip_prefix('{') {
                // `use crate::{a, b::C};`
                let end = list.find('}').unwrap_or(list.len());
                names.extend(list[..end].split(',').map(|s| s.trim()));
            } else {
                names.push(rest);
            }
            for n in names {
                let name: String = n.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                if modules.contains(&name) && &name != m {
                    deps.insert(name);
                }
            }
        }
        graph.insert(m.clone(), deps);
    }
    graph
}

/// A cycle through the graph, if any (depth-first search).
fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        n: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        stack: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(pos) = stack.iter().position(|s| s == n) {
            let mut cycle = stack[pos..].to_vec();
            cycle.push(n.to_string());
            return Some(cycle);
        }
        if done.contains(n) {
            return None;
        }
        stack.push(n.to_string());
        for d in &graph[n] {
            if let Some(c) = visit(d, graph, stack, done) {
                return Some(c);
            }
        }
        stack.pop();
        done.insert(n.to_string());
        None
    }
    let mut done = BTreeSet::new();
    graph.keys().find_map(|n| visit(n, graph, &mut Vec::new(), &mut done))
}

/// The algorithm files: what only the registry may name.
const ALGORITHMS: &[&str] = &["reno", "vegas", "vegas_a", "adavegas", "rovegas", "cubic"];

/// The machinery below the algorithms: senders, state, interfaces.
const MACHINERY: &[&str] = &["controller", "params", "config", "state", "rto", "tcp_agent", "vegas_agent", "sender"];

#[test]
fn the_module_graph_has_no_cycle() {
    let graph = module_graph();
    assert!(graph.len() > 10, "read too few modules: {graph:?}");
    if let Some(cycle) = find_cycle(&graph) {
        panic!("import cycle: {}", cycle.join(" -> "));
    }
}

#[test]
fn no_sender_state_or_interface_module_names_an_algorithm() {
    let graph = module_graph();
    for m in MACHINERY {
        let Some(deps) = graph.get(*m) else { continue };
        let named: Vec<&String> = deps.iter().filter(|d| ALGORITHMS.contains(&d.as_str())).collect();
        assert!(named.is_empty(), "{m} names the algorithm module(s) {named:?}; only the registry may");
    }
}

#[test]
fn the_cycle_finder_finds_a_cycle() {
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    g.insert("a".into(), ["b".to_string()].into());
    g.insert("b".into(), ["c".to_string()].into());
    g.insert("c".into(), ["a".to_string()].into());
    assert_eq!(find_cycle(&g), Some(vec!["a".into(), "b".into(), "c".into(), "a".into()]));
    g.get_mut("c").unwrap().clear();
    assert_eq!(find_cycle(&g), None);
}
