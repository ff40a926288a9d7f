//! OpenTafl notation: position strings, move records and rules strings.
//!
//! Position strings list rows from rank 1 upwards (`/3t3/3t3/3T3/ttTKTtt/3T3/3t3/3t3/` is
//! Brandubh), unlike layouts in variant files, which are written top rank first as people read
//! them. Move records are `from-to`, optionally with a capture list (`xc3/e3`) and the info
//! symbols `+ - ++ --`, which are accepted and ignored.
//!
//! OpenTafl rules strings (`dim:11 atkf:n sw:s efe:y start:/...`) load as variants, read the
//! way OpenTafl 0.4.8 (the program tafl-lab plays in) reads them, so that both sides of a game
//! agree on every capture and every result:
//!
//! - `ks:` king strength: `s` (or `y`) strong, `c` strong on and beside the throne and weak
//!   elsewhere (tafl-lab's `weak`), `m` strong but captured against the edge (`strong` with
//!   `king_on_edge = edge_counts`), `w` (or `n`) weak everywhere, the throne included.
//! - `tfr:` threefold repetition. Here program and spec disagree: the spec says `w` makes the
//!   player who moves into the repeated position win and `l` makes him lose, but OpenTafl
//!   0.4.8 judges the repetition after the turn has passed, so its `w` makes the mover *lose*
//!   and its `l` makes the mover *win*. tafl-lab follows the program: OpenTafl is the host that
//!   adjudicates the games, and an engine that read the spec would steer into repetitions it
//!   believes it wins and OpenTafl scores as losses. So `w` is `mover_loses`, `l` is
//!   `mover_wins`, and a tafl-lab string says `tfr:w` where it means the mover loses.
//! - `ka:` `y`, `n`, `h` (hammer only), `a` (anvil only).
//! - `spd:` OpenTafl's speed limits: `-1` none, one number for every piece, or one number per
//!   piece type (8, 10 or 12 of them, in `tcnk[m[g]]TCNK[M[G]]` order), of which tafl-lab
//!   needs `t` = `T` (its one limit for men) and `K`. The two-number form (`spd:3,4`) is
//!   refused: OpenTafl 0.4.8 silently ignores it, against its spec.
//!
//! OpenTafl cannot say everything a `RuleSet` says, so tafl-lab reads extension keys, which
//! OpenTafl ignores: `tfr:dl` (defenders lose on repetition), `ke:y`/`ke:n` (whether the edge
//! counts against a strong king; after `ks:`), `nm:d` (no legal move is a draw), `kspd:N` (the
//! king's speed limit; after `spd:`), `cap:N` (the ply cap). A string that OpenTafl would play
//! by rules tafl-lab cannot follow (berserk pieces, jumps, Linnaean capture, weak shieldwalls,
//! a strong king beside a throne that is not hostile to defenders...) is refused, naming the key.

use crate::error::{InexpressibleRules, ParseError, ParseKind, SetupError};
use crate::geometry::{Geometry, Square};
use crate::position::Position;
use crate::ruleset::{CornerKind, Escape, KingArmed, KingOnEdge, KingStrength, NoMoves, Repetition, RuleSet, Speed, When, Who};
use crate::setup::Setup;
use crate::types::{Move, Piece, Side};
use crate::variant::Variant;
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

/// A position shows as its OpenTafl position string (kept here, beside
/// [`position_string`], so that `position` stays below `notation`).
impl std::fmt::Debug for Position {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", position_string(self))
    }
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

impl Move {
    /// Parses `a1-a4`, ignoring a capture list and info symbols; see [`parse_move`] for the
    /// full record. (Here rather than in `types` so that `types` stays below `notation`.)
    ///
    /// # Errors
    /// See [`parse_move`].
    pub fn parse(s: &str, geometry: Geometry) -> Result<Move, ParseError> {
        parse_move(s, geometry).map(|r| r.mv)
    }
}

