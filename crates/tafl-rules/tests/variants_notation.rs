//! Variant files, OpenTafl notation, and the errors bad input gets.

mod common;
use common::*;
use std::sync::Arc;
use tafl_rules::notation::{parse_move, parse_position, parse_rules_string, position_string, rules_string};
use tafl_rules::ruleset::{KingArmed, KingOnEdge, KingStrength, Repetition, Speed, When};
use tafl_rules::variant::PRESETS;
use tafl_rules::{Position, SetupError, Side, Variant};

#[test]
fn every_preset_loads_and_round_trips_through_toml() {
    assert_eq!(PRESETS.len(), 14);
    for (name, _) in PRESETS {
        let v = Variant::preset(name).expect("preset");
        assert_eq!(v.name, *name);
        let back = Variant::from_toml_str(&v.to_toml(), "round-trip").unwrap();
        assert_eq!(back, v, "{name}");
        assert_eq!(back.rules_fingerprint(), v.rules_fingerprint());
    }
}

#[test]
fn preset_fingerprints_differ_where_rules_differ() {
    let f = |n| Variant::preset(n).expect("preset").rules_fingerprint();
    assert_eq!(f("copenhagen"), f("copenhagen-13"), "same rules, other board");
    assert_ne!(f("copenhagen"), f("fetlar"));
    assert_ne!(f("brandubh"), f("magpie"));
}

#[test]
fn a_file_can_take_a_presets_rules_and_its_own_layout() {
    let text = r#"
name = "copenhagen-9"
base = "copenhagen"
layout = """
...aaa...
....a....
....d....
a...d...a
aaddkddaa
a...d...a
....d....
....a....
...aaa...
"""
"#;
    let v = Variant::from_toml_str(text, "copenhagen-9.toml").unwrap();
    assert_eq!(v.geometry.size(), 9);
    assert_eq!(v.rules, Variant::preset("copenhagen").expect("preset").rules);
    assert_eq!(Position::start(Arc::new(v)).legal_moves().len(), Position::start(variant("tablut")).legal_moves().len());
}

#[test]
fn a_file_can_change_one_rule_of_a_preset() {
    let text = "base = \"copenhagen\"\n[rules]\nshieldwall = false\n[rules.throne]\nstop = \"nobody\"\n";
    let v = Variant::from_toml_str(text, "x.toml").unwrap();
    let mut expected = Variant::preset("copenhagen").expect("preset").rules;
    expected.shieldwall = false;
    expected.throne.stop = tafl_rules::ruleset::Who::Nobody;
    assert_eq!(v.rules, expected);
    assert_eq!(v.geometry.size(), 11, "layout comes from the base");
}

#[test]
fn overrides_change_single_rules() {
    let text = PRESETS.iter().find(|(n, _)| *n == "brandubh").unwrap().1;
    let v = Variant::from_toml_with_overrides(text, "brandubh", &["king_strength=strong".into(), "speed.king=2".into()]).unwrap();
    assert_eq!(v.rules.king_strength, KingStrength::Strong);
    assert_eq!(v.rules.speed.king, 2);
    let e = Variant::from_toml_with_overrides(text, "brandubh", &["king_strenght=strong".into()]).unwrap_err();
    assert!(e.to_string().contains("unknown rule `king_strenght`"), "{e}");
}

fn load_err(text: &str) -> String {
    let e = Variant::from_toml_str(text, "bad.toml").unwrap_err().to_string();
    assert!(!e.contains('\n'), "errors are one line: {e}");
    assert!(e.starts_with("bad.toml: "), "errors name the file: {e}");
    e
}

