//! UWFQ against CFQ, UJF and job-fair on the UWFQ paper's micro-benchmarks (§5.2): scenario 1
//! (frequent and infrequent users) and scenario 2 (four users' simultaneous bursts), and on its
//! macro-benchmark (§5.3, Table 2: 25 users of a 500 s window of the Google 2014 trace).
//!
//! The set-up is the paper's, with what §5 leaves open taken from its released benchmark
//! configuration (github.com/kazemaksOG/spark-benchmark-tool, `configs/synthetic_workloads`:
//! `2_power_2_small_users_default.json` is scenario 1, `4_super_small_users_default.json`
//! scenario 2; its `results/tables` reproduce Table 1's numbers for those two files; for the
//! macro-benchmark `configs/homo_macro/homo_macro_config.json`, the configuration that
//! `results/macro_bench_analysis.py` derives from the trace window, and
//! `results/tables/homo_macro_run_data_avg.csv`, whose rows are Table 2's).

use super::common::{class_avg, run_parallel, sim_defaults, Ctx, Scale};
use crate::fidelity::{Findings, Verdict};
use crate::metrics::Summary;
use crate::sim::output::RunOutput;
use crate::spec::*;
use anyhow::Result;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::fmt::Write as _;

/// The UWFQ paper's Eq. (1)-(3): r_i = (finish under the target - finish under UJF) / UJF response
/// time. The paper's text defines DVR as the average proportional violation and DSR as the
/// average proportional slack; its printed denominators (r_i > 1, r_i <= 1) contradict that
/// text, so we average over the jobs that violate (r_i > 0) and that gain (r_i < 0).
#[derive(Clone, Debug, PartialEq)]
struct DeadlineRatios {
    dvr: f64,
    violations: usize,
    dsr: f64,
    slacks: usize,
}

fn deadline_ratios(target: &RunOutput, ujf: &RunOutput) -> DeadlineRatios {
    let (mut v, mut nv, mut sl, mut ns) = (0.0, 0, 0.0, 0);
    for (t, u) in target.jobs.iter().zip(&ujf.jobs) {
        let r = (t.finish_ms - u.finish_ms) as f64 / u.jct_ms().max(1) as f64;
        if r > 0.0 {
            v += r;
            nv += 1;
        } else if r < 0.0 {
            sl -= r;
            ns += 1;
        }
    }
    DeadlineRatios {
        dvr: if nv > 0 { v / nv as f64 } else { 0.0 },
        violations: nv,
        dsr: if ns > 0 { sl / ns as f64 } else { 0.0 },
        slacks: ns,
    }
}

/// The UWFQ paper's cluster: 4 worker nodes of 2 executors × 4 cores (32 cores); memory is
/// ample so that cores are what jobs compete for, as with Spark's one core per task.
fn das5_machine() -> ResourceSpec {
    ResourceSpec::of(&[
        ("memory_mb", 65536),
        ("vcores", 8),
        ("disk_read_mbps", 4000),
        ("disk_write_mbps", 2000),
        ("net_in_mbps", 10000),
        ("net_out_mbps", 10000),
    ])
}

/// One of the paper's job types (§5.2): load the taxi data, apply a UDF to every row, collect
/// the result, as three chained stages of 1-core, 1 GB tasks (an executor's 4 cores and 4 GB,
/// §5.1). Alone on the 32 cores a short job takes 2.25 s and a tiny one 0.90 s; the paper gives
/// neither task counts nor work, so they come from the benchmark and its runs:
/// - 32 tasks per stage: Spark splits a scan to give every core a partition (§3.2, "each stage
///   can run on all cores"); the collect is one task of a few milliseconds (§5.2).
/// - The two types differ only in the UDF's loop (100 vs 20 iterations): 2.25 = a + 100 b and
///   0.90 = a + 20 b give 0.55 s of loading and collecting and 1.69 s / 0.34 s of computing.
/// - The partitions are skewed (the file is split by pick-up zone; skew is §3.2's Fig. 3), so
///   the longest task sets a stage's time while the cluster does far less work: the runs drain
///   Table 1's 184 short jobs in 143 s and 120 tiny ones in 43 s on 32 cores (total time in
///   `results/tables`), about 25 and 11.5 core-seconds a job. One straggler per stage carries
///   the critical path and 31 equal tasks the rest of that work (the same 8 core-seconds of
///   loading in both types; computing scales with the loop).
fn job(compute_task_ms: u32, compute_straggler_ms: u32) -> SourceSpec {
    SourceSpec::Fixed { stages: job_stages(compute_task_ms, compute_straggler_ms) }
}

/// The three stages of [`job`]: loading, computing (31 tasks and a straggler), collecting.
fn job_stages(compute_task_ms: u32, compute_straggler_ms: u32) -> Vec<FixedStage> {
    let stage = |tasks, task_ms, straggler_ms| FixedStage {
        tasks,
        task_ms,
        straggler_ms,
        demand: ResourceSpec::of(&[("memory_mb", 1024), ("vcores", 1)]),
    };
    vec![stage(32, 244, Some(550)), stage(32, compute_task_ms, Some(compute_straggler_ms)), stage(1, 10, None)]
}

