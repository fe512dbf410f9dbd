//! UWFQ two-level virtual time: arrivals, users leaving and arriving, jobs finishing inside
//! an update interval, the grace period, weights, real finishes, and the app policy wired into
//! the scheduler.

use tidal_core::config::{parse_queue_file, AppPolicyKind, Settings};
use tidal_core::ids::ANY;
use tidal_core::request::Ask;
use tidal_core::uwfq::{UwfqClock, UwfqError, UwfqSettings};
use tidal_core::{Decision, Resources, Scheduler};

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

fn order(c: &UwfqClock) -> Vec<(u64, f64)> {
    c.order().collect()
}

#[test]
fn a_users_jobs_run_one_after_another_in_their_ujf_finish_order() {
    let mut c = UwfqClock::new(1.0, 0.0).unwrap();
    // Same arrival, slot-times 4 and 2: under UJF the 2 finishes first, so it goes first, and
    // the 4 follows at the user's rate: deadlines 2 and 6.
    assert!(close(c.job_arrived(0.0, 1, "a", 1.0, 4.0).unwrap(), 4.0));
    assert!(close(c.job_arrived(0.0, 2, "a", 1.0, 2.0).unwrap(), 2.0));
    assert_eq!(order(&c), vec![(2, 2.0), (1, 6.0)]);
    assert!(close(c.virtual_finish(1).unwrap(), 6.0));
}

#[test]
fn order_merges_users_by_global_deadline() {
    let mut c = UwfqClock::new(2.0, 0.0).unwrap();
    c.job_arrived(0.0, 1, "a", 1.0, 1.0).unwrap();
    c.job_arrived(0.0, 2, "a", 1.0, 5.0).unwrap();
    c.job_arrived(0.0, 3, "b", 1.0, 3.0).unwrap();
    let o = order(&c);
    assert_eq!(o.iter().map(|e| e.0).collect::<Vec<_>>(), vec![1, 3, 2]);
    assert!(close(o[2].1, 6.0));
}

#[test]
fn users_leaving_speed_up_global_virtual_time_and_new_users_start_from_it() {
    // R = 2, users a (2 units) and b (6 units): V_g runs at 2/2 = 1 until a runs out at t = 2,
    // then at 2/1 = 2 until b runs out at V_g = 6, t = 4. Under UJF b gets one slot for 2 s
    // and two slots for 2 s: it finishes at t = 4 too.
    let mut c = UwfqClock::new(2.0, 0.0).unwrap();
    c.job_arrived(0.0, 1, "a", 1.0, 2.0).unwrap();
    c.job_arrived(0.0, 2, "b", 1.0, 6.0).unwrap();
    assert_eq!(c.active_users(), 2);
    c.advance(1.0);
    assert!(close(c.global_virtual_time(), 1.0));
    c.advance(3.0);
    assert!(close(c.global_virtual_time(), 4.0));
    assert!(!c.is_user_active("a") && c.is_user_active("b"));
    c.advance(5.0);
    assert!(close(c.global_virtual_time(), 6.0));
    assert_eq!(c.active_users(), 0);
    // Idle reference: virtual time stands still; a new user starts at V_g = 6.
    assert!(close(c.job_arrived(7.0, 3, "c", 1.0, 1.0).unwrap(), 7.0));
    // a arrives again, long after its grace: a fresh busy period from V_g.
    assert!(close(c.job_arrived(7.0, 4, "a", 1.0, 3.0).unwrap(), 9.0));
    assert_eq!(c.active_users(), 2);
}

#[test]
fn jobs_finishing_inside_an_update_interval_change_the_within_user_rate() {
    // One user, R = 1, three jobs of 1, 2 and 3 at t = 0. Within-user GPS: each runs at 1/3
    // until the 1 is done at t = 3 (V_u = 1), then at 1/2 until the 2 is done at t = 5 (V_u =
    // 2), then the 3 alone until t = 6. No event happens in between: the update at t = 5.5 has
    // to account for both departures.
    let mut c = UwfqClock::new(1.0, 0.0).unwrap();
    for (id, l) in [(1, 1.0), (2, 2.0), (3, 3.0)] {
        c.job_arrived(0.0, id, "a", 1.0, l).unwrap();
    }
    assert!(close(c.user_virtual_time(5.5, "a").unwrap(), 2.5));
    assert_eq!(c.in_reference(5.5, 1), Some(false));
    assert_eq!(c.in_reference(5.5, 2), Some(false));
    assert_eq!(c.in_reference(5.5, 3), Some(true));
    // Leaving the reference does not move deadlines (1, 3 and 6).
    let d: Vec<f64> = order(&c).iter().map(|e| e.1).collect();
    assert!(close(d[0], 1.0) && close(d[1], 3.0) && close(d[2], 6.0), "{d:?}");
    assert!(c.is_user_active("a"));
    c.advance(6.0);
    assert!(!c.is_user_active("a"));
}