#[test]
fn bad_variant_files_get_one_line_errors_naming_the_problem() {
    let e = load_err("name = \"x\"\nlayout = \"\"\"\n...\n\"\"\"\n[rules\n");
    assert!(e.contains("line 5"), "{e}");
    let e = load_err("base = \"brandubh\"\ncolour = \"red\"\n");
    assert!(e.contains("unknown key `colour`"), "{e}");
    let e = load_err("base = \"brandubh\"\n[rules]\nsheildwall = true\n");
    assert!(e.contains("sheildwall"), "{e}");
    let e = load_err("base = \"brandubh\"\n[rules]\nking_strength = \"mighty\"\n");
    assert!(e.contains("mighty"), "{e}");
    let e = load_err("base = \"nonesuch\"\n");
    assert!(e.contains("unknown preset `nonesuch`"), "{e}");
    let e = load_err("[rules]\nshieldwall = true\n");
    assert!(e.contains("missing `layout`"), "{e}");
}

fn layout_err(layout: &str) -> String {
    load_err(&format!("base = \"brandubh\"\nlayout = \"\"\"\n{layout}\"\"\"\n"))
}

#[test]
fn bad_layouts_are_refused() {
    let e = layout_err("...a...\n...a..\n...d...\naadkdaa\n...d...\n...a...\n...a...\n");
    assert!(e.contains("row 2") && e.contains("6 squares"), "{e}");
    let e = layout_err("..a...\n..a...\n..d...\nadkdaa\n..d...\n..a...\n");
    assert!(e.contains("board size 6"), "{e}");
    let e = layout_err("...a...\n...a...\n...d...\naadddaa\n...d...\n...a...\n...a...\n");
    assert!(e.contains("exactly one king, found 0"), "{e}");
    let e = layout_err("...a...\n...a...\n...d...\naakkdaa\n...d...\n...a...\n...a...\n");
    assert!(e.contains("found 2"), "{e}");
    let e = layout_err("a..a...\n...a...\n...d...\naadkdaa\n...d...\n...a...\n...a...\n");
    assert!(e.contains("a7") && e.contains("restricted"), "{e}");
    let e = layout_err("...a...\n...a...\n...d...\naadkdax\n...d...\n...a...\n...a...\n");
    assert!(e.contains('x'), "{e}");
}

#[test]
fn unknown_variant_names_list_the_presets() {
    let e = Variant::from_spec("brandub").unwrap_err().to_string();
    assert!(e.contains("unknown variant") && e.contains("brandubh"), "{e}");
    let e = Variant::from_spec("/no/such/file.toml").unwrap_err().to_string();
    assert!(e.contains("cannot read"), "{e}");
}

const CPH_START: &str = "/3ttttt3/5t5/11/t4T4t/t3TTT3t/tt1TTKTT1tt/t3TTT3t/t4T4t/11/5t5/3ttttt3/";

#[test]
fn opentafl_rules_strings_load_as_variants() {
    let v = parse_rules_string(&format!("dim:11 name:copenhagen sw:s efe:y tfr:dl start:{CPH_START}")).unwrap();
    let cph = Variant::preset("copenhagen").expect("preset");
    assert_eq!(v.rules, cph.rules);
    assert_eq!(v.layout, cph.layout);
    // The spec's Brandubh example: `ks:n` is `ks:w` (weak everywhere), the throne hostile to nobody.
    let b = Variant::from_spec("dim:7 ks:n cenhe: cenh: start:/3t3/3t3/3T3/ttTKTtt/3T3/3t3/3t3/").unwrap();
    assert_eq!(b.rules.king_strength, KingStrength::WeakEverywhere);
    assert_eq!(b.rules.throne.hostile_to_defenders, tafl_rules::ruleset::When::Never);
    assert_eq!(Position::start(Arc::new(b)).legal_moves().len(), 40);
    let t = Variant::from_spec(&format!("dim:11 atkf:n esc:e surf:n tfr:l start:{CPH_START}")).unwrap();
    assert_eq!(t.rules.first, Side::Defenders);
    assert!(!t.rules.encirclement);
}

