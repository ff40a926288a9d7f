//! The OpenTafl Engine Protocol engine on hostile input (clock and analyze numbers that are not
//! finite or are negative, `play` for a side that has no legal move: every case answers with an
//! `error 0` line and leaves the engine able to go on), and on what OpenTafl 0.4.8 really sends:
//! clocks in milliseconds with `*` for overtime, `move <position>` after an accepted move,
//! `error 1-4` after a refused one, `opponent-move` with a `|` list, `side` before `analyze`, and
//! rules the engine cannot play. A line that is not UTF-8, piped into the engine program, is
//! answered `error 0` and the next command is answered.

use crate::common;

use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;
use tafl_lab::arena::{Agent, AgentSpec};
use tafl_lab::engine::{Engine, EngineConfig, TimeControl};
use tafl_lab::rules::notation::{parse_move, parse_position, position_string, rules_string};
use tafl_lab::rules::{Position, Side, Variant};

fn engine(agent: &str) -> Engine {
    let variant = Arc::new(Variant::preset("brandubh").expect("preset"));
    Engine::new(EngineConfig { agent: agent.parse().unwrap(), variant, time: TimeControl::Simulations, seed: 7 }).unwrap()
}

/// One reply line, asserted.
fn one(e: &mut Engine, line: &str) -> String {
    let r = e.handle(line);
    assert_eq!(r.len(), 1, "{line:?} -> {r:?}");
    r.into_iter().next().unwrap()
}

const AGENTS: [&str; 2] = ["random", "mcts:sims=8"];

#[test]
fn clock_with_nan_or_negative_numbers_is_refused_and_play_goes_on() {
    for agent in AGENTS {
        for bad in [
            "clock nan 5",
            "clock 5 NaN",
            "clock 10 10 nan 1 1",
            "clock 10 10 5 nan 1",
            "clock inf 5",
            "clock 10 10 -inf 1 1",
            "clock -1 5",
            "clock 5 -0.5",
            "clock 10 10 5 -1 1",
        ] {
            let mut e = engine(agent);
            let r = one(&mut e, bad);
            assert!(r.starts_with("error 0 "), "{agent}: {bad:?} -> {r}");
            // The bad clock is not kept: both sides can still be asked to move.
            assert!(one(&mut e, "play attackers").starts_with("move "), "{agent}: play after {bad:?}");
            assert!(one(&mut e, "play defenders").starts_with("move "), "{agent}: play after {bad:?}");
        }
        // A good clock after a bad one is used.
        let mut e = engine(agent);
        assert!(one(&mut e, "clock nan 5").starts_with("error 0 "));
        assert!(e.handle("clock 1 1 0 0 0").is_empty());
        assert!(one(&mut e, "play attackers").starts_with("move "));
    }
}

#[test]
fn analyze_with_nan_seconds_is_refused_at_once() {
    // Before the fix `analyze 3 nan` searched for ten minutes: run it on a thread and give it
    // far less than that.
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut e = engine("mcts:sims=8");
        let mut replies = Vec::new();
        for line in ["analyze 3 nan", "analyze nan 1", "analyze 3 inf", "analyze 3 -1", "analyze -inf 1", "analyze 3 0.05 7", "analyze 3 0.05"] {
            replies.push((line, e.handle(line)));
        }
        tx.send(replies).unwrap();
    });
    let replies = rx.recv_timeout(Duration::from_secs(60)).expect("the engine answered within a minute");
    for (line, r) in &replies[..replies.len() - 1] {
        assert_eq!(r.len(), 1, "{line:?} -> {r:?}");
        assert!(r[0].starts_with("error 0 "), "{line:?} -> {r:?}");
    }
    let (_, last) = replies.last().unwrap();
    assert!(last[0].starts_with("analysis "), "a good analyze still works: {last:?}");
}

/// Brandubh without encirclement, so a boxed-in king is not already a lost game.
fn open_rules() -> String {
    let s = rules_string(&Variant::preset("brandubh").expect("preset")).unwrap();
    assert!(s.contains("surf:y"), "{s}");
    s.replace("surf:y", "surf:n")
}

/// The king alone on the throne, an attacker on each side of it: the defenders have no move.
const BOXED: &str = "/7/7/3t3/2tKt2/3t3/7/7/";

