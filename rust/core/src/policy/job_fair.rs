//! Job-fair inside a queue (the job-level fairness baseline of the UWFQ paper): every job of
//! the queue gets an equal share, so the job with the smallest dominant usage goes first
//! (submission order on ties), YARN's priority order inside a job. An app waiting for its
//! ApplicationMaster goes first, as in FIFO.
//!
//! Carbyne with `<altruism-probability>0</altruism-probability>` orders apps the same way
//! (it falls back to DRF among the queue's jobs); this module is the plain baseline without
//! Carbyne's planning state.

use super::{AppPolicy, NodeOffer};
use crate::ids::{AppIdx, QueueIdx};
use crate::request::Placement;
use crate::state::ClusterState;

#[derive(Debug, Default, Clone, Copy)]
pub struct JobFair;

impl AppPolicy for JobFair {
    fn name(&self) -> &'static str {
        "job-fair"
    }

    fn select(&mut self, state: &ClusterState, queue: QueueIdx, offer: &NodeOffer) -> Option<(AppIdx, Placement)> {
        offer.app_waiting_for_am(state, queue, false).or_else(|| least_used_app(state, queue, offer))
    }
}

/// Job-level DRF: the queue's app with the smallest dominant usage (oldest on ties) that can
/// start something on the node, and its highest-priority placement.
pub fn least_used_app(state: &ClusterState, queue: QueueIdx, offer: &NodeOffer) -> Option<(AppIdx, Placement)> {
    let mut best: Option<(f64, u64, AppIdx, Placement)> = None;
    for &idx in &state.queues[queue].apps {
        let app = state.app(idx);
        if app.asks.pending_containers() == 0 {
            continue;
        }
        let dom = app.usage.dominant_share(&state.capacity);
        if best.as_ref().is_some_and(|b| (dom, app.seq) >= (b.0, b.1)) {
            continue;
        }
        if let Some(p) = offer.first_fit(state, idx) {
            best = Some((dom, app.seq, idx, p));
        }
    }
    best.map(|b| (b.2, b.3))
}
