//! A proof-number search for forced wins too deep for [`solver`](super::solver)'s exhaustive
//! one: does `winner` win by force from here, however long it takes?
//!
//! Why: an engine resigns positions its evaluation calls lost; the exhaustive search proves
//! such a resignation only when the win lies within a few plies (its cost grows about 30-fold
//! per two plies). Depth-first proof-number search (df-pn, Nagai 2002) spends its effort on
//! the winner's most promising move at each turn and the loser's most stubborn reply, so it
//! reaches forced wins of 10-30 plies when the loser's replies are few or quickly refuted.
//!
//! How it stays exact:
//! - It reads positions without their history ([`Repetition::None`] via
//!   [`Position::reread`]): capture, escape, encirclement, forts and a side without moves
//!   depend on the board alone, so a transposition table keyed by the board's hash is sound.
//!   A proof found that way holds whatever history led here *when the variant's repetition
//!   rule can only help the winner* (Copenhagen's "the defenders lose" for an attacking
//!   winner, or no repetition rule): every line of the proof either reaches its win or is cut
//!   short by a repetition, which the winner then wins too. For any other rule the search
//!   refuses ([`ProveError::RepetitionMaySaveTheLoser`]).
//! - The ply cap (a draw) depends on the ply, not the board: a proof holds only if its longest
//!   line ends before the cap, which is checked ([`ProveError::ProofReachesPlyCap`]).
//! - A line that returns to a position on its own path is read as not a win (the game would
//!   go on forever). That can make the search miss a proof (the graph-history problem), never
//!   claim a false one: a position is marked proven only from children proven before it,
//!   starting from ended games.
//! - Every proof is then checked by [`verify`]-ing it from scratch: the rules replay each
//!   line, every legal reply of the loser is covered, every leaf is a game the winner won,
//!   and positions are told apart by their whole board (not a hash). What is reported (the
//!   proof's size and its longest line) comes from that check, not from the search's numbers.
//!
//! It says nothing when it finds no proof within its budget: "not proven" is not "not lost".

use super::solver::king_first;
use crate::rules::ruleset::{Repetition, RuleSet};
use crate::rules::{Move, Position, Side};
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

/// What [`prove_win`] may spend.
#[derive(Clone, Copy, Debug)]
pub struct ProveLimit {
    /// Positions expanded (each expansion makes every legal move once).
    pub expansions: u64,
    /// Optionally, a wall-clock deadline (looked at every 1024 expansions).
    pub deadline: Option<std::time::Instant>,
}

/// What [`prove_win`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Proved {
    /// `winner` wins by force, and the proof was checked move by move ([`verify`]).
    Win(ProofShape),
    /// The search ended without a proof before its budget did. Not a proof that no forced
    /// win exists: a line cut short by a return to its own path may have hidden one.
    Exhausted { expansions: u64 },
    /// The budget ran out first.
    OutOfLimit { expansions: u64 },
    /// The search's table called the position proven but the check of its proof failed, so
    /// nothing is claimed. It can happen where the table, keyed by the board, reuses a
    /// position proven at an earlier ply whose lines would reach the ply cap here.
    Unchecked { expansions: u64 },
}

/// The shape of a checked proof.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProofShape {
    /// Distinct positions in the proof (the winner's turns and the loser's).
    pub positions: usize,
    /// The longest line of the proof, in plies: the loser's best resistance.
    pub plies: u32,
    /// That line (the winner's proving move, the loser's longest-lasting reply, in turn).
    pub line: Vec<Move>,
    /// Positions the search expanded to find it.
    pub expansions: u64,
}

/// Why [`prove_win`] did not search.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ProveError {
    #[error("the {rule:?} repetition rule may end a line in the {loser}' favour, so a proof that reads positions without their history would not hold (the proof-number search proves wins only where repetition can only help the winner)")]
    RepetitionMaySaveTheLoser { rule: Repetition, loser: &'static str },
    #[error("the game is already over")]
    GameOver,
    #[error("the proof's longest line ({plies} plies from ply {ply}) reaches the variant's ply cap ({cap}), where the game is a draw")]
    ProofReachesPlyCap { plies: u32, ply: u32, cap: u32 },
}

/// Whether a history-free proof for `winner` holds under `rule` (see the module docs).
pub fn repetition_helps_only(rule: Repetition, winner: Side) -> bool {
    match rule {
        Repetition::None => true,
        Repetition::DefendersLose => winner == Side::Attackers,
        Repetition::Draw | Repetition::MoverLoses | Repetition::MoverWins => false,
    }
}

