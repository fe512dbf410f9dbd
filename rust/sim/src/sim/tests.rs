//! The engine on small hand-made workloads and on random ones.

use super::config::{ClusterConfig, SimConfig};
use super::output::RunOutput;
use super::run;
use crate::model::{critical_path_ms, estimate_of, Job, Stage};
use crate::queue_file;
use crate::spec::{ContainerReuse, SchedulerSpec, SlotReservationSpec};
use tidal_core::config::Settings;
use tidal_core::{ResourceKind, Resources, Scheduler};

fn stage(parents: &[u32], durations: &[u32]) -> Stage {
    Stage {
        name: format!("s{parents:?}"),
        parents: parents.to_vec(),
        demand: Resources::new(1024, 1),
        durations_ms: durations.to_vec(),
    }
}

fn job(name: &str, queue: &str, arrival_ms: i64, stages: Vec<Stage>) -> Job {
    let estimate = estimate_of(&stages).unwrap();
    Job {
        name: name.into(),
        queue: queue.into(),
        user: queue.into(),
        class: "job".into(),
        arrival_ms,
        deadline_ms: None,
        stages,
        estimate,
    }
}

fn cfg(am: bool) -> SimConfig {
    SimConfig {
        heartbeat_ms: 1000,
        container_overhead_ms: 0,
        am_overhead_ms: 0,
        submit_latency_ms: 0,
        am: am.then(|| Resources::new(1024, 1)),
        sample_ms: 1000,
        idle_recheck_ms: 10_000,
        progress: false,
        label: "test".into(),
        hints: true,
        hint_progress_interval_ms: 2000,
        fairness_over_jobs: false,
        fairness_window_ms: 60_000,
        straggler_copies: true,
        stop_after_class: None,
        container_reuse: ContainerReuse::None,
    }
}

fn with_reuse(am: bool, mode: ContainerReuse) -> SimConfig {
    SimConfig { container_reuse: mode, ..cfg(am) }
}

/// Vcore-milliseconds the run's containers held.
fn vcore_ms(out: &RunOutput) -> f64 {
    out.allocated[ResourceKind::Vcores as usize]
}

fn sched(queues: &[&str]) -> Scheduler {
    sched_with(queues, None)
}

/// DRF over `queues`, the first with slot reservation at isolation probability `reserve`.
fn sched_with(queues: &[&str], reserve: Option<f64>) -> Scheduler {
    let queues: Vec<String> = queues.iter().map(|q| q.to_string()).collect();
    let slot_reservation = reserve.map(|p| SlotReservationSpec {
        queues: vec![queues[0].clone()],
        isolation_probability: Some(p),
        ..Default::default()
    });
    let xml =
        queue_file::write("drf", &queues, &SchedulerSpec { slot_reservation, ..Default::default() }, &[]).unwrap();
    let settings = Settings { max_allocation: Resources::new(8192, 8), ..Settings::default() };
    Scheduler::from_xml(&xml, settings).unwrap()
}

#[test]
fn held_space_runs_straggler_copies_and_the_first_finisher_wins() {
    // One node with room for 4 tasks; stage 0 has three 1 s tasks and a 60 s straggler, then a
    // 1 s stage. With P = 1 the space of the three finished tasks is held; 1 running <= 3 idle, so the
    // AM copies the straggler, and the copy (a fresh draw: some 1 s duration) wins.
    let j = job("j", "q", 0, vec![stage(&[], &[1000, 1000, 1000, 60_000]), stage(&[0], &[1000, 1000, 1000, 1000])]);
    let c = ClusterConfig { machines: 1, machines_per_rack: 1, capacity: Resources::new(4096, 4) };
    let reserve = Some(1.0);
    let out = run(&c, sched_with(&["q"], reserve), std::slice::from_ref(&j), &cfg(false)).unwrap();
    assert_eq!((out.stats.copies, out.stats.copies_won), (1, 1));
    assert!(out.jobs[0].jct_ms() < 10_000, "{}", out.jobs[0].jct_ms());
    // Without copies the straggler sets the pace.
    let mut no_copies = cfg(false);
    no_copies.straggler_copies = false;
    let out = run(&c, sched_with(&["q"], reserve), &[j], &no_copies).unwrap();
    assert_eq!(out.stats.copies, 0);
    assert!(out.jobs[0].jct_ms() >= 61_000);
    assert!(out.held.iter().any(|&h| h > 0.0), "three tasks' space sat held while the straggler ran");
}

