//! The clusters and the steady-state heartbeat loop the scheduler benchmarks share; each
//! benchmark uses some of them.
#![allow(dead_code)]

use criterion::Criterion;
use std::hint::black_box;
use std::time::{Duration, Instant};
use tidal_core::config::Settings;
use tidal_core::ids::ANY;
use tidal_core::request::Ask;
use tidal_core::{Decision, Resources, Scheduler};

pub const NODES: u32 = 10_000;

/// `n` containers of 1 GB and 1 vcore, anywhere.
pub fn ask(n: i64) -> Ask {
    Ask { priority: 1, location: ANY, num_containers: n, relax_locality: true, capability: Resources::new(1024, 1) }
}

/// [`NODES`] nodes of 16 GB and 16 vcores, 40 to a rack, and `apps` apps each asking for
/// `asks_per_app` containers in the queue `queue_of` names.
pub fn cluster(queues_xml: &str, apps: u64, queue_of: impl Fn(u64) -> String, asks_per_app: i64) -> Scheduler {
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

/// BoPF over 20,000 queues on [`NODES`] nodes: 1,000 Hard LQs, 1,000 Elastic LQs, 18,000 TQs.
pub const BOPF_QUEUES: usize = 20_000;

pub fn bopf_queues_xml() -> String {
    const LQS: usize = 2_000;
    // Capacity 160,000 vcores; with 20,000 queues the fair share of a 600 s period is 4,800
    // vcore-seconds. Even LQs ask 600 (Hard: rate 10 vcores each, 10,000 in all); odd LQs ask
    // 6,000 (above the fair share: Elastic).
    let mut xml = String::from("<policy>bopf</policy>");
    for q in 0..BOPF_QUEUES {
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
    xml
}

/// Times heartbeats round-robin over `nodes` nodes: each completes the containers the previous
/// heartbeat on that node started and places up to ten new ones. `after` runs outside the timed
/// section with each heartbeat's decisions, to top up asks (and report progress) so the cluster
/// stays in a steady state.
///
/// Besides criterion's estimates (of batches of heartbeats), prints the median and 10th
/// percentile of single heartbeats: on a loaded machine a batch takes its share of preemptions,
/// while most single heartbeats run uninterrupted.
pub fn steady_heartbeats(
    c: &mut Criterion,
    name: &str,
    s: &mut Scheduler,
    nodes: u32,
    mut after: impl FnMut(&mut Scheduler, &[Decision]),
) {
    let mut running: Vec<Vec<u64>> = vec![Vec::new(); nodes as usize];
    let mut out: Vec<Decision> = Vec::with_capacity(16);
    let mut node = 0u32;
    let mut now = 1_000i64;
    let mut singles: Vec<u64> = Vec::new();
    c.bench_function(name, |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let mut completed = std::mem::take(&mut running[node as usize]);
                out.clear();
                let start = Instant::now();
                black_box(s.node_heartbeat(node, now, &completed, &mut out, 10).unwrap());
                let took = start.elapsed();
                total += took;
                singles.push(took.as_nanos() as u64);
                completed.clear();
                completed.extend(out.iter().map(|d| d.allocation_id));
                running[node as usize] = completed;
                after(s, &out);
                node = (node + 1) % nodes;
                now += 1;
            }
            total
        })
    });
    singles.sort_unstable();
    if !singles.is_empty() {
        let at = |q: f64| singles[((singles.len() - 1) as f64 * q) as usize];
        eprintln!("{name}: single heartbeats median {} ns, p10 {} ns ({} heartbeats)", at(0.5), at(0.1), singles.len());
    }
}
