//! What `tafl-lab view` reads, told apart by content, each turned into [`ViewGame`]s:
//!
//! - a directory with `games.jsonl`: a `balance` output folder (its sample of games);
//! - a directory with `config.toml` and `games/`: a training run (its self-play shards, with
//!   the search's policy and value per ply; the run's config names the variant);
//! - a shard file (`TAFLSHRD` magic; the variant from `--variant` or the run it lies in);
//! - `games.jsonl` itself (lines starting with `{`);
//! - a `match --record` file (`# game N: A (SPEC) plays SIDE; END` then the moves);
//! - an OpenTafl record, an archive CSV or numbered lines with results
//!   ([`crate::rules::records`], each game checked with [`records::check`]);
//! - else a move list in the `replay` form (`d1-d3 d5-b5 ...`, numbered turns allowed): one
//!   game, or one game a line when the lines only replay one by one (`replay --games`).
//!
//! A record that does not name its variant is read with `--variant` (default brandubh, as
//! `replay`). A file of many games in which some do not replay keeps the others and reports
//! the skipped ones ([`Source::skipped`]); a single bad game, or none readable, is an error.

use super::{PlyNote, RecordedEnd, ViewError, ViewGame};
use crate::rules::notation::{parse_move, split_moves};
use crate::rules::records::{self, RecordForm, RecordResult, Stop};
use crate::rules::{Move, Position, Side, Variant};
use crate::selfplay::shard::{self, Shard};
use crate::train::RunDir;
use serde_json::Value;
use std::path::Path;
use std::sync::Arc;

/// The variant of records that do not name one, as `replay` reads them.
pub const DEFAULT_VARIANT: &str = "brandubh";

/// What an input was read as: what code acts on (calibrate takes only match records, the
/// viewer shows fewer games of a training run); [`SourceKind::name`] says it in words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SourceKind {
    /// A file of move lists, one game a line.
    MoveLists,
    /// One move list on the command line.
    MoveList,
    /// Game records in one of the record forms (archive CSV, numbered lines, OpenTafl).
    Records(RecordForm),
    /// A `match --record` file.
    MatchRecord,
    /// A balance run's sample games (`games.jsonl`).
    BalanceGames,
    /// A self-play shard.
    SelfPlayShard,
    /// A training run directory (its shards).
    TrainingRun,
}

impl SourceKind {
    /// The kind in words, as reports print it.
    pub const fn name(self) -> &'static str {
        match self {
            SourceKind::MoveLists => "move lists, one game a line",
            SourceKind::MoveList => "move list",
            SourceKind::Records(form) => form.name(),
            SourceKind::MatchRecord => "match record",
            SourceKind::BalanceGames => "balance games",
            SourceKind::SelfPlayShard => "self-play shard",
            SourceKind::TrainingRun => "training run",
        }
    }
}

impl std::fmt::Display for SourceKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Games read from one input.
#[derive(Debug)]
pub struct Source {
    /// What the input is.
    pub kind: SourceKind,
    pub games: Vec<ViewGame>,
    /// Games (or shards) left out, one line each: where and why.
    pub skipped: Vec<String>,
}

fn err(path: &Path, m: impl std::fmt::Display) -> ViewError {
    ViewError::new(format!("{}: {m}", path.display()))
}

fn load_variant(spec: &str, origin: &str) -> Result<Arc<Variant>, ViewError> {
    Variant::from_spec(spec).map(Arc::new).map_err(|e| ViewError::new(format!("{origin}: {e}")))
}

/// Reads `path` (see the module documentation). `variant` is `--variant`.
///
/// # Errors
/// An unreadable input, an unknown variant, a truncated or malformed record, a game that does
/// not replay when it is the only one, or no games: one line naming the file and the line,
/// game or ply.
pub fn read(path: &Path, variant: Option<&str>) -> Result<Source, ViewError> {
    let src = if path.is_dir() {
        if path.join("games.jsonl").is_file() {
            balance_games(&path.join("games.jsonl"))?
        } else if path.join("config.toml").is_file() && path.join("games").is_dir() {
            run_games(path, variant)?
        } else {
            return Err(err(path, "a directory, but neither a training run (config.toml and games/) nor a balance output (games.jsonl)"));
        }
    } else {
        let bytes = std::fs::read(path).map_err(|e| err(path, e))?;
        if bytes.starts_with(b"TAFLSHRD") {
            shard_file(path, variant)?
        } else {
            let text = String::from_utf8(bytes).map_err(|_| err(path, "not UTF-8 text, and not a shard file"))?;
            text_games(path, &text, variant)?
        }
    };
    if src.games.is_empty() {
        let why = src.skipped.first().map_or(String::new(), |s| format!(" (skipped {}; first: {s})", src.skipped.len()));
        return Err(err(path, format!("no games to show in this {}{why}", src.kind)));
    }
    Ok(src)
}

