//! Containers placed outside the heartbeat (Hadoop 3's placement-constraint processor picks the
//! node): taken only where the node and the queue's limits have room, booked as a heartbeat books
//! one, and counted against the queue's share.

mod common;

use common::{any_ask, GB};
use tidal_core::config::Settings;
use tidal_core::{CoreError, Decision, Resources, Scheduler};

fn scheduler(queues: &str) -> Scheduler {
    let xml = format!("<tidal>{queues}</tidal>");
    Scheduler::from_xml(&xml, Settings { max_assign_per_heartbeat: 100, ..Settings::default() }).unwrap()
}

fn heartbeat(s: &mut Scheduler, node: u32, now_ms: i64) -> Vec<Decision> {
    let mut out = Vec::new();
    s.node_heartbeat(node, now_ms, &[], &mut out, 100).unwrap();
    out
}

#[test]
fn a_placed_container_is_taken_only_where_the_node_has_room() {
    let mut s = scheduler(r#"<queue name="a"/><queue name="b"/>"#);
    s.add_node(0, 100, 1, Resources::new(4 * GB, 4)).unwrap();
    s.add_node(1, 101, 1, Resources::new(4 * GB, 4)).unwrap();
    s.add_app(1, "a", "u").unwrap();
    let three = Resources::new(3 * GB, 3);
    assert_eq!(s.place(1, 0, 1, three).unwrap(), Some(1));
    assert_eq!(s.place(1, 0, 1, three).unwrap(), None, "one GB and one vcore left on node 0");
    assert_eq!(s.place(1, 1, 1, three).unwrap(), Some(2));
    let st = s.state();
    assert_eq!(st.node(0).unwrap().allocated, three);
    assert_eq!(st.app_by_key(1).unwrap().usage, three + three);
    let q = st.queue_by_name("root.a").unwrap();
    assert_eq!((q.usage, q.running_containers, q.pending_containers), (three + three, 2, 0));
    assert_eq!(s.free_on(0), Resources::new(GB, 1));
    // Released, it frees what it took.
    assert!(s.release(1));
    assert_eq!(s.place(1, 0, 1, three).unwrap(), Some(3));
}

#[test]
fn a_placed_container_leaves_the_asks_alone_and_counts_against_the_queue() {
    let mut s = scheduler(r#"<queue name="a"/><queue name="b"/>"#);
    s.add_node(0, 100, 1, Resources::new(8 * GB, 8)).unwrap();
    s.add_app(1, "a", "u").unwrap();
    s.add_app(2, "b", "v").unwrap();
    s.update_asks(1, &[any_ask(5, 10, GB, 1)], &[], &[]).unwrap();
    s.update_asks(2, &[any_ask(5, 10, GB, 1)], &[], &[]).unwrap();
    for _ in 0..3 {
        assert!(s.place(1, 0, 7, Resources::new(GB, 1)).unwrap().is_some());
    }
    assert_eq!(s.state().queue_by_name("root.a").unwrap().pending_containers, 10);
    let out = heartbeat(&mut s, 0, 1_000);
    assert_eq!(out.len(), 5, "the node's free space: 8 - 3 placed");
    // DRF: queue b catches up with a's three placed containers before a gets another.
    assert!(out[..3].iter().all(|d| d.app == 2), "{:?}", out.iter().map(|d| d.app).collect::<Vec<_>>());
}

#[test]
fn a_placed_container_stays_within_the_queues_max_resources() {
    let mut s = scheduler(r#"<queue name="a"><maxResources>2048 mb, 8 vcores</maxResources></queue>"#);
    s.add_node(0, 100, 1, Resources::new(8 * GB, 8)).unwrap();
    s.add_app(1, "a", "u").unwrap();
    assert!(s.place(1, 0, 1, Resources::new(GB, 1)).unwrap().is_some());
    assert!(s.place(1, 0, 1, Resources::new(GB, 1)).unwrap().is_some());
    assert_eq!(s.place(1, 0, 1, Resources::new(GB, 1)).unwrap(), None, "the queue's 2 GB are used");
    assert_eq!(s.state().queue_by_name("root.a").unwrap().running_containers, 2);
}

#[test]
fn placing_checks_everything_before_changing_anything() {
    let mut s = scheduler(r#"<queue name="a"/>"#);
    s.add_node(0, 100, 1, Resources::new(8 * GB, 8)).unwrap();
    s.add_app(1, "a", "u").unwrap();
    let r = Resources::new(GB, 1);
    assert_eq!(s.place(9, 0, 1, r), Err(CoreError::UnknownApp(9)));
    assert_eq!(s.place(1, 3, 1, r), Err(CoreError::UnknownNode(3)));
    let e = s.place(1, 0, 1, Resources::new(-1, 1)).unwrap_err();
    assert!(matches!(&e, CoreError::InvalidInput(m) if m.contains("placed container")), "{e}");
    assert!(s.state().allocations.is_empty());
    assert_eq!(s.state().next_allocation_id, 1);
}
