//! The cluster state the scheduler keeps: nodes, queues, applications and live allocations.
//!
//! Policies read it through `&ClusterState`; only [`crate::scheduler::Scheduler`] mutates it, so
//! the bookkeeping (usage per queue and app, free space per node) has one owner.

use crate::config::QueueConfig;
use crate::ids::{AllocationId, AppIdx, AppKey, LocationId, NodeId, Priority, QueueIdx};
use crate::request::AskTable;
use crate::resource::{Resources, DIMS};
use rustc_hash::FxHashMap;
use std::collections::HashMap;

#[derive(Clone, Debug)]
pub struct Node {
    pub id: NodeId,
    pub host: LocationId,
    pub rack: LocationId,
    pub capacity: Resources,
    pub allocated: Resources,
    pub containers: u32,
}

#[derive(Clone, Debug)]
pub struct Queue {
    /// Name, weight, kind and owner as configured (or as registered at run time).
    pub config: QueueConfig,
    /// Dropped from the configuration: takes no new apps, disappears from status when empty.
    pub retired: bool,
    /// Retired and emptied: the slot is free for the next new queue and holds no queue.
    pub removed: bool,
    pub usage: Resources,
    /// Integral of `usage` over time in resource-milliseconds, up to `integrated_until_ms`:
    /// the basis of the long-term share that BoPF's fairness guarantee is stated in.
    pub usage_integral: [f64; DIMS],
    pub integrated_until_ms: i64,
    /// When the queue was created, or when time was first seen after that.
    pub created_ms: i64,
    pub running_containers: u64,
    pub pending_containers: u64,
    pub pending_resources: Resources,
    /// Runnable apps in submission order (FIFO): the ones the app policy chooses among.
    pub apps: Vec<AppIdx>,
    /// Accepted apps that a running-apps limit holds back, in submission order: they get no
    /// containers until they become runnable ([`crate::limits`]).
    pub waiting: Vec<AppIdx>,
    /// Resources of the ApplicationMasters of the queue's apps (each app's first container),
    /// for the AM share check.
    pub am_usage: Resources,
    /// Apps that have no container yet, i.e. are waiting for their ApplicationMaster.
    pub apps_waiting_for_am: u32,
    /// Id of the latest allocation the queue received (0: none), for tie-breaking.
    pub last_served: AllocationId,
}

impl Queue {
    pub fn new(config: &QueueConfig, now_ms: i64) -> Queue {
        Queue {
            config: config.clone(),
            retired: false,
            removed: false,
            usage: Resources::ZERO,
            usage_integral: [0.0; DIMS],
            integrated_until_ms: now_ms,
            created_ms: now_ms,
            running_containers: 0,
            pending_containers: 0,
            pending_resources: Resources::ZERO,
            apps: Vec::new(),
            waiting: Vec::new(),
            am_usage: Resources::ZERO,
            apps_waiting_for_am: 0,
            last_served: 0,
        }
    }

    /// Dominant share of the cluster divided by weight: the quantity weighted DRF equalises.
    #[inline]
    pub fn weighted_dominant_share(&self, cluster: &Resources) -> f64 {
        self.usage.dominant_share(cluster) / self.config.weight
    }

    pub fn name(&self) -> &str {
        &self.config.name
    }

    /// Accumulates usage up to `now_ms`; call before `usage` changes.
    #[inline]
    pub fn integrate(&mut self, now_ms: i64) {
        let dt = now_ms - self.integrated_until_ms;
        if dt > 0 {
            for (acc, u) in self.usage_integral.iter_mut().zip(self.usage.0.iter()) {
                *acc += *u as f64 * dt as f64;
            }
            self.integrated_until_ms = now_ms;
        }
    }

    /// Usage integral through `now_ms` without mutating.
    pub fn usage_integral_at(&self, now_ms: i64) -> [f64; DIMS] {
        let dt = (now_ms - self.integrated_until_ms).max(0) as f64;
        let mut out = self.usage_integral;
        for (o, u) in out.iter_mut().zip(self.usage.0.iter()) {
            *o += *u as f64 * dt;
        }
        out
    }

