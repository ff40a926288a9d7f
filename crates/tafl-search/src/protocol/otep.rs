//! The OpenTafl Engine Protocol (OTEP) as typed lines: [`Command`] is every line of both
//! directions, parsed from and formatted to one line.
//!
//! Host → engine: `rules`, `start`, `position`, `side`, `clock`, `play`, `move <position>` (the
//! engine's move was accepted), `error <1-4>` (it was refused), `opponent-move`, `analyze`,
//! `finish`, `goodbye`. Engine → host: `hello`, `simple-moves on|off`, `move <move>`,
//! `analysis`, `error <0|-1> <reason>`, `status`, `dump`. `hello`, `rules`, `position` and
//! `error` go both ways, and so does `move` (a move record one way, a position record the
//! other), so one enum holds them all; which lines a side accepts is that side's business.
//!
//! A line is its verb (the text before the first whitespace) and its arguments. Move and
//! position records and rules strings stay text: they are read against a variant by the
//! caller. Where a record is missing the text is empty, because what an empty record means is
//! the caller's (tafl-lab's engine reads on past a `move` without one, and refuses a
//! `position` without one as it refuses any record it cannot read). Numbers, sides and
//! clocks are read here, and a command whose numbers or side do not read is a
//! [`ParseError::Arguments`] that names its verb: the engine refuses some of those and reads
//! on past others, as it always has.

use super::clock::Clock;
use crate::rules::Side;
use std::fmt;

/// The engine's `error` code for a non-critical refusal: the host shows it and plays on.
pub const ERROR_NONCRITICAL: i32 = 0;
/// The engine's `error` code for a critical one: the host ends the game (OpenTafl resigns for
/// the engine).
pub const ERROR_CRITICAL: i32 = -1;

/// One OTEP line.
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    /// `hello`: the engine is up (and OpenTafl's answer).
    Hello,
    /// `simple-moves on|off`: the engine wants simple move records (`a4-a1`).
    SimpleMoves(bool),
    /// `rules <rules string>`.
    Rules(String),
    /// `start`.
    Start,
    /// `position <position record>` (the first word; empty when none).
    Position(String),
    /// `side attackers|defenders`: the side to move in the position to analyse.
    Side(Side),
    /// `clock ...`: both sides' time.
    Clock(Clock),
    /// `play attackers|defenders`: move for that side.
    Play(Side),
    /// `move <record>` (the first word; empty when none): from the engine its move, from the
    /// host the position after the engine's move, which it accepted.
    Move(String),
    /// `error <code> [message]`: from the host, 1-4 refuse the engine's last move; from the
    /// engine, 0 is non-critical and -1 critical. The message never holds a newline.
    Error { code: i32, message: String },
    /// `opponent-move <move>[|<move>...] [<position>]`: the moves (oldest first) the host
    /// played since the engine's last move, and its board after them. `moves` is empty only
    /// when the line has no word at all.
    OpponentMove { moves: Vec<String>, position: Option<String> },
    /// `analyze <count> <seconds>`: the count at least 1, the seconds finite and positive.
    Analyze { count: usize, seconds: f64 },
    /// `analysis <count> [<move list> <evaluation>]...`.
    Analysis { count: usize, variations: Vec<Variation> },
    /// `finish <code>`: 0 no result, 1 draw, 2 attackers win, 3 defenders win.
    Finish(u8),
    /// `goodbye`.
    Goodbye,
    /// `status <text>`: for the host's status display.
    Status(String),
    /// `dump <text>`: for the host's log.
    Dump(String),
}

/// One move list of an `analysis` line and its evaluation.
#[derive(Clone, Debug, PartialEq)]
pub struct Variation {
    /// The moves from the analysed position, oldest first (written `|`-separated).
    pub moves: Vec<String>,
    /// The evaluation as the engine wrote it (a number; OTEP leaves its form open, and tafl-lab
    /// writes three decimals, or `0` for an agent without a search).
    pub evaluation: String,
}

/// Why a line is not an OTEP command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParseError {
    /// A verb OTEP does not have.
    Unknown(String),
    /// An OTEP command whose arguments do not read: its verb, and why in one line.
    Arguments { verb: &'static str, reason: String },
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseError::Unknown(verb) => write!(f, "unknown command {verb:?}"),
            ParseError::Arguments { reason, .. } => f.write_str(reason),
        }
    }
}

impl std::error::Error for ParseError {}

