//! The scheduler: the one owner of [`ClusterState`], driven by events from an RM shim or the
//! simulator, deciding container placements on node heartbeats.
//!
//! Every mutating call validates its input completely before changing anything, so an error
//! leaves the state exactly as it was. [`Scheduler::node_heartbeat`] reads top to bottom as
//! phases (check, clock and completions, policy refresh, slot reservation, queue offers) and
//! starts every container through `commit`; containers that already run elsewhere (after a
//! ResourceManager restart) are booked through [`Scheduler::adopt`], and both share one booking
//! path. Policies only read the state and
//! propose; slot reservation ([`crate::holds`]) owns its holds and is called at named points:
//! a container started (`reservation_started`), a container ended (`reservation_ended`),
//! before the node is offered to queues (expiry and held slots served first), and when a
//! higher-priority container takes held space (`make_room`).

use crate::config::{self, AppPolicyKind, QueueConfig, QueueFile, Settings};
use crate::container_reservation::{self, ContainerReservations, ReservedContainer};
use crate::error::{CoreError, Result};
use crate::hints::{HintsReply, PartitionAdvice, StragglerAdvice};
use crate::history::History;
use crate::holds::{AppReservationView, Hold, Reservations};
use crate::ids::{AllocationId, AppIdx, AppKey, LocationId, NodeId, Priority, QueueIdx, MAX_ALLOCATION_ID};
use crate::limits::{self, Level, QueueLimits};
use crate::placement::{self, PlacementPolicy, QueueType};
use crate::policy::{self, Admission, AppPolicy, NodeOffer, PathKey, Policy};
use crate::queue_order::QueueOrder;
use crate::request::{Ask, Placement};
use crate::reservation::StageTask;
use crate::resource::Resources;
use crate::resource::MAX_RESOURCE_AMOUNT;
use crate::snapshot::{
    PolicySnapshot, QueueSnapshot, RestoreSummary, RestoredQueue, RuntimeQueue, Snapshot, SNAPSHOT_VERSION,
};
use crate::state::{Allocation, App, ClusterState, FairShares, Node};
use std::collections::HashMap;
use tracing::{debug, info, warn};

pub use crate::request::Locality;

/// What a decision asks the host to do on the heartbeat's node.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum DecisionKind {
    /// Start a container: the allocation is booked.
    Start = 0,
    /// Reserve the node for the app's ask ([`crate::container_reservation`]); nothing is booked
    /// and `allocation_id` is 0. A later `Start` of the same app and priority on the node
    /// fulfils it.
    Reserve = 1,
    /// End the app's reservation on the node without a container: it no longer asks for it.
    Unreserve = 2,
}

/// What the RM shim materialises: a container to start, or a reservation made or ended.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Decision {
    pub kind: DecisionKind,
    pub allocation_id: AllocationId,
    pub app: AppKey,
    pub priority: Priority,
    pub locality: Locality,
    pub resources: Resources,
}

/// The node a heartbeat places containers on, with its location ids.
#[derive(Copy, Clone, Debug)]
struct Target {
    node: NodeId,
    host: LocationId,
    rack: LocationId,
}

/// How a container being booked came to run.
#[derive(Copy, Clone, Debug)]
enum Origin {
    /// Placed by a heartbeat on an ask of the app, at this locality on the node's host and rack.
    Ask { locality: Locality, host: LocationId, rack: LocationId },
    /// Already running: granted before, by an earlier instance or ResourceManager.
    Adopted,
    /// Put on its node by a placer outside the heartbeat ([`Scheduler::place`]).
    Placed,
}

/// A queue registered at run time, with the `<queue>` element it was registered from.
#[derive(Clone, Debug)]
struct Registered {
    /// As parsed, with the registering user as owner.
    config: QueueConfig,
    xml: String,
}

/// Who asks for a run-time queue change: its owner or an administrator may change a queue.
#[derive(Copy, Clone, Debug)]
pub struct Caller<'a> {
    pub user: &'a str,
    pub admin: bool,
}

pub struct Scheduler {
    state: ClusterState,
    settings: Settings,
    queue_file: QueueFile,
    /// Queues registered at run time, in registration order; they survive reloads of the
    /// allocation file.
    registered: Vec<Registered>,
    policy: Box<dyn Policy>,
    /// One app policy per distinct policy the leaves use (with its knobs). An app policy keeps
    /// its state per app and is asked per queue, so leaves that share a policy share an
    /// instance: a heartbeat refreshes each policy once however many leaves use it, and a
    /// policy's view (Carbyne's counts) covers all its queues.
    app_policies: Vec<(AppPolicyKind, Box<dyn AppPolicy>)>,
    /// Per leaf: its app policy's index in `app_policies`.
    leaf_app_policy: Vec<usize>,
    /// Queues to offer the node to, in order; kept across heartbeats where the policy allows
    /// (see [`QueueOrder`]). Every change to a queue's usage, demand or last allocation calls
    /// `touch`; every other change that may move keys calls `forget`.
    order: QueueOrder,
    /// Runnable apps per user, for the users' running-apps limits.
    user_running: HashMap<String, u32>,
    /// Slot reservation holds and per-stage state.
    reservations: Reservations,
    /// Nodes reserved for asks larger than their free space, when the settings reserve.
    reserved: ContainerReservations,
    /// Whether any queue has slot reservation on: when not, none of its bookkeeping runs.
    reserving: bool,
    /// Whether any queue or parent has a `<maxResources>`: when not, offering a node skips the
    /// walk up the tree for headroom.
    capped: bool,
    /// Containers a heartbeat reported ended, kept for the reservation step after the clock
    /// moved; reused across heartbeats.
    ended: Vec<(AllocationId, Allocation)>,
    /// Shares, bursts and admission decisions over time, sampled after heartbeats.
    history: History,
}

impl std::fmt::Debug for Scheduler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scheduler")
            .field("policy", &self.policy.name())
            .field("settings", &self.settings)
            .field("nodes", &self.state.node_count)
            .field("apps", &self.state.app_count())
            .finish()
    }
}

fn check_resources(what: &str, r: &Resources) -> Result<()> {
    if r.any_negative() || r.0.iter().any(|&v| v > MAX_RESOURCE_AMOUNT) {
        return Err(CoreError::InvalidInput(format!(
            "{what} {r} is negative or larger than {MAX_RESOURCE_AMOUNT} in some dimension"
        )));
    }
    Ok(())
}

impl Scheduler {
    pub fn new(queue_file: QueueFile, settings: Settings) -> Result<Scheduler> {
        settings.validate()?;
        let mut state = ClusterState::default();
        state.next_allocation_id = 1;
        state.set_parents(&queue_file.root_acls, &queue_file.parents);
        for q in &queue_file.queues {
            state.insert_queue(q, 0);
        }
        let policy = policy::build(&queue_file);
        let mut s = Scheduler {
            state,
            settings,
            queue_file,
            registered: Vec::new(),
            policy,
            app_policies: Vec::new(),
            leaf_app_policy: Vec::new(),
            order: QueueOrder::default(),
            user_running: HashMap::new(),
            reservations: Reservations::default(),
            reserved: ContainerReservations::default(),
            reserving: false,
            capped: false,
            ended: Vec::new(),
            history: History::new(settings.history_sample_interval_ms),
        };
        s.reserving = s.any_reservation();
        s.capped = s.any_cap();
        s.assign_app_policies(false);
        for qi in 0..s.state.queues.len() {
            s.admit(qi);
        }
        info!(policy = s.policy.name(), queues = s.state.queues.len(), "scheduler created");
        Ok(s)
    }

    /// Maps every leaf to the instance of its app policy, building the instances missing. When
    /// `rebuild` is set, or a leaf with apps changes policy, every instance is built anew and
    /// learns the live apps of its leaves in submission order.
    fn assign_app_policies(&mut self, rebuild: bool) {
        let kinds: Vec<AppPolicyKind> =
            self.state.queues.iter().map(|q| self.queue_file.app_policy_for(&q.config)).collect();
        let moved = self
            .leaf_app_policy
            .iter()
            .zip(&kinds)
            .zip(&self.state.queues)
            .any(|((&i, kind), q)| !q.apps.is_empty() && self.app_policies.get(i).is_none_or(|(k, _)| k != kind));
        let rebuild = rebuild || moved;
        if rebuild {
            self.app_policies.clear();
        }
        self.leaf_app_policy.clear();
        for kind in kinds {
            let i = match self.app_policies.iter().position(|(k, _)| *k == kind) {
                Some(i) => i,
                None => {
                    self.app_policies.push((kind, policy::build_app_policy(kind, &self.queue_file)));
                    self.app_policies.len() - 1
                }
            };
            self.leaf_app_policy.push(i);
        }
        if rebuild {
            let mut live: Vec<(u64, AppIdx)> = self
                .state
                .apps
                .iter()
                .enumerate()
                .filter_map(|(i, a)| a.as_ref().filter(|a| a.runnable).map(|a| (a.seq, i)))
                .collect();
            live.sort_unstable();
            for (_, idx) in live {
                let p = &mut self.app_policies[self.leaf_app_policy[self.state.app(idx).queue]].1;
                p.on_app_added(&self.state, idx);
                p.on_app_updated(&self.state, idx);
            }
        }
    }

