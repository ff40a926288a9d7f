//! `pretrain` through the command line, on records these tests write: games in the archive
//! CSV form, numbered lines and OpenTafl records (with bad records of each kind mixed in),
//! a network that learns the one opening every record plays, and `train --init` from it.

use crate::common;

use common::cli::{fails_with, ok, run, scratch};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::path::Path;
use std::sync::Arc;
use tafl_lab::nn::Symmetry;
use tafl_lab::rules::records::{write_csv, write_numbered, write_opentafl, RecordResult};
use tafl_lab::rules::{notation, Move, Position, Side, Variant};

/// The opening move every generated game plays (brandubh: an attacker from d2 to b2).
const OPENING: &str = "d2-b2";

/// A brandubh game record that opens with [`OPENING`] and goes on with a few random moves
/// (so the start position is a good share of every record file), ending in a resignation or
/// a loss on time of a random side, or in the rules' own end when it comes first.
fn game(v: &Arc<Variant>, rng: &mut SmallRng) -> (Vec<Move>, RecordResult) {
    let mut pos = Position::start(v.clone());
    let first = Move::parse(OPENING, pos.geometry()).unwrap();
    pos.play(first).unwrap();
    let mut moves = vec![first];
    while pos.outcome().is_none() && moves.len() < 6 {
        let legal = pos.legal_moves();
        let mv = legal[rng.gen_range(0..legal.len())];
        pos.play(mv).unwrap();
        moves.push(mv);
    }
    let result = match pos.outcome() {
        Some(o) => o.winner.map_or(RecordResult::Draw, RecordResult::Won),
        None if rng.gen_bool(0.5) => RecordResult::Won(Side::Attackers),
        None => RecordResult::Won(Side::Defenders),
    };
    (moves, result)
}

