//! The event loop, and what the simulated NodeManagers and ApplicationMasters do at each event.
//!
//! Every call to the scheduler is made as the RM shim makes it.

use super::capture::Capture;
use super::config::{ClusterConfig, SimConfig};
use super::events::{EventKind, EventQueue};
use super::jobs::{copy_duration_ms, Containers, JobRt, RunningTask, Started};
use super::nodes::Nodes;
use super::output::{JobRecord, LqAdmission, RunOutput, RunStats};
use crate::hints::{HintWriter, ProgressEntry};
use crate::model::Job;
use crate::spec::ContainerReuse;
use anyhow::{anyhow, Context, Result};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::time::Instant;
use tidal_core::ids::AllocationId;
use tidal_core::ids::ANY;
use tidal_core::request::{normalize, Ask};
use tidal_core::status::SchedulerStatus;
use tidal_core::{Decision, DecisionKind, Resources, Scheduler};

pub struct Engine<'a> {
    sched: Scheduler,
    jobs: &'a [Job],
    cfg: &'a SimConfig,
    cluster: &'a ClusterConfig,
    events: EventQueue,
    nodes: Nodes,
    rt: Vec<Option<JobRt>>,
    containers: Containers,
    /// Jobs whose tasks ended since the last look at the straggler advice.
    watch: Vec<u32>,
    /// AMs run straggler copies and some queue has slot reservation: only then is there advice
    /// to follow and copy bookkeeping to keep.
    copies: bool,
    /// What a container whose task ended may run next. `None` while copies are run: the core
    /// judges stragglers by their container's age, which a reused container's would distort.
    reuse: ContainerReuse,
    decisions: Vec<Decision>,
    completed: Vec<AllocationId>,
    finished: usize,
    /// Jobs of `cfg.stop_after_class` not finished yet.
    stop_class_left: usize,
    capture: Capture,
    stats: RunStats,
    hints: HintWriter,
    progress: Vec<ProgressEntry>,
}

/// What a heartbeat of the node could hand out: its free space plus its reservation holds,
/// which their own app, or a queue of a higher priority, may use.
fn usable(sched: &Scheduler, node: u32) -> Resources {
    sched.state().node(node).map(|n| n.capacity.saturating_sub(&n.allocated)).unwrap_or_default()
}

/// The progress bar, shown once a run has taken more than two seconds.
struct ProgressDisplay {
    bar: ProgressBar,
    shown: bool,
}

impl ProgressDisplay {
    fn new(jobs: usize) -> ProgressDisplay {
        ProgressDisplay {
            bar: ProgressBar::with_draw_target(Some(jobs as u64), ProgressDrawTarget::hidden()),
            shown: false,
        }
    }

    fn update(&mut self, label: &str, wall: Instant, finished: usize, now: i64) {
        if !self.shown && wall.elapsed().as_secs_f64() > 2.0 {
            self.bar.set_draw_target(ProgressDrawTarget::stderr());
            self.bar.set_style(
                ProgressStyle::with_template("{prefix} [{elapsed_precise}] {bar:40} {pos}/{len} jobs, sim {msg}")
                    .expect("valid template"),
            );
            self.bar.set_prefix(label.to_string());
            self.shown = true;
        }
        if self.shown {
            self.bar.set_position(finished as u64);
            self.bar.set_message(format!("{:.0}s", now as f64 / 1000.0));
        }
    }
}

fn app_key(job: usize) -> u64 {
    job as u64 + 1
}

