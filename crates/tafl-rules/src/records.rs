//! Game records from outside: archives of human games and other programs' saved games, read
//! and checked move by move with the rules, and written back in the same forms.
//!
//! Three forms are read, told apart by their text:
//! - **Archive CSV** (aagenielsen.dk, as collected in public repositories): one game a line,
//!   `moves,attacker_captures,defender_captures,result`. Moves are space separated `d1-d3`,
//!   captures appended as `xk3` (several: `xk3xk2`; a captured king is not marked), a
//!   `timeout` or `resigned` token ends a game lost that way, and the result is `Black`
//!   (attackers won), `White` (defenders won), `Draw` or `Ongoing`. A header line starting
//!   with `moves,` is skipped.
//! - **Numbered lines**: one game a line, `1. k8-i8 d6-d9 2. ...` followed by the result
//!   `white won`, `black won`, `draw` or `ongoing` (after a comma or a space).
//! - **OpenTafl game records** (`.otg`): `[tag:value]` lines (`rules` names the variant,
//!   `result` is `1` attackers, `-1` defenders, `0` draw, `?` unfinished), then numbered turns;
//!   bracketed lines after a turn (clock entries) are skipped.
//!
//! White is the defenders (the king's side) and Black the attackers, as on aagenielsen.dk and
//! in OpenTafl. A record is *checked* against a variant ([`check`]): every move legal, every
//! recorded capture the capture the rules make, nothing played after the rules end the game,
//! and a recorded result that agrees with the rules' own end. A record that fails is skipped
//! by its users with the one-line reason this module gives; nothing here guesses.

use crate::geometry::Square;
use crate::notation::{parse_move, split_moves};
use crate::position::Position;
use crate::types::{Move, Outcome, Piece, Side};
use crate::variant::Variant;
use std::fmt;
use std::sync::Arc;

/// The recorded result of a game.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum RecordResult {
    Won(Side),
    Draw,
    /// Not finished (abandoned, adjourned, or the result is unknown).
    Unfinished,
}

impl RecordResult {
    /// The winner of a finished game (`None` for a draw); `None` too when unfinished.
    pub fn winner(self) -> Option<Side> {
        match self {
            RecordResult::Won(s) => Some(s),
            _ => None,
        }
    }
}

impl fmt::Display for RecordResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RecordResult::Won(Side::Attackers) => "attackers won",
            RecordResult::Won(Side::Defenders) => "defenders won",
            RecordResult::Draw => "draw",
            RecordResult::Unfinished => "unfinished",
        })
    }
}

/// The form of a record file.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum RecordForm {
    Csv,
    Numbered,
    OpenTafl,
}

impl RecordForm {
    pub const fn name(self) -> &'static str {
        match self {
            RecordForm::Csv => "archive CSV",
            RecordForm::Numbered => "numbered lines",
            RecordForm::OpenTafl => "OpenTafl game record",
        }
    }
}

/// How a game ended off the board: a loss on time or a resignation recorded in the moves.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Stop {
    Timeout,
    Resigned,
}

/// One game as read, not yet checked.
#[derive(Clone, Debug, PartialEq)]
pub struct RawRecord {
    /// 1-based line of the source where the game starts.
    pub line: usize,
    /// The OpenTafl rules string of the record, when it names one.
    pub rules: Option<String>,
    /// Move tokens as written (`d1-d3`, `g3-e3xe2/f3`, `Kd4-d1`).
    pub moves: Vec<String>,
    /// A `timeout` or `resigned` token after the last move.
    pub stop: Option<Stop>,
    pub result: RecordResult,
    /// The CSV form's capture counts (attackers', defenders').
    pub capture_counts: Option<(usize, usize)>,
}

/// A record that cannot be read: where and why, in one line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordError {
    pub line: usize,
    pub reason: String,
}

impl fmt::Display for RecordError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.reason)
    }
}

impl std::error::Error for RecordError {}

