//! Scale benchmarks on synthetic generator workloads: wall time and peak memory.

use crate::bench_docs::SimRow;
use crate::experiments::carbyne_machine;
use crate::gen::{DemandModel, Family};
use crate::metrics::summarize;
use crate::runner::{prepare, run_prepared};
use crate::spec::*;
use anyhow::{Context, Result};
use clap::ValueEnum;
use std::path::Path;
use std::time::Instant;

#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum BenchCase {
    /// 3,000 machines, 6,000 jobs, over 600,000 tasks (Facebook-trace scale), Carbyne with
    /// DAG hints and progress.
    Facebook,
    /// The same jobs arriving fast enough to keep the cluster busy (a backlog builds up).
    FacebookSaturated,
    /// 10,000 machines, over 1,000,000 tasks, DRF.
    Large,
    /// The same jobs arriving fast enough to keep the cluster busy.
    LargeSaturated,
    /// 100,000 machines, 72,000 jobs, about 10,000,000 tasks, DRF, a job every 5 ms on
    /// average: about a tenth of the cores busy. Not part of `all`.
    Huge,
    /// The same jobs arriving ten times as fast: more work than the cluster drains, a
    /// backlog builds up. Not part of `all`.
    HugeSaturated,
    /// Every case but the huge ones.
    All,
}

/// The app policy a case runs (the queue policy is `--policy`).
fn app_policy(case: BenchCase) -> Option<&'static str> {
    matches!(case, BenchCase::Facebook | BenchCase::FacebookSaturated).then_some("carbyne")
}

pub fn spec(case: BenchCase, policy: &str) -> Spec {
    // Mean inter-arrival: the relaxed cases leave the cluster mostly idle between jobs; the
    // saturated ones submit work faster than the cluster drains it.
    let (machines, jobs, interarrival, scale) = match case {
        BenchCase::Facebook => (3000, 6000, 3.0, 0.2),
        BenchCase::FacebookSaturated => (3000, 6000, 0.1, 0.2),
        BenchCase::LargeSaturated => (10_000, 10_000, 0.05, 0.2),
        BenchCase::Huge => (100_000, 72_000, 0.005, 0.2),
        BenchCase::HugeSaturated => (100_000, 72_000, 0.0005, 0.2),
        _ => (10_000, 10_000, 2.0, 0.2),
    };
    Spec {
        name: format!("bench-{machines}"),
        seed: 11,
        cluster: ClusterSpec { machines, machines_per_rack: 40, machine: carbyne_machine() },
        scheduler: SchedulerSpec {
            policy: Some(policy.into()),
            app_policy: app_policy(case).map(Into::into),
            ..Default::default()
        },
        sim: SimSpec::default(),
        workload: WorkloadSpec::Carbyne {
            source: SourceSpec::Generator {
                family: Family::Tpcds,
                scale,
                input_spread: 1.0,
                demands: DemandModel::SingleBottleneck,
            },
            jobs: Some(jobs),
            arrivals: Arrivals::Poisson,
            mean_interarrival_s: interarrival,
            time_scale: 1.0,
            queues: 20,
            trace_queues: false,
        },
    }
}

/// Peak resident set size of this process (`VmHWM`), in MB, where the OS reports it.
pub fn peak_rss_mb() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

/// CPU time this process has used, user and system, in seconds (Linux's `/proc/self/stat`,
/// in clock ticks of 1/100 s), where the OS reports it.
pub fn cpu_s() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The fields after the command name, which is in parentheses and may hold spaces.
    let mut f = s.get(s.rfind(')')? + 2..)?.split_whitespace();
    let utime: f64 = f.nth(11)?.parse().ok()?;
    let stime: f64 = f.next()?.parse().ok()?;
    Some((utime + stime) / 100.0)
}

/// Runs `cases` (`all` stands for every case but the huge ones) and reports each; with `csv`,
/// also writes one [`SimRow`] per case there.
pub fn run(cases: &[BenchCase], policy: &str, progress: bool, csv: Option<&Path>) -> Result<String> {
    let all = [BenchCase::Facebook, BenchCase::FacebookSaturated, BenchCase::Large, BenchCase::LargeSaturated];
    let cases: Vec<BenchCase> =
        cases.iter().flat_map(|&c| if c == BenchCase::All { all.to_vec() } else { vec![c] }).collect();
    let mut out = String::new();
    let mut rows = Vec::new();
    for c in cases {
        let spec = spec(c, policy);
        let t = Instant::now();
        let cpu_before = cpu_s().unwrap_or(f64::NAN);
        let p = prepare(&spec, progress)?;
        let build_s = t.elapsed().as_secs_f64();
        let tasks: usize = p.jobs.iter().map(|j| j.stages.iter().map(|s| s.tasks()).sum::<usize>()).sum();
        let run = run_prepared(&p)?;
        let total = t.elapsed().as_secs_f64();
        let cpu = cpu_s().unwrap_or(f64::NAN) - cpu_before;
        let sim_end = run.jobs.iter().map(|j| j.finish_ms).max().unwrap_or(0) as f64 / 1000.0;
        let util = summarize(&run, p.window_ms).utilization;
        let busy = |k: &str| util.get(k).map_or("?".into(), |u| format!("{:.0}%", u * 100.0));
        let name = c.to_possible_value().map_or_else(|| format!("{c:?}"), |v| v.get_name().to_string());
        let rss = peak_rss_mb();
        out.push_str(&format!(
            "{:<9} machines {:>6}  jobs {:>6}  tasks {:>8}  policy {}  simulated {:.0} s  busy: vcores {} memory {}\n          \
             wall {:.2} s (workload {:.2} s, simulation {:.2} s)  CPU {:.2} s  events {}  heartbeat events {}  core heartbeats {}  containers {}  hint documents {}  peak RSS so far {} MB\n",
            name,
            p.cluster.machines,
            p.jobs.len(),
            tasks,
            run.policy,
            sim_end,
            busy("vcores"),
            busy("memory_mb"),
            total,
            build_s,
            run.stats.wall_s,
            cpu,
            run.stats.events,
            run.stats.heartbeat_events,
            run.stats.core_heartbeats,
            run.stats.containers,
            run.stats.hint_documents,
            rss.map(|m| format!("{m:.0}")).unwrap_or("?".into()),
        ));
        rows.push(SimRow {
            case: name,
            machines: p.cluster.machines as u64,
            jobs: p.jobs.len() as u64,
            tasks: tasks as u64,
            events: run.stats.events,
            core_heartbeats: run.stats.core_heartbeats,
            containers: run.stats.containers,
            busy_vcores_pct: util.get("vcores").map_or(f64::NAN, |u| u * 100.0),
            cpu_s: cpu,
            wall_s: total,
            peak_rss_mb: rss.unwrap_or(f64::NAN),
        });
    }
    if let Some(path) = csv {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        }
        let mut w = csv::Writer::from_path(path).with_context(|| format!("cannot write {}", path.display()))?;
        for r in rows {
            w.serialize(r)?;
        }
        w.flush()?;
    }
    Ok(out)
}
