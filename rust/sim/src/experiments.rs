//! Paper checks: the seeds' setups run on the data we have, our numbers printed beside the
//! papers'. Every experiment states which policies it needs and refuses to start when the
//! build's core lacks one of them.

use crate::gen::Family;
use crate::metrics::{improvement, per_job_improvement, Summary};
use crate::report;
use crate::runner::{check_policy, run_spec};
use crate::sim::RunOutput;
use crate::spec::*;
use crate::traces::ResourceSpec;
use anyhow::Result;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Scale {
    /// Reduced size: runs in seconds (used by the test suite).
    Small,
    /// The papers' sizes.
    Full,
}

pub struct Experiment {
    pub name: &'static str,
    pub about: &'static str,
    pub policies: &'static [&'static str],
    run: fn(Scale, &Path) -> Result<String>,
}

pub const EXPERIMENTS: &[Experiment] = &[
    Experiment {
        name: "drf-baseline",
        about: "DRF's side of both papers: Carbyne's offline TPC-DS fairness (Fig. 1/4) and BoPF's LQ slowdown as TQs are added (Fig. 7)",
        policies: &["drf"],
        run: drf_baseline,
    },
    Experiment {
        name: "bopf-table4",
        about: "BoPF Table 4: factor of improvement of LQ completion time over DRF vs the number of TQs",
        policies: &["drf", "bopf"],
        run: bopf_table4,
    },
    Experiment {
        name: "carbyne-table4",
        about: "Carbyne Table 4: per-job factors of improvement over DRF and Tetris (TPC-DS-like and Facebook)",
        policies: &["drf", "carbyne", "tetris", "sjf"],
        run: carbyne_table4,
    },
    UWFQ_EXPERIMENT,
    Experiment {
        name: "slot-reservation",
        about: "Slot reservation seed: foreground DAG slowdown under priority with and without reservation, utilization loss vs P, straggler copies on reserved slots",
        policies: &["strict-priority"],
        run: slot_reservation,
    },
];

pub const UWFQ_EXPERIMENT: Experiment = Experiment {
    name: "uwfq-users",
    about: "UWFQ seed: UWFQ vs UJF, job-fair and a CFQ-style order on one heavy and several light users (response time by size, DVR, DSR)",
    policies: &["drf", "uwfq", "ujf", "job-fair"],
    run: uwfq_users,
};

pub fn find(name: &str) -> Result<&'static Experiment> {
    EXPERIMENTS.iter().find(|e| e.name == name).ok_or_else(|| {
        let names: Vec<&str> = EXPERIMENTS.iter().map(|e| e.name).collect();
        anyhow::anyhow!("unknown experiment '{name}' (known: {})", names.join(", "))
    })
}

/// Runs an experiment and returns its report (also written to `out/report.txt`).
pub fn run(e: &Experiment, scale: Scale, out: &Path) -> Result<String> {
    for p in e.policies {
        check_policy(p).map_err(|err| anyhow::anyhow!("experiment {} cannot run: {err}", e.name))?;
    }
    std::fs::create_dir_all(out)?;
    let text = (e.run)(scale, out)?;
    std::fs::write(out.join("report.txt"), &text)?;
    Ok(text)
}

fn res(v: &[(&str, i64)]) -> ResourceSpec {
    ResourceSpec(v.iter().map(|(k, v)| (k.to_string(), *v)).collect())
}

/// Carbyne's machines: 20 cores, 128 GB, an SSD and a 10 Gbps NIC (bandwidths in Mbps).
fn carbyne_machine() -> ResourceSpec {
    res(&[("memory_mb", 131072), ("vcores", 20), ("disk_read_mbps", 4000), ("disk_write_mbps", 2000), ("net_in_mbps", 10000), ("net_out_mbps", 10000)])
}

/// BoPF's CloudLab machines: 32 cores, 64 GB, a 10 Gbps NIC.
fn bopf_machine() -> ResourceSpec {
    res(&[("memory_mb", 65536), ("vcores", 32), ("disk_read_mbps", 4000), ("disk_write_mbps", 2000), ("net_in_mbps", 10000), ("net_out_mbps", 10000)])
}

fn sim_defaults() -> SimSpec {
    // Neither paper's simulator models ApplicationMasters; the core has no AM-share limit, so
    // hundreds of TQ jobs queued at t = 0 would each hold an AM container.
    SimSpec { am_container: ResourceSpec::default(), ..SimSpec::default() }
}

