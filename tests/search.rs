//! Search without a network: the solver, PUCT against scripted priors, Gumbel schedules,
//! tree reuse and lockstep batching.

mod common;

use common::{board, mv, variant};
use tafl_lab::rules::{Move, Position, Side};
use tafl_lab::search::lockstep::run_all;
use tafl_lab::search::{
    EvalRequest, Evaluation, Evaluator, Proof, RolloutEvaluator, RootPolicy, Search, SearchConfig, UniformEvaluator,
};

fn cfg(sims: u32) -> SearchConfig {
    SearchConfig { simulations: sims, batch: 1, ..SearchConfig::default() }
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

#[test]
fn solver_takes_an_immediate_escape() {
    // The king on c1 reaches the corner a1 in one move.
    let v = variant("brandubh");
    let p = board(
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
    );
    for batch in [1, 8] {
        let mut s = Search::new(p.clone(), SearchConfig { batch, ..cfg(64) }, 1);
        let r = s.run(&mut UniformEvaluator::new());
        assert_eq!(r.best, Some(mv(&p, "c1-a1")), "batch {batch}");
        assert_eq!(r.proof, Proof::Win);
        assert_eq!(r.value, 1.0);
    }
}

#[test]
fn solver_blocks_a_one_move_escape() {
    // The king on c1 threatens c1-a1; only b4-b1 stops it.
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
        assert!(r.moves.iter().all(|m| (m.proof == Proof::Loss) != (m.mv == block) || m.visits == 0 && m.proof == Proof::Unknown));
    }
}

#[test]
fn solver_finds_a_forced_escape_in_two() {
    // The king on the throne can reach an empty edge file or rank, threatening two corners at
    // once; one attacker move cannot cover both.
    let v = variant("brandubh");
    let p = board(
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
    );
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
                let raw: Vec<f32> = r
                    .moves
                    .iter()
                    .map(|m| self.weights.iter().find(|(w, _)| w == m).map_or(0.02, |&(_, p)| p))
                    .collect();
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
        let mut s = Search::new(p.clone(), SearchConfig { root, batch, ..cfg(k as u32 + 1) }, 6);
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
    let mut s = Search::new(p, SearchConfig { batch: 16, ..cfg(100) }, 10);
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
    let mut searches: Vec<Search> =
        (0..6).map(|i| Search::new(p.clone(), SearchConfig { batch: 4, ..cfg(40) }, i)).collect();
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
