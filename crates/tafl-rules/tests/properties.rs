//! Invariants as property tests over positions reached by random play on every preset:
//! generated moves equal the moves of a slow reference written from the rule text alone, the
//! incremental hash equals a recomputed one, make/unmake restores the position exactly,
//! `clone_from` equals `clone`, notation round-trips, and `captures_of` finds what `make` captures. Random games on every preset end without panicking.
//! The end screen search uses never clears a move that ends the game.

use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use std::collections::BTreeSet;
use std::sync::Arc;
use tafl_rules::notation::{parse_position, position_string};
use tafl_rules::ruleset::CornerKind;
use tafl_rules::variant::PRESETS;
use tafl_rules::{EndScreen, Move, Piece, Position, Reason, Side, Square, Variant};

fn presets() -> Vec<Arc<Variant>> {
    PRESETS.iter().map(|(n, _)| Arc::new(Variant::preset(n).expect("preset"))).collect()
}

/// The squares of the camp that holds `sq` (empty if none), by flood fill over the rule list.
fn camp_group(v: &Variant, sq: Square) -> BTreeSet<Square> {
    let camps = &v.rules.camps.squares;
    let mut group = BTreeSet::new();
    if !camps.contains(&sq) {
        return group;
    }
    let mut stack = vec![sq];
    group.insert(sq);
    while let Some(s) = stack.pop() {
        for c in camps {
            let adjacent = s.file().abs_diff(c.file()) + s.rank().abs_diff(c.rank()) == 1;
            if adjacent && group.insert(*c) {
                stack.push(*c);
            }
        }
    }
    group
}

/// Legality from the rule text: a rook move over empty squares, no farther than the speed
/// limit, entering the throne, corners and camps only as the rules allow.
fn reference_legal(p: &Position, from: Square, to: Square) -> bool {
    let v = p.variant();
    let (r, g) = (&v.rules, v.geometry);
    let Some(piece) = p.piece_at(from) else { return false };
    if piece.side() != p.to_move() || from == to || p.is_over() {
        return false;
    }
    if from.file() != to.file() && from.rank() != to.rank() {
        return false;
    }
    let dist = from.file().abs_diff(to.file()) + from.rank().abs_diff(to.rank());
    let limit = if piece == Piece::King { r.speed.king } else { r.speed.others };
    if limit != 0 && dist > limit {
        return false;
    }
    let is_king = piece == Piece::King;
    let own_camp = camp_group(v, from);
    let n = g.size();
    let (df, dr) = (to.file() as i32 - from.file() as i32, to.rank() as i32 - from.rank() as i32);
    let (sf, sr) = (df.signum(), dr.signum());
    for k in 1..=dist as i32 {
        let s = Square::new((from.file() as i32 + sf * k) as u8, (from.rank() as i32 + sr * k) as u8);
        if p.piece_at(s).is_some() {
            return false;
        }
        let last = s == to;
        let throne = r.throne.enabled && s == g.center();
        let corner = match r.corners.kind {
            CornerKind::None => false,
            CornerKind::Single => g.is_corner(s),
            CornerKind::Block => {
                let near = |x: u8| x <= 1 || x >= n - 2;
                near(s.file()) && near(s.rank())
            }
        };
        let camp = r.camps.squares.contains(&s);
        if camp && !own_camp.contains(&s) {
            return false;
        }
        if throne && !(if last { r.throne.stop } else { r.throne.pass }).admits(is_king) {
            return false;
        }
        if corner && !r.corners.stop.admits(is_king) {
            return false;
        }
    }
    true
}

fn reference_moves(p: &Position) -> BTreeSet<Move> {
    let g = p.geometry();
    let mut out = BTreeSet::new();
    for from in g.squares() {
        for to in g.squares() {
            if reference_legal(p, from, to) {
                out.insert(Move::new(from, to));
            }
        }
    }
    out
}

