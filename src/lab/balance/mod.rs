//! Variant balance: an agent plays itself many times per variant (and per search budget, and
//! with rule tweaks), and the attacker/defender/draw rates come out with Wilson intervals,
//! game lengths and win reasons, beside human figures where they exist.
//!
//! A long run divides: each shard ([`Shard`]) plays its share of every row's games and keeps
//! them in a [`ShardFile`] of [`BalanceSettings`] (`shard.json`); [`merge`] sums the shards' games up into
//! the rows one whole run measures.
//!
//! What a run writes (Markdown, CSV, plots, `games.jsonl`, the HTML page) is [`render`]: kept
//! apart from measuring so that each reads on its own; it lives here rather than in
//! [`crate::report`] because it renders this module's rows, and `report` is a layer below.

use crate::arena::shard::{self, Job, Shard, ShardError, ShardFile};
use crate::arena::{self, AgentError, AgentRecord, AgentSpec, GameResult, MatchConfig};
use crate::rules::{Reason, Side, Variant};
use crate::stats::{human_figures, two_proportion_test, wilson, HumanFigures, Z95};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Arc;

pub mod render;
pub(crate) use render::{ci, pct};
pub use render::{csv, markdown, write_games, write_html, write_outputs};

/// One measured configuration: a variant (maybe tweaked) at one search budget.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct BalanceRow {
    pub variant: String,
    /// The rule changes applied (`key=value`), empty for the preset as is.
    pub changes: Vec<String>,
    pub agent: String,
    pub sims: u32,
    pub seed: u64,
    /// Distinct games scored (each move sequence once).
    pub games: u32,
    /// Games left out because they repeated an earlier game's moves exactly (absent from
    /// files written before games were counted once).
    #[serde(default)]
    pub duplicates: u32,
    pub attackers_win: u32,
    pub defenders_win: u32,
    pub draws: u32,
    pub attackers_rate: f64,
    pub defenders_rate: f64,
    pub draws_rate: f64,
    pub attackers_ci: [f64; 2],
    pub defenders_ci: [f64; 2],
    pub draws_ci: [f64; 2],
    pub mean_length: f64,
    pub median_length: f64,
    /// (first ply, last ply, games) per bin.
    pub length_histogram: Vec<(u32, u32, u32)>,
    /// Games per end reason (every reason listed, zeros included).
    pub reasons: BTreeMap<String, u32>,
    pub human: Option<HumanRef>,
    /// What was measured: the agent's spec and the sha256 of the model file it loaded (absent
    /// from files written before provenance was recorded).
    #[serde(default)]
    pub provenance: Option<AgentRecord>,
}

/// Human figures as stored in reports.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct HumanRef {
    pub defenders_win: f64,
    pub attackers_win: Option<f64>,
    pub draws: Option<f64>,
    pub source: String,
}

impl From<HumanFigures> for HumanRef {
    fn from(h: HumanFigures) -> HumanRef {
        HumanRef { defenders_win: h.defenders_win, attackers_win: h.attackers_win, draws: h.draws, source: h.source.to_string() }
    }
}

impl BalanceRow {
    /// A short name: `brandubh [king_strength=strong] @ 64 sims`.
    pub fn label(&self) -> String {
        let mut s = self.variant.clone();
        if !self.changes.is_empty() {
            let _ = write!(s, " [{}]", self.changes.join(", "));
        }
        let _ = write!(s, " @ {} sims", self.sims);
        s
    }

    /// `6 distinct games, attackers 33.3%, defenders 66.7% (95% CI 30.0-90.3), draws 0.0%`: the rates
    /// of a row's line on the terminal.
    pub fn rates_text(&self) -> String {
        format!(
            "{} distinct games, attackers {:.1}%, defenders {:.1}% (95% CI {:.1}-{:.1}), draws {:.1}%",
            self.games,
            100.0 * self.attackers_rate,
            100.0 * self.defenders_rate,
            100.0 * self.defenders_ci[0],
            100.0 * self.defenders_ci[1],
            100.0 * self.draws_rate
        )
    }

    /// The row's line on the terminal: label, [`BalanceRow::rates_text`] and mean length.
    pub fn summary_line(&self) -> String {
        let dup = match self.duplicates {
            0 => String::new(),
            d => format!(" ({d} duplicate game{} left out: add --opening-plies for variety)", if d == 1 { "" } else { "s" }),
        };
        format!("{}: {}, mean {:.1} plies{dup}", self.label(), self.rates_text(), self.mean_length)
    }

