//! UWFQ inside a queue: apps in order of their global virtual deadline under user-job fair
//! sharing (see [`crate::uwfq`]), smallest first. Each queue has its own reference system: the
//! users of a queue share what the queue receives.
//!
//! - Slot-time `L` of an app, in dominant-share-seconds (the app's dominant share of the cluster
//!   times seconds, so `L / R` is a duration when `R` is a share): with DAG hints, the sum over
//!   its stages of tasks × per-task dominant share × estimated task duration (all the job's
//!   work, finished or not: the reference accounts for what was served); without hints, from
//!   its asks, `(work already granted + pending asks' dominant share) × default task seconds`.
//!   The [`AppPolicy::on_app_updated`] hook is where a new estimate enters.
//! - Capacity `R` of a queue's reference: the dominant share the queue currently uses,
//!   refreshed every heartbeat, so the reference shares what the queue really gets (no usage,
//!   no progress in the reference either).
//! - An app waiting for its first container (the ApplicationMaster) goes first, as in FIFO:
//!   without its AM an app cannot ask for the work UWFQ orders it by.

use super::{AppPolicy, NodeOffer};
use crate::ids::{AppIdx, AppKey, QueueIdx};
use crate::request::Placement;
use crate::state::ClusterState;
use crate::uwfq::{UwfqClock, UwfqSettings};
use rustc_hash::FxHashMap;
use tracing::warn;

struct QueueRef {
    clock: UwfqClock,
    /// Per app: work granted so far (dominant-share-seconds) and the slot-time last reported.
    apps: FxHashMap<AppKey, (f64, f64)>,
}

pub struct Uwfq {
    settings: UwfqSettings,
    queues: Vec<Option<QueueRef>>,
}

impl Uwfq {
    /// `settings` must have been validated (the allocation file parser does).
    pub fn new(settings: UwfqSettings) -> Uwfq {
        Uwfq { settings, queues: Vec::new() }
    }

    fn queue(&mut self, qi: QueueIdx) -> &mut QueueRef {
        if self.queues.len() <= qi {
            self.queues.resize_with(qi + 1, || None);
        }
        let grace = self.settings.grace_period_sec;
        self.queues[qi].get_or_insert_with(|| QueueRef {
            clock: UwfqClock::new(0.0, grace).expect("validated grace period"),
            apps: FxHashMap::default(),
        })
    }

    /// Pending asks as dominant-share-seconds.
    fn pending_work(&self, state: &ClusterState, idx: AppIdx) -> f64 {
        let app = state.app(idx);
        app.asks.pending_resources().dominant_share(&state.capacity) * self.settings.default_task_sec
    }

    /// The global virtual deadline of an app, for status and tests.
    pub fn virtual_finish(&self, qi: QueueIdx, app: AppKey) -> Option<f64> {
        self.queues.get(qi)?.as_ref()?.clock.virtual_finish(app)
    }

    /// A queue's reference system, for status and tests.
    pub fn clock(&self, qi: QueueIdx) -> Option<&UwfqClock> {
        self.queues.get(qi)?.as_ref().map(|q| &q.clock)
    }
}

fn secs(ms: i64) -> f64 {
    ms as f64 / 1000.0
}

impl AppPolicy for Uwfq {
    fn name(&self) -> &'static str {
        "uwfq"
    }

    fn begin_heartbeat(&mut self, state: &ClusterState, now_ms: i64) {
        let now = secs(now_ms);
        for (qi, q) in self.queues.iter_mut().enumerate() {
            let Some(q) = q else { continue };
            if q.apps.is_empty() && q.clock.active_users() == 0 {
                continue;
            }
            let rate = state.queues.get(qi).map_or(0.0, |queue| queue.usage.dominant_share(&state.capacity));
            q.clock.set_capacity(now, rate).expect("a share is a finite non-negative rate");
        }
    }

    fn on_app_added(&mut self, state: &ClusterState, idx: AppIdx) {
        let app = state.app(idx);
        let (key, qi, now) = (app.key, app.queue, secs(state.now_ms));
        let weight = self.settings.weight_of(&app.user);
        let work = self.pending_work(state, idx);
        let user = app.user.clone();
        let q = self.queue(qi);
        match q.clock.job_arrived(now, key, &user, weight, work) {
            Ok(_) => {
                q.apps.insert(key, (0.0, work));
            }
            Err(e) => warn!(app = key, error = %e, "UWFQ could not queue the app"),
        }
    }

    fn on_app_updated(&mut self, state: &ClusterState, idx: AppIdx) {
        let app = state.app(idx);
        let (key, qi, now) = (app.key, app.queue, secs(state.now_ms));
        let pending = self.pending_work(state, idx);
        let hinted = app.hints.as_ref().map(|h| {
            let stages = h.dag.stages().iter();
            stages
                .map(|s| s.tasks as f64 * s.demand.dominant_share(&state.capacity) * s.duration_ms as f64 / 1000.0)
                .sum::<f64>()
        });
        let q = self.queue(qi);
        let Some(entry) = q.apps.get_mut(&key) else { return };
        let work = hinted.unwrap_or(entry.0 + pending);
        if work != entry.1 {
            entry.1 = work;
            if let Err(e) = q.clock.update_work(now, key, work) {
                warn!(app = key, error = %e, "UWFQ could not update the app's slot-time");
            }
        }
    }

    fn on_app_removed(&mut self, state: &ClusterState, idx: AppIdx) {
        let app = state.app(idx);
        let (key, qi, now) = (app.key, app.queue, secs(state.now_ms));
        let q = self.queue(qi);
        if q.apps.remove(&key).is_some() {
            let _ = q.clock.job_finished(now, key);
        }
    }

    fn select(&mut self, state: &ClusterState, queue: QueueIdx, offer: &NodeOffer) -> Option<(AppIdx, Placement)> {
        let task_sec = self.settings.default_task_sec;
        let q = self.queues.get_mut(queue)?.as_mut()?;
        let slot_of = |key: AppKey| state.app_index.get(&key).copied();
        let try_app = |key: AppKey| slot_of(key).and_then(|s| offer.first_fit(state, s).map(|p| (s, p)));
        let mut hit = None;
        if state.queues[queue].apps_waiting_for_am > 0 {
            hit = q
                .clock
                .order()
                .filter(|&(k, _)| slot_of(k).is_some_and(|s| !state.app(s).started))
                .find_map(|(k, _)| try_app(k));
        }
        if hit.is_none() {
            hit = q.clock.order().find_map(|(k, _)| try_app(k));
        }
        let (idx, p) = hit?;
        // The container moves from pending to granted work: the app's slot-time is unchanged.
        if let Some(entry) = q.apps.get_mut(&state.app(idx).key) {
            entry.0 += p.resources.dominant_share(&state.capacity) * task_sec;
        }
        Some((idx, p))
    }
}
