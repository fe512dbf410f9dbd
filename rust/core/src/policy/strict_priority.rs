//! Strict priority: latency-sensitive queues always before throughput queues, weighted DRF
//! within each group. The baseline BoPF is measured against (best for LQs, no TQ protection).

use super::{Policy, QueueKey};
use crate::ids::QueueIdx;
use crate::state::ClusterState;

#[derive(Debug, Default, Clone, Copy)]
pub struct StrictPriority;

impl Policy for StrictPriority {
    fn name(&self) -> &'static str {
        "strict-priority"
    }

    fn queue_key(&self, state: &ClusterState, queue: QueueIdx) -> QueueKey {
        let tier = if state.queues[queue].config.is_latency_sensitive() { 0 } else { 1 };
        QueueKey::drf(state, queue, tier)
    }

    fn keys_follow_queue_state(&self) -> bool {
        true
    }
}
