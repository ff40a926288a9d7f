//! Loose setups and their validation into positions ("loose setup, strict position").
//!
//! A [`Setup`] is whatever a position string or a layout says: it may have two kings or an
//! attacker on a corner. [`crate::Position::from_setup`] turns it into a position that is
//! always legal, or says exactly why not; the check itself is `variant::check_pieces`, which
//! [`crate::Variant::new`] applies to every starting layout as well.

use crate::geometry::Square;
use crate::types::{Piece, Side};

/// A board and a side to move, not yet checked against any rules.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Setup {
    pub size: u8,
    pub pieces: Vec<(Square, Piece)>,
    pub to_move: Side,
}
