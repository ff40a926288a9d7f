//! Balance against strength: the checkpoints of one training run, each playing itself for
//! side rates, and a ladder of matches between neighbouring checkpoints for their Elo.
//!
//! Why: a balance table of one agent measures that agent as much as the variant (weak agents
//! make tafl look like a defenders' game). Following the side rates as the same network
//! grows stronger shows which way the balance moves with skill, which is the question a rule
//! designer asks. Elo comes from one joint Bradley-Terry fit over all ladder matches
//! (`stats::elo`), shifted so the first checkpoint is 0: each checkpoint plays its
//! neighbours, and the fit chains the gaps with honest intervals.
//!
//! A long ladder divides like a balance run: each shard plays its share of every self-play
//! and every match ([`play`]) and keeps the games in a [`ShardFile`] of [`LadderSettings`] (`shard.json`);
//! [`merge`] sums them up into the ladder one whole run measures.

use super::balance::{ci, pct, BalanceJob, BalanceRow, HumanRef};
use crate::arena::shard::{self, Job, Shard, ShardError, ShardFile};
use crate::arena::{self, AgentError, AgentRecord, AgentSpec, GameResult, MatchConfig, MatchSummary, Wdl};
use crate::fsio::atomic_write;
use crate::report::plot::{self, Chart, PlotError, Series};
use crate::rules::Variant;
use crate::stats::elo::{fit_ratings, FitError, PairResult};
use crate::stats::EloEstimate;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// One checkpoint on the ladder.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct LadderRow {
    pub generation: u64,
    /// Elo against the first checkpoint (0), from the joint fit, with its 95% interval.
    pub elo: f64,
    pub elo_low: f64,
    pub elo_high: f64,
    /// Self-play of this checkpoint (agent against itself).
    pub balance: BalanceRow,
}

impl LadderRow {
    /// `-159 (-505 to +187)`: the Elo against the first checkpoint with its interval.
    pub fn elo_text(&self) -> String {
        crate::stats::EloEstimate { elo: self.elo, low: self.elo_low, high: self.elo_high }.to_string()
    }

    /// The row's line on the terminal: generation, Elo and the self-play rates.
    pub fn summary_line(&self) -> String {
        format!("generation {}: Elo {}; {}", self.generation, self.elo_text(), self.balance.rates_text())
    }
}

/// A ladder match: checkpoint `a` against checkpoint `b` (generations), A's W-D-L.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct LadderMatch {
    pub a: u64,
    pub b: u64,
    pub wins: u32,
    pub draws: u32,
    pub losses: u32,
}

impl LadderMatch {
    /// A's wins, draws and losses.
    pub fn wdl(&self) -> Wdl {
        Wdl { win: self.wins, draw: self.draws, loss: self.losses }
    }
}

/// A whole ladder, as saved in `ladder.json`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Ladder {
    pub variant: String,
    pub run_dir: String,
    pub agent: String,
    pub rows: Vec<LadderRow>,
    pub matches: Vec<LadderMatch>,
    pub human: Option<HumanRef>,
}

/// Why a ladder could not be measured.
#[derive(Debug, thiserror::Error)]
pub enum LadderError {
    #[error(transparent)]
    Agent(#[from] AgentError),
    /// The joint Elo fit failed: no ratings rather than ratings of 0 that look measured.
    #[error("ladder Elo fit over {matches} matches: {source}")]
    Fit { matches: usize, source: FitError },
}

/// What to measure: `checkpoints` (generation, model file) in order, `agent` the spec each
/// model plays with (its model replaced).
pub struct LadderJob<'a> {
    pub variant: Arc<Variant>,
    pub run_dir: &'a Path,
    pub checkpoints: Vec<(u64, PathBuf)>,
    pub agent: AgentSpec,
    /// Self-play games per checkpoint.
    pub games: usize,
    /// Games of each match between neighbours (0: no ladder, Elo left at 0).
    pub match_games: usize,
    pub seed: u64,
    pub opening_plies: u32,
}

