//! SGD with momentum and L2 weight decay (added to the gradient), written here
//! because tch cannot save its optimizers' internal state: the momentum buffers are plain
//! tensors saved beside each checkpoint, so a resumed run continues exactly.

use crate::nn::checkpoint::{read_into, write_tensors};
use crate::nn::{NnError, TaflNet};
use std::collections::HashMap;
use std::path::Path;
use tch::Tensor;

pub struct Sgd {
    /// (name, parameter, momentum buffer), trainable parameters only.
    params: Vec<(String, Tensor, Tensor)>,
    pub momentum: f64,
    pub weight_decay: f64,
}

impl Sgd {
    pub fn new(net: &TaflNet, momentum: f64, weight_decay: f64) -> Sgd {
        let mut params: Vec<(String, Tensor, Tensor)> = net
            .vs
            .variables()
            .into_iter()
            .filter(|(_, t)| t.requires_grad())
            .map(|(name, t)| {
                let buf = t.zeros_like();
                (name, t, buf)
            })
            .collect();
        params.sort_by(|a, b| a.0.cmp(&b.0));
        Sgd { params, momentum, weight_decay }
    }

    /// Clears the gradients before a backward pass.
    pub fn zero_grad(&mut self) {
        for (_, p, _) in &mut self.params {
            p.zero_grad();
        }
    }

    /// One update: buf = momentum * buf + grad + weight_decay * w; w -= lr * buf.
    pub fn step(&mut self, lr: f64) {
        tch::no_grad(|| {
            for (_, p, buf) in &mut self.params {
                let g = p.grad();
                if !g.defined() {
                    continue;
                }
                let g = g + &*p * self.weight_decay;
                let _ = buf.g_mul_scalar_(self.momentum);
                let _ = buf.g_add_(&g);
                let _ = p.g_sub_(&(&*buf * lr));
            }
        });
    }

    pub fn save(&self, path: &Path) -> Result<(), NnError> {
        write_tensors(path, self.params.iter().map(|(n, _, b)| (n.clone(), b.shallow_clone())).collect(), None)
    }

    pub fn load(&mut self, path: &Path) -> Result<(), NnError> {
        let mut bufs: HashMap<String, Tensor> = self.params.iter().map(|(n, _, b)| (n.clone(), b.shallow_clone())).collect();
        read_into(path, &mut bufs)
    }
}
