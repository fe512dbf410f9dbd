//! User Weighted Fair Queuing (UWFQ): jobs are ordered by the time they would finish in a
//! fluid *user-job fair* (UJF) reference system, computed with two levels of virtual time.
//!
//! The reference system shares the capacity `R` among active users in proportion to their
//! weights, and each user's share equally among that user's jobs. It is driven only by job
//! arrivals and their estimated slot-time, never by what the real schedule did, which is what
//! bounds UWFQ against UJF (the UWFQ paper's `f_i - f̂_i <= L_max / R`).
//!
//! - **Global virtual time** `V_g` advances at `R / W`, `W` the summed weight of users with
//!   work left in the reference; a user of weight `w` receives `w · dV_g` of service.
//! - **User virtual time** `V_u` is the service each of a user's jobs has received under the
//!   within-user equal split; job `i` leaves the reference when `V_u` reaches its user deadline
//!   `D_user = V_u(arrival) + L_i`.
//! - **Global deadline** (the priority, smaller first): `D_global = V_arrival + (Σ L of the
//!   user's jobs with D_user ≤ D_user_i) / w`, where `V_arrival` is the user's virtual arrival,
//!   advanced by `L / w` as jobs leave. A user's jobs thus finish one after another at the user's
//!   fair rate, in the order they would finish under UJF.
//!
//! Complexity: the UWFQ paper's Algorithms 2-3 progress every user on every update. Here a user's
//! service depends only on `V_g` while it is active, so users are brought up to date lazily,
//! when one of their own events happens; users leave in order of their virtual end from an
//! ordered set; prefix sums come from a treap. Every event costs O(log N) amortised (each job
//! and each user busy period leaves the reference once).
//!
//! Weights: the UWFQ paper's scalar `U_w` *multiplies* slot-time (a larger `U_w` delays the user).
//! Here a weight is a share, as in WFQ: slot-time is *divided* by it, so `U_w = 1 / weight`.

mod partition;
mod sumtree;

pub use partition::{partition_count, PartitionError};

use rustc_hash::FxHashMap;
use serde::Serialize;
use std::cmp::{Ordering, Reverse};
use std::collections::{BTreeSet, BinaryHeap, HashMap};
use sumtree::SumTree;
use thiserror::Error;

/// A job's identity (the scheduler uses the application key).
pub type JobId = u64;

type UserIdx = u32;

/// Settings of UWFQ out of range, or events that do not fit the state.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum UwfqError {
    #[error("UWFQ setting {field} = {value} is out of range: expected {expected}")]
    InvalidSetting { field: String, value: f64, expected: &'static str },
    #[error("UWFQ job {0} is already queued")]
    DuplicateJob(JobId),
    #[error("UWFQ job {0} is not queued")]
    UnknownJob(JobId),
}

fn check(field: &str, value: f64, ok: bool, expected: &'static str) -> Result<(), UwfqError> {
    if ok {
        Ok(())
    } else {
        Err(UwfqError::InvalidSetting { field: field.to_string(), value, expected })
    }
}

/// Per-user weights and the knobs of the app policy, from the allocation file.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct UwfqSettings {
    /// Explicit weights; users not listed get `default_weight`.
    pub user_weights: Vec<(String, f64)>,
    pub default_weight: f64,
    /// A user whose reference work ran out less than this many seconds ago is revived with its
    /// original virtual arrival when new work comes (the UWFQ paper's grace period).
    pub grace_period_sec: f64,
    /// Runtime assumed for one container when a job's slot-time comes from its asks.
    pub default_task_sec: f64,
    /// Advisory task runtime of runtime partitioning: when set, the hints reply tells the AM
    /// how many tasks to split each stage into (`<uwfq-target-task-sec>`).
    pub target_task_sec: Option<f64>,
}

impl Default for UwfqSettings {
    fn default() -> Self {
        // The UWFQ paper uses 2 resource-seconds of grace; with one container per resource that is
        // about two seconds of wall time.
        UwfqSettings {
            user_weights: Vec::new(),
            default_weight: 1.0,
            grace_period_sec: 2.0,
            default_task_sec: 10.0,
            target_task_sec: None,
        }
    }
}

