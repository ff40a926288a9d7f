//! The rules crate's test helpers (boards from ASCII art, moves from strings), shared so that
//! every package's tests build positions the same way.
#![allow(dead_code, unused_imports)]

#[path = "../../../tafl-rules/tests/common/mod.rs"]
mod rules_helpers;

pub use rules_helpers::*;

pub mod guard_game;
