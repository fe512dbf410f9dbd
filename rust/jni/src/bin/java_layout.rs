//! Prints `WireLayout.java`, the Java side's copy of the wire layout, generated from
//! `rust/jni/src/layout.rs`; with `--write`, writes it over the file in the repository instead.
//!
//! `cargo run -p tidal-jni --bin java-layout -- --write` after changing the layout.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use tidal_jni::layout::{java_source, JAVA_PATH};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let source = java_source();
    match args.as_slice() {
        [] => {
            if let Err(e) = std::io::stdout().write_all(source.as_bytes()) {
                eprintln!("java-layout: cannot write to standard output: {e}");
                return ExitCode::FAILURE;
            }
        }
        [flag] if flag == "--write" => {
            let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(JAVA_PATH);
            if let Err(e) = std::fs::write(&path, source) {
                eprintln!("java-layout: cannot write {}: {e}", path.display());
                return ExitCode::FAILURE;
            }
            eprintln!("java-layout: wrote {JAVA_PATH}");
        }
        _ => {
            eprintln!("usage: java-layout [--write]\n  prints {JAVA_PATH}; with --write, writes it in the repository");
            return ExitCode::from(2);
        }
    }
    ExitCode::SUCCESS
}
