//! Hot loops of randomized mirror descent MKL (Afkanpour et al. 2013): one draw of
//! Algorithm 3 (polynomial kernel sampling) and one iteration of Algorithm 2 with
//! importance sampling (Stoch) and uniform sampling (UCD), at n = 500 training points with
//! per-variable linear base kernels (rank-one product kernels), r in {20, 100}, D = 3, and
//! the full-rank path (one Gaussian kernel per variable), r = 20, D = 3; and the linear
//! algebra choice behind the solver's `RANK_UPDATE_RATIO` (`rank_update`): a rank-`b`
//! Cholesky update against a new factorization of an `n x n` matrix, at the `(n, b)` of the
//! Figure 1 tables' default batches.
//!
//! `cargo bench -p multikernel --bench mirror_descent` (`-- rank_update` for the last).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use multikernel::data::Matrix;
use multikernel::engine::linalg::SpdFactor;
use multikernel::engine::solver::mirror_descent::{
    solve, EvalSchedule, PolyBasis, PolySampler, Sampling, SolverOptions, StepRule,
};
use multikernel::kernel::MemoryLimit;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn data(n: usize, r: usize, seed: u64) -> (Matrix, Vec<f64>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let x = Matrix::from_vec(n, r, (0..n * r).map(|_| rng.gen_range(-1.7..1.7)).collect());
    let y = (0..n)
        .map(|i| x.get(i, 0) * x.get(i, 1) - x.get(i, 2) + 0.3 * x.get(i, 3).powi(3))
        .collect();
    (x, y)
}

fn rank_one(n: usize, r: usize, degree: usize) -> (PolySampler, Vec<f64>) {
    let (x, y) = data(n, r, 1);
    let s = PolySampler::new(
        PolyBasis::RankOne { z: x.transpose() },
        degree,
        &vec![1.0; degree + 1],
        &MemoryLimit::default(),
    )
    .expect("sampler");
    (s, y)
}

fn gaussian(n: usize, r: usize, degree: usize) -> (PolySampler, Vec<f64>) {
    let (x, y) = data(n, r, 2);
    let grams = (0..r)
        .map(|j| {
            let mut g = Matrix::zeros(n, n);
            for a in 0..n {
                for b in 0..n {
                    let d = x.get(a, j) - x.get(b, j);
                    g.set(a, b, (-d * d / 2.0).exp());
                }
            }
            g
        })
        .collect();
    let s = PolySampler::new(
        PolyBasis::Full { grams },
        degree,
        &vec![1.0; degree + 1],
        &MemoryLimit::default(),
    )
    .expect("sampler");
    (s, y)
}

fn sampler_draw(c: &mut Criterion) {
    let mut g = c.benchmark_group("alg3_draw_n500_d3");
    g.sample_size(20);
    for (label, (s, y)) in [
        ("linear_r20", rank_one(500, 20, 3)),
        ("linear_r100", rank_one(500, 100, 3)),
        ("gauss_r20", gaussian(500, 20, 3)),
    ] {
        let alpha: Vec<f64> = y.iter().map(|v| v * 10.0).collect();
        let prep = s.prepare(&alpha);
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        g.bench_function(BenchmarkId::from_parameter(label), |b| {
            b.iter(|| s.draw(&prep, &alpha, &mut rng).expect("draw"))
        });
    }
    g.finish();
}

fn iterations(c: &mut Criterion) {
    let mut g = c.benchmark_group("alg2_100_iterations_n500_d3");
    g.sample_size(10);
    for (label, (s, y)) in [
        ("linear_r20", rank_one(500, 20, 3)),
        ("linear_r100", rank_one(500, 100, 3)),
        ("gauss_r20", gaussian(500, 20, 3)),
    ] {
        for sampling in [Sampling::Importance, Sampling::Uniform] {
            let opts = SolverOptions {
                sampling: sampling.clone(),
                lambda: 1e-5,
                max_iter: 100,
                step: StepRule::Fixed(1.0),
                eval: EvalSchedule::End,
                ..SolverOptions::default()
            };
            g.bench_function(BenchmarkId::new(sampling.name(), label), |b| {
                b.iter(|| solve(&s, &y, &opts, &()).expect("solve"))
            });
        }
    }
    g.finish();
}

/// A rank-`b` update of the Cholesky factor of an `n x n` SPD matrix against its new
/// factorization (the mirror-descent solver refactors when `8 b > n`).
fn rank_update(c: &mut Criterion) {
    use faer::{MatMut, MatRef, Par};
    let mut g = c.benchmark_group("rank_update");
    g.sample_size(20);
    for &(n, b) in &[(83usize, 394usize), (140, 234), (500, 65), (500, 16)] {
        let z: Vec<f64> = (0..n * n)
            .map(|i| ((i * 7919) % 1000) as f64 / 1000.0 - 0.5)
            .collect();
        let mut a = vec![0.0; n * n];
        faer::linalg::matmul::matmul(
            MatMut::from_column_major_slice_mut(&mut a, n, n),
            faer::Accum::Replace,
            MatRef::from_column_major_slice(&z, n, n),
            MatRef::from_column_major_slice(&z, n, n).transpose(),
            1.0,
            Par::Seq,
        );
        let label = format!("n{n}_b{b}");
        g.bench_function(BenchmarkId::new("refactor", &label), |bench| {
            bench.iter(|| SpdFactor::new(MatRef::from_column_major_slice(&a, n, n), 1.0).unwrap())
        });
        let cols: Vec<f64> = (0..n * b).map(|i| z[i % (n * n)] * 0.01).collect();
        let w = vec![1.0; b];
        let mut f = SpdFactor::new(MatRef::from_column_major_slice(&a, n, n), 1.0).unwrap();
        g.bench_function(BenchmarkId::new("update", &label), |bench| {
            bench.iter(|| f.rank_update(&cols, &w).unwrap())
        });
    }
    g.finish();
}

criterion_group!(benches, sampler_draw, iterations, rank_update);
criterion_main!(benches);
