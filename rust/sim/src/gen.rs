//! Generators of TPC-DS-, TPC-H-, BigBench- and MLlib-like DAG jobs: runs need no external data.
//!
//! Structure follows Carbyne's Tables 1 and 2: the number of stages, of barriers (stages with
//! several parents), the critical-path length and the number of disjoint paths are each drawn
//! from a log-normal fitted to the table's 50th and 95th percentiles, then made consistent
//! (see [`build_dag`]). Task counts, durations and demands are not in the tables: they follow a
//! model of our own, documented on [`Family::task_model`] and [`DemandModel`].

use crate::model::{JobTemplate, Stage};
use rand::distributions::WeightedIndex;
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

    /// Weights of the bottleneck of a multi-resource stage over [`BOTTLENECK_KINDS`] (vcores,
    /// memory, disk read, disk write, network in, network out), by the stage's role. Ours, from
    /// what such stages do in Hive or Spark SQL: sources scan tables (disk read), some
    /// decompress and filter (CPU), and their output is spilled (disk write) and served to the
    /// next shuffle (network out); joins behind a barrier receive their parents' shuffles
    /// (network in) and hash-join builds hold a side in memory; inner stages receive a shuffle
    /// (network in) and aggregate it (CPU, memory for hash aggregation); final stages write the
    /// result (disk write). TPC-H leans to CPU in its aggregations (scan-and-aggregate queries
    /// over few tables); BigBench's inner and join stages include machine learning and text
    /// analysis (k-means, naive Bayes, sentiment UDFs), so CPU and memory; MLlib iterations run
    /// over cached partitions (CPU or memory). Sources carry about half of TPC-DS's work and
    /// 40% of the others', so their weights are spread too: with these, each family's
    /// expected load per resource is within 0.5-1x of its busiest resource's.
    pub fn bottlenecks(self, role: Role) -> [u32; 6] {
        match (self, role) {
            (Family::Mllib, _) => [60, 40, 0, 0, 0, 0],
            (Family::Bigbench, Role::Final) => [15, 15, 0, 60, 10, 0],
            (_, Role::Final) => [15, 10, 0, 65, 10, 0],
            (Family::Tpcds, Role::Source) => [10, 5, 45, 10, 0, 30],
            (Family::Tpcds, Role::Join) => [10, 30, 0, 5, 55, 0],
            (Family::Tpcds, Role::Inner) => [25, 15, 0, 10, 45, 5],
            (Family::Tpch, Role::Source) => [15, 0, 55, 10, 0, 20],
            (Family::Tpch, Role::Join) => [10, 30, 0, 5, 55, 0],
            (Family::Tpch, Role::Inner) => [35, 15, 0, 5, 40, 5],
            (Family::Bigbench, Role::Source) => [10, 5, 50, 10, 0, 25],
            (Family::Bigbench, Role::Join) => [10, 35, 0, 5, 50, 0],
            (Family::Bigbench, Role::Inner) => [30, 35, 0, 5, 25, 5],
        }
    }
}

/// How a generated stage's container is drawn (`demands` in a generator source).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum DemandModel {
    /// Memory 1-8 GB, 1-4 vcores, bandwidths of a few percent of Carbyne's machine, whatever the
    /// machine: on that machine vcores bind most stages and nearly all the work, so a loaded run
    /// keeps vcores about 95% busy and every other resource under half.
    #[default]
    #[value(help = "1-8 GB, 1-4 vcores, a few percent of each bandwidth: vcores bind on Carbyne's machine")]
    SingleBottleneck,
    /// Every stage is bound by one of six resources, drawn by family and by the stage's place in
    /// its DAG ([`Family::bottlenecks`]): the bottleneck asks [`BOTTLENECK_SHARE`] of a machine,
    /// the other five [`SIDE_SHARE`] (at least one unit), so 2-5 tasks of a stage fill a machine
    /// in its bottleneck while about 20 or more fit in the others, and stages bound by different
    /// resources can share machines. Sized against the cluster's machine, so every task fits.
    ///
    /// Why: Carbyne schedules multi-resource jobs (§4.3: demands "across CPU, memory, disk, and
    /// the network", bandwidth of the machine's access link; §5.1's machines have 20 cores,
    /// 128 GB, an SSD and a 10 Gbps NIC), and its production analysis (§2.2) finds allocation
    /// to spare in all six resources (half the time 35%, 43%, 24%, 21%, 28% and 24% of the
    /// allocated compute, memory, disk in/out and network in/out could be given away). With
    /// one busy resource, alignment-based packing (Tetris, Carbyne's leftover packing) has
    /// nothing to align; here it does. The paper gives no per-stage demands: the distributions
    /// and magnitudes are ours.
    #[value(help = "each stage bound by one of six resources (20-40% of a machine), the others 1-5%")]
    MultiResource,
}

