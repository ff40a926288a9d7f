//! SGD with momentum and L2 weight decay (added to the gradient), written here
//! because tch cannot save its optimizers' internal state: the momentum buffers are plain
//! tensors saved beside each checkpoint, so a resumed run continues exactly.

use crate::nn::checkpoint::{read_into, write_tensors, HeadChanges};
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
        Sgd::from_params(net.vs.variables().into_iter().filter(|(_, t)| t.requires_grad()).collect(), momentum, weight_decay)
    }

    /// An optimizer of named parameters (sorted by name), momentum buffers at zero.
    pub fn from_params(params: Vec<(String, Tensor)>, momentum: f64, weight_decay: f64) -> Sgd {
        let mut params: Vec<(String, Tensor, Tensor)> = params
            .into_iter()
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

    /// Reads momentum buffers saved by [`Sgd::save`], all of them, but for the head `changes`
    /// since they were saved: a new ownership head's buffers stay at zero, a dropped one's
    /// are left out, a value layer split per side starts both sides' from the one saved.
    pub fn load(&mut self, path: &Path, changes: HeadChanges) -> Result<(), NnError> {
        let mut bufs: HashMap<String, Tensor> = self.params.iter().map(|(n, _, b)| (n.clone(), b.shallow_clone())).collect();
        read_into(path, &mut bufs, changes)
    }
}

#[cfg(test)]
mod tests {
    use super::Sgd;
    use tch::{Kind, Tensor};

    const W: [f32; 3] = [0.5, -1.25, 2.0];
    const B: [f32; 2] = [0.75, -0.3];
    const C: [f32; 3] = [0.2, -0.7, 1.1];
    const MOMENTUM: f64 = 0.9;
    const WD: f64 = 0.01;
    /// The learning rate of each step (a schedule change between them).
    const LRS: [f64; 3] = [0.1, 0.1, 0.05];

    fn params() -> Vec<(String, Tensor)> {
        vec![("w".into(), Tensor::from_slice(&W).set_requires_grad(true)), ("b".into(), Tensor::from_slice(&B).set_requires_grad(true))]
    }

    /// loss = sum(w * c) + sum(b^2) / 2, so grad w = c and grad b = b.
    fn step(sgd: &mut Sgd, lr: f64) {
        let (w, b) = (&sgd.params[1].1, &sgd.params[0].1);
        let loss = (w * Tensor::from_slice(&C)).sum(Kind::Float) + (b * b).sum(Kind::Float) * 0.5;
        sgd.zero_grad();
        loss.backward();
        sgd.step(lr);
    }

    fn values(t: &Tensor) -> Vec<f32> {
        Vec::<f32>::try_from(t.detach()).unwrap()
    }

    /// [w..., b...] after the steps, by PyTorch's documented rule (dampening 0, no Nesterov):
    /// g = grad + wd * p; buf = g on the first step, else momentum * buf + g; p -= lr * buf.
    fn by_hand() -> Vec<f64> {
        let mut p: Vec<f64> = W.iter().chain(&B).map(|&x| x as f64).collect();
        let mut buf: Vec<Option<f64>> = vec![None; p.len()];
        for lr in LRS {
            for i in 0..p.len() {
                let grad = if i < 3 { C[i] as f64 } else { p[i] };
                let g = grad + WD * p[i];
                let b = buf[i].map_or(g, |b| MOMENTUM * b + g);
                buf[i] = Some(b);
                p[i] -= lr * b;
            }
        }
        p
    }

