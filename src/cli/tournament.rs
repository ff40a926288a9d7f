//! `tafl-lab tournament`: a round robin of several agents on one variant, a crosstable and
//! joint Elo ratings ([`tafl_lab::stats::elo`]), saved in an output folder.
//!
//! Every pairing is a [`arena::play_match`]: pairs of games from the same random opening with
//! sides swapped. All pairings use the same seed, so every agent meets the same openings.
//!
//! The folder is the tournament's state, so a killed run restarts with the same command:
//! `settings.json` (written first) names the variant, agents, games, seed and opening plies,
//! and a rerun with other settings is refused; each pairing's result is written atomically to
//! `pairings/I-J.json` as it finishes, and a rerun skips the pairings that have one, unless
//! a model changed: each pairing records both agents' [`AgentRecord`] (spec and the sha256 of
//! every model file), and a pairing whose model files now hash differently, or whose file was
//! saved before hashes were recorded while an agent of it loads a model (weights unknown), is
//! played again, and the run says why.
//! `tournament.json` and `tournament.md` are rewritten after every pairing (marked incomplete
//! until the last).

use anyhow::{anyhow, bail, Context, Result};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tafl_lab::arena::{self, Agent, AgentRecord, AgentSpec, MatchConfig, MatchSummary, Wdl};
use tafl_lab::fsio::atomic_write;
use tafl_lab::rules::{Outcome, Side, Variant};
use tafl_lab::stats::elo::{fit_ratings, EloFit, PairResult, DEFAULT_PRIOR_DRAWS};

/// Play a round robin of several agents on one variant (every pairing is a match of paired
/// openings with sides swapped); write a crosstable and joint Elo ratings with 95% intervals
/// to --out (tournament.json, tournament.md). Rerun the same command to resume.
#[derive(clap::Args)]
pub struct TournamentArgs {
    #[arg(long, default_value = "brandubh")]
    pub variant: String,
    /// The agents, separated by semicolons: "random;mcts:sims=100;az:model=m,sims=64".
    #[arg(long)]
    pub agents: Option<String>,
    /// One agent (repeat the flag); comes after those of --agents.
    #[arg(long = "agent")]
    pub agent: Vec<String>,
    /// Games per pairing (even: each opening is played with both sides).
    #[arg(long, default_value_t = 10)]
    pub games: usize,
    /// Random seed: the same seed replays the same tournament.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Random opening plies shared by each pair of games.
    #[arg(long, default_value_t = 2)]
    pub opening_plies: u32,
    /// Output folder: settings.json, pairings/, tournament.json, tournament.md.
    #[arg(long)]
    pub out: PathBuf,
    #[command(flatten)]
    pub device: super::DeviceArgs,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
}

/// `text` split at the semicolons outside double quotes (spec values may be quoted).
fn split_agents(text: &str) -> Vec<String> {
    let (mut parts, mut cur, mut quoted, mut escaped) = (Vec::new(), String::new(), false, false);
    for c in text.chars() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            ';' if !quoted => {
                parts.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    parts.push(cur);
    parts.into_iter().map(|p| p.trim().to_string()).filter(|p| !p.is_empty()).collect()
}

/// What makes two runs the same tournament (saved as `settings.json`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Settings {
    variant: String,
    /// The variant in full, so that a changed TOML file under the same name is noticed.
    variant_toml: String,
    agents: Vec<String>,
    games: usize,
    seed: u64,
    opening_plies: u32,
}

impl Settings {
    /// The first setting that differs from `other`, for the refusal message.
    fn first_difference(&self, other: &Settings) -> &'static str {
        if self.variant != other.variant || self.variant_toml != other.variant_toml {
            "variant"
        } else if self.agents != other.agents {
            "agents"
        } else if self.games != other.games {
            "games"
        } else if self.seed != other.seed {
            "seed"
        } else {
            "opening plies"
        }
    }
}

/// One finished game of a pairing.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct GameRecord {
    index: usize,
    /// The side agent A (the pairing's first agent) played.
    a_side: Side,
    /// The result by the rules; null when an external engine's fault ended the game.
    outcome: Option<Outcome>,
    /// That fault (a forfeit, scored as a loss, or a rules disagreement, not scored).
    #[serde(default)]
    fault: Value,
    /// How the game ended, in words.
    ending: String,
    plies: usize,
    moves: String,
}

