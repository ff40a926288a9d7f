//! Criterion benchmarks of the rules layer: move generation, make/unmake, perft and playouts.

use criterion::{criterion_group, criterion_main, Criterion};
use rand::{Rng, SeedableRng};
use std::sync::Arc;
use tafl_lab::play::random_playout;
use tafl_lab::rules::perft::perft;
use tafl_lab::rules::{Position, Variant};

fn bench(c: &mut Criterion) {
    for name in ["brandubh", "copenhagen"] {
        let pos = Position::start(Arc::new(Variant::preset(name).unwrap_or_else(|e| panic!("{e}"))));
        c.bench_function(&format!("{name}/perft3"), |b| {
            b.iter(|| {
                let mut p = pos.clone();
                perft(&mut p, 3).leaves
            })
        });
        let mut rng = rand::rngs::SmallRng::seed_from_u64(7);
        let mut buf = Vec::new();
        c.bench_function(&format!("{name}/random_playout"), |b| {
            b.iter(|| {
                let mut p = pos.clone();
                random_playout(&mut p, &mut |n| rng.gen_range(0..n), &mut buf).1
            })
        });
        c.bench_function(&format!("{name}/legal_moves"), |b| b.iter(|| pos.legal_moves().len()));
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = bench
}
criterion_main!(benches);
