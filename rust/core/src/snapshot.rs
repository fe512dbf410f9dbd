//! A durable snapshot of Tidal's own state, for a host that must rebuild a scheduler instance
//! (a ResourceManager restart, or an instance lost to a panic) without losing what YARN does not
//! keep for it: the queues registered at run time, each queue's long-term usage (the history
//! BoPF's fairness is stated in), the queue policy's durable state (BoPF's admitted capacity
//! and its burst records) and the recent end of the scheduler's history
//! ([`crate::history::HistoryTail`]).
//!
//! What a snapshot leaves out is rebuilt from YARN: nodes re-register, applications are added
//! again, running containers are adopted ([`crate::scheduler::Scheduler::adopt`]) and
//! ApplicationMasters re-send their outstanding asks. Slot reservation holds are not kept: they
//! are short-lived and are made again as stages run.
//!
//! Time base: the host keeps one clock across restarts (core milliseconds before and after a
//! snapshot are comparable), so nothing in a snapshot is shifted in time on restore.
//!
//! The format is JSON, versioned ([`SNAPSHOT_VERSION`]); a reader refuses versions it does not
//! read and fields it does not know, naming them.

use crate::error::{CoreError, Result};
use crate::history::{HistoryTail, TAIL_ADMISSIONS, TAIL_BURSTS, TAIL_SAMPLE_ENTRIES};
use crate::resource::{deserialize_dims, DIMS};
use serde::{Deserialize, Serialize};

/// The snapshot format this build writes. It reads versions 1 (no history) and 2 (six resource
/// dimensions, no GPUs or FPGAs) too; version 3 has eight, which older builds refuse by version.
pub const SNAPSHOT_VERSION: u32 = 3;

/// Largest snapshot document accepted, in bytes.
pub const MAX_SNAPSHOT_BYTES: usize = 16 << 20;

/// Everything a fresh scheduler needs, besides the allocation file, to continue where another
/// instance stopped.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Snapshot {
    /// Always [`SNAPSHOT_VERSION`] when written by this build.
    pub version: u32,
    /// The scheduler clock when the snapshot was taken.
    pub now_ms: i64,
    /// The next allocation id the instance would have handed out: a restored instance starts
    /// no lower, so ids of containers that still run are not handed out again.
    pub next_allocation_id: u64,
    /// The queue policy and its durable state.
    pub policy: PolicySnapshot,
    /// Queues registered at run time, in registration order.
    pub runtime_queues: Vec<RuntimeQueue>,
    /// The usage history of every queue.
    pub queues: Vec<QueueSnapshot>,
    /// The recent end of the scheduler's history; none in version 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history: Option<HistoryTail>,
}

/// The queue policy's name and what it keeps across restarts, in its own format.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicySnapshot {
    pub name: String,
    /// Absent for policies without durable state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<serde_json::Value>,
}

/// A queue registered at run time: its `<queue>` element exactly as registered, and its owner.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuntimeQueue {
    pub xml: String,
    pub owner: String,
}

/// A queue's usage history.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueueSnapshot {
    /// Full name, `root.<leaf>`.
    pub name: String,
    pub created_ms: i64,
    pub integrated_until_ms: i64,
    /// Integral of the queue's usage in resource-milliseconds up to `integrated_until_ms`, per
    /// resource dimension (six in snapshots written before GPUs and FPGAs were dimensions).
    #[serde(deserialize_with = "deserialize_dims")]
    pub usage_integral: [f64; DIMS],
}

/// What a restore brought back.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RestoreSummary {
    /// Whether the policy's own state was restored (false when the snapshot had none, or was
    /// taken under another policy).
    pub policy_restored: bool,
    /// Every live queue after the restore, in state order.
    pub queues: Vec<RestoredQueue>,
    /// What was skipped, and why.
    pub warnings: Vec<String>,
}

impl RestoreSummary {
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a restore summary is plain data and always serializes")
    }
}

/// A queue after a restore, with the admission verdict it has now.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RestoredQueue {
    pub name: String,
    /// Registered at run time (and restored from the snapshot), rather than from the file.
    pub runtime: bool,
    pub admitted: bool,
    pub class: &'static str,
}

/// Only the version, read first so a document of another version is refused as such rather
/// than for the fields it has.
#[derive(Deserialize)]
struct Header {
    version: Option<serde_json::Value>,
}

fn invalid(what: String) -> CoreError {
    CoreError::InvalidInput(what)
}

