//! Generators of TPC-DS-, TPC-H-, BigBench- and MLlib-like DAG jobs: runs need no external data.
//!
//! Structure follows Carbyne's Tables 1 and 2: the number of stages, of barriers (stages with
//! several parents), the critical-path length and the number of disjoint paths are each drawn
//! from a log-normal fitted to the table's 50th and 95th percentiles, then made consistent
//! (see [`build_dag`]). Task counts, durations and demands are not in the tables: they follow a
//! model of our own, documented on [`Family::task_model`].

use crate::model::{JobTemplate, Stage};
use rand::Rng;
use rand_distr::{Distribution, LogNormal, Normal};
use serde::{Deserialize, Serialize};
use tidal_core::{ResourceKind, Resources};

#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Family {
    Tpcds,
    Tpch,
    Bigbench,
    /// Iterative machine learning (the speculative slot reservation paper's KMeans, SVM and
    /// PageRank): a chain of equally wide stages, one per iteration, each a barrier for the next.
    Mllib,
}

/// 50th and 95th percentiles of one structural property.
#[derive(Copy, Clone, Debug)]
pub struct Pct {
    pub p50: f64,
    pub p95: f64,
}

/// Carbyne's Table 1 (stages, barriers) and Table 2 (critical path, disjoint paths).
#[derive(Copy, Clone, Debug)]
pub struct Shape {
    pub stages: Pct,
    pub barriers: Pct,
    pub critical_path: Pct,
    pub disjoint_paths: Pct,
}

/// Per-family task model: medians of log-normals (sigma in natural-log units).
#[derive(Copy, Clone, Debug)]
pub struct TaskModel {
    pub tasks_per_stage: f64,
    pub tasks_sigma: f64,
    pub stage_duration_ms: f64,
    pub stage_duration_sigma: f64,
    /// Spread of task durations inside a stage.
    pub task_duration_sigma: f64,
}

const fn pct(p50: f64, p95: f64) -> Pct {
    Pct { p50, p95 }
}

impl Family {
    pub fn name(self) -> &'static str {
        match self {
            Family::Tpcds => "tpcds",
            Family::Tpch => "tpch",
            Family::Bigbench => "bigbench",
            Family::Mllib => "mllib",
        }
    }

    pub fn shape(self) -> Shape {
        match self {
            Family::Tpcds => Shape {
                stages: pct(8.0, 23.0),
                barriers: pct(1.0, 4.0),
                critical_path: pct(5.0, 8.0),
                disjoint_paths: pct(4.0, 15.0),
            },
            Family::Tpch => Shape {
                stages: pct(8.0, 12.0),
                barriers: pct(2.0, 4.0),
                critical_path: pct(5.0, 7.0),
                disjoint_paths: pct(3.0, 7.0),
            },
            Family::Bigbench => Shape {
                stages: pct(7.0, 19.0),
                barriers: pct(2.0, 6.0),
                critical_path: pct(5.0, 8.0),
                disjoint_paths: pct(2.0, 10.0),
            },
            // Ours: a load stage and 5-20 iterations in one chain.
            Family::Mllib => Shape {
                stages: pct(10.0, 20.0),
                barriers: pct(0.0, 0.0),
                critical_path: pct(10.0, 20.0),
                disjoint_paths: pct(1.0, 1.0),
            },
        }
    }

    /// Our model (the papers publish no per-stage figures): TPC-DS queries are the widest,
    /// BigBench mixes short ML stages with long scans. Medians chosen so that a job runs for
    /// minutes to tens of minutes on a loaded 100-machine cluster, as Carbyne reports.
    pub fn task_model(self) -> TaskModel {
        match self {
            Family::Tpcds => TaskModel {
                tasks_per_stage: 40.0,
                tasks_sigma: 1.0,
                stage_duration_ms: 9000.0,
                stage_duration_sigma: 0.8,
                task_duration_sigma: 0.25,
            },
            Family::Tpch => TaskModel {
                tasks_per_stage: 30.0,
                tasks_sigma: 0.9,
                stage_duration_ms: 7000.0,
                stage_duration_sigma: 0.7,
                task_duration_sigma: 0.25,
            },
            Family::Bigbench => TaskModel {
                tasks_per_stage: 25.0,
                tasks_sigma: 1.1,
                stage_duration_ms: 10000.0,
                stage_duration_sigma: 0.9,
                task_duration_sigma: 0.3,
            },
            // Iterations are short and alike: one width and one duration per job, little spread.
            Family::Mllib => TaskModel {
                tasks_per_stage: 32.0,
                tasks_sigma: 0.5,
                stage_duration_ms: 3000.0,
                stage_duration_sigma: 0.4,
                task_duration_sigma: 0.15,
            },
        }
    }
}

