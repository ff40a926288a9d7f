//! External engines as agents: programs that speak HTP (the Hnefatafl Text Protocol of
//! `hnefatafl-copenhagen`) or OTEP (the OpenTafl Engine Protocol), run as child processes.
//!
//! tafl-lab referees every game with its own rules. It keeps the game, sends the engine the
//! moves it has not seen, asks for a move and checks it. What can go wrong ends the game in
//! one of three ways ([`Fault`]), and only one of them is ever scored:
//! - a **rules disagreement**: the engine plays a move tafl-lab finds illegal, refuses a move
//!   tafl-lab found legal, reports other captures than tafl-lab's, ends the game where
//!   tafl-lab plays on, or (HTP) shows a board that differs from tafl-lab's. It is recorded
//!   with the position and both views and never scored: neither program is known to be wrong.
//!   Every refusal of what tafl-lab sent (OTEP `error` to `rules`, `position` or
//!   `opponent-move`, at any ply; HTP `?` to `board_size`, `first_move` or `play`) is one;
//! - a **void** game: tafl-lab's own side failed (its referee could not replay a move, the
//!   engine's program could not be started, no loopback address was free). Never scored:
//!   such a failure must not turn into a win for tafl-lab;
//! - a **forfeit**: the engine crashes, answers nothing within its time, resigns, or prints
//!   something that is not a move. The engine loses that game, and its process is restarted
//!   for the next one.
//!
//! The child's stdout is read on a thread of its own, so a silent or flooding engine cannot
//! block the referee past its deadline; stderr is discarded (engines log there).
//!
//! An HTP engine can also be an **engine client** (`tcp=1`): `hnefatafl-text-protocol --host
//! ADDR` connects to `ADDR:49152`, the port hnefatafl.org's server uses, and plays with any of
//! its AIs (`--ai monte-carlo` only works this way). tafl-lab then listens on a free loopback
//! address of its own (127.x.y.z, so parallel games do not collide on the fixed port), adds
//! `--host` to the engine's arguments and speaks the server's side of the protocol: `play`
//! lines that get no answer, `generate_move` answered by one bare `play ROLE FROM TO` line.
//! Such a client checks nothing aloud, so captures and boards are not compared; a move it
//! refuses ends its process with `Error: ...` on stderr, which is kept to tell that refusal (a
//! disagreement) from a crash (a forfeit). Each game gets a fresh process.
//!
//! This file is the referee's side, whatever the protocol: the spec, the faults, the game the
//! engine knows and when a new one starts. `transport.rs` holds the process, the TCP
//! listener and the line reader; `otep.rs` and `htp.rs` are one client per protocol, each
//! reading and writing its lines through [`crate::protocol`].

mod htp;
mod otep;
mod transport;

use crate::protocol;
use crate::rules::notation::position_string;
use crate::rules::{Move, Position, Side, Variant};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use transport::{Proc, Transcript};

/// The protocol an external engine speaks.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Protocol {
    Htp,
    Otep,
}

/// How to run an external engine.
#[derive(Clone, Debug, PartialEq)]
pub struct ExternalSpec {
    pub protocol: Protocol,
    pub cmd: PathBuf,
    pub args: Vec<String>,
    /// Most time the engine may take for one move before it forfeits the game.
    pub move_time: Duration,
    /// Most time for all its moves in one game (`None`: no game limit). OTEP engines are sent
    /// the remaining time as their clock.
    pub game_time: Option<Duration>,
    /// HTP only: the engine is an engine client that connects to tafl-lab over TCP
    /// (`hnefatafl-text-protocol --host`), not a program that reads commands on stdin.
    pub tcp: bool,
    /// A folder to keep a transcript of every game in (`match --engine-log DIR`): one file per
    /// game, each line stamped with the seconds since the game began, `> ` for what tafl-lab
    /// sent, `< ` for what the engine wrote. Not part of the agent's identity.
    pub log: Option<PathBuf>,
}

impl ExternalSpec {
    /// Default limit per move.
    pub const DEFAULT_MOVE_SECONDS: f64 = 30.0;
    /// The port an HTP engine client connects to (`hnefatafl-text-protocol --host ADDR`
    /// dials `ADDR:49152`; the port is not an option of that program).
    pub const HTP_CLIENT_PORT: u16 = 49152;
}

