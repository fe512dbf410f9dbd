//! Unit and property tests of BoPF admission control.

use super::*;
use crate::bopf::spec::{BurstSpec, DEFAULT_CYCLES};
use proptest::prelude::*;

const S: u64 = 1000;

fn cap() -> Resources {
    Resources::new(1000, 100)
}

fn controller(n_min: u32, mode: BopfMode) -> AdmissionController {
    AdmissionController::new(AdmissionConfig { capacity: cap(), n_min, mode, resolution_ms: S }).unwrap()
}

/// An LQ with times in seconds and demand in MB·s / vcore·s.
fn lq(name: &str, period_s: u64, deadline_s: u64, mem: i64, vcores: i64, start_s: u64) -> LqSpec {
    LqSpec {
        name: name.into(),
        weight: 1.0,
        burst: BurstSpec { period_ms: period_s * S, deadline_ms: deadline_s * S, demand: Resources::new(mem, vcores) },
        start_ms: start_s * S,
        cycles: DEFAULT_CYCLES,
    }
}

fn tq(name: &str) -> TqSpec {
    TqSpec { name: name.into(), weight: 1.0 }
}

fn field_of(e: AdmissionError) -> (String, String) {
    match e {
        AdmissionError::InvalidSpec { queue, field, .. } => (queue, field),
        other => panic!("expected InvalidSpec, got {other:?}"),
    }
}

#[test]
fn invalid_specs_name_queue_and_field() {
    let mut c = controller(1, BopfMode::Bopf);
    let mut late = lq("late", 10, 11, 100, 0, 0);
    assert_eq!(field_of(c.admit_lq(late.clone()).unwrap_err()), ("late".into(), "burst.deadline_ms".into()));
    late.burst.deadline_ms = 0;
    assert_eq!(field_of(c.admit_lq(late).unwrap_err()).1, "burst.deadline_ms");
    assert_eq!(field_of(c.admit_lq(lq("p", 0, 0, 100, 0, 0)).unwrap_err()).1, "burst.period_ms");
    assert_eq!(field_of(c.admit_lq(lq("neg", 10, 5, 100, -1, 0)).unwrap_err()).1, "burst.demand.vcores");
    assert_eq!(field_of(c.admit_lq(lq("zero", 10, 5, 0, 0, 0)).unwrap_err()).1, "burst.demand");
    let mut w = lq("w", 10, 5, 100, 0, 0);
    w.weight = f64::NAN;
    assert_eq!(field_of(c.admit_lq(w.clone()).unwrap_err()).1, "weight");
    w.weight = f64::INFINITY;
    assert_eq!(field_of(c.admit_lq(w).unwrap_err()).1, "weight");
    assert_eq!(field_of(c.admit_tq(TqSpec { name: "t".into(), weight: -1.0 }).unwrap_err()).1, "weight");
    assert_eq!(field_of(c.admit_tq(tq("  ")).unwrap_err()).1, "name");
    let mut cy = lq("cy", 10, 5, 100, 0, 0);
    cy.cycles = 0;
    assert_eq!(field_of(c.admit_lq(cy.clone()).unwrap_err()).1, "cycles");
    cy.cycles = u32::MAX;
    assert_eq!(field_of(c.admit_lq(cy.clone()).unwrap_err()).1, "cycles");
    cy.cycles = 2;
    cy.burst.period_ms = u64::MAX / 2;
    assert_eq!(field_of(c.admit_lq(cy).unwrap_err()).1, "burst.period_ms");
    let msg = c.admit_lq(lq("late", 10, 11, 100, 0, 0)).unwrap_err().to_string();
    assert!(msg.starts_with("queue 'late': burst.deadline_ms 11000 exceeds burst.period_ms 10000"), "{msg}");
    assert!(c.is_empty(), "invalid specs must not be admitted");

    c.admit_tq(tq("t")).unwrap();
    assert_eq!(c.admit_tq(tq("t")).unwrap_err(), AdmissionError::DuplicateQueue("t".into()));
    assert_eq!(c.remove("nope").unwrap_err(), AdmissionError::UnknownQueue("nope".into()));

    let bad = |capacity, resolution_ms| {
        AdmissionController::new(AdmissionConfig { capacity, n_min: 1, mode: BopfMode::Bopf, resolution_ms })
    };
    assert!(matches!(bad(Resources::ZERO, 1), Err(AdmissionError::InvalidConfig { .. })));
    assert!(
        matches!(bad(Resources::new(-1, 5), 1), Err(AdmissionError::InvalidConfig { field, .. }) if field == "capacity.memory_mb")
    );
    assert!(matches!(bad(Resources::new(i64::MAX, 5), 1), Err(AdmissionError::InvalidConfig { .. })));
    assert!(matches!(bad(cap(), 0), Err(AdmissionError::InvalidConfig { field, .. }) if field == "resolution_ms"));
}

