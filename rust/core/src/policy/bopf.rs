//! Bounded priority fairness (BoPF, Algorithm 1) on a heartbeat-driven, non-preemptive RM.
//!
//! Admission control ([`crate::bopf::admission`]) sorts queues into Hard, Soft and Elastic or
//! rejects them. On every offer the policy then serves, in this order:
//! 1. H queues in a burst whose usage is below their guaranteed rate `d/t` (furthest below
//!    first). A burst keeps this priority past its deadline while its declaration is not used
//!    up: the non-preemptive catch-up of the earlier paper version (BPF §3).
//! 2. S queues in a burst, before their deadline and with declaration left, by SRPT (least
//!    remaining demand first), as long as S's usage stays within what active H bursts leave
//!    uncommitted.
//! 3. Everything else with pending asks by weighted DRF: TQs, Elastic LQs, and H/S queues beyond
//!    their guarantee. Because every queue with demand is in some tier, the policy is work
//!    conserving: unused guarantees are used by others.
//!
//! The guarantee never exceeds the declaration (BoPF §5.3.1: demand beyond it is not
//! guaranteed). Our rule: a burst is within its guarantee while its consumption is below the
//! declared demand in *every* resource the LQ declared; once any declared resource is used up,
//! the rest of the burst is served in tier 3 like an Elastic queue. Containers already running
//! then are not preempted, so the overshoot is bounded by what they consume after that point.
//! A resource the LQ did not declare (demand 0) neither bounds nor ends its burst.
//!
//! Burst detection, where the paper assumes known arrival times: a burst starts when an LQ
//! gets pending asks, at most once per period (demand arriving earlier waits in tier 3 until the
//! period has passed since the previous burst started). Consumption is the integral of the
//! queue's usage, in resource-seconds. The burst ends when the queue's apps have all finished
//! (not merely when nothing is running or pending: a DAG app has neither for a moment at each
//! stage barrier), or when a period has passed since it started and new demand opens the next
//! burst. It met its deadline if it ended before `start + deadline`.
//!
//! Admission needs the cluster capacity, which an RM only learns as NodeManagers register. Until
//! the first heartbeat with capacity, queues are provisionally Elastic; admission then runs for
//! all queues in configuration order, and runs again (logging any class change) when the
//! capacity has changed and at least [`READMISSION_INTERVAL_MS`] passed since the last run.
//! Burst windows for condition (3) are laid out from the scheduler's first heartbeat plus each
//! LQ's `first-burst-sec`.
//!
//! Snapshot and restore ([`crate::snapshot`]): the durable state is the capacity admission last
//! ran at, the epoch burst windows are laid out from, and each LQ's burst record (phase, start,
//! deadline, consumption, counts). Restoring builds the admission controller at the stored
//! capacity and admits every queue again in the same order; admission is deterministic given
//! the queue specs, their order and the capacity, so every class, reason and commitment comes
//! out as before. The burst records then replace the fresh ones; those of queues registered at
//! run time are applied when the scheduler registers those queues again, right after.
//!
//! Restore grace: after a restart NodeManagers re-register one by one, and re-admitting at each
//! partial capacity would demote Hard and Soft queues only to promote them again a moment later
//! (commitments made to their owners would flap). So while the cluster capacity is below the
//! restored admitted capacity, admission does not run again until [`RESTORE_GRACE_MS`] has
//! passed since the first heartbeat after the restore. Once the capacity equals the restored
//! one, or is larger in some resource, or the grace has run out, the usual rules apply again.

use super::{Admission, BurstView, Policy, QueueKey, QueueView};
use crate::bopf::admission::{AdmissionClass, AdmissionConfig, AdmissionController, BopfMode};
use crate::bopf::spec::TqSpec;
use crate::config::{QueueFile, QueueKind};
use crate::error::{CoreError, Result};
use crate::ids::QueueIdx;
use crate::resource::{deserialize_dims, Resources, DIMS};
use crate::state::{ClusterState, ParentIdx, ROOT_PARENT};
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
use tracing::{info, warn};

/// Minimum time between two admission runs caused by capacity changes, so that an RM whose
/// NodeManagers register one by one does not re-admit every queue per node.
pub const READMISSION_INTERVAL_MS: i64 = 10_000;

