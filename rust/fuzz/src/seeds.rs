//! The documents the fuzz inputs start from, read from the repository at run time: every
//! Tidal queue file among the samples and test resources, and the DAG hints schema fixtures.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn files(dirs: &[&str], ext: &str, keep: impl Fn(&str) -> bool) -> Vec<String> {
    let mut paths: Vec<PathBuf> = dirs
        .iter()
        .filter_map(|d| std::fs::read_dir(repo().join(d)).ok())
        .flatten()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == ext))
        .collect();
    paths.sort();
    let docs: Vec<String> = paths.iter().filter_map(|p| std::fs::read_to_string(p).ok()).filter(|d| keep(d)).collect();
    assert!(!docs.is_empty(), "no seed documents (*.{ext}) under {dirs:?}");
    docs
}

/// Allocation files: XML documents whose root is `<tidal>`.
pub fn queue_files() -> &'static [String] {
    static FILES: OnceLock<Vec<String>> = OnceLock::new();
    FILES.get_or_init(|| {
        files(&["hadoop-conf", "java/common/src/test/resources", "it-tests/src/test/resources"], "xml", |d| {
            roxmltree::Document::parse(d).is_ok_and(|doc| doc.root_element().has_tag_name("tidal"))
        })
    })
}

/// Every `<queue>` element of the allocation files, as its source text.
pub fn queue_elements() -> &'static [String] {
    static ELEMENTS: OnceLock<Vec<String>> = OnceLock::new();
    ELEMENTS.get_or_init(|| {
        let mut out = Vec::new();
        for f in queue_files() {
            let doc = roxmltree::Document::parse(f).expect("checked when loaded");
            out.extend(
                doc.root_element().children().filter(|n| n.has_tag_name("queue")).map(|n| f[n.range()].to_string()),
            );
        }
        out
    })
}

/// DAG hints documents: the schema's valid and invalid fixtures.
pub fn hints() -> &'static [String] {
    static DOCS: OnceLock<Vec<String>> = OnceLock::new();
    DOCS.get_or_init(|| {
        files(&["rust/core/schema/fixtures/valid", "rust/core/schema/fixtures/invalid"], "json", |_| true)
    })
}