/// Searches for a forced win of `winner` from `pos` (either side to move) with df-pn, then
/// checks the proof. See the module docs for what a proof means. Both recurse once a ply, so
/// they run on a thread of their own with a stack deep enough for any ply cap.
pub fn prove_win(pos: &Position, winner: Side, limit: ProveLimit) -> Result<Proved, ProveError> {
    // About 300 bytes of stack a ply for each recursion; 1 GiB is only reserved, not used.
    std::thread::scope(|s| {
        std::thread::Builder::new()
            .name("prover".into())
            .stack_size(1 << 30)
            .spawn_scoped(s, || prove_win_here(pos, winner, limit))
            .expect("a thread for the prover")
            .join()
            .unwrap_or_else(|e| std::panic::resume_unwind(e))
    })
}

fn prove_win_here(pos: &Position, winner: Side, limit: ProveLimit) -> Result<Proved, ProveError> {
    if pos.is_over() {
        return Err(ProveError::GameOver);
    }
    let rule = pos.variant().rules.repetition;
    if !repetition_helps_only(rule, winner) {
        return Err(ProveError::RepetitionMaySaveTheLoser { rule, loser: winner.opponent().name() });
    }
    let mut p = history_free(pos);
    let mut dfpn = Dfpn { winner, table: Table::default(), path: HashSet::default(), expansions: 0, limit, out_of_limit: false };
    let root = p.hash();
    let (pn, dn) = dfpn.mid(&mut p, INF, INF);
    let expansions = dfpn.expansions;
    if pn != 0 {
        return Ok(if dn == 0 && !dfpn.out_of_limit { Proved::Exhausted { expansions } } else { Proved::OutOfLimit { expansions } });
    }
    debug_assert_eq!(dfpn.table.get(&root).map(|e| e.0), Some(0));
    let mut check = Check { winner, table: &dfpn.table, done: HashMap::new(), path: HashSet::new() };
    match check.verify(&mut p) {
        Some(plies) if pos.ply() + plies > pos.variant().ply_cap() => {
            Err(ProveError::ProofReachesPlyCap { plies, ply: pos.ply(), cap: pos.variant().ply_cap() })
        }
        Some(plies) => {
            let line = check.longest_line(&mut p);
            Ok(Proved::Win(ProofShape { positions: check.strategy_size(&mut p), plies, line, expansions }))
        }
        None => Ok(Proved::Unchecked { expansions }),
    }
}

/// `pos` read with no repetition rule (its board, side to move and ply; the history no longer
/// decides anything).
fn history_free(pos: &Position) -> Position {
    let v = pos.variant();
    if v.rules.repetition == Repetition::None {
        return pos.clone();
    }
    let rules = RuleSet { repetition: Repetition::None, ..v.rules.clone() };
    let free = Arc::new(v.with_rules(rules).expect("changing only the repetition rule keeps a valid variant"));
    pos.reread(&free).expect("only the repetition rule differs")
}

/// Proof and disproof numbers saturate here ("infinite").
const INF: u32 = u32::MAX / 4;

/// The transposition table's keys are Zobrist hashes already: no need to hash them again.
#[derive(Default)]
struct PassThrough(u64);
impl Hasher for PassThrough {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, _: &[u8]) {
        unreachable!("only u64 keys")
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}
type Table = HashMap<u64, (u32, u32), BuildHasherDefault<PassThrough>>;

struct Dfpn {
    winner: Side,
    /// (proof number, disproof number) of each position met, by hash.
    table: Table,
    /// Positions on the current line (a return to one is read as not a win).
    path: HashSet<u64, BuildHasherDefault<PassThrough>>,
    expansions: u64,
    limit: ProveLimit,
    out_of_limit: bool,
}

/// One child of the position being searched.
struct Kid {
    mv: Move,
    hash: u64,
    /// Its numbers when the game ended with the move.
    ended: Option<(u32, u32)>,
    /// Its numbers before it is searched (see [`Dfpn::first_numbers`]).
    first: (u32, u32),
}

impl Dfpn {
    fn numbers(&self, k: &Kid) -> (u32, u32) {
        if let Some(n) = k.ended {
            return n;
        }
        if self.path.contains(&k.hash) {
            return (INF, 0);
        }
        self.table.get(&k.hash).copied().unwrap_or(k.first)
    }

    /// The numbers of a position not yet searched: how hard it looks to prove and to disprove.
    /// For an attacking winner, the king's moves (a king that cannot move is captured or
    /// walled in soon; one that roams is not): the loser's turn gets a proof number that grows
    /// with them, the winner's turn a smaller one. Only the order of the search depends on
    /// it, never what a proof means.
    fn first_numbers(&self, pos: &Position) -> (u32, u32) {
        if self.winner != Side::Attackers {
            return (1, 1);
        }
        let mut k = 0;
        pos.for_each_move_from(pos.king(), |_| k += 1);
        if pos.to_move() == self.winner {
            (1 + k / 4, 1)
        } else {
            (1 + k, 1)
        }
    }

