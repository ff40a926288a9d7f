//! Positions: the board, move generation, moves with their captures, and game outcomes.
//!
//! The board is a padded cell array (see [`super::geometry`]): one byte per cell, 0 empty,
//! 1 attacker, 2 defender, 4 king, 8 off the board. Rays stop at the first non-empty cell, so
//! move generation needs no bounds checks, and a side's pieces are a bit mask (1 for the
//! attackers, 6 for the defenders). Moves are made and unmade in place ([`Position::make`],
//! [`Position::unmake`]), which is what perft and search need; [`Position::play`] is the checked
//! entry point for everything else.
//!
//! Game ends are decided when a move is made, from the cheapest test up: escape and king
//! capture look at a few cells; encirclement first searches from the king to the edge (almost
//! always found at once) and only floods the whole board when that fails; the exit fort is
//! tested only when the king stands on the edge.

use super::error::{MoveError, SetupError};
use super::geometry::{Direction, Geometry, Square, CELLS, STRIDE};
use super::ruleset::{KingOnEdge, KingStrength, NoMoves, Repetition};
use super::setup::{check_pieces, Setup};
use super::types::{Move, Outcome, Piece, Reason, Side};
use super::variant::{piece_code, Tables, Variant, CORNER, EDGE, ESCAPE, RESTRICTED};
use super::zobrist;
use std::fmt;
use std::sync::Arc;

pub(crate) const EMPTY: u8 = 0;
pub(crate) const ATT: u8 = 1;
pub(crate) const DEF: u8 = 2;
pub(crate) const KING: u8 = 4;
pub(crate) const OFF: u8 = 8;

/// Cell mask of a side's pieces.
#[inline]
pub(crate) const fn side_mask(side: Side) -> u8 {
    match side {
        Side::Attackers => ATT,
        Side::Defenders => DEF | KING,
    }
}

