//! Helpers shared by the integration tests: boards from ASCII art, moves from strings.
#![allow(dead_code)]

use std::sync::Arc;
use tafl_rules::variant::parse_layout;
use tafl_rules::{EndScreen, Move, Outcome, Position, Reason, RuleSet, Setup, Side, Variant};

/// A preset.
pub fn variant(name: &str) -> Arc<Variant> {
    Arc::new(Variant::preset(name).expect("preset"))
}

/// A preset with some rules changed ("Copenhagen but no shieldwall").
pub fn variant_with(name: &str, change: impl FnOnce(&mut RuleSet)) -> Arc<Variant> {
    let base = Variant::preset(name).expect("preset");
    let mut rules = base.rules.clone();
    change(&mut rules);
    Arc::new(base.with_rules(rules).expect("valid rules"))
}

/// A position from rows of `.`, `+` (an empty special square, for the reader), `a`, `d`, `k`,
/// top rank first, as in variant files.
pub fn board(v: &Arc<Variant>, rows: &str, to_move: Side) -> Position {
    let text: String = rows.replace('+', ".").lines().map(|l| l.split_whitespace().collect::<String>() + "\n").collect();
    let (g, pieces) = parse_layout(&text).expect("test board parses");
    Position::from_setup(v.clone(), &Setup { size: g.size(), pieces, to_move }).expect("test board is legal")
}

/// Parses a move on the position's board.
pub fn mv(p: &Position, s: &str) -> Move {
    Move::parse(s, p.geometry()).expect("test move parses")
}

/// Plays a legal move and returns the captured squares as strings. A move that ends the
/// game must also be one the [`EndScreen`] (search's shortcut) says may end it, so every rule
/// clause tested through this helper checks the screen too.
pub fn play(p: &mut Position, s: &str) -> Vec<String> {
    let m = mv(p, s);
    let flagged = EndScreen::new(p).may_end(p, m);
    let captured = p.play(m).unwrap_or_else(|e| panic!("{e}\n{p}")).iter().map(|s| s.to_string()).collect();
    assert!(flagged || p.outcome().is_none(), "{s} ended the game ({:?}) but the end screen cleared it\n{p}", p.outcome());
    captured
}

/// Plays a sequence of moves.
pub fn play_all(p: &mut Position, moves: &str) {
    for m in moves.split_whitespace() {
        play(p, m);
    }
}

/// Whether a move is legal.
pub fn legal(p: &Position, s: &str) -> bool {
    p.is_legal(mv(p, s))
}

/// The legal moves from one square, as strings.
pub fn moves_from(p: &Position, from: &str) -> Vec<String> {
    p.legal_moves().into_iter().filter(|m| m.from.to_string() == from).map(|m| m.to_string()).collect()
}

pub fn win(side: Side, reason: Reason) -> Option<Outcome> {
    Some(Outcome::win(side, reason))
}

pub fn draw(reason: Reason) -> Option<Outcome> {
    Some(Outcome::draw(reason))
}

/// A position on an otherwise empty board, for boards too large to draw (19x19).
pub fn sparse(v: &Arc<Variant>, pieces: &[(&str, char)], to_move: Side) -> Position {
    let pieces = pieces
        .iter()
        .map(|(sq, c)| {
            let p = match c {
                'a' => tafl_rules::Piece::Attacker,
                'd' => tafl_rules::Piece::Defender,
                _ => tafl_rules::Piece::King,
            };
            (v.geometry.parse_square(sq).expect("test square"), p)
        })
        .collect();
    Position::from_setup(v.clone(), &Setup { size: v.geometry.size(), pieces, to_move }).expect("test board is legal")
}