#[test]
fn an_arrival_mid_interval_gets_the_user_virtual_time_of_that_moment() {
    let mut c = UwfqClock::new(1.0, 0.0).unwrap();
    c.job_arrived(0.0, 1, "a", 1.0, 1.0).unwrap();
    c.job_arrived(0.0, 2, "a", 1.0, 3.0).unwrap();
    // Job 1 leaves the reference at t = 2 (V_u = 1); job 2 then runs alone: V_u = 2 at t = 3.
    assert!(close(c.user_virtual_time(3.0, "a").unwrap(), 2.0));
    c.job_arrived(3.0, 3, "a", 1.0, 0.5).unwrap();
    // Job 3: D_user = 2 + 0.5 < job 2's 3, so it is ordered before job 2 and delays it by 0.5.
    let o = order(&c);
    assert_eq!(o.iter().map(|e| e.0).collect::<Vec<_>>(), vec![1, 3, 2]);
    assert!(close(o[1].1, 1.5) && close(o[2].1, 4.5), "{o:?}");
}

#[test]
fn weights_divide_slot_time() {
    // R = 3, a has weight 2 and 4 units, b weight 1 and 2 units: a runs at 2, b at 1, both end
    // at t = 2 with deadline 2.
    let mut c = UwfqClock::new(3.0, 0.0).unwrap();
    assert!(close(c.job_arrived(0.0, 1, "a", 2.0, 4.0).unwrap(), 2.0));
    assert!(close(c.job_arrived(0.0, 2, "b", 1.0, 2.0).unwrap(), 2.0));
    c.advance(1.999);
    assert_eq!(c.active_users(), 2);
    c.advance(2.0);
    assert_eq!(c.active_users(), 0);
}

/// User a (1 unit) runs out at t = 1 beside b (10 units); V_g then runs at 2 (R = 2): 2 at
/// t = 1.5. a's next job of 3 units arrives at t = 1.5.
fn grace_case(grace: f64) -> (UwfqClock, f64) {
    let mut c = UwfqClock::new(2.0, grace).unwrap();
    c.job_arrived(0.0, 1, "a", 1.0, 1.0).unwrap();
    c.job_arrived(0.0, 2, "b", 1.0, 10.0).unwrap();
    c.advance(1.5);
    assert!(!c.is_user_active("a"));
    assert!(close(c.global_virtual_time(), 2.0));
    let d = c.job_arrived(1.5, 3, "a", 1.0, 3.0).unwrap();
    (c, d)
}

#[test]
fn grace_period_revives_a_user_with_its_original_arrival() {
    // Within the grace period a continues its busy period: deadline 1 + 3 = 4, not 2 + 3.
    let (c, d) = grace_case(2.0);
    assert!(close(d, 4.0), "{d}");
    assert!(c.is_user_active("a"));
    assert!(close(c.user_virtual_end("a").unwrap(), 4.0));
    // Past the grace period: a new busy period from the current V_g.
    let (_, d) = grace_case(0.1);
    assert!(close(d, 5.0), "{d}");
}

#[test]
fn a_revived_user_whose_work_is_already_behind_outlives_at_once() {
    let mut c = UwfqClock::new(2.0, 5.0).unwrap();
    c.job_arrived(0.0, 1, "a", 1.0, 1.0).unwrap();
    c.job_arrived(0.0, 2, "b", 1.0, 10.0).unwrap();
    c.advance(3.0); // V_g = 1 + 2·2 = 5
    let d = c.job_arrived(3.0, 3, "a", 1.0, 0.5).unwrap();
    assert!(close(d, 1.5), "{d}");
    assert!(!c.is_user_active("a"));
    assert_eq!(c.in_reference(3.0, 3), Some(false));
    assert_eq!(order(&c)[0].0, 1, "job 1 (deadline 1) outlived its reference finish and goes first");
    assert!(close(order(&c)[1].1, 1.5));
}

