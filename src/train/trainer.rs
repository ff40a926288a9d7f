//! The generation loop. A [`Trainer`] owns what lives across generations in one process (the
//! model, its optimizer, the replay window, the shard gate, the config and the run's state);
//! [`train`] opens one on a run directory and runs generations until the budget is spent.
//!
//! A generation: self-play with the current model (see `workers`), SGD steps on the window,
//! a checkpoint, an evaluation against the previous model and the baselines, a
//! [`MetricsLine`], and last `state.json`, so that a kill repeats at most the unfinished
//! generation.

use super::ingest::{fill_window, ShardGate};
use super::lock::RunLock;
use super::pretrain::{load_games, record_files, LoadedGames};
use super::replay::{self, ReplayWindow};
use super::run_dir::create_run;
use super::{effective_config, optim, Overrides, Reporter, RunConfig, RunDir, RunState, TrainError};
use crate::arena::{self, AgentSpec, MatchConfig, MatchSummary, Wdl};
use crate::nn::checkpoint;
use crate::nn::{parse_device, TaflNet};
use crate::report::metrics::{CalibrationMetrics, EvalMetrics, Losses, MetricsLine, SelfPlayMetrics};
use crate::rules::{Side, Variant};
use crate::selfplay::{value_calibration, FinishedGame};
use crate::stats::elo_from_score;
use rand::rngs::SmallRng;
use rand::SeedableRng;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;
use tch::Device;

/// Starts a new run in `dir` or resumes the one there, and trains until the budget is spent.
pub fn train(cfg: Option<RunConfig>, dir: &Path, resume: bool, overrides: &Overrides, reporter: &dyn Reporter) -> Result<(), TrainError> {
    overrides.validate()?;
    Trainer::open(cfg, dir, resume, overrides, reporter)?.run(reporter)
}

/// A new run from an `--init` model keeps the model's encoding (whatever the config's `[net]`
/// says or leaves to the default), and says so when that differs: a model is always fed the
/// planes it was trained on. Its size must match the config's (`create_run` checks). A model
/// with per-side values keeps them too ([`NetConfig::continuing`](crate::nn::NetConfig::continuing), the rule `--resume` follows):
/// `train --init models/brandubh` starts from the shipped network whatever its heads.
///
/// A model of another variant on the same board starts the run as well (the nearest trained
/// network, issue 39: the input planes show each variant's special squares, so the weights
/// carry over); that is said too.
fn keep_init_architecture(cfg: &mut RunConfig, variant: &Variant, init: &Path, reporter: &dyn Reporter) -> Result<(), TrainError> {
    let meta = checkpoint::resolve(init).and_then(|p| checkpoint::read_meta(&p)).map_err(|e| TrainError::argument("--init", e.to_string()))?;
    if meta.variant != variant.name && meta.board_size == variant.geometry.size() {
        reporter.line(&format!(
            "--init {}: a network trained on {} (generation {}); the run starts {} from its weights",
            init.display(),
            meta.variant,
            meta.generation,
            variant.name
        ));
    }
    if meta.net.encoding != cfg.net.encoding {
        reporter.line(&format!(
            "--init {}: a network of input encoding {}; the run keeps it (the config's [net] gives {})",
            init.display(),
            meta.net.encoding,
            cfg.net.encoding
        ));
        cfg.net.encoding = meta.net.encoding;
    }
    let kept = cfg.net.continuing(&meta.net);
    if kept.value_per_side != cfg.net.value_per_side {
        reporter.line(&format!("--init {}: a network with per-side values; the run keeps them (the config's [net] gives one value layer)", init.display()));
        cfg.net.value_per_side = kept.value_per_side;
    }
    Ok(())
}

