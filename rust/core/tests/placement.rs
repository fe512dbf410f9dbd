//! Queue placement with the scenarios and outcomes of FairScheduler's TestQueuePlacementPolicy,
//! on the rules alone (with parent queues, which nestedUserQueue needs) and through the
//! scheduler (queues created at submission).

use tidal_core::config::{full_queue_name, parse_queue_file, Settings};
use tidal_core::placement::{PlacementPolicy, QueueType, Queues};
use tidal_core::Scheduler;

/// Queues by full name, as FairScheduler's tests configure leaves and parents.
struct Configured {
    leaves: Vec<&'static str>,
    parents: Vec<&'static str>,
}

impl Queues for Configured {
    fn full_name(&self, name: &str) -> String {
        full_queue_name(name)
    }

    fn kind(&self, full: &str) -> Option<QueueType> {
        if self.leaves.contains(&full) {
            Some(QueueType::Leaf)
        } else if self.parents.contains(&full) || full == "root" {
            Some(QueueType::Parent)
        } else {
            None
        }
    }
}

fn policy(rules: &str) -> Result<PlacementPolicy, String> {
    let xml =
        format!("<tidal><queue name=\"default\"/>\n<queuePlacementPolicy>\n{rules}\n</queuePlacementPolicy></tidal>");
    parse_queue_file(&xml).map(|f| f.placement.expect("a policy")).map_err(|e| e.to_string())
}

/// FairScheduler's test group mapping: `user` is in `<user>group`, `<user>subgroup1` and
/// `<user>subgroup2`, the first primary.
fn groups(user: &str) -> Vec<String> {
    ["group", "subgroup1", "subgroup2"].iter().map(|g| format!("{user}{g}")).collect()
}

fn place(p: &PlacementPolicy, q: &Configured, requested: &str, user: &str) -> Result<String, String> {
    p.place(requested, user, &groups(user), q)
}

const NONE: Configured = Configured { leaves: Vec::new(), parents: Vec::new() };

