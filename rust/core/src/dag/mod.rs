//! DAG job model for DAG-aware app policies (Carbyne, Tetris, SJF).
//!
//! A job is a DAG of stages. All tasks of a stage have the same multi-resource demand and the
//! same estimated duration, and a stage's tasks start only after every task of every parent
//! stage has finished (a barrier), as in the Carbyne paper's model. Progress (finished and
//! running tasks per stage) comes from the application, so the model describes what is left.
//!
//! - [`pack`]: forward packing (completion-time estimate under a share) and reverse packing
//!   (latest start times that keep that completion time).
//! - [`share`]: closed-form DRF shares among jobs.

pub mod pack;
pub mod share;

use crate::ids::Priority;
use crate::resource::Resources;

pub type StageIdx = usize;

/// One stage of a job's DAG with its progress.
#[derive(Clone, Debug, PartialEq)]
pub struct Stage {
    pub id: String,
    pub tasks: u32,
    /// Per-task demand.
    pub demand: Resources,
    /// Estimated duration of one task, milliseconds (> 0).
    pub duration_ms: u64,
    pub parents: Vec<StageIdx>,
    /// YARN request priorities at which the application asks for this stage's tasks. Several
    /// stages may share a priority (Tez gives vertices at one depth neighbouring priorities).
    pub priorities: Vec<Priority>,
    pub finished: u32,
    pub running: u32,
    /// Mean time the running tasks have already run.
    pub running_elapsed_ms: u64,
}

impl Stage {
    /// A stage with no progress yet.
    pub fn new(id: &str, tasks: u32, demand: Resources, duration_ms: u64, parents: &[StageIdx]) -> Stage {
        Stage {
            id: id.to_string(),
            tasks,
            demand,
            duration_ms,
            parents: parents.to_vec(),
            priorities: Vec::new(),
            finished: 0,
            running: 0,
            running_elapsed_ms: 0,
        }
    }

    /// Tasks neither running nor finished.
    #[inline]
    pub fn pending(&self) -> u32 {
        self.tasks.saturating_sub(self.finished + self.running)
    }

    #[inline]
    pub fn is_done(&self) -> bool {
        self.finished >= self.tasks
    }

    /// Estimated time until the running tasks finish. A task past its estimate is assumed to
    /// finish within a tenth of its duration, so an overrun never plans as already free.
    #[inline]
    pub fn running_residual_ms(&self) -> u64 {
        let left = self.duration_ms.saturating_sub(self.running_elapsed_ms);
        left.max(self.duration_ms / 10).max(1)
    }
}

/// A validation failure: the offending field (as a path such as `stages[2].parents[0]`) and why.
#[derive(Clone, Debug, PartialEq)]
pub struct DagError {
    pub field: String,
    pub reason: String,
}

impl std::fmt::Display for DagError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "field {}: {}", self.field, self.reason)
    }
}

fn err(field: String, reason: impl Into<String>) -> DagError {
    DagError { field, reason: reason.into() }
}

/// A validated DAG: parents in range, no cycles, progress consistent with task counts.
#[derive(Clone, Debug, PartialEq)]
pub struct JobDag {
    stages: Vec<Stage>,
    children: Vec<Vec<StageIdx>>,
    /// Stages in a topological order (parents first).
    topo: Vec<StageIdx>,
}

impl JobDag {
    pub fn new(stages: Vec<Stage>) -> Result<JobDag, DagError> {
        let n = stages.len();
        let mut children = vec![Vec::new(); n];
        for (i, s) in stages.iter().enumerate() {
            if s.duration_ms == 0 {
                return Err(err(format!("stages[{i}].duration_ms"), "must be positive"));
            }
            if s.demand.any_negative() {
                return Err(err(format!("stages[{i}].demand"), format!("{} is negative", s.demand)));
            }
            if s.finished as u64 + s.running as u64 > s.tasks as u64 {
                return Err(err(
                    format!("stages[{i}] ('{}') progress", s.id),
                    format!("finished {} + running {} exceed tasks {}", s.finished, s.running, s.tasks),
                ));
            }
            for (k, &p) in s.parents.iter().enumerate() {
                if p >= n {
                    return Err(err(format!("stages[{i}].parents[{k}]"), format!("stage index {p} out of range")));
                }
                if s.parents[..k].contains(&p) {
                    return Err(err(format!("stages[{i}].parents[{k}]"), "listed twice"));
                }
                children[p].push(i);
            }
        }
        // Kahn's algorithm; whatever is left over lies on a cycle.
        let mut indegree: Vec<usize> = stages.iter().map(|s| s.parents.len()).collect();
        let mut topo: Vec<StageIdx> = (0..n).filter(|&i| indegree[i] == 0).collect();
        let mut head = 0;
        while head < topo.len() {
            let s = topo[head];
            head += 1;
            for &c in &children[s] {
                indegree[c] -= 1;
                if indegree[c] == 0 {
                    topo.push(c);
                }
            }
        }
        if topo.len() < n {
            let on_cycle = (0..n).find(|&i| indegree[i] > 0).expect("a stage left over");
            return Err(err(
                format!("stages[{on_cycle}].parents"),
                format!("stage '{}' is on a dependency cycle", stages[on_cycle].id),
            ));
        }
        Ok(JobDag { stages, children, topo })
    }

    pub fn stages(&self) -> &[Stage] {
        &self.stages
    }

    pub fn stage(&self, i: StageIdx) -> &Stage {
        &self.stages[i]
    }

    pub fn children(&self, i: StageIdx) -> &[StageIdx] {
        &self.children[i]
    }

