//! The Nystrom map (Williams & Seeger 2001, "Using the Nystrom method to speed up kernel
//! machines"): `m` landmarks `L = (l_1, ..., l_m)` are drawn from the training rows (seeded,
//! without replacement; `m` is the SPEC's `dim` capped at the number of training rows), the
//! landmarks' kernel matrix is decomposed, `K_mm = U Lambda U^T` (faer's self-adjoint
//! eigensolver), and
//!
//! ```text
//! z(x) = Lambda_r^{-1/2} U_r^T k(L, x),    k(L, x) = (k(l_1, x), ..., k(l_m, x))
//! ```
//!
//! keeps the `r` eigenpairs with `lambda > 1e-12 * lambda_max` (`RELATIVE_EIGEN_FLOOR`):
//! the map's dimension is that numerical rank `r <= m` (the others, and any negative
//! eigenvalue of a kernel that is not positive semi-definite, are dropped). Then
//! `z(x) . z(x') = k(L, x)^T K_mm^+ k(L, x')`, the kernel projected on the span of the
//! landmarks' features: exact whenever `x` or `x'` is a landmark, so with `m = n` the training
//! Gram matrix is reproduced (to about `1e-12` relative).
//!
//! `k` is the exact raw kernel (the kernel without its normalization); the normalization is
//! applied to the map's outputs like for every map ([`super`]): the approximate kernel is
//! `c * z(x) . z(x')` under `norm=trace` / `norm=variance` (the factor `c` of the exact
//! kernel) and `z(x) . z(x') / (||z(x)|| ||z(x')||)` under `norm=diag`.
//!
//! The landmarks (on the kernel's features) and the projection `P = Lambda_r^{-1/2} U_r^T`
//! are kept in the fitted kernel ([`NystromBasis`], in model files): predictions never run
//! the eigensolver again, and a model file gives the map it was trained with bit for bit.
//! Fitting costs `O(m^2 d + m^3)` and `8 m^2` bytes (hence [`MAX_NYSTROM_DIM`]); mapping a
//! row `O(m d + m r)`.

use serde::{Deserialize, Serialize};

use crate::data::Matrix;
use crate::error::{Error, Result};
use crate::kernel::heuristics::sample_rows;
use crate::kernel::FittedKind;

/// The largest number of landmarks (`dim=`) of a Nystrom map: the `m x m` eigenproblem costs
/// `O(m^3)` (seconds at 4096) and `8 m^2` bytes (128 MiB).
pub const MAX_NYSTROM_DIM: usize = 4096;

/// Eigenvalues of `K_mm` at or below this fraction of the largest are dropped.
pub(crate) const RELATIVE_EIGEN_FLOOR: f64 = 1e-12;

/// What a fitted Nystrom map keeps: the landmarks and the projection.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NystromBasis {
    /// The landmark rows on the kernel's features, `m x d_f` (training rows, in their order).
    pub landmarks: Matrix,
    /// The projection `P = Lambda_r^{-1/2} U_r^T` transposed, `m x r` (row `l`: landmark
    /// `l`'s weight in every output; outputs by decreasing eigenvalue).
    pub projection_t: Matrix,
}

impl NystromBasis {
    /// Checks a basis read from a model file against the kernel's input width `d_f` and
    /// number of landmarks `m`: the shapes, `1 <= r <= m`, finite values.
    pub(crate) fn validate(&self, m: usize, d_f: usize) -> std::result::Result<(), String> {
        let (l, p) = (&self.landmarks, &self.projection_t);
        if l.rows != m || l.cols != d_f || l.data.len() != l.rows.saturating_mul(l.cols) {
            return Err(format!(
                "Nystrom landmarks of shape {} x {} with {} values, {m} x {d_f} expected",
                l.rows,
                l.cols,
                l.data.len()
            ));
        }
        if p.rows != m || p.cols == 0 || p.cols > m || p.data.len() != p.rows.saturating_mul(p.cols)
        {
            return Err(format!(
                "a Nystrom projection of shape {} x {} with {} values, {m} x r (1 <= r <= {m}) \
                 expected",
                p.rows,
                p.cols,
                p.data.len()
            ));
        }
        if l.data.iter().chain(&p.data).any(|v| !v.is_finite()) {
            return Err("a Nystrom landmark or projection value is not finite".into());
        }
        Ok(())
    }
}

/// `(a . b, ||a - b||^2)` of two rows, in index order.
#[inline]
fn pair(a: &[f64], b: &[f64]) -> (f64, f64) {
    let (mut d, mut s) = (0.0, 0.0);
    for (&x, &y) in a.iter().zip(b) {
        d += x * y;
        s += (x - y) * (x - y);
    }
    (d, s)
}