/// A side as OTEP writes it: `attackers` or `defenders`, exactly.
fn side(text: &str) -> Option<Side> {
    match text {
        "attackers" => Some(Side::Attackers),
        "defenders" => Some(Side::Defenders),
        _ => None,
    }
}

/// The first word of `text`, or an empty string.
fn first_word(text: &str) -> String {
    text.split_whitespace().next().unwrap_or("").to_string()
}

impl Command {
    /// The verb the line starts with.
    pub fn verb(&self) -> &'static str {
        match self {
            Command::Hello => "hello",
            Command::SimpleMoves(_) => "simple-moves",
            Command::Rules(_) => "rules",
            Command::Start => "start",
            Command::Position(_) => "position",
            Command::Side(_) => "side",
            Command::Clock(_) => "clock",
            Command::Play(_) => "play",
            Command::Move(_) => "move",
            Command::Error { .. } => "error",
            Command::OpponentMove { .. } => "opponent-move",
            Command::Analyze { .. } => "analyze",
            Command::Analysis { .. } => "analysis",
            Command::Finish(_) => "finish",
            Command::Goodbye => "goodbye",
            Command::Status(_) => "status",
            Command::Dump(_) => "dump",
        }
    }

    /// Reads one line (without its newline). The verb is the text before the first
    /// whitespace, matched exactly; a line with none (blank, or starting with whitespace) is
    /// `Ok(None)`. Senders trim their lines; tafl-lab's engine and client do.
    ///
    /// # Errors
    /// An unknown verb, or arguments that do not read (see [`ParseError`]).
    pub fn parse(line: &str) -> Result<Option<Command>, ParseError> {
        let (verb, rest) = line.split_once(char::is_whitespace).map_or((line, ""), |(c, r)| (c, r.trim()));
        let bad = |verb: &'static str, reason: String| Err(ParseError::Arguments { verb, reason });
        let none = |verb: &'static str| {
            if rest.is_empty() {
                Ok(())
            } else {
                Err(ParseError::Arguments { verb, reason: format!("{verb} takes no arguments: {rest:?}") })
            }
        };
        let cmd = match verb {
            "" => return Ok(None),
            "hello" => none("hello").map(|()| Command::Hello)?,
            "start" => none("start").map(|()| Command::Start)?,
            "goodbye" => none("goodbye").map(|()| Command::Goodbye)?,
            "simple-moves" => match rest {
                "on" => Command::SimpleMoves(true),
                "off" => Command::SimpleMoves(false),
                _ => return bad("simple-moves", format!("simple-moves {rest:?}: expected on or off")),
            },
            "rules" => Command::Rules(rest.to_string()),
            "position" => Command::Position(first_word(rest)),
            "side" => match side(rest) {
                Some(s) => Command::Side(s),
                None => return bad("side", format!("side {rest:?}: expected attackers or defenders")),
            },
            "clock" => match rest.parse() {
                Ok(c) => Command::Clock(c),
                Err(reason) => return bad("clock", reason),
            },
            "play" => match side(rest) {
                Some(s) => Command::Play(s),
                None => return bad("play", format!("play {rest:?}: expected attackers or defenders")),
            },
            "move" => Command::Move(first_word(rest)),
            "error" => {
                let (code, message) = rest.split_once(char::is_whitespace).map_or((rest, ""), |(c, m)| (c, m.trim()));
                match code.parse() {
                    Ok(code) => Command::Error { code, message: message.to_string() },
                    Err(_) => return bad("error", format!("error {rest:?}: expected a code and a message")),
                }
            }
            "opponent-move" => {
                let mut words = rest.split_whitespace();
                let moves = words.next().map(|list| list.split('|').map(String::from).collect()).unwrap_or_default();
                Command::OpponentMove { moves, position: words.next().map(String::from) }
            }
            "analyze" => {
                let nums: Option<Vec<f64>> = rest.split_whitespace().map(|x| x.parse().ok()).collect();
                match nums {
                    Some(n) if n.len() == 2 && n.iter().all(|x| x.is_finite()) && n[0] >= 1.0 && n[1] > 0.0 => {
                        Command::Analyze { count: n[0] as usize, seconds: n[1] }
                    }
                    _ => return bad("analyze", format!("analyze {rest:?}: expected a move count and seconds (finite, positive)")),
                }
            }
            "analysis" => {
                let usage = || format!("analysis {rest:?}: expected a count, then move lists each with an evaluation");
                let words: Vec<&str> = rest.split_whitespace().collect();
                let Some((count, pairs)) = words.split_first() else { return bad("analysis", usage()) };
                let Ok(count) = count.parse() else { return bad("analysis", usage()) };
                if pairs.len() % 2 != 0 || pairs.chunks(2).any(|p| p[1].parse::<f64>().is_err()) {
                    return bad("analysis", usage());
                }
                let variations =
                    pairs.chunks(2).map(|p| Variation { moves: p[0].split('|').map(String::from).collect(), evaluation: p[1].to_string() }).collect();
                Command::Analysis { count, variations }
            }
            "finish" => match rest.parse() {
                Ok(code) => Command::Finish(code),
                Err(_) => return bad("finish", format!("finish {rest:?}: expected a code 0-3")),
            },
            "status" => Command::Status(rest.to_string()),
            "dump" => Command::Dump(rest.to_string()),
            other => return Err(ParseError::Unknown(other.to_string())),
        };
        Ok(Some(cmd))
    }
}

