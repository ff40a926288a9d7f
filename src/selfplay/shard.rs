//! Shard files: finished self-play games as written by trainers and workers.
//!
//! Layout: the magic `TAFLSHRD`, a little-endian u32 format version, the u64 length and the
//! u64 FNV-1a checksum of the payload, then the payload (bincode of [`Shard`]). Files are
//! written atomically; a file that is truncated, altered or of another format fails its
//! check and is reported, never trusted.

use super::{FinishedGame, PlyRecord};
use crate::fsio::atomic_write;
use crate::rules::ruleset::fnv1a;
use crate::rules::{Move, Outcome, Square};
use serde::{Deserialize, Serialize};
use std::path::Path;

const MAGIC: &[u8; 8] = b"TAFLSHRD";
/// Version of the shard format.
pub const SHARD_VERSION: u32 = 1;
const HEADER: usize = 8 + 4 + 8 + 8;

/// A move as (file, rank) of its two squares.
pub type PackedMove = [u8; 4];

pub fn pack(m: Move) -> PackedMove {
    [m.from.file(), m.from.rank(), m.to.file(), m.to.rank()]
}

pub fn unpack(p: PackedMove) -> Move {
    Move::new(Square::new(p[0], p[1]), Square::new(p[2], p[3]))
}

/// One ply as stored.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StoredPly {
    pub mv: PackedMove,
    pub full: bool,
    pub value: f32,
    /// Search policy over the legal moves (empty for fast searches).
    pub policy: Vec<(PackedMove, f32)>,
}

/// One game as stored.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StoredGame {
    pub plies: Vec<StoredPly>,
    pub outcome: Outcome,
}

impl From<&FinishedGame> for StoredGame {
    fn from(g: &FinishedGame) -> StoredGame {
        let plies = g
            .plies
            .iter()
            .map(|p| StoredPly {
                mv: pack(p.mv),
                full: p.full,
                value: p.value,
                policy: p.policy.iter().map(|&(m, x)| (pack(m), x)).collect(),
            })
            .collect();
        StoredGame { plies, outcome: g.outcome }
    }
}

impl StoredGame {
    pub fn to_finished(&self) -> FinishedGame {
        let plies = self
            .plies
            .iter()
            .map(|p| PlyRecord {
                mv: unpack(p.mv),
                full: p.full,
                value: p.value,
                policy: p.policy.iter().map(|&(m, x)| (unpack(m), x)).collect(),
            })
            .collect();
        FinishedGame { plies, outcome: self.outcome }
    }
}

/// The contents of a shard file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Shard {
    /// Rules fingerprint of the variant the games were played in.
    pub rules_fingerprint: u64,
    /// Generation of the model that played them.
    pub model_generation: u64,
    /// Who wrote it (`trainer`, `worker-3`, ...).
    pub writer: String,
    pub games: Vec<StoredGame>,
}

/// Why a shard could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ShardError {
    #[error("{path}: {message}")]
    Io { path: String, message: String },
    #[error("{path}: corrupt shard: {message}")]
    Corrupt { path: String, message: String },
}

/// Writes a shard atomically.
pub fn write(path: &Path, shard: &Shard) -> Result<(), ShardError> {
    let payload = bincode::serialize(shard).expect("shards serialize");
    let mut bytes = Vec::with_capacity(HEADER + payload.len());
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&SHARD_VERSION.to_le_bytes());
    bytes.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    bytes.extend_from_slice(&fnv1a(&payload).to_le_bytes());
    bytes.extend_from_slice(&payload);
    atomic_write(path, &bytes).map_err(|e| ShardError::Io { path: path.display().to_string(), message: e.to_string() })
}

/// Reads and checks a shard.
pub fn read(path: &Path) -> Result<Shard, ShardError> {
    let p = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| ShardError::Io { path: p.clone(), message: e.to_string() })?;
    let corrupt = |message: String| ShardError::Corrupt { path: p.clone(), message };
    if bytes.len() < HEADER || &bytes[..8] != MAGIC {
        return Err(corrupt("not a shard file (bad magic)".into()));
    }
    let version = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes"));
    if version != SHARD_VERSION {
        return Err(corrupt(format!("format version {version}, this build reads {SHARD_VERSION}")));
    }
    let len = u64::from_le_bytes(bytes[12..20].try_into().expect("8 bytes")) as usize;
    let sum = u64::from_le_bytes(bytes[20..28].try_into().expect("8 bytes"));
    let payload = &bytes[HEADER..];
    if payload.len() != len {
        return Err(corrupt(format!("{} payload bytes, header says {len} (truncated?)", payload.len())));
    }
    if fnv1a(payload) != sum {
        return Err(corrupt("checksum mismatch".into()));
    }
    bincode::deserialize(payload).map_err(|e| corrupt(format!("undecodable: {e}")))
}
