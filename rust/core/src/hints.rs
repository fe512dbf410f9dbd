//! Hints: what an application master tells the scheduler about its job, as JSON (schema v1).
//!
//! One document type serves both purposes. A document with `stages` describes the job's DAG
//! and replaces any earlier one; `progress` may come with it or alone, and a progress-only
//! document updates the stored DAG's progress (stages it does not list keep theirs).
//!
//! ```json
//! {
//!   "version": 1,
//!   "stages": [
//!     {"id": "Map 1", "tasks": 40, "demand": {"memory_mb": 2048, "vcores": 1},
//!      "duration_ms": 30000, "parents": [], "priorities": [8, 10]},
//!     {"id": "Reducer 2", "tasks": 10, "demand": {"memory_mb": 4096, "vcores": 1},
//!      "duration_ms": 60000, "parents": ["Map 1"], "priorities": [14]}
//!   ],
//!   "progress": [
//!     {"stage": "Map 1", "finished": 12, "running": 8, "running_elapsed_ms": 10000}
//!   ]
//! }
//! ```
//!
//! - `version`: must be [`HINTS_VERSION`].
//! - `stages[].id`: unique, 1..=256 bytes. `tasks`: total tasks of the stage (0 allowed).
//!   `demand`: per-task demand by resource name (`memory_mb`, `vcores`, `disk_read_mbps`,
//!   `disk_write_mbps`, `net_in_mbps`, `net_out_mbps`; YARN spellings such as `memory-mb`
//!   are accepted), non-negative whole numbers, missing ones are 0. `duration_ms`: estimated
//!   duration of one task, positive. `parents`: ids of the stages whose tasks must all finish
//!   before this stage's start (barriers); no cycles. `priorities`: the YARN request
//!   priorities (>= 0) at which the application asks for this stage's tasks. Stages may share
//!   a priority; asks at a priority no stage lists are scheduled like an unhinted app's.
//! - `progress[]`: `stage` (an id), `finished` and `running` task counts (their sum at most
//!   `tasks`), and optionally `running_elapsed_ms`, the mean time the running tasks have run
//!   (default 0: planning then assumes they have their whole duration left, which is safe).
//!
//! Refused, with an error naming the field, and leaving the app's previous hints in place:
//! JSON that does not parse or has unknown fields, documents over [`MAX_HINTS_BYTES`], an
//! unknown version, duplicate or unknown stage ids, cycles, non-positive durations, negative
//! counts or demands, progress beyond the task count, more than [`MAX_STAGES`] stages or
//! [`MAX_TASKS`] tasks, and a priority map that matches none of the app's outstanding
//! requests. The last check is only made when the app has outstanding requests: an AM may
//! describe its DAG before it asks for the first task.

