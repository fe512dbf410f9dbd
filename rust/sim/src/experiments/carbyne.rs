//! Carbyne's Table 4 in simulation: Carbyne against DRF, Tetris (the paper's alignment-only
//! packer, and Tetris with its remaining-work term, close to SRTF) and SJF over one queue of jobs,
//! on the paper's set-ups (§5.1): 100 machines of 20 cores, 250 jobs arriving Poisson with a
//! mean of 20 s (and all at once, offline), the Facebook trace on 3000 machines, and the Spark
//! TPC-H trace with its executors reused across tasks.

use super::common::{carbyne_machine, run_parallel, sim_defaults, Ctx, Scale};
use crate::fidelity::{utilization, Findings, Verdict};
use crate::gen::{DemandModel, Family};
use crate::metrics::{improvement, per_job_improvement, Improvement, Summary};
use crate::report;
use crate::sim::output::RunOutput;
use crate::spec::*;
use anyhow::Result;
use std::fmt::Write as _;

/// Checks of effects the paper reports and our set-ups do not reproduce; each is printed with
/// the measured cause in the report and in docs/fidelity.md.
/// Tetris with its remaining-work term is close to SRTF, which the paper does not compare with.
const TETRIS_SRTF_BOUND: &str = "Tetris+SRTF is an SRTF-like upper bound the paper does not run";
/// The paper has Tetris ahead of DRF (Table 4: Carbyne gains 1.59x over DRF, 1.47x over Tetris
/// at the TPC-DS median), so DRF is the run that must not beat it; ours is far weaker.
const WEAK_TETRIS: &str =
    "not reproduced: our alignment-only Tetris is far behind the paper's, so DRF beats it too (see the factors vs Tetris)";
const NOT_REPRODUCED_JAIN: &str =
    "not reproduced: SRTF over the leftover moves shares off DRF's within 60 s windows (see the leftover line above)";
/// The offline case is one burst of jobs: DRF's shares are as even as they get.
const OFFLINE_JAIN: &str = "offline: every job starts at once, so shares are even under any policy at first";

/// Carbyne's baselines as app policies over one queue of jobs: DRF is Carbyne with
/// P(altruism) = 0 (job-level DRF, YARN's priority order inside a job, the paper's DRF with a
/// breadth-first intra-job order), Tetris with fairness knob 0 (§5.1: f -> 0) scoring by
/// alignment alone as the paper's baseline does, Tetris+SRTF adding the remaining-work term (an
/// SRTF-like upper bound beside SJF), SJF by critical path.
const CARBYNE_POLICIES: [(&str, &str, Option<f64>); 5] = [
    ("DRF", "carbyne", Some(0.0)),
    ("Carbyne", "carbyne", Some(1.0)),
    ("Tetris", "tetris", None),
    ("Tetris+SRTF", "tetris-srtf", None),
    ("SJF", "sjf", None),
];
const DRF: usize = 0;
const CARBYNE: usize = 1;
const TETRIS: usize = 2;
const TETRIS_SRTF: usize = 3;
const SJF: usize = 4;
/// DRF's spec simulated a second time, after [`CARBYNE_POLICIES`]' runs: the baseline of the
/// check that Carbyne and DRF schedule differently.
const DRF_AGAIN: usize = CARBYNE_POLICIES.len();

/// The paper's Jain's index (cluster, offline TPC-DS, Fig. 4a): DRF 0.86, CARBYNE 0.05 below,
/// Tetris 0.12 below, SJF 0.22 below (none for Tetris+SRTF, which the paper does not run).
/// Online (Fig. 5a) CARBYNE is 0.06 below DRF.
const PAPER_JAIN: [Option<f64>; 5] = [Some(0.86), Some(0.81), Some(0.74), None, Some(0.64)];

/// How close CARBYNE's average Jain's index must be to DRF's (the paper: 0.05 offline, 0.06
/// online).
const JAIN_TOLERANCE: f64 = 0.06;

