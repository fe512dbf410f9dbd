//! Carbyne's Table 4 in simulation: Carbyne against DRF, Tetris and SJF over one queue of jobs.

use super::common::{carbyne_machine, save, sim_defaults, Ctx, Scale};
use crate::fidelity::{Findings, Verdict};
use crate::gen::Family;
use crate::metrics::{improvement, per_job_improvement, Summary};
use crate::report;
use crate::runner::run_spec;
use crate::spec::*;
use anyhow::Result;
use std::fmt::Write as _;

/// Open fidelity work that checks of the Carbyne experiment wait for: reported, not enforced,
/// until then.
const CARBYNE_OPEN: &str = "Carbyne fidelity is open work";

/// Carbyne's baselines as app policies over one queue of jobs: DRF is Carbyne with
/// P(altruism) = 0 (job-level DRF, YARN's priority order inside a job, the paper's DRF with a
/// breadth-first intra-job order), Tetris with fairness knob 0, SJF by critical path.
const CARBYNE_POLICIES: [(&str, &str, Option<f64>); 4] = [
    ("DRF", "carbyne", Some(0.0)),
    ("Carbyne", "carbyne", Some(1.0)),
    ("Tetris", "tetris", None),
    ("SJF", "sjf", None),
];

/// The paper's Jain's index (cluster, offline TPC-DS, Fig. 4a): DRF 0.86, CARBYNE 0.05 below,
/// Tetris 0.12 below, SJF 0.22 below. Online (Fig. 5a) CARBYNE is 0.06 below DRF.
const PAPER_JAIN: [f64; 4] = [0.86, 0.81, 0.74, 0.64];

/// How close CARBYNE's average Jain's index must be to DRF's to count as "close" (the paper
/// reports 0.05 offline and 0.06 online).
const JAIN_TOLERANCE: f64 = 0.10;

/// One workload the policies are compared on.
struct Setup {
    label: &'static str,
    spec: Spec,
    /// The paper's Table 4 row, [vs DRF, vs Tetris] x [p25, p50, p75, p95], if it has one.
    paper: Option<[[f64; 4]; 2]>,
    note: String,
}

impl Setup {
    fn new(label: &'static str, spec: Spec, paper: Option<[[f64; 4]; 2]>, note: String) -> Setup {
        Setup { label, spec, paper, note }
    }
}

