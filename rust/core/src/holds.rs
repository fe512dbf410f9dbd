//! Slot reservation inside the scheduler: the node-level holds that carry out what each
//! [`StageReservation`] decides (the speculative slot reservation paper's Algorithm 1), for apps of queues with
//! `<slot-reservation>` that sent DAG hints.
//!
//! - Every container such an app starts is a task of the stage its priority maps to (the
//!   first unfinished runnable stage at that priority, per the hints). When it ends (reported
//!   by a node heartbeat or released by the AM) the stage decides: hold the slot on its node
//!   until the deadline D, release it, and possibly pre-reserve `n - m` slots for a wider
//!   downstream stage. A container that disappears with its node ends without a duration.
//! - A hold is a [`Hold`] in its node's list. This module alone owns holds and their per-node
//!   sums ([`Reservations::reserved_on`]); it reads the cluster state and never writes it, and
//!   [`Reservations::free_on`] is a node's free space as an app without holds there sees it.
//! - Pre-reservation takes the next slots other apps' containers free, on any node, sized by
//!   the downstream stage's hinted demand (or the freed container when the demand is unknown).
//! - Holds carry the tier of the app's queue when they were made (see [`crate::config`] for
//!   the priority rule); they end when the app uses them, at their deadline, when a strictly
//!   higher priority overrides them, or with their app, node or DAG.

use crate::dag::StageIdx;
use crate::hints::{AppHints, StragglerAdvice};
use crate::ids::Priority;
use crate::ids::{AllocationId, AppIdx, AppKey, NodeId};
use crate::reservation::{Completion, Ended, ReservationSettings, Slot, SlotAction, StageReservation, StageTask};
use crate::resource::Resources;
use crate::state::{Allocation, ClusterState, Node};
use rustc_hash::{FxHashMap, FxHashSet};
use serde::Serialize;
use tracing::{debug, info};

/// Resources held on a node for one app.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Hold {
    pub app: AppIdx,
    /// The stage whose finished task left this slot; `None` for a pre-reserved slot.
    pub stage: Option<StageIdx>,
    pub resources: Resources,
    /// Expiry in scheduler milliseconds (`i64::MAX`: until used, when P = 1).
    pub until_ms: i64,
    /// Tier of the app's queue when the hold was made: only a strictly lower tier overrides it.
    pub tier: u8,
}

/// Slots still to pre-reserve for a downstream stage.
#[derive(Copy, Clone, Debug)]
struct PreReserving {
    remaining: u32,
    until_ms: i64,
    /// Size of one slot: the downstream stage's hinted demand, zero when not given.
    demand: Resources,
    tier: u8,
}

struct StageState {
    reservation: StageReservation,
    /// The downstream stage with the most tasks; its demand sizes pre-reserved slots.
    next: Option<StageIdx>,
}

struct AppReservations {
    key: AppKey,
    settings: ReservationSettings,
    dag_revision: u64,
    stages: Vec<Option<StageState>>,
    /// [`stage_for`] by priority since the last hints update (which may finish stages), so
    /// that a container start reads no hints.
    stage_at: Vec<(Priority, Option<StageIdx>)>,
    pre: Option<PreReserving>,
    /// One entry per hold of the app (a node may repeat).
    held_on: Vec<NodeId>,
    /// The stage whose task ended last: its Eq. (4) bound is the app's in status.
    last_stage: Option<StageIdx>,
}

/// What status shows about an app's reservations.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AppReservationView {
    pub app: AppKey,
    pub isolation_probability: f64,
    pub held_slots: usize,
    pub reserved_memory_mb: i64,
    pub reserved_vcores: i64,
    /// Slots still to pre-reserve for a wider downstream stage.
    pub pre_reserve_remaining: u32,
    /// Eq. (4) for the stage that reserved last, with its current Pareto fit: the expected
    /// utilization its held slots keep at least.
    pub utilization_bound: Option<f64>,
    /// The Pareto shape in use for that stage.
    pub pareto_shape: Option<f64>,
}

/// The holds on one node, oldest first, and their sum.
#[derive(Default)]
struct NodeHolds {
    holds: Vec<Hold>,
    reserved: Resources,
}

