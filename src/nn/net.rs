//! The policy/value network: a ResNet of 3x3 convolutions with batch norm, a convolutional
//! policy head giving logits in the `[4 * (N - 1), N, N]` layout of [`super::encoding`], and a
//! win/draw/loss value head.
//!
//! A network may carry a third head for training only ([`NetConfig::ownership`]): per square,
//! whose piece stands there at the end of the game (the side to move's, nobody's, the
//! opponent's), KataGo's ownership target made tafl's. It gives every position a target of
//! `N * N` outcomes where the result gives one, which teaches the trunk what captures and
//! escapes lead to; evaluation and export never compute it. And its value head may end in
//! one output layer per side to move ([`NetConfig::value_per_side`]).

use super::encoding::Encoding;
use serde::{Deserialize, Serialize};
use tch::nn;
use tch::{Device, Tensor};

/// Size of the trunk, and the input planes it reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NetConfig {
    /// Residual blocks (two convolutions each).
    pub blocks: usize,
    /// Channels of every trunk convolution.
    pub channels: usize,
    /// The input planes (`encoding = 1` or `2`): the stem's input channels, and what every
    /// evaluator, replay window and export feeds this network.
    ///
    /// A missing key reads as version 1 ([`Encoding::LEGACY`]): every file written before the
    /// key existed, a model's metadata or a run's saved `config.toml`, describes a version-1
    /// network, and must go on meaning it. New networks get [`Encoding::NEWEST`] where they
    /// are made instead: [`NetConfig::new`] and [`NetConfig::default_for`], `new-model` and
    /// `pretrain` without `--encoding`, and a config for a new run whose `[net]` names none
    /// (`RunConfig::from_toml`); `train --init` keeps the model's.
    #[serde(default = "legacy_encoding")]
    pub encoding: Encoding,
    /// Whether the network has the ownership head (trained when a run's
    /// `train.ownership_weight` is above 0, which sets it). Absent in files written before it
    /// existed and in networks without it.
    #[serde(default, skip_serializing_if = "is_false")]
    pub ownership: bool,
    /// Whether the value head ends in one output layer per side to move (the attackers' and
    /// the defenders' win/draw/loss logits, picked by the side-to-move plane) instead of one
    /// for both. The shared layers below it still see both sides; the last layer of each side
    /// is then calibrated on that side's positions alone. Absent in files written before it
    /// existed and in networks without it.
    #[serde(default, skip_serializing_if = "is_false")]
    pub value_per_side: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn legacy_encoding() -> Encoding {
    Encoding::LEGACY
}

impl NetConfig {
    /// A network of `blocks` x `channels` reading the newest input planes.
    pub const fn new(blocks: usize, channels: usize) -> NetConfig {
        NetConfig { blocks, channels, encoding: Encoding::NEWEST, ownership: false, value_per_side: false }
    }

    /// This size with other input planes.
    pub const fn with_encoding(self, encoding: Encoding) -> NetConfig {
        NetConfig { encoding, ..self }
    }

    /// This size with or without the ownership head.
    pub const fn with_ownership(self, ownership: bool) -> NetConfig {
        NetConfig { ownership, ..self }
    }

    /// This size with one value output layer per side, or one for both.
    pub const fn with_value_per_side(self, value_per_side: bool) -> NetConfig {
        NetConfig { value_per_side, ..self }
    }

    /// Whether a model of this configuration starts a network of `to`: the same trunk and
    /// input planes; the ownership head may come (fresh) or go; one value output layer may
    /// become one per side (each starting as it), not the other way.
    pub fn starts(&self, to: &NetConfig) -> bool {
        let trunk = |c: &NetConfig| (c.blocks, c.channels, c.encoding);
        trunk(self) == trunk(to) && (self.value_per_side == to.value_per_side || !self.value_per_side)
    }

    /// The size and the heads beyond the plain ones, for messages: "6x64", "6x64 with per-side
    /// values and an ownership head".
    pub fn describe(&self) -> String {
        format!("{self}{}", self.heads())
    }

