//! Proximal step of the squared l2,1 regularizer (sparse MKL; Alg. 2 of martins2011 on the
//! block norms, then a rescaling of each block by Prop. 1).
//!
//! - `squared_l21_norms/M`: the prox on a vector of M block norms (what a kernelized group
//!   exposes: `BlockRegularizer::prox_norms`);
//! - `squared_l21_explicit10/M`: the full prox on M explicit groups of 10 coordinates
//!   (norms, Alg. 2, rescaling).
//!
//! Run: `cargo bench -p multikernel --bench prox` (add `-- --quick` for a short run).

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion, Throughput};
use multikernel::engine::prox::{BlockRegularizer, Groups, Regularizer, SquaredL21};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, LogNormal};
use std::time::Duration;

/// Log-normal magnitudes with random signs.
fn random_vec(n: usize, seed: u64) -> Vec<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let dist = LogNormal::new(0.0, 1.0).expect("valid log-normal");
    (0..n)
        .map(|i| {
            let v: f64 = dist.sample(&mut rng);
            if i % 2 == 0 {
                v
            } else {
                -v
            }
        })
        .collect()
}

/// A step that keeps roughly a tenth of the M groups: with tau = 10/S the threshold
/// tau S_rho / (1 + rho tau) lands in the upper part of the distribution.
fn step_for(b: &[f64]) -> f64 {
    let s: f64 = b.iter().map(|v| v.abs()).sum();
    10.0 / s
}

fn bench_norms(c: &mut Criterion) {
    let mut group = c.benchmark_group("squared_l21_norms");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    for m in [1_000usize, 10_000, 100_000, 1_000_000] {
        let b: Vec<f64> = random_vec(m, 1).iter().map(|v| v.abs()).collect();
        let tau = step_for(&b);
        group.throughput(Throughput::Elements(m as u64));
        group.bench_with_input(BenchmarkId::from_parameter(m), &b, |bench, b| {
            bench.iter_batched(
                || b.clone(),
                |mut v| {
                    SquaredL21.prox_norms(&mut v, tau);
                    v
                },
                BatchSize::LargeInput,
            )
        });
    }
    group.finish();
}

fn bench_explicit(c: &mut Criterion) {
    let mut group = c.benchmark_group("squared_l21_explicit10");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    for m in [1_000usize, 10_000, 100_000, 1_000_000] {
        let groups = Groups::contiguous(&vec![10; m]);
        let x = random_vec(10 * m, 2);
        let tau = step_for(&groups.norms(&x));
        group.throughput(Throughput::Elements(m as u64));
        group.bench_with_input(BenchmarkId::from_parameter(m), &x, |bench, x| {
            bench.iter_batched(
                || x.clone(),
                |mut v| {
                    SquaredL21.prox(&mut v, &groups, tau);
                    v
                },
                BatchSize::LargeInput,
            )
        });
    }
    group.finish();
}

criterion_group!(benches, bench_norms, bench_explicit);
criterion_main!(benches);
