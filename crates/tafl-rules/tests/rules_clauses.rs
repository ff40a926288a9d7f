//! One test per rule clause, each with the board it is about (top rank first; `+` marks an
//! empty throne, corner or camp for the reader). The clauses are those of the project's rules
//! reference (common rules, Copenhagen-only rules, and each preset's special rules).

mod common;
use common::*;
use tafl_rules::ruleset::{KingArmed, KingStrength, NoMoves, Repetition, When, Who};
use tafl_rules::{Reason, Side};

// ----- movement ------------------------------------------------------------------------

#[test]
fn pieces_move_like_rooks_and_stop_before_other_pieces() {
    let v = variant("brandubh");
    let p = board(
        &v,
        "
        + . . . . . +
        . . . . . . .
        . . . . . . .
        . . . k . . .
        . . . . . . .
        . a . . d . .
        + . . . . . +",
        Side::Attackers,
    );
    assert_eq!(moves_from(&p, "b2"), ["b2-a2", "b2-b1", "b2-b3", "b2-b4", "b2-b5", "b2-b6", "b2-b7", "b2-c2", "b2-d2"]);
}

#[test]
fn empty_throne_can_be_passed_by_all_but_only_the_king_stops_copenhagen() {
    let v = variant("copenhagen");
    let p = board(
        &v,
        "
        + . . . . . . . . . +
        . . . . . . . . . . .
        . . . . . . . . . . .
        . . . . . k . . . . .
        . . . . . . . . . . .
        . a . . . + . . . . .
        . . . . . . . . . . .
        . . . . . . . . . . .
        . . . . . . . . . . .
        . . . . . d . . . . .
        + . . . . . . . . . +",
        Side::Attackers,
    );
    assert!(legal(&p, "b6-e6"));
    assert!(!legal(&p, "b6-f6"), "attackers may not stop on the throne");
    assert!(legal(&p, "b6-g6"), "attackers may pass over the empty throne");
    let mut p = p;
    play(&mut p, "b6-b7");
    assert!(legal(&p, "f2-e2"));
    assert!(!legal(&p, "f2-f6"), "defenders may not stop on the throne");
    assert!(legal(&p, "f2-f7"), "defenders may pass over the empty throne");
}

#[test]
fn king_may_return_to_the_throne_copenhagen() {
    let v = variant("copenhagen");
    let p = board(
        &v,
        "
        + . . . . . . . . . +
        . . . . . . . . . . .
        . . . . . . . . . . .
        . . . . . . . . . . .
        . . . . . k . . . . .
        . . . . . + . . . . .
        . . . . . . . . . . .
        . . . . . . . . . . .
        . . . . . . . . . . .
        . . . . . . a . . . .
        + . . . . . . . . . +",
        Side::Defenders,
    );
    assert!(legal(&p, "f7-f6"));
    assert!(legal(&p, "f7-f3"), "the king passes the throne too");
}

#[test]
fn only_the_king_passes_the_throne_in_tablut() {
    let v = variant("tablut");
    let p = board(
        &v,
        "
        + . . . . . . . +
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . a . . + . . . .
        . . . . . . . . .
        . . . . k . . . .
        . . . . . . . . .
        + . . . . . . . +",
        Side::Attackers,
    );
    assert!(legal(&p, "b5-d5"));
    assert!(!legal(&p, "b5-f5"), "attackers may not pass the throne in tablut");
    let mut p = p;
    play(&mut p, "b5-b6");
    assert!(legal(&p, "e3-e5"), "the king stops on the throne");
    assert!(legal(&p, "e3-e8"), "the king passes the throne");
}

#[test]
fn corners_admit_only_the_king() {
    let v = variant("brandubh");
    let p = board(
        &v,
        "
        + . . . . . +
        . . . . . . .
        . . . . . . .
        . . . + . . .
        . . . . . . .
        d . . . . . a
        . k . . . . +",
        Side::Defenders,
    );
    assert!(!legal(&p, "a2-a1"), "a defender may not enter a corner");
    assert!(legal(&p, "b1-a1"), "the king may");
    let mut p = p;
    play(&mut p, "a2-a3");
    assert!(!legal(&p, "g2-g1"), "an attacker may not enter a corner");
}

#[test]
fn magpie_king_moves_one_square() {
    let v = variant("magpie");
    let p = board(
        &v,
        "
        + . . . . . +
        . . . . . . .
        . . . . . . .
        . . . + . . .
        . . k . . . .
        . . . . . . .
        + a . . . . +",
        Side::Defenders,
    );
    assert_eq!(moves_from(&p, "c3"), ["c3-b3", "c3-c2", "c3-c4", "c3-d3"]);
}

#[test]
fn ard_ri_every_piece_moves_one_square() {
    let v = variant("ard-ri");
    let p = board(
        &v,
        "
        + . . . . . +
        . . . . . . .
        . . . . . . .
        . . . + . . .
        . . k . . . .
        . . . . . a .
        + . . . . . +",
        Side::Attackers,
    );
    assert_eq!(moves_from(&p, "f2"), ["f2-e2", "f2-f1", "f2-f3", "f2-g2"]);
}

