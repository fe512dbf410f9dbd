//! Speculative slot reservation: the Eq. (2)-(4) numbers, the Pareto fit, every case of
//! Algorithm 1, straggler copies and their races, and held slots.

use tidal_core::reservation::{
    Completion, Ended, Pareto, PreReserve, ReservationError, ReservationSettings, Slot, SlotAction, StageReservation,
    TaskEntry, Transition,
};
use tidal_core::Resources;

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * b.abs().max(1.0)
}

fn slot(node: u32) -> Slot {
    Slot { node, resources: Resources::new(1024, 1) }
}

/// Prior shape 2 and no fitting, so deadlines are hand-computable.
fn settings(p: f64, r: f64) -> ReservationSettings {
    ReservationSettings { isolation_probability: p, prereserve_threshold: r, prior_shape: 2.0, min_samples: 1000 }
}

#[test]
fn eq2_and_eq4_match_hand_computed_values() {
    // α = 2, t_m = 1, N = 1, P = 0.75: D = (1 - 0.75)^(-1/2) = 2; E[U] >= 2·0.5 - 0.25 = 0.75.
    let d = Pareto::new(2.0, 1.0).unwrap();
    assert!(close(d.deadline(0.75, 1).unwrap(), 2.0, 1e-12));
    assert!(close(d.utilization_at(2.0), 0.75, 1e-12));
    assert!(close(d.utilization_bound(0.75, 1).unwrap(), 0.75, 1e-12));
    // α = 1.5, t_m = 2, N = 4, P = 0.5: 1 - 0.5^(1/4) = 0.159104; D = 2 · 0.159104^(-2/3) = 6.811509;
    // E[U] >= 3 · 0.159104^(2/3) - 2 · 0.159104 = 0.562655.
    let p = Pareto::new(1.5, 2.0).unwrap();
    let d46 = p.deadline(0.5, 4).unwrap();
    assert!(close(d46, 6.811_509_277, 1e-9), "{d46}");
    assert!(close(p.isolation_probability(d46, 4), 0.5, 1e-12));
    assert!(close(p.utilization_bound(0.5, 4).unwrap(), 0.562_654_877, 1e-9));
    // Eq. (4) is Eq. (3) at the Eq. (2) deadline.
    assert!(close(p.utilization_at(d46), p.utilization_bound(0.5, 4).unwrap(), 1e-12));
    // The extremes: no isolation costs nothing, full isolation holds forever.
    assert_eq!(p.deadline(0.0, 4).unwrap(), 2.0);
    assert!(close(p.utilization_bound(0.0, 4).unwrap(), 1.0, 1e-12));
    assert_eq!(p.deadline(1.0, 4).unwrap(), f64::INFINITY);
    assert_eq!(p.utilization_bound(1.0, 4).unwrap(), 0.0);
    // Monotone: more isolation, less utilization.
    let mut last = 1.0 + 1e-12;
    for i in 0..=20 {
        let u = p.utilization_bound(i as f64 / 20.0, 20).unwrap();
        assert!(u <= last, "Eq. (4) must decrease in P");
        last = u;
    }
}

#[test]
fn out_of_range_settings_are_typed_errors_naming_the_field() {
    let p = Pareto::new(1.5, 2.0).unwrap();
    for bad in [-0.1, 1.5, f64::NAN] {
        assert!(matches!(
            p.deadline(bad, 4),
            Err(ReservationError::InvalidSetting { field: "isolation-probability", .. })
        ));
    }
    let field = |s: ReservationSettings| match s.validate() {
        Err(ReservationError::InvalidSetting { field, .. }) => field,
        other => panic!("expected an error, got {other:?}"),
    };
    assert_eq!(field(settings(1.2, 0.5)), "isolation-probability");
    assert_eq!(field(settings(0.5, 0.0)), "prereserve-threshold");
    assert_eq!(field(settings(0.5, -1.0)), "prereserve-threshold");
    assert_eq!(field(settings(0.5, 1.5)), "prereserve-threshold");
    assert_eq!(field(ReservationSettings { prior_shape: 1.0, ..settings(0.5, 0.5) }), "prior-shape");
    assert!(StageReservation::new(settings(2.0, 0.5), 4, None, false).is_err());
    assert!(StageReservation::new(settings(0.5, 0.5), 0, None, false).is_err());
    assert!(Pareto::new(0.0, 1.0).is_err());
    assert!(Pareto::new(1.5, -1.0).is_err());
    let err = Pareto::new(1.0, 1.0).unwrap().utilization_bound(0.5, 2).unwrap_err();
    assert!(err.to_string().contains("pareto-shape"), "{err}");
}

