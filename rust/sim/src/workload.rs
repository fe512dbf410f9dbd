//! Turns a spec's workload section into jobs, their queues and the LQs' declarations.
//!
//! It draws arrival times, queues, classes, deadlines and the injected estimation error; all
//! randomness comes from one seeded RNG.

use crate::gen;
use crate::model::{critical_path_ms, estimate_of, mean_critical_path_ms, Job, JobTemplate, Stage};
use crate::spec::{
    resource_kind, Arrivals, DeclaredDemand, ErrorScope, FixedStage, SimSpec, SourceSpec, UserArrivals, WorkloadSpec,
};
use crate::traces;
use anyhow::{anyhow, bail, Result};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Exp, Normal};
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use tidal_core::dag::JobDag;
use tidal_core::{Resources, DIMS};

pub struct Workload {
    pub jobs: Vec<Job>,
    /// Queue names in first-use order.
    pub queues: Vec<String>,
    /// What each LQ would declare to admission control, from the jobs' estimates.
    pub lqs: Vec<LqDecl>,
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

/// Trace files loaded once and shared read-only by every build that draws from them (the runs
/// of a sweep, on any thread).
#[derive(Default)]
pub struct Traces {
    loaded: Mutex<HashMap<String, Arc<Vec<JobTemplate>>>>,
}

impl Traces {
    /// The jobs of a trace source, loaded on first use. Loads happen under the lock, so two
    /// runs that want the same file do not both read it.
    fn pool(&self, src: &SourceSpec) -> Result<Arc<Vec<JobTemplate>>> {
        let key = serde_json::to_string(src)?;
        let mut loaded = self.loaded.lock().map_err(|_| anyhow!("a trace load failed on another thread"))?;
        if let Some(jobs) = loaded.get(&key) {
            return Ok(jobs.clone());
        }
        let jobs = Arc::new(match src {
            SourceSpec::Generator { .. } | SourceSpec::Fixed { .. } | SourceSpec::FixedEach { .. } => {
                unreachable!("only traces have a pool")
            }
            SourceSpec::TpchSpark { file, options } => traces::load_tpch_spark(Path::new(file), options)?,
            SourceSpec::Swim { file, options } => traces::load_swim(Path::new(file), options)?,
            SourceSpec::Sls { file, options } => traces::load_sls(Path::new(file), options)?,
        });
        loaded.insert(key, jobs.clone());
        Ok(jobs)
    }
}

/// Where one build's jobs come from: the shared traces, and the resources tasks may ask for
/// (`sim.task_resources`; the others are dropped from every drawn job).
struct TraceCache<'a> {
    traces: &'a Traces,
    keep: Option<[bool; DIMS]>,
    demand: Option<Resources>,
    /// One machine's capacity, which generators size multi-resource containers against.
    machine: Resources,
    /// The multi-resource containers' random stream, apart from the jobs' (see
    /// [`gen::Containers`]).
    demand_rng: ChaCha8Rng,
}

/// Draws jobs from a source: fresh generator jobs, or random picks from a trace.
/// The `k`-th job drawn from `src` (only [`SourceSpec::FixedEach`] tells the draws apart by `k`).
fn draw(cache: &mut TraceCache, src: &SourceSpec, rng: &mut ChaCha8Rng, k: usize, name: String) -> Result<JobTemplate> {
    let mut t = match src {
        SourceSpec::Generator { family, scale, input_spread, demands } => {
            // Drawn only with a spread, so runs without one keep their random stream.
            let input = if *input_spread > 1.0 { input_spread.powf(rng.gen::<f64>()) } else { 1.0 };
            let mut containers =
                gen::Containers { model: *demands, machine: cache.machine, rng: &mut cache.demand_rng };
            gen::generate(rng, *family, scale * input, &mut containers, name)
        }
        SourceSpec::Fixed { stages } => JobTemplate {
            name,
            stages: stages.iter().enumerate().map(fixed_stage).collect::<Result<_>>()?,
            arrival_ms: None,
            queue: None,
        },
        SourceSpec::FixedEach { jobs } => JobTemplate {
            name,
            stages: jobs[k % jobs.len()].iter().enumerate().map(fixed_stage).collect::<Result<_>>()?,
            arrival_ms: None,
            queue: None,
        },
        _ => {
            let pool = cache.traces.pool(src)?;
            let mut t = pool[rng.gen_range(0..pool.len())].clone();
            t.name = format!("{name}:{}", t.name);
            t
        }
    };
    if let Some(d) = cache.demand {
        t.stages.iter_mut().for_each(|s| s.demand = d);
    }
    if let Some(keep) = cache.keep {
        for s in &mut t.stages {
            for (v, k) in s.demand.0.iter_mut().zip(keep) {
                *v *= k as i64;
            }
        }
    }
    Ok(t)
}

