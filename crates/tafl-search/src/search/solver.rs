//! Exhaustive searches for short forced wins: does a side win by force within N plies,
//! whatever the other side plays?
//!
//! Why they exist beside the MCTS solver: that one proves only what its simulations happen to
//! reach, and a network's priors decide where they go. These look at every move, so their
//! "no" means no forced win exists within the horizon, by tafl-lab's rules (repetition
//! included: the position carries its history). Two uses:
//! - checking a game's end that was not played out, e.g. an engine that resigned
//!   ([`forced_result`], `analyze --exhaustive`): the record shows the final position lost
//!   for the resigning side when the other side forces a win from it within a few plies;
//! - the agents' guard (`guard=PLIES`, [`wins_within_limit`]): before playing the move its
//!   search chose, an agent checks that the opponent cannot then force a win within PLIES
//!   plies, under a budget of moves and time.
//!
//! Both are one search ([`one_sided`]: can `winner` win within `plies`?) that tries the
//! moves that end tafl games first (the king's, then those landing beside it or in its row
//! or column), so a refutation is usually the loser's first or second reply. No transposition
//! table: repetition needs each line's own history. Cost grows about 30-fold per two plies.

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

/// Searches every line up to `max_plies` plies, shortest horizon first (a win of the side to
/// move before a loss at each), and says whether the side to move wins or loses by force
/// within it. A position whose game is over reports its
/// result at 0 plies; a draw is never a forced win.
pub fn forced_result(pos: &Position, max_plies: u32) -> Forced {
    let mut p = pos.clone();
    let me = p.to_move();
    let mut lists = MoveLists::default();
    let mut limit = Limit::moves(u64::MAX);
    let mut at = |winner: Side, plies: u32, line: &mut Vec<Move>| matches!(one_sided(&mut p, winner, plies, &mut limit, line, &mut lists, 0), Ok(true));
    for plies in 0..=max_plies {
        let mut line = Vec::new();
        if at(me, plies, &mut line) {
            return Forced::Win { plies, line };
        }
        line.clear();
        if at(me.opponent(), plies, &mut line) {
            return Forced::Loss { plies, line };
        }
    }
    Forced::Unknown
}

/// What [`wins_within_limit`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OneSided {
    /// The side asked about wins within the horizon whatever the other side plays; `line` is
    /// one such line (its first winning move found at each turn, the other side's longest
    /// resistance).
    Wins { line: Vec<Move> },
    /// It does not (exact: every line to the horizon was looked at).
    No,
    /// The limit ran out before an answer.
    OutOfLimit,
}

/// What [`wins_within_limit`] may spend: moves made, and optionally a wall-clock deadline
/// (looked at every few thousand moves).
#[derive(Clone, Copy, Debug)]
pub struct Limit {
    pub moves: u64,
    pub deadline: Option<std::time::Instant>,
    /// Which wins count (see [`Scope`]).
    pub scope: Scope,
}

/// Which of the winner's moves [`wins_within_limit`] tries as a win at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Every move: exact.
    Exact,
    /// Only the moves that end almost every tafl game: the king's (for the defenders) and
    /// those landing beside the king (for the attackers). Three to five times faster; it may
    /// miss a win that ends another way (an exit fort, a side left without moves), never
    /// claims one that is not there: each line found is played to the rules' own result.
    Tactical,
}

impl Limit {
    /// At most `moves` moves made, no deadline, every win counted: the same exact answer on
    /// any machine.
    pub fn moves(moves: u64) -> Limit {
        Limit { moves, deadline: None, scope: Scope::Exact }
    }

    fn spend(&mut self) -> Result<(), OutOfLimit> {
        if self.moves == 0 {
            return Err(OutOfLimit);
        }
        self.moves -= 1;
        if self.moves % 4096 == 0 && self.deadline.is_some_and(|d| std::time::Instant::now() >= d) {
            self.moves = 0;
            return Err(OutOfLimit);
        }
        Ok(())
    }
}

/// One side's half of [`forced_result`], under a [`Limit`]: does `winner` win within `plies`
/// plies from `pos` whatever the other side plays? Exact with [`Scope::Exact`] (every move
/// of both sides to the horizon), shortest horizon first. On a 2-core Xeon, 7 plies of a
/// brandubh middlegame take 5-50 ms, 9 plies 0.2-3 s (the cost when the answer is no).
///
/// Its use is the guard of agents (`guard=`): a search that sees a few plies deep checks its
/// chosen move against the other side's forced wins, which neither the network's value nor
/// the escape and fork probes (3 plies) see.
pub fn wins_within_limit(pos: &Position, winner: Side, plies: u32, limit: &mut Limit) -> OneSided {
    let mut p = pos.clone();
    let mut lists = MoveLists::default();
    let mut line = Vec::new();
    // Shortest horizon first, so the line shown is a shortest win (and a near win is found
    // before a deep search of the rest).
    // The winner's own moves end its wins, so only horizons of one parity are new (with the
    // horizon itself last, whatever its parity, for exactness).
    let first = if p.to_move() == winner { 1 } else { 2 };
    let horizons = std::iter::once(0).chain((first..plies).step_by(2)).chain(std::iter::once(plies));
    let mut last = None;
    for h in horizons {
        if last == Some(h) || h > plies {
            continue;
        }
        last = Some(h);
        line.clear();
        match one_sided(&mut p, winner, h, limit, &mut line, &mut lists, 0) {
            Ok(true) => return OneSided::Wins { line },
            Ok(false) => {}
            Err(OutOfLimit) => return OneSided::OutOfLimit,
        }
    }
    OneSided::No
}

