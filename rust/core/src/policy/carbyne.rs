//! Carbyne: altruistic multi-resource DAG scheduling inside a queue (Grandl et al., OSDI 2016,
//! Pseudocode 1), mapped onto YARN node heartbeats.
//!
//! - Inter-job: closed-form DRF shares among the queue's jobs ([`crate::dag::share`]) of the
//!   queue's fair part of the cluster (its weight over the weights of queues with demand).
//! - Intra-job: for each hinted job, forward packing under its share estimates its completion
//!   time and reverse packing gives every pending task a latest start ([`crate::dag::pack`]).
//!   Tasks whose latest start has come must start now; the rest of the share is leftover.
//! - On an offer: first must-start asks of jobs below their share, least remaining work first
//!   (§4.2: the RM packs these asks with Tetris's heuristics, whose job term is remaining
//!   work), and among a job's must-start asks the best-aligned with the node's free space;
//!   then the leftover: jobs in SRTF order (least remaining work first) each take what their
//!   fastest finish needs now, which spreads the leftover over jobs as the authors' reverse
//!   planning of the leftover does; then one work-conserving pass in the same order. Inside a
//!   job the task its plan needs earliest goes first (§4.2: AMs attach DAG priorities to their
//!   asks, as in DAGPS), so the critical path goes first and must-start tasks before the rest.
//!
//! Choices where the paper leaves room:
//! - A job's share is its closed-form DRF allocation along its own demand mix (all its
//!   unfinished tasks), the paper's vector `A_k`, and the packers fit its tasks into that vector.
//!   Packing into the job's dominant share in every resource instead (what Hadoop 2.7's DRF
//!   policy computes, resource by resource) leaves less to give away; measured on the
//!   simulator's TPC-DS online set-up: 42% of resources from the leftover instead of 64%,
//!   Jain's index 0.67 instead of 0.44, average JCT 1296 s instead of 1149 s (DRF: 0.92, 1592 s).
//! - What a job takes from the leftover comes from a second reverse plan into all it could use
//!   (its whole demand, up to the cluster): the authors plan into the leftover itself, whose
//!   size changes with every offer; planning into the most the leftover could give keeps plans
//!   per scheduling event, and takes from the leftover only tasks on the job's critical path.
//!   Measured at reduced size against greedy SRTF over the leftover: Jain's index 0.65 -> 0.78
//!   (TPC-H online), 0.29 -> 0.41 (Facebook), for average JCTs 1-16% longer.
//! - No share erosion. The authors' simulator also shrinks, at every scheduling step, the share
//!   of a job below it to what is free when the free resources cannot cover the gap (until the
//!   next arrival or completion resets shares). Measured at reduced size on every set-up, with
//!   the eroded share either what the job holds plus what is free or (the authors' code) what is
//!   free alone: average JCTs move by under 1.2% (TPC-DS online 1458 -> 1451 s, Facebook 118 ->
//!   116 s), Jain's index by at most 0.01, the leftover's part of what starts from 97-98% to
//!   98-99%: the reverse plans already leave almost everything to the leftover. So we keep
//!   shares as DRF gives them and save a pass over the queue's jobs per scheduling event.
//! - Plans are cached and recomputed only when a job's hints (DAG or progress) change or its
//!   share moves by more than [`SHARE_TOLERANCE`]; at most [`REPLANS_PER_HEARTBEAT`] per
//!   heartbeat, so a burst of changes is spread out. Between plans, the plan's latest-start
//!   times stay valid as time passes: a task becomes must-start when its time comes.
//! - Containers this policy starts for a stage's priority use up that stage's earliest
//!   latest-start slot, whether they came from the share or from the leftover; when several
//!   stages share a priority the one with the earliest slot is charged.
//! - A re-plan under an unchanged share and DAG keeps the completion time the previous plan
//!   promised (it may only be later than the fresh estimate), as Theorem 3.1 requires.
//! - P(altruism) is drawn per job at each plan (a scheduling event for the job), from a hash
//!   of the app key and plan count, so runs are reproducible. A job that is not altruistic,
//!   has no hints, or has no plan yet is greedy: every ask it has is must-start.
//! - P(altruism) = 0 is plain DRF among the queue's jobs (lowest dominant share first,
//!   submission order on ties), work-conserving, with YARN's priority order inside a job.
//! - Unhinted apps' work is unknown: they come after hinted jobs in the SRTF order, in
//!   submission order. Asks at priorities the hints do not map are must-start.
//! - An unhinted app waiting for its first container (the ApplicationMaster) goes first, as
//!   in FIFO; an app that sent hints already has its AM.

