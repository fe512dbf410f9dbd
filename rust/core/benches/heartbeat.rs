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
use tidal_core::config::Settings;
use tidal_core::ids::ANY;
use tidal_core::request::Ask;
use tidal_core::{Resources, Scheduler};

const NODES: u32 = 10_000;

fn ask(n: i64) -> Ask {
    Ask { priority: 1, location: ANY, num_containers: n, relax_locality: true, capability: Resources::new(1024, 1) }
}

fn cluster(queues_xml: &str, apps: u64, queue_of: impl Fn(u64) -> String, asks_per_app: i64) -> Scheduler {
    let mut s = Scheduler::from_xml(&format!("<tidal>{queues_xml}</tidal>"), Settings::default()).unwrap();
    for n in 0..NODES {
        s.add_node(n, 1_000 + n, 1 + n / 40, Resources::new(16 * 1024, 16)).unwrap();
    }
    for a in 0..apps {
        s.add_app(a, &queue_of(a), "bench").unwrap();
        s.update_asks(a, &[ask(asks_per_app)], &[], &[]).unwrap();
    }
    s
}

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
    const LQS: usize = 2_000;
    const QUEUES: usize = 20_000;
    // Capacity 160,000 vcores; with 20,000 queues the fair share of a 600 s period is 4,800
    // vcore-seconds. Even LQs ask 600 (Hard: rate 10 vcores each, 10,000 in all); odd LQs ask
    // 6,000 (above the fair share: Elastic).
    let mut xml = String::from("<policy>bopf</policy>");
    for q in 0..QUEUES {
        if q < LQS {
            let demand = if q % 2 == 0 { 600 } else { 6_000 };
            xml.push_str(&format!(
                "<queue name=\"q{q}\"><type>lq</type><period-sec>600</period-sec><deadline-sec>60</deadline-sec>\
                 <burst-demand><vcores>{demand}</vcores><memory-mb>{}</memory-mb></burst-demand></queue>",
                demand * 1024
            ));
        } else {
            xml.push_str(&format!("<queue name=\"q{q}\"/>"));
        }
    }
    let s = cluster(&xml, QUEUES as u64, |a| format!("q{a}"), 5);
    bench_heartbeats(c, "heartbeat_bopf_20k_queues_10k_nodes", s, 5);
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(50);
    targets = drf, single_node, bopf
}
criterion_main!(benches);
