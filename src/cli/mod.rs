//! Command-line interface: clap subcommands over the library layers. This is the only place
//! that uses `anyhow`, prints progress and chooses exit codes.
//!
//! One file per subcommand: `<name>.rs` holds its `#[derive(clap::Args)]` struct (the flags
//! and their help) and a `run` that takes it. The rules-only commands live in the
//! `tafl-rules-cli` crate (crates/tafl-rules-cli), one file each as well, which the
//! LibTorch-free front binary (`src/main.rs`) uses too. What several commands share is here:
//! `DeviceArgs`, `ArenaArgs`, `NetArgs`, `AgentArgs`,
//! `cores()`, `progress_bar()` and the agent helpers.

mod analyze;
mod balance;
mod bench;
mod calibrate;
mod doctor;
mod engine;
mod export;
mod r#match;
mod new_model;
mod play;
mod pretrain;
mod report;
mod selfplay;
mod tournament;
mod train;
mod view;

use anyhow::{anyhow, Result};
use clap::{Parser, Subcommand};
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::sync::Arc;
use tafl_lab::arena::{AgentKind, AgentSpec};
use tafl_lab::export::model_variant;
use tafl_lab::nn::{checkpoint, Precision};
use tafl_lab::rules::Variant;
use tafl_lab::search::SearchConfig;
use tafl_rules_cli as rules;

/// `--device` and `--precision`, shared by every command that runs a network.
#[derive(clap::Args, Clone)]
pub struct DeviceArgs {
    /// Device for networks: auto (cuda if present), cpu, cuda or cuda:N. An agent spec's own
    /// `device=` wins over this.
    #[arg(long, default_value = "auto")]
    pub device: String,
    /// Number format of network inference: auto (bf16 on CPUs with AVX-512 BF16 or AMX,
    /// where it is 1.8-4x faster; fp32 elsewhere and on CUDA), fp32 or bf16. Training is
    /// always fp32. An agent spec's own `precision=` wins over this.
    #[arg(long, default_value = "auto")]
    pub precision: Precision,
}

impl DeviceArgs {
    /// `spec` with this device and precision wherever it names none.
    pub fn apply(&self, spec: AgentSpec) -> AgentSpec {
        spec.default_device(&self.device).default_precision(self.precision)
    }
}

/// The flags of the commands that play agents against each other (`match`, `tournament`):
/// the variant, the seed, the random openings, the device and the progress bar. Each command
/// adds its own (the agents, the number of games and what to write).
#[derive(clap::Args, Clone)]
pub struct ArenaArgs {
    #[arg(long, default_value = "brandubh")]
    pub variant: String,
    /// Random seed: the same seed replays the same games.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Random opening plies shared by each pair of games (variety for deterministic agents).
    #[arg(long, default_value_t = 2)]
    pub opening_plies: u32,
    #[command(flatten)]
    pub device: DeviceArgs,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
}

/// `--blocks`, `--channels` and `--encoding`, shared by the commands that make a network.
#[derive(clap::Args, Clone)]
pub struct NetArgs {
    /// Residual blocks (default: by board size, 4 on 7x7, 6 above).
    #[arg(long)]
    pub blocks: Option<usize>,
    /// Channels (default: by board size, 32 on 7x7, 48 on 9x9, 64 above).
    #[arg(long)]
    pub channels: Option<usize>,
    /// Input planes: 2 (the default: version 1's ten and nine of the king's routes, captures
    /// and reach) or 1 (the ten planes of older models); see models/README.md.
    #[arg(long)]
    pub encoding: Option<tafl_lab::nn::encoding::Encoding>,
}

impl NetArgs {
    /// The network for a board: the flags, else `NetConfig::default_for` (newest encoding).
    pub fn config(&self, board_size: u8) -> Result<tafl_lab::nn::NetConfig> {
        let d = tafl_lab::nn::NetConfig::default_for(board_size);
        let cfg = tafl_lab::nn::NetConfig {
            blocks: self.blocks.unwrap_or(d.blocks),
            channels: self.channels.unwrap_or(d.channels),
            encoding: self.encoding.unwrap_or(d.encoding),
            ownership: false,
            value_per_side: false,
        };
        cfg.check().map_err(|e| anyhow!("{}", e.replacen("net.", "--", 1)))?;
        Ok(cfg)
    }
}

/// The cores this process may use (`nn::cores`, the one place that asks).
pub use tafl_lab::nn::cores;

/// A progress bar in the one style every command uses: `prefix [====>   ] pos/len elapsed
/// (eta) message`; hidden when `quiet`.
pub fn progress_bar(len: u64, prefix: impl Into<String>, quiet: bool) -> indicatif::ProgressBar {
    if quiet {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(len);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{prefix:<28} [{bar:30}] {pos}/{len} {elapsed_precise} (eta {eta}) {msg}")
            .expect("a valid template")
            .progress_chars("=> "),
    );
    bar.set_prefix(prefix.into());
    bar
}

const LONG_VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (libtorch ", env!("TAFL_TORCH_VERSION"), ", tch 0.26)");