/// The six resources a multi-resource stage can be bound by, in [`Family::bottlenecks`]' order.
pub const BOTTLENECK_KINDS: [ResourceKind; 6] = [
    ResourceKind::Vcores,
    ResourceKind::MemoryMb,
    ResourceKind::DiskReadMbps,
    ResourceKind::DiskWriteMbps,
    ResourceKind::NetInMbps,
    ResourceKind::NetOutMbps,
];

/// A multi-resource stage's ask in its bottleneck, as a fraction of a machine (uniform): on
/// Carbyne's machine 4-8 cores, 26-51 GB, 0.8-1.6 Gbps of disk read, 0.4-0.8 Gbps of disk
/// write or 2-4 Gbps of network.
pub const BOTTLENECK_SHARE: (f64, f64) = (0.2, 0.4);

/// A multi-resource stage's ask in each other resource, as a fraction of a machine (uniform):
/// what a task of any kind also touches (a core, a few GB, some I/O), small enough that the
/// bottleneck is at least four times any other share.
pub const SIDE_SHARE: (f64, f64) = (0.01, 0.05);

/// What a stage does in its DAG, which decides what it is likely to be bound by.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Role {
    /// No parents: scans its input.
    Source,
    /// Several parents (a barrier): a join receiving its parents' shuffles.
    Join,
    /// One parent and some children: an aggregation or filter between two shuffles.
    Inner,
    /// No children: the job's output (Carbyne §2.2: "final output stages").
    Final,
}

impl Role {
    /// The role of a stage with `parents` parents and (or not) children.
    pub fn of(parents: usize, has_children: bool) -> Role {
        match (parents, has_children) {
            (0, _) => Role::Source,
            (_, false) => Role::Final,
            (1, true) => Role::Inner,
            _ => Role::Join,
        }
    }
}

impl DemandModel {
    /// The model's name in specs and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            DemandModel::SingleBottleneck => "single-bottleneck",
            DemandModel::MultiResource => "multi-resource",
        }
    }
}

/// What draws a generator's stage containers: the model, the machine multi-resource containers
/// are sized against, and the multi-resource model's own random stream. The single-bottleneck
/// container is drawn from the job's stream under both models, so that both give the same
/// DAGs, task counts and durations and a comparison of the two changes containers only.
pub struct Containers<'a, R> {
    pub model: DemandModel,
    pub machine: Resources,
    pub rng: &'a mut R,
}

impl<R: Rng> Containers<'_, R> {
    /// The container of one stage of a `family` job with `parents` parents and (or not)
    /// children.
    pub fn draw<J: Rng>(&mut self, job_rng: &mut J, family: Family, parents: usize, has_children: bool) -> Resources {
        let single = single_bottleneck(job_rng, parents);
        match self.model {
            DemandModel::SingleBottleneck => single,
            DemandModel::MultiResource => {
                let weights = family.bottlenecks(Role::of(parents, has_children));
                let b = WeightedIndex::new(weights).expect("positive weights").sample(self.rng);
                let mut r = Resources::ZERO;
                for (i, &kind) in BOTTLENECK_KINDS.iter().enumerate() {
                    let (lo, hi) = if i == b { BOTTLENECK_SHARE } else { SIDE_SHARE };
                    let cap = self.machine.get(kind);
                    // Whole units, at least one of every resource the machine has.
                    let amount = (self.rng.gen_range(lo..hi) * cap as f64).round() as i64;
                    r.set(kind, amount.clamp(cap.min(1), cap));
                }
                r
            }
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

/// Draws one whole job of a family. `scale` multiplies the number of tasks per stage;
/// `containers` draws the stages' containers.
pub fn generate<R: Rng, D: Rng>(
    rng: &mut R,
    family: Family,
    scale: f64,
    containers: &mut Containers<D>,
    name: String,
) -> JobTemplate {
    if family == Family::Mllib {
        return iterative(rng, scale, containers, name);
    }
    let targets = draw_targets(rng, &family.shape());
    let parents = build_dag(rng, targets);
    let mut has_children = vec![false; parents.len()];
    parents.iter().flatten().for_each(|&p| has_children[p as usize] = true);
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
            let demand = containers.draw(rng, family, parents.len(), has_children[i]);
            Stage { name: format!("s{i}"), parents, demand, durations_ms }
        })
        .collect();
    JobTemplate { name, stages, arrival_ms: None, queue: None }
}