#[test]
fn safety_condition_passes_at_the_bound_and_rejects_beyond_it() {
    let mut c = controller(1, BopfMode::Bopf);
    // 40000 MB·s per 100 s burst on a 1000 MB cluster: 40% of the cluster's resource-time.
    let d = c.admit_lq(lq("a", 100, 50, 40_000, 0, 0)).unwrap();
    assert_eq!(d.class, AdmissionClass::Hard, "{}", d.reason);
    // N+1 = 2: a's fair share is 50000 >= 40000.
    let d = c.admit_tq(tq("t1")).unwrap();
    assert_eq!((d.class, d.failed), (AdmissionClass::Elastic, None));
    assert_eq!(d.reason, "safety condition (1) holds for all 1 hard/soft queues at max(N+1=2, N_min=1)");
    // N+1 = 3: a's fair share would drop to 33333.3 < 40000.
    let d = c.admit_tq(tq("t2")).unwrap();
    assert_eq!((d.class, d.failed), (AdmissionClass::Rejected, Some(Condition::Safety)));
    assert_eq!(
        d.reason,
        "safety condition (1) fails for admitted queue 'a' on memory_mb: burst demand 40000 > fair share \
         33333.3333 memory_mb-seconds = capacity 1000 x period 100 s / max(N+1=3, N_min=1)"
    );
    assert_eq!(c.class_of("t2"), None, "rejected queues are not held");
    // LQs are rejected by the same condition, before their own fairness is looked at.
    let d = c.admit_lq(lq("b", 100, 50, 1, 0, 0)).unwrap();
    assert_eq!((d.class, d.failed), (AdmissionClass::Rejected, Some(Condition::Safety)));
    assert_eq!(c.len(), 2);

    // Exactly at the bound passes: 50000 = 1000 x 100 / 2.
    let mut c = controller(1, BopfMode::Bopf);
    c.admit_lq(lq("a", 100, 50, 50_000, 0, 0)).unwrap();
    assert_eq!(c.admit_tq(tq("t1")).unwrap().class, AdmissionClass::Elastic);
    assert_eq!(c.admit_tq(tq("t2")).unwrap().class, AdmissionClass::Rejected);
    c.audit().unwrap();
}

#[test]
fn safety_checks_every_guaranteed_queue_not_only_the_latest() {
    let mut c = controller(1, BopfMode::Bopf);
    // Soft and hard queues are both protected; the tightest one decides.
    c.admit_lq(lq("small", 100, 50, 10_000, 0, 0)).unwrap();
    let big = c.admit_lq(lq("big", 100, 30, 30_000, 0, 0)).unwrap();
    assert_eq!(big.class, AdmissionClass::Soft, "{}", big.reason);
    // N+1 = 3: fair share 33333 still covers 30000; N+1 = 4 gives 25000 < 30000.
    assert_eq!(c.admit_tq(tq("t1")).unwrap().class, AdmissionClass::Elastic);
    let d = c.admit_tq(tq("t2")).unwrap();
    assert_eq!(d.class, AdmissionClass::Rejected);
    assert!(d.reason.contains("admitted queue 'big'"), "{}", d.reason);
    assert!(d.reason.contains("max(N+1=4, N_min=1)"), "{}", d.reason);
}

