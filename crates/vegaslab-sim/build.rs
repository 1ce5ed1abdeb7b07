//! Records the source revision this core was built from (`vegaslab_sim::SOURCE_REVISION`), for
//! provenance: the git commit, with `+dirty` when tracked files had uncommitted changes, or
//! `unknown` when the source is not a git checkout (e.g. built from an sdist).

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn main() {
    let revision = match git(&["rev-parse", "HEAD"]) {
        Some(commit) if !commit.is_empty() => {
            let dirty = git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
            if dirty {
                format!("{commit}+dirty")
            } else {
                commit
            }
        }
        _ => "unknown".to_string(),
    };
    println!("cargo:rustc-env=VEGASLAB_SOURCE_REVISION={revision}");
    // Rebuild when the commit or the index changes, or when any source of this crate does.
    if let Some(git_dir) = git(&["rev-parse", "--absolute-git-dir"]) {
        for f in ["HEAD", "index"] {
            println!("cargo:rerun-if-changed={git_dir}/{f}");
        }
    }
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=../vegaslab-cc/src");
}
