//! The OpenTafl Engine Protocol (OTEP): line commands on stdin, replies on stdout, so that
//! OpenTafl (or any host speaking it) can play against a tafl-lab model.
//!
//! Host → engine: `hello`, `rules <rules string>`, `start`, `position <position>`,
//! `side <attackers|defenders>`, `clock <att ms>[*] <def ms>[*] <overtime s> <att periods>
//! <def periods>`, `play <side>`, `move <position>` (our move was accepted), `error <1-4>` (our
//! move was refused), `opponent-move <move>[|<move>...] <position>`, `analyze <count> <seconds>`,
//! `finish <code>`, `goodbye`. Engine → host: `hello`, `simple-moves on`, `move <move>`,
//! `analysis <count> <pv> <eval> ...`, `error <code> <reason>`.
//!
//! The protocol defines two error codes for an engine to send: `0` (non-critical: the host
//! shows it and plays on) and `-1` (critical: the host ends the game, resigning for the
//! engine). Every refusal of input is `error 0`; the only `error -1` is `play` after a `rules`
//! this engine refused, so that no move is ever made on the board of an earlier game.
//!
//! Where OpenTafl 0.4.8 (the program) and its protocol text (the spec) disagree, this engine
//! follows the program, because the program is the host it has to play in:
//! - the spec says `clock` follows `play`; the program sends it just before, so `play` uses the
//!   last `clock` received (a host that sends it after gets last turn's clock: a little more
//!   time than it has, which the budget's margins absorb);
//! - after refusing a move the spec sends the prior move in `opponent-move`; the program sends
//!   every move back to the engine's last *submitted* move, which after a refusal is the whole
//!   game. The engine takes its refused move back on `error 1-4` and, for `opponent-move`,
//!   uses the first reading that gives the host's board: the moves played on from its own
//!   position, its own position as it stands (the moves are known already), the moves played
//!   from the start, and at last the host's board without its history;
//! - `rules` strings are read as the program reads them (`ks:`, `tfr:`; see
//!   `tafl_rules::notation`).
//!
//! No input makes the engine panic or exit, except `goodbye` and the end of input. Lines are
//! read as bytes: one that is not UTF-8 is answered `error 0` and the engine reads on.

pub mod htp;

use crate::arena::{Agent, AgentError, AgentSpec};
use crate::rules::notation::{parse_move, parse_position, parse_position_string, parse_rules_string};
use crate::rules::{Piece, Position, Side, Square, Variant};
use std::io::{BufRead, Write};
use std::sync::Arc;
use std::time::Duration;

/// How the engine spends its time.
#[derive(Clone, Debug, PartialEq)]
pub enum TimeControl {
    /// The agent's simulation budget per move, or a share of the host's clock once the host
    /// sends `clock`.
    Simulations,
    /// A fixed time per move (the host's clock is then ignored).
    MoveTime(Duration),
}

/// Engine settings.
pub struct EngineConfig {
    pub agent: AgentSpec,
    /// The variant before any `rules` command (the model's variant when there is one).
    pub variant: Arc<Variant>,
    pub time: TimeControl,
    pub seed: u64,
}

/// One side's time as the host's last `clock` gave it.
#[derive(Clone, Copy, Debug, PartialEq)]
struct SideClock {
    /// Milliseconds of main time left, or of the current overtime period when `overtime`.
    millis: f64,
    /// The host marked the number with `*`: main time is spent.
    overtime: bool,
    /// Overtime periods left.
    periods: u32,
}

/// The host's last `clock`.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Clock {
    attackers: SideClock,
    defenders: SideClock,
    /// Length of one overtime period, in milliseconds.
    period_millis: f64,
}

impl Clock {
    fn of(&self, side: Side) -> SideClock {
        match side {
            Side::Attackers => self.attackers,
            Side::Defenders => self.defenders,
        }
    }
}

/// Time kept back on every move for the pipes and the host's own bookkeeping.
const MARGIN: Duration = Duration::from_millis(100);
/// The least time a move is given, whatever the clock says.
const LEAST: Duration = Duration::from_millis(10);
/// The most time a move is given, whatever the clock says.
const MOST: Duration = Duration::from_secs(60);
/// Main time is spent as if this many moves were still to come.
const MOVES_TO_COME: f64 = 30.0;

