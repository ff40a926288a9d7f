//! The Hnefatafl Text Protocol (HTP) of `hnefatafl-copenhagen` 6.4.1 as typed lines: the
//! commands ([`Command`]), the replies ([`Response`]), `generate_move`'s answer
//! ([`Generated`]), and the spellings both sides must agree on: roles, squares, capture lists
//! and `show_board_open_tafl`'s board.
//!
//! HTP is GTP-shaped: one command per line, whitespace-separated words, `#` starts a comment.
//! A command that succeeds is answered `= <message>`; one that fails `? <reason>` and a blank
//! line; a blank or comment-only line gets no answer. The reference program prints boards and
//! logs between its replies, so a host reads replies, not lines.
//!
//! Spellings are read in the union of what tafl-lab's engine and its client of other engines
//! have accepted: a role is `a`, `attacker`, `attackers`, `d`, `defender` or `defenders` in any
//! case, written `attacker` / `defender`; a square is a file letter and a rank number, rank 1
//! at the bottom (tafl-lab's notation), read in any case and written in lower case, except by
//! an engine on 13x13, which writes upper case as the reference program does. Squares stay text
//! in a command, because they are read against the board of the game ([`square`]).

use crate::rules::notation::parse_position_string;
use crate::rules::{Geometry, Piece, Position, Side, Square};
use std::fmt;

/// The commands an engine knows, in the order `list_commands` gives them (the reference
/// program's list).
pub const COMMANDS: [&str; 17] = [
    "board_size",
    "final_status",
    "first_move",
    "generate_move",
    "known_command",
    "list_commands",
    "name",
    "play",
    "play_from",
    "play_to",
    "play_undo",
    "protocol_version",
    "quit",
    "show_board",
    "show_board_open_tafl",
    "time_settings",
    "version",
];

/// The HTP version the reference program reports.
pub const PROTOCOL_VERSION: &str = "1-beta";

/// The board sizes `board_size` takes.
pub const SIZES: [u8; 3] = [7, 11, 13];

/// The reference program's exact refusals of `generate_move` when it finds the game over: its
/// `InvalidMove::GameOver`, bare or wrapped in its `message:` error (the form hnefatafl-copenhagen
/// 6.4.1 answers after a resignation, seen here).
pub const GAME_OVER: [&str; 2] = ["play: the game is already over", "message: play: the game is already over"];

/// The words in the reference program's refusal of `generate_move` for the side whose turn it
/// is not (`? message: play: it isn't your turn`, hnefatafl-copenhagen 6.4.1, seen here).
pub const NOT_YOUR_TURN: &str = "it isn't your turn";

/// What a refusal of `generate_move` means, read from the reference program's words: the game
/// is over ([`GAME_OVER`]), the engine's board has the other side to move ([`NOT_YOUR_TURN`]), or
/// another failure to move. The referee acts on this, not on the text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    GameOver,
    NotYourTurn,
    Other,
}

impl Refusal {
    /// The kind of the failure reply `text` (the words after `? `).
    pub fn of(text: &str) -> Refusal {
        if GAME_OVER.contains(&text) {
            Refusal::GameOver
        } else if text.contains(NOT_YOUR_TURN) {
            Refusal::NotYourTurn
        } else {
            Refusal::Other
        }
    }
}

/// An HTP role in any case: `a`, `attacker`, `attackers`, `d`, `defender`, `defenders`.
pub fn role(text: &str) -> Option<Side> {
    match text.to_ascii_lowercase().as_str() {
        "a" | "attacker" | "attackers" => Some(Side::Attackers),
        "d" | "defender" | "defenders" => Some(Side::Defenders),
        _ => None,
    }
}

/// A role as HTP writes it.
pub fn role_name(side: Side) -> &'static str {
    match side {
        Side::Attackers => "attacker",
        Side::Defenders => "defender",
    }
}

/// Reads a role, or says why not (the message names HTP's own four spellings).
fn parse_role(text: &str) -> Result<Side, ParseError> {
    role(text).ok_or_else(|| ParseError::Arguments(format!("bad role {text:?} (expected a, attacker, d or defender)")))
}

