//! The module import graph of a Rust crate, read from its sources, and the cycles in it: a
//! development check run over every workspace crate by `tests/workspace.rs`.
//!
//! What the graph is:
//! - A module is a file: `foo.rs` and `foo/mod.rs` are module `foo`, `lib.rs` and `main.rs`
//!   the crate root (`crate`). An inline module (`mod tests { ... }`) belongs to its file, but
//!   paths inside it are resolved from it (its `super` is the file's module).
//! - An edge `a -> b` for every path in `a`'s code that names `b`: each leaf of a `use`
//!   declaration and each qualified path in code, whether it starts at `crate`, `super` or
//!   `self` (`crate::event::MAX_INDEX`, `super::limits::MAX_LINKS`), at a child module
//!   (`precheck::precheck(..)` in `scenario/mod.rs`) or at a name a `use` bound to a module
//!   (`routing::Router::new` after `use super::routing`). A path names the longest prefix of
//!   it that is a module file: an item a parent re-exports (`pub use reader::edit_distance`)
//!   is named in the parent, and the parent's `pub use` is its edge to the child. Comments (doc
//!   links included), string and character literals, `mod` declarations and paths into other
//!   crates are not edges.
//!
//! The rule: an edge from a module to one of its ancestors is left out of the cycle check. A
//! child naming its parent's items is how Rust modules are built (`sim/hops.rs` uses
//! `Simulator` from `sim/mod.rs`), and the parent names its children in turn, so with those
//! edges every parent and child would be a cycle. Every other edge takes part: between
//! siblings, cousins, unrelated modules, and from a parent to its children, so that a cycle
//! through a re-export (`units` -> `scenario` -> `scenario::reader` -> `units`) is found. A
//! cycle among these edges is an error. Moving a shared piece into the common parent would pass
//! the check; the convention (docs/decisions.md) is a module of its own that both sides use.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::io;
use std::path::{Path, PathBuf};

/// A module's path from its crate root (empty: the root).
pub type Module = Vec<String>;

/// One source file of a crate.
#[derive(Clone, Debug)]
pub struct SourceFile {
    /// Path from the crate's root directory (`lib.rs`, `scenario/build.rs`, `sim/mod.rs`).
    pub rel: String,
    /// How messages name it (`crates/vegaslab-sim/src/scenario/build.rs`).
    pub shown: String,
    pub text: String,
}

/// A crate: the library (or a binary) and its files.
#[derive(Clone, Debug)]
pub struct Crate {
    /// How messages name it (`crates/vegaslab-sim/src`, `crates/vegaslab-sim/src/bin/x.rs`).
    pub name: String,
    pub files: Vec<SourceFile>,
}

/// Where an edge was seen first: file, line and the path as resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Evidence {
    pub file: String,
    pub line: usize,
    pub path: String,
}

/// A crate's module graph: every module file, and per module the modules it names.
#[derive(Clone, Debug, Default)]
pub struct Graph {
    pub modules: BTreeSet<Module>,
    pub edges: BTreeMap<Module, BTreeMap<Module, Evidence>>,
}

/// `scenario::build`, or `crate` for the root.
pub fn module_name(m: &[String]) -> String {
    if m.is_empty() {
        "crate".to_string()
    } else {
        m.join("::")
    }
}

/// The module a file is, from its path under the crate's root directory; `None` for a file
/// that is not Rust.
pub fn module_of(rel: &str) -> Option<Module> {
    let stem = rel.strip_suffix(".rs")?;
    let mut parts: Vec<String> = stem.split('/').map(str::to_string).collect();
    let last = parts.pop()?;
    match last.as_str() {
        "mod" => {}
        "lib" | "main" if parts.is_empty() => {}
        _ => parts.push(last),
    }
    Some(parts)
}

/// Whether `b` is `a` or one of its ancestors.
fn upward(a: &[String], b: &[String]) -> bool {
    a.starts_with(b)
}