#[test]
fn bad_opentafl_rules_strings_are_refused_with_the_key() {
    for (s, needle) in [
        (format!("dim:11 ber:c start:{CPH_START}"), "ber:c"),
        (format!("dim:11 frobnicate:y start:{CPH_START}"), "frobnicate"),
        (format!("dim:9 start:{CPH_START}"), "dim:9"),
        ("dim:7 start:/3t3/".to_string(), "start"),
        (format!("dim:11 sw:w start:{CPH_START}"), "sw:w"),
    ] {
        let e = Variant::from_spec(&s).unwrap_err().to_string();
        assert!(e.contains(needle), "{s}: {e}");
    }
}

#[test]
fn position_strings_round_trip_and_list_rank_one_first() {
    let p = Position::start(variant("brandubh"));
    assert_eq!(position_string(&p), "/3t3/3t3/3T3/ttTKTtt/3T3/3t3/3t3/");
    let q = parse_position(variant("brandubh"), "/3t3/7/3T3/ttTKTtt/3T3/3t3/3t3/", Side::Defenders).unwrap();
    assert_eq!(q.piece_at("d2".parse().unwrap()), None, "the second row is rank 2");
    assert_eq!(q.to_move(), Side::Defenders);
    assert_eq!(position_string(&q), "/3t3/7/3T3/ttTKTtt/3T3/3t3/3t3/");
}

#[test]
fn bad_position_strings_are_refused() {
    let v = variant("brandubh");
    let cases = [
        ("3t3/3t3/3T3/ttTKTtt/3T3/3t3/3t3/", "start and end"),
        ("/3t3/3t3/3T3/ttTKTtt/3T3/3t3/", "board size 6"),
        ("/3t4/3t3/3T3/ttTKTtt/3T3/3t3/3t3/", "row 1 has 8"),
        ("/3x3/3t3/3T3/ttTKTtt/3T3/3t3/3t3/", "`x`"),
        ("/3t3/3t3/3T3/ttTTTtt/3T3/3t3/3t3/", "found 0"),
        ("/3t3/3t3/3T3/ttKKTtt/3T3/3t3/3t3/", "found 2"),
        ("t6/3t3/3T3/ttTKTtt/3T3/3t3/3t3/", "start and end"),
        ("/t6/3t3/3T3/ttTKTtt/3T3/3t3/3t3/", "restricted"),
        ("/11/11/11/11/11/11/11/11/11/11/11/", "11x11"),
    ];
    for (s, needle) in cases {
        let e = parse_position(v.clone(), s, Side::Attackers).unwrap_err().to_string();
        assert!(e.contains(needle), "{s}: {e}");
    }
    assert!(matches!(parse_position(v, "/3t3/3t3/3T3/ttTTTtt/3T3/3t3/3t3/", Side::Attackers), Err(SetupError::KingCount(0))));
}

#[test]
fn move_records_parse_with_captures_and_info_symbols() {
    let g = tafl_rules::Geometry::new(11).unwrap();
    let r = parse_move("d1-d3", g).unwrap();
    assert_eq!((r.mv.to_string(), r.captures), ("d1-d3".to_string(), None));
    let r = parse_move("g3-e3xe2/f3", g).unwrap();
    assert_eq!(r.captures.unwrap().iter().map(|s| s.to_string()).collect::<Vec<_>>(), ["e2", "f3"]);
    assert_eq!(parse_move("Ke5-e1-", g).unwrap().mv.to_string(), "e5-e1");
    assert_eq!(parse_move("e3-e4++", g).unwrap().mv.to_string(), "e3-e4");
    assert_eq!(parse_move("Ke1-a1--", g).unwrap().mv.to_string(), "e1-a1");
    assert_eq!(parse_move("a10-k10", g).unwrap().mv.to_string(), "a10-k10");
    for bad in ["d1-e2", "d1d3", "z1-z3", "d1-d12", "---", "d1^d3", "", "d1-d3xq9"] {
        assert!(parse_move(bad, g).is_err(), "{bad} should be refused");
    }
}

