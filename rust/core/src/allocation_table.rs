//! The live allocations by id.
//!
//! Ids are handed out in sequence and most containers end long before many more have started,
//! so an allocation lives in a ring indexed by its id's low bits: finding, adding or freeing one
//! reads one entry, with no hashing or probing, and containers started together sit side by
//! side. A container still running when the ids come round to its entry again moves to an
//! ordinary map, which lookups consult only when it holds something. The ring doubles when half
//! its entries are taken and never shrinks, so it holds at most four entries per allocation
//! live at its fullest.

use rustc_hash::FxHashMap;

use crate::ids::AllocationId;

/// Entries of the smallest ring.
const MIN_RING: usize = 64;

type Entry<A> = Option<(AllocationId, A)>;

/// Values `A` (the state's allocations) by allocation id.
#[derive(Clone, Debug)]
pub struct AllocationTable<A> {
    /// Entry `id & (len - 1)` holds allocation `id` unless a later id took it; the length is a
    /// power of two (or zero before the first insert).
    ring: Vec<Entry<A>>,
    /// Allocations whose entry a later id took.
    overflow: FxHashMap<AllocationId, A>,
    /// Entries of `ring` taken.
    in_ring: usize,
}

impl<A> Default for AllocationTable<A> {
    fn default() -> Self {
        AllocationTable { ring: Vec::new(), overflow: FxHashMap::default(), in_ring: 0 }
    }
}

impl<A> AllocationTable<A> {
    #[inline]
    fn index(&self, id: AllocationId) -> usize {
        id as usize & (self.ring.len().wrapping_sub(1))
    }

    pub fn len(&self) -> usize {
        self.in_ring + self.overflow.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    #[inline]
    pub fn get(&self, id: &AllocationId) -> Option<&A> {
        match self.ring.get(self.index(*id)) {
            Some(Some((k, a))) if k == id => Some(a),
            _ if self.overflow.is_empty() => None,
            _ => self.overflow.get(id),
        }
    }

    #[inline]
    pub fn get_mut(&mut self, id: &AllocationId) -> Option<&mut A> {
        let i = self.index(*id);
        match self.ring.get_mut(i) {
            Some(Some((k, a))) if k == id => Some(a),
            _ => self.overflow.get_mut(id),
        }
    }

    pub fn contains_key(&self, id: &AllocationId) -> bool {
        self.get(id).is_some()
    }

    /// Adds allocation `id`, which must not be in the table.
    #[inline]
    pub fn insert(&mut self, id: AllocationId, a: A) {
        debug_assert!(!self.contains_key(&id), "allocation {id} inserted twice");
        if 2 * (self.in_ring + 1) > self.ring.len() {
            self.grow();
        }
        let i = self.index(id);
        match self.ring[i].replace((id, a)) {
            Some((older, moved)) => {
                self.overflow.insert(older, moved);
            }
            None => self.in_ring += 1,
        }
    }

    #[inline]
    pub fn remove(&mut self, id: &AllocationId) -> Option<A> {
        let i = self.index(*id);
        if let Some(e) = self.ring.get_mut(i) {
            if e.as_ref().is_some_and(|(k, _)| k == id) {
                self.in_ring -= 1;
                return e.take().map(|(_, a)| a);
            }
        }
        if self.overflow.is_empty() {
            None
        } else {
            self.overflow.remove(id)
        }
    }

    /// Doubles the ring. Ids that shared no entry before share none after, and allocations
    /// that overflowed come back where their new entry is free.
    #[cold]
    fn grow(&mut self) {
        let len = (2 * self.ring.len()).max(MIN_RING);
        let old = std::mem::replace(&mut self.ring, std::iter::repeat_with(|| None).take(len).collect());
        for (id, a) in old.into_iter().flatten() {
            let i = self.index(id);
            self.ring[i] = Some((id, a));
        }
        let overflow = std::mem::take(&mut self.overflow);
        for (id, a) in overflow {
            let i = self.index(id);
            match &self.ring[i] {
                None => {
                    self.ring[i] = Some((id, a));
                    self.in_ring += 1;
                }
                Some(_) => {
                    self.overflow.insert(id, a);
                }
            }
        }
    }

    /// Every allocation, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (&AllocationId, &A)> {
        self.ring.iter().filter_map(|e| e.as_ref().map(|(k, a)| (k, a))).chain(self.overflow.iter())
    }

    pub fn keys(&self) -> impl Iterator<Item = &AllocationId> {
        self.iter().map(|(k, _)| k)
    }

    pub fn values(&self) -> impl Iterator<Item = &A> {
        self.iter().map(|(_, a)| a)
    }
}

impl<A> std::ops::Index<&AllocationId> for AllocationTable<A> {
    type Output = A;

    fn index(&self, id: &AllocationId) -> &A {
        self.get(id).unwrap_or_else(|| panic!("allocation {id} is not live"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resource::Resources;
    use crate::state::Allocation;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    fn alloc(app: usize) -> Allocation {
        Allocation { app, node: 1, priority: 0, resources: Resources::new(1, 1), stage_task: None, slot: 0 }
    }

    proptest! {
        /// The table agrees with an ordered map through starts in id order and ends in any
        /// order, including containers that outlive many later ids (they overflow) and growth.
        #[test]
        fn matches_a_map(ops in prop::collection::vec((any::<bool>(), any::<prop::sample::Index>()), 1..600)) {
            let mut t = AllocationTable::<Allocation>::default();
            let mut want = BTreeMap::new();
            let mut next: AllocationId = 1;
            for (start, pick) in ops {
                if start || want.is_empty() {
                    t.insert(next, alloc(next as usize));
                    want.insert(next, next as usize);
                    next += 1;
                } else {
                    let id = *want.keys().nth(pick.index(want.len())).unwrap();
                    prop_assert_eq!(t.remove(&id).map(|a| a.app), want.remove(&id));
                    prop_assert!(t.remove(&id).is_none());
                }
                prop_assert_eq!(t.len(), want.len());
            }
            for id in 0..next + 100 {
                prop_assert_eq!(t.get(&id).map(|a| a.app), want.get(&id).copied());
            }
            let mut listed: Vec<_> = t.iter().map(|(&k, a)| (k, a.app)).collect();
            listed.sort_unstable();
            prop_assert_eq!(listed, want.into_iter().collect::<Vec<_>>());
        }
    }

    #[test]
    fn a_long_running_container_overflows_and_stays_found() {
        let mut t = AllocationTable::<Allocation>::default();
        t.insert(1, alloc(7));
        // Ids far ahead while few run: the ring stays small and id 1's entry is reused.
        for id in 2..10_000 {
            t.insert(id, alloc(0));
            t.remove(&id);
        }
        assert_eq!(t.len(), 1);
        assert!(t.ring.len() <= MIN_RING, "the ring grows with what runs, not with ids");
        assert_eq!(t.get(&1).map(|a| a.app), Some(7));
        t.get_mut(&1).unwrap().slot = 3;
        assert_eq!(t[&1].slot, 3);
        assert_eq!(t.remove(&1).map(|a| a.app), Some(7));
        assert!(t.is_empty());
    }
}
