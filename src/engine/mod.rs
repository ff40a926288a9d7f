//! The OpenTafl Engine Protocol (OTEP): line commands on stdin, replies on stdout, so that
//! OpenTafl (or any host speaking it) can play against a tafl-lab model.
//!
//! Host → engine: `hello`, `rules <rules string>`, `start`, `position <position>`,
//! `side <attackers|defenders>`, `clock <att s> <def s> <overtime s> <att ot> <def ot>`,
//! `play <side>`, `opponent-move <move> [<position>]`, `analyze <count> <seconds>`,
//! `finish <code>`, `goodbye`. Engine → host: `hello`, `simple-moves on`, `move <move>`,
//! `analysis <count> <pv> <eval> ...`, `error <code> <reason>`.
//!
//! Error codes follow the protocol (0 rules not supported, 3 illegal move); tafl-lab adds
//! 100 for a malformed or unknown command (a `clock` or `analyze` number that is not finite,
//! or is negative, included). `play` for a side with no legal move is error 3. No input makes
//! the engine panic or exit, except `goodbye` and the end of input.

use crate::arena::{Agent, AgentError, AgentSpec};
use crate::rules::notation::{parse_move, parse_position, parse_rules_string};
use crate::rules::{Position, Side, Variant};
use std::io::{BufRead, Write};
use std::sync::Arc;
use std::time::Duration;

/// How the engine spends its time.
#[derive(Clone, Debug, PartialEq)]
pub enum TimeControl {
    /// The agent's simulation budget per move.
    Simulations,
    /// A fixed time per move.
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

/// The protocol state machine.
pub struct Engine {
    cfg: EngineConfig,
    variant: Arc<Variant>,
    agent: Agent,
    position: Position,
    side: Option<Side>,
    /// Seconds left on our clock, from the last `clock` command.
    clock: Option<(f64, f64, u32)>,
}

const E_RULES: u32 = 0;
const E_ILLEGAL: u32 = 3;
const E_COMMAND: u32 = 100;

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

impl Engine {
    pub fn new(cfg: EngineConfig) -> Result<Engine, AgentError> {
        let agent = Agent::new(&cfg.agent, &cfg.variant, cfg.seed)?;
        let variant = cfg.variant.clone();
        Ok(Engine { position: Position::start(variant.clone()), variant, agent, side: None, clock: None, cfg })
    }

