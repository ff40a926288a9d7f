//! `tafl-lab engine --protocol htp` through a scripted HTP host: whole games where every
//! `generate_move` and every capture list is checked against tafl-lab's own rules and
//! `final_status` against the rules' verdict; bad lines answered with `?` and a blank line
//! while the engine plays on; `quit` and the end of input end it.

use crate::common;

use common::cli::{bin, run_stdin, run_stdin_bytes};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Stdio};
use std::sync::Arc;
use tafl_lab::rules::{Move, Position, Side, Square, Variant};

/// An engine process and the host's end of its pipes.
struct Host {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

/// One answer: `Ok` for `= ...`, `Err` for `? ...` (whose blank line was read too).
type Answer = Result<String, String>;

impl Host {
    fn start(extra: &[&str]) -> Host {
        let mut args = vec!["engine", "--protocol", "htp"];
        args.extend_from_slice(extra);
        let mut child = bin().args(&args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::inherit()).spawn().expect("engine starts");
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Host { child, stdin, stdout }
    }

    fn line(&mut self) -> String {
        let mut l = String::new();
        let n = self.stdout.read_line(&mut l).unwrap();
        assert!(n > 0, "the engine closed its output");
        l.trim_end_matches('\n').to_string()
    }

    /// Sends raw bytes (a line, newline included) and reads a one-line answer.
    fn send_bytes(&mut self, bytes: &[u8]) -> Answer {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
        let l = self.line();
        if let Some(m) = l.strip_prefix("= ") {
            return Ok(m.to_string());
        }
        let e = l.strip_prefix("? ").unwrap_or_else(|| panic!("not an HTP answer: {l:?}")).to_string();
        assert_eq!(self.line(), "", "a failure ends with a blank line");
        Err(e)
    }

    fn send(&mut self, cmd: &str) -> Answer {
        self.send_bytes(format!("{cmd}\n").as_bytes())
    }

    fn ok(&mut self, cmd: &str) -> String {
        self.send(cmd).unwrap_or_else(|e| panic!("{cmd:?} -> ? {e}"))
    }

    fn fails(&mut self, cmd: &str) -> String {
        match self.send(cmd) {
            Err(e) => e,
            Ok(m) => panic!("{cmd:?} -> = {m}"),
        }
    }

    /// Closes the engine's input and waits for it; it must exit 0 having written nothing more.
    fn close(mut self) {
        drop(self.stdin.take());
        let mut rest = String::new();
        std::io::Read::read_to_string(&mut self.stdout, &mut rest).unwrap();
        assert_eq!(rest, "", "nothing after the end of input");
        let status = self.child.wait().unwrap();
        assert!(status.success(), "{status}");
    }
}

fn role(side: Side) -> &'static str {
    match side {
        Side::Attackers => "attacker",
        Side::Defenders => "defender",
    }
}

/// A square as the engine writes it on this board: lower case, upper case on 13x13.
fn square_text(sq: Square, size: u8) -> String {
    if size == 13 {
        sq.to_string().to_uppercase()
    } else {
        sq.to_string()
    }
}

/// The rules' verdict in HTP's words.
fn status(pos: &Position) -> &'static str {
    match pos.outcome().map(|o| o.winner) {
        None => "ongoing",
        Some(Some(Side::Attackers)) => "attacker_wins",
        Some(Some(Side::Defenders)) => "defender_wins",
        Some(None) => "draw",
    }
}

/// Asks for a move and checks it against `pos` (the right side, a legal move, the reply's
/// format), then plays it on `pos` and returns it.
fn engine_moves(h: &mut Host, pos: &mut Position) -> Move {
    let size = pos.geometry().size();
    let r = h.ok("generate_move");
    // play ROLE FROM TO, score: V, delay milliseconds: D, loops: N
    let (play, rest) = r.split_once(", ").unwrap_or_else(|| panic!("{r}"));
    let w: Vec<&str> = play.split(' ').collect();
    assert_eq!(w.len(), 4, "{r}");
    assert_eq!((w[0], w[1]), ("play", role(pos.to_move())), "{r}");
    let from: Square = w[2].to_lowercase().parse().unwrap();
    let to: Square = w[3].to_lowercase().parse().unwrap();
    assert_eq!((w[2], w[3]), (square_text(from, size).as_str(), square_text(to, size).as_str()), "{r}");
    let fields: Vec<&str> = rest.split(", ").collect();
    assert_eq!(fields.len(), 3, "{r}");
    let score: f64 = fields[0].strip_prefix("score: ").unwrap().parse().unwrap();
    assert!((-1.0..=1.0).contains(&score), "{r}");
    fields[1].strip_prefix("delay milliseconds: ").unwrap().parse::<u64>().unwrap();
    fields[2].strip_prefix("loops: ").unwrap().parse::<u64>().unwrap();
    let mv = Move::new(from, to);
    assert!(pos.is_legal(mv), "{r} is not legal in\n{pos}");
    pos.play(mv).unwrap();
    mv
}

