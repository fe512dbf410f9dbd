//! The committed-rate profile of the hard-guarantee class: for every time slot, the sum of the
//! guaranteed rates of the H queues whose ON windows touch that slot.
//!
//! Storage is a dense B-ary segment tree over slot indices (slot 0 is the controller's epoch)
//! with range-add and range-max. Each node keeps its own pending `add` and the `max` over its
//! range of the adds at or below it, so nothing is pushed down and queries never write. Levels
//! are flat arrays holding only the resource dimensions the cluster has, so the leaves of
//! neighbouring slots share cache lines and the upper levels (1/B of the size each) stay cached:
//! a window costs a few cache lines instead of one miss per level of a binary tree.
//!
//! Both operations take a whole set of windows (one queue's 500 ON periods) and walk the tree
//! once: `O(K · B · W · log_B U)` for `W` windows over a horizon of `U` slots and `K` resource
//! dimensions, whatever the number of committed queues. Memory is `≈ 8 · K · U · (1 + 2/(B-1))`
//! bytes, e.g. 5 MB for three and a half days at one-second slots with memory and vcores.

use crate::resource::DIMS;

/// A half-open slot range `[start, end)`.
pub type SlotRange = (u64, u64);

/// Fan-out as a power of two; 8 balances the children a boundary node rescans against the
/// number of levels.
const LOG_B: u32 = 3;
const B: usize = 1 << LOG_B;

#[derive(Clone, Debug, Default)]
struct Level {
    /// Per node, `k` entries. Unused at level 0, where a leaf's add is its max.
    add: Vec<i64>,
    max: Vec<i64>,
}

/// A piecewise-constant vector function of the slot index, in fixed-point units.
#[derive(Clone, Debug)]
pub struct CommittedProfile {
    /// The resource dimensions stored, in order; the others are always zero.
    dims: Vec<usize>,
    /// `levels[0]` are the slots; node `i` of level `l` covers slots `[i·B^l, (i+1)·B^l)`. The
    /// last level has a single node, the root.
    levels: Vec<Level>,
}

/// Ranges must be sorted, non-empty and pairwise disjoint; the descent relies on it.
fn well_formed(ranges: &[SlotRange]) -> bool {
    ranges.iter().all(|r| r.0 < r.1) && ranges.windows(2).all(|w| w[0].1 <= w[1].0)
}

impl Default for CommittedProfile {
    fn default() -> Self {
        Self::new(&[true; DIMS])
    }
}

/// Runs `$body` with `$K` bound to the number of stored dimensions as a constant, so the inner
/// loops over dimensions are unrolled.
macro_rules! with_k {
    ($k:expr, $K:ident => $body:expr) => {
        match $k {
            1 => { const $K: usize = 1; $body }
            2 => { const $K: usize = 2; $body }
            3 => { const $K: usize = 3; $body }
            4 => { const $K: usize = 4; $body }
            5 => { const $K: usize = 5; $body }
            _ => { const $K: usize = DIMS; $body }
        }
    };
}

impl CommittedProfile {
    /// A zero profile storing the dimensions marked `active` (at least one).
    pub fn new(active: &[bool; DIMS]) -> Self {
        let dims: Vec<usize> = (0..DIMS).filter(|&d| active[d]).collect();
        assert!(!dims.is_empty(), "a profile needs at least one resource dimension");
        let k = dims.len();
        let leaves = Level { add: Vec::new(), max: vec![0; B * k] };
        let root = Level { add: vec![0; k], max: vec![0; k] };
        CommittedProfile { dims, levels: vec![leaves, root] }
    }

    fn k(&self) -> usize {
        self.dims.len()
    }

    fn nodes(&self, level: usize) -> usize {
        self.levels[level].max.len() / self.k()
    }

    /// [`Self::nodes`] with the dimension count known at compile time (no division).
    #[inline]
    fn nodes_k<const K: usize>(&self, level: usize) -> usize {
        self.levels[level].max.len() / K
    }

