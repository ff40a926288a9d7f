//! Zobrist keys, generated at compile time from a fixed seed so hashes are stable across runs,
//! machines and versions (they end up in data files).

use crate::cell::{piece_index, PIECE_KINDS};
use crate::geometry::CELLS;

const fn splitmix(state: u64) -> (u64, u64) {
    let s = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = s;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (s, z ^ (z >> 31))
}

const fn generate() -> [[u64; CELLS]; PIECE_KINDS] {
    let mut keys = [[0u64; CELLS]; PIECE_KINDS];
    let mut state = 0x7AF1_1AB0_0000_0001u64;
    let mut p = 0;
    while p < PIECE_KINDS {
        let mut i = 0;
        while i < CELLS {
            let (s, k) = splitmix(state);
            state = s;
            keys[p][i] = k;
            i += 1;
        }
        p += 1;
    }
    keys
}

static KEYS: [[u64; CELLS]; PIECE_KINDS] = generate();

/// Key for "defenders to move" (the seed's digits spell SEED OF SIDE, hence the grouping).
#[allow(clippy::unusual_byte_groupings)]
pub const SIDE: u64 = splitmix(0x5EED_0F_51DE).1;

/// Key of the piece with cell code `code` (a piece, see [`crate::cell`]) on `cell`.
#[inline(always)]
pub fn piece(code: u8, cell: usize) -> u64 {
    KEYS[piece_index(code)][cell]
}