/// A run open in this process. The phases of a generation are its methods: self-play in
/// `workers` (hence the fields visible to the `train` module), training, saving and
/// evaluation here.
pub(super) struct Trainer {
    pub(super) rd: RunDir,
    /// The effective config, with the command line's budget applied.
    pub(super) cfg: RunConfig,
    pub(super) variant: Arc<Variant>,
    pub(super) device: Device,
    pub(super) net: TaflNet,
    pub(super) sgd: optim::Sgd,
    pub(super) window: ReplayWindow,
    /// The human games of `train.human_games`, when the config mixes them into each batch.
    pub(super) human: Option<ReplayWindow>,
    pub(super) gate: ShardGate,
    pub(super) state: RunState,
    /// Games each self-play thread carries into the next generation (`selfplay.carry_games`;
    /// in memory only, so they always belong to the generation this process plays next).
    pub(super) carry: Vec<crate::selfplay::Carry>,
    /// Held while the trainer lives: no second trainer runs on this directory.
    _lock: RunLock,
}

/// What a generation's SGD steps did.
struct Training {
    lr: f64,
    steps: usize,
    /// Mean losses over the steps (0 without steps).
    loss: Losses,
}

impl Trainer {
    /// Creates the run in `dir` or resumes it: loads the latest model and its momentum
    /// buffers, refills the replay window from the shards, and says where it starts.
    pub(super) fn open(cfg: Option<RunConfig>, dir: &Path, resume: bool, overrides: &Overrides, reporter: &dyn Reporter) -> Result<Trainer, TrainError> {
        let rd = RunDir::new(dir);
        // Checked once before anything is made (a bad command leaves no folder behind), and
        // again under the lock, which a trainer that just finished may have held.
        effective_config(cfg.clone(), dir, resume)?;
        std::fs::create_dir_all(dir).map_err(|e| TrainError::io(dir, e))?;
        let lock = RunLock::acquire(dir)?;
        let mut cfg = effective_config(cfg, dir, resume)?;
        let existing = rd.load_state()?;
        if let Some(g) = overrides.generations {
            cfg.budget.generations = g;
        }
        if let Some(m) = overrides.minutes {
            cfg.budget.minutes = m;
        }
        let variant = Arc::new(Variant::from_spec(&cfg.variant).map_err(|e| TrainError::Config { field: "variant", message: e.to_string() })?);
        let device = parse_device(&cfg.device)?;
        let human_games = load_human_games(&cfg, &variant)?;
        let mut state = match existing {
            Some(_) if overrides.init.is_some() => {
                return Err(TrainError::InitOnExistingRun { dir: dir.to_path_buf() });
            }
            Some(s) => s,
            None => {
                if let Some(init) = overrides.init.as_deref() {
                    keep_init_architecture(&mut cfg, &variant, init, reporter)?;
                }
                create_run(&rd, &cfg, &variant, overrides.init.as_deref())?
            }
        };
        if state.finished {
            // Workers started from now on must not stop at once.
            state.finished = false;
            rd.save_state(&state)?;
        }
        for p in rd.remove_stale_temp_files()? {
            reporter.line(&format!("removed {}, left by a killed process", p.display()));
        }
        // A run copied without its shards (say a committed checkpoint) resumes with an empty
        // window: the games folder is made again.
        std::fs::create_dir_all(rd.games()).map_err(|e| TrainError::io(&rd.games(), e))?;
        // The model's architecture, with the ownership head if the config now trains one (a
        // resumed run whose config gained `train.ownership_weight` starts the head fresh).
        let model = rd.model(state.generation);
        // Per-side values, once on, stay on (`NetConfig::continuing`): a config that turns them
        // on (resumed) splits the model's value output layer.
        let saved = checkpoint::read_meta(&model)?.net;
        let arch = cfg.net.continuing(&saved);
        let changes = checkpoint::HeadChanges::between(&saved, &arch);
        if arch.value_per_side != cfg.net.value_per_side {
            reporter.line(&format!(
                "{}: the network has per-side values, which stay (a network does not go back to one value layer; the config's [net] value_per_side = false is ignored)",
                model.display()
            ));
        }
        if changes.ownership {
            tch::manual_seed(cfg.seed as i64 ^ state.generation as i64);
        }
        let (net, _) = checkpoint::load_as(&model, Some(&variant), arch, device)?;
        let mut sgd = optim::Sgd::new(&net, cfg.train.momentum, cfg.train.weight_decay);
        let optim_path = rd.optimizer(state.generation);
        if optim_path.exists() {
            sgd.load(&optim_path, changes)?;
        }
        // The window encodes for the network it trains: a version-1 run continues on version 1.
        let mut window = ReplayWindow::new(variant.clone(), net.config.encoding, cfg.train.window_positions, cfg.train.value_discount)
            .with_search_value(cfg.train.search_value_share, cfg.train.search_value_horizon)
            .with_ownership(net.config.ownership);
        let mut gate = ShardGate::new(&variant);
        // Games of a model saved just before a kill (its state.json not yet written) are no
        // younger than the run.
        let newest = state.generation.max(rd.latest_generation().unwrap_or(0));
        fill_window(&rd, &mut window, &mut gate, newest, reporter)?;
        reporter.line(&format!(
            "{}: {} on {}, network {} (input encoding {}), {:?} ({} self-play workers of {} torch threads; {} for training); generation {}, {} positions in the window; budget: {}",
            dir.display(),
            cfg.name,
            variant.name,
            net.config.describe(),
            net.config.encoding,
            device,
            cfg.selfplay.workers(crate::nn::cores()),
            tch::get_num_threads(),
            crate::nn::cores(),
            state.generation,
            window.len(),
            budget_text(&cfg, state.wall_seconds)
        ));
        let human = human_games.map(|h| human_window(&cfg, &h, &variant, net.config, reporter));
        Ok(Trainer { rd, cfg, variant, device, net, sgd, window, human, gate, state, carry: Vec::new(), _lock: lock })
    }