fn lognormal_from(p: Pct) -> LogNormal<f64> {
    let mu = p.p50.ln();
    let sigma = ((p.p95.ln() - mu) / 1.6449).max(1e-6);
    LogNormal::new(mu, sigma).expect("finite parameters")
}

fn draw_count<R: Rng>(rng: &mut R, p: Pct, min: usize) -> usize {
    (lognormal_from(p).sample(rng).round() as usize).max(min)
}

/// Structural targets drawn for one job.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Targets {
    pub stages: usize,
    pub barriers: usize,
    pub critical_path: usize,
    pub disjoint_paths: usize,
}

pub fn draw_targets<R: Rng>(rng: &mut R, shape: &Shape) -> Targets {
    Targets {
        stages: draw_count(rng, shape.stages, 1).min(200),
        barriers: lognormal_from(shape.barriers).sample(rng).round().max(0.0) as usize,
        critical_path: draw_count(rng, shape.critical_path, 1).min(60),
        disjoint_paths: draw_count(rng, shape.disjoint_paths, 1).min(200),
    }
}

/// Builds the parent lists of a DAG close to the targets: a spine of `critical_path` stages;
/// `disjoint_paths - 1` branches (chains) joining spine stages, the joined spine stages being
/// the barriers; the remaining stages lengthen branches without making any path longer than
/// the spine. Adjustments: the spine needs at least two stages to hold a barrier, there are at
/// most `critical_path - 1` barriers, none without a branch, and with several paths at least
/// one (branches must join somewhere).
pub fn build_dag<R: Rng>(rng: &mut R, t: Targets) -> Vec<Vec<u32>> {
    let mut l = t.critical_path.max(1);
    let mut p = t.disjoint_paths.max(1);
    if p > 1 && l < 2 {
        l = 2;
    }
    let branches = p - 1;
    let mut b = t.barriers.min(l.saturating_sub(1));
    if branches > 0 {
        b = b.max(1);
    } else {
        b = 0;
    }
    let s = t.stages.max(l + branches);
    // Spine: stage i has parent i-1.
    let mut parents: Vec<Vec<u32>> = (0..l).map(|i| if i == 0 { vec![] } else { vec![i as u32 - 1] }).collect();
    if branches == 0 {
        // A single chain: extra stages would lengthen the critical path, so the chain is it.
        return parents;
    }
    // Barrier targets: distinct spine stages in 1..l.
    let mut spine: Vec<usize> = (1..l).collect();
    for i in 0..b {
        let j = rng.gen_range(i..spine.len());
        spine.swap(i, j);
    }
    let targets = &spine[..b];
    // Every branch feeds one target; with more barriers than branches, branches also feed the
    // remaining targets (a stage with several children), so barriers do not need more paths.
    let mut branch_targets: Vec<Vec<usize>> = (0..branches).map(|k| vec![targets[k % b]]).collect();
    for (i, &t) in targets.iter().enumerate().skip(branches) {
        branch_targets[i % branches].push(t);
    }
    for t in branch_targets.iter_mut().skip(b.min(branches)) {
        *t = vec![targets[rng.gen_range(0..b)]];
    }
    let cap: Vec<usize> = branch_targets.iter().map(|t| *t.iter().min().expect("a target")).collect();
    // A branch joining spine stage j may have at most j stages.
    let mut len = vec![1usize; branches];
    let mut extra = s - l - branches;
    let mut open: Vec<usize> = (0..branches).filter(|&k| len[k] < cap[k]).collect();
    while extra > 0 && !open.is_empty() {
        let oi = rng.gen_range(0..open.len());
        let k = open[oi];
        len[k] += 1;
        extra -= 1;
        if len[k] >= cap[k] {
            open.swap_remove(oi);
        }
    }
    p = branches + 1;
    debug_assert!(p >= 2);
    for k in 0..branches {
        let head = parents.len() as u32;
        for i in 0..len[k] {
            parents.push(if i == 0 { vec![] } else { vec![head + i as u32 - 1] });
        }
        let tail = parents.len() as u32 - 1;
        for &t in &branch_targets[k] {
            parents[t].push(tail);
        }
    }
    parents
}