#[test]
fn foteviken_camps_can_be_left_but_not_entered_or_crossed() {
    let v = variant("foteviken-tablut");
    let p = board(
        &v,
        "
        d . . + + + . . .
        . . . . + . . . .
        . . . . . . . . .
        + . . . . . . . +
        + a . . k . . + +
        + . . . . . . . +
        . . . . . . . . .
        . . . . + . . . .
        . . . + + + . . .",
        Side::Attackers,
    );
    assert!(legal(&p, "b5-a5"), "a piece may move within its own camp");
    assert!(legal(&p, "b5-c5"), "and leave it");
    assert!(legal(&p, "b5-d5"));
    let mut p = p;
    play(&mut p, "b5-c5");
    assert!(!legal(&p, "a9-a6"), "no piece may enter a camp");
    assert!(legal(&p, "a9-a7"));
    play(&mut p, "a9-a8");
    assert!(!legal(&p, "c5-b5"), "a piece that left its camp may not return");
}

#[test]
fn foteviken_king_may_not_return_to_or_cross_the_throne() {
    let v = variant("foteviken-tablut");
    let p = board(
        &v,
        "
        . . . + + + . . .
        . . . . + . . . .
        . . . . k . . . .
        + . . . . . . . +
        + + . . + . . + +
        + . . . . . . . +
        . . . . . . . . .
        . . . . + . a . .
        . . . + + + . . .",
        Side::Defenders,
    );
    assert!(!legal(&p, "e7-e5"));
    assert!(!legal(&p, "e7-e4"));
    assert!(legal(&p, "e7-e6"));
}

// ----- custodial captures ----------------------------------------------------------------

#[test]
fn custodial_capture_between_two_enemies() {
    let v = variant("brandubh");
    let mut p = board(
        &v,
        "
        + . . a . . +
        . . . . . . .
        . a d . . . .
        . . . k . . .
        . . . . . . .
        . . . . . . .
        + . . . . . +",
        Side::Attackers,
    );
    assert_eq!(play(&mut p, "d7-d5"), ["c5"]);
}

#[test]
fn moving_between_two_enemies_is_safe() {
    let v = variant("brandubh");
    let mut p = board(
        &v,
        "
        + . . . . . +
        . . . . . . .
        . a . a . . .
        . . . k . . .
        . . d . . . .
        . . . . . . .
        + . . . . . +",
        Side::Defenders,
    );
    assert_eq!(play(&mut p, "c3-c5"), Vec::<String>::new());
    assert_eq!(p.piece_at("c5".parse().unwrap()), Some(tafl_rules::Piece::Defender));
}

#[test]
fn one_move_captures_several_pieces() {
    let v = variant("brandubh");
    let mut p = board(
        &v,
        "
        + . . a . . +
        . . . . . . .
        . a d . d a .
        . . . + . . .
        . . . . . . .
        . . . . . . k
        + . . . . . +",
        Side::Attackers,
    );
    assert_eq!(play(&mut p, "d7-d5"), ["c5", "e5"]);
}

#[test]
fn diagonals_never_capture() {
    let v = variant("brandubh");
    let mut p = board(
        &v,
        "
        + . . . . . +
        . k . . . . .
        . . . . . . .
        . . . + . . a
        . . . . d . .
        . . . a . . .
        + . . . . . +",
        Side::Attackers,
    );
    assert_eq!(play(&mut p, "g4-f4"), Vec::<String>::new(), "e3 sits between d2 and f4 diagonally");
}

#[test]
fn the_board_edge_is_not_hostile() {
    let v = variant("brandubh");
    let mut p = board(
        &v,
        "
        + . . . . . +
        . . . . . . .
        . . . . . . .
        . . . + . . .
        . . . . . . k
        . . . . a . .
        + . d . . . +",
        Side::Attackers,
    );
    assert_eq!(play(&mut p, "e2-c2"), Vec::<String>::new(), "c1 sits between c2 and the edge");
}

#[test]
fn corners_are_hostile() {
    let v = variant("brandubh");
    let mut p = board(
        &v,
        "
        + . . . . . +
        . . . . . . .
        . . . . . . .
        . . . + . . k
        . . . . . . .
        . . . a . . .
        + d . . . . +",
        Side::Attackers,
    );
    assert_eq!(play(&mut p, "d2-c2"), Vec::<String>::new());
    play(&mut p, "g4-g5");
    assert_eq!(play(&mut p, "c2-c1"), ["b1"], "a defender between an attacker and a corner falls");
}

#[test]
fn empty_throne_is_hostile_to_defenders_but_not_when_the_king_is_on_it() {
    let v = variant("brandubh");
    let mut p = board(
        &v,
        "
        + . . . . . +
        . . . a . . .
        . . . . . . .
        . . . + d . .
        . . . . . . .
        . . . . . . k
        + . . . . . +",
        Side::Attackers,
    );
    // e4 is next to the empty throne d4 only sideways: an attacker on f4 captures it.
    play(&mut p, "d6-f6");
    play(&mut p, "g2-g3");
    assert_eq!(play(&mut p, "f6-f4"), ["e4"]);

    let mut p = board(
        &v,
        "
        + . . . . . +
        . . . . . . .
        . . . . . a .
        . . . k d . .
        . . . . . . .
        . . . . . . .
        + . . . . . +",
        Side::Attackers,
    );
    assert_eq!(play(&mut p, "f5-f4"), Vec::<String>::new(), "the occupied throne is not hostile to defenders");
}

