//! The core's hints parser and the shared DAG-hints schema (`schema/dag-hints.schema.json`)
//! agree on the shared fixtures: the parser accepts every valid document and refuses every
//! invalid one. The Java side checks the same fixtures and the Tez plugin's output against the
//! schema, so the plugin, the schema and the core cannot drift apart unnoticed.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use tidal_core::hints::{apply, AppHints};
use tidal_core::request::AskTable;

fn fixtures(kind: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("schema/fixtures").join(kind);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    assert!(files.len() >= 5, "only {} {kind} fixtures in {}", files.len(), dir.display());
    files
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The DAG a progress-only document updates: the map-reduce fixture's.
fn stored_dag() -> Arc<AppHints> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("schema/fixtures/valid/map-reduce.json");
    let mut stored = None;
    apply(1, &read(&path), &mut stored, &AskTable::default()).expect("the map-reduce fixture parses");
    stored.expect("stored hints")
}

#[test]
fn the_core_accepts_every_valid_fixture() {
    let stored = stored_dag();
    for path in fixtures("valid") {
        let json = read(&path);
        let progress_only = !serde_json::from_str::<serde_json::Value>(&json).expect("JSON")["stages"].is_array();
        let mut previous = progress_only.then(|| stored.clone());
        if let Err(e) = apply(1, &json, &mut previous, &AskTable::default()) {
            panic!("{} is valid but the core refused it: {e}", path.display());
        }
    }
}

#[test]
fn the_core_refuses_every_invalid_fixture() {
    let stored = stored_dag();
    for path in fixtures("invalid") {
        // With a stored DAG, a progress-only document fails for its own fault, not for lack of one.
        if apply(1, &read(&path), &mut Some(stored.clone()), &AskTable::default()).is_ok() {
            panic!("{} is invalid but the core accepted it", path.display());
        }
    }
}