impl Snapshot {
    /// The snapshot as JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a snapshot is plain data and always serializes")
    }

    /// Parses and checks a snapshot document: its size, its version, its shape and the ranges of
    /// its values. Errors name the field.
    pub fn from_json(json: &str) -> Result<Snapshot> {
        if json.len() > MAX_SNAPSHOT_BYTES {
            return Err(invalid(format!(
                "snapshot of {} bytes is larger than the limit of {MAX_SNAPSHOT_BYTES} bytes",
                json.len()
            )));
        }
        // serde would also read a struct written as a JSON array of its fields.
        if !json.trim_start().starts_with('{') {
            return Err(invalid("snapshot is not a JSON object".into()));
        }
        let header: Header =
            serde_json::from_str(json).map_err(|e| invalid(format!("snapshot is not valid JSON: {e}")))?;
        let version = match header.version {
            None => return Err(invalid("snapshot field 'version' is missing".into())),
            Some(v) => match v.as_u64() {
                Some(n) if (1..=u64::from(SNAPSHOT_VERSION)).contains(&n) => n,
                _ => {
                    return Err(invalid(format!(
                        "snapshot field 'version' is {v}; this build reads versions 1 to {SNAPSHOT_VERSION}"
                    )))
                }
            },
        };
        let s: Snapshot = serde_json::from_str(json)
            .map_err(|e| invalid(format!("snapshot does not match version {version}: {e}")))?;
        s.validate()?;
        Ok(s)
    }

    fn validate(&self) -> Result<()> {
        if self.now_ms < 0 {
            return Err(invalid(format!("snapshot field 'now_ms' is {}; it must not be negative", self.now_ms)));
        }
        if self.next_allocation_id >= crate::ids::MAX_ALLOCATION_ID {
            return Err(invalid(format!(
                "snapshot field 'next_allocation_id' is {}; it must be below 2^40",
                self.next_allocation_id
            )));
        }
        for (i, q) in self.queues.iter().enumerate() {
            let field = |f: &str| format!("snapshot field 'queues[{i}].{f}' (queue '{}')", q.name);
            if q.created_ms > q.integrated_until_ms || q.integrated_until_ms > self.now_ms {
                return Err(invalid(format!(
                    "{} is {}: it must lie between created_ms {} and the snapshot's now_ms {}",
                    field("integrated_until_ms"),
                    q.integrated_until_ms,
                    q.created_ms,
                    self.now_ms
                )));
            }
            if q.usage_integral.iter().any(|v| !v.is_finite() || *v < 0.0) {
                return Err(invalid(format!("{} has a negative value", field("usage_integral"))));
            }
        }
        match &self.history {
            Some(_) if self.version == 1 => Err(invalid("snapshot field 'history' is not in version 1".into())),
            Some(h) => validate_history(h, self.now_ms),
            None => Ok(()),
        }
    }
}

/// What restoring relies on: the caps a snapshot is written within (the rings hold more), samples
/// in time order up to the snapshot's clock, open bursts that are on.
fn validate_history(h: &HistoryTail, now_ms: i64) -> Result<()> {
    let entries: usize = h.samples.iter().map(|s| s.queues.len()).sum();
    for (field, n, cap) in [
        ("samples[].queues", entries, TAIL_SAMPLE_ENTRIES),
        ("bursts", h.bursts.len(), TAIL_BURSTS),
        ("admissions", h.admissions.len(), TAIL_ADMISSIONS),
    ] {
        if n > cap {
            return Err(invalid(format!(
                "snapshot field 'history.{field}' holds {n} entries; a snapshot keeps at most {cap}"
            )));
        }
    }
    let mut after = i64::MIN;
    for (i, s) in h.samples.iter().enumerate() {
        if s.t_ms <= after || s.t_ms > now_ms {
            return Err(invalid(format!(
                "snapshot field 'history.samples[{i}].t_ms' is {}: samples must be in time order, up to now_ms {now_ms}",
                s.t_ms
            )));
        }
        after = s.t_ms;
    }
    for (i, o) in h.open_bursts.iter().enumerate() {
        if h.bursts.get(o.burst).is_none_or(|b| b.ended_ms.is_some()) {
            return Err(invalid(format!(
                "snapshot field 'history.open_bursts[{i}].burst' is {}, not a burst still on",
                o.burst
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn minimal() -> Snapshot {
        Snapshot {
            version: SNAPSHOT_VERSION,
            now_ms: 5_000,
            next_allocation_id: 9,
            policy: PolicySnapshot { name: "drf".into(), state: None },
            runtime_queues: vec![RuntimeQueue { xml: "<queue name=\"a\"/>".into(), owner: "alice".into() }],
            queues: vec![QueueSnapshot {
                name: "root.a".into(),
                created_ms: 1_000,
                integrated_until_ms: 5_000,
                usage_integral: [0.1, 1e300, 0.0, 0.0, 0.0, 3.0, 2.0, 0.0],
            }],
            history: Some(HistoryTail::default()),
        }
    }

    #[test]
    fn round_trips_exactly() {
        let s = minimal();
        assert_eq!(Snapshot::from_json(&s.to_json()).unwrap(), s);
    }

    #[test]
    fn version_1_is_read_and_has_no_history() {
        let mut v1 = serde_json::to_value(minimal()).unwrap();
        v1["version"] = 1.into();
        v1.as_object_mut().unwrap().remove("history");
        let s = Snapshot::from_json(&v1.to_string()).unwrap();
        assert_eq!((s.version, s.history), (1, None));
        v1["history"] = serde_json::to_value(HistoryTail::default()).unwrap();
        let e = Snapshot::from_json(&v1.to_string()).unwrap_err().to_string();
        assert!(e.contains("'history' is not in version 1"), "{e}");
    }

    #[test]
    fn errors_name_the_field() {
        let err = |json: &str| Snapshot::from_json(json).unwrap_err().to_string();
        assert!(err("[1]").contains("not a JSON object"), "{}", err("[1]"));
        assert!(err("{").contains("not valid JSON"), "{}", err("{"));
        assert!(err("{}").contains("'version' is missing"));
        assert!(err(r#"{"version":4}"#).contains("'version' is 4; this build reads versions 1 to 3"));
        assert!(err(r#"{"version":"1"}"#).contains("'version' is \"1\""));
        assert!(err(r#"{"version":1}"#).contains("now_ms"), "{}", err(r#"{"version":1}"#));
        let mut v = serde_json::to_value(minimal()).unwrap();
        v["extra"] = 1.into();
        assert!(err(&v.to_string()).contains("extra"));
        let mut s = minimal();
        s.queues[0].integrated_until_ms = 6_000;
        assert!(err(&s.to_json()).contains("queues[0].integrated_until_ms"));
        let mut s = minimal();
        s.next_allocation_id = 1 << 40;
        assert!(err(&s.to_json()).contains("next_allocation_id"));
        assert!(err(&" ".repeat(MAX_SNAPSHOT_BYTES + 1)).contains("larger than the limit"));
    }
}