    /// Runs generations until the budget is spent: the generation count, or the minutes
    /// (counted across resumes), stopping before a generation as long as the last one would
    /// overrun them.
    pub(super) fn run(&mut self, reporter: &dyn Reporter) -> Result<(), TrainError> {
        let started = Instant::now();
        let base_wall = self.state.wall_seconds;
        let mut last_generation_secs = 0.0;
        loop {
            let elapsed = base_wall + started.elapsed().as_secs_f64();
            if self.cfg.budget.generations > 0 && self.state.generation >= self.cfg.budget.generations {
                reporter.line(&format!("stopping: generation {} reached", self.state.generation));
                self.finish()?;
                break;
            }
            if self.cfg.budget.minutes > 0.0 && elapsed + last_generation_secs > self.cfg.budget.minutes * 60.0 {
                reporter.line(&format!("stopping: the {} minute budget would be exceeded", self.cfg.budget.minutes));
                self.finish()?;
                break;
            }
            let t = Instant::now();
            let clock = || base_wall + started.elapsed().as_secs_f64();
            let deadline = (self.cfg.budget.minutes > 0.0).then_some(self.cfg.budget.minutes * 60.0);
            let Some(line) = self.run_generation(deadline, &clock, reporter)? else {
                // The budget ran out while waiting for workers: nothing of the generation is
                // kept but its shards; the time spent counts.
                self.state.wall_seconds = clock();
                self.finish()?;
                break;
            };
            reporter.line(&line);
            last_generation_secs = t.elapsed().as_secs_f64();
        }
        Ok(())
    }

    /// Marks the run's budget spent in its state, which tells self-play workers to stop.
    fn finish(&mut self) -> Result<(), TrainError> {
        self.state.finished = true;
        self.rd.save_state(&self.state)
    }

