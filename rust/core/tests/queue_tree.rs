//! Hierarchical queues: nested `<queue>` elements, DRF among siblings level by level, app
//! policies per subtree, and the tree in status.

mod common;

use common::{any_ask, GB};
use tidal_core::config::{parse_queue_file, AppPolicyKind, Settings};
use tidal_core::status::SchedulerStatus;
use tidal_core::{Decision, Resources, Scheduler};

fn err(xml: &str) -> String {
    parse_queue_file(xml).unwrap_err().to_string()
}

/// Adds `n` nodes of 8 GB / 8 vcores.
fn add_nodes(s: &mut Scheduler, n: u32) {
    for i in 0..n {
        s.add_node(i, 100 + i, 1, Resources::new(8 * GB, 8)).unwrap();
    }
}

fn fill(s: &mut Scheduler, nodes: u32) -> Vec<Decision> {
    let mut out = Vec::new();
    for node in 0..nodes {
        s.node_heartbeat(node, 1, &[], &mut out, usize::MAX).unwrap();
    }
    out
}

/// Adds each app to its queue with `asks` pending containers of 1 GB and 1 vcore.
fn submit(s: &mut Scheduler, apps: &[(u64, &str)], asks: i64) {
    for &(app, queue) in apps {
        s.add_app(app, queue, "u").unwrap();
        s.update_asks(app, &[any_ask(1, asks, GB, 1)], &[], &[]).unwrap();
    }
}

fn used_vcores(s: &Scheduler, queue: &str) -> i64 {
    s.state().queue_by_name(queue).unwrap().usage.vcores()
}

#[test]
fn nested_queues_get_full_names_parents_and_inherited_app_policies() {
    let f = parse_queue_file(
        r#"<tidal><app-policy>fifo</app-policy>
             <queue name="eng"><weight>2</weight><app-policy>carbyne</app-policy>
               <altruism-probability>0.5</altruism-probability>
               <queue name="etl"/>
               <queue name="adhoc"><queue name="a"><app-policy>job-fair</app-policy></queue></queue>
             </queue>
             <queue name="notebooks" type="parent"/>
             <queue name="root"><queue name="ops"><queue name="etl"/></queue></queue>
             <queue name="default"/></tidal>"#,
    )
    .unwrap();
    let leaves: Vec<&str> = f.queues.iter().map(|q| q.name.as_str()).collect();
    assert_eq!(leaves, ["root.eng.etl", "root.eng.adhoc.a", "root.ops.etl", "root.default"]);
    let parents: Vec<(&str, f64)> = f.parents.iter().map(|p| (p.name.as_str(), p.weight)).collect();
    assert_eq!(parents, [("root.eng", 2.0), ("root.eng.adhoc", 1.0), ("root.notebooks", 1.0), ("root.ops", 1.0)]);
    let carbyne = AppPolicyKind::Carbyne { altruism_probability: 0.5 };
    let policies: Vec<AppPolicyKind> = f.queues.iter().map(|q| f.app_policy_for(q)).collect();
    assert_eq!(policies, [carbyne, AppPolicyKind::JobFair, AppPolicyKind::Fifo, AppPolicyKind::Fifo]);
    assert_eq!(f.parents[1].app_policy, Some(carbyne), "inherited by a parent");
}

