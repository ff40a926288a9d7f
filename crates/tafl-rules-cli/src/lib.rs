//! tafl-lab's rules-only commands (`variants`, `show`, `moves`, `perft`, `replay`, `demo`), one
//! file each, and what they share: `PositionArgs` and one-line parse errors (`parse_args`).
//!
//! A crate of its own on `tafl-rules` alone (no LibTorch), used by both binaries: `tafl-lab`
//! (`src/main.rs`) runs these commands without loading LibTorch and hands every other command
//! line to `tafl-lab-torch` (`src/cli/mod.rs`), which flattens [`RulesCommand`] into its full
//! command list.

mod demo;
mod moves;
mod perft;
mod replay;
mod show;
mod variants;

use anyhow::{anyhow, bail, Result};
use clap::{Args, Parser, Subcommand};
use std::io::Write;
use std::sync::Arc;
use tafl_rules::notation::{self, parse_move, split_moves};
use tafl_rules::{Position, Side, Variant};

/// The rules-only subcommands (flattened into the full command list).
#[derive(Subcommand)]
pub enum RulesCommand {
    Variants(variants::VariantsArgs),
    Show(show::ShowArgs),
    Moves(moves::MovesArgs),
    Perft(perft::PerftArgs),
    Replay(replay::ReplayArgs),
    Demo(demo::DemoArgs),
}

/// Whether `name` is one of the rules-only subcommands (the front binary runs those itself).
pub fn is_rules_command(name: &str) -> bool {
    matches!(name, "variants" | "show" | "moves" | "perft" | "replay" | "demo")
}

/// Runs one rules-only command.
pub fn run(cmd: &RulesCommand, out: &mut impl Write) -> Result<()> {
    match cmd {
        RulesCommand::Variants(args) => variants::run(args, out),
        RulesCommand::Show(args) => show::run(args, out),
        RulesCommand::Moves(args) => moves::run(args, out),
        RulesCommand::Perft(args) => perft::run(args, out),
        RulesCommand::Replay(args) => replay::run(args, out),
        RulesCommand::Demo(args) => demo::run(args, out),
    }
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

    /// The moves from the variant's start to [`PositionArgs::position`], when it is reached
    /// that way (no `--position`); `None` for a set-up position. Used by `analyze` in
    /// `tafl-lab-torch`.
    pub fn history(&self) -> Result<Option<Vec<tafl_rules::Move>>> {
        if self.position.is_some() {
            return Ok(None);
        }
        let variant = self.variant()?;
        let g = variant.geometry;
        let tokens = self.moves.as_deref().map(split_moves).unwrap_or_default();
        let moves = tokens.into_iter().enumerate().map(|(i, tok)| parse_move(tok, g).map(|r| r.mv).map_err(|e| anyhow!("--moves: move {}: {e}", i + 1)));
        Ok(Some(moves.collect::<Result<_>>()?))
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
