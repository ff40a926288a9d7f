//! External engines as agents (`htp:` and `otep:`), refereed by tafl-lab: full games against
//! hnefatafl-copenhagen's HTP engine (installed by `scripts/peers.sh`) and against tafl-lab's
//! own OTEP engine run as a separate program; and each way a game can end without a result
//! from the rules, provoked with a misbehaving engine: a forfeit for a hang, garbage and a
//! crash, and a rules disagreement that is never scored. The tests that need
//! hnefatafl-copenhagen's engine are skipped where it is not installed (see
//! [`common::needs`]; under `CI=true` they fail instead).

use crate::common;

use common::cli::bin;
use common::{require, Need};
use std::path::Path;
use std::sync::Arc;
use tafl_lab::arena::{self, AgentSpec, Fault, ForfeitCause, MatchConfig, MatchSummary};
use tafl_lab::rules::{Position, Side, Variant};

fn fake(mode: &str) -> AgentSpec {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/engines/fake-htp.sh");
    format!("htp:cmd=\"{}\",args={mode},time=2", script.display()).parse().unwrap()
}

fn fake_client(mode: &str) -> AgentSpec {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/engines/fake-htp-client.sh");
    format!("htp:cmd=\"{}\",args={mode},tcp=1,time=5", script.display()).parse().unwrap()
}

fn play(variant: &str, a: &AgentSpec, b: &AgentSpec, games: usize) -> Vec<arena::GameResult> {
    play_seeded(variant, a, b, games, 5)
}

fn play_seeded(variant: &str, a: &AgentSpec, b: &AgentSpec, games: usize, seed: u64) -> Vec<arena::GameResult> {
    let v = Arc::new(Variant::from_spec(variant).unwrap());
    arena::play_match(&v, a, b, &MatchConfig { games, seed, opening_plies: 0, shard: None, a_side: None }, &|_| {}).unwrap()
}

/// Replays a game's moves with tafl-lab's rules: every move legal, the recorded outcome the
/// rules' own.
fn check_game(variant: &str, g: &arena::GameResult) {
    let mut pos = Position::start(Arc::new(Variant::from_spec(variant).unwrap()));
    for &m in &g.moves {
        pos.play(m).unwrap_or_else(|e| panic!("game {}: {m}: {e}", g.index));
    }
    match (&g.outcome, &g.fault) {
        (Some(o), None) => assert_eq!(pos.outcome().as_ref(), Some(o)),
        (None, Some(f)) => assert!(pos.outcome().is_none(), "a fault ended a finished game: {}", f.describe()),
        other => panic!("game {}: {other:?}", g.index),
    }
}

/// The result of one game played with [`arena::play_game`], as a match reports it.
fn one_game(variant: &str, a: &AgentSpec, b: &AgentSpec, a_side: Side, opening: &[tafl_lab::rules::Move]) -> arena::GameResult {
    let v = Arc::new(Variant::from_spec(variant).unwrap());
    let mut a = arena::Agent::new(a, &v, 1).unwrap();
    let mut b = arena::Agent::new(b, &v, 2).unwrap();
    let (end, moves, think) = arena::play_game(&v, &mut a, &mut b, a_side, opening, 5);
    let (outcome, fault) = match end {
        Ok(o) => (Some(o), None),
        Err(f) => (None, Some(f)),
    };
    arena::GameResult { index: 0, a_side, outcome, fault, moves, think }
}

