//! `tafl-lab calibrate` on small inputs made here (archive records, a run's shards, a match
//! record), its counts and rates checked against figures computed from the games themselves.

use crate::common;

use common::cli::{fails_with, ok, run, scratch};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tafl_lab::rules::records::{write_csv, RecordResult};
use tafl_lab::rules::{Move, Outcome, Position, Side, Variant};
use tafl_lab::selfplay::shard::{self, Shard, StoredGame, StoredPly};

fn brandubh() -> Arc<Variant> {
    Arc::new(Variant::preset("brandubh").unwrap())
}

/// A random game to its end by the rules.
fn random_game(v: &Arc<Variant>, seed: u64) -> (Vec<Move>, Outcome) {
    let mut rng = SmallRng::seed_from_u64(seed);
    let g = tafl_lab::play::random_game(v.clone(), &mut |n| rng.gen_range(0..n));
    (g.moves.iter().map(|p| p.mv).collect(), g.outcome)
}

/// A tiny brandubh network in `dir`.
fn tiny_model(dir: &Path) -> PathBuf {
    let m = dir.join("tiny.safetensors");
    common::cli::new_model(&m, "brandubh");
    m
}

fn json(args: &[&str]) -> Value {
    serde_json::from_str(&ok(&run(args))).unwrap()
}

/// Attacker-to-move and defender-to-move positions of a game of `len` plies (brandubh: the
/// attackers move first).
fn sides(len: usize) -> (usize, usize) {
    (len.div_ceil(2), len / 2)
}

/// The mean score the attackers got over their positions, from the games alone.
fn attackers_realized(games: &[(usize, Option<Side>)]) -> f64 {
    let (mut sum, mut n) = (0.0, 0usize);
    for &(len, winner) in games {
        let (att, _) = sides(len);
        let score = match winner {
            Some(Side::Attackers) => 1.0,
            Some(Side::Defenders) => 0.0,
            None => 0.5,
        };
        sum += score * att as f64;
        n += att;
    }
    sum / n as f64
}