/// Why a game ended without a result from the rules.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Fault {
    /// `side` lost by forfeit, for `cause`.
    Forfeit {
        side: Side,
        /// Absent from records written before causes were recorded.
        #[serde(default)]
        cause: ForfeitCause,
        reason: String,
    },
    /// tafl-lab's side failed while an engine played `side`: the game is not scored.
    Void { side: Side, reason: String },
    /// tafl-lab and the engine (playing `side`) read the rules differently at `ply`.
    Disagreement {
        side: Side,
        ply: u32,
        /// The position (OpenTafl position string) before the disputed move or report.
        position: String,
        to_move: Side,
        /// What tafl-lab's rules say.
        ours: String,
        /// What the engine said or did.
        theirs: String,
    },
}

/// Why a side forfeited: what a report counts apart.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ForfeitCause {
    /// It resigned.
    Resigned,
    /// It did not answer within its time.
    Time,
    /// Its process exited or its connection closed while it owed an answer.
    Crash,
    /// It answered with something that is not a move of its side.
    Illegal,
    /// It refused to move (an error instead of a move).
    Refused,
    /// Recorded before causes were (an older record).
    #[default]
    Unrecorded,
}

impl ForfeitCause {
    pub const ALL: [ForfeitCause; 6] =
        [ForfeitCause::Resigned, ForfeitCause::Time, ForfeitCause::Crash, ForfeitCause::Illegal, ForfeitCause::Refused, ForfeitCause::Unrecorded];

    pub fn name(self) -> &'static str {
        match self {
            ForfeitCause::Resigned => "resigned",
            ForfeitCause::Time => "time",
            ForfeitCause::Crash => "crash",
            ForfeitCause::Illegal => "illegal",
            ForfeitCause::Refused => "refused",
            ForfeitCause::Unrecorded => "unrecorded",
        }
    }
}

impl Fault {
    /// A forfeit of `side` for a failure to talk to its engine (`what` was under way).
    pub fn transport(side: Side, what: &str, e: &transport::TransportError) -> Fault {
        let reason = if what.is_empty() { e.to_string() } else { format!("{what}: {e}") };
        Fault::Forfeit { side, cause: e.cause(), reason }
    }

    /// The kind a report counts: a forfeit's cause (`resigned`, `time`, `crash`, `illegal`,
    /// `refused`), `void` or `disagreement`.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Fault::Forfeit { cause, .. } => cause.name(),
            Fault::Void { .. } => "void",
            Fault::Disagreement { .. } => "disagreement",
        }
    }

    /// The side that faulted.
    pub fn side(&self) -> Side {
        match self {
            Fault::Forfeit { side, .. } | Fault::Void { side, .. } | Fault::Disagreement { side, .. } => *side,
        }
    }

    /// The winner the fault gives: `Some(winner)` for a forfeit, `None` for a disagreement
    /// or a void game (never scored).
    pub fn winner(&self) -> Option<Side> {
        match self {
            Fault::Forfeit { side, .. } => Some(side.opponent()),
            Fault::Disagreement { .. } | Fault::Void { .. } => None,
        }
    }

    /// One line for logs and reports.
    pub fn describe(&self) -> String {
        match self {
            Fault::Forfeit { side, cause, reason } => format!("{side} forfeit ({}): {reason}", cause.name()),
            Fault::Void { side, reason } => format!("void game (not scored; tafl-lab's side failed, engine plays {side}): {reason}"),
            Fault::Disagreement { side, ply, position, to_move, ours, theirs } => {
                format!("rules disagreement at ply {ply} (engine plays {side}; {to_move} to move in {position}): tafl-lab: {ours}; engine: {theirs}")
            }
        }
    }
}

/// An external engine playing one side at a time, kept in step with the referee's game.
pub struct External {
    spec: ExternalSpec,
    variant: Arc<Variant>,
    proc: Option<Proc>,
    /// The moves the engine knows, from the start position.
    known: Vec<Move>,
    /// The position after `known`.
    board: Position,
    /// Whether the engine has been told about the current game.
    started: bool,
    /// The engine's time used in this game.
    used: Duration,
    /// The current game's transcript (kept when the spec names a log folder).
    transcript: Transcript,
    /// When the engine last sent a move: OTEP commands wait a moment after it (see
    /// [`External::OTEP_QUIET`]).
    last_move_at: Option<Instant>,
    /// When this turn's move arrived: the engine's clock stops there, so tafl-lab's own
    /// checks after it (an HTP board comparison) do not count as the engine's time.
    move_arrived: Option<Instant>,
}

impl External {
    /// How long an OTEP engine's output must have been silent, after its last move, before it
    /// is sent the next command.
    pub const OTEP_QUIET: Duration = Duration::from_millis(50);
    /// The least time after an OTEP engine's move before its next command.
    pub const OTEP_AFTER_MOVE: Duration = Duration::from_millis(100);
    /// The most time spent waiting for its output to go quiet.
    pub const OTEP_QUIET_LIMIT: Duration = Duration::from_secs(2);
    /// Time for an answer to a check only tafl-lab needs (the HTP board comparison after a
    /// move), on tafl-lab's clock rather than the engine's.
    pub const CHECK_TIME: Duration = Duration::from_secs(10);
}