    /// The heads beyond the plain ones as a suffix for messages: "", " with per-side values",
    /// " with per-side values and an ownership head" (what [`NetConfig::describe`] appends to
    /// the size, and `play`/`engine` to theirs).
    pub fn heads(&self) -> String {
        let extras: Vec<&str> =
            [(self.value_per_side, "per-side values"), (self.ownership, "an ownership head")].into_iter().filter_map(|(on, what)| on.then_some(what)).collect();
        match extras.len() {
            0 => String::new(),
            _ => format!(" with {}", extras.join(" and ")),
        }
    }

    /// The architecture a run trains when it continues a `saved` network with this config:
    /// the config's ownership head, and per-side values if either has them. A network does
    /// not go back to one value layer (that would throw away a trained layer), so a saved
    /// per-side network keeps them whatever the config says; `train --init` and `--resume`
    /// both follow this rule and say when it overrides the config.
    pub fn continuing(&self, saved: &NetConfig) -> NetConfig {
        saved.with_ownership(self.ownership).with_value_per_side(saved.value_per_side || self.value_per_side)
    }

    /// A small default that trains on a CPU: 4x32 on 7x7 boards, 6x48 on 9x9, 6x64 above, on
    /// the newest input planes.
    /// On a 2-core CPU (fp32, batch 256) a forward pass runs about 10,700 evaluations/s for
    /// 4x32 on 7x7 and 1,200 for 6x64 on 11x11 (`tafl-lab bench search` measures it).
    pub fn default_for(board_size: u8) -> NetConfig {
        match board_size {
            0..=7 => NetConfig::new(4, 32),
            8..=9 => NetConfig::new(6, 48),
            _ => NetConfig::new(6, 64),
        }
    }
}

/// The deepest trunk a model file may describe: far above any network tafl-lab trains, low
/// enough that size arithmetic on corrupt metadata cannot overflow.
pub const MAX_BLOCKS: usize = 1024;
/// The widest trunk a model file may describe (see [`MAX_BLOCKS`]).
pub const MAX_CHANNELS: usize = 4096;

impl NetConfig {
    /// Checks that a network of this size can be built: at least one channel, at most
    /// [`MAX_BLOCKS`] blocks and [`MAX_CHANNELS`] channels.
    ///
    /// # Errors
    /// A one-line reason naming the field.
    pub fn check(&self) -> Result<(), String> {
        if self.channels == 0 || self.channels > MAX_CHANNELS {
            return Err(format!("net.channels = {}: must be in 1..={MAX_CHANNELS}", self.channels));
        }
        if self.blocks > MAX_BLOCKS {
            return Err(format!("net.blocks = {}: must be in 0..={MAX_BLOCKS}", self.blocks));
        }
        Ok(())
    }

    /// Number of weights of the trunk's convolutions alone: a lower bound on the parameter
    /// count of any network of this size (the heads and batch norms come on top).
    pub fn trunk_weights(&self) -> usize {
        let c = self.channels;
        9 * self.encoding.planes() * c + self.blocks * 2 * 9 * c * c
    }
}

impl std::fmt::Display for NetConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}x{}", self.blocks, self.channels)
    }
}

#[derive(Debug)]
struct Block {
    conv1: nn::Conv2D,
    bn1: nn::BatchNorm,
    conv2: nn::Conv2D,
    bn2: nn::BatchNorm,
}

fn conv(p: nn::Path, i: usize, o: usize, k: i64, bias: bool) -> nn::Conv2D {
    let cfg = nn::ConvConfig { padding: k / 2, bias, ..Default::default() };
    nn::conv2d(p, i as i64, o as i64, k, cfg)
}

fn bn(p: nn::Path, c: usize) -> nn::BatchNorm {
    nn::batch_norm2d(p, c as i64, nn::BatchNormConfig { eps: BN_EPS, ..Default::default() })
}

