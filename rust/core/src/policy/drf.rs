//! Weighted dominant resource fairness across queues (Ghodsi et al., NSDI 2011).
//!
//! Each offer goes to the queue with the smallest dominant share divided by its weight; the
//! queue index breaks ties so that the order is deterministic.

use super::{Policy, QueueKey};
use crate::ids::QueueIdx;
use crate::state::ClusterState;

#[derive(Debug, Default, Clone, Copy)]
pub struct Drf;

impl Policy for Drf {
    fn name(&self) -> &'static str {
        "drf"
    }

    fn queue_key(&self, state: &ClusterState, queue: QueueIdx) -> QueueKey {
        QueueKey::drf(state, queue, 0)
    }

    fn keys_follow_queue_state(&self) -> bool {
        true
    }
}
