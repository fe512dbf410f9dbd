//! Operator limits with FairScheduler's allocation-file elements and meaning.
//!
//! Per queue (inside `<queue>`):
//! - `<maxRunningApps>n</maxRunningApps>`: at most n of the queue's apps run at once. An app over
//!   any running-apps limit is accepted but not runnable: it gets no containers and waits, in
//!   submission order, until a running app finishes (FairScheduler's MaxRunningAppsEnforcer).
//! - `<maxAMShare>f</maxAMShare>`: an ApplicationMaster starts only while the queue's AM
//!   resources, with it, fit in f times the queue's fair share (f in [0, 1]; -1 turns the check
//!   off).
//! - `<minResources>X mb, Y vcores</minResources>`: a queue below its minimum in its dominant
//!   resource is "needy" and goes before queues that are not, within its tier of the queue policy.
//! - `<maxResources>X mb, Y vcores</maxResources>`: the queue never holds more.
//!
//! File-wide (inside `<tidal>`): `<queueMaxAppsDefault>`, `<queueMaxAMShareDefault>`,
//! `<userMaxAppsDefault>` and `<user name="..."><maxRunningApps>n</maxRunningApps></user>`.
//! Without any of these nothing is limited: unlike FairScheduler, whose `queueMaxAMShareDefault`
//! is 0.5, a file that does not ask for the AM share check does not get it, so existing files
//! schedule as before.
//!
//! The checks are functions of one queue level (its limits and what it holds); the ones that
//! apply along a queue's ancestors take the chain, leaf first, as [`Level`]s.

use crate::resource::{ResourceKind, Resources, MAX_RESOURCE_AMOUNT};
use serde::Serialize;

/// The limits one `<queue>` gives.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct QueueLimits {
    pub max_running_apps: Option<u32>,
    /// In [0, 1], or -1 for no check.
    pub max_am_share: Option<f64>,
    pub min_resources: Option<Resources>,
    pub max_resources: Option<Resources>,
}

impl QueueLimits {
    /// No limit at all (a queue without limit elements).
    pub const NONE: QueueLimits =
        QueueLimits { max_running_apps: None, max_am_share: None, min_resources: None, max_resources: None };

    /// The `<queue>` children these limits are read from.
    pub const ELEMENTS: [&'static str; 4] = ["maxRunningApps", "maxAMShare", "minResources", "maxResources"];

    /// Sets the limit of element `tag` (one of [`QueueLimits::ELEMENTS`]) from its text; the
    /// error says what is wrong with the value.
    pub fn set(&mut self, tag: &str, text: &str) -> Result<(), String> {
        let twice = |given: bool| if given { Err("is given twice".to_string()) } else { Ok(()) };
        match tag {
            "maxRunningApps" => {
                twice(self.max_running_apps.is_some())?;
                self.max_running_apps = Some(parse_count(text)?);
            }
            "maxAMShare" => {
                twice(self.max_am_share.is_some())?;
                self.max_am_share = Some(parse_am_share(text)?);
            }
            "minResources" => {
                twice(self.min_resources.is_some())?;
                self.min_resources = Some(parse_resources(text)?);
            }
            _ => {
                twice(self.max_resources.is_some())?;
                self.max_resources = Some(parse_resources(text)?);
            }
        }
        if let (Some(min), Some(max)) = (self.min_resources, self.max_resources) {
            if !min.fits_in(&max) {
                return Err(format!("minResources {min} exceed maxResources {max}"));
            }
        }
        Ok(())
    }
}

/// The file-wide defaults and per-user limits.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct LimitDefaults {
    pub queue_max_apps_default: Option<u32>,
    pub queue_max_am_share_default: Option<f64>,
    pub user_max_apps_default: Option<u32>,
    /// `<user name=".."><maxRunningApps>` in file order.
    pub user_max_apps: Vec<(String, u32)>,
}