/// The generations to put on a ladder: every `every`th of `available` (sorted), always with
/// the first and the last.
pub fn pick_generations(available: &[u64], every: u64) -> Vec<u64> {
    let every = every.max(1);
    let mut out: Vec<u64> = available.iter().copied().enumerate().filter(|(i, _)| *i as u64 % every == 0).map(|(_, g)| g).collect();
    if let Some(&last) = available.last() {
        if out.last() != Some(&last) {
            out.push(last);
        }
    }
    out
}

/// Plays the ladder: self-play per checkpoint, then a match between each pair of neighbours;
/// `on_game` is called as each game finishes.
///
/// # Errors
/// An agent that cannot be built, or a joint Elo fit that fails ([`LadderError::Fit`]).
pub fn measure(job: &LadderJob<'_>, on_game: &(dyn Fn(&GameResult) + Sync)) -> Result<Ladder, LadderError> {
    let games = play(job, None, on_game)?;
    sum_up(job.variant.clone(), &job.run_dir.display().to_string(), &job.agent.to_string(), job.seed, job.match_games > 0, games)
}

/// The games of a ladder (or of one shard of it), before they are summed up.
pub struct LadderGames {
    /// Per checkpoint: its generation, its agent, the agent's record and its self-play games.
    pub checkpoints: Vec<(u64, AgentSpec, AgentRecord, Vec<GameResult>)>,
    /// Per match: the newer checkpoint (A), the older one (B) and the games.
    pub matches: Vec<(u64, u64, Vec<GameResult>)>,
}

/// Plays a ladder's games (with a shard, only its share of each self-play and match).
///
/// # Errors
/// An agent that cannot be built, or a model that changed while its games were played.
pub fn play(job: &LadderJob<'_>, shard: Option<Shard>, on_game: &(dyn Fn(&GameResult) + Sync)) -> Result<LadderGames, AgentError> {
    let spec = |path: &Path| AgentSpec { model: Some(path.to_path_buf()), ..job.agent.clone() };
    let mut checkpoints = Vec::new();
    for (g, path) in &job.checkpoints {
        let agent = spec(path);
        let b = BalanceJob { variant: job.variant.clone(), changes: Vec::new(), agent };
        let (mut rows, mut games) = super::balance::measure_with_games(std::slice::from_ref(&b), job.games, job.seed, job.opening_plies, shard, on_game)?;
        let record = rows.remove(0).provenance.expect("measure records the agent");
        checkpoints.push((*g, b.agent, record, games.remove(0)));
    }
    let mut matches = Vec::new();
    if job.match_games > 0 {
        for w in job.checkpoints.windows(2) {
            let cfg = MatchConfig { games: job.match_games, seed: job.seed ^ w[1].0, opening_plies: job.opening_plies.max(2), shard, a_side: None };
            matches.push((w[1].0, w[0].0, arena::play_match(&job.variant, &spec(&w[1].1), &spec(&w[0].1), &cfg, on_game)?));
        }
    }
    Ok(LadderGames { checkpoints, matches })
}

/// The ladder of a whole run's games: each checkpoint's side rates, the matches' W-D-L and,
/// when `elo` (the ladder plays matches), the joint Elo fit.
///
/// # Errors
/// A joint Elo fit that fails ([`LadderError::Fit`]).
pub fn sum_up(variant: Arc<Variant>, run_dir: &str, agent: &str, seed: u64, elo: bool, games: LadderGames) -> Result<Ladder, LadderError> {
    let mut rows = Vec::new();
    for (g, spec, record, results) in &games.checkpoints {
        let mut row = BalanceRow::from_games(&variant, &[], spec, seed, results);
        row.provenance = Some(record.clone());
        rows.push(LadderRow { generation: *g, elo: 0.0, elo_low: 0.0, elo_high: 0.0, balance: row });
    }
    let mut matches = Vec::new();
    for (a, b, results) in &games.matches {
        let t = MatchSummary::from_games(results).a_total();
        matches.push(LadderMatch { a: *a, b: *b, wins: t.win, draws: t.draw, losses: t.loss });
    }
    if elo {
        fit(&mut rows, &matches)?;
    }
    let human = rows.first().and_then(|r| r.balance.human.clone());
    Ok(Ladder { variant: variant.name.clone(), run_dir: run_dir.to_string(), agent: agent.to_string(), rows, matches, human })
}

