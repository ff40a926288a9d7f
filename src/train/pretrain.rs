//! Supervised pretraining on game records: a network learns the moves people (or other
//! programs) played and the results their games reached, before any self-play.
//!
//! Why: self-play from a random network spends its first hours learning what any record of
//! human play already shows (the king runs for corners, attackers block them). On a 2-core
//! machine those hours are most of the budget, so a run that starts from a pretrained
//! network (`train --init MODEL`) spends its self-play on what the records do not teach.
//!
//! Records come in the forms `tafl_rules::records` reads and are checked move by move with
//! the variant's rules; a record that fails is skipped and counted by reason. The games are
//! split (by a seeded shuffle of whole games, never positions of one game on both sides) into
//! training games and held-out games; each epoch reports the held-out move-prediction rate
//! (top-1 over all moves) and value loss, and saves the model atomically, so a kill loses at
//! most the epoch under way.

use super::replay::{self, ReplayWindow};
use super::{optim, Reporter, TrainError};
use crate::nn::checkpoint::{self, ModelMeta};
use crate::nn::{NetConfig, TaflNet};
use crate::rules::records::{self, Expect};
use crate::rules::{Outcome, Reason, Variant};
use crate::selfplay::{FinishedGame, PlyRecord};
use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;
use tch::{Device, Kind};

/// How to pretrain.
#[derive(Clone, Debug)]
pub struct PretrainConfig {
    /// The new network's size and input planes (the positions are encoded in its encoding).
    pub net: NetConfig,
    /// Passes over the training games.
    pub epochs: usize,
    pub batch_size: usize,
    pub learning_rate: f64,
    pub momentum: f64,
    pub weight_decay: f64,
    pub value_weight: f64,
    /// Share of the games held out for measuring (0 holds none out).
    pub holdout: f64,
    pub seed: u64,
    /// Stop after this many minutes of training (the model of the last finished epoch, or of
    /// the stop, is saved); 0 = no limit.
    pub minutes: f64,
}

impl Default for PretrainConfig {
    fn default() -> PretrainConfig {
        PretrainConfig {
            net: NetConfig::new(6, 64),
            epochs: 4,
            batch_size: 256,
            learning_rate: 0.02,
            momentum: 0.9,
            weight_decay: 1e-4,
            value_weight: 1.0,
            holdout: 0.05,
            seed: 1,
            minutes: 0.0,
        }
    }
}

impl PretrainConfig {
    /// Refuses values that cannot train, naming the option.
    pub fn validate(&self) -> Result<(), TrainError> {
        let bad = |argument: String, message: &str| Err(TrainError::argument(argument, message));
        if self.epochs == 0 {
            return bad("--epochs 0".into(), "expected at least 1");
        }
        if self.batch_size == 0 {
            return bad("--batch-size 0".into(), "expected at least 1");
        }
        if !(self.learning_rate > 0.0 && self.learning_rate.is_finite()) {
            return bad(format!("--lr {}", self.learning_rate), "expected a positive number");
        }
        if !(0.0..0.5).contains(&self.holdout) {
            return bad(format!("--holdout {}", self.holdout), "expected a share from 0 to below 0.5");
        }
        if !(self.minutes >= 0.0 && self.minutes.is_finite()) {
            return bad(format!("--minutes {}", self.minutes), "expected a number of minutes >= 0 (0 = no limit)");
        }
        self.net.check().map_err(|message| TrainError::Config { field: "network", message })
    }
}

/// The games of record files that the rules accept, and why the others were skipped.
#[derive(Debug, Default)]
pub struct LoadedGames {
    pub games: Vec<FinishedGame>,
    /// Games read, accepted or not.
    pub read: usize,
    /// Every skipped game, in file order: its reason class and `file:line: reason`.
    pub skips: Vec<(&'static str, String)>,
}

impl LoadedGames {
    fn skip(&mut self, class: &'static str, line: String) {
        self.skips.push((class, line));
    }

    pub fn skipped_total(&self) -> usize {
        self.skips.len()
    }

    /// Skipped games by reason class: how many, and the first one's line.
    pub fn skipped_by_class(&self) -> BTreeMap<&'static str, (usize, &str)> {
        let mut by: BTreeMap<&'static str, (usize, &str)> = BTreeMap::new();
        for (class, line) in &self.skips {
            by.entry(class).or_insert((0, line.as_str())).0 += 1;
        }
        by
    }
}

/// The record files under `paths`: files as given, directories' `.csv`, `.txt` and `.otg`
/// files (not recursing), in name order.
pub fn record_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, TrainError> {
    let mut files = Vec::new();
    for p in paths {
        if p.is_dir() {
            let mut inner: Vec<PathBuf> = std::fs::read_dir(p)
                .map_err(|e| TrainError::io(p, e))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| f.is_file() && f.extension().is_some_and(|x| x == "csv" || x == "txt" || x == "otg"))
                .collect();
            inner.sort();
            if inner.is_empty() {
                return Err(TrainError::NoRecords { dir: p.clone() });
            }
            files.extend(inner);
        } else {
            files.push(p.clone());
        }
    }
    Ok(files)
}