/// The `Loop100` job's computing stage: 31 tasks of this many ms and one straggler.
const LOOP100_TASK_MS: u32 = 490;
const LOOP100_STRAGGLER_MS: u32 = 1690;

/// 2.25 s alone: the `Loop100` job of scenario 1.
fn short_job() -> SourceSpec {
    job(LOOP100_TASK_MS, LOOP100_STRAGGLER_MS)
}

/// 0.90 s alone: the `Loop20` job of scenario 2.
fn tiny_job() -> SourceSpec {
    job(98, 340)
}

/// Spark hands a freed core to the next task as soon as the executor reports the task's end
/// (its 1 s revive timer is only a fallback). With YARN's 1 s heartbeat the three stage
/// boundaries stretch a short job alone from 2.25 s to 2.76 s (measured); at 10 ms the job
/// types take the paper's times (see the test).
const HEARTBEAT_MS: i64 = 10;

/// A user of a scenario: name, class, job type, jobs, arrivals, first arrival (s).
type User = (String, &'static str, SourceSpec, usize, UserArrivals, f64);

/// Scenario 1 (§5.2.1): 2 frequent users each submit a burst of short jobs every 30 s that
/// congests the cluster; 2 infrequent users submit short jobs as a Poisson process. From the
/// benchmark's file: 4 bursts of 20 jobs 30 s apart from 0.1 s (the second user's 0.1 s later),
/// 12 jobs per infrequent user at 8 a minute, every job the 2.25 s type (Table 1's slowdowns
/// are the response times over 2.21 s for every scheduler, so the infrequent users' jobs are
/// short ones too). Small scale: 2 bursts and 6 infrequent jobs each (the same mix, half as long).
fn scenario1(scale: Scale) -> Vec<User> {
    let (bursts, infrequent_jobs) = match scale {
        Scale::Small => (2, 6),
        Scale::Full => (4, 12),
    };
    let burst = || UserArrivals::Bursts { every_s: 30.0, size: 20 };
    let poisson = || UserArrivals::Poisson { mean_interarrival_s: 60.0 / 8.0 };
    vec![
        ("frequent0".into(), "frequent", short_job(), 20 * bursts, burst(), 0.1),
        ("frequent1".into(), "frequent", short_job(), 20 * bursts, burst(), 0.2),
        ("infrequent0".into(), "infrequent", short_job(), infrequent_jobs, poisson(), 0.2),
        ("infrequent1".into(), "infrequent", short_job(), infrequent_jobs, poisson(), 0.3),
    ]
}

/// Scenario 2 (§5.2.1): 4 users submit many tiny jobs at once, with fixed start delays of 0.1 s
/// apart; the benchmark's file has 30 jobs a user (Table 1's slowdowns are its response times
/// over 0.85 s: tiny jobs). Small scale: 15 jobs a user.
fn scenario2(scale: Scale) -> Vec<User> {
    let jobs = match scale {
        Scale::Small => 15,
        Scale::Full => 30,
    };
    ["user0", "user1", "user2", "user3"]
        .into_iter()
        .enumerate()
        .map(|(k, name)| {
            let at_once = UserArrivals::Bursts { every_s: 1.0, size: jobs };
            (name.into(), name, tiny_job(), jobs, at_once, 0.1 * (k + 1) as f64)
        })
        .collect()
}

const POLICIES: [(&str, &str); 4] = [("UJF", "ujf"), ("UWFQ", "uwfq"), ("CFQ", "cfq"), ("job-fair", "job-fair")];

/// Index of the extra runs after [`POLICIES`]': CFQ given every stage's true size, and CFQ's
/// spec simulated a second time (which must schedule exactly as the first).
const CFQ_WITH_STAGE_SIZES: usize = POLICIES.len();
const CFQ_AGAIN: usize = POLICIES.len() + 1;

/// What the AMs tell the scheduler of their jobs' sizes.
#[derive(Clone, Copy, PartialEq)]
enum Estimates {
    /// DAG hints with every stage's true size: the paper's oracle gives UWFQ and UJF the job's
    /// runtime, which our hints carry as the sum of its stages.
    Hints,
    /// No hints: the scheduler sizes a stage by its asks (tasks × `<uwfq-default-task-sec>`).
    /// This is how the paper's CFQ ran: its benchmark's estimator has job runtimes preset but
    /// learns stage runtimes only from completed jobs of the same class (1 s for every stage
    /// until one has completed), so CFQ ordered the stages of jobs submitted together as
    /// equals, all first stages before any second one, and "finishes them all only at the very
    /// end" (§5.2.2). With true stage sizes CFQ would run a job's short later stages ahead of
    /// the others' first ones (measured: scenario 2's CFQ at 26.0 s against the paper's 43.2 s).
    AsksOnly,
}

/// A run of `users` on the paper's cluster under UWFQ's app policy `app`.
fn spec(name: String, app: &str, estimates: Estimates, users: Vec<User>) -> Spec {
    let users = users
        .into_iter()
        .map(|(name, class, source, jobs, arrivals, first_arrival_s)| UserSpec {
            name,
            source,
            jobs,
            arrivals,
            first_arrival_s,
            class: Some(class.into()),
        })
        .collect();
    Spec {
        name,
        seed: 6,
        cluster: ClusterSpec { machines: 4, machines_per_rack: 40, machine: das5_machine() },
        scheduler: SchedulerSpec {
            policy: Some("drf".into()),
            app_policy: Some(app.into()),
            // The paper's grace period: 2 resource-seconds, about 2 s of wall time here.
            uwfq_grace_period_s: Some(2.0),
            ..Default::default()
        },
        sim: SimSpec { heartbeat_ms: HEARTBEAT_MS, hints: estimates == Estimates::Hints, ..sim_defaults() },
        workload: WorkloadSpec::Users { users, queue_per_user: false, job_as_user: false },
    }
}

/// One scenario's runs, one per policy in [`POLICIES`] order, then [`CFQ_WITH_STAGE_SIZES`] and
/// [`CFQ_AGAIN`].
/// The paper's Table 1 runs every scheduler with Spark's default partitioning (runtime
/// partitioning only in its -P rows), so stages keep their 32 tasks.
fn run(ctx: &Ctx, tag: &str, users: fn(Scale) -> Vec<User>) -> Result<(Vec<RunOutput>, Vec<Summary>)> {
    let estimates = |app: &str| if app == "cfq" { Estimates::AsksOnly } else { Estimates::Hints };
    let specs: Vec<Spec> = POLICIES
        .iter()
        .map(|(label, app)| spec(format!("uwfq-{tag}-{}", label.to_lowercase()), app, estimates(app), users(ctx.scale)))
        .chain([
            spec(format!("uwfq-{tag}-cfq-stage-sizes"), "cfq", Estimates::Hints, users(ctx.scale)),
            spec(format!("uwfq-{tag}-cfq-again"), "cfq", Estimates::AsksOnly, users(ctx.scale)),
        ])
        .collect();
    Ok(run_parallel(&specs, ctx)?.into_iter().unzip())
}

/// Mean of the worst tenth of the response times (s), Table 1's "worst 10%".
fn worst_tenth_s(run: &RunOutput) -> f64 {
    let mut rt: Vec<i64> = run.jobs.iter().map(|j| j.jct_ms()).collect();
    rt.sort_unstable_by(|a, b| b.cmp(a));
    let n = rt.len().div_ceil(10).max(1);
    rt[..n].iter().sum::<i64>() as f64 / n as f64 / 1000.0
}

/// Prints a scenario's table (per policy: average and worst-10% response time, slowdown over
/// the job's `idle_s`, two job classes' response times, DVR/DSR against UJF) and returns each
/// policy's average and per-class response times. `classes`: (column title, class).
fn table(
    r: &mut Findings,
    runs: &[RunOutput],
    sums: &[Summary],
    idle_s: f64,
    classes: [(&str, &str); 2],
) -> (Vec<f64>, [Vec<f64>; 2]) {
    let _ = writeln!(
        r,
        "   {:<10} {:>9} {:>9} {:>9} {:>11} {:>11} {:>7} {:>5} {:>7} {:>5}",
        "scheduler", "avg RT s", "worst10%", "slowdown", classes[0].0, classes[1].0, "DVR", "viol", "DSR", "slack"
    );
    let mut avg = Vec::new();
    let mut by_class = [Vec::new(), Vec::new()];
    for (k, (label, _)) in POLICIES.iter().enumerate() {
        let d = deadline_ratios(&runs[k], &runs[0]);
        let ratios = if k == 0 {
            format!("{:>7} {:>5} {:>7} {:>5}", "-", "-", "-", "-")
        } else {
            format!("{:>7.2} {:>5} {:>7.2} {:>5}", d.dvr, d.violations, d.dsr, d.slacks)
        };
        let a = sums[k].jct.avg_s;
        let c = classes.map(|(_, c)| class_avg(&sums[k], c));
        let _ = writeln!(
            r,
            "   {:<10} {:>9.1} {:>9.1} {:>9.1} {:>11.1} {:>11.1} {}",
            label,
            a,
            worst_tenth_s(&runs[k]),
            a / idle_s,
            c[0],
            c[1],
            ratios
        );
        avg.push(a);
        by_class[0].push(c[0]);
        by_class[1].push(c[1]);
    }
    (avg, by_class)
}

/// The paper's Table 1 per scheduler (UJF, UWFQ, CFQ, Fair): average response time and two
/// per-user columns (s). Scenario 1: frequent and infrequent users; scenario 2: the first and
/// the last user to arrive.
const TABLE1_SCENARIO1: [(f64, f64, f64); 4] =
    [(43.1, 48.8, 5.13), (29.4, 33.1, 4.50), (32.5, 32.3, 34.2), (44.0, 44.5, 40.8)];
const TABLE1_SCENARIO2: [(f64, f64, f64); 4] =
    [(29.1, 25.4, 33.3), (25.5, 15.8, 31.3), (43.2, 36.7, 47.3), (28.1, 21.4, 33.7)];

fn paper_rows(
    r: &mut Findings,
    scenario: &str,
    table: &[(f64, f64, f64); 4],
    avg: &[f64],
    by: &[Vec<f64>; 2],
    cols: [&str; 2],
) {
    for (k, (label, _)) in POLICIES.iter().enumerate() {
        let (paper_avg, paper_a, paper_b) = table[k];
        r.paper(format!("{scenario}: {label} average response time (s)"), paper_avg, avg[k]);
        r.paper(format!("{scenario}: {label} {} response time (s)", cols[0]), paper_a, by[0][k]);
        r.paper(format!("{scenario}: {label} {} response time (s)", cols[1]), paper_b, by[1][k]);
    }
}

/// Why a check has no run that must fail it: in the paper's Table 1 every scheduler beats CFQ
/// in scenario 2 and serves the infrequent users better than job-fair in scenario 1.
const EVERYONE_BEATS_IT: &str = "every scheduler the paper runs does this too (Table 1), so no run can fail it";

/// The paper's headline in either scenario: UWFQ's average response time below UJF's and CFQ's.
/// Each baseline is a scheduler of Table 1 that does not beat that one in the scenario, by the
/// paper's numbers, or (`Err`) the one nearest to it where every scheduler does.
fn beats_ujf_and_cfq(r: &mut Findings, scenario: &str, avg: &[f64], baselines: [Result<usize, usize>; 2]) {
    for ((k, other), baseline) in [(0, "UJF"), (2, "CFQ")].into_iter().zip(baselines) {
        let (b, enforced) = match baseline {
            Ok(b) => (b, Ok(())),
            Err(b) => (b, Err(EVERYONE_BEATS_IT)),
        };
        r.lower(
            format!("{scenario}: UWFQ has a lower average response time than {other} (s)"),
            ("UWFQ", avg[1]),
            (other, avg[k]),
            (POLICIES[b].0, avg[b]),
            enforced,
        );
    }
}

/// The macro-benchmark's trace window (§5.3: "a period of 500 seconds"); small scale: 250 s.
fn macro_window_s(scale: Scale) -> f64 {
    match scale {
        Scale::Small => 250.0,
        Scale::Full => 500.0,
    }
}

/// Job counts of the five large users (§5.3: "5 large users"): the released configuration's
/// five users with the most work hold 23, 11, 8, 5 and 3 jobs.
const MACRO_LARGE_JOBS: [usize; 5] = [23, 11, 8, 5, 3];

/// Job counts of the other 20 users (§5.3: "the majority only schedule infrequent small jobs"):
/// the released configuration's other users hold 14, 7, 4, 3, 3, 2, 2, 2, 2 and eight single
/// jobs; its three users with no job left after the filter get one each here, so that all of
/// §5.3's 25 users take part (100 jobs in all against the file's 97).
const MACRO_SMALL_JOBS: [usize; 20] = [14, 7, 4, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1];

/// Quantiles of a job's computing work (core-seconds) in the released configuration (97 jobs
/// after `macro_bench_analysis.py`'s filter, sizes its `task_runtime_s` summed per workflow):
/// minimum, 10th, 25th, 50th, 75th, 90th percentile and maximum. The maximum is about 10x the
/// median: §5.3 drops "any jobs whose runtime is 10x longer than the initial median".
const MACRO_WORK_QUANTILES: [(f64, f64); 7] =
    [(0.0, 2.1), (0.10, 4.6), (0.25, 21.4), (0.50, 75.7), (0.75, 199.8), (0.90, 413.3), (1.0, 793.4)];

/// §5.3: the jobs are scaled "to achieve around 100% or above theoretical resource
/// utilization"; we scale the drawn computing work so that the window's jobs, loading included,
/// are exactly the cluster's 32 cores for the window.
const MACRO_UTILIZATION: f64 = 1.0;

/// The arrivals end before the window does: the released configuration's last job arrives at
/// 454 s of 500 s.
const MACRO_LAST_ARRIVAL: f64 = 0.92;

/// The most jobs a large user submits at one instant: the released configuration's large
/// users submit their jobs in groups (up to 5 at one instant).
const MACRO_BURST_MAX: usize = 5;

/// Small users draw their jobs' work below this quantile of [`MACRO_WORK_QUANTILES`]: §5.3's
/// "infrequent small jobs", with the bound set so that the large users' jobs are "more than
/// 90% of the total workload" (the draw gives 91%). The released configuration's small users
/// hold a third of its work; we follow the paper's text.
const MACRO_SMALL_QUANTILE: f64 = 0.3;

const MACRO_SEED: u64 = 2014;

/// The interpolated work quantile `q` (log-linear between [`MACRO_WORK_QUANTILES`]' knots).
fn macro_work_at(q: f64) -> f64 {
    let k = MACRO_WORK_QUANTILES.windows(2).find(|w| q <= w[1].0).expect("q in [0, 1]");
    let ((q0, w0), (q1, w1)) = (k[0], k[1]);
    (w0.ln() + (q - q0) / (q1 - q0) * (w1.ln() - w0.ln())).exp()
}

/// One macro-benchmark job of `compute_ms` core-milliseconds of computing: the micro-benchmarks'
/// job type with its UDF's loop set to that work. Each benchmark job is a `LoopCustom` job,
/// which loads the same taxi file and runs a UDF sized by the trace: `task_runtime_s` seconds
/// become a loop of 3.216 x t^1.221 iterations (the benchmark's fit), so 100 iterations are
/// 16.7 s, within 2% of our Loop100's 16.9 core-s of computing; we read `task_runtime_s` as
/// core-seconds of computing. The loading and collecting stages are [`job`]'s, and the
/// computing stage keeps the file's skew: the straggler holds Loop100's share (1.69 s of
/// 16.9 core-s).
/// A trace workflow of several tasks (12 of the file's 97, most of them large) runs as several
/// Spark jobs at once in the benchmark, each told the whole workflow's runtime as its job
/// estimate; we run it as one job of their summed work, which keeps that estimate (the paper's
/// response time is the workflow's). Split into parts, each part's DAG hint would be its own
/// size and UWFQ would run the parts as small jobs (tried with 1 in 3 of the large users'
/// above-median workflows split into 2 to 14 parts: UWFQ's first 80% at 23.4 s against UJF's
/// 17.5 s, the paper's trend reversed).
fn macro_job(compute_ms: f64) -> Vec<FixedStage> {
    let loop100 = 31.0 * LOOP100_TASK_MS as f64 + LOOP100_STRAGGLER_MS as f64;
    let straggler = compute_ms * LOOP100_STRAGGLER_MS as f64 / loop100;
    let task = ((compute_ms - straggler) / 31.0).round().max(1.0) as u32;
    job_stages(task, (straggler.round() as u32).max(task))
}

/// Core-milliseconds of work in a chain of fixed stages.
fn fixed_work_ms(stages: &[FixedStage]) -> f64 {
    stages.iter().map(|s| (s.tasks as f64 - 1.0) * s.task_ms as f64 + s.straggler_ms.unwrap_or(s.task_ms) as f64).sum()
}

/// The macro-benchmark (§5.3): 25 users, 5 large ones submitting groups of jobs drawn from the
/// whole size distribution and 20 submitting a few small jobs (below
/// [`MACRO_SMALL_QUANTILE`]), arrivals uniform over the window, the work scaled to
/// [`MACRO_UTILIZATION`]. The paper's trace file is not reproduced: the users' job counts,
/// the size distribution and the arrivals' spread are the released configuration's, the draw
/// is ours. That file is not exactly what Table 2 ran: the run data behind Table 2 counts 174
/// jobs, its first two users holding 66 and 12 where the file has 1 and none (their other
/// users' counts match the file's); we follow the file. Small scale: half the window and half
/// the jobs (rounded up) of every user.
fn macro_users(scale: Scale) -> Vec<User> {
    let window_s = macro_window_s(scale);
    let jobs = |n: usize| match scale {
        Scale::Small => n.div_ceil(2),
        Scale::Full => n,
    };
    let mut rng = ChaCha8Rng::seed_from_u64(MACRO_SEED);
    let last_s = MACRO_LAST_ARRIVAL * window_s;
    // (name, class, arrival times, computing work in core-s), before scaling.
    let mut drawn: Vec<(String, &str, Vec<f64>, Vec<f64>)> = Vec::new();
    for (k, &n) in MACRO_LARGE_JOBS.iter().enumerate() {
        let n = jobs(n);
        let mut at = Vec::new();
        while at.len() < n {
            let t: f64 = rng.gen_range(0.0..last_s);
            let burst = rng.gen_range(1..=MACRO_BURST_MAX).min(n - at.len());
            at.extend(std::iter::repeat_n(t, burst));
        }
        let work = (0..n).map(|_| macro_work_at(rng.gen_range(0.0..1.0))).collect();
        drawn.push((format!("large{k}"), "large", at, work));
    }
    for (k, &n) in MACRO_SMALL_JOBS.iter().enumerate() {
        let n = jobs(n);
        let at = (0..n).map(|_| rng.gen_range(0.0..last_s)).collect();
        let work = (0..n).map(|_| macro_work_at(rng.gen_range(0.0..MACRO_SMALL_QUANTILE))).collect();
        drawn.push((format!("small{k}"), "small", at, work));
    }
    let total_jobs: usize = drawn.iter().map(|d| d.2.len()).sum();
    let fixed_ms = fixed_work_ms(&macro_job(0.0));
    let compute_ms: f64 = drawn.iter().flat_map(|d| d.3.iter()).sum::<f64>() * 1000.0;
    let target_ms = MACRO_UTILIZATION * 32.0 * window_s * 1000.0 - total_jobs as f64 * fixed_ms;
    let factor = target_ms / compute_ms;
    drawn
        .into_iter()
        .map(|(name, class, mut at, work)| {
            at.sort_by(f64::total_cmp);
            let stages = work.iter().map(|w| macro_job(w * 1000.0 * factor)).collect::<Vec<_>>();
            let n = stages.len();
            (name, class, SourceSpec::FixedEach { jobs: stages }, n, UserArrivals::At { at_s: at }, 0.0)
        })
        .collect()
}

/// The macro-benchmark's runs, in [`POLICIES`] order, then CFQ's spec simulated again. Every
/// policy gets true stage sizes here, CFQ included: the benchmark's `LoopCustom` job sets its
/// UDF's runtime as the stage estimate (`task.runtime`) and the workflow's as the job's, and
/// Table 2's CFQ orders jobs by size (it cuts the first 80% of jobs' response time by 60%),
/// which it could not with the micro-benchmarks' equal asks-only estimates.
fn run_macro(ctx: &Ctx) -> Result<(Vec<RunOutput>, Vec<Summary>)> {
    let specs: Vec<Spec> = POLICIES
        .iter()
        .map(|(label, app)| {
            spec(format!("uwfq-macro-{}", label.to_lowercase()), app, Estimates::Hints, macro_users(ctx.scale))
        })
        .chain([spec("uwfq-macro-cfq-again".into(), "cfq", Estimates::Hints, macro_users(ctx.scale))])
        .collect();
    Ok(run_parallel(&specs, ctx)?.into_iter().unzip())
}

/// Table 2's response-time groups: the run's response times sorted, their mean over the first
/// 80%, the next 15% and the last 5% (s). §5.3.1 calls the middle group "medium-sized jobs",
/// but the benchmark's analysis (`visualize_results.py`) groups by response time, cutting at
/// floor(0.8 n) and floor(0.95 n); so do we.
fn rt_groups(run: &RunOutput) -> [f64; 3] {
    let mut rt: Vec<f64> = run.jobs.iter().map(|j| j.jct_ms() as f64 / 1000.0).collect();
    rt.sort_by(f64::total_cmp);
    let n = rt.len();
    let (a, b) = ((0.8 * n as f64).floor() as usize, (0.95 * n as f64).floor() as usize);
    let mean = |v: &[f64]| if v.is_empty() { 0.0 } else { v.iter().sum::<f64>() / v.len() as f64 };
    [mean(&rt[..a]), mean(&rt[a..b]), mean(&rt[b..])]
}

/// Table 2 per scheduler (UJF, UWFQ, CFQ, Fair; Spark's default partitioning): runtime,
/// average response time, and the first 80%, next 15% and last 5% of jobs' (s).
const TABLE2: [[f64; 5]; 4] = [
    [565.7, 54.12, 27.43, 140.9, 215.5],
    [624.2, 41.42, 12.33, 92.36, 343.5],
    [621.0, 37.05, 11.05, 85.67, 298.1],
    [563.1, 46.12, 28.29, 100.5, 164.4],
];

/// Why the macro-benchmark's average against UJF is reported: Table 2 has no run to fail it.
const EVERY_TABLE2_SCHEDULER_BEATS_UJF: &str =
    "every scheduler of Table 2 has a lower average response time than UJF, so no run the paper reports can fail it";

/// Why the checks whose baseline is Table 2's Fair (or that need job-fair to beat UJF) are
/// reported. Measured at full scale: our job-fair gives every running job an equal share, so
/// the large users' many jobs crowd out the small users' (first 80%: 21.0 s against UJF's
/// 17.3 s) and its last 5% finish later than UJF's too (270.7 against 262.3 s); its average is
/// above UJF's (48.3 against 46.6 s). Table 2's Fair is level with UJF on the first 80% and
/// faster beyond (100.5 and 164.4 against 140.9 and 215.5 s). Running the trace workflows of
/// several tasks as several Spark jobs, which a per-job share favours, did not close it
/// (the split tried in [`macro_job`]'s note: job-fair's last 5% still 223.5 against UJF's
/// 207.5 s), so the cause is open.
const JOB_FAIR_IS_NOT_TABLE2_FAIR: &str = "our job-fair is slower than UJF on this workload (first 80% and last 5%), Table 2's Fair faster: the baseline behaves unlike the paper's Fair, cause open";

/// Table 2's columns, as the paper rows name them (`macro: SCHEDULER COLUMN (s)`).
pub const MACRO_COLUMNS: [&str; 5] =
    ["runtime", "average response time", "first 80% response time", "next 15% response time", "last 5% response time"];

/// Runs and reports the macro-benchmark. Table 2's -P rows (runtime partitioning, §4) are not
/// run: the simulator's stages keep the task counts they are given.
fn macro_benchmark(ctx: &Ctx, r: &mut Findings) -> Result<()> {
    let (runs, sums) = run_macro(ctx)?;
    let users = macro_users(ctx.scale);
    let work = |class: &str| -> f64 {
        users
            .iter()
            .filter(|u| u.1 == class)
            .map(|u| match &u.2 {
                SourceSpec::FixedEach { jobs } => jobs.iter().map(|j| fixed_work_ms(j)).sum::<f64>(),
                _ => 0.0,
            })
            .sum()
    };
    let (large, small) = (work("large"), work("small"));
    let window_s = macro_window_s(ctx.scale);
    let _ = writeln!(
        r,
        "-- macro-benchmark (§5.3): {} users, {} jobs over {window_s:.0} s, work {:.0}% of the 32 cores' window; the 5 large users' share of it {:.0}% (paper: more than 90%)",
        users.len(),
        users.iter().map(|u| u.3).sum::<usize>(),
        100.0 * (large + small) / (32.0 * window_s * 1000.0),
        100.0 * large / (large + small)
    );
    let _ = writeln!(
        r,
        "   {:<10} {:>9} {:>9} {:>9} {:>9} {:>9} {:>6} {:>7} {:>5} {:>7} {:>5}",
        "scheduler", "runtime s", "avg RT s", "0-80%", "80-95%", "95-100%", "util", "DVR", "viol", "DSR", "slack"
    );
    let mut rows = Vec::new();
    for (k, (label, _)) in POLICIES.iter().enumerate() {
        let d = deadline_ratios(&runs[k], &runs[0]);
        let ratios = if k == 0 {
            format!("{:>7} {:>5} {:>7} {:>5}", "-", "-", "-", "-")
        } else {
            format!("{:>7.2} {:>5} {:>7.2} {:>5}", d.dvr, d.violations, d.dsr, d.slacks)
        };
        // Table 2's "Runtime" is the benchmark's first arrival to its last finish: the makespan.
        let g = rt_groups(&runs[k]);
        let row = [sums[k].makespan_s, sums[k].jct.avg_s, g[0], g[1], g[2]];
        let _ = writeln!(
            r,
            "   {:<10} {:>9.1} {:>9.2} {:>9.2} {:>9.2} {:>9.1} {:>5.0}% {}",
            label,
            row[0],
            row[1],
            row[2],
            row[3],
            row[4],
            100.0 * crate::fidelity::utilization(&sums[k]),
            ratios
        );
        rows.push(row);
    }
    let _ = writeln!(
        r,
        "   UWFQ paper, Table 2 DVR / DSR: UWFQ 0.44 / 0.51; CFQ 0.55 / 0.52; Fair 1.00 / 0.42 (its -P rows need runtime partitioning, not run)"
    );
    for (k, (label, _)) in POLICIES.iter().enumerate() {
        for (c, col) in MACRO_COLUMNS.iter().enumerate() {
            r.paper(format!("macro: {label} {col} (s)"), TABLE2[k][c], rows[k][c]);
        }
    }
    // Table 2: job-fair (Fair) serves the first 80% of jobs no better than UJF (28.29 vs 27.43 s).
    for (k, who) in [(1, "UWFQ"), (2, "CFQ")] {
        r.lower(
            format!("macro: {who} cuts the first 80% of jobs' response time against UJF (s)"),
            (who, rows[k][2]),
            ("UJF", rows[0][2]),
            ("job-fair", rows[3][2]),
            Ok(()),
        );
    }
    // Every scheduler of Table 2 has a lower average than UJF (Fair 46.12 s against 54.12 s),
    // so the paper has no run that must fail this; job-fair is the one nearest to UJF.
    r.lower(
        "macro: UWFQ has a lower average response time than UJF (s)",
        ("UWFQ", rows[1][1]),
        ("UJF", rows[0][1]),
        ("job-fair", rows[3][1]),
        Err(EVERY_TABLE2_SCHEDULER_BEATS_UJF),
    );
    // Table 2: UWFQ's average (41.42 s) is below Fair's (46.12 s), which UJF's (54.12 s) is not.
    r.lower(
        "macro: UWFQ has a lower average response time than job-fair (s)",
        ("UWFQ", rows[1][1]),
        ("job-fair", rows[3][1]),
        ("UJF", rows[0][1]),
        Err(JOB_FAIR_IS_NOT_TABLE2_FAIR),
    );
    // §5.3.1: the longest jobs pay for it, 60% slower than under UJF; Fair's last 5% are faster
    // than UJF's (164.4 against 215.5 s), so Fair must fail it.
    let last_slower = |who: &str, k: usize| Verdict {
        who: format!("{who} vs UJF"),
        holds: rows[k][4] > rows[0][4],
        detail: format!("{:.1} vs {:.1} s", rows[k][4], rows[0][4]),
    };
    r.reported_trend(
        "macro: UWFQ's last 5% of jobs wait longer than under UJF",
        last_slower("UWFQ", 1),
        Some(last_slower("job-fair", 3)),
        JOB_FAIR_IS_NOT_TABLE2_FAIR,
    );
    r.distinct(("macro UWFQ", &runs[1]), ("CFQ", &runs[2]), &runs[POLICIES.len()]);
    for (k, (label, _)) in POLICIES.iter().enumerate() {
        r.loaded(&format!("macro {label}"), &sums[k]);
    }
    Ok(())
}

pub fn users(ctx: &Ctx, r: &mut Findings) -> Result<()> {
    let _ = writeln!(
        r,
        "== UWFQ (user weighted fair queuing), the paper's micro-benchmarks (§5.2) and macro-benchmark (§5.3) on 4 x 8 cores"
    );
    let _ = writeln!(r, "   jobs: 3 chained stages of 32, 32 and 1 one-core tasks; short 2.25 s and tiny 0.90 s alone, 25 and 11.5 core-s of work");
    let _ = writeln!(
        r,
        "   DAG hints give UWFQ and UJF perfect runtime estimates, as the paper assumes; CFQ sizes stages by their asks, as the paper's ran; heartbeat {HEARTBEAT_MS} ms"
    );

    let (runs, sums) = run(ctx, "s1", scenario1)?;
    let _ = writeln!(r, "-- scenario 1: 2 frequent users (bursts of 20 short jobs every 30 s) and 2 infrequent users (short jobs, Poisson 8/min)");
    let (avg, by) = table(r, &runs, &sums, 2.25, [("frequent", "frequent"), ("infrequent", "infrequent")]);
    let _ =
        writeln!(r, "   UWFQ paper, Table 1 scenario 1 DVR / DSR: UWFQ 0.23 / 0.37; CFQ 3.69 / 0.38; Fair 3.25 / 0.27");
    paper_rows(r, "scenario 1", &TABLE1_SCENARIO1, &avg, &by, ["frequent users'", "infrequent users'"]);
    // Table 1, scenario 1: job-fair is behind UJF and CFQ, and far behind UJF for infrequent users.
    beats_ujf_and_cfq(r, "scenario 1", &avg, [Ok(3), Ok(3)]);
    r.lower(
        "infrequent users fare better under UWFQ than under UJF (s)",
        ("UWFQ", by[1][1]),
        ("UJF", by[1][0]),
        ("job-fair", by[1][3]),
        Ok(()),
    );
    r.lower(
        "infrequent users fare better under UWFQ than under job-fair (s)",
        ("UWFQ", by[1][1]),
        ("job-fair", by[1][3]),
        ("CFQ", by[1][2]),
        Err(EVERYONE_BEATS_IT),
    );
    r.distinct(("scenario 1 UWFQ", &runs[1]), ("CFQ", &runs[2]), &runs[CFQ_AGAIN]);
    for (k, (label, _)) in POLICIES.iter().enumerate() {
        r.loaded(&format!("scenario 1 {label}"), &sums[k]);
    }

    let (runs, sums) = run(ctx, "s2", scenario2)?;
    let _ = writeln!(r, "-- scenario 2: 4 users each submitting their tiny jobs at once, 0.1 s apart");
    let (avg, by) = table(r, &runs, &sums, 0.90, [("first user", "user0"), ("last user", "user3")]);
    let _ =
        writeln!(r, "   UWFQ paper, Table 1 scenario 2 DVR / DSR: UWFQ 0.50 / 0.43; CFQ 0.80 / 0.51; Fair 0.78 / 0.31");
    paper_rows(r, "scenario 2", &TABLE1_SCENARIO2, &avg, &by, ["first user's", "last user's"]);
    // Table 1, scenario 2: CFQ is behind UJF, and everyone is ahead of CFQ (job-fair the least).
    beats_ujf_and_cfq(r, "scenario 2", &avg, [Ok(2), Err(3)]);
    r.distinct(("scenario 2 UWFQ", &runs[1]), ("CFQ", &runs[2]), &runs[CFQ_AGAIN]);
    // §5.2.2: "CFQ performs the worst out of all schedulers by a significant amount" here, for
    // want of job context; given true stage sizes it would not.
    let others = [0, 1, 3].map(|o| sums[o].jct.avg_s).into_iter().fold(0.0, f64::max);
    let slowest = |who: &str, k: usize| Verdict {
        who: who.into(),
        holds: sums[k].jct.avg_s > others,
        detail: format!("{:.1} s vs at most {others:.1} s", sums[k].jct.avg_s),
    };
    r.trend(
        "scenario 2: CFQ has the slowest average response time",
        slowest("CFQ", 2),
        slowest("CFQ with true stage sizes", CFQ_WITH_STAGE_SIZES),
    );
    for (k, (label, _)) in POLICIES.iter().enumerate() {
        r.loaded(&format!("scenario 2 {label}"), &sums[k]);
    }

    macro_benchmark(ctx, r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::run_spec;

    /// Alone on the cluster, the job types take the paper's 2.25 s and 0.90 s (§5.2).
    #[test]
    fn job_types_alone_take_the_papers_times() {
        for (source, paper_ms) in [(short_job(), 2250), (tiny_job(), 900)] {
            let alone = UserArrivals::Bursts { every_s: 1.0, size: 1 };
            let users = vec![("u".into(), "u", source, 1, alone, 0.0)];
            let run = run_spec(&spec("alone".into(), "uwfq", Estimates::Hints, users), false).unwrap();
            let ms = run.jobs[0].jct_ms();
            assert!((ms - paper_ms).abs() <= paper_ms / 50, "{ms} ms alone, the paper's {paper_ms} ms");
        }
    }
}