    /// Sums up finished games.
    pub fn from_games(variant: &Variant, changes: &[String], agent: &AgentSpec, seed: u64, games: &[GameResult]) -> BalanceRow {
        // Each distinct game counts once: a repeated move sequence (a deterministic agent
        // replaying a game it already played) adds no evidence, and counting it would make the
        // interval too narrow. Rules disagreements of external engines are not scored (they
        // still show in `reasons`).
        let all = crate::arena::distinct(games);
        let duplicates = (games.len() - all.len()) as u32;
        let games: Vec<&GameResult> = all.iter().copied().filter(|g| g.winner().is_some()).collect();
        let n = games.len() as u64;
        let count = |w: Option<Side>| games.iter().filter(|g| g.winner() == Some(w)).count() as u64;
        let (att, def, draw) = (count(Some(Side::Attackers)), count(Some(Side::Defenders)), count(None));
        let ci = |x: u64| {
            let (l, h) = wilson(x, n, Z95);
            [l, h]
        };
        let rate = |x: u64| x as f64 / n.max(1) as f64;
        let mut lengths: Vec<u32> = games.iter().map(|g| g.moves.len() as u32).collect();
        lengths.sort_unstable();
        let mean = lengths.iter().map(|&x| x as f64).sum::<f64>() / n.max(1) as f64;
        let median = match lengths.len() {
            0 => 0.0,
            k if k % 2 == 1 => lengths[k / 2] as f64,
            k => (lengths[k / 2 - 1] + lengths[k / 2]) as f64 / 2.0,
        };
        let mut reasons: BTreeMap<String, u32> = Reason::ALL.iter().map(|r| (r.name().to_string(), 0)).collect();
        for g in &all {
            *reasons.entry(g.ending().to_string()).or_default() += 1;
        }
        BalanceRow {
            variant: variant.name.clone(),
            changes: changes.to_vec(),
            agent: agent.to_string(),
            sims: agent.search.sims,
            seed,
            games: n as u32,
            duplicates,
            attackers_win: att as u32,
            defenders_win: def as u32,
            draws: draw as u32,
            attackers_rate: rate(att),
            defenders_rate: rate(def),
            draws_rate: rate(draw),
            attackers_ci: ci(att),
            defenders_ci: ci(def),
            draws_ci: ci(draw),
            mean_length: mean,
            median_length: median,
            length_histogram: histogram(&lengths, 12),
            reasons,
            human: if changes.is_empty() { human_figures(&variant.name).map(HumanRef::from) } else { None },
            provenance: None,
        }
    }
}

/// Equal-width bins over the observed range (at most `bins`).
fn histogram(sorted: &[u32], bins: u32) -> Vec<(u32, u32, u32)> {
    let (Some(&lo), Some(&hi)) = (sorted.first(), sorted.last()) else { return Vec::new() };
    let width = ((hi - lo) / bins + 1).max(1);
    let mut out: Vec<(u32, u32, u32)> = (0..).map(|i| (lo + i * width, lo + (i + 1) * width - 1, 0)).take_while(|b| b.0 <= hi).collect();
    for &x in sorted {
        out[((x - lo) / width) as usize].2 += 1;
    }
    out
}

/// What to measure.
pub struct BalanceJob {
    pub variant: Arc<Variant>,
    pub changes: Vec<String>,
    pub agent: AgentSpec,
}

/// The agent a balance run uses when none is given: plain MCTS with random rollouts, no
/// network, so that a rule change can be measured before any model is trained for it.
pub const DEFAULT_AGENT: &str = "mcts:sims=200";

/// Plays `games` self-play games for each job (agent against itself, in parallel; with a
/// shard, only its games) and sums them up. `on_game` is called as each game finishes.
pub fn measure(
    jobs: &[BalanceJob],
    games: usize,
    seed: u64,
    opening_plies: u32,
    shard: Option<Shard>,
    on_game: &(dyn Fn(&GameResult) + Sync),
) -> Result<Vec<BalanceRow>, AgentError> {
    measure_with_games(jobs, games, seed, opening_plies, shard, on_game).map(|(rows, _)| rows)
}

