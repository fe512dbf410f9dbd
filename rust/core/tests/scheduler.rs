//! Behaviour of the scheduler through its public API, as the RM shim and the simulator use it.

mod common;

use common::{any_ask, GB};
use proptest::prelude::*;
use tidal_core::config::Settings;
use tidal_core::request::Ask;
use tidal_core::state::ClusterState;
use tidal_core::{CoreError, Decision, Locality, ResourceKind, Resources, Scheduler};

fn scheduler(queues: &[(&str, f64)]) -> Scheduler {
    let body: String =
        queues.iter().map(|(n, w)| format!("<queue name=\"{n}\"><weight>{w}</weight></queue>")).collect();
    Scheduler::from_xml(&format!("<tidal>{body}</tidal>"), Settings::default()).unwrap()
}

/// Adds `n` nodes of 8 GB / 8 vcores; node i has host location 100+i, all on rack 1.
fn add_nodes(s: &mut Scheduler, n: u32) {
    for i in 0..n {
        s.add_node(i, 100 + i, 1, Resources::new(8 * GB, 8)).unwrap();
    }
}

fn heartbeat(s: &mut Scheduler, node: u32, completed: &[u64]) -> Vec<Decision> {
    let mut out = Vec::new();
    s.node_heartbeat(node, 0, completed, &mut out, usize::MAX).unwrap();
    out
}

fn queue_share(state: &ClusterState, name: &str) -> f64 {
    state.queue_by_name(name).unwrap().usage.dominant_share(&state.capacity)
}

#[test]
fn weighted_drf_splits_a_saturated_cluster_by_weight() {
    let mut s = scheduler(&[("a", 1.0), ("b", 2.0)]);
    add_nodes(&mut s, 6);
    s.add_app(1, "a", "alice").unwrap();
    s.add_app(2, "root.b", "bob").unwrap();
    s.update_asks(1, &[any_ask(1, 1000, GB, 1)], &[], &[]).unwrap();
    s.update_asks(2, &[any_ask(1, 1000, GB, 1)], &[], &[]).unwrap();
    for node in 0..6 {
        heartbeat(&mut s, node, &[]);
    }
    let st = s.state();
    assert_eq!(st.allocations.len(), 48, "cluster full: 6 nodes x 8 containers");
    assert!((queue_share(st, "root.a") - 1.0 / 3.0).abs() <= 1.0 / 48.0 + 1e-9);
    assert!((queue_share(st, "root.b") - 2.0 / 3.0).abs() <= 1.0 / 48.0 + 1e-9);
}

#[test]
fn drf_equalises_dominant_shares_of_different_resources() {
    // Queue a is memory-heavy, queue b CPU-heavy: DRF equalises each one's dominant share.
    let mut s = scheduler(&[("a", 1.0), ("b", 1.0)]);
    add_nodes(&mut s, 4); // 32 GB, 32 vcores in all
    s.add_app(1, "a", "u").unwrap();
    s.add_app(2, "b", "u").unwrap();
    s.update_asks(1, &[any_ask(1, 100, 4 * GB, 1)], &[], &[]).unwrap();
    s.update_asks(2, &[any_ask(1, 100, GB, 4)], &[], &[]).unwrap();
    for node in 0..4 {
        heartbeat(&mut s, node, &[]);
    }
    let st = s.state();
    let (a, b) = (queue_share(st, "root.a"), queue_share(st, "root.b"));
    assert!((a - b).abs() <= 4.0 / 32.0 + 1e-9, "a={a} b={b}");
    assert!(a >= 0.375 && b >= 0.375, "cluster left idle: a={a} b={b}");
}

#[test]
fn a_waiting_application_master_goes_before_older_tasks() {
    let mut s = scheduler(&[("a", 1.0)]);
    add_nodes(&mut s, 1);
    s.add_app(1, "a", "u").unwrap();
    s.update_asks(1, &[any_ask(0, 1, GB, 1)], &[], &[]).unwrap();
    assert_eq!(heartbeat(&mut s, 0, &[]).len(), 1);
    s.update_asks(1, &[any_ask(20, 50, GB, 1)], &[], &[]).unwrap();
    s.add_app(2, "a", "u").unwrap();
    s.update_asks(2, &[any_ask(0, 1, GB, 1)], &[], &[]).unwrap();
    let d = heartbeat(&mut s, 0, &[]);
    assert_eq!(d[0].app, 2, "app 2's AM comes first");
    assert!(d[1..].iter().all(|d| d.app == 1), "then FIFO: app 1's tasks");
    assert_eq!(d.len(), 7, "node has 8 slots, one was taken before");
}

