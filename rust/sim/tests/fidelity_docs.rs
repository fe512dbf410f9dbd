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
