//! OpenTafl notation: position strings, move records and rules strings.
//!
//! Position strings list rows from rank 1 upwards (`/3t3/3t3/3T3/ttTKTtt/3T3/3t3/3t3/` is
//! Brandubh), unlike layouts in variant files, which are written top rank first as people read
//! them. Move records are `from-to`, optionally with a capture list (`xc3/e3`) and the info
//! symbols `+ - ++ --`, which are accepted and ignored.
//!
//! OpenTafl rules strings (`dim:11 atkf:n sw:s efe:y start:/...`) load as variants. OpenTafl
//! cannot say everything a `RuleSet` says, so tafl-lab reads four extension keys: `tfr:dl`
//! (defenders lose on repetition), `ke:y` (the edge counts against a strong king), `nm:d`
//! (no legal move is a draw), `kspd:N` / `spd:N` (speed limits of the king / other pieces), `cap:N` (the ply cap).

use super::error::{InexpressibleRules, ParseError, ParseKind, SetupError};
use super::geometry::{Geometry, Square};
use super::position::Position;
use super::ruleset::{CornerKind, Escape, KingArmed, KingOnEdge, KingStrength, NoMoves, Repetition, RuleSet, When, Who};
use super::setup::Setup;
use super::types::{Move, Piece, Side};
use super::variant::Variant;
use std::sync::Arc;

/// Writes a position string (rank 1 first).
pub fn position_string(pos: &Position) -> String {
    pieces_string(pos.geometry(), &pos.pieces())
}

/// Writes the position string of a set of pieces on a board.
pub fn pieces_string(g: Geometry, pieces: &[(Square, Piece)]) -> String {
    let mut out = String::from("/");
    for r in 0..g.size() {
        let mut empty = 0;
        for f in 0..g.size() {
            let sq = Square::new(f, r);
            match pieces.iter().find(|(s, _)| *s == sq) {
                None => empty += 1,
                Some((_, p)) => {
                    if empty > 0 {
                        out.push_str(&empty.to_string());
                        empty = 0;
                    }
                    out.push(p.opentafl_char());
                }
            }
        }
        if empty > 0 {
            out.push_str(&empty.to_string());
        }
        out.push('/');
    }
    out
}

/// Parses a position string into its size and pieces (no rules checked).
///
/// # Errors
/// A [`ParseKind::Position`] error naming the string, the row and the problem.
pub fn parse_position_string(s: &str) -> Result<(u8, Vec<(Square, Piece)>), ParseError> {
    let bad = |m: String| ParseError::new(ParseKind::Position, s, format!("position `{s}`: {m}"));
    let trimmed = s.trim();
    if !trimmed.starts_with('/') || !trimmed.ends_with('/') || trimmed.len() < 2 {
        return Err(bad("must start and end with `/`".into()));
    }
    let rows: Vec<&str> = trimmed[1..trimmed.len() - 1].split('/').collect();
    let n = rows.len();
    Geometry::new(u8::try_from(n).unwrap_or(u8::MAX)).map_err(|e| bad(format!("{n} rows: {e}")))?;
    let mut pieces = Vec::new();
    for (r, row) in rows.iter().enumerate() {
        let mut file = 0usize;
        let mut digits = String::new();
        let flush = |digits: &mut String, file: &mut usize| -> Result<(), ParseError> {
            if !digits.is_empty() {
                let k: usize = digits.parse().map_err(|_| bad(format!("row {} has a bad count", r + 1)))?;
                if k == 0 {
                    return Err(bad(format!("row {} has a zero count", r + 1)));
                }
                // Checked: a count near usize::MAX must not wrap the file back onto the board.
                *file = file.checked_add(k).ok_or_else(|| bad(format!("row {} has a count too large", r + 1)))?;
                digits.clear();
            }
            Ok(())
        };
        for c in row.chars() {
            if c.is_ascii_digit() {
                digits.push(c);
                continue;
            }
            flush(&mut digits, &mut file)?;
            let piece = match c {
                't' => Piece::Attacker,
                'T' => Piece::Defender,
                'K' => Piece::King,
                other => return Err(bad(format!("row {} has `{other}`; use t, T, K and digits", r + 1))),
            };
            if file >= n {
                return Err(bad(format!("row {} is longer than {n} squares", r + 1)));
            }
            pieces.push((Square::new(file as u8, r as u8), piece));
            file += 1;
        }
        flush(&mut digits, &mut file)?;
        if file != n {
            return Err(bad(format!("row {} has {file} squares, expected {n}", r + 1)));
        }
    }
    Ok((n as u8, pieces))
}

