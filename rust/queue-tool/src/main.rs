//! `tidal-queue`: tools for Tidal's queue file.
//!
//! `tidal-queue convert fair-scheduler.xml > tidal-queues.xml` converts a FairScheduler
//! allocation file and lists on stderr what it dropped or changed, and why. Exit codes: 0
//! converted (possibly with findings), 1 the input cannot be read or is not a FairScheduler
//! allocation file (or the output cannot be written), 2 bad usage.

use clap::{Parser, Subcommand};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use tidal_queue_tool::Outcome;

#[derive(Parser)]
#[command(name = "tidal-queue", version, about = "Tools for Tidal's queue file")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Converts a FairScheduler allocation file (fair-scheduler.xml) into a Tidal queue file;
    /// what has no Tidal meaning is listed on stderr with its line, queue and reason.
    Convert {
        /// The FairScheduler allocation file.
        file: PathBuf,
        /// Write the queue file here rather than to stdout.
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
}

fn main() -> ExitCode {
    // clap exits with 2 on bad usage.
    let Command::Convert { file, output } = Cli::parse().command;
    match convert(&file, output.as_deref()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("tidal-queue: {message}");
            ExitCode::FAILURE
        }
    }
}

fn convert(file: &Path, output: Option<&Path>) -> Result<(), String> {
    let shown = file.display();
    let input = std::fs::read_to_string(file).map_err(|e| format!("cannot read {shown}: {e}"))?;
    let source = file.file_name().map_or_else(|| shown.to_string(), |n| n.to_string_lossy().into_owned());
    let conversion = tidal_queue_tool::convert(&input, &source).map_err(|e| format!("{shown}: {e}"))?;
    for finding in &conversion.findings {
        eprintln!("{shown}: {finding}");
    }
    let dropped = conversion.findings.iter().filter(|f| f.outcome == Outcome::Dropped).count();
    let changed = conversion.findings.len() - dropped;
    eprintln!("{shown}: converted; {dropped} dropped, {changed} changed");
    match output {
        Some(path) => {
            std::fs::write(path, &conversion.xml).map_err(|e| format!("cannot write {}: {e}", path.display()))
        }
        None => {
            print!("{}", conversion.xml);
            Ok(())
        }
    }
}