/// Fits the Nystrom basis of the raw kernel `kind` on the (feature-restricted) training rows
/// `x`: `min(m, x.rows)` landmarks drawn from `seed`, the eigendecomposition of their kernel
/// matrix. `what` names the kernel in errors (a non-finite kernel value, a zero kernel
/// matrix, an eigensolver failure).
pub(crate) fn fit_basis(
    kind: &FittedKind,
    x: &Matrix,
    m: usize,
    seed: u64,
    what: &str,
) -> Result<NystromBasis> {
    if m == 0 || x.rows == 0 {
        return Err(Error::data(format!(
            "kernel '{what}': a Nystrom map needs at least one landmark"
        )));
    }
    let idx = sample_rows(x.rows, m, seed);
    let landmarks = x.select_rows(&idx);
    let m = idx.len();
    let mut kmm = vec![0.0; m * m];
    for i in 0..m {
        for j in 0..=i {
            let (d, s) = pair(landmarks.row(i), landmarks.row(j));
            let v = kind.value(d, s);
            kmm[i * m + j] = v;
            kmm[j * m + i] = v;
        }
    }
    if kmm.iter().any(|v| !v.is_finite()) {
        return Err(Error::data(format!(
            "kernel '{what}': the kernel matrix of the Nystrom landmarks has a non-finite \
             value (the inputs are too large for the kernel: it overflows); scale or \
             standardize the features"
        )));
    }
    let a = faer::Mat::<f64>::from_fn(m, m, |i, j| kmm[i * m + j]);
    let evd = a.self_adjoint_eigen(faer::Side::Lower).map_err(|e| {
        Error::Numerical(format!(
            "kernel '{what}': the eigendecomposition of the {m} x {m} Nystrom landmark matrix \
             did not converge ({e:?})"
        ))
    })?;
    let s = evd.S().column_vector();
    let u = evd.U();
    let top = (0..m).map(|k| s[k]).fold(0.0f64, f64::max);
    let mut keep: Vec<usize> = (0..m)
        .filter(|&k| top > 0.0 && s[k] > RELATIVE_EIGEN_FLOOR * top)
        .collect();
    if keep.is_empty() {
        return Err(Error::data(format!(
            "kernel '{what}': the kernel matrix of the {m} Nystrom landmarks is zero (rank 0): \
             there is nothing to map"
        )));
    }
    keep.sort_by(|&p, &q| s[q].total_cmp(&s[p]).then(p.cmp(&q)));
    let r = keep.len();
    let mut projection_t = Matrix::zeros(m, r);
    for (c, &k) in keep.iter().enumerate() {
        let inv = 1.0 / s[k].sqrt();
        for l in 0..m {
            projection_t.data[l * r + c] = u[(l, k)] * inv;
        }
    }
    if projection_t.data.iter().any(|v| !v.is_finite()) {
        return Err(Error::Numerical(format!(
            "kernel '{what}': the Nystrom projection has a non-finite value"
        )));
    }
    Ok(NystromBasis {
        landmarks,
        projection_t,
    })
}

/// A Nystrom map ready to apply (the raw kernel and its basis).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct NystromMap {
    kind: FittedKind,
    landmarks: Matrix,
    projection_t: Matrix,
}

impl NystromMap {
    pub(crate) fn new(kind: FittedKind, basis: &NystromBasis) -> Self {
        NystromMap {
            kind,
            landmarks: basis.landmarks.clone(),
            projection_t: basis.projection_t.clone(),
        }
    }

    /// The map's dimension: the rank `r` kept.
    pub(crate) fn dim(&self) -> usize {
        self.projection_t.cols
    }