#[derive(Default)]
pub struct Reservations {
    /// Nodes that have holds, by node id: an entry goes with its last hold, so the map is as
    /// large as the nodes holding slots, whatever their ids.
    nodes: FxHashMap<NodeId, NodeHolds>,
    apps: Vec<Option<AppReservations>>,
    /// Apps with slots to pre-reserve, in the order they started pre-reserving.
    prereserving: Vec<AppIdx>,
    /// Apps told once that they reserve nothing without hints.
    warned: FxHashSet<AppKey>,
    holds: usize,
}

fn to_ms(sec: f64) -> i64 {
    if sec.is_finite() {
        (sec * 1000.0).ceil() as i64
    } else {
        i64::MAX
    }
}

/// The stage a container at `priority` counts for: the first unfinished runnable stage
/// requested at that priority, else the first stage at it.
pub fn stage_for(hints: &AppHints, priority: Priority) -> Option<StageIdx> {
    let at = hints.stages_at(priority);
    let dag = &hints.dag;
    at.iter().copied().find(|&s| !dag.stage(s).is_done() && dag.is_runnable(s)).or(at.first().copied())
}

impl Reservations {
    /// Sum of the holds on `node`.
    #[inline]
    pub fn reserved_on(&self, node: NodeId) -> Resources {
        self.nodes.get(&node).map_or(Resources::ZERO, |n| n.reserved)
    }

    /// Free space on `n` as an app without a hold there sees it; negative dimensions become
    /// zero (a node shrunk under its running load).
    #[inline]
    pub fn free_on(&self, n: &Node) -> Resources {
        n.capacity.saturating_sub(&(n.allocated + self.reserved_on(n.id)))
    }

    pub fn holds(&self, node: NodeId) -> &[Hold] {
        self.nodes.get(&node).map_or(&[], |n| n.holds.as_slice())
    }

    /// The earliest time a hold expires or a pre-reservation window closes.
    pub fn next_expiry_ms(&self) -> Option<i64> {
        let holds = self.nodes.values().flat_map(|n| &n.holds).map(|h| h.until_ms);
        let pre = self.prereserving.iter().filter_map(|&a| Some(self.apps.get(a)?.as_ref()?.pre?.until_ms));
        holds.chain(pre).filter(|&t| t != i64::MAX).min()
    }

    /// Holds on all nodes.
    pub fn hold_count(&self) -> usize {
        self.holds
    }

    /// Sum of the holds on `node` kept for app `app`.
    pub fn held_for(&self, node: NodeId, app: AppIdx) -> Resources {
        self.holds(node).iter().filter(|h| h.app == app).fold(Resources::ZERO, |acc, h| acc + h.resources)
    }

    /// Sum of the holds on `node` that a queue of tier `tier` may override.
    #[inline]
    pub fn overridable(&self, node: NodeId, tier: u8) -> Resources {
        let mut r = Resources::ZERO;
        for h in self.holds(node) {
            if h.tier > tier {
                r += h.resources;
            }
        }
        r
    }

    /// Adds a hold if the node has room for it outside every other allocation and hold.
    fn add_hold(&mut self, state: &ClusterState, node: NodeId, hold: Hold) -> bool {
        let Some(n) = state.node(node) else { return false };
        if !hold.resources.fits_in(&self.free_on(n)) || hold.resources.is_zero() {
            return false;
        }
        let Some(Some(app)) = self.apps.get_mut(hold.app) else { return false };
        app.held_on.push(node);
        let on = self.nodes.entry(node).or_default();
        on.reserved += hold.resources;
        on.holds.push(hold);
        self.holds += 1;
        true
    }

    /// Removes the `i`-th hold of `node` (its resources become free) and forgets its slot in
    /// its stage.
    pub fn remove_hold_at(&mut self, node: NodeId, i: usize) -> Hold {
        let h = self.take_hold(node, i);
        self.forget(node, &h);
        h
    }

