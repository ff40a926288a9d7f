//! A round robin of several agents on one variant, a crosstable and joint Elo ratings
//! ([`crate::stats::elo`]), saved in an output folder (`tafl-lab tournament`).
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
//!
//! A long tournament divides: with a [`Shard`], a folder plays only that shard's games of
//! every pairing (and resumes as any folder does), and [`merge`] puts the shards' folders
//! together into the folder one whole run would have written.

use crate::arena::shard::{self, Job, Shard, ShardError, ShardFile};
use crate::arena::{self, Agent, AgentRecord, AgentSpec, GameRecord, GameResult, MatchConfig, MatchSummary, Wdl};
use crate::fsio::atomic_write;
use crate::rules::Variant;
use crate::stats::elo::{fit_ratings, EloFit, FitError, PairResult, DEFAULT_PRIOR_DRAWS};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Why a tournament stopped. Each is one line; [`TournamentError::Folder`] and
/// [`TournamentError::Agent`] leave it to the caller to name the folder or the agent as the
/// user gave it.
#[derive(Debug, thiserror::Error)]
pub enum TournamentError {
    /// The output folder cannot be made, or holds another tournament (the message does not
    /// name the folder).
    #[error("{0}")]
    Folder(String),
    /// Shards that do not merge (the message names the file).
    #[error(transparent)]
    Shard(#[from] ShardError),
    /// Agent `index` of the list cannot be built, or its model files cannot be hashed.
    #[error("agent {}: {message}", index + 1)]
    Agent { index: usize, message: String },
    /// A file that cannot be read or written, a saved pairing that does not fit, or a pairing
    /// that failed (the message names it).
    #[error("{0}")]
    Run(String),
    /// The joint rating fit failed.
    #[error("fitting the ratings: {0}")]
    Fit(FitError),
    /// The caller's output (see [`Event`]) failed.
    #[error(transparent)]
    Output(#[from] std::io::Error),
}

/// What makes two runs the same tournament (saved as `settings.json`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    pub variant: String,
    /// The variant in full, so that a changed TOML file under the same name is noticed.
    pub variant_toml: String,
    /// Each agent's spec, as text ([`AgentSpec`]'s `Display`).
    pub agents: Vec<String>,
    pub games: usize,
    pub seed: u64,
    pub opening_plies: u32,
    /// The shard of every pairing's games this folder plays; absent for a whole run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<Shard>,
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
        } else if self.shard != other.shard {
            "shard"
        } else {
            "opening plies"
        }
    }

    /// Every pairing's match: its games, seed and openings, and the shard.
    pub fn match_config(&self) -> MatchConfig {
        MatchConfig { games: self.games, seed: self.seed, opening_plies: self.opening_plies, shard: self.shard, a_side: None }
    }
}

/// A finished pairing, as saved in `pairings/I-J.json`: agent `i` (A) against agent `j` (B),
/// `i < j`, counted from A's side. `games` and the W-D-L count scored games (a rules
/// disagreement of an external engine is not scored; `results` holds every game).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PairingRecord {
    pub i: usize,
    pub j: usize,
    pub a: String,
    pub b: String,
    pub games: u32,
    pub a_score: f64,
    pub a_as_attackers: Wdl,
    pub a_as_defenders: Wdl,
    pub mean_plies: f64,
    /// The match summary as the arena writes it (with any fields it gains, such as counts of
    /// forfeits or disagreements, which the Markdown lists as notes).
    pub summary: Value,
    /// What was measured: both agents' specs and model hashes (absent from files written
    /// before they were recorded).
    #[serde(default)]
    pub provenance: Option<PairProvenance>,
    /// Every game (with a shard, the shard's games), in order.
    pub results: Vec<GameRecord>,
}

/// The [`AgentRecord`] of a pairing's agents A and B.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PairProvenance {
    pub a: AgentRecord,
    pub b: AgentRecord,
}

/// What a rerun does with a pairing's saved file (one per pairing, read once).
#[allow(clippy::large_enum_variant)]
enum Saved {
    /// No file: the pairing has not been played.
    None,
    /// Played with the same specs and the same model files: kept.
    Keep(PairingRecord),
    /// Played, but a model changed or its hashes are unknown: played again, for this reason.
    Replay(String),
}

impl PairingRecord {
    /// A's wins, draws and losses over both sides.
    pub fn a_total(&self) -> Wdl {
        self.a_as_attackers + self.a_as_defenders
    }

