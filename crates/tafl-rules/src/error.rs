//! Error types of the rules layer: small, exact, one line each.
//!
//! Everything read from outside text (square names, board sizes, sides, position strings,
//! layouts, move records, OpenTafl rules strings, variant files and specs) fails with one type,
//! [`ParseError`]: callers that only show the error format it with `{e}`, callers that react
//! to it match on its [`ParseKind`]. Checks of things already parsed have their own enums:
//! [`SetupError`] (a board that is not a legal position), [`MoveError`] (a move that cannot be
//! played) and [`InexpressibleRules`] (rules OpenTafl notation cannot write).

pub use crate::parse_error::{ParseError, ParseKind, MAX_INPUT_CHARS};

use crate::geometry::Square;
use crate::types::{Move, Piece};
use std::fmt;

/// A variant that could not be loaded; the same type as every other parse error (kind
/// [`ParseKind::Variant`], or [`ParseKind::RulesString`] for a rules-string spec), kept under
/// its old name.
pub type VariantError = ParseError;

/// Rules that an OpenTafl rules string cannot express
/// ([`crate::notation::rules_string`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InexpressibleRules {
    /// Corners hostile only while empty.
    CornersHostileWhenEmpty,
    /// Camps hostile even while occupied.
    CampsHostileWhenOccupied,
    /// A king strong on or beside the throne (`strong` or `weak`) where the empty throne is
    /// never hostile to defenders: tafl-lab counts the throne against the king there, OpenTafl
    /// counts it only when it is hostile to defenders.
    ThroneNeverHostileToKing,
}

impl fmt::Display for InexpressibleRules {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InexpressibleRules::CornersHostileWhenEmpty => f.write_str("corners hostile only when empty have no OpenTafl notation"),
            InexpressibleRules::CampsHostileWhenOccupied => f.write_str("camps hostile while occupied have no OpenTafl notation"),
            InexpressibleRules::ThroneNeverHostileToKing => f.write_str(
                "a king strong beside a throne never hostile to defenders has no OpenTafl notation (OpenTafl would not count the throne against him)",
            ),
        }
    }
}
impl std::error::Error for InexpressibleRules {}

/// Why a setup is not a legal position of its variant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SetupError {
    /// The position string does not parse.
    Syntax(ParseError),
    /// A piece off the board.
    OffBoard(Square),
    /// The board size differs from the variant's.
    WrongSize { expected: u8, found: u8 },
    /// Not exactly one king.
    KingCount(usize),
    /// Two pieces on one square.
    Occupied(Square),
    /// A piece on a square it may never stand on.
    Restricted { square: Square, piece: Piece },
}

impl fmt::Display for SetupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SetupError::Syntax(e) => write!(f, "{e}"),
            SetupError::OffBoard(s) => write!(f, "{s} is off the board"),
            SetupError::WrongSize { expected, found } => {
                write!(f, "board is {found}x{found} but the variant is {expected}x{expected}")
            }
            SetupError::KingCount(n) => write!(f, "expected exactly one king, found {n}"),
            SetupError::Occupied(s) => write!(f, "two pieces on {s}"),
            SetupError::Restricted { square, piece } => {
                write!(f, "{piece:?} on {square}, a restricted square it may not occupy")
            }
        }
    }
}
impl std::error::Error for SetupError {}

impl From<ParseError> for SetupError {
    fn from(e: ParseError) -> SetupError {
        SetupError::Syntax(e)
    }
}

/// Why a move cannot be played.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MoveError {
    /// The game is already over.
    GameOver(Move),
    /// Not a legal move in this position.
    Illegal(Move),
    /// A record's capture list differs from what the rules capture.
    CaptureMismatch { mv: Move, claimed: Vec<Square>, actual: Vec<Square> },
}

fn squares(v: &[Square]) -> String {
    if v.is_empty() {
        "none".to_string()
    } else {
        v.iter().map(|s| s.to_string()).collect::<Vec<_>>().join("/")
    }
}

impl fmt::Display for MoveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MoveError::GameOver(m) => write!(f, "{m}: the game is already over"),
            MoveError::Illegal(m) => write!(f, "{m} is not a legal move"),
            MoveError::CaptureMismatch { mv, claimed, actual } => {
                write!(f, "{mv} claims captures {} but the rules capture {}", squares(claimed), squares(actual))
            }
        }
    }
}
impl std::error::Error for MoveError {}
