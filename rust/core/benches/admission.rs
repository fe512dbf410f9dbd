//! BoPF admission latency at the paper's scale (§5.2.4: 20,000 queues, 500 ON/OFF cycles each).
//!
//! The controller holds 20,000 admitted LQs with 500 bursts each; one more LQ with 500 bursts is
//! admitted per iteration and removed again outside the timed region, so every iteration sees
//! the same state.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use tidal_core::bopf::admission::{AdmissionClass, AdmissionConfig, AdmissionController};
use tidal_core::bopf::spec::{BurstSpec, LqSpec, QueueSpec, TqSpec, MAX_CYCLES, MAX_HORIZON_MS};
use tidal_core::Resources;

const QUEUES: usize = 20_000;
const CYCLES: u32 = 500;
const PROBES: usize = 256;

/// splitmix64: a fixed-seed generator so every run builds the same cluster.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo)
    }

    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn capacity() -> Resources {
    // 4,000 nodes of 128 GB and 32 vcores.
    Resources::new(4_000 * 128 * 1024, 4_000 * 32)
}

/// An LQ with a period of 1-10 min, an ON period of 5-30% of it, arrival within the first hour,
/// and a burst taking 50-100% (memory) and 20-60% (vcores) of its fair share among 20,001
/// queues, so every queue passes fairness and most fit in H until the profile fills up.
fn random_lq(rng: &mut Rng, name: String) -> LqSpec {
    let cap = capacity();
    let period_s = rng.range(60, 601);
    let deadline_s = (period_s * rng.range(5, 31) / 100).max(1);
    let fair = |c: i64, frac: f64| (c as f64 * period_s as f64 / (QUEUES + 1) as f64 * frac) as i64;
    let demand = Resources::new(
        fair(cap.memory_mb(), 0.5 + 0.5 * rng.unit()).max(1),
        fair(cap.vcores(), 0.2 + 0.4 * rng.unit()),
    );
    LqSpec {
        name,
        weight: 1.0,
        burst: BurstSpec { period_ms: period_s * 1000, deadline_ms: deadline_s * 1000, demand },
        start_ms: rng.range(0, 3600) * 1000,
        cycles: CYCLES,
    }
}

fn loaded_controller() -> AdmissionController {
    let mut c = AdmissionController::new(AdmissionConfig::new(capacity())).expect("valid config");
    let mut rng = Rng(42);
    let started = Instant::now();
    for i in 0..QUEUES {
        c.admit_lq(random_lq(&mut rng, format!("lq-{i}"))).expect("valid spec");
    }
    eprintln!(
        "setup: {} queues admitted in {:.2?} (hard {}, soft {}, elastic {})",
        c.len(),
        started.elapsed(),
        c.count(AdmissionClass::Hard),
        c.count(AdmissionClass::Soft),
        c.count(AdmissionClass::Elastic)
    );
    assert_eq!(c.len(), QUEUES, "the benchmark needs all queues admitted");
    c
}

fn probes() -> Vec<LqSpec> {
    let mut rng = Rng(7);
    (0..PROBES).map(|i| random_lq(&mut rng, format!("probe-{i}"))).collect()
}

/// Per-admission latencies outside criterion, to report percentiles and the class mix.
fn report_percentiles(c: &mut AdmissionController, probes: &[LqSpec]) {
    let mut times = Vec::new();
    let mut hard = 0;
    for _ in 0..8 {
        for p in probes {
            let t = Instant::now();
            let d = c.admit_lq(p.clone()).expect("valid probe");
            times.push(t.elapsed());
            hard += usize::from(d.class == AdmissionClass::Hard);
            c.remove(&p.name).expect("probe was admitted");
        }
    }
    let mut dry = Vec::new();
    for p in probes {
        let spec = QueueSpec::Lq(p.clone());
        let t = Instant::now();
        black_box(c.assess(&spec).expect("valid probe"));
        dry.push(t.elapsed());
    }
    dry.sort();
    eprintln!("assess (conditions only, no commit): median {:.1?}", dry[dry.len() / 2]);
    times.sort();
    let pct = |q: f64| times[((times.len() - 1) as f64 * q) as usize];
    eprintln!(
        "admit 1 LQ x {CYCLES} cycles into {QUEUES}: median {:.1?}, p90 {:.1?}, p99 {:.1?}, max {:.1?} \
         ({} of {} probes hard)",
        pct(0.5),
        pct(0.9),
        pct(0.99),
        times[times.len() - 1],
        hard,
        times.len()
    );
}

fn bench_admission(cr: &mut Criterion) {
    let mut c = loaded_controller();
    let probes = probes();
    report_percentiles(&mut c, &probes);

    let mut group = cr.benchmark_group("bopf_admission");
    group.bench_function("admit_lq_500_cycles_into_20k_queues", |b| {
        let mut next = 0;
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let spec = probes[next % PROBES].clone();
                next += 1;
                let name = spec.name.clone();
                let t = Instant::now();
                let d = c.admit_lq(black_box(spec));
                total += t.elapsed();
                black_box(d.expect("valid probe"));
                c.remove(&name).expect("probe was admitted");
            }
            total
        })
    });
    // The most work the spec limits let one request ask for: every cycle allowed, one window per
    // period, windows covering the whole horizon.
    let period_ms = MAX_HORIZON_MS / u64::from(MAX_CYCLES);
    let largest = LqSpec {
        name: "largest".into(),
        weight: 1.0,
        burst: BurstSpec { period_ms, deadline_ms: period_ms - 1000, demand: Resources::new(1024, 1) },
        start_ms: 0,
        cycles: MAX_CYCLES,
    };
    group.bench_function("admit_largest_accepted_lq_into_20k_queues", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let t = Instant::now();
                let d = c.admit_lq(black_box(largest.clone()));
                total += t.elapsed();
                black_box(d.expect("within the limits"));
                c.remove("largest").expect("admitted");
            }
            total
        })
    });
    group.bench_function("admit_tq_into_20k_queues", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let spec = TqSpec { name: "probe-tq".into(), weight: 1.0 };
                let t = Instant::now();
                let d = c.admit_tq(black_box(spec));
                total += t.elapsed();
                black_box(d.expect("valid probe"));
                c.remove("probe-tq").expect("probe was admitted");
            }
            total
        })
    });
    group.finish();
}

criterion_group!(benches, bench_admission);
criterion_main!(benches);