    /// Plays, trains, saves and evaluates the next generation, appends its metrics line and
    /// then saves the state; returns the generation's summary line, or `None` when `clock`
    /// passed `deadline` while waiting for workers' games (nothing is then saved).
    pub(super) fn run_generation(&mut self, deadline: Option<f64>, clock: &dyn Fn() -> f64, reporter: &dyn Reporter) -> Result<Option<String>, TrainError> {
        let generation = self.state.generation + 1;
        // 1. Self-play with the current model.
        // The attackers' full-search simulations of this generation (the full search's when
        // the config gives them none of their own).
        let sp = self.state.selfplay_config(&self.cfg);
        let attacker_sims = sp.attacker_sims.unwrap_or(sp.search.sims);
        let t = Instant::now();
        let Some((games, evals)) = self.self_play(deadline, clock, reporter)? else {
            return Ok(None);
        };
        let sp_secs = t.elapsed().as_secs_f64().max(1e-9);
        self.state.selfplay_games += games.len() as u64;
        let (att, def, draw, plies) = side_rates(&games);
        if self.cfg.selfplay.attacker_share > 0.0 {
            // Steer the next generation's attackers towards the target share; saved with the state.
            self.state.attacker_sims = Some(self.cfg.selfplay.next_attacker_sims(attacker_sims, att));
        }
        let calibration = CalibrationMetrics::from(&value_calibration(&games, self.variant.rules.first));
        // 2. Train.
        let t = Instant::now();
        // Training has the whole machine.
        crate::nn::set_intra_op_threads(crate::nn::cores());
        let training = self.train_steps(generation, reporter)?;
        let train_secs = t.elapsed().as_secs_f64();
        self.rd.save_generation(&self.net, &self.sgd, &self.variant, generation)?;
        // 3. Evaluate: games in parallel on rayon's threads, so a share of the cores each
        // (rayon's threads keep the count they first ran torch with).
        crate::nn::set_intra_op_threads(crate::nn::cores() / rayon::current_num_threads().max(1));
        let (eval, summary) = self.evaluate(generation, reporter)?;
        let line = MetricsLine {
            generation,
            wall_seconds: clock(),
            lr: training.lr,
            train_steps: training.steps as u64,
            train_seconds: train_secs,
            loss: training.loss,
            window_positions: self.window.len() as u64,
            skipped_shards: self.gate.skipped() as u64,
            selfplay: SelfPlayMetrics {
                games: games.len() as u64,
                seconds: sp_secs,
                games_per_s: games.len() as f64 / sp_secs,
                evals_per_s: evals as f64 / sp_secs,
                attackers_win: att,
                defenders_win: def,
                draws: draw,
                mean_plies: plies,
                attacker_sims: sp.attacker_sims,
            },
            eval,
            calibration: Some(calibration),
        };
        self.rd.append_metrics(&line)?;
        self.state.generation = generation;
        self.state.wall_seconds = clock();
        self.rd.save_state(&self.state)?;
        let loss = training.loss;
        Ok(Some(format!(
            "gen {generation:>3} | loss {:.3} (policy {:.3}, value {:.3}{}) | self-play {} games, {:.1}/s, att {:.0}% def {:.0}% draw {:.0}%, {:.0} plies{}, value bias att {:+.2} def {:+.2} | {}",
            loss.total,
            loss.policy,
            loss.value,
            loss.ownership.map_or(String::new(), |o| format!(", ownership {o:.3}")),
            games.len(),
            games.len() as f64 / sp_secs,
            100.0 * att,
            100.0 * def,
            100.0 * draw,
            plies,
            self.state.attacker_sims.map_or(String::new(), |n| format!(", attackers' sims {attacker_sims} -> {n}")),
            calibration.attackers.bias(),
            calibration.defenders.bias(),
            if summary.is_empty() { "no evaluation".to_string() } else { summary.join(", ") }
        )))
    }

    /// The next generation's self-play games (each also added to the window) and the network
    /// evaluations they took; `None` when the deadline passed waiting for workers.
    fn self_play(&mut self, deadline: Option<f64>, clock: &dyn Fn() -> f64, reporter: &dyn Reporter) -> Result<Option<(Vec<FinishedGame>, u64)>, TrainError> {
        if self.cfg.selfplay.in_process {
            // A share of the cores for each worker's network (its threads start afresh each
            // generation and take torch's count as it is now).
            crate::nn::set_intra_op_threads(super::torch_threads(&self.cfg, crate::nn::cores()));
            self.self_play_in_process(reporter).map(Some)
        } else {
            self.collect_worker_games(deadline, clock, reporter)
        }
    }

