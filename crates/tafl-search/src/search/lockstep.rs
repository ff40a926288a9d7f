//! Many searches stepped together so that one evaluator call serves the leaves of all of
//! them: the way self-play and benchmarks keep a network busy with full batches.

use super::evaluator::{Evaluation, Evaluator};
use super::mcts::Search;

/// Counters of a lockstep run.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LockstepStats {
    /// Evaluator calls.
    pub batches: u64,
    /// Positions evaluated.
    pub evaluations: u64,
}

impl LockstepStats {
    pub fn mean_batch(&self) -> f64 {
        self.evaluations as f64 / self.batches.max(1) as f64
    }
}

/// Gathers leaves from the searches, round-robin (each gives at most its configured batch
/// per pass), until `batch` leaves wait or no search can give more. Returns the number
/// waiting.
pub fn fill(searches: &mut [&mut Search], batch: usize) -> usize {
    let mut total: usize = searches.iter().map(|s| s.pending()).sum();
    loop {
        let mut progress = 0;
        for s in searches.iter_mut() {
            if total >= batch {
                break;
            }
            if s.is_finished() {
                continue;
            }
            let want = s.config().leaves_per_tree.max(1).min(batch - total);
            let got = s.gather(want);
            progress += got;
            total += got;
        }
        if progress == 0 || total >= batch {
            return total;
        }
    }
}

/// Evaluates every waiting leaf of the searches with one evaluator call and applies the
/// results. Returns the number of positions evaluated.
pub fn evaluate(searches: &mut [&mut Search], evaluator: &mut dyn Evaluator) -> usize {
    let evals: Vec<Evaluation> = {
        let reqs: Vec<_> = searches.iter().flat_map(|s| s.requests()).collect();
        if reqs.is_empty() {
            return 0;
        }
        evaluator.evaluate(&reqs)
    };
    apply(searches, &evals);
    evals.len()
}

/// Hands each search its share of `evals`: the evaluations of every waiting leaf of the
/// searches, in the order of their requests (as [`evaluate`] asks for them).
///
/// # Panics
/// If `evals` does not hold one evaluation per waiting leaf.
pub fn apply(searches: &mut [&mut Search], evals: &[Evaluation]) {
    let mut at = 0;
    for s in searches.iter_mut() {
        let n = s.pending();
        if n > 0 {
            s.apply(&evals[at..at + n]);
            at += n;
        }
    }
    assert_eq!(at, evals.len(), "one evaluation per waiting leaf");
}

/// Runs every search until it finishes, with up to `batch` leaves per evaluator call taken
/// from all of them.
pub fn run_all(searches: &mut [&mut Search], evaluator: &mut dyn Evaluator, batch: usize) -> LockstepStats {
    let mut stats = LockstepStats::default();
    while !searches.iter().all(|s| s.is_finished()) {
        fill(searches, batch);
        let n = evaluate(searches, evaluator);
        if n > 0 {
            stats.batches += 1;
            stats.evaluations += n as u64;
        }
    }
    stats
}