/// Stage `i` of a fixed job: it waits for stage `i - 1`. The straggler is task 0, the first to
/// start, as Spark orders a scan's partitions largest first.
fn fixed_stage((i, st): (usize, &FixedStage)) -> Result<Stage> {
    let mut durations_ms = vec![st.task_ms; st.tasks as usize];
    if let Some(s) = st.straggler_ms {
        durations_ms[0] = s;
    }
    Ok(Stage {
        name: format!("stage{i}"),
        parents: i.checked_sub(1).map(|p| p as u32).into_iter().collect(),
        demand: st.demand.to_resources("fixed stage demand")?,
        durations_ms,
    })
}

/// real = estimate x (1 + e), e ~ N(0, std): one draw per stage for the container size (YARN
/// asks one size per priority), one per task for the duration. Factors are kept above 5%.
pub fn perturb(stages: &mut [Stage], std: f64, rng: &mut ChaCha8Rng) {
    if std <= 0.0 {
        return;
    }
    let n = Normal::new(0.0, std).expect("finite std");
    for s in stages {
        let f = (1.0 + n.sample(rng)).max(0.05);
        for d in 0..DIMS {
            let v = s.demand.0[d];
            if v > 0 {
                s.demand.0[d] = ((v as f64 * f).round() as i64).max(1);
            }
        }
        for t in &mut s.durations_ms {
            *t = ((*t as f64) * (1.0 + n.sample(rng)).max(0.05)).round().max(1.0) as u32;
        }
    }
}

/// Redraws each stage's task durations from a Pareto distribution of shape `alpha` (> 1) with
/// the stage's mean: `t_m = mean (α - 1) / α` (the speculative slot reservation paper, §VI-B,
/// keeps the mean and sets the tail).
pub fn pareto_durations(stages: &mut [Stage], alpha: f64, rng: &mut ChaCha8Rng) {
    for s in stages {
        let mean = s.durations_ms.iter().map(|&d| d as f64).sum::<f64>() / s.tasks().max(1) as f64;
        let scale = (mean * (alpha - 1.0) / alpha).max(1.0);
        let pareto = rand_distr::Pareto::new(scale, alpha).expect("positive scale and shape");
        for d in &mut s.durations_ms {
            *d = pareto.sample(rng).min(u32::MAX as f64).round() as u32;
        }
    }
}

/// Scales task counts so that the widest stage alone asks for `share` of the cluster in its
/// dominant resource. Durations of added tasks repeat the stage's own.
pub fn scale_to_peak(stages: &mut [Stage], capacity: &Resources, share: f64) {
    if share <= 0.0 {
        return;
    }
    let peak = stages.iter().map(|s| s.demand.times(s.tasks() as i64).dominant_share(capacity)).fold(0.0, f64::max);
    if peak <= 0.0 {
        return;
    }
    scale_tasks(stages, share / peak);
}

/// Distinct jobs a periodic LQ cycles through, and the draws spent finding them.
const LQ_POOL: usize = 32;
const LQ_DRAWS: usize = 1_000_000;

/// Multiplies every stage's task count by `factor` (at least one task); added tasks repeat the
/// stage's own durations.
pub fn scale_tasks(stages: &mut [Stage], factor: f64) {
    for s in stages {
        let n = ((s.tasks() as f64 * factor).round() as usize).max(1);
        let old = std::mem::take(&mut s.durations_ms);
        s.durations_ms = (0..n).map(|i| old[i % old.len()]).collect();
    }
}

