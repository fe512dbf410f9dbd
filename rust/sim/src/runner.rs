//! From a spec to a finished run: builds the queue file the RM would read, the scheduler
//! settings, the cluster and the jobs, then runs the engine.

use crate::model::Job;
use crate::sim::{self, ClusterConfig, RunOutput, SimConfig};
use crate::spec::{SchedulerSpec, SlotReservationSpec, Spec, WorkloadSpec};
use crate::workload;
use anyhow::{anyhow, bail, Context, Result};
use std::fmt::Write;
use tidal_core::config::{AppPolicyKind, PolicyKind, Settings};
use tidal_core::{ResourceKind, Scheduler, DIMS};

/// Policy names the papers' experiments use; the build knows some of them. Queue policies
/// order queues (`<policy>`), app policies order apps inside a queue (`<app-policy>`).
const QUEUE_POLICIES: [&str; 4] = ["drf", "strict-priority", "n-bopf", "bopf"];
const APP_POLICIES: [&str; 8] = ["fifo", "carbyne", "tetris", "sjf", "uwfq", "ujf", "job-fair", "cfq"];

pub fn available_policies() -> Vec<&'static str> {
    QUEUE_POLICIES.iter().copied().filter(|n| PolicyKind::parse(n).is_some()).collect()
}

pub fn available_app_policies() -> Vec<&'static str> {
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