/// The network and its variables.
#[derive(Debug)]
pub struct TaflNet {
    pub vs: nn::VarStore,
    pub config: NetConfig,
    pub board_size: usize,
    stem: nn::Conv2D,
    stem_bn: nn::BatchNorm,
    blocks: Vec<Block>,
    policy_conv: nn::Conv2D,
    policy_bn: nn::BatchNorm,
    policy_out: nn::Conv2D,
    value_conv: nn::Conv2D,
    value_bn: nn::BatchNorm,
    value_fc: nn::Linear,
    value_out: nn::Linear,
    /// The ownership head (a 1x1 convolution to 3 logits a square), when `config.ownership`.
    ownership_out: Option<nn::Conv2D>,
    /// Whether [`TaflNet::fold_batch_norms`] ran: each batch norm is then part of the
    /// convolution before it, and the network only evaluates.
    folded: bool,
}

/// The epsilon of every batch norm (tch's default).
const BN_EPS: f64 = 1e-5;

/// One convolution followed by its batch norm; after folding, one convolution whose bias is
/// the batch norm's shift (`bn.bs`).
fn conv_bn(h: &Tensor, conv: &nn::Conv2D, bn: &nn::BatchNorm, train: bool, folded: bool) -> Tensor {
    if folded {
        let pad = conv.ws.size()[2] / 2;
        h.conv2d(&conv.ws, bn.bs.as_ref(), [1, 1], [pad, pad], [1, 1], 1)
    } else {
        h.apply(conv).apply_t(bn, train)
    }
}

/// Scales `conv`'s weights by `bn`'s eval-mode factor and puts its shift into `bn.bs`, in
/// place (the variables stay the ones the var store holds, so a later `set_kind` converts
/// them).
fn fold(conv: &mut nn::Conv2D, bn: &mut nn::BatchNorm) {
    let (gamma, beta) = (bn.ws.as_ref().expect("affine batch norm"), bn.bs.as_mut().expect("affine batch norm"));
    let scale = gamma / (&bn.running_var + BN_EPS).sqrt();
    let shift = &*beta - &bn.running_mean * &scale;
    let c = scale.size()[0];
    let ws = &conv.ws * scale.view([c, 1, 1, 1]);
    conv.ws.copy_(&ws);
    beta.copy_(&shift);
    conv.ws.set_data(&channels_last(&conv.ws));
}

/// The same tensor (`[B, C, H, W]`, same values and shape) laid out channels-last in memory
/// (strides `[H*W*C, 1, W*C, C]`; tch has no memory-format API, so by permuting).
///
/// Why: with plain NCHW tensors, LibTorch's oneDNN convolutions compute in channels-last and
/// copy every output back (`aten::clone`, a quarter of a bf16 forward pass here). Given
/// channels-last inputs and weights they keep that layout, and ReLUs and additions preserve it:
/// a 4x32 trunk ran 1.65x faster in bf16 and 1.19x in fp32 on the build machine.
pub(crate) fn channels_last(t: &Tensor) -> Tensor {
    t.permute([0, 2, 3, 1]).contiguous().permute([0, 3, 1, 2])
}

/// The index of the side-to-move plane (`attackers_to_move`) among an encoding's planes.
fn side_plane(encoding: Encoding) -> i64 {
    encoding.plane_names().iter().position(|&n| n == "attackers_to_move").expect("every encoding has the side-to-move plane") as i64
}

/// The name of the ownership head's variables (`ownership_out.weight`, `ownership_out.bias`).
pub const OWNERSHIP_HEAD: &str = "ownership_out";

/// Channels of the value head's 1x1 convolution and width of its hidden layer.
const VALUE_PLANES: usize = 4;
const VALUE_HIDDEN: usize = 64;

impl TaflNet {
    /// A freshly initialised network for boards of side `board_size`.
    ///
    /// # Panics
    /// If the board size is not a supported tafl board (callers pass a variant's geometry;
    /// model files go through [`TaflNet::try_new`]).
    pub fn new(board_size: u8, config: NetConfig, device: Device) -> TaflNet {
        if let Err(e) = crate::rules::Geometry::new(board_size) {
            panic!("TaflNet::new: {e}");
        }
        TaflNet::build(board_size, config, device)
    }