/// Parses a position string with a side to move into a position of `variant`.
///
/// # Errors
/// Syntax errors ([`SetupError::Syntax`]) and every [`SetupError`] of validation.
pub fn parse_position(variant: Arc<Variant>, s: &str, to_move: Side) -> Result<Position, SetupError> {
    let (size, pieces) = parse_position_string(s)?;
    Position::from_setup(variant, &Setup { size, pieces, to_move })
}

/// A parsed move record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MoveRecord {
    pub mv: Move,
    /// The capture list, when the record gives one.
    pub captures: Option<Vec<Square>>,
}

/// Parses `d1-d3`, `Kd1-d3`, `g3-e3xe2/f3`, `e3-e4++` and the like.
///
/// # Errors
/// A [`ParseKind::Move`] error: a one-line reason naming the record.
pub fn parse_move(s: &str, g: Geometry) -> Result<MoveRecord, ParseError> {
    let bad = |m: &str| ParseError::new(ParseKind::Move, s, format!("bad move `{s}`: {m}"));
    let core = s.trim().trim_end_matches(['+', '-']);
    if core.is_empty() {
        return Err(bad(if s.contains("---") { "resignation is not a move" } else { "empty" }));
    }
    let core = core.strip_prefix(['K', 'T', 't']).unwrap_or(core);
    let (main, caps) = match core.split_once('x') {
        Some((m, c)) => (m, Some(c)),
        None => (core, None),
    };
    if main.contains(['^', '=']) {
        return Err(bad("berserk moves and jumps are not supported"));
    }
    let (from, to) = main.split_once('-').ok_or_else(|| bad("expected from-to, e.g. d1-d3"))?;
    let from = g.parse_square(from).map_err(|e| bad(&e.message))?;
    let to = g.parse_square(to).map_err(|e| bad(&e.message))?;
    let mv = Move::new(from, to);
    if mv.direction().is_none() {
        return Err(bad("a move must stay on one rank or file"));
    }
    let captures = match caps {
        None => None,
        Some(list) => {
            let mut v = Vec::new();
            for part in list.split('/') {
                let part = part.strip_prefix(['K', 'T', 't']).unwrap_or(part);
                v.push(g.parse_square(part).map_err(|e| bad(&e.message))?);
            }
            v.sort();
            Some(v)
        }
    };
    Ok(MoveRecord { mv, captures })
}

/// Splits a move list (whitespace separated; numbered OpenTafl turns like `1.` are skipped).
pub fn split_moves(text: &str) -> Vec<&str> {
    text.split_whitespace()
        .filter(|t| !(t.ends_with('.') && t[..t.len() - 1].bytes().all(|b| b.is_ascii_digit())))
        .collect()
}

fn who_of(list: &str, key: &str) -> Result<Who, String> {
    let att = list.contains('t');
    let def = list.contains('T');
    let king = list.contains('K');
    match (att, def, king) {
        (false, false, false) => Ok(Who::Nobody),
        (false, false, true) => Ok(Who::King),
        (true, true, true) => Ok(Who::All),
        _ => Err(format!("{key}:{list} (tafl-lab supports nobody, K, or all pieces)")),
    }
}

fn hostile_of(full: &str, empty: &str, upper: bool) -> When {
    let c = if upper { 'T' } else { 't' };
    if full.contains(c) {
        When::Always
    } else if empty.contains(c) {
        When::WhenEmpty
    } else {
        When::Never
    }
}

