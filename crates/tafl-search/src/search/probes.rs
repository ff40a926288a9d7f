//! The escape and fork probes: the solver extended where the attackers most often go wrong.
//!
//! The escape probe extends the solver by one ply where the attackers most often go wrong.
//! Without it, learning that an attacker move lets the king escape costs an evaluation of
//! that move's position, and an attacker node facing an escape threat is proven lost only
//! after every one of its (often 100) children has been evaluated: at a few hundred
//! simulations the search rarely sees a threat that no move can block. So when an
//! attackers' node is expanded, each attacker move is made once and the king's moves to
//! escape squares after it are tried; a move after which one of them wins is proven lost (a
//! sound proof: one winning reply is shown), with no evaluation, and if every move is, the
//! node is proven lost. The cost is a make, a scan of the king's moves and an unmake per
//! attacker move (docs/performance.md has the figures). Wins of the defenders other than
//! the king reaching an escape square (an exit fort, say) are left to the ordinary solver.
//!
//! The fork probe (`fork_probe`, off by default) goes two plies further, to the mistake that
//! loses most of the attackers' self-play games: a move that lets the king reach, in one
//! move, a square from which it threatens escapes no single attacker reply can stop. For each
//! attacker move it tries the king's moves that are not escapes themselves; after one that
//! leaves the king a route to an escape square, every attacker reply is made, those landing
//! on the routes or beside the king first (the only ones that can block a route or capture
//! the king, so a failed fork is usually refuted at once). If no reply ends the game for
//! the attackers or a draw, or leaves the king without an escape at once, the attacker move
//! is proven lost. The check is exhaustive over the replies, hence sound under any rules;
//! its cost falls on the (few) king moves that open a route.

use super::mcts::Search;
use super::tree::{NodeId, Proof};
use crate::rules::{Move, Position, Side, Square};

/// Whether the king, with the defenders to move in `pos`, wins at once by reaching an escape
/// square: its moves to escape squares are made and the outcome read. `moves` is scratch.
pub(super) fn king_escapes(pos: &mut Position, moves: &mut Vec<Move>) -> bool {
    debug_assert_eq!(pos.to_move(), Side::Defenders);
    moves.clear();
    pos.generate_moves_from(pos.king(), moves);
    moves.iter().any(|&m| {
        if !pos.variant().is_escape(m.to) {
            return false;
        }
        let undo = pos.make(m);
        let won = pos.outcome().is_some_and(|o| o.winner == Some(Side::Defenders));
        pos.unmake(m, &undo);
        won
    })
}

/// Scratch lists of [`king_forks`], kept between expansions.
#[derive(Default)]
pub(super) struct ForkScratch {
    king_moves: Vec<Move>,
    replies: Vec<Move>,
    routes: Vec<Square>,
    escape_moves: Vec<Move>,
}

/// Whether the defenders, to move in `pos`, have a king move (not itself an escape) after
/// which every attacker reply leaves the game won for the defenders: over with them winning,
/// or the king escaping at once. The replies are tried exhaustively, so the answer is exact.
pub(super) fn king_forks(pos: &mut Position, s: &mut ForkScratch) -> bool {
    debug_assert_eq!(pos.to_move(), Side::Defenders);
    s.king_moves.clear();
    pos.generate_moves_from(pos.king(), &mut s.king_moves);
    let mut found = false;
    for i in 0..s.king_moves.len() {
        let k = s.king_moves[i];
        if pos.variant().is_escape(k.to) {
            continue;
        }
        let undo = pos.make(k);
        found = pos.outcome().is_none() && unanswerable(pos, s);
        pos.unmake(k, &undo);
        if found {
            break;
        }
    }
    found
}

/// With the attackers to move in `pos` (not over): whether every reply loses at once, the
/// king escaping next (or the reply ending the game for the defenders).
fn unanswerable(pos: &mut Position, s: &mut ForkScratch) -> bool {
    // The king's open routes now: the squares it passes through and ends on, for each move to
    // an escape square. None, and no reply can lose at once in this way.
    let king = pos.king();
    s.escape_moves.clear();
    pos.generate_moves_from(king, &mut s.escape_moves);
    s.routes.clear();
    for &m in &s.escape_moves {
        if pos.variant().is_escape(m.to) {
            let (df, dr) = ((m.to.file() as i32 - m.from.file() as i32).signum(), (m.to.rank() as i32 - m.from.rank() as i32).signum());
            let (mut f, mut r) = (m.from.file() as i32, m.from.rank() as i32);
            while (f, r) != (m.to.file() as i32, m.to.rank() as i32) {
                f += df;
                r += dr;
                s.routes.push(Square::new(f as u8, r as u8));
            }
        }
    }
    if s.routes.is_empty() {
        return false;
    }
    s.replies.clear();
    pos.generate_moves(&mut s.replies);
    // Replies that can block a route or capture the king first: the likely refutations.
    let near = |sq: Square| sq.file().abs_diff(king.file()) + sq.rank().abs_diff(king.rank()) == 1;
    let (routes, replies) = (&s.routes, &mut s.replies);
    replies.sort_by_key(|m| !(routes.contains(&m.to) || near(m.to)));
    for i in 0..s.replies.len() {
        let r = s.replies[i];
        let undo = pos.make(r);
        let refuted = match pos.outcome() {
            Some(o) => o.winner != Some(Side::Defenders),
            None => !king_escapes(pos, &mut s.escape_moves),
        };
        pos.unmake(r, &undo);
        if refuted {
            return false;
        }
    }
    true
}

impl Search {
    /// The escape probe (above): at the attackers' node `id` (position `pos`,
    /// children just created), proves lost each attacker move after which the king escapes at
    /// once. Every move is tried: one that opens a line (or captures a piece in the king's
    /// way) can give the king a route it does not have now.
    pub(super) fn probe_escapes(&mut self, id: NodeId, pos: &mut Position) {
        let mut king_moves = std::mem::take(&mut self.king_moves);
        let node = &self.tree.nodes[id as usize];
        for c in node.first_child as usize..(node.first_child as usize + node.num_children as usize) {
            if self.tree.nodes[c].proof != Proof::Unknown {
                continue;
            }
            let mv = self.tree.nodes[c].mv;
            let undo = pos.make(mv);
            let lost = pos.outcome().is_none()
                && ((self.cfg.escape_probe && king_escapes(pos, &mut king_moves)) || (self.cfg.fork_probe && king_forks(pos, &mut self.fork_scratch)));
            pos.unmake(mv, &undo);
            if lost {
                // The child's side to move (the defenders) wins: its value is theirs.
                let child = &mut self.tree.nodes[c];
                child.proof = Proof::Win;
                child.raw_value = Proof::Win.value().unwrap_or(1.0);
            }
        }
        self.king_moves = king_moves;
    }
}
