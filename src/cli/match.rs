//! `tafl-lab match`: agent A against agent B with alternating sides and paired random openings,
//! games in parallel; A's score with an Elo interval, optionally stopped early by an SPRT.
//! `--shard I/N` plays one shard of the games and prints its JSON with every game's result;
//! `--merge` sums the shards' JSON up into the output of one whole match.

use anyhow::{anyhow, bail, Result};
use serde::Deserialize;
use serde_json::{json, Value};
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;
use tafl_lab::arena::shard::{self, Part, ShardError};
use tafl_lab::arena::{self, AgentRecord, AgentSpec, GameRecord, GameResult, MatchConfig, MatchSummary, Shard};
use tafl_lab::rules::{Side, Variant};
use tafl_lab::stats::{elo_interval, Sprt, SprtDecision};

/// Play agent A against agent B, alternating sides, in parallel; print A's score and its
/// win/draw/loss as each side.
#[derive(clap::Args)]
pub struct MatchArgs {
    #[command(flatten)]
    pub common: super::ArenaArgs,
    /// Agent A: random, mcts:sims=N, az:model=PATH,sims=N, gumbel:model=PATH,sims=N[,k=16], or an external engine: htp:cmd=PATH[,args="..."][,time=S][,tcp=1], otep:cmd=PATH[,args="..."][,time=S].
    #[arg(long, required_unless_present = "merge")]
    pub a: Option<String>,
    /// Agent B (same forms as --a).
    #[arg(long, required_unless_present = "merge")]
    pub b: Option<String>,
    /// Number of games (A attacks in even-numbered games).
    #[arg(long, default_value_t = 20)]
    pub games: usize,
    /// Play only the games in which A has this side: `attackers` plays the even-numbered of
    /// the `--games` (each with its pair's opening), `defenders` the odd-numbered. For an
    /// opponent whose games take long when only one side is in question. Not with --shard.
    #[arg(long, value_name = "SIDE", conflicts_with = "shard")]
    pub a_side: Option<Side>,
    /// Print one JSON object (games, a_score, a_as_attackers, a_as_defenders, ...).
    #[arg(long)]
    pub json: bool,
    /// Stop early once a sequential probability ratio test decides between
    /// "A is ELO0 stronger" and "A is ELO1 stronger" (alpha = beta = 0.05), e.g. 0,30.
    #[arg(long)]
    pub sprt: Option<String>,
    /// Write every game's moves to this file (a comment line, then the moves), rewritten as each game finishes, so a match stopped early keeps the games it finished.
    #[arg(long)]
    pub record: Option<PathBuf>,
    /// Keep a transcript of every game an external engine (htp:, otep:) plays in this folder:
    /// one file per game, every line both ways with its time, for finding out who was at
    /// fault when a game ends in a disagreement, a forfeit or a hang.
    #[arg(long, value_name = "DIR")]
    pub engine_log: Option<PathBuf>,
    /// Play only shard I of N (counted from 0, as job-array task ids) of the games: the pairs
    /// of games p with p mod N = I. Prints JSON (as --json) with the shard and every game's
    /// result, for `--merge`. Not with --sprt.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<Shard>,
    /// Merge the JSON outputs of every shard of one match: print what the whole match prints
    /// (with --json, its JSON; `seconds` is the shards' total). No games are played.
    #[arg(long, value_name = "FILE", num_args = 1.., conflicts_with_all = ["a", "b", "games", "a_side", "sprt", "record", "engine_log", "shard", "variant", "seed", "opening_plies"])]
    pub merge: Option<Vec<PathBuf>>,
}

/// The `shard` object of a shard's JSON: which shard, what the whole match is, and the
/// shard's games.
#[derive(serde::Serialize, Deserialize)]
struct ShardPart {
    #[serde(flatten)]
    shard: Shard,
    /// Games in the whole match.
    games: usize,
    opening_plies: u32,
    variant_toml: String,
    results: Vec<GameRecord>,
}

/// A finished match (or shard of one), ready to print.
struct Played {
    variant: String,
    a: String,
    b: String,
    a_record: AgentRecord,
    b_record: AgentRecord,
    games: Vec<GameResult>,
    sprt: Option<Sprt>,
    seed: u64,
    seconds: f64,
}

