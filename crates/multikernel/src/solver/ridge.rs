//! Kernel ridge regression over weighted sums of kernel matrices, and predictions on raw
//! rows: the numerical glue MKL-GOMP ([`super::gomp`]) and lp-MKL ([`super::lp_mkl`]) share.
//!
//! Both learners solve `alpha = (sum_m w_m K_m + c I)^-1 y` with an unpenalized bias per
//! output by centering (targets centered, kernels centered in feature space: `H K H`, a factor
//! `Z` becomes `H Z`), and predict with `f(x) = sum_m w_m k_m(x, X) alpha + b`.

use crate::data::standardize::Standardizer;
use crate::data::{Matrix, MatrixRef};
use crate::error::{Error, Result};
use crate::kernel::matrix::{
    center_factor, explicit_factor, factor_t_times, test_kernel_matrix, KernelMatrix,
};
use crate::kernel::{FittedKernel, MemoryLimit};
use crate::linalg::{chol_solve_in_place, cholesky, from_faer, matmul, par_for, to_faer};
use faer::{Accum, Mat, Par};
use rayon::prelude::*;
use std::sync::OnceLock;

/// Checks kernels and targets for a fit; returns `n`.
pub(crate) fn check_inputs(kernels: &[KernelMatrix], y: &Matrix) -> Result<usize> {
    if kernels.is_empty() {
        return Err(Error::param("kernels", "none", "at least one kernel"));
    }
    let n = check_targets(y)?;
    kernels
        .par_iter()
        .enumerate()
        .try_for_each(|(m, k)| k.check_train(n, m))?;
    Ok(n)
}

/// Checks the targets of a fit (at least one point and one output, finite values);
/// returns the number of points.
pub(crate) fn check_targets(y: &Matrix) -> Result<usize> {
    let n = y.rows;
    if n == 0 {
        return Err(Error::data("no training points (the targets have no row)"));
    }
    if y.cols == 0 {
        return Err(Error::data(
            "the targets have no column (no output to learn)",
        ));
    }
    if y.data.len() != n * y.cols {
        return Err(Error::shape(
            "values of the targets",
            n * y.cols,
            y.data.len(),
        ));
    }
    if y.data.iter().any(|v| !v.is_finite()) {
        return Err(Error::data("the targets contain a non-finite value"));
    }
    Ok(n)
}

/// Column means of `y` and `y` minus them (the centered targets of the bias).
pub(crate) fn center_targets(y: &Matrix) -> (Vec<f64>, Matrix) {
    let n = y.rows.max(1) as f64;
    let mut mean = vec![0.0; y.cols];
    for i in 0..y.rows {
        for (c, m) in mean.iter_mut().enumerate() {
            *m += y.get(i, c) / n;
        }
    }
    let mut yc = y.clone();
    for i in 0..y.rows {
        for (c, v) in yc.row_mut(i).iter_mut().enumerate() {
            *v -= mean[c];
        }
    }
    (mean, yc)
}

/// `sum_c y_c^T (sum_m w_m K_m + c I)^-1 y_c`-style solve: returns
/// `alpha = (sum_m w_m K_m + c I)^-1 y` with the kernels centered in feature space when
/// `center` (then `y` should be centered too). Dense when any kernel with a positive
/// weight is dense or the total factor rank reaches `n`; otherwise the Woodbury identity
/// over the stacked factors, O(n R^2).
#[cfg(test)]
pub(crate) fn solve_weighted_sum(
    kernels: &[KernelMatrix],
    weights: &[f64],
    c: f64,
    center: bool,
    y: &Matrix,
) -> Result<Matrix> {
    check_inputs(kernels, y)?;
    if weights.len() != kernels.len() {
        return Err(Error::shape(
            "kernel weights (one per kernel)",
            kernels.len(),
            weights.len(),
        ));
    }
    if !(c > 0.0 && c.is_finite()) {
        return Err(Error::param("c", c, "a positive finite ridge term"));
    }
    Prepared::new(kernels, center).solve(weights, c, y)
}

