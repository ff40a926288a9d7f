//! A variant: a name, a [`RuleSet`] and a starting layout, plus square tables derived once.
//!
//! Variants are data. The presets are the TOML files in `configs/variants/`, embedded in the
//! binary so they work from any directory; a user file may name a `base` preset, override
//! single rule axes and bring its own layout ("Copenhagen rules on a 9x9 board"). Loading a
//! file merges three layers of TOML (the common defaults, the base preset, the file) and then
//! deserializes with unknown keys refused, so a misspelt rule never passes silently.

use crate::cell::{self, ANY_PIECE, ATTACKERS, DEFENDERS, KING, PIECE_KINDS};
use crate::error::{ParseError, ParseKind, SetupError};
use crate::geometry::{Direction, Geometry, Square, CELLS};
use crate::ruleset::{CornerKind, Escape, RuleSet, When};
use crate::types::Piece;
use std::fmt;
use std::path::Path;

/// The preset files, embedded at build time. The order is the listing order of `variants`.
pub const PRESETS: &[(&str, &str)] = &[
    ("copenhagen", include_str!("../variants/copenhagen.toml")),
    ("copenhagen-13", include_str!("../variants/copenhagen-13.toml")),
    ("fetlar", include_str!("../variants/fetlar.toml")),
    ("brandubh", include_str!("../variants/brandubh.toml")),
    ("hnefatafl-9", include_str!("../variants/hnefatafl-9.toml")),
    ("hnefatafl-11", include_str!("../variants/hnefatafl-11.toml")),
    ("tablut", include_str!("../variants/tablut.toml")),
    ("tablut-linnaeus", include_str!("../variants/tablut-linnaeus.toml")),
    ("foteviken-tablut", include_str!("../variants/foteviken-tablut.toml")),
    ("ard-ri", include_str!("../variants/ard-ri.toml")),
    ("ard-ri-historical", include_str!("../variants/ard-ri-historical.toml")),
    ("magpie", include_str!("../variants/magpie.toml")),
    ("tawlbwrdd", include_str!("../variants/tawlbwrdd.toml")),
    ("alea-evangelii", include_str!("../variants/alea-evangelii.toml")),
];

// Square flags.
pub(crate) const ON_BOARD: u8 = 1;
pub(crate) const EDGE: u8 = 2;
pub(crate) const THRONE: u8 = 4;
pub(crate) const CORNER: u8 = 8;
pub(crate) const CAMP: u8 = 16;
pub(crate) const ESCAPE: u8 = 32;
/// Squares with movement restrictions.
pub(crate) const RESTRICTED: u8 = THRONE | CORNER | CAMP;

/// Per-square tables derived from the rules and the board size, indexed by cell.
#[derive(Clone, Debug)]
pub(crate) struct Tables {
    pub flags: [u8; CELLS],
    /// Camp group (1-based connected component of camp squares), 0 outside camps.
    pub camp: [u8; CELLS],
    /// Bit per piece code ([`cell`]): may stop here.
    pub stop: [u8; CELLS],
    /// Bit per piece code: may pass over this square while it is empty.
    pub pass: [u8; CELLS],
    /// Bits of a side's mask ([`cell::side_mask`]): hostile to that side while empty.
    pub hostile_empty: [u8; CELLS],
    /// Bit per side mask: hostile to that side while occupied.
    pub hostile_full: [u8; CELLS],
    /// Empty squares that count as a captor beside the king (throne, hostile corners and camps).
    pub king_hostile: [bool; CELLS],
    /// Longest move per piece index ([`cell::piece_index`]); [`UNLIMITED`] = no limit.
    pub max_dist: [u8; PIECE_KINDS],
    pub ply_cap: u32,
    pub rules_key: u64,
}

/// A playable variant.
#[derive(Clone, Debug)]
pub struct Variant {
    pub name: String,
    pub description: String,
    pub source: String,
    pub rules: RuleSet,
    pub geometry: Geometry,
    /// The starting position's pieces.
    pub layout: Vec<(Square, Piece)>,
    pub(crate) tables: Box<Tables>,
}

