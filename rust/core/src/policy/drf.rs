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
        least_weighted_share_by(state, candidates, |_| 0)
    }
}

/// The candidate with the smallest `(tier, key)` (first on ties). Policies layer classes over
/// DRF by giving each queue a tier and an order within it.
#[inline]
pub fn least_by(candidates: &[QueueIdx], key: impl Fn(QueueIdx) -> (u8, f64)) -> Option<QueueIdx> {
    let mut best: Option<((u8, f64), QueueIdx)> = None;
    for &q in candidates {
        let k = key(q);
        if best.map_or(true, |(b, _)| k.0 < b.0 || (k.0 == b.0 && k.1 < b.1)) {
            best = Some((k, q));
        }
    }
    best.map(|(_, q)| q)
}

/// Weighted DRF within tiers: the lowest tier first, then the smallest weighted dominant share.
#[inline]
pub fn least_weighted_share_by(
    state: &ClusterState,
    candidates: &[QueueIdx],
    tier: impl Fn(QueueIdx) -> u8,
) -> Option<QueueIdx> {
    least_by(candidates, |q| (tier(q), state.queues[q].weighted_dominant_share(&state.capacity)))
}
