//! From a spec to a finished run: settings, cluster, jobs and allocation file, then the engine.

use crate::model::Job;
use crate::queue_file;
use crate::sim;
use crate::sim::config::{ClusterConfig, SimConfig};
use crate::sim::output::RunOutput;
use crate::spec::{FairnessOver, Spec};
use crate::workload::{self, Traces};
use anyhow::{anyhow, bail, Context, Result};
use tidal_core::config::Settings;
use tidal_core::Scheduler;

pub struct Prepared {
    pub cluster: ClusterConfig,
    pub settings: Settings,
    pub queue_xml: String,
    pub jobs: Vec<Job>,
    pub cfg: SimConfig,
    pub window_ms: i64,
}

pub fn prepare(spec: &Spec, progress: bool) -> Result<Prepared> {
    prepare_from(spec, progress, &Traces::default())
}

/// [`prepare`], drawing trace jobs from `traces`, which other runs may share.
pub fn prepare_from(spec: &Spec, progress: bool, traces: &Traces) -> Result<Prepared> {
    spec.validate()?;
    let capacity = spec.cluster.machine.to_resources("cluster.machine")?;
    if capacity.memory_mb() <= 0 || capacity.vcores() <= 0 {
        bail!("cluster.machine needs positive memory_mb and vcores");
    }
    let mut settings =
        Settings { max_allocation: capacity, history_sample_interval_ms: spec.sim.sample_ms, ..Settings::default() };
    if let Some(m) = &spec.scheduler.min_allocation {
        settings.min_allocation = m.to_resources("scheduler.min_allocation")?;
    }
    if let Some(m) = &spec.scheduler.max_allocation {
        settings.max_allocation = m.to_resources("scheduler.max_allocation")?;
    }
    if let Some(n) = spec.scheduler.max_assign_per_heartbeat {
        settings.max_assign_per_heartbeat = n;
    }
    settings.validate().map_err(|e| anyhow!("scheduler settings: {e}"))?;
    let cluster_total = capacity.times(spec.cluster.machines as i64);
    let w = workload::build(&spec.workload, &spec.sim, &cluster_total, &capacity, spec.seed, traces)?;
    let queue_xml = match (&spec.scheduler.queue_file, &spec.scheduler.policy) {
        (Some(path), _) => std::fs::read_to_string(path)
            .with_context(|| format!("cannot read scheduler.queue_file {}", path.display()))?,
        (None, policy) => queue_file::write(policy.as_deref().unwrap_or("drf"), &w.queues, &spec.scheduler, &w.lqs)?,
    };
    let am = spec.sim.am_container.to_resources("sim.am_container")?;
    let cfg = SimConfig {
        heartbeat_ms: spec.sim.heartbeat_ms,
        container_overhead_ms: spec.sim.container_overhead_ms,
        am_overhead_ms: spec.sim.am_overhead_ms.unwrap_or(spec.sim.container_overhead_ms),
        submit_latency_ms: spec.sim.submit_latency_ms,
        am: (!am.is_zero()).then_some(am),
        sample_ms: spec.sim.sample_ms,
        idle_recheck_ms: spec.sim.idle_recheck_ms,
        progress,
        label: spec.name.clone(),
        hints: spec.sim.hints,
        hint_progress_interval_ms: spec.sim.hint_progress_interval_ms,
        fairness_over_jobs: spec.sim.fairness_over == FairnessOver::Jobs,
        fairness_window_ms: spec.sim.fairness_window_ms,
        straggler_copies: spec.sim.straggler_copies,
        stop_after_class: spec.sim.stop_after_class.clone(),
        container_reuse: spec.sim.container_reuse,
    };
    let cluster =
        ClusterConfig { machines: spec.cluster.machines, machines_per_rack: spec.cluster.machines_per_rack, capacity };
    Ok(Prepared { cluster, settings, queue_xml, jobs: w.jobs, cfg, window_ms: spec.sim.fairness_window_ms })
}

pub fn run_prepared(p: &Prepared) -> Result<RunOutput> {
    let sched = Scheduler::from_xml(&p.queue_xml, p.settings).map_err(|e| anyhow!("queue file: {e}"))?;
    sim::run(&p.cluster, sched, &p.jobs, &p.cfg)
}

pub fn run_spec(spec: &Spec, progress: bool) -> Result<RunOutput> {
    run_prepared(&prepare(spec, progress)?)
}
