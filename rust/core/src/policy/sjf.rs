//! Shortest job first by critical path (the SJF baseline of the Carbyne paper, §5.1): jobs in
//! the order of their remaining critical path — the longest chain of stage durations still
//! ahead, from the job's hints and progress (Critical Path Method) — shortest first; YARN's
//! priority order inside a job. Apps without hints have no known length and come last, in
//! submission order. An unhinted app waiting for its ApplicationMaster goes first, as in FIFO.

use super::{AppPolicy, NodeOffer};
use crate::ids::{AppIdx, QueueIdx};
use crate::request::Placement;
use crate::state::ClusterState;

#[derive(Default)]
pub struct Sjf {
    /// Per queue, apps in SJF order.
    order: Vec<Vec<AppIdx>>,
    /// What the order was computed from: app sequence counter, app count, queue count.
    seen: Option<(u64, usize, usize)>,
    /// A hinted app reported new hints or asks since the last heartbeat.
    hints_changed: bool,
}

impl Sjf {
    fn rebuild(&mut self, state: &ClusterState) {
        self.order.resize_with(state.queues.len(), Vec::new);
        for (qi, q) in state.queues.iter().enumerate() {
            let mut keyed: Vec<(u8, u64, u64, AppIdx)> = q
                .apps
                .iter()
                .map(|&s| {
                    let a = state.app(s);
                    match &a.hints {
                        Some(h) => (0, h.dag.critical_path_ms(), a.seq, s),
                        None => (1, 0, a.seq, s),
                    }
                })
                .collect();
            keyed.sort_unstable();
            self.order[qi] = keyed.into_iter().map(|k| k.3).collect();
        }
    }
}

impl AppPolicy for Sjf {
    fn name(&self) -> &'static str {
        "sjf"
    }

    fn begin_heartbeat(&mut self, state: &ClusterState, _now_ms: i64) {
        let seen = (state.next_app_seq, state.app_count(), state.queues.len());
        if self.seen != Some(seen) || std::mem::take(&mut self.hints_changed) {
            self.seen = Some(seen);
            self.rebuild(state);
        }
    }

    fn on_app_updated(&mut self, state: &ClusterState, idx: AppIdx) {
        self.hints_changed |= state.app(idx).hints.is_some();
    }

    fn select(&mut self, state: &ClusterState, queue: QueueIdx, offer: &NodeOffer) -> Option<(AppIdx, Placement)> {
        if let Some(hit) = offer.app_waiting_for_am(state, queue, true) {
            return Some(hit);
        }
        let order = self.order.get(queue)?;
        order
            .iter()
            .filter(|&&s| state.apps.get(s).is_some_and(|a| a.as_ref().is_some_and(|a| a.queue == queue)))
            .find_map(|&s| offer.first_fit(state, s).map(|p| (s, p)))
    }
}
