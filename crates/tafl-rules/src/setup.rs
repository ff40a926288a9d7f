//! Loose setups and their validation into positions ("loose setup, strict position").
//!
//! A [`Setup`] is whatever a position string or a layout says: it may have two kings or an
//! attacker on a corner. [`crate::Position::from_setup`] turns it into a position that is
//! always legal, or says exactly why not.

use super::error::{ParseError, ParseKind, SetupError};
use super::geometry::Square;
use super::types::{Piece, Side};
use super::variant::{Variant, CAMP, THRONE};

/// A board and a side to move, not yet checked against any rules.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Setup {
    pub size: u8,
    pub pieces: Vec<(Square, Piece)>,
    pub to_move: Side,
}

/// Checks pieces against a variant: one king, no square twice, nothing on a square it may
/// never stand on (the king may stand on the throne and anyone in a camp, as at the start).
pub(crate) fn check_pieces(v: &Variant, pieces: &[(Square, Piece)]) -> Result<(), SetupError> {
    let kings = pieces.iter().filter(|(_, p)| *p == Piece::King).count();
    if kings != 1 {
        return Err(SetupError::KingCount(kings));
    }
    let mut seen = std::collections::HashSet::new();
    for &(sq, piece) in pieces {
        if !v.geometry.on_board(sq) {
            return Err(SetupError::OffBoard(sq));
        }
        if !seen.insert(sq) {
            return Err(SetupError::Occupied(sq));
        }
        let flags = v.tables.flags[sq.index()];
        let allowed = v.may_stop(piece, sq, sq)
            || (flags & THRONE != 0 && piece == Piece::King)
            || flags & CAMP != 0;
        if !allowed {
            return Err(SetupError::Restricted { square: sq, piece });
        }
    }
    Ok(())
}

/// [`check_pieces`] for variant construction: a bad starting layout makes a bad variant.
pub(crate) fn validate_pieces(v: &Variant, pieces: &[(Square, Piece)]) -> Result<(), ParseError> {
    check_pieces(v, pieces).map_err(|e| ParseError::new(ParseKind::Variant, &v.name, format!("layout: {e}")))
}
