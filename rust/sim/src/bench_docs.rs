//! The README's benchmark table, rendered from the CSV files `make bench` writes, so the
//! figures in the docs are the ones a run measured and cannot drift from the committed ones.
//!
//! `make bench` leaves one file per benchmark family in its output directory:
//!
//! - `core.csv` (`case,median_ns`): criterion's median of each core benchmark, collected from
//!   criterion's own `estimates.json` files by [`import_criterion`];
//! - `jni-<line>.csv` (`benchmark,median_ns`): JMH's sampled median of the JNI heartbeat and of
//!   the same Java work without the call, per Hadoop line;
//! - `sim.csv`: the simulator's scale benchmarks (`tidal-sim bench --csv`);
//! - `rm-<line>.csv`: Tidal, the floor (Hadoop's bookkeeping of the containers Tidal started,
//!   with no decision), FairScheduler and CapacityScheduler inside a MockRM, per Hadoop line;
//! - `sls.csv`: Hadoop's Scheduler Load Simulator at thousands of nodes, both lines;
//! - `load.csv` (`stage,load1,load5,load15`): the load average as each stage started.
//!
//! [`import_run`] copies them into the committed results directory and the marked blocks of a
//! page ([`crate::marked_blocks`]) are rendered from there. Every target of the table is a row:
//! a target whose figure a file lacks is an error naming the file, never an empty cell.

use crate::fidelity_docs::{read_csv, same_dir};
use crate::marked_blocks;
use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::Path;

/// A core benchmark the table reports: criterion's id, the bench file that has it, what it
/// measures and its target.
struct CoreCase {
    id: &'static str,
    bench: &'static str,
    what: &'static str,
    target_ns: Option<f64>,
}

const CORE_CASES: &[CoreCase] = &[
    CoreCase {
        id: "heartbeat_drf_10k_nodes_1k_apps_100_queues_50k_pending",
        bench: "heartbeat",
        what: "DRF heartbeat: 10k nodes, 1k apps in 100 queues, 50k pending",
        target_ns: Some(2_000.0),
    },
    CoreCase {
        id: "heartbeat_carbyne_10k_nodes_1k_dag_jobs_50k_pending",
        bench: "carbyne",
        what: "Carbyne heartbeat: 10k nodes, 1k DAG jobs, 50k pending",
        target_ns: Some(10_000.0),
    },
    CoreCase {
        id: "bopf_admission/admit_lq_500_cycles_into_20k_queues",
        bench: "admission",
        what: "BoPF admission of an LQ with 500 cycles beside 20k queues",
        target_ns: Some(10_000.0),
    },
    CoreCase {
        id: "bopf_admission/admit_tq_into_20k_queues",
        bench: "admission",
        what: "BoPF admission of a TQ beside 20k queues",
        target_ns: Some(10_000.0),
    },
    CoreCase {
        id: "heartbeat_1_node_1_app_10_done_10_started",
        bench: "heartbeat",
        what: "one-node heartbeat in the core: 10 completed, 10 started",
        target_ns: None,
    },
    CoreCase {
        id: "heartbeat_bopf_20k_queues_10k_nodes",
        bench: "heartbeat",
        what: "BoPF heartbeat: 20k queues, 10k nodes",
        target_ns: None,
    },
    CoreCase {
        id: "plan_reverse_packing_50_stages_5k_tasks",
        bench: "carbyne",
        what: "Carbyne's reverse packing plan: 50 stages, 5k tasks",
        target_ns: None,
    },
];

/// The JNI heartbeat's target, and the Hadoop lines it is measured on.
const JNI_TARGET_NS: f64 = 1_000.0;
const LINES: &[&str] = &["hadoop2", "hadoop3"];
/// JMH's name for the heartbeat through JNI (the other benchmark is the Java-only baseline).
const JNI_BENCHMARK: &str = "nativeHeartbeat";

/// The simulator cases with a CPU-time target, in seconds of one core.
const SIM_TARGETS: &[(&str, f64)] = &[("huge", 60.0), ("huge-saturated", 60.0)];

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct CoreRow {
    pub case: String,
    pub median_ns: f64,
}

#[derive(Clone, Debug, Deserialize, PartialEq)]
pub struct JniRow {
    pub benchmark: String,
    pub median_ns: f64,
}

