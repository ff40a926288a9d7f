//! Divisible jobs: a match cut into shards that run apart (the tasks of a job array on a
//! cluster, say) and merge into exactly the result of one whole run.
//!
//! Why it works: a game's seed and opening depend on the match seed and the game's index
//! alone ([`super::play_match`]), so any set of indices replays exactly the games a whole run
//! plays at those indices. A shard takes whole pairs of games (the two games of one opening,
//! sides swapped, never split): pair `p` (games `2p` and `2p + 1`) belongs to shard `p mod N`.
//! Shards are counted from 0, as job-array task ids are: `0/4` is the first of four.
//!
//! A merge checks that its parts are one job (the same settings, the same count, every shard
//! once) and that each holds exactly its shard's games, then puts the games back in index
//! order, the order a whole run sums them in, so every figure comes out bit for bit the same.

use super::GameResult;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;
use std::str::FromStr;

/// Shard `index` of `count` (0-based): the pairs of games `p` with `p mod count == index`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl Shard {
    /// Shard `index` of `count`.
    ///
    /// # Errors
    /// `count` is 0 or `index` is not below it (the message says so in words).
    pub fn new(index: usize, count: usize) -> Result<Shard, String> {
        if count == 0 {
            return Err("the shard count must be at least 1".into());
        }
        if index >= count {
            return Err(format!("shard {index} of {count} does not exist (shards are counted from 0: 0/{count} to {}/{count})", count - 1));
        }
        Ok(Shard { index, count })
    }

    /// Whether game `game` of a match is this shard's (both games of a pair are).
    pub fn holds(self, game: usize) -> bool {
        (game / 2) % self.count == self.index
    }

    /// This shard's games of a match of `total` games, in order.
    pub fn games(self, total: usize) -> Vec<usize> {
        (0..total).filter(|&g| self.holds(g)).collect()
    }
}

/// `I/N`, as `--shard` takes it.
impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// Parses `I/N` (0-based: `0/4` to `3/4`).
impl FromStr for Shard {
    type Err = String;

    fn from_str(s: &str) -> Result<Shard, String> {
        let (i, n) = s
            .split_once('/')
            .and_then(|(i, n)| Some((i.trim().parse::<usize>().ok()?, n.trim().parse::<usize>().ok()?)))
            .ok_or_else(|| format!("{s:?}: expected I/N, shard I of N counted from 0, e.g. 0/4"))?;
        Shard::new(i, n).map_err(|m| format!("{s:?}: {m}"))
    }
}

/// Why shards do not merge. Each is one line naming the file (or the shard) at fault.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ShardError {
    /// Nothing to merge.
    #[error("no shards given")]
    Empty,
    /// `file` is not a shard's output.
    #[error("{file}: not a shard's output ({why})")]
    NotShard { file: String, why: String },
    /// `file` cannot be read, or what it holds does not read back (`message` says why).
    #[error("{file}: {message}")]
    Read { file: String, message: String },
    /// `file` was made with other settings than `first` (`what`: the first that differs).
    #[error("{file}: not the same job as {first} (its {what} differs)")]
    Mismatch { file: String, first: String, what: String },
    /// `file` holds a shard that `other` holds too.
    #[error("{file}: shard {shard} again (also in {other})")]
    Duplicate { file: String, other: String, shard: Shard },
    /// No file holds this shard.
    #[error("shard {shard} is missing (merging {given} of {} shards)", shard.count)]
    Missing { shard: Shard, given: usize },
    /// `file` does not hold exactly its shard's games (a truncated or edited file).
    #[error("{file}: {what} does not hold exactly shard {shard}'s games ({detail})")]
    Games { file: String, what: String, shard: Shard, detail: String },
}

/// One shard's output as a merge sees it: where it came from (for messages), its shard, and
/// the settings every shard of the job must share, as JSON (compared key by key).
pub struct Part<'a> {
    pub source: &'a str,
    pub shard: Shard,
    pub settings: &'a Value,
}

