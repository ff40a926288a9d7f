//! The network's view of a position (input planes) and of a move (policy index).
//!
//! This module is the single source of the I/O contract; exported metadata repeats it and
//! `models/README.md` documents it. The input planes are versioned ([`Encoding`]): every model
//! records the version it was trained with and is always fed that version, so a model of any
//! version keeps loading and playing as it did. Changing the planes means a new version, never
//! an edit of an old one (`version_1_planes_are_pinned` holds version 1 to its bits).
//!
//! Input: `[planes, N, N]` floats (`Encoding::planes`), square (file f, rank r) at
//! `[plane, r, f]` (rank 1 = row 0).
//! Policy: `[4 * (N - 1), N, N]` logits; a move from square s in direction d (north, east,
//! south, west) over distance k is plane `d * (N - 1) + (k - 1)`, cell of s:
//! flat index `(d * (N - 1) + k - 1) * N * N + r * N + f`. The policy map has no version:
//! it is the same for every encoding.

use crate::rules::geometry::{CELLS, MAX_SIZE};
use crate::rules::{Direction, Geometry, Move, Piece, Position, Side, Square, Variant};
use serde::{Deserialize, Serialize};

/// The input planes of version 1, in order.
const V1_PLANE_NAMES: [&str; 10] = [
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

/// The input planes of version 2, in order: version 1's, then what the rules say the pieces
/// can do now, for both sides whoever is to move ([`Encoder`] says how each is computed).
const V2_PLANE_NAMES: [&str; 19] = [
    "attackers",
    "defenders",
    "king",
    "throne",
    "escape",
    "camps",
    "attackers_to_move",
    "repeated",
    "ply_progress",
    "board",
    "king_moves",              // squares the king can move to
    "king_moves_2",            // squares the king reaches with a second move and not with one
    "escape_now",              // escape squares the king can move to
    "escape_two",              // escape squares the king reaches with a second move and not with one
    "attackers_capturable",    // attackers some defender's move would capture
    "defenders_capturable",    // defenders (and the king) some attacker's move would capture
    "attacker_reach",          // squares some attacker can move to
    "defender_reach",          // squares some defender or the king can move to
    "king_neighbours_hostile", // squares beside the king with an attacker, or empty and hostile to it
];

/// A version of the input planes. The policy map is the same for every version.
///
/// Serialized as its version number (`encoding = 2` in a run config's `[net]`; `"encoding":
/// 2` in model metadata).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "u32", into = "u32")]
pub enum Encoding {
    /// The ten planes of every model trained before versions existed: the pieces, the special
    /// squares, the side to move, repetition, ply progress and the board.
    V1,
    /// Version 1's ten planes, then nine planes of what the pieces can do now: the king's
    /// moves and escapes in one and two moves, what each side could capture, where each side
    /// can move, and the king's hostile neighbours.
    V2,
}

impl Encoding {
    /// Every version, oldest first.
    pub const ALL: [Encoding; 2] = [Encoding::V1, Encoding::V2];
    /// The version of a new network when nothing names one.
    pub const NEWEST: Encoding = Encoding::V2;
    /// The version a file describes that predates versioned encodings (no `encoding` key):
    /// every such model was trained on version 1.
    pub const LEGACY: Encoding = Encoding::V1;

    /// The version number, as model metadata records it.
    pub const fn version(self) -> u32 {
        match self {
            Encoding::V1 => 1,
            Encoding::V2 => 2,
        }
    }

    /// The encoding of a version number, if this build knows it.
    pub fn from_version(version: u32) -> Option<Encoding> {
        Encoding::ALL.into_iter().find(|e| e.version() == version)
    }

    /// The names of the input planes, in order.
    pub const fn plane_names(self) -> &'static [&'static str] {
        match self {
            Encoding::V1 => &V1_PLANE_NAMES,
            Encoding::V2 => &V2_PLANE_NAMES,
        }
    }

    /// Number of input planes.
    pub const fn planes(self) -> usize {
        self.plane_names().len()
    }

    /// The versions this build reads, for messages: `1 (10 planes), 2 (19 planes)`.
    pub fn known() -> String {
        Encoding::ALL.iter().map(|e| format!("{} ({} planes)", e.version(), e.planes())).collect::<Vec<_>>().join(", ")
    }
}