/// The crates whose sources are under `src`: the library (or binary) rooted at `lib.rs` or
/// `main.rs` with every file outside `bin/`, and one crate per binary in `bin/` (`bin/x.rs`,
/// or `bin/x/main.rs` with its modules).
pub fn read_crates(src: &Path, shown: &str) -> io::Result<Vec<Crate>> {
    let mut files = Vec::new();
    walk(src, src, &mut files)?;
    files.sort();
    let mut main = Crate { name: shown.to_string(), files: Vec::new() };
    let mut bins: BTreeMap<String, Crate> = BTreeMap::new();
    for rel in files {
        let text = std::fs::read_to_string(src.join(&rel))?;
        let shown_file = format!("{shown}/{rel}");
        if let Some(in_bin) = rel.strip_prefix("bin/") {
            let (bin, inner) = match in_bin.split_once('/') {
                Some((dir, inner)) => (dir.to_string(), inner.to_string()),
                None => (in_bin.to_string(), "main.rs".to_string()),
            };
            let name = format!("{shown}/bin/{bin}");
            let krate = bins.entry(bin).or_insert_with(|| Crate { name, files: Vec::new() });
            krate.files.push(SourceFile { rel: inner, shown: shown_file, text });
        } else {
            main.files.push(SourceFile { rel, shown: shown_file, text });
        }
    }
    let mut out = vec![main];
    out.extend(bins.into_values());
    Ok(out)
}

fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) -> io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path: PathBuf = entry?.path();
        if path.is_dir() {
            walk(root, &path, out)?;
        } else if path.extension().is_some_and(|e| e == "rs") {
            let rel = path.strip_prefix(root).expect("under the root").to_string_lossy().replace('\\', "/");
            out.push(rel);
        }
    }
    Ok(())
}

/// The source with comments, string literals and character literals blanked (line breaks
/// kept, so lines still count): what is left is code.
pub fn strip(text: &str) -> String {
    let c: Vec<char> = text.chars().collect();
    let ident = |ch: char| ch.is_alphanumeric() || ch == '_';
    let after_ident = |k: usize| k > 0 && ident(c[k - 1]);
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < c.len() {
        let ch = c[i];
        let next = c.get(i + 1).copied();
        if ch == '/' && next == Some('/') {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
            continue;
        }
        if ch == '/' && next == Some('*') {
            // Block comments nest in Rust.
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    if c[i] == '\n' {
                        out.push('\n');
                    }
                    i += 1;
                }
            }
            out.push(' ');
            continue;
        }
        // Raw strings: r"...", r#"..."#, br"...".
        if !after_ident(i) && (ch == 'r' || (ch == 'b' && next == Some('r'))) {
            let start = if ch == 'b' { i + 2 } else { i + 1 };
            let mut j = start;
            while j < c.len() && c[j] == '#' {
                j += 1;
            }
            if j < c.len() && c[j] == '"' {
                let hashes = j - start;
                let mut k = j + 1;
                while k < c.len() {
                    if c[k] == '"' && (0..hashes).all(|h| c.get(k + 1 + h) == Some(&'#')) {
                        k += 1 + hashes;
                        break;
                    }
                    if c[k] == '\n' {
                        out.push('\n');
                    }
                    k += 1;
                }
                out.push_str("\"\"");
                i = k;
                continue;
            }
        }
        if ch == '"' {
            let mut k = i + 1;
            while k < c.len() && c[k] != '"' {
                if c[k] == '\\' {
                    k += 1;
                }
                if c.get(k) == Some(&'\n') {
                    out.push('\n');
                }
                k += 1;
            }
            out.push_str("\"\"");
            i = k + 1;
            continue;
        }
        if ch == '\'' {
            // A character literal ('x', '\n', '\u{..}'), else a lifetime or a label.
            if next == Some('\\') {
                let mut k = i + 3;
                while k < c.len() && c[k] != '\'' {
                    k += 1;
                }
                out.push_str("' '");
                i = k + 1;
                continue;
            }
            if c.get(i + 2) == Some(&'\'') {
                out.push_str("' '");
                i += 3;
                continue;
            }
        }
        out.push(ch);
        i += 1;
    }
    out
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Ident(String),
    PathSep,
    Open,
    Close,
    Semi,
    Comma,
    Star,
    Other(char),
}

