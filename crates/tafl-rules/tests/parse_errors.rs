//! The one parse error type: every parser of outside text says what it was reading
//! ([`ParseKind`]), keeps the input, and names it (or the offending part) in a one-line message.

use std::sync::Arc;
use tafl_rules::error::MAX_INPUT_CHARS;
use tafl_rules::notation::{parse_move, parse_position, parse_position_string, parse_rules_string, rules_string};
use tafl_rules::ruleset::{CornerKind, Escape, When};
use tafl_rules::variant::parse_layout;
use tafl_rules::{Geometry, InexpressibleRules, Move, ParseError, ParseKind, SetupError, Side, Square, Variant};

const BRANDUBH: &str = "/3t3/3t3/3T3/ttTKTtt/3T3/3t3/3t3/";

/// Asserts the kind, that `input` was kept, and that the message is one line containing
/// `needle`.
fn check(e: &ParseError, kind: ParseKind, input: &str, needle: &str) {
    assert_eq!(e.kind, kind, "{e}");
    assert_eq!(e.input, input, "{e}");
    let shown = e.to_string();
    assert_eq!(shown, e.message);
    assert!(!shown.contains('\n'), "one line: {shown}");
    assert!(shown.contains(needle), "{shown} should name {needle}");
}

fn brandubh_geometry() -> Geometry {
    Geometry::new(7).unwrap()
}

#[test]
fn squares_and_board_sizes() {
    let e = "z99".parse::<Square>().unwrap_err();
    check(&e, ParseKind::Square, "z99", "bad square `z99`");
    let e = brandubh_geometry().parse_square("h1").unwrap_err();
    check(&e, ParseKind::Square, "h1", "square h1 is off the 7x7 board");
    let e = Geometry::new(8).unwrap_err();
    check(&e, ParseKind::BoardSize, "8", "board size 8 is even");
    let e = Geometry::new(21).unwrap_err();
    check(&e, ParseKind::BoardSize, "21", "board size 21");
}

#[test]
fn sides() {
    let e = "north".parse::<Side>().unwrap_err();
    check(&e, ParseKind::Side, "north", "bad side `north`");
}

#[test]
fn moves_name_the_record() {
    let g = brandubh_geometry();
    for (bad, needle) in
        [("d1-e2", "one rank or file"), ("d1d3", "expected from-to"), ("d1-h1", "h1"), ("d1^d3", "berserk"), ("---", "resignation"), ("d1-d3xq9", "q9")]
    {
        let e = parse_move(bad, g).unwrap_err();
        check(&e, ParseKind::Move, bad, &format!("bad move `{bad}`"));
        assert!(e.message.contains(needle), "{e}");
    }
    let e = Move::parse("d1-e2", g).unwrap_err();
    check(&e, ParseKind::Move, "d1-e2", "d1-e2");
}

#[test]
fn position_strings_and_layouts() {
    let bad = "/3x3/3t3/3T3/ttTKTtt/3T3/3t3/3t3/";
    let e = parse_position_string(bad).unwrap_err();
    check(&e, ParseKind::Position, bad, "`x`");
    assert!(e.message.contains(bad), "{e}");
    // Parsing and validating: syntax errors carry the parse error, rule errors their own enum.
    let v = Arc::new(Variant::preset("brandubh").expect("preset"));
    match parse_position(v.clone(), bad, Side::Attackers) {
        Err(SetupError::Syntax(inner)) => assert_eq!(inner, e),
        other => panic!("expected a syntax error, got {other:?}"),
    }
    let two_kings = "/3t3/3t3/3T3/ttKKTtt/3T3/3t3/3t3/";
    assert!(matches!(parse_position(v, two_kings, Side::Attackers), Err(SetupError::KingCount(2))));

    let ragged = "...a...\n...a..\n";
    let e = parse_layout(ragged).unwrap_err();
    check(&e, ParseKind::Layout, ragged, "2 rows");
    let bad_char = "...a...\n...a...\n...d...\naadkdax\n...d...\n...a...\n...a...\n";
    let e = parse_layout(bad_char).unwrap_err();
    check(&e, ParseKind::Layout, bad_char, "`x`");
}