impl UwfqSettings {
    pub fn validate(&self) -> Result<(), UwfqError> {
        let positive = |v: f64| v.is_finite() && v > 0.0;
        for (user, w) in &self.user_weights {
            check(&format!("uwfq-user-weight[{user}]"), *w, positive(*w), "a positive finite number")?;
        }
        check("uwfq-default-weight", self.default_weight, positive(self.default_weight), "a positive finite number")?;
        check(
            "uwfq-grace-period-sec",
            self.grace_period_sec,
            self.grace_period_sec.is_finite() && self.grace_period_sec >= 0.0,
            "a non-negative finite number of seconds",
        )?;
        check(
            "uwfq-default-task-sec",
            self.default_task_sec,
            positive(self.default_task_sec),
            "a positive finite number of seconds",
        )?;
        match self.target_task_sec {
            Some(t) => check("uwfq-target-task-sec", t, positive(t), "a positive finite number of seconds"),
            None => Ok(()),
        }
    }

    pub fn weight_of(&self, user: &str) -> f64 {
        self.user_weights.iter().find(|(u, _)| u == user).map_or(self.default_weight, |(_, w)| *w)
    }
}

/// `f64` with a total order, for ordered sets.
#[derive(Copy, Clone, Debug, PartialEq)]
struct Key(f64);

impl Eq for Key {}

impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Key {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0)
    }
}

#[derive(Clone, Debug)]
struct Job {
    user: UserIdx,
    /// Total slot-time estimate.
    work: f64,
    /// Part of `work` that already left the reference before the estimate last grew.
    served: f64,
    /// Still in the reference system: its user deadline is `d_user`.
    in_fluid: bool,
    d_user: f64,
    /// Still in the real system (not finished or removed).
    live: bool,
    /// The global deadline, fixed once the job left the reference system.
    frozen: f64,
}

#[derive(Clone, Debug)]
struct User {
    name: String,
    weight: f64,
    active: bool,
    v_user: f64,
    /// `V_arrival`, advanced by `L / w` as jobs leave the reference.
    v_arrival: f64,
    /// Global virtual time at which the user's reference work runs out.
    v_end: f64,
    /// Global virtual time up to which `v_user` is accounted.
    synced_vg: f64,
    /// Real time the user's reference work last ran out.
    departed_at: Option<f64>,
    /// Jobs in the reference by `(D_user, job)`, valued by slot-time.
    fluid: SumTree,
    /// Live jobs still in the reference, by `(D_user, job)`.
    live_fluid: BTreeSet<(Key, JobId)>,
    /// Live jobs that outlived their reference finish, by frozen global deadline.
    outlived: BTreeSet<(Key, JobId)>,
    /// The key this user has in `heads`.
    head: Option<f64>,
}

/// The UWFQ reference system and the order it gives to live jobs.
#[derive(Clone, Debug)]
pub struct UwfqClock {
    /// Capacity `R` in work units per second (the unit slot-time is measured in).
    capacity: f64,
    grace_sec: f64,
    v_global: f64,
    /// Real time of the last update.
    t_prev: f64,
    /// Summed weight of active users.
    active_weight: f64,
    /// Active users by `(V_end, user)`: the next to run out of work first.
    active: BTreeSet<(Key, UserIdx)>,
    users: Vec<User>,
    user_index: HashMap<String, UserIdx>,
    jobs: FxHashMap<JobId, Job>,
    /// Users with live jobs, by the global deadline of their first live job.
    heads: BTreeSet<(Key, UserIdx)>,
}

impl UwfqClock {
    /// A reference system serving `capacity` work units per second, reviving users within
    /// `grace_sec` seconds of running out of work.
    pub fn new(capacity: f64, grace_sec: f64) -> Result<UwfqClock, UwfqError> {
        check("capacity", capacity, capacity.is_finite() && capacity >= 0.0, "a non-negative finite rate")?;
        check(
            "uwfq-grace-period-sec",
            grace_sec,
            grace_sec.is_finite() && grace_sec >= 0.0,
            "a non-negative finite number of seconds",
        )?;
        Ok(UwfqClock {
            capacity,
            grace_sec,
            v_global: 0.0,
            t_prev: f64::NEG_INFINITY,
            active_weight: 0.0,
            active: BTreeSet::new(),
            users: Vec::new(),
            user_index: HashMap::new(),
            jobs: FxHashMap::default(),
            heads: BTreeSet::new(),
        })
    }