/// The `<tidal>` elements that select the app policy and its knobs.
fn app_policy_xml(s: &SchedulerSpec) -> Result<String> {
    let mut x = String::new();
    if let Some(p) = &s.app_policy {
        check_app_policy(p)?;
        let _ = writeln!(x, "  <app-policy>{p}</app-policy>");
    }
    let knob = |field: &str, wanted: &str| -> Result<()> {
        match s.app_policy.as_deref() {
            Some(p) if p == wanted => Ok(()),
            other => bail!(
                "scheduler.{field} applies to app_policy \"{wanted}\", not {}",
                other.map_or("the default fifo".into(), |p| format!("\"{p}\""))
            ),
        }
    };
    if let Some(p) = s.altruism_probability {
        knob("altruism_probability", "carbyne")?;
        let _ = writeln!(x, "  <altruism-probability>{p}</altruism-probability>");
    }
    if let Some(f) = s.fairness_knob {
        knob("fairness_knob", "tetris")?;
        let _ = writeln!(x, "  <fairness-knob>{f}</fairness-knob>");
    }
    for (u, w) in &s.uwfq_user_weights {
        let _ = writeln!(x, "  <uwfq-user-weight user=\"{}\">{w}</uwfq-user-weight>", xml_escape(u));
    }
    if let Some(g) = s.uwfq_grace_period_s {
        let _ = writeln!(x, "  <uwfq-grace-period-sec>{g}</uwfq-grace-period-sec>");
    }
    if let Some(t) = s.uwfq_default_task_s {
        let _ = writeln!(x, "  <uwfq-default-task-sec>{t}</uwfq-default-task-sec>");
    }
    if !s.extra_xml.trim().is_empty() {
        let _ = writeln!(x, "  {}", s.extra_xml.trim());
    }
    Ok(x)
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// What a latency-sensitive queue declares to BoPF-family policies.
#[derive(Clone, Debug)]
pub struct LqDecl {
    pub name: String,
    pub period_s: f64,
    pub deadline_s: f64,
    pub first_burst_s: f64,
    /// Estimated total resource-seconds of one burst.
    pub burst: [f64; DIMS],
}

pub struct Prepared {
    pub cluster: ClusterConfig,
    pub settings: Settings,
    pub queue_xml: String,
    pub jobs: Vec<Job>,
    pub cfg: SimConfig,
    pub window_ms: i64,
}

/// `<slot-reservation .../>` with the attributes the spec sets.
fn slot_reservation_xml(r: &SlotReservationSpec) -> String {
    let mut x = String::from("<slot-reservation");
    if let Some(p) = r.isolation_probability {
        let _ = write!(x, " isolation-probability=\"{p}\"");
    }
    if let Some(t) = r.threshold {
        let _ = write!(x, " threshold=\"{t}\"");
    }
    if let Some(a) = r.prior_shape {
        let _ = write!(x, " prior-shape=\"{a}\"");
    }
    if let Some(m) = r.min_samples {
        let _ = write!(x, " min-samples=\"{m}\"");
    }
    x.push_str("/>");
    x
}

/// The allocation file for a policy and the workload's queues. LQ declarations are written
/// only for policies other than DRF, which has no use for them.
pub fn queue_xml(
    policy: &str,
    app_policy: &str,
    queues: &[String],
    scheduler: &SchedulerSpec,
    lqs: &[LqDecl],
) -> Result<String> {
    let reservation = scheduler.slot_reservation.as_ref();
    if let Some(unknown) = reservation.and_then(|r| r.queues.iter().find(|q| !queues.contains(q))) {
        bail!(
            "scheduler.slot_reservation.queues names '{unknown}', which is not a queue of the workload ({})",
            queues.join(", ")
        );
    }
    let mut x = format!("<tidal>\n  <policy>{policy}</policy>\n{app_policy}");
    for q in queues {
        let w = scheduler.weights.get(q).copied().unwrap_or(1.0);
        let _ = write!(x, "  <queue name=\"{q}\"><weight>{w}</weight>");
        if let Some(r) = reservation.filter(|r| r.queues.contains(q)) {
            x.push_str(&slot_reservation_xml(r));
        }
        if let Some(l) = lqs.iter().find(|l| &l.name == q).filter(|_| policy != "drf") {
            let _ = write!(
                x,
                "<type>lq</type><period-sec>{}</period-sec><deadline-sec>{}</deadline-sec><first-burst-sec>{}</first-burst-sec><burst-demand>",
                l.period_s, l.deadline_s, l.first_burst_s
            );
            for k in ResourceKind::ALL {
                let v = l.burst[k as usize].ceil() as i64;
                if v > 0 {
                    let tag = k.name().replace('_', "-");
                    let _ = write!(x, "<{tag}>{v}</{tag}>");
                }
            }
            x.push_str("</burst-demand>");
        }
        x.push_str("</queue>\n");
    }
    x.push_str("</tidal>\n");
    Ok(x)
}

pub fn prepare(spec: &Spec, progress: bool) -> Result<Prepared> {
    spec.validate()?;
    let capacity = spec.cluster.machine.to_resources("cluster.machine")?;
    if capacity.memory_mb() <= 0 || capacity.vcores() <= 0 {
        bail!("cluster.machine needs positive memory_mb and vcores");
    }
    let mut settings = Settings::default();
    settings.max_allocation = capacity;
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
    let w = workload::build(&spec.workload, &spec.sim, &cluster_total, spec.seed)?;
    let queue_xml = match (&spec.scheduler.queue_file, &spec.scheduler.policy) {
        (Some(path), _) => std::fs::read_to_string(path)
            .with_context(|| format!("cannot read scheduler.queue_file {}", path.display()))?,
        (None, policy) => {
            let policy = policy.as_deref().unwrap_or("drf");
            check_queue_policy(policy)?;
            let app = app_policy_xml(&spec.scheduler)?;
            queue_xml(policy, &app, &w.queues, &spec.scheduler, &w.lqs)?
        }
    };
    let am = spec.sim.am_container.to_resources("sim.am_container")?;
    let cfg = SimConfig {
        heartbeat_ms: spec.sim.heartbeat_ms,
        container_overhead_ms: spec.sim.container_overhead_ms,
        am: (!am.is_zero()).then_some(am),
        sample_ms: spec.sim.sample_ms,
        idle_recheck_ms: spec.sim.idle_recheck_ms,
        progress,
        label: spec.name.clone(),
        hints: spec.sim.hints,
        hint_progress_interval_ms: spec.sim.hint_progress_interval_ms,
        fairness_over_jobs: spec.sim.fairness_over == crate::spec::FairnessOver::Jobs,
        fairness_window_ms: spec.sim.fairness_window_ms,
        straggler_copies: spec.sim.straggler_copies,
        stop_after_class: spec.sim.stop_after_class.clone(),
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

/// Whether a workload declares LQs (used to pick defaults in experiments).
pub fn has_lq(spec: &Spec) -> bool {
    matches!(&spec.workload, WorkloadSpec::Bopf { lq, .. } if !lq.is_empty())
}