/// After a restore, how long admission waits for the cluster to regain the restored capacity
/// before it runs at whatever capacity there is (see the module docs).
pub const RESTORE_GRACE_MS: i64 = 60_000;

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
enum Phase {
    Idle,
    On { start_ms: i64, deadline_at_ms: i64 },
}

/// Where the restore grace stands.
#[derive(Clone, Copy, Debug, PartialEq)]
enum RestoreGrace {
    /// No restore pending: the usual admission rules.
    Off,
    /// Restored; the grace starts with the next heartbeat.
    Armed,
    /// Started at this time.
    Since(i64),
}

/// BoPF's durable state, as [`Policy::snapshot`] writes it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct BopfSnapshot {
    /// The policy's clock.
    now_ms: i64,
    /// The capacity admission last ran at (zero: it has not run yet).
    admitted_capacity: Resources,
    /// The first heartbeat's time, from which burst windows are laid out.
    epoch_ms: Option<i64>,
    /// Burst records of the LQs, by queue name.
    bursts: Vec<BurstSnapshot>,
}

/// An LQ's burst record without what its configuration gives back (demand, period, deadline).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct BurstSnapshot {
    queue: String,
    phase: Phase,
    last_start_ms: Option<i64>,
    #[serde(deserialize_with = "deserialize_dims")]
    consumed: [f64; DIMS],
    #[serde(deserialize_with = "deserialize_dims")]
    integral_at_start: [f64; DIMS],
    started: u64,
    met_deadline: u64,
}

#[derive(Clone, Debug)]
struct Burst {
    demand: Resources,
    period_ms: i64,
    deadline_ms: i64,
    phase: Phase,
    last_start_ms: Option<i64>,
    /// Resource-milliseconds consumed in the current burst: the queue's usage integral now
    /// minus its value when the burst started.
    consumed: [f64; DIMS],
    integral_at_start: [f64; DIMS],
    started: u64,
    met_deadline: u64,
}

impl Burst {
    /// Whether the burst is still within its declaration: below the declared demand in every
    /// declared resource (see the module docs).
    fn within_declaration(&self) -> bool {
        (0..DIMS).all(|k| self.demand.0[k] == 0 || self.consumed[k] < self.demand.0[k] as f64 * 1000.0)
    }

    /// Remaining demand as a share of the cluster in its dominant resource (SRPT's key).
    fn remaining_share(&self, capacity: &Resources) -> f64 {
        let mut share = 0.0f64;
        for k in 0..DIMS {
            if capacity.0[k] > 0 {
                let left = (self.demand.0[k] as f64 * 1000.0 - self.consumed[k]).max(0.0);
                share = share.max(left / capacity.0[k] as f64);
            }
        }
        share
    }
}

/// The name status and the REST API show for a BoPF class.
fn label(class: AdmissionClass) -> &'static str {
    match class {
        AdmissionClass::Hard => "hard",
        AdmissionClass::Soft => "soft",
        AdmissionClass::Elastic => Admission::ELASTIC,
        AdmissionClass::Rejected => Admission::REJECTED,
    }
}

/// What BoPF keeps about a queue it admitted.
#[derive(Clone, Debug)]
struct QueueRecord {
    class: AdmissionClass,
    reason: String,
    rate: Option<Resources>,
    burst: Option<Burst>,
}

pub struct Bopf {
    mode: BopfMode,
    n_min: u32,
    /// Admission controllers, once the cluster has capacity.
    admissions: Option<Admissions>,
    admitted_capacity: Resources,
    last_admission_ms: i64,
    epoch_ms: Option<i64>,
    /// Indexed by queue; `None` for queues this policy has not admitted.
    records: Vec<Option<QueueRecord>>,
    /// Queues in admission order, for re-admission.
    order: Vec<QueueIdx>,
    /// Latency-sensitive queues, whose bursts are tracked on every heartbeat.
    lqs: Vec<QueueIdx>,
    /// Per parent queue: the sum of guaranteed rates of its H leaves now in a burst. Admission
    /// commits each parent's share separately (see [`Admissions`]), so the room Soft bursts may
    /// take is checked within their parent's share too.
    committed: Vec<Resources>,
    /// Per parent queue: the usage of its S leaves now in a burst, at the start of the heartbeat.
    soft_usage: Vec<Resources>,
    now_ms: i64,
    /// Restored burst records of queues not admitted yet, applied when they are.
    restored_bursts: HashMap<String, BurstSnapshot>,
    restore_grace: RestoreGrace,
}