impl TryFrom<u32> for Encoding {
    type Error = String;
    fn try_from(version: u32) -> Result<Encoding, String> {
        Encoding::from_version(version).ok_or_else(|| format!("encoding {version}: this build knows versions {}", Encoding::known()))
    }
}

impl From<Encoding> for u32 {
    fn from(e: Encoding) -> u32 {
        e.version()
    }
}

impl std::fmt::Display for Encoding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.version())
    }
}

impl std::str::FromStr for Encoding {
    type Err = String;
    /// Parses a version number (`1`, `2`).
    fn from_str(s: &str) -> Result<Encoding, String> {
        let version: u32 = s.trim().parse().map_err(|_| format!("bad encoding {s:?} (expected a version number: {})", Encoding::known()))?;
        Encoding::try_from(version)
    }
}

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
    let (df, dr) = d.vector();
    let (f, r) = (from.file() as i32 + df * k, from.rank() as i32 + dr * k);
    g.contains(f, r).then(|| Move::new(from, Square::new(f as u8, r as u8)))
}

/// A number type the input planes can be written in: `f32`, or `i16` holding bf16 bit
/// patterns for a network that computes in bf16 (its input is then written as it will be read,
/// without a float buffer and a conversion pass per batch; `i16` because LibTorch takes the
/// bits as a 16-bit integer tensor viewed as bf16, see `nn::evaluator`). Every plane value is
/// 0, 1 or the ply fraction.
pub trait PlaneValue: Copy + Send + 'static {
    const ZERO: Self;
    const ONE: Self;
    fn from_f32(x: f32) -> Self;
}

impl PlaneValue for f32 {
    const ZERO: f32 = 0.0;
    const ONE: f32 = 1.0;
    fn from_f32(x: f32) -> f32 {
        x
    }
}

/// bf16 bit patterns (rounded to nearest, as LibTorch converts).
impl PlaneValue for i16 {
    const ZERO: i16 = half::bf16::ZERO.to_bits() as i16;
    const ONE: i16 = half::bf16::ONE.to_bits() as i16;
    fn from_f32(x: f32) -> i16 {
        half::bf16::from_f32(x).to_bits() as i16
    }
}

/// Encodes positions of one variant in one [`Encoding`]; holds the planes that never change.
///
/// Version 2's planes after the first ten come from the rules crate alone: its move
/// generator ([`Position::generate_moves_from`], which works for the side not to move too)
/// and its move making ([`Position::make`], which finds captures and game ends). To make
/// either side's moves, the board is set up twice, once with each side to move and no
/// history, so the planes depend on the board and the rules only (not on the side to move,
/// the history or the ply):
///
/// - `king_moves`: the king's moves; `escape_now`: those ending on escape squares.
/// - `king_moves_2`: squares the king reaches with a second move after a first that does not
///   end the game, other pieces standing still (an armed king's first move captures as the
///   rules say), minus the one-move squares and the king's own; `escape_two`: escape squares
///   among them.
/// - `attackers_capturable` / `defenders_capturable`: pieces one move of the other side would
///   capture (custodial or shieldwall), and the king where an attacker's move captures it.
///   Only moves that land beside an enemy piece are tried: no rule captures a piece any other
///   way (a shieldwall's row starts beside the bracketing piece), so the others cannot
///   capture (a test compares with trying every move); of those, only the ones
///   [`Position::may_capture`] lets through (a victim with an anvil behind it, a shieldwall
///   edge, the king beside) go to [`Position::captures_of`].
/// - `attacker_reach` / `defender_reach`: destinations of every move of the side (the king's
///   included for the defenders).
/// - `king_neighbours_hostile`: squares beside the king holding an attacker, or empty and
///   hostile to the king by the rules ([`Variant::hostile_to_king`]: throne, hostile corners
///   and camps).
#[derive(Clone, Debug)]
pub struct Encoder {
    geometry: Geometry,
    encoding: Encoding,
    /// Throne, escape and camp planes.
    fixed: Vec<f32>,
    /// The dense index (`Geometry::dense`) of each square, by its cell index
    /// ([`Square::index`]): looked up for every mark of the tactical planes.
    dense: Vec<u16>,
    ply_cap: f32,
}

/// A set of cells (by [`Square::index`]) as bits on the stack: the encoder's scratch sets,
/// cleared for every position it encodes.
#[derive(Clone, Copy)]
struct CellSet([u64; CELLS.div_ceil(64)]);