    /// One past the last slot currently stored (later slots are zero).
    pub fn span(&self) -> u64 {
        self.nodes(0) as u64
    }

    /// Bytes held by the arrays.
    pub fn memory_bytes(&self) -> usize {
        self.levels.iter().map(|l| 8 * (l.add.len() + l.max.len())).sum()
    }

    fn expand(&self, packed: &[i64]) -> [i64; DIMS] {
        let mut out = [0; DIMS];
        for (j, &d) in self.dims.iter().enumerate() {
            out[d] = packed[j];
        }
        out
    }

    /// Largest value over all slots, per dimension (at least zero: unstored slots are zero).
    pub fn peak(&self) -> [i64; DIMS] {
        let root = &self.levels[self.levels.len() - 1].max;
        let mut out = self.expand(root);
        out.iter_mut().for_each(|v| *v = (*v).max(0));
        out
    }

    /// Recomputes `max` of node `i` at level `l ≥ 1` from its add and its children.
    fn refresh<const K: usize>(&mut self, l: usize, i: usize) {
        let n_child = self.nodes_k::<K>(l - 1);
        let (lo, hi) = (i * B, ((i + 1) * B).min(n_child));
        // Children not stored yet are zero.
        let mut m = if hi - lo < B { [0i64; K] } else { [i64::MIN; K] };
        for c in self.levels[l - 1].max[lo * K..hi * K].chunks_exact(K) {
            for j in 0..K {
                m[j] = m[j].max(c[j]);
            }
        }
        let level = &mut self.levels[l];
        for j in 0..K {
            level.max[i * K + j] = level.add[i * K + j] + m[j];
        }
    }

    /// Grows the arrays so that slots below `end` are stored.
    fn ensure_span(&mut self, end: u64) {
        let k = self.k();
        let have = self.nodes(0);
        if end as usize <= have {
            return;
        }
        // Grow by half again at least, so a horizon creeping forward costs amortised O(1).
        let want = (end as usize).max(have + have / 2).next_multiple_of(B);
        self.levels[0].max.resize(want * k, 0);
        let mut below = want;
        let mut l = 1;
        loop {
            let n = below.div_ceil(B);
            if l == self.levels.len() {
                self.levels.push(Level { add: vec![0; n * k], max: vec![0; n * k] });
                for i in 0..n {
                    with_k!(k, K => self.refresh::<K>(l, i));
                }
            } else {
                let old = self.nodes(l);
                self.levels[l].add.resize(n * k, 0);
                self.levels[l].max.resize(n * k, 0);
                // The old last node gained (zero) children; new nodes have only zero children.
                with_k!(k, K => self.refresh::<K>(l, old - 1));
            }
            if n == 1 {
                break;
            }
            below = n;
            l += 1;
        }
    }

    /// Adds `delta` to every slot in the union of `ranges` (each slot once).
    pub fn add(&mut self, ranges: &[SlotRange], delta: &[i64; DIMS]) {
        debug_assert!(well_formed(ranges));
        let Some(last) = ranges.last() else { return };
        self.ensure_span(last.1);
        let mut packed = [0i64; DIMS];
        for (j, &d) in self.dims.iter().enumerate() {
            packed[j] = delta[d];
        }
        let top = self.levels.len() - 1;
        with_k!(self.k(), K => self.add_rec::<K>(top, 0, ranges, &packed));
    }