    /// A's points (a draw is half a point).
    pub fn a_points(&self) -> f64 {
        let t = self.a_total();
        t.win as f64 + 0.5 * t.draw as f64
    }

    /// Summary fields beyond the ones this file names, when they are not zero or empty.
    fn notes(&self) -> Vec<String> {
        const KNOWN: [&str; 5] = ["games", "a_score", "a_as_attackers", "a_as_defenders", "mean_plies"];
        let Value::Object(map) = &self.summary else { return Vec::new() };
        map.iter().filter(|(k, v)| !KNOWN.contains(&k.as_str()) && !is_empty_value(v)).map(|(k, v)| format!("{}: {}", k.replace('_', " "), v)).collect()
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

fn write_json(path: &Path, value: &impl Serialize) -> Result<(), TournamentError> {
    let mut text = serde_json::to_string_pretty(value).expect("serializes");
    text.push('\n');
    atomic_write(path, text.as_bytes()).map_err(|e| file_error(path, e))
}

/// `path: e`, one line.
fn file_error(path: &Path, e: impl std::fmt::Display) -> TournamentError {
    TournamentError::Run(format!("{}: {e}", path.display()))
}

/// Reads the saved settings, writes them if there are none, and refuses a folder that holds
/// another tournament.
fn check_settings(out: &Path, settings: &Settings) -> Result<(), TournamentError> {
    let path = out.join("settings.json");
    match std::fs::read_to_string(&path) {
        Ok(text) => {
            let saved: Settings =
                serde_json::from_str(&text).map_err(|e| TournamentError::Folder(format!("settings.json is not a tournament's ({e}); use another folder")))?;
            if &saved != settings {
                return Err(TournamentError::Folder(format!(
                    "holds a tournament with different {} (settings.json); rerun with its settings or use another folder",
                    saved.first_difference(settings)
                )));
            }
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => write_json(&path, settings),
        Err(e) => Err(file_error(&path, e)),
    }
}

/// A saved pairing, checked against the tournament and against the agents' model files now
/// (`records`): kept when its specs and model hashes are the same, replayed when a model
/// changed or, for a file saved before hashes were recorded, when an agent of the pairing
/// loads a model (its weights are unknown); an agent without a model has nothing to hash.
fn load_pairing(path: &Path, settings: &Settings, records: &[AgentRecord], i: usize, j: usize) -> Result<Saved, TournamentError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Saved::None),
        Err(e) => return Err(file_error(path, e)),
    };
    let r: PairingRecord = serde_json::from_str(&text).map_err(|e| file_error(path, format!("not a pairing result ({e}); delete it to replay the pairing")))?;
    let fits = r.i == i
        && r.j == j
        && r.a == settings.agents[i]
        && r.b == settings.agents[j]
        && r.results.iter().map(|g| g.index).eq(settings.match_config().indices())
        && r.a_total().games() == r.games;
    if !fits {
        return Err(file_error(
            path,
            format!("does not match this tournament's pairing {} vs {}; delete it to replay the pairing", settings.agents[i], settings.agents[j]),
        ));
    }
    let now = PairProvenance { a: records[i].clone(), b: records[j].clone() };
    let mut r = r;
    match &r.provenance {
        Some(saved) => {
            let change = saved
                .a
                .first_change(&now.a)
                .map(|c| format!("{}: {c}", now.a.spec))
                .or_else(|| saved.b.first_change(&now.b).map(|c| format!("{}: {c}", now.b.spec)));
            if let Some(change) = change {
                return Ok(Saved::Replay(change));
            }
        }
        None if now.a.models.is_empty() && now.b.models.is_empty() => r.provenance = Some(now),
        None => return Ok(Saved::Replay("saved without model hashes, so the weights it measured are unknown".into())),
    }
    Ok(Saved::Keep(r))
}

fn record(i: usize, j: usize, a: &str, b: &str, provenance: PairProvenance, games: &[GameResult]) -> PairingRecord {
    let s = MatchSummary::from_games(games);
    PairingRecord {
        i,
        j,
        a: a.to_string(),
        b: b.to_string(),
        games: s.games,
        a_score: s.a_score,
        a_as_attackers: s.a_as_attackers,
        a_as_defenders: s.a_as_defenders,
        mean_plies: s.mean_plies,
        summary: serde_json::to_value(&s).expect("serializes"),
        provenance: Some(provenance),
        results: games.iter().map(GameRecord::of).collect(),
    }
}

