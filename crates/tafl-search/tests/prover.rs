//! The proof-number search ([`tafl_search::search::prover`]) against the exhaustive one: where
//! both answer they agree, it refuses the rules under which its proofs would not hold, and it
//! proves a resigned position whose win lies beyond the exhaustive search's horizon.

mod common;

use common::variant;
use std::sync::Arc;
use tafl_search::rules::ruleset::{Repetition, RuleSet};
use tafl_search::rules::{Move, Position, Side};
use tafl_search::search::prover::{prove_win, ProveError, ProveLimit, Proved};
use tafl_search::search::solver::{forced_result, Forced};

fn limit(expansions: u64) -> ProveLimit {
    ProveLimit { expansions, deadline: None }
}

/// Plays `line` from `p` by the rules and says who won at its end.
fn winner_after(p: &Position, line: &[Move]) -> Option<Side> {
    let mut q = p.clone();
    for &m in line {
        q.play(m).expect("the prover's line is legal");
    }
    q.outcome().and_then(|o| o.winner)
}

fn copenhagen(board: &str, to_move: Side) -> Position {
    tafl_search::rules::notation::parse_position(variant("copenhagen"), board, to_move).unwrap()
}

#[test]
fn prover_proves_a_resigned_copenhagen_position_and_its_longest_line_ends_in_the_win() {
    // The final position of a game against hnefatafl-copenhagen's alpha-beta AI, which
    // resigned here as the defenders: the exhaustive search shows it lost within 4 plies and
    // not within 2 (search.rs). A proof of it can be no shorter than 4 plies.
    let p = copenhagen("/5t5/5t5/t3tTt4/1t1t3t1t1/2t1K3t2/3t3t2t/2t3t4/3t3t2t/4t6/5t5/3ttt5/", Side::Defenders);
    let Ok(Proved::Win(shape)) = prove_win(&p, Side::Attackers, limit(200_000)) else { panic!("a proof within the budget") };
    assert!(shape.plies >= 4, "shorter than the exhaustive search allows: {shape:?}");
    assert_eq!(shape.line.len() as u32, shape.plies, "the longest line is shown whole");
    assert_eq!(winner_after(&p, &shape.line), Some(Side::Attackers));
    assert!(shape.positions >= 3 && shape.expansions >= shape.positions as u64 / 2, "{shape:?}");
}

#[test]
fn a_proof_holds_only_if_its_lines_end_before_the_ply_cap() {
    // The same resigned position under a ply cap the proof's longest line needs every ply of
    // (its moves decide the win before the cap's draw), and under one a ply shorter.
    let p = copenhagen("/5t5/5t5/t3tTt4/1t1t3t1t1/2t1K3t2/3t3t2t/2t3t4/3t3t2t/4t6/5t5/3ttt5/", Side::Defenders);
    let Ok(Proved::Win(shape)) = prove_win(&p, Side::Attackers, limit(200_000)) else { panic!("a proof within the budget") };
    let capped = |cap: u32| {
        let v = p.variant();
        let v = Arc::new(v.with_rules(RuleSet { ply_cap: cap, ..v.rules.clone() }).unwrap());
        tafl_search::rules::notation::parse_position(v, "/5t5/5t5/t3tTt4/1t1t3t1t1/2t1K3t2/3t3t2t/2t3t4/3t3t2t/4t6/5t5/3ttt5/", Side::Defenders).unwrap()
    };
    let q = capped(p.ply() + shape.plies);
    assert!(matches!(prove_win(&q, Side::Attackers, limit(200_000)), Ok(Proved::Win(_))));
    let cap = p.ply() + shape.plies - 1;
    let r = capped(cap);
    match prove_win(&r, Side::Attackers, limit(200_000)) {
        Ok(Proved::Win(s)) => assert!(r.ply() + s.plies <= cap, "a proof whose lines reach the cap: {s:?}"),
        Ok(_) | Err(ProveError::ProofReachesPlyCap { .. }) => {}
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn prover_refuses_rules_under_which_a_repetition_could_save_the_loser() {
    // Copenhagen: a repetition is the defenders' loss, so it may prove the attackers' wins but
    // not the defenders'.
    let p = Position::start(variant("copenhagen"));
    assert!(matches!(prove_win(&p, Side::Defenders, limit(10)), Err(ProveError::RepetitionMaySaveTheLoser { .. })));
    assert!(matches!(prove_win(&p, Side::Attackers, limit(10)), Ok(Proved::OutOfLimit { .. })));
    // Brandubh: the mover loses a repetition, which either side may use.
    let b = Position::start(variant("brandubh"));
    for side in [Side::Attackers, Side::Defenders] {
        let Err(e) = prove_win(&b, side, limit(10)) else { panic!("{side:?} refused") };
        assert!(e.to_string().contains("MoverLoses"), "{e}");
    }
}

/// Brandubh with no repetition rule: both sides' wins can be proved.
fn brandubh_without_repetition() -> Arc<tafl_search::rules::Variant> {
    let v = variant("brandubh");
    Arc::new(v.with_rules(RuleSet { repetition: Repetition::None, ..v.rules.clone() }).unwrap())
}

#[test]
fn prover_and_exhaustive_search_agree_on_played_positions() {
    // Random brandubh (no repetition rule) and Copenhagen games. Where the exhaustive search
    // shows a side wins within 3 plies, the prover proves it (with a line no shorter than
    // the exhaustive search's shortest); where the prover's proof is at most 3 plies long,
    // the exhaustive search finds a win within that many plies.
    use rand::{Rng, SeedableRng};
    let (mut proofs, mut no_wins) = (0, 0);
    for v in [brandubh_without_repetition(), variant("copenhagen")] {
        let mut rng = rand::rngs::SmallRng::seed_from_u64(17);
        for _ in 0..8 {
            let mut p = Position::start(v.clone());
            while !p.is_over() && p.ply() < 60 {
                let me = p.to_move();
                for winner in [me, me.opponent()] {
                    let Ok(mut proved) = prove_win(&p, winner, limit(2_000)) else { continue };
                    let exhaustive = forced_result(&p, 3);
                    let shortest = match (&exhaustive, winner == me) {
                        (Forced::Win { plies, .. }, true) | (Forced::Loss { plies, .. }, false) => Some(*plies),
                        _ => None,
                    };
                    if shortest.is_some() && !matches!(proved, Proved::Win(_)) {
                        // A short win the first budget missed: a larger one must find it.
                        proved = prove_win(&p, winner, limit(200_000)).unwrap();
                    }
                    match proved {
                        Proved::Win(shape) => {
                            proofs += 1;
                            assert_eq!(winner_after(&p, &shape.line), Some(winner), "{}", p);
                            if let Some(s) = shortest {
                                assert!(shape.plies >= s, "{p}\nproof {shape:?} shorter than the shortest win {s}");
                            }
                            if shape.plies <= 3 {
                                assert!(shortest.is_some_and(|s| s <= shape.plies), "{p}\nproof {shape:?}, exhaustive {exhaustive:?}");
                            }
                        }
                        Proved::Unchecked { .. } => panic!("{p}\nthe search's proof for {winner:?} did not check"),
                        Proved::Exhausted { .. } | Proved::OutOfLimit { .. } => {
                            no_wins += 1;
                            assert_eq!(shortest, None, "{p}\n{winner:?} wins within 3 plies, the prover found no proof: {proved:?}");
                        }
                    }
                }
                let moves = p.legal_moves();
                p.make(moves[rng.gen_range(0..moves.len())]);
            }
        }
    }
    assert!(proofs >= 10 && no_wins >= 10, "the comparison saw {proofs} proofs and {no_wins} searches without one");
}
