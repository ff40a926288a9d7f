//! Positions: the board, move generation, moves with their captures, and game outcomes.
//!
//! The board is a padded cell array (see [`crate::geometry`]) of one-byte cell codes (the
//! private `cell` module says why). Rays stop at the first non-empty cell, so move generation
//! needs no bounds checks, and a side's pieces are a bit mask. Moves are made and unmade in
//! place ([`Position::make`], [`Position::unmake`]), which is what perft and search need;
//! [`Position::play`] is the checked entry point for everything else.
//!
//! Whether a move ended the game is decided in the private submodule `game_end` (escape, king
//! capture, exit fort, encirclement, repetition, no moves, ply cap), called from
//! [`Position::make`]: a submodule, not a layer of its own, because the two call each other
//! (making a move decides the outcome; the outcome reads the board).

use crate::cell::{self, capturable, piece_index, side_mask, EMPTY, KING, OFF_BOARD};
use crate::error::{MoveError, SetupError};
use crate::geometry::{Direction, Geometry, Square, CELLS, STRIDE};
use crate::setup::Setup;
use crate::types::{Move, Outcome, Piece, Side};
use crate::variant::{check_pieces, Tables, Variant, CORNER, EDGE, RESTRICTED};
use crate::zobrist;
use std::fmt;
use std::sync::Arc;

mod game_end;
pub use game_end::EndScreen;

/// Most pieces one move can capture: three custodial captures and a shieldwall on each side.
pub const MAX_CAPTURES: usize = 3 + 2 * (crate::geometry::MAX_SIZE as usize - 2);

/// The pieces one move captured (never the king: a captured king ends the game instead).
#[derive(Clone, Copy)]
pub struct Captures {
    len: u8,
    squares: [Square; MAX_CAPTURES],
}

impl Captures {
    const fn new() -> Captures {
        Captures { len: 0, squares: [Square::new(0, 0); MAX_CAPTURES] }
    }
    #[inline]
    fn push(&mut self, sq: Square) {
        if !self.as_slice().contains(&sq) {
            self.squares[self.len as usize] = sq;
            self.len += 1;
        }
    }
    /// The captured squares, in the order found.
    pub fn as_slice(&self) -> &[Square] {
        &self.squares[..self.len as usize]
    }
    /// The captured squares, sorted.
    pub fn sorted(&self) -> Vec<Square> {
        let mut v = self.as_slice().to_vec();
        v.sort();
        v
    }
    /// Number of captured pieces.
    pub fn len(&self) -> usize {
        self.len as usize
    }
    /// Whether nothing was captured.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl fmt::Debug for Captures {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

/// What [`Position::unmake`] needs to take a move back.
#[derive(Clone, Copy, Debug)]
pub struct Undo {
    pub captures: Captures,
    prev_hash: u64,
    prev_outcome: Option<Outcome>,
    prev_rep_start: u32,
}

/// A legal position of a variant, with the history needed for repetition.
// The fields are visible to the crate so that `game_end` can read the board; only this module
// changes them.
pub struct Position {
    pub(crate) variant: Arc<Variant>,
    /// Cell codes ([`crate::cell`]), indexed by [`Square::index`].
    pub(crate) cells: [u8; CELLS],
    pub(crate) to_move: Side,
    pub(crate) king: Square,
    pub(crate) hash: u64,
    pub(crate) ply: u32,
    /// Non-king pieces per side, indexed by [`Side::index`].
    pub(crate) counts: [u16; 2],
    /// Hashes of every position since the start, the current one last.
    pub(crate) history: Vec<u64>,
    /// Index into `history` of the first position after the last capture; no earlier position
    /// can recur.
    pub(crate) rep_start: u32,
    pub(crate) outcome: Option<Outcome>,
}

/// `clone_from` reuses the history's allocation: a search copies its root position into a
/// recycled one for every simulation.
impl Clone for Position {
    fn clone(&self) -> Position {
        Position {
            variant: self.variant.clone(),
            cells: self.cells,
            to_move: self.to_move,
            king: self.king,
            hash: self.hash,
            ply: self.ply,
            counts: self.counts,
            history: self.history.clone(),
            rep_start: self.rep_start,
            outcome: self.outcome,
        }
    }

