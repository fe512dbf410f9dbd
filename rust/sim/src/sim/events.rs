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

/// Milliseconds ahead that the wheel of [`EventQueue`] covers: heartbeats and most task ends.
const WHEEL_MS: i64 = 1 << 16;

/// Events in time order, counting those that can make progress on their own.
///
/// A timing wheel: an event less than [`WHEEL_MS`] ahead waits in its millisecond's slot, a
/// later one in a heap until the wheel reaches it, and the events of the current millisecond
/// in a small heap. So the big heap of every running task's end is not walked per event, and
/// the order is exactly that of one heap: time, kind, then queueing order.
pub struct EventQueue {
    /// Events at or before `cur` (a push behind `cur` still pops first, as from one heap).
    current: BinaryHeap<Reverse<Event>>,
    cur: i64,
    /// Slot `t % WHEEL_MS` holds the events at time `t`, for `cur < t < cur + WHEEL_MS`.
    slots: Vec<Vec<Event>>,
    in_slots: usize,
    /// Events at `cur + WHEEL_MS` or later.
    far: BinaryHeap<Reverse<Event>>,
    seq: u64,
    live: u64,
}

fn slot(t: i64) -> usize {
    t.rem_euclid(WHEEL_MS) as usize
}

impl EventQueue {
    pub fn with_capacity(capacity: usize) -> EventQueue {
        EventQueue {
            current: BinaryHeap::new(),
            // Far enough back that any time is ahead of it, without overflow.
            cur: i64::MIN / 4,
            slots: (0..WHEEL_MS).map(|_| Vec::new()).collect(),
            in_slots: 0,
            far: BinaryHeap::with_capacity(capacity),
            seq: 0,
            live: 0,
        }
    }

    pub fn push(&mut self, time: i64, kind: EventKind) {
        self.seq += 1;
        if kind.is_live() {
            self.live += 1;
        }
        self.place(Event { time, seq: self.seq, kind });
    }

    fn place(&mut self, e: Event) {
        if e.time <= self.cur {
            self.current.push(Reverse(e));
        } else if e.time - self.cur < WHEEL_MS {
            self.slots[slot(e.time)].push(e);
            self.in_slots += 1;
        } else {
            self.far.push(Reverse(e));
        }
    }

    /// Moves `cur` to the next millisecond with events; false when there are none.
    fn advance(&mut self) -> bool {
        if self.in_slots == 0 {
            // Nothing within the wheel: jump to the first far event.
            let Some(Reverse(first)) = self.far.peek() else { return false };
            self.cur = first.time;
        } else {
            while self.slots[slot(self.cur + 1)].is_empty() {
                self.cur += 1;
            }
            self.cur += 1;
        }
        // The wheel now reaches `cur + WHEEL_MS - 1`: far events up to there come in.
        while let Some(Reverse(e)) = self.far.peek() {
            if e.time - self.cur >= WHEEL_MS {
                break;
            }
            let Reverse(e) = self.far.pop().expect("peeked");
            self.place(e);
        }
        // The slot's buffer goes too: kept, every slot would hold its busiest millisecond's room.
        let due = std::mem::take(&mut self.slots[slot(self.cur)]);
        self.in_slots -= due.len();
        self.current.extend(due.into_iter().map(Reverse));
        true
    }

    pub fn pop(&mut self) -> Option<Event> {
        let Reverse(event) = match self.current.pop() {
            Some(e) => e,
            None => {
                if !self.advance() {
                    return None;
                }
                self.current.pop()?
            }
        };
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

    /// The wheel pops exactly what one heap pops, for pushes now, soon, beyond the wheel and
    /// (never done by the engine, but kept in order) behind the current time.
    #[test]
    fn the_wheel_pops_in_the_order_of_one_heap() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let mut q = EventQueue::with_capacity(4);
        let mut heap = BinaryHeap::new();
        let mut seq = 0;
        let mut now = 0;
        let kinds = [
            EventKind::TaskEnd { node: 1, alloc: 2 },
            EventKind::Arrival { job: 0 },
            EventKind::Heartbeat { node: 3 },
            EventKind::Sample,
        ];
        let mut popped = 0;
        while popped < 20_000 {
            for _ in 0..rng.gen_range(0..4) {
                let ahead = match rng.gen_range(0..10) {
                    0 => 0,
                    1 => -rng.gen_range(1..5),
                    2 => rng.gen_range(WHEEL_MS - 3..WHEEL_MS * 3),
                    _ => rng.gen_range(1..2000),
                };
                let kind = kinds[rng.gen_range(0..kinds.len())];
                q.push(now + ahead, kind);
                seq += 1;
                heap.push(Reverse(Event { time: now + ahead, seq, kind }));
            }
            let (a, b) = (q.pop(), heap.pop().map(|Reverse(e)| e));
            assert_eq!(a.map(|e| (e.time, e.seq)), b.map(|e| (e.time, e.seq)));
            match a {
                Some(e) => now = e.time,
                None => q.push(now + 1, EventKind::Sample),
            }
            if a.is_none() {
                seq += 1;
                heap.push(Reverse(Event { time: now + 1, seq, kind: EventKind::Sample }));
            }
            popped += 1;
        }
    }
}