#[test]
fn archive_records_count_every_position_of_each_side_and_the_results() {
    let d = scratch("calibrate-csv");
    std::fs::create_dir_all(&d).unwrap();
    let model = tiny_model(&d);
    let v = brandubh();
    let start = Position::start(v.clone());
    let mut lines = vec!["moves,attacker_captures,defender_captures,result".to_string()];
    // (plies, winner) of every game with a result; reasons of the defenders' wins.
    let mut scored: Vec<(usize, Option<Side>)> = Vec::new();
    let mut defender_reasons: std::collections::BTreeMap<String, u64> = Default::default();
    for seed in 0..10 {
        let (moves, outcome) = random_game(&v, seed);
        let result = match outcome.winner {
            Some(s) => RecordResult::Won(s),
            None => RecordResult::Draw,
        };
        lines.push(write_csv(&start, &moves, result));
        scored.push((moves.len(), outcome.winner));
        if outcome.winner == Some(Side::Defenders) {
            *defender_reasons.entry(outcome.reason.name().to_string()).or_default() += 1;
        }
    }
    let (moves, _) = random_game(&v, 99);
    // An abandoned game (no result: left out) and one the attackers won by resignation.
    lines.push(write_csv(&start, &moves[..5], RecordResult::Unfinished));
    let line = write_csv(&start, &moves[..6], RecordResult::Won(Side::Attackers));
    let (tokens, rest) = line.split_once(',').unwrap();
    lines.push(format!("{tokens} resigned,{rest}"));
    scored.push((6, Some(Side::Attackers)));
    let csv = d.join("games.csv");
    std::fs::write(&csv, lines.join("\n") + "\n").unwrap();
    let (m, c) = (model.to_str().unwrap(), csv.to_str().unwrap());
    let out_file = d.join("cal.json");
    let o = json(&[
        "calibrate",
        "--model",
        m,
        "--games",
        c,
        "--variant",
        "brandubh",
        "--json",
        "--device",
        "cpu",
        "--quiet",
        "--search-sims",
        "4",
        "--search-positions",
        "3",
        "--out",
        out_file.to_str().unwrap(),
    ]);
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&out_file).unwrap()).unwrap();
    assert_eq!(written, o, "--out holds the printed object");
    let me = &o["measurement"];
    let counts = &me["counts"];
    let positions: usize = scored.iter().map(|g| g.0).sum();
    assert_eq!((counts["games"].as_u64(), counts["scored"].as_u64(), counts["unfinished"].as_u64()), (Some(12), Some(11), Some(1)));
    assert_eq!(counts["positions"].as_u64(), Some(positions as u64));
    assert_eq!(counts["sampled"].as_u64(), Some(positions as u64), "fewer than --max-positions: all evaluated");
    let (att, def): (usize, usize) = scored.iter().fold((0, 0), |(a, b), g| (a + sides(g.0).0, b + sides(g.0).1));
    let net = &me["network"];
    assert_eq!(net["attackers"]["all"]["summary"]["count"].as_u64(), Some(att as u64));
    assert_eq!(net["defenders"]["all"]["summary"]["count"].as_u64(), Some(def as u64));
    let phases: u64 = ["opening", "middle", "end"].iter().map(|p| net["attackers"][p]["summary"]["count"].as_u64().unwrap()).sum();
    assert_eq!(phases, att as u64, "the thirds add up");
    let bucketed: u64 = net["attackers"]["all"]["reliability"].as_array().unwrap().iter().map(|b| b["count"].as_u64().unwrap()).sum();
    assert_eq!(bucketed, att as u64);
    let realized = net["attackers"]["all"]["summary"]["mean_realized"].as_f64().unwrap();
    assert!((realized - attackers_realized(&scored)).abs() < 1e-9, "{realized} vs {}", attackers_realized(&scored));
    let predicted = net["attackers"]["all"]["summary"]["mean_predicted"].as_f64().unwrap();
    assert!((0.0..=1.0).contains(&predicted));
    assert!(me.get("stored_search").is_none(), "records hold no search values");
    let search = &me["search"];
    assert_eq!((search["sims"].as_u64(), search["attackers"]["positions"].as_u64(), search["defenders"]["positions"].as_u64()), (Some(4), Some(3), Some(3)));
    let ends = &me["endings"];
    let wins = |k: &str| ends[k]["games"].as_u64().unwrap() as usize;
    let count = |w: Option<Side>| scored.iter().filter(|g| g.1 == w).count();
    assert_eq!((wins("attackers_win"), wins("defenders_win"), wins("draws")), (count(Some(Side::Attackers)), count(Some(Side::Defenders)), count(None)));
    assert_eq!(ends["attackers_win"]["how"]["recorded resigned"].as_u64(), Some(1));
    let how: std::collections::BTreeMap<String, u64> = serde_json::from_value(ends["defenders_win"]["how"].clone()).unwrap();
    assert_eq!(how, defender_reasons);
    let forks: u64 = ends["defenders_win"]["king_escapes"].as_array().unwrap().iter().map(|n| n.as_u64().unwrap()).sum();
    assert_eq!(forks as usize, count(Some(Side::Defenders)), "every defenders' win is classified");
    let k = &ends["defenders_win"]["king_escapes"];
    assert!(ends["defenders_win"]["blockable"].as_u64().unwrap() <= k[1].as_u64().unwrap() + k[2].as_u64().unwrap());
    // The text form prints each side's phases and the endings.
    let text = ok(&run(&["calibrate", "--model", m, "--games", c, "--device", "cpu", "--quiet"]));
    assert!(text.contains("12 games: 11 with a result, 1 without (left out)"), "{text}");
    for needle in ["attackers     all", "defenders     all", "Where games end", "ended by:"] {
        assert!(text.contains(needle), "`{needle}` in:\n{text}");
    }
    // A sample: exactly --max-positions evaluated, the same with the same seed.
    let a = json(&["calibrate", "--model", m, "--games", c, "--json", "--device", "cpu", "--quiet", "--max-positions", "40"]);
    assert_eq!(a["measurement"]["counts"]["sampled"].as_u64(), Some(40));
    let n = |v: &Value, s: &str| v["measurement"]["network"][s]["all"]["summary"]["count"].as_u64().unwrap();
    assert_eq!(n(&a, "attackers") + n(&a, "defenders"), 40);
    let b = json(&["calibrate", "--model", m, "--games", c, "--json", "--device", "cpu", "--quiet", "--max-positions", "40"]);
    assert_eq!(a, b);
    // Errors: one line naming the file or the flag.
    fails_with(&run(&["calibrate", "--model", m, "--games", d.join("none.csv").to_str().unwrap()]), "none.csv");
    fails_with(&run(&["calibrate", "--model", m, "--games", c, "--variant", "copenhagen"]), "copenhagen");
    fails_with(&run(&["calibrate", "--model", d.join("nomodel").to_str().unwrap(), "--games", c]), "nomodel");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn run_shards_measure_the_stored_search_values_and_match_records_read() {
    let d = scratch("calibrate-run");
    std::fs::create_dir_all(d.join("run/games")).unwrap();
    let model = tiny_model(&d);
    let v = brandubh();
    // Every full search stored the value 0.5 (score 0.75); every third ply was a fast search.
    let mut stored = Vec::new();
    let mut full = [0u64; 2];
    for seed in 0..6u64 {
        let (moves, outcome) = random_game(&v, seed + 20);
        let plies = moves
            .iter()
            .enumerate()
            .map(|(i, &mv)| {
                let is_full = i % 3 != 2;
                if is_full {
                    full[i % 2] += 1;
                }
                StoredPly { mv: shard::pack(mv), full: is_full, value: if is_full { 0.5 } else { -1.0 }, policy: vec![] }
            })
            .collect();
        stored.push(StoredGame { plies, outcome, slot: Some(seed) });
    }
    let shard = Shard { rules_fingerprint: v.rules_fingerprint(), model_generation: 1, writer: "trainer".into(), games: stored };
    shard::write(&d.join("run/games").join(shard::file_name(1, "trainer", 0)), &shard).unwrap();
    let (m, r) = (model.to_str().unwrap(), d.join("run"));
    let o = json(&["calibrate", "--model", m, "--run-dir", r.to_str().unwrap(), "--json", "--device", "cpu", "--quiet"]);
    let s = &o["measurement"]["stored_search"];
    for (side, n) in [("attackers", full[0]), ("defenders", full[1])] {
        let sum = &s[side]["all"]["summary"];
        assert_eq!(sum["count"].as_u64(), Some(n), "{side}: one observation per full search");
        assert_eq!(sum["mean_predicted"].as_f64(), Some(0.75), "{side}");
        assert_eq!(s[side]["all"]["reliability"][7]["count"].as_u64(), Some(n), "{side}: all in 0.7-0.8");
    }
    let games: Vec<(usize, Option<Side>)> = shard.games.iter().map(|g| (g.plies.len(), g.outcome.winner)).collect();
    let net = &o["measurement"]["network"]["attackers"]["all"]["summary"];
    assert!((net["mean_realized"].as_f64().unwrap() - attackers_realized(&games)).abs() < 1e-9);
    assert_eq!(o["source"]["kind"], "self-play shards");
    fails_with(&run(&["calibrate", "--model", m, "--run-dir", r.to_str().unwrap(), "--since-generation", "2"]), "generation 2");

    // A match record: every game the rules ended counts, with its own plies.
    let rec = d.join("match.txt");
    ok(&run(&[
        "match",
        "--variant",
        "brandubh",
        "--a",
        "random",
        "--b",
        "random",
        "--games",
        "3",
        "--seed",
        "4",
        "--record",
        rec.to_str().unwrap(),
        "--quiet",
    ]));
    let plies: usize = std::fs::read_to_string(&rec).unwrap().lines().filter(|l| !l.starts_with('#')).map(|l| l.split_whitespace().count()).sum();
    let o = json(&["calibrate", "--model", m, "--record", rec.to_str().unwrap(), "--json", "--device", "cpu", "--quiet"]);
    let c = &o["measurement"]["counts"];
    assert_eq!((c["scored"].as_u64(), c["positions"].as_u64()), (Some(3), Some(plies as u64)));
    // A file of another kind is refused with its name.
    let csv = d.join("g.csv");
    std::fs::write(&csv, "d1-d3,0,0,Ongoing\n").unwrap();
    fails_with(&run(&["calibrate", "--model", m, "--record", csv.to_str().unwrap()]), "g.csv");
    std::fs::remove_dir_all(&d).unwrap();
}