    fn clone_from(&mut self, source: &Position) {
        if !Arc::ptr_eq(&self.variant, &source.variant) {
            self.variant = source.variant.clone();
        }
        self.cells = source.cells;
        self.to_move = source.to_move;
        self.king = source.king;
        self.hash = source.hash;
        self.ply = source.ply;
        self.counts = source.counts;
        self.history.clone_from(&source.history);
        self.rep_start = source.rep_start;
        self.outcome = source.outcome;
    }
}

impl Position {
    /// The variant's starting position.
    pub fn start(variant: Arc<Variant>) -> Position {
        let setup = Setup { size: variant.geometry.size(), pieces: variant.layout.clone(), to_move: variant.rules.first };
        Position::from_setup(variant, &setup).expect("variant layouts are validated when loaded")
    }

    /// Validates a setup into a position.
    ///
    /// # Errors
    /// A board of the wrong size, not exactly one king, two pieces on a square, or a piece on
    /// a square it may never stand on.
    pub fn from_setup(variant: Arc<Variant>, setup: &Setup) -> Result<Position, SetupError> {
        let size = variant.geometry.size();
        if setup.size != size {
            return Err(SetupError::WrongSize { expected: size, found: setup.size });
        }
        check_pieces(&variant, &setup.pieces)?;
        let mut cells = [OFF_BOARD; CELLS];
        for sq in variant.geometry.squares() {
            cells[sq.index()] = EMPTY;
        }
        let mut king = Square::new(0, 0);
        let mut counts = [0u16; 2];
        for &(sq, p) in &setup.pieces {
            cells[sq.index()] = cell::of_piece(p);
            if p == Piece::King {
                king = sq;
            } else {
                counts[p.side().index()] += 1;
            }
        }
        let mut pos =
            Position { variant, cells, to_move: setup.to_move, king, hash: 0, ply: 0, counts, history: Vec::with_capacity(64), rep_start: 0, outcome: None };
        pos.hash = pos.compute_hash();
        pos.history.push(pos.hash);
        pos.outcome = pos.static_outcome();
        Ok(pos)
    }

    /// The variant.
    pub fn variant(&self) -> &Arc<Variant> {
        &self.variant
    }
    /// Board geometry.
    pub fn geometry(&self) -> Geometry {
        self.variant.geometry
    }
    /// The side to move.
    pub fn to_move(&self) -> Side {
        self.to_move
    }
    /// Plies played since this position's setup.
    pub fn ply(&self) -> u32 {
        self.ply
    }
    /// The king's square.
    pub fn king(&self) -> Square {
        self.king
    }
    /// Number of non-king pieces of a side.
    pub fn count(&self, side: Side) -> usize {
        self.counts[side.index()] as usize
    }
    /// Zobrist hash of board, side to move and rules.
    pub fn hash(&self) -> u64 {
        self.hash
    }
    /// The game's result, if it is over.
    pub fn outcome(&self) -> Option<Outcome> {
        self.outcome
    }
    /// Whether the game is over.
    pub fn is_over(&self) -> bool {
        self.outcome.is_some()
    }
    /// The piece on a square.
    pub fn piece_at(&self, sq: Square) -> Option<Piece> {
        cell::piece(self.cells[sq.index()])
    }
    /// Calls `f` with each piece and its square, rank 1 first (as [`Position::pieces`], without
    /// a list on the heap).
    #[inline]
    pub fn for_each_piece_on(&self, mut f: impl FnMut(Square, Piece)) {
        self.for_each_piece(cell::ANY_PIECE, |i, code| {
            if let Some(p) = cell::piece(code) {
                f(Square::from_index(i), p);
            }
            false
        });
    }
    /// All pieces, rank 1 first.
    pub fn pieces(&self) -> Vec<(Square, Piece)> {
        let mut v = Vec::with_capacity(self.counts[0] as usize + self.counts[1] as usize + 1);
        self.for_each_piece_on(|s, p| v.push((s, p)));
        v
    }
    /// The loose setup of this position (without its history).
    pub fn to_setup(&self) -> Setup {
        Setup { size: self.geometry().size(), pieces: self.pieces(), to_move: self.to_move }
    }
    /// How often the current position occurred since the last capture (1 = first time).
    pub fn repetitions(&self) -> usize {
        self.count_current()
    }

