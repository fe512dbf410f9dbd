//! The fidelity page's generated tables agree with the committed results they come from.

use std::path::PathBuf;
use tidal_sim::fidelity_docs::{self, Results};

fn docs() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs")
}

#[test]
fn the_fidelity_page_agrees_with_the_committed_results() {
    let (results, page) = (docs().join("results"), docs().join("fidelity.md"));
    if let Err(e) = fidelity_docs::check_files(&results, &page) {
        panic!("{e:#}");
    }
}

#[test]
fn a_changed_committed_value_fails_the_check_naming_its_block() {
    let mut res = Results::load(&docs().join("results")).expect("committed results");
    let page = std::fs::read_to_string(docs().join("fidelity.md")).expect("the fidelity page");
    assert_eq!(fidelity_docs::check(&page, &res).expect("blocks"), Vec::<String>::new());
    let row = res.experiments.get_mut("bopf-table4").expect("bopf-table4").rows.first_mut().expect("a paper row");
    row.ours += 0.5;
    row.ratio = row.ours / row.paper;
    let stale = fidelity_docs::check(&page, &res).expect("blocks");
    assert!(stale.contains(&"bopf-tq-grid".to_string()), "{stale:?}");
}

#[test]
fn every_experiment_has_committed_results() {
    let res = Results::load(&docs().join("results")).expect("committed results");
    for e in tidal_sim::experiments::EXPERIMENTS {
        assert!(res.experiments.contains_key(e.name), "no committed results for {}", e.name);
    }
    let md = std::fs::read_to_string(docs().join("results/fidelity.md")).expect("the run's fidelity.md");
    assert!(md.contains("Scale: full"), "the committed results are not a full-scale run");
}

#[test]
fn importing_the_results_into_themselves_keeps_them() {
    let committed = docs().join("results");
    let res = Results::load(&committed).expect("committed results");
    let dir = std::env::temp_dir().join(format!("tidal-fidelity-docs-{}", std::process::id()));
    let mut files = vec![PathBuf::from("fidelity.md")];
    for name in res.experiments.keys() {
        std::fs::create_dir_all(dir.join(name)).expect("a scratch directory");
        files.extend(fidelity_docs::KEPT.iter().map(|f| PathBuf::from(name).join(f)));
    }
    for f in &files {
        std::fs::copy(committed.join(f), dir.join(f)).expect("a committed result");
    }
    // Through another spelling of the same directory too.
    for run in [dir.clone(), dir.join(".")] {
        let held = fidelity_docs::import_run(&run, &dir).expect("import");
        assert_eq!(held, res.experiments.keys().cloned().collect::<Vec<_>>());
        for f in &files {
            let (got, want) = (std::fs::read(dir.join(f)).unwrap(), std::fs::read(committed.join(f)).unwrap());
            assert!(got == want, "{} changed by importing its directory into itself", f.display());
        }
    }
    std::fs::remove_dir_all(&dir).expect("scratch removed");
}