use crate::dag::{JobDag, Stage, StageIdx};
use crate::error::{CoreError, Result};
use crate::ids::AppKey;
use crate::ids::Priority;
use crate::request::AskTable;
use crate::resource::{ResourceKind, Resources};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// The schema version this core reads.
pub const HINTS_VERSION: u32 = 1;
/// Largest accepted document: 1 MiB, room for thousands of stages.
pub const MAX_HINTS_BYTES: usize = 1 << 20;
pub const MAX_STAGES: usize = 10_000;
/// Total tasks over all stages; plans hold one entry per pending task.
pub const MAX_TASKS: u64 = 1_000_000;
const MAX_ID_BYTES: usize = 256;
/// Thirty days: anything longer is a unit mistake.
const MAX_DURATION_MS: f64 = 30.0 * 24.0 * 3600.0 * 1000.0;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HintsDoc {
    version: i64,
    #[serde(default)]
    stages: Option<Vec<StageDoc>>,
    #[serde(default)]
    progress: Option<Vec<ProgressDoc>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StageDoc {
    id: String,
    tasks: i64,
    #[serde(default)]
    demand: BTreeMap<String, i64>,
    duration_ms: f64,
    #[serde(default)]
    parents: Vec<String>,
    #[serde(default)]
    priorities: Vec<i64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ProgressDoc {
    stage: String,
    finished: i64,
    running: i64,
    #[serde(default)]
    running_elapsed_ms: f64,
}

/// The hints stored on an app.
#[derive(Clone, Debug, PartialEq)]
pub struct AppHints {
    /// Changes with every accepted document (DAG or progress).
    pub revision: u64,
    /// Changes only when a document replaces the DAG.
    pub dag_revision: u64,
    pub dag: JobDag,
    /// Priority to the stages requested at it, sorted by priority.
    by_priority: Vec<(Priority, Vec<StageIdx>)>,
}

impl AppHints {
    /// The stages whose tasks the app requests at `priority` (empty when none).
    #[inline]
    pub fn stages_at(&self, priority: Priority) -> &[StageIdx] {
        match self.by_priority.binary_search_by_key(&priority, |e| e.0) {
            Ok(i) => &self.by_priority[i].1,
            Err(_) => &[],
        }
    }

    pub fn priorities(&self) -> impl Iterator<Item = Priority> + '_ {
        self.by_priority.iter().map(|e| e.0)
    }
}

/// The answer to an accepted document.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HintsReply {
    pub version: u32,
    pub app: AppKey,
    pub revision: u64,
    pub stages: usize,
    pub pending_tasks: u64,
    /// Non-fatal observations, e.g. a runnable stage whose priorities the app does not request.
    pub advisories: Vec<String>,
    /// Straggler mitigation (slot reservation queues): running containers that may get a copy
    /// on one of the app's idle reserved slots. A copy is an ordinary ask at `priority`, made
    /// once all the stage's tasks have started; the scheduler places it on a held slot first
    /// and takes it for a copy of the oldest running container without one (the order
    /// `containers` lists them in). The AM keeps whichever finishes first and kills the other.
    pub stragglers: Vec<StragglerAdvice>,
    /// Runtime partitioning (`<uwfq-target-task-sec>`): stages not started yet, with the task
    /// count that makes each task run about the target runtime.
    pub partitions: Vec<PartitionAdvice>,
}

/// Containers of one stage that may run a copy.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StragglerAdvice {
    pub stage: String,
    /// The priority to ask for a copy at (the stage's first hinted priority).
    pub priority: Option<Priority>,
    /// Reserved slots of the stage that are idle.
    pub idle_slots: usize,
    /// Allocation ids of the running containers to copy, oldest first (the RM's shim hands the
    /// AM their container ids).
    pub containers: Vec<u64>,
}

/// How many tasks to split a stage into.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PartitionAdvice {
    pub stage: String,
    /// Tasks the hints give now.
    pub tasks: u32,
    /// `ceil(tasks × duration / target)`, at least 1.
    pub advised_tasks: u32,
}

impl HintsReply {
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("reply serialises")
    }
}

fn bad(app: AppKey, field: &str, reason: impl std::fmt::Display) -> CoreError {
    CoreError::InvalidHints { app, field: field.to_string(), reason: reason.to_string() }
}

/// `field` names the field, and is only called on error: documents arrive with every task end.
fn count(app: AppKey, field: impl Fn() -> String, v: i64) -> Result<u32> {
    if v < 0 {
        return Err(bad(app, &field(), format!("{v} is negative")));
    }
    if v as u64 > MAX_TASKS {
        return Err(bad(app, &field(), format!("{v} is above the limit of {MAX_TASKS} tasks")));
    }
    Ok(v as u32)
}

fn millis(app: AppKey, field: impl Fn() -> String, v: f64, positive: bool) -> Result<u64> {
    if !v.is_finite() || v < 0.0 || (positive && v <= 0.0) {
        let what = if positive { "positive" } else { "non-negative" };
        return Err(bad(app, &field(), format!("{v} is not a {what} number of milliseconds")));
    }
    if v > MAX_DURATION_MS {
        return Err(bad(app, &field(), format!("{v} ms is longer than 30 days")));
    }
    Ok((v.round() as u64).max(if positive { 1 } else { 0 }))
}

