//! Metrics of a run: JCT statistics, improvement factors, deadlines met, fairness, utilisation.
//!
//! Fairness is Jain's index over fixed windows (as Carbyne reports it); utilisation is per
//! resource; each queue also gets its long-term dominant share.

use crate::sim::output::{JobRecord, LqAdmission, RunOutput, RunStats};
use serde::Serialize;
use tidal_core::config::full_queue_name;
use tidal_core::ResourceKind;

/// Linear interpolation between closest ranks (numpy's default) on sorted data.
pub fn percentile_sorted(v: &[f64], p: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let x = p.clamp(0.0, 1.0) * (v.len() - 1) as f64;
    let i = x.floor() as usize;
    let j = (i + 1).min(v.len() - 1);
    v[i] + (v[j] - v[i]) * (x - i as f64)
}

/// Jain's index (sum x)^2 / (n sum x^2): 1 when all equal, 1/n when one has everything.
/// `None` for no entities; 1 when every entity has zero.
pub fn jain(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    let s: f64 = xs.iter().sum();
    let s2: f64 = xs.iter().map(|x| x * x).sum();
    Some(if s2 == 0.0 { 1.0 } else { s * s / (xs.len() as f64 * s2) })
}

#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct JctStats {
    pub jobs: usize,
    pub avg_s: f64,
    pub p25_s: f64,
    pub p50_s: f64,
    pub p75_s: f64,
    pub p95_s: f64,
}

impl JctStats {
    pub fn of(jcts_s: &[f64]) -> JctStats {
        let mut v = jcts_s.to_vec();
        v.sort_by(f64::total_cmp);
        JctStats {
            jobs: v.len(),
            avg_s: if v.is_empty() { f64::NAN } else { v.iter().sum::<f64>() / v.len() as f64 },
            p25_s: percentile_sorted(&v, 0.25),
            p50_s: percentile_sorted(&v, 0.50),
            p75_s: percentile_sorted(&v, 0.75),
            p95_s: percentile_sorted(&v, 0.95),
        }
    }
}

/// Factor of improvement of `new` over `base` (base / new: above 1 means `new` is faster).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Improvement {
    pub avg: f64,
    pub p25: f64,
    pub p50: f64,
    pub p75: f64,
    pub p95: f64,
}

pub fn improvement(base: &JctStats, new: &JctStats) -> Improvement {
    Improvement {
        avg: base.avg_s / new.avg_s,
        p25: base.p25_s / new.p25_s,
        p50: base.p50_s / new.p50_s,
        p75: base.p75_s / new.p75_s,
        p95: base.p95_s / new.p95_s,
    }
}

/// Percentiles of the per-job factors of improvement (jobs matched by position), the way
/// Carbyne's Tables 3 and 4 read.
pub fn per_job_improvement(base: &RunOutput, new: &RunOutput) -> Improvement {
    let mut f: Vec<f64> =
        base.jobs.iter().zip(&new.jobs).map(|(b, n)| b.jct_ms().max(1) as f64 / n.jct_ms().max(1) as f64).collect();
    f.sort_by(f64::total_cmp);
    Improvement {
        avg: f.iter().sum::<f64>() / f.len().max(1) as f64,
        p25: percentile_sorted(&f, 0.25),
        p50: percentile_sorted(&f, 0.5),
        p75: percentile_sorted(&f, 0.75),
        p95: percentile_sorted(&f, 0.95),
    }
}

#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Fairness {
    pub windows: usize,
    pub avg: f64,
    pub min: f64,
    pub max: f64,
}

/// Jain's index over windows of `window_ms`: in each window, every queue that had demand at
/// some sample gets its average weighted dominant share over the window; windows with fewer
/// than two such queues are skipped (fairness is trivially 1 there).
pub fn fairness(run: &RunOutput, window_ms: i64) -> Fairness {
    if let Some(v) = &run.job_fairness {
        return fairness_of(v.clone());
    }
    let s = &run.samples;
    let mut vals = Vec::new();
    let mut i = 0;
    while i < s.times_ms.len() {
        let end = s.times_ms[i] + window_ms;
        let mut j = i;
        while j < s.times_ms.len() && s.times_ms[j] < end {
            j += 1;
        }
        let shares: Vec<f64> = (0..run.queues.len())
            .filter(|&q| s.active[q][i..j].iter().any(|&a| a))
            .map(|q| s.share[q][i..j].iter().map(|&x| x as f64).sum::<f64>() / (j - i) as f64 / run.weights[q])
            .collect();
        if shares.len() >= 2 {
            vals.push(jain(&shares).expect("non-empty"));
        }
        i = j;
    }
    fairness_of(vals)
}

