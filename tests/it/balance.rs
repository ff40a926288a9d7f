//! The balance laboratory, run reports and match statistics through the command line.

use crate::common;

use common::cli::{fails_with, ok, run, scratch};
use std::path::Path;
use std::process::Output;

fn dir(tag: &str) -> std::path::PathBuf {
    scratch(&format!("balance-{tag}"))
}

fn rows(d: &Path) -> Vec<serde_json::Value> {
    serde_json::from_str::<serde_json::Value>(&std::fs::read_to_string(d.join("balance.json")).unwrap()).unwrap().as_array().unwrap().clone()
}

fn balance(out: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["balance", "--variants", "brandubh", "--agent", "mcts:sims=12", "--games", "6", "--out", out.to_str().unwrap(), "--quiet"];
    args.extend_from_slice(extra);
    run(&args)
}

#[test]
fn balance_writes_reports_whose_counts_add_up() {
    let d = dir("sweep");
    let text = ok(&balance(&d, &["--sims", "4,16", "--seed", "5"]));
    assert!(text.contains("brandubh @ 4 sims") && text.contains("brandubh @ 16 sims"), "{text}");
    for f in ["report.md", "balance.csv", "balance.json", "rates.svg", "rates.png", "lengths.svg", "lengths.png", "strength.svg", "strength.png"] {
        assert!(d.join(f).is_file(), "{f} written");
    }
    let r = rows(&d);
    assert_eq!(r.len(), 2);
    for (row, sims) in r.iter().zip([4, 16]) {
        let n = |k: &str| row[k].as_u64().unwrap();
        assert_eq!(row["sims"], sims);
        assert_eq!(n("games"), 6);
        assert_eq!(n("attackers_win") + n("defenders_win") + n("draws"), 6);
        let rate = row["defenders_rate"].as_f64().unwrap();
        let ci = row["defenders_ci"].as_array().unwrap();
        assert!(ci[0].as_f64().unwrap() <= rate && rate <= ci[1].as_f64().unwrap());
        let reasons: u64 = row["reasons"].as_object().unwrap().values().map(|v| v.as_u64().unwrap()).sum();
        assert_eq!(reasons, 6);
        let hist: u64 = row["length_histogram"].as_array().unwrap().iter().map(|b| b[2].as_u64().unwrap()).sum();
        assert_eq!(hist, 6);
        assert!((row["human"]["defenders_win"].as_f64().unwrap() - 0.595).abs() < 1e-9, "human figures beside ours");
        // Provenance: the agent's canonical spec; random-rollout MCTS loads no model.
        assert_eq!(row["provenance"], serde_json::json!({"spec": format!("mcts:sims={sims}"), "models": []}));
    }
    let csv = std::fs::read_to_string(d.join("balance.csv")).unwrap();
    assert_eq!(csv.lines().count(), 3);
    assert!(csv.lines().next().unwrap().starts_with("variant,changes,agent,sims,games"));
    let md = std::fs::read_to_string(d.join("report.md")).unwrap();
    assert!(md.contains("| brandubh @ 4 sims | 6 (0) |") && md.contains("59.5%") && md.contains("strength.png"));
    assert!(std::fs::read_to_string(d.join("rates.svg")).unwrap().contains("<svg"));
    assert_eq!(&std::fs::read(d.join("rates.png")).unwrap()[..8], b"\x89PNG\r\n\x1a\n");
}

