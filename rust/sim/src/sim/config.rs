//! How a simulation runs: the cluster's size and the engine's knobs.

use crate::spec::ContainerReuse;
use tidal_core::Resources;

#[derive(Clone, Debug)]
pub struct ClusterConfig {
    pub machines: usize,
    pub machines_per_rack: usize,
    pub capacity: Resources,
}

#[derive(Clone, Debug)]
pub struct SimConfig {
    pub heartbeat_ms: i64,
    pub container_overhead_ms: i64,
    /// From the AM's container start until its first asks.
    pub am_overhead_ms: i64,
    /// From a job's arrival until the scheduler sees it.
    pub submit_latency_ms: i64,
    /// The AM container, if AMs are modelled.
    pub am: Option<Resources>,
    pub sample_ms: i64,
    pub idle_recheck_ms: i64,
    pub progress: bool,
    pub label: String,
    /// AMs send their DAG at registration and progress after (see [`crate::hints`]).
    pub hints: bool,
    /// Between stage completions, progress goes out at most this often per job.
    pub hint_progress_interval_ms: i64,
    /// Jain's index over jobs (every live app) instead of queues.
    pub fairness_over_jobs: bool,
    /// Window of Jain's index over jobs.
    pub fairness_window_ms: i64,
    /// AMs run the straggler copies the scheduler advises on space a slot reservation holds.
    pub straggler_copies: bool,
    /// End the run once every job of this class has finished; jobs still running are left out.
    pub stop_after_class: Option<String>,
    /// Whether AMs run further tasks in a container whose task ended.
    pub container_reuse: ContainerReuse,
}
