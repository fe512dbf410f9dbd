//! Cluster Fair Queuing (CFQ) inside a queue, the stage-level baseline of the UWFQ paper: every
//! stage is a flow of its own in a GPS reference system with traditional (WFQ) virtual time, and
//! the tasks of the stage with the earliest virtual deadline go first. No user or job context:
//! `P_s = D_s`.
//!
//! - A stage is an app's asks at one priority (YARN AMs ask for one stage per priority; with DAG
//!   hints, the stages requested at that priority). It arrives when asks first appear at the
//!   priority and keeps its deadline until the app leaves, so re-asks (a lost task) reuse it.
//! - Virtual time `V` advances at `R / n`, `n` the stages still in the reference (`V` below
//!   their deadline), `R` the dominant share the queue currently uses (as UWFQ's reference).
//! - A stage arriving at `V(a)` with slot-time `L` (dominant-share-seconds) gets the start tag
//!   `S = V(a)` and the deadline `D = S + L`: each stage its own flow, so no previous finish tag
//!   of the same flow delays it. Equal weights: the paper gives CFQ none.
//! - Slot-time `L` of a stage: with DAG hints, tasks × per-task dominant share × estimated task
//!   duration of the stages at that priority (a new estimate moves `D`, `S` stays); without,
//!   the containers asked at arrival × their share × `<uwfq-default-task-sec>`, the same default
//!   UWFQ uses, so the two policies see the same sizes.
//! - The reference keeps a stage until `V` passes its deadline even if its app finished early,
//!   as in WFQ: the reference never depends on the real schedule.
//! - An app waiting for its first container (the ApplicationMaster) goes first, as in FIFO.

use super::{AppPolicy, NodeOffer};
use crate::ids::{AppIdx, AppKey, Priority, QueueIdx};
use crate::request::Placement;
use crate::state::ClusterState;
use rustc_hash::FxHashMap;
use std::collections::BTreeSet;

/// `f64` with a total order, for ordered sets.
#[derive(Copy, Clone, Debug, PartialEq)]
struct Key(f64);

impl Eq for Key {}

impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Key {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// A stage in a set ordered by deadline, app and priority (ties: older app, earlier stage).
type StageEntry = (Key, AppKey, Priority);

#[derive(Copy, Clone, Debug)]
struct Stage {
    priority: Priority,
    start: f64,
    deadline: f64,
    /// In the ready set: it had pending asks at the last update.
    ready: bool,
}

/// One queue's GPS reference over its stages.
#[derive(Default)]
struct QueueClock {
    v: f64,
    t_prev: f64,
    rate: f64,
    /// Stages still in the reference, by deadline.
    fluid: BTreeSet<StageEntry>,
    /// Stages with pending asks, by deadline: the order tasks are served in.
    ready: BTreeSet<StageEntry>,
    stages: FxHashMap<AppKey, Vec<Stage>>,
}

impl QueueClock {
    /// Brings `V` to real time `now`, letting stages whose deadline it reaches leave.
    fn advance(&mut self, now: f64) {
        let mut t = self.t_prev.min(now);
        while self.rate > 0.0 {
            let Some(&(Key(d), _, _)) = self.fluid.first() else { break };
            let n = self.fluid.len() as f64;
            let reach = t + (d - self.v).max(0.0) * n / self.rate;
            if reach > now {
                self.v += (now - t) * self.rate / n;
                break;
            }
            self.v = self.v.max(d);
            t = reach;
            self.fluid.pop_first();
        }
        self.t_prev = now;
    }

    /// Moves a stage's deadline in both sets (a new hinted estimate).
    fn move_deadline(&mut self, app: AppKey, s: &mut Stage, deadline: f64) {
        let old = (Key(s.deadline), app, s.priority);
        let new = (Key(deadline), app, s.priority);
        if self.fluid.remove(&old) && deadline > self.v {
            self.fluid.insert(new);
        }
        if s.ready {
            self.ready.remove(&old);
            self.ready.insert(new);
        }
        s.deadline = deadline;
    }

    /// Reconciles an app's stages with its asks `(priority, pending)`: new priorities arrive,
    /// emptied ones leave the ready set, hinted estimates move deadlines. `work_of(priority,
    /// pending)` is a stage's slot-time and whether it is a hinted estimate.
    fn update_app(
        &mut self,
        now: f64,
        app: AppKey,
        asks: impl Iterator<Item = (Priority, u32)> + Clone,
        work_of: impl Fn(Priority, u32) -> (f64, bool),
    ) {
        self.advance(now);
        let mut stages = self.stages.remove(&app).unwrap_or_default();
        for s in stages.iter_mut() {
            let pending = asks.clone().find(|&(p, _)| p == s.priority).map_or(0, |a| a.1);
            if s.ready && pending == 0 {
                self.ready.remove(&(Key(s.deadline), app, s.priority));
                s.ready = false;
            } else if !s.ready && pending > 0 {
                self.ready.insert((Key(s.deadline), app, s.priority));
                s.ready = true;
            }
            if let (work, true) = work_of(s.priority, pending) {
                if s.start + work != s.deadline {
                    self.move_deadline(app, s, s.start + work);
                }
            }
        }
        for (priority, pending) in asks {
            if pending == 0 || stages.iter().any(|s| s.priority == priority) {
                continue;
            }
            let deadline = self.v + work_of(priority, pending).0;
            if deadline > self.v {
                self.fluid.insert((Key(deadline), app, priority));
            }
            self.ready.insert((Key(deadline), app, priority));
            stages.push(Stage { priority, start: self.v, deadline, ready: true });
        }
        self.stages.insert(app, stages);
    }

    fn remove_app(&mut self, app: AppKey) {
        for s in self.stages.remove(&app).unwrap_or_default() {
            if s.ready {
                self.ready.remove(&(Key(s.deadline), app, s.priority));
            }
        }
    }
}

pub struct Cfq {
    default_task_sec: f64,
    queues: Vec<QueueClock>,
}

impl Cfq {
    /// `default_task_sec`: runtime assumed for one container of a stage without hints.
    pub fn new(default_task_sec: f64) -> Cfq {
        Cfq { default_task_sec, queues: Vec::new() }
    }

    fn queue(&mut self, qi: QueueIdx) -> &mut QueueClock {
        if self.queues.len() <= qi {
            self.queues.resize_with(qi + 1, QueueClock::default);
        }
        &mut self.queues[qi]
    }
}

fn secs(ms: i64) -> f64 {
    ms as f64 / 1000.0
}

impl AppPolicy for Cfq {
    fn name(&self) -> &'static str {
        "cfq"
    }

    fn begin_heartbeat(&mut self, state: &ClusterState, now_ms: i64) {
        let now = secs(now_ms);
        for (qi, q) in self.queues.iter_mut().enumerate() {
            if q.fluid.is_empty() && q.ready.is_empty() {
                q.t_prev = now;
                continue;
            }
            q.advance(now);
            q.rate = state.queues.get(qi).map_or(0.0, |queue| queue.usage.dominant_share(&state.capacity));
        }
    }

    fn on_app_updated(&mut self, state: &ClusterState, idx: AppIdx) {
        let app = state.app(idx);
        let task_sec = self.default_task_sec;
        let capacity = &state.capacity;
        let asks = app.asks.priorities().iter().map(|p| (p.priority, p.pending()));
        let work_of = |priority: Priority, pending: u32| match &app.hints {
            Some(h) => {
                let dag = &h.dag;
                let stage_work = |&s: &usize| {
                    let st = dag.stage(s);
                    st.tasks as f64 * st.demand.dominant_share(capacity) * st.duration_ms as f64 / 1000.0
                };
                (h.stages_at(priority).iter().map(stage_work).sum(), true)
            }
            None => {
                let cap = app.asks.priorities().iter().find(|p| p.priority == priority).map(|p| p.capability);
                (cap.map_or(0.0, |c| pending as f64 * c.dominant_share(capacity) * task_sec), false)
            }
        };
        let now = secs(state.now_ms);
        self.queue(app.queue).update_app(now, app.key, asks, work_of);
    }

    fn on_app_removed(&mut self, state: &ClusterState, idx: AppIdx) {
        let app = state.app(idx);
        self.queue(app.queue).remove_app(app.key);
    }

    fn select(&mut self, state: &ClusterState, queue: QueueIdx, offer: &NodeOffer) -> Option<(AppIdx, Placement)> {
        if let Some(hit) = offer.app_waiting_for_am(state, queue, false) {
            return Some(hit);
        }
        let q = self.queues.get(queue)?;
        q.ready.iter().find_map(|&(_, key, priority)| {
            let idx = *state.app_index.get(&key)?;
            let app = state.app(idx);
            let p =
                app.asks.placements(offer.host, offer.rack, &offer.room_for(app)).find(|p| p.priority == priority)?;
            Some((idx, p))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn virtual_time_is_gps_over_the_stages_in_the_reference() {
        let mut q = QueueClock { rate: 1.0, ..QueueClock::default() };
        let work = |_: Priority, pending: u32| (pending as f64, false);
        q.update_app(0.0, 1, [(1, 1)].into_iter(), work);
        q.update_app(0.0, 2, [(1, 2)].into_iter(), work);
        // Two stages share R = 1: V reaches the first deadline (1) at t = 2, then runs alone.
        q.advance(2.0);
        assert_eq!((q.v, q.fluid.len()), (1.0, 1));
        q.advance(2.5);
        assert_eq!(q.v, 1.5);
        // A stage arriving at t = 3 starts at V = 2, not at a finish tag of its app.
        q.update_app(3.0, 1, [(1, 0), (2, 1)].into_iter(), work);
        assert_eq!((q.v, q.stages[&1][1].deadline), (2.0, 3.0));
        // Emptied stages leave the ready set; the new stage of app 1 now comes after app 2's.
        let ready: Vec<_> = q.ready.iter().map(|e| (e.1, e.2)).collect();
        assert_eq!(ready, [(2, 1), (1, 2)]);
    }
}
