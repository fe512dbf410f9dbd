//! DRF's side of both papers: Carbyne's offline fairness and BoPF's LQ slowdown as TQs grow.

use super::bopf;
use super::common::{carbyne_machine, lq_avg, run_parallel, save, sim_defaults, swapped, Ctx, Scale};
use crate::fidelity::{Findings, Verdict};
use crate::gen::{DemandModel, Family};
use crate::runner::run_spec;
use crate::spec::*;
use anyhow::Result;
use std::fmt::Write as _;

pub fn run(ctx: &Ctx, f: &mut Findings) -> Result<()> {
    let (scale, out) = (ctx.scale, ctx.out);
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
            source: SourceSpec::Generator {
                family: Family::Tpcds,
                scale: 1.0,
                input_spread: 1.0,
                demands: DemandModel::SingleBottleneck,
            },
            jobs: Some(jobs),
            arrivals: Arrivals::Together,
            mean_interarrival_s: 20.0,
            time_scale: 1.0,
            queues: 0,
            trace_queues: false,
        },
    };
    let spec = swapped(spec, ctx);
    let run = run_spec(&spec, true)?;
    let s = save(&run, &spec, &out.join("carbyne-offline-drf"))?;
    let _ = writeln!(
        f,
        "== Carbyne offline case (Fig. 1a / 4), DRF, TPC-DS-like generator, {machines} machines, {jobs} jobs at t=0"
    );
    let _ = writeln!(
        f,
        "   data differ: the paper ran real TPC-DS queries; we run generated DAGs with Table 1/2 structure"
    );
    let _ = writeln!(
        f,
        "   Jain's index min..max {:.2}..{:.2}; average JCT {:.0} s; makespan {:.0} s",
        s.fairness.min, s.fairness.max, s.jct.avg_s, s.makespan_s
    );
    f.paper("Carbyne offline, DRF: Jain's index (60 s windows)", 0.86, s.fairness.avg);
    f.loaded("Carbyne offline, DRF", &s);
    // Part 2: BoPF's single LQ under DRF as TQs are added; BoPF, which keeps the LQ's
    // completion flat, is the baseline that must not show the growth.
    let tqs: &[usize] = match scale {
        Scale::Small => &[0, 1, 4],
        Scale::Full => &[0, 1, 2, 4, 8],
    };
    let _ = writeln!(
        f,
        "\n== BoPF Fig. 7: average LQ completion vs number of TQs under DRF (BoPF beside it), cluster set-up"
    );
    let _ = writeln!(f, "   {:>5} {:>12} {:>12} {:>14}", "TQs", "DRF LQ s", "BoPF LQ s", "DRF deadlines");
    let mut specs = Vec::new();
    for &n in tqs {
        let mut setup = bopf::fig7_setup(n, scale);
        setup.stop_after_class = (n > 0).then_some("LQ");
        specs.extend(["drf", "bopf"].map(|p| setup.spec(&format!("bopf-fig7-{n}tq-{p}"), p)));
    }
    let runs = run_parallel(&specs, ctx)?;
    let (mut drf, mut bopf) = (Vec::new(), Vec::new());
    for (&n, pair) in tqs.iter().zip(runs.chunks(2)) {
        drf.push(lq_avg(&pair[0].1));
        bopf.push(lq_avg(&pair[1].1));
        let met = pair[0].1.deadline_met_fraction.map(|m| format!("{:.0}%", 100.0 * m)).unwrap_or("-".into());
        let _ = writeln!(f, "   {:>5} {:>12.1} {:>12.1} {:>14}", n, drf[drf.len() - 1], bopf[bopf.len() - 1], met);
        if n > 0 {
            f.loaded(&format!("Fig. 7, {n} TQs, DRF"), &pair[0].1);
        }
    }
    f.paper("Fig. 7: LQ completion with no TQ (s)", 57.0, drf[0]);
    // From one TQ on: with no TQ at all both policies give the LQ the whole cluster, and a
    // single TQ already costs BoPF its non-preemption wait.
    let grows = |v: &[f64]| v[1..].windows(2).all(|w| w[1] >= w[0] * 0.98) && v[v.len() - 1] > v[1] * 1.5;
    let list = |v: &[f64]| v.iter().map(|x| format!("{x:.1}")).collect::<Vec<_>>().join(" ");
    f.trend(
        "LQ completion grows with the number of TQs (by more than 1.5x from 1 TQ)",
        Verdict { who: "DRF".into(), holds: grows(&drf), detail: format!("{} s", list(&drf)) },
        Verdict { who: "BoPF".into(), holds: grows(&bopf), detail: format!("{} s", list(&bopf)) },
    );
    Ok(())
}