/// The host moves (the first legal move, or a capture when there is one) and checks the
/// engine's capture list against the rules'.
fn host_moves(h: &mut Host, pos: &mut Position) {
    let size = pos.geometry().size();
    let moves = pos.legal_moves();
    let capture = moves.iter().copied().find(|&m| {
        let mut p = pos.clone();
        !p.play(m).unwrap().is_empty()
    });
    let mv = capture.unwrap_or(moves[moves.len() / 2]);
    let side = pos.to_move();
    let captures = pos.play(mv).unwrap();
    let answer = h.ok(&format!("play {} {} {}", role(side), square_text(mv.from, size), square_text(mv.to, size)));
    let mut got: Vec<Square> = answer.split_whitespace().map(|s| s.to_lowercase().parse().unwrap()).collect();
    got.sort();
    assert_eq!(got, captures, "captures of {mv}: {answer:?}");
    assert!(answer.is_empty() || answer.ends_with(' '), "each capture followed by a space: {answer:?}");
}

/// Plays from the engine's current game to the end (or `cap` plies): the engine's moves by
/// `generate_move`, the host's (every other ply when `host_plays`) by `play`. Returns the
/// plies played.
fn play_out(h: &mut Host, pos: &mut Position, host_plays: bool, cap: usize) -> usize {
    let mut plies = 0;
    while !pos.is_over() && plies < cap {
        if host_plays && plies % 2 == 1 {
            host_moves(h, pos);
        } else {
            engine_moves(h, pos);
        }
        plies += 1;
        if plies % 10 == 0 {
            assert_eq!(h.ok("final_status"), status(pos));
        }
    }
    assert_eq!(h.ok("final_status"), status(pos), "after {plies} plies:\n{pos}");
    if pos.is_over() {
        assert!(h.fails("generate_move").contains("over"));
    }
    plies
}

/// The start of a preset with `first` to move.
fn start(preset: &str, first: Side) -> Position {
    let v = Arc::new(Variant::preset(preset).expect("preset"));
    let mut s = Position::start(v.clone()).to_setup();
    s.to_move = first;
    Position::from_setup(v, &s).unwrap()
}

#[test]
fn rollout_mcts_plays_whole_games_the_rules_agree_with() {
    let mut h = Host::start(&["--sims", "8"]);
    assert_eq!(h.ok("name"), "tafl-lab");
    assert_eq!(h.ok("protocol_version"), "1-beta");
    assert_eq!(h.ok("known_command generate_move"), "true");
    assert_eq!(h.ok("known_command frobnicate"), "false");
    // The default board is 11x11 Copenhagen, attackers first.
    assert_eq!(h.ok("show_board_open_tafl"), "/3AAAAA3/5A5/11/A4D4A/A3DDD3A/AA1DDKDD1AA/A3DDD3A/A4D4A/11/5A5/3AAAAA3/");
    let mut pos = start("copenhagen", Side::Attackers);
    play_out(&mut h, &mut pos, true, 16);

    // 7x7: Brandubh, the defenders first as in hnefatafl-copenhagen; the engine plays both
    // sides to the end.
    assert_eq!(h.ok("board_size 7"), "");
    let mut pos = start("brandubh", Side::Defenders);
    let plies = play_out(&mut h, &mut pos, false, 2000);
    assert!(pos.is_over(), "a Brandubh game ends (repetition loses): {plies} plies");

    // Again with attackers first and the host on one side.
    assert_eq!(h.ok("first_move attacker"), "");
    let mut pos = start("brandubh", Side::Attackers);
    play_out(&mut h, &mut pos, true, 2000);
    assert!(pos.is_over());

    // 13x13: squares in upper case.
    assert_eq!(h.ok("board_size 13"), "");
    let mut pos = start("copenhagen-13", Side::Attackers);
    play_out(&mut h, &mut pos, true, 6);

    // A Fischer clock budgets the moves; the game goes on.
    assert_eq!(h.ok("time_settings fischer 1 1"), "");
    let mut pos = start("copenhagen-13", Side::Attackers);
    play_out(&mut h, &mut pos, true, 2);
    h.close();
}

#[test]
fn the_brandubh_model_plays_a_whole_game_on_board_size_7() {
    let mut h = Host::start(&["--model", "models/brandubh", "--sims", "16"]);
    assert!(h.fails("board_size 11").contains("model plays brandubh"));
    assert_eq!(h.ok("board_size 7"), "");
    let mut pos = start("brandubh", Side::Defenders);
    play_out(&mut h, &mut pos, true, 2000);
    assert!(pos.is_over());
    h.close();
}