/// A finished pairing, as saved in `pairings/I-J.json`: agent `i` (A) against agent `j` (B),
/// `i < j`, counted from A's side. `games` and the W-D-L count scored games (a rules
/// disagreement of an external engine is not scored; `results` holds every game).
#[derive(Clone, Debug, Serialize, Deserialize)]
struct PairingRecord {
    i: usize,
    j: usize,
    a: String,
    b: String,
    games: u32,
    a_score: f64,
    a_as_attackers: Wdl,
    a_as_defenders: Wdl,
    mean_plies: f64,
    /// The match summary as the arena writes it (with any fields it gains, such as counts of
    /// forfeits or disagreements, which the Markdown lists as notes).
    summary: Value,
    /// What was measured: both agents' specs and model hashes (absent from files written
    /// before they were recorded).
    #[serde(default)]
    provenance: Option<PairProvenance>,
    results: Vec<GameRecord>,
}

/// The [`AgentRecord`] of a pairing's agents A and B.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct PairProvenance {
    a: AgentRecord,
    b: AgentRecord,
}

/// What a rerun does with a pairing's saved file.
enum Saved {
    /// No file: the pairing has not been played.
    None,
    /// Played with the same specs and the same model files: kept.
    Keep(PairingRecord),
    /// Played, but a model changed or its hashes are unknown: played again, for this reason.
    Replay(String),
}

impl PairingRecord {
    fn a_total(&self) -> Wdl {
        let (x, y) = (self.a_as_attackers, self.a_as_defenders);
        Wdl { win: x.win + y.win, draw: x.draw + y.draw, loss: x.loss + y.loss }
    }

    fn a_points(&self) -> f64 {
        let t = self.a_total();
        t.win as f64 + 0.5 * t.draw as f64
    }

    /// Summary fields beyond the ones this file names, when they are not zero or empty.
    fn notes(&self) -> Vec<String> {
        const KNOWN: [&str; 5] = ["games", "a_score", "a_as_attackers", "a_as_defenders", "mean_plies"];
        let Value::Object(map) = &self.summary else { return Vec::new() };
        map.iter()
            .filter(|(k, v)| !KNOWN.contains(&k.as_str()) && !is_empty_value(v))
            .map(|(k, v)| format!("{}: {}", k.replace('_', " "), v))
            .collect()
    }
}

fn is_empty_value(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty() || a.iter().all(is_empty_value),
        Value::Object(o) => o.is_empty() || o.values().all(is_empty_value),
    }
}

fn pairing_path(out: &Path, i: usize, j: usize) -> PathBuf {
    out.join("pairings").join(format!("{}-{}.json", i + 1, j + 1))
}

fn wdl_text(w: Wdl) -> String {
    format!("{}-{}-{}", w.win, w.draw, w.loss)
}

fn write_json(path: &Path, value: &impl Serialize) -> Result<()> {
    let mut text = serde_json::to_string_pretty(value)?;
    text.push('\n');
    atomic_write(path, text.as_bytes()).map_err(|e| anyhow!("{}: {e}", path.display()))
}