#[test]
fn real_finishes_leave_the_order_but_not_the_reference() {
    let mut c = UwfqClock::new(1.0, 0.0).unwrap();
    c.job_arrived(0.0, 1, "a", 1.0, 2.0).unwrap();
    c.job_arrived(0.0, 2, "b", 1.0, 2.0).unwrap();
    // a's job is served first and done at t = 0.5, far ahead of its reference finish (t = 4).
    c.job_finished(0.5, 1).unwrap();
    assert_eq!(order(&c).iter().map(|e| e.0).collect::<Vec<_>>(), vec![2]);
    assert!(c.is_user_active("a"), "a's reference work is not done");
    c.advance(3.9);
    assert!(close(c.global_virtual_time(), 1.95));
    // a's new job is charged after its reference work: deadline 2 + 1, not 1.95 + 1.
    assert!(close(c.job_arrived(3.9, 3, "a", 1.0, 1.0).unwrap(), 3.0));
    assert_eq!(c.job_finished(4.0, 1), Err(UwfqError::UnknownJob(1)));
    c.advance(100.0);
    assert_eq!(c.job_count(), 2, "job 1's record goes once its reference work is done");
}

#[test]
fn estimates_can_change_while_queued() {
    let mut c = UwfqClock::new(1.0, 0.0).unwrap();
    c.job_arrived(0.0, 1, "a", 1.0, 0.0).unwrap();
    c.job_arrived(0.0, 2, "a", 1.0, 3.0).unwrap();
    c.update_work(0.0, 1, 5.0).unwrap();
    assert_eq!(order(&c).iter().map(|e| e.0).collect::<Vec<_>>(), vec![2, 1]);
    assert!(close(c.virtual_finish(1).unwrap(), 8.0));
    assert!(close(c.user_virtual_end("a").unwrap(), 8.0));
    c.update_work(0.0, 1, 1.0).unwrap();
    assert_eq!(order(&c).iter().map(|e| e.0).collect::<Vec<_>>(), vec![1, 2]);
    assert!(close(c.user_virtual_end("a").unwrap(), 4.0));
    assert!(c.update_work(0.0, 9, 1.0).is_err());
}

#[test]
fn bad_input_is_a_typed_error_naming_the_field() {
    let mut c = UwfqClock::new(1.0, 0.0).unwrap();
    let field = |e: UwfqError| match e {
        UwfqError::InvalidSetting { field, .. } => field,
        other => panic!("{other:?}"),
    };
    assert_eq!(field(c.job_arrived(0.0, 1, "a", 0.0, 1.0).unwrap_err()), "weight");
    assert_eq!(field(c.job_arrived(0.0, 1, "a", f64::INFINITY, 1.0).unwrap_err()), "weight");
    assert_eq!(field(c.job_arrived(0.0, 1, "a", 1.0, -1.0).unwrap_err()), "slot-time");
    assert_eq!(field(c.job_arrived(0.0, 1, "a", 1.0, f64::NAN).unwrap_err()), "slot-time");
    c.job_arrived(0.0, 1, "a", 1.0, 1.0).unwrap();
    assert_eq!(c.job_arrived(0.0, 1, "a", 1.0, 1.0), Err(UwfqError::DuplicateJob(1)));
    assert_eq!(field(UwfqClock::new(-1.0, 0.0).unwrap_err()), "capacity");
    assert_eq!(field(UwfqClock::new(1.0, -1.0).unwrap_err()), "uwfq-grace-period-sec");
    let s = UwfqSettings { user_weights: vec![("eve".into(), -2.0)], ..Default::default() };
    assert_eq!(field(s.validate().unwrap_err()), "uwfq-user-weight[eve]");
}