/// Checks every invariant on one position.
fn check(p: &mut Position) {
    let generated: BTreeSet<Move> = p.legal_moves().into_iter().collect();
    assert_eq!(generated, reference_moves(p), "move generation differs from the reference at {p:?}\n{p}");
    assert_eq!(p.hash(), p.compute_hash(), "incremental hash differs at {p:?}");
    // Notation round-trips.
    let s = position_string(p);
    let back = parse_position(p.variant().clone(), &s, p.to_move()).expect("own position strings parse");
    assert_eq!(back.pieces(), p.pieces());
    for mv in &generated {
        assert_eq!(Move::parse(&mv.to_string(), p.geometry()).unwrap(), *mv);
    }
    // Make/unmake restores everything.
    let before = (position_string(p), p.to_move(), p.hash(), p.outcome(), p.ply(), p.repetitions());
    for &mv in generated.iter().take(12) {
        let undo = p.make(mv);
        assert_eq!(p.hash(), p.compute_hash(), "hash after {mv} at {before:?}");
        if p.outcome().is_some() {
            assert!(p.legal_moves().is_empty());
        }
        p.unmake(mv, &undo);
        let after = (position_string(p), p.to_move(), p.hash(), p.outcome(), p.ply(), p.repetitions());
        assert_eq!(before, after, "unmake of {mv}");
    }
    // `captures_of` sees what `make` does, for the moves of either side's pieces, on a copy
    // of the board with either side to move (`analysis_copy`, which equals `from_setup` in
    // all but the undecided outcome), and leaves the board as it was; `may_capture` is true
    // wherever it finds something.
    for side in [Side::Attackers, Side::Defenders] {
        let mut copy = p.analysis_copy(side);
        let mut setup = p.to_setup();
        setup.to_move = side;
        let fresh = Position::from_setup(p.variant().clone(), &setup).expect("a position's own board");
        assert_eq!(
            (position_string(&copy), copy.hash(), copy.ply(), copy.repetitions()),
            (position_string(&fresh), fresh.hash(), fresh.ply(), fresh.repetitions())
        );
        assert_eq!(copy.outcome(), None);
        let board = (position_string(&copy), copy.hash());
        let mut made = fresh.clone();
        let mut moves = Vec::new();
        for (sq, piece) in p.pieces().into_iter().filter(|(_, piece)| piece.side() == side) {
            moves.clear();
            copy.generate_moves_from(sq, &mut moves);
            for &mv in moves.iter().take(6) {
                let (captures, king_taken) = copy.captures_of(mv);
                assert_eq!((position_string(&copy), copy.hash()), board, "captures_of {mv} changed the board");
                assert!(copy.may_capture(mv) || (captures.is_empty() && !king_taken), "may_capture({mv}) said no to a capture at\n{p}");
                let undo = made.make(mv);
                assert_eq!(captures.sorted(), undo.captures.sorted(), "captures of {mv} ({piece:?}) at\n{p}");
                assert_eq!(king_taken, made.outcome().is_some_and(|o| o.reason == Reason::KingCaptured), "king capture by {mv} at\n{p}");
                made.unmake(mv, &undo);
            }
        }
    }
    // clone_from into a position of another variant and game (reusing its history's
    // allocation) gives the same position as clone, history included: the next moves repeat
    // and end alike.
    let mut other = Position::start(Arc::new(Variant::preset("tablut").expect("preset")));
    for _ in 0..3 {
        let mv = other.legal_moves()[0];
        other.make(mv);
    }
    other.clone_from(p);
    let (mut a, mut b) = (p.clone(), other);
    assert!(Arc::ptr_eq(a.variant(), b.variant()));
    for &mv in generated.iter().take(4) {
        let (ua, ub) = (a.make(mv), b.make(mv));
        assert_eq!(
            (position_string(&a), a.hash(), a.ply(), a.repetitions(), a.outcome()),
            (position_string(&b), b.hash(), b.ply(), b.repetitions(), b.outcome())
        );
        a.unmake(mv, &ua);
        b.unmake(mv, &ub);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, .. ProptestConfig::default() })]

    #[test]
    fn invariants_hold_along_random_games(preset in 0..PRESETS.len(), seed in any::<u64>(), plies in 0usize..80) {
        let v = Arc::new(Variant::preset(PRESETS[preset].0).expect("preset"));
        let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
        let mut p = Position::start(v);
        check(&mut p);
        for _ in 0..plies {
            let moves = p.legal_moves();
            if moves.is_empty() {
                prop_assert!(p.is_over(), "no moves but the game is not over");
                break;
            }
            p.play(moves[rng.gen_range(0..moves.len())]).unwrap();
            check(&mut p);
        }
    }
}

#[test]
fn random_games_on_every_preset_end() {
    for v in presets() {
        for seed in 0..6u64 {
            let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
            let game = tafl_rules::play::random_game(v.clone(), &mut |n| rng.gen_range(0..n));
            assert!(game.moves.len() as u32 <= v.ply_cap(), "{}: game longer than the ply cap", v.name);
            assert!(game.final_position.is_over());
            assert_eq!(game.final_position.outcome(), Some(game.outcome));
        }
    }
}

/// Along random games on every preset (half of them shuffling pieces back and forth, so that
/// repetitions happen), every legal move that ends the game is one the [`EndScreen`] says may
/// end it, and the screen clears most of the moves that do not (else search gains nothing).
#[test]
fn the_end_screen_never_clears_a_move_that_ends_the_game() {
    let mut ends = std::collections::BTreeMap::<&str, usize>::new();
    let (mut quiet, mut cleared) = (0usize, 0usize);
    let mut screen = EndScreen::default();
    for v in presets() {
        for seed in 0..8u64 {
            let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
            let shuffle = seed % 2 == 1;
            let mut p = Position::start(v.clone());
            let mut last: [Option<Move>; 2] = [None, None];
            while !p.is_over() {
                screen.prepare(&p);
                let moves = p.legal_moves();
                for &mv in &moves {
                    let may = screen.may_end(&p, mv);
                    let undo = p.make(mv);
                    match p.outcome() {
                        Some(o) => {
                            assert!(may, "{}: {mv} ends the game ({o:?}) but the screen cleared it\n{p}", v.name);
                            *ends.entry(o.reason.name()).or_default() += 1;
                        }
                        None => {
                            quiet += 1;
                            cleared += usize::from(!may);
                        }
                    }
                    p.unmake(mv, &undo);
                }
                // Shuffling: step back along this side's last move when that is legal.
                let side = p.to_move().index();
                let back = last[side].map(|m| Move::new(m.to, m.from)).filter(|&m| shuffle && rng.gen_bool(0.8) && p.is_legal(m));
                let mv = back.unwrap_or_else(|| moves[rng.gen_range(0..moves.len())]);
                last[side] = Some(mv);
                p.make(mv);
            }
        }
    }
    for reason in [Reason::CornerEscape, Reason::EdgeEscape, Reason::KingCaptured, Reason::Repetition, Reason::PlyCap] {
        assert!(ends.get(reason.name()).copied().unwrap_or(0) > 0, "no game-ending move by {} was checked: {ends:?}", reason.name());
    }
    assert!(cleared as f64 > 0.8 * quiet as f64, "the screen cleared only {cleared} of {quiet} moves that do not end the game");
}