/// The burst demand an LQ declares for jobs like `drawn` (resource-seconds per resource).
fn declaration(drawn: &[JobTemplate], how: DeclaredDemand, on_period_s: f64, capacity: &Resources) -> [f64; DIMS] {
    let mut burst = [0.0f64; DIMS];
    for t in drawn {
        match how {
            DeclaredDemand::Need => {
                let mut need = [0.0f64; DIMS];
                for s in &t.stages {
                    let secs: f64 = s.durations_ms.iter().map(|&d| d as f64 / 1000.0).sum();
                    for (n, v) in need.iter_mut().zip(s.demand.0.iter()) {
                        *n += *v as f64 * secs;
                    }
                }
                for (b, n) in burst.iter_mut().zip(need) {
                    *b = b.max(n);
                }
            }
            DeclaredDemand::PeakRate => {
                for s in &t.stages {
                    let wide = s.demand.times(s.tasks() as i64);
                    for (b, v) in burst.iter_mut().zip(wide.0.iter()) {
                        *b = b.max(*v as f64 * on_period_s);
                    }
                }
            }
        }
    }
    // A job scaled to the whole cluster must not declare a rate a rounding step above capacity,
    // which would fail the resource condition by one unit.
    for (b, c) in burst.iter_mut().zip(capacity.0.iter()) {
        *b = b.min((*c as f64 * on_period_s).floor());
    }
    burst
}

/// `sim.task_resources` as a mask over the resource kinds.
fn task_resources(sim: &SimSpec) -> Result<Option<[bool; DIMS]>> {
    let Some(names) = &sim.task_resources else { return Ok(None) };
    let mut keep = [false; DIMS];
    for n in names {
        keep[resource_kind("sim.task_resources", n)? as usize] = true;
    }
    Ok(Some(keep))
}

/// What the job's ApplicationMaster will believe about `tpl` (call before estimation error).
fn estimate_dag(tpl: &JobTemplate) -> Result<JobDag> {
    estimate_of(&tpl.stages).map_err(|e| anyhow!("job '{}': {e}", tpl.name))
}

