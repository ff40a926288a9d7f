//! tafl-lab's engine inside the real OpenTafl (0.4.8, `../shared/peers/opentafl`): whole games
//! hosted by `../shared/peers/opentafl-host.sh`, which passes a game only when the engine said
//! hello, had its rules accepted, never answered an error, had no move refused, and the game
//! ended with a result (not a loss on time) and a clean exit. Copenhagen and Brandub (OpenTafl's
//! built-in variants 3 and 6) with tafl-lab on each side, and the shipped brandubh model on its
//! own exported rules string; all on OpenTafl's clock (no `--movetime`). A game that OpenTafl's
//! side of the harness spoiled on a busy machine (`harness_failure`) is played again. Then every preset's
//! exported rules string is loaded by OpenTafl's own rules loader and read back.
//!
//! These tests need Java 17+ and the peers folder (see [`common::needs`]): without them each is
//! skipped with one line saying why, or fails under `CI=true`. The games share one OpenTafl
//! server port, so they run one at a time.

use crate::common;

use common::{require, Need};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use tafl_lab::rules::notation::{parse_rules_string, rules_string};
use tafl_lab::rules::variant::PRESETS;
use tafl_lab::rules::Variant;

/// One OpenTafl game (or build) at a time.
static OPENTAFL: Mutex<()> = Mutex::new(());

/// OpenTafl's clock for the games: 30 s of main time, then five 2 s overtime periods. Short
/// enough that a game takes well under a minute of the engine's thinking; the overtime keeps
/// OpenTafl's own AI (which sometimes overruns its plan by a few milliseconds) from losing on
/// time, which OpenTafl reports as `finish 0` and the host script counts as a failure.
const CLOCK: &str = "30000+2000/5+0";

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}
/// A wrapper the host starts as its engine: the built `tafl-lab engine` with `args`.
fn wrapper(tag: &str, args: &[&str]) -> PathBuf {
    let d = common::cli::scratch(&format!("opentafl-{tag}"));
    std::fs::create_dir_all(&d).unwrap();
    let bin = env!("CARGO_BIN_EXE_tafl-lab");
    let quoted: Vec<String> = args.iter().map(|a| format!("'{a}'")).collect();
    let script = d.join("engine.sh");
    std::fs::write(&script, format!("#!/usr/bin/env bash\nexec '{bin}' engine --protocol opentafl {} \"$@\"\n", quoted.join(" "))).unwrap();
    let mut perms = std::fs::metadata(&script).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&script, perms).unwrap();
    script
}

/// The transcript the host script's output names (empty if none).
fn transcript_of(text: &str) -> String {
    transcript_path(text).and_then(|p| std::fs::read_to_string(p).ok()).unwrap_or_default()
}

/// The transcript's path, from the host script's output.
fn transcript_path(text: &str) -> Option<PathBuf> {
    text.split_whitespace().skip_while(|w| *w != "transcript:").nth(1).map(|p| PathBuf::from(p.trim_end_matches(';')))
}

/// The host script's `FAIL:` lines.
fn fails(text: &str) -> Vec<&str> {
    text.lines().filter(|l| l.starts_with("FAIL")).collect()
}

/// Whether tafl-lab answered every `play` with a `move` before the game ended: when it did,
/// a game that ended without a result was not its loss on time.
fn engine_owed_no_move(transcript: &str) -> bool {
    let mut owed = false;
    for l in transcript.lines() {
        if l.starts_with("> play") {
            owed = true;
        } else if l.starts_with("< move") {
            owed = false;
        } else if l.starts_with("> finish") {
            break;
        }
    }
    !owed
}

