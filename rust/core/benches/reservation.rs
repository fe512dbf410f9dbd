//! A node heartbeat with slot reservation active on every node, against the same heartbeat
//! without reservation (the target: median within 20%).
//!
//! 10,000 nodes, 1,000 hinted two-stage apps in 100 queues asking 50 containers each, plus one
//! parked app whose finished tasks hold one slot on every node (its next stage has not asked).
//! Each measured heartbeat completes the containers the previous heartbeat on that node
//! started and places up to ten; asks are topped up outside the timed section. With
//! reservation on, every completion goes through its stage's reservation (a hold), and the
//! holds are served to their apps first; without, the same events run the plain path. Here the
//! holds make every decision, so the reserving heartbeat orders no queues; what it adds is the
//! per-container bookkeeping.
//!
//! Run: `cargo bench -p tidal-core --bench reservation`

mod support;

use criterion::{criterion_group, criterion_main, Criterion};
use tidal_core::config::Settings;
use tidal_core::ids::ANY;
use tidal_core::request::Ask;
use tidal_core::{Resources, Scheduler};

const NODES: u32 = 10_000;
const APPS: u64 = 1_000;
const ASKS: i64 = 50;
const PARKED: u64 = 1_000_000;

fn ask(n: i64) -> Ask {
    Ask { priority: 1, location: ANY, num_containers: n, relax_locality: true, capability: Resources::new(1024, 1) }
}

fn hints(tasks: u32) -> String {
    format!(
        r#"{{"version":1,"stages":[
        {{"id":"m","tasks":{tasks},"demand":{{"memory_mb":1024,"vcores":1}},"duration_ms":1000,"priorities":[1]}},
        {{"id":"r","tasks":{tasks},"demand":{{"memory_mb":1024,"vcores":1}},"duration_ms":1000,"parents":["m"],"priorities":[2]}}]}}"#
    )
}

fn cluster(reserve: bool) -> Scheduler {
    let mut xml = String::from("<tidal>");
    if reserve {
        xml.push_str(r#"<slot-reservation isolation-probability="1"/>"#);
    }
    for q in 0..100 {
        xml.push_str(&format!("<queue name=\"q{q}\"><weight>{}</weight></queue>", 1 + q % 3));
    }
    xml.push_str("</tidal>");
    let mut s = Scheduler::from_xml(&xml, Settings::default()).unwrap();
    for n in 0..NODES {
        s.add_node(n, 1_000 + n, 1 + n / 40, Resources::new(16 * 1024, 16)).unwrap();
    }
    // The parked app runs one task per node; they finish and their slots stay held.
    s.add_app(PARKED, "q0", "parked").unwrap();
    s.set_hints(PARKED, &hints(NODES)).unwrap();
    s.update_asks(PARKED, &[ask(NODES as i64)], &[], &[]).unwrap();
    let mut out = Vec::new();
    for n in 0..NODES {
        out.clear();
        s.node_heartbeat(n, 500, &[], &mut out, 1).unwrap();
        let done: Vec<u64> = out.iter().map(|d| d.allocation_id).collect();
        out.clear();
        s.node_heartbeat(n, 600, &done, &mut out, 0).unwrap();
    }
    if reserve {
        assert_eq!(s.hold_count(), NODES as usize, "a hold on every node");
    }
    for a in 0..APPS {
        s.add_app(a, &format!("q{}", a % 100), "bench").unwrap();
        s.set_hints(a, &hints(500_000)).unwrap();
        s.update_asks(a, &[ask(ASKS)], &[], &[]).unwrap();
    }
    s
}

fn bench(c: &mut Criterion, name: &str, mut s: Scheduler) {
    support::steady_heartbeats(c, name, &mut s, NODES, |s, out| {
        for d in out {
            s.update_asks(d.app, &[ask(ASKS)], &[], &[]).unwrap();
        }
    });
}

fn heartbeats(c: &mut Criterion) {
    bench(c, "heartbeat_10k_nodes_1k_dag_apps_without_reservation", cluster(false));
    let s = cluster(true);
    bench(c, "heartbeat_10k_nodes_1k_dag_apps_reservations_on_every_node", s);
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(50);
    targets = heartbeats
}
criterion_main!(benches);
