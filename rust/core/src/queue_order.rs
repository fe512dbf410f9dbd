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
//! The heap keeps stale entries rather than searching for them: each queue's entry in force is
//! recorded in `live`, and a popped entry that is not the one in force is dropped.

use crate::ids::{AllocationId, QueueIdx};
use crate::policy::{PathKey, Policy};
use crate::state::ClusterState;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// A queue's place in the order: among equal keys the queue served least recently goes first,
/// so ties rotate instead of always favouring the same queue (which could starve another queue
/// that keeps tying with it); the index makes the order total.
pub(crate) type Entry = (PathKey, AllocationId, QueueIdx);

#[derive(Debug, Default)]
pub(crate) struct QueueOrder {
    heap: BinaryHeap<Reverse<Entry>>,
    /// Per queue, its entry in force in `heap`: `None` when it has no demand, or while a
    /// heartbeat has taken it out.
    live: Vec<Option<(PathKey, AllocationId)>>,
    /// Queues whose key inputs changed since they were keyed, each once.
    touched: Vec<QueueIdx>,
    marked: Vec<bool>,
    /// Queues this heartbeat took out without serving; they go back at its end.
    passed: Vec<QueueIdx>,
    /// Entries of `heap` in force (the rest are stale).
    in_force: usize,
    /// Spare buffer for re-keying without allocating.
    spare: Vec<QueueIdx>,
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
            // Stale entries pile up as queues are re-keyed (those of raised keys are never
            // popped): drop them once they outnumber the entries in force, which keeps the heap
            // within twice the queues with demand at an amortised O(1) per re-key.
            if self.heap.len() > 2 * self.in_force + 2 {
                self.rebuild_from_live();
            }
            #[cfg(debug_assertions)]
            for qi in 0..state.queues.len() {
                debug_assert_eq!(self.live[qi], key_of(state, policy, qi), "kept key of queue {qi} is stale");
            }
            return;
        }
        self.live.clear();
        self.live.extend((0..state.queues.len()).map(|qi| key_of(state, policy, qi)));
        self.marked.clear();
        self.marked.resize(state.queues.len(), false);
        self.touched.clear();
        self.rebuild_from_live();
        self.kept = keep;
    }

    fn rebuild_from_live(&mut self) {
        let mut entries = std::mem::take(&mut self.heap).into_vec();
        entries.clear();
        entries.extend(self.live.iter().enumerate().filter_map(|(qi, e)| e.map(|(k, s)| Reverse((k, s, qi)))));
        self.in_force = entries.len();
        self.heap = BinaryHeap::from(entries);
    }

    fn rekey_touched(&mut self, state: &ClusterState, policy: &dyn Policy) {
        let mut touched = std::mem::replace(&mut self.touched, std::mem::take(&mut self.spare));
        for &qi in &touched {
            if !std::mem::take(&mut self.marked[qi]) {
                continue; // re-keyed since it was touched
            }
            let now = key_of(state, policy, qi);
            if now != self.live[qi] {
                if let Some((k, s)) = now {
                    self.in_force += usize::from(self.live[qi].is_none());
                    self.live[qi] = Some((k, s));
                    self.heap.push(Reverse((k, s, qi)));
                } else {
                    self.in_force -= usize::from(self.live[qi].is_some());
                    self.live[qi] = None;
                }
            }
        }
        touched.clear();
        self.spare = touched;
    }

    /// The first queue in order, left in place; stale entries on top are dropped.
    pub fn first(&mut self) -> Option<Entry> {
        while let Some(&Reverse(e @ (key, served, qi))) = self.heap.peek() {
            if self.live[qi] == Some((key, served)) {
                return Some(e);
            }
            self.heap.pop();
        }
        None
    }

    /// Replaces the entry [`QueueOrder::first`] returned with `now` (its queue's key now), or
    /// takes it out when `now` is `None`: one sift down rather than a pop and a push.
    fn replace_first(&mut self, qi: QueueIdx, now: Option<(PathKey, AllocationId)>) {
        match now {
            Some((k, s)) => {
                let mut top = self.heap.peek_mut().expect("first() returned this entry");
                debug_assert_eq!(top.0 .2, qi);
                *top = Reverse((k, s, qi));
            }
            None => {
                self.heap.pop();
                self.in_force -= 1;
            }
        }
        self.live[qi] = now;
    }

    /// The first queue, found with a stale key, goes back under `key`, its key now.
    pub fn rekey_first(&mut self, key: PathKey, served: AllocationId, qi: QueueIdx) {
        self.replace_first(qi, Some((key, served)));
    }

    /// The first queue, just served, goes back under its new key if it has demand left.
    pub fn requeue_first(&mut self, state: &ClusterState, policy: &dyn Policy, qi: QueueIdx) {
        if let Some(m) = self.marked.get_mut(qi) {
            *m = false;
        }
        self.replace_first(qi, key_of(state, policy, qi));
    }

    /// The first queue had nothing for the node: it sits out the rest of the heartbeat.
    pub fn pass_first(&mut self, qi: QueueIdx) {
        self.replace_first(qi, None);
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
