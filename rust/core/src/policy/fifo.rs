//! FIFO inside a queue, YARN's default app order: apps in submission order, each app's asks
//! highest priority first. An app still waiting for its first container (its ApplicationMaster)
//! goes before older apps' tasks, so that every app can start.

use super::{AppPolicy, NodeOffer};
use crate::ids::{AppIdx, QueueIdx};
use crate::request::Placement;
use crate::state::ClusterState;

#[derive(Debug, Default, Clone, Copy)]
pub struct Fifo;

impl AppPolicy for Fifo {
    fn name(&self) -> &'static str {
        "fifo"
    }

    fn select(&mut self, state: &ClusterState, queue: QueueIdx, offer: &NodeOffer) -> Option<(AppIdx, Placement)> {
        // When no app waiting for its AM can start here, none of them can in submission order
        // either: the first app that can is a started one.
        offer.app_waiting_for_am(state, queue, false).or_else(|| offer.first_started_fit(state, queue))
    }
}
