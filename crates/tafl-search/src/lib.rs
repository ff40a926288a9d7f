//! tafl-search: the layers between the rules and the network, in a crate of their own so
//! that the compiler keeps them below LibTorch: nothing here can import `tch` or the
//! `tafl-lab` package, and their tests build and run without LibTorch installed.
//!
//! Layers, lowest first (each uses only those before it, and the rules crate):
//! - [`stats`]: Wilson, Elo, SPRT, the Bradley-Terry fit, calibration, the handicap fit
//!   (numbers only).
//! - [`protocol`]: the engine protocols' lines (OTEP, HTP) as typed commands and replies, and
//!   the clock budget.
//! - [`search`]: MCTS (PUCT, Gumbel, solver, leaf batching) behind an `Evaluator` trait.

/// The rules layer (the `tafl-rules` crate), re-exported so paths read `crate::rules::...`
/// here as in the `tafl-lab` package.
pub use tafl_rules as rules;
/// Random games and playouts (`tafl_rules::play`).
pub use tafl_rules::play;
pub mod protocol;
pub mod search;
pub mod stats;
