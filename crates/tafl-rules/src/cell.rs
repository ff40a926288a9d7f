//! Cell codes: what one byte of the board array holds.
//!
//! The board is a padded mailbox (see [`crate::geometry`]): one byte per cell of a fixed
//! array with a border of off-board cells, so a ray walks until it meets a non-empty cell and
//! never needs a bounds check. Each piece kind owns one bit, and the border has a bit of its
//! own, which buys three things on the hot paths:
//!
//! * "is this cell free" is `cell == EMPTY`, and "does this cell stop a ray" is `cell != EMPTY`,
//!   whether a piece or the border stops it;
//! * a side's pieces are a bit mask ([`side_mask`]), so "is this one of mine" is one AND, and
//!   the per-square rule tables store one bit per piece kind or side (`stop`, `pass`,
//!   `hostile_*` in [`crate::variant`]) and test them the same way;
//! * the piece bits are 1, 2, 4, so `code >> 1` is 0, 1, 2: a dense index ([`piece_index`])
//!   for the Zobrist keys and the per-kind speed limits, in [`Piece::index`] order.
//!
//! The codes never leave the crate; everything public speaks [`Piece`] and [`Side`].

use crate::types::{Piece, Side};

/// A cell with nothing on it.
pub(crate) const EMPTY: u8 = 0;
/// An attacker.
pub(crate) const ATTACKER: u8 = 1 << 0;
/// A defender (not the king).
pub(crate) const DEFENDER: u8 = 1 << 1;
/// The king.
pub(crate) const KING: u8 = 1 << 2;
/// The border around the board: never empty, never a piece.
pub(crate) const OFF_BOARD: u8 = 1 << 3;

/// The attackers' pieces, as a mask.
pub(crate) const ATTACKERS: u8 = ATTACKER;
/// The defenders' pieces (defenders and the king), as a mask.
pub(crate) const DEFENDERS: u8 = DEFENDER | KING;
/// Every piece kind, as a mask (rule tables: "anyone may stop here").
pub(crate) const ANY_PIECE: u8 = ATTACKERS | DEFENDERS;
/// What blocks a path to the edge in the encirclement and exit-fort floods.
pub(crate) const ATTACKER_OR_BORDER: u8 = ATTACKER | OFF_BOARD;

/// Number of piece kinds, the length of tables indexed by [`piece_index`].
pub(crate) const PIECE_KINDS: usize = Piece::ALL.len();

/// The cell code of a piece.
#[inline]
pub(crate) const fn of_piece(p: Piece) -> u8 {
    match p {
        Piece::Attacker => ATTACKER,
        Piece::Defender => DEFENDER,
        Piece::King => KING,
    }
}

/// The piece a cell holds, if any.
#[inline]
pub(crate) const fn piece(code: u8) -> Option<Piece> {
    match code {
        ATTACKER => Some(Piece::Attacker),
        DEFENDER => Some(Piece::Defender),
        KING => Some(Piece::King),
        _ => None,
    }
}

/// The dense index (0, 1, 2) of a piece code; equals [`Piece::index`] of the piece.
#[inline(always)]
pub(crate) const fn piece_index(code: u8) -> usize {
    (code >> 1) as usize
}

/// The mask of a side's pieces.
#[inline]
pub(crate) const fn side_mask(side: Side) -> u8 {
    match side {
        Side::Attackers => ATTACKERS,
        Side::Defenders => DEFENDERS,
    }
}

/// The code of the pieces `mover` captures (the king is never captured custodially).
#[inline]
pub(crate) const fn capturable(mover: Side) -> u8 {
    match mover {
        Side::Attackers => DEFENDER,
        Side::Defenders => ATTACKER,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_distinct_single_bits_and_empty_is_zero() {
        let codes = [ATTACKER, DEFENDER, KING, OFF_BOARD];
        assert_eq!(EMPTY, 0);
        for (i, a) in codes.iter().enumerate() {
            assert_eq!(a.count_ones(), 1, "{a}");
            for b in &codes[i + 1..] {
                assert_eq!(a & b, 0);
            }
        }
        assert_eq!(ANY_PIECE & OFF_BOARD, 0);
        assert_eq!(ATTACKERS & DEFENDERS, 0);
    }

    #[test]
    fn pieces_round_trip_and_index_densely() {
        for p in Piece::ALL {
            let c = of_piece(p);
            assert_eq!(piece(c), Some(p));
            assert_eq!(piece_index(c), p.index());
            assert!(piece_index(c) < PIECE_KINDS);
            assert_eq!(ANY_PIECE & c, c);
        }
        assert_eq!(piece(EMPTY), None);
        assert_eq!(piece(OFF_BOARD), None);
    }

    #[test]
    fn side_masks_match_piece_sides() {
        for p in Piece::ALL {
            let c = of_piece(p);
            assert_ne!(c & side_mask(p.side()), 0, "{p:?}");
            assert_eq!(c & side_mask(p.side().opponent()), 0, "{p:?}");
        }
        for side in [Side::Attackers, Side::Defenders] {
            let victim = capturable(side);
            assert_eq!(victim & side_mask(side.opponent()), victim);
            assert_ne!(victim, KING);
        }
    }
}
