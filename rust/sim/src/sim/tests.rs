//! The engine on small hand-made workloads and on random ones.

use super::config::{ClusterConfig, SimConfig};
use super::output::RunOutput;
use super::run;
use crate::model::{critical_path_ms, estimate_of, Job, Stage};
use crate::queue_file;
use crate::spec::{SchedulerSpec, SlotReservationSpec};
use tidal_core::config::Settings;
use tidal_core::{Resources, Scheduler};

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
    }
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

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 24, ..Default::default() })]
    /// Random DAG workloads on random clusters: every job finishes, never before its critical
    /// path, and two runs give identical results.
    #[test]
    fn random_workloads_finish_deterministically(
        seed in 0u64..1000, machines in 1usize..6, njobs in 1usize..8, am in proptest::bool::ANY,
        reserve in proptest::option::of(0.0f64..=1.0)
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
        let a = run(&cluster(machines), sched_with(&["a", "b"], reserve), &jobs, &cfg(am)).unwrap();
        let b = run(&cluster(machines), sched_with(&["a", "b"], reserve), &jobs, &cfg(am)).unwrap();
        for (j, r) in jobs.iter().zip(&a.jobs) {
            proptest::prop_assert!(reserve.is_some() || r.finish_ms >= r.arrival_ms + critical_path_ms(&j.stages));
            proptest::prop_assert!(r.start_ms >= r.arrival_ms);
        }
        let key = |o: &RunOutput| o.jobs.iter().map(|j| (j.start_ms, j.finish_ms)).collect::<Vec<_>>();
        proptest::prop_assert_eq!(key(&a), key(&b));
    }
}
