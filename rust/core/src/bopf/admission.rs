//! BoPF admission control: the safety (1), fairness (2) and resource (3) conditions of the BoPF
//! paper (§3.3, Algorithm 1) that sort queues into Hard, Soft and Elastic classes or reject them.
//!
//! # Demand convention
//!
//! A burst's `demand` is the **total resource-time of one burst**, in resource-seconds: memory in
//! MB·s, vcores in vcore·s, bandwidth dimensions in Mbps·s (the units YARN reports as
//! "MB-seconds" and "vcore-seconds"). This is the final BoPF paper's `d_i(n)`. The rate a hard
//! queue is guaranteed while a burst is ON is `demand / deadline` (Algorithm 1, line 32). The
//! earlier BPF draft wrote `d_i(n)` for that rate and `d_i(n)·t_i(n)` for the total; the two
//! readings give the same conditions once translated.
//!
//! # Time model
//!
//! LQ-i's n-th burst arrives at `T_i(n) = start_ms + n·period_ms`, must finish by
//! `T_i(n) + deadline_ms`, and the queue has `cycles` bursts (the paper's simulations use 500).
//! Times are milliseconds since an epoch the caller chooses (e.g. the ResourceManager's start).
//! With a fixed period and demand, "for all n" in (1) and (2) collapses to one comparison per
//! queue; only (3) depends on where the bursts fall in time.
//!
//! # Complexity of admitting one queue
//!
//! * Safety (1): every H∪S queue keeps its long-term share `max_k d^k / (C^k · period)` in an
//!   ordered set, so the check looks at the largest share only: `O(log Q)`.
//! * Fairness (2): `O(K)` on the new queue alone.
//! * Resource (3): the H class's commitments are aggregated into one committed-rate profile
//!   over time ([`CommittedProfile`], slots with two levels of block summaries); each of the new
//!   queue's W windows of L slots is matched against it in `O(K · (16 + min(L, 256) / 8 +
//!   L / 256))`, and committing it to H costs the same. Nothing iterates the admitted queues or
//!   their cycles: admission is `O(log Q + K · W · (16 + min(L, 256) / 8 + L / 256))` for Q
//!   admitted queues.
//! * Bounds: the spec limits ([`super::spec::MAX_CYCLES`], [`super::spec::MAX_PERIOD_MS`],
//!   [`super::spec::MAX_HORIZON_MS`]) and the profile's size limit ([`MAX_POINTS`]) are checked
//!   before any window is laid out, so no request can make admission allocate more than about
//!   36 MB or walk more than `MAX_CYCLES` windows.

use std::collections::{BTreeSet, HashMap};
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::profile::{CommittedProfile, SlotRange, MAX_POINTS};
use super::spec::{ceil_div, spec_error};
use super::spec::{AdmissionError, BurstSpec, LqSpec, QueueSpec, TqSpec};
use crate::resource::{ResourceKind, Resources, DIMS};

/// Default slot length of the committed-rate profile.
pub const DEFAULT_RESOLUTION_MS: u64 = 1000;
/// Committed rates are fixed-point millionths of a resource unit, so releasing a commitment
/// restores the profile exactly (floating-point sums would drift).
const RATE_SCALE: i64 = 1_000_000;

/// The outcome of admission control, best class first.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AdmissionClass {
    /// H: guaranteed `demand / deadline` during every ON window.
    Hard,
    /// S: served from what H leaves, SRPT among S, before any Elastic queue.
    Soft,
    /// E: long-term fair share only (all TQs, and LQs asking more than their fair share).
    Elastic,
    /// Not admitted: admitting it would break a hard or soft commitment.
    Rejected,
}

/// The paper's numbered conditions.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Condition {
    /// (1): no admitted H or S queue's burst exceeds its fair share once one more queue is in.
    Safety,
    /// (2): the new LQ's own burst fits its fair share.
    Fairness,
    /// (3): the new LQ's rate fits what H has not committed during each of its ON windows.
    Resource,
}