/// Admission control over the queue tree: one controller per parent queue, made when a leaf
/// under it is first admitted, with the parent's share of the cluster as its capacity. The
/// root's is the cluster capacity, so a flat file is admitted exactly as before.
///
/// The paper has one level of queues; where it is silent we chose:
/// - a leaf's conditions (fairness, safety, resource) are checked among its siblings, with its
///   parent's share of the capacity in place of the cluster capacity `C`, and `N` counting its
///   siblings;
/// - a parent's share is the product, from the root down, of weight over the weights of all
///   configured siblings (with or without demand: admission plans for the long term, not for
///   whoever asks now), fixed when admission runs (re-admission recomputes it);
/// - a parent queue counts among its siblings as one TQ of its weight;
/// - controllers of different parents commit independently: the parents' shares sum to at
///   most `C`, so all Hard commitments together still fit the cluster.
struct Admissions {
    capacity: Resources,
    n_min: u32,
    mode: BopfMode,
    /// Per parent: its share of the capacity and its controller.
    by_parent: HashMap<ParentIdx, (Resources, AdmissionController)>,
}

impl Admissions {
    fn new(capacity: Resources, n_min: u32, mode: BopfMode) -> std::result::Result<Admissions, String> {
        let admissions = Admissions { capacity, n_min, mode, by_parent: HashMap::new() };
        admissions.controller(capacity)?;
        Ok(admissions)
    }

    fn controller(&self, capacity: Resources) -> std::result::Result<AdmissionController, String> {
        let config = AdmissionConfig { n_min: self.n_min, mode: self.mode, ..AdmissionConfig::new(capacity) };
        AdmissionController::new(config).map_err(|e| e.to_string())
    }

    /// Parent `p`'s share of the capacity and its controller, made on first use with the
    /// parent's child parents admitted as TQs.
    fn of(
        &mut self,
        state: &ClusterState,
        p: ParentIdx,
    ) -> std::result::Result<&mut (Resources, AdmissionController), String> {
        if !self.by_parent.contains_key(&p) {
            let share = configured_share(state, p);
            let mut capacity = Resources::ZERO;
            for (c, total) in capacity.0.iter_mut().zip(self.capacity.0.iter()) {
                *c = (*total as f64 * share).floor() as i64;
            }
            let name = &state.parents[p].config.name;
            let mut controller = self
                .controller(capacity)
                .map_err(|e| format!("parent '{name}' (share {share:.4} of the cluster): {e}"))?;
            for child in state.parents.iter().filter(|c| c.parent == Some(p)) {
                let tq = TqSpec { name: child.config.name.clone(), weight: child.config.weight };
                controller.admit_tq(tq).map_err(|e| e.to_string())?;
            }
            self.by_parent.insert(p, (capacity, controller));
        }
        Ok(self.by_parent.get_mut(&p).expect("inserted above"))
    }
}

/// Parent `p`'s configured share of the cluster (see [`Admissions`]).
fn configured_share(state: &ClusterState, mut p: ParentIdx) -> f64 {
    let mut share = 1.0;
    while let Some(up) = state.parents[p].parent {
        let parents = state.parents.iter().filter(|c| c.parent == Some(up)).map(|c| c.config.weight);
        let leaves = state.queues.iter().filter(|q| !q.retired && q.parent == up).map(|q| q.config.weight);
        share *= state.parents[p].config.weight / parents.chain(leaves).sum::<f64>();
        p = up;
    }
    share
}

impl Bopf {
    pub fn new(file: &QueueFile, mode: BopfMode) -> Bopf {
        Bopf {
            mode,
            n_min: file.n_min,
            admissions: None,
            admitted_capacity: Resources::ZERO,
            last_admission_ms: i64::MIN,
            epoch_ms: None,
            records: Vec::new(),
            order: Vec::new(),
            lqs: Vec::new(),
            committed: Vec::new(),
            soft_usage: Vec::new(),
            now_ms: 0,
            restored_bursts: HashMap::new(),
            restore_grace: RestoreGrace::Off,
        }
    }

