//! Command-line interface: clap subcommands over the library layers. This is the only place
//! that uses `anyhow`, prints progress and chooses exit codes.

mod arena;
mod balance;
mod bench;
mod outside;
pub mod rules_cmds;
mod train;

use anyhow::Result;
use clap::{Parser, Subcommand};
pub use rules_cmds::PositionArgs;

/// `--device`, shared by every command that runs a network.
#[derive(clap::Args, Clone)]
pub struct DeviceArgs {
    /// Device for networks: auto (cuda if present), cpu, cuda or cuda:N. An agent spec's own
    /// `device=` wins over this.
    #[arg(long, default_value = "auto")]
    pub device: String,
}

/// The cores this process may use (the one place that asks).
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

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
use std::io::{BufWriter, Write};
use tafl_lab::rules::Side;

const LONG_VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (libtorch ",
    env!("TAFL_TORCH_VERSION"),
    ", tch 0.26)"
);

#[derive(Parser)]
#[command(
    name = "tafl-lab",
    version = LONG_VERSION,
    about = "Self-play training laboratory for the tafl board games",
    long_about = "tafl-lab simulates tafl variants exactly (rules are data: configs/variants/*.toml), \
                  and is growing into a self-play trainer, balance laboratory and engine.\n\n\
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
    Rules(rules_cmds::RulesCommand),
    /// Search a position with an agent and print the best move, its value, the top moves and
    /// the principal variation.
    Analyze {
        #[command(flatten)]
        pos: PositionArgs,
        /// Agent spec: mcts:sims=N, az:model=PATH,sims=N or gumbel:model=PATH,sims=N,k=16.
        #[arg(long, default_value = "mcts:sims=800")]
        agent: String,
        /// Print one JSON object (best_move, value, proof, pv, moves, ...).
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        device: DeviceArgs,
        /// How many root moves to list.
        #[arg(long, default_value_t = 10)]
        top: usize,
    },
    /// Play agent A against agent B, alternating sides, in parallel; print A's score and its
    /// win/draw/loss as each side.
    Match {
        #[arg(long, default_value = "brandubh")]
        variant: String,
        /// Agent A: random, mcts:sims=N, az:model=PATH,sims=N, gumbel:model=PATH,sims=N[,k=16].
        #[arg(long)]
        a: String,
        /// Agent B (same forms as --a).
        #[arg(long)]
        b: String,
        /// Number of games (A attacks in even-numbered games).
        #[arg(long, default_value_t = 20)]
        games: usize,
        /// Random seed: the same seed replays the same games.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Random opening plies shared by each pair of games (variety for deterministic agents).
        #[arg(long, default_value_t = 2)]
        opening_plies: u32,
        /// Print one JSON object (games, a_score, a_as_attackers, a_as_defenders, ...).
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        device: DeviceArgs,
        /// Stop early once a sequential probability ratio test decides between
        /// "A is ELO0 stronger" and "A is ELO1 stronger" (alpha = beta = 0.05), e.g. 0,30.
        #[arg(long)]
        sprt: Option<String>,
        /// Write every game's moves to this file (a comment line, then the moves).
        #[arg(long)]
        record: Option<std::path::PathBuf>,
        /// No progress bar.
        #[arg(long)]
        quiet: bool,
    },
    /// Train a network by self-play in generations (the main job). With no --config, the
    /// embedded default trains brandubh on a CPU within the budget it prints at start.
    Train {
        /// Run config (configs/runs/*.toml); default: the embedded brandubh config.
        #[arg(long)]
        config: Option<std::path::PathBuf>,
        /// Run directory (default: runs/<name>).
        #[arg(long)]
        run_dir: Option<std::path::PathBuf>,
        /// Continue the run in --run-dir (its saved config is used).
        #[arg(long)]
        resume: bool,
        /// Stop after this generation (overrides the config's budget).
        #[arg(long)]
        generations: Option<u64>,
        /// Stop before this many minutes of run time in total (overrides the config's budget).
        #[arg(long, allow_negative_numbers = true)]
        minutes: Option<f64>,
        /// No progress bars; one line per generation.
        #[arg(long)]
        quiet: bool,
    },
    /// A self-play worker: plays games with the newest model of a run and writes shards into
    /// its games/ directory (many may share one run directory).
    Selfplay {
        #[arg(long)]
        run_dir: std::path::PathBuf,
        /// Stop after this many games (0 = run until killed).
        #[arg(long, default_value_t = 0)]
        games: u64,
        /// Stop after this many minutes (0 = no limit).
        #[arg(long, allow_negative_numbers = true, default_value_t = 0.0)]
        minutes: f64,
        /// Worker name used in shard file names (the process id is added).
        #[arg(long, default_value = "worker")]
        name: String,
        #[arg(long)]
        quiet: bool,
    },
    /// Measure variant balance: an agent plays itself on each variant; attacker, defender
    /// and draw rates with 95% Wilson intervals, game lengths and end reasons, beside human
    /// figures where they exist. Writes report.md, balance.csv, balance.json and plots.
    Balance {
        /// Comma-separated variants (preset names, TOML paths or OpenTafl rules strings).
        #[arg(long, default_value = "brandubh", required_unless_present = "compare")]
        variants: String,
        /// The agent for both sides.
        #[arg(long, default_value = "mcts:sims=200")]
        agent: String,
        /// Games per variant and budget.
        #[arg(long, default_value_t = 200)]
        games: usize,
        /// Output directory.
        #[arg(long, default_value = "report", required_unless_present = "compare")]
        out: std::path::PathBuf,
        /// Random seed: the same seed repeats the run exactly.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Sweep the search budget, e.g. 16,64,256 (balance often shifts with strength).
        #[arg(long)]
        sims: Option<String>,
        /// Change a rule for this run, e.g. --set king_strength=strong (repeatable).
        #[arg(long = "set")]
        sets: Vec<String>,
        /// Random opening plies before the agent plays (variety for deterministic agents).
        #[arg(long, default_value_t = 0)]
        opening_plies: u32,
        #[command(flatten)]
        device: DeviceArgs,
        /// Compare two balance.json files instead: is the defenders' rate different?
        #[arg(long, num_args = 2, value_names = ["A", "B"])]
        compare: Option<Vec<std::path::PathBuf>>,
        /// With --compare: print JSON.
        #[arg(long)]
        json: bool,
        #[arg(long)]
        quiet: bool,
    },
    /// Learning curves of a run (Elo and baseline scores against generation and time,
    /// self-play per-side rates, losses) as Markdown and SVG/PNG plots.
    Report {
        #[arg(long)]
        run_dir: std::path::PathBuf,
        /// Output directory (default: RUN_DIR/report).
        #[arg(long)]
        out: Option<std::path::PathBuf>,
    },
    /// Export a model for other engines: model.pt (TorchScript), weights.safetensors,
    /// model.json (the I/O contract) and fixture inputs with their outputs.
    Export {
        /// Model file, `latest` pointer or run directory.
        #[arg(long)]
        model: std::path::PathBuf,
        /// Output directory.
        #[arg(long)]
        out: std::path::PathBuf,
    },
    /// Speak the OpenTafl Engine Protocol on stdin/stdout (without --model: random-rollout
    /// MCTS).
    Engine {
        #[arg(long, default_value = "opentafl")]
        protocol: String,
        /// Model file, `latest` pointer or run directory.
        #[arg(long)]
        model: Option<std::path::PathBuf>,
        /// Variant before the host sends `rules` (default: the model's, else brandubh).
        #[arg(long)]
        variant: Option<String>,
        /// Simulations per move (unless --movetime or the host's clock says otherwise).
        #[arg(long, default_value_t = 400)]
        sims: u32,
        /// Milliseconds per move.
        #[arg(long)]
        movetime: Option<u64>,
        #[command(flatten)]
        device: DeviceArgs,
    },
    /// Play a game against the AI in the terminal.
    Play {
        /// Variant (default: the model's, else brandubh).
        #[arg(long)]
        variant: Option<String>,
        /// Model file, `latest` pointer or run directory (without: random-rollout MCTS).
        #[arg(long)]
        model: Option<std::path::PathBuf>,
        /// Your side.
        #[arg(long, default_value = "defenders")]
        side: Side,
        /// The AI's simulations per move.
        #[arg(long, default_value_t = 400)]
        sims: u32,
        #[command(flatten)]
        device: DeviceArgs,
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
    /// Write a freshly initialised (untrained) network for a variant.
    NewModel {
        #[arg(long, default_value = "brandubh")]
        variant: String,
        /// Output file (.safetensors).
        #[arg(long)]
        out: std::path::PathBuf,
        /// Residual blocks (default: by board size, 4 on 7x7, 6 above).
        #[arg(long)]
        blocks: Option<usize>,
        /// Channels (default: by board size, 32 on 7x7, 48 on 9x9, 64 above).
        #[arg(long)]
        channels: Option<usize>,
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
    /// Measure throughput and print figures.
    Bench {
        #[command(subcommand)]
        what: bench::BenchWhat,
    },
    /// Print versions, the torch library in use and the devices it sees.
    Doctor,
}

pub fn run() -> Result<()> {
    let cli: Cli = rules_cmds::parse_args()?;
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    match cli.command {
        Command::Rules(cmd) => rules_cmds::run(cmd, &mut out)?,
        Command::Analyze { pos, agent, json, device, top } => arena::analyze(&pos, &agent, &device.device, json, top, &mut out)?,
        Command::Match { variant, a, b, games, seed, opening_plies, json, device, sprt, record, quiet } => {
            let m = arena::MatchArgs { variant, a, b, games, seed, opening_plies, device: device.device, record, sprt, json, quiet };
            arena::run_match(&m, &mut out)?
        }
        Command::Train { config, run_dir, resume, generations, minutes, quiet } => {
            train::train(config.as_deref(), run_dir, resume, tafl_lab::train::Overrides { generations, minutes }, quiet)?
        }
        Command::Selfplay { run_dir, games, minutes, name, quiet } => train::selfplay(&run_dir, games, minutes, &name, quiet)?,
        Command::Balance { variants, agent, games, out: dir, seed, sims, sets, opening_plies, device, compare, json, quiet } => {
            match compare {
                Some(files) => balance::compare(&files[0], &files[1], json, &mut out)?,
                None => {
                    let command = std::env::args().collect::<Vec<_>>().join(" ");
                    let args = balance::BalanceArgs { variants, agent, games, out: dir, seed, sims, sets, opening_plies, device: device.device, quiet };
                    balance::run(&args, &command, &mut out)?
                }
            }
        }
        Command::Report { run_dir, out: dir } => balance::run_report(&run_dir, dir, &mut out)?,
        Command::Export { model, out: dir } => outside::run_export(&model, &dir, &mut out)?,
        Command::Engine { protocol, model, variant, sims, movetime, device } => {
            out.flush()?;
            outside::run_engine(&protocol, model.as_deref(), variant.as_deref(), sims, movetime, &device.device)?
        }
        Command::Play { variant, model, side, sims, device, seed } => {
            let args = outside::PlayArgs { variant, model, side, sims, device: device.device, seed };
            let stdin = std::io::stdin();
            outside::run_play(&args, stdin.lock(), &mut out)?
        }
        Command::NewModel { variant, out: path, blocks, channels, seed } => {
            arena::new_model(&variant, &path, blocks, channels, seed, &mut out)?
        }
        Command::Bench { what } => bench::run(what, &mut out)?,
        Command::Doctor => doctor(&mut out)?,
    }
    out.flush()?;
    Ok(())
}

fn doctor(out: &mut impl Write) -> Result<()> {
    writeln!(out, "tafl-lab {}", env!("CARGO_PKG_VERSION"))?;
    writeln!(out, "libtorch {} (found at build time: {})", env!("TAFL_TORCH_VERSION"), env!("TAFL_TORCH_LIB"))?;
    let cuda = tch::Cuda::device_count();
    let mut devices = vec!["cpu".to_string()];
    devices.extend((0..cuda).map(|i| format!("cuda:{i}")));
    writeln!(out, "devices: {}", devices.join(", "))?;
    writeln!(out, "cudnn: {}", if tch::Cuda::cudnn_is_available() { "available" } else { "not available" })?;
    let t = tch::Tensor::from_slice(&[1.0f32, 2.0, 3.0]);
    let s: f64 = t.sum(tch::Kind::Float).double_value(&[]);
    writeln!(out, "torch self-check: sum([1,2,3]) = {s}")?;
    writeln!(out, "cpu threads: {}", cores())?;
    Ok(())
}
