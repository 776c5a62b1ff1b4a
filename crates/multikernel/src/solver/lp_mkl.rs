//! lp-norm multiple kernel learning for the squared loss (Kloft et al. 2011, "lp-norm
//! multiple kernel learning", JMLR 12), by the alternating closed form of FORMULAS.md
//! ("lp-MKL for the squared loss"). This is the one lp-MKL solver of the library: the
//! MKL-GOMP baselines (Sindhwani & Lozano 2012, Sec. 5.1, their "lq-MKL") and the mirror
//! descent baselines (Afkanpour et al. 2013) both call [`lp_mkl`].
//!
//! # Problem
//! With kernel weights `theta` on the lp sphere (`p` is the *kernel-weight* norm of
//! FORMULAS.md: p = 1 sparse MKL, p = inf the plain sum of kernels) and
//! `K_theta = sum_m theta_m K_m`,
//!
//! ```text
//! J(theta) = min_w 1/2 ||y - f_w||^2 + lambda/2 sum_m ||w_m||^2 / theta_m
//!          = (lambda/2) y^T (K_theta + lambda I)^-1 y,
//! ```
//!
//! summed over the columns of `y` for several outputs (one-hot targets of a multiclass
//! problem share the kernel weights). Note the scale: `lambda` multiplies the identity
//! directly (not `lambda * n` as in MKL-GOMP's R(g; r)); both learners choose lambda from
//! a grid, so only the grids differ.
//!
//! # Algorithm (alternating minimization)
//! Start at the uniform `theta_m = M^(-1/p)`; repeat
//! 1. `alpha = (K_theta + lambda I)^-1 y`, `J(theta) = (lambda/2) <y, alpha>`;
//! 2. block norms `||w_m||^2 = theta_m^2 alpha^T K_m alpha`;
//! 3. `theta_m = ||w_m||^(2/(p+1)) / (sum_k ||w_k||^(2p/(p+1)))^(1/p)` (p = inf: theta = 1),
//!
//! until J changes by less than `tol` relatively. Each step is an exact block minimization
//! of a jointly convex function, so J never increases ([`LpMklSolution::objective`] holds
//! J per iteration).
//!
//! # Bias
//! On by default (`bias: true`): an *unpenalized* bias per output, solved exactly by
//! centering: targets are centered and every kernel is centered in feature space
//! (`H K H`, `H = I - 11^T/n`; a factor `Z` becomes `H Z`). Then `1^T alpha = 0` and
//! `b = mean(y) - (1/n) 1^T K_theta alpha` with the *uncentered* kernels, so prediction uses
//! plain cross kernels: `f(x) = sum_m theta_m k_m(x, X) alpha + b`.
//!
//! # Kernels
//! A base kernel on the `n` training points is a [`KernelMatrix`]: a dense Gram matrix, or
//! a factor `Z` (`n x r`, `K = Z Z^T`). A rank-one kernel (one monomial feature `z`, one
//! per-feature linear kernel) is a factor with `r = 1`: thousands of them stay cheap, since
//! only `n x sum(r)` numbers are stored and, when the total rank is below `n`, the solve
//! goes through the Woodbury identity in O(n R^2).
//!
//! # Usage
//! ```
//! use multikernel::data::Matrix;
//! use multikernel::kernel::KernelMatrix;
//! use multikernel::solver::lp_mkl::{lp_mkl, LpMklParams};
//!
//! // Three rank-one kernels (one per feature) over four training points.
//! let x = Matrix::from_rows(&[
//!     vec![1.0, 0.5, -1.0],
//!     vec![-1.0, 0.2, 0.3],
//!     vec![0.8, -0.4, 0.9],
//!     vec![-0.9, 0.1, -0.2],
//! ]);
//! let kernels: Vec<KernelMatrix> = (0..3).map(|j| KernelMatrix::rank_one(x.col(j))).collect();
//! let y = Matrix::from_vec(4, 1, vec![1.0, -1.0, 1.0, -1.0]);
//! let params = LpMklParams { p: 4.0 / 3.0, lambda: 0.1, ..LpMklParams::default() };
//! let sol = lp_mkl(&kernels, &y, &params).unwrap();
//! assert!(sol.objective.windows(2).all(|w| w[1] <= w[0] * (1.0 + 1e-9)));
//! let norm: f64 = sol.theta.iter().map(|t| t.powf(params.p)).sum();
//! assert!((norm - 1.0).abs() < 1e-9);
//! // Predictions on new rows: the test-side kernels (factors for rank-one kernels,
//! // cross Gram matrices n_test x n for dense ones).
//! let test: Vec<KernelMatrix> = (0..3).map(|j| KernelMatrix::rank_one(vec![0.5 * x.get(0, j)])).collect();
//! let f = sol.decision(&kernels, &test).unwrap();
//! assert_eq!((f.rows, f.cols), (1, 1));
//! ```

use crate::data::standardize::Standardizer;
use crate::data::Matrix;
use crate::error::{Error, Result};
use crate::kernel::matrix::{
    center_dense_in_place, center_factor, explicit_factor, factor_t_times, kernel_matrices,
    test_kernel_matrix, KernelMatrix,
};
use crate::kernel::{fit_all, FittedKernel, KernelSpec, MemoryLimit};
use crate::linalg::{chol_solve_in_place, cholesky, dot, from_faer, matmul, par_for, to_faer};
use faer::{Accum, Mat, MatRef, Par};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// Parameters of [`lp_mkl`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LpMklParams {
    /// Kernel-weight norm p >= 1 (`f64::INFINITY` for the uniform sum of kernels; JSON
    /// `"inf"`).
    #[serde(with = "p_serde")]
    pub p: f64,
    /// Regularization: `alpha = (K_theta + lambda I)^-1 y`.
    pub lambda: f64,
    /// Unpenalized bias per output by centering (see the module documentation).
    pub bias: bool,
    /// Maximum number of alternating steps.
    pub max_iter: usize,
    /// Stop when `|J_old - J| <= tol * |J|`.
    pub tol: f64,
    /// Starting weights (warm start along a lambda grid); rescaled onto the lp sphere.
    /// `None`: uniform `M^(-1/p)`. The update is multiplicative (`theta_m` enters
    /// `||w_m||`), so a weight that starts at exactly 0 stays 0: floor warm starts at a
    /// small positive value.
    pub init_theta: Option<Vec<f64>>,
}

