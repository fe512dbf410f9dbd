//! Experiment specs: the schema of the TOML or JSON files that describe a run.
//!
//! A spec gives the cluster, the scheduler configuration, the simulator's knobs and the
//! workload, the trace readers' options included. Unknown fields are errors, so a typo is
//! reported instead of silently ignored.

use crate::gen::{DemandModel, Family, BOTTLENECK_KINDS};
use anyhow::{anyhow, bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use tidal_core::{ResourceKind, Resources};

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Spec {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub seed: u64,
    pub cluster: ClusterSpec,
    #[serde(default)]
    pub scheduler: SchedulerSpec,
    #[serde(default)]
    pub sim: SimSpec,
    pub workload: WorkloadSpec,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClusterSpec {
    pub machines: usize,
    #[serde(default = "default_per_rack")]
    pub machines_per_rack: usize,
    /// Capacity of every machine, e.g. `{ memory_mb = 131072, vcores = 20, net_in_mbps = 10000 }`.
    pub machine: ResourceSpec,
}

fn default_per_rack() -> usize {
    40
}

/// A resource vector as written in specs: `{ memory_mb = 2048, vcores = 1, net_in_mbps = 100 }`.
/// Names are [`ResourceKind`]'s, YARN spellings accepted; an unknown name is an error.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ResourceSpec(pub BTreeMap<String, i64>);

/// The resource a spec names in `field`; an unknown name is an error that lists the known ones.
pub fn resource_kind(field: &str, name: &str) -> Result<ResourceKind> {
    ResourceKind::parse(name).ok_or_else(|| {
        let known: Vec<&str> = ResourceKind::ALL.iter().map(|k| k.name()).collect();
        anyhow!("{field}: unknown resource '{name}' (known: {})", known.join(", "))
    })
}

impl ResourceSpec {
    /// From `(resource name, amount)` pairs.
    pub fn of(amounts: &[(&str, i64)]) -> ResourceSpec {
        ResourceSpec(amounts.iter().map(|(k, v)| (k.to_string(), *v)).collect())
    }

    pub fn to_resources(&self, field: &str) -> Result<Resources> {
        let mut r = Resources::ZERO;
        for (name, &v) in &self.0 {
            let kind = resource_kind(field, name)?;
            if v < 0 {
                bail!("{field}.{name}: {v} is negative");
            }
            r.set(kind, v);
        }
        Ok(r)
    }
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SchedulerSpec {
    /// Policy name as the queue file's `<policy>` takes it. Used when no queue file is given:
    /// the queues are then the workload's, weight 1 unless `weights` says otherwise.
    pub policy: Option<String>,
    /// An allocation file (the RM's own format); relative paths are relative to the spec.
    pub queue_file: Option<PathBuf>,
    #[serde(default)]
    pub weights: std::collections::BTreeMap<String, f64>,
    /// `yarn.scheduler.minimum-allocation-*`; default 1024 MB, 1 vcore.
    pub min_allocation: Option<ResourceSpec>,
    /// `yarn.scheduler.maximum-allocation-*`; default: one machine.
    pub max_allocation: Option<ResourceSpec>,
    /// Containers per node heartbeat; default YARN's 10. (The fair scheduler's
    /// assignmultiple with no limit corresponds to a large number.)
    pub max_assign_per_heartbeat: Option<u32>,
    /// The order among apps inside a queue (`<app-policy>`): fifo (default), carbyne, tetris,
    /// sjf, uwfq, or any other name this build's core knows.
    pub app_policy: Option<String>,
    /// Carbyne's P(altruism) (`<altruism-probability>`); 0 is job-level DRF.
    pub altruism_probability: Option<f64>,
    /// Tetris's fairness knob (`<fairness-knob>`).
    pub fairness_knob: Option<f64>,
    /// UWFQ user weights by user name (`<uwfq-user-weight user="..">`).
    #[serde(default)]
    pub uwfq_user_weights: std::collections::BTreeMap<String, f64>,
    /// UWFQ grace period in seconds (`<uwfq-grace-period-sec>`).
    pub uwfq_grace_period_s: Option<f64>,
    /// UWFQ's per-container runtime for apps without hints (`<uwfq-default-task-sec>`).
    pub uwfq_default_task_s: Option<f64>,
    /// Speculative slot reservation (`<slot-reservation>`) for some queues.
    pub slot_reservation: Option<SlotReservationSpec>,
    /// Extra elements copied verbatim into the generated allocation file's `<tidal>`, for
    /// switches this spec format does not name (e.g. newer core features).
    #[serde(default)]
    pub extra_xml: String,
}

/// `<slot-reservation>` inside each of `queues`; unset attributes take the core's defaults,
/// and the core checks their ranges.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SlotReservationSpec {
    pub queues: Vec<String>,
    /// P, the target probability that a phase transition keeps all the space its tasks held.
    pub isolation_probability: Option<f64>,
    /// R, the finished fraction after which space for a wider next stage's extra tasks is
    /// pre-reserved.
    pub threshold: Option<f64>,
    pub prior_shape: Option<f64>,
    pub min_samples: Option<u32>,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum ErrorScope {
    #[default]
    All,
    /// Only latency-sensitive jobs (BoPF's sensitivity study).
    Lq,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SimSpec {
    /// NodeManager heartbeat interval (`yarn.resourcemanager.nodemanagers.heartbeat-interval-ms`).
    pub heartbeat_ms: i64,
    /// Added to every container's run time (container launch, JVM start).
    pub container_overhead_ms: i64,
    /// From the AM's container start until it asks for its tasks (AM JVM and framework
    /// start-up); default `container_overhead_ms`.
    pub am_overhead_ms: Option<i64>,
    /// From a job's arrival until the RM has its application (the client stages files and
    /// submits); counted in its JCT.
    pub submit_latency_ms: i64,
    /// Standard deviation of the estimation error e: real = estimate x (1 + e).
    pub estimation_error_std: f64,
    pub error_applies_to: ErrorScope,
    /// The ApplicationMaster's container, held for the job's lifetime (priority 0). `{}`
    /// turns AM modelling off.
    pub am_container: ResourceSpec,
    /// Period of the per-queue share samples, and of the core's history samples
    /// (`history.json`, at most an hour).
    pub sample_ms: i64,
    /// When no parked node can take any pending ask, nodes are looked at again after this long
    /// (only time-driven policies can change their mind without an event); 0 = never.
    pub idle_recheck_ms: i64,
    /// Window of Jain's fairness index.
    pub fairness_window_ms: i64,
    /// Over what Jain's index is computed: queues' or jobs' dominant shares.
    pub fairness_over: FairnessOver,
    /// Whether ApplicationMasters send DAG hints (at registration) and progress.
    pub hints: bool,
    /// Between stage completions, an AM sends progress at most this often (at a task start or
    /// end, when something changed since the last report).
    pub hint_progress_interval_ms: i64,
    /// Whether AMs run the straggler copies the scheduler advises on space a slot reservation
    /// holds (speculative slot reservation, §IV-C); the copy's duration is a fresh draw from
    /// its stage's task durations and the first of the two to finish wins.
    pub straggler_copies: bool,
    /// End the run once every job of this class (e.g. "LQ") has finished; jobs still running
    /// then are left out of the results and counted as unfinished. Lets an experiment keep a
    /// backlog that outlasts what it measures without simulating the backlog's drain.
    pub stop_after_class: Option<String>,
    /// The resources tasks ask for, e.g. `["memory_mb", "vcores"]` as YARN 2.7 schedules; the
    /// others are dropped from every job drawn. Default: all a source gives.
    pub task_resources: Option<Vec<String>>,
    /// Every task's container, in place of the one its source gives (e.g. `{ memory_mb = 512,
    /// vcores = 1 }` to fit a small real cluster that replays the workload).
    pub task_demand: Option<ResourceSpec>,
    /// Whether AMs run a job's next task in the container of a task that ended, as Tez's
    /// container reuse and Spark's executors do, instead of asking the RM again: `none`
    /// (default), `stage` or `dag`. A reused task starts at once, without
    /// `container_overhead_ms` (the launch it saves). Off while straggler copies are run.
    pub container_reuse: ContainerReuse,
}

/// What a container whose task ended may run next (`sim.container_reuse`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum ContainerReuse {
    /// Every task runs in a container of its own.
    #[default]
    None,
    /// A not-yet-started task of the same stage; the AM lowers its ask at that priority by one.
    Stage,
    /// As `stage`, else one of any runnable stage of the job whose demand fits in the
    /// container (Tez reuses containers across vertices), the lowest priority number first.
    Dag,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum FairnessOver {
    #[default]
    Queues,
    /// Every job is an entity (Carbyne's inter-job fairness); weights are 1.
    Jobs,
}

impl Default for SimSpec {
    fn default() -> Self {
        SimSpec {
            heartbeat_ms: 1000,
            container_overhead_ms: 0,
            am_overhead_ms: None,
            submit_latency_ms: 0,
            estimation_error_std: 0.0,
            error_applies_to: ErrorScope::All,
            am_container: ResourceSpec::of(&[("memory_mb", 1024), ("vcores", 1)]),
            sample_ms: 1000,
            idle_recheck_ms: 10_000,
            fairness_window_ms: 60_000,
            fairness_over: FairnessOver::Queues,
            hints: true,
            hint_progress_interval_ms: 5_000,
            straggler_copies: true,
            stop_after_class: None,
            task_resources: None,
            task_demand: None,
            container_reuse: ContainerReuse::None,
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case", deny_unknown_fields)]
pub enum SourceSpec {
    /// Jobs drawn from a built-in generator.
    Generator {
        family: Family,
        #[serde(default = "one")]
        scale: f64,
        /// Ratio of the largest job's input to the smallest's: each job's task counts are
        /// multiplied by `input_spread^u`, u uniform in [0, 1) (log-uniform input sizes, as
        /// Carbyne's "input sizes from GBs to hundreds of GBs"). 1 = no spread.
        #[serde(default = "one")]
        input_spread: f64,
        /// How stages' containers are drawn: `single-bottleneck` (default) or `multi-resource`
        /// (see [`DemandModel`]).
        #[serde(default)]
        demands: DemandModel,
    },
    TpchSpark {
        file: String,
        #[serde(default)]
        options: TpchOptions,
    },
    Swim {
        file: String,
        #[serde(default)]
        options: SwimOptions,
    },
    Sls {
        file: String,
        #[serde(default)]
        options: SlsOptions,
    },
    /// Every job the same fixed shape: a chain of stages, each waiting for the one before
    /// (a synthetic job type such as UWFQ's short and tiny jobs).
    Fixed { stages: Vec<FixedStage> },
    /// Every job its own fixed shape: the `k`-th job drawn from this source (a user's `k`-th
    /// job) is the chain `jobs[k % jobs.len()]` (a workload whose jobs differ in size, such as
    /// a trace-shaped benchmark).
    FixedEach { jobs: Vec<Vec<FixedStage>> },
}

/// One stage of a [`SourceSpec::Fixed`] job.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FixedStage {
    pub tasks: u32,
    /// How long each task holds its container.
    pub task_ms: u32,
    /// One of the tasks runs this long instead (a skewed partition); at least `task_ms`.
    #[serde(default)]
    pub straggler_ms: Option<u32>,
    /// Container of every task.
    pub demand: ResourceSpec,
}

impl FixedStage {
    /// Checks the stage against one machine's capacity; `field` names it in errors.
    pub fn validate(&self, field: &str, machine: &Resources) -> Result<Resources> {
        if self.tasks == 0 || self.task_ms == 0 {
            bail!("{field}: tasks and task_ms must be at least 1, not {} and {}", self.tasks, self.task_ms);
        }
        if let Some(s) = self.straggler_ms.filter(|s| *s < self.task_ms) {
            bail!("{field}: straggler_ms ({s}) must be at least task_ms ({})", self.task_ms);
        }
        let demand = self.demand.to_resources(&format!("{field}.demand"))?;
        if demand == Resources::ZERO {
            bail!("{field}.demand must ask for some resource");
        }
        if !demand.fits_in(machine) {
            bail!("{field}.demand {:?} does not fit on one machine ({:?})", self.demand.0, machine);
        }
        Ok(demand)
    }
}

fn one() -> f64 {
    1.0
}

/// Model for the Spark TPC-H trace, which records durations but no demands.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TpchOptions {
    /// Which executor count's measurements to replay; a stage without it uses the nearest.
    #[serde(default = "default_executors")]
    pub executors: u32,
    /// Demand of every task. Default: one Spark task per executor core, so 1 vcore, with memory
    /// from the data scale (2 GB up to 5 GB of data, 4 GB above), source stages reading
    /// 100 Mbps from disk, other stages receiving 100 Mbps of shuffle, all writing 50 Mbps.
    #[serde(default)]
    pub task_demand: Option<ResourceSpec>,
}

fn default_executors() -> u32 {
    20
}

impl Default for TpchOptions {
    fn default() -> Self {
        TpchOptions { executors: default_executors(), task_demand: None }
    }
}

/// SWIM's method: a fixed number of bytes per task. Durations come from a per-task processing
/// rate plus a fixed start cost; demands are typical MapReduce container sizes.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SwimOptions {
    /// Map input bytes per map task (an HDFS block).
    pub bytes_per_map: f64,
    /// Shuffle bytes per reduce task; jobs with no shuffle are map-only.
    pub bytes_per_reduce: f64,
    /// Bytes a task processes per second.
    pub task_bytes_per_sec: f64,
    /// Fixed cost of every task.
    pub task_base_ms: u32,
    /// Largest number of tasks per stage: SWIM's samples contain a few multi-terabyte jobs.
    pub max_tasks_per_stage: usize,
    /// Multiplies every job's input, shuffle and output bytes (SWIM's own way of scaling a
    /// sample up to a larger cluster): more tasks per job, each of the same size.
    pub data_scale: f64,
    pub map_demand: ResourceSpec,
    pub reduce_demand: ResourceSpec,
}

impl Default for SwimOptions {
    fn default() -> Self {
        SwimOptions {
            bytes_per_map: 128.0 * 1024.0 * 1024.0,
            bytes_per_reduce: 1024.0 * 1024.0 * 1024.0,
            task_bytes_per_sec: 10.0 * 1024.0 * 1024.0,
            task_base_ms: 2000,
            max_tasks_per_stage: 2000,
            data_scale: 1.0,
            map_demand: ResourceSpec::of(&[
                ("memory_mb", 1024),
                ("vcores", 1),
                ("disk_read_mbps", 80),
                ("net_out_mbps", 20),
            ]),
            reduce_demand: ResourceSpec::of(&[
                ("memory_mb", 2048),
                ("vcores", 1),
                ("net_in_mbps", 100),
                ("disk_write_mbps", 80),
            ]),
        }
    }
}

/// SLS traces carry durations and, optionally, container sizes (`container.memory-mb`,
/// `container.vcores`); unset sizes default to SLS's own defaults (1024 MB, 1 vcore). Map
/// containers form one stage per (priority, size), reduce containers likewise, and every
/// reduce stage waits for all map stages, as MapReduce's AM does. Host preferences are not
/// replayed (every ask is for `*`).
#[derive(Clone, Debug, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct SlsOptions {}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Arrivals {
    /// Exponential inter-arrival times with the given mean.
    Poisson,
    /// The trace's own submission times.
    Trace,
    /// Everything at t = 0 (Carbyne's offline case).
    Together,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case", deny_unknown_fields)]
pub enum WorkloadSpec {
    /// Carbyne-style: jobs from one source arriving over time.
    Carbyne {
        source: SourceSpec,
        /// Number of jobs; default all the trace's jobs (required for generators).
        jobs: Option<usize>,
        arrivals: Arrivals,
        #[serde(default = "default_interarrival")]
        mean_interarrival_s: f64,
        /// Multiplies trace arrival times (e.g. 0.25 packs 24 hours into 6).
        #[serde(default = "one")]
        time_scale: f64,
        /// Jobs go round-robin to queues q0..q{n-1}; 0 puts every job in its own queue.
        #[serde(default = "one_usize")]
        queues: usize,
        /// Use the queue names the trace records (SLS) instead.
        #[serde(default)]
        trace_queues: bool,
    },
    /// BoPF-style: periodic latency-sensitive queues and throughput queues queued at t = 0.
    Bopf { lq: Vec<LqSpec>, tq: TqSpec },
    /// Several users, each submitting jobs from its own source (UWFQ's multi-user setups).
    /// Jobs go to one queue `default` unless `queue_per_user`; the job's class is its user's
    /// `class` (default: the user's name).
    Users {
        users: Vec<UserSpec>,
        #[serde(default)]
        queue_per_user: bool,
        /// Every job is submitted as its own user: fair queuing across jobs with no user
        /// context (a CFQ-style order under UWFQ).
        #[serde(default)]
        job_as_user: bool,
    },
}

impl WorkloadSpec {
    /// Every job source with the spec field that holds it.
    pub fn sources(&self) -> Vec<(String, &SourceSpec)> {
        match self {
            WorkloadSpec::Carbyne { source, .. } => vec![("workload.source".into(), source)],
            WorkloadSpec::Bopf { lq, tq } => lq
                .iter()
                .enumerate()
                .map(|(i, l)| (format!("workload.lq[{i}].source"), &l.source))
                .chain([("workload.tq.source".into(), &tq.source)])
                .collect(),
            WorkloadSpec::Users { users, .. } => {
                users.iter().enumerate().map(|(i, u)| (format!("workload.users[{i}].source"), &u.source)).collect()
            }
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UserSpec {
    pub name: String,
    pub source: SourceSpec,
    pub jobs: usize,
    pub arrivals: UserArrivals,
    #[serde(default)]
    pub first_arrival_s: f64,
    pub class: Option<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case", deny_unknown_fields)]
pub enum UserArrivals {
    /// Exponential inter-arrival times.
    Poisson { mean_interarrival_s: f64 },
    /// `size` jobs at once every `every_s` seconds.
    Bursts { every_s: f64, size: usize },
    /// Listed arrivals: the `k`-th job arrives `at_s[k]` seconds after `first_arrival_s`. The list
    /// holds one time per job, in non-decreasing order.
    At { at_s: Vec<f64> },
}

fn default_interarrival() -> f64 {
    20.0
}

fn one_usize() -> usize {
    1
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LqSpec {
    pub name: String,
    pub source: SourceSpec,
    pub period_s: f64,
    pub jobs: usize,
    #[serde(default)]
    pub first_arrival_s: f64,
    /// Relative deadline, the burst's ON period. Default, as BoPF's evaluation sets it (§5.1):
    /// the shortest completion time of the queue's jobs, i.e. the longest critical path among
    /// its drawn (and peak-scaled) jobs.
    pub deadline_s: Option<f64>,
    /// Only jobs whose critical path is shorter than this are drawn (BoPF: 30 s).
    #[serde(default = "default_lq_cp")]
    pub max_critical_path_s: f64,
    /// Only jobs whose critical path is at least this long are drawn (BoPF's ON periods
    /// average 27 s).
    #[serde(default)]
    pub min_critical_path_s: f64,
    /// Scale task counts so that the widest stage alone asks for this fraction of the cluster's
    /// capacity in its dominant resource (BoPF scales LQ jobs to reach it; 0 leaves them).
    #[serde(default = "one")]
    pub peak_share: f64,
    /// What the LQ declares as its burst demand to admission control.
    #[serde(default)]
    pub declared_demand: DeclaredDemand,
    /// Multiplies the declaration: above 1 over-declares, below 1 under-declares (BoPF
    /// guarantees only what was declared).
    #[serde(default = "one")]
    pub declared_factor: f64,
    /// Multiplies every stage's task count *after* the declaration is sized: jobs `job_scale`
    /// times larger than declared (BoPF Fig. 9 scales LQ jobs by 1, 2, 4 and 8).
    #[serde(default = "one")]
    pub job_scale: f64,
    /// Only jobs with at most this many stages are drawn (BoPF's BigBench LQ jobs have 2).
    pub max_stages: Option<usize>,
    /// Every task of a stage runs the stage's mean duration (BoPF §5.1: "a stage has a number of
    /// equivalent tasks in terms of resource demands and durations").
    #[serde(default)]
    pub uniform_tasks: bool,
    /// Scale every stage, not only the widest, to `peak_share` of the cluster: the LQ's
    /// instantaneous demand then reaches that share throughout its burst.
    #[serde(default)]
    pub every_stage_at_peak: bool,
    /// Redraw every stage's task durations from a Pareto distribution of this shape with the
    /// stage's own mean (the straggler study of speculative slot reservation, §VI-B); must be greater than 1.
    pub pareto_shape: Option<f64>,
}

/// How a simulated LQ sizes the burst demand it declares (before `declared_factor`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DeclaredDemand {
    /// The burst's true need: for every resource its jobs use, the most resource-seconds any of
    /// its jobs consumes. Resources no task asks for are not declared.
    #[default]
    #[serde(alias = "total")]
    Need,
    /// Its peak instantaneous demand (the widest stage) held for the ON period: the rate it needs
    /// to finish a burst within the deadline whatever its shape.
    PeakRate,
}

fn default_lq_cp() -> f64 {
    30.0
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TqSpec {
    pub queues: usize,
    /// Total jobs, spread round-robin over the TQs, all queued at t = 0.
    pub jobs: usize,
    pub source: SourceSpec,
    /// Multiplies every TQ task's duration (speculative slot reservation's
    /// evaluation prolongs its background tasks).
    #[serde(default = "one")]
    pub task_duration_scale: f64,
    /// Draw jobs beyond `jobs` until the backlog holds at least this many seconds of the whole
    /// cluster's capacity (in each job's dominant resource), so that it outlasts the LQ
    /// arrivals instead of draining before them.
    pub backlog_s: Option<f64>,
}

/// Where `{shared}` in trace paths points: `TIDAL_SHARED`, else `shared/` beside the checkout.
pub fn shared_dir() -> PathBuf {
    if let Some(p) = std::env::var_os("TIDAL_SHARED") {
        return PathBuf::from(p);
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared")
}

/// `x > 0`, false for NaN: `!positive(x)` rejects NaN as well as zero and below.
fn positive(x: f64) -> bool {
    x > 0.0
}

/// `x >= 0`, false for NaN.
fn non_negative(x: f64) -> bool {
    x >= 0.0
}

impl Spec {
    pub fn from_str(text: &str, format_json: bool) -> Result<Spec> {
        if format_json {
            serde_json::from_str(text).map_err(|e| anyhow!("{e}"))
        } else {
            toml::from_str(text).map_err(|e| anyhow!("{e}"))
        }
    }

    /// Reads a spec; file paths inside become absolute (relative to the spec's directory).
    pub fn load(path: &Path) -> Result<Spec> {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("cannot read spec file {}", path.display()))?;
        let json = path.extension().is_some_and(|e| e == "json");
        let mut spec = Spec::from_str(&text, json).with_context(|| format!("spec file {}", path.display()))?;
        let base = path.parent().unwrap_or(Path::new("."));
        spec.resolve_paths(base);
        if spec.name.is_empty() {
            spec.name = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        }
        Ok(spec)
    }

    pub fn resolve_paths(&mut self, base: &Path) {
        let fix = |f: &mut String| {
            if let Some(rest) = f.strip_prefix("{shared}") {
                *f = format!("{}{}", shared_dir().display(), rest);
            } else if Path::new(f.as_str()).is_relative() {
                *f = base.join(&*f).display().to_string();
            }
        };
        let fix_src = |s: &mut SourceSpec| match s {
            SourceSpec::Generator { .. } | SourceSpec::Fixed { .. } | SourceSpec::FixedEach { .. } => {}
            SourceSpec::TpchSpark { file, .. } | SourceSpec::Swim { file, .. } | SourceSpec::Sls { file, .. } => {
                fix(file)
            }
        };
        match &mut self.workload {
            WorkloadSpec::Carbyne { source, .. } => fix_src(source),
            WorkloadSpec::Bopf { lq, tq } => {
                lq.iter_mut().for_each(|l| fix_src(&mut l.source));
                fix_src(&mut tq.source);
            }
            WorkloadSpec::Users { users, .. } => users.iter_mut().for_each(|u| fix_src(&mut u.source)),
        }
        if let Some(q) = &mut self.scheduler.queue_file {
            if q.is_relative() {
                *q = base.join(&*q);
            }
        }
    }

    pub fn validate(&self) -> Result<()> {
        if self.cluster.machines == 0 {
            bail!("cluster.machines must be at least 1");
        }
        if self.cluster.machines_per_rack == 0 {
            bail!("cluster.machines_per_rack must be at least 1");
        }
        let s = &self.sim;
        if s.heartbeat_ms <= 0 {
            bail!("sim.heartbeat_ms must be positive");
        }
        if s.sample_ms <= 0 || s.fairness_window_ms <= 0 {
            bail!("sim.sample_ms and sim.fairness_window_ms must be positive");
        }
        if s.container_overhead_ms < 0 || s.idle_recheck_ms < 0 || s.submit_latency_ms < 0 {
            bail!("sim.container_overhead_ms, sim.submit_latency_ms and sim.idle_recheck_ms must not be negative");
        }
        if s.am_overhead_ms.is_some_and(|ms| ms < 0) {
            bail!("sim.am_overhead_ms must not be negative");
        }
        if !(s.estimation_error_std >= 0.0 && s.estimation_error_std.is_finite()) {
            bail!("sim.estimation_error_std must be a non-negative number");
        }
        match &self.workload {
            WorkloadSpec::Carbyne { jobs, arrivals, mean_interarrival_s, source, time_scale, .. } => {
                if matches!(
                    source,
                    SourceSpec::Generator { .. } | SourceSpec::Fixed { .. } | SourceSpec::FixedEach { .. }
                ) && jobs.is_none()
                {
                    bail!("workload.jobs is required with a generator or fixed source");
                }
                if *arrivals == Arrivals::Poisson && !positive(*mean_interarrival_s) {
                    bail!("workload.mean_interarrival_s must be positive");
                }
                if !positive(*time_scale) {
                    bail!("workload.time_scale must be positive");
                }
                if let SourceSpec::Generator { scale, input_spread, .. } = source {
                    if !(positive(*scale) && *input_spread >= 1.0 && input_spread.is_finite()) {
                        bail!(
                            "workload.source: scale must be positive and input_spread at least 1, not {scale} and {input_spread}"
                        );
                    }
                }
            }
            WorkloadSpec::Bopf { lq, tq } => {
                for (i, l) in lq.iter().enumerate() {
                    if !(l.period_s > 0.0 && l.period_s.is_finite()) {
                        bail!(
                            "workload.lq[{i}] ('{}'): period_s must be a positive number, not {}",
                            l.name,
                            l.period_s
                        );
                    }
                    for (field, v) in [("declared_factor", l.declared_factor), ("job_scale", l.job_scale)] {
                        if !(v > 0.0 && v.is_finite()) {
                            bail!("workload.lq[{i}] ('{}'): {field} must be a positive number, not {v}", l.name);
                        }
                    }
                    if !(l.min_critical_path_s >= 0.0 && l.min_critical_path_s < l.max_critical_path_s) {
                        bail!(
                            "workload.lq[{i}] ('{}'): min_critical_path_s ({}) must be non-negative and below max_critical_path_s ({})",
                            l.name,
                            l.min_critical_path_s,
                            l.max_critical_path_s
                        );
                    }
                    if !(l.peak_share >= 0.0 && l.peak_share.is_finite()) {
                        bail!(
                            "workload.lq[{i}] ('{}'): peak_share must be a non-negative number, not {}",
                            l.name,
                            l.peak_share
                        );
                    }
                    if l.max_stages == Some(0) {
                        bail!("workload.lq[{i}] ('{}'): max_stages must be at least 1", l.name);
                    }
                    if let Some(a) = l.pareto_shape.filter(|a| !(*a > 1.0 && a.is_finite())) {
                        bail!("workload.lq[{i}] ('{}'): pareto_shape must be a finite number greater than 1 (a finite mean), not {a}", l.name);
                    }
                }
                if !(tq.task_duration_scale > 0.0 && tq.task_duration_scale.is_finite()) {
                    bail!("workload.tq.task_duration_scale must be a positive number, not {}", tq.task_duration_scale);
                }
                if let Some(b) = tq.backlog_s.filter(|b| !(*b >= 0.0 && b.is_finite())) {
                    bail!("workload.tq.backlog_s must be a non-negative number of seconds, not {b}");
                }
                if (tq.jobs > 0 || tq.backlog_s.is_some_and(|b| b > 0.0)) && tq.queues == 0 {
                    bail!("workload.tq.queues must be at least 1 when tq.jobs or tq.backlog_s is positive");
                }
            }
            WorkloadSpec::Users { users, .. } => {
                if users.is_empty() {
                    bail!("workload.users must list at least one user");
                }
                for (i, u) in users.iter().enumerate() {
                    let ok_name =
                        !u.name.is_empty() && u.name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
                    if !ok_name {
                        bail!("workload.users[{i}].name '{}' must be letters, digits, '_' or '-'", u.name);
                    }
                    if users[..i].iter().any(|o| o.name == u.name) {
                        bail!("workload.users[{i}].name '{}' is used twice", u.name);
                    }
                    match u.arrivals {
                        UserArrivals::Poisson { mean_interarrival_s } if !positive(mean_interarrival_s) => {
                            bail!("workload.users[{i}] ('{}'): arrivals.mean_interarrival_s must be positive", u.name)
                        }
                        UserArrivals::Bursts { every_s, size } if !positive(every_s) || size == 0 => {
                            bail!(
                                "workload.users[{i}] ('{}'): arrivals.every_s and arrivals.size must be positive",
                                u.name
                            )
                        }
                        UserArrivals::At { ref at_s } => {
                            if at_s.len() != u.jobs {
                                bail!(
                                    "workload.users[{i}] ('{}'): arrivals.at_s lists {} times for {} jobs",
                                    u.name,
                                    at_s.len(),
                                    u.jobs
                                );
                            }
                            if at_s.iter().any(|t| !non_negative(*t)) || at_s.windows(2).any(|w| w[1] < w[0]) {
                                bail!(
                                    "workload.users[{i}] ('{}'): arrivals.at_s must be non-negative seconds in non-decreasing order",
                                    u.name
                                );
                            }
                        }
                        _ => {}
                    }
                    if !non_negative(u.first_arrival_s) {
                        bail!("workload.users[{i}] ('{}'): first_arrival_s must not be negative", u.name);
                    }
                }
            }
        }
        if s.hint_progress_interval_ms <= 0 {
            bail!("sim.hint_progress_interval_ms must be positive");
        }
        // Multi-resource stages are sized against the machine and bound by any of six resources:
        // one the machine lacks could be drawn as a bottleneck nothing provides.
        let machine = self.cluster.machine.to_resources("cluster.machine")?;
        let lacking: Vec<&str> = BOTTLENECK_KINDS.iter().filter(|k| machine.get(**k) <= 0).map(|k| k.name()).collect();
        for (field, source) in self.workload.sources() {
            match source {
                SourceSpec::Generator { demands: DemandModel::MultiResource, .. } if !lacking.is_empty() => {
                    bail!(
                        "{field}.demands = \"multi-resource\" needs cluster.machine to declare all six resources; it lacks {}",
                        lacking.join(", ")
                    );
                }
                SourceSpec::Fixed { stages } => {
                    if stages.is_empty() {
                        bail!("{field}.stages must list at least one stage");
                    }
                    for (i, st) in stages.iter().enumerate() {
                        st.validate(&format!("{field}.stages[{i}]"), &machine)?;
                    }
                }
                SourceSpec::FixedEach { jobs } => {
                    if jobs.is_empty() {
                        bail!("{field}.jobs must list at least one job");
                    }
                    for (j, stages) in jobs.iter().enumerate() {
                        if stages.is_empty() {
                            bail!("{field}.jobs[{j}] must list at least one stage");
                        }
                        for (i, st) in stages.iter().enumerate() {
                            st.validate(&format!("{field}.jobs[{j}][{i}]"), &machine)?;
                        }
                    }
                }
                _ => {}
            }
        }
        let sc = &self.scheduler;
        if let Some(p) = sc.altruism_probability {
            if !(0.0..=1.0).contains(&p) {
                bail!("scheduler.altruism_probability must be in [0, 1], not {p}");
            }
        }
        if let Some(f) = sc.fairness_knob {
            if !(0.0..1.0).contains(&f) {
                bail!("scheduler.fairness_knob must be in [0, 1), not {f}");
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_line_and_field() {
        let t = "seed = 1\n[cluster]\nmachines = 2\nmachine = { memory_mb = 1024 }\n[workload]\ntype = \"carbyne\"\narrivals = \"sometimes\"\nsource = { type = \"generator\", family = \"tpch\" }\n";
        let e = Spec::from_str(t, false).unwrap_err().to_string();
        assert!(e.contains("line 5") || e.contains("sometimes"), "{e}");
        let t = "[cluster]\nmachines = 2\nmachinez = 3\n";
        let e = Spec::from_str(t, false).unwrap_err().to_string();
        assert!(e.contains("machinez") && e.contains("line 3"), "{e}");
        let e = Spec::from_str("{\"cluster\": {\"machines\": 2,\n \"machine\": 5}}", true).unwrap_err().to_string();
        assert!(e.contains("line 2"), "{e}");
    }

    /// A fixed source's stages are checked: tasks, durations, the straggler and the demand.
    #[test]
    fn fixed_stages_are_checked() {
        let spec = |stages: &str| {
            format!(
                "[cluster]\nmachines = 2\nmachine = {{ memory_mb = 8192, vcores = 8 }}\n[workload]\ntype = \"carbyne\"\njobs = 2\narrivals = \"poisson\"\nsource = {{ type = \"fixed\", stages = [{stages}] }}\n"
            )
        };
        let err = |stages: &str| Spec::from_str(&spec(stages), false).unwrap().validate().unwrap_err().to_string();
        let ok = "{ tasks = 4, task_ms = 100, straggler_ms = 300, demand = { vcores = 1 } }";
        Spec::from_str(&spec(&format!("{ok}, {ok}")), false).unwrap().validate().unwrap();
        assert!(err("").contains("workload.source.stages must list at least one stage"));
        let e = err("{ tasks = 0, task_ms = 100, demand = { vcores = 1 } }");
        assert!(e.contains("workload.source.stages[0]: tasks and task_ms must be at least 1"), "{e}");
        let e = err(&format!("{ok}, {{ tasks = 2, task_ms = 100, straggler_ms = 50, demand = {{ vcores = 1 }} }}"));
        assert!(e.contains("stages[1]: straggler_ms (50) must be at least task_ms (100)"), "{e}");
        assert!(err("{ tasks = 1, task_ms = 1, demand = {} }").contains("stages[0].demand must ask for some resource"));
        let e = err("{ tasks = 1, task_ms = 1, demand = { vcores = 9 } }");
        assert!(e.contains("does not fit on one machine"), "{e}");
        let e = err("{ tasks = 1, task_ms = 1, demand = { cores = 1 } }");
        assert!(e.contains("unknown resource 'cores'"), "{e}");
    }

    /// Listed arrivals need one non-decreasing time per job; a per-job fixed source needs jobs
    /// of valid stages; errors name the field.
    #[test]
    fn listed_arrivals_and_per_job_shapes_are_validated() {
        let spec = |at: &str, jobs: &str| {
            format!(
                "[cluster]\nmachines = 2\nmachine = {{ memory_mb = 8192, vcores = 8 }}\n[workload]\ntype = \"users\"\n[[workload.users]]\nname = \"u\"\njobs = 2\narrivals = {{ type = \"at\", at_s = [{at}] }}\nsource = {{ type = \"fixed-each\", jobs = [{jobs}] }}\n"
            )
        };
        let ok = "{ tasks = 4, task_ms = 100, demand = { vcores = 1 } }";
        let two = format!("[{ok}], [{ok}, {ok}]");
        let err =
            |at: &str, jobs: &str| Spec::from_str(&spec(at, jobs), false).unwrap().validate().unwrap_err().to_string();
        Spec::from_str(&spec("0.5, 2.0", &two), false).unwrap().validate().unwrap();
        let e = err("0.5", &two);
        assert!(e.contains("workload.users[0] ('u'): arrivals.at_s lists 1 times for 2 jobs"), "{e}");
        let e = err("2.0, 0.5", &two);
        assert!(e.contains("arrivals.at_s must be non-negative seconds in non-decreasing order"), "{e}");
        let e = err("-1.0, 0.5", &two);
        assert!(e.contains("arrivals.at_s must be non-negative"), "{e}");
        let e = err("0.5, 2.0", "");
        assert!(e.contains("workload.users[0].source.jobs must list at least one job"), "{e}");
        let e = err("0.5, 2.0", &format!("[{ok}], []"));
        assert!(e.contains("workload.users[0].source.jobs[1] must list at least one stage"), "{e}");
        let e = err("0.5, 2.0", &format!("[{ok}], [{ok}, {{ tasks = 0, task_ms = 1, demand = {{ vcores = 1 }} }}]"));
        assert!(e.contains("workload.users[0].source.jobs[1][1]: tasks and task_ms must be at least 1"), "{e}");
    }

    /// The multi-resource model needs a machine with all six resources; the default model
    /// (single-bottleneck) is what a source without `demands` gets.
    #[test]
    fn demand_model_is_read_and_checked() {
        let spec = |machine: &str, demands: &str| {
            format!(
                "[cluster]\nmachines = 2\nmachine = {machine}\n[workload]\ntype = \"carbyne\"\njobs = 2\narrivals = \"poisson\"\nsource = {{ type = \"generator\", family = \"tpch\"{demands} }}\n"
            )
        };
        let six = "{ memory_mb = 8192, vcores = 8, disk_read_mbps = 100, disk_write_mbps = 100, net_in_mbps = 100, net_out_mbps = 100 }";
        let two = "{ memory_mb = 8192, vcores = 8 }";
        let demands = |s: &Spec| match s.workload.sources()[0].1 {
            SourceSpec::Generator { demands, .. } => *demands,
            _ => unreachable!("a generator"),
        };
        let s = Spec::from_str(&spec(two, ""), false).unwrap();
        assert_eq!(demands(&s), DemandModel::SingleBottleneck);
        s.validate().unwrap();
        let s = Spec::from_str(&spec(six, ", demands = \"multi-resource\""), false).unwrap();
        assert_eq!(demands(&s), DemandModel::MultiResource);
        s.validate().unwrap();
        let e = Spec::from_str(&spec(two, ", demands = \"multi-resource\""), false).unwrap().validate().unwrap_err();
        let e = e.to_string();
        assert!(e.contains("workload.source.demands") && e.contains("disk_read_mbps, disk_write_mbps"), "{e}");
        let e = Spec::from_str(&spec(six, ", demands = \"multi\""), false).unwrap_err().to_string();
        assert!(e.contains("multi-resource"), "{e}");
    }
}