#[test]
fn node_local_requests_land_node_local_and_completion_frees_space() {
    let mut s = scheduler(&[("a", 1.0)]);
    add_nodes(&mut s, 2);
    s.add_app(1, "a", "u").unwrap();
    // Node 1 is host 101 on rack 1; YARN's AM client asks for the rack along with the host.
    let local = Ask { location: 101, ..any_ask(5, 1, GB, 1) };
    let rack = Ask { location: 1, ..any_ask(5, 1, GB, 1) };
    s.update_asks(1, &[local, rack, any_ask(5, 1, GB, 1)], &[], &[]).unwrap();
    let d = heartbeat(&mut s, 1, &[]);
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].locality, Locality::NodeLocal);
    assert_eq!(s.state().node(1).unwrap().allocated, Resources::new(GB, 1));
    heartbeat(&mut s, 1, &[d[0].allocation_id]);
    assert_eq!(s.state().node(1).unwrap().allocated, Resources::ZERO);
    assert_eq!(s.state().queue_by_name("root.a").unwrap().usage, Resources::ZERO);
    // A second report of the same completion is harmless.
    heartbeat(&mut s, 1, &[d[0].allocation_id]);
    assert!(!s.release(d[0].allocation_id));
}

#[test]
fn an_apps_releases_are_checked_whole_before_any_is_freed() {
    let mut s = scheduler(&[("a", 1.0)]);
    add_nodes(&mut s, 1);
    s.add_app(1, "a", "u").unwrap();
    s.add_app(2, "a", "u").unwrap();
    s.update_asks(1, &[any_ask(1, 2, GB, 1)], &[], &[]).unwrap();
    s.update_asks(2, &[any_ask(1, 1, GB, 1)], &[], &[]).unwrap();
    let d = heartbeat(&mut s, 0, &[]);
    let of = |app| d.iter().filter(|d| d.app == app).map(|d| d.allocation_id).collect::<Vec<_>>();
    let (mine, theirs) = (of(1), of(2));
    assert_eq!((mine.len(), theirs.len()), (2, 1));

    // Another app's allocation in the middle of the list: refused, named, and nothing freed.
    let e = s.release_for_app(1, &[mine[0], theirs[0], mine[1]]).unwrap_err();
    assert!(matches!(e, CoreError::InvalidRequest { app: 1, .. }), "{e:?}");
    assert!(e.to_string().contains(&format!("allocation {}", theirs[0])), "{e}");
    assert_eq!(s.state().allocations.len(), 3);
    assert_eq!(s.release_for_app(9, &[mine[0]]), Err(CoreError::UnknownApp(9)));
    assert_eq!(s.state().allocations.len(), 3);

    // Ids of no live allocation are skipped, as a container's end may be reported twice.
    assert_eq!(s.release_for_app(1, &[mine[0], 1 << 39, mine[1], mine[0]]), Ok(2));
    assert_eq!(s.state().allocations.len(), 1);
    assert_eq!(s.state().queue_by_name("root.a").unwrap().usage, Resources::new(GB, 1));
}

#[test]
fn max_assign_per_heartbeat_caps_decisions() {
    let mut s = Scheduler::from_xml(
        "<tidal><queue name=\"a\"/></tidal>",
        Settings { max_assign_per_heartbeat: 3, ..Settings::default() },
    )
    .unwrap();
    add_nodes(&mut s, 1);
    s.add_app(1, "a", "u").unwrap();
    s.update_asks(1, &[any_ask(1, 100, GB, 1)], &[], &[]).unwrap();
    assert_eq!(heartbeat(&mut s, 0, &[]).len(), 3);
    let mut out = Vec::new();
    assert_eq!(s.node_heartbeat(0, 0, &[], &mut out, 2).unwrap(), 2);
}

