//! The network's view of a position (input planes) and of a move (policy index).
//!
//! This module is the single source of the I/O contract; exported metadata repeats it and
//! `models/README.md` documents it. Change anything here and bump [`ENCODING_VERSION`]:
//! checkpoints record the version and refuse to load under another.
//!
//! Input: `[PLANES, N, N]` floats, square (file f, rank r) at `[plane, r, f]` (rank 1 = row 0).
//! Policy: `[4 * (N - 1), N, N]` logits; a move from square s in direction d (north, east,
//! south, west) over distance k is plane `d * (N - 1) + (k - 1)`, cell of s:
//! flat index `(d * (N - 1) + k - 1) * N * N + r * N + f`.

use crate::rules::{Direction, Geometry, Move, Piece, Position, Side, Square, Variant};

/// Version of the input planes and policy map. Version 1: the ten planes of [`PLANE_NAMES`].
pub const ENCODING_VERSION: u32 = 1;

/// The input planes, in order.
pub const PLANE_NAMES: [&str; 10] = [
    "attackers",         // 1 where an attacker stands
    "defenders",         // 1 where a defender (not the king) stands
    "king",              // 1 where the king stands
    "throne",            // 1 on throne squares
    "escape",            // 1 on squares where the king wins on arrival (corners or edges)
    "camps",             // 1 on camp squares (Tablut-style base camps)
    "attackers_to_move", // all 1 when the attackers are to move, else all 0
    "repeated",          // all 1 when the current position occurred before (repetition risk)
    "ply_progress",      // ply / ply cap everywhere
    "board",             // all 1 (marks the board for zero-padded convolutions)
];

/// Number of input planes.
pub const PLANES: usize = PLANE_NAMES.len();

/// Number of policy outputs for a board of side `n`.
pub fn policy_size(g: Geometry) -> usize {
    let n = g.size() as usize;
    4 * (n - 1) * n * n
}

/// The policy index of a move (which must be orthogonal and on the board).
pub fn policy_index(g: Geometry, mv: Move) -> usize {
    let n = g.size() as usize;
    let d = mv.direction().expect("moves are orthogonal").index();
    let k = mv.distance() as usize;
    (d * (n - 1) + k - 1) * n * n + g.dense(mv.from)
}

/// The move of a policy index, if it stays on the board.
pub fn index_move(g: Geometry, index: usize) -> Option<Move> {
    let n = g.size() as usize;
    if index >= policy_size(g) {
        return None;
    }
    let (plane, cell) = (index / (n * n), index % (n * n));
    let (d, k) = (Direction::ALL[plane / (n - 1)], (plane % (n - 1) + 1) as i32);
    let from = g.from_dense(cell);
    let (df, dr) = direction_vector(d);
    let (f, r) = (from.file() as i32 + df * k, from.rank() as i32 + dr * k);
    g.contains(f, r).then(|| Move::new(from, Square::new(f as u8, r as u8)))
}

/// (file, rank) step of a direction.
pub const fn direction_vector(d: Direction) -> (i32, i32) {
    match d {
        Direction::North => (0, 1),
        Direction::East => (1, 0),
        Direction::South => (0, -1),
        Direction::West => (-1, 0),
    }
}

/// Encodes positions of one variant; holds the planes that never change.
#[derive(Clone, Debug)]
pub struct Encoder {
    geometry: Geometry,
    /// Throne, escape and camp planes.
    fixed: Vec<f32>,
    ply_cap: f32,
}

impl Encoder {
    pub fn new(variant: &Variant) -> Encoder {
        let g = variant.geometry;
        let nn = g.num_squares();
        let mut fixed = vec![0.0; 3 * nn];
        for sq in g.squares() {
            let i = g.dense(sq);
            fixed[i] = variant.is_throne(sq) as u8 as f32;
            fixed[nn + i] = variant.is_escape(sq) as u8 as f32;
            fixed[2 * nn + i] = variant.is_camp(sq) as u8 as f32;
        }
        Encoder { geometry: g, fixed, ply_cap: variant.ply_cap().max(1) as f32 }
    }