#[test]
fn full_copenhagen_games_against_hnefatafl_copenhagen_on_both_sides() {
    // Its alpha-beta AI on stdin (depth 4, the AI `generate_move` always plays there). Its
    // moves take from 1 to 20 s here, so a game it plays from the start against a random
    // player takes 1-7 minutes. Each game here is therefore a whole game of tafl-lab's own
    // (the shipped Copenhagen model against a random player), given to the engine move by move
    // with `play` (every capture list and board it shows compared with tafl-lab's), up to the
    // ply before the model's side wins; there its AI, on the model's side, plays the game's
    // last move with `generate_move`, and tafl-lab referees the end. (Games it plays from the
    // start to the end on both sides are played over TCP, at depth 1, below.) Its limit only
    // catches a hang, not a slow move on a busy machine.
    //
    // The model is pinned to the first Copenhagen net (`model.safetensors`), not the shipped
    // one: its AI scores every forced win `inf` and does not prefer the shortest, so whether it
    // takes a win in one depends on the position. In the shipped self-play net's seed-5 game it
    // answered `d8 c8` (`score: inf`) where `e5 c5` won at once, and eight plies later it
    // answered `generate_move` with the other side's move (`? message: play: it isn't your
    // turn`): a forfeit, rightly scored as one, that this test is not about.
    let Some(engine) = require(Need::HtpEngine) else { return };
    let htp: AgentSpec = format!("htp:cmd=\"{}\",time=600", engine.display()).parse().unwrap();
    let random: AgentSpec = "random".parse().unwrap();
    let model: AgentSpec =
        format!("az:model=\"{}\",sims=16", Path::new(env!("CARGO_MANIFEST_DIR")).join("models/copenhagen/model.safetensors").display()).parse().unwrap();
    for side in [Side::Attackers, Side::Defenders] {
        // The model on `side` against a random player (A attacks in the first game), in the
        // first of a few seeded games that is long enough to be worth replaying.
        let own: Vec<arena::GameResult> = (5..13)
            .map(|seed| {
                if side == Side::Attackers {
                    play_seeded("copenhagen", &model, &random, 1, seed)
                } else {
                    play_seeded("copenhagen", &random, &model, 1, seed)
                }
            })
            .inspect(|g| assert_eq!(g[0].winner(), Some(Some(side)), "the model on {side:?} beats a random player: {:?}", g[0]))
            .find(|g| g[0].moves.len() > 20)
            .expect("a game of more than 20 plies in 8 seeds");
        let opening = &own[0].moves[..own[0].moves.len() - 1];
        let g = one_game("copenhagen", &random, &htp, side.opponent(), opening);
        check_game("copenhagen", &g);
        if let Some(f) = &g.fault {
            panic!("its AI as {side:?}: {} after {} plies", f.describe(), g.moves.len());
        }
        // Its AI moved, and its move ended the game for its side (a win in one it cannot miss
        // at depth 4).
        assert_eq!(g.moves.len(), own[0].moves.len(), "its AI as {side:?} ends the game: {g:?}");
        assert_eq!(g.outcome.as_ref().map(|o| o.winner), Some(Some(side)), "{g:?}");
    }
}

#[test]
fn tafl_labs_own_otep_engine_is_an_external_opponent() {
    let spec = format!("otep:cmd=\"{}\",args=\"engine --sims 8\",time=30", bin().get_program().to_string_lossy());
    let otep: AgentSpec = spec.parse().unwrap();
    assert_eq!(otep.to_string().parse::<AgentSpec>().unwrap(), otep, "canonical text round-trips");
    let v = Arc::new(Variant::preset("brandubh").expect("preset"));
    let games =
        arena::play_match(&v, &otep, &"mcts:sims=8".parse().unwrap(), &MatchConfig { games: 4, seed: 3, opening_plies: 2, shard: None, a_side: None }, &|_| {})
            .unwrap();
    for g in &games {
        assert!(g.fault.is_none(), "game {}: {}", g.index, g.fault.as_ref().unwrap().describe());
        check_game("brandubh", g);
    }
    assert_eq!(MatchSummary::from_games(&games).games, 4);
}

#[test]
fn a_hang_garbage_or_crash_is_a_forfeit_and_the_match_goes_on() {
    let ours: AgentSpec = "mcts:sims=8".parse().unwrap();
    for mode in ["hang", "garbage", "crash"] {
        let games = play("brandubh", &fake(mode), &ours, 2);
        for g in &games {
            check_game("brandubh", g);
            match &g.fault {
                // The engine's first turn fails, whichever side it plays.
                Some(Fault::Forfeit { side, cause, reason }) => {
                    assert_eq!(*side, g.a_side, "{mode}: {reason}");
                    let (expected, expected_cause) = match mode {
                        "hang" => ("no answer in time", ForfeitCause::Time),
                        "garbage" => ("unreadable move", ForfeitCause::Illegal),
                        _ => ("exited", ForfeitCause::Crash),
                    };
                    assert!(reason.contains(expected), "{mode}: {reason}");
                    assert_eq!(*cause, expected_cause, "{mode}: {reason}");
                }
                other => panic!("{mode}: game {} ended {other:?}", g.index),
            }
        }
        // Both games were played (the engine was restarted) and scored as losses of A.
        let s = MatchSummary::from_games(&games);
        assert_eq!((s.games, s.forfeits, s.a_total().loss), (2, 2, 2), "{mode}");
    }
}