use super::{AppPolicy, NodeOffer};
use crate::dag::pack::{self, Plan, PlanKind};
use crate::dag::share::drf_shares;
use crate::dag::StageIdx;
use crate::hints::AppHints;
use crate::ids::{AppIdx, AppKey, QueueIdx};
use crate::request::Placement;
use crate::resource::Resources;
use crate::state::{App, ClusterState};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::sync::Arc;

/// Relative change of a job's dominant share that makes its plan stale.
pub const SHARE_TOLERANCE: f64 = 0.02;
/// Plans recomputed per heartbeat at most; the rest wait for the next heartbeats.
pub const REPLANS_PER_HEARTBEAT: usize = 4;

struct JobPlan {
    plan: Plan,
    /// The same DAG planned into all the job could use (its whole demand, up to the cluster):
    /// what the job needs now to finish as early as the leftover allows.
    fastest: Plan,
    /// Per stage: latest-start slots already used by containers started since the plans
    /// (both plans list one slot per pending task, so one count serves both).
    consumed: Vec<u32>,
    /// The earliest unused latest-start slot over all stages (i64::MAX when none is left).
    next_due_ms: i64,
    /// The same in the fastest plan.
    fastest_due_ms: i64,
    dag_revision: u64,
    share_dom: f64,
}

impl JobPlan {
    fn refresh_next_due(&mut self) {
        let first_unused = |plan: &Plan| {
            (0..self.consumed.len())
                .filter_map(|s| plan.latest_start[s].get(self.consumed[s] as usize).copied())
                .min()
                .unwrap_or(i64::MAX)
        };
        self.next_due_ms = match self.plan.kind {
            PlanKind::Reverse => first_unused(&self.plan),
            PlanKind::Unplaceable => i64::MAX,
        };
        self.fastest_due_ms = first_unused(&self.fastest);
    }

    /// The earliest unused latest-start slot of `plan` among `stages`, and its stage.
    #[inline]
    fn earliest_slot(&self, plan: &Plan, stages: &[StageIdx]) -> Option<(i64, StageIdx)> {
        stages.iter().filter_map(|&s| plan.latest_start[s].get(self.consumed[s] as usize).map(|&t| (t, s))).min()
    }
}

/// Which of a job's plans orders its asks, and up to when its slots are due.
#[derive(Copy, Clone)]
enum Need {
    /// Due within the job's share by then.
    Share(i64),
    /// Due in the fastest plan by then: what the job takes from the leftover.
    Fastest(i64),
    /// Anything, the share plan's order first (the work-conserving pass).
    Any,
}

struct Job {
    key: AppKey,
    seq: u64,
    queue: QueueIdx,
    hints: Option<Arc<AppHints>>,
    share: Resources,
    share_dom: f64,
    plan: Option<JobPlan>,
    altruistic: bool,
    plans_made: u64,
    queued_for_plan: bool,
    /// Remaining work (SRTF key); infinite for unhinted apps.
    work: f64,
    srtf_pos: usize,
    in_must: bool,
}

impl Job {
    /// Every ask is must-start: no hints, no plan yet, or not altruistic at this plan.
    #[inline]
    fn greedy(&self) -> bool {
        !self.altruistic || self.plan.is_none()
    }

    #[inline]
    fn has_due(&self, now: i64) -> bool {
        self.greedy() || self.plan.as_ref().is_some_and(|p| p.next_due_ms <= now)
    }

    fn srtf_key(&self) -> (f64, u64) {
        (self.work, self.seq)
    }

    /// Before this time the job takes nothing from the leftover for its fastest finish: its
    /// fastest plan's next slot. A job without hints or a plan may take at any time.
    #[inline]
    fn fastest_from(&self) -> i64 {
        match (&self.hints, &self.plan) {
            (Some(_), Some(p)) => p.fastest_due_ms,
            _ => i64::MIN,
        }
    }
}

