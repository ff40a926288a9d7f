//! The run directory: everything a run keeps between processes, so that a killed run resumes
//! with the same command and separate worker processes find the model to play with.
//!
//! - `config.toml`: the resolved config, written at start; `--resume` and workers use it.
//! - `run.json`: seed, tafl-lab version, variant and rules fingerprint, start time.
//! - `state.json`: the last completed generation and the wall time spent (written last in a
//!   generation, so a kill repeats at most the unfinished generation's training).
//! - `models/NNNNNN.safetensors` (+ `.optim.safetensors`, the momentum buffers) and `latest`.
//! - `games/gNNNNNN-WRITER-SEQ.shard`: self-play games played by model NNNNNN, written every
//!   few games, so a kill loses at most the games in flight.
//! - `metrics.jsonl`: one [`MetricsLine`] per generation.
//! - `lock`: held by the one trainer of the run while it runs ([`super::lock`]).
//!
//! Every file is written atomically (temporary name, fsync, rename); a trainer that starts
//! removes the temporary files a killed one left.

use super::{optim, RunConfig, TrainError};
use crate::fsio::{atomic_write, temp_target};
use crate::nn::checkpoint::{self, ModelMeta};
use crate::nn::TaflNet;
use crate::report::metrics::MetricsLine;
use crate::rules::Variant;
use crate::selfplay::shard;
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::path::{Path, PathBuf};
use tch::Device;

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
        let text = std::fs::read_to_string(&p).map_err(|e| TrainError::io(&p, e))?;
        Ok(RunConfig::from_saved_toml(&text, &p.display().to_string())?)
    }

    pub fn load_state(&self) -> Result<Option<RunState>, TrainError> {
        let p = self.state();
        match std::fs::read_to_string(&p) {
            Ok(text) => serde_json::from_str(&text).map(Some).map_err(|e| TrainError::BadFile { path: p.clone(), message: format!("bad state file: {e}") }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(TrainError::io(&p, e)),
        }
    }

    /// The generation `models/latest` points at.
    pub fn latest_generation(&self) -> Result<u64, TrainError> {
        let p = self.latest();
        let text = std::fs::read_to_string(&p).map_err(|e| TrainError::io(&p, e))?;
        text.trim().split('.').next().and_then(|g| g.parse().ok()).ok_or_else(|| TrainError::BadFile { path: p.clone(), message: "malformed pointer".into() })
    }

    /// Shard files, sorted by name (so by generation, then writer).
    pub fn shards(&self) -> Result<Vec<PathBuf>, TrainError> {
        let dir = self.games();
        let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
            .map_err(|e| TrainError::io(&dir, e))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "shard"))
            .collect();
        v.sort();
        Ok(v)
    }

    /// Removes the temporary files that killed processes left in the run directory (a kill
    /// between creating a temporary file and renaming it: see [`atomic_write`]) and returns
    /// their names. Only those of files the trainer writes: its own files, models and the
    /// `trainer` shards (the caller holds the run's lock, so none is a live process's);
    /// workers' temporary shards may be in the middle of being written and are left alone.
    pub(super) fn remove_stale_temp_files(&self) -> Result<Vec<PathBuf>, TrainError> {
        let own = ["config.toml", "run.json", "state.json", "metrics.jsonl"];
        let trainer_shard = |t: &str| shard::parse_file_name(t).is_some_and(|(_, writer)| writer == "trainer");
        let own_file = |t: &str| own.contains(&t);
        let any = |_: &str| true;
        type Ours<'f> = &'f dyn Fn(&str) -> bool;
        let dirs: [(PathBuf, Ours); 3] = [(self.root.clone(), &own_file), (self.models(), &any), (self.games(), &trainer_shard)];
        let mut removed = Vec::new();
        for (dir, ours) in &dirs {
            let entries = match std::fs::read_dir(dir) {
                Ok(e) => e,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(TrainError::io(dir, e)),
            };
            for e in entries.filter_map(Result::ok) {
                let name = e.file_name();
                if name.to_str().and_then(temp_target).is_some_and(ours) {
                    std::fs::remove_file(e.path()).map_err(|err| TrainError::io(&e.path(), err))?;
                    removed.push(e.path());
                }
            }
        }
        Ok(removed)
    }

    /// Saves `state.json`.
    pub(super) fn save_state(&self, state: &RunState) -> Result<(), TrainError> {
        write_json(&self.state(), state)
    }

    /// Saves generation `generation`'s model and momentum buffers, then points `latest` at it.
    pub(super) fn save_generation(&self, net: &TaflNet, sgd: &optim::Sgd, variant: &Variant, generation: u64) -> Result<(), TrainError> {
        checkpoint::save(net, &ModelMeta::new(variant, net.config, generation), &self.model(generation))?;
        sgd.save(&self.optimizer(generation))?;
        let name = format!("{generation:06}.safetensors\n");
        atomic_write(&self.latest(), name.as_bytes()).map_err(|e| TrainError::io(&self.latest(), e))
    }

    /// Adds `line` to `metrics.jsonl`, dropping the lines of generations it replaces (a
    /// generation redone after a kill). The file is rewritten whole (atomically) so that a
    /// kill never leaves half a line.
    pub(super) fn append_metrics(&self, line: &MetricsLine) -> Result<(), TrainError> {
        let path = self.metrics();
        let mut text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(TrainError::io(&path, e)),
        };
        let g = line.generation;
        text = text
            .lines()
            .filter(|l| serde_json::from_str::<serde_json::Value>(l).ok().and_then(|v| v["generation"].as_u64()).is_some_and(|x| x < g))
            .map(|l| format!("{l}\n"))
            .collect();
        text.push_str(&line.to_json());
        text.push('\n');
        atomic_write(&path, text.as_bytes()).map_err(|e| TrainError::io(&path, e))
    }
}

