//! Closed-form DRF among jobs (Pseudocode 1, InterJobScheduler).
//!
//! Every job gets the same dominant share λ of `total` along the direction of its own demand,
//! except jobs whose whole demand (`cap`) is below λ, which get exactly their cap; λ is the
//! largest value for which the shares fit `total` in every dimension. Water-filling over jobs
//! sorted by their cap's dominant share computes it in O(n log n).

use crate::resource::{Resources, DIMS};

/// DRF shares of `total` for jobs whose most useful allocation is `caps[i]`. A zero cap gets a
/// zero share. The shares' sum fits `total` (up to rounding down to whole units).
pub fn drf_shares(total: &Resources, caps: &[Resources]) -> Vec<Resources> {
    let n = caps.len();
    let mut out = vec![Resources::ZERO; n];
    // Per job: dominant share of its cap and the cap scaled to a dominant share of 1.
    let mut unit = vec![[0.0f64; DIMS]; n];
    let mut dom = vec![0.0f64; n];
    let mut order: Vec<usize> = Vec::with_capacity(n);
    let mut sum_unit = [0.0f64; DIMS];
    for (i, c) in caps.iter().enumerate() {
        let d = c.dominant_share(total);
        if d <= 0.0 {
            continue;
        }
        dom[i] = d;
        let shares = c.shares(total);
        for k in 0..DIMS {
            unit[i][k] = shares[k] / d;
            sum_unit[k] += unit[i][k];
        }
        order.push(i);
    }
    order.sort_by(|&a, &b| dom[a].total_cmp(&dom[b]).then(a.cmp(&b)));
    let mut left = [0.0f64; DIMS];
    for k in 0..DIMS {
        left[k] = if total.0[k] > 0 { 1.0 } else { 0.0 };
    }
    let mut frozen = 0;
    while frozen < order.len() {
        // The common dominant share the unfrozen jobs can all reach.
        let mut lambda = f64::INFINITY;
        for k in 0..DIMS {
            if sum_unit[k] > 1e-12 {
                lambda = lambda.min(left[k].max(0.0) / sum_unit[k]);
            }
        }
        let next = order[frozen];
        if dom[next] <= lambda {
            // This job is satisfied below the water level: it takes its cap.
            for k in 0..DIMS {
                left[k] -= unit[next][k] * dom[next];
                sum_unit[k] -= unit[next][k];
            }
            out[next] = caps[next];
            frozen += 1;
        } else {
            for &i in &order[frozen..] {
                out[i] = scale(total, &unit[i], lambda);
            }
            break;
        }
    }
    out
}

fn scale(total: &Resources, unit: &[f64; DIMS], lambda: f64) -> Resources {
    let mut r = Resources::ZERO;
    for k in 0..DIMS {
        // The epsilon keeps exact shares such as 2/3 of 18 from rounding down to 11.
        r.0[k] = (unit[k] * lambda * total.0[k] as f64 + 1e-6).floor() as i64;
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_jobs_split_evenly_and_small_jobs_are_capped() {
        let total = Resources::new(100, 100);
        let s = drf_shares(&total, &[Resources::new(1000, 1000), Resources::new(1000, 1000)]);
        assert_eq!(s, vec![Resources::new(50, 50); 2]);
        let s = drf_shares(&total, &[Resources::new(10, 10), Resources::new(1000, 1000), Resources::ZERO]);
        assert_eq!(s, vec![Resources::new(10, 10), Resources::new(90, 90), Resources::ZERO]);
    }

    #[test]
    fn dominant_shares_are_equalised_across_shapes() {
        // The DRF paper's example: 9 CPUs, 18 GB; A's tasks <1 CPU, 4 GB>, B's <3 CPU, 1 GB>.
        // DRF gives A 3 tasks (3, 12) and B 2 tasks (6, 2): both dominant shares 2/3.
        let total = Resources::new(18, 9);
        let s = drf_shares(&total, &[Resources::new(400, 100), Resources::new(100, 300)]);
        assert_eq!(s[0], Resources::new(12, 3));
        assert_eq!(s[1], Resources::new(2, 6));
    }
}
