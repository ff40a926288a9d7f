//! Game-end detection: whatever decides [`Position::outcome`].
//!
//! Kept apart from move generation and captures because it is the part of the rules with the
//! most clauses (escape, king capture, exit fort, encirclement, repetition, no moves, ply cap)
//! and the one most often read against a rulebook; `position` only calls [`Position::decide`]
//! after each move and [`Position::static_outcome`] for a position given without history.
//!
//! Game ends are decided when a move is made, from the cheapest test up: escape and king
//! capture look at a few cells; encirclement first searches from the king to the edge (almost
//! always found at once) and only floods the whole board when that fails; the exit fort is
//! tested only when the king stands on the edge. The visited sets are bitsets on the stack.

use super::{Captures, Position};
use crate::cell::{capturable, side_mask, ATTACKER, ATTACKER_OR_BORDER, DEFENDER, DEFENDERS, EMPTY, KING, OFF_BOARD};
use crate::geometry::{Direction, Square, CELLS, STRIDE};
use crate::ruleset::{Escape, KingOnEdge, KingStrength, NoMoves, Repetition};
use crate::types::{Move, Outcome, Reason, Side};
use crate::variant::{CORNER, EDGE, ESCAPE};
use crate::zobrist;

/// How many times a position must occur for the repetition rule to end the game.
const REPETITIONS_TO_END: usize = 3;