#[test]
fn a_refused_move_is_a_rules_disagreement_and_not_scored() {
    let ours: AgentSpec = "mcts:sims=8".parse().unwrap();
    let games = play("brandubh", &ours, &fake("refuse"), 2);
    // Game 0: tafl-lab's agent attacks and moves first; the engine refuses that move.
    let g = &games[0];
    match &g.fault {
        Some(Fault::Disagreement { side, ply, ours, theirs, .. }) => {
            assert_eq!((*side, *ply), (Side::Defenders, 0));
            assert!(ours.contains("is legal") && theirs.contains("not in my rules"), "{ours} / {theirs}");
        }
        other => panic!("game 0 ended {other:?}"),
    }
    let s = MatchSummary::from_games(&games);
    // Game 1: the engine attacks first and plays d6-c6, but shows the start board: tafl-lab
    // sees a board that differs from its own after that move.
    match &games[1].fault {
        Some(Fault::Disagreement { side: Side::Attackers, ours, .. }) => assert!(ours.contains("board after d6-c6"), "{ours}"),
        other => panic!("game 1 ended {other:?}"),
    }
    assert_eq!((s.games, s.disagreements), (0, 2), "disagreements are never scored");
}

#[test]
fn external_specs_are_checked_before_any_game() {
    for (text, needle) in [
        ("htp", "needs cmd=PROGRAM"),
        ("htp:cmd=x,sims=5", "unknown option \"sims\""),
        ("otep:cmd=x,time=-1", "positive number of seconds"),
        ("otep:cmd=x,tcp=1", "applies to htp engines only"),
        ("htp:cmd=x,tcp=2", "expected 1 or 0"),
    ] {
        let e = text.parse::<AgentSpec>().unwrap_err().to_string();
        assert!(e.contains(needle), "{text}: {e}");
    }
    let v = Arc::new(Variant::preset("tablut").expect("preset"));
    let e = arena::play_match(
        &v,
        &fake("hang"),
        &"random".parse().unwrap(),
        &MatchConfig { games: 1, seed: 1, opening_plies: 0, shard: None, a_side: None },
        &|_| {},
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("7x7, 11x11 and 13x13"), "{e}");
    let missing: AgentSpec = "htp:cmd=/nonexistent/engine".parse().unwrap();
    let e = arena::play_match(
        &Arc::new(Variant::preset("brandubh").expect("preset")),
        &missing,
        &"random".parse().unwrap(),
        &MatchConfig { games: 1, seed: 1, opening_plies: 0, shard: None, a_side: None },
        &|_| {},
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("no such program"), "{e}");
}

#[test]
fn analyze_asks_an_htp_engine_for_its_move() {
    use common::cli::{ok, run};
    // HTP from the start, given the moves; the answer is a legal move for the side to move.
    let Some(engine) = require(Need::HtpEngine) else { return };
    let htp = format!("htp:cmd=\"{}\",time=600", engine.display());
    let text = ok(&run(&["analyze", "--variant", "copenhagen", "--moves", "d1-d3", "--agent", &htp, "--json"]));
    let v: serde_json::Value = serde_json::from_str(text.trim()).unwrap();
    assert_eq!(v["to_move"], "defenders", "{text}");
    let mut pos = Position::start(Arc::new(Variant::preset("copenhagen").expect("preset")));
    pos.play(tafl_lab::rules::Move::parse("d1-d3", pos.geometry()).unwrap()).unwrap();
    let mv = tafl_lab::rules::Move::parse(v["best_move"].as_str().unwrap(), pos.geometry()).unwrap();
    assert!(pos.is_legal(mv), "{text}");
}

#[test]
fn analyze_asks_an_otep_engine_for_its_move() {
    use common::cli::{ok, run};
    // OTEP on a set-up position (tafl-lab's own engine, given it with `position`): the lone
    // king on b1 escapes to a corner at once.
    let otep = format!("otep:cmd=\"{}\",args=\"engine --sims 64\"", bin().get_program().to_string_lossy());
    let setup = "/1K5/7/7/7/4t2/7/3t3/";
    let text = ok(&run(&["analyze", "--variant", "brandubh", "--position", setup, "--to-move", "defenders", "--agent", &otep, "--json"]));
    let v: serde_json::Value = serde_json::from_str(text.trim()).unwrap();
    let pos = tafl_lab::rules::notation::parse_position(Arc::new(Variant::preset("brandubh").expect("preset")), setup, Side::Defenders).unwrap();
    let mv = tafl_lab::rules::Move::parse(v["best_move"].as_str().unwrap(), pos.geometry()).unwrap();
    assert!(pos.is_legal(mv) && ["a1", "g1"].contains(&mv.to.to_string().as_str()), "the king escapes: {text}");
}