    /// df-pn's multiple iterative deepening at one position: search below it until its proof
    /// number reaches `th_pn` or its disproof number `th_dn`; returns (and stores) them.
    fn mid(&mut self, pos: &mut Position, th_pn: u32, th_dn: u32) -> (u32, u32) {
        let hash = pos.hash();
        if self.out_of_limit || self.expansions >= self.limit.expansions {
            self.out_of_limit = true;
            return self.table.get(&hash).copied().unwrap_or((1, 1));
        }
        self.expansions += 1;
        if self.expansions % 1024 == 0 && self.limit.deadline.is_some_and(|d| std::time::Instant::now() >= d) {
            self.out_of_limit = true;
        }
        let or = pos.to_move() == self.winner;
        let mut moves = Vec::new();
        pos.generate_moves(&mut moves);
        moves.sort_by_key(king_first(pos.king()));
        let mut kids: Vec<Kid> = Vec::with_capacity(moves.len());
        for &mv in &moves {
            let undo = pos.make(mv);
            let ended = pos.outcome().map(|o| if o.winner == Some(self.winner) { (0, INF) } else { (INF, 0) });
            let first = if ended.is_none() { self.first_numbers(pos) } else { (0, 0) };
            kids.push(Kid { mv, hash: pos.hash(), ended, first });
            pos.unmake(mv, &undo);
        }
        self.path.insert(hash);
        let result = loop {
            // The position's numbers from its children's, and the child to search.
            let (mut pn, mut dn) = if or { (INF, 0) } else { (0, INF) };
            let (mut best, mut best_n, mut second) = (usize::MAX, (INF, INF), INF);
            for (i, k) in kids.iter().enumerate() {
                let (cpn, cdn) = self.numbers(k);
                // The winner picks the child easiest to prove, the loser the easiest to disprove.
                let (key, other) = if or { (cpn, cdn) } else { (cdn, cpn) };
                if or {
                    pn = pn.min(cpn);
                    dn = (dn + cdn).min(INF);
                } else {
                    pn = (pn + cpn).min(INF);
                    dn = dn.min(cdn);
                }
                if key < if or { best_n.0 } else { best_n.1 } {
                    second = if or { best_n.0 } else { best_n.1 };
                    best = i;
                    best_n = if or { (key, other) } else { (other, key) };
                } else if key < second {
                    second = key;
                }
            }
            if kids.is_empty() {
                // No move: the rules decided the game on the move before (this is not reached).
                break if or { (INF, 0) } else { (0, INF) };
            }
            if pn >= th_pn || dn >= th_dn || pn == 0 || dn == 0 || self.out_of_limit {
                break (pn, dn);
            }
            // 1 + epsilon thresholds (Pawlewicz and Lew): fewer switches between siblings.
            let widen = |n: u32| n.saturating_add(n / 4).saturating_add(1).min(INF);
            let (cth_pn, cth_dn) = if or {
                (th_pn.min(widen(second)), (th_dn - dn).saturating_add(best_n.1).min(INF))
            } else {
                ((th_pn - pn).saturating_add(best_n.0).min(INF), th_dn.min(widen(second)))
            };
            let mv = kids[best].mv;
            let undo = pos.make(mv);
            self.mid(pos, cth_pn, cth_dn);
            pos.unmake(mv, &undo);
        };
        self.path.remove(&hash);
        // A number that depends on this line's path (a cycle read as not a win) may be wrong
        // elsewhere; only proofs are certain, and they never depend on it.
        self.table.insert(hash, result);
        result
    }
}

/// A position told apart by its whole board and side to move, not a hash: each piece's
/// square (its full cell index: boards up to 19x19 have more cells than a byte counts) and
/// kind.
type Board = (Side, Vec<(u16, u8)>);

fn board(pos: &Position) -> Board {
    let mut v = Vec::with_capacity(pos.count(Side::Attackers) + pos.count(Side::Defenders) + 1);
    pos.for_each_piece_on(|sq, piece| v.push((u16::try_from(sq.index()).expect("fewer than 65536 cells"), piece as u8)));
    (pos.to_move(), v)
}

/// The check of a proof the search found, from the rules alone.
struct Check<'a> {
    winner: Side,
    table: &'a Table,
    /// Positions shown won: the longest line (plies) the loser can make from each, and at
    /// the winner's turn the move the proof plays.
    done: HashMap<Board, (u32, Option<Move>)>,
    path: HashSet<Board>,
}