fn yes_no(v: &str, key: &str) -> Result<bool, String> {
    match v {
        "y" => Ok(true),
        "n" => Ok(false),
        _ => Err(format!("{key}:{v} (expected y or n)")),
    }
}

/// Parses an OpenTafl rules string into a variant.
///
/// # Errors
/// A [`ParseKind::RulesString`] error: unknown keys, unsupported values (berserk, jumps, weak
/// shieldwalls...) and bad start positions, each named.
pub fn parse_rules_string(s: &str) -> Result<Variant, ParseError> {
    rules_from_string(s).map_err(|m| ParseError::new(ParseKind::RulesString, s, m))
}

/// [`parse_rules_string`], failing with the reason alone.
fn rules_from_string(s: &str) -> Result<Variant, String> {
    let mut map: Vec<(&str, &str)> = Vec::new();
    for tok in s.split_whitespace() {
        let (k, v) = tok.split_once(':').ok_or_else(|| format!("`{tok}` is not key:value"))?;
        map.push((k, v));
    }
    let get = |k: &str| map.iter().rev().find(|(key, _)| *key == k).map(|(_, v)| *v);
    let start = get("start").ok_or("missing start:")?;
    let (size, pieces) = parse_position_string(start).map_err(|e| format!("start: {e}"))?;
    if let Some(d) = get("dim") {
        if d.parse::<u8>().ok() != Some(size) {
            return Err(format!("dim:{d} does not match the {size}-row start position"));
        }
    } else {
        return Err("missing dim:".into());
    }
    let g = Geometry::new(size)?;
    let mut r = RuleSet::default();
    r.repetition = Repetition::Draw;
    let (mut cenh, mut cenhe, mut cenp, mut cens) = ("tcnk", "tcnkTCNK", "tcnkTCNK", "K");
    let (mut corh, mut cors) = ("tcnkTCNK", "K");
    let mut aforh = "TCNK";
    let mut name = String::from("opentafl");
    for &(k, v) in &map {
        match k {
            "dim" | "start" => {}
            "name" => name = v.to_string(),
            "esc" => {
                r.escape = match v {
                    "c" => Escape::Corners,
                    "e" => Escape::Edge,
                    _ => return Err(format!("esc:{v} (expected c or e)")),
                }
            }
            "surf" => r.encirclement = yes_no(v, k)?,
            "atkf" => r.first = if yes_no(v, k)? { Side::Attackers } else { Side::Defenders },
            "tfr" => {
                r.repetition = match v {
                    "i" => Repetition::None,
                    "d" => Repetition::Draw,
                    "l" => Repetition::MoverLoses,
                    "dl" => Repetition::DefendersLose,
                    _ => return Err(format!("tfr:{v} (supported: i, d, l, and the extension dl)")),
                }
            }
            "ka" => r.king_armed = if yes_no(v, k)? { KingArmed::Yes } else { KingArmed::No },
            "ks" => r.king_strength = if yes_no(v, k)? { KingStrength::Strong } else { KingStrength::Weak },
            "ke" => r.king_on_edge = if yes_no(v, k)? { KingOnEdge::EdgeCounts } else { KingOnEdge::Safe },
            "nm" => {
                r.no_moves = match v {
                    "l" => NoMoves::Loses,
                    "d" => NoMoves::Draw,
                    _ => return Err(format!("nm:{v} (expected l or d)")),
                }
            }
            "cap" => r.ply_cap = v.parse().map_err(|_| format!("cap:{v} is not a number"))?,
            "kspd" => r.speed.king = v.parse().map_err(|_| format!("kspd:{v} is not a number"))?,
            "spd" => r.speed.others = v.parse().map_err(|_| format!("spd:{v} is not a number"))?,
            "kj" if v == "n" => {}
            "nj" | "cj" => {}
            "ber" if v == "n" => {}
            "kj" | "ber" => return Err(format!("{k}:{v} (jumps and berserk moves are not supported)")),
            "sw" => {
                r.shieldwall = match v {
                    "n" => false,
                    "s" => true,
                    _ => return Err(format!("sw:{v} (supported: n, s)")),
                }
            }
            "swf" if v == "y" => {}
            "swf" => return Err("swf:n (shieldwalls that need no flanking move) is not supported".into()),
            "efe" => r.exit_fort = yes_no(v, k)?,
            "cen" => {
                if v.is_empty() {
                    r.throne.enabled = false;
                } else if v != "default" && v.trim_end_matches(',') != g.center().to_string() {
                    return Err(format!("cen:{v} (only the centre square is supported)"));
                }
            }
            "cor" => {
                if v == "default" {
                    continue;
                }
                let mut list = Vec::new();
                for part in v.split(',').filter(|p| !p.is_empty()) {
                    list.push(g.parse_square(part).map_err(|e| format!("cor: {e}"))?);
                }
                list.sort();
                let of = |pred: &dyn Fn(Square) -> bool| -> Vec<Square> {
                    let mut s: Vec<Square> = g.squares().filter(|&s| pred(s)).collect();
                    s.sort();
                    s
                };
                r.corners.kind = if list.is_empty() {
                    CornerKind::None
                } else if list == of(&|s| g.is_corner(s)) {
                    CornerKind::Single
                } else if list == of(&|s| g.in_corner_block(s)) {
                    CornerKind::Block
                } else {
                    return Err(format!("cor:{v} (supported: the 4 corners or 2x2 corner blocks)"));
                };
            }
            "cenh" => cenh = v,
            "cenhe" => cenhe = v,
            "cenp" => cenp = v,
            "cens" => cens = v,
            "corh" => corh = v,
            "cors" | "corp" => cors = v,
            "afor" => {
                for part in v.split(',').filter(|p| !p.is_empty()) {
                    r.camps.squares.push(g.parse_square(part).map_err(|e| format!("afor: {e}"))?);
                }
            }
            "aforh" => aforh = v,
            "aforp" | "afors" => {}
            "dfor" if v.is_empty() => {}
            _ => return Err(format!("unsupported rules key `{k}:{v}`")),
        }
    }
    r.throne.hostile_to_attackers = hostile_of(cenh, cenhe, false);
    r.throne.hostile_to_defenders = hostile_of(cenh, cenhe, true);
    r.throne.pass = who_of(cenp, "cenp")?;
    r.throne.stop = who_of(cens, "cens")?;
    let ch = |upper| if corh.contains(if upper { 'T' } else { 't' }) { When::Always } else { When::Never };
    r.corners.hostile_to_attackers = ch(false);
    r.corners.hostile_to_defenders = ch(true);
    r.corners.stop = who_of(cors, "cors")?;
    if !r.camps.squares.is_empty() {
        let ah = |upper| if aforh.contains(if upper { 'T' } else { 't' }) { When::WhenEmpty } else { When::Never };
        r.camps.hostile_to_attackers = ah(false);
        r.camps.hostile_to_defenders = ah(true);
    }
    Ok(Variant::new(&name, r, g, pieces)?)
}

