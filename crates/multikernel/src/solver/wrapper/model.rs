//! The trained wrapper MKL model on raw rows (SimpleMKL or Gauss-Seidel around the exact
//! SMO solver): kernels fitted on the (standardized) training rows, their weights `d` on
//! the simplex, one SVM per output (`f(x) = sum_m d_m k_m(x, X) beta + b`), and prediction.

use super::grams::fit_grams;
use super::{wrapper_headline, wrapper_names};
use super::{WrapperMethod, WrapperParams, WrapperStep};
use crate::data::standardize::Standardizer;
use crate::data::{Matrix, MatrixRef};
use crate::error::{Error, Result};
use crate::kernel::{
    fit_all, kernel_matrices, FittedKernel, KernelMatrix, KernelSpec, MemoryLimit,
};
use crate::run::{Control, Observer, RunInfo, RunStatus};
use crate::solver::check;
use crate::solver::ridge::{predict_shared_coef, prepare_rows};
use crate::solver::smo::SmoParams;
use crate::task::TaskKind;
use crate::trained::summary::{num, value_rows, yes_no};
use crate::trained::{BatchInput, BatchLearner, DecisionFunction, Summary};
use serde::{Deserialize, Serialize};

const ORIGIN: &str = "wrapper MKL";

/// Settings of a wrapper fit on rows.
#[derive(Debug, Clone, PartialEq)]
pub struct WrapperModelParams {
    pub method: WrapperMethod,
    /// The SVM's C (weight of the sum of the losses).
    pub c: f64,
    /// The epsilon-insensitive zone of the regression loss.
    pub epsilon: f64,
    pub smo: SmoParams,
    pub wrapper: WrapperParams,
    pub standardize: bool,
    pub seed: u64,
    pub memory: MemoryLimit,
    /// Row weights (`None`: all 1): row `i`'s box is `C w_i` (libsvm's weighted C-SVC and
    /// epsilon-SVR); a row of weight 0 leaves the dual.
    pub row_weights: Option<Vec<f64>>,
}

impl Default for WrapperModelParams {
    fn default() -> Self {
        WrapperModelParams {
            method: WrapperMethod::SimpleMkl,
            c: 1.0,
            epsilon: 0.1,
            smo: SmoParams::default(),
            wrapper: WrapperParams::default(),
            standardize: true,
            seed: 0,
            memory: MemoryLimit::default(),
            row_weights: None,
        }
    }
}

/// A trained wrapper model: `f(x) = sum_m d_m k_m(x, X) beta + b` per output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WrapperModel {
    pub method: WrapperMethod,
    pub feature_names: Vec<String>,
    pub standardizer: Option<Standardizer>,
    /// Training rows as the kernels see them (standardized when `standardizer` is set).
    pub x_train: Matrix,
    pub kernels: Vec<FittedKernel>,
    /// Kernel weights on the simplex.
    pub weights: Vec<f64>,
    /// `n_train x outputs`: `y_i a_i` (C-SVC) or `a_i - a*_i` (epsilon-SVR) per machine.
    pub coef: Matrix,
    pub bias: Vec<f64>,
    pub c: f64,
    /// The regression loss's epsilon (`None` for classification).
    pub epsilon: Option<f64>,
    /// `J(d)` per outer iteration.
    pub objective: Vec<f64>,
    /// The relative MKL duality gap at the end.
    pub mkl_gap: f64,
    /// The SVM's duality gap at the end (summed over machines).
    pub svm_gap: f64,
    pub converged: bool,
}

