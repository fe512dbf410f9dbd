//! UWFQ bookkeeping at scale: 10,000 live jobs of 1,000 users in one reference system. One
//! measured iteration is a job arrival (for a random user) and a job finish (the oldest live
//! job), so the population stays at 10,000; real time advances so that the reference serves
//! about as much work as arrives, and users keep leaving and re-entering it.
//!
//! Run: `cargo bench -p tidal-core --bench uwfq`

use criterion::{criterion_group, criterion_main, Criterion};
use std::collections::VecDeque;
use std::hint::black_box;
use std::time::{Duration, Instant};
use tidal_core::uwfq::UwfqClock;

const USERS: usize = 1_000;
const JOBS: usize = 10_000;
/// Mean slot-time of a job and the reference capacity; one iteration advances time by
/// `STEP`, serving `CAPACITY · STEP` = the mean work of one arrival.
const MEAN_WORK: f64 = 50.0;
const CAPACITY: f64 = 50_000.0;
const STEP: f64 = MEAN_WORK / CAPACITY;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    /// Exponential-ish work with the given mean: many small jobs, a few large ones.
    fn work(&mut self) -> f64 {
        let u = (self.next() as f64 + 0.5) / (1u64 << 31) as f64;
        -MEAN_WORK * u.ln()
    }
}

fn bench(c: &mut Criterion) {
    let names: Vec<String> = (0..USERS).map(|u| format!("user{u}")).collect();
    let mut rng = Rng(42);
    let mut clock = UwfqClock::new(CAPACITY, 2.0).unwrap();
    let mut live: VecDeque<u64> = VecDeque::new();
    let mut t = 0.0;
    let mut id = 0u64;
    for _ in 0..JOBS {
        let user = &names[rng.next() as usize % USERS];
        let w = rng.work();
        clock.job_arrived(t, id, user, 1.0, w).unwrap();
        live.push_back(id);
        id += 1;
    }
    // Warm up into a steady state.
    for _ in 0..50_000 {
        t += STEP;
        let user = &names[rng.next() as usize % USERS];
        let w = rng.work();
        clock.job_arrived(t, id, user, 1.0, w).unwrap();
        live.push_back(id);
        id += 1;
        clock.job_finished(t, live.pop_front().unwrap()).unwrap();
    }
    assert_eq!(live.len(), JOBS);
    c.bench_function("uwfq arrival + finish, 10k jobs of 1k users", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                t += STEP;
                let user = &names[rng.next() as usize % USERS];
                let w = rng.work();
                let done = live.pop_front().unwrap();
                let start = Instant::now();
                black_box(clock.job_arrived(t, id, user, 1.0, w).unwrap());
                clock.job_finished(t, done).unwrap();
                total += start.elapsed();
                live.push_back(id);
                id += 1;
            }
            total
        })
    });
    let mut order_len = 0;
    c.bench_function("uwfq first job in order, 10k jobs of 1k users", |b| {
        b.iter(|| {
            order_len += black_box(clock.order().next()).is_some() as usize;
        })
    });
    black_box(order_len);
}

criterion_group!(benches, bench);
criterion_main!(benches);
