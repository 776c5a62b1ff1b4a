//! Kernel matrices on the training points as the batch learners use them: a dense Gram
//! matrix or an exact low-rank factor `Z` (`K = Z Z^T`), built from fitted kernels
//! ([`train_kernel_matrix`], [`test_kernel_matrix`], [`kernel_matrices`]), and their centering
//! in feature space (`H K H`, `H Z`) for an unpenalized bias.

use crate::data::Matrix;
use crate::error::{Error, Result};
use crate::kernel::{FittedKernel, FittedKind, Gram, MemoryLimit, Normalization};
use crate::linalg::dot;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// One base kernel evaluated on the training points (or, for prediction, between test and
/// training points).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum KernelMatrix {
    /// A dense Gram matrix: `n x n` symmetric positive semidefinite on the training set;
    /// on the test side the cross matrix `n_test x n` with entries `k(x_test_i, x_j)`.
    Dense(Matrix),
    /// A factor `Z` with `K = Z Z^T`: `n x r` on the training set; on the test side the
    /// same features of the test points, `n_test x r`.
    Factor(Matrix),
}

impl KernelMatrix {
    /// A rank-one kernel `K = z z^T` (a single feature, e.g. one monomial or one input
    /// variable of a per-feature linear kernel).
    pub fn rank_one(z: Vec<f64>) -> KernelMatrix {
        let n = z.len();
        KernelMatrix::Factor(Matrix::from_vec(n, 1, z))
    }

    /// Number of rows (points on the left side).
    pub(crate) fn rows(&self) -> usize {
        match self {
            KernelMatrix::Dense(k) => k.rows,
            KernelMatrix::Factor(z) => z.rows,
        }
    }

    /// The dense Gram matrix (`Z Z^T` for a factor).
    pub fn to_dense(&self) -> Matrix {
        match self {
            KernelMatrix::Dense(k) => k.clone(),
            KernelMatrix::Factor(z) => {
                let n = z.rows;
                let mut k = Matrix::zeros(n, n);
                for i in 0..n {
                    for j in 0..=i {
                        let v = dot(z.row(i), z.row(j));
                        k.set(i, j, v);
                        k.set(j, i, v);
                    }
                }
                k
            }
        }
    }

    /// `(1/n) K 1`, the column means of the training Gram matrix.
    pub(crate) fn col_means(&self) -> Vec<f64> {
        match self {
            KernelMatrix::Dense(k) => {
                let n = k.rows.max(1) as f64;
                (0..k.rows)
                    .map(|i| k.row(i).iter().sum::<f64>() / n)
                    .collect()
            }
            KernelMatrix::Factor(z) => {
                let zbar = factor_means(z);
                (0..z.rows).map(|i| dot(z.row(i), &zbar)).collect()
            }
        }
    }

    /// The kernel centered in feature space: `H K H` (dense) or `H Z` (factor).
    #[cfg(test)]
    pub(crate) fn centered(&self) -> KernelMatrix {
        match self {
            KernelMatrix::Dense(k) => {
                let mut c = k.clone();
                center_dense_in_place(&mut c);
                KernelMatrix::Dense(c)
            }
            KernelMatrix::Factor(z) => KernelMatrix::Factor(center_factor(z)),
        }
    }

    /// `sum_c a_c^T K a_c` over the columns of `a` (`n x k`). A dense `K` is symmetric, so
    /// only its lower triangle is read: `a^T K a = sum_i a_i (K_ii a_i + 2 K_i,<i a_<i)`
    /// (half the memory traffic of the full product, which bounds its time).
    pub(crate) fn quad_form(&self, a: &Matrix) -> f64 {
        match self {
            KernelMatrix::Dense(k) => {
                let mut s = 0.0;
                let mut ac = vec![0.0; a.rows];
                for c in 0..a.cols {
                    for (i, v) in ac.iter_mut().enumerate() {
                        *v = a.get(i, c);
                    }
                    for (i, &ai) in ac.iter().enumerate() {
                        if ai != 0.0 {
                            let row = k.row(i);
                            s += ai * (row[i] * ai + 2.0 * dot(&row[..i], &ac[..i]));
                        }
                    }
                }
                s
            }
            KernelMatrix::Factor(z) => {
                let zt_a = factor_t_times(z, a);
                zt_a.data.iter().map(|v| v * v).sum()
            }
        }
    }

