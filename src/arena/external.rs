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

use crate::rules::notation::{parse_move, position_string};
use crate::rules::{Geometry, Move, Piece, Position, Side, Square, Variant};
use serde::Serialize;
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Ipv4Addr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

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
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Fault {
    /// `side` lost by forfeit.
    Forfeit { side: Side, reason: String },
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

impl Fault {
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
            Fault::Forfeit { side, reason } => format!("{side} forfeit: {reason}"),
            Fault::Void { side, reason } => format!("void game (not scored; tafl-lab's side failed, engine plays {side}): {reason}"),
            Fault::Disagreement { side, ply, position, to_move, ours, theirs } => {
                format!("rules disagreement at ply {ply} (engine plays {side}; {to_move} to move in {position}): tafl-lab: {ours}; engine: {theirs}")
            }
        }
    }
}

/// A running child process whose protocol lines arrive on a channel: its stdout, or (an HTP
/// engine client) the TCP connection it opened to tafl-lab.
struct Proc {
    child: Child,
    link: Box<dyn Write + Send>,
    lines: Receiver<String>,
    /// Where both directions are logged, when the spec asks for a transcript.
    transcript: Transcript,
    /// The last lines the child wrote to stderr (engine clients only).
    errors: Option<Arc<Mutex<VecDeque<String>>>>,
}

/// The transcript file of the current game, shared by the referee (lines sent) and the
/// reader thread (lines received); empty when no transcript is kept.
#[derive(Clone, Default)]
struct Transcript(Arc<Mutex<Option<(std::fs::File, Instant)>>>);

impl Transcript {
    /// Starts a new file in `dir` for the next game (its name: protocol, process id, a counter).
    fn begin(&self, dir: &Path, protocol: Protocol, header: &str) -> Result<(), String> {
        use std::sync::atomic::{AtomicU32, Ordering};
        static GAMES: AtomicU32 = AtomicU32::new(0);
        let n = GAMES.fetch_add(1, Ordering::Relaxed);
        let name = format!("{}-{}-{n:04}.log", if protocol == Protocol::Htp { "htp" } else { "otep" }, std::process::id());
        std::fs::create_dir_all(dir).map_err(|e| format!("--engine-log {}: {e}", dir.display()))?;
        let path = dir.join(name);
        let mut f = std::fs::File::create(&path).map_err(|e| format!("--engine-log {}: {e}", path.display()))?;
        let _ = writeln!(f, "# {header}");
        *self.0.lock().expect("transcript lock") = Some((f, Instant::now()));
        Ok(())
    }

    fn write(&self, dir: &str, line: &str) {
        if let Some((f, t0)) = self.0.lock().expect("transcript lock").as_mut() {
            let _ = writeln!(f, "{:9.3} {dir} {line}", t0.elapsed().as_secs_f64());
        }
    }
}

/// Reads `input` line by line on a thread of its own, onto the returned channel (and into
/// `transcript` as `< ` lines).
fn read_lines(input: impl Read + Send + 'static, transcript: Transcript) -> Receiver<String> {
    let (tx, lines) = mpsc::channel();
    std::thread::spawn(move || {
        let mut reader = BufReader::new(input);
        let mut buf = Vec::new();
        loop {
            buf.clear();
            match reader.read_until(b'\n', &mut buf) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    // A line longer than any protocol line is garbage; keep its start.
                    buf.truncate(4096);
                    let line = String::from_utf8_lossy(&buf).trim_end_matches(['\n', '\r']).to_string();
                    transcript.write("<", &line);
                    if tx.send(line).is_err() {
                        break;
                    }
                }
            }
        }
    });
    lines
}

impl Proc {
    fn spawn(cmd: &Path, args: &[String], transcript: Transcript) -> Result<Proc, String> {
        let mut child = Command::new(cmd)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", cmd.display()))?;
        let stdin = child.stdin.take().expect("piped");
        let lines = read_lines(child.stdout.take().expect("piped"), transcript.clone());
        Ok(Proc { child, link: Box::new(stdin), lines, transcript, errors: None })
    }