#[test]
fn throne_is_always_hostile_to_attackers_even_with_an_unarmed_king_on_it() {
    let v = variant_with("brandubh", |r| r.king_armed = KingArmed::No);
    let mut p = board(
        &v,
        "
        + . . . . . +
        . . . . . d .
        . . . a . . .
        . . . k . . .
        . . . . . . .
        . . . . . . .
        + . . . . . +",
        Side::Defenders,
    );
    assert_eq!(play(&mut p, "f6-d6"), ["d5"]);
}

#[test]
fn armed_king_captures_as_hammer_and_as_anvil() {
    let v = variant("brandubh");
    let mut p = board(
        &v,
        "
        + . . . . . +
        . . . . . . .
        . d a . . k .
        . . . + . . .
        . . . . . . .
        . . . a d . .
        + . . . . . +",
        Side::Defenders,
    );
    assert_eq!(play(&mut p, "f5-d5"), ["c5"], "king as hammer");
    let mut p = board(
        &v,
        "
        + . . . . . +
        . . . . . . .
        . . . . . . .
        . . . + . . .
        . . . . . . .
        . k a . d . .
        + . . . . . +",
        Side::Defenders,
    );
    assert_eq!(play(&mut p, "e2-d2"), ["c2"], "king as anvil");
}

#[test]
fn unarmed_king_is_neither_hammer_nor_anvil() {
    let v = variant_with("brandubh", |r| r.king_armed = KingArmed::No);
    let mut p = board(
        &v,
        "
        + . . . . . +
        . . . . . . .
        . d a . . k .
        . . . + . . .
        . . . . . . .
        . . . . . . .
        + . . a . . +",
        Side::Defenders,
    );
    assert_eq!(play(&mut p, "f5-d5"), Vec::<String>::new(), "not as hammer");
    let mut p = board(
        &v,
        "
        + . . . . . +
        . . . . . . .
        . . . . . . .
        . . . + . . .
        . . . . . . .
        . k a . d . .
        + . . . . . +",
        Side::Defenders,
    );
    assert_eq!(play(&mut p, "e2-d2"), Vec::<String>::new(), "not as anvil");
}

#[test]
fn empty_camps_are_hostile_foteviken() {
    let v = variant("foteviken-tablut");
    let mut p = board(
        &v,
        "
        d . . + + + . . .
        . . . . + . . . .
        a . . . . . . . .
        + . . . . . . . +
        + + . . k . . + +
        + . . . . . . . +
        . . . . . . . . .
        . . . . + . . . .
        . . . + + + . . .",
        Side::Defenders,
    );
    assert_eq!(play(&mut p, "a9-a8"), ["a7"], "an attacker between a defender and an empty camp falls");
}

// ----- king capture ---------------------------------------------------------------------

#[test]
fn weak_king_is_captured_by_two_away_from_the_throne() {
    let v = variant("brandubh");
    let mut p = board(
        &v,
        "
        + . . a . . +
        . a k . . . .
        . . . . . . .
        . . . + . . .
        . . . . . . .
        . . . . . . .
        + . . . . . +",
        Side::Attackers,
    );
    play(&mut p, "d7-d6");
    assert_eq!(p.outcome(), win(Side::Attackers, Reason::KingCaptured));
}

#[test]
fn weak_king_on_the_throne_needs_four_attackers() {
    let v = variant("brandubh");
    let four = "
        + . . . . . +
        . . . . . . .
        . . . a . . .
        . . a k a . .
        . . . . . . a
        . . . . . . .
        + . . . . . +";
    let mut p = board(&v, four, Side::Attackers);
    play(&mut p, "g3-d3");
    assert_eq!(p.outcome(), win(Side::Attackers, Reason::KingCaptured));
    let three = four.replacen(". . . a . . .", ". . . . . . .", 1);
    let mut p = board(&v, &three, Side::Attackers);
    play(&mut p, "g3-d3");
    assert_eq!(p.outcome(), None);
}

#[test]
fn weak_king_beside_the_throne_needs_three_attackers_and_the_throne() {
    let v = variant("brandubh");
    let mut p = board(
        &v,
        "
        + . . . . . +
        . . . . . . a
        . . a k a . .
        . . . + . . .
        . . . . . . .
        . . . . . . .
        + . . . . . +",
        Side::Attackers,
    );
    play(&mut p, "g6-d6");
    assert_eq!(p.outcome(), win(Side::Attackers, Reason::KingCaptured));
    let mut p = board(
        &v,
        "
        + . . . . . +
        . . . . . . .
        . . a k . . a
        . . . + . . .
        . . . . . . .
        . . . . . . .
        + . . . . . +",
        Side::Attackers,
    );
    play(&mut p, "g5-e5");
    assert_eq!(p.outcome(), None, "two attackers do not capture the king beside the throne");
}

