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
//! Most attacker moves cannot let the king escape, and the escape probe alone (the default)
//! screens them out before making them ([`EscapeScreen`]): with no escape open to the king
//! now, a move can open one only by emptying the first occupied square of one of the king's
//! four lines, and only where an escape square lies on that square or beyond it before the
//! next piece or the edge. Every other move leaves the king's lines as they were or shorter,
//! or lengthens one that holds no escape square, so it is cleared without a make (a test
//! checks on every preset that no cleared move lets the king escape, and that nearly all
//! moves are cleared).
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
use crate::rules::{Direction, Move, Piece, Position, Side, Square};

/// Which attacker moves of a position may let the king escape at once (see the module
/// documentation), worked out once for all of them. Errs only towards "may".
pub(super) struct EscapeScreen {
    /// The king can reach an escape square now: every move may leave him a route.
    open: bool,
    /// Per direction, the first square along the king's line that holds a piece, if emptying
    /// it may open an escape: an escape square lies there or beyond it before the next piece
    /// or the edge. (A blocker with none beyond it opens nothing when it leaves: the king's line
    /// then ends at the next piece, or the edge, or earlier where the mover lands.)
    blockers: [Option<Square>; 4],
    /// Whether one of those blockers is a defender (a capture could empty it).
    capturable_blocker: bool,
}

impl EscapeScreen {
    /// The screen of `pos` (attackers to move); `moves` is scratch.
    pub(super) fn new(pos: &Position, moves: &mut Vec<Move>) -> EscapeScreen {
        moves.clear();
        pos.generate_moves_from(pos.king(), moves);
        let variant = pos.variant();
        let open = moves.iter().any(|m| variant.is_escape(m.to));
        let g = pos.geometry();
        let king = pos.king();
        let mut blockers = [None; 4];
        for (slot, d) in blockers.iter_mut().zip(Direction::ALL) {
            let (df, dr) = d.vector();
            let (mut f, mut r) = (king.file() as i32 + df, king.rank() as i32 + dr);
            let mut blocker = None;
            while g.contains(f, r) {
                let sq = Square::new(f as u8, r as u8);
                match (blocker, pos.piece_at(sq)) {
                    (None, Some(_)) => blocker = Some(sq),
                    (Some(_), Some(_)) => break,
                    _ => {}
                }
                // The blocker's own square counts: emptied, it is on the king's line.
                if blocker.is_some() && variant.is_escape(sq) {
                    *slot = blocker;
                    break;
                }
                f += df;
                r += dr;
            }
        }
        let capturable_blocker = blockers.iter().flatten().any(|&b| pos.piece_at(b) == Some(Piece::Defender));
        EscapeScreen { open, blockers, capturable_blocker }
    }

    /// Whether attacker move `mv` may let the king escape at once: false means it cannot.
    /// Moves that may capture a blocker are tried with [`Position::captures_of`] (the
    /// position is left as it was).
    pub(super) fn may_open(&self, pos: &mut Position, mv: Move) -> bool {
        if self.open || self.blockers.contains(&Some(mv.from)) {
            return true;
        }
        self.capturable_blocker && pos.may_capture(mv) && pos.captures_of(mv).0.as_slice().iter().any(|c| self.blockers.contains(&Some(*c)))
    }
}

/// Whether attacker move `mv` in `pos` loses by `test`: the game goes on after it and `test`
/// holds of the position it leaves (the move is made, tested and unmade).
fn loses_by(pos: &mut Position, mv: Move, test: impl FnOnce(&mut Position) -> bool) -> bool {
    let undo = pos.make(mv);
    let lost = pos.outcome().is_none() && test(pos);
    pos.unmake(mv, &undo);
    lost
}