/// Progress that survives restarts.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunState {
    pub generation: u64,
    pub wall_seconds: f64,
    pub selfplay_games: u64,
    /// The trainer stopped because its budget is spent: self-play workers see it and stop
    /// too. A trainer that resumes clears it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub finished: bool,
    /// The attackers' full-search simulations for the next generation's self-play, when the
    /// config steers them (`selfplay.attacker_share`); workers read it here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attacker_sims: Option<u32>,
    /// Continuous self-play (`selfplay.carry_games`): the first game number no generation
    /// has started yet. Its games are numbered across the run and seeded
    /// `selfplay::game_seed(seed, CONTINUOUS, number)`, so a resumed run starts new numbers
    /// where the last finished generation left off and never repeats a game.
    #[serde(default, skip_serializing_if = "crate::selfplay::is_zero")]
    pub next_game: u64,
}

impl RunState {
    /// The self-play settings of the run's next generation: `cfg`'s, with the attackers'
    /// simulations this state steers to, if any; their fast searches then grow in the same
    /// proportion over the full search's (`fast_sims * attacker_sims / sims`).
    pub fn selfplay_config(&self, cfg: &super::RunConfig) -> crate::selfplay::SelfPlayConfig {
        let mut sp = cfg.selfplay_config();
        if let Some(n) = self.attacker_sims {
            sp.attacker_sims = Some(n);
            let full = u64::from(sp.search.sims.max(1));
            sp.attacker_fast_sims = Some(((u64::from(sp.fast_sims) * u64::from(n) + full / 2) / full).max(1) as u32);
        }
        sp
    }
}