#[test]
fn fairness_condition_sends_oversized_bursts_to_elastic() {
    let mut c = controller(1, BopfMode::Bopf);
    c.admit_tq(tq("t")).unwrap();
    // N+1 = 2 on vcores: fair share 100 x 10 s / 2 = 500 vcore·s.
    let d = c.admit_lq(lq("ok", 10, 10, 0, 500, 0)).unwrap();
    assert_eq!(d.class, AdmissionClass::Hard, "{}", d.reason);
    c.remove("ok").unwrap();
    let d = c.admit_lq(lq("big", 10, 10, 100, 501, 0)).unwrap();
    assert_eq!((d.class, d.failed), (AdmissionClass::Elastic, Some(Condition::Fairness)));
    assert_eq!(
        d.reason,
        "fairness condition (2) fails on vcores: burst demand 501 > fair share 500 vcores-seconds \
         = capacity 100 x period 10 s / max(N+1=2, N_min=1)"
    );
    // Elastic LQs hold no guarantee: they neither constrain safety nor commit resources.
    assert_eq!(c.guaranteed_rate("big"), None);
    assert_eq!(c.peak_committed_share(), [0.0; DIMS]);
}

#[test]
fn n_min_reserves_fair_shares_for_queues_yet_to_come() {
    let mut c = controller(4, BopfMode::Bopf);
    // With N_min = 4 the very first queue already gets a quarter: 1000 x 100 / 4 = 25000.
    let d = c.admit_lq(lq("a", 100, 100, 25_001, 0, 0)).unwrap();
    assert_eq!(d.class, AdmissionClass::Elastic);
    assert!(d.reason.ends_with("/ max(N+1=1, N_min=4)"), "{}", d.reason);
    c.remove("a").unwrap();
    assert_eq!(c.admit_lq(lq("a", 100, 100, 25_000, 0, 0)).unwrap().class, AdmissionClass::Hard);
    // Safety uses N_min too: up to 4 queues the divisor stays 4, so TQs fit.
    for t in ["t1", "t2", "t3"] {
        assert_eq!(c.admit_tq(tq(t)).unwrap().class, AdmissionClass::Elastic);
    }
    let d = c.admit_tq(tq("t4")).unwrap();
    assert_eq!(d.class, AdmissionClass::Rejected);
    assert!(d.reason.ends_with("/ max(N+1=5, N_min=4)"), "{}", d.reason);
}

#[test]
fn resource_condition_is_checked_in_time_not_only_in_total() {
    let mut c = controller(1, BopfMode::Bopf);
    // a: 800 MB during [0, 20) s of every 100 s.
    assert_eq!(c.admit_lq(lq("a", 100, 20, 16_000, 0, 0)).unwrap().class, AdmissionClass::Hard);
    // b: 400 MB from 10 s on; overlapping a it needs 1200 > 1000.
    let d = c.admit_lq(lq("b", 100, 20, 8_000, 0, 10)).unwrap();
    assert_eq!((d.class, d.failed), (AdmissionClass::Soft, Some(Condition::Resource)));
    assert_eq!(
        d.reason,
        "resource condition (3) fails on memory_mb: committed 0.8 + requested 0.4 > 1.0 (peak of hard \
         commitments over the queue's 500 ON windows); safety (1) and fairness (2) hold"
    );
    // c: same size but ON while a is OFF; the sum of peak rates exceeds capacity, the profile
    // never does. Soft b commits nothing.
    let d = c.admit_lq(lq("c", 100, 20, 8_000, 0, 20)).unwrap();
    assert_eq!((d.class, d.failed), (AdmissionClass::Hard, None));
    assert_eq!(
        d.reason,
        "safety (1), fairness (2) and resource (3) hold; on memory_mb: committed 0 + requested 0.4 <= 1.0 \
         (peak of hard commitments over the queue's 500 ON windows)"
    );
    // Exactly filling what c leaves passes; one MB·s more does not.
    assert_eq!(c.admit_lq(lq("d", 100, 20, 12_001, 0, 20)).unwrap().class, AdmissionClass::Soft);
    let d = c.admit_lq(lq("e", 100, 20, 12_000, 0, 20)).unwrap();
    assert_eq!(d.class, AdmissionClass::Hard, "{}", d.reason);
    assert!(d.reason.contains("committed 0.4 + requested 0.6 <= 1.0"), "{}", d.reason);
    assert!((c.committed_share(20 * S, 40 * S)[0] - 1.0).abs() < 1e-12);
    assert!((c.committed_share(0, 20 * S)[0] - 0.8).abs() < 1e-12);
    assert_eq!(c.committed_share(40 * S, 100 * S)[0], 0.0);
    c.audit().unwrap();
}