/// Whether attacker move `mv` in `pos` lets the king escape at once: the game goes on after
/// it and the king then reaches an escape square. `moves` is scratch.
pub(super) fn lets_king_escape(pos: &mut Position, mv: Move, moves: &mut Vec<Move>) -> bool {
    loses_by(pos, mv, |pos| king_escapes(pos, moves))
}

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
    targets: Vec<Square>,
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
    // The replies that can block a route or capture the king (those landing on a route or
    // beside the king) first, found without generating every reply: along each line from
    // such a square, the first piece, if it is an attacker that may move there. A failed
    // fork is nearly always refuted by one of them, and sorting all of a position's replies
    // to put them first cost more than the rest of the probe (a third of Copenhagen
    // self-play's time, in a profile of 2026-12-07).
    let near = |sq: Square| sq.file().abs_diff(king.file()) + sq.rank().abs_diff(king.rank()) == 1;
    let likely = |sq: Square, routes: &[Square]| routes.contains(&sq) || near(sq);
    let g = pos.geometry();
    s.targets.clear();
    s.targets.extend_from_slice(&s.routes);
    for d in Direction::ALL {
        let (df, dr) = d.vector();
        let (f, r) = (king.file() as i32 + df, king.rank() as i32 + dr);
        if g.contains(f, r) {
            s.targets.push(Square::new(f as u8, r as u8));
        }
    }
    for i in 0..s.targets.len() {
        let t = s.targets[i];
        if s.targets[..i].contains(&t) || pos.piece_at(t).is_some() {
            continue;
        }
        for d in Direction::ALL {
            let (df, dr) = d.vector();
            let (mut f, mut r) = (t.file() as i32 + df, t.rank() as i32 + dr);
            while g.contains(f, r) {
                let from = Square::new(f as u8, r as u8);
                if let Some(piece) = pos.piece_at(from) {
                    let mv = Move::new(from, t);
                    if piece == Piece::Attacker && pos.is_legal(mv) && refutes(pos, mv, &mut s.escape_moves) {
                        return false;
                    }
                    break;
                }
                f += df;
                r += dr;
            }
        }
    }
    // Then every other reply: the answer must be exact, and a reply elsewhere may end the
    // game (or capture, or leave the king no move) in ways no screen foresees.
    s.replies.clear();
    pos.generate_moves(&mut s.replies);
    for i in 0..s.replies.len() {
        let r = s.replies[i];
        if !likely(r.to, &s.routes) && refutes(pos, r, &mut s.escape_moves) {
            return false;
        }
    }
    true
}

/// Whether attacker reply `r` (legal in `pos`) refutes a fork: after it the game is over and
/// not won by the defenders, or it goes on and the king cannot escape at once.
fn refutes(pos: &mut Position, r: Move, moves: &mut Vec<Move>) -> bool {
    let undo = pos.make(r);
    let refuted = match pos.outcome() {
        Some(o) => o.winner != Some(Side::Defenders),
        None => !king_escapes(pos, moves),
    };
    pos.unmake(r, &undo);
    refuted
}

/// [`unanswerable`] as it was first written: every reply generated and tried, the likely
/// ones first by a sort. The reference the faster one is checked against.
#[cfg(test)]
fn unanswerable_by_every_reply(pos: &mut Position, s: &mut ForkScratch) -> bool {
    let king = pos.king();
    s.escape_moves.clear();
    pos.generate_moves_from(king, &mut s.escape_moves);
    let open = s.escape_moves.iter().any(|m| pos.variant().is_escape(m.to));
    if !open {
        return false;
    }
    s.replies.clear();
    pos.generate_moves(&mut s.replies);
    let replies = s.replies.clone();
    replies.into_iter().all(|r| !refutes(pos, r, &mut s.escape_moves))
}