#[test]
fn allocation_file_knobs() {
    let f = parse_queue_file(
        r#"<tidal><app-policy>uwfq</app-policy>
             <uwfq-user-weight user="alice">2</uwfq-user-weight>
             <uwfq-grace-period-sec>5</uwfq-grace-period-sec>
             <uwfq-default-task-sec>30</uwfq-default-task-sec>
             <queue name="a"/></tidal>"#,
    )
    .unwrap();
    assert_eq!(f.app_policy, AppPolicyKind::Uwfq);
    assert_eq!(f.uwfq.weight_of("alice"), 2.0);
    assert_eq!(f.uwfq.weight_of("bob"), 1.0);
    assert_eq!((f.uwfq.grace_period_sec, f.uwfq.default_task_sec), (5.0, 30.0));
    for (xml, needle) in [
        (r#"<uwfq-user-weight user="alice">0</uwfq-user-weight>"#, "uwfq-user-weight[alice]"),
        (r#"<uwfq-user-weight user="alice">inf</uwfq-user-weight>"#, "uwfq-user-weight[alice]"),
        (r#"<uwfq-user-weight>2</uwfq-user-weight>"#, "user="),
        (r#"<uwfq-grace-period-sec>-1</uwfq-grace-period-sec>"#, "uwfq-grace-period-sec"),
        (r#"<uwfq-default-task-sec>0</uwfq-default-task-sec>"#, "uwfq-default-task-sec"),
        (r#"<uwfq-default-task-sec>soon</uwfq-default-task-sec>"#, "not a number"),
    ] {
        let e = parse_queue_file(&format!("<tidal>{xml}<queue name=\"a\"/></tidal>")).unwrap_err().to_string();
        assert!(e.contains(needle), "{xml}: {e}");
    }
}

fn ask(n: i64) -> Ask {
    Ask { priority: 1, location: ANY, num_containers: n, relax_locality: true, capability: Resources::new(1024, 1) }
}

/// Alice submits three big jobs, then Bob one small one; one heartbeat on a node with room for
/// eight containers. Returns how many containers Bob's app got.
fn bob_containers(app_policy: &str) -> usize {
    let xml = format!("<tidal><app-policy>{app_policy}</app-policy><queue name=\"q\"/></tidal>");
    let mut s = Scheduler::from_xml(&xml, Settings::default()).unwrap();
    assert_eq!(s.app_policy_name(), app_policy);
    s.add_node(1, 10, 20, Resources::new(8 * 1024, 8)).unwrap();
    for app in 1..=3 {
        s.add_app(app, "q", "alice").unwrap();
        s.update_asks(app, &[ask(10)], &[], &[]).unwrap();
    }
    s.add_app(4, "q", "bob").unwrap();
    s.update_asks(4, &[ask(3)], &[], &[]).unwrap();
    let mut out: Vec<Decision> = Vec::new();
    s.node_heartbeat(1, 1_000, &[], &mut out, 100).unwrap();
    assert_eq!(out.len(), 8);
    out.iter().filter(|d| d.app == 4).count()
}

#[test]
fn uwfq_serves_the_small_job_of_the_other_user_before_the_big_users_backlog() {
    // Every app first gets its AM container; then FIFO gives the rest to Alice's first job,
    // UWFQ to Bob's job, which would finish first under user-job fairness.
    assert_eq!(bob_containers("fifo"), 1);
    assert_eq!(bob_containers("uwfq"), 3);
}

#[test]
fn removing_apps_and_switching_policies_keep_the_scheduler_consistent() {
    let mut s =
        Scheduler::from_xml("<tidal><app-policy>fifo</app-policy><queue name=\"q\"/></tidal>", Settings::default())
            .unwrap();
    s.add_node(1, 10, 20, Resources::new(4 * 1024, 4)).unwrap();
    for app in 1..=3 {
        s.add_app(app, "q", if app == 3 { "bob" } else { "alice" }).unwrap();
        s.update_asks(app, &[ask(4)], &[], &[]).unwrap();
    }
    // Switch to UWFQ with the apps live: it learns them from the state.
    let f = parse_queue_file("<tidal><app-policy>uwfq</app-policy><queue name=\"q\"/></tidal>").unwrap();
    s.reconfigure(f, Settings::default()).unwrap();
    assert_eq!(s.app_policy_name(), "uwfq");
    let mut out = Vec::new();
    s.node_heartbeat(1, 1_000, &[], &mut out, 100).unwrap();
    assert_eq!(out.len(), 4);
    s.remove_app(1).unwrap();
    let done: Vec<u64> = out.iter().filter(|d| d.app != 1).map(|d| d.allocation_id).collect();
    out.clear();
    s.node_heartbeat(1, 2_000, &done, &mut out, 100).unwrap();
    assert!(!out.is_empty());
    assert!(out.iter().all(|d| d.app == 2 || d.app == 3));
}
