//! The Hnefatafl Text Protocol (HTP) of the `hnefatafl-copenhagen` programs (version 6.4.1),
//! so that their drivers, or any host speaking it, can play a tafl-lab model.
//!
//! HTP is GTP-shaped: one command per line, whitespace-separated words, `#` starts a comment.
//! A command that succeeds is answered `= <message>`; one that fails `? <reason>` and a blank
//! line; a blank or comment-only line gets no answer. Commands: `board_size 7|11|13`,
//! `first_move ROLE`, `play ROLE FROM TO`, `play ROLE resigns`, `generate_move [ROLE]`,
//! `final_status`, `time_settings un-timed | fischer MINUTES ADD_SECONDS`, `show_board`,
//! `show_board_open_tafl`, `play_from`, `play_to ROLE FROM`, `play_undo`, `known_command X`,
//! `list_commands`, `name`, `version`, `protocol_version`, `quit` (no answer). A role is `a`,
//! `attacker`, `d` or `defender` (or the plural) in any case and is written `attacker` /
//! `defender`; a square is a file letter and a rank number, rank 1 at the bottom (tafl-lab's
//! own notation), read in any case and written in lower case, or upper case on 13x13, as the
//! reference program does. The lines and these spellings are [`crate::protocol::htp`]'s, the
//! codec that tafl-lab's client of other HTP engines uses too.
//!
//! The game itself is tafl-lab's: `board_size` picks the preset of that size (7 `brandubh`,
//! 11 `copenhagen`, 13 `copenhagen-13`) and every move, capture and `final_status` comes from
//! `tafl_rules`, not from the reference program's rules (which differ on 7x7: there it is
//! Copenhagen rules on a Brandubh board). What is kept from the reference is what a host can
//! see: the reply formats, and that on 7x7 the defenders move first (`first_move` changes
//! that). A model only plays its own variant: `board_size` of another variant is refused.
//!
//! Where the reference program is not a model to follow, this engine does otherwise:
//! `generate_move` answers one line (the reference adds a debug line before it and an
//! escape-distance map after it, and panics on 7x7), the end of input ends the engine (the
//! reference reads empty lines forever), and clocks only budget thinking time (the reference
//! also loses a game on time; here `final_status` is the rules' verdict alone).
//!
//! No input line makes the engine panic or exit, except `quit` and the end of input. Lines are
//! read as bytes: one that is not UTF-8 is answered `? the line is not UTF-8: ...` and the
//! engine reads on.

use super::{Answer, EngineConfig, LineEngine, TimeControl};
use crate::arena::{Agent, AgentError};
use crate::protocol::clock::fischer_budget;
use crate::protocol::htp::{self as wire, board_text, captures_text, role_name, Action, Command, Generated, Response, TimeSettings, PROTOCOL_VERSION};
use crate::rules::{Move, Position, Side, Square, Variant};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The commands this engine knows, in the order `list_commands` gives them.
pub use crate::protocol::htp::COMMANDS;

/// The preset HTP's `board_size` stands for.
fn preset_of_size(size: u8) -> Option<&'static str> {
    match size {
        7 => Some("brandubh"),
        11 => Some("copenhagen"),
        13 => Some("copenhagen-13"),
        _ => None,
    }
}

/// Who moves first in a new game: on 7x7 the defenders, as in the reference program;
/// otherwise the variant's own rule.
fn first_side(variant: &Variant) -> Side {
    if variant.geometry.size() == 7 {
        Side::Defenders
    } else {
        variant.rules.first
    }
}

/// The engine's answer to one line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    /// A blank or comment-only line: nothing is written.
    Silent,
    /// `= <message>`.
    Success(String),
    /// `? <reason>` and a blank line.
    Failure(String),
    /// `quit`: nothing is written and the engine stops.
    Quit,
}

/// One step of the game, for `play_undo` (a position per step: boxing it would only add an
/// allocation to each).
#[derive(Clone)]
#[allow(clippy::large_enum_variant)]
enum Step {
    /// A move, with the position before it.
    Move(Position),
    /// A resignation.
    Resign,
}

