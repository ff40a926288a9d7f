//! Shard files: finished self-play games as written by trainers and workers.
//!
//! Layout: the magic `TAFLSHRD`, a little-endian u32 format version, the u64 length and the
//! u64 FNV-1a checksum of the payload, then the payload (bincode of [`Shard`]). Files are
//! written atomically; a file that is truncated, altered or of another format fails its
//! check and is reported, never trusted.
//!
//! A shard that passes its checksum is still checked against the run that reads it
//! ([`read_checked`]): the rules fingerprint must be the run's, the model generation must
//! not be ahead of the run, the writer must be a plain name that agrees with the file name,
//! and every game must replay legally on the run's board to its stored outcome. A shard that
//! fails is rejected with the reason, so a stray file of another run or variant is never
//! trained on (and never panics the reader).
//!
//! Version 2 records each game's slot (its index within the generation, from which its
//! seed derives); version 1 files (no slots) are still read.

use super::{FinishedGame, PlyRecord};
use crate::fsio::atomic_write;
use crate::rules::ruleset::fnv1a;
use crate::rules::{Move, Outcome, Position, Square, Variant};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::sync::Arc;

const MAGIC: &[u8; 8] = b"TAFLSHRD";
/// Version of the shard format.
pub const SHARD_VERSION: u32 = 2;
const HEADER: usize = 8 + 4 + 8 + 8;

/// A move as (file, rank) of its two squares.
pub type PackedMove = [u8; 4];

pub fn pack(m: Move) -> PackedMove {
    [m.from.file(), m.from.rank(), m.to.file(), m.to.rank()]
}

/// The move of packed squares; panics on squares outside the largest board, so unchecked
/// data goes through [`unpack_on`].
pub fn unpack(p: PackedMove) -> Move {
    Move::new(Square::new(p[0], p[1]), Square::new(p[2], p[3]))
}

/// The move of packed squares if both are on a board of side `size`.
pub fn unpack_on(p: PackedMove, size: u8) -> Option<Move> {
    p.iter().all(|&c| c < size).then(|| unpack(p))
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
    /// The game's slot: its index among the games of its generation (the trainer) or among
    /// the writer's games (a worker); its seed derives from it. `None` in version 1 files.
    pub slot: Option<u64>,
}

impl From<&FinishedGame> for StoredGame {
    fn from(g: &FinishedGame) -> StoredGame {
        StoredGame::new(g, None)
    }
}

impl StoredGame {
    /// A game to store, with its slot.
    pub fn new(g: &FinishedGame, slot: Option<u64>) -> StoredGame {
        let plies = g
            .plies
            .iter()
            .map(|p| StoredPly { mv: pack(p.mv), full: p.full, value: p.value, policy: p.policy.iter().map(|&(m, x)| (pack(m), x)).collect() })
            .collect();
        StoredGame { plies, outcome: g.outcome, slot }
    }

    /// The game as played. The squares must be on some board (true of every game that
    /// passed [`Shard::check`]).
    pub fn to_finished(&self) -> FinishedGame {
        let plies = self
            .plies
            .iter()
            .map(|p| PlyRecord { mv: unpack(p.mv), full: p.full, value: p.value, policy: p.policy.iter().map(|&(m, x)| (unpack(m), x)).collect() })
            .collect();
        FinishedGame { plies, outcome: self.outcome, past: None }
    }

    /// Checks that the game replays legally on `variant`'s board to its stored outcome, and
    /// that its numbers are training targets: each root value finite and in [-1, 1]; each
    /// policy over distinct legal moves, its weights finite, in [0, 1] and summing to 1 (within
    /// [`POLICY_SUM_TOLERANCE`]; fast searches store none). A worker on another machine whose
    /// search went wrong must not feed the run a weight of 3e38 or a NaN.
    pub fn check(&self, variant: &Arc<Variant>) -> Result<(), String> {
        let size = variant.geometry.size();
        let shown = |p: PackedMove| format!("{:?}", p);
        let mut pos = Position::start(variant.clone());
        let mut seen = std::collections::HashSet::new();
        for (i, ply) in self.plies.iter().enumerate() {
            let n = i + 1;
            let mv = unpack_on(ply.mv, size).ok_or_else(|| format!("ply {n}: move {} is off the {size}x{size} board", shown(ply.mv)))?;
            if !pos.is_legal(mv) {
                return Err(format!("ply {n}: {mv} is not a legal move"));
            }
            if !(ply.value.is_finite() && ply.value.abs() <= 1.0) {
                return Err(format!("ply {n}: root value {} is not a number in [-1, 1]", ply.value));
            }
            seen.clear();
            let mut sum = 0.0f64;
            for &(m, p) in &ply.policy {
                let pm = unpack_on(m, size).ok_or_else(|| format!("ply {n}: policy move {} is off the {size}x{size} board", shown(m)))?;
                if !pos.is_legal(pm) {
                    return Err(format!("ply {n}: policy move {pm} is not a legal move"));
                }
                if !seen.insert(m) {
                    return Err(format!("ply {n}: policy move {pm} appears twice"));
                }
                if !(p.is_finite() && (0.0..=1.0).contains(&p)) {
                    return Err(format!("ply {n}: policy weight {p} of {pm} is not in [0, 1]"));
                }
                sum += f64::from(p);
            }
            if !ply.policy.is_empty() && (sum - 1.0).abs() > POLICY_SUM_TOLERANCE {
                return Err(format!("ply {n}: policy weights sum to {sum}, not 1"));
            }
            pos.make(mv);
        }
        match pos.outcome() {
            Some(o) if o == self.outcome => Ok(()),
            Some(o) => Err(format!("the moves end in {o:?}, the game records {:?}", self.outcome)),
            None => Err(format!("the game is unfinished after {} plies", self.plies.len())),
        }
    }
}