#[test]
fn weak_king_is_captured_against_a_hostile_corner() {
    let v = variant("brandubh");
    let mut p = board(
        &v,
        "
        + . . . . . +
        . . . . . . .
        . . a . . . .
        . . . + . . .
        . . . . . . .
        . . . . . . .
        + k . . . . +",
        Side::Attackers,
    );
    play(&mut p, "c5-c1");
    assert_eq!(p.outcome(), win(Side::Attackers, Reason::KingCaptured));
}

/// OpenTafl's own Brandub (`ks:w cenh: cenhe:`): a king weak everywhere, a throne hostile to
/// nobody.
fn opentafl_brandub() -> std::sync::Arc<tafl_rules::Variant> {
    variant_with("brandubh", |r| {
        r.king_strength = KingStrength::WeakEverywhere;
        r.throne.hostile_to_attackers = When::Never;
        r.throne.hostile_to_defenders = When::Never;
    })
}

#[test]
fn king_weak_everywhere_is_captured_by_two_on_the_throne() {
    let mut p = board(
        &opentafl_brandub(),
        "
        + . . . . . +
        . . . . . . .
        . . . . . . .
        . . a k . . a
        . . . . . . .
        . . . . . . .
        + . . . . . +",
        Side::Attackers,
    );
    play(&mut p, "g4-e4");
    assert_eq!(p.outcome(), win(Side::Attackers, Reason::KingCaptured));
}

#[test]
fn king_weak_everywhere_is_captured_by_two_beside_the_throne() {
    let mut p = board(
        &opentafl_brandub(),
        "
        + . . . . . +
        . . . . . . .
        . . a k . . a
        . . . + . . .
        . . . . . . .
        . . . . . . .
        + . . . . . +",
        Side::Attackers,
    );
    play(&mut p, "g5-e5");
    assert_eq!(p.outcome(), win(Side::Attackers, Reason::KingCaptured));
}

#[test]
fn king_weak_everywhere_is_captured_against_the_throne_only_where_it_is_hostile_to_defenders() {
    // A throne hostile to nobody (OpenTafl's Brandub) is no captor.
    let mut p = board(
        &opentafl_brandub(),
        "
        + . . . . . +
        . . . . . . .
        . . . k . . .
        . . . + . . .
        . . . . . . .
        . d . . . . .
        + . . . a . +",
        Side::Attackers,
    );
    play_all(&mut p, "e1-e6 b2-b3");
    play(&mut p, "e6-d6");
    assert_eq!(p.outcome(), None, "an attacker above him, the throne below");
    // The empty throne hostile to defenders (brandubh's throne) is a captor.
    let rows = "
        + . . . . . +
        . . . . . . .
        . . . . . . .
        . . . + . . .
        . . . k . . .
        . d . . . . a
        + . . . . . +";
    let mut p = board(&variant_with("brandubh", |r| r.king_strength = KingStrength::WeakEverywhere), rows, Side::Attackers);
    play(&mut p, "g2-d2");
    assert_eq!(p.outcome(), win(Side::Attackers, Reason::KingCaptured), "an attacker below him, the throne above");
    // The same board in brandubh (OpenTafl's `ks:c`): beside the throne he needs three attackers.
    let mut p = board(&variant("brandubh"), rows, Side::Attackers);
    play(&mut p, "g2-d2");
    assert_eq!(p.outcome(), None);
}

#[test]
fn king_weak_everywhere_is_not_captured_against_the_edge() {
    let mut p = board(
        &opentafl_brandub(),
        "
        + . . . . . +
        . . . . . . .
        . . . . . . .
        . . . + . . .
        . . . . . . .
        . . . . . . a
        + . . k . . +",
        Side::Attackers,
    );
    play(&mut p, "g2-d2");
    assert_eq!(p.outcome(), None, "the edge is no captor");
}

const STRONG_KING_TWO_ATTACKERS: &str = "
    + . . . . . . . . . +
    . . . . . . . . . . .
    . . . . . . . . . . .
    . . . . . . . . . . .
    . . . a . . . . . . .
    . . . . . + . . . . .
    . . . . . . . . . . .
    . . . . . . . . . . .
    . a k . . . . . . . .
    . . . . . . . . . . .
    + . . . . . . . . . +";

#[test]
fn strong_king_is_not_captured_by_two() {
    let mut p = board(&variant("copenhagen"), STRONG_KING_TWO_ATTACKERS, Side::Attackers);
    play(&mut p, "d7-d3");
    assert_eq!(p.outcome(), None);
    // The same board with a weak king (hnefatafl-11) is a capture.
    let mut p = board(&variant("hnefatafl-11"), STRONG_KING_TWO_ATTACKERS, Side::Attackers);
    play(&mut p, "d7-d3");
    assert_eq!(p.outcome(), win(Side::Attackers, Reason::KingCaptured));
}

#[test]
fn strong_king_is_captured_by_four() {
    let mut p = board(
        &variant("copenhagen"),
        "
        + . . . . . . . . . +
        . . . . . . . . . . .
        . . . . . . . . . . .
        . . a . . . . . . . .
        . . . . . . . . . . .
        . . . . . + . . . . .
        . . . . . . . . . . .
        . . . . . . . . . . .
        . a k a . . . . . . .
        . . a . . . . . . . .
        + . . . . . . . . . +",
        Side::Attackers,
    );
    play(&mut p, "c8-c4");
    assert_eq!(p.outcome(), win(Side::Attackers, Reason::KingCaptured));
}