/// Reads and checks every game of `files` on `variant`. An unreadable file is an error; a
/// bad game is skipped and counted.
pub fn load_games(files: &[PathBuf], variant: &Arc<Variant>) -> Result<LoadedGames, TrainError> {
    let mut out = LoadedGames::default();
    for f in files {
        let text = std::fs::read_to_string(f).map_err(|e| TrainError::io(f, e))?;
        for game in records::games(&text, Expect::Only(variant), true).1 {
            out.read += 1;
            match game {
                Ok(g) => out.games.push(finished_game(&g.record)),
                Err(skip) => out.skip(skip.label(), format!("{}:{}: {}", f.display(), skip.line(), skip.reason())),
            }
        }
    }
    Ok(out)
}

/// A checked record as a training game: each move is its ply's whole policy target, the
/// recorded result its value target.
fn finished_game(c: &records::CheckedRecord) -> FinishedGame {
    let plies = c.moves.iter().map(|&mv| PlyRecord { mv, policy: vec![(mv, 1.0)], full: true, value: 0.0 }).collect();
    // The reason only labels the game; a resignation or a loss on time has no board reason.
    let outcome = c.end.unwrap_or(Outcome { winner: c.result.winner(), reason: Reason::NoMoves });
    FinishedGame { plies, outcome, past: None }
}

/// One epoch's figures.
#[derive(Clone, Debug, Serialize)]
pub struct EpochLine {
    pub epoch: usize,
    pub steps: usize,
    pub seconds: f64,
    pub lr: f64,
    pub train_policy_loss: f64,
    pub train_value_loss: f64,
    /// Held-out figures (absent with no held-out games).
    pub holdout_policy_loss: Option<f64>,
    pub holdout_value_loss: Option<f64>,
    /// Share of held-out positions whose played move is the network's top move.
    pub holdout_top1: Option<f64>,
}

/// What a pretraining run did, saved as `pretrain.json` beside the model.
#[derive(Clone, Debug, Serialize)]
pub struct PretrainReport {
    pub variant: String,
    pub net: NetConfig,
    pub files: Vec<String>,
    pub games_read: usize,
    pub games_used: usize,
    pub skipped: BTreeMap<String, usize>,
    pub train_games: usize,
    pub holdout_games: usize,
    pub train_positions: usize,
    pub holdout_positions: usize,
    pub epochs: Vec<EpochLine>,
    pub stopped_by_minutes: bool,
}

