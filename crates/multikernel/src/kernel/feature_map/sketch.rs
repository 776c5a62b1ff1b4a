//! A random feature map of the polynomial kernel `(x . x' + c)^p` (`approx=sketch,dim=D`):
//! products of random Rademacher projections (Kar & Karnick 2012, "Random feature maps for
//! dot product kernels", the random Maclaurin features of a kernel with a single term of
//! degree `p`). With `x~ = [x, sqrt(c)]` (the offset as one more constant input, so
//! `x~ . x~' = x . x' + c`) and `p D` independent vectors `w_ij` of independent random signs,
//!
//! ```text
//! z_j(x) = prod_{i=1..p} (w_ij . x~) / sqrt(D),    j = 1..D,
//! ```
//!
//! `E[(w . x~)(w . x~')] = x~ . x~'` for one sign vector, and the `p` factors are independent,
//! so `E[z(x) . z(x')] = (x . x' + c)^p`: unbiased. Each of the `D` terms `D z_j(x) z_j(x')`
//! has second moment `prod_i E[(w . x~)^2 (w . x~')^2] <= (3 ||x~||^2 ||x~'||^2)^p`
//! (`E[(w.a)^2 (w.b)^2] = ||a||^2 ||b||^2 + 2 (a.b)^2 - 2 sum_k a_k^2 b_k^2`), so the squared
//! error of `z(x) . z(x')` has expectation at most `(3 ||x~||^2 ||x~'||^2)^p / D`: it falls
//! like `1 / D`, with a constant growing like `3^p` (hence [`MAX_SKETCH_DEGREE`]).
//!
//! No FFT (the TensorSketch of Pham & Pagh 2013 needs one, and no FFT crate is a dependency):
//! a row maps in `O(p D d)` by `p (d + 1)` contiguous `axpy`s, additions and products only,
//! so the values are the same bit for bit on every machine. The signs come from a ChaCha8
//! stream seeded by the kernel's map seed (64 signs per draw), so the same seed gives the same
//! map everywhere; the map is drawn again from the seed when needed (nothing but the seed is
//! stored in model files).

use crate::data::Matrix;
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The largest polynomial degree `approx=sketch` accepts: the estimate's variance grows like
/// `3^degree / D`.
pub const MAX_SKETCH_DEGREE: u32 = 10;

/// A drawn sketch: for each degree `i`, `W_i` transposed (`(d + 1) x D`, row `k`: input `k`'s
/// sign in every output; the last row is the constant input's).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SketchMap {
    w_t: Vec<Matrix>,
    /// `sqrt(c)`, the constant input.
    root_offset: f64,
    /// Number of inputs `d` (without the constant).
    d: usize,
}

impl SketchMap {
    /// `dim` products of `degree` sign projections of `d` inputs and the constant
    /// `sqrt(offset)`, drawn from `seed`.
    pub(crate) fn new(d: usize, degree: u32, offset: f64, dim: usize, seed: u64) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let w_t = (0..degree)
            .map(|_| {
                let mut w = Matrix::zeros(d + 1, dim);
                for row in w.data.chunks_mut(dim.max(1)) {
                    for chunk in row.chunks_mut(64) {
                        let bits = rng.next_u64();
                        for (b, v) in chunk.iter_mut().enumerate() {
                            *v = if (bits >> b) & 1 == 1 { 1.0 } else { -1.0 };
                        }
                    }
                }
                w
            })
            .collect();
        SketchMap {
            w_t,
            root_offset: offset.max(0.0).sqrt(),
            d,
        }
    }

    /// `out = W_i x~` (before the products).
    fn project(&self, i: usize, x: &[f64], features: Option<&[usize]>, out: &mut [f64]) {
        let w = &self.w_t[i];
        out.iter_mut().for_each(|v| *v = 0.0);
        let mut add = |k: usize, xk: f64| {
            if xk != 0.0 {
                crate::linalg::axpy(xk, w.row(k), out);
            }
        };
        match features {
            Some(f) => f.iter().enumerate().for_each(|(k, &c)| add(k, x[c])),
            None => x[..self.d].iter().enumerate().for_each(|(k, &v)| add(k, v)),
        }
        add(self.d, self.root_offset);
    }

    /// `z(x)` of a full input row (its columns `features`, or its first `d`) into `out`.
    pub(crate) fn map_row(&self, x: &[f64], features: Option<&[usize]>, out: &mut [f64]) {
        let dim = out.len();
        if self.w_t.is_empty() {
            out.iter_mut().for_each(|v| *v = 1.0);
        } else {
            self.project(0, x, features, out);
            let mut u = vec![0.0; if self.w_t.len() > 1 { dim } else { 0 }];
            for i in 1..self.w_t.len() {
                self.project(i, x, features, &mut u);
                for (o, &v) in out.iter_mut().zip(&u) {
                    *o *= v;
                }
            }
        }
        let s = 1.0 / (dim as f64).sqrt();
        out.iter_mut().for_each(|v| *v *= s);
    }
}

#[cfg(test)]
mod tests {
    use crate::data::Matrix;
    use crate::kernel::{FittedKernel, Gram, KernelSpec, MemoryLimit};
    use rand::{Rng, SeedableRng};

    fn rows(n: usize, d: usize, seed: u64) -> Matrix {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        Matrix::from_vec(n, d, (0..n * d).map(|_| rng.gen_range(-0.6..0.6)).collect())
    }

    fn fit(spec: &str, x: &Matrix, seed: u64) -> FittedKernel {
        let s: KernelSpec = spec.parse().unwrap();
        FittedKernel::fit(&s, x, &[], seed).unwrap()
    }