#[test]
fn bad_events_are_refused_and_change_nothing() {
    let mut s = scheduler(&[("a", 1.0)]);
    add_nodes(&mut s, 1);
    let mut out = Vec::new();
    assert_eq!(s.node_heartbeat(9, 0, &[], &mut out, 10), Err(CoreError::UnknownNode(9)));
    assert_eq!(s.add_node(0, 1, 1, Resources::new(GB, 1)), Err(CoreError::DuplicateNode(0)));
    assert!(s.add_node(5, 1, 1, Resources::new(-1, 1)).is_err());
    assert!(s.add_node(5, 1, 1, Resources::new(1 << 50, 1)).is_err());
    assert_eq!(s.remove_node(7), Err(CoreError::UnknownNode(7)));
    let err = s.add_app(1, "nope", "u").unwrap_err();
    assert_eq!(err.to_string(), "unknown queue 'root.nope'");
    assert_eq!(s.update_asks(3, &[], &[], &[]), Err(CoreError::UnknownApp(3)));
    assert_eq!(s.remove_app(3), Err(CoreError::UnknownApp(3)));
    s.add_app(1, "a", "u").unwrap();
    assert_eq!(s.add_app(1, "a", "u").unwrap_err(), CoreError::DuplicateApp(1));
    let too_big = any_ask(1, 1, 1 << 20, 1);
    assert!(s.update_asks(1, &[any_ask(1, 2, GB, 1), too_big], &[], &[]).is_err());
    let st = s.state();
    assert_eq!(st.node_count, 1);
    assert_eq!(st.capacity, Resources::new(8 * GB, 8));
    assert_eq!(st.queue_by_name("root.a").unwrap().pending_containers, 0);
}

#[test]
fn removing_a_node_or_app_frees_its_allocations() {
    let mut s = scheduler(&[("a", 1.0)]);
    add_nodes(&mut s, 2);
    s.add_app(1, "a", "u").unwrap();
    s.add_app(2, "a", "u").unwrap();
    s.update_asks(1, &[any_ask(1, 4, GB, 1)], &[], &[]).unwrap();
    s.update_asks(2, &[any_ask(1, 20, GB, 1)], &[], &[]).unwrap();
    heartbeat(&mut s, 0, &[]);
    heartbeat(&mut s, 1, &[]);
    assert_eq!(s.remove_node(0).unwrap(), 8);
    assert_eq!(s.state().capacity, Resources::new(8 * GB, 8));
    s.remove_app(2).unwrap();
    let st = s.state();
    let q = st.queue_by_name("root.a").unwrap();
    let live: Resources = st.allocations.values().fold(Resources::ZERO, |acc, a| acc + a.resources);
    assert_eq!(q.usage, live);
    assert_eq!(q.pending_containers, st.app_by_key(1).unwrap().asks.pending_containers());
    assert_eq!(st.node(1).unwrap().allocated, live);
}

#[test]
fn removing_an_app_after_releases_out_of_order_frees_exactly_its_containers() {
    let mut s = scheduler(&[("a", 1.0)]);
    add_nodes(&mut s, 2);
    s.add_app(1, "a", "u").unwrap();
    s.add_app(2, "a", "u").unwrap();
    s.update_asks(1, &[any_ask(1, 6, GB, 1)], &[], &[]).unwrap();
    s.update_asks(2, &[any_ask(1, 6, GB, 1)], &[], &[]).unwrap();
    let placed: Vec<Decision> = heartbeat(&mut s, 0, &[]).into_iter().chain(heartbeat(&mut s, 1, &[])).collect();
    let ids = |app: u64| -> Vec<u64> { placed.iter().filter(|d| d.app == app).map(|d| d.allocation_id).collect() };
    let (first, second) = (ids(1), ids(2));
    assert!(first.len() >= 4 && second.len() >= 4, "both apps run containers: {first:?} {second:?}");
    // Free app 1's containers from the middle and the front, and one of app 2's.
    for id in [first[2], first[0], second[1]] {
        assert!(s.release(id));
    }
    s.remove_app(1).unwrap();
    let st = s.state();
    let mut live: Vec<u64> = st.allocations.keys().copied().collect();
    live.sort_unstable();
    let mut kept: Vec<u64> = second.iter().copied().filter(|&id| id != second[1]).collect();
    kept.sort_unstable();
    assert_eq!(live, kept, "app 2's containers are all that run");
    let used: Resources = st.allocations.values().fold(Resources::ZERO, |acc, a| acc + a.resources);
    assert_eq!(st.node(0).unwrap().allocated + st.node(1).unwrap().allocated, used);
    assert_eq!(st.queue_by_name("root.a").unwrap().usage, used);
    assert_eq!(st.app_by_key(2).unwrap().running_containers as usize, kept.len());
}

