//! The simulated NodeManagers: when each heartbeats, what it reports, which heartbeats to simulate.
//!
//! Every node has a fixed phase and heartbeats at `phase + k * interval`, as an NM does. A
//! heartbeat is only *simulated* when it can matter:
//! - the node has completed containers to report; or
//! - some ask is pending and the node's free space fits the component-wise minimum of the
//!   pending capabilities (a necessary condition for any allocation); or
//! - the node's previous heartbeat started `max_assign_per_heartbeat` containers (it may
//!   start more).
//!
//! A skipped heartbeat would have reported nothing and started nothing, so for a policy whose
//! choices depend on the cluster state (DRF, and any policy that only looks at
//! `ClusterState`), skipping it changes no decision; the only thing lost is the core's
//! `begin_heartbeat(now)` call at that instant, which the next simulated heartbeat makes with
//! the later time. Policies whose decisions change with time alone are covered by
//! `idle_recheck_ms`: when no parked node can take anything, every node is looked at again
//! after that long (set it to the heartbeat interval for NM-exact behaviour).
//!
//! Parked nodes are visited by a cursor in phase order, i.e. in the order their real
//! heartbeats would arrive, one at a time, so that pending asks go to the nodes that would
//! have heartbeated first. The cursor stops when nothing is pending or after a full round
//! that started nothing, and restarts only when a new ask could fit a node it has passed.

use super::events::{EventKind, EventQueue};
use std::collections::BTreeMap;
use tidal_core::ids::AllocationId;
use tidal_core::{Resources, DIMS};

struct Node {
    /// Offset of the node's heartbeats within the interval.
    phase: i64,
    /// Containers completed since the node's last heartbeat, which reports them.
    completed: Vec<AllocationId>,
    /// Its next heartbeat is queued.
    scheduled: bool,
    /// Cursor generation that woke the node, 0 if none.
    cursor_gen: u64,
    last_heartbeat: i64,
    /// What a heartbeat could hand out: free space plus the holds of slot reservations, which
    /// their own app, or a queue of a higher priority, may use.
    usable: Resources,
}

struct Cursor {
    gen: u64,
    active: bool,
    pos: usize,
    /// Nodes visited since the last container the cursor's nodes started.
    idle: usize,
}

/// A heartbeat between [`Nodes::begin_heartbeat`] and [`Nodes::end_heartbeat`].
pub struct Heartbeat {
    /// Cursor generation that woke the node, 0 if none.
    via: u64,
    /// It can report or start something: the core sees it.
    pub matters: bool,
}

pub struct Nodes {
    nodes: Vec<Node>,
    heartbeat_ms: i64,
    idle_recheck_ms: i64,
    /// Containers a heartbeat may start before the node heartbeats again at once.
    max_assign: usize,
    /// Pending containers per normalised capability.
    pending_caps: BTreeMap<[i64; DIMS], u64>,
    pending_total: u64,
    /// Per resource, how many of `pending_caps`' capabilities ask each amount: their first keys
    /// are the component-wise minimum, kept without a scan of every capability.
    cap_amounts: [BTreeMap<i64, u32>; DIMS],
    cursor: Cursor,
    /// A capability at least this large (component-wise) fits no parked node: every parked
    /// node was found not to fit some capability below it. `None` when some parked node
    /// might fit anything.
    park_floor: Option<Resources>,
    recheck_scheduled: bool,
}

/// Whether `a` is at least `b` in every resource.
fn covers(a: &Resources, b: &Resources) -> bool {
    b.fits_in(a)
}