impl<'a> Engine<'a> {
    /// An engine over `sched`, which has the cluster's nodes and nothing else, with `jobs`
    /// queued for arrival.
    pub fn new(sched: Scheduler, jobs: &'a [Job], cfg: &'a SimConfig, cluster: &'a ClusterConfig) -> Engine<'a> {
        let t0 = jobs.iter().map(|j| j.arrival_ms).min().unwrap_or(0);
        let max_assign = sched.settings().max_assign_per_heartbeat as usize;
        let nodes = Nodes::new(cluster.machines, cluster.capacity, cfg.heartbeat_ms, cfg.idle_recheck_ms, max_assign);
        let fairness_window = cfg.fairness_over_jobs.then_some(cfg.fairness_window_ms);
        let copies = cfg.straggler_copies && sched.reserves_slots();
        let mut e = Engine {
            jobs,
            cfg,
            cluster,
            events: EventQueue::with_capacity(1 << 16),
            nodes,
            rt: (0..jobs.len()).map(|_| None).collect(),
            containers: Containers::new(),
            watch: Vec::new(),
            copies,
            reuse: if copies { ContainerReuse::None } else { cfg.container_reuse },
            decisions: Vec::with_capacity(64),
            completed: Vec::with_capacity(64),
            finished: 0,
            stop_class_left: jobs.iter().filter(|j| cfg.stop_after_class.as_ref() == Some(&j.class)).count(),
            capture: Capture::new(sched.queue_file().queues.len(), cfg.sample_ms, t0, fairness_window),
            stats: RunStats::default(),
            hints: HintWriter::default(),
            progress: Vec::new(),
            sched,
        };
        for (i, j) in jobs.iter().enumerate() {
            e.events.push(j.arrival_ms + cfg.submit_latency_ms, EventKind::Arrival { job: i as u32 });
        }
        e.events.push(t0, EventKind::Sample);
        e
    }

    /// Runs events until every job (or every job of the stop class) has finished.
    pub fn run(mut self, wall: Instant) -> Result<RunOutput> {
        let mut display = ProgressDisplay::new(self.jobs.len());
        let mut now = self.jobs.iter().map(|j| j.arrival_ms).min().unwrap_or(0);
        while self.finished < self.jobs.len() && (self.cfg.stop_after_class.is_none() || self.stop_class_left > 0) {
            let Some(ev) = self.events.pop() else {
                return Err(self.stuck_error(now));
            };
            now = ev.time;
            self.stats.events += 1;
            match ev.kind {
                EventKind::TaskEnd { node, alloc } => self.on_task_end(node, alloc, now)?,
                EventKind::Arrival { job } => self.on_arrival(job as usize, now)?,
                EventKind::AmReady { job } => self.on_am_ready(job as usize, now)?,
                EventKind::Heartbeat { node } => self.on_heartbeat(node, now)?,
                EventKind::Sample => {
                    self.capture.sample(now, &self.sched);
                    if !self.events.has_live() && self.containers.is_empty() && self.nodes.stalled() {
                        return Err(self.stuck_error(now));
                    }
                    self.events.push(now + self.cfg.sample_ms, EventKind::Sample);
                }
                EventKind::Recheck => {
                    let quiet = !self.events.has_live() && self.containers.is_empty();
                    if self.nodes.recheck(now, quiet, &mut self.events) {
                        return Err(self.stuck_error(now));
                    }
                }
            }
            if self.stats.events & 0x3fff == 0 && self.cfg.progress {
                display.update(&self.cfg.label, wall, self.finished, now);
            }
        }
        display.bar.finish_and_clear();
        Ok(self.output(now, wall))
    }

    /// Sets the job's outstanding ask at `priority` to `total` containers (YARN asks are
    /// totals), `before` of which were outstanding.
    fn ask(&mut self, job: usize, priority: i32, total: u32, before: u32, cap: Resources, now: i64) -> Result<()> {
        let key = app_key(job);
        let ask = Ask { priority, location: ANY, num_containers: total as i64, relax_locality: true, capability: cap };
        self.sched.update_asks(key, &[ask], &[], &[]).with_context(|| format!("job '{}'", self.jobs[job].name))?;
        let norm = normalize(key, cap, self.sched.settings())?;
        if total <= before {
            for _ in total..before {
                self.nodes.take_pending(&norm);
            }
        } else {
            self.nodes.add_pending(&norm, (total - before) as u64, now, &mut self.events);
        }
        Ok(())
    }

    fn ask_stage(&mut self, job: usize, stage: usize, now: i64) -> Result<()> {
        let s = &self.jobs[job].stages[stage];
        self.ask(job, stage as i32 + 1, s.tasks() as u32, 0, s.demand, now)
    }

    fn on_heartbeat(&mut self, n: u32, now: i64) -> Result<()> {
        self.stats.heartbeat_events += 1;
        let beat = self.nodes.begin_heartbeat(n, now, &mut self.completed);
        let mut made = 0;
        if beat.matters {
            self.decisions.clear();
            made = self.sched.node_heartbeat(n, now, &self.completed, &mut self.decisions, usize::MAX)?;
            self.completed.clear();
            self.stats.core_heartbeats += 1;
            self.nodes.set_usable(n, usable(&self.sched, n));
            for i in 0..self.decisions.len() {
                let d = self.decisions[i];
                self.on_decision(n, d, now)?;
            }
            if !self.watch.is_empty() {
                self.follow_straggler_advice(now)?;
            }
        }
        self.nodes.end_heartbeat(n, now, beat, made, &mut self.events);
        Ok(())
    }

    /// A container the scheduler started on node `n`: the job's AM, a task, or a task's copy.
    fn on_decision(&mut self, n: u32, d: Decision, now: i64) -> Result<()> {
        if d.kind != DecisionKind::Start {
            // The simulated schedulers reserve no nodes (the settings leave it off).
            return Err(anyhow!("unexpected reservation decision for job {}", d.app));
        }
        let job = (d.app - 1) as usize;
        self.nodes.take_pending(&d.resources);
        self.stats.containers += 1;
        let overhead = self.cfg.container_overhead_ms;
        let rt = self.rt[job].as_mut().ok_or_else(|| anyhow!("container for finished job {}", d.app))?;
        if rt.start_ms < 0 {
            rt.start_ms = now;
        }
        if d.priority == 0 {
            rt.am = Some((d.allocation_id, n, now));
            self.events.push(now + self.cfg.am_overhead_ms, EventKind::AmReady { job: job as u32 });
            return Ok(());
        }
        let stage = (d.priority - 1) as usize;
        let durations = &self.jobs[job].stages[stage].durations_ms;
        let started = rt.start(stage, durations.len(), d.allocation_id, now, self.copies).ok_or_else(|| {
            anyhow!("job '{}' stage {stage}: a container beyond its tasks with no task to copy", self.jobs[job].name)
        })?;
        let (drawn, copy_of) = match started {
            Started::Task(i) => (durations[i], None),
            Started::CopyOf(of) => (copy_duration_ms(durations, d.allocation_id, job), Some(of)),
        };
        let dur = drawn as i64 + overhead;
        let task = RunningTask {
            job: job as u32,
            stage: stage as u16,
            container_stage: stage as u16,
            copy: copy_of.is_some(),
            node: n,
            start: now,
            end: now + dur,
        };
        self.launch(d.allocation_id, task, &d.resources);
        if let Some(of) = copy_of {
            self.containers.pair(of, d.allocation_id);
            self.stats.copies += 1;
            return Ok(());
        }
        self.send_progress(job, now, false)
    }

    /// Runs `task` in container `alloc`, of `size`, until the task's end.
    fn launch(&mut self, alloc: AllocationId, task: RunningTask, size: &Resources) {
        self.capture.allocate(size, task.end - task.start);
        self.containers.start(alloc, task);
        self.events.push(task.end, EventKind::TaskEnd { node: task.node, alloc });
    }

    /// The AM runs its job's next task in container `alloc`, whose task `t` just ended, or
    /// releases the container. One with nothing runnable right now is released at once rather
    /// than held for a later stage: the RM's view stays exact and no idle space is kept from
    /// other jobs.
    fn reuse_or_release(&mut self, alloc: AllocationId, t: &RunningTask, now: i64) -> Result<()> {
        let size = self.sched.state().allocations.get(&alloc).map(|a| a.resources);
        let size = size.ok_or_else(|| anyhow!("container {alloc} is unknown to the scheduler"))?;
        let Some(stage) = self.next_stage(t, &size) else {
            self.nodes.complete(t.node, alloc, now, &mut self.events);
            return Ok(());
        };
        let job = t.job as usize;
        let st = &self.jobs[job].stages[stage];
        let rt = self.rt[job].as_mut().expect("running job");
        // YARN asks are totals: the stage's tasks not started yet, one fewer now.
        let outstanding = (st.tasks() - rt.started[stage] as usize) as u32;
        let dur = st.durations_ms[rt.start_task(stage, now)] as i64;
        self.ask(job, stage as i32 + 1, outstanding - 1, outstanding, st.demand, now)?;
        self.launch(alloc, RunningTask { stage: stage as u16, start: now, end: now + dur, ..*t }, &size);
        Ok(())
    }

    /// The stage whose next task a container of `size` runs after task `t`: the same stage
    /// while it has tasks not started, else (`dag` reuse) the job's runnable stage of the
    /// lowest priority number that has such tasks and whose demand fits in the container.
    fn next_stage(&self, t: &RunningTask, size: &Resources) -> Option<usize> {
        let stages = &self.jobs[t.job as usize].stages;
        let rt = self.rt[t.job as usize].as_ref()?;
        let unstarted = |s: usize| (rt.started[s] as usize) < stages[s].tasks();
        if unstarted(t.stage as usize) {
            return Some(t.stage as usize);
        }
        if self.reuse != ContainerReuse::Dag {
            return None;
        }
        (0..stages.len()).find(|&s| rt.parents_left[s] == 0 && unstarted(s) && stages[s].demand.fits_in(size))
    }

    /// The AMs of the watched jobs read the straggler advice (what their next hints reply
    /// carries) and ask for one copy per advised task of a stage that has started all its
    /// tasks.
    fn follow_straggler_advice(&mut self, now: i64) -> Result<()> {
        let mut watch = std::mem::take(&mut self.watch);
        for &job in &watch {
            let job = job as usize;
            let Some(rt) = self.rt[job].as_mut() else { continue };
            rt.watched = false;
            if self.sched.hold_count() == 0 {
                continue;
            }
            for advice in self.sched.straggler_candidates(app_key(job)) {
                let stages = self.jobs[job].stages.len();
                let Some(stage) = advice.priority.and_then(|p| usize::try_from(p - 1).ok()).filter(|&s| s < stages)
                else {
                    continue;
                };
                let rt = self.rt[job].as_ref().expect("running job");
                let st = &self.jobs[job].stages[stage];
                if (rt.started[stage] as usize) < st.tasks() {
                    continue;
                }
                let wanted = advice.containers.iter().filter(|c| rt.copyless[stage].contains(c)).count() as u32;
                let before = rt.copy_asks[stage];
                let total = before.max(wanted).min(rt.copyless[stage].len() as u32);
                if total != before {
                    self.rt[job].as_mut().expect("running job").copy_asks[stage] = total;
                    self.ask(job, stage as i32 + 1, total, before, st.demand, now)?;
                }
            }
        }
        // Hand the buffer back for the next round.
        watch.clear();
        self.watch = watch;
        Ok(())
    }

    /// Kills the loser of a race: the AM releases its container.
    fn kill(&mut self, alloc: AllocationId, now: i64) -> Result<RunningTask> {
        let t = self.containers.kill(alloc).ok_or_else(|| anyhow!("unknown allocation {alloc} to kill"))?;
        let resources = self.sched.state().allocations.get(&alloc).map(|a| a.resources).unwrap_or_default();
        self.capture.allocate(&resources, -(t.end - now));
        self.sched.release(alloc);
        self.nodes.set_usable(t.node, usable(&self.sched, t.node));
        if self.nodes.fits_pending(t.node) {
            self.nodes.wake(t.node, now, &mut self.events);
        }
        Ok(t)
    }

    /// The AM's DAG hints, sent once it has registered and asked for its first stages.
    fn send_dag(&mut self, job: usize) -> Result<()> {
        if !self.cfg.hints {
            return Ok(());
        }
        let j = &self.jobs[job];
        let doc = self.hints.dag(&j.estimate)?;
        self.stats.hint_documents += 1;
        self.sched
            .set_hints(app_key(job), doc)
            .map_err(|e| anyhow!("job '{}': the scheduler refused the DAG hints its AM sent: {e}", j.name))?;
        Ok(())
    }

    /// Progress of the stages whose counts changed since the last report, and of stages with
    /// running tasks (their elapsed time moves). Unforced reports are rate-limited per job.
    fn send_progress(&mut self, job: usize, now: i64, force: bool) -> Result<()> {
        if !self.cfg.hints {
            return Ok(());
        }
        let rt = self.rt[job].as_mut().expect("running job");
        if !force && now - rt.last_progress_ms < self.cfg.hint_progress_interval_ms {
            return Ok(());
        }
        self.progress.clear();
        for s in 0..rt.started.len() {
            let (finished, running) = (rt.done[s], rt.started[s] - rt.done[s]);
            if (finished, running) == rt.reported[s] && running == 0 {
                continue;
            }
            rt.reported[s] = (finished, running);
            let elapsed = if running > 0 { (now - rt.run_start_sum[s] / running as i64).max(0) } else { 0 };
            self.progress.push(ProgressEntry { stage: s, finished, running, running_elapsed_ms: elapsed as u64 });
        }
        rt.last_progress_ms = now;
        if self.progress.is_empty() {
            return Ok(());
        }
        let j = &self.jobs[job];
        let doc = self.hints.progress(&j.estimate, &self.progress)?;
        self.stats.hint_documents += 1;
        self.sched
            .set_hints(app_key(job), doc)
            .map_err(|e| anyhow!("job '{}': the scheduler refused the progress hints its AM sent: {e}", j.name))?;
        Ok(())
    }

    fn on_arrival(&mut self, job: usize, now: i64) -> Result<()> {
        let j = &self.jobs[job];
        self.rt[job] = Some(JobRt::new(j, self.copies, now));
        self.sched
            .add_app(app_key(job), &j.queue, &j.user)
            .with_context(|| format!("submitting job '{}' to queue '{}'", j.name, j.queue))?;
        match self.cfg.am {
            Some(am) => self.ask(job, 0, 1, 0, am, now),
            None => self.on_am_ready(job, now),
        }
    }

    fn on_am_ready(&mut self, job: usize, now: i64) -> Result<()> {
        let jobs = self.jobs;
        for (s, _) in jobs[job].stages.iter().enumerate().filter(|(_, s)| s.parents.is_empty()) {
            self.ask_stage(job, s, now)?;
        }
        self.send_dag(job)
    }

    fn on_task_end(&mut self, n: u32, alloc: AllocationId, now: i64) -> Result<()> {
        if self.containers.was_killed(alloc) {
            return Ok(());
        }
        let t = self.containers.finish(alloc).ok_or_else(|| anyhow!("unknown allocation {alloc}"))?;
        // A container the AM may reuse is released below, once the job's state says whether
        // it has a task to run next.
        let reusable = self.reuse != ContainerReuse::None;
        if !reusable {
            self.nodes.complete(n, alloc, now, &mut self.events);
        }
        let (job, stage) = (t.job as usize, t.stage as usize);
        // The first of a task and its copy to finish wins; the AM kills the other.
        let mut started = t.start;
        if let Some(other) = self.containers.take_twin(alloc) {
            let loser = self.kill(other, now)?;
            if t.copy {
                started = loser.start;
                self.stats.copies_won += 1;
            }
        }
        let jobs = self.jobs;
        let st = &jobs[job].stages[stage];
        let tasks = st.tasks() as u32;
        let rt = self.rt[job].as_mut().expect("running job");
        rt.done[stage] += 1;
        rt.run_start_sum[stage] -= started;
        if self.copies {
            if !t.copy && rt.copyless[stage].remove(&alloc) && rt.copy_asks[stage] as usize > rt.copyless[stage].len() {
                // A task the AM asked a copy for finished first: withdraw the ask.
                let (before, total) = (rt.copy_asks[stage], rt.copyless[stage].len() as u32);
                rt.copy_asks[stage] = total;
                self.ask(job, stage as i32 + 1, total, before, st.demand, now)?;
            }
            let rt = self.rt[job].as_mut().expect("running job");
            if !rt.watched && rt.done[stage] < tasks {
                rt.watched = true;
                self.watch.push(job as u32);
            }
        }
        let rt = self.rt[job].as_mut().expect("running job");
        let stage_done = rt.done[stage] == tasks;
        if stage_done {
            rt.stages_left -= 1;
            for &c in jobs[job].estimate.children(stage) {
                let rt = self.rt[job].as_mut().expect("running job");
                rt.parents_left[c] -= 1;
                if rt.parents_left[c] == 0 {
                    self.ask_stage(job, c, now)?;
                }
            }
        }
        if reusable {
            self.reuse_or_release(alloc, &t, now)?;
        }
        if self.rt[job].as_ref().expect("running job").stages_left == 0 {
            self.finish_job(job, now)
        } else {
            self.send_progress(job, now, stage_done)
        }
    }

    fn finish_job(&mut self, job: usize, now: i64) -> Result<()> {
        let rt = self.rt[job].as_mut().expect("running job");
        rt.finish_ms = now;
        let am = rt.am;
        // The AM unregisters: the RM removes the app and frees what it still holds.
        self.sched.remove_app(app_key(job))?;
        if let (Some((_, node, since)), Some(res)) = (am, self.cfg.am) {
            self.capture.allocate(&res, now - since);
            self.nodes.set_usable(node, usable(&self.sched, node));
            if self.nodes.fits_pending(node) {
                self.nodes.wake(node, now, &mut self.events);
            } else {
                self.nodes.park(node);
            }
        }
        self.finished += 1;
        if self.cfg.stop_after_class.as_ref() == Some(&self.jobs[job].class) {
            self.stop_class_left -= 1;
        }
        Ok(())
    }

    fn stuck_error(&self, now: i64) -> anyhow::Error {
        let waiting: Vec<&str> = self
            .rt
            .iter()
            .enumerate()
            .filter(|(_, r)| r.as_ref().is_some_and(|r| r.finish_ms < 0))
            .map(|(i, _)| self.jobs[i].name.as_str())
            .take(5)
            .collect();
        anyhow!(
            "simulation stuck at t={:.1}s: {} pending containers can never be placed and nothing running can free space \
             ({} of {} jobs unfinished, e.g. {}). A demand may exceed every node's free space, or AM containers fill the cluster.",
            now as f64 / 1000.0,
            self.nodes.pending_total(),
            self.jobs.len() - self.finished,
            self.jobs.len(),
            waiting.join(", ")
        )
    }

    /// The run's results once the loop stopped at `now`.
    fn output(mut self, now: i64, wall: Instant) -> RunOutput {
        let jobs = self.jobs;
        let job_fairness = self.capture.job_fairness();
        let policy = match self.sched.app_policy_name() {
            "fifo" => self.sched.policy_name().to_string(),
            app => format!("{}/{app}", self.sched.policy_name()),
        };
        // A run stopped early: time allocated to tasks still running counts only up to now.
        for t in self.containers.running() {
            let demand = jobs[t.job as usize].stages[t.container_stage as usize].demand;
            self.capture.allocate(&demand, -(t.end - now).max(0));
        }
        let status = SchedulerStatus::of(&self.sched);
        let status_json = status.to_json();
        let lq_admission = status
            .queues
            .into_iter()
            .filter(|q| q.kind == "lq")
            .map(|q| LqAdmission {
                class: q.class.to_string(),
                reason: q.admission_reason,
                bursts_started: q.burst.as_ref().map_or(0, |b| b.bursts_started),
                bursts_met_deadline: q.burst.as_ref().map_or(0, |b| b.bursts_met_deadline),
                queue: q.name,
            })
            .collect();
        let records = jobs
            .iter()
            .zip(self.rt.iter())
            .filter_map(|(j, r)| r.as_ref().filter(|r| r.finish_ms >= 0).map(|r| (j, r)))
            .map(|(j, r)| JobRecord {
                name: j.name.clone(),
                queue: j.queue.clone(),
                class: j.class.clone(),
                arrival_ms: j.arrival_ms,
                start_ms: r.start_ms,
                finish_ms: r.finish_ms,
                deadline_ms: j.deadline_ms,
                tasks: j.stages.iter().map(|s| s.tasks() as u64).sum(),
            })
            .collect();
        let queues = self.sched.queue_file().queues.iter();
        self.stats.wall_s = wall.elapsed().as_secs_f64();
        RunOutput {
            label: self.cfg.label.clone(),
            policy,
            jobs: records,
            queues: queues.clone().map(|q| q.name.clone()).collect(),
            weights: queues.map(|q| q.weight).collect(),
            samples: self.capture.samples,
            allocated: self.capture.allocated,
            held: self.capture.held,
            capacity: self.cluster.capacity,
            machines: self.cluster.machines,
            stats: self.stats,
            job_fairness,
            unfinished: jobs.len() - self.finished,
            lq_admission,
            app_policy: self.sched.app_policy_view(),
            status_json,
            history_json: self.sched.history_json(i64::MIN),
        }
    }
}