fn save(run: &RunOutput, spec: &Spec, dir: &Path) -> Result<Summary> {
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join("spec.toml"), toml::to_string(spec)?)?;
    report::write_all(run, spec.sim.fairness_window_ms, dir)
}

fn tpch_source() -> (SourceSpec, &'static str) {
    let f = shared_dir().join("traces/tpch-spark/tpch-10g.json");
    if f.exists() {
        (SourceSpec::TpchSpark { file: f.display().to_string(), options: Default::default() }, "TPC-H measured on Spark (10 GB)")
    } else {
        (SourceSpec::Generator { family: Family::Tpch, scale: 1.0 }, "TPC-H-like generator (shared traces absent)")
    }
}

fn bopf_spec(name: &str, policy: &str, src: SourceSpec, tqs: usize, scale: Scale, seed: u64) -> Spec {
    let (machines, tq_jobs, lq_jobs) = match scale {
        Scale::Small => (8, 8 * tqs.max(1), 3),
        Scale::Full => (40, 500, 10),
    };
    let period = match scale {
        Scale::Small => 300.0,
        Scale::Full => 1000.0,
    };
    Spec {
        name: name.into(),
        seed,
        cluster: ClusterSpec { machines, machines_per_rack: 40, machine: bopf_machine() },
        scheduler: SchedulerSpec { policy: Some(policy.into()), ..Default::default() },
        sim: sim_defaults(),
        workload: WorkloadSpec::Bopf {
            lq: vec![LqSpec {
                name: "lq0".into(),
                source: src.clone(),
                period_s: period,
                jobs: lq_jobs,
                first_arrival_s: 50.0,
                deadline_s: None,
                max_critical_path_s: 30.0,
                peak_share: 1.0,
                declared_demand: Default::default(),
                pareto_shape: None,
            }],
            tq: TqSpec { queues: tqs, jobs: if tqs == 0 { 0 } else { tq_jobs }, source: src, task_duration_scale: 1.0 },
        },
    }
}

/// Average JCT (s) of the jobs of a class, NaN when the run has none.
fn class_avg(s: &Summary, class: &str) -> f64 {
    s.jct_by_class.get(class).map(|j| j.avg_s).unwrap_or(f64::NAN)
}

fn lq_avg(s: &Summary) -> f64 {
    class_avg(s, "LQ")
}

fn drf_baseline(scale: Scale, out: &Path) -> Result<String> {
    let mut r = String::new();
    // Part 1: Carbyne's offline case on DRF (every job its own queue: inter-job DRF).
    let (machines, jobs) = match scale {
        Scale::Small => (10, 25),
        Scale::Full => (100, 250),
    };
    let spec = Spec {
        name: "carbyne-offline-drf".into(),
        seed: 1,
        cluster: ClusterSpec { machines, machines_per_rack: 20, machine: carbyne_machine() },
        scheduler: SchedulerSpec { policy: Some("drf".into()), ..Default::default() },
        sim: sim_defaults(),
        workload: WorkloadSpec::Carbyne {
            source: SourceSpec::Generator { family: Family::Tpcds, scale: 1.0 },
            jobs: Some(jobs),
            arrivals: Arrivals::Together,
            mean_interarrival_s: 20.0,
            time_scale: 1.0,
            queues: 0,
            trace_queues: false,
        },
    };
    let run = run_spec(&spec, true)?;
    let s = save(&run, &spec, &out.join("carbyne-offline-drf"))?;
    let _ = writeln!(r, "== Carbyne offline case (Fig. 1a / 4), DRF, TPC-DS-like generator, {machines} machines, {jobs} jobs at t=0");
    let _ = writeln!(r, "   data differ: the paper ran real TPC-DS queries; we run generated DAGs with Table 1/2 structure");
    let _ = writeln!(r, "   {:<34} {:>10} {:>10}", "metric", "ours", "paper");
    let _ = writeln!(r, "   {:<34} {:>10.2} {:>10}", "Jain's index, 60 s windows, avg", s.fairness.avg, "0.86");
    let _ = writeln!(r, "   {:<34} {:>10}", "Jain's index min..max", format!("{:.2}..{:.2}", s.fairness.min, s.fairness.max));
    let _ = writeln!(r, "   {:<34} {:>10.0} {:>10}", "average JCT (s)", s.jct.avg_s, "n/a");
    let _ = writeln!(r, "   {:<34} {:>10.0} {:>10}", "makespan (s)", s.makespan_s, "n/a");
    for (k, u) in &s.utilization {
        let _ = writeln!(r, "   {:<34} {:>10.2}", format!("utilization {k}"), u);
    }
    // Part 2: BoPF's single LQ under DRF as TQs are added.
    let tqs: &[usize] = match scale {
        Scale::Small => &[0, 1, 2, 4],
        Scale::Full => &[0, 1, 2, 4, 8],
    };
    let _ = writeln!(r, "\n== BoPF Fig. 7 (DRF only): average LQ completion vs number of TQs, BigBench-like generator");
    let _ = writeln!(r, "   paper (cluster, DRF): 57 s with no TQ, growing with TQs; DRF is the worst of the three schedulers");
    let _ = writeln!(r, "   {:>5} {:>12} {:>12} {:>14}", "TQs", "LQ avg (s)", "TQ avg (s)", "LQ deadlines");
    let mut lq = Vec::new();
    for &n in tqs {
        let spec = bopf_spec(&format!("bopf-drf-{n}tq"), "drf", SourceSpec::Generator { family: Family::Bigbench, scale: 1.0 }, n, scale, 2);
        let run = run_spec(&spec, true)?;
        let s = save(&run, &spec, &out.join(format!("bopf-drf-{n}tq")))?;
        lq.push(lq_avg(&s));
        let tq = s.jct_by_class.get("TQ").map(|j| format!("{:.0}", j.avg_s)).unwrap_or("-".into());
        let met = s.deadline_met_fraction.map(|f| format!("{:.0}%", 100.0 * f)).unwrap_or("-".into());
        let _ = writeln!(r, "   {:>5} {:>12.1} {:>12} {:>14}", n, lq_avg(&s), tq, met);
    }
    let grows = lq.windows(2).all(|w| w[1] >= w[0] * 0.98) && lq.last() > lq.first();
    let _ = writeln!(r, "   trend check: LQ completion grows with the number of TQs under DRF: {}", if grows { "yes (as in the paper)" } else { "NO" });
    Ok(r)
}

