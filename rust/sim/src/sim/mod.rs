//! The discrete-event engine that plays a YARN cluster's NodeManagers and ApplicationMasters.
//!
//! Around it is an unmodified `tidal_core::Scheduler`, called exactly as the RM shim calls it:
//! `add_node`, `add_app`, `update_asks`, `node_heartbeat` (with the containers completed since
//! the node's last heartbeat) and `remove_app`. The `nodes` module says which heartbeats are
//! simulated.

mod capture;
pub mod config;
mod engine;
mod events;
mod jobs;
mod nodes;
pub mod output;

use crate::model::Job;
use anyhow::{anyhow, bail, Result};
use config::{ClusterConfig, SimConfig};
use engine::Engine;
use output::RunOutput;
use std::time::Instant;
use tidal_core::request::normalize;
use tidal_core::Scheduler;

/// Runs one simulation. `sched` must be freshly built (no nodes, no apps).
pub fn run(cluster: &ClusterConfig, mut sched: Scheduler, jobs: &[Job], cfg: &SimConfig) -> Result<RunOutput> {
    let wall = Instant::now();
    let n = cluster.machines;
    if n == 0 {
        bail!("the cluster has no machine");
    }
    let settings = *sched.settings();
    for j in jobs {
        for s in &j.stages {
            let norm = normalize(0, s.demand, &settings).map_err(|e| {
                anyhow!(
                    "job '{}' stage '{}': {e} (does cluster.machine declare every resource the tasks use?)",
                    j.name,
                    s.name
                )
            })?;
            if !norm.fits_in(&cluster.capacity) {
                bail!(
                    "job '{}' stage '{}': a task needs {norm}, more than a whole machine {}",
                    j.name,
                    s.name,
                    cluster.capacity
                );
            }
        }
    }
    for i in 0..n {
        let rack = (n + 1 + i / cluster.machines_per_rack) as u32;
        sched.add_node(i as u32, i as u32 + 1, rack, cluster.capacity)?;
    }
    Engine::new(sched, jobs, cfg, cluster).run(wall)
}

#[cfg(test)]
mod tests;
