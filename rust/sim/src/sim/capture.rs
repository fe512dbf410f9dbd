//! What the engine measures while it runs: resource-time, queue shares, Jain's index over jobs.

use super::output::Samples;
use std::collections::HashMap;
use tidal_core::state::ClusterState;
use tidal_core::{Resources, Scheduler, DIMS};

/// Jain's index over jobs' dominant shares, window by window, accumulated as samples come so
/// that nothing per sample is kept.
struct JobFairness {
    window_ms: i64,
    start: i64,
    samples: u32,
    sums: HashMap<u64, f64>,
    values: Vec<f64>,
}

impl JobFairness {
    fn close(&mut self) {
        if self.sums.len() >= 2 {
            let n = self.samples.max(1) as f64;
            let (s, s2) = self.sums.values().fold((0.0, 0.0), |(a, b), &x| (a + x / n, b + (x / n) * (x / n)));
            self.values.push(if s2 == 0.0 { 1.0 } else { s * s / (self.sums.len() as f64 * s2) });
        }
        self.sums.clear();
        self.samples = 0;
    }

    fn sample(&mut self, now: i64, st: &ClusterState) {
        if now >= self.start + self.window_ms {
            self.close();
            self.start += (now - self.start) / self.window_ms * self.window_ms;
        }
        self.samples += 1;
        for a in st.apps.iter().flatten() {
            if a.running_containers > 0 || a.asks.pending_containers() > 0 {
                *self.sums.entry(a.key).or_default() += a.usage.dominant_share(&st.capacity);
            }
        }
    }
}

pub struct Capture {
    /// Container resource-milliseconds allocated, per dimension.
    pub allocated: [f64; DIMS],
    /// Resource-milliseconds held idle by slot reservations, per dimension.
    pub held: [f64; DIMS],
    pub samples: Samples,
    job_fairness: Option<JobFairness>,
    sample_ms: i64,
}

impl Capture {
    /// Sampling `queues` queues every `sample_ms` from `start`; with `job_fairness_window_ms`,
    /// Jain's index over jobs too.
    pub fn new(queues: usize, sample_ms: i64, start: i64, job_fairness_window_ms: Option<i64>) -> Capture {
        Capture {
            allocated: [0.0; DIMS],
            held: [0.0; DIMS],
            samples: Samples {
                times_ms: Vec::new(),
                share: vec![Vec::new(); queues],
                active: vec![Vec::new(); queues],
            },
            job_fairness: job_fairness_window_ms.map(|w| JobFairness {
                window_ms: w.max(1),
                start,
                samples: 0,
                sums: HashMap::new(),
                values: Vec::new(),
            }),
            sample_ms,
        }
    }

    /// Adds `r` held for `ms` to the allocated resource-time (negative `ms` takes it back).
    pub fn allocate(&mut self, r: &Resources, ms: i64) {
        for (acc, v) in self.allocated.iter_mut().zip(r.0.iter()) {
            *acc += *v as f64 * ms as f64;
        }
    }

    pub fn sample(&mut self, now: i64, sched: &Scheduler) {
        let st = sched.state();
        if sched.hold_count() > 0 {
            let held = st.nodes.iter().flatten().fold(Resources::ZERO, |acc, n| acc + sched.reserved_on(n.id));
            for (acc, v) in self.held.iter_mut().zip(held.0.iter()) {
                *acc += *v as f64 * self.sample_ms as f64;
            }
        }
        if let Some(f) = &mut self.job_fairness {
            f.sample(now, st);
        }
        self.samples.times_ms.push(now);
        for (i, q) in st.queues.iter().enumerate() {
            self.samples.share[i].push(q.usage.dominant_share(&st.capacity) as f32);
            self.samples.active[i].push(q.running_containers > 0 || q.pending_containers > 0);
        }
    }

    /// Jain's index over jobs per window, the open window closed, when it was measured.
    pub fn job_fairness(&mut self) -> Option<Vec<f64>> {
        self.job_fairness.take().map(|mut f| {
            f.close();
            f.values
        })
    }
}