/// One deterministic network playing itself (the shipped brandubh network, no noise): every
/// game of a match with A = B and of a balance run is its own move sequence, because each game
/// gets its own random opening; with no opening at all the network plays one game over and
/// over, and balance counts it once.
#[test]
fn self_play_of_a_deterministic_network_plays_distinct_games() {
    let agent = "az:model=models/brandubh,sims=8";
    let o = run(&["match", "--variant", "brandubh", "--a", agent, "--b", agent, "--games", "8", "--seed", "7", "--json", "--quiet"]);
    let v: serde_json::Value = serde_json::from_str(ok(&o).trim()).unwrap();
    assert_eq!((v["games"].as_u64(), v["distinct_games"].as_u64()), (Some(8), Some(8)), "{v}");

    let d = dir("distinct");
    let agent_args = ["--agent", agent, "--games", "8", "--seed", "7"];
    let mut args = vec!["balance", "--variants", "brandubh", "--opening-plies", "2", "--out", d.to_str().unwrap(), "--quiet"];
    args.extend_from_slice(&agent_args);
    let text = ok(&run(&args));
    assert!(text.contains("8 distinct games"), "{text}");
    let r = rows(&d);
    assert_eq!((r[0]["games"].as_u64(), r[0]["duplicates"].as_u64()), (Some(8), Some(0)), "{}", r[0]);

    let d0 = dir("distinct-none");
    let mut args = vec!["balance", "--variants", "brandubh", "--opening-plies", "0", "--out", d0.to_str().unwrap(), "--quiet"];
    args.extend_from_slice(&agent_args);
    let text = ok(&run(&args));
    assert!(text.contains("1 distinct games") && text.contains("7 duplicate games left out"), "{text}");
    let r = rows(&d0);
    assert_eq!((r[0]["games"].as_u64(), r[0]["duplicates"].as_u64()), (Some(1), Some(7)), "{}", r[0]);
    let reasons: u64 = r[0]["reasons"].as_object().unwrap().values().map(|v| v.as_u64().unwrap()).sum();
    assert_eq!(reasons, 1, "each game's ending counted once");
}

#[test]
fn a_seed_repeats_a_balance_run_exactly() {
    let (a, b) = (dir("seed-a"), dir("seed-b"));
    ok(&balance(&a, &["--seed", "9"]));
    ok(&balance(&b, &["--seed", "9"]));
    assert_eq!(rows(&a), rows(&b));
}

