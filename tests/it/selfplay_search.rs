//! Self-play's use of the search (the evaluation cache, batches overlapped with the
//! evaluator, abandoning a run) and the guard of an arena agent: the search tests that need the
//! `tafl-lab` package; the rest are in crates/tafl-search/tests/search.rs.

use crate::common;

use common::guard_game::{brandubh_after, loses_within, unlimited, BEFORE_D2_B2};
use common::variant;
use tafl_lab::rules::{Move, Position, Side};
use tafl_lab::search::solver::{wins_within_limit, OneSided};
use tafl_lab::search::{EvalRequest, Evaluation, Evaluator, Ticket};

/// A batch of positions with their histories.
type Batch = Vec<(Position, Vec<Move>)>;

/// A made-up network whose priors and value depend on the position only (its hash and ply),
/// counting the positions it is asked for. `deferred`: batches are taken by `start` (copied)
/// and evaluated only at `finish`, like a network on a thread of its own; `keyed`: it allows
/// caching.
struct Made {
    keyed: bool,
    deferred: bool,
    positions: usize,
    queue: std::collections::VecDeque<(u64, Batch)>,
    next: u64,
}

impl Made {
    fn new(keyed: bool, deferred: bool) -> Made {
        Made { keyed, deferred, positions: 0, queue: Default::default(), next: 0 }
    }
}