/// `time_settings fischer`: each side's time left and what is added after each of its moves.
#[derive(Clone, Copy, Debug)]
struct Fischer {
    start: Duration,
    increment: Duration,
    /// Time left, attackers then defenders, as of the start of the current turn.
    left: [Duration; 2],
}

/// The protocol state machine.
pub struct HtpEngine {
    cfg: EngineConfig,
    variant: Arc<Variant>,
    agent: Agent,
    position: Position,
    /// Every step since the game began, for `play_undo`.
    steps: Vec<Step>,
    /// The side that resigned, which ends the game.
    resigned: Option<Side>,
    last: Option<Move>,
    fischer: Option<Fischer>,
    /// When the side to move began its turn (for the clock).
    turn_started: Instant,
}

impl HtpEngine {
    /// An engine with a new game of `cfg.variant`.
    ///
    /// # Errors
    /// The agent cannot be built (a model that does not load, or is for another variant).
    pub fn new(cfg: EngineConfig) -> Result<HtpEngine, AgentError> {
        let agent = Agent::new(&cfg.agent, &cfg.variant, cfg.seed)?;
        let variant = cfg.variant.clone();
        let position = start(&variant, first_side(&variant));
        Ok(HtpEngine { variant, agent, position, steps: Vec::new(), resigned: None, last: None, fischer: None, turn_started: Instant::now(), cfg })
    }

    /// What plays, in words ([`Agent::about`]).
    pub fn about(&self) -> &str {
        self.agent.about()
    }

    /// The current position (the game as the engine sees it).
    pub fn position(&self) -> &Position {
        &self.position
    }

    /// Runs the protocol until `quit` or the end of input. A line that is not UTF-8 is
    /// answered with a failure (`? the line is not UTF-8: ...`), and the engine reads on.
    ///
    /// # Errors
    /// Only reading or writing fails.
    pub fn run(&mut self, input: impl std::io::BufRead, out: &mut impl std::io::Write) -> std::io::Result<()> {
        super::serve(self, input, out)
    }

    /// Handles one line.
    pub fn handle(&mut self, line: &str) -> Reply {
        let cmd = match Command::parse(line) {
            Ok(Some(cmd)) => cmd,
            Ok(None) => return Reply::Silent,
            Err(e) => return Reply::Failure(e.to_string()),
        };
        let result = match cmd {
            Command::BoardSize(size) => self.board_size(size),
            Command::FirstMove(side) => self.first_move(side),
            Command::Play { side, action } => self.play(side, action),
            Command::GenerateMove(side) => self.generate_move(side),
            Command::FinalStatus => Ok(self.final_status().to_string()),
            Command::TimeSettings(t) => self.time_settings(t),
            Command::ShowBoard => Ok(self.show_board()),
            Command::ShowBoardOpenTafl => Ok(board_text(&self.position)),
            Command::PlayFrom => self.play_from(),
            Command::PlayTo { side, from } => self.play_to(side, &from),
            Command::PlayUndo => self.play_undo(),
            Command::KnownCommand(c) => Ok(COMMANDS.contains(&c.as_str()).to_string()),
            Command::ListCommands => Ok(format!("\n{}", COMMANDS.join("\n"))),
            Command::Name => Ok(env!("CARGO_PKG_NAME").to_string()),
            Command::Version => Ok(env!("CARGO_PKG_VERSION").to_string()),
            Command::ProtocolVersion => Ok(PROTOCOL_VERSION.to_string()),
            Command::Quit => return Reply::Quit,
        };
        match result {
            Ok(m) => Reply::Success(m),
            Err(e) => Reply::Failure(e),
        }
    }

    // ----- the game ---------------------------------------------------------------------------

