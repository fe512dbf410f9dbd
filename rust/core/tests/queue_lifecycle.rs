//! Run-time queues over their whole life: deleting one leaves nothing behind, neither in
//! admission control nor in the scheduler's tables, however often queues come and go.

mod common;

use common::{any_ask, lq, GB};
use tidal_core::config::{parse_queue_file, Settings};
use tidal_core::error::ErrorKind;
use tidal_core::scheduler::Caller;
use tidal_core::{Resources, Scheduler};

const ALICE: Caller = Caller { user: "alice", admin: false };

/// A scheduler under `policy` with one TQ, 4 nodes of 8 GB and 8 vcores, and admission run.
fn cluster(policy: &str) -> Scheduler {
    let xml = format!("<tidal><policy>{policy}</policy><queue name=\"tq\"/></tidal>");
    let mut s = Scheduler::from_xml(&xml, Settings::default()).unwrap();
    for n in 0..4 {
        s.add_node(n, n + 1, 100, Resources::new(8 * GB, 8)).unwrap();
    }
    s.node_heartbeat(0, 1_000, &[], &mut Vec::new(), 1).unwrap();
    s
}

#[test]
fn a_deleted_queue_leaves_no_admission_state() {
    for policy in ["bopf", "n-bopf"] {
        let mut s = cluster(policy);
        // 240 vcore-s in 10 s: 24 of the 32 vcores, so two such commitments cannot both be hard.
        let (_, first) = s.register_queue_xml(&lq("big", 100, 10, 240), ALICE).unwrap();
        assert_eq!(first.class, "hard", "{policy}: {}", first.reason);
        s.unregister_queue("big", ALICE).unwrap();
        let (_, again) = s.register_queue_xml(&lq("big", 100, 10, 240), ALICE).unwrap();
        assert_eq!(again.class, "hard", "{policy}: registered again: {}", again.reason);
        s.unregister_queue("big", ALICE).unwrap();
        let (_, other) = s.register_queue_xml(&lq("other", 100, 10, 240), ALICE).unwrap();
        assert_eq!(other.class, "hard", "{policy}: the deleted queue's commitment was kept: {}", other.reason);
    }
}

#[test]
fn register_delete_cycles_keep_the_queue_table_bounded() {
    let mut s = cluster("bopf");
    for i in 0..100_000 {
        let name = format!("q{i}");
        let (_, v) = s.register_queue_xml(&lq(&name, 100, 10, 10), ALICE).unwrap();
        assert!(v.admitted, "{}", v.reason);
        s.unregister_queue(&name, ALICE).unwrap();
    }
    let state = s.state();
    assert_eq!(state.queue_index.len(), 1, "only the file's queue is left");
    assert!(state.queues.len() <= 2, "{} queue slots after 100k cycles", state.queues.len());
}

#[test]
fn a_deleted_queue_with_apps_is_freed_when_its_last_app_leaves() {
    let mut s = cluster("bopf");
    s.register_queue_xml(&lq("dash", 100, 10, 100), ALICE).unwrap();
    s.add_app(1, "dash", "alice").unwrap();
    s.update_asks(1, &[any_ask(1, 2, GB, 1)], &[], &[]).unwrap();
    s.node_heartbeat(0, 2_000, &[], &mut Vec::new(), 4).unwrap();
    s.unregister_queue("dash", ALICE).unwrap();
    assert!(s.register_queue_xml(&lq("dash", 100, 10, 100), ALICE).is_err(), "its app still runs");
    assert!(s.state().queue_by_name("root.dash").is_some());
    s.remove_app(1).unwrap();
    assert!(s.state().queue_by_name("root.dash").is_none());
    // The freed slot is reused, and the name registers again as new.
    let (_, v) = s.register_queue_xml(&lq("dash", 100, 10, 100), ALICE).unwrap();
    assert_eq!(v.class, "hard", "{}", v.reason);
    assert_eq!(s.state().queues.len(), 2);
    // A snapshot lists live queues only.
    assert_eq!(s.snapshot().queues.len(), 2);
}

