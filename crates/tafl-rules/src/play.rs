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

/// Up to `plies` moves from `start`, each uniform among the moves that do not end the game
/// (fewer if a position has none): the random openings that matches and self-play start
/// from, so that a game begins away from the lines a network would choose itself.
pub fn random_opening(start: &Position, plies: u32, rng: &mut impl Pick) -> Vec<Move> {
    let mut pos = start.clone();
    let mut out = Vec::new();
    for _ in 0..plies {
        let moves: Vec<Move> = pos
            .legal_moves()
            .into_iter()
            .filter(|&m| {
                let mut q = pos.clone();
                q.make(m);
                q.outcome().is_none()
            })
            .collect();
        if moves.is_empty() {
            break;
        }
        let m = moves[rng.pick(moves.len())];
        pos.make(m);
        out.push(m);
    }
    out
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A random opening plays legal moves that never end the game, as many as asked, and the
    /// same picks give the same opening.
    #[test]
    fn random_openings_are_legal_and_never_end_the_game() {
        let v = Arc::new(Variant::preset("brandubh").unwrap());
        let start = Position::start(v);
        assert!(random_opening(&start, 0, &mut |_| 0).is_empty());
        for seed in 0..200u64 {
            let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
            let mut lcg = |n: usize| {
                x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
                ((x >> 33) % n as u64) as usize
            };
            let opening = random_opening(&start, 8, &mut lcg);
            assert_eq!(opening.len(), 8, "brandubh always has a move that does not end the game in 8 plies");
            let mut pos = start.clone();
            for &m in &opening {
                assert!(pos.is_legal(m), "seed {seed}: {m:?} is legal");
                pos.make(m);
                assert!(pos.outcome().is_none(), "seed {seed}: the opening ended the game");
            }
        }
        let first = random_opening(&start, 1, &mut |_| 0);
        assert_eq!(first, vec![start.legal_moves()[0]], "pick 0 is the first legal move that does not end the game");
    }
}
