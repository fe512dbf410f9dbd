//! A spec resolved into concrete jobs, as JSON (`tidal-sim workload`): what a real cluster
//! replays (`java/replay`) so that nothing but this crate reads specs and traces. The shape is
//! `schema/workload.schema.json`, which the replayer validates every document against.

use crate::model::Job;
use crate::runner::Prepared;
use crate::spec::Spec;
use anyhow::{anyhow, Result};
use serde::Serialize;
use std::collections::BTreeMap;
use tidal_core::{ResourceKind, Resources, Scheduler};

/// Version of the document's shape; the replayer refuses others.
pub const VERSION: u32 = 1;

#[derive(Serialize)]
pub struct WorkloadDoc<'a> {
    pub version: u32,
    pub name: String,
    pub seed: u64,
    /// The cluster the spec models; the replayer reports it beside the real one.
    pub cluster: ClusterDoc,
    /// The queue policy, with the app policy after a slash unless it is FIFO (as `summary.json`
    /// names it).
    pub policy: String,
    /// The allocation file the simulated scheduler ran with, LQ declarations included: the real
    /// ResourceManager's queue file for a like-for-like run.
    pub allocations_xml: String,
    /// Each job as the model holds it (see [`Job`]'s serialisation).
    pub jobs: &'a [Job],
}

#[derive(Serialize)]
pub struct ClusterDoc {
    pub machines: usize,
    pub machine: BTreeMap<String, i64>,
    pub heartbeat_ms: i64,
}

fn named(r: &Resources) -> BTreeMap<String, i64> {
    ResourceKind::ALL.iter().filter(|k| r.get(**k) > 0).map(|k| (k.name().to_string(), r.get(*k))).collect()
}

/// The prepared run of `spec` as a workload document.
pub fn workload_doc<'a>(spec: &Spec, p: &'a Prepared) -> Result<WorkloadDoc<'a>> {
    let sched = Scheduler::from_xml(&p.queue_xml, p.settings).map_err(|e| anyhow!("queue file: {e}"))?;
    let policy = match sched.app_policy_name() {
        "fifo" => sched.policy_name().to_string(),
        app => format!("{}/{app}", sched.policy_name()),
    };
    Ok(WorkloadDoc {
        version: VERSION,
        name: spec.name.clone(),
        seed: spec.seed,
        cluster: ClusterDoc {
            machines: p.cluster.machines,
            machine: named(&p.cluster.capacity),
            heartbeat_ms: p.cfg.heartbeat_ms,
        },
        policy,
        allocations_xml: p.queue_xml.clone(),
        jobs: &p.jobs,
    })
}