/// Splits a move list (whitespace separated; numbered OpenTafl turns like `1.` are skipped).
pub fn split_moves(text: &str) -> Vec<&str> {
    text.split_whitespace().filter(|t| !(t.ends_with('.') && t[..t.len() - 1].bytes().all(|b| b.is_ascii_digit()))).collect()
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

/// OpenTafl's index of a piece type in its speed and hostility lists (`tcnkmgTCNKMG`).
const SPEED_ORDER: [char; 12] = ['t', 'c', 'n', 'k', 'm', 'g', 'T', 'C', 'N', 'K', 'M', 'G'];

/// Reads OpenTafl's `spd:` value: `-1` (no limit), one limit for every piece, or one per piece
/// type (12 in `tcnkmgTCNKMG` order; OpenTafl also reads 10 without guards and 8 without
/// mercenaries). tafl-lab has one limit for attackers and defenders alike and one for the king.
fn speeds_of(v: &str) -> Result<Speed, String> {
    let bad = |m: &str| format!("spd:{v} ({m})");
    let nums: Vec<i64> = v
        .split(',')
        .filter(|p| !p.is_empty())
        .map(|p| p.trim().parse::<i64>().map_err(|_| bad("expected numbers separated by commas")))
        .collect::<Result<_, _>>()?;
    // OpenTafl's -1 is no limit, tafl-lab's 0.
    let limit = |n: i64| -> Result<u8, String> {
        match n {
            -1 => Ok(0),
            1..=255 => Ok(n as u8),
            _ => Err(bad("a limit is -1 for none, or 1 or more squares")),
        }
    };
    let order: &[char] = match nums.len() {
        1 => return limit(nums[0]).map(|n| Speed { king: n, others: n }),
        12 => &SPEED_ORDER,
        10 => &['t', 'c', 'n', 'k', 'm', 'T', 'C', 'N', 'K', 'M'],
        8 => &['t', 'c', 'n', 'k', 'T', 'C', 'N', 'K'],
        2 => return Err(bad("a limit per side is ignored by OpenTafl 0.4.8, against its spec; give one or one per piece type")),
        _ => return Err(bad("expected 1 number, or 8, 10 or 12 (one per piece type)")),
    };
    let of = |c: char| nums[order.iter().position(|&o| o == c).expect("every order lists t, T and K")];
    if of('t') != of('T') {
        return Err(bad("tafl-lab has one speed limit for attackers and defenders"));
    }
    Ok(Speed { king: limit(of('K'))?, others: limit(of('t'))? })
}

/// Parses an OpenTafl rules string into a variant.
///
/// # Errors
/// A [`ParseKind::RulesString`] error: unknown keys, unsupported values (berserk, jumps, weak
/// shieldwalls...) and bad start positions, each named.
pub fn parse_rules_string(s: &str) -> Result<Variant, ParseError> {
    rules_from_string(s).map_err(|m| ParseError::new(ParseKind::RulesString, s, m))
}

/// [`parse_rules_string`], failing with the reason alone: reads `start:` (or `starti:`) and
/// `dim:` first, then every `key:value` in order through [`RULES_KEYS`], then settles what
/// several keys decide together ([`Reading::finish`]).
fn rules_from_string(s: &str) -> Result<Variant, String> {
    let mut map: Vec<(&str, &str)> = Vec::new();
    for tok in s.split_whitespace() {
        let (k, v) = tok.split_once(':').ok_or_else(|| format!("`{tok}` is not key:value"))?;
        map.push((k, v));
    }
    let get = |k: &str| map.iter().rev().find(|(key, _)| *key == k).map(|(_, v)| *v);
    let (size, pieces) = match (get("start"), get("starti")) {
        (Some(start), _) => parse_position_string(start).map_err(|e| format!("start: {e}"))?,
        (None, Some(inverted)) => {
            // The rows top rank first, as people read a board: reverse them.
            let rows: Vec<&str> = inverted.trim().trim_matches('/').split('/').collect();
            let upright = format!("/{}/", rows.into_iter().rev().collect::<Vec<_>>().join("/"));
            parse_position_string(&upright).map_err(|e| format!("starti: {e}"))?
        }
        (None, None) => return Err("missing start:".into()),
    };
    if let Some(d) = get("dim") {
        if d.parse::<u8>().ok() != Some(size) {
            return Err(format!("dim:{d} does not match the {size}-row start position"));
        }
    } else {
        return Err("missing dim:".into());
    }
    let mut reading = Reading::new(Geometry::new(size)?);
    for &(k, v) in &map {
        let (_, set) = RULES_KEYS.iter().find(|(key, _)| *key == k).ok_or_else(|| unsupported(k, v))?;
        set(&mut reading, k, v)?;
    }
    reading.finish(pieces)
}

fn unsupported(k: &str, v: &str) -> String {
    format!("unsupported rules key `{k}:{v}`")
}

/// A rules string as read so far: the rule set, and the values that are settled only after
/// every key, because several keys decide them together or an extension key refines another
/// key whatever their order.
struct Reading<'a> {
    g: Geometry,
    r: RuleSet,
    name: String,
    cenh: &'a str,
    cenhe: &'a str,
    cenp: &'a str,
    cens: &'a str,
    corh: &'a str,
    cors: &'a str,
    aforh: &'a str,
    /// `aforre:`, who may enter a camp from outside, and whether `cenre:` was given: OpenTafl
    /// 0.4.8 reads `aforre:` (and `corre:`, `dforre:`) only when the string also has `cenre:`.
    aforre: Option<&'a str>,
    cenre_given: bool,
    /// Whether `corre:` was given: beside `cenre:`, OpenTafl takes a missing one as "no piece
    /// may enter a corner".
    corre_given: bool,
    /// `ke:`, which refines `ks:`.
    king_on_edge: Option<KingOnEdge>,
    /// `kspd:`, which refines `spd:`.
    king_speed: Option<u8>,
}

