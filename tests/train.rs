//! The training loop through the command line: the smoke config end to end, resume after a
//! kill, corrupt shards, config errors, and workers feeding a trainer.

mod common;

use common::cli::{bin, fails_with, ok, run, scratch};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::Duration;
use tafl_lab::nn::checkpoint;
use tafl_lab::selfplay::shard;

fn fresh_dir(tag: &str) -> PathBuf {
    scratch(&format!("train-{tag}"))
}

fn metrics(dir: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(dir.join("metrics.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect()
}

fn generations(dir: &Path) -> Vec<u64> {
    metrics(dir).iter().map(|m| m["generation"].as_u64().unwrap()).collect()
}

fn shards(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir.join("games")).unwrap().map(|e| e.unwrap().path()).collect();
    v.sort();
    v
}

fn state_generation(dir: &Path) -> Option<u64> {
    let text = std::fs::read_to_string(dir.join("state.json")).ok()?;
    serde_json::from_str::<serde_json::Value>(&text).ok()?["generation"].as_u64()
}

const SMOKE: &str = "configs/runs/smoke.toml";

#[test]
fn smoke_run_writes_checkpoints_shards_and_metrics() {
    let dir = fresh_dir("smoke");
    let d = dir.to_str().unwrap();
    ok(&run(&["train", "--config", SMOKE, "--run-dir", d, "--quiet"]));
    assert_eq!(std::fs::read_to_string(dir.join("models/latest")).unwrap().trim(), "000002.safetensors");
    let meta = checkpoint::read_meta(&dir.join("models/000002.safetensors")).unwrap();
    assert_eq!((meta.generation, meta.variant.as_str()), (2, "brandubh"));
    assert!(dir.join("models/000002.optim.safetensors").exists());
    // 4 games per generation, 2 games per shard, 2 generations.
    let s = shards(&dir);
    assert_eq!(s.len(), 4, "{s:?}");
    let games: usize = s.iter().map(|p| shard::read(p).unwrap().games.len()).sum();
    assert_eq!(games, 8);
    let m = metrics(&dir);
    assert_eq!(generations(&dir), vec![1, 2]);
    for line in &m {
        assert_eq!(line["selfplay"]["games"], 4);
        let sp = &line["selfplay"];
        let total = sp["attackers_win"].as_f64().unwrap() + sp["defenders_win"].as_f64().unwrap() + sp["draws"].as_f64().unwrap();
        assert!((total - 1.0).abs() < 1e-9, "per-side rates add up: {sp}");
        assert!(line["loss"]["total"].as_f64().unwrap() > 0.0);
        let opponents: Vec<&str> = line["eval"].as_array().unwrap().iter().map(|e| e["opponent"].as_str().unwrap()).collect();
        assert_eq!(opponents, ["previous", "random"]);
    }
    assert!(m[1]["wall_seconds"].as_f64().unwrap() >= m[0]["wall_seconds"].as_f64().unwrap());
    // The saved config is the resolved one and parses on its own.
    let saved = std::fs::read_to_string(dir.join("config.toml")).unwrap();
    tafl_lab::train::RunConfig::from_toml(&saved, "config.toml").unwrap();
    // No temporary files are left behind.
    for sub in ["", "models", "games"] {
        for e in std::fs::read_dir(dir.join(sub)).unwrap() {
            let name = e.unwrap().file_name().into_string().unwrap();
            assert!(!name.contains(".tmp"), "{name}");
        }
    }
    // Starting again in the same directory needs --resume.
    fails_with(&run(&["train", "--config", SMOKE, "--run-dir", d]), "--resume");
}

fn wait_for(child: &mut Child, what: &str, mut done: impl FnMut() -> bool) {
    for _ in 0..1200 {
        if done() {
            return;
        }
        if let Ok(Some(status)) = child.try_wait() {
            panic!("process ended ({status}) before {what}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = child.kill();
    panic!("gave up waiting for {what}");
}

#[test]
fn resume_after_a_kill_continues_the_generations_and_keeps_every_shard() {
    let dir = fresh_dir("resume");
    let d = dir.to_str().unwrap();
    let mut child = bin()
        .args(["train", "--config", SMOKE, "--run-dir", d, "--generations", "1000", "--quiet"])
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for(&mut child, "generation 3", || state_generation(&dir).is_some_and(|g| g >= 3));
    child.kill().unwrap();
    child.wait().unwrap();
    let before = shards(&dir);
    let reached = state_generation(&dir).unwrap();
    let target = reached + 2;
    ok(&run(&["train", "--run-dir", d, "--resume", "--generations", &target.to_string(), "--quiet"]));
    assert_eq!(generations(&dir), (1..=target).collect::<Vec<_>>(), "each generation once, in order");
    assert_eq!(state_generation(&dir), Some(target));
    let after = shards(&dir);
    for s in &before {
        assert!(after.contains(s), "{} survived the resume", s.display());
    }
    assert!(after.len() > before.len());
    for s in &after {
        shard::read(s).unwrap_or_else(|e| panic!("{e}"));
    }
    fails_with(&run(&["train", "--run-dir", &format!("{d}-nothing"), "--resume"]), "nothing to resume");
}

#[test]
fn corrupt_shards_are_skipped_with_a_warning() {
    let dir = fresh_dir("corrupt");
    let d = dir.to_str().unwrap();
    ok(&run(&["train", "--config", SMOKE, "--run-dir", d, "--generations", "1", "--quiet"]));
    let s = shards(&dir);
    let bytes = std::fs::read(&s[0]).unwrap();
    std::fs::write(&s[0], &bytes[..bytes.len() - 7]).unwrap();
    let mut flipped = std::fs::read(&s[1]).unwrap();
    let last = flipped.len() - 1;
    flipped[last] ^= 0x55;
    std::fs::write(&s[1], flipped).unwrap();
    std::fs::write(dir.join("games/g000000-junk-0000.shard"), b"not a shard at all").unwrap();
    let o = run(&["train", "--run-dir", d, "--resume", "--generations", "2", "--quiet"]);
    ok(&o);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.matches("warning: skipping").count(), 3, "{err}");
    assert!(err.contains("truncated") && err.contains("checksum") && err.contains("bad magic"), "{err}");
    let m = metrics(&dir);
    assert_eq!(m.last().unwrap()["skipped_shards"], 3);
    assert_eq!(generations(&dir), vec![1, 2]);
}

#[test]
fn config_errors_are_one_line() {
    let dir = fresh_dir("config");
    std::fs::create_dir_all(&dir).unwrap();
    let smoke = std::fs::read_to_string(SMOKE).unwrap();
    let cases = [
        (smoke.replace("[train]", "[train]\nwindow = 5"), "unknown field `window`"),
        (smoke.replace("root = \"gumbel\"", "root = \"minimax\""), "selfplay.root"),
        (smoke.replace("batch_size = 32", "batch_size = 0"), "train.batch_size must be at least 1"),
        (smoke.replace("learning_rate = 0.01", "learning_rate = -1.0"), "train.learning_rate"),
        (smoke.replace("baselines = [\"random\"]", "baselines = [\"mcts:sims=x\"]"), "eval.baselines"),
        (smoke.replace("games = 2", "games = \"two\""), "line"),
    ];
    for (i, (text, needle)) in cases.iter().enumerate() {
        let path = dir.join(format!("bad{i}.toml"));
        std::fs::write(&path, text).unwrap();
        let o = run(&["train", "--config", path.to_str().unwrap(), "--run-dir", dir.join(format!("run{i}")).to_str().unwrap()]);
        fails_with(&o, needle);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(&format!("bad{i}.toml")), "names the file: {err}");
        assert!(!dir.join(format!("run{i}")).exists(), "nothing written for a bad config");
    }
    fails_with(&run(&["train", "--config", "/nonexistent/x.toml"]), "/nonexistent/x.toml");
}

#[test]
fn two_workers_feed_a_trainer() {
    let dir = fresh_dir("workers");
    std::fs::create_dir_all(&dir).unwrap();
    let cfg = dir.join("workers.toml");
    let text = std::fs::read_to_string(SMOKE).unwrap().replace("games_per_shard = 2", "games_per_shard = 2\nin_process = false");
    std::fs::write(&cfg, text).unwrap();
    let run_dir = dir.join("run");
    let d = run_dir.to_str().unwrap();
    let mut trainer = bin().args(["train", "--config", cfg.to_str().unwrap(), "--run-dir", d, "--quiet"]).stderr(Stdio::null()).spawn().unwrap();
    wait_for(&mut trainer, "the first model", || run_dir.join("models/latest").exists());
    let mut workers: Vec<Child> = ["alpha", "beta"]
        .iter()
        .map(|name| bin().args(["selfplay", "--run-dir", d, "--name", name, "--quiet"]).stderr(Stdio::null()).spawn().unwrap())
        .collect();
    let mut status = None;
    for _ in 0..1200 {
        if let Some(s) = trainer.try_wait().unwrap() {
            status = Some(s);
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    for w in &mut workers {
        let _ = w.kill();
        let _ = w.wait();
    }
    let status = status.unwrap_or_else(|| {
        let _ = trainer.kill();
        panic!("the trainer did not finish")
    });
    assert!(status.success());
    assert_eq!(generations(&run_dir), vec![1, 2]);
    let names: Vec<String> = shards(&run_dir).iter().map(|p| p.file_name().unwrap().to_string_lossy().into_owned()).collect();
    assert!(names.iter().any(|n| n.contains("-alpha-")) && names.iter().any(|n| n.contains("-beta-")), "{names:?}");
    assert!(names.iter().any(|n| n.starts_with("g000001-")), "workers picked up the new model: {names:?}");
    assert!(!names.iter().any(|n| n.contains("trainer")), "the trainer played no games itself");
    for m in metrics(&run_dir) {
        assert!(m["selfplay"]["games"].as_u64().unwrap() >= 4);
    }
}
