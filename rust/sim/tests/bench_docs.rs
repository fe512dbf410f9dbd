//! The README's benchmark table and docs/benchmarks.md's generated tables agree with the
//! committed `make bench` results they come from.

use std::path::PathBuf;
use tidal_sim::bench_docs::{self, BenchResults};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn the_benchmark_tables_agree_with_the_committed_results() {
    let results = root().join("docs/results/bench");
    for page in ["README.md", "docs/benchmarks.md"] {
        if let Err(e) = bench_docs::check_files(&results, &root().join(page)) {
            panic!("{e:#}");
        }
    }
}

#[test]
fn a_changed_committed_figure_fails_the_check() {
    let mut res = BenchResults::load(&root().join("docs/results/bench")).expect("committed results");
    let readme = std::fs::read_to_string(root().join("README.md")).expect("the README");
    let render = |res: &BenchResults| bench_docs::render("benchmarks", res).expect("the table");
    assert!(readme.contains(&render(&res)), "the README holds the table the results give");
    res.core[0].median_ns *= 1.01;
    assert!(!readme.contains(&render(&res)), "a changed median changes the table");
}

#[test]
fn importing_the_results_into_themselves_keeps_them() {
    let committed = root().join("docs/results/bench");
    let dir = std::env::temp_dir().join(format!("tidal-bench-docs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    let files = bench_docs::kept_files();
    for (f, _) in &files {
        std::fs::copy(committed.join(f), dir.join(f)).expect("a committed result");
    }
    // Through another spelling of the same directory too.
    for run in [dir.clone(), dir.join(".")] {
        bench_docs::import_run(&run, &dir).expect("import");
        for (f, _) in &files {
            let (got, want) = (std::fs::read(dir.join(f)).unwrap(), std::fs::read(committed.join(f)).unwrap());
            assert!(got == want, "{f} changed by importing its directory into itself");
        }
    }
    std::fs::remove_dir_all(&dir).expect("scratch removed");
}
