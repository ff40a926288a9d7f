//! The 8 symmetries of the square board (the dihedral group D4), for data augmentation and
//! for checking that the encoding is consistent: transforming a position and then encoding it
//! gives the transformed planes, and the same holds for moves and policy indices.

use super::encoding::{policy_index, policy_size};
use crate::rules::{Direction, Geometry, Move, Position, Setup, Square, Variant};

/// One of the 8 symmetries: bit 2 transposes (file <-> rank), then bit 0 mirrors the files
/// and bit 1 mirrors the ranks. `Symmetry(0)` is the identity.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Symmetry(pub u8);

impl Symmetry {
    /// The symmetry that changes nothing.
    pub const IDENTITY: Symmetry = Symmetry(0);
    pub const ALL: [Symmetry; 8] = [Symmetry(0), Symmetry(1), Symmetry(2), Symmetry(3), Symmetry(4), Symmetry(5), Symmetry(6), Symmetry(7)];

    fn apply(self, f: i32, r: i32, m: i32) -> (i32, i32) {
        let (mut f, mut r) = if self.0 & 4 != 0 { (r, f) } else { (f, r) };
        if self.0 & 1 != 0 {
            f = m - f;
        }
        if self.0 & 2 != 0 {
            r = m - r;
        }
        (f, r)
    }

    pub fn square(self, g: Geometry, sq: Square) -> Square {
        let (f, r) = self.apply(sq.file() as i32, sq.rank() as i32, g.size() as i32 - 1);
        Square::new(f as u8, r as u8)
    }

    pub fn direction(self, d: Direction) -> Direction {
        let (df, dr) = d.vector();
        let v = self.apply(df, dr, 0);
        *Direction::ALL.iter().find(|&&x| x.vector() == v).expect("a symmetry maps directions to directions")
    }

    pub fn mv(self, g: Geometry, mv: Move) -> Move {
        Move::new(self.square(g, mv.from), self.square(g, mv.to))
    }

    /// Whether the variant's special squares and starting layout look the same under this
    /// symmetry (true for every preset; a lopsided custom layout may allow fewer).
    pub fn preserves(self, v: &Variant) -> bool {
        let g = v.geometry;
        let specials = g.squares().all(|s| {
            let t = self.square(g, s);
            v.is_throne(s) == v.is_throne(t) && v.is_corner(s) == v.is_corner(t) && v.is_camp(s) == v.is_camp(t) && v.is_escape(s) == v.is_escape(t)
        });
        let mut layout: Vec<_> = v.layout.iter().map(|&(s, p)| (self.square(g, s), p)).collect();
        layout.sort_by_key(|(s, _)| (s.rank(), s.file()));
        specials && layout == v.layout
    }

    /// The transformed position (pieces and side to move; history is not carried).
    pub fn position(self, pos: &Position) -> Position {
        let g = pos.geometry();
        let pieces = pos.pieces().into_iter().map(|(s, p)| (self.square(g, s), p)).collect();
        let setup = Setup { size: g.size(), pieces, to_move: pos.to_move() };
        Position::from_setup(pos.variant().clone(), &setup).expect("a symmetric variant maps legal positions to legal ones")
    }

    /// Transforms encoded planes `[planes, N, N]`, of any number of planes (every plane of
    /// every encoding is indexed by square, so a symmetry only moves squares).
    pub fn planes(self, g: Geometry, planes: &[f32]) -> Vec<f32> {
        let nn = g.num_squares();
        assert_eq!(planes.len() % nn, 0, "whole planes");
        let mut out = vec![0.0; planes.len()];
        for sq in g.squares() {
            let (i, j) = (g.dense(sq), g.dense(self.square(g, sq)));
            for p in 0..planes.len() / nn {
                out[p * nn + j] = planes[p * nn + i];
            }
        }
        out
    }

    /// Transforms a dense policy vector (legal moves only carry meaning; other entries of
    /// moves leaving the board stay 0).
    pub fn policy(self, g: Geometry, policy: &[f32]) -> Vec<f32> {
        let mut out = vec![0.0; policy_size(g)];
        for (i, &x) in policy.iter().enumerate() {
            if let Some(m) = super::encoding::index_move(g, i) {
                out[policy_index(g, self.mv(g, m))] = x;
            }
        }
        out
    }
}