/// Why a hosted game says nothing about tafl-lab, when OpenTafl's side of the harness failed
/// on a busy machine (each seen in loaded CI runs, where the games run beside the test suite):
/// - the host script waits fixed times for OpenTafl's server and host client (four JVMs start
///   on two cores); when one was not up in time the engine is never started;
/// - OpenTafl's own AI never made a move: it lost on time on its first move (`finish 0`), or
///   its client left and OpenTafl gave the game to tafl-lab at once (`finish 3` straight after
///   `rules`, which the script would pass although nothing was played). Only when nothing
///   points at tafl-lab: no error either way, no failure but the missing result, and no
///   `play` left unanswered (a crash, or tafl-lab's own loss on time, is its failure).
fn harness_failure(text: &str, transcript: &str) -> Option<&'static str> {
    let ai_never_moved = !transcript.lines().any(|l| l.starts_with("> opponent-move"));
    let no_errors = !transcript.lines().any(|l| l.starts_with("< error") || l.starts_with("> error"));
    let only_no_result = fails(text).iter().all(|f| f.contains("finish 1/2/3"));
    if text.contains("the engine was never started") {
        Some("OpenTafl never started the engine (its server or host client was not up in time)")
    } else if ai_never_moved && no_errors && only_no_result && engine_owed_no_move(transcript) {
        Some("OpenTafl's AI never made a move")
    } else {
        None
    }
}

/// The replay rule on transcripts of the kinds seen (no OpenTafl needed): only games that
/// OpenTafl's side spoiled are played again, never one where tafl-lab failed.
#[test]
fn only_games_opentafl_spoiled_count_as_harness_failures() {
    let rules = "> rules dim:7 name:Brandub start:/3t3/3t3/3T3/ttTKTtt/3T3/3t3/3t3/\n< hello\n< simple-moves on\n";
    let no_result = "FAIL: no finish 1/2/3 (finish 0 = lost on time): > finish 0\n0 passed, 1 failed";
    // Seen: OpenTafl gave the game to tafl-lab before anyone moved; the script passed it.
    let given = format!("{rules}> finish 3\n> goodbye\n# exit status=0 0\n");
    assert!(harness_failure("1 passed, 0 failed", &given).is_some());
    assert!(harness_failure("no transcript: the engine was never started\n0 passed, 1 failed", "").is_some());
    // OpenTafl's AI lost on time on its first move, tafl-lab waiting for it.
    let ai_late = format!("{rules}> finish 0\n> goodbye\n");
    assert!(harness_failure(no_result, &ai_late).is_some());
    // tafl-lab was asked to move and never answered: its own failure.
    let engine_late = format!("{rules}> clock 30000 30000 2 5 5\n> play attackers\n> finish 0\n> goodbye\n");
    assert!(!engine_owed_no_move(&engine_late));
    assert!(harness_failure(no_result, &engine_late).is_none());
    // Rules refused, or a move refused: tafl-lab's failure even though the AI never moved.
    let refused = format!("{rules}< error 0 unsupported\n> finish 0\n");
    assert!(harness_failure(no_result, &refused).is_none());
    let bad_move = format!("{rules}> play attackers\n< move d1-d9\n> error 1\n> finish 0\n");
    assert!(harness_failure(no_result, &bad_move).is_none());
    // Another failure beside the missing result (no hello): not the harness.
    assert!(harness_failure(&format!("FAIL: no hello\n{no_result}"), &ai_late).is_none());
    // A game played both ways is judged as it is.
    let played = format!("{rules}> play attackers\n< move d1-e1\n> opponent-move d4-d2 /x/\n> finish 2\n");
    assert!(engine_owed_no_move(&played));
    assert!(harness_failure("1 passed, 0 failed", &played).is_none());
}