    fn record_of(&self, q: QueueIdx) -> Option<&QueueRecord> {
        self.records.get(q).and_then(Option::as_ref)
    }

    /// Runs the admission conditions for queue `q` against the current controller.
    fn classify(&mut self, state: &ClusterState, q: QueueIdx) -> (AdmissionClass, String) {
        let Some(admissions) = self.admissions.as_mut() else {
            let reason = "provisional: admission control runs once the cluster has capacity";
            return (AdmissionClass::Elastic, reason.into());
        };
        let parent = state.queues[q].parent;
        let (capacity, controller) = match admissions.of(state, parent) {
            Ok(c) => c,
            Err(e) => return (AdmissionClass::Rejected, e),
        };
        let epoch = self.epoch_ms.unwrap_or(0).max(0) as u64;
        let within = match parent {
            ROOT_PARENT => String::new(),
            p => {
                format!(" (within parent '{}', whose share of the cluster is {capacity})", state.parents[p].config.name)
            }
        };
        match controller.admit(state.queues[q].config.admission_spec(epoch)) {
            Ok(d) => (d.class, format!("{}{within}", d.reason)),
            Err(e) => (AdmissionClass::Rejected, format!("{e}{within}")),
        }
    }

    fn remember(&mut self, state: &ClusterState, q: QueueIdx, class: AdmissionClass, reason: &str) {
        if self.records.len() <= q {
            self.records.resize(q + 1, None);
        }
        let config = &state.queues[q].config;
        let (rate, burst) = match &config.kind {
            QueueKind::Latency(l) => {
                let guaranteed = matches!(class, AdmissionClass::Hard | AdmissionClass::Soft);
                let rate = guaranteed.then(|| {
                    let mut r = Resources::ZERO;
                    for k in 0..DIMS {
                        let total_ms = l.burst.demand.0[k] as i128 * 1000;
                        r.0[k] = ((total_ms + l.burst.deadline_ms as i128 - 1) / l.burst.deadline_ms as i128) as i64;
                    }
                    r
                });
                let fresh = Burst {
                    demand: l.burst.demand,
                    period_ms: l.burst.period_ms as i64,
                    deadline_ms: l.burst.deadline_ms as i64,
                    phase: Phase::Idle,
                    last_start_ms: None,
                    consumed: [0.0; DIMS],
                    integral_at_start: [0.0; DIMS],
                    started: 0,
                    met_deadline: 0,
                };
                let burst = match self.restored_bursts.remove(config.name.as_str()) {
                    Some(r) => Burst {
                        phase: r.phase,
                        last_start_ms: r.last_start_ms,
                        consumed: r.consumed,
                        integral_at_start: r.integral_at_start,
                        started: r.started,
                        met_deadline: r.met_deadline,
                        ..fresh
                    },
                    None => self.record_of(q).and_then(|s| s.burst.clone()).unwrap_or(fresh),
                };
                (rate, Some(burst))
            }
            QueueKind::Throughput => (None, None),
        };
        self.records[q] = Some(QueueRecord { class, reason: reason.to_string(), rate, burst });
    }

    fn controller_for(&self, capacity: Resources) -> std::result::Result<Admissions, String> {
        Admissions::new(capacity, self.n_min, self.mode)
    }

    /// Builds a fresh controller for the current capacity and admits every queue again in the
    /// original order, logging class changes.
    fn readmit(&mut self, state: &ClusterState) {
        match self.controller_for(state.capacity) {
            Ok(c) => self.readmit_with(state, Some(c), state.capacity),
            Err(e) => warn!(error = %e, "BoPF admission control unavailable"),
        }
    }

    /// Admits every queue again in the original order against `controller` (built for
    /// `capacity`; `None`: provisionally), logging class changes.
    fn readmit_with(&mut self, state: &ClusterState, controller: Option<Admissions>, capacity: Resources) {
        self.admissions = controller;
        self.admitted_capacity = capacity;
        self.last_admission_ms = self.now_ms;
        for q in self.order.clone() {
            if state.queues[q].retired {
                continue;
            }
            let before = self.record_of(q).map(|s| s.class);
            let (class, reason) = self.classify(state, q);
            if before != Some(class) {
                info!(queue = state.queues[q].name(), class = label(class), reason = %reason,
                      capacity = %state.capacity, "BoPF admission");
            }
            self.remember(state, q, class, &reason);
        }
    }

