//! An evaluation cache: a network called once per position, however many trees and games
//! reach it.
//!
//! Why: in self-play the same position is evaluated again and again. Tafl moves commute
//! (two quiet moves in either order reach one position), so a tree expands transpositions as
//! separate nodes; and games with the same seedless openings meet in the same positions. A
//! network call is by far the dearest part of a simulation, so each repeat answered from a
//! table is a simulation nearly for free.
//!
//! Exactness: the cache is keyed by [`Evaluator::cache_key`], which the evaluator defines so
//! that equal keys mean equal inputs (for the network: the Zobrist hash, which covers board,
//! side to move and rules, plus the ply and the repetition flag that the input planes also
//! show; see `nn::evaluator`). An evaluator that returns `None` (random rollouts) is never
//! cached. A hit returns the stored evaluation bit for bit; an entry whose move count differs
//! from the request's (a 64-bit key collision) is treated as a miss.
//!
//! The table is direct-mapped with a fixed number of entries (a power of two): a new entry
//! replaces whatever held its slot, so memory is bounded and the behaviour is deterministic.
//! Within one batch, requests with the same key are sent to the evaluator once
//! ([`CacheStats::duplicates`]).
//!
//! The lookup is split from the insertion ([`EvalCache::plan`], then [`EvalCache::complete`])
//! so that a batch can be evaluated in the background between the two (see
//! [`Evaluator::start`]).

use super::evaluator::{EvalRequest, Evaluation, Evaluator};

/// Counters of a cache.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Positions asked for.
    pub lookups: u64,
    /// Answered from the table.
    pub hits: u64,
    /// Answered by an earlier request of the same batch (evaluated once for both).
    pub duplicates: u64,
    /// Sent to the evaluator.
    pub misses: u64,
}

impl CacheStats {
    /// The share of lookups that did not need the evaluator (hits and in-batch duplicates).
    pub fn hit_rate(&self) -> f64 {
        if self.lookups == 0 {
            return 0.0;
        }
        (self.hits + self.duplicates) as f64 / self.lookups as f64
    }

    /// Adds another run's counters.
    pub fn add(&mut self, other: &CacheStats) {
        self.lookups += other.lookups;
        self.hits += other.hits;
        self.duplicates += other.duplicates;
        self.misses += other.misses;
    }
}

struct Entry {
    key: u64,
    eval: Evaluation,
}

/// Where the evaluation of one request of a batch comes from.
enum Source {
    /// Found in the table.
    Cached(Evaluation),
    /// Result `i` of the evaluator's batch.
    Evaluated(usize),
}

/// The lookups of one batch: which requests go to the evaluator (see [`EvalCache::plan`]).
pub struct Plan {
    sources: Vec<Source>,
    /// Per evaluator request: its key (if cacheable) and its move count.
    sent: Vec<(Option<u64>, usize)>,
    /// Indices (into the batch) of the requests sent to the evaluator, in order.
    pub to_evaluate: Vec<usize>,
}

/// A bounded table of evaluations by key. See the module documentation.
pub struct EvalCache {
    slots: Vec<Option<Entry>>,
    stats: CacheStats,
}

impl EvalCache {
    /// Entries a self-play run holds (about 10 MB for brandubh, 30 MB for copenhagen).
    pub const DEFAULT_ENTRIES: usize = 1 << 15;

    /// A table of `entries` slots, rounded up to a power of two; 0 disables caching (every
    /// request is a miss, though in-batch duplicates are still evaluated once).
    pub fn new(entries: usize) -> EvalCache {
        let n = if entries == 0 { 0 } else { entries.next_power_of_two() };
        EvalCache { slots: (0..n).map(|_| None).collect(), stats: CacheStats::default() }
    }

    pub fn stats(&self) -> CacheStats {
        self.stats
    }

    /// Number of slots.
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    fn slot(&self, key: u64) -> Option<usize> {
        // The low bits of a Zobrist-derived key are as random as any.
        (!self.slots.is_empty()).then(|| (key as usize) & (self.slots.len() - 1))
    }

    fn get(&self, key: u64, moves: usize) -> Option<&Evaluation> {
        let e = self.slots[self.slot(key)?].as_ref()?;
        (e.key == key && e.eval.priors.len() == moves).then_some(&e.eval)
    }

    fn insert(&mut self, key: u64, eval: &Evaluation) {
        if let Some(i) = self.slot(key) {
            self.slots[i] = Some(Entry { key, eval: eval.clone() });
        }
    }