#[test]
fn an_htp_engine_client_plays_over_tcp() {
    // The real engine client (`hnefatafl-text-protocol --host`, how its server's bots play),
    // with its alpha-beta AI cut to depth 1 so that the games are quick.
    let Some(engine) = require(Need::HtpEngine) else { return };
    let real: AgentSpec = format!("htp:cmd=\"{}\",args=\"--ai basic --depth 1\",tcp=1,time=600", engine.display()).parse().unwrap();
    assert_eq!(real.to_string().parse::<AgentSpec>().unwrap(), real, "canonical text round-trips");
    let games = play("copenhagen", &"mcts:sims=8".parse().unwrap(), &real, 2);
    assert_eq!(games.len(), 2);
    let mut finished = 0;
    for g in &games {
        check_game("copenhagen", g);
        match &g.fault {
            None => finished += 1,
            // The one reading of the rules known to differ: it refuses a defenders' move that
            // repeats an earlier board (tafl-lab: a loss of the defenders, decided later).
            Some(Fault::Disagreement { theirs, .. }) if theirs.contains("already reached that position") => {}
            Some(f) => panic!("game {}: {} after {} plies", g.index, f.describe(), g.moves.len()),
        }
        assert!(g.moves.len() >= 4, "a real game: {:?}", g.moves);
    }
    assert!(finished >= 1, "at least one game ends by the rules: {games:?}");
}

#[test]
fn an_htp_engine_client_that_refuses_crashes_or_stops_is_told_apart() {
    let ours: AgentSpec = "mcts:sims=8".parse().unwrap();
    // A client that refuses the move it is sent (it exits with `Error: ...`): a disagreement
    // about that move, in the position before it, on either side.
    let games = play("brandubh", &ours, &fake_client("refuse"), 2);
    match &games[0].fault {
        Some(Fault::Disagreement { side: Side::Defenders, ply: 0, ours, theirs, .. }) => {
            assert!(ours.contains("is legal") && theirs.contains("Error: play: you already reached"), "{ours} / {theirs}")
        }
        other => panic!("refuse, game 0 ended {other:?}"),
    }
    match &games[1].fault {
        // The client attacked first with d6-c6; the refused move is tafl-lab's reply.
        Some(Fault::Disagreement { side: Side::Attackers, ply: 1, .. }) => assert_eq!(games[1].moves[0].to_string(), "d6-c6"),
        other => panic!("refuse, game 1 ended {other:?}"),
    }
    assert_eq!(MatchSummary::from_games(&games).disagreements, 2);
    // A client that panics when asked for a move: its forfeit, with the panic in the reason;
    // a fresh process plays the next game.
    let games = play("brandubh", &ours, &fake_client("crash"), 2);
    for g in &games {
        match &g.fault {
            Some(Fault::Forfeit { side, reason, .. }) => {
                assert_eq!(*side, g.a_side.opponent());
                assert!(reason.contains("exited") && reason.contains("panicked"), "{reason}");
            }
            other => panic!("crash, game {} ended {other:?}", g.index),
        }
    }
    assert_eq!(MatchSummary::from_games(&games).forfeits, 2);
    // A client that stops cleanly (its game is over in its rules) where tafl-lab plays on.
    let games = play("brandubh", &ours, &fake_client("over"), 1);
    match &games[0].fault {
        Some(Fault::Disagreement { ours, theirs, .. }) => assert!(ours.contains("goes on") && theirs.contains("game is over"), "{ours} / {theirs}"),
        other => panic!("over ended {other:?}"),
    }
}

/// tafl-lab's own OTEP engine (at 8 simulations) behind `fake-otep.sh MODE`, which refuses
/// what it is sent at a chosen moment.
fn fake_otep(mode: &str) -> AgentSpec {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/engines/fake-otep.sh");
    let engine = bin().get_program().to_string_lossy().to_string();
    format!("otep:cmd=\"{}\",args=\"{mode} {engine} engine --sims 8\",time=5", script.display()).parse().unwrap()
}