/// The host script kills OpenTafl two seconds after the game ends, and fails the engine when
/// its wrapper has not yet logged the engine's exit status; on a loaded machine OpenTafl may
/// say `goodbye` late in those two seconds. The wrapper outlives that kill and still logs the
/// status, so a game whose only failure is that is judged by the status the engine exited
/// with, read within 20 s (the engine itself exits within 0.05 s of `goodbye`). Only after a
/// `goodbye`: an engine that ignored it would still exit 0 once the killed host closed its
/// input.
fn exited_cleanly_late(text: &str) -> bool {
    let only_exit_failure = matches!(fails(text)[..], [f] if f.contains("did not exit cleanly"));
    let Some(path) = transcript_path(text).filter(|_| only_exit_failure) else { return false };
    for _ in 0..40 {
        let t = std::fs::read_to_string(&path).unwrap_or_default();
        if let Some(status) = t.lines().find_map(|l| l.strip_prefix("# exit status=")) {
            if !t.lines().any(|l| l == "> goodbye") {
                eprintln!("the engine exited (status {status}) without a goodbye from OpenTafl");
                return false;
            }
            eprintln!("the engine's exit was logged after the host script's deadline: status {status}");
            return status.split_whitespace().next() == Some("0");
        }
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
    false
}

/// Plays one game in OpenTafl, hosted by `script` (the host script), and asserts the host
/// script passed it, with tafl-lab having made at least one move against a move of OpenTafl's AI.
fn game(script: &Path, tag: &str, engine_args: &[&str], rules: &str, side: &str) {
    let engine = wrapper(tag, engine_args);
    let _one_at_a_time = OPENTAFL.lock().unwrap_or_else(|e| e.into_inner());
    let host = || {
        let out = Command::new("bash")
            .arg(script)
            .args([engine.to_str().unwrap(), rules, side, "1", CLOCK])
            .stdin(Stdio::null())
            .output()
            .expect("bash runs the host script");
        format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
    };
    // A game is played again, three times at most in all: after a harness failure (above), and
    // once after a loss on time later in the game that was not tafl-lab's (OpenTafl 0.4.8
    // reports it as `finish 0` whichever side lost, and its own AI sometimes overruns; with
    // every `play` answered, the AI was the one on move). Any other failure fails at once.
    let mut text = host();
    let mut replays = 0;
    let mut time_losses = 0;
    while replays < 3 {
        let transcript = transcript_of(&text);
        let why = match harness_failure(&text, &transcript) {
            Some(why) => why,
            None if time_losses == 0
                && matches!(fails(&text)[..], [f] if f.contains("finish 1/2/3"))
                && text.contains("> finish 0")
                && engine_owed_no_move(&transcript) =>
            {
                time_losses += 1;
                "OpenTafl reported finish 0 (a loss on time)"
            }
            None => break,
        };
        replays += 1;
        eprintln!("{tag}: {why}; playing the game again ({replays}):\n{text}");
        text = host();
    }
    let transcript = transcript_of(&text);
    let tail: Vec<&str> = transcript.lines().rev().take(40).collect::<Vec<_>>().into_iter().rev().collect();
    let passed = text.contains("1 passed, 0 failed") || exited_cleanly_late(&text);
    let spoiled = harness_failure(&text, &transcript);
    assert!(
        passed && spoiled.is_none() && transcript.lines().any(|l| l.starts_with("< move")),
        "{tag}: OpenTafl did not pass the game (rules {rules}, engine {side}){}:\n{text}\ntranscript tail:\n{}",
        spoiled.map(|w| format!(" after {replays} replays; last: {w}")).unwrap_or_default(),
        tail.join("\n")
    );
    eprintln!("{tag}: {}", text.lines().find(|l| l.starts_with("transcript:")).unwrap_or(""));
}

#[test]
fn opentafl_copenhagen_with_tafl_lab_attacking() {
    let Some(host) = require(Need::OpenTafl) else { return };
    game(&host, "cph-att", &["--sims", "64"], "3", "attackers");
}

#[test]
fn opentafl_copenhagen_with_tafl_lab_defending() {
    let Some(host) = require(Need::OpenTafl) else { return };
    game(&host, "cph-def", &["--sims", "64"], "3", "defenders");
}

#[test]
fn opentafl_brandub_with_tafl_lab_attacking() {
    let Some(host) = require(Need::OpenTafl) else { return };
    game(&host, "brandub-att", &["--sims", "64"], "6", "attackers");
}

#[test]
fn opentafl_brandub_with_tafl_lab_defending() {
    let Some(host) = require(Need::OpenTafl) else { return };
    game(&host, "brandub-def", &["--sims", "64"], "6", "defenders");
}

/// The shipped model on its own rules: OpenTafl loads the model's exported rules string as a
/// user variant and sends back its own writing of it, which must give the model's rules again
/// (else the engine refuses them and the game fails).
#[test]
fn opentafl_hosts_the_shipped_model_on_its_own_rules() {
    let model = repo().join("models/brandubh");
    let meta: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(model.join("model.json")).unwrap()).unwrap();
    let own = meta["rules_opentafl"].as_str().expect("model.json states the model's OpenTafl rules string");
    let v = parse_rules_string(own).unwrap();
    assert_eq!(format!("{:016x}", v.rules_fingerprint()), meta["rules_fingerprint"].as_str().unwrap(), "{own}");
    assert_eq!(own, rules_string(&Variant::preset("brandubh").expect("preset")).unwrap(), "model.json holds today's export of its rules");
    let Some(host) = require(Need::OpenTafl) else { return };
    let d = common::cli::scratch("opentafl-model-rules");
    std::fs::create_dir_all(&d).unwrap();
    let rules_file = d.join("brandubh.otr");
    std::fs::write(&rules_file, format!("{own}\n")).unwrap();
    let m = model.to_str().unwrap();
    game(&host, "model", &["--model", m, "--sims", "64", "--device", "cpu"], rules_file.to_str().unwrap(), "defenders");
}