/// A square of board `g`, in any case (also letters whose Unicode lower case is ASCII: the
/// Kelvin sign is a `k`). The error is the rules crate's, naming the square in ASCII lower case.
///
/// # Errors
/// Not a square, or off the board.
pub fn square(text: &str, g: Geometry) -> Result<Square, String> {
    g.parse_square(&text.to_ascii_lowercase()).or_else(|e| g.parse_square(&text.to_lowercase()).map_err(|_| e.to_string()))
}

/// A square as an engine writes it on board `g`: upper case on 13x13, lower case otherwise
/// (tafl-lab's client writes lower case on every board, which engines read in any case).
pub fn square_name(sq: Square, g: Geometry) -> String {
    let s = sq.to_string();
    if g.size() == 13 {
        s.to_ascii_uppercase()
    } else {
        s
    }
}

/// The answer to `play ROLE FROM TO`: each captured square followed by a space.
pub fn captures_text(captures: &[Square], g: Geometry) -> String {
    captures.iter().map(|&s| format!("{} ", square_name(s, g))).collect()
}

/// Reads a capture list (squares separated by spaces, in any order and case), sorted; `None`
/// if one is not a square of `g`.
pub fn parse_captures(text: &str, g: Geometry) -> Option<Vec<Square>> {
    let mut v: Vec<Square> = text.split_whitespace().map(|s| square(s, g).ok()).collect::<Option<_>>()?;
    v.sort();
    Some(v)
}

/// The board as `show_board_open_tafl` writes it (OpenTafl's layout as the reference program
/// writes it): top rank first, `A` attacker, `D` defender, `K` king, runs of empty squares as
/// numbers, `/` around every rank.
pub fn board_text(position: &Position) -> String {
    let n = position.geometry().size();
    let mut out = String::from("/");
    for rank in (0..n).rev() {
        let mut empty = 0;
        for file in 0..n {
            match position.piece_at(Square::new(file, rank)) {
                None => empty += 1,
                Some(p) => {
                    if empty > 0 {
                        out.push_str(&empty.to_string());
                        empty = 0;
                    }
                    out.push(p.layout_char().to_ascii_uppercase());
                }
            }
        }
        if empty > 0 {
            out.push_str(&empty.to_string());
        }
        out.push('/');
    }
    out
}

/// Reads `show_board_open_tafl`'s board on `g` (see [`board_text`]): turned into tafl-lab's
/// position string (rank 1 first, `t`/`T`/`K`) and read by the rules crate's parser. `None` if
/// it is not a board of that size.
pub fn parse_board(text: &str, g: Geometry) -> Option<Vec<(Square, Piece)>> {
    let rows: Vec<&str> = text.trim().trim_matches('/').split('/').collect();
    if rows.len() != g.size() as usize || text.contains(['t', 'T']) {
        return None;
    }
    let ours: String = rows.iter().rev().map(|r| r.replace('A', "t").replace('D', "T")).collect::<Vec<_>>().join("/");
    let (size, pieces) = parse_position_string(&format!("/{ours}/")).ok()?;
    (size == g.size()).then_some(pieces)
}

/// What `play ROLE ...` does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// `play ROLE resigns` (or `resign`, any case).
    Resign,
    /// `play ROLE FROM TO`; `to` is `None` when the line names no target (an engine refuses
    /// that line, after it has checked that the game is still on).
    Move { from: String, to: Option<String> },
}

/// `time_settings`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeSettings {
    /// `time_settings un-timed`.
    Untimed,
    /// `time_settings fischer MINUTES ADD_SECONDS`.
    Fischer { minutes: u32, add_seconds: u32 },
}