fn cluster(machines: usize) -> ClusterConfig {
    ClusterConfig { machines, machines_per_rack: 4, capacity: Resources::new(8192, 8) }
}

#[test]
fn a_barrier_waits_for_every_parent() {
    // a (5 s) and b (10 s) both feed c (3 s): c starts at 10 s, not at 5 s.
    let j = job("j", "q", 0, vec![stage(&[], &[5000]), stage(&[], &[10_000]), stage(&[0, 1], &[3000])]);
    let out = run(&cluster(4), sched(&["q"]), &[j], &cfg(false)).unwrap();
    assert_eq!(out.jobs[0].jct_ms(), 13_000);
    assert_eq!(out.jobs[0].start_ms, 0);
}

#[test]
fn heartbeats_pace_allocation_and_am_comes_first() {
    // With an AM, the first stage is asked once the AM runs; the AM's heartbeat already
    // passed, so tasks go to the next node heartbeats.
    let j = job("j", "q", 0, vec![stage(&[], &[1000, 1000])]);
    let out = run(&cluster(1), sched(&["q"]), &[j], &cfg(true)).unwrap();
    // AM at t=0 on the only node; tasks at its next heartbeat, t=1 s; done at 2 s.
    assert_eq!(out.jobs[0].jct_ms(), 2000);
}

#[test]
fn impossible_demands_are_reported() {
    let mut s = stage(&[], &[1000]);
    s.demand = Resources::new(4096, 64);
    let err = run(&cluster(2), sched(&["q"]), &[job("big", "q", 0, vec![s])], &cfg(false)).unwrap_err();
    assert!(format!("{err:#}").contains("big"), "{err:#}");
}

#[test]
fn stage_reuse_runs_a_stage_of_short_tasks_in_few_containers() {
    // 60 sub-second tasks on a node with room for the AM and 7 tasks: without reuse every task
    // waits for a heartbeat to get a container; with reuse the 7 containers of the first
    // heartbeat run the stage's next task as soon as one ends.
    let durations: Vec<u32> = (0..60).map(|i| 200 + 5 * i).collect();
    let work: u32 = durations.iter().sum();
    let j = job("j", "q", 0, vec![stage(&[], &durations)]);
    let none = run(&cluster(1), sched(&["q"]), std::slice::from_ref(&j), &cfg(true)).unwrap();
    let reuse = run(&cluster(1), sched(&["q"]), &[j], &with_reuse(true, ContainerReuse::Stage)).unwrap();
    assert_eq!(none.stats.containers, 61);
    assert_eq!(reuse.stats.containers, 8, "the AM's and the 7 task containers of the first heartbeat");
    let (a, b) = (none.jobs[0].jct_ms(), reuse.jobs[0].jct_ms());
    assert!(b < a, "reuse {b} ms vs none {a} ms");
    // Every task ran once, each container for exactly its tasks' time (plus the AM's 1 vcore
    // for the job's life).
    for out in [&none, &reuse] {
        assert_eq!((out.jobs.len(), out.unfinished), (1, 0));
        assert_eq!(vcore_ms(out), (work as i64 + out.jobs[0].jct_ms()) as f64);
    }
}

