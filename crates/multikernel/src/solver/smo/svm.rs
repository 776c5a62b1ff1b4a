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
    svc_from(kernel, y, c, None, None, params, observer)
}

/// The dual's variables of rows with a positive weight and their boxes `C w_i` (every row
/// and `C` without weights).
fn boxes(n: usize, c: f64, row_weights: Option<&[f64]>) -> Result<(Vec<usize>, Vec<f64>)> {
    match row_weights {
        None => Ok(((0..n).collect(), vec![c; n])),
        Some(w) => {
            crate::data::weights::check_row_weights(w, n)?;
            let rows: Vec<usize> = (0..n).filter(|&i| w[i] > 0.0).collect();
            let boxes = rows.iter().map(|&i| c * w[i]).collect();
            Ok((rows, boxes))
        }
    }
}

/// Binary C-SVC started from the dual point `start` (`alpha`, one per dual variable,
/// feasible for these labels and C: e.g. [`SmoSolution::alpha`] of a solve with other
/// kernel weights, the wrappers' warm start); cold from zeros when `None`. With
/// `row_weights`, row `i`'s box is `C w_i` (the primal `1/2 ||f||^2 + C sum_i w_i
/// hinge_i`, libsvm's weighted C-SVC); rows of weight 0 are not variables of the dual
/// (their coefficient is 0).
pub(crate) fn svc_from(
    kernel: MatrixRef<'_>,
    y: &[f64],
    c: f64,
    row_weights: Option<&[f64]>,
    start: Option<&[f64]>,
    params: &SmoParams,
    observer: &dyn Observer,
) -> Result<SvmFit> {
    check_c(c)?;
    let n = y.len();
    check_rows(kernel, n, "labels")?;
    let (rows, cs) = boxes(n, c, row_weights)?;
    let problem = SmoProblem {
        kernel,
        y: rows.iter().map(|&i| y[i]).collect(),
        p: vec![-1.0; rows.len()],
        c: cs,
        index: rows,
        start: start.map(<[f64]>::to_vec),
    };
    let sol = smo(&problem, params, observer)?;
    let mut coef = vec![0.0; n];
    for (a, &i) in sol.alpha.iter().zip(&problem.index) {
        coef[i] = a * y[i];
    }
    let bias = -sol.rho;
    let (ww, f) = norm_and_values(kernel, &coef, bias);
    let hinge: f64 = f
        .iter()
        .zip(y)
        .enumerate()
        .map(|(i, (f, y))| (1.0 - y * f).max(0.0) * row_weights.map_or(1.0, |w| w[i]))
        .sum();
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
    svr_from(kernel, z, c, epsilon, None, None, params, observer)
}

/// epsilon-SVR started from the dual point `start` (`a` then `a*` of the rows of positive
/// weight, as [`SmoSolution::alpha`]); cold from zeros when `None`. With `row_weights`, row
/// `i`'s boxes are `C w_i` (rows of weight 0 leave the dual).
#[allow(clippy::too_many_arguments)]
pub(crate) fn svr_from(
    kernel: MatrixRef<'_>,
    z: &[f64],
    c: f64,
    epsilon: f64,
    row_weights: Option<&[f64]>,
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
    let (rows, cs) = boxes(n, c, row_weights)?;
    let r = rows.len();
    let mut p: Vec<f64> = rows.iter().map(|&i| epsilon - z[i]).collect();
    p.extend(rows.iter().map(|&i| epsilon + z[i]));
    let problem = SmoProblem {
        kernel,
        index: rows.iter().chain(&rows).copied().collect(),
        y: [vec![1.0; r], vec![-1.0; r]].concat(),
        p,
        c: [cs.clone(), cs].concat(),
        start: start.map(<[f64]>::to_vec),
    };
    let sol = smo(&problem, params, observer)?;
    let mut coef = vec![0.0; n];
    for (t, &i) in rows.iter().enumerate() {
        coef[i] = sol.alpha[t] - sol.alpha[r + t];
    }
    let bias = -sol.rho;
    let (ww, f) = norm_and_values(kernel, &coef, bias);
    let loss: f64 = f
        .iter()
        .zip(z)
        .enumerate()
        .map(|(i, (f, z))| ((f - z).abs() - epsilon).max(0.0) * row_weights.map_or(1.0, |w| w[i]))
        .sum();
    let gap = 0.5 * ww + c * loss + sol.objective;
    Ok(SvmFit {
        coef,
        bias,
        gap,
        solution: sol,
    })
}