#[test]
fn resource_condition_sees_windows_far_in_the_future() {
    let mut c = controller(1, BopfMode::Bopf);
    // Periods 7 s and 5 s with 1 s windows at offsets 0 and 3 s: the first collision is at
    // t = 28 s (a's 5th burst, b's 6th), so only a full scan of the cycles finds it.
    let a = lq("a", 7, 1, 800, 0, 0);
    let mut b = lq("b", 5, 1, 800, 0, 3);
    b.cycles = 5;
    assert_eq!(c.admit_lq(a).unwrap().class, AdmissionClass::Hard);
    assert_eq!(c.assess(&QueueSpec::Lq(b.clone())).unwrap().class, AdmissionClass::Hard);
    b.cycles = 6;
    assert_eq!(c.admit_lq(b).unwrap().class, AdmissionClass::Soft);
}

#[test]
fn coarse_slots_only_ever_make_the_resource_condition_stricter() {
    let at = |resolution_ms| {
        let cfg = AdmissionConfig { capacity: cap(), n_min: 1, mode: BopfMode::Bopf, resolution_ms };
        let mut c = AdmissionController::new(cfg).unwrap();
        let mut a = lq("a", 10, 5, 4000, 0, 0); // [0, 5000) ms at 800 MB
        a.burst.deadline_ms = 4_500;
        a.burst.demand = Resources::new(3600, 0);
        let mut b = lq("b", 10, 5, 4000, 0, 0); // [4600, 9600) ms at 800 MB
        b.start_ms = 4_600;
        // One cycle each: 1 ms slots over 500 cycles would exceed the profile's size limit.
        (a.cycles, b.cycles) = (1, 1);
        c.admit_lq(a).unwrap();
        c.admit_lq(b).unwrap().class
    };
    // The windows never overlap; 1 s slots cannot tell, 100 ms slots can.
    assert_eq!(at(1), AdmissionClass::Hard);
    assert_eq!(at(100), AdmissionClass::Hard);
    assert_eq!(at(1000), AdmissionClass::Soft);
}

#[test]
fn tqs_only_check_safety() {
    let mut c = controller(1, BopfMode::Bopf);
    for i in 0..10 {
        let d = c.admit_tq(tq(&format!("t{i}"))).unwrap();
        assert_eq!(d.class, AdmissionClass::Elastic);
    }
    assert_eq!(c.count(AdmissionClass::Elastic), 10);
    assert_eq!(c.guaranteed_rate("t0"), None);
}

#[test]
fn n_bopf_turns_would_be_soft_queues_elastic() {
    let mut c = controller(1, BopfMode::NBopf);
    c.admit_lq(lq("a", 100, 50, 40_000, 0, 0)).unwrap();
    let d = c.admit_lq(lq("b", 100, 50, 20_000, 0, 25)).unwrap();
    assert_eq!((d.class, d.failed), (AdmissionClass::Elastic, Some(Condition::Resource)));
    assert!(d.reason.starts_with("resource condition (3) fails on memory_mb: committed 0.8 + requested 0.4 > 1.0"));
    assert!(d.reason.ends_with("N-BoPF has no soft class"), "{}", d.reason);
    assert_eq!(c.count(AdmissionClass::Soft), 0);
    // The elastic queue holds no guarantee, so it does not protect itself through safety (1).
    assert_eq!(c.guaranteed_rate("b"), None);
    c.audit().unwrap();
}

/// §5.2.5: one TQ queued from the start and three LQs with identical bursts arriving at 50, 100
/// and 150 s with periods 150, 110 and 60 s land in H, S and E.
///
/// Demands (the paper only says they are identical): on the 40-node testbed (2560 GB, 1280
/// vcores) each burst needs 20 cluster-seconds of memory and 10 of vcores within a 27 s ON
/// period (the paper's average ON period), i.e. 74% of memory while ON.
/// * LQ-0 (N+1 = 2): 20 <= 150/2 cluster-seconds, and H is empty -> H.
/// * LQ-1 (N+1 = 3): 20 <= 110/3 = 36.7, safety for LQ-0 20 <= 150/3; but its window at
///   210-237 s meets LQ-0's at 200-227 s and 0.74 + 0.74 > 1 -> S.
/// * LQ-2 (N+1 = 4): safety holds (20 <= 110/4 = 27.5 for LQ-1) but 20 > 60/4 = 15: its
///   short period makes the same burst exceed its fair share -> E.
fn section_5_2_5(mode: BopfMode) -> (AdmissionController, Vec<Decision>) {
    let capacity = Resources::new(40 * 64 * 1024, 40 * 32);
    let mut c = AdmissionController::new(AdmissionConfig { capacity, n_min: 1, mode, resolution_ms: S }).unwrap();
    let demand = Resources::new(20 * capacity.memory_mb(), 10 * capacity.vcores());
    let mk = |name: &str, start_s: u64, period_s: u64| LqSpec {
        name: name.into(),
        weight: 1.0,
        burst: BurstSpec { period_ms: period_s * S, deadline_ms: 27 * S, demand },
        start_ms: start_s * S,
        cycles: DEFAULT_CYCLES,
    };
    let mut out = vec![c.admit_tq(tq("TQ-0")).unwrap()];
    out.push(c.admit_lq(mk("LQ-0", 50, 150)).unwrap());
    out.push(c.admit_lq(mk("LQ-1", 100, 110)).unwrap());
    out.push(c.admit_lq(mk("LQ-2", 150, 60)).unwrap());
    c.audit().unwrap();
    (c, out)
}

