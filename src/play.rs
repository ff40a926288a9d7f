//! Whole games on top of the rules: random players and game records.
//!
//! This is the smallest possible "agent" layer. It lets the main job, the rules benchmark and
//! the property tests play complete games before any search or network exists.

use crate::rules::{Move, Outcome, Position, Side, Square, Variant};
use rand::Rng;
use std::sync::Arc;

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
pub fn random_game(variant: Arc<Variant>, rng: &mut impl Rng) -> GameRecord {
    let mut pos = Position::start(variant);
    let mut moves = Vec::new();
    let mut buf = Vec::with_capacity(256);
    while pos.outcome().is_none() {
        buf.clear();
        pos.generate_moves(&mut buf);
        let mv = buf[rng.gen_range(0..buf.len())];
        let side = pos.to_move();
        let undo = pos.make(mv);
        moves.push(PlayedMove { side, mv, captures: undo.captures.sorted() });
    }
    let outcome = pos.outcome().expect("loop ends on an outcome");
    GameRecord { moves, outcome, final_position: pos }
}

/// Plays random moves from `pos` to the end in place and returns the outcome and the number
/// of plies played. `buf` is scratch space for move generation.
pub fn random_playout(pos: &mut Position, rng: &mut impl Rng, buf: &mut Vec<Move>) -> (Outcome, u32) {
    let mut plies = 0;
    loop {
        if let Some(o) = pos.outcome() {
            return (o, plies);
        }
        buf.clear();
        pos.generate_moves(buf);
        let mv = buf[rng.gen_range(0..buf.len())];
        pos.make(mv);
        plies += 1;
    }
}