    /// A second network with this one's layout and weights. Tests take equal networks this
    /// way: seeding torch twice does not give them, since tests on other threads draw from
    /// the same generator.
    #[cfg(test)]
    pub(crate) fn copy(&self) -> TaflNet {
        let mut c = TaflNet::build(self.board_size as u8, self.config, self.device());
        c.vs.copy(&self.vs).expect("a network of the same layout");
        c
    }

    /// As [`TaflNet::new`], but refusing a board size or architecture it cannot build.
    ///
    /// # Errors
    /// A board size outside the supported range or an even one, or a bad `config`.
    pub fn try_new(board_size: u8, config: NetConfig, device: Device) -> Result<TaflNet, String> {
        crate::rules::Geometry::new(board_size)?;
        config.check()?;
        Ok(TaflNet::build(board_size, config, device))
    }

    fn build(board_size: u8, config: NetConfig, device: Device) -> TaflNet {
        let vs = nn::VarStore::new(device);
        let n = board_size as usize;
        let c = config.channels;
        let root = vs.root();
        let stem = conv(&root / "stem", config.encoding.planes(), c, 3, false);
        let stem_bn = bn(&root / "stem_bn", c);
        let blocks = (0..config.blocks)
            .map(|i| {
                let p = &root / "blocks" / i;
                Block { conv1: conv(&p / "conv1", c, c, 3, false), bn1: bn(&p / "bn1", c), conv2: conv(&p / "conv2", c, c, 3, false), bn2: bn(&p / "bn2", c) }
            })
            .collect();
        let policy_conv = conv(&root / "policy_conv", c, c, 1, false);
        let policy_bn = bn(&root / "policy_bn", c);
        let policy_out = conv(&root / "policy_out", c, 4 * (n - 1), 1, true);
        let value_conv = conv(&root / "value_conv", c, VALUE_PLANES, 1, false);
        let value_bn = bn(&root / "value_bn", VALUE_PLANES);
        let value_fc = nn::linear(&root / "value_fc", (VALUE_PLANES * n * n) as i64, VALUE_HIDDEN as i64, Default::default());
        let value_rows = if config.value_per_side { 6 } else { 3 };
        let value_out = nn::linear(&root / "value_out", VALUE_HIDDEN as i64, value_rows, Default::default());
        let ownership_out = config.ownership.then(|| conv(&root / OWNERSHIP_HEAD, c, 3, 1, true));
        TaflNet {
            vs,
            config,
            board_size: n,
            stem,
            stem_bn,
            blocks,
            policy_conv,
            policy_bn,
            policy_out,
            value_conv,
            value_bn,
            value_fc,
            value_out,
            ownership_out,
            folded: false,
        }
    }

    /// Turns the network into its inference form: every batch norm (in eval mode, a fixed
    /// scale and shift per channel) is folded into the convolution before it, so a forward
    /// pass runs one convolution with a bias where it ran a convolution and a batch norm
    /// (fewer passes over memory, fewer temporaries). The outputs are those of
    /// `forward_t(x, false)` up to rounding. The convolutions' weights, and from then on the
    /// activations, are laid out channels-last ([`channels_last`]). One way: the network can
    /// no longer train, and its weights are no longer the model file's (do not save it).
    pub fn fold_batch_norms(&mut self) {
        if self.folded {
            return;
        }
        tch::no_grad(|| {
            fold(&mut self.stem, &mut self.stem_bn);
            for b in &mut self.blocks {
                fold(&mut b.conv1, &mut b.bn1);
                fold(&mut b.conv2, &mut b.bn2);
            }
            fold(&mut self.policy_conv, &mut self.policy_bn);
            fold(&mut self.value_conv, &mut self.value_bn);
            self.policy_out.ws.set_data(&channels_last(&self.policy_out.ws));
        });
        self.folded = true;
    }

    pub fn device(&self) -> Device {
        self.vs.device()
    }

    /// `x`: `[B, planes, N, N]` (the planes of `config.encoding`). Returns policy logits `[B, 4 * (N - 1), N, N]` and
    /// win/draw/loss logits `[B, 3]` (side to move's view). `train` selects batch statistics.
    ///
    /// # Panics
    /// `train` on a network whose batch norms were folded.
    pub fn forward_t(&self, x: &Tensor, train: bool) -> (Tensor, Tensor) {
        let h = self.trunk(x, train);
        self.heads(x, &h, train)
    }

