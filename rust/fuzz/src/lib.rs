//! Fuzz harnesses for everything tidal-core reads from outside: the queue allocation file, a
//! `<queue>` element registered over REST, an ApplicationMaster's DAG hints, and any sequence
//! of scheduler events. The targets are in `tests/targets.rs`; they run for a second each under
//! `cargo test` (random inputs on stable) and for as long as asked under `cargo bolero test`
//! (libFuzzer on nightly, see `make fuzz`).
//!
//! Inputs are edits of real documents (the repository's sample queue files and hint fixtures,
//! read at run time so that new samples widen the search) plus arbitrary XML and JSON around
//! them: the XML generator knows element names only as data, so elements the grammar gains
//! later are covered once a sample uses them. Every harness asserts, besides "no panic":
//! errors are typed and name what is wrong, a failed call leaves the scheduler as it was, and
//! after every step the scheduler's books add up ([`check_consistent`]).

pub mod events;
pub mod json;
pub mod seeds;
pub mod xml;

use tidal_core::error::ErrorKind;
use tidal_core::ids::{AllocationId, AppIdx, NodeId};
use tidal_core::state::ClusterState;
use tidal_core::{CoreError, Resources, Scheduler};

/// What must not change when a scheduler call fails.
#[derive(Debug, PartialEq)]
pub struct Fingerprint {
    nodes: usize,
    capacity: Resources,
    allocations: usize,
    next_allocation_id: AllocationId,
    apps: usize,
    queues: Vec<(String, bool)>,
    pending: Vec<u64>,
    usage: Vec<Resources>,
    holds: usize,
}

impl Fingerprint {
    pub fn of(s: &Scheduler) -> Fingerprint {
        let st = s.state();
        let live = st.queues.iter().filter(|q| !q.removed);
        Fingerprint {
            nodes: st.node_count,
            capacity: st.capacity,
            allocations: st.allocations.len(),
            next_allocation_id: st.next_allocation_id,
            apps: st.app_count(),
            queues: live.clone().map(|q| (q.name().to_string(), q.retired)).collect(),
            pending: live.clone().map(|q| q.pending_containers).collect(),
            usage: live.map(|q| q.usage).collect(),
            holds: s.hold_count(),
        }
    }
}

/// Runs a fallible scheduler call: on error, asserts its kind is one of `kinds` and that the
/// scheduler is exactly as before.
pub fn guarded<T>(
    s: &mut Scheduler,
    kinds: &[ErrorKind],
    call: impl FnOnce(&mut Scheduler) -> Result<T, CoreError>,
) -> Result<T, CoreError> {
    let before = Fingerprint::of(s);
    let result = call(s);
    if let Err(e) = &result {
        assert!(kinds.contains(&e.kind()), "error of kind {:?} not among {kinds:?}: {e}", e.kind());
        assert!(!e.to_string().trim().is_empty(), "empty error message");
        assert_eq!(before, Fingerprint::of(s), "a failed call changed the scheduler: {e}");
    }
    result
}

fn sum<'a>(it: impl Iterator<Item = &'a Resources>) -> Resources {
    it.fold(Resources::ZERO, |acc, r| acc + *r)
}

