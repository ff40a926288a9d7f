//! `tafl-lab perft`: move-tree leaf counts, to check the move generator against other engines.

use crate::PositionArgs;
use anyhow::{bail, Result};
use clap::Args;
use std::io::Write;
use tafl_rules::perft;

/// Count the leaves of the move tree (the last line is the leaf count).
#[derive(Args)]
pub struct PerftArgs {
    #[command(flatten)]
    pub pos: PositionArgs,
    /// Plies to search.
    #[arg(long)]
    pub depth: u32,
    /// Print the count below each first move.
    #[arg(long)]
    pub divide: bool,
    /// Also print how many leaf moves captured and how many ended the game.
    #[arg(long)]
    pub stats: bool,
}

pub fn run(args: &PerftArgs, out: &mut impl Write) -> Result<()> {
    let depth = args.depth;
    if depth > perft::MAX_DEPTH {
        bail!("--depth {depth}: at most {} (deeper counts never finish)", perft::MAX_DEPTH);
    }
    let mut p = args.pos.position()?;
    let total = if args.divide {
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
    if args.stats {
        writeln!(out, "captures {} game_ends {}", total.captures, total.game_ends)?;
    }
    writeln!(out, "{}", total.leaves)?;
    Ok(())
}
