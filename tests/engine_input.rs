//! The OpenTafl Engine Protocol engine on hostile input: clock and analyze numbers that are not
//! finite or are negative, and `play` for a side that has no legal move. Every case answers
//! with an `error` line and leaves the engine able to go on.

use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;
use tafl_lab::arena::{Agent, AgentSpec};
use tafl_lab::engine::{Engine, EngineConfig, TimeControl};
use tafl_lab::rules::notation::{parse_position, rules_string};
use tafl_lab::rules::{Position, Side, Variant};

fn engine(agent: &str) -> Engine {
    let variant = Arc::new(Variant::preset("brandubh"));
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
            assert!(r.starts_with("error 100 "), "{agent}: {bad:?} -> {r}");
            // The bad clock is not kept: both sides can still be asked to move.
            assert!(one(&mut e, "play attackers").starts_with("move "), "{agent}: play after {bad:?}");
            assert!(one(&mut e, "play defenders").starts_with("move "), "{agent}: play after {bad:?}");
        }
        // A good clock after a bad one is used.
        let mut e = engine(agent);
        assert!(one(&mut e, "clock nan 5").starts_with("error 100 "));
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
        assert!(r[0].starts_with("error 100 "), "{line:?} -> {r:?}");
    }
    let (_, last) = replies.last().unwrap();
    assert!(last[0].starts_with("analysis "), "a good analyze still works: {last:?}");
}

/// Brandubh without encirclement, so a boxed-in king is not already a lost game.
fn open_rules() -> String {
    let s = rules_string(&Variant::preset("brandubh")).unwrap();
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
        assert!(r.starts_with("error 3 "), "{agent}: {r}");
        // The engine keeps its position (the attackers to move) and goes on.
        let r = one(&mut e, "play attackers");
        assert!(r.starts_with("move "), "{agent}: {r}");
        let r = one(&mut e, "analyze 2 0.05");
        assert!(r.starts_with("analysis ") || r.starts_with("error 3 "), "{agent}: {r}");
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