#[test]
fn reconfiguration_updates_weights_and_retires_dropped_queues() {
    let mut s = scheduler(&[("a", 1.0), ("b", 1.0)]);
    s.add_app(1, "b", "u").unwrap();
    let file = tidal_core::config::parse_queue_file(
        "<tidal><queue name=\"a\"><weight>3</weight></queue><queue name=\"c\"/></tidal>",
    )
    .unwrap();
    s.reconfigure(file, Settings::default()).unwrap();
    let st = s.state();
    assert_eq!(st.queue_by_name("root.a").unwrap().config.weight, 3.0);
    assert!(st.queue_by_name("root.b").unwrap().retired);
    assert!(s.add_app(2, "b", "u").unwrap_err().to_string().contains("takes no new applications"));
    s.add_app(3, "c", "u").unwrap();
    // The running app in the retired queue is still served.
    add_nodes(&mut s, 1);
    s.update_asks(1, &[any_ask(1, 1, GB, 1)], &[], &[]).unwrap();
    assert_eq!(heartbeat(&mut s, 0, &[]).len(), 1);
    // Invalid settings leave everything as it was.
    let bad = Settings { max_assign_per_heartbeat: 0, ..Settings::default() };
    let file = s.queue_file().clone();
    assert!(s.reconfigure(file, bad).is_err());
    assert_eq!(s.settings().max_assign_per_heartbeat, 10);
}

/// Operations a fuzzed event stream is made of, with odd orders and unknown ids on purpose.
#[derive(Debug, Clone)]
enum Op {
    AddNode(u32, i64, i64),
    RemoveNode(u32),
    ResizeNode(u32, i64, i64),
    AddApp(u64, bool),
    RemoveApp(u64),
    Ask(u64, i32, i64, i64, i64),
    Heartbeat(u32, usize),
    Release(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0u32..6, 1i64..16, 1i64..16).prop_map(|(n, m, c)| Op::AddNode(n, m * GB, c)),
        (0u32..6).prop_map(Op::RemoveNode),
        (0u32..6, 1i64..16, 1i64..16).prop_map(|(n, m, c)| Op::ResizeNode(n, m * GB, c)),
        (0u64..8, any::<bool>()).prop_map(|(a, q)| Op::AddApp(a, q)),
        (0u64..8).prop_map(Op::RemoveApp),
        (0u64..8, 0i32..4, 0i64..20, 1i64..9000, 0i64..9).prop_map(|(a, p, n, m, c)| Op::Ask(a, p, n, m, c)),
        (0u32..6, 0usize..3).prop_map(|(n, k)| Op::Heartbeat(n, k)),
        (0usize..64).prop_map(Op::Release),
    ]
}