/// What every shard of one ladder shares (the settings of its [`ShardFile`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LadderSettings {
    /// The variant as TOML.
    pub variant_toml: String,
    pub run_dir: String,
    /// The spec each checkpoint plays with (without its model).
    pub agent: String,
    /// Self-play games per checkpoint and games per match, in the whole ladder.
    pub games: usize,
    pub match_games: usize,
    pub seed: u64,
    pub opening_plies: u32,
    pub checkpoints: Vec<CheckpointSettings>,
    /// The matches between neighbours: generation `a` (A) against `b`.
    pub matches: Vec<(u64, u64)>,
}

/// One checkpoint of [`LadderSettings`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CheckpointSettings {
    pub generation: u64,
    /// Its agent's spec (canonical text, with its model).
    pub agent: String,
    pub provenance: AgentRecord,
}

impl Job for LadderSettings {
    const KIND: &'static str = "ladder";

    /// Each checkpoint's self-play, then each match.
    fn lists(&self) -> Vec<(String, usize)> {
        let selfplay = self.checkpoints.iter().map(|c| (format!("generation {}'s self-play", c.generation), self.games));
        selfplay.chain(self.matches.iter().map(|(a, b)| (format!("match {a} vs {b}"), self.match_games))).collect()
    }
}

impl LadderSettings {
    /// The settings of `job`, whose games (or a shard's) are `games`.
    pub fn new(job: &LadderJob<'_>, games: &LadderGames) -> LadderSettings {
        LadderSettings {
            variant_toml: job.variant.to_toml(),
            run_dir: job.run_dir.display().to_string(),
            agent: job.agent.to_string(),
            games: job.games,
            match_games: job.match_games,
            seed: job.seed,
            opening_plies: job.opening_plies,
            checkpoints: games
                .checkpoints
                .iter()
                .map(|(generation, spec, record, _)| CheckpointSettings { generation: *generation, agent: spec.to_string(), provenance: record.clone() })
                .collect(),
            matches: games.matches.iter().map(|(a, b, _)| (*a, *b)).collect(),
        }
    }
}

impl LadderGames {
    /// The shard file of `shard` of `job`, whose shard's games these are.
    pub fn shard_file(&self, shard: Shard, job: &LadderJob<'_>) -> ShardFile<LadderSettings> {
        let lists = self.checkpoints.iter().map(|c| c.3.as_slice()).chain(self.matches.iter().map(|m| m.2.as_slice()));
        ShardFile::new(shard, LadderSettings::new(job, self), lists)
    }
}

