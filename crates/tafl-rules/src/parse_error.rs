//! [`ParseError`], the one error of every parser of outside text, and its [`ParseKind`].
//!
//! The lowest module of the crate, so that [`crate::geometry`] and [`crate::types`] can fail
//! with it; [`crate::error`] re-exports both beside the check errors, and that is where users
//! find them.

use std::fmt;

/// What a parser was reading when it failed.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum ParseKind {
    /// A square name such as `d4`.
    Square,
    /// A board size (odd, 7..=19).
    BoardSize,
    /// A side name (`attackers`, `defenders`).
    Side,
    /// An OpenTafl position string (`/3t3/.../`).
    Position,
    /// The layout rows of a variant file.
    Layout,
    /// A move record such as `d1-d3` or `g3-e3xe2/f3`.
    Move,
    /// An OpenTafl rules string (`dim:11 ... start:/.../`).
    RulesString,
    /// A variant: a spec, a TOML file, or rules and a layout that do not fit together.
    Variant,
}

impl ParseKind {
    /// A short name for reports.
    pub const fn name(self) -> &'static str {
        match self {
            ParseKind::Square => "square",
            ParseKind::BoardSize => "board size",
            ParseKind::Side => "side",
            ParseKind::Position => "position string",
            ParseKind::Layout => "layout",
            ParseKind::Move => "move record",
            ParseKind::RulesString => "rules string",
            ParseKind::Variant => "variant",
        }
    }
}

impl fmt::Display for ParseKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Longest `input` a [`ParseError`] keeps, in characters; longer inputs are cut and end in `…`
/// (a fuzzer or a pasted file must not make every error kilobytes long).
pub const MAX_INPUT_CHARS: usize = 120;

/// Text from outside that does not parse.
///
/// `Display` shows [`ParseError::message`], one line that names the input or the offending
/// part of it (`bad move `d1-e2`: a move must stay on one rank or file`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// What was being read.
    pub kind: ParseKind,
    /// The text that was being read, cut to [`MAX_INPUT_CHARS`].
    pub input: String,
    /// The one-line reason, as shown to people.
    pub message: String,
}

impl ParseError {
    /// An error reading `input` as a `kind`.
    pub fn new(kind: ParseKind, input: &str, message: impl Into<String>) -> ParseError {
        ParseError { kind, input: shorten(input), message: message.into() }
    }
}

/// `input`, cut to [`MAX_INPUT_CHARS`] characters.
fn shorten(input: &str) -> String {
    match input.char_indices().nth(MAX_INPUT_CHARS) {
        None => input.to_string(),
        Some((cut, _)) => format!("{}…", &input[..cut]),
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}
impl std::error::Error for ParseError {}

/// The one-line text, for callers that collect errors as strings.
impl From<ParseError> for String {
    fn from(e: ParseError) -> String {
        e.message
    }
}