/// Reads one key's value (the key is passed for messages shared by several keys).
type Setter = for<'a> fn(&mut Reading<'a>, &str, &'a str) -> Result<(), String>;

/// Keys that read nothing: `dim:` and `start:`/`starti:`, read before the others, and keys
/// about pieces or squares tafl-lab does not have.
fn ignore(_: &mut Reading<'_>, _: &str, _: &str) -> Result<(), String> {
    Ok(())
}

/// `kj:` and `ber:`: only `n` (no jumps, no berserk moves).
fn no_jumps(_: &mut Reading<'_>, k: &str, v: &str) -> Result<(), String> {
    if v == "n" {
        Ok(())
    } else {
        Err(format!("{k}:{v} (jumps and berserk moves are not supported)"))
    }
}

/// `cenre:`, `corre:`: who may enter the throne or a corner from outside. tafl-lab lets every
/// piece that may stop there enter it, which is OpenTafl's default (every piece type listed).
/// (`aforre:` is checked with the camps, once every key is read.)
fn reentry(_: &mut Reading<'_>, k: &str, v: &str) -> Result<(), String> {
    if v.contains('t') && v.contains('T') && v.contains('K') {
        Ok(())
    } else {
        Err(format!("{k}:{v} (tafl-lab supports only re-entry by every piece)"))
    }
}

/// `cor:`: the corner squares, `default` (the four corners), empty (none) or the 2x2 blocks.
fn corners(x: &mut Reading<'_>, _: &str, v: &str) -> Result<(), String> {
    if v == "default" {
        return Ok(());
    }
    let g = x.g;
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
    x.r.corners.kind = if list.is_empty() {
        CornerKind::None
    } else if list == of(&|s| g.is_corner(s)) {
        CornerKind::Single
    } else if list == of(&|s| g.in_corner_block(s)) {
        CornerKind::Block
    } else {
        return Err(format!("cor:{v} (supported: the 4 corners or 2x2 corner blocks)"));
    };
    Ok(())
}