/// The protocol state machine.
pub struct Engine {
    cfg: EngineConfig,
    variant: Arc<Variant>,
    agent: Agent,
    position: Position,
    /// Why the last `rules` was refused; while set, nothing is played or analysed, so that no
    /// move is made on the board of an earlier game.
    refused: Option<String>,
    /// The side from the last `side` command (hosts send it for analysis).
    side: Option<Side>,
    clock: Option<Clock>,
    /// The position before our last move, until the host accepts or refuses it.
    before_our_move: Option<Position>,
}

/// Non-critical: the host shows the message and plays on.
const E_NONCRITICAL: i32 = 0;
/// Critical: the host ends the game (OpenTafl resigns for the engine).
const E_CRITICAL: i32 = -1;

/// One line of a host's input (both protocols).
pub(crate) enum InputLine {
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
pub(crate) fn read_line(input: &mut impl BufRead, buf: &mut Vec<u8>) -> std::io::Result<InputLine> {
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
pub(crate) fn not_utf8(lossy: &str) -> String {
    format!("the line is not UTF-8: {:?}", lossy.trim_end_matches(['\n', '\r']))
}

/// Every whitespace-separated token of `text` as a number, or `None` if one is not a number.
fn numbers(text: &str) -> Option<Vec<f64>> {
    text.split_whitespace().map(|x| x.parse().ok()).collect()
}

fn side_of(s: &str) -> Option<Side> {
    match s {
        "attackers" => Some(Side::Attackers),
        "defenders" => Some(Side::Defenders),
        _ => None,
    }
}

/// The pieces of a board, sorted, for comparing a position with the host's position record.
fn sorted(mut pieces: Vec<(Square, Piece)>) -> Vec<(Square, Piece)> {
    pieces.sort_by_key(|(s, p)| (*s, p.opentafl_char()));
    pieces
}

/// Parses a `clock` line: `<att ms>[*] <def ms>[*] [<overtime s> <att periods> <def periods>]`.
fn parse_clock(text: &str) -> Result<Clock, String> {
    let usage = "expected: attacker-ms[*] defender-ms[*] [overtime-seconds attacker-periods defender-periods]";
    let toks: Vec<&str> = text.split_whitespace().collect();
    if !(toks.len() == 2 || toks.len() == 5) {
        return Err(format!("clock {text:?}: {usage}"));
    }
    let num = |t: &str| -> Result<f64, String> {
        match t.parse::<f64>() {
            Ok(x) if x.is_finite() && x >= 0.0 => Ok(x),
            _ => Err(format!("clock {text:?}: {t:?} is not a finite number >= 0; {usage}")),
        }
    };
    let side = |t: &str| -> Result<(f64, bool), String> {
        match t.strip_suffix('*') {
            Some(n) => Ok((num(n)?, true)),
            None => Ok((num(t)?, false)),
        }
    };
    let (att, att_ot) = side(toks[0])?;
    let (def, def_ot) = side(toks[1])?;
    let (period, att_p, def_p) = if toks.len() == 5 { (num(toks[2])?, num(toks[3])?, num(toks[4])?) } else { (0.0, 0.0, 0.0) };
    Ok(Clock {
        attackers: SideClock { millis: att, overtime: att_ot, periods: att_p.min(u32::MAX as f64) as u32 },
        defenders: SideClock { millis: def, overtime: def_ot, periods: def_p.min(u32::MAX as f64) as u32 },
        period_millis: period * 1000.0,
    })
}

/// Time for one move on `clock`: a thirtieth of the main time plus half an overtime period
/// when periods are left, or half of what is left of the current period once in overtime;
/// less [`MARGIN`], within [`LEAST`]..=[`MOST`].
fn clock_budget(clock: &Clock, side: Side) -> Duration {
    let c = clock.of(side);
    let millis = if c.overtime {
        c.millis * 0.5
    } else {
        c.millis / MOVES_TO_COME + if c.periods > 0 { clock.period_millis * 0.5 } else { 0.0 }
    };
    // `parse_clock` admits only finite numbers >= 0, so `millis` is never NaN or negative; it
    // may be huge (`clock 1e300 ...`), so it is capped before it becomes a `Duration`.
    let secs = (millis / 1000.0).min(MOST.as_secs_f64() + MARGIN.as_secs_f64());
    Duration::from_secs_f64(secs).saturating_sub(MARGIN).clamp(LEAST, MOST)
}

/// Time for one move on a Fischer clock (`left` now, `increment` added after the move), the
/// same share [`clock_budget`] gives: the increment counts as one overtime period (HTP's
/// `time_settings fischer`).
pub(crate) fn fischer_budget(left: Duration, increment: Duration) -> Duration {
    let side = SideClock { millis: left.as_secs_f64() * 1000.0, overtime: false, periods: u32::from(!increment.is_zero()) };
    clock_budget(&Clock { attackers: side, defenders: side, period_millis: increment.as_secs_f64() * 1000.0 }, Side::Attackers)
}

impl Engine {
    pub fn new(cfg: EngineConfig) -> Result<Engine, AgentError> {
        let agent = Agent::new(&cfg.agent, &cfg.variant, cfg.seed)?;
        let variant = cfg.variant.clone();
        Ok(Engine {
            position: Position::start(variant.clone()),
            variant,
            agent,
            refused: None,
            side: None,
            clock: None,
            before_our_move: None,
            cfg,
        })
    }

    /// Runs the protocol until `goodbye` or the end of input. A line that is not UTF-8 is
    /// answered `error 0`, and the engine reads on.
    ///
    /// # Errors
    /// Only reading or writing fails.
    pub fn run(&mut self, mut input: impl BufRead, out: &mut impl Write) -> std::io::Result<()> {
        writeln!(out, "hello")?;
        writeln!(out, "simple-moves on")?;
        out.flush()?;
        let mut buf = Vec::new();
        loop {
            let line = match read_line(&mut input, &mut buf)? {
                InputLine::End => break,
                InputLine::Text(line) => line,
                InputLine::NotUtf8(lossy) => {
                    for r in Self::error(E_NONCRITICAL, not_utf8(&lossy)) {
                        writeln!(out, "{r}")?;
                    }
                    out.flush()?;
                    continue;
                }
            };
            let replies = self.handle(line.trim());
            for r in &replies {
                writeln!(out, "{r}")?;
            }
            out.flush()?;
            if line.trim() == "goodbye" {
                break;
            }
        }
        Ok(())
    }

    fn error(code: i32, reason: impl std::fmt::Display) -> Vec<String> {
        vec![format!("error {code} {}", reason.to_string().replace('\n', " "))]
    }

    /// The time for a move of `side`: the fixed move time, a share of the host's clock, or
    /// `None` (the simulation budget) before any clock.
    fn budget(&self, side: Side) -> Option<Duration> {
        match self.cfg.time {
            TimeControl::MoveTime(t) => Some(t),
            TimeControl::Simulations => self.clock.map(|c| clock_budget(&c, side)),
        }
    }

    /// The game as the engine knows it (its history counts repetitions).
    pub fn position(&self) -> &Position {
        &self.position
    }

    /// Handles one command line and returns the replies.
    pub fn handle(&mut self, line: &str) -> Vec<String> {
        let (cmd, rest) = line.split_once(char::is_whitespace).map_or((line, ""), |(c, r)| (c, r.trim()));
        match cmd {
            "" | "hello" | "start" | "goodbye" | "simple-moves" | "status" | "dump" => Vec::new(),
            "rules" => self.rules(rest),
            "position" => self.set_position(rest),
            "side" => self.set_side(rest),
            "clock" => match parse_clock(rest) {
                Ok(c) => {
                    self.clock = Some(c);
                    Vec::new()
                }
                Err(e) => Self::error(E_NONCRITICAL, e),
            },
            "play" => self.play(rest),
            "move" => self.move_accepted(rest),
            "error" => self.move_refused(rest),
            "opponent-move" => self.opponent_move(rest),
            "analyze" => self.analyze(rest),
            "finish" => {
                self.position = Position::start(self.variant.clone());
                self.before_our_move = None;
                self.agent.reset(self.cfg.seed);
                Vec::new()
            }
            other => Self::error(E_NONCRITICAL, format!("unknown command {other:?}")),
        }
    }

    /// `rules`: a new game on these rules, or a refusal that stops all play until rules this
    /// engine can play arrive.
    fn rules(&mut self, text: &str) -> Vec<String> {
        self.before_our_move = None;
        match self.load_rules(text) {
            Ok(()) => {
                self.refused = None;
                Vec::new()
            }
            Err(reason) => {
                let reason = format!("rules not supported: {reason}");
                self.refused = Some(reason.clone());
                Self::error(E_NONCRITICAL, reason)
            }
        }
    }

    fn load_rules(&mut self, text: &str) -> Result<(), String> {
        let v = parse_rules_string(text).map_err(|e| e.to_string())?;
        if self.cfg.agent.uses_model()
            && (v.geometry != self.cfg.variant.geometry || v.rules_fingerprint() != self.cfg.variant.rules_fingerprint())
        {
            let size = self.cfg.variant.geometry.size();
            return Err(format!("the model plays {} ({size}x{size}) and these rules differ", self.cfg.variant.name));
        }
        let variant = Arc::new(v);
        self.agent = Agent::new(&self.cfg.agent, &variant, self.cfg.seed).map_err(|e| e.to_string())?;
        self.position = Position::start(variant.clone());
        self.variant = variant;
        Ok(())
    }

    /// The position with `side` to move, if it differs and that side is not already out of the
    /// game (the host knows whose turn it is).
    fn with_to_move(&self, side: Side) -> Result<Position, String> {
        if self.position.to_move() == side {
            return Ok(self.position.clone());
        }
        let mut setup = self.position.to_setup();
        setup.to_move = side;
        Position::from_setup(self.variant.clone(), &setup).map_err(|e| e.to_string())
    }

    fn set_position(&mut self, text: &str) -> Vec<String> {
        if self.refused.is_some() {
            return Vec::new();
        }
        let record = text.split_whitespace().next().unwrap_or("");
        let to_move = self.side.unwrap_or(self.position.to_move());
        match parse_position(self.variant.clone(), record, to_move) {
            // The board we already have (a host that sends `position` after every
            // `opponent-move`, as tafl-lab's own client does): keep the game's history, so
            // that repetitions still count.
            Ok(p) if p.to_move() == self.position.to_move() && sorted(p.pieces()) == sorted(self.position.pieces()) => Vec::new(),
            Ok(p) => {
                self.position = p;
                self.before_our_move = None;
                Vec::new()
            }
            Err(e) => Self::error(E_NONCRITICAL, format!("position: {e}")),
        }
    }

    /// `side`: the side to move in the position to analyse (OpenTafl sends it after `position`).
    fn set_side(&mut self, text: &str) -> Vec<String> {
        let Some(side) = side_of(text) else {
            return Self::error(E_NONCRITICAL, format!("side {text:?}: expected attackers or defenders"));
        };
        self.side = Some(side);
        if self.refused.is_none() {
            if let Ok(p) = self.with_to_move(side) {
                self.position = p;
            }
        }
        Vec::new()
    }

    fn play(&mut self, text: &str) -> Vec<String> {
        let Some(side) = side_of(text) else {
            return Self::error(E_NONCRITICAL, format!("play {text:?}: expected attackers or defenders"));
        };
        if let Some(reason) = &self.refused {
            // Critical: the host ends the game rather than wait for a move that never comes.
            return Self::error(E_CRITICAL, format!("cannot play: {reason}"));
        }
        if self.position.is_over() {
            return Self::error(E_NONCRITICAL, "the game is over");
        }
        // The host knows whose turn it is: take its word. The rebuilt position decides its own
        // outcome (that side may have no move at all), so check it before searching.
        let pos = match self.with_to_move(side) {
            Ok(p) => p,
            Err(e) => return Self::error(E_NONCRITICAL, format!("play: {e}")),
        };
        if let Some(o) = pos.outcome() {
            return Self::error(E_NONCRITICAL, format!("the {} have no move here: the game is over ({o})", side.name()));
        }
        self.position = pos;
        let time = self.budget(side);
        let Some(mv) = self.agent.choose_for(&self.position, time) else {
            return Self::error(E_NONCRITICAL, format!("the {} have no legal move", side.name()));
        };
        self.before_our_move = Some(self.position.clone());
        self.position.make(mv);
        vec![format!("move {mv}")]
    }

    /// `move <position>`: the host accepted our move. Its board wins should ours differ.
    fn move_accepted(&mut self, text: &str) -> Vec<String> {
        self.before_our_move = None;
        if self.refused.is_some() {
            return Vec::new();
        }
        let Some(record) = text.split_whitespace().next() else {
            return Vec::new();
        };
        if parse_position_string(record).is_ok_and(|(_, pieces)| sorted(pieces) == sorted(self.position.pieces())) {
            return Vec::new();
        }
        match parse_position(self.variant.clone(), record, self.position.to_move()) {
            Ok(p) => {
                self.position = p;
                Vec::new()
            }
            Err(e) => Self::error(E_NONCRITICAL, format!("move: {e}")),
        }
    }

    /// `error <code>` from the host: codes 1-4 refuse our last move, which is taken back.
    fn move_refused(&mut self, text: &str) -> Vec<String> {
        let code = text.split_whitespace().next().and_then(|c| c.parse::<i32>().ok());
        if matches!(code, Some(1..=4)) {
            if let Some(p) = self.before_our_move.take() {
                self.position = p;
            }
        }
        Vec::new()
    }

    /// `opponent-move <moves> <position>`: the moves (oldest first, `|`-separated) the host
    /// played since our last move, and its board after them.
    fn opponent_move(&mut self, text: &str) -> Vec<String> {
        self.before_our_move = None;
        if self.refused.is_some() {
            return Vec::new();
        }
        let mut parts = text.split_whitespace();
        let Some(list) = parts.next() else {
            return Self::error(E_NONCRITICAL, "opponent-move: missing move");
        };
        let g = self.position.geometry();
        let moves = match list.split('|').map(|m| parse_move(m, g).map(|r| r.mv)).collect::<Result<Vec<_>, _>>() {
            Ok(m) => m,
            Err(e) => return Self::error(E_NONCRITICAL, format!("opponent-move: {e}")),
        };
        let host = match parts.next().map(parse_position_string) {
            None => None,
            Some(Ok((_, pieces))) => Some(sorted(pieces)),
            Some(Err(e)) => return Self::error(E_NONCRITICAL, format!("opponent-move: {e}")),
        };
        let fits = |p: &Position| host.as_ref().map_or(true, |h: &Vec<(Square, Piece)>| *h == sorted(p.pieces()));
        let replay = |from: &Position| {
            let mut p = from.clone();
            moves.iter().try_for_each(|&m| p.play(m).map(|_| ())).ok().map(|()| p)
        };
        // The moves played on from our position (the usual case).
        if let Some(p) = replay(&self.position).filter(|p| fits(p)) {
            self.position = p;
            return Vec::new();
        }
        let Some(host) = host.clone() else {
            return Self::error(E_NONCRITICAL, format!("opponent-move: {list} is not legal here"));
        };
        // Our position already is the host's board: the moves are known (a repeat after a
        // refused move). The side to move is the one after the last move.
        let last = *moves.last().expect("split yields at least one move");
        if sorted(self.position.pieces()) == host {
            let mover = self.position.piece_at(last.to).map(Piece::side);
            if let Some(p) = mover.and_then(|s| self.with_to_move(s.opponent()).ok()) {
                self.position = p;
            }
            return Vec::new();
        }
        // The whole game from the start (what OpenTafl sends after refusing a move).
        if let Some(p) = replay(&Position::start(self.variant.clone())).filter(|p| fits(p)) {
            self.position = p;
            return Vec::new();
        }
        // At last the host's board, without its history: the side to move is the one that did
        // not make the last move.
        let mover = host.iter().find(|(s, _)| *s == last.to).map(|(_, p)| p.side());
        let to_move = mover.map_or(self.position.to_move(), Side::opponent);
        match Position::from_setup(
            self.variant.clone(),
            &crate::rules::Setup { size: g.size(), pieces: host, to_move },
        ) {
            Ok(p) => {
                self.position = p;
                Vec::new()
            }
            Err(e) => Self::error(E_NONCRITICAL, format!("opponent-move: {e}")),
        }
    }

    fn analyze(&mut self, text: &str) -> Vec<String> {
        let nums = match numbers(text) {
            Some(n) if n.len() == 2 && n.iter().all(|x| x.is_finite()) && n[0] >= 1.0 && n[1] > 0.0 => n,
            _ => {
                return Self::error(
                    E_NONCRITICAL,
                    format!("analyze {text:?}: expected a move count and seconds (finite, positive)"),
                )
            }
        };
        if let Some(reason) = &self.refused {
            return Self::error(E_NONCRITICAL, format!("cannot analyze: {reason}"));
        }
        if self.position.is_over() {
            return Self::error(E_NONCRITICAL, "the game is over");
        }
        let time = Duration::from_secs_f64(nums[1].min(600.0)).saturating_sub(MARGIN).max(LEAST);
        let Some(r) = self.agent.think_for(&self.position, Some(time)) else {
            // A random player: one move, no evaluation to speak of.
            let Some(mv) = self.agent.choose(&self.position) else {
                return Self::error(E_NONCRITICAL, "no legal move");
            };
            return vec![format!("analysis 1 {mv} 0")];
        };
        let count = (nums[0] as usize).min(r.moves.len()).max(1);
        let mut line = format!("analysis {count}");
        for (i, m) in r.moves.iter().take(count).enumerate() {
            let pv = if i == 0 && r.pv.first() == Some(&m.mv) {
                r.pv.iter().map(|x| x.to_string()).collect::<Vec<_>>().join("|")
            } else {
                m.mv.to_string()
            };
            line.push_str(&format!(" {pv} {:.3}", m.q.unwrap_or(r.value)));
        }
        vec![line]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_numbers_are_milliseconds_and_overtime_is_starred() {
        let c = parse_clock("9487 10000 5 1 1").unwrap();
        assert_eq!(c.attackers, SideClock { millis: 9487.0, overtime: false, periods: 1 });
        assert_eq!(c.period_millis, 5000.0);
        let c = parse_clock("0* 10000 5 0 1").unwrap();
        assert_eq!(c.attackers, SideClock { millis: 0.0, overtime: true, periods: 0 });
        // OpenTafl ends the line with a space.
        assert!(parse_clock("60000 60000 0 0 0 ").is_ok());
        for bad in ["", "1", "1 2 3", "x 2", "1** 2", "-1 2", "nan 2", "1 2 3 4 5 6"] {
            assert!(parse_clock(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_budget_is_a_share_of_the_clock() {
        let budget = |s: &str, side| clock_budget(&parse_clock(s).unwrap(), side);
        // 9.487 s of main time, no overtime: about a thirtieth, not 9487 / 20 seconds.
        let b = budget("9487 60000 0 0 0", Side::Attackers);
        assert!(b > Duration::from_millis(150) && b < Duration::from_millis(400), "{b:?}");
        assert!(budget("9487 60000 0 0 0", Side::Defenders) > b, "each side's own clock");
        // Out of main time with a 5 s period: half the time left in it, less the margin.
        assert_eq!(budget("2000* 10000 5 0 1", Side::Attackers), Duration::from_millis(900));
        // Nothing left: the least time, never zero.
        assert_eq!(budget("0* 10000 5 0 1", Side::Attackers), LEAST);
        assert_eq!(budget("0 0 0 0 0", Side::Defenders), LEAST);
        assert!(budget("3600000000 0 0 0 0", Side::Attackers) <= MOST);
        assert_eq!(budget("1e300 1e300* 1e300 1 1", Side::Attackers), MOST, "huge numbers are capped, not a panic");
        assert_eq!(budget("1e300 1e300* 1e300 1 1", Side::Defenders), MOST);
    }
}