    pub(crate) fn check_train(&self, n: usize, m: usize) -> Result<()> {
        match self {
            KernelMatrix::Dense(k) => {
                if k.rows != n {
                    return Err(Error::shape(
                        format!("rows of the Gram matrix of kernel {m}"),
                        n,
                        k.rows,
                    ));
                }
                if k.cols != n {
                    return Err(Error::shape(
                        format!("columns of the Gram matrix of kernel {m}"),
                        n,
                        k.cols,
                    ));
                }
                if k.data.iter().any(|v| !v.is_finite()) {
                    return Err(Error::data(format!(
                        "kernel {m}: Gram matrix has a non-finite value"
                    )));
                }
            }
            KernelMatrix::Factor(z) => {
                if z.rows != n {
                    return Err(Error::shape(
                        format!("rows of the factor of kernel {m}"),
                        n,
                        z.rows,
                    ));
                }
                if z.cols == 0 {
                    return Err(Error::data(format!("kernel {m}: factor has no column")));
                }
                if z.data.iter().any(|v| !v.is_finite()) {
                    return Err(Error::data(format!(
                        "kernel {m}: factor has a non-finite value"
                    )));
                }
            }
        }
        Ok(())
    }
}

/// The training side of a fitted kernel on rows `x` (already standardized if the model
/// standardizes): an exact factor for a linear kernel on fewer features than half the
/// points (rank one for `perfeature:linear`; `Z = sqrt(scale) X_F`, or the unit-normalized
/// rows for `norm=diag`) and for the constant kernel; the dense Gram matrix otherwise.
pub fn train_kernel_matrix(
    fk: &FittedKernel,
    x: &Matrix,
    limit: &MemoryLimit,
) -> Result<KernelMatrix> {
    if let Some(z) = explicit_factor(fk, x, x.rows) {
        return Ok(KernelMatrix::Factor(z));
    }
    Ok(KernelMatrix::Dense(into_dense(fk.gram_sym(x, limit)?)))
}

/// The test side matching [`train_kernel_matrix`]: the test rows' factor, or the cross Gram
/// matrix `k(x_test_i, x_train_j)`.
pub fn test_kernel_matrix(
    fk: &FittedKernel,
    x_test: &Matrix,
    x_train: &Matrix,
    limit: &MemoryLimit,
) -> Result<KernelMatrix> {
    if x_test.cols != x_train.cols {
        return Err(Error::shape(
            format!("features of the test rows of kernel {}", fk.name),
            x_train.cols,
            x_test.cols,
        ));
    }
    if let Some(z) = explicit_factor(fk, x_test, x_train.rows) {
        return Ok(KernelMatrix::Factor(z));
    }
    Ok(KernelMatrix::Dense(into_dense(
        fk.gram(x_test, x_train, limit)?,
    )))
}

/// The dense matrix of a Gram, without a copy when it is already dense.
fn into_dense(g: Gram) -> Matrix {
    match g {
        Gram::Dense(m) => m,
        g @ Gram::Sparse(_) => g.to_dense(),
    }
}

/// Training kernel matrices of a dictionary, in parallel, after checking their total size.
pub fn kernel_matrices(
    fitted: &[FittedKernel],
    x: &Matrix,
    limit: &MemoryLimit,
) -> Result<Vec<KernelMatrix>> {
    let n = x.rows;
    let bytes: usize = fitted
        .iter()
        .map(|fk| {
            let r = explicit_rank(fk, n).unwrap_or(n);
            n.saturating_mul(r).saturating_mul(8)
        })
        .fold(0usize, |a, b| a.saturating_add(b));
    limit.check(
        bytes,
        &format!(
            "the training kernel matrices of {} kernels over {n} points",
            fitted.len()
        ),
    )?;
    fitted
        .par_iter()
        .map(|fk| train_kernel_matrix(fk, x, limit))
        .collect()
}