impl Nodes {
    /// `n` empty nodes of `capacity`, their heartbeats spread evenly over the interval.
    pub fn new(n: usize, capacity: Resources, heartbeat_ms: i64, idle_recheck_ms: i64, max_assign: usize) -> Nodes {
        let nodes = (0..n)
            .map(|i| Node {
                phase: (i as i64 * heartbeat_ms) / n as i64,
                completed: Vec::new(),
                scheduled: false,
                cursor_gen: 0,
                last_heartbeat: i64::MIN / 2,
                usable: capacity,
            })
            .collect();
        Nodes {
            nodes,
            heartbeat_ms,
            idle_recheck_ms,
            max_assign,
            pending_caps: BTreeMap::new(),
            pending_total: 0,
            cap_amounts: std::array::from_fn(|_| BTreeMap::new()),
            cursor: Cursor { gen: 0, active: false, pos: 0, idle: 0 },
            park_floor: None,
            recheck_scheduled: false,
        }
    }

    /// The node's first heartbeat at or after `t`.
    fn next_tick(&self, n: u32, t: i64) -> i64 {
        let p = self.nodes[n as usize].phase;
        let i = self.heartbeat_ms;
        if t <= p {
            p
        } else {
            p + (t - p + i - 1) / i * i
        }
    }

    /// Queues the node's next heartbeat after `t`, unless one is queued.
    pub fn wake(&mut self, n: u32, t: i64, events: &mut EventQueue) {
        let node = &self.nodes[n as usize];
        if !node.scheduled {
            let at = self.next_tick(n, t.max(node.last_heartbeat + 1));
            self.nodes[n as usize].scheduled = true;
            events.push(at, EventKind::Heartbeat { node: n });
        }
    }

    /// A container on node `n` has ended: its next heartbeat reports it.
    pub fn complete(&mut self, n: u32, alloc: AllocationId, now: i64, events: &mut EventQueue) {
        self.nodes[n as usize].completed.push(alloc);
        self.wake(n, now, events);
    }

    /// After the core changed what node `n` holds.
    pub fn set_usable(&mut self, n: u32, usable: Resources) {
        self.nodes[n as usize].usable = usable;
    }

    /// The component-wise minimum of the pending capabilities.
    fn min_cap(&self) -> Option<Resources> {
        let mut min = [0; DIMS];
        for (m, amounts) in min.iter_mut().zip(&self.cap_amounts) {
            *m = *amounts.keys().next()?;
        }
        Some(Resources(min))
    }

    pub fn pending_total(&self) -> u64 {
        self.pending_total
    }

    /// Whether node `n` could start a pending container.
    pub fn fits_pending(&self, n: u32) -> bool {
        self.pending_total > 0 && self.min_cap().is_some_and(|m| m.fits_in(&self.nodes[n as usize].usable))
    }

    /// `count` more containers of capability `cap` (normalised) are pending.
    pub fn add_pending(&mut self, cap: &Resources, count: u64, now: i64, events: &mut EventQueue) {
        let pending = self.pending_caps.entry(cap.0).or_default();
        if *pending == 0 {
            for (amounts, v) in self.cap_amounts.iter_mut().zip(cap.0) {
                *amounts.entry(v).or_default() += 1;
            }
        }
        *pending += count;
        self.pending_total += count;
        let covered = self.park_floor.is_some_and(|f| covers(cap, &f));
        if !covered {
            self.restart_cursor(now, events);
        }
    }

    /// One pending container of capability `cap` (normalised) was started or withdrawn.
    pub fn take_pending(&mut self, cap: &Resources) {
        self.pending_total -= 1;
        if let Some(c) = self.pending_caps.get_mut(&cap.0) {
            *c -= 1;
            if *c == 0 {
                self.pending_caps.remove(&cap.0);
                for (amounts, v) in self.cap_amounts.iter_mut().zip(cap.0) {
                    if let Some(k) = amounts.get_mut(&v) {
                        *k -= 1;
                        if *k == 0 {
                            amounts.remove(&v);
                        }
                    }
                }
            }
        }
    }

    fn restart_cursor(&mut self, now: i64, events: &mut EventQueue) {
        self.cursor.gen += 1;
        self.cursor.active = true;
        self.cursor.idle = 0;
        let r = now.rem_euclid(self.heartbeat_ms);
        let pos = self.nodes.partition_point(|n| n.phase < r);
        self.cursor.pos = if pos >= self.nodes.len() { 0 } else { pos };
        self.park_floor = self.min_cap();
        self.advance_cursor(now, events);
    }