fn bopf_table4(scale: Scale, out: &Path) -> Result<String> {
    const PAPER: [(&str, [f64; 6]); 3] = [
        ("BB", [1.08, 1.56, 2.32, 4.09, 7.28, 16.61]),
        ("TPC-DS", [1.06, 1.38, 1.66, 2.93, 5.16, 10.40]),
        ("TPC-H", [1.01, 1.28, 1.92, 3.04, 5.50, 11.35]),
    ];
    let tqs: &[usize] = match scale {
        Scale::Small => &[1, 2, 4],
        Scale::Full => &[1, 2, 4, 8, 16, 32],
    };
    let (tpch, tpch_note) = tpch_source();
    let sources = [
        (SourceSpec::Generator { family: Family::Bigbench, scale: 1.0 }, "BigBench-like generator".to_string()),
        (SourceSpec::Generator { family: Family::Tpcds, scale: 1.0 }, "TPC-DS-like generator".to_string()),
        (tpch, tpch_note.to_string()),
    ];
    let mut r = String::from("== BoPF Table 4 (simulation): factor of improvement of average LQ completion, DRF / BoPF\n");
    let _ = writeln!(r, "   data differ from the paper's traces: see each row's source");
    // Per source: (gain at the fewest TQs, gain at the most, worst TQ slowdown BoPF vs DRF).
    let mut trends = Vec::new();
    for ((src, note), (paper_name, paper)) in sources.iter().zip(PAPER.iter()) {
        let mut gains = Vec::new();
        let mut tq_slowdown = 0.0f64;
        let _ = writeln!(r, "\n   {paper_name} ({note})");
        let _ = writeln!(r, "   {:>5} {:>10} {:>10} {:>8} {:>8} {:>12}", "TQs", "DRF LQ s", "BoPF LQ s", "ours", "paper", "BoPF TQ s");
        for (k, &n) in tqs.iter().enumerate() {
            let mut sums = Vec::new();
            for policy in ["drf", "bopf"] {
                let name = format!("{}-{policy}-{n}tq", paper_name.to_lowercase());
                let spec = bopf_spec(&name, policy, src.clone(), n, scale, 3);
                let run = run_spec(&spec, true)?;
                sums.push(save(&run, &spec, &out.join(&name))?);
            }
            let (tq, tq_drf) = (class_avg(&sums[1], "TQ"), class_avg(&sums[0], "TQ"));
            gains.push(lq_avg(&sums[0]) / lq_avg(&sums[1]));
            tq_slowdown = tq_slowdown.max(tq / tq_drf);
            let _ = writeln!(
                r,
                "   {:>5} {:>10.1} {:>10.1} {:>8.2} {:>8.2} {:>12.0}",
                n,
                lq_avg(&sums[0]),
                lq_avg(&sums[1]),
                lq_avg(&sums[0]) / lq_avg(&sums[1]),
                paper[k],
                tq
            );
        }
        trends.push((paper_name, gains[0], gains[gains.len() - 1], tq_slowdown));
    }
    let grows = trends.iter().all(|t| t.2 > t.1);
    let protected = trends.iter().all(|t| t.3 <= 1.0 + TQ_TOLERANCE);
    let _ = writeln!(r);
    for (name, first, last, slow) in &trends {
        let _ = writeln!(r, "   {name}: gain {first:.2} at {} TQ -> {last:.2} at {} TQs; TQ avg completion BoPF/DRF <= {slow:.3}", tqs[0], tqs[tqs.len() - 1]);
    }
    let yes = |b: bool| if b { "yes" } else { "no" };
    let _ = writeln!(r, "   trend check: BoPF's gain over DRF grows with the number of TQs: {} (as in the paper)", yes(grows));
    let _ = writeln!(
        r,
        "   trend check: TQs are protected (average TQ completion within {:.0}% of DRF's): {}",
        TQ_TOLERANCE * 100.0,
        yes(protected)
    );
    Ok(r)
}

