//! The training loop: generations of self-play, training on a replay window, a checkpoint,
//! and an evaluation, all in one run directory that any process can resume.
//!
//! Run directory (see `architecture.md`):
//! - `config.toml`: the resolved config, written at start; `--resume` uses it.
//! - `run.json`: seed, tafl-lab and libtorch versions, start time.
//! - `state.json`: the last completed generation and the wall time spent (written last in a
//!   generation, so a kill repeats at most the unfinished generation's training).
//! - `models/NNNNNN.safetensors` (+ `.optim.safetensors`, the momentum buffers) and `latest`.
//! - `games/gNNNNNN-WRITER-SEQ.shard`: self-play games played by model NNNNNN, written every
//!   few games, so a kill loses at most the games in flight.
//! - `metrics.jsonl`: one JSON line per generation.
//!
//! Every file is written atomically (temporary name, fsync, rename).

pub mod config;
pub mod optim;
pub mod replay;

use crate::arena::{self, AgentSpec, MatchConfig, MatchSummary, Wdl};
use crate::fsio::atomic_write;
use crate::nn::checkpoint::{self, ModelMeta};
use crate::nn::{parse_device, NetEvaluator, NnError, TaflNet};
use crate::rules::{Side, Variant};
use crate::selfplay::shard::{self, Shard, StoredGame};
use crate::selfplay::{self, FinishedGame};
use crate::stats::elo_from_score;
pub use config::{RunConfig, DEFAULT_CONFIG};
use rand::rngs::SmallRng;
use rand::SeedableRng;
use replay::ReplayWindow;
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};
use tch::Device;

