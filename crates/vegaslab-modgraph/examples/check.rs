//! The import cycles of the crates under each directory given (a crate's `src/`), as the
//! workspace test reports them: `cargo run -p vegaslab-modgraph --example check -- DIR...`.
//! Exits 1 when there is one.

fn main() {
    let mut found = false;
    for dir in std::env::args().skip(1) {
        let crates = vegaslab_modgraph::read_crates(std::path::Path::new(&dir), &dir).unwrap_or_else(|e| {
            eprintln!("{dir}: {e}");
            std::process::exit(2);
        });
        for problem in crates.iter().flat_map(vegaslab_modgraph::check) {
            println!("{problem}");
            found = true;
        }
    }
    std::process::exit(i32::from(found));
}