#[derive(Default)]
struct QueueJobs {
    /// Jobs by SRTF key (remaining work, then submission order).
    srtf: Vec<AppIdx>,
    /// [`Job::fastest_from`] of the job at each place of `srtf`: the leftover pass for what
    /// jobs need now skips most jobs by a scan of this alone.
    fastest_from: Vec<i64>,
    /// Jobs that may have must-start asks now: greedy jobs and jobs whose next slot is due.
    must: Vec<AppIdx>,
    /// This heartbeat's must-start candidates by (remaining work, seq), built at the queue's
    /// first offer. Within a heartbeat the node's free space only shrinks, and a job's usage
    /// only grows, so a job that cannot take the offer now cannot later in the heartbeat
    /// either and leaves the heap.
    heap: BinaryHeap<Reverse<(u64, u64, AppIdx)>>,
    heap_heartbeat: u64,
}

#[derive(Copy, Clone, PartialEq)]
struct Seen {
    next_app_seq: u64,
    apps: usize,
    capacity: Resources,
    queues: usize,
}

pub struct Carbyne {
    altruism: f64,
    jobs: Vec<Option<Job>>,
    queues: Vec<QueueJobs>,
    seen: Option<Seen>,
    /// Apps whose hints or asks changed since the last heartbeat.
    updated: Vec<AppIdx>,
    /// Hints that newer ones replaced: freed at the next update rather than in a heartbeat.
    retired: Vec<Arc<AppHints>>,
    replan: VecDeque<AppIdx>,
    /// (next due time, slot, app seq) of altruistic jobs not in their queue's must list.
    due: BinaryHeap<Reverse<(i64, AppIdx, u64)>>,
    now: i64,
    capacity: Resources,
    heartbeat: u64,
    /// Containers started from jobs' shares (index 0) and from the leftover (index 1).
    started: [PhaseCount; 2],
}

/// Containers one phase of the policy started, and their resources as a sum of dominant shares
/// of the cluster.
#[derive(Copy, Clone, Default, serde::Serialize)]
struct PhaseCount {
    containers: u64,
    dominant_shares: f64,
}

/// The queue's part of the cluster: its fair share down the queue tree among queues with
/// demand, as the status page reports it.
pub(crate) fn queue_entitlements(state: &ClusterState) -> Vec<Resources> {
    let fair = crate::state::FairShares::of(state);
    state
        .queues
        .iter()
        .map(|q| {
            let w = if q.active() { fair.of_queue(q) } else { 0.0 };
            let mut r = Resources::ZERO;
            for (o, c) in r.0.iter_mut().zip(state.capacity.0.iter()) {
                *o = (*c as f64 * w) as i64;
            }
            r
        })
        .collect()
}

/// What a job could use at most: all its unfinished hinted tasks at once, and at least what it
/// holds plus what it asks for.
pub(crate) fn job_cap(app: &App) -> Resources {
    let asked = app.usage + app.asks.pending_resources();
    match &app.hints {
        Some(h) => h.dag.max_demand().max(&asked),
        None => asked,
    }
}

/// Deterministic coin in [0, 1) for job `key`'s `n`-th plan (splitmix64).
fn coin(key: AppKey, n: u64) -> f64 {
    let mut z = key.wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_add(n.wrapping_mul(0xBF58_476D_1CE4_E5B9));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 53) as f64
}

/// The highest-priority placement, or the best-aligned one among those `keep` accepts.
#[inline]
fn best_aligned(
    app: &App,
    offer: &NodeOffer,
    capacity: &Resources,
    mut keep: impl FnMut(&Placement) -> bool,
) -> Option<Placement> {
    let mut best: Option<(f64, Placement)> = None;
    for p in app.asks.placements(offer.host, offer.rack, &offer.room_for(app)) {
        if !keep(&p) {
            continue;
        }
        let score = p.resources.alignment(&offer.free, capacity);
        if best.as_ref().is_none_or(|(b, _)| score > *b) {
            best = Some((score, p));
        }
    }
    best.map(|b| b.1)
}