impl WrapperModel {
    /// Fits on raw rows `x` with the encoded targets `y` of `task`
    /// ([`crate::task::targets::encode_targets`]). A cancelled run gives the model of the
    /// last accepted weights.
    #[allow(clippy::too_many_arguments)]
    pub fn fit(
        x: MatrixRef<'_>,
        feature_names: &[String],
        y: &Matrix,
        task: TaskKind,
        kernels: &[KernelSpec],
        params: &WrapperModelParams,
        observer: &dyn Observer,
        on_step: &mut dyn FnMut(&WrapperStep) -> Control,
    ) -> Result<(WrapperModel, RunInfo)> {
        if kernels.is_empty() {
            return Err(Error::param("kernels", "none", "at least one kernel"));
        }
        if !(params.c.is_finite() && params.c > 0.0) {
            return Err(Error::param("C", params.c, "a positive number"));
        }
        let (standardizer, xs) = prepare_rows(x, feature_names, y.rows, params.standardize)?;
        let fitted = fit_all(kernels, &xs, feature_names, params.seed)?;
        let n = xs.rows;
        params.memory.check(
            (fitted.len() + 1)
                .saturating_mul(n)
                .saturating_mul(n)
                .saturating_mul(8),
            &format!(
                "{} dense training kernel matrices of {n} x {n} (and their weighted sum)",
                fitted.len()
            ),
        )?;
        let dense: Vec<Matrix> = kernel_matrices(&fitted, &xs, &params.memory)?
            .into_iter()
            .map(|k| match k {
                KernelMatrix::Dense(m) => m,
                f @ KernelMatrix::Factor(_) => f.to_dense(),
            })
            .collect();
        let (fit, run) = fit_grams(&dense, y, task, params, observer, on_step)?;
        let model = WrapperModel {
            method: params.method,
            feature_names: feature_names.to_vec(),
            standardizer,
            x_train: xs,
            kernels: fitted,
            weights: fit.weights,
            coef: fit.coef,
            bias: fit.bias,
            c: params.c,
            epsilon: (task == TaskKind::Regression).then_some(params.epsilon),
            objective: fit.objective,
            mkl_gap: fit.mkl_gap,
            svm_gap: fit.svm_gap,
            converged: run.status == RunStatus::Converged,
        };
        Ok((model, run))
    }

    /// Decision values `n x outputs` of raw rows; `limit` bounds the cross Gram matrices.
    pub fn predict(&self, x: MatrixRef<'_>, limit: &MemoryLimit) -> Result<Matrix> {
        predict_shared_coef(
            &self.kernels,
            &self.weights,
            &self.coef,
            &self.bias,
            self.standardizer.as_ref(),
            &self.x_train,
            x,
            limit,
        )
    }

    /// Checks that every stored array agrees with the others and holds finite numbers (a
    /// model read from a file).
    pub(crate) fn validate(&self) -> Result<()> {
        check::SharedCoefModel {
            n_features: self.feature_names.len(),
            x_train: &self.x_train,
            standardizer: self.standardizer.as_ref(),
            kernels: &self.kernels,
            weights: &self.weights,
            coef: &self.coef,
            bias: &self.bias,
        }
        .validate(ORIGIN)?;
        check::positive(ORIGIN, "C", self.c)?;
        Ok(())
    }

    /// Kernel names with their weights (dictionary order), for `inspect`.
    pub(crate) fn kernel_weights(&self) -> Vec<(String, f64)> {
        self.kernels
            .iter()
            .zip(&self.weights)
            .map(|(k, t)| (k.name.clone(), *t))
            .collect()
    }

    /// Number of outputs.
    pub(crate) fn n_outputs(&self) -> usize {
        self.bias.len()
    }
}

impl DecisionFunction for WrapperModel {
    fn decision(&self, x: MatrixRef<'_>, limit: &MemoryLimit) -> Result<Matrix> {
        self.predict(x, limit)
    }
    fn n_outputs(&self) -> usize {
        WrapperModel::n_outputs(self)
    }
    fn validate(&self) -> Result<()> {
        WrapperModel::validate(self)
    }
}

impl BatchLearner for WrapperModel {
    fn input(&self) -> BatchInput<'_> {
        BatchInput::Rows(self)
    }

    fn describe(&self, s: &mut Summary, _feature_names: &[String]) {
        let (name, what) = wrapper_names(self.method);
        s.learner = what.into();
        s.settings = vec![
            ("C".into(), num(self.c)),
            ("outputs".into(), self.n_outputs().to_string()),
            ("standardize".into(), yes_no(self.standardizer.is_some())),
        ];
        if let Some(e) = self.epsilon {
            s.settings.push(("epsilon".into(), num(e)));
        }
        s.headline = wrapper_headline(
            name,
            self.c,
            &self.weights,
            &self.objective,
            (self.mkl_gap, self.svm_gap),
            self.converged,
        );
        s.columns = vec!["weight".into()];
        s.kernels = value_rows(self.kernel_weights());
    }
}
