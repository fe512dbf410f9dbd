//! The fuzz targets. `cargo test` runs each on random inputs for a second; `make fuzz` runs
//! them under libFuzzer for `FUZZ_SECONDS` each.

use bolero::check;
use tidal_core::config::{parse_queue_file, Settings};
use tidal_core::error::ErrorKind::{Conflict, Invalid, NotFound};
use tidal_core::ids::ANY;
use tidal_core::request::Ask;
use tidal_core::scheduler::Caller;
use tidal_core::{Resources, Scheduler};
use tidal_fuzz::json::{self, JsonCase};
use tidal_fuzz::xml::{self, XmlCase};
use tidal_fuzz::{assert_names_the_problem, check_consistent, events, guarded, seeds};

const ALICE: Caller = Caller { user: "alice", admin: false };
/// Names a message may use for what a document lacks.
const GRAMMAR: &[&str] = &["tidal", "queue"];

/// Completes what runs on every node and lets each heartbeat start more, checking the books.
fn churn(s: &mut Scheduler, from_ms: i64) {
    let nodes: Vec<u32> = s.state().nodes.iter().flatten().map(|n| n.id).collect();
    for (i, &n) in nodes.iter().enumerate() {
        let done: Vec<u64> = s.state().allocations.iter().filter(|(_, a)| a.node == n).map(|(&id, _)| id).collect();
        s.node_heartbeat(n, from_ms + 1_000 * i as i64, &done, &mut Vec::new(), 4).expect("a known node");
        check_consistent(s, |_| false);
    }
}

#[test]
fn queue_file() {
    check!().with_type::<(u8, XmlCase)>().for_each(|(template, case)| {
        let doc = xml::build(case, seeds::queue_files(), xml::vocabulary());
        let file = match parse_queue_file(&doc) {
            Ok(file) => file,
            Err(e) => {
                assert_eq!(e.kind(), Invalid, "{e}");
                return assert_names_the_problem(&e.to_string(), &doc, GRAMMAR);
            }
        };
        if let Err(e) = Scheduler::new(file.clone(), Settings::default()) {
            assert_eq!(e.kind(), Invalid, "{e}");
        }
        // A running scheduler takes the file as a reload: apps stay, dropped queues retire.
        let mut s = events::busy(*template as u16);
        if guarded(&mut s, &[Invalid], |s| s.reconfigure(file, Settings::default())).is_ok() {
            check_consistent(&s, |_| false);
            churn(&mut s, 10_000);
        }
    });
}

#[test]
fn queue_element() {
    check!().with_type::<(u8, XmlCase)>().for_each(|(template, case)| {
        let doc = xml::build(case, seeds::queue_elements(), xml::vocabulary());
        let mut s = events::busy(*template as u16);
        let (name, admission) = match guarded(&mut s, &[Invalid, Conflict], |s| s.register_queue_xml(&doc, ALICE)) {
            Ok(v) => v,
            Err(e) => return assert_names_the_problem(&e.to_string(), &doc, GRAMMAR),
        };
        check_consistent(&s, |_| false);
        let live = s.state().queue_by_name(&name).is_some_and(|q| !q.retired);
        assert_eq!(live, admission.admitted, "queue {name} lives iff admitted: {}", admission.reason);
        if !admission.admitted {
            return;
        }
        if guarded(&mut s, &[Invalid], |s| s.add_app(99, &name, "alice").map(|_| ())).is_ok() {
            let ask = Ask {
                priority: 1,
                location: ANY,
                num_containers: 2,
                relax_locality: true,
                capability: Resources::new(1024, 1),
            };
            s.update_asks(99, &[ask], &[], &[]).expect("a valid ask");
            churn(&mut s, 10_000);
        }
        s.unregister_queue(&name, ALICE).expect("the owner deletes the queue it registered");
        check_consistent(&s, |_| false);
        let _ = s.remove_app(99);
        check_consistent(&s, |_| false);
        assert!(s.state().queue_by_name(&name).is_none(), "queue {name} is gone once deleted and empty");
    });
}

/// Non-negative integers under any `priorities` member of the document.
fn priorities(doc: &str) -> Vec<i32> {
    fn walk(v: &serde_json::Value, under: bool, out: &mut Vec<i32>) {
        match v {
            serde_json::Value::Object(m) => m.iter().for_each(|(k, x)| walk(x, k == "priorities", out)),
            serde_json::Value::Array(a) => a.iter().for_each(|x| walk(x, under, out)),
            v if under => out.extend(v.as_i64().and_then(|p| i32::try_from(p).ok()).filter(|p| *p >= 0)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    if let Ok(v) = serde_json::from_str(doc) {
        walk(&v, false, &mut out);
    }
    out.truncate(8);
    out
}

#[test]
fn dag_hints() {
    check!().with_type::<(u8, JsonCase, Option<JsonCase>)>().for_each(|(template, first, second)| {
        const APP: u64 = 1;
        let mut s = events::busy(*template as u16);
        for case in std::iter::once(first).chain(second.as_ref()) {
            let doc = json::build(case, seeds::hints(), json::vocabulary());
            let asks: Vec<Ask> = priorities(&doc)
                .into_iter()
                .map(|p| Ask {
                    priority: p,
                    location: ANY,
                    num_containers: 2,
                    relax_locality: true,
                    capability: Resources::new(1024, 1),
                })
                .collect();
            s.update_asks(APP, &asks, &[], &[]).expect("valid asks");
            let before = s.state().app_by_key(APP).and_then(|a| a.hints.as_ref().map(|h| h.revision));
            match guarded(&mut s, &[Invalid, NotFound], |s| s.set_hints(APP, &doc)) {
                Ok(reply) => assert_eq!(reply.revision, before.unwrap_or(0) + 1, "revision"),
                Err(e) => {
                    let msg = e.to_string();
                    let field = msg.split_once(": field ").map(|(_, rest)| rest.split(':').next().unwrap_or(""));
                    match field {
                        Some(f) if f != "(document)" => json::assert_field_exists(f, &doc),
                        Some(_) => {}
                        None => assert!(msg.contains("malformed JSON"), "error names no field: {msg}\n{doc}"),
                    }
                    let after = s.state().app_by_key(APP).and_then(|a| a.hints.as_ref().map(|h| h.revision));
                    assert_eq!(before, after, "failed hints replaced the previous ones");
                }
            }
            check_consistent(&s, |_| false);
            churn(&mut s, 10_000);
        }
    });
}

#[test]
fn scheduler_events() {
    check!().with_type::<events::EventCase>().for_each(events::run);
}
