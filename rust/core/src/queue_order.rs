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
            // Stale entries pile up as queues are re-keyed: drop them when they outnumber the
            // live ones, which keeps the heap O(Q) at an amortised O(1) per re-key.
            if self.heap.len() > 2 * state.queues.len() + 64 {
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
        self.heap = BinaryHeap::from(entries);
    }

    fn rekey_touched(&mut self, state: &ClusterState, policy: &dyn Policy) {
        for qi in std::mem::take(&mut self.touched) {
            if !std::mem::take(&mut self.marked[qi]) {
                continue; // re-keyed since it was touched
            }
            let now = key_of(state, policy, qi);
            if now != self.live[qi] {
                self.live[qi] = now;
                if let Some((k, s)) = now {
                    self.heap.push(Reverse((k, s, qi)));
                }
            }
        }
    }

    /// Takes the first queue in order out of the order.
    pub fn pop(&mut self) -> Option<Entry> {
        while let Some(Reverse(e @ (key, served, qi))) = self.heap.pop() {
            if self.live[qi] == Some((key, served)) {
                self.live[qi] = None;
                return Some(e);
            }
        }
        None
    }

    /// Puts queue `qi`, taken out and found with a stale key, back with `key`, its key now.
    pub fn push(&mut self, key: PathKey, served: AllocationId, qi: QueueIdx) {
        self.live[qi] = Some((key, served));
        self.heap.push(Reverse((key, served, qi)));
    }

    /// Puts queue `qi`, just served, back under its new key if it has demand left.
    pub fn requeue(&mut self, state: &ClusterState, policy: &dyn Policy, qi: QueueIdx) {
        if let Some(m) = self.marked.get_mut(qi) {
            *m = false;
        }
        if let Some((k, s)) = key_of(state, policy, qi) {
            self.push(k, s, qi);
        }
    }

    /// Queue `qi`, just taken out, had nothing for the node: it sits out the rest of the
    /// heartbeat.
    pub fn pass(&mut self, qi: QueueIdx) {
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
        for qi in std::mem::take(&mut self.passed) {
            if !self.marked[qi] {
                self.marked[qi] = true;
                self.touched.push(qi);
            }
        }
        self.rekey_touched(state, policy);
    }
}