    /// Shown in status and history: live, or retired with apps still running.
    pub fn visible(&self) -> bool {
        !self.retired || self.has_apps()
    }

    /// Holds apps, runnable or waiting.
    pub fn has_apps(&self) -> bool {
        !self.apps.is_empty() || !self.waiting.is_empty()
    }

    /// Has demand: running or pending containers.
    pub fn active(&self) -> bool {
        self.running_containers > 0 || self.pending_containers > 0
    }

    /// Average dominant share since the queue was created: `max_k (∫ usage_k) / (C_k · T)`,
    /// with today's capacity `C`. Zero before any time has passed.
    pub fn long_term_dominant_share(&self, cluster: &Resources, now_ms: i64) -> f64 {
        let span = (now_ms - self.created_ms) as f64;
        if span <= 0.0 {
            return 0.0;
        }
        let integral = self.usage_integral_at(now_ms);
        let mut share = 0.0f64;
        for (i, c) in cluster.0.iter().enumerate() {
            if *c > 0 {
                share = share.max(integral[i] / (*c as f64 * span));
            }
        }
        share
    }
}

/// Weighted DRF fair shares of the visible queues: a queue's weight over the weights of the
/// queues with demand, or over all visible queues when none has demand.
#[derive(Copy, Clone, Debug)]
pub struct FairShares {
    active_weight: f64,
    all_weight: f64,
}

impl FairShares {
    pub fn of(state: &ClusterState) -> FairShares {
        let (mut active_weight, mut all_weight) = (0.0, 0.0);
        for q in state.queues.iter().filter(|q| q.visible()) {
            all_weight += q.config.weight;
            if q.active() {
                active_weight += q.config.weight;
            }
        }
        FairShares { active_weight, all_weight }
    }

    /// The fair share of visible queue `q`.
    pub fn of_queue(&self, q: &Queue) -> f64 {
        match (self.active_weight > 0.0, q.active()) {
            (true, true) => q.config.weight / self.active_weight,
            (true, false) => 0.0,
            (false, _) => q.config.weight / self.all_weight,
        }
    }
}

#[derive(Clone, Debug)]
pub struct App {
    pub key: AppKey,
    pub queue: QueueIdx,
    pub user: String,
    /// Monotonic submission sequence number, the FIFO order.
    pub seq: u64,
    pub asks: AskTable,
    pub usage: Resources,
    pub running_containers: u64,
    /// Has received its first container (the ApplicationMaster's, under YARN).
    pub started: bool,
    /// Within the running-apps limits: in its queue's `apps`, else in its `waiting`.
    pub runnable: bool,
    /// Its first container's resources (its ApplicationMaster's), counted in its queue's
    /// `am_usage` while the app lives.
    pub am_resources: Resources,
    /// The DAG and progress its ApplicationMaster described, if any (see [`crate::hints`]).
    pub hints: Option<std::sync::Arc<crate::hints::AppHints>>,
}

#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Allocation {
    pub app: AppIdx,
    pub node: NodeId,
    pub priority: Priority,
    pub resources: Resources,
    /// The stage task the container counts for when its app reserves slots.
    pub stage_task: Option<crate::reservation::StageTask>,
}

/// Everything the scheduler tracks. Policies get read access.
#[derive(Debug, Default)]
pub struct ClusterState {
    /// Node slots, found by id through `node_slots`: ids may be sparse and large without the
    /// table growing past the number of nodes registered at once.
    pub nodes: Vec<Option<Node>>,
    node_slots: FxHashMap<NodeId, usize>,
    free_node_slots: Vec<usize>,
    pub node_count: usize,
    /// Sum of node capacities.
    pub capacity: Resources,
    pub queues: Vec<Queue>,
    pub queue_index: HashMap<String, QueueIdx>,
    pub apps: Vec<Option<App>>,
    /// Integer keys from the RM: the fast non-cryptographic hash is safe and hot-path cheap.
    pub app_index: FxHashMap<AppKey, AppIdx>,
    free_app_indices: Vec<AppIdx>,
    free_queue_indices: Vec<QueueIdx>,
    pub allocations: FxHashMap<AllocationId, Allocation>,
    pub next_allocation_id: AllocationId,
    pub next_app_seq: u64,
    /// Milliseconds, from the latest heartbeat.
    pub now_ms: i64,
}