/// The config a run in `dir` trains with: the saved one when resuming (the command line's
/// `cfg` is then ignored), else `cfg`. Errors when `dir` already holds a run and `resume` is
/// false, or holds none and it is true. Everything sized from the config (torch threads)
/// must use this one.
pub fn effective_config(cfg: Option<RunConfig>, dir: &Path, resume: bool) -> Result<RunConfig, TrainError> {
    let rd = RunDir::new(dir);
    match (rd.load_state()?, resume) {
        (Some(s), false) => Err(TrainError::RunExists { dir: dir.to_path_buf(), generation: s.generation }),
        // A run killed (or out of disk space) while being created has its config but no state.
        (None, true) if rd.config().exists() => Err(TrainError::CreationInterrupted { dir: dir.to_path_buf() }),
        (None, true) => Err(TrainError::NothingToResume { dir: dir.to_path_buf() }),
        (Some(_), true) => rd.load_config(),
        (None, false) => cfg.ok_or(TrainError::NoConfig),
    }
}

/// Creates the run: directories, `config.toml`, `run.json`, generation 0 (a fresh network
/// seeded from the run seed, or the `init` model) and `state.json`, in that order. An `init`
/// model is checked before anything is written.
pub(super) fn create_run(rd: &RunDir, cfg: &RunConfig, variant: &Variant, init: Option<&Path>) -> Result<RunState, TrainError> {
    let init_net = match init {
        None => None,
        Some(p) => {
            // Any variant on the same board: its weights start the run (the nearest network).
            let meta = checkpoint::resolve(p).and_then(|f| checkpoint::read_meta(&f)).map_err(|e| TrainError::argument("--init", e.to_string()))?;
            if meta.board_size != variant.geometry.size() {
                return Err(TrainError::argument(
                    format!("--init {}", p.display()),
                    format!(
                        "the model is of {} on a {1}x{1} board; {2} is played on {3}x{3}",
                        meta.variant,
                        meta.board_size,
                        variant.name,
                        variant.geometry.size()
                    ),
                ));
            }
            if !meta.net.starts(&cfg.net) {
                return Err(TrainError::argument(
                    format!("--init {}", p.display()),
                    format!(
                        "the model's network is {} (input encoding {}) but the config's [net] is {} (input encoding {}); set [net] to blocks = {}, channels = {}{}",
                        meta.net.describe(),
                        meta.net.encoding,
                        cfg.net.describe(),
                        cfg.net.encoding,
                        meta.net.blocks,
                        meta.net.channels,
                        if meta.net.value_per_side { ", value_per_side = true" } else { "" }
                    ),
                ));
            }
            // An ownership head the model lacks starts from the run seed.
            tch::manual_seed(cfg.seed as i64);
            let (net, _) = checkpoint::load_as(p, None, cfg.net, Device::Cpu).map_err(|e| TrainError::argument("--init", e.to_string()))?;
            Some(net)
        }
    };
    for d in [rd.root.clone(), rd.models(), rd.games()] {
        std::fs::create_dir_all(&d).map_err(|e| TrainError::io(&d, e))?;
    }
    let text = toml::to_string(cfg)?;
    atomic_write(&rd.config(), text.as_bytes()).map_err(|e| TrainError::io(&rd.config(), e))?;
    let since_epoch = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    write_json(
        &rd.root.join("run.json"),
        &json!({
            "seed": cfg.seed,
            "tafl_lab": env!("CARGO_PKG_VERSION"),
            "variant": variant.name,
            "rules_fingerprint": format!("{:016x}", variant.rules_fingerprint()),
            "started_unix": since_epoch,
            "init": init.map(|p| p.display().to_string()),
        }),
    )?;
    let net = init_net.unwrap_or_else(|| {
        tch::manual_seed(cfg.seed as i64);
        TaflNet::new(variant.geometry.size(), cfg.net, Device::Cpu)
    });
    rd.save_generation(&net, &optim::Sgd::new(&net, cfg.train.momentum, cfg.train.weight_decay), variant, 0)?;
    let state = RunState::default();
    rd.save_state(&state)?;
    Ok(state)
}

fn write_json(path: &Path, v: &impl Serialize) -> Result<(), TrainError> {
    let text = serde_json::to_string_pretty(v).expect("serializes") + "\n";
    atomic_write(path, text.as_bytes()).map_err(|e| TrainError::io(path, e))
}