impl PartialEq for Variant {
    fn eq(&self, other: &Self) -> bool {
        self.rules == other.rules && self.geometry == other.geometry && self.layout == other.layout
    }
}

fn when_bits(w: When, side_mask: u8, empty: &mut u8, full: &mut u8) {
    match w {
        When::Never => {}
        When::WhenEmpty => *empty |= side_mask,
        When::Always => {
            *empty |= side_mask;
            *full |= side_mask;
        }
    }
}

fn who_bits(w: crate::ruleset::Who) -> u8 {
    use crate::ruleset::Who;
    match w {
        Who::Nobody => 0,
        Who::King => KING,
        Who::All => ANY_PIECE,
    }
}

/// The preset names, in listing order, separated by commas.
pub(crate) fn preset_names() -> String {
    PRESETS.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
}

/// An error loading the variant from `origin` (a file, a preset, a spec): a
/// [`ParseKind::Variant`] error whose message starts with the origin.
pub(crate) fn load_error(origin: &str, message: impl fmt::Display) -> ParseError {
    ParseError::new(ParseKind::Variant, origin, format!("{origin}: {message}"))
}

impl Variant {
    /// Builds a variant and its tables.
    ///
    /// # Errors
    /// A [`ParseKind::Variant`] error (its input the name): rules that contradict the board
    /// (corner escape without corners, camps off the board) and layouts that are not legal
    /// starting positions.
    pub fn new(name: &str, rules: RuleSet, geometry: Geometry, mut layout: Vec<(Square, Piece)>) -> Result<Variant, ParseError> {
        let bad = |m: String| ParseError::new(ParseKind::Variant, name, m);
        layout.sort_by_key(|(s, _)| (s.rank(), s.file()));
        if rules.escape == Escape::Corners && rules.corners.kind == CornerKind::None {
            return Err(bad("escape = \"corners\" needs corner squares (corners.kind is none)".into()));
        }
        for &c in &rules.camps.squares {
            if !geometry.on_board(c) {
                return Err(bad(format!("camp square {c} is off the {0}x{0} board", geometry.size())));
            }
        }
        let tables = Box::new(build_tables(&rules, geometry));
        let v = Variant { name: name.to_string(), description: String::new(), source: String::new(), rules, geometry, layout, tables };
        validate_pieces(&v, &v.layout)?;
        Ok(v)
    }

    /// A preset by name.
    ///
    /// # Errors
    /// A [`ParseKind::Variant`] error when `name` is not a preset, one line naming it and the
    /// presets.
    ///
    /// # Panics
    /// If the embedded preset is invalid (a build error; the tests load every preset).
    pub fn preset(name: &str) -> Result<Variant, ParseError> {
        let Some((_, text)) = PRESETS.iter().find(|(n, _)| *n == name) else {
            return Err(load_error(name, format!("unknown preset (presets: {})", preset_names())));
        };
        Ok(Variant::from_toml_str(text, name).unwrap_or_else(|e| panic!("{e}")))
    }

