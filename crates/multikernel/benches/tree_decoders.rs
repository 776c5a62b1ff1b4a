//! The dependency parser's tree decoders: `decode_1000x30/{chu_liu_edmonds,eisner}` decodes
//! 1,000 random sentences of 30 tokens (arc scores uniform on `[-3, 3)`, one root child),
//! the figure of BENCHMARKS.md ("Decoders").
//!
//! Run: `cargo bench -p multikernel --bench tree_decoders` (add `-- --quick` for a short run).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use multikernel::engine::task::tree::{ChuLiuEdmonds, Eisner, TreeDecoder};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::hint::black_box;

/// Arc scores of a sentence of `n` tokens: `(n + 1)^2` entries, head-major with the root 0.
fn random_scores(rng: &mut ChaCha8Rng, n: usize) -> Vec<f64> {
    let n1 = n + 1;
    (0..n1 * n1).map(|_| rng.gen_range(-3.0..3.0)).collect()
}

fn decoders(c: &mut Criterion) {
    const N: usize = 30;
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let arcs: Vec<Vec<f64>> = (0..1000).map(|_| random_scores(&mut rng, N)).collect();
    let mut g = c.benchmark_group("decode_1000x30");
    g.sample_size(20);
    let decoders: [(&str, &dyn TreeDecoder); 2] = [
        ("chu_liu_edmonds", &ChuLiuEdmonds::default()),
        ("eisner", &Eisner::default()),
    ];
    for (name, d) in decoders {
        g.bench_function(BenchmarkId::from_parameter(name), |b| {
            b.iter(|| {
                arcs.iter()
                    .map(|a| black_box(d.decode(N, black_box(a)))[0])
                    .sum::<usize>()
            })
        });
    }
    g.finish();
}

criterion_group!(benches, decoders);
criterion_main!(benches);
