//! tafl-lab as an engine that other programs drive over stdin and stdout: the OpenTafl Engine
//! Protocol ([`otep`], for OpenTafl) and the Hnefatafl Text Protocol ([`htp`], for the
//! `hnefatafl-copenhagen` programs).
//!
//! Both engines share what is not protocol: one [`EngineConfig`] (the agent, the first
//! variant, the time control, the seed) and one read loop, [`serve`], which reads lines as
//! bytes (a line that is not UTF-8 is refused in the protocol's own words, and the engine reads
//! on), writes each [`Answer`] whole and flushes it, and stops where the protocol says.
//! Each protocol's text (verbs, replies, error codes) is in [`crate::protocol`]; these
//! modules hold the game state and what the engine does with each command.

pub mod htp;
pub mod otep;

pub use otep::Engine;

use crate::arena::AgentSpec;
use crate::protocol::{not_utf8, read_line, InputLine};
use crate::rules::Variant;
use std::io::{BufRead, Write};
use std::sync::Arc;
use std::time::Duration;

/// How the engine spends its time.
#[derive(Clone, Debug, PartialEq)]
pub enum TimeControl {
    /// The agent's simulation budget per move, or a share of the host's clock once the host
    /// sends one (`clock` in OTEP, `time_settings fischer` in HTP).
    Simulations,
    /// A fixed time per move (the host's clock is then ignored).
    MoveTime(Duration),
}

/// Engine settings, the same for both protocols.
pub struct EngineConfig {
    pub agent: AgentSpec,
    /// The variant of the first game (the model's variant when there is one; an HTP engine
    /// without a model starts with `copenhagen`, HTP's default board).
    pub variant: Arc<Variant>,
    pub time: TimeControl,
    pub seed: u64,
}

/// What an engine writes after one input line (nothing, one line or several, each ending in
/// a newline), and whether it then stops.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Answer {
    pub text: String,
    pub stop: bool,
}

impl Answer {
    /// Each of `lines` followed by a newline.
    pub fn lines(lines: &[String], stop: bool) -> Answer {
        Answer { text: lines.iter().map(|l| format!("{l}\n")).collect(), stop }
    }
}

/// A protocol state machine that [`serve`] runs.
pub trait LineEngine {
    /// What the engine writes before reading anything (OTEP's `hello`; nothing in HTP).
    fn greeting(&mut self) -> String;
    /// The answer to one line of input (its newline included).
    fn answer(&mut self, line: &str) -> Answer;
    /// The answer to a line that is not UTF-8; `reason` says so in one line.
    fn answer_not_utf8(&mut self, reason: String) -> Answer;
}

/// Runs `engine` until it stops or the input ends.
///
/// # Errors
/// Only reading or writing fails.
pub fn serve(engine: &mut impl LineEngine, mut input: impl BufRead, out: &mut impl Write) -> std::io::Result<()> {
    let greeting = engine.greeting();
    if !greeting.is_empty() {
        out.write_all(greeting.as_bytes())?;
        out.flush()?;
    }
    let mut buf = Vec::new();
    loop {
        let answer = match read_line(&mut input, &mut buf)? {
            InputLine::End => return Ok(()),
            InputLine::Text(line) => engine.answer(&line),
            InputLine::NotUtf8(lossy) => engine.answer_not_utf8(not_utf8(&lossy)),
        };
        if !answer.text.is_empty() {
            out.write_all(answer.text.as_bytes())?;
            out.flush()?;
        }
        if answer.stop {
            return Ok(());
        }
    }
}