/// Why [`check`] refused a record. Prints as the one-line reason, naming the ply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CheckError {
    /// A move (`token`, at `ply`) after the rules ended the game.
    MoveAfterEnd { ply: usize, token: String, outcome: Outcome },
    /// A move that does not parse or that the rules refuse.
    BadMove { ply: usize, reason: String },
    /// The move's recorded captures differ from the rules' (`rules` includes a captured king).
    Captures { ply: usize, token: String, recorded: Vec<Square>, rules: Vec<Square> },
    /// A `timeout` or `resigned` mark after a game the rules had already ended.
    StopAfterEnd { stop: Stop, plies: usize, outcome: Outcome },
    /// The recorded result differs from the rules' end of the game.
    Result { recorded: RecordResult, outcome: Outcome },
    /// The CSV capture counts (attackers', defenders') differ from the marks in the moves.
    CaptureCounts { recorded: (usize, usize), marked: (usize, usize) },
}

/// The kinds of [`CheckError`], for counting refused records by kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CheckKind {
    MoveAfterEnd,
    BadMove,
    Captures,
    StopAfterEnd,
    Result,
    CaptureCounts,
}

impl CheckKind {
    /// A short label for tables of skipped records.
    pub fn label(self) -> &'static str {
        match self {
            CheckKind::MoveAfterEnd => "moves after the rules end the game",
            CheckKind::BadMove => "illegal or unreadable move",
            CheckKind::Captures => "captures differ from the rules'",
            CheckKind::StopAfterEnd => "marked as stopped after the rules' end",
            CheckKind::Result => "result differs from the rules' end",
            CheckKind::CaptureCounts => "capture counts differ from the moves",
        }
    }
}

impl CheckError {
    pub fn kind(&self) -> CheckKind {
        match self {
            CheckError::MoveAfterEnd { .. } => CheckKind::MoveAfterEnd,
            CheckError::BadMove { .. } => CheckKind::BadMove,
            CheckError::Captures { .. } => CheckKind::Captures,
            CheckError::StopAfterEnd { .. } => CheckKind::StopAfterEnd,
            CheckError::Result { .. } => CheckKind::Result,
            CheckError::CaptureCounts { .. } => CheckKind::CaptureCounts,
        }
    }
}

impl fmt::Display for CheckError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list = |v: &[Square]| if v.is_empty() { "nothing".to_string() } else { v.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(" ") };
        match self {
            CheckError::MoveAfterEnd { ply, token, outcome } => write!(f, "ply {ply}: `{token}` after the game ended at ply {} ({outcome})", ply - 1),
            CheckError::BadMove { ply, reason } => write!(f, "ply {ply}: {reason}"),
            CheckError::Captures { ply, token, recorded, rules } => {
                write!(f, "ply {ply}: `{token}` records captures {} but the rules capture {}", list(recorded), list(rules))
            }
            CheckError::StopAfterEnd { stop, plies, outcome } => write!(f, "the game is marked {stop:?} but the rules ended it at ply {plies} ({outcome})"),
            CheckError::Result { recorded, outcome } => write!(f, "the record says {recorded} but the rules end the game {outcome}"),
            CheckError::CaptureCounts { recorded: (att, def), marked: (a, d) } => write!(f, "capture counts {att},{def} but the moves mark {a},{d} captures"),
        }
    }
}

impl std::error::Error for CheckError {}

/// Which form `text` is in: OpenTafl when its first non-blank line is a `[tag:value]`, CSV
/// when its first game line has four comma-separated fields, else numbered lines.
pub fn detect_form(text: &str) -> RecordForm {
    let first = text.lines().map(str::trim).find(|l| !l.is_empty() && !l.starts_with('#'));
    match first {
        Some(l) if l.starts_with('[') => RecordForm::OpenTafl,
        Some(l) if l.split(',').count() == 4 => RecordForm::Csv,
        _ => RecordForm::Numbered,
    }
}

/// Reads every game of `text` (in the form [`detect_form`] sees): one result per game, an
/// unreadable game an error naming its line, so one bad line costs one game.
pub fn parse_records(text: &str) -> (RecordForm, Vec<Result<RawRecord, RecordError>>) {
    let form = detect_form(text);
    let games = match form {
        RecordForm::OpenTafl => vec![parse_opentafl(text)],
        RecordForm::Csv | RecordForm::Numbered => text
            .lines()
            .enumerate()
            .filter(|(_, l)| {
                let t = l.trim();
                !t.is_empty() && !t.starts_with('#') && (form != RecordForm::Csv || !t.starts_with("moves,"))
            })
            .map(|(i, l)| if form == RecordForm::Csv { parse_csv_line(l, i + 1) } else { parse_numbered_line(l, i + 1) })
            .collect(),
    };
    (form, games)
}