impl LimitDefaults {
    /// The `<tidal>` children that set defaults.
    pub const ELEMENTS: [&'static str; 3] = ["queueMaxAppsDefault", "queueMaxAMShareDefault", "userMaxAppsDefault"];

    /// Sets the default of element `tag` (one of [`LimitDefaults::ELEMENTS`]).
    pub fn set(&mut self, tag: &str, text: &str) -> Result<(), String> {
        let given = match tag {
            "queueMaxAppsDefault" => self.queue_max_apps_default.replace(parse_count(text)?).is_some(),
            "queueMaxAMShareDefault" => self.queue_max_am_share_default.replace(parse_am_share(text)?).is_some(),
            _ => self.user_max_apps_default.replace(parse_count(text)?).is_some(),
        };
        if given {
            return Err("is given twice".into());
        }
        Ok(())
    }

    /// Adds a `<user name="..">` limit.
    pub fn set_user(&mut self, user: &str, max_running_apps: u32) -> Result<(), String> {
        if self.user_max_apps.iter().any(|(u, _)| u == user) {
            return Err(format!("user '{user}' is given twice"));
        }
        self.user_max_apps.push((user.to_string(), max_running_apps));
        Ok(())
    }

    /// How many apps `user` may run at once (`u32::MAX`: no limit).
    pub fn user_max_apps(&self, user: &str) -> u32 {
        let own = self.user_max_apps.iter().find(|(u, _)| u == user).map(|&(_, n)| n);
        own.or(self.user_max_apps_default).unwrap_or(u32::MAX)
    }

    /// How many apps a queue with `limits` may run at once (`u32::MAX`: no limit).
    pub fn queue_max_apps(&self, limits: &QueueLimits) -> u32 {
        limits.max_running_apps.or(self.queue_max_apps_default).unwrap_or(u32::MAX)
    }

    /// The fraction of its fair share a queue's AMs may take, or `None` when not checked: the
    /// queue's own, else the file's default, else `fallback` (the settings' default).
    pub fn max_am_share(&self, limits: &QueueLimits, fallback: Option<f64>) -> Option<f64> {
        limits.max_am_share.or(self.queue_max_am_share_default).or(fallback).filter(|f| *f >= 0.0)
    }
}

/// One queue on the way from a leaf to the root, as the running-apps and maximum checks see it.
#[derive(Copy, Clone, Debug)]
pub struct Level<'a> {
    pub name: &'a str,
    pub limits: &'a QueueLimits,
    /// Runnable apps in the queue and below it.
    pub runnable_apps: u32,
    /// Resources the queue and its descendants hold.
    pub usage: Resources,
}

/// Whether an app of `user` may run in the leaf whose chain (leaf first, then each ancestor) is
/// `chain`, with `user_running` apps of that user running: `Err` names the limit that holds it
/// back. As FairScheduler's `canAppBeRunnable`: the user's limit and every level's.
pub fn can_run_app(defaults: &LimitDefaults, chain: &[Level], user: &str, user_running: u32) -> Result<(), String> {
    let user_max = defaults.user_max_apps(user);
    if user_running >= user_max {
        return Err(format!("user '{user}' runs {user_running} applications, its maxRunningApps is {user_max}"));
    }
    for level in chain {
        let max = defaults.queue_max_apps(level.limits);
        if level.runnable_apps >= max {
            return Err(format!(
                "queue '{}' runs {} applications, its maxRunningApps is {max}",
                level.name, level.runnable_apps
            ));
        }
    }
    Ok(())
}

/// What the chain's `<maxResources>` leave for one more container: per resource, the least
/// room of any level (negative where a level is already over, after its maximum was lowered).
/// `None` when no level has a maximum.
pub fn headroom(chain: &[Level]) -> Option<Resources> {
    chain.iter().filter_map(|l| l.limits.max_resources.map(|max| max - l.usage)).reduce(|a, b| a.min(&b))
}

/// The `fraction` of `total`, per resource, rounded down (FairScheduler's `Resources.multiply`).
pub fn fraction_of(total: &Resources, fraction: f64) -> Resources {
    let mut out = *total;
    for v in out.0.iter_mut() {
        *v = ((*v as f64) * fraction).floor().clamp(0.0, MAX_RESOURCE_AMOUNT as f64) as i64;
    }
    out
}

