//! Event sequences for the scheduler: nodes, apps, asks, heartbeats with completions, releases,
//! adoptions, run-time queues, hints, reloads and snapshot round trips, in any order, with ids
//! that mostly exist and sometimes are anything at all. [`run`] checks the books after every
//! event and that a failed event changed nothing.

use crate::{check_consistent, guarded};
use bolero::generator::TypeGenerator;
use std::collections::HashSet;
use tidal_core::config::{AppPolicyKind, PolicyKind, Settings};
use tidal_core::error::ErrorKind::{Conflict, Forbidden, Invalid, NotFound};
use tidal_core::ids::{AllocationId, AppKey, LocationId, NodeId, ANY};
use tidal_core::request::Ask;
use tidal_core::scheduler::Caller;
use tidal_core::{CoreError, DecisionKind, Resources, Scheduler};

/// A node id: one of a few (so that events meet) or any.
#[derive(Copy, Clone, Debug, TypeGenerator)]
pub enum Id {
    Few(u8),
    Any(u32),
}

#[derive(Copy, Clone, Debug, TypeGenerator)]
pub enum Key {
    Few(u8),
    Any(u64),
}

/// Memory in 512 MB steps or vcores, or any amount (negative and huge included).
#[derive(Copy, Clone, Debug, TypeGenerator)]
pub enum Amount {
    Few(u8),
    Any(i64),
}

/// An allocation this run was given (counted back from the latest), or any id.
#[derive(Copy, Clone, Debug, TypeGenerator)]
pub enum AllocRef {
    Recent(u8),
    Any(u64),
}

#[derive(Copy, Clone, Debug, TypeGenerator)]
pub enum Loc {
    Few(u8),
    Any(u32),
}

#[derive(Debug, TypeGenerator)]
pub struct GenAsk {
    priority: i8,
    location: Loc,
    count: Amount,
    relax: bool,
    memory: Amount,
    vcores: Amount,
}

/// One stage of a generated DAG: its parents are earlier stages, so the DAG is acyclic unless
/// an index repeats.
#[derive(Debug, TypeGenerator)]
pub struct GenStage {
    tasks: u8,
    parents: Vec<u8>,
    priority: u8,
    duration_s: u8,
    memory: u8,
}

#[derive(Debug, TypeGenerator)]
pub enum Op {
    AddNode { id: Id, host: Loc, rack: Loc, memory: Amount, vcores: Amount },
    RemoveNode { id: Id },
    ResizeNode { id: Id, memory: Amount, vcores: Amount },
    AddApp { key: Key, queue: u8, user: u8 },
    RemoveApp { key: Key },
    Asks { key: Key, asks: Vec<GenAsk>, blacklist_add: Vec<Loc>, blacklist_remove: Vec<Loc> },
    Heartbeat { node: Id, advance_ms: u16, completed: Vec<AllocRef>, max: u8 },
    Release { allocation: AllocRef },
    Adopt { key: Key, node: Id, priority: i8, memory: Amount, vcores: Amount },
    RegisterQueue { name: u8, lq: bool, user: u8, admin: bool },
    UnregisterQueue { name: u8, user: u8, admin: bool },
    Hints { key: Key, stages: Vec<GenStage>, progress: Option<(u8, u8, u8)> },
    Reconfigure { template: u16 },
    SnapshotRoundTrip,
}

#[derive(Debug, TypeGenerator)]
pub struct EventCase {
    pub template: u16,
    pub ops: Vec<Op>,
}

const QUEUES: [&str; 7] = ["a", "b", "lq", "rq0", "rq1", "root.a", "nope"];
const USERS: [&str; 3] = ["alice", "bob", "carol"];

/// A queue file: `template` picks the policy, the app policy and whether slots are reserved.
pub fn queue_file(template: u16) -> String {
    let t = template as usize;
    let policy = PolicyKind::ALL[t % PolicyKind::ALL.len()].name();
    let app_policy = AppPolicyKind::ALL[t / PolicyKind::ALL.len() % AppPolicyKind::ALL.len()].name();
    let reserve = if t / (PolicyKind::ALL.len() * AppPolicyKind::ALL.len()) % 2 == 1 {
        "<slot-reservation isolation-probability=\"0.5\"/>"
    } else {
        ""
    };
    format!(
        "<tidal><policy>{policy}</policy><app-policy>{app_policy}</app-policy>{reserve}\
         <queue name=\"a\"/><queue name=\"b\"><weight>2</weight></queue>{}</tidal>",
        lq_element("lq")
    )
}

