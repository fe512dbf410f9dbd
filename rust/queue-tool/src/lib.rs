//! Conversion of a Hadoop FairScheduler allocation file (`fair-scheduler.xml`) into Tidal's queue
//! file, for `tidal-queue convert`.
//!
//! Everything that has a meaning in Tidal is carried over under FairScheduler's own element
//! names (the queue file uses them where the meaning is the same); what has none is left out and
//! reported with its line, queue and reason, and what Tidal does differently is reported as a
//! change. The mapping:
//!
//! - `<queue>` and the legacy `<pool>`, nested, with `type="parent"`: the same tree; the children
//!   of `<queue name="root">` become top-level queues (names are relative to root), root's ACLs
//!   stay on `<queue name="root">`.
//! - Between queues FairScheduler shares by weighted fair share per parent; the output says
//!   `<policy>drf</policy>`, Tidal's weighted dominant resource fairness over the tree, so a
//!   parent's `schedulingPolicy` (how its children share) is left out.
//! - Inside a leaf: `schedulingPolicy` (and `defaultQueueSchedulingPolicy`, FairScheduler's
//!   default `fair` when absent) becomes `<app-policy>`: `fifo` is `fifo`; `fair` and `drf` are
//!   `job-fair`, which gives every job of the queue an equal dominant share (job-level DRF:
//!   exactly FairScheduler's `drf`; `fair` divided memory alone).
//! - `weight`, `minResources`/`maxResources` (see [`resources`]), `maxRunningApps`,
//!   `maxAMShare` (leaves only, as in FairScheduler), the ACLs, `<user>` limits and the
//!   `*Default` limits keep their names and meaning; ACLs are written in the canonical form
//!   Hadoop reads back unchanged.
//! - `queuePlacementPolicy` and its rules carry over as they are.
//! - Preemption, `maxChildResources`, `reservation` and anything else are left out.

pub mod resources;

use quick_xml::events::{BytesText, Event};
use quick_xml::Writer;
use roxmltree::Node;
use std::fmt;
use std::io;
use tidal_core::acl::Acl;
use tidal_core::config::{AppPolicyKind, PolicyKind, ROOT};

/// What became of an element of the input that is not carried over as it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Left out: Tidal has no meaning for it.
    Dropped,
    /// Carried over with a meaning or form that differs from FairScheduler's.
    Changed,
}

/// One entry of the conversion report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    pub outcome: Outcome,
    /// Line of the element in the input.
    pub line: u32,
    /// Full name of the queue it belongs to, if any.
    pub queue: Option<String>,
    /// The element (or `element@attribute`).
    pub element: String,
    pub reason: String,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.outcome {
            Outcome::Dropped => "dropped",
            Outcome::Changed => "changed",
        };
        write!(f, "line {}: {what} <{}>", self.line, self.element)?;
        if let Some(q) = &self.queue {
            write!(f, " of queue {q}")?;
        }
        write!(f, ": {}", self.reason)
    }
}

/// A converted file and its report.
#[derive(Debug)]
pub struct Conversion {
    pub xml: String,
    pub findings: Vec<Finding>,
}

/// Why the input is not a FairScheduler allocation file that can be converted.
#[derive(Debug, PartialEq, Eq)]
pub struct InputError {
    pub line: u32,
    pub message: String,
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for InputError {}

const PREEMPTION: &str = "Tidal never preempts containers";

/// Elements of a queue with no Tidal meaning, and why.
fn queue_element_without_meaning(tag: &str) -> Option<&'static str> {
    Some(match tag {
        "minSharePreemptionTimeout"
        | "fairSharePreemptionTimeout"
        | "fairSharePreemptionThreshold"
        | "allowPreemptionFrom" => PREEMPTION,
        "maxChildResources" => "Tidal has no limits for queues created at run time under a parent",
        "reservation" => "it opens the queue to YARN's ReservationSystem, which Tidal does not serve",
        "maxContainerAllocation" => {
            "Tidal has one maximum allocation for the cluster (yarn.scheduler.maximum-allocation-*)"
        }
        _ => return None,
    })
}

/// Top-level elements with no Tidal meaning, and why.
fn top_element_without_meaning(tag: &str) -> Option<&'static str> {
    Some(match tag {
        "defaultFairSharePreemptionTimeout"
        | "fairSharePreemptionTimeout"
        | "defaultMinSharePreemptionTimeout"
        | "defaultFairSharePreemptionThreshold" => PREEMPTION,
        "queueMaxResourcesDefault" => "Tidal has no default maximum: give <maxResources> on each queue",
        "reservation-agent" | "reservation-policy" | "reservation-planner" => {
            "Tidal does not serve YARN's ReservationSystem"
        }
        _ => return None,
    })
}