impl Default for LpMklParams {
    fn default() -> Self {
        LpMklParams {
            p: 2.0,
            lambda: 1.0,
            bias: true,
            max_iter: 500,
            tol: 1e-8,
            init_theta: None,
        }
    }
}

impl LpMklParams {
    /// Rejects parameters no run could use.
    pub fn validate(&self) -> Result<()> {
        if self.p.is_nan() || self.p < 1.0 {
            return Err(Error::invalid(format!(
                "lp-MKL: p must be >= 1 (or inf), got {}",
                self.p
            )));
        }
        if !(self.lambda > 0.0 && self.lambda.is_finite()) {
            return Err(Error::invalid(format!(
                "lp-MKL: lambda must be positive and finite, got {}",
                self.lambda
            )));
        }
        if self.max_iter == 0 {
            return Err(Error::invalid("lp-MKL: max_iter must be at least 1"));
        }
        if self.tol.is_nan() || self.tol < 0.0 {
            return Err(Error::invalid(format!(
                "lp-MKL: tol must be >= 0, got {}",
                self.tol
            )));
        }
        Ok(())
    }
}

/// JSON has no infinity: p is written as a number, or `"inf"`.
mod p_serde {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(p: &f64, s: S) -> Result<S::Ok, S::Error> {
        if p.is_finite() {
            s.serialize_f64(*p)
        } else {
            s.serialize_str("inf")
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum P {
            Num(f64),
            Text(String),
        }
        match P::deserialize(d)? {
            P::Num(v) => Ok(v),
            P::Text(t) => super::parse_p(&t).map_err(serde::de::Error::custom),
        }
    }
}

/// Parses a kernel-weight norm: a number >= 1, a fraction such as `4/3`, or `inf`.
pub fn parse_p(s: &str) -> Result<f64> {
    let t = s.trim().to_ascii_lowercase();
    let p = if matches!(t.as_str(), "inf" | "infinity" | "∞") {
        f64::INFINITY
    } else if let Some((a, b)) = t.split_once('/') {
        let a: f64 = a
            .trim()
            .parse()
            .map_err(|_| Error::invalid(format!("p '{s}': expected a number, a/b or inf")))?;
        let b: f64 = b
            .trim()
            .parse()
            .map_err(|_| Error::invalid(format!("p '{s}': expected a number, a/b or inf")))?;
        a / b
    } else {
        t.parse()
            .map_err(|_| Error::invalid(format!("p '{s}': expected a number, a/b or inf")))?
    };
    if p.is_nan() || p < 1.0 {
        return Err(Error::invalid(format!(
            "p '{s}': the kernel-weight norm must be >= 1"
        )));
    }
    Ok(p)
}

/// A short label for p: `1`, `4/3`, `2`, `inf`, else the number.
pub fn p_label(p: f64) -> String {
    if p.is_infinite() {
        "inf".to_string()
    } else if (p - 4.0 / 3.0).abs() < 1e-12 {
        "4/3".to_string()
    } else if p.fract() == 0.0 {
        format!("{}", p as i64)
    } else {
        format!("{p}")
    }
}

/// The result of [`lp_mkl`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LpMklSolution {
    /// Kernel weights, `||theta||_p = 1` (all ones for p = inf).
    pub theta: Vec<f64>,
    /// Dual coefficients `n x outputs` at the returned `theta`.
    pub alpha: Matrix,
    /// Bias per output (zeros without bias).
    pub bias: Vec<f64>,
    /// `J(theta)` at the start of each alternating step (the last entry is the returned
    /// `theta`'s objective).
    pub objective: Vec<f64>,
    /// Number of alternating steps performed.
    pub iterations: usize,
    /// Whether the relative change of J fell below `tol` (always true for p = inf).
    pub converged: bool,
    pub lambda: f64,
    #[serde(with = "p_serde")]
    pub p: f64,
}

impl LpMklSolution {
    /// Decision values `n_test x outputs`: `sum_m theta_m K_m(test, train) alpha + b`.
    /// `train` are the kernels the solution was fitted on; `test[m]` is the cross Gram
    /// matrix (`Dense`, `n_test x n`) or the test points' factor (`Factor`, `n_test x r`)
    /// of kernel m.
    pub fn decision(&self, train: &[KernelMatrix], test: &[KernelMatrix]) -> Result<Matrix> {
        decision_weighted(train, test, &self.theta, &self.alpha, &self.bias)
    }

    /// Per kernel, the primal weights `theta_m Z_m^T alpha` (`r x outputs`) of a factor
    /// kernel (`None` for a dense kernel): a factor kernel then predicts with
    /// `z_m(x)^T w_m` without the training points.
    pub fn primal_weights(&self, train: &[KernelMatrix]) -> Vec<Option<Matrix>> {
        train
            .iter()
            .zip(&self.theta)
            .map(|(k, &t)| match k {
                KernelMatrix::Factor(z) => {
                    let mut w = factor_t_times(z, &self.alpha);
                    w.data.iter_mut().for_each(|v| *v *= t);
                    Some(w)
                }
                KernelMatrix::Dense(_) => None,
            })
            .collect()
    }
}