fn who_letters(w: Who) -> &'static str {
    match w {
        Who::Nobody => "",
        Who::King => "K",
        Who::All => "tcnkTCNK",
    }
}

fn yn(b: bool) -> &'static str {
    if b {
        "y"
    } else {
        "n"
    }
}

/// Writes a variant as an OpenTafl rules string (with tafl-lab's extension keys where OpenTafl
/// has none), such that [`parse_rules_string`] reads back the same rules and layout.
///
/// # Errors
/// Rules OpenTafl notation cannot express ([`InexpressibleRules`]): a king armed only as hammer
/// or only as anvil, corners hostile only when empty, camps hostile even when occupied.
pub fn rules_string(v: &Variant) -> Result<String, InexpressibleRules> {
    let r = &v.rules;
    let g = v.geometry;
    let mut parts = vec![format!("dim:{}", g.size())];
    if !v.name.is_empty() && !v.name.contains(char::is_whitespace) {
        parts.push(format!("name:{}", v.name));
    }
    parts.push(format!("esc:{}", if r.escape == Escape::Corners { "c" } else { "e" }));
    parts.push(format!("surf:{}", yn(r.encirclement)));
    parts.push(format!("atkf:{}", yn(r.first == Side::Attackers)));
    let tfr = match r.repetition {
        Repetition::None => "i",
        Repetition::Draw => "d",
        Repetition::MoverLoses => "l",
        Repetition::DefendersLose => "dl",
    };
    parts.push(format!("tfr:{tfr}"));
    let ka = match r.king_armed {
        KingArmed::Yes => "y",
        KingArmed::No => "n",
        other => return Err(InexpressibleRules::KingArmed(other)),
    };
    parts.push(format!("ka:{ka}"));
    parts.push(format!("ks:{}", yn(r.king_strength == KingStrength::Strong)));
    parts.push(format!("ke:{}", yn(r.king_on_edge == KingOnEdge::EdgeCounts)));
    parts.push(format!("nm:{}", if r.no_moves == NoMoves::Loses { "l" } else { "d" }));
    if r.speed.king != 0 {
        parts.push(format!("kspd:{}", r.speed.king));
    }
    if r.speed.others != 0 {
        parts.push(format!("spd:{}", r.speed.others));
    }
    if r.ply_cap != 0 {
        parts.push(format!("cap:{}", r.ply_cap));
    }
    parts.push(format!("sw:{}", if r.shieldwall { "s" } else { "n" }));
    parts.push(format!("efe:{}", yn(r.exit_fort)));
    let t = &r.throne;
    if !t.enabled {
        parts.push("cen:".into());
    }
    let letters = |when_att: bool, when_def: bool| {
        format!("{}{}", if when_att { "tcnk" } else { "" }, if when_def { "TCNK" } else { "" })
    };
    parts.push(format!(
        "cenh:{}",
        letters(t.hostile_to_attackers == When::Always, t.hostile_to_defenders == When::Always)
    ));
    parts.push(format!(
        "cenhe:{}",
        letters(t.hostile_to_attackers != When::Never, t.hostile_to_defenders != When::Never)
    ));
    parts.push(format!("cenp:{}", who_letters(t.pass)));
    parts.push(format!("cens:{}", who_letters(t.stop)));
    let c = &r.corners;
    match c.kind {
        CornerKind::None => parts.push("cor:".into()),
        CornerKind::Single => {}
        CornerKind::Block => {
            let list: Vec<String> = g.squares().filter(|&s| g.in_corner_block(s)).map(|s| s.to_string()).collect();
            parts.push(format!("cor:{}", list.join(",")));
        }
    }
    if c.hostile_to_attackers == When::WhenEmpty || c.hostile_to_defenders == When::WhenEmpty {
        return Err(InexpressibleRules::CornersHostileWhenEmpty);
    }
    parts.push(format!(
        "corh:{}",
        letters(c.hostile_to_attackers == When::Always, c.hostile_to_defenders == When::Always)
    ));
    parts.push(format!("cors:{}", who_letters(c.stop)));
    parts.push(format!("corp:{}", who_letters(c.stop)));
    let k = &r.camps;
    if !k.squares.is_empty() {
        if k.hostile_to_attackers == When::Always || k.hostile_to_defenders == When::Always {
            return Err(InexpressibleRules::CampsHostileWhenOccupied);
        }
        let list: Vec<String> = k.squares.iter().map(|s| s.to_string()).collect();
        parts.push(format!("afor:{}", list.join(",")));
        parts.push(format!(
            "aforh:{}",
            letters(k.hostile_to_attackers == When::WhenEmpty, k.hostile_to_defenders == When::WhenEmpty)
        ));
    }
    parts.push(format!("start:{}", pieces_string(g, &v.layout)));
    Ok(parts.join(" "))
}
