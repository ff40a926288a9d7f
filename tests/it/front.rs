//! The `tafl-lab` front binary: rules-only commands run without LibTorch; everything else is
//! handed to `tafl-lab-torch`; `replay --games` checks many games in one process.

use crate::common;

use common::cli::{bin, fails_with, ok, run, scratch};
use std::io::Write;
use std::process::Stdio;

/// While `tafl-lab replay -` waits for its input, its memory map holds no LibTorch library;
/// a command that needs a network (`doctor`) runs in a process that has one.
#[cfg(target_os = "linux")]
#[test]
fn rules_commands_run_without_libtorch_and_the_rest_with_it() {
    let maps_of = |args: &[&str]| {
        let mut child = bin().args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
        // The process is blocked reading standard input: its libraries are all loaded.
        std::thread::sleep(std::time::Duration::from_millis(300));
        let maps = std::fs::read_to_string(format!("/proc/{}/maps", child.id())).unwrap_or_default();
        child.stdin.take().unwrap().write_all(b"").unwrap();
        let o = child.wait_with_output().unwrap();
        (maps, o)
    };
    let (maps, o) = maps_of(&["replay", "--variant", "brandubh", "-"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(!maps.is_empty(), "read the front binary's memory map");
    assert!(!maps.contains("libtorch"), "the rules-only replay loaded LibTorch");
    // `engine` reads its protocol from standard input too, in the LibTorch binary.
    let (maps, _) = maps_of(&["engine"]);
    assert!(maps.contains("libtorch_cpu"), "engine runs in tafl-lab-torch, with LibTorch");
}

#[test]
fn every_command_is_reachable_through_the_front() {
    let help = ok(&run(&["--help"]));
    for cmd in ["variants", "perft", "replay", "analyze", "match", "train", "balance", "calibrate", "export", "engine", "bench", "doctor"] {
        assert!(help.lines().any(|l| l.trim_start().starts_with(cmd)), "{cmd} in --help:\n{help}");
    }
    assert!(ok(&run(&["doctor"])).contains("libtorch"));
    assert_eq!(ok(&run(&["perft", "--variant", "brandubh", "--depth", "2"])).trim(), "960");
    // Errors keep the one-line form on both sides of the hand-over.
    fails_with(&run(&["perft", "--variant", "nosuch", "--depth", "1"]), "nosuch");
    fails_with(&run(&["match", "--a", "nosuch", "--b", "random"]), "nosuch");
    fails_with(&run(&["no-such-command"]), "no-such-command");
}

#[test]
fn replay_games_gives_one_verdict_per_game_line() {
    let d = scratch("replay-games");
    std::fs::create_dir_all(&d).unwrap();
    let file = d.join("games.txt");
    let king_captured = std::fs::read_to_string("tests/fixtures/games/brandubh-king-captured.txt").unwrap().replace('\n', " ");
    let text = format!("# a comment, then a blank line\n\n{king_captured}\nd2-b2 c4-c2\nd2-d4\n1. d2-b2 d3-b3 2. g4-g2\n");
    std::fs::write(&file, text).unwrap();
    let o = run(&["replay", "--variant", "brandubh", "--games", file.to_str().unwrap()]);
    let out = ok(&o);
    let v: Vec<serde_json::Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(v.len(), 4, "{out}");
    assert_eq!((v[0]["line"].as_u64(), v[0]["plies"].as_u64()), (Some(3), Some(7)));
    assert_eq!((v[0]["status"].as_str(), v[0]["reason"].as_str()), (Some("attackers_win"), Some("king_captured")));
    assert!(v[0]["error"].is_null());
    assert_eq!((v[1]["plies"].as_u64(), v[1]["status"].as_str()), (Some(2), Some("ongoing")));
    // d2-d4 jumps over d3: an error naming ply 1, and the games after it still replay.
    assert_eq!(v[2]["plies"], 0);
    assert!(v[2]["error"].as_str().unwrap().starts_with("ply 1:"), "{}", v[2]);
    assert_eq!((v[3]["plies"].as_u64(), v[3]["error"].is_null()), (Some(3), true), "{}", v[3]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("replayed 4 games: 3 legal to the end, 1 with an error"), "{err}");
    // The same games one process each give the same verdicts (ply counts and results).
    let single = ok(&run(&["replay", "--variant", "brandubh", "tests/fixtures/games/brandubh-king-captured.txt"]));
    let last: serde_json::Value = serde_json::from_str(single.lines().last().unwrap()).unwrap();
    assert_eq!((last["ply"].as_u64(), &last["status"]), (Some(7), &v[0]["status"]));
    let _ = std::fs::remove_dir_all(&d);
}

/// `bench search --json` reports what it measured: every lane's figures (one lane per core by
/// default, as `train` runs its workers), search evaluations that happened, and the default
/// config's self-play playing the games asked for on that config's workers.
#[test]
fn bench_search_measures_on_lanes_and_plays_the_default_games() {
    let out = ok(&run(&["bench", "search", "--json", "--seconds", "0.3", "--positions-per-call", "16", "--variants", "brandubh", "--selfplay-games", "3"]));
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}"));
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
    assert_eq!(v["lanes"], cores, "{v}");
    assert_eq!(v["torch_threads"], 1, "{v}");
    let b = &v["brandubh"];
    for k in ["raw_evals_per_s", "search_evals_per_s", "network_evals_per_s"] {
        assert!(b[k].as_f64().unwrap() > 0.0, "{k}: {v}");
    }
    assert!(b["mean_batch"].as_f64().unwrap() <= 16.0, "{v}");
    assert_eq!(v["default_selfplay"]["games"], 3, "{v}");
    assert!(v["default_selfplay"]["moves"].as_u64().unwrap() >= 3 * 4, "{v}");
    assert!(v["selfplay_games_per_hour"].as_f64().unwrap() > 0.0, "{v}");
}
