//! The replay window: training samples from the most recent self-play games, and batches
//! drawn from it with a random board symmetry each.
//!
//! A window encodes in the encoding of the network it trains (a version-1 model continues on
//! version-1 planes). A sample keeps the encoded planes quantised to bytes (they are 0/1 in
//! every encoding except the ply progress, which loses under 0.2% of its range), the search policy as (policy index,
//! probability) pairs, and the game result from the side to move's view; with an ownership
//! loss, also the final board of its game from the side to move's view
//! ([`ownership_target`]).

use crate::nn::encoding::{index_move, policy_index, policy_size, Encoder, Encoding};
use crate::nn::Symmetry;
use crate::rules::{Position, Variant};
use crate::search::evaluator::wdl_for;
use crate::selfplay::{replay, FinishedGame, PlyRecord};
use rand::Rng;
use std::collections::VecDeque;
use std::sync::Arc;
use tch::{Device, Kind, Tensor};

/// One training position.
#[derive(Clone, Debug)]
pub struct Sample {
    planes: Vec<u8>,
    policy: Vec<(u32, f32)>,
    wdl: [f32; 3],
    /// The ownership classes of [`ownership_target`] by dense square (empty when the window
    /// keeps none or the game has no board end: no ownership target).
    ownership: Vec<u8>,
}

/// A training batch on a device.
pub struct Batch {
    pub input: Tensor,
    /// `[B, P]` target distribution (zeros for samples without a policy target).
    pub policy: Tensor,
    /// `[B]` 1 where the sample has a policy target.
    pub policy_mask: Tensor,
    /// `[B, 3]` win/draw/loss target.
    pub wdl: Tensor,
    /// `[B, 3, N, N]` one-hot ownership target (classes of [`ownership_target`]), when the
    /// window keeps it; all zeros for a sample without one.
    pub ownership: Option<Tensor>,
}

impl Batch {
    /// This batch followed by `other` (the same network's encoding and board).
    pub fn cat(&self, other: &Batch) -> Batch {
        Batch {
            input: Tensor::cat(&[&self.input, &other.input], 0),
            policy: Tensor::cat(&[&self.policy, &other.policy], 0),
            policy_mask: Tensor::cat(&[&self.policy_mask, &other.policy_mask], 0),
            wdl: Tensor::cat(&[&self.wdl, &other.wdl], 0),
            ownership: match (&self.ownership, &other.ownership) {
                (Some(a), Some(b)) => Some(Tensor::cat(&[a, b], 0)),
                (None, None) => None,
                // Both windows follow the network's head (`with_ownership`): a mix would train
                // without the loss and say nothing.
                _ => panic!("Batch::cat: one batch has ownership targets and the other not"),
            },
        }
    }
}

/// Recent positions, newest last, at most `capacity`.
pub struct ReplayWindow {
    variant: Arc<Variant>,
    encoder: Encoder,
    symmetries: Vec<Symmetry>,
    samples: VecDeque<Sample>,
    capacity: usize,
    discount: f32,
    search_share: f32,
    search_horizon: f32,
    ownership: bool,
}

/// Ownership class of a square holding the side to move's piece (the king is the defenders').
pub const OWN: u8 = 0;
/// Ownership class of an empty square.
pub const EMPTY: u8 = 1;
/// Ownership class of a square holding the opponent's piece.
pub const THEIRS: u8 = 2;

/// The ownership target of a position whose side to move is `to_move`, in a game that ended
/// on the board `end`: per square (dense order), [`OWN`], [`EMPTY`] or [`THEIRS`] at the end.
/// Whose pieces survive where is what captures, blockades and escapes come to: many outcomes
/// a position where the result is one (KataGo's ownership target, with pieces for
/// territory). A captured king stays on the board in the rules' final position (the capture
/// only decides the game); here its square is empty. `None` when the rules did not end the
/// game on this board (a resignation or a loss on time in a human record, a self-play game
/// stopped at a ply cap): such a board is no end to learn.
pub fn ownership_target(end: &Position, to_move: crate::rules::Side) -> Option<Vec<u8>> {
    let outcome = end.outcome()?;
    let g = end.geometry();
    let mut classes = vec![EMPTY; g.num_squares()];
    for (sq, piece) in end.pieces() {
        classes[g.dense(sq)] = match piece {
            crate::rules::Piece::King if outcome.reason == crate::rules::Reason::KingCaptured => EMPTY,
            _ if piece.side() == to_move => OWN,
            _ => THEIRS,
        };
    }
    Some(classes)
}

/// The value target of a position `remaining` plies before the end of a game won by
/// `winner`, from `to_move`'s view: the result, with weight `discount^remaining`, the rest on
/// a draw. With a discount below 1 a lost position far from the end is worth more than one
/// close to it, which gives the losing side something to learn from in lopsided self-play
/// (and the winner a reason to win sooner). 1 gives the plain game result.
pub fn value_target(winner: Option<crate::rules::Side>, to_move: crate::rules::Side, remaining: usize, discount: f32) -> [f32; 3] {
    let w = wdl_for(winner, to_move);
    if winner.is_none() || discount >= 1.0 {
        return w;
    }
    let s = discount.powi(remaining as i32);
    [w[0] * s, 1.0 - s, w[2] * s]
}

