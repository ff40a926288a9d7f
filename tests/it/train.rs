//! The training loop through the command line: the smoke config end to end, resume after a
//! kill, corrupt shards, config errors, and workers feeding a trainer.

use crate::common;

use common::cli::{bin, fails_with, ok, run, scratch};
use common::old_names::with_old_names;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::Duration;
use tafl_lab::nn::checkpoint;
use tafl_lab::selfplay::shard;

fn fresh_dir(tag: &str) -> PathBuf {
    scratch(&format!("train-{tag}"))
}

fn metrics(dir: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(dir.join("metrics.jsonl")).unwrap().lines().map(|l| serde_json::from_str(l).expect("each line is JSON")).collect()
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
    // Each generation's calibration: one observation per fully searched ply of its games (the
    // shards of the model before it), by side to move, realized as the games' results say.
    for (k, line) in m.iter().enumerate() {
        let (mut count, mut realized) = ([0u64; 2], [0.0f64; 2]);
        for sh in s.iter().map(|p| shard::read(p).unwrap()).filter(|sh| sh.model_generation == k as u64) {
            for g in &sh.games {
                for (i, _) in g.plies.iter().enumerate().filter(|(_, p)| p.full) {
                    // Brandubh: the attackers move first.
                    let side = if i % 2 == 0 { tafl_lab::rules::Side::Attackers } else { tafl_lab::rules::Side::Defenders };
                    count[i % 2] += 1;
                    realized[i % 2] += match g.outcome.winner {
                        Some(w) if w == side => 1.0,
                        Some(_) => 0.0,
                        None => 0.5,
                    };
                }
            }
        }
        assert!(count[0] > 0 && count[1] > 0, "{count:?}");
        for (side, i) in [("attackers", 0), ("defenders", 1)] {
            let c = &line["calibration"][side];
            assert_eq!(c["count"].as_u64(), Some(count[i]), "generation {}: {side}", k + 1);
            assert!((c["mean_realized"].as_f64().unwrap() - realized[i] / count[i] as f64).abs() < 1e-9, "{c}");
            let p = c["mean_predicted"].as_f64().unwrap();
            assert!((0.0..=1.0).contains(&p) && c["brier"].as_f64().unwrap() <= 1.0, "{c}");
        }
    }
    // What the trainer writes is what the report reads: every line a whole `MetricsLine`.
    let typed = tafl_lab::report::learning::read_metrics(&dir.join("metrics.jsonl")).unwrap();
    assert_eq!(typed.iter().map(|t| t.generation).collect::<Vec<_>>(), [1, 2]);
    for (t, line) in typed.iter().zip(&m) {
        assert_eq!(&serde_json::to_value(t).unwrap(), line);
        let vs_random = &t.eval[1];
        assert_eq!(vs_random.as_attackers.games() + vs_random.as_defenders.games(), vs_random.games);
    }
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

/// Kills `child` as soon as `file` exists, polling every 2 ms (a smoke generation takes
/// milliseconds: [`wait_for`]'s 100 ms would miss the middle of one).
fn kill_when_written(child: &mut Child, file: &Path) {
    let t = std::time::Instant::now();
    while !file.exists() {
        assert!(child.try_wait().unwrap().is_none(), "the trainer ended early");
        assert!(t.elapsed() < Duration::from_secs(120), "no {}", file.display());
        std::thread::sleep(Duration::from_millis(2));
    }
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn resume_after_a_kill_continues_the_generations_and_keeps_every_shard() {
    let dir = fresh_dir("resume");
    let d = dir.to_str().unwrap();
    let mut child = bin().args(["train", "--config", SMOKE, "--run-dir", d, "--generations", "1000", "--quiet"]).stderr(Stdio::null()).spawn().unwrap();
    wait_for(&mut child, "generation 3", || state_generation(&dir).is_some_and(|g| g >= 3));
    child.kill().unwrap();
    child.wait().unwrap();
    let before = shards(&dir);
    let reached = state_generation(&dir).unwrap();
    let target = reached + 2;
    let o = run(&["train", "--run-dir", d, "--resume", "--generations", &target.to_string(), "--quiet"]);
    ok(&o);
    // The start line says the budget counts the whole run, and what is spent of it.
    let said = String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr);
    assert!(said.contains(&format!("budget: {target} generations for the whole run (")) && said.contains("minutes spent in earlier sittings)"), "{said}");
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

/// `train --variant`: an unknown variant or a bad rules string is one line naming it, and no
/// run directory is made; a good one prints the config it chose and saves it (the run itself
/// is stopped by a budget of one generation on the smallest board).
#[test]
fn train_variant_prints_and_saves_the_config_it_chose() {
    let dir = fresh_dir("variant");
    let d = dir.join("run");
    fails_with(&run(&["train", "--variant", "no-such-game", "--run-dir", d.to_str().unwrap()]), "--variant no-such-game");
    fails_with(&run(&["train", "--variant", "dim:7 bogus", "--run-dir", d.to_str().unwrap()]), "--variant dim:7 bogus");
    assert!(!d.exists(), "nothing made for a bad variant");
    let o = run(&["train", "--variant", "magpie", "--run-dir", d.to_str().unwrap(), "--generations", "1", "--quiet"]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("--variant magpie: the default recipe sized to its 7x7 board"), "{err}");
    let saved = std::fs::read_to_string(d.join("config.toml")).unwrap().trim_end().to_string();
    assert!(err.contains(&saved), "the printed config is the saved one: {err}");
    assert!(saved.contains("variant = \"magpie\"") && saved.contains("attacker_share = 0.5"), "{saved}");
    assert_eq!(generations(&d), vec![1]);
}

#[test]
fn config_errors_are_one_line() {
    let dir = fresh_dir("config");
    std::fs::create_dir_all(&dir).unwrap();
    let smoke = std::fs::read_to_string(SMOKE).unwrap();
    let cases = [
        (smoke.replace("[train]", "[train]\nwindow = 5"), "unknown field `window`"),
        (smoke.replace("kind = \"gumbel\"", "kind = \"minimax\""), "unknown variant `minimax`"),
        (smoke.replace("[selfplay.search]\nsims = 8\nroot = { kind = \"gumbel\", k = 4 }", "root = \"minimax\"\nsimulations = 8"), "selfplay.root"),
        (smoke.replace("[selfplay]\n", "[selfplay]\ngumbel_k = 4\n"), "selfplay.gumbel_k is the older spelling"),
        (smoke.replace("k = 4 }", "k = 4 }\nnoise = { fraction = 0.25 }"), "selfplay.search.noise applies to PUCT roots only"),
        (smoke.replace("k = 4 }", "k = 4 }\nforced_playouts = 2.0"), "selfplay.search.forced_playouts applies to PUCT roots only"),
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
    // alpha plays one shard (2 games) and stops; only then does beta start and play on, so
    // both contribute however the processes are scheduled. (Started together, a busy CI
    // machine once let beta write all eight shards while alpha was still on its two games.)
    let log = |name: &str| std::fs::File::create(dir.join(format!("{name}.log"))).unwrap();
    let mut alpha = bin().args(["selfplay", "--run-dir", d, "--name", "alpha", "--games", "2", "--quiet"]).stderr(log("alpha")).spawn().unwrap();
    let has_alpha = || run_dir.join("games").exists() && shards(&run_dir).iter().any(|p| p.to_string_lossy().contains("-alpha-"));
    let mut wrote = false;
    for _ in 0..1200 {
        let ended = alpha.try_wait().unwrap();
        if has_alpha() {
            wrote = true;
            break;
        }
        if let Some(status) = ended {
            let _ = trainer.kill();
            panic!("alpha ended ({status}) without a shard: {}", std::fs::read_to_string(dir.join("alpha.log")).unwrap_or_default());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    if !wrote {
        let _ = trainer.kill();
        let _ = alpha.kill();
        panic!("gave up waiting for alpha's shard");
    }
    let beta = bin().args(["selfplay", "--run-dir", d, "--name", "beta", "--games", "0", "--quiet"]).stderr(log("beta")).spawn().unwrap();
    let mut workers: Vec<Child> = vec![alpha, beta];
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

/// With `selfplay.attacker_share`, each generation scales the attackers' full-search
/// simulations by exp(target - the attackers' share of its games), between the full search's
/// and 16 times it: the value used shows in the next generation's metrics and lives in
/// state.json, where a resumed run (and any worker) picks it up.
#[test]
fn attacker_share_steers_the_attackers_simulations_across_generations_and_resumes() {
    let dir = fresh_dir("attacker-share");
    let cfg = smoke_config(&dir, "steer.toml", |t| t.replace("games_per_shard = 2", "games_per_shard = 2\nattacker_share = 0.5"));
    let run_dir = dir.join("run");
    let d = run_dir.to_str().unwrap();
    ok(&run(&["train", "--config", cfg.to_str().unwrap(), "--run-dir", d, "--generations", "2", "--quiet"]));
    ok(&run(&["train", "--run-dir", d, "--resume", "--generations", "4", "--quiet"]));
    let m = metrics(&run_dir);
    assert_eq!(generations(&run_dir), vec![1, 2, 3, 4]);
    let sims = 8.0f64;
    let used = |k: usize| m[k]["selfplay"]["attacker_sims"].as_u64().map_or(sims, |n| n as f64);
    assert_eq!(m[0]["selfplay"].get("attacker_sims"), None, "generation 1 plays the config's (the full search's) simulations");
    let state: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(run_dir.join("state.json")).unwrap()).unwrap();
    for k in 0..m.len() {
        let share = m[k]["selfplay"]["attackers_win"].as_f64().unwrap();
        let expected = (used(k) * (0.5 - share).exp()).round().clamp(sims, 16.0 * sims);
        let next = if k + 1 < m.len() { used(k + 1) } else { state["attacker_sims"].as_f64().unwrap() };
        assert_eq!(next, expected, "generation {}: attackers won {share} of the games at {} simulations", k + 1, used(k));
    }
    // The attackers' fast searches (4 simulations in the smoke config) grow in proportion:
    // the shards of a steered generation hold attackers' fast searches of 4 * sims / 8.
    let steered = state["attacker_sims"].as_u64().unwrap();
    let fast = tafl_lab::train::RunState { attacker_sims: Some(steered as u32), ..Default::default() }
        .selfplay_config(&tafl_lab::train::RunConfig::from_toml(&std::fs::read_to_string(&cfg).unwrap(), "steer.toml").unwrap())
        .attacker_fast_sims;
    assert_eq!(fast.map(u64::from), Some(((4 * steered) as f64 / 8.0).round().max(1.0) as u64), "{steered}");
    // A share out of range is refused, naming the field.
    let bad = smoke_config(&dir, "bad.toml", |t| t.replace("games_per_shard = 2", "games_per_shard = 2\nattacker_share = 1.5"));
    fails_with(&run(&["train", "--config", bad.to_str().unwrap(), "--run-dir", dir.join("bad").to_str().unwrap()]), "selfplay.attacker_share = 1.5");
}

/// The smoke config with `edit` applied, written into `dir`.
fn smoke_config(dir: &Path, name: &str, edit: impl Fn(String) -> String) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, edit(std::fs::read_to_string(SMOKE).unwrap())).unwrap();
    path
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn random_stored_game(variant: &str, seed: u64) -> shard::StoredGame {
    common::games::random_stored_game(variant, seed, Some(0))
}

#[test]
fn shards_of_another_variant_or_run_are_skipped_with_a_warning() {
    let dir = fresh_dir("foreign");
    // A small window, so that at the start only the newest shards are read: the rest are
    // met by the reader of the resumed generation's own games.
    let cfg = smoke_config(&dir, "small-window.toml", |t| t.replace("window_positions = 5000", "window_positions = 20"));
    let run_dir = dir.join("run");
    let d = run_dir.to_str().unwrap();
    ok(&run(&["train", "--config", cfg.to_str().unwrap(), "--run-dir", d, "--generations", "1", "--quiet"]));
    let good = shard::read(&shards(&run_dir)[0]).unwrap();
    let brandubh = tafl_lab::rules::Variant::preset("brandubh").expect("preset").rules_fingerprint();
    let tablut = tafl_lab::rules::Variant::preset("tablut").expect("preset").rules_fingerprint();
    assert_ne!(brandubh, tablut);
    let put = |name: &str, s: &shard::Shard| shard::write(&run_dir.join("games").join(name), s).unwrap();
    // Intact shards (valid checksums) that do not belong to this brandubh run:
    // tablut games (a 9x9 board) under tablut's fingerprint,
    let alien = shard::Shard { rules_fingerprint: tablut, model_generation: 1, writer: "alien".into(), games: vec![random_stored_game("tablut", 1)] };
    put("g000001-alien-0000.shard", &alien);
    // tablut games under brandubh's fingerprint (squares off the 7x7 board),
    let mut offboard = alien.clone();
    offboard.rules_fingerprint = brandubh;
    offboard.writer = "offboard".into();
    put("g000001-offboard-0000.shard", &offboard);
    // a writer name that is no name,
    let mut badwriter = good.clone();
    badwriter.model_generation = 1;
    badwriter.writer = "bad writer/..".into();
    put("g000001-badwriter-0000.shard", &badwriter);
    // games of a model this run has not made yet.
    let mut future = good.clone();
    future.model_generation = 9;
    future.writer = "future".into();
    put("g000009-future-0000.shard", &future);
    // A sound copy of the run's own games, newest by name, fills the small window first.
    let mut filler = good.clone();
    filler.model_generation = 1;
    filler.writer = "zfiller".into();
    assert!(filler.games.iter().map(|g| g.plies.len()).sum::<usize>() >= 20);
    put("g000001-zfiller-0000.shard", &filler);
    let o = run(&["train", "--run-dir", d, "--resume", "--generations", "2", "--quiet"]);
    ok(&o);
    let err = stderr(&o);
    let warnings: Vec<&str> = err.lines().filter(|l| l.starts_with("warning: skipping")).collect();
    assert_eq!(warnings.len(), 4, "one line per foreign shard: {err}");
    for (file, reason) in [
        ("g000001-alien-0000.shard", "rules fingerprint"),
        ("g000001-offboard-0000.shard", "off the 7x7 board"),
        ("g000001-badwriter-0000.shard", "writer name"),
        ("g000009-future-0000.shard", "generation 9"),
    ] {
        assert!(warnings.iter().any(|w| w.contains(file) && w.contains(reason)), "{file}: {reason}: {err}");
    }
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(metrics(&run_dir).last().unwrap()["skipped_shards"], 4);
    assert_eq!(generations(&run_dir), vec![1, 2]);
}

#[test]
fn meaningless_budgets_are_refused() {
    let dir = fresh_dir("budget");
    let d = dir.to_str().unwrap();
    // (`--minutes -5` is refused by the argument parser, `-5` looking like an option.)
    for (args, needle) in [
        (&["--minutes", "-5"][..], "-5"),
        (&["--minutes=-5"], "--minutes -5"),
        (&["--minutes", "nan"], "--minutes NaN"),
        (&["--minutes", "0"], "--minutes 0"),
        (&["--minutes", "inf"], "--minutes inf"),
        (&["--generations", "0"], "--generations 0"),
    ] {
        let mut all = vec!["train", "--config", SMOKE, "--run-dir", d, "--quiet"];
        all.extend_from_slice(args);
        fails_with(&run(&all), needle);
        assert!(!dir.exists(), "{args:?}: nothing written");
    }
}

#[test]
fn a_trainer_without_workers_honours_its_time_budget() {
    let dir = fresh_dir("waiting");
    let cfg = smoke_config(&dir, "no-workers.toml", |t| t.replace("games_per_shard = 2", "games_per_shard = 2\nin_process = false"));
    let run_dir = dir.join("run");
    let d = run_dir.to_str().unwrap();
    let mut budget_secs = 0.0;
    for (i, minutes) in ["0.05", "0.1"].iter().enumerate() {
        let mut args = vec!["train", "--run-dir", d, "--minutes", minutes, "--quiet"];
        if i == 0 {
            args.extend(["--config", cfg.to_str().unwrap()]);
        } else {
            args.push("--resume");
        }
        let t = std::time::Instant::now();
        let mut child = bin().args(&args).stderr(Stdio::piped()).spawn().unwrap();
        let mut status = None;
        while t.elapsed() < Duration::from_secs(90) {
            if let Some(s) = child.try_wait().unwrap() {
                status = Some(s);
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let Some(status) = status else {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the trainer did not stop within 90 s of a {minutes} minute budget");
        };
        let secs = t.elapsed().as_secs_f64();
        let mut err = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
        assert!(status.success(), "{err}");
        budget_secs = minutes.parse::<f64>().unwrap() * 60.0;
        // The budget counts from the start of the run; startup (a model, a config) is extra.
        assert!(secs < budget_secs + 30.0, "took {secs:.1} s: {err}");
        assert_eq!(err.matches("waiting for self-play workers: 0/4 games of generation 1").count(), 1, "once: {err}");
        assert!(err.contains(&format!("stopping: the {minutes} minute budget ran out")), "{err}");
        assert!(!err.contains("panicked"), "{err}");
        // Consistent and resumable: still at generation 0, no generation recorded.
        assert_eq!(state_generation(&run_dir), Some(0));
        assert!(!run_dir.join("metrics.jsonl").exists());
    }
    // The time spent waiting counts towards the run's budget.
    let state: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(run_dir.join("state.json")).unwrap()).unwrap();
    let wall = state["wall_seconds"].as_f64().unwrap();
    assert!(wall >= budget_secs && wall < budget_secs + 5.0, "{wall}");
}

#[test]
fn resume_sizes_torch_from_the_saved_config() {
    let dir = fresh_dir("threads");
    let cfg = smoke_config(&dir, "two-threads.toml", |t| t.replace("games_per_shard = 2", "games_per_shard = 2\nthreads = 2"));
    let run_dir = dir.join("run");
    let d = run_dir.to_str().unwrap();
    ok(&run(&["train", "--config", cfg.to_str().unwrap(), "--run-dir", d, "--generations", "1", "--quiet"]));
    // Resume with a config of one self-play thread on the command line: the run keeps its
    // two, and torch gets a share of the cores for two.
    let o = run(&["train", "--config", SMOKE, "--run-dir", d, "--resume", "--generations", "1", "--quiet"]);
    ok(&o);
    let err = stderr(&o);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    assert!(err.contains(&format!("(2 self-play workers of {} torch threads; {cores} for training)", (cores / 2).max(1))), "{cores} cores: {err}");
    assert!(err.contains("--resume continues with the run's saved config"), "{err}");
    assert!(err.contains("stopping: generation 1 reached"), "{err}");
}

/// The games of model `generation` in a run directory, by slot.
fn games_of(dir: &Path, generation: u64) -> Vec<(Option<u64>, Vec<[u8; 4]>)> {
    let prefix = format!("g{generation:06}-");
    let mut games: Vec<_> = shards(dir)
        .iter()
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with(&prefix))
        .flat_map(|p| shard::read(p).unwrap().games)
        .map(|g| (g.slot, moves(&g)))
        .collect();
    games.sort();
    games
}

#[test]
fn a_run_saved_with_the_old_setting_names_resumes_with_the_same_settings() {
    let dir = fresh_dir("old-names");
    // A run started from the smoke config in the old names plays the games of one started
    // from today's.
    let old_cfg = smoke_config(&dir, "old.toml", |t| with_old_names(&t.replace("[selfplay.search]\n", "[selfplay.search]\ncpuct = 1.5\nbatch = 8\n")));
    let old_text = std::fs::read_to_string(&old_cfg).unwrap();
    assert!(["simulations = 8", "c_puct = 1.5", "\nbatch = 8\n", "\nbatch = 32\n", "fast_simulations = 4"].iter().all(|k| old_text.contains(k)), "{old_text}");
    let (new_run, old_run) = (dir.join("new"), dir.join("old"));
    ok(&run(&["train", "--config", SMOKE, "--run-dir", new_run.to_str().unwrap(), "--generations", "1", "--quiet"]));
    ok(&run(&["train", "--config", old_cfg.to_str().unwrap(), "--run-dir", old_run.to_str().unwrap(), "--generations", "1", "--quiet"]));
    assert_eq!(games_of(&old_run, 0).len(), 4);
    assert_eq!(games_of(&old_run, 0), games_of(&new_run, 0), "same settings, same games");
    let saved = std::fs::read_to_string(old_run.join("config.toml")).unwrap();
    assert_eq!(saved, std::fs::read_to_string(new_run.join("config.toml")).unwrap(), "saved in today's names");
    // A run saved before the names were unified resumes.
    let saved_old = with_old_names(&saved);
    assert!(saved_old.contains("\nsimulations = 8\n") && saved_old.contains("\nbatch = 8\n") && !saved_old.contains("sims ="), "{saved_old}");
    std::fs::write(old_run.join("config.toml"), &saved_old).unwrap();
    let o = run(&["train", "--run-dir", old_run.to_str().unwrap(), "--resume", "--generations", "2", "--quiet"]);
    ok(&o);
    assert!(stderr(&o).contains("stopping: generation 2 reached"), "{}", stderr(&o));
    assert_eq!(generations(&old_run), vec![1, 2]);
    assert_eq!(games_of(&old_run, 1).len(), 4);
}

/// `selfplay.carry_games = true` (see `selfplay::play_games_carried`): with two
/// self-play threads of three games in flight and eight games a generation, each generation
/// stores eight games, whichever finished first, and carries the rest on. Game numbers run
/// across the run: no number and no game appears twice, some game of a later generation was
/// started before a game of an earlier one (it was carried), and `state.json` keeps the first
/// number not started. Killed in the middle of a generation and resumed, the run goes on with
/// the same guarantees. A run without it (the default) saves no `carry_games`.
#[test]
fn carried_games_keep_generations_whole_and_never_repeat_a_game() {
    let dir = fresh_dir("carry");
    let with = |carry: bool, per_generation: usize| {
        let name = format!("carry-{carry}-{per_generation}.toml");
        smoke_config(&dir, &name, |t| {
            let t = t
                .replace("games_per_generation = 4", &format!("games_per_generation = {per_generation}\nthreads = 2"))
                .replace("games_in_flight = 4", "games_in_flight = 3");
            if carry {
                t.replace("[selfplay]\n", "[selfplay]\ncarry_games = true\n")
            } else {
                t
            }
        })
    };
    let (on, off) = (dir.join("on"), dir.join("off"));
    ok(&run(&["train", "--config", with(true, 8).to_str().unwrap(), "--run-dir", on.to_str().unwrap(), "--generations", "4", "--quiet"]));
    ok(&run(&["train", "--config", with(false, 8).to_str().unwrap(), "--run-dir", off.to_str().unwrap(), "--generations", "1", "--quiet"]));
    let saved = |d: &Path| std::fs::read_to_string(d.join("config.toml")).unwrap();
    assert!(saved(&on).contains("carry_games = true") && !saved(&off).contains("carry_games"), "{}", saved(&off));
    let next_game = |d: &Path| -> u64 {
        let state: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(d.join("state.json")).unwrap()).unwrap();
        state["next_game"].as_u64().expect("state.json keeps the next game number")
    };
    // Every generation whole; numbers and games once each; some carried.
    let check = |d: &Path, generations: u64, per_generation: usize| {
        let mut seen: Vec<(u64, Vec<[u8; 4]>)> = Vec::new();
        let mut carried = false;
        for g in 0..generations {
            let games = games_of(d, g);
            assert_eq!(games.len(), per_generation, "generation {}", g + 1);
            assert_eq!(metrics(d)[g as usize]["selfplay"]["games"], per_generation as u64);
            let earliest_before = seen.iter().map(|(k, _)| *k).max();
            for (k, m) in games {
                let k = k.expect("numbers are stored");
                assert!(k < next_game(d), "game {k} is below state.next_game");
                assert!(seen.iter().all(|(j, n)| *j != k && *n != m), "generation {}: game {k} repeats", g + 1);
                carried |= earliest_before.is_some_and(|e| k < e);
                seen.push((k, m));
            }
        }
        assert!(carried, "no game was carried into a later generation");
    };
    check(&on, 4, 8);
    // Killed while generation 2 is being stored, then resumed.
    let killed = dir.join("killed");
    let k = killed.to_str().unwrap();
    let mut child = bin()
        .args(["train", "--config", with(true, 32).to_str().unwrap(), "--run-dir", k, "--generations", "1000", "--quiet"])
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    kill_when_written(&mut child, &killed.join("games/g000001-trainer-0000.shard"));
    let stored = games_of(&killed, 1).len();
    assert!(stored > 0 && stored < 32, "killed mid-generation: {stored} games");
    ok(&run(&["train", "--run-dir", k, "--resume", "--generations", "3", "--quiet"]));
    check(&killed, 3, 32);
}

/// The plies of a stored game, as moves.
fn moves(g: &shard::StoredGame) -> Vec<[u8; 4]> {
    g.plies.iter().map(|p| p.mv).collect()
}

#[test]
fn game_seeds_differ_by_slot_and_repeat_by_slot() {
    use tafl_lab::search::UniformEvaluator;
    use tafl_lab::selfplay::{self, game_seed, SelfPlayConfig};
    let v = std::sync::Arc::new(tafl_lab::rules::Variant::preset("brandubh").expect("preset"));
    let mut cfg = SelfPlayConfig { games_in_flight: 2, positions_per_call: 16, fast_probability: 0.5, fast_sims: 4, ..SelfPlayConfig::default() };
    cfg.search.sims = 8;
    // Room in every batch for all leaves of both games: no game waits for another.
    cfg.search.leaves_per_tree = 4;
    cfg.search.root = tafl_lab::search::RootPolicy::gumbel(4);
    // Play the given slots (seeded from run seed 7, generation 3), all in lockstep.
    let play = |slots: &[u64]| {
        let mut next = slots.iter();
        let mut games = std::collections::BTreeMap::new();
        selfplay::play_games(
            &v,
            &cfg,
            &mut UniformEvaluator::new(),
            &mut |_| next.next().map(|&k| (k, game_seed(7, 3, k))),
            &mut |k, g| {
                games.insert(k, shard::StoredGame::new(&g, Some(k)));
            },
            &mut |_| true,
        );
        games
    };
    let a = play(&[0, 1]);
    assert_ne!(moves(&a[&0]), moves(&a[&1]), "two slots, two games");
    // A slot's game does not depend on which games share its batches.
    let b = play(&[1, 5]);
    assert_eq!(moves(&b[&1]), moves(&a[&1]));
    assert_ne!(moves(&b[&5]), moves(&a[&0]));
    assert_ne!(game_seed(7, 3, 0), game_seed(7, 4, 0));
    assert_ne!(game_seed(7, 3, 0), game_seed(8, 3, 0));
}

#[test]
fn a_generation_resumed_after_a_kill_plays_only_its_missing_slots() {
    let dir = fresh_dir("slots");
    // Smoke games take milliseconds: a generation long enough to be killed in the middle.
    let n = 32;
    let cfg = smoke_config(&dir, "slots.toml", |t| t.replace("games_per_generation = 4", &format!("games_per_generation = {n}")));
    let run_dir = dir.join("run");
    let d = run_dir.to_str().unwrap();
    // The games of model `g`.
    let of_generation = |g: u64| -> Vec<shard::StoredGame> {
        shards(&run_dir)
            .iter()
            .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with(&format!("g{g:06}-")))
            .flat_map(|p| shard::read(p).unwrap().games)
            .collect()
    };
    let mut child =
        bin().args(["train", "--config", cfg.to_str().unwrap(), "--run-dir", d, "--generations", "1000", "--quiet"]).stderr(Stdio::null()).spawn().unwrap();
    // Kill as soon as the second generation's first shard is written.
    kill_when_written(&mut child, &run_dir.join("games/g000001-trainer-0000.shard"));
    let before = of_generation(1);
    assert!(!before.is_empty() && before.len() < n, "killed mid-generation: {} games", before.len());
    ok(&run(&["train", "--run-dir", d, "--resume", "--generations", "2", "--quiet"]));
    assert_eq!(generations(&run_dir), vec![1, 2]);
    let games = of_generation(1);
    assert_eq!(games.len(), n, "the missing games were played, no more");
    for (i, a) in games.iter().enumerate() {
        for b in &games[..i] {
            assert_ne!(moves(a), moves(b), "a game of the generation repeats another");
        }
    }
    let mut slots: Vec<u64> = games.iter().map(|g| g.slot.expect("slots are stored")).collect();
    slots.sort();
    assert_eq!(slots, (0..n as u64).collect::<Vec<_>>());
    assert_eq!(metrics(&run_dir)[1]["selfplay"]["games"], n);
}

/// `train.ownership_weight`: a run resumed with the weight added to its config gains the
/// ownership head (fresh) on the network it had, trains it (an ownership loss in the metrics
/// of that generation on, none before), and saves it; a new run from a model without the head
/// starts from the model's weights with a fresh head; `export` leaves the head out; and
/// `[net] ownership` without the weight is refused, naming the field.
#[test]
fn an_ownership_loss_adds_the_head_to_a_run_and_export_leaves_it_out() {
    let dir = fresh_dir("ownership");
    let cfg = smoke_config(&dir, "plain.toml", |t| t);
    let run_dir = dir.join("run");
    let d = run_dir.to_str().unwrap();
    ok(&run(&["train", "--config", cfg.to_str().unwrap(), "--run-dir", d, "--generations", "1", "--quiet"]));
    let saved = run_dir.join("config.toml");
    let text = std::fs::read_to_string(&saved).unwrap();
    assert!(text.contains("[train]\n") && !text.contains("ownership"), "{text}");
    std::fs::write(&saved, text.replace("[train]\n", "[train]\nownership_weight = 0.5\n")).unwrap();
    let o = run(&["train", "--run-dir", d, "--resume", "--generations", "3", "--quiet"]);
    let out = ok(&o) + &stderr(&o);
    assert!(out.contains("network 1x8 with an ownership head (input encoding 2)"), "{out}");
    let m = metrics(&run_dir);
    assert_eq!(m[0]["loss"].get("ownership"), None, "generation 1 trained no head");
    for k in [1, 2] {
        let o = m[k]["loss"]["ownership"].as_f64().expect("an ownership loss");
        // Three classes a square: a fresh head starts near ln 3 and a few steps move it little.
        assert!(o > 0.0 && o < 3.0, "generation {}: {o}", k + 1);
    }
    let meta = |p: &Path| checkpoint::read_meta(p).unwrap().net;
    assert!(!meta(&run_dir.join("models/000001.safetensors")).ownership);
    assert!(meta(&run_dir.join("models/000003.safetensors")).ownership);
    // Taking the weight out again drops the head (the saved config's `[net] ownership` goes
    // with it) and the run goes on.
    let text = std::fs::read_to_string(&saved).unwrap();
    assert!(text.contains("ownership_weight = 0.5\n"), "{text}");
    std::fs::write(&saved, text.replace("ownership_weight = 0.5\n", "")).unwrap();
    ok(&run(&["train", "--run-dir", d, "--resume", "--generations", "4", "--quiet"]));
    assert!(!meta(&run_dir.join("models/000004.safetensors")).ownership);
    assert_eq!(metrics(&run_dir)[3]["loss"].get("ownership"), None);
    // Per-side values turned on at a resume split the value output layer of the network (and
    // its momentum): generation 5 has them.
    let text = std::fs::read_to_string(&saved).unwrap();
    std::fs::write(&saved, text.replace("[net]\n", "[net]\nvalue_per_side = true\n")).unwrap();
    ok(&run(&["train", "--run-dir", d, "--resume", "--generations", "5", "--quiet"]));
    assert!(meta(&run_dir.join("models/000005.safetensors")).value_per_side);
    assert!(!meta(&run_dir.join("models/000004.safetensors")).value_per_side);

    // A new run from generation 1 (no head): its generation 0 is that network plus a head.
    // (And with per-side values: the model's value output layer starts both sides'.)
    let with = smoke_config(&dir, "ownership.toml", |t| {
        t.replace("[train]\n", "[train]\nownership_weight = 0.5\n").replace("encoding = 2", "encoding = 2\nvalue_per_side = true")
    });
    let from = run_dir.join("models/000001.safetensors");
    let second = dir.join("second");
    ok(&run(&[
        "train",
        "--config",
        with.to_str().unwrap(),
        "--init",
        from.to_str().unwrap(),
        "--run-dir",
        second.to_str().unwrap(),
        "--generations",
        "1",
        "--quiet",
    ]));
    let (start, start_meta) = checkpoint::load(&second.join("models/000000.safetensors"), None, tch::Device::Cpu).unwrap();
    let (init, _) = checkpoint::load(&from, None, tch::Device::Cpu).unwrap();
    assert!(start_meta.net.ownership && start_meta.net.value_per_side);
    let (a, b) = (start.vs.variables(), init.vs.variables());
    assert_eq!(a.len(), b.len() + 2, "the head's weight and bias on top");
    let doubled = |t: &tch::Tensor| tch::Tensor::cat(&[t, t], 0);
    assert!(
        b.iter().all(|(k, t)| if k.starts_with("value_out.") { doubled(t).equal(&a[k]) } else { t.equal(&a[k]) }),
        "generation 0 holds the init model's weights, its value output layer once for each side"
    );

    // The export is the network agents evaluate: no head, and metadata without one.
    let exported = dir.join("export");
    ok(&run(&["export", "--model", run_dir.join("models/000003.safetensors").to_str().unwrap(), "--out", exported.to_str().unwrap()]));
    let weights = exported.join("weights.safetensors");
    let bytes = std::fs::read(&weights).unwrap();
    let names: Vec<String> = safetensors::SafeTensors::deserialize(&bytes).unwrap().names().into_iter().cloned().collect();
    assert!(!names.is_empty() && names.iter().all(|n| !n.starts_with("ownership")), "{names:?}");
    assert!(!meta(&weights).ownership);

    let bad = smoke_config(&dir, "bad.toml", |t| t.replace("encoding = 2", "encoding = 2\nownership = true"));
    fails_with(&run(&["train", "--config", bad.to_str().unwrap(), "--run-dir", dir.join("bad").to_str().unwrap()]), "net.ownership = true");
}

/// `train.max_window_passes`: each generation's steps are `steps_per_generation` (3 here) or,
/// while the window is small, the cap's `ceil(passes × window / batch)`; the metrics record
/// the steps taken.
#[test]
fn a_window_pass_cap_trains_a_small_window_less() {
    let dir = fresh_dir("passes");
    let cfg = smoke_config(&dir, "passes.toml", |t| t.replace("[train]\n", "[train]\nmax_window_passes = 0.1\n"));
    let run_dir = dir.join("run");
    ok(&run(&["train", "--config", cfg.to_str().unwrap(), "--run-dir", run_dir.to_str().unwrap(), "--generations", "3", "--quiet"]));
    let m = metrics(&run_dir);
    assert_eq!(m.len(), 3);
    let mut capped = 0;
    for line in &m {
        let window = line["window_positions"].as_u64().expect("window size") as f64;
        let steps = line["train_steps"].as_u64().expect("steps");
        let expected = 3.min((0.1 * window / 32.0).ceil().max(1.0) as u64);
        assert_eq!(steps, expected, "window {window}: {line}");
        capped += usize::from(steps < 3);
    }
    assert!(capped > 0, "the smoke run's window is small enough to be capped: {m:?}");
}