    /// Whether the restore grace keeps admission from running at this heartbeat; ends the grace
    /// once it no longer applies.
    fn in_restore_grace(&mut self, state: &ClusterState, now_ms: i64) -> bool {
        let since = match self.restore_grace {
            RestoreGrace::Off => return false,
            RestoreGrace::Armed => now_ms,
            RestoreGrace::Since(t) => t,
        };
        let below = state.capacity != self.admitted_capacity && state.capacity.fits_in(&self.admitted_capacity);
        if below && now_ms - since < RESTORE_GRACE_MS {
            self.restore_grace = RestoreGrace::Since(since);
            return true;
        }
        info!(capacity = %state.capacity, restored = %self.admitted_capacity, "BoPF restore grace over");
        self.restore_grace = RestoreGrace::Off;
        false
    }

    /// Parses and checks a snapshot of this policy's state.
    fn parse_snapshot(value: &serde_json::Value) -> Result<BopfSnapshot> {
        let bad = |what: String| CoreError::InvalidInput(format!("snapshot field 'policy.state' (BoPF): {what}"));
        let snap = BopfSnapshot::deserialize(value).map_err(|e| bad(e.to_string()))?;
        if snap.admitted_capacity.any_negative() {
            return Err(bad(format!("admitted_capacity {} is negative", snap.admitted_capacity)));
        }
        let mut names = HashSet::new();
        for b in &snap.bursts {
            if !names.insert(b.queue.as_str()) {
                return Err(bad(format!("bursts: queue '{}' is listed twice", b.queue)));
            }
            if let Phase::On { start_ms, deadline_at_ms } = b.phase {
                if deadline_at_ms < start_ms {
                    return Err(bad(format!("bursts: queue '{}' has a deadline before its start", b.queue)));
                }
            }
        }
        Ok(snap)
    }

    fn track_bursts(&mut self, state: &ClusterState, now: i64) {
        for per_parent in [&mut self.committed, &mut self.soft_usage] {
            per_parent.clear();
            per_parent.resize(state.parents.len(), Resources::ZERO);
        }
        for i in 0..self.lqs.len() {
            let q = self.lqs[i];
            let queue = &state.queues[q];
            let Some(record) = self.records.get_mut(q).and_then(Option::as_mut) else { continue };
            let Some(burst) = record.burst.as_mut() else { continue };
            let integral = queue.usage_integral_at(now);
            if let Phase::On { start_ms, deadline_at_ms } = burst.phase {
                for k in 0..DIMS {
                    burst.consumed[k] = integral[k] - burst.integral_at_start[k];
                }
                // "Its apps finished", not "nothing running or pending": a DAG app between two
                // stages has neither for a moment, and its burst must not end there.
                if queue.apps.is_empty() {
                    let on_time = now <= deadline_at_ms;
                    burst.met_deadline += on_time as u64;
                    burst.phase = Phase::Idle;
                    info!(queue = queue.name(), duration_ms = now - start_ms, on_time, "burst ended");
                }
            }
            let period_over = burst.last_start_ms.is_none_or(|s| now - s >= burst.period_ms);
            if queue.pending_containers > 0 && period_over {
                if let Phase::On { start_ms, .. } = burst.phase {
                    // Still busy a whole period later: the burst missed its deadline (a period
                    // is at least the deadline) and the new arrival opens the next one.
                    info!(queue = queue.name(), duration_ms = now - start_ms, on_time = false, "burst ended");
                }
                burst.phase = Phase::On { start_ms: now, deadline_at_ms: now + burst.deadline_ms };
                burst.last_start_ms = Some(now);
                burst.consumed = [0.0; DIMS];
                burst.integral_at_start = integral;
                burst.started += 1;
                info!(queue = queue.name(), class = label(record.class), "burst started");
            }
            if let (Phase::On { deadline_at_ms, .. }, true) = (burst.phase, burst.within_declaration()) {
                match record.class {
                    AdmissionClass::Hard => self.committed[queue.parent] += record.rate.unwrap_or_default(),
                    AdmissionClass::Soft if now < deadline_at_ms => self.soft_usage[queue.parent] += queue.usage,
                    _ => {}
                }
            }
        }
    }

