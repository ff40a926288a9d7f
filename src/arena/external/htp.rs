//! The HTP client: tafl-lab drives an engine that speaks the Hnefatafl Text Protocol, on its
//! stdin (every reply read, every capture list and board compared) or as an engine client over
//! TCP (only moves answered, a refusal told from a crash by its stderr).

use super::transport::TransportError;
use super::{External, Fault, ForfeitCause, Step};
use crate::protocol::htp::{self as wire, Action, Command, Generated, Response};
use crate::rules::notation::position_string;
use crate::rules::{Move, Piece, Position, Side, Square};
use std::time::{Duration, Instant};

/// The command whose answer (`= false`) marks the end of every reply: a command no engine
/// knows.
const SYNC: &str = "tafl-lab-sync";

/// `play ROLE FROM TO` for a move of `side`, squares in tafl-lab's notation.
fn play(side: Side, m: Move) -> Command {
    Command::Play { side, action: Action::Move { from: m.from.to_string(), to: Some(m.to.to_string()) } }
}

impl External {
    /// Sets up the game: `board_size` and `first_move`, each refusal a disagreement, then the
    /// engine's board compared with tafl-lab's.
    pub(super) fn htp_new_game(&mut self, side: Side) -> Step<()> {
        let size = Command::BoardSize(self.variant.geometry.size());
        let deadline = Instant::now() + self.spec.move_time;
        // A refused set-up is a disagreement about what can be played, never a forfeit.
        let b = self.board.clone();
        if let Err(e) = self.htp(&size, side, deadline)? {
            return Err(self.disagreement(side, &b, format!("{size} is these rules' board"), format!("refused it: {e}")));
        }
        let first = Command::FirstMove(self.board.to_move());
        if let Err(e) = self.htp(&first, side, deadline)? {
            return Err(self.disagreement(side, &b, first.to_string(), format!("refused it: {e}")));
        }
        self.htp_compare_board(side, deadline, "the start position")
    }

    /// An engine client answers nothing but `generate_move`; it starts on a fresh 11x11 game,
    /// and these two set the board and the first mover.
    pub(super) fn htp_client_new_game(&mut self, side: Side) -> Step<()> {
        let forfeit = |e| Fault::transport(side, "", &e);
        let size = Command::BoardSize(self.variant.geometry.size());
        let first = Command::FirstMove(self.board.to_move());
        self.proc().send(&size.to_string()).map_err(forfeit)?;
        self.proc().send(&first.to_string()).map_err(forfeit)
    }

    /// Sends `cmd` and reads its reply: `Ok(text)` for `= text`, `Err(text)` for `? text`.
    /// Then a `known_command` round trip skips whatever the engine printed after the reply
    /// (boards, escape maps), so the next reply is read in step.
    fn htp(&mut self, cmd: &Command, side: Side, deadline: Instant) -> Step<Result<String, String>> {
        let what = cmd.to_string();
        let forfeit = |e| Fault::transport(side, &what, &e);
        let p = self.proc();
        p.send(&cmd.to_string()).map_err(forfeit)?;
        let reply = loop {
            match Response::parse(&p.recv(deadline).map_err(forfeit)?) {
                Some(Response::Success(m)) => break Ok(m),
                Some(Response::Failure(e)) => break Err(e),
                None => {}
            }
        };
        p.send(&Command::KnownCommand(SYNC.into()).to_string()).map_err(forfeit)?;
        let sync_deadline = deadline.max(Instant::now() + Duration::from_secs(5));
        let unknown = Response::Success(false.to_string()).to_string();
        while p.recv(sync_deadline).map_err(forfeit)?.trim() != unknown {}
        Ok(reply)
    }