fn tokens(code: &str) -> Vec<(Tok, usize)> {
    let c: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let (mut i, mut line) = (0, 1);
    while i < c.len() {
        let ch = c[i];
        if ch == '\n' {
            line += 1;
            i += 1;
        } else if ch.is_whitespace() {
            i += 1;
        } else if ch.is_alphanumeric() || ch == '_' {
            let start = i;
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
            out.push((Tok::Ident(c[start..i].iter().collect()), line));
        } else if ch == ':' && c.get(i + 1) == Some(&':') {
            out.push((Tok::PathSep, line));
            i += 2;
        } else {
            let t = match ch {
                '{' => Tok::Open,
                '}' => Tok::Close,
                ';' => Tok::Semi,
                ',' => Tok::Comma,
                '*' => Tok::Star,
                other => Tok::Other(other),
            };
            out.push((t, line));
            i += 1;
        }
    }
    out
}

fn ident(toks: &[(Tok, usize)], i: usize) -> Option<&str> {
    match toks.get(i) {
        Some((Tok::Ident(s), _)) => Some(s),
        _ => None,
    }
}

fn is(toks: &[(Tok, usize)], i: usize, t: &Tok) -> bool {
    toks.get(i).is_some_and(|(x, _)| x == t)
}

/// The paths of a `use` tree starting at `i` (after `use`), each with the name it binds
/// (`None` for a glob); returns the index after the tree.
fn use_tree(toks: &[(Tok, usize)], mut i: usize, prefix: &[String], out: &mut Vec<(Vec<String>, Option<String>)>) -> usize {
    let mut path = prefix.to_vec();
    loop {
        match toks.get(i).map(|t| &t.0) {
            Some(Tok::PathSep) => i += 1,
            Some(Tok::Ident(s)) => {
                path.push(s.clone());
                i += 1;
                if is(toks, i, &Tok::PathSep) {
                    i += 1;
                    continue;
                }
                let mut binds = if s == "self" { prefix.last().cloned() } else { Some(s.clone()) };
                if ident(toks, i) == Some("as") {
                    binds = ident(toks, i + 1).map(str::to_string).filter(|a| a != "_");
                    i += 2;
                }
                out.push((path, binds));
                return i;
            }
            Some(Tok::Open) => {
                i += 1;
                while i < toks.len() && !is(toks, i, &Tok::Close) {
                    let before = i;
                    i = use_tree(toks, i, &path, out);
                    // Past the comma, or past a token the tree did not take (no endless loop).
                    if is(toks, i, &Tok::Comma) || i == before {
                        i += 1;
                    }
                }
                return i + 1;
            }
            Some(Tok::Star) => {
                out.push((path, None));
                return i + 1;
            }
            _ => return i,
        }
    }
}

/// `path` (as written, from inside module `at`) as a path from the crate root, if it is one:
/// it starts at `crate`, `super` or `self`, at a name in `bound` (a `use` bound it to a path of
/// this crate) or at a child module of `at`. `None` for other crates, for items in scope and
/// for `super` above the root.
fn absolute(at: &[String], path: &[String], bound: &BTreeMap<String, Vec<String>>, modules: &BTreeSet<Module>) -> Option<Vec<String>> {
    let first = path.first()?;
    let (mut base, mut rest) = match first.as_str() {
        "crate" => (Vec::new(), &path[1..]),
        "self" => (at.to_vec(), &path[1..]),
        "super" => (at.to_vec(), path),
        _ => match bound.get(first) {
            Some(b) => (b.clone(), &path[1..]),
            None => {
                let mut child = at.to_vec();
                child.push(first.clone());
                if !modules.contains(&child) {
                    return None;
                }
                (child, &path[1..])
            }
        },
    };
    while rest.first().is_some_and(|s| s == "super") {
        base.pop()?;
        rest = &rest[1..];
    }
    base.extend(rest.iter().filter(|s| *s != "self").cloned());
    Some(base)
}