    fn advance_cursor(&mut self, now: i64, events: &mut EventQueue) {
        if self.pending_total == 0 {
            self.cursor.active = false;
            self.park_floor = None;
            return;
        }
        let Some(min) = self.min_cap() else {
            self.cursor.active = false;
            return;
        };
        // Nodes skipped below do not fit `min`.
        self.park_floor = self.park_floor.map(|f| f.max(&min));
        let n_nodes = self.nodes.len();
        while self.cursor.idle < n_nodes {
            let n = self.cursor.pos;
            self.cursor.pos = if n + 1 == n_nodes { 0 } else { n + 1 };
            self.cursor.idle += 1;
            if !self.nodes[n].scheduled && min.fits_in(&self.nodes[n].usable) {
                self.nodes[n].cursor_gen = self.cursor.gen;
                self.wake(n as u32, now, events);
                return;
            }
        }
        // A full round started nothing: nothing parked can take a pending ask.
        self.park_floor = self.park_floor.map(|f| f.max(&min));
        self.cursor.active = false;
        if self.idle_recheck_ms > 0 && !self.recheck_scheduled {
            self.recheck_scheduled = true;
            events.push(now + self.idle_recheck_ms, EventKind::Recheck);
        }
    }

    /// Node `n` waits for an event that wakes it.
    pub fn park(&mut self, n: u32) {
        if self.pending_total == 0 {
            self.park_floor = None;
            return;
        }
        match self.min_cap() {
            Some(min) if !min.fits_in(&self.nodes[n as usize].usable) => {
                self.park_floor = self.park_floor.map(|f| f.max(&min));
            }
            _ => self.park_floor = None,
        }
    }

    /// Node `n` heartbeats. When the heartbeat can report or start something, what it reports
    /// moves into `completed` and the core is to see it.
    pub fn begin_heartbeat(&mut self, n: u32, now: i64, completed: &mut Vec<AllocationId>) -> Heartbeat {
        let node = &mut self.nodes[n as usize];
        node.scheduled = false;
        node.last_heartbeat = now;
        let via = std::mem::take(&mut node.cursor_gen);
        let matters = !node.completed.is_empty() || self.fits_pending(n);
        if matters {
            std::mem::swap(completed, &mut self.nodes[n as usize].completed);
        }
        Heartbeat { via, matters }
    }

    /// After node `n`'s heartbeat started `made` containers: it heartbeats again at once if it
    /// may start more, else parks; the cursor moves on if it woke the node.
    pub fn end_heartbeat(&mut self, n: u32, now: i64, beat: Heartbeat, made: usize, events: &mut EventQueue) {
        if made >= self.max_assign && self.pending_total > 0 {
            self.wake(n, now + 1, events);
        } else {
            self.park(n);
        }
        if beat.via != 0 && beat.via == self.cursor.gen && self.cursor.active {
            if made > 0 {
                self.cursor.idle = 0;
            }
            self.advance_cursor(now, events);
        }
    }

    fn all_parked(&self) -> bool {
        self.nodes.iter().all(|x| !x.scheduled)
    }

    /// Asks are pending, yet no node heartbeat and no re-check is queued: unless a task is
    /// running or a live event is queued, nothing can ever place them.
    pub fn stalled(&self) -> bool {
        !self.cursor.active && !self.recheck_scheduled && self.pending_total > 0 && self.all_parked()
    }

    /// The re-check event: every node is looked at again. `quiet` when no task runs and no
    /// live event is queued; returns whether the simulation is then stuck for good.
    pub fn recheck(&mut self, now: i64, quiet: bool, events: &mut EventQueue) -> bool {
        self.recheck_scheduled = false;
        if self.cursor.active || self.pending_total == 0 {
            return false;
        }
        // Nothing can change any more except time: the round below is the last chance.
        let last_chance = quiet && self.all_parked();
        self.restart_cursor(now, events);
        last_chance && !self.cursor.active
    }
}
