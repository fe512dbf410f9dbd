//! The hints documents the simulated ApplicationMasters send, written from the core's DAG model.
//!
//! Schema v1 of `tidal_core::hints`, serialised into one reused buffer:
//!
//! - At registration (once its first stages are asked for) an AM sends its DAG: the job's
//!   estimate (`crate::model::Job::estimate`), i.e. per stage the task count, the per-task
//!   demand and mean task duration before estimation error, the parent stages and the YARN
//!   priority it asks at (stage index + 1). Stage ids are the stage indices, so ids are unique
//!   whatever the trace calls its stages.
//! - Then progress: finished and running counts with the mean elapsed time of running tasks,
//!   for the stages whose counts changed or that have tasks running. The engine sends it at
//!   every stage completion and, between them, at a task start or end when the job's last
//!   report is at least `hint_progress_interval_ms` old.

use anyhow::{anyhow, Result};
use serde::ser::{SerializeMap, SerializeStruct};
use serde::{Serialize, Serializer};
use tidal_core::dag::{JobDag, Stage, StageIdx};
use tidal_core::hints::HINTS_VERSION;
use tidal_core::{ResourceKind, Resources};

/// One stage's progress as the AM reports it.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct ProgressEntry {
    pub stage: StageIdx,
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

/// Per-task demand by resource name, the resources a task does not use left out.
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

/// Stage ids of `stages` in `dag`.
struct Ids<'a> {
    dag: &'a JobDag,
    stages: &'a [StageIdx],
}

impl Serialize for Ids<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.stages.iter().map(|&i| &self.dag.stage(i).id))
    }
}

/// One stage of the DAG document.
struct StageDoc<'a> {
    dag: &'a JobDag,
    stage: &'a Stage,
}

impl Serialize for StageDoc<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let stage = self.stage;
        let mut st = s.serialize_struct("Stage", 6)?;
        st.serialize_field("id", &stage.id)?;
        st.serialize_field("tasks", &stage.tasks)?;
        st.serialize_field("demand", &Demand(stage.demand))?;
        st.serialize_field("duration_ms", &stage.duration_ms)?;
        st.serialize_field("parents", &Ids { dag: self.dag, stages: &stage.parents })?;
        st.serialize_field("priorities", &stage.priorities)?;
        st.end()
    }
}

struct Stages<'a>(&'a JobDag);

impl Serialize for Stages<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.stages().iter().map(|stage| StageDoc { dag: self.0, stage }))
    }
}

#[derive(Serialize)]
struct DagDoc<'a> {
    version: u32,
    stages: Stages<'a>,
}

struct Progress<'a> {
    dag: &'a JobDag,
    entries: &'a [ProgressEntry],
}

impl Serialize for Progress<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.entries.iter().map(|e| ProgressDoc {
            stage: &self.dag.stage(e.stage).id,
            finished: e.finished,
            running: e.running,
            running_elapsed_ms: e.running_elapsed_ms,
        }))
    }
}

#[derive(Serialize)]
struct ProgressDoc<'a> {
    stage: &'a str,
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

    /// The document describing `dag`.
    pub fn dag(&mut self, dag: &JobDag) -> Result<&str> {
        self.buf.clear();
        serde_json::to_writer(&mut self.buf, &DagDoc { version: HINTS_VERSION, stages: Stages(dag) })?;
        self.finish()
    }

    /// A progress-only document for stages of `dag`.
    pub fn progress(&mut self, dag: &JobDag, entries: &[ProgressEntry]) -> Result<&str> {
        self.buf.clear();
        let progress = Progress { dag, entries };
        serde_json::to_writer(&mut self.buf, &ProgressOnly { version: HINTS_VERSION, progress })?;
        self.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{self, estimate_of};

    #[test]
    fn documents_follow_the_schema() {
        let stages = vec![
            model::Stage {
                name: "map".into(),
                parents: vec![],
                demand: Resources::new(2048, 1),
                durations_ms: vec![1000, 3000],
            },
            model::Stage {
                name: "map".into(),
                parents: vec![0],
                demand: Resources::new(1024, 2),
                durations_ms: vec![500],
            },
        ];
        let dag = estimate_of(&stages).unwrap();
        let mut w = HintWriter::default();
        let v: serde_json::Value = serde_json::from_str(w.dag(&dag).unwrap()).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"version": 1, "stages": [
                {"id": "0", "tasks": 2, "demand": {"memory_mb": 2048, "vcores": 1}, "duration_ms": 2000, "parents": [], "priorities": [1]},
                {"id": "1", "tasks": 1, "demand": {"memory_mb": 1024, "vcores": 2}, "duration_ms": 500, "parents": ["0"], "priorities": [2]}
            ]})
        );
        let p =
            w.progress(&dag, &[ProgressEntry { stage: 1, finished: 0, running: 1, running_elapsed_ms: 7 }]).unwrap();
        assert_eq!(p, r#"{"version":1,"progress":[{"stage":"1","finished":0,"running":1,"running_elapsed_ms":7}]}"#);
    }
}
