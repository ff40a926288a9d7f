//! The network as a search [`Evaluator`]: encodes a batch, runs one forward pass under
//! `no_grad`, and turns the policy logits of the legal moves into priors. The evaluator owns
//! its network in inference form: batch norms folded into the convolutions, weights in the
//! [`Precision`]'s number format (bf16 where the CPU has it), results back in fp32.
//!
//! Background evaluation (on CUDA; see [`NetEvaluator::set_background`]): the first
//! [`Evaluator::start`] moves the network onto a thread of its own (`tch::Tensor` is `Send` but
//! not `Sync`, so exactly one thread owns it at a time). From then on the caller's thread only
//! encodes batches and hands them over; the inference thread runs the forward pass and the
//! softmax over the legal moves while the caller does tree work for other games (self-play's
//! two groups). [`Evaluator::evaluate`] then waits for its own batch. On a CPU the network
//! stays on the caller's thread: there the inference thread only took cores from the tree
//! work (on the 2-core build machine one self-play lane did 32,700 evaluations/s with the
//! network on its thread and 20,500 with it on a thread of its own), and a CPU is used best
//! by one self-play worker per core, each with its own `NetEvaluator`
//! (`SelfPlaySection::workers`).
//!
//! Batches run at a few fixed sizes ([`padded_batch`]), so that oneDNN does not compile a
//! kernel for every batch size it meets.
//!
//! The evaluator encodes in the network's own encoding (`net.config.encoding`): a version-1
//! model is fed version-1 planes, whatever is newest.
//!
//! Cache key ([`Evaluator::cache_key`]): everything the input planes show. The Zobrist hash
//! covers the board, the side to move and the rules (the fixed planes follow from the rules,
//! and version 2's move planes from the board and the rules);
//! the ply plane shows `min(ply, ply cap)` and the repetition plane whether the position
//! occurred before, so both are part of the key. Two positions with one key encode to the
//! same planes, hence get the same evaluation: the cache is exact, not approximate.

use super::encoding::{policy_index, Encoder};
use super::net::TaflNet;
use super::Precision;
use crate::rules::{Geometry, Position, Variant};
use crate::search::{EvalRequest, Evaluation, Evaluator, Ticket};
use std::collections::VecDeque;
use std::sync::mpsc;
use tch::{Device, Kind, Tensor};

/// The network and what one forward pass needs; lives on the caller's thread or the
/// inference thread.
struct Forward {
    net: TaflNet,
    /// The kind the weights and inputs are in (`Float` or `BFloat16`).
    kind: Kind,
    geometry: Geometry,
    planes: i64,
    /// Flat indices (row * policy size + move) of the legal moves' logits of a batch.
    gather: Vec<i64>,
    /// Those logits, in fp32.
    policy: Vec<f32>,
    wdl: Vec<f32>,
    /// One position's exponentiated logits (softmax scratch).
    exp: Vec<f32>,
}

/// An encoded batch's planes, in the number format the network computes in: a bf16 network's
/// input is encoded as bf16 (half the bytes to write and copy, and no conversion pass).
enum Input {
    F32(Vec<f32>),
    /// bf16 bit patterns (`PlaneValue` for `i16` in `nn::encoding`).
    Bf16(Vec<i16>),
}

impl Input {
    fn new(kind: Kind) -> Input {
        match kind {
            Kind::BFloat16 => Input::Bf16(Vec::new()),
            _ => Input::F32(Vec::new()),
        }
    }

    /// Resizes to `len` values (new ones zero).
    fn resize(&mut self, len: usize) {
        match self {
            Input::F32(v) => v.resize(len, 0.0),
            Input::Bf16(v) => v.resize(len, 0),
        }
    }

    /// Encodes `position` into chunk `i` (of `len` values).
    fn encode(&mut self, encoder: &Encoder, position: &Position, i: usize, len: usize) {
        match self {
            Input::F32(v) => encoder.encode(position, &mut v[i * len..(i + 1) * len]),
            Input::Bf16(v) => encoder.encode(position, &mut v[i * len..(i + 1) * len]),
        }
    }