    /// Loads a variant file.
    ///
    /// # Errors
    /// See [`Variant::from_spec`].
    pub fn from_file(path: &Path) -> Result<Variant, ParseError> {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| load_error(&shown, format!("cannot read: {e}")))?;
        Variant::from_toml_str(&text, &shown)
    }

    /// Parses variant TOML. `origin` names the file in errors.
    ///
    /// # Errors
    /// See [`Variant::from_spec`].
    pub fn from_toml_str(text: &str, origin: &str) -> Result<Variant, ParseError> {
        Variant::from_toml_with_overrides(text, origin, &[])
    }

    /// Parses variant TOML and applies `key=value` rule overrides (as `--set` does), e.g.
    /// `king_strength=weak` or `throne.stop=all`.
    ///
    /// # Errors
    /// See [`Variant::from_spec`]; a bad override names the override.
    pub fn from_toml_with_overrides(text: &str, origin: &str, overrides: &[String]) -> Result<Variant, ParseError> {
        let err = |m: String| load_error(origin, m);
        let doc: toml::Table = text.parse().map_err(|e: toml::de::Error| err(toml_error_line(text, &e)))?;
        for key in doc.keys() {
            if !["name", "description", "source", "base", "layout", "rules"].contains(&key.as_str()) {
                return Err(err(format!("unknown key `{key}` (expected name, description, source, base, layout, rules)")));
            }
        }
        let get_str = |k: &str| -> Result<Option<String>, ParseError> {
            match doc.get(k) {
                None => Ok(None),
                Some(toml::Value::String(s)) => Ok(Some(s.clone())),
                Some(_) => Err(err(format!("`{k}` must be a string"))),
            }
        };
        let mut rules_value = toml::Value::try_from(RuleSet::default()).expect("default rules serialize");
        let mut layout_text = None;
        if let Some(base) = get_str("base")? {
            let base_text = PRESETS.iter().find(|(n, _)| *n == base).map(|(_, t)| *t).ok_or_else(|| err(format!("base: unknown preset `{base}`")))?;
            let base_doc: toml::Table = base_text.parse().map_err(|e| err(format!("base {base}: {e}")))?;
            if let Some(r) = base_doc.get("rules") {
                merge(&mut rules_value, r);
            }
            layout_text = base_doc.get("layout").and_then(|v| v.as_str()).map(str::to_string);
        }
        if let Some(r) = doc.get("rules") {
            if !r.is_table() {
                return Err(err("`rules` must be a table".into()));
            }
            merge(&mut rules_value, r);
        }
        for o in overrides {
            apply_override(&mut rules_value, o).map_err(|m| err(format!("--set {o}: {m}")))?;
        }
        let rules: RuleSet = rules_value.try_into().map_err(|e: toml::de::Error| err(format!("rules: {}", e.message().trim())))?;
        if let Some(l) = get_str("layout")? {
            layout_text = Some(l);
        }
        let layout_text = layout_text.ok_or_else(|| err("missing `layout` (and no `base` to take it from)".into()))?;
        let (geometry, layout) = parse_layout(&layout_text).map_err(|m| err(format!("layout: {m}")))?;
        let name = get_str("name")?.unwrap_or_else(|| Path::new(origin).file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default());
        let mut v = Variant::new(&name, rules, geometry, layout).map_err(|e| err(e.message))?;
        v.description = get_str("description")?.unwrap_or_default();
        v.source = get_str("source")?.unwrap_or_default();
        Ok(v)
    }

    /// A copy with different rules (tables rebuilt).
    ///
    /// # Errors
    /// As [`Variant::new`].
    pub fn with_rules(&self, rules: RuleSet) -> Result<Variant, ParseError> {
        let mut v = Variant::new(&self.name, rules, self.geometry, self.layout.clone())?;
        v.description.clone_from(&self.description);
        v.source.clone_from(&self.source);
        Ok(v)
    }

    /// The layout as TOML rows, top rank first.
    pub fn layout_rows(&self) -> String {
        let n = self.geometry.size();
        let mut out = String::new();
        for r in (0..n).rev() {
            for f in 0..n {
                let sq = Square::new(f, r);
                let c = self.layout.iter().find(|(s, _)| *s == sq).map_or('.', |(_, p)| p.layout_char());
                out.push(c);
            }
            out.push('\n');
        }
        out
    }

    /// The variant as a TOML file that loads back to the same variant.
    pub fn to_toml(&self) -> String {
        let mut t = toml::Table::new();
        t.insert("name".into(), self.name.clone().into());
        t.insert("description".into(), self.description.clone().into());
        t.insert("source".into(), self.source.clone().into());
        t.insert("layout".into(), self.layout_rows().into());
        t.insert("rules".into(), toml::Value::try_from(&self.rules).expect("rules serialize"));
        toml::to_string(&t).expect("variant serializes")
    }

    /// Number of pieces of each side at the start.
    pub fn piece_counts(&self) -> (usize, usize) {
        let a = self.layout.iter().filter(|(_, p)| *p == Piece::Attacker).count();
        (a, self.layout.len() - a - 1)
    }

    /// Whether `sq` is a throne square.
    pub fn is_throne(&self, sq: Square) -> bool {
        self.tables.flags[sq.index()] & THRONE != 0
    }
    /// Whether `sq` is a corner square.
    pub fn is_corner(&self, sq: Square) -> bool {
        self.tables.flags[sq.index()] & CORNER != 0
    }
    /// Whether `sq` is a camp square.
    pub fn is_camp(&self, sq: Square) -> bool {
        self.tables.flags[sq.index()] & CAMP != 0
    }
    /// Whether the empty square `sq` counts as one of the king's captors when beside it (the
    /// throne, and corners and camps hostile to defenders): the squares that, with attackers,
    /// close a strong king's four sides.
    pub fn hostile_to_king(&self, sq: Square) -> bool {
        self.tables.king_hostile[sq.index()]
    }
    /// Whether the king wins on reaching `sq`.
    pub fn is_escape(&self, sq: Square) -> bool {
        self.tables.flags[sq.index()] & ESCAPE != 0
    }
    /// The ply cap in force.
    pub fn ply_cap(&self) -> u32 {
        self.tables.ply_cap
    }
    /// The rules fingerprint mixed into position hashes.
    pub fn rules_fingerprint(&self) -> u64 {
        self.tables.rules_key
    }
    /// Whether a `piece` may come to rest on `sq` when it comes from `from`.
    pub fn may_stop(&self, piece: Piece, from: Square, sq: Square) -> bool {
        let t = &self.tables;
        let camp = t.camp[from.index()];
        (camp != 0 && t.camp[sq.index()] == camp) || t.stop[sq.index()] & cell::of_piece(piece) != 0
    }
    /// Whether a `piece` coming from `from` may travel over the empty square `sq`.
    pub fn may_pass(&self, piece: Piece, from: Square, sq: Square) -> bool {
        let t = &self.tables;
        let camp = t.camp[from.index()];
        (camp != 0 && t.camp[sq.index()] == camp) || t.pass[sq.index()] & cell::of_piece(piece) != 0
    }
    /// The longest move a piece may make (`u8::MAX` when unlimited).
    pub fn max_distance(&self, piece: Piece) -> u8 {
        self.tables.max_dist[piece.index()]
    }
}