/// Errors of a run, one line each.
#[derive(Debug, thiserror::Error)]
pub enum TrainError {
    #[error("{0}")]
    Run(String),
    #[error(transparent)]
    Config(#[from] config::ConfigError),
    #[error(transparent)]
    Model(#[from] NnError),
    #[error(transparent)]
    Shard(#[from] shard::ShardError),
}

fn io_err(path: &Path, e: impl std::fmt::Display) -> TrainError {
    TrainError::Run(format!("{}: {e}", path.display()))
}

/// Where progress goes: bars and lines on a terminal, plain lines in logs.
pub trait Reporter: Sync {
    /// A phase with `total` steps begins.
    fn start(&self, phase: &str, total: u64);
    fn advance(&self, n: u64, message: &str);
    fn finish(&self);
    /// A line of text (summaries, warnings).
    fn line(&self, text: &str);
}

/// The files of a run directory.
#[derive(Clone, Debug)]
pub struct RunDir {
    pub root: PathBuf,
}

impl RunDir {
    pub fn new(root: &Path) -> RunDir {
        RunDir { root: root.to_path_buf() }
    }
    pub fn config(&self) -> PathBuf {
        self.root.join("config.toml")
    }
    pub fn state(&self) -> PathBuf {
        self.root.join("state.json")
    }
    pub fn metrics(&self) -> PathBuf {
        self.root.join("metrics.jsonl")
    }
    pub fn models(&self) -> PathBuf {
        self.root.join("models")
    }
    pub fn games(&self) -> PathBuf {
        self.root.join("games")
    }
    pub fn model(&self, generation: u64) -> PathBuf {
        self.models().join(format!("{generation:06}.safetensors"))
    }
    pub fn optimizer(&self, generation: u64) -> PathBuf {
        self.models().join(format!("{generation:06}.optim.safetensors"))
    }
    pub fn latest(&self) -> PathBuf {
        self.models().join("latest")
    }

    /// The saved config.
    pub fn load_config(&self) -> Result<RunConfig, TrainError> {
        let p = self.config();
        let text = std::fs::read_to_string(&p).map_err(|e| io_err(&p, e))?;
        Ok(RunConfig::from_toml(&text, &p.display().to_string())?)
    }

    pub fn load_state(&self) -> Result<Option<RunState>, TrainError> {
        let p = self.state();
        match std::fs::read_to_string(&p) {
            Ok(text) => serde_json::from_str(&text).map(Some).map_err(|e| io_err(&p, format!("bad state file: {e}"))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(io_err(&p, e)),
        }
    }

    /// The generation `models/latest` points at.
    pub fn latest_generation(&self) -> Result<u64, TrainError> {
        let p = self.latest();
        let text = std::fs::read_to_string(&p).map_err(|e| io_err(&p, e))?;
        text.trim().split('.').next().and_then(|g| g.parse().ok()).ok_or_else(|| io_err(&p, "malformed pointer"))
    }

    /// Shard files, sorted by name (so by generation, then writer).
    pub fn shards(&self) -> Result<Vec<PathBuf>, TrainError> {
        let dir = self.games();
        let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
            .map_err(|e| io_err(&dir, e))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "shard"))
            .collect();
        v.sort();
        Ok(v)
    }
}

/// Progress that survives restarts.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunState {
    pub generation: u64,
    pub wall_seconds: f64,
    pub selfplay_games: u64,
}

/// Command-line overrides of the budget.
#[derive(Clone, Debug, Default)]
pub struct Overrides {
    pub generations: Option<u64>,
    pub minutes: Option<f64>,
}

impl Overrides {
    /// Refuses a budget that means nothing: minutes that are not a positive finite number,
    /// or generation 0 (a run is past it before it starts).
    pub fn validate(&self) -> Result<(), TrainError> {
        if let Some(m) = self.minutes {
            if !(m.is_finite() && m > 0.0) {
                return Err(TrainError::Run(format!("--minutes {m}: expected a positive number of minutes (fractions such as 0.5 are fine)")));
            }
        }
        if self.generations == Some(0) {
            return Err(TrainError::Run("--generations 0: expected the generation to stop after, at least 1".into()));
        }
        Ok(())
    }
}

/// The config a run in `dir` trains with: the saved one when resuming (the command line's
/// `cfg` is then ignored), else `cfg`. Errors when `dir` already holds a run and `resume` is
/// false, or holds none and it is true. Everything sized from the config (torch threads)
/// must use this one.
pub fn effective_config(cfg: Option<RunConfig>, dir: &Path, resume: bool) -> Result<RunConfig, TrainError> {
    let rd = RunDir::new(dir);
    match (rd.load_state()?, resume) {
        (Some(s), false) => Err(TrainError::Run(format!(
            "{} already holds a run (generation {}); add --resume to continue it, or choose another --run-dir",
            dir.display(),
            s.generation
        ))),
        (None, true) => Err(TrainError::Run(format!("{}: nothing to resume (no state.json)", dir.display()))),
        (Some(_), true) => rd.load_config(),
        (None, false) => cfg.ok_or_else(|| TrainError::Run("no config".into())),
    }
}

/// Torch's intra-op threads for a run on `cores` cores: one share per self-play thread.
pub fn torch_threads(cfg: &RunConfig, cores: usize) -> usize {
    (cores / cfg.selfplay.threads.max(1)).max(1)
}

fn write_json(path: &Path, v: &impl Serialize) -> Result<(), TrainError> {
    let text = serde_json::to_string_pretty(v).expect("serializes") + "\n";
    atomic_write(path, text.as_bytes()).map_err(|e| io_err(path, e))
}

fn generation_of_shard(p: &Path) -> Option<u64> {
    p.file_name()?.to_str()?.strip_prefix('g')?.split('-').next()?.parse().ok()
}

fn side_rates(games: &[FinishedGame]) -> (f64, f64, f64, f64) {
    let n = games.len().max(1) as f64;
    let count = |w: Option<Side>| games.iter().filter(|g| g.outcome.winner == w).count() as f64 / n;
    let plies = games.iter().map(|g| g.plies.len() as f64).sum::<f64>() / n;
    (count(Some(Side::Attackers)), count(Some(Side::Defenders)), count(None), plies)
}

/// Starts a new run in `dir` or resumes the one there, and trains until the budget is spent.
pub fn train(cfg: Option<RunConfig>, dir: &Path, resume: bool, overrides: &Overrides, reporter: &dyn Reporter) -> Result<(), TrainError> {
    overrides.validate()?;
    let rd = RunDir::new(dir);
    let mut cfg = effective_config(cfg, dir, resume)?;
    let existing = rd.load_state()?;
    if let Some(g) = overrides.generations {
        cfg.budget.generations = g;
    }
    if let Some(m) = overrides.minutes {
        cfg.budget.minutes = m;
    }
    let variant = Arc::new(Variant::from_spec(&cfg.variant).map_err(|e| TrainError::Run(format!("variant: {e}")))?);
    let device = parse_device(&cfg.device)?;
    let mut state = match existing {
        Some(s) => s,
        None => create_run(&rd, &cfg, &variant)?,
    };
    let (net, _) = checkpoint::load(&rd.model(state.generation), Some(&variant), device)?;
    let mut sgd = optim::Sgd::new(&net, cfg.train.momentum, cfg.train.weight_decay);
    let optim_path = rd.optimizer(state.generation);
    if optim_path.exists() {
        sgd.load(&optim_path)?;
    }
    let mut window = ReplayWindow::new(variant.clone(), cfg.train.window_positions, cfg.train.value_discount);
    let mut gate = ShardGate::new(&variant);
    // Games of a model saved just before a kill (its state.json not yet written) are no
    // younger than the run.
    let newest = state.generation.max(rd.latest_generation().unwrap_or(0));
    fill_window(&rd, &mut window, &mut gate, newest, reporter)?;
    reporter.line(&format!(
        "{}: {} on {}, {} network, {:?} ({} torch threads); generation {}, {} positions in the window; budget: {}",
        dir.display(),
        cfg.name,
        variant.name,
        cfg.net,
        device,
        tch::get_num_threads(),
        state.generation,
        window.len(),
        budget_text(&cfg)
    ));
    let started = Instant::now();
    let base_wall = state.wall_seconds;
    let mut last_generation_secs = 0.0;
    loop {
        let elapsed = base_wall + started.elapsed().as_secs_f64();
        if cfg.budget.generations > 0 && state.generation >= cfg.budget.generations {
            reporter.line(&format!("stopping: generation {} reached", state.generation));
            break;
        }
        if cfg.budget.minutes > 0.0 && elapsed + last_generation_secs > cfg.budget.minutes * 60.0 {
            reporter.line(&format!("stopping: the {} minute budget would be exceeded", cfg.budget.minutes));
            break;
        }
        let t = Instant::now();
        let generation = state.generation + 1;
        let clock = || base_wall + started.elapsed().as_secs_f64();
        let deadline = (cfg.budget.minutes > 0.0).then_some(cfg.budget.minutes * 60.0);
        let Some(line) = run_generation(&rd, &cfg, &variant, device, &net, &mut sgd, &mut window, &mut state, &mut gate, deadline, &clock, reporter)? else {
            // The budget ran out while waiting for workers: nothing of the generation is
            // kept but its shards; the time spent counts.
            state.wall_seconds = clock();
            write_json(&rd.state(), &state)?;
            break;
        };
        state.generation = generation;
        state.wall_seconds = clock();
        write_json(&rd.state(), &state)?;
        reporter.line(&line);
        last_generation_secs = t.elapsed().as_secs_f64();
    }
    Ok(())
}

fn budget_text(cfg: &RunConfig) -> String {
    let plural = |n: f64, unit: &str| format!("{n} {unit}{}", if n == 1.0 { "" } else { "s" });
    match (cfg.budget.generations, cfg.budget.minutes) {
        (0, m) if m <= 0.0 => "none (stop with Ctrl-C; --resume continues)".into(),
        (0, m) => plural(m, "minute"),
        (g, m) if m <= 0.0 => plural(g as f64, "generation"),
        (g, m) => format!("{} or {}, whichever comes first", plural(g as f64, "generation"), plural(m, "minute")),
    }
}

fn create_run(rd: &RunDir, cfg: &RunConfig, variant: &Variant) -> Result<RunState, TrainError> {
    for d in [rd.root.clone(), rd.models(), rd.games()] {
        std::fs::create_dir_all(&d).map_err(|e| io_err(&d, e))?;
    }
    let text = toml::to_string(cfg).map_err(|e| TrainError::Run(format!("config: {e}")))?;
    atomic_write(&rd.config(), text.as_bytes()).map_err(|e| io_err(&rd.config(), e))?;
    let since_epoch = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    write_json(
        &rd.root.join("run.json"),
        &json!({
            "seed": cfg.seed,
            "tafl_lab": env!("CARGO_PKG_VERSION"),
            "variant": variant.name,
            "rules_fingerprint": format!("{:016x}", variant.rules_fingerprint()),
            "started_unix": since_epoch,
        }),
    )?;
    tch::manual_seed(cfg.seed as i64);
    let net = TaflNet::new(variant.geometry.size(), cfg.net, Device::Cpu);
    save_generation(rd, &net, &optim::Sgd::new(&net, cfg.train.momentum, cfg.train.weight_decay), variant, cfg, 0)?;
    let state = RunState::default();
    write_json(&rd.state(), &state)?;
    Ok(state)
}

fn save_generation(rd: &RunDir, net: &TaflNet, sgd: &optim::Sgd, variant: &Variant, cfg: &RunConfig, generation: u64) -> Result<(), TrainError> {
    checkpoint::save(net, &ModelMeta::new(variant, cfg.net, generation), &rd.model(generation))?;
    sgd.save(&rd.optimizer(generation))?;
    let name = format!("{generation:06}.safetensors\n");
    atomic_write(&rd.latest(), name.as_bytes()).map_err(|e| io_err(&rd.latest(), e))
}

/// The trainer's only way to read shards: each is checked for integrity and against the run
/// ([`shard::read_checked`]); a bad one is skipped with one warning line naming the file and
/// the reason, and counted once (`skipped_shards`).
struct ShardGate {
    variant: Arc<Variant>,
    rejected: std::collections::HashSet<PathBuf>,
}

impl ShardGate {
    fn new(variant: &Arc<Variant>) -> ShardGate {
        ShardGate { variant: variant.clone(), rejected: Default::default() }
    }

