//! Queue status as the RM shows it (`yarn queue -status`, REST, web UI), as serialisable data.

use crate::acl::QueueAcls;
use crate::policy::BurstView;
use crate::resource::{ResourceKind, Resources};
use crate::scheduler::Scheduler;
use crate::state::{ClusterState, FairShares, ParentIdx, ParentQueue, Queue, ROOT_PARENT};
use serde::Serialize;

/// YARN's dimensions of a vector; GPUs and FPGAs only where there are any, as a cluster without
/// them shows none.
#[derive(Debug, Serialize, PartialEq)]
pub struct ResourceView {
    pub memory_mb: i64,
    pub vcores: i64,
    #[serde(skip_serializing_if = "is_zero")]
    pub gpus: i64,
    #[serde(skip_serializing_if = "is_zero")]
    pub fpgas: i64,
}

fn is_zero(v: &i64) -> bool {
    *v == 0
}

impl From<Resources> for ResourceView {
    fn from(r: Resources) -> Self {
        ResourceView {
            memory_mb: r.memory_mb(),
            vcores: r.vcores(),
            gpus: r.get(ResourceKind::Gpus),
            fpgas: r.get(ResourceKind::Fpgas),
        }
    }
}

#[derive(Debug, Serialize)]
pub struct QueueStatus {
    /// Full name, `root.eng.etl`.
    pub name: String,
    /// The parent's full name (`root` for a queue directly under the root).
    pub parent: String,
    /// A leaf takes apps; a parent holds the totals of the leaves below it.
    pub leaf: bool,
    /// `tq` or `lq` for a leaf, `parent` for a parent.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// The app policy ordering a leaf's apps; for a parent, the one its leaves inherit (null:
    /// the file's default).
    pub app_policy: Option<&'static str>,
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
    /// Runnable apps: those that may get containers.
    pub apps: usize,
    /// Apps held back by a running-apps limit (the queue's, a parent's or their user's); they
    /// become runnable in submission order as running ones finish.
    pub waiting_apps: usize,
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
    /// The application lifetimes the queue's definition gives (null where it gives none).
    pub lifetime: crate::config::AppLifetime,
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
    /// The leaves, then the parent queues below the root (each before its children).
    pub queues: Vec<QueueStatus>,
}

/// A parent queue's entry: the totals of its leaves, its weight, fair share and ACLs.
fn parent_status(state: &ClusterState, fair: &FairShares, pi: ParentIdx, p: &ParentQueue) -> QueueStatus {
    let below = |q: &&Queue| q.visible() && (q.parent == pi || q.path.contains(&pi));
    let leaves: Vec<&Queue> = state.queues.iter().filter(below).collect();
    QueueStatus {
        name: p.config.name.clone(),
        parent: state.parents[p.parent.unwrap_or(ROOT_PARENT)].config.name.clone(),
        leaf: false,
        kind: "parent",
        app_policy: p.config.app_policy.map(|k| k.name()),
        weight: p.config.weight,
        owner: None,
        retired: false,
        admitted: true,
        class: crate::policy::Admission::ELASTIC,
        admission_reason: String::new(),
        guaranteed: None,
        burst: None,
        apps: leaves.iter().map(|q| q.apps.len()).sum(),
        waiting_apps: leaves.iter().map(|q| q.waiting.len()).sum(),
        running_containers: p.running_containers,
        pending_containers: p.pending_containers,
        used: p.usage.into(),
        pending: p.pending_resources.into(),
        dominant_share: p.usage.dominant_share(&state.capacity),
        long_term_share: long_term_share(state, &leaves),
        fair_share: fair.of_parent(pi),
        reservations: Vec::new(),
        acls: p.config.acls.clone(),
        lifetime: crate::config::AppLifetime::default(),
    }
}

/// The average dominant share of `leaves` together since the earliest of them was created.
fn long_term_share(state: &ClusterState, leaves: &[&Queue]) -> f64 {
    let Some(since) = leaves.iter().map(|q| q.created_ms).min() else { return 0.0 };
    let span = (state.now_ms - since) as f64;
    let mut integral = [0.0; crate::resource::DIMS];
    for q in leaves {
        for (sum, v) in integral.iter_mut().zip(q.usage_integral_at(state.now_ms)) {
            *sum += v;
        }
    }
    let dims = integral.iter().zip(state.capacity.0.iter()).filter(|(_, c)| **c > 0 && span > 0.0);
    dims.map(|(i, c)| i / (*c as f64 * span)).fold(0.0, f64::max)
}

impl SchedulerStatus {
    pub fn of(scheduler: &Scheduler) -> SchedulerStatus {
        let state = scheduler.state();
        let fair = FairShares::of(state);
        let mut queues: Vec<QueueStatus> = state
            .queues
            .iter()
            .enumerate()
            .filter(|(_, q)| q.visible())
            .map(|(i, q)| {
                let view = scheduler.queue_view(i);
                QueueStatus {
                    name: q.name().to_string(),
                    parent: state.parents[q.parent].config.name.clone(),
                    leaf: true,
                    kind: if q.config.is_latency_sensitive() { "lq" } else { "tq" },
                    app_policy: Some(scheduler.queue_app_policy_name(i)),
                    weight: q.config.weight,
                    owner: q.config.owner.clone(),
                    retired: q.retired,
                    admitted: view.admission.admitted,
                    class: view.admission.class,
                    admission_reason: view.admission.reason,
                    guaranteed: view.guaranteed_rate.map(Into::into),
                    burst: view.burst,
                    apps: q.apps.len(),
                    waiting_apps: q.waiting.len(),
                    running_containers: q.running_containers,
                    pending_containers: q.pending_containers,
                    used: q.usage.into(),
                    pending: q.pending_resources.into(),
                    dominant_share: q.usage.dominant_share(&state.capacity),
                    long_term_share: q.long_term_dominant_share(&state.capacity, state.now_ms),
                    fair_share: fair.of_queue(q),
                    reservations: q.apps.iter().filter_map(|&s| scheduler.reservation_view(state.app(s).key)).collect(),
                    acls: q.config.acls.clone(),
                    lifetime: q.config.lifetime,
                }
            })
            .collect();
        queues.extend(state.parents.iter().enumerate().skip(1).map(|(pi, p)| parent_status(state, &fair, pi, p)));
        let used = state.parents[crate::state::ROOT_PARENT].usage;
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
