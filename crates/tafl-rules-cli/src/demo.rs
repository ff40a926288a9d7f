//! `tafl-lab demo`: one random game printed ply by ply, to show the rules at work with
//! nothing trained.

use anyhow::Result;
use clap::Args;
use rand::{Rng, SeedableRng};
use std::io::Write;
use std::sync::Arc;
use tafl_rules::{play, Position, Variant};

/// Play and print one game between two random players (the main job until training exists).
#[derive(Args)]
pub struct DemoArgs {
    #[arg(long, default_value = "brandubh")]
    pub variant: String,
    /// Random seed (printed, so a game can be repeated).
    #[arg(long)]
    pub seed: Option<u64>,
}

pub fn run(args: &DemoArgs, out: &mut impl Write) -> Result<()> {
    let variant = Arc::new(Variant::from_spec(&args.variant)?);
    let seed = args.seed.unwrap_or_else(|| std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64));
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