/// What one more ApplicationMaster may take in a queue whose fair share is `fair_share`, whose
/// running AMs hold `am_usage`, under `max_am_share` (FairScheduler's `canRunAppAM` with DRF's
/// check: the AMs, with the new one, fit in `max_am_share` times the fair share in every
/// resource). Negative where the queue's AMs are already over.
pub fn am_room(fair_share: &Resources, max_am_share: f64, am_usage: &Resources) -> Resources {
    fraction_of(fair_share, max_am_share) - *am_usage
}

/// How far below its `<minResources>` a queue holding `usage` is, as FairScheduler's DRF
/// comparator measures it: the usage over the minimum in the resource the queue uses most of
/// the cluster. `Some` only when that is below 1 (the queue is "needy").
pub fn below_min_share(usage: &Resources, min: Option<&Resources>, cluster: &Resources) -> Option<f64> {
    let min = min?;
    let shares = usage.shares(cluster);
    let dominant = (0..shares.len()).max_by(|&a, &b| shares[a].total_cmp(&shares[b]))?;
    let (used, floor) = (usage.0[dominant], min.0[dominant]);
    (floor > 0 && used < floor).then(|| used as f64 / floor as f64)
}

/// A queue's place among its siblings as the queue order compares it: `order` (a non-negative
/// share or ratio), or, for a queue below its `<minResources>`, its [`below_min_share`] moved
/// below every order (into [-2, -1)). So needy siblings go first, the least of their minimum
/// first, as FairScheduler's DRF comparator has it, at every level of the tree.
#[inline]
pub fn needy_first(usage: &Resources, min: Option<&Resources>, cluster: &Resources, order: f64) -> f64 {
    debug_assert!(order >= 0.0 || order.is_nan(), "queue orders are shares or ratios");
    match below_min_share(usage, min, cluster) {
        Some(r) => r - 2.0,
        None => order,
    }
}

fn parse_count(text: &str) -> Result<u32, String> {
    text.trim().parse::<u32>().map_err(|_| format!("'{}' is not a whole number >= 0", text.trim()))
}

fn parse_am_share(text: &str) -> Result<f64, String> {
    let t = text.trim();
    t.parse::<f64>()
        .ok()
        .filter(|f| (0.0..=1.0).contains(f) || *f == -1.0)
        .ok_or_else(|| format!("'{t}' is not a fraction in [0, 1] or -1 (no check)"))
}