/// Reads the saved settings, writes them if there are none, and refuses a folder that holds
/// another tournament.
fn check_settings(out: &Path, settings: &Settings) -> Result<()> {
    let path = out.join("settings.json");
    match std::fs::read_to_string(&path) {
        Ok(text) => {
            let saved: Settings = serde_json::from_str(&text)
                .map_err(|e| anyhow!("--out {}: settings.json is not a tournament's ({e}); use another folder", out.display()))?;
            if &saved != settings {
                bail!(
                    "--out {}: holds a tournament with different {} (settings.json); rerun with its settings or use another folder",
                    out.display(),
                    saved.first_difference(settings)
                );
            }
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => write_json(&path, settings),
        Err(e) => bail!("{}: {e}", path.display()),
    }
}

/// A saved pairing, checked against the tournament and against the agents' model files now
/// (`records`): kept when its specs and model hashes are the same, replayed when a model
/// changed or, for a file saved before hashes were recorded, when an agent of the pairing
/// loads a model (its weights are unknown); an agent without a model has nothing to hash.
fn load_pairing(path: &Path, settings: &Settings, records: &[AgentRecord], i: usize, j: usize) -> Result<Saved> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Saved::None),
        Err(e) => bail!("{}: {e}", path.display()),
    };
    let r: PairingRecord = serde_json::from_str(&text).map_err(|e| anyhow!("{}: not a pairing result ({e}); delete it to replay the pairing", path.display()))?;
    let fits = r.i == i
        && r.j == j
        && r.a == settings.agents[i]
        && r.b == settings.agents[j]
        && r.results.len() == settings.games
        && r.a_total().games() == r.games;
    if !fits {
        bail!("{}: does not match this tournament's pairing {} vs {}; delete it to replay the pairing", path.display(), settings.agents[i], settings.agents[j]);
    }
    let now = PairProvenance { a: records[i].clone(), b: records[j].clone() };
    let mut r = r;
    match &r.provenance {
        Some(saved) => {
            let change = saved.a.first_change(&now.a).map(|c| format!("{}: {c}", now.a.spec)).or_else(|| saved.b.first_change(&now.b).map(|c| format!("{}: {c}", now.b.spec)));
            if let Some(change) = change {
                return Ok(Saved::Replay(change));
            }
        }
        None if now.a.models.is_empty() && now.b.models.is_empty() => r.provenance = Some(now),
        None => return Ok(Saved::Replay("saved without model hashes, so the weights it measured are unknown".into())),
    }
    Ok(Saved::Keep(r))
}

fn record(i: usize, j: usize, a: &AgentSpec, b: &AgentSpec, provenance: PairProvenance, games: &[arena::GameResult]) -> Result<PairingRecord> {
    let s = MatchSummary::from_games(games);
    Ok(PairingRecord {
        i,
        j,
        a: a.to_string(),
        b: b.to_string(),
        games: s.games,
        a_score: s.a_score,
        a_as_attackers: s.a_as_attackers,
        a_as_defenders: s.a_as_defenders,
        mean_plies: s.mean_plies,
        summary: serde_json::to_value(&s)?,
        provenance: Some(provenance),
        results: games
            .iter()
            .map(|g| {
                Ok(GameRecord {
                    index: g.index,
                    a_side: g.a_side,
                    outcome: g.outcome,
                    fault: serde_json::to_value(&g.fault)?,
                    ending: g.ending().to_string(),
                    plies: g.moves.len(),
                    moves: g.moves.iter().map(|m| m.to_string()).collect::<Vec<_>>().join(" "),
                })
            })
            .collect::<Result<_>>()?,
    })
}

/// The crosstable and ratings of the pairings finished so far.
struct Standings {
    /// points[r][c]: row agent's points against the column agent.
    points: Vec<Vec<f64>>,
    games: Vec<Vec<u32>>,
    fit: EloFit,
    /// Agent indices by rating, best first.
    order: Vec<usize>,
}

fn standings(n: usize, done: &[PairingRecord]) -> Result<Standings> {
    let mut points = vec![vec![0.0; n]; n];
    let mut games = vec![vec![0u32; n]; n];
    let mut results = Vec::new();
    for r in done {
        let t = r.a_total();
        points[r.i][r.j] += r.a_points();
        points[r.j][r.i] += r.games as f64 - r.a_points();
        games[r.i][r.j] += r.games;
        games[r.j][r.i] += r.games;
        results.push(PairResult::new(r.i, r.j, t.win, t.draw, t.loss));
    }
    let fit = fit_ratings(n, &results, DEFAULT_PRIOR_DRAWS).context("fitting the ratings")?;
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&x, &y| fit.ratings[y].elo.total_cmp(&fit.ratings[x].elo).then(x.cmp(&y)));
    Ok(Standings { points, games, fit, order })
}

impl Standings {
    fn score(&self, i: usize) -> (f64, u32) {
        (self.points[i].iter().sum(), self.games[i].iter().sum())
    }
}

const MODEL: &str = "Bradley-Terry maximum likelihood fitted jointly to every game (a draw counts as half a win and \
                     half a loss); ratings sum to 0 (the field's mean is 0); each agent also gets one virtual draw \
                     against a 0-rated opponent, so an agent that won or lost every game stays finite; 95% intervals \
                     from the observed Fisher information (inverse Hessian of the log-likelihood, under the sum-to-0 \
                     anchor), each agent's against the field's mean";