#[derive(Parser)]
#[command(
    name = "tafl-lab",
    version = LONG_VERSION,
    about = "Self-play training laboratory for the tafl board games",
    long_about = "tafl-lab simulates tafl variants exactly (rules are data: configs/variants/*.toml), \
                  and on those rules is a self-play trainer, a balance laboratory and an engine.\n\n\
                  --variant takes a preset name (see `tafl-lab variants`), a path to a variant TOML file, \
                  or an OpenTafl rules string."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    #[command(flatten)]
    Rules(rules::RulesCommand),
    Analyze(analyze::AnalyzeArgs),
    Match(r#match::MatchArgs),
    Tournament(tournament::TournamentArgs),
    Train(train::TrainArgs),
    Pretrain(pretrain::PretrainArgs),
    Selfplay(selfplay::SelfplayArgs),
    Balance(balance::BalanceArgs),
    Calibrate(calibrate::CalibrateArgs),
    Report(report::ReportArgs),
    Export(export::ExportArgs),
    Engine(engine::EngineArgs),
    Play(play::PlayArgs),
    NewModel(new_model::NewModelArgs),
    Bench(bench::BenchArgs),
    Doctor(doctor::DoctorArgs),
    View(view::ViewArgs),
}

pub fn run() -> Result<()> {
    let cli: Cli = rules::parse_args()?;
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    match cli.command {
        Command::Rules(cmd) => rules::run(&cmd, &mut out)?,
        Command::Analyze(args) => analyze::run(&args, &mut out)?,
        Command::Match(args) => r#match::run(&args, &mut out)?,
        Command::Tournament(args) => tournament::run(&args, &mut out)?,
        Command::Train(args) => train::run(&args)?,
        Command::Pretrain(args) => pretrain::run(&args, &mut out)?,
        Command::Selfplay(args) => selfplay::run(&args)?,
        Command::Balance(args) => balance::run(&args, &mut out)?,
        Command::Calibrate(args) => calibrate::run(&args, &mut out)?,
        Command::Report(args) => report::run(&args, &mut out)?,
        Command::Export(args) => export::run(&args, &mut out)?,
        Command::Engine(args) => {
            out.flush()?;
            engine::run(&args)?
        }
        Command::Play(args) => play::run(&args, std::io::stdin().lock(), &mut out)?,
        Command::NewModel(args) => new_model::run(&args, &mut out)?,
        Command::Bench(args) => bench::run(&args, &mut out)?,
        Command::Doctor(args) => doctor::run(&args, &mut out)?,
        Command::View(args) => view::run(&args, &mut out)?,
    }
    out.flush()?;
    Ok(())
}

/// Refuses a `--shard` with more shards than a match of `games` games has pairs (a shard
/// without games); `what` names the games (`--games`).
pub fn check_shard(shard: Option<tafl_lab::arena::Shard>, games: usize, what: &str) -> Result<()> {
    match shard {
        Some(s) if s.count > games.div_ceil(2) => {
            Err(anyhow!("--shard {s}: {what} {games} make {} pairs of games, fewer than {} shards (a shard plays whole pairs)", games.div_ceil(2), s.count))
        }
        _ => Ok(()),
    }
}

/// Parses an agent spec given by `flag`; `device` applies where the spec names none.
pub fn parse_agent(flag: &str, s: &str, device: &DeviceArgs) -> Result<AgentSpec> {
    let spec = s.parse::<AgentSpec>().map_err(|e| anyhow!("{flag}: {e}"))?;
    Ok(device.apply(spec))
}

/// `--agent SPEC` for the commands that run one agent of their own (`play`, `engine`), or its
/// shorthands `--model` and `--sims`.
#[derive(clap::Args, Clone)]
pub struct AgentArgs {
    /// The agent, as a spec: az:model=PATH,sims=N, gumbel:model=PATH,sims=N[,k=16],
    /// mcts:sims=N, ... (the forms of `match --a`). Instead of --model and --sims.
    #[arg(long, conflicts_with_all = ["model", "sims"])]
    pub agent: Option<String>,
    /// Model file, `latest` pointer or run directory: shorthand for --agent az:model=PATH,sims=N
    /// (without it and --agent: random-rollout MCTS, mcts:sims=N).
    #[arg(long)]
    pub model: Option<PathBuf>,
    /// Simulations per move, for the --model shorthand (engine: unless --movetime, the host's
    /// clock or time_settings give a time instead).
    #[arg(long, default_value_t = SearchConfig::ROLLOUT_SIMS)]
    pub sims: u32,
}

impl AgentArgs {
    /// The agent (`--agent`, else `--model`'s az agent or random-rollout MCTS with `--sims`
    /// simulations), and the variant: its model's (checked against `variant` when both are
    /// given), else `variant`; `None` when neither names one.
    pub fn resolve(&self, variant: Option<&str>, device: &DeviceArgs) -> Result<(AgentSpec, Option<Arc<Variant>>)> {
        let spec = match (&self.agent, &self.model) {
            (Some(s), _) => parse_agent("--agent", s, device)?,
            (None, Some(m)) => device.apply(AgentSpec::new(AgentKind::Az, Some(checkpoint::resolve(m)?), self.sims)),
            (None, None) => AgentSpec::new(AgentKind::Mcts, None, self.sims),
        };
        let variant = match &spec.model {
            Some(m) => {
                let path = checkpoint::resolve(m)?;
                let meta = checkpoint::read_meta(&path)?;
                let mv = model_variant(&meta, &path)?;
                if let Some(v) = variant {
                    let asked = Variant::from_spec(v)?;
                    meta.check_variant(&asked, &path)?;
                }
                Some(mv)
            }
            None => variant.map(Variant::from_spec).transpose()?,
        };
        Ok((spec, variant.map(Arc::new)))
    }
}
