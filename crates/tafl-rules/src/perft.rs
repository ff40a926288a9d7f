//! Perft: counting the leaves of the move tree, the standard check of a move generator.
//!
//! Every leaf move is made (not merely counted), so capture and game-end statistics come out
//! too, and positions whose game has ended are leaves at their own ply and not expanded.

use crate::position::Position;
use crate::types::Move;

/// Counts at the leaf ply.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PerftStats {
    /// Positions exactly `depth` plies deep.
    pub leaves: u64,
    /// Leaf moves that captured at least one piece.
    pub captures: u64,
    /// Leaf moves that ended the game.
    pub game_ends: u64,
}

impl std::ops::AddAssign for PerftStats {
    fn add_assign(&mut self, o: PerftStats) {
        self.leaves += o.leaves;
        self.captures += o.captures;
        self.game_ends += o.game_ends;
    }
}

/// The deepest perft the command line accepts. Far beyond what finishes (copenhagen's
/// perft(6) already has about 10^11 leaves); it keeps the per-ply move buffers and the
/// recursion small.
pub const MAX_DEPTH: u32 = 32;

/// Perft of `pos` to `depth` plies (depth 0 counts the position itself). Allocates one move
/// buffer per ply: callers taking depths from outside check them against [`MAX_DEPTH`].
pub fn perft(pos: &mut Position, depth: u32) -> PerftStats {
    let mut buffers: Vec<Vec<Move>> = (0..depth).map(|_| Vec::with_capacity(256)).collect();
    walk(pos, depth, &mut buffers)
}

/// Perft split by the first move, in legal-move order.
pub fn divide(pos: &mut Position, depth: u32) -> Vec<(Move, PerftStats)> {
    if depth == 0 {
        return Vec::new();
    }
    let mut buffers: Vec<Vec<Move>> = (0..depth).map(|_| Vec::with_capacity(256)).collect();
    pos.legal_moves()
        .into_iter()
        .map(|mv| {
            let undo = pos.make(mv);
            let stats = if depth == 1 { leaf_stats(pos, &undo) } else { walk(pos, depth - 1, &mut buffers) };
            pos.unmake(mv, &undo);
            (mv, stats)
        })
        .collect()
}

fn leaf_stats(pos: &Position, undo: &crate::position::Undo) -> PerftStats {
    PerftStats { leaves: 1, captures: u64::from(!undo.captures.is_empty()), game_ends: u64::from(pos.is_over()) }
}

fn walk(pos: &mut Position, depth: u32, buffers: &mut [Vec<Move>]) -> PerftStats {
    if depth == 0 {
        return PerftStats { leaves: 1, ..PerftStats::default() };
    }
    if pos.is_over() {
        return PerftStats::default();
    }
    let (moves, rest) = buffers.split_first_mut().expect("one buffer per ply");
    moves.clear();
    pos.generate_moves(moves);
    let mut total = PerftStats::default();
    for &mv in moves.iter() {
        let undo = pos.make(mv);
        if depth == 1 {
            total += leaf_stats(pos, &undo);
        } else {
            total += walk(pos, depth - 1, rest);
        }
        pos.unmake(mv, &undo);
    }
    total
}
