//! Search without a network: the solver, PUCT against scripted priors, Gumbel schedules,
//! tree reuse, lockstep batching, the escape and fork probes, and the exhaustive and one-sided
//! solvers. This crate has no LibTorch: these tests build and run without it.

mod common;

use common::guard_game::{brandubh_after, loses_within, unlimited, BEFORE_D2_B2};
use common::{board, mv, variant};
use tafl_search::rules::{Move, Position, Side};
use tafl_search::search::lockstep::run_all;
use tafl_search::search::solver::{forced_result, wins_within_limit, Forced, Limit, OneSided};
use tafl_search::search::{
    EvalRequest, Evaluation, Evaluator, Noise, Proof, RolloutEvaluator, RootPolicy, Search, SearchConfig, SearchResult, UniformEvaluator,
};
fn cfg(sims: u32) -> SearchConfig {
    SearchConfig { sims, leaves_per_tree: 1, ..SearchConfig::default() }
}

/// Moves of the side to move that end the game at once in its favour.
fn immediate_wins(p: &Position) -> Vec<Move> {
    let me = p.to_move();
    p.legal_moves()
        .into_iter()
        .filter(|&m| {
            let mut q = p.clone();
            q.make(m);
            q.outcome().is_some_and(|o| o.winner == Some(me))
        })
        .collect()
}

/// The king on c1 reaches the corner a1 in one move.
fn immediate_escape() -> Position {
    let v = variant("brandubh");
    board(
        &v,
        "
        . . . . . . .
        . . . a . . .
        . . . . . . .
        a . . + . . a
        . . . d . . .
        . a . . . . .
        . . k . a . .",
        Side::Defenders,
    )
}

#[test]
fn solver_takes_an_immediate_escape() {
    let p = immediate_escape();
    for batch in [1, 8] {
        let mut s = Search::new(p.clone(), SearchConfig { leaves_per_tree: batch, ..cfg(64) }, 1);
        let r = s.run(&mut UniformEvaluator::new());
        assert_eq!(r.best, Some(mv(&p, "c1-a1")), "batch {batch}");
        assert_eq!(r.proof, Proof::Win);
        assert_eq!(r.value, 1.0);
    }
}

#[test]
fn a_root_proven_before_its_decision_targets_the_winning_move() {
    // The root is proven won when it is expanded (c1-a1 ends the game), so a decision runs no
    // simulation, the first as well as a second one on the same tree. Its policy target must
    // still be the winning move, not a uniform spread over every legal move (what a self-play
    // ply stored before).
    let p = immediate_escape();
    let win = mv(&p, "c1-a1");
    for (name, root) in [("puct", RootPolicy::Puct), ("gumbel", RootPolicy::gumbel(16))] {
        let mut s = Search::new(p.clone(), SearchConfig { root, ..cfg(64) }, 1);
        let first = s.run(&mut UniformEvaluator::new());
        assert_eq!(first.proof, Proof::Win, "{name}");
        s.start();
        let again = s.run(&mut UniformEvaluator::new());
        for (round, r) in [("first", first), ("again", again)] {
            assert_eq!(r.best, Some(win), "{name}, {round}");
            let on_win: f32 = r.policy.iter().filter(|(m, _)| *m == win).map(|(_, w)| w).sum();
            assert!(on_win > 0.99, "{name}, {round}: {on_win} of the target on the winning move; {:?}", r.policy);
        }
    }
}

/// `sample_policy` draws each move with its policy-target weight (a grid of uniform numbers
/// lands on each move in proportion), and a proven root plays its winning move whatever
/// the draw.
#[test]
fn sampling_the_policy_target_follows_its_weights_and_keeps_a_proof() {
    let p = Position::start(variant("brandubh"));
    let moves = p.legal_moves();
    let mut ev = Scripted { weights: vec![(moves[0], 1.0), (moves[1], 1.0)] };
    let root = RootPolicy::Gumbel { k: 8, c_visit: 50.0, c_scale: 0.1, gumbel_scale: 0.0 };
    let r = Search::new(p.clone(), SearchConfig { root, ..cfg(32) }, 3).run(&mut ev);
    let total: f64 = r.policy.iter().map(|&(_, w)| f64::from(w)).sum();
    let n = 100_000;
    let mut hits = std::collections::HashMap::new();
    for i in 0..n {
        *hits.entry(r.sample_policy((i as f64 + 0.5) / n as f64).unwrap()).or_insert(0usize) += 1;
    }
    for &(m, w) in &r.policy {
        let expected = f64::from(w) / total * n as f64;
        let got = *hits.get(&m).unwrap_or(&0) as f64;
        assert!((got - expected).abs() <= 2.0, "{m:?}: {got} draws, expected {expected}");
    }
    assert!(hits.len() > 2, "the draws spread over more than the two favoured moves");

    let p = immediate_escape();
    let won = Search::new(p.clone(), cfg(16), 1).run(&mut UniformEvaluator::new());
    assert_eq!(won.proof, Proof::Win);
    for u in [0.0, 0.3, 0.999] {
        assert_eq!(won.sample_policy(u), Some(mv(&p, "c1-a1")));
    }
}

#[test]
fn solver_blocks_a_one_move_escape() {
    // The king on c1 threatens c1-a1; only b4-b1 stops it.
    let (p, block) = one_blocking_move();
    // Every other attacker move lets the king escape at once.
    for m in p.legal_moves() {
        let mut q = p.clone();
        q.make(m);
        assert_eq!(immediate_wins(&q).is_empty(), m == block, "{m}");
    }
    for (name, root) in [("puct", RootPolicy::Puct), ("gumbel", RootPolicy::gumbel(16))] {
        let mut s = Search::new(p.clone(), SearchConfig { root, ..cfg(200) }, 2);
        let r = s.run(&mut RolloutEvaluator::new(3));
        assert_eq!(r.best, Some(block), "{name}");
        let lost = r.moves.iter().filter(|m| m.proof == Proof::Loss).count();
        assert!(lost > 0, "{name}: the solver proved some moves lost");
        // Every other move is proven lost, or was never searched.
        assert!(r.moves.iter().all(|m| m.mv == block || m.proof == Proof::Loss || m.visits == 0 && m.proof == Proof::Unknown));
    }
}

#[test]
fn solver_finds_a_forced_escape_in_two() {
    // The king on the throne can reach an empty edge file or rank, threatening two corners at
    // once; one attacker move cannot cover both.
    let p = fork();
    assert!(immediate_wins(&p).is_empty(), "no escape in one");
    let mut s = Search::new(p.clone(), cfg(4000), 4);
    let r = s.run(&mut UniformEvaluator::new());
    assert_eq!(r.proof, Proof::Win, "proved within the budget");
    let best = r.best.expect("a move");
    // Check the proof by brute force: after the chosen move every reply allows an escape.
    let mut q = p.clone();
    q.make(best);
    assert!(q.outcome().is_none());
    for reply in q.legal_moves() {
        let mut t = q.clone();
        t.make(reply);
        assert!(t.outcome().is_none(), "{best} {reply} ends the game");
        assert!(!immediate_wins(&t).is_empty(), "after {best} {reply} the king cannot escape");
    }
    assert!(r.simulations < 4000, "the search stopped once the root was proven");
}