impl Search {
    /// The escape probe (above): at the attackers' node `id` (position `pos`,
    /// children just created), proves lost each attacker move after which the king escapes at
    /// once. Every move is tried: one that opens a line (or captures a piece in the king's
    /// way) can give the king a route it does not have now. Returns whether it proved any.
    pub(super) fn probe_escapes(&mut self, id: NodeId, pos: &mut Position) -> bool {
        let mut proved = false;
        let mut king_moves = std::mem::take(&mut self.king_moves);
        // The escape probe alone tries only the moves its screen cannot clear.
        let screen = (!self.cfg.fork_probe).then(|| EscapeScreen::new(pos, &mut king_moves));
        let node = &self.tree.nodes[id as usize];
        for c in node.first_child as usize..(node.first_child as usize + node.num_children as usize) {
            if self.tree.nodes[c].proof != Proof::Unknown {
                continue;
            }
            let mv = self.tree.nodes[c].mv;
            let lost = match &screen {
                Some(screen) => screen.may_open(pos, mv) && lets_king_escape(pos, mv, &mut king_moves),
                None => {
                    let (escape, fork, scratch) = (self.cfg.escape_probe, self.cfg.fork_probe, &mut self.fork_scratch);
                    loses_by(pos, mv, |pos| (escape && king_escapes(pos, &mut king_moves)) || (fork && king_forks(pos, scratch)))
                }
            };
            if lost {
                // The child's side to move (the defenders) wins: its value is theirs.
                let child = &mut self.tree.nodes[c];
                child.proof = Proof::Win;
                child.raw_value = Proof::Win.value().unwrap_or(1.0);
                proved = true;
            }
        }
        self.king_moves = king_moves;
        proved
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::variant::PRESETS;
    use crate::rules::Variant;
    use rand::{Rng, SeedableRng};
    use std::sync::Arc;

    /// Along random games on every preset, at each attackers' turn with the king's routes
    /// open (where the fork probe asks): the fork check that tries the likely replies first
    /// without generating them gives the answer of the one that tries every reply.
    #[test]
    fn the_fork_check_answers_as_trying_every_reply_does() {
        let (mut asked, mut unanswerable_seen) = (0usize, 0usize);
        let (mut s, mut reference) = (ForkScratch::default(), ForkScratch::default());
        for (name, _) in PRESETS {
            let v = Arc::new(Variant::preset(name).expect("preset"));
            for seed in 0..8u64 {
                let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
                let mut p = Position::start(v.clone());
                while !p.is_over() {
                    if p.to_move() == Side::Attackers {
                        let want = unanswerable_by_every_reply(&mut p, &mut reference);
                        let before = p.clone();
                        assert_eq!(unanswerable(&mut p, &mut s), want, "{name}\n{p}");
                        assert_eq!(p.hash(), before.hash(), "the position is left as it was");
                        asked += 1;
                        unanswerable_seen += usize::from(want);
                    }
                    let moves = p.legal_moves();
                    p.make(moves[rng.gen_range(0..moves.len())]);
                }
            }
        }
        assert!(asked > 1000 && unanswerable_seen > 10, "{asked} positions, {unanswerable_seen} unanswerable: the test proves little");
    }

    /// Along random games on every preset, at each attackers' turn: no move the screen clears
    /// lets the king escape at once (the probe's answer without the screen), and the screen
    /// clears most moves (else the probe gains nothing).
    #[test]
    fn the_escape_screen_never_clears_a_move_that_lets_the_king_escape() {
        let (mut quiet, mut cleared, mut escapes) = (0usize, 0usize, 0usize);
        let mut scratch = Vec::new();
        for (name, _) in PRESETS {
            let v = Arc::new(Variant::preset(name).expect("preset"));
            for seed in 0..6u64 {
                let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
                let mut p = Position::start(v.clone());
                while !p.is_over() {
                    let moves = p.legal_moves();
                    if p.to_move() == Side::Attackers {
                        let screen = EscapeScreen::new(&p, &mut scratch);
                        for &mv in &moves {
                            let may = screen.may_open(&mut p, mv);
                            if lets_king_escape(&mut p, mv, &mut scratch) {
                                assert!(may, "{name}: {mv} lets the king escape but the screen cleared it\n{p}");
                                escapes += 1;
                            } else {
                                quiet += 1;
                                cleared += usize::from(!may);
                            }
                        }
                    }
                    p.make(moves[rng.gen_range(0..moves.len())]);
                }
            }
        }
        assert!(escapes > 100, "only {escapes} escaping moves were checked");
        // 99.7% on 2026-12-05; the screen without the escape squares beyond a blocker: 93.7%.
        assert!(cleared as f64 > 0.98 * quiet as f64, "the screen cleared only {cleared} of {quiet} moves that do not let the king escape");
    }
}
