//! Speculative slot reservation: when a task of a high-priority DAG app finishes and
//! its stage has a downstream stage, the slot is held for the app instead of being offered to
//! lower priorities at the barrier. Pure logic: a [`StageReservation`] per (app, stage) takes
//! task starts and finishes and answers with actions for the scheduler (hold this slot until
//! the deadline, release it, pre-reserve `k` more), and says when the idle held slots may run
//! copies of stragglers.
//!
//! The reservation deadline comes from a target isolation probability `P` by Eq. (2), with the
//! Pareto parameters of the stage's task durations estimated from its tasks so far; Eq. (4)
//! bounds the expected utilization that deadline costs.

use crate::ids::NodeId;
use crate::resource::Resources;
use thiserror::Error;

/// A container of a stage's task, as the caller names it (for example its allocation id); ids
/// grow with time, so the smallest is the oldest.
pub type TaskId = u64;

/// Where a stage keeps a running task: returned when the task starts and passed back when any
/// of its containers ends, so an end costs no lookup by id. An entry is reused only once the
/// task and every copy of it have ended.
pub type TaskEntry = u32;

/// Where a running container of a reserving app counts: its stage and its entry there (the
/// task, its straggler copy or the loser of their race). Kept in the container's
/// allocation, so that its end reaches the stage without a lookup.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct StageTask {
    pub stage: u32,
    pub entry: TaskEntry,
}

#[derive(Debug, Error, Clone, PartialEq)]
pub enum ReservationError {
    #[error("slot reservation setting {field} = {value} is out of range: expected {expected}")]
    InvalidSetting { field: &'static str, value: f64, expected: &'static str },
    #[error("container {0} is not running in the stage")]
    UnknownTask(TaskId),
}

type Result<T> = std::result::Result<T, ReservationError>;

fn check(field: &'static str, value: f64, ok: bool, expected: &'static str) -> Result<()> {
    if ok {
        Ok(())
    } else {
        Err(ReservationError::InvalidSetting { field, value, expected })
    }
}

/// Pareto task durations, Eq. (1): `F(t) = 1 - (t_m / t)^α` for `t >= t_m`.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Pareto {
    /// α; a smaller shape is a heavier tail.
    pub shape: f64,
    /// t_m, the shortest duration.
    pub scale: f64,
}

/// Fitted shapes are kept above this: Eq. (3)-(4) need α > 1 (a finite mean), and a sample
/// that suggests α ≤ 1 is better read as "very heavy tail" than as "no mean".
pub const MIN_SHAPE: f64 = 1.05;

impl Pareto {
    pub fn new(shape: f64, scale: f64) -> Result<Pareto> {
        check("pareto-shape", shape, shape.is_finite() && shape > 0.0, "a positive finite number")?;
        check("pareto-scale", scale, scale.is_finite() && scale > 0.0, "a positive finite number of seconds")?;
        Ok(Pareto { shape, scale })
    }

    pub fn cdf(&self, t: f64) -> f64 {
        if t < self.scale {
            0.0
        } else {
            1.0 - (self.scale / t).powf(self.shape)
        }
    }

    /// Maximum-likelihood fit from finished durations and the elapsed times of tasks still
    /// running (right-censored: they will take at least that long). `t_m` is the shortest
    /// finished duration, as the paper suggests; then
    /// `α = k / (Σ_finished ln(x/t_m) + Σ_running ln(max(c, t_m)/t_m))`.
    /// Counting the running tasks matters early in a phase, when only the fast tasks have
    /// finished and a fit from them alone would see no tail at all. Returns `None` until the
    /// data pin the shape down (no finished task, or no spread yet).
    pub fn fit(finished: &[f64], running_elapsed: &[f64]) -> Option<Pareto> {
        let mut stats = DurationStats::default();
        finished.iter().for_each(|&x| stats.add(x));
        stats.fit(running_elapsed.iter().copied())
    }

    /// Eq. (2): the probability that all `n` tasks of the phase finish by `d`.
    pub fn isolation_probability(&self, d: f64, n: u32) -> f64 {
        self.cdf(d).powi(n as i32)
    }

    /// Eq. (2) solved for the deadline: `D = t_m (1 - P^{1/N})^{-1/α}`, relative to the phase
    /// start. `P = 1` gives an infinite deadline (hold until the next phase starts), `P = 0`
    /// gives `t_m` (release at once).
    pub fn deadline(&self, p: f64, n: u32) -> Result<f64> {
        check_probability(p)?;
        check("tasks", n as f64, n >= 1, "at least one task")?;
        let tail = 1.0 - p.powf(1.0 / n as f64);
        Ok(if tail <= 0.0 { f64::INFINITY } else { self.scale * tail.powf(-1.0 / self.shape) })
    }