/// One row of `sim.csv`: a scale benchmark's counts, which must not move when only speed
/// changes, and its costs.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct SimRow {
    pub case: String,
    pub machines: u64,
    pub jobs: u64,
    pub tasks: u64,
    pub events: u64,
    pub core_heartbeats: u64,
    pub containers: u64,
    /// Share of the cluster's vcores busy over the run, in per cent.
    pub busy_vcores_pct: f64,
    pub cpu_s: f64,
    pub wall_s: f64,
    pub peak_rss_mb: f64,
}

/// One row of `rm-<line>.csv`: one scheduler's run of one scale, times in µs.
#[derive(Clone, Debug, Deserialize, PartialEq)]
pub struct RmRow {
    pub line: String,
    pub scale: String,
    pub run: u32,
    pub scheduler: String,
    pub node_update_p50_us: f64,
    pub node_update_p99_us: f64,
    pub node_update_mean_us: f64,
    pub allocate_p50_us: f64,
    pub allocate_p99_us: f64,
    pub allocate_mean_us: f64,
    pub containers: u64,
    pub containers_per_sched_s: f64,
}

/// One row of `sls.csv`: one scheduler under SLS on one trace at one size.
#[derive(Clone, Debug, Deserialize, PartialEq)]
pub struct SlsRow {
    pub line: String,
    pub nodes: u64,
    pub trace: String,
    pub scheduler: String,
    pub containers_per_s: f64,
    /// The scheduler's share of one core.
    pub sched_cpu_share: f64,
    pub jvm_cpu_cores: f64,
    pub event_queue_max: u64,
    pub event_queue_p99: u64,
    pub ask_to_alloc_p50_ms: f64,
    pub p99_ms: f64,
    pub lq_p50_ms: Option<f64>,
    pub lq_p99_ms: Option<f64>,
    pub kept_up: String,
    pub load1: f64,
}

#[derive(Clone, Debug, Deserialize, PartialEq)]
pub struct LoadRow {
    pub stage: String,
    pub load1: f64,
    pub load5: f64,
    pub load15: f64,
}

/// Everything one `make bench` run measured.
#[derive(Clone, Debug, Default)]
pub struct BenchResults {
    pub core: Vec<CoreRow>,
    /// Per Hadoop line, JMH's rows.
    pub jni: Vec<(String, Vec<JniRow>)>,
    pub sim: Vec<SimRow>,
    pub rm: Vec<RmRow>,
    pub sls: Vec<SlsRow>,
    pub load: Vec<LoadRow>,
}

/// The files of a run kept as committed results, and the `make` target that writes each.
pub fn kept_files() -> Vec<(String, &'static str)> {
    let mut v = vec![("core.csv".to_string(), "bench-rust"), ("sim.csv".to_string(), "bench-sim")];
    v.extend(LINES.iter().map(|l| (format!("jni-{l}.csv"), "bench-jni")));
    v.extend(LINES.iter().map(|l| (format!("rm-{l}.csv"), "bench-rm")));
    v.push(("sls.csv".to_string(), "bench-sls"));
    v.push(("load.csv".to_string(), "bench"));
    v
}

impl BenchResults {
    pub fn load(dir: &Path) -> Result<BenchResults> {
        for (f, target) in kept_files() {
            if !dir.join(&f).is_file() {
                bail!("{}: no {f} (`make {target}` writes it)", dir.display());
            }
        }
        let jni = LINES.iter().map(|l| Ok((l.to_string(), read_csv(&dir.join(format!("jni-{l}.csv")))?)));
        Ok(BenchResults {
            core: read_csv(&dir.join("core.csv"))?,
            jni: jni.collect::<Result<_>>()?,
            sim: read_csv(&dir.join("sim.csv"))?,
            rm: LINES.iter().map(|l| read_csv(&dir.join(format!("rm-{l}.csv")))).collect::<Result<Vec<_>>>()?.concat(),
            sls: read_csv(&dir.join("sls.csv"))?,
            load: read_csv(&dir.join("load.csv"))?,
        })
    }

    fn core_median(&self, id: &str) -> Result<f64> {
        self.core
            .iter()
            .find(|r| r.case == id)
            .map(|r| r.median_ns)
            .with_context(|| format!("core.csv has no case '{id}'"))
    }