#[test]
fn strong_king_on_the_throne_needs_four() {
    let mut p = board(
        &variant("copenhagen"),
        "
        + . . . . . . . . . +
        . . . . . . . . . . .
        . . . . . . . . . . .
        . . . . . . . . . . .
        . . . . . a . . . . .
        . . . . a k a . . . .
        . . . . . . . . . . .
        . . . . . . . . . . .
        . . . . . . . . . . .
        . . . . . a . . . . .
        + . . . . . . . . . +",
        Side::Attackers,
    );
    play(&mut p, "f2-f5");
    assert_eq!(p.outcome(), win(Side::Attackers, Reason::KingCaptured));
}

#[test]
fn strong_king_beside_the_throne_is_captured_by_three_and_the_throne() {
    let mut p = board(
        &variant("copenhagen"),
        "
        + . . . . . . . . . +
        . . . . . a . . . . .
        . . . . . . . . . . .
        . . . . . . . . . . .
        . . . . a k a . . . .
        . . . . . + . . . . .
        . . . . . . . . . . .
        . . . . . . . . . . .
        . . . . . . . . . . .
        . . . . . . . . . . .
        + . . . . . . . . . +",
        Side::Attackers,
    );
    play(&mut p, "f10-f8");
    assert_eq!(p.outcome(), win(Side::Attackers, Reason::KingCaptured));
}

#[test]
fn strong_king_on_the_edge_is_safe_in_copenhagen() {
    let mut p = board(
        &variant("copenhagen"),
        "
        + . . . . . . . . . +
        . . . . . . . . . . .
        . . . . . . . . . . .
        . . . . . . . . . . .
        a . . . . . . . . . .
        k . . . a + . . . . .
        a . . . . . . . . . .
        . . . . . . . . . . .
        . . . . . . . . . . .
        . . . . . . . . d . .
        + . . . . . . . . . +",
        Side::Attackers,
    );
    play(&mut p, "e6-b6");
    assert_eq!(p.outcome(), None);
}

#[test]
fn strong_king_on_the_edge_is_captured_by_three_where_the_edge_counts_tablut() {
    let mut p = board(
        &variant("tablut"),
        "
        + . . . . . . . +
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        a . . . + . . . .
        k . . . a . . . .
        a . . . . . . . .
        . . . . . . . . .
        + . . . . . . . +",
        Side::Attackers,
    );
    play(&mut p, "e4-b4");
    assert_eq!(p.outcome(), win(Side::Attackers, Reason::KingCaptured));
}

#[test]
fn a_king_moving_between_two_attackers_is_not_captured() {
    let v = variant("brandubh");
    let mut p = board(
        &v,
        "
        + . . . . . +
        . . . . . . .
        . a . a . . .
        . . . + . . .
        . . k . . . .
        . . . . . . .
        + . . . . . +",
        Side::Defenders,
    );
    play(&mut p, "c3-c5");
    assert_eq!(p.outcome(), None);
}

// ----- shieldwall (Copenhagen) ------------------------------------------------------------

fn copenhagen_bottom(rank2: &str, rank1: &str, above: &str) -> String {
    format!(
        "+ . . . . . . . . . +
         . . . . . . . . . . .
         . . . . . . . . . . .
         . . . . . . . k . . .
         . . . . . . . . . . .
         . . . . . + . . . . .
         {above}
         . . . . . . . . . . .
         . . . . . . . . . . .
         {rank2}
         {rank1}"
    )
}

#[test]
fn shieldwall_captures_a_bracketed_row_on_the_edge() {
    let b = copenhagen_bottom(". . . a a . . . . . .", "+ . a d d . . . . . +", ". . . . . a . . . . .");
    let mut p = board(&variant("copenhagen"), &b, Side::Attackers);
    assert_eq!(play(&mut p, "f5-f1"), ["d1", "e1"]);
}

#[test]
fn shieldwall_with_a_corner_as_bracket() {
    let b = copenhagen_bottom(". a a . . . . . . . .", "+ d d . . . . . . . +", ". . . a . . . . . . .");
    let mut p = board(&variant("copenhagen"), &b, Side::Attackers);
    assert_eq!(play(&mut p, "d5-d1"), ["b1", "c1"]);
}

#[test]
fn shieldwall_spares_the_king_in_the_row_but_not_the_defenders_beside_him() {
    let b = copenhagen_bottom(". . . a a a . . . . .", "+ . a d k d . . . . +", ". . . . . . a . . . .");
    let b = b.replacen(". . . . . . . k . . .", ". . . . . . . . . . .", 1);
    let mut p = board(&variant("copenhagen"), &b, Side::Attackers);
    assert_eq!(play(&mut p, "g5-g1"), ["d1", "f1"]);
    assert_eq!(p.piece_at("e1".parse().unwrap()), Some(tafl_rules::Piece::King));
}