fn check_invariants(st: &ClusterState) {
    let mut per_node = std::collections::HashMap::<u32, Resources>::new();
    let mut per_queue = vec![Resources::ZERO; st.queues.len()];
    for a in st.allocations.values() {
        *per_node.entry(a.node).or_default() += a.resources;
        per_queue[st.app(a.app).queue] += a.resources;
    }
    let mut capacity = Resources::ZERO;
    for n in st.nodes.iter().flatten() {
        assert_eq!(n.allocated, per_node.get(&n.id).copied().unwrap_or_default(), "node {} bookkeeping", n.id);
        capacity += n.capacity;
    }
    assert_eq!(capacity, st.capacity);
    for (i, q) in st.queues.iter().enumerate() {
        assert_eq!(q.usage, per_queue[i], "queue {} usage", q.name());
        let pending: u64 = q.apps.iter().map(|&s| st.app(s).asks.pending_containers()).sum();
        assert_eq!(q.pending_containers, pending, "queue {} pending", q.name());
        let waiting = q.apps.iter().filter(|&&s| !st.app(s).started).count() as u32;
        assert_eq!(q.apps_waiting_for_am, waiting);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Any stream of events, valid or not, keeps the bookkeeping consistent and never places
    /// more on a node than it had free when the container was placed.
    #[test]
    fn arbitrary_event_streams_keep_state_consistent(ops in prop::collection::vec(op(), 1..120)) {
        let mut s = scheduler(&[("a", 1.0), ("b", 3.0)]);
        let mut live: Vec<u64> = Vec::new();
        for op in ops {
            match op {
                Op::AddNode(n, m, c) => { let _ = s.add_node(n, 100 + n, 1, Resources::new(m, c)); }
                Op::RemoveNode(n) => { let _ = s.remove_node(n); }
                Op::ResizeNode(n, m, c) => { let _ = s.update_node_resource(n, Resources::new(m, c)); }
                Op::AddApp(a, q) => { let _ = s.add_app(a, if q { "a" } else { "b" }, "u"); }
                Op::RemoveApp(a) => { let _ = s.remove_app(a); }
                Op::Ask(a, p, n, m, c) => { let _ = s.update_asks(a, &[any_ask(p, n, m, c)], &[], &[]); }
                Op::Heartbeat(n, k) => {
                    let done: Vec<u64> = live.iter().take(k).copied().collect();
                    live.retain(|id| !done.contains(id));
                    let free_before = s.state().node(n).map(|_| s.free_on(n));
                    let mut out = Vec::new();
                    if s.node_heartbeat(n, 0, &done, &mut out, 100).is_ok() {
                        // Space freed by `done` counts as free too.
                        let used: Resources = out.iter().fold(Resources::ZERO, |acc, d| acc + d.resources);
                        let node = s.state().node(n).unwrap();
                        prop_assert!(used.fits_in(&(free_before.unwrap() + node.capacity)));
                        prop_assert!(node.allocated.fits_in(&node.capacity) || out.is_empty());
                        live.extend(out.iter().map(|d| d.allocation_id));
                    }
                }
                Op::Release(i) => {
                    if let Some(&id) = live.get(i) { s.release(id); live.remove(i); }
                }
            }
            check_invariants(s.state());
        }
    }

    /// Every single offer goes to the queue with the smaller weighted dominant share, unless
    /// that queue's container does not fit on the node (weighted DRF's choice rule).
    #[test]
    fn each_offer_goes_to_the_lowest_weighted_share_that_fits(
        weight_b in 1u32..4, nodes in 1u32..12, mem_a in 1i64..4, cpu_b in 1i64..4,
    ) {
        let mut s = scheduler(&[("a", 1.0), ("b", weight_b as f64)]);
        add_nodes(&mut s, nodes);
        s.add_app(1, "a", "u").unwrap();
        s.add_app(2, "b", "u").unwrap();
        let (ask_a, ask_b) = (Resources::new(mem_a * GB, 1), Resources::new(GB, cpu_b));
        s.update_asks(1, &[any_ask(1, 10_000, mem_a * GB, 1)], &[], &[]).unwrap();
        s.update_asks(2, &[any_ask(1, 10_000, GB, cpu_b)], &[], &[]).unwrap();
        let mut offers = 0;
        for n in 0..nodes {
            loop {
                let st = s.state();
                let a = queue_share(st, "root.a");
                let b = queue_share(st, "root.b") / weight_b as f64;
                let free = s.free_on(n);
                let mut out = Vec::new();
                if s.node_heartbeat(n, 0, &[], &mut out, 1).unwrap() == 0 {
                    prop_assert!(!ask_a.fits_in(&free) && !ask_b.fits_in(&free));
                    break;
                }
                offers += 1;
                let (chosen_share, other_share, other_ask) =
                    if out[0].app == 1 { (a, b, ask_b) } else { (b, a, ask_a) };
                prop_assert!(chosen_share <= other_share || !other_ask.fits_in(&free),
                    "offer {offers} went to app {} with share {chosen_share} > {other_share}", out[0].app);
            }
        }
        prop_assert!(offers > 0);
    }
}

/// The example queue file shipped for operators must stay valid.
#[test]
fn shipped_example_queue_file_parses() {
    let xml = include_str!("../../../hadoop-conf/tidal-queues.xml");
    let file = tidal_core::config::parse_queue_file(xml).unwrap();
    assert!(file.queues.len() >= 2);
    // Its ACL examples read as their comments say.
    let acl = |a: &Option<tidal_core::acl::Acl>| a.as_ref().map(ToString::to_string);
    assert_eq!(acl(&file.root_acls.submit_apps).as_deref(), Some(" "));
    assert_eq!(acl(&file.root_acls.administer_apps).as_deref(), Some("yarn hadoop"));
    let interactive = file.queues.iter().find(|q| q.name == "root.interactive").unwrap();
    assert_eq!(acl(&interactive.acls.submit_apps).as_deref(), Some(" analysts"));
}

/// Two queues that tie on every offer take turns: a queue that keeps dropping back to a tie
/// (its containers finish one at a time) must not win every freed slot by its position.
#[test]
fn tied_queues_take_turns() {
    let mut s = scheduler(&[("a", 1.0), ("b", 1.0), ("c", 1.0)]);
    s.add_node(0, 100, 1, Resources::new(8 * GB, 8)).unwrap();
    for (app, queue) in [(1, "a"), (2, "b"), (3, "c")] {
        s.add_app(app, queue, "u").unwrap();
        s.update_asks(app, &[any_ask(1, 1000, GB, 1)], &[], &[]).unwrap();
    }
    // Fill the node: a, b and c get 3, 3 and 2 containers in turn.
    let first = heartbeat(&mut s, 0, &[]);
    let held = |app: u64| first.iter().filter(|d| d.app == app).map(|d| d.allocation_id).collect::<Vec<_>>();
    let (a, b) = (held(1), held(2));
    // a's and b's containers finish one at a time; each freed slot ties c (2) with the queue
    // that just lost one (2). The tie must alternate, so c gets some of the slots.
    let mut to_c = 0;
    for k in 0..2 {
        for done in [a[k], b[k]] {
            let mut out = Vec::new();
            s.node_heartbeat(0, 0, &[done], &mut out, 1).unwrap();
            to_c += out.iter().filter(|d| d.app == 3).count();
        }
    }
    assert!(to_c >= 1, "queue c never won a tie");
}

#[test]
fn sparse_node_ids_take_one_slot_each() {
    const MAX_NODE_ID: u32 = u32::MAX;
    let mut s = Scheduler::from_xml("<tidal><queue name=\"a\"/></tidal>", Settings::default()).unwrap();
    let cap = Resources::new(8 * GB, 8);
    s.add_node(MAX_NODE_ID, 1, 2, cap).unwrap();
    s.add_node(7, 3, 2, cap).unwrap();
    assert_eq!(s.state().nodes.len(), 2, "a node id must not size the node table");
    s.remove_node(MAX_NODE_ID).unwrap();
    s.add_node(1 << 21, 4, 2, cap).unwrap();
    assert_eq!(s.state().nodes.len(), 2, "a removed node's slot is reused");
    assert!(s.state().node(MAX_NODE_ID).is_none());
    assert_eq!(s.state().node(1 << 21).unwrap().host, 4);
    assert!(matches!(s.remove_node(MAX_NODE_ID), Err(CoreError::UnknownNode(_))));
    s.add_app(1, "a", "u").unwrap();
    s.update_asks(1, &[any_ask(1, 1, GB, 1)], &[], &[]).unwrap();
    let mut out = Vec::new();
    assert_eq!(s.node_heartbeat(1 << 21, 1_000, &[], &mut out, 4).unwrap(), 1);
    assert_eq!(s.free_on(1 << 21), Resources::new(7 * GB, 7));
}

#[test]
fn allocation_limits_that_would_overflow_normalising_are_refused() {
    let xml = "<tidal><queue name=\"a\"/></tidal>";
    let over = Settings {
        min_allocation: Resources::new((1 << 62) + 1, 1),
        max_allocation: Resources::new(i64::MAX, 32),
        ..Settings::default()
    };
    let e = Scheduler::from_xml(xml, over).unwrap_err();
    assert_eq!(e.kind(), tidal_core::error::ErrorKind::Invalid);
    assert!(e.to_string().contains("must not exceed"), "{e}");
    let mut s = Scheduler::from_xml(xml, Settings::default()).unwrap();
    let file = tidal_core::config::parse_queue_file(xml).unwrap();
    assert!(s.reconfigure(file, over).is_err());
    assert_eq!(s.settings(), &Settings::default());
}

#[test]
fn locations_in_use_are_those_of_nodes_asks_and_blacklists() {
    use tidal_core::ids::ANY;
    let mut s = Scheduler::from_xml("<tidal><queue name=\"a\"/></tidal>", Settings::default()).unwrap();
    s.add_node(0, 10, 20, Resources::new(8 * GB, 8)).unwrap();
    s.add_app(1, "a", "u").unwrap();
    let at = |location, n| Ask {
        priority: 1,
        location,
        num_containers: n,
        relax_locality: true,
        capability: Resources::new(GB, 1),
    };
    s.update_asks(1, &[at(10, 1), at(30, 1), at(20, 1), at(ANY, 1)], &[40], &[]).unwrap();
    assert_eq!(s.locations_in_use(), vec![10, 20, 30, 40]);
    // Withdrawn (count 0) and unblacklisted names are no longer referred to.
    s.update_asks(1, &[at(30, 0)], &[], &[40]).unwrap();
    assert_eq!(s.locations_in_use(), vec![10, 20]);
    // A node-local container uses up the host and rack entries; the node keeps its names.
    let mut out = Vec::new();
    assert_eq!(s.node_heartbeat(0, 1_000, &[], &mut out, 1).unwrap(), 1);
    s.remove_node(0).unwrap();
    assert!(s.locations_in_use().is_empty(), "{:?}", s.locations_in_use());
}

/// A large ask behind small ones that keep taking the space as it frees: two queues on one full
/// 8 GB node, queue `a` (first in line) wants a 6 GB container, queue `b` keeps asking for 1 GB
/// ones. Returns how many of `b`'s containers started and whether `a`'s large one did,
/// after `rounds` heartbeats in which one of `b`'s containers ends each.
fn large_ask_behind_small_ones(reserve: bool, rounds: usize) -> (usize, bool, Vec<Decision>) {
    let settings = Settings { reserve_containers: reserve, ..Settings::default() };
    let mut s = Scheduler::from_xml(
        "<tidal><queue name=\"a\"><weight>100</weight></queue><queue name=\"b\"/></tidal>",
        settings,
    )
    .unwrap();
    add_nodes(&mut s, 1);
    s.add_app(1, "a", "u").unwrap();
    s.update_asks(1, &[any_ask(0, 1, GB, 1)], &[], &[]).unwrap();
    s.add_app(2, "b", "u").unwrap();
    s.update_asks(2, &[any_ask(0, 1, GB, 1), any_ask(1, 100, GB, 1)], &[], &[]).unwrap();
    // Both AMs and 6 of b's tasks fill the node.
    let first = heartbeat(&mut s, 0, &[]);
    assert_eq!(first.len(), 8);
    let mut b_running: Vec<u64> =
        first.iter().filter(|d| d.app == 2 && d.priority == 1).map(|d| d.allocation_id).collect();
    s.update_asks(1, &[any_ask(1, 1, 6 * GB, 1)], &[], &[]).unwrap();
    let (mut b_started, mut large_started) = (0, false);
    let mut all = Vec::new();
    for _ in 0..rounds {
        let ended = b_running.remove(0);
        let out = heartbeat(&mut s, 0, &[ended]);
        for d in &out {
            match (d.kind, d.app) {
                (tidal_core::DecisionKind::Start, 2) => {
                    b_started += 1;
                    b_running.push(d.allocation_id);
                }
                (tidal_core::DecisionKind::Start, 1) => large_started = true,
                _ => {}
            }
        }
        all.extend(out);
        if large_started {
            break;
        }
    }
    (b_started, large_started, all)
}

#[test]
fn a_node_is_reserved_for_an_ask_larger_than_its_free_space() {
    let (b_started, large_started, decisions) = large_ask_behind_small_ones(true, 10);
    assert!(large_started, "the 6 GB container starts once enough has freed: {decisions:?}");
    let reserve = decisions.iter().position(|d| d.kind == tidal_core::DecisionKind::Reserve).expect("a reservation");
    assert_eq!((decisions[reserve].app, decisions[reserve].resources), (1, Resources::new(6 * GB, 1)));
    assert_eq!(decisions[reserve].allocation_id, 0);
    // Nothing else starts on the reserved node: only the large container after the reservation.
    assert!(decisions[reserve + 1..].iter().all(|d| d.app == 1), "{decisions:?}");
    assert_eq!(b_started, 0, "the reserved node took none of b's small containers");

    // Without reservations, b's small containers take every freed gigabyte: the large one starves.
    let (b_started, large_started, decisions) = large_ask_behind_small_ones(false, 10);
    assert!(!large_started && b_started == 10, "{decisions:?}");
    assert!(decisions.iter().all(|d| d.kind == tidal_core::DecisionKind::Start));
}

#[test]
fn a_reservation_ends_when_its_ask_is_withdrawn_or_its_app_leaves() {
    let settings = Settings { reserve_containers: true, ..Settings::default() };
    let mut s = Scheduler::from_xml("<tidal><queue name=\"a\"/></tidal>", settings).unwrap();
    add_nodes(&mut s, 1);
    s.add_app(1, "a", "u").unwrap();
    s.update_asks(1, &[any_ask(0, 1, GB, 1), any_ask(1, 7, GB, 1)], &[], &[]).unwrap();
    let running = heartbeat(&mut s, 0, &[]);
    assert_eq!(running.len(), 8, "the node is full");
    s.update_asks(1, &[any_ask(2, 1, 4 * GB, 1)], &[], &[]).unwrap();
    // A full node is not reserved: nobody can take it.
    assert!(heartbeat(&mut s, 0, &[]).is_empty());
    let d = heartbeat(&mut s, 0, &[running[1].allocation_id]);
    assert_eq!((d.len(), d[0].kind), (1, tidal_core::DecisionKind::Reserve));
    // Still reserved and still too small: nothing happens.
    assert!(heartbeat(&mut s, 0, &[running[2].allocation_id]).is_empty());
    // The AM withdraws the ask: the next heartbeat ends the reservation and serves the queue again.
    s.update_asks(1, &[any_ask(2, 0, 4 * GB, 1), any_ask(3, 1, GB, 1)], &[], &[]).unwrap();
    let d = heartbeat(&mut s, 0, &[]);
    assert_eq!(d[0].kind, tidal_core::DecisionKind::Unreserve);
    assert_eq!((d[0].app, d[0].priority), (1, 2));
    assert_eq!(d[1..].iter().map(|d| (d.kind, d.priority)).collect::<Vec<_>>(), [(tidal_core::DecisionKind::Start, 3)]);
    // A new reservation, then the app leaves: the node is free for others at once.
    s.update_asks(1, &[any_ask(4, 1, 4 * GB, 1)], &[], &[]).unwrap();
    assert_eq!(heartbeat(&mut s, 0, &[])[0].kind, tidal_core::DecisionKind::Reserve);
    s.remove_app(1).unwrap();
    s.add_app(2, "a", "u").unwrap();
    s.update_asks(2, &[any_ask(0, 1, GB, 1)], &[], &[]).unwrap();
    assert_eq!(heartbeat(&mut s, 0, &[])[0].kind, tidal_core::DecisionKind::Start);
}

/// DRF over memory, vcores and GPUs: a queue of one-GPU tasks and a queue of two-vcore tasks grow
/// with equal dominant shares (GPUs for one, vcores for the other), and no node starts more GPUs
/// than it has. After twelve containers that is four GPU tasks (4 of 8 GPUs) and eight CPU tasks
/// (16 of 32 vcores); counting only memory and vcores would give the GPU queue eight.
#[test]
fn drf_counts_gpus_as_a_resource() {
    let mut s = scheduler(&[("gpu", 1.0), ("cpu", 1.0)]);
    for i in 0..4 {
        s.add_node(i, 100 + i, 1, Resources::with_gpus(8 * GB, 8, 2)).unwrap();
    }
    s.add_app(1, "gpu", "u").unwrap();
    s.add_app(2, "cpu", "u").unwrap();
    let gpu_task = Ask { capability: Resources::with_gpus(GB, 1, 1), ..any_ask(1, 100, GB, 1) };
    s.update_asks(1, &[gpu_task], &[], &[]).unwrap();
    s.update_asks(2, &[any_ask(1, 100, GB, 2)], &[], &[]).unwrap();
    // One container per heartbeat, so DRF picks at every offer.
    for beat in 0..12 {
        let mut out = Vec::new();
        s.node_heartbeat(beat % 4, 0, &[], &mut out, 1).unwrap();
        assert_eq!(out.len(), 1, "heartbeat {beat} started nothing");
    }
    let st = s.state();
    let gpus_on = |node: u32| {
        st.allocations.values().filter(|a| a.node == node).map(|a| a.resources.get(ResourceKind::Gpus)).sum::<i64>()
    };
    assert!((0..4).all(|n| gpus_on(n) <= 2), "a node started more GPUs than it has");
    let (g, c) = (queue_share(st, "root.gpu"), queue_share(st, "root.cpu"));
    assert!((g - 0.5).abs() <= 1.0 / 8.0 + 1e-9 && (c - 0.5).abs() <= 1.0 / 8.0 + 1e-9, "gpu={g} cpu={c}");
    let gpu_tasks = st.allocations.values().filter(|a| a.resources.get(ResourceKind::Gpus) == 1).count();
    assert!((3..=5).contains(&gpu_tasks), "{gpu_tasks} GPU tasks of 12");
}
