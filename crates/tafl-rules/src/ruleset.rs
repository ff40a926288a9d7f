//! The rules of a variant as data: one small enum per rule axis.
//!
//! A `RuleSet` maps 1:1 onto the `[rules]` table of a variant TOML file, so every preset is a
//! data file and "Copenhagen without shieldwall" is a struct update (or one line of TOML). The
//! rule set is hashed into every position hash ([`RuleSet::fingerprint`]) and, in later layers,
//! into every model and data file header, so data never meets the wrong rules silently.

use crate::geometry::{Geometry, Square};
use crate::types::Side;
use serde::{Deserialize, Serialize};

/// Where the king escapes to.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Escape {
    /// Any corner square (the 2x2 blocks where corners are blocks).
    Corners,
    /// Any edge square.
    Edge,
}

/// Which pieces a rule about a special square applies to.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Who {
    Nobody,
    King,
    All,
}

impl Who {
    /// Whether the rule admits a king (`is_king`) or another piece.
    #[inline]
    pub const fn admits(self, is_king: bool) -> bool {
        match self {
            Who::Nobody => false,
            Who::King => is_king,
            Who::All => true,
        }
    }
}

/// When a special square acts as a capturing partner against a side.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[derive(Default)]
pub enum When {
    #[default]
    Never,
    WhenEmpty,
    Always,
}

/// The central throne.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Throne {
    /// Whether the board has a throne at all (the centre square).
    pub enabled: bool,
    /// Who may stop on the throne (`nobody` also forbids the king's return).
    pub stop: Who,
    /// Who may pass over the empty throne.
    pub pass: Who,
    /// Hostility to attackers.
    pub hostile_to_attackers: When,
    /// Hostility to defenders (the empty throne always counts against the king in king capture).
    pub hostile_to_defenders: When,
}

/// Shape of the corner squares.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CornerKind {
    /// No special corner squares.
    None,
    /// The four physical corners.
    Single,
    /// 2x2 blocks in each corner (Alea Evangelii).
    Block,
}

/// The corner squares.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Corners {
    pub kind: CornerKind,
    /// Who may enter (stop on or pass) a corner square.
    pub stop: Who,
    pub hostile_to_attackers: When,
    pub hostile_to_defenders: When,
}

/// Camps (Foteviken Tablut): restricted squares that no piece may enter or cross; a piece
/// standing in a camp may move within it and leave it, never return.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Camps {
    pub squares: Vec<Square>,
    pub hostile_to_attackers: When,
    pub hostile_to_defenders: When,
}

/// Whether the king takes part in captures.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KingArmed {
    /// Hammer (moving piece) and anvil (stationary partner).
    Yes,
    /// Never captures.
    No,
    /// Only as the moving piece.
    Hammer,
    /// Only as the stationary partner.
    Anvil,
}

impl KingArmed {
    pub const fn hammer(self) -> bool {
        matches!(self, KingArmed::Yes | KingArmed::Hammer)
    }
    pub const fn anvil(self) -> bool {
        matches!(self, KingArmed::Yes | KingArmed::Anvil)
    }
}

/// How the king is captured.
///
/// The names predate the OpenTafl mapping and stay, since they are part of every rules
/// fingerprint (and so of every model and data header): `Weak` is OpenTafl's `ks:c`, `Strong`
/// its `ks:s` (or `ks:m` with [`KingOnEdge::EdgeCounts`]), `WeakEverywhere` its `ks:w`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KingStrength {
    /// Captured like any piece, except on the throne (4 sides) or beside it (3 + throne).
    Weak,
    /// Four sides everywhere (3 + throne beside the throne).
    Strong,
    /// Captured like any other defender everywhere, the throne included: two attackers (or an
    /// attacker and a square hostile to defenders) on opposite sides.
    WeakEverywhere,
}

/// What the board edge means for a strong king.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KingOnEdge {
    /// A strong king on the edge cannot be captured.
    Safe,
    /// The edge counts as a hostile side.
    EdgeCounts,
}