    /// A new game of `variant` with `first` to move; the clock starts again.
    fn new_game(&mut self, variant: Arc<Variant>, first: Side) -> Result<(), String> {
        if !Arc::ptr_eq(&variant, &self.variant) && !self.cfg.agent.uses_model() {
            // A search without a model is built for its variant; a model never changes
            // variant (`board_size` refuses any other).
            self.agent = Agent::new(&self.cfg.agent, &variant, self.cfg.seed).map_err(|e| e.to_string())?;
        }
        self.agent.reset(self.cfg.seed);
        self.position = start(&variant, first);
        self.variant = variant;
        self.steps.clear();
        self.resigned = None;
        self.last = None;
        if let Some(f) = &mut self.fischer {
            f.left = [f.start; 2];
        }
        self.turn_started = Instant::now();
        Ok(())
    }

    fn board_size(&mut self, size: u8) -> Result<String, String> {
        let name = preset_of_size(size).ok_or_else(|| format!("board_size {size}: no preset of this size"))?;
        let variant = if self.variant.name == name { self.variant.clone() } else { Arc::new(Variant::preset(name).map_err(|e| e.to_string())?) };
        if self.cfg.agent.uses_model() && (variant.geometry != self.cfg.variant.geometry || variant.rules_fingerprint() != self.cfg.variant.rules_fingerprint())
        {
            let ours = self.cfg.variant.geometry.size();
            return Err(format!("board_size {size}: the model plays {} ({ours}x{ours}), not {name}", self.cfg.variant.name));
        }
        let first = first_side(&variant);
        self.new_game(variant, first)?;
        Ok(String::new())
    }

    fn first_move(&mut self, side: Side) -> Result<String, String> {
        self.new_game(self.variant.clone(), side)?;
        Ok(String::new())
    }

    /// The game's end, if any: a resignation or the rules' verdict.
    fn winner(&self) -> Option<Option<Side>> {
        match self.resigned {
            Some(side) => Some(Some(side.opponent())),
            None => self.position.outcome().map(|o| o.winner),
        }
    }