/// The status document hosts read carries each queue's ACLs and the root's as the definitions
/// give them (null where they give none), through a reload, a run-time registration and a
/// restore from a snapshot.
#[test]
fn queue_acls_reach_the_status_through_reloads_registrations_and_restores() {
    use tidal_core::config::parse_queue_file;
    use tidal_core::status::SchedulerStatus;
    let acls = |s: &Scheduler, queue: &str| -> serde_json::Value {
        let status: serde_json::Value = serde_json::from_str(&SchedulerStatus::of(s).to_json()).unwrap();
        if queue == "root" {
            return status["root_acls"].clone();
        }
        let q = status["queues"].as_array().unwrap().iter().find(|q| q["name"] == queue).cloned();
        q.unwrap_or_else(|| panic!("{queue} in {status}"))["acls"].clone()
    };
    let file = |root: &str, tq: &str| {
        format!("<tidal><queue name=\"root\">{root}</queue><queue name=\"tq\">{tq}</queue></tidal>")
    };
    let xml = file("<aclSubmitApps> </aclSubmitApps>", "<aclSubmitApps>alice analysts</aclSubmitApps>");
    let mut s = Scheduler::from_xml(&xml, Settings::default()).unwrap();
    assert_eq!(acls(&s, "root"), serde_json::json!({"submit_apps": " ", "administer_apps": null}));
    assert_eq!(acls(&s, "root.tq"), serde_json::json!({"submit_apps": "alice analysts", "administer_apps": null}));

    let reloaded = file("<aclAdministerApps>ops</aclAdministerApps>", "");
    s.reconfigure(parse_queue_file(&reloaded).unwrap(), Settings::default()).unwrap();
    assert_eq!(acls(&s, "root"), serde_json::json!({"submit_apps": null, "administer_apps": "ops "}));
    assert_eq!(acls(&s, "root.tq"), serde_json::json!({"submit_apps": null, "administer_apps": null}));

    s.register_queue_xml("<queue name=\"mine\"><aclSubmitApps>bob,carol</aclSubmitApps></queue>", ALICE).unwrap();
    let registered = serde_json::json!({"submit_apps": "bob,carol ", "administer_apps": null});
    assert_eq!(acls(&s, "root.mine"), registered);
    let mut restored = Scheduler::from_xml(&reloaded, Settings::default()).unwrap();
    restored.restore_json(&s.snapshot_json()).unwrap();
    assert_eq!(acls(&restored, "root.mine"), registered);
}

#[test]
fn a_run_time_queue_rejected_at_a_reload_is_dropped() {
    let mut s = Scheduler::from_xml("<tidal><queue name=\"tq\"/></tidal>", Settings::default()).unwrap();
    s.add_node(0, 1, 100, Resources::new(GB, 2)).unwrap();
    s.node_heartbeat(0, 1_000, &[], &mut Vec::new(), 1).unwrap();
    s.register_queue_xml("<queue name=\"late\"/>", ALICE).unwrap();
    // The reloaded file brings BoPF and an LQ whose bursts need the whole node: once it is
    // admitted, safety condition (1) admits no queue after it, and run-time queues come last.
    let xml = format!(
        "<tidal><policy>bopf</policy><queue name=\"tq\"/><queue name=\"b\"><weight>2</weight></queue>{}</tidal>",
        lq("big", 60, 10, 20)
    );
    s.reconfigure(parse_queue_file(&xml).unwrap(), Settings::default()).unwrap();
    let q = s.state().queue_by_name("root.late");
    assert!(q.is_none(), "the rejected queue is gone: retired {:?}", q.map(|q| q.retired));
    assert!(s.snapshot().runtime_queues.is_empty(), "and not saved for a restart");
    let err = s.unregister_queue("late", ALICE).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound, "{err}");
}