/// The crate's module graph.
pub fn graph(krate: &Crate) -> Graph {
    let mut g = Graph::default();
    let files: Vec<(Module, &SourceFile)> = krate.files.iter().filter_map(|f| Some((module_of(&f.rel)?, f))).collect();
    g.modules = files.iter().map(|(m, _)| m.clone()).collect();
    g.modules.insert(Vec::new());
    for (module, file) in &files {
        let toks = tokens(&strip(&file.text));
        let mut edges = BTreeMap::new();
        let found = |abs: Vec<String>, line: usize, edges: &mut BTreeMap<Module, Evidence>| {
            let target = (0..=abs.len()).rev().map(|n| abs[..n].to_vec()).find(|p| g.modules.contains(p)).unwrap_or_default();
            if target != *module {
                let path = format!("crate::{}", abs.join("::"));
                edges.entry(target).or_insert(Evidence { file: file.shown.clone(), line, path });
            }
        };
        // Names bound by `use` to crate paths (`use super::routing;` binds `routing`), for the
        // paths in code that start with them. Per file: an approximation of Rust's scopes.
        let mut bound: BTreeMap<String, Vec<String>> = BTreeMap::new();
        // Inline modules open at the moment: (name, brace depth inside them).
        let mut inline: Vec<(String, usize)> = Vec::new();
        let mut pending_mod: Option<String> = None;
        let mut depth = 0usize;
        let at = |inline: &[(String, usize)]| -> Vec<String> {
            let mut m = module.clone();
            m.extend(inline.iter().map(|(n, _)| n.clone()));
            m
        };
        let mut i = 0;
        while i < toks.len() {
            let (tok, line) = (&toks[i].0, toks[i].1);
            match tok {
                Tok::Open => {
                    depth += 1;
                    if let Some(name) = pending_mod.take() {
                        inline.push((name, depth));
                    }
                }
                Tok::Close => {
                    if inline.last().is_some_and(|(_, d)| *d == depth) {
                        inline.pop();
                    }
                    depth = depth.saturating_sub(1);
                }
                Tok::Ident(s) if s == "mod" => {
                    if let Some(name) = ident(&toks, i + 1) {
                        if is(&toks, i + 2, &Tok::Open) {
                            pending_mod = Some(name.to_string());
                        }
                        i += 1;
                    }
                }
                Tok::Ident(s) if s == "use" => {
                    let mut paths = Vec::new();
                    let end = use_tree(&toks, i + 1, &[], &mut paths);
                    let here = at(&inline);
                    for (path, binds) in paths {
                        if let Some(abs) = absolute(&here, &path, &bound, &g.modules) {
                            if let Some(name) = binds {
                                bound.insert(name, abs.clone());
                            }
                            found(abs, line, &mut edges);
                        }
                    }
                    i = end;
                    continue;
                }
                Tok::Ident(s) if is(&toks, i + 1, &Tok::PathSep) && i.checked_sub(1).is_none_or(|p| !matches!(toks[p].0, Tok::PathSep | Tok::Other('$'))) => {
                    let mut path = vec![s.clone()];
                    let mut j = i + 1;
                    while is(&toks, j, &Tok::PathSep) {
                        match ident(&toks, j + 1) {
                            Some(seg) => path.push(seg.to_string()),
                            None => break,
                        }
                        j += 2;
                    }
                    if let Some(abs) = absolute(&at(&inline), &path, &bound, &g.modules) {
                        found(abs, line, &mut edges);
                    }
                    i = j;
                    continue;
                }
                _ => {}
            }
            i += 1;
        }
        g.edges.entry(module.clone()).or_default().extend(edges);
    }
    g
}

/// The graph's edges that take part in the cycle check: all but those to an ancestor.
pub fn checked_edges(g: &Graph) -> BTreeMap<Module, BTreeSet<Module>> {
    g.modules
        .iter()
        .map(|m| {
            let to = g.edges.get(m).map(|e| e.keys().filter(|t| !upward(m, t)).cloned().collect()).unwrap_or_default();
            (m.clone(), to)
        })
        .collect()
}

