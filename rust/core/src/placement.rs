//! Queue placement: FairScheduler's `<queuePlacementPolicy>`, its rules and their meaning
//! (Hadoop 2.7's QueuePlacementPolicy and QueuePlacementRule).
//!
//! ```xml
//! <queuePlacementPolicy>
//!   <rule name="specified" create="false"/>          <!-- the queue named at submission, unless "default" -->
//!   <rule name="nestedUserQueue">                    <!-- <parent from the nested rule>.<user> -->
//!     <rule name="primaryGroup" create="false"/>
//!   </rule>
//!   <rule name="user" create="false"/>               <!-- root.<user> -->
//!   <rule name="primaryGroup" create="false"/>       <!-- root.<first group> -->
//!   <rule name="secondaryGroupExistingQueue"/>       <!-- root.<a later group> whose queue exists -->
//!   <rule name="default" queue="default"/>           <!-- root.<queue>, root.default without queue= -->
//!   <rule name="reject"/>
//! </queuePlacementPolicy>
//! ```
//!
//! Rules are tried in order; the first that names a queue places the app. A rule names a queue
//! only if the queue exists or its `create` attribute (true unless given) allows creating it;
//! otherwise the next rule is tried. `reject` rejects the app. A rule that always places or
//! rejects (`default`, `reject`, and `user` and `primaryGroup` with create) is terminal: it must
//! be the last rule, and the last rule must be terminal.
//!
//! Without the element the queue named at submission is used (or `default`) and nothing is
//! created, as before.

use crate::xml_source::XmlSource;
use serde::Serialize;

/// The queue requested when a submission names none.
pub const DEFAULT_QUEUE: &str = "default";

/// What a rule does.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum RuleKind {
    Specified,
    User,
    PrimaryGroup,
    SecondaryGroupExistingQueue,
    /// The user's queue under the parent the nested rule names.
    NestedUserQueue(Box<Rule>),
    /// The queue to use, as the `queue` attribute gives it (short or full).
    Default(String),
    Reject,
}

/// One `<rule>` with its `create` attribute and its line in the allocation file.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Rule {
    pub kind: RuleKind,
    pub create: bool,
    pub line: u32,
}

/// What a queue name refers to, as placement needs to know it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum QueueType {
    Leaf,
    Parent,
}

/// The queues placement resolves against, given by the scheduler: how a name given short or
/// full becomes a full name (the core builds full names in one place), and what exists.
pub trait Queues {
    fn full_name(&self, name: &str) -> String;
    /// What the full name `full` is, or `None` when no such queue exists.
    fn kind(&self, full: &str) -> Option<QueueType>;
}

/// The outcome of one rule: place, go on to the next rule, or reject.
enum Outcome {
    Place(String),
    Next,
    Reject(String),
}

impl Rule {
    pub fn name(&self) -> &'static str {
        match self.kind {
            RuleKind::Specified => "specified",
            RuleKind::User => "user",
            RuleKind::PrimaryGroup => "primaryGroup",
            RuleKind::SecondaryGroupExistingQueue => "secondaryGroupExistingQueue",
            RuleKind::NestedUserQueue(_) => "nestedUserQueue",
            RuleKind::Default(_) => "default",
            RuleKind::Reject => "reject",
        }
    }

    /// Whether the rule never passes on to the next one.
    pub fn is_terminal(&self) -> bool {
        match self.kind {
            RuleKind::User | RuleKind::PrimaryGroup => self.create,
            RuleKind::Default(_) | RuleKind::Reject => true,
            RuleKind::Specified | RuleKind::SecondaryGroupExistingQueue | RuleKind::NestedUserQueue(_) => false,
        }
    }

    fn uses_groups(&self) -> bool {
        match &self.kind {
            RuleKind::PrimaryGroup | RuleKind::SecondaryGroupExistingQueue => true,
            RuleKind::NestedUserQueue(nested) => nested.uses_groups(),
            RuleKind::Specified | RuleKind::User | RuleKind::Default(_) | RuleKind::Reject => false,
        }
    }

    /// The queue this rule would use, before `create` is considered; `Next` when it has none.
    fn queue_for(&self, requested: &str, user: &str, groups: &[String], queues: &dyn Queues) -> Outcome {
        let no_groups = || {
            Outcome::Reject(format!("rule '{}' (line {}): no groups found for user '{user}'", self.name(), self.line))
        };
        match &self.kind {
            RuleKind::Specified if requested.trim().is_empty() || requested.trim() == DEFAULT_QUEUE => Outcome::Next,
            RuleKind::Specified => Outcome::Place(queues.full_name(requested)),
            RuleKind::User => Outcome::Place(queues.full_name(user)),
            RuleKind::PrimaryGroup => match groups.first() {
                Some(g) => Outcome::Place(queues.full_name(g)),
                None => no_groups(),
            },
            RuleKind::SecondaryGroupExistingQueue if groups.is_empty() => no_groups(),
            RuleKind::SecondaryGroupExistingQueue => groups[1..]
                .iter()
                .map(|g| queues.full_name(g))
                .find(|q| queues.kind(q).is_some())
                .map_or(Outcome::Next, Outcome::Place),
            RuleKind::NestedUserQueue(nested) => match nested.apply(requested, user, groups, queues) {
                // A leaf cannot hold the user's queue: on to the next rule.
                Outcome::Place(parent) if queues.kind(&parent) == Some(QueueType::Leaf) => Outcome::Next,
                Outcome::Place(parent) => Outcome::Place(queues.full_name(&format!("{parent}.{user}"))),
                other => other,
            },
            RuleKind::Default(queue) => Outcome::Place(queues.full_name(queue)),
            RuleKind::Reject => {
                Outcome::Reject(format!("rejected by the queue placement policy's rule 'reject' (line {})", self.line))
            }
        }
    }

    /// The rule's outcome: its queue if it exists or may be created.
    fn apply(&self, requested: &str, user: &str, groups: &[String], queues: &dyn Queues) -> Outcome {
        match self.queue_for(requested, user, groups, queues) {
            Outcome::Place(q) if self.create || queues.kind(&q).is_some() => Outcome::Place(q),
            Outcome::Place(_) => Outcome::Next,
            other => other,
        }
    }
}