#[test]
fn multi_lq_case_of_section_5_2_5() {
    let (c, d) = section_5_2_5(BopfMode::Bopf);
    let classes: Vec<_> = d.iter().map(|d| d.class).collect();
    use AdmissionClass::*;
    assert_eq!(classes, [Elastic, Hard, Soft, Elastic], "{d:#?}");
    assert!(
        d[2].reason.starts_with("resource condition (3) fails on memory_mb: committed 0.7407 + requested 0.7407 > 1.0"),
        "{}",
        d[2].reason
    );
    assert!(
        d[3].reason
            .starts_with("fairness condition (2) fails on memory_mb: burst demand 52428800 > fair share 39321600"),
        "{}",
        d[3].reason
    );
    assert_eq!(c.guaranteed_rate("LQ-0"), Some(Resources::new(1_941_808, 475)));

    let (_, d) = section_5_2_5(BopfMode::NBopf);
    let classes: Vec<_> = d.iter().map(|d| d.class).collect();
    assert_eq!(classes, [Elastic, Hard, Elastic, Elastic]);
    assert_eq!(d[2].failed, Some(Condition::Resource));
}

#[test]
fn removal_releases_commitments_and_reevaluation_promotes() {
    let (mut c, _) = section_5_2_5(BopfMode::Bopf);
    assert_eq!(c.remove("LQ-0").unwrap(), AdmissionClass::Hard);
    assert_eq!(c.peak_committed_share(), [0.0; DIMS]);
    assert_eq!(c.class_of("LQ-1"), Some(AdmissionClass::Soft), "removal alone changes no class");
    // N = 3 now: LQ-1 moves to H; LQ-2 still exceeds 60/3 = 20? No: 20 <= 20 holds, and its
    // windows meet LQ-1's, so it becomes Soft.
    let changes = c.reevaluate();
    let got: Vec<_> = changes.iter().map(|r| (r.queue.as_str(), r.from, r.to)).collect();
    assert_eq!(
        got,
        [("LQ-1", AdmissionClass::Soft, AdmissionClass::Hard), ("LQ-2", AdmissionClass::Elastic, AdmissionClass::Soft)]
    );
    assert!(changes[0]
        .reason
        .starts_with("resource condition (3) now holds on memory_mb: committed 0 + requested 0.7407 <= 1.0"));
    assert!(changes[1].reason.starts_with("fairness condition (2) now holds; resource condition (3) fails"));
    assert_eq!(
        (c.count(AdmissionClass::Hard), c.count(AdmissionClass::Soft), c.count(AdmissionClass::Elastic)),
        (1, 1, 1)
    );
    c.audit().unwrap();
    assert!(c.reevaluate().is_empty(), "re-evaluation is idempotent");
    c.remove("LQ-1").unwrap();
    let changes = c.reevaluate();
    assert_eq!(changes.len(), 1);
    assert_eq!((changes[0].from, changes[0].to), (AdmissionClass::Soft, AdmissionClass::Hard));
    c.audit().unwrap();
}