    /// This board with `side` to move as the first position of a game (ply 0, no earlier
    /// positions), its outcome not decided (`None`): for looking at what either side could
    /// do from here. It equals [`Position::from_setup`] of [`Position::to_setup`] with `side`
    /// to move in everything but the outcome, without validating the board (it is this
    /// position's) or deciding whether the game is over, which costs more than the rest
    /// (encirclement floods the board). Making a move on it decides that move's outcome as
    /// usual.
    pub fn analysis_copy(&self, side: Side) -> Position {
        let mut pos = Position {
            variant: self.variant.clone(),
            cells: self.cells,
            to_move: side,
            king: self.king,
            // The board's hash with the side to move changed where it differs (what
            // `compute_hash` gives, without visiting every square).
            hash: if side == self.to_move { self.hash } else { self.hash ^ zobrist::SIDE },
            ply: 0,
            counts: self.counts,
            history: Vec::with_capacity(8),
            rep_start: 0,
            outcome: None,
        };
        debug_assert_eq!(pos.hash, pos.compute_hash());
        pos.history.push(pos.hash);
        pos
    }

    /// This position, with its whole history, under `variant`'s rules: the same board, side
    /// to move, ply and earlier positions, the hashes moved to the new rules' fingerprint. Only
    /// a variant whose rules differ from this one's in nothing but [`RuleSet::repetition`]
    /// (the one rule that looks only at history) is accepted; anything else is `None`.
    ///
    /// Why: an agent may search under the reading its opponent's host scores by (OpenTafl
    /// 0.4.8 scores a Copenhagen repetition as a draw) while the referee keeps the variant's
    /// own rules. The outcome stays this position's: a game already over stays over as it was.
    ///
    /// [`RuleSet::repetition`]: crate::ruleset::RuleSet::repetition
    pub fn reread(&self, variant: &Arc<Variant>) -> Option<Position> {
        let same_otherwise = crate::ruleset::RuleSet { repetition: self.variant.rules.repetition, ..variant.rules.clone() };
        if variant.geometry != self.variant.geometry || same_otherwise != self.variant.rules {
            return None;
        }
        let shift = self.variant.tables.rules_key ^ variant.tables.rules_key;
        let mut pos = self.clone();
        pos.variant = variant.clone();
        pos.hash ^= shift;
        pos.history.iter_mut().for_each(|h| *h ^= shift);
        debug_assert_eq!(pos.hash, pos.compute_hash());
        Some(pos)
    }

    /// The hash recomputed from scratch; equals [`Position::hash`] (a property test checks it).
    pub fn compute_hash(&self) -> u64 {
        let mut h = self.variant.tables.rules_key;
        for sq in self.geometry().squares() {
            let c = self.cells[sq.index()];
            if c != EMPTY {
                h ^= zobrist::piece(c, sq.index());
            }
        }
        if self.to_move == Side::Defenders {
            h ^= zobrist::SIDE;
        }
        h
    }

    // ----- move generation -------------------------------------------------------------

    /// Calls `emit` for each legal destination of the piece on `from` (code `code`), in
    /// direction order, nearest first; stops early when `emit` returns true. Returns whether
    /// it stopped early.
    #[inline(always)]
    pub(crate) fn piece_moves(&self, from: usize, code: u8, mut emit: impl FnMut(usize) -> bool) -> bool {
        let t = &*self.variant.tables;
        let max = t.max_dist[piece_index(code)];
        let camp = t.camp[from];
        for d in Direction::ALL {
            let off = d.offset();
            let mut q = from;
            let mut dist = 0u8;
            loop {
                q = (q as isize + off) as usize;
                if self.cells[q] != EMPTY {
                    break;
                }
                dist += 1;
                let (stop, pass) = if t.flags[q] & RESTRICTED == 0 || (camp != 0 && t.camp[q] == camp) {
                    (true, true)
                } else {
                    (t.stop[q] & code != 0, t.pass[q] & code != 0)
                };
                if stop && emit(q) {
                    return true;
                }
                if !pass || dist == max {
                    break;
                }
            }
        }
        false
    }

    /// Appends the legal moves of the side to move to `out` (nothing when the game is over),
    /// ordered by origin square (rank 1 first), then direction and distance.
    pub fn generate_moves(&self, out: &mut Vec<Move>) {
        if self.outcome.is_some() {
            return;
        }
        self.for_each_piece(side_mask(self.to_move), |i, c| {
            let from = Square::from_index(i);
            self.piece_moves(i, c, |q| {
                out.push(Move::new(from, Square::from_index(q)));
                false
            });
            false
        });
    }