fn err(line: usize, reason: impl Into<String>) -> RecordError {
    RecordError { line, reason: reason.into() }
}

/// Splits the move field into move tokens and a final `timeout`/`resigned` stop.
fn moves_and_stop(tokens: Vec<&str>, line: usize) -> Result<(Vec<String>, Option<Stop>), RecordError> {
    let mut moves = Vec::new();
    let mut stop = None;
    for t in tokens {
        if stop.is_some() {
            return Err(err(line, format!("`{t}` after the game was stopped")));
        }
        match t.to_ascii_lowercase().as_str() {
            "timeout" => stop = Some(Stop::Timeout),
            "resigned" | "resign" | "resigns" => stop = Some(Stop::Resigned),
            _ => moves.push(t.to_string()),
        }
    }
    Ok((moves, stop))
}

fn parse_csv_line(l: &str, line: usize) -> Result<RawRecord, RecordError> {
    let fields: Vec<&str> = l.trim().split(',').map(str::trim).collect();
    let [moves, att, def, result] = fields[..] else {
        return Err(err(line, format!("expected 4 comma-separated fields (moves,attacker_captures,defender_captures,result), found {}", fields.len())));
    };
    let count = |s: &str, name: &str| s.parse::<usize>().map_err(|_| err(line, format!("{name} `{s}` is not a number")));
    let capture_counts = Some((count(att, "attacker_captures")?, count(def, "defender_captures")?));
    let result = match result {
        "Black" => RecordResult::Won(Side::Attackers),
        "White" => RecordResult::Won(Side::Defenders),
        "Draw" => RecordResult::Draw,
        "Ongoing" => RecordResult::Unfinished,
        _ => return Err(err(line, format!("result `{result}` (expected Black, White, Draw or Ongoing)"))),
    };
    let (moves, stop) = moves_and_stop(moves.split_whitespace().collect(), line)?;
    Ok(RawRecord { line, rules: None, moves, stop, result, capture_counts })
}

/// The result phrase at the end of a numbered line, and the rest.
fn split_result(l: &str) -> Option<(&str, RecordResult)> {
    let lower = l.trim_end().to_ascii_lowercase();
    for (phrase, r) in [
        ("white won", RecordResult::Won(Side::Defenders)),
        ("black won", RecordResult::Won(Side::Attackers)),
        ("draw", RecordResult::Draw),
        ("ongoing", RecordResult::Unfinished),
    ] {
        if lower.ends_with(phrase) {
            let rest = l.trim_end();
            let rest = &rest[..rest.len() - phrase.len()];
            return Some((rest.trim_end().trim_end_matches([',', ';']), r));
        }
    }
    None
}

fn parse_numbered_line(l: &str, line: usize) -> Result<RawRecord, RecordError> {
    let (moves, result) =
        split_result(l).ok_or_else(|| err(line, "no result at the end of the line (expected `white won`, `black won`, `draw` or `ongoing`)"))?;
    let (moves, stop) = moves_and_stop(split_moves(moves), line)?;
    Ok(RawRecord { line, rules: None, moves, stop, result, capture_counts: None })
}

fn parse_opentafl(text: &str) -> Result<RawRecord, RecordError> {
    let mut rules = None;
    let mut result = RecordResult::Unfinished;
    let mut tokens = Vec::new();
    let mut first_line = 0;
    for (i, l) in text.lines().enumerate() {
        let t = l.trim();
        if t.is_empty() {
            continue;
        }
        if first_line == 0 {
            first_line = i + 1;
        }
        if let Some(tag) = t.strip_prefix('[') {
            let tag = tag.strip_suffix(']').ok_or_else(|| err(i + 1, format!("unclosed tag `{t}`")))?;
            match tag.split_once(':') {
                Some(("rules", v)) => rules = Some(v.to_string()),
                Some(("result", v)) => {
                    result = match v.trim() {
                        "1" => RecordResult::Won(Side::Attackers),
                        "-1" => RecordResult::Won(Side::Defenders),
                        "0" => RecordResult::Draw,
                        "?" | "" => RecordResult::Unfinished,
                        other => return Err(err(i + 1, format!("result `{other}` (expected 1, -1, 0 or ?)"))),
                    }
                }
                // Other tags (date, clocks) and clock comments after a turn say nothing of
                // the moves.
                _ => {}
            }
            continue;
        }
        tokens.extend(split_moves(t));
    }
    if rules.is_none() {
        return Err(err(first_line.max(1), "no [rules:...] tag: an OpenTafl record names its variant"));
    }
    let (moves, stop) = moves_and_stop(tokens, first_line.max(1))?;
    Ok(RawRecord { line: first_line.max(1), rules, moves, stop, result, capture_counts: None })
}

