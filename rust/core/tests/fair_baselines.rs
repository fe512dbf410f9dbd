//! The job-fair and user-job fair (UJF) app policies, the baselines UWFQ is compared with.

use tidal_core::config::Settings;
use tidal_core::ids::ANY;
use tidal_core::request::Ask;
use tidal_core::{Resources, Scheduler};

const GB: i64 = 1024;

fn ask(n: i64) -> Ask {
    Ask { priority: 1, location: ANY, num_containers: n, relax_locality: true, capability: Resources::new(GB, 1) }
}

/// Apps (key, user, containers to run first) in one queue under `policy`; returns the app the
/// next single offer goes to once every app asks for more.
fn next_offer(policy: &str, apps: &[(u64, &str, i64)]) -> u64 {
    next_offer_with(&format!("<app-policy>{policy}</app-policy>"), apps)
}

/// [`next_offer`] with the app policy's `<tidal>` elements given whole.
fn next_offer_with(policy_xml: &str, apps: &[(u64, &str, i64)]) -> u64 {
    let xml = format!("<tidal>{policy_xml}<queue name=\"q\"/></tidal>");
    let mut s = Scheduler::from_xml(&xml, Settings::default()).unwrap();
    s.add_node(0, 100, 1, Resources::new(64 * GB, 64)).unwrap();
    for &(key, user, n) in apps {
        s.add_app(key, "q", user).unwrap();
        s.update_asks(key, &[ask(n)], &[], &[]).unwrap();
    }
    let mut out = Vec::new();
    while s.node_heartbeat(0, 1_000, &[], &mut out, 1).unwrap() > 0 {}
    for &(key, _, n) in apps {
        assert_eq!(s.state().app_by_key(key).unwrap().running_containers, n as u64);
        s.update_asks(key, &[ask(10)], &[], &[]).unwrap();
    }
    out.clear();
    assert_eq!(s.node_heartbeat(0, 2_000, &[], &mut out, 1).unwrap(), 1);
    out[0].app
}

// alice runs jobs 1 (3 containers) and 2 (1); bob runs job 3 (5). Users: alice 4, bob 5.
const APPS: [(u64, &str, i64); 3] = [(1, "alice", 3), (2, "alice", 1), (3, "bob", 5)];

#[test]
fn job_fair_serves_the_job_with_the_smallest_usage() {
    assert_eq!(next_offer("job-fair", &APPS), 2);
    assert_eq!(next_offer("job-fair", &[(1, "a", 2), (2, "b", 3), (3, "a", 4)]), 1);
    // FIFO would serve the oldest job: the orders differ.
    assert_eq!(next_offer("fifo", &APPS), 1);
}

#[test]
fn ujf_serves_the_user_with_the_smallest_usage_then_their_smallest_job() {
    assert_eq!(next_offer("ujf", &APPS), 2);
    // alice's two jobs sum to more than bob's one, though each is smaller: bob goes first,
    // where job-fair would pick alice's smallest job.
    let apps = [(1, "alice", 2), (2, "alice", 3), (3, "bob", 4)];
    assert_eq!(next_offer("ujf", &apps), 3);
    assert_eq!(next_offer("job-fair", &apps), 1);
}

#[test]
fn carbyne_without_altruism_orders_like_job_fair() {
    let xml = "<app-policy>carbyne</app-policy><altruism-probability>0</altruism-probability>";
    for apps in [APPS.to_vec(), vec![(1, "alice", 2), (2, "alice", 3), (3, "bob", 4)]] {
        assert_eq!(next_offer_with(xml, &apps), next_offer("job-fair", &apps));
    }
}

#[test]
fn hints_reply_advises_runtime_partitioning_for_stages_not_started() {
    let doc = r#"{"version":1,"stages":[
        {"id":"scan","tasks":4,"duration_ms":50000,"priorities":[1]},
        {"id":"agg","tasks":1,"duration_ms":7000,"parents":["scan"],"priorities":[2]}],
        "progress":[{"stage":"agg","finished":0,"running":0}]}"#;
    let reply_with = |target: &str| {
        let xml = format!("<tidal><app-policy>uwfq</app-policy>{target}<queue name=\"q\"/></tidal>");
        let mut s = Scheduler::from_xml(&xml, Settings::default()).unwrap();
        s.add_app(1, "q", "alice").unwrap();
        s.set_hints(1, doc).unwrap()
    };
    let reply = reply_with("<uwfq-target-task-sec>30</uwfq-target-task-sec>");
    // scan: 4 × 50 s = 200 s of slot-time in 30 s tasks is 7 tasks; agg: 7 s is 1 task.
    let advised: Vec<(&str, u32, u32)> =
        reply.partitions.iter().map(|p| (p.stage.as_str(), p.tasks, p.advised_tasks)).collect();
    assert_eq!(advised, vec![("scan", 4, 7), ("agg", 1, 1)]);
    assert!(reply.to_json().contains("\"advised_tasks\":7"));
    assert!(reply_with("").partitions.is_empty());
}