impl Evaluator for Made {
    fn evaluate(&mut self, batch: &[EvalRequest<'_>]) -> Vec<Evaluation> {
        self.positions += batch.len();
        batch
            .iter()
            .map(|r| {
                let h = r.position.hash() ^ u64::from(r.position.ply()).wrapping_mul(0x9E37_79B9_7F4A_7C15);
                let raw: Vec<f32> = (0..r.moves.len()).map(|i| 1.0 + ((h >> (i % 61)) & 15) as f32).collect();
                let total: f32 = raw.iter().sum();
                let v = (h % 1001) as f32 / 1000.0 * 1.6 - 0.8;
                let wdl = if v >= 0.0 { [v, 1.0 - v, 0.0] } else { [0.0, 1.0 + v, -v] };
                Evaluation { priors: raw.iter().map(|x| x / total).collect(), wdl }
            })
            .collect()
    }
    fn cache_key(&self, p: &Position) -> Option<u64> {
        self.keyed.then(|| p.hash() ^ u64::from(p.ply()).wrapping_mul(0x9E37_79B9_7F4A_7C15))
    }
    fn start(&mut self, batch: &[EvalRequest<'_>]) -> Ticket {
        if !self.deferred {
            return Ticket::ready(self.evaluate(batch));
        }
        self.next += 1;
        self.queue.push_back((self.next, batch.iter().map(|r| (r.position.clone(), r.moves.to_vec())).collect()));
        Ticket::pending(self.next)
    }
    fn finish(&mut self, ticket: Ticket) -> Vec<Evaluation> {
        let id = match ticket.into_ready() {
            Ok(e) => return e,
            Err(id) => id,
        };
        let (first, batch) = self.queue.pop_front().expect("a batch was started");
        assert_eq!(first, id, "tickets are redeemed in the order they were started");
        let reqs: Vec<EvalRequest<'_>> = batch.iter().map(|(p, m)| EvalRequest { position: p, moves: m }).collect();
        self.evaluate(&reqs)
    }
}

fn selfplay_games(ev: &mut dyn Evaluator, games: u64) -> (Vec<(u64, Vec<Move>)>, tafl_lab::selfplay::Progress) {
    use tafl_lab::selfplay::{self, game_seed, SelfPlayConfig};
    let v = variant("brandubh");
    let mut cfg = SelfPlayConfig { games_in_flight: 6, positions_per_call: 48, fast_probability: 0.5, fast_sims: 4, ..SelfPlayConfig::default() };
    cfg.search.sims = 16;
    cfg.search.leaves_per_tree = 4;
    let mut out = Vec::new();
    let mut next = 0;
    let p = selfplay::play_games(
        &v,
        &cfg,
        ev,
        &mut |_| {
            next += 1;
            (next <= games).then(|| (next - 1, game_seed(3, 0, next - 1)))
        },
        &mut |k, g| out.push((k, g.plies.iter().map(|p| p.mv).collect())),
        &mut |_| true,
    );
    out.sort();
    (out, p)
}

#[test]
fn selfplay_overlapped_with_the_evaluator_plays_the_same_games() {
    let (want, p) = selfplay_games(&mut Made::new(false, false), 10);
    let mut deferred = Made::new(false, true);
    let (got, q) = selfplay_games(&mut deferred, 10);
    assert_eq!(want.len(), 10);
    assert_eq!(got, want);
    assert_eq!((p.evaluations, p.batches), (q.evaluations, q.batches));
    assert!(deferred.queue.is_empty());
}

#[test]
fn selfplay_cache_answers_repeats_without_changing_the_games() {
    let mut plain = Made::new(false, false);
    let (want, p) = selfplay_games(&mut plain, 10);
    let mut keyed = Made::new(true, true);
    let (got, q) = selfplay_games(&mut keyed, 10);
    assert_eq!(got, want, "cached evaluations are the evaluator's own");
    assert_eq!(p.evaluations, q.evaluations, "the searches received as many evaluations");
    // Without a key nothing is cached; with one, repeats never reach the evaluator.
    assert_eq!(p.cache.misses as usize, plain.positions);
    assert_eq!(p.cache.hit_rate(), 0.0);
    let c = q.cache;
    assert_eq!(c.lookups, q.evaluations);
    assert_eq!(c.hits + c.duplicates + c.misses, c.lookups);
    assert_eq!(c.misses as usize, keyed.positions);
    assert!(c.hits > 0 && keyed.positions < plain.positions, "{c:?}");
}

#[test]
fn abandoned_selfplay_leaves_no_batch_in_flight() {
    use tafl_lab::selfplay::{self, SelfPlayConfig};
    let v = variant("brandubh");
    let cfg = SelfPlayConfig { games_in_flight: 4, positions_per_call: 32, ..SelfPlayConfig::default() };
    let mut ev = Made::new(true, true);
    let mut steps = 0;
    let p = selfplay::play(&v, &cfg, &mut ev, 1, &mut |_| true, &mut |_| {}, &mut |_| {
        steps += 1;
        steps < 5
    });
    assert_eq!(steps, 5);
    assert!(ev.queue.is_empty(), "every started batch was collected");
    assert_eq!(p.games, 0);
}

#[test]
fn the_guard_keeps_an_agent_out_of_a_forced_loss_its_search_cannot_see() {
    // Before d2-b2 (above) 28 of the 35 attacker moves lose within 7 plies. A rollout search
    // of 64 simulations picks one of them; with `guard=7` the agent plays a move after which
    // the defenders have no forced win within 7.
    use tafl_lab::arena::{Agent, AgentSpec};
    let p = brandubh_after(BEFORE_D2_B2);
    let loses = |m: Move| loses_within(&p, m, 7);
    let v = variant("brandubh");
    let mut walked_in = 0;
    let mut m = None;
    for seed in 0..8 {
        let mut plain = Agent::new(&"mcts:sims=64".parse::<AgentSpec>().unwrap(), &v, seed).unwrap();
        walked_in += usize::from(loses(plain.choose(&p).unwrap()));
        let mut guarded = Agent::new(&"mcts:sims=64,guard=7".parse::<AgentSpec>().unwrap(), &v, seed).unwrap();
        let g = guarded.choose(&p).unwrap();
        assert!(!loses(g), "seed {seed}: {g} loses within 7 plies");
        m = Some(g);
    }
    assert!(walked_in >= 2, "the plain search walks into it with {walked_in} seeds of 8");
    let m = m.unwrap();
    // The guard on the defenders' side: a guarded defender never steps into a forced capture
    // within 3 plies where a move that avoids one exists (checked on its next move).
    let mut q = p.clone();
    q.play(m).unwrap();
    let mut guarded = Agent::new(&"mcts:sims=64,guard=3".parse::<AgentSpec>().unwrap(), &v, 5).unwrap();
    let d = guarded.choose(&q).unwrap();
    let mut r = q.clone();
    r.play(d).unwrap();
    let any_safe = q.legal_moves().into_iter().any(|m| {
        let mut r = q.clone();
        r.play(m).unwrap();
        wins_within_limit(&r, Side::Attackers, 3, &mut unlimited()) == OneSided::No
    });
    if any_safe {
        assert_eq!(wins_within_limit(&r, Side::Attackers, 3, &mut unlimited()), OneSided::No, "{d}");
    }
}
