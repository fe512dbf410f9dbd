//! Snapshot and restore: a fresh scheduler built from the same allocation file and restored
//! from a snapshot continues with the same admission classes, burst records, usage history and
//! run-time queues; BoPF's restore grace keeps classes while NodeManagers re-register.

mod common;

use common::{any_ask, lq, GB};
use tidal_core::config::Settings;
use tidal_core::policy::bopf::{READMISSION_INTERVAL_MS, RESTORE_GRACE_MS};
use tidal_core::policy::QueueView;
use tidal_core::scheduler::Caller;
use tidal_core::snapshot::Snapshot;
use tidal_core::{CoreError, Resources, Scheduler};

const NODES: u32 = 4;

/// Two TQs and an LQ that is Hard on four 8-vcore nodes (a 10-vcore rate of 32).
fn file(policy: &str) -> String {
    format!(
        "<tidal><policy>{policy}</policy><queue name=\"tq1\"/><queue name=\"tq2\"/>{}</tidal>",
        lq("lq", 300, 60, 600)
    )
}

fn scheduler(policy: &str) -> Scheduler {
    Scheduler::from_xml(&file(policy), Settings { max_assign_per_heartbeat: 100, ..Settings::default() }).unwrap()
}

fn add_nodes(s: &mut Scheduler, nodes: impl IntoIterator<Item = u32>) {
    for i in nodes {
        s.add_node(i, 100 + i, 1, Resources::new(8 * GB, 8)).unwrap();
    }
}

const ALICE: Caller = Caller { user: "alice", admin: false };
const BOB: Caller = Caller { user: "bob", admin: false };

/// A BoPF scheduler with a run-time LQ owned by alice, a burst on in the file LQ, containers
/// running in every queue with demand and time passed, so usage integrals are not zero.
fn busy_bopf() -> Scheduler {
    let mut s = scheduler("bopf");
    add_nodes(&mut s, 0..NODES);
    let mut out = Vec::new();
    s.node_heartbeat(0, 1_000, &[], &mut out, 100).unwrap();
    let (name, verdict) = s.register_queue_xml(&lq("dash", 100, 10, 100), ALICE).unwrap();
    assert_eq!(name, "root.dash");
    assert!(verdict.admitted, "{}", verdict.reason);
    s.add_app(1, "tq1", "u").unwrap();
    s.add_app(2, "lq", "v").unwrap();
    s.add_app(3, "tq2", "w").unwrap();
    s.add_app(4, "dash", "alice").unwrap();
    s.update_asks(1, &[any_ask(1, 12, GB, 1)], &[], &[]).unwrap();
    s.update_asks(4, &[any_ask(1, 6, GB, 1)], &[], &[]).unwrap();
    s.update_asks(2, &[any_ask(1, 20, GB, 1)], &[], &[]).unwrap();
    s.update_asks(3, &[any_ask(1, 4, GB, 1)], &[], &[]).unwrap();
    for n in 0..NODES {
        s.node_heartbeat(n, 2_000, &[], &mut out, 100).unwrap();
    }
    let done: Vec<u64> = out.iter().take(3).map(|d| d.allocation_id).collect();
    s.node_heartbeat(0, 7_500, &done, &mut Vec::new(), 0).unwrap();
    s
}

fn names(s: &Scheduler) -> Vec<String> {
    s.state().queues.iter().filter(|q| !q.retired).map(|q| q.name().to_string()).collect()
}

fn view(s: &Scheduler, name: &str) -> QueueView {
    s.queue_view(s.state().queue_index[name])
}

fn long_term(s: &Scheduler, name: &str) -> f64 {
    let st = s.state();
    st.queue_by_name(name).unwrap().long_term_dominant_share(&st.capacity, st.now_ms)
}

fn class(s: &Scheduler, name: &str) -> &'static str {
    view(s, name).admission.class
}

