//! The committed-rate profile of the hard-guarantee class: for every time slot, the sum of the
//! guaranteed rates of the H queues whose ON windows touch that slot.
//!
//! Storage is dense from slot 0 (the controller's epoch) in three levels: slots, blocks of 8
//! slots and groups of 32 blocks. A group keeps a pending `add` for all its slots and the `max`
//! over its blocks; a block keeps one value, its pending add plus the max of its slots, the add
//! itself being that minus the max of the block's slots (which any access to its slots reads
//! anyway). A range-add or range-max so touches, per group it crosses, the two end blocks' slots
//! and the one value of each block in between; groups wholly inside are answered from their
//! summaries. An end block is handled in one fixed-length pass over its 8 slots under masks
//! read from a table, so there is no trip count or condition for the CPU to mispredict, and the
//! passes run compiled for AVX-512 when the CPU has it (SSE2 has no 64-bit max or compare, and
//! its emulation costs more than the passes' memory). Arrays hold only the resource dimensions
//! the cluster has, so neighbouring slots share cache lines: with two dimensions a block's slots
//! are two lines. An add requests the memory of the windows a few ahead of the one it works on,
//! since one queue's windows lie a period apart. An add rescans a group's blocks only when it
//! lowers a dimension where the group's max was reached (a release or rollback can; a commitment
//! never does).
//!
//! Cost per window of `L` slots: `O(K · (16 + min(L, 256) / 8 + L / 256))` for `K` resource
//! dimensions, whatever the number of committed queues; one queue's 500 windows cost 500 of
//! those. Memory is about `8 · K · 1.13` bytes per slot of horizon: 5.5 MB for three and a half
//! days of one-second slots with memory and vcores.

use crate::resource::DIMS;

/// A half-open slot range `[start, end)`.
pub type SlotRange = (u64, u64);

/// Most values (slots times stored dimensions) a profile may hold, about 36 MB with summaries:
/// the whole horizon ([`super::spec::MAX_HORIZON_MS`]) in one-second slots for all six
/// resources fits (the paper's 500 bursts of 1000 s); admission refuses queues whose windows
/// would need more (finer slots).
pub const MAX_POINTS: u64 = 1 << 22;

/// Slots per block: with two dimensions, a block's slots are two cache lines.
const BLOCK: usize = 8;
/// Blocks per group.
const BLOCKS: usize = 32;
const GROUP: usize = BLOCKS * BLOCK;

