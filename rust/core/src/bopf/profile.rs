//! The committed-rate profile of the hard-guarantee class: for every time slot, the sum of the
//! guaranteed rates of the H queues whose ON windows touch that slot.
//!
//! Storage is dense from slot 0 (the controller's epoch) in three levels: slots, blocks of 16
//! slots and groups of 16 blocks. A block and a group each keep a pending `add` for all their
//! slots and the `max` over their slots of everything below them, so a range-add or range-max
//! touches at most two partial groups, two partial blocks per group and the slots at the ends;
//! everything in between is answered from the summaries. Arrays hold only the resource
//! dimensions the cluster has, so neighbouring slots share cache lines, a block's or group's add
//! and max sit side by side, and the loops are plain bounded loops rather than a tree walk, which
//! keeps branch mispredictions low. A multi-window pass requests the memory of the windows a few
//! ahead of the one it works on, since one queue's windows lie a period apart. An add reads a
//! partial block's or group's untouched part only when it lowers a dimension where the max was
//! reached (a release or rollback can; a commitment never does).
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
    /// Per block, `k` values added to all its slots, then `k` values of the max over its slots of
    /// `slot`: side by side, so a window's summaries share cache lines.
    block: Vec<i64>,
    /// Per group, `k` values added to all its slots, then `k` values of the max over its blocks of
    /// block add + block max.
    group: Vec<i64>,
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

// `with_k!` names every count below DIMS; a new dimension needs its arm.
const _: () = assert!(DIMS == 8, "with_k! covers 1..=7 and DIMS");

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
            6 => {
                const $K: usize = 6;
                $body
            }
            7 => {
                const $K: usize = 7;
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

/// Whether adding `d` to part of a block or group whose values there peaked at `touched` (before
/// the add) may lower its max `max`: only when a dimension decreases where the max was reached.
/// Otherwise the new max is `max(max, touched + d)` and the untouched part need not be read.
#[inline]
fn lowers_max<const K: usize>(d: &[i64; K], touched: &[i64; K], max: &[i64]) -> bool {
    (0..K).any(|j| d[j] < 0 && touched[j] >= max[j])
}

/// How many ranges ahead of the one being processed their memory is requested. One queue's
/// windows lie a period apart, far beyond what the hardware prefetcher follows, so without this
/// every window waits for its cache misses in turn.
const PREFETCH_AHEAD: usize = 8;

/// Bytes in a cache line.
const LINE: usize = 64;

/// Asks the CPU to start loading the cache lines of `v[from..to]` (clamped to `v`). Only a hint:
/// results never depend on it.
#[inline(always)]
fn prefetch(v: &[i64], from: usize, to: usize) {
    let Some(part) = v.get(from..to.min(v.len())) else { return };
    let start = part.as_ptr().cast::<i8>();
    let skew = start as usize % LINE;
    for line in 0..(skew + std::mem::size_of_val(part)).div_ceil(LINE) {
        let _at = start.wrapping_sub(skew).wrapping_add(line * LINE);
        #[cfg(target_arch = "x86_64")]
        // SAFETY: a prefetch is a hint that never faults and changes no program state; `_at`
        // lies in a cache line that holds part of `v`.
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(_at);
        }
    }
}

impl CommittedProfile {
    /// A zero profile storing the dimensions marked `active` (at least one).
    pub fn new(active: &[bool; DIMS]) -> Self {
        let dims: Vec<usize> = (0..DIMS).filter(|&d| active[d]).collect();
        assert!(!dims.is_empty(), "a profile needs at least one resource dimension");
        CommittedProfile { dims, slot: Vec::new(), block: Vec::new(), group: Vec::new() }
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
        8 * (self.slot.len() + self.block.len() + self.group.len())
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
        self.block.resize(slots / BLOCK * 2 * k, 0);
        self.group.resize(slots / GROUP * 2 * k, 0);
    }