#[test]
fn window_at_and_rates() {
    let q = lq("q", 10, 4, 400, 8, 100);
    assert_eq!(q.window_at(99_999), None);
    assert_eq!(q.window_at(100_000), Some((0, 100_000, 104_000)));
    assert_eq!(q.window_at(103_999), Some((0, 100_000, 104_000)));
    assert_eq!(q.window_at(104_000), None);
    assert_eq!(q.window_at(112_000), Some((1, 110_000, 114_000)));
    assert_eq!(q.window_at(100_000 + 500 * 10_000), None, "after the last cycle");
    assert_eq!(q.rate(), [100.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
    let odd = lq("o", 10, 3, 10, 1, 0);
    assert_eq!(odd.rate_ceil(), Resources::new(4, 1));
}

#[test]
fn specs_and_decisions_read_and_print_as_json() {
    let cfg: AdmissionConfig =
        serde_json::from_str(r#"{"capacity": [1000, 100, 0, 0, 0, 0], "mode": "n_bopf"}"#).unwrap();
    assert_eq!(cfg, AdmissionConfig { mode: BopfMode::NBopf, ..AdmissionConfig::new(cap()) });
    let specs: Vec<QueueSpec> = serde_json::from_str(
        r#"[{"type": "tq", "name": "batch", "weight": 2.0},
            {"type": "lq", "name": "stream", "start_ms": 5000,
             "burst": {"period_ms": 60000, "deadline_ms": 20000, "demand": [60000, 100, 0, 0, 0, 0]}}]"#,
    )
    .unwrap();
    assert_eq!(specs[0], QueueSpec::Tq(TqSpec { name: "batch".into(), weight: 2.0 }));
    let QueueSpec::Lq(s) = &specs[1] else { panic!() };
    assert_eq!((s.weight, s.cycles, s.start_ms), (1.0, DEFAULT_CYCLES, 5000));
    let mut c = AdmissionController::new(cfg).unwrap();
    for s in specs.clone() {
        c.admit(s).unwrap();
    }
    let back: Vec<QueueSpec> = c.queues().iter().map(|q| q.spec.clone()).collect();
    assert_eq!(back, specs);
    let d = c.assess(&QueueSpec::Tq(tq("x"))).unwrap();
    let json = serde_json::to_string(&d).unwrap();
    assert!(json.contains(r#""class":"elastic""#), "{json}");
    assert_eq!(serde_json::from_str::<Decision>(&json).unwrap(), d);
}

// ---------------------------------------------------------------------------------------------
// Property tests against a from-scratch reading of the paper.
// ---------------------------------------------------------------------------------------------

fn rate_fp(lq: &LqSpec) -> [i64; DIMS] {
    let mut out = [0; DIMS];
    for k in 0..DIMS {
        let num = i128::from(lq.burst.demand.0[k]) * 1000 * i128::from(RATE_SCALE);
        let den = i128::from(lq.burst.deadline_ms);
        out[k] = ((num + den - 1) / den) as i64;
    }
    out
}

fn windows_ms(lq: &LqSpec) -> Vec<(u64, u64)> {
    (0..u64::from(lq.cycles))
        .map(|n| {
            let a = lq.start_ms + n * lq.burst.period_ms;
            (a, a + lq.burst.deadline_ms)
        })
        .collect()
}

/// Algorithm 1 evaluated naively over the whole admitted list, the way the paper states it.
fn naive_class(cfg: &AdmissionConfig, admitted: &[(QueueSpec, AdmissionClass)], spec: &QueueSpec) -> AdmissionClass {
    let m = (admitted.len() as u64 + 1).max(u64::from(cfg.n_min));
    let fits = |b: &BurstSpec| {
        (0..DIMS).all(|k| {
            i128::from(b.demand.0[k]) * i128::from(m) * 1000 <= i128::from(cfg.capacity.0[k]) * i128::from(b.period_ms)
        })
    };
    for (s, c) in admitted {
        if let (QueueSpec::Lq(l), AdmissionClass::Hard | AdmissionClass::Soft) = (s, c) {
            if !fits(&l.burst) {
                return AdmissionClass::Rejected;
            }
        }
    }
    let QueueSpec::Lq(new) = spec else {
        return AdmissionClass::Elastic;
    };
    if !fits(&new.burst) {
        return AdmissionClass::Elastic;
    }
    let res = cfg.resolution_ms;
    let slots = |l: &LqSpec| -> Vec<(u64, u64)> {
        windows_ms(l).into_iter().map(|(a, b)| (a / res, b.div_ceil(res))).collect()
    };
    let hard: Vec<(Vec<SlotRange>, [i64; DIMS])> = admitted
        .iter()
        .filter_map(|(s, c)| match (s, c) {
            (QueueSpec::Lq(l), AdmissionClass::Hard) => Some((slots(l), rate_fp(l))),
            _ => None,
        })
        .collect();
    let mine = slots(new);
    let mut candidates: Vec<u64> = mine.iter().map(|r| r.0).collect();
    for (ranges, _) in &hard {
        for r in ranges {
            if mine.iter().any(|w| w.0 <= r.0 && r.0 < w.1) {
                candidates.push(r.0);
            }
        }
    }
    let want = rate_fp(new);
    let ok = candidates.iter().all(|&s| {
        let mut sum = want;
        for (ranges, rate) in &hard {
            if ranges.iter().any(|r| r.0 <= s && s < r.1) {
                for k in 0..DIMS {
                    sum[k] += rate[k];
                }
            }
        }
        (0..DIMS).all(|k| sum[k] <= cfg.capacity.0[k] * RATE_SCALE)
    });
    match (ok, cfg.mode) {
        (true, _) => AdmissionClass::Hard,
        (false, BopfMode::Bopf) => AdmissionClass::Soft,
        (false, BopfMode::NBopf) => AdmissionClass::Elastic,
    }
}

/// Condition (3)'s promise in continuous time, from the specs alone: at every instant the hard
/// queues' guaranteed rates fit the capacity.
fn hard_rates_fit_in_continuous_time(
    cfg: &AdmissionConfig,
    admitted: &[(QueueSpec, AdmissionClass)],
) -> Result<(), String> {
    let hard: Vec<(&LqSpec, Vec<(u64, u64)>)> = admitted
        .iter()
        .filter_map(|(s, c)| match (s, c) {
            (QueueSpec::Lq(l), AdmissionClass::Hard) => Some((l, windows_ms(l))),
            _ => None,
        })
        .collect();
    for (_, ws) in &hard {
        for &(t, _) in ws {
            let mut sum = [0i64; DIMS];
            for (l, ws2) in &hard {
                if ws2.iter().any(|&(a, b)| a <= t && t < b) {
                    let r = rate_fp(l);
                    for k in 0..DIMS {
                        sum[k] += r[k];
                    }
                }
            }
            if (0..DIMS).any(|k| sum[k] > cfg.capacity.0[k] * RATE_SCALE) {
                return Err(format!("hard rates {sum:?} exceed capacity at {t} ms"));
            }
        }
    }
    Ok(())
}

#[derive(Clone, Debug)]
enum Op {
    Lq { period_ms: u64, deadline_pct: u64, mem_pct: i64, vc_pct: i64, start_ms: u64, cycles: u32 },
    Tq,
    Remove(usize),
    Reevaluate,
}

fn op_strategy() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (1_000u64..20_000, 5u64..=100, 0i64..25, 0i64..25, 0u64..30_000, 1u32..6).prop_map(
            |(period_ms, deadline_pct, mem_pct, vc_pct, start_ms, cycles)| Op::Lq {
                period_ms, deadline_pct, mem_pct, vc_pct, start_ms, cycles
            }
        ),
        2 => Just(Op::Tq),
        2 => any::<usize>().prop_map(Op::Remove),
        1 => Just(Op::Reevaluate),
    ]
}

fn config_strategy() -> impl Strategy<Value = AdmissionConfig> {
    (1u32..5, prop::bool::ANY, prop::sample::select(vec![1u64, 250, 1000])).prop_map(|(n_min, nb, resolution_ms)| {
        AdmissionConfig {
            capacity: cap(),
            n_min,
            mode: if nb { BopfMode::NBopf } else { BopfMode::Bopf },
            resolution_ms,
        }
    })
}

fn make_lq(name: String, op: &Op) -> LqSpec {
    let Op::Lq { period_ms, deadline_pct, mem_pct, vc_pct, start_ms, cycles } = *op else { unreachable!() };
    // Demands as a percentage of the cluster's resource-time per period.
    let per = |c: i64, pct: i64| c * period_ms as i64 / 1000 * pct / 100;
    let mut demand = Resources::new(per(1000, mem_pct), per(100, vc_pct));
    if demand.is_zero() {
        demand = Resources::new(1, 0);
    }
    LqSpec {
        name,
        weight: 1.0,
        burst: BurstSpec { period_ms, deadline_ms: (period_ms * deadline_pct / 100).max(1), demand },
        start_ms,
        cycles,
    }
}

/// Everything observable about the controller's state: classes by queue, counts per class,
/// committed-profile length and its slots.
type Snapshot = (Vec<(String, AdmissionClass)>, [usize; 3], usize, Vec<[i64; DIMS]>);

/// Everything observable about the controller's state, for before/after comparisons.
fn snapshot(c: &AdmissionController) -> Snapshot {
    let mut classes: Vec<_> = c.queues().iter().map(|q| (q.spec.name().to_string(), q.class)).collect();
    classes.sort();
    let slots: Vec<[i64; DIMS]> = (0..200).map(|s| c.profile().value_at(s)).collect();
    (classes, c.counts, c.guaranteed.len(), slots)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Every admission matches the naive reading of the paper, and no admission, removal or
    /// re-evaluation ever breaks a hard or soft commitment.
    #[test]
    fn admission_matches_the_paper_and_keeps_commitments(
        cfg in config_strategy(),
        ops in prop::collection::vec(op_strategy(), 1..40),
    ) {
        let mut c = AdmissionController::new(cfg.clone()).unwrap();
        let mut model: Vec<(QueueSpec, AdmissionClass)> = Vec::new();
        for (i, op) in ops.iter().enumerate() {
            match op {
                Op::Lq { .. } | Op::Tq => {
                    let spec = match op {
                        Op::Tq => QueueSpec::Tq(tq(&format!("q{i}"))),
                        _ => QueueSpec::Lq(make_lq(format!("q{i}"), op)),
                    };
                    let want = naive_class(&cfg, &model, &spec);
                    let before: Vec<_> = model.iter().map(|(s, _)| (s.name().to_string(), c.class_of(s.name()))).collect();
                    let got = c.admit(spec.clone()).unwrap();
                    prop_assert_eq!(got.class, want, "{}", got.reason);
                    for (name, class) in before {
                        prop_assert_eq!(c.class_of(&name), class, "admission changed an earlier class");
                    }
                    if got.class != AdmissionClass::Rejected {
                        model.push((spec, got.class));
                    }
                }
                Op::Remove(k) => {
                    if !model.is_empty() {
                        let (spec, class) = model.remove(k % model.len());
                        prop_assert_eq!(c.remove(spec.name()).unwrap(), class);
                    }
                }
                Op::Reevaluate => {
                    for r in c.reevaluate() {
                        let e = model.iter_mut().find(|(s, _)| s.name() == r.queue).unwrap();
                        prop_assert_eq!(e.1, r.from);
                        e.1 = r.to;
                    }
                }
            }
            prop_assert_eq!(c.audit(), Ok(()));
            prop_assert_eq!(hard_rates_fit_in_continuous_time(&cfg, &model), Ok(()));
            let classes: Vec<_> = model.iter().map(|(s, class)| (s.name(), Some(*class))).collect();
            let held: Vec<_> = model.iter().map(|(s, _)| (s.name(), c.class_of(s.name()))).collect();
            prop_assert_eq!(held, classes);
            prop_assert_eq!(c.len(), model.len());
        }
    }

    /// Admitting a queue and removing it again leaves the state exactly as it was, and the same
    /// queue gets the same decision the second time.
    #[test]
    fn removal_restores_the_previous_state(
        cfg in config_strategy(),
        setup in prop::collection::vec(op_strategy(), 0..25),
        probe in op_strategy(),
    ) {
        let mut c = AdmissionController::new(cfg).unwrap();
        for (i, op) in setup.iter().enumerate() {
            match op {
                Op::Lq { .. } => { c.admit_lq(make_lq(format!("q{i}"), op)).unwrap(); }
                Op::Tq => { c.admit_tq(tq(&format!("q{i}"))).unwrap(); }
                _ => {}
            }
        }
        let probe = match probe {
            Op::Lq { .. } => QueueSpec::Lq(make_lq("probe".into(), &probe)),
            _ => QueueSpec::Tq(tq("probe")),
        };
        let before = snapshot(&c);
        let first = c.admit(probe.clone()).unwrap();
        if first.class != AdmissionClass::Rejected {
            prop_assert_eq!(c.remove("probe").unwrap(), first.class);
        }
        prop_assert_eq!(snapshot(&c), before);
        prop_assert_eq!(c.admit(probe).unwrap(), first);
    }
}