impl Carbyne {
    pub fn new(altruism_probability: f64) -> Carbyne {
        Carbyne {
            altruism: altruism_probability.clamp(0.0, 1.0),
            jobs: Vec::new(),
            queues: Vec::new(),
            seen: None,
            updated: Vec::new(),
            retired: Vec::new(),
            replan: VecDeque::new(),
            due: BinaryHeap::new(),
            now: 0,
            capacity: Resources::ZERO,
            heartbeat: 0,
            started: [PhaseCount::default(); 2],
        }
    }

    /// A job's plan, for status and tests: its completion estimate and promised deadline.
    pub fn plan_of(&self, idx: AppIdx) -> Option<&Plan> {
        self.jobs.get(idx)?.as_ref()?.plan.as_ref().map(|p| &p.plan)
    }

    /// The DRF share of a job.
    pub fn share_of(&self, idx: AppIdx) -> Option<Resources> {
        self.jobs.get(idx)?.as_ref().map(|j| j.share)
    }

    fn job_live(&self, state: &ClusterState, idx: AppIdx) -> bool {
        matches!((self.jobs.get(idx), state.apps.get(idx)), (Some(Some(j)), Some(Some(a))) if j.seq == a.seq)
    }

    /// Brings the job table in line with the state's apps and their hints: every slot, or only
    /// the apps whose hints changed when no app came or went.
    /// Returns whether a job's DAG came or changed: for the shares, a job arrives with its DAG.
    fn sync(&mut self, state: &ClusterState, membership_changed: bool) -> bool {
        if self.jobs.len() < state.apps.len() {
            self.jobs.resize_with(state.apps.len(), || None);
        }
        let updated = std::mem::take(&mut self.updated);
        let mut new_dag = false;
        if membership_changed {
            for idx in 0..self.jobs.len() {
                new_dag |= self.sync_job(state, idx);
            }
            self.rebuild_queues(state);
        } else {
            for &idx in &updated {
                new_dag |= self.sync_job(state, idx);
            }
        }
        self.updated = updated;
        self.updated.clear();
        new_dag
    }

    /// Returns whether the job's DAG came, went or changed.
    fn sync_job(&mut self, state: &ClusterState, idx: AppIdx) -> bool {
        let app = state.apps.get(idx).and_then(Option::as_ref);
        match (app, &mut self.jobs[idx]) {
            (None, j) => j.take().is_some_and(|j| j.hints.is_some()),
            (Some(a), Some(j)) if j.seq == a.seq => {
                let (changed, new_dag) = match (&a.hints, &j.hints) {
                    (Some(new), Some(old)) => (new.revision != old.revision, new.dag_revision != old.dag_revision),
                    (None, None) => (false, false),
                    _ => (true, true),
                };
                if changed {
                    let old = std::mem::replace(&mut j.hints, a.hints.clone());
                    self.retired.extend(old);
                    if j.hints.is_none() {
                        j.plan = None;
                        j.work = f64::INFINITY;
                    }
                    if j.hints.is_some() && !j.queued_for_plan {
                        j.queued_for_plan = true;
                        self.replan.push_back(idx);
                    }
                    self.refresh_fastest_from(idx);
                }
                new_dag
            }
            (Some(a), j) => {
                let queued = a.hints.is_some();
                *j = Some(Job {
                    key: a.key,
                    seq: a.seq,
                    queue: a.queue,
                    hints: a.hints.clone(),
                    share: Resources::ZERO,
                    share_dom: 0.0,
                    plan: None,
                    altruistic: false,
                    plans_made: 0,
                    queued_for_plan: queued,
                    work: f64::INFINITY,
                    srtf_pos: 0,
                    in_must: false,
                });
                if queued {
                    self.replan.push_back(idx);
                }
                queued
            }
        }
    }