    /// Takes the `i`-th hold of `node` off the node's list and sums, and the node's entry with
    /// its last hold.
    fn take_hold(&mut self, node: NodeId, i: usize) -> Hold {
        let on = self.nodes.get_mut(&node).expect("a hold on the node");
        let h = on.holds.remove(i);
        on.reserved -= h.resources;
        if on.holds.is_empty() {
            self.nodes.remove(&node);
        }
        self.holds -= 1;
        h
    }

    /// The app-side bookkeeping of a hold that is gone.
    fn forget(&mut self, node: NodeId, h: &Hold) {
        let Some(Some(app)) = self.apps.get_mut(h.app) else { return };
        if let Some(pos) = app.held_on.iter().position(|&n| n == node) {
            app.held_on.swap_remove(pos);
        }
        if let Some(Some(st)) = h.stage.and_then(|s| app.stages.get_mut(s)) {
            st.reservation.drop_slot(&Slot { node, resources: h.resources });
        }
    }

    /// Drops the holds of `node` that are due at `now_ms`.
    pub fn expire(&mut self, node: NodeId, now_ms: i64) {
        let mut i = 0;
        while i < self.holds(node).len() {
            if self.holds(node)[i].until_ms <= now_ms {
                let h = self.remove_hold_at(node, i);
                debug!(node, app = h.app, "slot reservation expired");
            } else {
                i += 1;
            }
        }
    }

    /// After a container of tier `tier` went onto `node` past its free space, drops holds that
    /// tier may override, lowest priority and newest first, until the node's allocations and
    /// holds fit its capacity again. `tier = None` drops any hold (the node shrank).
    pub fn make_room(&mut self, state: &ClusterState, node: NodeId, tier: Option<u8>) {
        loop {
            let Some(n) = state.node(node) else { return };
            if (n.allocated + self.reserved_on(node)).fits_in(&n.capacity) {
                return;
            }
            let holds = self.holds(node);
            let victim = (0..holds.len())
                .filter(|&i| tier.is_none_or(|t| holds[i].tier > t))
                .max_by_key(|&i| (holds[i].tier, i));
            let Some(i) = victim else { return };
            let h = self.remove_hold_at(node, i);
            info!(node, app = h.app, tier = h.tier, by_tier = ?tier, "slot reservation overridden");
        }
    }

    /// Logs once that an app of a reservation queue has no hints and so reserves nothing.
    pub fn warn_unhinted(&mut self, key: AppKey) {
        if self.warned.insert(key) {
            info!(app = key, "slot reservation needs DAG hints; the app is scheduled without reservations");
        }
    }

    fn app_entry(
        &mut self,
        idx: AppIdx,
        key: AppKey,
        settings: ReservationSettings,
        hints: &AppHints,
    ) -> &mut AppReservations {
        if self.apps.len() <= idx {
            self.apps.resize_with(idx + 1, || None);
        }
        let fresh = || AppReservations {
            key,
            settings,
            dag_revision: hints.dag_revision,
            stages: Vec::new(),
            stage_at: Vec::new(),
            pre: None,
            held_on: Vec::new(),
            last_stage: None,
        };
        let e = self.apps[idx].get_or_insert_with(fresh);
        if e.key != key {
            *e = fresh();
        }
        self.apps[idx].as_mut().expect("just set")
    }

    /// The stage an app's container at `priority` counts for, with its reservation state made
    /// on first use; remembered until the app's hints change. `None` when it counts for none.
    fn stage_of(
        &mut self,
        state: &ClusterState,
        idx: AppIdx,
        settings: ReservationSettings,
        priority: Priority,
    ) -> Option<StageIdx> {
        let hints = state.app(idx).hints.as_deref()?;
        let key = state.app(idx).key;
        let e = self.app_entry(idx, key, settings, hints);
        let mut stage = stage_for(hints, priority);
        if let Some(st) = stage {
            if e.stages.len() < hints.dag.len() {
                e.stages.resize_with(hints.dag.len(), || None);
            }
            if e.stages[st].is_none() {
                let dag = &hints.dag;
                let children = dag.children(st);
                let next = children.iter().copied().max_by_key(|&c| dag.stage(c).tasks);
                let next_tasks = if children.len() == 1 { next.map(|c| dag.stage(c).tasks) } else { None };
                match StageReservation::new(settings, dag.stage(st).tasks, next_tasks, children.is_empty()) {
                    Ok(r) => e.stages[st] = Some(StageState { reservation: r, next }),
                    Err(err) => {
                        debug!(app = key, stage = st, error = %err, "stage takes no slot reservation");
                        stage = None;
                    }
                }
            }
        }
        e.stage_at.push((priority, stage));
        stage
    }