/// Kernels with what the solves need: centered factors, and the column means of the dense
/// Gram matrices (computed on first use, once for all the solves).
pub(crate) struct Prepared<'a> {
    kernels: Vec<&'a KernelMatrix>,
    center: bool,
    /// Centered factors (or the factors themselves without centering); `None` for dense.
    factors: Vec<Option<Matrix>>,
    /// `(1/n) K_m 1` of each kernel ([`KernelMatrix::col_means`]), when first needed.
    means: Vec<OnceLock<Vec<f64>>>,
}

impl<'a> Prepared<'a> {
    pub(crate) fn new(kernels: &'a [KernelMatrix], center: bool) -> Prepared<'a> {
        Prepared::from_refs(kernels.iter().collect(), center)
    }

    /// Like [`Prepared::new`] over a subset of a dictionary.
    pub(crate) fn from_refs(kernels: Vec<&'a KernelMatrix>, center: bool) -> Prepared<'a> {
        let factors = kernels
            .iter()
            .map(|k| match *k {
                KernelMatrix::Factor(z) if center => Some(center_factor(z)),
                KernelMatrix::Factor(z) => Some(z.clone()),
                KernelMatrix::Dense(_) => None,
            })
            .collect();
        let means = kernels.iter().map(|_| OnceLock::new()).collect();
        Prepared {
            kernels,
            center,
            factors,
            means,
        }
    }

    /// Like [`Prepared::from_refs`], with the kernels' column means `(1/n) K_m 1` already
    /// known (`means[m]`, as [`KernelMatrix::col_means`] computes them).
    pub(crate) fn from_refs_with_means(
        kernels: Vec<&'a KernelMatrix>,
        center: bool,
        means: Vec<Vec<f64>>,
    ) -> Prepared<'a> {
        let mut prepared = Prepared::from_refs(kernels, center);
        prepared.means = means.into_iter().map(OnceLock::from).collect();
        prepared
    }

    /// The kernels, in the order given.
    pub(crate) fn kernels(&self) -> &[&'a KernelMatrix] {
        &self.kernels
    }

    /// Whether the kernels are centered (the bias is learned).
    pub(crate) fn centers(&self) -> bool {
        self.center
    }

    /// `(1/n) K_m 1` of kernel `m` (computed once).
    pub(crate) fn col_means(&self, m: usize) -> &[f64] {
        self.means[m].get_or_init(|| self.kernels[m].col_means())
    }

    /// `alpha^T K_m alpha` summed over outputs. With centering `alpha` comes from centered
    /// kernels and targets, so `1^T alpha = 0` and the raw kernel gives the value of
    /// `H K_m H`.
    pub(crate) fn quad_form_of(&self, k: &KernelMatrix, alpha: &Matrix) -> f64 {
        k.quad_form(alpha)
    }

    /// `(sum_m w_m K_m (+centering) + c I)^-1 y`.
    pub(crate) fn solve(&self, weights: &[f64], c: f64, y: &Matrix) -> Result<Matrix> {
        let n = y.rows;
        let active: Vec<usize> = (0..self.kernels.len())
            .filter(|&m| weights[m] > 0.0)
            .collect();
        if active.is_empty() {
            let mut a = y.clone();
            a.data.iter_mut().for_each(|v| *v /= c);
            return Ok(a);
        }
        let any_dense = active
            .iter()
            .any(|&m| matches!(self.kernels[m], KernelMatrix::Dense(_)));
        let total_rank: usize = active
            .iter()
            .filter_map(|&m| self.factors[m].as_ref().map(|z| z.cols))
            .sum();
        if !any_dense && total_rank < n {
            // Woodbury: (F F^T + c I)^-1 y = (y - F (F^T F + c I)^-1 F^T y) / c.
            let f = self.stacked_factors(&active, weights, n, total_rank);
            let mut g = Mat::<f64>::zeros(total_rank, total_rank);
            faer::linalg::matmul::matmul(
                g.as_mut(),
                Accum::Replace,
                f.transpose(),
                f.as_ref(),
                1.0,
                Par::Seq,
            );
            for i in 0..total_rank {
                g[(i, i)] += c;
            }
            let l = cholesky(g, Par::Seq)?;
            let ym = to_faer(y);
            let mut t = f.transpose() * &ym;
            chol_solve_in_place(&l, &mut t, Par::Seq);
            let ft = &f * &t;
            let mut out = Matrix::zeros(n, y.cols);
            for i in 0..n {
                for k in 0..y.cols {
                    out.set(i, k, (y.get(i, k) - ft[(i, k)]) / c);
                }
            }
            return Ok(out);
        }
        // Dense: A = H (sum w K_dense) H + F F^T (factors already centered) + c I, built in
        // one pass straight into the factorization's matrix: `S = sum w K_dense` and, with
        // centering, `(H S H)_ij = S_ij - s_i - s_j + mean(s)` with `s = sum w (1/n) K 1`
        // (the kernels' column means, computed once for all the solves). Only the lower
        // triangle is written: the Cholesky factorization reads nothing else, and the
        // symmetric K's column j below the diagonal is its row j from j on (contiguous).
        let dense: Vec<(usize, &Matrix, f64)> = active
            .iter()
            .filter_map(|&m| match self.kernels[m] {
                KernelMatrix::Dense(k) => Some((m, k, weights[m])),
                KernelMatrix::Factor(_) => None,
            })
            .collect();
        let shift: Option<(Vec<f64>, f64)> = (self.center && any_dense).then(|| {
            let mut s = vec![0.0; n];
            for &(m, _, w) in &dense {
                for (si, mi) in s.iter_mut().zip(self.col_means(m)) {
                    *si += w * mi;
                }
            }
            let grand = s.iter().sum::<f64>() / n.max(1) as f64;
            (s, grand)
        });
        let mut a = Mat::<f64>::zeros(n, n);
        for j in 0..n {
            let col = a
                .col_mut(j)
                .try_as_col_major_mut()
                .expect("a column of an owned matrix is contiguous")
                .as_slice_mut();
            let below = &mut col[j..];
            let Some(((_, k0, w0), rest)) = dense.split_first() else {
                break; // factors only: their product is added below
            };
            for (v, kv) in below.iter_mut().zip(&k0.row(j)[j..]) {
                *v = w0 * kv;
            }
            for &(_, k, w) in rest {
                for (v, kv) in below.iter_mut().zip(&k.row(j)[j..]) {
                    *v += w * kv;
                }
            }
            if let Some((s, grand)) = &shift {
                let sj = s[j];
                for (v, si) in below.iter_mut().zip(&s[j..]) {
                    *v += grand - si - sj;
                }
            }
        }
        if total_rank > 0 {
            // Factors are already centered.
            let f = self.stacked_factors(&active, weights, n, total_rank);
            faer::linalg::matmul::matmul(
                a.as_mut(),
                Accum::Add,
                f.as_ref(),
                f.transpose(),
                1.0,
                Par::Seq,
            );
        }
        for i in 0..n {
            a[(i, i)] += c;
        }
        let l = cholesky(a, par_for(n))?;
        let mut sol = to_faer(y);
        chol_solve_in_place(&l, &mut sol, par_for(n));
        Ok(from_faer(sol.as_ref()))
    }

    fn stacked_factors(&self, active: &[usize], weights: &[f64], n: usize, r: usize) -> Mat<f64> {
        let mut f = Mat::<f64>::zeros(n, r);
        let mut col = 0;
        for &m in active {
            if let Some(z) = &self.factors[m] {
                let s = weights[m].sqrt();
                for i in 0..n {
                    for (q, v) in z.row(i).iter().enumerate() {
                        f[(i, col + q)] = s * v;
                    }
                }
                col += z.cols;
            }
        }
        f
    }
}

/// `b_c = mean(y_c) - (1/n) 1^T (sum_m theta_m K_m) alpha_c` with the raw kernels.
pub(crate) fn bias_from(
    col_means: &[Vec<f64>],
    weights: &[f64],
    alpha: &Matrix,
    ymean: &[f64],
) -> Vec<f64> {
    let mut b = ymean.to_vec();
    for m in 0..col_means.len() {
        let w = weights[m];
        if w == 0.0 {
            continue;
        }
        for (c, bc) in b.iter_mut().enumerate() {
            let s: f64 = (0..alpha.rows)
                .map(|i| col_means[m][i] * alpha.get(i, c))
                .sum();
            *bc -= w * s;
        }
    }
    b
}

/// `sum_m w_m K_m(test, train) alpha + b`.
pub(crate) fn decision_weighted<K: std::borrow::Borrow<KernelMatrix>>(
    train: &[K],
    test: &[K],
    weights: &[f64],
    alpha: &Matrix,
    bias: &[f64],
) -> Result<Matrix> {
    if train.len() != weights.len() {
        return Err(Error::shape(
            "training kernels (one per weight)",
            weights.len(),
            train.len(),
        ));
    }
    if test.len() != weights.len() {
        return Err(Error::shape(
            "test kernels (one per weight)",
            weights.len(),
            test.len(),
        ));
    }
    let n_test = test.first().map_or(0, |t| t.borrow().rows());
    let mut out = Matrix::zeros(n_test, alpha.cols);
    for i in 0..n_test {
        out.row_mut(i).copy_from_slice(bias);
    }
    for m in 0..weights.len() {
        let w = weights[m];
        if w == 0.0 {
            continue;
        }
        let contrib = cross_times(train[m].borrow(), test[m].borrow(), alpha, m)?;
        if contrib.rows != n_test {
            return Err(Error::shape(
                format!("rows of test kernel {m}"),
                n_test,
                contrib.rows,
            ));
        }
        for (o, v) in out.data.iter_mut().zip(&contrib.data) {
            *o += w * v;
        }
    }
    Ok(out)
}

/// `K(test, train) a` for one kernel given its training and test sides.
pub(crate) fn cross_times(
    train: &KernelMatrix,
    test: &KernelMatrix,
    a: &Matrix,
    m: usize,
) -> Result<Matrix> {
    match (train, test) {
        (KernelMatrix::Dense(k), KernelMatrix::Dense(c)) => {
            if c.cols != k.rows {
                return Err(Error::shape(
                    format!("columns of the cross Gram matrix of kernel {m}"),
                    k.rows,
                    c.cols,
                ));
            }
            if a.rows != k.rows {
                return Err(Error::shape(
                    format!("rows of the coefficients of kernel {m}"),
                    k.rows,
                    a.rows,
                ));
            }
            Ok(matmul(c, a))
        }
        (KernelMatrix::Factor(z), KernelMatrix::Factor(zt)) => {
            if zt.cols != z.cols {
                return Err(Error::shape(
                    format!("columns of the test factor of kernel {m}"),
                    z.cols,
                    zt.cols,
                ));
            }
            if a.rows != z.rows {
                return Err(Error::shape(
                    format!("rows of the coefficients of kernel {m}"),
                    z.rows,
                    a.rows,
                ));
            }
            Ok(matmul(zt, &factor_t_times(z, a)))
        }
        _ => Err(Error::data(format!(
            "kernel {m}: training and test sides must both be dense or both factors"
        ))),
    }
}

// Raw rows.

/// Checks the raw inputs of a model fit (`n_targets` rows of targets); returns the
/// standardizer and the rows to learn on (a copy, standardized when asked).
pub(crate) fn prepare_rows(
    x: MatrixRef<'_>,
    feature_names: &[String],
    n_targets: usize,
    standardize: bool,
) -> Result<(Option<Standardizer>, Matrix)> {
    if x.rows() != n_targets {
        return Err(Error::shape("rows of the targets", x.rows(), n_targets));
    }
    if x.rows() == 0 {
        return Err(Error::data("no training rows"));
    }
    if feature_names.len() != x.cols() {
        return Err(Error::shape(
            "feature names (one per feature column)",
            x.cols(),
            feature_names.len(),
        ));
    }
    if x.data().iter().any(|v| !v.is_finite()) {
        return Err(Error::data("the features contain a non-finite value"));
    }
    let mut xs = x.to_matrix();
    if standardize {
        let s = Standardizer::fit(&xs);
        for i in 0..xs.rows {
            s.apply_row(xs.row_mut(i));
        }
        Ok((Some(s), xs))
    } else {
        Ok((None, xs))
    }
}

/// `x` standardized (a copy) when the model standardizes, after checking its number of
/// columns against the model's `n_features`; `None` when the rows are used as they are.
pub(crate) fn standardized(
    standardizer: Option<&Standardizer>,
    n_features: usize,
    x: MatrixRef<'_>,
) -> Result<Option<Matrix>> {
    check_columns(n_features, x)?;
    Ok(standardizer.map(|s| {
        let mut m = x.to_matrix();
        for i in 0..m.rows {
            s.apply_row(m.row_mut(i));
        }
        m
    }))
}

/// `sum_m w_m K_m(x, X_train) A_m + b` for raw rows, in blocks of rows so the cross Gram
/// matrices stay small; each block is standardized on its own, so the input rows are
/// never copied whole (a borrowed numpy array stays the only copy of its values).
/// `coef[m]` is `n_train x outputs`.
pub(crate) fn predict_rows(
    kernels: &[FittedKernel],
    coef: &[&Matrix],
    bias: &[f64],
    standardizer: Option<&Standardizer>,
    x_train: &Matrix,
    x: MatrixRef<'_>,
    limit: &MemoryLimit,
) -> Result<Matrix> {
    check_columns(x_train.cols, x)?;
    predict_blocks(kernels, coef, bias, standardizer, x_train, x, limit)
}

/// [`predict_rows`] for one coefficient matrix shared by the kernels, each scaled by its
/// weight (`f(x) = sum_m w_m k_m(x, X) coef + b`: lp-MKL, the wrappers); kernels of weight
/// 0 are skipped.
#[allow(clippy::too_many_arguments)]
pub(crate) fn predict_shared_coef(
    kernels: &[FittedKernel],
    weights: &[f64],
    coef: &Matrix,
    bias: &[f64],
    standardizer: Option<&Standardizer>,
    x_train: &Matrix,
    x: MatrixRef<'_>,
    limit: &MemoryLimit,
) -> Result<Matrix> {
    let active: Vec<usize> = (0..kernels.len()).filter(|&m| weights[m] > 0.0).collect();
    let chosen: Vec<FittedKernel> = active.iter().map(|&m| kernels[m].clone()).collect();
    let scaled: Vec<Matrix> = active
        .iter()
        .map(|&m| {
            let mut a = coef.clone();
            a.data.iter_mut().for_each(|v| *v *= weights[m]);
            a
        })
        .collect();
    let refs: Vec<&Matrix> = scaled.iter().collect();
    predict_rows(&chosen, &refs, bias, standardizer, x_train, x, limit)
}

/// [`predict_shared_coef`] on kernel matrices the caller computed (lp-MKL and the wrappers
/// on precomputed kernels): `f = sum_m w_m K_m(X_test, X_train) coef + b`, with `test[m]`
/// the `n_test x n_train` matrix of kernel `m`, read in place; kernels of weight 0 are
/// skipped. Refuses a number of matrices other than the weights' and matrices of other
/// shapes.
pub(crate) fn decision_from_kernels(
    test: &[MatrixRef<'_>],
    n_train: usize,
    weights: &[f64],
    coef: &Matrix,
    bias: &[f64],
) -> Result<Matrix> {
    if test.len() != weights.len() {
        return Err(Error::shape(
            "kernel matrices (one per kernel of the model)",
            weights.len(),
            test.len(),
        ));
    }
    let rows = test.first().map_or(0, |k| k.rows());
    for (m, k) in test.iter().enumerate() {
        if k.cols() != n_train || k.rows() != rows {
            return Err(Error::data(format!(
                "kernel {m}: a test kernel matrix must be n_test x n_train = {rows} x \
                 {n_train}; found {} x {}",
                k.rows(),
                k.cols()
            )));
        }
    }
    let outputs = coef.cols;
    let mut out = Matrix::zeros(rows, outputs);
    out.data
        .par_chunks_mut(outputs.max(1))
        .enumerate()
        .for_each(|(i, o)| {
            o.copy_from_slice(bias);
            for (k, &w) in test.iter().zip(weights) {
                if w == 0.0 {
                    continue;
                }
                for (j, &v) in k.row(i).iter().enumerate() {
                    let a = coef.row(j);
                    for c in 0..outputs {
                        o[c] += w * v * a[c];
                    }
                }
            }
        });
    Ok(out)
}

/// [`predict_rows`] on rows already standardized like `x_train`.
pub(crate) fn predict_rows_std(
    kernels: &[FittedKernel],
    coef: &[&Matrix],
    bias: &[f64],
    x_train: &Matrix,
    xs: MatrixRef<'_>,
    limit: &MemoryLimit,
) -> Result<Matrix> {
    predict_blocks(kernels, coef, bias, None, x_train, xs, limit)
}

/// The model's number of columns against the data's.
pub(crate) fn check_columns(n_features: usize, x: MatrixRef<'_>) -> Result<()> {
    if x.cols() != n_features {
        return Err(Error::shape(
            "features of the data (the model's training features)",
            n_features,
            x.cols(),
        ));
    }
    Ok(())
}

fn predict_blocks(
    kernels: &[FittedKernel],
    coef: &[&Matrix],
    bias: &[f64],
    standardizer: Option<&Standardizer>,
    x_train: &Matrix,
    xs: MatrixRef<'_>,
    limit: &MemoryLimit,
) -> Result<Matrix> {
    let k = bias.len();
    let mut out = Matrix::zeros(xs.rows(), k);
    for i in 0..xs.rows() {
        out.row_mut(i).copy_from_slice(bias);
    }
    // Factor kernels predict through primal weights Z_train^T A (r x outputs).
    let primal: Vec<Option<Matrix>> = kernels
        .par_iter()
        .zip(coef.par_iter())
        .map(|(fk, a)| explicit_factor(fk, x_train, x_train.rows).map(|z| factor_t_times(&z, a)))
        .collect();
    let block = (4_000_000 / x_train.rows.max(1)).clamp(1, xs.rows().max(1));
    let mut start = 0;
    while start < xs.rows() {
        let end = (start + block).min(xs.rows());
        let idx: Vec<usize> = (start..end).collect();
        let mut xb = xs.select_rows(&idx);
        if let Some(s) = standardizer {
            for r in 0..xb.rows {
                s.apply_row(xb.row_mut(r));
            }
        }
        let parts: Vec<Result<Matrix>> = (0..kernels.len())
            .into_par_iter()
            .map(|m| {
                match (
                    &primal[m],
                    test_kernel_matrix(&kernels[m], &xb, x_train, limit)?,
                ) {
                    (Some(w), KernelMatrix::Factor(zt)) => Ok(matmul(&zt, w)),
                    (None, KernelMatrix::Dense(c)) => Ok(matmul(&c, coef[m])),
                    _ => Err(Error::Numerical(
                        "internal: training and test sides of a kernel differ".into(),
                    )),
                }
            })
            .collect();
        for p in parts {
            let p = p?;
            for (r, i) in (start..end).enumerate() {
                for (o, v) in out.row_mut(i).iter_mut().zip(p.row(r)) {
                    *o += v;
                }
            }
        }
        start = end;
    }
    Ok(out)
}