    /// Calls `f(child, a, b, fully_covered)` for each child of node `i` at level `l` that
    /// `ranges` touch, where `ranges[a..b]` are the ranges touching that child.
    #[inline]
    fn for_children(
        l: usize,
        i: usize,
        n_child: usize,
        ranges: &[SlotRange],
        mut f: impl FnMut(usize, usize, usize, bool),
    ) {
        let shift = LOG_B * (l as u32 - 1);
        let first = (ranges[0].0 >> shift) as usize;
        let last = ((ranges[ranges.len() - 1].1 - 1) >> shift) as usize;
        let (lo, hi) = (first.max(i * B), (last + 1).min((i + 1) * B).min(n_child));
        let mut a = 0;
        for c in lo..hi {
            let (s, e) = ((c as u64) << shift, (c as u64 + 1) << shift);
            while ranges[a].1 <= s {
                a += 1;
            }
            let mut b = a;
            while b < ranges.len() && ranges[b].0 < e {
                b += 1;
            }
            if b > a {
                let full = b - a == 1 && ranges[a].0 <= s && ranges[a].1 >= e;
                f(c, a, b, full);
            }
        }
    }

    fn add_rec<const K: usize>(&mut self, l: usize, i: usize, ranges: &[SlotRange], delta: &[i64; DIMS]) {
        let n_child = self.nodes_k::<K>(l - 1);
        if l == 1 {
            // Leaves: a tight loop per range instead of a per-child walk.
            let (lo, hi) = ((i * B) as u64, ((i * B + B).min(n_child)) as u64);
            let leaves = &mut self.levels[0].max;
            for r in ranges {
                for s in r.0.max(lo)..r.1.min(hi) {
                    for j in 0..K {
                        leaves[s as usize * K + j] += delta[j];
                    }
                }
            }
            self.refresh::<K>(1, i);
            return;
        }
        let mut partial = [(0usize, 0usize, 0usize); B];
        let mut n_partial = 0;
        let child = &mut self.levels[l - 1];
        Self::for_children(l, i, n_child, ranges, |c, a, b, full| {
            if full {
                for j in 0..K {
                    child.max[c * K + j] += delta[j];
                }
                if l > 1 {
                    for j in 0..K {
                        child.add[c * K + j] += delta[j];
                    }
                }
            } else {
                partial[n_partial] = (c, a, b);
                n_partial += 1;
            }
        });
        // A leaf is either covered or untouched, so partially covered children are inner nodes.
        for &(c, a, b) in &partial[..n_partial] {
            self.add_rec::<K>(l - 1, c, &ranges[a..b], delta);
        }
        self.refresh::<K>(l, i);
    }

    /// Max over the union of `ranges` of the profile, per dimension (zero for no ranges).
    pub fn max_over(&self, ranges: &[SlotRange]) -> [i64; DIMS] {
        debug_assert!(well_formed(ranges));
        let span = self.span();
        let inside = ranges.partition_point(|r| r.0 < span);
        let mut out = [i64::MIN; DIMS];
        // Slots beyond the stored span hold zero.
        if ranges.last().map_or(true, |r| r.1 > span) {
            out = [0; DIMS];
        }
        if inside > 0 {
            let top = self.levels.len() - 1;
            with_k!(self.k(), K => self.max_rec::<K>(top, 0, &ranges[..inside], &[0; DIMS], &mut out));
        }
        self.expand(&out[..self.k()])
    }

    fn max_rec<const K: usize>(
        &self,
        l: usize,
        i: usize,
        ranges: &[SlotRange],
        above: &[i64; DIMS],
        out: &mut [i64; DIMS],
    ) {
        let mut here = *above;
        let add = &self.levels[l].add[i * K..i * K + K];
        for j in 0..K {
            here[j] += add[j];
        }
        let child = &self.levels[l - 1].max;
        if l == 1 {
            let (lo, hi) = ((i * B) as u64, ((i * B + B).min(self.nodes_k::<K>(0))) as u64);
            for r in ranges {
                let (a, b) = (r.0.max(lo) as usize, r.1.min(hi) as usize);
                for m in child[a * K..b * K].chunks_exact(K) {
                    for j in 0..K {
                        out[j] = out[j].max(here[j] + m[j]);
                    }
                }
            }
            return;
        }
        Self::for_children(l, i, self.nodes_k::<K>(l - 1), ranges, |c, a, b, full| {
            if full {
                let m = &child[c * K..c * K + K];
                for j in 0..K {
                    out[j] = out[j].max(here[j] + m[j]);
                }
            } else {
                self.max_rec::<K>(l - 1, c, &ranges[a..b], &here, out);
            }
        });
    }

