//! What search knows about a network: a batch of positions in, move priors and win/draw/loss
//! values out. Search never sees tch; the network lives behind [`Evaluator`] in `nn`.
//!
//! Two evaluators need no network: [`UniformEvaluator`] (uniform priors, a constant value)
//! and [`RolloutEvaluator`] (uniform priors, the result of one random playout: classic MCTS).

use crate::play::random_playout;
use crate::rules::{Move, Position, Side};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::sync::Arc;

/// One position to evaluate, with its legal moves in the order the priors must follow.
#[derive(Clone, Copy)]
pub struct EvalRequest<'a> {
    pub position: &'a Position,
    pub moves: &'a [Move],
}

/// An evaluation: a prior for each legal move (summing to 1) and win/draw/loss
/// probabilities from the view of the side to move.
///
/// The priors are shared (`Arc`): an evaluation cache hands the same evaluation to every tree
/// that reaches the position, and a clone is a reference count, not an allocation (small
/// allocations per position were a visible part of self-play's allocator time).
#[derive(Clone, Debug, PartialEq)]
pub struct Evaluation {
    pub priors: Arc<[f32]>,
    pub wdl: [f32; 3],
}

impl Evaluation {
    /// Expected score in -1..1 for the side to move: P(win) - P(loss).
    pub fn value(&self) -> f32 {
        self.wdl[0] - self.wdl[2]
    }

    /// Uniform priors over `n` moves with the given win/draw/loss.
    pub fn uniform(n: usize, wdl: [f32; 3]) -> Evaluation {
        Evaluation { priors: vec![1.0 / n.max(1) as f32; n].into(), wdl }
    }
}

/// A batch handed to [`Evaluator::start`], to be redeemed with [`Evaluator::finish`].
#[derive(Debug)]
pub struct Ticket(TicketState);

#[derive(Debug)]
enum TicketState {
    Ready(Vec<Evaluation>),
    Pending(u64),
}

impl Ticket {
    /// A batch already evaluated (what a synchronous evaluator returns).
    pub fn ready(evals: Vec<Evaluation>) -> Ticket {
        Ticket(TicketState::Ready(evals))
    }

    /// A batch still being evaluated, numbered by the evaluator that took it.
    pub fn pending(id: u64) -> Ticket {
        Ticket(TicketState::Pending(id))
    }

    /// The evaluations of a ready batch, or the number of a pending one.
    ///
    /// # Errors
    /// The ticket's number when the batch is still pending.
    pub fn into_ready(self) -> Result<Vec<Evaluation>, u64> {
        match self.0 {
            TicketState::Ready(e) => Ok(e),
            TicketState::Pending(id) => Err(id),
        }
    }
}

/// Evaluates batches of positions. One call should serve many leaves: a network is only
/// efficient on batches.
///
/// An evaluator that can work in the background (a network on a thread of its own) overrides
/// [`Evaluator::start`] and [`Evaluator::finish`]: self-play then does the tree work of one
/// half of its games while the other half's batch is evaluated. The defaults evaluate at
/// once, so both ways give the same results.
pub trait Evaluator {
    /// One evaluation per request, in order; `priors` follow `request.moves`.
    fn evaluate(&mut self, batch: &[EvalRequest<'_>]) -> Vec<Evaluation>;

    /// Restarts any randomness the evaluator uses (rollouts) from `seed`, so that games can
    /// be repeated exactly. Deterministic evaluators ignore it.
    fn reseed(&mut self, _seed: u64) {}

    /// A key such that two positions with the same key always get the same evaluation (it
    /// must cover everything the evaluator looks at), or `None` when evaluations must not be
    /// reused (random rollouts; the default). See [`super::cache`].
    fn cache_key(&self, _position: &Position) -> Option<u64> {
        None
    }

    /// Begins evaluating `batch` (the positions are read before this returns); redeem the
    /// ticket with [`Evaluator::finish`], in the order the batches were started. The default
    /// evaluates at once.
    fn start(&mut self, batch: &[EvalRequest<'_>]) -> Ticket {
        Ticket::ready(self.evaluate(batch))
    }

    /// The evaluations of a started batch, waiting for them if need be.
    ///
    /// # Panics
    /// The default panics on a pending ticket (it never makes one).
    fn finish(&mut self, ticket: Ticket) -> Vec<Evaluation> {
        ticket.into_ready().unwrap_or_else(|id| panic!("batch {id} was not started by this evaluator"))
    }
}

impl<E: Evaluator + ?Sized> Evaluator for Box<E> {
    fn evaluate(&mut self, batch: &[EvalRequest<'_>]) -> Vec<Evaluation> {
        (**self).evaluate(batch)
    }
    fn reseed(&mut self, seed: u64) {
        (**self).reseed(seed)
    }
    fn cache_key(&self, position: &Position) -> Option<u64> {
        (**self).cache_key(position)
    }
    fn start(&mut self, batch: &[EvalRequest<'_>]) -> Ticket {
        (**self).start(batch)
    }
    fn finish(&mut self, ticket: Ticket) -> Vec<Evaluation> {
        (**self).finish(ticket)
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
    /// Every position gets the same evaluation; the hash is as good a key as any.
    fn cache_key(&self, position: &Position) -> Option<u64> {
        Some(position.hash())
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
                let (outcome, _) = {
                    let rng = &mut self.rng;
                    random_playout(&mut pos, &mut |n| rng.gen_range(0..n), &mut self.buf)
                };
                Evaluation::uniform(r.moves.len(), wdl_for(outcome.winner, side))
            })
            .collect()
    }

    fn reseed(&mut self, seed: u64) {
        self.rng = SmallRng::seed_from_u64(seed);
    }
}