/// Table 4's TPC-DS row, [vs DRF, vs Tetris] x [p25, p50, p75, p95] (the paper's text calls the
/// p50 column its average: "1.59x on average and 7.67x at the 95th percentile").
const PAPER_TPCDS: [[f64; 4]; 2] = [[1.17, 1.59, 2.73, 7.67], [1.12, 1.47, 2.23, 6.17]];
const PAPER_FACEBOOK: [[f64; 4]; 2] = [[1.24, 2.75, 4.31, 8.77], [1.24, 2.85, 4.31, 8.88]];

/// One workload the policies are compared on.
struct Setup {
    label: &'static str,
    spec: Spec,
    paper: Option<[[f64; 4]; 2]>,
    note: String,
    offline: bool,
}

/// Generated jobs of a family, with input sizes spread over two orders of magnitude (§5.1:
/// "input sizes from GBs to hundreds of GBs"). `scale` sets the median job's tasks per stage
/// so that the paper's arrival rate loads its cluster: our task model has no data behind it,
/// so the load, not the task count, is what we match. `demands` is multi-resource unless
/// `--demands` says otherwise: the paper's jobs contend on several resources (§4.3).
fn generated(family: Family, scale: f64, demands: DemandModel) -> SourceSpec {
    SourceSpec::Generator { family, scale, input_spread: 100.0, demands }
}

fn setups(scale: Scale, demands: DemandModel) -> Vec<Setup> {
    let small = scale == Scale::Small;
    let base = |name: &str, machines, source, jobs, arrivals, mean_interarrival_s| Spec {
        name: name.into(),
        seed: 4,
        cluster: ClusterSpec { machines, machines_per_rack: 40, machine: carbyne_machine() },
        scheduler: SchedulerSpec { policy: Some("drf".into()), ..Default::default() },
        sim: SimSpec { fairness_over: FairnessOver::Jobs, ..sim_defaults() },
        workload: WorkloadSpec::Carbyne {
            source,
            jobs,
            arrivals,
            mean_interarrival_s,
            time_scale: 1.0,
            queues: 1,
            trace_queues: false,
        },
    };
    // The reduced size keeps the paper's load per machine: a fifth of the machines, a fifth of
    // the jobs' arrival rate. A tenth (25 jobs) left multi-resource runs too few jobs to
    // average over: Carbyne's gain over DRF on BigBench came and went with single jobs.
    let (machines, jobs, gap) = if small { (20, 50, 100.0) } else { (100, 250, 20.0) };
    let mut v = Vec::new();
    for (label, name, family, size, paper) in [
        ("TPC-DS online", "tpcds-online", Family::Tpcds, 0.2, Some(PAPER_TPCDS)),
        ("TPC-H online", "tpch-online", Family::Tpch, 0.3, None),
        ("BigBench online", "bigbench-online", Family::Bigbench, 0.3, None),
    ] {
        v.push(Setup {
            label,
            spec: base(name, machines, generated(family, size, demands), Some(jobs), Arrivals::Poisson, gap),
            paper,
            note: format!(
                "{label}-like generated DAGs (Carbyne's Tables 1-2 shapes), inputs spread 100x, {jobs} jobs arriving \
                 Poisson (mean {gap} s) on {machines} machines"
            ),
            offline: false,
        });
    }
    v.push(Setup {
        label: "TPC-DS offline",
        spec: base(
            "tpcds-offline",
            machines,
            generated(Family::Tpcds, 0.2, demands),
            Some(jobs),
            Arrivals::Together,
            gap,
        ),
        paper: None,
        note: format!(
            "the same TPC-DS-like jobs, {jobs} at t = 0 on {machines} machines (the paper's offline case, Fig. 4)"
        ),
        offline: true,
    });
    let tpch = shared_dir().join("traces/tpch-spark/tpch-10g.json");
    if tpch.exists() {
        // Spark keeps its executors for the job: tasks run back to back in the job's containers.
        // The trace's jobs are small (seconds of work each): the paper's 20 s arrivals would keep
        // a few machines busy at most, so arrivals are faster to load the cluster.
        let (m, jobs, gap) = if small { (2, 60, 1.5) } else { (10, 600, 0.3) };
        let src = SourceSpec::TpchSpark { file: tpch.display().to_string(), options: Default::default() };
        let mut spec = base("tpch-spark", m, src, Some(jobs), Arrivals::Poisson, gap);
        spec.sim.container_reuse = ContainerReuse::Dag;
        v.push(Setup {
            label: "TPC-H (Spark)",
            spec,
            paper: None,
            note: format!(
                "TPC-H queries measured on Spark (10 GB), executors reused across a job's tasks, {jobs} jobs arriving \
                 Poisson (mean {gap} s) on {m} machines; the paper has no Table 4 row for TPC-H"
            ),
            offline: false,
        });
    }
    let swim = shared_dir().join("traces/swim/FB-2009_samples_24_times_1hr_0.tsv");
    if swim.exists() {
        // The sample keeps 58 cores busy on average over its 24 hours; the paper's 3000 machines
        // have 60,000. SWIM's own scaling: every job's data x20 (more tasks of the same size),
        // and the day replayed in 29 minutes (arrival gaps x0.02), which loads them.
        let (m, jobs, time_scale, data_scale) =
            if small { (30, Some(600), 0.02, 20.0) } else { (3000, None, 0.02, 20.0) };
        let options = SwimOptions { data_scale, max_tasks_per_stage: 40_000, ..Default::default() };
        let src = SourceSpec::Swim { file: swim.display().to_string(), options };
        let mut spec = base("facebook", m, src, jobs, Arrivals::Trace, 20.0);
        if let WorkloadSpec::Carbyne { time_scale: t, .. } = &mut spec.workload {
            *t = time_scale;
        }
        v.push(Setup {
            label: "Facebook",
            spec,
            paper: Some(PAPER_FACEBOOK),
            note: format!(
                "SWIM Facebook 2009 sample (MapReduce jobs modelled from bytes), data x{data_scale}, arrival gaps \
                 x{time_scale}, on {m} machines"
            ),
            offline: false,
        });
    }
    v
}