    fn jni_median(&self, line: &str) -> Result<f64> {
        let (_, rows) = self.jni.iter().find(|(l, _)| l == line).with_context(|| format!("no jni-{line}.csv"))?;
        rows.iter()
            .find(|r| r.benchmark == JNI_BENCHMARK)
            .map(|r| r.median_ns)
            .with_context(|| format!("jni-{line}.csv has no benchmark '{JNI_BENCHMARK}'"))
    }

    fn sim_case(&self, case: &str) -> Result<&SimRow> {
        self.sim.iter().find(|r| r.case == case).with_context(|| format!("sim.csv has no case '{case}'"))
    }
}

/// The RM benchmark's rows of the last (warmest) run of each line and scale.
fn rm_last_runs(res: &BenchResults) -> Vec<&RmRow> {
    res.rm.iter().filter(|r| !res.rm.iter().any(|o| o.line == r.line && o.scale == r.scale && o.run > r.run)).collect()
}

/// The (line, scale) pairs of the RM benchmark, in the files' order.
fn rm_scales(rows: &[&RmRow]) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = Vec::new();
    for r in rows {
        if !v.iter().any(|(l, s)| *l == r.line && *s == r.scale) {
            v.push((r.line.clone(), r.scale.clone()));
        }
    }
    v
}

fn rm_row<'a>(rows: &[&'a RmRow], line: &str, scale: &str, scheduler: &str) -> Result<&'a RmRow> {
    rows.iter()
        .find(|r| r.line == line && r.scale == scale && r.scheduler == scheduler)
        .copied()
        .with_context(|| format!("rm-{line}.csv has no {scheduler} row at scale {scale}"))
}

/// The SLS sizes measured per line, largest first.
fn sls_largest(res: &BenchResults, line: &str) -> Option<u64> {
    res.sls.iter().filter(|r| r.line == line).map(|r| r.nodes).max()
}

/// Criterion's median of benchmark `id` (its `new/estimates.json` under `criterion`), in ns.
fn criterion_median(criterion: &Path, id: &str) -> Result<f64> {
    let path = criterion.join(id).join("new/estimates.json");
    let text = std::fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))?;
    let v: serde_json::Value = serde_json::from_str(&text).with_context(|| format!("{}", path.display()))?;
    v.pointer("/median/point_estimate")
        .and_then(serde_json::Value::as_f64)
        .with_context(|| format!("{}: no median.point_estimate", path.display()))
}

/// Writes `out/core.csv` from criterion's estimates of every reported core benchmark.
pub fn import_criterion(criterion: &Path, out: &Path) -> Result<()> {
    let rows = CORE_CASES
        .iter()
        .map(|c| Ok(CoreRow { case: c.id.into(), median_ns: criterion_median(criterion, c.id)? }))
        .collect::<Result<Vec<_>>>()?;
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let path = out.join("core.csv");
    let mut w = csv::Writer::from_path(&path).with_context(|| format!("cannot write {}", path.display()))?;
    for r in rows {
        w.serialize(r)?;
    }
    w.flush()?;
    Ok(())
}

/// Copies a run's [`kept_files`] from `run` into `results`, after checking they load. A run
/// that already is `results` (regenerating the tables from the committed files) is left as it
/// is: copying a file onto itself truncates it.
pub fn import_run(run: &Path, results: &Path) -> Result<()> {
    BenchResults::load(run)?;
    std::fs::create_dir_all(results).with_context(|| format!("cannot create {}", results.display()))?;
    if same_dir(run, results) {
        return Ok(());
    }
    for (f, _) in kept_files() {
        let (from, to) = (run.join(&f), results.join(&f));
        std::fs::copy(&from, &to).with_context(|| format!("cannot copy {} to {}", from.display(), to.display()))?;
    }
    Ok(())
}

fn time(ns: f64) -> String {
    if ns >= 1_000_000.0 {
        format!("{:.2} ms", ns / 1e6)
    } else if ns >= 1_000.0 {
        format!("{:.2} µs", ns / 1e3)
    } else {
        format!("{ns:.0} ns")
    }
}

fn meets(ok: bool) -> &'static str {
    if ok {
        "yes"
    } else {
        "**no**"
    }
}

