//! The network as a search [`Evaluator`]: encodes a batch, runs one forward pass under
//! `no_grad`, and turns the policy logits of the legal moves into priors.
//!
//! `tch::Tensor` is not `Sync`, so a `NetEvaluator` owns its network and lives on one thread;
//! self-play gives each worker thread its own (see `selfplay`).

use super::encoding::{policy_index, policy_size, Encoder};
use super::net::TaflNet;
use crate::rules::Variant;
use crate::search::{EvalRequest, Evaluation, Evaluator};
use tch::{Device, Kind, Tensor};

pub struct NetEvaluator {
    net: TaflNet,
    encoder: Encoder,
    input: Vec<f32>,
    policy: Vec<f32>,
    wdl: Vec<f32>,
}

impl NetEvaluator {
    pub fn new(net: TaflNet, variant: &Variant) -> NetEvaluator {
        assert_eq!(net.board_size, variant.geometry.size() as usize, "network and variant board sizes");
        NetEvaluator { net, encoder: Encoder::new(variant), input: Vec::new(), policy: Vec::new(), wdl: Vec::new() }
    }

    /// Runs the network on `batch`, leaving raw policy logits and win/draw/loss
    /// probabilities in `self.policy` and `self.wdl`.
    fn forward(&mut self, batch: &[EvalRequest<'_>]) {
        let g = self.encoder.geometry();
        let (b, len, n) = (batch.len(), self.encoder.len(), g.size() as i64);
        self.input.resize(b * len, 0.0);
        for (r, chunk) in batch.iter().zip(self.input.chunks_exact_mut(len)) {
            self.encoder.encode(r.position, chunk);
        }
        let device = self.net.device();
        let x = Tensor::from_slice(&self.input).view([b as i64, (len / (n * n) as usize) as i64, n, n]).to_device(device);
        let (p, v) = tch::no_grad(|| {
            let (p, v) = self.net.forward_t(&x, false);
            (p.flatten(1, -1).to_device(Device::Cpu).contiguous(), v.softmax(-1, Kind::Float).to_device(Device::Cpu).contiguous())
        });
        let ps = policy_size(g);
        self.policy.resize(b * ps, 0.0);
        self.wdl.resize(b * 3, 0.0);
        p.copy_data(&mut self.policy, b * ps);
        v.copy_data(&mut self.wdl, b * 3);
    }
}

impl Evaluator for NetEvaluator {
    fn evaluate(&mut self, batch: &[EvalRequest<'_>]) -> Vec<Evaluation> {
        if batch.is_empty() {
            return Vec::new();
        }
        self.forward(batch);
        let g = self.encoder.geometry();
        let ps = policy_size(g);
        batch
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let logits = &self.policy[i * ps..(i + 1) * ps];
                let mut priors: Vec<f32> = r.moves.iter().map(|&m| logits[policy_index(g, m)]).collect();
                let max = priors.iter().copied().fold(f32::NEG_INFINITY, f32::max);
                let mut total = 0.0;
                for p in priors.iter_mut() {
                    *p = (*p - max).exp();
                    total += *p;
                }
                priors.iter_mut().for_each(|p| *p /= total);
                let w = &self.wdl[i * 3..i * 3 + 3];
                Evaluation { priors, wdl: [w[0], w[1], w[2]] }
            })
            .collect()
    }
}
