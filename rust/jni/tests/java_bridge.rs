//! The two sides of the bridge agree: every `native` method of `TidalNative.java` has a Rust
//! export of the same name and arity and vice versa, every exception class the bridge raises
//! exists on the Java side as a `TidalException`, and the bridge version changes with the
//! contract it names. A mismatch would otherwise surface only at run time, as an
//! `UnsatisfiedLinkError` or a silently dropped error. The wire layout's agreement is
//! `java_layout.rs`'s.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const JAVA_PACKAGE_DIR: &str = "java/common/src/main/java";
const NATIVE_CLASS: &str = "org/tidal/yarn/bridge/TidalNative";
/// Every Java class that declares natives: the bindings, and the loader's version check.
const CLASSES_WITH_NATIVES: [&str; 2] = [NATIVE_CLASS, "org/tidal/yarn/bridge/NativeLoader"];

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// Strips `//` and `/* */` comments, so documentation mentioning a method does not count.
fn strip_comments(src: &str) -> String {
    let mut out = String::with_capacity(src.len());
    let mut rest = src;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix("//") {
            rest = r.find('\n').map_or("", |i| &r[i..]);
        } else if let Some(r) = rest.strip_prefix("/*") {
            rest = r.find("*/").map_or("", |i| &r[i + 2..]);
        } else {
            let c = rest.chars().next().expect("not empty");
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

/// Number of comma-separated parameters in the text between a `(` and its `)`.
fn arity(params: &str) -> usize {
    let params = params.trim();
    if params.is_empty() {
        0
    } else {
        params.split(',').filter(|p| !p.trim().is_empty()).count()
    }
}

/// `class.name -> arity` of the `native` methods the Java classes declare.
fn java_natives() -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for class in CLASSES_WITH_NATIVES {
        let src = strip_comments(&read(&repo_root().join(JAVA_PACKAGE_DIR).join(format!("{class}.java"))));
        for decl in src.split(';') {
            // A declaration reads `... static native <type> <name>(<params>)` (JNI entry points
            // here are all static); anything before `native` in the chunk (an earlier member's
            // body, a message that says "native") is skipped.
            let Some(at) = decl.find(" static native ").map(|at| at + " static".len()) else { continue };
            let decl = &decl[at..];
            let Some(open) = decl.find('(') else { continue };
            let head = &decl[..open];
            let name = head.split_whitespace().last().expect("a method name before '('");
            let close = decl.rfind(')').expect("a ')' closing the parameters");
            let key = format!("{class}.{name}");
            assert!(out.insert(key.clone(), arity(&decl[open + 1..close])).is_none(), "overloaded native {key}");
        }
    }
    out
}

/// `class.name -> arity` (without the JNIEnv and class parameters) of the exported JNI functions;
/// an export for no class of [`CLASSES_WITH_NATIVES`] keeps its symbol as its key.
fn rust_exports() -> BTreeMap<String, usize> {
    let prefixes: Vec<(String, &str)> =
        CLASSES_WITH_NATIVES.iter().map(|class| (format!("Java_{}_", class.replace('/', "_")), *class)).collect();
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(repo_root().join("rust/jni/src")).expect("rust/jni/src") {
        let path = entry.expect("dir entry").path();
        // The library's modules; src/bin holds tools, not exports.
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let src = strip_comments(&read(&path));
        let mut rest = src.as_str();
        while let Some(at) = rest.find("extern \"system\" fn ") {
            let after = &rest[at + "extern \"system\" fn ".len()..];
            let preceding = &rest[..at];
            let name_end = after.find(|c: char| !(c.is_alphanumeric() || c == '_')).expect("a name");
            let name = &after[..name_end];
            let open = after.find('(').expect("parameters");
            let close = after.find(')').expect("closing parenthesis");
            let last_attr = preceding.rfind("#[").map(|i| &preceding[i..]).unwrap_or("");
            if name.starts_with("Java_") {
                assert!(last_attr.starts_with("#[no_mangle]"), "{name} is not #[no_mangle], so the JVM cannot find it");
                let params = arity(&after[open + 1..close]);
                assert!(params >= 2, "{name} lacks the JNIEnv and class parameters");
                let key = prefixes
                    .iter()
                    .find_map(|(prefix, class)| name.strip_prefix(prefix.as_str()).map(|m| format!("{class}.{m}")))
                    .unwrap_or_else(|| name.to_string());
                out.insert(key, params - 2);
            }
            rest = &after[close..];
        }
    }
    out
}

#[test]
fn every_java_native_has_a_rust_export_of_the_same_arity_and_vice_versa() {
    let java = java_natives();
    let rust = rust_exports();
    assert!(java.len() >= 10, "parsed only {} natives from the Java class: {java:?}", java.len());
    let missing: Vec<_> = java.keys().filter(|k| !rust.contains_key(*k)).collect();
    let extra: Vec<_> = rust.keys().filter(|k| !java.contains_key(*k)).collect();
    assert!(missing.is_empty(), "Java declares natives with no Rust export: {missing:?}");
    assert!(extra.is_empty(), "Rust exports functions Java does not declare: {extra:?}");
    for (name, n) in &java {
        assert_eq!(rust[name], *n, "{name}: Java declares {n} parameters, Rust takes {}", rust[name]);
    }
}

#[test]
fn every_exception_class_the_bridge_raises_is_a_java_tidal_exception() {
    for class in tidal_jni::exceptions::ALL {
        let path = repo_root().join(JAVA_PACKAGE_DIR).join(format!("{class}.java"));
        let src = strip_comments(&read(&path));
        let simple = class.rsplit('/').next().expect("a class name");
        let is_root = simple == "TidalException";
        let extends = if is_root { "extends RuntimeException" } else { "extends TidalException" };
        assert!(src.contains(&format!("class {simple} {extends}")), "{class} must be declared `{extends}`");
    }
}

/// The parameter types of every constructor `simple` declares in `src`, e.g. `["String"]`.
fn constructors(src: &str, simple: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut rest = src;
    while let Some(at) = rest.find(&format!("{simple}(")) {
        let after = &rest[at + simple.len() + 1..];
        let close = after.find(')').expect("a ')' closing the parameters");
        // `new TidalX(...)` is a call, not a declaration.
        if !rest[..at].trim_end().ends_with("new") {
            let types =
                after[..close].split(',').filter_map(|p| p.split_whitespace().next()).map(str::to_string).collect();
            out.push(types);
        }
        rest = &after[close..];
    }
    out
}

#[test]
fn every_exception_raised_with_a_subject_declares_the_bridges_constructor() {
    // SUBJECT_CONSTRUCTOR's JNI descriptor, as Java source types.
    let wanted = ["String", "long", "int", "String", "String"];
    assert_eq!(tidal_jni::error::SUBJECT_CONSTRUCTOR, "(Ljava/lang/String;JILjava/lang/String;Ljava/lang/String;)V");
    for class in tidal_jni::exceptions::WITH_SUBJECT {
        let src = strip_comments(&read(&repo_root().join(JAVA_PACKAGE_DIR).join(format!("{class}.java"))));
        let simple = class.rsplit('/').next().expect("a class name");
        let found = constructors(&src, simple);
        assert!(found.iter().any(|c| c == &wanted), "{class} lacks a constructor of {wanted:?}; it has {found:?}");
    }
}

/// The bridge version and the fingerprint of the contract it names. When `TidalNative`'s natives
/// or the wire layout change, bump the version in rust/jni/src/layout.rs and record the new
/// fingerprint here.
const RECORDED_CONTRACT: (i32, u64) = (7, 0x420d_503c_0e48_9971);

/// FNV-1a over `TidalNative`'s binary name (the JNI symbols' prefix), its native declarations and
/// constants, whitespace collapsed, and over every wire layout constant but the version, as
/// `NAME=value;`: what a jar and a library must agree on.
fn contract_fingerprint() -> u64 {
    let src = strip_comments(&read(&repo_root().join(JAVA_PACKAGE_DIR).join(format!("{NATIVE_CLASS}.java"))));
    let mut hash = 0xcbf2_9ce4_8422_2325_u64;
    let mut add = |text: &str| {
        for byte in text.bytes().chain(std::iter::once(b';')) {
            hash = (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
        }
    };
    add(NATIVE_CLASS);
    for decl in src.split(';') {
        let start = decl.find(" native ").or_else(|| decl.find("static final "));
        let Some(at) = start else { continue };
        add(&decl[at..].split_whitespace().collect::<Vec<_>>().join(" "));
    }
    for c in tidal_jni::layout::TABLE.iter().filter(|c| c.name != "BRIDGE_VERSION") {
        add(&format!("{}={}", c.name, c.value));
    }
    hash
}

#[test]
fn the_bridge_version_names_the_contract_and_the_loader_checks_it() {
    // Java's version is WireLayout's, generated from the same table (see java_layout.rs).
    let loader =
        strip_comments(&read(&repo_root().join(JAVA_PACKAGE_DIR).join("org/tidal/yarn/bridge/NativeLoader.java")));
    assert!(
        loader.contains("found != WireLayout.BRIDGE_VERSION"),
        "NativeLoader must refuse a library whose bridgeVersion() differs from WireLayout.BRIDGE_VERSION"
    );
    let fingerprint = contract_fingerprint();
    assert_eq!(
        RECORDED_CONTRACT,
        (tidal_jni::BRIDGE_VERSION, fingerprint),
        "TidalNative's natives or the wire layout changed: bump BRIDGE_VERSION in rust/jni/src/layout.rs, \
         regenerate WireLayout.java ({}) and record ({}, {fingerprint:#x}) here",
        tidal_jni::layout::JAVA_COMMAND,
        tidal_jni::BRIDGE_VERSION + 1
    );
}
