//! FairScheduler's operator limits, with the scenarios and outcomes of its own tests
//! (TestMaxRunningAppsEnforcer; TestFairScheduler's maxAMShare, minResources and maxResources
//! cases), on the core.

mod common;

use common::{any_ask, GB};
use tidal_core::config::Settings;
use tidal_core::{Decision, Resources, Scheduler};

/// A scheduler from `body` inside `<tidal>`, with one node of `mem_gb` GB and `vcores`.
fn cluster(body: &str, mem_gb: i64, vcores: i64) -> Scheduler {
    let mut s = Scheduler::from_xml(&format!("<tidal>{body}</tidal>"), Settings::default()).unwrap();
    s.add_node(1, 1, 100, Resources::new(mem_gb * GB, vcores)).unwrap();
    s
}

/// Adds app `key` of `user` in `queue` asking for its AM (1 GB, 1 vcore).
fn submit(s: &mut Scheduler, key: u64, queue: &str, user: &str) {
    s.add_app(key, queue, user).unwrap();
    s.update_asks(key, &[any_ask(0, 1, GB, 1)], &[], &[]).unwrap();
}

fn heartbeat(s: &mut Scheduler, t: i64) -> Vec<Decision> {
    let mut out = Vec::new();
    s.node_heartbeat(1, t, &[], &mut out, 100).unwrap();
    out
}

fn started(d: &[Decision]) -> Vec<u64> {
    d.iter().map(|d| d.app).collect()
}

fn runnable(s: &Scheduler, key: u64) -> bool {
    s.state().app_by_key(key).unwrap().runnable
}

/// Apps 1 in `first` and 2 in `second`, each with its AM running and ten more containers asked:
/// the apps the next three containers go to.
fn next_three(body: &str, first: &str, second: &str) -> Vec<u64> {
    let mut s = cluster(body, 16, 16);
    submit(&mut s, 1, first, "u");
    submit(&mut s, 2, second, "u");
    heartbeat(&mut s, 1);
    s.update_asks(1, &[any_ask(1, 10, GB, 1)], &[], &[]).unwrap();
    s.update_asks(2, &[any_ask(1, 10, GB, 1)], &[], &[]).unwrap();
    let mut out = Vec::new();
    s.node_heartbeat(1, 2, &[], &mut out, 3).unwrap();
    started(&out)
}

