//! Scheduling policies as plugins at named extension points, in the spirit of the Kubernetes
//! scheduling framework. The scheduler owns the state and YARN's request semantics; a policy
//! only answers the questions asked at its extension points.
//!
//! Two levels, each a trait: a [`Policy`] orders queues (DRF, strict priority, BoPF) and an
//! [`AppPolicy`] chooses what to start inside the queue that was offered a node (FIFO today).
//!
//! Extension points:
//! - [`AppPolicy::select`]: which app's container, at which priority, starts on the node.
//! - [`Policy::admit`]: a queue joins (configuration load, reload, run-time registration);
//!   the policy sorts it into a class or rejects it.
//! - [`Policy::begin_heartbeat`]: time has advanced; refresh time-driven state.
//! - [`Policy::readmitted_at_ms`]: when the policy last revised its admission decisions itself.
//! - [`Policy::queue_key`]: the order in which queues are offered a node (queue sort).
//! - [`Policy::queue_view`]: what the policy knows about a queue, for status and logs.
//! - [`Policy::next_event_ms`]: when the policy's order next changes by itself.
//! - [`AppPolicy::view`]: what the app policy reports about its decisions, for status.
//! - [`Policy::snapshot`] and [`Policy::restore`]: the policy's durable state, kept across a
//!   rebuild of the scheduler (see [`crate::snapshot`]).

pub mod bopf;
pub mod carbyne;
pub mod cfq;
pub mod drf;
pub mod fifo;
pub mod job_fair;
pub mod sjf;
pub mod strict_priority;
pub mod tetris;
pub mod ujf;
pub mod uwfq;

use crate::config::{AppPolicyKind, PolicyKind, QueueFile};
use crate::error::Result;
use crate::ids::LocationId;
use crate::ids::{AppIdx, NodeId, QueueIdx};
use crate::limits::needy_first;
use crate::request::Placement;
use crate::resource::Resources;
use crate::state::ClusterState;
use serde::Serialize;

/// The outcome of [`Policy::admit`], in terms any policy fills: whether the queue takes
/// applications, and the policy's own name for the class it was sorted into.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Admission {
    pub admitted: bool,
    /// The policy's class label (BoPF: `hard`, `soft` or `elastic`; policies without admission
    /// control: `elastic`), or [`Admission::REJECTED`].
    pub class: &'static str,
    /// Which condition decided, with its numbers; empty for policies without admission control.
    pub reason: String,
}

impl Admission {
    /// The class label of a queue admission control turned away.
    pub const REJECTED: &'static str = "rejected";
    /// The class of a queue served by its plain fair share.
    pub const ELASTIC: &'static str = "elastic";
    /// Every class label a policy gives, to read one back (a history restored from a snapshot,
    /// which refuses labels missing here).
    pub const CLASSES: [&'static str; 4] = ["hard", "soft", Self::ELASTIC, Self::REJECTED];

    /// Admission for policies that take every queue with a plain fair share.
    pub fn elastic() -> Admission {
        Admission { admitted: true, class: Self::ELASTIC, reason: String::new() }
    }

    pub fn rejected(reason: String) -> Admission {
        Admission { admitted: false, class: Self::REJECTED, reason }
    }
}

/// A latency-sensitive queue's current burst, for status.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BurstView {
    /// `idle`, `on` (within the deadline), `catch-up` (past the deadline, declaration not yet
    /// used up) or `beyond-declaration` (declaration used up: served like an Elastic queue).
    pub phase: &'static str,
    pub started_ms: Option<i64>,
    pub deadline_at_ms: Option<i64>,
    /// Resource-seconds consumed in the current burst and the burst's declared demand.
    pub consumed: [f64; crate::resource::DIMS],
    pub demand: crate::resource::Resources,
    pub bursts_started: u64,
    pub bursts_met_deadline: u64,
}

impl BurstView {
    /// Every phase label, to read one back (a history restored from a snapshot, which refuses
    /// labels missing here).
    pub const PHASES: [&'static str; 4] = ["idle", "on", "catch-up", "beyond-declaration"];
}

/// What a policy reports about one queue.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct QueueView {
    pub admission: Admission,
    /// The rate guaranteed during a burst (H and S queues).
    pub guaranteed_rate: Option<crate::resource::Resources>,
    pub burst: Option<BurstView>,
}