#[test]
fn shieldwall_needs_the_flanking_move() {
    let b = copenhagen_bottom(". . . a . . . . . . .", "+ . a d d a . . . . +", ". . . . a . . . . . .");
    let mut p = board(&variant("copenhagen"), &b, Side::Attackers);
    assert_eq!(play(&mut p, "e5-e2"), Vec::<String>::new(), "completing the front is not a bracketing move");
}

#[test]
fn shieldwall_needs_an_enemy_in_front_of_every_piece() {
    let b = copenhagen_bottom(". . . a . . . . . . .", "+ . a d d . . . . . +", ". . . . . a . . . . .");
    let mut p = board(&variant("copenhagen"), &b, Side::Attackers);
    assert_eq!(play(&mut p, "f5-f1"), Vec::<String>::new());
}

#[test]
fn no_shieldwall_where_the_rules_have_none() {
    let b = copenhagen_bottom(". . . a a . . . . . .", "+ . a d d . . . . . +", ". . . . . a . . . . .");
    let mut p = board(&variant_with("copenhagen", |r| r.shieldwall = false), &b, Side::Attackers);
    assert_eq!(play(&mut p, "f5-f1"), Vec::<String>::new());
}

// ----- exit fort (Copenhagen) -------------------------------------------------------------

fn fort_board(rank4: &str, rank3: &str, rank2: &str, rank1: &str) -> String {
    format!(
        "+ . . . . . . . . . +
         . . . . . . . . . . .
         . . . . . . . . . . .
         . . . . . . . . . . .
         . . . . . . . . . . .
         . . . . . + . . . . .
         . . a . . . . . a . .
         {rank4}
         {rank3}
         {rank2}
         {rank1}"
    )
}

#[test]
fn unbreakable_exit_fort_wins_for_the_defenders() {
    let b = fort_board(". . . . . . . . . . .", ". . . . d d d . . . .", ". . . . d k d . . . .", "+ . . . d . d . . . +");
    let mut p = board(&variant("copenhagen"), &b, Side::Defenders);
    play(&mut p, "f2-f1");
    assert_eq!(p.outcome(), win(Side::Defenders, Reason::ExitFort));
}

#[test]
fn a_defender_closing_the_fort_around_the_king_on_the_edge_wins() {
    let b = "+ . . . . . . . . . +
         . . . . . . . . . . .
         . . . . . . . . . . .
         . . . . . . . . . . .
         . . . . . . . . . . .
         . . . . . + . . . . .
         . . a . . d . . a . .
         . . . . . . . . . . .
         . . . . d . d . . . .
         . . . . d . d . . . .
         + . . . d k d . . . +";
    let mut p = board(&variant("copenhagen"), b, Side::Defenders);
    play(&mut p, "f5-f3");
    assert_eq!(p.outcome(), win(Side::Defenders, Reason::ExitFort));
}

#[test]
fn breakable_fort_does_not_win() {
    // f3 could be captured from e3 and g3.
    let b = fort_board(". . . . . . . . . . .", ". . . . . d . . . . .", ". . . . d k d . . . .", "+ . . . d . d . . . +");
    let mut p = board(&variant("copenhagen"), &b, Side::Defenders);
    play(&mut p, "f2-f1");
    assert_eq!(p.outcome(), None);
}

#[test]
fn fort_with_an_attacker_inside_does_not_win() {
    let walls = [". . . . d d d . . . .", ". . . . d . d . . . .", ". . . . d k d . . . .", "+ . . . d . d . . . +"];
    let b = fort_board(walls[0], walls[1], walls[2], walls[3]);
    let mut p = board(&variant("copenhagen"), &b, Side::Defenders);
    play(&mut p, "f2-f1");
    assert_eq!(p.outcome(), win(Side::Defenders, Reason::ExitFort), "control: the empty fort holds");
    let b = fort_board(walls[0], ". . . . d a d . . . .", walls[2], walls[3]);
    let mut p = board(&variant("copenhagen"), &b, Side::Defenders);
    play(&mut p, "f2-f1");
    assert_eq!(p.outcome(), None);
}

#[test]
fn fort_where_the_king_cannot_move_does_not_win() {
    let b = fort_board(". . . . . d . . . . .", ". . . . . . . . . . .", ". . . . d . d . . . .", "+ . . . d k d . . . +");
    let mut p = board(&variant("copenhagen"), &b, Side::Defenders);
    play(&mut p, "f4-f2");
    assert_eq!(p.outcome(), None);
}

// ----- encirclement -----------------------------------------------------------------------

const RING_WITH_GAP: &str = "
    + . . a . . +
    . . . . . . .
    . . a d a . .
    . a d k d a .
    . . a . a . .
    . . . a . . .
    + . . . . . +";

#[test]
fn closing_the_ring_encircles_the_defenders() {
    let mut p = board(&variant("brandubh"), RING_WITH_GAP, Side::Attackers);
    play(&mut p, "d7-d6");
    assert_eq!(p.outcome(), win(Side::Attackers, Reason::Encirclement));
}

#[test]
fn a_ring_with_a_gap_does_not_encircle() {
    let mut p = board(&variant("brandubh"), RING_WITH_GAP, Side::Attackers);
    play(&mut p, "d7-e7");
    assert_eq!(p.outcome(), None);
}

