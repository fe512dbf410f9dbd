//! What a queue declares to BoPF admission control: a latency-sensitive queue's bursts (period,
//! deadline, demand per burst, cycles) or a throughput queue's weight, with their validation.

use serde::{Deserialize, Serialize};

use super::profile::SlotRange;
use crate::resource::{ResourceKind, Resources, DIMS};

/// Burst cycles checked when a config does not say (the paper's simulations use 500).
pub const DEFAULT_CYCLES: u32 = 500;
/// Longest burst period (one day). With [`MAX_CYCLES`] and [`MAX_HORIZON_MS`] it bounds the work
/// and memory one queue can ask of admission control, whatever a request or queue file says.
pub const MAX_PERIOD_MS: u64 = 86_400_000;
/// Most burst cycles one queue may plan: admission walks every window.
pub const MAX_CYCLES: u32 = 10_000;
/// Latest instant (from the epoch) a queue's last burst may end, six days (500 cycles of 1000 s,
/// the longest set-up the experiments use, fit): the committed-rate profile is dense from the
/// epoch, so this bounds its size.
pub const MAX_HORIZON_MS: u64 = 6 * 86_400_000;

/// One burst of a latency-sensitive queue.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BurstSpec {
    /// Inter-arrival time of bursts, `T_i(n+1) - T_i(n)`.
    pub period_ms: u64,
    /// Allowed processing time of a burst (the ON period), `t_i(n)`; at most `period_ms`.
    pub deadline_ms: u64,
    /// Total resource-time of one burst, in resource-seconds (see the module docs).
    pub demand: Resources,
}

fn default_weight() -> f64 {
    1.0
}

fn default_cycles() -> u32 {
    DEFAULT_CYCLES
}

/// A latency-sensitive queue (LQ).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LqSpec {
    pub name: String,
    /// DRF weight once the queue shares leftovers in the Elastic class. The conditions themselves
    /// count queues, as the paper does (equal weights).
    #[serde(default = "default_weight")]
    pub weight: f64,
    pub burst: BurstSpec,
    /// Arrival of the first burst, `T_i(0)`, in ms since the controller's epoch.
    #[serde(default)]
    pub start_ms: u64,
    /// Number of bursts, `|N_i|`.
    #[serde(default = "default_cycles")]
    pub cycles: u32,
}

/// A throughput-sensitive queue (TQ).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TqSpec {
    pub name: String,
    #[serde(default = "default_weight")]
    pub weight: f64,
}

/// Either kind of queue, as read from configuration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum QueueSpec {
    Lq(LqSpec),
    Tq(TqSpec),
}

impl QueueSpec {
    pub fn name(&self) -> &str {
        match self {
            QueueSpec::Lq(s) => &s.name,
            QueueSpec::Tq(s) => &s.name,
        }
    }

    pub fn weight(&self) -> f64 {
        match self {
            QueueSpec::Lq(s) => s.weight,
            QueueSpec::Tq(s) => s.weight,
        }
    }
}

#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum AdmissionError {
    #[error("queue '{queue}': {field} {problem}")]
    InvalidSpec { queue: String, field: String, problem: String },
    #[error("admission config: {field} {problem}")]
    InvalidConfig { field: String, problem: String },
    #[error("queue '{0}' is already admitted")]
    DuplicateQueue(String),
    #[error("queue '{0}' is not admitted")]
    UnknownQueue(String),
}

pub(super) fn spec_error(queue: &str, field: impl Into<String>, problem: impl Into<String>) -> AdmissionError {
    AdmissionError::InvalidSpec { queue: queue.to_string(), field: field.into(), problem: problem.into() }
}

fn check_name_weight(name: &str, weight: f64) -> Result<(), AdmissionError> {
    if name.trim().is_empty() {
        return Err(spec_error(name, "name", "must not be empty"));
    }
    if !weight.is_finite() || weight <= 0.0 {
        return Err(spec_error(name, "weight", format!("must be finite and positive, got {weight}")));
    }
    Ok(())
}

impl TqSpec {
    pub fn validate(&self) -> Result<(), AdmissionError> {
        check_name_weight(&self.name, self.weight)
    }
}