/// The crosstable and ratings of the pairings finished so far.
pub struct Standings {
    /// points[r][c]: row agent's points against the column agent.
    pub points: Vec<Vec<f64>>,
    pub games: Vec<Vec<u32>>,
    pub fit: EloFit,
    /// Agent indices by rating, best first.
    pub order: Vec<usize>,
}

fn standings(n: usize, done: &[PairingRecord]) -> Result<Standings, TournamentError> {
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
    let fit = fit_ratings(n, &results, DEFAULT_PRIOR_DRAWS).map_err(TournamentError::Fit)?;
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&x, &y| fit.ratings[y].elo.total_cmp(&fit.ratings[x].elo).then(x.cmp(&y)));
    Ok(Standings { points, games, fit, order })
}

impl Standings {
    /// Agent `i`'s points and games over all its pairings.
    pub fn score(&self, i: usize) -> (f64, u32) {
        (self.points[i].iter().sum(), self.games[i].iter().sum())
    }
}

const MODEL: &str = "Bradley-Terry maximum likelihood fitted jointly to every game (a draw counts as half a win and \
                     half a loss); ratings sum to 0 (the field's mean is 0); each agent also gets one virtual draw \
                     against a 0-rated opponent, so an agent that won or lost every game stays finite; 95% intervals \
                     from the observed Fisher information (inverse Hessian of the log-likelihood, under the sum-to-0 \
                     anchor), each agent's against the field's mean";

/// `points` as a percentage of `games` (0 without games).
pub fn pct(points: f64, games: u32) -> f64 {
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
    let crosstable: Vec<Vec<Value>> =
        (0..n).map(|r| (0..n).map(|c| if r == c || st.games[r][c] == 0 { Value::Null } else { json!(st.points[r][c]) }).collect()).collect();
    let mut v = json!({
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
    });
    if let Some(shard) = settings.shard {
        v["shard"] = json!(shard);
    }
    v
}