/// A record that the rules accept.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckedRecord {
    pub moves: Vec<Move>,
    /// The squares each move captured (the king's included when it was captured).
    pub captures: Vec<Vec<Square>>,
    /// How the rules ended the game, when the last move ended it.
    pub end: Option<Outcome>,
    pub stop: Option<Stop>,
    pub result: RecordResult,
}

/// Plays `record` on `variant` and checks it: every move legal, recorded captures equal to
/// the rules' (a captured king may go unmarked; a square written twice counts once), no move
/// after the rules end the game, a recorded result that agrees with that end, and the CSV
/// capture counts equal to the capture marks of the line. The error says which of these failed
/// ([`CheckError::kind`], for code that sorts refused records) and prints as a one-line reason
/// naming the ply.
pub fn check(record: &RawRecord, variant: &Arc<Variant>) -> Result<CheckedRecord, CheckError> {
    let mut pos = Position::start(variant.clone());
    let g = pos.geometry();
    let mut moves = Vec::with_capacity(record.moves.len());
    let mut captures = Vec::with_capacity(record.moves.len());
    let mut taken = [0usize; 2];
    for (i, tok) in record.moves.iter().enumerate() {
        let ply = i + 1;
        if let Some(o) = pos.outcome() {
            return Err(CheckError::MoveAfterEnd { ply, token: tok.clone(), outcome: o });
        }
        let normal = normalise_captures(tok);
        let rec = parse_move(&normal, g).map_err(|e| CheckError::BadMove { ply, reason: e.to_string() })?;
        let mover = pos.to_move();
        let king = pos.king();
        let actual = pos.play(rec.mv).map_err(|e| CheckError::BadMove { ply, reason: e.to_string() })?;
        if let Some(claimed) = &rec.captures {
            let mut c = claimed.clone();
            c.dedup();
            let without_king: Vec<Square> = actual.iter().copied().filter(|&s| s != king).collect();
            if c != actual && c != without_king {
                return Err(CheckError::Captures { ply, token: tok.clone(), recorded: c, rules: actual });
            }
        }
        // The archive's counts are of the marks it wrote (a square written twice counts
        // twice), so they check the line's integrity, not the rules.
        taken[mover.index()] += tok.matches('x').count();
        moves.push(rec.mv);
        captures.push(actual);
    }
    let end = pos.outcome();
    if let (Some(o), Some(stop)) = (end, record.stop) {
        return Err(CheckError::StopAfterEnd { stop, plies: record.moves.len(), outcome: o });
    }
    match (end, record.result) {
        (Some(o), RecordResult::Won(w)) if o.winner != Some(w) => {
            return Err(CheckError::Result { recorded: record.result, outcome: o });
        }
        (Some(o), RecordResult::Draw) if o.winner.is_some() => {
            return Err(CheckError::Result { recorded: record.result, outcome: o });
        }
        _ => {}
    }
    if let Some((att, def)) = record.capture_counts {
        if (att, def) != (taken[0], taken[1]) {
            return Err(CheckError::CaptureCounts { recorded: (att, def), marked: (taken[0], taken[1]) });
        }
    }
    Ok(CheckedRecord { moves, captures, end, stop: record.stop, result: record.result })
}

