//! Helpers shared by the integration tests: the rules crate's own test helpers (boards from
//! ASCII art, moves from strings), so both packages' tests build positions the same way, and
//! running the binary ([`cli`]), made-up stored games ([`games`]), and what a test does when something it needs from outside the
//! repository is missing ([`needs`]), and run configs in the names of older saved runs
//! ([`old_names`]).
#![allow(dead_code, unused_imports)]

pub mod cli;
pub mod games;
pub mod needs;
pub mod old_names;

pub use needs::{require, Need};

#[path = "../../../crates/tafl-rules/tests/common/mod.rs"]
mod rules_helpers;

pub use rules_helpers::*;

/// The guard's game position, shared with crates/tafl-search/tests.
#[path = "../../../crates/tafl-search/tests/common/guard_game.rs"]
pub mod guard_game;
