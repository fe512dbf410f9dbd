//! The committed-rate profile of the hard-guarantee class: for every time slot, the sum of the
//! guaranteed rates of the H queues whose ON windows touch that slot.
//!
//! Storage is dense from slot 0 (the controller's epoch) in three levels: slots, blocks of 16
//! slots and groups of 16 blocks. A block and a group each keep a pending `add` for all their
//! slots and the `max` over their slots of everything below them, so a range-add or range-max
//! touches at most two partial groups, two partial blocks per group and the slots at the ends;
//! everything in between is answered from the summaries. Arrays hold only the resource
//! dimensions the cluster has, so neighbouring slots share cache lines, and the loops are plain
//! bounded loops rather than a tree walk, which keeps branch mispredictions low.
//!
//! Cost per window of `L` slots: `O(K · (16 + L / 256))` for `K` resource dimensions, whatever
//! the number of committed queues; one queue's 500 windows cost 500 of those. Memory is about
//! `8 · K · 1.07` bytes per slot of horizon: 5 MB for three and a half days of one-second slots
//! with memory and vcores.

use crate::resource::DIMS;

/// A half-open slot range `[start, end)`.
pub type SlotRange = (u64, u64);

/// Most values (slots times stored dimensions) a profile may hold, about 36 MB with summaries:
/// the whole horizon ([`super::spec::MAX_HORIZON_MS`]) in one-second slots for all six
/// resources fits (the paper's 500 bursts of 1000 s); admission refuses queues whose windows
/// would need more (finer slots).
pub const MAX_POINTS: u64 = 1 << 22;

const BLOCK: usize = 16;
const GROUP: usize = 16 * BLOCK;

/// A piecewise-constant vector function of the slot index, in fixed-point units.
#[derive(Clone, Debug)]
pub struct CommittedProfile {
    /// The resource dimensions stored, in order; the others are always zero.
    dims: Vec<usize>,
    /// Per slot, `k` values.
    slot: Vec<i64>,
    /// Per block: added to all its slots, and max over its slots of `slot`.
    block_add: Vec<i64>,
    block_max: Vec<i64>,
    /// Per group: added to all its slots, and max over its blocks of `block_add + block_max`.
    group_add: Vec<i64>,
    group_max: Vec<i64>,
}

/// Ranges must be sorted, non-empty and pairwise disjoint.
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
            1 => {
                const $K: usize = 1;
                $body
            }
            2 => {
                const $K: usize = 2;
                $body
            }
            3 => {
                const $K: usize = 3;
                $body
            }
            4 => {
                const $K: usize = 4;
                $body
            }
            5 => {
                const $K: usize = 5;
                $body
            }
            _ => {
                const $K: usize = DIMS;
                $body
            }
        }
    };
}

#[inline]
fn max_into<const K: usize>(out: &mut [i64; DIMS], base: &[i64; K], v: &[i64]) {
    for j in 0..K {
        out[j] = out[j].max(base[j] + v[j]);
    }
}

impl CommittedProfile {
    /// A zero profile storing the dimensions marked `active` (at least one).
    pub fn new(active: &[bool; DIMS]) -> Self {
        let dims: Vec<usize> = (0..DIMS).filter(|&d| active[d]).collect();
        assert!(!dims.is_empty(), "a profile needs at least one resource dimension");
        CommittedProfile {
            dims,
            slot: Vec::new(),
            block_add: Vec::new(),
            block_max: Vec::new(),
            group_add: Vec::new(),
            group_max: Vec::new(),
        }
    }

    fn k(&self) -> usize {
        self.dims.len()
    }

    /// Slots the profile may span: [`MAX_POINTS`] shared by the stored dimensions.
    pub fn max_span(&self) -> u64 {
        MAX_POINTS / self.k() as u64
    }

    /// One past the last slot currently stored (later slots are zero).
    pub fn span(&self) -> u64 {
        (self.slot.len() / self.k()) as u64
    }

    /// Bytes held by the arrays.
    pub fn memory_bytes(&self) -> usize {
        8 * (self.slot.len()
            + self.block_add.len()
            + self.block_max.len()
            + self.group_add.len()
            + self.group_max.len())
    }