struct OutOfLimit;

/// Move lists per depth, kept between calls.
#[derive(Default)]
struct MoveLists {
    lists: Vec<Vec<Move>>,
}

impl MoveLists {
    fn take(&mut self, depth: usize) -> Vec<Move> {
        if self.lists.len() <= depth {
            self.lists.resize_with(depth + 1, Vec::new);
        }
        let mut v = std::mem::take(&mut self.lists[depth]);
        v.clear();
        v
    }
    fn give(&mut self, depth: usize, v: Vec<Move>) {
        self.lists[depth] = v;
    }
}

/// The order of [`wins_within_limit`] (and of the proof-number search when its numbers tie):
/// the king's moves, then moves landing beside it, in its row or column, then the rest
/// nearest first.
pub(super) fn king_first(king: crate::rules::Square) -> impl Fn(&Move) -> u32 {
    move |m: &Move| {
        if m.from == king {
            return 0;
        }
        let (df, dr) = (u32::from(m.to.file().abs_diff(king.file())), u32::from(m.to.rank().abs_diff(king.rank())));
        match (df + dr, df.min(dr)) {
            (1, _) => 1,
            (_, 0) => 2,
            (_, near) => 2 + near,
        }
    }
}

/// [`Scope::Tactical`]'s test: a king move for the defenders, a move beside the king for the
/// attackers.
fn may_end_the_game(pos: &Position, winner: Side, m: Move) -> bool {
    let king = pos.king();
    match winner {
        Side::Defenders => m.from == king,
        Side::Attackers => m.to.file().abs_diff(king.file()) + m.to.rank().abs_diff(king.rank()) == 1,
    }
}

fn one_sided(
    pos: &mut Position,
    winner: Side,
    plies: u32,
    limit: &mut Limit,
    line: &mut Vec<Move>,
    lists: &mut MoveLists,
    depth: usize,
) -> Result<bool, OutOfLimit> {
    if let Some(o) = pos.outcome() {
        return Ok(o.winner == Some(winner));
    }
    if plies == 0 {
        return Ok(false);
    }
    let mut moves = lists.take(depth);
    pos.generate_moves(&mut moves);
    if plies >= 2 {
        // At the last ply or two every move is looked at anyway: ordering would cost more than it saves.
        moves.sort_by_key(king_first(pos.king()));
    }
    let start = line.len();
    let mut result = Ok(pos.to_move() != winner);
    if pos.to_move() == winner {
        // Wins at once first, then deeper lines from two plies on (the other side's reply can
        // end the game for us by the rules, e.g. by leaving it without a move).
        'search: for pass in 0..2 {
            if pass == 1 && plies < 2 {
                break;
            }
            for &m in &moves {
                if pass == 0 && limit.scope == Scope::Tactical && !may_end_the_game(pos, winner, m) {
                    continue;
                }
                if let Err(e) = limit.spend() {
                    result = Err(e);
                    break 'search;
                }
                let undo = pos.make(m);
                line.push(m);
                let won = if pass == 0 {
                    Ok(pos.outcome().is_some_and(|o| o.winner == Some(winner)))
                } else if pos.outcome().is_some() {
                    Ok(false)
                } else {
                    one_sided(pos, winner, plies - 1, limit, line, lists, depth + 1)
                };
                pos.unmake(m, &undo);
                match won {
                    Ok(true) => {
                        result = Ok(true);
                        break 'search;
                    }
                    Ok(false) => line.truncate(start),
                    Err(e) => {
                        line.truncate(start);
                        result = Err(e);
                        break 'search;
                    }
                }
            }
        }
    } else {
        // The loser: every reply must lose; the line kept is the longest resistance.
        let mut longest: Vec<Move> = Vec::new();
        for &r in &moves {
            if let Err(e) = limit.spend() {
                result = Err(e);
                break;
            }
            let undo = pos.make(r);
            let mut sub = vec![r];
            let lost = one_sided(pos, winner, plies - 1, limit, &mut sub, lists, depth + 1);
            pos.unmake(r, &undo);
            match lost {
                Ok(true) if sub.len() > longest.len() => longest = sub,
                Ok(true) => {}
                Ok(false) => {
                    result = Ok(false);
                    break;
                }
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        if matches!(result, Ok(true)) {
            line.extend(longest);
        }
    }
    lists.give(depth, moves);
    result
}