    /// `out = P k(L, x)` for a full input row `x` (its columns `features`, or its first
    /// `d_f`); `out.len() == dim()`. The landmark values are summed in the order of the
    /// fit's, so a landmark's own row gives exactly its column of `K_mm`.
    pub(crate) fn map_row(&self, x: &[f64], features: Option<&[usize]>, out: &mut [f64]) {
        out.iter_mut().for_each(|v| *v = 0.0);
        for l in 0..self.landmarks.rows {
            let lrow = self.landmarks.row(l);
            let (d, s) = match features {
                Some(f) => {
                    let (mut d, mut s) = (0.0, 0.0);
                    for (&j, &y) in f.iter().zip(lrow) {
                        let v = x[j];
                        d += v * y;
                        s += (v - y) * (v - y);
                    }
                    (d, s)
                }
                None => pair(&x[..lrow.len()], lrow),
            };
            let k = self.kind.value(d, s);
            if k != 0.0 {
                crate::linalg::axpy(k, self.projection_t.row(l), out);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::data::Matrix;
    use crate::kernel::{FittedKernel, Gram, KernelSpec, MemoryLimit};
    use rand::{Rng, SeedableRng};

    fn rows(n: usize, d: usize, seed: u64) -> Matrix {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        Matrix::from_vec(n, d, (0..n * d).map(|_| rng.gen_range(-1.5..1.5)).collect())
    }

    fn fit(spec: &str, x: &Matrix, seed: u64) -> FittedKernel {
        let s: KernelSpec = spec.parse().unwrap();
        FittedKernel::fit(&s, x, &[], seed).unwrap()
    }

    fn dense(k: &FittedKernel, a: &Matrix, b: &Matrix) -> Matrix {
        match k.gram(a, b, &MemoryLimit::default()).unwrap() {
            Gram::Dense(m) => m,
            Gram::Sparse(_) => unreachable!(),
        }
    }

    fn mse(a: &Matrix, b: &Matrix) -> f64 {
        a.data
            .iter()
            .zip(&b.data)
            .map(|(x, y)| (x - y) * (x - y))
            .sum::<f64>()
            / a.data.len() as f64
    }

    /// With every training row a landmark (`dim >= n`, capped at `n`) the Nystrom kernel is
    /// the exact kernel on the training rows, under every normalization and for several
    /// kinds (Gaussian, polynomial, linear of low rank, a product, on a subset of the
    /// columns): largest error below `1e-8` (relative to the largest value).
    #[test]
    fn nystrom_with_every_row_is_exact_on_the_training_rows() {
        let x = rows(40, 4, 21);
        for base in [
            "rbf",
            "rbf:sigma2=0.5,norm=trace",
            "rbf:norm=variance",
            "poly:degree=3,offset=1,norm=diag",
            "linear:norm=diag",
            "product(linear*rbf):features=0+2",
            "const",
        ] {
            let exact = fit(base, &x, 0);
            let sep = if base.contains(':') { ',' } else { ':' };
            let approx = fit(&format!("{base}{sep}approx=nystrom,dim=64"), &x, 3);
            assert_eq!(approx.approx().unwrap().dim, 40, "{base}: capped at n");
            let want = dense(&exact, &x, &x);
            let got = dense(&approx, &x, &x);
            let top = want.data.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            let worst = want
                .data
                .iter()
                .zip(&got.data)
                .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
            assert!(worst < 1e-8 * top.max(1.0), "{base}: worst error {worst:e}");
        }
        // A linear kernel on 4 columns has rank 4: the map has 4 outputs.
        let lin = fit("linear:approx=nystrom,dim=40", &x, 1);
        assert_eq!(lin.feature_map().unwrap().dim(), 4);
        assert_eq!(
            fit("const:approx=nystrom,dim=9", &x, 1)
                .feature_map()
                .unwrap()
                .dim(),
            1
        );
    }

    /// Held-out rows: the Gram error against the exact Gaussian kernel falls as the number
    /// of landmarks grows (m = 8, 32, 128 of 300 rows, on three seeds), and is small at 128.
    #[test]
    fn nystrom_error_falls_with_the_number_of_landmarks() {
        let x = rows(300, 3, 22);
        let y = rows(60, 3, 23);
        let exact = dense(&fit("rbf", &x, 0), &y, &x);
        for seed in [1, 2, 3] {
            let e: Vec<f64> = [8, 32, 128]
                .iter()
                .map(|m| {
                    let k = fit(&format!("rbf:approx=nystrom,dim={m}"), &x, seed);
                    mse(&dense(&k, &y, &x), &exact)
                })
                .collect();
            assert!(e[1] < e[0] && e[2] < e[1], "seed {seed}: {e:?}");
            assert!(e[2] < 1e-5, "seed {seed}: {e:?}");
        }
    }

    /// Landmarks are drawn without replacement from the training rows, by the seed: the same
    /// seed gives the same basis, another seed another one.
    #[test]
    fn nystrom_landmarks_are_seeded_training_rows() {
        let x = rows(50, 3, 24);
        let a = fit("rbf:approx=nystrom,dim=10", &x, 7);
        let b = fit("rbf:approx=nystrom,dim=10", &x, 7);
        let c = fit("rbf:approx=nystrom,dim=10", &x, 8);
        assert_eq!(a, b);
        assert_eq!(a.feature_map(), b.feature_map());
        let basis = a.approx().unwrap().basis.as_ref().unwrap();
        let lm = &basis.landmarks;
        assert_eq!((lm.rows, lm.cols), (10, 3));
        let mut found: Vec<usize> = (0..lm.rows)
            .map(|l| (0..x.rows).find(|&i| x.row(i) == lm.row(l)).unwrap())
            .collect();
        found.dedup();
        assert_eq!(found.len(), 10, "distinct training rows");
        assert_ne!(
            basis.landmarks,
            c.approx().unwrap().basis.as_ref().unwrap().landmarks
        );
        assert!(a.name.ends_with("~nystrom10"), "{}", a.name);
    }
}
