//! MKL-GOMP and lp-MKL timings.
//!
//! - `gomp_1000_rbf_n500`: the target, a dictionary of 1,000 full-rank Gaussian
//!   kernels on random 3-feature subsets (median-heuristic width, uniform-variance
//!   normalization) over 500 training points, path of 20 kernels: `grams` (the 1,000
//!   training Gram matrices), `path` (MKL-GOMP with cached Cholesky factors, Grams given)
//!   and `total` (both, what a user waits for).
//! - `gomp_rank_one`: 2,000 per-feature linear kernels (rank one) over 500 points, path 50.
//! - `lp_mkl`: the Sec. 5.1 simulation's fit (50 rank-one kernels, 50 points) for each p,
//!   and 100 dense Gaussian kernels over 300 points at p = 4/3.
//!
//! `cargo bench -p multikernel --bench gomp` (criterion), or one timed run of the
//! 1,000-kernel target phase by phase: `GOMP_ONESHOT=1 cargo bench -p multikernel --bench gomp`
//! (add `GOMP_ONESHOT_NOCACHE=1` to also time the path without cached factors).

use criterion::{criterion_group, BenchmarkId, Criterion};
use multikernel::data::Matrix;
use multikernel::engine::solver::gomp::{gomp, GompParams, Precompute};
use multikernel::engine::solver::lp_mkl::{lp_mkl, LpMklParams};
use multikernel::kernel::{fit_all, KernelSpec, MemoryLimit, Normalization};
use multikernel::kernel::{kernel_matrices, KernelMatrix};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn random(n: usize, d: usize, rng: &mut ChaCha8Rng) -> Matrix {
    Matrix::from_vec(n, d, (0..n * d).map(|_| rng.gen_range(-1.0..1.0)).collect())
}

/// `y = sin(2 x0) + x1 x2 + noise`: a sparse additive target.
fn target(x: &Matrix, rng: &mut ChaCha8Rng) -> Matrix {
    let y: Vec<f64> = (0..x.rows)
        .map(|i| {
            (2.0 * x.get(i, 0)).sin() + x.get(i, 1) * x.get(i, 2) + 0.1 * rng.gen_range(-1.0..1.0)
        })
        .collect();
    Matrix::from_vec(x.rows, 1, y)
}

/// Gaussian kernels on random 3-feature subsets, widths from a grid (sigma2 in
/// {0.25, 0.5, 1, 2, 4}; the median of ||x - x'||^2 / 2 on 3 uniform(-1,1) features is
/// about 1), normalized to uniform variance in feature space.
fn rbf_specs(m: usize, d: usize, rng: &mut ChaCha8Rng) -> Vec<KernelSpec> {
    let cols: Vec<usize> = (0..d).collect();
    let widths = [0.25, 0.5, 1.0, 2.0, 4.0];
    (0..m)
        .map(|_| {
            let mut f: Vec<usize> = cols.choose_multiple(rng, 3).cloned().collect();
            f.sort_unstable();
            let w = widths[rng.gen_range(0..widths.len())];
            let mut s: KernelSpec = format!("rbf:sigma2={w}").parse().expect("spec");
            s.norm = Normalization::Variance;
            s.features = Some(f);
            s
        })
        .collect()
}

fn gomp_dense(c: &mut Criterion) {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let (n, d, m) = (500, 20, 1000);
    let x = random(n, d, &mut rng);
    let y = target(&x, &mut rng);
    let specs = rbf_specs(m, d, &mut rng);
    let names: Vec<String> = (0..d).map(|j| format!("x{j}")).collect();
    let limit = MemoryLimit::default();
    let params = GompParams {
        lambda: 1e-3,
        max_kernels: 20,
        eps: 0.0,
        precompute: Precompute::Cholesky,
        ..GompParams::default()
    };
    let mut g = c.benchmark_group("gomp_1000_rbf_n500");
    g.sample_size(10);
    g.bench_function("grams", |b| {
        b.iter(|| {
            let fitted = fit_all(&specs, &x, &names, 0).expect("fit");
            kernel_matrices(&fitted, &x, &limit).expect("grams")
        })
    });
    let fitted = fit_all(&specs, &x, &names, 0).expect("fit");
    let mats = kernel_matrices(&fitted, &x, &limit).expect("grams");
    g.bench_function("path", |b| {
        b.iter(|| {
            let (p, _) = gomp(&mats, &y, &params, &()).expect("gomp");
            assert_eq!(p.steps.len(), 20);
            p
        })
    });
    drop(mats);
    g.bench_function("total", |b| {
        b.iter(|| {
            let fitted = fit_all(&specs, &x, &names, 0).expect("fit");
            let mats = kernel_matrices(&fitted, &x, &limit).expect("grams");
            gomp(&mats, &y, &params, &()).expect("gomp")
        })
    });
    g.finish();
}