/// Draws one whole job of a family. `scale` multiplies the number of tasks per stage.
pub fn generate<R: Rng>(rng: &mut R, family: Family, scale: f64, name: String) -> JobTemplate {
    if family == Family::Mllib {
        return iterative(rng, scale, name);
    }
    let targets = draw_targets(rng, &family.shape());
    let parents = build_dag(rng, targets);
    let m = family.task_model();
    let tasks_d = LogNormal::new(m.tasks_per_stage.ln(), m.tasks_sigma).expect("finite");
    let dur_d = LogNormal::new(m.stage_duration_ms.ln(), m.stage_duration_sigma).expect("finite");
    let spread = Normal::new(0.0, m.task_duration_sigma).expect("finite");
    let stages = parents
        .into_iter()
        .enumerate()
        .map(|(i, parents)| {
            let n = ((tasks_d.sample(rng) * scale).round() as usize).clamp(1, 5000);
            let median = dur_d.sample(rng).clamp(500.0, 600_000.0);
            let durations_ms =
                (0..n).map(|_| (median * spread.sample(rng).exp()).clamp(100.0, 3_600_000.0) as u32).collect();
            let demand = stage_demand(rng, parents.len());
            Stage { name: format!("s{i}"), parents, demand, durations_ms }
        })
        .collect();
    JobTemplate { name, stages, arrival_ms: None, queue: None }
}

/// An MLlib-like job: the number of stages from the family's shape, then every stage as wide
/// as the first, with the same container and one median task duration (each iteration does
/// the same work over the same cached partitions).
fn iterative<R: Rng>(rng: &mut R, scale: f64, name: String) -> JobTemplate {
    let family = Family::Mllib;
    let m = family.task_model();
    let n_stages = draw_count(rng, family.shape().stages, 2);
    let width = ((LogNormal::new(m.tasks_per_stage.ln(), m.tasks_sigma).expect("finite").sample(rng) * scale).round()
        as usize)
        .clamp(1, 5000);
    let median = LogNormal::new(m.stage_duration_ms.ln(), m.stage_duration_sigma)
        .expect("finite")
        .sample(rng)
        .clamp(500.0, 600_000.0);
    let spread = Normal::new(0.0, m.task_duration_sigma).expect("finite");
    let demand = stage_demand(rng, 1);
    let stages = (0..n_stages)
        .map(|i| {
            let durations_ms =
                (0..width).map(|_| (median * spread.sample(rng).exp()).clamp(100.0, 3_600_000.0) as u32).collect();
            let parents = if i == 0 { Vec::new() } else { vec![i as u32 - 1] };
            Stage { name: format!("s{i}"), parents, demand, durations_ms }
        })
        .collect();
    JobTemplate { name, stages, arrival_ms: None, queue: None }
}