fn tournament_md(settings: &Settings, records: &[AgentRecord], done: &[PairingRecord], st: &Standings, total_pairings: usize) -> String {
    let n = settings.agents.len();
    let mut s = format!("# Tournament: {}\n\n", settings.variant);
    s += &format!(
        "{n} agents, round robin, {} games per pairing (pairs of games from the same random opening of {} plies, sides \
         swapped; the same openings in every pairing), seed {}. ",
        settings.games, settings.opening_plies, settings.seed
    );
    if let Some(shard) = settings.shard {
        s += &format!(
            "**Shard {shard}:** only this shard's games of each pairing (the pairs of games p with p mod {} = {}); \
             `tournament --merge` puts the shards' folders together. ",
            shard.count, shard.index
        );
    }
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
            "| `{}` | `{}` | {} | {} | {} | {:.1}% | {} | {:.1} |\n",
            r.a,
            r.b,
            r.games,
            r.a_as_attackers,
            r.a_as_defenders,
            pct(r.a_points(), r.games),
            d,
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

fn write_outputs(out: &Path, settings: &Settings, records: &[AgentRecord], done: &[PairingRecord], total: usize) -> Result<Standings, TournamentError> {
    let mut sorted = done.to_vec();
    sorted.sort_by_key(|r| (r.i, r.j));
    let st = standings(settings.agents.len(), &sorted)?;
    write_json(&out.join("tournament.json"), &tournament_json(settings, records, &sorted, &st, total))?;
    let md = out.join("tournament.md");
    atomic_write(&md, tournament_md(settings, records, &sorted, &st, total).as_bytes()).map_err(|e| file_error(&md, e))?;
    Ok(st)
}

/// What a running tournament reports, in order, to the caller (which prints it).
pub enum Event<'a> {
    /// A saved pairing is played again, for this reason (reported before any game).
    Replaying { a: &'a str, b: &'a str, path: &'a Path, why: &'a str },
    /// Every agent is built and the games begin; `resumed` pairings were kept from an earlier
    /// run.
    Start { resumed: usize },
    /// A pairing's games begin.
    Pairing { a: &'a str, b: &'a str },
    /// A pairing finished; its file is written.
    Played(&'a PairingRecord),
}

/// What a finished run did.
pub struct Summary {
    pub standings: Standings,
    /// Pairings in the tournament, played now, kept from an earlier run, and played again
    /// (a model changed or its hashes were unknown; counted in `played`).
    pub pairings: usize,
    pub played: usize,
    pub resumed: usize,
    pub replayed: usize,
}

/// A tournament and its folder.
pub struct Tournament {
    out: PathBuf,
    variant: Arc<Variant>,
    specs: Vec<AgentSpec>,
    settings: Settings,
}

impl Tournament {
    /// The round robin of `specs` on `variant`, saved in `out`: makes the folder and its
    /// `pairings/`, and writes `settings.json`, or checks the one there is this tournament's.
    ///
    /// # Errors
    /// The folder cannot be made or holds another tournament ([`TournamentError::Folder`]),
    /// or `settings.json` cannot be read or written.
    pub fn open(
        out: &Path,
        variant: Arc<Variant>,
        specs: Vec<AgentSpec>,
        games: usize,
        seed: u64,
        opening_plies: u32,
        shard: Option<Shard>,
    ) -> Result<Tournament, TournamentError> {
        let settings = Settings {
            variant: variant.name.clone(),
            variant_toml: variant.to_toml(),
            agents: specs.iter().map(|s| s.to_string()).collect(),
            games,
            seed,
            opening_plies,
            shard,
        };
        std::fs::create_dir_all(out.join("pairings")).map_err(|e| TournamentError::Folder(e.to_string()))?;
        check_settings(out, &settings)?;
        Ok(Tournament { out: out.to_path_buf(), variant, specs, settings })
    }

    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// Plays every pairing without a saved result (or whose saved result a changed model made
    /// stale), writing each pairing's file as it finishes and `tournament.json` and
    /// `tournament.md` after each; `on_game` is called as each game finishes (from worker
    /// threads), `on_event` as the run goes.
    ///
    /// # Errors
    /// An agent that cannot be built or hashed, a saved file that cannot be read or does not
    /// fit, a failed pairing or a model that changed during one, a file that cannot be
    /// written, a failed rating fit, or an error of `on_event`.
    pub fn run(&self, on_game: &(dyn Fn(&GameResult) + Sync), on_event: &mut dyn FnMut(Event<'_>) -> std::io::Result<()>) -> Result<Summary, TournamentError> {
        let (specs, labels, out) = (&self.specs, &self.settings.agents, &self.out);
        let agent_error = |index: usize, e: &dyn std::fmt::Display| TournamentError::Agent { index, message: e.to_string() };
        // Each agent's spec and model hashes, once: what a saved pairing is checked against.
        let records: Vec<AgentRecord> = specs.iter().enumerate().map(|(k, s)| AgentRecord::of(s).map_err(|e| agent_error(k, &e))).collect::<Result<_, _>>()?;

        let n = specs.len();
        let pairs = pairs(n);
        let mut done = Vec::new();
        let mut todo = Vec::new();
        let mut replayed = 0;
        for &(i, j) in &pairs {
            let path = pairing_path(out, i, j);
            match load_pairing(&path, &self.settings, &records, i, j)? {
                Saved::Keep(r) => done.push(r),
                Saved::None => todo.push((i, j)),
                Saved::Replay(why) => {
                    on_event(Event::Replaying { a: &labels[i], b: &labels[j], path: &path, why: &why })?;
                    replayed += 1;
                    todo.push((i, j));
                }
            }
        }
        let resumed = done.len();
        // Build every agent once before any game, so spec and model errors surface at once.
        if !todo.is_empty() {
            for (k, s) in specs.iter().enumerate() {
                Agent::new(s, &self.variant, 0).map_err(|e| agent_error(k, &e))?;
            }
        }
        on_event(Event::Start { resumed })?;
        let cfg = self.settings.match_config();
        let mut st = None;
        for (i, j) in todo.iter().copied() {
            on_event(Event::Pairing { a: &labels[i], b: &labels[j] })?;
            let games = arena::play_match(&self.variant, &specs[i], &specs[j], &cfg, on_game)
                .map_err(|e| TournamentError::Run(format!("{} vs {}: {e}", labels[i], labels[j])))?;
            for k in [i, j] {
                records[k].check_unchanged(&specs[k]).map_err(|e| TournamentError::Run(format!("{} vs {}: {}: {e}", labels[i], labels[j], labels[k])))?;
            }
            let provenance = PairProvenance { a: records[i].clone(), b: records[j].clone() };
            let r = record(i, j, &labels[i], &labels[j], provenance, &games);
            write_json(&pairing_path(out, i, j), &r)?;
            on_event(Event::Played(&r))?;
            done.push(r);
            st = Some(write_outputs(out, &self.settings, &records, &done, pairs.len())?);
        }
        let standings = match st {
            Some(st) => st,
            None => write_outputs(out, &self.settings, &records, &done, pairs.len())?,
        };
        Ok(Summary { standings, pairings: pairs.len(), played: todo.len(), resumed, replayed })
    }
}

/// What [`merge`] did.
pub struct Merged {
    pub settings: Settings,
    pub standings: Standings,
    pub pairings: usize,
    pub shards: usize,
}

/// Puts the folders of a tournament's shards (`shards`, each written with the same settings
/// and a different [`Shard`] of the same count) together into `out`, as one whole run writes
/// it: `settings.json` without a shard, every `pairings/I-J.json` with all its games, and
/// `tournament.json` and `tournament.md`. Every shard must have finished (every pairing file
/// there) with the same model files. A rerun of the whole command into `out` then finds every
/// pairing played.
///
/// # Errors
/// A shard folder that cannot be read or is not a shard's, shards of different settings, a
/// shard given twice or missing, an unfinished shard, a pairing whose games or model files
/// do not fit ([`TournamentError::Shard`], [`TournamentError::Run`], naming the file); `out`
/// holding another tournament ([`TournamentError::Folder`]); a file that cannot be written or
/// a failed rating fit.
pub fn merge(out: &Path, shards: &[PathBuf]) -> Result<Merged, TournamentError> {
    let parts = shards.iter().map(|dir| Ok((dir.display().to_string(), read_shard(dir)?))).collect::<Result<Vec<_>, TournamentError>>()?;
    let source = shards.first().map(|d| d.join("settings.json")).unwrap_or_default();
    let (job, lists) = shard::merge(parts)?;
    let settings = job.settings;
    let variant = Variant::from_toml_str(&settings.variant_toml, "settings.json").map_err(|e| file_error(&source, e))?;
    let n = settings.agents.len();
    let mut done: Vec<PairingRecord> = Vec::new();
    let mut records: Vec<Option<AgentRecord>> = vec![None; n];
    for (((i, j), provenance), list) in pairs(n).into_iter().zip(job.provenance).zip(lists) {
        let games = list.iter().map(|g| g.to_result(variant.geometry)).collect::<Result<Vec<_>, _>>().map_err(|e| file_error(&source, e))?;
        records[i].get_or_insert_with(|| provenance.a.clone());
        records[j].get_or_insert_with(|| provenance.b.clone());
        done.push(record(i, j, &settings.agents[i], &settings.agents[j], provenance, &games));
    }
    let records: Vec<AgentRecord> = records.into_iter().map(|r| r.expect("every agent plays a pairing")).collect();
    std::fs::create_dir_all(out.join("pairings")).map_err(|e| TournamentError::Folder(e.to_string()))?;
    check_settings(out, &settings)?;
    for r in &done {
        write_json(&pairing_path(out, r.i, r.j), r)?;
    }
    let standings = write_outputs(out, &settings, &records, &done, done.len())?;
    Ok(Merged { pairings: done.len(), shards: shards.len(), settings, standings })
}

/// The pairings of `n` agents, `(i, j)` with `i < j`, in the order they are played.
fn pairs(n: usize) -> Vec<(usize, usize)> {
    (0..n).flat_map(|i| (i + 1..n).map(move |j| (i, j))).collect()
}

/// What every shard folder of one tournament shares (the settings of its [`ShardFile`]): the
/// settings of the whole run, and per pairing the model files both agents played with.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TournamentJob {
    #[serde(flatten)]
    pub settings: Settings,
    pub provenance: Vec<PairProvenance>,
}

impl Job for TournamentJob {
    const KIND: &'static str = "tournament";

    fn lists(&self) -> Vec<(String, usize)> {
        pairs(self.settings.agents.len()).into_iter().map(|(i, j)| (format!("pairing {}-{}", i + 1, j + 1), self.settings.games)).collect()
    }
}

/// A shard's folder read as its [`ShardFile`]: its settings (the shard taken out) and every
/// pairing's provenance and games.
fn read_shard(dir: &Path) -> Result<ShardFile<TournamentJob>, TournamentError> {
    let path = dir.join("settings.json");
    let text = std::fs::read_to_string(&path).map_err(|e| file_error(&path, e))?;
    let s: Settings = serde_json::from_str(&text).map_err(|e| file_error(&path, format!("not a tournament's settings ({e})")))?;
    let Some(shard) = s.shard else {
        return Err(ShardError::NotShard { file: path.display().to_string(), why: "its settings name no shard".into() }.into());
    };
    let settings = Settings { shard: None, ..s };
    let (mut provenance, mut games) = (Vec::new(), Vec::new());
    for (i, j) in pairs(settings.agents.len()) {
        let path = pairing_path(dir, i, j);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(file_error(&path, "missing: the shard has not finished (rerun its command to resume it)"));
            }
            Err(e) => return Err(file_error(&path, e)),
        };
        let r: PairingRecord = serde_json::from_str(&text).map_err(|e| file_error(&path, format!("not a pairing result ({e})")))?;
        if (r.i, r.j, &r.a, &r.b) != (i, j, &settings.agents[i], &settings.agents[j]) {
            return Err(file_error(&path, format!("is not pairing {} vs {}", settings.agents[i], settings.agents[j])));
        }
        provenance.push(r.provenance.ok_or_else(|| file_error(&path, "records no model hashes"))?);
        games.push(r.results);
    }
    Ok(ShardFile { kind: TournamentJob::KIND.to_string(), shard, settings: TournamentJob { settings, provenance }, games })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn random_field(out: &Path, seed: u64) -> Result<Tournament, TournamentError> {
        let variant = Arc::new(Variant::from_spec("brandubh").unwrap());
        let specs = vec!["random".parse::<AgentSpec>().unwrap(), "mcts:sims=2".parse().unwrap(), "mcts:sims=3".parse().unwrap()];
        Tournament::open(out, variant, specs, 2, seed, 2, None)
    }

    #[test]
    fn a_tournament_resumes_from_its_folder_and_refuses_another() {
        let out = std::env::temp_dir().join(format!("tafl-lab-lab-tournament-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&out);
        let mut events = Vec::new();
        let mut log = |e: Event<'_>| {
            events.push(match e {
                Event::Replaying { a, b, .. } => format!("replaying {a} vs {b}"),
                Event::Start { resumed } => format!("start {resumed}"),
                Event::Pairing { a, b } => format!("{a} vs {b}"),
                Event::Played(r) => format!("played {}-{}", r.i + 1, r.j + 1),
            });
            Ok(())
        };
        let s = random_field(&out, 3).unwrap().run(&|_| {}, &mut log).unwrap();
        assert_eq!((s.pairings, s.played, s.resumed, s.replayed), (3, 3, 0, 0));
        assert_eq!(events[..3], ["start 0", "random vs mcts:sims=2", "played 1-2"]);
        assert_eq!(events.len(), 7);
        for f in ["settings.json", "tournament.json", "tournament.md", "pairings/1-2.json", "pairings/1-3.json", "pairings/2-3.json"] {
            assert!(out.join(f).is_file(), "{f}");
        }
        // Every point is counted once: 2 games per pairing, 3 pairings.
        let st = &s.standings;
        assert_eq!((0..3).map(|i| st.score(i).1).sum::<u32>(), 12);
        assert!(((0..3).map(|i| st.score(i).0).sum::<f64>() - 6.0).abs() < 1e-9);

        // A pairing lost: only it is played again.
        std::fs::remove_file(out.join("pairings/2-3.json")).unwrap();
        let mut events = Vec::new();
        let s = random_field(&out, 3).unwrap().run(&|_| {}, &mut |e| {
            if let Event::Played(r) = e {
                events.push((r.i, r.j));
            }
            Ok(())
        });
        let s = s.unwrap();
        assert_eq!((s.played, s.resumed), (1, 2));
        assert_eq!(events, [(1, 2)]);

        // Other settings in the same folder: refused, naming what differs.
        let e = random_field(&out, 4).err().expect("another seed is refused");
        assert!(matches!(&e, TournamentError::Folder(m) if m.contains("different seed")), "{e}");
        let _ = std::fs::remove_dir_all(&out);
    }
}