    /// Appends the moves of the piece on `from` (nothing for an empty square) by the same
    /// generator as [`Position::generate_moves`], in direction order, nearest first, whichever
    /// side is to move and whether or not the game is over. For analysis rather than play:
    /// where the side not on move could go, or the king's routes after a move of its own.
    pub fn generate_moves_from(&self, from: Square, out: &mut Vec<Move>) {
        let c = self.cells[from.index()];
        if cell::piece(c).is_none() {
            return;
        }
        self.piece_moves(from.index(), c, |q| {
            out.push(Move::new(from, Square::from_index(q)));
            false
        });
    }

    /// Calls `f` with each destination of the piece on `from` (of either side, whoever is to
    /// move), in [`Position::generate_moves_from`]'s order, without collecting them.
    pub fn for_each_move_from(&self, from: Square, mut f: impl FnMut(Square)) {
        let c = self.cells[from.index()];
        if cell::piece(c).is_none() {
            return;
        }
        self.piece_moves(from.index(), c, |q| {
            f(Square::from_index(q));
            false
        });
    }

    /// Calls `f(cell, code)` for each piece in `mask`, rank 1 first; stops when `f` returns
    /// true and returns whether it stopped.
    #[inline(always)]
    pub(crate) fn for_each_piece(&self, mask: u8, mut f: impl FnMut(usize, u8) -> bool) -> bool {
        let n = self.geometry().size() as usize;
        for r in 0..n {
            let row = (r + 1) * STRIDE + 1;
            for i in row..row + n {
                let c = self.cells[i];
                if c & mask != 0 && f(i, c) {
                    return true;
                }
            }
        }
        false
    }

    /// The legal moves, sorted by origin then destination (a1 < a2 < ... < b1).
    pub fn legal_moves(&self) -> Vec<Move> {
        let mut v = Vec::with_capacity(128);
        self.generate_moves(&mut v);
        v.sort();
        v
    }

    /// Whether `side` has at least one move (ignoring whether the game is over).
    pub fn has_legal_move(&self, side: Side) -> bool {
        self.for_each_piece(side_mask(side), |i, c| self.piece_moves(i, c, |_| true))
    }

    /// Whether `mv` is legal here.
    pub fn is_legal(&self, mv: Move) -> bool {
        if self.outcome.is_some() || !self.geometry().on_board(mv.from) || !self.geometry().on_board(mv.to) {
            return false;
        }
        let c = self.cells[mv.from.index()];
        if c & side_mask(self.to_move) == 0 {
            return false;
        }
        self.piece_moves(mv.from.index(), c, |q| q == mv.to.index())
    }

    // ----- making moves ----------------------------------------------------------------

    /// Plays a move after checking it is legal; returns the captured squares, sorted.
    ///
    /// # Errors
    /// [`MoveError::GameOver`] after the end of the game, [`MoveError::Illegal`] otherwise.
    pub fn play(&mut self, mv: Move) -> Result<Vec<Square>, MoveError> {
        if self.outcome.is_some() {
            return Err(MoveError::GameOver(mv));
        }
        if !self.is_legal(mv) {
            return Err(MoveError::Illegal(mv));
        }
        Ok(self.make(mv).captures.sorted())
    }

    /// Makes a legal move in place and decides whether it ended the game.
    ///
    /// The caller guarantees legality (a move from [`Position::generate_moves`]); use
    /// [`Position::play`] for untrusted moves.
    pub fn make(&mut self, mv: Move) -> Undo {
        let prev_hash = self.hash;
        let prev_outcome = self.outcome;
        let prev_rep_start = self.rep_start;
        let (from, to) = (mv.from.index(), mv.to.index());
        let code = self.cells[from];
        debug_assert!(code & side_mask(self.to_move) != 0, "make: {mv} does not move a piece of the side to move");
        let mover = self.to_move;
        self.cells[from] = EMPTY;
        self.cells[to] = code;
        self.hash ^= zobrist::piece(code, from) ^ zobrist::piece(code, to);
        if code == KING {
            self.king = mv.to;
        }
        let captures = self.find_captures(to, code, mover);
        let victim = capturable(mover);
        for &sq in captures.as_slice() {
            self.cells[sq.index()] = EMPTY;
            self.hash ^= zobrist::piece(victim, sq.index());
        }
        self.counts[mover.opponent().index()] -= captures.len() as u16;
        self.to_move = mover.opponent();
        self.hash ^= zobrist::SIDE;
        self.ply += 1;
        self.history.push(self.hash);
        if !captures.is_empty() {
            self.rep_start = (self.history.len() - 1) as u32;
        }
        self.outcome = self.decide(mv, code, mover);
        Undo { captures, prev_hash, prev_outcome, prev_rep_start }
    }

