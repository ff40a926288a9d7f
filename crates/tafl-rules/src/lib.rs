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
//! let brandubh = Arc::new(Variant::preset("brandubh")?);
//! let mut pos = Position::start(brandubh);
//! assert_eq!(pos.legal_moves().len(), 40);
//! let mv = notation::parse_move("d2-b2", pos.geometry())?.mv;
//! let captured = pos.play(mv).unwrap();
//! assert!(captured.is_empty() && pos.outcome().is_none());
//! assert!(Variant::preset("brandub").is_err());
//! # Ok::<(), tafl_rules::ParseError>(())
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
//! The modules are declared below in layer order, lowest first, and each one imports only
//! from modules declared above it (`scripts/rules-layers.sh` checks every `crate::` path):
//!
//! 0. `canonical`: the canonical JSON of rule sets (private; serde only).
//! 1. `parse_error`: [`ParseError`] and [`ParseKind`] (private; re-exported by [`error`]).
//! 2. [`geometry`]: squares, directions, board size.
//! 3. [`types`]: sides, pieces, moves, outcomes.
//! 4. [`error`]: [`ParseError`] for all outside text, and a small enum per check
//!    ([`SetupError`], [`MoveError`], [`InexpressibleRules`]).
//! 5. `cell`: the one-byte cell codes of the board (private).
//! 6. `zobrist`: hash keys (private).
//! 7. [`ruleset`]: one enum per rule axis.
//! 8. [`variant`]: rules + layout + derived square tables, TOML presets; checks a layout.
//! 9. [`setup`]: loose boards.
//! 10. [`position`]: move generation, captures, and in its private submodule `game_end` the
//!     game ends (escape, king capture, exit fort, encirclement, repetition, no moves, ply
//!     cap), which [`Position::make`] calls: one layer, because making a move decides whether
//!     it ended the game.
//! 11. [`perft`].
//! 12. [`notation`]: OpenTafl position, move and rules strings (and `Move::parse`,
//!     `Debug for Position`, which write or read them).
//! 13. `spec`: [`Variant::from_spec`] (preset, TOML file or rules string; private).
//! 14. [`play`]: random games and playouts.
//! 15. [`records`]: archived game records.

// In layer order (the order is the check's input); the blank lines keep rustfmt from sorting.
mod canonical;

mod parse_error;

pub mod geometry;

pub mod types;

pub mod error;

mod cell;

mod zobrist;

pub mod ruleset;

pub mod variant;

pub mod setup;

pub mod position;

pub mod perft;

pub mod notation;

mod spec;

pub mod play;

pub mod records;

pub use error::{InexpressibleRules, MoveError, ParseError, ParseKind, SetupError, VariantError};
pub use geometry::{Direction, Geometry, Square};
pub use position::EndScreen;
pub use position::{Captures, Position, Undo};
pub use ruleset::RuleSet;
pub use setup::Setup;
pub use types::{Move, Outcome, Piece, Reason, Side};
pub use variant::Variant;
