//! Carbyne at scale.
//!
//! - Heartbeat: 10,000 nodes, 1,000 hinted DAG jobs in 10 queues, 50,000 pending container
//!   requests, in a steady state: each measured heartbeat completes the containers the previous
//!   heartbeat on that node started and places up to ten new ones; outside the timed section
//!   the AMs ask again for what they got and one AM per heartbeat reports progress, so the
//!   timed heartbeat also re-plans jobs.
//! - Planning: forward estimate and reverse packing of one 50-stage, 5,000-task DAG.
//!
//! Run: `cargo bench -p tidal-core --bench carbyne`

mod support;

use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;
use tidal_core::config::Settings;
use tidal_core::dag::pack;
use tidal_core::dag::{JobDag, Stage};
use tidal_core::ids::ANY;
use tidal_core::request::Ask;
use tidal_core::{Resources, Scheduler};

const NODES: u32 = 10_000;
const JOBS: u64 = 1_000;
const QUEUES: u64 = 10;

/// Job `j`'s DAG: two roots (20 and 30 tasks, 10 s and 60 s) feeding a barrier and a two-stage
/// tail, 200 tasks in all; 50 tasks are requested at any time, at the roots' priorities.
struct JobSpec {
    demand: Resources,
}

fn job(j: u64) -> JobSpec {
    JobSpec { demand: Resources::new(1024 * (1 + (j % 4) as i64), 1 + (j % 2) as i64) }
}

const ROOTS: [(u32, i32); 2] = [(20, 3), (30, 4)];

fn dag_json(spec: &JobSpec) -> String {
    let d = format!(r#"{{"memory_mb":{},"vcores":{}}}"#, spec.demand.memory_mb(), spec.demand.vcores());
    format!(
        r#"{{"version":1,"stages":[
        {{"id":"a","tasks":20,"demand":{d},"duration_ms":10000,"priorities":[3]}},
        {{"id":"b","tasks":30,"demand":{d},"duration_ms":60000,"priorities":[4]}},
        {{"id":"c","tasks":50,"demand":{d},"duration_ms":20000,"parents":["a","b"],"priorities":[7]}},
        {{"id":"d","tasks":50,"demand":{d},"duration_ms":5000,"parents":["c"],"priorities":[10]}},
        {{"id":"e","tasks":50,"demand":{d},"duration_ms":15000,"parents":["c"],"priorities":[11]}}]}}"#
    )
}

fn root_asks(spec: &JobSpec) -> Vec<Ask> {
    ROOTS
        .iter()
        .map(|&(n, p)| Ask {
            priority: p,
            location: ANY,
            num_containers: n as i64,
            relax_locality: true,
            capability: spec.demand,
        })
        .collect()
}

fn heartbeat(c: &mut Criterion) {
    let queues: String = (0..QUEUES).map(|q| format!("<queue name=\"q{q}\"/>")).collect();
    let xml = format!("<tidal><app-policy>carbyne</app-policy>{queues}</tidal>");
    let mut s = Scheduler::from_xml(&xml, Settings::default()).unwrap();
    for n in 0..NODES {
        s.add_node(n, 1_000 + n, 1 + n / 40, Resources::new(16 * 1024, 16)).unwrap();
    }
    let specs: Vec<JobSpec> = (0..JOBS).map(job).collect();
    for j in 0..JOBS {
        s.add_app(j, &format!("q{}", j % QUEUES), "bench").unwrap();
        s.update_asks(j, &root_asks(&specs[j as usize]), &[], &[]).unwrap();
        s.set_hints(j, &dag_json(&specs[j as usize])).unwrap();
    }
    let pending_before: u64 = s.state().queues.iter().map(|q| q.pending_containers).sum();
    assert_eq!(pending_before, 50_000);
    let mut reporter = 0u64;
    support::steady_heartbeats(c, "heartbeat_carbyne_10k_nodes_1k_dag_jobs_50k_pending", &mut s, NODES, |s, out| {
        for d in out {
            let spec = &specs[d.app as usize];
            let n = ROOTS.iter().find(|r| r.1 == d.priority).unwrap().0;
            let a = Ask {
                priority: d.priority,
                location: ANY,
                num_containers: n as i64,
                relax_locality: true,
                capability: spec.demand,
            };
            s.update_asks(d.app, &[a], &[], &[]).unwrap();
        }
        // One AM reports progress: its running containers spread over the roots.
        let r = s.state().app_by_key(reporter).unwrap().running_containers as u32;
        let (ra, rb) = (r.min(20), r.saturating_sub(20).min(30));
        let doc = format!(
            r#"{{"version":1,"progress":[{{"stage":"a","finished":0,"running":{ra}}},{{"stage":"b","finished":0,"running":{rb}}}]}}"#
        );
        s.set_hints(reporter, &doc).unwrap();
        reporter = (reporter + 1) % JOBS;
    });
    let pending_after: u64 = s.state().queues.iter().map(|q| q.pending_containers).sum();
    assert_eq!(pending_before, pending_after, "steady state kept");
}

/// A layered DAG: 50 stages of 100 tasks, each stage after the first with one to three parents
/// among the earlier stages, demands and durations varying by stage.
fn big_dag() -> JobDag {
    let mut stages = Vec::new();
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    let mut rnd = move |m: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % m
    };
    for i in 0..50usize {
        let mut parents: Vec<usize> = Vec::new();
        if i > 0 {
            for _ in 0..1 + rnd(3) {
                let p = (i - 1).saturating_sub(rnd(4) as usize);
                if !parents.contains(&p) {
                    parents.push(p);
                }
            }
        }
        let demand = Resources::new(1024 * (1 + rnd(4) as i64), 1 + rnd(3) as i64);
        stages.push(Stage::new(&format!("s{i}"), 100, demand, 1_000 * (1 + rnd(60)), &parents));
    }
    JobDag::new(stages).unwrap()
}

fn planning(c: &mut Criterion) {
    let dag = big_dag();
    assert_eq!(dag.pending_tasks(), 5_000);
    // A share of a tenth of what the job could use at once.
    let max = dag.max_demand();
    let share = Resources::new(max.memory_mb() / 10, max.vcores() / 10);
    let plan = pack::plan(&dag, &share, 0, None);
    assert_eq!(plan.latest_start.iter().map(Vec::len).sum::<usize>(), 5_000);
    c.bench_function("plan_reverse_packing_50_stages_5k_tasks", |b| {
        b.iter(|| black_box(pack::plan(black_box(&dag), &share, 0, None)))
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(50);
    targets = heartbeat, planning
}
criterion_main!(benches);