fn fairness_of(vals: Vec<f64>) -> Fairness {
    if vals.is_empty() {
        return Fairness { windows: 0, avg: 1.0, min: 1.0, max: 1.0 };
    }
    Fairness {
        windows: vals.len(),
        avg: vals.iter().sum::<f64>() / vals.len() as f64,
        min: vals.iter().copied().fold(f64::INFINITY, f64::min),
        max: vals.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct QueueSummary {
    pub queue: String,
    pub jobs: usize,
    pub jct: JctStats,
    /// Time-average dominant share over the run (from the samples).
    pub long_term_dominant_share: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    pub label: String,
    pub policy: String,
    pub jobs: usize,
    pub tasks: u64,
    pub jct: JctStats,
    pub jct_by_class: std::collections::BTreeMap<String, JctStats>,
    /// Among jobs with a deadline (LQ jobs), the fraction finished by it.
    pub deadline_met_fraction: Option<f64>,
    pub makespan_s: f64,
    pub utilization: std::collections::BTreeMap<String, f64>,
    pub fairness: Fairness,
    pub queues: Vec<QueueSummary>,
    pub stats: RunStats,
    /// Jobs left running when the run stopped early (`sim.stop_after_class`).
    pub unfinished: usize,
    pub lq_admission: Vec<LqAdmission>,
    /// The app policy's report on its decisions (Carbyne: how much started from the leftover).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub app_policy: Option<serde_json::Value>,
}

pub fn summarize(run: &RunOutput, window_ms: i64) -> Summary {
    let jct_of = |jobs: &mut dyn Iterator<Item = &JobRecord>| {
        JctStats::of(&jobs.map(|j| j.jct_ms() as f64 / 1000.0).collect::<Vec<_>>())
    };
    let jct = |f: &dyn Fn(&JobRecord) -> bool| jct_of(&mut run.jobs.iter().filter(|j| f(j)));
    let first = run.jobs.iter().map(|j| j.arrival_ms).min().unwrap_or(0);
    let last = run.jobs.iter().map(|j| j.finish_ms).max().unwrap_or(0);
    let makespan_ms = (last - first).max(1);
    let mut classes: Vec<&str> = run.jobs.iter().map(|j| j.class.as_str()).collect();
    classes.sort_unstable();
    classes.dedup();
    let with_deadline: Vec<_> = run.jobs.iter().filter_map(|j| j.deadline_ms.map(|d| j.finish_ms <= d)).collect();
    let utilization = ResourceKind::ALL
        .iter()
        .filter(|k| run.capacity.get(**k) > 0)
        .map(|k| {
            let cap = run.capacity.get(*k) as f64 * run.machines as f64 * makespan_ms as f64;
            (k.name().to_string(), run.allocated[*k as usize] / cap)
        })
        .collect();
    // Jobs name their queue as submitted; the scheduler reports full names.
    let job_queues: Vec<String> = run.jobs.iter().map(|j| full_queue_name(&j.queue)).collect();
    let queues = run
        .queues
        .iter()
        .enumerate()
        .map(|(qi, q)| {
            let in_queue = || run.jobs.iter().zip(&job_queues).filter(|(_, jq)| *jq == q).map(|(j, _)| j);
            let sh = &run.samples.share[qi];
            QueueSummary {
                queue: q.clone(),
                jobs: in_queue().count(),
                jct: jct_of(&mut in_queue()),
                long_term_dominant_share: if sh.is_empty() {
                    0.0
                } else {
                    sh.iter().map(|&x| x as f64).sum::<f64>() / sh.len() as f64
                },
            }
        })
        .collect();
    Summary {
        label: run.label.clone(),
        policy: run.policy.clone(),
        jobs: run.jobs.len(),
        tasks: run.jobs.iter().map(|j| j.tasks).sum(),
        jct: jct(&|_| true),
        jct_by_class: classes.iter().map(|c| (c.to_string(), jct(&|j| j.class == *c))).collect(),
        deadline_met_fraction: (!with_deadline.is_empty())
            .then(|| with_deadline.iter().filter(|&&m| m).count() as f64 / with_deadline.len() as f64),
        makespan_s: makespan_ms as f64 / 1000.0,
        utilization,
        fairness: fairness(run, window_ms),
        queues,
        stats: run.stats.clone(),
        unfinished: run.unfinished,
        lq_admission: run.lq_admission.clone(),
        app_policy: run.app_policy.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_interpolate() {
        let v = [1.0, 2.0, 3.0, 4.0, 5.0];
        assert_eq!(percentile_sorted(&v, 0.5), 3.0);
        assert_eq!(percentile_sorted(&v, 0.25), 2.0);
        assert_eq!(percentile_sorted(&v, 0.95), 4.8);
        assert_eq!(percentile_sorted(&[7.0], 0.95), 7.0);
        assert!(percentile_sorted(&[], 0.5).is_nan());
        let s = JctStats::of(&[4.0, 1.0, 3.0, 2.0]);
        assert_eq!((s.avg_s, s.p50_s, s.p25_s), (2.5, 2.5, 1.75));
    }

    #[test]
    fn jain_known_values() {
        assert_eq!(jain(&[1.0, 1.0, 1.0]), Some(1.0));
        assert_eq!(jain(&[1.0, 0.0, 0.0, 0.0]), Some(0.25));
        assert!((jain(&[1.0, 2.0]).unwrap() - 0.9).abs() < 1e-12);
        assert_eq!(jain(&[]), None);
        assert_eq!(jain(&[0.0, 0.0]), Some(1.0));
    }

    #[test]
    fn improvement_is_base_over_new() {
        let a = JctStats::of(&[10.0, 20.0]);
        let b = JctStats::of(&[5.0, 10.0]);
        assert_eq!(improvement(&a, &b).avg, 2.0);
    }

    proptest::proptest! {
        #[test]
        fn jain_is_between_one_over_n_and_one(xs in proptest::collection::vec(0.0f64..10.0, 1..20)) {
            let j = jain(&xs).unwrap();
            proptest::prop_assert!(j <= 1.0 + 1e-9 && j >= 1.0 / xs.len() as f64 - 1e-9);
        }

        #[test]
        fn percentiles_are_monotone(mut xs in proptest::collection::vec(-1e6f64..1e6, 1..50), p in 0.0f64..1.0, q in 0.0f64..1.0) {
            xs.sort_by(f64::total_cmp);
            let (lo, hi) = if p <= q { (p, q) } else { (q, p) };
            proptest::prop_assert!(percentile_sorted(&xs, lo) <= percentile_sorted(&xs, hi));
        }
    }
}
