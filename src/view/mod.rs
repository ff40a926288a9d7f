//! The game viewer: one self-contained HTML page (inline CSS, JavaScript and SVG; no network,
//! no external file) that steps through games on the board of their variant.
//!
//! Why the work is split this way: every rule stays in Rust. [`page`] replays each game with
//! the rules crate and embeds, per ply, the move *and the squares it captured* (plus the
//! search's notes where the record has them) as compact JSON; the page's script only moves
//! pieces and removes the captured ones, so it cannot disagree with the rules, and a test can
//! compare its board with `tafl-lab show` square by square. A 200-game match page stays
//! well under 1 MB because a ply costs a few bytes (`d1-d3`, `g3-e3xe2/f3`), not a board.
//!
//! - [`page`]: [`ViewGame`] list → HTML (depends on the rules only).
//! - [`input`]: what `tafl-lab view` reads: move lists, archive CSV, numbered lines and
//!   OpenTafl records, `match --record` files, self-play shards and run directories, and
//!   `balance`'s `games.jsonl`.
//!
//! The page honours a URL fragment, `#game=G&ply=P` (1-based game, ply 0 = the start), and
//! keeps it up to date, so a link can point at a position; `&keys=ArrowRight,Home,...` replays
//! key presses after loading (how the browser tests drive it).

pub mod input;
pub mod page;

use crate::rules::records::RecordResult;
use crate::rules::{Move, Variant};
use std::sync::Arc;

/// What the search said at one position (self-play records have it).
#[derive(Clone, Debug, PartialEq)]
pub struct PlyNote {
    /// The search's value for the side to move, -1..1.
    pub value: f32,
    /// The search's policy over moves (visit shares), any order; the page shows the best few.
    pub policy: Vec<(Move, f32)>,
}

/// One game to show.
#[derive(Clone, Debug)]
pub struct ViewGame {
    /// A short line for the game list (who played, where it came from).
    pub label: String,
    pub variant: Arc<Variant>,
    /// From the variant's start position.
    pub moves: Vec<Move>,
    /// `notes[i]`: the search at the position before move `i` (empty when the record has none).
    pub notes: Vec<Option<PlyNote>>,
    /// How the record says the game ended when the rules did not end it (a resignation, a
    /// loss on time, a forfeit); `None` lets the page say "unfinished".
    pub recorded_end: Option<RecordedEnd>,
}

/// How a record says a game ended that the rules did not end. [`page::game_end`] turns it,
/// with the rules' verdict, into what both the game list and the final status say.
#[derive(Clone, Debug, PartialEq)]
pub struct RecordedEnd {
    /// The result the record states: a winner (a resignation, a loss on time), a draw, or
    /// `Unfinished` when it states only words (a match record's forfeit or void game).
    pub result: RecordResult,
    /// How, in a word or two for the game list beside the result (`resigned`, `timeout`).
    pub how: Option<&'static str>,
    /// The final status's words (`Defenders win by resignation`).
    pub text: String,
}

impl RecordedEnd {
    /// Words alone, with no result (the game counts as unfinished).
    pub fn note(text: impl Into<String>) -> RecordedEnd {
        RecordedEnd { result: RecordResult::Unfinished, how: None, text: text.into() }
    }
}

impl ViewGame {
    /// A game with no search notes.
    pub fn new(label: impl Into<String>, variant: Arc<Variant>, moves: Vec<Move>) -> ViewGame {
        ViewGame { label: label.into(), variant, moves, notes: Vec::new(), recorded_end: None }
    }
}

/// Why a page could not be made: one line naming the input and, where there is one, the game,
/// line or ply.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ViewError(pub String);

impl ViewError {
    pub fn new(message: impl Into<String>) -> ViewError {
        ViewError(message.into())
    }
}