#[test]
fn rules_strings_name_the_key() {
    let s = format!("dim:7 ber:c start:{BRANDUBH}");
    let e = parse_rules_string(&s).unwrap_err();
    check(&e, ParseKind::RulesString, &s, "ber:c");
    let s = format!("dim:9 start:{BRANDUBH}");
    check(&parse_rules_string(&s).unwrap_err(), ParseKind::RulesString, &s, "dim:9");
    let s = "dim:7 start:/3t3/".to_string();
    check(&parse_rules_string(&s).unwrap_err(), ParseKind::RulesString, &s, "start");
    // Through a variant spec: the same kind, the source named in front.
    let s = format!("dim:7 sw:w start:{BRANDUBH}");
    let e = Variant::from_spec(&s).unwrap_err();
    check(&e, ParseKind::RulesString, &s, "OpenTafl rules string: sw:w");
}

#[test]
fn variants_name_their_origin() {
    let e = Variant::from_spec("brandub").unwrap_err();
    check(&e, ParseKind::Variant, "brandub", "brandub: unknown variant");
    let e = Variant::from_spec("/no/such/file.toml").unwrap_err();
    check(&e, ParseKind::Variant, "/no/such/file.toml", "cannot read");
    let e = Variant::from_toml_str("base = \"brandubh\"\ncolour = 1\n", "bad.toml").unwrap_err();
    check(&e, ParseKind::Variant, "bad.toml", "bad.toml: unknown key `colour`");
    // Rules and a layout that do not fit together; the input is the variant's name.
    let b = Variant::preset("brandubh").expect("preset");
    let mut r = b.rules.clone();
    r.escape = Escape::Corners;
    r.corners.kind = CornerKind::None;
    let e = b.with_rules(r.clone()).unwrap_err();
    check(&e, ParseKind::Variant, "brandubh", "needs corner squares");
    let e = Variant::new("nameless", r, b.geometry, b.layout.clone()).unwrap_err();
    check(&e, ParseKind::Variant, "nameless", "needs corner squares");
}

#[test]
fn long_inputs_are_cut_but_messages_stay_one_line() {
    let long = format!("d1-{}", "9".repeat(1000));
    let e = parse_move(&long, brandubh_geometry()).unwrap_err();
    assert_eq!(e.kind, ParseKind::Move);
    assert_eq!(e.input.chars().count(), MAX_INPUT_CHARS + 1, "{}", e.input);
    assert!(e.input.ends_with('…') && long.starts_with(e.input.trim_end_matches('…')));
    assert!(!e.message.contains('\n'));
    // Cutting respects characters, not bytes.
    let wide = "ä".repeat(MAX_INPUT_CHARS + 5);
    let e = wide.parse::<Square>().unwrap_err();
    assert_eq!(e.input.chars().count(), MAX_INPUT_CHARS + 1);
}

#[test]
fn errors_are_std_errors_and_strings() {
    fn is_error<E: std::error::Error + Send + Sync + 'static>(_: &E) {}
    let e = Geometry::new(5).unwrap_err();
    is_error(&e);
    let shown = e.to_string();
    assert_eq!(String::from(e), shown);
}

#[test]
fn rules_opentafl_cannot_write_get_their_own_error() {
    let v = Variant::preset("brandubh").expect("preset");
    let mut r = v.rules.clone();
    r.corners.hostile_to_defenders = When::WhenEmpty;
    let e = rules_string(&v.with_rules(r).unwrap()).unwrap_err();
    assert_eq!(e, InexpressibleRules::CornersHostileWhenEmpty);
    assert!(e.to_string().contains("corners"), "{e}");
}
