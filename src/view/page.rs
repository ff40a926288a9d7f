//! [`ViewGame`]s → one self-contained HTML page. Each game is replayed here with the rules, so
//! a record with an illegal move, or a move after the game ended, is an error naming the game
//! and the ply, never a page that shows something the rules do not allow.
//!
//! The embedded data (a `<script type="application/json">`), per page: `variants` (name, size,
//! the squares' kinds as one string, `.` plain, `t` throne, `c` corner, `m` camp; the start
//! layout as one string, `.` `a` `d` `k`; the first side), and per game: `label`, `v` (its
//! variant), `moves` (one string, `from-to` with `x` and `/`-separated captured squares),
//! `end` (the final status line), `result` (`attackers_win`, `defenders_win`, `draw` or
//! `unfinished`), `reason`, `listed` (the game's line in the game list) and `notes` (per ply
//! `null` or `[value, move, share, move, share, ...]`, the best few moves of the search at the
//! position before that ply). `end`, `result`, `reason` and `listed` come from one
//! [`game_end`], so that the list and the final status cannot disagree.

use super::{PlyNote, RecordedEnd, ViewError, ViewGame};
use crate::rules::records::RecordResult;
use crate::rules::{Outcome, Position, Reason, Side, Variant};
use serde_json::{json, Value};
use std::fmt::Write as _;
use std::sync::Arc;

const CSS: &str = include_str!("viewer.css");
const JS: &str = include_str!("viewer.js");
/// Moves of the search shown per position.
const TOP_MOVES: usize = 5;

/// What ended a game, in words.
pub fn reason_text(r: Reason) -> &'static str {
    match r {
        Reason::CornerEscape => "the king escaped to a corner",
        Reason::EdgeEscape => "the king reached the edge",
        Reason::KingCaptured => "the king was captured",
        Reason::ExitFort => "the king stands in an exit fort on the edge",
        Reason::Encirclement => "the attackers encircled the defenders",
        Reason::Repetition => "a position repeated a third time",
        Reason::NoMoves => "the side to move had no legal move",
        Reason::PlyCap => "the ply cap was reached",
    }
}

fn winner_text(o: Outcome) -> &'static str {
    match o.winner {
        Some(Side::Attackers) => "Attackers win",
        Some(Side::Defenders) => "Defenders win",
        None => "Draw",
    }
}

/// How a game ended, as the page says it both in the game list and in the final status.
#[derive(Clone, Debug, PartialEq)]
pub struct GameEnd {
    /// `attackers_win`, `defenders_win`, `draw` or `unfinished`.
    pub result: &'static str,
    /// Why: the rules' reason (`corner_escape`) or the record's (`resigned`, `timeout`).
    pub reason: Option<&'static str>,
    /// The final status line: `Defenders win: the king escaped to a corner (corner_escape)`,
    /// or the record's words for a game the rules did not end.
    pub text: String,
    /// The game's line in the game list after its label: `defenders win (resigned), 22 plies`.
    pub listed: String,
}

/// How a game of `plies` plies ended: the rules' verdict `outcome` when the rules ended it,
/// else what the record states (`recorded`; a resignation or a loss on time is its result),
/// else unfinished.
pub fn game_end(outcome: Option<Outcome>, recorded: Option<&RecordedEnd>, plies: usize) -> GameEnd {
    let (result, reason, text) = match (outcome, recorded) {
        (Some(o), _) => (o.status_name(), Some(o.reason.name()), format!("{}: {} ({})", winner_text(o), reason_text(o.reason), o.reason.name())),
        (None, Some(r)) => {
            let result = match r.result {
                RecordResult::Won(Side::Attackers) => "attackers_win",
                RecordResult::Won(Side::Defenders) => "defenders_win",
                RecordResult::Draw => "draw",
                RecordResult::Unfinished => "unfinished",
            };
            (result, r.how, format!("{} (after {plies} plies)", r.text))
        }
        (None, None) => ("unfinished", None, format!("Unfinished after {plies} plies")),
    };
    let listed = format!("{}{}, {plies} plies", result.replace('_', " "), reason.map_or(String::new(), |r| format!(" ({r})")));
    GameEnd { result, reason, text, listed }
}

fn square_kinds(v: &Variant) -> String {
    let g = v.geometry;
    g.squares()
        .map(|sq| {
            if v.is_corner(sq) {
                'c'
            } else if v.is_throne(sq) {
                't'
            } else if v.is_camp(sq) {
                'm'
            } else {
                '.'
            }
        })
        .collect()
}

fn start_layout(v: &Variant) -> String {
    let g = v.geometry;
    let mut cells = vec!['.'; g.num_squares()];
    for &(sq, p) in &v.layout {
        cells[g.dense(sq)] = p.layout_char();
    }
    cells.into_iter().collect()
}

fn round(x: f32, digits: i32) -> f64 {
    let m = 10f64.powi(digits);
    (x as f64 * m).round() / m
}

fn note_json(n: &PlyNote) -> Value {
    let total: f32 = n.policy.iter().map(|p| p.1.max(0.0)).sum();
    let mut top: Vec<_> = n.policy.iter().filter(|p| p.1.is_finite()).copied().collect();
    top.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut out = vec![json!(round(n.value, 3))];
    for (mv, p) in top.into_iter().take(TOP_MOVES) {
        out.push(json!(mv.to_string()));
        out.push(json!(if total > 0.0 { round(p / total, 3) } else { 0.0 }));
    }
    Value::Array(out)
}

