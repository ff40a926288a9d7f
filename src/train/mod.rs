//! The training loop: generations of self-play, training on a replay window, a checkpoint,
//! and an evaluation, all in one run directory that any process can resume.
//!
//! The parts, each in its own module because each has its own reason to change:
//! - [`config`]: the run config (TOML), validated, and what it derives (search settings, the
//!   evaluation agent, the learning-rate schedule).
//! - [`lock`]: one trainer per run directory (an `flock` the kernel drops when its holder dies).
//! - `run_dir`: the run directory, the only state a run has between processes: its files,
//!   creating a run, saving a generation, the saved config a resume uses, `metrics.jsonl`.
//! - `ingest`: the trainer's one way to read self-play shards (checked, a bad one skipped
//!   once with a warning) and the refilling of the replay window on start or resume.
//! - `workers`: where a generation's games come from: self-play threads in this process, or
//!   the shards of separate [`worker`] processes, and the writing of shards.
//! - `trainer`: the generation loop, a `Trainer` owning the model, optimizer, replay window
//!   and config, and [`train`], which drives it until the budget is spent.
//! - [`replay`], [`optim`]: the replay window with its targets and losses; SGD with momentum
//!   buffers that survive a resume.
//!
//! Each generation appends a [`crate::report::metrics::MetricsLine`], the type `tafl-lab
//! report` reads back.

pub mod config;
mod ingest;
pub mod lock;
pub mod optim;
pub mod pretrain;
pub mod replay;
mod run_dir;
mod trainer;
mod workers;

use crate::nn::NnError;
use crate::selfplay::shard;
pub use config::{RunConfig, DEFAULT_CONFIG};
pub use run_dir::{effective_config, RunDir, RunState};
use std::path::{Path, PathBuf};
pub use trainer::train;
pub use workers::worker;

/// Errors of a run, one line each, naming the file, the setting or the command-line
/// argument at fault.
#[derive(Debug, thiserror::Error)]
pub enum TrainError {
    /// Reading or writing a file or directory failed.
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    /// A file of the run reads but does not hold what it should (`state.json`, `latest`).
    #[error("{}: {message}", path.display())]
    BadFile { path: PathBuf, message: String },
    /// A run config that does not parse or validate.
    #[error(transparent)]
    ConfigFile(#[from] config::ConfigError),
    /// A setting of a valid config that does not work out: its field, and why.
    #[error("{field}: {message}")]
    Config { field: &'static str, message: String },
    /// A command-line argument, as given (`--minutes -5`), and why it is refused.
    #[error("{argument}: {message}")]
    Argument { argument: String, message: String },
    /// The config could not be written as TOML.
    #[error("config: {0}")]
    WriteConfig(#[from] toml::ser::Error),
    #[error("{} already holds a run (generation {generation}); add --resume to continue it, or choose another --run-dir", dir.display())]
    RunExists { dir: PathBuf, generation: u64 },
    #[error("--init starts a new run, but {} already holds one; resume it without --init", dir.display())]
    InitOnExistingRun { dir: PathBuf },
    #[error("{}: nothing to resume (no state.json)", dir.display())]
    NothingToResume { dir: PathBuf },
    /// A run killed (or out of disk space) while being created: its config but no state.
    #[error("{}: nothing to resume (no state.json: the run's creation was interrupted); start it again without --resume", dir.display())]
    CreationInterrupted { dir: PathBuf },
    /// A new run was asked for without a config.
    #[error("no config")]
    NoConfig,
    /// `pretrain`: a directory without record files.
    #[error("{}: no .csv, .txt or .otg record files in this directory", dir.display())]
    NoRecords { dir: PathBuf },
    /// `pretrain`: every game of the record files was skipped (or there were none).
    #[error("no usable games in {files} file(s): {read} read, {skipped} skipped")]
    NoUsableGames { files: usize, read: usize, skipped: usize },
    /// A thread of the run (`what`) panicked.
    #[error("{what} panicked")]
    Panicked { what: &'static str },
    #[error(transparent)]
    Model(#[from] NnError),
    #[error(transparent)]
    Shard(#[from] shard::ShardError),
    /// An evaluation match could not be played (an agent could not be made).
    #[error(transparent)]
    Agent(#[from] crate::arena::AgentError),
    /// A training batch's loss was NaN or infinite: no step is taken on it.
    #[error("generation {generation}, SGD step {step}: the loss is {loss}; no step taken, the last saved generation is intact (lower train.learning_rate, then --resume)")]
    NonFiniteLoss { generation: u64, step: usize, loss: f64 },
    /// Another trainer holds the run directory ([`lock`]).
    #[error(transparent)]
    Locked(#[from] lock::LockError),
}

impl TrainError {
    /// An I/O error on `path`.
    fn io(path: &Path, source: std::io::Error) -> TrainError {
        TrainError::Io { path: path.to_path_buf(), source }
    }

    /// A refused command-line argument, as given.
    fn argument(argument: impl Into<String>, message: impl Into<String>) -> TrainError {
        TrainError::Argument { argument: argument.into(), message: message.into() }
    }
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

/// Command-line overrides of the budget, and the model a new run starts from.
#[derive(Clone, Debug, Default)]
pub struct Overrides {
    pub generations: Option<u64>,
    pub minutes: Option<f64>,
    /// A new run's generation 0 is this model (e.g. from `pretrain`) instead of a fresh
    /// network; it must be made for the run's variant and have the config's `[net]` size.
    pub init: Option<std::path::PathBuf>,
}

impl Overrides {
    /// Refuses a budget that means nothing: minutes that are not a positive finite number,
    /// or generation 0 (a run is past it before it starts).
    pub fn validate(&self) -> Result<(), TrainError> {
        if let Some(m) = self.minutes {
            if !(m.is_finite() && m > 0.0) {
                return Err(TrainError::argument(format!("--minutes {m}"), "expected a positive number of minutes (fractions such as 0.5 are fine)"));
            }
        }
        if self.generations == Some(0) {
            return Err(TrainError::argument("--generations 0", "expected the generation to stop after, at least 1"));
        }
        Ok(())
    }
}

/// Torch's intra-op threads for a run on `cores` cores: one share per self-play thread.
pub fn torch_threads(cfg: &RunConfig, cores: usize) -> usize {
    (cores / cfg.selfplay.workers(cores)).max(1)
}