    pub(super) fn htp_turn(&mut self, history: &[Move], side: Side, deadline: Instant) -> Step<Move> {
        self.htp_send_moves(history, side, deadline)?;
        let reply = self.htp(&Command::GenerateMove(None), side, deadline)?;
        let text = match reply {
            Ok(t) => t,
            // hnefatafl-copenhagen's exact words when it finds the game over (its `InvalidMove::
            // GameOver`); any other refusal of generate_move is its failure to move.
            Err(e) if wire::Refusal::of(&e) == wire::Refusal::GameOver => {
                let status = self.htp(&Command::FinalStatus, side, deadline)?.unwrap_or_else(|e| format!("? {e}"));
                return Err(self.disagreement(side, &self.board.clone(), "the game goes on".into(), format!("the game is over: {status}")));
            }
            // "It isn't your turn": the engine's board has the other side to move, where
            // tafl-lab's has this one: the two read the game differently.
            Err(e) if wire::Refusal::of(&e) == wire::Refusal::NotYourTurn => {
                let b = self.board.clone();
                return Err(self.disagreement(side, &b, format!("{} to move", b.to_move()), format!("generate_move: {e}")));
            }
            Err(e) => return Err(Fault::Forfeit { side, cause: ForfeitCause::Refused, reason: format!("generate_move: {e}") }),
        };
        self.move_arrived = Some(Instant::now());
        let mv = self.read_htp_play(&text, side)?;
        self.take_engine_move(side, mv, &mv.to_string())?;
        if self.board.outcome().is_none() {
            // tafl-lab's own check, on its own clock (not the engine's move time).
            self.htp_compare_board(side, Instant::now() + External::CHECK_TIME, &format!("after {mv}"))?;
        }
        Ok(mv)
    }

    /// Sends the moves of `history` the engine has not seen as `play` lines, each reply's
    /// capture list compared with tafl-lab's: a refusal or another capture list is a
    /// disagreement.
    fn htp_send_moves(&mut self, history: &[Move], side: Side, deadline: Instant) -> Step<()> {
        for &m in &history[self.known.len()..] {
            let before = self.board.clone();
            let cmd = play(before.to_move(), m);
            let ours = self.board.play(m).map_err(|e| Fault::Void { side, reason: format!("referee: {e}") })?;
            match self.htp(&cmd, side, deadline)? {
                Err(e) => return Err(self.disagreement(side, &before, format!("{m} is legal"), format!("refused it: {e}"))),
                Ok(text) => {
                    let theirs = wire::parse_captures(&text, before.geometry());
                    let mut ours = ours.clone();
                    ours.sort();
                    if theirs.as_ref() != Some(&ours) {
                        return Err(self.disagreement(side, &before, format!("{m} captures {}", squares_text(&ours)), format!("captures: {text:?}")));
                    }
                }
            }
            self.known.push(m);
        }
        Ok(())
    }

    /// After the rules ended the game in `pos`: the engine is sent the moves it has not seen
    /// (tafl-lab's final move among them) and asked `final_status`. An engine that reads the
    /// ending otherwise (another winner, or the game going on) is a disagreement; one that
    /// fails to answer changes nothing (the rules decided the game).
    pub(super) fn htp_confirm_ending(&mut self, pos: &Position, history: &[Move], side: Side) -> Option<Fault> {
        let outcome = pos.outcome()?;
        if !self.started || self.proc.is_none() || !history.starts_with(&self.known) {
            return None;
        }
        let deadline = Instant::now() + External::CHECK_TIME;
        match self.htp_send_moves(history, side, deadline) {
            Err(f @ Fault::Disagreement { .. }) => return Some(f),
            Err(_) => return None,
            Ok(()) => {}
        }
        let status = match self.htp(&Command::FinalStatus, side, deadline) {
            Ok(Ok(t)) => t,
            _ => return None,
        };
        let ours = match outcome.winner {
            Some(Side::Attackers) => "attacker_wins",
            Some(Side::Defenders) => "defender_wins",
            None => "draw",
        };
        if status.trim() == ours {
            return None;
        }
        let b = self.board.clone();
        Some(self.disagreement(side, &b, format!("{outcome}: {ours}"), format!("final_status: {status}")))
    }