#[test]
fn rule_tweaks_are_named_and_runs_compare() {
    let (plain, strong) = (dir("plain"), dir("strong"));
    ok(&balance(&plain, &[]));
    ok(&balance(&strong, &["--set", "king_strength=strong"]));
    let r = rows(&strong);
    assert_eq!(r[0]["changes"][0], "king_strength=strong");
    assert!(r[0]["human"].is_null(), "human figures are for the unchanged preset");
    assert!(std::fs::read_to_string(strong.join("report.md")).unwrap().contains("brandubh [king_strength=strong]"));
    // A run with mixed results compared with itself: z = 0, p = 1 (to the normal CDF's
    // accuracy), not significant. (The real runs are all defender wins, where p = 1 exactly
    // whatever the test computes, so they would not show a wrong formula.)
    let mut mixed = rows(&plain);
    // A row written before provenance was recorded still reads.
    assert!(mixed[0].as_object_mut().unwrap().remove("provenance").is_some());
    mixed[0]["games"] = 100.into();
    mixed[0]["defenders_win"] = 60.into();
    mixed[0]["defenders_rate"] = 0.6.into();
    let a = plain.join("mixed.json");
    std::fs::write(&a, serde_json::to_string(&mixed).unwrap()).unwrap();
    let same = ok(&run(&["balance", "--compare", a.to_str().unwrap(), a.to_str().unwrap(), "--json"]));
    let c: serde_json::Value = serde_json::from_str(same.trim()).unwrap();
    assert_eq!(c[0]["z"], 0.0);
    assert!((c[0]["p_value"].as_f64().unwrap() - 1.0).abs() < 1e-6, "{c}");
    assert_eq!(c[0]["significant"], false);
    assert_eq!(c[0]["paired_by"], "variant, changes, sims");
    // 60/100 against 45/100: pooled z = 2.1243, two-sided p = 0.0337 (by hand).
    let mut other = mixed.clone();
    other[0]["defenders_win"] = 45.into();
    other[0]["defenders_rate"] = 0.45.into();
    let b = plain.join("other.json");
    std::fs::write(&b, serde_json::to_string(&other).unwrap()).unwrap();
    let c: serde_json::Value = serde_json::from_str(ok(&run(&["balance", "--compare", a.to_str().unwrap(), b.to_str().unwrap(), "--json"])).trim()).unwrap();
    assert!((c[0]["z"].as_f64().unwrap() - 2.1243).abs() < 1e-3, "{c}");
    assert!((c[0]["p_value"].as_f64().unwrap() - 0.0337).abs() < 1e-3, "{c}");
    assert_eq!(c[0]["significant"], true);
    // Rows pair by their rule changes too: [plain, strong] against [strong, plain] compares
    // plain with plain and strong with strong, not the first row with the first match.
    let (p_row, s_row) = (mixed[0].clone(), rows(&strong)[0].clone());
    let (ab, ba) = (plain.join("ab.json"), plain.join("ba.json"));
    std::fs::write(&ab, serde_json::to_string(&[&p_row, &s_row]).unwrap()).unwrap();
    std::fs::write(&ba, serde_json::to_string(&[&s_row, &p_row]).unwrap()).unwrap();
    let c: serde_json::Value = serde_json::from_str(ok(&run(&["balance", "--compare", ab.to_str().unwrap(), ba.to_str().unwrap(), "--json"])).trim()).unwrap();
    assert_eq!(c.as_array().unwrap().len(), 2);
    for pair in c.as_array().unwrap() {
        assert_eq!(pair["a"], pair["b"], "{pair}");
        assert_eq!(pair["paired_by"], "variant, changes, sims");
    }
    // A preset run against a run with a change: paired by variant and budget, labels name it.
    let text = ok(&run(&["balance", "--compare", plain.join("balance.json").to_str().unwrap(), strong.join("balance.json").to_str().unwrap()]));
    assert!(text.contains("[king_strength=strong]") && text.contains("paired by variant, sims"), "{text}");
    // A run where the defenders won 3 of 200 against one where they won 197 of 200.
    let mut fake = rows(&plain);
    for (v, path) in [(3, "low.json"), (197, "high.json")] {
        fake[0]["games"] = 200.into();
        fake[0]["defenders_win"] = v.into();
        fake[0]["defenders_rate"] = (v as f64 / 200.0).into();
        std::fs::write(plain.join(path), serde_json::to_string(&fake).unwrap()).unwrap();
    }
    let text = ok(&run(&["balance", "--compare", plain.join("low.json").to_str().unwrap(), plain.join("high.json").to_str().unwrap()]));
    assert!(text.contains("different at the 5% level"), "{text}");
}