#[test]
fn a_restored_instance_continues_where_the_snapshot_was_taken() {
    let before = busy_bopf();
    let lq_view = view(&before, "root.lq");
    assert_eq!(lq_view.admission.class, "hard");
    let burst = lq_view.burst.as_ref().unwrap();
    assert_eq!((burst.phase, burst.bursts_started), ("on", 1));
    assert!(burst.consumed[1] > 0.0);
    assert_eq!(view(&before, "root.dash").burst.unwrap().phase, "on");
    for name in names(&before) {
        assert!(long_term(&before, &name) > 0.0, "{name} has usage history");
    }
    let json = before.snapshot_json();
    let snap = Snapshot::from_json(&json).unwrap();
    assert_eq!(snap.runtime_queues.len(), 1);
    assert_eq!(snap.runtime_queues[0].owner, "alice");
    assert_eq!(snap.policy.name, "bopf");

    let mut after = scheduler("bopf");
    let summary = after.restore_json(&json).unwrap();
    add_nodes(&mut after, 0..NODES);
    assert!(summary.policy_restored);
    assert!(summary.warnings.is_empty(), "{:?}", summary.warnings);
    let dash = summary.queues.iter().find(|q| q.name == "root.dash").unwrap();
    assert!(dash.runtime && dash.admitted);
    assert_eq!(dash.class, class(&before, "root.dash"));

    assert_eq!(names(&after), names(&before));
    assert_eq!(after.state().now_ms, before.state().now_ms);
    assert_eq!(after.state().next_allocation_id, before.state().next_allocation_id);
    for name in names(&before) {
        assert_eq!(view(&after, &name), view(&before, &name), "queue view of {name}");
        assert_eq!(long_term(&after, &name), long_term(&before, &name), "long-term share of {name}");
    }
    // The run-time queue is back with its owner: bob may not remove it, alice may.
    let dash = after.state().queue_by_name("root.dash").unwrap();
    assert_eq!(dash.config.owner.as_deref(), Some("alice"));
    assert!(matches!(after.unregister_queue("dash", BOB), Err(CoreError::Forbidden(_))));
    // A snapshot of the restored instance is the snapshot it was restored from, but for the
    // admission decisions of the restore, which follow the restored ones in its history.
    let mut again = after.snapshot();
    let (mut history, restored) = (again.history.take().unwrap(), snap.history.clone().unwrap());
    assert_eq!(again, Snapshot { history: None, ..snap });
    let decided: Vec<(i64, String)> =
        history.admissions.drain(restored.admissions.len()..).map(|a| (a.t_ms, a.queue.to_string())).collect();
    assert_eq!(history, restored);
    let queues = ["root.tq1", "root.tq2", "root.lq", "root.dash"];
    assert_eq!(decided, queues.map(|q| (7_500, q.to_string())));
    after.unregister_queue("dash", ALICE).unwrap();
    // Without apps (none were adopted) the deleted queue is freed at once.
    assert!(after.state().queue_by_name("root.dash").is_none());

    // Heartbeats go on with the restored burst: the LQ's app is back and its burst is still the
    // first one, not a new one.
    after.add_app(2, "lq", "v").unwrap();
    after.update_asks(2, &[any_ask(1, 5, GB, 1)], &[], &[]).unwrap();
    let mut out = Vec::new();
    after.node_heartbeat(1, 8_000, &[], &mut out, 100).unwrap();
    let burst = view(&after, "root.lq").burst.unwrap();
    assert_eq!((burst.phase, burst.bursts_started), ("on", 1));
    assert!(burst.consumed[1] >= lq_view.burst.unwrap().consumed[1]);
    assert_eq!(class(&after, "root.lq"), "hard");
}

#[test]
fn restore_before_any_node_or_with_some_nodes_gives_the_same_classes() {
    let before = busy_bopf();
    let json = before.snapshot_json();
    for present in [0, 1, NODES] {
        let mut after = scheduler("bopf");
        add_nodes(&mut after, 0..present);
        let summary = after.restore_json(&json).unwrap();
        for q in &summary.queues {
            assert_eq!(q.class, class(&before, &q.name), "{} with {present} nodes up", q.name);
        }
        add_nodes(&mut after, present..NODES);
        for name in names(&before) {
            assert_eq!(view(&after, &name), view(&before, &name), "{name} with {present} nodes up");
        }
    }
}