pub trait Policy: Send {
    fn name(&self) -> &'static str;

    /// Decides the class of queue `queue` (its config is in `state.queues[queue]`), which was
    /// just added to the state. Queues are admitted in configuration order.
    fn admit(&mut self, _state: &ClusterState, _queue: QueueIdx) -> Admission {
        Admission::elastic()
    }

    /// Forgets queue `queue`, just unregistered: whatever admission committed to it is released,
    /// so the name can be registered again as if new.
    fn remove_queue(&mut self, _state: &ClusterState, _queue: QueueIdx) {}

    /// The class and burst state of a queue.
    fn queue_view(&self, _queue: QueueIdx) -> QueueView {
        QueueView { admission: Admission::elastic(), guaranteed_rate: None, burst: None }
    }

    /// Called once per heartbeat before any assignment.
    fn begin_heartbeat(&mut self, _state: &ClusterState, _now_ms: i64) {}

    /// When the policy last ran admission again for its queues by itself (BoPF does when the
    /// cluster capacity changes), which may have changed classes outside [`Policy::admit`];
    /// `None` when it never did.
    fn readmitted_at_ms(&self) -> Option<i64> {
        None
    }

    /// The next time at which the policy's order changes without any event (a burst deadline
    /// passing, say), so a host can call the scheduler then instead of polling.
    fn next_event_ms(&self) -> Option<i64> {
        None
    }

    /// Queue sort: queues with pending asks are offered the node in increasing key order. A
    /// key may depend only on the queue's own state and on what `begin_heartbeat` fixed, so the
    /// scheduler recomputes it only for the queue that was just served.
    fn queue_key(&self, state: &ClusterState, queue: QueueIdx) -> QueueKey;

    /// Whether [`Policy::queue_key`] depends on nothing but the queue's configuration, usage and
    /// demand and the cluster's capacity (not on time, nor on what `begin_heartbeat` fixed):
    /// then the scheduler keeps the queue order across heartbeats and re-keys only the queues
    /// whose counters changed.
    fn keys_follow_queue_state(&self) -> bool {
        false
    }

    /// The policy's durable state, in its own JSON format, or `None` when it keeps nothing that
    /// the cluster state and the configuration do not give back.
    fn snapshot(&self, _state: &ClusterState) -> Option<serde_json::Value> {
        None
    }

    /// Restores what [`Policy::snapshot`] of the same policy returned, into a policy freshly
    /// built from the allocation file whose queues are admitted (queues registered at run time
    /// are re-registered, and so admitted, after this call). Checks the whole value before
    /// changing anything: on error the policy is as it was.
    fn restore(&mut self, _state: &ClusterState, _value: &serde_json::Value) -> Result<()> {
        Ok(())
    }
}

/// Sort key of a queue: a tier (lower first), then an order within the tier (lower first).
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct QueueKey {
    pub tier: u8,
    pub order: f64,
}

impl QueueKey {
    /// Weighted DRF within `tier`.
    #[inline]
    pub fn drf(state: &ClusterState, queue: QueueIdx, tier: u8) -> QueueKey {
        QueueKey { tier, order: state.queues[queue].weighted_dominant_share(&state.capacity) }
    }
}

impl Eq for QueueKey {}

impl PartialOrd for QueueKey {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for QueueKey {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.tier.cmp(&other.tier).then(self.order.total_cmp(&other.order))
    }
}

/// A leaf's place in the order queues are offered a node, for a tree of queues: its tier
/// first, then level by level from the top the weighted dominant share of its ancestor at that
/// level, then its own order. So at each level DRF picks among siblings with demand by weight
/// and descends to a leaf, as FairScheduler does; a flat file compares (tier, order), as before.
/// At each level a queue below its `<minResources>` goes before its siblings that are not
/// ([`crate::limits::needy_first`]).
///
/// The tier stays first across the whole tree: a queue the policy ranks ahead (strict
/// priority's LQs, BoPF's bursting Hard and Soft LQs) is offered the node before any queue of
/// a later tier wherever both sit, so its ancestors are served first for its containers only,
/// and only while the policy keeps it in that tier (BoPF: up to its guaranteed rate). A priority
/// ranking local to one parent would let a burst wait behind unrelated subtrees, which breaks
/// the deadline admission control promised; its guarantee is bounded by its parent's share at
/// admission instead (see [`crate::policy::bopf`]).
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct PathKey {
    pub tier: u8,
    levels: [f64; crate::config::MAX_QUEUE_DEPTH + 1],
}

