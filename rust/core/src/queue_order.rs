//! The order in which queues are offered a node, kept across heartbeats.
//!
//! A heartbeat offers the node to queues with demand in increasing (policy key, last allocation
//! id, index) order. Rebuilding that order costs O(Q) per heartbeat, which dominates a heartbeat
//! of a few decisions among many queues. When the policy's keys follow the queues' own counters
//! only (see [`Policy::keys_follow_queue_state`]) and the queues form no tree, the order is kept
//! between heartbeats instead: the scheduler marks the queues whose counters it changed
//! ([`QueueOrder::touch`]), and everything else that may move keys (capacity, configuration,
//! queues coming and going) drops the kept order ([`QueueOrder::forget`]). Marked queues are
//! re-keyed before the next offer, so the order offered is the one a rebuild would give.
//!
//! The order is an indexed binary min-heap: it holds each queue with demand once, and each
//! queue knows its place in it, so a queue whose key changed moves up or down from where it is
//! and one without demand left is taken out where it is, each in O(log Q). A heap node carries
//! its queue's tier and top-level order packed into one integer with, in a flat file, the last
//! allocation id, so most comparisons are one integer comparison; the levels below the top
//! (a tree's) are looked up only on ties.

use crate::ids::{AllocationId, QueueIdx, MAX_ALLOCATION_ID};
use crate::policy::{PathKey, Policy};
use crate::state::ClusterState;
use std::cmp::Ordering;

/// [`QueueOrder::place`] of a queue that is not in the heap.
const ABSENT: usize = usize::MAX;

/// A queue in the heap, with its key packed for comparing: [`PathKey::head`] in the top 72
/// bits, then, in a flat file, the last allocation id (below 2^40) in the next 40.
#[derive(Copy, Clone, Debug)]
struct Node {
    rank: u128,
    queue: QueueIdx,
}

#[derive(Debug, Default)]
pub(crate) struct QueueOrder {
    /// The queues with demand, each once, the least on top. While a heartbeat offers the node,
    /// queues it passed are out of it until `finish`.
    heap: Vec<Node>,
    /// Per queue, its index in `heap`, or [`ABSENT`].
    place: Vec<usize>,
    /// Per queue, its key in force: `None` when it has no demand, or while a heartbeat has
    /// taken it out.
    live: Vec<Option<(PathKey, AllocationId)>>,
    /// Whether keys below the top level may differ (a tree of queues): ranks then leave the
    /// last allocation id out, and ties of ranks compare the lower levels first.
    deep: bool,
    /// Queues whose key inputs changed since they were keyed, each once.
    touched: Vec<QueueIdx>,
    marked: Vec<bool>,
    /// Queues this heartbeat took out without serving; they go back at its end.
    passed: Vec<QueueIdx>,
    /// Whether `heap` and `live` may be kept; when not, the next heartbeat rebuilds them.
    kept: bool,
}

fn key_of(state: &ClusterState, policy: &dyn Policy, qi: QueueIdx) -> Option<(PathKey, AllocationId)> {
    let q = &state.queues[qi];
    (q.pending_containers > 0).then(|| (PathKey::of(state, qi, policy.queue_key(state, qi)), q.last_served))
}

impl QueueOrder {
    /// Queue `qi`'s usage, demand or last allocation changed.
    #[inline]
    pub fn touch(&mut self, qi: QueueIdx) {
        if !self.kept {
            return;
        }
        match self.marked.get_mut(qi) {
            Some(m) if !*m => {
                *m = true;
                self.touched.push(qi);
            }
            Some(_) => {}
            // A queue the kept order has not seen: the caller forgot to `forget`.
            None => self.kept = false,
        }
    }

    /// Something other than one queue's counters changed: rebuild before the next offer.
    pub fn forget(&mut self) {
        self.kept = false;
    }

    /// Readies the order for a heartbeat: re-keys the touched queues when the order may be
    /// kept (`keep`), else rebuilds it from every queue.
    pub fn prepare(&mut self, state: &ClusterState, policy: &dyn Policy, keep: bool) {
        debug_assert!(self.passed.is_empty());
        if keep && self.kept && self.live.len() == state.queues.len() {
            self.rekey_touched(state, policy);
            #[cfg(debug_assertions)]
            self.check(state, policy);
            return;
        }
        let n = state.queues.len();
        self.deep = state.hierarchical();
        self.live.clear();
        self.live.extend((0..n).map(|qi| key_of(state, policy, qi)));
        self.place.clear();
        self.place.resize(n, ABSENT);
        self.heap.clear();
        for qi in 0..n {
            if let Some((key, served)) = self.live[qi] {
                self.place[qi] = self.heap.len();
                self.heap.push(Node { rank: self.rank(&key, served), queue: qi });
            }
        }
        for i in (0..self.heap.len() / 2).rev() {
            self.sift_down(i);
        }
        self.marked.clear();
        self.marked.resize(n, false);
        self.touched.clear();
        self.kept = keep;
    }

    /// Checks that the kept order is the one a rebuild would give.
    #[cfg(debug_assertions)]
    fn check(&self, state: &ClusterState, policy: &dyn Policy) {
        for qi in 0..state.queues.len() {
            debug_assert_eq!(self.live[qi], key_of(state, policy, qi), "kept key of queue {qi} is stale");
            debug_assert_eq!(self.live[qi].is_some(), self.place[qi] != ABSENT, "queue {qi} in the heap or not");
        }
        for (i, n) in self.heap.iter().enumerate() {
            debug_assert_eq!(self.place[n.queue], i, "place of queue {}", n.queue);
            debug_assert!(i == 0 || !self.less(n, &self.heap[(i - 1) / 2]), "heap order at {i}");
        }
    }