    /// Eq. (3): the lower bound of the expected utilization when every slot is held until `d`:
    /// `α/(α-1) (t_m/D) - 1/(α-1) (t_m/D)^α`.
    pub fn utilization_at(&self, d: f64) -> f64 {
        let a = self.shape;
        let x = (self.scale / d).min(1.0);
        a / (a - 1.0) * x - x.powf(a) / (a - 1.0)
    }

    /// Eq. (4): the lower bound of the expected utilization at isolation probability `p` for a
    /// phase of `n` tasks: `α/(α-1) (1-P^{1/N})^{1/α} - 1/(α-1) (1-P^{1/N})`. Needs α > 1.
    pub fn utilization_bound(&self, p: f64, n: u32) -> Result<f64> {
        check_probability(p)?;
        check("tasks", n as f64, n >= 1, "at least one task")?;
        check("pareto-shape", self.shape, self.shape > 1.0, "greater than 1 for a finite mean")?;
        let a = self.shape;
        let tail = 1.0 - p.powf(1.0 / n as f64);
        Ok(a / (a - 1.0) * tail.powf(1.0 / a) - tail / (a - 1.0))
    }
}

fn check_probability(p: f64) -> Result<()> {
    check("isolation-probability", p, (0.0..=1.0).contains(&p), "a probability in [0, 1]")
}

/// Knobs of slot reservation.
#[derive(Copy, Clone, Debug, PartialEq, serde::Serialize)]
pub struct ReservationSettings {
    /// P: the target probability that a phase transition keeps all its slots.
    pub isolation_probability: f64,
    /// R: the finished fraction of the current phase after which the extra `n - m` slots of a
    /// wider next phase are pre-reserved.
    pub prereserve_threshold: f64,
    /// Pareto shape assumed until the stage's own tasks give a fit.
    pub prior_shape: f64,
    /// Finished tasks needed before the stage's own fit replaces the prior.
    pub min_samples: u32,
}

impl Default for ReservationSettings {
    fn default() -> Self {
        // P = 0.4 is where the paper's measured isolation/utilization trade-off has its sweet
        // spot; α = 1.6 is its "typical production" tail. The paper gives no default for R; 0.5
        // starts pre-reserving half way through the phase.
        ReservationSettings { isolation_probability: 0.4, prereserve_threshold: 0.5, prior_shape: 1.6, min_samples: 2 }
    }
}

impl ReservationSettings {
    pub fn validate(&self) -> Result<()> {
        check_probability(self.isolation_probability)?;
        let r = self.prereserve_threshold;
        check("prereserve-threshold", r, r > 0.0 && r <= 1.0, "a fraction in (0, 1]")?;
        let a = self.prior_shape;
        check("prior-shape", a, a.is_finite() && a > 1.0, "a finite number greater than 1")?;
        check("min-samples", self.min_samples as f64, self.min_samples >= 1, "at least 1")
    }
}

/// A unit of resources on a node that a task ran in.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Slot {
    pub node: NodeId,
    pub resources: Resources,
}

/// What to do with a slot that just became idle.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum SlotAction {
    /// Keep it for the app (at the app's priority) until `until` (absolute seconds; infinite
    /// when the isolation target is 1).
    Hold { slot: Slot, until: f64 },
    /// Give it back to the cluster.
    Release { slot: Slot },
}

/// Ask for `count` more slots for the downstream phase and hold them until `until`.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct PreReserve {
    pub count: u32,
    pub until: f64,
}

/// The scheduler's to-do list after a task finished.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Completion {
    /// For the slot the finished task (or its winning copy) ran in.
    pub slot: SlotAction,
    /// When a copy raced the task: the container that lost and the slot it still runs in. Its
    /// AM kills it; its end, reported like any other, frees the slot to Algorithm 1.
    pub loser: Option<(TaskId, Slot)>,
    pub pre_reserve: Option<PreReserve>,
}

/// What the end of one of a task's containers meant to the stage.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Ended {
    /// The first of the task's containers to finish: the task is complete.
    Completed(Completion),
    /// The loser of a race left: Algorithm 1's decision about its slot.
    Freed(SlotAction),
    /// A container ended without finishing (its node or container was lost): no duration
    /// enters the fit; a running copy of a lost task takes its place.
    Lost,
}

#[derive(Copy, Clone, Debug)]
struct Running {
    start: f64,
    task: TaskId,
    slot: Slot,
    copy: Option<(TaskId, Slot)>,
}