/// Which variant the games of a source are played on.
#[derive(Clone, Copy, Debug)]
pub enum Expect<'a> {
    /// This variant only: a record whose rules string names other rules (or rules that do not
    /// read) is skipped ([`Skip::OtherVariant`], [`Skip::Rules`]). Training and calibrating a
    /// model of one variant read games so.
    Only(&'a Arc<Variant>),
    /// This variant, whatever a record names (the user said so: `view --variant`).
    Given(&'a Arc<Variant>),
    /// The variant each record names, else `default`; rules that do not read are skipped.
    Named { default: &'a Arc<Variant> },
}

/// A record of a source that was read and checked.
#[derive(Clone, Debug, PartialEq)]
pub struct SourcedGame {
    /// 1-based line where the record starts.
    pub line: usize,
    pub variant: Arc<Variant>,
    pub record: CheckedRecord,
}

/// Why [`games`] left a record out; prints as one line naming the record's line.
#[derive(Clone, Debug, PartialEq)]
pub enum Skip {
    /// The record does not read.
    Unreadable(RecordError),
    /// Its rules string does not read.
    Rules { line: usize, reason: String },
    /// Its rules are not the expected variant's.
    OtherVariant { line: usize, named: String, expected: String },
    /// It has no result, and finished games were asked for.
    Unfinished { line: usize },
    /// The rules refuse it ([`check`]).
    Check { line: usize, error: CheckError },
}

impl Skip {
    /// A short label of the reason, for counting skipped records by kind.
    pub fn label(&self) -> &'static str {
        match self {
            Skip::Unreadable(_) | Skip::Rules { .. } => "unreadable",
            Skip::OtherVariant { .. } => "another variant",
            Skip::Unfinished { .. } => "unfinished (no result)",
            Skip::Check { error, .. } => error.kind().label(),
        }
    }
}

impl Skip {
    /// The 1-based line where the record starts.
    pub fn line(&self) -> usize {
        match self {
            Skip::Unreadable(e) => e.line,
            Skip::Rules { line, .. } | Skip::OtherVariant { line, .. } | Skip::Unfinished { line } | Skip::Check { line, .. } => *line,
        }
    }

    /// The reason, without the line.
    pub fn reason(&self) -> String {
        match self {
            Skip::Unreadable(e) => e.reason.clone(),
            Skip::Rules { reason, .. } => format!("rules: {reason}"),
            Skip::OtherVariant { named, expected, .. } => format!("the record's rules are {named} (not {expected})"),
            Skip::Unfinished { .. } => "the record has no result".into(),
            Skip::Check { error, .. } => error.to_string(),
        }
    }
}

impl fmt::Display for Skip {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line(), self.reason())
    }
}

impl std::error::Error for Skip {}

/// The games of a record file's `text`, each read, put on its variant ([`Expect`]) and
/// checked ([`check`]), or the reason it was left out: the one game source of every reader of
/// outside records (pretraining, calibration, the viewer), so that all skip alike.
/// `finished_only` also leaves out records with no result.
pub fn games(text: &str, expect: Expect<'_>, finished_only: bool) -> (RecordForm, Vec<Result<SourcedGame, Skip>>) {
    let (form, raw) = parse_records(text);
    let games = raw
        .into_iter()
        .map(|r| {
            let rec = r.map_err(Skip::Unreadable)?;
            let line = rec.line;
            // The record's own rules, read unless the variant is given.
            let named = match (&rec.rules, expect) {
                (None, _) | (_, Expect::Given(_)) => None,
                (Some(rules), _) => Some(Variant::from_spec(rules).map_err(|e| Skip::Rules { line, reason: e.to_string() })?),
            };
            let variant = match expect {
                Expect::Given(v) => v.clone(),
                Expect::Only(v) => match named {
                    Some(n) if n.rules_fingerprint() != v.rules_fingerprint() || n.geometry != v.geometry => {
                        return Err(Skip::OtherVariant { line, named: n.name, expected: v.name.clone() });
                    }
                    _ => v.clone(),
                },
                Expect::Named { default } => named.map_or_else(|| default.clone(), Arc::new),
            };
            if finished_only && rec.result == RecordResult::Unfinished {
                return Err(Skip::Unfinished { line });
            }
            let record = check(&rec, &variant).map_err(|error| Skip::Check { line, error })?;
            Ok(SourcedGame { line, variant, record })
        })
        .collect();
    (form, games)
}

/// `g3-e3xe2xf3` (the archive's several captures) → `g3-e3xe2/f3`, the form
/// [`parse_move`] reads; other tokens unchanged.
fn normalise_captures(tok: &str) -> String {
    match tok.split_once('x') {
        Some((m, caps)) if caps.contains('x') => {
            let mut list: Vec<&str> = caps.split('x').filter(|s| !s.is_empty()).collect();
            list.dedup();
            format!("{m}x{}", list.join("/"))
        }
        _ => tok.to_string(),
    }
}