/// A designer's A/B with a network: a model trained on the preset plays the preset under a
/// changed rule (checked against the preset, not the changed rules), and the rows say which
/// rule changed; a model of another variant is still refused.
#[test]
fn a_network_trained_on_the_preset_plays_it_under_a_changed_rule() {
    let d = dir("net-set");
    std::fs::create_dir_all(&d).unwrap();
    let model = d.join("brandubh.safetensors");
    common::cli::new_model(&model, "brandubh");
    let agent = format!("az:model={},sims=4", model.display());
    let out = d.join("unarmed");
    let args = |out: &Path| -> Vec<String> {
        ["balance", "--variants", "brandubh", "--agent", &agent, "--games", "4", "--opening-plies", "2", "--quiet", "--set", "king_armed=no", "--out"]
            .iter()
            .map(|s| s.to_string())
            .chain([out.display().to_string()])
            .collect()
    };
    let text = ok(&run(&args(&out).iter().map(String::as_str).collect::<Vec<_>>()));
    assert!(text.contains("brandubh [king_armed=no] @ 4 sims"), "{text}");
    let r = rows(&out);
    assert_eq!((r[0]["changes"][0].as_str(), r[0]["games"].as_u64()), (Some("king_armed=no"), Some(4)));
    // The handicap takes the same --set: the model is checked against the preset there too.
    let hc = d.join("handicap");
    ok(&run(&[
        "balance",
        "--handicap",
        "2",
        "--variants",
        "brandubh",
        "--agent",
        &agent,
        "--games",
        "2",
        "--quiet",
        "--set",
        "king_armed=no",
        "--out",
        hc.to_str().unwrap(),
    ]));
    assert!(hc.join("handicap.json").is_file());
    // A model of another variant is refused under the changed rules as under the preset.
    let tablut = d.join("tablut.safetensors");
    common::cli::new_model(&tablut, "tablut");
    let tablut_agent = format!("az:model={},sims=4", tablut.display());
    fails_with(
        &run(&[
            "balance",
            "--variants",
            "brandubh",
            "--agent",
            &tablut_agent,
            "--games",
            "2",
            "--set",
            "king_armed=no",
            "--out",
            d.join("x").to_str().unwrap(),
        ]),
        "the model was trained for tablut",
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn balance_input_errors_are_one_line() {
    let d = dir("errors");
    let o = d.to_str().unwrap();
    fails_with(&run(&["balance", "--variants", "brandubh,nosuch", "--agent", "mcts:sims=4", "--games", "2", "--out", o]), "nosuch");
    fails_with(&run(&["balance", "--variants", "brandubh", "--games", "0", "--out", o]), "--games");
    fails_with(&run(&["balance", "--variants", "brandubh", "--set", "king_power=9", "--out", o]), "king_power");
    fails_with(&run(&["balance", "--variants", "brandubh", "--sims", "16,0", "--out", o]), "--sims");
    fails_with(&run(&["balance", "--compare", "/nonexistent/a.json", "/nonexistent/b.json"]), "/nonexistent/a.json");
    assert!(!d.exists(), "no output for bad input");
}

#[test]
fn report_draws_learning_curves_from_a_run() {
    let d = dir("report");
    let run_dir = d.join("run");
    ok(&run(&["train", "--config", "configs/runs/smoke.toml", "--run-dir", run_dir.to_str().unwrap(), "--quiet"]));
    let text = ok(&run(&["report", "--run-dir", run_dir.to_str().unwrap()]));
    assert!(text.contains("2 generations"), "{text}");
    let md = std::fs::read_to_string(run_dir.join("report/learning.md")).unwrap();
    assert!(md.contains("| 1 |") && md.contains("| 2 |") && md.contains("vs random"), "{md}");
    // `random` is a fixed opponent (an anchor): its per-side plot is drawn and on the page.
    assert!(md.contains("(anchors.png)"), "{md}");
    for f in ["elo", "anchors", "scores", "selfplay", "losses", "calibration"] {
        assert!(run_dir.join(format!("report/{f}.svg")).is_file() && run_dir.join(format!("report/{f}.png")).is_file(), "{f}");
    }
    // The per-side calibration of the self-play values, one row per generation.
    let cal = &md[md.find("## Value calibration").expect("a calibration section")..];
    assert_eq!(cal.lines().filter(|l| l.starts_with("| 1 |") || l.starts_with("| 2 |")).count(), 2, "{cal}");
    assert!(std::fs::read_to_string(run_dir.join("report/report.html")).unwrap().contains("<h2>Value calibration</h2>"));
    fails_with(&run(&["report", "--run-dir", d.join("missing").to_str().unwrap()]), "metrics.jsonl");
}

#[test]
fn match_prints_an_elo_interval_and_stops_on_an_sprt_decision() {
    let text = ok(&run(&["match", "--a", "mcts:sims=60", "--b", "random", "--games", "400", "--sprt", "0,100", "--json", "--quiet"]));
    let v: serde_json::Value = serde_json::from_str(text.trim()).unwrap();
    let games = v["games"].as_u64().unwrap();
    assert!(games < 400, "stopped early after {games}");
    assert_eq!(v["sprt"]["decision"], "accept_h1");
    assert!(v["sprt"]["llr"].as_f64().unwrap() >= v["sprt"]["upper"].as_f64().unwrap());
    assert!(v["elo"]["low"].as_f64().unwrap() > 0.0 && v["elo"]["low"].as_f64().unwrap() <= v["elo"]["elo"].as_f64().unwrap());
    fails_with(&run(&["match", "--a", "random", "--b", "random", "--sprt", "50,0"]), "--sprt");
}

#[test]
fn a_ladder_follows_the_side_rates_of_a_runs_checkpoints() {
    let run_dir = dir("ladder-run");
    ok(&run(&["train", "--config", "configs/runs/smoke.toml", "--run-dir", run_dir.to_str().unwrap(), "--generations", "3", "--quiet"]));
    let out = dir("ladder-out");
    let ladder = |out: &Path, extra: &[&str]| {
        let mut args = vec![
            "balance",
            "--ladder",
            run_dir.to_str().unwrap(),
            "--every",
            "2",
            "--games",
            "6",
            "--ladder-games",
            "4",
            "--sims",
            "4",
            "--out",
            out.to_str().unwrap(),
            "--quiet",
            "--device",
            "cpu",
        ];
        args.extend_from_slice(extra);
        ok(&run(&args))
    };
    let text = ladder(&out, &[]);
    // Checkpoints 0..=3, every second one and the last: 0, 2, 3.
    for g in ["generation 0: Elo +0", "generation 2:", "generation 3:"] {
        assert!(text.contains(g), "`{g}` not in {text}");
    }
    assert!(!text.contains("generation 1:"), "{text}");
    for f in ["ladder.json", "ladder.md", "ladder.svg", "ladder.png"] {
        assert!(out.join(f).is_file(), "{f} written");
    }
    let l: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("ladder.json")).unwrap()).unwrap();
    let rows = l["rows"].as_array().unwrap();
    assert_eq!(rows.iter().map(|r| r["generation"].as_u64().unwrap()).collect::<Vec<_>>(), vec![0, 2, 3]);
    for r in rows {
        let b = &r["balance"];
        // Provenance: each checkpoint's file and the sha256 of its bytes.
        use sha2::{Digest, Sha256};
        let file = run_dir.join("models").join(format!("{:06}.safetensors", r["generation"].as_u64().unwrap()));
        let sha = format!("{:x}", Sha256::digest(std::fs::read(&file).unwrap()));
        assert_eq!(b["provenance"]["models"], serde_json::json!([{"path": file.to_str().unwrap(), "sha256": sha}]), "{b}");
        assert!(b["provenance"]["spec"].as_str().unwrap().starts_with(&format!("az:model={},sims=4", file.display())), "{b}");
        let sum = b["attackers_win"].as_u64().unwrap() + b["defenders_win"].as_u64().unwrap() + b["draws"].as_u64().unwrap();
        assert_eq!(sum, 6, "{b}");
        assert!(r["elo_low"].as_f64().unwrap() <= r["elo"].as_f64().unwrap() && r["elo"].as_f64().unwrap() <= r["elo_high"].as_f64().unwrap());
    }
    // The fit really ran: every checkpoint after the first has an interval of some width (a
    // failed fit used to leave every rating at 0 to 0 and still pass).
    for r in &rows[1..] {
        assert!(r["elo_low"].as_f64().unwrap() < r["elo_high"].as_f64().unwrap(), "{r}");
    }
    // Two matches between neighbours, 4 games each, the newer checkpoint first.
    let m = l["matches"].as_array().unwrap();
    assert_eq!(m.len(), 2);
    assert_eq!((m[0]["a"].as_u64(), m[0]["b"].as_u64(), m[1]["a"].as_u64()), (Some(2), Some(0), Some(3)));
    for x in m {
        assert_eq!(x["wins"].as_u64().unwrap() + x["draws"].as_u64().unwrap() + x["losses"].as_u64().unwrap(), 4);
    }
    // The human rate is drawn in, with its source.
    assert!(std::fs::read_to_string(out.join("ladder.svg")).unwrap().contains("human play (aagenielsen.dk"));
    assert_eq!(l["human"]["defenders_win"].as_f64(), Some(0.595));
    // Played in two shards (each its share of every self-play and match) and merged: the
    // same ladder.
    let shards: Vec<_> = (0..2).map(|i| dir(&format!("ladder-shard-{i}"))).collect();
    for (i, d) in shards.iter().enumerate() {
        let text = ladder(d, &["--shard", &format!("{i}/2")]);
        assert!(text.contains(&format!("shard {i}/2: 3 checkpoints, 2 matches")), "{text}");
    }
    let merged = dir("ladder-merged");
    ok(&run(&["balance", "--merge", shards[0].to_str().unwrap(), shards[1].to_str().unwrap(), "--out", merged.to_str().unwrap()]));
    let m: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(merged.join("ladder.json")).unwrap()).unwrap();
    assert_eq!(m, l);
    fails_with(&run(&["balance", "--merge", shards[0].to_str().unwrap(), "--out", merged.to_str().unwrap()]), "shard 1/2 is missing");
    for d in shards.iter().chain([&merged]) {
        let _ = std::fs::remove_dir_all(d);
    }
    // A directory that is not a run, and a run without checkpoints.
    fails_with(&run(&["balance", "--ladder", out.to_str().unwrap(), "--out", out.to_str().unwrap()]), "expected a training run directory with models/");
    std::fs::create_dir_all(out.join("models")).unwrap();
    fails_with(&run(&["balance", "--ladder", out.to_str().unwrap(), "--out", out.to_str().unwrap()]), "no checkpoints");
    let _ = std::fs::remove_dir_all(&run_dir);
    let _ = std::fs::remove_dir_all(&out);
}