const RULES: [&str; 7] =
    ["specified", "user", "primaryGroup", "secondaryGroupExistingQueue", "nestedUserQueue", "default", "reject"];

#[derive(Debug, Default)]
struct Queue {
    /// Name as written in the output: the leaf name.
    name: String,
    declared_parent: bool,
    weight: Option<String>,
    app_policy: Option<&'static str>,
    min_resources: Option<String>,
    max_resources: Option<String>,
    max_running_apps: Option<u32>,
    max_am_share: Option<String>,
    acls: Acls,
    children: Vec<Queue>,
}

#[derive(Debug, Default)]
struct Acls {
    submit: Option<String>,
    administer: Option<String>,
}

#[derive(Debug)]
struct Rule {
    name: String,
    create: Option<bool>,
    queue: Option<String>,
    nested: Option<Box<Rule>>,
}

impl Rule {
    /// Whether the rule never passes on to the next (FairScheduler's `isTerminal`; `create`
    /// defaults to true).
    fn is_terminal(&self) -> bool {
        match self.name.as_str() {
            "default" | "reject" => true,
            "user" | "primaryGroup" => self.create.unwrap_or(true),
            _ => false,
        }
    }
}

#[derive(Debug, Default)]
struct Allocations {
    app_policy: Option<&'static str>,
    user_max_apps_default: Option<u32>,
    queue_max_apps_default: Option<u32>,
    queue_max_am_share_default: Option<String>,
    users: Vec<(String, u32)>,
    root_acls: Acls,
    queues: Vec<Queue>,
    placement: Option<Vec<Rule>>,
}

struct Reader<'a, 'input> {
    doc: &'a roxmltree::Document<'input>,
    findings: Vec<Finding>,
}

/// Converts the allocation file `xml`; `source` names it in the output's opening comment.
pub fn convert(xml: &str, source: &str) -> Result<Conversion, InputError> {
    let doc = roxmltree::Document::parse(xml)
        .map_err(|e| InputError { line: e.pos().row, message: format!("not well-formed XML: {e}") })?;
    let root = doc.root_element();
    let mut reader = Reader { doc: &doc, findings: Vec::new() };
    if root.tag_name().name() != "allocations" {
        return Err(InputError {
            line: reader.line(root),
            message: format!(
                "not a FairScheduler allocation file: the top-level element is <{}>, not <allocations>",
                root.tag_name().name()
            ),
        });
    }
    let allocations = reader.allocations(root)?;
    let xml = write(&allocations, source).map_err(|e| InputError { line: 0, message: e.to_string() })?;
    // Leaf-only settings are judged after their queue's children: report in the file's order.
    let mut findings = reader.findings;
    findings.sort_by_key(|f| f.line);
    Ok(Conversion { xml, findings })
}

impl Reader<'_, '_> {
    fn line(&self, node: Node) -> u32 {
        self.doc.text_pos_at(node.range().start).row
    }

    fn report(&mut self, outcome: Outcome, node: Node, queue: Option<&str>, reason: impl Into<String>) {
        self.findings.push(Finding {
            outcome,
            line: self.line(node),
            queue: queue.map(str::to_string),
            element: node.tag_name().name().to_string(),
            reason: reason.into(),
        });
    }

    fn report_attribute(&mut self, node: Node, attribute: &str, queue: Option<&str>, reason: impl Into<String>) {
        self.findings.push(Finding {
            outcome: Outcome::Dropped,
            line: self.line(node),
            queue: queue.map(str::to_string),
            element: format!("{}@{attribute}", node.tag_name().name()),
            reason: reason.into(),
        });
    }