/// One cycle per strongly connected group of modules (Tarjan), each as a chain that starts
/// and ends at the group's first module: `[a, b, c, a]`.
pub fn cycles(g: &Graph) -> Vec<Vec<Module>> {
    knots(g).into_iter().map(|(_, cycle)| cycle).collect()
}

/// Each strongly connected group of modules (every module in it reaches every other), in
/// order, with its shortest cycle through its first module.
pub fn knots(g: &Graph) -> Vec<(Vec<Module>, Vec<Module>)> {
    let edges = checked_edges(g);
    let nodes: Vec<&Module> = edges.keys().collect();
    let index_of: BTreeMap<&Module, usize> = nodes.iter().enumerate().map(|(i, m)| (*m, i)).collect();
    let adj: Vec<Vec<usize>> = nodes.iter().map(|m| edges[*m].iter().map(|t| index_of[t]).collect()).collect();
    let groups = strongly_connected(&adj);
    let mut out = Vec::new();
    for group in groups.into_iter().filter(|g| g.len() > 1) {
        let members: BTreeSet<usize> = group.iter().copied().collect();
        let start = *members.iter().next().expect("a non-empty group");
        // Shortest way round from `start` back to it, inside the group.
        let mut came_from: BTreeMap<usize, usize> = BTreeMap::new();
        let mut queue = VecDeque::from([start]);
        let mut last = None;
        'search: while let Some(n) = queue.pop_front() {
            for &t in &adj[n] {
                if !members.contains(&t) {
                    continue;
                }
                if t == start {
                    last = Some(n);
                    break 'search;
                }
                if let std::collections::btree_map::Entry::Vacant(e) = came_from.entry(t) {
                    e.insert(n);
                    queue.push_back(t);
                }
            }
        }
        let mut chain = vec![start];
        let mut n = last.expect("a strongly connected group has a cycle through each member");
        while n != start {
            chain.push(n);
            n = came_from[&n];
        }
        chain.push(start);
        chain.reverse();
        let knot = members.iter().map(|&i| nodes[i].clone()).collect();
        out.push((knot, chain.into_iter().map(|i| nodes[i].clone()).collect()));
    }
    out
}

fn strongly_connected(adj: &[Vec<usize>]) -> Vec<Vec<usize>> {
    struct State<'a> {
        adj: &'a [Vec<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        groups: Vec<Vec<usize>>,
    }
    fn visit(s: &mut State, v: usize) {
        s.index[v] = Some(s.next);
        s.low[v] = s.next;
        s.next += 1;
        s.stack.push(v);
        s.on_stack[v] = true;
        let adj = s.adj;
        for &w in &adj[v] {
            match s.index[w] {
                None => {
                    visit(s, w);
                    s.low[v] = s.low[v].min(s.low[w]);
                }
                Some(iw) if s.on_stack[w] => s.low[v] = s.low[v].min(iw),
                Some(_) => {}
            }
        }
        if Some(s.low[v]) == s.index[v] {
            let mut group = Vec::new();
            loop {
                let w = s.stack.pop().expect("v is on the stack");
                s.on_stack[w] = false;
                group.push(w);
                if w == v {
                    break;
                }
            }
            s.groups.push(group);
        }
    }
    let n = adj.len();
    let mut s = State { adj, index: vec![None; n], low: vec![0; n], on_stack: vec![false; n], stack: Vec::new(), next: 0, groups: Vec::new() };
    for v in 0..n {
        if s.index[v].is_none() {
            visit(&mut s, v);
        }
    }
    s.groups
}

/// A cycle as a chain of module names, then where each of its edges is.
pub fn describe(g: &Graph, cycle: &[Module]) -> String {
    let chain: Vec<String> = cycle.iter().map(|m| module_name(m)).collect();
    let mut text = chain.join(" -> ");
    for pair in cycle.windows(2) {
        let e = &g.edges[&pair[0]][&pair[1]];
        text.push_str(&format!("\n    {} -> {}: {}:{} `{}`", module_name(&pair[0]), module_name(&pair[1]), e.file, e.line, e.path));
    }
    text
}