/// Trains a new network on `loaded` and saves it to `out` after every epoch (a normal model
/// file, generation 0, that `train --init` and every agent spec read), with `pretrain.json`
/// beside it.
pub fn pretrain(
    variant: &Arc<Variant>,
    loaded: &LoadedGames,
    files: &[PathBuf],
    cfg: &PretrainConfig,
    device: Device,
    out: &Path,
    reporter: &dyn Reporter,
) -> Result<PretrainReport, TrainError> {
    cfg.validate()?;
    if loaded.games.is_empty() {
        return Err(TrainError::NoUsableGames { files: files.len(), read: loaded.read, skipped: loaded.skipped_total() });
    }
    let mut order: Vec<usize> = (0..loaded.games.len()).collect();
    order.shuffle(&mut SmallRng::seed_from_u64(cfg.seed));
    let n_hold = ((loaded.games.len() as f64) * cfg.holdout).round() as usize;
    let n_hold = n_hold.min(loaded.games.len() - 1);
    let (hold_idx, train_idx) = order.split_at(n_hold);
    let fill = |idx: &[usize]| {
        let total: usize = idx.iter().map(|&i| loaded.games[i].plies.len()).sum();
        let mut w = ReplayWindow::new(variant.clone(), cfg.net.encoding, total.max(1), 1.0);
        for &i in idx {
            w.add_game(&loaded.games[i]);
        }
        w
    };
    let train = fill(train_idx);
    let hold = fill(hold_idx);
    tch::manual_seed(cfg.seed as i64);
    let net = TaflNet::try_new(variant.geometry.size(), cfg.net, device).map_err(|message| TrainError::Config { field: "network", message })?;
    let mut sgd = optim::Sgd::new(&net, cfg.momentum, cfg.weight_decay);
    let steps_per_epoch = train.len().div_ceil(cfg.batch_size).max(1);
    let total_steps = steps_per_epoch * cfg.epochs;
    let mut rng = SmallRng::seed_from_u64(cfg.seed ^ 0x5EED);
    let started = Instant::now();
    let mut report = PretrainReport {
        variant: variant.name.clone(),
        net: cfg.net,
        files: files.iter().map(|f| f.display().to_string()).collect(),
        games_read: loaded.read,
        games_used: loaded.games.len(),
        skipped: loaded.skipped_by_class().into_iter().map(|(k, (n, _))| (k.to_string(), n)).collect(),
        train_games: train_idx.len(),
        holdout_games: hold_idx.len(),
        train_positions: train.len(),
        holdout_positions: hold.len(),
        epochs: Vec::new(),
        stopped_by_minutes: false,
    };
    let meta = ModelMeta::new(variant, cfg.net, 0);
    let report_path = out.with_file_name("pretrain.json");
    let mut step = 0usize;
    for epoch in 1..=cfg.epochs {
        let t = Instant::now();
        reporter.start(&format!("epoch {epoch}/{}", cfg.epochs), steps_per_epoch as u64);
        let (mut lp, mut lv, mut n) = (0.0, 0.0, 0usize);
        for _ in 0..steps_per_epoch {
            if cfg.minutes > 0.0 && started.elapsed().as_secs_f64() > cfg.minutes * 60.0 {
                report.stopped_by_minutes = true;
                break;
            }
            let lr = schedule(cfg.learning_rate, step, total_steps);
            let batch = train.batch(cfg.batch_size, &mut rng, device);
            let l = replay::losses(&net, &batch, replay::LossWeights::value(cfg.value_weight));
            let (total, p, v) = (l.total, l.policy, l.value);
            sgd.zero_grad();
            total.backward();
            sgd.step(lr);
            lp += p.double_value(&[]);
            lv += v.double_value(&[]);
            n += 1;
            step += 1;
            reporter.advance(1, &format!("policy {:.3} value {:.3}", lp / n as f64, lv / n as f64));
        }
        reporter.finish();
        let (hp, hv, top1) = if hold.is_empty() {
            (None, None, None)
        } else {
            let (a, b, c) = measure(&net, &hold, cfg.batch_size, device);
            (Some(a), Some(b), Some(c))
        };
        let line = EpochLine {
            epoch,
            steps: n,
            seconds: t.elapsed().as_secs_f64(),
            lr: schedule(cfg.learning_rate, step.saturating_sub(1), total_steps),
            train_policy_loss: lp / n.max(1) as f64,
            train_value_loss: lv / n.max(1) as f64,
            holdout_policy_loss: hp,
            holdout_value_loss: hv,
            holdout_top1: top1,
        };
        reporter.line(&epoch_text(&line));
        report.epochs.push(line);
        checkpoint::save(&net, &meta, out)?;
        let text = serde_json::to_string_pretty(&report).expect("serializes") + "\n";
        crate::fsio::atomic_write(&report_path, text.as_bytes()).map_err(|e| TrainError::io(&report_path, e))?;
        if report.stopped_by_minutes {
            reporter.line(&format!("stopping: the {} minute budget is spent", cfg.minutes));
            break;
        }
    }
    Ok(report)
}

/// The learning rate at `step` of `total`: constant, then a tenth for the last fifth.
fn schedule(lr: f64, step: usize, total: usize) -> f64 {
    if step * 5 >= total * 4 {
        lr * 0.1
    } else {
        lr
    }
}

/// Held-out policy loss, value loss and top-1 rate, over every held-out position once.
fn measure(net: &TaflNet, hold: &ReplayWindow, batch: usize, device: Device) -> (f64, f64, f64) {
    let (mut lp, mut lv, mut hits, mut n) = (0.0, 0.0, 0.0, 0usize);
    tch::no_grad(|| {
        let mut start = 0;
        while start < hold.len() {
            let len = batch.min(hold.len() - start);
            let b = hold.batch_range(start, len, device);
            let (p, v) = net.forward_t(&b.input, false);
            let (_, pl, vl) = replay::losses_of(&p, &v, &b, 1.0);
            lp += pl.double_value(&[]) * len as f64;
            lv += vl.double_value(&[]) * len as f64;
            let guess = p.flatten(1, -1).argmax(-1, false);
            let played = b.policy.argmax(-1, false);
            hits += guess.eq_tensor(&played).to_kind(Kind::Float).sum(Kind::Float).double_value(&[]);
            n += len;
            start += len;
        }
    });
    let n = n.max(1) as f64;
    (lp / n, lv / n, hits / n)
}

/// One line per epoch for the terminal.
pub fn epoch_text(l: &EpochLine) -> String {
    let held = match (l.holdout_policy_loss, l.holdout_value_loss, l.holdout_top1) {
        (Some(p), Some(v), Some(t)) => format!(" | held out: policy {p:.3}, value {v:.3}, top-1 {:.1}%", 100.0 * t),
        _ => String::new(),
    };
    format!(
        "epoch {} | {} steps in {:.0} s, lr {} | train: policy {:.3}, value {:.3}{held}",
        l.epoch, l.steps, l.seconds, l.lr, l.train_policy_loss, l.train_value_loss
    )
}