/// One HTP command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// `board_size 7|11|13`.
    BoardSize(u8),
    /// `first_move ROLE`: a new game with that side to move.
    FirstMove(Side),
    /// `play ROLE FROM TO` or `play ROLE resigns`.
    Play {
        side: Side,
        action: Action,
    },
    /// `generate_move [ROLE]`.
    GenerateMove(Option<Side>),
    FinalStatus,
    TimeSettings(TimeSettings),
    ShowBoard,
    ShowBoardOpenTafl,
    PlayFrom,
    /// `play_to ROLE FROM`.
    PlayTo {
        side: Side,
        from: String,
    },
    PlayUndo,
    /// `known_command COMMAND`.
    KnownCommand(String),
    ListCommands,
    Name,
    Version,
    ProtocolVersion,
    Quit,
}

/// Why a line is not an HTP command; its `Display` is the failure's reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParseError {
    /// A command HTP does not have.
    Unknown(String),
    /// A command whose arguments do not read, and why.
    Arguments(String),
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseError::Unknown(cmd) => write!(f, "unrecognized command: {}", cmd.escape_debug()),
            ParseError::Arguments(reason) => f.write_str(reason),
        }
    }
}

impl std::error::Error for ParseError {}

impl Command {
    /// Reads one line: what follows `#` is a comment, a line with no word is `Ok(None)`, words
    /// after those a command takes are ignored.
    ///
    /// # Errors
    /// An unknown command, or arguments that do not read (missing, a bad role or number).
    pub fn parse(line: &str) -> Result<Option<Command>, ParseError> {
        let line = line.split('#').next().unwrap_or("");
        let words: Vec<&str> = line.split_whitespace().collect();
        let Some((&verb, args)) = words.split_first() else {
            return Ok(None);
        };
        let bad = |reason: String| Err(ParseError::Arguments(reason));
        let cmd = match verb {
            "board_size" => {
                let usage = "expected: board_size 7, board_size 11 or board_size 13";
                let Some(text) = args.first() else { return bad(usage.to_string()) };
                match text.parse::<u8>() {
                    Ok(n) if SIZES.contains(&n) => Command::BoardSize(n),
                    _ => return bad(format!("board_size {text}: {usage}")),
                }
            }
            "first_move" => Command::FirstMove(parse_role(args.first().ok_or_else(|| ParseError::Arguments("expected: first_move ROLE".into()))?)?),
            "play" => {
                let (Some(role), Some(from)) = (args.first(), args.get(1)) else {
                    return bad("expected: play ROLE FROM TO or play ROLE resigns".to_string());
                };
                let side = parse_role(role)?;
                let action = if from.eq_ignore_ascii_case("resigns") || from.eq_ignore_ascii_case("resign") {
                    Action::Resign
                } else {
                    Action::Move { from: from.to_string(), to: args.get(2).map(|t| t.to_string()) }
                };
                Command::Play { side, action }
            }
            "generate_move" => Command::GenerateMove(args.first().map(|r| parse_role(r)).transpose()?),
            "final_status" => Command::FinalStatus,
            "time_settings" => {
                let usage = "expected: time_settings un-timed or time_settings fischer MINUTES ADD_SECONDS";
                match args {
                    ["un-timed"] => Command::TimeSettings(TimeSettings::Untimed),
                    ["fischer", minutes, seconds] => {
                        let num =
                            |t: &str| t.parse::<u32>().map_err(|_| ParseError::Arguments(format!("time_settings: {t:?} is not a whole number >= 0; {usage}")));
                        Command::TimeSettings(TimeSettings::Fischer { minutes: num(minutes)?, add_seconds: num(seconds)? })
                    }
                    _ => return bad(usage.to_string()),
                }
            }
            "show_board" => Command::ShowBoard,
            "show_board_open_tafl" => Command::ShowBoardOpenTafl,
            "play_from" => Command::PlayFrom,
            "play_to" => {
                let (Some(role), Some(from)) = (args.first(), args.get(1)) else {
                    return bad("play_to: expected 'play_to ROLE FROM'".to_string());
                };
                Command::PlayTo { side: parse_role(role)?, from: from.to_string() }
            }
            "play_undo" => Command::PlayUndo,
            "known_command" => match args.first() {
                Some(c) => Command::KnownCommand(c.to_string()),
                None => return bad("expected: known_command COMMAND".to_string()),
            },
            "list_commands" => Command::ListCommands,
            "name" => Command::Name,
            "version" => Command::Version,
            "protocol_version" => Command::ProtocolVersion,
            "quit" => Command::Quit,
            other => return Err(ParseError::Unknown(other.to_string())),
        };
        Ok(Some(cmd))
    }
}