impl Check<'_> {
    fn proven(&self, pos: &Position) -> bool {
        pos.outcome().is_some_and(|o| o.winner == Some(self.winner)) || self.table.get(&pos.hash()).is_some_and(|e| e.0 == 0)
    }

    /// Whether `pos` (history-free) is won for the winner by the table's proof: the winner has
    /// a move to a proven position that checks, the loser has no move that escapes it, every
    /// leaf is a won game. Returns the longest line in plies.
    fn verify(&mut self, pos: &mut Position) -> Option<u32> {
        if let Some(o) = pos.outcome() {
            return (o.winner == Some(self.winner)).then_some(0);
        }
        let key = board(pos);
        if let Some(&(d, _)) = self.done.get(&key) {
            return Some(d);
        }
        if !self.path.insert(key.clone()) {
            return None;
        }
        let mut moves = Vec::new();
        pos.generate_moves(&mut moves);
        moves.sort_by_key(king_first(pos.king()));
        let mut found = None;
        if pos.to_move() == self.winner {
            for &mv in &moves {
                let undo = pos.make(mv);
                let r = if self.proven(pos) { self.verify(pos) } else { None };
                pos.unmake(mv, &undo);
                if let Some(d) = r {
                    found = Some((d + 1, Some(mv)));
                    break;
                }
            }
        } else {
            let mut longest = 0;
            let mut all = !moves.is_empty();
            for &mv in &moves {
                let undo = pos.make(mv);
                let r = self.verify(pos);
                pos.unmake(mv, &undo);
                match r {
                    Some(d) => longest = longest.max(d + 1),
                    None => {
                        all = false;
                        break;
                    }
                }
            }
            found = all.then_some((longest, None));
        }
        self.path.remove(&key);
        if let Some(f) = found {
            self.done.insert(key, f);
        }
        found.map(|(d, _)| d)
    }

    /// The positions of the proof itself (after [`Check::verify`] succeeded): from each of the
    /// winner's turns the move it plays, from each of the loser's every reply; not the
    /// positions the check looked at in branches it then dropped.
    fn strategy_size(&self, pos: &mut Position) -> usize {
        let mut seen = HashSet::new();
        self.walk(pos, &mut seen);
        seen.len()
    }

    fn walk(&self, pos: &mut Position, seen: &mut HashSet<Board>) {
        if pos.outcome().is_some() {
            return;
        }
        let key = board(pos);
        let Some(&(_, chosen)) = self.done.get(&key) else { return };
        if !seen.insert(key) {
            return;
        }
        let mut moves = Vec::new();
        match chosen {
            Some(mv) => moves.push(mv),
            None => pos.generate_moves(&mut moves),
        }
        for mv in moves {
            let undo = pos.make(mv);
            self.walk(pos, seen);
            pos.unmake(mv, &undo);
        }
    }

    /// The proof's longest line from `pos` (after [`Check::verify`] succeeded): the move the
    /// proof plays at each of the winner's turns, the loser's longest-lasting reply at each of
    /// its own.
    fn longest_line(&self, pos: &mut Position) -> Vec<Move> {
        let mut line = Vec::new();
        let mut undos = Vec::new();
        let depth_of = |pos: &Position| match pos.outcome() {
            Some(o) => (o.winner == Some(self.winner)).then_some(0),
            None => self.done.get(&board(pos)).map(|&(d, _)| d),
        };
        while pos.outcome().is_none() {
            let Some(&(here, chosen)) = self.done.get(&board(pos)) else { break };
            let pick = chosen.or_else(|| {
                let mut moves = Vec::new();
                pos.generate_moves(&mut moves);
                moves.into_iter().find(|&mv| {
                    let undo = pos.make(mv);
                    let d = depth_of(pos);
                    pos.unmake(mv, &undo);
                    d.is_some_and(|d| d + 1 == here)
                })
            });
            let Some(mv) = pick else { break };
            undos.push((mv, pos.make(mv)));
            line.push(mv);
        }
        while let Some((mv, undo)) = undos.pop() {
            pos.unmake(mv, &undo);
        }
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boards_that_differ_only_in_far_ranks_have_different_keys() {
        // The padded cell index of an 11x11 board runs past 255: a key of bytes would confuse
        // a piece on rank 2 with one on rank 10.
        let v = Arc::new(crate::rules::Variant::preset("copenhagen").unwrap());
        let low = crate::rules::notation::parse_position(v.clone(), "/11/11/11/11/11/11/11/11/11/5Kt4/11/", Side::Attackers).unwrap();
        let high = crate::rules::notation::parse_position(v, "/11/5Kt4/11/11/11/11/11/11/11/11/11/", Side::Attackers).unwrap();
        assert_ne!(low.king(), high.king());
        assert_ne!(board(&low), board(&high));
    }

    #[test]
    fn only_rules_where_repetition_helps_the_winner_are_accepted() {
        assert!(repetition_helps_only(Repetition::None, Side::Defenders));
        assert!(repetition_helps_only(Repetition::DefendersLose, Side::Attackers));
        assert!(!repetition_helps_only(Repetition::DefendersLose, Side::Defenders));
        for rule in [Repetition::Draw, Repetition::MoverLoses, Repetition::MoverWins] {
            assert!(!repetition_helps_only(rule, Side::Attackers), "{rule:?}");
        }
    }
}