/// Asserts the scheduler's accounting: nodes, apps and queues carry exactly the sums of the
/// allocations and asks that belong to them, every reference points at something live, holds
/// add up per node, and a node's allocations and holds fit its capacity unless `overcommit`
/// says it may run over (adopted containers and shrunk nodes are never refused).
pub fn check_consistent(s: &Scheduler, overcommit: impl Fn(NodeId) -> bool) {
    let st: &ClusterState = s.state();
    let nodes: Vec<_> = st.nodes.iter().flatten().collect();
    assert_eq!(nodes.len(), st.node_count, "node count");
    assert_eq!(sum(nodes.iter().map(|n| &n.capacity)), st.capacity, "cluster capacity is the sum of the nodes'");
    let mut holds = 0;
    for n in &nodes {
        assert!(st.node(n.id).is_some_and(|m| std::ptr::eq(m, *n)), "node {} is found by its id", n.id);
        let on: Vec<_> = st.allocations.values().filter(|a| a.node == n.id).collect();
        assert_eq!(n.allocated, sum(on.iter().map(|a| &a.resources)), "node {} allocated", n.id);
        assert_eq!(n.containers as usize, on.len(), "node {} containers", n.id);
        let node_holds = s.holds(n.id);
        holds += node_holds.len();
        assert_eq!(s.reserved_on(n.id), sum(node_holds.iter().map(|h| &h.resources)), "node {} holds", n.id);
        for h in node_holds {
            assert!(matches!(st.apps.get(h.app), Some(Some(_))), "hold on node {} for a dead app slot {}", n.id, h.app);
        }
        if !overcommit(n.id) {
            assert!(
                (n.allocated + s.reserved_on(n.id)).fits_in(&n.capacity),
                "node {}: allocated {} + held {} exceed capacity {}",
                n.id,
                n.allocated,
                s.reserved_on(n.id),
                n.capacity
            );
        }
    }
    assert_eq!(holds, s.hold_count(), "hold count");
    for (id, a) in st.allocations.iter() {
        assert!(*id < st.next_allocation_id, "allocation {id} at or above the next id");
        assert!(st.node(a.node).is_some(), "allocation {id} on unknown node {}", a.node);
        assert!(matches!(st.apps.get(a.app), Some(Some(_))), "allocation {id} of a dead app slot");
        assert!(!a.resources.any_negative(), "allocation {id} negative");
    }
    let apps: Vec<(AppIdx, _)> = st.apps.iter().enumerate().filter_map(|(i, a)| a.as_ref().map(|a| (i, a))).collect();
    assert_eq!(apps.len(), st.app_count(), "app count");
    for &(i, a) in &apps {
        assert_eq!(st.app_index.get(&a.key), Some(&i), "app {} is found by its key", a.key);
        let own: Vec<_> = st.allocations.values().filter(|x| x.app == i).collect();
        let mut listed = a.allocation_ids.clone();
        listed.sort_unstable();
        let mut live: Vec<_> = st.allocations.iter().filter(|(_, x)| x.app == i).map(|(&id, _)| id).collect();
        live.sort_unstable();
        assert_eq!(listed, live, "app {} lists its live allocations", a.key);
        for (slot, id) in a.allocation_ids.iter().enumerate() {
            assert_eq!(st.allocations[id].slot as usize, slot, "allocation {id} knows its place in its app's list");
        }
        assert_eq!(a.usage, sum(own.iter().map(|x| &x.resources)), "app {} usage", a.key);
        assert_eq!(a.running_containers as usize, own.len(), "app {} running", a.key);
        let q = &st.queues[a.queue];
        let listed = if a.runnable { q.apps.contains(&i) } else { q.waiting.contains(&i) };
        assert!(!q.removed && listed, "app {} is listed by its live queue as runnable {}", a.key, a.runnable);
        assert!(a.runnable || a.running_containers == 0, "waiting app {} runs containers", a.key);
    }
    for (qi, q) in st.queues.iter().enumerate() {
        if q.removed {
            assert!(!q.has_apps(), "removed queue {} has apps", q.name());
            continue;
        }
        assert_eq!(st.queue_index.get(q.name()), Some(&qi), "queue {} is found by its name", q.name());
        let all: Vec<_> = apps.iter().filter(|(_, a)| a.queue == qi).map(|(_, a)| a).collect();
        assert_eq!(all.len(), q.apps.len() + q.waiting.len(), "queue {} app lists", q.name());
        assert_eq!(q.am_usage, sum(all.iter().map(|a| &a.am_resources)), "queue {} AM usage", q.name());
        let own: Vec<_> = all.into_iter().filter(|a| a.runnable).collect();
        assert_eq!(own.len(), q.apps.len(), "queue {} runnable apps", q.name());
        assert_eq!(q.usage, sum(own.iter().map(|a| &a.usage)), "queue {} usage", q.name());
        assert_eq!(
            q.running_containers,
            own.iter().map(|a| a.running_containers).sum::<u64>(),
            "queue {} running",
            q.name()
        );
        assert_eq!(
            q.pending_containers,
            own.iter().map(|a| a.asks.pending_containers()).sum::<u64>(),
            "queue {} pending",
            q.name()
        );
        let pending = own.iter().fold(Resources::ZERO, |acc, a| acc + a.asks.pending_resources());
        assert_eq!(q.pending_resources, pending, "queue {} pending resources", q.name());
        let waiting = own.iter().filter(|a| !a.started).count() as u32;
        assert_eq!(q.apps_waiting_for_am, waiting, "queue {} apps waiting for their AM", q.name());
        for (started, index) in [(false, &q.unstarted_pending), (true, &q.started_pending)] {
            let mut want: Vec<_> = apps
                .iter()
                .filter(|(_, a)| a.queue == qi && a.runnable && a.started == started && a.asks.pending_containers() > 0)
                .map(|&(i, a)| (a.seq, i, a.asks.min_capability()))
                .collect();
            want.sort_unstable_by_key(|w| w.0);
            let order: Vec<AppIdx> = want.iter().map(|w| w.1).collect();
            assert_eq!(index.iter().collect::<Vec<_>>(), order, "queue {} pending apps (started {started})", q.name());
            let floor = want.iter().filter_map(|w| w.2).reduce(|f, m| f.min(&m));
            assert_eq!(index.floor(), floor, "queue {} smallest pending asks (started {started})", q.name());
        }
    }
    assert_eq!(st.queue_index.len(), st.queues.iter().filter(|q| !q.removed).count(), "queue index size");
}

/// Asserts that `msg`, an error about document `doc`, says where or what is wrong: a line of
/// the document, the parser's position, or an element, attribute or value that the document
/// (or the grammar, for a missing one) has.
pub fn assert_names_the_problem(msg: &str, doc: &str, grammar: &[&str]) {
    let lines = doc.lines().count().max(1) as u32;
    let on_a_line = msg
        .match_indices("line ")
        .filter_map(|(i, _)| msg[i + 5..].split(|c: char| !c.is_ascii_digit()).next()?.parse::<u32>().ok())
        .any(|n| (1..=lines).contains(&n));
    let quoted = |open: char, close: char| -> bool {
        msg.split(open).skip(1).filter_map(|rest| rest.split(close).next()).any(|name| {
            let name = name.trim_start_matches('/').trim_start_matches("root.");
            !name.is_empty() && (doc.contains(name) || grammar.contains(&name))
        })
    };
    assert!(
        on_a_line || msg.contains("well-formed") || quoted('<', '>') || quoted('\'', '\''),
        "error names no line, element or value of the document: {msg}\n--- document ---\n{doc}"
    );
}
