//! tafl-lab: a self-play training laboratory for the tafl board games.
//!
//! Layers, lowest first (each depends only on those above it in this list):
//! - [`rules`] (the `tafl-rules` crate, re-exported): exact rules of every variant, as data; move generation, captures, game ends,
//!   notation, perft.
//! - [`play`]: simple agents and whole games on top of the rules (random play, playouts).
//! - [`search`]: MCTS (PUCT, Gumbel, solver, leaf batching) behind an `Evaluator` trait; no tch.
//! - [`nn`]: input planes, policy map, symmetries, the tch ResNet, checkpoints, the network
//!   evaluator.
//! - [`selfplay`]: many games stepped in lockstep, one batched evaluator call per step.
//! - [`arena`]: agents from spec strings and matches between them; [`stats`]: Wilson, Elo,
//!   SPRT, balance runs, reports and plots.
//! - [`train`]: the generation loop (self-play, replay window, SGD, checkpoints, evaluation),
//!   run directories, resume, self-play workers.
//! - [`export`]: TorchScript, safetensors and the I/O contract for other engines;
//!   [`engine`]: the OpenTafl Engine Protocol.
//!
//! - [`view`]: self-contained HTML pages to step through games (match records, archives,
//!   self-play shards, balance samples), replayed with the rules.
//!
//! [`fsio`] (atomic file writes) serves every layer that writes files; [`fault`] holds the
//! test-only fault points that let tests/fault.rs kill a run at an exact moment.

/// The rules layer: the `tafl-rules` crate (std, serde and TOML only), re-exported.
pub use tafl_rules as rules;
/// Random games and playouts on top of the rules (`tafl_rules::play`).
pub use tafl_rules::play;
pub mod arena;
pub mod engine;
pub mod export;
pub mod fault;
pub mod fsio;
pub mod nn;
pub mod search;
pub mod selfplay;
pub mod stats;
pub mod train;
pub mod view;