    /// The shard at `path` if it is sound and played by a model no newer than `max_generation`.
    fn read(&mut self, path: &Path, max_generation: u64, reporter: &dyn Reporter) -> Option<Shard> {
        if self.rejected.contains(path) {
            return None;
        }
        match shard::read_checked(path, &self.variant, max_generation) {
            Ok(s) => Some(s),
            Err(e) => {
                self.rejected.insert(path.to_path_buf());
                reporter.line(&format!("warning: skipping {e}"));
                None
            }
        }
    }

    /// Shards skipped so far.
    fn skipped(&self) -> usize {
        self.rejected.len()
    }
}

/// Loads the newest shards (of models up to `newest`) into the window.
fn fill_window(rd: &RunDir, window: &mut ReplayWindow, gate: &mut ShardGate, newest: u64, reporter: &dyn Reporter) -> Result<(), TrainError> {
    let mut games: Vec<StoredGame> = Vec::new();
    let mut positions = 0;
    for path in rd.shards()?.into_iter().rev() {
        if positions >= window.capacity() {
            break;
        }
        if let Some(s) = gate.read(&path, newest, reporter) {
            for g in s.games.into_iter().rev() {
                positions += g.plies.len();
                games.push(g);
            }
        }
    }
    for g in games.iter().rev() {
        window.add_game(&g.to_finished());
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn run_generation(
    rd: &RunDir,
    cfg: &RunConfig,
    variant: &Arc<Variant>,
    device: Device,
    net: &TaflNet,
    sgd: &mut optim::Sgd,
    window: &mut ReplayWindow,
    state: &mut RunState,
    gate: &mut ShardGate,
    deadline: Option<f64>,
    clock: &dyn Fn() -> f64,
    reporter: &dyn Reporter,
) -> Result<Option<String>, TrainError> {
    let prev = state.generation;
    let generation = prev + 1;
    // 1. Self-play with the current model.
    let t = Instant::now();
    let (games, evals) = if cfg.selfplay.in_process {
        self_play_in_process(rd, cfg, variant, device, prev, window, gate, reporter)?
    } else {
        match collect_worker_games(rd, cfg, prev, window, gate, deadline, clock, reporter)? {
            Some(x) => x,
            None => return Ok(None),
        }
    };
    let sp_secs = t.elapsed().as_secs_f64().max(1e-9);
    state.selfplay_games += games.len() as u64;
    let (att, def, draw, plies) = side_rates(&games);
    // 2. Train.
    let t = Instant::now();
    let lr = cfg.learning_rate(generation);
    let mut rng = SmallRng::seed_from_u64(cfg.seed ^ generation.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let (mut lt, mut lp, mut lv, mut steps) = (0.0, 0.0, 0.0, 0usize);
    if window.len() >= cfg.train.min_positions.max(1) {
        reporter.start(&format!("gen {generation} training"), cfg.train.steps_per_generation as u64);
        for _ in 0..cfg.train.steps_per_generation {
            let batch = window.batch(cfg.train.batch_size, &mut rng, device);
            let (total, p, v) = replay::losses(net, &batch, cfg.train.value_weight);
            sgd.zero_grad();
            total.backward();
            sgd.step(lr);
            lt += total.double_value(&[]);
            lp += p.double_value(&[]);
            lv += v.double_value(&[]);
            steps += 1;
            reporter.advance(1, &format!("loss {:.3}", lt / steps as f64));
        }
        reporter.finish();
    }
    let n = steps.max(1) as f64;
    let train_secs = t.elapsed().as_secs_f64();
    save_generation(rd, net, sgd, variant, cfg, generation)?;
    // 3. Evaluate.
    let mut eval = Vec::new();
    let mut summary = Vec::new();
    if cfg.eval.every > 0 && generation % cfg.eval.every == 0 && cfg.eval.games > 0 {
        let me = cfg.eval_spec(&rd.model(generation));
        let mut opponents: Vec<(String, AgentSpec)> = Vec::new();
        if cfg.eval.previous {
            opponents.push(("previous".into(), cfg.eval_spec(&rd.model(prev))));
        }
        for b in &cfg.eval.baselines {
            opponents.push((b.clone(), b.parse().map_err(|e| TrainError::Run(format!("eval.baselines: {e}")))?));
        }
        for (name, spec) in opponents {
            let s = evaluate(variant, &me, &spec, cfg.eval.games, cfg.seed ^ generation, &format!("gen {generation} vs {name}"), reporter)?;
            let elo = elo_from_score(s.a_score, s.games);
            summary.push(format!("vs {name} {:.0}%", 100.0 * s.a_score));
            eval.push(json!({
                "opponent": name,
                "games": s.games,
                "score": s.a_score,
                "elo": elo,
                "as_attackers": s.a_as_attackers,
                "as_defenders": s.a_as_defenders,
                "attackers_win": side_share(&s, Side::Attackers),
                "defenders_win": side_share(&s, Side::Defenders),
                "draws": (s.a_total().draw) as f64 / s.games.max(1) as f64,
            }));
        }
    }
    let line = json!({
        "generation": generation,
        "wall_seconds": clock(),
        "lr": lr,
        "train_steps": steps,
        "train_seconds": train_secs,
        "loss": {"total": lt / n, "policy": lp / n, "value": lv / n},
        "window_positions": window.len(),
        "skipped_shards": gate.skipped(),
        "selfplay": {
            "games": games.len(),
            "seconds": sp_secs,
            "games_per_s": games.len() as f64 / sp_secs,
            "evals_per_s": evals as f64 / sp_secs,
            "attackers_win": att,
            "defenders_win": def,
            "draws": draw,
            "mean_plies": plies,
        },
        "eval": eval,
    });
    append_metrics(rd, &line)?;
    Ok(Some(format!(
        "gen {generation:>3} | loss {:.3} (policy {:.3}, value {:.3}) | self-play {} games, {:.1}/s, att {:.0}% def {:.0}% draw {:.0}%, {:.0} plies | {}",
        lt / n,
        lp / n,
        lv / n,
        games.len(),
        games.len() as f64 / sp_secs,
        100.0 * att,
        100.0 * def,
        100.0 * draw,
        plies,
        if summary.is_empty() { "no evaluation".to_string() } else { summary.join(", ") }
    )))
}

/// Share of a match's games won by `side` (whoever played it).
fn side_share(s: &MatchSummary, side: Side) -> f64 {
    let (a, d): (Wdl, Wdl) = (s.a_as_attackers, s.a_as_defenders);
    let wins = match side {
        Side::Attackers => a.win + d.loss,
        Side::Defenders => d.win + a.loss,
    };
    wins as f64 / s.games.max(1) as f64
}

/// The metrics file is rewritten whole (atomically) so that a kill never leaves half a line.
fn append_metrics(rd: &RunDir, line: &serde_json::Value) -> Result<(), TrainError> {
    let path = rd.metrics();
    let mut text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(io_err(&path, e)),
    };
    // Drop lines of generations this line replaces (a generation redone after a kill).
    let g = line["generation"].as_u64().unwrap_or(0);
    text = text
        .lines()
        .filter(|l| serde_json::from_str::<serde_json::Value>(l).ok().and_then(|v| v["generation"].as_u64()).is_some_and(|x| x < g))
        .map(|l| format!("{l}\n"))
        .collect();
    text.push_str(&line.to_string());
    text.push('\n');
    atomic_write(&path, text.as_bytes()).map_err(|e| io_err(&path, e))
}

fn evaluate(variant: &Arc<Variant>, a: &AgentSpec, b: &AgentSpec, games: usize, seed: u64, label: &str, reporter: &dyn Reporter) -> Result<MatchSummary, TrainError> {
    reporter.start(label, games as u64);
    let cfg = MatchConfig { games, seed, opening_plies: 2 };
    let results = arena::play_match(variant, a, b, &cfg, &|_| reporter.advance(1, "")).map_err(|e| TrainError::Run(e.to_string()))?;
    reporter.finish();
    Ok(MatchSummary::from_games(&results))
}

/// Plays the generation's self-play games in this process, writing shards as they fill.
///
/// Game `k` of generation `g` (its slot) is seeded `selfplay::game_seed(seed, g, k)`. Games
/// already written for this generation by an earlier, killed process count, and only the
/// missing slots are played, so no game of the generation repeats another.
#[allow(clippy::too_many_arguments)]
fn self_play_in_process(
    rd: &RunDir,
    cfg: &RunConfig,
    variant: &Arc<Variant>,
    device: Device,
    model_generation: u64,
    window: &mut ReplayWindow,
    gate: &mut ShardGate,
    reporter: &dyn Reporter,
) -> Result<(Vec<FinishedGame>, u64), TrainError> {
    let generation = model_generation + 1;
    let mut games: Vec<FinishedGame> = Vec::new();
    let mut done = std::collections::HashSet::new();
    let mut seq = 0;
    for p in rd.shards()? {
        if generation_of_shard(&p) == Some(model_generation) {
            seq += 1;
            if let Some(s) = gate.read(&p, model_generation, reporter) {
                for g in &s.games {
                    done.extend(g.slot);
                    games.push(g.to_finished());
                }
            }
        }
    }
    let wanted = cfg.selfplay.games_per_generation.saturating_sub(games.len());
    if wanted == 0 {
        return Ok((games, 0));
    }
    let slots: Vec<u64> = (0..).filter(|k| !done.contains(k)).take(wanted).collect();
    reporter.start(&format!("gen {generation} self-play"), wanted as u64);
    let next = AtomicUsize::new(0);
    let evaluations = AtomicUsize::new(0);
    let (tx, rx) = mpsc::channel::<(u64, FinishedGame)>();
    let model_path = rd.model(model_generation);
    let sp = cfg.selfplay_config();
    let result: Result<(), TrainError> = std::thread::scope(|scope| {
        let mut handles = Vec::new();
        for _ in 0..cfg.selfplay.threads {
            let tx = tx.clone();
            let (next, slots, evaluations, model_path, sp) = (&next, &slots, &evaluations, &model_path, &sp);
            handles.push(scope.spawn(move || -> Result<(), TrainError> {
                let (net, _) = checkpoint::load(model_path, Some(variant), device)?;
                let mut ev = NetEvaluator::new(net, variant);
                let mut next_game = |_: &selfplay::Progress| {
                    let k = *slots.get(next.fetch_add(1, Ordering::SeqCst))?;
                    Some((k, selfplay::game_seed(cfg.seed, generation, k)))
                };
                let p = selfplay::play_games(variant, sp, &mut ev, &mut next_game, &mut |k, g| {
                    let _ = tx.send((k, g));
                }, &mut |_| true);
                evaluations.fetch_add(p.evaluations as usize, Ordering::SeqCst);
                Ok(())
            }));
        }
        drop(tx);
        let mut pending: Vec<StoredGame> = Vec::new();
        let mut write_err = None;
        for (k, g) in rx {
            pending.push(StoredGame::new(&g, Some(k)));
            window.add_game(&g);
            reporter.advance(1, &format!("{} plies", g.plies.len()));
            games.push(g);
            if pending.len() >= cfg.selfplay.games_per_shard {
                if let Err(e) = flush_shard(rd, variant, model_generation, "trainer", &mut seq, &mut pending) {
                    write_err.get_or_insert(e);
                }
            }
        }
        if let Err(e) = flush_shard(rd, variant, model_generation, "trainer", &mut seq, &mut pending) {
            write_err.get_or_insert(e);
        }
        for h in handles {
            h.join().map_err(|_| TrainError::Run("a self-play thread panicked".into()))??;
        }
        write_err.map_or(Ok(()), Err)
    });
    result?;
    reporter.finish();
    Ok((games, evaluations.load(Ordering::SeqCst) as u64))
}

/// Writes the pending games as the writer's next shard.
fn flush_shard(rd: &RunDir, variant: &Variant, model_generation: u64, writer: &str, seq: &mut usize, pending: &mut Vec<StoredGame>) -> Result<(), TrainError> {
    if pending.is_empty() {
        return Ok(());
    }
    let path = loop {
        let p = rd.games().join(shard::file_name(model_generation, writer, *seq));
        *seq += 1;
        if !p.exists() {
            break p;
        }
    };
    let s = Shard { rules_fingerprint: variant.rules_fingerprint(), model_generation, writer: writer.to_string(), games: std::mem::take(pending) };
    shard::write(&path, &s)?;
    Ok(())
}

/// How often a trainer waiting for workers repeats what it waits for.
const WAIT_NOTE_EVERY: Duration = Duration::from_secs(60);

/// Waits for workers' shards of the current model and adds them to the window. Says what it
/// waits for (once, then every [`WAIT_NOTE_EVERY`]); returns `None` when `clock` passes
/// `deadline` first.
#[allow(clippy::too_many_arguments)]
fn collect_worker_games(
    rd: &RunDir,
    cfg: &RunConfig,
    model_generation: u64,
    window: &mut ReplayWindow,
    gate: &mut ShardGate,
    deadline: Option<f64>,
    clock: &dyn Fn() -> f64,
    reporter: &dyn Reporter,
) -> Result<Option<(Vec<FinishedGame>, u64)>, TrainError> {
    let wanted = cfg.selfplay.games_per_generation;
    let generation = model_generation + 1;
    reporter.start(&format!("gen {generation} waiting for workers' games"), wanted as u64);
    let mut seen = std::collections::HashSet::new();
    let mut games = Vec::new();
    let mut noted: Option<Instant> = None;
    loop {
        for p in rd.shards()? {
            if generation_of_shard(&p) != Some(model_generation) || seen.contains(&p) {
                continue;
            }
            seen.insert(p.clone());
            if let Some(s) = gate.read(&p, model_generation, reporter) {
                for g in s.games.iter().map(StoredGame::to_finished) {
                    window.add_game(&g);
                    reporter.advance(1, "");
                    games.push(g);
                }
            }
        }
        if games.len() >= wanted {
            break;
        }
        let now = clock();
        if let Some(d) = deadline.filter(|&d| now >= d) {
            reporter.finish();
            reporter.line(&format!(
                "stopping: the {} minute budget ran out after {:.0} s while waiting for self-play workers ({}/{wanted} games of generation {generation}); --resume continues",
                cfg.budget.minutes,
                d,
                games.len()
            ));
            return Ok(None);
        }
        if noted.map_or(true, |t| t.elapsed() >= WAIT_NOTE_EVERY) {
            reporter.line(&format!(
                "waiting for self-play workers: {}/{wanted} games of generation {generation} (model {model_generation}) in {}; start workers with `tafl-lab selfplay --run-dir {}`",
                games.len(),
                rd.games().display(),
                rd.root.display()
            ));
            noted = Some(Instant::now());
        }
        let nap = deadline.map_or(0.5, |d| (d - now).clamp(0.01, 0.5));
        std::thread::sleep(Duration::from_secs_f64(nap));
    }
    reporter.finish();
    Ok(Some((games, 0)))
}

/// A self-play worker: plays games with the newest model of the run in `dir` and writes
/// shards, reloading the model when a newer one appears, until `max_games` (0 = forever) or
/// `minutes` (0 = no limit). Its `k`-th game with model `g` is seeded from the run seed, the
/// writer name (which holds the process id), `g` and `k`.
pub fn worker(dir: &Path, name: &str, max_games: u64, minutes: f64, reporter: &dyn Reporter) -> Result<u64, TrainError> {
    if !(minutes.is_finite() && minutes >= 0.0) {
        return Err(TrainError::Run(format!("--minutes {minutes}: expected a number of minutes, 0 or more (0 = no limit)")));
    }
    let writer = format!("{name}-{}", std::process::id());
    shard::check_writer(&writer).map_err(|e| TrainError::Run(format!("--name {name:?}: {e}")))?;
    let rd = RunDir::new(dir);
    let cfg = rd.load_config()?;
    let variant = Arc::new(Variant::from_spec(&cfg.variant).map_err(|e| TrainError::Run(format!("variant: {e}")))?);
    let device = parse_device(&cfg.device)?;
    let sp = cfg.selfplay_config();
    let started = Instant::now();
    let mut played = 0u64;
    let mut seq = 0usize;
    let writer_seed = cfg.seed ^ crate::rules::ruleset::fnv1a(writer.as_bytes());
    let mut slot = 0u64;
    let mut slot_generation = None;
    reporter.line(&format!("worker {writer}: self-play for {} in {}", variant.name, dir.display()));
    while (max_games == 0 || played < max_games) && (minutes <= 0.0 || started.elapsed().as_secs_f64() < minutes * 60.0) {
        let generation = rd.latest_generation()?;
        if slot_generation != Some(generation) {
            (slot, slot_generation) = (0, Some(generation));
        }
        let (net, _) = checkpoint::load(&rd.model(generation), Some(&variant), device)?;
        let mut ev = NetEvaluator::new(net, &variant);
        let n = cfg.selfplay.games_per_shard.min(if max_games == 0 { usize::MAX } else { (max_games - played) as usize });
        let mut left = n;
        let mut pending = Vec::new();
        reporter.start(&format!("worker model {generation}"), n as u64);
        selfplay::play_games(&variant, &sp, &mut ev, &mut |_| {
            (left > 0).then(|| {
                left -= 1;
                slot += 1;
                (slot - 1, selfplay::game_seed(writer_seed, generation, slot - 1))
            })
        }, &mut |k, g| {
            reporter.advance(1, "");
            pending.push(StoredGame::new(&g, Some(k)));
        }, &mut |_| true);
        reporter.finish();
        played += pending.len() as u64;
        flush_shard(&rd, &variant, generation, &writer, &mut seq, &mut pending)?;
    }
    Ok(played)
}