    pub fn global_virtual_time(&self) -> f64 {
        self.v_global
    }

    pub fn capacity(&self) -> f64 {
        self.capacity
    }

    /// Jobs known: live ones and finished ones whose reference work is not yet done.
    pub fn job_count(&self) -> usize {
        self.jobs.len()
    }

    /// Users with reference work left.
    pub fn active_users(&self) -> usize {
        self.active.len()
    }

    pub fn is_user_active(&self, user: &str) -> bool {
        self.user_index.get(user).is_some_and(|&u| self.users[u as usize].active)
    }

    /// A user's virtual time as of `now`.
    pub fn user_virtual_time(&mut self, now: f64, user: &str) -> Option<f64> {
        self.advance(now);
        let u = *self.user_index.get(user)?;
        self.sync_user(u);
        Some(self.users[u as usize].v_user)
    }

    /// The global virtual time at which a user's reference work runs out.
    pub fn user_virtual_end(&self, user: &str) -> Option<f64> {
        self.user_index.get(user).map(|&u| self.users[u as usize].v_end)
    }

    /// Whether a job still has work in the reference system as of `now`.
    pub fn in_reference(&mut self, now: f64, job: JobId) -> Option<bool> {
        self.advance(now);
        let u = self.jobs.get(&job)?.user;
        self.sync_user(u);
        self.jobs.get(&job).map(|j| j.in_fluid)
    }

    /// A job's global virtual deadline, its UWFQ priority (smaller first).
    pub fn virtual_finish(&self, job: JobId) -> Option<f64> {
        let j = self.jobs.get(&job)?;
        Some(if j.in_fluid { self.fluid_deadline(j.user, j.d_user, job) } else { j.frozen })
    }

    #[inline]
    fn fluid_deadline(&self, u: UserIdx, d_user: f64, job: JobId) -> f64 {
        let user = &self.users[u as usize];
        user.v_arrival + user.fluid.prefix_sum(d_user, job) / user.weight
    }

    /// Changes the capacity from `now` on (the reference is first advanced at the old rate).
    pub fn set_capacity(&mut self, now: f64, capacity: f64) -> Result<(), UwfqError> {
        check("capacity", capacity, capacity.is_finite() && capacity >= 0.0, "a non-negative finite rate")?;
        self.advance(now);
        self.capacity = capacity;
        Ok(())
    }

    /// Advances global virtual time to real time `now`, letting users whose reference work runs
    /// out in between leave in order (Algorithm 2). Earlier times than the last update are
    /// ignored: the reference never runs backwards.
    pub fn advance(&mut self, now: f64) {
        if self.t_prev == f64::NEG_INFINITY {
            self.t_prev = now;
            return;
        }
        // NaN and non-advancing readings are both ignored.
        if now.partial_cmp(&self.t_prev) != Some(std::cmp::Ordering::Greater) {
            return;
        }
        loop {
            let Some(&(Key(v_end), u)) = self.active.first() else {
                self.active_weight = 0.0;
                self.t_prev = now;
                return;
            };
            if self.capacity <= 0.0 {
                self.t_prev = now;
                return;
            }
            let rate = self.capacity / self.active_weight;
            let t_exit = self.t_prev + (v_end - self.v_global).max(0.0) / rate;
            if t_exit > now {
                self.v_global += (now - self.t_prev) * rate;
                self.t_prev = now;
                return;
            }
            self.v_global = self.v_global.max(v_end);
            self.t_prev = self.t_prev.max(t_exit);
            self.deactivate(u, self.t_prev);
        }
    }

    fn deactivate(&mut self, u: UserIdx, at: f64) {
        let user = &mut self.users[u as usize];
        self.active.remove(&(Key(user.v_end), u));
        self.active_weight -= user.weight;
        user.active = false;
        user.departed_at = Some(at);
        if self.active.is_empty() {
            self.active_weight = 0.0;
        }
        self.sync_user(u);
        self.refresh_head(u);
    }

