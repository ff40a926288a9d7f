//! The typed vocabulary of the game: sides, pieces, moves and outcomes.

use crate::geometry::Square;
use crate::parse_error::{ParseError, ParseKind};
use serde::{Deserialize, Serialize};
use std::fmt;

/// One of the two players.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    Attackers,
    Defenders,
}

impl Side {
    /// The other side.
    #[inline]
    pub const fn opponent(self) -> Side {
        match self {
            Side::Attackers => Side::Defenders,
            Side::Defenders => Side::Attackers,
        }
    }
    /// 0 for attackers, 1 for defenders.
    #[inline]
    pub const fn index(self) -> usize {
        self as usize
    }
    /// The name used in the CLI and JSON output.
    pub const fn name(self) -> &'static str {
        match self {
            Side::Attackers => "attackers",
            Side::Defenders => "defenders",
        }
    }
}

impl fmt::Display for Side {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Side {
    type Err = ParseError;
    /// Parses `attackers` / `defenders` (also `attacker`, `a`, `defender`, `d`).
    ///
    /// # Errors
    /// A [`ParseKind::Side`] error naming the text.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "attackers" | "attacker" | "a" => Ok(Side::Attackers),
            "defenders" | "defender" | "d" => Ok(Side::Defenders),
            _ => Err(ParseError::new(ParseKind::Side, s, format!("bad side `{s}` (expected attackers or defenders)"))),
        }
    }
}

/// A kind of piece. The king belongs to the defenders.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Piece {
    Attacker,
    Defender,
    King,
}

impl Piece {
    /// The side that owns the piece.
    #[inline]
    pub const fn side(self) -> Side {
        match self {
            Piece::Attacker => Side::Attackers,
            Piece::Defender | Piece::King => Side::Defenders,
        }
    }
    /// 0, 1, 2 for attacker, defender, king.
    #[inline]
    pub const fn index(self) -> usize {
        self as usize
    }
    /// All kinds.
    pub const ALL: [Piece; 3] = [Piece::Attacker, Piece::Defender, Piece::King];
    /// The layout character (`a`, `d`, `k`).
    pub const fn layout_char(self) -> char {
        match self {
            Piece::Attacker => 'a',
            Piece::Defender => 'd',
            Piece::King => 'k',
        }
    }
    /// The OpenTafl position character (`t`, `T`, `K`).
    pub const fn opentafl_char(self) -> char {
        match self {
            Piece::Attacker => 't',
            Piece::Defender => 'T',
            Piece::King => 'K',
        }
    }
}

/// A move: one piece slides from `from` to `to` along a rank or file.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Move {
    pub from: Square,
    pub to: Square,
}

impl Move {
    /// A move from `from` to `to`.
    pub const fn new(from: Square, to: Square) -> Move {
        Move { from, to }
    }
    /// Number of squares travelled.
    pub fn distance(self) -> u8 {
        self.from.file().abs_diff(self.to.file()) + self.from.rank().abs_diff(self.to.rank())
    }
    /// The direction of travel, or `None` for a move that is not along a line.
    pub fn direction(self) -> Option<crate::geometry::Direction> {
        use crate::geometry::Direction::*;
        let (ff, fr, tf, tr) = (self.from.file(), self.from.rank(), self.to.file(), self.to.rank());
        match (ff == tf, fr == tr) {
            (true, false) => Some(if tr > fr { North } else { South }),
            (false, true) => Some(if tf > ff { East } else { West }),
            _ => None,
        }
    }
}

impl fmt::Display for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.from, self.to)
    }
}
impl fmt::Debug for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// Why a game ended.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// The king reached a corner.
    CornerEscape,
    /// The king reached an edge square (edge-escape variants).
    EdgeEscape,
    /// The attackers captured the king.
    KingCaptured,
    /// The king stands on the edge inside an unbreakable fort (Copenhagen).
    ExitFort,
    /// No defender can reach the edge any more.
    Encirclement,
    /// A position occurred for the third time.
    Repetition,
    /// The side to move had no legal move.
    NoMoves,
    /// The engine's ply cap ended the game (an adjudicated draw).
    PlyCap,
}

impl Reason {
    /// The name used in JSON output and reports.
    pub const fn name(self) -> &'static str {
        match self {
            Reason::CornerEscape => "corner_escape",
            Reason::EdgeEscape => "edge_escape",
            Reason::KingCaptured => "king_captured",
            Reason::ExitFort => "exit_fort",
            Reason::Encirclement => "encirclement",
            Reason::Repetition => "repetition",
            Reason::NoMoves => "no_moves",
            Reason::PlyCap => "ply_cap",
        }
    }
    /// All reasons, in report order.
    pub const ALL: [Reason; 8] = [
        Reason::CornerEscape,
        Reason::EdgeEscape,
        Reason::KingCaptured,
        Reason::ExitFort,
        Reason::Encirclement,
        Reason::Repetition,
        Reason::NoMoves,
        Reason::PlyCap,
    ];
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The end of a game: who won (none for a draw) and why.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Outcome {
    pub winner: Option<Side>,
    pub reason: Reason,
}

impl Outcome {
    /// A win for `side`.
    pub const fn win(side: Side, reason: Reason) -> Outcome {
        Outcome { winner: Some(side), reason }
    }
    /// A draw.
    pub const fn draw(reason: Reason) -> Outcome {
        Outcome { winner: None, reason }
    }
    /// `attackers_win`, `defenders_win` or `draw`.
    pub const fn status_name(self) -> &'static str {
        match self.winner {
            Some(Side::Attackers) => "attackers_win",
            Some(Side::Defenders) => "defenders_win",
            None => "draw",
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.winner {
            Some(s) => write!(f, "{s} win ({})", self.reason),
            None => write!(f, "draw ({})", self.reason),
        }
    }
}
