//! Whole games on top of the rules: random players and game records.
//!
//! This is the smallest possible "agent" layer. It lets the main job, the rules benchmark and
//! the property tests play complete games before any search or network exists.

use crate::geometry::Square;
use crate::position::Position;
use crate::types::{Move, Outcome, Side};
use crate::variant::Variant;
use std::sync::Arc;

/// A source of uniform choices: `pick(n)` returns an index in `0..n` (n > 0). Any closure
/// `FnMut(usize) -> usize` is one, so callers bring their own random number generator:
/// `&mut |n| rng.gen_range(0..n)` with `rand`. The rules crate itself depends on no RNG.
pub trait Pick {
    fn pick(&mut self, n: usize) -> usize;
}

impl<F: FnMut(usize) -> usize> Pick for F {
    fn pick(&mut self, n: usize) -> usize {
        self(n)
    }
}

/// One played move with what it captured.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlayedMove {
    pub side: Side,
    pub mv: Move,
    pub captures: Vec<Square>,
}

/// A finished game.
#[derive(Clone, Debug)]
pub struct GameRecord {
    pub moves: Vec<PlayedMove>,
    pub outcome: Outcome,
    pub final_position: Position,
}

/// Plays a game with both sides choosing uniformly among legal moves. Every game ends: the
/// variant's ply cap adjudicates the rest.
pub fn random_game(variant: Arc<Variant>, rng: &mut impl Pick) -> GameRecord {
    let mut pos = Position::start(variant);
    let mut moves = Vec::new();
    let mut buf = Vec::with_capacity(256);
    while pos.outcome().is_none() {
        buf.clear();
        pos.generate_moves(&mut buf);
        let mv = buf[rng.pick(buf.len())];
        let side = pos.to_move();
        let undo = pos.make(mv);
        moves.push(PlayedMove { side, mv, captures: undo.captures.sorted() });
    }
    let outcome = pos.outcome().expect("loop ends on an outcome");
    GameRecord { moves, outcome, final_position: pos }
}

/// Plays random moves from `pos` to the end in place and returns the outcome and the number
/// of plies played. `buf` is scratch space for move generation.
pub fn random_playout(pos: &mut Position, rng: &mut impl Pick, buf: &mut Vec<Move>) -> (Outcome, u32) {
    let mut plies = 0;
    loop {
        if let Some(o) = pos.outcome() {
            return (o, plies);
        }
        buf.clear();
        pos.generate_moves(buf);
        let mv = buf[rng.pick(buf.len())];
        pos.make(mv);
        plies += 1;
    }
}