    fn final_status(&self) -> &'static str {
        match self.winner() {
            None => "ongoing",
            Some(Some(Side::Attackers)) => "attacker_wins",
            Some(Some(Side::Defenders)) => "defender_wins",
            Some(None) => "draw",
        }
    }

    /// Why no move may be made, if the game is over.
    fn over(&self) -> Option<String> {
        if let Some(side) = self.resigned {
            return Some(format!("the game is over: the {side} resigned"));
        }
        self.position.outcome().map(|o| format!("the game is over: {o}"))
    }

    /// A square of this board, in any case.
    fn square(&self, text: &str) -> Result<Square, String> {
        wire::square(text, self.position.geometry())
    }

    /// A square as HTP writes it: upper case on 13x13, lower case otherwise.
    fn square_name(&self, sq: Square) -> String {
        wire::square_name(sq, self.position.geometry())
    }

    /// Charges the side that just moved with the time its turn took, and starts the next turn.
    fn clock_move(&mut self, mover: Side) {
        let now = Instant::now();
        if let Some(f) = &mut self.fischer {
            let left = &mut f.left[mover.index()];
            *left = left.saturating_sub(now - self.turn_started) + f.increment;
        }
        self.turn_started = now;
    }

    /// Makes a legal move of the side to move and returns the captured squares.
    fn make(&mut self, mv: Move) -> Result<Vec<Square>, String> {
        let before = self.position.clone();
        let mover = before.to_move();
        let captures = self.position.play(mv).map_err(|e| e.to_string())?;
        self.steps.push(Step::Move(before));
        self.last = Some(mv);
        self.clock_move(mover);
        Ok(captures)
    }

    fn play(&mut self, side: Side, action: Action) -> Result<String, String> {
        if let Some(why) = self.over() {
            return Err(format!("play: {why}"));
        }
        let (from, to) = match action {
            Action::Move { from, to } => (from, to),
            Action::Resign => {
                if side != self.position.to_move() {
                    return Err(format!("play: the {side} cannot resign on the {}' turn", self.position.to_move()));
                }
                self.steps.push(Step::Resign);
                self.resigned = Some(side);
                return Ok(String::new());
            }
        };
        let to = to.ok_or("expected: play ROLE FROM TO or play ROLE resigns")?;
        let mv = Move::new(self.square(&from)?, self.square(&to)?);
        let to_move = self.position.to_move();
        if side != to_move {
            return Err(format!("play: it isn't the {side}' turn (the {to_move} are to move)"));
        }
        match self.position.piece_at(mv.from) {
            None => return Err(format!("play: no piece on {}", self.square_name(mv.from))),
            Some(p) if p.side() != side => return Err(format!("play: the piece on {} is not the {side}'", self.square_name(mv.from))),
            Some(_) => {}
        }
        if !self.position.is_legal(mv) {
            return Err(format!("play: {} {} is not legal here", self.square_name(mv.from), self.square_name(mv.to)));
        }
        let captures = self.make(mv)?;
        Ok(captures_text(&captures, self.position.geometry()))
    }

    /// The think time for the side to move: the fixed move time, a share of its Fischer clock,
    /// or `None` (the simulation budget).
    fn budget(&self) -> Option<Duration> {
        match self.cfg.time {
            TimeControl::MoveTime(t) => Some(t),
            TimeControl::Simulations => self.fischer.map(|f| {
                let left = f.left[self.position.to_move().index()].saturating_sub(self.turn_started.elapsed());
                fischer_budget(left, f.increment)
            }),
        }
    }

    fn generate_move(&mut self, side: Option<Side>) -> Result<String, String> {
        let to_move = self.position.to_move();
        if let Some(side) = side {
            if side != to_move {
                return Err(format!("generate_move: it isn't the {side}' turn (the {to_move} are to move)"));
            }
        }
        if let Some(why) = self.over() {
            return Err(format!("generate_move: {why}"));
        }
        let started = Instant::now();
        let time = self.budget();
        // Through the agent's own choice, so that its guard (`guard=`) speaks here too; an
        // agent without a search (random) reports no value.
        let (mv, score, loops) = match self.agent.decide(&self.position, time) {
            Some((m, Some(r))) => (m, r.value, r.simulations),
            Some((m, None)) => (m, 0.0, 0),
            None => return Err("generate_move: no legal move".to_string()),
        };
        let delay = started.elapsed().as_millis();
        self.make(mv)?;
        let notes = format!("score: {score:.3}, delay milliseconds: {delay}, loops: {loops}");
        Ok(Generated::Move { side: to_move, from: self.square_name(mv.from), to: self.square_name(mv.to), notes }.to_string())
    }

    fn time_settings(&mut self, settings: TimeSettings) -> Result<String, String> {
        let fischer = match settings {
            TimeSettings::Untimed => None,
            TimeSettings::Fischer { minutes, add_seconds } => {
                let start = Duration::from_secs(u64::from(minutes) * 60);
                let increment = Duration::from_secs(u64::from(add_seconds));
                Some(Fischer { start, increment, left: [start; 2] })
            }
        };
        // As in the reference program, new time settings start a new game.
        self.fischer = fischer;
        let first = self.position_first();
        self.new_game(self.variant.clone(), first)?;
        Ok(String::new())
    }

    /// Who moved first in the current game.
    fn position_first(&self) -> Side {
        match self.steps.first() {
            Some(Step::Move(p)) => p.to_move(),
            _ if self.position.ply() % 2 == 0 => self.position.to_move(),
            _ => self.position.to_move().opponent(),
        }
    }

    fn play_undo(&mut self) -> Result<String, String> {
        match self.steps.pop() {
            None => Err("play_undo: it is the first move".to_string()),
            Some(Step::Resign) => {
                self.resigned = None;
                Ok(String::new())
            }
            Some(Step::Move(before)) => {
                self.position = before;
                self.last = None;
                self.turn_started = Instant::now();
                Ok(String::new())
            }
        }
    }

    /// The squares the side to move can move from: `ROLE FROM FROM ...`.
    fn play_from(&self) -> Result<String, String> {
        if let Some(why) = self.over() {
            return Err(format!("play_from: {why}"));
        }
        let mut from: Vec<Square> = self.position.legal_moves().iter().map(|m| m.from).collect();
        from.dedup();
        let mut out = role_name(self.position.to_move()).to_string();
        for s in from {
            out.push(' ');
            out.push_str(&self.square_name(s));
        }
        Ok(out)
    }

    /// The squares a piece of the side to move can go to: `TO TO ...`.
    fn play_to(&self, side: Side, from: &str) -> Result<String, String> {
        let from = self.square(from)?;
        if let Some(why) = self.over() {
            return Err(format!("play_to: {why}"));
        }
        if side != self.position.to_move() {
            return Err(format!("play_to: it isn't the {side}' turn"));
        }
        let to: Vec<String> = self.position.legal_moves().iter().filter(|m| m.from == from).map(|m| self.square_name(m.to)).collect();
        if to.is_empty() {
            return Err(format!("play_to: no move from {}", self.square_name(from)));
        }
        Ok(to.join(" "))
    }

    /// tafl-lab's board (the last move marked) and the game's status and turn.
    fn show_board(&self) -> String {
        let board = self.position.board(self.last);
        format!("\n{board}\nstatus: {}\nturn: {}", self.final_status(), role_name(self.position.to_move()))
    }
}

