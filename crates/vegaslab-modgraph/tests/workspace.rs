//! No workspace crate has an import cycle between its modules, under the rule of
//! `vegaslab_modgraph` (an edge from a module to one of its ancestors is left out; a cycle
//! among the other edges is an error). On failure the message names each cycle as a chain of
//! modules, with the file and line of every edge in it.

use std::path::Path;
use vegaslab_modgraph::{check, graph, read_crates};

#[test]
fn no_workspace_crate_has_an_import_cycle() {
    let crates_dir = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("crates/");
    let mut dirs: Vec<_> = std::fs::read_dir(crates_dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.join("src").is_dir()).collect();
    dirs.sort();
    let mut read = Vec::new();
    let mut problems = Vec::new();
    for dir in &dirs {
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        for krate in read_crates(&dir.join("src"), &format!("crates/{name}/src")).unwrap() {
            read.push((krate.name.clone(), graph(&krate).modules.len()));
            problems.extend(check(&krate));
        }
    }
    // The check reads what it should: the simulator and the controllers are many modules.
    let modules = |name: &str| read.iter().find(|(n, _)| n == name).map_or(0, |(_, n)| *n);
    assert!(modules("crates/vegaslab-sim/src") > 40, "{read:?}");
    assert!(modules("crates/vegaslab-cc/src") > 15, "{read:?}");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
