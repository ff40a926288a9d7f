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
//!   `tafl_rules::notation`), and the engine's search reads a repetition as the program scores
//!   it (`tfr:dl`, Copenhagen's repetition win, is a draw there: [`crate::arena::AgentSpec::scored_by_opentafl`])
//!   unless the agent spec says `repetition=rules`.
//!
//! No input makes the engine panic or exit, except `goodbye` and the end of input. Lines are
//! read as bytes: one that is not UTF-8 is answered `error 0` and the engine reads on.
//!
//! The lines themselves are read and written by [`crate::protocol::otep`], the codec that
//! tafl-lab's client of other OTEP engines uses too; the clock's share per move is
//! [`crate::protocol::clock`]'s.

use super::{Answer, EngineConfig, LineEngine, TimeControl};
use crate::arena::{Agent, AgentError};
use crate::protocol::clock::{Clock, LEAST, MARGIN};
use crate::protocol::otep::{Command, ParseError, Variation};
use crate::rules::notation::{parse_move, parse_position, parse_position_string, parse_rules_string};
use crate::rules::{Piece, Position, Side, Square, Variant};
use std::sync::Arc;
use std::time::Duration;

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

use crate::protocol::otep::{ERROR_CRITICAL as E_CRITICAL, ERROR_NONCRITICAL as E_NONCRITICAL};

/// The pieces of a board, sorted, for comparing a position with the host's position record.
fn sorted(mut pieces: Vec<(Square, Piece)>) -> Vec<(Square, Piece)> {
    pieces.sort_by_key(|(s, p)| (*s, p.opentafl_char()));
    pieces
}

impl Engine {
    pub fn new(cfg: EngineConfig) -> Result<Engine, AgentError> {
        let agent = Agent::new(&cfg.agent.clone().scored_by_opentafl(&cfg.variant), &cfg.variant, cfg.seed)?;
        let variant = cfg.variant.clone();
        Ok(Engine { position: Position::start(variant.clone()), variant, agent, refused: None, side: None, clock: None, before_our_move: None, cfg })
    }

    /// What plays, in words ([`Agent::about`]).
    pub fn about(&self) -> &str {
        self.agent.about()
    }

    /// Runs the protocol ([`super::serve`]) until `goodbye` or the end of input. A line that
    /// is not UTF-8 is answered `error 0`, and the engine reads on.
    ///
    /// # Errors
    /// Only reading or writing fails.
    pub fn run(&mut self, input: impl std::io::BufRead, out: &mut impl std::io::Write) -> std::io::Result<()> {
        super::serve(self, input, out)
    }

    fn error(code: i32, reason: impl std::fmt::Display) -> Vec<String> {
        vec![Command::Error { code, message: reason.to_string() }.to_string()]
    }

    /// The time for a move of `side`: the fixed move time, a share of the host's clock, or
    /// `None` (the simulation budget) before any clock.
    fn budget(&self, side: Side) -> Option<Duration> {
        match self.cfg.time {
            TimeControl::MoveTime(t) => Some(t),
            TimeControl::Simulations => self.clock.map(|c| c.budget(side)),
        }
    }

    /// The game as the engine knows it (its history counts repetitions).
    pub fn position(&self) -> &Position {
        &self.position
    }

    /// Handles one command line and returns the replies.
    ///
    /// A command whose arguments do not read is refused (`error 0`) when it asks something of
    /// the engine (`side`, `clock`, `play`, `analyze`); past any other the engine reads on as
    /// if it had no arguments (`finish` still ends the game). What only an engine sends
    /// (`analysis`) is an unknown command here; `hello`, `simple-moves`, `status` and `dump`
    /// are read and ignored.
    pub fn handle(&mut self, line: &str) -> Vec<String> {
        let cmd = match Command::parse(line) {
            Ok(Some(cmd)) => cmd,
            Ok(None) => return Vec::new(),
            Err(ParseError::Arguments { verb: "finish", .. }) => return self.finish(),
            Err(ParseError::Arguments { verb: "hello" | "start" | "goodbye" | "simple-moves" | "error", .. }) => return Vec::new(),
            Err(ParseError::Arguments { verb: "analysis", .. }) => return Self::unknown("analysis"),
            Err(e) => return Self::error(E_NONCRITICAL, e),
        };
        match cmd {
            Command::Hello | Command::Start | Command::Goodbye | Command::SimpleMoves(_) | Command::Status(_) | Command::Dump(_) => Vec::new(),
            Command::Rules(text) => self.rules(&text),
            Command::Position(record) => self.set_position(&record),
            Command::Side(side) => self.set_side(side),
            Command::Clock(c) => {
                self.clock = Some(c);
                Vec::new()
            }
            Command::Play(side) => self.play(side),
            Command::Move(record) => self.move_accepted(&record),
            Command::Error { code, .. } => self.move_refused(code),
            Command::OpponentMove { moves, position } => self.opponent_move(&moves, position.as_deref()),
            Command::Analyze { count, seconds } => self.analyze(count, seconds),
            Command::Finish(_) => self.finish(),
            Command::Analysis { .. } => Self::unknown("analysis"),
        }
    }

    fn unknown(verb: &str) -> Vec<String> {
        Self::error(E_NONCRITICAL, ParseError::Unknown(verb.to_string()))
    }