/// The result of one exchange: a protocol step either works or ends the game with a fault.
type Step<T> = Result<T, Fault>;

impl External {
    /// Checks that the engine can play `variant` (HTP: 7x7, 11x11 and 13x13 boards; OTEP:
    /// rules an OpenTafl rules string can express). The process starts at the first move.
    pub fn new(spec: ExternalSpec, variant: &Arc<Variant>) -> Result<External, String> {
        let size = variant.geometry.size();
        match spec.protocol {
            Protocol::Htp if !protocol::htp::SIZES.contains(&size) => {
                return Err(format!("HTP engines play 7x7, 11x11 and 13x13 boards; {} is {size}x{size}", variant.name))
            }
            Protocol::Otep => {
                crate::rules::notation::rules_string(variant).map_err(|e| format!("{}: {e}", variant.name))?;
            }
            _ => {}
        }
        if !command_exists(&spec.cmd) {
            return Err(format!("cmd={}: no such program", spec.cmd.display()));
        }
        Ok(External {
            board: Position::start(variant.clone()),
            spec,
            variant: variant.clone(),
            proc: None,
            known: Vec::new(),
            started: false,
            used: Duration::ZERO,
            transcript: Transcript::default(),
            last_move_at: None,
            move_arrived: None,
        })
    }

    /// Forgets the game (the next move starts a new one with the engine).
    pub fn reset(&mut self) {
        if let (Some(p), true) = (self.proc.as_mut(), self.started) {
            if self.spec.protocol == Protocol::Otep {
                let _ = p.send(&protocol::otep::Command::Finish(0).to_string());
            }
        }
        if self.spec.tcp {
            self.proc = None;
        }
        self.started = false;
        self.known.clear();
        self.board = Position::start(self.variant.clone());
        self.used = Duration::ZERO;
    }

    /// The engine's move in `pos`, reached from the start position by `history`. A fault
    /// ends the game; the process is then dropped and restarted for the next game.
    pub fn respond(&mut self, pos: &Position, history: &[Move]) -> Step<Move> {
        let side = pos.to_move();
        let result = self.respond_inner(pos, history, side);
        if result.is_err() {
            self.proc = None;
            self.started = false;
        }
        result
    }

    fn respond_inner(&mut self, pos: &Position, history: &[Move], side: Side) -> Step<Move> {
        // A position the history does not lead to (analysis of a set-up position) is given
        // to an OTEP engine as such; HTP has no command to set up a position.
        let mut reached = Position::start(self.variant.clone());
        let detached = history.iter().any(|&m| reached.play(m).is_err()) || reached.hash() != pos.hash() || reached.to_move() != pos.to_move();
        let history = if detached { &[][..] } else { history };
        let new_game = detached || !self.started || !history.starts_with(&self.known);
        if new_game && self.spec.tcp {
            // An engine client plays one game and exits: each game gets a fresh one.
            self.proc = None;
        }
        if let (true, Some(dir)) = (new_game, &self.spec.log) {
            let header =
                format!("{} game, engine plays {side} from ply {}: {} {}", self.variant.name, pos.ply(), self.spec.cmd.display(), self.spec.args.join(" "));
            self.transcript.begin(dir, self.spec.protocol, &header).map_err(|reason| Fault::Void { side, reason })?;
        }
        if self.proc.is_none() {
            let t = self.transcript.clone();
            let proc = if self.spec.tcp {
                Proc::connect(&self.spec.cmd, &self.spec.args, Instant::now() + self.spec.move_time.max(Duration::from_secs(10)), t)
            } else {
                Proc::spawn(&self.spec.cmd, &self.spec.args, t)
            };
            // Not starting the engine, or finding no address for it, is not the engine's loss.
            self.proc = Some(proc.map_err(|reason| Fault::Void { side, reason })?);
            self.started = false;
            if self.spec.protocol == Protocol::Otep {
                self.await_hello(side)?;
            }
        }
        if new_game {
            self.known.clear();
            self.board = Position::start(self.variant.clone());
            self.new_game(side)?;
            self.started = !detached;
            if detached {
                if self.spec.protocol == Protocol::Htp {
                    // What tafl-lab cannot give it, not the engine's failure.
                    return Err(Fault::Void { side, reason: "an HTP engine plays from the start position: it needs the game's moves".into() });
                }
                // The OTEP turn sends this board as `position` before `play`, as every turn.
                self.board = pos.clone();
            }
        }
        // tafl-lab's wait for an OTEP engine's output to go quiet is not the engine's time.
        if self.spec.protocol == Protocol::Otep {
            self.otep_quiet();
        }
        let budget = self.budget();
        let deadline = Instant::now() + budget;
        let t0 = Instant::now();
        self.move_arrived = None;
        let mv = match self.spec.protocol {
            Protocol::Htp if self.spec.tcp => self.htp_client_turn(history, side, deadline)?,
            Protocol::Htp => self.htp_turn(history, side, deadline)?,
            Protocol::Otep => self.otep_turn(history, side, deadline, budget)?,
        };
        self.used += self.move_arrived.take().unwrap_or_else(Instant::now).saturating_duration_since(t0);
        if !pos.is_legal(mv) {
            return Err(self.disagreement(side, pos, format!("{mv} is not a legal move"), format!("played {mv}")));
        }
        Ok(mv)
    }