fn text_games(path: &Path, text: &str, variant: Option<&str>) -> Result<Source, ViewError> {
    let first = text.lines().map(str::trim).find(|l| !l.is_empty());
    match first {
        None => Err(err(path, "empty file: no games to show")),
        Some(l) if l.starts_with('{') => balance_games_text(path, text),
        Some(l) if l.starts_with("# game ") || l.starts_with("# variant: ") => match_record(path, text, variant),
        Some(_) => {
            let form = records::detect_form(text);
            let has_results = text.lines().any(|l| {
                let l = l.trim_end().to_ascii_lowercase();
                !l.starts_with('#') && ["white won", "black won", "draw", "ongoing"].iter().any(|p| l.ends_with(p))
            });
            if form == RecordForm::Numbered && !has_results {
                move_list(path, text, variant)
            } else {
                record_games(path, text, form, variant)
            }
        }
    }
}

/// Parses and plays one move list; claimed captures must be the rules' captures.
fn play_list(text: &str, variant: &Arc<Variant>) -> Result<Vec<Move>, String> {
    let mut pos = Position::start(variant.clone());
    let mut moves = Vec::new();
    for (i, tok) in split_moves(text).into_iter().enumerate() {
        let ply = i + 1;
        let rec = parse_move(tok, pos.geometry()).map_err(|e| format!("ply {ply}: {e}"))?;
        if let Some(o) = pos.outcome() {
            return Err(format!("ply {ply}: {tok} after the game ended at ply {i} ({o})"));
        }
        let caps = pos.play(rec.mv).map_err(|e| format!("ply {ply}: {e}"))?;
        if let Some(claimed) = rec.captures {
            if claimed != caps {
                let e = crate::rules::MoveError::CaptureMismatch { mv: rec.mv, claimed, actual: caps };
                return Err(format!("ply {ply}: {e}"));
            }
        }
        moves.push(rec.mv);
    }
    Ok(moves)
}

fn move_list(path: &Path, text: &str, variant: Option<&str>) -> Result<Source, ViewError> {
    let v = load_variant(variant.unwrap_or(DEFAULT_VARIANT), "--variant")?;
    let lines: Vec<(usize, &str)> = text.lines().enumerate().map(|(i, l)| (i + 1, l.trim())).filter(|(_, l)| !l.is_empty() && !l.starts_with('#')).collect();
    let whole: String = lines.iter().map(|(_, l)| *l).collect::<Vec<_>>().join(" ");
    let one = play_list(&whole, &v);
    let moves = match one {
        Ok(m) => m,
        Err(e) => {
            // `replay --games` files: one game a line, each from the start.
            let each: Vec<_> = lines.iter().map(|(n, l)| play_list(l, &v).map(|m| (*n, m))).collect();
            if lines.len() > 1 && each.iter().all(Result::is_ok) {
                let games = each.into_iter().flatten().map(|(n, m)| ViewGame::new(format!("line {n}"), v.clone(), m)).collect();
                return Ok(Source { kind: SourceKind::MoveLists, games, skipped: Vec::new() });
            }
            return Err(err(path, e));
        }
    };
    let name = path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned());
    Ok(Source { kind: SourceKind::MoveList, games: vec![ViewGame::new(name, v, moves)], skipped: Vec::new() })
}

/// The end a checked record states, for a game the rules did not end (see
/// [`super::page::game_end`]).
fn record_end(result: RecordResult, stop: Option<Stop>) -> Option<RecordedEnd> {
    let winner = |r: RecordResult| match r.winner() {
        Some(Side::Attackers) => "Attackers win",
        Some(Side::Defenders) => "Defenders win",
        None => "",
    };
    let (how, text) = match (result, stop) {
        (RecordResult::Won(_), Some(Stop::Timeout)) => ("timeout", format!("{} on time", winner(result))),
        (RecordResult::Won(_), Some(Stop::Resigned)) => ("resigned", format!("{} by resignation", winner(result))),
        (RecordResult::Won(_), None) => ("as recorded", format!("{} (as recorded; the rules had not ended the game)", winner(result))),
        (RecordResult::Draw, _) => ("as recorded", "Draw (as recorded)".into()),
        (RecordResult::Unfinished, _) => return None,
    };
    Some(RecordedEnd { result, how: Some(how), text })
}

