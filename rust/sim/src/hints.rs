//! What the simulated ApplicationMasters tell the scheduler: hints documents (schema v1 of
//! `tidal_core::hints`), written straight from the job model into one reused buffer.
//!
//! - At registration (once its first stages are asked for) an AM sends its DAG: per stage the
//!   task count, the per-task demand and mean task duration as *estimated* (before estimation
//!   error), the parent stages and the YARN priority it asks at (stage index + 1). Stage ids are
//!   the stage indices, so ids are unique whatever the trace calls its stages.
//! - Then progress: finished and running counts with the mean elapsed time of running tasks,
//!   for the stages whose counts changed or that have tasks running. The engine sends it at
//!   every stage completion and, between them, at a task start or end when the job's last
//!   report is at least `hint_progress_interval_ms` old.

use crate::model::Job;
use anyhow::{anyhow, Result};
use serde::ser::{SerializeMap, SerializeSeq, SerializeStruct};
use serde::{Serialize, Serializer};
use tidal_core::{ResourceKind, Resources};

/// One stage's progress as the AM reports it.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct ProgressEntry {
    pub stage: u32,
    pub finished: u32,
    pub running: u32,
    pub running_elapsed_ms: u64,
}

/// Serialises hint documents into a buffer kept across calls, so the event loop does not
/// allocate per document once the buffer has grown.
#[derive(Default)]
pub struct HintWriter {
    buf: Vec<u8>,
}

struct Id(u32);

impl Serialize for Id {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&self.0)
    }
}

struct Demand(Resources);

impl Serialize for Demand {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let n = ResourceKind::ALL.iter().filter(|k| self.0.get(**k) != 0).count();
        let mut m = s.serialize_map(Some(n))?;
        for k in ResourceKind::ALL {
            let v = self.0.get(k);
            if v != 0 {
                m.serialize_entry(k.name(), &v)?;
            }
        }
        m.end()
    }
}

struct Ids<'a>(&'a [u32]);

impl Serialize for Ids<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut q = s.serialize_seq(Some(self.0.len()))?;
        for &p in self.0 {
            q.serialize_element(&Id(p))?;
        }
        q.end()
    }
}

struct Stages<'a>(&'a Job);

impl Serialize for Stages<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let job = self.0;
        let mut q = s.serialize_seq(Some(job.stages.len()))?;
        for (i, (st, est)) in job.stages.iter().zip(&job.estimates).enumerate() {
            q.serialize_element(&StageDoc {
                id: Id(i as u32),
                tasks: st.tasks(),
                demand: Demand(est.demand),
                duration_ms: est.duration_ms,
                parents: Ids(&st.parents),
                priority: i as i32 + 1,
            })?;
        }
        q.end()
    }
}

struct StageDoc<'a> {
    id: Id,
    tasks: usize,
    demand: Demand,
    duration_ms: u32,
    parents: Ids<'a>,
    priority: i32,
}

impl Serialize for StageDoc<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("Stage", 6)?;
        st.serialize_field("id", &self.id)?;
        st.serialize_field("tasks", &self.tasks)?;
        st.serialize_field("demand", &self.demand)?;
        st.serialize_field("duration_ms", &self.duration_ms)?;
        st.serialize_field("parents", &self.parents)?;
        st.serialize_field("priorities", &[self.priority])?;
        st.end()
    }
}

#[derive(Serialize)]
struct DagDoc<'a> {
    version: u32,
    stages: Stages<'a>,
}

struct Progress<'a>(&'a [ProgressEntry]);

impl Serialize for Progress<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut q = s.serialize_seq(Some(self.0.len()))?;
        for e in self.0 {
            q.serialize_element(&ProgressDoc {
                stage: Id(e.stage),
                finished: e.finished,
                running: e.running,
                running_elapsed_ms: e.running_elapsed_ms,
            })?;
        }
        q.end()
    }
}

#[derive(Serialize)]
struct ProgressDoc {
    stage: Id,
    finished: u32,
    running: u32,
    running_elapsed_ms: u64,
}

#[derive(Serialize)]
struct ProgressOnly<'a> {
    version: u32,
    progress: Progress<'a>,
}

impl HintWriter {
    fn finish(&self) -> Result<&str> {
        std::str::from_utf8(&self.buf).map_err(|e| anyhow!("hints document is not UTF-8: {e}"))
    }

    /// The DAG document of `job`.
    pub fn dag(&mut self, job: &Job) -> Result<&str> {
        self.buf.clear();
        serde_json::to_writer(
            &mut self.buf,
            &DagDoc { version: tidal_core::hints::HINTS_VERSION, stages: Stages(job) },
        )?;
        self.finish()
    }

    /// A progress-only document.
    pub fn progress(&mut self, entries: &[ProgressEntry]) -> Result<&str> {
        self.buf.clear();
        serde_json::to_writer(
            &mut self.buf,
            &ProgressOnly { version: tidal_core::hints::HINTS_VERSION, progress: Progress(entries) },
        )?;
        self.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{estimates_of, Stage};

    #[test]
    fn documents_follow_the_schema() {
        let stages = vec![
            Stage {
                name: "map".into(),
                parents: vec![],
                demand: Resources::new(2048, 1),
                durations_ms: vec![1000, 3000],
            },
            Stage { name: "map".into(), parents: vec![0], demand: Resources::new(1024, 2), durations_ms: vec![500] },
        ];
        let estimates = estimates_of(&stages);
        let job = Job {
            name: "j".into(),
            queue: "q".into(),
            user: "u".into(),
            class: "c".into(),
            arrival_ms: 0,
            deadline_ms: None,
            stages,
            estimates,
        };
        let mut w = HintWriter::default();
        let v: serde_json::Value = serde_json::from_str(w.dag(&job).unwrap()).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"version": 1, "stages": [
                {"id": "0", "tasks": 2, "demand": {"memory_mb": 2048, "vcores": 1}, "duration_ms": 2000, "parents": [], "priorities": [1]},
                {"id": "1", "tasks": 1, "demand": {"memory_mb": 1024, "vcores": 2}, "duration_ms": 500, "parents": ["0"], "priorities": [2]}
            ]})
        );
        let p = w.progress(&[ProgressEntry { stage: 1, finished: 0, running: 1, running_elapsed_ms: 7 }]).unwrap();
        assert_eq!(p, r#"{"version":1,"progress":[{"stage":"1","finished":0,"running":1,"running_elapsed_ms":7}]}"#);
    }
}