    /// Tells the app policy of app `idx`'s queue about the app.
    fn tell_app_policy(&mut self, idx: AppIdx, f: impl FnOnce(&mut dyn AppPolicy, &ClusterState, AppIdx)) {
        let policy = &mut self.app_policies[self.leaf_app_policy[self.state.app(idx).queue]].1;
        f(policy.as_mut(), &self.state, idx);
    }

    /// The name of the app policy that orders leaf `qi`'s apps.
    pub fn queue_app_policy_name(&self, qi: QueueIdx) -> &'static str {
        self.app_policies[self.leaf_app_policy[qi]].0.name()
    }

    fn any_reservation(&self) -> bool {
        self.state.queues.iter().any(|q| self.queue_file.slot_reservation_for(&q.config).is_some())
    }

    fn any_cap(&self) -> bool {
        self.state.queues.iter().any(|q| q.config.limits.max_resources.is_some())
            || self.state.parents.iter().any(|p| p.config.limits.max_resources.is_some())
    }

    /// The tier a hold made now for an app of queue `qi` carries.
    fn tier(&self, qi: QueueIdx) -> u8 {
        self.policy.queue_key(&self.state, qi).tier
    }

    /// Runs the policy's admission for queue `qi`; a rejected queue takes no applications.
    /// The decision goes into the history.
    fn admit(&mut self, qi: QueueIdx) -> Admission {
        let admission = self.policy.admit(&self.state, qi);
        self.history.admitted(self.state.now_ms, qi, &self.state.queues[qi], &admission);
        let q = &mut self.state.queues[qi];
        if !admission.admitted {
            q.retired = true;
            warn!(queue = q.name(), reason = %admission.reason, "queue rejected by admission control");
        } else if !admission.reason.is_empty() {
            info!(queue = q.name(), class = admission.class, reason = %admission.reason, "queue admitted");
        }
        admission
    }

    /// Adds a queue to the state (or revives a retired one of that name) and returns its index.
    fn upsert_queue(&mut self, config: &QueueConfig) -> QueueIdx {
        self.order.forget();
        let now = self.state.now_ms;
        match self.state.queue_index.get(&config.name) {
            Some(&i) => {
                let q = &mut self.state.queues[i];
                q.config = config.clone();
                q.retired = false;
                i
            }
            None => self.state.insert_queue(config, now),
        }
    }

    /// Frees queue `qi`'s slot once it is retired and its last app has left.
    fn remove_if_done(&mut self, qi: QueueIdx) {
        let q = &self.state.queues[qi];
        if q.retired && !q.removed && !q.has_apps() {
            self.state.remove_queue(qi);
            self.order.forget();
        }
    }

    /// Parses the allocation file's XML and builds a scheduler from it.
    pub fn from_xml(xml: &str, settings: Settings) -> Result<Scheduler> {
        Scheduler::new(config::parse_queue_file(xml)?, settings)
    }

    pub fn state(&self) -> &ClusterState {
        &self.state
    }

    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    pub fn queue_file(&self) -> &QueueFile {
        &self.queue_file
    }

    pub fn policy_name(&self) -> &'static str {
        self.policy.name()
    }

    /// The file's default app policy, which leaves without their own use.
    pub fn app_policy_name(&self) -> &'static str {
        self.queue_file.app_policy.name()
    }

    /// The app policies' reports on their decisions (see [`crate::policy::AppPolicy::view`]):
    /// one policy's report as it is; with several, an object of the reports by policy name.
    pub fn app_policy_view(&self) -> Option<serde_json::Value> {
        let mut views: Vec<(&str, serde_json::Value)> =
            self.app_policies.iter().filter_map(|(k, p)| Some((k.name(), p.view()?))).collect();
        match views.len() {
            0 => None,
            1 if self.app_policies.len() == 1 => views.pop().map(|(_, v)| v),
            _ => Some(serde_json::Value::Object(views.into_iter().map(|(k, v)| (k.to_string(), v)).collect())),
        }
    }

    /// Applies a new queue file and settings (`yarn rmadmin -refreshQueues`). Queues keep
    /// their apps and usage; a queue the new file drops is retired: it takes no new apps and
    /// disappears once its last app leaves.
    ///
    /// The policy is rebuilt and every queue admitted again, file queues first in file order,
    /// then queues registered at run time (which the file may now shadow).
    pub fn reconfigure(&mut self, queue_file: QueueFile, settings: Settings) -> Result<()> {
        settings.validate()?;
        let was_live: Vec<bool> = self.state.queues.iter().map(|q| !q.retired).collect();
        for q in &mut self.state.queues {
            q.retired = true;
        }
        self.registered.retain(|r| !queue_file.queues.iter().any(|f| f.name == r.config.name));
        // A run-time queue whose parent the new file drops is retired with it, as the file's
        // own leaves under that parent are: left live, it would sit under no parent at all.
        self.registered.retain(|r| {
            let parent = config::parent_queue_name(&r.config.name);
            let kept = parent == config::ROOT || queue_file.parents.iter().any(|p| p.name == parent);
            if !kept {
                info!(queue = r.config.name.as_str(), parent, "run-time queue retired: its parent left the queue file");
            }
            kept
        });
        let mut order = Vec::new();
        let runtime: Vec<QueueConfig> = self.registered.iter().map(|r| r.config.clone()).collect();
        for qc in queue_file.queues.iter().chain(runtime.iter()) {
            order.push(self.upsert_queue(qc));
        }
        self.policy = policy::build(&queue_file);
        self.state.set_parents(&queue_file.root_acls, &queue_file.parents);
        self.order.forget();
        let rebuild_app_policies = queue_file.uwfq != self.queue_file.uwfq;
        let reservations_changed = self.queue_file.slot_reservation != queue_file.slot_reservation
            || self
                .queue_file
                .queues
                .iter()
                .map(|q| q.slot_reservation)
                .ne(queue_file.queues.iter().map(|q| q.slot_reservation));
        self.queue_file = queue_file;
        self.settings = settings;
        self.assign_app_policies(rebuild_app_policies);
        self.history.set_interval(settings.history_sample_interval_ms);
        for qi in order {
            self.admit(qi);
        }
        // Admitting may have re-run admission for the queues admitted before (BoPF does once
        // the cluster has capacity).
        self.history.revise_admissions(&self.state, self.policy.as_ref());
        // A run-time queue the new admission rejects is dropped, as a rejected registration is:
        // kept, it would outlive its queue and be saved and deleted as if it were live.
        let state = &self.state;
        self.registered.retain(|r| state.queue_index.get(&r.config.name).is_some_and(|&qi| !state.queues[qi].retired));
        if reservations_changed {
            // Stages keep the settings they were made with: start over under the new ones.
            self.reservations.clear();
        }
        self.reserving = self.any_reservation();
        self.capped = self.any_cap();
        for (i, q) in self.state.queues.iter().enumerate() {
            if q.retired && was_live.get(i).copied().unwrap_or(false) {
                info!(queue = q.name(), apps = q.apps.len(), "queue retired by reconfiguration");
            }
        }
        // Limits may have been raised: apps they held back may run now.
        self.promote_waiting();
        for qi in 0..self.state.queues.len() {
            self.remove_if_done(qi);
        }
        info!(policy = self.policy.name(), queues = self.queue_file.queues.len(), "queues reconfigured");
        Ok(())
    }

    /// Registers a queue at run time (for example an LQ a user brings) from a `<queue>` element
    /// of the allocation-file format, and returns the queue's full name and the admission
    /// verdict. The caller becomes the queue's owner. A rejected queue is not kept. The element
    /// is kept as given, so a snapshot can register the queue again exactly.
    pub fn register_queue_xml(&mut self, xml: &str, caller: Caller) -> Result<(String, Admission)> {
        let config = config::parse_queue_element(xml)?;
        let name = config.name.clone();
        let admission = self.register_parsed(config, xml, caller.user)?;
        Ok((name, admission))
    }

    /// Registers a parsed queue element owned by `owner`; see [`Scheduler::register_queue_xml`].
    fn register_parsed(&mut self, mut config: QueueConfig, xml: &str, owner: &str) -> Result<Admission> {
        if self.state.parent_index.contains_key(&config.name) {
            return Err(CoreError::Conflict(format!("queue '{}' already exists as a parent queue", config.name)));
        }
        let parent = config::parent_queue_name(&config.name);
        let Some(&pi) = self.state.parent_index.get(parent) else {
            return Err(CoreError::Config(format!(
                "queue '{}' goes under '{parent}', which is not a parent queue of the allocation file",
                config.name
            )));
        };
        // A queue made at run time orders its apps as its parent's other leaves do.
        if config.app_policy.is_none() {
            config.app_policy = self.state.parents[pi].config.app_policy;
        }
        if let Some(q) = self.state.queue_by_name(&config.name) {
            if !q.retired {
                return Err(CoreError::Conflict(format!("queue '{}' already exists", config.name)));
            }
            if q.has_apps() {
                return Err(CoreError::Conflict(format!(
                    "queue '{}' was removed but still has applications; register it again once they finish",
                    config.name
                )));
            }
        }
        config.owner = Some(owner.to_string());
        let qi = self.upsert_queue(&config);
        self.assign_app_policies(false);
        let admission = self.admit(qi);
        self.history.revise_admissions(&self.state, self.policy.as_ref());
        if admission.admitted {
            self.registered.push(Registered { config, xml: xml.to_string() });
        } else {
            self.remove_if_done(qi);
        }
        self.reserving = self.any_reservation();
        self.capped = self.any_cap();
        Ok(admission)
    }

    /// Removes a queue registered at run time. Only its owner or an administrator may; queues
    /// from the allocation file change only by editing the file. Running apps finish.
    pub fn unregister_queue(&mut self, name: &str, caller: Caller) -> Result<()> {
        let full = config::full_queue_name(name);
        let pos = self.registered.iter().position(|r| r.config.name == full).ok_or_else(|| {
            if self.queue_file.queues.iter().any(|q| q.name == full) {
                CoreError::Conflict(format!(
                    "queue '{full}' is defined in the allocation file; edit the file and refresh the queues"
                ))
            } else {
                CoreError::UnknownQueue(full.clone())
            }
        })?;
        let owner = self.registered[pos].config.owner.as_deref();
        if !caller.admin && owner != Some(caller.user) {
            return Err(CoreError::Forbidden(format!(
                "user '{}' may not change queue '{full}' (owned by '{}')",
                caller.user,
                owner.unwrap_or("")
            )));
        }
        self.registered.remove(pos);
        let qi = self.state.queue_index[&full];
        self.state.queues[qi].retired = true;
        self.policy.remove_queue(&self.state, qi);
        self.remove_if_done(qi);
        info!(queue = %full, by = caller.user, "queue unregistered");
        Ok(())
    }

    /// A snapshot of what this instance keeps that YARN does not: see [`crate::snapshot`].
    pub fn snapshot(&self) -> Snapshot {
        let now = self.state.now_ms;
        let queues = self
            .state
            .queues
            .iter()
            .filter(|q| !q.removed)
            .map(|q| {
                // Integrated through now: the snapshot is taken with the containers running, the
                // restored queue has none until they are adopted.
                let until = q.integrated_until_ms.max(now);
                QueueSnapshot {
                    name: q.name().to_string(),
                    created_ms: q.created_ms.min(until),
                    integrated_until_ms: until,
                    usage_integral: q.usage_integral_at(until),
                }
            })
            .collect();
        Snapshot {
            version: SNAPSHOT_VERSION,
            now_ms: now,
            next_allocation_id: self.state.next_allocation_id,
            policy: PolicySnapshot { name: self.policy.name().to_string(), state: self.policy.snapshot(&self.state) },
            runtime_queues: self
                .registered
                .iter()
                .map(|r| RuntimeQueue { xml: r.xml.clone(), owner: r.config.owner.clone().unwrap_or_default() })
                .collect(),
            queues,
            history: Some(self.history.tail()),
        }
    }

    /// [`Scheduler::snapshot`] as JSON.
    pub fn snapshot_json(&self) -> String {
        self.snapshot().to_json()
    }

    /// Restores a snapshot ([`Scheduler::snapshot_json`]) into this instance, which must hold no
    /// applications yet (it is built from the allocation file; nodes may have registered).
    ///
    /// In order: the policy's state (skipped, with a warning, when the snapshot was taken under
    /// another policy); the clock and the allocation id floor; the queues registered at run
    /// time, with their owners, in their order (one the allocation file now defines is skipped,
    /// as a reload does); the usage history of every queue known by name; the recent history,
    /// which replaces what this instance recorded before and comes before the admission
    /// decisions made while restoring. The policy comes first so that run-time queues are
    /// admitted against the restored admission state, not against whatever capacity has
    /// registered so far. The document is parsed and checked completely, and the policy state
    /// checked, before anything changes.
    pub fn restore_json(&mut self, json: &str) -> Result<RestoreSummary> {
        let snap = Snapshot::from_json(json)?;
        if self.state.app_count() > 0 {
            return Err(CoreError::Conflict(format!(
                "restore needs a fresh instance; this one has {} applications",
                self.state.app_count()
            )));
        }
        let mut runtime = Vec::with_capacity(snap.runtime_queues.len());
        for (i, r) in snap.runtime_queues.iter().enumerate() {
            let config = config::parse_queue_element(&r.xml)
                .map_err(|e| CoreError::InvalidInput(format!("snapshot field 'runtime_queues[{i}].xml': {e}")))?;
            if r.owner.is_empty() {
                return Err(CoreError::InvalidInput(format!(
                    "snapshot field 'runtime_queues[{i}].owner' is empty (queue '{}')",
                    config.name
                )));
            }
            if runtime.iter().any(|(c, _): &(QueueConfig, &RuntimeQueue)| c.name == config.name) {
                return Err(CoreError::InvalidInput(format!(
                    "snapshot field 'runtime_queues[{i}]': queue '{}' is listed twice",
                    config.name
                )));
            }
            runtime.push((config, r));
        }
        self.order.forget();
        let mut warnings = Vec::new();
        let mut warn_skip = |message: String| {
            warn!(%message, "restore");
            warnings.push(message);
        };

        let policy_restored = match &snap.policy.state {
            _ if snap.policy.name != self.policy.name() => {
                warn_skip(format!(
                    "policy state skipped: the snapshot was taken under policy '{}', this instance runs '{}'",
                    snap.policy.name,
                    self.policy.name()
                ));
                false
            }
            Some(value) => {
                self.policy.restore(&self.state, value)?;
                true
            }
            None => false,
        };
        // What this instance recorded at clock 0 (the file's queues admitted when it was built)
        // gives way to the restored history and what the restored policy decided: every queue
        // admitted again, recorded before the run-time queues are, so theirs is recorded once.
        self.history = History::new(self.settings.history_sample_interval_ms);
        // As a first heartbeat would: queues the snapshot does not know start their history now.
        self.advance_clock(snap.now_ms);
        self.history.revise_admissions(&self.state, self.policy.as_ref());
        self.state.next_allocation_id = self.state.next_allocation_id.max(snap.next_allocation_id);

        for (config, r) in runtime {
            if self.queue_file.queues.iter().any(|f| f.name == config.name) {
                warn_skip(format!("run-time queue '{}' skipped: the allocation file defines it", config.name));
                continue;
            }
            let name = config.name.clone();
            match self.register_parsed(config, &r.xml, &r.owner) {
                Ok(a) if !a.admitted => warn_skip(format!("run-time queue '{name}' rejected: {}", a.reason)),
                Ok(_) => {}
                Err(e) => warn_skip(format!("run-time queue '{name}' skipped: {e}")),
            }
        }

        for q in &snap.queues {
            let Some(&qi) = self.state.queue_index.get(&q.name) else {
                warn_skip(format!("usage history of unknown queue '{}' skipped", q.name));
                continue;
            };
            let queue = &mut self.state.queues[qi];
            queue.created_ms = q.created_ms;
            queue.integrated_until_ms = q.integrated_until_ms;
            queue.usage_integral = q.usage_integral;
        }

        let queues = self
            .state
            .queues
            .iter()
            .enumerate()
            .filter(|(_, q)| !q.retired)
            .map(|(qi, q)| {
                let admission = self.policy.queue_view(qi).admission;
                RestoredQueue {
                    name: q.name().to_string(),
                    runtime: self.registered.iter().any(|r| r.config.name == q.config.name),
                    admitted: admission.admitted,
                    class: admission.class,
                }
            })
            .collect();
        if let Some(tail) = &snap.history {
            self.history.restore(tail, &self.state);
        }
        info!(queues = self.state.queues.len(), policy_restored, now_ms = self.state.now_ms, "state restored");
        Ok(RestoreSummary { policy_restored, queues, warnings })
    }

    /// The history of shares, bursts and admission decisions as JSON (see [`crate::history`]):
    /// samples taken after `since_ms`, every burst and decision kept.
    pub fn history_json(&self, since_ms: i64) -> String {
        self.history.to_json(self.state.now_ms, since_ms)
    }

    /// The policy's view of a queue: admission class, guarantee, burst state.
    pub fn queue_view(&self, qi: QueueIdx) -> policy::QueueView {
        self.policy.queue_view(qi)
    }

    pub fn add_node(&mut self, id: NodeId, host: LocationId, rack: LocationId, capacity: Resources) -> Result<()> {
        check_resources(&format!("capacity of node {id}"), &capacity)?;
        if self.state.node(id).is_some() {
            return Err(CoreError::DuplicateNode(id));
        }
        self.state.insert_node(Node { id, host, rack, capacity, allocated: Resources::ZERO, containers: 0 });
        self.state.node_count += 1;
        self.state.capacity += capacity;
        self.order.forget();
        debug!(node = id, %capacity, "node added");
        Ok(())
    }

    /// Removes a node; allocations still on it are freed. Returns how many there were.
    pub fn remove_node(&mut self, id: NodeId) -> Result<usize> {
        let node = self.state.take_node(id).ok_or(CoreError::UnknownNode(id))?;
        self.state.node_count -= 1;
        self.state.capacity -= node.capacity;
        self.order.forget();
        self.reservations.node_removed(id);
        self.reserved.clear_node(id);
        if self.reserving && node.containers > 0 {
            // Tasks on a vanished node did not finish: they leave their stages without a duration.
            let mut on_node: Vec<(AllocationId, Allocation)> =
                self.state.allocations.iter().filter(|(_, a)| a.node == id).map(|(&k, a)| (k, *a)).collect();
            // In start order, whatever order the table keeps.
            on_node.sort_unstable_by_key(|&(k, _)| k);
            for (aid, a) in on_node {
                self.reservations.container_ended(&self.state, aid, &a, false, 0);
            }
        }
        let lost = if node.containers > 0 { self.release_where(|a| a.node == id) } else { 0 };
        debug!(node = id, containers = lost, "node removed");
        Ok(lost)
    }

    pub fn update_node_resource(&mut self, id: NodeId, capacity: Resources) -> Result<()> {
        check_resources(&format!("capacity of node {id}"), &capacity)?;
        let node = self.state.node_mut(id).ok_or(CoreError::UnknownNode(id))?;
        let old = std::mem::replace(&mut node.capacity, capacity);
        self.state.capacity -= old;
        self.state.capacity += capacity;
        self.order.forget();
        // A shrunk node gives up holds before running containers.
        self.reservations.make_room(&self.state, id, None);
        debug!(node = id, %old, new = %capacity, "node resource updated");
        Ok(())
    }

    /// Registers an application in a queue (short or full name) and returns the queue's full
    /// name. The app is accepted even when a running-apps limit holds it back: it then waits
    /// without containers until it may run ([`crate::limits`]).
    pub fn add_app(&mut self, key: AppKey, queue: &str, user: &str) -> Result<&str> {
        if self.state.app_index.contains_key(&key) {
            return Err(CoreError::DuplicateApp(key));
        }
        let full = config::full_queue_name(queue);
        if self.state.parent_index.contains_key(&full) {
            return Err(CoreError::Config(format!("queue '{full}' is a parent queue; applications go to leaf queues")));
        }
        let qi = *self.state.queue_index.get(&full).ok_or_else(|| CoreError::UnknownQueue(full.clone()))?;
        if self.state.queues[qi].retired {
            return Err(CoreError::Config(format!(
                "queue '{full}' was removed from the configuration and takes no new applications"
            )));
        }
        let view = self.policy.queue_view(qi);
        if !view.admission.admitted {
            return Err(CoreError::Config(format!(
                "queue '{full}' was rejected by admission control: {}",
                view.admission.reason
            )));
        }
        let seq = self.state.next_app_seq;
        self.state.next_app_seq += 1;
        let idx = self.state.insert_app(App {
            key,
            queue: qi,
            user: user.to_string(),
            seq,
            priority: 0,
            asks: Default::default(),
            usage: Resources::ZERO,
            running_containers: 0,
            started: false,
            runnable: false,
            am_resources: Resources::ZERO,
            hints: None,
            indexed: None,
            allocation_ids: Vec::new(),
        });
        match self.may_run(qi, user) {
            Ok(()) => self.make_runnable(idx),
            Err(reason) => {
                self.state.queues[qi].waiting.push(idx);
                info!(app = key, queue = %full, user, %reason, "app accepted, waits to run");
            }
        }
        debug!(app = key, queue = %full, user, "app added");
        Ok(self.state.queues[qi].name())
    }

    /// The queue an app submitted to `requested` by `user` (whose groups are `groups`, primary
    /// first) goes to under the allocation file's `<queuePlacementPolicy>`, as a full name; it
    /// may not exist yet, if its rule may create it. Without a policy, the requested queue.
    /// Changes nothing; an `Err` is the reason the app is rejected.
    pub fn place_app(&self, requested: &str, user: &str, groups: &[String]) -> Result<String> {
        let Some(policy) = &self.queue_file.placement else {
            let requested = if requested.trim().is_empty() { placement::DEFAULT_QUEUE } else { requested };
            return Ok(config::full_queue_name(requested));
        };
        policy.place(requested, user, groups, &LiveQueues(&self.state)).map_err(|reason| {
            CoreError::Config(format!("application of user '{user}' rejected by queue placement: {reason}"))
        })
    }

    /// Whether placing an app reads its user's groups (a group rule in the placement policy);
    /// without one, [`Scheduler::place_app`] and [`Scheduler::submit_app`] may be given none.
    pub fn placement_uses_groups(&self) -> bool {
        self.queue_file.placement.as_ref().is_some_and(PlacementPolicy::uses_groups)
    }

    /// Places an app as [`Scheduler::place_app`] says, creating its queue when the placement
    /// rule may (a throughput queue of weight 1 directly under the root, registered at run time
    /// and owned by `user`), and adds it there ([`Scheduler::add_app`]). Returns the queue's
    /// full name.
    pub fn submit_app(&mut self, key: AppKey, requested: &str, user: &str, groups: &[String]) -> Result<&str> {
        if self.state.app_index.contains_key(&key) {
            return Err(CoreError::DuplicateApp(key));
        }
        let queue = self.place_app(requested, user, groups)?;
        if self.queue_file.placement.is_some() && self.state.queue_by_name(&queue).is_none_or(|q| q.retired) {
            self.create_placed_queue(&queue, user)?;
        }
        self.add_app(key, &queue, user)
    }

    /// Creates the queue a placement rule named.
    fn create_placed_queue(&mut self, full: &str, user: &str) -> Result<()> {
        let (parent, leaf) = full.rsplit_once('.').unwrap_or((config::ROOT, full));
        let xml = if parent == config::ROOT {
            format!("<queue name=\"{leaf}\"/>")
        } else {
            format!("<queue name=\"{leaf}\" parent=\"{parent}\"/>")
        };
        let config = config::parse_queue_element(&xml).map_err(|e| {
            CoreError::Config(format!("queue placement chose queue '{full}', which cannot be created: {e}"))
        })?;
        let admission = self.register_parsed(config, &xml, user)?;
        if !admission.admitted {
            return Err(CoreError::Config(format!(
                "queue placement created queue '{full}', which admission control rejected: {}",
                admission.reason
            )));
        }
        info!(queue = full, user, "queue created by queue placement");
        Ok(())
    }

    /// Calls `f` with the chain of queues whose running-apps and maximum limits apply to leaf
    /// `qi`: the leaf, then each ancestor up to the root (FairScheduler's walk up the tree).
    /// Built on the stack: the heartbeat asks for it per queue it offers a node.
    fn with_chain<R>(state: &ClusterState, qi: QueueIdx, f: impl FnOnce(&[Level]) -> R) -> R {
        const NO_LIMITS: &QueueLimits = &QueueLimits::NONE;
        let q = &state.queues[qi];
        let leaf =
            Level { name: q.name(), limits: &q.config.limits, runnable_apps: q.apps.len() as u32, usage: q.usage };
        let mut chain = [Level { name: "", limits: NO_LIMITS, runnable_apps: 0, usage: Resources::ZERO };
            config::MAX_QUEUE_DEPTH + 2];
        chain[0] = leaf;
        let ancestors = q.path.iter().rev().copied().chain(std::iter::once(crate::state::ROOT_PARENT));
        let mut n = 1;
        for p in ancestors {
            let parent = &state.parents[p];
            chain[n] = Level {
                name: &parent.config.name,
                limits: &parent.config.limits,
                runnable_apps: parent.runnable_apps,
                usage: parent.usage,
            };
            n += 1;
        }
        f(&chain[..n])
    }

    /// Whether an app of `user` may run in queue `qi` now; `Err` names the limit in the way.
    fn may_run(&self, qi: QueueIdx, user: &str) -> std::result::Result<(), String> {
        let running = self.user_running.get(user).copied().unwrap_or(0);
        Self::with_chain(&self.state, qi, |chain| limits::can_run_app(&self.queue_file.limits, chain, user, running))
    }

    /// Makes an accepted app runnable: it joins its queue's apps in submission order, its asks
    /// count as its queue's demand, and the app policy learns of it.
    fn make_runnable(&mut self, idx: AppIdx) {
        let app = self.state.app_mut(idx);
        app.runnable = true;
        let (qi, seq, started, user) = (app.queue, app.seq, app.started, app.user.clone());
        let (n, r) = (app.asks.pending_containers(), app.asks.pending_resources());
        *self.user_running.entry(user).or_insert(0) += 1;
        let state = &mut self.state;
        let q = &mut state.queues[qi];
        if let Some(pos) = q.waiting.iter().position(|&w| w == idx) {
            q.waiting.remove(pos);
        }
        let apps = &state.apps;
        let at = q.apps.partition_point(|&a| apps[a].as_ref().is_some_and(|a| a.seq < seq));
        q.apps.insert(at, idx);
        q.pending_containers += n;
        self.order.touch(qi);
        q.pending_resources += r;
        if !started {
            q.apps_waiting_for_am += 1;
        }
        state.roll_up(qi, |p| {
            p.pending_containers += n;
            p.pending_resources += r;
            p.runnable_apps += 1;
        });
        state.reindex_app(idx);
        self.tell_app_policy(idx, |p, s, i| p.on_app_added(s, i));
        self.tell_app_policy(idx, |p, s, i| p.on_app_updated(s, i));
    }

    /// Makes runnable, in submission order, every waiting app the limits now allow (as
    /// FairScheduler does when an app finishes or the limits are reloaded).
    fn promote_waiting(&mut self) {
        let mut waiting: Vec<(u64, AppIdx)> =
            self.state.queues.iter().flat_map(|q| q.waiting.iter().map(|&i| (self.state.app(i).seq, i))).collect();
        if waiting.is_empty() {
            return;
        }
        waiting.sort_unstable();
        for (_, idx) in waiting {
            let app = self.state.app(idx);
            if self.may_run(app.queue, &app.user).is_ok() {
                debug!(app = app.key, "waiting app becomes runnable");
                self.make_runnable(idx);
            }
        }
    }

    /// Removes an application with its asks; its live allocations are freed. Apps it held back
    /// may run now.
    pub fn remove_app(&mut self, key: AppKey) -> Result<()> {
        let idx = *self.state.app_index.get(&key).ok_or(CoreError::UnknownApp(key))?;
        if self.state.app(idx).running_containers > 0 {
            while let Some(&id) = self.state.app(idx).allocation_ids.last() {
                self.release_allocation(id);
            }
        }
        let runnable = self.state.app(idx).runnable;
        if runnable {
            self.tell_app_policy(idx, |p, s, i| p.on_app_removed(s, i));
        }
        self.reservations.app_removed(idx);
        self.reserved.clear_app(idx);
        let app = self.state.take_app(idx);
        if runnable {
            let (pending, pending_resources) = (app.asks.pending_containers(), app.asks.pending_resources());
            self.state.roll_up(app.queue, |p| {
                p.pending_containers -= pending;
                p.pending_resources -= pending_resources;
                p.runnable_apps -= 1;
            });
        }
        let q = &mut self.state.queues[app.queue];
        q.am_usage -= app.am_resources;
        if runnable {
            self.order.touch(app.queue);
            q.pending_containers -= app.asks.pending_containers();
            q.pending_resources -= app.asks.pending_resources();
            if !app.started {
                q.apps_waiting_for_am -= 1;
            }
            q.apps.retain(|&s| s != idx);
            if let Some(n) = self.user_running.get_mut(&app.user) {
                *n -= 1;
                if *n == 0 {
                    self.user_running.remove(&app.user);
                }
            }
        } else {
            q.waiting.retain(|&s| s != idx);
        }
        debug!(app = key, queue = q.name(), "app removed");
        if runnable {
            self.promote_waiting();
        }
        self.remove_if_done(app.queue);
        Ok(())
    }

    /// Applies an `allocate()` call's asks (atomically) and blacklist changes.
    pub fn update_asks(
        &mut self,
        key: AppKey,
        asks: &[Ask],
        blacklist_additions: &[LocationId],
        blacklist_removals: &[LocationId],
    ) -> Result<()> {
        let idx = *self.state.app_index.get(&key).ok_or(CoreError::UnknownApp(key))?;
        let settings = self.settings;
        let app = self.state.app_mut(idx);
        let (old_n, old_r) = (app.asks.pending_containers(), app.asks.pending_resources());
        app.asks.update(key, asks, &settings)?;
        app.asks.update_blacklist(blacklist_additions, blacklist_removals);
        self.state.reindex_app(idx);
        let app = self.state.app(idx);
        if !app.runnable {
            // A waiting app's asks become its queue's demand once it may run.
            return Ok(());
        }
        let (new_n, new_r, qi) = (app.asks.pending_containers(), app.asks.pending_resources(), app.queue);
        let q = &mut self.state.queues[qi];
        q.pending_containers = q.pending_containers - old_n + new_n;
        self.order.touch(qi);
        q.pending_resources = q.pending_resources - old_r + new_r;
        self.state.roll_up(qi, |p| {
            p.pending_containers = p.pending_containers - old_n + new_n;
            p.pending_resources = p.pending_resources - old_r + new_r;
        });
        self.tell_app_policy(idx, |p, s, i| p.on_app_updated(s, i));
        Ok(())
    }

    /// Stores what the app's ApplicationMaster says about its job (a [`crate::hints`] JSON
    /// document: its DAG, progress, or both). On any error the app keeps its previous hints,
    /// or none, and is scheduled as before.
    pub fn set_hints(&mut self, key: AppKey, json: &str) -> Result<HintsReply> {
        let idx = *self.state.app_index.get(&key).ok_or(CoreError::UnknownApp(key))?;
        let app = self.state.app_mut(idx);
        let reply = crate::hints::apply(key, json, &mut app.hints, &app.asks)?;
        if self.state.app(idx).runnable {
            self.tell_app_policy(idx, |p, s, i| p.on_app_updated(s, i));
        }
        self.reservations.hints_changed(&self.state, idx);
        let mut reply = reply;
        reply.stragglers = self.reservations.straggler_candidates(&self.state, idx);
        for a in &reply.stragglers {
            reply.advisories.push(format!(
                "stage '{}' has {} idle reserved slots: containers {:?} may run copies at priority {}",
                a.stage,
                a.idle_slots,
                a.containers,
                a.priority.map_or("(none hinted)".to_string(), |p| p.to_string())
            ));
        }
        reply.partitions = self.partition_advice(idx);
        debug!(app = key, revision = reply.revision, stages = reply.stages, "hints accepted");
        Ok(reply)
    }

    /// Runtime partitioning advice for the app's stages that have not started, when a target
    /// task runtime is configured.
    fn partition_advice(&self, idx: AppIdx) -> Vec<PartitionAdvice> {
        let (Some(target), Some(h)) = (self.queue_file.uwfq.target_task_sec, self.state.app(idx).hints.as_ref()) else {
            return Vec::new();
        };
        h.dag
            .stages()
            .iter()
            .filter(|st| st.tasks > 0 && st.finished == 0 && st.running == 0)
            .filter_map(|st| {
                let runtime = st.tasks as f64 * st.duration_ms as f64 / 1000.0;
                let n = crate::uwfq::partition_count(runtime, target, crate::hints::MAX_TASKS as u32).ok()?;
                Some(PartitionAdvice { stage: st.id.clone(), tasks: st.tasks, advised_tasks: n })
            })
            .collect()
    }

    /// Straggler copies the app may run now on its idle reserved slots (see
    /// [`HintsReply::stragglers`]); empty for unknown apps and apps without reservations.
    pub fn straggler_candidates(&self, key: AppKey) -> Vec<StragglerAdvice> {
        match self.state.app_index.get(&key) {
            Some(&idx) => self.reservations.straggler_candidates(&self.state, idx),
            None => Vec::new(),
        }
    }

    /// Every location id the scheduler refers to (node hosts and racks, ask entries and
    /// blacklists), sorted, without repeats. A host that interns names may give any other id to
    /// a new name: nothing here will read it under the old one.
    pub fn locations_in_use(&self) -> Vec<LocationId> {
        let nodes = self.state.nodes.iter().flatten().flat_map(|n| [n.host, n.rack]);
        let apps = self.state.apps.iter().flatten().flat_map(|a| a.asks.locations());
        let mut ids: Vec<LocationId> = nodes.chain(apps).collect();
        ids.sort_unstable();
        ids.dedup();
        ids
    }

    /// Slot reservation holds on a node, oldest first.
    pub fn holds(&self, node: NodeId) -> &[Hold] {
        self.reservations.holds(node)
    }

    /// Whether any queue has slot reservation on.
    pub fn reserves_slots(&self) -> bool {
        self.reserving
    }

    /// The next time the scheduler needs a call although no event arrives: a burst deadline
    /// or a reservation expiry. Hosts that drive time themselves (the simulator) call then
    /// instead of polling; `None` when nothing is due.
    pub fn next_call_ms(&self) -> Option<i64> {
        let holds = if self.reserving { self.reservations.next_expiry_ms() } else { None };
        [self.policy.next_event_ms(), holds].into_iter().flatten().min()
    }

    /// Holds on all nodes.
    pub fn hold_count(&self) -> usize {
        self.reservations.hold_count()
    }

    /// An app's reservations as status shows them (None when it has made none).
    pub fn reservation_view(&self, key: AppKey) -> Option<AppReservationView> {
        self.reservations.view(*self.state.app_index.get(&key)?)
    }

    /// Feeds a container's end to slot reservation: its stage decides about its slot, or an
    /// app pre-reserving takes it.
    fn reservation_ended(&mut self, id: AllocationId, a: &Allocation) {
        let tier = match self.state.apps.get(a.app) {
            // Only a stage's slot becomes a hold at the app's tier: spare the policy otherwise.
            Some(Some(app)) if a.stage_task.is_some() => self.tier(app.queue),
            Some(Some(_)) => u8::MAX,
            _ => return,
        };
        self.reservations.container_ended(&self.state, id, a, true, tier);
    }

    /// Sets app `key`'s application priority (YARN's, set at submission or changed with
    /// `yarn application -updatePriority`): a queue's apps are tried highest priority first,
    /// then in submission order, by every app policy that walks its queue's pending apps in
    /// order (FIFO, and the tie-breaks of the others). Apps held back by the running-apps
    /// limits still become runnable in submission order.
    pub fn set_app_priority(&mut self, key: AppKey, priority: i32) -> Result<()> {
        let idx = *self.state.app_index.get(&key).ok_or(CoreError::UnknownApp(key))?;
        self.state.set_app_priority(idx, priority);
        self.tell_app_policy(idx, |p, s, i| p.on_app_updated(s, i));
        debug!(app = key, priority, "app priority set");
        Ok(())
    }

    /// Frees one allocation. Returns false (and logs) when the id is unknown, which makes the
    /// call idempotent: YARN may report a container's end more than once. An allocation the
    /// AM releases counts as its task's end for slot reservation.
    pub fn release(&mut self, id: AllocationId) -> bool {
        let Some(a) = self.release_allocation(id) else {
            debug!(allocation = id, "release of unknown allocation ignored");
            return false;
        };
        if self.reserving {
            self.reservation_ended(id, &a);
        }
        true
    }

    /// Frees the allocations app `key` gave up (its ApplicationMaster's releases). The whole list
    /// is checked before anything is freed, so a refused list frees nothing: the app must be
    /// known, and an id of a live allocation of another app is refused, naming it. An id of no
    /// live allocation is skipped, as [`Scheduler::release`] skips it: its container may have
    /// ended already. Returns how many were freed.
    pub fn release_for_app(&mut self, key: AppKey, ids: &[AllocationId]) -> Result<usize> {
        if !self.state.app_index.contains_key(&key) {
            return Err(CoreError::UnknownApp(key));
        }
        for &id in ids {
            if let Some(a) = self.state.allocations.get(&id) {
                let owner = self.state.app(a.app).key;
                if owner != key {
                    return Err(CoreError::InvalidRequest {
                        app: key,
                        reason: format!("release of allocation {id}, which belongs to application {owner}"),
                    });
                }
            }
        }
        Ok(ids.iter().filter(|&&id| self.release(id)).count())
    }

    /// Frees every allocation matching `pred` (a scan: for node removal, not heartbeats).
    /// Returns how many there were.
    fn release_where(&mut self, pred: impl Fn(&Allocation) -> bool) -> usize {
        let ids: Vec<AllocationId> = self.state.allocations.iter().filter(|(_, a)| pred(a)).map(|(&k, _)| k).collect();
        for &aid in &ids {
            self.release_allocation(aid);
        }
        ids.len()
    }

    /// Frees one allocation; returns it, or `None` when the id is unknown.
    fn release_allocation(&mut self, id: AllocationId) -> Option<Allocation> {
        let a = self.state.remove_allocation(id)?;
        if let Some(node) = self.state.node_mut(a.node) {
            node.allocated -= a.resources;
            node.containers -= 1;
        }
        let app = self.state.app_mut(a.app);
        app.usage -= a.resources;
        app.running_containers -= 1;
        let qi = app.queue;
        let now = self.state.now_ms;
        let q = &mut self.state.queues[qi];
        q.integrate(now);
        q.usage -= a.resources;
        q.running_containers -= 1;
        self.order.touch(qi);
        self.state.roll_up(qi, |p| {
            p.usage -= a.resources;
            p.running_containers -= 1;
        });
        Some(a)
    }

    /// Books a container that already runs on `node` for app `key` (reported by a NodeManager
    /// after a ResourceManager restart, or fed again after the scheduler was rebuilt) exactly
    /// as a heartbeat books a new one, under a fresh allocation id, which it returns. It takes
    /// nothing from the app's asks or its queue's pending counts: the container was granted
    /// before, and the ApplicationMaster sends its outstanding asks again itself. It counts for
    /// no stage of slot reservation.
    ///
    /// Running work is never refused: a container that does not fit the node's free space is
    /// adopted all the same (logged), and slot reservation holds on the node give way to it.
    /// Everything is checked before anything changes.
    pub fn adopt(
        &mut self,
        key: AppKey,
        node: NodeId,
        priority: Priority,
        resources: Resources,
    ) -> Result<AllocationId> {
        let app_idx = self.check_booking(key, node, "adopted", &resources)?;
        let n = self.state.node(node).expect("checked above");
        if !(n.allocated + resources).fits_in(&n.capacity) {
            warn!(app = key, node, %resources, allocated = %n.allocated, capacity = %n.capacity,
                  "adopted container overcommits its node");
        }
        let id = self.book(node, app_idx, priority, resources, Origin::Adopted);
        if self.reserving {
            self.reservations.make_room(&self.state, node, None);
        }
        debug!(app = key, node, allocation = id, %resources, "container adopted");
        Ok(id)
    }

    /// Books a container that a placer outside the heartbeat put on `node` for app `key`: Hadoop
    /// 3's placement-constraint processor picks nodes by an app's affinity and anti-affinity
    /// and asks the scheduler only whether the app may have the container there now. As
    /// CapacityScheduler commits such a placement, it is taken when it fits the node's free
    /// space (slot-reservation holds and container reservations excluded) and the queue chain's
    /// limits; the queue order is not consulted, and the container counts against the queue's
    /// share like any other, so the ordinary asks keep the queues fair. Returns `Ok(None)` when
    /// it does not fit: the processor then tries another node. Takes nothing from the app's
    /// asks, which such requests never entered.
    pub fn place(
        &mut self,
        key: AppKey,
        node: NodeId,
        priority: Priority,
        resources: Resources,
    ) -> Result<Option<AllocationId>> {
        let app_idx = self.check_booking(key, node, "placed", &resources)?;
        let qi = self.state.app(app_idx).queue;
        let room = if self.reserved.on(node).is_some() {
            Resources::ZERO
        } else {
            self.within_headroom(qi, self.free_on(node))
        };
        if !resources.fits_in(&room) {
            debug!(app = key, node, %resources, %room, "placed container refused: no room");
            return Ok(None);
        }
        let id = self.book(node, app_idx, priority, resources, Origin::Placed);
        debug!(app = key, node, allocation = id, %resources, "placed container booked");
        Ok(Some(id))
    }

    /// What booking one container outside a heartbeat (`kind`: adopted or placed) needs: the
    /// app and node are known, the resources valid and an allocation id left. Returns the app.
    fn check_booking(&self, key: AppKey, node: NodeId, kind: &str, resources: &Resources) -> Result<AppIdx> {
        let app_idx = *self.state.app_index.get(&key).ok_or(CoreError::UnknownApp(key))?;
        self.state.node(node).ok_or(CoreError::UnknownNode(node))?;
        check_resources(&format!("{kind} container of application {key}"), resources)?;
        if self.state.next_allocation_id.saturating_add(1) > MAX_ALLOCATION_ID {
            return Err(CoreError::InvalidInput("allocation ids exhausted (2^40); restart the scheduler".into()));
        }
        Ok(app_idx)
    }

    /// Free space on node `id` as an app without holds there sees it (zero for unknown nodes).
    pub fn free_on(&self, id: NodeId) -> Resources {
        self.state.node(id).map_or(Resources::ZERO, |n| self.reservations.free_on(n))
    }

    /// Resources held on node `id` by slot reservations.
    pub fn reserved_on(&self, id: NodeId) -> Resources {
        self.reservations.reserved_on(id)
    }

    /// One node heartbeat: frees `completed`, then starts what the policies choose on the node,
    /// appending the decisions to `out`. Returns how many were appended. The phases:
    /// 1. check: everything that can fail is checked before anything changes, so an error
    ///    leaves the state as it was and a heartbeat applies all its decisions or none;
    /// 2. clock and completions: time advances, then completed containers are freed;
    /// 3. the policies refresh their time-driven state;
    /// 4. slot reservation's hook: ended containers reach their stages, due holds expire, and
    ///    apps holding slots here are served first;
    /// 5. the queue policy orders the queues and the app policy proposes placements, reading
    ///    the state only.
    ///
    /// Every container starts through `commit`, the one path that books it.
    pub fn node_heartbeat(
        &mut self,
        node_id: NodeId,
        now_ms: i64,
        completed: &[AllocationId],
        out: &mut Vec<Decision>,
        max_decisions: usize,
    ) -> Result<usize> {
        let limit = max_decisions.min(self.settings.max_assign_per_heartbeat as usize);
        let at = self.check_heartbeat(node_id, limit)?;
        self.advance_clock(now_ms);
        self.ended.clear();
        for &id in completed {
            match self.release_allocation(id) {
                Some(a) if self.reserving => self.ended.push((id, a)),
                Some(_) => {}
                None => warn!(allocation = id, node = node_id, "completed container is not a known allocation"),
            }
        }
        self.policy.begin_heartbeat(&self.state, now_ms);
        for (_, p) in &mut self.app_policies {
            p.begin_heartbeat(&self.state, now_ms);
        }
        let mut made = 0;
        if limit > 0 && self.reserved.on(node_id).is_some() {
            let blocked;
            (made, blocked) = self.serve_reserved(at, out);
            if blocked {
                if self.history.due(self.state.now_ms) {
                    self.history.sample(&self.state, self.policy.as_ref());
                }
                return Ok(made);
            }
        }
        if self.reserving {
            let ended = std::mem::take(&mut self.ended);
            for (id, a) in &ended {
                self.reservation_ended(*id, a);
            }
            self.ended = ended;
            self.reservations.expire(node_id, self.state.now_ms);
            made += self.serve_holds(at, limit - made, out);
        }
        if made < limit {
            made += self.serve_queues(at, limit - made, out);
        }
        if self.history.due(self.state.now_ms) {
            self.history.sample(&self.state, self.policy.as_ref());
        }
        Ok(made)
    }

    /// Phase 1 of a heartbeat: the node is known and allocation ids suffice for `limit`
    /// decisions.
    fn check_heartbeat(&self, node_id: NodeId, limit: usize) -> Result<Target> {
        let node = self.state.node(node_id).ok_or(CoreError::UnknownNode(node_id))?;
        if self.state.next_allocation_id.saturating_add(limit as u64) > MAX_ALLOCATION_ID {
            return Err(CoreError::InvalidInput("allocation ids exhausted (2^40); restart the scheduler".into()));
        }
        Ok(Target { node: node_id, host: node.host, rack: node.rack })
    }

    /// Moves the clock forward (never back). It advances before completed containers are
    /// freed, so usage integrals count them up to this heartbeat rather than the previous one.
    fn advance_clock(&mut self, now_ms: i64) {
        if self.state.now_ms == 0 && now_ms > 0 {
            // The first clock reading: queues made before it start their history now.
            for q in &mut self.state.queues {
                q.created_ms = now_ms;
                q.integrated_until_ms = now_ms;
            }
        }
        self.state.now_ms = self.state.now_ms.max(now_ms);
    }

    /// The reservation on the node first: its ask starts when it fits, or the reservation ends
    /// when the app no longer asks for it. Returns the decisions made (at most one) and whether
    /// the node stays reserved, and so starts nothing else.
    fn serve_reserved(&mut self, at: Target, out: &mut Vec<Decision>) -> (usize, bool) {
        let Some(r) = self.reserved.on(at.node) else { return (0, false) };
        let app = self.state.app(r.app);
        let Some(p) = container_reservation::still_asked(app, at.host, at.rack, &r) else {
            self.reserved.clear_node(at.node);
            let key = app.key;
            debug!(app = key, node = at.node, "reservation ended: no longer asked for");
            out.push(Decision {
                kind: DecisionKind::Unreserve,
                allocation_id: 0,
                app: key,
                priority: r.priority,
                locality: Locality::OffSwitch,
                resources: r.resources,
            });
            return (1, false);
        };
        let room = self.within_headroom(app.queue, self.free_on(at.node));
        if !p.resources.fits_in(&room) {
            return (0, true);
        }
        self.reserved.clear_node(at.node);
        out.push(self.commit(at, r.app, p));
        (1, false)
    }

    /// Offers the holds on the node to their apps first: an app's highest-priority ask that
    /// fits all its holds on the node plus the node's free space takes them (the next stage's
    /// task, or a straggler copy), using up holds, oldest first, until the container fits
    /// outside the rest. Several small held slots can thus make one bigger container of a
    /// downstream stage. Returns how many containers started.
    fn serve_holds(&mut self, at: Target, limit: usize, out: &mut Vec<Decision>) -> usize {
        let mut made = 0;
        let mut i = 0;
        while made < limit && i < self.reservations.holds(at.node).len() {
            let app = self.reservations.holds(at.node)[i].app;
            let free = self.free_on(at.node) + self.reservations.held_for(at.node, app);
            let Some(p) = self.state.app(app).asks.find(at.host, at.rack, &free) else {
                i += 1;
                continue;
            };
            // Holds before `i` belong to apps that took nothing: `i` is the app's oldest.
            self.reservations.remove_hold_at(at.node, i);
            while !p.resources.fits_in(&self.free_on(at.node)) {
                let Some(j) = self.reservations.holds(at.node).iter().position(|h| h.app == app) else { break };
                self.reservations.remove_hold_at(at.node, j);
            }
            out.push(self.commit(at, app, p));
            made += 1;
        }
        made
    }

    /// Offers the node to queues in the queue policy's order; the app policy of the queue on
    /// top proposes a placement, which starts. Returns how many containers started.
    fn serve_queues(&mut self, at: Target, limit: usize, out: &mut Vec<Decision>) -> usize {
        let mut free = self.free_on(at.node);
        // Keys depend on a queue's own state, so a heartbeat re-keys only the queues that
        // changed (or, where the order cannot be kept, heapifies all in O(Q)) and then the
        // queue it served: O(D log Q) for D decisions.
        let hierarchical = self.state.hierarchical();
        let keep = self.policy.keys_follow_queue_state() && !hierarchical;
        self.order.prepare(&self.state, self.policy.as_ref(), keep);
        // In a tree, serving a leaf raises its ancestors' shares and so the keys of its
        // relatives, which stay in the heap with their old keys. Keys only grow during the
        // loop, so an entry whose key is stale is an underestimate: re-key it when it comes up
        // and take the top only when its key is current.
        let mut fair: Option<FairShares> = None;
        let mut made = 0;
        while made < limit {
            let Some((qi, key)) = self.order.first() else { break };
            if hierarchical {
                let current = PathKey::of(&self.state, qi, self.policy.queue_key(&self.state, qi));
                if current != key {
                    self.order.rekey_first(current, qi);
                    continue;
                }
            }
            // Holds of a lower priority (higher tier) than this queue's are free for it.
            let overridable = if self.reserving && !self.reservations.reserved_on(at.node).is_zero() {
                self.reservations.overridable(at.node, key.tier)
            } else {
                Resources::ZERO
            };
            let room = self.within_headroom(qi, free + overridable);
            let q = &self.state.queues[qi];
            let am_room =
                self.queue_file.limits.max_am_share(&q.config.limits, self.settings.default_max_am_share).map(
                    |share| {
                        let fair = fair.get_or_insert_with(|| FairShares::of(&self.state));
                        let fair_share = limits::fraction_of(&self.state.capacity, fair.of_queue(q));
                        limits::am_room(&fair_share, share, &q.am_usage)
                    },
                );
            let offer = NodeOffer { node: at.node, host: at.host, rack: at.rack, free: room, am_room };
            let app_policy = &mut self.app_policies[self.leaf_app_policy[qi]].1;
            let Some((app, p)) = app_policy.select(&self.state, qi, &offer) else {
                if let Some(r) = self.reservation_candidate(at, qi, &room) {
                    // The queue first in line waits for this node: it is reserved and starts
                    // nothing else meanwhile.
                    self.reserved.reserve(at.node, r);
                    let key = self.state.app(r.app).key;
                    debug!(app = key, node = at.node, resources = %r.resources, "node reserved");
                    out.push(Decision {
                        kind: DecisionKind::Reserve,
                        allocation_id: 0,
                        app: key,
                        priority: r.priority,
                        locality: Locality::OffSwitch,
                        resources: r.resources,
                    });
                    made += 1;
                    break;
                }
                self.order.pass_first(qi);
                continue;
            };
            debug_assert!(p.resources.fits_in(&offer.free), "app policy placed more than the node has free");
            out.push(self.commit(at, app, p));
            if p.resources.fits_in(&free) {
                free -= p.resources;
            } else {
                // The container took space held for lower-priority apps: those holds end.
                self.reservations.make_room(&self.state, at.node, Some(key.tier));
                free = self.free_on(at.node);
            }
            made += 1;
            self.order.requeue_first(&self.state, self.policy.as_ref(), qi);
        }
        self.order.finish(&self.state, self.policy.as_ref());
        made
    }

    /// `r` cut to what leaf `qi` and its ancestors may still take under their `<maxResources>`
    /// (the walk up the tree is skipped when no queue has one).
    #[inline]
    fn within_headroom(&self, qi: QueueIdx, r: Resources) -> Resources {
        if !self.capped {
            return r;
        }
        Self::with_chain(&self.state, qi, limits::headroom).map_or(r, |headroom| r.min(&headroom))
    }

    /// What queue `qi`, which can start nothing within `room` on the node, reserves the node
    /// for, if reservations are on and it has such an ask ([`container_reservation::candidate`]).
    fn reservation_candidate(&self, at: Target, qi: QueueIdx, room: &Resources) -> Option<ReservedContainer> {
        // A node without room for the smallest container starts nothing for anyone: only room
        // that smaller asks would take is worth holding.
        if !self.settings.reserve_containers || !self.settings.min_allocation.fits_in(room) {
            return None;
        }
        let cap = self.within_headroom(qi, self.state.node(at.node)?.capacity);
        container_reservation::candidate(&self.state, &self.reserved, qi, at.host, at.rack, room, &cap)
    }

    /// The one path that starts a container: books it (see `book`) and returns what the host
    /// materialises. Cannot fail: the heartbeat checked everything first.
    fn commit(&mut self, at: Target, app_idx: AppIdx, p: Placement) -> Decision {
        let Placement { priority, locality, resources } = p;
        let origin = Origin::Ask { locality, host: at.host, rack: at.rack };
        let id = self.book(at.node, app_idx, priority, resources, origin);
        Decision {
            kind: DecisionKind::Start,
            allocation_id: id,
            app: self.state.app(app_idx).key,
            priority,
            locality,
            resources,
        }
    }

    /// Books a running container under a fresh allocation id: on the node, the app and its queue
    /// (usage, counts, the queue's usage integral and its turn), and, for a container placed on
    /// an ask, the app's asks and the queue's pending counts, and its stage when the app
    /// reserves slots. The caller has checked that the node, the app and an id exist.
    fn book(
        &mut self,
        node: NodeId,
        app_idx: AppIdx,
        priority: Priority,
        resources: Resources,
        origin: Origin,
    ) -> AllocationId {
        let id = self.state.next_allocation_id;
        self.state.next_allocation_id += 1;
        let n = self.state.node_mut(node).expect("the caller checked the node");
        n.allocated += resources;
        n.containers += 1;
        let app = self.state.app_mut(app_idx);
        let first = !app.started;
        if let Origin::Ask { locality, host, rack } = origin {
            app.asks.allocate(priority, locality, host, rack);
        }
        app.usage += resources;
        app.running_containers += 1;
        app.started = true;
        if first {
            app.am_resources = resources;
        }
        let qi = app.queue;
        let now = self.state.now_ms;
        let q = &mut self.state.queues[qi];
        q.integrate(now);
        q.usage += resources;
        q.last_served = id;
        self.order.touch(qi);
        q.running_containers += 1;
        if let Origin::Ask { .. } = origin {
            q.pending_containers -= 1;
            q.pending_resources -= resources;
        }
        if first {
            q.apps_waiting_for_am -= 1;
            q.am_usage += resources;
        }
        let pending = matches!(origin, Origin::Ask { .. });
        self.state.roll_up(qi, |p| {
            p.usage += resources;
            p.running_containers += 1;
            if pending {
                p.pending_containers -= 1;
                p.pending_resources -= resources;
            }
        });
        let stage_task = match origin {
            Origin::Ask { .. } if self.reserving => self.reservation_started(app_idx, id, node, priority, resources),
            _ => None,
        };
        self.state.insert_allocation(id, Allocation { app: app_idx, node, priority, resources, stage_task, slot: 0 });
        self.state.reindex_app(app_idx);
        id
    }

    /// Registers a started container with its stage when the app reserves slots.
    fn reservation_started(
        &mut self,
        idx: AppIdx,
        id: AllocationId,
        node: NodeId,
        priority: Priority,
        resources: Resources,
    ) -> Option<StageTask> {
        let app = self.state.app(idx);
        let settings = self.queue_file.slot_reservation_for(&self.state.queues[app.queue].config)?;
        if app.hints.is_none() {
            // The first container is the AM's, which sends hints only once it runs.
            if app.running_containers > 1 {
                let key = app.key;
                self.reservations.warn_unhinted(key);
            }
            return None;
        }
        self.reservations.task_started(&self.state, idx, settings, id, node, priority, resources)
    }
}

/// The live queues as placement sees them: the root and the configured parents, and the leaves.
struct LiveQueues<'a>(&'a ClusterState);

impl placement::Queues for LiveQueues<'_> {
    fn full_name(&self, name: &str) -> String {
        config::full_queue_name(name)
    }

    fn kind(&self, full: &str) -> Option<QueueType> {
        if self.0.parent_index.contains_key(full) {
            return Some(QueueType::Parent);
        }
        self.0.queue_by_name(full).filter(|q| !q.retired).map(|_| QueueType::Leaf)
    }
}
