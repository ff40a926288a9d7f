//! `tafl-lab match`: agent A against agent B with alternating sides and paired random openings,
//! games in parallel; A's score with an Elo interval, optionally stopped early by an SPRT.
//! `--shard I/N` plays one shard of the games and prints its JSON with the shard's file
//! ([`tafl_lab::arena::shard::ShardFile`]) as its `shard` field; `--merge` sums the shards up
//! into the output of one whole match. The match itself is [`tafl_lab::lab::matches`]; this
//! file parses the arguments, draws the progress bar and prints.

use anyhow::{anyhow, bail, Result};
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use tafl_lab::arena::shard::ShardFile;
use tafl_lab::arena::{self, AgentSpec, MatchConfig, MatchSummary, Shard};
use tafl_lab::lab::matches::{self, MatchJob, MatchSettings, Played};
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
    /// Print one JSON object (games, a_score, a_as_attackers, a_as_defenders, ..., and `think`: each agent's moves, seconds and seconds a move, which shows whether a match at equal time was one).
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

pub fn run(m: &MatchArgs, out: &mut impl Write) -> Result<()> {
    if let Some(files) = &m.merge {
        let mut parts = Vec::new();
        for f in files {
            let source = f.display().to_string();
            let text = std::fs::read_to_string(f).map_err(|e| anyhow!("--merge {source}: {e}"))?;
            let (file, seconds, think) = matches::read_shard(&source, &text)?;
            parts.push((source, file, seconds, think));
        }
        return print(&matches::merge(parts)?, m.json, None, out);
    }
    let common = &m.common;
    let variant = Arc::new(Variant::from_spec(&common.variant)?);
    let text = |spec: &Option<String>| spec.clone().unwrap_or_default(); // clap requires both without --merge
    let a = super::parse_agent("--a", &text(&m.a), &common.device)?;
    let b = super::parse_agent("--b", &text(&m.b), &common.device)?;
    // Against OpenTafl, an agent that does not say otherwise searches by the repetition rule
    // OpenTafl scores by (Copenhagen's repetition win is a draw there); its label says so.
    let (mut a, mut b) = AgentSpec::pairing(&a, &b, &variant);
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
    let sprt = m.sprt.as_deref().map(|t| t.parse::<Sprt>().map_err(|e| anyhow!("--sprt {e}"))).transpose()?;
    // Games run in parallel across cores; each network evaluator then uses one torch thread.
    tafl_lab::nn::set_torch_threads(1);
    let config = MatchConfig { games: m.games, seed: common.seed, opening_plies: common.opening_plies, shard: m.shard, a_side: m.a_side };
    let count = config.indices().len();
    let bar = super::progress_bar(count as u64, format!("{a} vs {b}"), common.quiet);
    let job = MatchJob { variant_spec: common.variant.clone(), variant, a, b, config, sprt, record: m.record.clone() };
    let points = std::sync::Mutex::new((0.0f64, 0usize));
    let played = matches::play(&job, &|g| {
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
    })?;
    bar.finish_and_clear();
    let shard = m.shard.map(|shard| played.shard_file(shard, &job));
    print(&played, m.json || shard.is_some(), shard.as_ref(), out)
}

/// Prints a match: one JSON object (with a shard's file as its `shard` field when given) or
/// lines of text.
fn print(p: &Played, as_json: bool, shard: Option<&ShardFile<MatchSettings>>, out: &mut impl Write) -> Result<()> {
    let (games, sprt, secs) = (&p.games, p.sprt, p.seconds);
    let (a, b, a_record, b_record) = (&p.a, &p.b, &p.a_record, &p.b_record);
    let s = MatchSummary::from_games(games);
    let total = s.a_total();
    let elo = elo_interval(total.win as u64, total.draw as u64, total.loss as u64);
    let distinct = arena::distinct(games).len();
    if as_json {
        let mut obj = p.to_json();
        if let Some(file) = shard {
            obj["shard"] = serde_json::to_value(file)?;
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
        if let Some((Some(ta), Some(tb))) = p.think.map(|t| t.per_move()) {
            writeln!(out, "Time a move: A {ta:.3} s, B {tb:.3} s")?;
        }
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
        if let Some(sp) = sprt {
            let (w, d, l) = (total.win as u64, total.draw as u64, total.loss as u64);
            let (llr, (lo, hi), d) = (sp.llr(w, d, l), sp.bounds(), sp.decide(w, d, l));
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