fn lq_element(name: &str) -> String {
    format!(
        "<queue name=\"{name}\"><type>lq</type><period-sec>60</period-sec><deadline-sec>10</deadline-sec>\
         <burst-demand><memory-mb>20480</memory-mb><vcores>20</vcores></burst-demand></queue>"
    )
}

fn node_id(id: Id) -> NodeId {
    match id {
        Id::Few(n) => (n % 6) as NodeId,
        Id::Any(n) => n,
    }
}

fn app_key(key: Key) -> AppKey {
    match key {
        Key::Few(n) => (n % 6) as AppKey,
        Key::Any(n) => n,
    }
}

fn memory(a: Amount) -> i64 {
    match a {
        Amount::Few(n) => (n % 17) as i64 * 512,
        Amount::Any(v) => v,
    }
}

fn vcores(a: Amount) -> i64 {
    match a {
        Amount::Few(n) => (n % 9) as i64,
        Amount::Any(v) => v,
    }
}

fn location(l: Loc) -> LocationId {
    match l {
        Loc::Few(n) => (n % 8) as LocationId,
        Loc::Any(n) => n,
    }
}

fn hints_json(stages: &[GenStage], progress: Option<(u8, u8, u8)>) -> String {
    let stage = |i: usize, s: &GenStage| {
        let parents: Vec<String> =
            if i == 0 { Vec::new() } else { s.parents.iter().map(|p| format!("\"s{}\"", *p as usize % i)).collect() };
        format!(
            "{{\"id\":\"s{i}\",\"tasks\":{},\"demand\":{{\"memory_mb\":{},\"vcores\":1}},\"duration_ms\":{},\
             \"parents\":[{}],\"priorities\":[{}]}}",
            s.tasks % 16,
            (s.memory % 8 + 1) as i64 * 512,
            (s.duration_s as i64 + 1) * 1000,
            parents.join(","),
            s.priority % 6
        )
    };
    let stages: Vec<String> = stages.iter().take(12).enumerate().map(|(i, s)| stage(i, s)).collect();
    let progress = progress.map(|(s, f, r)| {
        format!(",\"progress\":[{{\"stage\":\"s{}\",\"finished\":{},\"running\":{}}}]", s % 4, f % 8, r % 8)
    });
    let stages = if stages.is_empty() { String::new() } else { format!(",\"stages\":[{}]", stages.join(",")) };
    format!("{{\"version\":1{stages}{}}}", progress.unwrap_or_default())
}

/// Asserts that a not-found error names the id it did not find.
fn names(result: &Result<impl Sized, CoreError>, id: impl std::fmt::Display) {
    if let Err(e) = result {
        if e.kind() == NotFound {
            let id = id.to_string();
            assert!(e.to_string().contains(&id), "error does not name {id}: {e}");
        }
    }
}

/// The settings the ResourceManager runs the core with: nodes reserved for asks larger than
/// their free space, and FairScheduler's default AM share.
fn rm_settings() -> Settings {
    Settings { reserve_containers: true, default_max_am_share: Some(0.5), ..Settings::default() }
}

/// Runs the case's events on a fresh scheduler, checking after each one.
pub fn run(case: &EventCase) {
    let mut xml = queue_file(case.template);
    let mut s = Scheduler::from_xml(&xml, rm_settings()).expect("every template is a valid queue file");
    // Nodes whose load may exceed their capacity: adopted containers and shrinks are never refused.
    let mut overcommit: HashSet<NodeId> = HashSet::new();
    let mut given: Vec<AllocationId> = Vec::new();
    let mut now_ms: i64 = 0;
    let mut out = Vec::new();
    for op in case.ops.iter().take(200) {
        step(&mut s, op, &mut xml, &mut overcommit, &mut given, &mut now_ms, &mut out);
        check_consistent(&s, |n| overcommit.contains(&n));
    }
}

