//! Java reads and writes the wire records with the layout Rust declares: the committed
//! `WireLayout.java` is exactly what `rust/jni/src/layout.rs` generates, and no other Java source
//! declares a layout constant of its own. A layout change that leaves Java behind fails here.

use std::path::{Path, PathBuf};

use tidal_jni::layout::{java_source, JAVA_COMMAND, JAVA_PATH, TABLE};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn the_committed_wire_layout_java_is_what_the_rust_table_generates() {
    let path = repo_root().join(JAVA_PATH);
    let committed = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {JAVA_PATH} ({e}); generate it with `{JAVA_COMMAND}`"));
    let generated = java_source();
    if committed == generated {
        return;
    }
    let (line, (was, is)) = committed
        .lines()
        .chain(std::iter::repeat("<end of file>"))
        .zip(generated.lines().chain(std::iter::repeat("<end of file>")))
        .enumerate()
        .find(|(_, (a, b))| a != b)
        .expect("texts that differ differ in a line");
    panic!(
        "{JAVA_PATH} is not what rust/jni/src/layout.rs generates; regenerate it with `{JAVA_COMMAND}` (from the \
         repository root) and commit it.\nFirst difference, line {}:\n  committed: {was}\n  generated: {is}",
        line + 1
    );
}

/// The `.java` files under `dir`, build output aside.
fn java_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display())) {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n != "target") {
                java_files(&path, out);
            }
        } else if path.extension().is_some_and(|e| e == "java") {
            out.push(path);
        }
    }
}

/// Whether a Java statement assigns `name` as a whole word (`NAME =`, not `xNAME`, `NAME ==`).
fn assigns(statement: &str, name: &str) -> bool {
    statement.match_indices(name).any(|(at, _)| {
        let before = statement[..at].chars().next_back();
        let after = statement[at + name.len()..].trim_start();
        !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.')
            && after.starts_with('=')
            && !after.starts_with("==")
    })
}

#[test]
fn no_other_java_source_declares_a_layout_constant() {
    let mut files = Vec::new();
    java_files(&repo_root().join("java"), &mut files);
    let generated = repo_root().join(JAVA_PATH).canonicalize().expect("WireLayout.java exists");
    assert!(files.len() > 20, "found only {} Java sources", files.len());
    let mut found = Vec::new();
    for path in files.iter().filter(|p| p.canonicalize().ok().as_ref() != Some(&generated)) {
        let src = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        for statement in src.split(';').filter(|s| s.contains("final ")) {
            for c in TABLE.iter().filter(|c| assigns(statement, c.name)) {
                let shown = path.strip_prefix(repo_root()).unwrap_or(path);
                found.push(format!("{} in {}", c.name, shown.display()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "declare layout constants only in rust/jni/src/layout.rs and use WireLayout's: {found:?}"
    );
}
