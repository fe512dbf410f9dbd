//! Paper checks: the papers' set-ups run on our data, our numbers beside theirs, checks that fail.
//!
//! Every experiment states which policies it needs and refuses to start when the build's core
//! lacks one of them; [`crate::fidelity`] says what a check is.

mod bopf;
mod carbyne;
mod common;
mod drf_baseline;
mod reservation;
mod uwfq;

use crate::fidelity::{self, Findings};
use crate::gen::DemandModel;
use crate::policies::check_policy;
use anyhow::Result;
use common::{Body, Ctx};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

pub use common::{carbyne_machine, Scale};
pub use uwfq::MACRO_COLUMNS;

pub struct Experiment {
    pub name: &'static str,
    pub about: &'static str,
    pub policies: &'static [&'static str],
    /// The demand model of the experiment's generated DAG jobs when `--demands` does not say;
    /// `None` for experiments whose set-ups do not take one.
    pub demands: Option<DemandModel>,
    run: Body,
}

pub const EXPERIMENTS: &[Experiment] = &[
    Experiment {
        name: "drf-baseline",
        about: "DRF's side of both papers: Carbyne's offline TPC-DS fairness (Fig. 1/4) and BoPF's LQ slowdown as TQs are added (Fig. 7)",
        policies: &["drf", "bopf"],
        demands: None,
        run: drf_baseline::run,
    },
    Experiment {
        name: "bopf-table4",
        about: "BoPF Table 4: factor of improvement of LQ completion time over DRF vs the number of TQs (1-32), BB, TPC-DS, TPC-H",
        policies: &["drf", "bopf"],
        demands: None,
        run: bopf::table4,
    },
    Experiment {
        name: "bopf-table3",
        about: "BoPF Table 3's cluster set-up (100 TQ jobs, 300 s period, 1-8 TQs) in simulation",
        policies: &["drf", "bopf"],
        demands: None,
        run: bopf::table3,
    },
    Experiment {
        name: "bopf-fig9",
        about: "BoPF Fig. 9: TQ completion under DRF, strict priority and BoPF as LQ jobs grow to 8x their declaration",
        policies: &["drf", "strict-priority", "bopf"],
        demands: None,
        run: bopf::fig9,
    },
    Experiment {
        name: "bopf-errors",
        about: "BoPF Fig. 13: LQ completion and deadlines met under estimation errors (std 0-50%) vs DRF",
        policies: &["drf", "bopf"],
        demands: None,
        run: bopf::estimation_errors,
    },
    Experiment {
        name: "carbyne-table4",
        about: "Carbyne Table 4: per-job factors of improvement over DRF and Tetris (TPC-DS-like and Facebook)",
        policies: &["drf", "carbyne", "tetris", "tetris-srtf", "sjf"],
        demands: Some(DemandModel::MultiResource),
        run: carbyne::table4,
    },
    Experiment {
        name: "uwfq-users",
        about: "UWFQ (user weighted fair queuing) Table 1: UWFQ vs CFQ, UJF and job-fair on scenario 1 (frequent and infrequent users) and scenario 2 (four users' bursts): response times, DVR, DSR",
        policies: &["drf", "uwfq", "cfq", "ujf", "job-fair"],
        demands: None,
        run: uwfq::users,
    },
    Experiment {
        name: "slot-reservation",
        about: "Speculative slot reservation: foreground DAG slowdown under priority with and without reservation, utilization loss vs P, straggler copies on held space",
        policies: &["strict-priority"],
        demands: None,
        run: reservation::run,
    },
];

pub fn find(name: &str) -> Result<&'static Experiment> {
    EXPERIMENTS.iter().find(|e| e.name == name).ok_or_else(|| {
        let names: Vec<&str> = EXPERIMENTS.iter().map(|e| e.name).collect();
        anyhow::anyhow!("unknown experiment '{name}' (known: {})", names.join(", "))
    })
}

/// Runs an experiment and returns its findings; writes `report.txt`, `paper.csv` (paper
/// numbers beside ours) and `checks.csv` into `out`.
pub fn run(e: &Experiment, scale: Scale, out: &Path) -> Result<Findings> {
    run_swapped(e, scale, out, None)
}

/// [`run`] with `swap = (policy, replacement)`: every run of `policy` uses the replacement.
pub fn run_swapped(e: &Experiment, scale: Scale, out: &Path, swap: Option<(&str, &str)>) -> Result<Findings> {
    run_with(e, scale, out, swap, None)
}

/// [`run_swapped`] with the generated jobs' demand model in place of the experiment's default.
pub fn run_with(
    e: &Experiment,
    scale: Scale,
    out: &Path,
    swap: Option<(&str, &str)>,
    demands: Option<DemandModel>,
) -> Result<Findings> {
    let replacement = swap.filter(|(from, _)| *from != crate::policies::SLOT_RESERVATION).map(|(_, r)| r);
    for p in e.policies.iter().chain(replacement.iter()) {
        check_policy(p).map_err(|err| anyhow::anyhow!("experiment {} cannot run: {err}", e.name))?;
    }
    if demands.is_some() && e.demands.is_none() {
        let takers: Vec<&str> = EXPERIMENTS.iter().filter(|e| e.demands.is_some()).map(|e| e.name).collect();
        anyhow::bail!(
            "experiment {} has no generated set-ups that take --demands (those that do: {})",
            e.name,
            takers.join(", ")
        );
    }
    let demands = demands.or(e.demands).unwrap_or_default();
    std::fs::create_dir_all(out)?;
    let mut f = Findings::default();
    match swap {
        Some((p, _)) if p == crate::policies::SLOT_RESERVATION => {
            let _ = writeln!(f, "!! slot reservation is off in every run of this experiment: its checks should fail\n");
        }
        Some((p, r)) => {
            let _ =
                writeln!(f, "!! every {p} run of this experiment runs {r} instead: its checks for {p} should fail\n");
        }
        None => {}
    }
    (e.run)(&Ctx { scale, out, swap, demands }, &mut f)?;
    let failed = f.failures().len();
    let _ = writeln!(
        f.text,
        "
   {} checks, {} failed",
        f.checks.len(),
        failed
    );
    std::fs::write(out.join("report.txt"), &f.text)?;
    fidelity::write_csvs(&f, out)?;
    Ok(f)
}

/// Runs every experiment into `out/<name>` and writes `out/fidelity.md`: per experiment, each
/// paper number beside ours with the ratio and verdict, and every check.
pub fn run_all(scale: Scale, out: &Path, progress: bool) -> Result<Vec<(&'static str, Findings)>> {
    let bar = fidelity::progress_bar(EXPERIMENTS.len(), progress);
    let mut all = Vec::new();
    for e in EXPERIMENTS {
        bar.set_message(e.name);
        all.push((e.name, run(e, scale, &out.join(e.name))?));
        bar.inc(1);
    }
    bar.finish_and_clear();
    std::fs::write(out.join("fidelity.md"), fidelity::markdown(&all, scale == Scale::Full))?;
    Ok(all)
}

pub fn default_out(name: &str) -> PathBuf {
    PathBuf::from("target/tidal-sim").join(name)
}
