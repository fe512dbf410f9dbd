//! The steady-state heartbeat loop the scheduler benchmarks share.

use criterion::Criterion;
use std::hint::black_box;
use std::time::{Duration, Instant};
use tidal_core::{Decision, Scheduler};

/// Times heartbeats round-robin over `nodes` nodes: each completes the containers the previous
/// heartbeat on that node started and places up to ten new ones. `after` runs outside the timed
/// section with each heartbeat's decisions, to top up asks (and report progress) so the cluster
/// stays in a steady state.
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
    c.bench_function(name, |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let mut completed = std::mem::take(&mut running[node as usize]);
                out.clear();
                let start = Instant::now();
                black_box(s.node_heartbeat(node, now, &completed, &mut out, 10).unwrap());
                total += start.elapsed();
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
}
