//! Container reservation, as YARN's own schedulers do it: when the queue first in line cannot
//! start anything on a node because its app's ask is larger than the node's free space (though
//! not larger than the node), the node is reserved for that ask. A reserved node starts nothing
//! else until the ask fits and starts there, or the app stops asking for it. Without this a
//! large ask waits forever behind smaller ones that take the space as it frees.
//!
//! Choices where Hadoop's schedulers differ or say nothing (docs/operations.md, "Behaving as YARN
//! expects a scheduler to", lists them):
//! - a node is reserved only while it has room for the smallest container (the minimum
//!   allocation), which smaller asks would take; a full node starts nothing for anyone anyway, and
//!   holding it would only bypass the queue order when space frees;
//! - at most one reservation per node (as both) and per app (FairScheduler lets an app reserve
//!   several nodes; one is enough to stop the starvation and blocks the fewest nodes);
//! - the app reserved for is the queue's oldest started app whose highest-priority ask that may
//!   go on the node fits the node's capacity within the queue's headroom but not its free
//!   space; an app still waiting for its ApplicationMaster is never reserved for, since what
//!   holds an AM back is its queue's AM share as often as the node's room;
//! - off unless [`crate::config::Settings::reserve_containers`] turns it on: the ResourceManager
//!   does, as the stock schedulers always reserve; the simulator's paper set-ups model
//!   schedulers that do not.

use crate::ids::{AppIdx, LocationId, NodeId, Priority, QueueIdx};
use crate::request::Placement;
use crate::resource::Resources;
use crate::state::{App, ClusterState};
use std::collections::HashMap;

/// An ask a node is reserved for.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct ReservedContainer {
    pub app: AppIdx,
    pub priority: Priority,
    pub resources: Resources,
}

/// The reserved nodes, by node and by app.
#[derive(Debug, Default)]
pub struct ContainerReservations {
    by_node: Vec<Option<ReservedContainer>>,
    by_app: HashMap<AppIdx, NodeId>,
}

impl ContainerReservations {
    /// The ask node `node` is reserved for, if any.
    #[inline]
    pub fn on(&self, node: NodeId) -> Option<ReservedContainer> {
        self.by_node.get(node as usize).copied().flatten()
    }

    pub fn app_has_one(&self, app: AppIdx) -> bool {
        self.by_app.contains_key(&app)
    }

    pub fn len(&self) -> usize {
        self.by_app.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_app.is_empty()
    }

    /// Reserves `node` (which has none) for `r` (whose app has none).
    pub fn reserve(&mut self, node: NodeId, r: ReservedContainer) {
        let i = node as usize;
        if self.by_node.len() <= i {
            self.by_node.resize(i + 1, None);
        }
        debug_assert!(self.by_node[i].is_none() && !self.by_app.contains_key(&r.app));
        self.by_node[i] = Some(r);
        self.by_app.insert(r.app, node);
    }

    /// Ends the reservation on `node`, returning it.
    pub fn clear_node(&mut self, node: NodeId) -> Option<ReservedContainer> {
        let r = self.by_node.get_mut(node as usize)?.take()?;
        self.by_app.remove(&r.app);
        Some(r)
    }

    /// Ends `app`'s reservation, returning its node.
    pub fn clear_app(&mut self, app: AppIdx) -> Option<NodeId> {
        let node = self.by_app.remove(&app)?;
        self.by_node[node as usize] = None;
        Some(node)
    }
}

/// The placement of `r` on the node at (`host`, `rack`) while `app` still asks for it (the same
/// priority and capability, allowed there), else `None`.
#[inline]
pub fn still_asked(app: &App, host: LocationId, rack: LocationId, r: &ReservedContainer) -> Option<Placement> {
    app.asks.placements(host, rack, &r.resources).find(|p| p.priority == r.priority && p.resources == r.resources)
}

/// The ask of queue `queue` to reserve the node at (`host`, `rack`) for, when the queue can
/// start nothing within `room` (the node's free space within its headroom): see the module
/// comment. `cap` is the node's capacity within the queue's headroom.
pub fn candidate(
    state: &ClusterState,
    reservations: &ContainerReservations,
    queue: QueueIdx,
    host: LocationId,
    rack: LocationId,
    room: &Resources,
    cap: &Resources,
) -> Option<ReservedContainer> {
    state.queues[queue].started_pending.iter().filter(|&a| !reservations.app_has_one(a)).find_map(|a| {
        let p = state.app(a).asks.find(host, rack, cap)?;
        (!p.resources.fits_in(room)).then_some(ReservedContainer {
            app: a,
            priority: p.priority,
            resources: p.resources,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_reservation_per_node_and_per_app() {
        let mut r = ContainerReservations::default();
        let rc = ReservedContainer { app: 3, priority: 1, resources: Resources::new(6000, 1) };
        r.reserve(5, rc);
        assert_eq!(r.on(5), Some(rc));
        assert_eq!(r.on(4), None);
        assert_eq!(r.on(500), None);
        assert!(r.app_has_one(3));
        assert_eq!(r.clear_app(3), Some(5));
        assert_eq!(r.on(5), None);
        assert!(r.is_empty());
        r.reserve(5, rc);
        assert_eq!(r.clear_node(5), Some(rc));
        assert!(!r.app_has_one(3));
        assert_eq!(r.clear_node(5), None);
    }
}