    fn tensor(&self) -> Tensor {
        match self {
            Input::F32(v) => Tensor::from_slice(v),
            // The bits go in as i16 and are viewed as bf16. (tch 0.26's `from_slice` of
            // `half::bf16` makes an fp16 tensor of the bits, which would read them as other
            // numbers: the test `bf16_evaluations_stay_close_to_fp32` catches such a mix-up.)
            Input::Bf16(v) => Tensor::from_slice(v).view_dtype(Kind::BFloat16),
        }
    }
}

/// One encoded batch: `input` holds `positions` encodings; the legal moves of position `i`
/// are `indices[offsets[i]..offsets[i + 1]]` (policy indices).
struct Job {
    id: u64,
    positions: usize,
    input: Input,
    indices: Vec<u32>,
    offsets: Vec<u32>,
}

struct Done {
    id: u64,
    evals: Vec<Evaluation>,
    /// The job's input buffer, returned for the next batch.
    input: Input,
}

impl Forward {
    fn run(&mut self, job: &mut Job) -> Vec<Evaluation> {
        let (b, n) = (job.positions, self.geometry.size() as i64);
        // Zero rows up to the bucket's size; their outputs are not read.
        let padded = padded_batch(b);
        job.input.resize(padded * (self.planes * n * n) as usize);
        let x = job.input.tensor().view([padded as i64, self.planes, n, n]).to_device(self.net.device()).to_kind(self.kind);
        // Only the logits of the legal moves leave the network's number format and device:
        // a few dozen of a position's `policy_size` (over a thousand on 7x7), gathered by one
        // index_select instead of converting and copying the whole policy plane.
        let (p, v) = tch::no_grad(|| {
            let (p, v) = self.net.forward_t(&x, false);
            let p = if is_dense(&p.size(), &p.stride()) { p } else { p.contiguous() };
            // The logits are read where they lie: the inference form computes channels-last,
            // so `p` is [B, planes, N, N] with NHWC strides, and flattening it to a row-major
            // vector would copy the whole policy first. Each legal move's element offset is
            // computed from `p`'s strides instead, and gathered from the dense storage.
            let strides = p.stride();
            let nn = (n * n) as usize;
            self.gather.clear();
            for i in 0..b {
                let row = i as i64 * strides[0];
                self.gather.extend(job.indices[job.offsets[i] as usize..job.offsets[i + 1] as usize].iter().map(|&m| {
                    let (plane, cell) = ((m as usize / nn) as i64, (m as usize % nn) as i64);
                    row + plane * strides[1] + (cell / n) * strides[2] + (cell % n) * strides[3]
                }));
            }
            let numel = p.numel() as i64;
            let at = Tensor::from_slice(&self.gather).to_device(p.device());
            let p = p.as_strided([numel], [1], None).index_select(0, &at).to_kind(Kind::Float).to_device(Device::Cpu).contiguous();
            (p, v.to_kind(Kind::Float).softmax(-1, Kind::Float).to_device(Device::Cpu).contiguous())
        });
        self.policy.resize(self.gather.len(), 0.0);
        self.wdl.resize(padded * 3, 0.0);
        p.copy_data(&mut self.policy, self.gather.len());
        v.copy_data(&mut self.wdl, padded * 3);
        (0..b)
            .map(|i| {
                let logits = &self.policy[job.offsets[i] as usize..job.offsets[i + 1] as usize];
                let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
                self.exp.clear();
                self.exp.extend(logits.iter().map(|&l| (l - max).exp()));
                let total: f32 = self.exp.iter().sum();
                let w = &self.wdl[i * 3..i * 3 + 3];
                Evaluation { priors: self.exp.iter().map(|&e| e / total).collect(), wdl: [w[0], w[1], w[2]] }
            })
            .collect()
    }
}

/// Whether a tensor of `sizes` with `strides` covers its storage without gaps or overlaps (in
/// some order of its dimensions): then its elements are the `numel` elements from its storage
/// offset, and an element's offset is the dot product of its index and the strides.
fn is_dense(sizes: &[i64], strides: &[i64]) -> bool {
    let mut dims: Vec<(i64, i64)> = strides.iter().copied().zip(sizes.iter().copied()).filter(|&(_, size)| size != 1).collect();
    dims.sort_unstable();
    let mut expected = 1;
    for (stride, size) in dims {
        if stride != expected {
            return false;
        }
        expected *= size;
    }
    true
}