    fn rebuild_queues(&mut self, state: &ClusterState) {
        self.queues.resize_with(state.queues.len(), QueueJobs::default);
        for (qi, q) in state.queues.iter().enumerate() {
            let jobs = &self.jobs;
            let qj = &mut self.queues[qi];
            qj.srtf.clear();
            qj.srtf.extend(q.apps.iter().copied().filter(|&s| jobs.get(s).is_some_and(Option::is_some)));
            qj.srtf.sort_by(|&a, &b| {
                let (ja, jb) = (jobs[a].as_ref().unwrap(), jobs[b].as_ref().unwrap());
                ja.srtf_key().0.total_cmp(&jb.srtf_key().0).then(ja.seq.cmp(&jb.seq))
            });
            qj.fastest_from.clear();
            qj.fastest_from.extend(qj.srtf.iter().map(|&s| jobs[s].as_ref().unwrap().fastest_from()));
            qj.must.clear();
        }
        for qi in 0..self.queues.len() {
            for pos in 0..self.queues[qi].srtf.len() {
                let idx = self.queues[qi].srtf[pos];
                let job = self.jobs[idx].as_mut().unwrap();
                job.srtf_pos = pos;
                job.in_must = false;
                if job.has_due(self.now) {
                    job.in_must = true;
                    self.queues[qi].must.push(idx);
                } else if let Some(p) = &job.plan {
                    if p.next_due_ms < i64::MAX {
                        self.due.push(Reverse((p.next_due_ms, idx, job.seq)));
                    }
                }
            }
        }
    }

    fn refresh_shares(&mut self, state: &ClusterState) {
        let entitled = queue_entitlements(state);
        let mut caps = Vec::new();
        for (qi, q) in state.queues.iter().enumerate() {
            caps.clear();
            caps.extend(q.apps.iter().map(|&s| job_cap(state.app(s))));
            let shares = drf_shares(&entitled[qi], &caps);
            for (&idx, share) in q.apps.iter().zip(shares) {
                let Some(Some(job)) = self.jobs.get_mut(idx) else { continue };
                job.share = share;
                job.share_dom = share.dominant_share(&state.capacity);
                let stale = job
                    .plan
                    .as_ref()
                    .is_some_and(|p| (job.share_dom - p.share_dom).abs() > SHARE_TOLERANCE * p.share_dom.max(1e-9));
                if stale && !job.queued_for_plan {
                    job.queued_for_plan = true;
                    self.replan.push_back(idx);
                }
            }
        }
    }

    fn replan_some(&mut self, state: &ClusterState) {
        for _ in 0..REPLANS_PER_HEARTBEAT {
            let Some(idx) = self.replan.pop_front() else { break };
            if !self.job_live(state, idx) {
                continue;
            }
            let altruism = self.altruism;
            let (now, capacity) = (self.now, self.capacity);
            let job = self.jobs[idx].as_mut().unwrap();
            job.queued_for_plan = false;
            let Some(hints) = job.hints.clone() else { continue };
            let committed = job.plan.as_ref().and_then(|p| {
                let same_share = (job.share_dom - p.share_dom).abs() <= SHARE_TOLERANCE * p.share_dom.max(1e-9);
                (p.dag_revision == hints.dag_revision && same_share).then_some(p.plan.deadline_ms)
            });
            let plan = pack::plan(&hints.dag, &job.share, now, committed);
            let fastest = pack::plan(&hints.dag, &hints.dag.max_demand().min(&capacity), now, None);
            let mut jp = JobPlan {
                consumed: vec![0; hints.dag.len()],
                next_due_ms: i64::MAX,
                fastest_due_ms: i64::MAX,
                plan,
                fastest,
                dag_revision: hints.dag_revision,
                share_dom: job.share_dom,
            };
            jp.refresh_next_due();
            job.plans_made += 1;
            job.altruistic = altruism >= 1.0 || coin(job.key, job.plans_made) < altruism;
            job.work = hints.dag.remaining_work(&capacity);
            let next_due = jp.next_due_ms;
            job.plan = Some(jp);
            let (qi, seq) = (job.queue, job.seq);
            self.reposition(qi, idx);
            let job = self.jobs[idx].as_mut().unwrap();
            if job.has_due(now) {
                if !job.in_must {
                    job.in_must = true;
                    self.queues[qi].must.push(idx);
                }
            } else if next_due < i64::MAX {
                self.due.push(Reverse((next_due, idx, seq)));
            }
        }
    }

