//! Jobs as the simulator replays them: DAGs of stages with per-task durations.
//!
//! Each stage is a set of equivalent tasks with one container shape (YARN needs one capability
//! per request priority). Orders and critical paths come from the core's DAG model
//! (`tidal_core::dag`), which also holds what a job's ApplicationMaster believes about it.

use serde::Serialize;
use tidal_core::dag::{self, DagError, JobDag};
use tidal_core::{ResourceKind, Resources};

/// A stage serialises as the workload document's stage (`schema/workload.schema.json`), which
/// real-cluster replays read.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Stage {
    pub name: String,
    /// Indices of the stages that must all finish before this one may start (a barrier).
    pub parents: Vec<u32>,
    /// Container capability of every task of the stage; resources it does not ask for are left
    /// out of the document.
    #[serde(rename = "resources", serialize_with = "named_resources")]
    pub demand: Resources,
    /// One entry per task: how long it holds its container.
    #[serde(rename = "task_durations_ms")]
    pub durations_ms: Vec<u32>,
}

fn named_resources<S: serde::Serializer>(r: &Resources, s: S) -> Result<S::Ok, S::Error> {
    s.collect_map(ResourceKind::ALL.iter().filter(|k| r.get(**k) > 0).map(|k| (k.name(), r.get(*k))))
}

impl Stage {
    pub fn tasks(&self) -> usize {
        self.durations_ms.len()
    }

    /// Mean task duration, rounded down (0 for a stage without tasks).
    pub fn mean_duration_ms(&self) -> u64 {
        self.durations_ms.iter().map(|&d| d as u64).sum::<u64>() / self.tasks().max(1) as u64
    }
}

/// A DAG with no arrival time yet: what traces and generators produce.
#[derive(Clone, Debug, PartialEq)]
pub struct JobTemplate {
    pub name: String,
    pub stages: Vec<Stage>,
    /// Submission time recorded by the trace, if it has one.
    pub arrival_ms: Option<i64>,
    /// Queue recorded by the trace, if it has one.
    pub queue: Option<String>,
}

/// A job instance ready to run; it serialises as the workload document's job.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Job {
    pub name: String,
    pub queue: String,
    /// The submitting user (what UWFQ and user-fair policies group by).
    pub user: String,
    /// Free-form label reported per job, e.g. `LQ` or `TQ`.
    pub class: String,
    pub arrival_ms: i64,
    /// Absolute deadline, for jobs that have one (BoPF's LQ jobs).
    pub deadline_ms: Option<i64>,
    /// What runs: each stage's real container size and each task's real duration.
    pub stages: Vec<Stage>,
    /// What the job's ApplicationMaster believes before it runs, and sends as its DAG hints
    /// (see [`estimate_of`]); the same structure as `stages`. A replay's AM derives its own.
    #[serde(skip)]
    pub estimate: JobDag,
}

impl JobTemplate {
    /// Checks the DAG: at least one stage, every stage has tasks, parents exist, are not the
    /// stage itself, appear once, and there is no cycle. Errors name the stage.
    pub fn validate(&self) -> Result<(), String> {
        validate_stages(&self.stages)
    }
}

pub fn validate_stages(stages: &[Stage]) -> Result<(), String> {
    if stages.is_empty() {
        return Err("job has no stages".into());
    }
    if stages.len() > u16::MAX as usize - 1 {
        return Err(format!("job has {} stages; at most {} are supported", stages.len(), u16::MAX - 1));
    }
    for (i, s) in stages.iter().enumerate() {
        if s.durations_ms.is_empty() {
            return Err(format!("stage '{}' has no tasks", s.name));
        }
        if s.demand.any_negative() {
            return Err(format!("stage '{}' has a negative demand {}", s.name, s.demand));
        }
        for (k, &p) in s.parents.iter().enumerate() {
            if p as usize >= stages.len() {
                return Err(format!("stage '{}' has an edge from unknown stage #{p}", s.name));
            }
            if p as usize == i {
                return Err(format!("stage '{}' depends on itself", s.name));
            }
            if s.parents[..k].contains(&p) {
                return Err(format!("stage '{}' lists parent '{}' twice", s.name, stages[p as usize].name));
            }
        }
    }
    if peel(stages).len() < stages.len() {
        let names: Vec<&str> = cyclic_stages(stages).into_iter().map(|i| stages[i].name.as_str()).collect();
        return Err(format!("the stage graph has a cycle through {}", names.join(", ")));
    }
    Ok(())
}

/// Kahn's algorithm: the stages it can peel off, in topological order. Whatever it cannot
/// peel off lies on or behind a cycle.
fn peel(stages: &[Stage]) -> Vec<usize> {
    let n = stages.len();
    let mut indeg: Vec<usize> = stages.iter().map(|s| s.parents.len()).collect();
    let mut children = vec![Vec::new(); n];
    for (i, s) in stages.iter().enumerate() {
        for &p in &s.parents {
            children[p as usize].push(i);
        }
    }
    let mut ready: Vec<usize> = (0..n).filter(|&i| indeg[i] == 0).collect();
    let mut order = Vec::with_capacity(n);
    while let Some(i) = ready.pop() {
        order.push(i);
        for &c in &children[i] {
            indeg[c] -= 1;
            if indeg[c] == 0 {
                ready.push(c);
            }
        }
    }
    order
}

