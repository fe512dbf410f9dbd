//! Queue status as the RM shows it (`yarn queue -status`, REST, web UI), as serialisable data.

use crate::acl::QueueAcls;
use crate::policy::BurstView;
use crate::resource::Resources;
use crate::scheduler::Scheduler;
use crate::state::FairShares;
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
    /// `tq` or `lq`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub weight: f64,
    pub owner: Option<String>,
    pub retired: bool,
    /// Whether the queue takes applications (false once admission control rejected it).
    pub admitted: bool,
    /// The policy's class label (BoPF: `hard`, `soft`, `elastic`; `elastic` under other
    /// policies; `rejected`).
    pub class: &'static str,
    /// Why admission control chose the class, with the numbers.
    pub admission_reason: String,
    /// Rate guaranteed while a burst is on (H and S queues).
    pub guaranteed: Option<ResourceView>,
    pub burst: Option<BurstView>,
    pub apps: usize,
    pub running_containers: u64,
    pub pending_containers: u64,
    pub used: ResourceView,
    pub pending: ResourceView,
    /// Share of the cluster in the queue's dominant resource.
    pub dominant_share: f64,
    /// Average dominant share since the queue was created.
    pub long_term_share: f64,
    /// Weighted DRF fair share: the queue's weight over the weights of queues with demand
    /// (running or pending), or over all live queues when none has demand.
    pub fair_share: f64,
    /// Slot reservation of the queue's apps that hold or held slots, with the Eq. (4)
    /// utilization bound of each.
    pub reservations: Vec<crate::holds::AppReservationView>,
    /// The ACLs the queue's definition gives (null where it gives none).
    pub acls: QueueAcls,
}

#[derive(Debug, Serialize)]
pub struct SchedulerStatus {
    pub policy: &'static str,
    pub app_policy: &'static str,
    /// The app policy's report on its decisions, when it keeps one (Carbyne: containers started
    /// within jobs' shares and from the leftover).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub app_policy_view: Option<serde_json::Value>,
    pub nodes: usize,
    pub cluster: ResourceView,
    pub used: ResourceView,
    pub apps: usize,
    /// When the scheduler next needs a call although no event arrives (scheduler ms).
    pub next_call_ms: Option<i64>,
    /// The root's ACLs from the allocation file, which every queue inherits.
    pub root_acls: QueueAcls,
    pub queues: Vec<QueueStatus>,
}

impl SchedulerStatus {
    pub fn of(scheduler: &Scheduler) -> SchedulerStatus {
        let state = scheduler.state();
        let fair = FairShares::of(state);
        let queues = state
            .queues
            .iter()
            .enumerate()
            .filter(|(_, q)| q.visible())
            .map(|(i, q)| {
                let view = scheduler.queue_view(i);
                QueueStatus {
                    name: q.name().to_string(),
                    kind: if q.config.is_latency_sensitive() { "lq" } else { "tq" },
                    weight: q.config.weight,
                    owner: q.config.owner.clone(),
                    retired: q.retired,
                    admitted: view.admission.admitted,
                    class: view.admission.class,
                    admission_reason: view.admission.reason,
                    guaranteed: view.guaranteed_rate.map(Into::into),
                    burst: view.burst,
                    apps: q.apps.len(),
                    running_containers: q.running_containers,
                    pending_containers: q.pending_containers,
                    used: q.usage.into(),
                    pending: q.pending_resources.into(),
                    dominant_share: q.usage.dominant_share(&state.capacity),
                    long_term_share: q.long_term_dominant_share(&state.capacity, state.now_ms),
                    fair_share: fair.of_queue(q),
                    reservations: q.apps.iter().filter_map(|&s| scheduler.reservation_view(state.app(s).key)).collect(),
                    acls: q.config.acls.clone(),
                }
            })
            .collect();
        let used = state.queues.iter().fold(Resources::ZERO, |acc, q| acc + q.usage);
        SchedulerStatus {
            policy: scheduler.policy_name(),
            app_policy: scheduler.app_policy_name(),
            app_policy_view: scheduler.app_policy_view(),
            nodes: state.node_count,
            cluster: state.capacity.into(),
            used: used.into(),
            apps: state.app_count(),
            next_call_ms: scheduler.next_call_ms(),
            root_acls: scheduler.queue_file().root_acls.clone(),
            queues,
        }
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("status serialises")
    }
}
