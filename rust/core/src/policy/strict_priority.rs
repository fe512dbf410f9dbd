//! Strict priority: latency-sensitive queues always before throughput queues, weighted DRF
//! within each group. The baseline BoPF is measured against (best for LQs, no TQ protection).

use super::drf::least_weighted_share_by;
use super::Policy;
use crate::state::{ClusterState, QueueIdx};

#[derive(Debug, Default, Clone, Copy)]
pub struct StrictPriority;

impl Policy for StrictPriority {
    fn name(&self) -> &'static str {
        "strict-priority"
    }

    fn pick_queue(&mut self, state: &ClusterState, candidates: &[QueueIdx]) -> Option<QueueIdx> {
        least_weighted_share_by(state, candidates, |q| {
            if state.queues[q].config.is_latency_sensitive() { 0 } else { 1 }
        })
    }
}
