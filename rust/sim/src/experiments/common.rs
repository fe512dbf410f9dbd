//! What the experiments share: scale, context, the papers' machines, running and saving specs.

use crate::fidelity::Findings;
use crate::gen::{DemandModel, Family};
use crate::metrics::Summary;
use crate::report;
use crate::runner::run_spec;
use crate::sim::output::RunOutput;
use crate::spec::*;
use anyhow::Result;
use std::path::Path;

#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Scale {
    /// Reduced size: runs in seconds (used by the test suite).
    Small,
    /// The papers' sizes.
    Full,
}

/// What an experiment runs with.
pub struct Ctx<'a> {
    pub scale: Scale,
    pub out: &'a Path,
    /// Run this policy in place of that one (`bopf` -> `strict-priority`, `uwfq` -> `ujf`):
    /// the checks the paper credits to one policy should then fail, which shows they can.
    pub swap: Option<(&'a str, &'a str)>,
    /// The demand model of generated DAG jobs, for the experiments that take one.
    pub demands: DemandModel,
}

/// An experiment's body: runs its specs under `Ctx` and records what it found.
pub type Body = fn(&Ctx, &mut Findings) -> Result<()>;

/// Carbyne's machines: 20 cores, 128 GB, an SSD and a 10 Gbps NIC (bandwidths in Mbps).
pub fn carbyne_machine() -> ResourceSpec {
    ResourceSpec::of(&[
        ("memory_mb", 131072),
        ("vcores", 20),
        ("disk_read_mbps", 4000),
        ("disk_write_mbps", 2000),
        ("net_in_mbps", 10000),
        ("net_out_mbps", 10000),
    ])
}

/// BoPF's CloudLab machines: 32 cores, 64 GB, a 10 Gbps NIC.
pub fn bopf_machine() -> ResourceSpec {
    ResourceSpec::of(&[
        ("memory_mb", 65536),
        ("vcores", 32),
        ("disk_read_mbps", 4000),
        ("disk_write_mbps", 2000),
        ("net_in_mbps", 10000),
        ("net_out_mbps", 10000),
    ])
}

pub fn sim_defaults() -> SimSpec {
    // Neither paper's simulator models ApplicationMasters; the core has no AM-share limit, so
    // hundreds of TQ jobs queued at t = 0 would each hold an AM container.
    SimSpec { am_container: ResourceSpec::default(), ..SimSpec::default() }
}

pub fn save(run: &RunOutput, spec: &Spec, dir: &Path) -> Result<Summary> {
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join("spec.toml"), toml::to_string(spec)?)?;
    report::write_all(run, spec.sim.fairness_window_ms, dir)
}

/// `spec` with the experiment's `--swap` applied.
pub fn swapped(mut spec: Spec, ctx: &Ctx) -> Spec {
    if let Some((from, to)) = ctx.swap {
        swap_policy(&mut spec.scheduler, from, to);
    }
    spec
}

/// Runs `to` where `scheduler` runs `from`, as its queue policy or its app policy. Carbyne with
/// P(altruism) = 0 is the experiments' job-level DRF, not Carbyne, and is left alone; a knob the
/// replacement does not take is dropped.
fn swap_policy(scheduler: &mut SchedulerSpec, from: &str, to: &str) {
    if from == crate::policies::SLOT_RESERVATION {
        scheduler.slot_reservation = None;
        return;
    }
    if scheduler.policy.as_deref() == Some(from) {
        scheduler.policy = Some(to.into());
    }
    let drf_as_carbyne = scheduler.altruism_probability == Some(0.0);
    if scheduler.app_policy.as_deref() == Some(from) && !drf_as_carbyne {
        crate::policies::set_app_policy(scheduler, to);
    }
}

/// Runs independent specs on every core and saves each under `out/<spec name>`; results come
/// back in the specs' order. Runs are deterministic, so the order they finish in does not
/// matter.
pub fn run_parallel(specs: &[Spec], ctx: &Ctx) -> Result<Vec<(RunOutput, Summary)>> {
    let out = ctx.out;
    let owned: Vec<Spec>;
    let specs = match ctx.swap {
        None => specs,
        Some(_) => {
            owned = specs.iter().map(|s| swapped(s.clone(), ctx)).collect();
            &owned
        }
    };
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(specs.len()).max(1);
    let next = std::sync::atomic::AtomicUsize::new(0);
    type RunCell = std::sync::Mutex<Option<Result<(RunOutput, Summary)>>>;
    let results: Vec<RunCell> = specs.iter().map(|_| Default::default()).collect();
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(spec) = specs.get(i) else { break };
                let r = run_spec(spec, false)
                    .and_then(|run| Ok((save(&run, spec, &out.join(&spec.name))?, run)).map(|(s, r)| (r, s)));
                *results[i].lock().expect("no panic while holding the lock") = Some(r);
            });
        }
    });
    results.into_iter().map(|m| m.into_inner().expect("no poisoned lock").expect("every spec ran")).collect()
}

pub fn tpch_source() -> (SourceSpec, &'static str) {
    let f = shared_dir().join("traces/tpch-spark/tpch-10g.json");
    if f.exists() {
        (
            SourceSpec::TpchSpark { file: f.display().to_string(), options: Default::default() },
            "TPC-H measured on Spark (10 GB)",
        )
    } else {
        (
            SourceSpec::Generator {
                family: Family::Tpch,
                scale: 1.0,
                input_spread: 1.0,
                demands: DemandModel::SingleBottleneck,
            },
            "TPC-H-like generator (shared traces absent)",
        )
    }
}

/// Average JCT (s) of the jobs of a class, NaN when the run has none.
pub fn class_avg(s: &Summary, class: &str) -> f64 {
    s.jct_by_class.get(class).map(|j| j.avg_s).unwrap_or(f64::NAN)
}

pub fn lq_avg(s: &Summary) -> f64 {
    class_avg(s, "LQ")
}
