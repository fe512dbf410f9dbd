//! The scheduler's history: bounded rings, the `since_ms` filter, bursts derived from a BoPF
//! run, and admission decisions with their reasons.

mod common;

use common::{any_ask, lq, GB};
use serde_json::Value;
use tidal_core::config::Settings;
use tidal_core::history::{MAX_ADMISSIONS, MAX_SAMPLES, MAX_SAMPLE_ENTRIES};
use tidal_core::scheduler::Caller;
use tidal_core::{Resources, Scheduler};

const ADMIN: Caller = Caller { user: "admin", admin: true };

fn scheduler(xml: &str, interval_ms: i64) -> Scheduler {
    let settings = Settings { history_sample_interval_ms: interval_ms, ..Settings::default() };
    Scheduler::from_xml(xml, settings).unwrap()
}

fn history(s: &Scheduler, since_ms: i64) -> Value {
    serde_json::from_str(&s.history_json(since_ms)).unwrap()
}

fn times(h: &Value) -> Vec<i64> {
    h["samples"].as_array().unwrap().iter().map(|s| s["t_ms"].as_i64().unwrap()).collect()
}

#[test]
fn the_interval_is_validated() {
    for bad in [0, -5, 3_600_001] {
        let settings = Settings { history_sample_interval_ms: bad, ..Settings::default() };
        let e = Scheduler::from_xml("<tidal><queue name=\"a\"/></tidal>", settings).unwrap_err().to_string();
        assert!(e.contains("history sample interval") && e.contains(&bad.to_string()), "{e}");
    }
}

#[test]
fn samples_are_taken_once_per_interval_and_filtered_by_since() {
    let mut s = scheduler("<tidal><queue name=\"a\"/><queue name=\"b\"><weight>3</weight></queue></tidal>", 1_000);
    s.add_node(0, 1, 2, Resources::new(8 * GB, 8)).unwrap();
    s.add_app(1, "a", "u").unwrap();
    s.update_asks(1, &[any_ask(1, 2, GB, 1)], &[], &[]).unwrap();
    let mut out = Vec::new();
    for t in [500, 900, 1_499, 1_500, 2_000, 2_499, 2_500, 4_000] {
        s.node_heartbeat(0, t, &[], &mut out, 10).unwrap();
    }
    let h = history(&s, i64::MIN);
    assert_eq!(times(&h), vec![500, 1_500, 2_500, 4_000]);
    assert_eq!((h["now_ms"].as_i64(), h["sample_interval_ms"].as_i64()), (Some(4_000), Some(1_000)));
    assert_eq!(times(&history(&s, 1_500)), vec![2_500, 4_000], "only samples after since_ms");
    assert_eq!(times(&history(&s, 4_000)), Vec::<i64>::new());

    let last = &h["samples"][3];
    assert_eq!(last["cluster_share"], 0.25, "2 of 8 vcores");
    let a = &last["queues"][0];
    assert_eq!(a["name"], "root.a");
    assert_eq!((a["share"].as_f64(), a["fair_share"].as_f64()), (Some(0.25), Some(1.0)));
    assert_eq!((a["running_containers"].as_u64(), a["pending_containers"].as_u64()), (Some(2), Some(0)));
    // Running 2 of 8 vcores from 500 ms on, over a life that began at the first heartbeat.
    assert_eq!(a["long_term_share"], 0.25);
    assert!(a["guaranteed_share"].is_null() && a["burst_phase"].is_null(), "DRF keeps neither: {a}");
    // A queue without demand has no fair share while another has demand.
    assert_eq!(
        (last["queues"][1]["name"].as_str(), last["queues"][1]["fair_share"].as_f64()),
        (Some("root.b"), Some(0.0))
    );
}