#[test]
fn play_for_a_side_without_a_legal_move_is_an_error_not_a_panic() {
    for agent in AGENTS {
        let mut e = engine(agent);
        assert!(e.handle(&format!("rules {}", open_rules())).is_empty());
        assert!(e.handle(&format!("position {BOXED}")).is_empty(), "the attackers are to move and have moves");
        let r = one(&mut e, "play defenders");
        assert!(r.starts_with("error 0 "), "{agent}: {r}");
        // The engine keeps its position (the attackers to move) and goes on.
        let r = one(&mut e, "play attackers");
        assert!(r.starts_with("move "), "{agent}: {r}");
        let r = one(&mut e, "analyze 2 0.05");
        assert!(r.starts_with("analysis ") || r.starts_with("error 0 "), "{agent}: {r}");
    }
}

#[test]
fn the_rebuilt_position_knows_it_is_over() {
    let v = Arc::new(Variant::from_spec(&open_rules()).unwrap());
    let p = parse_position(v.clone(), BOXED, Side::Attackers).unwrap();
    assert!(!p.is_over());
    let mut setup = p.to_setup();
    setup.to_move = Side::Defenders;
    let q = Position::from_setup(v, &setup).unwrap();
    assert!(q.is_over(), "the defenders have no move");
    assert!(q.legal_moves().is_empty());
}

#[test]
fn agents_choose_nothing_in_finished_or_stuck_positions() {
    let v = Arc::new(Variant::from_spec(&open_rules()).unwrap());
    let mut setup = parse_position(v.clone(), BOXED, Side::Attackers).unwrap().to_setup();
    setup.to_move = Side::Defenders;
    let stuck = Position::from_setup(v.clone(), &setup).unwrap();
    for agent in AGENTS {
        let spec: AgentSpec = agent.parse().unwrap();
        let mut a = Agent::new(&spec, &v, 1).unwrap();
        assert_eq!(a.choose(&stuck), None, "{agent}");
        assert_eq!(a.choose_for(&stuck, Some(Duration::from_millis(5))), None, "{agent}");
        // And a move where there is one.
        let start = Position::start(v.clone());
        let m = a.choose(&start).expect("the start position has moves");
        assert!(start.is_legal(m), "{agent}: {m}");
    }
}

// ----- what OpenTafl 0.4.8 sends ------------------------------------------------------------

/// OpenTafl's own Brandub, as it sends it.
const OT_BRANDUB: &str = "rules dim:7 name:Brandub surf:n atkf:y ks:w cenh: cenhe: start:/3t3/3t3/3T3/ttTKTtt/3T3/3t3/3t3/";
const OT_COPENHAGEN: &str =
    "rules dim:11 name:Copenhagen atkf:y tfr:w sw:s efe:y start:/3ttttt3/5t5/11/t4T4t/t3TTT3t/tt1TTKTT1tt/t3TTT3t/t4T4t/11/5t5/3ttttt3/";

/// The position string after `moves` from the start of `rules`.
fn after(rules: &str, moves: &[&str]) -> String {
    let v = Arc::new(Variant::from_spec(rules.strip_prefix("rules ").unwrap()).unwrap());
    let mut p = Position::start(v.clone());
    for m in moves {
        p.play(parse_move(m, v.geometry).unwrap().mv).unwrap();
    }
    position_string(&p)
}

#[test]
fn opentafl_builtin_rules_are_played() {
    for rules in [OT_BRANDUB, OT_COPENHAGEN] {
        let mut e = engine("mcts:sims=8");
        assert!(e.handle(rules).is_empty(), "{rules}");
        assert!(e.handle("clock 9487 10000 5 1 1 ").is_empty());
        let r = one(&mut e, "play attackers");
        let size = if rules == OT_BRANDUB { 7 } else { 11 };
        let g = tafl_lab::rules::Geometry::new(size).unwrap();
        let m = parse_move(r.strip_prefix("move ").unwrap(), g).unwrap();
        assert!(m.mv.to_string().len() >= 5, "{r}");
    }
}

