//! Tetris: multi-resource packing inside a queue (Grandl et al., SIGCOMM 2014), the packing
//! baseline of the Carbyne paper.
//!
//! On an offer, each job's next ask in its own order (YARN's priority order, which Tez AMs set
//! breadth-first: the Carbyne paper's Tetris baseline orders tasks inside a job breadth-first,
//! §5.1) is scored by its alignment with the node's free space (dot product of demand and free
//! resources, both normalised by the cluster). The best score starts.
//!
//! Two policies, one knob apart:
//! - `tetris`: alignment alone, the packer the Carbyne paper compares against (no remaining-work
//!   term, no DAG awareness).
//! - `tetris-srtf`: alignment combined with shortest-remaining-work, `a / mean(a) - w / mean(w)`:
//!   Tetris's `a + ε·p` with ε set so that both terms have the same mean weight. The work term
//!   makes it close to shortest-remaining-time-first: a much stronger baseline than the paper's.
//!
//! Fairness knob f in [0, 1): jobs are sorted by how far they are below their fair share (their
//! dominant share over their closed-form DRF share) and only the ceil((1 - f) n) furthest below
//! compete; f = 0 is pure packing, f close to 1 only the most deprived job.
//!
//! Remaining work is taken from the job's hints (cluster-milliseconds of unfinished tasks); an
//! unhinted app's is its pending asks' dominant share times one second, since its durations
//! are unknown. An unhinted app waiting for its ApplicationMaster goes first, as in FIFO.

use super::carbyne::{job_cap, queue_entitlements};
use super::{AppPolicy, NodeOffer};
use crate::dag::share::drf_shares;
use crate::ids::{AppIdx, QueueIdx};
use crate::request::Placement;
use crate::state::{App, ClusterState};

/// Fair shares are recomputed at least this often even when no app came or went, because jobs'
/// demands change with their progress.
const FAIR_REFRESH_MS: i64 = 1_000;

/// Nominal task length for apps without hints, in the units of remaining work.
const UNHINTED_TASK_MS: f64 = 1_000.0;

pub struct Tetris {
    fairness_knob: f64,
    /// Whether remaining work counts beside alignment (`tetris-srtf`).
    remaining_work: bool,
    /// Per app index: (app seq, hints revision, remaining work from hints).
    work: Vec<Option<(u64, u64, f64)>>,
    /// Per app index: (app seq, DRF fair dominant share).
    fair: Vec<Option<(u64, f64)>>,
    seen: Option<(u64, usize)>,
    /// A hinted app reported new hints or asks since the last heartbeat.
    hints_changed: bool,
    fair_at_ms: i64,
    scratch: Vec<(f64, AppIdx)>,
}

impl Tetris {
    pub fn new(fairness_knob: f64, remaining_work: bool) -> Tetris {
        Tetris {
            fairness_knob: fairness_knob.clamp(0.0, 0.999),
            remaining_work,
            work: Vec::new(),
            fair: Vec::new(),
            seen: None,
            hints_changed: false,
            fair_at_ms: i64::MIN,
            scratch: Vec::new(),
        }
    }

    fn remaining_work(&self, state: &ClusterState, idx: AppIdx, app: &App) -> f64 {
        match self.work.get(idx).copied().flatten() {
            Some((seq, _, w)) if seq == app.seq && app.hints.is_some() => w,
            _ => app.asks.pending_resources().dominant_share(&state.capacity) * UNHINTED_TASK_MS,
        }
    }
}