/// Container shape of a generated stage: memory 1-8 GB and 1-4 vcores; sources scan (disk
/// read), joins shuffle (network in), every stage writes some output. Bandwidths in Mbps.
fn stage_demand<R: Rng>(rng: &mut R, n_parents: usize) -> Resources {
    const MEM: [i64; 6] = [1024, 2048, 2048, 3072, 4096, 8192];
    const CPU: [i64; 5] = [1, 1, 1, 2, 4];
    let mut r = Resources::new(MEM[rng.gen_range(0..MEM.len())], CPU[rng.gen_range(0..CPU.len())]);
    let (read, net_in) = match n_parents {
        0 => (rng.gen_range(100..400), rng.gen_range(0..50)),
        1 => (rng.gen_range(0..100), rng.gen_range(50..200)),
        _ => (rng.gen_range(0..50), rng.gen_range(150..400)),
    };
    r.set(ResourceKind::DiskReadMbps, read);
    r.set(ResourceKind::DiskWriteMbps, rng.gen_range(20..150));
    r.set(ResourceKind::NetInMbps, net_in);
    r.set(ResourceKind::NetOutMbps, rng.gen_range(20..200));
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{dag_stats, validate_stages, Stage};
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    fn percentile(mut v: Vec<usize>, p: f64) -> f64 {
        v.sort_unstable();
        crate::metrics::percentile_sorted(&v.iter().map(|&x| x as f64).collect::<Vec<_>>(), p)
    }

    /// The generated DAGs' statistics match Carbyne's Tables 1 and 2: medians within one
    /// stage, 95th percentiles within 25% (the consistency adjustments of `build_dag` shift
    /// the tails a little).
    #[test]
    fn generated_dags_follow_table_2() {
        for family in [Family::Tpcds, Family::Tpch, Family::Bigbench] {
            let mut rng = ChaCha8Rng::seed_from_u64(7);
            let shape = family.shape();
            let mut stats = Vec::new();
            for i in 0..2000 {
                let t = draw_targets(&mut rng, &shape);
                let parents = build_dag(&mut rng, t);
                let stages: Vec<Stage> = parents
                    .into_iter()
                    .enumerate()
                    .map(|(k, p)| Stage {
                        name: format!("{i}.{k}"),
                        parents: p,
                        demand: Resources::new(1, 1),
                        durations_ms: vec![1],
                    })
                    .collect();
                validate_stages(&stages).unwrap();
                stats.push(dag_stats(&stages));
            }
            let check = |what: &str, v: Vec<usize>, p: Pct| {
                let (m, t) = (percentile(v.clone(), 0.5), percentile(v, 0.95));
                assert!((m - p.p50).abs() <= 1.0, "{} {what}: median {m} vs {}", family.name(), p.p50);
                assert!((t - p.p95).abs() <= 0.25 * p.p95 + 1.0, "{} {what}: p95 {t} vs {}", family.name(), p.p95);
            };
            check("stages", stats.iter().map(|s| s.stages).collect(), shape.stages);
            check("barriers", stats.iter().map(|s| s.barriers).collect(), shape.barriers);
            check("critical path", stats.iter().map(|s| s.critical_path).collect(), shape.critical_path);
            check("disjoint paths", stats.iter().map(|s| s.disjoint_paths).collect(), shape.disjoint_paths);
        }
    }

    #[test]
    fn mllib_jobs_are_chains_of_equal_stages() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        for i in 0..50 {
            let j = generate(&mut rng, Family::Mllib, 1.0, format!("m{i}"));
            j.validate().unwrap();
            assert!(j.stages.len() >= 2);
            let s = dag_stats(&j.stages);
            assert_eq!((s.critical_path, s.barriers, s.disjoint_paths), (j.stages.len(), 0, 1));
            assert!(j.stages.iter().all(|st| st.tasks() == j.stages[0].tasks() && st.demand == j.stages[0].demand));
        }
    }

    #[test]
    fn jobs_are_valid_and_deterministic() {
        let a: Vec<_> = {
            let mut rng = ChaCha8Rng::seed_from_u64(1);
            (0..20).map(|i| generate(&mut rng, Family::Tpcds, 1.0, format!("j{i}"))).collect()
        };
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        for (i, j) in a.iter().enumerate() {
            j.validate().unwrap();
            assert_eq!(*j, generate(&mut rng, Family::Tpcds, 1.0, format!("j{i}")));
        }
    }
}