/// A piecewise-constant vector function of the slot index, in fixed-point units.
#[derive(Clone, Debug)]
pub struct CommittedProfile {
    /// The resource dimensions stored, in order; the others are always zero.
    dims: Vec<usize>,
    /// Per slot, `k` values, relative to its block's add.
    slot: Vec<i64>,
    /// Per block, `k` values: the block's add plus the max over its slots of `slot`. The add is
    /// not stored: it is this minus the max of the block's slots, which any access to the slots
    /// reads anyway; a block wholly inside a range needs only this one value.
    block: Vec<i64>,
    /// Per group, `k` values added to all its slots, then `k` values of the max over its blocks of
    /// `block`.
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

/// Per-dimension max.
#[inline(always)]
fn vmax<const K: usize>(x: [i64; K], y: [i64; K]) -> [i64; K] {
    std::array::from_fn(|j| x[j].max(y[j]))
}

/// Per-dimension sum.
#[inline(always)]
fn vadd<const K: usize>(x: [i64; K], y: [i64; K]) -> [i64; K] {
    std::array::from_fn(|j| x[j] + y[j])
}

/// Per-dimension difference.
#[inline(always)]
fn vsub<const K: usize>(x: [i64; K], y: [i64; K]) -> [i64; K] {
    std::array::from_fn(|j| x[j] - y[j])
}

/// Whether adding `d` to part of a block or group whose values there peaked at `touched` (before
/// the add) may lower its max `max`: only when a dimension decreases where the max was reached.
/// Otherwise the new max is `max(max, touched + d)` and the untouched part need not be read.
#[inline(always)]
fn lowers_max<const K: usize>(d: &[i64; K], touched: &[i64; K], max: &[i64; K]) -> bool {
    (0..K).any(|j| d[j] < 0 && touched[j] >= max[j])
}

/// `PREFIX[n][i]` is all ones for `i < n`, else zero.
static PREFIX: [[i64; BLOCK]; BLOCK + 1] = {
    let mut t = [[0; BLOCK]; BLOCK + 1];
    let mut n = 0;
    while n <= BLOCK {
        let mut i = 0;
        while i < n {
            t[n][i] = -1;
            i += 1;
        }
        n += 1;
    }
    t
};

/// Per slot of a block, all ones for `l <= i < h`, else zero. Read from a table rather than
/// compared, so the compiler cannot turn the block pass back into branches.
#[inline(always)]
fn span_mask(l: usize, h: usize) -> [i64; BLOCK] {
    std::array::from_fn(|i| PREFIX[h][i] & !PREFIX[l][i])
}

/// Adds `d` to slots `[l, h)` (non-empty) of one block with summary `t`, and returns their max
/// before the add, with the block's add. One pass over all the block's slots whatever the range,
/// without branches: the block's add is `t` minus the max of its slots, so the new summary is
/// exact for any sign of `d`, and a fixed-length pass has no trip count to mispredict.
#[inline(always)]
fn add_part<const K: usize, const RAISE: bool>(
    slots: &mut [[i64; K]; BLOCK],
    t: &mut [i64; K],
    l: usize,
    h: usize,
    d: &[i64; K],
) -> [i64; K] {
    let (mut all, mut pre, mut post) = ([i64::MIN; K], [i64::MIN; K], [i64::MIN; K]);
    for (i, v) in slots.iter_mut().enumerate() {
        let mask = span_mask(l, h)[i];
        for j in 0..K {
            all[j] = all[j].max(v[j]);
            pre[j] = pre[j].max((v[j] & mask) | (i64::MIN & !mask));
            v[j] += d[j] & mask;
            if !RAISE {
                post[j] = post[j].max(v[j]);
            }
        }
    }
    let add = vsub(*t, all);
    // No dimension decreases: the new max is the old one or the touched part's, raised.
    *t = if RAISE { vmax(*t, vadd(add, vadd(pre, *d))) } else { vadd(add, post) };
    vadd(add, pre)
}

/// Max over slots `[l, h)` (non-empty) of one block with summary `t`, with the block's add.
#[inline(always)]
fn max_part<const K: usize>(slots: &[[i64; K]; BLOCK], t: &[i64; K], l: usize, h: usize) -> [i64; K] {
    let (mut all, mut pre) = ([i64::MIN; K], [i64::MIN; K]);
    for (i, v) in slots.iter().enumerate() {
        let mask = span_mask(l, h)[i];
        for j in 0..K {
            all[j] = all[j].max(v[j]);
            pre[j] = pre[j].max((v[j] & mask) | (i64::MIN & !mask));
        }
    }
    vadd(vsub(*t, all), pre)
}

/// Whether the CPU has AVX-512 F and VL, which the passes' fast builds need (detected once, then
/// cached by the standard library).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn has_avx512() -> bool {
    std::arch::is_x86_feature_detected!("avx512f") && std::arch::is_x86_feature_detected!("avx512vl")
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
        self.block.resize(slots / BLOCK * k, 0);
        self.group.resize(slots / GROUP * 2 * k, 0);
    }

    /// Requests the memory that [`Self::add_range`] will touch for slots `[a, b)`: the end blocks'
    /// slots, the summaries of the blocks between them in the first group (all a typical window
    /// reads) and of the last block, and the end groups'. Queries go without: their loads are
    /// independent and run ahead on their own, while an add's stores wait for their lines.
    #[inline(always)]
    fn prefetch_range<const K: usize>(&self, a: usize, b: usize) {
        let (first, last) = (a / BLOCK, (b - 1) / BLOCK);
        prefetch(&self.slot, first * BLOCK * K, (first + 1) * BLOCK * K);
        prefetch(&self.slot, last * BLOCK * K, (last + 1) * BLOCK * K);
        prefetch(&self.block, first * K, (last + 1).min((first / BLOCKS + 1) * BLOCKS) * K);
        prefetch(&self.block, last * K, (last + 1) * K);
        prefetch(&self.group, a / GROUP * 2 * K, (a / GROUP + 1) * 2 * K);
        prefetch(&self.group, (b - 1) / GROUP * 2 * K, ((b - 1) / GROUP + 1) * 2 * K);
    }

    /// Adds `delta` to every slot in the union of `ranges` (each slot once).
    pub fn add(&mut self, ranges: &[SlotRange], delta: &[i64; DIMS]) {
        self.add_impl(ranges, delta);
    }

    /// [`Self::add`], returning the max over `ranges` as it was before the add, in the same pass
    /// (what [`Self::max_over`] would have returned first).
    pub fn add_and_max(&mut self, ranges: &[SlotRange], delta: &[i64; DIMS]) -> [i64; DIMS] {
        self.add_impl(ranges, delta)
    }

    fn add_impl(&mut self, ranges: &[SlotRange], delta: &[i64; DIMS]) -> [i64; DIMS] {
        #[cfg(target_arch = "x86_64")]
        if has_avx512() {
            // SAFETY: the CPU has AVX-512 F and VL, checked just above.
            return unsafe { self.add_avx512(ranges, delta) };
        }
        self.add_portable(ranges, delta)
    }

    /// [`Self::add_portable`] compiled for AVX-512, where a 64-bit max and a masked lane are
    /// single instructions. Same code, same results.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512vl")]
    fn add_avx512(&mut self, ranges: &[SlotRange], delta: &[i64; DIMS]) -> [i64; DIMS] {
        self.add_portable(ranges, delta)
    }

    #[inline(always)]
    fn add_portable(&mut self, ranges: &[SlotRange], delta: &[i64; DIMS]) -> [i64; DIMS] {
        debug_assert!(well_formed(ranges));
        let Some(last) = ranges.last() else {
            return [0; DIMS];
        };
        self.ensure_span(last.1);
        let packed = self.pack(delta);
        let mut out = [0; DIMS];
        with_k!(self.k(), K => {
            let d: [i64; K] = std::array::from_fn(|j| packed[j]);
            let raise = d.iter().all(|&x| x >= 0);
            for r in ranges.iter().take(PREFETCH_AHEAD) {
                self.prefetch_range::<K>(r.0 as usize, r.1 as usize);
            }
            let mut m = [i64::MIN; K];
            for (i, r) in ranges.iter().enumerate() {
                if let Some(ahead) = ranges.get(i + PREFETCH_AHEAD) {
                    self.prefetch_range::<K>(ahead.0 as usize, ahead.1 as usize);
                }
                m = vmax(m, if raise {
                    self.add_range::<K, true>(r.0 as usize, r.1 as usize, &d)
                } else {
                    self.add_range::<K, false>(r.0 as usize, r.1 as usize, &d)
                });
            }
            out[..K].copy_from_slice(&m);
        });
        self.expand(&out[..self.k()])
    }

    /// The arrays viewed per group: its blocks' slots, its blocks' summaries and its (add, max).
    #[allow(clippy::type_complexity)]
    fn groups_mut<const K: usize>(
        &mut self,
    ) -> (&mut [[[[i64; K]; BLOCK]; BLOCKS]], &mut [[[i64; K]; BLOCKS]], &mut [[[i64; K]; 2]]) {
        let slots = self.slot.as_chunks_mut::<K>().0.as_chunks_mut::<BLOCK>().0.as_chunks_mut::<BLOCKS>().0;
        let blocks = self.block.as_chunks_mut::<K>().0.as_chunks_mut::<BLOCKS>().0;
        let groups = self.group.as_chunks_mut::<K>().0.as_chunks_mut::<2>().0;
        (slots, blocks, groups)
    }

    /// [`Self::groups_mut`], read-only.
    #[allow(clippy::type_complexity)]
    fn groups<const K: usize>(&self) -> (&[[[[i64; K]; BLOCK]; BLOCKS]], &[[[i64; K]; BLOCKS]], &[[[i64; K]; 2]]) {
        let slots = self.slot.as_chunks::<K>().0.as_chunks::<BLOCK>().0.as_chunks::<BLOCKS>().0;
        let blocks = self.block.as_chunks::<K>().0.as_chunks::<BLOCKS>().0;
        let groups = self.group.as_chunks::<K>().0.as_chunks::<2>().0;
        (slots, blocks, groups)
    }

    /// Adds `d` to slots `[a, b)` and returns their max before the add.
    #[inline(always)]
    fn add_range<const K: usize, const RAISE: bool>(&mut self, a: usize, b: usize, d: &[i64; K]) -> [i64; K] {
        let (slots, blocks, groups) = self.groups_mut::<K>();
        let mut out = [i64::MIN; K];
        for g in a / GROUP..=(b - 1) / GROUP {
            let [g_add, g_max] = &mut groups[g];
            // The range within the group, in slots from its start.
            let (lo, hi) = (a.max(g * GROUP) - g * GROUP, b.min(g * GROUP + GROUP) - g * GROUP);
            if lo == 0 && hi == GROUP {
                out = vmax(out, vadd(*g_add, *g_max));
                *g_add = vadd(*g_add, *d);
                continue;
            }
            let (slots, blocks) = (&mut slots[g], &mut blocks[g]);
            let (first, last) = (lo / BLOCK, (hi - 1) / BLOCK);
            // Max over the touched slots, with their blocks' adds, before the add: what `out`
            // needs, and what decides whether the group's max is rescanned.
            let mut pre = if first == last {
                add_part::<K, RAISE>(&mut slots[first], &mut blocks[first], lo % BLOCK, hi - first * BLOCK, d)
            } else {
                let head = add_part::<K, RAISE>(&mut slots[first], &mut blocks[first], lo % BLOCK, BLOCK, d);
                vmax(head, add_part::<K, RAISE>(&mut slots[last], &mut blocks[last], 0, hi - last * BLOCK, d))
            };
            for t in &mut blocks[(first + 1).min(last)..last] {
                pre = vmax(pre, *t);
                *t = vadd(*t, *d);
            }
            out = vmax(out, vadd(*g_add, pre));
            *g_max = if !RAISE && lowers_max(d, &pre, g_max) {
                blocks.iter().fold([i64::MIN; K], |m, t| vmax(m, *t))
            } else {
                vmax(*g_max, vadd(pre, *d))
            };
        }
        out
    }

    /// Max over the union of `ranges` of the profile, per dimension (zero for no ranges).
    pub fn max_over(&self, ranges: &[SlotRange]) -> [i64; DIMS] {
        #[cfg(target_arch = "x86_64")]
        if has_avx512() {
            // SAFETY: the CPU has AVX-512 F and VL, checked just above.
            return unsafe { self.max_avx512(ranges) };
        }
        self.max_portable(ranges)
    }

    /// [`Self::max_portable`] compiled for AVX-512, as [`Self::add_avx512`].
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512vl")]
    fn max_avx512(&self, ranges: &[SlotRange]) -> [i64; DIMS] {
        self.max_portable(ranges)
    }

    #[inline(always)]
    fn max_portable(&self, ranges: &[SlotRange]) -> [i64; DIMS] {
        debug_assert!(well_formed(ranges));
        let span = self.span();
        let inside = &ranges[..ranges.partition_point(|r| r.0 < span)];
        // Slots beyond the stored span hold zero.
        let mut out = if ranges.last().is_none_or(|r| r.1 > span) { [0; DIMS] } else { [i64::MIN; DIMS] };
        with_k!(self.k(), K => {
            let clip = |r: &SlotRange| (r.0 as usize, r.1.min(span) as usize);
            let mut m: [i64; K] = std::array::from_fn(|j| out[j]);
            for r in inside {
                let (a, b) = clip(r);
                m = vmax(m, self.max_range::<K>(a, b));
            }
            out[..K].copy_from_slice(&m);
        });
        self.expand(&out[..self.k()])
    }

    /// Max over slots `[a, b)`.
    #[inline(always)]
    fn max_range<const K: usize>(&self, a: usize, b: usize) -> [i64; K] {
        let (slots, blocks, groups) = self.groups::<K>();
        let mut out = [i64::MIN; K];
        for g in a / GROUP..=(b - 1) / GROUP {
            let [g_add, g_max] = &groups[g];
            let (lo, hi) = (a.max(g * GROUP) - g * GROUP, b.min(g * GROUP + GROUP) - g * GROUP);
            if lo == 0 && hi == GROUP {
                out = vmax(out, vadd(*g_add, *g_max));
                continue;
            }
            let (slots, blocks) = (&slots[g], &blocks[g]);
            let (first, last) = (lo / BLOCK, (hi - 1) / BLOCK);
            let mut m = if first == last {
                max_part(&slots[first], &blocks[first], lo % BLOCK, hi - first * BLOCK)
            } else {
                let head = max_part(&slots[first], &blocks[first], lo % BLOCK, BLOCK);
                vmax(head, max_part(&slots[last], &blocks[last], 0, hi - last * BLOCK))
            };
            for t in &blocks[(first + 1).min(last)..last] {
                m = vmax(m, *t);
            }
            out = vmax(out, vadd(*g_add, m));
        }
        out
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
        /// The portable passes give what the dispatched ones (compiled for the CPU) give.
        #[test]
        fn portable_matches_dispatched(
            ops in prop::collection::vec(
                (wide_ranges_strategy(), prop::array::uniform8(-1000i64..1000), any::<bool>()),
                1..24,
            ),
            queries in prop::collection::vec(wide_ranges_strategy(), 1..8),
        ) {
            let (mut fast, mut portable) = (CommittedProfile::default(), CommittedProfile::default());
            for (ranges, delta, raise) in &ops {
                let delta = if *raise { delta.map(i64::abs) } else { *delta };
                prop_assert_eq!(fast.add_and_max(ranges, &delta), portable.add_portable(ranges, &delta));
            }
            for q in &queries {
                prop_assert_eq!(fast.max_over(q), portable.max_portable(q));
            }
        }
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