/// NodeManagers re-register one by one after a restart: while the capacity is below the
/// restored one, admission waits for the grace, which starts with the first heartbeat.
#[test]
fn the_restore_grace_keeps_classes_while_nodes_re_register() {
    let before = busy_bopf();
    let json = before.snapshot_json();
    let now = before.state().now_ms;
    let mut after = scheduler("bopf");
    after.restore_json(&json).unwrap();
    add_nodes(&mut after, [0]);
    let mut out = Vec::new();
    // Past the usual re-admission interval: without the grace, one node (8 vcores) could not
    // carry the Hard LQ's 10-vcore rate.
    let first = now + 2 * READMISSION_INTERVAL_MS;
    after.node_heartbeat(0, first, &[], &mut out, 0).unwrap();
    for name in names(&before) {
        assert_eq!(class(&after, &name), class(&before, &name), "{name} during the grace");
    }
    after.node_heartbeat(0, first + RESTORE_GRACE_MS - 1, &[], &mut out, 0).unwrap();
    assert_eq!(class(&after, "root.lq"), "hard");
    // The grace is over and the cluster is still one node: admission runs at what there is.
    after.node_heartbeat(0, first + RESTORE_GRACE_MS, &[], &mut out, 0).unwrap();
    assert_ne!(class(&after, "root.lq"), "hard");

    // Once every node is back, the grace ends at once and nothing is re-admitted.
    let mut back = scheduler("bopf");
    back.restore_json(&json).unwrap();
    add_nodes(&mut back, [0]);
    back.node_heartbeat(0, first, &[], &mut out, 0).unwrap();
    add_nodes(&mut back, 1..NODES);
    back.node_heartbeat(1, first + 1, &[], &mut out, 0).unwrap();
    back.node_heartbeat(1, first + 2 * RESTORE_GRACE_MS, &[], &mut out, 0).unwrap();
    for name in names(&before) {
        assert_eq!(view(&back, &name).admission, view(&before, &name).admission, "{name}");
    }
}

/// A snapshot written before GPUs and FPGAs were dimensions (version 2, six amounts per vector)
/// restores into this build: an RM upgraded across that change keeps its queues' history and
/// bursts.
#[test]
fn a_six_dimension_version_2_snapshot_restores() {
    let before = busy_bopf();
    let mut doc: serde_json::Value = serde_json::from_str(&before.snapshot_json()).unwrap();
    fn six(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::Object(map) => {
                for (key, field) in map.iter_mut() {
                    match field {
                        serde_json::Value::Array(a)
                            if ["usage_integral", "consumed", "integral_at_start"].contains(&key.as_str()) =>
                        {
                            assert_eq!(a.len(), 8, "{key}");
                            a.truncate(6);
                        }
                        other => six(other),
                    }
                }
            }
            serde_json::Value::Array(a) => a.iter_mut().for_each(six),
            _ => {}
        }
    }
    six(&mut doc);
    doc["version"] = 2.into();
    let old = doc.to_string();
    assert!(old.contains("\"usage_integral\":[") && old.contains("\"consumed\":["));

    let mut after = scheduler("bopf");
    let summary = after.restore_json(&old).unwrap();
    add_nodes(&mut after, 0..NODES);
    assert!(summary.policy_restored && summary.warnings.is_empty(), "{:?}", summary.warnings);
    assert_eq!(names(&after), names(&before));
    for name in names(&before) {
        assert_eq!(view(&after, &name), view(&before, &name), "queue view of {name}");
        assert_eq!(long_term(&after, &name), long_term(&before, &name), "long-term share of {name}");
    }
    assert!(view(&after, "root.lq").burst.unwrap().consumed[1] > 0.0, "the burst's consumption is back");
}