/// Every key tafl-lab reads; any other key is refused. A key may repeat: each value is read
/// in turn, so the last one counts (`dim:` and `start:` are read before the rest, the last
/// one too).
const RULES_KEYS: &[(&str, Setter)] = &[
    ("dim", ignore),
    ("start", ignore),
    ("starti", ignore),
    ("name", |x, _, v| {
        x.name = v.to_string();
        Ok(())
    }),
    ("esc", |x, _, v| {
        x.r.escape = match v {
            "c" => Escape::Corners,
            "e" => Escape::Edge,
            _ => return Err(format!("esc:{v} (expected c or e)")),
        };
        Ok(())
    }),
    ("surf", |x, k, v| {
        x.r.encirclement = yes_no(v, k)?;
        Ok(())
    }),
    ("atkf", |x, k, v| {
        x.r.first = if yes_no(v, k)? { Side::Attackers } else { Side::Defenders };
        Ok(())
    }),
    ("tfr", |x, _, v| {
        // As OpenTafl 0.4.8 plays them, not as its spec words them (see the module docs).
        x.r.repetition = match v {
            "i" => Repetition::None,
            "d" => Repetition::Draw,
            "w" => Repetition::MoverLoses,
            "l" => Repetition::MoverWins,
            "dl" => Repetition::DefendersLose,
            _ => return Err(format!("tfr:{v} (supported: i, d, w, l, and the extension dl)")),
        };
        Ok(())
    }),
    ("ka", |x, _, v| {
        x.r.king_armed = match v {
            "y" => KingArmed::Yes,
            "n" => KingArmed::No,
            "h" => KingArmed::Hammer,
            "a" => KingArmed::Anvil,
            _ => return Err(format!("ka:{v} (expected y, n, h or a)")),
        };
        Ok(())
    }),
    ("ks", |x, _, v| {
        (x.r.king_strength, x.r.king_on_edge) = match v {
            "s" | "y" => (KingStrength::Strong, KingOnEdge::Safe),
            "m" => (KingStrength::Strong, KingOnEdge::EdgeCounts),
            "c" => (KingStrength::Weak, KingOnEdge::Safe),
            "w" | "n" => (KingStrength::WeakEverywhere, KingOnEdge::Safe),
            _ => return Err(format!("ks:{v} (expected s, c, m or w; y and n are s and w)")),
        };
        Ok(())
    }),
    ("ke", |x, k, v| {
        x.king_on_edge = Some(if yes_no(v, k)? { KingOnEdge::EdgeCounts } else { KingOnEdge::Safe });
        Ok(())
    }),
    ("nm", |x, _, v| {
        x.r.no_moves = match v {
            "l" => NoMoves::Loses,
            "d" => NoMoves::Draw,
            _ => return Err(format!("nm:{v} (expected l or d)")),
        };
        Ok(())
    }),
    ("cap", |x, _, v| {
        x.r.ply_cap = v.parse().map_err(|_| format!("cap:{v} is not a number"))?;
        Ok(())
    }),
    ("kspd", |x, _, v| {
        x.king_speed = Some(v.parse().map_err(|_| format!("kspd:{v} is not a number"))?);
        Ok(())
    }),
    ("spd", |x, _, v| {
        x.r.speed = speeds_of(v)?;
        Ok(())
    }),
    ("kj", no_jumps),
    // Jumps of knights, commanders, mercenaries and guards: tafl-lab has none of them.
    ("nj", ignore),
    ("cj", ignore),
    ("mj", ignore),
    ("gj", ignore),
    ("linc", |_, _, v| match v {
        "n" => Ok(()),
        _ => Err(format!("linc:{v} (Linnaean capture is not supported)")),
    }),
    ("ber", no_jumps),
    ("sw", |x, _, v| {
        x.r.shieldwall = match v {
            "n" => false,
            "s" => true,
            _ => return Err(format!("sw:{v} (supported: n, s)")),
        };
        Ok(())
    }),
    ("swf", |_, _, v| match v {
        "y" => Ok(()),
        _ => Err("swf:n (shieldwalls that need no flanking move) is not supported".into()),
    }),
    ("efe", |x, k, v| {
        x.r.exit_fort = yes_no(v, k)?;
        Ok(())
    }),
    ("cen", |x, _, v| {
        if v.is_empty() {
            x.r.throne.enabled = false;
        } else if v != "default" && v.trim_end_matches(',') != x.g.center().to_string() {
            return Err(format!("cen:{v} (only the centre square is supported)"));
        }
        Ok(())
    }),
    ("cor", corners),
    ("cenh", |x, _, v| {
        x.cenh = v;
        Ok(())
    }),
    ("cenhe", |x, _, v| {
        x.cenhe = v;
        Ok(())
    }),
    ("cenp", |x, _, v| {
        x.cenp = v;
        Ok(())
    }),
    ("cens", |x, _, v| {
        x.cens = v;
        Ok(())
    }),
    ("corh", |x, _, v| {
        x.corh = v;
        Ok(())
    }),
    // `cors:` and `corp:` both say who may stop on a corner (`rules_string` writes them alike).
    ("cors", |x, _, v| {
        x.cors = v;
        Ok(())
    }),
    ("corp", |x, _, v| {
        x.cors = v;
        Ok(())
    }),
    ("afor", |x, _, v| {
        for part in v.split(',').filter(|p| !p.is_empty()) {
            x.r.camps.squares.push(x.g.parse_square(part).map_err(|e| format!("afor: {e}"))?);
        }
        Ok(())
    }),
    ("aforh", |x, _, v| {
        x.aforh = v;
        Ok(())
    }),
    ("aforp", ignore),
    ("afors", ignore),
    // Defender forts: refused when there are any; their settings then say nothing.
    ("dfor", |_, k, v| if v.is_empty() { Ok(()) } else { Err(unsupported(k, v)) }),
    ("dforh", ignore),
    ("dforp", ignore),
    ("dfors", ignore),
    ("dforre", ignore),
    ("cenre", |x, k, v| {
        x.cenre_given = true;
        reentry(x, k, v)
    }),
    ("corre", |x, k, v| {
        x.corre_given = true;
        reentry(x, k, v)
    }),
    ("aforre", |x, _, v| {
        x.aforre = Some(v);
        Ok(())
    }),
];

