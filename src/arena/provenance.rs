//! What a result measured: per agent, its canonical spec and the sha256 of every model file
//! it loads, computed once per agent (not per game) and written into the JSON of `match`,
//! `tournament`, `balance` and `balance --ladder`. A spec names a path; the hash names the
//! weights, so a model replaced in place under the same path is told apart.

use super::agent::{AgentError, AgentSpec};
use crate::nn::checkpoint::{self, ModelFile};
use serde::{Deserialize, Serialize};

/// One agent of a result: its spec ([`AgentSpec::canonical`]) and the model files it loads
/// (none for `random`, `mcts` and external engines).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentRecord {
    pub spec: String,
    pub models: Vec<ModelFile>,
}

impl AgentRecord {
    /// The record of `spec`: its canonical text, and its model resolved as the loader
    /// resolves it ([`checkpoint::resolve`]) and hashed.
    ///
    /// # Errors
    /// A model that does not resolve or cannot be read (one line naming the file).
    pub fn of(spec: &AgentSpec) -> Result<AgentRecord, AgentError> {
        let models = spec.model.iter().map(|p| checkpoint::model_file(p)).collect::<Result<_, _>>()?;
        Ok(AgentRecord { spec: spec.to_string(), models })
    }

    /// Hashes the agent's model files again and says which one changed since the record was
    /// made (a model replaced while games were played: those games mixed weights).
    ///
    /// # Errors
    /// One line (without the spec) naming the file and both hashes, or why it can no longer
    /// be read.
    pub fn check_unchanged(&self, spec: &AgentSpec) -> Result<(), String> {
        let now = AgentRecord::of(spec).map_err(|e| format!("after its games: {e}"))?;
        match self.first_change(&now) {
            None => Ok(()),
            Some(change) => Err(format!("{change} while its games were played; the result mixes weights, so it is not kept (rerun)")),
        }
    }

    /// How `now` differs from this record, in words (`None` when the spec and every model
    /// file and hash are the same).
    pub fn first_change(&self, now: &AgentRecord) -> Option<String> {
        if self.spec != now.spec {
            return Some(format!("spec {} is now {}", self.spec, now.spec));
        }
        if self.models.len() != now.models.len() {
            return Some(format!("loads {} model files, now {}", self.models.len(), now.models.len()));
        }
        self.models.iter().zip(&now.models).find(|(a, b)| a != b).map(|(a, b)| {
            if a.path != b.path {
                format!("model {} (sha256 {}) now resolves to {} (sha256 {})", a.path, short(&a.sha256), b.path, short(&b.sha256))
            } else {
                format!("model {} changed (sha256 {} before, {} now)", a.path, short(&a.sha256), short(&b.sha256))
            }
        })
    }
}

/// The first 12 hex digits of a hash, for messages.
pub fn short(sha: &str) -> &str {
    &sha[..sha.len().min(12)]
}
