//! The search layer: Monte Carlo tree search over the rules, with no dependency on tch.
//!
//! The network is seen only through [`Evaluator`] (a batch of positions in, priors over the
//! legal moves and win/draw/loss out), so the whole layer is tested with uniform, rollout or
//! scripted evaluators. Read [`evaluator`] → [`cache`] (each position evaluated once) →
//! [`tree`] (the arena) → [`mcts`] (PUCT, Gumbel, solver, batching) → [`lockstep`] (many
//! games, one evaluator call). Beside them, [`solver`]: an exhaustive search for short forced
//! wins, to check a game's end that was not played out.

pub mod cache;
pub mod evaluator;
pub mod lockstep;
pub mod mcts;
pub mod solver;
pub mod tree;

pub use cache::{CacheStats, EvalCache};
pub use evaluator::{EvalRequest, Evaluation, Evaluator, RolloutEvaluator, Ticket, UniformEvaluator};
pub use mcts::{Budget, MoveStat, Noise, RootPolicy, Search, SearchConfig, SearchResult};
pub use tree::Proof;