/// Checks kernels and targets for a fit; returns `n`.
pub(crate) fn check_inputs(kernels: &[KernelMatrix], y: &Matrix) -> Result<usize> {
    if kernels.is_empty() {
        return Err(Error::invalid("no kernels given"));
    }
    let n = y.rows;
    if n == 0 || y.cols == 0 {
        return Err(Error::invalid(format!(
            "targets are {}x{}: need at least one point and one output",
            y.rows, y.cols
        )));
    }
    if y.data.iter().any(|v| !v.is_finite()) {
        return Err(Error::invalid("targets contain a non-finite value"));
    }
    kernels
        .par_iter()
        .enumerate()
        .try_for_each(|(m, k)| k.check_train(n, m))?;
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

/// Kloft's alternating closed form (FORMULAS.md) for lp-MKL with the squared loss.
/// `y` is `n x outputs` (one column for regression or a +-1 binary problem, one-hot
/// columns for multiclass). See the module documentation for the objective and the bias.
pub fn lp_mkl(kernels: &[KernelMatrix], y: &Matrix, params: &LpMklParams) -> Result<LpMklSolution> {
    params.validate()?;
    check_inputs(kernels, y)?;
    let m = kernels.len();
    let p = params.p;
    let lambda = params.lambda;
    let (ymean, yc) = if params.bias {
        center_targets(y)
    } else {
        (vec![0.0; y.cols], y.clone())
    };
    let prepared = Prepared::new(kernels, params.bias);

    let mut theta = match &params.init_theta {
        Some(t) => {
            if t.len() != m || t.iter().any(|v| !(v.is_finite() && *v >= 0.0)) {
                return Err(Error::invalid(format!(
                    "lp-MKL: init_theta needs {m} finite non-negative weights"
                )));
            }
            let norm = lp_norm(t, p);
            if norm <= 0.0 {
                return Err(Error::invalid("lp-MKL: init_theta is all zero"));
            }
            t.iter().map(|v| v / norm).collect()
        }
        None => vec![uniform_weight(m, p); m],
    };
    if p.is_infinite() {
        theta = vec![1.0; m];
    }

    let mut objective = Vec::new();
    let mut iterations = 0;
    let mut converged = false;
    let mut alpha;
    loop {
        alpha = prepared.solve(&theta, lambda, &yc)?;
        let j = 0.5 * lambda * frob_dot(&yc, &alpha);
        iterations += 1;
        let prev = objective.last().copied();
        objective.push(j);
        if p.is_infinite() {
            converged = true;
            break;
        }
        if let Some(prev) = prev {
            if (prev - j).abs() <= params.tol * j.abs().max(f64::MIN_POSITIVE) {
                converged = true;
                break;
            }
        }
        if iterations >= params.max_iter {
            break;
        }
        // Block norms ||w_m||^2 = theta_m^2 alpha^T K_m alpha (centered K_m and
        // alpha^T 1 = 0 give the same value as the raw kernel when bias is on).
        let sq: Vec<f64> = kernels
            .par_iter()
            .zip(theta.par_iter())
            .map(|(k, &t)| {
                if t == 0.0 {
                    0.0
                } else {
                    (t * t * prepared.quad_form_of(k, &alpha)).max(0.0)
                }
            })
            .collect();
        let next = theta_update(&sq, p);
        match next {
            Some(t) => theta = t,
            None => {
                // y is explained by nothing (all block norms zero): any theta is optimal.
                converged = true;
                break;
            }
        }
    }

    let bias = if params.bias {
        let col_means: Vec<Vec<f64>> = kernels.par_iter().map(|k| k.col_means()).collect();
        bias_from(kernels, &col_means, &theta, &alpha, &ymean)
    } else {
        vec![0.0; y.cols]
    };
    Ok(LpMklSolution {
        theta,
        alpha,
        bias,
        objective,
        iterations,
        converged,
        lambda,
        p,
    })
}

/// `J(theta) = (lambda/2) sum_c y_c^T (K_theta + lambda I)^-1 y_c` (centered kernels and
/// targets when `bias`): the objective [`lp_mkl`] minimizes over the lp sphere, for any
/// given `theta >= 0` (not rescaled).
pub fn objective(
    kernels: &[KernelMatrix],
    theta: &[f64],
    y: &Matrix,
    lambda: f64,
    bias: bool,
) -> Result<f64> {
    check_inputs(kernels, y)?;
    if theta.len() != kernels.len() || theta.iter().any(|t| !(t.is_finite() && *t >= 0.0)) {
        return Err(Error::invalid(format!(
            "theta needs {} finite non-negative weights",
            kernels.len()
        )));
    }
    if !(lambda > 0.0 && lambda.is_finite()) {
        return Err(Error::invalid("lambda must be positive and finite"));
    }
    let yc = if bias { center_targets(y).1 } else { y.clone() };
    let prepared = Prepared::new(kernels, bias);
    let alpha = prepared.solve(theta, lambda, &yc)?;
    Ok(0.5 * lambda * frob_dot(&yc, &alpha))
}

/// `sum_c y_c^T (sum_m w_m K_m + c I)^-1 y_c`-style solve: returns
/// `alpha = (sum_m w_m K_m + c I)^-1 y` with the kernels centered in feature space when
/// `center` (then `y` should be centered too). Dense when any kernel with a positive
/// weight is dense or the total factor rank reaches `n`; otherwise the Woodbury identity
/// over the stacked factors, O(n R^2).
pub fn solve_weighted_sum(
    kernels: &[KernelMatrix],
    weights: &[f64],
    c: f64,
    center: bool,
    y: &Matrix,
) -> Result<Matrix> {
    check_inputs(kernels, y)?;
    if weights.len() != kernels.len() {
        return Err(Error::invalid("one weight per kernel expected"));
    }
    if !(c > 0.0 && c.is_finite()) {
        return Err(Error::invalid("the ridge term must be positive and finite"));
    }
    Prepared::new(kernels, center).solve(weights, c, y)
}

/// Kernels with what the solves need: centered factors.
pub(crate) struct Prepared<'a> {
    kernels: Vec<&'a KernelMatrix>,
    center: bool,
    /// Centered factors (or the factors themselves without centering); `None` for dense.
    factors: Vec<Option<Matrix>>,
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
        Prepared {
            kernels,
            center,
            factors,
        }
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
        // Dense: A = H (sum w K_dense) H + F F^T (factors already centered) + c I.
        let mut acc = Matrix::zeros(n, n);
        for &m in &active {
            if let KernelMatrix::Dense(k) = &self.kernels[m] {
                let w = weights[m];
                for (d, v) in acc.data.iter_mut().zip(&k.data) {
                    *d += w * v;
                }
            }
        }
        if self.center && any_dense {
            center_dense_in_place(&mut acc);
        }
        // Symmetric: the row-major data read column-major is the same matrix.
        let mut a = MatRef::from_column_major_slice(&acc.data, n, n).to_owned();
        drop(acc);
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
    kernels: &[KernelMatrix],
    col_means: &[Vec<f64>],
    weights: &[f64],
    alpha: &Matrix,
    ymean: &[f64],
) -> Vec<f64> {
    let mut b = ymean.to_vec();
    for (m, _) in kernels.iter().enumerate() {
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
pub(crate) fn decision_weighted(
    train: &[KernelMatrix],
    test: &[KernelMatrix],
    weights: &[f64],
    alpha: &Matrix,
    bias: &[f64],
) -> Result<Matrix> {
    if train.len() != weights.len() || test.len() != weights.len() {
        return Err(Error::invalid(format!(
            "decision: {} weights, {} training kernels, {} test kernels",
            weights.len(),
            train.len(),
            test.len()
        )));
    }
    let n_test = test.first().map_or(0, |t| t.rows());
    let mut out = Matrix::zeros(n_test, alpha.cols);
    for i in 0..n_test {
        out.row_mut(i).copy_from_slice(bias);
    }
    for m in 0..weights.len() {
        let w = weights[m];
        if w == 0.0 {
            continue;
        }
        let contrib = cross_times(&train[m], &test[m], alpha, m)?;
        if contrib.rows != n_test {
            return Err(Error::invalid(format!(
                "decision: test kernel {m} has {} rows, expected {n_test}",
                contrib.rows
            )));
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
            if c.cols != k.rows || a.rows != k.rows {
                return Err(Error::invalid(format!(
                    "kernel {m}: cross Gram matrix has {} columns, expected {}",
                    c.cols, k.rows
                )));
            }
            Ok(matmul(c, a))
        }
        (KernelMatrix::Factor(z), KernelMatrix::Factor(zt)) => {
            if zt.cols != z.cols || a.rows != z.rows {
                return Err(Error::invalid(format!(
                    "kernel {m}: test factor has {} columns, expected {}",
                    zt.cols, z.cols
                )));
            }
            Ok(matmul(zt, &factor_t_times(z, a)))
        }
        _ => Err(Error::invalid(format!(
            "kernel {m}: training and test sides must both be dense or both factors"
        ))),
    }
}

/// `theta_m = s_m^(1/(p+1)) / (sum_k s_k^(p/(p+1)))^(1/p)` with `s_m = ||w_m||^2`;
/// `None` when every block norm is zero.
pub(crate) fn theta_update(sq: &[f64], p: f64) -> Option<Vec<f64>> {
    if p.is_infinite() {
        return Some(vec![1.0; sq.len()]);
    }
    let smax = sq.iter().cloned().fold(0.0, f64::max);
    if smax.is_nan() || smax <= 0.0 || !smax.is_finite() {
        return None;
    }
    // Scale-free: divide by the largest block norm first (theta is homogeneous of
    // degree 0 in s).
    let a: Vec<f64> = sq
        .iter()
        .map(|s| (s / smax).powf(1.0 / (p + 1.0)))
        .collect();
    let norm = a.iter().map(|v| v.powf(p)).sum::<f64>().powf(1.0 / p);
    Some(a.iter().map(|v| v / norm).collect())
}

/// `||t||_p`.
pub(crate) fn lp_norm(t: &[f64], p: f64) -> f64 {
    if p.is_infinite() {
        t.iter().cloned().fold(0.0, f64::max)
    } else {
        t.iter().map(|v| v.abs().powf(p)).sum::<f64>().powf(1.0 / p)
    }
}

fn uniform_weight(m: usize, p: f64) -> f64 {
    if p.is_infinite() {
        1.0
    } else {
        (m as f64).powf(-1.0 / p)
    }
}

fn frob_dot(a: &Matrix, b: &Matrix) -> f64 {
    dot(&a.data, &b.data)
}

// ---------------------------------------------------------------------------------------
// The trained lp-MKL model on raw rows.

/// Checks the raw inputs of a model fit; returns the standardizer and the rows to learn on.
pub(crate) fn prepare_rows(
    x: &Matrix,
    feature_names: &[String],
    y: &Matrix,
    standardize: bool,
) -> Result<(Option<Standardizer>, Matrix)> {
    if x.rows != y.rows {
        return Err(Error::invalid(format!(
            "{} rows of features but {} rows of targets",
            x.rows, y.rows
        )));
    }
    if x.rows == 0 {
        return Err(Error::invalid("no training rows"));
    }
    if feature_names.len() != x.cols {
        return Err(Error::invalid(format!(
            "{} feature names for {} feature columns",
            feature_names.len(),
            x.cols
        )));
    }
    if x.data.iter().any(|v| !v.is_finite()) {
        return Err(Error::invalid("features contain a non-finite value"));
    }
    if standardize {
        let s = Standardizer::fit(x);
        let xs = s.apply(x);
        Ok((Some(s), xs))
    } else {
        Ok((None, x.clone()))
    }
}

/// `sum_m w_m K_m(x, X_train) A_m + b` for raw rows, in blocks of rows so the cross Gram
/// matrices stay small. `coef[m]` is `n_train x outputs`.
pub(crate) fn predict_rows(
    kernels: &[FittedKernel],
    coef: &[&Matrix],
    bias: &[f64],
    standardizer: Option<&Standardizer>,
    x_train: &Matrix,
    x: &Matrix,
    limit: &MemoryLimit,
) -> Result<Matrix> {
    if x.cols != x_train.cols {
        return Err(Error::invalid(format!(
            "the model was trained on {} features, the data has {}",
            x_train.cols, x.cols
        )));
    }
    let xs = match standardizer {
        Some(s) => s.apply(x),
        None => x.clone(),
    };
    predict_rows_std(kernels, coef, bias, x_train, &xs, limit)
}

/// [`predict_rows`] on rows already standardized like `x_train`.
pub(crate) fn predict_rows_std(
    kernels: &[FittedKernel],
    coef: &[&Matrix],
    bias: &[f64],
    x_train: &Matrix,
    xs: &Matrix,
    limit: &MemoryLimit,
) -> Result<Matrix> {
    let x = xs;
    let k = bias.len();
    let mut out = Matrix::zeros(x.rows, k);
    for i in 0..x.rows {
        out.row_mut(i).copy_from_slice(bias);
    }
    // Factor kernels predict through primal weights Z_train^T A (r x outputs).
    let primal: Vec<Option<Matrix>> = kernels
        .par_iter()
        .zip(coef.par_iter())
        .map(|(fk, a)| explicit_factor(fk, x_train, x_train.rows).map(|z| factor_t_times(&z, a)))
        .collect();
    let block = (4_000_000 / x_train.rows.max(1)).clamp(1, x.rows.max(1));
    let mut start = 0;
    while start < x.rows {
        let end = (start + block).min(x.rows);
        let idx: Vec<usize> = (start..end).collect();
        let xb = xs.select_rows(&idx);
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

/// Everything [`LpMklModel::fit`] needs besides the data.
#[derive(Debug, Clone)]
pub struct LpMklModelParams {
    pub lp: LpMklParams,
    /// Standardize the features on the training rows before fitting kernels.
    pub standardize: bool,
    /// Seed of the kernels' data-dependent choices (median heuristic samples).
    pub seed: u64,
    pub memory: MemoryLimit,
}

impl Default for LpMklModelParams {
    fn default() -> Self {
        LpMklModelParams {
            lp: LpMklParams::default(),
            standardize: true,
            seed: 0,
            memory: MemoryLimit::default(),
        }
    }
}

/// A trained lp-MKL model on raw rows: `f(x) = sum_m theta_m k_m(x, X) alpha + b`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LpMklModel {
    pub feature_names: Vec<String>,
    pub standardizer: Option<Standardizer>,
    /// Training rows as the kernels see them (standardized when `standardizer` is set).
    pub x_train: Matrix,
    /// The dictionary's fitted kernels (all of them, weights in `theta`).
    pub kernels: Vec<FittedKernel>,
    pub theta: Vec<f64>,
    /// `n_train x outputs`.
    pub alpha: Matrix,
    pub bias: Vec<f64>,
    /// Kernel-weight norm as a label (`1`, `4/3`, `2`, `inf`, ...).
    pub p: String,
    pub lambda: f64,
    /// `J(theta)` per alternating step.
    pub objective: Vec<f64>,
    pub converged: bool,
}

impl LpMklModel {
    /// Fits lp-MKL on raw rows `x` (`n x d`) with real targets `y` (`n x outputs`; one-hot
    /// columns for multiclass).
    pub fn fit(
        x: &Matrix,
        feature_names: &[String],
        y: &Matrix,
        kernels: &[KernelSpec],
        params: &LpMklModelParams,
    ) -> Result<LpMklModel> {
        params.lp.validate()?;
        if kernels.is_empty() {
            return Err(Error::invalid("lp-MKL: no kernels given"));
        }
        let (standardizer, xs) = prepare_rows(x, feature_names, y, params.standardize)?;
        let fitted = fit_all(kernels, &xs, feature_names, params.seed)?;
        let mats = kernel_matrices(&fitted, &xs, &params.memory)?;
        let sol = lp_mkl(&mats, y, &params.lp)?;
        Ok(LpMklModel {
            feature_names: feature_names.to_vec(),
            standardizer,
            x_train: xs,
            kernels: fitted,
            theta: sol.theta,
            alpha: sol.alpha,
            bias: sol.bias,
            p: p_label(params.lp.p),
            lambda: params.lp.lambda,
            objective: sol.objective,
            converged: sol.converged,
        })
    }

    /// Decision values `n x outputs` of raw rows.
    pub fn predict(&self, x: &Matrix) -> Result<Matrix> {
        self.predict_with_limit(x, &MemoryLimit::default())
    }

    /// [`LpMklModel::predict`] with an explicit memory limit for the cross Gram matrices.
    pub fn predict_with_limit(&self, x: &Matrix, limit: &MemoryLimit) -> Result<Matrix> {
        let active: Vec<usize> = (0..self.kernels.len())
            .filter(|&m| self.theta[m] > 0.0)
            .collect();
        let kernels: Vec<FittedKernel> = active.iter().map(|&m| self.kernels[m].clone()).collect();
        let scaled: Vec<Matrix> = active
            .iter()
            .map(|&m| {
                let mut a = self.alpha.clone();
                a.data.iter_mut().for_each(|v| *v *= self.theta[m]);
                a
            })
            .collect();
        let refs: Vec<&Matrix> = scaled.iter().collect();
        predict_rows(
            &kernels,
            &refs,
            &self.bias,
            self.standardizer.as_ref(),
            &self.x_train,
            x,
            limit,
        )
    }

    /// Kernel names with their weights theta (dictionary order), for `inspect`.
    pub fn kernels(&self) -> Vec<(String, f64)> {
        self.kernels
            .iter()
            .zip(&self.theta)
            .map(|(k, t)| (k.name.clone(), *t))
            .collect()
    }

    /// Number of outputs.
    pub fn n_outputs(&self) -> usize {
        self.bias.len()
    }
}

#[cfg(test)]
#[allow(clippy::needless_range_loop)]
mod tests {
    use super::*;
    use crate::kernel::train_kernel_matrix;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn random_matrix(rows: usize, cols: usize, rng: &mut ChaCha8Rng) -> Matrix {
        Matrix::from_vec(
            rows,
            cols,
            (0..rows * cols).map(|_| rng.gen_range(-1.0..1.0)).collect(),
        )
    }

    /// A dense PSD kernel of rank `r` and a factor kernel, both from random features.
    fn kernels(n: usize, rng: &mut ChaCha8Rng) -> Vec<KernelMatrix> {
        vec![
            KernelMatrix::Dense(KernelMatrix::Factor(random_matrix(n, 4, rng)).to_dense()),
            KernelMatrix::rank_one(random_matrix(n, 1, rng).data),
            KernelMatrix::Factor(random_matrix(n, 2, rng)),
        ]
    }

    /// Slow twin: dense inverse by Gauss-Jordan elimination.
    fn solve_naive(a: &Matrix, b: &Matrix) -> Matrix {
        let n = a.rows;
        let mut m = a.clone();
        let mut x = b.clone();
        for c in 0..n {
            let piv = (c..n)
                .max_by(|&i, &j| m.get(i, c).abs().total_cmp(&m.get(j, c).abs()))
                .unwrap();
            for j in 0..n {
                let t = m.get(c, j);
                m.set(c, j, m.get(piv, j));
                m.set(piv, j, t);
            }
            for j in 0..x.cols {
                let t = x.get(c, j);
                x.set(c, j, x.get(piv, j));
                x.set(piv, j, t);
            }
            let d = m.get(c, c);
            for i in 0..n {
                if i != c {
                    let f = m.get(i, c) / d;
                    for j in 0..n {
                        m.set(i, j, m.get(i, j) - f * m.get(c, j));
                    }
                    for j in 0..x.cols {
                        x.set(i, j, x.get(i, j) - f * x.get(c, j));
                    }
                }
            }
        }
        for i in 0..n {
            let d = m.get(i, i);
            for j in 0..x.cols {
                x.set(i, j, x.get(i, j) / d);
            }
        }
        x
    }

    fn naive_objective(
        ks: &[KernelMatrix],
        theta: &[f64],
        y: &Matrix,
        lambda: f64,
        bias: bool,
    ) -> f64 {
        let n = y.rows;
        let mut a = Matrix::zeros(n, n);
        for (k, t) in ks.iter().zip(theta) {
            let d = if bias {
                k.centered().to_dense()
            } else {
                k.to_dense()
            };
            for (o, v) in a.data.iter_mut().zip(&d.data) {
                *o += t * v;
            }
        }
        for i in 0..n {
            a.set(i, i, a.get(i, i) + lambda);
        }
        let yc = if bias { center_targets(y).1 } else { y.clone() };
        let al = solve_naive(&a, &yc);
        0.5 * lambda * dot(&yc.data, &al.data)
    }

    #[test]
    fn weighted_sum_solve_matches_naive_dense_and_woodbury() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let n = 9;
        let ks = kernels(n, &mut rng);
        let y = random_matrix(n, 2, &mut rng);
        for bias in [false, true] {
            let yc = if bias {
                center_targets(&y).1
            } else {
                y.clone()
            };
            // Dense path (a dense kernel is active) and Woodbury path (factors only, rank 3 < 9).
            for w in [vec![0.7, 0.2, 1.3], vec![0.0, 0.5, 2.0]] {
                let got = solve_weighted_sum(&ks, &w, 0.3, bias, &yc).unwrap();
                let mut a = Matrix::zeros(n, n);
                for (k, t) in ks.iter().zip(&w) {
                    let d = if bias {
                        k.centered().to_dense()
                    } else {
                        k.to_dense()
                    };
                    for (o, v) in a.data.iter_mut().zip(&d.data) {
                        *o += t * v;
                    }
                }
                for i in 0..n {
                    a.set(i, i, a.get(i, i) + 0.3);
                }
                let want = solve_naive(&a, &yc);
                for (g, w) in got.data.iter().zip(&want.data) {
                    assert!((g - w).abs() < 1e-9, "{g} vs {w}");
                }
            }
        }
    }

    #[test]
    fn objective_decreases_and_theta_on_sphere() {
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let n = 12;
        let ks = kernels(n, &mut rng);
        let y = random_matrix(n, 1, &mut rng);
        for p in [1.0, 4.0 / 3.0, 2.0, 4.0] {
            let params = LpMklParams {
                p,
                lambda: 0.2,
                ..LpMklParams::default()
            };
            let sol = lp_mkl(&ks, &y, &params).unwrap();
            assert!(sol.objective.len() >= 2);
            for w in sol.objective.windows(2) {
                assert!(w[1] <= w[0] * (1.0 + 1e-10), "J increased: {w:?} (p={p})");
            }
            assert!((lp_norm(&sol.theta, p) - 1.0).abs() < 1e-9);
            let j = objective(&ks, &sol.theta, &y, 0.2, true).unwrap();
            assert!((j - sol.objective.last().unwrap()).abs() < 1e-10 * j.abs());
            let jn = naive_objective(&ks, &sol.theta, &y, 0.2, true);
            assert!((j - jn).abs() < 1e-9 * jn.abs(), "{j} vs {jn}");
        }
    }

    /// Brute force over the lp sphere for M = 2 (angle grid) and M = 3 (two-angle grid):
    /// the fixed point's J is no larger than any grid point's and within grid resolution
    /// of the best.
    #[test]
    fn fixed_point_is_optimal_against_brute_force_on_lp_sphere() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let n = 10;
        for m in [2usize, 3] {
            let ks: Vec<KernelMatrix> = kernels(n, &mut rng).into_iter().take(m).collect();
            let y = random_matrix(n, 2, &mut rng);
            for p in [1.0, 4.0 / 3.0, 2.0, 4.0] {
                let lambda = 0.5;
                let params = LpMklParams {
                    p,
                    lambda,
                    tol: 1e-12,
                    max_iter: 20_000,
                    ..LpMklParams::default()
                };
                let sol = lp_mkl(&ks, &y, &params).unwrap();
                let j = *sol.objective.last().unwrap();
                // Points on the positive part of the lp sphere from a simplex grid.
                let steps = if m == 2 { 2000 } else { 150 };
                let mut best = f64::INFINITY;
                let mut grid = Vec::new();
                if m == 2 {
                    for a in 0..=steps {
                        grid.push(vec![a as f64, (steps - a) as f64]);
                    }
                } else {
                    for a in 0..=steps {
                        for b in 0..=(steps - a) {
                            grid.push(vec![a as f64, b as f64, (steps - a - b) as f64]);
                        }
                    }
                }
                for g in grid {
                    let norm = lp_norm(&g, p);
                    let t: Vec<f64> = g.iter().map(|v| v / norm).collect();
                    best = best.min(naive_objective(&ks, &t, &y, lambda, true));
                }
                assert!(
                    j <= best * (1.0 + 1e-9),
                    "p={p} M={m}: J={j} > grid best {best}"
                );
                assert!(
                    j >= best * (1.0 - 1e-3),
                    "p={p} M={m}: J={j} far below grid {best}?"
                );
            }
        }
    }

    #[test]
    fn p_inf_gives_uniform_theta_and_sum_kernel_solution() {
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        let n = 8;
        let ks = kernels(n, &mut rng);
        let y = random_matrix(n, 1, &mut rng);
        let params = LpMklParams {
            p: f64::INFINITY,
            lambda: 0.1,
            ..LpMklParams::default()
        };
        let sol = lp_mkl(&ks, &y, &params).unwrap();
        assert_eq!(sol.theta, vec![1.0; 3]);
        assert_eq!(sol.iterations, 1);
        let want = naive_objective(&ks, &[1.0; 3], &y, 0.1, true);
        assert!((sol.objective[0] - want).abs() < 1e-9 * want);
        // Large p approaches the uniform weights of p = inf.
        let big = lp_mkl(
            &ks,
            &y,
            &LpMklParams {
                p: 200.0,
                lambda: 0.1,
                ..LpMklParams::default()
            },
        )
        .unwrap();
        for t in &big.theta {
            assert!((t - 1.0).abs() < 0.05, "{:?}", big.theta);
        }
    }

    #[test]
    fn bias_is_exact_unpenalized_intercept_and_decision_matches_training_fit() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let n = 11;
        let ks = kernels(n, &mut rng);
        let mut y = random_matrix(n, 1, &mut rng);
        y.data.iter_mut().for_each(|v| *v += 5.0);
        let lambda = 0.3;
        let sol = lp_mkl(
            &ks,
            &y,
            &LpMklParams {
                p: 2.0,
                lambda,
                ..LpMklParams::default()
            },
        )
        .unwrap();
        let s: f64 = sol.alpha.data.iter().sum();
        assert!(s.abs() < 1e-10);
        // On the training points, the residual of an unpenalized-bias ridge is lambda*alpha.
        let f = sol.decision(&ks, &ks_as_test(&ks)).unwrap();
        for i in 0..n {
            let r = y.get(i, 0) - f.get(i, 0);
            assert!((r - lambda * sol.alpha.get(i, 0)).abs() < 1e-9, "{r}");
        }
        // Shifting the targets shifts only the bias.
        let mut y2 = y.clone();
        y2.data.iter_mut().for_each(|v| *v -= 3.0);
        let sol2 = lp_mkl(
            &ks,
            &y2,
            &LpMklParams {
                p: 2.0,
                lambda,
                ..LpMklParams::default()
            },
        )
        .unwrap();
        assert!((sol.bias[0] - sol2.bias[0] - 3.0).abs() < 1e-9);
        for (a, b) in sol.theta.iter().zip(&sol2.theta) {
            assert!((a - b).abs() < 1e-9);
        }
    }

    fn ks_as_test(ks: &[KernelMatrix]) -> Vec<KernelMatrix> {
        ks.to_vec()
    }

    #[test]
    fn primal_weights_reproduce_decision_of_factor_kernels() {
        let mut rng = ChaCha8Rng::seed_from_u64(6);
        let n = 15;
        let x = random_matrix(n, 4, &mut rng);
        let ks: Vec<KernelMatrix> = (0..4).map(|j| KernelMatrix::rank_one(x.col(j))).collect();
        let y = random_matrix(n, 2, &mut rng);
        let sol = lp_mkl(
            &ks,
            &y,
            &LpMklParams {
                p: 4.0 / 3.0,
                lambda: 0.05,
                ..LpMklParams::default()
            },
        )
        .unwrap();
        let xt = random_matrix(5, 4, &mut rng);
        let test: Vec<KernelMatrix> = (0..4).map(|j| KernelMatrix::rank_one(xt.col(j))).collect();
        let f = sol.decision(&ks, &test).unwrap();
        let w = sol.primal_weights(&ks);
        for i in 0..5 {
            for c in 0..2 {
                let mut v = sol.bias[c];
                for j in 0..4 {
                    v += xt.get(i, j) * w[j].as_ref().unwrap().get(0, c);
                }
                assert!((v - f.get(i, c)).abs() < 1e-10);
            }
        }
        // Dense cross kernels give the same decision as the factors.
        let dense_train: Vec<KernelMatrix> = ks
            .iter()
            .map(|k| KernelMatrix::Dense(k.to_dense()))
            .collect();
        let dense_test: Vec<KernelMatrix> = (0..4)
            .map(|j| {
                let mut c = Matrix::zeros(5, n);
                for i in 0..5 {
                    for t in 0..n {
                        c.set(i, t, xt.get(i, j) * x.get(t, j));
                    }
                }
                KernelMatrix::Dense(c)
            })
            .collect();
        let fd = decision_weighted(&dense_train, &dense_test, &sol.theta, &sol.alpha, &sol.bias)
            .unwrap();
        for (a, b) in f.data.iter().zip(&fd.data) {
            assert!((a - b).abs() < 1e-10);
        }
    }

    #[test]
    fn parse_p_accepts_the_usual_values_and_rejects_bad_ones() {
        assert_eq!(parse_p("1").unwrap(), 1.0);
        assert!((parse_p("4/3").unwrap() - 4.0 / 3.0).abs() < 1e-15);
        assert!(parse_p("inf").unwrap().is_infinite());
        assert_eq!(p_label(4.0 / 3.0), "4/3");
        assert_eq!(p_label(f64::INFINITY), "inf");
        assert_eq!(p_label(2.0), "2");
        assert!(parse_p("0.5").is_err());
        assert!(parse_p("x").is_err());
        assert!(parse_p("1/0").unwrap().is_infinite());
    }

    #[test]
    fn bad_inputs_are_errors() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let ks = kernels(5, &mut rng);
        let y = random_matrix(6, 1, &mut rng);
        assert!(lp_mkl(&ks, &y, &LpMklParams::default()).is_err());
        let y = random_matrix(5, 1, &mut rng);
        let bad = LpMklParams {
            p: 0.5,
            ..LpMklParams::default()
        };
        assert!(lp_mkl(&ks, &y, &bad).is_err());
        assert!(lp_mkl(&[], &y, &LpMklParams::default()).is_err());
    }

    fn names(d: usize) -> Vec<String> {
        (0..d).map(|j| format!("x{j}")).collect()
    }

    /// The explicit factors of linear and constant kernels reproduce the kernel module's
    /// Gram matrices (training and cross), for every normalization.
    #[test]
    fn explicit_factors_match_kernel_module_grams() {
        let mut rng = ChaCha8Rng::seed_from_u64(8);
        let x = random_matrix(12, 3, &mut rng);
        let xt = random_matrix(4, 3, &mut rng);
        let limit = MemoryLimit::default();
        for spec in [
            "perfeature:linear:norm=variance",
            "perfeature:linear:norm=diag",
            "perfeature:linear:norm=trace",
            "linear",
            "const:norm=trace",
            "rbf",
        ] {
            let specs = vec![spec.parse::<KernelSpec>().unwrap()];
            let fitted = fit_all(&specs, &x, &names(3), 0).unwrap();
            for fk in &fitted {
                let train = train_kernel_matrix(fk, &x, &limit).unwrap();
                let is_factor = matches!(train, KernelMatrix::Factor(_));
                assert_eq!(is_factor, !spec.starts_with("rbf"), "{spec}");
                let want = fk.gram_sym(&x, &limit).unwrap().to_dense();
                for (a, b) in train.to_dense().data.iter().zip(&want.data) {
                    assert!((a - b).abs() < 1e-12, "{spec}: {a} vs {b}");
                }
                let test = test_kernel_matrix(fk, &xt, &x, &limit).unwrap();
                let a = random_matrix(12, 2, &mut rng);
                let got = cross_times(&train, &test, &a, 0).unwrap();
                let cross = fk.gram(&xt, &x, &limit).unwrap().to_dense();
                let want = matmul(&cross, &a);
                for (g, w) in got.data.iter().zip(&want.data) {
                    assert!((g - w).abs() < 1e-12, "{spec}");
                }
            }
        }
    }

    #[test]
    fn model_predicts_like_the_solver_and_survives_json() {
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        let x = random_matrix(30, 3, &mut rng);
        let mut y = Matrix::zeros(30, 2);
        for i in 0..30 {
            y.set(i, 0, x.get(i, 0) * 2.0 + 1.0);
            y.set(i, 1, (x.get(i, 1) * 3.0).sin());
        }
        let specs: Vec<KernelSpec> = ["perfeature:linear:norm=variance", "rbf:norm=variance"]
            .iter()
            .map(|s| s.parse().unwrap())
            .collect();
        for p in [1.0, f64::INFINITY] {
            let params = LpMklModelParams {
                lp: LpMklParams {
                    p,
                    lambda: 0.1,
                    ..LpMklParams::default()
                },
                ..LpMklModelParams::default()
            };
            let model = LpMklModel::fit(&x, &names(3), &y, &specs, &params).unwrap();
            assert_eq!(model.kernels().len(), 4);
            // Training rows: residual of the unpenalized-bias ridge is lambda * alpha.
            let f = model.predict(&x).unwrap();
            for i in 0..30 {
                for c in 0..2 {
                    let r = y.get(i, c) - f.get(i, c);
                    assert!((r - 0.1 * model.alpha.get(i, c)).abs() < 1e-9);
                }
            }
            let json = serde_json::to_string(&model).unwrap();
            let back: LpMklModel = serde_json::from_str(&json).unwrap();
            let xt = random_matrix(5, 3, &mut rng);
            assert_eq!(back.predict(&xt).unwrap(), model.predict(&xt).unwrap());
            let sol_json = serde_json::to_string(&LpMklParams {
                p,
                ..LpMklParams::default()
            })
            .unwrap();
            let p_back: LpMklParams = serde_json::from_str(&sol_json).unwrap();
            assert_eq!(p_back.p, p);
        }
        let bad = LpMklModel::fit(&x, &names(2), &y, &specs, &LpMklModelParams::default());
        assert!(bad.is_err());
    }
}
