//! `tafl-lab show`: a position as a board, to check a position string or a move list by eye.

use crate::PositionArgs;
use anyhow::Result;
use clap::Args;
use std::io::Write;
use tafl_rules::notation;

/// Print a position as an ASCII board with coordinates, side to move and status.
#[derive(Args)]
pub struct ShowArgs {
    #[command(flatten)]
    pub pos: PositionArgs,
}

pub fn run(args: &ShowArgs, out: &mut impl Write) -> Result<()> {
    let pos = args.pos.position()?;
    writeln!(out, "{pos}")?;
    writeln!(out, "position: {}", notation::position_string(&pos))?;
    Ok(())
}
