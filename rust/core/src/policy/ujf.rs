//! User-job fair (UJF) inside a queue, the baseline the UWFQ paper improves on: users share the
//! queue equally, and each user's share is split equally among that user's jobs. On an offer,
//! the user with the smallest dominant usage (the sum of their jobs' usage) that has a job
//! fitting the node goes first, then that user's job with the smallest dominant usage
//! (submission order on ties at both levels). An app waiting for its ApplicationMaster goes
//! first, as in FIFO.

use super::{AppPolicy, NodeOffer};
use crate::ids::{AppIdx, QueueIdx};
use crate::request::Placement;
use crate::resource::Resources;
use crate::state::ClusterState;

#[derive(Debug, Default, Clone)]
pub struct Ujf {
    /// The queue's apps grouped by user; reused so an offer does not allocate.
    by_user: Vec<AppIdx>,
}

impl AppPolicy for Ujf {
    fn name(&self) -> &'static str {
        "ujf"
    }

    fn select(&mut self, state: &ClusterState, queue: QueueIdx, offer: &NodeOffer) -> Option<(AppIdx, Placement)> {
        let q = &state.queues[queue];
        if let Some(hit) = offer.app_waiting_for_am(state, queue, false) {
            return Some(hit);
        }
        self.by_user.clear();
        self.by_user.extend_from_slice(&q.apps);
        self.by_user.sort_unstable_by(|&a, &b| {
            let (a, b) = (state.app(a), state.app(b));
            a.user.cmp(&b.user).then(a.seq.cmp(&b.seq))
        });
        // (user's dominant usage, user's first submission, app) of the best user so far.
        let mut best: Option<(f64, u64, AppIdx, Placement)> = None;
        let mut i = 0;
        while i < self.by_user.len() {
            let user = &state.app(self.by_user[i]).user;
            let mut j = i;
            let mut usage = Resources::ZERO;
            while j < self.by_user.len() && &state.app(self.by_user[j]).user == user {
                usage += state.app(self.by_user[j]).usage;
                j += 1;
            }
            let group = &self.by_user[i..j];
            let user_key = (usage.dominant_share(&state.capacity), state.app(group[0]).seq);
            i = j;
            if best.as_ref().is_some_and(|b| user_key >= (b.0, b.1)) {
                continue;
            }
            // The user's job with the smallest usage that fits.
            let mut pick: Option<(f64, u64, AppIdx, Placement)> = None;
            for &idx in group {
                let app = state.app(idx);
                if app.asks.pending_containers() == 0 {
                    continue;
                }
                let dom = app.usage.dominant_share(&state.capacity);
                if pick.as_ref().is_some_and(|p| (dom, app.seq) >= (p.0, p.1)) {
                    continue;
                }
                if let Some(p) = offer.first_fit(state, idx) {
                    pick = Some((dom, app.seq, idx, p));
                }
            }
            if let Some((_, _, idx, p)) = pick {
                best = Some((user_key.0, user_key.1, idx, p));
            }
        }
        best.map(|b| (b.2, b.3))
    }
}