/// Checks that `parts` are the shards of one job: the same settings and count, each shard
/// once and none missing. Returns the parts' positions in shard order.
///
/// # Errors
/// The first problem found, naming the file ([`ShardError`]).
pub fn check_parts(parts: &[Part<'_>]) -> Result<Vec<usize>, ShardError> {
    let first = parts.first().ok_or(ShardError::Empty)?;
    let count = first.shard.count;
    let mut by_index: std::collections::BTreeMap<usize, usize> = std::collections::BTreeMap::new();
    for (k, p) in parts.iter().enumerate() {
        Shard::new(p.shard.index, p.shard.count).map_err(|why| ShardError::NotShard { file: p.source.into(), why })?;
        if let Some(what) = first_difference(first.settings, p.settings) {
            return Err(ShardError::Mismatch { file: p.source.into(), first: first.source.into(), what });
        }
        if p.shard.count != count {
            return Err(ShardError::Mismatch { file: p.source.into(), first: first.source.into(), what: "shard count".into() });
        }
        if let Some(&o) = by_index.get(&p.shard.index) {
            return Err(ShardError::Duplicate { file: p.source.into(), other: parts[o].source.into(), shard: p.shard });
        }
        by_index.insert(p.shard.index, k);
    }
    (0..count).map(|index| by_index.get(&index).copied().ok_or(ShardError::Missing { shard: Shard { index, count }, given: parts.len() })).collect()
}

/// The first key (a dotted path) where two settings objects differ; `None` when they are equal.
pub fn first_difference(a: &Value, b: &Value) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for (k, v) in x {
                match y.get(k) {
                    None => return Some(k.clone()),
                    Some(w) => {
                        if let Some(inner) = first_difference(v, w) {
                            return Some(if inner.is_empty() { k.clone() } else { format!("{k}.{inner}") });
                        }
                    }
                }
            }
            y.keys().find(|k| !x.contains_key(*k)).cloned()
        }
        _ if a == b => None,
        _ => Some(String::new()),
    }
}

/// The games of one match of `total` games put back together from its shards' parts (`source`,
/// its shard, its games), in index order. `what` names the match in messages.
///
/// # Errors
/// A part that does not hold exactly its shard's games ([`ShardError::Games`]).
pub fn merge_games(total: usize, what: &str, parts: Vec<(&str, Shard, Vec<GameResult>)>) -> Result<Vec<GameResult>, ShardError> {
    let mut all = Vec::with_capacity(total);
    for (source, shard, games) in parts {
        let want = shard.games(total);
        let have: Vec<usize> = games.iter().map(|g| g.index).collect();
        if have != want {
            let detail = match want.iter().zip(&have).position(|(w, h)| w != h) {
                Some(k) => format!("game {} where game {} belongs", have[k] + 1, want[k] + 1),
                None if have.len() < want.len() => format!("{} of its {} games", have.len(), want.len()),
                None => format!("{} games, not {}", have.len(), want.len()),
            };
            return Err(ShardError::Games { file: source.into(), what: what.into(), shard, detail });
        }
        all.extend(games);
    }
    all.sort_by_key(|g| g.index);
    Ok(all)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn shards_hold_whole_pairs_and_every_game_once() {
        let shards: Vec<Shard> = (0..3).map(|i| Shard::new(i, 3).unwrap()).collect();
        assert_eq!(shards[0].games(13), [0, 1, 6, 7, 12]);
        assert_eq!(shards[1].games(13), [2, 3, 8, 9]);
        assert_eq!(shards[2].games(13), [4, 5, 10, 11]);
        for g in 0..40 {
            assert_eq!(shards.iter().filter(|s| s.holds(g)).count(), 1);
        }
        assert_eq!(Shard::new(0, 1).unwrap().games(3), [0, 1, 2]);
    }

    #[test]
    fn shards_parse_counted_from_zero() {
        assert_eq!("1/4".parse::<Shard>(), Ok(Shard { index: 1, count: 4 }));
        assert_eq!(" 0 / 2 ".parse::<Shard>().unwrap().to_string(), "0/2");
        for bad in ["4/4", "1/0", "1", "a/2", "-1/2", "1/2/3"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
        assert!("4/4".parse::<Shard>().unwrap_err().contains("counted from 0"));
    }

    #[test]
    fn parts_must_be_one_job_with_every_shard_once() {
        let s = |i| Shard { index: i, count: 3 };
        let (x, y) = (json!({"seed": 1, "a": {"spec": "random"}}), json!({"seed": 1, "a": {"spec": "mcts"}}));
        let part = |source, i, settings| Part { source, shard: s(i), settings };
        assert_eq!(check_parts(&[part("c", 2, &x), part("a", 0, &x), part("b", 1, &x)]), Ok(vec![1, 2, 0]));
        assert_eq!(check_parts(&[]), Err(ShardError::Empty));
        let e = check_parts(&[part("a", 0, &x), part("b", 1, &y)]).unwrap_err();
        assert_eq!(e.to_string(), "b: not the same job as a (its a.spec differs)");
        let e = check_parts(&[part("a", 0, &x), part("b", 0, &x)]).unwrap_err();
        assert_eq!(e.to_string(), "b: shard 0/3 again (also in a)");
        let e = check_parts(&[part("a", 0, &x), part("c", 2, &x)]).unwrap_err();
        assert_eq!(e.to_string(), "shard 1/3 is missing (merging 2 of 3 shards)");
        let other = Part { source: "d", shard: Shard { index: 1, count: 2 }, settings: &x };
        assert!(check_parts(&[part("a", 0, &x), other]).unwrap_err().to_string().contains("shard count"));
        assert_eq!(first_difference(&json!({"a": 1}), &json!({"a": 1, "b": 2})), Some("b".into()));
    }
}