/// How much slower TQ jobs may finish under BoPF than under DRF and still count as protected:
/// LQ bursts are bounded by their fair share, so TQs lose at most a few percent.
const TQ_TOLERANCE: f64 = 0.05;

/// Carbyne's baselines as app policies over one queue of jobs: DRF is Carbyne with
/// P(altruism) = 0 (job-level DRF, YARN's priority order inside a job, the paper's DRF with a
/// breadth-first intra-job order), Tetris with fairness knob 0, SJF by critical path.
const CARBYNE_POLICIES: [(&str, &str, Option<f64>); 4] =
    [("DRF", "carbyne", Some(0.0)), ("Carbyne", "carbyne", Some(1.0)), ("Tetris", "tetris", None), ("SJF", "sjf", None)];

/// The paper's Jain's index (cluster, offline TPC-DS, Fig. 4a): DRF 0.86, CARBYNE 0.05 below,
/// Tetris 0.12 below, SJF 0.22 below. Online (Fig. 5a) CARBYNE is 0.06 below DRF.
const PAPER_JAIN: [f64; 4] = [0.86, 0.81, 0.74, 0.64];

/// How close CARBYNE's average Jain's index must be to DRF's to count as "close" (the paper
/// reports 0.05 offline and 0.06 online).
pub const JAIN_TOLERANCE: f64 = 0.10;