/// The README's table: every benchmark with a target, its figure and whether it meets it.
fn summary(res: &BenchResults) -> Result<String> {
    let mut md = String::from("| benchmark | command | target | measured | meets |\n|---|---|--:|--:|:-:|\n");
    for c in CORE_CASES {
        let m = res.core_median(c.id)?;
        let (target, ok) = match c.target_ns {
            Some(t) => (format!("≤ {}", time(t)), meets(m <= t)),
            None => ("-".into(), "-"),
        };
        writeln!(
            md,
            "| {} | `cargo bench -p tidal-core --bench {}` | {target} | {} | {ok} |",
            c.what,
            c.bench,
            time(m)
        )?;
    }
    for line in LINES {
        let m = res.jni_median(line)?;
        writeln!(
            md,
            "| one-node heartbeat through JNI ({line}, JMH median) | `make bench-jni` | ≤ {} | {} | {} |",
            time(JNI_TARGET_NS),
            time(m),
            meets(m <= JNI_TARGET_NS)
        )?;
    }
    for (case, target) in SIM_TARGETS {
        let r = res.sim_case(case)?;
        writeln!(
            md,
            "| simulator, {} machines, {} jobs ({} tasks), {:.0}% busy: CPU time | `tidal-sim bench {case}` | ≤ {target:.0} s | {:.1} s | {} |",
            r.machines,
            r.jobs,
            r.tasks,
            r.busy_vcores_pct,
            r.cpu_s,
            meets(r.cpu_s <= *target)
        )?;
    }
    let rm = rm_last_runs(res);
    for (line, scale) in rm_scales(&rm) {
        let (t, f) = (rm_row(&rm, &line, &scale, "Tidal")?, rm_row(&rm, &line, &scale, "floor")?);
        let ratio = t.node_update_mean_us / f.node_update_mean_us;
        writeln!(
            md,
            "| NODE_UPDATE in a MockRM ({line}, {scale}), Tidal / floor: mean (p50 {:.2}×) | `make bench-rm` | ≤ 1.25× | {ratio:.2}× | {} |",
            t.node_update_p50_us / f.node_update_p50_us,
            meets(ratio <= 1.25)
        )?;
        let fair = rm_row(&rm, &line, &scale, "FairScheduler")?;
        let ratio = t.allocate_p99_us / fair.allocate_p99_us;
        writeln!(
            md,
            "| allocate() p99 in a MockRM ({line}, {scale}), Tidal / FairScheduler | `make bench-rm` | ≤ 1× | {ratio:.2}× | {} |",
            meets(ratio <= 1.0)
        )?;
    }
    for line in LINES {
        let Some(nodes) = sls_largest(res, line) else { continue };
        for r in res.sls.iter().filter(|r| r.line == *line && r.nodes == nodes && r.scheduler == "tidal") {
            let others: Vec<String> = res
                .sls
                .iter()
                .filter(|o| o.line == r.line && o.nodes == nodes && o.trace == r.trace && o.scheduler != "tidal")
                .map(|o| format!("{} {}", o.scheduler, o.kept_up))
                .collect();
            writeln!(
                md,
                "| SLS, {nodes} nodes ({line}, {} trace), 1 s heartbeats: Tidal keeps up ({}; {:.0} containers/s) | `make bench-sls` | keeps up | {} | {} |",
                r.trace,
                others.join(", "),
                r.containers_per_s,
                r.kept_up,
                meets(r.kept_up == "yes")
            )?;
        }
    }
    Ok(md)
}

/// The RM benchmark's last run of each line and scale, every scheduler, times in µs.
fn rm_table(res: &BenchResults) -> Result<String> {
    let mut md = String::from(
        "| line | scale | run | scheduler | NODE_UPDATE p50 | p99 | mean | allocate() p50 | p99 | mean | containers | containers/sched-s |\n\
         |---|---|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|\n",
    );
    for r in rm_last_runs(res) {
        writeln!(
            md,
            "| {} | {} | {} | {} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {} | {:.0} |",
            r.line,
            r.scale,
            r.run,
            r.scheduler,
            r.node_update_p50_us,
            r.node_update_p99_us,
            r.node_update_mean_us,
            r.allocate_p50_us,
            r.allocate_p99_us,
            r.allocate_mean_us,
            r.containers,
            r.containers_per_sched_s
        )?;
    }
    Ok(md)
}

fn opt_ms(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{v:.0}"))
}

