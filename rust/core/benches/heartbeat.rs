//! One node heartbeat at scale: 10,000 nodes, 1,000 apps in 100 queues, 50,000 pending
//! container requests, DRF. Each measured heartbeat completes the containers the previous
//! heartbeat on that node started and places up to ten new ones, so the cluster stays in a
//! steady state; asks are topped up outside the timed section.
//!
//! Run: `cargo bench -p tidal-core --bench heartbeat`

use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;
use std::time::{Duration, Instant};
use tidal_core::config::Settings;
use tidal_core::request::{Ask, ANY};
use tidal_core::{Decision, Resources, Scheduler};

const NODES: u32 = 10_000;
const QUEUES: usize = 100;
const APPS: u64 = 1_000;
const ASKS_PER_APP: i64 = 50;

fn ask(n: i64) -> Ask {
    Ask { priority: 1, location: ANY, num_containers: n, relax_locality: true, capability: Resources::new(1024, 1) }
}

fn setup() -> Scheduler {
    let queues: String = (0..QUEUES).map(|q| format!("<queue name=\"q{q}\"><weight>{}</weight></queue>", 1 + q % 3)).collect();
    let mut s = Scheduler::from_xml(&format!("<tidal>{queues}</tidal>"), Settings::default()).unwrap();
    for n in 0..NODES {
        s.add_node(n, 1_000 + n, 1 + n / 40, Resources::new(16 * 1024, 16)).unwrap();
    }
    for a in 0..APPS {
        s.add_app(a, &format!("q{}", a as usize % QUEUES), "bench").unwrap();
        s.update_asks(a, &[ask(ASKS_PER_APP)], &[], &[]).unwrap();
    }
    s
}

fn heartbeat(c: &mut Criterion) {
    let mut s = setup();
    let mut running: Vec<Vec<u64>> = vec![Vec::new(); NODES as usize];
    let mut out: Vec<Decision> = Vec::with_capacity(16);
    let mut node = 0u32;
    c.bench_function("heartbeat_10k_nodes_1k_apps_100_queues_50k_pending", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let completed = std::mem::take(&mut running[node as usize]);
                out.clear();
                let start = Instant::now();
                black_box(s.node_heartbeat(node, 0, &completed, &mut out, 10).unwrap());
                total += start.elapsed();
                running[node as usize].extend(out.iter().map(|d| d.allocation_id));
                for d in &out {
                    s.update_asks(d.app, &[ask(ASKS_PER_APP)], &[], &[]).unwrap();
                }
                node = (node + 1) % NODES;
            }
            total
        })
    });
    assert_eq!(s.state().queues.iter().map(|q| q.pending_containers).sum::<u64>(), APPS * ASKS_PER_APP as u64);
}

criterion_group!(benches, heartbeat);
criterion_main!(benches);