/// [`measure`], keeping every job's games too (for [`sample_games`] and a [`ShardFile`]).
/// Each row records its agent's [`AgentRecord`] (the model hashed before the games and
/// checked after them).
pub fn measure_with_games(
    jobs: &[BalanceJob],
    games: usize,
    seed: u64,
    opening_plies: u32,
    shard: Option<Shard>,
    on_game: &(dyn Fn(&GameResult) + Sync),
) -> Result<(Vec<BalanceRow>, Vec<Vec<GameResult>>), AgentError> {
    let mut rows = Vec::with_capacity(jobs.len());
    let mut all = Vec::with_capacity(jobs.len());
    for job in jobs {
        let record = AgentRecord::of(&job.agent)?;
        let cfg = MatchConfig { games, seed, opening_plies, shard, a_side: None };
        let results = arena::play_match(&job.variant, &job.agent, &job.agent, &cfg, on_game)?;
        record.check_unchanged(&job.agent).map_err(|message| AgentError::Spec { spec: job.agent.to_string(), message })?;
        let mut row = BalanceRow::from_games(&job.variant, &job.changes, &job.agent, seed, &results);
        row.provenance = Some(record);
        rows.push(row);
        all.push(results);
    }
    Ok((rows, all))
}

/// What every shard of one balance run shares (the settings of its [`ShardFile`]): the games
/// per row, the seed, the opening plies and, per row, what a merge needs to sum the row up
/// again (its variant, changes, agent and the agent's [`AgentRecord`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BalanceSettings {
    /// Games per row in the whole run.
    pub games: usize,
    pub seed: u64,
    pub opening_plies: u32,
    pub rows: Vec<RowSettings>,
}

/// One row of [`BalanceSettings`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RowSettings {
    /// The variant as played (rule changes applied), as TOML.
    pub variant_toml: String,
    pub changes: Vec<String>,
    /// The agent's spec ([`AgentSpec`]'s canonical text).
    pub agent: String,
    pub provenance: Option<AgentRecord>,
}

impl Job for BalanceSettings {
    const KIND: &'static str = "balance";

    fn lists(&self) -> Vec<(String, usize)> {
        (0..self.rows.len()).map(|r| (format!("row {}", r + 1), self.games)).collect()
    }
}

impl BalanceSettings {
    /// The settings of a run of `jobs` (with its `rows`, for their provenance).
    pub fn new(games: usize, seed: u64, opening_plies: u32, jobs: &[BalanceJob], rows: &[BalanceRow]) -> BalanceSettings {
        let rows = jobs
            .iter()
            .zip(rows)
            .map(|(job, row)| RowSettings {
                variant_toml: job.variant.to_toml(),
                changes: job.changes.clone(),
                agent: job.agent.to_string(),
                provenance: row.provenance.clone(),
            })
            .collect();
        BalanceSettings { games, seed, opening_plies, rows }
    }
}

/// A whole balance run put back together from its shards' files (`source`, file): the jobs,
/// the rows and every row's games, as [`measure_with_games`] returns them for one whole run.
///
/// # Errors
/// Shards that do not merge ([`shard::merge`]), or a variant, agent or game that does not read
/// back (one line naming the file).
#[allow(clippy::type_complexity)]
pub fn merge(parts: Vec<(String, ShardFile<BalanceSettings>)>) -> Result<(Vec<BalanceJob>, Vec<BalanceRow>, Vec<Vec<GameResult>>), ShardError> {
    let source = parts.first().map(|(s, _)| s.clone()).unwrap_or_default();
    let (settings, lists) = shard::merge(parts)?;
    let bad = |message: String| ShardError::Read { file: source.clone(), message };
    let (mut jobs, mut rows, mut all) = (Vec::new(), Vec::new(), Vec::new());
    for (row, records) in settings.rows.iter().zip(lists) {
        let variant = Arc::new(Variant::from_toml_str(&row.variant_toml, "variant_toml").map_err(|e| bad(e.to_string()))?);
        let agent: AgentSpec = row.agent.parse().map_err(|e: AgentError| bad(e.to_string()))?;
        let games = records.iter().map(|g| g.to_result(variant.geometry)).collect::<Result<Vec<_>, _>>().map_err(bad)?;
        let mut summed = BalanceRow::from_games(&variant, &row.changes, &agent, settings.seed, &games);
        summed.provenance = row.provenance.clone();
        jobs.push(BalanceJob { variant, changes: row.changes.clone(), agent });
        rows.push(summed);
        all.push(games);
    }
    Ok((jobs, rows, all))
}