    /// Brings a user's virtual time up to the current global virtual time, letting its jobs
    /// that finish in between leave in order of user deadline (Algorithm 3). An inactive user
    /// is accounted up to its virtual end, where all its reference work is done.
    fn sync_user(&mut self, u: UserIdx) {
        let v_global = self.v_global;
        let user = &mut self.users[u as usize];
        let drain = !user.active || v_global >= user.v_end;
        let target = if drain { user.v_end } else { v_global };
        let mut service = user.weight * (target - user.synced_vg);
        user.synced_vg = user.synced_vg.max(target);
        if service <= 0.0 && (!drain || user.fluid.is_empty()) {
            return;
        }
        while let Some((d_user, job, work)) = user.fluid.first() {
            let n = user.fluid.len() as f64;
            let need = (d_user - user.v_user).max(0.0) * n;
            if need > service && !drain {
                user.v_user += service / n;
                return;
            }
            service = (service - need).max(0.0);
            user.v_user = user.v_user.max(d_user);
            user.fluid.remove(d_user, job);
            user.v_arrival += work / user.weight;
            let j = self.jobs.get_mut(&job).expect("a job in the reference is known");
            j.in_fluid = false;
            if j.live {
                // D_global at departure: it was first, so V_arrival (just advanced) is its deadline.
                j.frozen = user.v_arrival;
                user.live_fluid.remove(&(Key(d_user), job));
                user.outlived.insert((Key(j.frozen), job));
            } else {
                self.jobs.remove(&job);
            }
        }
        if drain {
            // Rounding may leave the arrival a hair off the end it must equal once all is done.
            user.v_arrival = user.v_end;
        }
    }

    /// Recomputes a user's entry in `heads`: its first live job's global deadline.
    fn refresh_head(&mut self, u: UserIdx) {
        let user = &self.users[u as usize];
        let head = match user.outlived.first() {
            Some(&(Key(k), _)) => Some(k),
            None => user.live_fluid.first().map(|&(Key(d), job)| self.fluid_deadline(u, d, job)),
        };
        let old = user.head;
        if old == head {
            return;
        }
        if let Some(k) = old {
            self.heads.remove(&(Key(k), u));
        }
        if let Some(k) = head {
            self.heads.insert((Key(k), u));
        }
        self.users[u as usize].head = head;
    }

    fn user_idx(&mut self, name: &str, weight: f64) -> UserIdx {
        if let Some(&u) = self.user_index.get(name) {
            return u;
        }
        let u = self.users.len() as UserIdx;
        self.users.push(User {
            name: name.to_string(),
            weight,
            active: false,
            v_user: 0.0,
            v_arrival: 0.0,
            v_end: 0.0,
            synced_vg: 0.0,
            departed_at: None,
            fluid: SumTree::default(),
            live_fluid: BTreeSet::new(),
            outlived: BTreeSet::new(),
            head: None,
        });
        self.user_index.insert(name.to_string(), u);
        u
    }

    /// Makes an inactive user ready for new reference work (Algorithm 1, lines 2-5): within the
    /// grace period it continues its last busy period from its original virtual arrival; after
    /// it, a new busy period starts at the current global virtual time with `weight`.
    fn wake(&mut self, u: UserIdx, now: f64, weight: f64) {
        let (v_global, grace) = (self.v_global, self.grace_sec);
        let user = &mut self.users[u as usize];
        if user.active {
            return;
        }
        let revive = user.departed_at.is_some_and(|t| now - t <= grace);
        if revive {
            // Accounted up to the old end, as if the user had never left.
            user.synced_vg = user.v_end;
        } else {
            user.weight = weight;
            user.v_arrival = v_global;
            user.v_end = v_global;
            user.synced_vg = v_global;
        }
    }

    /// Adds reference work to a user whose `v_end` already includes it; activates the user if
    /// the work outlasts the current global virtual time, else lets it run out right away.
    fn settle(&mut self, u: UserIdx, old_v_end: f64, now: f64) {
        let v_global = self.v_global;
        let user = &mut self.users[u as usize];
        if user.active {
            self.active.remove(&(Key(old_v_end), u));
            if user.v_end > v_global {
                self.active.insert((Key(user.v_end), u));
            } else {
                self.active_weight -= user.weight;
                user.active = false;
                user.departed_at = Some(now);
                if self.active.is_empty() {
                    self.active_weight = 0.0;
                }
            }
        } else if user.v_end > v_global {
            user.active = true;
            self.active_weight += user.weight;
            self.active.insert((Key(user.v_end), u));
        }
        self.sync_user(u);
        self.refresh_head(u);
    }