/// Fixed priors for the start position's first moves, value 0 everywhere else too.
struct Scripted {
    weights: Vec<(Move, f32)>,
}

impl Evaluator for Scripted {
    fn evaluate(&mut self, batch: &[EvalRequest<'_>]) -> Vec<Evaluation> {
        batch
            .iter()
            .map(|r| {
                let raw: Vec<f32> = r.moves.iter().map(|m| self.weights.iter().find(|(w, _)| w == m).map_or(0.02, |&(_, p)| p)).collect();
                let total: f32 = raw.iter().sum();
                Evaluation { priors: raw.iter().map(|x| x / total).collect(), wdl: [0.0, 1.0, 0.0] }
            })
            .collect()
    }
}

#[test]
fn puct_visits_follow_the_priors() {
    let v = variant("brandubh");
    let p = Position::start(v);
    let moves = p.legal_moves();
    let mut ev = Scripted { weights: vec![(moves[3], 1.0), (moves[7], 0.6), (moves[11], 0.3)] };
    let priors = ev.evaluate(&[EvalRequest { position: &p, moves: &moves }]).remove(0).priors;
    let mut s = Search::new(p.clone(), SearchConfig { fpu_reduction: 0.0, ..cfg(2000) }, 5);
    let r = s.run(&mut ev);
    let total: u32 = r.moves.iter().map(|m| m.visits).sum();
    assert_eq!(total, 1999, "every simulation but the root's own evaluation reached a child");
    for (i, m) in moves.iter().enumerate() {
        let st = r.moves.iter().find(|s| s.mv == *m).unwrap();
        let frac = st.visits as f32 / total as f32;
        assert!((frac - priors[i]).abs() < 0.02, "{m}: visits {frac:.3} vs prior {:.3}", priors[i]);
    }
    assert_eq!(r.best, Some(moves[3]));
    assert_eq!(r.moves[0].mv, moves[3]);
    assert_eq!(r.moves[1].mv, moves[7]);
    assert_eq!(r.moves[2].mv, moves[11]);
}

#[test]
fn gumbel_with_k_equal_to_simulations_visits_each_considered_move_once() {
    let p = Position::start(variant("brandubh"));
    for (k, batch) in [(16, 1), (8, 8), (4, 3)] {
        let root = RootPolicy::gumbel(k);
        // The root's own evaluation is one simulation, so k + 1 in all.
        let mut s = Search::new(p.clone(), SearchConfig { root, leaves_per_tree: batch, ..cfg(k as u32 + 1) }, 6);
        let r = s.run(&mut UniformEvaluator::new());
        let visited: Vec<u32> = r.moves.iter().map(|m| m.visits).filter(|&n| n > 0).collect();
        assert_eq!(visited, vec![1; k], "k = {k}");
        let target: f32 = r.policy.iter().map(|(_, p)| p).sum();
        assert!((target - 1.0).abs() < 1e-4);
    }
}

#[test]
fn gumbel_halving_concentrates_on_the_better_moves() {
    let p = Position::start(variant("brandubh"));
    let moves = p.legal_moves();
    let mut ev = Scripted { weights: vec![(moves[0], 1.0)] };
    let root = RootPolicy::Gumbel { k: 8, c_visit: 50.0, c_scale: 0.1, gumbel_scale: 0.0 };
    let mut s = Search::new(p.clone(), SearchConfig { root, ..cfg(65) }, 7);
    let r = s.run(&mut ev);
    let visited = r.moves.iter().filter(|m| m.visits > 0).count();
    assert_eq!(visited, 8, "eight considered moves");
    // Sequential halving gives the last survivors more visits than the first-round losers.
    assert!(r.moves[0].visits > r.moves[7].visits);
    assert_eq!(r.best, Some(moves[0]), "without Gumbel noise and equal values the top prior wins");
    assert!(r.simulations <= 65);
}

#[test]
fn tree_reuse_keeps_the_subtree() {
    let p = Position::start(variant("brandubh"));
    let mut s = Search::new(p.clone(), cfg(300), 8);
    let mut ev = RolloutEvaluator::new(9);
    let r = s.run(&mut ev);
    let best = r.best.unwrap();
    let kept = r.moves.iter().find(|m| m.mv == best).unwrap().visits;
    s.advance(best).unwrap();
    let mut q = p.clone();
    q.play(best).unwrap();
    assert_eq!(s.position().hash(), q.hash());
    let r2 = s.run(&mut ev);
    assert_eq!(r2.moves.iter().map(|m| m.visits).sum::<u32>(), kept - 1 + 300, "old visits kept, 300 new");
    // reroot to an unrelated position starts afresh.
    assert!(!s.reroot(&p));
    assert_eq!(s.tree_size(), 1);
}

#[test]
fn virtual_loss_spreads_a_batch_over_different_leaves() {
    let p = Position::start(variant("brandubh"));
    let mut s = Search::new(p, SearchConfig { leaves_per_tree: 16, ..cfg(100) }, 10);
    assert_eq!(s.gather(16), 1, "first the root alone");
    let evals = UniformEvaluator::new().evaluate(&s.requests().collect::<Vec<_>>());
    s.apply(&evals);
    assert_eq!(s.gather(16), 16, "then sixteen distinct leaves");
    let mut hashes: Vec<u64> = s.requests().map(|r| r.position.hash()).collect();
    hashes.sort_unstable();
    hashes.dedup();
    assert_eq!(hashes.len(), 16);
}

#[test]
fn lockstep_runs_many_games_in_shared_batches() {
    let p = Position::start(variant("brandubh"));
    let mut searches: Vec<Search> = (0..6).map(|i| Search::new(p.clone(), SearchConfig { leaves_per_tree: 4, ..cfg(40) }, i)).collect();
    let mut refs: Vec<&mut Search> = searches.iter_mut().collect();
    let mut ev = UniformEvaluator::new();
    let stats = run_all(&mut refs, &mut ev, 24);
    assert_eq!(stats.evaluations, 6 * 40);
    assert!(stats.mean_batch() > 12.0, "batches were shared: mean {}", stats.mean_batch());
    for s in &searches {
        assert!(s.is_finished());
        assert_eq!(s.result().simulations, 40);
    }
}

/// Deterministic made-up network: priors proportional to 1 + (index % 7) over the legal
/// moves, and a value in -0.8..0.8 that depends only on the position (or a fixed one for
/// positions listed in `values`).
struct Skewed {
    values: Vec<(u64, f32)>,
}

impl Skewed {
    fn new() -> Skewed {
        Skewed { values: Vec::new() }
    }

