//! A queue's runnable apps that have pending asks, in YARN's app order (application priority,
//! highest first, then submission order), with the component-wise
//! minimum of their smallest asks. A node offer whose room does not cover that minimum can start
//! nothing from them, so an app policy's search ends at once instead of trying every app of a
//! long backlog; otherwise it visits only apps with something to place.

use crate::ids::AppIdx;
use crate::resource::{Resources, DIMS};
use std::cmp::Reverse;
use std::collections::BTreeMap;

/// Where an app stands in its queue: its application priority (higher first), then its
/// submission sequence number.
pub type OrderKey = (Reverse<i32>, u64);

#[derive(Clone, Debug, Default)]
pub struct PendingApps {
    /// By order key: the app and its smallest pending capability.
    by_order: BTreeMap<OrderKey, (AppIdx, Resources)>,
    /// Per dimension, how many apps' smallest capabilities have each amount: the minimum
    /// survives removals.
    amounts: [BTreeMap<i64, u32>; DIMS],
    /// The component-wise minimum of the smallest capabilities, `None` when empty.
    floor: Option<Resources>,
}

impl PendingApps {
    /// Adds app `app` (order key `key`), whose smallest pending capability is `smallest`.
    pub(crate) fn insert(&mut self, key: OrderKey, app: AppIdx, smallest: Resources) {
        let old = self.by_order.insert(key, (app, smallest));
        debug_assert!(old.is_none(), "app {key:?} indexed twice");
        for (counts, &v) in self.amounts.iter_mut().zip(&smallest.0) {
            *counts.entry(v).or_insert(0) += 1;
        }
        self.floor = Some(self.floor.map_or(smallest, |f| f.min(&smallest)));
    }

    /// Removes the app of order key `key`.
    pub(crate) fn remove(&mut self, key: OrderKey) {
        let Some((_, smallest)) = self.by_order.remove(&key) else {
            debug_assert!(false, "app {key:?} is not indexed");
            return;
        };
        for (counts, v) in self.amounts.iter_mut().zip(&smallest.0) {
            if let Some(n) = counts.get_mut(v) {
                *n -= 1;
                if *n == 0 {
                    counts.remove(v);
                }
            }
        }
        self.floor = (!self.by_order.is_empty()).then(|| {
            let mut f = Resources::ZERO;
            for (v, counts) in f.0.iter_mut().zip(&self.amounts) {
                *v = counts.first_key_value().map_or(0, |(&k, _)| k);
            }
            f
        });
    }

    /// Whether some app's smallest ask may fit `room`: when not, none of their asks fits.
    #[inline]
    pub fn may_fit(&self, room: &Resources) -> bool {
        self.floor.is_some_and(|f| f.fits_in(room))
    }

    /// The component-wise minimum of the apps' smallest pending capabilities.
    pub fn floor(&self) -> Option<Resources> {
        self.floor
    }

    /// The apps in order: highest priority first, then by submission.
    pub fn iter(&self) -> impl Iterator<Item = AppIdx> + '_ {
        self.by_order.values().map(|&(app, _)| app)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(mem: i64, vcores: i64) -> Resources {
        Resources::new(mem, vcores)
    }

    fn k(seq: u64) -> OrderKey {
        (Reverse(0), seq)
    }

    #[test]
    fn the_floor_is_the_componentwise_minimum_through_removals() {
        let mut p = PendingApps::default();
        assert!(!p.may_fit(&r(1 << 20, 64)), "an empty index fits nothing");
        p.insert(k(7), 70, r(4096, 1));
        p.insert(k(3), 30, r(1024, 4));
        p.insert(k(5), 50, r(1024, 2));
        assert_eq!(p.floor(), Some(r(1024, 1)));
        assert_eq!(p.iter().collect::<Vec<_>>(), vec![30, 50, 70], "submission order");
        assert!(p.may_fit(&r(1024, 1)));
        assert!(!p.may_fit(&r(1023, 8)));
        p.remove(k(7));
        assert_eq!(p.floor(), Some(r(1024, 2)));
        assert!(!p.may_fit(&r(4096, 1)));
        p.remove(k(3));
        assert_eq!(p.floor(), Some(r(1024, 2)), "a shared amount stays while an app still asks it");
        p.remove(k(5));
        assert_eq!((p.floor(), p.iter().count()), (None, 0));
    }

    #[test]
    fn higher_priority_apps_come_first_then_submission_order() {
        let mut p = PendingApps::default();
        p.insert((Reverse(0), 1), 10, r(1024, 1));
        p.insert((Reverse(5), 2), 20, r(1024, 1));
        p.insert((Reverse(0), 3), 30, r(1024, 1));
        p.insert((Reverse(5), 4), 40, r(1024, 1));
        p.insert((Reverse(-1), 0), 0, r(1024, 1));
        assert_eq!(p.iter().collect::<Vec<_>>(), vec![20, 40, 10, 30, 0]);
    }
}