#[test]
fn unsupported_rules_stop_all_play_until_good_rules_arrive() {
    for agent in AGENTS {
        let mut e = engine(agent);
        let r = one(&mut e, "rules dim:7 ber:c start:/3t3/3t3/3T3/ttTKTtt/3T3/3t3/3t3/");
        assert!(r.starts_with("error 0 rules not supported") && r.contains("ber:c"), "{r}");
        // Nothing is played on the board of the game before: a critical error (OpenTafl then
        // ends the game) rather than a move.
        for _ in 0..3 {
            let r = one(&mut e, "play attackers");
            assert!(r.starts_with("error -1 ") && r.contains("ber:c"), "{agent}: {r}");
        }
        assert!(e.handle("opponent-move d1-d3 /7/3t3/3t3/ttTKTtt/3T3/3t3/3t3/").is_empty(), "ignored, not answered");
        assert!(e.handle("move /3t3/3t3/3T3/ttTKTtt/3T3/3t3/3t3/").is_empty());
        assert!(one(&mut e, "analyze 1 0.01").starts_with("error 0 "));
        // Good rules: play resumes, from their start.
        assert!(e.handle(OT_BRANDUB).is_empty());
        assert!(one(&mut e, "play attackers").starts_with("move "), "{agent}");
    }
}

fn brandub() -> Arc<Variant> {
    Arc::new(Variant::from_spec(OT_BRANDUB.strip_prefix("rules ").unwrap()).unwrap())
}

/// Whether `reply` is `move M` with M legal in `position` (`side` to move).
fn legal_reply(reply: &str, position: &str, side: Side) -> bool {
    let v = brandub();
    let p = parse_position(v.clone(), position, side).unwrap();
    reply.strip_prefix("move ").and_then(|m| parse_move(m, v.geometry).ok()).is_some_and(|r| p.is_legal(r.mv))
}

#[test]
fn a_move_the_host_refuses_is_taken_back() {
    let mut e = engine("mcts:sims=8");
    assert!(e.handle(OT_BRANDUB).is_empty());
    let start = after(OT_BRANDUB, &[]);
    assert!(legal_reply(&one(&mut e, "play attackers"), &start, Side::Attackers));
    // Refused (`error 2`, unanswered): the engine is back at the start, and moves from there.
    assert!(e.handle("error 2").is_empty(), "host errors are not answered");
    let r = one(&mut e, "play attackers");
    assert!(legal_reply(&r, &start, Side::Attackers), "{r}");
    // Accepted this time: `move <position>` agrees with the engine's board and is not answered.
    let second = r.strip_prefix("move ").unwrap().to_string();
    assert!(e.handle(&format!("move {}", after(OT_BRANDUB, &[&second]))).is_empty());
    // The defenders reply; the game goes on.
    let p = parse_position(brandub(), &after(OT_BRANDUB, &[&second]), Side::Defenders).unwrap();
    let reply = p.legal_moves()[0].to_string();
    let now = after(OT_BRANDUB, &[&second, &reply]);
    assert!(e.handle(&format!("opponent-move {reply} {now}")).is_empty());
    assert!(legal_reply(&one(&mut e, "play attackers"), &now, Side::Attackers));
}

#[test]
fn opponent_move_lists_the_whole_game_after_a_refusal() {
    let game = ["d6-f6", "d5-d6", "a4-a6"];
    // The engine plays the defenders; OpenTafl 0.4.8, after refusing its first move, lists every
    // move since the start again: here the attackers' one move.
    let mut e = engine("mcts:sims=8");
    assert!(e.handle(OT_BRANDUB).is_empty());
    let one_move = after(OT_BRANDUB, &game[..1]);
    assert!(e.handle(&format!("opponent-move d6-f6 {one_move}")).is_empty());
    assert!(legal_reply(&one(&mut e, "play defenders"), &one_move, Side::Defenders));
    assert!(e.handle("error 2").is_empty());
    assert!(e.handle(&format!("opponent-move d6-f6 {one_move}")).is_empty(), "a list the engine already knows");
    assert!(legal_reply(&one(&mut e, "play defenders"), &one_move, Side::Defenders));
    // A list of three moves from the start, the engine's own move among them, replays the game.
    let mut e = engine("mcts:sims=8");
    assert!(e.handle(OT_BRANDUB).is_empty());
    let three = after(OT_BRANDUB, &game);
    assert!(e.handle(&format!("opponent-move {} {three}", game.join("|"))).is_empty());
    assert!(legal_reply(&one(&mut e, "play defenders"), &three, Side::Defenders));
    // A list that fits nowhere: the host's board is taken as it is.
    let mut e = engine("mcts:sims=8");
    assert!(e.handle(OT_BRANDUB).is_empty());
    assert!(e.handle(&format!("opponent-move a4-a6 {three}")).is_empty());
    assert!(legal_reply(&one(&mut e, "play defenders"), &three, Side::Defenders));
}

