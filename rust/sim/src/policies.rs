//! The policy names the experiments use, checked against the policies this build's core has.
//!
//! Queue policies order queues (`<policy>`), app policies order apps inside a queue
//! (`<app-policy>`).

use crate::spec::SchedulerSpec;
use anyhow::{bail, Result};
use tidal_core::config::{AppPolicyKind, PolicyKind};

const QUEUE_POLICIES: [&str; 4] = ["drf", "strict-priority", "n-bopf", "bopf"];
const APP_POLICIES: [&str; 9] = ["fifo", "carbyne", "tetris", "tetris-srtf", "sjf", "uwfq", "ujf", "job-fair", "cfq"];

fn available_policies() -> Vec<&'static str> {
    QUEUE_POLICIES.iter().copied().filter(|n| PolicyKind::parse(n).is_some()).collect()
}

fn available_app_policies() -> Vec<&'static str> {
    APP_POLICIES.iter().copied().filter(|n| AppPolicyKind::parse(n).is_some()).collect()
}

/// Fails with a clear message when this build's core has no such queue policy.
pub fn check_queue_policy(name: &str) -> Result<()> {
    if PolicyKind::parse(name).is_none() {
        if AppPolicyKind::parse(name).is_some() {
            bail!("'{name}' is an app policy (the order inside a queue): set scheduler.app_policy (or --app-policy) instead of the queue policy");
        }
        bail!("policy '{name}' is not available in this build (available: {})", available_policies().join(", "));
    }
    Ok(())
}

/// Fails with a clear message when this build's core has no such app policy.
pub fn check_app_policy(name: &str) -> Result<()> {
    if AppPolicyKind::parse(name).is_none() {
        bail!(
            "app policy '{name}' is not available in this build (available: {})",
            available_app_policies().join(", ")
        );
    }
    Ok(())
}

/// A queue or app policy of that name exists in this build.
/// The app policies' knobs in a scheduler spec; which policies take each is the core's.
#[derive(Clone, Copy)]
pub enum AppKnob {
    /// `altruism_probability`
    Altruism,
    /// `fairness_knob`
    Fairness,
}

impl AppKnob {
    /// The app policies that take this knob, by name.
    pub fn policies(self) -> Vec<&'static str> {
        AppPolicyKind::ALL
            .iter()
            .filter(|k| match self {
                AppKnob::Altruism => matches!(k, AppPolicyKind::Carbyne { .. }),
                AppKnob::Fairness => matches!(k, AppPolicyKind::Tetris { .. }),
            })
            .map(|k| k.name())
            .collect()
    }
}

/// Sets `scheduler`'s app policy and drops the knobs that policy does not take.
pub fn set_app_policy(scheduler: &mut SchedulerSpec, policy: &str) {
    if !AppKnob::Altruism.policies().contains(&policy) {
        scheduler.altruism_probability = None;
    }
    if !AppKnob::Fairness.policies().contains(&policy) {
        scheduler.fairness_knob = None;
    }
    scheduler.app_policy = Some(policy.into());
}

/// A technique configured per queue rather than chosen as a policy; `--swap TECHNIQUE=none`
/// turns it off in every run.
pub const SLOT_RESERVATION: &str = "slot-reservation";

/// A swap replaces a queue policy by a queue policy, or an app policy by an app policy, or
/// turns slot reservation off (`slot-reservation=none`).
pub fn check_swap(from: &str, to: &str) -> Result<()> {
    if from == SLOT_RESERVATION {
        return if to == "none" { Ok(()) } else { bail!("{from} is a technique: swap it for none, not {to}") };
    }
    if PolicyKind::parse(from).is_some() {
        return check_queue_policy(to).map_err(|e| anyhow::anyhow!("{from} is a queue policy: {e}"));
    }
    check_app_policy(from)?;
    if PolicyKind::parse(to).is_some() {
        bail!("{from} is an app policy (the order inside a queue) and {to} a queue policy: swap like for like");
    }
    check_app_policy(to)
}

pub fn check_policy(name: &str) -> Result<()> {
    if PolicyKind::parse(name).is_none() && AppPolicyKind::parse(name).is_none() {
        let mut all = available_policies();
        all.extend(available_app_policies());
        bail!("policy '{name}' is not available in this build (available: {})", all.join(", "));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swaps_replace_like_with_like() {
        assert!(check_swap("bopf", "strict-priority").is_ok());
        assert!(check_swap("uwfq", "ujf").is_ok());
        assert!(check_swap("carbyne", "tetris-srtf").is_ok());
        let mixed = check_swap("uwfq", "drf").unwrap_err().to_string();
        assert!(mixed.contains("uwfq is an app policy") && mixed.contains("drf a queue policy"), "{mixed}");
        let mixed = check_swap("drf", "uwfq").unwrap_err().to_string();
        assert!(mixed.contains("drf is a queue policy") && mixed.contains("'uwfq' is an app policy"), "{mixed}");
        assert!(check_swap("uwfq", "lottery").unwrap_err().to_string().contains("'lottery' is not available"));
        assert!(check_swap("slot-reservation", "none").is_ok());
        assert!(check_swap("slot-reservation", "drf").unwrap_err().to_string().contains("swap it for none"));
    }
}
