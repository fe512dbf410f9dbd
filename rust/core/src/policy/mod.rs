//! Scheduling policies as plugins at named extension points, in the spirit of the Kubernetes
//! scheduling framework. The scheduler owns the state and YARN's request semantics; a policy
//! only answers the questions asked at its extension points.
//!
//! Extension points, in the order a heartbeat reaches them:
//! 1. [`Policy::begin_heartbeat`]: time has advanced; refresh time-driven state.
//! 2. [`Policy::pick_queue`]: which queue is offered the node next (queue sort).
//! 3. [`Policy::on_allocated`] / [`Policy::on_released`]: bookkeeping after a container
//!    starts or ends.

pub mod drf;

use crate::config::PolicyKind;
use crate::state::{AppSlot, ClusterState, QueueIdx};
use crate::resource::Resources;

pub trait Policy: Send {
    fn name(&self) -> &'static str;

    /// Called once per heartbeat before any assignment.
    fn begin_heartbeat(&mut self, _state: &ClusterState, _now_ms: i64) {}

    /// Picks the queue to offer the node to next, from `candidates` (queues with pending asks
    /// that may fit). Returning `None` ends the heartbeat's assignments.
    fn pick_queue(&mut self, state: &ClusterState, candidates: &[QueueIdx]) -> Option<QueueIdx>;

    fn on_allocated(&mut self, _state: &ClusterState, _app: AppSlot, _resources: Resources) {}

    fn on_released(&mut self, _state: &ClusterState, _app: AppSlot, _resources: Resources) {}
}

/// Builds the policy a configuration names.
pub fn build(kind: PolicyKind) -> Box<dyn Policy> {
    match kind {
        PolicyKind::Drf => Box::new(drf::Drf),
    }
}
