//! The Gumbel root (Danihelka et al. 2022): the candidates drawn by Gumbel-top-k, sequential
//! halving among them ([`GumbelState`]), completed Q and the improved policy that is both the
//! move choice and the training target. Below the root the search is PUCT ([`super::mcts`]).

use super::config::RootPolicy;
use super::mcts::Search;
use std::collections::VecDeque;

/// Sequential halving at a Gumbel root.
///
/// The schedule (as in Danihelka et al. 2022 and DeepMind's mctx): with `B` new
/// simulations left for the root's children when the root is prepared, `m = min(k, B,
/// legal moves)` candidates are drawn by Gumbel-top-k, and `R = ceil(log2 m)` (at least 1)
/// rounds are planned. A round with `m` candidates gives each `max(1, B / (R m))` visits, in
/// turn, best candidate first. After each round the candidates are ranked by
/// `gumbel + log prior + sigma(completed Q)` and the better half (rounded up) is kept, but
/// never fewer than two. Rounds go on among the last two (or among one candidate, when there
/// is only one) until the whole budget is spent: no simulation is lost to rounding. The move played is
/// the best-ranked remaining candidate.
pub(super) struct GumbelState {
    /// Gumbel noise plus log prior, per root child.
    pub(super) base: Vec<f32>,
    /// Root child offsets still in the running, best first after each halving.
    pub(super) considered: Vec<usize>,
    /// Planned number of halving rounds, ceil(log2 m).
    pub(super) rounds: u32,
    /// New simulations the schedule shares out (the budget left when the root was prepared).
    pub(super) budget: u32,
    pub(super) rounds_started: u32,
    pub(super) queue: VecDeque<usize>,
    /// The budget is spent.
    pub(super) finished: bool,
}

impl GumbelState {
    /// The schedule for `budget` new simulations over root children scored `base` (Gumbel
    /// noise plus log prior): the best `min(k, budget, children)` candidates. More candidates
    /// than simulations would leave some unvisited, yet in the running for the final choice.
    pub(super) fn new(base: Vec<f32>, k: usize, budget: u32) -> GumbelState {
        let mut considered: Vec<usize> = (0..base.len()).collect();
        considered.sort_by(|&a, &b| base[b].total_cmp(&base[a]));
        considered.truncate(k.min(budget as usize).clamp(1, base.len()));
        let rounds = (considered.len() as f32).log2().ceil().max(1.0) as u32;
        GumbelState { base, considered, rounds, budget, rounds_started: 0, queue: VecDeque::new(), finished: false }
    }
}

impl Search {
    /// The next root child a Gumbel round wants visited; starts the next round (halving the
    /// candidates, down to two) when the current one is complete. `None` while results are
    /// outstanding or when the budget is spent. See [`GumbelState`] for the schedule.
    pub(super) fn next_forced(&mut self) -> Option<usize> {
        if let Some(a) = self.gumbel.as_mut().and_then(|g| g.queue.pop_front()) {
            return Some(a);
        }
        if !self.leaves.is_empty() {
            return None;
        }
        let remaining = self.cfg.sims.saturating_sub(self.done);
        if remaining == 0 {
            self.gumbel.as_mut().expect("gumbel search").finished = true;
            return None;
        }
        let scores = if self.gumbel.as_ref().is_some_and(|g| g.rounds_started > 0) { self.gumbel_scores() } else { Vec::new() };
        let g = self.gumbel.as_mut().expect("gumbel search");
        if g.rounds_started > 0 {
            g.considered.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]));
            let keep = g.considered.len().div_ceil(2).max(2);
            g.considered.truncate(keep);
        }
        g.rounds_started += 1;
        let m = g.considered.len() as u32;
        let per = (g.budget / (g.rounds * m)).max(1);
        let total = (per * m).min(remaining);
        for i in 0..total {
            g.queue.push_back(g.considered[(i % m) as usize]);
        }
        g.queue.pop_front()
    }

    /// Completed Q of each root child for the side to move at the root: its mean value if
    /// visited or proven, otherwise the mixed value estimate of the paper's appendix:
    /// `v_mix = (v_hat + sum N / sum_visited prior * sum_visited prior q) / (1 + sum N)`,
    /// with `v_hat` the network's value of the root.
    pub(super) fn completed_q(&self) -> Vec<f32> {
        let nodes = &self.tree.nodes;
        let root = self.tree.root();
        let raw: Vec<Option<f32>> = root.children().map(|c| self.root_child_q(c)).collect();
        let (mut visits, mut mass, mut weighted) = (0.0f32, 0.0f32, 0.0f32);
        for (c, q) in root.children().zip(&raw) {
            if let Some(q) = q {
                visits += nodes[c].visits as f32;
                mass += nodes[c].prior;
                weighted += nodes[c].prior * q;
            }
        }
        // Eq. 33 of the paper: the network's own value of the root (not the root's running
        // mean, which already holds the children's results).
        let v_hat = root.raw_value;
        let v_mix = if mass > 0.0 { (v_hat + visits * weighted / mass) / (1.0 + visits) } else { v_hat };
        raw.into_iter().map(|q| q.unwrap_or(v_mix)).collect()
    }

    /// sigma(completed Q), min-max normalised as in DeepMind's mctx.
    pub(super) fn sigma_q(&self) -> Vec<f32> {
        let RootPolicy::Gumbel { c_visit, c_scale, .. } = self.cfg.root else {
            return vec![0.0; self.tree.root().num_children as usize];
        };
        let q = self.completed_q();
        let (lo, hi) = q.iter().fold((f32::INFINITY, f32::NEG_INFINITY), |(l, h), &x| (l.min(x), h.max(x)));
        let span = (hi - lo).max(1e-6);
        let nodes = &self.tree.nodes;
        let max_n = self.tree.root().children().map(|c| nodes[c].visits).max().unwrap_or(0) as f32;
        q.iter().map(|x| (c_visit + max_n) * c_scale * (x - lo) / span).collect()
    }

    pub(super) fn gumbel_scores(&self) -> Vec<f32> {
        let g = self.gumbel.as_ref().expect("gumbel search");
        self.sigma_q().iter().zip(&g.base).map(|(s, b)| s + b).collect()
    }
}