/// Parses, validates and applies a hints document for app `app` to its hints `hints` (none
/// yet, or the current ones), given its outstanding asks `asks`. On any error `hints` is left
/// as it was. A progress-only document updates the stored DAG in place, unless a policy
/// still holds it: Tez sends one with every task end, so copying the DAG each time would
/// dominate the cost of progress.
pub fn apply(app: AppKey, json: &str, hints: &mut Option<Arc<AppHints>>, asks: &AskTable) -> Result<HintsReply> {
    if json.len() > MAX_HINTS_BYTES {
        return Err(bad(app, "(document)", format!("{} bytes exceed the limit of {MAX_HINTS_BYTES}", json.len())));
    }
    // serde would also read a struct written as a JSON array of its fields; the schema says
    // object, and so does the core.
    if !json.trim_start().starts_with('{') {
        return Err(bad(app, "(document)", "must be a JSON object"));
    }
    let doc: HintsDoc = serde_json::from_str(json)
        .map_err(|e| CoreError::InvalidInput(format!("hints for application {app}: malformed JSON: {e}")))?;
    if doc.version != HINTS_VERSION as i64 {
        return Err(bad(
            app,
            "version",
            format!("{} is not supported (this scheduler reads {HINTS_VERSION})", doc.version),
        ));
    }
    // Revisions count per app: policies compare them to notice changed hints.
    let revision = hints.as_ref().map_or(1, |p| p.revision + 1);
    let stored = match doc.stages {
        Some(stages) => {
            let (mut dag, index) = build_dag(app, stages)?;
            let progress = doc.progress.unwrap_or_default();
            let mut progress = read_progress(app, &progress, |id| index.get(id).copied())?;
            set_progress(app, &mut dag, &mut progress)?;
            let by_priority = priority_map(&dag);
            check_priorities(app, &by_priority, asks)?;
            hints.insert(Arc::new(AppHints { revision, dag_revision: revision, dag, by_priority }))
        }
        None => {
            let Some(current) = hints.as_mut() else {
                return Err(bad(app, "stages", "missing, and the application has no DAG to apply progress to"));
            };
            let Some(progress) = doc.progress else {
                return Err(bad(app, "(document)", "has neither stages nor progress"));
            };
            let mut progress = read_progress(app, &progress, stage_index(&current.dag))?;
            let h = Arc::make_mut(current);
            set_progress(app, &mut h.dag, &mut progress)?;
            h.revision = revision;
            current
        }
    };
    Ok(HintsReply {
        version: HINTS_VERSION,
        app,
        revision,
        stages: stored.dag.len(),
        pending_tasks: stored.dag.pending_tasks(),
        advisories: advisories(&stored.dag, asks),
        stragglers: Vec::new(),
        partitions: Vec::new(),
    })
}

/// Finds stages by id: a scan for the few stages of most jobs, a map borrowing the ids
/// beyond that, so a document's cost stays linear in its size.
fn stage_index(dag: &JobDag) -> impl Fn(&str) -> Option<StageIdx> + '_ {
    const SCAN: usize = 32;
    let stages = dag.stages();
    let map: HashMap<&str, StageIdx> = if stages.len() > SCAN {
        stages.iter().enumerate().map(|(i, s)| (s.id.as_str(), i)).collect()
    } else {
        HashMap::new()
    };
    move |id| if stages.len() > SCAN { map.get(id).copied() } else { stages.iter().position(|s| s.id == id) }
}

/// One progress entry, validated, and what its stage had before it was applied.
struct Progress {
    stage: StageIdx,
    finished: u32,
    running: u32,
    elapsed_ms: u64,
    before: (u32, u32, u64),
}

fn read_progress(
    app: AppKey,
    docs: &[ProgressDoc],
    stage_of: impl Fn(&str) -> Option<StageIdx>,
) -> Result<Vec<Progress>> {
    let mut v = Vec::with_capacity(docs.len());
    for (i, p) in docs.iter().enumerate() {
        let field = |name: &str| format!("progress[{i}].{name}");
        let stage =
            stage_of(&p.stage).ok_or_else(|| bad(app, &field("stage"), format!("unknown stage '{}'", p.stage)))?;
        v.push(Progress {
            stage,
            finished: count(app, || field("finished"), p.finished)?,
            running: count(app, || field("running"), p.running)?,
            elapsed_ms: millis(app, || field("running_elapsed_ms"), p.running_elapsed_ms, false)?,
            before: (0, 0, 0),
        });
    }
    Ok(v)
}