impl<'a> Reading<'a> {
    /// OpenTafl's defaults, but for repetition (a draw rather than OpenTafl's none).
    fn new(g: Geometry) -> Reading<'a> {
        let r = RuleSet { repetition: Repetition::Draw, ..RuleSet::default() };
        Reading {
            g,
            r,
            name: String::from("opentafl"),
            cenh: "tcnk",
            cenhe: "tcnkTCNK",
            cenp: "tcnkTCNK",
            cens: "K",
            corh: "tcnkTCNK",
            cors: "K",
            aforh: "TCNK",
            aforre: None,
            cenre_given: false,
            corre_given: false,
            king_on_edge: None,
            king_speed: None,
        }
    }

    /// The variant: the extension keys applied, the square settings turned into rules.
    fn finish(self, pieces: Vec<(Square, Piece)>) -> Result<Variant, String> {
        let Reading { g, mut r, name, cenh, cenhe, cenp, cens, corh, cors, aforh, aforre, cenre_given, corre_given, king_on_edge, king_speed } = self;
        if let Some(e) = king_on_edge {
            r.king_on_edge = e;
        }
        if let Some(s) = king_speed {
            r.speed.king = s;
        }
        r.throne.hostile_to_attackers = hostile_of(cenh, cenhe, false);
        r.throne.hostile_to_defenders = hostile_of(cenh, cenhe, true);
        if r.throne.enabled && r.king_strength != KingStrength::WeakEverywhere && r.throne.hostile_to_defenders == When::Never {
            // tafl-lab counts the empty throne against a king beside it; OpenTafl counts it only
            // when the empty throne is hostile to defenders, so the two would disagree.
            return Err(format!(
                "cenhe:{cenhe} with a king strong beside the throne (ks:s, c or m): tafl-lab counts the empty throne against him, OpenTafl does not"
            ));
        }
        r.throne.pass = who_of(cenp, "cenp")?;
        r.throne.stop = who_of(cens, "cens")?;
        let ch = |upper| if corh.contains(if upper { 'T' } else { 't' }) { When::Always } else { When::Never };
        r.corners.hostile_to_attackers = ch(false);
        r.corners.hostile_to_defenders = ch(true);
        r.corners.stop = who_of(cors, "cors")?;
        if cenre_given && !corre_given && r.corners.kind != CornerKind::None {
            // OpenTafl reads `corre:` whenever `cenre:` is present, and a missing one as an
            // empty list: no piece could enter a corner, so no corner escape.
            return Err("cenre: without corre:: OpenTafl then lets no piece enter a corner (write `corre:tcnkTCNK`)".to_string());
        }
        if !r.camps.squares.is_empty() {
            // tafl-lab's camps let no piece enter from outside (a piece in one may move within
            // it and leave). OpenTafl lets every piece enter unless `aforre:` is empty, and
            // reads `aforre:` only beside `cenre:`: anything else would be other rules.
            if aforre != Some("") || !cenre_given {
                return Err(format!(
                    "afor: with {}: OpenTafl lets pieces enter those camps from outside, tafl-lab's camps let none (write `aforre: cenre:tcnkTCNK corre:tcnkTCNK`)",
                    match aforre {
                        Some("") => "`aforre:` but no `cenre:` (OpenTafl then ignores `aforre:`)".to_string(),
                        Some(v) => format!("`aforre:{v}`"),
                        None => "no `aforre:`".to_string(),
                    }
                ));
            }
            let ah = |upper| if aforh.contains(if upper { 'T' } else { 't' }) { When::WhenEmpty } else { When::Never };
            r.camps.hostile_to_attackers = ah(false);
            r.camps.hostile_to_defenders = ah(true);
        }
        Ok(Variant::new(&name, r, g, pieces)?)
    }
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

/// How OpenTafl 0.4.8, playing by the rules string [`rules_string`] writes, would score a game
/// that tafl-lab's rules ended with `outcome`, when it scores it otherwise: the endings that
/// only tafl-lab's extension keys (which OpenTafl ignores) describe. `None` when both agree.
/// A match against OpenTafl lists such a game apart instead of scoring it for either side.
pub fn opentafl_scores_otherwise(rules: &RuleSet, outcome: &crate::types::Outcome) -> Option<&'static str> {
    use crate::types::Reason;
    match outcome.reason {
        Reason::Repetition if rules.repetition == Repetition::DefendersLose => {
            Some("OpenTafl 0.4.8 reads tfr:dl (defenders lose on repetition) as tfr:d: a draw at the third repetition")
        }
        Reason::PlyCap => Some("OpenTafl 0.4.8 has no ply cap (cap: is a tafl-lab key): the game would go on"),
        Reason::NoMoves if rules.no_moves == NoMoves::Draw => Some("OpenTafl 0.4.8 scores a side without a legal move as the loser (nm:d is a tafl-lab key)"),
        _ => None,
    }
}

/// The repetition rule OpenTafl 0.4.8 plays by, for `rules` written as [`rules_string`] writes
/// them: `tfr:dl` (the defenders lose, Copenhagen; a tafl-lab key it does not know) and `tfr:i`
/// (repetition ignored, Tablut) it reads as `tfr:d`, a draw at the third occurrence; the other
/// rules as written (docs/engines.md lists the readings). An agent facing OpenTafl searches by it, so that it does not play for a
/// win that OpenTafl scores as a draw ([`opentafl_scores_otherwise`] lists such games apart).
pub fn opentafl_repetition(rules: &RuleSet) -> Repetition {
    match rules.repetition {
        Repetition::DefendersLose | Repetition::None => Repetition::Draw,
        other => other,
    }
}