    /// The profile's value at one slot.
    pub fn value_at(&self, slot: u64) -> [i64; DIMS] {
        self.max_over(&[(slot, slot + 1)])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn v(x: i64) -> [i64; DIMS] {
        [x, 2 * x, 0, 0, 0, -x]
    }

    #[test]
    fn add_and_query_single_ranges() {
        let mut p = CommittedProfile::default();
        p.add(&[(3, 7)], &v(5));
        p.add(&[(5, 10)], &v(2));
        assert_eq!(p.value_at(2), [0; DIMS]);
        assert_eq!(p.value_at(3), v(5));
        assert_eq!(p.value_at(6), v(7));
        assert_eq!(p.value_at(9), v(2));
        assert_eq!(p.value_at(10), [0; DIMS]);
        assert_eq!(p.max_over(&[(0, 4), (8, 100)])[0], 5);
        assert_eq!(p.max_over(&[(0, 3), (7, 8), (1000, 1001)])[0], 2);
        assert_eq!(p.max_over(&[(1 << 40, (1 << 40) + 5)]), [0; DIMS]);
        assert_eq!(p.peak()[0], 7);
        // Growing the span keeps what is stored.
        p.add(&[(5000, 5001)], &v(1));
        assert_eq!(p.value_at(6), v(7));
        assert_eq!(p.value_at(5000), v(1));
        assert_eq!(p.max_over(&[(4000, 6000)]), [1, 2, 0, 0, 0, 0]);
        p.add(&[(5000, 5001)], &v(-1));
        p.add(&[(5, 10)], &v(-2));
        p.add(&[(3, 7)], &v(-5));
        assert_eq!(p.peak(), [0; DIMS]);
        assert_eq!(p.max_over(&[(0, 20)]), [0; DIMS]);
    }

    #[test]
    fn inactive_dimensions_read_as_zero() {
        let mut active = [false; DIMS];
        active[1] = true;
        let mut p = CommittedProfile::new(&active);
        p.add(&[(0, 3)], &[9, 4, 9, 9, 9, 9]);
        assert_eq!(p.value_at(1), [0, 4, 0, 0, 0, 0]);
        assert_eq!(p.peak(), [0, 4, 0, 0, 0, 0]);
    }

    fn ranges_strategy() -> impl Strategy<Value = Vec<SlotRange>> {
        prop::collection::vec((0u64..200, 1u64..20), 0..8).prop_map(|raw| {
            // Sorted, disjoint ranges from (gap, length) pairs.
            let mut out = Vec::new();
            let mut at = 0;
            for (gap, len) in raw {
                let start = at + gap % 30;
                out.push((start, start + len));
                at = start + len;
            }
            out
        })
    }

    proptest! {
        /// The tree agrees with a dense array after any sequence of multi-range adds.
        #[test]
        fn matches_dense_reference(
            ops in prop::collection::vec((ranges_strategy(), -50i64..50), 1..12),
            queries in prop::collection::vec(ranges_strategy(), 1..6),
        ) {
            let mut p = CommittedProfile::default();
            let mut dense = vec![0i64; 512];
            for (ranges, d) in &ops {
                p.add(ranges, &[*d, 0, 0, 0, 0, 0]);
                for r in ranges {
                    for s in r.0..r.1 {
                        dense[s as usize] += d;
                    }
                }
            }
            for q in &queries {
                let got = p.max_over(q)[0];
                let want = q.iter().flat_map(|r| r.0..r.1).map(|s| dense[s as usize]).max();
                prop_assert_eq!(got, want.unwrap_or(0));
            }
            prop_assert_eq!(p.peak()[0], dense.iter().copied().max().unwrap().max(0));
        }
    }
}
