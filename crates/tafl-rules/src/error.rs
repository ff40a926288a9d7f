//! Error types of the rules layer: small, exact, one line each.

use super::geometry::Square;
use super::types::{Move, Piece};
use std::fmt;

/// A variant that could not be loaded; `origin` names the file, preset or rules string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VariantError {
    pub origin: String,
    pub message: String,
}

impl VariantError {
    pub fn new(origin: &str, message: impl Into<String>) -> VariantError {
        VariantError { origin: origin.to_string(), message: message.into() }
    }
}

impl fmt::Display for VariantError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.origin, self.message)
    }
}
impl std::error::Error for VariantError {}

/// Why a setup is not a legal position of its variant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SetupError {
    /// The position string does not parse.
    Syntax(String),
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
            SetupError::Syntax(m) => f.write_str(m),
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
            MoveError::CaptureMismatch { mv, claimed, actual } => write!(
                f,
                "{mv} claims captures {} but the rules capture {}",
                squares(claimed),
                squares(actual)
            ),
        }
    }
}
impl std::error::Error for MoveError {}