/// Why shards of a ladder do not merge.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    #[error(transparent)]
    Shard(#[from] ShardError),
    #[error(transparent)]
    Ladder(#[from] LadderError),
}

/// A whole ladder put back together from its shards' files (`source`, file), as [`measure`]
/// returns it for one whole run.
///
/// # Errors
/// Shards that do not merge ([`shard::merge`]), a variant, agent or game that does not read
/// back (one line naming the file), or a joint Elo fit that fails.
pub fn merge(parts: Vec<(String, ShardFile<LadderSettings>)>) -> Result<Ladder, MergeError> {
    let source = parts.first().map(|(s, _)| s.clone()).unwrap_or_default();
    let (settings, lists) = shard::merge(parts)?;
    let bad = |message: String| ShardError::Read { file: source.clone(), message };
    let variant = Arc::new(Variant::from_toml_str(&settings.variant_toml, "variant_toml").map_err(|e| bad(e.to_string()))?);
    let mut lists = lists.into_iter().map(|records| records.iter().map(|g| g.to_result(variant.geometry)).collect::<Result<Vec<_>, _>>().map_err(bad));
    let mut games = LadderGames { checkpoints: Vec::new(), matches: Vec::new() };
    for c in &settings.checkpoints {
        let spec: AgentSpec = c.agent.parse().map_err(|e: AgentError| bad(e.to_string()))?;
        games.checkpoints.push((c.generation, spec, c.provenance.clone(), lists.next().expect("a list per checkpoint")?));
    }
    for &(a, b) in &settings.matches {
        games.matches.push((a, b, lists.next().expect("a list per match")?));
    }
    Ok(sum_up(variant, &settings.run_dir, &settings.agent, settings.seed, settings.match_games > 0, games)?)
}

/// Fills each row's Elo from [`ratings`].
fn fit(rows: &mut [LadderRow], matches: &[LadderMatch]) -> Result<(), LadderError> {
    let generations: Vec<u64> = rows.iter().map(|r| r.generation).collect();
    for (row, e) in rows.iter_mut().zip(ratings(&generations, matches)?) {
        (row.elo, row.elo_low, row.elo_high) = (e.elo, e.low, e.high);
    }
    Ok(())
}

/// Each generation's Elo from one joint fit of `matches` (one virtual draw per pair as the
/// prior, so a clean sweep still has a finite rating), shifted so the first is 0 (with an
/// interval of 0 to 0). A fit that fails is an error, never ratings left at 0.
fn ratings(generations: &[u64], matches: &[LadderMatch]) -> Result<Vec<EloEstimate>, LadderError> {
    let index = |g: u64| generations.iter().position(|&x| x == g).expect("matches are between rows");
    let results: Vec<PairResult> = matches.iter().map(|m| PairResult::new(index(m.a), index(m.b), m.wins, m.draws, m.losses)).collect();
    let f = fit_ratings(generations.len(), &results, 1.0).map_err(|source| LadderError::Fit { matches: matches.len(), source })?;
    Ok((0..generations.len())
        .map(|i| {
            let d = f.difference(i, 0);
            if i == 0 {
                EloEstimate { elo: d.elo, low: 0.0, high: 0.0 }
            } else {
                d
            }
        })
        .collect())
}

/// The Markdown table of a ladder.
pub fn markdown(l: &Ladder, command: &str) -> String {
    let mut s = format!("# Balance against strength: {}\n\nRun `{}`, agent `{}`. Command: `{command}`\n\n", l.variant, l.run_dir, l.agent);
    s.push_str("| generation | Elo (95% CI) vs the first | games | attackers | defenders (95% CI) | draws | mean plies |\n|---|---|---|---|---|---|---|\n");
    for r in &l.rows {
        let b = &r.balance;
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} ({}) | {} | {:.1} |",
            r.generation,
            r.elo_text(),
            b.games,
            pct(b.attackers_rate),
            pct(b.defenders_rate),
            ci(b.defenders_ci),
            pct(b.draws_rate),
            b.mean_length
        );
    }
    if let Some(h) = &l.human {
        let _ = writeln!(s, "\nHuman play: defenders win {:.1}% ({}).", 100.0 * h.defenders_win, h.source);
    }
    if !l.matches.is_empty() {
        s.push_str("\nLadder matches (newer checkpoint first, its W-D-L):\n\n");
        for m in &l.matches {
            let _ = writeln!(s, "- {} vs {}: {}", m.a, m.b, m.wdl());
        }
    }
    s
}