impl LqSpec {
    pub fn validate(&self) -> Result<(), AdmissionError> {
        check_name_weight(&self.name, self.weight)?;
        let b = &self.burst;
        let q = &self.name;
        if b.period_ms == 0 {
            return Err(spec_error(q, "burst.period_ms", "must be positive"));
        }
        if b.period_ms > MAX_PERIOD_MS {
            return Err(spec_error(
                q,
                "burst.period_ms",
                format!("{} exceeds the limit of {MAX_PERIOD_MS}", b.period_ms),
            ));
        }
        if b.deadline_ms == 0 {
            return Err(spec_error(q, "burst.deadline_ms", "must be positive"));
        }
        if b.deadline_ms > MAX_PERIOD_MS {
            return Err(spec_error(
                q,
                "burst.deadline_ms",
                format!("{} exceeds the limit of {MAX_PERIOD_MS}", b.deadline_ms),
            ));
        }
        if b.deadline_ms > b.period_ms {
            return Err(spec_error(
                q,
                "burst.deadline_ms",
                format!(
                    "{} exceeds burst.period_ms {}: a burst must end before the next one arrives",
                    b.deadline_ms, b.period_ms
                ),
            ));
        }
        for kind in ResourceKind::ALL {
            let v = b.demand.get(kind);
            if v < 0 {
                return Err(spec_error(q, format!("burst.demand.{}", kind.name()), format!("is negative ({v})")));
            }
        }
        if b.demand.is_zero() {
            return Err(spec_error(q, "burst.demand", "is zero in every resource"));
        }
        if self.cycles == 0 {
            return Err(spec_error(q, "cycles", "must be at least 1"));
        }
        if self.cycles > MAX_CYCLES {
            return Err(spec_error(q, "cycles", format!("{} exceeds the limit of {MAX_CYCLES}", self.cycles)));
        }
        // Cannot overflow: both factors are bounded above.
        let end = self.start_ms.checked_add(u64::from(self.cycles - 1) * b.period_ms + b.deadline_ms);
        if !matches!(end, Some(e) if e <= MAX_HORIZON_MS) {
            return Err(spec_error(
                q,
                "cycles",
                format!(
                    "put the last burst's end beyond the horizon limit of {MAX_HORIZON_MS} ms (start + \
                     (cycles - 1) x period + deadline)"
                ),
            ));
        }
        Ok(())
    }

    /// The rate a hard guarantee provides while a burst is ON, `d / t` (Algorithm 1, line 32),
    /// per resource in units (MB, vcores, Mbps).
    pub fn rate(&self) -> [f64; DIMS] {
        let mut out = [0.0; DIMS];
        for (o, d) in out.iter_mut().zip(self.burst.demand.0.iter()) {
            *o = *d as f64 * 1000.0 / self.burst.deadline_ms as f64;
        }
        out
    }

    /// [`LqSpec::rate`] rounded up to whole units, the allocation target of a hard queue.
    pub fn rate_ceil(&self) -> Resources {
        let mut out = Resources::ZERO;
        for k in 0..DIMS {
            let num = i128::from(self.burst.demand.0[k]) * 1000;
            out.0[k] = ceil_div(num, i128::from(self.burst.deadline_ms)).min(i64::MAX as i128) as i64;
        }
        out
    }

    /// The burst window containing `now_ms`: `(n, arrival_ms, deadline_at_ms)`, or `None` when the
    /// queue is OFF (between bursts, before the first or after the last).
    pub fn window_at(&self, now_ms: u64) -> Option<(u32, u64, u64)> {
        let since = now_ms.checked_sub(self.start_ms)?;
        let n = since / self.burst.period_ms;
        if n >= u64::from(self.cycles) {
            return None;
        }
        let arrival = self.start_ms + n * self.burst.period_ms;
        let end = arrival + self.burst.deadline_ms;
        (now_ms < end).then_some((n as u32, arrival, end))
    }

    /// ON windows as profile slots, widened to whole slots and merged where they touch, written
    /// into `out` (sorted, disjoint).
    pub(super) fn slot_ranges(&self, resolution_ms: u64, out: &mut Vec<SlotRange>) {
        out.clear();
        let (p, t) = (self.burst.period_ms, self.burst.deadline_ms);
        for n in 0..u64::from(self.cycles) {
            let a = self.start_ms + n * p;
            let lo = a / resolution_ms;
            let hi = (a + t).div_ceil(resolution_ms);
            match out.last_mut() {
                // One queue is never ON twice at once, so merged windows count its rate once.
                Some(last) if last.1 >= lo => last.1 = last.1.max(hi),
                _ => out.push((lo, hi)),
            }
        }
    }
}

pub(super) fn ceil_div(a: i128, b: i128) -> i128 {
    debug_assert!(a >= 0 && b > 0);
    (a + b - 1) / b
}
