//! The engine protocols as typed lines: one codec per protocol, used by both sides.
//!
//! tafl-lab speaks each protocol from both ends: as an engine that a host drives
//! (`tafl_lab::engine`) and as the referee that drives another program
//! (`tafl_lab::arena::external`). Both read and write their lines here, so what one side
//! writes is what the other reads, and each protocol's spellings (OTEP's verbs and error codes,
//! HTP's roles, squares and boards) live in one place. Every command and reply parses from a
//! line and formats (`Display`) back to one, and `parse(format(x)) == x` for each of them.
//!
//! - [`otep`]: the OpenTafl Engine Protocol (OpenTafl 0.4.8), one [`otep::Command`] enum for
//!   the lines of both directions;
//! - [`htp`]: the Hnefatafl Text Protocol of `hnefatafl-copenhagen` 6.4.1: commands, the
//!   `=` / `?` responses, `generate_move`'s answer, roles, squares, capture lists and boards;
//! - [`clock`]: OTEP's `clock` and the share of a clock that one move may spend (also HTP's
//!   Fischer clock).
//!
//! What a line means for a game (is the move legal, does the board match) is the caller's:
//! this layer knows only the rules crate's vocabulary (sides, squares, boards), never a game.
//! Move and position records stay text here; they are read against a variant by the caller.

pub mod clock;
pub mod htp;
pub mod otep;

use std::io::BufRead;

/// One line of a host's input, as an engine reads it (both protocols).
pub enum InputLine {
    /// The end of input.
    End,
    /// A line of UTF-8 text, its newline included.
    Text(String),
    /// A line that is not UTF-8, decoded lossily (for the error that answers it).
    NotUtf8(String),
}

/// Reads one line as bytes into `buf`, so that a line that is not UTF-8 is an answer's matter,
/// not an error that ends the engine.
///
/// # Errors
/// Only reading fails.
pub fn read_line(input: &mut impl BufRead, buf: &mut Vec<u8>) -> std::io::Result<InputLine> {
    buf.clear();
    if input.read_until(b'\n', buf)? == 0 {
        return Ok(InputLine::End);
    }
    Ok(match std::str::from_utf8(buf) {
        Ok(text) => InputLine::Text(text.to_string()),
        Err(_) => InputLine::NotUtf8(String::from_utf8_lossy(buf).into_owned()),
    })
}

/// The reason a line that is not UTF-8 is refused, in one line.
pub fn not_utf8(lossy: &str) -> String {
    format!("the line is not UTF-8: {:?}", lossy.trim_end_matches(['\n', '\r']))
}
