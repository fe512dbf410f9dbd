//! Weighted dominant resource fairness across queues (Ghodsi et al., NSDI 2011).
//!
//! Each offer goes to the queue with the smallest dominant share divided by its weight; the
//! index breaks ties so that the order is deterministic.

use super::Policy;
use crate::state::{ClusterState, QueueIdx};

#[derive(Debug, Default, Clone, Copy)]
pub struct Drf;

impl Policy for Drf {
    fn name(&self) -> &'static str {
        "drf"
    }

    fn pick_queue(&mut self, state: &ClusterState, candidates: &[QueueIdx]) -> Option<QueueIdx> {
        least_weighted_share(state, candidates)
    }
}

/// The candidate with the smallest weighted dominant share (first on ties).
pub fn least_weighted_share(state: &ClusterState, candidates: &[QueueIdx]) -> Option<QueueIdx> {
    let mut best: Option<(f64, QueueIdx)> = None;
    for &q in candidates {
        let share = state.queues[q].weighted_dominant_share(&state.capacity);
        if best.map_or(true, |(s, _)| share < s) {
            best = Some((share, q));
        }
    }
    best.map(|(_, q)| q)
}