    fn allocations(&mut self, root: Node) -> Result<Allocations, InputError> {
        let mut out = Allocations::default();
        for child in root.children().filter(Node::is_element) {
            let tag = child.tag_name().name();
            match tag {
                "queue" | "pool" if name_of(child) == Some(ROOT) => {
                    let q = self.queue(child, None)?;
                    out.root_acls = q.acls;
                    out.queues.extend(q.children);
                }
                "queue" | "pool" => {
                    let q = self.queue(child, Some(ROOT))?;
                    out.queues.push(q);
                }
                "user" => {
                    if let Some(user) = self.user(child) {
                        out.users.push(user);
                    }
                }
                "userMaxAppsDefault" => out.user_max_apps_default = self.count(child, None),
                "queueMaxAppsDefault" => out.queue_max_apps_default = self.count(child, None),
                "queueMaxAMShareDefault" => out.queue_max_am_share_default = self.am_share(child, None),
                "defaultQueueSchedulingPolicy" | "defaultQueueSchedulingMode" => {
                    out.app_policy = self.app_policy(child, None).or(out.app_policy)
                }
                "queuePlacementPolicy" => out.placement = Some(self.placement(child)),
                _ => match top_element_without_meaning(tag) {
                    Some(reason) => self.report(Outcome::Dropped, child, None, reason),
                    None => self.report(Outcome::Dropped, child, None, "not an allocation-file element Tidal knows"),
                },
            }
        }
        if out.placement.is_none() {
            self.findings.push(Finding {
                outcome: Outcome::Changed,
                line: self.line(root),
                queue: None,
                element: "queuePlacementPolicy".into(),
                reason: "none given: FairScheduler then places by yarn-site.xml (by default the queue named at \
                         submission, else one named after the user, creating either); Tidal places in the named \
                         queue or default and creates none. Add a <queuePlacementPolicy> to keep FairScheduler's \
                         behaviour"
                    .into(),
            });
        }
        Ok(out)
    }

    /// A `<queue>` or `<pool>` under the queue `parent` (`None`: the root itself).
    fn queue(&mut self, node: Node, parent: Option<&str>) -> Result<Queue, InputError> {
        let name = name_of(node).ok_or_else(|| InputError {
            line: self.line(node),
            message: format!("<{}> has no name attribute", node.tag_name().name()),
        })?;
        if name.contains('.') {
            return Err(InputError {
                line: self.line(node),
                message: format!("queue name '{name}' contains a period (FairScheduler refuses it too)"),
            });
        }
        let full_name = parent.map_or_else(|| ROOT.to_string(), |p| format!("{p}.{name}"));
        let q = Some(full_name.as_str());
        let mut queue = Queue { name: name.to_string(), ..Queue::default() };
        for attr in node.attributes() {
            match (attr.name(), attr.value()) {
                ("name", _) => {}
                ("type", "parent") if parent.is_some() => queue.declared_parent = true,
                ("type", other) => self.report_attribute(
                    node,
                    "type",
                    q,
                    format!("type=\"{other}\" has no meaning here (only type=\"parent\" on a queue below root)"),
                ),
                (other, _) => self.report_attribute(node, other, q, "not an attribute FairScheduler knows"),
            }
        }
        // Leaf-only settings wait until the children are known.
        let mut am_share = None;
        let mut policy = None;
        for child in node.children().filter(Node::is_element) {
            let tag = child.tag_name().name();
            if let Some(reason) = queue_element_without_meaning(tag) {
                self.report(Outcome::Dropped, child, q, reason);
                continue;
            }
            match tag {
                "queue" | "pool" => queue.children.push(self.queue(child, q)?),
                "aclSubmitApps" => queue.acls.submit = self.acl(child, &full_name),
                "aclAdministerApps" => queue.acls.administer = self.acl(child, &full_name),
                "weight" | "minResources" | "maxResources" | "maxRunningApps" | "maxAMShare" | "schedulingPolicy"
                | "schedulingMode"
                    if parent.is_none() =>
                {
                    let reason = match tag {
                        "schedulingPolicy" | "schedulingMode" => {
                            "it orders root's children, which Tidal shares by <policy>drf</policy>"
                        }
                        _ => "Tidal's root takes only ACLs",
                    };
                    self.report(Outcome::Dropped, child, q, reason);
                }
                "weight" => queue.weight = self.weight(child, &full_name),
                "minResources" | "maxResources" => {
                    let converted = self.resources(child, &full_name);
                    *if tag == "minResources" { &mut queue.min_resources } else { &mut queue.max_resources } =
                        converted;
                }
                "maxRunningApps" => queue.max_running_apps = self.count(child, q),
                "maxAMShare" => am_share = Some(child),
                "schedulingPolicy" | "schedulingMode" => policy = Some(child),
                _ => self.report(Outcome::Dropped, child, q, "not a queue element Tidal knows"),
            }
        }
        if queue.declared_parent || !queue.children.is_empty() {
            let leaf_only = [
                (am_share, "a parent queue has no AMs of its own (FairScheduler ignores it too)"),
                (policy, "on a parent it orders the children, which Tidal shares by <policy>drf</policy>"),
            ];
            for (child, reason) in leaf_only {
                if let Some(child) = child {
                    self.report(Outcome::Dropped, child, q, reason);
                }
            }
        } else {
            queue.max_am_share = am_share.and_then(|child| self.am_share(child, q));
            queue.app_policy = policy.and_then(|child| self.app_policy(child, q));
        }
        Ok(queue)
    }