/// The line, without its newline; roles as HTP writes them, squares as given.
impl fmt::Display for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Command::BoardSize(n) => write!(f, "board_size {n}"),
            Command::FirstMove(s) => write!(f, "first_move {}", role_name(*s)),
            Command::Play { side, action: Action::Resign } => write!(f, "play {} resigns", role_name(*side)),
            Command::Play { side, action: Action::Move { from, to } } => {
                write!(f, "play {} {from}", role_name(*side))?;
                match to {
                    Some(to) => write!(f, " {to}"),
                    None => Ok(()),
                }
            }
            Command::GenerateMove(None) => f.write_str("generate_move"),
            Command::GenerateMove(Some(s)) => write!(f, "generate_move {}", role_name(*s)),
            Command::FinalStatus => f.write_str("final_status"),
            Command::TimeSettings(TimeSettings::Untimed) => f.write_str("time_settings un-timed"),
            Command::TimeSettings(TimeSettings::Fischer { minutes, add_seconds }) => write!(f, "time_settings fischer {minutes} {add_seconds}"),
            Command::ShowBoard => f.write_str("show_board"),
            Command::ShowBoardOpenTafl => f.write_str("show_board_open_tafl"),
            Command::PlayFrom => f.write_str("play_from"),
            Command::PlayTo { side, from } => write!(f, "play_to {} {from}", role_name(*side)),
            Command::PlayUndo => f.write_str("play_undo"),
            Command::KnownCommand(c) => write!(f, "known_command {c}"),
            Command::ListCommands => f.write_str("list_commands"),
            Command::Name => f.write_str("name"),
            Command::Version => f.write_str("version"),
            Command::ProtocolVersion => f.write_str("protocol_version"),
            Command::Quit => f.write_str("quit"),
        }
    }
}

/// An engine's reply to a command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Response {
    /// `= <message>`: the message may span lines (`list_commands`, `show_board`).
    Success(String),
    /// `? <reason>`, then a blank line; the reason is one line.
    Failure(String),
}

impl Response {
    /// Reads a reply's first line: `=` or `?` at its very start, the rest trimmed; `None` for
    /// any other line (boards and logs the reference program prints between replies).
    pub fn parse(line: &str) -> Option<Response> {
        if let Some(rest) = line.strip_prefix('=') {
            return Some(Response::Success(rest.trim().to_string()));
        }
        line.strip_prefix('?').map(|rest| Response::Failure(rest.trim().to_string()))
    }
}

/// The reply without its last newline: `= message`, or `? reason` (a newline in the reason
/// becomes a space). A failure is followed by a blank line on the wire.
impl Response {
    /// The whole text an engine writes for this response: its line, and after a failure the
    /// blank line that ends it.
    pub fn written(&self) -> String {
        match self {
            Response::Success(_) => format!("{self}\n"),
            Response::Failure(_) => format!("{self}\n\n"),
        }
    }
}

impl fmt::Display for Response {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Response::Success(m) => write!(f, "= {m}"),
            Response::Failure(e) => write!(f, "? {}", e.replace(['\n', '\r'], " ")),
        }
    }
}

/// `generate_move`'s answer: the `= ` message of an engine on stdin, or the bare line an engine
/// client (`hnefatafl-text-protocol --host`) sends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Generated {
    /// `play ROLE resigns` (or `resign`; anything after it is ignored).
    Resign(Side),
    /// `play ROLE FROM TO[, NOTES]`: squares as written (read them with [`square`]); the notes
    /// after the first comma are the engine's own and not read (tafl-lab's engine and the
    /// reference program write `score: S, delay milliseconds: D, loops: N`).
    Move { side: Side, from: String, to: String, notes: String },
}