/// Writes a variant as an OpenTafl rules string (with tafl-lab's extension keys where OpenTafl
/// has none), such that [`parse_rules_string`] reads back the same rules and layout.
///
/// # Errors
/// Rules OpenTafl notation cannot express ([`InexpressibleRules`]): corners hostile only when
/// empty, camps hostile even when occupied, a king strong beside a throne that is never hostile
/// to defenders (OpenTafl would not count the throne against him).
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
    // OpenTafl 0.4.8's reading of `tfr:` (see the module docs): `w` is the mover losing.
    let tfr = match r.repetition {
        Repetition::None => "i",
        Repetition::Draw => "d",
        Repetition::MoverLoses => "w",
        Repetition::MoverWins => "l",
        Repetition::DefendersLose => "dl",
    };
    parts.push(format!("tfr:{tfr}"));
    let ka = match r.king_armed {
        KingArmed::Yes => "y",
        KingArmed::No => "n",
        KingArmed::Hammer => "h",
        KingArmed::Anvil => "a",
    };
    parts.push(format!("ka:{ka}"));
    let edge_counts = r.king_on_edge == KingOnEdge::EdgeCounts;
    let ks = match (r.king_strength, edge_counts) {
        (KingStrength::Strong, false) => "s",
        (KingStrength::Strong, true) => "m",
        (KingStrength::Weak, _) => "c",
        (KingStrength::WeakEverywhere, _) => "w",
    };
    parts.push(format!("ks:{ks}"));
    if r.king_strength != KingStrength::Strong && edge_counts {
        // Says nothing for a king that is never captured on all sides at the edge, but keeps
        // the rules exact when read back by tafl-lab.
        parts.push("ke:y".into());
    }
    if r.throne.enabled && r.king_strength != KingStrength::WeakEverywhere && r.throne.hostile_to_defenders == When::Never {
        return Err(InexpressibleRules::ThroneNeverHostileToKing);
    }
    if r.no_moves == NoMoves::Draw {
        parts.push("nm:d".into());
    }
    if r.speed.king == r.speed.others {
        if r.speed.king != 0 {
            parts.push(format!("spd:{}", r.speed.king));
        }
    } else {
        // One limit per piece type, as OpenTafl writes them (-1 = none).
        let n = |x: u8| if x == 0 { -1 } else { i64::from(x) };
        let list: Vec<String> = SPEED_ORDER.iter().map(|&c| if c == 'K' { n(r.speed.king) } else { n(r.speed.others) }.to_string()).collect();
        parts.push(format!("spd:{}", list.join(",")));
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
    let letters = |when_att: bool, when_def: bool| format!("{}{}", if when_att { "tcnk" } else { "" }, if when_def { "TCNK" } else { "" });
    parts.push(format!("cenh:{}", letters(t.hostile_to_attackers == When::Always, t.hostile_to_defenders == When::Always)));
    parts.push(format!("cenhe:{}", letters(t.hostile_to_attackers != When::Never, t.hostile_to_defenders != When::Never)));
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
    parts.push(format!("corh:{}", letters(c.hostile_to_attackers == When::Always, c.hostile_to_defenders == When::Always)));
    parts.push(format!("cors:{}", who_letters(c.stop)));
    parts.push(format!("corp:{}", who_letters(c.stop)));
    let k = &r.camps;
    if !k.squares.is_empty() {
        if k.hostile_to_attackers == When::Always || k.hostile_to_defenders == When::Always {
            return Err(InexpressibleRules::CampsHostileWhenOccupied);
        }
        let list: Vec<String> = k.squares.iter().map(|s| s.to_string()).collect();
        parts.push(format!("afor:{}", list.join(",")));
        parts.push(format!("aforh:{}", letters(k.hostile_to_attackers == When::WhenEmpty, k.hostile_to_defenders == When::WhenEmpty)));
        // No piece enters a camp from outside. OpenTafl 0.4.8 reads `aforre:` only when
        // `cenre:` is present, and then reads `corre:` and `dforre:` too (a missing one would
        // mean that no piece may enter a corner), so all four are written.
        parts.push("aforre:".into());
        parts.push("cenre:tcnkTCNK".into());
        parts.push("corre:tcnkTCNK".into());
        parts.push("dforre:tcnkTCNK".into());
    }
    parts.push(format!("start:{}", pieces_string(g, &v.layout)));
    Ok(parts.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::variant::PRESETS;
    use std::collections::BTreeSet;

    /// For each key of [`RULES_KEYS`], in table order, tokens to add to Brandubh's rules
    /// string, ending with that key. The keys `rules_string` writes are given as it writes
    /// them (after tokens that make it write them, e.g. camps for `aforh:`).
    const SAMPLES: &[(&str, &str)] = &[
        ("dim", "dim:7"),
        ("start", "start:/3t3/3t3/3T3/ttTKTtt/3T3/3t3/3t3/"),
        ("starti", "starti:/3t3/3t3/3T3/ttTKTtt/3T3/3t3/3t3/"),
        ("name", "name:sample"),
        ("esc", "esc:e"),
        ("surf", "surf:y"),
        ("atkf", "atkf:n"),
        ("tfr", "tfr:dl"),
        ("ka", "ka:h"),
        ("ks", "ks:m"),
        ("ke", "ks:w ke:y"),
        ("nm", "nm:d"),
        ("cap", "cap:300"),
        ("kspd", "kspd:2"),
        ("spd", "spd:3"),
        ("kj", "kj:n"),
        ("nj", "nj:y"),
        ("cj", "cj:y"),
        ("mj", "mj:y"),
        ("gj", "gj:y"),
        ("linc", "linc:n"),
        ("ber", "ber:n"),
        ("sw", "sw:s"),
        ("swf", "swf:y"),
        ("efe", "efe:y"),
        ("cen", "cen:"),
        ("cor", "cor:a1,b1,f1,g1,a2,b2,f2,g2,a6,b6,f6,g6,a7,b7,f7,g7"),
        ("cenh", "cenh:tcnkTCNK"),
        ("cenhe", "cenh: cenhe:tcnkTCNK"),
        ("cenp", "cenp:tcnkTCNK"),
        ("cens", "cens:tcnkTCNK"),
        ("corh", "corh:tcnk"),
        ("cors", "cors:tcnkTCNK"),
        ("corp", "corp:tcnkTCNK"),
        ("afor", "aforre: cenre:tcnkTCNK corre:tcnkTCNK afor:d1,d7"),
        ("aforh", "aforre: cenre:tcnkTCNK corre:tcnkTCNK afor:d1,d7 aforh:tcnkTCNK"),
        ("aforp", "aforp:tcnkTCNK"),
        ("afors", "afors:tcnkTCNK"),
        ("dfor", "dfor:"),
        ("dforh", "dforh:tcnkTCNK"),
        ("dforp", "dforp:tcnkTCNK"),
        ("dfors", "dfors:tcnkTCNK"),
        ("dforre", "afor:d1,d7 aforre: cenre:tcnkTCNK corre:tcnkTCNK dforre:tcnkTCNK"),
        ("cenre", "afor:d1,d7 aforre: corre:tcnkTCNK cenre:tcnkTCNK"),
        ("corre", "afor:d1,d7 aforre: cenre:tcnkTCNK corre:tcnkTCNK"),
        ("aforre", "afor:d1,d7 cenre:tcnkTCNK corre:tcnkTCNK aforre:"),
    ];

    /// The keys `rules_string` writes (when the rules need them); the other keys are only read.
    const WRITTEN: &[&str] = &[
        "dim", "name", "esc", "surf", "atkf", "tfr", "ka", "ks", "ke", "nm", "spd", "cap", "sw", "efe", "cen", "cenh", "cenhe", "cenp", "cens", "cor", "corh",
        "cors", "corp", "afor", "aforh", "aforre", "cenre", "corre", "dforre", "start",
    ];

    /// Camps are written with who may enter them (`aforre:` empty), beside the `cenre:` that
    /// makes OpenTafl 0.4.8 read it and the `corre:` it then also reads; a string that would
    /// make OpenTafl play other camps or corners is refused with the key named.
    #[test]
    fn camps_are_written_and_read_only_as_opentafl_plays_them() {
        let fot = rules_string(&Variant::preset("foteviken-tablut").expect("preset")).unwrap();
        let tokens: Vec<&str> = fot.split(' ').collect();
        for t in ["aforre:", "cenre:tcnkTCNK", "corre:tcnkTCNK"] {
            assert!(tokens.contains(&t), "{t} missing from {fot}");
        }
        assert!(parse_rules_string(&fot).is_ok());
        let without = |drop: &str| tokens.iter().filter(|t| **t != drop).copied().collect::<Vec<_>>().join(" ");
        for (text, says) in [
            (without("aforre:"), "no `aforre:`"),
            (without("cenre:tcnkTCNK"), "no `cenre:`"),
            // Foteviken has no corners; Brandubh has, and `cenre:` alone shuts them.
            (rules_string(&Variant::preset("brandubh").expect("preset")).unwrap() + " cenre:tcnkTCNK", "corre:"),
            (fot.replace("aforre:", "aforre:tcnkTCNK"), "`aforre:tcnkTCNK`"),
        ] {
            let e = parse_rules_string(&text).expect_err(&text).to_string();
            assert!(e.contains(says) && !e.contains('\n'), "{text}: {e}");
        }
    }

    /// Every key of the table is read, and reads back the same rules through `rules_string`;
    /// a key `rules_string` writes comes back exactly as given; `rules_string` writes no key
    /// the table lacks, and every key marked written is written for some sample or preset.
    #[test]
    fn every_rules_key_round_trips_through_rules_string() {
        let table: Vec<&str> = RULES_KEYS.iter().map(|(k, _)| *k).collect();
        let sampled: Vec<&str> = SAMPLES.iter().map(|(k, _)| *k).collect();
        assert_eq!(sampled, table, "one sample per key of RULES_KEYS, in its order");
        let base = rules_string(&Variant::preset("brandubh").expect("preset")).unwrap();
        let mut outputs = Vec::new();
        for &(key, tokens) in SAMPLES {
            let text = format!("{base} {tokens}");
            let read = parse_rules_string(&text).unwrap_or_else(|e| panic!("{tokens}: {e}"));
            let out = rules_string(&read).unwrap_or_else(|e| panic!("{tokens}: {e}"));
            let back = parse_rules_string(&out).unwrap_or_else(|e| panic!("{tokens}: {out}: {e}"));
            assert_eq!(back, read, "{tokens}: {out}");
            assert_eq!(back.name, read.name, "{tokens}");
            assert_eq!(rules_string(&back).unwrap(), out, "{tokens}");
            if WRITTEN.contains(&key) {
                let last = tokens.split(' ').next_back().unwrap();
                assert!(out.split(' ').any(|t| t == last), "{last} is not written back as given: {out}");
            }
            outputs.push(out);
        }
        for (name, _) in PRESETS {
            if let Ok(s) = rules_string(&Variant::preset(name).expect("preset")) {
                outputs.push(s);
            }
        }
        let written: BTreeSet<&str> = outputs.iter().flat_map(|s| s.split(' ')).map(|t| t.split_once(':').unwrap().0).collect();
        assert_eq!(written, WRITTEN.iter().copied().collect::<BTreeSet<_>>());
        assert!(WRITTEN.iter().all(|k| table.contains(k)));
    }
}

#[cfg(test)]
mod opentafl_scoring_tests {
    use super::*;
    use crate::types::{Outcome, Reason};

    /// Copenhagen's repetition rule (defenders lose) is a tafl-lab key that OpenTafl reads as
    /// a draw; a repetition under a rule both read, and every other ending, is scored alike.
    #[test]
    fn endings_only_tafl_lab_keys_describe_are_scored_otherwise_by_opentafl() {
        let cph = Variant::preset("copenhagen").expect("preset");
        assert_eq!(cph.rules.repetition, Repetition::DefendersLose);
        let rep = Outcome::win(Side::Attackers, Reason::Repetition);
        assert!(opentafl_scores_otherwise(&cph.rules, &rep).is_some_and(|s| s.contains("tfr:dl")));
        for reason in [Reason::CornerEscape, Reason::KingCaptured, Reason::Encirclement, Reason::ExitFort, Reason::NoMoves] {
            let winner = if matches!(reason, Reason::CornerEscape | Reason::ExitFort) { Side::Defenders } else { Side::Attackers };
            assert_eq!(opentafl_scores_otherwise(&cph.rules, &Outcome::win(winner, reason)), None, "{reason:?}");
        }
        assert!(opentafl_scores_otherwise(&cph.rules, &Outcome { winner: None, reason: Reason::PlyCap }).is_some());
        let mut rules = cph.rules.clone();
        rules.repetition = Repetition::MoverLoses;
        assert_eq!(opentafl_scores_otherwise(&rules, &rep), None);
        rules.no_moves = NoMoves::Draw;
        assert!(opentafl_scores_otherwise(&rules, &Outcome { winner: None, reason: Reason::NoMoves }).is_some());
    }

    /// The rule an agent facing OpenTafl searches by: a draw where OpenTafl scores Copenhagen's
    /// (or Tablut's ignored) repetition as one, every rule both programs read alike unchanged.
    #[test]
    fn opentafl_plays_copenhagen_repetition_as_a_draw_and_the_others_as_written() {
        let cph = Variant::preset("copenhagen").expect("preset");
        assert_eq!(opentafl_repetition(&cph.rules), Repetition::Draw);
        assert_eq!(opentafl_repetition(&RuleSet { repetition: Repetition::None, ..cph.rules.clone() }), Repetition::Draw, "tfr:i");
        for r in [Repetition::Draw, Repetition::MoverLoses, Repetition::MoverWins] {
            assert_eq!(opentafl_repetition(&RuleSet { repetition: r, ..cph.rules.clone() }), r);
        }
        // Where a repetition ends the game by both rules but the readings differ, OpenTafl's
        // scoring differs too (an ignored repetition ends nothing in tafl-lab's game).
        let rep = Outcome::win(Side::Attackers, Reason::Repetition);
        assert!(opentafl_scores_otherwise(&cph.rules, &rep).is_some());
    }
}