/// Writes `games` as a record: a `# variant:` line (the variant as given: a preset name, TOML
/// path or rules string, so that `view` and `replay` can read the record without being told),
/// then per game a comment line with A's side and the end, and the moves.
fn write_record(path: &std::path::Path, variant: &str, a: &AgentSpec, games: &[arena::GameResult]) -> Result<()> {
    let mut text = format!("# variant: {variant}\n");
    for g in games {
        let moves: Vec<String> = g.moves.iter().map(|mv| mv.to_string()).collect();
        let end = match (&g.outcome, &g.fault) {
            (Some(o), _) => o.to_string(),
            (None, Some(f)) => f.describe(),
            (None, None) => "unfinished".into(),
        };
        text.push_str(&format!("# game {}: A ({a}) plays {}; {end}\n{}\n", g.index + 1, g.a_side.name(), moves.join(" ")));
    }
    tafl_lab::fsio::atomic_write(path, text.as_bytes()).map_err(|e| anyhow!("--record {}: {e}", path.display()))
}

pub fn run(m: &MatchArgs, out: &mut impl Write) -> Result<()> {
    if let Some(files) = &m.merge {
        let played = merge(files)?;
        return print(&played, m.json, None, out);
    }
    let common = &m.common;
    let variant = Arc::new(Variant::from_spec(&common.variant)?);
    let text = |spec: &Option<String>| spec.clone().unwrap_or_default(); // clap requires both without --merge
    let mut a = super::parse_agent("--a", &text(&m.a), &common.device)?;
    let mut b = super::parse_agent("--b", &text(&m.b), &common.device)?;
    if let Some(dir) = &m.engine_log {
        std::fs::create_dir_all(dir).map_err(|e| anyhow!("--engine-log {}: {e}", dir.display()))?;
        for ext in [&mut a, &mut b].into_iter().filter_map(|s| s.external.as_mut()) {
            ext.log = Some(dir.clone());
        }
    }
    if m.games == 0 {
        bail!("--games: must be at least 1");
    }
    if m.shard.is_some() && m.sprt.is_some() {
        bail!("--shard: an SPRT decides on every game played so far, so a match with --sprt cannot be divided into shards");
    }
    super::check_shard(m.shard, m.games, "--games")?;
    // What the result measured: each agent's spec and the sha256 of the model file it loads,
    // hashed once here and checked again after the games.
    let a_record = AgentRecord::of(&a).map_err(|e| anyhow!("--a: {e}"))?;
    let b_record = AgentRecord::of(&b).map_err(|e| anyhow!("--b: {e}"))?;
    // Games run in parallel across cores; each network evaluator then uses one torch thread.
    tafl_lab::nn::set_torch_threads(1);
    let cfg = MatchConfig { games: m.games, seed: common.seed, opening_plies: common.opening_plies, shard: m.shard, a_side: m.a_side };
    let count = cfg.indices().len();
    if count == 0 {
        bail!("--a-side defenders: --games {} has no game in which A defends (A defends in the odd-numbered games)", m.games);
    }
    let bar = super::progress_bar(count as u64, format!("{a} vs {b}"), common.quiet);
    let points = std::sync::Mutex::new((0.0f64, 0usize));
    // With --record, the games finished so far are rewritten to the record after each game:
    // a match stopped early keeps every game it finished.
    let finished = std::sync::Mutex::new((Vec::<arena::GameResult>::new(), None::<anyhow::Error>));
    let t = Instant::now();
    let sprt = match &m.sprt {
        None => None,
        Some(text) => {
            let (e0, e1) = text
                .split_once(',')
                .and_then(|(x, y)| Some((x.trim().parse::<f64>().ok()?, y.trim().parse::<f64>().ok()?)))
                .filter(|(x, y)| x < y)
                .ok_or_else(|| anyhow!("--sprt {text:?}: expected ELO0,ELO1 with ELO0 < ELO1, e.g. 0,30"))?;
            Some(Sprt::new(e0, e1))
        }
    };
    let decided = |games: &[arena::GameResult]| {
        sprt.is_some_and(|s| {
            let w = MatchSummary::from_games(games).a_total();
            s.decide(w.win as u64, w.draw as u64, w.loss as u64) != SprtDecision::Continue
        })
    };
    let games = arena::play_match_until(
        &variant,
        &a,
        &b,
        &cfg,
        &|g| {
            let mut p = points.lock().expect("not poisoned");
            if let Some(x) = g.a_points() {
                p.0 += x;
                p.1 += 1;
            }
            if let Some(f) = &g.fault {
                bar.suspend(|| eprintln!("game {}: {}", g.index + 1, f.describe()));
            }
            bar.set_message(format!("A scores {:.1}%", 100.0 * p.0 / p.1.max(1) as f64));
            bar.inc(1);
            if let Some(path) = &m.record {
                let mut f = finished.lock().expect("not poisoned");
                f.0.push(g.clone());
                f.0.sort_by_key(|g| g.index);
                if let Err(e) = write_record(path, &common.variant, &a, &f.0) {
                    f.1.get_or_insert(e);
                }
            }
        },
        &decided,
    )?;
    bar.finish_and_clear();
    if let Some(e) = finished.into_inner().expect("not poisoned").1 {
        return Err(e);
    }
    a_record.check_unchanged(&a).map_err(|e| anyhow!("--a {a}: {e}"))?;
    b_record.check_unchanged(&b).map_err(|e| anyhow!("--b {b}: {e}"))?;
    if let Some(path) = &m.record {
        write_record(path, &common.variant, &a, &games)?;
    }
    let shard = m.shard.map(|shard| ShardPart {
        shard,
        games: m.games,
        opening_plies: common.opening_plies,
        variant_toml: variant.to_toml(),
        results: games.iter().map(GameRecord::of).collect(),
    });
    let played = Played {
        variant: variant.name.clone(),
        a: a.to_string(),
        b: b.to_string(),
        a_record,
        b_record,
        games,
        sprt,
        seed: common.seed,
        seconds: t.elapsed().as_secs_f64(),
    };
    print(&played, m.json || shard.is_some(), shard.as_ref(), out)
}