#[test]
fn the_rings_keep_their_bounds_and_drop_the_oldest() {
    // Ten queues at one sample per heartbeat: the entry bound binds before the sample bound.
    let queues: String = (0..10).map(|i| format!("<queue name=\"q{i}\"/>")).collect();
    let mut s = scheduler(&format!("<tidal>{queues}</tidal>"), 1);
    s.add_node(0, 1, 2, Resources::new(8 * GB, 8)).unwrap();
    let n = MAX_SAMPLES as i64 + 100;
    for t in 1..=n {
        s.node_heartbeat(0, t, &[], &mut Vec::new(), 1).unwrap();
    }
    let kept = MAX_SAMPLE_ENTRIES / 10;
    assert!(kept < MAX_SAMPLES);
    let t = times(&history(&s, i64::MIN));
    assert_eq!(t.len(), kept);
    assert_eq!((t[0], *t.last().unwrap()), (n - kept as i64 + 1, n), "the newest are kept");
    assert!(history(&s, i64::MIN)["samples"]
        .as_array()
        .unwrap()
        .iter()
        .all(|x| x["queues"].as_array().unwrap().len() == 10));

    // One queue: the sample bound binds.
    let mut s = scheduler("<tidal><queue name=\"a\"/></tidal>", 1);
    s.add_node(0, 1, 2, Resources::new(8 * GB, 8)).unwrap();
    for t in 1..=n {
        s.node_heartbeat(0, t, &[], &mut Vec::new(), 1).unwrap();
    }
    let t = times(&history(&s, i64::MIN));
    assert_eq!((t.len(), t[0]), (MAX_SAMPLES, n - MAX_SAMPLES as i64 + 1));

    // Admission decisions: one per registration, the oldest dropped.
    let extra = 50;
    for i in 0..MAX_ADMISSIONS + extra {
        s.register_queue_xml(&format!("<queue name=\"r{i}\"/>"), ADMIN).unwrap();
        s.unregister_queue(&format!("r{i}"), ADMIN).unwrap();
    }
    let h = history(&s, i64::MIN);
    let admissions = h["admissions"].as_array().unwrap();
    assert_eq!(admissions.len(), MAX_ADMISSIONS);
    assert_eq!(admissions[0]["queue"], format!("root.r{}", extra));
    assert_eq!(admissions.last().unwrap()["queue"], format!("root.r{}", MAX_ADMISSIONS + extra - 1));
}

/// Declared 2 vcore-seconds (and 2 GB-seconds) over a 1 s deadline every 10 s: a guaranteed
/// rate of 2 vcores and 2 GB, a quarter of the 8 GB / 8 vcore node.
#[test]
fn bursts_are_recorded_from_a_bopf_run() {
    let mut s =
        scheduler(&format!("<tidal><policy>bopf</policy><queue name=\"tq\"/>{}</tidal>", lq("lq", 10, 1, 2)), 100);
    s.add_node(0, 1, 2, Resources::new(8 * GB, 8)).unwrap();
    s.add_app(2, "lq", "v").unwrap();
    s.update_asks(2, &[any_ask(1, 4, GB, 1)], &[], &[]).unwrap();
    let mut out = Vec::new();
    s.node_heartbeat(0, 1_000, &[], &mut out, 100).unwrap();
    let h = history(&s, i64::MIN);
    assert_eq!(h["bursts"].as_array().unwrap().len(), 1);
    let b = &h["bursts"][0];
    assert_eq!(
        (b["queue"].as_str(), b["started_ms"].as_i64(), b["deadline_at_ms"].as_i64()),
        (Some("root.lq"), Some(1_000), Some(2_000))
    );
    assert!(b["ended_ms"].is_null() && b["met_deadline"].is_null(), "on: {b}");
    assert_eq!(b["guaranteed_share"], 0.25);
    let lq_now = |h: &Value| h["samples"].as_array().unwrap().last().unwrap()["queues"][1].clone();
    assert_eq!((lq_now(&h)["burst_phase"].as_str(), lq_now(&h)["guaranteed_share"].as_f64()), (Some("on"), Some(0.25)));
    assert_eq!(lq_now(&h)["running_containers"], 4);

    // The declaration is used up at 1.5 s; the app leaves and the burst ends in time.
    s.node_heartbeat(0, 1_500, &[], &mut out, 100).unwrap();
    assert_eq!(lq_now(&history(&s, i64::MIN))["burst_phase"], "beyond-declaration");
    s.remove_app(2).unwrap();
    s.node_heartbeat(0, 1_600, &[], &mut out, 100).unwrap();
    let b = &history(&s, i64::MIN)["bursts"][0];
    assert_eq!((b["ended_ms"].as_i64(), b["met_deadline"].as_bool()), (Some(1_600), Some(true)));

    // The next burst opens a period later and is still pending a period after that: it missed
    // its deadline, and the new demand opens the third.
    s.add_app(3, "lq", "v").unwrap();
    s.update_asks(3, &[any_ask(1, 1, GB, 1)], &[], &[]).unwrap();
    for t in [11_000, 13_000, 21_000] {
        s.node_heartbeat(0, t, &[], &mut out, 0).unwrap();
    }
    let h = history(&s, i64::MIN);
    let bursts = h["bursts"].as_array().unwrap();
    assert_eq!(bursts.len(), 3, "{bursts:?}");
    let b = &bursts[1];
    assert_eq!((b["started_ms"].as_i64(), b["deadline_at_ms"].as_i64()), (Some(11_000), Some(12_000)));
    assert_eq!((b["ended_ms"].as_i64(), b["met_deadline"].as_bool()), (Some(21_000), Some(false)));
    assert_eq!((bursts[2]["started_ms"].as_i64(), bursts[2]["ended_ms"].as_i64()), (Some(21_000), None));
    // Bursts are not filtered by since_ms.
    assert_eq!(history(&s, 20_000)["bursts"].as_array().unwrap().len(), 3);
    assert_eq!(times(&history(&s, 11_000)), vec![13_000, 21_000]);
}

