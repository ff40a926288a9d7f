//! Run directories under more than one process: one trainer per run (the lock), and a
//! worker-mode resume whose replay window holds each stored game exactly once.

use crate::common;

use common::cli::{bin, fails_with, ok, run, scratch};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;
use tafl_lab::selfplay::shard;

const SMOKE: &str = "configs/runs/smoke.toml";

/// The smoke config with self-play left to worker processes, written into `dir`.
fn worker_config(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join("workers.toml");
    let text = std::fs::read_to_string(SMOKE).unwrap().replace("games_per_shard = 2", "games_per_shard = 2\nin_process = false");
    std::fs::write(&path, text).unwrap();
    path
}

fn state_exists(dir: &Path) -> bool {
    dir.join("state.json").is_file()
}

/// A second trainer on a run that one holds is refused with one line naming the holder; once
/// the holder is killed (SIGKILL: no clean-up runs), the next trainer takes the run over.
#[test]
fn a_second_trainer_on_a_held_run_is_refused_and_a_dead_holders_run_is_taken_over() {
    let dir = scratch("rundir-lock");
    let cfg = worker_config(&dir);
    let run_dir = dir.join("run");
    let d = run_dir.to_str().unwrap();
    // Without workers the trainer waits for games for its whole budget: it holds the run.
    let mut first =
        bin().args(["train", "--config", cfg.to_str().unwrap(), "--run-dir", d, "--minutes", "5", "--quiet"]).stderr(Stdio::null()).spawn().unwrap();
    let mut waited = 0;
    while !state_exists(&run_dir) {
        assert!(first.try_wait().unwrap().is_none(), "the first trainer ended early");
        assert!(waited < 1200, "the first trainer never created its run");
        std::thread::sleep(Duration::from_millis(100));
        waited += 1;
    }
    let second = run(&["train", "--run-dir", d, "--resume", "--minutes", "5", "--quiet"]);
    fails_with(&second, "another trainer holds this run");
    fails_with(&second, &format!("process {}", first.id()));
    // Nor may a new run be started over it.
    fails_with(&run(&["train", "--config", cfg.to_str().unwrap(), "--run-dir", d, "--quiet"]), "already holds a run");
    first.kill().unwrap();
    first.wait().unwrap();
    // The kernel dropped the dead holder's lock: a resume takes the run over.
    let o = run(&["train", "--run-dir", d, "--resume", "--minutes", "0.01", "--quiet"]);
    ok(&o);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("another trainer"), "{err}");
}

/// Positions in the replay window after each generation, from metrics.jsonl.
fn window_positions(dir: &Path) -> Vec<u64> {
    std::fs::read_to_string(dir.join("metrics.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["window_positions"].as_u64().unwrap())
        .collect()
}

/// A worker-mode run stopped while it waited for its first generation's games, which
/// workers then wrote: the resumed trainer reads those shards into the window when it starts
/// and collects the same shards as the generation's games. The window then holds each
/// stored position once: exactly the positions of the shards on disk.
#[test]
fn a_worker_mode_resume_holds_each_stored_game_once_in_the_window() {
    let dir = scratch("rundir-window");
    let cfg = worker_config(&dir);
    let run_dir = dir.join("run");
    let d = run_dir.to_str().unwrap();
    ok(&run(&["train", "--config", cfg.to_str().unwrap(), "--run-dir", d, "--minutes", "0.02", "--quiet"]));
    // Two shards of generation 0 from a worker, four games (the generation's number).
    let brandubh = tafl_lab::rules::Variant::preset("brandubh").unwrap().rules_fingerprint();
    let mut positions = 0;
    for k in 0..2u64 {
        let games: Vec<_> = (0..2).map(|i| common::games::random_stored_game("brandubh", 10 * k + i, Some(2 * k + i))).collect();
        positions += games.iter().map(|g| g.plies.len() as u64).sum::<u64>();
        let s = shard::Shard { rules_fingerprint: brandubh, model_generation: 0, writer: "w-1".into(), games };
        shard::write(&run_dir.join("games").join(shard::file_name(0, "w-1", k as usize)), &s).unwrap();
    }
    assert!(positions < 5000, "the window (5000 positions) evicts nothing here: {positions}");
    let o = run(&["train", "--run-dir", d, "--resume", "--minutes", "5", "--generations", "1", "--quiet"]);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "{err}");
    assert!(err.contains(&format!("generation 0, {positions} positions in the window")), "read at the start: {err}");
    assert_eq!(window_positions(&run_dir), vec![positions], "each stored position once after the generation");
}

/// Shards come from other machines: a shard that replays legally but whose numbers are not
/// training targets (a policy weight of 3e38, a move listed twice in a policy, a NaN root
/// value) is refused with a warning that names the file, its writer and what is wrong, and
/// the run trains on the rest.
#[test]
fn poisoned_shards_are_refused_by_name() {
    let dir = scratch("rundir-poison");
    let run_dir = dir.join("run");
    let d = run_dir.to_str().unwrap();
    ok(&run(&["train", "--config", SMOKE, "--run-dir", d, "--generations", "1", "--quiet"]));
    let brandubh = tafl_lab::rules::Variant::preset("brandubh").unwrap().rules_fingerprint();
    type Poison = fn(&mut shard::StoredPly);
    let poisons: [(&str, Poison, &str); 4] = [
        ("huge", |p| p.policy[0].1 = 3e38, "is not in [0, 1]"),
        ("twice", |p| p.policy.push(p.policy[0]), "appears twice"),
        ("nan", |p| p.value = f32::NAN, "root value NaN is not a number in [-1, 1]"),
        ("sum", |p| p.policy.iter_mut().for_each(|w| w.1 *= 0.5), ", not 1"),
    ];
    for (k, (writer, poison, _)) in poisons.iter().enumerate() {
        let mut g = common::games::random_stored_game("brandubh", 100 + k as u64, Some(0));
        poison(&mut g.plies[0]);
        let s = shard::Shard { rules_fingerprint: brandubh, model_generation: 0, writer: writer.to_string(), games: vec![g] };
        shard::write(&run_dir.join("games").join(shard::file_name(0, writer, 0)), &s).unwrap();
    }
    let o = run(&["train", "--run-dir", d, "--resume", "--generations", "2", "--quiet"]);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "{err}");
    for (writer, _, why) in poisons {
        let file = shard::file_name(0, writer, 0);
        let line = err.lines().find(|l| l.contains(&file)).unwrap_or_else(|| panic!("no warning for {file}: {err}"));
        assert!(line.starts_with("warning: skipping"), "{line}");
        assert!(line.contains(&format!("invalid shard written by \"{writer}\": game 1: ply 1: ")) && line.contains(why), "{line}");
    }
}
