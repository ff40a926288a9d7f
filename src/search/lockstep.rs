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

/// Runs every search until it finishes, gathering up to `batch` leaves per evaluator call
/// from all of them (each tree gives at most its configured batch per pass, and passes repeat
/// until the batch is full or no tree can give more).
pub fn run_all(searches: &mut [&mut Search], evaluator: &mut dyn Evaluator, batch: usize) -> LockstepStats {
    let mut stats = LockstepStats::default();
    let mut evals: Vec<Evaluation> = Vec::new();
    loop {
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
                let want = s.config().batch.max(1).min(batch - total);
                let got = s.gather(want);
                progress += got;
                total += got;
            }
            if progress == 0 || total >= batch {
                break;
            }
        }
        if total == 0 {
            if searches.iter().all(|s| s.is_finished()) {
                return stats;
            }
            continue;
        }
        evals.clear();
        {
            let reqs: Vec<_> = searches.iter().flat_map(|s| s.requests()).collect();
            evals.extend(evaluator.evaluate(&reqs));
        }
        stats.batches += 1;
        stats.evaluations += evals.len() as u64;
        let mut at = 0;
        for s in searches.iter_mut() {
            let n = s.pending();
            if n > 0 {
                s.apply(&evals[at..at + n]);
                at += n;
            }
        }
    }
}