    fn user(&mut self, node: Node) -> Option<(String, u32)> {
        let Some(name) = name_of(node) else {
            self.report(Outcome::Dropped, node, None, "no name attribute");
            return None;
        };
        let mut max = None;
        for child in node.children().filter(Node::is_element) {
            match child.tag_name().name() {
                "maxRunningApps" => max = self.count(child, None),
                _ => {
                    self.report(Outcome::Dropped, child, None, format!("not a user element Tidal knows (user {name})"))
                }
            }
        }
        max.map(|m| (name.to_string(), m))
    }

    fn text<'n>(node: Node<'n, '_>) -> &'n str {
        node.text().unwrap_or("").trim()
    }

    fn weight(&mut self, node: Node, queue: &str) -> Option<String> {
        let text = Self::text(node);
        match text.parse::<f64>() {
            Ok(w) if w.is_finite() && w > 0.0 => Some(text.to_string()),
            _ => {
                self.report(
                    Outcome::Dropped,
                    node,
                    Some(queue),
                    format!("'{text}' is not a positive weight; the queue gets weight 1"),
                );
                None
            }
        }
    }

    fn count(&mut self, node: Node, queue: Option<&str>) -> Option<u32> {
        let text = Self::text(node);
        let parsed = text.parse::<u32>().ok();
        if parsed.is_none() {
            self.report(Outcome::Dropped, node, queue, format!("'{text}' is not a whole number >= 0"));
        }
        parsed
    }

    /// `maxAMShare` and its default: a fraction in [0, 1], or -1 for no check.
    fn am_share(&mut self, node: Node, queue: Option<&str>) -> Option<String> {
        let text = Self::text(node);
        match text.parse::<f64>() {
            Ok(s) if s == -1.0 || (0.0..=1.0).contains(&s) => Some(text.to_string()),
            _ => {
                self.report(Outcome::Dropped, node, queue, format!("'{text}' is not a fraction in [0, 1] or -1"));
                None
            }
        }
    }

    fn resources(&mut self, node: Node, queue: &str) -> Option<String> {
        match resources::convert(Self::text(node)) {
            Ok(c) => {
                for left_out in &c.left_out {
                    self.report(
                        Outcome::Changed,
                        node,
                        Some(queue),
                        format!(
                            "resource type '{left_out}' left out: Tidal's notation has memory, vcores, GPUs and FPGAs"
                        ),
                    );
                }
                Some(c.text)
            }
            Err(reason) => {
                self.report(Outcome::Dropped, node, Some(queue), reason);
                None
            }
        }
    }

