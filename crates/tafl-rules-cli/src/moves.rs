//! `tafl-lab moves`: the legal moves of a position, sorted, so other programs can diff them.

use crate::PositionArgs;
use anyhow::Result;
use clap::Args;
use std::io::Write;

/// Print the legal moves of a position, sorted, one a line.
#[derive(Args)]
pub struct MovesArgs {
    #[command(flatten)]
    pub pos: PositionArgs,
}

pub fn run(args: &MovesArgs, out: &mut impl Write) -> Result<()> {
    for mv in args.pos.position()?.legal_moves() {
        writeln!(out, "{mv}")?;
    }
    Ok(())
}