#[test]
fn every_refusal_of_rules_or_position_is_a_disagreement_at_any_ply() {
    let ours: AgentSpec = "mcts:sims=8".parse().unwrap();
    // The filter alone changes nothing: honest games end by the rules.
    let games = play("brandubh", &fake_otep("honest"), &ours, 2);
    for g in &games {
        check_game("brandubh", g);
        assert!(g.fault.is_none(), "honest game {}: {:?}", g.index, g.fault);
    }
    // Refused rules (before any move), a refused position after the opening plies, and a
    // critical error there: each a disagreement, never scored. (The old client ignored an
    // `error` after the engine's first turn and read on: an engine that then said nothing
    // lost on time, a win for tafl-lab; this one plays on from the board it had, and the game
    // ended on a move tafl-lab found illegal. A critical error was the engine's forfeit.)
    for (mode, refused) in [("refuse-rules", "error 0 these rules"), ("refuse-position", "error 0 cannot read"), ("critical", "error -1 internal")] {
        let games = play("brandubh", &fake_otep(mode), &ours, 2);
        for g in &games {
            check_game("brandubh", g);
            match &g.fault {
                Some(Fault::Disagreement { side, theirs, ours, .. }) => {
                    assert_eq!(*side, g.a_side, "{mode}");
                    assert!(theirs.contains(refused), "{mode}: {theirs}");
                    if mode == "refuse-rules" {
                        assert!(ours.contains("these rules"), "{mode}: {ours}");
                    } else {
                        assert!(g.moves.len() >= 2 && (ours.contains("opponent-move") || ours.contains("position")), "{mode}: {ours} after {:?}", g.moves);
                    }
                }
                other => panic!("{mode}: game {} ended {other:?}", g.index),
            }
        }
        let s = MatchSummary::from_games(&games);
        assert_eq!((s.games, s.disagreements, s.forfeits), (0, 2, 0), "{mode}: never scored");
    }
}

#[test]
fn htp_set_up_refusals_resignations_and_game_over_replies_are_scored_by_their_exact_form() {
    let ours: AgentSpec = "mcts:sims=8".parse().unwrap();
    // A refused board_size: the engine cannot play these rules. A disagreement, not a
    // forfeit (the old client scored it as the engine's loss).
    let games = play("brandubh", &fake("refuse-size"), &ours, 2);
    for g in &games {
        match &g.fault {
            Some(Fault::Disagreement { ours, theirs, .. }) => {
                assert!(ours.contains("board_size 7") && theirs.contains("not a size I play"), "{ours} / {theirs}")
            }
            other => panic!("refuse-size: game {} ended {other:?}", g.index),
        }
    }
    assert_eq!(MatchSummary::from_games(&games).games, 0, "not scored");
    // A resignation is the engine's loss, on either side.
    let games = play("brandubh", &fake("resign"), &ours, 2);
    for g in &games {
        match &g.fault {
            Some(Fault::Forfeit { side, cause, reason }) => assert!(*side == g.a_side && *cause == ForfeitCause::Resigned && reason == "resigned", "{reason}"),
            other => panic!("resign: game {} ended {other:?}", g.index),
        }
    }
    let s = MatchSummary::from_games(&games);
    assert_eq!((s.games, s.a_total().loss, s.forfeits), (2, 2, 2));
    // Its exact game-over refusal, bare or in the `message:` form hnefatafl-copenhagen 6.4.1
    // gives after a resignation, where tafl-lab plays on: a disagreement.
    for mode in ["over", "over-wrapped"] {
        let games = play("brandubh", &fake(mode), &ours, 1);
        match &games[0].fault {
            Some(Fault::Disagreement { ours, theirs, .. }) => assert!(ours.contains("goes on") && theirs.contains("game is over"), "{mode}: {ours} / {theirs}"),
            other => panic!("{mode}: ended {other:?}"),
        }
    }
    // Any other refusal to move is its failure to move, even when it contains "over" (the old
    // client read any such reply as a disagreement).
    let games = play("brandubh", &fake("handover"), &ours, 1);
    match &games[0].fault {
        Some(Fault::Forfeit { side, cause, reason }) => {
            assert!(*side == games[0].a_side && *cause == ForfeitCause::Refused && reason.contains("no move to hand over"), "{reason}")
        }
        other => panic!("handover: ended {other:?}"),
    }
}