/// Every cycle of the crate's graph, described (empty: none): one per knot, with the knot's
/// other modules when the cycle does not pass them all.
pub fn check(krate: &Crate) -> Vec<String> {
    let g = graph(krate);
    knots(&g)
        .iter()
        .map(|(knot, cycle)| {
            let mut text = format!("import cycle in {}: {}", krate.name, describe(&g, cycle));
            if knot.len() + 1 > cycle.len() {
                let names: Vec<String> = knot.iter().map(|m| module_name(m)).collect();
                text.push_str(&format!("\n    the {} modules that reach each other: {}", knot.len(), names.join(", ")));
            }
            text
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn krate(files: &[(&str, &str)]) -> Crate {
        Crate {
            name: "t/src".into(),
            files: files.iter().map(|(rel, text)| SourceFile { rel: rel.to_string(), shown: format!("t/src/{rel}"), text: text.to_string() }).collect(),
        }
    }

    fn m(name: &str) -> Module {
        if name == "crate" {
            Vec::new()
        } else {
            name.split("::").map(str::to_string).collect()
        }
    }

    fn targets(g: &Graph, from: &str) -> Vec<String> {
        g.edges.get(&m(from)).map(|e| e.keys().map(|t| module_name(t)).collect()).unwrap_or_default()
    }

    #[test]
    fn files_are_modules_with_mod_rs_and_foo_rs_alike() {
        assert_eq!(module_of("lib.rs"), Some(m("crate")));
        assert_eq!(module_of("sim/mod.rs"), Some(m("sim")));
        assert_eq!(module_of("sim.rs"), Some(m("sim")));
        assert_eq!(module_of("sim/routing/table.rs"), Some(m("sim::routing::table")));
        assert_eq!(module_of("notes.txt"), None);
    }

    #[test]
    fn a_planted_sibling_cycle_is_reported_as_a_chain_with_its_lines() {
        let k = krate(&[
            ("lib.rs", "mod scenario;\n"),
            ("scenario/mod.rs", "mod build;\nmod links;\n"),
            ("scenario/build.rs", "use super::links::build_link;\npub struct NetBuilder;\n"),
            ("scenario/links.rs", "//! Links.\n\nuse super::build::NetBuilder;\n"),
        ]);
        let found = check(&k);
        assert_eq!(
            found,
            vec!["import cycle in t/src: scenario::build -> scenario::links -> scenario::build\n    \
                  scenario::build -> scenario::links: t/src/scenario/build.rs:1 `crate::scenario::links::build_link`\n    \
                  scenario::links -> scenario::build: t/src/scenario/links.rs:3 `crate::scenario::build::NetBuilder`"
                .to_string()]
        );
    }

    #[test]
    fn a_cycle_between_unrelated_modules_through_qualified_paths_is_reported() {
        let k = krate(&[
            ("sim/hops.rs", "fn f() { let x = crate::scenario::limits::MAX; }\n"),
            ("scenario/limits.rs", "use crate::event;\nfn g() { event::Queue::new(); }\n"),
            ("event.rs", "fn h() -> u32 { super::sim::hops::X }\n"),
        ]);
        let g = graph(&k);
        assert_eq!(cycles(&g), vec![vec![m("event"), m("sim::hops"), m("scenario::limits"), m("event")]]);
    }

    #[test]
    fn a_child_and_its_parent_naming_each_other_is_no_cycle() {
        let k = krate(&[
            ("sim/mod.rs", "mod hops;\nuse hops::Hop;\npub(crate) use self::hops::f;\npub struct Simulator;\n"),
            ("sim/hops.rs", "use super::Simulator;\nuse crate::sim::Simulator as S;\n"),
            ("lib.rs", "pub use sim::Simulator;\nfn f() { crate::sim::hops::f(); }\n"),
        ]);
        let g = graph(&k);
        assert_eq!(targets(&g, "sim::hops"), vec!["sim"]);
        assert_eq!(targets(&g, "sim"), vec!["sim::hops"]);
        assert!(cycles(&g).is_empty());
    }

    #[test]
    fn siblings_meeting_only_in_their_parent_are_no_cycle() {
        let k = krate(&[
            ("sim/mod.rs", "pub struct Simulator;\nfn f() { build::g(); hops::h(); }\n"),
            ("sim/build.rs", "use super::Simulator;\n"),
            ("sim/hops.rs", "use super::{Simulator, build::Built};\n"),
        ]);
        let g = graph(&k);
        assert_eq!(targets(&g, "sim::hops"), vec!["sim", "sim::build"]);
        assert!(cycles(&g).is_empty());
    }

    #[test]
    fn a_cycle_through_a_parents_re_export_is_reported() {
        let k = krate(&[
            ("lib.rs", "mod scenario;\nmod units;\n"),
            ("units.rs", "fn f() { crate::scenario::edit_distance(a, b); }\n"),
            ("scenario/mod.rs", "mod reader;\npub(crate) use reader::edit_distance;\npub struct Scenario;\n"),
            ("scenario/reader.rs", "use crate::units;\nuse super::Scenario;\npub fn edit_distance() {}\n"),
        ]);
        let g = graph(&k);
        assert_eq!(targets(&g, "scenario"), vec!["scenario::reader"]);
        assert_eq!(cycles(&g), vec![vec![m("scenario"), m("scenario::reader"), m("units"), m("scenario")]]);
    }

    #[test]
    fn comments_doc_links_strings_and_characters_are_not_edges() {
        let text = r####"
//! See [`crate::b::X`] and `super::b`.
/// Uses [`crate::b`].
/* crate::b::Y /* nested crate::b */ still a comment crate::b */
fn f() -> &'static str {
    let _c = '"';
    let _d = '\'';
    let _e = b'{';
    let _s = "crate::b::Z \" crate::b";
    let _r = r#"crate::b::"R"#;
    'outer: loop { break 'outer; }
    "done"
}
"####;
        let k = krate(&[("a.rs", text), ("b.rs", "use crate::a::f;\n")]);
        let g = graph(&k);
        assert!(targets(&g, "a").is_empty(), "{:?}", g.edges);
        assert!(cycles(&g).is_empty());
    }

    #[test]
    fn super_in_an_inline_test_module_is_its_file() {
        let k = krate(&[
            ("a.rs", "fn f() {}\n#[cfg(test)]\nmod tests {\n    use super::*;\n    use super::super::b::helper;\n}\n"),
            ("b.rs", "pub fn helper() {}\nfn g() { crate::a::f() }\n"),
        ]);
        let g = graph(&k);
        assert_eq!(targets(&g, "a"), vec!["b"]);
        assert_eq!(cycles(&g), vec![vec![m("a"), m("b"), m("a")]]);
    }

    #[test]
    fn use_trees_with_braces_self_and_renames_bind_names_for_later_paths() {
        let k = krate(&[
            ("x/mod.rs", ""),
            ("x/user.rs", "use super::{limits::{self, MAX as M}, reader as r};\nfn f() { limits::check(); r::Obj::new(); }\n"),
            ("x/limits.rs", "pub fn check() {}\n"),
            ("x/reader.rs", "fn g() { crate::x::user::f(); }\n"),
        ]);
        let g = graph(&k);
        assert_eq!(targets(&g, "x::user"), vec!["x::limits", "x::reader"]);
        assert_eq!(cycles(&g), vec![vec![m("x::reader"), m("x::user"), m("x::reader")]]);
    }

    #[test]
    fn other_crates_and_relative_paths_to_items_are_not_edges() {
        let k = krate(&[("a.rs", "use std::collections::HashMap;\nuse vegaslab_cc::Nanos;\nfn f() { Self::g(); std::mem::swap(x, y); }\n"), ("b.rs", "")]);
        assert!(targets(&graph(&k), "a").is_empty());
    }
}
