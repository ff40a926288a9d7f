//! The position of the guard's tests (`guard=`): an OpenTafl game the brandubh network lost,
//! shared by crates/tafl-search/tests/search.rs and tests/it/selfplay_search.rs.

use super::variant;
use tafl_search::rules::{Move, Position, Side};
use tafl_search::search::solver::{wins_within_limit, Limit, OneSided};

/// Brandubh after `moves` (from the start).
pub fn brandubh_after(moves: &str) -> Position {
    let v = variant("brandubh");
    let mut p = Position::start(v.clone());
    for m in moves.split_whitespace() {
        p.play(Move::parse(m, v.geometry).unwrap()).unwrap();
    }
    p
}

/// An attacking game of the brandubh network (generation 747, `time=1,probe=2`) lost to
/// OpenTafl's AI (docs/results/attack/ot-bdh-p2.txt, game 9), to the attacker move d2-b2 at
/// ply 15: after it the defenders win by force in 7 plies; 7 of the 35 moves there do not
/// lose within 7.
pub const BEFORE_D2_B2: &str = "d1-b1 d5-g5 d6-g6 c4-c1 g6-c6 d4-d5 b4-b3 c1-d1 f4-f2 d3-f3 b3-b2 d1-f1 b2-d2 f1-d1";

/// A search limit that never stops the solver.
pub fn unlimited() -> Limit {
    Limit::moves(u64::MAX)
}

/// Whether the attackers' move `m` in `p` lets the defenders force a win within `plies`
/// plies (an exhaustive one-sided search, no limit): what the guard must keep an agent from.
pub fn loses_within(p: &Position, m: Move, plies: u32) -> bool {
    let mut q = p.clone();
    q.play(m).unwrap();
    wins_within_limit(&q, Side::Defenders, plies, &mut unlimited()) != OneSided::No
}
