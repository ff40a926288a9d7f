//! Divisible jobs: a match cut into shards that run apart (the tasks of a job array on a
//! cluster, say) and merge into exactly the result of one whole run.
//!
//! Why it works: a game's seed and opening depend on the match seed and the game's index
//! alone ([`super::play_match`]), so any set of indices replays exactly the games a whole run
//! plays at those indices. A shard takes whole pairs of games (the two games of one opening,
//! sides swapped, never split): pair `p` (games `2p` and `2p + 1`) belongs to shard `p mod N`.
//! Shards are counted from 0, as job-array task ids are: `0/4` is the first of four.
//!
//! Every kind of job writes the same file, [`ShardFile`]: its kind, its shard, its settings
//! (a typed [`Job`], equal in every shard of one job) and the shard's games of each of the
//! job's lists. One [`merge`] checks that its parts are one job (the same settings, the same
//! count, every shard once) and that each holds exactly its shard's games, then puts the games
//! back in index order, the order a whole run sums them in, so every figure comes out bit for
//! bit the same.

use super::{GameRecord, GameResult};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
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

/// The settings of a divisible job (a match, a balance run, a ladder, a tournament): what
/// every shard of one job shares, typed, and the lists of games the job plays.
pub trait Job: Serialize + DeserializeOwned + PartialEq {
    /// The job's kind, written into its shard files: a merge refuses a file of another kind.
    const KIND: &'static str;

    /// The job's lists of games in order (a match has one; a balance run one per row; a
    /// ladder one per checkpoint and one per match; a tournament one per pairing): a name for
    /// messages, and how many games the whole job plays in that list.
    fn lists(&self) -> Vec<(String, usize)>;
}

/// The name of a shard's file in its output folder (`balance --shard`, `balance --ladder
/// --shard`); `match --shard` prints the same object as the `shard` field of its JSON.
pub const SHARD_FILE: &str = "shard.json";

/// One shard's share of a job, the same file for every kind: the job's kind and settings, the
/// shard, and the shard's games of each of the job's lists ([`Job::lists`]), in index order.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(bound = "S: Job")]
pub struct ShardFile<S> {
    pub kind: String,
    pub shard: Shard,
    pub settings: S,
    pub games: Vec<Vec<GameRecord>>,
}

impl<S: Job> ShardFile<S> {
    /// The file of `shard` of the job `settings`, with the shard's games of each list.
    pub fn new<'a>(shard: Shard, settings: S, games: impl IntoIterator<Item = &'a [GameResult]>) -> ShardFile<S> {
        let games = games.into_iter().map(|list| list.iter().map(GameRecord::of).collect()).collect();
        ShardFile { kind: S::KIND.to_string(), shard, settings, games }
    }

    /// Reads a shard file's JSON; `source` names it in messages.
    ///
    /// # Errors
    /// Not JSON, a shard of another kind of job, or fields that do not read back
    /// ([`ShardError::NotShard`]).
    pub fn from_json(source: &str, value: Value) -> Result<ShardFile<S>, ShardError> {
        let not_shard = |why: String| ShardError::NotShard { file: source.to_string(), why };
        match kind_of(&value) {
            Some(k) if k == S::KIND => {}
            Some(k) => return Err(not_shard(format!("a shard of a {k}, not of a {}", S::KIND))),
            None => return Err(not_shard("no kind field".into())),
        }
        serde_json::from_value(value).map_err(|e| not_shard(e.to_string()))
    }
}

/// The `kind` of a shard file's JSON, if it has one.
pub fn kind_of(value: &Value) -> Option<&str> {
    value.get("kind").and_then(Value::as_str)
}

/// Reads a shard file's JSON text; `source` names it in messages.
///
/// # Errors
/// Text that is not JSON ([`ShardError::NotShard`]).
pub fn parse(source: &str, text: &str) -> Result<Value, ShardError> {
    serde_json::from_str(text.trim()).map_err(|e| ShardError::NotShard { file: source.to_string(), why: format!("not JSON: {e}") })
}

