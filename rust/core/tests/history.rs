//! The scheduler's history: bounded rings, the `since_ms` filter, bursts derived from a BoPF
//! run, admission decisions with their reasons, and the recent history a snapshot carries
//! across a restart.

mod common;

use common::{any_ask, lq, GB};
use serde_json::Value;
use tidal_core::config::Settings;
use tidal_core::history::{
    MAX_ADMISSIONS, MAX_SAMPLES, MAX_SAMPLE_ENTRIES, TAIL_ADMISSIONS, TAIL_BURSTS, TAIL_SAMPLE_ENTRIES,
};
use tidal_core::scheduler::Caller;
use tidal_core::snapshot::Snapshot;
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

fn array(h: &Value, key: &str) -> Vec<Value> {
    h[key].as_array().unwrap().clone()
}

/// An LQ bursts before a restart (one burst over, one still on), a run-time queue is registered;
/// the restored instance shows that history first, then its own decisions, and goes on with the
/// burst that was on without recording it twice.
#[test]
fn the_history_survives_a_restore() {
    let xml = format!("<tidal><policy>bopf</policy><queue name=\"tq\"/>{}</tidal>", lq("lq", 10, 1, 2));
    let mut s = scheduler(&xml, 100);
    s.add_node(0, 1, 2, Resources::new(8 * GB, 8)).unwrap();
    s.add_app(2, "lq", "v").unwrap();
    s.update_asks(2, &[any_ask(1, 4, GB, 1)], &[], &[]).unwrap();
    let mut out = Vec::new();
    s.node_heartbeat(0, 1_000, &[], &mut out, 100).unwrap();
    s.register_queue_xml("<queue name=\"rt\"/>", ADMIN).unwrap();
    s.node_heartbeat(0, 1_500, &[], &mut out, 100).unwrap();
    s.remove_app(2).unwrap();
    s.node_heartbeat(0, 1_600, &[], &mut out, 100).unwrap();
    s.add_app(3, "lq", "v").unwrap();
    s.update_asks(3, &[any_ask(1, 1, GB, 1)], &[], &[]).unwrap();
    s.node_heartbeat(0, 11_000, &[], &mut out, 0).unwrap();
    let before = history(&s, i64::MIN);
    assert_eq!(times(&before), vec![1_000, 1_500, 1_600, 11_000]);
    let bursts = array(&before, "bursts");
    assert_eq!(bursts.len(), 2);
    assert_eq!((bursts[1]["started_ms"].as_i64(), bursts[1]["ended_ms"].as_i64()), (Some(11_000), None));

    let mut after = scheduler(&xml, 100);
    after.restore_json(&s.snapshot_json()).unwrap();
    let restored = history(&after, i64::MIN);
    assert_eq!(restored["now_ms"], 11_000, "the clock goes on from the snapshot's");
    assert_eq!((&restored["samples"], &restored["bursts"]), (&before["samples"], &before["bursts"]));
    // The decisions from before come first, then those of the restore, once each: BoPF admits
    // every queue again at the restored clock, the run-time queue as it is registered again.
    let admissions = array(&restored, "admissions");
    let old = array(&before, "admissions");
    assert_eq!(admissions[..old.len()], old[..]);
    let mut new: Vec<&str> = admissions[old.len()..]
        .iter()
        .inspect(|a| assert_eq!(a["t_ms"], 11_000, "{a}"))
        .map(|a| a["queue"].as_str().unwrap())
        .collect();
    new.sort_unstable();
    assert_eq!(new, ["root.lq", "root.rt", "root.tq"]);

    // The burst that was on misses its deadline and ends when the next one starts: one record
    // each, after the restored ones.
    after.add_node(0, 1, 2, Resources::new(8 * GB, 8)).unwrap();
    after.add_app(3, "lq", "v").unwrap();
    after.update_asks(3, &[any_ask(1, 1, GB, 1)], &[], &[]).unwrap();
    for t in [13_000, 21_000] {
        after.node_heartbeat(0, t, &[], &mut out, 0).unwrap();
    }
    let h = history(&after, i64::MIN);
    assert_eq!(times(&h), vec![1_000, 1_500, 1_600, 11_000, 13_000, 21_000]);
    assert_eq!(array(&h, "samples")[..4], array(&before, "samples")[..]);
    let bursts = array(&h, "bursts");
    assert_eq!(bursts.len(), 3, "{bursts:?}");
    assert_eq!(bursts[0], before["bursts"][0]);
    let b = &bursts[1];
    assert_eq!((b["started_ms"].as_i64(), b["deadline_at_ms"].as_i64()), (Some(11_000), Some(12_000)));
    assert_eq!((b["ended_ms"].as_i64(), b["met_deadline"].as_bool()), (Some(21_000), Some(false)));
    assert_eq!((bursts[2]["started_ms"].as_i64(), bursts[2]["ended_ms"].as_i64()), (Some(21_000), None));
    assert_eq!(array(&h, "admissions"), admissions, "no decision since");
}

/// A BoPF file of `lqs` LQs named by `name` under the parents `tree`, and their full names.
fn lq_file(lqs: usize, name: impl Fn(usize) -> String, tree: &[String]) -> (String, Vec<String>) {
    let leaves: String = (0..lqs).map(|i| lq(&name(i), 1_000, 1_000, 1)).collect();
    let nested = tree.iter().rev().fold(leaves, |inner, p| format!("<queue name=\"{p}\">{inner}</queue>"));
    let parent = tree.iter().fold("root".to_string(), |n, p| format!("{n}.{p}"));
    (
        format!("<tidal><policy>bopf</policy>{nested}</tidal>"),
        (0..lqs).map(|i| format!("{parent}.{}", name(i))).collect(),
    )
}

