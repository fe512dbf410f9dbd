//! One node heartbeat at scale, in a steady state: each measured heartbeat completes the
//! containers the previous heartbeat on that node started and places up to ten new ones; asks
//! are topped up outside the timed section.
//!
//! - DRF: 10,000 nodes, 1,000 apps in 100 queues, 50,000 pending container requests.
//! - One node, one app (the JNI benchmark's case without JNI): the fixed cost of a heartbeat
//!   that completes ten containers and starts ten.
//! - BoPF: one allocation round over 20,000 queues (1,000 Hard LQs in a burst, 1,000 Elastic
//!   LQs, 18,000 TQs), one app each, 10,000 nodes.
//!
//! Run: `cargo bench -p tidal-core --bench heartbeat`

mod support;

use criterion::{criterion_group, criterion_main, Criterion};
use support::{ask, bopf_queues_xml, cluster, BOPF_QUEUES, NODES};
use tidal_core::config::Settings;
use tidal_core::{Resources, Scheduler};

/// Steady-state heartbeats, asks topped up to `asks_per_app` after each.
fn bench_heartbeats(c: &mut Criterion, name: &str, mut s: Scheduler, asks_per_app: i64) {
    let pending_before: u64 = s.state().queues.iter().map(|q| q.pending_containers).sum();
    support::steady_heartbeats(c, name, &mut s, NODES, |s, out| {
        for d in out {
            s.update_asks(d.app, &[ask(asks_per_app)], &[], &[]).unwrap();
        }
    });
    let pending_after: u64 = s.state().queues.iter().map(|q| q.pending_containers).sum();
    assert_eq!(pending_before, pending_after, "steady state kept");
}

fn drf(c: &mut Criterion) {
    let queues: String =
        (0..100).map(|q| format!("<queue name=\"q{q}\"><weight>{}</weight></queue>", 1 + q % 3)).collect();
    let s = cluster(&queues, 1_000, |a| format!("q{}", a % 100), 50);
    bench_heartbeats(c, "heartbeat_drf_10k_nodes_1k_apps_100_queues_50k_pending", s, 50);
}

fn single_node(c: &mut Criterion) {
    let mut s = Scheduler::from_xml("<tidal><queue name=\"a\"/></tidal>", Settings::default()).unwrap();
    s.add_node(0, 1, 2, Resources::new(16 * 1024, 16)).unwrap();
    s.add_app(1, "a", "bench").unwrap();
    s.update_asks(1, &[ask(i32::MAX as i64)], &[], &[]).unwrap();
    support::steady_heartbeats(c, "heartbeat_1_node_1_app_10_done_10_started", &mut s, 1, |_, _| {});
}

fn bopf(c: &mut Criterion) {
    let s = cluster(&bopf_queues_xml(), BOPF_QUEUES as u64, |a| format!("q{a}"), 5);
    bench_heartbeats(c, "heartbeat_bopf_20k_queues_10k_nodes", s, 5);
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(50);
    targets = drf, single_node, bopf
}
criterion_main!(benches);