/// A speed limit of [`Tables::max_dist`] that limits nothing (a move is at most a board side).
/// Checks pieces against a variant: one king, no square twice, nothing on a square it may
/// never stand on (the king may stand on the throne and anyone in a camp, as at the start).
pub(crate) fn check_pieces(v: &Variant, pieces: &[(Square, Piece)]) -> Result<(), SetupError> {
    let kings = pieces.iter().filter(|(_, p)| *p == Piece::King).count();
    if kings != 1 {
        return Err(SetupError::KingCount(kings));
    }
    let mut seen = std::collections::HashSet::new();
    for &(sq, piece) in pieces {
        if !v.geometry.on_board(sq) {
            return Err(SetupError::OffBoard(sq));
        }
        if !seen.insert(sq) {
            return Err(SetupError::Occupied(sq));
        }
        let flags = v.tables.flags[sq.index()];
        let allowed = v.may_stop(piece, sq, sq) || (flags & THRONE != 0 && piece == Piece::King) || flags & CAMP != 0;
        if !allowed {
            return Err(SetupError::Restricted { square: sq, piece });
        }
    }
    Ok(())
}

/// [`check_pieces`] for variant construction: a bad starting layout makes a bad variant.
fn validate_pieces(v: &Variant, pieces: &[(Square, Piece)]) -> Result<(), ParseError> {
    check_pieces(v, pieces).map_err(|e| ParseError::new(ParseKind::Variant, &v.name, format!("layout: {e}")))
}

const UNLIMITED: u8 = u8::MAX;

