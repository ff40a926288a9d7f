//! Divisible jobs (`--shard I/N`, `--merge`): a match, a balance run and a tournament played
//! whole and played in shards then merged give the same JSON (time fields aside), and shards
//! that do not make one whole job are refused with one line naming the file.

use crate::common;

use common::cli::{fails_with, ok, run, scratch, untimed_match};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))).unwrap()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A match's JSON without its time.
fn untimed(text: &str) -> Value {
    let mut v: Value = serde_json::from_str(text.trim()).unwrap();
    untimed_match(&mut v);
    v
}

/// `base` with `extra` after it, where a flag of `extra` that `base` has already takes the
/// place of `base`'s value (clap refuses a flag given twice).
fn args<'a>(base: &[&'a str], extra: &[&'a str]) -> Vec<&'a str> {
    let mut v = base.to_vec();
    let mut k = 0;
    while k < extra.len() {
        match v.iter().position(|a| *a == extra[k]) {
            Some(at) if extra[k].starts_with("--") && k + 1 < extra.len() => {
                v[at + 1] = extra[k + 1];
                k += 2;
            }
            _ => {
                v.push(extra[k]);
                k += 1;
            }
        }
    }
    v
}

fn play_match(extra: &[&str]) -> String {
    let base =
        ["match", "--variant", "brandubh", "--a", "mcts:sims=8", "--b", "random", "--games", "10", "--seed", "4", "--opening-plies", "2", "--json", "--quiet"];
    ok(&run(&args(&base, extra)))
}

#[test]
fn a_match_in_shards_merges_into_the_whole_match() {
    let d = scratch("shard-match");
    std::fs::create_dir_all(&d).unwrap();
    let whole = untimed(&play_match(&[]));
    assert!(whole.get("shard").is_none(), "a whole match has no shard: {whole}");
    // 10 games are 5 pairs: shard 0 of 3 plays pairs 0 and 3, shard 1 pairs 1 and 4, shard 2 pair 2.
    let mut files = Vec::new();
    for (i, games) in [(0, [0, 1, 6, 7].as_slice()), (1, &[2, 3, 8, 9]), (2, &[4, 5])] {
        let text = play_match(&["--shard", &format!("{i}/3")]);
        let v: Value = serde_json::from_str(text.trim()).unwrap();
        let file = &v["shard"];
        assert_eq!(file["kind"], "match", "every kind of job writes one shard file, named by its kind");
        assert_eq!((file["shard"]["index"].as_u64(), file["shard"]["count"].as_u64(), file["settings"]["games"].as_u64()), (Some(i), Some(3), Some(10)));
        let indices: Vec<u64> = file["games"][0].as_array().unwrap().iter().map(|g| g["index"].as_u64().unwrap()).collect();
        assert_eq!(indices, games, "shard {i}/3 plays whole pairs");
        assert_eq!(v["games"].as_u64(), Some(games.len() as u64), "a shard's figures are its own games'");
        let f = d.join(format!("shard-{i}.json"));
        std::fs::write(&f, text).unwrap();
        files.push(f);
    }
    let (f0, f1, f2) = (s(&files[0]), s(&files[1]), s(&files[2]));
    // Merged in any order: exactly the whole match.
    let merged = ok(&run(&["match", "--merge", f2, f0, f1, "--json"]));
    assert_eq!(untimed(&merged), whole);
    // Without --json, the whole match's lines.
    let text = ok(&run(&["match", "--merge", f0, f1, f2]));
    assert!(text.starts_with("brandubh: A = mcts:sims=8, B = random: 10 games (10 distinct), A scores"), "{text}");
    assert!(text.contains("Elo difference (A - B)"), "{text}");

    // Shards that are not one whole match.
    fails_with(&run(&["match", "--merge", f0, f2]), "shard 1/3 is missing");
    fails_with(&run(&["match", "--merge", f0, f1, f2, f1]), &format!("{f1}: shard 1/3 again (also in {f1})"));
    let other_seed = d.join("other-seed.json");
    std::fs::write(&other_seed, play_match(&["--shard", "1/3", "--seed", "5"])).unwrap();
    fails_with(&run(&["match", "--merge", f0, s(&other_seed), f2]), &format!("{}: not the same job as {f0} (its seed differs)", other_seed.display()));
    let two = d.join("two.json");
    std::fs::write(&two, play_match(&["--shard", "1/2"])).unwrap();
    fails_with(&run(&["match", "--merge", f0, s(&two), f2]), "its shard count differs");
    let whole_file = d.join("whole.json");
    std::fs::write(&whole_file, play_match(&[])).unwrap();
    fails_with(&run(&["match", "--merge", s(&whole_file)]), "not a shard's output (no shard field)");
    // A shard's file with a game missing.
    let mut cut: Value = read_json(&files[1]);
    cut["shard"]["games"][0].as_array_mut().unwrap().pop();
    let cut_file = d.join("cut.json");
    std::fs::write(&cut_file, cut.to_string()).unwrap();
    fails_with(&run(&["match", "--merge", f0, s(&cut_file), f2]), "does not hold exactly shard 1/3's games (3 of its 4 games)");
    fails_with(&run(&["match", "--merge", s(&d.join("nosuch.json"))]), "nosuch.json");
    // A shard printed before think times were kept still merges: the same games, no times
    // (a sum of the other shards' would pass for the whole match's).
    let mut old: Value = read_json(&files[1]);
    old.as_object_mut().unwrap().remove("think");
    let old_file = d.join("old.json");
    std::fs::write(&old_file, old.to_string()).unwrap();
    let merged_old: Value = serde_json::from_str(ok(&run(&["match", "--merge", f0, s(&old_file), f2, "--json"])).trim()).unwrap();
    assert_eq!(merged_old["think"], Value::Null, "{merged_old}");
    assert_eq!(merged_old["a_as_attackers"], whole["a_as_attackers"]);
    // A file that is JSON but no object: one line, no panic.
    let list = d.join("list.json");
    std::fs::write(&list, "[]").unwrap();
    fails_with(&run(&["match", "--merge", s(&list)]), &format!("{}: not a shard's output (not a JSON object)", list.display()));

    // Bad --shard flags.
    fails_with(&run(&["match", "--a", "random", "--b", "random", "--shard", "3/3"]), "--shard");
    fails_with(&run(&["match", "--a", "random", "--b", "random", "--shard", "1-3"]), "--shard");
    fails_with(
        &run(&["match", "--a", "random", "--b", "random", "--games", "4", "--shard", "0/3"]),
        "--shard 0/3: --games 4 make 2 pairs of games, fewer than 3 shards",
    );
    fails_with(&run(&["match", "--a", "random", "--b", "random", "--shard", "0/2", "--sprt", "0,30"]), "--shard: an SPRT");
    let _ = std::fs::remove_dir_all(&d);
}

fn balance(out: &Path, extra: &[&str]) -> std::process::Output {
    let base = [
        "balance",
        "--variants",
        "brandubh",
        "--agent",
        "mcts:sims=8",
        "--sims",
        "4,8",
        "--games",
        "6",
        "--seed",
        "5",
        "--opening-plies",
        "2",
        "--out",
        s(out),
        "--quiet",
    ];
    run(&args(&base, extra))
}

#[test]
fn a_balance_run_in_shards_merges_into_the_whole_run() {
    let d = scratch("shard-balance");
    let whole = d.join("whole");
    ok(&balance(&whole, &[]));
    let shards: Vec<PathBuf> = (0..2).map(|i| d.join(format!("shard-{i}"))).collect();
    for (i, dir) in shards.iter().enumerate() {
        let text = ok(&balance(dir, &["--shard", &format!("{i}/2")]));
        assert!(text.contains(&format!("shard {i}/2: brandubh @ 4 sims:")), "{text}");
        // A shard writes its games only, not a report that looks whole.
        let names: Vec<String> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        assert_eq!(names, ["shard.json"]);
    }
    let merged = d.join("merged");
    let text = ok(&run(&["balance", "--merge", s(&shards[1]), s(&shards[0]), "--out", s(&merged)]));
    assert!(text.contains("merged 2 shards") && text.contains("brandubh @ 8 sims: 6 distinct games"), "{text}");
    // The same rows, table and sample of games as the whole run's (balance.json has no time).
    assert_eq!(read_json(&merged.join("balance.json")), read_json(&whole.join("balance.json")));
    for f in ["balance.csv", "games.jsonl", "rates.svg", "lengths.svg", "strength.svg"] {
        assert_eq!(read(&merged.join(f)), read(&whole.join(f)), "{f}");
    }
    // The report differs only in the command line it quotes.
    let body = |p: &Path| read(&p.join("report.md")).lines().filter(|l| !l.starts_with("Command:")).collect::<Vec<_>>().join("\n");
    assert_eq!(body(&merged), body(&whole));

    // Shards that are not one whole run.
    let (s0, s1) = (s(&shards[0]), s(&shards[1]));
    let file = |dir: &str| format!("{dir}/shard.json");
    fails_with(&run(&["balance", "--merge", s0, "--out", s(&merged)]), "shard 1/2 is missing (merging 1 of 2 shards)");
    fails_with(&run(&["balance", "--merge", s0, s0, s1, "--out", s(&merged)]), &format!("{}: shard 0/2 again (also in {})", file(s0), file(s0)));
    let other = d.join("other");
    ok(&balance(&other, &["--shard", "1/2", "--games", "8"]));
    fails_with(
        &run(&["balance", "--merge", s0, s(&other), "--out", s(&merged)]),
        &format!("{}: not the same job as {} (its games differs)", file(s(&other)), file(s0)),
    );
    let strong = d.join("strong");
    ok(&balance(&strong, &["--shard", "1/2", "--set", "king_strength=strong"]));
    fails_with(&run(&["balance", "--merge", s0, s(&strong), "--out", s(&merged)]), "not the same job");
    fails_with(&run(&["balance", "--merge", s0, s(&whole), "--out", s(&merged)]), "holds no shard.json");
    // A match's shard is a shard of another kind of job.
    let match_json = d.join("match.json");
    std::fs::write(&match_json, play_match(&["--shard", "0/2"])).unwrap();
    let match_shard = d.join("match-shard.json");
    std::fs::write(&match_shard, read_json(&match_json)["shard"].to_string()).unwrap();
    fails_with(
        &run(&["balance", "--merge", s0, s(&match_shard), "--out", s(&merged)]),
        &format!("{}: not a shard's output (a shard of a match, not of a balance)", match_shard.display()),
    );
    fails_with(&run(&["balance", "--merge", s0, s(&whole.join("balance.json")), "--out", s(&merged)]), "not a shard's output");
    fails_with(&balance(&d.join("bad"), &["--shard", "2/2"]), "--shard");
    fails_with(&balance(&d.join("bad"), &["--shard", "0/4"]), "fewer than 4 shards");
    assert!(!d.join("bad").exists());
    let _ = std::fs::remove_dir_all(&d);
}

fn tournament(out: &Path, extra: &[&str]) -> std::process::Output {
    let base =
        ["tournament", "--variant", "brandubh", "--agents", "random;mcts:sims=8;mcts:sims=16", "--games", "6", "--seed", "3", "--out", s(out), "--quiet"];
    run(&args(&base, extra))
}

/// Every file of a tournament folder, by name, with its text.
fn folder(d: &Path) -> Vec<(String, String)> {
    let mut files = Vec::new();
    for sub in ["", "pairings"] {
        for e in std::fs::read_dir(d.join(sub)).unwrap() {
            let p = e.unwrap().path();
            if p.is_file() {
                files.push((format!("{sub}/{}", p.file_name().unwrap().to_string_lossy()), read(&p)));
            }
        }
    }
    files.sort();
    files
}

#[test]
fn a_tournament_in_shards_merges_into_the_whole_tournament() {
    let d = scratch("shard-tournament");
    let whole = d.join("whole");
    ok(&tournament(&whole, &[]));
    // 6 games a pairing are 3 pairs: shard 0 of 2 plays pairs 0 and 2, shard 1 pair 1.
    let shards: Vec<PathBuf> = (0..2).map(|i| d.join(format!("shard-{i}"))).collect();
    for (i, dir) in shards.iter().enumerate() {
        let text = ok(&tournament(dir, &["--shard", &format!("{i}/2")]));
        let per = if i == 0 { 4 } else { 2 };
        assert!(text.contains(&format!("3 pairings of 6 games (shard {i}/2: {per} games each): 3 played")), "{text}");
        let j = read_json(&dir.join("tournament.json"));
        assert_eq!(j["shard"], serde_json::json!({"index": i, "count": 2}));
        assert_eq!(j["games"], 3 * per);
        assert!(read(&dir.join("tournament.md")).contains(&format!("**Shard {i}/2:**")));
        // A rerun of a shard resumes it.
        let again = ok(&tournament(dir, &["--shard", &format!("{i}/2")]));
        assert!(again.contains("0 played, 3 from an earlier run"), "{again}");
    }
    let merged = d.join("merged");
    let text = ok(&run(&["tournament", "--merge", s(&shards[0]), s(&shards[1]), "--out", s(&merged)]));
    assert!(text.contains("brandubh: 3 pairings of 6 games merged from 2 shards"), "{text}");
    // Every file is the whole run's: settings, pairings with every game, JSON and Markdown
    // (a tournament writes no time).
    assert_eq!(folder(&merged), folder(&whole));
    assert!(read_json(&merged.join("tournament.json")).get("shard").is_none());
    // The merged folder is a whole run's: rerunning the whole command finds every pairing.
    let again = ok(&tournament(&merged, &[]));
    assert!(again.contains("0 played, 3 from an earlier run"), "{again}");

    // Shards that are not one whole tournament.
    let (s0, s1, out) = (s(&shards[0]), s(&shards[1]), d.join("out"));
    fails_with(&run(&["tournament", "--merge", s1, "--out", s(&out)]), "shard 0/2 is missing (merging 1 of 2 shards)");
    fails_with(&run(&["tournament", "--merge", s0, s1, s0, "--out", s(&out)]), &format!("{s0}: shard 0/2 again (also in {s0})"));
    let other = d.join("other");
    ok(&tournament(&other, &["--shard", "1/2", "--seed", "4"]));
    fails_with(&run(&["tournament", "--merge", s0, s(&other), "--out", s(&out)]), &format!("{}: not the same job as {s0} (its seed differs)", other.display()));
    fails_with(&run(&["tournament", "--merge", s0, s(&whole), "--out", s(&out)]), "settings.json: not a shard's output");
    // An unfinished shard: a pairing not yet played.
    let unfinished = d.join("unfinished");
    ok(&tournament(&unfinished, &["--shard", "1/2"]));
    std::fs::remove_file(unfinished.join("pairings/2-3.json")).unwrap();
    fails_with(&run(&["tournament", "--merge", s0, s(&unfinished), "--out", s(&out)]), "pairings/2-3.json: missing: the shard has not finished");
    // Another shard into a shard's folder is refused, as other settings are.
    fails_with(&tournament(&shards[0], &["--shard", "1/2"]), "different shard");
    fails_with(&tournament(&d.join("bad"), &["--shard", "0/4"]), "fewer than 4 shards");
    fails_with(&tournament(&d.join("bad"), &["--shard", "x"]), "--shard");
    let _ = std::fs::remove_dir_all(&d);
}
