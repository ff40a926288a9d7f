//! The command-line contract: output formats, exit codes and one-line errors.

use crate::common;

use common::cli::{fails_with, run, run_stdin, scratch};
use std::process::Output;

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

const GAME: &str = "tests/fixtures/games/brandubh-king-captured.txt";

#[test]
fn perft_prints_the_leaf_count_last() {
    let o = run(&["perft", "--variant", "brandubh", "--depth", "2", "--divide", "--stats"]);
    assert!(o.status.success());
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(*lines.last().unwrap(), "960");
    assert_eq!(lines.len(), 40 + 2, "one line per first move, the stats, the count");
    assert!(lines.contains(&"captures 16 game_ends 0"));
}

#[test]
fn moves_are_sorted_one_a_line() {
    let o = run(&["moves", "--variant", "brandubh"]);
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 40);
    assert_eq!(lines[0], "a4-a2", "a4's moves come first, nearest rank first");
    let mut sorted = lines.clone();
    sorted.sort_by_key(|m| {
        let sq = |s: &str| (s.as_bytes()[0], s[1..].parse::<u32>().unwrap());
        let (a, b) = m.split_once('-').unwrap();
        (sq(a), sq(b))
    });
    assert_eq!(lines, sorted);
}

#[test]
fn show_prints_board_side_and_status() {
    let o = run(&["show", "--variant", "brandubh", "--moves", "g4-g2 e4-e6"]);
    let out = stdout(&o);
    assert!(out.contains("  7 + . . a . . + 7\n"), "{out}");
    assert!(out.contains("attackers to move (ply 2)"), "{out}");
    assert!(out.contains("position: /3t3/3t2t/3T3/ttTK1t1/3T3/3tT2/3t3/"), "{out}");
}

#[test]
fn replay_prints_one_json_object_per_ply() {
    let o = run(&["replay", "--variant", "brandubh", GAME]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let lines: Vec<serde_json::Value> = stdout(&o).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 7);
    for (i, l) in lines.iter().enumerate() {
        assert_eq!(l["ply"], i + 1);
        assert_eq!(l["side"], if i % 2 == 0 { "attackers" } else { "defenders" });
    }
    assert_eq!(lines[4]["move"], "f4-f6");
    assert_eq!(lines[4]["captures"], serde_json::json!(["e6"]));
    assert_eq!(lines[5]["status"], "ongoing");
    assert_eq!(lines[5]["reason"], serde_json::Value::Null);
    assert_eq!(lines[6]["status"], "attackers_win");
    assert_eq!(lines[6]["reason"], "king_captured");
}

#[test]
fn replay_reads_stdin() {
    let o = run_stdin(&["replay", "--variant", "brandubh", "-"], "g4-g2 e4-e6");
    assert_eq!(stdout(&o).lines().count(), 2);
}

#[test]
fn replay_errors_name_the_ply() {
    fails_with(&run_stdin(&["replay", "--variant", "brandubh", "-"], "g4-g2 d4-d7"), "ply 2: d4-d7 is not a legal move");
    fails_with(
        &run_stdin(&["replay", "--variant", "brandubh", "-"], "g4-g2 e4-e6 a4-a6 d4-e4 f4-f6xe5"),
        "ply 5: f4-f6 claims captures e5 but the rules capture e6",
    );
    let game = std::fs::read_to_string(GAME).unwrap() + " e1-e2";
    fails_with(&run_stdin(&["replay", "--variant", "brandubh", "-"], &game), "ply 8: e1-e2: the game is already over");
    fails_with(&run_stdin(&["replay", "--variant", "brandubh", "-"], "g4g2"), "ply 1: bad move `g4g2`");
    fails_with(&run(&["replay", "--variant", "brandubh", "/no/such/game.txt"]), "cannot read /no/such/game.txt");
}

