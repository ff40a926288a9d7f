//! An exhaustive search for short forced wins: does the side to move win, or lose, by force
//! within N plies, whatever the other side plays?
//!
//! Why it exists beside the MCTS solver: that one proves only what its simulations happen to
//! reach, and a network's priors decide where they go. This one looks at every move, so its
//! "no" means no forced win exists within the horizon, by tafl-lab's rules (repetition
//! included: the position carries its history). Its use is checking a game's end that was not
//! played out, e.g. an engine that resigned: the record shows the final position lost for the
//! resigning side when the other side forces a win from it within a few plies.
//!
//! Cost: it visits every line to the horizon where the defending side has a way out, so it is
//! for a few plies only (4 in Copenhagen is under a second when one side has few moves).

use crate::rules::{Move, Position, Side};

/// What the exhaustive search found for the side to move.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Forced {
    /// The side to move wins within `plies` plies whatever the other side plays; `line` is one
    /// winning line (the winner's first winning move found, the loser's longest resistance).
    Win { plies: u32, line: Vec<Move> },
    /// Every move of the side to move loses within `plies` plies; `line` is the longest
    /// resistance the search met (each loser's move the one that lasted longest there).
    Loss { plies: u32, line: Vec<Move> },
    /// Neither within the horizon.
    Unknown,
}

/// Searches every line up to `max_plies` plies, shortest horizon first, and says whether the
/// side to move wins or loses by force within it. A position whose game is over reports its
/// result at 0 plies; a draw is never a forced win.
pub fn forced_result(pos: &Position, max_plies: u32) -> Forced {
    let mut p = pos.clone();
    let me = p.to_move();
    for plies in 0..=max_plies {
        let mut line = Vec::new();
        if wins_within(&mut p, me, plies, &mut line) {
            return Forced::Win { plies, line };
        }
        line.clear();
        if wins_within(&mut p, me.opponent(), plies, &mut line) {
            return Forced::Loss { plies, line };
        }
    }
    Forced::Unknown
}

/// Whether `winner` wins within `plies` plies from `pos` whatever the other side plays. On
/// success `line` holds one line of play to the win (appended to what it held).
fn wins_within(pos: &mut Position, winner: Side, plies: u32, line: &mut Vec<Move>) -> bool {
    if let Some(o) = pos.outcome() {
        return o.winner == Some(winner);
    }
    if plies == 0 {
        return false;
    }
    let moves = pos.legal_moves();
    let to_move = pos.to_move();
    let start = line.len();
    if to_move == winner {
        // Any move that wins will do: try the ones that end the game at once first.
        let mut rest = Vec::with_capacity(moves.len());
        for &mv in &moves {
            let undo = pos.make(mv);
            let won = pos.outcome().is_some_and(|o| o.winner == Some(winner));
            pos.unmake(mv, &undo);
            if won {
                line.push(mv);
                return true;
            }
            rest.push(mv);
        }
        if plies < 2 {
            return false;
        }
        // Order only, so exactness is kept: king moves first, then moves ending nearest the
        // king (where the fights that end tafl games are).
        let king = pos.king();
        rest.sort_by_key(|m| if m.from == king { 0 } else { 1 + king.file().abs_diff(m.to.file()) as u32 + king.rank().abs_diff(m.to.rank()) as u32 });
        for mv in rest {
            let undo = pos.make(mv);
            line.push(mv);
            let won = wins_within(pos, winner, plies - 1, line);
            pos.unmake(mv, &undo);
            if won {
                return true;
            }
            line.truncate(start);
        }
        false
    } else {
        // The loser: every move must lose; the line shown is the longest resistance found.
        // With no move at all the rules have already ended the game (outcome above).
        let mut longest: Vec<Move> = Vec::new();
        for mv in moves {
            let undo = pos.make(mv);
            let mut sub = vec![mv];
            let lost = wins_within(pos, winner, plies - 1, &mut sub);
            pos.unmake(mv, &undo);
            if !lost {
                return false;
            }
            if sub.len() > longest.len() {
                longest = sub;
            }
        }
        line.extend(longest);
        true
    }
}