/// A validated `<queuePlacementPolicy>`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PlacementPolicy {
    rules: Vec<Rule>,
}

impl PlacementPolicy {
    /// Checks FairScheduler's conditions: only the last rule is terminal, and it is.
    pub fn new(rules: Vec<Rule>, line: u32) -> Result<PlacementPolicy, String> {
        let Some(last) = rules.last() else {
            return Err(format!("line {line}: <queuePlacementPolicy> has no rules"));
        };
        if let Some(r) = rules[..rules.len() - 1].iter().find(|r| r.is_terminal()) {
            return Err(format!(
                "line {}: rules after rule '{}' in the queue placement policy can never be reached (it always places or rejects)",
                r.line,
                r.name()
            ));
        }
        if !last.is_terminal() {
            return Err(format!(
                "line {}: an application could get past the last queue placement rule '{}' without a queue \
                 (end with 'default', 'reject', or 'user' or 'primaryGroup' with create=\"true\")",
                last.line,
                last.name()
            ));
        }
        Ok(PlacementPolicy { rules })
    }

    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// Whether any rule reads the user's groups. The shim resolves groups only then: Hadoop's
    /// group mapping may fork a shell per lookup, which every submission would pay for nothing.
    pub fn uses_groups(&self) -> bool {
        self.rules.iter().any(Rule::uses_groups)
    }

    /// The full name of the queue for an app submitted to `requested` by `user` whose groups
    /// are `groups` (primary first), among `queues`; a name they do not know was allowed by its
    /// rule's `create` and is to be created. `Err` is the reason the app is rejected.
    pub fn place(&self, requested: &str, user: &str, groups: &[String], queues: &dyn Queues) -> Result<String, String> {
        for rule in &self.rules {
            match rule.apply(requested, user, groups, queues) {
                Outcome::Place(q) => return Ok(q),
                Outcome::Reject(reason) => return Err(reason),
                Outcome::Next => {}
            }
        }
        let last = self.rules.last().expect("a policy has rules");
        Err(format!(
            "no rule of the queue placement policy placed the application (the last, '{}' at line {}, names a queue \
             that does not exist and may not be created)",
            last.name(),
            last.line
        ))
    }
}

/// Parses a `<queuePlacementPolicy>` element.
pub(crate) fn parse(doc: &XmlSource, node: roxmltree::Node) -> Result<PlacementPolicy, String> {
    let line = doc.line(node);
    if let Some(a) = node.attributes().next() {
        return Err(format!("line {line}: unknown attribute '{}' on <queuePlacementPolicy>", a.name()));
    }
    let rules =
        node.children().filter(|n| n.is_element()).map(|n| parse_rule(doc, n)).collect::<Result<Vec<_>, _>>()?;
    PlacementPolicy::new(rules, line)
}

fn parse_rule(doc: &XmlSource, node: roxmltree::Node) -> Result<Rule, String> {
    let line = doc.line(node);
    let tag = node.tag_name().name();
    if tag != "rule" {
        return Err(format!(
            "line {line}: unknown element <{tag}> in <queuePlacementPolicy> (expected <rule name=\"..\">)"
        ));
    }
    let name = node.attribute("name").map(str::trim).unwrap_or("");
    if name.is_empty() {
        return Err(format!("line {line}: <rule> has no name attribute"));
    }
    let bad = |what: String| format!("line {line}: rule '{name}': {what}");
    let create = match node.attribute("create").map(str::trim) {
        None => true,
        Some("true") => true,
        Some("false") => false,
        Some(other) => return Err(bad(format!("create '{other}' is not true or false"))),
    };
    for a in node.attributes() {
        match a.name() {
            "name" | "create" => {}
            "queue" if name == "default" => {}
            other => return Err(bad(format!("unknown attribute '{other}'"))),
        }
    }
    let children: Vec<roxmltree::Node> = node.children().filter(|n| n.is_element()).collect();
    let kind = match name {
        "specified" => RuleKind::Specified,
        "user" => RuleKind::User,
        "primaryGroup" => RuleKind::PrimaryGroup,
        "secondaryGroupExistingQueue" => RuleKind::SecondaryGroupExistingQueue,
        "default" => {
            let q = node.attribute("queue").map(str::trim).filter(|q| !q.is_empty()).unwrap_or(DEFAULT_QUEUE);
            RuleKind::Default(q.to_string())
        }
        "reject" => RuleKind::Reject,
        "nestedUserQueue" => match children.as_slice() {
            [nested] => RuleKind::NestedUserQueue(Box::new(parse_rule(doc, *nested)?)),
            [] => return Err(bad("needs a nested <rule> naming the parent queue".into())),
            _ => return Err(bad("takes exactly one nested <rule>".into())),
        },
        other => {
            return Err(format!(
                "line {line}: unknown rule '{other}' (known: specified, user, primaryGroup, \
                 secondaryGroupExistingQueue, nestedUserQueue, default, reject)"
            ))
        }
    };
    if !matches!(kind, RuleKind::NestedUserQueue(_)) && !children.is_empty() {
        return Err(bad("takes no child elements".into()));
    }
    Ok(Rule { kind, create, line })
}