    /// Floats per encoded position (never 0: there is no empty encoding, so no `is_empty`).
    #[allow(clippy::len_without_is_empty)]
    pub fn len(&self) -> usize {
        PLANES * self.geometry.num_squares()
    }

    pub fn geometry(&self) -> Geometry {
        self.geometry
    }

    /// Writes the planes of `pos` into `out` (length [`Encoder::len`]).
    pub fn encode(&self, pos: &Position, out: &mut [f32]) {
        let g = self.geometry;
        let nn = g.num_squares();
        assert_eq!(out.len(), PLANES * nn, "encoding buffer size");
        out[..3 * nn].fill(0.0);
        for sq in g.squares() {
            if let Some(p) = pos.piece_at(sq) {
                let plane = match p {
                    Piece::Attacker => 0,
                    Piece::Defender => 1,
                    Piece::King => 2,
                };
                out[plane * nn + g.dense(sq)] = 1.0;
            }
        }
        out[3 * nn..6 * nn].copy_from_slice(&self.fixed);
        out[6 * nn..7 * nn].fill((pos.to_move() == Side::Attackers) as u8 as f32);
        out[7 * nn..8 * nn].fill((pos.repetitions() > 1) as u8 as f32);
        out[8 * nn..9 * nn].fill((pos.ply() as f32 / self.ply_cap).min(1.0));
        out[9 * nn..].fill(1.0);
    }

    /// The planes of one position as a new vector.
    pub fn planes(&self, pos: &Position) -> Vec<f32> {
        let mut v = vec![0.0; self.len()];
        self.encode(pos, &mut v);
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// Positions of `variant` along one fixed game (each move picked by its index among the
    /// sorted legal moves: no random generator whose stream could change), and on brandubh one
    /// position that occurred before (the repetition plane).
    fn pinned_positions(variant: &Arc<Variant>) -> Vec<Position> {
        let mut pos = Position::start(variant.clone());
        let mut out = vec![pos.clone()];
        for ply in 0..40 {
            let moves = pos.legal_moves();
            if pos.is_over() || moves.is_empty() {
                break;
            }
            pos.make(moves[(ply * 7 + 3) % moves.len()]);
            out.push(pos.clone());
        }
        if variant.name == "brandubh" {
            // There and back again, for both sides: the start recurs.
            let mut p = Position::start(variant.clone());
            let (a, d) = (Move::new(Square::new(3, 1), Square::new(1, 1)), Move::new(Square::new(3, 2), Square::new(2, 2)));
            for mv in [a, d, Move::new(a.to, a.from), Move::new(d.to, d.from)] {
                p.play(mv).expect("a legal move");
            }
            assert_eq!(p.repetitions(), 2);
            out.push(p);
        }
        out
    }

    /// FNV-1a over the bits of every float.
    fn checksum(planes: &[f32]) -> u64 {
        planes.iter().flat_map(|x| x.to_bits().to_le_bytes()).fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3))
    }

    /// Version 1 planes, bit for bit as every version-1 model was trained on: checksums
    /// computed with the encoder before encoding versions existed (commit 9a6ec34).
    #[test]
    fn version_1_planes_are_pinned() {
        let mut got = Vec::new();
        for name in ["brandubh", "copenhagen", "tablut", "alea-evangelii"] {
            let v = Arc::new(Variant::preset(name).expect("preset"));
            let enc = Encoder::new(&v);
            let planes: Vec<f32> = pinned_positions(&v).iter().flat_map(|p| enc.planes(p)).collect();
            got.push((name, planes.len(), format!("{:016x}", checksum(&planes))));
        }
        let want = [
            ("brandubh", 20580, "c8224f8a8a97e1f8"),
            ("copenhagen", 49610, "bc3b97730aba0666"),
            ("tablut", 33210, "ef1261272841de7b"),
            ("alea-evangelii", 148010, "614c217eee96ace4"),
        ];
        assert_eq!(got, want.map(|(n, len, sum)| (n, len, sum.to_string())));
    }
}