#[test]
fn tree_errors_name_the_line_queue_and_field() {
    let e = err("<tidal>\n<queue name=\"eng\">\n<queue name=\"etl\"><weight>0</weight></queue></queue></tidal>");
    assert!(e.contains("line 3") && e.contains("'root.eng.etl'") && e.contains("weight"), "{e}");
    let e = err("<tidal><queue name=\"eng\"><queue name=\"a\"/>\n<queue name=\"a\"/></queue></tidal>");
    assert!(e.contains("line 2") && e.contains("'root.eng.a' is declared twice (first on line 1)"), "{e}");
    let e = err("<tidal><queue name=\"eng\"><queue name=\"a\"/></queue>\n<queue name=\"eng\"/></tidal>");
    assert!(e.contains("'root.eng' is declared twice"), "{e}");
    // The same short name on two levels names two queues.
    assert!(parse_queue_file("<tidal><queue name=\"a\"/><queue name=\"b\"><queue name=\"a\"/></queue></tidal>").is_ok());
    let e = err("<tidal><queue name=\"eng\"><type>lq</type><queue name=\"a\"/></queue></tidal>");
    assert!(e.contains("parent queue 'root.eng': unknown element <type>"), "{e}");
    let e = err("<tidal><queue name=\"eng\"><queue name=\"a.b\"/></queue></tidal>");
    assert!(e.contains("'a.b' under 'root.eng' is invalid"), "{e}");
    let e = err("<tidal><queue name=\"eng\" type=\"leaf\"/></tidal>");
    assert!(e.contains("type attribute takes only \"parent\""), "{e}");
    let e = err("<tidal><queue name=\"eng\"><app-policy>fifo</app-policy>\n<fairness-knob>0.5</fairness-knob><queue name=\"a\"/></queue></tidal>");
    assert!(e.contains("line 2") && e.contains("queue 'root.eng' <fairness-knob> applies to app-policy tetris"), "{e}");
    let deep =
        (0..7).fold("<queue name=\"leaf\"/>".to_string(), |inner, i| format!("<queue name=\"l{i}\">{inner}</queue>"));
    assert!(err(&format!("<tidal>{deep}</tidal>")).contains("nested deeper than 6 levels"));
    assert!(err("<tidal><queue name=\"notebooks\" type=\"parent\"/></tidal>").contains("declares no <queue>"));
}

#[test]
fn drf_splits_among_siblings_at_every_level_by_weight() {
    // root.a (w=1) {x, y} and root.b (w=1): x and y a quarter each, b a half.
    let xml = r#"<tidal><queue name="a"><queue name="x"/><queue name="y"/></queue><queue name="b"/></tidal>"#;
    let mut s = Scheduler::from_xml(xml, Settings::default()).unwrap();
    add_nodes(&mut s, 8);
    submit(&mut s, &[(1, "root.a.x"), (2, "root.a.y"), (3, "b")], 1000);
    assert_eq!(fill(&mut s, 8).len(), 64);
    assert_eq!([used_vcores(&s, "root.a.x"), used_vcores(&s, "root.a.y"), used_vcores(&s, "root.b")], [16, 16, 32]);

    // Weights at the second level: x (w=3) and y (w=1) split a's half 3:1.
    let xml = r#"<tidal><queue name="a"><weight>1</weight><queue name="x"><weight>3</weight></queue>
                 <queue name="y"/></queue><queue name="b"/></tidal>"#;
    let mut s = Scheduler::from_xml(xml, Settings::default()).unwrap();
    add_nodes(&mut s, 8);
    submit(&mut s, &[(1, "root.a.x"), (2, "root.a.y"), (3, "b")], 1000);
    fill(&mut s, 8);
    assert_eq!([used_vcores(&s, "root.a.x"), used_vcores(&s, "root.a.y"), used_vcores(&s, "root.b")], [24, 8, 32]);
    let root = &s.state().parents[0];
    assert_eq!((root.usage.vcores(), root.running_containers, root.pending_containers), (64, 64, 3000 - 64));
}