    /// Reads `play ROLE FROM TO[, score: ...]` (or a resignation) as `side`'s move.
    fn read_htp_play(&self, text: &str, side: Side) -> Step<Move> {
        let unreadable = || Fault::Forfeit { side, cause: ForfeitCause::Illegal, reason: format!("unreadable move {text:?}") };
        match Generated::parse(text) {
            Some(Generated::Resign(_)) => Err(Fault::Forfeit { side, cause: ForfeitCause::Resigned, reason: "resigned".into() }),
            Some(Generated::Move { side: mover, from, to, .. }) => {
                if mover != side {
                    // It thinks the other side is to move: a disagreement about the game, as
                    // "it isn't your turn" is.
                    let b = self.board.clone();
                    return Err(self.disagreement(side, &b, format!("{side} to move"), format!("moved for {mover}: {text:?}")));
                }
                let g = self.board.geometry();
                match (wire::square(&from, g), wire::square(&to, g)) {
                    (Ok(f), Ok(t)) => Ok(Move::new(f, t)),
                    _ => Err(unreadable()),
                }
            }
            None => Err(unreadable()),
        }
    }

    /// A turn of an HTP engine client: the moves it has not seen as `play` lines (no answer
    /// comes), then `generate_move`, answered by one `play ROLE FROM TO` line.
    pub(super) fn htp_client_turn(&mut self, history: &[Move], side: Side, deadline: Instant) -> Step<Move> {
        let mut last_sent = None;
        for &m in &history[self.known.len()..] {
            let before = self.board.clone();
            let cmd = play(before.to_move(), m).to_string();
            self.board.play(m).map_err(|e| Fault::Void { side, reason: format!("referee: {e}") })?;
            self.known.push(m);
            last_sent = Some((m, before));
            if let Err(e) = self.proc().send(&cmd) {
                return Err(self.client_gone(side, e, last_sent));
            }
        }
        if let Err(e) = self.proc().send(&Command::GenerateMove(None).to_string()) {
            return Err(self.client_gone(side, e, last_sent));
        }
        let text = loop {
            match self.proc().recv(deadline) {
                Ok(l) if l.trim_start().starts_with("play") => break l.trim().to_lowercase(),
                Ok(_) => {}
                Err(e @ TransportError::Exited(_)) => return Err(self.client_gone(side, e, last_sent)),
                Err(e) => return Err(Fault::transport(side, "generate_move", &e)),
            }
        };
        self.move_arrived = Some(Instant::now());
        let mv = self.read_htp_play(&text, side)?;
        self.take_engine_move(side, mv, &mv.to_string())?;
        Ok(mv)
    }

    /// Why an engine client went away when it should have answered: it refused the last move
    /// sent (`Error: ...` on stderr), it ended the game where tafl-lab plays on (a clean exit:
    /// the client stops when its game is over), or it crashed.
    fn client_gone(&mut self, side: Side, e: TransportError, last_sent: Option<(Move, Position)>) -> Fault {
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
                Fault::Forfeit { side, cause: e.cause(), reason: format!("generate_move: {e}{tail}") }
            }
        }
    }

    /// Compares the engine's board (`show_board_open_tafl`, top row first) with tafl-lab's.
    fn htp_compare_board(&mut self, side: Side, deadline: Instant, when: &str) -> Step<()> {
        // The board check is a step only tafl-lab needs (HTP does not require the command):
        // an engine that refuses it, or answers what tafl-lab cannot read, voids the game
        // rather than losing it.
        let theirs = match self.htp(&Command::ShowBoardOpenTafl, side, deadline)? {
            Ok(t) => t,
            Err(e) => return Err(Fault::Void { side, reason: format!("show_board_open_tafl (tafl-lab's board check) refused: {e}") }),
        };
        let g = self.board.geometry();
        let Some(mut pieces) = wire::parse_board(&theirs, g) else {
            return Err(Fault::Void { side, reason: format!("show_board_open_tafl (tafl-lab's board check): unreadable board {theirs:?}") });
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
}

/// A capture list in a fault's text.
fn squares_text(v: &[Square]) -> String {
    if v.is_empty() {
        "nothing".into()
    } else {
        v.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(" ")
    }
}