/// What the third occurrence of a position means.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Repetition {
    /// Ignored.
    None,
    /// Drawn.
    Draw,
    /// The side whose move made it loses.
    MoverLoses,
    /// The side whose move made it wins (what OpenTafl 0.4.8 plays for its `tfr:l`).
    MoverWins,
    /// The defenders lose, whoever moved.
    DefendersLose,
}

/// What having no legal move means.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NoMoves {
    Loses,
    Draw,
}

/// Speed limits: the most squares a piece may travel in one move (0 = unlimited).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Speed {
    pub king: u8,
    pub others: u8,
}

/// The complete rules of a variant, one field per rule axis.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleSet {
    /// The side that moves first.
    pub first: Side,
    pub escape: Escape,
    pub throne: Throne,
    pub corners: Corners,
    pub camps: Camps,
    pub king_armed: KingArmed,
    pub king_strength: KingStrength,
    pub king_on_edge: KingOnEdge,
    /// Copenhagen shieldwall captures along the edge.
    pub shieldwall: bool,
    /// Copenhagen exit fort: an unbreakable fort around the king on the edge wins.
    pub exit_fort: bool,
    /// The attackers win by enclosing every defender.
    pub encirclement: bool,
    pub repetition: Repetition,
    pub no_moves: NoMoves,
    pub speed: Speed,
    /// Plies after which the game is adjudicated a draw; 0 = the default for the board size.
    pub ply_cap: u32,
}

impl Default for RuleSet {
    /// The common rules of `variants.md`: Copenhagen's throne and corners, an armed strong king
    /// safe on the edge, corner escape, encirclement, no shieldwall or fort, draw by repetition.
    fn default() -> Self {
        RuleSet {
            first: Side::Attackers,
            escape: Escape::Corners,
            throne: Throne { enabled: true, stop: Who::King, pass: Who::All, hostile_to_attackers: When::Always, hostile_to_defenders: When::WhenEmpty },
            corners: Corners { kind: CornerKind::Single, stop: Who::King, hostile_to_attackers: When::Always, hostile_to_defenders: When::Always },
            camps: Camps::default(),
            king_armed: KingArmed::Yes,
            king_strength: KingStrength::Strong,
            king_on_edge: KingOnEdge::Safe,
            shieldwall: false,
            exit_fort: false,
            encirclement: true,
            repetition: Repetition::Draw,
            no_moves: NoMoves::Loses,
            speed: Speed::default(),
            ply_cap: 0,
        }
    }
}

impl RuleSet {
    /// The ply cap in force on a board: the configured one, or `4 * size^2` (196 plies on 7x7,
    /// 484 on 11x11), far beyond any real game.
    pub fn effective_ply_cap(&self, geometry: Geometry) -> u32 {
        if self.ply_cap > 0 {
            self.ply_cap
        } else {
            4 * geometry.num_squares() as u32
        }
    }

    /// A stable 64-bit fingerprint of the rules (FNV-1a over the canonical JSON form). It is
    /// mixed into every position hash and written into model and data headers.
    pub fn fingerprint(&self) -> u64 {
        let json = crate::canonical::to_json(self).expect("rule sets are made of what canonical JSON writes");
        fnv1a(json.as_bytes())
    }

    /// The rules as a TOML table (the `[rules]` section of a variant file).
    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("rule sets always serialize")
    }
}

/// FNV-1a, 64 bit: small, stable across Rust versions, good enough for fingerprints.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprint_changes_with_any_axis() {
        let a = RuleSet::default();
        let b = RuleSet { shieldwall: true, ..RuleSet::default() };
        let c = RuleSet { speed: Speed { king: 1, others: 0 }, ..RuleSet::default() };
        assert_ne!(a.fingerprint(), b.fingerprint());
        assert_ne!(a.fingerprint(), c.fingerprint());
        assert_eq!(a.fingerprint(), RuleSet::default().fingerprint());
    }

    #[test]
    fn toml_round_trip() {
        let a = RuleSet { repetition: Repetition::DefendersLose, ..RuleSet::default() };
        let back: RuleSet = toml::from_str(&a.to_toml()).unwrap();
        assert_eq!(a, back);
    }
}
