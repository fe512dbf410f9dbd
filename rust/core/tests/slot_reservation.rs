//! Slot reservation through the scheduler: every case of Algorithm 1, expiry at D, priority
//! overrides, removal freeing holds, straggler advice, and bookkeeping invariants under
//! arbitrary event streams.

use proptest::prelude::*;
use tidal_core::config::Settings;
use tidal_core::ids::ANY;
use tidal_core::request::Ask;
use tidal_core::reservation::Pareto;
use tidal_core::state::ClusterState;
use tidal_core::status::SchedulerStatus;
use tidal_core::{Decision, Resources, Scheduler};

const GB: i64 = 1024;
const FG: u64 = 1;
const BG: u64 = 2;

/// Queues `fg` (reserving with `reservation` attributes, or not when `None`) and `bg`; two
/// nodes of four 1 GB / 1 vcore slots.
fn cluster(policy: &str, reservation: Option<&str>, extra_queues: &str) -> Scheduler {
    let res = reservation.map_or(String::new(), |a| format!("<slot-reservation {a}/>"));
    let xml = format!(
        "<tidal><policy>{policy}</policy><queue name=\"fg\">{res}</queue><queue name=\"bg\"/>{extra_queues}</tidal>"
    );
    let mut s = Scheduler::from_xml(&xml, Settings::default()).unwrap();
    for n in 0..2 {
        s.add_node(n, 100 + n, 1, Resources::new(4 * GB, 4)).unwrap();
    }
    s
}

fn ask(priority: i32, n: i64) -> Ask {
    Ask { priority, location: ANY, num_containers: n, relax_locality: true, capability: Resources::new(GB, 1) }
}

/// A two-stage DAG: `m` (tasks `m`, priority 5) then `r` (tasks `n`, priority 8).
fn dag(m: u32, n: u32) -> String {
    format!(
        r#"{{"version":1,"stages":[
        {{"id":"m","tasks":{m},"demand":{{"memory_mb":1024,"vcores":1}},"duration_ms":1000,"priorities":[5]}},
        {{"id":"r","tasks":{n},"demand":{{"memory_mb":1024,"vcores":1}},"duration_ms":1000,"parents":["m"],"priorities":[8]}}]}}"#
    )
}

fn hb(s: &mut Scheduler, node: u32, now: i64, completed: &[u64]) -> Vec<Decision> {
    let mut out = Vec::new();
    s.node_heartbeat(node, now, completed, &mut out, 100).unwrap();
    out
}

/// The foreground app runs stage `m` on node 0 (four tasks), the background app fills node 1
/// and keeps asking. Returns the foreground containers.
fn start(s: &mut Scheduler, m: u32, n: u32) -> Vec<u64> {
    s.add_app(FG, "fg", "alice").unwrap();
    s.add_app(BG, "bg", "bob").unwrap();
    s.set_hints(FG, &dag(m, n)).unwrap();
    s.update_asks(FG, &[ask(5, m as i64)], &[], &[]).unwrap();
    let fg: Vec<u64> = hb(s, 0, 1_000, &[]).iter().map(|d| d.allocation_id).collect();
    assert_eq!(fg.len(), 4);
    s.update_asks(BG, &[ask(1, 100)], &[], &[]).unwrap();
    assert_eq!(hb(s, 1, 1_000, &[]).len(), 4);
    fg
}

fn apps(out: &[Decision]) -> Vec<u64> {
    out.iter().map(|d| d.app).collect()
}

fn reserved(s: &Scheduler, node: u32) -> Resources {
    s.reserved_on(node)
}

