//! A match between two agents as a job (`tafl-lab match`): play it (or one shard of it), stop
//! early on an SPRT, keep a record file of the games finished so far, check that no model
//! changed while the games were played, and put a match's shards back together.
//!
//! The games come from [`arena::play_match_until`]; what a match measured is a [`Played`],
//! which writes the JSON `match --json` prints. The command line parses the arguments, draws
//! the progress bar and prints the text lines.

use crate::arena::shard::{self, Job, Shard, ShardError, ShardFile};
use crate::arena::{self, AgentError, AgentRecord, AgentSpec, GameResult, MatchConfig, MatchSummary, Think};
use crate::rules::Variant;
use crate::stats::{elo_interval, Sprt, SprtDecision};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Why a match stopped without a result. Each is one line.
#[derive(Debug, thiserror::Error)]
pub enum MatchError {
    /// An agent that cannot be built, or whose model cannot be hashed (`flag` names it).
    #[error("{flag}: {source}")]
    Agent { flag: &'static str, source: AgentError },
    /// An agent's model changed while its games were played.
    #[error("{flag} {spec}: {message}")]
    Changed { flag: &'static str, spec: String, message: String },
    /// The games could not be played (an agent that cannot be built).
    #[error(transparent)]
    Play(#[from] AgentError),
    /// The record file cannot be written.
    #[error("--record {path}: {message}")]
    Record { path: String, message: String },
    /// A match of one side only, with no game in which agent A has that side.
    #[error("--a-side defenders: --games {0} has no game in which A defends (A defends in the odd-numbered games)")]
    NoGames(usize),
}

/// A match to play: the variant (as the user gave it, for the record's `# variant:` line, and
/// read), both agents, the games, and optionally an SPRT and a record file.
pub struct MatchJob {
    pub variant_spec: String,
    pub variant: Arc<Variant>,
    pub a: AgentSpec,
    pub b: AgentSpec,
    pub config: MatchConfig,
    pub sprt: Option<Sprt>,
    pub record: Option<PathBuf>,
}

/// A finished match (or shard of one): what was played and by whom.
#[derive(Clone, Debug)]
pub struct Played {
    pub variant: String,
    pub a: String,
    pub b: String,
    pub a_record: AgentRecord,
    pub b_record: AgentRecord,
    pub games: Vec<GameResult>,
    pub sprt: Option<Sprt>,
    pub seed: u64,
    pub seconds: f64,
    /// The agents' time on their moves over all games (of all shards, when merged; `None`
    /// when a merged shard was printed before times were kept).
    pub think: Option<Think>,
}

/// What every shard of one match shares (the settings of its [`ShardFile`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MatchSettings {
    pub variant: String,
    /// The variant in full, so that a changed TOML file under the same name is noticed.
    pub variant_toml: String,
    pub a: AgentRecord,
    pub b: AgentRecord,
    /// Games in the whole match.
    pub games: usize,
    pub seed: u64,
    pub opening_plies: u32,
}

impl Job for MatchSettings {
    const KIND: &'static str = "match";

    fn lists(&self) -> Vec<(String, usize)> {
        vec![("the match".into(), self.games)]
    }
}

/// Plays `job`; `on_game` sees each game as it finishes. With a record file, the games
/// finished so far are rewritten to it after each game, so a match stopped early keeps every
/// game it finished.
///
/// # Errors
/// An agent that cannot be built or whose model changed during the games, a record file that
/// cannot be written, or a one-sided match with no game ([`MatchError`]).
pub fn play(job: &MatchJob, on_game: &(dyn Fn(&GameResult) + Sync)) -> Result<Played, MatchError> {
    if job.config.indices().is_empty() {
        return Err(MatchError::NoGames(job.config.games));
    }
    // What the result measured: each agent's spec and the sha256 of the model file it loads,
    // hashed once here and checked again after the games.
    let a_record = AgentRecord::of(&job.a).map_err(|source| MatchError::Agent { flag: "--a", source })?;
    let b_record = AgentRecord::of(&job.b).map_err(|source| MatchError::Agent { flag: "--b", source })?;
    let finished = Mutex::new((Vec::<GameResult>::new(), None::<MatchError>));
    let t = Instant::now();
    let decided = |games: &[GameResult]| {
        job.sprt.is_some_and(|s| {
            let w = MatchSummary::from_games(games).a_total();
            s.decide(w.win as u64, w.draw as u64, w.loss as u64) != SprtDecision::Continue
        })
    };
    let games = arena::play_match_until(
        &job.variant,
        &job.a,
        &job.b,
        &job.config,
        &|g| {
            on_game(g);
            if let Some(path) = &job.record {
                let mut f = finished.lock().expect("not poisoned");
                f.0.push(g.clone());
                f.0.sort_by_key(|g| g.index);
                if let Err(e) = write_record(path, &job.variant_spec, &job.a, &f.0) {
                    f.1.get_or_insert(e);
                }
            }
        },
        &decided,
    )?;
    if let Some(e) = finished.into_inner().expect("not poisoned").1 {
        return Err(e);
    }
    for (flag, record, spec) in [("--a", &a_record, &job.a), ("--b", &b_record, &job.b)] {
        record.check_unchanged(spec).map_err(|message| MatchError::Changed { flag, spec: spec.to_string(), message })?;
    }
    if let Some(path) = &job.record {
        write_record(path, &job.variant_spec, &job.a, &games)?;
    }
    Ok(Played {
        variant: job.variant.name.clone(),
        a: job.a.to_string(),
        b: job.b.to_string(),
        a_record,
        b_record,
        sprt: job.sprt,
        seed: job.config.seed,
        seconds: t.elapsed().as_secs_f64(),
        think: Some(Think::total(games.iter().map(|g| &g.think))),
        games,
    })
}

/// Writes `games` as a record: a `# variant:` line (the variant as given: a preset name, TOML
/// path or rules string, so that `view` and `replay` can read the record without being told),
/// then per game a comment line with A's side and the end, and the moves.
fn write_record(path: &Path, variant: &str, a: &AgentSpec, games: &[GameResult]) -> Result<(), MatchError> {
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
    crate::fsio::atomic_write(path, text.as_bytes()).map_err(|e| MatchError::Record { path: path.display().to_string(), message: e.to_string() })
}

impl Played {
    /// The shard file of `shard` of the match `job` whose shard's games these are.
    pub fn shard_file(&self, shard: Shard, job: &MatchJob) -> ShardFile<MatchSettings> {
        let settings = MatchSettings {
            variant: self.variant.clone(),
            variant_toml: job.variant.to_toml(),
            a: self.a_record.clone(),
            b: self.b_record.clone(),
            games: job.config.games,
            seed: self.seed,
            opening_plies: job.config.opening_plies,
        };
        ShardFile::new(shard, settings, [self.games.as_slice()])
    }

    /// The match as `match --json` prints it: the summary, A's Elo interval, the SPRT's
    /// state, every fault with its game's moves, the seed and the time.
    pub fn to_json(&self) -> Value {
        let games = &self.games;
        let s = MatchSummary::from_games(games);
        let total = s.a_total();
        let elo = elo_interval(total.win as u64, total.draw as u64, total.loss as u64);
        let sprt = self.sprt.map(|sp| {
            let (w, d, l) = (total.win as u64, total.draw as u64, total.loss as u64);
            let (lower, upper) = sp.bounds();
            json!({"elo0": sp.elo0, "elo1": sp.elo1, "llr": sp.llr(w, d, l), "lower": lower, "upper": upper, "decision": sp.decide(w, d, l)})
        });
        let faults: Vec<Value> = games
            .iter()
            .filter_map(|g| {
                let f = g.fault.as_ref()?;
                let agent = if f.side() == g.a_side { "a" } else { "b" };
                let moves: Vec<String> = g.moves.iter().map(|m| m.to_string()).collect();
                Some(json!({"game": g.index + 1, "a_side": g.a_side.name(), "agent": agent, "fault": f, "moves": moves}))
            })
            .collect();
        json!({
            "variant": self.variant,
            "a": self.a,
            "b": self.b,
            "provenance": {"a": self.a_record, "b": self.b_record},
            "games": s.games,
            "distinct_games": arena::distinct(games).len(),
            "a_score": s.a_score,
            "a_as_attackers": s.a_as_attackers,
            "a_as_defenders": s.a_as_defenders,
            "a_total": s.a_total(),
            "mean_plies": s.mean_plies,
            "forfeits": s.forfeits,
            "disagreements": s.disagreements,
            "voids": s.voids,
            "faults_by_agent": {"a": s.a_faults, "b": s.b_faults},
            "faults": faults,
            "elo": elo,
            "sprt": sprt,
            "seed": self.seed,
            "seconds": self.seconds,
            "think": self.think_json(),
        })
    }

    /// Each agent's moves, seconds and mean seconds a move (what an equal-time match is
    /// checked by): the totals read back when shards merge.
    fn think_json(&self) -> Value {
        let Some(think) = self.think else { return Value::Null };
        let (a, b) = think.per_move();
        let mut v = serde_json::to_value(think).expect("plain numbers");
        v["a_seconds_per_move"] = json!(a);
        v["b_seconds_per_move"] = json!(b);
        v
    }
}

/// Reads the shard file in a shard's printed JSON (its `shard` field); `source` names it.
///
/// # Errors
/// Not JSON, no `shard` field, or not a match's shard file ([`ShardError::NotShard`]).
pub fn read_shard(source: &str, text: &str) -> Result<(ShardFile<MatchSettings>, f64, Option<Think>), ShardError> {
    let mut v = shard::parse(source, text)?;
    let seconds = v["seconds"].as_f64().unwrap_or(0.0);
    let o = v.as_object_mut().ok_or_else(|| ShardError::NotShard { file: source.into(), why: "not a JSON object".into() })?;
    // A shard printed before think times were kept has none (`None`).
    let think = match o.remove("think") {
        None | Some(Value::Null) => None,
        Some(t) => Some(serde_json::from_value(t).map_err(|e| ShardError::Read { file: source.into(), message: format!("think: {e}") })?),
    };
    let file = o.remove("shard").ok_or_else(|| ShardError::NotShard { file: source.into(), why: "no shard field".into() })?;
    Ok((ShardFile::from_json(source, file)?, seconds, think))
}

/// A whole match put back together from its shards' files (`source`, file, the shard's
/// seconds, its agents' think times): what one whole run of the match plays, its `seconds`
/// and think times the shards' totals (no think times when a shard has none: a sum of some
/// shards would pass for the whole match's).
///
/// # Errors
/// Shards that do not merge ([`shard::merge`]), or a variant or game that does not read back
/// (naming the file).
pub fn merge(parts: Vec<(String, ShardFile<MatchSettings>, f64, Option<Think>)>) -> Result<Played, ShardError> {
    let seconds = parts.iter().map(|p| p.2).sum();
    let think = parts.iter().map(|p| p.3).collect::<Option<Vec<Think>>>().map(|t| Think::total(&t));
    let source = parts.first().map(|p| p.0.clone()).unwrap_or_default();
    let (settings, lists) = shard::merge(parts.into_iter().map(|(s, f, _, _)| (s, f)).collect())?;
    let bad = |message: String| ShardError::Read { file: source.clone(), message };
    let variant = Variant::from_toml_str(&settings.variant_toml, "variant_toml").map_err(|e| bad(e.to_string()))?;
    let records = lists.into_iter().next().unwrap_or_default();
    let games = records.iter().map(|g| g.to_result(variant.geometry)).collect::<Result<Vec<_>, _>>().map_err(bad)?;
    Ok(Played {
        variant: settings.variant,
        a: settings.a.spec.clone(),
        b: settings.b.spec.clone(),
        a_record: settings.a,
        b_record: settings.b,
        games,
        sprt: None,
        seed: settings.seed,
        seconds,
        think,
    })
}
