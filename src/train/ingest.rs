//! Shard ingest: how self-play games on disk reach the replay window.
//!
//! Shards come from this process, from earlier (killed) processes and from workers on other
//! machines, so none is trusted: [`ShardGate`] checks each against the run before a game of
//! it is used, and [`fill_window`] rebuilds the window from the newest shards when a run
//! starts or resumes (the window itself is never saved).

use super::replay::ReplayWindow;
use super::{Reporter, RunDir, TrainError};
use crate::rules::Variant;
use crate::selfplay::shard::{self, Shard, StoredGame};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The trainer's only way to read shards: each is checked for integrity and against the run
/// ([`shard::read_checked`]); a bad one is skipped with one warning line naming the file and
/// the reason, and counted once (`skipped_shards`).
pub(super) struct ShardGate {
    variant: Arc<Variant>,
    rejected: HashSet<PathBuf>,
    /// Shards whose games [`fill_window`] put in the window: the generation that collects
    /// them again counts their games but must not add them a second time.
    in_window: HashSet<PathBuf>,
}

impl ShardGate {
    pub(super) fn new(variant: &Arc<Variant>) -> ShardGate {
        ShardGate { variant: variant.clone(), rejected: Default::default(), in_window: Default::default() }
    }

    /// Whether the games of the shard at `path` are in the window already (put there when the
    /// run started or resumed).
    pub(super) fn in_window(&self, path: &Path) -> bool {
        self.in_window.contains(path)
    }

    /// The shard at `path` if it is sound and played by a model no newer than `max_generation`.
    pub(super) fn read(&mut self, path: &Path, max_generation: u64, reporter: &dyn Reporter) -> Option<Shard> {
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
    pub(super) fn skipped(&self) -> usize {
        self.rejected.len()
    }
}

/// The generation of the model that played the shard at `p`, from its name
/// (`gNNNNNN-WRITER-SEQ.shard`).
pub(super) fn generation_of_shard(p: &Path) -> Option<u64> {
    p.file_name()?.to_str()?.strip_prefix('g')?.split('-').next()?.parse().ok()
}

/// Loads the newest shards (of models up to `newest`) into the window, each once; the gate
/// remembers which, so that the resumed generation's reader does not add them again.
pub(super) fn fill_window(rd: &RunDir, window: &mut ReplayWindow, gate: &mut ShardGate, newest: u64, reporter: &dyn Reporter) -> Result<(), TrainError> {
    let mut games: Vec<StoredGame> = Vec::new();
    let mut positions = 0;
    for path in rd.shards()?.into_iter().rev() {
        if positions >= window.capacity() {
            break;
        }
        if let Some(s) = gate.read(&path, newest, reporter) {
            gate.in_window.insert(path);
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