    /// Takes back the last move made with [`Position::make`].
    pub fn unmake(&mut self, mv: Move, undo: &Undo) {
        let (from, to) = (mv.from.index(), mv.to.index());
        let code = self.cells[to];
        self.to_move = self.to_move.opponent();
        let victim = capturable(self.to_move);
        for &sq in undo.captures.as_slice() {
            self.cells[sq.index()] = victim;
        }
        self.counts[self.to_move.opponent().index()] += undo.captures.len() as u16;
        self.cells[to] = EMPTY;
        self.cells[from] = code;
        if code == KING {
            self.king = mv.from;
        }
        self.hash = undo.prev_hash;
        self.outcome = undo.prev_outcome;
        self.rep_start = undo.prev_rep_start;
        self.ply -= 1;
        self.history.pop();
    }

    /// Whether the cell `far` completes a capture against `victim_mask`'s side for `mover`.
    #[inline(always)]
    fn is_anvil(&self, t: &Tables, far: usize, mover: Side, victim_mask: u8) -> bool {
        let c = self.cells[far];
        if c & side_mask(mover) != 0 && (c != KING || self.variant.rules.king_armed.anvil()) {
            return true;
        }
        match c {
            OFF_BOARD => false,
            EMPTY => t.hostile_empty[far] & victim_mask != 0,
            _ => t.hostile_full[far] & victim_mask != 0,
        }
    }

    /// The cells of the enemy pieces beside `to` that a piece of `mover` standing on `to`
    /// brackets against an anvil (custodial captures; the caller has ruled out an unarmed
    /// king). It reads only the cells beside `to` and one further, never `to` itself, nor the
    /// square a piece came from to reach `to` (that piece passed over the cell beside it, so
    /// nothing stands there to capture): it gives the same answer before and after the move.
    #[inline(always)]
    fn custodial_victims(&self, to: usize, mover: Side) -> impl Iterator<Item = usize> + '_ {
        let t = &*self.variant.tables;
        let victim = capturable(mover);
        let victim_mask = side_mask(mover.opponent());
        Direction::ALL.into_iter().filter_map(move |d| {
            let off = d.offset();
            let n = (to as isize + off) as usize;
            (self.cells[n] == victim && self.is_anvil(t, (n as isize + off) as usize, mover, victim_mask)).then_some(n)
        })
    }

    /// The pieces the piece `code` just moved to `to` captures (custodial and shieldwall).
    fn find_captures(&self, to: usize, code: u8, mover: Side) -> Captures {
        let mut caps = Captures::new();
        let rules = &self.variant.rules;
        if code == KING && !rules.king_armed.hammer() {
            return caps;
        }
        let t = &*self.variant.tables;
        for n in self.custodial_victims(to, mover) {
            caps.push(Square::from_index(n));
        }
        if rules.shieldwall && t.flags[to] & EDGE != 0 {
            self.shieldwall(t, to, mover, &mut caps);
        }
        caps
    }

    /// Copenhagen shieldwall: the piece that landed on edge square `to` brackets a row of two or
    /// more enemy pieces along the edge, each with one of the mover's pieces in front of it;
    /// the far bracket is a mover's piece or an empty corner. The king in the row survives.
    fn shieldwall(&self, t: &Tables, to: usize, mover: Side, caps: &mut Captures) {
        let sq = Square::from_index(to);
        let m = self.geometry().size() - 1;
        let inward = if sq.rank() == 0 {
            Direction::North
        } else if sq.rank() == m {
            Direction::South
        } else if sq.file() == 0 {
            Direction::East
        } else if sq.file() == m {
            Direction::West
        } else {
            return;
        };
        if t.flags[to] & CORNER != 0 {
            return;
        }
        let own = side_mask(mover);
        let enemy = side_mask(mover.opponent());
        let along = match inward {
            Direction::North | Direction::South => [Direction::East, Direction::West],
            _ => [Direction::North, Direction::South],
        };
        for d in along {
            let mut s = (to as isize + d.offset()) as usize;
            let mut row = [0usize; crate::geometry::MAX_SIZE as usize];
            let mut len = 0;
            let mut ok = true;
            while self.cells[s] & enemy != 0 {
                if self.cells[(s as isize + inward.offset()) as usize] & own == 0 {
                    ok = false;
                    break;
                }
                row[len] = s;
                len += 1;
                s = (s as isize + d.offset()) as usize;
            }
            if !ok || len < 2 {
                continue;
            }
            let end = self.cells[s];
            let bracket = end & own != 0 || (end == EMPTY && t.flags[s] & CORNER != 0);
            if bracket {
                for &r in &row[..len] {
                    if self.cells[r] != KING {
                        caps.push(Square::from_index(r));
                    }
                }
            }
        }
    }
}

