//! No import cycles between the modules of any crate in the workspace: each module may use
//! the modules below it, never one that (directly or through others) uses it back. A module's
//! own submodules, and a submodule's `super`, do not count as edges.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type Graph = BTreeMap<String, BTreeSet<String>>;

/// The `src` directory of every member of the workspace, read from its `Cargo.toml`, so a crate
/// added there is checked without anyone remembering to list it here.
fn crate_dirs() -> Vec<PathBuf> {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let manifest = std::fs::read_to_string(workspace.join("Cargo.toml")).expect("the workspace's Cargo.toml");
    let members = workspace_members(&manifest);
    assert!(!members.is_empty(), "the workspace's Cargo.toml lists no members");
    members.iter().map(|m| workspace.join(m).join("src")).collect()
}

/// `workspace.members` of a workspace manifest. Globs would need expanding, which this test does
/// not do, so it refuses them rather than check fewer crates than there are.
fn workspace_members(manifest: &str) -> Vec<String> {
    let doc: toml::Table = manifest.parse().expect("the workspace's Cargo.toml parses");
    let members = doc
        .get("workspace")
        .and_then(|w| w.get("members"))
        .and_then(|m| m.as_array())
        .expect("[workspace] members is an array");
    members
        .iter()
        .map(|m| {
            let m = m.as_str().expect("a member is a path string");
            assert!(!m.contains(['*', '?', '[']), "member '{m}' is a glob; list the crates instead");
            m.to_string()
        })
        .collect()
}

/// Module path of a source file: `policy/bopf.rs` -> `policy::bopf`, `dag/mod.rs` -> `dag`.
fn module_of(root: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(root).expect("under the crate root").with_extension("");
    let parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    let parts: Vec<&str> = parts.iter().map(String::as_str).filter(|p| *p != "mod").collect();
    match parts.as_slice() {
        ["lib"] | ["main"] => String::new(),
        _ => parts.join("::"),
    }
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let p = e.expect("dir entry").path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Code before the unit-test module, without comments.
fn code(src: &str) -> String {
    let src = src.split("#[cfg(test)]").next().expect("split yields one part");
    src.lines().map(|l| l.split("//").next().expect("split yields one part")).collect::<Vec<_>>().join("\n")
}

/// Every `crate::a::b` path in the code, with `use crate::a::{b, c::d}` groups expanded.
fn crate_paths(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        let after = &rest[at + "crate::".len()..];
        let end = after.find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':')).unwrap_or(after.len());
        let path = after[..end].trim_end_matches(':').to_string();
        if after[end..].starts_with('{') && after[..end].ends_with("::") {
            let close = after[end..].find('}').map_or(after.len(), |i| end + i);
            for item in after[end + 1..close].split(',') {
                let item = item.trim().trim_start_matches('{');
                if !item.is_empty() && item != "self" {
                    out.push(format!("{path}::{}", item.split_whitespace().next().expect("non-empty")));
                }
            }
        }
        out.push(path);
        rest = &after[end..];
    }
    out
}

fn crate_graph(root: &Path) -> Graph {
    let mut files = Vec::new();
    sources(root, &mut files);
    graph(&files.iter().map(|f| (module_of(root, f), code(&std::fs::read_to_string(f).expect("readable")))).collect())
}

/// Module -> the modules its code names, from each module's code.
fn graph(texts: &BTreeMap<String, String>) -> Graph {
    let resolve = |path: &str| -> Option<String> {
        let parts: Vec<&str> = path.split("::").collect();
        (1..=parts.len()).rev().map(|n| parts[..n].join("::")).find(|m| texts.contains_key(m))
    };
    let mut g = Graph::new();
    for (m, text) in texts {
        let deps = crate_paths(text)
            .iter()
            .filter_map(|p| resolve(p))
            .filter(|d| d != m && !d.is_empty() && !d.starts_with(&format!("{m}::")) && !m.is_empty())
            .collect();
        g.insert(m.clone(), deps);
    }
    g
}

/// A cycle through `start`, if any, as the modules along it.
fn cycle_through(g: &Graph, start: &str) -> Option<Vec<String>> {
    let mut stack = vec![(start.to_string(), vec![start.to_string()])];
    let mut seen = BTreeSet::new();
    while let Some((m, path)) = stack.pop() {
        for d in g.get(&m).into_iter().flatten() {
            if d == start {
                return Some(path.iter().cloned().chain([start.to_string()]).collect());
            }
            if seen.insert(d.clone()) {
                stack.push((d.clone(), path.iter().cloned().chain([d.clone()]).collect()));
            }
        }
    }
    None
}

#[test]
fn no_crate_has_an_import_cycle() {
    for root in crate_dirs() {
        let g = crate_graph(&root);
        assert!(!g.is_empty(), "found no Rust sources under {}", root.display());
        let cycles: Vec<String> = g.keys().filter_map(|m| cycle_through(&g, m)).map(|c| c.join(" -> ")).collect();
        assert!(cycles.is_empty(), "import cycles under {}:\n{}", root.display(), cycles.join("\n"));
    }
}

#[test]
fn the_cycle_check_sees_a_cycle() {
    let texts = [("a", "use crate::b::{X, c::Y};"), ("b", "crate::c::Z"), ("b::c", "use crate::a::W;")]
        .map(|(m, t)| (m.to_string(), t.to_string()));
    let g = graph(&texts.into_iter().collect());
    assert_eq!(cycle_through(&g, "a").map(|c| c.join(" -> ")), Some("a -> b::c -> a".to_string()));
    assert_eq!(cycle_through(&g, "b"), None, "b::c is b's own submodule");
}

#[test]
fn every_workspace_member_is_checked() {
    let manifest = "[workspace]\nresolver = \"2\"\nmembers = [\n  \"rust/a\", # the first\n  \"rust/b\",\n]\n";
    assert_eq!(workspace_members(manifest), ["rust/a", "rust/b"]);
    let dirs = crate_dirs();
    for member in ["core", "jni", "sim", "fuzz", "queue-tool"] {
        assert!(dirs.iter().any(|d| d.ends_with(format!("rust/{member}/src"))), "{member} is not checked: {dirs:?}");
    }
}
