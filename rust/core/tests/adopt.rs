//! Adopting containers that already run: booked exactly as a heartbeat books a new one, without
//! touching asks, and never refused for want of space.

mod common;

use common::{any_ask, GB};
use tidal_core::config::Settings;
use tidal_core::{CoreError, Decision, Resources, Scheduler};

fn scheduler() -> Scheduler {
    let xml = "<tidal><queue name=\"a\"/><queue name=\"b\"/></tidal>";
    Scheduler::from_xml(xml, Settings { max_assign_per_heartbeat: 100, ..Settings::default() }).unwrap()
}

fn heartbeat(s: &mut Scheduler, node: u32, now_ms: i64, max: usize) -> Vec<Decision> {
    let mut out = Vec::new();
    s.node_heartbeat(node, now_ms, &[], &mut out, max).unwrap();
    out
}

/// What booking a container changes, for app 1, its queue `root.a` and node 0.
fn booked(s: &Scheduler) -> impl PartialEq + std::fmt::Debug {
    let st = s.state();
    let node = st.node(0).unwrap();
    let app = st.app_by_key(1).unwrap();
    let q = st.queue_by_name("root.a").unwrap();
    let allocations: Vec<_> = {
        let mut v: Vec<_> = st.allocations.iter().map(|(id, a)| (*id, a.node, a.priority, a.resources)).collect();
        v.sort_by_key(|a| a.0);
        v
    };
    (
        (node.allocated, node.containers),
        (app.usage, app.running_containers, app.started),
        (q.usage, q.running_containers, q.apps_waiting_for_am, q.last_served, q.usage_integral_at(st.now_ms)),
        (q.pending_containers, q.pending_resources, st.next_allocation_id),
        allocations,
    )
}

#[test]
fn adopting_books_usage_exactly_as_a_heartbeat_does() {
    let container = Resources::new(2 * GB, 2);
    let mut placed = scheduler();
    placed.add_node(0, 100, 1, Resources::new(8 * GB, 8)).unwrap();
    placed.add_app(1, "a", "u").unwrap();
    placed.update_asks(1, &[any_ask(5, 2, 2 * GB, 2)], &[], &[]).unwrap();
    assert_eq!(heartbeat(&mut placed, 0, 1_000, 100).len(), 2);

    let mut adopted = scheduler();
    adopted.add_node(0, 100, 1, Resources::new(8 * GB, 8)).unwrap();
    adopted.add_app(1, "a", "u").unwrap();
    assert_eq!(adopted.state().queue_by_name("root.a").unwrap().apps_waiting_for_am, 1);
    heartbeat(&mut adopted, 0, 1_000, 100);
    let ids = [adopted.adopt(1, 0, 5, container).unwrap(), adopted.adopt(1, 0, 5, container).unwrap()];
    assert_eq!(ids, [1, 2]);
    assert!(adopted.state().allocations.values().all(|a| a.stage_task.is_none()));
    assert_eq!(booked(&adopted), booked(&placed));

    // Time passes: the usage integrals grow alike.
    heartbeat(&mut placed, 0, 9_000, 0);
    heartbeat(&mut adopted, 0, 9_000, 0);
    assert_eq!(booked(&adopted), booked(&placed));
    assert_eq!(
        adopted.state().queue_by_name("root.a").unwrap().usage_integral_at(9_000)[0],
        2.0 * 2.0 * 8_000.0 * GB as f64
    );

    // Released, an adopted container frees what it took.
    assert!(adopted.release(ids[0]));
    assert_eq!(adopted.state().node(0).unwrap().allocated, container);
    assert_eq!(adopted.free_on(0), Resources::new(6 * GB, 6));
}

#[test]
fn adopting_leaves_the_asks_alone() {
    let mut s = scheduler();
    s.add_node(0, 100, 1, Resources::new(8 * GB, 8)).unwrap();
    s.add_app(1, "a", "u").unwrap();
    s.update_asks(1, &[any_ask(5, 3, GB, 1)], &[], &[]).unwrap();
    s.adopt(1, 0, 5, Resources::new(GB, 1)).unwrap();
    let q = s.state().queue_by_name("root.a").unwrap();
    assert_eq!((q.pending_containers, q.running_containers, q.apps_waiting_for_am), (3, 1, 0));
    assert_eq!(heartbeat(&mut s, 0, 1_000, 100).len(), 3);
}

