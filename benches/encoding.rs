//! Criterion benchmark of the network's input encoding: what every leaf a search sends to the
//! network costs before the forward pass (on small boards a large share of `bench search`'s
//! tree work; see docs/performance.md).

use criterion::{criterion_group, criterion_main, Criterion};
use rand::{Rng, SeedableRng};
use std::sync::Arc;
use tafl_lab::nn::encoding::{Encoder, Encoding};
use tafl_lab::rules::{Position, Variant};

/// Positions along random games (up to 40 plies each), as a search meets them.
fn positions(variant: &Arc<Variant>, n: usize) -> Vec<Position> {
    let mut rng = rand::rngs::SmallRng::seed_from_u64(11);
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let mut p = Position::start(variant.clone());
        let plies = rng.gen_range(0..40);
        for _ in 0..plies {
            let moves = p.legal_moves();
            if p.is_over() || moves.is_empty() {
                break;
            }
            p.make(moves[rng.gen_range(0..moves.len())]);
        }
        if !p.is_over() {
            out.push(p);
        }
    }
    out
}

fn bench(c: &mut Criterion) {
    for name in ["brandubh", "tablut", "copenhagen"] {
        let variant = Arc::new(Variant::preset(name).unwrap_or_else(|e| panic!("{e}")));
        let ps = positions(&variant, 256);
        for encoding in [Encoding::V1, Encoding::V2] {
            let enc = Encoder::new(&variant, encoding);
            let mut buf = vec![0f32; enc.len()];
            c.bench_function(&format!("{name}/encode_v{}_x256", encoding.version()), |b| {
                b.iter(|| {
                    for p in &ps {
                        enc.encode(p, &mut buf);
                    }
                    buf[0]
                })
            });
        }
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = bench
}
criterion_main!(benches);