    /// The capacity parent `p`'s leaves were admitted against: the cluster's for the root, the
    /// parent's share of it (as admission last fixed it) below.
    fn parent_capacity(&self, state: &ClusterState, p: ParentIdx) -> Resources {
        if p == ROOT_PARENT {
            return state.capacity;
        }
        self.admissions.as_ref().and_then(|a| a.by_parent.get(&p)).map_or(state.capacity, |(capacity, _)| *capacity)
    }

    /// Tier and order of a queue; see the module docs.
    fn key(&self, state: &ClusterState, q: QueueIdx) -> QueueKey {
        let queue = &state.queues[q];
        let drf = QueueKey::drf(state, q, 2);
        let Some(record) = self.record_of(q) else { return drf };
        let Some(burst) = record.burst.as_ref() else { return drf };
        let Phase::On { deadline_at_ms, .. } = burst.phase else { return drf };
        if !burst.within_declaration() {
            return drf;
        }
        match (record.class, record.rate) {
            (AdmissionClass::Hard, Some(rate)) => {
                let below = (0..DIMS).map(|k| (rate.0[k], queue.usage.0[k])).filter(|(r, _)| *r > 0);
                let ratio = below.map(|(r, u)| u as f64 / r as f64).fold(0.0, f64::max);
                if ratio < 1.0 {
                    QueueKey { tier: 0, order: ratio }
                } else {
                    drf
                }
            }
            (AdmissionClass::Soft, Some(_)) if self.now_ms < deadline_at_ms => {
                let p = queue.parent;
                let at = |v: &Vec<Resources>| v.get(p).copied().unwrap_or_default();
                let room = self.parent_capacity(state, p).saturating_sub(&at(&self.committed));
                if at(&self.soft_usage).fits_in(&room) {
                    QueueKey { tier: 1, order: burst.remaining_share(&state.capacity) }
                } else {
                    drf
                }
            }
            _ => drf,
        }
    }
}

