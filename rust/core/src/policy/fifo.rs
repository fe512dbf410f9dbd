//! FIFO inside a queue, YARN's default app order: apps in submission order, each app's asks
//! highest priority first. An app still waiting for its first container (its ApplicationMaster)
//! goes before older apps' tasks, so that every app can start.

use super::{AppPolicy, NodeOffer};
use crate::request::Placement;
use crate::state::{AppSlot, ClusterState, QueueIdx};

#[derive(Debug, Default, Clone, Copy)]
pub struct Fifo;

impl AppPolicy for Fifo {
    fn name(&self) -> &'static str {
        "fifo"
    }

    fn select(&mut self, state: &ClusterState, queue: QueueIdx, offer: &NodeOffer) -> Option<(AppSlot, Placement)> {
        let q = &state.queues[queue];
        let try_app = |&slot: &AppSlot| offer.first_fit(state, slot).map(|p| (slot, p));
        if q.apps_waiting_for_am > 0 {
            let waiting = q.apps.iter().filter(|&&s| !state.app(s).started);
            if let Some(hit) = waiting.filter_map(try_app).next() {
                return Some(hit);
            }
        }
        q.apps.iter().find_map(try_app)
    }
}