impl AppPolicy for Tetris {
    fn name(&self) -> &'static str {
        if self.remaining_work {
            "tetris-srtf"
        } else {
            "tetris"
        }
    }

    fn begin_heartbeat(&mut self, state: &ClusterState, now_ms: i64) {
        let seen = (state.next_app_seq, state.app_count());
        let changed = self.seen != Some(seen) || std::mem::take(&mut self.hints_changed);
        self.seen = Some(seen);
        if changed && self.remaining_work {
            self.work.resize(state.apps.len(), None);
            for (idx, a) in state.apps.iter().enumerate() {
                self.work[idx] = a.as_ref().and_then(|a| {
                    let h = a.hints.as_ref()?;
                    match self.work[idx] {
                        Some((seq, rev, w)) if seq == a.seq && rev == h.revision => Some((seq, rev, w)),
                        _ => Some((a.seq, h.revision, h.dag.remaining_work(&state.capacity))),
                    }
                });
            }
        }
        if self.fairness_knob > 0.0 && (changed || now_ms - self.fair_at_ms >= FAIR_REFRESH_MS) {
            self.fair_at_ms = now_ms;
            self.fair.clear();
            self.fair.resize(state.apps.len(), None);
            let entitled = queue_entitlements(state);
            for (qi, q) in state.queues.iter().enumerate() {
                let caps: Vec<_> = q.apps.iter().map(|&s| job_cap(state.app(s))).collect();
                for (&s, share) in q.apps.iter().zip(drf_shares(&entitled[qi], &caps)) {
                    self.fair[s] = Some((state.app(s).seq, share.dominant_share(&state.capacity)));
                }
            }
        }
    }

    fn on_app_updated(&mut self, state: &ClusterState, idx: AppIdx) {
        self.hints_changed |= state.app(idx).hints.is_some();
    }

    fn select(&mut self, state: &ClusterState, queue: QueueIdx, offer: &NodeOffer) -> Option<(AppIdx, Placement)> {
        let q = &state.queues[queue];
        if let Some(hit) = offer.app_waiting_for_am(state, queue, true) {
            return Some(hit);
        }
        // Candidate jobs, with how far below their fair share they are (lower is further).
        let mut cands = std::mem::take(&mut self.scratch);
        cands.clear();
        for &s in &q.apps {
            let app = state.app(s);
            let fits =
                app.asks.pending_containers() > 0 && app.asks.min_capability().is_some_and(|m| m.fits_in(&offer.free));
            if !fits {
                continue;
            }
            let deficit = if self.fairness_knob > 0.0 {
                let fair = self.fair.get(s).copied().flatten().filter(|f| f.0 == app.seq).map_or(0.0, |f| f.1);
                let dom = app.usage.dominant_share(&state.capacity);
                if fair > 0.0 {
                    dom / fair
                } else {
                    f64::INFINITY
                }
            } else {
                0.0
            };
            cands.push((deficit, s));
        }
        if self.fairness_knob > 0.0 && !cands.is_empty() {
            let keep = (((1.0 - self.fairness_knob) * cands.len() as f64).ceil() as usize).max(1);
            cands.sort_by(|a, b| a.0.total_cmp(&b.0).then(state.app(a.1).seq.cmp(&state.app(b.1).seq)));
            cands.truncate(keep);
        }
        // Score each candidate's next ask.
        let mut scored: Vec<(f64, f64, u64, AppIdx, Placement)> = Vec::new();
        for &(_, s) in &cands {
            let app = state.app(s);
            let w = if self.remaining_work { self.remaining_work(state, s, app) } else { 0.0 };
            if let Some(p) = offer.first_fit(state, s) {
                scored.push((p.resources.alignment(&offer.free, &state.capacity), w, app.seq, s, p));
            }
        }
        self.scratch = cands;
        if scored.is_empty() {
            return None;
        }
        let n = scored.len() as f64;
        let mean_a = scored.iter().map(|e| e.0).sum::<f64>() / n;
        let mean_w = scored.iter().map(|e| e.1).sum::<f64>() / n;
        let norm = |v: f64, mean: f64| if mean > 0.0 { v / mean } else { 0.0 };
        let mut best: Option<(f64, u64, AppIdx, Placement)> = None;
        for (a, w, seq, s, p) in scored {
            let score = norm(a, mean_a) - norm(w, mean_w);
            let better = match &best {
                None => true,
                Some(b) => score > b.0 + 1e-12 || ((score - b.0).abs() <= 1e-12 && seq < b.1),
            };
            if better {
                best = Some((score, seq, s, p));
            }
        }
        best.map(|b| (b.2, b.3))
    }
}
