//! Command-line interface: clap subcommands over the library layers. This is the only place
//! that uses `anyhow`, prints progress and chooses exit codes.

mod arena;
mod balance;
mod bench;
mod outside;
mod train;

use anyhow::{anyhow, bail, Context, Result};
use clap::{Args, Parser, Subcommand};
use rand::SeedableRng;
use std::io::{BufWriter, Read, Write};
use std::sync::Arc;
use tafl_lab::play;
use tafl_lab::rules::notation::{self, parse_move, split_moves};
use tafl_lab::rules::perft;
use tafl_lab::rules::{Position, Side, Variant};

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
    /// List the preset variants.
    Variants,
    /// Print a position as an ASCII board with coordinates, side to move and status.
    Show(PositionArgs),
    /// Print the legal moves of a position, sorted, one a line.
    Moves(PositionArgs),
    /// Count the leaves of the move tree (the last line is the leaf count).
    Perft {
        #[command(flatten)]
        pos: PositionArgs,
        /// Plies to search.
        #[arg(long)]
        depth: u32,
        /// Print the count below each first move.
        #[arg(long)]
        divide: bool,
        /// Also print how many leaf moves captured and how many ended the game.
        #[arg(long)]
        stats: bool,
    },
    /// Replay a move list (a file or - for stdin) and print one JSON object per ply.
    Replay {
        #[command(flatten)]
        pos: PositionArgs,
        /// File of whitespace-separated moves, or - for standard input.
        file: String,
    },
    /// Play and print one game between two random players (the main job until training exists).
    Demo {
        #[arg(long, default_value = "brandubh")]
        variant: String,
        /// Random seed (printed, so a game can be repeated).
        #[arg(long)]
        seed: Option<u64>,
    },
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
        /// Device for network agents: auto, cpu, cuda or cuda:N (a spec's device= wins).
        #[arg(long, default_value = "auto")]
        device: String,
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
        /// Device for network agents: auto, cpu, cuda or cuda:N (a spec's device= wins).
        #[arg(long, default_value = "auto")]
        device: String,
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
        /// Device for network agents.
        #[arg(long, default_value = "auto")]
        device: String,
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
        #[arg(long, default_value = "auto")]
        device: String,
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
        #[arg(long, default_value = "auto")]
        device: String,
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

/// Where a command starts: a variant, an optional position, optional moves.
#[derive(Args, Clone)]
struct PositionArgs {
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
    fn variant(&self) -> Result<Arc<Variant>> {
        Ok(Arc::new(Variant::from_spec(&self.variant)?))
    }

