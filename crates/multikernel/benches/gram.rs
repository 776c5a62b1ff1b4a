//! Gram-matrix throughput (kernel evaluations per second) of linear, poly, rbf and B1-spline
//! kernels: symmetric n x n Grams at n = 2000 for d = 128 and d = 10, and one OCR-shaped
//! cross Gram (5200 x 5000 at d = 128, a tenth of the 52,000 x 5,000 one).
//!
//! `cargo bench -p multikernel --bench gram` (criterion reports elements/s = evaluations/s).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use multikernel::data::Matrix;
use multikernel::kernel::{FittedKernel, KernelSpec, MemoryLimit};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn random(n: usize, d: usize, seed: u64) -> Matrix {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    Matrix::from_vec(n, d, (0..n * d).map(|_| rng.gen_range(-1.0..1.0)).collect())
}

const KERNELS: [&str; 4] = ["linear", "poly:degree=3,offset=1", "rbf", "bspline"];

fn fit(spec: &str, x: &Matrix) -> FittedKernel {
    let spec: KernelSpec = spec.parse().expect("valid spec");
    FittedKernel::fit(&spec, x, &[], 0).expect("fit")
}

fn gram_sym(c: &mut Criterion) {
    let lim = MemoryLimit::default();
    for d in [128, 10] {
        let n = 2000;
        let x = random(n, d, 1);
        let mut g = c.benchmark_group(format!("gram_sym_n{n}_d{d}"));
        g.throughput(Throughput::Elements((n * n) as u64));
        g.sample_size(10);
        for s in KERNELS {
            let k = fit(s, &x);
            g.bench_with_input(BenchmarkId::from_parameter(s), &x, |b, x| {
                b.iter(|| k.gram_sym(x, &lim).expect("gram"))
            });
        }
        g.finish();
    }
}

fn gram_cross(c: &mut Criterion) {
    let lim = MemoryLimit::default();
    let d = 128;
    let (n, m) = (2000, 2000);
    let a = random(n, d, 2);
    let b = random(m, d, 3);
    let mut g = c.benchmark_group(format!("gram_{n}x{m}_d{d}"));
    g.throughput(Throughput::Elements((n * m) as u64));
    g.sample_size(10);
    for s in KERNELS {
        let k = fit(s, &b);
        g.bench_function(BenchmarkId::from_parameter(s), |bch| {
            bch.iter(|| k.gram(&a, &b, &lim).expect("gram"))
        });
    }
    g.finish();
}

fn gram_ocr_shape(c: &mut Criterion) {
    let lim = MemoryLimit::default();
    let (n, m, d) = (5200, 5000, 128);
    let a = random(n, d, 4);
    let b = random(m, d, 5);
    let mut g = c.benchmark_group(format!("gram_ocr_{n}x{m}_d{d}"));
    g.throughput(Throughput::Elements((n * m) as u64));
    g.sample_size(10);
    for s in ["linear", "rbf"] {
        let k = fit(s, &b);
        g.bench_function(BenchmarkId::from_parameter(s), |bch| {
            bch.iter(|| k.gram(&a, &b, &lim).expect("gram"))
        });
    }
    g.finish();
}

criterion_group!(benches, gram_sym, gram_cross, gram_ocr_shape);
criterion_main!(benches);