    /// As [`TaflNet::forward_t`], with the ownership logits `[B, 3, N, N]` (classes: the side
    /// to move's piece, empty, the opponent's) when the network has that head.
    pub fn forward_with_ownership(&self, x: &Tensor, train: bool) -> (Tensor, Tensor, Option<Tensor>) {
        let h = self.trunk(x, train);
        let (p, v) = self.heads(x, &h, train);
        (p, v, self.ownership_out.as_ref().map(|o| h.apply(o)))
    }

    fn trunk(&self, x: &Tensor, train: bool) -> Tensor {
        assert!(!(train && self.folded), "a network with folded batch norms cannot train");
        let f = self.folded;
        // The inference form computes channels-last throughout (see `channels_last`).
        let x = if f { channels_last(x) } else { x.shallow_clone() };
        let mut h = conv_bn(&x, &self.stem, &self.stem_bn, train, f).relu();
        for b in &self.blocks {
            let y = conv_bn(&conv_bn(&h, &b.conv1, &b.bn1, train, f).relu(), &b.conv2, &b.bn2, train, f);
            h = (y + h).relu();
        }
        h
    }

    fn heads(&self, x: &Tensor, h: &Tensor, train: bool) -> (Tensor, Tensor) {
        let f = self.folded;
        let policy = conv_bn(h, &self.policy_conv, &self.policy_bn, train, f).relu().apply(&self.policy_out);
        let value = conv_bn(h, &self.value_conv, &self.value_bn, train, f).relu().flatten(1, -1).apply(&self.value_fc).relu().apply(&self.value_out);
        if !self.config.value_per_side {
            return (policy, value);
        }
        // The side to move is a constant plane (1 when the attackers are to move): rows 0-2
        // are the attackers' logits, 3-5 the defenders'.
        let side = x.select(1, side_plane(self.config.encoding)).select(1, 0).select(1, 0).unsqueeze(1);
        let (attackers, defenders) = (value.narrow(1, 0, 3), value.narrow(1, 3, 3));
        let value = &defenders + (attackers - &defenders) * side;
        (policy, value)
    }

    /// One tensor `[B, P + 3]`: flattened policy logits, then win/draw/loss logits (the traced
    /// export's single output).
    pub fn forward_flat(&self, x: &Tensor) -> Tensor {
        let (p, v) = self.forward_t(x, false);
        Tensor::cat(&[p.flatten(1, -1), v], 1)
    }

