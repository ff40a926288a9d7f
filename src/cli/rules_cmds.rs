//! The commands that need only the rules (`variants`, `show`, `moves`, `perft`, `replay`,
//! `demo`) and the command-line habits every command shares (one-line errors).
//!
//! This file is compiled into both binaries: `tafl-lab` (`src/main.rs`), which depends on
//! the rules crate alone and so starts without loading LibTorch, and `tafl-lab-torch`
//! (`src/cli/mod.rs`), which has every command. `tafl-lab` runs these commands itself and
//! hands every other command line to `tafl-lab-torch` beside it, so users see one program.
//! It uses `tafl_rules` only, never `tafl_lab`.

use anyhow::{anyhow, bail, Context, Result};
use clap::{Args, Parser, Subcommand};
use rand::{Rng, SeedableRng};
use std::io::{Read, Write};
use std::sync::Arc;
use tafl_rules::notation::{self, parse_move, split_moves};
use tafl_rules::{perft, play, Position, Side, Variant};

/// The rules-only subcommands (flattened into the full command list).
#[derive(Subcommand)]
pub enum RulesCommand {
    /// List the preset variants.
    Variants,
    /// Print a position as an ASCII board with coordinates, side to move and status.
    Show(PositionArgs),
    /// Print the legal moves of a position, sorted, one a line.
    Moves(PositionArgs),
    /// Count the leaves of the move tree (the last line is the leaf count).
    Perft {
        #[command(flatten)]
        pos: PositionArgs,
        /// Plies to search.
        #[arg(long)]
        depth: u32,
        /// Print the count below each first move.
        #[arg(long)]
        divide: bool,
        /// Also print how many leaf moves captured and how many ended the game.
        #[arg(long)]
        stats: bool,
    },
    /// Replay a move list (a file or - for stdin) and print one JSON object per ply; with
    /// --games, replay one game per line and print one JSON verdict per game.
    Replay {
        #[command(flatten)]
        pos: PositionArgs,
        /// File of whitespace-separated moves, or - for standard input.
        file: String,
        /// The file holds many games, one per line (blank lines and lines starting with `#`
        /// are skipped), each from the start position: print one JSON line per game with its
        /// verdict (plies, status, reason, or the error) instead of one per ply.
        #[arg(long)]
        games: bool,
    },
    /// Play and print one game between two random players (the main job until training exists).
    Demo {
        #[arg(long, default_value = "brandubh")]
        variant: String,
        /// Random seed (printed, so a game can be repeated).
        #[arg(long)]
        seed: Option<u64>,
    },
}

/// Whether `name` is one of the rules-only subcommands (used by the front binary only).
#[allow(dead_code)]
pub fn is_rules_command(name: &str) -> bool {
    matches!(name, "variants" | "show" | "moves" | "perft" | "replay" | "demo")
}

/// Parses the command line; a syntax error becomes one line (clap's first line, naming the
/// argument) and exit 1, like every other error. `--help` and `--version` print and exit 0.
pub fn parse_args<P: Parser>() -> Result<P> {
    match P::try_parse() {
        Ok(cli) => Ok(cli),
        Err(e) if !e.use_stderr() => e.exit(),
        Err(e) if e.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => e.exit(),
        Err(e) => {
            let text = e.render().to_string();
            let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("bad arguments");
            bail!("{} (see --help)", first.trim_start_matches("error: ").trim())
        }
    }
}

/// Where a command starts: a variant, an optional position, optional moves.
#[derive(Args, Clone)]
pub struct PositionArgs {
    /// Preset name, variant TOML path, or OpenTafl rules string.
    #[arg(long, default_value = "brandubh")]
    variant: String,
    /// OpenTafl position string (first row = rank 1); default: the variant's start.
    #[arg(long)]
    position: Option<String>,
    /// Side to move in --position: attackers or defenders (default: the variant's first mover).
    #[arg(long)]
    to_move: Option<Side>,
    /// Space-separated moves to play from the position first, e.g. "d1-d3 d5-b5".
    #[arg(long)]
    moves: Option<String>,
}

impl PositionArgs {
    pub fn variant(&self) -> Result<Arc<Variant>> {
        Ok(Arc::new(Variant::from_spec(&self.variant)?))
    }

    pub fn position(&self) -> Result<Position> {
        let variant = self.variant()?;
        let mut pos = match &self.position {
            Some(s) => {
                let side = self.to_move.unwrap_or(variant.rules.first);
                notation::parse_position(variant, s, side).map_err(|e| anyhow!("--position: {e}"))?
            }
            None => {
                if self.to_move.is_some() {
                    bail!("--to-move needs --position");
                }
                Position::start(variant)
            }
        };
        if let Some(moves) = &self.moves {
            for (i, tok) in split_moves(moves).into_iter().enumerate() {
                let rec = parse_move(tok, pos.geometry()).map_err(|e| anyhow!("--moves: move {}: {e}", i + 1))?;
                pos.play(rec.mv).map_err(|e| anyhow!("--moves: move {}: {e}", i + 1))?;
            }
        }
        Ok(pos)
    }
}