    /// A job arrives (Algorithm 1) at real time `now` with estimated slot-time `work` for
    /// `user`, whose weight is `weight` (taken when the user starts a busy period). Returns the
    /// job's global virtual deadline.
    pub fn job_arrived(&mut self, now: f64, job: JobId, user: &str, weight: f64, work: f64) -> Result<f64, UwfqError> {
        check("weight", weight, weight.is_finite() && weight > 0.0, "a positive finite number")?;
        check("slot-time", work, work.is_finite() && work >= 0.0, "a non-negative finite number")?;
        if self.jobs.contains_key(&job) {
            return Err(UwfqError::DuplicateJob(job));
        }
        self.advance(now);
        let u = self.user_idx(user, weight);
        self.wake(u, now, weight);
        self.sync_user(u);
        let user = &mut self.users[u as usize];
        let d_user = user.v_user + work;
        user.fluid.insert(d_user, job, work);
        user.live_fluid.insert((Key(d_user), job));
        let old_end = user.v_end;
        user.v_end += work / user.weight;
        self.jobs.insert(job, Job { user: u, work, served: 0.0, in_fluid: true, d_user, live: true, frozen: 0.0 });
        self.settle(u, old_end, now);
        Ok(self.virtual_finish(job).expect("job just added"))
    }

    /// A live job's slot-time estimate changed (for example when its DAG becomes known). Work
    /// still in the reference is re-sized; extra work for a job that already left the
    /// reference re-enters it like a new arrival of its user (grace period included).
    pub fn update_work(&mut self, now: f64, job: JobId, work: f64) -> Result<(), UwfqError> {
        check("slot-time", work, work.is_finite() && work >= 0.0, "a non-negative finite number")?;
        let j = self.jobs.get(&job).filter(|j| j.live).ok_or(UwfqError::UnknownJob(job))?.clone();
        self.advance(now);
        let u = j.user;
        self.sync_user(u);
        let j = self.jobs[&job].clone();
        if j.in_fluid {
            let user = &mut self.users[u as usize];
            user.fluid.remove(j.d_user, job);
            user.live_fluid.remove(&(Key(j.d_user), job));
            // Same virtual start, new size; never behind what the user has already received.
            let (old_size, size) = (j.work - j.served, (work - j.served).max(0.0));
            let d_user = (j.d_user - old_size + size).max(user.v_user);
            user.fluid.insert(d_user, job, size);
            user.live_fluid.insert((Key(d_user), job));
            let old_end = user.v_end;
            user.v_end += (size - old_size) / user.weight;
            let rec = self.jobs.get_mut(&job).expect("checked");
            rec.d_user = d_user;
            rec.work = work;
            self.settle(u, old_end, now);
        } else if work > j.work {
            let extra = work - j.work;
            let weight = self.users[u as usize].weight;
            self.wake(u, now, weight);
            self.sync_user(u);
            let user = &mut self.users[u as usize];
            user.outlived.remove(&(Key(j.frozen), job));
            let d_user = user.v_user + extra;
            user.fluid.insert(d_user, job, extra);
            user.live_fluid.insert((Key(d_user), job));
            let old_end = user.v_end;
            user.v_end += extra / user.weight;
            let rec = self.jobs.get_mut(&job).expect("checked");
            rec.in_fluid = true;
            rec.d_user = d_user;
            rec.served = j.work;
            rec.work = work;
            self.settle(u, old_end, now);
        } else {
            self.jobs.get_mut(&job).expect("checked").work = work;
        }
        Ok(())
    }

    /// A job finished or was removed in the real system. Its reference work is kept: the
    /// reference does not depend on the real schedule (a job served ahead of its fair share
    /// still counts against its user until its reference finish).
    pub fn job_finished(&mut self, now: f64, job: JobId) -> Result<(), UwfqError> {
        let j = self.jobs.get(&job).filter(|j| j.live).ok_or(UwfqError::UnknownJob(job))?;
        let (u, in_fluid, d_user, frozen) = (j.user, j.in_fluid, j.d_user, j.frozen);
        let user = &mut self.users[u as usize];
        if in_fluid {
            user.live_fluid.remove(&(Key(d_user), job));
            self.jobs.get_mut(&job).expect("checked").live = false;
        } else {
            user.outlived.remove(&(Key(frozen), job));
            self.jobs.remove(&job);
        }
        self.refresh_head(u);
        self.advance(now);
        Ok(())
    }