fn pct(points: f64, games: u32) -> f64 {
    100.0 * points / games.max(1) as f64
}

fn tournament_json(settings: &Settings, records: &[AgentRecord], done: &[PairingRecord], st: &Standings, total_pairings: usize) -> Value {
    let n = settings.agents.len();
    let pairings: Vec<Value> = done
        .iter()
        .map(|r| {
            json!({
                "i": r.i, "j": r.j, "a": r.a, "b": r.b, "games": r.games,
                "a_score": r.a_score, "a_as_attackers": r.a_as_attackers, "a_as_defenders": r.a_as_defenders,
                "a_total": r.a_total(), "mean_plies": r.mean_plies, "summary": r.summary,
                "elo_difference": st.fit.difference(r.i, r.j), "provenance": r.provenance,
            })
        })
        .collect();
    let ratings: Vec<Value> = (0..n)
        .map(|i| {
            let (p, g) = st.score(i);
            let r = st.fit.ratings[i];
            json!({"agent": settings.agents[i], "elo": r.elo, "low": r.low, "high": r.high, "se": r.se, "points": p, "games": g})
        })
        .collect();
    let table: Vec<Value> = st
        .order
        .iter()
        .enumerate()
        .map(|(rank, &i)| json!({"rank": rank + 1, "index": i, "agent": settings.agents[i], "elo": st.fit.ratings[i].elo}))
        .collect();
    let crosstable: Vec<Vec<Value>> = (0..n)
        .map(|r| (0..n).map(|c| if r == c || st.games[r][c] == 0 { Value::Null } else { json!(st.points[r][c]) }).collect())
        .collect();
    json!({
        "variant": settings.variant,
        "agents": settings.agents,
        "provenance": records,
        "games_per_pairing": settings.games,
        "seed": settings.seed,
        "opening_plies": settings.opening_plies,
        "complete": done.len() == total_pairings,
        "pairings_done": done.len(),
        "pairings_total": total_pairings,
        "games": done.iter().map(|r| r.games).sum::<u32>(),
        "crosstable": crosstable,
        "crosstable_games": st.games,
        "pairings": pairings,
        "ratings": ratings,
        "standings": table,
        "rating_model": {
            "model": "bradley-terry",
            "draws": "half a win and half a loss",
            "anchor": "mean 0",
            "prior_draws_per_agent": st.fit.prior_draws,
            "interval": "95%, observed Fisher information",
            "iterations": st.fit.iterations,
            "log_likelihood": st.fit.log_likelihood,
            "covariance": st.fit.covariance,
        },
    })
}