/// Runs one rules-only command.
pub fn run(cmd: RulesCommand, out: &mut impl Write) -> Result<()> {
    match cmd {
        RulesCommand::Variants => {
            for (name, _) in tafl_rules::variant::PRESETS {
                let v = Variant::preset(name);
                let (a, d) = v.piece_counts();
                writeln!(
                    out,
                    "{:<18} {:>2}x{:<2} {:>2} attackers, {:>2} defenders + king  {}",
                    name,
                    v.geometry.size(),
                    v.geometry.size(),
                    a,
                    d,
                    v.description
                )?;
            }
        }
        RulesCommand::Show(args) => {
            let pos = args.position()?;
            writeln!(out, "{pos}")?;
            writeln!(out, "position: {}", notation::position_string(&pos))?;
        }
        RulesCommand::Moves(args) => {
            for mv in args.position()?.legal_moves() {
                writeln!(out, "{mv}")?;
            }
        }
        RulesCommand::Perft { pos, depth, divide, stats } => {
            if depth > perft::MAX_DEPTH {
                bail!("--depth {depth}: at most {} (deeper counts never finish)", perft::MAX_DEPTH);
            }
            let mut p = pos.position()?;
            let total = if divide {
                let mut total = perft::PerftStats::default();
                for (mv, s) in perft::divide(&mut p, depth) {
                    writeln!(out, "{mv} {}", s.leaves)?;
                    total += s;
                }
                if depth == 0 {
                    total.leaves = 1;
                }
                total
            } else {
                perft::perft(&mut p, depth)
            };
            if stats {
                writeln!(out, "captures {} game_ends {}", total.captures, total.game_ends)?;
            }
            writeln!(out, "{}", total.leaves)?;
        }
        RulesCommand::Replay { pos, file, games: false } => replay(&pos, &file, out)?,
        RulesCommand::Replay { pos, file, games: true } => replay_games(&pos, &file, out)?,
        RulesCommand::Demo { variant, seed } => demo(&variant, seed, out)?,
    }
    Ok(())
}

fn read_input(file: &str) -> Result<String> {
    if file == "-" {
        let mut s = String::new();
        std::io::stdin().read_to_string(&mut s).context("reading standard input")?;
        Ok(s)
    } else {
        std::fs::read_to_string(file).with_context(|| format!("cannot read {file}"))
    }
}

/// Plays `text`'s moves from `pos`, calling `each` after every ply; the error names the ply.
fn play_record(pos: &mut Position, text: &str, mut each: impl FnMut(usize, &notation::MoveRecord, Side, &[tafl_rules::Square], &Position) -> Result<()>) -> Result<()> {
    let start_ply = pos.ply();
    for (i, tok) in split_moves(text).into_iter().enumerate() {
        let ply = start_ply as usize + i + 1;
        let rec = parse_move(tok, pos.geometry()).map_err(|e| anyhow!("ply {ply}: {e}"))?;
        let side = pos.to_move();
        let captures = pos.play(rec.mv).map_err(|e| anyhow!("ply {ply}: {e}"))?;
        if let Some(claimed) = &rec.captures {
            if *claimed != captures {
                let e = tafl_rules::MoveError::CaptureMismatch { mv: rec.mv, claimed: claimed.clone(), actual: captures };
                bail!("ply {ply}: {e}");
            }
        }
        each(ply, &rec, side, &captures, pos)?;
    }
    Ok(())
}

/// `(status, reason)` of a position for JSON output.
fn status(pos: &Position) -> (&'static str, serde_json::Value) {
    match pos.outcome() {
        None => ("ongoing", serde_json::Value::Null),
        Some(o) => (o.status_name(), serde_json::Value::from(o.reason.name())),
    }
}

fn replay(args: &PositionArgs, file: &str, out: &mut impl Write) -> Result<()> {
    let text = read_input(file)?;
    let mut pos = args.position()?;
    play_record(&mut pos, &text, |ply, rec, side, captures, pos| {
        let (status, reason) = status(pos);
        let line = serde_json::json!({
            "ply": ply,
            "move": rec.mv.to_string(),
            "side": side.name(),
            "captures": captures.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
            "status": status,
            "reason": reason,
        });
        writeln!(out, "{line}")?;
        Ok(())
    })
}

/// Many games in one process: one JSON verdict per game line. A game with an illegal move
/// gets its error in the verdict (`"error": "ply 7: ..."`) and the others go on; a summary
/// goes to standard error.
fn replay_games(args: &PositionArgs, file: &str, out: &mut impl Write) -> Result<()> {
    let text = read_input(file)?;
    let start = args.position()?;
    let (mut games, mut bad) = (0usize, 0usize);
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        games += 1;
        let mut pos = start.clone();
        let mut plies = 0;
        let result = play_record(&mut pos, line, |_, _, _, _, _| {
            plies += 1;
            Ok(())
        });
        let (status, reason) = status(&pos);
        let error = result.err().map(|e| {
            bad += 1;
            format!("{e:#}")
        });
        let verdict = serde_json::json!({
            "line": i + 1,
            "plies": plies,
            "status": status,
            "reason": reason,
            "error": error,
        });
        writeln!(out, "{verdict}")?;
    }
    out.flush()?;
    eprintln!("replayed {games} games: {} legal to the end, {bad} with an error", games - bad);
    Ok(())
}

fn demo(variant: &str, seed: Option<u64>, out: &mut impl Write) -> Result<()> {
    let variant = Arc::new(Variant::from_spec(variant)?);
    let seed = seed.unwrap_or_else(|| {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
    });
    let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
    writeln!(out, "{}: random player vs random player (seed {seed})", variant.name)?;
    writeln!(out, "{}", Position::start(variant.clone()))?;
    let game = play::random_game(variant, &mut |n| rng.gen_range(0..n));
    for (i, m) in game.moves.iter().enumerate() {
        let caps = if m.captures.is_empty() {
            String::new()
        } else {
            format!("  captures {}", m.captures.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(" "))
        };
        writeln!(out, "{:>4}. {:<9} {}{caps}", i + 1, m.side.name(), m.mv)?;
    }
    writeln!(out, "{}", game.final_position)?;
    writeln!(out, "result: {} after {} plies", game.outcome, game.moves.len())?;
    Ok(())
}