    /// Requests the memory that [`Self::add_range`] or [`Self::max_range`] will touch for slots
    /// `[a, b)` at its ends: the partial blocks' slots and the end blocks' and groups' summaries,
    /// and when an add lowers values (`lowering`), the whole end blocks and groups it may rescan.
    #[inline(always)]
    fn prefetch_range<const K: usize>(&self, a: usize, b: usize, lowering: bool) {
        let (first, last) = (a / BLOCK, (b - 1) / BLOCK);
        let (g0, g1) = (a / GROUP, (b - 1) / GROUP);
        if lowering {
            let per_group = GROUP / BLOCK * 2 * K;
            prefetch(&self.slot, first * BLOCK * K, (first + 1) * BLOCK * K);
            prefetch(&self.slot, last * BLOCK * K, (last + 1) * BLOCK * K);
            prefetch(&self.block, g0 * per_group, (g0 + 1) * per_group);
            prefetch(&self.block, g1 * per_group, (g1 + 1) * per_group);
        } else {
            prefetch(&self.slot, a * K, ((first + 1) * BLOCK).min(b) * K);
            prefetch(&self.slot, (last * BLOCK).max(a) * K, b * K);
            prefetch(&self.block, first * 2 * K, (first + 1) * 2 * K);
            prefetch(&self.block, last * 2 * K, (last + 1) * 2 * K);
        }
        prefetch(&self.group, g0 * 2 * K, (g0 + 1) * 2 * K);
        prefetch(&self.group, g1 * 2 * K, (g1 + 1) * 2 * K);
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
            let lowering = d.iter().any(|&x| x < 0);
            for r in ranges.iter().take(PREFETCH_AHEAD) {
                self.prefetch_range::<K>(r.0 as usize, r.1 as usize, lowering);
            }
            for (i, r) in ranges.iter().enumerate() {
                if let Some(ahead) = ranges.get(i + PREFETCH_AHEAD) {
                    self.prefetch_range::<K>(ahead.0 as usize, ahead.1 as usize, lowering);
                }
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
        for g in a / GROUP..=(b - 1) / GROUP {
            let (g_lo, g_hi) = (g * GROUP, g * GROUP + GROUP);
            let (lo, hi) = (a.max(g_lo), b.min(g_hi));
            let gs = &mut self.group[g * 2 * K..(g + 1) * 2 * K];
            if lo == g_lo && hi == g_hi {
                for j in 0..K {
                    if TRACK {
                        out[j] = out[j].max(gs[j] + gs[K + j]);
                    }
                    gs[j] += d[j];
                }
                continue;
            }
            let g_add: [i64; K] = std::array::from_fn(|j| gs[j]);
            let (first_blk, last_blk) = (lo / BLOCK, (hi - 1) / BLOCK);
            // Max over the touched blocks of block add + block max, before and after the add.
            let (mut pre_g, mut post_g) = ([i64::MIN; K], [i64::MIN; K]);
            for blk in first_blk..=last_blk {
                let (b_lo, b_hi) = (blk * BLOCK, blk * BLOCK + BLOCK);
                let (l2, h2) = (lo.max(b_lo), hi.min(b_hi));
                let bs = &mut self.block[blk * 2 * K..(blk + 1) * 2 * K];
                for j in 0..K {
                    pre_g[j] = pre_g[j].max(bs[j] + bs[K + j]);
                }
                if l2 == b_lo && h2 == b_hi {
                    for j in 0..K {
                        if TRACK {
                            out[j] = out[j].max(g_add[j] + bs[j] + bs[K + j]);
                        }
                        bs[j] += d[j];
                        post_g[j] = post_g[j].max(bs[j] + bs[K + j]);
                    }
                    continue;
                }
                // The touched slots' max before the add: what `out` needs, and what decides
                // whether the block's max must be rescanned. Reading first and adding after keeps
                // both loops short and free of dependencies between slots.
                let touched = &mut self.slot[l2 * K..h2 * K];
                let mut pre = [i64::MIN; K];
                for v in touched.chunks_exact(K) {
                    for j in 0..K {
                        pre[j] = pre[j].max(v[j]);
                    }
                }
                for v in touched.chunks_exact_mut(K) {
                    for j in 0..K {
                        v[j] += d[j];
                    }
                }
                if TRACK {
                    for j in 0..K {
                        out[j] = out[j].max(g_add[j] + bs[j] + pre[j]);
                    }
                }
                if lowers_max(d, &pre, &bs[K..]) {
                    let mut m = [i64::MIN; K];
                    for v in self.slot[b_lo * K..b_hi * K].chunks_exact(K) {
                        for j in 0..K {
                            m[j] = m[j].max(v[j]);
                        }
                    }
                    bs[K..].copy_from_slice(&m);
                } else {
                    for j in 0..K {
                        bs[K + j] = bs[K + j].max(pre[j] + d[j]);
                    }
                }
                for j in 0..K {
                    post_g[j] = post_g[j].max(bs[j] + bs[K + j]);
                }
            }
            if lowers_max(d, &pre_g, &self.group[g * 2 * K + K..(g + 1) * 2 * K]) {
                let mut m = [i64::MIN; K];
                let per_group = GROUP / BLOCK * 2 * K;
                for bs in self.block[g * per_group..(g + 1) * per_group].chunks_exact(2 * K) {
                    for j in 0..K {
                        m[j] = m[j].max(bs[j] + bs[K + j]);
                    }
                }
                self.group[g * 2 * K + K..(g + 1) * 2 * K].copy_from_slice(&m);
            } else {
                let gm = &mut self.group[g * 2 * K + K..(g + 1) * 2 * K];
                for j in 0..K {
                    gm[j] = gm[j].max(post_g[j]);
                }
            }
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
            let clip = |r: &SlotRange| (r.0 as usize, r.1.min(span) as usize);
            for r in ranges[..inside].iter().take(PREFETCH_AHEAD) {
                let (a, b) = clip(r);
                self.prefetch_range::<K>(a, b, false);
            }
            for (i, r) in ranges[..inside].iter().enumerate() {
                if let Some(ahead) = ranges[..inside].get(i + PREFETCH_AHEAD) {
                    let (a, b) = clip(ahead);
                    self.prefetch_range::<K>(a, b, false);
                }
                let (a, b) = clip(r);
                self.max_range::<K>(a, b, &mut out);
            }
        });
        self.expand(&out[..self.k()])
    }

