//! lp-MKL on kernel matrices the caller computed (the way MKLpy's users work): training
//! Gram matrices `K_m` (`n x n`) in, a model that predicts from test-by-train matrices
//! `K_m(test, train)` (`n_test x n`) out. The same engine ([`super::lp_mkl`], called by
//! `estimator::precomputed`) and objective as [`super::LpMklModel`]; nothing about the
//! inputs is stored, only the kernel weights
//! `theta`, the dual coefficients `alpha` and the bias (Kloft et al. 2011; docs/formulas.md):
//!
//! ```text
//! f(x) = sum_m theta_m K_m(x, X_train) alpha + b
//! ```

use super::engine::LpMklSolution;
use super::params::p_label;
use crate::data::{Matrix, MatrixRef};
use crate::error::{Error, Result};
use crate::solver::check;
use crate::solver::ridge::decision_from_kernels;
use crate::trained::summary::{num, value_rows};
use crate::trained::{BatchInput, BatchLearner, KernelDecision, Summary};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

const ORIGIN: &str = "<lp-MKL on precomputed kernels>";

/// Relative asymmetry `|K_ij - K_ji| / max |K|` above which a training matrix is refused.
pub(crate) const SYMMETRY_TOL: f64 = 1e-8;

/// A trained lp-MKL model over precomputed kernels.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PrecomputedLpModel {
    /// Training points (the columns of every test matrix).
    pub n_train: usize,
    /// One name per kernel (`K0`, `K1`, ... unless the caller named them).
    pub kernel_names: Vec<String>,
    pub solution: LpMklSolution,
}

/// Checks the training matrices: as many as names, each `n x n` with `n` the targets'
/// rows, finite and symmetric.
pub(crate) fn check_train_kernels(kernels: &[MatrixRef<'_>], n: usize) -> Result<()> {
    if kernels.is_empty() {
        return Err(Error::param(
            "kernels",
            "none",
            "at least one kernel matrix",
        ));
    }
    kernels.par_iter().enumerate().try_for_each(|(m, k)| {
        if k.rows() != n || k.cols() != n {
            return Err(Error::data(format!(
                "kernel {m}: a training kernel matrix must be n x n with n = {n} training \
                 rows (one per target); found {} x {}",
                k.rows(),
                k.cols()
            )));
        }
        if let Some(i) = k.data().iter().position(|v| !v.is_finite()) {
            return Err(Error::data(format!(
                "kernel {m}: entry ({}, {}) is {}, not a finite number",
                i / n,
                i % n,
                k.data()[i]
            )));
        }
        let scale = k.data().iter().fold(0.0f64, |a, v| a.max(v.abs()));
        for i in 0..n {
            for j in 0..i {
                let (a, b) = (k.row(i)[j], k.row(j)[i]);
                if (a - b).abs() > SYMMETRY_TOL * scale.max(f64::MIN_POSITIVE) {
                    return Err(Error::data(format!(
                        "kernel {m} is not symmetric: K[{i}, {j}] = {a} but K[{j}, {i}] = {b} \
                         (a training kernel matrix is K(X_train, X_train))"
                    )));
                }
            }
        }
        Ok(())
    })
}

impl PrecomputedLpModel {
    /// Decision values `n_test x outputs` from the test-by-train matrices (`test[m]` is
    /// `K_m(X_test, X_train)`, `n_test x n_train`), read in place.
    pub(crate) fn decision(&self, test: &[MatrixRef<'_>]) -> Result<Matrix> {
        let s = &self.solution;
        decision_from_kernels(test, self.n_train, &s.theta, &s.alpha, &s.bias)
    }

    /// Outputs: 1, or the number of classes of a multiclass model.
    pub(crate) fn n_outputs(&self) -> usize {
        self.solution.alpha.cols
    }

    /// Kernel names with their weights `theta`.
    pub(crate) fn kernels(&self) -> Vec<(String, f64)> {
        self.kernel_names
            .iter()
            .cloned()
            .zip(self.solution.theta.iter().copied())
            .collect()
    }

    /// Checks that the stored arrays agree (a model read from a file).
    pub(crate) fn validate(&self) -> Result<()> {
        let s = &self.solution;
        check::len(
            || format!("{ORIGIN}: kernel weights (one per kernel)"),
            self.kernel_names.len(),
            s.theta.len(),
        )?;
        if let Some(m) = s.theta.iter().position(|t| !(t.is_finite() && *t >= 0.0)) {
            return Err(Error::model(
                ORIGIN,
                format!(
                    "the weight of kernel {m} is {}, not a finite number >= 0",
                    s.theta[m]
                ),
            ));
        }
        if s.alpha.cols == 0 {
            return Err(Error::model(ORIGIN, "the model has no output"));
        }
        check::matrix(
            ORIGIN,
            "the coefficients",
            &s.alpha,
            self.n_train,
            s.alpha.cols,
        )?;
        check::len(
            || format!("{ORIGIN}: bias (one per output)"),
            s.alpha.cols,
            s.bias.len(),
        )?;
        if s.alpha.data.iter().chain(&s.bias).any(|v| !v.is_finite()) {
            return Err(Error::model(ORIGIN, "a coefficient is not finite"));
        }
        Ok(())
    }
}

impl KernelDecision for PrecomputedLpModel {
    fn decision_kernels(&self, test: &[MatrixRef<'_>]) -> Result<Matrix> {
        self.decision(test)
    }
    fn n_outputs(&self) -> usize {
        PrecomputedLpModel::n_outputs(self)
    }
    fn validate(&self) -> Result<()> {
        PrecomputedLpModel::validate(self)
    }
}

impl BatchLearner for PrecomputedLpModel {
    fn input(&self) -> BatchInput<'_> {
        BatchInput::Kernels(self)
    }

    fn describe(&self, s: &mut Summary, _feature_names: &[String]) {
        let sol = &self.solution;
        s.learner = "lp-norm MKL on precomputed kernels, squared loss (Kloft et al. 2011)".into();
        s.settings = vec![
            ("p".into(), p_label(sol.p)),
            ("lambda".into(), num(sol.lambda)),
            ("outputs".into(), self.n_outputs().to_string()),
            ("training points".into(), self.n_train.to_string()),
        ];
        s.headline = format!(
            "lp-MKL on precomputed kernels: p {}, lambda {}, {} kernels ({} with weight 0), \
             objective {:.6} after {} steps{}",
            p_label(sol.p),
            num(sol.lambda),
            self.kernel_names.len(),
            sol.theta.iter().filter(|t| **t == 0.0).count(),
            sol.objective.last().copied().unwrap_or(f64::NAN),
            sol.iterations,
            if sol.converged {
                ""
            } else {
                " (not converged)"
            }
        );
        s.columns = vec!["theta".into()];
        s.kernels = value_rows(self.kernels());
    }
}