/// `balance --handicap`: equal search first, then the search of the side that scored less
/// multiplied by each factor; every row's games add up, the multiplied side's sims are the
/// agent's times the factor, and the fit's verdict is printed and saved.
#[test]
fn handicap_multiplies_the_weaker_sides_search_and_fits_the_even_point() {
    let d = dir("handicap");
    let text = ok(&run(&[
        "balance",
        "--handicap",
        "4",
        "--variants",
        "brandubh",
        "--agent",
        "mcts:sims=8",
        "--games",
        "6",
        "--seed",
        "3",
        "--out",
        d.to_str().unwrap(),
        "--quiet",
    ]));
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(d.join("handicap.json")).unwrap()).unwrap();
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "{v}");
    assert_eq!((rows[0]["attacker_sims"].as_u64(), rows[0]["defender_sims"].as_u64(), rows[0]["x"].as_f64()), (Some(8), Some(8), Some(0.0)));
    let helped = rows[1]["helped"].as_str().unwrap();
    let (att, def) = if helped == "attackers" { (32, 8) } else { (8, 32) };
    assert_eq!((rows[1]["attacker_sims"].as_u64(), rows[1]["defender_sims"].as_u64()), (Some(att), Some(def)), "{v}");
    // The side that scored less at equal search is the one helped.
    let equal = rows[0]["attackers_score"].as_f64().unwrap();
    assert_eq!(helped, if equal < 0.5 { "attackers" } else { "defenders" });
    for r in rows {
        let n = |k: &str| r[k].as_u64().unwrap();
        assert_eq!(n("attackers_win") + n("defenders_win") + n("draws"), n("games"), "{r}");
        assert!(n("games") <= 6 && n("distinct") <= 6, "{r}");
    }
    let verdict = v["verdict"].as_str().unwrap();
    assert!(text.contains(&format!("brandubh: {verdict}")), "{text}");
    assert!(verdict.starts_with("even when the") || verdict.starts_with("no even point"), "{verdict}");
    fails_with(&run(&["balance", "--variants", "brandubh", "--handicap", "1", "--out", d.to_str().unwrap()]), "at least one factor above 1");
    fails_with(&run(&["balance", "--variants", "brandubh", "--handicap", "2,x", "--out", d.to_str().unwrap()]), "--handicap: \"x\"");
    fails_with(&run(&["balance", "--variants", "brandubh", "--handicap", "2", "--agent", "random", "--out", d.to_str().unwrap()]), "does not search");
}