/// Most pieces one move can capture: three custodial captures and a shieldwall on each side.
pub const MAX_CAPTURES: usize = 3 + 2 * (super::geometry::MAX_SIZE as usize - 2);

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
#[derive(Clone)]
pub struct Position {
    variant: Arc<Variant>,
    cells: [u8; CELLS],
    to_move: Side,
    king: Square,
    hash: u64,
    ply: u32,
    counts: [u16; 2],
    /// Hashes of every position since the start, the current one last.
    history: Vec<u64>,
    /// Index into `history` of the first position after the last capture; no earlier position
    /// can recur.
    rep_start: u32,
    outcome: Option<Outcome>,
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
        let mut cells = [OFF; CELLS];
        for sq in variant.geometry.squares() {
            cells[sq.index()] = EMPTY;
        }
        let mut king = Square::new(0, 0);
        let mut counts = [0u16; 2];
        for &(sq, p) in &setup.pieces {
            cells[sq.index()] = piece_code(p);
            if p == Piece::King {
                king = sq;
            } else {
                counts[p.side().index()] += 1;
            }
        }
        let mut pos = Position {
            variant,
            cells,
            to_move: setup.to_move,
            king,
            hash: 0,
            ply: 0,
            counts,
            history: Vec::with_capacity(64),
            rep_start: 0,
            outcome: None,
        };
        pos.hash = pos.compute_hash();
        pos.history.push(pos.hash);
        pos.outcome = pos.static_outcome();
        Ok(pos)
    }

    /// The outcome of a position given without its history: the king already escaped, the
    /// defenders already enclosed, or no move for the side to move.
    fn static_outcome(&self) -> Option<Outcome> {
        let t = &*self.variant.tables;
        if t.flags[self.king.index()] & ESCAPE != 0 {
            return Some(Outcome::win(Side::Defenders, self.escape_reason()));
        }
        if self.variant.rules.encirclement && self.encircled() {
            return Some(Outcome::win(Side::Attackers, Reason::Encirclement));
        }
        if !self.has_legal_move(self.to_move) {
            return Some(self.no_moves_outcome(self.to_move));
        }
        None
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
        match self.cells[sq.index()] {
            ATT => Some(Piece::Attacker),
            DEF => Some(Piece::Defender),
            KING => Some(Piece::King),
            _ => None,
        }
    }
    /// All pieces, rank 1 first.
    pub fn pieces(&self) -> Vec<(Square, Piece)> {
        self.geometry().squares().filter_map(|s| self.piece_at(s).map(|p| (s, p))).collect()
    }
    /// The loose setup of this position (without its history).
    pub fn to_setup(&self) -> Setup {
        Setup { size: self.geometry().size(), pieces: self.pieces(), to_move: self.to_move }
    }
    /// How often the current position occurred since the last capture (1 = first time).
    pub fn repetitions(&self) -> usize {
        self.count_current()
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
    fn piece_moves(&self, from: usize, code: u8, mut emit: impl FnMut(usize) -> bool) -> bool {
        let t = &*self.variant.tables;
        let max = t.max_dist[(code >> 1) as usize];
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

    /// Calls `f(cell, code)` for each piece in `mask`, rank 1 first; stops when `f` returns
    /// true and returns whether it stopped.
    #[inline(always)]
    fn for_each_piece(&self, mask: u8, mut f: impl FnMut(usize, u8) -> bool) -> bool {
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
        let victim = if mover == Side::Attackers { DEF } else { ATT };
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
        let victim = if self.to_move == Side::Attackers { DEF } else { ATT };
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
            OFF => false,
            EMPTY => t.hostile_empty[far] & victim_mask != 0,
            _ => t.hostile_full[far] & victim_mask != 0,
        }
    }

    /// The pieces the piece `code` just moved to `to` captures (custodial and shieldwall).
    fn find_captures(&self, to: usize, code: u8, mover: Side) -> Captures {
        let mut caps = Captures::new();
        let rules = &self.variant.rules;
        if code == KING && !rules.king_armed.hammer() {
            return caps;
        }
        let t = &*self.variant.tables;
        let victim = if mover == Side::Attackers { DEF } else { ATT };
        let victim_mask = side_mask(mover.opponent());
        for d in Direction::ALL {
            let off = d.offset();
            let n = (to as isize + off) as usize;
            if self.cells[n] == victim && self.is_anvil(t, (n as isize + off) as usize, mover, victim_mask) {
                caps.push(Square::from_index(n));
            }
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
            let mut row = [0usize; super::geometry::MAX_SIZE as usize];
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

    fn escape_reason(&self) -> Reason {
        match self.variant.rules.escape {
            super::ruleset::Escape::Corners => Reason::CornerEscape,
            super::ruleset::Escape::Edge => Reason::EdgeEscape,
        }
    }

    fn no_moves_outcome(&self, stuck: Side) -> Outcome {
        match self.variant.rules.no_moves {
            NoMoves::Loses => Outcome::win(stuck.opponent(), Reason::NoMoves),
            NoMoves::Draw => Outcome::draw(Reason::NoMoves),
        }
    }

    /// Decides whether the move just made (by `mover`, piece `code`) ended the game.
    fn decide(&self, mv: Move, code: u8, mover: Side) -> Option<Outcome> {
        let t = &*self.variant.tables;
        let rules = &self.variant.rules;
        if mover == Side::Defenders {
            if code == KING && t.flags[mv.to.index()] & ESCAPE != 0 {
                return Some(Outcome::win(Side::Defenders, self.escape_reason()));
            }
            if rules.exit_fort && t.flags[self.king.index()] & EDGE != 0 && self.exit_fort() {
                return Some(Outcome::win(Side::Defenders, Reason::ExitFort));
            }
        } else {
            let k = self.king.index() as isize;
            let to = mv.to.index() as isize;
            let adjacent = Direction::ALL.iter().any(|d| k + d.offset() == to);
            if adjacent && self.king_captured(mv.to) {
                return Some(Outcome::win(Side::Attackers, Reason::KingCaptured));
            }
            if rules.encirclement && self.encircled() {
                return Some(Outcome::win(Side::Attackers, Reason::Encirclement));
            }
        }
        if rules.repetition != Repetition::None && self.count_current() >= 3 {
            return Some(match rules.repetition {
                Repetition::Draw => Outcome::draw(Reason::Repetition),
                Repetition::MoverLoses => Outcome::win(mover.opponent(), Reason::Repetition),
                Repetition::DefendersLose => Outcome::win(Side::Attackers, Reason::Repetition),
                Repetition::None => unreachable!(),
            });
        }
        if !self.has_legal_move(self.to_move) {
            return Some(self.no_moves_outcome(self.to_move));
        }
        if self.ply >= t.ply_cap {
            return Some(Outcome::draw(Reason::PlyCap));
        }
        None
    }

    /// Occurrences of the current position since the last capture.
    fn count_current(&self) -> usize {
        let h = self.hash;
        let start = self.rep_start as usize;
        let mut i = self.history.len() - 1;
        let mut n = 0;
        loop {
            if self.history[i] == h {
                n += 1;
            }
            if i < start + 2 {
                break;
            }
            i -= 2;
        }
        n
    }

    /// Whether the attacker that just moved to `by` (beside the king) captured the king.
    fn king_captured(&self, by: Square) -> bool {
        let t = &*self.variant.tables;
        let rules = &self.variant.rules;
        let k = self.king.index();
        let g = self.geometry();
        let throne_near = rules.throne.enabled && {
            let c = g.center().index() as isize;
            let ki = k as isize;
            ki == c || Direction::ALL.iter().any(|d| ki + d.offset() == c)
        };
        if rules.king_strength == KingStrength::Strong || throne_near {
            let on_edge = t.flags[k] & EDGE != 0;
            let edge_counts = rules.king_strength == KingStrength::Strong && rules.king_on_edge == KingOnEdge::EdgeCounts;
            if on_edge && !edge_counts {
                return false;
            }
            Direction::ALL.iter().all(|d| {
                let q = (k as isize + d.offset()) as usize;
                match self.cells[q] {
                    ATT => true,
                    OFF => edge_counts,
                    EMPTY => t.king_hostile[q],
                    _ => false,
                }
            })
        } else {
            let off = k as isize - by.index() as isize;
            let far = (k as isize + off) as usize;
            match self.cells[far] {
                ATT => true,
                OFF => false,
                EMPTY => t.hostile_empty[far] & (DEF | KING) != 0,
                _ => t.hostile_full[far] & (DEF | KING) != 0,
            }
        }
    }

    /// Whether no defender and not the king can reach the edge over squares free of attackers.
    pub fn encircled(&self) -> bool {
        let mut seen = Visited::new();
        // Fast path: a walk from the king that reaches the edge settles it.
        let mut stack: Vec<usize> = Vec::with_capacity(64);
        let t = &*self.variant.tables;
        stack.push(self.king.index());
        seen.insert(self.king.index());
        while let Some(s) = stack.pop() {
            if t.flags[s] & EDGE != 0 {
                return false;
            }
            for d in Direction::ALL {
                let q = (s as isize + d.offset()) as usize;
                if self.cells[q] & (ATT | OFF) == 0 && seen.insert(q) {
                    stack.push(q);
                }
            }
        }
        // Slow path: flood from every edge square that is free of attackers.
        let mut seen = Visited::new();
        stack.clear();
        for sq in self.geometry().squares() {
            let i = sq.index();
            if t.flags[i] & EDGE != 0 && self.cells[i] != ATT {
                seen.insert(i);
                stack.push(i);
            }
        }
        while let Some(s) = stack.pop() {
            if self.cells[s] & (DEF | KING) != 0 {
                return false;
            }
            for d in Direction::ALL {
                let q = (s as isize + d.offset()) as usize;
                if self.cells[q] & (ATT | OFF) == 0 && seen.insert(q) {
                    stack.push(q);
                }
            }
        }
        true
    }

    /// Copenhagen exit fort: the king on the edge can move and stands in a region (the squares
    /// reachable from him without crossing a defender) that holds no attacker, and no defender
    /// walling that region can ever be captured.
    ///
    /// "Can never be captured" is the greatest set of defenders that protect each other: along
    /// each axis a member is covered by the edge, another member, or a non-hostile square inside
    /// the fort. It is found by starting from all defenders and removing uncovered ones until
    /// nothing changes; the fort stands when every wall piece survives.
    pub fn exit_fort(&self) -> bool {
        let t = &*self.variant.tables;
        let k = self.king.index();
        if t.flags[k] & EDGE == 0 || !self.piece_moves(k, KING, |_| true) {
            return false;
        }
        let mut inside = Visited::new();
        let mut walls: Vec<usize> = Vec::with_capacity(32);
        let mut stack = vec![k];
        inside.insert(k);
        while let Some(s) = stack.pop() {
            for d in Direction::ALL {
                let q = (s as isize + d.offset()) as usize;
                match self.cells[q] {
                    OFF => {}
                    ATT => return false,
                    DEF => walls.push(q),
                    _ => {
                        if inside.insert(q) {
                            stack.push(q);
                        }
                    }
                }
            }
        }
        let mut safe = Visited::new();
        let mut members: Vec<usize> = Vec::with_capacity(self.counts[1] as usize);
        self.for_each_piece(DEF, |i, _| {
            safe.insert(i);
            members.push(i);
            false
        });
        loop {
            let before = members.len();
            members.retain(|&w| {
                let covered = |q: usize| {
                    self.cells[q] == OFF
                        || safe.contains(q)
                        || (inside.contains(q) && (self.cells[q] != EMPTY || t.hostile_empty[q] & DEF == 0))
                };
                let wi = w as isize;
                let ok = [Direction::North, Direction::East].iter().all(|d| {
                    covered((wi + d.offset()) as usize) || covered((wi - d.offset()) as usize)
                });
                if !ok {
                    safe.remove(w);
                }
                ok
            });
            if members.len() == before {
                break;
            }
        }
        walls.iter().all(|&w| safe.contains(w))
    }
}

/// A set of cells as a bitset on the stack.
struct Visited([u64; CELLS.div_ceil(64)]);
impl Visited {
    #[inline]
    fn new() -> Visited {
        Visited([0; CELLS.div_ceil(64)])
    }
    /// Inserts `i`; true when it was not there.
    #[inline]
    fn insert(&mut self, i: usize) -> bool {
        let (w, b) = (i / 64, 1u64 << (i % 64));
        let fresh = self.0[w] & b == 0;
        self.0[w] |= b;
        fresh
    }
    #[inline]
    fn remove(&mut self, i: usize) {
        self.0[i / 64] &= !(1u64 << (i % 64));
    }
    #[inline]
    fn contains(&self, i: usize) -> bool {
        self.0[i / 64] & (1u64 << (i % 64)) != 0
    }
}

impl fmt::Display for Position {
    /// An ASCII board, top rank first, with coordinates: `a` attacker, `d` defender, `k` king,
    /// `+` an empty throne, corner or camp.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let g = self.geometry();
        let n = g.size();
        let t = &*self.variant.tables;
        let files: String = (0..n).map(|i| format!(" {}", (b'a' + i) as char)).collect();
        writeln!(f, "   {files}")?;
        for r in (0..n).rev() {
            write!(f, "{:>3} ", r + 1)?;
            for file in 0..n {
                let sq = Square::new(file, r);
                let c = match self.piece_at(sq) {
                    Some(p) => p.layout_char(),
                    None if t.flags[sq.index()] & RESTRICTED != 0 => '+',
                    None => '.',
                };
                write!(f, "{c}")?;
                if file + 1 < n {
                    write!(f, " ")?;
                }
            }
            writeln!(f, " {}", r + 1)?;
        }
        writeln!(f, "   {files}")?;
        match self.outcome {
            Some(o) => write!(f, "{}: {o}", self.variant.name),
            None => write!(f, "{}: {} to move (ply {})", self.variant.name, self.to_move, self.ply),
        }
    }
}

impl fmt::Debug for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", super::notation::position_string(self))
    }
}

