//! tafl-lab: a self-play training laboratory for the tafl board games.
//!
//! Layers, lowest first (each depends only on those above it in this list). The first two
//! are crates of their own, so the compiler refuses an import the wrong way:
//! - [`rules`] (the `tafl-rules` crate, re-exported): exact rules of every variant, as data; move generation, captures, game ends,
//!   notation, perft; [`play`]: random games and playouts on top of them.
//! - the `tafl-search` crate (no tch), re-exported as three modules: [`stats`] (Wilson, Elo,
//!   SPRT, the Bradley-Terry fit, calibration, the handicap fit; numbers only), [`protocol`]
//!   (the engine protocols' lines, OTEP and HTP, as typed commands and replies, and the clock
//!   budget; one codec for [`engine`] and for [`arena`]'s external engines) and [`search`]
//!   (MCTS: PUCT, Gumbel, solver, leaf batching, behind an `Evaluator` trait).
//! - [`nn`]: input planes, policy map, symmetries, the tch ResNet, checkpoints, the network
//!   evaluator.
//! - [`selfplay`]: many games stepped in lockstep, one batched evaluator call per step.
//! - [`arena`]: agents from spec strings and matches between them.
//! - [`report`]: charts, HTML pages, the `metrics.jsonl` line and a run's learning report.
//! - [`train`]: the generation loop (self-play, replay window, SGD, checkpoints, evaluation),
//!   run directories, resume, self-play workers.
//! - [`lab`]: experiments that play games: balance runs, the ladder, tournaments.
//! - [`export`]: TorchScript, safetensors and the I/O contract for other engines;
//!   [`engine`]: the OpenTafl Engine Protocol.
//!
//! - [`view`]: self-contained HTML pages to step through games (match records, archives,
//!   self-play shards, balance samples), replayed with the rules.
//!
//! [`fsio`] (atomic file writes) serves every layer that writes files; [`fault`] holds the
//! test-only fault points that let tests/it/fault.rs kill a run at an exact moment.

/// The rules layer: the `tafl-rules` crate (std, serde and TOML only), re-exported.
pub use tafl_rules as rules;
/// Random games and playouts on top of the rules (`tafl_rules::play`).
pub use tafl_rules::play;
/// Search, protocols and statistics: the `tafl-search` crate (no tch), re-exported.
pub use tafl_search::{protocol, search, stats};
pub mod arena;
pub mod engine;
pub mod export;
pub mod fault;
pub mod fsio;
pub mod lab;
pub mod nn;
pub mod report;
pub mod selfplay;
pub mod train;
pub mod view;
