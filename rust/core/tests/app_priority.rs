//! YARN's application priority inside a queue: higher-priority apps start first, AMs and tasks
//! alike, then apps in submission order; a changed priority takes effect at the next heartbeat.

mod common;

use common::{any_ask, GB};
use tidal_core::config::Settings;
use tidal_core::{CoreError, Resources, Scheduler};

/// One FIFO queue, two nodes of four 1 GB slots, and apps 1 and 2 (submitted in that order),
/// each asking for eight 1 GB containers.
fn two_apps() -> Scheduler {
    let settings = Settings { max_assign_per_heartbeat: 100, ..Settings::default() };
    let mut s = Scheduler::from_xml("<tidal><queue name=\"a\"/></tidal>", settings).unwrap();
    for node in 0..2 {
        s.add_node(node, 100 + node, 1, Resources::new(4 * GB, 4)).unwrap();
    }
    for app in [1, 2] {
        s.add_app(app, "a", "u").unwrap();
        s.update_asks(app, &[any_ask(1, 8, GB, 1)], &[], &[]).unwrap();
    }
    s
}

/// The apps the node's heartbeat starts containers for, in order.
fn heartbeat(s: &mut Scheduler, node: u32, now_ms: i64) -> Vec<u64> {
    let mut out = Vec::new();
    s.node_heartbeat(node, now_ms, &[], &mut out, 100).unwrap();
    out.iter().map(|d| d.app).collect()
}

#[test]
fn without_priorities_the_first_submitted_app_goes_first() {
    let mut s = two_apps();
    // Both AMs, then the first app's tasks.
    assert_eq!(heartbeat(&mut s, 0, 1_000), vec![1, 2, 1, 1]);
}

#[test]
fn a_higher_priority_app_starts_first_though_submitted_later() {
    let mut s = two_apps();
    s.set_app_priority(2, 5).unwrap();
    assert_eq!(heartbeat(&mut s, 0, 1_000), vec![2, 1, 2, 2]);
}

#[test]
fn a_changed_priority_reorders_the_next_heartbeat() {
    let mut s = two_apps();
    assert_eq!(heartbeat(&mut s, 0, 1_000), vec![1, 2, 1, 1]);
    s.set_app_priority(1, -1).unwrap();
    assert_eq!(heartbeat(&mut s, 1, 2_000), vec![2, 2, 2, 2]);
    assert_eq!(s.set_app_priority(9, 1), Err(CoreError::UnknownApp(9)));
}