impl CellSet {
    const EMPTY: CellSet = CellSet([0; CELLS.div_ceil(64)]);

    #[inline]
    fn insert(&mut self, i: usize) {
        self.0[i / 64] |= 1 << (i % 64);
    }

    #[inline]
    fn contains(&self, i: usize) -> bool {
        self.0[i / 64] >> (i % 64) & 1 != 0
    }
}

/// Version 2's planes after version 1's, as offsets from the first of them.
mod tactic {
    pub const KING_MOVES: usize = 0;
    pub const KING_MOVES_2: usize = 1;
    pub const ESCAPE_NOW: usize = 2;
    pub const ESCAPE_TWO: usize = 3;
    pub const ATTACKERS_CAPTURABLE: usize = 4;
    pub const DEFENDERS_CAPTURABLE: usize = 5;
    pub const ATTACKER_REACH: usize = 6;
    pub const DEFENDER_REACH: usize = 7;
    pub const KING_NEIGHBOURS_HOSTILE: usize = 8;
}

impl Encoder {
    pub fn new(variant: &Variant, encoding: Encoding) -> Encoder {
        let g = variant.geometry;
        let nn = g.num_squares();
        let mut fixed = vec![0.0; 3 * nn];
        for sq in g.squares() {
            let i = g.dense(sq);
            fixed[i] = variant.is_throne(sq) as u8 as f32;
            fixed[nn + i] = variant.is_escape(sq) as u8 as f32;
            fixed[2 * nn + i] = variant.is_camp(sq) as u8 as f32;
        }
        let mut dense = vec![u16::MAX; CELLS];
        for sq in g.squares() {
            dense[sq.index()] = g.dense(sq) as u16;
        }
        Encoder { geometry: g, encoding, fixed, dense, ply_cap: variant.ply_cap().max(1) as f32 }
    }

    /// Floats per encoded position (never 0: there is no empty encoding, so no `is_empty`).
    #[allow(clippy::len_without_is_empty)]
    pub fn len(&self) -> usize {
        self.encoding.planes() * self.geometry.num_squares()
    }

    pub fn geometry(&self) -> Geometry {
        self.geometry
    }

    pub fn encoding(&self) -> Encoding {
        self.encoding
    }

    /// Writes the planes of `pos` into `out` (length [`Encoder::len`]).
    pub fn encode<T: PlaneValue>(&self, pos: &Position, out: &mut [T]) {
        let nn = self.geometry.num_squares();
        assert_eq!(out.len(), self.len(), "encoding buffer size");
        let (v1, rest) = out.split_at_mut(V1_PLANE_NAMES.len() * nn);
        self.encode_v1(pos, v1);
        if self.encoding == Encoding::V2 {
            self.tactics(pos, rest, true);
        }
    }

    fn encode_v1<T: PlaneValue>(&self, pos: &Position, out: &mut [T]) {
        let g = self.geometry;
        let nn = g.num_squares();
        out[..3 * nn].fill(T::ZERO);
        pos.for_each_piece_on(|sq, p| {
            let plane = match p {
                Piece::Attacker => 0,
                Piece::Defender => 1,
                Piece::King => 2,
            };
            out[plane * nn + g.dense(sq)] = T::ONE;
        });
        let bit = |on: bool| if on { T::ONE } else { T::ZERO };
        for (o, &f) in out[3 * nn..6 * nn].iter_mut().zip(&self.fixed) {
            *o = bit(f == 1.0);
        }
        out[6 * nn..7 * nn].fill(bit(pos.to_move() == Side::Attackers));
        out[7 * nn..8 * nn].fill(bit(pos.repetitions() > 1));
        out[8 * nn..9 * nn].fill(T::from_f32((pos.ply() as f32 / self.ply_cap).min(1.0)));
        out[9 * nn..].fill(T::ONE);
    }

