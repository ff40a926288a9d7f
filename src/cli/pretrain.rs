//! `tafl-lab pretrain`: supervised learning on game records (human archives, OpenTafl saved
//! games), written as a normal model file that `train --init` and agent specs read.

use super::train::BarReporter;
use anyhow::{bail, Result};
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use tafl_lab::nn::parse_device;
use tafl_lab::rules::Variant;
use tafl_lab::train::pretrain::{self, PretrainConfig};
use tafl_lab::train::Reporter;

/// Train a network on game records (human archives, OpenTafl games) by supervised learning.
///
/// The policy learns the moves played, the value the results. Every record is checked move
/// by move with the rules; a bad one is skipped and counted by reason.
///
/// Record forms (told apart by their text): the archive CSV
/// `moves,attacker_captures,defender_captures,result` (aagenielsen.dk; moves `d1-d3`, captures
/// `xk3xk2`, results Black/White/Draw/Ongoing); numbered lines `1. k8-i8 d6-d9 2. ... white
/// won`; OpenTafl game records (`.otg`, one game per file, `[rules:...]` tag). White is the
/// defenders. A directory stands for its .csv, .txt and .otg files.
#[derive(clap::Args)]
pub struct PretrainArgs {
    /// Record files or directories of them (repeat the flag for several).
    #[arg(long = "games", required = true)]
    pub games: Vec<PathBuf>,
    /// The variant the records are played on (an OpenTafl record's own rules must match it).
    #[arg(long, default_value = "copenhagen")]
    pub variant: String,
    /// Where to write the model: a .safetensors file, or a directory (gets model.safetensors);
    /// pretrain.json (the figures of each epoch) is written beside it.
    #[arg(long)]
    pub out: PathBuf,
    #[command(flatten)]
    pub net: super::NetArgs,
    /// Passes over the training games.
    #[arg(long, default_value_t = PretrainConfig::default().epochs)]
    pub epochs: usize,
    /// Positions per training step.
    #[arg(long, default_value_t = PretrainConfig::default().batch_size)]
    pub batch_size: usize,
    /// Learning rate (SGD with momentum 0.9; a tenth of it for the last fifth of the steps).
    #[arg(long, default_value_t = PretrainConfig::default().learning_rate)]
    pub lr: f64,
    /// Share of the games held out to measure move prediction and value loss.
    #[arg(long, default_value_t = PretrainConfig::default().holdout)]
    pub holdout: f64,
    /// Stop training after this many minutes (0 = no limit); the model is saved either way.
    #[arg(long, default_value_t = PretrainConfig::default().minutes)]
    pub minutes: f64,
    #[arg(long, default_value_t = PretrainConfig::default().seed)]
    pub seed: u64,
    /// No progress bars.
    #[arg(long)]
    pub quiet: bool,
    /// Print every skipped record (file:line: reason), not only the first of each kind.
    #[arg(long)]
    pub verbose: bool,
    /// Device to train on: auto (cuda if present), cpu, cuda or cuda:N.
    #[arg(long, default_value = "auto")]
    pub device: String,
}

pub fn run(args: &PretrainArgs, out: &mut impl Write) -> Result<()> {
    let variant = Arc::new(Variant::from_spec(&args.variant)?);
    let cfg = PretrainConfig {
        net: args.net.config(variant.geometry.size())?,
        epochs: args.epochs,
        batch_size: args.batch_size,
        learning_rate: args.lr,
        holdout: args.holdout,
        minutes: args.minutes,
        seed: args.seed,
        ..PretrainConfig::default()
    };
    cfg.validate()?;
    let device = parse_device(&args.device)?;
    let model = if args.out.is_dir() || args.out.extension().is_none() {
        std::fs::create_dir_all(&args.out).map_err(|e| anyhow::anyhow!("--out {}: {e}", args.out.display()))?;
        args.out.join(tafl_lab::nn::checkpoint::MODEL_FILE)
    } else {
        args.out.clone()
    };
    let files = pretrain::record_files(&args.games)?;
    let loaded = pretrain::load_games(&files, &variant)?;
    let reporter = BarReporter::new(args.quiet);
    reporter.line(&format!("{} game(s) read from {} file(s): {} used, {} skipped", loaded.read, files.len(), loaded.games.len(), loaded.skipped_total()));
    for (class, (n, example)) in loaded.skipped_by_class() {
        reporter.line(&format!("  skipped {n}: {class} (first: {example})"));
    }
    if args.verbose {
        for (_, line) in &loaded.skips {
            reporter.line(&format!("  {line}"));
        }
    }
    if loaded.games.is_empty() {
        bail!("no usable games: nothing to train on");
    }
    tafl_lab::nn::set_torch_threads(super::cores());
    let report = pretrain::pretrain(&variant, &loaded, &files, &cfg, device, &model, &reporter)?;
    let last = report.epochs.last().map(pretrain::epoch_text).unwrap_or_default();
    writeln!(
        out,
        "wrote {} ({} network, input encoding {}, {} on {} games: {} training, {} held out; {} positions); last {last}",
        model.display(),
        cfg.net,
        cfg.net.encoding,
        variant.name,
        report.games_used,
        report.train_games,
        report.holdout_games,
        report.train_positions + report.holdout_positions
    )?;
    writeln!(out, "start a run from it: tafl-lab train --config CONFIG --init {}", model.display())?;
    Ok(())
}