#[test]
fn a_parent_takes_no_apps_and_only_demanding_siblings_share() {
    let xml = r#"<tidal><queue name="a"><queue name="x"/><queue name="y"/></queue><queue name="b"/></tidal>"#;
    let mut s = Scheduler::from_xml(xml, Settings::default()).unwrap();
    assert!(s.add_app(9, "a", "u").unwrap_err().to_string().contains("is a parent queue"));
    add_nodes(&mut s, 4);
    // Only x and b ask: y has no demand, so x gets all of a's half.
    submit(&mut s, &[(1, "root.a.x"), (3, "b")], 1000);
    fill(&mut s, 4);
    assert_eq!([used_vcores(&s, "root.a.x"), used_vcores(&s, "root.b")], [16, 16]);
    let status: serde_json::Value = serde_json::from_str(&SchedulerStatus::of(&s).to_json()).unwrap();
    let entry = |name: &str| status["queues"].as_array().unwrap().iter().find(|q| q["name"] == name).unwrap().clone();
    let (a, x, y) = (entry("root.a"), entry("root.a.x"), entry("root.a.y"));
    assert_eq!(
        (a["leaf"].as_bool(), a["parent"].as_str(), a["type"].as_str()),
        (Some(false), Some("root"), Some("parent"))
    );
    assert_eq!((x["leaf"].as_bool(), x["parent"].as_str()), (Some(true), Some("root.a")));
    assert_eq!(a["used"]["vcores"], 16);
    assert_eq!(
        (a["fair_share"].as_f64(), x["fair_share"].as_f64(), y["fair_share"].as_f64()),
        (Some(0.5), Some(0.5), Some(0.0))
    );
    assert_eq!(status["used"]["vcores"], 32);
    let xml = r#"<tidal><queue name="a"><aclSubmitApps>alice</aclSubmitApps><queue name="x"/></queue></tidal>"#;
    let s = Scheduler::from_xml(xml, Settings::default()).unwrap();
    let status: serde_json::Value = serde_json::from_str(&SchedulerStatus::of(&s).to_json()).unwrap();
    let a = status["queues"].as_array().unwrap().iter().find(|q| q["name"] == "root.a").unwrap();
    assert_eq!(a["acls"]["submit_apps"], "alice ", "a parent's ACLs reach the host, which passes them down");
}

#[test]
fn each_subtree_orders_its_apps_by_its_own_app_policy() {
    // Two apps in each leaf, each asking for more than the leaf gets: FIFO gives everything to
    // the first app, job-fair splits the leaf between both.
    let xml = r#"<tidal><app-policy>fifo</app-policy>
                 <queue name="batch"><queue name="etl"/></queue>
                 <queue name="science"><app-policy>job-fair</app-policy><queue name="ml"/></queue></tidal>"#;
    let mut s = Scheduler::from_xml(xml, Settings::default()).unwrap();
    add_nodes(&mut s, 4);
    submit(
        &mut s,
        &[(1, "root.batch.etl"), (2, "root.batch.etl"), (3, "root.science.ml"), (4, "root.science.ml")],
        100,
    );
    fill(&mut s, 4);
    let app_vcores = |k| s.state().app_by_key(k).unwrap().usage.vcores();
    // Each app's first container is its AM, served first whatever the policy.
    assert_eq!([app_vcores(1), app_vcores(2)], [15, 1], "fifo: the first app takes the leaf");
    assert_eq!([app_vcores(3), app_vcores(4)], [8, 8], "job-fair: the apps share the leaf");
    let status = SchedulerStatus::of(&s);
    let policy = |name: &str| status.queues.iter().find(|q| q.name == name).unwrap().app_policy;
    assert_eq!((policy("root.batch.etl"), policy("root.science.ml")), (Some("fifo"), Some("job-fair")));
    assert_eq!((policy("root.science"), policy("root.batch")), (Some("job-fair"), None));
}