    fn expand(&self, packed: &[i64]) -> [i64; DIMS] {
        let mut out = [0; DIMS];
        for (j, &d) in self.dims.iter().enumerate() {
            out[d] = packed[j];
        }
        out
    }

    fn pack(&self, full: &[i64; DIMS]) -> [i64; DIMS] {
        let mut out = [0; DIMS];
        for (j, &d) in self.dims.iter().enumerate() {
            out[j] = full[d];
        }
        out
    }

    /// Largest value over all slots, per dimension (at least zero: unstored slots are zero).
    /// Linear in the number of groups.
    pub fn peak(&self) -> [i64; DIMS] {
        let span = self.span();
        if span == 0 {
            return [0; DIMS];
        }
        let mut out = self.max_over(&[(0, span)]);
        out.iter_mut().for_each(|v| *v = (*v).max(0));
        out
    }

    /// Grows the arrays (whole groups, so every block and group is complete) to store `end`.
    fn ensure_span(&mut self, end: u64) {
        let k = self.k();
        let have = self.span() as usize;
        if end as usize <= have {
            return;
        }
        debug_assert!(end <= self.max_span(), "admission keeps windows within the span limit");
        // Grow by half again at least, so a horizon creeping forward costs amortised O(1).
        let slots = (end as usize).max(have + have / 2).min(self.max_span() as usize).next_multiple_of(GROUP);
        self.slot.resize(slots * k, 0);
        self.block_add.resize(slots / BLOCK * k, 0);
        self.block_max.resize(slots / BLOCK * k, 0);
        self.group_add.resize(slots / GROUP * k, 0);
        self.group_max.resize(slots / GROUP * k, 0);
    }

    /// Adds `delta` to every slot in the union of `ranges` (each slot once).
    pub fn add(&mut self, ranges: &[SlotRange], delta: &[i64; DIMS]) {
        self.add_impl::<false>(ranges, delta);
    }

    /// [`Self::add`], returning the max over `ranges` as it was before the add, in the same pass
    /// (what [`Self::max_over`] would have returned first).
    pub fn add_and_max(&mut self, ranges: &[SlotRange], delta: &[i64; DIMS]) -> [i64; DIMS] {
        self.add_impl::<true>(ranges, delta)
    }

    fn add_impl<const TRACK: bool>(&mut self, ranges: &[SlotRange], delta: &[i64; DIMS]) -> [i64; DIMS] {
        debug_assert!(well_formed(ranges));
        let Some(last) = ranges.last() else {
            return [0; DIMS];
        };
        self.ensure_span(last.1);
        let packed = self.pack(delta);
        let mut out = [i64::MIN; DIMS];
        with_k!(self.k(), K => {
            let d: [i64; K] = std::array::from_fn(|j| packed[j]);
            for r in ranges {
                self.add_range::<K, TRACK>(r.0 as usize, r.1 as usize, &d, &mut out);
            }
        });
        self.expand(&out[..self.k()])
    }