fn tournament_md(settings: &Settings, records: &[AgentRecord], done: &[PairingRecord], st: &Standings, total_pairings: usize) -> String {
    let n = settings.agents.len();
    let mut s = format!("# Tournament: {}\n\n", settings.variant);
    s += &format!(
        "{n} agents, round robin, {} games per pairing (pairs of games from the same random opening of {} plies, sides \
         swapped; the same openings in every pairing), seed {}. ",
        settings.games, settings.opening_plies, settings.seed
    );
    if done.len() == total_pairings {
        s += &format!("All {total_pairings} pairings played.\n\n");
    } else {
        s += &format!("**Incomplete:** {} of {total_pairings} pairings played so far.\n\n", done.len());
    }
    s += "## Crosstable\n\nPoints of the row agent against the column agent (a draw is half a point).\n\n| # | agent |";
    for c in 0..n {
        s += &format!(" {} |", c + 1);
    }
    s += " score |\n|---|---|";
    s += &"---|".repeat(n + 1);
    s += "\n";
    for r in 0..n {
        s += &format!("| {} | `{}` |", r + 1, settings.agents[r]);
        for c in 0..n {
            if r == c {
                s += " — |";
            } else if st.games[r][c] == 0 {
                s += " · |";
            } else {
                s += &format!(" {}/{} |", st.points[r][c], st.games[r][c]);
            }
        }
        let (p, g) = st.score(r);
        s += &format!(" {p}/{g} ({:.1}%) |\n", pct(p, g));
    }
    s += "\n## Ratings\n\n| rank | agent | Elo | 95% interval | score | games |\n|---|---|---|---|---|---|\n";
    for (rank, &i) in st.order.iter().enumerate() {
        let r = st.fit.ratings[i];
        let (p, g) = st.score(i);
        s += &format!("| {} | `{}` | {:+.0} | {:+.0} to {:+.0} | {:.1}% | {g} |\n", rank + 1, settings.agents[i], r.elo, r.low, r.high, pct(p, g));
    }
    if records.iter().any(|r| !r.models.is_empty()) {
        s += "\n## Models\n\nThe file each agent's model resolved to, and its sha256 (a pairing is replayed when a hash changes).\n\n| agent | file | sha256 |\n|---|---|---|\n";
        for r in records {
            for f in &r.models {
                s += &format!("| `{}` | `{}` | `{}` |\n", r.spec, f.path, f.sha256);
            }
        }
    }
    s += &format!("\n{MODEL}.\n\n## Pairings\n\nW-D-L of A, the first agent, as attackers and as defenders.\n\n");
    s += "| A | B | games | A as attackers | A as defenders | A's score | Elo A − B (95%) | mean plies |\n|---|---|---|---|---|---|---|---|\n";
    let mut notes = Vec::new();
    for r in done {
        let d = st.fit.difference(r.i, r.j);
        s += &format!(
            "| `{}` | `{}` | {} | {} | {} | {:.1}% | {:+.0} ({:+.0} to {:+.0}) | {:.1} |\n",
            r.a,
            r.b,
            r.games,
            wdl_text(r.a_as_attackers),
            wdl_text(r.a_as_defenders),
            pct(r.a_points(), r.games),
            d.elo,
            d.low,
            d.high,
            r.mean_plies
        );
        for note in r.notes() {
            notes.push(format!("- `{}` vs `{}`: {note}", r.a, r.b));
        }
    }
    if !notes.is_empty() {
        s += "\nNotes:\n\n";
        s += &notes.join("\n");
        s += "\n";
    }
    s
}

fn write_outputs(out: &Path, settings: &Settings, records: &[AgentRecord], done: &[PairingRecord], total: usize) -> Result<Standings> {
    let mut sorted = done.to_vec();
    sorted.sort_by_key(|r| (r.i, r.j));
    let st = standings(settings.agents.len(), &sorted)?;
    write_json(&out.join("tournament.json"), &tournament_json(settings, records, &sorted, &st, total))?;
    let md = out.join("tournament.md");
    atomic_write(&md, tournament_md(settings, records, &sorted, &st, total).as_bytes()).map_err(|e| anyhow!("{}: {e}", md.display()))?;
    Ok(st)
}