/// BoPF, or the paper's N-BoPF baseline that has no Soft class.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BopfMode {
    #[default]
    Bopf,
    /// LQs that BoPF would put in Soft go to Elastic (§5.1 baselines).
    NBopf,
}

fn default_n_min() -> u32 {
    1
}

fn default_resolution() -> u64 {
    DEFAULT_RESOLUTION_MS
}

/// Admission-control settings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AdmissionConfig {
    /// Cluster capacity `C`.
    pub capacity: Resources,
    /// The number of queues the system expects to admit at least, `N_min`: fair shares are
    /// computed for `max(N + 1, N_min)` queues.
    #[serde(default = "default_n_min")]
    pub n_min: u32,
    #[serde(default)]
    pub mode: BopfMode,
    /// Slot length of the committed-rate profile. Condition (3) is exact when arrivals, periods
    /// and deadlines are multiples of it; otherwise windows are widened to whole slots, which can
    /// only make (3) stricter, never admit a queue to H that would overcommit.
    #[serde(default = "default_resolution")]
    pub resolution_ms: u64,
}

impl AdmissionConfig {
    pub fn new(capacity: Resources) -> Self {
        AdmissionConfig { capacity, n_min: default_n_min(), mode: BopfMode::Bopf, resolution_ms: DEFAULT_RESOLUTION_MS }
    }
}

/// The result of one admission.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    pub queue: String,
    pub class: AdmissionClass,
    /// The condition that decided against a better class, if any.
    pub failed: Option<Condition>,
    /// Human-readable account naming the condition and the numbers.
    pub reason: String,
}

/// A class change made by [`AdmissionController::reevaluate`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Reclassification {
    pub queue: String,
    pub from: AdmissionClass,
    pub to: AdmissionClass,
    pub reason: String,
}

/// An admitted queue as seen from outside.
#[derive(Copy, Clone, Debug)]
pub struct AdmittedQueue<'a> {
    pub spec: &'a QueueSpec,
    pub class: AdmissionClass,
}