impl Generated {
    /// Reads the answer, in any case; a move is exactly four words before the first comma.
    pub fn parse(text: &str) -> Option<Generated> {
        let (head, notes) = text.split_once(',').map_or((text, ""), |(h, n)| (h, n.trim()));
        let words: Vec<&str> = head.split_whitespace().collect();
        match words.as_slice() {
            [play, r, resign, ..] if play.eq_ignore_ascii_case("play") && (resign.eq_ignore_ascii_case("resigns") || resign.eq_ignore_ascii_case("resign")) => {
                role(r).map(Generated::Resign)
            }
            [play, r, from, to] if play.eq_ignore_ascii_case("play") => {
                Some(Generated::Move { side: role(r)?, from: from.to_string(), to: to.to_string(), notes: notes.to_string() })
            }
            _ => None,
        }
    }
}

impl fmt::Display for Generated {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Generated::Resign(side) => write!(f, "play {} resigns", role_name(*side)),
            Generated::Move { side, from, to, notes } => {
                write!(f, "play {} {from} {to}", role_name(*side))?;
                if notes.is_empty() {
                    Ok(())
                } else {
                    write!(f, ", {notes}")
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::Variant;
    use std::sync::Arc;

    fn parse(line: &str) -> Command {
        Command::parse(line).unwrap_or_else(|e| panic!("{line:?}: {e}")).unwrap_or_else(|| panic!("{line:?}: blank"))
    }

    fn mv(from: &str, to: Option<&str>) -> Action {
        Action::Move { from: from.into(), to: to.map(String::from) }
    }

    #[test]
    fn every_command_formats_to_a_line_that_parses_back() {
        let all = [
            Command::BoardSize(7),
            Command::BoardSize(13),
            Command::FirstMove(Side::Attackers),
            Command::Play { side: Side::Defenders, action: mv("e4", Some("e5")) },
            Command::Play { side: Side::Attackers, action: mv("d1", None) },
            Command::Play { side: Side::Defenders, action: Action::Resign },
            Command::GenerateMove(None),
            Command::GenerateMove(Some(Side::Defenders)),
            Command::FinalStatus,
            Command::TimeSettings(TimeSettings::Untimed),
            Command::TimeSettings(TimeSettings::Fischer { minutes: 15, add_seconds: 10 }),
            Command::ShowBoard,
            Command::ShowBoardOpenTafl,
            Command::PlayFrom,
            Command::PlayTo { side: Side::Attackers, from: "E5".into() },
            Command::PlayUndo,
            Command::KnownCommand("tafl-lab-sync".into()),
            Command::ListCommands,
            Command::Name,
            Command::Version,
            Command::ProtocolVersion,
            Command::Quit,
        ];
        let mut verbs: Vec<String> = all.iter().map(|c| c.to_string().split(' ').next().unwrap().to_string()).collect();
        verbs.dedup();
        verbs.sort();
        assert_eq!(verbs, COMMANDS, "one command of each kind");
        for c in all {
            assert_eq!(parse(&c.to_string()), c, "{c}");
        }
        for r in [Response::Success(String::new()), Response::Success("c5 e5".into()), Response::Failure("play: not legal".into())] {
            assert_eq!(Response::parse(&r.to_string()), Some(r.clone()), "{r}");
        }
        for g in [
            Generated::Resign(Side::Attackers),
            Generated::Move { side: Side::Defenders, from: "d5".into(), to: "c5".into(), notes: String::new() },
            Generated::Move { side: Side::Attackers, from: "K8".into(), to: "K9".into(), notes: "score: 0.125, delay milliseconds: 14, loops: 400".into() },
        ] {
            assert_eq!(Generated::parse(&g.to_string()), Some(g.clone()), "{g}");
        }
    }

    #[test]
    fn lines_seen_from_hnefatafl_copenhagen_parse() {
        // hnefatafl-text-protocol 6.4.1 on stdin, and its `--host` engine client.
        assert_eq!(
            Response::parse("= play attacker k8 k9, score: 19996, delay milliseconds: 1014, loops: 0"),
            Some(Response::Success("play attacker k8 k9, score: 19996, delay milliseconds: 1014, loops: 0".into()))
        );
        let Some(Response::Success(m)) = Response::parse("= play attacker k8 k9, score: 19996, delay milliseconds: 1014, loops: 0") else { panic!() };
        assert_eq!(
            Generated::parse(&m),
            Some(Generated::Move {
                side: Side::Attackers,
                from: "k8".into(),
                to: "k9".into(),
                notes: "score: 19996, delay milliseconds: 1014, loops: 0".into()
            })
        );
        assert_eq!(
            Generated::parse("play attacker d6 c6"),
            Some(Generated::Move { side: Side::Attackers, from: "d6".into(), to: "c6".into(), notes: String::new() })
        );
        assert_eq!(Generated::parse("play attacker resigns"), Some(Generated::Resign(Side::Attackers)));
        assert_eq!(Response::parse("= "), Some(Response::Success(String::new())));
        assert_eq!(Response::parse("= false"), Some(Response::Success("false".into())));
        assert_eq!(Response::parse("? message: play: the game is already over"), Some(Response::Failure("message: play: the game is already over".into())));
        assert_eq!(Response::parse("2 turn: attacker play: play attacker k8 k9"), None, "its log line between replies");
        assert_eq!(Response::parse("escape_vec:"), None);
        let g = Geometry::new(11).unwrap();
        let start = "/3AAAAA3/5A5/11/A4D4A/A3DDD3A/AA1DDKDD1AA/A3DDD3A/A4D4A/11/5A5/3AAAAA3/";
        let pos = Position::start(Arc::new(Variant::preset("copenhagen").expect("preset")));
        assert_eq!(board_text(&pos), start);
        let mut ours = pos.pieces();
        let mut theirs = parse_board(start, g).unwrap();
        ours.sort_by_key(|&(s, p)| (s, p.opentafl_char()));
        theirs.sort_by_key(|&(s, p)| (s, p.opentafl_char()));
        assert_eq!(theirs, ours);
        // d1-d2 played: its board after it.
        let moved = parse_board("/3AAAAA3/5A5/11/A4D4A/A3DDD3A/AA1DDKDD1AA/A3DDD3A/A4D4A/11/3A1A5/4AAAA3/", g).unwrap();
        assert!(moved.contains(&(g.parse_square("d2").unwrap(), Piece::Attacker)));
        // The commands tafl-lab's client sends it.
        assert_eq!(parse("board_size 11"), Command::BoardSize(11));
        assert_eq!(parse("first_move attacker"), Command::FirstMove(Side::Attackers));
        assert_eq!(parse("play attacker d1 d2"), Command::Play { side: Side::Attackers, action: mv("d1", Some("d2")) });
        assert_eq!(parse("known_command tafl-lab-sync"), Command::KnownCommand("tafl-lab-sync".into()));
    }

    #[test]
    fn boards_read_top_rank_first_and_write_back() {
        let v = Arc::new(Variant::preset("brandubh").expect("preset"));
        let g = v.geometry;
        // The 7x7 start in HTP's form: rank 7 first.
        let start = Position::start(v);
        assert_eq!(board_text(&start), "/3A3/3A3/3D3/AADKDAA/3D3/3A3/3A3/");
        let pieces = parse_board("/3A3/3A3/3D3/AADKDAA/3D3/3A3/3A3/", g).unwrap();
        let key = |v: &mut Vec<(Square, Piece)>| v.sort_by_key(|&(sq, p)| (sq, p.opentafl_char()));
        let mut ours = start.pieces();
        key(&mut ours);
        let mut theirs = pieces;
        key(&mut theirs);
        assert_eq!(theirs, ours);
        // One piece moved from d7 to a7: the top row changes, not the bottom one.
        let moved = parse_board("/A6/3A3/3D3/AADKDAA/3D3/3A3/3A3/", g).unwrap();
        assert!(moved.contains(&(g.parse_square("a7").unwrap(), Piece::Attacker)));
        assert!(parse_board("/3A3/", g).is_none());
        assert!(parse_board("/3A4/3A3/3D3/AADKDAA/3D3/3A3/3A3/", g).is_none());
        assert!(parse_board("/3X3/3A3/3D3/AADKDAA/3D3/3A3/3A3/", g).is_none());
        assert!(parse_board("/3t3/3t3/3T3/ttTKTtt/3T3/3t3/3t3/", g).is_none(), "tafl-lab's own letters are not HTP's");
    }

    #[test]
    fn roles_and_squares_are_read_in_every_spelling_either_side_took() {
        for (text, side) in [
            ("a", Side::Attackers),
            ("Attacker", Side::Attackers),
            ("ATTACKERS", Side::Attackers),
            ("D", Side::Defenders),
            ("defender", Side::Defenders),
            ("Defenders", Side::Defenders),
        ] {
            assert_eq!(role(text), Some(side), "{text}");
        }
        assert_eq!(role("att"), None);
        let g = Geometry::new(13).unwrap();
        assert_eq!(square("M13", g), square("m13", g));
        assert_eq!(square("\u{212A}5", g), square("k5", g), "the Kelvin sign");
        assert!(square("Ä1", g).unwrap_err().contains("Ä1"), "the error names the square as written");
        assert!(square("n1", g).is_err());
        let sq = g.parse_square("m13").unwrap();
        assert_eq!(square_name(sq, g), "M13");
        let g11 = Geometry::new(11).unwrap();
        assert_eq!(square_name(g11.parse_square("k11").unwrap(), g11), "k11");
        let caps = [g11.parse_square("c8").unwrap(), g11.parse_square("e8").unwrap()];
        assert_eq!(captures_text(&caps, g11), "c8 e8 ");
        assert_eq!(parse_captures("E8 c8", g11).unwrap(), caps);
        assert_eq!(parse_captures("", g11), Some(vec![]));
        assert_eq!(parse_captures("c8 zz", g11), None);
    }

    #[test]
    fn bad_lines_are_failures_with_their_reason() {
        assert_eq!(Command::parse("  # a comment"), Ok(None));
        assert_eq!(Command::parse("foo").unwrap_err().to_string(), "unrecognized command: foo");
        assert_eq!(Command::parse("board_size 9").unwrap_err().to_string(), "board_size 9: expected: board_size 7, board_size 11 or board_size 13");
        assert_eq!(Command::parse("play x d1 d2").unwrap_err().to_string(), "bad role \"x\" (expected a, attacker, d or defender)");
        assert_eq!(Command::parse("play a").unwrap_err().to_string(), "expected: play ROLE FROM TO or play ROLE resigns");
        assert_eq!(
            Command::parse("time_settings fischer -1 0").unwrap_err().to_string(),
            "time_settings: \"-1\" is not a whole number >= 0; expected: time_settings un-timed or time_settings fischer MINUTES ADD_SECONDS"
        );
        assert_eq!(parse("play a RESIGN"), Command::Play { side: Side::Attackers, action: Action::Resign });
        assert_eq!(parse("play a d1 d2 # and a comment"), Command::Play { side: Side::Attackers, action: mv("d1", Some("d2")) });
        assert_eq!(Generated::parse("play attacker d1 d2 d3"), None, "a move is four words");
        assert_eq!(Generated::parse("rubbish, score: 0"), None);
    }

    #[test]
    fn refusals_of_generate_move_are_read_by_kind() {
        assert_eq!(Refusal::of("play: the game is already over"), Refusal::GameOver);
        assert_eq!(Refusal::of("message: play: the game is already over"), Refusal::GameOver);
        assert_eq!(Refusal::of("message: play: it isn't your turn"), Refusal::NotYourTurn);
        assert_eq!(Refusal::of("no legal move"), Refusal::Other);
    }
}
