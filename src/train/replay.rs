//! The replay window: training samples from the most recent self-play games, and batches
//! drawn from it with a random board symmetry each.
//!
//! A sample keeps the encoded planes quantised to bytes (they are 0/1 except the ply
//! progress, which loses under 0.2% of its range), the search policy as (policy index,
//! probability) pairs, and the game result from the side to move's view.

use crate::nn::encoding::{index_move, policy_index, policy_size, Encoder, PLANES};
use crate::nn::Symmetry;
use crate::rules::Variant;
use crate::search::evaluator::wdl_for;
use crate::selfplay::{replay, FinishedGame};
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
}

/// Recent positions, newest last, at most `capacity`.
pub struct ReplayWindow {
    variant: Arc<Variant>,
    encoder: Encoder,
    symmetries: Vec<Symmetry>,
    samples: VecDeque<Sample>,
    capacity: usize,
    discount: f32,
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

impl ReplayWindow {
    /// A window of at most `capacity` positions; `discount` as in [`value_target`].
    pub fn new(variant: Arc<Variant>, capacity: usize, discount: f32) -> ReplayWindow {
        let symmetries = Symmetry::ALL.into_iter().filter(|s| s.preserves(&variant)).collect();
        ReplayWindow { encoder: Encoder::new(&variant), variant, symmetries, samples: VecDeque::new(), capacity, discount }
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

    /// Adds every position of a game (fast-search plies carry a value target only).
    pub fn add_game(&mut self, game: &FinishedGame) {
        let g = self.variant.geometry;
        let mut planes = vec![0f32; self.encoder.len()];
        let n = game.plies.len();
        for (i, (pos, ply)) in replay(&self.variant, &game.plies).enumerate() {
            self.encoder.encode(&pos, &mut planes);
            let sample = Sample {
                planes: planes.iter().map(|&x| (x.clamp(0.0, 1.0) * 255.0).round() as u8).collect(),
                policy: ply.policy.iter().map(|&(m, p)| (policy_index(g, m) as u32, p)).collect(),
                wdl: value_target(game.outcome.winner, pos.to_move(), n - i, self.discount),
            };
            self.samples.push_back(sample);
        }
        while self.samples.len() > self.capacity {
            self.samples.pop_front();
        }
    }

    /// A batch of `size` samples drawn uniformly, each under a random symmetry.
    pub fn batch(&self, size: usize, rng: &mut impl Rng, device: Device) -> Batch {
        let g = self.variant.geometry;
        let (len, ps, n) = (self.encoder.len(), policy_size(g), g.size() as i64);
        let mut input = vec![0f32; size * len];
        let mut policy = vec![0f32; size * ps];
        let mut mask = vec![0f32; size];
        let mut wdl = vec![0f32; size * 3];
        let mut planes = vec![0f32; len];
        for i in 0..size {
            let s = &self.samples[rng.gen_range(0..self.samples.len())];
            let sym = self.symmetries[rng.gen_range(0..self.symmetries.len())];
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
        }
        let b = size as i64;
        Batch {
            input: Tensor::from_slice(&input).view([b, PLANES as i64, n, n]).to_device(device),
            policy: Tensor::from_slice(&policy).view([b, ps as i64]).to_device(device),
            policy_mask: Tensor::from_slice(&mask).to_device(device),
            wdl: Tensor::from_slice(&wdl).view([b, 3]).to_device(device),
        }
    }
}

/// Policy cross-entropy (over samples with a target), value cross-entropy, and their sum
/// with the value weighted.
pub fn losses(net: &crate::nn::TaflNet, batch: &Batch, value_weight: f64) -> (Tensor, Tensor, Tensor) {
    let (p, v) = net.forward_t(&batch.input, true);
    let logp = p.flatten(1, -1).log_softmax(-1, Kind::Float);
    let per_sample = -(&batch.policy * logp).sum_dim_intlist(-1, false, Kind::Float);
    let count = batch.policy_mask.sum(Kind::Float).clamp_min(1.0);
    let policy_loss = (per_sample * &batch.policy_mask).sum(Kind::Float) / count;
    let value_loss = -(&batch.wdl * v.log_softmax(-1, Kind::Float)).sum_dim_intlist(-1, false, Kind::Float).mean(Kind::Float);
    let total = &policy_loss + &value_loss * value_weight;
    (total, policy_loss, value_loss)
}

#[cfg(test)]
mod tests {
    use super::value_target;
    use crate::rules::Side;

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