/// Writes `ladder.json`, `ladder.md` and the plot of the defenders' rate against Elo (with
/// the human rate as a flat line) into `dir`; returns the files.
pub fn write_outputs(dir: &Path, l: &Ladder, command: &str) -> Result<Vec<PathBuf>, PlotError> {
    let io = |p: &Path, e: std::io::Error| PlotError { path: p.display().to_string(), message: e.to_string() };
    std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
    let json = dir.join("ladder.json");
    atomic_write(&json, (serde_json::to_string_pretty(l).expect("serializes") + "\n").as_bytes()).map_err(|e| io(&json, e))?;
    let md = dir.join("ladder.md");
    atomic_write(&md, markdown(l, command).as_bytes()).map_err(|e| io(&md, e))?;
    let mut files = vec![json, md];
    let x = |r: &LadderRow| if l.matches.is_empty() { r.generation as f64 } else { r.elo };
    // Drawn left to right: a later checkpoint may rate below an earlier one.
    let mut by_x: Vec<&LadderRow> = l.rows.iter().collect();
    by_x.sort_by(|a, b| x(a).total_cmp(&x(b)));
    let mut series = vec![Series {
        name: "defenders' rate in self-play".into(),
        points: by_x.iter().map(|r| (x(r), r.balance.defenders_rate)).collect(),
        errors: by_x.iter().map(|r| (r.balance.defenders_ci[0], r.balance.defenders_ci[1])).collect(),
    }];
    if let (Some(h), Some(first), Some(last)) = (&l.human, by_x.first(), by_x.last()) {
        let (lo, hi) = (x(first).min(x(last)), x(first).max(x(last)));
        series.push(Series {
            name: format!("human play ({})", h.source),
            points: vec![(lo, h.defenders_win), (hi.max(lo + 1.0), h.defenders_win)],
            errors: Vec::new(),
        });
    }
    let x_label = if l.matches.is_empty() { "generation" } else { "Elo against the first checkpoint" };
    let chart = Chart::Lines { x_label, y_label: "defenders win", series: &series, y_range: Some((0.0, 1.0)), x_log2: false };
    files.extend(plot::write(&dir.join("ladder"), &format!("{}: defenders' rate as the network grows stronger", l.variant), &chart)?);
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_every_nth_with_the_last() {
        assert_eq!(pick_generations(&[0, 1, 2, 3, 4, 5, 6], 3), vec![0, 3, 6]);
        assert_eq!(pick_generations(&[0, 1, 2, 3, 4, 5], 3), vec![0, 3, 5]);
        assert_eq!(pick_generations(&[2, 4], 0), vec![2, 4]);
        assert!(pick_generations(&[], 2).is_empty());
    }

    #[test]
    fn a_row_reads_alike_on_the_terminal_and_in_markdown() {
        let v = Variant::from_spec("brandubh").unwrap();
        let mut balance = BalanceRow::from_games(&v, &[], &"random".parse().unwrap(), 1, &[]);
        balance.mean_length = 27.5;
        let row = LadderRow { generation: 2, elo: -159.4, elo_low: -505.2, elo_high: 187.0, balance };
        assert_eq!(
            row.summary_line(),
            "generation 2: Elo -159 (-505 to +187); 0 distinct games, attackers 0.0%, defenders 0.0% (95% CI 0.0-100.0), draws 0.0%"
        );
        let m = LadderMatch { a: 2, b: 0, wins: 1, draws: 0, losses: 3 };
        let l = Ladder { variant: "brandubh".into(), run_dir: "run".into(), agent: "az".into(), rows: vec![row], matches: vec![m], human: None };
        let md = markdown(&l, "cmd");
        assert!(md.contains("\n| 2 | -159 (-505 to +187) | 0 | 0.0% | 0.0% (0.0–100.0) | 0.0% | 27.5 |\n"), "{md}");
        assert!(md.contains("\n- 2 vs 0: 1-0-3\n"), "{md}");
    }

    #[test]
    fn ratings_come_from_the_fit_or_not_at_all() {
        let m = |a, b, wins, losses| LadderMatch { a, b, wins, draws: 0, losses };
        // Generation 2 swept generation 0: rated above it, with an interval of some width.
        let r = ratings(&[0, 2], &[m(2, 0, 4, 0)]).unwrap();
        assert_eq!((r[0].elo, r[0].low, r[0].high), (0.0, 0.0, 0.0));
        assert!(r[1].elo > 0.0 && r[1].low < r[1].elo && r[1].elo < r[1].high, "{:?}", r[1]);
        // A fit that cannot be made (a checkpoint matched against itself) is an error, not a
        // row of zeros.
        let e = ratings(&[0, 2], &[m(2, 2, 3, 1)]).unwrap_err();
        assert!(matches!(e, LadderError::Fit { matches: 1, .. }), "{e}");
        assert!(e.to_string().starts_with("ladder Elo fit over 1 matches:"), "{e}");
    }
}