/// A replayed game: its moves with captures in the page's form, and how it ended.
struct Replayed {
    moves: String,
    outcome: Option<Outcome>,
}

fn replay(game: &ViewGame, number: usize) -> Result<Replayed, ViewError> {
    let mut pos = Position::start(game.variant.clone());
    let mut text = String::new();
    let at = |ply: usize, e: &dyn std::fmt::Display| ViewError::new(format!("game {number} ({}): ply {ply}: {e}", game.label));
    for (i, &mv) in game.moves.iter().enumerate() {
        if let Some(o) = pos.outcome() {
            return Err(at(i + 1, &format!("{mv} after the game ended at ply {i} ({o})")));
        }
        let captured = pos.play(mv).map_err(|e| at(i + 1, &e))?;
        if i > 0 {
            text.push(' ');
        }
        let _ = write!(text, "{mv}");
        for (k, sq) in captured.iter().enumerate() {
            text.push(if k == 0 { 'x' } else { '/' });
            let _ = write!(text, "{sq}");
        }
    }
    Ok(Replayed { moves: text, outcome: pos.outcome() })
}

fn escape_html(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// The page's data as JSON (see the module documentation).
///
/// # Errors
/// No games, or a game that does not replay (an illegal move, a move after the end, a note
/// for a ply the game does not have): one line naming the game and ply.
pub fn data(title: &str, games: &[ViewGame]) -> Result<Value, ViewError> {
    if games.is_empty() {
        return Err(ViewError::new("no games to show"));
    }
    let mut variants: Vec<(Arc<Variant>, Value)> = Vec::new();
    let mut list = Vec::with_capacity(games.len());
    for (i, g) in games.iter().enumerate() {
        if g.notes.len() > g.moves.len() {
            return Err(ViewError::new(format!("game {} ({}): {} search notes for {} moves", i + 1, g.label, g.notes.len(), g.moves.len())));
        }
        let same = |v: &Arc<Variant>| {
            Arc::ptr_eq(v, &g.variant) || (v.name == g.variant.name && v.rules_fingerprint() == g.variant.rules_fingerprint() && v.layout == g.variant.layout)
        };
        let vi = match variants.iter().position(|(v, _)| same(v)) {
            Some(k) => k,
            None => {
                let v = &g.variant;
                let entry = json!({
                    "name": v.name,
                    "size": v.geometry.size(),
                    "squares": square_kinds(v),
                    "start": start_layout(v),
                    "first": v.rules.first.name(),
                });
                variants.push((v.clone(), entry));
                variants.len() - 1
            }
        };
        let r = replay(g, i + 1)?;
        let end = game_end(r.outcome, g.recorded_end.as_ref(), g.moves.len());
        let mut entry = json!({
            "label": g.label,
            "v": vi,
            "moves": r.moves,
            "end": end.text,
            "result": end.result,
            "reason": end.reason,
            "listed": format!("{}: {}", g.label, end.listed),
        });
        if g.notes.iter().any(Option::is_some) {
            entry["notes"] = Value::Array(g.notes.iter().map(|n| n.as_ref().map_or(Value::Null, note_json)).collect());
        }
        list.push(entry);
    }
    Ok(json!({
        "title": title,
        "variants": variants.into_iter().map(|(_, e)| e).collect::<Vec<_>>(),
        "games": list,
    }))
}

/// The whole page.
///
/// # Errors
/// See [`data`].
pub fn render(title: &str, games: &[ViewGame]) -> Result<String, ViewError> {
    let data = data(title, games)?;
    // `</` may not appear inside a script element; `<\/` is the same JSON string.
    let json = data.to_string().replace("</", "<\\/");
    let mut html = String::with_capacity(json.len() + CSS.len() + JS.len() + 2048);
    let _ = write!(
        html,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{title}</title>\n<style>\n{CSS}</style>\n</head>\n<body>\n\
         <header><h1 id=\"page-title\">{title}</h1><span id=\"help\">&larr; &rarr; step, Home/End, &uarr; &darr; game</span></header>\n\
         <main>\n<nav id=\"game-panel\"><h2>Games (<span id=\"game-count\"></span>)</h2><ol id=\"games\"></ol></nav>\n\
         <section id=\"board-panel\"><h2 id=\"game-title\"></h2><div id=\"board-wrap\"></div>\n\
         <div id=\"controls\"><button id=\"first\" title=\"start (Home)\">|&#x25C0;</button><button id=\"prev\" title=\"back (&larr;)\">&#x25C0;</button>\
         <span id=\"counter\"></span><button id=\"next\" title=\"forward (&rarr;)\">&#x25B6;</button><button id=\"last\" title=\"end (End)\">&#x25B6;|</button></div>\n\
         <input id=\"slider\" type=\"range\" min=\"0\" max=\"0\" value=\"0\" aria-label=\"ply\">\n\
         <p id=\"status\"></p><p id=\"captures\"></p></section>\n\
         <aside id=\"side-panel\"><div id=\"analysis\"></div><h2>Moves</h2><ol id=\"moves\"></ol></aside>\n</main>\n\
         <script type=\"application/json\" id=\"data\">{json}</script>\n<script>\n{JS}</script>\n</body>\n</html>\n",
        title = escape_html(title),
    );
    Ok(html)
}
