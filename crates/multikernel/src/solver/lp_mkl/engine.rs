//! The lp-MKL engine on kernel matrices: Kloft's alternating closed form (module docs of
//! [`super`]) and the objective `J(theta)` it minimizes.

use super::params::LpMklParams;
use super::weighted::{unscale, weighted_col_means, weighted_kernels, weighted_targets};
use crate::data::Matrix;
use crate::error::{Error, Result};
use crate::kernel::matrix::{factor_t_times, KernelMatrix};
use crate::linalg::dot;
use crate::run::{Control, Observer, RunInfo, RunRecorder, RunStatus, StepUnit};
use crate::solver::ridge::{bias_from, center_targets, check_inputs, decision_weighted, Prepared};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

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
    #[serde(with = "super::params::p_serde")]
    pub p: f64,
}

impl LpMklSolution {
    /// Decision values `n_test x outputs`: `sum_m theta_m K_m(test, train) alpha + b`.
    /// `train` are the kernels the solution was fitted on; `test[m]` is the cross Gram
    /// matrix (`Dense`, `n_test x n`) or the test points' factor (`Factor`, `n_test x r`)
    /// of kernel m.
    pub fn decision<K: std::borrow::Borrow<KernelMatrix>>(
        &self,
        train: &[K],
        test: &[K],
    ) -> Result<Matrix> {
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

/// Kloft's alternating closed form (docs/formulas.md) for lp-MKL with the squared loss.
/// `y` is `n x outputs` (one column for regression or a +-1 binary problem, one-hot
/// columns for multiclass). See the module documentation for the objective and the bias.
///
/// A step is one alternation; `observer` sees its objective `J` and is polled before each
/// solve. A stopped run returns the last weights with their coefficients (before the first
/// solve: the starting weights with zero coefficients, i.e. the mean of the targets).
pub fn lp_mkl(
    kernels: &[KernelMatrix],
    y: &Matrix,
    params: &LpMklParams,
    observer: &dyn Observer,
) -> Result<(LpMklSolution, RunInfo)> {
    lp_mkl_weighted(kernels, y, None, params, observer)
}

/// [`lp_mkl`] with row weights (`None`: unweighted; module docs of [`super::weighted`]):
/// the weighted problem solved as the unweighted one in the kernels `H_d D K D H_d` and the
/// targets `D (y - ybar_w)`, its coefficients mapped back by `alpha = D beta`, the bias by
/// the weighted means.
pub(crate) fn lp_mkl_weighted(
    kernels: &[KernelMatrix],
    y: &Matrix,
    row_weights: Option<&[f64]>,
    params: &LpMklParams,
    observer: &dyn Observer,
) -> Result<(LpMklSolution, RunInfo)> {
    params.validate()?;
    check_inputs(kernels, y)?;
    match row_weights {
        None => lp_mkl_on(&Prepared::new(kernels, params.bias), y, params, observer),
        Some(w) => {
            crate::data::weights::check_row_weights(w, y.rows)?;
            let transformed = weighted_kernels(kernels, w, params.bias);
            let raw: Vec<&KernelMatrix> = kernels.iter().collect();
            alternate(
                &raw,
                &Prepared::new(&transformed, false),
                y,
                Some(w),
                params,
                observer,
            )
        }
    }
}

/// [`lp_mkl`] on kernels already checked against `y` (`check_inputs`) and prepared for
/// `params.bias`: a C path calls it once per C on the same `prepared`, whose kernel
/// checks, column means and centered factors are then done once for the whole path.
pub(crate) fn lp_mkl_on(
    prepared: &Prepared<'_>,
    y: &Matrix,
    params: &LpMklParams,
    observer: &dyn Observer,
) -> Result<(LpMklSolution, RunInfo)> {
    params.validate()?;
    if prepared.centers() != params.bias {
        return Err(Error::param(
            "bias",
            params.bias,
            "the centering the kernels were prepared for",
        ));
    }
    alternate(prepared.kernels(), prepared, y, None, params, observer)
}

/// Kloft's alternation on the raw kernels `raw` (their block norms and the bias) solved
/// through `prepared` (the raw kernels themselves, or with `row_weights` their weighted
/// transforms, [`super::weighted`]).
fn alternate(
    raw: &[&KernelMatrix],
    prepared: &Prepared<'_>,
    y: &Matrix,
    row_weights: Option<&[f64]>,
    params: &LpMklParams,
    observer: &dyn Observer,
) -> Result<(LpMklSolution, RunInfo)> {
    let kernels = raw;
    let m = kernels.len();
    let p = params.p;
    let lambda = params.lambda;
    let mut theta = start_theta(m, params)?;
    if observer.should_stop() {
        return Ok(not_started(theta, y, row_weights, params));
    }
    let (ymean, yc) = match row_weights {
        None if params.bias => center_targets(y),
        None => (vec![0.0; y.cols], y.clone()),
        Some(w) => weighted_targets(y, w, params.bias),
    };

    let mut rec = RunRecorder::new(StepUnit::Iteration, Some(params.max_iter as u64));
    let mut objective = Vec::new();
    let mut iterations = 0;
    let status;
    // Coefficients at `theta` (none before the first solve).
    let mut alpha: Option<Matrix> = None;
    // The next weights, taken up after the poll so that a stopped run keeps `theta` and
    // `alpha` together.
    let mut next_theta: Option<Vec<f64>> = None;
    loop {
        if observer.should_stop() {
            status = RunStatus::Cancelled;
            break;
        }
        if let Some(t) = next_theta.take() {
            theta = t;
        }
        let mut a = prepared.solve(&theta, lambda, &yc)?;
        let j = 0.5 * lambda * frob_dot(&yc, &a);
        if let Some(w) = row_weights {
            unscale(&mut a, w);
        }
        iterations += 1;
        let prev = objective.last().copied();
        objective.push(j);
        // One kernel: its weight is 1 on any lp sphere, so the next solve would repeat
        // this one (the uniform sum, p = inf, keeps its weights too).
        let end = if p.is_infinite()
            || m == 1
            || prev
                .is_some_and(|prev| (prev - j).abs() <= params.tol * j.abs().max(f64::MIN_POSITIVE))
        {
            Some(RunStatus::Converged)
        } else if iterations >= params.max_iter {
            Some(RunStatus::IterationLimit)
        } else {
            None
        };
        let control = rec.step(Some(j), observer);
        let alpha = alpha.insert(a);
        if let Some(end) = end {
            status = end;
            break;
        }
        if control == Control::Stop {
            status = RunStatus::Cancelled;
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
                    (t * t * prepared.quad_form_of(k, alpha)).max(0.0)
                }
            })
            .collect();
        match theta_update(&sq, p) {
            Some(t) => next_theta = Some(t),
            None => {
                // y is explained by nothing (all block norms zero): any theta is optimal.
                status = RunStatus::Converged;
                break;
            }
        }
    }
    let alpha = alpha.unwrap_or_else(|| Matrix::zeros(y.rows, y.cols));

