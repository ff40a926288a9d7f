//! The HTP client: tafl-lab drives an engine that speaks the Hnefatafl Text Protocol, on its
//! stdin (every reply read, every capture list and board compared) or as an engine client over
//! TCP (only moves answered, a refusal told from a crash by its stderr).

use super::{External, Fault, Step};
use crate::rules::notation::position_string;
use crate::rules::{Geometry, Move, Piece, Position, Side, Square};
use std::time::{Duration, Instant};

impl External {
    /// Sets up the game: `board_size` and `first_move`, each refusal a disagreement, then the
    /// engine's board compared with tafl-lab's.
    pub(super) fn htp_new_game(&mut self, side: Side) -> Step<()> {
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

    /// An engine client answers nothing but `generate_move`; it starts on a fresh 11x11 game,
    /// and these two set the board and the first mover.
    pub(super) fn htp_client_new_game(&mut self, side: Side) -> Step<()> {
        let forfeit = |reason: String| Fault::Forfeit { side, reason };
        let size = self.variant.geometry.size();
        let first = htp_role(self.board.to_move());
        self.proc().send(&format!("board_size {size}")).map_err(forfeit)?;
        self.proc().send(&format!("first_move {first}")).map_err(forfeit)
    }

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

    pub(super) fn htp_turn(&mut self, history: &[Move], side: Side, deadline: Instant) -> Step<Move> {
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
    pub(super) fn htp_client_turn(&mut self, history: &[Move], side: Side, deadline: Instant) -> Step<Move> {
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


#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::Variant;
    use std::sync::Arc;

    #[test]
    fn htp_boards_read_top_rank_first() {
        let v = Arc::new(Variant::preset("brandubh"));
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