#[test]
fn an_engine_tafl_lab_cannot_start_voids_the_game_instead_of_losing_it() {
    // A program that exists but cannot be executed: starting it fails on tafl-lab's side of
    // the pipe. The old client scored that as the engine's forfeit, a win for tafl-lab.
    let dir = std::env::temp_dir().join(format!("tafl-lab-void-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cmd = dir.join("not-executable");
    std::fs::write(&cmd, "#!/bin/sh\necho hello\n").unwrap();
    let ours: AgentSpec = "mcts:sims=8".parse().unwrap();
    for proto in ["otep", "htp"] {
        let spec: AgentSpec = format!("{proto}:cmd=\"{}\",time=5", cmd.display()).parse().unwrap();
        let games = play("brandubh", &spec, &ours, 2);
        for g in &games {
            match &g.fault {
                Some(Fault::Void { side, reason }) => assert!(*side == g.a_side && reason.contains("cannot start"), "{proto}: {reason}"),
                other => panic!("{proto}: game {} ended {other:?}", g.index),
            }
            assert_eq!(g.winner(), None, "a void game has no winner");
            assert_eq!(g.ending(), "void");
        }
        let s = MatchSummary::from_games(&games);
        assert_eq!((s.games, s.voids, s.forfeits, s.disagreements), (0, 2, 0, 0), "{proto}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `show_board_open_tafl` is a check only tafl-lab needs (HTP does not require it): an engine
/// that refuses it voids the game instead of losing it.
#[test]
fn an_htp_engine_refusing_the_board_check_voids_the_game() {
    let ours: AgentSpec = "mcts:sims=8".parse().unwrap();
    let games = play("brandubh", &fake("refuse-board"), &ours, 2);
    for g in &games {
        match &g.fault {
            Some(Fault::Void { side, reason }) => assert!(*side == g.a_side && reason.contains("show_board_open_tafl"), "{reason}"),
            other => panic!("refuse-board: game {} ended {other:?}", g.index),
        }
    }
    let s = MatchSummary::from_games(&games);
    assert_eq!((s.games, s.voids, s.forfeits), (0, 2, 0), "not scored");
}

/// The engine's answer for the other side (`play defender ...` when it attacks) or hnefatafl-
/// copenhagen's "it isn't your turn": the engine reads whose turn it is otherwise, a
/// disagreement, never its forfeit.
#[test]
fn an_htp_engine_that_moves_for_the_other_side_disagrees_and_does_not_forfeit() {
    let ours: AgentSpec = "mcts:sims=8".parse().unwrap();
    for mode in ["wrong-side", "not-your-turn"] {
        let games = play("brandubh", &fake(mode), &ours, 1);
        match &games[0].fault {
            Some(Fault::Disagreement { ours, theirs, .. }) => {
                assert!(ours.contains("to move") && (theirs.contains("defender") || theirs.contains("turn")), "{mode}: {ours} / {theirs}")
            }
            other => panic!("{mode}: ended {other:?}"),
        }
    }
}

/// `match --json` tells faults apart: the count of forfeits, voids and disagreements, each
/// fault with its kind, side and agent, and per agent the faults by kind.
#[test]
fn match_json_counts_forfeits_voids_and_fault_kinds_per_agent() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/engines/fake-htp.sh");
    let spec = |mode: &str| format!("htp:cmd=\"{}\",args={mode},time=2", script.display());
    for (mode, kind, forfeits, voids) in [("crash", "crash", 2, 0), ("resign", "resigned", 2, 0), ("garbage", "illegal", 2, 0), ("refuse-board", "void", 0, 2)]
    {
        // A = the engine, B = tafl-lab's agent.
        let o = bin()
            .args(["match", "--variant", "brandubh", "--a", &spec(mode), "--b", "mcts:sims=8", "--games", "2", "--opening-plies", "0", "--json", "--quiet"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{mode}: {}", String::from_utf8_lossy(&o.stderr));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!((v["forfeits"].as_u64(), v["voids"].as_u64(), v["disagreements"].as_u64()), (Some(forfeits), Some(voids), Some(0)), "{mode}: {v}");
        assert_eq!(v["faults_by_agent"]["a"], serde_json::json!({ kind: 2 }), "{mode}: {v}");
        assert_eq!(v["faults_by_agent"]["b"], serde_json::json!({}), "{mode}: {v}");
        let faults = v["faults"].as_array().unwrap();
        assert_eq!(faults.len(), 2, "{mode}");
        for f in faults {
            assert_eq!(f["agent"], "a", "{mode}: {f}");
            assert_eq!(f["fault"]["side"], f["a_side"], "{mode}: the engine's own side faulted: {f}");
            match kind {
                "void" => assert_eq!(f["fault"]["kind"], "void", "{f}"),
                _ => assert_eq!((f["fault"]["kind"].as_str(), f["fault"]["cause"].as_str()), (Some("forfeit"), Some(kind)), "{f}"),
            }
        }
    }
}
