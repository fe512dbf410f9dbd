//! What a finished run hands back: per-job records, samples, resource totals and counters.

use serde::Serialize;
use tidal_core::{Resources, DIMS};

#[derive(Clone, Debug, Serialize)]
pub struct JobRecord {
    pub name: String,
    pub queue: String,
    pub class: String,
    pub arrival_ms: i64,
    /// When the job's first container (its AM, if modelled) started.
    pub start_ms: i64,
    pub finish_ms: i64,
    pub deadline_ms: Option<i64>,
    pub tasks: u64,
}

impl JobRecord {
    pub fn jct_ms(&self) -> i64 {
        self.finish_ms - self.arrival_ms
    }
}

/// Per-queue dominant shares sampled every `sample_ms`.
#[derive(Clone, Debug, Default)]
pub struct Samples {
    pub times_ms: Vec<i64>,
    /// `[queue][sample]`
    pub share: Vec<Vec<f32>>,
    /// Whether the queue had demand (running or pending containers) at the sample.
    pub active: Vec<Vec<bool>>,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct RunStats {
    pub events: u64,
    pub heartbeat_events: u64,
    pub core_heartbeats: u64,
    pub containers: u64,
    /// Hint documents the simulated AMs sent (DAGs and progress).
    pub hint_documents: u64,
    /// Straggler copies started on space a slot reservation held, and how many finished
    /// before their original.
    pub copies: u64,
    pub copies_won: u64,
    pub wall_s: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct LqAdmission {
    pub queue: String,
    pub class: String,
    pub reason: String,
    pub bursts_started: u64,
    pub bursts_met_deadline: u64,
}

#[derive(Clone, Debug)]
pub struct RunOutput {
    pub label: String,
    pub policy: String,
    pub jobs: Vec<JobRecord>,
    pub queues: Vec<String>,
    pub weights: Vec<f64>,
    pub samples: Samples,
    /// Container resource-milliseconds allocated, per dimension.
    pub allocated: [f64; DIMS],
    /// Resource-milliseconds held idle by slot reservations, per dimension (sampled).
    pub held: [f64; DIMS],
    /// Capacity of one machine.
    pub capacity: Resources,
    pub machines: usize,
    pub stats: RunStats,
    /// Jain's index over jobs per window, when the run measured it.
    pub job_fairness: Option<Vec<f64>>,
    /// Jobs not finished when the run stopped (`stop_after_class`); not in `jobs`.
    pub unfinished: usize,
    /// Per latency-sensitive queue at the end of the run: its admission class and why, and the
    /// bursts started and met.
    pub lq_admission: Vec<LqAdmission>,
    /// The app policy's report on its decisions at the end of the run, if it keeps one.
    pub app_policy: Option<serde_json::Value>,
    /// The core's status document at the end of the run.
    pub status_json: String,
    /// The core's history document (every sample, burst and admission decision it kept).
    pub history_json: String,
}