/// An MLlib-like job: the number of stages from the family's shape, then every stage as wide
/// as the first, with the same container and one median task duration (each iteration does
/// the same work over the same cached partitions).
fn iterative<R: Rng, D: Rng>(rng: &mut R, scale: f64, containers: &mut Containers<D>, name: String) -> JobTemplate {
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
    let demand = containers.draw(rng, family, 1, true);
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
fn single_bottleneck<R: Rng>(rng: &mut R, n_parents: usize) -> Resources {
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

    fn carbyne_machine() -> Resources {
        crate::experiments::carbyne_machine().to_resources("machine").unwrap()
    }

    /// Jobs of `family` under `model` on `machine`.
    fn jobs_on(family: Family, model: DemandModel, machine: Resources, n: usize, seed: u64) -> Vec<JobTemplate> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut demand_rng = ChaCha8Rng::seed_from_u64(seed + 1);
        let mut c = Containers { model, machine, rng: &mut demand_rng };
        (0..n).map(|i| generate(&mut rng, family, 1.0, &mut c, format!("j{i}"))).collect()
    }

    fn jobs(family: Family, model: DemandModel, n: usize, seed: u64) -> Vec<JobTemplate> {
        jobs_on(family, model, carbyne_machine(), n, seed)
    }

    /// A stage's shares of a machine in the six resources, in [`BOTTLENECK_KINDS`]' order.
    fn shares(demand: &Resources, machine: &Resources) -> [f64; 6] {
        BOTTLENECK_KINDS.map(|k| demand.get(k) as f64 / machine.get(k) as f64)
    }

    /// Index in [`BOTTLENECK_KINDS`] of the resource a stage asks the largest share of.
    fn bottleneck(demand: &Resources, machine: &Resources) -> usize {
        let s = shares(demand, machine);
        (0..6).max_by(|&a, &b| s[a].total_cmp(&s[b])).expect("six resources")
    }

    /// Fraction of the stages of `jobs` (of the role, if given) bound by each resource.
    fn bottleneck_fractions(jobs: &[JobTemplate], role: Option<Role>) -> [f64; 6] {
        let m = carbyne_machine();
        let mut count = [0usize; 6];
        for j in jobs {
            let mut has_children = vec![false; j.stages.len()];
            j.stages.iter().flat_map(|s| &s.parents).for_each(|&p| has_children[p as usize] = true);
            for (s, &c) in j.stages.iter().zip(&has_children) {
                if role.is_none_or(|r| r == Role::of(s.parents.len(), c)) {
                    count[bottleneck(&s.demand, &m)] += 1;
                }
            }
        }
        let n = count.iter().sum::<usize>().max(1) as f64;
        count.map(|c| c as f64 / n)
    }

    /// The knob changes what limits stages: vcores for most of them under the single-bottleneck
    /// model; under the multi-resource model at least four resources each bind at least 10% of
    /// the stages and none binds more than half, for every family.
    #[test]
    fn multi_resource_stages_are_bound_by_several_resources() {
        for family in [Family::Tpcds, Family::Tpch, Family::Bigbench] {
            let single = bottleneck_fractions(&jobs(family, DemandModel::SingleBottleneck, 300, 5), None);
            assert!(single[0] > 0.5, "{}: single-bottleneck stages bound by vcores: {single:?}", family.name());
            let multi = bottleneck_fractions(&jobs(family, DemandModel::MultiResource, 300, 5), None);
            let spread = multi.iter().filter(|&&f| f >= 0.1).count();
            assert!(spread >= 4, "{}: multi-resource bottlenecks {multi:?}", family.name());
            assert!(multi.iter().all(|&f| f <= 0.5), "{}: multi-resource bottlenecks {multi:?}", family.name());
        }
    }

    /// Sources are mostly bound by disk reads, final stages by disk writes, joins by the
    /// network in, BigBench's inner stages more by CPU and memory than TPC-DS's.
    #[test]
    fn multi_resource_bottlenecks_follow_the_stage_role() {
        let tpcds = jobs(Family::Tpcds, DemandModel::MultiResource, 500, 6);
        let most = |f: [f64; 6]| (0..6).max_by(|&a, &b| f[a].total_cmp(&f[b])).expect("six resources");
        let kind = |f: [f64; 6]| BOTTLENECK_KINDS[most(f)];
        assert_eq!(kind(bottleneck_fractions(&tpcds, Some(Role::Source))), ResourceKind::DiskReadMbps);
        assert_eq!(kind(bottleneck_fractions(&tpcds, Some(Role::Final))), ResourceKind::DiskWriteMbps);
        assert_eq!(kind(bottleneck_fractions(&tpcds, Some(Role::Join))), ResourceKind::NetInMbps);
        let bigbench = jobs(Family::Bigbench, DemandModel::MultiResource, 500, 6);
        let cpu_mem = |jobs: &[JobTemplate]| {
            let f = bottleneck_fractions(jobs, Some(Role::Inner));
            f[0] + f[1]
        };
        assert!(cpu_mem(&bigbench) > cpu_mem(&tpcds) + 0.1, "{} vs {}", cpu_mem(&bigbench), cpu_mem(&tpcds));
    }

    /// A multi-resource stage asks whole units, at least one of each resource, fits on one
    /// machine (Carbyne's, and a small one), and its bottleneck alone limits how many of its
    /// tasks fit: at most five by it, about twenty or more by any other resource (a twentieth
    /// of the machine at most, rounded to whole units).
    #[test]
    fn multi_resource_demands_fit_and_the_bottleneck_limits() {
        let mut small = Resources::new(8192, 4);
        for (k, v) in [
            (ResourceKind::DiskReadMbps, 500),
            (ResourceKind::DiskWriteMbps, 300),
            (ResourceKind::NetInMbps, 1000),
            (ResourceKind::NetOutMbps, 1000),
        ] {
            small.set(k, v);
        }
        for machine in [carbyne_machine(), small] {
            for j in jobs_on(Family::Bigbench, DemandModel::MultiResource, machine, 100, 9) {
                for s in &j.stages {
                    assert!(s.demand.fits_in(&machine), "{} on {machine}", s.demand);
                    assert!(BOTTLENECK_KINDS.iter().all(|&k| s.demand.get(k) >= 1), "{}", s.demand);
                }
            }
        }
        let m = carbyne_machine();
        for j in jobs(Family::Tpcds, DemandModel::MultiResource, 100, 10) {
            for s in &j.stages {
                let mut sh = shares(&s.demand, &m);
                sh.sort_by(f64::total_cmp);
                let fit = |share: f64| (1.0 / share).floor();
                assert!(fit(sh[5]) <= 5.0 && fit(sh[4]) >= 19.0, "{}: shares {sh:?}", s.demand);
            }
        }
    }

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
        let both = [DemandModel::SingleBottleneck, DemandModel::MultiResource];
        for j in both.into_iter().flat_map(|model| jobs(Family::Mllib, model, 50, 3)) {
            j.validate().unwrap();
            assert!(j.stages.len() >= 2);
            let s = dag_stats(&j.stages);
            assert_eq!((s.critical_path, s.barriers, s.disjoint_paths), (j.stages.len(), 0, 1));
            assert!(j.stages.iter().all(|st| st.tasks() == j.stages[0].tasks() && st.demand == j.stages[0].demand));
        }
    }

    /// Same seed, same jobs, under either model; the models draw different containers for the
    /// same DAGs, task counts and durations.
    #[test]
    fn jobs_are_valid_and_deterministic() {
        let single = jobs(Family::Tpcds, DemandModel::SingleBottleneck, 20, 1);
        let multi = jobs(Family::Tpcds, DemandModel::MultiResource, 20, 1);
        for a in [&single, &multi] {
            a.iter().for_each(|j| j.validate().unwrap());
        }
        assert_eq!(single, jobs(Family::Tpcds, DemandModel::SingleBottleneck, 20, 1));
        assert_eq!(multi, jobs(Family::Tpcds, DemandModel::MultiResource, 20, 1));
        for (a, b) in single.iter().zip(&multi) {
            assert_eq!(a.stages.len(), b.stages.len());
            for (s, t) in a.stages.iter().zip(&b.stages) {
                assert_eq!((&s.parents, &s.durations_ms), (&t.parents, &t.durations_ms));
                assert_ne!(s.demand, t.demand);
            }
        }
    }
}