/// A position's board as text, with the last move marked; see [`Position::board`].
pub struct BoardText<'a> {
    pos: &'a Position,
    last: Option<Move>,
}

impl Position {
    /// The board as text, top rank first, with coordinates: `a` attacker, `d` defender, `k`
    /// king, `+` an empty throne, corner or camp, `.` an empty square. With `last`, the piece
    /// that moved is in upper case and the square it left, if still empty, is `*`. This is the
    /// one board renderer: `Display` for `Position` is this (unmarked) plus a status line.
    pub fn board(&self, last: Option<Move>) -> BoardText<'_> {
        BoardText { pos: self, last }
    }
}

impl fmt::Display for BoardText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pos = self.pos;
        let g = pos.geometry();
        let n = g.size();
        let t = &*pos.variant.tables;
        let files: String = (0..n).map(|i| format!(" {}", (b'a' + i) as char)).collect();
        writeln!(f, "   {files}")?;
        for r in (0..n).rev() {
            write!(f, "{:>3} ", r + 1)?;
            for file in 0..n {
                let sq = Square::new(file, r);
                let mut c = match pos.piece_at(sq) {
                    Some(p) => p.layout_char(),
                    None if t.flags[sq.index()] & RESTRICTED != 0 => '+',
                    None => '.',
                };
                if let Some(m) = self.last {
                    if m.to == sq {
                        c = c.to_ascii_uppercase();
                    } else if m.from == sq && pos.piece_at(sq).is_none() {
                        c = '*';
                    }
                }
                write!(f, "{c}")?;
                if file + 1 < n {
                    write!(f, " ")?;
                }
            }
            writeln!(f, " {}", r + 1)?;
        }
        write!(f, "   {files}")
    }
}

impl fmt::Display for Position {
    /// The board ([`Position::board`]) and a status line: the outcome, or who is to move.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}", self.board(None))?;
        match self.outcome {
            Some(o) => write!(f, "{}: {o}", self.variant.name),
            None => write!(f, "{}: {} to move (ply {})", self.variant.name, self.to_move, self.ply),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `clone_from` into a position of another variant with a longer history copies every
    /// field, the history included, exactly as `clone` does.
    /// The moves of one piece are those of the full generator from its square, for either
    /// side and whoever is to move; an empty square has none.
    #[test]
    fn moves_from_a_square_are_the_generators_whoever_is_to_move() {
        let v = Arc::new(Variant::preset("copenhagen").expect("preset"));
        let mut pos = Position::start(v.clone());
        for i in 0..12 {
            let moves = pos.legal_moves();
            pos.make(moves[(i * 5 + 1) % moves.len()]);
        }
        for side in [Side::Attackers, Side::Defenders] {
            let mut setup = pos.to_setup();
            setup.to_move = side;
            let p = Position::from_setup(v.clone(), &setup).expect("a legal board");
            let mut all = Vec::new();
            p.generate_moves(&mut all);
            for sq in v.geometry.squares() {
                let mut mine = Vec::new();
                pos.generate_moves_from(sq, &mut mine);
                match pos.piece_at(sq) {
                    Some(piece) if piece.side() == side => assert_eq!(mine, all.iter().copied().filter(|m| m.from == sq).collect::<Vec<_>>(), "{sq}"),
                    Some(_) => {}
                    None => assert!(mine.is_empty(), "{sq}"),
                }
            }
        }
    }

    #[test]
    fn clone_from_equals_clone() {
        let mut source = Position::start(Arc::new(Variant::preset("brandubh").expect("preset")));
        for _ in 0..3 {
            let mv = source.legal_moves()[1];
            source.make(mv);
        }
        let mut target = Position::start(Arc::new(Variant::preset("tablut").expect("preset")));
        for _ in 0..9 {
            let mv = target.legal_moves()[0];
            target.make(mv);
        }
        target.clone_from(&source);
        let fields = |p: &Position| (p.cells, p.to_move, p.king, p.hash, p.ply, p.counts, p.history.clone(), p.rep_start, p.outcome);
        assert_eq!(fields(&target), fields(&source.clone()));
        assert!(Arc::ptr_eq(&target.variant, &source.variant));
        assert_eq!(target.history.len(), 4);
    }
}
