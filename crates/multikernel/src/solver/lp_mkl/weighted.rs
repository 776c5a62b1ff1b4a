//! Row weights in lp-MKL (module docs of [`super`], "Row weights"): the weighted problem
//! as the unweighted one in transformed kernels and targets.
//!
//! With row weights `w_i >= 0`, `S = sum_i w_i`, `d = sqrt(w)`, `D = diag(d)` and the
//! projection `H_d = I - d d^T / S` (it removes the direction `d`),
//!
//! ```text
//! min_{f, b} 1/2 sum_i w_i (y_i - f(x_i) - b)^2 + lambda/2 sum_m ||f_m||^2 / theta_m
//! ```
//!
//! has the bias `b = sum_i w_i (y_i - f(x_i)) / S` (the weighted mean replaces the mean),
//! and substituting it leaves `1/2 ||H_d D (y - f)||^2`: the unweighted problem without a
//! bias in the kernels `K'_m = H_d D K_m D H_d` (a factor `Z` becomes `H_d D Z`) and the
//! targets `y' = H_d D y = D (y - 1 ybar_w)`. Its coefficients `beta = (K'_theta + lambda
//! I)^-1 y'` lie in the range of `H_d`, and those of the raw kernels are `alpha = D beta`
//! (`alpha_i = 0` for a row of weight 0, `w^T 1`-orthogonal: `1^T alpha = d^T beta = 0`), so
//! `alpha = (K_theta + lambda W^-1)^-1 (y - b)` on the rows of positive weight: the
//! weighted kernel ridge. `beta^T K'_m beta = alpha^T K_m alpha` (the block norms need the
//! raw kernels only), `J = (lambda/2) <y', beta>`, and
//! `b = ybar_w - (1/S) w^T K_theta alpha`. Without a bias, `H_d` is left out. Weights all
//! 1 give `H_d = H` and `D = I`: the unweighted problem (which runs without this module).

use crate::data::Matrix;
use crate::kernel::KernelMatrix;
use crate::linalg::dot;
use rayon::prelude::*;

/// `d / ||d||` (zeros for a zero `d`).
fn unit(d: &[f64]) -> Vec<f64> {
    let norm = d.iter().map(|v| v * v).sum::<f64>().sqrt();
    if norm > 0.0 {
        d.iter().map(|v| v / norm).collect()
    } else {
        vec![0.0; d.len()]
    }
}

/// The kernels `H_d D K D H_d` (`D K D` without `center`); factors `H_d D Z` (`D Z`).
pub(crate) fn weighted_kernels(
    kernels: &[KernelMatrix],
    w: &[f64],
    center: bool,
) -> Vec<KernelMatrix> {
    let d: Vec<f64> = w.iter().map(|v| v.sqrt()).collect();
    let u = unit(&d);
    kernels
        .par_iter()
        .map(|k| match k {
            KernelMatrix::Factor(z) => {
                let mut f = z.clone();
                for (i, &di) in d.iter().enumerate() {
                    f.row_mut(i).iter_mut().for_each(|v| *v *= di);
                }
                if center {
                    let mut m = vec![0.0; f.cols];
                    for (i, &ui) in u.iter().enumerate() {
                        for (mq, v) in m.iter_mut().zip(f.row(i)) {
                            *mq += ui * v;
                        }
                    }
                    for (i, &ui) in u.iter().enumerate() {
                        for (v, mq) in f.row_mut(i).iter_mut().zip(&m) {
                            *v -= ui * mq;
                        }
                    }
                }
                KernelMatrix::Factor(f)
            }
            KernelMatrix::Dense(a) => {
                let mut a = a.clone();
                let n = a.rows;
                for i in 0..n {
                    let di = d[i];
                    for (v, dj) in a.row_mut(i).iter_mut().zip(&d) {
                        *v *= di * dj;
                    }
                }
                if center {
                    // H A H = A - u v^T - v u^T + s u u^T, v = A u, s = u^T A u.
                    let v: Vec<f64> = (0..n).map(|i| dot(a.row(i), &u)).collect();
                    let s = dot(&v, &u);
                    for i in 0..n {
                        let (ui, vi) = (u[i], v[i]);
                        for (j, x) in a.row_mut(i).iter_mut().enumerate() {
                            *x += s * ui * u[j] - ui * v[j] - vi * u[j];
                        }
                    }
                    // Exactly symmetric (the Cholesky factorization reads one triangle).
                    for i in 0..n {
                        for j in 0..i {
                            let m = 0.5 * (a.get(i, j) + a.get(j, i));
                            a.set(i, j, m);
                            a.set(j, i, m);
                        }
                    }
                }
                KernelMatrix::Dense(a)
            }
        })
        .collect()
}

/// The weighted column means `ybar_w = w^T y / S` (zeros without `center`) and the
/// targets of the transformed problem, `D (y - 1 ybar_w^T)`.
pub(crate) fn weighted_targets(y: &Matrix, w: &[f64], center: bool) -> (Vec<f64>, Matrix) {
    let total: f64 = w.iter().sum();
    let mut mean = vec![0.0; y.cols];
    if center {
        for (i, &wi) in w.iter().enumerate() {
            for (c, m) in mean.iter_mut().enumerate() {
                *m += wi * y.get(i, c);
            }
        }
        mean.iter_mut().for_each(|m| *m /= total);
    }
    let mut yw = y.clone();
    for (i, &wi) in w.iter().enumerate() {
        let d = wi.sqrt();
        for (c, v) in yw.row_mut(i).iter_mut().enumerate() {
            *v = d * (*v - mean[c]);
        }
    }
    (mean, yw)
}

/// `alpha = D beta`: the coefficients of the raw kernels.
pub(crate) fn unscale(beta: &mut Matrix, w: &[f64]) {
    for (i, &wi) in w.iter().enumerate() {
        let d = wi.sqrt();
        beta.row_mut(i).iter_mut().for_each(|v| *v *= d);
    }
}

/// The weighted column means `(1/S) w^T K` of a kernel matrix (dense or factor): the
/// bias's `b = ybar_w - sum_m theta_m <means_m, alpha>`.
pub(crate) fn weighted_col_means(k: &KernelMatrix, w: &[f64]) -> Vec<f64> {
    let total: f64 = w.iter().sum();
    match k {
        KernelMatrix::Dense(m) => {
            let mut out = vec![0.0; m.cols];
            for (i, &wi) in w.iter().enumerate() {
                if wi != 0.0 {
                    for (o, v) in out.iter_mut().zip(m.row(i)) {
                        *o += wi * v;
                    }
                }
            }
            out.iter_mut().for_each(|o| *o /= total);
            out
        }
        KernelMatrix::Factor(z) => {
            let mut zbar = vec![0.0; z.cols];
            for (i, &wi) in w.iter().enumerate() {
                for (o, v) in zbar.iter_mut().zip(z.row(i)) {
                    *o += wi * v;
                }
            }
            zbar.iter_mut().for_each(|o| *o /= total);
            (0..z.rows).map(|i| dot(z.row(i), &zbar)).collect()
        }
    }
}