/// A whole job put back together from its shards' files (`source`, file): its settings and
/// the games of each of its lists, in index order, exactly as one whole run plays them.
///
/// # Errors
/// The first problem found, naming the file ([`ShardError`]): parts of different jobs (the
/// first setting that differs), a shard count that differs, a shard given twice or missing, or
/// a part without exactly its shard's games of some list.
pub fn merge<S: Job>(parts: Vec<(String, ShardFile<S>)>) -> Result<(S, Vec<Vec<GameRecord>>), ShardError> {
    let first = parts.first().ok_or(ShardError::Empty)?;
    let count = first.1.shard.count;
    let mut by_index: BTreeMap<usize, usize> = BTreeMap::new();
    for (k, (source, p)) in parts.iter().enumerate() {
        Shard::new(p.shard.index, p.shard.count).map_err(|why| ShardError::NotShard { file: source.clone(), why })?;
        if p.settings != first.1.settings {
            let (a, b) = (serde_json::to_value(&first.1.settings).ok(), serde_json::to_value(&p.settings).ok());
            let what = a.zip(b).and_then(|(a, b)| first_difference(&a, &b)).filter(|w| !w.is_empty()).unwrap_or_else(|| "settings".into());
            return Err(ShardError::Mismatch { file: source.clone(), first: first.0.clone(), what });
        }
        if p.shard.count != count {
            return Err(ShardError::Mismatch { file: source.clone(), first: first.0.clone(), what: "shard count".into() });
        }
        if let Some(&o) = by_index.get(&p.shard.index) {
            return Err(ShardError::Duplicate { file: source.clone(), other: parts[o].0.clone(), shard: p.shard });
        }
        by_index.insert(p.shard.index, k);
    }
    if let Some(index) = (0..count).find(|i| !by_index.contains_key(i)) {
        return Err(ShardError::Missing { shard: Shard { index, count }, given: parts.len() });
    }
    let lists = first.1.settings.lists();
    for (source, p) in &parts {
        if p.games.len() != lists.len() {
            let detail = format!("{} lists of games, not {}", p.games.len(), lists.len());
            return Err(ShardError::Games { file: source.clone(), what: format!("the {}", S::KIND), shard: p.shard, detail });
        }
    }
    // Every shard once (checked above), taken in shard order, so that of several bad parts the
    // lowest shard is the one named.
    let mut ordered = parts;
    ordered.sort_by_key(|(_, p)| p.shard.index);
    let mut merged = Vec::with_capacity(lists.len());
    for (n, (what, total)) in lists.iter().enumerate() {
        let mut all = Vec::with_capacity(*total);
        for (source, p) in &mut ordered {
            let games = std::mem::take(&mut p.games[n]);
            check_games(source, what, p.shard, *total, &games)?;
            all.extend(games);
        }
        all.sort_by_key(|g| g.index);
        merged.push(all);
    }
    let (_, first) = ordered.swap_remove(0);
    Ok((first.settings, merged))
}