/// The shards' JSON outputs in `files` summed up into the whole match.
fn merge(files: &[PathBuf]) -> Result<Played> {
    let mut parts = Vec::new();
    for f in files {
        let source = f.display().to_string();
        let text = std::fs::read_to_string(f).map_err(|e| anyhow!("--merge {source}: {e}"))?;
        let mut v: Value = serde_json::from_str(text.trim()).map_err(|e| ShardError::NotShard { file: source.clone(), why: format!("not JSON: {e}") })?;
        let part =
            v.as_object_mut().and_then(|o| o.remove("shard")).ok_or_else(|| ShardError::NotShard { file: source.clone(), why: "no shard field".into() })?;
        let part: ShardPart = serde_json::from_value(part).map_err(|e| ShardError::NotShard { file: source.clone(), why: e.to_string() })?;
        let settings = json!({
            "variant": v["variant"], "variant_toml": part.variant_toml, "a": v["a"], "b": v["b"], "provenance": v["provenance"],
            "seed": v["seed"], "games": part.games, "opening_plies": part.opening_plies,
        });
        parts.push((source, part, settings, v));
    }
    let order = shard::check_parts(&parts.iter().map(|(source, p, settings, _)| Part { source, shard: p.shard, settings }).collect::<Vec<_>>())?;
    let (source, first, _, v) = &parts[order[0]];
    let bad = |file: &str, message: String| ShardError::Read { file: file.to_string(), message };
    let variant = Variant::from_toml_str(&first.variant_toml, "variant_toml").map_err(|e| bad(source, e.to_string()))?;
    let mut games = Vec::new();
    for &k in &order {
        let (source, p, _, _) = &parts[k];
        let results = p.results.iter().map(|g| g.to_result(variant.geometry)).collect::<Result<Vec<_>, _>>().map_err(|e| bad(source, e))?;
        games.push((source.as_str(), p.shard, results));
    }
    let games = shard::merge_games(first.games, "the match", games)?;
    let text = |key: &str| v[key].as_str().map(str::to_string).ok_or_else(|| bad(source, format!("no {key}")));
    let record = |who: &str| AgentRecord::deserialize(&v["provenance"][who]).map_err(|e| bad(source, format!("provenance.{who}: {e}")));
    Ok(Played {
        variant: text("variant")?,
        a: text("a")?,
        b: text("b")?,
        a_record: record("a")?,
        b_record: record("b")?,
        games,
        sprt: None,
        seed: v["seed"].as_u64().ok_or_else(|| bad(source, "no seed".into()))?,
        seconds: parts.iter().map(|(_, _, _, v)| v["seconds"].as_f64().unwrap_or(0.0)).sum(),
    })
}

