//! `tidal-queue convert` on realistic FairScheduler allocation files: the exact queue file and
//! report it gives, its exit codes, and that the core reads what it writes.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use tidal_core::acl::Acl;
use tidal_core::config::{parse_queue_file, AppPolicyKind, PolicyKind, Settings};
use tidal_core::ids::ANY;
use tidal_core::request::Ask;
use tidal_core::{Resources, Scheduler};
use tidal_queue_tool::{convert, Outcome};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn fixture(name: &str) -> String {
    std::fs::read_to_string(fixtures().join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Runs the binary in the fixtures directory, so reports name files as given.
fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tidal-queue")).args(args).current_dir(fixtures()).output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).unwrap()
}

/// The queue file and the stderr report of `<name>.xml` are exactly `<name>.tidal.xml` and
/// `<name>.stderr`.
fn assert_converts_as_recorded(name: &str) -> String {
    let out = run(&["convert", &format!("{name}.xml")]);
    assert_eq!(out.status.code(), Some(0), "{name}: {}", text(&out.stderr));
    assert_eq!(text(&out.stderr), fixture(&format!("{name}.stderr")), "report of {name}");
    let xml = text(&out.stdout);
    assert_eq!(xml, fixture(&format!("{name}.tidal.xml")), "queue file of {name}");
    xml
}

#[test]
fn three_levels_with_weights_and_acls() {
    let xml = assert_converts_as_recorded("hierarchy");
    // Root's children are top-level queues; root keeps only its ACLs.
    assert!(xml.contains("<queue name=\"root\">\n    <aclSubmitApps> </aclSubmitApps>"));
    assert!(xml.contains("\n  <queue name=\"eng\">"));
    assert!(!xml.contains("name=\"root.eng\""));
}

#[test]
fn placement_rules_with_nested_user_queues_and_create() {
    let xml = assert_converts_as_recorded("placement");
    assert!(xml.contains("<queue name=\"notebooks\" type=\"parent\">"));
    assert!(!xml.contains("hostname"));
}

#[test]
fn limits_and_defaults() {
    assert_converts_as_recorded("limits");
}

#[test]
fn legacy_pools_and_preemption() {
    let xml = assert_converts_as_recorded("legacy-preemption");
    assert!(!xml.contains("Preemption") && !xml.contains("<pool") && !xml.contains("reservation"));
}

#[test]
fn flat_file_with_acls() {
    assert_converts_as_recorded("flat");
}

/// What the core of this build accepts: flat queues, weights, ACLs and the file-wide policies.
#[test]
fn flat_output_parses_in_the_core() {
    let conversion = convert(&fixture("flat.xml"), "flat.xml").unwrap();
    let file = parse_queue_file(&conversion.xml).unwrap_or_else(|e| panic!("{e}\n{}", conversion.xml));
    assert_eq!(file.policy, PolicyKind::Drf);
    assert_eq!(file.app_policy, AppPolicyKind::Fifo);
    let queues: Vec<(&str, f64)> = file.queues.iter().map(|q| (q.name.as_str(), q.weight)).collect();
    assert_eq!(queues, [("root.etl", 3.0), ("root.adhoc", 1.0), ("root.default", 1.0)]);
    assert_eq!(file.root_acls.submit_apps, Some(Acl::nobody()));
    assert_eq!(file.root_acls.administer_apps, Some(Acl::parse("yarn hadoop").unwrap()));
    assert_eq!(file.queues[0].acls.submit_apps, Some(Acl::parse("oozie etl").unwrap()));
    assert_eq!(file.queues[0].acls.administer_apps, Some(Acl::parse("etl-lead").unwrap()));
    // Text Hadoop reads other than it looks never widens access.
    assert_eq!(file.queues[1].acls.submit_apps, Some(Acl::nobody()));
}

/// The converted file loads in the core and runs: an app in each of its leaves gets a container.
fn assert_core_parses(name: &str) {
    let conversion = convert(&fixture(&format!("{name}.xml")), name).unwrap();
    let file = parse_queue_file(&conversion.xml).unwrap_or_else(|e| panic!("{name}: {e}\n{}", conversion.xml));
    let mut s = Scheduler::from_xml(&conversion.xml, Settings::default()).unwrap();
    let gb = 1024;
    s.add_node(1, 1, 100, Resources::new(1024 * gb, 1024)).unwrap();
    let ask =
        Ask { priority: 0, location: ANY, num_containers: 1, relax_locality: true, capability: Resources::new(gb, 1) };
    for (key, leaf) in file.queues.iter().enumerate() {
        s.add_app(key as u64, &leaf.name, "alice").unwrap_or_else(|e| panic!("{name}: {}: {e}", leaf.name));
        s.update_asks(key as u64, &[ask], &[], &[]).unwrap();
    }
    let mut out = Vec::new();
    s.node_heartbeat(1, 1_000, &[], &mut out, 1_000).unwrap();
    assert_eq!(out.len(), file.queues.len(), "{name}: every leaf's app starts");
}

#[test]
fn hierarchy_output_parses_in_the_core() {
    assert_core_parses("hierarchy");
}

#[test]
fn placement_output_parses_in_the_core() {
    assert_core_parses("placement");
}

#[test]
fn limits_output_parses_in_the_core() {
    assert_core_parses("limits");
}

#[test]
fn legacy_output_parses_in_the_core() {
    assert_core_parses("legacy-preemption");
}

#[test]
fn output_file_option_writes_the_file_and_nothing_to_stdout() {
    let out_path = Path::new(env!("CARGO_TARGET_TMPDIR")).join("flat-converted.xml");
    let _ = std::fs::remove_file(&out_path);
    let out = run(&["convert", "flat.xml", "-o", out_path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty());
    assert_eq!(std::fs::read_to_string(&out_path).unwrap(), fixture("flat.tidal.xml"));
}

#[test]
fn malformed_xml_exits_1_naming_file_and_line() {
    let out = run(&["convert", "malformed.xml"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let err = text(&out.stderr);
    assert!(err.starts_with("tidal-queue: malformed.xml: line 8: not well-formed XML"), "{err}");
}

#[test]
fn unreadable_input_exits_1() {
    let out = run(&["convert", "no-such-file.xml"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).starts_with("tidal-queue: cannot read no-such-file.xml: "));
}

#[test]
fn bad_usage_exits_2() {
    for args in [&[][..], &["convert"], &["translate", "flat.xml"], &["convert", "flat.xml", "--bogus"]] {
        let out = run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out.stderr));
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn files_fairscheduler_refuses_are_refused_with_the_line() {
    for (xml, line, message) in [
        ("<tidal>\n<queue name=\"a\"/></tidal>", 1, "top-level element is <tidal>, not <allocations>"),
        ("<allocations>\n  <queue>\n  </queue></allocations>", 2, "<queue> has no name attribute"),
        ("<allocations>\n<queue name=\"a\">\n<pool name=\"b.c\"/></queue></allocations>", 3, "'b.c' contains a period"),
    ] {
        let err = convert(xml, "in.xml").unwrap_err();
        assert_eq!(err.line, line, "{xml}");
        assert!(err.message.contains(message), "{xml}: {}", err.message);
    }
}

/// Findings come in the file's order, however late the converter judges them.
#[test]
fn findings_are_in_line_order() {
    let conversion = convert(&fixture("limits.xml"), "limits.xml").unwrap();
    let lines: Vec<u32> = conversion.findings.iter().map(|f| f.line).collect();
    let mut sorted = lines.clone();
    sorted.sort_unstable();
    assert_eq!(lines, sorted);
    let parent_am_share = conversion.findings.iter().find(|f| f.element == "maxAMShare").unwrap();
    assert_eq!(
        (parent_am_share.outcome, parent_am_share.line, parent_am_share.queue.as_deref()),
        (Outcome::Dropped, 19, Some("root.prod"))
    );
}

#[test]
fn leaf_only_settings_stay_on_leaves_and_are_dropped_on_parents() {
    let xml =
        "<allocations>\n<queue name=\"a\">\n<maxAMShare>0.4</maxAMShare>\n<schedulingPolicy>fifo</schedulingPolicy>\n\
               </queue>\n<queue name=\"p\">\n<maxAMShare>0.4</maxAMShare>\n<schedulingPolicy>fifo</schedulingPolicy>\n\
               <queue name=\"c\"/>\n</queue>\n<queuePlacementPolicy><rule name=\"specified\"/></queuePlacementPolicy>\n\
               </allocations>";
    let conversion = convert(xml, "in.xml").unwrap();
    assert!(conversion.xml.contains(
        "<queue name=\"a\">\n    <app-policy>fifo</app-policy>\n    <maxAMShare>0.4</maxAMShare>\n  </queue>"
    ));
    assert!(conversion.xml.contains("<queue name=\"p\">\n    <queue name=\"c\"/>\n  </queue>"));
    let dropped: Vec<(&str, u32)> = conversion.findings.iter().map(|f| (f.element.as_str(), f.line)).collect();
    assert_eq!(dropped, [("maxAMShare", 7), ("schedulingPolicy", 8)]);
}

#[test]
fn placement_rules_fairscheduler_would_not_use_are_dropped() {
    let xml = "<allocations>\n<queue name=\"a\"/>\n<queuePlacementPolicy>\n\
               <rule name=\"nestedUserQueue\"/>\n\
               <rule name=\"user\" create=\"false\" queue=\"a\"><rule name=\"primaryGroup\"/></rule>\n\
               <rule name=\"default\" queue=\"\"/>\n\
               </queuePlacementPolicy>\n</allocations>";
    let conversion = convert(xml, "in.xml").unwrap();
    assert!(conversion.xml.contains(
        "<queuePlacementPolicy>\n    <rule name=\"user\" create=\"false\"/>\n    <rule name=\"default\"/>\n  \
         </queuePlacementPolicy>"
    ));
    let report: Vec<String> = conversion.findings.iter().map(ToString::to_string).collect();
    assert_eq!(
        report,
        [
            "line 4: dropped <rule>: nestedUserQueue needs exactly one nested <rule>",
            "line 5: dropped <rule@queue>: not an attribute of rule 'user'",
            "line 5: dropped <rule>: rule 'user' takes no nested elements",
        ]
    );
}
