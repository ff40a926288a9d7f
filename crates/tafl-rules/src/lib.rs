//! tafl-rules: the exact rules of the tafl board games (Copenhagen and Fetlar Hnefatafl,
//! Tablut, Brandubh, Ard Ri, Alea Evangelii and their relatives), with the rules as data.
//!
//! This is the bottom layer of tafl-lab, packaged so that any Rust engine can use it. It
//! depends on std, serde and the TOML parser only (no search, no network, no CLI), so it
//! builds and tests in seconds and can be fuzzed on its own.
//!
//! ```
//! use std::sync::Arc;
//! use tafl_rules::{notation, Position, Variant};
//!
//! let brandubh = Arc::new(Variant::preset("brandubh"));
//! let mut pos = Position::start(brandubh);
//! assert_eq!(pos.legal_moves().len(), 40);
//! let mv = notation::parse_move("d2-b2", pos.geometry()).unwrap().mv;
//! let captured = pos.play(mv).unwrap();
//! assert!(captured.is_empty() && pos.outcome().is_none());
//! ```
//!
//! A variant is one [`RuleSet`] plus a layout, read from TOML (the presets are embedded) or
//! from an OpenTafl rules string:
//!
//! ```
//! use tafl_rules::Variant;
//! let v = Variant::from_spec("brandubh").unwrap();
//! assert_eq!(v.geometry.size(), 7);
//! let text = tafl_rules::notation::rules_string(&v).unwrap();
//! let back = tafl_rules::notation::parse_rules_string(&text).unwrap();
//! assert_eq!(back.rules_fingerprint(), v.rules_fingerprint());
//! ```
//!
//! The error types every module shares are in [`error`]: one [`ParseError`] for all outside
//! text, and a small enum per check. The rest reads bottom-up: [`geometry`] (squares,
//! directions, board size) → [`types`] (sides, pieces, moves, outcomes) → `cell` (the one-byte
//! cell codes of the board; private) → [`ruleset`] (one enum per rule axis) → [`variant`]
//! (rules + layout + derived square tables, TOML presets) → [`setup`] (loose boards) →
//! [`position`] (move generation, captures) → `game_end` (escape, king capture, exit fort,
//! encirclement, repetition, no moves, ply cap; private, its public methods are on
//! [`Position`]) → [`notation`] (OpenTafl strings) → [`perft`].

mod canonical;
mod cell;
pub mod error;
mod game_end;
pub mod geometry;
pub mod notation;
pub mod perft;
pub mod play;
pub mod position;
pub mod records;
pub mod ruleset;
pub mod setup;
pub mod types;
pub mod variant;
mod zobrist;

pub use game_end::EndScreen;
pub use error::{InexpressibleRules, MoveError, ParseError, ParseKind, SetupError, VariantError};
pub use geometry::{Direction, Geometry, Square};
pub use position::{Captures, Position, Undo};
pub use ruleset::RuleSet;
pub use setup::Setup;
pub use types::{Move, Outcome, Piece, Reason, Side};
pub use variant::Variant;