#[test]
fn specified_then_user() {
    let p = policy(r#"<rule name="specified"/><rule name="user"/>"#).unwrap();
    assert_eq!(place(&p, &NONE, "specifiedq", "someuser").unwrap(), "root.specifiedq");
    assert_eq!(place(&p, &NONE, "default", "someuser").unwrap(), "root.someuser");
    assert_eq!(place(&p, &NONE, "default", "otheruser").unwrap(), "root.otheruser");
}

#[test]
fn no_create_falls_through_to_existing_queues() {
    let p =
        policy(r#"<rule name="specified" create="false"/><rule name="user" create="false"/><rule name="default"/>"#)
            .unwrap();
    let q = Configured { leaves: vec!["root.someuser"], parents: vec![] };
    assert_eq!(place(&p, &q, "specifiedq", "someuser").unwrap(), "root.someuser");
    assert_eq!(place(&p, &q, "specifiedq", "otheruser").unwrap(), "root.default");
    assert_eq!(place(&p, &q, "default", "otheruser").unwrap(), "root.default");
}

#[test]
fn specified_then_reject() {
    let p = policy(r#"<rule name="specified"/><rule name="reject"/>"#).unwrap();
    assert_eq!(place(&p, &NONE, "specifiedq", "someuser").unwrap(), "root.specifiedq");
    let e = place(&p, &NONE, "default", "someuser").unwrap_err();
    assert!(e.contains("'reject'") && e.contains("line 3"), "{e}");
}

#[test]
fn terminal_rules_must_end_the_list() {
    let e = policy(r#"<rule name="specified"/><rule name="user" create="false"/>"#).unwrap_err();
    assert!(e.contains("line 3") && e.contains("get past the last") && e.contains("'user'"), "{e}");
    let e = policy("<rule name=\"specified\"/>\n<rule name=\"default\"/>\n<rule name=\"user\"/>").unwrap_err();
    assert!(e.contains("line 4") && e.contains("never be reached") && e.contains("'default'"), "{e}");
    // secondaryGroupExistingQueue never ends the list, whatever its create says.
    assert!(policy(r#"<rule name="secondaryGroupExistingQueue" create="true"/><rule name="default" create="false"/>"#)
        .is_ok());
    assert!(policy("").unwrap_err().contains("no rules"));
}

#[test]
fn rule_errors_name_the_line_and_the_rule() {
    for (rules, says) in [
        (r#"<rule name="lottery"/>"#, "unknown rule 'lottery'"),
        (r#"<rule create="true"/>"#, "no name"),
        (r#"<rule name="user" create="yes"/>"#, "create 'yes'"),
        (r#"<rule name="user" queue="x"/>"#, "rule 'user': unknown attribute 'queue'"),
        (r#"<rule name="nestedUserQueue"/><rule name="default"/>"#, "rule 'nestedUserQueue': needs a nested <rule>"),
        (r#"<policy name="user"/>"#, "unknown element <policy>"),
    ] {
        let e = policy(rules).unwrap_err();
        assert!(e.contains("line 3") && e.contains(says), "{rules}: {e}");
    }
}

#[test]
fn default_rule_with_a_queue_attribute() {
    let p =
        policy(r#"<rule name="specified" create="false"/><rule name="default" queue="someDefaultQueue"/>"#).unwrap();
    let q = Configured { leaves: vec!["root.someDefaultQueue"], parents: vec![] };
    assert_eq!(place(&p, &q, "default", "someuser").unwrap(), "root.someDefaultQueue");
}

#[test]
fn primary_and_secondary_groups() {
    let p = policy(r#"<rule name="secondaryGroupExistingQueue"/><rule name="primaryGroup"/>"#).unwrap();
    let q = Configured { leaves: vec!["root.user1subgroup2"], parents: vec![] };
    assert_eq!(place(&p, &q, "default", "user1").unwrap(), "root.user1subgroup2");
    assert_eq!(place(&p, &NONE, "default", "user1").unwrap(), "root.user1group");
    let e = p.place("default", "nobody", &[], &NONE).unwrap_err();
    assert!(e.contains("no groups found for user 'nobody'"), "{e}");
}

#[test]
fn nested_user_queue_under_the_nested_rules_parent() {
    // TestQueuePlacementPolicy#testNestedUserQueuePrimaryGroup and ...SecondaryGroup.
    let primary = policy(
        r#"<rule name="specified" create="false"/>
           <rule name="nestedUserQueue"><rule name="primaryGroup" create="false"/></rule>
           <rule name="default"/>"#,
    )
    .unwrap();
    let q = Configured { leaves: vec![], parents: vec!["root.user1group"] };
    assert_eq!(place(&primary, &q, "default", "user1").unwrap(), "root.user1group.user1");
    assert_eq!(place(&primary, &NONE, "default", "user1").unwrap(), "root.default", "no such parent, no create");
    // A leaf of that name cannot hold the user's queue: on to the next rule.
    let leaf = Configured { leaves: vec!["root.user1group"], parents: vec![] };
    assert_eq!(place(&primary, &leaf, "default", "user1").unwrap(), "root.default");
    let secondary = policy(
        r#"<rule name="nestedUserQueue"><rule name="secondaryGroupExistingQueue"/></rule><rule name="default"/>"#,
    )
    .unwrap();
    let q = Configured { leaves: vec![], parents: vec!["root.user1subgroup1"] };
    assert_eq!(place(&secondary, &q, "default", "user1").unwrap(), "root.user1subgroup1.user1");
    let specified =
        policy(r#"<rule name="nestedUserQueue"><rule name="specified"/></rule><rule name="default"/>"#).unwrap();
    assert_eq!(place(&specified, &NONE, "eng", "alice").unwrap(), "root.eng.alice");
    assert_eq!(place(&specified, &NONE, "default", "alice").unwrap(), "root.default");
}

fn scheduler(rules: &str) -> Scheduler {
    let xml = format!(
        "<tidal><queue name=\"default\"/><queue name=\"etl\"/><queuePlacementPolicy>{rules}</queuePlacementPolicy></tidal>"
    );
    Scheduler::from_xml(&xml, Settings::default()).unwrap()
}

#[test]
fn submission_creates_the_users_queue() {
    let mut s = scheduler(r#"<rule name="specified" create="false"/><rule name="user"/>"#);
    assert_eq!(s.submit_app(1, "etl", "alice", &[]).unwrap(), "root.etl");
    assert_eq!(s.submit_app(2, "nosuch", "alice", &[]).unwrap(), "root.alice");
    let q = s.state().queue_by_name("root.alice").expect("created");
    assert_eq!((q.config.weight, q.config.is_latency_sensitive(), q.apps.len()), (1.0, false, 1));
    assert_eq!(s.submit_app(3, "default", "alice", &[]).unwrap(), "root.alice", "created once, then used");
    // A user name that is no queue name is rejected with the reason.
    let e = s.submit_app(4, "default", "bad name", &[]).unwrap_err().to_string();
    assert!(e.contains("root.bad name") && e.contains("cannot be created"), "{e}");
    assert!(s.state().app_by_key(4).is_none());
}

#[test]
fn submission_by_group_and_rejection() {
    let mut s = scheduler(r#"<rule name="primaryGroup" create="false"/><rule name="reject"/>"#);
    let etl = vec!["etl".to_string(), "staff".to_string()];
    assert_eq!(s.submit_app(1, "default", "bob", &etl).unwrap(), "root.etl");
    let e = s.submit_app(2, "etl", "carol", &["staff".to_string()]).unwrap_err().to_string();
    assert!(e.contains("carol") && e.contains("rule 'reject'"), "{e}");
    assert!(s.state().queue_by_name("root.staff").is_none(), "nothing created");
}

#[test]
fn without_a_policy_the_requested_queue_and_no_creation() {
    let mut s = Scheduler::from_xml("<tidal><queue name=\"default\"/></tidal>", Settings::default()).unwrap();
    assert_eq!(s.submit_app(1, "", "alice", &[]).unwrap(), "root.default");
    let e = s.submit_app(2, "nosuch", "alice", &[]).unwrap_err().to_string();
    assert!(e.contains("unknown queue 'root.nosuch'"), "{e}");
    assert!(s.state().queue_by_name("root.nosuch").is_none());
}

/// nestedUserQueue makes the user's queue under the parent its nested rule names
/// (FairScheduler's `root.<group>.<user>`), ordered by that parent's app policy and kept across
/// a restore; a group queue the file does not declare as a parent is refused with the reason.
#[test]
fn nested_user_queue_is_created_under_the_group_parent() {
    let rules =
        r#"<rule name="nestedUserQueue"><rule name="primaryGroup" create="false"/></rule><rule name="default"/>"#;
    let xml = format!(
        "<tidal><queue name=\"default\"/><queue name=\"etlgroup\" type=\"parent\"><app-policy>job-fair</app-policy>\
         </queue><queuePlacementPolicy>{rules}</queuePlacementPolicy></tidal>"
    );
    let mut s = Scheduler::from_xml(&xml, Settings::default()).unwrap();
    let groups = ["etlgroup".to_string()];
    assert_eq!(s.submit_app(1, "default", "alice", &groups).unwrap(), "root.etlgroup.alice");
    let qi = *s.state().queue_index.get("root.etlgroup.alice").unwrap();
    assert_eq!(s.queue_app_policy_name(qi), "job-fair");
    let parent = s.state().parent_index["root.etlgroup"];
    assert_eq!(s.state().queues[qi].parent, parent);
    let mut restored = Scheduler::from_xml(&xml, Settings::default()).unwrap();
    restored.restore_json(&s.snapshot_json()).unwrap();
    assert!(restored.state().queue_by_name("root.etlgroup.alice").is_some(), "the created queue is restored");

    let mut s = scheduler(r#"<rule name="nestedUserQueue"><rule name="primaryGroup"/></rule><rule name="default"/>"#);
    let e = s.submit_app(1, "default", "alice", &groups).unwrap_err().to_string();
    assert!(e.contains("'root.etlgroup.alice'") && e.contains("not a parent queue"), "{e}");
    assert!(s.state().app_by_key(1).is_none());
    // Under the root.
    let mut s =
        scheduler(r#"<rule name="nestedUserQueue"><rule name="default" queue="root"/></rule><rule name="default"/>"#);
    assert_eq!(s.submit_app(1, "default", "alice", &[]).unwrap(), "root.alice");
}

/// Groups are looked up only for a policy with a group rule (nested ones included): the shim
/// skips Hadoop's group mapping otherwise.
#[test]
fn only_group_rules_need_the_users_groups() {
    for (rules, uses) in [
        (r#"<rule name="specified"/><rule name="user"/>"#, false),
        (r#"<rule name="specified" create="false"/><rule name="reject"/>"#, false),
        (r#"<rule name="nestedUserQueue"><rule name="specified"/></rule><rule name="default"/>"#, false),
        (r#"<rule name="primaryGroup"/>"#, true),
        (r#"<rule name="secondaryGroupExistingQueue"/><rule name="default"/>"#, true),
        (
            r#"<rule name="nestedUserQueue"><rule name="primaryGroup" create="false"/></rule><rule name="default"/>"#,
            true,
        ),
    ] {
        assert_eq!(policy(rules).unwrap().uses_groups(), uses, "{rules}");
        assert_eq!(scheduler(rules).placement_uses_groups(), uses, "{rules}");
    }
    let none = Scheduler::from_xml("<tidal><queue name=\"default\"/></tidal>", Settings::default()).unwrap();
    assert!(!none.placement_uses_groups(), "no policy: the requested queue");
}