pub fn table4(ctx: &Ctx, r: &mut Findings) -> Result<()> {
    let (scale, out) = (ctx.scale, ctx.out);
    let _ = writeln!(
        r,
        "== Carbyne Table 4 (simulation): CARBYNE vs DRF, Tetris and SJF, jobs in one queue ordered by the app policy"
    );
    let _ = writeln!(r, "   DRF = app policy carbyne with altruism-probability 0 (job-level DRF); Tetris fairness knob 0; SJF by critical path");
    let _ = writeln!(r, "   AMs send DAG hints (estimates) at registration and progress at stage ends and at most every 5 s; 6 resources");
    let _ = writeln!(r, "   Jain's index over jobs' dominant shares in 60 s windows");
    let swim = shared_dir().join("traces/swim/FB-2009_samples_24_times_1hr_0.tsv");
    let tpch = shared_dir().join("traces/tpch-spark/tpch-10g.json");
    let base = |name: &str, machines, source, jobs, arrivals| Spec {
        name: name.into(),
        seed: 4,
        cluster: ClusterSpec { machines, machines_per_rack: 40, machine: carbyne_machine() },
        scheduler: SchedulerSpec { policy: Some("drf".into()), ..Default::default() },
        sim: SimSpec { fairness_over: FairnessOver::Jobs, ..sim_defaults() },
        workload: WorkloadSpec::Carbyne {
            source,
            jobs,
            arrivals,
            mean_interarrival_s: 20.0,
            time_scale: 1.0,
            queues: 1,
            trace_queues: false,
        },
    };
    let mut setups = Vec::new();
    let tpcds = SourceSpec::Generator { family: Family::Tpcds, scale: 1.0, input_spread: 1.0 };
    let (m, jobs) = match scale {
        Scale::Small => (8, 40),
        Scale::Full => (40, 250),
    };
    setups.push(Setup::new(
        "TPC-DS online",
        base("tpcds-online", m, tpcds.clone(), Some(jobs), Arrivals::Poisson),
        Some([[1.17, 1.59, 2.73, 7.67], [1.12, 1.47, 2.23, 6.17]]),
        format!(
            "TPC-DS-like generator (the paper replayed real TPC-DS logs), Poisson arrivals mean 20 s; {m} machines so that the \
             cluster is busy (our generated jobs are smaller than the paper's, which ran on 100)"
        ),
    ));
    let (m, jobs) = match scale {
        Scale::Small => (10, 20),
        Scale::Full => (100, 100),
    };
    setups.push(Setup::new(
        "TPC-DS offline",
        base("tpcds-offline", m, tpcds, Some(jobs), Arrivals::Together),
        None,
        format!("TPC-DS-like generator, {jobs} jobs at t = 0 on {m} machines (the paper's offline case, Fig. 4)"),
    ));
    if tpch.exists() {
        let (m, jobs) = match scale {
            Scale::Small => (6, 30),
            Scale::Full => (20, 200),
        };
        let src = SourceSpec::TpchSpark { file: tpch.display().to_string(), options: Default::default() };
        setups.push(Setup::new(
            "TPC-H (Spark)",
            base("tpch-spark", m, src, Some(jobs), Arrivals::Poisson),
            None,
            format!("TPC-H queries measured on Spark (10 GB), Poisson arrivals mean 20 s, {m} machines; the paper has no Table 4 row for TPC-H"),
        ));
    } else {
        let _ = writeln!(r, "   (TPC-H row skipped: {} not found)", tpch.display());
    }
    if swim.exists() {
        let (fm, fj) = match scale {
            Scale::Small => (6, Some(150)),
            Scale::Full => (3000, None),
        };
        let src = SourceSpec::Swim { file: swim.display().to_string(), options: Default::default() };
        setups.push(Setup::new(
            "Facebook",
            base("facebook", fm, src, fj, Arrivals::Trace),
            Some([[1.24, 2.75, 4.31, 8.77], [1.24, 2.85, 4.31, 8.88]]),
            format!("SWIM Facebook 2009 sample with its own arrival times on {fm} machines (MapReduce jobs modelled from bytes)"),
        ));
    } else {
        let _ = writeln!(r, "   (Facebook row skipped: SWIM trace not found under {})", shared_dir().display());
    }
    for Setup { label, spec, paper, note } in setups {
        let mut runs = Vec::new();
        let mut sums = Vec::new();
        for (pname, app, alt) in CARBYNE_POLICIES {
            let mut s = spec.clone();
            s.name = format!("{}-{}", spec.name, pname.to_lowercase());
            s.scheduler.app_policy = Some(app.into());
            s.scheduler.altruism_probability = alt;
            let run = run_spec(&s, true)?;
            sums.push(save(&run, &s, &out.join(&s.name))?);
            runs.push(run);
        }
        let _ = writeln!(r, "\n-- {label}: {note}");
        let _ = writeln!(
            r,
            "   {:<8} {:>10} {:>10} {:>10} {:>22} {:>12}",
            "policy", "avg JCT s", "p50 s", "makespan", "Jain avg (min..max)", "paper Jain"
        );
        for (k, (pname, _, _)) in CARBYNE_POLICIES.iter().enumerate() {
            let s = &sums[k];
            let _ = writeln!(
                r,
                "   {:<8} {:>10.1} {:>10.1} {:>10.0} {:>22} {:>12}",
                pname,
                s.jct.avg_s,
                s.jct.p50_s,
                s.makespan_s,
                format!("{:.2} ({:.2}..{:.2})", s.fairness.avg, s.fairness.min, s.fairness.max),
                format!("{:.2}", PAPER_JAIN[k])
            );
        }
        let _ = writeln!(r, "   per-job factor of improvement of CARBYNE (percentiles)   ours (paper Table 4)");
        for (k, base_idx) in [0usize, 2].into_iter().enumerate() {
            let f = per_job_improvement(&runs[base_idx], &runs[1]);
            let a = improvement(&sums[base_idx].jct, &sums[1].jct);
            let p = |i: usize| paper.map(|p| format!("({:.2})", p[k][i])).unwrap_or_default();
            let _ = writeln!(
                r,
                "   vs {:<7}: p25 {:.2} {}  p50 {:.2} {}  p75 {:.2} {}  p95 {:.2} {}  avg JCT ratio {:.2}",
                CARBYNE_POLICIES[base_idx].0,
                f.p25,
                p(0),
                f.p50,
                p(1),
                f.p75,
                p(2),
                f.p95,
                p(3),
                a.avg
            );
        }
        let (drf, car, tet) = (&sums[0], &sums[1], &sums[2]);
        // The generated TPC-DS set-ups load the cluster; the trace replays run near idle until
        // containers are reused across tasks and the FB trace runs at its paper load.
        let enforced = if label.starts_with("TPC-DS") { Ok(()) } else { Err(CARBYNE_OPEN) };
        r.lower(
            format!("{label}: Carbyne beats DRF on average JCT (s)"),
            ("Carbyne", car.jct.avg_s),
            ("DRF", drf.jct.avg_s),
            enforced,
        );
        r.lower(
            format!("{label}: Carbyne beats Tetris on average JCT (s)"),
            ("Carbyne", car.jct.avg_s),
            ("Tetris", tet.jct.avg_s),
            Err(CARBYNE_OPEN),
        );
        let close = |x: &Summary| x.fairness.avg >= drf.fairness.avg - JAIN_TOLERANCE;
        r.reported_trend(
            format!("{label}: Carbyne's Jain's index within {JAIN_TOLERANCE:.2} of DRF's (paper 0.05-0.06)"),
            Verdict {
                who: "Carbyne".into(),
                holds: close(car),
                detail: format!("{:.2} vs {:.2}", car.fairness.avg, drf.fairness.avg),
            },
            Some(Verdict { who: "SJF".into(), holds: close(&sums[3]), detail: format!("{:.2}", sums[3].fairness.avg) }),
            CARBYNE_OPEN,
        );
        r.distinct_as((&format!("Carbyne ({label})"), &runs[1]), (&format!("DRF ({label})"), &runs[0]), enforced);
        for (k, (pname, _, _)) in CARBYNE_POLICIES.iter().enumerate() {
            r.loaded_as(&format!("{label} {pname}"), &sums[k], enforced);
        }
        report::plot_jct_cdf(
            &[("DRF", &runs[0]), ("Carbyne", &runs[1]), ("Tetris", &runs[2]), ("SJF", &runs[3])],
            None,
            &out.join(format!("{}-jct-cdf.svg", spec.name)),
        )?;
    }
    Ok(())
}