    /// A container of a hinted app of a reservation queue started. Returns where it counts,
    /// for its allocation record; `None` when it counts for no stage.
    #[allow(clippy::too_many_arguments)]
    pub fn task_started(
        &mut self,
        state: &ClusterState,
        idx: AppIdx,
        settings: ReservationSettings,
        id: AllocationId,
        node: NodeId,
        priority: Priority,
        resources: Resources,
    ) -> Option<StageTask> {
        let key = state.app(idx).key;
        let now = state.now_ms as f64 / 1000.0;
        let cached = self
            .apps
            .get(idx)
            .and_then(Option::as_ref)
            .filter(|e| e.key == key)
            .and_then(|e| e.stage_at.iter().find(|(p, _)| *p == priority).map(|&(_, stage)| stage));
        let stage = match cached {
            Some(stage) => stage?,
            None => self.stage_of(state, idx, settings, priority)?,
        };
        let e = self.apps[idx].as_mut().expect("stage_of made the app's entry");
        let st = e.stages[stage].as_mut().expect("stage_of made the stage's reservation");
        let slot = Slot { node, resources };
        let entry = match st.reservation.copy_started(id, slot) {
            Some(entry) => {
                debug!(app = key, stage, copy = id, entry, "straggler copy started");
                entry
            }
            None => {
                let entry = st.reservation.task_started(id, slot, now);
                self.release_surplus(state, idx, stage);
                entry
            }
        };
        // Stage indices fit in u32: hints are far smaller.
        Some(StageTask { stage: stage as u32, entry })
    }

    /// A task of `stage` started: the idle slots its parents hold for it that outnumber its
    /// tasks still to start are released. They are surplus once its tasks started on other
    /// space (another node's heartbeat came first) or it is narrower than the holds; kept,
    /// they would sit idle a whole phase or more (until the app ends at P = 1), whereas the
    /// paper holds a slot only until the next phase's task can use it. Only parents whose one
    /// child is `stage` count: a parent's holds may serve any of its children.
    fn release_surplus(&mut self, state: &ClusterState, idx: AppIdx, stage: StageIdx) {
        let Some(hints) = state.app(idx).hints.as_deref() else { return };
        let dag = &hints.dag;
        let Some(Some(app)) = self.apps.get(idx) else { return };
        let stage_of = |s: StageIdx| app.stages.get(s).and_then(Option::as_ref).map(|st| &st.reservation);
        let Some(unstarted) = stage_of(stage).map(StageReservation::unstarted_tasks) else { return };
        let parents = &dag.stage(stage).parents;
        let held_for = |p: &StageIdx| dag.children(*p) == [stage];
        let held: usize =
            parents.iter().filter(|p| held_for(p)).filter_map(|&p| stage_of(p)).map(|r| r.idle_slots().len()).sum();
        let mut surplus = held.saturating_sub(unstarted);
        for &p in parents.iter().filter(|p| held_for(p)) {
            while surplus > 0 {
                let Some(app) = self.apps[idx].as_ref() else { return };
                let Some(slot) = app
                    .stages
                    .get(p)
                    .and_then(Option::as_ref)
                    .and_then(|st| st.reservation.idle_slots().last().copied())
                else {
                    break;
                };
                let hold = |h: &Hold| h.app == idx && h.stage == Some(p) && h.resources == slot.resources;
                // Every idle slot of a stage is one of its holds (forgetting a hold drops its slot).
                let Some(i) = self.holds(slot.node).iter().position(hold) else { break };
                let h = self.remove_hold_at(slot.node, i);
                debug!(app = h.app, node = slot.node, stage = p, "surplus slot reservation released");
                surplus -= 1;
            }
        }
    }