/// Rank of the explicit factor of a kernel, when it has one worth using for `n` points.
fn explicit_rank(fk: &FittedKernel, n: usize) -> Option<usize> {
    let f = fk.features().map_or(fk.n_features(), |f| f.len());
    match fk.kind() {
        FittedKind::Linear if f > 0 && 2 * f <= n => Some(f),
        FittedKind::Const => Some(1),
        _ => None,
    }
}

pub(crate) fn explicit_factor(fk: &FittedKernel, x: &Matrix, n_train: usize) -> Option<Matrix> {
    let r = explicit_rank(fk, n_train)?;
    let scale = fk.scale();
    if !(scale.is_finite() && scale >= 0.0) {
        return None;
    }
    let mut z = Matrix::zeros(x.rows, r);
    match fk.kind() {
        FittedKind::Const => {
            let v = if fk.norm() == Normalization::Diag {
                1.0
            } else {
                scale.sqrt()
            };
            z.data.iter_mut().for_each(|e| *e = v);
        }
        _ => {
            let cols: Vec<usize> = match fk.features() {
                Some(f) => f.to_vec(),
                None => (0..fk.n_features()).collect(),
            };
            for i in 0..x.rows {
                let row = x.row(i);
                let zi = z.row_mut(i);
                for (q, &c) in cols.iter().enumerate() {
                    zi[q] = row[c];
                }
                if fk.norm() == Normalization::Diag {
                    let nrm = zi.iter().map(|v| v * v).sum::<f64>().sqrt();
                    let inv = if nrm > 0.0 { 1.0 / nrm } else { 0.0 };
                    zi.iter_mut().for_each(|v| *v *= inv);
                } else {
                    let s = scale.sqrt();
                    zi.iter_mut().for_each(|v| *v *= s);
                }
            }
        }
    }
    Some(z)
}

// Centering in feature space.

/// Mean of each column of a factor.
pub(crate) fn factor_means(z: &Matrix) -> Vec<f64> {
    let n = z.rows.max(1) as f64;
    let mut m = vec![0.0; z.cols];
    for i in 0..z.rows {
        for (q, v) in z.row(i).iter().enumerate() {
            m[q] += v / n;
        }
    }
    m
}

/// `H Z`: the factor of the kernel centered in feature space.
pub(crate) fn center_factor(z: &Matrix) -> Matrix {
    let m = factor_means(z);
    let mut c = z.clone();
    for i in 0..c.rows {
        for (q, v) in c.row_mut(i).iter_mut().enumerate() {
            *v -= m[q];
        }
    }
    c
}

/// `H K H` in place for a symmetric row-major matrix.
#[cfg(test)]
pub(crate) fn center_dense_in_place(k: &mut Matrix) {
    let n = k.rows;
    let nf = n.max(1) as f64;
    let means: Vec<f64> = (0..n).map(|i| k.row(i).iter().sum::<f64>() / nf).collect();
    let grand = means.iter().sum::<f64>() / nf;
    for i in 0..n {
        let mi = means[i];
        for (j, v) in k.row_mut(i).iter_mut().enumerate() {
            *v += grand - mi - means[j];
        }
    }
}

/// `Z^T a` (`r x k`) for a factor `Z` (`n x r`) and `a` (`n x k`).
pub(crate) fn factor_t_times(z: &Matrix, a: &Matrix) -> Matrix {
    let mut out = Matrix::zeros(z.cols, a.cols);
    for i in 0..z.rows {
        let ai = a.row(i);
        for (q, zq) in z.row(i).iter().enumerate() {
            if *zq != 0.0 {
                for (o, av) in out.row_mut(q).iter_mut().zip(ai) {
                    *o += zq * av;
                }
            }
        }
    }
    out
}
