//! The simulation's events and the time-ordered queue they wait in.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use tidal_core::ids::AllocationId;

/// What happens at an event's time. Events of the same millisecond run in the order the kinds
/// are listed here, then in the order they were queued: a task's end is known before the
/// heartbeat of that millisecond reports it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum EventKind {
    /// The task in container `alloc` on `node` ends; the node's next heartbeat reports it.
    TaskEnd { node: u32, alloc: AllocationId },
    /// Job `job` is submitted.
    Arrival { job: u32 },
    /// Job `job`'s ApplicationMaster has started and asks for its first stages.
    AmReady { job: u32 },
    /// Node `node` heartbeats.
    Heartbeat { node: u32 },
    /// Queue shares and held resources are sampled.
    Sample,
    /// Parked nodes are looked at again, for policies that change their mind with time alone.
    Recheck,
}

impl EventKind {
    /// Order among the events of one millisecond.
    fn rank(self) -> u8 {
        match self {
            EventKind::TaskEnd { .. } => 0,
            EventKind::Arrival { .. } => 1,
            EventKind::AmReady { .. } => 2,
            EventKind::Heartbeat { .. } => 3,
            EventKind::Sample => 4,
            EventKind::Recheck => 5,
        }
    }

    /// Whether the event can make progress on its own; the others only repeat while time passes.
    fn is_live(self) -> bool {
        matches!(self, EventKind::TaskEnd { .. } | EventKind::Arrival { .. } | EventKind::AmReady { .. })
    }
}

#[derive(Copy, Clone, Debug)]
pub struct Event {
    pub time: i64,
    /// Queueing order, the tie-breaker among events of the same time and kind.
    seq: u64,
    pub kind: EventKind,
}

impl Event {
    fn key(&self) -> (i64, u8, u64) {
        (self.time, self.kind.rank(), self.seq)
    }
}

impl PartialEq for Event {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}

impl Eq for Event {}

impl PartialOrd for Event {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Event {
    fn cmp(&self, other: &Self) -> Ordering {
        self.key().cmp(&other.key())
    }
}

/// Events in time order, counting those that can make progress on their own.
pub struct EventQueue {
    heap: BinaryHeap<Reverse<Event>>,
    seq: u64,
    live: u64,
}

impl EventQueue {
    pub fn with_capacity(capacity: usize) -> EventQueue {
        EventQueue { heap: BinaryHeap::with_capacity(capacity), seq: 0, live: 0 }
    }

    pub fn push(&mut self, time: i64, kind: EventKind) {
        self.seq += 1;
        if kind.is_live() {
            self.live += 1;
        }
        self.heap.push(Reverse(Event { time, seq: self.seq, kind }));
    }

    pub fn pop(&mut self) -> Option<Event> {
        let Reverse(event) = self.heap.pop()?;
        if event.kind.is_live() {
            self.live -= 1;
        }
        Some(event)
    }

    /// Whether a queued event can make progress on its own (a task end, an arrival, an AM start).
    pub fn has_live(&self) -> bool {
        self.live > 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_order_by_time_then_kind() {
        let mut q = EventQueue::with_capacity(4);
        q.push(5, EventKind::Heartbeat { node: 0 });
        q.push(5, EventKind::TaskEnd { node: 0, alloc: 0 });
        q.push(4, EventKind::Sample);
        let order: Vec<EventKind> = std::iter::from_fn(|| q.pop().map(|e| e.kind)).collect();
        // Completions are known before the heartbeat of the same millisecond reports them.
        assert_eq!(
            order,
            vec![EventKind::Sample, EventKind::TaskEnd { node: 0, alloc: 0 }, EventKind::Heartbeat { node: 0 }]
        );
    }
}