    /// A container ended: `finished` when its task completed (heartbeat report or release by
    /// the AM), not when its node vanished. `tier_of_app` is the current tier of `alloc.app`'s
    /// queue. The container's stage decides (see [`StageReservation::container_ended`]); a
    /// container that counts for no stage of its app (any other app's, or one started before
    /// its DAG was replaced) frees a slot an app may pre-reserve.
    pub fn container_ended(
        &mut self,
        state: &ClusterState,
        id: AllocationId,
        alloc: &Allocation,
        finished: bool,
        tier_of_app: u8,
    ) {
        let now = state.now_ms as f64 / 1000.0;
        let own = alloc.stage_task.and_then(|t| {
            let app = self.apps.get_mut(alloc.app)?.as_mut()?;
            let st = app.stages.get_mut(t.stage as usize)?.as_mut()?;
            let ended = st.reservation.container_ended(t.entry, id, finished, now).ok()?;
            let next = st.next;
            if matches!(ended, Ended::Completed(_)) {
                app.last_stage = Some(t.stage as usize);
            }
            Some((t.stage as usize, next, ended))
        });
        let Some((stage, next, ended)) = own else {
            if finished && !self.prereserving.is_empty() {
                self.pre_reserve_freed(state, alloc);
            }
            return;
        };
        match ended {
            Ended::Completed(c) => self.apply(state, alloc.app, stage, next, c, tier_of_app),
            Ended::Freed(action) => self.apply_slot(state, alloc.app, stage, action, tier_of_app),
            Ended::Lost => {}
        }
    }

    /// Holds a freed slot when its stage says so; a slot without room is forgotten by the
    /// stage, which must not count it as idle. A slot freed once the downstream stage has
    /// started its tasks (the loser of a straggler race, killed after the barrier) is surplus
    /// at once and goes back.
    fn apply_slot(&mut self, state: &ClusterState, idx: AppIdx, stage: StageIdx, action: SlotAction, tier: u8) {
        let SlotAction::Hold { slot: s, until } = action else { return };
        let hold = Hold { app: idx, stage: Some(stage), resources: s.resources, until_ms: to_ms(until), tier };
        if self.add_hold(state, s.node, hold) {
            let next = self.apps[idx].as_ref().and_then(|a| a.stages.get(stage)?.as_ref()?.next);
            if let Some(next) = next {
                self.release_surplus(state, idx, next);
            }
        } else if let Some(Some(st)) = self.apps[idx].as_mut().and_then(|a| a.stages.get_mut(stage)) {
            st.reservation.drop_slot(&s);
        }
    }

    fn apply(
        &mut self,
        state: &ClusterState,
        idx: AppIdx,
        stage: StageIdx,
        next: Option<StageIdx>,
        c: Completion,
        tier: u8,
    ) {
        self.apply_slot(state, idx, stage, c.slot, tier);
        if let Some(pre) = c.pre_reserve {
            let app = self.apps[idx].as_mut().expect("app with a stage");
            let demand = match (next, state.app(idx).hints.as_ref()) {
                (Some(n), Some(h)) if n < h.dag.len() => h.dag.stage(n).demand,
                _ => Resources::ZERO,
            };
            app.pre = Some(PreReserving { remaining: pre.count, until_ms: to_ms(pre.until), demand, tier });
            if pre.count > 0 && !self.prereserving.contains(&idx) {
                self.prereserving.push(idx);
            }
        }
    }

    /// Another app's container freed a slot: the first app still pre-reserving holds it.
    fn pre_reserve_freed(&mut self, state: &ClusterState, freed: &Allocation) {
        let now = state.now_ms;
        let mut i = 0;
        while i < self.prereserving.len() {
            let idx = self.prereserving[i];
            let pre = self.apps.get(idx).and_then(Option::as_ref).and_then(|a| a.pre);
            let Some(pre) = pre.filter(|p| p.remaining > 0 && p.until_ms > now) else {
                self.prereserving.remove(i);
                continue;
            };
            if idx == freed.app {
                i += 1;
                continue;
            }
            let resources = if pre.demand.is_zero() { freed.resources } else { pre.demand };
            let hold = Hold { app: idx, stage: None, resources, until_ms: pre.until_ms, tier: pre.tier };
            if self.add_hold(state, freed.node, hold) {
                let app = self.apps[idx].as_mut().expect("checked");
                let p = app.pre.as_mut().expect("checked");
                p.remaining -= 1;
                debug!(app = app.key, node = freed.node, remaining = p.remaining, "slot pre-reserved");
                if p.remaining == 0 {
                    self.prereserving.remove(i);
                }
            }
            return;
        }
    }