/// The batch size a forward pass of `positions` positions runs at: the next power of two up
/// to 16, then the next multiple of 8.
///
/// Why: oneDNN (LibTorch's CPU convolutions) builds and JIT-compiles a kernel for each input
/// shape it meets and keeps a bounded cache of them. Self-play's batches take every size from
/// 1 to the configured batch, so unpadded they kept the CPU compiling kernels and missing that
/// cache (a fifth of a self-play generation's time in a profile here). With buckets a run meets
/// at most `batch.div_ceil(8) + 3` shapes, each compiled once per process. Multiples of 16 had
/// cost 2.9% of the rows in padding in `bench search` (brandubh, batches of 200-256);
/// multiples of 8 halve that.
pub(crate) fn padded_batch(positions: usize) -> usize {
    if positions <= 16 {
        positions.next_power_of_two()
    } else {
        positions.div_ceil(8) * 8
    }
}

/// The inference thread: its job queue, result queue and handle.
struct Worker {
    jobs: Option<mpsc::Sender<Job>>,
    done: mpsc::Receiver<Done>,
    handle: Option<std::thread::JoinHandle<()>>,
}

enum Backend {
    Here(Box<Forward>),
    Thread(Worker),
}

pub struct NetEvaluator {
    backend: Backend,
    encoder: Encoder,
    background: bool,
    ply_cap: u32,
    next_id: u64,
    /// Results that arrived before their ticket was redeemed.
    early: VecDeque<Done>,
    /// Input buffers to reuse.
    spare: Vec<Input>,
    /// The number format of the network's input.
    kind: Kind,
}

impl NetEvaluator {
    /// An evaluator that owns `net` and computes in `precision`, with its batch norms folded
    /// into its convolutions ([`TaflNet::fold_batch_norms`]): it changes `net`'s weights, so
    /// give it a network nothing else trains or saves. Positions are encoded in the network's
    /// encoding.
    pub fn new(mut net: TaflNet, variant: &Variant, precision: Precision) -> NetEvaluator {
        assert_eq!(net.board_size, variant.geometry.size() as usize, "network and variant board sizes");
        let encoder = Encoder::new(variant, net.config.encoding);
        let g = encoder.geometry();
        let planes = (encoder.len() / g.num_squares()) as i64;
        net.fold_batch_norms();
        let kind = precision.kind(net.device());
        if kind != Kind::Float {
            net.vs.set_kind(kind);
        }
        let forward = Forward { net, kind, geometry: g, planes, gather: Vec::new(), policy: Vec::new(), wdl: Vec::new(), exp: Vec::new() };
        NetEvaluator {
            background: forward.net.device().is_cuda(),
            backend: Backend::Here(Box::new(forward)),
            encoder,
            ply_cap: variant.ply_cap().max(1),
            next_id: 0,
            early: VecDeque::new(),
            spare: Vec::new(),
            kind,
        }
    }

    /// Whether [`Evaluator::start`] may move the network to an inference thread (the
    /// default on CUDA, where the GPU works while the CPU searches; off on a CPU, see the
    /// module documentation). Off, `start` evaluates at once on the caller's thread: the same
    /// results, no overlap. Call it before the first `start`.
    pub fn set_background(&mut self, on: bool) {
        self.background = on;
    }

