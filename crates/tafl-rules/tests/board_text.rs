//! `Position::board`: the one board renderer, with the last move marked.

use std::sync::Arc;
use tafl_rules::{notation, Position, Variant};

#[test]
fn the_board_marks_the_last_move_and_display_adds_the_status() {
    let mut pos = Position::start(Arc::new(Variant::preset("brandubh").expect("preset")));
    let mv = notation::parse_move("d2-b2", pos.geometry()).unwrap().mv;
    pos.play(mv).unwrap();
    let marked = pos.board(Some(mv)).to_string();
    let rows: Vec<&str> = marked.lines().collect();
    assert_eq!(rows.len(), 9, "files, 7 ranks, files:\n{marked}");
    assert_eq!(rows[0], "    a b c d e f g");
    // Rank 2 (second row from the bottom): the attacker now on b2 in upper case, d2 left empty.
    assert_eq!(rows[6], "  2 . A . * . . . 2", "{marked}");
    assert_eq!(rows[4], "  4 a a d k d a a 4", "{marked}");
    // Unmarked: the same board with lower case and no star; Display adds one status line.
    let plain = pos.board(None).to_string();
    assert_eq!(plain.lines().nth(6), Some("  2 . a . . . . . 2"));
    let shown = pos.to_string();
    assert!(shown.starts_with(&plain), "{shown}");
    assert_eq!(shown.lines().count(), 10);
    assert!(shown.lines().last().unwrap().contains("to move"), "{shown}");
}