    fn max_range<const K: usize>(&self, a: usize, b: usize, out: &mut [i64; DIMS]) {
        for g in a / GROUP..=(b - 1) / GROUP {
            let (g_lo, g_hi) = (g * GROUP, g * GROUP + GROUP);
            let (lo, hi) = (a.max(g_lo), b.min(g_hi));
            let gs = &self.group[g * 2 * K..(g + 1) * 2 * K];
            let g_add: [i64; K] = std::array::from_fn(|j| gs[j]);
            if lo == g_lo && hi == g_hi {
                max_into::<K>(out, &g_add, &gs[K..]);
                continue;
            }
            for blk in lo / BLOCK..=(hi - 1) / BLOCK {
                let (b_lo, b_hi) = (blk * BLOCK, blk * BLOCK + BLOCK);
                let (l2, h2) = (lo.max(b_lo), hi.min(b_hi));
                let bs = &self.block[blk * 2 * K..(blk + 1) * 2 * K];
                let base: [i64; K] = std::array::from_fn(|j| g_add[j] + bs[j]);
                if l2 == b_lo && h2 == b_hi {
                    max_into::<K>(out, &base, &bs[K..]);
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
        [x, 2 * x, 0, 0, 0, -x, 0, 0]
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
        assert_eq!(p.max_over(&[(4000, 6000)]), [1, 2, 0, 0, 0, 0, 0, 0]);
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
        p.add(&[(0, 3)], &[9, 4, 9, 9, 9, 9, 9, 9]);
        assert_eq!(p.value_at(1), [0, 4, 0, 0, 0, 0, 0, 0]);
        assert_eq!(p.peak(), [0, 4, 0, 0, 0, 0, 0, 0]);
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

    /// Slots the wide ranges below stay inside.
    const WIDE: u64 = 6 * 1400;

    /// Up to 6 sorted, disjoint ranges of up to 699 slots with gaps of up to 699.
    fn wide_ranges_strategy() -> impl Strategy<Value = Vec<SlotRange>> {
        prop::collection::vec((0u64..700, 1u64..700), 0..6).prop_map(|raw| {
            let mut out = Vec::new();
            let mut at = 0;
            for (gap, len) in raw {
                out.push((at + gap, at + gap + len));
                at += gap + len;
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
                let got = p.add_and_max(ranges, &[*d, 0, 0, 0, 0, 0, 0, 0]);
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

        /// The same against a dense reference in every stored dimension, with windows long enough
        /// to cover whole blocks and groups, releases (negative and mixed-sign deltas, which
        /// rescan summaries) and queries reaching past the stored span.
        #[test]
        fn matches_dense_reference_across_groups_and_dimensions(
            active in prop::array::uniform8(any::<bool>()).prop_filter("one dimension", |a| a.contains(&true)),
            ops in prop::collection::vec(
                (wide_ranges_strategy(), prop::array::uniform8(-1000i64..1000), 0u8..5),
                1..24,
            ),
            queries in prop::collection::vec(wide_ranges_strategy(), 1..8),
            probes in prop::collection::vec(0u64..WIDE, 1..16),
        ) {
            let mut p = CommittedProfile::new(&active);
            let mut dense = vec![[0i64; DIMS]; WIDE as usize];
            let masked = |v: [i64; DIMS]| std::array::from_fn::<i64, DIMS, _>(|d| if active[d] { v[d] } else { 0 });
            let dense_max = |dense: &[[i64; DIMS]], ranges: &[SlotRange]| -> [i64; DIMS] {
                let mut out = [i64::MIN; DIMS];
                for s in ranges.iter().flat_map(|r| r.0..r.1) {
                    for d in 0..DIMS {
                        out[d] = out[d].max(dense[s as usize][d]);
                    }
                }
                if ranges.is_empty() { [0; DIMS] } else { masked(out) }
            };
            for (ranges, delta, kind) in &ops {
                // Kinds: a commitment (non-negative) with and without reading the prior max, a
                // release of one, a mixed-sign add, and a commitment released at once as a
                // rejected queue's rollback does.
                let delta = match kind {
                    0 | 3 | 4 => delta.map(i64::abs),
                    1 => delta.map(|x| -x.abs()),
                    _ => *delta,
                };
                let before = dense_max(&dense, ranges);
                if *kind == 3 {
                    prop_assert_eq!(p.add_and_max(ranges, &delta), before);
                    p.add(ranges, &delta.map(|x| -x));
                    prop_assert_eq!(p.max_over(ranges), before);
                    continue;
                }
                if *kind == 4 {
                    p.add(ranges, &delta);
                } else {
                    prop_assert_eq!(p.add_and_max(ranges, &delta), before);
                }
                for s in ranges.iter().flat_map(|r| r.0..r.1) {
                    for d in 0..DIMS {
                        dense[s as usize][d] += delta[d];
                    }
                }
            }
            for q in &queries {
                prop_assert_eq!(p.max_over(q), dense_max(&dense, q));
            }
            for &s in &probes {
                prop_assert_eq!(p.value_at(s), masked(dense[s as usize]));
            }
            let peak = dense_max(&dense, &[(0, WIDE)]).map(|x| x.max(0));
            prop_assert_eq!(p.peak(), peak);
        }
    }
}