/// How far a stored policy's weights may sum from 1 (rounding of f32 visit shares).
pub const POLICY_SUM_TOLERANCE: f64 = 1e-3;

/// The largest shard file read (bytes): a generation's games of the largest board fit many
/// times over; a larger file is refused before it is read.
pub const MAX_SHARD_BYTES: u64 = 256 << 20;

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

/// Whether `name` can name a shard's writer: non-empty, at most 100 bytes of letters,
/// digits, `-`, `_` and `.` (it becomes part of file names).
pub fn check_writer(name: &str) -> Result<(), String> {
    let plain = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    if name.is_empty() || name.len() > 100 || !name.chars().all(plain) || name.starts_with('.') {
        return Err(format!("writer name {name:?} is not a plain name (letters, digits, -, _, .)"));
    }
    Ok(())
}

/// The file name of a writer's `seq`-th shard of games by model `generation`.
pub fn file_name(generation: u64, writer: &str, seq: usize) -> String {
    format!("g{generation:06}-{writer}-{seq:04}.shard")
}

/// (generation, writer) from a file name made by [`file_name`].
pub fn parse_file_name(name: &str) -> Option<(u64, &str)> {
    let rest = name.strip_suffix(".shard")?.strip_prefix('g')?;
    let (generation, rest) = rest.split_once('-')?;
    let (writer, seq) = rest.rsplit_once('-')?;
    if generation.is_empty() || !generation.bytes().all(|b| b.is_ascii_digit()) || seq.is_empty() || !seq.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((generation.parse().ok()?, writer))
}

impl Shard {
    /// Checks that the shard belongs to a run of `variant` whose newest model is
    /// `max_generation`: see the module documentation.
    pub fn check(&self, variant: &Arc<Variant>, max_generation: u64) -> Result<(), String> {
        let fp = variant.rules_fingerprint();
        if self.rules_fingerprint != fp {
            return Err(format!("foreign shard: rules fingerprint {:016x}, this run's variant ({}) has {fp:016x}", self.rules_fingerprint, variant.name));
        }
        if self.model_generation > max_generation {
            return Err(format!("foreign shard: played by model generation {}, ahead of this run's newest model ({max_generation})", self.model_generation));
        }
        check_writer(&self.writer).map_err(|e| format!("foreign shard: {e}"))?;
        for (i, g) in self.games.iter().enumerate() {
            g.check(variant).map_err(|e| format!("invalid shard written by {:?}: game {}: {e}", self.writer, i + 1))?;
        }
        Ok(())
    }
}

/// Why a shard could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ShardError {
    #[error("{path}: {message}")]
    Io { path: String, message: String },
    #[error("{path}: corrupt shard: {message}")]
    Corrupt { path: String, message: String },
    /// Intact, but not of this run (or not playable on its board).
    #[error("{path}: {message}")]
    Rejected { path: String, message: String },
}

/// Writes a shard atomically.
pub fn write(path: &Path, shard: &Shard) -> Result<(), ShardError> {
    let payload = bincode::serialize(shard).expect("shards serialize");
    atomic_write(path, &encode(SHARD_VERSION, &payload)).map_err(|e| ShardError::Io { path: path.display().to_string(), message: e.to_string() })
}

/// As [`write`], but only as a new file: `Ok(false)` (nothing written) when `path` exists, so
/// a writer whose name another writer took picks the next name instead of replacing a shard.
pub fn write_new(path: &Path, shard: &Shard) -> Result<bool, ShardError> {
    let payload = bincode::serialize(shard).expect("shards serialize");
    match crate::fsio::atomic_create(path, &encode(SHARD_VERSION, &payload)) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
        Err(e) => Err(ShardError::Io { path: path.display().to_string(), message: e.to_string() }),
    }
}

fn encode(version: u32, payload: &[u8]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(HEADER + payload.len());
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&version.to_le_bytes());
    bytes.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    bytes.extend_from_slice(&fnv1a(payload).to_le_bytes());
    bytes.extend_from_slice(payload);
    bytes
}

/// Version 1: games without slots.
mod v1 {
    use super::StoredPly;
    use crate::rules::Outcome;
    use serde::{Deserialize, Serialize};