/// The start of `variant` with `first` to move.
fn start(variant: &Arc<Variant>, first: Side) -> Position {
    let mut setup = Position::start(variant.clone()).to_setup();
    setup.to_move = first;
    // The start layout was valid with the other side to move; it is with this one.
    Position::from_setup(variant.clone(), &setup).unwrap_or_else(|_| Position::start(variant.clone()))
}

/// HTP over [`super::serve`]: no greeting; `= <message>`, or `? <reason>` and a blank line;
/// nothing for a blank or comment line; `quit` stops without an answer.
impl LineEngine for HtpEngine {
    fn greeting(&mut self) -> String {
        String::new()
    }

    fn answer(&mut self, line: &str) -> Answer {
        match self.handle(line) {
            Reply::Silent => Answer::default(),
            Reply::Success(m) => Answer { text: Response::Success(m).written(), stop: false },
            Reply::Failure(e) => Answer { text: Response::Failure(e).written(), stop: false },
            Reply::Quit => Answer { text: String::new(), stop: true },
        }
    }

    fn answer_not_utf8(&mut self, reason: String) -> Answer {
        Answer { text: Response::Failure(reason).written(), stop: false }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn engine(variant: &str) -> HtpEngine {
        let variant = Arc::new(Variant::preset(variant).expect("preset"));
        HtpEngine::new(EngineConfig { agent: "mcts:sims=8".parse().unwrap(), variant, time: TimeControl::Simulations, seed: 3 }).unwrap()
    }

    fn ok(e: &mut HtpEngine, line: &str) -> String {
        match e.handle(line) {
            Reply::Success(m) => m,
            r => panic!("{line:?} -> {r:?}"),
        }
    }

    fn fails(e: &mut HtpEngine, line: &str) -> String {
        match e.handle(line) {
            Reply::Failure(m) => m,
            r => panic!("{line:?} -> {r:?}"),
        }
    }

    #[test]
    fn the_start_boards_are_the_reference_programs() {
        // As `show_board_open_tafl` of hnefatafl-text-protocol 6.4.1 prints them.
        let mut e = engine("copenhagen");
        assert_eq!(ok(&mut e, "show_board_open_tafl"), "/3AAAAA3/5A5/11/A4D4A/A3DDD3A/AA1DDKDD1AA/A3DDD3A/A4D4A/11/5A5/3AAAAA3/");
        ok(&mut e, "board_size 7");
        assert_eq!(ok(&mut e, "show_board_open_tafl"), "/3A3/3A3/3D3/AADKDAA/3D3/3A3/3A3/");
        assert_eq!(ok(&mut e, "play_from"), "defender c4 d3 d5 e4");
        ok(&mut e, "board_size 13");
        assert_eq!(ok(&mut e, "show_board_open_tafl"), "/3AAAAAAA3/6A6/13/A5D5A/A5D5A/A4DDD4A/AA1DDDKDDD1AA/A4DDD4A/A5D5A/A5D5A/13/6A6/3AAAAAAA3/");
    }

    #[test]
    fn squares_are_read_in_any_case_and_written_as_the_board_size_wants() {
        let mut e = engine("copenhagen");
        assert_eq!(ok(&mut e, "play A D1 D2"), "");
        assert_eq!(ok(&mut e, "play_to D E5"), "b5 c5 d5 e2 e3 e4");
        ok(&mut e, "board_size 13");
        assert!(ok(&mut e, "generate_move").starts_with("play attacker "), "attackers first on 13x13");
        let r = ok(&mut e, "generate_move");
        let words: Vec<&str> = r.split([' ', ',']).collect();
        assert_eq!(words[1], "defender");
        assert!(words[2].chars().next().unwrap().is_ascii_uppercase(), "{r}");
    }

    #[test]
    fn resignation_ends_the_game_and_undo_takes_it_back() {
        let mut e = engine("brandubh");
        fails(&mut e, "play attacker resigns");
        assert_eq!(ok(&mut e, "play defender resigns"), "");
        assert_eq!(ok(&mut e, "final_status"), "attacker_wins");
        assert!(fails(&mut e, "generate_move").contains("resigned"));
        ok(&mut e, "play_undo");
        assert_eq!(ok(&mut e, "final_status"), "ongoing");
        fails(&mut e, "play_undo");
    }

    #[test]
    fn captures_are_listed_each_with_a_space() {
        let mut e = engine("brandubh");
        ok(&mut e, "first_move attacker");
        // The defender on c5 ends between attackers on b5 and d5.
        for line in ["play a a4 a5", "play d d5 c5", "play a a5 b5"] {
            ok(&mut e, line);
        }
        assert_eq!(ok(&mut e, "play d e4 e5"), "");
        assert_eq!(ok(&mut e, "play a d6 d5"), "c5 ");
    }

    #[test]
    fn no_line_makes_it_panic() {
        // Every command with every pair of awkward arguments, on each board, with the game
        // in progress and over.
        let args = [
            "",
            "a",
            "D",
            "resigns",
            "a1",
            "M13",
            "s19",
            "t1",
            "a0",
            "a-1",
            "a99",
            "Ä1",
            "7",
            "13",
            "0",
            "-1",
            "99999999999999999999",
            "fischer",
            "un-timed",
            "nan",
            "#",
            "\u{0}",
        ];
        let mut e = engine("brandubh");
        for size in ["7", "11", "13"] {
            for cmd in COMMANDS.iter().filter(|&&c| c != "quit").chain(&["", "frobnicate", "\u{feff}"]) {
                for x in args {
                    for y in args {
                        e.handle(&format!("board_size {size}"));
                        let _ = e.handle(&format!("{cmd} {x} {y}"));
                        let _ = e.handle(&format!("{cmd} a {x} {y}"));
                    }
                }
            }
        }
        e.handle("board_size 7");
        e.handle("play d resigns");
        for cmd in COMMANDS.iter().filter(|&&c| c != "quit") {
            let _ = e.handle(&format!("{cmd} d d5 c5"));
        }
        assert_eq!(e.handle("quit"), Reply::Quit);
    }

    #[test]
    fn fischer_time_budgets_a_move() {
        let mut e = engine("brandubh");
        ok(&mut e, "time_settings fischer 1 0");
        let b = e.budget().expect("a clock budget");
        assert!(b > Duration::from_millis(1000) && b <= Duration::from_millis(2000), "{b:?}");
        fails(&mut e, "time_settings fischer -1 0");
        fails(&mut e, "time_settings fischer 1");
        ok(&mut e, "time_settings un-timed");
        assert_eq!(e.budget(), None);
    }
}
