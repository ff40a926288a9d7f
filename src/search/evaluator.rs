//! What search knows about a network: a batch of positions in, move priors and win/draw/loss
//! values out. Search never sees tch; the network lives behind [`Evaluator`] in `nn`.
//!
//! Two evaluators need no network: [`UniformEvaluator`] (uniform priors, a constant value)
//! and [`RolloutEvaluator`] (uniform priors, the result of one random playout: classic MCTS).

use crate::play::random_playout;
use crate::rules::{Move, Position, Side};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// One position to evaluate, with its legal moves in the order the priors must follow.
#[derive(Clone, Copy)]
pub struct EvalRequest<'a> {
    pub position: &'a Position,
    pub moves: &'a [Move],
}

/// An evaluation: a prior for each legal move (summing to 1) and win/draw/loss
/// probabilities from the view of the side to move.
#[derive(Clone, Debug, PartialEq)]
pub struct Evaluation {
    pub priors: Vec<f32>,
    pub wdl: [f32; 3],
}

impl Evaluation {
    /// Expected score in -1..1 for the side to move: P(win) - P(loss).
    pub fn value(&self) -> f32 {
        self.wdl[0] - self.wdl[2]
    }

    /// Uniform priors over `n` moves with the given win/draw/loss.
    pub fn uniform(n: usize, wdl: [f32; 3]) -> Evaluation {
        Evaluation { priors: vec![1.0 / n.max(1) as f32; n], wdl }
    }
}

/// Evaluates batches of positions. One call should serve many leaves: a network is only
/// efficient on batches.
pub trait Evaluator {
    /// One evaluation per request, in order; `priors` follow `request.moves`.
    fn evaluate(&mut self, batch: &[EvalRequest<'_>]) -> Vec<Evaluation>;

    /// Restarts any randomness the evaluator uses (rollouts) from `seed`, so that games can
    /// be repeated exactly. Deterministic evaluators ignore it.
    fn reseed(&mut self, _seed: u64) {}
}

impl<E: Evaluator + ?Sized> Evaluator for Box<E> {
    fn evaluate(&mut self, batch: &[EvalRequest<'_>]) -> Vec<Evaluation> {
        (**self).evaluate(batch)
    }
    fn reseed(&mut self, seed: u64) {
        (**self).reseed(seed)
    }
}

/// Uniform priors and a fixed value (0 by default): search guided only by the solver and
/// visit counts. Useful for tests and as the weakest searching baseline.
#[derive(Clone, Debug, Default)]
pub struct UniformEvaluator {
    pub wdl: [f32; 3],
}

impl UniformEvaluator {
    /// Uniform priors, value 0 (a certain draw is not implied: wdl = [0, 1, 0] only as a score).
    pub fn new() -> UniformEvaluator {
        UniformEvaluator { wdl: [0.0, 1.0, 0.0] }
    }
}

impl Evaluator for UniformEvaluator {
    fn evaluate(&mut self, batch: &[EvalRequest<'_>]) -> Vec<Evaluation> {
        batch.iter().map(|r| Evaluation::uniform(r.moves.len(), self.wdl)).collect()
    }
}

/// Uniform priors and the result of one random playout per position (the classic MCTS
/// baseline, `mcts:sims=N` on the command line).
pub struct RolloutEvaluator {
    rng: SmallRng,
    buf: Vec<Move>,
}

impl RolloutEvaluator {
    pub fn new(seed: u64) -> RolloutEvaluator {
        RolloutEvaluator { rng: SmallRng::seed_from_u64(seed), buf: Vec::with_capacity(256) }
    }
}

/// Win/draw/loss of a finished game from `side`'s view.
pub fn wdl_for(winner: Option<Side>, side: Side) -> [f32; 3] {
    match winner {
        Some(w) if w == side => [1.0, 0.0, 0.0],
        Some(_) => [0.0, 0.0, 1.0],
        None => [0.0, 1.0, 0.0],
    }
}

impl Evaluator for RolloutEvaluator {
    fn evaluate(&mut self, batch: &[EvalRequest<'_>]) -> Vec<Evaluation> {
        batch
            .iter()
            .map(|r| {
                let side = r.position.to_move();
                let mut pos = r.position.clone();
                let (outcome, _) = { let rng = &mut self.rng; random_playout(&mut pos, &mut |n| rng.gen_range(0..n), &mut self.buf) };
                Evaluation::uniform(r.moves.len(), wdl_for(outcome.winner, side))
            })
            .collect()
    }

    fn reseed(&mut self, seed: u64) {
        self.rng = SmallRng::seed_from_u64(seed);
    }
}
