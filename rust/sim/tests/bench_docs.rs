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