    pub fn topological_order(&self) -> &[StageIdx] {
        &self.topo
    }

    pub fn len(&self) -> usize {
        self.stages.len()
    }

    pub fn is_empty(&self) -> bool {
        self.stages.is_empty()
    }

    /// Replaces one stage's progress, keeping the structure. Fails like [`JobDag::new`].
    pub fn set_progress(
        &mut self,
        i: StageIdx,
        finished: u32,
        running: u32,
        running_elapsed_ms: u64,
    ) -> Result<(), DagError> {
        let s = &mut self.stages[i];
        if finished as u64 + running as u64 > s.tasks as u64 {
            return Err(err(
                format!("progress for stage '{}'", s.id),
                format!("finished {finished} + running {running} exceed tasks {}", s.tasks),
            ));
        }
        s.finished = finished;
        s.running = running;
        s.running_elapsed_ms = running_elapsed_ms;
        Ok(())
    }

    pub fn pending_tasks(&self) -> u64 {
        self.stages.iter().map(|s| s.pending() as u64).sum()
    }

    pub fn is_done(&self) -> bool {
        self.stages.iter().all(Stage::is_done)
    }

    /// Whether every parent of stage `i` has finished.
    pub fn is_runnable(&self, i: StageIdx) -> bool {
        self.stages[i].parents.iter().all(|&p| self.stages[p].is_done())
    }

    /// Remaining time of each stage on its own: its duration while tasks are pending, the
    /// running tasks' residual once all have started, zero when done.
    fn remaining_ms(&self, i: StageIdx) -> u64 {
        let s = &self.stages[i];
        if s.pending() > 0 {
            s.duration_ms
        } else if s.running > 0 {
            s.running_residual_ms()
        } else {
            0
        }
    }

    /// Longest remaining path from each stage to the end of the job, the stage included.
    pub fn bottom_levels(&self) -> Vec<u64> {
        let mut bl = vec![0u64; self.stages.len()];
        for &s in self.topo.iter().rev() {
            let below = self.children[s].iter().map(|&c| bl[c]).max().unwrap_or(0);
            bl[s] = self.remaining_ms(s) + below;
        }
        bl
    }

    /// Longest remaining path from the start of the job to the end of each stage, the stage
    /// included.
    pub fn top_levels(&self) -> Vec<u64> {
        let mut tl = vec![0u64; self.stages.len()];
        for &s in &self.topo {
            let above = self.stages[s].parents.iter().map(|&p| tl[p]).max().unwrap_or(0);
            tl[s] = self.remaining_ms(s) + above;
        }
        tl
    }

    /// The remaining critical path: the job's completion time with unlimited resources.
    pub fn critical_path_ms(&self) -> u64 {
        self.bottom_levels().into_iter().max().unwrap_or(0)
    }

    /// Remaining work in cluster-milliseconds: for every task not yet finished, its dominant
    /// share of `capacity` times its (remaining) duration. The SRTF key.
    pub fn remaining_work(&self, capacity: &Resources) -> f64 {
        self.stages
            .iter()
            .map(|s| {
                let d = s.demand.dominant_share(capacity);
                d * (s.pending() as f64 * s.duration_ms as f64 + s.running as f64 * s.running_residual_ms() as f64)
            })
            .sum()
    }

    /// Work of one not-yet-started task of stage `i`, in the units of [`JobDag::remaining_work`].
    pub fn task_work(&self, i: StageIdx, capacity: &Resources) -> f64 {
        let s = &self.stages[i];
        s.demand.dominant_share(capacity) * s.duration_ms as f64
    }

    /// What the job would hold if all its unfinished tasks ran at once: the most it can use.
    pub fn max_demand(&self) -> Resources {
        self.stages.iter().fold(Resources::ZERO, |acc, s| acc + s.demand.times((s.pending() + s.running) as i64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn st(id: &str, tasks: u32, dur: u64, parents: &[usize]) -> Stage {
        Stage::new(id, tasks, Resources::new(1, 1), dur, parents)
    }

    #[test]
    fn cycles_and_bad_parents_are_refused_with_the_field() {
        let e = JobDag::new(vec![st("a", 1, 1, &[1]), st("b", 1, 1, &[0])]).unwrap_err();
        assert!(e.reason.contains("cycle") && e.field.starts_with("stages["), "{e}");
        let e = JobDag::new(vec![st("a", 1, 1, &[3])]).unwrap_err();
        assert_eq!(e.field, "stages[0].parents[0]");
        let e = JobDag::new(vec![st("a", 1, 0, &[])]).unwrap_err();
        assert_eq!(e.field, "stages[0].duration_ms");
        let mut s = st("a", 2, 1, &[]);
        s.finished = 2;
        s.running = 1;
        assert!(JobDag::new(vec![s]).unwrap_err().reason.contains("exceed"));
    }

    #[test]
    fn critical_path_follows_progress() {
        // a(10) -> c(5), b(30) -> c
        let mut d = JobDag::new(vec![st("a", 2, 10, &[]), st("b", 1, 30, &[]), st("c", 1, 5, &[0, 1])]).unwrap();
        assert_eq!(d.critical_path_ms(), 35);
        assert_eq!(d.top_levels(), vec![10, 30, 35]);
        d.set_progress(1, 0, 1, 20).unwrap();
        assert_eq!(d.critical_path_ms(), 15);
        d.set_progress(1, 1, 0, 0).unwrap();
        d.set_progress(0, 2, 0, 0).unwrap();
        assert!(d.is_runnable(2));
        assert_eq!(d.critical_path_ms(), 5);
        assert_eq!(d.max_demand(), Resources::new(1, 1));
    }
}
