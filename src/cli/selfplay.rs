//! `tafl-lab selfplay`: a worker beside `train`, writing game shards into a run directory that
//! many workers (on this machine or others) may share.

use super::train::BarReporter;
use anyhow::Result;
use std::path::PathBuf;
use tafl_lab::train::{self, Reporter};

/// A self-play worker: plays games with the newest model of a run and writes shards into
/// its games/ directory (many may share one run directory).
#[derive(clap::Args)]
pub struct SelfplayArgs {
    #[arg(long)]
    pub run_dir: PathBuf,
    /// Stop after this many games (0 = run until killed).
    #[arg(long, default_value_t = 0)]
    pub games: u64,
    /// Stop after this many minutes (0 = no limit).
    #[arg(long, allow_negative_numbers = true, default_value_t = 0.0)]
    pub minutes: f64,
    /// Worker name used in shard file names (the process id is added).
    #[arg(long, default_value = "worker")]
    pub name: String,
    #[arg(long)]
    pub quiet: bool,
}

pub fn run(args: &SelfplayArgs) -> Result<()> {
    tafl_lab::nn::set_torch_threads(super::cores());
    let reporter = BarReporter::new(args.quiet);
    let n = train::worker(&args.run_dir, &args.name, args.games, args.minutes, &reporter)?;
    reporter.line(&format!("worker wrote {n} games to {}", args.run_dir.join("games").display()));
    Ok(())
}