/// Compiles the round-trip helper against the OpenTafl build, building OpenTafl first (with a
/// game) when it is not there yet.
fn round_trip_helper(host: &Path) -> (PathBuf, String) {
    let work = common::needs::opentafl_work();
    if !work.join("out/com/manywords/softworks/tafl/OpenTafl.class").is_file() {
        game(host, "build", &["--sims", "64"], "6", "attackers");
    }
    let _one_at_a_time = OPENTAFL.lock().unwrap_or_else(|e| e.into_inner());
    let cp = [
        work.join("out"),
        work.join("lib/lanterna.jar"),
        "/usr/share/java/ini4j.jar".into(),
        "/usr/share/java/jline2.jar".into(),
        "/usr/share/java/javax.json.jar".into(),
        "/usr/share/java/javax.json-api.jar".into(),
    ]
    .iter()
    .map(|p: &PathBuf| p.display().to_string())
    .collect::<Vec<_>>()
    .join(":");
    let classes = common::cli::scratch("opentafl-round-trip");
    std::fs::create_dir_all(&classes).unwrap();
    let src = repo().join("tests/fixtures/opentafl/RulesRoundTrip.java");
    let o = Command::new("javac").args(["-nowarn", "-cp", &cp, "-d"]).arg(&classes).arg(&src).output().expect("javac runs");
    assert!(o.status.success(), "javac {}: {}", src.display(), String::from_utf8_lossy(&o.stderr));
    (classes, cp)
}

fn opentafl_reads(classes: &Path, cp: &str, strings: &[String]) -> Vec<String> {
    use std::io::Write;
    let mut child = Command::new("java")
        .args(["-cp", &format!("{}:{cp}", classes.display()), "RulesRoundTrip"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("java runs");
    child.stdin.take().unwrap().write_all(format!("{}\n", strings.join("\n")).as_bytes()).unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap().lines().map(str::to_string).collect()
}

/// Every preset's exported rules string, loaded by OpenTafl and written back by it, reads as
/// the same rules, except where OpenTafl has no word for a rule and drops tafl-lab's extension
/// (Copenhagen's `tfr:dl`, Tablut's `nm:d`) or reads `tfr:i` as a draw (OpenTafl 0.4.8 parses
/// only d, w and l). Those presets are listed here so that a change either way is noticed.
#[test]
fn every_preset_rules_string_round_trips_through_opentafl() {
    let Some(host) = require(Need::OpenTafl) else { return };
    let (classes, cp) = round_trip_helper(&host);
    let names: Vec<&str> = PRESETS.iter().map(|(n, _)| *n).collect();
    let strings: Vec<String> = names.iter().map(|n| rules_string(&Variant::preset(n).expect("preset")).unwrap()).collect();
    let back = opentafl_reads(&classes, &cp, &strings);
    assert_eq!(back.len(), names.len(), "{back:?}");
    let mut lossy = Vec::new();
    for ((name, ours), theirs) in names.iter().zip(&strings).zip(&back) {
        let v = Variant::preset(name).expect("preset");
        let read = parse_rules_string(theirs).unwrap_or_else(|e| panic!("{name}: OpenTafl wrote {theirs:?}, which tafl-lab refuses: {e}"));
        assert_eq!(read.layout, v.layout, "{name}");
        if read.rules != v.rules {
            lossy.push(*name);
            eprintln!("{name}: ours   {ours}\n{name}: theirs {theirs}");
        }
    }
    assert_eq!(lossy, ["copenhagen", "copenhagen-13", "tablut"], "presets whose rules OpenTafl cannot state");
}