/// Every SLS run: throughput, the scheduler's CPU, its event queue and the latencies.
fn sls_table(res: &BenchResults) -> Result<String> {
    let mut md = String::from(
        "| line | nodes | trace | scheduler | containers/s | scheduler CPU (cores) | RM JVM CPU (cores) | event queue max | p99 | ask to allocation p50 (ms) | p99 | LQ p50 (ms) | LQ p99 | kept up | load |\n\
         |---|--:|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|:-:|--:|\n",
    );
    for r in &res.sls {
        writeln!(
            md,
            "| {} | {} | {} | {} | {:.1} | {:.3} | {:.2} | {} | {} | {:.0} | {:.0} | {} | {} | {} | {:.1} |",
            r.line,
            r.nodes,
            r.trace,
            r.scheduler,
            r.containers_per_s,
            r.sched_cpu_share,
            r.jvm_cpu_cores,
            r.event_queue_max,
            r.event_queue_p99,
            r.ask_to_alloc_p50_ms,
            r.p99_ms,
            opt_ms(r.lq_p50_ms),
            opt_ms(r.lq_p99_ms),
            r.kept_up,
            r.load1
        )?;
    }
    Ok(md)
}

/// Every scale benchmark of the simulator with its counts and costs.
fn sim_table(res: &BenchResults) -> Result<String> {
    let mut md = String::from(
        "| case | machines | jobs | tasks | busy vcores | events | core heartbeats | containers | CPU | wall | peak RSS |\n\
         |---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n",
    );
    for r in &res.sim {
        writeln!(
            md,
            "| {} | {} | {} | {} | {:.0}% | {} | {} | {} | {:.1} s | {:.1} s | {:.0} MB |",
            r.case,
            r.machines,
            r.jobs,
            r.tasks,
            r.busy_vcores_pct,
            r.events,
            r.core_heartbeats,
            r.containers,
            r.cpu_s,
            r.wall_s,
            r.peak_rss_mb
        )?;
    }
    Ok(md)
}

/// The load average as each stage of the run started.
fn load_table(res: &BenchResults) -> Result<String> {
    let mut md = String::from("| stage | load average (1, 5, 15 min) |\n|---|--:|\n");
    for r in &res.load {
        writeln!(md, "| {} | {:.2}, {:.2}, {:.2} |", r.stage, r.load1, r.load5, r.load15)?;
    }
    Ok(md)
}

pub const BLOCKS: &[&str] = &["benchmarks", "bench-sim", "bench-rm", "bench-sls", "bench-load"];

/// The text of block `name`, ending in a newline.
pub fn render(name: &str, res: &BenchResults) -> Result<String> {
    let md = match name {
        "benchmarks" => summary(res),
        "bench-sim" => sim_table(res),
        "bench-rm" => rm_table(res),
        "bench-sls" => sls_table(res),
        "bench-load" => load_table(res),
        _ => bail!("unknown generated block '{name}' (known: {})", BLOCKS.join(", ")),
    };
    md.with_context(|| format!("generated block '{name}'"))
}

/// An error naming every block of `page` that differs from the results in `results`.
pub fn check_files(results: &Path, page: &Path) -> Result<()> {
    let res = BenchResults::load(results)?;
    let regenerate = format!("tidal-sim bench-docs --results {} --docs {}", results.display(), page.display());
    marked_blocks::check_file(page, results, &regenerate, |name| render(name, &res))
}