    /// `finish`: the game is over; the next starts from the start position.
    fn finish(&mut self) -> Vec<String> {
        self.position = Position::start(self.variant.clone());
        self.before_our_move = None;
        self.agent.reset(self.cfg.seed);
        Vec::new()
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
        if self.cfg.agent.uses_model() && (v.geometry != self.cfg.variant.geometry || v.rules_fingerprint() != self.cfg.variant.rules_fingerprint()) {
            let size = self.cfg.variant.geometry.size();
            return Err(format!("the model plays {} ({size}x{size}) and these rules differ", self.cfg.variant.name));
        }
        let variant = Arc::new(v);
        self.agent = Agent::new(&self.cfg.agent.clone().scored_by_opentafl(&variant), &variant, self.cfg.seed).map_err(|e| e.to_string())?;
        // On standard error (not protocol): what plays under the host's rules.
        eprintln!("tafl-lab engine: rules {}: {}", variant.name, self.agent.about());
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

    fn set_position(&mut self, record: &str) -> Vec<String> {
        if self.refused.is_some() {
            return Vec::new();
        }
        let to_move = self.side.unwrap_or(self.position.to_move());
        match parse_position(self.variant.clone(), record, to_move) {
            // The board we already have (a host that sends `position` after every
            // `opponent-move`, as tafl-lab's own client does): keep the game's history, so
            // that repetitions still count. (`pieces` walks the squares in order, so equal boards
            // give equal lists.)
            Ok(p) if p.to_move() == self.position.to_move() && p.pieces() == self.position.pieces() => Vec::new(),
            Ok(p) => {
                self.position = p;
                self.before_our_move = None;
                Vec::new()
            }
            Err(e) => Self::error(E_NONCRITICAL, format!("position: {e}")),
        }
    }

    /// `side`: the side to move in the position to analyse (OpenTafl sends it after `position`).
    fn set_side(&mut self, side: Side) -> Vec<String> {
        self.side = Some(side);
        if self.refused.is_none() {
            if let Ok(p) = self.with_to_move(side) {
                self.position = p;
            }
        }
        Vec::new()
    }

    fn play(&mut self, side: Side) -> Vec<String> {
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
        vec![Command::Move(mv.to_string()).to_string()]
    }

    /// `move <position>`: the host accepted our move. Its board wins should ours differ.
    /// An empty record is read as none: the engine reads on.
    fn move_accepted(&mut self, record: &str) -> Vec<String> {
        self.before_our_move = None;
        if self.refused.is_some() || record.is_empty() {
            return Vec::new();
        }
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
    fn move_refused(&mut self, code: i32) -> Vec<String> {
        if matches!(code, 1..=4) {
            if let Some(p) = self.before_our_move.take() {
                self.position = p;
            }
        }
        Vec::new()
    }

    /// `opponent-move <moves> <position>`: the moves (oldest first, `|`-separated) the host
    /// played since our last move, and its board after them.
    fn opponent_move(&mut self, list: &[String], position: Option<&str>) -> Vec<String> {
        self.before_our_move = None;
        if self.refused.is_some() {
            return Vec::new();
        }
        if list.is_empty() {
            return Self::error(E_NONCRITICAL, "opponent-move: missing move");
        }
        let g = self.position.geometry();
        let moves = match list.iter().map(|m| parse_move(m, g).map(|r| r.mv)).collect::<Result<Vec<_>, _>>() {
            Ok(m) => m,
            Err(e) => return Self::error(E_NONCRITICAL, format!("opponent-move: {e}")),
        };
        let host = match position.map(parse_position_string) {
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
            return Self::error(E_NONCRITICAL, format!("opponent-move: {} is not legal here", list.join("|")));
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
        match Position::from_setup(self.variant.clone(), &crate::rules::Setup { size: g.size(), pieces: host, to_move }) {
            Ok(p) => {
                self.position = p;
                Vec::new()
            }
            Err(e) => Self::error(E_NONCRITICAL, format!("opponent-move: {e}")),
        }
    }

    fn analyze(&mut self, count: usize, seconds: f64) -> Vec<String> {
        if let Some(reason) = &self.refused {
            return Self::error(E_NONCRITICAL, format!("cannot analyze: {reason}"));
        }
        if self.position.is_over() {
            return Self::error(E_NONCRITICAL, "the game is over");
        }
        let time = Duration::from_secs_f64(seconds.min(600.0)).saturating_sub(MARGIN).max(LEAST);
        let Some(r) = self.agent.think_for(&self.position, Some(time)) else {
            // A random player: one move, no evaluation to speak of.
            let Some(mv) = self.agent.choose(&self.position) else {
                return Self::error(E_NONCRITICAL, "no legal move");
            };
            let variations = vec![Variation { moves: vec![mv.to_string()], evaluation: "0".into() }];
            return vec![Command::Analysis { count: 1, variations }.to_string()];
        };
        let count = count.min(r.moves.len()).max(1);
        let variations = r
            .moves
            .iter()
            .take(count)
            .enumerate()
            .map(|(i, m)| {
                let moves = if i == 0 && r.pv.first() == Some(&m.mv) { r.pv.iter().map(|x| x.to_string()).collect() } else { vec![m.mv.to_string()] };
                Variation { moves, evaluation: format!("{:.3}", m.q.unwrap_or(r.value)) }
            })
            .collect();
        vec![Command::Analysis { count, variations }.to_string()]
    }
}

/// OTEP over [`super::serve`]: `hello` and `simple-moves on` first; every reply is a line;
/// `goodbye` ends the engine after its (empty) answer; a line that is not UTF-8 is `error 0`.
impl LineEngine for Engine {
    fn greeting(&mut self) -> String {
        format!("{}\n{}\n", Command::Hello, Command::SimpleMoves(true))
    }

    fn answer(&mut self, line: &str) -> Answer {
        let replies = self.handle(line.trim());
        Answer::lines(&replies, matches!(Command::parse(line.trim()), Ok(Some(Command::Goodbye))))
    }

    fn answer_not_utf8(&mut self, reason: String) -> Answer {
        Answer::lines(&Self::error(E_NONCRITICAL, reason), false)
    }
}
