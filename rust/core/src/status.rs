//! Queue status as the RM shows it (`yarn queue -status`, REST, web UI), as serialisable data.

use crate::resource::Resources;
use crate::scheduler::Scheduler;
use serde::Serialize;

#[derive(Debug, Serialize, PartialEq)]
pub struct ResourceView {
    pub memory_mb: i64,
    pub vcores: i64,
}

impl From<Resources> for ResourceView {
    fn from(r: Resources) -> Self {
        ResourceView { memory_mb: r.memory_mb(), vcores: r.vcores() }
    }
}

#[derive(Debug, Serialize)]
pub struct QueueStatus {
    pub name: String,
    pub weight: f64,
    pub retired: bool,
    pub apps: usize,
    pub running_containers: u64,
    pub pending_containers: u64,
    pub used: ResourceView,
    pub pending: ResourceView,
    /// Share of the cluster in the queue's dominant resource.
    pub dominant_share: f64,
    /// Weighted DRF fair share: the queue's weight over the weights of queues with demand
    /// (running or pending), or over all live queues when none has demand.
    pub fair_share: f64,
}

#[derive(Debug, Serialize)]
pub struct SchedulerStatus {
    pub policy: &'static str,
    pub nodes: usize,
    pub cluster: ResourceView,
    pub used: ResourceView,
    pub apps: usize,
    pub queues: Vec<QueueStatus>,
}

impl SchedulerStatus {
    pub fn of(scheduler: &Scheduler) -> SchedulerStatus {
        let state = scheduler.state();
        let visible = |q: &&crate::state::Queue| !q.retired || !q.apps.is_empty();
        let active = |q: &&crate::state::Queue| q.running_containers > 0 || q.pending_containers > 0;
        let active_weight: f64 = state.queues.iter().filter(visible).filter(active).map(|q| q.weight).sum();
        let all_weight: f64 = state.queues.iter().filter(visible).map(|q| q.weight).sum();
        let queues = state
            .queues
            .iter()
            .filter(visible)
            .map(|q| {
                let fair_share = if active_weight > 0.0 {
                    if active(&q) { q.weight / active_weight } else { 0.0 }
                } else {
                    q.weight / all_weight
                };
                QueueStatus {
                    name: q.name.clone(),
                    weight: q.weight,
                    retired: q.retired,
                    apps: q.apps.len(),
                    running_containers: q.running_containers,
                    pending_containers: q.pending_containers,
                    used: q.usage.into(),
                    pending: q.pending_resources.into(),
                    dominant_share: q.usage.dominant_share(&state.capacity),
                    fair_share,
                }
            })
            .collect();
        let used = state.queues.iter().fold(Resources::ZERO, |acc, q| acc + q.usage);
        SchedulerStatus {
            policy: scheduler.policy_name(),
            nodes: state.node_count,
            cluster: state.capacity.into(),
            used: used.into(),
            apps: state.app_count(),
            queues,
        }
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("status serialises")
    }
}
