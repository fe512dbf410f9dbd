//! Bookkeeping of the simulated ApplicationMasters: their jobs' progress and running containers.
//!
//! Per job, which tasks of each stage have started and finished; per container, which task or
//! straggler copy it runs.

use crate::model::Job;
use rustc_hash::{FxHashMap, FxHashSet};
use std::collections::BTreeSet;
use tidal_core::allocation_table::AllocationTable;
use tidal_core::ids::AllocationId;

/// A running task container, or a straggler copy of one.
#[derive(Copy, Clone, Debug)]
pub struct RunningTask {
    pub job: u32,
    pub stage: u16,
    /// The stage at whose priority the container was allocated, whose demand sized it: other
    /// than `stage` once `dag` container reuse moved the container on.
    pub container_stage: u16,
    pub copy: bool,
    pub node: u32,
    pub start: i64,
    pub end: i64,
}

/// What a job's AM knows while the job runs.
pub struct JobRt {
    /// Per stage: parents not finished yet.
    pub parents_left: Vec<u16>,
    /// Per stage: tasks started and finished.
    pub started: Vec<u32>,
    pub done: Vec<u32>,
    pub stages_left: usize,
    /// When its first container started, -1 before.
    pub start_ms: i64,
    /// When it finished, -1 before.
    pub finish_ms: i64,
    /// The AM's container, node and start time, if AMs are modelled.
    pub am: Option<(AllocationId, u32, i64)>,
    /// Per stage: sum of the start times of its running tasks (for `running_elapsed_ms`).
    pub run_start_sum: Vec<i64>,
    /// Per stage: the (finished, running) counts last reported in hints.
    pub reported: Vec<(u32, u32)>,
    pub last_progress_ms: i64,
    /// Per stage, with straggler copies on: running tasks without a copy, and copies asked
    /// for but not yet placed (never more than the former).
    pub copyless: Vec<BTreeSet<AllocationId>>,
    pub copy_asks: Vec<u32>,
    /// Queued for a look at the scheduler's straggler advice.
    pub watched: bool,
}

impl JobRt {
    /// A job that arrived at `now`; `copies` when its AM runs straggler copies.
    pub fn new(job: &Job, copies: bool, now: i64) -> JobRt {
        let n = job.stages.len();
        JobRt {
            parents_left: job.stages.iter().map(|s| s.parents.len() as u16).collect(),
            started: vec![0; n],
            done: vec![0; n],
            stages_left: n,
            start_ms: -1,
            finish_ms: -1,
            am: None,
            run_start_sum: vec![0; n],
            reported: vec![(0, 0); n],
            last_progress_ms: now,
            copyless: if copies { vec![BTreeSet::new(); n] } else { Vec::new() },
            copy_asks: if copies { vec![0; n] } else { Vec::new() },
            watched: false,
        }
    }

    /// Container `alloc`, started at `now` at the priority of `stage` (of `tasks` tasks), runs
    /// the stage's next task; once every task has started, a straggler copy of its oldest
    /// running task without one (the pairing the scheduler makes too), `None` if there is none.
    pub fn start(
        &mut self,
        stage: usize,
        tasks: usize,
        alloc: AllocationId,
        now: i64,
        copies: bool,
    ) -> Option<Started> {
        if (self.started[stage] as usize) < tasks {
            if copies {
                self.copyless[stage].insert(alloc);
            }
            return Some(Started::Task(self.start_task(stage, now)));
        }
        self.copy_asks[stage] = self.copy_asks[stage].saturating_sub(1);
        self.copyless[stage].pop_first().map(Started::CopyOf)
    }

    /// The stage's next task, which exists, starts at `now`; its index.
    pub fn start_task(&mut self, stage: usize, now: i64) -> usize {
        self.started[stage] += 1;
        self.run_start_sum[stage] += now;
        self.started[stage] as usize - 1
    }
}

/// What a container started at a stage's priority runs.
pub enum Started {
    /// The stage's task of this index.
    Task(usize),
    /// A straggler copy of the task running in this container.
    CopyOf(AllocationId),
}

/// The running containers of every job, and the pairing of tasks with their straggler copies.
///
/// Keyed by the core's allocation ids, which are sequential: the running ones sit in the core's
/// table for such ids, the rarer pairs and kills in hash maps.
pub struct Containers {
    running: AllocationTable<RunningTask>,
    /// A task and its straggler copy, each to the other.
    twins: FxHashMap<AllocationId, AllocationId>,
    /// Losers of a race, killed before their scheduled end.
    killed: FxHashSet<AllocationId>,
}

impl Containers {
    pub fn new() -> Containers {
        Containers { running: AllocationTable::default(), twins: FxHashMap::default(), killed: FxHashSet::default() }
    }

    pub fn start(&mut self, alloc: AllocationId, task: RunningTask) {
        self.running.insert(alloc, task);
    }

    /// `copy` runs a copy of the task in container `original`.
    pub fn pair(&mut self, original: AllocationId, copy: AllocationId) {
        self.twins.insert(original, copy);
        self.twins.insert(copy, original);
    }

    /// Whether the container was killed before its task's scheduled end, which is then void.
    pub fn was_killed(&mut self, alloc: AllocationId) -> bool {
        self.killed.remove(&alloc)
    }

    /// The task of a container whose task ended.
    pub fn finish(&mut self, alloc: AllocationId) -> Option<RunningTask> {
        self.running.remove(&alloc)
    }

    /// The container running the other of a task and its copy, unpaired.
    pub fn take_twin(&mut self, alloc: AllocationId) -> Option<AllocationId> {
        let other = self.twins.remove(&alloc)?;
        self.twins.remove(&other);
        Some(other)
    }

    /// Stops a container before its task ends; the task it ran.
    pub fn kill(&mut self, alloc: AllocationId) -> Option<RunningTask> {
        let task = self.running.remove(&alloc)?;
        self.killed.insert(alloc);
        Some(task)
    }

    pub fn is_empty(&self) -> bool {
        self.running.is_empty()
    }

    pub fn running(&self) -> impl Iterator<Item = &RunningTask> {
        self.running.values()
    }
}

/// The duration of a straggler copy in container `alloc` of `job`: a fresh draw from the
/// stage's task durations, by a deterministic hash of the copy's identity.
pub fn copy_duration_ms(durations_ms: &[u32], alloc: AllocationId, job: usize) -> u32 {
    let mut x = alloc ^ ((job as u64) << 40);
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^= x >> 31;
    durations_ms[(x % durations_ms.len() as u64) as usize]
}