    fn gram(k: &FittedKernel, x: &Matrix) -> Matrix {
        match k.gram(x, x, &MemoryLimit::default()).unwrap() {
            Gram::Dense(m) => m,
            Gram::Sparse(_) => unreachable!(),
        }
    }

    /// The bound of the module docs on the expected mean squared error times `D`:
    /// the mean over pairs of `(3 ||x~||^2 ||x~'||^2)^p`.
    fn mse_bound_times_d(x: &Matrix, degree: i32, offset: f64) -> f64 {
        let sq: Vec<f64> = (0..x.rows)
            .map(|i| crate::linalg::sq_norm(x.row(i)) + offset)
            .collect();
        let mut s = 0.0;
        for a in &sq {
            for b in &sq {
                s += (3.0 * a * b).powi(degree);
            }
        }
        s / (sq.len() * sq.len()) as f64
    }

    /// The sketch's Gram mean squared error against the exact polynomial kernel is below the
    /// bound `B / D` of the module docs (the expectation's bound, asked for the draw itself)
    /// for D = 64 .. 4096 on three seeds, for degree 2 with offset 1 and degree 3 without
    /// offset, and falls like `1 / D` (4096 against 64: expected ratio 1/64, asked below
    /// 1/16).
    #[test]
    fn sketch_grams_converge_to_the_polynomial_kernel() {
        let x = rows(40, 4, 31);
        for (base, degree, offset) in [
            ("poly:degree=2,offset=1", 2, 1.0),
            ("poly:degree=3,offset=0", 3, 0.0),
        ] {
            let want = gram(&fit(base, &x, 0), &x);
            let bound = mse_bound_times_d(&x, degree, offset);
            for seed in [1, 2, 3] {
                let mut mse = Vec::new();
                for dim in [64, 256, 1024, 4096] {
                    let k = fit(&format!("{base},approx=sketch,dim={dim}"), &x, seed);
                    let g = gram(&k, &x);
                    let e = g
                        .data
                        .iter()
                        .zip(&want.data)
                        .map(|(a, b)| (a - b) * (a - b))
                        .sum::<f64>()
                        / g.data.len() as f64;
                    assert!(
                        e < bound / dim as f64,
                        "{base} seed {seed} D = {dim}: mse {e}"
                    );
                    mse.push(e);
                }
                assert!(mse[3] < mse[0] / 16.0, "{base} seed {seed}: {mse:?}");
            }
        }
    }

    /// Unbiased: over 400 seeds at D = 16, the mean sketch Gram is within 5 standard errors
    /// of the exact kernel at every entry, and its mean absolute deviation is below 1.2 mean
    /// standard errors (0.8 expected of an unbiased mean).
    #[test]
    fn sketch_grams_are_unbiased() {
        let x = rows(12, 3, 32);
        for base in ["poly:degree=2,offset=1", "poly:degree=3,offset=0.5"] {
            let want = gram(&fit(base, &x, 0), &x);
            let n = want.data.len();
            let (mut s1, mut s2) = (vec![0.0; n], vec![0.0; n]);
            let runs = 400;
            for seed in 0..runs {
                let g = gram(&fit(&format!("{base},approx=sketch,dim=16"), &x, seed), &x);
                for ((a, b), v) in s1.iter_mut().zip(&mut s2).zip(&g.data) {
                    *a += v;
                    *b += v * v;
                }
            }
            let r = runs as f64;
            let (mut dev, mut ses) = (0.0, 0.0);
            for ((a, b), w) in s1.iter().zip(&s2).zip(&want.data) {
                let mean = a / r;
                let var = (b / r - mean * mean).max(0.0);
                let se = (var / r).sqrt();
                assert!(
                    (mean - w).abs() <= 5.0 * se + 1e-12,
                    "{base}: mean {mean} vs exact {w} (standard error {se})"
                );
                dev += (mean - w).abs();
                ses += se;
            }
            assert!(
                dev < 1.2 * ses,
                "{base}: deviation {dev} vs standard errors {ses}"
            );
        }
    }

    /// The sketch is drawn from the seed alone: the same seed gives the same map (and the
    /// same values bit for bit), another seed another map; degree 1 without offset is a
    /// random projection of the linear kernel.
    #[test]
    fn sketch_maps_are_seeded() {
        let x = rows(10, 3, 33);
        let a = fit("poly:degree=2,offset=1,approx=sketch,dim=32", &x, 4);
        let b = fit("poly:degree=2,offset=1,approx=sketch,dim=32", &x, 4);
        let c = fit("poly:degree=2,offset=1,approx=sketch,dim=32", &x, 5);
        let (za, zb, zc) = (
            a.feature_map().unwrap().map_rows(&x),
            b.feature_map().unwrap().map_rows(&x),
            c.feature_map().unwrap().map_rows(&x),
        );
        assert_eq!(za, zb);
        assert_ne!(za, zc);
        assert_eq!(za.cols, 32);
        assert!(a.name.contains("~sketch32"), "{}", a.name);
        let lin = fit("poly:degree=1,offset=0,approx=sketch,dim=8", &x, 4);
        let z = lin.feature_map().unwrap().map_rows(&x);
        // (w . x) / sqrt(8) with w a sign vector: |z_j| <= ||x||_1 / sqrt(8).
        for i in 0..x.rows {
            let l1: f64 = x.row(i).iter().map(|v| v.abs()).sum();
            assert!(z.row(i).iter().all(|v| v.abs() <= l1 / 8f64.sqrt() + 1e-15));
        }
    }
}