    /// Time for this move: the move limit, or what is left of the game limit if less.
    fn budget(&self) -> Duration {
        match self.spec.game_time {
            Some(g) => self.spec.move_time.min(g.saturating_sub(self.used)),
            None => self.spec.move_time,
        }
    }

    fn proc(&mut self) -> &mut Proc {
        self.proc.as_mut().expect("started before use")
    }

    /// A game the rules ended in `pos` (reached by `history`) that this engine (playing
    /// `side`) scores otherwise: a disagreement, listed apart. OTEP engines (OpenTafl) are
    /// known to differ on the endings that tafl-lab's own rules-string keys describe
    /// ([`crate::rules::notation::opentafl_scores_otherwise`]).
    ///
    /// An HTP engine on stdin is asked: it is sent the moves it has not seen (tafl-lab's final
    /// move among them) and `final_status`, and another reading of the end is a disagreement.
    pub fn disputed_ending(&mut self, pos: &Position, history: &[Move], side: Side) -> Option<Fault> {
        let outcome = pos.outcome()?;
        match self.spec.protocol {
            Protocol::Htp if !self.spec.tcp => return self.htp_confirm_ending(pos, history, side),
            Protocol::Htp => return None,
            Protocol::Otep => {}
        }
        let theirs = crate::rules::notation::opentafl_scores_otherwise(&self.variant.rules, &outcome)?;
        Some(Fault::Disagreement {
            side,
            ply: pos.ply(),
            position: position_string(pos),
            to_move: pos.to_move(),
            ours: outcome.to_string(),
            theirs: theirs.into(),
        })
    }

    fn disagreement(&self, side: Side, pos: &Position, ours: String, theirs: String) -> Fault {
        Fault::Disagreement { side, ply: pos.ply(), position: position_string(pos), to_move: pos.to_move(), ours, theirs }
    }

    fn new_game(&mut self, side: Side) -> Step<()> {
        match self.spec.protocol {
            Protocol::Htp if self.spec.tcp => self.htp_client_new_game(side),
            Protocol::Htp => self.htp_new_game(side),
            Protocol::Otep => self.otep_new_game(side),
        }
    }

    /// Plays the engine's move `mv` (written `played` by the engine) on the engine's board, or
    /// ends the game as a disagreement if tafl-lab's rules find it illegal there.
    fn take_engine_move(&mut self, side: Side, mv: Move, played: &str) -> Step<()> {
        if !self.board.is_legal(mv) {
            let before = self.board.clone();
            return Err(self.disagreement(side, &before, format!("{mv} is not a legal move"), format!("played {played}")));
        }
        self.board.play(mv).expect("legal");
        self.known.push(mv);
        Ok(())
    }
}

impl Drop for External {
    fn drop(&mut self) {
        if let Some(p) = self.proc.as_mut() {
            if self.spec.tcp {
                return; // an engine client has no quit; Proc's drop kills it
            }
            let bye = match self.spec.protocol {
                Protocol::Otep => protocol::otep::Command::Goodbye.to_string(),
                Protocol::Htp => protocol::htp::Command::Quit.to_string(),
            };
            let _ = p.send(&bye);
            // Give it a moment to exit on its own; Proc's drop kills it otherwise.
            let deadline = Instant::now() + Duration::from_millis(500);
            while Instant::now() < deadline {
                if p.child.try_wait().ok().flatten().is_some() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        }
    }
}

/// Whether `cmd` names a program: a path that exists, or a name found on `PATH`.
fn command_exists(cmd: &Path) -> bool {
    if cmd.components().count() > 1 {
        return cmd.is_file();
    }
    std::env::var_os("PATH").is_some_and(|paths| std::env::split_paths(&paths).any(|d| d.join(cmd).is_file()))
}