    /// Runs the protocol until `goodbye` or the end of input.
    pub fn run(&mut self, input: impl BufRead, out: &mut impl Write) -> std::io::Result<()> {
        writeln!(out, "hello")?;
        writeln!(out, "simple-moves on")?;
        out.flush()?;
        for line in input.lines() {
            let line = line?;
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

    fn error(code: u32, reason: impl std::fmt::Display) -> Vec<String> {
        vec![format!("error {code} {}", reason.to_string().replace('\n', " "))]
    }

    /// Handles one command line and returns the replies.
    pub fn handle(&mut self, line: &str) -> Vec<String> {
        let (cmd, rest) = line.split_once(char::is_whitespace).map_or((line, ""), |(c, r)| (c, r.trim()));
        match cmd {
            "" | "hello" | "start" | "goodbye" | "simple-moves" => Vec::new(),
            "rules" => self.rules(rest),
            "position" => self.set_position(rest),
            "side" => match side_of(rest) {
                Some(s) => {
                    self.side = Some(s);
                    Vec::new()
                }
                None => Self::error(E_COMMAND, format!("side {rest:?}: expected attackers or defenders")),
            },
            "clock" => self.clock(rest),
            "play" => self.play(rest),
            "opponent-move" => self.opponent_move(rest),
            "analyze" => self.analyze(rest),
            "finish" => {
                self.position = Position::start(self.variant.clone());
                self.agent.reset(self.cfg.seed);
                Vec::new()
            }
            other => Self::error(E_COMMAND, format!("unknown command {other:?}")),
        }
    }

    fn rules(&mut self, text: &str) -> Vec<String> {
        let v = match parse_rules_string(text) {
            Ok(v) => v,
            Err(e) => return Self::error(E_RULES, format!("rules not supported: {e}")),
        };
        if self.cfg.agent.uses_model()
            && (v.geometry != self.cfg.variant.geometry || v.rules_fingerprint() != self.cfg.variant.rules_fingerprint())
        {
            return Self::error(
                E_RULES,
                format!(
                    "rules not supported: the model plays {} ({}x{}) and these rules differ",
                    self.cfg.variant.name,
                    self.cfg.variant.geometry.size(),
                    self.cfg.variant.geometry.size()
                ),
            );
        }
        let variant = Arc::new(v);
        match Agent::new(&self.cfg.agent, &variant, self.cfg.seed) {
            Ok(a) => self.agent = a,
            Err(e) => return Self::error(E_RULES, format!("rules not supported: {e}")),
        }
        self.position = Position::start(variant.clone());
        self.variant = variant;
        Vec::new()
    }

    fn set_position(&mut self, text: &str) -> Vec<String> {
        let record = text.split_whitespace().next().unwrap_or("");
        let to_move = self.position.to_move();
        match parse_position(self.variant.clone(), record, to_move) {
            Ok(p) => {
                self.position = p;
                Vec::new()
            }
            Err(e) => Self::error(E_COMMAND, format!("position: {e}")),
        }
    }

    fn clock(&mut self, text: &str) -> Vec<String> {
        let usage = "expected numbers: attacker-seconds defender-seconds [overtime-seconds attacker-overtimes defender-overtimes]";
        let nums = match numbers(text) {
            Some(n) if n.len() >= 2 => n,
            Some(_) | None => return Self::error(E_COMMAND, format!("clock {text:?}: {usage}")),
        };
        if let Some(bad) = nums.iter().find(|x| !(x.is_finite() && **x >= 0.0)) {
            return Self::error(E_COMMAND, format!("clock {text:?}: {bad} is not a finite number >= 0; {usage}"));
        }
        let side = self.side.unwrap_or(self.position.to_move());
        let (mine, overtime, periods) = match side {
            Side::Attackers => (nums[0], nums.get(2).copied().unwrap_or(0.0), nums.get(3).copied().unwrap_or(0.0) as u32),
            Side::Defenders => (nums[1], nums.get(2).copied().unwrap_or(0.0), nums.get(4).copied().unwrap_or(0.0) as u32),
        };
        self.clock = Some((mine, overtime, periods));
        Vec::new()
    }

    /// Time for this move: the fixed move time, or a share of the clock (a twentieth of the
    /// main time plus most of one overtime period), or the simulation budget.
    fn budget(&self) -> Option<Duration> {
        if let TimeControl::MoveTime(t) = self.cfg.time {
            return Some(t);
        }
        // `clock` admits only finite numbers >= 0, so `secs` is never NaN or negative.
        let (main, overtime, periods) = self.clock?;
        let secs = main / 20.0 + if periods > 0 { overtime * 0.8 } else { 0.0 };
        Some(Duration::from_secs_f64(secs.clamp(0.05, 60.0)))
    }

    fn play(&mut self, text: &str) -> Vec<String> {
        let Some(side) = side_of(text) else {
            return Self::error(E_COMMAND, format!("play {text:?}: expected attackers or defenders"));
        };
        if self.position.is_over() {
            return Self::error(E_ILLEGAL, "the game is over");
        }
        if self.position.to_move() != side {
            // The host knows whose turn it is: take its word. The rebuilt position decides its
            // own outcome (that side may have no move at all), so check it before searching.
            let mut setup = self.position.to_setup();
            setup.to_move = side;
            let p = match Position::from_setup(self.variant.clone(), &setup) {
                Ok(p) => p,
                Err(e) => return Self::error(E_COMMAND, format!("play: {e}")),
            };
            if let Some(o) = p.outcome() {
                return Self::error(E_ILLEGAL, format!("the {} have no move here: the game is over ({o})", side.name()));
            }
            self.position = p;
        }
        let time = self.budget();
        let Some(mv) = self.agent.choose_for(&self.position, time) else {
            return Self::error(E_ILLEGAL, format!("the {} have no legal move", side.name()));
        };
        self.position.make(mv);
        vec![format!("move {mv}")]
    }

    fn opponent_move(&mut self, text: &str) -> Vec<String> {
        let mut parts = text.split_whitespace();
        let Some(mv_text) = parts.next() else {
            return Self::error(E_COMMAND, "opponent-move: missing move");
        };
        let record = match parse_move(mv_text, self.position.geometry()) {
            Ok(r) => r,
            Err(e) => return Self::error(E_COMMAND, format!("opponent-move: {e}")),
        };
        let mut next = self.position.clone();
        if let Err(e) = next.play(record.mv) {
            // Keep the board the host sends, if any, so the game can go on.
            if let Some(pos) = parts.next() {
                let to_move = self.position.to_move().opponent();
                if let Ok(p) = parse_position(self.variant.clone(), pos, to_move) {
                    self.position = p;
                }
            }
            return Self::error(E_ILLEGAL, format!("illegal move: {e}"));
        }
        self.position = next;
        Vec::new()
    }

    fn analyze(&mut self, text: &str) -> Vec<String> {
        let nums = match numbers(text) {
            Some(n) if n.len() == 2 && n.iter().all(|x| x.is_finite()) && n[0] >= 1.0 && n[1] > 0.0 => n,
            _ => return Self::error(E_COMMAND, format!("analyze {text:?}: expected a move count and seconds (finite, positive)")),
        };
        if self.position.is_over() {
            return Self::error(E_ILLEGAL, "the game is over");
        }
        let Some(r) = self.agent.think_for(&self.position, Some(Duration::from_secs_f64(nums[1].min(600.0)))) else {
            // A random player: one move, no evaluation to speak of.
            let Some(mv) = self.agent.choose(&self.position) else {
                return Self::error(E_ILLEGAL, "no legal move");
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