#[test]
fn dag_reuse_moves_a_container_to_the_first_runnable_stage_it_fits() {
    // Stage 0 (2 vcores, 1 s) feeds stage 1 (4 vcores: too big for its container), stage 2 and
    // stage 3 (1 vcore each, 5 s and 7 s). With `dag` reuse stage 0's container runs stage 2's
    // task, holding 2 vcores for it; stages 1 and 3 get containers of their own.
    let mut s0 = stage(&[], &[1000]);
    s0.demand = Resources::new(2048, 2);
    let mut s1 = stage(&[0], &[3000]);
    s1.demand = Resources::new(4096, 4);
    let j = job("j", "q", 0, vec![s0, s1, stage(&[0], &[5000]), stage(&[0], &[7000])]);
    let dag =
        run(&cluster(1), sched(&["q"]), std::slice::from_ref(&j), &with_reuse(false, ContainerReuse::Dag)).unwrap();
    assert_eq!(dag.stats.containers, 3);
    assert_eq!(vcore_ms(&dag), (2 * 1000 + 4 * 3000 + 2 * 5000 + 7000) as f64);
    // `stage` reuse never leaves the stage: a container per stage, each its stage's size.
    let st = run(&cluster(1), sched(&["q"]), &[j], &with_reuse(false, ContainerReuse::Stage)).unwrap();
    assert_eq!(st.stats.containers, 4);
    assert_eq!(vcore_ms(&st), (2 * 1000 + 4 * 3000 + 5000 + 7000) as f64);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 24, ..Default::default() })]
    /// Random DAG workloads on random clusters, with or without container reuse: every job
    /// finishes, never before its critical path, and two runs give identical results.
    #[test]
    fn random_workloads_finish_deterministically(
        seed in 0u64..1000, machines in 1usize..6, njobs in 1usize..8, am in proptest::bool::ANY,
        reserve in proptest::option::of(0.0f64..=1.0),
        reuse in proptest::sample::select(vec![ContainerReuse::None, ContainerReuse::Stage, ContainerReuse::Dag])
    ) {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        // Enough room that AM containers cannot starve every task (YARN's AM deadlock,
        // which the engine reports as an error).
        let njobs = if am { njobs.min(machines * 4) } else { njobs };
        let jobs: Vec<Job> = (0..njobs).map(|i| {
            let n = rng.gen_range(1..6);
            let stages = (0..n).map(|k| {
                let parents: Vec<u32> = (0..k as u32).filter(|_| rng.gen_bool(0.4)).collect();
                let tasks = rng.gen_range(1..12);
                let mut s = stage(&parents, &(0..tasks).map(|_| rng.gen_range(100..5000)).collect::<Vec<_>>());
                s.demand = Resources::new(1024 * rng.gen_range(1..4), rng.gen_range(1..4));
                s
            }).collect();
            job(&format!("j{i}"), ["a", "b"][i % 2], rng.gen_range(0..20_000), stages)
        }).collect();
        // Slot reservation (queue a only) with straggler copies: a copy may beat its
        // original, so the critical path bound holds only without.
        let c = with_reuse(am, reuse);
        let a = run(&cluster(machines), sched_with(&["a", "b"], reserve), &jobs, &c).unwrap();
        let b = run(&cluster(machines), sched_with(&["a", "b"], reserve), &jobs, &c).unwrap();
        proptest::prop_assert_eq!(a.jobs.len(), jobs.len());
        for (j, r) in jobs.iter().zip(&a.jobs) {
            proptest::prop_assert!(reserve.is_some() || r.finish_ms >= r.arrival_ms + critical_path_ms(&j.stages));
            proptest::prop_assert!(r.start_ms >= r.arrival_ms);
        }
        let key = |o: &RunOutput| o.jobs.iter().map(|j| (j.start_ms, j.finish_ms)).collect::<Vec<_>>();
        proptest::prop_assert_eq!(key(&a), key(&b));
    }
}

#[test]
fn submission_and_am_start_up_delay_the_first_task() {
    // One 1 s task. The scheduler sees the job 2 s after its arrival; its AM asks 5 s after its
    // container started, and the task's own container takes 300 ms to start.
    let j = job("j", "q", 0, vec![stage(&[], &[1000])]);
    let base = run(&cluster(1), sched(&["q"]), std::slice::from_ref(&j), &cfg(true)).unwrap();
    let slow = SimConfig { container_overhead_ms: 300, am_overhead_ms: 5000, submit_latency_ms: 2000, ..cfg(true) };
    let out = run(&cluster(1), sched(&["q"]), &[j], &slow).unwrap();
    // The AM's asks then meet the node's heartbeats at another phase: exact up to a heartbeat.
    let added = out.jobs[0].jct_ms() - base.jobs[0].jct_ms();
    assert!((added - 7300).abs() <= cfg(true).heartbeat_ms, "{added}");
    assert_eq!(out.jobs[0].start_ms, base.jobs[0].start_ms + 2000, "the AM starts after the submission");
}