    /// Forgets an app: its holds become free, its pre-reservation ends.
    pub fn app_removed(&mut self, idx: AppIdx) {
        let Some(app) = self.apps.get_mut(idx).and_then(Option::take) else { return };
        for &node in &app.held_on {
            if let Some(pos) = self.holds(node).iter().position(|h| h.app == idx) {
                self.take_hold(node, pos);
            }
        }
        self.prereserving.retain(|&s| s != idx);
        self.warned.remove(&app.key);
    }

    /// Forgets the holds of a node that left the cluster (it is no longer in `state`).
    pub fn node_removed(&mut self, node: NodeId) {
        let Some(on) = self.nodes.remove(&node) else { return };
        self.holds -= on.holds.len();
        for h in &on.holds {
            self.forget(node, h);
        }
    }

    /// Running containers of the app's stages that may get a copy on an idle reserved slot
    /// (§IV-C): per stage with candidates, the stage, the priority to ask at, the idle slots.
    pub fn straggler_candidates(&self, state: &ClusterState, idx: AppIdx) -> Vec<StragglerAdvice> {
        let (Some(Some(app)), Some(Some(a))) = (self.apps.get(idx), state.apps.get(idx)) else { return Vec::new() };
        let Some(hints) = a.hints.as_ref().filter(|h| h.dag_revision == app.dag_revision && a.key == app.key) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for (i, st) in app.stages.iter().enumerate() {
            let Some(st) = st else { continue };
            let containers = st.reservation.straggler_candidates();
            if containers.is_empty() {
                continue;
            }
            let stage = hints.dag.stage(i);
            out.push(StragglerAdvice {
                stage: stage.id.clone(),
                priority: stage.priorities.first().copied(),
                idle_slots: st.reservation.idle_slots().len(),
                containers,
            });
        }
        out
    }

    /// Drops everything when the app's DAG was replaced: its stages are different ones now.
    pub fn hints_changed(&mut self, state: &ClusterState, idx: AppIdx) {
        let Some(Some(app)) = self.apps.get_mut(idx) else { return };
        app.stage_at.clear();
        let changed = state.app(idx).hints.as_ref().is_none_or(|h| h.dag_revision != app.dag_revision);
        if changed {
            self.app_removed(idx);
        }
    }

    /// Drops every hold and all per-app state (reservation switched off or reconfigured).
    pub fn clear(&mut self) {
        for idx in 0..self.apps.len() {
            self.app_removed(idx);
        }
        self.prereserving.clear();
    }

    pub fn view(&self, idx: AppIdx) -> Option<AppReservationView> {
        let app = self.apps.get(idx)?.as_ref()?;
        // A node repeats in `held_on` once per hold: visit each node once.
        let mut nodes: Vec<NodeId> = app.held_on.clone();
        nodes.sort_unstable();
        nodes.dedup();
        let mut reserved = Resources::ZERO;
        for node in nodes {
            for h in self.holds(node).iter().filter(|h| h.app == idx) {
                reserved += h.resources;
            }
        }
        let last = app.last_stage.and_then(|s| app.stages.get(s)?.as_ref());
        Some(AppReservationView {
            app: app.key,
            isolation_probability: app.settings.isolation_probability,
            held_slots: app.held_on.len(),
            reserved_memory_mb: reserved.memory_mb(),
            reserved_vcores: reserved.vcores(),
            pre_reserve_remaining: app.pre.map_or(0, |p| p.remaining),
            utilization_bound: last.map(|s| s.reservation.utilization_bound()),
            pareto_shape: last.map(|s| s.reservation.pareto().shape),
        })
    }
}