pub fn table4(ctx: &Ctx, r: &mut Findings) -> Result<()> {
    let _ = writeln!(
        r,
        "== Carbyne Table 4 (simulation): CARBYNE vs DRF, Tetris, Tetris+SRTF and SJF, jobs in one queue ordered by the app policy"
    );
    let _ = writeln!(
        r,
        "   DRF = app policy carbyne with altruism-probability 0 (job-level DRF); Tetris = alignment-only packing (the paper's), \
         Tetris+SRTF = alignment and remaining work, both fairness knob 0; SJF by critical path"
    );
    let _ = writeln!(r, "   AMs send DAG hints (estimates) at registration and progress at stage ends and at most every 5 s; 6 resources");
    let _ = writeln!(
        r,
        "   Jain's index over jobs' dominant shares in 60 s windows; busy = the busiest resource's utilisation"
    );
    let _ = writeln!(r, "   generated DAG jobs: {} demands (--demands)", ctx.demands.name());
    for name in ["TPC-H (Spark)", "Facebook"] {
        if !setups(ctx.scale, ctx.demands).iter().any(|s| s.label == name) {
            let _ = writeln!(r, "   ({name} row skipped: its trace was not found under {})", shared_dir().display());
        }
    }
    for setup in setups(ctx.scale, ctx.demands) {
        compare(ctx, r, setup)?;
    }
    Ok(())
}