impl PathKey {
    /// The path key of leaf `queue` whose own key is `key`.
    #[inline]
    pub fn of(state: &ClusterState, queue: QueueIdx, key: QueueKey) -> PathKey {
        let q = &state.queues[queue];
        let cluster = &state.capacity;
        let mut levels = [0.0; crate::config::MAX_QUEUE_DEPTH + 1];
        for (level, &p) in levels.iter_mut().zip(&q.path) {
            let parent = &state.parents[p];
            let min = parent.config.limits.min_resources.as_ref();
            *level = needy_first(&parent.usage, min, cluster, parent.weighted_dominant_share(cluster));
        }
        levels[q.path.len()] = needy_first(&q.usage, q.config.limits.min_resources.as_ref(), cluster, key.order);
        PathKey { tier: key.tier, levels }
    }

    /// The tier and the top level as one integer (72 bits) that orders as they do: a heap
    /// compares these in one instruction and looks [`PathKey::cmp_below_top`] up only on ties.
    #[inline]
    pub(crate) fn head(&self) -> u128 {
        // `f64::total_cmp`'s order, as unsigned bits: negative values have their magnitude bits
        // flipped, and the sign bit flipped puts them below the positive ones.
        let bits = self.levels[0].to_bits();
        let ordered = bits ^ ((((bits as i64) >> 63) as u64) >> 1) ^ (1 << 63);
        (u128::from(self.tier) << 64) | u128::from(ordered)
    }

    /// The order of the levels below the top, which decides between keys of equal
    /// [`PathKey::head`]. All zero in a flat file.
    #[inline]
    pub(crate) fn cmp_below_top(&self, other: &PathKey) -> std::cmp::Ordering {
        let mut levels = self.levels[1..].iter().zip(&other.levels[1..]).map(|(a, b)| a.total_cmp(b));
        levels.find(|o| o.is_ne()).unwrap_or(std::cmp::Ordering::Equal)
    }
}

impl Eq for PathKey {}

impl PartialOrd for PathKey {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for PathKey {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        // Decided at the first level that differs: most comparisons stop at the top.
        let levels = self.levels.iter().zip(&other.levels).map(|(a, b)| a.total_cmp(b));
        std::iter::once(self.tier.cmp(&other.tier))
            .chain(levels)
            .find(|o| o.is_ne())
            .unwrap_or(std::cmp::Ordering::Equal)
    }
}

/// Builds the policy a configuration names.
pub fn build(file: &QueueFile) -> Box<dyn Policy> {
    match file.policy {
        PolicyKind::Drf => Box::new(drf::Drf),
        PolicyKind::StrictPriority => Box::new(strict_priority::StrictPriority),
        PolicyKind::NBopf => Box::new(bopf::Bopf::new(file, crate::bopf::admission::BopfMode::NBopf)),
        PolicyKind::Bopf => Box::new(bopf::Bopf::new(file, crate::bopf::admission::BopfMode::Bopf)),
    }
}

/// A node's free space offered to a queue.
#[derive(Copy, Clone, Debug)]
pub struct NodeOffer {
    pub node: NodeId,
    pub host: LocationId,
    pub rack: LocationId,
    pub free: Resources,
    /// What one more ApplicationMaster may take in the queue, when its AM share is limited
    /// ([`crate::limits::am_room`]).
    pub am_room: Option<Resources>,
}

impl NodeOffer {
    /// The space `app` may use here: the free space, and for an app whose first container (its
    /// ApplicationMaster) has not started, no more than the queue's AM room. Policies place
    /// within this rather than within `free`.
    #[inline]
    pub fn room_for(&self, app: &crate::state::App) -> Resources {
        if app.started {
            self.free
        } else {
            self.am_start_room()
        }
    }

    /// The space an app whose ApplicationMaster has not started may use here.
    #[inline]
    fn am_start_room(&self) -> Resources {
        self.am_room.map_or(self.free, |room| self.free.min(&room))
    }