fn carbyne_table4(scale: Scale, out: &Path) -> Result<String> {
    let mut r = String::from("== Carbyne Table 4 (simulation): CARBYNE vs DRF, Tetris and SJF, jobs in one queue ordered by the app policy\n");
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
        workload: WorkloadSpec::Carbyne { source, jobs, arrivals, mean_interarrival_s: 20.0, time_scale: 1.0, queues: 1, trace_queues: false },
    };
    // (label, spec, paper Table 4 row [vs DRF, vs Tetris] x [p25, p50, p75, p95], note)
    let mut setups: Vec<(&str, Spec, Option<[[f64; 4]; 2]>, String)> = Vec::new();
    let tpcds = SourceSpec::Generator { family: Family::Tpcds, scale: 1.0 };
    let (m, jobs) = match scale {
        Scale::Small => (8, 40),
        Scale::Full => (40, 250),
    };
    setups.push((
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
    setups.push((
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
        setups.push((
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
        setups.push((
            "Facebook",
            base("facebook", fm, src, fj, Arrivals::Trace),
            Some([[1.24, 2.75, 4.31, 8.77], [1.24, 2.85, 4.31, 8.88]]),
            format!("SWIM Facebook 2009 sample with its own arrival times on {fm} machines (MapReduce jobs modelled from bytes)"),
        ));
    } else {
        let _ = writeln!(r, "   (Facebook row skipped: SWIM trace not found under {})", shared_dir().display());
    }
    for (label, spec, paper, note) in setups {
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
        let _ = writeln!(r, "   {:<8} {:>10} {:>10} {:>10} {:>22} {:>12}", "policy", "avg JCT s", "p50 s", "makespan", "Jain avg (min..max)", "paper Jain");
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
        let _ = writeln!(
            r,
            "   trend check ({label}): Carbyne beats DRF on average JCT: {} ({:.1} s vs {:.1} s)",
            yes(car.jct.avg_s < drf.jct.avg_s),
            car.jct.avg_s,
            drf.jct.avg_s
        );
        let _ = writeln!(
            r,
            "   trend check ({label}): Carbyne beats Tetris on average JCT: {} ({:.1} s vs {:.1} s)",
            yes(car.jct.avg_s < tet.jct.avg_s),
            car.jct.avg_s,
            tet.jct.avg_s
        );
        let _ = writeln!(
            r,
            "   trend check ({label}): Carbyne's fairness close to DRF's (Jain avg within {JAIN_TOLERANCE:.2}; paper 0.05-0.06): {} ({:.2} vs {:.2})",
            yes(car.fairness.avg >= drf.fairness.avg - JAIN_TOLERANCE),
            car.fairness.avg,
            drf.fairness.avg
        );
        report::plot_jct_cdf(
            &[("DRF", &runs[0]), ("Carbyne", &runs[1]), ("Tetris", &runs[2]), ("SJF", &runs[3])],
            &out.join(format!("{}-jct-cdf.svg", spec.name)),
        )?;
    }
    Ok(r)
}

/// The seed's Eq. (1)-(3): r_i = (finish under the target - finish under UJF) / UJF response
/// time. The seed's text defines DVR as the average proportional violation and DSR as the
/// average proportional slack; its printed denominators (r_i > 1, r_i <= 1) contradict that
/// text, so we average over the jobs that violate (r_i > 0) and that gain (r_i < 0).
#[derive(Clone, Debug, PartialEq)]
pub struct DeadlineRatios {
    pub dvr: f64,
    pub violations: usize,
    pub dsr: f64,
    pub slacks: usize,
}

pub fn deadline_ratios(target: &RunOutput, ujf: &RunOutput) -> DeadlineRatios {
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
    DeadlineRatios { dvr: if nv > 0 { v / nv as f64 } else { 0.0 }, violations: nv, dsr: if ns > 0 { sl / ns as f64 } else { 0.0 }, slacks: ns }
}

fn uwfq_users(scale: Scale, out: &Path) -> Result<String> {
    // One heavy user submitting bursts of small jobs that congest the cluster (the seed's
    // "frequent" user) and light users with Poisson arrivals (its "infrequent" users).
    let (machines, heavy_bursts, light_jobs) = match scale {
        Scale::Small => (4, 4, 6),
        Scale::Full => (20, 20, 30),
    };
    let small = SourceSpec::Generator { family: Family::Tpch, scale: 0.5 };
    let mut users = vec![UserSpec {
        name: "heavy".into(),
        source: small.clone(),
        jobs: heavy_bursts * 10,
        arrivals: UserArrivals::Bursts { every_s: 60.0, size: 10 },
        first_arrival_s: 0.0,
        class: Some("heavy".into()),
    }];
    for k in 0..3 {
        users.push(UserSpec {
            name: format!("light{k}"),
            source: small.clone(),
            jobs: light_jobs,
            arrivals: UserArrivals::Poisson { mean_interarrival_s: 60.0 * heavy_bursts as f64 / light_jobs as f64 },
            first_arrival_s: 5.0 * (k + 1) as f64,
            class: Some("light".into()),
        });
    }
    let spec = |name: &str, app: &str, job_as_user: bool| Spec {
        name: name.into(),
        seed: 6,
        cluster: ClusterSpec { machines, machines_per_rack: 40, machine: carbyne_machine() },
        scheduler: SchedulerSpec { policy: Some("drf".into()), app_policy: Some(app.into()), ..Default::default() },
        sim: sim_defaults(),
        workload: WorkloadSpec::Users { users: users.clone(), queue_per_user: false, job_as_user },
    };
    // CFQ orders by virtual finish time across jobs with no user context; the core has no CFQ
    // policy, so it is UWFQ with every job submitted as its own user (job-level fair queuing).
    let policies = [("UJF", "ujf", false), ("UWFQ", "uwfq", false), ("job-fair", "job-fair", false), ("CFQ-style", "uwfq", true)];
    let mut runs = Vec::new();
    let mut sums = Vec::new();
    for (label, app, per_job) in policies {
        let s = spec(&format!("uwfq-{}", label.to_lowercase()), app, per_job);
        let run = run_spec(&s, true)?;
        sums.push(save(&run, &s, &out.join(&s.name))?);
        runs.push(run);
    }
    let mut r = String::from("== UWFQ seed (002), scenario-1-like: one heavy user (bursts of 10 jobs every 60 s) and 3 light users (Poisson)\n");
    let _ = writeln!(r, "   data differ: TPC-H-like generated DAGs (half size) on {machines} machines instead of Spark jobs on the NYC taxi data;");
    let _ = writeln!(r, "   CFQ-style = UWFQ with every job its own user (the core has no CFQ policy; ours works per job, CFQ per stage)");
    let _ = writeln!(r, "   response time by job size: jobs split at the 80th and 95th percentile of their work (task-seconds), as the seed's Table 2");
    // Job sizes from the UJF run's workload (identical in every run).
    let size = |j: &crate::sim::JobRecord| j.tasks;
    let mut sizes: Vec<u64> = runs[0].jobs.iter().map(size).collect();
    sizes.sort_unstable();
    let cut = |p: f64| sizes[((sizes.len() - 1) as f64 * p).round() as usize];
    let (c80, c95) = (cut(0.8), cut(0.95));
    let _ = writeln!(
        r,
        "   {:<10} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>7} {:>5} {:>7} {:>5}",
        "scheduler", "avg RT s", "0-80%", "80-95%", "95-100%", "heavy", "light", "DVR", "viol", "DSR", "slack"
    );
    let mut light = Vec::new();
    let mut avg = Vec::new();
    let mut small_rt = Vec::new();
    for (k, (label, _, _)) in policies.iter().enumerate() {
        let run = &runs[k];
        let mean = |f: &dyn Fn(&crate::sim::JobRecord) -> bool| {
            let v: Vec<f64> = run.jobs.iter().filter(|j| f(j)).map(|j| j.jct_ms() as f64 / 1000.0).collect();
            if v.is_empty() { f64::NAN } else { v.iter().sum::<f64>() / v.len() as f64 }
        };
        let by_class = |c: &str| sums[k].jct_by_class.get(c).map(|j| j.avg_s).unwrap_or(f64::NAN);
        let d = deadline_ratios(run, &runs[0]);
        let ratios = if k == 0 { format!("{:>7} {:>5} {:>7} {:>5}", "-", "-", "-", "-") } else { format!("{:>7.2} {:>5} {:>7.2} {:>5}", d.dvr, d.violations, d.dsr, d.slacks) };
        let s80 = mean(&|j| size(j) <= c80);
        let _ = writeln!(
            r,
            "   {:<10} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {}",
            label,
            sums[k].jct.avg_s,
            s80,
            mean(&|j| size(j) > c80 && size(j) <= c95),
            mean(&|j| size(j) > c95),
            by_class("heavy"),
            by_class("light"),
            ratios
        );
        light.push(by_class("light"));
        avg.push(sums[k].jct.avg_s);
        small_rt.push(s80);
    }
    let _ = writeln!(r, "   seed, Table 1 scenario 1 (avg RT s / infrequent users' RT s / DVR / DSR): UJF 43.1 / 48.8 / - / -;");
    let _ = writeln!(r, "   UWFQ 29.4 / 33.1 / 0.23 / 0.37; CFQ 32.5 / 32.3 / 3.69 / 0.38; Fair (job-level) 44.0 / 44.5 / 3.25 / 0.27");
    let _ = writeln!(r, "   seed, Table 2 (Google trace): UWFQ cuts the 0-80% jobs' RT by 55% vs UJF (74% with runtime partitioning)");
    let _ = writeln!(r, "   trend check: UWFQ has a lower average response time than UJF: {} ({:.1} s vs {:.1} s)", yes(avg[1] < avg[0]), avg[1], avg[0]);
    let _ = writeln!(r, "   trend check: UWFQ serves small jobs (0-80%) faster than UJF: {} ({:.1} s vs {:.1} s)", yes(small_rt[1] < small_rt[0]), small_rt[1], small_rt[0]);
    let _ = writeln!(
        r,
        "   trend check: light users fare better under UWFQ than under job-level orders (job-fair, CFQ-style): {} ({:.1} s vs {:.1} s, {:.1} s)",
        yes(light[1] < light[2] && light[1] < light[3]),
        light[1],
        light[2],
        light[3]
    );
    Ok(r)
}

pub fn default_out(name: &str) -> PathBuf {
    PathBuf::from("target/tidal-sim").join(name)
}

/// How much longer background tasks run than the TPC-H tasks they are drawn from.
const BACKGROUND_TASK_SCALE: f64 = 10.0;

/// One run of the slot reservation experiment: the BoPF workload's periodic LQ as the
/// foreground (tier 0 under strict priority) beside `tqs` saturating TQs as the background.
fn reservation_spec(name: &str, fg: &SourceSpec, scale: Scale, tqs: usize, p: Option<f64>, alpha: Option<f64>, copies: bool) -> Spec {
    let mut s = bopf_spec(name, "strict-priority", fg.clone(), tqs, scale, 11);
    // Held slots expire at deadlines no event marks: look at idle nodes every heartbeat.
    s.sim.idle_recheck_ms = s.sim.heartbeat_ms;
    s.sim.straggler_copies = copies;
    if let WorkloadSpec::Bopf { lq, tq } = &mut s.workload {
        // The seed's background (Google trace jobs, "long-running" in its second setup) has
        // tasks that dwarf the foreground's: a slot lost at a barrier comes back late.
        tq.source = tpch_source().0;
        tq.task_duration_scale = BACKGROUND_TASK_SCALE;
        lq[0].pareto_shape = alpha;
        lq[0].max_critical_path_s = 120.0;
        // Every foreground job arrives while the background still saturates the cluster.
        lq[0].period_s = match scale {
            Scale::Small => 100.0,
            Scale::Full => 150.0,
        };
        // The foreground's widest stage asks for half the cluster, so its slots at a barrier
        // are a real prize for the background.
        lq[0].peak_share = 0.5;
    }
    s.scheduler.slot_reservation =
        p.map(|p| SlotReservationSpec { queues: vec!["lq0".into()], isolation_probability: Some(p), ..Default::default() });
    s
}

/// Foreground (LQ) jobs' average slowdown: JCT over the same job's JCT alone.
fn fg_slowdown(run: &RunOutput, alone: &RunOutput) -> f64 {
    let alone: std::collections::HashMap<&str, i64> = alone.jobs.iter().map(|j| (j.name.as_str(), j.jct_ms())).collect();
    let f: Vec<f64> = run
        .jobs
        .iter()
        .filter(|j| j.class == "LQ")
        .filter_map(|j| Some(j.jct_ms().max(1) as f64 / (*alone.get(j.name.as_str())?).max(1) as f64))
        .collect();
    f.iter().sum::<f64>() / f.len() as f64
}

/// Idle held vcore-time as a fraction of all allocated vcore-time.
fn held_fraction(run: &RunOutput) -> f64 {
    let k = tidal_core::ResourceKind::Vcores as usize;
    run.held[k] / run.allocated[k].max(1.0)
}

fn yes(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "NO"
    }
}

fn slot_reservation(scale: Scale, out: &Path) -> Result<String> {
    let tqs = 4;
    let probabilities: &[f64] = match scale {
        Scale::Small => &[0.0, 0.4, 1.0],
        Scale::Full => &[0.0, 0.2, 0.4, 0.6, 0.8, 1.0],
    };
    let run = |spec: Spec| -> Result<(RunOutput, Summary)> {
        let r = run_spec(&spec, true)?;
        let summary = save(&r, &spec, &out.join(&spec.name))?;
        Ok((r, summary))
    };
    let (tpch, tpch_note) = tpch_source();
    let mllib = SourceSpec::Generator { family: Family::Mllib, scale: 1.0 };
    let mut r = String::from("== Slot reservation seed (001): foreground DAG jobs at high priority beside a saturating background\n");
    let _ = writeln!(r, "   foreground: a periodic LQ (widest stage = half the cluster) at tier 0 under strict priority; background: {tqs} TQs of");
    let _ = writeln!(r, "   {tpch_note} jobs with tasks {BACKGROUND_TASK_SCALE}x longer, at tier 1. Slowdown = JCT / the same job's JCT alone.");
    let _ = writeln!(r, "   held idle = vcore-time held by reservations and not used, as % of all allocated vcore-time; utilization");
    let _ = writeln!(r, "   improvement = reduction of held idle time relative to P = 1 (the seed's Fig. 14 metric).");
    for (tag, suite, fg) in [("mllib", "MLlib-like (chains of equal stages)", &mllib), ("tpch", tpch_note, &tpch)] {
        let alone = run(reservation_spec(&format!("{tag}-alone"), fg, scale, 0, None, None, false))?;
        let plain = run(reservation_spec(&format!("{tag}-priority"), fg, scale, tqs, None, None, false))?;
        let _ = writeln!(r, "\n   foreground {suite}:");
        let _ = writeln!(r, "   {:<16} {:>12} {:>10} {:>12} {:>14}", "scheduler", "fg slowdown", "bg avg s", "held idle %", "util. improv.");
        let (plain_sd, plain_bg) = (fg_slowdown(&plain.0, &alone.0), class_avg(&plain.1, "TQ"));
        let _ = writeln!(r, "   {:<16} {:>12.2} {:>10.0} {:>12} {:>14}", "priority only", plain_sd, plain_bg, "-", "-");
        let mut rows = Vec::new();
        for &p in probabilities {
            rows.push((p, run(reservation_spec(&format!("{tag}-reserve-p{p}"), fg, scale, tqs, Some(p), None, false))?));
        }
        let full = held_fraction(&rows.last().expect("P = 1 runs").1.0);
        for (p, (run, summary)) in &rows {
            let improv = if full > 0.0 { format!("{:.0}%", 100.0 * (1.0 - held_fraction(run) / full)) } else { "-".into() };
            let _ = writeln!(
                r,
                "   {:<16} {:>12.2} {:>10.0} {:>12.2} {:>14}",
                format!("reserve P={p}"),
                fg_slowdown(run, &alone.0),
                class_avg(summary, "TQ"),
                100.0 * held_fraction(run),
                improv
            );
        }
        let p1 = &rows.last().expect("P = 1 runs").1;
        let sd1 = fg_slowdown(&p1.0, &alone.0);
        let _ = writeln!(r, "   trend check ({tag}): reservation (P = 1) cuts the slowdown of priority alone: {} ({sd1:.2} vs {plain_sd:.2})", yes(sd1 < plain_sd));
        let held: Vec<f64> = rows.iter().map(|(_, (run, _))| held_fraction(run)).collect();
        let _ = writeln!(r, "   trend check ({tag}): held idle time is least at P = 0 and most at P = 1: {}", yes(held.iter().all(|&h| h >= held[0] && h <= full)));
        let _ = writeln!(r, "   background average JCT, reservation (P = 1) / priority only: {:.3}", class_avg(&p1.1, "TQ") / plain_bg);
    }
    let _ = writeln!(r, "\n   seed: priority alone leaves foreground jobs up to 3.9x slower (EC2, Fig. 4); with reservation < 1.1 on EC2");
    let _ = writeln!(r, "   (Fig. 12) and in simulation MLlib < 1.1, SQL 1.3-1.5 (Fig. 15); background slowdown < 0.1%; smaller P,");
    let _ = writeln!(r, "   less held time and more slowdown, sweet spot at P = 0.4 (Fig. 14).");

    // Straggler copies: task durations redrawn from Pareto(α) with each stage's mean (§VI-B).
    let alphas: &[f64] = match scale {
        Scale::Small => &[1.6],
        Scale::Full => &[1.2, 1.6, 2.0, 3.0],
    };
    let _ = writeln!(r, "\n   straggler copies on reserved slots (P = 1), MLlib-like foreground, task durations Pareto(α) with each stage's mean:");
    let _ = writeln!(r, "   {:>5} {:>14} {:>14} {:>10} {:>8} {:>8}", "α", "fg avg s, no", "fg avg s, yes", "reduction", "copies", "won");
    let mut reductions = Vec::new();
    for &a in alphas {
        let without = run(reservation_spec(&format!("mllib-pareto{a}-no-copies"), &mllib, scale, tqs, Some(1.0), Some(a), false))?;
        let with = run(reservation_spec(&format!("mllib-pareto{a}-copies"), &mllib, scale, tqs, Some(1.0), Some(a), true))?;
        let (n, y) = (lq_avg(&without.1), lq_avg(&with.1));
        reductions.push((a, 1.0 - y / n));
        let _ = writeln!(r, "   {:>5} {:>14.1} {:>14.1} {:>9.0}% {:>8} {:>8}", a, n, y, 100.0 * (1.0 - y / n), with.0.stats.copies, with.0.stats.copies_won);
    }
    let _ = writeln!(r, "   seed: at α = 1.6 copies cut phase time by over 50% (numerical, Fig. 10) and foreground JCT by 73% (simulation,");
    let _ = writeln!(r, "   Fig. 17); heavier tails (smaller α) gain more.");
    let at16 = reductions.iter().find(|(a, _)| *a == 1.6).map_or(0.0, |x| x.1);
    let _ = writeln!(r, "   trend check: copies shorten foreground jobs at α = 1.6: {} ({:.0}%)", yes(at16 > 0.0), 100.0 * at16);
    if reductions.len() > 1 {
        let heavier = reductions.first().map_or(0.0, |x| x.1) >= reductions.last().map_or(0.0, |x| x.1);
        let _ = writeln!(r, "   trend check: a heavier tail gains more: {}", yes(heavier));
    }
    Ok(r)
}
