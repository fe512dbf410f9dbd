//! The policy names the experiments use, checked against the policies this build's core has.
//!
//! Queue policies order queues (`<policy>`), app policies order apps inside a queue
//! (`<app-policy>`).

use anyhow::{bail, Result};
use tidal_core::config::{AppPolicyKind, PolicyKind};

const QUEUE_POLICIES: [&str; 4] = ["drf", "strict-priority", "n-bopf", "bopf"];
const APP_POLICIES: [&str; 8] = ["fifo", "carbyne", "tetris", "sjf", "uwfq", "ujf", "job-fair", "cfq"];

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
pub fn check_policy(name: &str) -> Result<()> {
    if PolicyKind::parse(name).is_none() && AppPolicyKind::parse(name).is_none() {
        let mut all = available_policies();
        all.extend(available_app_policies());
        bail!("policy '{name}' is not available in this build (available: {})", all.join(", "));
    }
    Ok(())
}