/// Formats a number for a reason string: integers as integers, others with 4 decimals, trimmed.
fn num(x: f64) -> String {
    if x.is_infinite() {
        return if x > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if x.fract() == 0.0 && x.abs() < 1e15 {
        return format!("{}", x as i64);
    }
    let s = format!("{x:.4}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" || s.is_empty() {
        "0".into()
    } else {
        s.to_string()
    }
}

/// A fair-share violation: the worst resource and the numbers of `d > C · P / M`.
struct ShareViolation {
    kind: ResourceKind,
    demand: i64,
    capacity: i64,
    period_ms: u64,
}

impl ShareViolation {
    fn describe(&self, m: u64, n_plus_1: u64, n_min: u32) -> String {
        let share = self.capacity as f64 * self.period_ms as f64 / 1000.0 / m as f64;
        format!(
            "burst demand {} > fair share {} {}-seconds = capacity {} x period {} s / max(N+1={}, N_min={})",
            self.demand,
            num(share),
            self.kind.name(),
            self.capacity,
            num(self.period_ms as f64 / 1000.0),
            n_plus_1,
            n_min
        )
    }
}

/// Checks `d^k ≤ C^k · P / M` for every resource exactly (integer arithmetic), returning the
/// resource with the largest share among the violated ones.
fn fair_share_violation(burst: &BurstSpec, cap: &Resources, m: u64) -> Option<ShareViolation> {
    let mut worst: Option<(f64, usize)> = None;
    for k in 0..DIMS {
        let d = burst.demand.0[k];
        if d <= 0 {
            continue;
        }
        let lhs = i128::from(d) * i128::from(m) * 1000;
        let rhs = i128::from(cap.0[k]) * i128::from(burst.period_ms);
        if lhs > rhs {
            let share = if cap.0[k] > 0 { lhs as f64 / rhs as f64 } else { f64::INFINITY };
            if worst.is_none_or(|(s, _)| share > s) {
                worst = Some((share, k));
            }
        }
    }
    worst.map(|(_, k)| ShareViolation {
        kind: ResourceKind::ALL[k],
        demand: burst.demand.0[k],
        capacity: cap.0[k],
        period_ms: burst.period_ms,
    })
}

/// `max_k d^k / (C^k · P)`, the fraction of the cluster's resource-time per period one burst
/// takes; the safety index orders H∪S queues by it.
fn long_term_share(burst: &BurstSpec, cap: &Resources) -> f64 {
    let mut s = 0.0f64;
    for k in 0..DIMS {
        let d = burst.demand.0[k];
        if d > 0 {
            let c = cap.0[k] as f64 * burst.period_ms as f64 / 1000.0;
            s = s.max(if c > 0.0 { d as f64 / c } else { f64::INFINITY });
        }
    }
    s
}

/// Key of the safety index: the share's bit pattern (order-preserving for non-negative floats)
/// and the queue's slot.
type ShareKey = (u64, u32);

#[derive(Clone, Debug)]
struct Entry {
    spec: QueueSpec,
    class: AdmissionClass,
    /// Admission order; re-evaluation goes first-come first-served.
    seq: u64,
    /// Fixed-point guaranteed rate, committed to the profile while the queue is in H.
    rate_fp: [i64; DIMS],
}

/// What condition (3) found for one LQ.
struct ResourceCheck {
    rate_fp: [i64; DIMS],
    /// The worst resource and its committed peak over the LQ's windows.
    worst: usize,
    committed_fp: i64,
    fits: bool,
}

/// BoPF admission control over one cluster.
///
/// Holds the capacity, the admitted queues with their classes, an index of the H∪S queues by
/// long-term share for the safety condition, and the H class's committed-rate profile for the
/// resource condition.
#[derive(Clone, Debug)]
pub struct AdmissionController {
    config: AdmissionConfig,
    cap_fp: [i64; DIMS],
    entries: Vec<Option<Entry>>,
    free: Vec<u32>,
    by_name: HashMap<String, u32>,
    counts: [usize; 3],
    guaranteed: BTreeSet<ShareKey>,
    profile: CommittedProfile,
    next_seq: u64,
    scratch: Vec<SlotRange>,
}

fn class_index(c: AdmissionClass) -> usize {
    match c {
        AdmissionClass::Hard => 0,
        AdmissionClass::Soft => 1,
        AdmissionClass::Elastic => 2,
        AdmissionClass::Rejected => unreachable!("rejected queues are not held"),
    }
}

impl AdmissionController {
    pub fn new(config: AdmissionConfig) -> Result<Self, AdmissionError> {
        let bad =
            |field: &str, problem: String| Err(AdmissionError::InvalidConfig { field: field.to_string(), problem });
        if config.resolution_ms == 0 {
            return bad("resolution_ms", "must be positive".into());
        }
        if config.capacity.is_zero() {
            return bad("capacity", "is zero in every resource".into());
        }
        let mut cap_fp = [0i64; DIMS];
        for kind in ResourceKind::ALL {
            let c = config.capacity.get(kind);
            let field = format!("capacity.{}", kind.name());
            if c < 0 {
                return bad(&field, format!("is negative ({c})"));
            }
            match c.checked_mul(RATE_SCALE) {
                // Headroom so committed + requested never overflows.
                Some(v) if v <= i64::MAX / 4 => cap_fp[kind as usize] = v,
                _ => return bad(&field, format!("{c} is too large")),
            }
        }
        Ok(AdmissionController {
            profile: CommittedProfile::new(&config.capacity.0.map(|c| c > 0)),
            config,
            cap_fp,
            entries: Vec::new(),
            free: Vec::new(),
            by_name: HashMap::new(),
            counts: [0; 3],
            guaranteed: BTreeSet::new(),
            next_seq: 0,
            scratch: Vec::new(),
        })
    }

    pub fn config(&self) -> &AdmissionConfig {
        &self.config
    }

    /// Number of admitted queues, `|H| + |S| + |E|`.
    pub fn len(&self) -> usize {
        self.by_name.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }

    /// Number of admitted queues in `class` (0 for `Rejected`).
    pub fn count(&self, class: AdmissionClass) -> usize {
        match class {
            AdmissionClass::Rejected => 0,
            c => self.counts[class_index(c)],
        }
    }

    pub fn class_of(&self, name: &str) -> Option<AdmissionClass> {
        self.entry(name).map(|e| e.class)
    }

    pub fn spec_of(&self, name: &str) -> Option<&QueueSpec> {
        self.entry(name).map(|e| &e.spec)
    }

    /// Admitted queues in admission order.
    pub fn queues(&self) -> Vec<AdmittedQueue<'_>> {
        let mut v: Vec<&Entry> = self.entries.iter().flatten().collect();
        v.sort_by_key(|e| e.seq);
        v.into_iter().map(|e| AdmittedQueue { spec: &e.spec, class: e.class }).collect()
    }

    /// The rate an H or S queue is entitled to while a burst is ON (`demand / deadline`, rounded
    /// up); `None` for TQs, Elastic LQs and unknown queues.
    pub fn guaranteed_rate(&self, name: &str) -> Option<Resources> {
        match self.entry(name)? {
            Entry { spec: QueueSpec::Lq(lq), class: AdmissionClass::Hard | AdmissionClass::Soft, .. } => {
                Some(lq.rate_ceil())
            }
            _ => None,
        }
    }

    /// Peak share of capacity committed to H, per resource, over `[from_ms, to_ms)` (as the
    /// profile sees it, i.e. at slot resolution).
    pub fn committed_share(&self, from_ms: u64, to_ms: u64) -> [f64; DIMS] {
        let res = self.config.resolution_ms;
        let (lo, hi) = (from_ms / res, to_ms.div_ceil(res));
        let peak = if lo < hi { self.profile.max_over(&[(lo, hi)]) } else { [0; DIMS] };
        self.to_shares(&peak)
    }

    /// Peak share of capacity committed to H over all time, per resource.
    pub fn peak_committed_share(&self) -> [f64; DIMS] {
        self.to_shares(&self.profile.peak())
    }

    fn to_shares(&self, fp: &[i64; DIMS]) -> [f64; DIMS] {
        let mut out = [0.0; DIMS];
        for k in 0..DIMS {
            if self.cap_fp[k] > 0 {
                out[k] = fp[k] as f64 / self.cap_fp[k] as f64;
            }
        }
        out
    }

    fn entry(&self, name: &str) -> Option<&Entry> {
        let id = *self.by_name.get(name)?;
        self.entries[id as usize].as_ref()
    }

    /// `max(N + 1, N_min)` for a queue arriving now.
    fn m_for_new(&self) -> u64 {
        (self.len() as u64 + 1).max(u64::from(self.config.n_min))
    }

    /// Safety condition (1) at fair-share divisor `m`: every H∪S queue's burst fits
    /// `C · P / m`. Walks the index from the largest share down and stops at the first share
    /// that clears the bound by more than float rounding, so usually one entry is inspected;
    /// the comparison itself is exact.
    fn safety_violation(&self, m: u64) -> Option<(u32, ShareViolation)> {
        let bound = 1.0 / m as f64;
        for &(bits, id) in self.guaranteed.iter().rev() {
            if f64::from_bits(bits) < bound * (1.0 - 1e-9) {
                break;
            }
            let Some(Entry { spec: QueueSpec::Lq(lq), .. }) = &self.entries[id as usize] else {
                unreachable!("safety index holds only admitted LQs");
            };
            if let Some(v) = fair_share_violation(&lq.burst, &self.config.capacity, m) {
                return Some((id, v));
            }
        }
        None
    }

    fn safety_reason(&self, id: u32, v: &ShareViolation, m: u64) -> String {
        let name = self.entries[id as usize].as_ref().map_or("?", |e| e.spec.name());
        format!(
            "safety condition (1) fails for admitted queue '{}' on {}: {}",
            name,
            v.kind.name(),
            v.describe(m, self.len() as u64 + 1, self.config.n_min)
        )
    }

    /// The fixed-point rate `lq` is guaranteed in H, per resource (clamped just above capacity:
    /// a larger rate can never be committed, and the clamp keeps sums in range).
    fn rate_fp(&self, lq: &LqSpec) -> [i64; DIMS] {
        let mut rate = [0i64; DIMS];
        for (k, r) in rate.iter_mut().enumerate() {
            let d = lq.burst.demand.0[k];
            let exact = ceil_div(i128::from(d) * 1000 * i128::from(RATE_SCALE), i128::from(lq.burst.deadline_ms));
            *r = exact.min(i128::from(self.cap_fp[k]) + 1) as i64;
        }
        rate
    }

    /// Resource condition (3) for `lq` given the peak H commitment over its windows.
    fn resource_check(&self, lq: &LqSpec, committed: &[i64; DIMS]) -> ResourceCheck {
        let rate_fp = self.rate_fp(lq);
        let mut worst = None::<(f64, usize)>;
        let mut fits = true;
        for k in 0..DIMS {
            if rate_fp[k] == 0 {
                continue;
            }
            let total = committed[k] + rate_fp[k];
            fits &= total <= self.cap_fp[k];
            let load = if self.cap_fp[k] > 0 { total as f64 / self.cap_fp[k] as f64 } else { f64::INFINITY };
            if worst.is_none_or(|(l, _)| load > l) {
                worst = Some((load, k));
            }
        }
        let (_, worst) = worst.expect("validated demand is non-zero");
        ResourceCheck { rate_fp, worst, committed_fp: committed[worst], fits }
    }

    fn resource_numbers(&self, rc: &ResourceCheck, windows: u32) -> String {
        let k = rc.worst;
        let share = |fp: i64| {
            if self.cap_fp[k] > 0 {
                num(fp as f64 / self.cap_fp[k] as f64)
            } else {
                "inf".into()
            }
        };
        format!(
            "on {}: committed {} + requested {} {} 1.0 (peak of hard commitments over the queue's {} ON windows)",
            ResourceKind::ALL[k].name(),
            share(rc.committed_fp),
            share(rc.rate_fp[k]),
            if rc.fits { "<=" } else { ">" },
            windows
        )
    }

    /// Conditions (1) and (2) for a new LQ: the decision if either fails.
    fn safety_and_fairness(&self, lq: &LqSpec) -> Option<Decision> {
        let m = self.m_for_new();
        let n_plus_1 = self.len() as u64 + 1;
        let decision = |class, failed, reason| Decision { queue: lq.name.clone(), class, failed: Some(failed), reason };
        if let Some((id, v)) = self.safety_violation(m) {
            return Some(decision(AdmissionClass::Rejected, Condition::Safety, self.safety_reason(id, &v, m)));
        }
        let v = fair_share_violation(&lq.burst, &self.config.capacity, m)?;
        let reason = format!(
            "fairness condition (2) fails on {}: {}",
            v.kind.name(),
            v.describe(m, n_plus_1, self.config.n_min)
        );
        Some(decision(AdmissionClass::Elastic, Condition::Fairness, reason))
    }

    /// The class condition (3) gives an LQ that passed (1) and (2).
    fn resource_decision(&self, lq: &LqSpec, rc: &ResourceCheck) -> Decision {
        let numbers = self.resource_numbers(rc, lq.cycles);
        let (class, failed, reason) = if rc.fits {
            (AdmissionClass::Hard, None, format!("safety (1), fairness (2) and resource (3) hold; {numbers}"))
        } else {
            match self.config.mode {
                BopfMode::Bopf => (
                    AdmissionClass::Soft,
                    Some(Condition::Resource),
                    format!("resource condition (3) fails {numbers}; safety (1) and fairness (2) hold"),
                ),
                BopfMode::NBopf => (
                    AdmissionClass::Elastic,
                    Some(Condition::Resource),
                    format!("resource condition (3) fails {numbers}; N-BoPF has no soft class"),
                ),
            }
        };
        Decision { queue: lq.name.clone(), class, failed, reason }
    }

    /// Runs conditions (1)-(3) for `lq` against the current state without changing it.
    fn evaluate_lq(&self, lq: &LqSpec, ranges: &[SlotRange]) -> Decision {
        if let Some(d) = self.safety_and_fairness(lq) {
            return d;
        }
        let rc = self.resource_check(lq, &self.profile.max_over(ranges));
        self.resource_decision(lq, &rc)
    }

    fn evaluate_tq(&self, tq: &TqSpec) -> Decision {
        let m = self.m_for_new();
        let (class, failed, reason) = match self.safety_violation(m) {
            Some((id, v)) => (AdmissionClass::Rejected, Some(Condition::Safety), self.safety_reason(id, &v, m)),
            None => (
                AdmissionClass::Elastic,
                None,
                format!(
                    "safety condition (1) holds for all {} hard/soft queues at max(N+1={}, N_min={})",
                    self.guaranteed.len(),
                    self.len() + 1,
                    self.config.n_min
                ),
            ),
        };
        Decision { queue: tq.name.clone(), class, failed, reason }
    }

    fn check_new(&self, spec: &QueueSpec) -> Result<(), AdmissionError> {
        match spec {
            QueueSpec::Lq(lq) => {
                lq.validate()?;
                let b = &lq.burst;
                let end = lq.start_ms + u64::from(lq.cycles - 1) * b.period_ms + b.deadline_ms;
                let end_slot = end.div_ceil(self.config.resolution_ms);
                let max_span = self.profile.max_span();
                if end_slot > max_span {
                    return Err(spec_error(
                        &lq.name,
                        "cycles",
                        format!(
                            "put the last burst at {end} ms, beyond the profile limit of {MAX_POINTS} points \
                             ({max_span} slots of {} ms for the cluster's resources)",
                            self.config.resolution_ms
                        ),
                    ));
                }
            }
            QueueSpec::Tq(tq) => tq.validate()?,
        }
        if self.by_name.contains_key(spec.name()) {
            return Err(AdmissionError::DuplicateQueue(spec.name().to_string()));
        }
        Ok(())
    }

    /// What admitting `spec` now would decide, without admitting it.
    pub fn assess(&self, spec: &QueueSpec) -> Result<Decision, AdmissionError> {
        self.check_new(spec)?;
        Ok(match spec {
            QueueSpec::Lq(lq) => {
                let mut ranges = Vec::new();
                lq.slot_ranges(self.config.resolution_ms, &mut ranges);
                self.evaluate_lq(lq, &ranges)
            }
            QueueSpec::Tq(tq) => self.evaluate_tq(tq),
        })
    }

    /// LQADMIT of Algorithm 1 for one queue. A rejected queue is not held.
    pub fn admit_lq(&mut self, lq: LqSpec) -> Result<Decision, AdmissionError> {
        self.admit(QueueSpec::Lq(lq))
    }

    /// TQADMIT of Algorithm 1 for one queue: safety (1) only, then Elastic.
    pub fn admit_tq(&mut self, tq: TqSpec) -> Result<Decision, AdmissionError> {
        self.admit(QueueSpec::Tq(tq))
    }

    /// Admits either kind of queue; errors only for invalid specs and duplicate names.
    pub fn admit(&mut self, spec: QueueSpec) -> Result<Decision, AdmissionError> {
        self.check_new(&spec)?;
        let mut ranges = std::mem::take(&mut self.scratch);
        let (decision, rate_fp) = match &spec {
            QueueSpec::Lq(lq) => match self.safety_and_fairness(lq) {
                Some(d) => (d, [0; DIMS]),
                None => {
                    // Commit optimistically and read the prior peak in the same pass; one walk
                    // over the windows instead of two when the queue lands in H, an exact
                    // integer rollback when it does not.
                    lq.slot_ranges(self.config.resolution_ms, &mut ranges);
                    let rate = self.rate_fp(lq);
                    let committed = self.profile.add_and_max(&ranges, &rate);
                    let rc = self.resource_check(lq, &committed);
                    if !rc.fits {
                        self.profile.add(&ranges, &rate.map(|r| -r));
                    }
                    let d = self.resource_decision(lq, &rc);
                    (d, if rc.fits { rate } else { [0; DIMS] })
                }
            },
            QueueSpec::Tq(tq) => (self.evaluate_tq(tq), [0; DIMS]),
        };
        if decision.class != AdmissionClass::Rejected {
            self.insert(spec, decision.class, rate_fp);
        }
        self.scratch = ranges;
        Ok(decision)
    }

    fn insert(&mut self, spec: QueueSpec, class: AdmissionClass, rate_fp: [i64; DIMS]) {
        let id = match self.free.pop() {
            Some(id) => id,
            None => {
                self.entries.push(None);
                (self.entries.len() - 1) as u32
            }
        };
        if matches!(class, AdmissionClass::Hard | AdmissionClass::Soft) {
            self.guaranteed.insert(self.share_key(&spec, id));
        }
        self.by_name.insert(spec.name().to_string(), id);
        self.counts[class_index(class)] += 1;
        self.entries[id as usize] = Some(Entry { spec, class, seq: self.next_seq, rate_fp });
        self.next_seq += 1;
    }

    fn share_key(&self, spec: &QueueSpec, id: u32) -> ShareKey {
        let QueueSpec::Lq(lq) = spec else { unreachable!("only LQs hold guarantees") };
        (long_term_share(&lq.burst, &self.config.capacity).to_bits(), id)
    }

    /// Removes an admitted queue and releases its commitment; returns the class it held. Classes
    /// of the remaining queues are unchanged until [`AdmissionController::reevaluate`].
    pub fn remove(&mut self, name: &str) -> Result<AdmissionClass, AdmissionError> {
        let id = self.by_name.remove(name).ok_or_else(|| AdmissionError::UnknownQueue(name.to_string()))?;
        let entry = self.entries[id as usize].take().expect("name index points at a live entry");
        self.free.push(id);
        self.counts[class_index(entry.class)] -= 1;
        if matches!(entry.class, AdmissionClass::Hard | AdmissionClass::Soft) {
            let key = self.share_key(&entry.spec, id);
            self.guaranteed.remove(&key);
        }
        if entry.class == AdmissionClass::Hard {
            self.commit(&entry.spec, &entry.rate_fp, -1);
        }
        Ok(entry.class)
    }

    /// Adds (`sign = 1`) or releases (`sign = -1`) an H queue's rate over its windows.
    fn commit(&mut self, spec: &QueueSpec, rate_fp: &[i64; DIMS], sign: i64) {
        let QueueSpec::Lq(lq) = spec else { unreachable!("only LQs are hard") };
        let mut ranges = std::mem::take(&mut self.scratch);
        lq.slot_ranges(self.config.resolution_ms, &mut ranges);
        let mut delta = *rate_fp;
        delta.iter_mut().for_each(|d| *d *= sign);
        self.profile.add(&ranges, &delta);
        self.scratch = ranges;
    }

    /// Re-runs the conditions for Soft and Elastic LQs, first come first served, after removals
    /// freed room: an S queue moves to H when (3) now holds; an E LQ moves to H or S when (2)
    /// holds for today's `max(N, N_min)` (it is already counted in N). Nobody is demoted: removals
    /// only loosen the conditions. Returns the changes made. Costs one condition check per S or
    /// E LQ, so it belongs after removals, not on every heartbeat.
    pub fn reevaluate(&mut self) -> Vec<Reclassification> {
        let m = (self.len() as u64).max(u64::from(self.config.n_min));
        let mut candidates: Vec<(u64, u32)> = self
            .entries
            .iter()
            .enumerate()
            .filter_map(|(id, e)| {
                let e = e.as_ref()?;
                let lq = matches!(e.spec, QueueSpec::Lq(_));
                (lq && matches!(e.class, AdmissionClass::Soft | AdmissionClass::Elastic)).then_some((e.seq, id as u32))
            })
            .collect();
        candidates.sort_unstable();
        let mut changes = Vec::new();
        let mut ranges = std::mem::take(&mut self.scratch);
        for (_, id) in candidates {
            let entry = self.entries[id as usize].as_ref().expect("candidate is live");
            let QueueSpec::Lq(lq) = &entry.spec else { unreachable!() };
            let from = entry.class;
            if from == AdmissionClass::Elastic && fair_share_violation(&lq.burst, &self.config.capacity, m).is_some() {
                continue;
            }
            lq.slot_ranges(self.config.resolution_ms, &mut ranges);
            let rc = self.resource_check(lq, &self.profile.max_over(&ranges));
            let numbers = self.resource_numbers(&rc, lq.cycles);
            let (to, reason) = if rc.fits {
                (AdmissionClass::Hard, format!("resource condition (3) now holds {numbers}"))
            } else if from == AdmissionClass::Elastic && self.config.mode == BopfMode::Bopf {
                (
                    AdmissionClass::Soft,
                    format!("fairness condition (2) now holds; resource condition (3) fails {numbers}"),
                )
            } else {
                continue;
            };
            let name = lq.name.clone();
            let key = self.share_key(&entry.spec, id);
            if to == AdmissionClass::Hard {
                self.profile.add(&ranges, &rc.rate_fp);
            }
            if from == AdmissionClass::Elastic {
                self.guaranteed.insert(key);
            }
            let e = self.entries[id as usize].as_mut().expect("candidate is live");
            e.class = to;
            e.rate_fp = if to == AdmissionClass::Hard { rc.rate_fp } else { [0; DIMS] };
            self.counts[class_index(from)] -= 1;
            self.counts[class_index(to)] += 1;
            changes.push(Reclassification { queue: name, from, to, reason });
        }
        self.scratch = ranges;
        changes
    }

    /// Checks the invariants admission control promises, from scratch: every H∪S queue passes
    /// safety (1) at today's `max(N, N_min)`, H commitments never exceed capacity at any slot,
    /// and the indexes agree with the queue list. Linear in the queues; meant for tests and
    /// debugging.
    pub fn audit(&self) -> Result<(), String> {
        let mut out = String::new();
        let m = (self.len() as u64).max(u64::from(self.config.n_min));
        let mut counts = [0usize; 3];
        let mut guaranteed = 0;
        for (id, e) in self.entries.iter().enumerate() {
            let Some(e) = e else { continue };
            counts[class_index(e.class)] += 1;
            if self.by_name.get(e.spec.name()) != Some(&(id as u32)) {
                let _ = writeln!(out, "name index misses '{}'", e.spec.name());
            }
            match (&e.spec, e.class) {
                (QueueSpec::Lq(lq), AdmissionClass::Hard | AdmissionClass::Soft) => {
                    guaranteed += 1;
                    if !self.guaranteed.contains(&self.share_key(&e.spec, id as u32)) {
                        let _ = writeln!(out, "safety index misses '{}'", lq.name);
                    }
                    if let Some(v) = fair_share_violation(&lq.burst, &self.config.capacity, m) {
                        let _ = writeln!(
                            out,
                            "'{}' breaks safety (1): {}",
                            lq.name,
                            v.describe(m, self.len() as u64, self.config.n_min)
                        );
                    }
                }
                (QueueSpec::Tq(tq), c) if c != AdmissionClass::Elastic => {
                    let _ = writeln!(out, "TQ '{}' is {:?}", tq.name, c);
                }
                _ => {}
            }
        }
        if counts != self.counts
            || guaranteed != self.guaranteed.len()
            || self.by_name.len() != counts.iter().sum::<usize>()
        {
            let _ = writeln!(out, "class counts {:?} disagree with {:?}", self.counts, counts);
        }
        let peak = self.profile.peak();
        for k in 0..DIMS {
            if peak[k] > self.cap_fp[k] {
                let _ = writeln!(
                    out,
                    "hard commitments on {} peak at {} > capacity {}",
                    ResourceKind::ALL[k].name(),
                    peak[k],
                    self.cap_fp[k]
                );
            }
        }
        if out.is_empty() {
            Ok(())
        } else {
            Err(out)
        }
    }

    /// The H class's committed-rate profile (fixed-point rates, millionths of a unit, per slot).
    pub fn profile(&self) -> &CommittedProfile {
        &self.profile
    }
}

#[cfg(test)]
#[path = "admission_tests.rs"]
mod tests;
