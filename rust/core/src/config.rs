//! Scheduler configuration: the queue allocation file (XML, in `hadoop-conf/`) and the numeric
//! settings the RM takes from `yarn-site.xml`.
//!
//! The XML is parsed here rather than in the Java shim so that the RM and the simulator read the
//! very same file with the very same validation. Parsing is strict: an unknown element or
//! attribute is an error, because a typo silently ignored is a queue silently misconfigured.
//!
//! ```xml
//! <tidal>
//!   <policy>drf</policy>
//!   <queue name="analytics"><weight>2</weight></queue>
//!   <queue name="etl"><weight>1</weight></queue>
//! </tidal>
//! ```

use crate::error::{CoreError, Result};
use crate::resource::Resources;
use serde::Serialize;

/// The root of the queue hierarchy; every configured queue is a leaf directly under it.
pub const ROOT: &str = "root";

/// Which policy orders queues. One module per policy under [`crate::policy`].
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PolicyKind {
    /// Weighted dominant resource fairness across queues, FIFO inside a queue.
    Drf,
}

impl PolicyKind {
    pub fn parse(name: &str) -> Option<PolicyKind> {
        match name.trim().to_ascii_lowercase().as_str() {
            "drf" => Some(PolicyKind::Drf),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            PolicyKind::Drf => "drf",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct QueueConfig {
    /// Full name, `root.<leaf>`.
    pub name: String,
    pub weight: f64,
}

/// The contents of the allocation file.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct QueueFile {
    pub policy: PolicyKind,
    pub queues: Vec<QueueConfig>,
}

/// Numeric settings that come from the RM's own configuration.
#[derive(Copy, Clone, Debug, PartialEq, Serialize)]
pub struct Settings {
    /// `yarn.scheduler.minimum-allocation-*`: requests are rounded up to multiples of this.
    pub min_allocation: Resources,
    /// `yarn.scheduler.maximum-allocation-*`: larger requests are rejected.
    pub max_allocation: Resources,
    /// Containers started on one node per heartbeat, at most.
    pub max_assign_per_heartbeat: u32,
}

impl Default for Settings {
    /// YARN 2.7's defaults.
    fn default() -> Self {
        Settings {
            min_allocation: Resources::new(1024, 1),
            max_allocation: Resources::new(8192, 32),
            max_assign_per_heartbeat: 10,
        }
    }
}

impl Settings {
    pub fn validate(&self) -> Result<()> {
        let (min, max) = (self.min_allocation, self.max_allocation);
        if min.any_negative() || max.any_negative() {
            return Err(CoreError::Config(format!(
                "allocation limits must not be negative (minimum {min}, maximum {max})"
            )));
        }
        if min.memory_mb() == 0 || min.vcores() == 0 {
            return Err(CoreError::Config(format!(
                "minimum allocation {min} must be positive in memory and vcores"
            )));
        }
        if !min.fits_in(&max) {
            return Err(CoreError::Config(format!(
                "minimum allocation {min} exceeds maximum allocation {max}"
            )));
        }
        if self.max_assign_per_heartbeat == 0 {
            return Err(CoreError::Config(
                "max assignments per heartbeat must be at least 1".into(),
            ));
        }
        Ok(())
    }
}

/// Normalises a short or full queue name to `root.<leaf>`.
pub fn full_queue_name(name: &str) -> String {
    let name = name.trim();
    if name.starts_with("root.") {
        name.to_string()
    } else {
        format!("{ROOT}.{name}")
    }
}

fn valid_leaf_name(leaf: &str) -> bool {
    !leaf.is_empty()
        && leaf.len() <= 128
        && leaf.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

fn line_of(doc: &roxmltree::Document, node: roxmltree::Node) -> u32 {
    doc.text_pos_at(node.range().start).row
}

/// Parses and validates an allocation file. On error nothing is returned, so a caller that
/// keeps its previous configuration loses nothing.
pub fn parse_queue_file(xml: &str) -> Result<QueueFile> {
    let doc = roxmltree::Document::parse(xml)
        .map_err(|e| CoreError::Config(format!("allocation file is not well-formed XML: {e}")))?;
    let root = doc.root_element();
    if root.tag_name().name() != "tidal" {
        return Err(CoreError::Config(format!(
            "allocation file root element must be <tidal>, found <{}>",
            root.tag_name().name()
        )));
    }
    let mut policy = PolicyKind::Drf;
    let mut queues: Vec<QueueConfig> = Vec::new();
    for child in root.children().filter(|n| n.is_element()) {
        let line = line_of(&doc, child);
        match child.tag_name().name() {
            "policy" => {
                let text = child.text().unwrap_or("").trim();
                policy = PolicyKind::parse(text).ok_or_else(|| {
                    CoreError::Config(format!(
                        "line {line}: unknown policy '{text}' (known: drf)"
                    ))
                })?;
            }
            "queue" => queues.push(parse_queue(&doc, child)?),
            other => {
                return Err(CoreError::Config(format!(
                    "line {line}: unknown element <{other}> in <tidal> (expected <policy> or <queue>)"
                )))
            }
        }
    }
    if queues.is_empty() {
        return Err(CoreError::Config("allocation file declares no <queue>".into()));
    }
    let mut names: Vec<&str> = queues.iter().map(|q| q.name.as_str()).collect();
    names.sort_unstable();
    if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
        return Err(CoreError::Config(format!("queue '{}' is declared twice", w[0])));
    }
    Ok(QueueFile { policy, queues })
}

fn parse_queue(doc: &roxmltree::Document, node: roxmltree::Node) -> Result<QueueConfig> {
    let line = line_of(doc, node);
    for attr in node.attributes() {
        if attr.name() != "name" {
            return Err(CoreError::Config(format!(
                "line {line}: unknown attribute '{}' on <queue>",
                attr.name()
            )));
        }
    }
    let raw = node
        .attribute("name")
        .ok_or_else(|| CoreError::Config(format!("line {line}: <queue> has no name attribute")))?;
    let name = full_queue_name(raw);
    let leaf = &name[ROOT.len() + 1..];
    if !valid_leaf_name(leaf) {
        return Err(CoreError::Config(format!(
            "line {line}: queue name '{raw}' is invalid (use letters, digits, '_' and '-'; \
             queues are leaves directly under root)"
        )));
    }
    let mut weight = 1.0;
    for child in node.children().filter(|n| n.is_element()) {
        let cline = line_of(doc, child);
        let text = child.text().unwrap_or("").trim();
        match child.tag_name().name() {
            "weight" => {
                weight = text.parse::<f64>().ok().filter(|w| w.is_finite() && *w > 0.0).ok_or_else(
                    || {
                        CoreError::Config(format!(
                            "line {cline}: queue '{name}' field weight: '{text}' is not a positive number"
                        ))
                    },
                )?;
            }
            other => {
                return Err(CoreError::Config(format!(
                    "line {cline}: queue '{name}': unknown element <{other}> (expected <weight>)"
                )))
            }
        }
    }
    Ok(QueueConfig { name, weight })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_queues_and_policy() {
        let f = parse_queue_file(
            r#"<tidal><policy>DRF</policy>
                 <queue name="a"><weight>2.5</weight></queue>
                 <queue name="root.b"/></tidal>"#,
        )
        .unwrap();
        assert_eq!(f.policy, PolicyKind::Drf);
        assert_eq!(f.queues[0], QueueConfig { name: "root.a".into(), weight: 2.5 });
        assert_eq!(f.queues[1], QueueConfig { name: "root.b".into(), weight: 1.0 });
    }

    #[test]
    fn errors_name_the_queue_field_and_line() {
        let e = parse_queue_file("<tidal>\n<queue name=\"a\"><weight>-1</weight></queue></tidal>")
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 2") && e.contains("'root.a'") && e.contains("weight"), "{e}");
        let e = parse_queue_file("<tidal><queue name=\"a\"/><queue name=\"root.a\"/></tidal>")
            .unwrap_err()
            .to_string();
        assert!(e.contains("declared twice"), "{e}");
        let e = parse_queue_file("<tidal><queue name=\"a\"><wieght>1</wieght></queue></tidal>")
            .unwrap_err()
            .to_string();
        assert!(e.contains("<wieght>"), "{e}");
        assert!(parse_queue_file("<tidal><queue name=\"a\">").is_err());
        assert!(parse_queue_file("<tidal/>").is_err());
        assert!(parse_queue_file("<tidal><policy>lottery</policy><queue name=\"a\"/></tidal>")
            .unwrap_err()
            .to_string()
            .contains("lottery"));
        assert!(parse_queue_file("<tidal><queue name=\"a.b\"/></tidal>").is_err());
    }

    #[test]
    fn settings_validation() {
        assert!(Settings::default().validate().is_ok());
        let mut s = Settings::default();
        s.min_allocation = Resources::new(16384, 1);
        assert!(s.validate().unwrap_err().to_string().contains("exceeds"));
        s = Settings::default();
        s.max_assign_per_heartbeat = 0;
        assert!(s.validate().is_err());
    }
}