/// The workload's jobs, trace jobs drawn from `traces`; `capacity` is the whole cluster's,
/// `machine` one machine's.
pub fn build(
    w: &WorkloadSpec,
    sim: &SimSpec,
    capacity: &Resources,
    machine: &Resources,
    seed: u64,
    traces: &Traces,
) -> Result<Workload> {
    let mut rng = <ChaCha8Rng as rand::SeedableRng>::seed_from_u64(seed);
    let demand = sim.task_demand.as_ref().map(|d| d.to_resources("sim.task_demand")).transpose()?;
    if demand.is_some_and(|d| d.memory_mb() <= 0 || d.vcores() <= 0) {
        bail!("sim.task_demand needs positive memory_mb and vcores");
    }
    // Stream 1 of the same seed: the jobs' stream (0) is the same under either demand model.
    let mut demand_rng = rng.clone();
    demand_rng.set_stream(1);
    let mut cache = TraceCache { traces, keep: task_resources(sim)?, demand, machine: *machine, demand_rng };
    let mut jobs = Vec::new();
    let mut queues: Vec<String> = Vec::new();
    let mut lqs = Vec::new();
    let use_queue = |q: &str, queues: &mut Vec<String>| {
        if !queues.iter().any(|x| x == q) {
            queues.push(q.to_string());
        }
    };
    let err_all = sim.error_applies_to == ErrorScope::All;
    match w {
        WorkloadSpec::Carbyne {
            source,
            jobs: n,
            arrivals,
            mean_interarrival_s,
            time_scale,
            queues: nq,
            trace_queues,
        } => {
            let templates: Vec<JobTemplate> = match (source, arrivals) {
                (SourceSpec::Generator { .. } | SourceSpec::Fixed { .. } | SourceSpec::FixedEach { .. }, _) => {
                    let n = n.unwrap_or(0);
                    (0..n).map(|i| draw(&mut cache, source, &mut rng, i, format!("job{i}"))).collect::<Result<_>>()?
                }
                (_, Arrivals::Trace) => {
                    let pool = cache.traces.pool(source)?;
                    let take = n.unwrap_or(pool.len()).min(pool.len());
                    pool[..take].to_vec()
                }
                _ => {
                    let n = n.unwrap_or(cache.traces.pool(source)?.len());
                    (0..n).map(|i| draw(&mut cache, source, &mut rng, i, format!("job{i}"))).collect::<Result<_>>()?
                }
            };
            let exp = Exp::new(1.0 / (mean_interarrival_s * 1000.0)).ok();
            let first_trace = templates.iter().filter_map(|t| t.arrival_ms).min().unwrap_or(0);
            let mut t = 0.0f64;
            for (i, mut tpl) in templates.into_iter().enumerate() {
                let arrival = match arrivals {
                    Arrivals::Together => 0,
                    Arrivals::Poisson => {
                        if i > 0 {
                            t += exp.expect("validated mean").sample(&mut rng);
                        }
                        t as i64
                    }
                    Arrivals::Trace => match tpl.arrival_ms {
                        Some(a) => ((a - first_trace) as f64 * time_scale) as i64,
                        None => {
                            bail!("job '{}' has no arrival time in the trace; use arrivals = \"poisson\"", tpl.name)
                        }
                    },
                };
                let queue = if *trace_queues {
                    tpl.queue.clone().unwrap_or_else(|| "default".into())
                } else if *nq == 0 {
                    format!("j{i}")
                } else {
                    format!("q{}", i % nq)
                };
                use_queue(&queue, &mut queues);
                let estimate = estimate_dag(&tpl)?;
                if err_all {
                    perturb(&mut tpl.stages, sim.estimation_error_std, &mut rng);
                }
                jobs.push(Job {
                    name: tpl.name,
                    user: queue.clone(),
                    queue,
                    class: "job".into(),
                    arrival_ms: arrival,
                    deadline_ms: None,
                    stages: tpl.stages,
                    estimate,
                });
            }
        }
        WorkloadSpec::Bopf { lq, tq } => {
            for l in lq {
                use_queue(&l.name, &mut queues);
                let cp_range = (l.min_critical_path_s * 1000.0) as i64..(l.max_critical_path_s * 1000.0) as i64;
                let max_stages = l.max_stages.unwrap_or(usize::MAX);
                // Jobs that fit the critical-path and stage bounds form a pool of up to
                // LQ_POOL; a periodic LQ runs them in turn (the paper picks its LQ jobs from
                // the traces' few short ones), so rare shapes cost a bounded number of draws.
                let fits = |t: &JobTemplate| {
                    // The critical path as the job will run: with equal tasks when they are made equal.
                    let cp =
                        if l.uniform_tasks { mean_critical_path_ms(&t.stages) } else { critical_path_ms(&t.stages) };
                    cp_range.contains(&cp) && t.stages.len() <= max_stages
                };
                let mut pool = Vec::new();
                let mut tries = 0;
                while pool.len() < l.jobs.min(LQ_POOL) && tries < LQ_DRAWS {
                    let t = draw(&mut cache, &l.source, &mut rng, pool.len(), format!("{}-{}", l.name, pool.len()))?;
                    tries += 1;
                    if fits(&t) {
                        pool.push(t);
                    }
                }
                if pool.is_empty() && l.jobs > 0 {
                    bail!(
                        "workload.lq '{}': none of {LQ_DRAWS} jobs drawn from its source has a critical path from {} s to under {} s and at most {} stages",
                        l.name,
                        l.min_critical_path_s,
                        l.max_critical_path_s,
                        l.max_stages.map_or("any number of".into(), |m| m.to_string())
                    );
                }
                let mut drawn = Vec::with_capacity(l.jobs);
                for k in 0..l.jobs {
                    let mut tpl = pool[k % pool.len()].clone();
                    let suffix = tpl.name.split_once(':').map(|(_, s)| format!(":{s}")).unwrap_or_default();
                    tpl.name = format!("{}-{k}{suffix}", l.name);
                    if l.uniform_tasks {
                        for s in tpl.stages.iter_mut() {
                            let mean = s.mean_duration_ms().max(1) as u32;
                            s.durations_ms.iter_mut().for_each(|d| *d = mean);
                        }
                    }
                    if l.every_stage_at_peak {
                        for s in tpl.stages.iter_mut() {
                            scale_to_peak(std::slice::from_mut(s), capacity, l.peak_share);
                        }
                    } else {
                        scale_to_peak(&mut tpl.stages, capacity, l.peak_share);
                    }
                    if let Some(alpha) = l.pareto_shape {
                        pareto_durations(&mut tpl.stages, alpha, &mut rng);
                    }
                    drawn.push(tpl);
                }
                // The ON period declared to admission control and used for deadlines is read
                // from the estimates, before estimation error perturbs the jobs. A period under
                // a second bounds it too.
                let on_period_s = l.deadline_s.unwrap_or_else(|| {
                    let longest = drawn.iter().map(|t| critical_path_ms(&t.stages)).max().unwrap_or(0);
                    (longest as f64 / 1000.0).max(1.0).min(l.period_s)
                });
                let mut burst = declaration(&drawn, l.declared_demand, on_period_s, capacity);
                burst.iter_mut().for_each(|b| *b *= l.declared_factor);
                for (k, mut tpl) in drawn.into_iter().enumerate() {
                    if l.job_scale != 1.0 {
                        scale_tasks(&mut tpl.stages, l.job_scale);
                    }
                    let estimate = estimate_dag(&tpl)?;
                    perturb(&mut tpl.stages, sim.estimation_error_std, &mut rng);
                    let arrival = ((l.first_arrival_s + k as f64 * l.period_s) * 1000.0) as i64;
                    let deadline = arrival + (on_period_s * 1000.0) as i64;
                    jobs.push(Job {
                        name: tpl.name,
                        queue: l.name.clone(),
                        user: l.name.clone(),
                        class: "LQ".into(),
                        arrival_ms: arrival,
                        deadline_ms: Some(deadline),
                        stages: tpl.stages,
                        estimate,
                    });
                }
                lqs.push(LqDecl {
                    name: l.name.clone(),
                    period_s: l.period_s,
                    deadline_s: on_period_s,
                    first_burst_s: l.first_arrival_s,
                    burst,
                });
            }
            for q in 0..tq.queues {
                use_queue(&format!("tq{q}"), &mut queues);
            }
            // The backlog: `jobs` jobs, and more while it holds less than `backlog_s` seconds of
            // the cluster (work counted in each job's dominant resource).
            let backlog_ms = tq.backlog_s.unwrap_or(0.0) * 1000.0;
            let mut work_ms = 0.0;
            let mut k = 0;
            while tq.queues > 0 && (k < tq.jobs || work_ms < backlog_ms) {
                let q = format!("tq{}", k % tq.queues);
                let mut tpl = draw(&mut cache, &tq.source, &mut rng, k, format!("{q}-{k}"))?;
                if tq.task_duration_scale != 1.0 {
                    for d in tpl.stages.iter_mut().flat_map(|s| s.durations_ms.iter_mut()) {
                        *d = (*d as f64 * tq.task_duration_scale).round().clamp(1.0, u32::MAX as f64) as u32;
                    }
                }
                for s in &tpl.stages {
                    let task_ms: f64 = s.durations_ms.iter().map(|&d| d as f64).sum();
                    work_ms += task_ms * s.demand.dominant_share(capacity);
                }
                let estimate = estimate_dag(&tpl)?;
                if err_all {
                    perturb(&mut tpl.stages, sim.estimation_error_std, &mut rng);
                }
                jobs.push(Job {
                    name: tpl.name,
                    user: q.clone(),
                    queue: q,
                    class: "TQ".into(),
                    arrival_ms: 0,
                    deadline_ms: None,
                    stages: tpl.stages,
                    estimate,
                });
                k += 1;
            }
        }
        WorkloadSpec::Users { users, queue_per_user, job_as_user } => {
            for u in users {
                let queue = if *queue_per_user { u.name.clone() } else { "default".to_string() };
                use_queue(&queue, &mut queues);
                let exp = match &u.arrivals {
                    UserArrivals::Poisson { mean_interarrival_s } => {
                        Exp::new(1.0 / (mean_interarrival_s * 1000.0)).ok()
                    }
                    UserArrivals::Bursts { .. } | UserArrivals::At { .. } => None,
                };
                let mut t = u.first_arrival_s * 1000.0;
                for k in 0..u.jobs {
                    let arrival = match &u.arrivals {
                        UserArrivals::Poisson { .. } => {
                            if k > 0 {
                                t += exp.expect("validated mean").sample(&mut rng);
                            }
                            t as i64
                        }
                        UserArrivals::Bursts { every_s, size } => {
                            ((u.first_arrival_s + (k / size) as f64 * every_s) * 1000.0) as i64
                        }
                        UserArrivals::At { at_s } => ((u.first_arrival_s + at_s[k]) * 1000.0).round() as i64,
                    };
                    let mut tpl = draw(&mut cache, &u.source, &mut rng, k, format!("{}-{k}", u.name))?;
                    let estimate = estimate_dag(&tpl)?;
                    if err_all {
                        perturb(&mut tpl.stages, sim.estimation_error_std, &mut rng);
                    }
                    let user = if *job_as_user { tpl.name.clone() } else { u.name.clone() };
                    jobs.push(Job {
                        name: tpl.name,
                        queue: queue.clone(),
                        user,
                        class: u.class.clone().unwrap_or_else(|| u.name.clone()),
                        arrival_ms: arrival,
                        deadline_ms: None,
                        stages: tpl.stages,
                        estimate,
                    });
                }
            }
        }
    }
    // Stable order by arrival keeps submission order deterministic.
    jobs.sort_by_key(|j| j.arrival_ms);
    Ok(Workload { jobs, queues, lqs })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn perturbation_keeps_means_and_positivity() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let mut stages = vec![Stage {
            name: "s".into(),
            parents: vec![],
            demand: Resources::new(1000, 4),
            durations_ms: vec![1000; 20_000],
        }];
        perturb(&mut stages, 0.3, &mut rng);
        let mean = stages[0].durations_ms.iter().map(|&d| d as f64).sum::<f64>() / 20_000.0;
        assert!((mean - 1000.0).abs() < 15.0, "{mean}");
        assert!(stages[0].durations_ms.iter().all(|&d| d >= 1));
        assert!(stages[0].demand.memory_mb() > 0);
    }

    #[test]
    fn declarations_cover_the_largest_need_and_only_used_resources() {
        let job = |tasks: usize, ms: u32| JobTemplate {
            name: "j".into(),
            stages: vec![Stage {
                name: "s".into(),
                parents: vec![],
                demand: Resources::new(1024, 2),
                durations_ms: vec![ms; tasks],
            }],
            arrival_ms: None,
            queue: None,
        };
        let cap = Resources::new(1024 * 100, 200);
        let need = declaration(&[job(10, 1000), job(4, 3000)], DeclaredDemand::Need, 30.0, &cap);
        // 12 task-seconds at 1 GB / 2 vcores; nothing declared for the unused resources.
        assert_eq!((need[0], need[1]), (12.0 * 1024.0, 24.0));
        assert!(need[2..].iter().all(|&v| v == 0.0));
        // Peak rate: the widest stage (10 tasks) held for the ON period, capped at capacity.
        let peak = declaration(&[job(10, 1000)], DeclaredDemand::PeakRate, 30.0, &cap);
        assert_eq!((peak[0], peak[1]), (10.0 * 1024.0 * 30.0, 20.0 * 30.0));
        let wide = declaration(&[job(1000, 1000)], DeclaredDemand::PeakRate, 30.0, &cap);
        assert_eq!(wide[1], 200.0 * 30.0);
    }

    #[test]
    fn peak_scaling_fills_the_cluster() {
        let mut stages = vec![Stage {
            name: "s".into(),
            parents: vec![],
            demand: Resources::new(1024, 1),
            durations_ms: vec![5, 6],
        }];
        scale_to_peak(&mut stages, &Resources::new(1024 * 100, 1000), 1.0);
        assert_eq!(stages[0].tasks(), 100);
        assert_eq!(&stages[0].durations_ms[..4], &[5, 6, 5, 6]);
    }
}