    let bias = if params.bias {
        let col_means: Vec<Vec<f64>> = match row_weights {
            None => (0..m)
                .into_par_iter()
                .map(|k| prepared.col_means(k).to_vec())
                .collect(),
            Some(w) => kernels
                .par_iter()
                .map(|k| weighted_col_means(k, w))
                .collect(),
        };
        bias_from(&col_means, &theta, &alpha, &ymean)
    } else {
        vec![0.0; y.cols]
    };
    let solution = LpMklSolution {
        theta,
        alpha,
        bias,
        objective,
        iterations,
        converged: status == RunStatus::Converged,
        lambda,
        p,
    };
    Ok((solution, rec.finish(status)))
}

/// The starting weights of [`lp_mkl`] over `m` kernels: `init_theta` rescaled onto the lp
/// sphere, else the uniform `M^(-1/p)` (all ones for p = inf).
pub(super) fn start_theta(m: usize, params: &LpMklParams) -> Result<Vec<f64>> {
    let p = params.p;
    let theta = match &params.init_theta {
        Some(t) => {
            if t.len() != m {
                return Err(Error::shape(
                    "init_theta (one weight per kernel)",
                    m,
                    t.len(),
                ));
            }
            if t.iter().any(|v| !(v.is_finite() && *v >= 0.0)) {
                return Err(Error::param(
                    "init_theta",
                    format!("{t:?}"),
                    "finite non-negative weights",
                ));
            }
            let norm = lp_norm(t, p);
            if norm <= 0.0 {
                return Err(Error::param(
                    "init_theta",
                    format!("{t:?}"),
                    "at least one positive weight",
                ));
            }
            t.iter().map(|v| v / norm).collect()
        }
        None => vec![uniform_weight(m, p); m],
    };
    // One kernel's weight on the lp sphere is 1 (exactly, not t / ||t||_p rounded).
    Ok(if p.is_infinite() || m == 1 {
        vec![1.0; m]
    } else {
        theta
    })
}

/// What a run stopped before its first solve returns: the starting weights `theta` with
/// zero coefficients, so the model predicts the mean of each target (with `row_weights`,
/// the weighted mean; zero without bias).
pub(super) fn not_started(
    theta: Vec<f64>,
    y: &Matrix,
    row_weights: Option<&[f64]>,
    params: &LpMklParams,
) -> (LpMklSolution, RunInfo) {
    let bias = match row_weights {
        _ if !params.bias => vec![0.0; y.cols],
        None => center_targets(y).0,
        Some(w) => weighted_targets(y, w, true).0,
    };
    let solution = LpMklSolution {
        theta,
        alpha: Matrix::zeros(y.rows, y.cols),
        bias,
        objective: Vec::new(),
        iterations: 0,
        converged: false,
        lambda: params.lambda,
        p: params.p,
    };
    let rec = RunRecorder::new(StepUnit::Iteration, Some(params.max_iter as u64));
    (solution, rec.finish(RunStatus::Cancelled))
}

/// `J(theta) = (lambda/2) sum_c y_c^T (K_theta + lambda I)^-1 y_c` (centered kernels and
/// targets when `bias`): the objective [`lp_mkl`] minimizes over the lp sphere, for any
/// given `theta >= 0` (not rescaled).
#[cfg(test)]
pub(crate) fn objective(
    kernels: &[KernelMatrix],
    theta: &[f64],
    y: &Matrix,
    lambda: f64,
    bias: bool,
) -> Result<f64> {
    check_inputs(kernels, y)?;
    if theta.len() != kernels.len() {
        return Err(Error::shape(
            "theta (one weight per kernel)",
            kernels.len(),
            theta.len(),
        ));
    }
    if theta.iter().any(|t| !(t.is_finite() && *t >= 0.0)) {
        return Err(Error::param(
            "theta",
            format!("{theta:?}"),
            "finite non-negative weights",
        ));
    }
    if !(lambda > 0.0 && lambda.is_finite()) {
        return Err(Error::param("lambda", lambda, "a positive finite number"));
    }
    let yc = if bias { center_targets(y).1 } else { y.clone() };
    let prepared = Prepared::new(kernels, bias);
    let alpha = prepared.solve(theta, lambda, &yc)?;
    Ok(0.5 * lambda * frob_dot(&yc, &alpha))
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
