//! The cluster state the scheduler keeps: nodes, queues, applications and live allocations.
//!
//! Policies read it through `&ClusterState`; only [`crate::scheduler::Scheduler`] mutates it, so
//! the bookkeeping (usage per queue and app, free space per node) has one owner.

use crate::acl::QueueAcls;
use crate::allocation_table::AllocationTable;
use crate::config::{self, ParentConfig, QueueConfig};
use crate::ids::{AllocationId, AppIdx, AppKey, LocationId, NodeId, Priority, QueueIdx};
use crate::pending_apps::PendingApps;
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
    /// The runnable apps with pending asks that have no container yet, and those that have:
    /// what app policies search for a container to start ([`ClusterState::reindex_app`]).
    pub unstarted_pending: PendingApps,
    pub started_pending: PendingApps,
    /// Id of the latest allocation the queue received (0: none), for tie-breaking.
    pub last_served: AllocationId,
    /// The parent queue, [`ROOT_PARENT`] for a queue directly under the root.
    pub parent: ParentIdx,
    /// The ancestors below the root, top-down (empty directly under the root): the levels at
    /// which queues are compared, and the totals a change of this queue rolls up to.
    pub path: Vec<ParentIdx>,
}

/// Index of a parent queue in [`ClusterState::parents`].
pub type ParentIdx = usize;
/// The root's index in [`ClusterState::parents`].
pub const ROOT_PARENT: ParentIdx = 0;

/// A parent queue: it takes no apps; it holds the totals of the leaves below it, kept up to
/// date as they change (O(depth) per change), so comparing it with its siblings is O(1).
#[derive(Clone, Debug)]
pub struct ParentQueue {
    pub config: ParentConfig,
    /// `None` for the root.
    pub parent: Option<ParentIdx>,
    pub usage: Resources,
    pub running_containers: u64,
    pub pending_containers: u64,
    pub pending_resources: Resources,
    /// Runnable apps below it, for its `<maxRunningApps>`.
    pub runnable_apps: u32,
}

impl ParentQueue {
    /// Dominant share of the cluster divided by weight, as for a leaf.
    #[inline]
    pub fn weighted_dominant_share(&self, cluster: &Resources) -> f64 {
        self.usage.dominant_share(cluster) / self.config.weight
    }

    pub fn active(&self) -> bool {
        self.running_containers > 0 || self.pending_containers > 0
    }
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
            unstarted_pending: PendingApps::default(),
            started_pending: PendingApps::default(),
            last_served: 0,
            parent: ROOT_PARENT,
            path: Vec::new(),
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