    fn rank(&self, key: &PathKey, served: AllocationId) -> u128 {
        debug_assert!(served < MAX_ALLOCATION_ID);
        let served = if self.deep { 0 } else { u128::from(served) << 16 };
        (key.head() << 56) | served
    }

    /// Whether `a` comes before `b`: (key, last allocation id, index) order.
    #[inline]
    fn less(&self, a: &Node, b: &Node) -> bool {
        if a.rank != b.rank {
            return a.rank < b.rank;
        }
        if self.deep {
            let ((ka, sa), (kb, sb)) = (self.live[a.queue].expect("queued"), self.live[b.queue].expect("queued"));
            match ka.cmp_below_top(&kb).then(sa.cmp(&sb)) {
                Ordering::Less => return true,
                Ordering::Greater => return false,
                Ordering::Equal => {}
            }
        }
        a.queue < b.queue
    }

    /// Moves the node at `i` up to its place; returns where it ends.
    fn sift_up(&mut self, mut i: usize) -> usize {
        let node = self.heap[i];
        while i > 0 {
            let parent = (i - 1) / 2;
            if !self.less(&node, &self.heap[parent]) {
                break;
            }
            self.heap[i] = self.heap[parent];
            self.place[self.heap[i].queue] = i;
            i = parent;
        }
        self.heap[i] = node;
        self.place[node.queue] = i;
        i
    }

    /// Moves the node at `i` down to its place.
    fn sift_down(&mut self, mut i: usize) {
        let node = self.heap[i];
        let n = self.heap.len();
        loop {
            let mut child = 2 * i + 1;
            if child >= n {
                break;
            }
            if child + 1 < n && self.less(&self.heap[child + 1], &self.heap[child]) {
                child += 1;
            }
            if !self.less(&self.heap[child], &node) {
                break;
            }
            self.heap[i] = self.heap[child];
            self.place[self.heap[i].queue] = i;
            i = child;
        }
        self.heap[i] = node;
        self.place[node.queue] = i;
    }

    /// Sets queue `qi`'s key in force to `now` and moves it to its place: in, out, up or down.
    fn set(&mut self, qi: QueueIdx, now: Option<(PathKey, AllocationId)>) {
        self.live[qi] = now;
        let at = self.place[qi];
        match now {
            Some((key, served)) => {
                let node = Node { rank: self.rank(&key, served), queue: qi };
                let at = if at == ABSENT {
                    self.heap.push(node);
                    self.heap.len() - 1
                } else {
                    self.heap[at] = node;
                    at
                };
                if self.sift_up(at) == at {
                    self.sift_down(at);
                }
            }
            None if at != ABSENT => {
                self.place[qi] = ABSENT;
                let last = self.heap.pop().expect("the queue is in the heap");
                if at < self.heap.len() {
                    self.heap[at] = last;
                    if self.sift_up(at) == at {
                        self.sift_down(at);
                    }
                }
            }
            None => {}
        }
    }

    fn rekey_touched(&mut self, state: &ClusterState, policy: &dyn Policy) {
        // Taken out while re-keying, which touches nothing, and put back to keep its buffer.
        let mut touched = std::mem::take(&mut self.touched);
        for &qi in &touched {
            if !std::mem::take(&mut self.marked[qi]) {
                continue; // re-keyed since it was touched
            }
            let now = key_of(state, policy, qi);
            if now != self.live[qi] {
                self.set(qi, now);
            }
        }
        touched.clear();
        self.touched = touched;
    }

    /// The first queue in order and its key, left in place.
    #[inline]
    pub fn first(&self) -> Option<(QueueIdx, PathKey)> {
        let top = self.heap.first()?;
        Some((top.queue, self.live[top.queue].expect("a queued queue has a key").0))
    }

    /// The first queue, found with a stale key, goes back under `key`, its key now.
    pub fn rekey_first(&mut self, key: PathKey, qi: QueueIdx) {
        let (_, served) = self.live[qi].expect("the first queue has a key");
        self.set(qi, Some((key, served)));
    }

    /// The first queue, just served, goes back under its new key if it has demand left.
    pub fn requeue_first(&mut self, state: &ClusterState, policy: &dyn Policy, qi: QueueIdx) {
        if let Some(m) = self.marked.get_mut(qi) {
            *m = false;
        }
        self.set(qi, key_of(state, policy, qi));
    }

    /// The first queue had nothing for the node: it sits out the rest of the heartbeat.
    pub fn pass_first(&mut self, qi: QueueIdx) {
        self.set(qi, None);
        self.passed.push(qi);
    }

    /// Ends a heartbeat's offers: the queues served are re-keyed, and those that sat out come
    /// back, so the order holds every queue with demand again.
    pub fn finish(&mut self, state: &ClusterState, policy: &dyn Policy) {
        if !self.kept {
            // Rebuilt at the next heartbeat anyway.
            self.passed.clear();
            return;
        }
        let (marked, touched) = (&mut self.marked, &mut self.touched);
        for qi in self.passed.drain(..) {
            if !marked[qi] {
                marked[qi] = true;
                touched.push(qi);
            }
        }
        self.rekey_touched(state, policy);
    }
}