/// A slot of the stage's task slab.
#[derive(Copy, Clone, Debug)]
enum Entry {
    Running(Running),
    /// The task is complete; the race's loser, this container, still runs.
    Loser(TaskId, Slot),
    Vacant,
}

/// How the next phase's width compares with this one's (Algorithm 1).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Transition {
    /// The last phase: every slot is released.
    Final,
    /// Width unknown or equal (m = n): every slot is held.
    Same,
    /// Narrower (m > n): the first `m - n` idle slots are released, the rest held.
    Narrower { release: u32 },
    /// Wider (m < n): every slot is held, and `n - m` more are pre-reserved past threshold R.
    Wider { extra: u32 },
}

/// Running sums of finished task durations for the Pareto maximum-likelihood fit, so that a
/// refit reads only the running tasks: `Σ ln(x_i / t_m) = Σ ln x_i − k ln t_m`.
#[derive(Clone, Copy, Debug, Default)]
struct DurationStats {
    /// Finished tasks with a positive, finite duration (the others carry no information).
    count: u32,
    sum_ln: f64,
    /// The smallest such duration, the estimate of `t_m`.
    min: f64,
}

impl DurationStats {
    fn add(&mut self, x: f64) {
        if x.is_finite() && x > 0.0 {
            self.min = if self.count == 0 { x } else { self.min.min(x) };
            self.count += 1;
            self.sum_ln += x.ln();
        }
    }

    /// The fit counting tasks still running for `elapsed` as censored at that time.
    fn fit(&self, running_elapsed: impl Iterator<Item = f64>) -> Option<Pareto> {
        if self.count == 0 {
            return None;
        }
        let scale = self.min;
        let censored: f64 =
            running_elapsed.filter(|c| c.is_finite() && *c > 0.0).map(|c| (c / scale).ln().max(0.0)).sum();
        let spread = self.sum_ln - self.count as f64 * scale.ln() + censored;
        // Rounding can leave a hair above zero when every duration is equal.
        if spread <= 1e-12 * self.count as f64 {
            return None;
        }
        Some(Pareto { shape: (self.count as f64 / spread).max(MIN_SHAPE), scale })
    }
}

/// Slot reservation state of one stage (phase) of one app.
#[derive(Clone, Debug)]
pub struct StageReservation {
    settings: ReservationSettings,
    tasks: u32,
    transition: Transition,
    phase_start: Option<f64>,
    /// Tasks by [`TaskEntry`], with the vacant entries to reuse and the count of running ones.
    entries: Vec<Entry>,
    vacant: Vec<TaskEntry>,
    running: usize,
    /// Finished tasks, and the sums the fit needs.
    finished: usize,
    stats: DurationStats,
    released: u32,
    pre_reserved: bool,
    /// Reserved slots with nothing running, in the order they became idle.
    idle: Vec<Slot>,
    fit: Pareto,
    fitted_at: usize,
    /// Finished count at the last fit attempt, successful or not.
    tried_at: usize,
    /// Deadline relative to the phase start.
    deadline_rel: f64,
}

impl StageReservation {
    /// A stage of `tasks` tasks (m) whose downstream stage has `next_tasks` tasks (n; `None`
    /// when unknown), or which is the last stage when `is_final`.
    pub fn new(
        settings: ReservationSettings,
        tasks: u32,
        next_tasks: Option<u32>,
        is_final: bool,
    ) -> Result<StageReservation> {
        settings.validate()?;
        check("tasks", tasks as f64, tasks >= 1, "at least one task")?;
        let transition = match (is_final, next_tasks) {
            (true, _) => Transition::Final,
            (false, None) => Transition::Same,
            (false, Some(n)) if n == tasks => Transition::Same,
            (false, Some(n)) if n < tasks => Transition::Narrower { release: tasks - n },
            (false, Some(n)) => Transition::Wider { extra: n - tasks },
        };
        // The prior's scale is unknown until a task finishes; 1 s keeps the numbers finite and
        // is replaced by the first finished duration.
        let fit = Pareto::new(settings.prior_shape, 1.0)?;
        let mut s = StageReservation {
            settings,
            tasks,
            transition,
            phase_start: None,
            entries: Vec::new(),
            vacant: Vec::new(),
            running: 0,
            finished: 0,
            stats: DurationStats::default(),
            released: 0,
            pre_reserved: false,
            idle: Vec::new(),
            fit,
            fitted_at: 0,
            tried_at: 0,
            deadline_rel: f64::INFINITY,
        };
        s.deadline_rel = s.fit.deadline(settings.isolation_probability, tasks)?;
        Ok(s)
    }

