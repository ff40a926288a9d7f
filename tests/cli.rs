//! The command-line contract: output formats, exit codes and one-line errors.

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tafl-lab")).args(args).output().expect("binary runs")
}

fn run_stdin(args: &[&str], input: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tafl-lab"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("binary runs");
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A failed command: exit code 1 and exactly one line on stderr, which contains `needle`.
fn fails_with(o: &Output, needle: &str) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "stderr: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    assert!(err.contains(needle), "`{needle}` not in: {err}");
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