    fn position(&self) -> Result<Position> {
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

pub fn run() -> Result<()> {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => e.exit(), // --help, --version
        Err(e) if e.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => e.exit(),
        // One line, exit 1, like every other error: clap's first line (which names the
        // argument), without its "error: " prefix, which main adds.
        Err(e) => {
            let text = e.render().to_string();
            let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("bad arguments");
            bail!("{} (see --help)", first.trim_start_matches("error: ").trim())
        }
    };
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    match cli.command {
        Command::Variants => {
            for (name, _) in tafl_lab::rules::variant::PRESETS {
                let v = Variant::preset(name);
                let (a, d) = v.piece_counts();
                writeln!(
                    out,
                    "{:<18} {:>2}x{:<2} {:>2} attackers, {:>2} defenders + king  {}",
                    name,
                    v.geometry.size(),
                    v.geometry.size(),
                    a,
                    d,
                    v.description
                )?;
            }
        }
        Command::Show(args) => {
            let pos = args.position()?;
            writeln!(out, "{pos}")?;
            writeln!(out, "position: {}", notation::position_string(&pos))?;
        }
        Command::Moves(args) => {
            for mv in args.position()?.legal_moves() {
                writeln!(out, "{mv}")?;
            }
        }
        Command::Perft { pos, depth, divide, stats } => {
            if depth > perft::MAX_DEPTH {
                bail!("--depth {depth}: at most {} (deeper counts never finish)", perft::MAX_DEPTH);
            }
            let mut p = pos.position()?;
            let total = if divide {
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
            if stats {
                writeln!(out, "captures {} game_ends {}", total.captures, total.game_ends)?;
            }
            writeln!(out, "{}", total.leaves)?;
        }
        Command::Replay { pos, file } => replay(&pos, &file, &mut out)?,
        Command::Demo { variant, seed } => demo(&variant, seed, &mut out)?,
        Command::Analyze { pos, agent, json, device, top } => arena::analyze(&pos, &agent, &device, json, top, &mut out)?,
        Command::Match { variant, a, b, games, seed, opening_plies, json, device, sprt, record, quiet } => {
            let m = arena::MatchArgs { variant, a, b, games, seed, opening_plies, device, record, sprt, json, quiet };
            arena::run_match(&m, &mut out)?
        }
        Command::Train { config, run_dir, resume, generations, minutes, quiet } => {
            train::train(config.as_deref(), run_dir, resume, tafl_lab::train::Overrides { generations, minutes }, quiet)?
        }
        Command::Selfplay { run_dir, games, minutes, name, quiet } => {
            if !(minutes.is_finite() && minutes >= 0.0) {
                bail!("--minutes {minutes}: expected a number of minutes, 0 or more (0 = no limit)");
            }
            train::selfplay(&run_dir, games, minutes, &name, quiet)?
        }
        Command::Balance { variants, agent, games, out: dir, seed, sims, sets, opening_plies, device, compare, json, quiet } => {
            match compare {
                Some(files) => balance::compare(&files[0], &files[1], json, &mut out)?,
                None => {
                    let command = std::env::args().collect::<Vec<_>>().join(" ");
                    let args = balance::BalanceArgs { variants, agent, games, out: dir, seed, sims, sets, opening_plies, device, quiet };
                    balance::run(&args, &command, &mut out)?
                }
            }
        }
        Command::Report { run_dir, out: dir } => balance::run_report(&run_dir, dir, &mut out)?,
        Command::Export { model, out: dir } => outside::run_export(&model, &dir, &mut out)?,
        Command::Engine { protocol, model, variant, sims, movetime, device } => {
            out.flush()?;
            outside::run_engine(&protocol, model.as_deref(), variant.as_deref(), sims, movetime, &device)?
        }
        Command::Play { variant, model, side, sims, device, seed } => {
            let args = outside::PlayArgs { variant, model, side, sims, device, seed };
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

fn replay(args: &PositionArgs, file: &str, out: &mut impl Write) -> Result<()> {
    let text = if file == "-" {
        let mut s = String::new();
        std::io::stdin().read_to_string(&mut s).context("reading standard input")?;
        s
    } else {
        std::fs::read_to_string(file).with_context(|| format!("cannot read {file}"))?
    };
    let mut pos = args.position()?;
    let start_ply = pos.ply();
    for (i, tok) in split_moves(&text).into_iter().enumerate() {
        let ply = start_ply as usize + i + 1;
        let rec = parse_move(tok, pos.geometry()).map_err(|e| anyhow!("ply {ply}: {e}"))?;
        let side = pos.to_move();
        let captures = pos.play(rec.mv).map_err(|e| anyhow!("ply {ply}: {e}"))?;
        if let Some(claimed) = &rec.captures {
            if *claimed != captures {
                let e = tafl_lab::rules::MoveError::CaptureMismatch { mv: rec.mv, claimed: claimed.clone(), actual: captures };
                bail!("ply {ply}: {e}");
            }
        }
        let (status, reason) = match pos.outcome() {
            None => ("ongoing", serde_json::Value::Null),
            Some(o) => (o.status_name(), serde_json::Value::from(o.reason.name())),
        };
        let line = serde_json::json!({
            "ply": ply,
            "move": rec.mv.to_string(),
            "side": side.name(),
            "captures": captures.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
            "status": status,
            "reason": reason,
        });
        writeln!(out, "{line}")?;
    }
    Ok(())
}

fn demo(variant: &str, seed: Option<u64>, out: &mut impl Write) -> Result<()> {
    let variant = Arc::new(Variant::from_spec(variant)?);
    let seed = seed.unwrap_or_else(|| {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
    });
    let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
    writeln!(out, "{}: random player vs random player (seed {seed})", variant.name)?;
    writeln!(out, "{}", Position::start(variant.clone()))?;
    let game = play::random_game(variant, &mut rng);
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
    writeln!(out, "cpu threads: {}", std::thread::available_parallelism().map_or(1, |n| n.get()))?;
    Ok(())
}
