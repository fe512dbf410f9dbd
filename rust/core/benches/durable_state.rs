//! What restarts and rebuilds cost on the BoPF cluster of the heartbeat benchmark (20,000
//! queues, 10,000 nodes, bursts on): taking the snapshot, which the shim's periodic save does
//! under the core's lock (heartbeats wait meanwhile), and writing it as JSON; restoring it into a fresh instance, which
//! an RM does before it takes back its applications; and adopting 40,000 running containers,
//! as NodeManagers re-register.
//!
//! Run: `cargo bench -p tidal-core --bench durable_state`

mod support;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use std::hint::black_box;
use support::{bopf_queues_xml, cluster, BOPF_QUEUES, NODES};
use tidal_core::config::Settings;
use tidal_core::{Resources, Scheduler};

/// The loaded cluster with four containers running on every node.
fn loaded() -> (Scheduler, Vec<tidal_core::Decision>) {
    let mut s = cluster(&bopf_queues_xml(), BOPF_QUEUES as u64, |a| format!("q{a}"), 5);
    let mut running = Vec::new();
    for node in 0..NODES {
        s.node_heartbeat(node, 1_000 + node as i64, &[], &mut running, 4).unwrap();
    }
    (s, running)
}

fn fresh(xml: &str) -> Scheduler {
    let mut s = Scheduler::from_xml(&format!("<tidal>{xml}</tidal>"), Settings::default()).unwrap();
    for n in 0..NODES {
        s.add_node(n, 1_000 + n, 1 + n / 40, Resources::new(16 * 1024, 16)).unwrap();
    }
    s
}

fn durable_state(c: &mut Criterion) {
    let xml = bopf_queues_xml();
    let (s, running) = loaded();
    let snapshot = s.snapshot_json();
    println!("snapshot of {} queues, {} running containers: {} bytes", BOPF_QUEUES, running.len(), snapshot.len());
    // The shim takes the snapshot under the instance's lock and writes the JSON after it.
    c.bench_function("snapshot_bopf_20k_queues", |b| b.iter(|| black_box(s.snapshot())));
    c.bench_function("snapshot_json_bopf_20k_queues", |b| b.iter(|| black_box(s.snapshot().to_json())));
    c.bench_function("restore_bopf_20k_queues", |b| {
        b.iter_batched(|| fresh(&xml), |mut f| black_box(f.restore_json(&snapshot).unwrap()), BatchSize::LargeInput)
    });
    let node_of: Vec<u32> = running.iter().map(|d| s.state().allocations[&d.allocation_id].node).collect();
    c.bench_function("adopt_40k_containers", |b| {
        b.iter_batched(
            || {
                let mut f = fresh(&xml);
                for a in 0..BOPF_QUEUES as u64 {
                    f.add_app(a, &format!("q{a}"), "bench").unwrap();
                }
                f
            },
            |mut f| {
                for (d, &node) in running.iter().zip(&node_of) {
                    black_box(f.adopt(d.app, node, d.priority, d.resources).unwrap());
                }
            },
            BatchSize::LargeInput,
        )
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = durable_state
}
criterion_main!(benches);