    /// How many requests of `batch` [`EvalCache::plan`] would send to the evaluator (each key
    /// once), without counting the lookups: a driver that wants full network batches gathers
    /// leaves until this reaches its batch size.
    pub fn misses(&self, batch: &[EvalRequest<'_>], evaluator: &dyn Evaluator) -> usize {
        // The keys not in the table, each counted once (sorted and deduplicated: cheaper than
        // hashing keys that are hashes already).
        let mut keys: Vec<(u64, usize)> = Vec::with_capacity(batch.len());
        let mut uncacheable = 0;
        for r in batch {
            match evaluator.cache_key(r.position) {
                Some(k) if self.get(k, r.moves.len()).is_none() => keys.push((k, r.moves.len())),
                Some(_) => {}
                None => uncacheable += 1,
            }
        }
        keys.sort_unstable();
        keys.dedup();
        keys.len() + uncacheable
    }

    /// Looks up every request of `batch` (keys from `evaluator`), and plans which ones the
    /// evaluator must compute: [`Plan::to_evaluate`], each key at most once.
    pub fn plan(&mut self, batch: &[EvalRequest<'_>], evaluator: &dyn Evaluator) -> Plan {
        let mut plan = Plan { sources: Vec::with_capacity(batch.len()), sent: Vec::new(), to_evaluate: Vec::new() };
        // Keys sent in this batch, for duplicates: (key, move count, evaluator index).
        let mut batch_keys: std::collections::HashMap<u64, (usize, usize)> = std::collections::HashMap::new();
        for (i, r) in batch.iter().enumerate() {
            self.stats.lookups += 1;
            let key = evaluator.cache_key(r.position);
            let n = r.moves.len();
            if let Some(k) = key {
                if let Some(e) = self.get(k, n).cloned() {
                    self.stats.hits += 1;
                    plan.sources.push(Source::Cached(e));
                    continue;
                }
                if let Some(&(m, at)) = batch_keys.get(&k) {
                    if m == n {
                        self.stats.duplicates += 1;
                        plan.sources.push(Source::Evaluated(at));
                        continue;
                    }
                }
                batch_keys.insert(k, (n, plan.to_evaluate.len()));
            }
            self.stats.misses += 1;
            plan.sources.push(Source::Evaluated(plan.to_evaluate.len()));
            plan.sent.push((key, n));
            plan.to_evaluate.push(i);
        }
        plan
    }

    /// Stores the evaluator's results (`evals`, one per [`Plan::to_evaluate`]) and returns
    /// one evaluation per request of the planned batch, in order.
    ///
    /// # Panics
    /// If `evals` does not match the plan.
    pub fn complete(&mut self, plan: Plan, evals: Vec<Evaluation>) -> Vec<Evaluation> {
        assert_eq!(evals.len(), plan.sent.len(), "one evaluation per planned request");
        for (&(key, n), e) in plan.sent.iter().zip(&evals) {
            assert_eq!(e.priors.len(), n, "one prior per legal move");
            if let Some(k) = key {
                self.insert(k, e);
            }
        }
        plan.sources
            .into_iter()
            .map(|s| match s {
                Source::Cached(e) => e,
                Source::Evaluated(i) => evals[i].clone(),
            })
            .collect()
    }

    /// Evaluates `batch` through the cache with one evaluator call (none when every
    /// request is answered from the table).
    pub fn evaluate(&mut self, batch: &[EvalRequest<'_>], evaluator: &mut dyn Evaluator) -> Vec<Evaluation> {
        let plan = self.plan(batch, evaluator);
        let evals = if plan.to_evaluate.is_empty() {
            Vec::new()
        } else {
            let reqs: Vec<EvalRequest<'_>> = plan.to_evaluate.iter().map(|&i| batch[i]).collect();
            evaluator.evaluate(&reqs)
        };
        self.complete(plan, evals)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::{Position, Variant};
    use std::sync::Arc;

    /// Priors and value from the position's hash; counts the positions it is asked for.
    struct Counting {
        calls: usize,
        positions: usize,
        keyed: bool,
    }

    impl Evaluator for Counting {
        fn evaluate(&mut self, batch: &[EvalRequest<'_>]) -> Vec<Evaluation> {
            self.calls += 1;
            self.positions += batch.len();
            batch
                .iter()
                .map(|r| {
                    let h = r.position.hash();
                    let raw: Vec<f32> = (0..r.moves.len()).map(|i| 1.0 + ((h >> (i % 60)) & 7) as f32).collect();
                    let total: f32 = raw.iter().sum();
                    let w = (h % 100) as f32 / 100.0;
                    Evaluation { priors: raw.iter().map(|p| p / total).collect(), wdl: [w, 0.0, 1.0 - w] }
                })
                .collect()
        }
        fn cache_key(&self, p: &Position) -> Option<u64> {
            self.keyed.then(|| p.hash() ^ u64::from(p.ply()).rotate_left(32))
        }
    }

    fn positions() -> Vec<(Position, Vec<crate::rules::Move>)> {
        let v = Arc::new(Variant::preset("brandubh").expect("preset"));
        let start = Position::start(v);
        let mut out = Vec::new();
        for mv in start.legal_moves().into_iter().take(6) {
            let mut p = start.clone();
            p.make(mv);
            let moves = p.legal_moves();
            out.push((p, moves));
        }
        out
    }

    fn requests(ps: &[(Position, Vec<crate::rules::Move>)]) -> Vec<EvalRequest<'_>> {
        ps.iter().map(|(p, m)| EvalRequest { position: p, moves: m }).collect()
    }

    #[test]
    fn cached_evaluations_equal_uncached_ones_and_are_counted() {
        let ps = positions();
        // The batch holds every position twice.
        let mut twice = requests(&ps);
        twice.extend(requests(&ps));
        let want = Counting { calls: 0, positions: 0, keyed: true }.evaluate(&twice);
        let mut ev = Counting { calls: 0, positions: 0, keyed: true };
        let mut cache = EvalCache::new(1024);
        assert_eq!(cache.evaluate(&twice, &mut ev), want);
        assert_eq!((ev.calls, ev.positions), (1, ps.len()), "duplicates in a batch are evaluated once");
        assert_eq!(cache.stats(), CacheStats { lookups: 2 * ps.len() as u64, hits: 0, duplicates: ps.len() as u64, misses: ps.len() as u64 });
        // Again: all from the table, no evaluator call.
        assert_eq!(cache.evaluate(&twice, &mut ev), want);
        assert_eq!(ev.calls, 1);
        assert_eq!(cache.stats().hits, 2 * ps.len() as u64);
        assert!((cache.stats().hit_rate() - 0.75).abs() < 1e-12);
    }

    /// `misses` counts what `plan` would send, without counting lookups: duplicates once,
    /// entries in the table not at all, every request of an unkeyed evaluator.
    #[test]
    fn misses_are_what_a_plan_would_send() {
        let ps = positions();
        let mut twice = requests(&ps);
        twice.extend(requests(&ps));
        let (mut ev, mut cache) = (Counting { calls: 0, positions: 0, keyed: true }, EvalCache::new(1024));
        assert_eq!(cache.misses(&twice, &ev), ps.len());
        assert_eq!(cache.stats(), CacheStats::default(), "misses counts no lookups");
        cache.evaluate(&twice[..2], &mut ev);
        assert_eq!(cache.misses(&twice, &ev), ps.len() - 2);
        assert_eq!(cache.misses(&twice, &ev), cache.plan(&twice, &ev).to_evaluate.len());
        let unkeyed = Counting { calls: 0, positions: 0, keyed: false };
        assert_eq!(cache.misses(&twice, &unkeyed), twice.len());
    }

    #[test]
    fn unkeyed_evaluators_and_a_zero_size_table_are_not_cached() {
        let ps = positions();
        let reqs = requests(&ps);
        let mut ev = Counting { calls: 0, positions: 0, keyed: false };
        let mut cache = EvalCache::new(1024);
        cache.evaluate(&reqs, &mut ev);
        cache.evaluate(&reqs, &mut ev);
        assert_eq!(ev.positions, 2 * ps.len());
        assert_eq!(cache.stats().hit_rate(), 0.0);
        let mut ev = Counting { calls: 0, positions: 0, keyed: true };
        let mut off = EvalCache::new(0);
        let want = Counting { calls: 0, positions: 0, keyed: true }.evaluate(&reqs);
        assert_eq!(off.evaluate(&reqs, &mut ev), want);
        assert_eq!(off.evaluate(&reqs, &mut ev), want);
        assert_eq!(ev.positions, 2 * ps.len());
    }

    #[test]
    fn a_full_table_replaces_and_stays_bounded() {
        let ps = positions();
        let reqs = requests(&ps);
        let mut ev = Counting { calls: 0, positions: 0, keyed: true };
        let mut cache = EvalCache::new(1);
        let want = Counting { calls: 0, positions: 0, keyed: true }.evaluate(&reqs);
        for _ in 0..3 {
            assert_eq!(cache.evaluate(&reqs, &mut ev), want);
        }
        assert_eq!(cache.capacity(), 1);
        // Only the last position of a batch survives in a one-slot table.
        assert_eq!(cache.stats().hits, 2);
    }
}