#[test]
fn playing_an_illegal_move_is_an_error_not_a_panic() {
    let mut p = Position::start(variant("brandubh"));
    assert!(p.play(mv(&p, "d4-d7")).is_err(), "the king cannot jump");
    assert!(p.play(mv(&p, "d5-d6")).is_err(), "not the defenders' turn");
    assert!(p.play(mv(&p, "a4-a7")).is_err(), "corner");
    assert_eq!(p.ply(), 0);
}

#[test]
fn every_preset_round_trips_through_an_opentafl_rules_string() {
    for (name, _) in PRESETS {
        let v = Variant::preset(name).expect("preset");
        let s = rules_string(&v).unwrap();
        let back = parse_rules_string(&s).unwrap_or_else(|e| panic!("{name}: {e}\n{s}"));
        assert_eq!(back.rules, v.rules, "{name}: {s}");
        assert_eq!(back.layout, v.layout, "{name}");
        assert_eq!(back.name, *name);
    }
}

#[test]
fn rules_opentafl_cannot_express_are_refused_when_writing() {
    // A king strong beside a throne never hostile to defenders: OpenTafl would not count the
    // throne against him, tafl-lab does.
    let v = Variant::preset("brandubh").expect("preset");
    let mut r = v.rules.clone();
    r.throne.hostile_to_defenders = When::Never;
    let e = rules_string(&v.with_rules(r).unwrap()).unwrap_err().to_string();
    assert!(e.contains("throne"), "{e}");
    // And read: OpenTafl's Tablut (a `ks:c` king, `cenhe:` without defenders) is refused for it.
    let s = format!("dim:9 esc:e ks:c cenh: cenhe:tcnk start:{TABLUT_START}");
    let e = parse_rules_string(&s).unwrap_err().to_string();
    assert!(e.contains("cenhe:tcnk"), "{e}");
}

const TABLUT_START: &str = "/3ttt3/4t4/4T4/t3T3t/ttTTKTTtt/t3T3t/4T4/4t4/3ttt3/";
const BRANDUB_START: &str = "/3t3/3t3/3T3/ttTKTtt/3T3/3t3/3t3/";

/// The strings OpenTafl 0.4.8 itself sends for its built-in variants (`rules` over OTEP).
#[test]
fn opentafl_builtin_rules_strings_load_as_opentafl_plays_them() {
    let b = parse_rules_string(&format!("dim:7 name:Brandub surf:n atkf:y ks:w cenh: cenhe: start:{BRANDUB_START}")).unwrap();
    assert_eq!(b.rules.king_strength, KingStrength::WeakEverywhere);
    assert_eq!((b.rules.throne.hostile_to_attackers, b.rules.throne.hostile_to_defenders), (When::Never, When::Never));
    assert!(!b.rules.encirclement);
    assert_eq!(b.rules.repetition, Repetition::Draw, "no tfr: is a draw");
    let c = parse_rules_string(&format!("dim:11 name:Copenhagen atkf:y tfr:w sw:s efe:y start:{CPH_START}")).unwrap();
    assert_eq!(c.rules.repetition, Repetition::MoverLoses, "OpenTafl's tfr:w: the mover loses");
    assert_eq!((c.rules.king_strength, c.rules.king_on_edge), (KingStrength::Strong, KingOnEdge::Safe));
    assert!(c.rules.shieldwall && c.rules.exit_fort);
    let m =
        parse_rules_string("dim:7 name:Magpie surf:n atkf:y ks:m spd:-1,-1,-1,-1,-1,-1,-1,-1,-1,1,-1,-1, start:/3t3/1t3t1/3T3/t1TKT1t/3T3/1t3t1/3t3/").unwrap();
    assert_eq!((m.rules.king_strength, m.rules.king_on_edge), (KingStrength::Strong, KingOnEdge::EdgeCounts));
    assert_eq!((m.rules.speed.king, m.rules.speed.others), (1, 0));
    let berserk = format!("dim:11 name:Berserk surf:n atkf:n tfr:l kj:r ber:c start:{CPH_START}");
    assert!(parse_rules_string(&berserk).unwrap_err().to_string().contains("kj:r"));
    let tablut = format!("dim:9 name:Tablut esc:e atkf:y ks:c nj:n cor: cenp:tcnkTCNK cens: cenh: cenhe:tcnkTCNK linc:y start:{TABLUT_START}");
    assert!(parse_rules_string(&tablut).unwrap_err().to_string().contains("linc:y"));
}