fn build_tables(rules: &RuleSet, g: Geometry) -> Tables {
    let mut t = Tables {
        flags: [0; CELLS],
        camp: [0; CELLS],
        stop: [0; CELLS],
        pass: [0; CELLS],
        hostile_empty: [0; CELLS],
        hostile_full: [0; CELLS],
        king_hostile: [false; CELLS],
        max_dist: [UNLIMITED; PIECE_KINDS],
        ply_cap: rules.effective_ply_cap(g),
        rules_key: rules.fingerprint(),
    };
    for sq in g.squares() {
        let i = sq.index();
        let mut f = ON_BOARD;
        if g.is_edge(sq) {
            f |= EDGE;
        }
        let corner = match rules.corners.kind {
            CornerKind::None => false,
            CornerKind::Single => g.is_corner(sq),
            CornerKind::Block => g.in_corner_block(sq),
        };
        t.stop[i] = ANY_PIECE;
        t.pass[i] = ANY_PIECE;
        if rules.throne.enabled && sq == g.center() {
            f |= THRONE;
            t.stop[i] = who_bits(rules.throne.stop);
            t.pass[i] = who_bits(rules.throne.pass);
            when_bits(rules.throne.hostile_to_attackers, ATTACKERS, &mut t.hostile_empty[i], &mut t.hostile_full[i]);
            when_bits(rules.throne.hostile_to_defenders, DEFENDERS, &mut t.hostile_empty[i], &mut t.hostile_full[i]);
            t.king_hostile[i] = true;
        }
        if corner {
            f |= CORNER;
            t.stop[i] = who_bits(rules.corners.stop);
            t.pass[i] = who_bits(rules.corners.stop);
            when_bits(rules.corners.hostile_to_attackers, ATTACKERS, &mut t.hostile_empty[i], &mut t.hostile_full[i]);
            when_bits(rules.corners.hostile_to_defenders, DEFENDERS, &mut t.hostile_empty[i], &mut t.hostile_full[i]);
            t.king_hostile[i] = rules.corners.hostile_to_defenders != When::Never;
        }
        if rules.camps.squares.contains(&sq) {
            f |= CAMP;
            t.stop[i] = 0;
            t.pass[i] = 0;
            when_bits(rules.camps.hostile_to_attackers, ATTACKERS, &mut t.hostile_empty[i], &mut t.hostile_full[i]);
            when_bits(rules.camps.hostile_to_defenders, DEFENDERS, &mut t.hostile_empty[i], &mut t.hostile_full[i]);
            t.king_hostile[i] = rules.camps.hostile_to_defenders != When::Never;
        }
        let escape = match rules.escape {
            Escape::Corners => corner,
            Escape::Edge => g.is_edge(sq),
        };
        if escape {
            f |= ESCAPE;
        }
        t.flags[i] = f;
    }
    // Camp groups: connected components of camp squares.
    let mut next = 0u8;
    for &start in &rules.camps.squares {
        if t.camp[start.index()] != 0 || !g.on_board(start) {
            continue;
        }
        next += 1;
        let mut stack = vec![start];
        t.camp[start.index()] = next;
        while let Some(s) = stack.pop() {
            for d in Direction::ALL {
                let q = s.step(d);
                if t.flags[q] & CAMP != 0 && t.camp[q] == 0 {
                    t.camp[q] = next;
                    stack.push(Square::from_index(q));
                }
            }
        }
    }
    let lim = |x: u8| if x == 0 { UNLIMITED } else { x };
    for p in Piece::ALL {
        t.max_dist[cell::piece_index(cell::of_piece(p))] = lim(if p == Piece::King { rules.speed.king } else { rules.speed.others });
    }
    t
}