    /// Number of trainable parameters.
    pub fn parameter_count(&self) -> usize {
        self.vs.trainable_variables().iter().map(|t| t.numel()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run continuing a saved network takes the config's ownership head, and per-side
    /// values when either side of the pair has them: never back to one value layer.
    #[test]
    fn continuing_never_drops_per_side_values() {
        let plain = NetConfig::new(6, 64);
        let per_side = plain.with_value_per_side(true);
        assert!(plain.continuing(&per_side).value_per_side, "a per-side network keeps its layers under a plain config");
        assert!(per_side.continuing(&plain).value_per_side, "a per-side config splits a plain network's layer");
        assert!(!plain.continuing(&plain).value_per_side);
        assert!(plain.with_ownership(true).continuing(&per_side).ownership, "the config decides the ownership head");
        assert!(!plain.continuing(&per_side.with_ownership(true)).ownership);
        assert_eq!(per_side.with_ownership(true).heads(), " with per-side values and an ownership head");
        assert_eq!(plain.heads(), "");
        assert_eq!(per_side.describe(), "6x64 with per-side values");
    }

    /// A network whose batch norms hold statistics and affine parameters far from the
    /// initial ones, as a trained network's do.
    fn trained_looking(seed: i64) -> TaflNet {
        tch::manual_seed(seed);
        let net = TaflNet::new(7, NetConfig::new(2, 16), Device::Cpu);
        // In name order: the var store's map has none, and each draw must meet the same
        // variable in every call.
        let mut vars: Vec<_> = net.vs.variables().into_iter().collect();
        vars.sort_by(|a, b| a.0.cmp(&b.0));
        tch::no_grad(|| {
            for (name, mut t) in vars {
                let (module, field) = name.rsplit_once('.').expect("module.field");
                if !module.contains("bn") {
                    continue;
                }
                if field == "running_var" {
                    t.copy_(&(t.rand_like() * 3.0 + 0.2));
                } else {
                    t.copy_(&(t.randn_like() * 0.5));
                }
            }
        });
        net
    }

    /// The input planes of the networks these tests build.
    fn net_planes() -> i64 {
        NetConfig::new(2, 16).encoding.planes() as i64
    }

    #[test]
    fn folded_batch_norms_give_the_same_outputs() {
        let x = Tensor::randn([9, net_planes(), 7, 7], (tch::Kind::Float, Device::Cpu));
        let net = trained_looking(4);
        let (p, v) = tch::no_grad(|| net.forward_t(&x, false));
        let mut folded = net.copy();
        folded.fold_batch_norms();
        let (pf, vf) = tch::no_grad(|| folded.forward_t(&x, false));
        let diff = |a: &Tensor, b: &Tensor| (a - b).abs().max().double_value(&[]);
        let scale = p.abs().max().double_value(&[]);
        assert!(scale > 0.1, "outputs of some size to compare ({scale})");
        assert!(diff(&p, &pf) < 1e-4 * scale.max(1.0), "policy differs by {}", diff(&p, &pf));
        assert!(diff(&v, &vf) < 1e-4 * v.abs().max().double_value(&[]).max(1.0), "value differs by {}", diff(&v, &vf));
        // Folding changed the weights (it is not a no-op that the comparison above hides).
        assert!(diff(&net.stem.ws, &folded.stem.ws) > 1e-3);
    }

    #[test]
    #[should_panic(expected = "cannot train")]
    fn a_folded_network_refuses_to_train() {
        let mut net = trained_looking(1);
        net.fold_batch_norms();
        let x = Tensor::zeros([1, net_planes(), 7, 7], (tch::Kind::Float, Device::Cpu));
        let _ = net.forward_t(&x, true);
    }

    /// Per-side values: each side to move reads its own three rows of the value output
    /// layer (attackers 0-2, defenders 3-5), in training form and folded alike.
    #[test]
    fn per_side_values_read_the_rows_of_the_side_to_move() {
        tch::manual_seed(6);
        let cfg = NetConfig::new(1, 8).with_value_per_side(true);
        let net = TaflNet::new(7, cfg, Device::Cpu);
        assert_eq!(net.value_out.ws.size(), [6, VALUE_HIDDEN as i64]);
        // Two positions' planes, random but for the side-to-move plane: attackers, defenders.
        let x = Tensor::rand([2, net_planes(), 7, 7], (tch::Kind::Float, Device::Cpu));
        let side = side_plane(cfg.encoding);
        let _ = x.select(1, side).select(0, 0).fill_(1.0);
        let _ = x.select(1, side).select(0, 1).fill_(0.0);
        let value = |net: &TaflNet| tch::no_grad(|| net.forward_t(&x, false).1);
        let before = value(&net);
        for (zeroed, kept) in [(3, 0), (0, 1)] {
            let mut n = net.copy();
            tch::no_grad(|| {
                let _ = n.value_out.ws.narrow(0, zeroed, 3).fill_(0.0);
                let _ = n.value_out.bs.as_mut().unwrap().narrow(0, zeroed, 3).fill_(0.0);
            });
            let after = value(&n);
            // The other side's logits are untouched; this side's are now all zero.
            assert!(after.get(kept).allclose(&before.get(kept), 1e-6, 1e-6, false), "sample {kept} changed");
            let other = 1 - kept;
            assert_eq!(after.get(other).abs().max().double_value(&[]), 0.0, "sample {other} reads rows {zeroed}..");
            assert!(before.get(other).abs().max().double_value(&[]) > 0.0);
            n.fold_batch_norms();
            assert!(value(&n).allclose(&after, 1e-4, 1e-4, false), "folded");
        }
    }
}
