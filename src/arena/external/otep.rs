//! The OTEP client: tafl-lab drives an engine that speaks the OpenTafl Engine Protocol, as
//! OpenTafl 0.4.8 drives one, and keeps it on tafl-lab's board.

use super::{External, Fault, ForfeitCause, Step};
use crate::protocol::clock::{Clock, SideClock};
use crate::protocol::otep::{Command, ParseError};
use crate::rules::notation::{parse_move, position_string};
use crate::rules::{Move, Side};
use std::time::{Duration, Instant};

impl External {
    /// A new game: the rules, once the engine's output is quiet.
    pub(super) fn otep_new_game(&mut self, side: Side) -> Step<()> {
        let forfeit = |e| Fault::transport(side, "rules", &e);
        let rules = crate::rules::notation::rules_string(&self.variant).expect("checked in new");
        self.otep_quiet();
        self.proc().send(&Command::Rules(rules).to_string()).map_err(forfeit)
    }

    pub(super) fn await_hello(&mut self, side: Side) -> Step<()> {
        let deadline = Instant::now() + self.spec.move_time.max(Duration::from_secs(10));
        loop {
            let l = self.proc().recv(deadline).map_err(|e| Fault::transport(side, "waiting for hello", &e))?;
            if Command::parse(l.trim()) == Ok(Some(Command::Hello)) {
                return Ok(());
            }
        }
    }

    /// OpenTafl's engine mode sends its move, then plays it on its own board, then prints its
    /// search statistics; a command that arrives before that move is played lands on the board
    /// without it, and OpenTafl silently drops an opponent's move it then finds illegal (seen:
    /// an `opponent-move` 32 ms after its `move`; docs/engines.md). So after an engine's move,
    /// its next command waits at least [`External::OTEP_AFTER_MOVE`] and until its output
    /// has been silent for [`External::OTEP_QUIET`] (the statistics come after the move is
    /// played), at most [`External::OTEP_QUIET_LIMIT`]. Lines read here answer nothing: no
    /// `play` is outstanding (they still reach the transcript).
    pub(super) fn otep_quiet(&mut self) {
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

    pub(super) fn otep_turn(&mut self, history: &[Move], side: Side, deadline: Instant, budget: Duration) -> Step<Move> {
        let forfeit = |e| Fault::transport(side, "", &e);
        let unseen = &history[self.known.len()..];
        let mut start = self.board.clone();
        for &m in unseen {
            start.play(m).map_err(|e| Fault::Void { side, reason: format!("referee: {e}") })?;
        }
        // Every turn ends with the whole board as `position`, even after an `opponent-move`
        // that carries it: OpenTafl's engine mode reads only the move of an `opponent-move`,
        // drops it without a word when its own board finds it illegal, and then plays on a
        // board of its own (docs/engines.md). The `opponent-move` before it keeps the engine's
        // game history (repetitions) where the boards agree; it is sent when the opponent made
        // exactly one move since the engine's last (an opening before its first turn is not).
        let board = position_string(&start);
        let mut lines = Vec::new();
        if let ([m], true) = (unseen, self.board.to_move() != side) {
            lines.push(Command::OpponentMove { moves: vec![m.to_string()], position: Some(board.clone()) }.to_string());
        }
        lines.push(Command::Position(board).to_string());
        // What the engine is told this turn, for the report of a refusal.
        let sent = format!("{:?}", lines.join("; "));
        let told = if self.known.is_empty() { format!("these rules and {sent}") } else { sent };
        self.board = start;
        self.known.extend_from_slice(unseen);
        let timed = self.spec.game_time.is_some();
        self.otep_quiet();
        let p = self.proc();
        for line in &lines {
            p.send(line).map_err(forfeit)?;
        }
        p.send(&Command::Play(side).to_string()).map_err(forfeit)?;
        if timed {
            // Whole milliseconds, both sides alike, no overtime.
            let each = SideClock { millis: budget.as_millis() as f64, overtime: false, periods: 0 };
            p.send(&Command::Clock(Clock { attackers: each, defenders: each, period_secs: 0.0 }).to_string()).map_err(forfeit)?;
        }
        let text = loop {
            let l = self.proc().recv(deadline).map_err(forfeit)?;
            // A Java engine whose search thread died (OpenTafl's does, printing the trace on
            // stdout) would never answer: its forfeit now, with the trace's first line.
            if l.split_whitespace().take(2).eq(["Exception", "in"]) {
                return Err(Fault::Forfeit { side, cause: ForfeitCause::Crash, reason: format!("the engine crashed: {l}") });
            }
            match Command::parse(l.trim()) {
                Ok(Some(Command::Move(m))) if !m.is_empty() => {
                    self.last_move_at = Some(Instant::now());
                    self.move_arrived = self.last_move_at;
                    break m;
                }
                // An engine answers nothing but errors to what it is sent: whatever the code
                // (readable or not) and whatever the ply, an `error` refuses the rules, the
                // position or the opponent's move tafl-lab sent. A disagreement, never scored.
                Ok(Some(Command::Error { .. })) | Err(ParseError::Arguments { verb: "error", .. }) => {
                    let b = self.board.clone();
                    return Err(self.disagreement(side, &b, format!("the engine takes {told}"), format!("refused it: {l}")));
                }
                _ => {} // status, analysis, simple-moves, rules echoes: not moves
            }
        };
        let g = self.board.geometry();
        let mv = parse_move(&text, g).map_err(|e| Fault::Forfeit { side, cause: ForfeitCause::Illegal, reason: format!("unreadable move: {e}") })?.mv;
        self.take_engine_move(side, mv, &text)?;
        let ack = Command::Move(position_string(&self.board)).to_string();
        self.proc().send(&ack).map_err(forfeit)?;
        Ok(mv)
    }
}