    fn pending_apps_mut(&mut self, started: bool) -> &mut PendingApps {
        if started {
            &mut self.started_pending
        } else {
            &mut self.unstarted_pending
        }
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

/// Weighted DRF fair shares down the tree: at each level a queue's part of its parent's share
/// is its weight over the weights of its siblings with demand, or over all its visible siblings
/// when none has demand; a queue's fair share is the product of its parts from the root down.
/// A flat file gives a leaf's weight over the leaves' weights, as before the tree.
#[derive(Clone, Debug)]
pub struct FairShares {
    /// Per parent: (weight of its children with demand, weight of its visible children).
    children: Vec<(f64, f64)>,
    /// Per parent: its fair share of the cluster.
    parents: Vec<f64>,
}

impl FairShares {
    pub fn of(state: &ClusterState) -> FairShares {
        let n = state.parents.len();
        let mut children = vec![(0.0, 0.0); n];
        // A parent is visible while it is configured or a visible leaf hangs below it.
        let mut visible = vec![false; n];
        for (pi, p) in state.parents.iter().enumerate() {
            visible[pi] |= state.parent_index.get(&p.config.name) == Some(&pi);
        }
        for q in state.queues.iter().filter(|q| !q.removed && q.visible()) {
            visible[q.parent] = true;
            for &p in &q.path {
                visible[p] = true;
            }
            let c = &mut children[q.parent];
            c.1 += q.config.weight;
            if q.active() {
                c.0 += q.config.weight;
            }
        }
        for (pi, p) in state.parents.iter().enumerate() {
            if let (Some(up), true) = (p.parent, visible[pi]) {
                children[up].1 += p.config.weight;
                if p.active() {
                    children[up].0 += p.config.weight;
                }
            }
        }
        // Parents come before their children in the table.
        let mut parents = vec![1.0; n];
        for (pi, p) in state.parents.iter().enumerate() {
            if let Some(up) = p.parent {
                parents[pi] = parents[up] * Self::part(children[up], p.config.weight, p.active());
            }
        }
        FairShares { children, parents }
    }

    fn part((active_weight, all_weight): (f64, f64), weight: f64, active: bool) -> f64 {
        match (active_weight > 0.0, active) {
            (true, true) => weight / active_weight,
            (true, false) => 0.0,
            (false, _) if all_weight > 0.0 => weight / all_weight,
            (false, _) => 0.0,
        }
    }

    /// The fair share of visible leaf `q`.
    pub fn of_queue(&self, q: &Queue) -> f64 {
        self.parents[q.parent] * Self::part(self.children[q.parent], q.config.weight, q.active())
    }

    /// The fair share of parent `p`.
    pub fn of_parent(&self, p: ParentIdx) -> f64 {
        self.parents[p]
    }
}

#[derive(Clone, Debug)]
pub struct App {
    pub key: AppKey,
    pub queue: QueueIdx,
    pub user: String,
    /// Monotonic submission sequence number, the FIFO order among apps of one priority.
    pub seq: u64,
    /// YARN's application priority (higher first in its queue's app order; 0 by default).
    pub priority: i32,
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
    /// Its entry in its queue's pending apps: whether it had started, and its smallest pending
    /// capability; `None` while not runnable or with nothing pending.
    pub indexed: Option<(bool, Resources)>,
    /// Ids of its live containers, in no order; each allocation knows its place here
    /// ([`Allocation::slot`]), so freeing one is O(1) and app removal frees exactly these.
    pub allocation_ids: Vec<AllocationId>,
}

impl App {
    /// Its place in its queue's app order.
    pub fn order_key(&self) -> crate::pending_apps::OrderKey {
        (std::cmp::Reverse(self.priority), self.seq)
    }
}

#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Allocation {
    pub app: AppIdx,
    pub node: NodeId,
    pub priority: Priority,
    pub resources: Resources,
    /// The stage task the container counts for when its app reserves slots.
    pub stage_task: Option<crate::reservation::StageTask>,
    /// Its place in its app's [`App::allocation_ids`].
    pub slot: u32,
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
    /// The leaf queues, which take apps.
    pub queues: Vec<Queue>,
    pub queue_index: HashMap<String, QueueIdx>,
    /// The parent queues, the root first and each before its children; rebuilt on every
    /// configuration change.
    pub parents: Vec<ParentQueue>,
    pub parent_index: HashMap<String, ParentIdx>,
    pub apps: Vec<Option<App>>,
    /// Integer keys from the RM: the fast non-cryptographic hash is safe and hot-path cheap.
    pub app_index: FxHashMap<AppKey, AppIdx>,
    free_app_indices: Vec<AppIdx>,
    free_queue_indices: Vec<QueueIdx>,
    pub allocations: AllocationTable<Allocation>,
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

    /// Whether any leaf sits below a parent other than the root.
    #[inline]
    pub fn hierarchical(&self) -> bool {
        self.parents.len() > 1
    }

    /// Replaces the parent queues (the root with `root_acls`, then `parents`, each after its own
    /// parent), hangs every leaf under its parent again (a leaf whose parent is gone hangs under
    /// the root) and recounts the parents' totals from the leaves.
    pub(crate) fn set_parents(&mut self, root_acls: &QueueAcls, parents: &[ParentConfig]) {
        let root = ParentConfig {
            name: config::ROOT.into(),
            weight: 1.0,
            acls: root_acls.clone(),
            app_policy: None,
            limits: crate::limits::QueueLimits::NONE,
        };
        self.parents.clear();
        self.parent_index.clear();
        for c in std::iter::once(&root).chain(parents) {
            let up = self.parent_index.get(config::parent_queue_name(&c.name)).copied();
            let idx = self.parents.len();
            self.parents.push(ParentQueue {
                config: c.clone(),
                parent: if idx == ROOT_PARENT { None } else { Some(up.unwrap_or(ROOT_PARENT)) },
                usage: Resources::ZERO,
                running_containers: 0,
                pending_containers: 0,
                pending_resources: Resources::ZERO,
                runnable_apps: 0,
            });
            self.parent_index.insert(c.name.clone(), idx);
        }
        for qi in 0..self.queues.len() {
            if self.queues[qi].removed {
                continue;
            }
            self.attach(qi);
            let q = &self.queues[qi];
            let (usage, running, pending, pending_resources) =
                (q.usage, q.running_containers, q.pending_containers, q.pending_resources);
            let runnable = q.apps.len() as u32;
            self.roll_up(qi, |p| {
                p.usage += usage;
                p.running_containers += running;
                p.pending_containers += pending;
                p.pending_resources += pending_resources;
                p.runnable_apps += runnable;
            });
        }
    }

    /// Hangs leaf `qi` under the parent its name gives (the root when there is no such parent).
    fn attach(&mut self, qi: QueueIdx) {
        let parent = self
            .parent_index
            .get(config::parent_queue_name(&self.queues[qi].config.name))
            .copied()
            .unwrap_or(ROOT_PARENT);
        let q = &mut self.queues[qi];
        q.parent = parent;
        q.path.clear();
        let mut at = Some(parent);
        while let Some(p) = at.filter(|&p| p != ROOT_PARENT) {
            q.path.push(p);
            at = self.parents[p].parent;
        }
        q.path.reverse();
    }

    /// Applies `f` to every ancestor of leaf `qi`, the root included: the one way a change of a
    /// leaf's totals reaches its parents.
    #[inline]
    pub(crate) fn roll_up(&mut self, qi: QueueIdx, f: impl Fn(&mut ParentQueue)) {
        for &p in &self.queues[qi].path {
            f(&mut self.parents[p]);
        }
        f(&mut self.parents[ROOT_PARENT]);
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
        if !self.parents.is_empty() {
            self.attach(idx);
        }
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
        if let Some((started, _)) = app.indexed {
            self.queues[app.queue].pending_apps_mut(started).remove(app.order_key());
        }
        self.app_index.remove(&app.key);
        self.free_app_indices.push(idx);
        app
    }

    /// Puts app `idx` where it belongs in its queue's pending apps: a runnable app with pending
    /// asks among the started or the unstarted ones, under its smallest pending capability; any
    /// other app in neither. Call after anything changes its asks, `started` or `runnable`.
    #[inline]
    pub(crate) fn reindex_app(&mut self, idx: AppIdx) {
        let app = self.app(idx);
        let want = if app.runnable { app.asks.min_capability().map(|m| (app.started, m)) } else { None };
        if want == app.indexed {
            return;
        }
        let (qi, key, was) = (app.queue, app.order_key(), app.indexed);
        let q = &mut self.queues[qi];
        if let Some((started, _)) = was {
            q.pending_apps_mut(started).remove(key);
        }
        if let Some((started, smallest)) = want {
            q.pending_apps_mut(started).insert(key, idx, smallest);
        }
        self.app_mut(idx).indexed = want;
    }

    /// Sets app `idx`'s priority and moves it to its new place in its queue's pending apps.
    pub(crate) fn set_app_priority(&mut self, idx: AppIdx, priority: i32) {
        let app = self.app(idx);
        let (qi, old, indexed) = (app.queue, app.order_key(), app.indexed);
        self.app_mut(idx).priority = priority;
        if let Some((started, smallest)) = indexed {
            let new = self.app(idx).order_key();
            let pending = self.queues[qi].pending_apps_mut(started);
            pending.remove(old);
            pending.insert(new, idx, smallest);
        }
    }

    /// Books allocation `id` under its app, in the app's list of ids.
    #[inline]
    pub(crate) fn insert_allocation(&mut self, id: AllocationId, mut a: Allocation) {
        let ids = &mut self.apps[a.app].as_mut().expect("app index refers to a live app").allocation_ids;
        a.slot = ids.len() as u32;
        ids.push(id);
        self.allocations.insert(id, a);
    }

    /// Frees allocation `id` from the table and its app's list (the list's last id takes its
    /// place); returns it, or `None` when the id is unknown.
    #[inline]
    pub(crate) fn remove_allocation(&mut self, id: AllocationId) -> Option<Allocation> {
        let a = self.allocations.remove(&id)?;
        let ids = &mut self.apps[a.app].as_mut().expect("app index refers to a live app").allocation_ids;
        ids.swap_remove(a.slot as usize);
        if let Some(&moved) = ids.get(a.slot as usize) {
            self.allocations.get_mut(&moved).expect("an app lists only live allocations").slot = a.slot;
        }
        Some(a)
    }

    /// Apps currently registered.
    pub fn app_count(&self) -> usize {
        self.app_index.len()
    }
}
