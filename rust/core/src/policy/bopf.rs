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

use super::{Admission, BurstView, Policy, QueueKey, QueueView};
use crate::bopf::admission::{AdmissionClass, AdmissionConfig, AdmissionController, BopfMode};
use crate::config::{QueueFile, QueueKind};
use crate::ids::QueueIdx;
use crate::resource::{Resources, DIMS};
use crate::state::ClusterState;
use tracing::{info, warn};

/// Minimum time between two admission runs caused by capacity changes, so that an RM whose
/// NodeManagers register one by one does not re-admit every queue per node.
pub const READMISSION_INTERVAL_MS: i64 = 10_000;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Phase {
    Idle,
    On { start_ms: i64, deadline_at_ms: i64 },
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
    controller: Option<AdmissionController>,
    admitted_capacity: Resources,
    last_admission_ms: i64,
    epoch_ms: Option<i64>,
    /// Indexed by queue; `None` for queues this policy has not admitted.
    records: Vec<Option<QueueRecord>>,
    /// Queues in admission order, for re-admission.
    order: Vec<QueueIdx>,
    /// Latency-sensitive queues, whose bursts are tracked on every heartbeat.
    lqs: Vec<QueueIdx>,
    /// Sum of guaranteed rates of H queues now in a burst.
    committed: Resources,
    /// Usage of S queues now in a burst, at the start of the heartbeat.
    soft_usage: Resources,
    now_ms: i64,
}

impl Bopf {
    pub fn new(file: &QueueFile, mode: BopfMode) -> Bopf {
        Bopf {
            mode,
            n_min: file.n_min,
            controller: None,
            admitted_capacity: Resources::ZERO,
            last_admission_ms: i64::MIN,
            epoch_ms: None,
            records: Vec::new(),
            order: Vec::new(),
            lqs: Vec::new(),
            committed: Resources::ZERO,
            soft_usage: Resources::ZERO,
            now_ms: 0,
        }
    }

    fn record_of(&self, q: QueueIdx) -> Option<&QueueRecord> {
        self.records.get(q).and_then(Option::as_ref)
    }

    /// Runs the admission conditions for queue `q` against the current controller.
    fn classify(&mut self, state: &ClusterState, q: QueueIdx) -> (AdmissionClass, String) {
        let Some(controller) = self.controller.as_mut() else {
            let reason = "provisional: admission control runs once the cluster has capacity";
            return (AdmissionClass::Elastic, reason.into());
        };
        let epoch = self.epoch_ms.unwrap_or(0).max(0) as u64;
        match controller.admit(state.queues[q].config.admission_spec(epoch)) {
            Ok(d) => (d.class, d.reason),
            Err(e) => (AdmissionClass::Rejected, e.to_string()),
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
                let previous = self.record_of(q).and_then(|s| s.burst.clone());
                let burst = previous.unwrap_or(Burst {
                    demand: l.burst.demand,
                    period_ms: l.burst.period_ms as i64,
                    deadline_ms: l.burst.deadline_ms as i64,
                    phase: Phase::Idle,
                    last_start_ms: None,
                    consumed: [0.0; DIMS],
                    integral_at_start: [0.0; DIMS],
                    started: 0,
                    met_deadline: 0,
                });
                (rate, Some(burst))
            }
            QueueKind::Throughput => (None, None),
        };
        self.records[q] = Some(QueueRecord { class, reason: reason.to_string(), rate, burst });
    }

    /// Builds a fresh controller for the current capacity and admits every queue again in the
    /// original order, logging class changes.
    fn readmit(&mut self, state: &ClusterState) {
        let config = AdmissionConfig { n_min: self.n_min, mode: self.mode, ..AdmissionConfig::new(state.capacity) };
        match AdmissionController::new(config) {
            Ok(c) => self.controller = Some(c),
            Err(e) => {
                warn!(error = %e, "BoPF admission control unavailable");
                return;
            }
        }
        self.admitted_capacity = state.capacity;
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

    fn track_bursts(&mut self, state: &ClusterState, now: i64) {
        self.committed = Resources::ZERO;
        self.soft_usage = Resources::ZERO;
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
                    AdmissionClass::Hard => self.committed += record.rate.unwrap_or_default(),
                    AdmissionClass::Soft if now < deadline_at_ms => self.soft_usage += queue.usage,
                    _ => {}
                }
            }
        }
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
                let room = state.capacity.saturating_sub(&self.committed);
                if self.soft_usage.fits_in(&room) {
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
        if self.controller.is_none() && !state.capacity.is_zero() {
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
        let admission = Admission { admitted: true, class: label(record.class), reason: record.reason.clone() };
        QueueView { admission, guaranteed_rate: record.rate, burst }
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
        if !state.capacity.is_zero()
            && state.capacity != self.admitted_capacity
            && (self.controller.is_none() || now_ms - self.last_admission_ms >= READMISSION_INTERVAL_MS)
        {
            self.readmit(state);
        }
        self.track_bursts(state, now_ms);
    }

    fn queue_key(&self, state: &ClusterState, queue: QueueIdx) -> QueueKey {
        self.key(state, queue)
    }
}