#[test]
fn invalid_snapshots_are_refused_and_leave_the_instance_usable() {
    let good = busy_bopf().snapshot_json();
    let mut s = scheduler("bopf");
    let err = |s: &mut Scheduler, json: &str| s.restore_json(json).unwrap_err().to_string();
    assert!(err(&mut s, "not json").contains("not a JSON object"));
    assert!(err(&mut s, &good.replacen("\"version\":3", "\"version\":7", 1)).contains("'version' is 7"));
    assert!(err(&mut s, &good.replacen("\"now_ms\"", "\"now\"", 1)).contains("now"));
    let bad_xml = good.replacen("<type>lq</type>", "<type>xq</type>", 1);
    assert!(err(&mut s, &bad_xml).contains("runtime_queues[0].xml"), "{}", err(&mut s, &bad_xml));
    let bad_policy = good.replacen("\"admitted_capacity\"", "\"capacity\"", 1);
    assert!(err(&mut s, &bad_policy).contains("policy.state"), "{}", err(&mut s, &bad_policy));
    // The history's labels are the policies' own.
    let bad_class = good.replacen("\"class\":\"hard\"", "\"class\":\"gold\"", 1);
    assert!(
        err(&mut s, &bad_class).contains("'class' is 'gold', not one of hard, soft"),
        "{}",
        err(&mut s, &bad_class)
    );
    let bad_phase = good.replacen("\"burst_phase\":\"on\"", "\"burst_phase\":\"off\"", 1);
    assert!(err(&mut s, &bad_phase).contains("'burst_phase' is 'off'"), "{}", err(&mut s, &bad_phase));
    let bad_open = good.replacen("\"open_bursts\":[{\"burst\":0", "\"open_bursts\":[{\"burst\":9", 1);
    assert!(err(&mut s, &bad_open).contains("history.open_bursts[0].burst"), "{}", err(&mut s, &bad_open));
    // Nothing changed: no run-time queue, the clock unset; the instance schedules as usual and
    // still takes the good snapshot.
    assert!(s.state().queue_by_name("root.dash").is_none());
    assert_eq!(s.state().now_ms, 0);
    add_nodes(&mut s, [0]);
    s.add_app(1, "tq1", "u").unwrap();
    s.update_asks(1, &[any_ask(1, 2, GB, 1)], &[], &[]).unwrap();
    let mut out = Vec::new();
    assert_eq!(s.node_heartbeat(0, 1_000, &[], &mut out, 100).unwrap(), 2);
    // An instance with applications is not fresh.
    assert!(matches!(s.restore_json(&good), Err(CoreError::Conflict(m)) if m.contains("fresh instance")));
    s.remove_app(1).unwrap();
    s.restore_json(&good).unwrap();
    assert!(s.state().queue_by_name("root.dash").is_some());
}

#[test]
fn a_snapshot_of_another_policy_restores_all_but_the_policy_state() {
    let before = busy_bopf();
    let json = before.snapshot_json();
    let mut drf = scheduler("drf");
    let summary = drf.restore_json(&json).unwrap();
    assert!(!summary.policy_restored);
    assert!(summary.warnings.iter().any(|w| w.contains("'bopf'")), "{:?}", summary.warnings);
    add_nodes(&mut drf, 0..NODES);
    assert!(drf.state().queue_by_name("root.dash").is_some());
    assert_eq!(long_term(&drf, "root.tq1"), long_term(&before, "root.tq1"));

    // A queue the allocation file now defines is skipped, as a reload would.
    let xml = "<tidal><policy>drf</policy><queue name=\"tq1\"/><queue name=\"dash\"/><queue name=\"new\"/></tidal>";
    let mut shadow = Scheduler::from_xml(xml, Settings::default()).unwrap();
    let summary = shadow.restore_json(&drf.snapshot_json()).unwrap();
    assert!(summary.warnings.iter().any(|w| w.contains("'root.dash' skipped: the allocation file defines it")));
    assert!(summary.warnings.iter().any(|w| w.contains("unknown queue 'root.lq'")), "{:?}", summary.warnings);
    assert!(shadow.state().queue_by_name("root.dash").unwrap().config.owner.is_none());
    // A queue the snapshot does not know starts its history at the restored clock.
    let new = shadow.state().queue_by_name("root.new").unwrap();
    assert_eq!((new.created_ms, new.integrated_until_ms), (before.state().now_ms, before.state().now_ms));
    assert_eq!(shadow.state().queue_by_name("root.tq1").unwrap().created_ms, 1_000);
}