fn record_games(path: &Path, text: &str, form: RecordForm, variant: Option<&str>) -> Result<Source, ViewError> {
    let fixed = match variant {
        Some(s) => Some(load_variant(s, "--variant")?),
        None => None,
    };
    let default = load_variant(DEFAULT_VARIANT, "--variant")?;
    let expect = match &fixed {
        Some(v) => records::Expect::Given(v),
        None => records::Expect::Named { default: &default },
    };
    let (_, read) = records::games(text, expect, false);
    let single = read.len() == 1;
    let (mut games, mut skipped) = (Vec::new(), Vec::new());
    for g in read {
        match g {
            Ok(g) => {
                let mut game = ViewGame::new(format!("line {}", g.line), g.variant, g.record.moves);
                game.recorded_end = record_end(g.record.result, g.record.stop);
                games.push(game);
            }
            Err(skip) if single => return Err(err(path, skip.to_string())),
            Err(skip) => skipped.push(format!("{}: {skip}", path.display())),
        }
    }
    Ok(Source { kind: SourceKind::Records(form), games, skipped })
}

/// `match --record` files: `# variant: SPEC` (written since the viewer exists; `--variant`
/// wins over it), then `# game N: A (SPEC) plays SIDE; END` and a line of moves per game.
fn match_record(path: &Path, text: &str, variant: Option<&str>) -> Result<Source, ViewError> {
    let recorded = text.lines().next().and_then(|l| l.trim().strip_prefix("# variant: ")).map(str::trim);
    let v = match (variant, recorded) {
        (Some(given), _) => load_variant(given, "--variant")?,
        (None, Some(r)) => load_variant(r, &format!("{}: line 1 (# variant:)", path.display()))?,
        (None, None) => load_variant(DEFAULT_VARIANT, "--variant")?,
    };
    let lines: Vec<&str> = text.lines().collect();
    let mut games = Vec::new();
    let mut i = usize::from(recorded.is_some());
    while i < lines.len() {
        let l = lines[i].trim();
        if l.is_empty() {
            i += 1;
            continue;
        }
        let at = |n: usize, m: String| err(path, format!("line {n}: {m}"));
        let header = l.strip_prefix("# game ").ok_or_else(|| at(i + 1, format!("expected a `# game N: ...` header, found `{}`", truncate(l))))?;
        let (number, rest) = header.split_once(": ").ok_or_else(|| at(i + 1, "malformed game header (no `: ` after the number)".into()))?;
        let (who, end) = rest.split_once("; ").unwrap_or((rest, ""));
        let moves_line = match lines.get(i + 1) {
            Some(m) if !m.trim_start().starts_with('#') => *m,
            _ => return Err(at(i + 1, format!("game {number} has no line of moves (truncated record?)"))),
        };
        let mut moves = Vec::new();
        for (k, tok) in split_moves(moves_line).into_iter().enumerate() {
            let mv = parse_move(tok, v.geometry).map_err(|e| at(i + 2, format!("game {number}: ply {}: {e}", k + 1)))?;
            moves.push(mv.mv);
        }
        let mut g = ViewGame::new(who.to_string(), v.clone(), moves);
        if !end.is_empty() {
            g.recorded_end = Some(RecordedEnd::note(end));
        }
        games.push(g);
        i += 2;
    }
    Ok(Source { kind: SourceKind::MatchRecord, games, skipped: Vec::new() })
}

fn truncate(s: &str) -> String {
    if s.chars().count() > 40 {
        format!("{}...", s.chars().take(40).collect::<String>())
    } else {
        s.to_string()
    }
}

fn balance_games(path: &Path) -> Result<Source, ViewError> {
    let text = std::fs::read_to_string(path).map_err(|e| err(path, e))?;
    balance_games_text(path, &text)
}

/// `games.jsonl` of a balance run: one game a line, with the variant's TOML as played.
fn balance_games_text(path: &Path, text: &str) -> Result<Source, ViewError> {
    let mut variants: Vec<(String, Arc<Variant>)> = Vec::new();
    let mut games = Vec::new();
    for (i, l) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let at = |m: String| err(path, format!("line {}: {m}", i + 1));
        let v: Value = serde_json::from_str(l).map_err(|e| at(format!("not JSON ({e})")))?;
        let field = |k: &str| v[k].as_str().ok_or_else(|| at(format!("no `{k}` string")));
        let toml = field("variant_toml")?;
        let variant = match variants.iter().find(|(t, _)| t == toml) {
            Some((_, v)) => v.clone(),
            None => {
                let parsed =
                    Arc::new(Variant::from_toml_str(toml, &format!("{} line {}", path.display(), i + 1)).map_err(|e| at(format!("variant_toml: {e}")))?);
                variants.push((toml.to_string(), parsed.clone()));
                parsed
            }
        };
        let mut moves = Vec::new();
        for (k, tok) in split_moves(field("moves")?).into_iter().enumerate() {
            moves.push(parse_move(tok, variant.geometry).map_err(|e| at(format!("ply {}: {e}", k + 1)))?.mv);
        }
        let mut g = ViewGame::new(format!("{}, game {}", field("label")?, v["game"].as_u64().unwrap_or(0)), variant, moves);
        g.recorded_end = v["end"].as_str().map(RecordedEnd::note);
        games.push(g);
    }
    Ok(Source { kind: SourceKind::BalanceGames, games, skipped: Vec::new() })
}