fn gomp_rank_one(c: &mut Criterion) {
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    let (n, d) = (500, 2000);
    let x = random(n, d, &mut rng);
    let y = target(&x, &mut rng);
    let mats: Vec<KernelMatrix> = (0..d).map(|j| KernelMatrix::rank_one(x.col(j))).collect();
    let params = GompParams {
        lambda: 1e-3,
        max_kernels: 50,
        eps: 0.0,
        ..GompParams::default()
    };
    let mut g = c.benchmark_group("gomp_rank_one");
    g.sample_size(10);
    g.bench_function("2000_linear_n500_path50", |b| {
        b.iter(|| gomp(&mats, &y, &params, &()).expect("gomp"))
    });
    g.finish();
}

fn lp(c: &mut Criterion) {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let x = random(50, 50, &mut rng);
    let y = Matrix::from_vec(
        50,
        1,
        (0..50)
            .map(|i| {
                if x.get(i, 0) + x.get(i, 1) > 0.0 {
                    1.0
                } else {
                    -1.0
                }
            })
            .collect(),
    );
    let mats: Vec<KernelMatrix> = (0..50).map(|j| KernelMatrix::rank_one(x.col(j))).collect();
    let mut g = c.benchmark_group("lp_mkl");
    g.sample_size(20);
    for (label, p) in [
        ("1", 1.0),
        ("4/3", 4.0 / 3.0),
        ("2", 2.0),
        ("4", 4.0),
        ("inf", f64::INFINITY),
    ] {
        let params = LpMklParams {
            p,
            lambda: 0.1,
            tol: 1e-6,
            ..LpMklParams::default()
        };
        g.bench_with_input(
            BenchmarkId::new("sim_50x50_rank_one", label),
            &params,
            |b, pr| b.iter(|| lp_mkl(&mats, &y, pr, &()).expect("lp")),
        );
    }
    let x = random(300, 10, &mut rng);
    let y = target(&x, &mut rng);
    let specs = rbf_specs(100, 10, &mut rng);
    let names: Vec<String> = (0..10).map(|j| format!("x{j}")).collect();
    let fitted = fit_all(&specs, &x, &names, 0).expect("fit");
    let dense = kernel_matrices(&fitted, &x, &MemoryLimit::default()).expect("grams");
    let params = LpMklParams {
        p: 4.0 / 3.0,
        lambda: 0.1,
        tol: 1e-6,
        ..LpMklParams::default()
    };
    g.bench_function("100_rbf_n300_p4/3", |b| {
        b.iter(|| lp_mkl(&dense, &y, &params, &()).expect("lp"))
    });
    g.finish();
}

criterion_group!(benches, gomp_dense, gomp_rank_one, lp);

/// `GOMP_ONESHOT=1 cargo bench -p multikernel --bench gomp`: one timed run of the
/// 1,000-kernel target, phase by phase (what BENCHMARKS.md reports), instead of criterion.
fn oneshot() {
    use std::time::Instant;
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let (n, d, m) = (500, 20, 1000);
    let x = random(n, d, &mut rng);
    let y = target(&x, &mut rng);
    let specs = rbf_specs(m, d, &mut rng);
    let names: Vec<String> = (0..d).map(|j| format!("x{j}")).collect();
    let limit = MemoryLimit::default();
    let t0 = Instant::now();
    let fitted = fit_all(&specs, &x, &names, 0).expect("fit");
    let t_fit = t0.elapsed().as_secs_f64();
    let t1 = Instant::now();
    let mats = kernel_matrices(&fitted, &x, &limit).expect("grams");
    let t_gram = t1.elapsed().as_secs_f64();
    for pre in [Precompute::Cholesky, Precompute::None] {
        if pre == Precompute::None && std::env::var("GOMP_ONESHOT_NOCACHE").is_err() {
            continue;
        }
        let params = GompParams {
            lambda: 1e-3,
            max_kernels: 20,
            eps: 0.0,
            precompute: pre,
            ..GompParams::default()
        };
        let t2 = Instant::now();
        let (path, info) = gomp(&mats, &y, &params, &()).expect("gomp");
        let t_path = t2.elapsed().as_secs_f64();
        // Seconds of each step, from the run's trace (one point per kernel chosen).
        let mut last = 0.0;
        let steps: Vec<f64> = info
            .trace
            .iter()
            .map(|t| {
                let d = t.seconds - last;
                last = t.seconds;
                d
            })
            .collect();
        eprintln!(
            "precompute={pre:?}: fit {t_fit:.2}s, grams {t_gram:.2}s, path {t_path:.2}s \
             (first step {:.2}s incl. factorizations, then {:.3}s/step), total {:.2}s; {} kernels",
            steps[0],
            steps[1..].iter().sum::<f64>() / (steps.len() - 1) as f64,
            t_fit + t_gram + t_path,
            path.steps.len()
        );
    }
}

fn main() {
    if std::env::var("GOMP_ONESHOT").is_ok() {
        oneshot();
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