#[test]
fn queue_max_running_apps_holds_later_apps_until_one_finishes() {
    let mut s = cluster(r#"<queue name="q"><maxRunningApps>2</maxRunningApps></queue>"#, 16, 16);
    for k in 1..=3 {
        submit(&mut s, k, "q", "alice");
    }
    assert_eq!((runnable(&s, 1), runnable(&s, 2), runnable(&s, 3)), (true, true, false));
    assert_eq!(app_counts(&s, "root.q"), (2, 1), "the status counts the held app as waiting");
    assert_eq!(started(&heartbeat(&mut s, 1)), vec![1, 2], "the third app gets no container");
    assert_eq!(s.state().queue_by_name("root.q").unwrap().pending_containers, 0, "its ask is not demand");
    s.remove_app(1).unwrap();
    assert!(runnable(&s, 3), "the waiting app runs once a running one finishes");
    assert_eq!(app_counts(&s, "root.q"), (2, 0));
    assert_eq!(started(&heartbeat(&mut s, 2)), vec![3]);
}

/// The status's runnable and waiting app counts of queue `name`.
fn app_counts(s: &Scheduler, name: &str) -> (usize, usize) {
    let status = tidal_core::status::SchedulerStatus::of(s);
    let q = status.queues.iter().find(|q| q.name == name).expect("the queue is in the status");
    (q.apps, q.waiting_apps)
}

#[test]
fn waiting_apps_become_runnable_in_submission_order() {
    // TestMaxRunningAppsEnforcer#testMultipleAppsWaitingOnCousinQueue, flattened: the user's
    // limit holds apps in two queues; they run oldest first as running apps finish.
    let body = r#"<user name="bob"><maxRunningApps>1</maxRunningApps></user><queue name="a"/><queue name="b"/>"#;
    let mut s = cluster(body, 16, 16);
    submit(&mut s, 1, "a", "bob");
    submit(&mut s, 2, "b", "bob");
    submit(&mut s, 3, "a", "bob");
    submit(&mut s, 4, "a", "alice");
    assert_eq!([1, 2, 3, 4].map(|k| runnable(&s, k)), [true, false, false, true], "only bob is limited");
    s.remove_app(1).unwrap();
    assert_eq!([2, 3].map(|k| runnable(&s, k)), [true, false], "the older waiting app first, across queues");
    s.remove_app(2).unwrap();
    assert!(runnable(&s, 3));
}

#[test]
fn user_max_apps_default_and_a_users_own_limit() {
    // TestMaxRunningAppsEnforcer#testRemoveEnablesAppOnCousinQueue's user variant.
    let body = r#"<userMaxAppsDefault>1</userMaxAppsDefault>
        <user name="carol"><maxRunningApps>2</maxRunningApps></user><queue name="q"/>"#;
    let mut s = cluster(body, 16, 16);
    for (k, user) in [(1, "dave"), (2, "dave"), (3, "carol"), (4, "carol"), (5, "carol")] {
        submit(&mut s, k, "q", user);
    }
    assert_eq!([1, 2, 3, 4, 5].map(|k| runnable(&s, k)), [true, false, true, true, false]);
    // A waiting app leaving changes nothing for the others.
    s.remove_app(2).unwrap();
    assert!(!runnable(&s, 5));
    s.remove_app(3).unwrap();
    assert!(runnable(&s, 5));
}

#[test]
fn queue_max_apps_default_and_a_raised_limit_on_reload() {
    let file = |n: u32| format!("<tidal><queueMaxAppsDefault>{n}</queueMaxAppsDefault><queue name=\"q\"/></tidal>");
    let mut s = Scheduler::from_xml(&file(1), Settings::default()).unwrap();
    s.add_app(1, "q", "u").unwrap();
    s.add_app(2, "q", "u").unwrap();
    assert!(!runnable(&s, 2));
    s.reconfigure(tidal_core::config::parse_queue_file(&file(2)).unwrap(), Settings::default()).unwrap();
    assert!(runnable(&s, 2), "a raised limit lets waiting apps run at once");
}

#[test]
fn max_am_share_holds_ams_beyond_the_share_of_the_fair_share() {
    // TestFairScheduler#testQueueMaxAMShare: a queue with maxAMShare 0.2 of a 20 GB, 20 vcore
    // cluster (its fair share, as the only active queue) runs AMs of 1 GB/1 vcore up to 4.
    let body = r#"<queue name="q"><maxAMShare>0.2</maxAMShare></queue><queue name="idle"/>"#;
    let mut s = cluster(body, 20, 20);
    for k in 1..=5 {
        submit(&mut s, k, "q", "u");
    }
    assert_eq!(started(&heartbeat(&mut s, 1)), vec![1, 2, 3, 4], "the fifth AM would exceed 0.2 of 20 GB");
    // Non-AM containers are not limited.
    s.update_asks(1, &[any_ask(1, 2, GB, 1)], &[], &[]).unwrap();
    assert_eq!(started(&heartbeat(&mut s, 2)), vec![1, 1]);
    s.remove_app(2).unwrap();
    assert_eq!(started(&heartbeat(&mut s, 3)), vec![5], "an AM fits again once an app finished");
}

#[test]
fn max_am_share_default_and_minus_one_disables() {
    let body = r#"<queueMaxAMShareDefault>0.1</queueMaxAMShareDefault>
        <queue name="q"/><queue name="free"><maxAMShare>-1</maxAMShare></queue>"#;
    let mut s = cluster(body, 20, 20);
    for k in 1..=3 {
        submit(&mut s, k, "q", "u");
        submit(&mut s, 10 + k, "free", "u");
    }
    // Both queues active: each has half of 20 GB as its fair share; 0.1 of it is 1 GB, one AM.
    let d = started(&heartbeat(&mut s, 1));
    assert_eq!(d.iter().filter(|&&k| k < 10).count(), 1, "{d:?}");
    assert_eq!(d.iter().filter(|&&k| k > 10).count(), 3, "{d:?}");
}

#[test]
fn max_resources_caps_what_a_queue_holds() {
    // TestFairScheduler#testMaxResources-like: 3 GB of 8 GB at most, however much it asks.
    let mut s = cluster(r#"<queue name="q"><maxResources>3072 mb, 8 vcores</maxResources></queue>"#, 8, 8);
    submit(&mut s, 1, "q", "u");
    s.update_asks(1, &[any_ask(0, 1, GB, 1), any_ask(1, 10, GB, 1)], &[], &[]).unwrap();
    assert_eq!(heartbeat(&mut s, 1).len(), 3);
    assert_eq!(heartbeat(&mut s, 2).len(), 0, "the queue is at its maximum");
    assert_eq!(s.state().queue_by_name("root.q").unwrap().usage, Resources::new(3 * GB, 3));
}

#[test]
fn a_queue_below_its_min_resources_goes_first() {
    // TestFairScheduler's min share case under DRF: `a` weighs 4, so plain weighted DRF serves
    // it before `b`; `b` below its minimum is needy and goes first until it reaches it.
    let order = |b: &str| next_three(&format!(r#"<queue name="a"><weight>4</weight></queue>{b}"#), "a", "b");
    assert_eq!(order(r#"<queue name="b"/>"#), vec![1, 1, 1], "without a minimum, weighted DRF");
    let needy = order(r#"<queue name="b"><minResources>3072 mb, 3 vcores</minResources></queue>"#);
    assert_eq!(needy, vec![2, 2, 1], "b is served up to its minimum first");
}

#[test]
fn a_dropped_queue_stays_while_it_has_waiting_apps() {
    let file = |queues: &str| tidal_core::config::parse_queue_file(&format!("<tidal>{queues}</tidal>")).unwrap();
    let mut s = Scheduler::new(
        file(r#"<queue name="a"/><queue name="q"><maxRunningApps>1</maxRunningApps></queue>"#),
        Settings::default(),
    )
    .unwrap();
    s.add_app(1, "q", "u").unwrap();
    s.add_app(2, "q", "u").unwrap();
    s.reconfigure(file(r#"<queue name="a"/>"#), Settings::default()).unwrap();
    let visible = |s: &Scheduler| s.state().queue_by_name("root.q").is_some_and(|q| q.visible());
    s.remove_app(1).unwrap();
    assert!(runnable(&s, 2) && visible(&s), "its waiting app runs on in the retired queue");
    s.remove_app(2).unwrap();
    assert!(!visible(&s), "gone with its last app");
    s.add_app(3, "a", "u").unwrap();
    s.reconfigure(file(r#"<queue name="b"/>"#), Settings::default()).unwrap();
    assert!(s.state().queue_by_name("root.a").is_some_and(|q| q.visible()));
}

#[test]
fn a_parents_limits_hold_for_its_whole_subtree() {
    // MaxRunningAppsEnforcer walks up the tree: the parent's limit counts the apps of all its
    // leaves. maxResources on a parent caps its leaves together.
    let body = r#"<queue name="eng"><maxRunningApps>1</maxRunningApps><maxResources>4096 mb, 3 vcores</maxResources>
                    <queue name="a"/><queue name="b"/></queue><queue name="c"/>"#;
    let mut s = cluster(body, 16, 16);
    submit(&mut s, 1, "eng.a", "u");
    submit(&mut s, 2, "eng.b", "u");
    submit(&mut s, 3, "c", "u");
    assert_eq!((runnable(&s, 1), runnable(&s, 2), runnable(&s, 3)), (true, false, true));
    assert_eq!(started(&heartbeat(&mut s, 1)), vec![1, 3]);
    s.update_asks(1, &[any_ask(1, 10, GB, 1)], &[], &[]).unwrap();
    heartbeat(&mut s, 2);
    let eng = s.state().queue_by_name("root.eng.a").unwrap().usage;
    assert_eq!(eng, Resources::new(3 * GB, 3), "the parent's maximum caps its leaf");
    s.remove_app(1).unwrap();
    assert!(runnable(&s, 2), "the sibling's app runs once the parent has room");
}

#[test]
fn a_parent_below_its_min_resources_goes_before_its_siblings() {
    // The needy rule per level: `eng` below its minimum is served before `c`, whose weight
    // would otherwise win under DRF.
    let order = |min: &str| {
        let body =
            format!(r#"<queue name="eng">{min}<queue name="a"/></queue><queue name="c"><weight>4</weight></queue>"#);
        next_three(&body, "eng.a", "c")
    };
    assert_eq!(order(""), vec![2, 2, 2], "without a minimum, weighted DRF");
    assert_eq!(order("<minResources>3072 mb, 3 vcores</minResources>"), vec![1, 1, 2], "eng first up to its minimum");
}