    /// FairScheduler's policy name as Tidal's app policy. See the module documentation.
    fn app_policy(&mut self, node: Node, queue: Option<&str>) -> Option<&'static str> {
        let text = Self::text(node);
        let job_fair = AppPolicyKind::JobFair.name();
        match text.to_ascii_lowercase().as_str() {
            "fifo" => Some(AppPolicyKind::Fifo.name()),
            "fair" => {
                let reason = format!(
                    "fair -> {job_fair}: jobs share equally by dominant share (all resources), where FairScheduler's \
                     fair divided memory alone"
                );
                self.report(Outcome::Changed, node, queue, reason);
                Some(job_fair)
            }
            "drf" => {
                let reason =
                    format!("drf -> {job_fair}: Tidal's {job_fair} is job-level DRF (equal dominant shares per job)");
                self.report(Outcome::Changed, node, queue, reason);
                Some(job_fair)
            }
            _ => {
                let reason =
                    format!("'{text}' (a custom SchedulingPolicy class) has no Tidal equivalent; the default applies");
                self.report(Outcome::Dropped, node, queue, reason);
                None
            }
        }
    }

    /// An ACL in the canonical form Hadoop reads back unchanged. Text that Hadoop would read
    /// differently from how it looks becomes "nobody", so that the conversion never widens
    /// access; the report says so.
    fn acl(&mut self, node: Node, queue: &str) -> Option<String> {
        if node.children().any(|n| n.is_element()) {
            self.report(Outcome::Dropped, node, Some(queue), "holds elements rather than an ACL; nobody may then");
            return Some(Acl::nobody().to_string());
        }
        let text: String = node.children().filter_map(|n| if n.is_text() { n.text() } else { None }).collect();
        match Acl::parse(&text) {
            Ok(acl) => Some(acl.to_string()),
            Err(reason) => {
                let reason = format!("{reason}; written as ' ' (nobody) until you fix it");
                self.report(Outcome::Changed, node, Some(queue), reason);
                Some(Acl::nobody().to_string())
            }
        }
    }

    fn placement(&mut self, node: Node) -> Vec<Rule> {
        for attr in node.attributes() {
            self.report_attribute(node, attr.name(), None, "not an attribute FairScheduler knows");
        }
        let mut rules: Vec<Rule> = Vec::new();
        for child in node.children().filter(Node::is_element) {
            if child.tag_name().name() != "rule" {
                self.report(Outcome::Dropped, child, None, "not a placement element Tidal knows");
                continue;
            }
            if let Some(last) = rules.last().filter(|r| r.is_terminal()) {
                // FairScheduler refuses such a file; the rules it could never reach go.
                let reason = format!("can never be reached: rule '{}' before it always places or rejects", last.name);
                self.report(Outcome::Dropped, child, None, reason);
                continue;
            }
            rules.extend(self.rule(child));
        }
        rules
    }

    fn rule(&mut self, node: Node) -> Option<Rule> {
        let Some(name) = node.attribute("name").map(str::trim).filter(|n| RULES.contains(n)) else {
            let name = node.attribute("name").unwrap_or("");
            let reason = format!("rule '{name}' is not one of {}", RULES.join(", "));
            self.report(Outcome::Dropped, node, None, reason);
            return None;
        };
        let mut rule = Rule { name: name.to_string(), create: None, queue: None, nested: None };
        for attr in node.attributes() {
            match attr.name() {
                "name" => {}
                "create" => {
                    let value = attr.value().trim();
                    // FairScheduler's Boolean.parseBoolean: anything but "true" is false.
                    let create = value.eq_ignore_ascii_case("true");
                    if !create && !value.eq_ignore_ascii_case("false") {
                        let reason = format!("create=\"{value}\" is read as false, as FairScheduler reads it");
                        self.findings.push(Finding {
                            outcome: Outcome::Changed,
                            line: self.line(node),
                            queue: None,
                            element: "rule@create".into(),
                            reason,
                        });
                    }
                    rule.create = Some(create);
                }
                // An empty queue is FairScheduler's root.default, as no attribute is.
                "queue" if name == "default" => {
                    rule.queue = Some(attr.value().trim().to_string()).filter(|q| !q.is_empty())
                }
                other => {
                    let reason = format!("not an attribute of rule '{name}'");
                    self.report_attribute(node, other, None, reason);
                }
            }
        }
        let nested: Vec<Node> = node.children().filter(Node::is_element).collect();
        if name == "nestedUserQueue" {
            match nested.as_slice() {
                [inner] if inner.tag_name().name() == "rule" => {
                    rule.nested = Some(Box::new(self.rule(*inner)?));
                }
                _ => {
                    self.report(Outcome::Dropped, node, None, "nestedUserQueue needs exactly one nested <rule>");
                    return None;
                }
            }
        } else {
            for inner in nested {
                self.report(Outcome::Dropped, inner, None, format!("rule '{name}' takes no nested elements"));
            }
        }
        Some(rule)
    }
}

fn name_of<'a>(node: Node<'a, '_>) -> Option<&'a str> {
    node.attribute("name").map(str::trim).filter(|n| !n.is_empty())
}

type Xml = Writer<Vec<u8>>;

/// A comment; `--` may not appear inside one.
fn comment(xml: &mut Xml, text: &str) -> io::Result<()> {
    let text = format!(" {} ", text.replace("--", "- -"));
    xml.write_event(Event::Comment(BytesText::from_escaped(text)))
}

fn element(xml: &mut Xml, name: &str, text: &str) -> io::Result<()> {
    xml.create_element(name).write_text_content(BytesText::new(text))?;
    Ok(())
}