impl Policy for Bopf {
    fn name(&self) -> &'static str {
        match self.mode {
            BopfMode::Bopf => "bopf",
            BopfMode::NBopf => "n-bopf",
        }
    }

    fn admit(&mut self, state: &ClusterState, queue: QueueIdx) -> Admission {
        if self.admissions.is_none() && !state.capacity.is_zero() {
            self.readmit(state);
        }
        let (class, reason) = self.classify(state, queue);
        if class == AdmissionClass::Rejected {
            return Admission::rejected(reason);
        }
        self.order.push(queue);
        if state.queues[queue].config.is_latency_sensitive() {
            self.lqs.push(queue);
        }
        self.remember(state, queue, class, &reason);
        Admission { admitted: true, class: label(class), reason }
    }

    fn remove_queue(&mut self, state: &ClusterState, queue: QueueIdx) {
        if let Some((_, controller)) =
            self.admissions.as_mut().and_then(|a| a.by_parent.get_mut(&state.queues[queue].parent))
        {
            // Not admitted (provisional, or rejected): nothing to release.
            let _ = controller.remove(state.queues[queue].name());
        }
        if let Some(record) = self.records.get_mut(queue) {
            *record = None;
        }
        self.order.retain(|&q| q != queue);
        self.lqs.retain(|&q| q != queue);
    }

    fn queue_view(&self, queue: QueueIdx) -> QueueView {
        let Some(record) = self.record_of(queue) else {
            return QueueView { admission: Admission::rejected(String::new()), guaranteed_rate: None, burst: None };
        };
        let burst = record.burst.as_ref().map(|b| {
            let (phase, started, deadline) = match b.phase {
                Phase::Idle => ("idle", None, None),
                Phase::On { start_ms, deadline_at_ms } => {
                    let phase = if !b.within_declaration() {
                        "beyond-declaration"
                    } else if self.now_ms <= deadline_at_ms {
                        "on"
                    } else {
                        "catch-up"
                    };
                    (phase, Some(start_ms), Some(deadline_at_ms))
                }
            };
            let mut consumed = b.consumed;
            consumed.iter_mut().for_each(|c| *c /= 1000.0);
            BurstView {
                phase,
                started_ms: started,
                deadline_at_ms: deadline,
                consumed,
                demand: b.demand,
                bursts_started: b.started,
                bursts_met_deadline: b.met_deadline,
            }
        });
        let admission = Admission {
            admitted: record.class != AdmissionClass::Rejected,
            class: label(record.class),
            reason: record.reason.clone(),
        };
        QueueView { admission, guaranteed_rate: record.rate, burst }
    }

    fn readmitted_at_ms(&self) -> Option<i64> {
        (self.last_admission_ms != i64::MIN).then_some(self.last_admission_ms)
    }

    fn next_event_ms(&self) -> Option<i64> {
        // A burst's deadline ends its Soft priority; a Hard burst's order changes only with usage.
        let deadlines = self.lqs.iter().filter_map(|&q| match self.record_of(q)?.burst.as_ref()?.phase {
            Phase::On { deadline_at_ms, .. } if deadline_at_ms > self.now_ms => Some(deadline_at_ms),
            _ => None,
        });
        deadlines.min()
    }

    fn begin_heartbeat(&mut self, state: &ClusterState, now_ms: i64) {
        self.now_ms = now_ms;
        if self.epoch_ms.is_none() {
            self.epoch_ms = Some(now_ms);
        }
        if !self.restored_bursts.is_empty() {
            // Restored records of queues that were not registered again: nothing will claim them.
            self.restored_bursts.clear();
        }
        if !self.in_restore_grace(state, now_ms)
            && !state.capacity.is_zero()
            && state.capacity != self.admitted_capacity
            && (self.admissions.is_none() || now_ms - self.last_admission_ms >= READMISSION_INTERVAL_MS)
        {
            self.readmit(state);
        }
        self.track_bursts(state, now_ms);
    }

    fn queue_key(&self, state: &ClusterState, queue: QueueIdx) -> QueueKey {
        self.key(state, queue)
    }

    fn snapshot(&self, state: &ClusterState) -> Option<serde_json::Value> {
        let mut seen = HashSet::new();
        let bursts = self
            .lqs
            .iter()
            .filter(|&&q| seen.insert(q))
            .filter_map(|&q| {
                let b = self.record_of(q)?.burst.as_ref()?;
                Some(BurstSnapshot {
                    queue: state.queues[q].name().to_string(),
                    phase: b.phase,
                    last_start_ms: b.last_start_ms,
                    consumed: b.consumed,
                    integral_at_start: b.integral_at_start,
                    started: b.started,
                    met_deadline: b.met_deadline,
                })
            })
            .collect();
        let snap = BopfSnapshot {
            now_ms: self.now_ms,
            admitted_capacity: self.admitted_capacity,
            epoch_ms: self.epoch_ms,
            bursts,
        };
        Some(serde_json::to_value(snap).expect("BoPF's snapshot is plain data and always serializes"))
    }

    fn restore(&mut self, state: &ClusterState, value: &serde_json::Value) -> Result<()> {
        let snap = Self::parse_snapshot(value)?;
        let controller = if snap.admitted_capacity.is_zero() {
            None
        } else {
            Some(self.controller_for(snap.admitted_capacity).map_err(|e| {
                CoreError::InvalidInput(format!(
                    "snapshot field 'policy.state.admitted_capacity' (BoPF): {} cannot be admitted at: {e}",
                    snap.admitted_capacity
                ))
            })?)
        };
        self.now_ms = self.now_ms.max(snap.now_ms);
        self.epoch_ms = snap.epoch_ms;
        self.restored_bursts = snap.bursts.into_iter().map(|b| (b.queue.clone(), b)).collect();
        self.restore_grace = if controller.is_some() { RestoreGrace::Armed } else { RestoreGrace::Off };
        self.readmit_with(state, controller, snap.admitted_capacity);
        info!(capacity = %snap.admitted_capacity, queues = self.order.len(), "BoPF state restored");
        Ok(())
    }
}