    /// Live jobs in UWFQ order (smallest global virtual deadline first) with their deadlines:
    /// a merge of the users' own orders, each user opened only when reached.
    pub fn order(&self) -> Order<'_> {
        Order { clock: self, heads: self.heads.iter(), pending_head: None, heap: BinaryHeap::new() }
    }

    /// The user of a job.
    pub fn user_of(&self, job: JobId) -> Option<&str> {
        self.jobs.get(&job).map(|j| self.users[j.user as usize].name.as_str())
    }

    /// The live job after `(key, job)` in one user's order, with its deadline.
    fn next_in_user(&self, u: UserIdx, after: Option<(f64, JobId, bool)>) -> Option<(f64, JobId, bool)> {
        let user = &self.users[u as usize];
        use std::ops::Bound::{Excluded, Unbounded};
        match after {
            None => {}
            Some((k, job, false)) => {
                if let Some(&(Key(k2), j2)) = user.outlived.range((Excluded((Key(k), job)), Unbounded)).next() {
                    return Some((k2, j2, false));
                }
                return user.live_fluid.first().map(|&(Key(d), j)| (d, j, true));
            }
            Some((d, job, true)) => {
                return user
                    .live_fluid
                    .range((Excluded((Key(d), job)), Unbounded))
                    .next()
                    .map(|&(Key(d2), j2)| (d2, j2, true));
            }
        }
        if let Some(&(Key(k), j)) = user.outlived.first() {
            return Some((k, j, false));
        }
        user.live_fluid.first().map(|&(Key(d), j)| (d, j, true))
    }
}

/// Iterator over live jobs in UWFQ order; see [`UwfqClock::order`].
pub struct Order<'a> {
    clock: &'a UwfqClock,
    heads: std::collections::btree_set::Iter<'a, (Key, UserIdx)>,
    pending_head: Option<(f64, UserIdx)>,
    /// Opened users by the deadline of their next job: `(deadline, user, cursor)`.
    heap: BinaryHeap<Reverse<(Key, UserIdx, Cursor)>>,
}

/// Position in one user's order: `(key, job, in_fluid)` where key is the frozen deadline for
/// outlived jobs and the user deadline for jobs in the reference.
#[derive(Copy, Clone, Debug, PartialEq)]
struct Cursor(f64, JobId, bool);

impl Eq for Cursor {}

impl PartialOrd for Cursor {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Cursor {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0).then(self.1.cmp(&other.1)).then(self.2.cmp(&other.2))
    }
}

impl<'a> Order<'a> {
    fn deadline_of(&self, u: UserIdx, c: (f64, JobId, bool)) -> f64 {
        if c.2 {
            self.clock.fluid_deadline(u, c.0, c.1)
        } else {
            c.0
        }
    }
}

impl<'a> Iterator for Order<'a> {
    type Item = (JobId, f64);

    fn next(&mut self) -> Option<(JobId, f64)> {
        if self.pending_head.is_none() {
            self.pending_head = self.heads.next().map(|&(Key(k), u)| (k, u));
        }
        let take_head = match (self.pending_head, self.heap.peek()) {
            (None, None) => return None,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (Some((k, u)), Some(Reverse((Key(hk), hu, _)))) => (Key(k), u) < (Key(*hk), *hu),
        };
        let (u, cursor) = if take_head {
            let (_, u) = self.pending_head.take().expect("checked");
            (u, self.clock.next_in_user(u, None)?)
        } else {
            let Reverse((_, u, Cursor(a, b, c))) = self.heap.pop().expect("checked");
            (u, (a, b, c))
        };
        let deadline = self.deadline_of(u, cursor);
        if let Some(next) = self.clock.next_in_user(u, Some(cursor)) {
            let d = self.deadline_of(u, next);
            self.heap.push(Reverse((Key(d), u, Cursor(next.0, next.1, next.2))));
        }
        Some((cursor.1, deadline))
    }
}