    /// Version 2's planes after version 1's (see [`Encoder`]); `screen` makes only the moves that land beside an enemy piece when
    /// looking for captures (false makes every move: the reference the tests compare with).
    fn tactics<T: PlaneValue>(&self, pos: &Position, out: &mut [T], screen: bool) {
        use tactic::*;
        let g = self.geometry;
        let nn = g.num_squares();
        out.fill(T::ZERO);
        let dense = |sq: Square| usize::from(self.dense[sq.index()]);
        let mut mark = |plane: usize, sq: Square| out[plane * nn + dense(sq)] = T::ONE;
        let escape = |sq: Square| self.fixed[nn + dense(sq)] == 1.0;
        let variant = pos.variant();
        // The board as a new game's first position with the defenders to move: the king's
        // moves are made on it (a move may end the game), the other moves only looked at.
        let mut defenders = pos.analysis_copy(Side::Defenders);
        let king = pos.king();

        // The king: one move, then a second from each square the first reaches. (No lists
        // on the heap: this runs for every position a search sends to the network.)
        let mut first = [Move::new(king, king); 4 * MAX_SIZE as usize];
        let mut n_first = 0;
        let mut one = CellSet::EMPTY;
        defenders.for_each_move_from(king, |to| {
            first[n_first] = Move::new(king, to);
            n_first += 1;
            one.insert(to.index());
            mark(KING_MOVES, to);
            if escape(to) {
                mark(ESCAPE_NOW, to);
            }
        });
        for &m1 in &first[..n_first] {
            let undo = defenders.make(m1);
            if defenders.outcome().is_none() {
                defenders.for_each_move_from(m1.to, |to| {
                    if to != king && !one.contains(to.index()) {
                        mark(KING_MOVES_2, to);
                        if escape(to) {
                            mark(ESCAPE_TWO, to);
                        }
                    }
                });
            }
            defenders.unmake(m1, &undo);
        }

        // Each side's moves: where they land, and what they capture. `beside_a_piece_of[s]`:
        // the squares beside a piece of side `s` (the screen of the moves that may capture).
        let beside = |sq: Square| {
            Direction::ALL.into_iter().filter_map(move |d| {
                let (df, dr) = d.vector();
                let (f, r) = (sq.file() as i32 + df, sq.rank() as i32 + dr);
                g.contains(f, r).then(|| Square::new(f as u8, r as u8))
            })
        };
        // The cells off the board beside the edge are marked too, never read.
        let mut beside_a_piece_of = [CellSet::EMPTY; 2];
        pos.for_each_piece_on(|sq, piece| {
            for d in Direction::ALL {
                beside_a_piece_of[piece.side().index()].insert((sq.index() as isize + d.offset()) as usize);
            }
        });
        pos.for_each_piece_on(|from, piece| {
            let side = piece.side();
            let (reach, capturable) = match side {
                Side::Attackers => (ATTACKER_REACH, DEFENDERS_CAPTURABLE),
                Side::Defenders => (DEFENDER_REACH, ATTACKERS_CAPTURABLE),
            };
            let enemy_beside = &beside_a_piece_of[side.opponent().index()];
            // The moves are listed first: `captures_of` needs the position mutably.
            let mut tos = [from; 4 * MAX_SIZE as usize];
            let mut n = 0;
            defenders.for_each_move_from(from, |to| {
                tos[n] = to;
                n += 1;
            });
            for &to in &tos[..n] {
                mark(reach, to);
                let mv = Move::new(from, to);
                if screen && !(enemy_beside.contains(to.index()) && defenders.may_capture(mv)) {
                    continue;
                }
                let (captures, king_taken) = defenders.captures_of(mv);
                for &c in captures.as_slice() {
                    mark(capturable, c);
                }
                if king_taken {
                    mark(capturable, king);
                }
            }
        });

        for q in beside(king) {
            let hostile = match pos.piece_at(q) {
                Some(piece) => piece == Piece::Attacker,
                None => variant.hostile_to_king(q),
            };
            if hostile {
                mark(KING_NEIGHBOURS_HOSTILE, q);
            }
        }
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
    /// The bf16 planes (as bit patterns) are the f32 planes rounded to bf16, value for value.
    #[test]
    fn bf16_planes_are_the_f32_planes_rounded() {
        for name in ["brandubh", "copenhagen"] {
            let v = Arc::new(Variant::preset(name).expect("preset"));
            let enc = Encoder::new(&v, Encoding::V2);
            let (mut f, mut b) = (vec![0f32; enc.len()], vec![0i16; enc.len()]);
            for p in pinned_positions(&v) {
                enc.encode(&p, &mut f);
                enc.encode(&p, &mut b);
                let want: Vec<i16> = f.iter().map(|&x| half::bf16::from_f32(x).to_bits() as i16).collect();
                assert_eq!(b, want, "{name} at ply {}", p.ply());
                assert!(b.contains(&0x3F80), "ones are bf16 1.0");
            }
        }
    }

    #[test]
    fn version_1_planes_are_pinned() {
        let mut got = Vec::new();
        for name in ["brandubh", "copenhagen", "tablut", "alea-evangelii"] {
            let v = Arc::new(Variant::preset(name).expect("preset"));
            let enc = Encoder::new(&v, Encoding::V1);
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

    // ----- version 2 ---------------------------------------------------------------------

    fn brandubh() -> Arc<Variant> {
        Arc::new(Variant::preset("brandubh").expect("preset"))
    }

    /// A position from rows of `.`, `+` (an empty throne or corner, for the reader), `a`, `d`,
    /// `k`, top rank first, as in the rules crate's clause tests.
    fn board(v: &Arc<Variant>, rows: &str, to_move: Side) -> Position {
        let text: String = rows.replace('+', ".").lines().filter(|l| !l.trim().is_empty()).map(|l| l.split_whitespace().collect::<String>() + "\n").collect();
        let (g, pieces) = crate::rules::variant::parse_layout(&text).expect("test board parses");
        Position::from_setup(v.clone(), &crate::rules::Setup { size: g.size(), pieces, to_move }).expect("test board is legal")
    }

    /// The squares where the version-2 plane `name` is 1, sorted (a1 < a2 < ... < b1). The
    /// planes are the same whichever side is to move: checked here for every board.
    fn plane(pos: &Position, name: &str) -> Vec<String> {
        let v = pos.variant();
        let g = v.geometry;
        let enc = Encoder::new(v, Encoding::V2);
        let i = Encoding::V2.plane_names().iter().position(|&n| n == name).expect("a version-2 plane");
        let mut setup = pos.to_setup();
        let mut planes = Vec::new();
        for side in [Side::Attackers, Side::Defenders] {
            setup.to_move = side;
            let p = enc.planes(&Position::from_setup(v.clone(), &setup).expect("legal"));
            planes.push(p[i * g.num_squares()..(i + 1) * g.num_squares()].to_vec());
        }
        assert_eq!(planes[0], planes[1], "{name} does not depend on the side to move");
        let mut squares: Vec<Square> = g.squares().filter(|&s| planes[0][g.dense(s)] == 1.0).collect();
        squares.sort();
        assert!(planes[0].iter().all(|&x| x == 0.0 || x == 1.0));
        squares.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn encodings_know_their_planes_and_version_2_extends_version_1() {
        assert_eq!((Encoding::V1.planes(), Encoding::V2.planes()), (10, 19));
        assert_eq!(&Encoding::V2.plane_names()[..10], Encoding::V1.plane_names());
        for e in Encoding::ALL {
            assert_eq!(Encoding::from_version(e.version()), Some(e));
            assert_eq!(e.to_string().parse::<Encoding>(), Ok(e));
        }
        assert_eq!(Encoding::from_version(3), None);
        assert!("3".parse::<Encoding>().unwrap_err().contains("1 (10 planes), 2 (19 planes)"));
        // Version 2's first ten planes are version 1's, bit for bit.
        for name in ["brandubh", "copenhagen"] {
            let v = Arc::new(Variant::preset(name).expect("preset"));
            let (e1, e2) = (Encoder::new(&v, Encoding::V1), Encoder::new(&v, Encoding::V2));
            for p in pinned_positions(&v) {
                assert_eq!(e2.planes(&p)[..e1.len()], e1.planes(&p)[..], "{name}");
            }
        }
    }

    /// The king on b2 moves along its file and rank until a piece stops it (b5, e2).
    const KING_ROUTES: &str = "
        + . . . . . +
        . . . . . . .
        . a . . . . .
        . . . + . . .
        . . . . . . .
        . k . . a . .
        + . . . . . +";

    #[test]
    fn king_moves_are_the_kings_legal_moves() {
        let p = board(&brandubh(), KING_ROUTES, Side::Attackers);
        assert_eq!(plane(&p, "king_moves"), ["a2", "b1", "b3", "b4", "c2", "d2"]);
    }

    /// Second moves from each first square, over the square the king left (c2 west to a2 is
    /// a first move already) and onto the throne (b4-d4, d2-d4: the king may stop there).
    #[test]
    fn king_moves_2_are_new_squares_after_a_second_king_move() {
        let p = board(&brandubh(), KING_ROUTES, Side::Defenders);
        let want = [
            "a1", "a3", "a4", "a5", "a6", "a7", "c1", "c3", "c4", "c5", "c6", "c7", "d1", "d3", "d4", "d5", "d6", "d7", "e1", "e3", "e4", "f1", "f3", "f4",
            "g1", "g3", "g4",
        ];
        assert_eq!(plane(&p, "king_moves_2"), want);
        assert_eq!(plane(&p, "escape_two"), ["a1", "a7", "g1"]);
    }

    /// The king on a4: a7 is one move away; g1 is two (over the empty throne to g4, then
    /// down), and so is a1, since the armed king's a3 captures a2 against the corner; g7 only
    /// after a move to a7, which has ended the game, or past the attacker on g5.
    const ESCAPES: &str = "
        + . . . . . +
        . . . . . . .
        . . . . . . a
        k . . + . . .
        . . . . . . .
        a . . . . . .
        + . . . . . +";

    #[test]
    fn escape_now_is_the_corners_the_king_reaches_in_one_move() {
        let p = board(&brandubh(), ESCAPES, Side::Attackers);
        assert_eq!(plane(&p, "escape_now"), ["a7"]);
    }

    #[test]
    fn escape_two_is_the_corners_the_king_reaches_in_exactly_two_moves() {
        let p = board(&brandubh(), ESCAPES, Side::Attackers);
        assert_eq!(plane(&p, "escape_two"), ["a1", "g1"]);
        assert!(!plane(&p, "king_moves_2").contains(&"g7".to_string()), "a7 ended the game: no second move from there");
    }

    /// e2-c2 captures c3 against c4; c4-c7 or e7-c7 captures b7 against the corner (hostile
    /// to attackers); nothing can close around f3.
    #[test]
    fn attackers_capturable_are_those_a_defenders_move_would_capture() {
        let p = board(
            &brandubh(),
            "
            + a . . d . +
            . . . . . . .
            . . . . . . .
            . . d k . . .
            . . a . . a .
            . . . . d . .
            + . . . . . +",
            Side::Attackers,
        );
        assert_eq!(plane(&p, "attackers_capturable"), ["b7", "c3"]);
    }

    /// The king (weak away from the throne) falls to f4-b4, which passes the empty throne to
    /// close b4 against b6; g3-e3 captures e2 against e1; nothing closes around f6.
    #[test]
    fn defenders_capturable_include_the_king_when_an_attackers_move_captures_it() {
        let p = board(
            &brandubh(),
            "
            + . . . . . +
            . a . . . d .
            . k . . . . .
            . . . + . a .
            . . . . . . a
            . . . . d . .
            + . . . a . +",
            Side::Defenders,
        );
        assert_eq!(plane(&p, "defenders_capturable"), ["b5", "e2"]);
    }

    /// b4 passes the throne but may not stop on it, nor go past the defender on g4.
    #[test]
    fn attacker_reach_is_every_attackers_destination() {
        let p = board(
            &brandubh(),
            "
            + . . . . . +
            . . . k . . .
            . . . . . . .
            . a . + . . d
            . . . . . . .
            . . . . . . .
            + . . . . . +",
            Side::Defenders,
        );
        assert_eq!(plane(&p, "attacker_reach"), ["a4", "b1", "b2", "b3", "b5", "b6", "b7", "c4", "e4", "f4"]);
    }

    /// The defender on d2 passes the throne without stopping; the king on e1 may stop on the
    /// corners a1 and g1.
    #[test]
    fn defender_reach_is_every_defenders_and_the_kings_destination() {
        let p = board(
            &brandubh(),
            "
            + . . . . . +
            . . . . . . .
            . . . . . . .
            . . . + . . .
            . . . . . . .
            . . . d . . .
            + . . . k . +",
            Side::Attackers,
        );
        let want = ["a1", "a2", "b1", "b2", "c1", "c2", "d1", "d3", "d5", "d6", "d7", "e2", "e3", "e4", "e5", "e6", "e7", "f1", "f2", "g1", "g2"];
        assert_eq!(plane(&p, "defender_reach"), want);
    }

    /// Beside the king: an attacker, and an empty throne or corner (hostile to the king by
    /// brandubh's rules); an empty square or a defender is not hostile.
    #[test]
    fn king_neighbours_hostile_are_attackers_and_hostile_empty_squares() {
        let v = brandubh();
        let by_throne = board(
            &v,
            "
            + . . . . . +
            . . . . . . .
            . . d k a . .
            . . . + . . .
            . . . . . . .
            . . . . . . .
            + . . . . . +",
            Side::Attackers,
        );
        assert_eq!(plane(&by_throne, "king_neighbours_hostile"), ["d4", "e5"]);
        let by_corner = board(
            &v,
            "
            + . . . . . +
            . . . . . . .
            . . . . . . .
            . . . + . . .
            . . . . . . .
            . a . . . . .
            + k . . . . +",
            Side::Attackers,
        );
        assert_eq!(plane(&by_corner, "king_neighbours_hostile"), ["a1", "b2"]);
    }

    /// Positions along seeded random games of `variant`, start included.
    fn random_positions(variant: &Arc<Variant>, games: u64, every: usize) -> Vec<Position> {
        use rand::{Rng, SeedableRng};
        let mut out = Vec::new();
        for seed in 0..games {
            let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
            let mut p = Position::start(variant.clone());
            let mut ply = 0;
            while !p.is_over() && ply < 300 {
                if ply % every == 0 {
                    out.push(p.clone());
                }
                let moves = p.legal_moves();
                p.make(moves[rng.gen_range(0..moves.len())]);
                ply += 1;
            }
        }
        out
    }

    /// Making only the moves that land beside an enemy finds every capture that making all
    /// moves finds, on presets with shieldwalls (copenhagen), camps (alea-evangelii), edge
    /// escapes (ard-ri, tablut-linnaeus), short moves (magpie, ard-ri) and weak kings.
    #[test]
    fn the_capture_screen_misses_no_capture() {
        for name in ["brandubh", "copenhagen", "tablut", "tablut-linnaeus", "alea-evangelii", "magpie", "ard-ri"] {
            let v = Arc::new(Variant::preset(name).expect("preset"));
            let enc = Encoder::new(&v, Encoding::V2);
            let len = enc.len() - V1_PLANE_NAMES.len() * v.geometry.num_squares();
            let (mut screened, mut full) = (vec![0.0; len], vec![0.0; len]);
            let mut captures = 0;
            for p in random_positions(&v, 4, 3) {
                enc.tactics(&p, &mut screened, true);
                enc.tactics(&p, &mut full, false);
                assert_eq!(screened, full, "{name}\n{p}");
                let nn = v.geometry.num_squares();
                captures += full[tactic::ATTACKERS_CAPTURABLE * nn..(tactic::DEFENDERS_CAPTURABLE + 1) * nn].iter().filter(|&&x| x == 1.0).count();
            }
            assert!(captures > 0, "{name}: some capture to compare");
        }
    }

    /// Version-2 planes commute with the board symmetries (the integration tests check both
    /// encodings on more presets).
    #[test]
    fn version_2_planes_commute_with_the_symmetries() {
        use crate::nn::Symmetry;
        for name in ["brandubh", "copenhagen"] {
            let v = Arc::new(Variant::preset(name).expect("preset"));
            let g = v.geometry;
            let enc = Encoder::new(&v, Encoding::V2);
            for p in random_positions(&v, 2, 9) {
                let p0 = Position::from_setup(v.clone(), &p.to_setup()).expect("legal");
                let planes = enc.planes(&p0);
                for s in Symmetry::ALL {
                    assert_eq!(enc.planes(&s.position(&p0)), s.planes(g, &planes), "{name} {s:?}\n{p0}");
                }
            }
        }
    }

    /// Encoding time per position on copenhagen midgame positions, printed (never asserted:
    /// run it with `cargo test -p tafl-lab --lib encode_time -- --ignored --nocapture`; the
    /// test profile is optimised).
    #[test]
    #[ignore]
    fn encode_time() {
        for name in ["copenhagen", "brandubh"] {
            let v = Arc::new(Variant::preset(name).expect("preset"));
            let positions = random_positions(&v, 20, 5);
            for e in Encoding::ALL {
                let enc = Encoder::new(&v, e);
                let mut out = vec![0.0; enc.len()];
                let rounds = 20;
                let t = std::time::Instant::now();
                for _ in 0..rounds {
                    for p in &positions {
                        enc.encode(p, &mut out);
                    }
                }
                let us = t.elapsed().as_secs_f64() * 1e6 / (rounds * positions.len()) as f64;
                println!("{name}: encoding {e}: {us:.2} us per position ({} positions)", positions.len());
            }
        }
    }
}