    /// Restores the SRTF order around `idx` after its work or plan changed.
    fn reposition(&mut self, qi: QueueIdx, idx: AppIdx) {
        let Some(qj) = self.queues.get_mut(qi) else { return };
        let jobs = &mut self.jobs;
        let Some(Some(job)) = jobs.get(idx) else { return };
        let mut pos = job.srtf_pos;
        if qj.srtf.get(pos) != Some(&idx) {
            return;
        }
        let key = job.srtf_key();
        let less = |a: (f64, u64), b: (f64, u64)| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)).is_lt();
        while pos > 0 && less(key, jobs[qj.srtf[pos - 1]].as_ref().unwrap().srtf_key()) {
            qj.srtf.swap(pos, pos - 1);
            qj.fastest_from.swap(pos, pos - 1);
            jobs[qj.srtf[pos]].as_mut().unwrap().srtf_pos = pos;
            pos -= 1;
        }
        while pos + 1 < qj.srtf.len() && less(jobs[qj.srtf[pos + 1]].as_ref().unwrap().srtf_key(), key) {
            qj.srtf.swap(pos, pos + 1);
            qj.fastest_from.swap(pos, pos + 1);
            jobs[qj.srtf[pos]].as_mut().unwrap().srtf_pos = pos;
            pos += 1;
        }
        let job = jobs[idx].as_mut().unwrap();
        job.srtf_pos = pos;
        qj.fastest_from[pos] = job.fastest_from();
    }

    /// Copies the job's [`Job::fastest_from`] into its place in its queue's SRTF order.
    fn refresh_fastest_from(&mut self, idx: AppIdx) {
        let Some(Some(job)) = self.jobs.get(idx) else { return };
        let Some(qj) = self.queues.get_mut(job.queue) else { return };
        if qj.srtf.get(job.srtf_pos) == Some(&idx) {
            qj.fastest_from[job.srtf_pos] = job.fastest_from();
        }
    }

    /// A must-start placement of `job` on the offered node.
    #[inline]
    fn must_placement(&self, job: &Job, app: &App, offer: &NodeOffer) -> Option<Placement> {
        if job.greedy() {
            return app.asks.find(offer.host, offer.rack, &offer.room_for(app));
        }
        self.needed_first(job, app, offer, Need::Share(self.now))
    }

    /// A leftover placement of `job`: with `need` = [`Need::Fastest`], only a task the job
    /// needs now to finish as early as it can; with [`Need::Any`], the task its plan needs
    /// earliest. Without a plan, the best-aligned ask, and YARN's order for an app without
    /// hints: such apps' needs are unknown, so they take from the leftover in either pass.
    fn leftover_placement(&self, job: &Job, app: &App, offer: &NodeOffer, need: Need) -> Option<Placement> {
        match (&job.hints, &job.plan) {
            (None, _) => app.asks.find(offer.host, offer.rack, &offer.room_for(app)),
            (Some(_), None) => best_aligned(app, offer, &self.capacity, |_| true),
            (Some(_), Some(p)) => {
                if matches!(need, Need::Fastest(now) if p.fastest_due_ms > now) {
                    return None;
                }
                self.needed_first(job, app, offer, need)
            }
        }
    }

    /// The placement of a planned job whose task the plan needs earliest (its stage's next
    /// latest start), the best-aligned among equals, among those `need` admits. Ordering by
    /// latest start runs the critical path first, as the DAG priorities the paper's AMs attach
    /// to their asks do (§4.2). Asks at priorities the hints do not map come first, as
    /// must-start; a stage whose planned tasks have all started comes last.
    fn needed_first(&self, job: &Job, app: &App, offer: &NodeOffer, need: Need) -> Option<Placement> {
        let (hints, plan) = (job.hints.as_ref()?, job.plan.as_ref()?);
        let mut best: Option<(i64, f64, Placement)> = None;
        for p in app.asks.placements(offer.host, offer.rack, &offer.room_for(app)) {
            let stages = hints.stages_at(p.priority);
            let slot_in = |which: &Plan| match plan.earliest_slot(which, stages) {
                Some((t, _)) => t,
                None if stages.is_empty() => i64::MIN,
                None => i64::MAX,
            };
            let slot = slot_in(&plan.plan);
            let admitted = match need {
                Need::Share(by) => slot <= by,
                Need::Fastest(by) => slot_in(&plan.fastest) <= by,
                Need::Any => true,
            };
            if !admitted {
                continue;
            }
            let score = p.resources.alignment(&offer.free, &self.capacity);
            if best.as_ref().is_none_or(|(t, a, _)| slot < *t || (slot == *t && score > *a)) {
                best = Some((slot, score, p));
            }
        }
        best.map(|b| b.2)
    }

    /// Records a container started for `idx`: it uses the earliest slot of its stage.
    fn charge(&mut self, idx: AppIdx, p: &Placement) {
        let capacity = self.capacity;
        let Some(Some(job)) = self.jobs.get_mut(idx) else { return };
        let (Some(hints), Some(plan)) = (&job.hints, &mut job.plan) else { return };
        if let Some((_, s)) = plan.earliest_slot(&plan.plan, hints.stages_at(p.priority)) {
            plan.consumed[s] += 1;
            plan.refresh_next_due();
            job.work = (job.work - hints.dag.task_work(s, &capacity)).max(0.0);
            let qi = job.queue;
            self.reposition(qi, idx);
        }
    }

    /// The phase-one heap key of a job: (remaining work, seq, slot), or None when the job has
    /// nothing to start within its share now.
    fn must_key(&self, state: &ClusterState, idx: AppIdx) -> Option<(u64, u64, AppIdx)> {
        let job = self.jobs.get(idx)?.as_ref()?;
        let app = state.apps.get(idx)?.as_ref()?;
        if app.seq != job.seq || !job.has_due(self.now) || app.asks.pending_containers() == 0 {
            return None;
        }
        let dom = app.usage.dominant_share(&self.capacity);
        // A share below one task rounds to zero; such a job still gets a first container.
        let ratio = if job.share_dom > 0.0 {
            dom / job.share_dom
        } else if app.running_containers == 0 {
            0.0
        } else {
            return None;
        };
        // Non-negative floats (infinity included: no known work) order like their bit patterns.
        (ratio < 1.0).then_some((job.work.max(0.0).to_bits(), job.seq, idx))
    }

    /// Builds the queue's phase-one heap for this heartbeat, dropping from the must list the
    /// jobs that have nothing due (they wait in the due heap for their next slot).
    fn build_heap(&mut self, state: &ClusterState, queue: QueueIdx) {
        let mut must = std::mem::take(&mut self.queues[queue].must);
        let mut keys = Vec::with_capacity(must.len());
        let now = self.now;
        must.retain(|&idx| {
            let live = self.job_live(state, idx);
            let Some(job) = self.jobs.get_mut(idx).and_then(Option::as_mut) else { return false };
            if !live || job.queue != queue {
                return false;
            }
            if !job.has_due(now) {
                job.in_must = false;
                if let Some(p) = &job.plan {
                    if p.next_due_ms < i64::MAX {
                        self.due.push(Reverse((p.next_due_ms, idx, job.seq)));
                    }
                }
                return false;
            }
            true
        });
        for &idx in &must {
            if let Some(k) = self.must_key(state, idx) {
                keys.push(Reverse(k));
            }
        }
        let qj = &mut self.queues[queue];
        qj.must = must;
        qj.heap = BinaryHeap::from(keys);
        qj.heap_heartbeat = self.heartbeat;
    }

    /// The first job in SRTF order with a leftover placement that `need` admits.
    fn leftover_pass(
        &self,
        state: &ClusterState,
        queue: QueueIdx,
        offer: &NodeOffer,
        need: Need,
    ) -> Option<(AppIdx, Placement)> {
        let qj = &self.queues[queue];
        let by = match need {
            Need::Fastest(now) => now,
            _ => i64::MAX,
        };
        qj.srtf.iter().zip(&qj.fastest_from).filter(|&(_, &from)| from <= by).find_map(|(&idx, _)| {
            let (Some(Some(job)), Some(Some(app))) = (self.jobs.get(idx), state.apps.get(idx)) else { return None };
            if app.seq != job.seq || app.asks.pending_containers() == 0 {
                return None;
            }
            self.leftover_placement(job, app, offer, need).map(|p| (idx, p))
        })
    }

    /// P(altruism) = 0: DRF among the queue's jobs, YARN order inside a job.
    fn drf(&self, state: &ClusterState, queue: QueueIdx, offer: &NodeOffer) -> Option<(AppIdx, Placement)> {
        super::job_fair::least_used_app(state, queue, offer)
    }
}