    /// The app's highest-priority ask that can start here, under YARN's locality rules.
    #[inline]
    pub fn first_fit(&self, state: &ClusterState, app: AppIdx) -> Option<Placement> {
        let app = state.app(app);
        app.asks.find(self.host, self.rack, &self.room_for(app))
    }

    /// The first app of the queue (in submission order) still waiting for its first container,
    /// the ApplicationMaster, that can start it here. Every app policy serves these first so
    /// that every app can start. Policies that plan hinted apps themselves skip those.
    ///
    /// Only apps with pending asks are tried, and none when the room an app without a container
    /// gets here cannot take the smallest of their asks (a backlog behind a full AM share).
    #[inline]
    pub fn app_waiting_for_am(
        &self,
        state: &ClusterState,
        queue: QueueIdx,
        skip_hinted: bool,
    ) -> Option<(AppIdx, Placement)> {
        let waiting = &state.queues[queue].unstarted_pending;
        if !waiting.may_fit(&self.am_start_room()) {
            return None;
        }
        waiting
            .iter()
            .filter(|&s| !skip_hinted || state.app(s).hints.is_none())
            .find_map(|s| self.first_fit(state, s).map(|p| (s, p)))
    }

    /// The first app of the queue (in submission order) that has started and has an ask that
    /// can start here. Only apps with pending asks are tried, and none when the node's room
    /// cannot take the smallest of their asks.
    #[inline]
    pub fn first_started_fit(&self, state: &ClusterState, queue: QueueIdx) -> Option<(AppIdx, Placement)> {
        let started = &state.queues[queue].started_pending;
        if !started.may_fit(&self.free) {
            return None;
        }
        started.iter().find_map(|s| self.first_fit(state, s).map(|p| (s, p)))
    }
}

/// Chooses what starts inside a queue. Implementations must return a placement that the app's
/// ask table allows on the offered node (use [`NodeOffer::first_fit`] or
/// [`crate::request::AskTable::placements`]).
pub trait AppPolicy: Send {
    fn name(&self) -> &'static str;

    /// Called once per heartbeat before any assignment.
    fn begin_heartbeat(&mut self, _state: &ClusterState, _now_ms: i64) {}

    /// The next time at which the policy's order changes without any event (a burst deadline
    /// passing, say), so a host can call the scheduler then instead of polling.
    fn next_event_ms(&self) -> Option<i64> {
        None
    }

    /// An app was registered (it is in `state` at `idx`).
    fn on_app_added(&mut self, _state: &ClusterState, _idx: AppIdx) {}

    /// An app's asks (or what is known about its work) changed.
    fn on_app_updated(&mut self, _state: &ClusterState, _idx: AppIdx) {}

    /// An app is about to be removed (it is still in `state` at `idx`, its containers freed).
    fn on_app_removed(&mut self, _state: &ClusterState, _idx: AppIdx) {}

    /// The container to start on the offered node from queue `queue`, if any.
    fn select(&mut self, state: &ClusterState, queue: QueueIdx, offer: &NodeOffer) -> Option<(AppIdx, Placement)>;

    /// What the policy reports about its own decisions so far, for status and experiments, or
    /// `None` when it has nothing beyond its name.
    fn view(&self) -> Option<serde_json::Value> {
        None
    }
}

/// Builds app policy `kind` with the file's settings.
pub fn build_app_policy(kind: AppPolicyKind, file: &QueueFile) -> Box<dyn AppPolicy> {
    match kind {
        AppPolicyKind::Fifo => Box::new(fifo::Fifo),
        AppPolicyKind::Carbyne { altruism_probability } => Box::new(carbyne::Carbyne::new(altruism_probability)),
        AppPolicyKind::Tetris { fairness_knob, remaining_work } => {
            Box::new(tetris::Tetris::new(fairness_knob, remaining_work))
        }
        AppPolicyKind::Sjf => Box::new(sjf::Sjf::default()),
        AppPolicyKind::Uwfq => Box::new(uwfq::Uwfq::new(file.uwfq.clone())),
        AppPolicyKind::Cfq => Box::new(cfq::Cfq::new(file.uwfq.default_task_sec)),
        AppPolicyKind::JobFair => Box::new(job_fair::JobFair),
        AppPolicyKind::Ujf => Box::new(ujf::Ujf::default()),
    }
}