impl ClusterState {
    pub fn node(&self, id: NodeId) -> Option<&Node> {
        self.node_slots.get(&id).and_then(|&s| self.nodes[s].as_ref())
    }

    pub fn node_mut(&mut self, id: NodeId) -> Option<&mut Node> {
        self.node_slots.get(&id).and_then(|&s| self.nodes[s].as_mut())
    }

    /// Adds a node whose id is not registered, in a free slot when there is one.
    pub(crate) fn insert_node(&mut self, node: Node) {
        let id = node.id;
        let slot = match self.free_node_slots.pop() {
            Some(s) => {
                self.nodes[s] = Some(node);
                s
            }
            None => {
                self.nodes.push(Some(node));
                self.nodes.len() - 1
            }
        };
        self.node_slots.insert(id, slot);
    }

    pub(crate) fn take_node(&mut self, id: NodeId) -> Option<Node> {
        let slot = self.node_slots.remove(&id)?;
        self.free_node_slots.push(slot);
        self.nodes[slot].take()
    }

    pub fn app(&self, idx: AppIdx) -> &App {
        self.apps[idx].as_ref().expect("app index refers to a live app")
    }

    pub fn app_mut(&mut self, idx: AppIdx) -> &mut App {
        self.apps[idx].as_mut().expect("app index refers to a live app")
    }

    pub fn app_by_key(&self, key: AppKey) -> Option<&App> {
        self.app_index.get(&key).map(|&s| self.app(s))
    }

    pub fn queue_by_name(&self, name: &str) -> Option<&Queue> {
        self.queue_index.get(name).map(|&i| &self.queues[i])
    }

    /// Adds a queue under its name, in the slot of a removed one when there is one.
    pub(crate) fn insert_queue(&mut self, config: &QueueConfig, now_ms: i64) -> QueueIdx {
        let queue = Queue::new(config, now_ms);
        let idx = match self.free_queue_indices.pop() {
            Some(i) => {
                self.queues[i] = queue;
                i
            }
            None => {
                self.queues.push(queue);
                self.queues.len() - 1
            }
        };
        self.queue_index.insert(config.name.clone(), idx);
        idx
    }

    /// Frees the slot of a retired queue that has no apps left, so the table (and every scan of
    /// it) is as large as the most queues alive at once, not every queue ever registered.
    pub(crate) fn remove_queue(&mut self, idx: QueueIdx) {
        let q = &mut self.queues[idx];
        debug_assert!(q.retired && !q.has_apps() && !q.removed, "only an empty retired queue is removed");
        q.removed = true;
        self.queue_index.remove(&q.config.name);
        self.free_queue_indices.push(idx);
    }

    pub(crate) fn insert_app(&mut self, app: App) -> AppIdx {
        let key = app.key;
        let idx = match self.free_app_indices.pop() {
            Some(s) => {
                self.apps[s] = Some(app);
                s
            }
            None => {
                self.apps.push(Some(app));
                self.apps.len() - 1
            }
        };
        self.app_index.insert(key, idx);
        idx
    }

    pub(crate) fn take_app(&mut self, idx: AppIdx) -> App {
        let app = self.apps[idx].take().expect("app index refers to a live app");
        self.app_index.remove(&app.key);
        self.free_app_indices.push(idx);
        app
    }

    /// Apps currently registered.
    pub fn app_count(&self) -> usize {
        self.app_index.len()
    }
}