/// The line, without its newline. An error's message is written on the same line (a newline
/// in it becomes a space).
impl fmt::Display for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let verb = self.verb();
        match self {
            Command::Hello | Command::Start | Command::Goodbye => f.write_str(verb),
            Command::SimpleMoves(on) => write!(f, "{verb} {}", if *on { "on" } else { "off" }),
            Command::Rules(text) | Command::Position(text) | Command::Move(text) | Command::Status(text) | Command::Dump(text) => {
                write!(f, "{verb} {text}")
            }
            Command::Side(s) | Command::Play(s) => write!(f, "{verb} {}", s.name()),
            Command::Clock(c) => write!(f, "{verb} {c}"),
            Command::Error { code, message } if message.is_empty() => write!(f, "{verb} {code}"),
            Command::Error { code, message } => write!(f, "{verb} {code} {}", message.replace('\n', " ")),
            Command::OpponentMove { moves, position } => {
                write!(f, "{verb} {}", moves.join("|"))?;
                match position {
                    Some(p) => write!(f, " {p}"),
                    None => Ok(()),
                }
            }
            Command::Analyze { count, seconds } => write!(f, "{verb} {count} {seconds}"),
            Command::Analysis { count, variations } => {
                write!(f, "{verb} {count}")?;
                for v in variations {
                    write!(f, " {} {}", v.moves.join("|"), v.evaluation)?;
                }
                Ok(())
            }
            Command::Finish(code) => write!(f, "{verb} {code}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::clock::SideClock;

    fn parse(line: &str) -> Command {
        Command::parse(line).unwrap_or_else(|e| panic!("{line:?}: {e}")).unwrap_or_else(|| panic!("{line:?}: blank"))
    }

    fn words(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    /// One command of every kind.
    fn every_command() -> Vec<Command> {
        let side = |millis, overtime, periods| SideClock { millis, overtime, periods };
        vec![
            Command::Hello,
            Command::SimpleMoves(true),
            Command::SimpleMoves(false),
            Command::Rules("dim:7 name:Brandub start:/3t3/3t3/3T3/ttTKTtt/3T3/3t3/3t3/".into()),
            Command::Start,
            Command::Position("/3t3/3t3/3T3/ttTKTtt/3T3/3t3/3t3/".into()),
            Command::Side(Side::Attackers),
            Command::Side(Side::Defenders),
            Command::Clock(Clock { attackers: side(9487.0, false, 1), defenders: side(0.0, true, 0), period_secs: 5.0 }),
            Command::Play(Side::Defenders),
            Command::Move("d1-e1".into()),
            Command::Move("/3t3/3t3/3T3/ttTKTtt/3T3/3t3/4t2/".into()),
            Command::Error { code: 1, message: String::new() },
            Command::Error { code: -1, message: "cannot play: rules not supported".into() },
            Command::OpponentMove { moves: words(&["d4-d2"]), position: Some("/3t3/3t3/3T3/ttT1Ttt/3T3/3K3/3t3/".into()) },
            Command::OpponentMove { moves: words(&["a4-a6", "d6-f6"]), position: None },
            Command::Analyze { count: 3, seconds: 2.5 },
            Command::Analysis {
                count: 2,
                variations: vec![
                    Variation { moves: words(&["d6-f6", "a4-a6"]), evaluation: "0.125".into() },
                    Variation { moves: words(&["d7-f7"]), evaluation: "-0.500".into() },
                ],
            },
            Command::Analysis { count: 1, variations: vec![Variation { moves: words(&["d6-f6"]), evaluation: "0".into() }] },
            Command::Finish(3),
            Command::Goodbye,
            Command::Status("thinking".into()),
            Command::Dump("tree XXXXX 3 nodes".into()),
        ]
    }

    #[test]
    fn every_command_formats_to_a_line_that_parses_back() {
        let all = every_command();
        let mut verbs: Vec<&str> = all.iter().map(Command::verb).collect();
        verbs.dedup();
        assert_eq!(verbs.len(), 17, "one of each: {verbs:?}");
        for c in all {
            let line = c.to_string();
            assert!(!line.contains('\n') && line.starts_with(c.verb()), "{line:?}");
            assert_eq!(parse(&line), c, "{line:?}");
        }
    }

    #[test]
    fn lines_seen_from_opentafl_and_from_tafl_labs_engine_parse() {
        // OpenTafl 0.4.8 as a host (tests/it/opentafl.rs transcripts; its `clock` ends in a space).
        assert_eq!(parse("rules dim:7 name:Brandub start:/3t3/3t3/3T3/ttTKTtt/3T3/3t3/3t3/"), every_command()[3]);
        let c = parse("clock 30000 30000 2 5 5 ");
        let Command::Clock(c) = c else { panic!("{c:?}") };
        assert_eq!((c.attackers.millis, c.period_secs, c.defenders.periods), (30000.0, 2.0, 5));
        assert_eq!(parse("play attackers"), Command::Play(Side::Attackers));
        assert_eq!(parse("opponent-move d4-d2 /x/"), Command::OpponentMove { moves: words(&["d4-d2"]), position: Some("/x/".into()) });
        assert_eq!(parse("error 1"), Command::Error { code: 1, message: String::new() });
        assert_eq!(parse("finish 0"), Command::Finish(0));
        assert_eq!(parse("goodbye"), Command::Goodbye);
        // An engine (tafl-lab's, and the misbehaving ones of tests/fixtures/engines).
        assert_eq!(parse("simple-moves on"), Command::SimpleMoves(true));
        assert_eq!(parse("move d1-e1"), Command::Move("d1-e1".into()));
        assert_eq!(parse("error 0 these rules are not supported"), Command::Error { code: 0, message: "these rules are not supported".into() });
        assert_eq!(parse("error -1 internal failure"), Command::Error { code: -1, message: "internal failure".into() });
        assert_eq!(parse("analysis 1 d6-f6 0").to_string(), "analysis 1 d6-f6 0");
    }

    #[test]
    fn bad_lines_name_their_verb() {
        assert_eq!(Command::parse(""), Ok(None));
        assert_eq!(Command::parse(" play attackers"), Ok(None), "no verb before the first whitespace");
        assert_eq!(Command::parse("frobnicate 1").unwrap_err().to_string(), "unknown command \"frobnicate\"");
        assert_eq!(Command::parse("Play attackers").unwrap_err(), ParseError::Unknown("Play".into()), "verbs are exact");
        let verb = |line: &str| match Command::parse(line) {
            Err(ParseError::Arguments { verb, .. }) => verb,
            r => panic!("{line:?} -> {r:?}"),
        };
        for (line, v) in [
            ("side attacker", "side"),
            ("play", "play"),
            ("clock 1", "clock"),
            ("analyze 0 5", "analyze"),
            ("analyze 1 inf", "analyze"),
            ("error", "error"),
            ("error x", "error"),
            ("finish 4x", "finish"),
            ("simple-moves maybe", "simple-moves"),
            ("hello there", "hello"),
            ("analysis 1 d6-f6", "analysis"),
        ] {
            assert_eq!(verb(line), v, "{line:?}");
        }
        assert_eq!(Command::parse("side attacker").unwrap_err().to_string(), "side \"attacker\": expected attackers or defenders");
        // Records stay text, even none at all.
        assert_eq!(parse("move"), Command::Move(String::new()));
        assert_eq!(parse("position"), Command::Position(String::new()));
        assert_eq!(parse("opponent-move"), Command::OpponentMove { moves: vec![], position: None });
        assert_eq!(parse("analyze 2.7 5"), Command::Analyze { count: 2, seconds: 5.0 });
    }
}