/// `balance --atlas DIR`: each trained preset of DIR (a folder named after it holding
/// model.safetensors) gets a row with its balance at each strength, its handicap and the
/// matches kept beside it; a folder not named after a preset is refused by name.
#[test]
fn the_atlas_measures_every_trained_preset_and_reads_its_matches() {
    let d = dir("atlas");
    let atlas = d.join("models");
    let model = atlas.join("brandubh");
    std::fs::create_dir_all(model.join("matches")).unwrap();
    common::cli::new_model(&model.join("model.safetensors"), "brandubh");
    std::fs::write(
        model.join("matches/vs-mcts400.json"),
        r#"{"a":"az:model=m,sims=64","b":"mcts:sims=400","seed":41,"a_as_attackers":{"win":7,"draw":1,"loss":2},"a_as_defenders":{"win":10,"draw":0,"loss":0},"forfeits":0,"voids":0,"disagreements":0}"#,
    )
    .unwrap();
    let out = d.join("out");
    let args = [
        "balance",
        "--atlas",
        atlas.to_str().unwrap(),
        "--sims",
        "2,4",
        "--factors",
        "2",
        "--games",
        "4",
        "--seed",
        "3",
        "--out",
        out.to_str().unwrap(),
        "--quiet",
    ];
    let text = ok(&run(&args));
    assert!(text.contains("brandubh @ 2 sims") && text.contains("brandubh @ 4 sims") && text.contains("brandubh: handicap:"), "{text}");
    for f in ["atlas.md", "atlas.csv", "atlas.json", "atlas.html", "handicap.svg", "handicap.png"] {
        assert!(out.join(f).is_file(), "{f} written");
    }
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("atlas.json")).unwrap()).unwrap();
    let p = &v["presets"][0];
    assert_eq!(p["preset"], "brandubh");
    let balance = p["balance"].as_array().unwrap();
    assert_eq!(balance.iter().map(|b| b["sims"].as_u64().unwrap()).collect::<Vec<_>>(), [2, 4]);
    for b in balance {
        let n = |k: &str| b[k].as_u64().unwrap();
        assert_eq!(n("attackers_win") + n("defenders_win") + n("draws"), n("games"), "{b}");
        assert!(n("games") + n("duplicates") == 4, "{b}");
    }
    assert_eq!(p["handicap"]["factors"], serde_json::json!([2]));
    assert_eq!(p["strength"][0]["as_attackers"], serde_json::json!({"win": 7, "draw": 1, "loss": 2}));
    let md = std::fs::read_to_string(out.join("atlas.md")).unwrap();
    assert!(md.contains("`mcts:sims=400`: 7-1-2 attacking, 10-0-0 defending"), "{md}");
    assert_eq!(std::fs::read_to_string(out.join("atlas.csv")).unwrap().lines().count(), 3, "a header and a line per strength");
    // Run again with the same model and settings: the kept games stand for playing them, and
    // the table is the same; another seed plays them again.
    let json_before = std::fs::read_to_string(out.join("atlas.json")).unwrap();
    let again = ok(&run(&args));
    assert!(again.contains("brandubh: measured before") && !again.contains("brandubh @ 2 sims"), "{again}");
    assert_eq!(std::fs::read_to_string(out.join("atlas.json")).unwrap(), json_before);
    let mut reseeded = args;
    reseeded[10] = "4";
    assert!(!ok(&run(&reseeded)).contains("measured before"), "another seed is measured afresh");
    // A model folder that is not a preset's name, and an empty folder, are one-line errors.
    std::fs::create_dir_all(atlas.join("mine")).unwrap();
    std::fs::copy(model.join("model.safetensors"), atlas.join("mine/model.safetensors")).unwrap();
    fails_with(&run(&args), "not named after a preset");
    let empty = d.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    fails_with(&run(&["balance", "--atlas", empty.to_str().unwrap(), "--out", out.to_str().unwrap()]), "no trained model");
}