/// Sets every entry's progress on `dag`, or, when one is beyond its stage's tasks, none.
fn set_progress(app: AppKey, dag: &mut JobDag, progress: &mut [Progress]) -> Result<()> {
    for k in 0..progress.len() {
        let p = &mut progress[k];
        let s = dag.stage(p.stage);
        p.before = (s.finished, s.running, s.running_elapsed_ms);
        if let Err(e) = dag.set_progress(p.stage, p.finished, p.running, p.elapsed_ms) {
            for q in progress[..k].iter().rev() {
                let (finished, running, elapsed) = q.before;
                dag.set_progress(q.stage, finished, running, elapsed).expect("the stage held these counts");
            }
            return Err(bad(app, &format!("progress[{k}]"), e.reason));
        }
    }
    Ok(())
}

fn build_dag(app: AppKey, docs: Vec<StageDoc>) -> Result<(JobDag, HashMap<String, StageIdx>)> {
    if docs.len() > MAX_STAGES {
        return Err(bad(app, "stages", format!("{} stages exceed the limit of {MAX_STAGES}", docs.len())));
    }
    let mut index: HashMap<String, StageIdx> = HashMap::with_capacity(docs.len());
    for (i, d) in docs.iter().enumerate() {
        if d.id.is_empty() || d.id.len() > MAX_ID_BYTES {
            return Err(bad(app, &format!("stages[{i}].id"), format!("must be 1 to {MAX_ID_BYTES} bytes")));
        }
        if index.insert(d.id.clone(), i).is_some() {
            return Err(bad(app, &format!("stages[{i}].id"), format!("duplicate stage id '{}'", d.id)));
        }
    }
    let mut total = 0u64;
    let mut stages = Vec::with_capacity(docs.len());
    for (i, d) in docs.into_iter().enumerate() {
        let f = |name: &str| format!("stages[{i}].{name}");
        let tasks = count(app, || f("tasks"), d.tasks)?;
        total += tasks as u64;
        if total > MAX_TASKS {
            return Err(bad(app, &f("tasks"), format!("the DAG exceeds the limit of {MAX_TASKS} tasks")));
        }
        let mut demand = Resources::ZERO;
        for (name, v) in &d.demand {
            let kind =
                ResourceKind::parse(name).ok_or_else(|| bad(app, &f(&format!("demand.{name}")), "unknown resource"))?;
            if *v < 0 || *v > crate::resource::MAX_RESOURCE_AMOUNT {
                return Err(bad(app, &f(&format!("demand.{name}")), format!("{v} is negative or too large")));
            }
            demand.set(kind, *v);
        }
        let duration_ms = millis(app, || f("duration_ms"), d.duration_ms, true)?;
        let mut parents = Vec::with_capacity(d.parents.len());
        for (k, p) in d.parents.iter().enumerate() {
            let &pi =
                index.get(p).ok_or_else(|| bad(app, &f(&format!("parents[{k}]")), format!("unknown stage '{p}'")))?;
            parents.push(pi);
        }
        let mut priorities = Vec::with_capacity(d.priorities.len());
        for (k, &p) in d.priorities.iter().enumerate() {
            if p < 0 || p > i32::MAX as i64 {
                return Err(bad(
                    app,
                    &f(&format!("priorities[{k}]")),
                    format!("{p} is not a YARN priority (0 to 2^31-1)"),
                ));
            }
            if !priorities.contains(&(p as Priority)) {
                priorities.push(p as Priority);
            }
        }
        let mut stage = Stage::new(&d.id, tasks, demand, duration_ms, &[]);
        stage.parents = parents;
        stage.priorities = priorities;
        stages.push(stage);
    }
    let dag = JobDag::new(stages).map_err(|e| bad(app, &e.field, e.reason))?;
    Ok((dag, index))
}