#[test]
fn a_defender_outside_the_ring_prevents_encirclement() {
    let b = RING_WITH_GAP.replacen(". . . . . . .", ". . . . . . d", 1);
    let mut p = board(&variant("brandubh"), &b, Side::Attackers);
    play(&mut p, "d7-d6");
    assert_eq!(p.outcome(), None);
}

#[test]
fn no_encirclement_where_the_rules_have_none() {
    let mut p = board(&variant_with("brandubh", |r| r.encirclement = false), RING_WITH_GAP, Side::Attackers);
    play(&mut p, "d7-d6");
    assert_eq!(p.outcome(), None);
}

// ----- repetition -------------------------------------------------------------------------

/// Brandubh under `rule` after seven plies of two pieces shuttling from the board below
/// (defenders to move): the attackers' b5-b6 brings that board back a third time.
fn shuttle_before_the_third(rule: Repetition) -> tafl_rules::Position {
    let v = variant_with("brandubh", |r| r.repetition = rule);
    let mut p = board(
        &v,
        "
        + . . . . . +
        . a . . . . .
        . . . . . . .
        . . . k . . .
        . . . . . . .
        . . . . . d .
        + . . . . . +",
        Side::Defenders,
    );
    play_all(&mut p, "f2-f3 b6-b5 f3-f2 b5-b6 f2-f3 b6-b5 f3-f2");
    p
}

fn repetition_game(rule: Repetition) -> (Option<tafl_rules::Outcome>, Option<tafl_rules::Outcome>) {
    let mut p = shuttle_before_the_third(rule);
    let before = p.outcome();
    play(&mut p, "b5-b6");
    assert_eq!(p.repetitions(), 3);
    (before, p.outcome())
}

#[test]
fn repetition_mover_loses() {
    assert_eq!(repetition_game(Repetition::MoverLoses), (None, win(Side::Defenders, Reason::Repetition)));
}

#[test]
fn repetition_mover_wins_as_opentafl_plays_its_tfr_l() {
    // The attackers' b5-b6 makes the third occurrence: under OpenTafl 0.4.8's `tfr:l` they win.
    assert_eq!(repetition_game(Repetition::MoverWins), (None, win(Side::Attackers, Reason::Repetition)));
}

#[test]
fn repetition_defenders_lose() {
    assert_eq!(repetition_game(Repetition::DefendersLose), (None, win(Side::Attackers, Reason::Repetition)));
}

#[test]
fn repetition_draw() {
    assert_eq!(repetition_game(Repetition::Draw), (None, draw(Reason::Repetition)));
}

#[test]
fn a_position_reread_under_another_repetition_rule_ends_by_that_rule() {
    // The game of `repetition_game` under Copenhagen's reading (the defenders lose), reread
    // one move before the third occurrence under a draw: the history comes along (the count
    // goes on to 3) and the new rule scores it. Other rules may not change on the way.
    let mut p = shuttle_before_the_third(Repetition::DefendersLose);
    let v = p.variant().clone();
    let drawn = std::sync::Arc::new(v.with_rules(tafl_rules::RuleSet { repetition: Repetition::Draw, ..v.rules.clone() }).unwrap());
    let mut q = p.reread(&drawn).expect("only the repetition rule differs");
    assert_eq!((q.ply(), q.to_move(), q.repetitions(), q.pieces()), (p.ply(), p.to_move(), p.repetitions(), p.pieces()));
    assert_eq!(q.hash(), q.compute_hash());
    assert_ne!(q.hash(), p.hash(), "the hash carries the rules' fingerprint");
    play(&mut q, "b5-b6");
    play(&mut p, "b5-b6");
    assert_eq!((p.outcome(), q.outcome()), (win(Side::Attackers, Reason::Repetition), draw(Reason::Repetition)));
    let walled =
        std::sync::Arc::new(v.with_rules(tafl_rules::RuleSet { repetition: Repetition::Draw, shieldwall: !v.rules.shieldwall, ..v.rules.clone() }).unwrap());
    assert!(p.reread(&walled).is_none(), "a change beyond the repetition rule is refused");
}

#[test]
fn repetition_ignored() {
    assert_eq!(repetition_game(Repetition::None), (None, None));
}

#[test]
fn a_capture_resets_repetition() {
    let v = variant("brandubh");
    let mut p = board(
        &v,
        "
        + . . . . . +
        . a . . . . .
        . . . . . . .
        . . . k . . .
        . . . . . . .
        . . . . . d .
        + . . . . . +",
        Side::Defenders,
    );
    play_all(&mut p, "f2-f3 b6-b5 f3-f2 b5-b6");
    assert_eq!(p.repetitions(), 2);
}

// ----- no legal move, escape, ply cap -----------------------------------------------------

const ATTACKER_ABOUT_TO_BE_STUCK: &str = "
    + a d . . . +
    . . . . . . .
    . . . . . . .
    . . . k . . .
    . d . . . . .
    . . . . . . .
    + . . . . . +";

#[test]
fn a_side_without_moves_loses() {
    let mut p = board(&variant("brandubh"), ATTACKER_ABOUT_TO_BE_STUCK, Side::Defenders);
    play(&mut p, "b3-b6");
    assert_eq!(p.outcome(), win(Side::Defenders, Reason::NoMoves));
    assert!(p.legal_moves().is_empty());
}