/// The archive CSV form of one game: `moves,attacker_captures,defender_captures,result`, with
/// captured kings unmarked, as the archive writes them. A move the rules refuse is written as
/// it is, with no captures (so that tests can write bad records on purpose); the readers refuse it.
pub fn write_csv(pos_start: &Position, moves: &[Move], result: RecordResult) -> String {
    let mut pos = pos_start.clone();
    let mut tokens = Vec::with_capacity(moves.len());
    let mut taken = [0usize; 2];
    for &mv in moves {
        let mover = pos.to_move();
        let king = pos.king();
        let caps = pos.play(mv).unwrap_or_default();
        let marked: Vec<Square> = caps.into_iter().filter(|&s| s != king).collect();
        taken[mover.index()] += marked.len();
        let mut t = mv.to_string();
        for s in &marked {
            t.push('x');
            t.push_str(&s.to_string());
        }
        tokens.push(t);
    }
    let result = match result {
        RecordResult::Won(Side::Attackers) => "Black",
        RecordResult::Won(Side::Defenders) => "White",
        RecordResult::Draw => "Draw",
        RecordResult::Unfinished => "Ongoing",
    };
    format!("{},{},{},{result}", tokens.join(" "), taken[0], taken[1])
}

/// The numbered form of one game: `1. a b 2. c d ... white won`.
pub fn write_numbered(moves: &[Move], result: RecordResult) -> String {
    let mut out = String::new();
    for (i, pair) in moves.chunks(2).enumerate() {
        out.push_str(&format!("{}. ", i + 1));
        for m in pair {
            out.push_str(&m.to_string());
            out.push(' ');
        }
    }
    out.push_str(match result {
        RecordResult::Won(Side::Attackers) => "black won",
        RecordResult::Won(Side::Defenders) => "white won",
        RecordResult::Draw => "draw",
        RecordResult::Unfinished => "ongoing",
    });
    out
}