#[test]
fn pareto_fit_is_the_censored_maximum_likelihood_estimate() {
    // t_m = 1, α = 3 / (ln 2 + ln 4).
    let f = Pareto::fit(&[1.0, 2.0, 4.0], &[]).unwrap();
    assert_eq!(f.scale, 1.0);
    assert!(close(f.shape, 3.0 / (2f64.ln() + 4f64.ln()), 1e-12));
    // A task still running at 3 s adds ln(3/2) to the spread (and is not a finished sample);
    // one running for less than t_m adds nothing.
    let g = Pareto::fit(&[2.0, 4.0], &[3.0, 1.0]).unwrap();
    assert!(close(g.shape, 2.0 / (2f64.ln() + 1.5f64.ln()), 1e-12), "{g:?}");
    // Heavier than a finite mean allows: kept just above 1.
    assert_eq!(Pareto::fit(&[1.0, 100.0], &[]).unwrap().shape, tidal_core::reservation::MIN_SHAPE);
    assert!(Pareto::fit(&[], &[3.0]).is_none());
    assert!(Pareto::fit(&[2.0], &[1.0]).is_none());

    // Recovers the parameters of a large sample drawn by inverse CDF.
    let (alpha, tm) = (1.6, 3.0);
    let mut x = 12345u64;
    let samples: Vec<f64> = (0..20_000)
        .map(|_| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let u = ((x >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
            tm * (1.0 - u).powf(-1.0 / alpha)
        })
        .collect();
    let fit = Pareto::fit(&samples, &[]).unwrap();
    assert!(close(fit.shape, alpha, 0.04), "{fit:?}");
    assert!(close(fit.scale, tm, 0.01), "{fit:?}");
}

/// Starts `m` tasks (containers 0..m) at time 0 on nodes 0..m; a fresh stage gives task `t`
/// entry `t`.
fn stage(s: ReservationSettings, m: u32, n: Option<u32>, is_final: bool) -> StageReservation {
    let mut st = StageReservation::new(s, m, n, is_final).unwrap();
    for t in 0..m as u64 {
        assert_eq!(st.task_started(t, slot(t as u32), 0.0), t as TaskEntry);
    }
    st
}

/// Container `container` of the task at `entry` finished and completed the task.
fn complete(st: &mut StageReservation, entry: TaskEntry, container: u64, now: f64) -> Completion {
    match st.container_ended(entry, container, true, now).unwrap() {
        Ended::Completed(c) => c,
        other => panic!("container {container} did not complete its task: {other:?}"),
    }
}

/// Task `t`'s own container finished.
fn finish(st: &mut StageReservation, t: u64, now: f64) -> Completion {
    complete(st, t as TaskEntry, t, now)
}

fn held(a: SlotAction) -> Option<(u32, f64)> {
    match a {
        SlotAction::Hold { slot, until } => Some((slot.node, until)),
        SlotAction::Release { .. } => None,
    }
}

#[test]
fn same_width_holds_every_slot_until_the_eq2_deadline() {
    let mut st = stage(settings(0.75, 0.5), 4, Some(4), false);
    assert_eq!(st.transition(), Transition::Same);
    let c = finish(&mut st, 0, 1.0);
    // Prior α = 2, t_m = the first duration (1 s), N = 4, P = 0.75.
    let d = (1.0 - 0.75f64.powf(0.25)).powf(-0.5);
    assert!(close(d, 3.796_080_985, 1e-9));
    let (node, until) = held(c.slot).unwrap();
    assert_eq!(node, 0);
    assert!(close(until, d, 1e-12));
    assert_eq!(c.pre_reserve, None);
    for t in 1..4 {
        assert!(held(finish(&mut st, t, 1.5).slot).is_some());
    }
    assert_eq!(st.idle_slots().len(), 4);
    // Unknown width behaves like m = n.
    let mut unknown = stage(settings(0.75, 0.5), 2, None, false);
    assert!(held(finish(&mut unknown, 1, 2.0).slot).is_some());
}

#[test]
fn narrower_next_stage_releases_the_first_m_minus_n() {
    let mut st = stage(settings(0.5, 0.5), 4, Some(2), false);
    assert_eq!(st.transition(), Transition::Narrower { release: 2 });
    let actions: Vec<SlotAction> = (0..4).map(|t| finish(&mut st, t, 1.0 + t as f64).slot).collect();
    assert!(matches!(actions[0], SlotAction::Release { slot } if slot.node == 0));
    assert!(matches!(actions[1], SlotAction::Release { slot } if slot.node == 1));
    assert!(held(actions[2]).is_some() && held(actions[3]).is_some());
    assert_eq!(st.idle_slots().iter().map(|s| s.node).collect::<Vec<_>>(), vec![2, 3]);
}

#[test]
fn wider_next_stage_pre_reserves_once_past_threshold_r() {
    let mut st = stage(settings(0.5, 0.5), 4, Some(7), false);
    assert_eq!(st.transition(), Transition::Wider { extra: 3 });
    let c1 = finish(&mut st, 0, 1.0);
    assert!(held(c1.slot).is_some());
    assert_eq!(c1.pre_reserve, None, "1/4 finished is below R = 0.5");
    let c2 = finish(&mut st, 1, 1.2);
    assert!(held(c2.slot).is_some());
    let until = st.deadline().unwrap();
    assert_eq!(c2.pre_reserve, Some(PreReserve { count: 3, until }), "2/4 reaches R");
    assert_eq!(finish(&mut st, 2, 1.3).pre_reserve, None, "pre-reserved only once");
}

#[test]
fn final_stage_releases_everything() {
    let mut st = stage(settings(1.0, 0.5), 3, Some(9), true);
    assert_eq!(st.transition(), Transition::Final);
    for t in 0..3 {
        assert!(matches!(finish(&mut st, t, 1.0).slot, SlotAction::Release { .. }));
    }
    assert!(st.idle_slots().is_empty());
}

#[test]
fn idle_reserved_slots_run_straggler_copies_and_the_first_copy_wins() {
    let mut st = stage(settings(1.0, 0.5), 4, Some(4), false);
    finish(&mut st, 0, 1.0);
    assert!(st.straggler_candidates().is_empty(), "3 running > 1 idle");
    finish(&mut st, 1, 1.1);
    assert_eq!(st.straggler_candidates(), vec![2, 3], "2 running <= 2 idle");
    // Every task has started, so a new container is a copy of the oldest running task.
    assert_eq!(st.copy_started(10, slot(0)), Some(2));
    assert_eq!(st.straggler_candidates(), vec![3]);
    assert_eq!(st.copy_started(11, slot(1)), Some(3));
    assert_eq!(st.copy_started(12, slot(7)), None, "every running task has a copy");
    // The copy of 3 finishes first: its slot is the winner's; the original is the loser, and
    // its slot is decided once it ends.
    let c = complete(&mut st, 3, 11, 2.0);
    assert_eq!(held(c.slot).unwrap().0, 1);
    assert_eq!(c.loser, Some((3, slot(3))));
    assert_eq!(st.container_ended(3, 11, true, 2.0), Err(ReservationError::UnknownTask(11)), "the winner ended once");
    let Ok(Ended::Freed(freed)) = st.container_ended(3, 3, true, 2.1) else { panic!("the loser frees its slot") };
    assert_eq!(held(freed).unwrap().0, 3);
    // The original of 2 is lost: its copy carries on as the task.
    assert_eq!(st.container_ended(2, 2, false, 2.5), Ok(Ended::Lost));
    assert_eq!(st.running_tasks(), 1);
    let c = complete(&mut st, 2, 10, 3.0);
    assert_eq!(held(c.slot).unwrap().0, 0);
    assert_eq!(c.loser, None);
    assert_eq!(st.running_tasks(), 0);
    assert_eq!(st.container_ended(2, 9, true, 2.0), Err(ReservationError::UnknownTask(9)));
    // Entries are reused once their task and its copy have ended.
    assert_eq!(st.task_started(20, slot(0), 3.0), 2);
}

#[test]
fn a_lost_copy_leaves_the_original_running_alone() {
    let mut st = stage(settings(1.0, 0.5), 2, Some(2), false);
    finish(&mut st, 0, 1.0);
    assert_eq!(st.copy_started(10, slot(0)), Some(1));
    assert_eq!(st.container_ended(1, 10, false, 1.5), Ok(Ended::Lost));
    assert_eq!(st.straggler_candidates(), vec![1], "task 1 may get a copy again");
    let c = finish(&mut st, 1, 2.0);
    assert_eq!(c.loser, None);
}

#[test]
fn a_container_is_a_task_while_the_stage_has_tasks_to_start() {
    let mut st = StageReservation::new(settings(1.0, 0.5), 3, Some(3), false).unwrap();
    st.task_started(0, slot(0), 0.0);
    st.task_started(1, slot(1), 0.0);
    assert_eq!(st.copy_started(10, slot(5)), None, "task 2 is still to start");
    st.task_started(2, slot(2), 0.0);
    finish(&mut st, 0, 1.0);
    assert_eq!(st.container_ended(1, 1, false, 1.0), Ok(Ended::Lost), "lost without a copy");
    assert_eq!(st.running_tasks(), 1);
    // One finished, one running: the lost task is still to start again.
    assert_eq!(st.copy_started(10, slot(5)), None);
}

#[test]
fn held_slots_carry_the_stage_deadline_and_can_be_dropped() {
    let mut st = stage(settings(0.5, 0.5), 2, Some(2), false);
    finish(&mut st, 0, 1.0);
    let d = st.deadline().unwrap();
    assert!(d.is_finite() && d > 1.0);
    let SlotAction::Hold { until, .. } = finish(&mut st, 1, 1.5).slot else { panic!("held") };
    assert_eq!(until, st.deadline().unwrap());
    assert!(st.drop_slot(&slot(1)));
    assert!(!st.drop_slot(&slot(1)), "already dropped");
    assert_eq!(st.idle_slots(), &[slot(0)]);
}

#[test]
fn the_fit_replaces_the_prior_and_the_bound_follows_it() {
    let s = ReservationSettings { min_samples: 2, ..settings(0.5, 0.5) };
    let mut st = stage(s, 8, Some(8), false);
    finish(&mut st, 0, 1.0);
    assert_eq!(st.pareto(), Pareto { shape: 2.0, scale: 1.0 });
    finish(&mut st, 1, 2.0);
    // Censored fit at t = 2: t_m = 1, finished spread ln 2, six tasks running for 2 s.
    let want = 2.0 / (2f64.ln() + 6.0 * 2f64.ln());
    assert!(close(st.pareto().shape, want.max(tidal_core::reservation::MIN_SHAPE), 1e-12), "{:?}", st.pareto());
    let bound = st.pareto().utilization_bound(0.5, 8).unwrap();
    assert!(close(st.utilization_bound(), bound, 1e-12));
}
