//! Cluster fair queuing (CFQ): stages by virtual deadline with no user or job context, against
//! UWFQ, which orders by user and job.

use tidal_core::config::Settings;
use tidal_core::ids::ANY;
use tidal_core::request::Ask;
use tidal_core::{Resources, Scheduler};

const GB: i64 = 1024;

fn ask(priority: i32, n: i64) -> Ask {
    Ask { priority, location: ANY, num_containers: n, relax_locality: true, capability: Resources::new(GB, 1) }
}

/// One queue under `policy` on a 64-slot node; apps `(key, user)` started (their AM at
/// priority 1 running) at t = 0.
fn started(policy: &str, apps: &[(u64, &str)]) -> Scheduler {
    let xml = format!("<tidal><app-policy>{policy}</app-policy><queue name=\"q\"/></tidal>");
    let mut s = Scheduler::from_xml(&xml, Settings::default()).unwrap();
    s.add_node(0, 100, 1, Resources::new(64 * GB, 64)).unwrap();
    for &(key, user) in apps {
        s.add_app(key, "q", user).unwrap();
        s.update_asks(key, &[ask(1, 1)], &[], &[]).unwrap();
    }
    let mut out = Vec::new();
    while s.node_heartbeat(0, 0, &[], &mut out, 1).unwrap() > 0 {}
    s
}

/// The apps the next `n` single offers at `now_ms` go to.
fn offers(s: &mut Scheduler, now_ms: i64, n: usize) -> Vec<u64> {
    let mut out = Vec::new();
    for _ in 0..n {
        assert_eq!(s.node_heartbeat(0, now_ms, &[], &mut out, 1).unwrap(), 1);
    }
    out.iter().map(|d| d.app).collect()
}

/// alice runs three jobs whose next stage has 2 tasks, bob one with a 3-task stage.
fn stage_order(policy: &str) -> Vec<u64> {
    let mut s = started(policy, &[(1, "alice"), (2, "alice"), (3, "alice"), (4, "bob")]);
    for (key, n) in [(1, 2), (2, 2), (3, 2), (4, 3)] {
        s.update_asks(key, &[ask(2, n)], &[], &[]).unwrap();
    }
    offers(&mut s, 0, 9)
}

#[test]
fn cfq_ignores_users_where_uwfq_shares_by_user() {
    // CFQ: every 2-task stage has an earlier deadline than bob's 3-task one, so the user with
    // three jobs takes six containers before the user with one gets any.
    assert_eq!(stage_order("cfq"), [1, 1, 2, 2, 3, 3, 4, 4, 4]);
    // UWFQ: alice's jobs finish one after another at her half of the cluster, so bob's job
    // comes before her second.
    let uwfq = stage_order("uwfq");
    assert_eq!(uwfq[..5], [1, 1, 4, 4, 4]);
}

/// One user's two jobs, sizes known from DAG hints: job 1 runs a 1-task stage then, a minute
/// later, another; job 2 has one 3-task stage waiting throughout. Returns who gets the offer
/// after job 1's second stage asks.
fn after_second_stage(policy: &str) -> u64 {
    let mut s = started(policy, &[(1, "u"), (2, "u")]);
    let stage = |id: &str, tasks: u32, priority: i32| {
        format!(
            r#"{{"id":"{id}","tasks":{tasks},"demand":{{"memory_mb":1024,"vcores":1}},"duration_ms":10000,"priorities":[{priority}]}}"#
        )
    };
    let chain = format!(r#"{{"version":1,"stages":[{},{}]}}"#, stage("a", 1, 2), stage("b", 1, 3));
    let chain = chain.replacen(r#""priorities":[3]}"#, r#""priorities":[3],"parents":["a"]}"#, 1);
    s.set_hints(1, &chain).unwrap();
    s.set_hints(2, &format!(r#"{{"version":1,"stages":[{}]}}"#, stage("a", 3, 2))).unwrap();
    s.update_asks(1, &[ask(2, 1)], &[], &[]).unwrap();
    s.update_asks(2, &[ask(2, 3)], &[], &[]).unwrap();
    assert_eq!(offers(&mut s, 1_000, 1), [1]);
    // Time passes with no free slot offered: the reference runs on what the queue uses.
    let mut out = Vec::new();
    for t in (2..60).map(|k| k * 1_000) {
        s.node_heartbeat(0, t, &[], &mut out, 0).unwrap();
    }
    s.update_asks(1, &[ask(2, 0), ask(3, 1)], &[], &[]).unwrap();
    offers(&mut s, 60_000, 1)[0]
}

#[test]
fn cfq_interleaves_stages_where_uwfq_finishes_the_smaller_job() {
    // CFQ: job 1's new stage starts at the virtual time its first stage left, so job 2's
    // older stage goes first: jobs advance a stage at a time.
    assert_eq!(after_second_stage("cfq"), 2);
    // UWFQ: job 1 is the smaller job of the same user (2 tasks in all) and keeps its place.
    assert_eq!(after_second_stage("uwfq"), 1);
}
