//! C-SVC (binary and one-vs-rest) and epsilon-SVR on a precomputed training kernel, solved
//! by [`smo`], with the duality gap of each solve.

use super::engine::{smo, SmoParams, SmoSolution};
use super::problem::SmoProblem;
use crate::data::MatrixRef;
use crate::error::{Error, Result};
use crate::linalg::dot;
use crate::run::Observer;

/// A trained SVM: decision values `sum_i coef_i K(x, x_i) + bias`.
#[derive(Debug, Clone, PartialEq)]
pub struct SvmFit {
    /// Per training row: `y_i a_i` (C-SVC) or `a_i - a*_i` (epsilon-SVR).
    pub coef: Vec<f64>,
    pub bias: f64,
    /// Primal objective minus dual objective at the returned point (>= 0 up to rounding).
    pub gap: f64,
    pub solution: SmoSolution,
}

impl SvmFit {
    /// Decision values of points given by their kernel rows against the training rows
    /// (`n_test x n_train`).
    pub fn decision(&self, k_test: MatrixRef<'_>) -> Result<Vec<f64>> {
        if k_test.cols() != self.coef.len() {
            return Err(Error::shape(
                "columns of the test kernel matrix (the training rows)",
                self.coef.len(),
                k_test.cols(),
            ));
        }
        Ok((0..k_test.rows())
            .map(|r| dot(k_test.row(r), &self.coef) + self.bias)
            .collect())
    }
}

fn check_c(c: f64) -> Result<()> {
    if c.is_finite() && c > 0.0 {
        Ok(())
    } else {
        Err(Error::param("C", c, "a positive number"))
    }
}

fn check_rows(kernel: MatrixRef<'_>, n: usize, what: &str) -> Result<()> {
    if n == 0 {
        return Err(Error::data("the training set has no rows"));
    }
    if kernel.rows() != n || kernel.cols() != n {
        return Err(Error::data(format!(
            "the training kernel matrix must be n x n with n = {n} {what}; found {} x {}",
            kernel.rows(),
            kernel.cols()
        )));
    }
    Ok(())
}

/// `(w^T w, f)`: the squared norm of the weight vector and the training decision values.
fn norm_and_values(kernel: MatrixRef<'_>, coef: &[f64], bias: f64) -> (f64, Vec<f64>) {
    let f0: Vec<f64> = (0..coef.len()).map(|i| dot(kernel.row(i), coef)).collect();
    (dot(&f0, coef), f0.iter().map(|v| v + bias).collect())
}

/// Binary C-SVC: `y` are `+1` / `-1`.
pub fn svc(
    kernel: MatrixRef<'_>,
    y: &[f64],
    c: f64,
    params: &SmoParams,
    observer: &dyn Observer,
) -> Result<SvmFit> {
    svc_from(kernel, y, c, None, params, observer)
}

/// Binary C-SVC started from the dual point `start` (`alpha`, one per row, feasible for
/// these labels and C: e.g. [`SmoSolution::alpha`] of a solve with other kernel weights, the
/// wrappers' warm start); cold from zeros when `None`.
pub(crate) fn svc_from(
    kernel: MatrixRef<'_>,
    y: &[f64],
    c: f64,
    start: Option<&[f64]>,
    params: &SmoParams,
    observer: &dyn Observer,
) -> Result<SvmFit> {
    check_c(c)?;
    let n = y.len();
    check_rows(kernel, n, "labels")?;
    let problem = SmoProblem {
        kernel,
        index: (0..n).collect(),
        y: y.to_vec(),
        p: vec![-1.0; n],
        c: vec![c; n],
        start: start.map(<[f64]>::to_vec),
    };
    let sol = smo(&problem, params, observer)?;
    let coef: Vec<f64> = sol.alpha.iter().zip(y).map(|(a, y)| a * y).collect();
    let bias = -sol.rho;
    let (ww, f) = norm_and_values(kernel, &coef, bias);
    let hinge: f64 = f.iter().zip(y).map(|(f, y)| (1.0 - y * f).max(0.0)).sum();
    let gap = 0.5 * ww + c * hinge + sol.objective;
    Ok(SvmFit {
        coef,
        bias,
        gap,
        solution: sol,
    })
}

/// epsilon-SVR on real targets `z`.
pub fn svr(
    kernel: MatrixRef<'_>,
    z: &[f64],
    c: f64,
    epsilon: f64,
    params: &SmoParams,
    observer: &dyn Observer,
) -> Result<SvmFit> {
    svr_from(kernel, z, c, epsilon, None, params, observer)
}

/// epsilon-SVR started from the dual point `start` (`2n` values: `a` then `a*`, as
/// [`SmoSolution::alpha`]); cold from zeros when `None`.
pub(crate) fn svr_from(
    kernel: MatrixRef<'_>,
    z: &[f64],
    c: f64,
    epsilon: f64,
    start: Option<&[f64]>,
    params: &SmoParams,
    observer: &dyn Observer,
) -> Result<SvmFit> {
    check_c(c)?;
    if !(epsilon.is_finite() && epsilon >= 0.0) {
        return Err(Error::param("epsilon", epsilon, "a number >= 0"));
    }
    let n = z.len();
    check_rows(kernel, n, "targets")?;
    if z.iter().any(|v| !v.is_finite()) {
        return Err(Error::data("the targets contain a non-finite value"));
    }
    let mut p: Vec<f64> = z.iter().map(|z| epsilon - z).collect();
    p.extend(z.iter().map(|z| epsilon + z));
    let problem = SmoProblem {
        kernel,
        index: (0..n).chain(0..n).collect(),
        y: [vec![1.0; n], vec![-1.0; n]].concat(),
        p,
        c: vec![c; 2 * n],
        start: start.map(<[f64]>::to_vec),
    };
    let sol = smo(&problem, params, observer)?;
    let coef: Vec<f64> = (0..n).map(|i| sol.alpha[i] - sol.alpha[n + i]).collect();
    let bias = -sol.rho;
    let (ww, f) = norm_and_values(kernel, &coef, bias);
    let loss: f64 = f
        .iter()
        .zip(z)
        .map(|(f, z)| ((f - z).abs() - epsilon).max(0.0))
        .sum();
    let gap = 0.5 * ww + c * loss + sol.objective;
    Ok(SvmFit {
        coef,
        bias,
        gap,
        solution: sol,
    })
}