fn priority_map(dag: &JobDag) -> Vec<(Priority, Vec<StageIdx>)> {
    let mut map: BTreeMap<Priority, Vec<StageIdx>> = BTreeMap::new();
    for (i, s) in dag.stages().iter().enumerate() {
        for &p in &s.priorities {
            map.entry(p).or_default().push(i);
        }
    }
    map.into_iter().collect()
}

fn requested(asks: &AskTable) -> Vec<Priority> {
    asks.priorities().iter().filter(|p| p.pending() > 0).map(|p| p.priority).collect()
}

fn check_priorities(app: AppKey, map: &[(Priority, Vec<StageIdx>)], asks: &AskTable) -> Result<()> {
    let req = requested(asks);
    if map.is_empty() || req.is_empty() {
        return Ok(());
    }
    if !map.iter().any(|(p, _)| req.contains(p)) {
        let hinted: Vec<Priority> = map.iter().map(|e| e.0).collect();
        return Err(bad(
            app,
            "stages[].priorities",
            format!(
                "none of the hinted priorities {hinted:?} matches a request of the application (it requests {req:?})"
            ),
        ));
    }
    Ok(())
}

fn advisories(dag: &JobDag, asks: &AskTable) -> Vec<String> {
    let req = requested(asks);
    if req.is_empty() {
        return Vec::new();
    }
    dag.stages()
        .iter()
        .enumerate()
        .filter(|(i, s)| s.pending() > 0 && !s.priorities.is_empty() && dag.is_runnable(*i))
        .filter(|(_, s)| !s.priorities.iter().any(|p| req.contains(p)))
        .map(|(_, s)| {
            format!(
                "stage '{}' is runnable with {} pending tasks but none of its priorities {:?} is requested",
                s.id,
                s.pending(),
                s.priorities
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Settings;
    use crate::ids::ANY;
    use crate::request::Ask;

    fn asks(priorities: &[Priority]) -> AskTable {
        let mut t = AskTable::default();
        let a: Vec<Ask> = priorities
            .iter()
            .map(|&p| Ask {
                priority: p,
                location: ANY,
                num_containers: 2,
                relax_locality: true,
                capability: Resources::new(1024, 1),
            })
            .collect();
        t.update(1, &a, &Settings::default()).unwrap();
        t
    }

    const DOC: &str = r#"{"version":1,"stages":[
        {"id":"m","tasks":4,"demand":{"memory-mb":1024,"vcores":1},"duration_ms":1000,"priorities":[5]},
        {"id":"r","tasks":2,"demand":{"memory_mb":2048,"vcores":1},"duration_ms":2000,"parents":["m"],"priorities":[8]}],
        "progress":[{"stage":"m","finished":1,"running":2}]}"#;

    #[test]
    fn a_document_with_progress_round_trips() {
        let mut stored = None;
        let reply = apply(7, DOC, &mut stored, &asks(&[5])).unwrap();
        let h = stored.clone().unwrap();
        assert_eq!(h.dag.len(), 2);
        assert_eq!(h.dag.stage(1).parents, vec![0]);
        assert_eq!(h.dag.stage(1).demand, Resources::new(2048, 1));
        assert_eq!(h.stages_at(8), &[1]);
        assert!(h.stages_at(9).is_empty());
        assert_eq!((reply.app, reply.stages, reply.pending_tasks), (7, 2, 3));
        assert!(reply.to_json().contains("\"advisories\":[]"));
        // Progress alone updates the stored DAG and keeps the DAG revision.
        apply(7, r#"{"version":1,"progress":[{"stage":"m","finished":4,"running":0}]}"#, &mut stored, &asks(&[8]))
            .unwrap();
        let h2 = stored.clone().unwrap();
        assert_eq!(h2.dag.stage(0).finished, 4);
        assert_eq!(h.dag.stage(0).finished, 1, "the DAG a policy still holds is not changed");
        assert_eq!(h2.dag_revision, h.dag_revision);
        assert!(h2.revision > h.revision);
    }

    #[test]
    fn a_rejected_progress_document_changes_nothing() {
        let mut stored = None;
        apply(7, DOC, &mut stored, &asks(&[5])).unwrap();
        let before = (*stored.clone().unwrap()).clone();
        let bad_second = r#"{"version":1,"progress":[{"stage":"m","finished":2,"running":0},
            {"stage":"r","finished":2,"running":1}]}"#;
        let err = apply(7, bad_second, &mut stored, &asks(&[5])).unwrap_err().to_string();
        assert!(err.contains("progress[1]") && err.contains("exceed tasks 2"), "{err}");
        assert_eq!(*stored.unwrap(), before, "the first entry was undone and the revision kept");
    }

    #[test]
    fn errors_name_the_field() {
        let e = |json: &str| apply(7, json, &mut None, &asks(&[5])).unwrap_err().to_string();
        assert!(e("{").contains("malformed JSON"));
        assert!(e(r#"{"version":2,"stages":[]}"#).contains("field version"));
        assert!(e(&DOC.replace("\"parents\":[\"m\"]", "\"parents\":[\"x\"]"))
            .contains("stages[1].parents[0]: unknown stage 'x'"));
        assert!(e(&DOC.replace("\"duration_ms\":2000", "\"duration_ms\":-5")).contains("stages[1].duration_ms"));
        assert!(e(&DOC.replace("\"duration_ms\":2000", "\"duration_ms\":0")).contains("stages[1].duration_ms"));
        assert!(e(&DOC.replace("\"id\":\"r\"", "\"id\":\"m\"")).contains("duplicate stage id"));
        assert!(e(&DOC.replace("\"finished\":1", "\"finished\":3")).contains("progress[0]"));
        assert!(e(&DOC.replace("\"stage\":\"m\"", "\"stage\":\"q\"")).contains("progress[0].stage"));
        assert!(e(&DOC.replace("\"tasks\":4", "\"tasks\":-4")).contains("stages[0].tasks"));
        assert!(e(&DOC.replace("vcores\":1}", "tpus\":1}")).contains("demand.tpus"));
        assert!(e(&DOC.replace("\"priorities\":[5]", "\"priorities\":[-1]")).contains("stages[0].priorities[0]"));
        assert!(e(&DOC.replace("\"tasks\":4", "\"taks\":4")).contains("unknown field"));
        let cyclic = DOC.replace("\"duration_ms\":1000,", "\"duration_ms\":1000,\"parents\":[\"r\"],");
        assert!(e(&cyclic).contains("cycle"), "{}", e(&cyclic));
        assert!(e(r#"{"version":1,"progress":[]}"#).contains("no DAG"));
        let big = format!("{{\"version\":1,\"stages\":[],\"pad\":\"{}\"}}", "x".repeat(MAX_HINTS_BYTES));
        assert!(e(&big).contains("exceed the limit"));
        // Priorities that match none of the outstanding requests.
        let err = apply(7, DOC, &mut None, &asks(&[3])).unwrap_err().to_string();
        assert!(err.contains("priorities") && err.contains("[3]"), "{err}");
        // No outstanding requests yet: accepted.
        assert!(apply(7, DOC, &mut None, &AskTable::default()).is_ok());
    }

    #[test]
    fn a_refused_field_is_carried_as_data() {
        let doc = DOC.replace("\"duration_ms\":2000", "\"duration_ms\":-5");
        match apply(7, &doc, &mut None, &asks(&[5])).unwrap_err() {
            CoreError::InvalidHints { app, field, reason } => {
                assert_eq!((app, field.as_str()), (7, "stages[1].duration_ms"));
                assert!(reason.contains("-5"), "{reason}");
            }
            e => panic!("expected InvalidHints, got {e:?}"),
        }
    }

    #[test]
    fn runnable_stages_without_requests_are_advised() {
        let doc = DOC.replace("\"finished\":1,\"running\":2", "\"finished\":4,\"running\":0");
        let reply = apply(7, &doc, &mut None, &asks(&[5])).unwrap();
        assert_eq!(reply.advisories.len(), 1);
        assert!(reply.advisories[0].contains("'r'"), "{:?}", reply.advisories);
    }
}