/// The defenders' rates of one pair of rows of two balance runs, compared.
#[derive(Clone, Debug, Serialize)]
pub struct Comparison {
    pub a: String,
    pub b: String,
    /// How the rows were paired: `variant, changes, sims`, `variant, sims` or `order`.
    pub paired_by: &'static str,
    pub a_defenders_rate: f64,
    pub b_defenders_rate: f64,
    pub difference: f64,
    pub z: f64,
    pub p_value: f64,
    pub significant: bool,
}

/// Compares the defenders' rate of matching rows of two balance runs. Rows pair when they
/// have the same variant, rule changes and budget. When no row pairs that way (typically a
/// run of the preset against a run with a `--set` change), rows with the same variant and
/// budget pair; when none of those either, the rows pair in order.
pub fn compare(a: &[BalanceRow], b: &[BalanceRow]) -> Vec<Comparison> {
    let pair = |x: &BalanceRow, y: &BalanceRow, paired_by: &'static str| {
        let (z, p) = two_proportion_test(x.defenders_win as u64, x.games as u64, y.defenders_win as u64, y.games as u64);
        Comparison {
            a: x.label(),
            b: y.label(),
            paired_by,
            a_defenders_rate: x.defenders_rate,
            b_defenders_rate: y.defenders_rate,
            difference: x.defenders_rate - y.defenders_rate,
            z,
            p_value: p,
            significant: p < 0.05,
        }
    };
    type SameRow = fn(&BalanceRow, &BalanceRow) -> bool;
    let keys: [(&'static str, SameRow); 2] = [
        ("variant, changes, sims", |x, y| x.variant == y.variant && x.changes == y.changes && x.sims == y.sims),
        ("variant, sims", |x, y| x.variant == y.variant && x.sims == y.sims),
    ];
    for (name, same) in keys {
        let paired: Vec<Comparison> = a.iter().filter_map(|x| b.iter().find(|y| same(x, y)).map(|y| pair(x, y, name))).collect();
        if !paired.is_empty() {
            return paired;
        }
    }
    a.iter().zip(b).map(|(x, y)| pair(x, y, "order")).collect()
}

/// Games of a balance row kept for the game viewer (a line of `games.jsonl`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct SampleGame {
    /// 1-based row of `balance.json`.
    pub row: usize,
    /// The row's label.
    pub label: String,
    /// 1-based game of the row.
    pub game: usize,
    /// How it ended: a rules reason (`corner_escape`, ...), `forfeit` or `disagreement`.
    pub ending: String,
    /// The end in words (`defenders win (corner_escape)`, or the fault).
    pub end: String,
    /// The moves from the start, space separated.
    pub moves: String,
    /// The variant as played (rule changes applied), as TOML, so the game replays anywhere.
    pub variant_toml: String,
}

/// Games kept per row by [`sample_games`] (at least one of each way a row's games ended).
pub const SAMPLE_PER_ROW: usize = 8;

/// Up to `per_row` games of each row (more when a row ended in more ways): first one game of
/// each way its games ended (escape, king capture, fort, encirclement, each kind of draw,
/// forfeit), then the earliest others; listed in game order.
pub fn sample_games(jobs: &[BalanceJob], rows: &[BalanceRow], results: &[Vec<GameResult>], per_row: usize) -> Vec<SampleGame> {
    let mut out = Vec::new();
    for (i, ((job, row), games)) in jobs.iter().zip(rows).zip(results).enumerate() {
        let mut endings: Vec<&str> = Reason::ALL.iter().map(|r| r.name()).collect();
        endings.extend(["forfeit", "void", "disagreement"]);
        let mut picked: Vec<usize> = endings.iter().filter_map(|e| games.iter().position(|g| g.ending() == *e)).collect();
        for k in 0..games.len() {
            if picked.len() >= per_row.max(1) {
                break;
            }
            if !picked.contains(&k) {
                picked.push(k);
            }
        }
        picked.sort_unstable();
        let toml = job.variant.to_toml();
        for k in picked {
            let g = &games[k];
            let end = match (&g.outcome, &g.fault) {
                (Some(o), _) => format!("{} ({})", o.status_name().replace('_', " "), o.reason),
                (None, Some(f)) => f.describe(),
                (None, None) => "unfinished".into(),
            };
            out.push(SampleGame {
                row: i + 1,
                label: row.label(),
                game: g.index + 1,
                ending: g.ending().to_string(),
                end,
                moves: g.moves.iter().map(|m| m.to_string()).collect::<Vec<_>>().join(" "),
                variant_toml: toml.clone(),
            });
        }
    }
    out
}