/// Prints a match: one JSON object (with a shard's `shard` object when given) or lines of text.
fn print(p: &Played, as_json: bool, shard: Option<&ShardPart>, out: &mut impl Write) -> Result<()> {
    let (games, sprt, secs) = (&p.games, p.sprt, p.seconds);
    let (a, b, a_record, b_record) = (&p.a, &p.b, &p.a_record, &p.b_record);
    let s = MatchSummary::from_games(games);
    let total = s.a_total();
    let elo = elo_interval(total.win as u64, total.draw as u64, total.loss as u64);
    let distinct = arena::distinct(games).len();
    let sprt_result = sprt.map(|sp| {
        let llr = sp.llr(total.win as u64, total.draw as u64, total.loss as u64);
        let (lo, hi) = sp.bounds();
        (sp, llr, lo, hi, sp.decide(total.win as u64, total.draw as u64, total.loss as u64))
    });
    if as_json {
        let mut obj = json!({
            "variant": p.variant,
            "a": a,
            "b": b,
            "provenance": {"a": a_record, "b": b_record},
            "games": s.games,
            "distinct_games": distinct,
            "a_score": s.a_score,
            "a_as_attackers": s.a_as_attackers,
            "a_as_defenders": s.a_as_defenders,
            "a_total": s.a_total(),
            "mean_plies": s.mean_plies,
            "forfeits": s.forfeits,
            "disagreements": s.disagreements,
            "voids": s.voids,
            "faults_by_agent": {"a": s.a_faults, "b": s.b_faults},
            "faults": games.iter().filter_map(|g| g.fault.as_ref().map(|f| json!({"game": g.index + 1, "a_side": g.a_side.name(), "agent": if f.side() == g.a_side { "a" } else { "b" }, "fault": f, "moves": g.moves.iter().map(|m| m.to_string()).collect::<Vec<_>>()}))).collect::<Vec<_>>(),
            "elo": elo,
            "sprt": sprt_result.map(|(sp, llr, lo, hi, d)| json!({"elo0": sp.elo0, "elo1": sp.elo1, "llr": llr, "lower": lo, "upper": hi, "decision": d})),
            "seed": p.seed,
            "seconds": secs,
        });
        if let Some(part) = shard {
            obj["shard"] = json!(part);
        }
        writeln!(out, "{obj}")?;
    } else {
        writeln!(
            out,
            "{}: A = {a}, B = {b}: {} games ({distinct} distinct), A scores {:.1}% ({}); A as attackers {}, as defenders {}; mean {:.0} plies, {secs:.1} s",
            p.variant,
            s.games,
            100.0 * s.a_score,
            s.a_total(),
            s.a_as_attackers,
            s.a_as_defenders,
            s.mean_plies,
        )?;
        for (who, r) in [("A", a_record), ("B", b_record)] {
            for f in &r.models {
                writeln!(out, "{who}'s model: {} (sha256 {})", f.path, f.sha256)?;
            }
        }
        if s.forfeits + s.disagreements + s.voids > 0 {
            writeln!(
                out,
                "{} forfeits (scored as losses), {} rules disagreements and {} void games (not scored; see --json or --record)",
                s.forfeits, s.disagreements, s.voids
            )?;
            for (who, faults) in [("A", &s.a_faults), ("B", &s.b_faults)] {
                if !faults.is_empty() {
                    let kinds: Vec<String> = faults.iter().map(|(k, n)| format!("{n} {k}")).collect();
                    writeln!(out, "{who}'s faults: {}", kinds.join(", "))?;
                }
            }
        }
        writeln!(
            out,
            "Elo difference (A - B): {:+.0} (95% interval {} to {})",
            elo.elo,
            tafl_lab::stats::EloEstimate::bound_text(elo.low),
            tafl_lab::stats::EloEstimate::bound_text(elo.high)
        )?;
        if let Some((sp, llr, lo, hi, d)) = sprt_result {
            let verdict = match d {
                SprtDecision::AcceptH1 => format!("H1 accepted: A is at least {} Elo stronger", sp.elo1),
                SprtDecision::AcceptH0 => format!("H0 accepted: A is not {} Elo stronger (at most {})", sp.elo1, sp.elo0),
                SprtDecision::Continue => "no decision yet (play more games)".into(),
            };
            writeln!(out, "SPRT [{}, {}]: LLR {llr:.2} (bounds {lo:.2}, {hi:.2}) after {} games: {verdict}", sp.elo0, sp.elo1, s.games)?;
        }
    }
    Ok(())
}