fn write(a: &Allocations, source: &str) -> io::Result<String> {
    let mut xml = Writer::new_with_indent(Vec::new(), b' ', 2);
    comment(&mut xml, &format!("Converted from the FairScheduler allocation file {source} by tidal-queue convert."))?;
    xml.create_element("tidal").write_inner_content(|xml| {
        comment(
            xml,
            "Across queues: FairScheduler's weighted fair sharing between sibling queues becomes weighted \
             DRF over the queue tree.",
        )?;
        element(xml, "policy", PolicyKind::Drf.name())?;
        if a.app_policy.is_none() {
            comment(xml, "Inside leaf queues: FairScheduler's default policy, fair, as job-fair.")?;
        }
        element(xml, "app-policy", a.app_policy.unwrap_or(AppPolicyKind::JobFair.name()))?;
        if let Some(n) = a.user_max_apps_default {
            element(xml, "userMaxAppsDefault", &n.to_string())?;
        }
        if let Some(n) = a.queue_max_apps_default {
            element(xml, "queueMaxAppsDefault", &n.to_string())?;
        }
        match &a.queue_max_am_share_default {
            Some(s) => element(xml, "queueMaxAMShareDefault", s)?,
            None => {
                // FairScheduler checks AM shares by default; Tidal only when the file asks.
                comment(xml, "FairScheduler's default AM share, which Tidal applies only when given.")?;
                element(xml, "queueMaxAMShareDefault", "0.5")?;
            }
        }
        for (name, max) in &a.users {
            xml.create_element("user")
                .with_attribute(("name", name.as_str()))
                .write_inner_content(|xml| element(xml, "maxRunningApps", &max.to_string()))?;
        }
        if a.root_acls.submit.is_some() || a.root_acls.administer.is_some() {
            xml.create_element("queue")
                .with_attribute(("name", ROOT))
                .write_inner_content(|xml| acls(xml, &a.root_acls))?;
        }
        for q in &a.queues {
            queue(xml, q)?;
        }
        if let Some(rules) = &a.placement {
            xml.create_element("queuePlacementPolicy").write_inner_content(|xml| {
                for r in rules {
                    rule(xml, r)?;
                }
                Ok(())
            })?;
        }
        Ok(())
    })?;
    let mut out = String::from_utf8(xml.into_inner()).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
    out.push('\n');
    Ok(out)
}

fn acls(xml: &mut Xml, acls: &Acls) -> io::Result<()> {
    if let Some(a) = &acls.submit {
        element(xml, "aclSubmitApps", a)?;
    }
    if let Some(a) = &acls.administer {
        element(xml, "aclAdministerApps", a)?;
    }
    Ok(())
}

fn queue(xml: &mut Xml, q: &Queue) -> io::Result<()> {
    let mut start = xml.create_element("queue").with_attribute(("name", q.name.as_str()));
    // The type only matters for a parent that has no children yet.
    if q.declared_parent && q.children.is_empty() {
        start = start.with_attribute(("type", "parent"));
    }
    let fields = [
        ("weight", q.weight.clone()),
        ("app-policy", q.app_policy.map(str::to_string)),
        ("minResources", q.min_resources.clone()),
        ("maxResources", q.max_resources.clone()),
        ("maxRunningApps", q.max_running_apps.map(|n| n.to_string())),
        ("maxAMShare", q.max_am_share.clone()),
    ];
    if fields.iter().all(|(_, v)| v.is_none())
        && q.acls.submit.is_none()
        && q.acls.administer.is_none()
        && q.children.is_empty()
    {
        start.write_empty()?;
        return Ok(());
    }
    start.write_inner_content(|xml| {
        for (name, value) in &fields {
            if let Some(v) = value {
                element(xml, name, v)?;
            }
        }
        acls(xml, &q.acls)?;
        for child in &q.children {
            queue(xml, child)?;
        }
        Ok(())
    })?;
    Ok(())
}

fn rule(xml: &mut Xml, r: &Rule) -> io::Result<()> {
    let mut start = xml.create_element("rule").with_attribute(("name", r.name.as_str()));
    if let Some(c) = r.create {
        start = start.with_attribute(("create", if c { "true" } else { "false" }));
    }
    if let Some(q) = &r.queue {
        start = start.with_attribute(("queue", q.as_str()));
    }
    match &r.nested {
        Some(inner) => start.write_inner_content(|xml| rule(xml, inner)).map(|_| ()),
        None => start.write_empty().map(|_| ()),
    }
}