/// Parses layout rows (top rank first) of `.`, `a`, `d`, `k`.
///
/// # Errors
/// A [`ParseKind::Layout`] error: ragged rows, a non-square or out-of-range board, or a bad
/// character, naming the row.
pub fn parse_layout(text: &str) -> Result<(Geometry, Vec<(Square, Piece)>), ParseError> {
    let bad = |m: String| ParseError::new(ParseKind::Layout, text, m);
    let rows: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let n = rows.len();
    let geometry = Geometry::new(u8::try_from(n).unwrap_or(u8::MAX)).map_err(|e| bad(format!("{n} rows: {e}")))?;
    let mut pieces = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        let len = row.chars().count();
        if len != n {
            return Err(bad(format!("row {} (from the top) has {len} squares, expected {n}", i + 1)));
        }
        let rank = (n - 1 - i) as u8;
        for (f, c) in row.chars().enumerate() {
            let piece = match c {
                '.' => continue,
                'a' => Piece::Attacker,
                'd' => Piece::Defender,
                'k' => Piece::King,
                other => return Err(bad(format!("row {} (from the top) has `{other}`; use . a d k", i + 1))),
            };
            pieces.push((Square::new(f as u8, rank), piece));
        }
    }
    Ok((geometry, pieces))
}

/// Overlays `top` on `base`, table by table.
fn merge(base: &mut toml::Value, top: &toml::Value) {
    match (base, top) {
        (toml::Value::Table(b), toml::Value::Table(t)) => {
            for (k, v) in t {
                match b.get_mut(k) {
                    Some(bv) if bv.is_table() && v.is_table() => merge(bv, v),
                    _ => {
                        b.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        (b, t) => *b = t.clone(),
    }
}

/// Applies one `path.to.key=value` override to a rules table. The value is read as TOML
/// (`true`, `3`, `["a1"]`), falling back to a bare string (`weak`).
fn apply_override(rules: &mut toml::Value, spec: &str) -> Result<(), String> {
    let (key, value) = spec.split_once('=').ok_or("expected key=value")?;
    let key = key.trim();
    let value = value.trim();
    let parsed: toml::Value =
        format!("v = {value}").parse::<toml::Table>().ok().and_then(|mut t| t.remove("v")).unwrap_or_else(|| toml::Value::String(value.to_string()));
    let mut cur = rules;
    let parts: Vec<&str> = key.split('.').collect();
    for (i, part) in parts.iter().enumerate() {
        let table = cur.as_table_mut().ok_or_else(|| format!("`{key}` is not a rule"))?;
        if !table.contains_key(*part) {
            return Err(format!("unknown rule `{key}`"));
        }
        if i + 1 == parts.len() {
            table.insert((*part).to_string(), parsed);
            return Ok(());
        }
        cur = table.get_mut(*part).expect("checked");
    }
    Err(format!("unknown rule `{key}`"))
}

/// One line for a TOML syntax error: the line number and the message.
fn toml_error_line(text: &str, e: &toml::de::Error) -> String {
    let msg = e.message().trim().replace('\n', " ");
    match e.span() {
        Some(span) => {
            let line = text[..span.start.min(text.len())].matches('\n').count() + 1;
            format!("line {line}: {msg}")
        }
        None => msg,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fingerprints stored in models and shards depend on this form: it must equal
    /// serde_json's compact output for every preset's rules.
    #[test]
    fn rule_sets_serialize_as_serde_json_does() {
        for (name, _) in PRESETS {
            let rules = Variant::preset(name).expect("preset").rules;
            assert_eq!(crate::canonical::to_json(&rules).unwrap(), serde_json::to_string(&rules).unwrap(), "{name}");
        }
    }

    /// Copenhagen: the throne and the corners (hostile to defenders) are the king's captors
    /// when empty; other squares are not. Corners that spare defenders spare the king.
    #[test]
    fn squares_hostile_to_the_king_are_the_throne_and_hostile_corners() {
        let v = Variant::preset("copenhagen").expect("preset");
        let g = v.geometry;
        let hostile: Vec<String> = g.squares().filter(|&s| v.hostile_to_king(s)).map(|s| s.to_string()).collect();
        assert_eq!(hostile, ["a1", "k1", "f6", "a11", "k11"]);
        let mut rules = v.rules.clone();
        rules.corners.hostile_to_defenders = When::Never;
        let spared = v.with_rules(rules).expect("valid rules");
        assert!(!spared.hostile_to_king(Square::new(0, 0)) && spared.hostile_to_king(g.center()));
    }
}