    /// Encodes `batch` into a job.
    fn job(&mut self, batch: &[EvalRequest<'_>]) -> Job {
        let len = self.encoder.len();
        let g = self.encoder.geometry();
        let mut input = self.spare.pop().unwrap_or_else(|| Input::new(self.kind));
        input.resize(batch.len() * len);
        let mut indices = Vec::with_capacity(batch.iter().map(|r| r.moves.len()).sum());
        let mut offsets = Vec::with_capacity(batch.len() + 1);
        offsets.push(0u32);
        for (i, r) in batch.iter().enumerate() {
            input.encode(&self.encoder, r.position, i, len);
            indices.extend(r.moves.iter().map(|&m| policy_index(g, m) as u32));
            offsets.push(indices.len() as u32);
        }
        let id = self.next_id;
        self.next_id += 1;
        Job { id, positions: batch.len(), input, indices, offsets }
    }

    /// Moves the network to an inference thread (once).
    fn spawn(&mut self) {
        let Backend::Here(_) = &self.backend else { return };
        let (job_tx, job_rx) = mpsc::channel::<Job>();
        let (done_tx, done_rx) = mpsc::channel::<Done>();
        // Leave a placeholder while the network moves: `Thread` is set right below.
        let worker = Worker { jobs: Some(job_tx), done: done_rx, handle: None };
        let Backend::Here(mut forward) = std::mem::replace(&mut self.backend, Backend::Thread(worker)) else { unreachable!() };
        let handle = std::thread::Builder::new()
            .name("tafl-lab-network".into())
            .spawn(move || {
                for mut job in job_rx {
                    let evals = forward.run(&mut job);
                    if done_tx.send(Done { id: job.id, evals, input: job.input }).is_err() {
                        break;
                    }
                }
            })
            .expect("spawning the network thread");
        if let Backend::Thread(w) = &mut self.backend {
            w.handle = Some(handle);
        }
    }
}

impl Evaluator for NetEvaluator {
    fn evaluate(&mut self, batch: &[EvalRequest<'_>]) -> Vec<Evaluation> {
        if batch.is_empty() {
            return Vec::new();
        }
        match &mut self.backend {
            Backend::Here(_) => {
                let mut job = self.job(batch);
                let Backend::Here(forward) = &mut self.backend else { unreachable!() };
                let evals = forward.run(&mut job);
                self.spare.push(job.input);
                evals
            }
            Backend::Thread(_) => {
                let ticket = self.start(batch);
                self.finish(ticket)
            }
        }
    }

    fn cache_key(&self, position: &Position) -> Option<u64> {
        // The ply plane saturates at the cap; the repetition plane is one bit.
        let ply = u64::from(position.ply().min(self.ply_cap));
        let repeated = u64::from(position.repetitions() > 1);
        let mix = (ply << 1 | repeated).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        Some(position.hash() ^ mix.rotate_left(29))
    }

    fn start(&mut self, batch: &[EvalRequest<'_>]) -> Ticket {
        if !self.background || batch.is_empty() {
            return Ticket::ready(self.evaluate(batch));
        }
        self.spawn();
        let job = self.job(batch);
        let id = job.id;
        let Backend::Thread(w) = &self.backend else { unreachable!("spawned") };
        w.jobs.as_ref().expect("open until drop").send(job).expect("the network thread stopped (see its panic above)");
        Ticket::pending(id)
    }

    fn finish(&mut self, ticket: Ticket) -> Vec<Evaluation> {
        let id = match ticket.into_ready() {
            Ok(evals) => return evals,
            Err(id) => id,
        };
        if let Some(i) = self.early.iter().position(|d| d.id == id) {
            let d = self.early.remove(i).expect("found");
            self.spare.push(d.input);
            return d.evals;
        }
        let Backend::Thread(w) = &self.backend else { panic!("batch {id} was not started by this evaluator") };
        loop {
            let d = w.done.recv().expect("the network thread stopped (see its panic above)");
            if d.id == id {
                self.spare.push(d.input);
                return d.evals;
            }
            self.early.push_back(d);
        }
    }
}

impl Drop for NetEvaluator {
    fn drop(&mut self) {
        if let Backend::Thread(w) = &mut self.backend {
            // Closing the queue ends the thread's loop.
            w.jobs.take();
            if let Some(h) = w.handle.take() {
                let _ = h.join();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nn::NetConfig;
    use crate::search::EvalCache;
    use std::sync::Arc;

    /// Positions from a few random games, with their legal moves.
    fn positions(variant: &Arc<Variant>, n: usize) -> Vec<(Position, Vec<crate::rules::Move>)> {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::SmallRng::seed_from_u64(3);
        let mut out = Vec::new();
        while out.len() < n {
            let mut p = Position::start(variant.clone());
            while !p.is_over() && out.len() < n {
                let moves = p.legal_moves();
                out.push((p.clone(), moves.clone()));
                p.make(moves[rng.gen_range(0..moves.len())]);
            }
        }
        out
    }

    fn requests(ps: &[(Position, Vec<crate::rules::Move>)]) -> Vec<EvalRequest<'_>> {
        ps.iter().map(|(p, m)| EvalRequest { position: p, moves: m }).collect()
    }

    /// Two brandubh networks with the same weights ([`TaflNet::copy`]).
    fn net_pair(cfg: NetConfig) -> (TaflNet, TaflNet) {
        let a = TaflNet::new(7, cfg, Device::Cpu);
        let b = a.copy();
        (a, b)
    }

    fn evaluator(variant: &Variant) -> NetEvaluator {
        tch::manual_seed(5);
        let size = variant.geometry.size();
        NetEvaluator::new(TaflNet::new(size, NetConfig::new(1, 8), Device::Cpu), variant, Precision::Fp32)
    }

    #[test]
    fn dense_layouts_are_told_from_strided_views() {
        let t = Tensor::zeros([4, 6, 7, 7], (Kind::Float, Device::Cpu));
        let last = crate::nn::net::channels_last(&t);
        assert!(is_dense(&t.size(), &t.stride()) && is_dense(&last.size(), &last.stride()));
        assert_ne!(t.stride(), last.stride(), "channels-last has other strides");
        let every_other = t.slice(1, 0, 6, 2);
        assert!(!is_dense(&every_other.size(), &every_other.stride()));
        let broadcast = Tensor::zeros([1, 6], (Kind::Float, Device::Cpu)).expand([4, 6], false);
        assert!(!is_dense(&broadcast.size(), &broadcast.stride()));
    }

    #[test]
    fn batches_are_padded_to_few_sizes_and_never_much_larger() {
        let sizes: std::collections::BTreeSet<usize> = (1..=256).map(padded_batch).collect();
        assert_eq!(sizes.len(), 5 + 30, "{sizes:?}");
        for b in 1..=1024 {
            let p = padded_batch(b);
            assert!(p >= b && p < b + 8, "{b} -> {p}");
        }
        assert_eq!((padded_batch(1), padded_batch(3), padded_batch(17), padded_batch(235), padded_batch(256)), (1, 4, 24, 240, 256));
    }

    /// The zero rows a batch is padded with change nothing in its own rows: a padded batch
    /// (27 positions run as 32) gives what each position gets alone (run as 1).
    #[test]
    fn padding_rows_do_not_change_the_real_rows() {
        let v = Arc::new(Variant::preset("brandubh").expect("preset"));
        let ps = positions(&v, 27);
        let reqs = requests(&ps);
        let mut ev = evaluator(&v);
        let batch = ev.evaluate(&reqs);
        for (r, got) in reqs.iter().zip(&batch) {
            let alone = ev.evaluate(std::slice::from_ref(r)).remove(0);
            let close = |a: &[f32], b: &[f32]| a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-5);
            assert!(close(&alone.priors, &got.priors) && close(&alone.wdl, &got.wdl), "{alone:?} vs {got:?}");
        }
    }

    /// The priors are the softmax of the network's logits at the legal moves' policy indices,
    /// computed here from the whole policy plane: the gather of only those logits picks the
    /// right row and the right entries.
    #[test]
    fn priors_are_the_softmax_of_the_legal_moves_logits() {
        let v = Arc::new(Variant::preset("brandubh").expect("preset"));
        let ps = positions(&v, 19);
        let reqs = requests(&ps);
        let (mut net, copy) = net_pair(NetConfig::new(1, 8));
        let got = NetEvaluator::new(copy, &v, Precision::Fp32).evaluate(&reqs);
        net.fold_batch_norms();
        let enc = Encoder::new(&v, NetConfig::new(1, 8).encoding);
        let input: Vec<f32> = ps.iter().flat_map(|(p, _)| enc.planes(p)).collect();
        let n = v.geometry.size() as i64;
        let x = Tensor::from_slice(&input).view([ps.len() as i64, (enc.len() / v.geometry.num_squares()) as i64, n, n]);
        let (logits, wdl) = tch::no_grad(|| net.forward_t(&x, false));
        let logits = logits.flatten(1, -1);
        let wdl = wdl.softmax(-1, Kind::Float);
        for (i, ((_, moves), e)) in ps.iter().zip(&got).enumerate() {
            let l: Vec<f64> = moves.iter().map(|&m| logits.double_value(&[i as i64, policy_index(v.geometry, m) as i64])).collect();
            let max = l.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let total: f64 = l.iter().map(|x| (x - max).exp()).sum();
            for (p, x) in e.priors.iter().zip(&l) {
                assert!((f64::from(*p) - (x - max).exp() / total).abs() < 1e-5, "position {i}: {p} vs {}", (x - max).exp() / total);
            }
            for k in 0..3 {
                assert!((f64::from(e.wdl[k]) - wdl.double_value(&[i as i64, k as i64])).abs() < 1e-5);
            }
        }
    }

    #[test]
    fn bf16_evaluations_stay_close_to_fp32() {
        let v = Arc::new(Variant::preset("brandubh").expect("preset"));
        let ps = positions(&v, 64);
        let reqs = requests(&ps);
        let (a, b) = net_pair(NetConfig::new(2, 16));
        let want = NetEvaluator::new(a, &v, Precision::Fp32).evaluate(&reqs);
        let got = NetEvaluator::new(b, &v, Precision::Bf16).evaluate(&reqs);
        let mut largest = 0f32;
        for (a, b) in want.iter().zip(&got) {
            assert_eq!(a.priors.len(), b.priors.len());
            for (x, y) in a.priors.iter().zip(b.priors.iter()).chain(a.wdl.iter().zip(&b.wdl)) {
                largest = largest.max((x - y).abs());
            }
        }
        // bf16 keeps about 3 significant digits: close, but not the fp32 numbers (which
        // would mean the conversion never happened).
        assert!(largest < 0.01, "largest difference {largest}");
        assert!(largest > 0.0, "bf16 gave fp32's results bit for bit");
    }

    #[test]
    fn background_batches_equal_batches_evaluated_here() {
        let v = Arc::new(Variant::preset("brandubh").expect("preset"));
        let ps = positions(&v, 40);
        let reqs = requests(&ps);
        let (a, b) = reqs.split_at(25);
        let (na, nb) = net_pair(NetConfig::new(1, 8));
        let mut here = NetEvaluator::new(na, &v, Precision::Fp32);
        here.set_background(false);
        let want: Vec<Evaluation> = [here.evaluate(a), here.evaluate(b)].concat();
        let mut ev = NetEvaluator::new(nb, &v, Precision::Fp32);
        ev.set_background(true);
        // Two batches in flight, redeemed out of order, then a plain call.
        let (ta, tb) = (ev.start(a), ev.start(b));
        let got_b = ev.finish(tb);
        let got_a = ev.finish(ta);
        assert_eq!([got_a, got_b].concat(), want);
        assert_eq!(ev.evaluate(a), want[..25].to_vec());
    }

    #[test]
    fn equal_keys_mean_equal_inputs_and_the_cache_is_exact() {
        let v = Arc::new(Variant::preset("brandubh").expect("preset"));
        let ps = positions(&v, 300);
        let mut ev = evaluator(&v);
        ev.set_background(false);
        let enc = Encoder::new(&v, NetConfig::new(1, 8).encoding);
        let mut seen: std::collections::HashMap<u64, Vec<f32>> = std::collections::HashMap::new();
        for (p, _) in &ps {
            let planes = enc.planes(p);
            let key = ev.cache_key(p).expect("networks are cacheable");
            assert_eq!(seen.entry(key).or_insert_with(|| planes.clone()), &planes, "one key, one input");
        }
        // The same ply and board with the other side to move, a later ply: other keys.
        let (p, _) = &ps[3];
        let mut q = p.clone();
        let mv = q.legal_moves()[0];
        q.make(mv);
        assert_ne!(ev.cache_key(p), ev.cache_key(&q));
        // Through the cache the network sees a smaller batch (each position once), which may
        // move the last bits of its arithmetic; the evaluations are otherwise the same.
        let close = |a: &[Evaluation], b: &[Evaluation]| {
            a.len() == b.len()
                && a.iter().zip(b).all(|(x, y)| {
                    x.priors.len() == y.priors.len() && x.priors.iter().zip(y.priors.iter()).chain(x.wdl.iter().zip(&y.wdl)).all(|(p, q)| (p - q).abs() < 1e-5)
                })
        };
        let reqs = requests(&ps);
        let want = ev.evaluate(&reqs);
        let mut cache = EvalCache::new(1 << 12);
        let first = cache.evaluate(&reqs, &mut ev);
        assert!(close(&first, &want));
        // The second pass is all hits: bit for bit the first pass.
        assert_eq!(cache.evaluate(&reqs, &mut ev), first);
        assert_eq!(cache.stats().hits + cache.stats().duplicates, cache.stats().lookups - cache.stats().misses);
        // A direct-mapped table loses the odd entry to a slot shared with another key.
        assert!(cache.stats().hits as f64 >= 0.9 * ps.len() as f64, "{:?}", cache.stats());
    }
}
