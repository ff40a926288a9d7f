//! The training loop: generations of self-play, training on a replay window, a checkpoint,
//! and an evaluation, all in one run directory that any process can resume.
//!
//! The parts, each in its own module because each has its own reason to change:
//! - [`config`]: the run config (TOML), validated, and what it derives (search settings, the
//!   evaluation agent, the learning-rate schedule).
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
use std::path::Path;
pub use trainer::train;
pub use workers::worker;

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
                return Err(TrainError::Run(format!("--minutes {m}: expected a positive number of minutes (fractions such as 0.5 are fine)")));
            }
        }
        if self.generations == Some(0) {
            return Err(TrainError::Run("--generations 0: expected the generation to stop after, at least 1".into()));
        }
        Ok(())
    }
}

/// Torch's intra-op threads for a run on `cores` cores: one share per self-play thread.
pub fn torch_threads(cfg: &RunConfig, cores: usize) -> usize {
    (cores / cfg.selfplay.workers(cores)).max(1)
}