impl AppPolicy for Carbyne {
    fn name(&self) -> &'static str {
        "carbyne"
    }

    fn begin_heartbeat(&mut self, state: &ClusterState, now_ms: i64) {
        self.now = now_ms;
        self.heartbeat += 1;
        self.capacity = state.capacity;
        let seen = Seen {
            next_app_seq: state.next_app_seq,
            apps: state.app_count(),
            capacity: state.capacity,
            queues: state.queues.len(),
        };
        let membership = self.seen != Some(seen);
        let mut new_dag = false;
        if membership || !self.updated.is_empty() {
            self.seen = Some(seen);
            new_dag = self.sync(state, membership);
        }
        // As the authors' scheduler does, shares change when a job (its DAG) arrives or
        // completes only; a refresh every second as well (jobs' caps move with progress) changed
        // average JCTs by under 1% at reduced size and costs a DRF pass per queue per second.
        if membership || new_dag {
            self.refresh_shares(state);
        }
        self.replan_some(state);
        while let Some(&Reverse((at, idx, seq))) = self.due.peek() {
            if at > now_ms {
                break;
            }
            self.due.pop();
            let Some(Some(job)) = self.jobs.get_mut(idx) else { continue };
            if job.seq != seq || job.in_must || !job.has_due(now_ms) {
                continue;
            }
            job.in_must = true;
            if let Some(qj) = self.queues.get_mut(job.queue) {
                qj.must.push(idx);
            }
        }
    }

    fn on_app_updated(&mut self, _state: &ClusterState, idx: AppIdx) {
        self.retired.clear();
        self.updated.push(idx);
    }

    fn select(&mut self, state: &ClusterState, queue: QueueIdx, offer: &NodeOffer) -> Option<(AppIdx, Placement)> {
        if let Some(hit) = offer.app_waiting_for_am(state, queue, true) {
            return Some(hit);
        }
        if self.altruism <= 0.0 {
            return self.drf(state, queue, offer);
        }
        if self.queues.len() <= queue {
            return None;
        }
        // A node that cannot take the smallest ask of any of the queue's apps starts nothing
        // here. A queue that starts nothing sits out the rest of the heartbeat, so its heap is
        // never needed then.
        let q = &state.queues[queue];
        if !q.started_pending.may_fit(&offer.free) && !q.unstarted_pending.may_fit(&offer.free) {
            return None;
        }
        // Must-start asks within shares, least remaining work first.
        if self.queues[queue].heap_heartbeat != self.heartbeat {
            self.build_heap(state, queue);
        }
        let mut best: Option<(AppIdx, Placement)> = None;
        while let Some(Reverse((_, _, idx))) = self.queues[queue].heap.pop() {
            let job = self.jobs[idx].as_ref().expect("heap holds live jobs");
            if let Some(p) = self.must_placement(job, state.app(idx), offer) {
                best = Some((idx, p));
                break;
            }
        }
        let pick = match best {
            Some(hit) => Some(hit),
            // Leftover: jobs in SRTF order take what their fastest finish needs now, which
            // spreads it over many jobs; then one work-conserving pass in the same order.
            None => self
                .leftover_pass(state, queue, offer, Need::Fastest(self.now))
                .or_else(|| self.leftover_pass(state, queue, offer, Need::Any)),
        };
        if let Some((idx, p)) = &pick {
            let phase = &mut self.started[usize::from(best.is_none())];
            phase.containers += 1;
            phase.dominant_shares += p.resources.dominant_share(&self.capacity);
            self.charge(*idx, p);
            if best.is_some() {
                // Back in line with its new usage, if it still has must-start work in its share.
                if let Some(key) = self.must_key(state, *idx) {
                    self.queues[queue].heap.push(Reverse(key));
                }
            }
        }
        pick
    }

    fn view(&self) -> Option<serde_json::Value> {
        let [within_share, leftover] = self.started;
        let total = within_share.dominant_shares + leftover.dominant_shares;
        let leftover_fraction = if total > 0.0 { leftover.dominant_shares / total } else { 0.0 };
        Some(serde_json::json!({
            "started_within_share": within_share,
            "started_from_leftover": leftover,
            "leftover_fraction": leftover_fraction,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coin_is_uniform_enough_and_deterministic() {
        let n = 10_000;
        let below: usize = (0..n).filter(|&i| coin(i as u64, 1) < 0.3).count();
        assert!((2_700..3_300).contains(&below), "{below}");
        assert_eq!(coin(5, 7), coin(5, 7));
    }
}