#[test]
fn m_equals_n_holds_every_slot_until_the_next_stage_takes_it() {
    let mut s = cluster("drf", Some(r#"isolation-probability="1""#), "");
    let fg = start(&mut s, 4, 4);
    for (i, &id) in fg.iter().enumerate() {
        let out = hb(&mut s, 0, 2_000 + i as i64, &[id]);
        assert!(out.is_empty(), "background took a held slot: {out:?}");
        assert_eq!(s.holds(0).len(), i + 1);
    }
    assert_eq!(reserved(&s, 0), Resources::new(4 * GB, 4));
    assert_eq!(s.free_on(0), Resources::ZERO);
    // The downstream stage asks: the held slots go to it, not to the waiting background app.
    s.update_asks(FG, &[ask(8, 4)], &[], &[]).unwrap();
    assert_eq!(apps(&hb(&mut s, 0, 3_000, &[])), vec![FG; 4]);
    assert_eq!(s.hold_count(), 0);
    assert_eq!(reserved(&s, 0), Resources::ZERO);
}

#[test]
fn holds_the_next_stage_started_without_are_released() {
    let mut s = cluster("drf", Some(r#"isolation-probability="1""#), "");
    s.add_app(FG, "fg", "alice").unwrap();
    s.set_hints(FG, &dag(4, 4)).unwrap();
    s.update_asks(FG, &[ask(5, 4)], &[], &[]).unwrap();
    let fg: Vec<u64> = hb(&mut s, 0, 1_000, &[]).iter().map(|d| d.allocation_id).collect();
    assert!(hb(&mut s, 0, 2_000, &fg).is_empty());
    assert_eq!(s.holds(0).len(), 4);
    // Node 1's heartbeat comes first: the downstream stage starts there, on free space. Each of
    // its starts leaves one hold on node 0 with no task to take it; at P = 1 it would stay idle
    // until the app ends.
    s.update_asks(FG, &[ask(8, 4)], &[], &[]).unwrap();
    let mut out = Vec::new();
    s.node_heartbeat(1, 2_500, &[], &mut out, 1).unwrap();
    assert_eq!(apps(&out), vec![FG]);
    assert_eq!(s.holds(0).len(), 3, "a hold outlived the task it was kept for");
    assert_eq!(apps(&hb(&mut s, 1, 2_600, &[])), vec![FG; 3]);
    assert_eq!(s.hold_count(), 0);
    assert_eq!(s.free_on(0), Resources::new(4 * GB, 4));
}

#[test]
fn a_slot_freed_after_the_next_stage_started_everywhere_is_not_held() {
    let mut s = cluster("drf", Some(r#"isolation-probability="1""#), "");
    s.add_app(FG, "fg", "alice").unwrap();
    s.set_hints(FG, &dag(4, 4)).unwrap();
    s.update_asks(FG, &[ask(5, 4)], &[], &[]).unwrap();
    let fg: Vec<u64> = hb(&mut s, 0, 1_000, &[]).iter().map(|d| d.allocation_id).collect();
    assert!(hb(&mut s, 0, 2_000, &fg[..3]).is_empty());
    // The downstream stage starts all its tasks on node 1 while the last upstream container
    // still runs, as the loser of a straggler race does until its AM kills it.
    s.update_asks(FG, &[ask(8, 4)], &[], &[]).unwrap();
    assert_eq!(apps(&hb(&mut s, 1, 2_500, &[])), vec![FG; 4]);
    assert_eq!(s.hold_count(), 0);
    // Its slot has no task left to take it: held, it would stay idle until the app ends.
    assert!(hb(&mut s, 0, 3_000, &fg[3..]).is_empty());
    assert_eq!(s.hold_count(), 0, "a slot was held for a stage that had started every task");
    assert_eq!(s.free_on(0), Resources::new(4 * GB, 4));
}

#[test]
fn without_reservation_the_background_takes_the_slots_at_the_barrier() {
    let mut s = cluster("drf", None, "");
    let fg = start(&mut s, 4, 4);
    let out = hb(&mut s, 0, 2_000, &fg);
    assert_eq!(apps(&out), vec![BG; 4]);
    assert_eq!(s.hold_count(), 0);
}

#[test]
fn m_greater_than_n_releases_the_first_m_minus_n_slots() {
    let mut s = cluster("drf", Some(r#"isolation-probability="1""#), "");
    let fg = start(&mut s, 4, 1);
    // Three released to the background, one at a time; the last held.
    for (i, &id) in fg[..3].iter().enumerate() {
        assert_eq!(apps(&hb(&mut s, 0, 2_000 + i as i64, &[id])), vec![BG], "slot {i}");
        assert_eq!(s.hold_count(), 0);
    }
    assert!(hb(&mut s, 0, 2_010, &[fg[3]]).is_empty());
    assert_eq!(s.hold_count(), 1);
}

#[test]
fn m_less_than_n_pre_reserves_slots_freed_by_others_after_threshold_r() {
    let mut s = cluster("drf", Some(r#"isolation-probability="1" threshold="0.5""#), "");
    let fg = start(&mut s, 4, 7);
    let bg: Vec<u64> = s.state().allocations.iter().filter(|(_, a)| a.node == 1).map(|(&k, _)| k).collect();
    assert_eq!(bg.len(), 4);
    hb(&mut s, 0, 2_000, &[fg[0]]);
    // 1/4 finished: below R, a background slot that frees goes back to the background.
    assert_eq!(apps(&hb(&mut s, 1, 2_001, &[bg[0]])), vec![BG]);
    assert!(s.holds(1).is_empty());
    hb(&mut s, 0, 2_002, &[fg[1]]);
    assert_eq!(s.reservation_view(FG).unwrap().pre_reserve_remaining, 3);
    // 2/4 finished: the next n - m = 3 slots others free are held for the foreground app.
    assert!(hb(&mut s, 1, 2_003, &[bg[1], bg[2]]).is_empty());
    assert_eq!(s.holds(1).len(), 2);
    assert!(s.holds(1).iter().all(|h| h.stage.is_none()));
    assert_eq!(reserved(&s, 1), Resources::new(2 * GB, 2));
    assert_eq!(s.reservation_view(FG).unwrap().pre_reserve_remaining, 1);
    // The wider stage starts and takes its pre-reserved slots.
    s.update_asks(FG, &[ask(8, 7)], &[], &[]).unwrap();
    assert_eq!(apps(&hb(&mut s, 1, 2_004, &[])), vec![FG, FG]);
    assert!(s.holds(1).is_empty());
}

#[test]
fn holds_expire_at_the_deadline_from_eq2() {
    let mut s = cluster("drf", Some(r#"isolation-probability="0.4" prior-shape="1.6" min-samples="10""#), "");
    let fg = start(&mut s, 4, 4);
    // Tasks started at 1 s; the first finished after 1 s, so t_m = 1 s and D = 1 s + t_m (1 - P^(1/4))^(-1/α).
    assert!(hb(&mut s, 0, 2_000, &[fg[0]]).is_empty());
    let d = 1_000 + (Pareto::new(1.6, 1.0).unwrap().deadline(0.4, 4).unwrap() * 1000.0).ceil() as i64;
    assert_eq!(s.holds(0)[0].until_ms, d);
    assert!(d > 3_000 && d < 4_000, "{d}");
    assert!(hb(&mut s, 0, d - 1, &[]).is_empty());
    assert_eq!(s.hold_count(), 1);
    assert_eq!(apps(&hb(&mut s, 0, d, &[])), vec![BG]);
    assert_eq!(s.hold_count(), 0);
    let view = s.reservation_view(FG).unwrap();
    let bound = Pareto::new(1.6, 1.0).unwrap().utilization_bound(0.4, 4).unwrap();
    assert!((view.utilization_bound.unwrap() - bound).abs() < 1e-12);
}

const LQ: &str = "<queue name=\"hi\"><type>lq</type><period-sec>600</period-sec><deadline-sec>60</deadline-sec>\
    <burst-demand><vcores>10</vcores><memory-mb>10240</memory-mb></burst-demand></queue>";

#[test]
fn only_a_strictly_higher_priority_queue_overrides_a_hold() {
    // Strict priority: the LQ `hi` is tier 0, the TQs `fg` and `bg` tier 1.
    let mut s = cluster("strict-priority", Some(r#"isolation-probability="1""#), LQ);
    let fg = start(&mut s, 4, 4);
    assert!(hb(&mut s, 0, 2_000, &[fg[0], fg[1]]).is_empty(), "same tier must respect the holds");
    assert_eq!(s.hold_count(), 2);
    s.add_app(3, "hi", "carol").unwrap();
    s.update_asks(3, &[ask(1, 1)], &[], &[]).unwrap();
    assert_eq!(apps(&hb(&mut s, 0, 2_001, &[])), vec![3]);
    assert_eq!(s.hold_count(), 1, "one hold overridden, the other kept");
    assert_eq!(reserved(&s, 0), Resources::new(GB, 1));
    let n = s.state().node(0).unwrap();
    assert!((n.allocated + s.reserved_on(n.id)).fits_in(&n.capacity));
}

#[test]
fn a_high_priority_queue_hold_is_not_overridden_by_lower_ones() {
    // `fg` as the LQ (tier 0) reserving; `bg` (tier 1) waits.
    let xml = format!(
        "<tidal><policy>strict-priority</policy>{}<queue name=\"bg\"/></tidal>",
        LQ.replace("hi", "fg").replace("</queue>", "<slot-reservation isolation-probability=\"1\"/></queue>")
    );
    let mut s = Scheduler::from_xml(&xml, Settings::default()).unwrap();
    for n in 0..2 {
        s.add_node(n, 100 + n, 1, Resources::new(4 * GB, 4)).unwrap();
    }
    let fg = start(&mut s, 4, 4);
    assert!(hb(&mut s, 0, 2_000, &fg).is_empty());
    assert_eq!(s.hold_count(), 4);
}

#[test]
fn removing_the_app_or_the_node_frees_held_resources() {
    let mut s = cluster("drf", Some(r#"isolation-probability="1""#), "");
    let fg = start(&mut s, 4, 4);
    hb(&mut s, 0, 2_000, &fg[..2]);
    assert_eq!(s.hold_count(), 2);
    s.remove_app(FG).unwrap();
    assert_eq!(s.hold_count(), 0);
    assert_eq!(reserved(&s, 0), Resources::ZERO);
    assert_eq!(apps(&hb(&mut s, 0, 2_001, &[])), vec![BG; 4]);

    let mut s = cluster("drf", Some(r#"isolation-probability="1""#), "");
    let fg = start(&mut s, 4, 4);
    hb(&mut s, 0, 2_000, &fg[..2]);
    s.remove_node(0).unwrap();
    assert_eq!(s.hold_count(), 0);
    assert!(s.reservation_view(FG).unwrap().held_slots == 0);
    s.add_node(0, 100, 1, Resources::new(4 * GB, 4)).unwrap();
    assert_eq!(apps(&hb(&mut s, 0, 2_001, &[])), vec![BG; 4]);
}

#[test]
fn shrinking_a_node_gives_up_holds_first() {
    let mut s = cluster("drf", Some(r#"isolation-probability="1""#), "");
    let fg = start(&mut s, 4, 4);
    hb(&mut s, 0, 2_000, &fg[..2]);
    s.update_node_resource(0, Resources::new(3 * GB, 3)).unwrap();
    assert_eq!(s.hold_count(), 1);
    let n = s.state().node(0).unwrap();
    assert!((n.allocated + s.reserved_on(n.id)).fits_in(&n.capacity));
}

#[test]
fn an_unhinted_app_in_a_reservation_queue_is_scheduled_plainly() {
    let mut s = cluster("drf", Some(r#"isolation-probability="1""#), "");
    s.add_app(FG, "fg", "alice").unwrap();
    s.add_app(BG, "bg", "bob").unwrap();
    s.update_asks(FG, &[ask(5, 4)], &[], &[]).unwrap();
    let fg: Vec<u64> = hb(&mut s, 0, 1_000, &[]).iter().map(|d| d.allocation_id).collect();
    s.update_asks(BG, &[ask(1, 100)], &[], &[]).unwrap();
    assert_eq!(apps(&hb(&mut s, 0, 2_000, &fg)), vec![BG; 4]);
    assert_eq!(s.hold_count(), 0);
    assert!(s.reservation_view(FG).is_none());
}

#[test]
fn straggler_copies_are_advised_once_idle_slots_cover_the_running_tasks() {
    let mut s = cluster("drf", Some(r#"isolation-probability="1""#), "");
    let fg = start(&mut s, 4, 4);
    let progress = r#"{"version":1,"progress":[{"stage":"m","finished":1,"running":3}]}"#;
    hb(&mut s, 0, 2_000, &[fg[0]]);
    let reply = s.set_hints(FG, progress).unwrap();
    assert!(reply.stragglers.is_empty(), "3 running > 1 idle slot");
    hb(&mut s, 0, 2_001, &[fg[1]]);
    let reply =
        s.set_hints(FG, &progress.replace("\"finished\":1,\"running\":3", "\"finished\":2,\"running\":2")).unwrap();
    assert_eq!(reply.stragglers.len(), 1);
    let a = &reply.stragglers[0];
    assert_eq!((a.stage.as_str(), a.priority, a.idle_slots), ("m", Some(5), 2));
    assert_eq!(a.containers, vec![fg[2], fg[3]]);
    assert!(reply.advisories.iter().any(|m| m.contains("copies")), "{:?}", reply.advisories);
    assert!(reply.to_json().contains("\"stragglers\":[{\"stage\":\"m\""));
    assert_eq!(s.straggler_candidates(FG), reply.stragglers);
    // A copy is an ordinary ask at the stage's priority; it lands on a held slot and copies
    // the oldest running task, fg[2].
    s.update_asks(FG, &[ask(5, 1)], &[], &[]).unwrap();
    let copy = hb(&mut s, 0, 2_002, &[]);
    assert_eq!(apps(&copy), vec![FG]);
    assert_eq!(s.hold_count(), 1);
    let copy = copy[0].allocation_id;
    assert_eq!(s.straggler_candidates(FG)[0].containers, vec![fg[3]]);
    // Status reports the reservation with its Eq. (4) bound.
    let json = SchedulerStatus::of(&s).to_json();
    assert!(json.contains("\"reservations\":[{\"app\":1"), "{json}");
    assert!(json.contains("\"utilization_bound\":"), "{json}");
    // The copy wins; the AM's kill of the original reaches the RM before the NM reports the
    // copy. The first end completes the task, the second frees the loser's slot: both held.
    assert!(s.release(fg[2]));
    assert_eq!(s.hold_count(), 2);
    hb(&mut s, 0, 2_010, &[copy]);
    assert_eq!(s.hold_count(), 3);
    assert_eq!(s.reserved_on(0), Resources::new(3 * GB, 3));
    // The last task finishes: four holds for the four tasks of `r`, none left over.
    hb(&mut s, 0, 2_020, &[fg[3]]);
    assert_eq!(s.hold_count(), 4);
    assert!(s.straggler_candidates(FG).is_empty());
}

#[test]
fn a_new_dag_drops_the_old_stages_holds() {
    let mut s = cluster("drf", Some(r#"isolation-probability="1""#), "");
    let fg = start(&mut s, 4, 4);
    hb(&mut s, 0, 2_000, &fg[..2]);
    assert_eq!(s.hold_count(), 2);
    s.set_hints(FG, &dag(4, 4).replace("\"m\"", "\"m2\"")).unwrap();
    assert_eq!(s.hold_count(), 0);
    assert_eq!(reserved(&s, 0), Resources::ZERO);
    // The old DAG's containers still running count for no stage of the new one: their slots go
    // to whoever asks, and a task of the new DAG reserves as usual.
    let out = hb(&mut s, 0, 3_000, &fg[2..]);
    assert_eq!(s.hold_count(), 0);
    assert_eq!(apps(&out), vec![BG; 4], "the background took the freed slots");
    s.update_asks(FG, &[ask(5, 1)], &[], &[]).unwrap();
    let done = out[0].allocation_id;
    let new = hb(&mut s, 0, 4_000, &[done]);
    assert_eq!(apps(&new), vec![FG]);
    hb(&mut s, 0, 5_000, &[new[0].allocation_id]);
    assert_eq!(s.hold_count(), 1, "the new DAG's stage holds its finished task's slot");
}

#[derive(Debug, Clone)]
enum Op {
    AddNode(u32),
    RemoveNode(u32),
    ResizeNode(u32, i64),
    AddApp(u64, bool, bool),
    RemoveApp(u64),
    Ask(u64, i32, i64),
    Heartbeat(u32, usize, i64),
    Release(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0u32..4).prop_map(Op::AddNode),
        (0u32..4).prop_map(Op::RemoveNode),
        (0u32..4, 1i64..8).prop_map(|(n, c)| Op::ResizeNode(n, c)),
        (0u64..6, any::<bool>(), any::<bool>()).prop_map(|(a, q, h)| Op::AddApp(a, q, h)),
        (0u64..6).prop_map(Op::RemoveApp),
        (0u64..6, prop_oneof![Just(1), Just(5), Just(8)], 0i64..10).prop_map(|(a, p, n)| Op::Ask(a, p, n)),
        (0u32..4, 0usize..4, 0i64..3_000).prop_map(|(n, k, dt)| Op::Heartbeat(n, k, dt)),
        (0usize..32).prop_map(Op::Release),
    ]
}

fn check(st: &ClusterState, s: &Scheduler) {
    let mut holds = 0;
    for n in st.nodes.iter().flatten() {
        let sum = s.holds(n.id).iter().fold(Resources::ZERO, |acc, h| acc + h.resources);
        assert_eq!(s.reserved_on(n.id), sum, "node {} reserved bookkeeping", n.id);
        assert!(
            (n.allocated + s.reserved_on(n.id)).fits_in(&n.capacity) || s.reserved_on(n.id).is_zero(),
            "node {} over-committed",
            n.id
        );
        for h in s.holds(n.id) {
            assert!(st.apps.get(h.app).is_some_and(|a| a.is_some()), "hold of a removed app");
        }
        holds += s.holds(n.id).len();
    }
    assert_eq!(holds, s.hold_count(), "holds on removed nodes");
    for a in st.allocations.values() {
        assert!(st.node(a.node).is_some());
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Any event stream with reservations on keeps holds consistent with the nodes, never puts
    /// allocations and holds above a node's capacity, and leaves no hold behind its app.
    #[test]
    fn reservations_never_leak_or_over_allocate(ops in prop::collection::vec(op(), 1..150)) {
        let mut s = cluster("strict-priority", Some(r#"isolation-probability="0.9" threshold="0.25""#), LQ);
        let mut live: Vec<u64> = Vec::new();
        let mut now = 1_000;
        for op in ops {
            match op {
                Op::AddNode(n) => { let _ = s.add_node(n, 100 + n, 1, Resources::new(4 * GB, 4)); }
                Op::RemoveNode(n) => { let _ = s.remove_node(n); }
                Op::ResizeNode(n, c) => { let _ = s.update_node_resource(n, Resources::new(c * GB, c)); }
                Op::AddApp(a, q, h) => {
                    let queue = match (a % 3, q) { (0, _) => "hi", (_, true) => "fg", _ => "bg" };
                    if s.add_app(a, queue, "u").is_ok() && h {
                        s.set_hints(a, &dag(3, 1 + (a as u32 % 5))).unwrap();
                    }
                }
                Op::RemoveApp(a) => { let _ = s.remove_app(a); }
                Op::Ask(a, p, n) => { let _ = s.update_asks(a, &[ask(p, n)], &[], &[]); }
                Op::Heartbeat(n, k, dt) => {
                    now += dt;
                    let done: Vec<u64> = live.iter().take(k).copied().collect();
                    live.retain(|id| !done.contains(id));
                    let mut out = Vec::new();
                    if s.node_heartbeat(n, now, &done, &mut out, 100).is_ok() {
                        let node = s.state().node(n).unwrap();
                        prop_assert!(node.allocated.fits_in(&node.capacity) || out.is_empty());
                        live.extend(out.iter().map(|d| d.allocation_id));
                    }
                }
                Op::Release(i) => {
                    if let Some(&id) = live.get(i) { s.release(id); live.remove(i); }
                }
            }
            live.retain(|id| s.state().allocations.contains_key(id));
            check(s.state(), &s);
        }
        for a in 0..6 {
            let _ = s.remove_app(a);
        }
        prop_assert_eq!(s.hold_count(), 0);
        for n in s.state().nodes.iter().flatten() {
            prop_assert_eq!(s.reserved_on(n.id), Resources::ZERO);
        }
    }
}