/// The stages on or behind a cycle, by index. The core's DAG names one stage of a cycle; trace
/// errors name them all.
fn cyclic_stages(stages: &[Stage]) -> Vec<usize> {
    let mut done = vec![false; stages.len()];
    for i in peel(stages) {
        done[i] = true;
    }
    (0..stages.len()).filter(|&i| !done[i]).collect()
}

/// `stages` in the core's DAG model, each stage lasting `duration_ms`: stage ids are the stage
/// indices and stage *i* is asked for at priority *i + 1*.
fn core_dag(stages: &[Stage], duration_ms: impl Fn(&Stage) -> u64) -> Result<JobDag, DagError> {
    let stages = stages.iter().enumerate().map(|(i, s)| {
        let parents: Vec<usize> = s.parents.iter().map(|&p| p as usize).collect();
        let mut stage = dag::Stage::new(&i.to_string(), s.tasks() as u32, s.demand, duration_ms(s), &parents);
        stage.priorities = vec![i as i32 + 1];
        stage
    });
    JobDag::new(stages.collect())
}

/// What an ApplicationMaster believes about its job before it runs: per stage the task count,
/// the container size and the mean task duration as they are now. Call it before estimation
/// error perturbs the stages.
pub fn estimate_of(stages: &[Stage]) -> Result<JobDag, DagError> {
    core_dag(stages, |s| s.mean_duration_ms().max(1))
}

/// The longest path with each stage lasting `duration_ms`. The core's model needs positive
/// durations, so a stage whose tasks take no time counts 1 ms.
fn longest_path_ms(stages: &[Stage], duration_ms: impl Fn(&Stage) -> u64) -> i64 {
    let dag = core_dag(stages, |s| duration_ms(s).max(1)).expect("validated DAG");
    dag.critical_path_ms() as i64
}

/// The structural statistics of Carbyne's Tables 1 and 2.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct DagStats {
    pub stages: usize,
    /// Stages with more than one parent.
    pub barriers: usize,
    /// Stages on the longest source-to-sink path.
    pub critical_path: usize,
    /// Chains that can run in parallel with each other: the number of source stages.
    pub disjoint_paths: usize,
}

pub fn dag_stats(stages: &[Stage]) -> DagStats {
    DagStats {
        stages: stages.len(),
        barriers: stages.iter().filter(|s| s.parents.len() > 1).count(),
        critical_path: longest_path_ms(stages, |_| 1) as usize,
        disjoint_paths: stages.iter().filter(|s| s.parents.is_empty()).count(),
    }
}

/// The shortest possible completion time of a job on an unbounded cluster: the longest path
/// where each stage takes its longest task.
pub fn critical_path_ms(stages: &[Stage]) -> i64 {
    longest_path_ms(stages, |s| s.durations_ms.iter().copied().max().unwrap_or(0) as u64)
}

/// The same with every task at its stage's mean duration (the tasks once made equal).
pub fn mean_critical_path_ms(stages: &[Stage]) -> i64 {
    longest_path_ms(stages, Stage::mean_duration_ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn stage(name: &str, parents: &[u32], tasks: usize) -> Stage {
        Stage {
            name: name.into(),
            parents: parents.to_vec(),
            demand: Resources::new(1024, 1),
            durations_ms: vec![1000; tasks],
        }
    }

    #[test]
    fn stats_of_a_join() {
        // a -> c, b -> c, c -> d
        let s = vec![stage("a", &[], 1), stage("b", &[], 1), stage("c", &[0, 1], 1), stage("d", &[2], 1)];
        assert!(validate_stages(&s).is_ok());
        assert_eq!(dag_stats(&s), DagStats { stages: 4, barriers: 1, critical_path: 3, disjoint_paths: 2 });
        assert_eq!(critical_path_ms(&s), 3000);
    }

    #[test]
    fn bad_dags_are_named() {
        let cyc = vec![stage("a", &[1], 1), stage("b", &[0], 1)];
        let e = validate_stages(&cyc).unwrap_err();
        assert!(e.contains("cycle") && e.contains("a") && e.contains("b"), "{e}");
        let unknown = vec![stage("a", &[7], 1)];
        assert!(validate_stages(&unknown).unwrap_err().contains("unknown stage #7"));
        let empty = vec![stage("a", &[], 0)];
        assert!(validate_stages(&empty).unwrap_err().contains("no tasks"));
        assert!(validate_stages(&[stage("a", &[0], 1)]).unwrap_err().contains("itself"));
        assert!(validate_stages(&[]).is_err());
    }
}