/// One 1 GB / 2 vcore node; the LQ's bursts need all of it, so once it is admitted safety
/// condition (1) admits no queue after it.
#[test]
fn admissions_are_recorded_with_their_reasons() {
    let xml = format!(
        "<tidal><policy>bopf</policy><queue name=\"tq\"/><queue name=\"b\"><weight>2</weight></queue>{}</tidal>",
        lq("big", 60, 10, 20)
    );
    let mut s = scheduler(&xml, 1_000);
    let h = history(&s, i64::MIN);
    let provisional: Vec<(&str, &str)> = h["admissions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (a["queue"].as_str().unwrap(), a["class"].as_str().unwrap()))
        .collect();
    assert_eq!(provisional, vec![("root.tq", "elastic"), ("root.b", "elastic"), ("root.big", "elastic")]);
    assert!(h["admissions"][2]["reason"].as_str().unwrap().starts_with("provisional"));

    // The first heartbeat with capacity runs admission for real: a decision for every queue,
    // with its reason, the TQs' too although their class stays elastic; the LQ's class changes.
    s.add_node(0, 1, 100, Resources::new(GB, 2)).unwrap();
    s.node_heartbeat(0, 1_000, &[], &mut Vec::new(), 1).unwrap();
    let h = history(&s, i64::MIN);
    let round: Vec<(&str, &str)> = h["admissions"].as_array().unwrap()[3..]
        .iter()
        .map(|a| (a["queue"].as_str().unwrap(), a["reason"].as_str().unwrap()))
        .collect();
    assert_eq!(round.iter().map(|(q, _)| *q).collect::<Vec<_>>(), vec!["root.tq", "root.b", "root.big"]);
    assert!(round.iter().all(|(_, reason)| !reason.starts_with("provisional")), "{round:?}");
    let last = h["admissions"].as_array().unwrap().last().unwrap().clone();
    let status: Value = serde_json::from_str(&tidal_core::status::SchedulerStatus::of(&s).to_json()).unwrap();
    let big = status["queues"].as_array().unwrap().iter().find(|q| q["name"] == "root.big").unwrap().clone();
    assert_eq!((last["t_ms"].as_i64(), last["queue"].as_str()), (Some(1_000), Some("root.big")));
    assert_eq!((&last["class"], &last["reason"]), (&big["class"], &big["admission_reason"]));
    assert_ne!(last["class"], "elastic");

    let (_, verdict) = s.register_queue_xml("<queue name=\"late\"/>", ADMIN).unwrap();
    assert!(!verdict.admitted, "{verdict:?}");
    let h = history(&s, i64::MIN);
    let rejected = h["admissions"].as_array().unwrap().last().unwrap();
    assert_eq!((rejected["queue"].as_str(), rejected["class"].as_str()), (Some("root.late"), Some("rejected")));
    assert_eq!(
        (rejected["admitted"].as_bool(), rejected["reason"].as_str()),
        (Some(false), Some(verdict.reason.as_str()))
    );
    assert!(!verdict.reason.is_empty());
}