#[test]
fn reloading_the_tree_moves_leaves_and_recounts_parents() {
    let mut s =
        Scheduler::from_xml(r#"<tidal><queue name="a"/><queue name="b"/></tidal>"#, Settings::default()).unwrap();
    add_nodes(&mut s, 1);
    s.add_app(1, "a", "u").unwrap();
    s.update_asks(1, &[any_ask(1, 4, GB, 1)], &[], &[]).unwrap();
    fill(&mut s, 1);
    let file =
        parse_queue_file(r#"<tidal><queue name="a"/><queue name="g"><queue name="b"/></queue></tidal>"#).unwrap();
    s.reconfigure(file, Settings::default()).unwrap();
    let st = s.state();
    assert_eq!(st.parents.iter().map(|p| p.config.name.as_str()).collect::<Vec<_>>(), ["root", "root.g"]);
    assert_eq!((st.parents[0].usage.vcores(), st.parents[1].usage.vcores()), (4, 0));
    assert!(st.queue_by_name("root.b").is_none(), "root.b became root.g.b; empty, it is gone");
    assert_eq!(st.queue_by_name("root.g.b").unwrap().path, [1]);
}

#[test]
fn an_lq_under_a_parent_is_admitted_against_the_parents_share() {
    // 80 vcores. eng (w=1) next to batch (w=3) has a quarter: 20 vcores. An LQ guaranteed 15
    // vcores (1500 vcore-s over a 100 s deadline) fits in it; one guaranteed 25 does not,
    // though it would directly under the root.
    let classes = |lqs: &str| {
        let xml = format!(
            "<tidal><policy>bopf</policy><queue name=\"eng\">{lqs}</queue>\
             <queue name=\"batch\"><weight>3</weight></queue><queue name=\"top\">{}</queue></tidal>",
            "<type>lq</type><period-sec>100</period-sec><deadline-sec>100</deadline-sec>\
             <burst-demand><memory-mb>2560000</memory-mb><vcores>2500</vcores></burst-demand>"
        );
        let mut s = Scheduler::from_xml(&xml, Settings::default()).unwrap();
        add_nodes(&mut s, 10);
        fill(&mut s, 1);
        let st = s.state();
        let view = |name: &str| s.queue_view(st.queue_index[name]).admission;
        (view("root.eng.dash"), view("root.top"))
    };
    let (dash, top) = classes(&common::lq("dash", 100, 100, 1500));
    assert_eq!((dash.class, top.class), ("hard", "hard"), "{dash:?} {top:?}");
    assert!(dash.reason.contains("within parent 'root.eng'"), "{}", dash.reason);
    let (dash, _) = classes(&common::lq("dash", 100, 100, 2500));
    assert_ne!(dash.class, "hard", "25 vcores do not fit eng's 20: {dash:?}");
    assert!(dash.reason.contains("within parent 'root.eng'"), "{}", dash.reason);
}

/// A queue registered at run time may name the parent it goes under; it then hangs in the tree
/// and takes its parent's app policy. A parent the file does not declare, or a malformed name,
/// is refused with the reason.
#[test]
fn a_run_time_queue_goes_under_the_parent_it_names() {
    let caller = tidal_core::scheduler::Caller { user: "alice", admin: false };
    let xml = "<tidal><queue name=\"eng\"><app-policy>job-fair</app-policy><queue name=\"etl\"/></queue></tidal>";
    let mut s = Scheduler::from_xml(xml, Settings::default()).unwrap();
    let (name, verdict) = s.register_queue_xml("<queue name=\"adhoc\" parent=\"eng\"/>", caller).unwrap();
    assert_eq!((name.as_str(), verdict.admitted), ("root.eng.adhoc", true));
    let qi = *s.state().queue_index.get("root.eng.adhoc").unwrap();
    assert_eq!(s.queue_app_policy_name(qi), "job-fair");
    assert_eq!(s.state().queues[qi].parent, s.state().parent_index["root.eng"]);
    let mut err = |q: &str| s.register_queue_xml(q, caller).unwrap_err().to_string();
    let e = err("<queue name=\"x\" parent=\"root.eng.etl\"/>");
    assert!(e.contains("'root.eng.etl', which is not a parent queue"), "{e}");
    let e = err("<queue name=\"x\" parent=\"eng..a\"/>");
    assert!(e.contains("not a queue name"), "{e}");
}

#[test]
fn a_run_time_queue_whose_parent_leaves_the_file_is_retired_with_it() {
    let caller = tidal_core::scheduler::Caller { user: "alice", admin: false };
    let xml = "<tidal><queue name=\"eng\"><queue name=\"etl\"/></queue><queue name=\"ops\"/></tidal>";
    let mut s = Scheduler::from_xml(xml, Settings::default()).unwrap();
    s.register_queue_xml("<queue name=\"adhoc\" parent=\"eng\"/>", caller).unwrap();
    s.register_queue_xml("<queue name=\"top\"/>", caller).unwrap();
    add_nodes(&mut s, 1);
    submit(&mut s, &[(1, "root.eng.adhoc")], 2);
    fill(&mut s, 1);
    // The new file drops root.eng: its file leaf and the run-time queue under it retire together.
    let next = parse_queue_file("<tidal><queue name=\"ops\"/></tidal>").unwrap();
    s.reconfigure(next, Settings::default()).unwrap();
    let adhoc = s.state().queue_by_name("root.eng.adhoc").expect("kept while its app runs");
    assert!(adhoc.retired, "a run-time queue without its parent is retired");
    assert!(s.add_app(2, "root.eng.adhoc", "u").is_err(), "a retired queue takes no new apps");
    assert!(!s.state().queue_by_name("root.top").unwrap().retired, "a run-time queue under root stays");
    // Once its last app leaves it is gone, and not re-registered by the next reload.
    s.remove_app(1).unwrap();
    assert!(s.state().queue_by_name("root.eng.adhoc").is_none());
    let again =
        parse_queue_file("<tidal><queue name=\"eng\"><queue name=\"etl\"/></queue><queue name=\"ops\"/></tidal>")
            .unwrap();
    s.reconfigure(again, Settings::default()).unwrap();
    assert!(s.state().queue_by_name("root.eng.adhoc").is_none());
    assert!(!s.state().queue_by_name("root.top").unwrap().retired);
}

/// A Soft LQ under a parent is admitted against the parent's share, so its bursts keep their
/// priority only while the Soft usage fits in what the parent's share leaves: beyond that it is
/// served by DRF like a TQ, even though the cluster as a whole would still have room.
#[test]
fn a_soft_burst_keeps_priority_only_within_its_parents_share() {
    // 64 vcores; eng (w=1) next to batch (w=1) has half: 32. big's 1,200 vcore-s over 30 s is a
    // 40-vcore rate: more than eng's 32, so Soft.
    let xml = format!(
        "<tidal><policy>bopf</policy><queue name=\"eng\">{}</queue><queue name=\"batch\"/></tidal>",
        common::lq("big", 600, 30, 1200)
    );
    let settings = Settings { max_assign_per_heartbeat: 100, ..Settings::default() };
    let mut s = Scheduler::from_xml(&xml, settings).unwrap();
    add_nodes(&mut s, 8);
    s.add_app(1, "root.eng.big", "u").unwrap();
    s.update_asks(1, &[any_ask(1, 200, GB, 1)], &[], &[]).unwrap();
    let mut out = Vec::new();
    for node in 0..5 {
        s.node_heartbeat(node, 1_000, &[], &mut out, usize::MAX).unwrap();
    }
    let st = SchedulerStatus::of(&s);
    let big = st.queues.iter().find(|q| q.name == "root.eng.big").unwrap();
    assert_eq!(big.class, "soft", "{}", big.admission_reason);
    assert_eq!(used_vcores(&s, "root.eng.big"), 40, "the burst took 40 vcores: over eng's 32");
    s.add_app(2, "root.batch", "u").unwrap();
    s.update_asks(2, &[any_ask(1, 200, GB, 1)], &[], &[]).unwrap();
    out.clear();
    s.node_heartbeat(5, 2_000, &[], &mut out, 1).unwrap();
    assert_eq!(out[0].app, 2, "beyond its parent's share the Soft burst has no priority over batch");
}