/// Every LQ of `file` bursts and is sampled `ticks` times: more samples, bursts and admission
/// decisions than a snapshot keeps when there are a few hundred.
fn crowded((xml, names): &(String, Vec<String>), ticks: i64) -> Scheduler {
    let mut s = scheduler(xml, 1);
    s.add_node(0, 1, 2, Resources::new(1_000 * GB, 1_000)).unwrap();
    for (i, name) in names.iter().enumerate() {
        s.add_app(i as u64, name, "u").unwrap();
        s.update_asks(i as u64, &[any_ask(1, 1, GB, 1)], &[], &[]).unwrap();
    }
    for t in 1..=ticks {
        s.node_heartbeat(0, t, &[], &mut Vec::new(), 0).unwrap();
    }
    s
}

#[test]
fn a_snapshot_keeps_a_bounded_recent_history() {
    // One queue: a sample per heartbeat, the newest kept up to the entry cap.
    let mut s = scheduler("<tidal><queue name=\"a\"/></tidal>", 1);
    s.add_node(0, 1, 2, Resources::new(8 * GB, 8)).unwrap();
    let n = TAIL_SAMPLE_ENTRIES as i64 + 100;
    for t in 1..=n {
        s.node_heartbeat(0, t, &[], &mut Vec::new(), 1).unwrap();
    }
    let tail = Snapshot::from_json(&s.snapshot_json()).unwrap().history.unwrap();
    assert_eq!((tail.samples.len(), tail.samples[0].t_ms), (TAIL_SAMPLE_ENTRIES, 101));

    // Short names: the counts bind. Three whole samples of 300 queues, the newest (a fourth
    // would pass the entry cap); the newest bursts and admission decisions.
    let s = crowded(&lq_file(300, |i| format!("q{i}"), &[]), 5);
    let h = history(&s, i64::MIN);
    assert!(array(&h, "bursts").len() > TAIL_BURSTS && array(&h, "admissions").len() > TAIL_ADMISSIONS);
    let tail = Snapshot::from_json(&s.snapshot_json()).unwrap().history.unwrap();
    assert_eq!(tail.samples.iter().map(|x| x.t_ms).collect::<Vec<_>>(), [3, 4, 5]);
    assert!(tail.samples.iter().all(|x| x.queues.len() == 300));
    assert_eq!((tail.bursts.len(), tail.admissions.len()), (TAIL_BURSTS, TAIL_ADMISSIONS));
    assert_eq!(tail.open_bursts.len(), TAIL_BURSTS, "every burst kept is on");
    let newest = |key: &str, n: usize| Value::Array(array(&h, key)[array(&h, key).len() - n..].to_vec());
    assert_eq!(serde_json::to_value(&tail.bursts).unwrap(), newest("bursts", TAIL_BURSTS));
    assert_eq!(serde_json::to_value(&tail.admissions).unwrap(), newest("admissions", TAIL_ADMISSIONS));

    // The longest names there are (a leaf six levels down, every level 128 characters) and
    // BoPF's reasons naming the parent: the bytes bind, and the tail stays below 300 KB.
    let long = |c: char, i: usize| format!("{i}{}", c.to_string().repeat(128 - i.to_string().len()));
    let parents: Vec<String> = (0..5).map(|i| long('p', i)).collect();
    let file = lq_file(300, |i| long('q', i), &parents);
    let s = crowded(&file, 5);
    let json = s.snapshot_json();
    let tail = Snapshot::from_json(&json).unwrap().history.unwrap();
    let tail_json = serde_json::to_string(&tail).unwrap();
    assert!(tail_json.len() < 300_000, "{} bytes", tail_json.len());
    assert_eq!(tail.samples.len(), 1, "the newest sample, cut");
    assert!(tail.samples[0].queues.len() < 300 && tail.samples[0].t_ms == 5);
    assert!(!tail.bursts.is_empty() && tail.bursts.len() < TAIL_BURSTS);
    assert!(!tail.admissions.is_empty() && tail.admissions.len() < TAIL_ADMISSIONS);
    let entries: usize = tail.samples.iter().map(|x| x.queues.len()).sum();
    assert!(entries <= TAIL_SAMPLE_ENTRIES);

    let mut after = scheduler(&file.0, 1);
    after.restore_json(&json).unwrap();
    let h = history(&after, i64::MIN);
    assert_eq!(serde_json::to_value(&tail.bursts).unwrap(), h["bursts"]);
    assert_eq!(times(&h), [5]);
}

/// A snapshot from before snapshots carried the history (version 1) restores; the history starts
/// with the restore's decisions.
#[test]
fn a_snapshot_without_history_restores() {
    let xml = "<tidal><queue name=\"a\"/></tidal>";
    let mut s = scheduler(xml, 1_000);
    s.add_node(0, 1, 2, Resources::new(8 * GB, 8)).unwrap();
    s.node_heartbeat(0, 5_000, &[], &mut Vec::new(), 1).unwrap();
    let mut v1: Value = serde_json::from_str(&s.snapshot_json()).unwrap();
    v1["version"] = 1.into();
    v1.as_object_mut().unwrap().remove("history");
    let mut after = scheduler(xml, 1_000);
    after.restore_json(&v1.to_string()).unwrap();
    let h = history(&after, i64::MIN);
    assert!(times(&h).is_empty() && array(&h, "bursts").is_empty());
    let admissions = array(&h, "admissions");
    assert_eq!(admissions.len(), 1, "{admissions:?}");
    assert_eq!((admissions[0]["t_ms"].as_i64(), admissions[0]["queue"].as_str()), (Some(5_000), Some("root.a")));
}