/// A value target with `share` of it taken from the search: `value` (in [-1, 1], for the side
/// to move; see [`search_values`]) as the win/loss split ((1 + v)/2, 0, (1 - v)/2), the rest
/// the game's target. A game's result says who won, after many moves that each could have
/// changed it; the search's value says what the position was worth when it was searched, with
/// less noise and more bias ("Q + z" averaging). `None` (plies of fast searches, whose few
/// simulations are not trained on, and random opening plies) keeps the game's target. The
/// root value is a win-minus-loss expectation with no draw share, so the mixed target moves
/// weight off the draw (its expected score is unchanged): tafl games rarely end drawn, but a
/// variant where they often do would want the search's own draw estimate stored with the ply.
pub fn mix_search_value(target: [f32; 3], value: Option<f32>, share: f32) -> [f32; 3] {
    let Some(v) = value.filter(|_| share > 0.0) else {
        return target;
    };
    let v = v.clamp(-1.0, 1.0);
    let q = [(1.0 + v) / 2.0, 0.0, (1.0 - v) / 2.0];
    std::array::from_fn(|k| (1.0 - share) * target[k] + share * q[k])
}

/// The search value each ply's value target mixes in ([`mix_search_value`]), for its side to
/// move; `None` where the ply was not fully searched. With `horizon` 1 it is the ply's own
/// root value. Above 1 it is a short-term value target (KataGo's, here mixed into the one
/// value head rather than given heads of its own): the exponentially weighted average, with
/// λ = 1 - 1/`horizon`, of the root values of this and the later fully searched plies (each
/// from this ply's side's view), weight (1 - λ)λ^m on the m-th of them, and the weight left
/// after the last, λ^M, on the game's plain result (1, 0 or -1). A root value says what a
/// 64-simulation search saw in one position; its average over the next few searches says
/// what the game came to a few moves on, with less of one search's noise and less of a whole
/// game's. `first` is the side to move at the first ply; every move passes the turn.
pub fn search_values(plies: &[PlyRecord], first: crate::rules::Side, winner: Option<crate::rules::Side>, horizon: f32) -> Vec<Option<f32>> {
    use crate::rules::Side;
    let lambda = 1.0 - 1.0 / horizon.max(1.0);
    let att = |side: Side, v: f32| if side == Side::Attackers { v } else { -v };
    // Backwards, in the attackers' view: the tail is the result.
    let mut s = match winner {
        Some(w) => att(w, 1.0),
        None => 0.0,
    };
    let mut out = vec![None; plies.len()];
    for (k, ply) in plies.iter().enumerate().rev() {
        let side = if k % 2 == 0 { first } else { first.opponent() };
        if ply.full {
            s = (1.0 - lambda) * att(side, ply.value.clamp(-1.0, 1.0)) + lambda * s;
            out[k] = Some(att(side, s));
        }
    }
    out
}

impl ReplayWindow {
    /// A window of at most `capacity` positions encoded in `encoding` (the network's);
    /// `discount` as in [`value_target`].
    pub fn new(variant: Arc<Variant>, encoding: Encoding, capacity: usize, discount: f32) -> ReplayWindow {
        let symmetries = Symmetry::ALL.into_iter().filter(|s| s.preserves(&variant)).collect();
        ReplayWindow {
            encoder: Encoder::new(&variant, encoding),
            variant,
            symmetries,
            samples: VecDeque::new(),
            capacity,
            discount,
            search_share: 0.0,
            search_horizon: 1.0,
            ownership: false,
        }
    }

    /// The same window keeping each position's ownership target ([`ownership_target`]) for
    /// a network with the ownership head; batches then carry it.
    pub fn with_ownership(self, on: bool) -> ReplayWindow {
        ReplayWindow { ownership: on, ..self }
    }

    /// The same window with `share` of each fully searched position's value target taken from
    /// the search ([`mix_search_value`]): its own root value with `horizon` 1, a short-term
    /// average of the next searches' values above ([`search_values`]). Share 0, the default,
    /// trains on results only.
    pub fn with_search_value(self, share: f32, horizon: f32) -> ReplayWindow {
        ReplayWindow { search_share: share, search_horizon: horizon, ..self }
    }