    /// Starts an HTP engine client with `--host ADDR` and waits until `deadline` for it to
    /// connect to `ADDR:49152`, a loopback address no other game of this machine listens on.
    fn connect(cmd: &Path, args: &[String], deadline: Instant, transcript: Transcript) -> Result<Proc, String> {
        let (listener, ip) = listen_on_loopback()?;
        let mut child = Command::new(cmd)
            .args(args)
            .arg("--host")
            .arg(ip.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", cmd.display()))?;
        // Its stderr, kept to the last lines: a client that refuses a move says why there.
        let errors = Arc::new(Mutex::new(VecDeque::new()));
        let err_lines = read_lines(child.stderr.take().expect("piped"), Transcript::default());
        let keep = errors.clone();
        std::thread::spawn(move || {
            for l in err_lines {
                let mut q = keep.lock().expect("stderr buffer");
                if q.len() == 20 {
                    q.pop_front();
                }
                q.push_back(l);
            }
        });
        listener.set_nonblocking(true).map_err(|e| format!("listening on {ip}: {e}"))?;
        let stream = loop {
            match listener.accept() {
                Ok((stream, _)) => break stream,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(format!("listening on {ip}: {e}")),
            }
            if let Ok(Some(status)) = child.try_wait() {
                return Err(format!("the engine exited ({status}) before it connected to {ip}:{}", ExternalSpec::HTP_CLIENT_PORT));
            }
            if Instant::now() >= deadline {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("it did not connect to {ip}:{} in time", ExternalSpec::HTP_CLIENT_PORT));
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        let io_err = |e: std::io::Error| format!("connection from the engine: {e}");
        stream.set_nonblocking(false).map_err(io_err)?;
        let lines = read_lines(stream.try_clone().map_err(io_err)?, transcript.clone());
        Ok(Proc { child, link: Box::new(stream), lines, transcript, errors: Some(errors) })
    }

    fn send(&mut self, line: &str) -> Result<(), String> {
        self.transcript.write(">", line);
        writeln!(self.link, "{line}").and_then(|_| self.link.flush()).map_err(|_| "the engine exited".to_string())
    }

    /// The next line before `deadline`.
    fn recv(&mut self, deadline: Instant) -> Result<String, String> {
        let wait = deadline.saturating_duration_since(Instant::now());
        match self.lines.recv_timeout(wait) {
            Ok(l) => Ok(l),
            Err(RecvTimeoutError::Timeout) => Err("no answer in time".into()),
            Err(RecvTimeoutError::Disconnected) => {
                // Give the process a moment to be reaped, so that its status can be told.
                let mut status = None;
                for _ in 0..50 {
                    status = self.child.try_wait().ok().flatten();
                    if status.is_some() {
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(10));
                }
                let status = status.map(|s| format!(" ({s})")).unwrap_or_default();
                Err(format!("the engine exited{status}"))
            }
        }
    }

    /// The last line the child wrote to stderr that starts with `prefix`, if any.
    fn stderr_line(&self, prefix: &str) -> Option<String> {
        let q = self.errors.as_ref()?.lock().ok()?;
        q.iter().rev().find(|l| l.starts_with(prefix)).cloned()
    }
}

/// A listener on port 49152 of a loopback address nothing else here listens on: all of
/// 127.0.0.0/8 reaches this machine, so each game can have an address of its own.
fn listen_on_loopback() -> Result<(TcpListener, Ipv4Addr), String> {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    // Start from the process id, so that separate tafl-lab processes try different ones.
    let base = std::process::id().wrapping_mul(7919);
    let mut last = None;
    for _ in 0..64 {
        let n = base.wrapping_add(NEXT.fetch_add(1, Ordering::Relaxed)) % (250 * 250);
        let ip = Ipv4Addr::new(127, 1 + (n / 250) as u8, (n % 250) as u8, 1);
        match TcpListener::bind((ip, ExternalSpec::HTP_CLIENT_PORT)) {
            Ok(l) => return Ok((l, ip)),
            Err(e) => last = Some(e),
        }
    }
    Err(format!("no free loopback address to listen on port {}: {}", ExternalSpec::HTP_CLIENT_PORT, last.map(|e| e.to_string()).unwrap_or_default()))
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
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
}

impl External {
    /// How long an OTEP engine's output must have been silent, after its last move, before it
    /// is sent the next command.
    pub const OTEP_QUIET: Duration = Duration::from_millis(50);
    /// The least time after an OTEP engine's move before its next command.
    pub const OTEP_AFTER_MOVE: Duration = Duration::from_millis(100);
    /// The most time spent waiting for its output to go quiet.
    pub const OTEP_QUIET_LIMIT: Duration = Duration::from_secs(2);
}

/// The result of one exchange: a protocol step either works or ends the game with a fault.
type Step<T> = Result<T, Fault>;

impl External {
    /// Checks that the engine can play `variant` (HTP: 7x7, 11x11 and 13x13 boards; OTEP:
    /// rules an OpenTafl rules string can express). The process starts at the first move.
    pub fn new(spec: ExternalSpec, variant: &Arc<Variant>) -> Result<External, String> {
        let size = variant.geometry.size();
        match spec.protocol {
            Protocol::Htp if ![7, 11, 13].contains(&size) => {
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
        })
    }

    /// Forgets the game (the next move starts a new one with the engine).
    pub fn reset(&mut self) {
        if let (Some(p), true) = (self.proc.as_mut(), self.started) {
            if self.spec.protocol == Protocol::Otep {
                let _ = p.send("finish 0");
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
        let forfeit = |reason: String| Fault::Forfeit { side, reason };
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
            let header = format!("{} game, engine plays {side} from ply {}: {} {}", self.variant.name, pos.ply(), self.spec.cmd.display(), self.spec.args.join(" "));
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
                    return Err(forfeit("an HTP engine plays from the start position: it needs the game's moves".into()));
                }
                self.proc().send(&format!("position {}", position_string(pos))).map_err(forfeit)?;
                self.board = pos.clone();
            }
        }
        let budget = self.budget();
        let deadline = Instant::now() + budget;
        let t0 = Instant::now();
        let mv = match self.spec.protocol {
            Protocol::Htp if self.spec.tcp => self.htp_client_turn(history, side, deadline)?,
            Protocol::Htp => self.htp_turn(history, side, deadline)?,
            Protocol::Otep => self.otep_turn(history, side, deadline, budget)?,
        };
        self.used += t0.elapsed();
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

    fn disagreement(&self, side: Side, pos: &Position, ours: String, theirs: String) -> Fault {
        Fault::Disagreement { side, ply: pos.ply(), position: position_string(pos), to_move: pos.to_move(), ours, theirs }
    }

    fn new_game(&mut self, side: Side) -> Step<()> {
        let forfeit = |reason: String| Fault::Forfeit { side, reason };
        match self.spec.protocol {
            Protocol::Htp if self.spec.tcp => {
                // An engine client answers nothing but `generate_move`; it starts on a fresh
                // 11x11 game, and these two set the board and the first mover.
                let size = self.variant.geometry.size();
                let first = htp_role(self.board.to_move());
                self.proc().send(&format!("board_size {size}")).map_err(forfeit)?;
                self.proc().send(&format!("first_move {first}")).map_err(forfeit)
            }
            Protocol::Htp => {
                let size = self.variant.geometry.size();
                let deadline = Instant::now() + self.spec.move_time;
                // A refused set-up is a disagreement about what can be played, never a forfeit.
                let b = self.board.clone();
                if let Err(e) = self.htp(&format!("board_size {size}"), side, deadline)? {
                    return Err(self.disagreement(side, &b, format!("board_size {size} is these rules' board"), format!("refused it: {e}")));
                }
                let first = htp_role(self.board.to_move());
                if let Err(e) = self.htp(&format!("first_move {first}"), side, deadline)? {
                    return Err(self.disagreement(side, &b, format!("first_move {first}"), format!("refused it: {e}")));
                }
                self.htp_compare_board(side, deadline, "the start position")
            }
            Protocol::Otep => {
                let rules = crate::rules::notation::rules_string(&self.variant).expect("checked in new");
                self.otep_quiet();
                self.proc().send(&format!("rules {rules}")).map_err(forfeit)
            }
        }
    }

    // ----- HTP ---------------------------------------------------------------------------

    /// Sends `cmd` and reads its reply: `Ok(text)` for `= text`, `Err(text)` for `? text`.
    /// Then a `known_command` round trip skips whatever the engine printed after the reply
    /// (boards, escape maps), so the next reply is read in step.
    fn htp(&mut self, cmd: &str, side: Side, deadline: Instant) -> Step<Result<String, String>> {
        let forfeit = |reason: String| Fault::Forfeit { side, reason: format!("{cmd}: {reason}") };
        let p = self.proc();
        p.send(cmd).map_err(forfeit)?;
        let reply = loop {
            let l = p.recv(deadline).map_err(forfeit)?;
            if let Some(rest) = l.strip_prefix('=') {
                break Ok(rest.trim().to_string());
            }
            if let Some(rest) = l.strip_prefix('?') {
                break Err(rest.trim().to_string());
            }
        };
        p.send("known_command tafl-lab-sync").map_err(forfeit)?;
        let sync_deadline = deadline.max(Instant::now() + Duration::from_secs(5));
        while p.recv(sync_deadline).map_err(forfeit)?.trim() != "= false" {}
        Ok(reply)
    }

    fn htp_turn(&mut self, history: &[Move], side: Side, deadline: Instant) -> Step<Move> {
        for &m in &history[self.known.len()..] {
            let before = self.board.clone();
            let mover = before.to_move();
            let cmd = format!("play {} {} {}", htp_role(mover), m.from, m.to);
            let ours = self.board.play(m).map_err(|e| Fault::Void { side, reason: format!("referee: {e}") })?;
            match self.htp(&cmd, side, deadline)? {
                Err(e) => return Err(self.disagreement(side, &before, format!("{m} is legal"), format!("refused it: {e}"))),
                Ok(text) => {
                    let theirs = parse_squares(&text, before.geometry());
                    let mut ours = ours.clone();
                    ours.sort();
                    if theirs.as_ref() != Some(&ours) {
                        return Err(self.disagreement(side, &before, format!("{m} captures {}", squares_text(&ours)), format!("captures: {text:?}")));
                    }
                }
            }
            self.known.push(m);
        }
        let reply = self.htp("generate_move", side, deadline)?;
        let text = match reply {
            Ok(t) => t,
            // hnefatafl-copenhagen's exact words when it finds the game over (its `InvalidMove::
            // GameOver`); any other refusal of generate_move is its failure to move.
            Err(e) if e == "play: the game is already over" => {
                let status = self.htp("final_status", side, deadline)?.unwrap_or_else(|e| format!("? {e}"));
                return Err(self.disagreement(side, &self.board.clone(), "the game goes on".into(), format!("the game is over: {status}")));
            }
            Err(e) => return Err(Fault::Forfeit { side, reason: format!("generate_move: {e}") }),
        };
        let mv = self.read_htp_play(&text, side)?;
        self.take_engine_move(side, mv, &mv.to_string())?;
        if self.board.outcome().is_none() {
            self.htp_compare_board(side, deadline, &format!("after {mv}"))?;
        }
        Ok(mv)
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

    /// Reads `play ROLE FROM TO[, score: ...]` (or a resignation) as `side`'s move.
    fn read_htp_play(&self, text: &str, side: Side) -> Step<Move> {
        let head = text.split(',').next().unwrap_or("").to_lowercase();
        let words: Vec<&str> = head.split_whitespace().collect();
        match words.as_slice() {
            ["play", _, "resigns", ..] | ["play", _, "resign", ..] => Err(Fault::Forfeit { side, reason: "resigned".into() }),
            ["play", role, from, to] => {
                if parse_role(role) != Some(side) {
                    return Err(Fault::Forfeit { side, reason: format!("moved for the other side: {text:?}") });
                }
                let g = self.board.geometry();
                match (g.parse_square(from), g.parse_square(to)) {
                    (Ok(f), Ok(t)) => Ok(Move::new(f, t)),
                    _ => Err(Fault::Forfeit { side, reason: format!("unreadable move {text:?}") }),
                }
            }
            _ => Err(Fault::Forfeit { side, reason: format!("unreadable move {text:?}") }),
        }
    }

    /// A turn of an HTP engine client: the moves it has not seen as `play` lines (no answer
    /// comes), then `generate_move`, answered by one `play ROLE FROM TO` line.
    fn htp_client_turn(&mut self, history: &[Move], side: Side, deadline: Instant) -> Step<Move> {
        let mut last_sent = None;
        for &m in &history[self.known.len()..] {
            let before = self.board.clone();
            let cmd = format!("play {} {} {}", htp_role(before.to_move()), m.from, m.to);
            self.board.play(m).map_err(|e| Fault::Void { side, reason: format!("referee: {e}") })?;
            self.known.push(m);
            last_sent = Some((m, before));
            if let Err(e) = self.proc().send(&cmd) {
                return Err(self.client_gone(side, e, last_sent));
            }
        }
        if let Err(e) = self.proc().send("generate_move") {
            return Err(self.client_gone(side, e, last_sent));
        }
        let text = loop {
            match self.proc().recv(deadline) {
                Ok(l) if l.trim_start().starts_with("play") => break l.trim().to_lowercase(),
                Ok(_) => {}
                Err(e) if e.starts_with("the engine exited") => return Err(self.client_gone(side, e, last_sent)),
                Err(e) => return Err(Fault::Forfeit { side, reason: format!("generate_move: {e}") }),
            }
        };
        let mv = self.read_htp_play(&text, side)?;
        self.take_engine_move(side, mv, &mv.to_string())?;
        Ok(mv)
    }

    /// Why an engine client went away when it should have answered: it refused the last move
    /// sent (`Error: ...` on stderr), it ended the game where tafl-lab plays on (a clean exit:
    /// the client stops when its game is over), or it crashed.
    fn client_gone(&mut self, side: Side, e: String, last_sent: Option<(Move, Position)>) -> Fault {
        // Its stderr is read on another thread; give it a moment to arrive.
        let mut refusal = None;
        for _ in 0..50 {
            refusal = self.proc().stderr_line("Error:");
            if refusal.is_some() || self.proc().child.try_wait().ok().flatten().is_some_and(|s| s.success()) {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let clean = self.proc().child.try_wait().ok().flatten().is_some_and(|s| s.success());
        match (refusal, last_sent) {
            (Some(why), Some((m, before))) => self.disagreement(side, &before, format!("{m} is legal"), format!("refused it: {why}")),
            (None, _) if clean => {
                let b = self.board.clone();
                self.disagreement(side, &b, "the game goes on".into(), "the game is over (it stopped playing)".into())
            }
            (why, _) => {
                let tail = why.or_else(|| self.proc().stderr_line("thread")).map(|l| format!(": {l}")).unwrap_or_default();
                Fault::Forfeit { side, reason: format!("generate_move: {e}{tail}") }
            }
        }
    }

    /// Compares the engine's board (`show_board_open_tafl`, top row first) with tafl-lab's.
    fn htp_compare_board(&mut self, side: Side, deadline: Instant, when: &str) -> Step<()> {
        let theirs = match self.htp("show_board_open_tafl", side, deadline)? {
            Ok(t) => t,
            Err(e) => return Err(Fault::Forfeit { side, reason: format!("show_board_open_tafl: {e}") }),
        };
        let g = self.board.geometry();
        let Some(mut pieces) = parse_htp_board(&theirs, g) else {
            return Err(Fault::Forfeit { side, reason: format!("unreadable board {theirs:?}") });
        };
        let key = |v: &mut Vec<(Square, Piece)>| v.sort_by_key(|&(sq, p)| (sq, p.opentafl_char()));
        let mut ours = self.board.pieces();
        key(&mut ours);
        key(&mut pieces);
        if pieces != ours {
            let b = self.board.clone();
            let theirs_std = crate::rules::notation::pieces_string(g, &pieces);
            return Err(self.disagreement(side, &b, format!("board {when}: {}", position_string(&b)), format!("board {theirs_std}")));
        }
        Ok(())
    }

    // ----- OTEP --------------------------------------------------------------------------

    fn await_hello(&mut self, side: Side) -> Step<()> {
        let deadline = Instant::now() + self.spec.move_time.max(Duration::from_secs(10));
        loop {
            let l = self.proc().recv(deadline).map_err(|e| Fault::Forfeit { side, reason: format!("waiting for hello: {e}") })?;
            if l.trim() == "hello" {
                return Ok(());
            }
        }
    }

    /// OpenTafl's engine mode sends its move, then plays it on its own board, then prints its
    /// search statistics; a command that arrives before that move is played lands on the board
    /// without it, and OpenTafl silently drops an opponent's move it then finds illegal (seen:
    /// an `opponent-move` 33 ms after its `move`; docs/engines.md). So after an engine's move,
    /// its next command waits at least [`External::OTEP_AFTER_MOVE`] and until its output
    /// has been silent for [`External::OTEP_QUIET`] (the statistics come after the move is
    /// played), at most [`External::OTEP_QUIET_LIMIT`]. Lines read here answer nothing: no
    /// `play` is outstanding (they still reach the transcript).
    fn otep_quiet(&mut self) {
        let Some(t) = self.last_move_at.take() else { return };
        let Some(p) = self.proc.as_mut() else { return };
        let limit = t + External::OTEP_QUIET_LIMIT;
        std::thread::sleep((t + External::OTEP_AFTER_MOVE).saturating_duration_since(Instant::now()));
        while Instant::now() < limit {
            match p.lines.recv_timeout(External::OTEP_QUIET.min(limit.saturating_duration_since(Instant::now()))) {
                Ok(_) => continue,
                Err(_) => break,
            }
        }
    }

    fn otep_turn(&mut self, history: &[Move], side: Side, deadline: Instant, budget: Duration) -> Step<Move> {
        let forfeit = |reason: String| Fault::Forfeit { side, reason };
        let unseen = &history[self.known.len()..];
        // One move by the opponent since the engine's last move is an `opponent-move`; any
        // other gap (an opening played before the engine's first turn) is a `position`.
        let mut start = self.board.clone();
        for &m in unseen {
            start.play(m).map_err(|e| Fault::Void { side, reason: format!("referee: {e}") })?;
        }
        // Every turn ends with the whole board as `position`, even after an `opponent-move`
        // that carries it: OpenTafl's engine mode reads only the move of an `opponent-move`,
        // drops it without a word when its own board finds it illegal, and then plays on a
        // board of its own (docs/engines.md). The `opponent-move` before it keeps the engine's
        // game history (repetitions) where the boards agree.
        let board = position_string(&start);
        let mut lines = Vec::new();
        if let ([m], true) = (unseen, self.board.to_move() != side) {
            lines.push(format!("opponent-move {m} {board}"));
        }
        lines.push(format!("position {board}"));
        // What the engine is told this turn, for the report of a refusal.
        let told = if self.known.is_empty() { format!("these rules and {:?}", lines.join("; ")) } else { format!("{:?}", lines.join("; ")) };
        self.board = start;
        self.known.extend_from_slice(unseen);
        let timed = self.spec.game_time.is_some();
        self.otep_quiet();
        let p = self.proc();
        for line in &lines {
            p.send(line).map_err(forfeit)?;
        }
        p.send(&format!("play {}", side.name())).map_err(forfeit)?;
        if timed {
            let ms = budget.as_millis();
            p.send(&format!("clock {ms} {ms} 0 0 0")).map_err(forfeit)?;
        }
        let text = loop {
            let l = self.proc().recv(deadline).map_err(forfeit)?;
            let mut words = l.split_whitespace();
            match (words.next(), words.next()) {
                (Some("move"), Some(m)) => {
                    self.last_move_at = Some(Instant::now());
                    break m.to_string();
                }
                // A Java engine whose search thread died (OpenTafl's does, printing the trace
                // on stdout) would never answer: its forfeit now, with the trace's first line.
                (Some("Exception"), Some("in")) => return Err(forfeit(format!("the engine crashed: {l}"))),
                // An engine answers nothing but errors to what it is sent: whatever the code
                // and whatever the ply, an `error` refuses the rules, the position or the
                // opponent's move tafl-lab sent. A disagreement, never scored.
                (Some("error"), _) => {
                    let b = self.board.clone();
                    return Err(self.disagreement(side, &b, format!("the engine takes {told}"), format!("refused it: {l}")));
                }
                _ => {} // status, analysis, simple-moves, rules echoes: not moves
            }
        };
        let g = self.board.geometry();
        let mv = parse_move(&text, g).map_err(|e| forfeit(format!("unreadable move: {e}")))?.mv;
        self.take_engine_move(side, mv, &text)?;
        let ack = format!("move {}", position_string(&self.board));
        self.proc().send(&ack).map_err(forfeit)?;
        Ok(mv)
    }
}

impl Drop for External {
    fn drop(&mut self) {
        if let Some(p) = self.proc.as_mut() {
            if self.spec.tcp {
                return; // an engine client has no quit; Proc's drop kills it
            }
            let _ = p.send(if self.spec.protocol == Protocol::Otep { "goodbye" } else { "quit" });
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

fn htp_role(side: Side) -> &'static str {
    match side {
        Side::Attackers => "attacker",
        Side::Defenders => "defender",
    }
}

fn parse_role(s: &str) -> Option<Side> {
    match s.to_ascii_lowercase().as_str() {
        "a" | "attacker" | "attackers" => Some(Side::Attackers),
        "d" | "defender" | "defenders" => Some(Side::Defenders),
        _ => None,
    }
}

/// Squares separated by spaces, sorted (`None` if one does not parse).
fn parse_squares(text: &str, g: Geometry) -> Option<Vec<Square>> {
    let mut v: Vec<Square> = text.split_whitespace().map(|s| g.parse_square(&s.to_lowercase()).ok()).collect::<Option<_>>()?;
    v.sort();
    Some(v)
}

fn squares_text(v: &[Square]) -> String {
    if v.is_empty() {
        "nothing".into()
    } else {
        v.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(" ")
    }
}

/// Reads HTP's `show_board_open_tafl`: rows from the top rank down, `A`/`D`/`K` for
/// attacker, defender and king, digits for runs of empty squares. Turned into tafl-lab's
/// position string (rank 1 first, `t`/`T`/`K`) and read by the rules crate's parser.
fn parse_htp_board(s: &str, g: Geometry) -> Option<Vec<(Square, Piece)>> {
    let rows: Vec<&str> = s.trim().trim_matches('/').split('/').collect();
    if rows.len() != g.size() as usize || s.contains(['t', 'T']) {
        return None;
    }
    let ours: String = rows.iter().rev().map(|r| r.replace('A', "t").replace('D', "T")).collect::<Vec<_>>().join("/");
    let (size, pieces) = crate::rules::notation::parse_position_string(&format!("/{ours}/")).ok()?;
    (size == g.size()).then_some(pieces)
}

/// Whether `cmd` names a program: a path that exists, or a name found on `PATH`.
fn command_exists(cmd: &Path) -> bool {
    if cmd.components().count() > 1 {
        return cmd.is_file();
    }
    std::env::var_os("PATH").is_some_and(|paths| std::env::split_paths(&paths).any(|d| d.join(cmd).is_file()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn htp_boards_read_top_rank_first() {
        let v = Arc::new(Variant::preset("brandubh").expect("preset"));
        let g = v.geometry;
        // The 7x7 start in HTP's form: rank 7 first.
        let pieces = parse_htp_board("/3A3/3A3/3D3/AADKDAA/3D3/3A3/3A3/", g).unwrap();
        let key = |v: &mut Vec<(Square, Piece)>| v.sort_by_key(|&(sq, p)| (sq, p.opentafl_char()));
        let mut ours = Position::start(v).pieces();
        key(&mut ours);
        let mut theirs = pieces;
        key(&mut theirs);
        assert_eq!(theirs, ours);
        // One piece moved from d7 to a7: the top row changes, not the bottom one.
        let moved = parse_htp_board("/A6/3A3/3D3/AADKDAA/3D3/3A3/3A3/", g).unwrap();
        assert!(moved.contains(&(g.parse_square("a7").unwrap(), Piece::Attacker)));
        assert!(parse_htp_board("/3A3/", g).is_none());
        assert!(parse_htp_board("/3A4/3A3/3D3/AADKDAA/3D3/3A3/3A3/", g).is_none());
        assert!(parse_htp_board("/3X3/3A3/3D3/AADKDAA/3D3/3A3/3A3/", g).is_none());
    }

    #[test]
    fn capture_lists_parse_in_any_order_and_case() {
        let g = Geometry::new(11).unwrap();
        let a = parse_squares("c8 E8 ", g).unwrap();
        let b = parse_squares("e8 c8", g).unwrap();
        assert_eq!(a, b);
        assert_eq!(parse_squares("", g), Some(vec![]));
        assert_eq!(parse_squares("c8 zz", g), None);
    }
}
