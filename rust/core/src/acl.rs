//! Queue access control lists in Hadoop's notation, as FairScheduler's `<aclSubmitApps>` and
//! `<aclAdministerApps>` take them: `"user1,user2 group1,group2"` (users, one space, groups),
//! `*` for everyone, a single space or nothing for nobody.
//!
//! The core only validates and stores them. Hadoop splits the text at its first space and drops
//! empty names without a word, so `"alice, bob"` silently means user alice and group bob; here
//! such text is refused with the reason. What the lists allow is the host's decision (the RM
//! shim applies YARN's rules with Hadoop's own `AccessControlList`), so an ACL is handed over in
//! the canonical form that class reads back unchanged.
//!
//! In a queue tree the lists go down the tree, as in FairScheduler: a right on a parent queue
//! is a right on every queue below it, and the root's on all. The core reports each parent's
//! own lists in its status entry (with the entry's `parent`), and the host walks from a queue
//! up to the root, granting at the first queue that allows.

use serde::{Serialize, Serializer};
use std::fmt;

/// One access control list: everyone, or the named users and members of the named groups.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Acl {
    Everyone,
    Only { users: Vec<String>, groups: Vec<String> },
}

impl Acl {
    /// Parses Hadoop's notation; the error says what is wrong with the text.
    pub fn parse(text: &str) -> Result<Acl, String> {
        if let Some(c) = text.chars().find(|c| c.is_control()) {
            return Err(format!(
                "'{}' contains {c:?}: write user names, one space, then group names, on one line",
                text.escape_debug()
            ));
        }
        if text.trim_matches(' ') == "*" {
            return Ok(Acl::Everyone);
        }
        let (users, groups) = text.split_once(' ').unwrap_or((text, ""));
        Ok(Acl::Only { users: names(users, text)?, groups: names(groups, text)? })
    }

    /// The ACL that allows nobody.
    pub fn nobody() -> Acl {
        Acl::Only { users: Vec::new(), groups: Vec::new() }
    }
}

/// The comma-separated names of one part (users or groups) of `text`.
fn names(part: &str, text: &str) -> Result<Vec<String>, String> {
    if part.trim_matches(' ').is_empty() {
        return Ok(Vec::new());
    }
    part.split(',')
        .map(|name| {
            let name = name.trim_matches(' ');
            if name.is_empty() {
                Err(format!(
                    "'{text}' has an empty name: separate names with commas and no spaces, \
                     since one space separates the users from the groups"
                ))
            } else if name.contains(' ') {
                Err(format!(
                    "'{text}' has a space inside '{name}': separate names with commas; \
                     one space separates the users from the groups"
                ))
            } else if name == "*" {
                Err(format!("'{text}' mixes '*' (everyone) with names: give '*' alone"))
            } else {
                Ok(name.to_string())
            }
        })
        .collect()
}

/// Hadoop's `AccessControlList` string: `*`, or users, one space, groups (`" "` is nobody).
impl fmt::Display for Acl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Acl::Everyone => f.write_str("*"),
            Acl::Only { users, groups } => write!(f, "{} {}", users.join(","), groups.join(",")),
        }
    }
}

impl Serialize for Acl {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// A queue's ACLs as its definition gives them; `None` where it gives none, so the host applies
/// its own default (YARN's: everyone for the root, nobody for other queues).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct QueueAcls {
    /// `<aclSubmitApps>`: who may submit applications to the queue.
    pub submit_apps: Option<Acl>,
    /// `<aclAdministerApps>`: who may administer the queue and its applications.
    pub administer_apps: Option<Acl>,
}

impl QueueAcls {
    /// The element names of the queue file that hold ACLs.
    pub const ELEMENTS: [&'static str; 2] = ["aclSubmitApps", "aclAdministerApps"];

    /// Sets the ACL of element `element` (one of [`QueueAcls::ELEMENTS`]) from its text.
    pub fn set(&mut self, element: &str, text: &str) -> Result<(), String> {
        let slot = match element {
            "aclSubmitApps" => &mut self.submit_apps,
            "aclAdministerApps" => &mut self.administer_apps,
            other => return Err(format!("<{other}> is not an ACL element")),
        };
        if slot.is_some() {
            return Err("is given twice".to_string());
        }
        *slot = Some(Acl::parse(text)?);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn only(users: &[&str], groups: &[&str]) -> Acl {
        let owned = |v: &[&str]| v.iter().map(|s| s.to_string()).collect();
        Acl::Only { users: owned(users), groups: owned(groups) }
    }

    #[test]
    fn parses_hadoop_notation() {
        assert_eq!(Acl::parse("*"), Ok(Acl::Everyone));
        assert_eq!(Acl::parse(" * "), Ok(Acl::Everyone));
        assert_eq!(Acl::parse(" "), Ok(Acl::nobody()));
        assert_eq!(Acl::parse(""), Ok(Acl::nobody()));
        assert_eq!(Acl::parse("alice"), Ok(only(&["alice"], &[])));
        assert_eq!(Acl::parse("alice,bob analysts,ops"), Ok(only(&["alice", "bob"], &["analysts", "ops"])));
        assert_eq!(Acl::parse(" analysts"), Ok(only(&[], &["analysts"])));
        assert_eq!(Acl::parse("alice "), Ok(only(&["alice"], &[])));
        assert_eq!(Acl::parse("DOMAIN\\svc.etl@EXAMPLE.COM"), Ok(only(&["DOMAIN\\svc.etl@EXAMPLE.COM"], &[])));
    }

    /// The canonical form is what Hadoop's AccessControlList reads as the same list.
    #[test]
    fn canonical_form_round_trips() {
        for (text, canonical) in [
            ("*", "*"),
            (" ", " "),
            ("", " "),
            ("alice,bob analysts", "alice,bob analysts"),
            (" analysts", " analysts"),
            ("alice", "alice "),
        ] {
            let acl = Acl::parse(text).unwrap();
            assert_eq!(acl.to_string(), canonical, "{text:?}");
            assert_eq!(Acl::parse(canonical), Ok(acl), "{text:?}");
        }
        assert_eq!(serde_json::to_string(&Acl::parse("a b").unwrap()).unwrap(), "\"a b\"");
    }

    #[test]
    fn refuses_what_hadoop_would_misread() {
        let e = |t: &str| Acl::parse(t).unwrap_err();
        assert!(e("alice, bob").contains("empty name"), "{}", e("alice, bob"));
        assert!(e("alice,,bob").contains("empty name"));
        assert!(e("alice analysts ops").contains("space inside 'analysts ops'"), "{}", e("alice analysts ops"));
        assert!(e("alice,* ").contains("mixes '*'"));
        assert!(e("alice *").contains("mixes '*'"));
        assert!(e("\n  alice\n").contains("one line"), "{}", e("\n  alice\n"));
        assert!(e("alice\tanalysts").contains("'\\t'"), "{}", e("alice\tanalysts"));
    }

    #[test]
    fn each_element_once() {
        let mut acls = QueueAcls::default();
        acls.set("aclSubmitApps", "alice").unwrap();
        acls.set("aclAdministerApps", " ops").unwrap();
        assert_eq!(acls.submit_apps, Some(only(&["alice"], &[])));
        assert_eq!(acls.administer_apps, Some(only(&[], &["ops"])));
        assert!(acls.set("aclSubmitApps", "bob").unwrap_err().contains("twice"));
        assert!(acls.set("aclKillApps", "bob").is_err());
        assert_eq!(serde_json::to_string(&acls).unwrap(), r#"{"submit_apps":"alice ","administer_apps":" ops"}"#);
    }
}