/// Writes 20 CSV games, 10 numbered ones and 5 OpenTafl records, plus one bad record of each
/// kind the skip counts name; returns the number of good games.
fn write_records(dir: &Path) -> usize {
    let v = Arc::new(Variant::preset("brandubh").expect("preset"));
    let start = Position::start(v.clone());
    let mut rng = SmallRng::seed_from_u64(5);
    std::fs::create_dir_all(dir.join("otg")).unwrap();
    let mut csv = String::from("moves,attacker_captures,defender_captures,result\n");
    for _ in 0..20 {
        let (m, r) = game(&v, &mut rng);
        csv += &(write_csv(&start, &m, r) + "\n");
    }
    // Unfinished, an illegal move (the king cannot move first), a capture that did not happen.
    csv += "d2-b2 d3-c3,0,0,Ongoing\n";
    csv += "d4-d5 d2-b2,0,0,White\n";
    csv += "d2-b2xa1 d3-c3,1,0,White\n";
    std::fs::write(dir.join("games.csv"), csv).unwrap();
    let mut numbered = String::new();
    for _ in 0..10 {
        let (m, r) = game(&v, &mut rng);
        numbered += &(write_numbered(&m, r) + "\n");
    }
    std::fs::write(dir.join("games.txt"), numbered).unwrap();
    let rules = notation::rules_string(&v).unwrap();
    for i in 0..5 {
        let (m, r) = game(&v, &mut rng);
        std::fs::write(dir.join(format!("otg/game{i}.otg")), write_opentafl(&rules, &start, &m, r)).unwrap();
    }
    // A record of another variant in the same folder.
    let tablut = Arc::new(Variant::preset("tablut").expect("preset"));
    let t_start = Position::start(tablut.clone());
    let t_move = t_start.legal_moves()[0];
    std::fs::write(dir.join("otg/tablut.otg"), write_opentafl(&notation::rules_string(&tablut).unwrap(), &t_start, &[t_move], RecordResult::Draw)).unwrap();
    35
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn pretrain_learns_the_records_and_a_run_starts_from_it() {
    let dir = scratch("pretrain");
    let good = write_records(&dir);
    let out = dir.join("model");
    let d = |p: &str| dir.join(p).to_str().unwrap().to_string();
    let o = run(&[
        "pretrain",
        "--variant",
        "brandubh",
        "--games",
        &d("games.csv"),
        "--games",
        &d("games.txt"),
        "--games",
        &d("otg"),
        "--out",
        out.to_str().unwrap(),
        "--blocks",
        "1",
        "--channels",
        "8",
        "--epochs",
        "15",
        "--batch-size",
        "16",
        "--lr",
        "0.05",
        "--holdout",
        "0.1",
        "--quiet",
        "--device",
        "cpu",
    ]);
    let stdout = ok(&o);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stdout.contains("wrote") && stdout.contains("train --config CONFIG --init"), "{stdout}");
    // Every skip is counted by its reason, with the file and line of the first.
    for needle in [
        "skipped 1: unfinished (no result)",
        "skipped 1: illegal or unreadable move (first: ",
        "games.csv:23: ply 1",
        "skipped 1: captures differ from the rules'",
        "skipped 1: another variant",
    ] {
        assert!(stderr.contains(needle), "`{needle}` not in: {stderr}");
    }
    let report = json(&out.join("pretrain.json"));
    assert_eq!(report["games_read"], 39);
    assert_eq!(report["games_used"].as_u64().unwrap() as usize, good);
    assert_eq!(report["holdout_games"], 4);
    let epochs = report["epochs"].as_array().unwrap();
    assert_eq!(epochs.len(), 15);
    let loss = |e: &serde_json::Value| e["train_policy_loss"].as_f64().unwrap();
    // From a spread over every move on the board towards the legal ones: a real drop.
    assert!(loss(&epochs[14]) < loss(&epochs[0]) - 0.5, "{epochs:?}");
    // Every game opens the same way. The board is symmetric and training sees each position
    // under a random symmetry, so the network learns the opening's 8 images together: they
    // must hold far more of the prior at the start than a uniform prior gives them (8 of 40
    // moves, 0.2; this run reaches about 0.4).
    let spec = format!("az:model={},sims=1", out.display());
    let a: serde_json::Value =
        serde_json::from_str(&ok(&run(&["analyze", "--variant", "brandubh", "--agent", &spec, "--json", "--device", "cpu", "--top", "100"]))).unwrap();
    let g = Variant::preset("brandubh").expect("preset").geometry;
    let opening = Move::parse(OPENING, g).unwrap();
    let images: Vec<String> = Symmetry::ALL.iter().map(|s| s.mv(g, opening).to_string()).collect();
    let moves = a["moves"].as_array().unwrap();
    assert_eq!(moves.len(), 40);
    let mass: f64 = moves.iter().filter(|m| images.contains(&m["move"].as_str().unwrap().to_string())).map(|m| m["prior"].as_f64().unwrap()).sum();
    assert!(mass > 0.3, "prior on {images:?}: {mass}; {moves:?}");

    // A run starts from it: generation 0 is the pretrained network, byte for byte.
    let run_dir = dir.join("run");
    let model_file = out.join("model.safetensors");
    ok(&run(&[
        "train",
        "--config",
        "configs/runs/smoke.toml",
        "--run-dir",
        run_dir.to_str().unwrap(),
        "--init",
        model_file.to_str().unwrap(),
        "--generations",
        "1",
        "--quiet",
    ]));
    assert_eq!(std::fs::read(run_dir.join("models/000000.safetensors")).unwrap(), std::fs::read(&model_file).unwrap());
    assert_eq!(json(&run_dir.join("run.json"))["init"], model_file.to_str().unwrap());
    assert_eq!(std::fs::read_to_string(run_dir.join("models/latest")).unwrap().trim(), "000001.safetensors");
    // ... and only a new run: a resume does not take --init.
    fails_with(&run(&["train", "--run-dir", run_dir.to_str().unwrap(), "--init", model_file.to_str().unwrap()]), "--init starts a new run");
    // What a sitting commits of a run (no shards) resumes: the games folder is made again.
    std::fs::remove_dir_all(run_dir.join("games")).unwrap();
    ok(&run(&["train", "--run-dir", run_dir.to_str().unwrap(), "--resume", "--generations", "2", "--quiet"]));
    assert_eq!(std::fs::read_to_string(run_dir.join("models/latest")).unwrap().trim(), "000002.safetensors");

    // A network of another size than the config's [net] is refused before anything is written.
    let cfg = dir.join("bigger.toml");
    std::fs::write(&cfg, std::fs::read_to_string("configs/runs/smoke.toml").unwrap().replace("blocks = 1", "blocks = 2")).unwrap();
    let other = dir.join("run2");
    fails_with(
        &run(&["train", "--config", cfg.to_str().unwrap(), "--run-dir", other.to_str().unwrap(), "--init", model_file.to_str().unwrap()]),
        "set [net] to blocks = 1, channels = 8",
    );
    assert!(!other.join("state.json").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn pretrain_refuses_what_it_cannot_use() {
    let dir = scratch("pretrain-bad");
    std::fs::create_dir_all(&dir).unwrap();
    let csv = dir.join("bad.csv");
    std::fs::write(&csv, "d2-b2 d3-c3,0,0,Ongoing\nd4-d5,0,0,White\n").unwrap();
    let out = dir.join("m");
    let o = run(&["pretrain", "--variant", "brandubh", "--games", csv.to_str().unwrap(), "--out", out.to_str().unwrap(), "--quiet"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.lines().last().unwrap().contains("no usable games"), "{err}");
    assert!(!out.join("model.safetensors").exists());
    // --verbose lists every skipped record with its own reason, the unfinished one included.
    let o = run(&["pretrain", "--variant", "brandubh", "--games", csv.to_str().unwrap(), "--out", out.to_str().unwrap(), "--quiet", "--verbose"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("bad.csv:1: the record has no result"), "{err}");
    assert!(err.contains("bad.csv:2: ply 1:"), "{err}");
    fails_with(
        &run(&["pretrain", "--variant", "brandubh", "--games", dir.join("missing.csv").to_str().unwrap(), "--out", out.to_str().unwrap()]),
        "missing.csv",
    );
    fails_with(&run(&["pretrain", "--variant", "brandubh", "--games", csv.to_str().unwrap(), "--out", out.to_str().unwrap(), "--holdout", "0.7"]), "--holdout");
    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    fails_with(&run(&["pretrain", "--variant", "brandubh", "--games", empty.to_str().unwrap(), "--out", out.to_str().unwrap()]), "no .csv, .txt or .otg");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The records of `write_records` mixed into a run's batches (`train.human_games`): the
/// network of one generation puts more of its prior on the opening every record plays than
/// the same run without them, and the start says what it read. A share without records, or
/// records that do not exist, are refused before the run starts.
#[test]
fn a_run_mixes_human_records_into_its_batches() {
    let dir = scratch("human-mix");
    write_records(&dir);
    let smoke = std::fs::read_to_string("configs/runs/smoke.toml").unwrap();
    let base = smoke.replace("steps_per_generation = 3", "steps_per_generation = 60").replace("learning_rate = 0.01", "learning_rate = 0.05");
    let records = format!("human_games = [{:?}, {:?}]\n", dir.join("games.csv").to_str().unwrap(), dir.join("games.txt").to_str().unwrap());
    let mixed = base.replace("[eval]", &format!("{records}human_share = 0.75\n\n[eval]"));
    let g = Variant::preset("brandubh").expect("preset").geometry;
    let opening = Move::parse(OPENING, g).unwrap();
    let images: Vec<String> = Symmetry::ALL.iter().map(|s| s.mv(g, opening).to_string()).collect();
    let opening_prior = |name: &str, config: &str| -> (f64, String) {
        let cfg = dir.join(format!("{name}.toml"));
        std::fs::write(&cfg, config).unwrap();
        let run_dir = dir.join(name);
        let o = run(&["train", "--config", cfg.to_str().unwrap(), "--run-dir", run_dir.to_str().unwrap(), "--generations", "1", "--quiet"]);
        let out = ok(&o) + &String::from_utf8_lossy(&o.stderr);
        let spec = format!("az:model={},sims=1", run_dir.join("models/000001.safetensors").display());
        let a: serde_json::Value =
            serde_json::from_str(&ok(&run(&["analyze", "--variant", "brandubh", "--agent", &spec, "--json", "--device", "cpu", "--top", "100"]))).unwrap();
        let mass = a["moves"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| images.contains(&m["move"].as_str().unwrap().to_string()))
            .map(|m| m["prior"].as_f64().unwrap())
            .sum();
        (mass, out)
    };
    let (alone, _) = opening_prior("selfplay-only", &base);
    let (with_human, out) = opening_prior("mixed", &mixed);
    // 30 good games of the two files; the CSV's three bad ones are skipped and counted.
    assert!(out.contains("train.human_games: 30 games") && out.contains("3 skipped") && out.contains("make 24 of each batch of 32"), "{out}");
    eprintln!("prior on the opening's images: {with_human:.3} mixed, {alone:.3} self-play only");
    assert!(with_human > alone + 0.1, "prior on the opening's images: {with_human} mixed, {alone} self-play only");

    let refused = |name: &str, config: String, needle: &str| {
        let cfg = dir.join(format!("{name}.toml"));
        std::fs::write(&cfg, config).unwrap();
        let run_dir = dir.join(name);
        fails_with(&run(&["train", "--config", cfg.to_str().unwrap(), "--run-dir", run_dir.to_str().unwrap(), "--generations", "1", "--quiet"]), needle);
        assert!(!run_dir.join("state.json").exists(), "{name}: nothing is started");
    };
    refused("no-records", base.replace("[eval]", "human_share = 0.5\n\n[eval]"), "train.human_share is set but train.human_games names no records");
    refused("no-share", base.replace("[eval]", &format!("{records}\n[eval]")), "train.human_share is 0");
    refused("whole-batch", mixed.replace("human_share = 0.75", "human_share = 1.0"), "train.human_share = 1: must be in [0, 1)");
    refused("missing", mixed.replace("games.txt", "nope.txt"), "train.human_games");
    let _ = std::fs::remove_dir_all(&dir);
}