fn shard_games(path: &Path, s: &Shard, variant: &Arc<Variant>) -> Result<Vec<ViewGame>, String> {
    if s.rules_fingerprint != variant.rules_fingerprint() {
        return Err(format!(
            "rules fingerprint {:016x}, but the variant {} has {:016x} (another variant's shard?)",
            s.rules_fingerprint,
            variant.name,
            variant.rules_fingerprint()
        ));
    }
    let size = variant.geometry.size();
    let stem = path.file_stem().map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let mut out = Vec::with_capacity(s.games.len());
    for (k, g) in s.games.iter().enumerate() {
        let off = |n: usize| format!("game {}: ply {n}: a move off the {size}x{size} board", k + 1);
        let mut moves = Vec::with_capacity(g.plies.len());
        let mut notes = Vec::with_capacity(g.plies.len());
        for (n, p) in g.plies.iter().enumerate() {
            moves.push(shard::unpack_on(p.mv, size).ok_or_else(|| off(n + 1))?);
            let policy = p.policy.iter().map(|&(m, x)| shard::unpack_on(m, size).map(|m| (m, x)).ok_or_else(|| off(n + 1))).collect::<Result<_, _>>()?;
            notes.push(Some(PlyNote { value: p.value, policy }));
        }
        let slot = g.slot.map_or(String::new(), |s| format!(", slot {s}"));
        let label = format!("{stem} #{}{slot} (model {})", k + 1, s.model_generation);
        out.push(ViewGame { label, variant: variant.clone(), moves, notes, recorded_end: None });
    }
    Ok(out)
}

/// The variant of the run a shard lies in (`RUN/games/x.shard`), if it has a config.
fn run_variant(dir: &Path) -> Result<Arc<Variant>, ViewError> {
    let cfg = RunDir::new(dir).load_config().map_err(|e| ViewError::new(e.to_string()))?;
    load_variant(&cfg.variant, &format!("{}: variant", RunDir::new(dir).config().display()))
}

fn shard_file(path: &Path, variant: Option<&str>) -> Result<Source, ViewError> {
    let s = shard::read(path).map_err(|e| ViewError::new(e.to_string()))?;
    let v = match variant {
        Some(spec) => load_variant(spec, "--variant")?,
        None => match path.parent().and_then(Path::parent).filter(|d| d.join("config.toml").is_file()) {
            Some(run) => run_variant(run)?,
            None => return Err(err(path, "a shard does not name its variant, and it lies in no run directory: give --variant")),
        },
    };
    let games = shard_games(path, &s, &v).map_err(|e| err(path, e))?;
    Ok(Source { kind: SourceKind::SelfPlayShard, games, skipped: Vec::new() })
}

fn run_games(dir: &Path, variant: Option<&str>) -> Result<Source, ViewError> {
    let v = match variant {
        Some(spec) => load_variant(spec, "--variant")?,
        None => run_variant(dir)?,
    };
    let paths = RunDir::new(dir).shards().map_err(|e| ViewError::new(e.to_string()))?;
    let (mut games, mut skipped) = (Vec::new(), Vec::new());
    for p in paths {
        match shard::read(&p).map_err(|e| e.to_string()).and_then(|s| shard_games(&p, &s, &v).map_err(|e| format!("{}: {e}", p.display()))) {
            Ok(g) => games.extend(g),
            Err(e) => skipped.push(e),
        }
    }
    Ok(Source { kind: SourceKind::TrainingRun, games, skipped })
}

/// The games to put on the page: game `one` (1-based) alone, or at most `max` spread evenly
/// over the input (the first and the last always), in order.
///
/// # Errors
/// `one` beyond the games read.
pub fn select(games: Vec<ViewGame>, one: Option<usize>, max: usize) -> Result<Vec<ViewGame>, ViewError> {
    let n = games.len();
    if let Some(k) = one {
        if k == 0 || k > n {
            return Err(ViewError::new(format!("--game {k}: the input holds {n} game{} (1 to {n})", if n == 1 { "" } else { "s" })));
        }
        return Ok(games.into_iter().nth(k - 1).into_iter().collect());
    }
    if n <= max || max == 0 {
        return Ok(games);
    }
    let picks: Vec<usize> = if max == 1 { vec![0] } else { (0..max).map(|i| i * (n - 1) / (max - 1)).collect() };
    Ok(games.into_iter().enumerate().filter(|(i, _)| picks.binary_search(i).is_ok()).map(|(_, g)| g).collect())
}