impl Position {
    /// The outcome of a position given without its history: the king already escaped, the
    /// defenders already enclosed, or no move for the side to move.
    pub(crate) fn static_outcome(&self) -> Option<Outcome> {
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

    fn escape_reason(&self) -> Reason {
        match self.variant.rules.escape {
            Escape::Corners => Reason::CornerEscape,
            Escape::Edge => Reason::EdgeEscape,
        }
    }

    fn no_moves_outcome(&self, stuck: Side) -> Outcome {
        match self.variant.rules.no_moves {
            NoMoves::Loses => Outcome::win(stuck.opponent(), Reason::NoMoves),
            NoMoves::Draw => Outcome::draw(Reason::NoMoves),
        }
    }

    /// What moving the piece on `mv.from` to `mv.to` would capture, whichever side owns the
    /// piece and whoever is to move, without making the move: the captured squares, as
    /// [`Position::make`] finds them, and whether the move would capture the king (only an
    /// attacker's can), as `make` decides it. The position is left as it was. For analysis
    /// (the network's tactical input planes look at every capture either side could make),
    /// where making each move would also decide every other way the game could end.
    ///
    /// The caller guarantees that `mv` is a move of the piece on `mv.from` (from
    /// [`Position::generate_moves_from`]).
    pub fn captures_of(&mut self, mv: Move) -> (Captures, bool) {
        let (from, to) = (mv.from.index(), mv.to.index());
        let code = self.cells[from];
        let mover = mover_of(code);
        debug_assert!(code & side_mask(mover) != 0 && self.cells[to] == EMPTY, "captures_of: {mv} is not a move of a piece");
        let king = self.king;
        self.cells[from] = EMPTY;
        self.cells[to] = code;
        if code == KING {
            self.king = mv.to;
        }
        let captures = self.find_captures(to, code, mover);
        let victim = capturable(mover);
        // `make` removes the captured pieces before it decides the king's capture.
        for &sq in captures.as_slice() {
            self.cells[sq.index()] = EMPTY;
        }
        let king_taken = mover == Side::Attackers && beside(self.king.index(), to) && self.king_captured(mv.to);
        for &sq in captures.as_slice() {
            self.cells[sq.index()] = victim;
        }
        self.cells[to] = EMPTY;
        self.cells[from] = code;
        self.king = king;
        (captures, king_taken)
    }

    /// Whether moving the piece on `mv.from` to `mv.to` may capture anything (the same
    /// caller's guarantee as [`Position::captures_of`]): an armed piece with a custodial
    /// victim, a shieldwall edge, or (for the attackers) the king beside `mv.to`. False means
    /// `captures_of` would find nothing; the test reads a few cells and changes none, so an
    /// analysis that looks at every move (most capture nothing) calls `captures_of` only
    /// where this says true.
    #[inline]
    pub fn may_capture(&self, mv: Move) -> bool {
        let (from, to) = (mv.from.index(), mv.to.index());
        let code = self.cells[from];
        let mover = mover_of(code);
        let rules = &self.variant.rules;
        if code == KING && !rules.king_armed.hammer() {
            return false;
        }
        (mover == Side::Attackers && beside(self.king.index(), to))
            || (rules.shieldwall && self.variant.tables.flags[to] & EDGE != 0)
            || self.custodial_victims(to, mover).next().is_some()
    }

    /// Decides whether the move just made (by `mover`, piece `code`) ended the game.
    pub(crate) fn decide(&self, mv: Move, code: u8, mover: Side) -> Option<Outcome> {
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
            if beside(self.king.index(), mv.to.index()) && self.king_captured(mv.to) {
                return Some(Outcome::win(Side::Attackers, Reason::KingCaptured));
            }
            if rules.encirclement && self.encircled() {
                return Some(Outcome::win(Side::Attackers, Reason::Encirclement));
            }
        }
        if rules.repetition != Repetition::None && self.count_current() >= REPETITIONS_TO_END {
            return Some(match rules.repetition {
                Repetition::Draw => Outcome::draw(Reason::Repetition),
                Repetition::MoverLoses => Outcome::win(mover.opponent(), Reason::Repetition),
                Repetition::MoverWins => Outcome::win(mover, Reason::Repetition),
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

    /// Occurrences of the current position since the last capture (the same side is to move
    /// only every second ply, so only those entries are compared).
    pub(crate) fn count_current(&self) -> usize {
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
        // Whether the king needs captors on every side here (strong), or two like any piece.
        let strong_here = match rules.king_strength {
            KingStrength::Strong => true,
            KingStrength::WeakEverywhere => false,
            KingStrength::Weak => {
                rules.throne.enabled && {
                    let c = g.center().index() as isize;
                    let ki = k as isize;
                    ki == c || Direction::ALL.iter().any(|d| ki + d.offset() == c)
                }
            }
        };
        if strong_here {
            let on_edge = t.flags[k] & EDGE != 0;
            let edge_counts = rules.king_strength == KingStrength::Strong && rules.king_on_edge == KingOnEdge::EdgeCounts;
            if on_edge && !edge_counts {
                return false;
            }
            Direction::ALL.iter().all(|d| {
                let q = (k as isize + d.offset()) as usize;
                match self.cells[q] {
                    ATTACKER => true,
                    OFF_BOARD => edge_counts,
                    EMPTY => t.king_hostile[q],
                    _ => false,
                }
            })
        } else {
            let off = k as isize - by.index() as isize;
            let far = (k as isize + off) as usize;
            match self.cells[far] {
                ATTACKER => true,
                OFF_BOARD => false,
                EMPTY => t.hostile_empty[far] & DEFENDERS != 0,
                _ => t.hostile_full[far] & DEFENDERS != 0,
            }
        }
    }

    /// Whether no defender and not the king can reach the edge over squares free of attackers.
    pub fn encircled(&self) -> bool {
        let mut seen = Visited::new();
        // Fast path: a walk from the king that reaches the edge settles it. The stack lives on
        // the stack (each cell enters it at most once): this runs after every attackers' move,
        // including the trial moves of a search's expansions, where a heap allocation per call
        // showed in profiles.
        let mut stack = CellStack::new();
        let t = &*self.variant.tables;
        stack.push(self.king.index());
        seen.insert(self.king.index());
        while let Some(s) = stack.pop() {
            if t.flags[s] & EDGE != 0 {
                return false;
            }
            for d in Direction::ALL {
                let q = (s as isize + d.offset()) as usize;
                if self.cells[q] & ATTACKER_OR_BORDER == 0 && seen.insert(q) {
                    stack.push(q);
                }
            }
        }
        // Slow path: flood from every edge square that is free of attackers.
        let mut seen = Visited::new();
        stack = CellStack::new();
        for sq in self.geometry().squares() {
            let i = sq.index();
            if t.flags[i] & EDGE != 0 && self.cells[i] != ATTACKER {
                seen.insert(i);
                stack.push(i);
            }
        }
        while let Some(s) = stack.pop() {
            if self.cells[s] & DEFENDERS != 0 {
                return false;
            }
            for d in Direction::ALL {
                let q = (s as isize + d.offset()) as usize;
                if self.cells[q] & ATTACKER_OR_BORDER == 0 && seen.insert(q) {
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
                    OFF_BOARD => {}
                    ATTACKER => return false,
                    DEFENDER => walls.push(q),
                    _ => {
                        if inside.insert(q) {
                            stack.push(q);
                        }
                    }
                }
            }
        }
        let mut safe = Visited::new();
        let mut members: Vec<usize> = Vec::with_capacity(self.counts[Side::Defenders.index()] as usize);
        self.for_each_piece(DEFENDER, |i, _| {
            safe.insert(i);
            members.push(i);
            false
        });
        loop {
            let before = members.len();
            members.retain(|&w| {
                let covered = |q: usize| {
                    self.cells[q] == OFF_BOARD || safe.contains(q) || (inside.contains(q) && (self.cells[q] != EMPTY || t.hostile_empty[q] & DEFENDER == 0))
                };
                let wi = w as isize;
                let ok = [Direction::North, Direction::East].iter().all(|d| covered((wi + d.offset()) as usize) || covered((wi - d.offset()) as usize));
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

/// Which moves of a position could end the game, worked out once for all of them.
///
/// A search expands a node by creating all its children, and it must know which of them end
/// the game (that is how its solver sees a win in one). Making every child and running
/// [`Position::decide`] on it was most of the tree work in a profile of self-play. The screen
/// looks at the position once and then answers per move, from the destination square alone
/// (and the child's hash where a repetition is possible), whether the move *may* end the game;
/// only those moves need to be made. It mirrors `decide` clause by clause and errs only
/// towards "may": a move it passes is certain not to end the game (a property test checks this
/// on every preset against making the move).
///
/// - Escape and exit fort: only king moves to escape squares (or, with the exit fort, to the
///   edge) may end it; with the king already on the edge every move is tested.
/// - King capture: only attackers' moves next to the king.
/// - Encirclement: a path from the king to the edge over squares free of attackers is found
///   once; an attackers' move off that path leaves it open (captures only empty squares).
/// - No moves: two opponent pieces that can each step to a neighbouring square keep a move
///   unless one move lands beside both. A piece is captured only by a move beside it, except
///   in a shieldwall; but a shieldwall's pieces have the edge behind them, an enemy in front
///   and at their sides row pieces, the square the bracketing piece lands on, or the far
///   bracket: a mover's piece or an empty corner. So where shieldwalls exist, steps into
///   corners are not counted (where all pieces may stop on corners, the last piece of a row
///   could step there and still fall to a bracket landing two squares away).
/// - Repetition: the hashes that already occurred twice with the same side to move since the
///   last capture; a move that captures resets the count, so the child's hash is computed as
///   if nothing were captured.
/// - Ply cap: the move that reaches it ends the game.
#[derive(Clone, Default)]
pub struct EndScreen {
    /// Every move needs the full test.
    all: bool,
    /// Destinations after which the game may end, whatever piece moves there.
    danger: Visited,
    /// Hashes that a move would bring about a third time, sorted.
    repeated: Vec<u64>,
}

impl EndScreen {
    /// The screen of `pos` (see [`EndScreen::prepare`] to reuse one).
    pub fn new(pos: &Position) -> EndScreen {
        let mut s = EndScreen::default();
        s.prepare(pos);
        s
    }

    /// Works out the screen of `pos`, reusing this one's memory.
    pub fn prepare(&mut self, pos: &Position) {
        let t = &*pos.variant.tables;
        let rules = &pos.variant.rules;
        self.all = false;
        self.danger = Visited::new();
        self.repeated.clear();
        let mover = pos.to_move;
        if pos.outcome.is_some() || pos.ply + 1 >= t.ply_cap {
            self.all = true;
            return;
        }
        let king = pos.king.index();
        if mover == Side::Defenders {
            if rules.exit_fort && t.flags[king] & EDGE != 0 {
                self.all = true;
                return;
            }
        } else {
            for d in Direction::ALL {
                self.danger.insert((king as isize + d.offset()) as usize);
            }
            if rules.encirclement && !self.mark_path_to_edge(pos) {
                self.all = true;
                return;
            }
        }
        if !self.mark_shared_steps(pos, mover.opponent()) {
            self.all = true;
            return;
        }
        if rules.repetition != Repetition::None {
            // After the move the history is one longer; its same-side entries are these.
            let len = pos.history.len();
            let start = pos.rep_start as usize;
            let mut i = len;
            while i >= start + 2 {
                i -= 2;
                self.repeated.push(pos.history[i]);
            }
            self.repeated.sort_unstable();
            let mut kept = 0;
            let mut j = 0;
            while j < self.repeated.len() {
                let h = self.repeated[j];
                let mut k = j;
                while k < self.repeated.len() && self.repeated[k] == h {
                    k += 1;
                }
                if k - j + 1 >= REPETITIONS_TO_END {
                    self.repeated[kept] = h;
                    kept += 1;
                }
                j = k;
            }
            self.repeated.truncate(kept);
        }
    }

    /// Whether `mv` (a legal move of `pos`, the position this screen was prepared for) may
    /// end the game. False means it certainly does not.
    #[inline]
    pub fn may_end(&self, pos: &Position, mv: Move) -> bool {
        if self.all {
            return true;
        }
        let to = mv.to.index();
        if self.danger.contains(to) {
            return true;
        }
        let t = &*pos.variant.tables;
        if mv.from == pos.king {
            let f = t.flags[to];
            if f & ESCAPE != 0 || (pos.variant.rules.exit_fort && f & EDGE != 0) {
                return true;
            }
        }
        if !self.repeated.is_empty() {
            let from = mv.from.index();
            let code = pos.cells[from];
            let h = pos.hash ^ zobrist::piece(code, from) ^ zobrist::piece(code, to) ^ zobrist::SIDE;
            if self.repeated.binary_search(&h).is_ok() {
                return true;
            }
        }
        false
    }

    /// Marks a shortest path from the king to the edge over squares free of attackers;
    /// false when there is none.
    fn mark_path_to_edge(&mut self, pos: &Position) -> bool {
        let t = &*pos.variant.tables;
        let mut parent = [u16::MAX; CELLS];
        let mut queue = [0u16; CELLS];
        let (mut head, mut tail) = (0, 0);
        let k = pos.king.index();
        parent[k] = k as u16;
        queue[tail] = k as u16;
        tail += 1;
        while head < tail {
            let s = queue[head] as usize;
            head += 1;
            if t.flags[s] & EDGE != 0 {
                let mut c = s;
                while c != k {
                    self.danger.insert(c);
                    c = parent[c] as usize;
                }
                return true;
            }
            for d in Direction::ALL {
                let q = (s as isize + d.offset()) as usize;
                if pos.cells[q] & ATTACKER_OR_BORDER == 0 && parent[q] == u16::MAX {
                    parent[q] = s as u16;
                    queue[tail] = q as u16;
                    tail += 1;
                }
            }
        }
        false
    }

    /// Finds two pieces of `side` that can each step to a neighbouring square and marks the
    /// squares beside both; false when there are not two.
    fn mark_shared_steps(&mut self, pos: &Position, side: Side) -> bool {
        let t = &*pos.variant.tables;
        let no_corners = pos.variant.rules.shieldwall;
        let mut found = [0usize; 2];
        let mut n = 0;
        pos.for_each_piece(side_mask(side), |i, c| {
            let step = |q: usize| beside(i, q) && !(no_corners && t.flags[q] & CORNER != 0);
            if pos.piece_moves(i, c, step) {
                found[n] = i;
                n += 1;
            }
            n == 2
        });
        if n < 2 {
            return false;
        }
        for d in Direction::ALL {
            let q = (found[0] as isize + d.offset()) as usize;
            if beside(q, found[1]) {
                self.danger.insert(q);
            }
        }
        true
    }
}

/// The side of the piece with cell code `code` (a piece's code, not an empty cell's).
#[inline]
fn mover_of(code: u8) -> Side {
    if code & side_mask(Side::Attackers) != 0 {
        Side::Attackers
    } else {
        Side::Defenders
    }
}

/// Whether cells `a` and `b` are orthogonal neighbours (the border columns keep a row's ends
/// from touching the next row's).
#[inline]
fn beside(a: usize, b: usize) -> bool {
    a.abs_diff(b) == 1 || a.abs_diff(b) == STRIDE
}

/// A stack of cell indices with room for every cell once, on the stack: the floods above
/// push a cell only when it enters their [`Visited`] set.
struct CellStack {
    cells: [u16; CELLS],
    len: usize,
}
impl CellStack {
    #[inline]
    fn new() -> CellStack {
        CellStack { cells: [0; CELLS], len: 0 }
    }
    #[inline]
    fn push(&mut self, i: usize) {
        self.cells[self.len] = i as u16;
        self.len += 1;
    }
    #[inline]
    fn pop(&mut self) -> Option<usize> {
        self.len = self.len.checked_sub(1)?;
        Some(self.cells[self.len] as usize)
    }
}

/// Bits in one word of [`Visited`].
const WORD_BITS: usize = u64::BITS as usize;

/// A set of cells as a bitset on the stack.
#[derive(Clone)]
struct Visited([u64; CELLS.div_ceil(WORD_BITS)]);
impl Default for Visited {
    fn default() -> Visited {
        Visited::new()
    }
}
impl Visited {
    #[inline]
    fn new() -> Visited {
        Visited([0; CELLS.div_ceil(WORD_BITS)])
    }
    /// Inserts `i`; true when it was not there.
    #[inline]
    fn insert(&mut self, i: usize) -> bool {
        let (w, b) = (i / WORD_BITS, 1u64 << (i % WORD_BITS));
        let fresh = self.0[w] & b == 0;
        self.0[w] |= b;
        fresh
    }
    #[inline]
    fn remove(&mut self, i: usize) {
        self.0[i / WORD_BITS] &= !(1u64 << (i % WORD_BITS));
    }
    #[inline]
    fn contains(&self, i: usize) -> bool {
        self.0[i / WORD_BITS] & (1u64 << (i % WORD_BITS)) != 0
    }
}