    /// The generation's SGD steps on batches of the window, none while the window holds fewer
    /// than `train.min_positions` positions. Batches are drawn from a generator seeded by the
    /// run seed and the generation.
    fn train_steps(&mut self, generation: u64, reporter: &dyn Reporter) -> Result<Training, TrainError> {
        let cfg = &self.cfg;
        let lr = cfg.learning_rate(generation);
        let mut rng = SmallRng::seed_from_u64(cfg.seed ^ generation.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let (mut lt, mut lp, mut lv, mut steps) = (0.0, 0.0, 0.0, 0usize);
        let mut lo: Option<f64> = None;
        if self.window.len() >= cfg.train.min_positions.max(1) {
            let from_human = self.human.as_ref().map_or(0, |_| human_part(cfg.train.batch_size, cfg.train.human_share));
            let from_window = cfg.train.batch_size - from_human;
            let planned = capped_steps(cfg.train.steps_per_generation, cfg.train.max_window_passes, self.window.len(), from_window);
            reporter.start(&format!("gen {generation} training"), planned as u64);
            for _ in 0..planned {
                let mut batch = self.window.batch(from_window, &mut rng, self.device);
                if let Some(human) = self.human.as_ref().filter(|_| from_human > 0) {
                    batch = batch.cat(&human.batch(from_human, &mut rng, self.device));
                }
                let l = replay::losses(&self.net, &batch, replay::LossWeights { value: cfg.train.value_weight, ownership: cfg.train.ownership_weight });
                let (total, p, v) = (l.total, l.policy, l.value);
                let loss = total.double_value(&[]);
                if !loss.is_finite() {
                    // A step on it would make every weight NaN; stop before it, with the last
                    // saved generation intact, so the run resumes from sound weights.
                    reporter.finish();
                    return Err(TrainError::NonFiniteLoss { generation, step: steps + 1, loss });
                }
                self.sgd.zero_grad();
                total.backward();
                self.sgd.step(lr);
                lt += loss;
                lp += p.double_value(&[]);
                lv += v.double_value(&[]);
                if let Some(o) = l.ownership {
                    *lo.get_or_insert(0.0) += o.double_value(&[]);
                }
                steps += 1;
                reporter.advance(1, &format!("loss {:.3}", lt / steps as f64));
                crate::fault::point("sgd-step");
            }
            reporter.finish();
        }
        let n = steps.max(1) as f64;
        Ok(Training { lr, steps, loss: Losses { total: lt / n, policy: lp / n, value: lv / n, ownership: lo.map(|o| o / n) } })
    }

    /// Matches of the saved model `generation` against the previous model and each baseline,
    /// when the config asks for an evaluation this generation: one metrics entry and one
    /// summary phrase per opponent.
    fn evaluate(&self, generation: u64, reporter: &dyn Reporter) -> Result<(Vec<EvalMetrics>, Vec<String>), TrainError> {
        let (cfg, rd) = (&self.cfg, &self.rd);
        let mut eval = Vec::new();
        let mut summary = Vec::new();
        if cfg.eval.every > 0 && generation % cfg.eval.every == 0 && cfg.eval.games > 0 {
            let me = cfg.eval_spec(&rd.model(generation));
            let mut opponents: Vec<(String, AgentSpec)> = Vec::new();
            if cfg.eval.previous {
                opponents.push(("previous".into(), cfg.eval_spec(&rd.model(generation - 1))));
            }
            for b in &cfg.eval.baselines {
                opponents.push((
                    b.clone(),
                    b.parse().map_err(|e: crate::arena::AgentError| TrainError::Config { field: "eval.baselines", message: e.to_string() })?,
                ));
            }
            for (name, spec) in opponents {
                let s = play_match(&self.variant, &me, &spec, cfg.eval.games, cfg.seed ^ generation, &format!("gen {generation} vs {name}"), reporter)?;
                let unscored = s.disagreements + s.voids;
                summary.push(match unscored {
                    0 => format!("vs {name} {:.0}%", 100.0 * s.a_score),
                    n => format!("vs {name} {:.0}% ({n} unscored)", 100.0 * s.a_score),
                });
                eval.push(EvalMetrics {
                    unscored,
                    elo: elo_from_score(s.a_score, s.games),
                    games: s.games,
                    score: s.a_score,
                    as_attackers: s.a_as_attackers,
                    as_defenders: s.a_as_defenders,
                    attackers_win: side_share(&s, Side::Attackers),
                    defenders_win: side_share(&s, Side::Defenders),
                    draws: (s.a_total().draw) as f64 / s.games.max(1) as f64,
                    opponent: name,
                });
            }
        }
        Ok((eval, summary))
    }
}

/// The games of `train.human_games`, checked with the rules (`None` when the config names
/// none): read before a run is created, so that a bad file starts nothing.
fn load_human_games(cfg: &RunConfig, variant: &Arc<Variant>) -> Result<Option<LoadedGames>, TrainError> {
    if cfg.train.human_games.is_empty() {
        return Ok(None);
    }
    let bad = |message: String| TrainError::Config { field: "train.human_games", message };
    let files = record_files(&cfg.train.human_games).map_err(|e| bad(e.to_string()))?;
    let loaded = load_games(&files, variant).map_err(|e| bad(e.to_string()))?;
    if loaded.games.is_empty() {
        return Err(bad(format!("no usable {} game in {} file(s) ({} read, {} skipped)", variant.name, files.len(), loaded.read, loaded.skipped_total())));
    }
    Ok(Some(loaded))
}

/// A window of every position of the human games in the network's `encoding`, with plain
/// game results as value targets (as `pretrain` trains on them).
fn human_window(cfg: &RunConfig, loaded: &LoadedGames, variant: &Arc<Variant>, net: crate::nn::NetConfig, reporter: &dyn Reporter) -> ReplayWindow {
    let total: usize = loaded.games.iter().map(|g| g.plies.len()).sum();
    let mut w = ReplayWindow::new(variant.clone(), net.encoding, total.max(1), 1.0).with_ownership(net.ownership);
    for g in &loaded.games {
        w.add_game(g);
    }
    reporter.line(&format!(
        "train.human_games: {} games ({} positions; {} skipped) make {} of each batch of {}",
        loaded.games.len(),
        w.len(),
        loaded.skipped_total(),
        human_part(cfg.train.batch_size, cfg.train.human_share),
        cfg.train.batch_size
    ));
    w
}

/// A generation's SGD steps: `steps`, or fewer where `passes` (above 0) caps the samples
/// drawn from a window of `window` positions at `passes` × `window`, `per_step` samples a step
/// (at least one step).
fn capped_steps(steps: usize, passes: f64, window: usize, per_step: usize) -> usize {
    if passes <= 0.0 || per_step == 0 {
        return steps;
    }
    let cap = (passes * window as f64 / per_step as f64).ceil() as usize;
    steps.min(cap.max(1))
}

/// Samples of a batch of `batch` drawn from the human games at `share`: at least one and
/// at most all but one, so that both sources train at any share in (0, 1).
fn human_part(batch: usize, share: f64) -> usize {
    if share <= 0.0 || batch < 2 {
        return 0;
    }
    ((batch as f64 * share).round() as usize).clamp(1, batch - 1)
}

/// The budget as the start line prints it; on a resumed run it says that minutes and
/// generations count the whole run, and how much of it is spent.
fn budget_text(cfg: &RunConfig, spent_seconds: f64) -> String {
    let text = budget_only(cfg);
    if spent_seconds > 0.0 && (cfg.budget.minutes > 0.0 || cfg.budget.generations > 0) {
        format!("{text} for the whole run ({:.1} minutes spent in earlier sittings)", spent_seconds / 60.0)
    } else {
        text
    }
}

fn budget_only(cfg: &RunConfig) -> String {
    let plural = |n: f64, unit: &str| format!("{n} {unit}{}", if n == 1.0 { "" } else { "s" });
    match (cfg.budget.generations, cfg.budget.minutes) {
        (0, m) if m <= 0.0 => "none (stop with Ctrl-C; --resume continues)".into(),
        (0, m) => plural(m, "minute"),
        (g, m) if m <= 0.0 => plural(g as f64, "generation"),
        (g, m) => format!("{} or {}, whichever comes first", plural(g as f64, "generation"), plural(m, "minute")),
    }
}

/// Shares of self-play games won by attackers, by defenders, drawn, and the mean length, over
/// the games the current network played against itself (a game against a past network
/// measures the two networks, not the sides).
fn side_rates(games: &[FinishedGame]) -> (f64, f64, f64, f64) {
    let own: Vec<&FinishedGame> = games.iter().filter(|g| g.past.is_none()).collect();
    let games = &own;
    let n = games.len().max(1) as f64;
    let count = |w: Option<Side>| games.iter().filter(|g| g.outcome.winner == w).count() as f64 / n;
    let plies = games.iter().map(|g| g.plies.len() as f64).sum::<f64>() / n;
    (count(Some(Side::Attackers)), count(Some(Side::Defenders)), count(None), plies)
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

/// One evaluation match of `games` games, `a` against `b`, with a progress phase `label`.
fn play_match(
    variant: &Arc<Variant>,
    a: &AgentSpec,
    b: &AgentSpec,
    games: usize,
    seed: u64,
    label: &str,
    reporter: &dyn Reporter,
) -> Result<MatchSummary, TrainError> {
    reporter.start(label, games as u64);
    let cfg = MatchConfig { games, seed, opening_plies: 2, shard: None, a_side: None };
    let on_game = |_: &arena::GameResult| {
        reporter.advance(1, "");
        crate::fault::point("eval-game");
    };
    let results = arena::play_match(variant, a, b, &cfg, &on_game)?;
    reporter.finish();
    Ok(MatchSummary::from_games(&results))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nn::encoding::Encoding;
    use std::sync::Mutex;

    /// Keeps the lines, ignores the bars.
    struct Lines(Mutex<Vec<String>>);

    impl Reporter for Lines {
        fn start(&self, _: &str, _: u64) {}
        fn advance(&self, _: u64, _: &str) {}
        fn finish(&self) {}
        fn line(&self, text: &str) {
            self.0.lock().expect("not poisoned").push(text.to_string());
        }
    }

    /// `max_window_passes` caps a small window's steps (Copenhagen run 5's first generation:
    /// 100 steps of 256 on 3,871 positions, 6.6 passes) and leaves a full window's alone.
    #[test]
    fn window_passes_cap_the_steps_of_a_small_window_only() {
        assert_eq!(capped_steps(100, 0.0, 3_871, 256), 100, "0 is no cap");
        assert_eq!(capped_steps(100, 0.5, 3_871, 256), 8, "ceil(0.5 * 3871 / 256)");
        assert_eq!(capped_steps(100, 0.5, 52_435, 256), 100, "run 5's full window");
        assert_eq!(capped_steps(80, 0.5, 60_000, 256), 80, "brandubh's full window");
        assert_eq!(capped_steps(100, 0.5, 100, 256), 1, "at least one step");
        assert_eq!(capped_steps(100, 0.5, 3_871, 128), 16, "only the window's part of a batch counts");
    }

    /// The self-play side rates (and so the attackers' steering) count only the games the
    /// current network played against itself.
    #[test]
    fn side_rates_leave_out_games_against_past_networks() {
        use crate::rules::{Outcome, Reason};
        let game = |winner: Side, past: Option<Side>| FinishedGame { plies: Vec::new(), outcome: Outcome::win(winner, Reason::KingCaptured), past };
        let games = [
            game(Side::Attackers, None),
            game(Side::Defenders, None),
            game(Side::Defenders, None),
            game(Side::Defenders, None),
            game(Side::Attackers, Some(Side::Defenders)),
            game(Side::Attackers, Some(Side::Defenders)),
        ];
        let (att, def, draw, _) = side_rates(&games);
        assert_eq!((att, def, draw), (0.25, 0.75, 0.0));
    }

    /// Both sources train at any share in (0, 1); none at 0.
    #[test]
    fn the_human_part_of_a_batch_leaves_room_for_both_sources() {
        assert_eq!(human_part(256, 0.5), 128);
        assert_eq!(human_part(32, 0.75), 24);
        assert_eq!(human_part(32, 0.999), 31);
        assert_eq!(human_part(32, 0.001), 1);
        assert_eq!(human_part(32, 0.0), 0);
        assert_eq!(human_part(1, 0.5), 0);
    }

    /// A new run from the shipped (version-1) model with the default config (version 2 for
    /// a fresh network) keeps version 1, says so once, and saves a config and a generation 0
    /// of version 1.
    #[test]
    fn a_run_from_an_init_model_keeps_the_models_encoding() {
        let shipped = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/models/brandubh"));
        let mut cfg = RunConfig::from_toml(super::super::DEFAULT_CONFIG, "default").expect("the default config");
        assert_eq!(cfg.net.encoding, Encoding::V2);
        let variant = Variant::from_spec(&cfg.variant).expect("variant");
        let lines = Lines(Mutex::new(Vec::new()));
        keep_init_architecture(&mut cfg, &variant, shipped, &lines).expect("the shipped model reads");
        assert_eq!(cfg.net.encoding, Encoding::V1);
        // The shipped network (since 2026-12-06) has per-side values: kept, and said.
        assert!(cfg.net.value_per_side);
        keep_init_architecture(&mut cfg, &variant, shipped, &lines).expect("again");
        let said = lines.0.lock().expect("not poisoned").clone();
        assert!(
            said.len() == 2 && said[0].contains("input encoding 1; the run keeps it") && said[1].contains("per-side values; the run keeps them"),
            "{said:?}"
        );
        let dir = std::env::temp_dir().join(format!("tafl-lab-init-encoding-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let rd = RunDir::new(&dir);
        create_run(&rd, &cfg, &variant, Some(shipped)).expect("a run from the shipped model");
        assert_eq!(rd.load_config().expect("saved config").net.encoding, Encoding::V1);
        assert_eq!(checkpoint::read_meta(&rd.model(0)).expect("generation 0").net.encoding, Encoding::V1);
        let missing = keep_init_architecture(&mut cfg, &variant, &dir.join("nope.safetensors"), &lines).expect_err("no such model").to_string();
        assert!(missing.contains("--init"), "{missing}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// The nearest trained network: a model of brandubh starts a run on magpie (another 7x7
    /// variant), says so, and its generation 0 is that network under magpie's name; on
    /// tablut (9x9) it is refused with both boards named.
    #[test]
    fn a_model_of_another_variant_on_the_same_board_starts_a_run() {
        let shipped = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/models/brandubh"));
        let dir = std::env::temp_dir().join(format!("tafl-lab-init-nearest-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let (shipped_net, shipped_meta) = checkpoint::load(shipped, None, Device::Cpu).expect("the shipped model");
        for (name, ok) in [("magpie", true), ("tablut", false)] {
            let mut cfg = RunConfig::from_toml(super::super::DEFAULT_CONFIG, "default").expect("the default config");
            cfg.variant = name.to_string();
            cfg.net = shipped_meta.net;
            let variant = Variant::from_spec(name).expect("preset");
            let lines = Lines(Mutex::new(Vec::new()));
            keep_init_architecture(&mut cfg, &variant, shipped, &lines).expect("the shipped model reads");
            let said = lines.0.lock().expect("not poisoned").clone();
            let rd = RunDir::new(&dir.join(name));
            let made = create_run(&rd, &cfg, &variant, Some(shipped));
            if ok {
                made.expect("a magpie run from the brandubh model");
                assert!(said.iter().any(|l| l.contains("trained on brandubh") && l.contains("starts magpie")), "{said:?}");
                let (net, meta) = checkpoint::load(&rd.model(0), Some(&variant), Device::Cpu).expect("generation 0 is magpie's");
                assert_eq!(meta.variant, "magpie");
                let (a, b) = (net.vs.variables(), shipped_net.vs.variables());
                assert!(a.iter().all(|(k, t)| t.equal(&b[k])), "generation 0 holds the brandubh weights");
            } else {
                let e = made.expect_err("a 7x7 model cannot start a 9x9 run").to_string();
                assert!(e.contains("--init") && e.contains("7x7") && e.contains("9x9"), "{e}");
                assert!(!rd.root.join("state.json").exists(), "nothing written");
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