#[test]
fn bad_lines_are_answered_with_a_question_mark_and_the_engine_plays_on() {
    let mut h = Host::start(&["--sims", "8"]);
    h.ok("board_size 7");
    let mut pos = start("brandubh", Side::Defenders);
    for bad in [
        "play attacker z99 z98",
        "play defender z99 z98",
        "play attacker d7 c7", // the defenders' turn
        "play defender d7 c7", // an attacker's piece
        "play defender d5 d4", // onto the king
        "play defender d5 d6", // onto an attacker
        "play defender d5 e6", // not along a line
        "play defender d5",
        "play",
        "play knight d5 c5",
        "play attacker resigns", // not the attackers' turn
        "generate_move attacker",
        "frobnicate",
        "}{ ?! \u{7f}",
        "board_size 9",
        "board_size seven",
        "board_size",
        "first_move king",
        "time_settings fischer -1 5",
        "time_settings fischer 1",
        "time_settings sudden-death",
        "known_command",
        "play_to defender",
        "play_to defender a1",
        "play_undo",
    ] {
        let e = h.fails(bad);
        assert!(!e.is_empty(), "{bad:?}: a reason");
        assert_eq!(h.ok("final_status"), "ongoing", "after {bad:?}");
    }
    // Not UTF-8 (refused as such), and a line of NULs (an unknown command): not the end of
    // the engine.
    h.send_bytes(b"\xff\xfe play\n").unwrap_err();
    h.send_bytes(b"\0\0\0\n").unwrap_err();
    // A comment after a command is ignored; a comment-only line gets no answer.
    h.stdin.as_mut().unwrap().write_all(b"# only a comment\n   \n").unwrap();
    assert_eq!(h.ok("play defender D5 C5 # the comment"), "");
    pos.play(Move::new("d5".parse().unwrap(), "c5".parse().unwrap())).unwrap();
    // Undo and redo.
    assert_eq!(h.ok("play_undo"), "");
    assert_eq!(h.ok("play d d5 c5"), "");
    play_out(&mut h, &mut pos, true, 12);
    h.close();
}

#[test]
fn a_line_that_is_not_utf8_is_answered_with_a_failure_and_the_next_command_with_its_answer() {
    // `name` with a byte that is not UTF-8: a failure, though the command alone would succeed;
    // then `name` itself is answered.
    let o = run_stdin_bytes(&["engine", "--protocol", "htp", "--sims", "4"], b"name \xff\xfe\nname\n");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(String::from_utf8(o.stdout).unwrap(), "? the line is not UTF-8: \"name \u{fffd}\u{fffd}\"\n\n= tafl-lab\n");
}

#[test]
fn quit_and_the_end_of_input_end_the_engine() {
    let o = run_stdin(&["engine", "--protocol", "htp", "--sims", "4"], "name\nquit\nname\n");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(String::from_utf8_lossy(&o.stdout), "= tafl-lab\n");
    // What plays is said on standard error, which is not protocol.
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.starts_with("tafl-lab engine (htp): agent mcts:sims=4"), "{err}");
    let o = run_stdin(&["engine", "--protocol", "htp", "--sims", "4", "--movetime", "250"], "quit\n");
    assert!(String::from_utf8_lossy(&o.stderr).contains("250 ms a move"), "{}", String::from_utf8_lossy(&o.stderr));
    let o = run_stdin(&["engine", "--protocol", "htp", "--sims", "4"], "board_size 7\nfoo");
    assert!(o.status.success());
    assert_eq!(String::from_utf8_lossy(&o.stdout), "= \n? unrecognized command: foo\n\n");
    let o = run_stdin(&["engine", "--protocol", "htp"], "");
    assert!(o.status.success());
    assert_eq!(o.stdout, b"");
    let o = run_stdin(&["engine", "--protocol", "gtp"], "");
    assert_eq!(o.status.code(), Some(1));
}

#[test]
fn the_guard_speaks_through_the_htp_engine() {
    // The guard's position (an OpenTafl game the brandubh network lost): the engine's
    // rollout search walks into a 7-ply forced loss at some budgets; with `guard=7` never.
    use common::guard_game::{brandubh_after, loses_within, BEFORE_D2_B2};
    let p = brandubh_after(BEFORE_D2_B2);
    let loses = |m: Move| loses_within(&p, m, 7);
    let engine_move = |agent: &str| {
        let mut h = Host::start(&["--agent", agent]);
        assert_eq!(h.ok("board_size 7"), "");
        assert_eq!(h.ok("first_move attacker"), "");
        let mut pos = start("brandubh", Side::Attackers);
        for m in BEFORE_D2_B2.split_whitespace() {
            let mv = Move::parse(m, pos.geometry()).unwrap();
            let side = pos.to_move();
            pos.play(mv).unwrap();
            h.ok(&format!("play {} {} {}", role(side), square_text(mv.from, 7), square_text(mv.to, 7)));
        }
        let m = engine_moves(&mut h, &mut pos);
        h.close();
        m
    };
    let mut walked_in = 0;
    for sims in [32, 48, 64, 96] {
        walked_in += usize::from(loses(engine_move(&format!("mcts:sims={sims}"))));
        let m = engine_move(&format!("mcts:sims={sims},guard=7"));
        assert!(!loses(m), "sims={sims}: the guarded engine played {m}, lost within 7 plies");
    }
    assert!(walked_in >= 1, "the unguarded engine walks into the loss at some budget");
}