#[test]
fn bad_input_gets_one_line_errors() {
    fails_with(&run(&["show", "--variant", "brandub"]), "unknown variant");
    fails_with(&run(&["show", "--variant", "brandubh", "--position", "/3t3/"]), "--position");
    fails_with(&run(&["show", "--variant", "brandubh", "--moves", "g4-g2 d4-d7"]), "--moves: move 2: d4-d7 is not a legal move");
    fails_with(&run(&["moves", "--variant", "dim:7 ber:c start:/3t3/3t3/3T3/ttTKTtt/3T3/3t3/3t3/"]), "ber:c");
    let dir = std::env::temp_dir().join(format!("tafl-lab-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("bad.toml");
    std::fs::write(&f, "base = \"brandubh\"\n[rules]\nshieldwal = true\n").unwrap();
    fails_with(&run(&["show", "--variant", f.to_str().unwrap()]), "bad.toml: rules: unknown field `shieldwal`");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn positions_and_side_to_move_from_the_command_line() {
    let o = run(&["moves", "--variant", "brandubh", "--position", "/3t3/3t3/3T3/ttTKTtt/3T3/3t3/3t3/", "--to-move", "defenders"]);
    let out = stdout(&o);
    assert!(out.lines().all(|m| ["c4", "d3", "d5", "e4"].contains(&&m[..2])), "{out}");
    assert!(!out.is_empty());
}

#[test]
fn variants_lists_every_preset() {
    let out = stdout(&run(&["variants"]));
    assert_eq!(out.lines().count(), 14);
    assert!(out.contains("alea-evangelii") && out.contains("19x19"));
}

#[test]
fn demo_plays_a_whole_game_and_names_the_result() {
    let o = run(&["demo", "--variant", "brandubh", "--seed", "3"]);
    let out = stdout(&o);
    let last = out.lines().last().unwrap();
    assert!(last.starts_with("result: "), "{last}");
    let again = stdout(&run(&["demo", "--variant", "brandubh", "--seed", "3"]));
    assert_eq!(out, again, "the same seed plays the same game");
}

fn json_of(o: &Output) -> serde_json::Value {
    assert!(o.status.success(), "stderr: {}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_str(stdout(o).trim()).expect("one JSON object")
}

fn temp_dir(tag: &str) -> std::path::PathBuf {
    let d = scratch(&format!("cli-{tag}"));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn analyze_finds_an_immediate_escape() {
    // Brandubh, defenders to move, king on c1 with a clear run to the corner a1.
    let pos = "/2K1t2/1t5/3T3/t5t/7/3t3/7/";
    let o = run(&["analyze", "--variant", "brandubh", "--position", pos, "--to-move", "defenders", "--agent", "mcts:sims=100", "--json"]);
    let v = json_of(&o);
    assert_eq!(v["best_move"], "c1-a1", "{v}");
    assert_eq!(v["value"], 1.0);
    assert_eq!(v["proof"], "win");
    assert_eq!(v["pv"][0], "c1-a1");
    let text = stdout(&run(&["analyze", "--variant", "brandubh", "--position", pos, "--to-move", "defenders", "--agent", "mcts:sims=100"]));
    assert!(text.contains("best move: c1-a1") && text.contains("pv: c1-a1"), "{text}");
}

#[test]
fn analyze_exhaustive_says_who_wins_by_force_and_how() {
    // A Copenhagen position an engine resigned as the defenders (docs/results/attack/).
    let pos = "/5t5/5t5/t3tTt4/1t1t3t1t1/2t1K3t2/3t3t2t/2t3t4/3t3t2t/4t6/5t5/3ttt5/";
    let base = ["analyze", "--variant", "copenhagen", "--position", pos, "--to-move", "defenders", "--exhaustive"];
    let v = json_of(&run(&[&base[..], &["4", "--json"]].concat()));
    assert_eq!((v["forced"].as_str(), v["plies"].as_u64(), v["to_move"].as_str()), (Some("loss"), Some(4), Some("defenders")), "{v}");
    assert_eq!(v["line"].as_array().unwrap().len(), 4);
    let text = stdout(&run(&[&base[..], &["2"]].concat()));
    assert!(text.contains("no forced win for either side within 2 plies"), "{text}");
    fails_with(&run(&[&base[..], &["4", "--agent", "mcts:sims=5"]].concat()), "--agent");
}

#[test]
fn analyze_prove_checks_a_win_beyond_the_exhaustive_horizon() {
    // The game of seed 18 against hnefatafl-copenhagen's alpha-beta AI, which resigned as the
    // defenders after 51 plies (docs/results/attack/ab-selfplay-v4-s11-20/): no forced loss
    // within 4 plies, a proof of one within 6.
    let moves = "a8-b8 d6-d4 a7-c7 f8-f9 d11-d9 g5-g4 k4-i4 f4-f3 h1-h3 f5-j5 i4-i5 f6-f4 g1-g3 e5-e2 d1-d2 f4-f5 b6-b3 \
                 h6-h10 j6-j9 h10-g10 h11-h10 f5-d5 k8-f8 g6-i6 k7-i7 g7-g8 h10-h8 d5-h5 h3-h4 h5-g5 g11-g7 g5-e5 k6-h6 e7-e9 \
                 i5-g5 e9-e10 h4-f4 e6-e7 d9-d10 e7-f7 e11-e9 f7-f5 g3-e3 f5-f7 e9-e7 e5-d5 d10-d6 d5-c5 e1-c1 c5-c2 b3-b2";
    let base = ["analyze", "--variant", "copenhagen", "--moves", moves];
    let short = json_of(&run(&[&base[..], &["--exhaustive", "4", "--json"]].concat()));
    assert_eq!(short["forced"].as_str(), Some("unknown"), "{short}");
    let v = json_of(&run(&[&base[..], &["--prove", "2000000", "--json"]].concat()));
    assert_eq!((v["forced"].as_str(), v["to_move"].as_str()), (Some("loss"), Some("defenders")), "{v}");
    let plies = v["plies"].as_u64().unwrap();
    assert!(plies > 4, "the exhaustive search saw no loss within 4 plies: {v}");
    assert_eq!(v["line"].as_array().unwrap().len() as u64, plies, "{v}");
    // The line it shows is one the rules end in the attackers' win.
    let line: Vec<&str> = v["line"].as_array().unwrap().iter().map(|m| m.as_str().unwrap()).collect();
    let all = format!("{moves} {}", line.join(" "));
    fails_with(&run(&["analyze", "--variant", "copenhagen", "--moves", &all, "--exhaustive", "1"]), "the game is over (attackers");
    let text = stdout(&run(&[&base[..], &["--prove", "100"]].concat()));
    assert!(text.contains("no proof for either side") && text.contains("the defenders: not searched"), "{text}");
    fails_with(&run(&[&base[..], &["--prove", "10", "--exhaustive", "4"]].concat()), "--exhaustive");
}

#[test]
fn match_reports_scores_per_side_and_repeats_with_a_seed() {
    let args = ["match", "--variant", "brandubh", "--a", "mcts:sims=100", "--b", "random", "--games", "6", "--json", "--seed", "3"];
    let v = json_of(&run(&args));
    assert_eq!(v["games"], 6);
    let side = |s: &str, k: &str| v[s][k].as_u64().unwrap();
    for s in ["a_as_attackers", "a_as_defenders"] {
        assert_eq!(side(s, "win") + side(s, "draw") + side(s, "loss"), 3, "{s}: {v}");
    }
    let wins = side("a_as_attackers", "win") + side("a_as_defenders", "win");
    let draws = side("a_as_attackers", "draw") + side("a_as_defenders", "draw");
    let score = v["a_score"].as_f64().unwrap();
    assert!((score - (wins as f64 + draws as f64 / 2.0) / 6.0).abs() < 1e-9);
    assert!(score >= 5.0 / 6.0, "MCTS beats a random player: {v}");
    // Every ply but the 2 random opening plies of each game is one agent's move, timed.
    let think = &v["think"];
    let moves = think["a_moves"].as_u64().unwrap() + think["b_moves"].as_u64().unwrap();
    assert_eq!(moves as f64 + 2.0 * 6.0, v["mean_plies"].as_f64().unwrap() * 6.0, "{v}");
    let per_move = |k: &str| think[k].as_f64().unwrap_or_else(|| panic!("{k}: {think}"));
    assert!(per_move("a_seconds_per_move") > per_move("b_seconds_per_move"), "100 simulations take longer than a random pick: {think}");
    let again = json_of(&run(&args));
    for k in ["a_as_attackers", "a_as_defenders", "mean_plies"] {
        assert_eq!(v[k], again[k], "same seed, same games");
    }
    // --a-side plays only one side's half of the same games: the same openings and seeds.
    for (flag, kept, dropped) in [("attackers", "a_as_attackers", "a_as_defenders"), ("defenders", "a_as_defenders", "a_as_attackers")] {
        let half = json_of(&run(&[&args[..], &["--a-side", flag]].concat()));
        assert_eq!(half["games"], 3, "{flag}: {half}");
        assert_eq!(half[kept], v[kept], "{flag}: the same games as in the whole match");
        for k in ["win", "draw", "loss"] {
            assert_eq!(half[dropped][k], 0, "{flag}: {half}");
        }
    }
}

#[test]
fn network_agents_load_a_model_and_search() {
    let dir = temp_dir("agents");
    let model = dir.join("tiny.safetensors");
    let m = model.to_str().unwrap();
    let o = run(&["new-model", "--variant", "brandubh", "--out", m, "--blocks", "1", "--channels", "8"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let legal = stdout(&run(&["moves", "--variant", "brandubh"]));
    for spec in [format!("az:model={m},sims=24,device=cpu"), format!("gumbel:model={m},sims=16,k=8,device=cpu")] {
        let v = json_of(&run(&["analyze", "--variant", "brandubh", "--agent", &spec, "--json"]));
        let best = v["best_move"].as_str().unwrap();
        assert!(legal.lines().any(|l| l == best), "{best} is legal");
        let value = v["value"].as_f64().unwrap();
        assert!((-1.0..=1.0).contains(&value));
        assert_eq!(v["simulations"], if spec.starts_with("az") { 24 } else { 16 }, "{spec}");
    }
    let v = json_of(&run(&[
        "match",
        "--variant",
        "brandubh",
        "--a",
        &format!("gumbel:model={m},sims=8,device=cpu"),
        "--b",
        "random",
        "--games",
        "2",
        "--json",
        "--quiet",
    ]));
    assert_eq!(v["games"], 2);
    // Provenance: each agent's canonical spec and the sha256 of the file its model loaded.
    use sha2::{Digest, Sha256};
    let sha = format!("{:x}", Sha256::digest(std::fs::read(&model).unwrap()));
    assert_eq!(v["provenance"]["a"]["spec"], format!("gumbel:model={m},sims=8,device=cpu"), "{v}");
    assert_eq!(v["provenance"]["a"]["models"], serde_json::json!([{"path": m, "sha256": sha}]), "{v}");
    assert_eq!(v["provenance"]["b"], serde_json::json!({"spec": "random", "models": []}), "{v}");
    // A directory resolves as the loader resolves it: to its model.safetensors.
    std::fs::copy(&model, dir.join("model.safetensors")).unwrap();
    let d = dir.to_str().unwrap();
    let v = json_of(&run(&[
        "match",
        "--variant",
        "brandubh",
        "--a",
        "mcts:sims=2",
        "--b",
        &format!("az:model={d},sims=2,device=cpu"),
        "--games",
        "2",
        "--json",
        "--quiet",
    ]));
    assert_eq!(v["provenance"]["a"]["models"], serde_json::json!([]));
    assert_eq!(v["provenance"]["b"]["models"], serde_json::json!([{"path": dir.join("model.safetensors").to_str().unwrap(), "sha256": sha}]), "{v}");
}

#[test]
fn agent_and_model_errors_are_one_line() {
    fails_with(&run(&["match", "--a", "mcts:sims=abc", "--b", "random", "--games", "2"]), "--a: agent spec \"mcts:sims=abc\": sims=\"abc\"");
    fails_with(&run(&["match", "--a", "alphabeta", "--b", "random"]), "unknown kind \"alphabeta\"");
    fails_with(&run(&["match", "--a", "random", "--b", "az:sims=3"]), "needs model=PATH");
    fails_with(&run(&["match", "--a", "random", "--b", "mcts:depth=3"]), "unknown option \"depth\"");
    fails_with(&run(&["match", "--a", "random", "--b", "random", "--games", "0"]), "--games");
    fails_with(&run(&["match", "--a", "random", "--b", "random", "--games", "1", "--a-side", "defenders"]), "--a-side defenders");
    fails_with(&run(&["match", "--a", "random", "--b", "random", "--a-side", "kings"]), "--a-side");
    fails_with(&run(&["analyze", "--agent", "az:model=/nonexistent/m.safetensors"]), "/nonexistent/m.safetensors");
    fails_with(&run(&["analyze", "--agent", "mcts:sims=10", "--moves", "d2-b2 a1-a2"]), "--moves: move 2");
    fails_with(&run(&["analyze", "--agent", "random"]), "does not analyze");
    let dir = temp_dir("wrong");
    let model = dir.join("b.safetensors");
    let m = model.to_str().unwrap();
    assert!(run(&["new-model", "--variant", "brandubh", "--out", m, "--blocks", "1", "--channels", "4"]).status.success());
    fails_with(&run(&["analyze", "--variant", "copenhagen", "--agent", &format!("az:model={m}")]), "trained for brandubh");
    let garbage = dir.join("garbage.safetensors");
    std::fs::write(&garbage, "nope").unwrap();
    fails_with(&run(&["analyze", "--agent", &format!("az:model={}", garbage.display())]), "not a safetensors file");
}

#[test]
fn a_match_stopped_early_keeps_every_game_it_finished_in_its_record() {
    use std::sync::Arc;
    use tafl_lab::rules::{Move, Position, Variant};
    let dir = scratch("record-kept");
    std::fs::create_dir_all(&dir).unwrap();
    let rec = dir.join("games.txt");
    let mut child = common::cli::bin()
        .args(["match", "--variant", "brandubh", "--a", "random", "--b", "mcts:sims=20", "--games", "100000", "--quiet", "--record"])
        .arg(&rec)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Killed once the record holds 3 games (the bound only guards against a hang).
    let games_in = |t: &str| t.lines().filter(|l| l.starts_with("# game ")).count();
    let guard = std::time::Instant::now() + std::time::Duration::from_secs(600);
    while std::fs::read_to_string(&rec).map(|t| games_in(&t)).unwrap_or(0) < 3 {
        assert!(std::time::Instant::now() < guard, "no record of 3 games");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    // What is there is whole: the variant line, then complete games, each of which replays
    // to the end its comment line names.
    let text = std::fs::read_to_string(&rec).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("# variant: brandubh"));
    let v = Arc::new(Variant::preset("brandubh").expect("preset"));
    let mut n = 0;
    while let Some(head) = lines.next() {
        assert!(head.starts_with("# game "), "{head}");
        let mut pos = Position::start(v.clone());
        for m in lines.next().expect("a move line").split_whitespace() {
            pos.play(Move::parse(m, pos.geometry()).unwrap()).unwrap();
        }
        let end = pos.outcome().expect("a finished game").to_string();
        assert!(head.ends_with(&end), "{head} / {end}");
        n += 1;
    }
    assert!((3..100000).contains(&n), "{n} games");
}

/// `play` and `engine` say what plays: the network file the spec resolves to, its size and
/// input encoding, and every search setting with the option that sets it.
#[test]
fn play_and_engine_print_the_network_and_the_search() {
    let spec = "az:model=models/brandubh,sims=4,probe=2,guard=3";
    let out = common::cli::ok(&run_stdin(&["play", "--agent", spec, "--side", "attackers"], "quit\n"));
    let about = out.lines().find(|l| l.starts_with("The AI: ")).unwrap_or_else(|| panic!("no description of the AI:\n{out}"));
    // The folder's default is the file its `latest` names (the shipping gate's choice): since
    // 2026-12-06 a network with one value layer per side to move.
    let shipped = std::fs::read_to_string("models/brandubh/latest").expect("models/brandubh/latest names the default");
    let shipped = shipped.trim();
    let network = format!("network models/brandubh/{shipped} (4 blocks x 32 channels with per-side values, input encoding 1");
    for part in [
        network.as_str(),
        "trained for brandubh",
        "search: PUCT (cpuct 1.5), 4 simulations a move (sims=)",
        "escape and fork probes (probe=2)",
        "guard of 3 plies (guard=)",
    ] {
        assert!(about.contains(part), "{part:?} not in {about:?}");
    }
    let o = run_stdin(&["engine", "--agent", "az:model=models/brandubh,time=0.5"], "goodbye\n");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("search: PUCT (cpuct 1.5), 0.5 s a move (time=), escape probe (probe=1), no guard (guard=0)"), "{err}");
}