    /// The same with `torch.optim.SGD`, if a Python with torch is on the PATH (the venv of
    /// `scripts/env.sh`).
    fn by_pytorch() -> Option<Vec<f64>> {
        let script = format!(
            "import torch\n\
             w = torch.tensor({W:?}, requires_grad=True)\n\
             b = torch.tensor({B:?}, requires_grad=True)\n\
             c = torch.tensor({C:?})\n\
             opt = torch.optim.SGD([w, b], lr=0.1, momentum={MOMENTUM}, weight_decay={WD})\n\
             for lr in {LRS:?}:\n\
             \x20   for g in opt.param_groups: g['lr'] = lr\n\
             \x20   opt.zero_grad()\n\
             \x20   ((w * c).sum() + (b * b).sum() / 2).backward()\n\
             \x20   opt.step()\n\
             print(' '.join(repr(x) for x in w.tolist() + b.tolist()))\n"
        );
        let out = std::process::Command::new("python").args(["-c", &script]).output().ok()?;
        if !out.status.success() {
            eprintln!("no PyTorch to compare with: {}", String::from_utf8_lossy(&out.stderr).lines().last().unwrap_or(""));
            return None;
        }
        Some(String::from_utf8(out.stdout).ok()?.split_whitespace().map(|x| x.parse().unwrap()).collect())
    }

    #[test]
    fn sgd_steps_follow_the_pytorch_rule() {
        let mut sgd = Sgd::from_params(params(), MOMENTUM, WD);
        for lr in LRS {
            step(&mut sgd, lr);
        }
        let got: Vec<f64> = values(&sgd.params[1].1).into_iter().chain(values(&sgd.params[0].1)).map(f64::from).collect();
        let hand = by_hand();
        for (g, h) in got.iter().zip(&hand) {
            assert!((g - h).abs() < 1e-6, "{got:?} against the formula {hand:?}");
        }
        // Not a no-op: every parameter moved, momentum included (a plain SGD step differs).
        assert!(got.iter().zip(W.iter().chain(&B)).all(|(g, &x)| (g - x as f64).abs() > 1e-3));
        if let Some(torch) = by_pytorch() {
            eprintln!("torch.optim.SGD gives {torch:?}");
            assert_eq!(torch.len(), got.len());
            for (g, t) in got.iter().zip(&torch) {
                assert!((g - t).abs() < 1e-6, "{got:?} against torch.optim.SGD {torch:?}");
            }
        }
    }

    #[test]
    fn momentum_buffers_round_trip_bit_exactly() {
        let mut sgd = Sgd::from_params(params(), MOMENTUM, WD);
        step(&mut sgd, 0.1);
        step(&mut sgd, 0.1);
        let dir = std::env::temp_dir().join(format!("tafl-lab-sgd-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("optim.safetensors");
        sgd.save(&path).unwrap();
        // A fresh optimizer over copies of the current parameters, buffers loaded.
        let copies = sgd.params.iter().map(|(n, p, _)| (n.clone(), p.detach().copy().set_requires_grad(true))).collect();
        let mut loaded = Sgd::from_params(copies, MOMENTUM, WD);
        loaded.load(&path, Default::default()).unwrap();
        for ((n, _, a), (_, _, b)) in sgd.params.iter().zip(&loaded.params) {
            assert!(a.abs().sum(Kind::Float).double_value(&[]) > 0.0, "{n}: a buffer to compare");
            let (a, b) = (values(a), values(b));
            assert_eq!(a.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), b.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), "{n}");
        }
        // So the next step is the same as without the save and load, to the bit.
        step(&mut sgd, 0.05);
        step(&mut loaded, 0.05);
        for ((n, a, _), (_, b, _)) in sgd.params.iter().zip(&loaded.params) {
            assert_eq!(values(a).iter().map(|x| x.to_bits()).collect::<Vec<_>>(), values(b).iter().map(|x| x.to_bits()).collect::<Vec<_>>(), "{n}");
        }
        // Buffers of another shape are refused.
        let mut other = Sgd::from_params(
            vec![("w".into(), Tensor::zeros([4], (Kind::Float, tch::Device::Cpu))), ("b".into(), Tensor::zeros([2], (Kind::Float, tch::Device::Cpu)))],
            MOMENTUM,
            WD,
        );
        assert!(other.load(&path, Default::default()).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