    pub fn len(&self) -> usize {
        self.samples.len()
    }

    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }

    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// The encoding of the samples.
    pub fn encoding(&self) -> Encoding {
        self.encoder.encoding()
    }

    /// Adds every position of a game (fast-search plies carry a value target only).
    pub fn add_game(&mut self, game: &FinishedGame) {
        let g = self.variant.geometry;
        let mut planes = vec![0f32; self.encoder.len()];
        let n = game.plies.len();
        // The game's two ownership targets (one for each side to move), made once.
        let targets = self.ownership.then(|| {
            let mut end = Position::start(self.variant.clone());
            for p in &game.plies {
                end.make(p.mv);
            }
            let of = |side| ownership_target(&end, side).unwrap_or_default();
            (of(crate::rules::Side::Attackers), of(crate::rules::Side::Defenders))
        });
        let searched = self.search_values(game);
        for (i, (pos, ply)) in replay(&self.variant, &game.plies).enumerate() {
            self.encoder.encode(&pos, &mut planes);
            let sample = Sample {
                planes: planes.iter().map(|&x| (x.clamp(0.0, 1.0) * 255.0).round() as u8).collect(),
                policy: ply.policy.iter().map(|&(m, p)| (policy_index(g, m) as u32, p)).collect(),
                wdl: mix_search_value(value_target(game.outcome.winner, pos.to_move(), n - i, self.discount), searched[i], self.search_share),
                ownership: match (&targets, pos.to_move()) {
                    (None, _) => Vec::new(),
                    (Some((attackers, _)), crate::rules::Side::Attackers) => attackers.clone(),
                    (Some((_, defenders)), crate::rules::Side::Defenders) => defenders.clone(),
                },
            };
            self.samples.push_back(sample);
        }
        while self.samples.len() > self.capacity {
            self.samples.pop_front();
        }
    }

    /// A game's [`search_values`] with this window's horizon (all `None` with no search share).
    fn search_values(&self, game: &FinishedGame) -> Vec<Option<f32>> {
        if self.search_share <= 0.0 {
            return vec![None; game.plies.len()];
        }
        search_values(&game.plies, self.variant.rules.first, game.outcome.winner, self.search_horizon)
    }

    /// A batch of `size` samples drawn uniformly, each under a random symmetry.
    pub fn batch(&self, size: usize, rng: &mut impl Rng, device: Device) -> Batch {
        let picks: Vec<(usize, Symmetry)> =
            (0..size).map(|_| (rng.gen_range(0..self.samples.len()), self.symmetries[rng.gen_range(0..self.symmetries.len())])).collect();
        self.batch_of(&picks, device)
    }

    /// The samples `start..start + len` in order, as stored (no symmetry): for measuring.
    pub fn batch_range(&self, start: usize, len: usize, device: Device) -> Batch {
        let picks: Vec<(usize, Symmetry)> = (start..start + len).map(|i| (i, Symmetry::IDENTITY)).collect();
        self.batch_of(&picks, device)
    }

    fn batch_of(&self, picks: &[(usize, Symmetry)], device: Device) -> Batch {
        let g = self.variant.geometry;
        let size = picks.len();
        let (len, ps, n) = (self.encoder.len(), policy_size(g), g.size() as i64);
        let planes_per_sample = self.encoder.encoding().planes() as i64;
        let mut input = vec![0f32; size * len];
        let mut policy = vec![0f32; size * ps];
        let mut mask = vec![0f32; size];
        let mut wdl = vec![0f32; size * 3];
        let squares = g.num_squares();
        let mut own = vec![0f32; if self.ownership { size * 3 * squares } else { 0 }];
        let mut planes = vec![0f32; len];
        for (i, &(k, sym)) in picks.iter().enumerate() {
            let s = &self.samples[k];
            for (x, &q) in planes.iter_mut().zip(&s.planes) {
                *x = q as f32 / 255.0;
            }
            input[i * len..(i + 1) * len].copy_from_slice(&sym.planes(g, &planes));
            for &(idx, p) in &s.policy {
                let m = index_move(g, idx as usize).expect("stored indices are moves");
                policy[i * ps + policy_index(g, sym.mv(g, m))] = p;
            }
            mask[i] = if s.policy.is_empty() { 0.0 } else { 1.0 };
            wdl[i * 3..i * 3 + 3].copy_from_slice(&s.wdl);
            if self.ownership && !s.ownership.is_empty() {
                let rows = &mut own[i * 3 * squares..(i + 1) * 3 * squares];
                for sq in g.squares() {
                    let class = s.ownership[g.dense(sq)] as usize;
                    rows[class * squares + g.dense(sym.square(g, sq))] = 1.0;
                }
            }
        }
        let b = size as i64;
        Batch {
            input: Tensor::from_slice(&input).view([b, planes_per_sample, n, n]).to_device(device),
            policy: Tensor::from_slice(&policy).view([b, ps as i64]).to_device(device),
            policy_mask: Tensor::from_slice(&mask).to_device(device),
            wdl: Tensor::from_slice(&wdl).view([b, 3]).to_device(device),
            ownership: self.ownership.then(|| Tensor::from_slice(&own).view([b, 3, n, n]).to_device(device)),
        }
    }
}

/// The losses of a training step: policy cross-entropy (over samples with a target), value
/// cross-entropy, the ownership cross-entropy (mean over samples and squares) when the
/// network has that head and the batch its target, and their sum with the weights of
/// [`LossWeights`].
pub struct StepLosses {
    pub total: Tensor,
    pub policy: Tensor,
    pub value: Tensor,
    pub ownership: Option<Tensor>,
}

/// Weights of the value and ownership losses against the policy loss.
#[derive(Clone, Copy, Debug)]
pub struct LossWeights {
    pub value: f64,
    pub ownership: f64,
}

impl LossWeights {
    /// The value weight alone (no ownership loss).
    pub fn value(value: f64) -> LossWeights {
        LossWeights { value, ownership: 0.0 }
    }
}

/// The losses of `net` in training mode on `batch`.
pub fn losses(net: &crate::nn::TaflNet, batch: &Batch, weights: LossWeights) -> StepLosses {
    let (p, v, own) = net.forward_with_ownership(&batch.input, true);
    let (total, policy, value) = losses_of(&p, &v, batch, weights.value);
    let ownership = match (own, &batch.ownership) {
        (Some(o), Some(t)) if weights.ownership > 0.0 => Some(ownership_loss(&o, t)),
        _ => None,
    };
    let total = match &ownership {
        Some(l) => total + l * weights.ownership,
        None => total,
    };
    StepLosses { total, policy, value, ownership }
}

/// Policy cross-entropy (over samples with a target), value cross-entropy, and their sum
/// with the value weighted, of the network's outputs: policy logits `[B, ...]` (flattened
/// per sample) and win/draw/loss logits `[B, 3]`.
pub fn losses_of(p: &Tensor, v: &Tensor, batch: &Batch, value_weight: f64) -> (Tensor, Tensor, Tensor) {
    let logp = p.flatten(1, -1).log_softmax(-1, Kind::Float);
    let per_sample = -(&batch.policy * logp).sum_dim_intlist(-1, false, Kind::Float);
    let count = batch.policy_mask.sum(Kind::Float).clamp_min(1.0);
    let policy_loss = (per_sample * &batch.policy_mask).sum(Kind::Float) / count;
    let value_loss = -(&batch.wdl * v.log_softmax(-1, Kind::Float)).sum_dim_intlist(-1, false, Kind::Float).mean(Kind::Float);
    let total = &policy_loss + &value_loss * value_weight;
    (total, policy_loss, value_loss)
}