    pub fn transition(&self) -> Transition {
        self.transition
    }

    /// The Pareto parameters in use (the prior until enough tasks finished).
    pub fn pareto(&self) -> Pareto {
        self.fit
    }

    /// Absolute time at which held slots expire, once the phase has started.
    pub fn deadline(&self) -> Option<f64> {
        self.phase_start.map(|s| s + self.deadline_rel)
    }

    /// Eq. (4) for this stage with the current fit: the utilization its reservations are
    /// expected to keep at least.
    pub fn utilization_bound(&self) -> f64 {
        self.fit.utilization_bound(self.settings.isolation_probability, self.tasks).unwrap_or(0.0)
    }

    pub fn finished_tasks(&self) -> usize {
        self.finished
    }

    pub fn running_tasks(&self) -> usize {
        self.running
    }

    /// Tasks of the stage not started yet (a lost task counts again until it restarts).
    pub fn unstarted_tasks(&self) -> usize {
        (self.tasks as usize).saturating_sub(self.finished + self.running)
    }

    fn running_iter(&self) -> impl Iterator<Item = (TaskEntry, &Running)> {
        self.entries.iter().enumerate().filter_map(|(i, e)| match e {
            Entry::Running(r) => Some((i as TaskEntry, r)),
            _ => None,
        })
    }

    pub fn finished_fraction(&self) -> f64 {
        self.finished as f64 / self.tasks as f64
    }

    /// Reserved slots that are idle.
    pub fn idle_slots(&self) -> &[Slot] {
        &self.idle
    }

    /// Container `task` started a task of the stage in `slot` at `now`.
    pub fn task_started(&mut self, task: TaskId, slot: Slot, now: f64) -> TaskEntry {
        self.phase_start = Some(self.phase_start.map_or(now, |s| s.min(now)));
        self.running += 1;
        let run = Entry::Running(Running { start: now, task, slot, copy: None });
        match self.vacant.pop() {
            Some(e) => {
                self.entries[e as usize] = run;
                e
            }
            None => {
                self.entries.push(run);
                // Entries never outnumber the tasks running at once.
                (self.entries.len() - 1) as TaskEntry
            }
        }
    }

    fn vacate(&mut self, entry: TaskEntry) {
        self.entries[entry as usize] = Entry::Vacant;
        self.vacant.push(entry);
    }

    /// Refits the Pareto parameters when the finished count has grown by an eighth since the
    /// last fit: each fit reads every running task, so this keeps the cost per completion
    /// amortised O(1) while the estimate follows the phase.
    fn maybe_refit(&mut self, now: f64) {
        let k = self.finished;
        // Attempts back off like fits do: durations without spread (no fit) must not make
        // every completion rescan the stage.
        if k < self.settings.min_samples as usize
            || (self.tried_at > 0 && k < self.tried_at + (self.tried_at / 8).max(1))
        {
            return;
        }
        self.tried_at = k;
        if let Some(fit) = self.stats.fit(self.running_iter().map(|(_, r)| now - r.start)) {
            self.fit = fit;
            self.fitted_at = k;
        }
    }

    /// Algorithm 1's decision for one slot that became idle.
    fn decide(&mut self, slot: Slot) -> SlotAction {
        let until = self.deadline().unwrap_or(f64::INFINITY);
        let hold = match self.transition {
            Transition::Final => false,
            Transition::Same | Transition::Wider { .. } => true,
            Transition::Narrower { release } => {
                if self.released < release {
                    self.released += 1;
                    false
                } else {
                    true
                }
            }
        };
        if hold {
            self.idle.push(slot);
            SlotAction::Hold { slot, until }
        } else {
            SlotAction::Release { slot }
        }
    }