#[allow(clippy::too_many_arguments)]
fn step(
    s: &mut Scheduler,
    op: &Op,
    xml: &mut String,
    overcommit: &mut HashSet<NodeId>,
    given: &mut Vec<AllocationId>,
    now_ms: &mut i64,
    out: &mut Vec<tidal_core::Decision>,
) {
    let allocation = |r: AllocRef, given: &[AllocationId]| match r {
        AllocRef::Recent(i) if !given.is_empty() => given[given.len() - 1 - i as usize % given.len()],
        AllocRef::Recent(i) => i as AllocationId,
        AllocRef::Any(id) => id,
    };
    match *op {
        Op::AddNode { id, host, rack, memory: m, vcores: v } => {
            let (id, cap) = (node_id(id), Resources::new(memory(m), vcores(v)));
            let r = guarded(s, &[Invalid, Conflict], |s| s.add_node(id, location(host), location(rack), cap));
            if r.is_ok() {
                overcommit.remove(&id);
            }
        }
        Op::RemoveNode { id } => {
            let id = node_id(id);
            let r = guarded(s, &[NotFound], |s| s.remove_node(id));
            names(&r, id);
        }
        Op::ResizeNode { id, memory: m, vcores: v } => {
            let id = node_id(id);
            let r =
                guarded(s, &[Invalid, NotFound], |s| s.update_node_resource(id, Resources::new(memory(m), vcores(v))));
            names(&r, id);
            if r.is_ok() {
                overcommit.insert(id);
            }
        }
        Op::AddApp { key, queue, user } => {
            let key = app_key(key);
            let (queue, user) = (QUEUES[queue as usize % QUEUES.len()], USERS[user as usize % USERS.len()]);
            let r = guarded(s, &[Invalid, NotFound, Conflict], |s| s.add_app(key, queue, user).map(str::to_string));
            names(&r, queue);
        }
        Op::RemoveApp { key } => {
            let key = app_key(key);
            let r = guarded(s, &[NotFound], |s| s.remove_app(key));
            names(&r, key);
        }
        Op::Asks { key, ref asks, ref blacklist_add, ref blacklist_remove } => {
            let key = app_key(key);
            let asks: Vec<Ask> = asks
                .iter()
                .take(16)
                .map(|a| Ask {
                    priority: a.priority as i32,
                    location: location(a.location),
                    num_containers: match a.count {
                        Amount::Few(n) => (n % 5) as i64,
                        Amount::Any(n) => n,
                    },
                    relax_locality: a.relax,
                    capability: Resources::new(memory(a.memory), vcores(a.vcores)),
                })
                .collect();
            let add: Vec<LocationId> = blacklist_add.iter().take(4).map(|&l| location(l)).collect();
            let remove: Vec<LocationId> = blacklist_remove.iter().take(4).map(|&l| location(l)).collect();
            let r = guarded(s, &[Invalid, NotFound], |s| s.update_asks(key, &asks, &add, &remove));
            names(&r, key);
        }
        Op::Heartbeat { node, advance_ms, ref completed, max } => {
            let node = node_id(node);
            *now_ms += advance_ms as i64;
            let done: Vec<AllocationId> = completed.iter().take(8).map(|&r| allocation(r, given)).collect();
            out.clear();
            let t = *now_ms;
            let r = guarded(s, &[NotFound], |s| s.node_heartbeat(node, t, &done, out, max as usize));
            names(&r, node);
            if let Ok(n) = r {
                assert_eq!(n, out.len(), "decisions counted");
                assert!(n <= max as usize, "{n} decisions over the limit of {max}");
                for d in out.iter() {
                    if d.kind != DecisionKind::Start {
                        assert_eq!(d.allocation_id, 0, "a reservation books no allocation");
                        assert!(s.state().app_index.contains_key(&d.app), "reservation for an unknown app");
                        continue;
                    }
                    let a = s.state().allocations.get(&d.allocation_id).expect("a decision is a live allocation");
                    assert_eq!(a.node, node, "decision on another node");
                    assert_eq!(s.state().app(a.app).key, d.app, "decision for another app");
                    assert_eq!(a.resources, d.resources, "decision's resources");
                    given.push(d.allocation_id);
                }
            }
        }
        Op::Release { allocation: r } => {
            let id = allocation(r, given);
            let known = s.state().allocations.contains_key(&id);
            assert_eq!(s.release(id), known, "release of allocation {id}");
            assert!(!s.state().allocations.contains_key(&id), "allocation {id} released");
        }
        Op::Adopt { key, node, priority, memory: m, vcores: v } => {
            let (key, node) = (app_key(key), node_id(node));
            let r = guarded(s, &[Invalid, NotFound], |s| {
                s.adopt(key, node, priority as i32, Resources::new(memory(m), vcores(v)))
            });
            if let Ok(id) = r {
                given.push(id);
                overcommit.insert(node);
            }
        }
        Op::RegisterQueue { name, lq, user, admin } => {
            let name = format!("rq{}", name % 3);
            let element = if lq { lq_element(&name) } else { format!("<queue name=\"{name}\"/>") };
            let caller = Caller { user: USERS[user as usize % USERS.len()], admin };
            let r = guarded(s, &[Invalid, Conflict], |s| s.register_queue_xml(&element, caller));
            if let Ok((full, admission)) = r {
                let live = s.state().queue_by_name(&full).is_some_and(|q| !q.retired);
                assert_eq!(live, admission.admitted, "queue {full} lives iff admitted: {}", admission.reason);
            }
        }
        Op::UnregisterQueue { name, user, admin } => {
            let name = QUEUES[name as usize % QUEUES.len()];
            let caller = Caller { user: USERS[user as usize % USERS.len()], admin };
            let r = guarded(s, &[NotFound, Conflict, Forbidden], |s| s.unregister_queue(name, caller));
            names(&r, name);
        }
        Op::Hints { key, ref stages, progress } => {
            let key = app_key(key);
            let json = hints_json(stages, progress);
            let before = s.state().app_by_key(key).and_then(|a| a.hints.as_ref().map(|h| h.revision));
            let r = guarded(s, &[Invalid, NotFound], |s| s.set_hints(key, &json));
            names(&r, key);
            let after = s.state().app_by_key(key).and_then(|a| a.hints.as_ref().map(|h| h.revision));
            match r {
                Ok(reply) => assert_eq!(after, Some(reply.revision), "hints stored"),
                Err(_) => assert_eq!(before, after, "failed hints kept the previous ones"),
            }
        }
        Op::Reconfigure { template } => {
            let next = queue_file(template);
            let file = tidal_core::config::parse_queue_file(&next).expect("every template is a valid queue file");
            guarded(s, &[Invalid], |s| s.reconfigure(file, rm_settings())).expect("valid settings");
            *xml = next;
        }
        Op::SnapshotRoundTrip => {
            let snapshot = s.snapshot_json();
            let mut fresh = Scheduler::from_xml(xml, rm_settings()).expect("the current queue file");
            if let Err(e) = fresh.restore_json(&snapshot) {
                panic!("a snapshot this scheduler wrote is refused: {e}\n{snapshot}");
            }
        }
    }
}

/// A scheduler on `queue_file(template)` with three nodes, an app in each file queue that takes
/// one (apps 1, 2 and 3, with more asks outstanding at priorities 1 and 2) and containers running.
pub fn busy(template: u16) -> Scheduler {
    let mut s = Scheduler::from_xml(&queue_file(template), Settings::default()).expect("every template is valid");
    for n in 0..3 {
        s.add_node(n, n + 1, 100, Resources::new(8 * 1024, 8)).expect("a fresh node");
    }
    for (key, queue) in [(1, "a"), (2, "b"), (3, "lq")] {
        if s.add_app(key, queue, "alice").is_ok() {
            let ask = |priority, n| Ask {
                priority,
                location: ANY,
                num_containers: n,
                relax_locality: true,
                capability: Resources::new(1024, 1),
            };
            s.update_asks(key, &[ask(1, 4), ask(2, 4)], &[], &[]).expect("valid asks");
        }
    }
    for n in 0..3 {
        s.node_heartbeat(n, 1_000 + n as i64, &[], &mut Vec::new(), 3).expect("a known node");
    }
    s
}