#[test]
fn blocking_the_square_both_last_movable_pieces_need_wins() {
    // b7 and a6 can each step only to b6 (a7 is a corner, c7 and a5 are held).
    let mut p = board(
        &variant("brandubh"),
        "
        + a d . . . +
        a . . . . . .
        d . . . . . .
        . . . k . . .
        . d . . . . .
        . . . . . . .
        + . . . . . +",
        Side::Defenders,
    );
    play(&mut p, "b3-b6");
    assert_eq!(p.outcome(), win(Side::Defenders, Reason::NoMoves));
}

#[test]
fn a_shieldwall_bracketed_by_a_corner_can_take_the_last_movable_pieces() {
    // Every piece may stop on a corner: b1 can step to a1 and c1 to d1, and nothing else of
    // the defenders can move. f1-d1 brackets b1 and c1 against the empty corner.
    let v = variant_with("brandubh", |r| {
        r.shieldwall = true;
        r.corners.stop = Who::All;
    });
    let mut p = board(
        &v,
        "
        + . a k d a +
        . . . a a . .
        . . . . . . .
        . . . + . . .
        . . . . . . .
        . a a . . . .
        + d d . . a +",
        Side::Attackers,
    );
    assert_eq!(play(&mut p, "f1-d1"), ["b1", "c1"]);
    assert_eq!(p.outcome(), win(Side::Attackers, Reason::NoMoves));
}

#[test]
fn no_moves_is_a_draw_where_the_rules_say_so() {
    let v = variant_with("brandubh", |r| r.no_moves = NoMoves::Draw);
    let mut p = board(&v, ATTACKER_ABOUT_TO_BE_STUCK, Side::Defenders);
    play(&mut p, "b3-b6");
    assert_eq!(p.outcome(), draw(Reason::NoMoves));
}

#[test]
fn king_escapes_to_a_corner_but_not_to_another_edge_square() {
    let v = variant("brandubh");
    let b = "
        + . . . . . +
        . . . . . . .
        . . . . . . .
        . . . + . . a
        k . . . . . .
        . . . . . . .
        + . . . . . +";
    let mut p = board(&v, b, Side::Defenders);
    play(&mut p, "a3-a2");
    assert_eq!(p.outcome(), None);
    let mut p = board(&v, b, Side::Defenders);
    play(&mut p, "a3-a1");
    assert_eq!(p.outcome(), win(Side::Defenders, Reason::CornerEscape));
}

#[test]
fn king_escapes_to_any_edge_square_in_edge_variants() {
    let mut p = board(
        &variant("tablut-linnaeus"),
        "
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . a . . . .
        . . . . + . . . .
        . . . . . . . . .
        . . . . k . . . .
        . . . . . . . . .
        . . . . . . . . .",
        Side::Defenders,
    );
    play(&mut p, "e3-e1");
    assert_eq!(p.outcome(), win(Side::Defenders, Reason::EdgeEscape));
}

#[test]
fn the_ply_cap_adjudicates_a_draw() {
    let v = variant_with("brandubh", |r| r.ply_cap = 4);
    let mut p = tafl_rules::Position::start(v);
    play_all(&mut p, "a4-a5 c4-c5 a5-a4");
    assert_eq!(p.outcome(), None);
    play(&mut p, "c5-c4");
    assert_eq!(p.outcome(), draw(Reason::PlyCap));
}

// ----- Alea Evangelii and throne-less variants ----------------------------------------------

#[test]
fn alea_evangelii_corner_blocks_admit_only_the_king_who_escapes_there() {
    let v = variant("alea-evangelii");
    let p = sparse(&v, &[("c2", 'k'), ("c1", 'a'), ("h10", 'a'), ("q18", 'd')], Side::Attackers);
    assert!(!legal(&p, "c1-b1"), "b1 belongs to the a1 corner block");
    assert!(!legal(&p, "c1-a1"));
    assert!(!legal(&p, "h10-j10"), "nobody stops on the throne");
    assert!(legal(&p, "h10-k10"), "everybody passes it");
    let mut p = p;
    play(&mut p, "h10-h11");
    assert!(!legal(&p, "q18-r18"), "a defender may not enter a corner block");
    play(&mut p, "c2-b2");
    assert_eq!(p.outcome(), win(Side::Defenders, Reason::CornerEscape));
}

#[test]
fn without_a_throne_the_centre_is_an_ordinary_square_tawlbwrdd() {
    let v = variant("tawlbwrdd");
    let mut p = board(
        &v,
        "
        . . . . . . . . . . .
        . . . . . . . . . . .
        . . . . . . . . . . .
        . . . . . k . . . . .
        . . . . . . . . . . .
        . a . . . . . . . . .
        . . . . . . . . . . .
        . . . . . . . . . . .
        . . . . . . . . . . .
        . . . d . . . . . . .
        . . . . . . . . . . .",
        Side::Attackers,
    );
    assert!(legal(&p, "b6-f6"), "an attacker may stop on the centre");
    play(&mut p, "b6-e6");
    assert_eq!(play(&mut p, "d2-d6"), Vec::<String>::new(), "the empty centre f6 is not hostile");
}