/// Runs the four policies on one set-up and records its table, paper rows and checks.
fn compare(ctx: &Ctx, r: &mut Findings, setup: Setup) -> Result<()> {
    let Setup { label, spec, paper, note, offline } = setup;
    let specs: Vec<Spec> = CARBYNE_POLICIES
        .iter()
        .map(|(pname, app, alt)| {
            let mut s = spec.clone();
            s.name = format!("{}-{}", spec.name, pname.to_lowercase());
            s.scheduler.app_policy = Some((*app).into());
            s.scheduler.altruism_probability = *alt;
            s
        })
        .collect();
    let again = specs[DRF].clone();
    let specs = [specs, vec![Spec { name: format!("{}-again", again.name), ..again }]].concat();
    let results = run_parallel(&specs, ctx)?;
    let (runs, sums): (Vec<RunOutput>, Vec<Summary>) = results.into_iter().unzip();
    let _ = writeln!(r, "\n-- {label}: {note}");
    let _ = writeln!(
        r,
        "   {:<11} {:>10} {:>10} {:>10} {:>6} {:>22} {:>10}",
        "policy", "avg JCT s", "p50 s", "makespan", "busy", "Jain avg (min..max)", "paper Jain"
    );
    for (k, (pname, _, _)) in CARBYNE_POLICIES.iter().enumerate() {
        let s = &sums[k];
        let _ = writeln!(
            r,
            "   {:<11} {:>10.1} {:>10.1} {:>10.0} {:>5.0}% {:>22} {:>10}",
            pname,
            s.jct.avg_s,
            s.jct.p50_s,
            s.makespan_s,
            100.0 * utilization(s),
            format!("{:.2} ({:.2}..{:.2})", s.fairness.avg, s.fairness.min, s.fairness.max),
            PAPER_JAIN[k].map_or("-".to_string(), |j| format!("{j:.2}"))
        );
    }
    let by_resource: Vec<String> =
        sums[DRF].utilization.iter().map(|(k, u)| format!("{k} {:.0}%", 100.0 * u)).collect();
    let _ = writeln!(r, "   DRF busy by resource: {}", by_resource.join(", "));
    let leftover = leftover_fraction(&sums[CARBYNE]);
    let _ = writeln!(
        r,
        "   Carbyne started {:.0}% of its resources from the leftover (SRTF, then packing), {:.0}% as must-start tasks within jobs' DRF shares",
        100.0 * leftover,
        100.0 * (1.0 - leftover)
    );
    let _ = writeln!(
        r,
        "   factor of improvement of CARBYNE: avg JCT ratio; per-job factors (percentiles)   ours (paper Table 4)"
    );
    for (k, base) in [DRF, TETRIS, TETRIS_SRTF, SJF].into_iter().enumerate() {
        let avg = improvement(&sums[base].jct, &sums[CARBYNE].jct).avg;
        let f = per_job_improvement(&runs[base], &runs[CARBYNE]);
        let p = |i: usize| paper.filter(|_| k < 2).map(|p| format!(" ({:.2})", p[k][i])).unwrap_or_default();
        let _ = writeln!(
            r,
            "   vs {:<11}: avg {:.2}   p25 {:.2}{}  p50 {:.2}{}  p75 {:.2}{}  p95 {:.2}{}",
            CARBYNE_POLICIES[base].0,
            avg,
            f.p25,
            p(0),
            f.p50,
            p(1),
            f.p75,
            p(2),
            f.p95,
            p(3)
        );
        if let Some(paper) = paper.filter(|_| k < 2) {
            paper_rows(r, label, CARBYNE_POLICIES[base].0, &paper[k], &f);
        }
    }
    let (drf, car, tet, srtf) = (&sums[DRF], &sums[CARBYNE], &sums[TETRIS], &sums[TETRIS_SRTF]);
    let sjf = ("SJF", sums[SJF].jct.avg_s);
    // SJF, shortest first with no share at all, is what the paper ranks behind Carbyne and DRF.
    r.lower(
        format!("{label}: Carbyne beats DRF on average JCT (s)"),
        ("Carbyne", car.jct.avg_s),
        ("DRF", drf.jct.avg_s),
        sjf,
        Ok(()),
    );
    r.lower(
        format!("{label}: Carbyne beats Tetris on average JCT (s)"),
        ("Carbyne", car.jct.avg_s),
        ("Tetris", tet.jct.avg_s),
        ("DRF", drf.jct.avg_s),
        Err(WEAK_TETRIS),
    );
    r.lower(
        format!("{label}: Carbyne beats Tetris+SRTF on average JCT (s)"),
        ("Carbyne", car.jct.avg_s),
        ("Tetris+SRTF", srtf.jct.avg_s),
        sjf,
        Err(TETRIS_SRTF_BOUND),
    );
    let close = |x: &Summary| x.fairness.avg >= drf.fairness.avg - JAIN_TOLERANCE;
    r.reported_trend(
        format!("{label}: Carbyne's Jain's index within {JAIN_TOLERANCE:.2} of DRF's (paper 0.05-0.06)"),
        Verdict {
            who: "Carbyne".into(),
            holds: close(car),
            detail: format!("{:.2} vs {:.2}", car.fairness.avg, drf.fairness.avg),
        },
        Some(Verdict { who: "SJF".into(), holds: close(&sums[SJF]), detail: format!("{:.2}", sums[SJF].fairness.avg) }),
        if offline { OFFLINE_JAIN } else { NOT_REPRODUCED_JAIN },
    );
    // What altruism keeps over an SRTF-like order: the must-start tasks within DRF shares and a
    // leftover spread by need. The paper ranks Carbyne's fairness above its packer's and
    // SJF's; Tetris+SRTF is the SRTF-like order our Carbyne must not collapse into (a swap to
    // it fails here). SJF, shortest first with no share at all, is the run that must fail.
    // Identical schedules can differ in the index's last bits (windows are summed in hash
    // order), so fairer means by at least 0.01.
    let fairer = |x: &Summary| x.fairness.avg >= srtf.fairness.avg + 0.01;
    r.trend(
        format!("{label}: Carbyne's Jain's index above Tetris+SRTF's"),
        Verdict {
            who: "Carbyne".into(),
            holds: fairer(car),
            detail: format!("{:.2} vs {:.2}", car.fairness.avg, srtf.fairness.avg),
        },
        Verdict { who: "SJF".into(), holds: fairer(&sums[SJF]), detail: format!("{:.2}", sums[SJF].fairness.avg) },
    );
    r.distinct(
        (&format!("Carbyne ({label})"), &runs[CARBYNE]),
        (&format!("DRF ({label})"), &runs[DRF]),
        &runs[DRF_AGAIN],
    );
    // The set-up must load the cluster under the fairness baseline, and Carbyne must keep it
    // loaded; the others' utilisation is in the table (SRTF-like orders can leave it idler).
    for k in [DRF, CARBYNE] {
        r.loaded(&format!("{label} {}", CARBYNE_POLICIES[k].0), &sums[k]);
    }
    report::plot_jct_cdf(
        &[
            ("DRF", &runs[DRF]),
            ("Carbyne", &runs[CARBYNE]),
            ("Tetris", &runs[TETRIS]),
            ("Tetris+SRTF", &runs[TETRIS_SRTF]),
            ("SJF", &runs[SJF]),
        ],
        None,
        &ctx.out.join(format!("{}-jct-cdf.svg", spec.name)),
    )?;
    Ok(())
}

/// The paper's factors against one baseline beside ours, like with like: Table 4's columns are
/// percentiles of per-job factors of improvement (its text calls the p50 the average).
fn paper_rows(r: &mut Findings, label: &str, base: &str, paper: &[f64; 4], f: &Improvement) {
    r.paper(format!("{label}: factor vs {base}, per-job p50"), paper[1], f.p50);
    r.paper(format!("{label}: factor vs {base}, per-job p95"), paper[3], f.p95);
}

/// The share of Carbyne's started resources that came from the leftover (0 when unreported).
fn leftover_fraction(s: &Summary) -> f64 {
    s.app_policy.as_ref().and_then(|v| v.get("leftover_fraction")).and_then(|v| v.as_f64()).unwrap_or(0.0)
}