#[test]
fn a_heartbeat_after_adopting_respects_the_adopted_usage() {
    let mut s = scheduler();
    s.add_node(0, 100, 1, Resources::new(8 * GB, 8)).unwrap();
    s.add_app(1, "a", "u").unwrap();
    s.add_app(2, "b", "v").unwrap();
    for _ in 0..3 {
        s.adopt(1, 0, 5, Resources::new(GB, 1)).unwrap();
    }
    s.update_asks(1, &[any_ask(5, 10, GB, 1)], &[], &[]).unwrap();
    s.update_asks(2, &[any_ask(5, 10, GB, 1)], &[], &[]).unwrap();
    let out = heartbeat(&mut s, 0, 1_000, 100);
    // DRF: queue b catches up with a's three adopted containers before a gets another.
    assert_eq!(out.len(), 5, "the node's free space: 8 - 3 adopted");
    assert!(out[..3].iter().all(|d| d.app == 2), "{:?}", out.iter().map(|d| d.app).collect::<Vec<_>>());
}

#[test]
fn an_overcommitted_node_takes_adopted_containers_and_nothing_new() {
    let mut s = scheduler();
    s.add_node(0, 100, 1, Resources::new(8 * GB, 8)).unwrap();
    s.add_app(1, "a", "u").unwrap();
    let ids: Vec<u64> = (0..12).map(|_| s.adopt(1, 0, 5, Resources::new(GB, 1)).unwrap()).collect();
    assert_eq!(s.state().node(0).unwrap().allocated, Resources::new(12 * GB, 12));
    assert_eq!(s.free_on(0), Resources::ZERO);
    s.update_asks(1, &[any_ask(5, 4, GB, 1)], &[], &[]).unwrap();
    assert!(heartbeat(&mut s, 0, 1_000, 100).is_empty());
    // The node shrinks further; still no panic, still nothing placed.
    s.update_node_resource(0, Resources::new(4 * GB, 4)).unwrap();
    assert!(heartbeat(&mut s, 0, 2_000, 100).is_empty());
    // Once enough containers end, the node takes new ones again.
    let mut out = Vec::new();
    s.node_heartbeat(0, 3_000, &ids[..10], &mut out, 100).unwrap();
    assert_eq!(out.len(), 2);
}

#[test]
fn adopting_checks_everything_before_changing_anything() {
    let mut s = scheduler();
    s.add_node(0, 100, 1, Resources::new(8 * GB, 8)).unwrap();
    s.add_app(1, "a", "u").unwrap();
    let r = Resources::new(GB, 1);
    assert_eq!(s.adopt(9, 0, 5, r), Err(CoreError::UnknownApp(9)));
    assert_eq!(s.adopt(1, 3, 5, r), Err(CoreError::UnknownNode(3)));
    let e = s.adopt(1, 0, 5, Resources::new(-1, 1)).unwrap_err();
    assert!(matches!(&e, CoreError::InvalidInput(m) if m.contains("adopted container")), "{e}");
    assert!(s.adopt(1, 0, 5, Resources::new(1 << 41, 1)).is_err());
    assert!(s.state().allocations.is_empty());
    assert_eq!(s.state().next_allocation_id, 1);
    assert_eq!(s.state().node(0).unwrap().containers, 0);
    assert_eq!(s.state().queue_by_name("root.a").unwrap().apps_waiting_for_am, 1);
}

#[test]
fn adopted_ids_continue_above_a_restored_snapshot() {
    let mut old = scheduler();
    old.add_node(0, 100, 1, Resources::new(8 * GB, 8)).unwrap();
    old.add_app(1, "a", "u").unwrap();
    old.update_asks(1, &[any_ask(5, 4, GB, 1)], &[], &[]).unwrap();
    let placed = heartbeat(&mut old, 0, 1_000, 100);
    let json = old.snapshot_json();

    let mut new = scheduler();
    new.restore_json(&json).unwrap();
    new.add_node(0, 100, 1, Resources::new(8 * GB, 8)).unwrap();
    new.add_app(1, "a", "u").unwrap();
    for d in &placed {
        let id = new.adopt(1, 0, d.priority, d.resources).unwrap();
        assert!(id > placed.iter().map(|d| d.allocation_id).max().unwrap(), "id {id} reused");
    }
    let (o, n) = (old.state().queue_by_name("root.a").unwrap(), new.state().queue_by_name("root.a").unwrap());
    assert_eq!((o.usage, o.running_containers), (n.usage, n.running_containers));
    assert_eq!(old.state().node(0).unwrap().allocated, new.state().node(0).unwrap().allocated);
}