    #[derive(Serialize, Deserialize)]
    pub struct StoredGame {
        pub plies: Vec<StoredPly>,
        pub outcome: Outcome,
    }

    #[derive(Serialize, Deserialize)]
    pub struct Shard {
        pub rules_fingerprint: u64,
        pub model_generation: u64,
        pub writer: String,
        pub games: Vec<StoredGame>,
    }

    impl From<Shard> for super::Shard {
        fn from(s: Shard) -> super::Shard {
            super::Shard {
                rules_fingerprint: s.rules_fingerprint,
                model_generation: s.model_generation,
                writer: s.writer,
                games: s.games.into_iter().map(|g| super::StoredGame { plies: g.plies, outcome: g.outcome, slot: None }).collect(),
            }
        }
    }
}

/// Reads a shard and checks its integrity (not whom it belongs to: see [`read_checked`]).
pub fn read(path: &Path) -> Result<Shard, ShardError> {
    let p = path.display().to_string();
    let corrupt = |message: String| ShardError::Corrupt { path: p.clone(), message };
    let io = |e: std::io::Error| ShardError::Io { path: p.clone(), message: e.to_string() };
    let size = std::fs::metadata(path).map_err(io)?.len();
    if size > MAX_SHARD_BYTES {
        return Err(corrupt(format!("{size} bytes, more than a shard may hold ({MAX_SHARD_BYTES})")));
    }
    let bytes = std::fs::read(path).map_err(io)?;
    if bytes.len() < HEADER || &bytes[..8] != MAGIC {
        return Err(corrupt("not a shard file (bad magic)".into()));
    }
    let version = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes"));
    if version != SHARD_VERSION && version != 1 {
        return Err(corrupt(format!("format version {version}, this build reads 1 and {SHARD_VERSION}")));
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
    let undecodable = |e: bincode::Error| corrupt(format!("undecodable: {e}"));
    if version == 1 {
        return bincode::deserialize::<v1::Shard>(payload).map(Shard::from).map_err(undecodable);
    }
    bincode::deserialize(payload).map_err(undecodable)
}

/// Reads a shard and checks that it belongs to a run of `variant` whose newest model is
/// `max_generation` ([`Shard::check`]), and that its file name agrees with its contents.
pub fn read_checked(path: &Path, variant: &Arc<Variant>, max_generation: u64) -> Result<Shard, ShardError> {
    let s = read(path)?;
    let rejected = |message: String| ShardError::Rejected { path: path.display().to_string(), message };
    s.check(variant, max_generation).map_err(rejected)?;
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    if let Some((generation, writer)) = parse_file_name(name) {
        if generation != s.model_generation || writer != s.writer {
            return Err(rejected(format!(
                "foreign shard: the file name says generation {generation} by {writer:?}, the contents generation {} by {:?}",
                s.model_generation, s.writer
            )));
        }
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_1_shards_read_without_slots() {
        let dir = std::env::temp_dir().join(format!("tafl-lab-shard-v1-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("g000000-old-0000.shard");
        let ply = StoredPly { mv: [3, 1, 3, 0], full: true, value: 0.5, policy: vec![([3, 1, 3, 0], 1.0)] };
        let outcome = Outcome::draw(crate::rules::Reason::PlyCap);
        let old =
            v1::Shard { rules_fingerprint: 7, model_generation: 0, writer: "old".into(), games: vec![v1::StoredGame { plies: vec![ply.clone()], outcome }] };
        atomic_write(&path, &encode(1, &bincode::serialize(&old).unwrap())).unwrap();
        let s = read(&path).unwrap();
        assert_eq!((s.rules_fingerprint, s.writer.as_str()), (7, "old"));
        assert_eq!(s.games, vec![StoredGame { plies: vec![ply], outcome, slot: None }]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn file_names_parse_back() {
        assert_eq!(parse_file_name(&file_name(12, "w-alpha-77", 3)), Some((12, "w-alpha-77")));
        assert_eq!(parse_file_name("g000001-trainer-0000.shard"), Some((1, "trainer")));
        assert_eq!(parse_file_name("junk.shard"), None);
        assert!(check_writer("worker-12").is_ok());
        for bad in ["", "a/b", "a b", "..", "x\n"] {
            assert!(check_writer(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn off_board_squares_are_errors_not_panics() {
        let v = Arc::new(Variant::preset("brandubh").expect("preset"));
        for mv in [[8, 8, 8, 7], [200, 1, 3, 1], [3, 1, 3, 255]] {
            let g = StoredGame {
                plies: vec![StoredPly { mv, full: false, value: 0.0, policy: vec![] }],
                outcome: Outcome::draw(crate::rules::Reason::PlyCap),
                slot: Some(0),
            };
            let e = g.check(&v).unwrap_err();
            assert!(e.contains("off the 7x7 board"), "{e}");
        }
        assert!(unpack_on([7, 0, 0, 0], 7).is_none());
    }
}