/// An OpenTafl game record of one game on the variant written as `rules` (an OpenTafl rules
/// string), with captures written as OpenTafl writes them (`f2-a2xa3`, several `/`-separated)
/// and the king's moves marked `K`. A move the rules refuse is written as it is, with no
/// captures, as [`write_csv`] does.
pub fn write_opentafl(rules: &str, start: &Position, moves: &[Move], result: RecordResult) -> String {
    let code = match result {
        RecordResult::Won(Side::Attackers) => "1",
        RecordResult::Won(Side::Defenders) => "-1",
        RecordResult::Draw => "0",
        RecordResult::Unfinished => "?",
    };
    let mut out = format!("[compiler:tafl-lab]\n[result:{code}]\n[rules:{rules}]\n\n");
    let mut pos = start.clone();
    for (i, pair) in moves.chunks(2).enumerate() {
        out.push_str(&format!("{}.", i + 1));
        for &mv in pair {
            let king = pos.piece_at(mv.from) == Some(Piece::King);
            let caps = pos.play(mv).unwrap_or_default();
            out.push(' ');
            if king {
                out.push('K');
            }
            out.push_str(&mv.to_string());
            if !caps.is_empty() {
                out.push('x');
                out.push_str(&caps.iter().map(|s| s.to_string()).collect::<Vec<_>>().join("/"));
            }
        }
        out.push_str(" \n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn copenhagen() -> Arc<Variant> {
        Arc::new(Variant::preset("copenhagen").expect("preset"))
    }

    #[test]
    fn forms_are_told_apart() {
        assert_eq!(detect_form("d1-d3 e5-e2,0,0,Ongoing\n"), RecordForm::Csv);
        assert_eq!(detect_form("\n[rules:dim:7]\n1. d1-e1\n"), RecordForm::OpenTafl);
        assert_eq!(detect_form("1. d1-d3 e5-e2 white won\n"), RecordForm::Numbered);
    }

    #[test]
    fn archive_captures_read_with_duplicates_and_an_unmarked_king() {
        assert_eq!(normalise_captures("e7-k7xk6xk6"), "e7-k7xk6");
        assert_eq!(normalise_captures("g3-e3xe2xf3"), "g3-e3xe2/f3");
        assert_eq!(normalise_captures("g3-e3xe2"), "g3-e3xe2");
    }

    #[test]
    fn a_csv_line_reads_and_checks() {
        let (form, games) = parse_records("d1-d3 e5-e2 g1-g3 f4-c4 g3-e3xe2,1,0,Black\n");
        assert_eq!(form, RecordForm::Csv);
        let r = games[0].as_ref().unwrap();
        assert_eq!((r.moves.len(), r.result, r.capture_counts), (5, RecordResult::Won(Side::Attackers), Some((1, 0))));
        let v = copenhagen();
        let c = check(r, &v).unwrap();
        assert_eq!(c.captures[4], vec![v.geometry.parse_square("e2").unwrap()]);
        assert_eq!(c.end, None);
    }

    #[test]
    fn wrong_captures_and_counts_are_refused_with_the_ply() {
        let (_, games) = parse_records("d1-d3 e5-e2 g1-g3 f4-c4 g3-e3xe3,1,0,Black\n");
        let e = check(games[0].as_ref().unwrap(), &copenhagen()).unwrap_err();
        assert!(e.to_string().starts_with("ply 5:"), "{e}");
        assert!(matches!(&e, CheckError::Captures { ply: 5, .. }), "{e:?}");
        let (_, games) = parse_records("d1-d3 e5-e2 g1-g3 f4-c4 g3-e3xe2,2,0,Black\n");
        let e = check(games[0].as_ref().unwrap(), &copenhagen()).unwrap_err();
        assert_eq!(e, CheckError::CaptureCounts { recorded: (2, 0), marked: (1, 0) });
        assert_eq!(e.to_string(), "capture counts 2,0 but the moves mark 1,0 captures");
    }

    #[test]
    fn a_bad_line_costs_one_game() {
        let (_, games) = parse_records("d1-d3,0,0,White\nd1-d3,0,0,Purple\nd1-d3,x,0,White\n");
        assert!(games[0].is_ok());
        assert_eq!(games[1].as_ref().unwrap_err().line, 2);
        assert!(games[1].as_ref().unwrap_err().reason.contains("Purple"));
        assert!(games[2].as_ref().unwrap_err().reason.contains("attacker_captures"));
    }

    #[test]
    fn timeout_tokens_end_the_moves() {
        let (_, games) = parse_records("d1-d3 e5-e2 timeout,0,0,White\n");
        let r = games[0].as_ref().unwrap();
        assert_eq!((r.moves.len(), r.stop), (2, Some(Stop::Timeout)));
        let (_, games) = parse_records("d1-d3 timeout e5-e2,0,0,White\n");
        assert!(games[0].is_err());
    }

    #[test]
    fn numbered_lines_read_with_their_result() {
        let (form, games) = parse_records("1. d1-d3 e5-e2 2. g1-g3, white won\n1. d1-d3 black won\n1. d1-d3\n");
        assert_eq!(form, RecordForm::Numbered);
        let r = games[0].as_ref().unwrap();
        assert_eq!(r.moves, vec!["d1-d3", "e5-e2", "g1-g3"]);
        assert_eq!(r.result, RecordResult::Won(Side::Defenders));
        assert_eq!(games[1].as_ref().unwrap().result, RecordResult::Won(Side::Attackers));
        assert!(games[2].as_ref().unwrap_err().reason.contains("no result"));
    }

    #[test]
    fn written_forms_read_back_to_the_same_game() {
        let v = copenhagen();
        let start = Position::start(v.clone());
        let moves: Vec<Move> = ["d1-d3", "e5-e2", "g1-g3", "f4-c4", "g3-e3"].iter().map(|m| Move::parse(m, start.geometry()).unwrap()).collect();
        let res = RecordResult::Won(Side::Defenders);
        let rules = crate::notation::rules_string(&v).unwrap();
        for text in [write_csv(&start, &moves, res), write_numbered(&moves, res), write_opentafl(&rules, &start, &moves, res)] {
            let (_, games) = parse_records(&text);
            let c = check(games[0].as_ref().unwrap(), &v).unwrap();
            assert_eq!(c.moves, moves, "{text}");
            assert_eq!(c.result, res);
            assert_eq!(c.captures[4].len(), 1, "{text}");
        }
    }

    /// One game source for every reader: `Only` skips a record of other rules, `Given` plays
    /// every record on the given variant, `Named` on the record's own; `finished_only` skips
    /// a record with no result; every skip names its line and has a kind.
    #[test]
    fn a_source_puts_each_record_on_its_variant_and_skips_alike() {
        let v = copenhagen();
        let b = Arc::new(Variant::preset("brandubh").expect("preset"));
        let start = Position::start(v.clone());
        let moves: Vec<Move> = ["d1-d3", "e5-e2"].iter().map(|m| Move::parse(m, start.geometry()).unwrap()).collect();
        let rules = crate::notation::rules_string(&v).unwrap();
        let text = write_opentafl(&rules, &start, &moves, RecordResult::Unfinished);
        let one = |expect, finished| games(&text, expect, finished).1.remove(0);
        let g = one(Expect::Only(&v), false).unwrap();
        assert_eq!((g.line, g.record.moves.clone(), g.variant.geometry.size()), (1, moves.clone(), 11));
        let skip = one(Expect::Only(&v), true).unwrap_err();
        assert_eq!((skip.clone(), skip.label()), (Skip::Unfinished { line: 1 }, "unfinished (no result)"));
        assert_eq!(skip.to_string(), "line 1: the record has no result");
        let skip = one(Expect::Only(&b), false).unwrap_err();
        assert!(matches!(skip, Skip::OtherVariant { line: 1, .. }) && skip.label() == "another variant", "{skip}");
        assert_eq!(one(Expect::Named { default: &b }, false).unwrap().variant.geometry.size(), 11, "the record's own rules");
        // On brandubh, d1-d3 passes over an attacker: the rules refuse it.
        let skip = one(Expect::Given(&b), false).unwrap_err();
        assert!(matches!(&skip, Skip::Check { line: 1, error } if error.kind() == CheckKind::BadMove), "{skip:?}");
        assert!(skip.to_string().starts_with("line 1: ply 1: "), "{skip}");
        let bad = text.replace(&rules, "nonsense");
        let skip = games(&bad, Expect::Named { default: &b }, false).1.remove(0).unwrap_err();
        assert!(matches!(skip, Skip::Rules { line: 1, .. }) && skip.label() == "unreadable", "{skip}");
        assert!(games(&bad, Expect::Given(&v), false).1[0].is_ok(), "the given variant wins over rules that do not read");
    }

    /// A finished brandubh game: at each ply the first legal move that ends the game, else
    /// the first legal move.
    fn finished_game(v: &Arc<Variant>) -> (Vec<Move>, Outcome) {
        let mut pos = Position::start(v.clone());
        let mut moves = Vec::new();
        while pos.outcome().is_none() {
            let legal = pos.legal_moves();
            let ending = legal.iter().copied().find(|&m| {
                let mut p = pos.clone();
                p.play(m).unwrap();
                p.outcome().is_some()
            });
            let mv = ending.unwrap_or(legal[0]);
            pos.play(mv).unwrap();
            moves.push(mv);
        }
        (moves, pos.outcome().unwrap())
    }

    #[test]
    fn moves_after_the_end_and_contradicting_results_are_refused() {
        let v = Arc::new(Variant::preset("brandubh").expect("preset"));
        let start = Position::start(v.clone());
        let (moves, end) = finished_game(&v);
        let right = end.winner.map_or(RecordResult::Draw, RecordResult::Won);
        let (_, games) = parse_records(&write_csv(&start, &moves, right));
        let c = check(games[0].as_ref().unwrap(), &v).unwrap();
        assert_eq!(c.end, Some(end));
        let wrong = match end.winner {
            Some(s) => RecordResult::Won(s.opponent()),
            None => RecordResult::Won(Side::Attackers),
        };
        let (_, games) = parse_records(&write_numbered(&moves, wrong));
        let e = check(games[0].as_ref().unwrap(), &v).unwrap_err();
        assert_eq!(e.kind(), CheckKind::Result, "{e}");
        assert!(e.to_string().contains("the rules end the game"), "{e}");
        let mut longer = games[0].as_ref().unwrap().clone();
        longer.result = right;
        longer.moves.push("a1-a2".into());
        let e = check(&longer, &v).unwrap_err();
        assert_eq!(e.kind(), CheckKind::MoveAfterEnd, "{e}");
        assert!(e.to_string().contains("after the game ended"), "{e}");
        // An unfinished record may end anywhere, with any recorded result.
        let (_, games) = parse_records(&write_numbered(&moves[..moves.len() - 1], wrong));
        assert!(check(games[0].as_ref().unwrap(), &v).is_ok());
    }
}