    /// One of the containers of the task at `entry` ended: `finished` when it completed, not
    /// when it was lost with its node. Of a task and its straggler copy, the first to finish
    /// completes the task and the other becomes the loser, whatever order the ends are reported
    /// in; the loser's end then frees its slot. A lost task hands over to its running copy.
    /// A container the entry does not hold (the entry was reused, or the id is wrong) is an
    /// [`ReservationError::UnknownTask`] and changes nothing.
    pub fn container_ended(&mut self, entry: TaskEntry, container: TaskId, finished: bool, now: f64) -> Result<Ended> {
        let Some(&e) = self.entries.get(entry as usize) else { return Err(ReservationError::UnknownTask(container)) };
        match e {
            Entry::Loser(id, slot) if id == container => {
                self.vacate(entry);
                Ok(if finished { Ended::Freed(self.decide(slot)) } else { Ended::Lost })
            }
            Entry::Running(run) if run.task == container => {
                if finished {
                    return self.complete(entry, run.slot, run.copy, run.start, now).map(Ended::Completed);
                }
                match run.copy {
                    Some((copy, slot)) => {
                        self.entries[entry as usize] = Entry::Running(Running { task: copy, slot, copy: None, ..run });
                    }
                    None => {
                        self.running -= 1;
                        self.vacate(entry);
                    }
                }
                Ok(Ended::Lost)
            }
            Entry::Running(run) => match run.copy {
                Some((copy, slot)) if copy == container => {
                    if finished {
                        return self
                            .complete(entry, slot, Some((run.task, run.slot)), run.start, now)
                            .map(Ended::Completed);
                    }
                    self.entries[entry as usize] = Entry::Running(Running { copy: None, ..run });
                    Ok(Ended::Lost)
                }
                _ => Err(ReservationError::UnknownTask(container)),
            },
            _ => Err(ReservationError::UnknownTask(container)),
        }
    }

    /// The task at `entry`, started at `start`, finished at `now` in `winner`; `loser` is the
    /// other container of a race, still running.
    fn complete(
        &mut self,
        entry: TaskEntry,
        winner: Slot,
        loser: Option<(TaskId, Slot)>,
        start: f64,
        now: f64,
    ) -> Result<Completion> {
        self.running -= 1;
        match loser {
            Some((id, slot)) => self.entries[entry as usize] = Entry::Loser(id, slot),
            None => self.vacate(entry),
        }
        let duration = (now - start).max(0.0);
        self.finished += 1;
        self.stats.add(duration);
        let before = self.fit;
        if self.finished == 1 && self.fitted_at == 0 {
            // The first finisher approximates t_m (the paper's choice) until a fit exists.
            self.fit.scale = duration.max(f64::MIN_POSITIVE);
        }
        self.maybe_refit(now);
        if self.fit != before {
            self.deadline_rel = self.fit.deadline(self.settings.isolation_probability, self.tasks)?;
        }
        let slot = self.decide(winner);
        let pre_reserve = match self.transition {
            Transition::Wider { extra }
                if !self.pre_reserved && self.finished_fraction() >= self.settings.prereserve_threshold =>
            {
                self.pre_reserved = true;
                Some(PreReserve { count: extra, until: self.deadline().unwrap_or(f64::INFINITY) })
            }
            _ => None,
        };
        Ok(Completion { slot, loser, pre_reserve })
    }

    /// Straggler mitigation (§IV-C): once the running tasks number no more than the idle
    /// reserved slots, each running task without a copy may get one. Returns those tasks'
    /// containers, oldest first. Slots already running copies count as reserved: they were
    /// idle when the copies began.
    pub fn straggler_candidates(&self) -> Vec<TaskId> {
        let copies = self.running_iter().filter(|(_, r)| r.copy.is_some()).count();
        if self.running == 0 || self.running > self.idle.len() + copies || self.transition == Transition::Final {
            return Vec::new();
        }
        let mut v: Vec<TaskId> = self.running_iter().filter(|(_, r)| r.copy.is_none()).map(|(_, r)| r.task).collect();
        v.sort_unstable();
        v
    }

    /// Container `copy` started for this stage in `slot` after all its tasks had started. It
    /// is a copy of the oldest running task without one: the order
    /// [`StageReservation::straggler_candidates`] lists them in, which the AM follows when it
    /// launches copies. Returns that task's entry, or `None` (the container is a task of its
    /// own) while tasks are still to start or every running task has a copy. A task retried
    /// after a failure that was reported as a finish is taken for a copy too: the stage cannot
    /// tell them apart.
    pub fn copy_started(&mut self, copy: TaskId, slot: Slot) -> Option<TaskEntry> {
        if self.finished + self.running < self.tasks as usize {
            return None;
        }
        let (entry, _) = self.running_iter().filter(|(_, r)| r.copy.is_none()).min_by_key(|(_, r)| r.task)?;
        if let Entry::Running(r) = &mut self.entries[entry as usize] {
            r.copy = Some((copy, slot));
        }
        Some(entry)
    }

    /// Forgets one idle held slot equal to `slot` (it expired or was overridden by a higher
    /// priority); returns whether there was one.
    pub fn drop_slot(&mut self, slot: &Slot) -> bool {
        match self.idle.iter().position(|s| s == slot) {
            Some(pos) => {
                self.idle.remove(pos);
                true
            }
            None => false,
        }
    }

    /// The settings the stage was made with.
    pub fn settings(&self) -> &ReservationSettings {
        &self.settings
    }
}
