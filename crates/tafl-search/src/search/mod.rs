//! The search layer: Monte Carlo tree search over the rules, with no dependency on tch.
//!
//! The network is seen only through [`Evaluator`] (a batch of positions in, priors over the
//! legal moves and win/draw/loss out), so the whole layer is tested with uniform, rollout or
//! scripted evaluators. Read [`config`] (every setting and its default) → [`evaluator`] →
//! [`cache`] (each position evaluated once) → [`tree`] (the arena) → [`mcts`] (PUCT, the
//! solver, batching, tree reuse), with [`probes`] (the escape and fork probes) and [`gumbel`]
//! (the Gumbel root) → [`lockstep`] (many games, one evaluator call). Beside them, [`solver`]: an exhaustive search for short forced
//! wins, to check a game's end that was not played out, and [`prover`]: a proof-number search
//! for the deeper ones.

pub mod cache;
pub mod config;
pub mod evaluator;
pub mod gumbel;
pub mod lockstep;
pub mod mcts;
pub mod probes;
pub mod prover;
pub mod solver;
pub mod tree;

pub use cache::{CacheStats, EvalCache};
pub use config::{Budget, Noise, RootPolicy, SearchConfig};
pub use evaluator::{EvalRequest, Evaluation, Evaluator, RolloutEvaluator, Ticket, UniformEvaluator};
pub use mcts::{MoveStat, Search, SearchResult};
pub use tree::Proof;
