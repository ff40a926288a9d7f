//! `tafl-lab bench`: throughput figures, printed (never asserted: speed belongs in benchmarks,
//! not tests).

use anyhow::Result;
use clap::Subcommand;
use rand::SeedableRng;
use serde_json::json;
use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tafl_lab::play::random_playout;
use tafl_lab::rules::perft::perft;
use tafl_lab::rules::{Position, Variant};

#[derive(Subcommand)]
pub enum BenchWhat {
    /// Perft leaves/s and random playouts/s on one thread (copenhagen and brandubh).
    Rules {
        /// Print one JSON object instead of a table.
        #[arg(long)]
        json: bool,
        /// Perft depth for copenhagen (4 is the reference figure; 3 is quick).
        #[arg(long, default_value_t = 4)]
        depth: u32,
        /// Seconds of random playouts per variant.
        #[arg(long, default_value_t = 3.0)]
        seconds: f64,
    },
}

pub fn run(what: BenchWhat, out: &mut impl Write) -> Result<()> {
    match what {
        BenchWhat::Rules { json, depth, seconds } => rules(json, depth, seconds, out),
    }
}

fn perft_rate(name: &str, depth: u32) -> (u64, f64) {
    let mut pos = Position::start(Arc::new(Variant::preset(name)));
    let t = Instant::now();
    let stats = perft(&mut pos, depth);
    let secs = t.elapsed().as_secs_f64();
    (stats.leaves, stats.leaves as f64 / secs)
}

fn playout_rate(name: &str, seconds: f64) -> (u64, f64, f64) {
    let start = Position::start(Arc::new(Variant::preset(name)));
    let mut rng = rand::rngs::SmallRng::seed_from_u64(1);
    let mut buf = Vec::with_capacity(256);
    let budget = Duration::from_secs_f64(seconds);
    let t = Instant::now();
    let (mut games, mut plies) = (0u64, 0u64);
    while t.elapsed() < budget {
        for _ in 0..64 {
            let mut pos = start.clone();
            plies += u64::from(random_playout(&mut pos, &mut rng, &mut buf).1);
            games += 1;
        }
    }
    let secs = t.elapsed().as_secs_f64();
    (games, games as f64 / secs, plies as f64 / games as f64)
}

fn rules(json: bool, depth: u32, seconds: f64, out: &mut impl Write) -> Result<()> {
    let (cph_leaves, cph_rate) = perft_rate("copenhagen", depth);
    let bdepth = depth + 1;
    let (br_leaves, br_rate) = perft_rate("brandubh", bdepth);
    let (br_games, br_playouts, br_len) = playout_rate("brandubh", seconds);
    let (cp_games, cp_playouts, cp_len) = playout_rate("copenhagen", seconds);
    if json {
        let v = json!({
            "threads": 1,
            "copenhagen": {"perft_depth": depth, "perft_leaves": cph_leaves, "perft_leaves_per_s": cph_rate,
                           "playouts": cp_games, "playouts_per_s": cp_playouts, "mean_plies": cp_len},
            "brandubh": {"perft_depth": bdepth, "perft_leaves": br_leaves, "perft_leaves_per_s": br_rate,
                         "playouts": br_games, "playouts_per_s": br_playouts, "mean_plies": br_len},
        });
        writeln!(out, "{v}")?;
    } else {
        writeln!(out, "rules benchmark, one thread")?;
        writeln!(out, "copenhagen perft({depth}): {cph_leaves} leaves, {:.2} M leaves/s", cph_rate / 1e6)?;
        writeln!(out, "brandubh   perft({bdepth}): {br_leaves} leaves, {:.2} M leaves/s", br_rate / 1e6)?;
        writeln!(out, "brandubh   random playouts: {br_playouts:.0}/s (mean {br_len:.1} plies, {br_games} games)")?;
        writeln!(out, "copenhagen random playouts: {cp_playouts:.0}/s (mean {cp_len:.1} plies, {cp_games} games)")?;
    }
    Ok(())
}