pub fn run(t: &TournamentArgs, out: &mut impl Write) -> Result<()> {
    let variant = Arc::new(Variant::from_spec(&t.variant)?);
    let mut texts = t.agents.as_deref().map(split_agents).unwrap_or_default();
    texts.extend(t.agent.iter().map(|a| a.trim().to_string()));
    let specs: Vec<AgentSpec> = texts.iter().map(|s| super::parse_agent("--agents", s, &t.device)).collect::<Result<_>>()?;
    if specs.len() < 2 {
        bail!("--agents: a tournament needs at least two agents (\"A;B;C\" or repeated --agent), got {}", specs.len());
    }
    let labels: Vec<String> = specs.iter().map(|s| s.to_string()).collect();
    for (k, l) in labels.iter().enumerate() {
        if labels[..k].contains(l) {
            bail!("--agents: {l} is listed twice");
        }
    }
    if t.games < 2 || t.games % 2 != 0 {
        bail!("--games: must be even and at least 2 (each opening is played with both sides), got {}", t.games);
    }
    let settings = Settings {
        variant: variant.name.clone(),
        variant_toml: variant.to_toml(),
        agents: labels.clone(),
        games: t.games,
        seed: t.seed,
        opening_plies: t.opening_plies,
    };
    std::fs::create_dir_all(t.out.join("pairings")).map_err(|e| anyhow!("--out {}: {e}", t.out.display()))?;
    check_settings(&t.out, &settings)?;

    // Each agent's spec and model hashes, once: what a saved pairing is checked against.
    let records: Vec<AgentRecord> = specs.iter().zip(&texts).map(|(s, text)| AgentRecord::of(s).map_err(|e| anyhow!("--agents {text}: {e}"))).collect::<Result<_>>()?;

    let n = specs.len();
    let pairs: Vec<(usize, usize)> = (0..n).flat_map(|i| (i + 1..n).map(move |j| (i, j))).collect();
    let mut done = Vec::new();
    let mut todo = Vec::new();
    let mut replayed = 0;
    for &(i, j) in &pairs {
        let path = pairing_path(&t.out, i, j);
        match load_pairing(&path, &settings, &records, i, j)? {
            Saved::Keep(r) => done.push(r),
            Saved::None => todo.push((i, j)),
            Saved::Replay(why) => {
                writeln!(out, "replaying {} vs {} ({}): {why}", labels[i], labels[j], path.display())?;
                replayed += 1;
                todo.push((i, j));
            }
        }
    }
    let resumed = done.len();
    // Build every agent once before any game, so spec and model errors surface at once.
    if !todo.is_empty() {
        for (s, text) in specs.iter().zip(&texts) {
            Agent::new(s, &variant, 0).map_err(|e| anyhow!("--agents {text}: {e}"))?;
        }
    }
    // Games run in parallel across cores; each network evaluator then uses one torch thread.
    tafl_lab::nn::set_torch_threads(1);
    let bar = super::progress_bar((pairs.len() * t.games) as u64, "tournament", t.quiet);
    bar.set_position((resumed * t.games) as u64);
    let cfg = MatchConfig { games: t.games, seed: t.seed, opening_plies: t.opening_plies };
    let mut st = None;
    for (i, j) in todo.iter().copied() {
        bar.set_message(format!("{} vs {}", labels[i], labels[j]));
        let games = arena::play_match(&variant, &specs[i], &specs[j], &cfg, &|_| bar.inc(1))
            .map_err(|e| anyhow!("{} vs {}: {e}", labels[i], labels[j]))?;
        for k in [i, j] {
            records[k].check_unchanged(&specs[k]).map_err(|e| anyhow!("{} vs {}: {}: {e}", labels[i], labels[j], labels[k]))?;
        }
        let provenance = PairProvenance { a: records[i].clone(), b: records[j].clone() };
        let r = record(i, j, &specs[i], &specs[j], provenance, &games)?;
        write_json(&pairing_path(&t.out, i, j), &r)?;
        bar.suspend(|| -> Result<()> {
            writeln!(
                out,
                "{} vs {}: {} games, {} scores {:.1}% ({} as attackers, {} as defenders)",
                r.a,
                r.b,
                r.games,
                r.a,
                pct(r.a_points(), r.games),
                wdl_text(r.a_as_attackers),
                wdl_text(r.a_as_defenders)
            )?;
            out.flush()?;
            Ok(())
        })?;
        done.push(r);
        st = Some(write_outputs(&t.out, &settings, &records, &done, pairs.len())?);
    }
    bar.finish_and_clear();
    let st = match st {
        Some(st) => st,
        None => write_outputs(&t.out, &settings, &records, &done, pairs.len())?,
    };
    writeln!(
        out,
        "{}: {} pairing{} of {} games: {} played, {} from an earlier run{}",
        settings.variant,
        pairs.len(),
        if pairs.len() == 1 { "" } else { "s" },
        t.games,
        todo.len(),
        resumed,
        if replayed > 0 { format!("; {replayed} replayed (a model changed or its hashes were unknown)") } else { String::new() }
    )?;
    writeln!(out, "ratings (Bradley-Terry, joint maximum likelihood, mean 0, 95% intervals):")?;
    for (rank, &i) in st.order.iter().enumerate() {
        let r = st.fit.ratings[i];
        let (p, g) = st.score(i);
        writeln!(out, "{:>3}. {:<32} {:+6.0} ({:+.0} to {:+.0})  score {:.1}% of {g}", rank + 1, labels[i], r.elo, r.low, r.high, pct(p, g))?;
    }
    writeln!(out, "wrote {} and {}", t.out.join("tournament.json").display(), t.out.join("tournament.md").display())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agents_split_at_semicolons_outside_quotes() {
        assert_eq!(split_agents("random; mcts:sims=8,cpuct=2 ;"), ["random", "mcts:sims=8,cpuct=2"]);
        assert_eq!(split_agents(r#"az:model="a;b,c",sims=4;random"#), [r#"az:model="a;b,c",sims=4"#, "random"]);
        assert!(split_agents(" ; ").is_empty());
    }
}