    fn add_range<const K: usize, const TRACK: bool>(
        &mut self,
        a: usize,
        b: usize,
        d: &[i64; K],
        out: &mut [i64; DIMS],
    ) {
        // Adding never lowers a max, so summaries can be raised from the touched parts alone;
        // a release has to rescan the partial block and group.
        let grow = d.iter().all(|&x| x >= 0);
        for g in a / GROUP..=(b - 1) / GROUP {
            let (g_lo, g_hi) = (g * GROUP, g * GROUP + GROUP);
            let (lo, hi) = (a.max(g_lo), b.min(g_hi));
            if lo == g_lo && hi == g_hi {
                for j in 0..K {
                    if TRACK {
                        out[j] = out[j].max(self.group_add[g * K + j] + self.group_max[g * K + j]);
                    }
                    self.group_add[g * K + j] += d[j];
                }
                continue;
            }
            let g_add: [i64; K] = std::array::from_fn(|j| self.group_add[g * K + j]);
            let (first_blk, last_blk) = (lo / BLOCK, (hi - 1) / BLOCK);
            for blk in first_blk..=last_blk {
                let (b_lo, b_hi) = (blk * BLOCK, blk * BLOCK + BLOCK);
                let (l2, h2) = (lo.max(b_lo), hi.min(b_hi));
                if l2 == b_lo && h2 == b_hi {
                    for j in 0..K {
                        if TRACK {
                            let pre = g_add[j] + self.block_add[blk * K + j] + self.block_max[blk * K + j];
                            out[j] = out[j].max(pre);
                        }
                        self.block_add[blk * K + j] += d[j];
                    }
                    continue;
                }
                let base: [i64; K] = std::array::from_fn(|j| g_add[j] + self.block_add[blk * K + j]);
                let mut m = [i64::MIN; K];
                for v in self.slot[l2 * K..h2 * K].chunks_exact_mut(K) {
                    for j in 0..K {
                        if TRACK {
                            out[j] = out[j].max(base[j] + v[j]);
                        }
                        v[j] += d[j];
                        m[j] = m[j].max(v[j]);
                    }
                }
                if !grow {
                    m = [i64::MIN; K];
                    for v in self.slot[b_lo * K..b_hi * K].chunks_exact(K) {
                        for j in 0..K {
                            m[j] = m[j].max(v[j]);
                        }
                    }
                }
                let bm = &mut self.block_max[blk * K..blk * K + K];
                for j in 0..K {
                    bm[j] = if grow { bm[j].max(m[j]) } else { m[j] };
                }
            }
            let blocks = if grow { first_blk..last_blk + 1 } else { g * (GROUP / BLOCK)..(g + 1) * (GROUP / BLOCK) };
            let mut m = if grow { std::array::from_fn(|j| self.group_max[g * K + j]) } else { [i64::MIN; K] };
            let adds = &self.block_add[blocks.start * K..blocks.end * K];
            let maxs = &self.block_max[blocks.start * K..blocks.end * K];
            for (ad, mx) in adds.chunks_exact(K).zip(maxs.chunks_exact(K)) {
                for j in 0..K {
                    m[j] = m[j].max(ad[j] + mx[j]);
                }
            }
            self.group_max[g * K..g * K + K].copy_from_slice(&m);
        }
    }

    /// Max over the union of `ranges` of the profile, per dimension (zero for no ranges).
    pub fn max_over(&self, ranges: &[SlotRange]) -> [i64; DIMS] {
        debug_assert!(well_formed(ranges));
        let span = self.span();
        let inside = ranges.partition_point(|r| r.0 < span);
        let mut out = [i64::MIN; DIMS];
        // Slots beyond the stored span hold zero.
        if ranges.last().is_none_or(|r| r.1 > span) {
            out = [0; DIMS];
        }
        with_k!(self.k(), K => {
            for r in &ranges[..inside] {
                self.max_range::<K>(r.0 as usize, r.1.min(span) as usize, &mut out);
            }
        });
        self.expand(&out[..self.k()])
    }

    fn max_range<const K: usize>(&self, a: usize, b: usize, out: &mut [i64; DIMS]) {
        for g in a / GROUP..=(b - 1) / GROUP {
            let (g_lo, g_hi) = (g * GROUP, g * GROUP + GROUP);
            let (lo, hi) = (a.max(g_lo), b.min(g_hi));
            let g_add: [i64; K] = std::array::from_fn(|j| self.group_add[g * K + j]);
            if lo == g_lo && hi == g_hi {
                max_into::<K>(out, &g_add, &self.group_max[g * K..g * K + K]);
                continue;
            }
            for blk in lo / BLOCK..=(hi - 1) / BLOCK {
                let (b_lo, b_hi) = (blk * BLOCK, blk * BLOCK + BLOCK);
                let (l2, h2) = (lo.max(b_lo), hi.min(b_hi));
                let base: [i64; K] = std::array::from_fn(|j| g_add[j] + self.block_add[blk * K + j]);
                if l2 == b_lo && h2 == b_hi {
                    max_into::<K>(out, &base, &self.block_max[blk * K..blk * K + K]);
                    continue;
                }
                for v in self.slot[l2 * K..h2 * K].chunks_exact(K) {
                    max_into::<K>(out, &base, v);
                }
            }
        }
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
                // The pre-add max reported by the combined pass is the dense max before the add.
                let before = ranges.iter().flat_map(|r| r.0..r.1).map(|s| dense[s as usize]).max();
                let got = p.add_and_max(ranges, &[*d, 0, 0, 0, 0, 0]);
                prop_assert_eq!(got[0], before.unwrap_or(0));
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