    fn eval(&mut self, p: &Position) -> Evaluation {
        let moves = search_order(p);
        self.evaluate(&[EvalRequest { position: p, moves: &moves }]).remove(0)
    }
}

impl Evaluator for Skewed {
    fn evaluate(&mut self, batch: &[EvalRequest<'_>]) -> Vec<Evaluation> {
        batch
            .iter()
            .map(|r| {
                let raw: Vec<f32> = (0..r.moves.len()).map(|i| 1.0 + (i % 7) as f32).collect();
                let total: f32 = raw.iter().sum();
                let h = r.position.hash();
                let v = self.values.iter().find(|(k, _)| *k == h).map_or((h % 1001) as f32 / 1000.0 * 1.6 - 0.8, |&(_, v)| v);
                let wdl = if v >= 0.0 { [v, 1.0 - v, 0.0] } else { [0.0, 1.0 + v, -v] };
                Evaluation { priors: raw.iter().map(|x| x / total).collect(), wdl }
            })
            .collect()
    }
}

/// The legal moves in the order the search hands them to an evaluator.
fn search_order(p: &Position) -> Vec<Move> {
    let mut moves = Vec::new();
    p.generate_moves(&mut moves);
    moves
}

/// Root priors the search used, in [`search_order`].
fn root_priors(r: &SearchResult, p: &Position) -> Vec<f32> {
    search_order(p).iter().map(|m| r.moves.iter().find(|s| s.mv == *m).expect("every move is a root child").prior).collect()
}

/// Least-squares weight `f` of `mixed = (1 - f) clean + f noise`.
fn mixing_fraction(mixed: &[f32], clean: &[f32], noise: &[f32]) -> f32 {
    let (mut num, mut den) = (0.0f64, 0.0f64);
    for ((&p, &c), &x) in mixed.iter().zip(clean).zip(noise) {
        num += (p as f64 - c as f64) * (x as f64 - c as f64);
        den += (x as f64 - c as f64).powi(2);
    }
    (num / den) as f32
}

/// Noise is mixed once per search with the configured weight, also on a reused root, and a
/// search without noise (a fast search of playout cap randomization) sees the clean priors,
/// driving the search the way self-play (`advance`, `set_config`, `start`) and the arena
/// (`reroot`) do.
#[test]
fn root_noise_is_mixed_once_per_search_with_its_weight() {
    let mut ev = Skewed::new();
    let p = Position::start(variant("brandubh"));
    // A huge alpha makes the Dirichlet sample uniform to ~1e-6, so the weight can be read off.
    let flat = Noise { alpha_total: 1e15, fraction: 0.25 };
    let full = SearchConfig { noise: Some(flat), ..cfg(60) };
    let fast = SearchConfig { noise: None, ..cfg(10) };
    let measure = |r: &SearchResult, pos: &Position, ev: &mut Skewed| {
        let clean = ev.eval(pos).priors;
        let uniform = vec![1.0 / clean.len() as f32; clean.len()];
        mixing_fraction(&root_priors(r, pos), &clean, &uniform)
    };

    let mut s = Search::new(p.clone(), full.clone(), 11);
    let r = s.run(&mut ev);
    let f = measure(&r, &p, &mut ev);
    assert!((f - 0.25).abs() < 1e-4, "fresh root: noise weight {f}");

    // Self-play: play the move, configure the next (full) search, start it.
    let mut pos = p.clone();
    let best = r.best.unwrap();
    pos.make(best);
    s.advance(best).unwrap();
    s.set_config(full.clone());
    s.start();
    let r = s.run(&mut ev);
    let f = measure(&r, &pos, &mut ev);
    assert!((f - 0.25).abs() < 1e-4, "reused root: noise weight {f}");

    // A fast search after a full one: no noise at all.
    let best = r.best.unwrap();
    pos.make(best);
    s.advance(best).unwrap();
    s.set_config(fast.clone());
    s.start();
    let r = s.run(&mut ev);
    assert_eq!(root_priors(&r, &pos), ev.eval(&pos).priors.to_vec(), "a fast search sees the clean priors");

    // The arena: a full search, then the same root searched again, and again without noise.
    s.set_config(full.clone());
    assert!(s.reroot(&pos));
    let r = s.run(&mut ev);
    let f = measure(&r, &pos, &mut ev);
    assert!((f - 0.25).abs() < 1e-4, "full search on a root searched before: noise weight {f}");
    assert!(s.reroot(&pos));
    s.start();
    let r = s.run(&mut ev);
    let f = measure(&r, &pos, &mut ev);
    assert!((f - 0.25).abs() < 1e-4, "same root once more: noise weight {f}");
    s.set_config(fast);
    s.start();
    let r = s.run(&mut ev);
    assert_eq!(root_priors(&r, &pos), ev.eval(&pos).priors.to_vec(), "the noise of the earlier searches is gone");

    // The default (spiky) Dirichlet noise on a fixed seed: mixed priors never fall below
    // (1 - 0.25) x clean, and the moves the noise all but misses come close to that bound.
    let mut s = Search::new(p.clone(), SearchConfig { noise: Some(Noise::default()), ..cfg(60) }, 12);
    let mut pos = p.clone();
    for ply in 0..6 {
        let r = s.run(&mut ev);
        let clean = ev.eval(&pos).priors;
        let ratio = root_priors(&r, &pos).iter().zip(clean.iter()).map(|(m, c)| m / c).fold(f32::INFINITY, f32::min);
        let weight = 1.0 - ratio;
        assert!(weight <= 0.25 + 1e-5 && weight > 0.2, "ply {ply}: noise weight about {weight}");
        let best = r.best.unwrap();
        pos.make(best);
        s.advance(best).unwrap();
        s.set_config(SearchConfig { noise: Some(Noise::default()), ..cfg(60) });
        s.start();
    }
}

/// Scripted priors (`weights`, `rest` for other moves) and values that remember a root move,
/// from the root mover's view ([`Mark`] says how), so a move's Q stays what it is when searched
/// deeper.
struct Footprints {
    root: Position,
    good: Move,
    bad: Move,
    weights: Vec<(Move, f32)>,
    rest: f32,
    mark: Mark,
}

/// How [`Footprints`] sees that a root move was played.
enum Mark {
    /// +0.9 while the piece `good` moved still stands where it went, -0.9 likewise for `bad`,
    /// 0 otherwise.
    Stands,
    /// Values that hold however deep the search goes: -0.9 once `bad`'s origin holds another
    /// piece than at the root (or none), else +0.9 once `good`'s does, else 0.
    Left,
}

impl Footprints {
    /// The value of `p` from the root mover's view.
    fn root_value(&self, p: &Position) -> f32 {
        match self.mark {
            Mark::Stands => {
                let stands = |m: Move| p.piece_at(m.from).is_none() && p.piece_at(m.to) == self.root.piece_at(m.from);
                if stands(self.good) {
                    0.9
                } else if stands(self.bad) {
                    -0.9
                } else {
                    0.0
                }
            }
            Mark::Left => {
                let left = |m: Move| p.piece_at(m.from) != self.root.piece_at(m.from);
                if left(self.bad) {
                    -0.9
                } else if left(self.good) {
                    0.9
                } else {
                    0.0
                }
            }
        }
    }
}

impl Evaluator for Footprints {
    fn evaluate(&mut self, batch: &[EvalRequest<'_>]) -> Vec<Evaluation> {
        batch
            .iter()
            .map(|r| {
                let raw: Vec<f32> = r.moves.iter().map(|m| self.weights.iter().find(|(w, _)| w == m).map_or(self.rest, |&(_, p)| p)).collect();
                let total: f32 = raw.iter().sum();
                let p = r.position;
                let mut v = self.root_value(p);
                if p.to_move() != self.root.to_move() {
                    v = -v;
                }
                let wdl = if v >= 0.0 { [v, 1.0 - v, 0.0] } else { [0.0, 1.0 + v, -v] };
                Evaluation { priors: raw.iter().map(|x| x / total).collect(), wdl }
            })
            .collect()
    }
}

#[test]
fn gumbel_plays_the_better_q_over_the_higher_prior() {
    let p = Position::start(variant("brandubh"));
    let moves = p.legal_moves();
    let (bad, good) = (moves[5], moves[20]);
    assert!(bad.from != good.from && bad.to != good.to);
    let mut ev = Footprints { root: p.clone(), good, bad, weights: vec![(bad, 2.0)], rest: 0.2, mark: Mark::Stands };
    for scale in [0.0, 1.0] {
        for seed in 0..4 {
            let root = RootPolicy::Gumbel { k: 64, c_visit: 50.0, c_scale: 0.1, gumbel_scale: scale };
            let mut s = Search::new(p.clone(), SearchConfig { root, ..cfg(200) }, seed);
            let r = s.run(&mut ev);
            let stat = |m: Move| r.moves.iter().find(|s| s.mv == m).unwrap().clone();
            assert!(stat(bad).prior > 9.0 * stat(good).prior, "the losing move has by far the higher prior");
            if scale == 0.0 {
                // With Gumbel noise the move played is a sample; without it, the best.
                assert_eq!(r.best, Some(good), "seed {seed}");
            }
            assert!(stat(good).q.unwrap() > 0.5 && stat(bad).q.unwrap() < -0.5);
            let target = |m: Move| r.policy.iter().find(|(x, _)| *x == m).unwrap().1;
            let top = r.policy.iter().map(|x| x.1).fold(0.0, f32::max);
            assert_eq!(target(good), top, "the improved policy puts the better move first");
            assert!(target(bad) < target(good) / 10.0);
        }
    }
}

/// The improved policy softmax(log prior + sigma(completed Q)), computed here from the paper's
/// formulas with the statistics the search reports.
fn hand_policy(p: &Position, r: &SearchResult, priors: &[f32], v_hat: f32) -> Vec<f32> {
    let (c_visit, c_scale) = (50.0f32, 0.1f32);
    let moves = search_order(p);
    let stats: Vec<_> = moves.iter().map(|m| r.moves.iter().find(|s| s.mv == *m).unwrap()).collect();
    let sum_n: f32 = stats.iter().map(|s| s.visits as f32).sum();
    let visited_mass: f32 = stats.iter().zip(priors).filter(|(s, _)| s.visits > 0).map(|(_, &p)| p).sum();
    let weighted: f32 = stats.iter().zip(priors).filter(|(s, _)| s.visits > 0).map(|(s, &p)| p * s.q.unwrap()).sum();
    // Eq. 33 of Danihelka et al. 2022.
    let v_mix = (v_hat + sum_n / visited_mass * weighted) / (1.0 + sum_n);
    let completed: Vec<f32> = stats.iter().map(|s| if s.visits > 0 { s.q.unwrap() } else { v_mix }).collect();
    let lo = completed.iter().copied().fold(f32::INFINITY, f32::min);
    let hi = completed.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let max_n = stats.iter().map(|s| s.visits).max().unwrap() as f32;
    let logits: Vec<f32> = completed.iter().zip(priors).map(|(q, p)| p.ln() + (c_visit + max_n) * c_scale * (q - lo) / (hi - lo)).collect();
    let m = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let e: Vec<f32> = logits.iter().map(|l| (l - m).exp()).collect();
    let z: f32 = e.iter().sum();
    e.iter().map(|x| x / z).collect()
}

#[test]
fn gumbel_improved_policy_matches_a_hand_computation() {
    let p = Position::start(variant("brandubh"));
    let moves = search_order(&p);
    let v_hat = 0.3;
    let mut ev = Skewed { values: vec![(p.hash(), v_hat)] };
    let priors = ev.eval(&p).priors;
    for (k, sims, seed) in [(4usize, 5u32, 21u64), (8, 40, 22), (16, 100, 23)] {
        let root = RootPolicy::gumbel(k);
        let mut s = Search::new(p.clone(), SearchConfig { root, ..cfg(sims) }, seed);
        let r = s.run(&mut ev);
        if sims as usize == k + 1 {
            // One visit per candidate: each Q is minus the child's own value.
            for (m, st) in moves.iter().map(|m| (m, r.moves.iter().find(|s| s.mv == *m).unwrap())) {
                if st.visits > 0 {
                    let mut c = p.clone();
                    c.make(*m);
                    assert_eq!(st.q, Some(-ev.eval(&c).value()));
                }
            }
        }
        let hand = hand_policy(&p, &r, &priors, v_hat);
        for (m, h) in moves.iter().zip(&hand) {
            let got = r.policy.iter().find(|(x, _)| x == m).unwrap().1;
            assert!((got - h).abs() < 1e-5, "k {k}, sims {sims}: {m}: search {got} vs hand {h}");
        }
    }
}

#[test]
fn gumbel_spends_the_whole_budget() {
    let p = Position::start(variant("brandubh"));
    let n_moves = p.legal_moves().len();
    for (sims, k) in [(5u32, 16usize), (2, 16), (7, 3), (20, 16), (37, 8), (100, 4), (100, 64), (13, 1), (64, 40), (33, 2)] {
        for batch in [1, 8] {
            let root = RootPolicy::gumbel(k);
            let mut s = Search::new(p.clone(), SearchConfig { root, leaves_per_tree: batch, ..cfg(sims) }, sims as u64);
            // Every evaluation says the side to move wins: visited moves look lost, so an
            // unvisited candidate would look better than all of them.
            let mut ev = UniformEvaluator { wdl: [1.0, 0.0, 0.0] };
            let r = s.run(&mut ev);
            let label = format!("sims {sims}, k {k}, batch {batch}");
            assert_eq!(r.simulations, sims, "{label}");
            assert_eq!(r.moves.iter().map(|m| m.visits).sum::<u32>(), sims - 1, "{label}: the root's evaluation and N - 1 visits");
            let visited = r.moves.iter().filter(|m| m.visits > 0).count();
            assert_eq!(visited, k.min(n_moves).min(sims as usize - 1), "{label}: k capped at the budget and the moves");
            let best = r.best.unwrap();
            assert!(r.moves.iter().any(|m| m.mv == best && m.visits > 0), "{label}: the move played was searched");
            // Tree reuse: the next decision gets `sims` new visits.
            s.advance(best).unwrap();
            let before: u32 = s.result().moves.iter().map(|m| m.visits).sum();
            let r = s.run(&mut ev);
            assert_eq!(r.simulations, sims, "{label}, reused");
            assert_eq!(r.moves.iter().map(|m| m.visits).sum::<u32>(), before + sims, "{label}, reused");
        }
    }
}

/// The king on the throne can reach an empty edge file or rank, threatening two corners at
/// once; one attacker move cannot cover both (defenders to move).
fn fork() -> Position {
    let v = variant("brandubh");
    board(
        &v,
        "
        . . . . . . .
        . . . . . . a
        . . . . . . .
        . . . k . . .
        . . . . . . .
        . a . . . . .
        . . . . . . .",
        Side::Defenders,
    )
}

/// The king on c1 threatens c1-a1 and only b4-b1 stops it (attackers to move).
fn one_blocking_move() -> (Position, Move) {
    let v = variant("brandubh");
    let p = board(
        &v,
        "
        . . . . . . .
        . . . . . . .
        . . . a . . .
        . a . + . . a
        . . . . . . .
        . . . d . . .
        . . k . a . .",
        Side::Attackers,
    );
    let block = mv(&p, "b4-b1");
    (p, block)
}

#[test]
fn escape_probe_proves_unblocking_moves_lost_at_expansion() {
    let (p, block) = one_blocking_move();
    for probe in [true, false] {
        // One simulation: the root's expansion and nothing more.
        let mut s = Search::new(p.clone(), SearchConfig { escape_probe: probe, ..cfg(1) }, 1);
        let r = s.run(&mut UniformEvaluator::new());
        let lost: Vec<Move> = r.moves.iter().filter(|m| m.proof == Proof::Loss).map(|m| m.mv).collect();
        if probe {
            assert_eq!(lost.len(), p.legal_moves().len() - 1, "every move but the block is proven lost");
            assert!(!lost.contains(&block));
            assert_eq!(r.best, Some(block));
        } else {
            assert!(lost.is_empty(), "without the probe a move is proven only once its position is searched");
        }
    }
}

#[test]
fn escape_probe_proves_an_unstoppable_threat_with_fewer_simulations() {
    // The fork of `solver_finds_a_forced_escape_in_two`, both ways.
    let p = fork();
    let sims = |probe: bool| {
        let mut s = Search::new(p.clone(), SearchConfig { escape_probe: probe, ..cfg(4000) }, 4);
        let r = s.run(&mut UniformEvaluator::new());
        assert_eq!(r.proof, Proof::Win, "probe {probe}");
        r.simulations
    };
    let (with, without) = (sims(true), sims(false));
    assert!(with * 4 < without, "with the probe {with} simulations, without {without}");
}

/// Whether the king, with the defenders to move in `p`, has a move that escapes at once.
fn king_escapes_at_once(p: &Position) -> bool {
    immediate_wins(p).iter().any(|w| w.from == p.king() && p.variant().is_escape(w.to))
}

/// Plays `games` random games of each of brandubh, Copenhagen and tablut (an RNG seeded `seed`
/// per variant; each to its end or `max_ply`) and calls `at(variant name, position)` at every
/// attackers' turn.
fn at_attackers_turns_of_random_games(seed: u64, games: usize, max_ply: u32, mut at: impl FnMut(&str, &Position)) {
    use rand::{Rng, SeedableRng};
    for name in ["brandubh", "copenhagen", "tablut"] {
        let v = variant(name);
        let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
        for _ in 0..games {
            let mut p = Position::start(v.clone());
            while !p.is_over() && p.ply() < max_ply {
                if p.to_move() == Side::Attackers {
                    at(name, &p);
                }
                let moves = p.legal_moves();
                p.make(moves[rng.gen_range(0..moves.len())]);
            }
        }
    }
}

#[test]
fn escape_probe_proofs_are_sound_on_played_positions() {
    // Random games; at each attackers' turn where the king has a route to an escape square,
    // every root move the probe proves lost must let the king escape at once, and a move it
    // leaves unproven must not (its check is exact for escapes).
    let mut checked = 0;
    at_attackers_turns_of_random_games(7, 40, 200, |name, p| {
        let mut s = Search::new(p.clone(), SearchConfig { escape_probe: true, ..cfg(1) }, 1);
        let r = s.run(&mut UniformEvaluator::new());
        for m in &r.moves {
            let mut q = p.clone();
            q.make(m.mv);
            if q.outcome().is_some() {
                continue;
            }
            let escapes = king_escapes_at_once(&q);
            assert_eq!(m.proof == Proof::Loss, escapes, "{name} ply {}: {}", p.ply(), m.mv);
            checked += usize::from(escapes);
        }
    });
    assert!(checked > 50, "only {checked} proven moves met");
}

#[test]
fn a_search_moved_into_a_probe_proven_position_finds_the_escape() {
    let (p, block) = one_blocking_move();
    let mut s = Search::new(p.clone(), cfg(1), 1);
    s.run(&mut UniformEvaluator::new());
    // Play a move the probe proved lost (not searched below), then search the defenders' turn.
    let lost = p.legal_moves().into_iter().find(|&m| m != block).expect("a losing move");
    s.advance(lost).expect("legal");
    let r = s.run(&mut UniformEvaluator::new());
    assert_eq!(r.best, Some(mv(s.position(), "c1-a1")));
    assert_eq!(r.proof, Proof::Win);
}

/// The king on d6, hemmed in by its own pieces, can only go to d7 (the top edge), threatening
/// a7 and g7 at once; each attacker can block one route, not both (attackers to move).
fn fork_next() -> Position {
    let v = variant("brandubh");
    board(
        &v,
        "
        . . . . . . .
        . . d k d . .
        . . . d . . .
        . . . . . . .
        . . . . . . .
        . a . . . a .
        . . . . . . .",
        Side::Attackers,
    )
}

#[test]
fn fork_probe_proves_moves_that_allow_an_unstoppable_fork() {
    let p = fork_next();
    let lost = |fork: bool| -> Vec<Move> {
        let mut s = Search::new(p.clone(), SearchConfig { escape_probe: true, fork_probe: fork, ..cfg(1) }, 1);
        let r = s.run(&mut UniformEvaluator::new());
        r.moves.iter().filter(|m| m.proof == Proof::Loss).map(|m| m.mv).collect()
    };
    let (with, without) = (lost(true), lost(false));
    // Only the escape probe: no attacker move lets the king escape at once (it is not on an
    // edge), so nothing is proven at the root's expansion.
    assert!(without.is_empty(), "{without:?}");
    // With the fork probe: a move that leaves the top edge open lets d6-d7 fork a7 and g7.
    // Every move is checked by brute force below.
    assert!(!with.is_empty());
    for m in p.legal_moves() {
        let mut q = p.clone();
        q.make(m);
        let forked = {
            let mut k = q.clone();
            k.make(mv(&k, "d6-d7"));
            // Every attacker reply leaves a7 or g7 open to the king.
            k.legal_moves().iter().all(|&r| {
                let mut x = k.clone();
                x.make(r);
                x.outcome().is_some_and(|o| o.winner == Some(Side::Defenders)) || king_escapes_at_once(&x)
            })
        };
        if !with.contains(&m) {
            assert!(!forked, "{m} allows the d7 fork but was not proven lost");
        }
    }
    // Only the moves onto the top edge are not lost: the other attacker answers the fork.
    assert_eq!(with.len(), p.legal_moves().len() - 2);
    for m in ["b2-b7", "f2-f7"] {
        assert!(!with.contains(&mv(&p, m)), "{m} blocks the top edge");
    }
}

#[test]
fn fork_probe_proofs_are_sound_on_played_positions() {
    // Random games; at each attackers' turn every root move the fork probe proves lost is
    // checked by brute force: the king escapes at once, or some king move leaves every
    // attacker reply a lost game.
    let mut forks = 0;
    at_attackers_turns_of_random_games(11, 6, 120, |name, p| {
        let mut s = Search::new(p.clone(), SearchConfig { escape_probe: true, fork_probe: true, ..cfg(1) }, 1);
        let r = s.run(&mut UniformEvaluator::new());
        for m in r.moves.iter().filter(|m| m.proof == Proof::Loss) {
            let mut q = p.clone();
            q.make(m.mv);
            if q.outcome().is_some() || king_escapes_at_once(&q) {
                continue;
            }
            let mut king_moves = Vec::new();
            q.generate_moves_from(q.king(), &mut king_moves);
            let proven = king_moves.iter().any(|&k| {
                let mut x = q.clone();
                x.make(k);
                x.outcome().is_none()
                    && x.legal_moves().iter().all(|&r| {
                        let mut y = x.clone();
                        y.make(r);
                        y.outcome().map_or_else(|| king_escapes_at_once(&y), |o| o.winner == Some(Side::Defenders))
                    })
            });
            assert!(proven, "{name} ply {}: {} proven lost without a fork", p.ply(), m.mv);
            forks += 1;
        }
    });
    assert!(forks > 20, "only {forks} fork proofs met");
}

// ----- the exhaustive solver (`analyze --exhaustive`) ------------------------------------

/// Plays `line` from `p` and returns the winner of the game it ends, if it ends one.
fn winner_after(p: &Position, line: &[Move]) -> Option<Side> {
    let mut q = p.clone();
    for &m in line {
        q.play(m).expect("the solver's line is legal");
    }
    q.outcome().and_then(|o| o.winner)
}

#[test]
fn exhaustive_solver_finds_the_fork_in_three_plies_and_not_in_two() {
    // The king reaches an empty edge and threatens two corners; one attacker move covers one.
    let p = fork();
    assert_eq!(forced_result(&p, 2), Forced::Unknown);
    let Forced::Win { plies, line } = forced_result(&p, 5) else { panic!("the fork wins") };
    assert_eq!(plies, 3);
    assert_eq!(line.len(), 3, "{line:?}");
    assert_eq!(winner_after(&p, &line), Some(Side::Defenders));
}

#[test]
fn exhaustive_solver_sees_the_one_block_and_the_loss_without_it() {
    let (p, block) = one_blocking_move();
    assert!(!matches!(forced_result(&p, 2), Forced::Loss { .. }), "b4-b1 holds for two plies");
    for m in p.legal_moves().into_iter().filter(|&m| m != block).take(5) {
        let mut q = p.clone();
        q.play(m).unwrap();
        let Forced::Win { plies: 1, line } = forced_result(&q, 3) else { panic!("after {m} the king escapes at once") };
        assert_eq!(winner_after(&q, &line), Some(Side::Defenders));
    }
    // After the block the king has no escape at once.
    let mut q = p.clone();
    q.play(block).unwrap();
    assert!(!matches!(forced_result(&q, 1), Forced::Win { .. }));
}

#[test]
fn exhaustive_solver_proves_a_resigned_copenhagen_position_lost() {
    // The final position of a game against hnefatafl-copenhagen's alpha-beta AI, which
    // resigned here as the defenders (docs/results/attack/, ply 39): lost within 4 plies by
    // tafl-lab's rules, and not within 2.
    let v = variant("copenhagen");
    let p = tafl_search::rules::notation::parse_position(v, "/5t5/5t5/t3tTt4/1t1t3t1t1/2t1K3t2/3t3t2t/2t3t4/3t3t2t/4t6/5t5/3ttt5/", Side::Defenders).unwrap();
    assert_eq!(forced_result(&p, 2), Forced::Unknown);
    let Forced::Loss { plies: 4, line } = forced_result(&p, 4) else { panic!("lost within 4 plies") };
    assert_eq!(line.len(), 4, "the longest resistance lasts the whole horizon: {line:?}");
    assert_eq!(winner_after(&p, &line), Some(Side::Attackers));
}

#[test]
fn exhaustive_solver_verdicts_are_sound_on_played_positions() {
    // Every win or loss it claims at an attackers' turn of random games is a line that ends
    // the game that way within the horizon, and a win within n plies is one within n + 1.
    let (mut wins, mut losses) = (0, 0);
    at_attackers_turns_of_random_games(5, 3, 60, |name, p| match forced_result(p, 3) {
        Forced::Win { plies, line } => {
            wins += 1;
            assert!(line.len() as u32 <= plies && plies <= 3, "{name}: {line:?}");
            assert_eq!(winner_after(p, &line), Some(p.to_move()), "{name}");
            assert_eq!(forced_result(p, 4), Forced::Win { plies, line }, "{name}: the shortest horizon is found first");
        }
        Forced::Loss { plies, line } => {
            losses += 1;
            assert!(line.len() as u32 <= plies && plies <= 3, "{name}: {line:?}");
            assert_eq!(winner_after(p, &line), Some(p.to_move().opponent()), "{name}");
        }
        Forced::Unknown => {}
    });
    assert!(wins + losses > 0, "random games reach decided positions");
}

/// The plain minimax definition of "`winner` wins within `plies` plies", with none of the
/// solver's shortcuts (no immediate-win pass, no ordering, no early horizon cut).
fn naive_wins_within(p: &Position, winner: Side, plies: u32) -> bool {
    if let Some(o) = p.outcome() {
        return o.winner == Some(winner);
    }
    if plies == 0 {
        return false;
    }
    let mut results = p.legal_moves().into_iter().map(|m| {
        let mut q = p.clone();
        q.play(m).unwrap();
        naive_wins_within(&q, winner, plies - 1)
    });
    if p.to_move() == winner {
        results.any(|w| w)
    } else {
        results.all(|w| w)
    }
}

#[test]
fn exhaustive_solver_misses_no_forced_result_that_plain_minimax_finds() {
    // Brandubh positions of random games (few moves a side, so minimax to 3 plies is cheap):
    // the solver's verdict at each horizon is exactly plain minimax's.
    use rand::{Rng, SeedableRng};
    let v = variant("brandubh");
    let mut rng = rand::rngs::SmallRng::seed_from_u64(9);
    let (mut checked, mut decided) = (0, 0);
    for _ in 0..30 {
        let mut p = Position::start(v.clone());
        while !p.is_over() {
            if p.ply() >= 6 && p.ply() % 3 == 0 {
                let me = p.to_move();
                let expected = (0..=3).find_map(|n| {
                    if naive_wins_within(&p, me, n) {
                        Some(("win", n))
                    } else if naive_wins_within(&p, me.opponent(), n) {
                        Some(("loss", n))
                    } else {
                        None
                    }
                });
                let got = match forced_result(&p, 3) {
                    Forced::Win { plies, .. } => Some(("win", plies)),
                    Forced::Loss { plies, .. } => Some(("loss", plies)),
                    Forced::Unknown => None,
                };
                assert_eq!(got, expected, "ply {} of a random brandubh game", p.ply());
                checked += 1;
                decided += usize::from(expected.is_some());
            }
            let moves = p.legal_moves();
            p.make(moves[rng.gen_range(0..moves.len())]);
        }
    }
    assert!(checked > 50 && decided > 5, "{checked} positions, {decided} decided");
}

// ----- the one-sided solver of the guard (`guard=`) --------------------------------------

#[test]
fn one_sided_solver_proves_the_seven_ply_loss_of_an_opentafl_game() {
    let v = variant("brandubh");
    let mut p = brandubh_after(BEFORE_D2_B2);
    p.play(Move::parse("d2-b2", v.geometry).unwrap()).unwrap();
    let OneSided::Wins { line } = wins_within_limit(&p, Side::Defenders, 7, &mut unlimited()) else { panic!("the defenders win") };
    assert_eq!(line.len(), 7, "a shortest win: {line:?}");
    assert_eq!(winner_after(&p, &line), Some(Side::Defenders));
    assert_eq!(wins_within_limit(&p, Side::Defenders, 5, &mut unlimited()), OneSided::No);
    assert!(matches!(forced_result(&p, 7), Forced::Win { plies: 7, .. }), "the two-sided solver agrees");
    // Before the move: some moves hold for 7 plies, most do not.
    let p = brandubh_after(BEFORE_D2_B2);
    let safe = p.legal_moves().into_iter().filter(|&m| !loses_within(&p, m, 7)).count();
    assert_eq!((safe, p.legal_moves().len()), (7, 35));
}

#[test]
fn one_sided_solver_equals_plain_minimax() {
    // Positions of random brandubh and Copenhagen games, both sides as the winner asked
    // about, horizons 0-3: exactly plain minimax's verdict; every win shown replays to it.
    use rand::{Rng, SeedableRng};
    let (mut checked, mut wins) = (0, 0);
    for name in ["brandubh", "copenhagen"] {
        let v = variant(name);
        let mut rng = rand::rngs::SmallRng::seed_from_u64(31);
        for _ in 0..12 {
            let mut p = Position::start(v.clone());
            while !p.is_over() && p.ply() < 200 {
                if p.ply() % 5 == 1 {
                    for winner in [Side::Attackers, Side::Defenders] {
                        for h in 0..=if name == "brandubh" { 3 } else { 2 } {
                            let found = wins_within_limit(&p, winner, h, &mut unlimited());
                            assert_eq!(matches!(found, OneSided::Wins { .. }), naive_wins_within(&p, winner, h), "{name} ply {} {winner:?} {h}", p.ply());
                            if let OneSided::Wins { line } = found {
                                wins += 1;
                                assert!(line.len() as u32 <= h);
                                assert_eq!(winner_after(&p, &line), Some(winner), "{name}: {line:?}");
                            }
                            checked += 1;
                        }
                    }
                }
                let moves = p.legal_moves();
                p.make(moves[rng.gen_range(0..moves.len())]);
            }
        }
    }
    assert!(checked > 500 && wins > 20, "{checked} verdicts, {wins} wins");
}

#[test]
fn one_sided_solver_stops_at_its_limit() {
    let v = variant("brandubh");
    let mut p = brandubh_after(BEFORE_D2_B2);
    p.play(Move::parse("d2-b2", v.geometry).unwrap()).unwrap();
    assert_eq!(wins_within_limit(&p, Side::Defenders, 7, &mut Limit::moves(100)), OneSided::OutOfLimit);
    let past = std::time::Instant::now() - std::time::Duration::from_millis(1);
    // A deadline already past stops it at its first look at the clock.
    let mut limit = Limit { deadline: Some(past), ..Limit::moves(u64::MAX) };
    assert_eq!(wins_within_limit(&p, Side::Defenders, 9, &mut limit), OneSided::OutOfLimit);
    let mut limit = Limit::moves(10_000_000);
    assert!(matches!(wins_within_limit(&p, Side::Defenders, 7, &mut limit), OneSided::Wins { .. }));
    assert!(limit.moves < 10_000_000, "moves were counted");
}

/// Fetlar (a repetition is a draw) after each side stepped a piece out and back
/// and out again: the side to move has a move that brings the start position back a third
/// time, which ends the game in a draw.
fn one_move_from_a_repetition_draw() -> (Position, Move) {
    let mut p = Position::start(variant("fetlar"));
    let back = |m: Move| Move::new(m.to, m.from);
    // Steps a piece of the side to move can take back at once (not out of a camp, say).
    let reversible = |p: &Position| {
        p.legal_moves().into_iter().find(|&m| {
            let mut q = p.clone();
            q.make(m);
            let r = Position::analysis_copy(&q, p.to_move());
            r.is_legal(back(m))
        })
    };
    let a = reversible(&p).expect("the attackers can step out and back");
    p.make(a);
    let d = reversible(&p).expect("the defenders can step out and back");
    p.make(d);
    for m in [back(a), back(d), a, d, back(a)] {
        assert!(p.is_legal(m), "{m} in\n{p}");
        p.make(m);
    }
    let mut q = p.clone();
    q.make(back(d));
    assert!(q.outcome().is_some_and(|o| o.winner.is_none()), "{} should draw by repetition\n{q}", back(d));
    (p, back(d))
}

/// Contempt values a draw in the tree at `-contempt` for the side the search plays for: the
/// repeating move's Q drops from 0 to `-contempt` and it gets fewer visits, while every other
/// move keeps the evaluator's 0.
#[test]
fn contempt_makes_the_searching_side_avoid_a_drawing_repetition() {
    let (p, draw) = one_move_from_a_repetition_draw();
    let search = |contempt: f32| {
        let mut s = Search::new(p.clone(), SearchConfig { contempt, ..cfg(600) }, 3);
        s.run(&mut UniformEvaluator::new())
    };
    let (plain, contempt) = (search(0.0), search(0.4));
    let stat = |r: &SearchResult| r.moves.iter().find(|m| m.mv == draw).cloned().expect("the drawing move is searched");
    let (d0, d1) = (stat(&plain), stat(&contempt));
    assert_eq!((d0.proof, d1.proof), (Proof::Draw, Proof::Draw));
    assert_eq!(d0.q, Some(0.0));
    assert!((d1.q.unwrap() + 0.4).abs() < 1e-6, "{:?}", d1.q);
    assert!(d1.visits < d0.visits, "draw visited {} times with contempt, {} without", d1.visits, d0.visits);
    assert_ne!(contempt.best, Some(draw));
    // The opponent's draws count for the searching side: below the root the sign alternates,
    // so no other root move's value goes below the evaluator's 0 by more than the contempt.
    assert!(contempt.moves.iter().filter_map(|m| m.q).all(|q| q >= -0.4 - 1e-6));
}

/// Forced playouts (KataGo): a move with a large prior and a losing value gets its
/// sqrt(k * prior * visits) playouts, where plain PUCT gives it a few; the policy target then
/// takes them back (down to what PUCT would have given it against the move played), drops
/// moves left with one visit, and matches a hand computation from the search's statistics.
#[test]
fn forced_playouts_visit_the_prior_and_pruning_takes_them_back() {
    let p = Position::start(variant("brandubh"));
    let moves = p.legal_moves();
    let (bad, good) = (moves[5], moves[20]);
    assert!(bad.from != good.from && bad.to != good.to);
    let mut ev = Footprints { root: p.clone(), good, bad, weights: vec![(good, 5.0), (bad, 3.0)], rest: 0.1, mark: Mark::Left };
    let run = |k: f32, ev: &mut Footprints| {
        let mut s = Search::new(p.clone(), SearchConfig { forced_playouts: k, ..cfg(400) }, 31);
        s.run(ev)
    };
    let stat = |r: &SearchResult, m: Move| r.moves.iter().find(|s| s.mv == m).unwrap().clone();
    let target = |r: &SearchResult, m: Move| r.policy.iter().find(|(x, _)| *x == m).unwrap().1;

    let plain = run(0.0, &mut ev);
    let sum = |r: &SearchResult| r.moves.iter().map(|s| s.visits).sum::<u32>() as f32;
    assert_eq!(plain.best, Some(good));
    assert!(stat(&plain, bad).visits <= 5, "plain PUCT gives the losing move few visits: {}", stat(&plain, bad).visits);
    for s in &plain.moves {
        assert_eq!(target(&plain, s.mv), s.visits as f32 / sum(&plain), "without forced playouts the target is the visits");
    }

    let k = 2.0;
    let r = run(k, &mut ev);
    let n_root = sum(&r) + 1.0;
    assert_eq!(r.best, Some(good));
    let b = stat(&r, bad);
    let forced = (k * b.prior * n_root).sqrt();
    assert!(b.visits as f32 + 1.0 >= forced && b.visits >= 3 * stat(&plain, bad).visits, "forced: {} visits, owed {forced:.1}", b.visits);
    assert!(target(&r, bad) < 0.5 * b.visits as f32 / sum(&r), "pruning takes the forced visits back");
    assert!(target(&r, good) > stat(&r, good).visits as f32 / sum(&r), "the move played keeps its visits");

    // By hand: each child but the best keeps max(visits - forced, the fewest visits at which
    // its PUCT score is not above the best's), at most its visits; one visit or none is dropped.
    let sqrt_n = n_root.sqrt();
    let g = stat(&r, good);
    let bar = g.q.unwrap() + 1.5 * g.prior * sqrt_n / (1.0 + g.visits as f32);
    let kept: Vec<(Move, f32)> = r
        .moves
        .iter()
        .map(|s| {
            let n = s.visits as f32;
            if s.mv == good || n == 0.0 {
                return (s.mv, n);
            }
            let q = s.q.unwrap();
            let earned = if q >= bar { n } else { (1.5 * s.prior * sqrt_n / (bar - q) - 1.0).ceil().max(0.0) };
            let keep = earned.max((n - (k * s.prior * n_root).sqrt()).ceil()).min(n);
            (s.mv, if keep <= 1.0 { 0.0 } else { keep })
        })
        .collect();
    let total: f32 = kept.iter().map(|x| x.1).sum();
    assert!(kept.iter().any(|&(m, n)| n == 0.0 && stat(&r, m).visits == 1), "some one-visit moves are dropped");
    for (m, n) in kept {
        assert!((target(&r, m) - n / total).abs() < 1e-6, "{m}: target {} vs hand {}", target(&r, m), n / total);
    }
}

#[test]
fn forced_playouts_need_a_puct_root() {
    let gumbel = SearchConfig { forced_playouts: 2.0, ..SearchConfig::gumbel() };
    assert!(gumbel.validate().unwrap_err().contains("forced_playouts"));
    assert!(SearchConfig { forced_playouts: -1.0, ..cfg(10) }.validate().unwrap_err().contains("forced_playouts = -1"));
    assert!(SearchConfig { forced_playouts: 2.0, ..cfg(10) }.validate().is_ok());
}