/// Rewrites the blocks of `page` from the results in `results`; returns those that changed.
pub fn rewrite_files(results: &Path, page: &Path) -> Result<Vec<String>> {
    let res = BenchResults::load(results)?;
    marked_blocks::rewrite_file(page, |name| render(name, &res))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn results() -> BenchResults {
        let core = CORE_CASES.iter().map(|c| CoreRow { case: c.id.into(), median_ns: 1_500.0 }).collect();
        let jni = LINES
            .iter()
            .map(|l| (l.to_string(), vec![JniRow { benchmark: JNI_BENCHMARK.into(), median_ns: 900.0 }]))
            .collect();
        let sim = SIM_TARGETS
            .iter()
            .map(|(case, _)| SimRow {
                case: case.to_string(),
                machines: 100_000,
                jobs: 72_000,
                tasks: 10_000_000,
                events: 1,
                core_heartbeats: 1,
                containers: 1,
                busy_vcores_pct: 11.0,
                cpu_s: 59.0,
                wall_s: 60.0,
                peak_rss_mb: 800.0,
            })
            .collect();
        let rm_row = |line: &str, scheduler: &str, mean: f64, p99: f64| RmRow {
            line: line.into(),
            scale: "large".into(),
            run: 2,
            scheduler: scheduler.into(),
            node_update_p50_us: mean / 2.0,
            node_update_p99_us: mean * 10.0,
            node_update_mean_us: mean,
            allocate_p50_us: 10.0,
            allocate_p99_us: p99,
            allocate_mean_us: 100.0,
            containers: 1000,
            containers_per_sched_s: 1.0,
        };
        let mut rm = Vec::new();
        for line in LINES {
            rm.push(rm_row(line, "floor", 100.0, 900.0));
            rm.push(rm_row(line, "Tidal", 120.0, 900.0));
            rm.push(rm_row(line, "FairScheduler", 300.0, 1000.0));
            // An earlier, colder run must not count.
            rm.push(RmRow { run: 1, node_update_mean_us: 999.0, ..rm_row(line, "Tidal", 120.0, 900.0) });
        }
        let sls_row = |nodes: u64, scheduler: &str, kept_up: &str| SlsRow {
            line: "hadoop3".into(),
            nodes,
            trace: "saturated".into(),
            scheduler: scheduler.into(),
            containers_per_s: 800.0,
            sched_cpu_share: 0.05,
            jvm_cpu_cores: 0.5,
            event_queue_max: 10,
            event_queue_p99: 5,
            ask_to_alloc_p50_ms: 1000.0,
            p99_ms: 2000.0,
            lq_p50_ms: None,
            lq_p99_ms: None,
            kept_up: kept_up.into(),
            load1: 1.0,
        };
        let sls = vec![sls_row(2000, "tidal", "yes"), sls_row(5000, "tidal", "yes"), sls_row(5000, "fair", "no")];
        BenchResults { core, jni, sim, rm, sls, load: vec![] }
    }

    #[test]
    fn every_target_is_a_row_and_a_miss_says_no() {
        let mut res = results();
        let md = render("benchmarks", &res).unwrap();
        assert!(md.contains("| DRF heartbeat: 10k nodes, 1k apps in 100 queues, 50k pending | `cargo bench -p tidal-core --bench heartbeat` | ≤ 2.00 µs | 1.50 µs | yes |"), "{md}");
        assert!(md.contains("| one-node heartbeat through JNI (hadoop3, JMH median) | `make bench-jni` | ≤ 1.00 µs | 900 ns | yes |"), "{md}");
        assert!(md.contains("CPU time | `tidal-sim bench huge-saturated` | ≤ 60 s | 59.0 s | yes |"), "{md}");
        assert!(md.contains("| NODE_UPDATE in a MockRM (hadoop2, large), Tidal / floor: mean (p50 1.20×) | `make bench-rm` | ≤ 1.25× | 1.20× | yes |"), "{md}");
        assert!(md.contains("| allocate() p99 in a MockRM (hadoop3, large), Tidal / FairScheduler | `make bench-rm` | ≤ 1× | 0.90× | yes |"), "{md}");
        assert!(md.contains("| SLS, 5000 nodes (hadoop3, saturated trace), 1 s heartbeats: Tidal keeps up (fair no; 800 containers/s) | `make bench-sls` | keeps up | yes | yes |"), "{md}");
        assert!(!md.contains("2000 nodes"), "only the largest size measured: {md}");
        assert!(!md.contains("**no**"), "{md}");
        res.core[0].median_ns = 2_001.0;
        res.sim[1].cpu_s = 61.0;
        res.rm[1].node_update_mean_us = 126.0;
        res.sls[1].kept_up = "no".into();
        let md = render("benchmarks", &res).unwrap();
        assert_eq!(md.matches("**no**").count(), 4, "{md}");
    }

    #[test]
    fn a_missing_figure_is_an_error_naming_it() {
        let mut res = results();
        res.core.retain(|r| !r.case.starts_with("bopf_admission"));
        let err = format!("{:#}", render("benchmarks", &res).unwrap_err());
        assert!(err.contains("core.csv has no case 'bopf_admission/admit_lq_500_cycles_into_20k_queues'"), "{err}");
        let err = BenchResults::load(Path::new("/nonexistent")).unwrap_err().to_string();
        assert!(err.contains("no core.csv (`make bench-rust` writes it)"), "{err}");
    }
}