#[test]
fn analyze_answers_for_the_side_named_by_side() {
    let v = Arc::new(Variant::preset("brandubh").expect("preset"));
    for agent in AGENTS {
        for side in [Side::Attackers, Side::Defenders] {
            let mut e = engine(agent);
            // What OpenTafl sends an analysis engine: position, side, clock, analyze.
            assert!(e.handle("position /3t3/3t3/3T3/ttTKTtt/3T3/3t3/3t3/").is_empty());
            assert!(e.handle(&format!("side {}", side.name())).is_empty());
            assert!(e.handle("clock 60000 60000 0 0 0 ").is_empty());
            let r = one(&mut e, "analyze 2 1");
            let first = r.split_whitespace().nth(2).unwrap().split('|').next().unwrap();
            let p = parse_position(v.clone(), "/3t3/3t3/3T3/ttTKTtt/3T3/3t3/3t3/", side).unwrap();
            let m = parse_move(first, v.geometry).unwrap().mv;
            assert!(p.is_legal(m), "{agent}: {} to move, analysis gave {first}: {r}", side.name());
        }
    }
}

#[test]
fn clock_lines_are_milliseconds_with_starred_overtime() {
    for agent in AGENTS {
        let mut e = engine(agent);
        for good in ["clock 9487 10000 5 1 1", "clock 0* 10000 5 0 1", "clock 9487 10000 5 1 1 ", "clock 0* 0* 1 0 0", "clock 120000 120000"] {
            assert!(e.handle(good).is_empty(), "{agent}: {good:?}");
        }
        for bad in ["clock 1** 5", "clock *1 5", "clock 1 2 3", "clock 5"] {
            assert!(one(&mut e, bad).starts_with("error 0 "), "{agent}: {bad:?}");
        }
        // With 9.5 s on the clock the engine answers (it does not think 9487 seconds).
        assert!(e.handle("clock 9487 10000 5 1 1").is_empty());
        assert!(one(&mut e, "play attackers").starts_with("move "));
    }
}

#[test]
fn engine_errors_use_only_the_codes_otep_defines() {
    let mut e = engine("mcts:sims=8");
    for line in ["frobnicate", "play sideways", "side up", "position ///", "opponent-move a1-a2", "analyze", "clock x y"] {
        let r = one(&mut e, line);
        let code = r.split_whitespace().nth(1).unwrap();
        assert!(code == "0", "{line:?} -> {r}");
    }
}

#[test]
fn a_position_equal_to_the_board_keeps_the_game_history() {
    // tafl-lab's own client sends `position` after every `opponent-move` (OpenTafl's engine
    // mode needs it). Where that is the board the engine already has, its history stays, so
    // repetitions still count; a different board replaces the game.
    let mut e = engine("mcts:sims=8");
    assert!(e.handle(OT_BRANDUB).is_empty());
    let one_move = after(OT_BRANDUB, &["d6-f6"]);
    assert!(e.handle(&format!("opponent-move d6-f6 {one_move}")).is_empty());
    assert_eq!(e.position().ply(), 1);
    assert!(e.handle(&format!("position {one_move}")).is_empty());
    assert_eq!(e.position().ply(), 1, "the same board: the history is kept");
    assert!(legal_reply(&one(&mut e, "play defenders"), &one_move, Side::Defenders));
    let other = after(OT_BRANDUB, &["d6-e6"]);
    assert!(e.handle(&format!("position {other}")).is_empty());
    assert_eq!(position_string(e.position()), other, "another board replaces the game");
}

#[test]
fn a_line_that_is_not_utf8_is_an_error_0_and_the_next_command_is_answered() {
    // `status` (answered with silence) with a byte that is not UTF-8: `error 0`; then `play`.
    let o = common::cli::run_stdin_bytes(&["engine", "--protocol", "opentafl", "--sims", "8"], b"status \xff\nplay attackers\ngoodbye\n");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8(o.stdout).unwrap();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 4, "{out}");
    assert_eq!(lines[..3], ["hello", "simple-moves on", "error 0 the line is not UTF-8: \"status \u{fffd}\""], "{out}");
    assert!(lines[3].starts_with("move "), "{out}");
}