/// Checks that `games` (from `source`, of the list `what` of `total` games) are exactly
/// `shard`'s games of the list, in order.
fn check_games(source: &str, what: &str, shard: Shard, total: usize, games: &[GameRecord]) -> Result<(), ShardError> {
    let want = shard.games(total);
    let have: Vec<usize> = games.iter().map(|g| g.index).collect();
    if have == want {
        return Ok(());
    }
    let detail = match want.iter().zip(&have).position(|(w, h)| w != h) {
        Some(k) => format!("game {} where game {} belongs", have[k] + 1, want[k] + 1),
        None if have.len() < want.len() => format!("{} of its {} games", have.len(), want.len()),
        None => format!("{} games, not {}", have.len(), want.len()),
    };
    Err(ShardError::Games { file: source.into(), what: what.into(), shard, detail })
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
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (v, w))| first_difference(v, w).map(|inner| if inner.is_empty() { format!("{}", i + 1) } else { format!("{}.{inner}", i + 1) })),
        _ if a == b => None,
        _ => Some(String::new()),
    }
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

    /// A job of two lists of 4 and 6 games, as a test sees it.
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    struct Two {
        seed: u64,
        agents: Vec<String>,
    }

    impl Job for Two {
        const KIND: &'static str = "test";
        fn lists(&self) -> Vec<(String, usize)> {
            vec![("list 1".into(), 4), ("list 2".into(), 6)]
        }
    }

    fn record(index: usize) -> GameRecord {
        GameRecord { index, a_side: crate::rules::Side::Attackers, outcome: None, fault: None, ending: String::new(), plies: 0, moves: String::new() }
    }

    fn part(source: &str, i: usize, count: usize, settings: &Two) -> (String, ShardFile<Two>) {
        let shard = Shard { index: i, count };
        let games = [4, 6].iter().map(|&n| shard.games(n).into_iter().map(record).collect()).collect();
        (source.to_string(), ShardFile { kind: "test".into(), shard, settings: settings.clone(), games })
    }

    #[test]
    fn parts_of_one_job_merge_into_its_lists_in_index_order() {
        let x = Two { seed: 1, agents: vec!["random".into(), "mcts".into()] };
        let (settings, lists) = merge(vec![part("c", 2, 3, &x), part("a", 0, 3, &x), part("b", 1, 3, &x)]).unwrap();
        assert_eq!(settings, x);
        let indices: Vec<Vec<usize>> = lists.iter().map(|l| l.iter().map(|g| g.index).collect()).collect();
        assert_eq!(indices, [vec![0, 1, 2, 3], vec![0, 1, 2, 3, 4, 5]]);
    }

    #[test]
    fn parts_must_be_one_job_with_every_shard_once() {
        let x = Two { seed: 1, agents: vec!["random".into(), "mcts".into()] };
        let y = Two { seed: 1, agents: vec!["random".into(), "az".into()] };
        assert_eq!(merge::<Two>(vec![]).unwrap_err(), ShardError::Empty);
        let e = merge(vec![part("a", 0, 3, &x), part("b", 1, 3, &y)]).unwrap_err();
        assert_eq!(e.to_string(), "b: not the same job as a (its agents.2 differs)");
        let e = merge(vec![part("a", 0, 3, &x), part("b", 0, 3, &x)]).unwrap_err();
        assert_eq!(e.to_string(), "b: shard 0/3 again (also in a)");
        let e = merge(vec![part("a", 0, 3, &x), part("c", 2, 3, &x)]).unwrap_err();
        assert_eq!(e.to_string(), "shard 1/3 is missing (merging 2 of 3 shards)");
        let e = merge(vec![part("a", 0, 3, &x), part("d", 1, 2, &x)]).unwrap_err();
        assert!(e.to_string().contains("shard count"), "{e}");
        let mut cut = part("b", 1, 2, &x);
        cut.1.games[1].pop();
        let e = merge(vec![part("a", 0, 2, &x), cut]).unwrap_err();
        assert_eq!(e.to_string(), "b: list 2 does not hold exactly shard 1/2's games (1 of its 2 games)");
        assert_eq!(first_difference(&json!({"a": 1}), &json!({"a": 1, "b": 2})), Some("b".into()));
    }

    #[test]
    fn a_file_of_another_kind_is_refused_by_name() {
        let x = Two { seed: 1, agents: vec![] };
        let mut v = serde_json::to_value(&part("a", 0, 1, &x).1).unwrap();
        assert!(ShardFile::<Two>::from_json("a", v.clone()).is_ok());
        v["kind"] = json!("ladder");
        let e = ShardFile::<Two>::from_json("a", v).unwrap_err();
        assert_eq!(e.to_string(), "a: not a shard's output (a shard of a ladder, not of a test)");
        assert!(parse("b", "{").unwrap_err().to_string().starts_with("b: not a shard's output (not JSON"));
    }
}
