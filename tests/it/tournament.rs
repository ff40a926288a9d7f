//! `tafl-lab tournament`: the files it writes agree with each other, a rerun resumes without
//! replaying finished pairings (unless a model file changed), and a folder holding another
//! tournament is refused.

use crate::common;

use common::cli::{fails_with, ok, run, scratch};
use serde_json::Value;
use std::path::Path;

const AGENTS: &str = "random;mcts:sims=8;mcts:sims=32";

fn tournament(out: &Path, agents: &str, games: &str) -> std::process::Output {
    run(&["tournament", "--variant", "brandubh", "--agents", agents, "--games", games, "--seed", "3", "--out", out.to_str().unwrap(), "--quiet"])
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// Every pairing file's modification time, by name.
fn mtimes(out: &Path) -> Vec<(String, std::time::SystemTime)> {
    let mut v: Vec<_> = std::fs::read_dir(out.join("pairings"))
        .unwrap()
        .map(|e| e.unwrap())
        .map(|e| (e.file_name().to_string_lossy().into_owned(), e.metadata().unwrap().modified().unwrap()))
        .collect();
    v.sort();
    v
}

#[test]
fn a_round_robin_writes_consistent_files_and_resumes() {
    let out = scratch("tournament");
    let first = ok(&tournament(&out, AGENTS, "4"));
    assert!(first.contains("3 pairings of 4 games: 3 played, 0 from an earlier run"), "{first}");
    let j = read_json(&out.join("tournament.json"));
    assert_eq!(j["agents"], serde_json::json!(["random", "mcts:sims=8", "mcts:sims=32"]));
    assert_eq!(j["complete"], true);
    assert_eq!(j["games"], 12);

    // The crosstable: the two sides of a pairing share its games' points.
    let n = 3;
    let cross = &j["crosstable"];
    let mut totals = vec![0.0; n];
    for r in 0..n {
        assert!(cross[r][r].is_null());
        for c in 0..n {
            if r != c {
                assert_eq!(f(&cross[r][c]) + f(&cross[c][r]), 4.0, "row {r} column {c}");
                totals[r] += f(&cross[r][c]);
            }
        }
    }
    // Each pairing's W-D-L from both sides adds up to its games and to the crosstable.
    let pairings = j["pairings"].as_array().unwrap();
    assert_eq!(pairings.len(), 3);
    for p in pairings {
        let (i, jj) = (p["i"].as_u64().unwrap() as usize, p["j"].as_u64().unwrap() as usize);
        let side = |k: &str| ["win", "draw", "loss"].map(|x| p[k][x].as_u64().unwrap());
        let (att, def) = (side("a_as_attackers"), side("a_as_defenders"));
        assert_eq!(att.iter().sum::<u64>(), 2, "half the games with each side: {p}");
        assert_eq!(def.iter().sum::<u64>(), 2);
        let points = (att[0] + def[0]) as f64 + 0.5 * (att[1] + def[1]) as f64;
        assert_eq!(points, f(&cross[i][jj]));
    }
    // Ratings follow scores (a balanced round robin: the fit orders agents as their points),
    // sum to zero, and sit inside their intervals.
    let ratings = j["ratings"].as_array().unwrap();
    let elo: Vec<f64> = ratings.iter().map(|r| f(&r["elo"])).collect();
    assert!(elo.iter().sum::<f64>().abs() < 1e-6, "{elo:?}");
    for (k, r) in ratings.iter().enumerate() {
        assert_eq!(f(&r["points"]), totals[k]);
        assert!(f(&r["low"]) < elo[k] && elo[k] < f(&r["high"]), "{r}");
    }
    for a in 0..n {
        for b in 0..n {
            if totals[a] > totals[b] {
                assert!(elo[a] > elo[b], "scores {totals:?}, ratings {elo:?}");
            } else if totals[a] == totals[b] {
                assert!((elo[a] - elo[b]).abs() < 1e-6, "scores {totals:?}, ratings {elo:?}");
            }
        }
    }
    let standings: Vec<usize> = j["standings"].as_array().unwrap().iter().map(|s| s["index"].as_u64().unwrap() as usize).collect();
    assert!(standings.windows(2).all(|w| elo[w[0]] >= elo[w[1]]), "{standings:?} {elo:?}");

    // The Markdown shows the same crosstable and a ratings table, best first.
    let md = std::fs::read_to_string(out.join("tournament.md")).unwrap();
    assert!(md.contains("## Crosstable") && md.contains("## Ratings") && md.contains("Bradley-Terry"), "{md}");
    assert!(md.contains(&format!("| 1 | `random` | — | {}/4 | {}/4 |", f(&cross[0][1]), f(&cross[0][2]))), "{md}");
    let best = &j["agents"][standings[0]];
    assert!(md.contains(&format!("| 1 | `{}` |", best.as_str().unwrap())), "{md}");

    // Resume: a rerun of a finished tournament plays nothing; with one pairing's result gone
    // it plays that one only, and the same seed gives the same results.
    let again = ok(&tournament(&out, AGENTS, "4"));
    assert!(again.contains("0 played, 3 from an earlier run"), "{again}");
    let before = mtimes(&out);
    assert_eq!(before.len(), 3);
    let gone = out.join("pairings").join("1-3.json");
    let old_gone = read_json(&gone);
    std::fs::remove_file(&gone).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    let resumed = ok(&tournament(&out, AGENTS, "4"));
    assert!(resumed.contains("1 played, 2 from an earlier run"), "{resumed}");
    assert!(resumed.contains("random vs mcts:sims=32: 4 games"), "{resumed}");
    assert!(!resumed.contains("random vs mcts:sims=8:"), "{resumed}");
    let after = mtimes(&out);
    for ((name, t0), (name1, t1)) in before.iter().zip(&after) {
        assert_eq!(name, name1);
        if name != "1-3.json" {
            assert_eq!(t0, t1, "{name} was rewritten");
        }
    }
    assert_eq!(read_json(&gone)["results"], old_gone["results"], "the same seed replays the same games");
    assert_eq!(read_json(&out.join("tournament.json"))["crosstable"], j["crosstable"]);

    // Other settings into the same folder: refused, one line.
    fails_with(&tournament(&out, "random;mcts:sims=8", "4"), "different agents");
    fails_with(&tournament(&out, AGENTS, "6"), "different games");
    let o = run(&["tournament", "--variant", "tablut", "--agents", AGENTS, "--games", "4", "--seed", "3", "--out", out.to_str().unwrap(), "--quiet"]);
    fails_with(&o, "different variant");
    let _ = std::fs::remove_dir_all(&out);
}

/// The sha256 of a file, computed here (not by tafl-lab).
fn sha256(path: &Path) -> String {
    use sha2::{Digest, Sha256};
    format!("{:x}", Sha256::digest(std::fs::read(path).unwrap()))
}

#[test]
fn a_model_replaced_in_place_replays_its_pairings_and_only_those() {
    let root = scratch("tournament-provenance");
    std::fs::create_dir_all(&root).unwrap();
    let model = root.join("net.safetensors");
    let m = model.to_str().unwrap();
    let new_model = |seed: &str| ok(&run(&["new-model", "--variant", "brandubh", "--out", m, "--blocks", "1", "--channels", "4", "--seed", seed]));
    new_model("1");
    let first_sha = sha256(&model);
    let out = root.join("t");
    let az = format!("az:model={m},sims=4,device=cpu");
    let agents = format!("random;mcts:sims=4;{az}");
    let text = ok(&tournament(&out, &agents, "2"));
    assert!(text.contains("3 pairings of 2 games: 3 played, 0 from an earlier run"), "{text}");

    // Every agent's spec and model hash, in tournament.json and in each pairing's file.
    let j = read_json(&out.join("tournament.json"));
    let model_entry = |sha: &str| serde_json::json!([{"path": m, "sha256": sha}]);
    assert_eq!(j["provenance"][0], serde_json::json!({"spec": "random", "models": []}));
    assert_eq!(j["provenance"][1], serde_json::json!({"spec": "mcts:sims=4", "models": []}));
    assert_eq!(j["provenance"][2]["spec"], az.as_str());
    assert_eq!(j["provenance"][2]["models"], model_entry(&first_sha));
    for p in j["pairings"].as_array().unwrap() {
        let (i, k) = (p["i"].as_u64().unwrap() as usize, p["j"].as_u64().unwrap() as usize);
        assert_eq!(p["provenance"]["a"], j["provenance"][i], "{p}");
        assert_eq!(p["provenance"]["b"], j["provenance"][k], "{p}");
    }
    assert_eq!(read_json(&out.join("pairings/2-3.json"))["provenance"]["b"]["models"], model_entry(&first_sha));
    assert!(std::fs::read_to_string(out.join("tournament.md")).unwrap().contains(&first_sha));

    // The same model: nothing is replayed.
    let again = ok(&tournament(&out, &agents, "2"));
    assert!(again.contains("0 played, 3 from an earlier run") && !again.contains("replay"), "{again}");

    // The model replaced in place by other weights: the two pairings with it are replayed,
    // random vs mcts is kept (its file is not rewritten).
    let before = mtimes(&out);
    std::thread::sleep(std::time::Duration::from_millis(20));
    new_model("2");
    let second_sha = sha256(&model);
    assert_ne!(first_sha, second_sha);
    let resumed = ok(&tournament(&out, &agents, "2"));
    assert!(resumed.contains("2 played, 1 from an earlier run; 2 replayed"), "{resumed}");
    let changed = format!("model {m} changed (sha256 {} before, {} now)", &first_sha[..12], &second_sha[..12]);
    assert!(resumed.contains(&format!("replaying random vs {az}")) && resumed.contains(&format!("replaying mcts:sims=4 vs {az}")), "{resumed}");
    assert_eq!(resumed.matches(&changed).count(), 2, "{resumed}");
    let after = mtimes(&out);
    assert_eq!(before[0], after[0], "1-2.json kept");
    assert_ne!(before[1], after[1], "1-3.json replayed");
    assert_ne!(before[2], after[2], "2-3.json replayed");
    for f in ["1-3.json", "2-3.json"] {
        assert_eq!(read_json(&out.join("pairings").join(f))["provenance"]["b"]["models"], model_entry(&second_sha), "{f}");
    }
    assert_eq!(read_json(&out.join("tournament.json"))["provenance"][2]["models"], model_entry(&second_sha));

    // State saved before hashes were recorded: the pairings with a model are replayed (their
    // weights are unknown), the one without is kept.
    for e in std::fs::read_dir(out.join("pairings")).unwrap() {
        let path = e.unwrap().path();
        let mut v = read_json(&path);
        v.as_object_mut().unwrap().remove("provenance");
        std::fs::write(&path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    }
    let before = mtimes(&out);
    std::thread::sleep(std::time::Duration::from_millis(20));
    let old = ok(&tournament(&out, &agents, "2"));
    assert!(old.contains("2 played, 1 from an earlier run; 2 replayed"), "{old}");
    assert_eq!(old.matches("saved without model hashes, so the weights it measured are unknown").count(), 2, "{old}");
    let after = mtimes(&out);
    assert_eq!(before[0], after[0], "1-2.json kept");
    assert!(before[1] != after[1] && before[2] != after[2], "1-3.json and 2-3.json replayed");
    let j = read_json(&out.join("tournament.json"));
    assert_eq!(j["pairings"][0]["provenance"]["a"], serde_json::json!({"spec": "random", "models": []}));
    assert_eq!(j["pairings"][2]["provenance"]["b"]["models"], model_entry(&second_sha));
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn agents_may_be_given_one_flag_each() {
    // Spec texts may hold commas; --agent takes one spec each.
    let out = scratch("tournament-flags");
    let o = run(&["tournament", "--agent", "random", "--agent", "mcts:sims=4,cpuct=2", "--games", "2", "--out", out.to_str().unwrap(), "--quiet"]);
    let text = ok(&o);
    assert!(text.contains("1 pairing of 2 games: 1 played"), "{text}");
    let j = read_json(&out.join("tournament.json"));
    assert_eq!(j["agents"][1], "mcts:sims=4,cpuct=2");
    assert!(out.join("pairings/1-2.json").exists());
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn bad_arguments_are_one_line_errors() {
    let out = scratch("tournament-bad");
    let dir = out.to_str().unwrap();
    fails_with(&run(&["tournament", "--agents", "random", "--out", dir]), "at least two agents");
    fails_with(&run(&["tournament", "--agents", "random;random", "--out", dir]), "listed twice");
    fails_with(&run(&["tournament", "--agents", "random;mcts:sims=4", "--games", "3", "--out", dir]), "--games");
    fails_with(&run(&["tournament", "--agents", "random;bogus", "--out", dir]), "bogus");
    let _ = std::fs::remove_dir_all(&out);
}
