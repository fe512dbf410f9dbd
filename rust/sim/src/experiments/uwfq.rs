//! UWFQ against CFQ, UJF and job-fair on the UWFQ paper's scenario 1: frequent and infrequent users.

use super::common::{class_avg, run_parallel, sim_defaults, Ctx, Scale};
use crate::fidelity::Findings;
use crate::gen::Family;
use crate::sim::output::{JobRecord, RunOutput};
use crate::spec::*;
use anyhow::Result;
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

/// The paper's Table 1, scenario 1, per scheduler: average response time and the infrequent
/// users' response time (s).
const TABLE1_SCENARIO1: [(&str, f64, f64); 4] =
    [("UJF", 43.1, 48.8), ("UWFQ", 29.4, 33.1), ("CFQ", 32.5, 32.3), ("job-fair", 44.0, 44.5)];

/// The paper's Table 2 (Google trace): the 0-80% jobs' response time (s) under UJF, UWFQ, CFQ and
/// Fair; the only small-job figures it gives.
const TABLE2_SMALL: [f64; 4] = [27.43, 12.33, 11.05, 28.29];

/// Why the infrequent users' check is reported, not enforced. Our UJF serves the user with the
/// smallest current usage first, so an infrequent user's job starts the moment a slot frees;
/// under UWFQ the frequent users' jobs that outlived their reference finish (the cluster stays
/// congested) keep their earlier frozen deadlines and go first. Measured: infrequent users 85 s
/// under UWFQ vs 84 s under UJF at small scale, 194 s vs 119 s at full scale.
const UJF_SERVES_IDLE_USERS_AT_ONCE: &str =
    "UJF by current usage serves an idle user's job at once; UWFQ's outlived jobs keep earlier deadlines";

