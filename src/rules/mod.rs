//! The rules layer: everything about playing tafl exactly, and nothing else.
//!
//! It depends on std and serde only (no search, no tch, no CLI), so it builds and tests in
//! seconds and can be fuzzed on its own. Read it bottom-up: [`geometry`] (squares, directions,
//! board size) → [`types`] (sides, pieces, moves, outcomes) → [`ruleset`] (one enum per rule
//! axis) → [`variant`] (rules + layout + derived square tables, TOML presets) → [`setup`]
//! (loose boards) → [`position`] (move generation, captures, game ends) → [`notation`]
//! (OpenTafl strings) → [`perft`].

pub mod error;
pub mod geometry;
pub mod notation;
pub mod perft;
pub mod position;
pub mod ruleset;
pub mod setup;
pub mod types;
pub mod variant;
mod zobrist;

pub use error::{MoveError, SetupError, VariantError};
pub use geometry::{Direction, Geometry, Square};
pub use position::{Captures, Position, Undo};
pub use ruleset::RuleSet;
pub use setup::Setup;
pub use types::{Move, Outcome, Piece, Reason, Side};
pub use variant::Variant;