#[test]
fn opentafl_rules_values_map_both_ways() {
    let b = Variant::preset("brandubh").expect("preset");
    let with = |change: &dyn Fn(&mut tafl_rules::RuleSet)| {
        let mut r = b.rules.clone();
        change(&mut r);
        b.with_rules(r).unwrap()
    };
    for (variant, key) in [
        (with(&|r| r.repetition = Repetition::MoverLoses), "tfr:w"),
        (with(&|r| r.repetition = Repetition::MoverWins), "tfr:l"),
        (with(&|r| r.repetition = Repetition::DefendersLose), "tfr:dl"),
        (with(&|r| r.repetition = Repetition::None), "tfr:i"),
        (with(&|r| r.king_strength = KingStrength::Weak), "ks:c"),
        (with(&|r| r.king_strength = KingStrength::WeakEverywhere), "ks:w"),
        (with(&|r| r.king_strength = KingStrength::Strong), "ks:s"),
        (with(&|r| (r.king_strength, r.king_on_edge) = (KingStrength::Strong, KingOnEdge::EdgeCounts)), "ks:m"),
        (with(&|r| (r.king_strength, r.king_on_edge) = (KingStrength::Weak, KingOnEdge::EdgeCounts)), "ke:y"),
        (with(&|r| r.king_armed = KingArmed::Hammer), "ka:h"),
        (with(&|r| r.king_armed = KingArmed::Anvil), "ka:a"),
        (with(&|r| r.king_armed = KingArmed::No), "ka:n"),
        (with(&|r| r.speed = Speed { king: 2, others: 2 }), "spd:2 "),
        (with(&|r| r.speed = Speed { king: 0, others: 3 }), "spd:3,3,3,3,3,3,3,3,3,-1,3,3 "),
    ] {
        let s = rules_string(&variant).unwrap();
        assert!(s.contains(key), "{key}: {s}");
        assert_eq!(parse_rules_string(&s).unwrap().rules, variant.rules, "{s}");
    }
    // The old spellings and forms OpenTafl reads too.
    let read = |extra: &str| parse_rules_string(&format!("dim:7 {extra} start:{BRANDUB_START}")).map(|v| v.rules);
    assert_eq!(read("ks:y").unwrap().king_strength, KingStrength::Strong);
    assert_eq!(read("ks:n").unwrap().king_strength, KingStrength::WeakEverywhere);
    assert_eq!(read("ke:y ks:s").unwrap().king_on_edge, KingOnEdge::EdgeCounts, "ke: refines ks: in any order");
    assert_eq!(read("spd:-1").unwrap().speed, Speed::default());
    assert_eq!(read("kspd:1 spd:2").unwrap().speed, Speed { king: 1, others: 2 });
    assert_eq!(read("spd:1,1,1,1,1,1,1,1,1,1").unwrap().speed, Speed { king: 1, others: 1 }, "10 numbers");
    for (bad, needle) in [("spd:3,4,", "per side"), ("spd:0", "-1 for none"), ("spd:2,2,2,2,3,3,3,3", "one speed"), ("ks:x", "ks:x")] {
        let e = read(bad).unwrap_err().to_string();
        assert!(e.contains(needle), "{bad}: {e}");
    }
    let inverted = parse_rules_string("dim:7 starti:/3t3/3t3/3T3/ttTKTtt/3T3/3t3/2T1t2/").unwrap();
    let upright = parse_rules_string("dim:7 start:/2T1t2/3t3/3T3/ttTKTtt/3T3/3t3/3t3/").unwrap();
    assert_eq!(inverted.layout, upright.layout, "starti: lists the top rank first");
}
