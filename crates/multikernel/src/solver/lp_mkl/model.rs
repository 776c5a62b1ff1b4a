//! The trained lp-MKL model on raw rows: kernels fitted on the (standardized) training rows,
//! the weights and coefficients of [`lp_mkl`] on their kernel matrices, and prediction.

use super::engine::{lp_mkl_weighted, not_started, start_theta};
use super::params::{p_label, parse_p, LpMklModelParams};
use crate::data::standardize::Standardizer;
use crate::data::weights::check_row_weights;
use crate::data::{Matrix, MatrixRef};
use crate::error::{Error, Result};
use crate::kernel::{fit_all, kernel_matrices, FittedKernel, KernelSpec, MemoryLimit};
use crate::run::{Observer, RunInfo};
use crate::solver::check;
use crate::solver::ridge::{check_targets, predict_shared_coef, prepare_rows};
use crate::trained::summary::{num, value_rows, yes_no};
use crate::trained::{BatchInput, BatchLearner, DecisionFunction, KernelRow, Summary};
use serde::{Deserialize, Serialize};

const ORIGIN: &str = "lp-MKL";

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
    /// columns for multiclass). The run follows the engine's contract ([`lp_mkl`]): a
    /// cancelled run gives the model of the last weights.
    pub fn fit(
        x: MatrixRef<'_>,
        feature_names: &[String],
        y: &Matrix,
        kernels: &[KernelSpec],
        params: &LpMklModelParams,
        observer: &dyn Observer,
    ) -> Result<(LpMklModel, RunInfo)> {
        LpMklModel::fit_weighted(x, feature_names, y, None, kernels, params, observer)
    }

    /// [`LpMklModel::fit`] with row weights (`None`: unweighted; [`lp_mkl_weighted`]). The
    /// standardization and the kernels' data-dependent choices use the rows unweighted.
    pub(crate) fn fit_weighted(
        x: MatrixRef<'_>,
        feature_names: &[String],
        y: &Matrix,
        row_weights: Option<&[f64]>,
        kernels: &[KernelSpec],
        params: &LpMklModelParams,
        observer: &dyn Observer,
    ) -> Result<(LpMklModel, RunInfo)> {
        params.lp.validate()?;
        if kernels.is_empty() {
            return Err(Error::param("kernels", "none", "at least one kernel"));
        }
        let (standardizer, xs) = prepare_rows(x, feature_names, y.rows, params.standardize)?;
        let fitted = fit_all(kernels, &xs, feature_names, params.seed)?;
        // The kernel matrices may take longer than the alternations: a run stopped before
        // them returns at once, with the model of no solve.
        let (sol, info) = if observer.should_stop() {
            check_targets(y)?;
            if let Some(w) = row_weights {
                check_row_weights(w, y.rows)?;
            }
            let theta = start_theta(fitted.len(), &params.lp)?;
            not_started(theta, y, row_weights, &params.lp)
        } else {
            let mats = kernel_matrices(&fitted, &xs, &params.memory)?;
            lp_mkl_weighted(&mats, y, row_weights, &params.lp, observer)?
        };
        let model = LpMklModel {
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
        };
        Ok((model, info))
    }

    /// Decision values `n x outputs` of raw rows; `limit` bounds the cross Gram matrices.
    pub fn predict(&self, x: MatrixRef<'_>, limit: &MemoryLimit) -> Result<Matrix> {
        predict_shared_coef(
            &self.kernels,
            &self.theta,
            &self.alpha,
            &self.bias,
            self.standardizer.as_ref(),
            &self.x_train,
            x,
            limit,
        )
    }

    /// Checks that every stored array agrees with the others (features, training rows,
    /// kernels and their weights, outputs) and holds finite numbers, so that
    /// [`LpMklModel::predict`] on rows of the right width cannot fail on the model's account
    /// (run it on a model read from a file).
    pub(crate) fn validate(&self) -> Result<()> {
        check::SharedCoefModel {
            n_features: self.feature_names.len(),
            x_train: &self.x_train,
            standardizer: self.standardizer.as_ref(),
            kernels: &self.kernels,
            weights: &self.theta,
            coef: &self.alpha,
            bias: &self.bias,
        }
        .validate(ORIGIN)?;
        check::positive(ORIGIN, "lambda", self.lambda)?;
        parse_p(&self.p).map_err(|e| Error::model(ORIGIN, e.to_string()))?;
        Ok(())
    }

    /// Kernel names with their weights theta (dictionary order), for `inspect`.
    pub(crate) fn kernels(&self) -> Vec<(String, f64)> {
        self.kernels
            .iter()
            .zip(&self.theta)
            .map(|(k, t)| (k.name.clone(), *t))
            .collect()
    }

    /// Number of outputs.
    pub(crate) fn n_outputs(&self) -> usize {
        self.bias.len()
    }
}

impl DecisionFunction for LpMklModel {
    fn decision(&self, x: MatrixRef<'_>, limit: &MemoryLimit) -> Result<Matrix> {
        self.predict(x, limit)
    }
    fn n_outputs(&self) -> usize {
        LpMklModel::n_outputs(self)
    }
    fn validate(&self) -> Result<()> {
        LpMklModel::validate(self)
    }
}

impl BatchLearner for LpMklModel {
    fn input(&self) -> BatchInput<'_> {
        BatchInput::Rows(self)
    }

    fn describe(&self, s: &mut Summary, _feature_names: &[String]) {
        s.learner = "lp-norm MKL, squared loss (Kloft et al. 2011)".into();
        s.settings = vec![
            ("p".into(), self.p.clone()),
            ("lambda".into(), num(self.lambda)),
            ("outputs".into(), self.n_outputs().to_string()),
            ("standardize".into(), yes_no(self.standardizer.is_some())),
        ];
        s.headline = format!(
            "lp-MKL: p {}, lambda {}, {} kernels ({} with weight 0), objective {:.6} after {} \
             steps{}",
            self.p,
            num(self.lambda),
            self.kernels.len(),
            self.theta.iter().filter(|t| **t == 0.0).count(),
            self.objective.last().copied().unwrap_or(f64::NAN),
            self.objective.len(),
            if self.converged {
                ""
            } else {
                " (not converged)"
            }
        );
        s.columns = vec!["theta".into()];
        let mut rows: Vec<KernelRow> = value_rows(self.kernels());
        rows.sort_by(|a, b| b.values[0].total_cmp(&a.values[0]));
        s.kernels = rows;
    }
}