/// Cross-entropy of ownership logits `[B, 3, N, N]` against one-hot targets of the same
/// shape, averaged over squares and over the samples that have a target (a sample whose
/// target is all zeros has none; 0 when no sample has one).
pub fn ownership_loss(logits: &Tensor, target: &Tensor) -> Tensor {
    let per_square = -(target * logits.log_softmax(1, Kind::Float)).sum_dim_intlist(1, false, Kind::Float);
    let per_sample = per_square.mean_dim([1i64, 2].as_slice(), false, Kind::Float);
    let has = target.sum_dim_intlist([1i64, 2, 3].as_slice(), false, Kind::Float).gt(0.0).to_kind(Kind::Float);
    per_sample.sum(Kind::Float) / has.sum(Kind::Float).clamp_min(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::{Position, Side};
    use crate::selfplay::PlyRecord;
    use rand::rngs::SmallRng;
    use rand::SeedableRng;

    fn brandubh() -> Arc<Variant> {
        Arc::new(Variant::preset("brandubh").expect("preset"))
    }

    /// A game of random legal moves; even plies are full searches with a made-up policy over
    /// the legal moves (the played move weighted most), odd plies fast ones.
    fn random_game(v: &Arc<Variant>, seed: u64, max_plies: usize) -> FinishedGame {
        let mut rng = SmallRng::seed_from_u64(seed);
        let mut pos = Position::start(v.clone());
        let mut plies = Vec::new();
        while pos.outcome().is_none() && plies.len() < max_plies {
            let moves = pos.legal_moves();
            let mv = moves[rng.gen_range(0..moves.len())];
            let full = plies.len() % 2 == 0;
            let policy = if full {
                let w: Vec<f32> = moves.iter().map(|&m| if m == mv { 10.0 } else { rng.gen_range(0.0..1.0) }).collect();
                let sum: f32 = w.iter().sum();
                moves.iter().zip(&w).map(|(&m, &x)| (m, x / sum)).collect()
            } else {
                Vec::new()
            };
            // A made-up root value in [-1, 1) (not from the game's random stream, so the moves stay
            // those of the seed).
            let value = (plies.len() * 37 % 200) as f32 / 100.0 - 1.0;
            plies.push(PlyRecord { mv, policy, full, value });
            pos.make(mv);
        }
        let outcome = pos.outcome().unwrap_or(crate::rules::Outcome::win(Side::Defenders, crate::rules::Reason::KingCaptured));
        FinishedGame { plies, outcome, past: None }
    }

    /// A sample as the tests compare it: planes, policy, value target.
    type Sample = (Vec<u8>, Vec<(u32, f32)>, [f32; 3]);

    /// The samples a game should give, in order.
    fn expected(w: &ReplayWindow, game: &FinishedGame) -> Vec<Sample> {
        let g = w.variant.geometry;
        let n = game.plies.len();
        let searched = w.search_values(game);
        replay(&w.variant, &game.plies)
            .enumerate()
            .map(|(i, (pos, ply))| {
                let planes = w.encoder.planes(&pos).iter().map(|&x| (x.clamp(0.0, 1.0) * 255.0).round() as u8).collect();
                let policy = ply.policy.iter().map(|&(m, p)| (policy_index(g, m) as u32, p)).collect();
                (planes, policy, mix_search_value(value_target(game.outcome.winner, pos.to_move(), n - i, w.discount), searched[i], w.search_share))
            })
            .collect()
    }

    fn contents(w: &ReplayWindow) -> Vec<Sample> {
        w.samples.iter().map(|s| (s.planes.clone(), s.policy.clone(), s.wdl)).collect()
    }

    #[test]
    fn the_window_keeps_the_newest_positions_in_order() {
        let v = brandubh();
        let (a, b, c) = (random_game(&v, 1, 20), random_game(&v, 2, 15), random_game(&v, 3, 500));
        let (na, nb) = (a.plies.len(), b.plies.len());
        assert!(na > 10 && nb > 10);
        let capacity = na + nb - 7;
        let mut w = ReplayWindow::new(v.clone(), Encoding::NEWEST, capacity, 0.97);
        w.add_game(&a);
        assert_eq!((w.len(), w.capacity()), (na, capacity));
        assert_eq!(contents(&w), expected(&w, &a));
        w.add_game(&b);
        assert_eq!(w.len(), capacity);
        // The 7 oldest positions (the start of game a) went first; then a's rest, then b.
        let mut want = expected(&w, &a)[7..].to_vec();
        want.extend(expected(&w, &b));
        assert_eq!(contents(&w), want);
        // A game longer than the window leaves only its own last positions.
        let nc = c.plies.len();
        assert!(nc > capacity, "{nc} plies");
        w.add_game(&c);
        assert_eq!(contents(&w), expected(&w, &c)[nc - capacity..].to_vec());
        // Fast-search plies have no policy target; the value target is the discounted result.
        assert!(w.samples.iter().any(|s| s.policy.is_empty()) && w.samples.iter().any(|s| !s.policy.is_empty()));
    }

    #[test]
    fn a_search_share_mixes_the_root_value_into_fully_searched_plies_only() {
        let v = brandubh();
        let game = random_game(&v, 4, 40);
        let plain = {
            let mut w = ReplayWindow::new(v.clone(), Encoding::NEWEST, 1000, 0.97);
            w.add_game(&game);
            contents(&w)
        };
        let mut w = ReplayWindow::new(v.clone(), Encoding::NEWEST, 1000, 0.97).with_search_value(0.25, 1.0);
        w.add_game(&game);
        let mixed = contents(&w);
        assert_eq!(mixed.len(), game.plies.len());
        let mut changed = 0;
        for ((p, m), ply) in plain.iter().zip(&mixed).zip(&game.plies) {
            assert_eq!((&p.0, &p.1), (&m.0, &m.1), "planes and policy do not change");
            let want = if ply.full {
                let q = [(1.0 + ply.value) / 2.0, 0.0, (1.0 - ply.value) / 2.0];
                [0.75 * p.2[0] + 0.25 * q[0], 0.75 * p.2[1], 0.75 * p.2[2] + 0.25 * q[2]]
            } else {
                p.2
            };
            assert!(want.iter().zip(&m.2).all(|(a, b)| (a - b).abs() < 1e-6), "{:?} against {want:?} (full: {})", m.2, ply.full);
            assert!((m.2.iter().sum::<f32>() - 1.0).abs() < 1e-5);
            changed += usize::from(m.2 != p.2);
        }
        assert!(changed >= game.plies.len() / 3, "{changed} targets moved");
    }

    /// Short-term search values, worked by hand: four plies (attackers, defenders, attackers,
    /// defenders), the third a fast search, won by the defenders; horizon 2 (λ = 1/2).
    /// Backwards in the attackers' view from the result -1: ply 3 (defenders' value 1, so -1)
    /// gives -1; ply 2 is fast: none; ply 1 (-0.5, so +0.5) gives 0.25 - 0.5 = -0.25; ply 0
    /// (0.5) gives 0.25 - 0.125 = 0.125. Each for its own side to move.
    #[test]
    fn short_term_search_values_average_the_next_searches_and_end_on_the_result() {
        let v = brandubh();
        let mv = Position::start(v.clone()).legal_moves()[0];
        let ply = |value: f32, full: bool| PlyRecord { mv, policy: Vec::new(), full, value };
        let plies = [ply(0.5, true), ply(-0.5, true), ply(0.3, false), ply(1.0, true)];
        let sides = [Side::Attackers, Side::Defenders, Side::Attackers, Side::Defenders];
        let got = search_values(&plies, Side::Attackers, Some(Side::Defenders), 2.0);
        assert_eq!(got, vec![Some(0.125), Some(0.25), None, Some(1.0)]);
        // Horizon 1 is each fully searched ply's own value (plain "Q + z").
        assert_eq!(search_values(&plies, Side::Attackers, Some(Side::Defenders), 1.0), vec![Some(0.5), Some(-0.5), None, Some(1.0)]);
        // A long horizon comes near the result itself, for each side; a draw's result is 0.
        let long = search_values(&plies, Side::Attackers, Some(Side::Defenders), 1e4);
        assert!(long.iter().zip(&sides).all(|(v, &s)| v.map_or(true, |v| (v - if s == Side::Defenders { 1.0 } else { -1.0 }).abs() < 1e-3)), "{long:?}");
        let drawn = search_values(&plies, Side::Attackers, None, 1e4);
        assert!(drawn.iter().flatten().all(|v| v.abs() < 1e-3), "{drawn:?}");
    }

    /// In the window, a horizon moves fully searched plies' targets off their own root values
    /// (towards the later ones') and leaves the rest on the result.
    #[test]
    fn a_search_horizon_changes_only_fully_searched_targets() {
        let v = brandubh();
        let game = random_game(&v, 4, 40);
        let targets = |horizon: f32| {
            let mut w = ReplayWindow::new(v.clone(), Encoding::NEWEST, 1000, 1.0).with_search_value(0.5, horizon);
            w.add_game(&game);
            contents(&w)
        };
        let (own, short) = (targets(1.0), targets(6.0));
        let mut moved = 0;
        for ((a, b), ply) in own.iter().zip(&short).zip(&game.plies) {
            assert!((b.2.iter().sum::<f32>() - 1.0).abs() < 1e-5);
            if ply.full {
                moved += usize::from(a.2 != b.2);
            } else {
                assert_eq!(a.2, b.2, "a fast ply keeps the result");
            }
        }
        assert!(moved >= game.plies.len() / 3, "{moved} targets moved");
    }

    #[test]
    fn batches_transform_planes_and_policy_by_the_same_symmetry() {
        for encoding in Encoding::ALL {
            batches_transform_by_the_same_symmetry(encoding);
        }
    }

    fn batches_transform_by_the_same_symmetry(encoding: Encoding) {
        let v = brandubh();
        let g = v.geometry;
        let mut w = ReplayWindow::new(v.clone(), encoding, 10_000, 0.9).with_ownership(true);
        for seed in 0..3 {
            w.add_game(&random_game(&v, 10 + seed, 500));
        }
        assert!(w.samples.iter().all(|s| !s.ownership.is_empty()), "the random games end by the rules: each position has an ownership target");
        assert_eq!(w.symmetries.len(), 8, "brandubh has every symmetry");
        let size = 96;
        let batch = w.batch(size, &mut SmallRng::seed_from_u64(5), Device::Cpu);
        let nn = g.num_squares();
        let (len, ps) = (w.encoder.len(), policy_size(g));
        assert_eq!(batch.input.size(), [size as i64, encoding.planes() as i64, g.size() as i64, g.size() as i64]);
        assert_eq!(batch.policy.size(), [size as i64, ps as i64]);
        assert_eq!(batch.wdl.size(), [size as i64, 3]);
        let input = Vec::<f32>::try_from(batch.input.flatten(0, -1)).unwrap();
        let policy = Vec::<f32>::try_from(batch.policy.flatten(0, -1)).unwrap();
        let mask = Vec::<f32>::try_from(&batch.policy_mask).unwrap();
        let wdl = Vec::<f32>::try_from(batch.wdl.flatten(0, -1)).unwrap();
        let own = batch.ownership.as_ref().expect("the window keeps ownership");
        assert_eq!(own.size(), [size as i64, 3, g.size() as i64, g.size() as i64]);
        let own = Vec::<f32>::try_from(own.flatten(0, -1)).unwrap();
        let plane = |name: &str| encoding.plane_names().iter().position(|&n| n == name).unwrap() * nn;
        let mut transformed = 0;
        for i in 0..size {
            let x = &input[i * len..(i + 1) * len];
            let pol = &policy[i * ps..(i + 1) * ps];
            let ow = &own[i * 3 * nn..(i + 1) * 3 * nn];
            // Some sample under some symmetry gives this row: planes, policy, mask, value and
            // ownership.
            let found = w.samples.iter().any(|s| {
                let planes: Vec<f32> = s.planes.iter().map(|&q| q as f32 / 255.0).collect();
                w.symmetries.iter().any(|&sym| {
                    let mut want = vec![0f32; ps];
                    for &(idx, p) in &s.policy {
                        want[policy_index(g, sym.mv(g, index_move(g, idx as usize).unwrap()))] = p;
                    }
                    let mut one_hot = vec![0f32; 3 * nn];
                    for (d, &class) in s.ownership.iter().enumerate() {
                        one_hot[class as usize * nn + d] = 1.0;
                    }
                    sym.planes(g, &planes) == x
                        && want == pol
                        && s.wdl == wdl[i * 3..i * 3 + 3]
                        && mask[i] == f32::from(!s.policy.is_empty())
                        && sym.planes(g, &one_hot) == ow
                })
            });
            assert!(found, "row {i} is no sample under any symmetry");
            if !w.samples.iter().any(|s| s.planes.iter().zip(x).all(|(&q, &y)| q as f32 / 255.0 == y)) {
                transformed += 1;
            }
            // Independently of how the rows are made: every move the policy target names
            // starts on a piece of the side to move and lands on an empty square of the
            // row's own (transformed) board.
            let attackers_move = x[plane("attackers_to_move")] == 1.0;
            let occupied = |d: usize| ["attackers", "defenders", "king"].iter().any(|n| x[plane(n) + d] == 1.0);
            let ours = |d: usize| {
                if attackers_move {
                    x[plane("attackers") + d] == 1.0
                } else {
                    x[plane("defenders") + d] == 1.0 || x[plane("king") + d] == 1.0
                }
            };
            let targets: Vec<usize> = (0..ps).filter(|&k| pol[k] > 0.0).collect();
            assert_eq!(!targets.is_empty(), mask[i] == 1.0, "row {i}");
            for k in targets {
                let m = index_move(g, k).expect("targets are on the board");
                assert!(ours(g.dense(m.from)) && !occupied(g.dense(m.to)), "row {i}: target {m} does not fit the board");
            }
            assert!((wdl[i * 3..i * 3 + 3].iter().sum::<f32>() - 1.0).abs() < 1e-6);
            // One ownership class a square.
            assert!((0..nn).all(|d| ow[d] + ow[nn + d] + ow[2 * nn + d] == 1.0), "row {i}");
        }
        assert!(transformed > size / 2, "most rows are under a symmetry other than the identity ({transformed})");
    }

    /// A network of each encoding trains through a window of its own encoding: the batch has
    /// the network's plane count, the losses are finite, and one SGD step lowers the loss on
    /// that batch.
    #[test]
    fn networks_of_each_encoding_train_a_step_through_the_window() {
        let v = brandubh();
        for encoding in Encoding::ALL {
            tch::manual_seed(3);
            let net = crate::nn::TaflNet::new(7, crate::nn::NetConfig::new(1, 8).with_encoding(encoding), Device::Cpu);
            let mut w = ReplayWindow::new(v.clone(), net.config.encoding, 1000, 0.97);
            w.add_game(&random_game(&v, 7, 60));
            let batch = w.batch(32, &mut SmallRng::seed_from_u64(1), Device::Cpu);
            assert_eq!(batch.input.size()[1], encoding.planes() as i64);
            let mut sgd = crate::train::optim::Sgd::new(&net, 0.0, 0.0);
            let before = losses(&net, &batch, LossWeights::value(1.0)).total;
            sgd.zero_grad();
            before.backward();
            sgd.step(0.05);
            let after = losses(&net, &batch, LossWeights::value(1.0)).total;
            let (b, a) = (before.double_value(&[]), after.double_value(&[]));
            assert!(b.is_finite() && a.is_finite() && a < b, "encoding {encoding}: loss {b} then {a}");
        }
    }

    #[test]
    fn losses_match_a_hand_computation() {
        // Three samples over a policy of 3 moves; the second has no policy target.
        let p = Tensor::from_slice(&[1.0f32, 2.0, 3.0, 5.0, -1.0, 0.0, 0.5, 0.5, -2.0]).view([3, 3]);
        let v = Tensor::from_slice(&[0.5f32, 0.0, -0.5, 1.0, 2.0, 0.0, -1.0, 0.25, 3.0]).view([3, 3]);
        let target = [[0.2, 0.8, 0.0], [0.0, 0.0, 0.0], [0.5, 0.25, 0.25]];
        let wdl_t = [[1.0, 0.0, 0.0], [0.0, 0.3, 0.7], [0.1, 0.8, 0.1]];
        let flat = |a: &[[f64; 3]; 3]| a.iter().flatten().map(|&x| x as f32).collect::<Vec<f32>>();
        let batch = Batch {
            input: Tensor::zeros([3], (Kind::Float, Device::Cpu)),
            policy: Tensor::from_slice(&flat(&target)).view([3, 3]),
            policy_mask: Tensor::from_slice(&[1.0f32, 0.0, 1.0]),
            wdl: Tensor::from_slice(&flat(&wdl_t)).view([3, 3]),
            ownership: None,
        };
        let logits_p = [[1.0, 2.0, 3.0], [5.0, -1.0, 0.0], [0.5, 0.5, -2.0]];
        let logits_v = [[0.5, 0.0, -0.5], [1.0, 2.0, 0.0], [-1.0, 0.25, 3.0]];
        // Cross-entropy -sum t * log softmax(z), by hand.
        let ce = |z: &[f64; 3], t: &[f64; 3]| {
            let lse = z.iter().map(|x| x.exp()).sum::<f64>().ln();
            -(0..3).map(|k| t[k] * (z[k] - lse)).sum::<f64>()
        };
        let policy = (ce(&logits_p[0], &target[0]) + ce(&logits_p[2], &target[2])) / 2.0;
        let value = (0..3).map(|i| ce(&logits_v[i], &wdl_t[i])).sum::<f64>() / 3.0;
        let (total, lp, lv) = losses_of(&p, &v, &batch, 0.4);
        let close = |t: &Tensor, want: f64| (t.double_value(&[]) - want).abs() < 1e-5;
        assert!(close(&lp, policy), "policy {} against {policy}", lp.double_value(&[]));
        assert!(close(&lv, value), "value {} against {value}", lv.double_value(&[]));
        assert!(close(&total, policy + 0.4 * value), "total {}", total.double_value(&[]));
        // No policy targets at all: the policy loss is 0, not a division by zero.
        let none = Batch { policy_mask: Tensor::zeros([3], (Kind::Float, Device::Cpu)), policy: batch.policy.zeros_like(), ..batch };
        let (_, lp, _) = losses_of(&p, &v, &none, 1.0);
        assert_eq!(lp.double_value(&[]), 0.0);
    }

    /// Brandubh, attackers first: the king walks out (e4-e6, d4-e4, e4-e1, e1-g1) while the
    /// attackers shuffle a4-a5-a6-a5-a4, and escapes to g1. Every position's ownership target
    /// is the board the game ended on, from its side to move's view:
    ///
    /// ```text
    ///   a b c d e f g
    /// 7 . . . a . . .
    /// 6 . . . a d . .
    /// 5 . . . d . . .
    /// 4 a a d . . a a
    /// 3 . . . d . . .
    /// 2 . . . a . . .
    /// 1 . . . a . . k
    /// ```
    #[test]
    fn ownership_targets_are_the_final_board_from_the_side_to_move() {
        let v = brandubh();
        let g = v.geometry;
        let sq = |s: &str| g.parse_square(s).unwrap();
        let ply = |mv: &str| {
            let (from, to) = mv.split_once('-').unwrap();
            PlyRecord { mv: crate::rules::Move::new(sq(from), sq(to)), policy: Vec::new(), full: false, value: 0.0 }
        };
        let plies: Vec<PlyRecord> = ["a4-a5", "e4-e6", "a5-a6", "d4-e4", "a6-a5", "e4-e1", "a5-a4", "e1-g1"].into_iter().map(ply).collect();
        let mut end = Position::start(v.clone());
        for p in &plies {
            end.make(p.mv);
        }
        let outcome = end.outcome().expect("the king escaped");
        assert_eq!((outcome.winner, outcome.reason), (Some(Side::Defenders), crate::rules::Reason::CornerEscape));
        let game = FinishedGame { plies: plies.clone(), outcome, past: None };
        let mut w = ReplayWindow::new(v.clone(), Encoding::NEWEST, 100, 1.0).with_ownership(true);
        w.add_game(&game);
        let (att, def) = (&w.samples[0].ownership, &w.samples[1].ownership);
        let at = |t: &Vec<u8>, s: &str| t[g.dense(sq(s))];
        let squares = ["g1", "a4", "e6", "d4", "e4", "a5"];
        // The attackers to move (ply 0): the escaped king on g1 is theirs, a4 theirs again.
        assert_eq!(squares.map(|s| at(att, s)), [THEIRS, OWN, THEIRS, EMPTY, EMPTY, EMPTY]);
        // The defenders to move (ply 1): the same board, the other way round.
        assert_eq!(squares.map(|s| at(def, s)), [OWN, THEIRS, OWN, EMPTY, EMPTY, EMPTY]);
        let count = |t: &Vec<u8>, c: u8| t.iter().filter(|&&x| x == c).count();
        assert_eq!((count(att, OWN), count(att, THEIRS), count(att, EMPTY)), (8, 5, 49 - 13));
        assert_eq!((count(def, OWN), count(def, THEIRS)), (5, 8));
        assert!(w.samples.iter().step_by(2).all(|s| &s.ownership == att) && w.samples.iter().skip(1).step_by(2).all(|s| &s.ownership == def));
        // A game stopped before its end (the first two plies) has no board end: no target, and
        // its rows in a batch are all zeros.
        let mut cut = ReplayWindow::new(v.clone(), Encoding::NEWEST, 100, 1.0).with_ownership(true);
        cut.add_game(&FinishedGame { plies: plies[..2].to_vec(), ..game.clone() });
        assert!(cut.samples.iter().all(|s| s.ownership.is_empty()));
        let b = cut.batch(4, &mut SmallRng::seed_from_u64(1), Device::Cpu);
        assert_eq!(b.ownership.expect("the window keeps ownership").abs().sum(Kind::Float).double_value(&[]), 0.0);
        // A window without the ownership loss keeps none, and its batches carry none.
        let mut plain = ReplayWindow::new(v.clone(), Encoding::NEWEST, 100, 1.0);
        plain.add_game(&game);
        assert!(plain.samples.iter().all(|s| s.ownership.is_empty()));
        assert!(plain.batch(4, &mut SmallRng::seed_from_u64(1), Device::Cpu).ownership.is_none());
    }

    /// A captured king stays on the rules' final board; its ownership target says empty.
    ///
    /// ```text
    ///   a b c d e f g
    /// 7 . . . a . . .      the attackers play d7-d6: b6 and d6 take the king on c6
    /// 6 . a k . . . .
    /// 3 . . . . . . d
    /// ```
    #[test]
    fn a_captured_kings_square_is_empty_in_the_ownership_target() {
        let v = brandubh();
        let g = v.geometry;
        let sq = |s: &str| g.parse_square(s).unwrap();
        use crate::rules::Piece;
        let pieces = vec![(sq("d7"), Piece::Attacker), (sq("b6"), Piece::Attacker), (sq("c6"), Piece::King), (sq("g3"), Piece::Defender)];
        let mut end = Position::from_setup(v.clone(), &crate::rules::Setup { size: 7, pieces, to_move: Side::Attackers }).expect("a legal setup");
        end.make(crate::rules::Move::new(sq("d7"), sq("d6")));
        assert_eq!(end.outcome().map(|o| o.reason), Some(crate::rules::Reason::KingCaptured));
        let t = ownership_target(&end, Side::Attackers).expect("the rules ended the game");
        assert_eq!([t[g.dense(sq("c6"))], t[g.dense(sq("b6"))], t[g.dense(sq("d6"))], t[g.dense(sq("g3"))]], [EMPTY, OWN, OWN, THEIRS]);
        assert_eq!(t.iter().filter(|&&c| c != EMPTY).count(), 3);
    }

    /// The ownership loss is the cross-entropy per square, averaged over samples and squares,
    /// and adds to the total with its weight; a network with the head lowers it by training.
    #[test]
    fn the_ownership_loss_is_a_mean_cross_entropy_per_square() {
        // One sample on a 1x1 "board" would not be a tafl board; the loss takes any shape.
        // Two samples of two squares; the second has no target (all zeros) and does not count.
        let logits = Tensor::from_slice(&[2.0f32, 0.0, 0.0, 1.0, -1.0, 3.0, 5.0, 5.0, 0.0, 0.0, 0.0, 0.0]).view([2, 3, 1, 2]);
        let target = Tensor::from_slice(&[1.0f32, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]).view([2, 3, 1, 2]);
        // Square 0: logits (2, 0, -1), class 0; square 1: logits (0, 1, 3), class 2.
        let ce = |z: [f64; 3], k: usize| z.iter().map(|x| x.exp()).sum::<f64>().ln() - z[k];
        let want = (ce([2.0, 0.0, -1.0], 0) + ce([0.0, 1.0, 3.0], 2)) / 2.0;
        assert!((ownership_loss(&logits, &target).double_value(&[]) - want).abs() < 1e-5);
        assert_eq!(ownership_loss(&logits, &target.zeros_like()).double_value(&[]), 0.0, "no targets: 0");

        let v = brandubh();
        tch::manual_seed(5);
        let net = crate::nn::TaflNet::new(7, crate::nn::NetConfig::new(1, 8).with_ownership(true), Device::Cpu);
        let mut w = ReplayWindow::new(v.clone(), net.config.encoding, 1000, 1.0).with_ownership(true);
        w.add_game(&random_game(&v, 9, 500));
        assert!(w.samples.iter().all(|s| !s.ownership.is_empty()), "the random game ends by the rules");
        let batch = w.batch(32, &mut SmallRng::seed_from_u64(2), Device::Cpu);
        let weights = LossWeights { value: 1.0, ownership: 0.5 };
        let l = losses(&net, &batch, weights);
        let o = l.ownership.as_ref().expect("an ownership loss").double_value(&[]);
        let parts = l.policy.double_value(&[]) + l.value.double_value(&[]) + 0.5 * o;
        assert!((l.total.double_value(&[]) - parts).abs() < 1e-4, "total {} against {parts}", l.total.double_value(&[]));
        assert!(losses(&net, &batch, LossWeights::value(1.0)).ownership.is_none(), "weight 0: no ownership loss");
        let mut sgd = crate::train::optim::Sgd::new(&net, 0.0, 0.0);
        for _ in 0..5 {
            let l = losses(&net, &batch, weights);
            sgd.zero_grad();
            l.total.backward();
            sgd.step(0.05);
        }
        let after = losses(&net, &batch, weights).ownership.unwrap().double_value(&[]);
        assert!(after < o, "ownership loss {o} then {after}");
    }

    #[test]
    fn value_targets_discount_towards_a_draw_far_from_the_end() {
        let (a, d) = (Side::Attackers, Side::Defenders);
        assert_eq!(value_target(Some(d), d, 5, 1.0), [1.0, 0.0, 0.0]);
        assert_eq!(value_target(Some(d), a, 5, 1.0), [0.0, 0.0, 1.0]);
        assert_eq!(value_target(None, a, 5, 0.9), [0.0, 1.0, 0.0]);
        let near = value_target(Some(d), a, 1, 0.9);
        let far = value_target(Some(d), a, 30, 0.9);
        assert!((near[2] - 0.9).abs() < 1e-6 && (near[1] - 0.1).abs() < 1e-6);
        assert!(far[2] < near[2], "a loss far away weighs less");
        for t in [near, far, value_target(Some(d), d, 7, 0.95)] {
            assert!((t.iter().sum::<f32>() - 1.0).abs() < 1e-6);
        }
    }
}