pub fn users(ctx: &Ctx, r: &mut Findings) -> Result<()> {
    // Scenario 1 of the UWFQ paper: 2 frequent users each submitting a burst of short jobs every
    // 30 s that congests the cluster, and 2 infrequent users with Poisson arrivals. Its short
    // and tiny jobs run 2.25 s and 0.9 s alone on 32 cores; ours are generated TPC-H-like DAGs
    // scaled down to a few tasks per stage (seconds to tens of seconds alone), the tiny ones
    // at 40% of the short ones' width, with bursts sized to keep the cluster near saturation.
    let bursts = match ctx.scale {
        Scale::Small => 6,
        Scale::Full => 20,
    };
    let (burst_size, every_s) = (2, 30.0);
    let short = SourceSpec::Generator { family: Family::Tpch, scale: 0.05, input_spread: 1.0 };
    let tiny = SourceSpec::Generator { family: Family::Tpch, scale: 0.02, input_spread: 1.0 };
    let mut users = Vec::new();
    for k in 0..2 {
        users.push(UserSpec {
            name: format!("frequent{k}"),
            source: short.clone(),
            jobs: bursts * burst_size,
            arrivals: UserArrivals::Bursts { every_s, size: burst_size },
            first_arrival_s: k as f64,
            class: Some("frequent".into()),
        });
        users.push(UserSpec {
            name: format!("infrequent{k}"),
            source: tiny.clone(),
            jobs: bursts,
            arrivals: UserArrivals::Poisson { mean_interarrival_s: every_s },
            first_arrival_s: 5.0 + 10.0 * k as f64,
            class: Some("infrequent".into()),
        });
    }
    let spec = |name: &str, app: &str| Spec {
        name: name.into(),
        seed: 6,
        cluster: ClusterSpec { machines: 4, machines_per_rack: 40, machine: das5_machine() },
        scheduler: SchedulerSpec {
            policy: Some("drf".into()),
            app_policy: Some(app.into()),
            // The paper's grace period: 2 resource-seconds, about 2 s of wall time here.
            uwfq_grace_period_s: Some(2.0),
            ..Default::default()
        },
        sim: sim_defaults(),
        workload: WorkloadSpec::Users { users: users.clone(), queue_per_user: false, job_as_user: false },
    };
    // The paper's Table 1 runs every scheduler with Spark's default partitioning (runtime
    // partitioning only in its -P rows), so stages keep the generator's task counts here.
    let policies = [("UJF", "ujf"), ("UWFQ", "uwfq"), ("CFQ", "cfq"), ("job-fair", "job-fair")];
    let specs: Vec<Spec> =
        policies.iter().map(|(label, app)| spec(&format!("uwfq-{}", label.to_lowercase()), app)).collect();
    let results = run_parallel(&specs, ctx)?;
    let (runs, sums): (Vec<RunOutput>, Vec<_>) = results.into_iter().unzip();
    let _ = writeln!(r, "== UWFQ (user weighted fair queuing), the paper's scenario 1: 2 frequent users (a burst of {burst_size} jobs every {every_s} s each) and 2 infrequent users (Poisson, one job per {every_s} s on average)");
    let _ = writeln!(r, "   data differ: TPC-H-like generated DAGs (short and tiny) on 4 x 8 cores instead of Spark jobs on the NYC taxi data;");
    let _ = writeln!(r, "   DAG hints give both UWFQ and CFQ perfect runtime estimates, as the paper assumes");
    let _ = writeln!(r, "   response time by job size: jobs split at the 80th and 95th percentile of their task count, as the UWFQ paper's Table 2");
    // Job sizes from the UJF run's workload (identical in every run).
    let size = |j: &JobRecord| j.tasks;
    let mut sizes: Vec<u64> = runs[0].jobs.iter().map(size).collect();
    sizes.sort_unstable();
    let cut = |p: f64| sizes[((sizes.len() - 1) as f64 * p).round() as usize];
    let (c80, c95) = (cut(0.8), cut(0.95));
    let _ = writeln!(
        r,
        "   {:<10} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>7} {:>5} {:>7} {:>5}",
        "scheduler", "avg RT s", "0-80%", "80-95%", "95-100%", "frequent", "infreq", "DVR", "viol", "DSR", "slack"
    );
    let mut infrequent = Vec::new();
    let mut avg = Vec::new();
    let mut small_rt = Vec::new();
    for (k, (label, _)) in policies.iter().enumerate() {
        let run = &runs[k];
        let mean = |f: &dyn Fn(&JobRecord) -> bool| {
            let v: Vec<f64> = run.jobs.iter().filter(|j| f(j)).map(|j| j.jct_ms() as f64 / 1000.0).collect();
            if v.is_empty() {
                f64::NAN
            } else {
                v.iter().sum::<f64>() / v.len() as f64
            }
        };
        let d = deadline_ratios(run, &runs[0]);
        let ratios = if k == 0 {
            format!("{:>7} {:>5} {:>7} {:>5}", "-", "-", "-", "-")
        } else {
            format!("{:>7.2} {:>5} {:>7.2} {:>5}", d.dvr, d.violations, d.dsr, d.slacks)
        };
        let s80 = mean(&|j| size(j) <= c80);
        let _ = writeln!(
            r,
            "   {:<10} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {}",
            label,
            sums[k].jct.avg_s,
            s80,
            mean(&|j| size(j) > c80 && size(j) <= c95),
            mean(&|j| size(j) > c95),
            class_avg(&sums[k], "frequent"),
            class_avg(&sums[k], "infrequent"),
            ratios
        );
        infrequent.push(class_avg(&sums[k], "infrequent"));
        avg.push(sums[k].jct.avg_s);
        small_rt.push(s80);
    }
    let _ =
        writeln!(r, "   UWFQ paper, Table 1 scenario 1 DVR / DSR: UWFQ 0.23 / 0.37; CFQ 3.69 / 0.38; Fair 3.25 / 0.27");
    // Absolute seconds differ with the jobs (ours run longer than 2.25 s); the ratios to UJF are
    // what carries over.
    for (k, (label, paper_avg, paper_infrequent)) in TABLE1_SCENARIO1.iter().enumerate() {
        r.paper(format!("scenario 1: {label} average response time (s)"), *paper_avg, avg[k]);
        r.paper(format!("scenario 1: {label} infrequent users' response time (s)"), *paper_infrequent, infrequent[k]);
        if k > 0 {
            r.paper(format!("scenario 1: {label} / UJF average response time"), paper_avg / 43.1, avg[k] / avg[0]);
            r.paper(
                format!("Table 2: {label} / UJF response time of 0-80% jobs"),
                TABLE2_SMALL[k] / TABLE2_SMALL[0],
                small_rt[k] / small_rt[0],
            );
        }
    }
    r.lower("UWFQ has a lower average response time than UJF (s)", ("UWFQ", avg[1]), ("UJF", avg[0]), Ok(()));
    r.lower("UWFQ has a lower average response time than CFQ (s)", ("UWFQ", avg[1]), ("CFQ", avg[2]), Ok(()));
    r.lower("UWFQ serves small jobs (0-80%) faster than UJF (s)", ("UWFQ", small_rt[1]), ("UJF", small_rt[0]), Ok(()));
    r.lower(
        "infrequent users fare better under UWFQ than under UJF (s)",
        ("UWFQ", infrequent[1]),
        ("UJF", infrequent[0]),
        Err(UJF_SERVES_IDLE_USERS_AT_ONCE),
    );
    r.lower(
        "infrequent users fare better under UWFQ than under job-fair (s)",
        ("UWFQ", infrequent[1]),
        ("job-fair", infrequent[3]),
        Ok(()),
    );
    r.distinct(("UWFQ", &runs[1]), ("CFQ", &runs[2]));
    for (k, (label, _)) in policies.iter().enumerate() {
        r.loaded(label, &sums[k]);
    }
    Ok(())
}