/// FairScheduler's resource notation: `"X mb, Y vcores"`, with `"Z gpus"` or `"Z yarn.io/gpu"`
/// (and FPGAs) as Hadoop 3 adds, or Hadoop 3's `"memory-mb=X, vcores=Y, yarn.io/gpu=Z"`. Memory
/// and vcores are required, each amount given once, in any order.
pub fn parse_resources(text: &str) -> Result<Resources, String> {
    let whole = text.trim();
    let mut out = Resources::ZERO;
    let mut given = [false; crate::resource::DIMS];
    for part in text.split(',') {
        let part = part.trim().to_ascii_lowercase();
        let (number, name) = match part.split_once('=') {
            Some((name, number)) => (number.trim().to_string(), name.trim().to_string()),
            None => {
                let split = part.find(|c: char| !c.is_ascii_digit()).unwrap_or(part.len());
                (part[..split].to_string(), part[split..].trim().to_string())
            }
        };
        let kind = match name.as_str() {
            "mb" => Some(ResourceKind::MemoryMb),
            "vcores" => Some(ResourceKind::Vcores),
            "gpus" => Some(ResourceKind::Gpus),
            "fpgas" => Some(ResourceKind::Fpgas),
            other => ResourceKind::parse(other),
        }
        .filter(|k| {
            matches!(k, ResourceKind::MemoryMb | ResourceKind::Vcores | ResourceKind::Gpus | ResourceKind::Fpgas)
        })
        .ok_or_else(|| {
            format!(
                "'{}' in '{whole}' is not \"N mb\", \"N vcores\", \"N gpus\" or \"N fpgas\" (or name=N)",
                part.trim()
            )
        })?;
        let v =
            number.parse::<i64>().ok().filter(|v| (0..=MAX_RESOURCE_AMOUNT).contains(v)).ok_or_else(|| {
                format!("'{number}' in '{whole}' is not a whole number in [0, {MAX_RESOURCE_AMOUNT}]")
            })?;
        if std::mem::replace(&mut given[kind as usize], true) {
            return Err(format!("'{whole}' gives an amount twice"));
        }
        out.set(kind, v);
    }
    if !given[ResourceKind::MemoryMb as usize] {
        return Err(format!("'{whole}' is missing the mb amount (\"X mb, Y vcores\")"));
    }
    if !given[ResourceKind::Vcores as usize] {
        return Err(format!("'{whole}' is missing the vcores amount (\"X mb, Y vcores\")"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resource_notation() {
        assert_eq!(parse_resources("2048 mb, 2 vcores"), Ok(Resources::new(2048, 2)));
        assert_eq!(parse_resources("4vcores,1024MB"), Ok(Resources::new(1024, 4)));
        assert!(parse_resources("1024 mb").unwrap_err().contains("vcores"));
        assert!(parse_resources("2 vcores").unwrap_err().contains("mb"));
        assert!(parse_resources("1 mb, 2 mb, 1 vcores").unwrap_err().contains("twice"));
        assert!(parse_resources("x mb, 1 vcores").unwrap_err().contains("'x mb'"));
        assert!(parse_resources("1 gb, 1 vcores").is_err());
        assert_eq!(parse_resources("2048 mb, 2 vcores, 4 gpus"), Ok(Resources::with_gpus(2048, 2, 4)));
        assert_eq!(parse_resources("vcores=2, memory-mb=2048, yarn.io/gpu=4"), Ok(Resources::with_gpus(2048, 2, 4)));
        assert_eq!(parse_resources("1 mb, 1 vcores, 2 yarn.io/fpga").unwrap().get(ResourceKind::Fpgas), 2);
        assert!(parse_resources("1 mb, 1 vcores, 1 disk_read_mbps").unwrap_err().contains("disk_read_mbps"));
        assert!(parse_resources("1 mb, 1 vcores, 1 gpus, 2 gpus").unwrap_err().contains("twice"));
    }

    #[test]
    fn am_share_and_counts() {
        let mut l = QueueLimits::default();
        l.set("maxAMShare", "-1").unwrap();
        assert_eq!(LimitDefaults::default().max_am_share(&l, None), None);
        assert!(QueueLimits::default().set("maxAMShare", "1.5").is_err());
        assert!(QueueLimits::default().set("maxRunningApps", "-1").is_err());
        let mut m = QueueLimits::default();
        m.set("maxResources", "1024 mb, 1 vcores").unwrap();
        assert!(m.set("minResources", "2048 mb, 1 vcores").unwrap_err().contains("exceed"));
        let d = LimitDefaults { queue_max_am_share_default: Some(0.5), ..Default::default() };
        assert_eq!(d.max_am_share(&QueueLimits::default(), None), Some(0.5));
        assert_eq!(d.max_am_share(&l, Some(0.5)), None, "the queue's -1 overrides the default");
        assert_eq!(LimitDefaults::default().max_am_share(&QueueLimits::default(), Some(0.5)), Some(0.5));
        assert_eq!(d.max_am_share(&QueueLimits::default(), Some(0.1)), Some(0.5), "the file's default first");
    }

    #[test]
    fn needy_queues_order_before_the_rest_within_a_tier() {
        let cluster = Resources::new(100, 100);
        assert_eq!(below_min_share(&Resources::new(10, 50), Some(&Resources::new(20, 100)), &cluster), Some(0.5));
        assert_eq!(below_min_share(&Resources::new(30, 5), Some(&Resources::new(20, 100)), &cluster), None);
        assert_eq!(below_min_share(&Resources::new(0, 0), None, &cluster), None);
        let min = Resources::new(20, 100);
        let k = |usage: Resources, order| needy_first(&usage, Some(&min), &cluster, order);
        assert!(k(Resources::new(10, 50), 0.9) < k(Resources::new(30, 5), 0.1), "needy first");
        assert!(k(Resources::new(4, 20), 0.9) < k(Resources::new(10, 50), 0.1), "the least of its minimum first");
        assert_eq!(k(Resources::new(30, 5), 0.1), 0.1);
    }
}
