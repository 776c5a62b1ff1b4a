//! The trained MKL-GOMP model on raw rows: kernels fitted on the (standardized) training
//! rows, the greedy path on their kernel matrices, prediction and the choice of the path
//! length on validation data.

use super::engine::{gomp, not_started, GompPath, GompStop};
use super::params::{GompModelParams, GompParams};
use crate::data::standardize::Standardizer;
use crate::data::{Matrix, MatrixRef};
use crate::error::{Error, Result};
use crate::kernel::{fit_all, kernel_matrices, FittedKernel, KernelSpec, MemoryLimit};
use crate::run::{Observer, RunInfo};
use crate::solver::check;
use crate::solver::ridge::{
    check_columns, check_targets, predict_rows, predict_rows_std, prepare_rows, standardized,
};
use crate::trained::summary::{num, value_rows, yes_no};
use crate::trained::{BatchInput, BatchLearner, DecisionFunction, Summary};
use serde::{Deserialize, Serialize};

const ORIGIN: &str = "MKL-GOMP";

/// How a path length is scored on validation data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ValidationMetric {
    /// Mean squared error over rows and outputs.
    SquaredError,
    /// Fraction of wrong classes: sign for one output (targets +-1), largest output
    /// against the one-hot target for several.
    ClassificationError,
}

impl ValidationMetric {
    /// The loss of decision values `pred` against targets `truth` (both `n x outputs`).
    pub fn loss(&self, pred: &Matrix, truth: &Matrix) -> f64 {
        let n = pred.rows.min(truth.rows);
        if n == 0 {
            return 0.0;
        }
        match self {
            ValidationMetric::SquaredError => {
                let s: f64 = pred
                    .data
                    .iter()
                    .zip(&truth.data)
                    .map(|(a, b)| (a - b) * (a - b))
                    .sum();
                s / pred.data.len().max(1) as f64
            }
            ValidationMetric::ClassificationError => {
                let wrong = (0..n)
                    .filter(|&i| {
                        if pred.cols == 1 {
                            (pred.get(i, 0) > 0.0) != (truth.get(i, 0) > 0.0)
                        } else {
                            crate::metrics::argmax(pred.row(i))
                                != crate::metrics::argmax(truth.row(i))
                        }
                    })
                    .count();
                wrong as f64 / n as f64
            }
        }
    }
}

/// One model of the path (after `k` kernels were chosen).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GompPathModel {
    /// `n_train x outputs`.
    pub alpha: Matrix,
    pub bias: Vec<f64>,
    /// Training residual `(1/l)||r||^2` after the refit.
    pub residual: f64,
}

/// A trained MKL-GOMP model on raw rows: the chosen kernels in order with the improvement
/// each brought, and one refitted model per number of kernels (the path), so the sparsity
/// level can be changed ([`GompModel::truncate`], [`GompModel::select_on_validation`])
/// without retraining.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GompModel {
    pub feature_names: Vec<String>,
    pub standardizer: Option<Standardizer>,
    /// Training rows as the kernels see them (standardized when `standardizer` is set).
    pub x_train: Matrix,
    /// Number of kernels in the dictionary searched.
    pub dictionary_size: usize,
    /// The chosen kernels, in the order they were chosen.
    pub kernels: Vec<FittedKernel>,
    /// Index of each chosen kernel in the (expanded) dictionary.
    pub dictionary_index: Vec<usize>,
    /// The improvement `I_j` each chosen kernel brought.
    pub improvements: Vec<f64>,
    /// `path[k-1]` uses the first `k` chosen kernels.
    pub path: Vec<GompPathModel>,
    /// The empty model (mean targets with bias).
    pub intercept: Vec<f64>,
    pub lambda: f64,
    pub eps: f64,
    pub stop: GompStop,
}

impl GompModel {
    /// Runs MKL-GOMP on raw rows `x` (`n x d`) with real targets `y` (`n x outputs`;
    /// one-hot columns for multiclass, the multivariate mode). The run follows the engine's
    /// contract ([`gomp`]): a cancelled run gives the model of the kernels chosen so far.
    pub fn fit(
        x: MatrixRef<'_>,
        feature_names: &[String],
        y: &Matrix,
        kernels: &[KernelSpec],
        params: &GompModelParams,
        observer: &dyn Observer,
    ) -> Result<(GompModel, RunInfo)> {
        params.gomp.validate()?;
        if kernels.is_empty() {
            return Err(Error::param("kernels", "none", "at least one kernel"));
        }
        let (standardizer, xs) = prepare_rows(x, feature_names, y.rows, params.standardize)?;
        let fitted = fit_all(kernels, &xs, feature_names, params.seed)?;
        let gp = GompParams {
            memory_bytes: params.memory.bytes,
            ..params.gomp.clone()
        };
        // The kernel matrices may take longer than the path: a run stopped before them
        // returns at once, with the model of no kernel.
        let (path, info) = if observer.should_stop() {
            check_targets(y)?;
            not_started(y, &gp)
        } else {
            let mats = kernel_matrices(&fitted, &xs, &params.memory)?;
            gomp(&mats, y, &gp, observer)?
        };
        let model = GompModel::from_path(
            feature_names.to_vec(),
            standardizer,
            xs,
            &fitted,
            path,
            gp.eps,
        );
        Ok((model, info))
    }

    /// Assembles a model from a path computed on `fitted` kernels over rows `x_train`.
    pub(crate) fn from_path(
        feature_names: Vec<String>,
        standardizer: Option<Standardizer>,
        x_train: Matrix,
        fitted: &[FittedKernel],
        path: GompPath,
        eps: f64,
    ) -> GompModel {
        GompModel {
            feature_names,
            standardizer,
            x_train,
            dictionary_size: fitted.len(),
            kernels: path
                .steps
                .iter()
                .map(|s| fitted[s.kernel].clone())
                .collect(),
            dictionary_index: path.selected(),
            improvements: path.steps.iter().map(|s| s.improvement).collect(),
            path: path
                .steps
                .into_iter()
                .map(|s| GompPathModel {
                    alpha: s.alpha,
                    bias: s.bias,
                    residual: s.residual,
                })
                .collect(),
            intercept: path.intercept,
            lambda: path.lambda,
            eps,
            stop: path.stop,
        }
    }

    /// Number of kernels the model uses (the path length).
    pub(crate) fn n_kernels(&self) -> usize {
        self.path.len()
    }

    pub(crate) fn n_outputs(&self) -> usize {
        self.intercept.len()
    }

    /// Number of feature columns a row must have.
    pub(crate) fn n_features(&self) -> usize {
        self.x_train.cols
    }

    /// Checks that every stored array agrees with the others (features, training rows,
    /// kernels, path steps, outputs) and holds finite numbers, so that [`GompModel::predict`]
    /// on rows of the right width cannot fail on the model's account (run it on a model read
    /// from a file).
    pub(crate) fn validate(&self) -> Result<()> {
        let d = self.feature_names.len();
        let n = self.x_train.rows;
        check::matrix(ORIGIN, "the training rows", &self.x_train, n, d)?;
        if let Some(s) = &self.standardizer {
            s.validate()?;
            check::len(
                || format!("{ORIGIN}: features of the standardizer"),
                d,
                s.n_features(),
            )?;
        }
        let steps = self.path.len();
        check::len(
            || format!("{ORIGIN}: chosen kernels (one per path step)"),
            steps,
            self.kernels.len(),
        )?;
        check::len(
            || format!("{ORIGIN}: dictionary indices (one per path step)"),
            steps,
            self.dictionary_index.len(),
        )?;
        check::len(
            || format!("{ORIGIN}: improvements (one per path step)"),
            steps,
            self.improvements.len(),
        )?;
        for (t, k) in self.kernels.iter().enumerate() {
            k.validate()?;
            check::len(
                || format!("{ORIGIN}: features of kernel {t} ({})", k.name),
                d,
                k.n_features(),
            )?;
        }
        for (t, &j) in self.dictionary_index.iter().enumerate() {
            check::index(
                ORIGIN,
                || format!("the dictionary index of kernel {t}"),
                j,
                self.dictionary_size,
            )?;
        }
        check::finite(ORIGIN, || "the improvements".into(), &self.improvements)?;
        let k = self.n_outputs();
        if k == 0 {
            return Err(Error::model(ORIGIN, "the model has no output"));
        }
        check::finite(ORIGIN, || "the intercept".into(), &self.intercept)?;
        for (t, p) in self.path.iter().enumerate() {
            check::matrix(
                ORIGIN,
                &format!("the coefficients of path step {}", t + 1),
                &p.alpha,
                n,
                k,
            )?;
            check::len(
                || format!("{ORIGIN}: biases of path step {}", t + 1),
                k,
                p.bias.len(),
            )?;
            check::finite(
                ORIGIN,
                || format!("the bias of path step {}", t + 1),
                &p.bias,
            )?;
        }
        check::positive(ORIGIN, "lambda", self.lambda)?;
        if self.eps.is_nan() || self.eps < 0.0 {
            return Err(Error::model(
                ORIGIN,
                format!("eps is {}, not >= 0", self.eps),
            ));
        }
        Ok(())
    }

    /// Decision values `n x outputs` of raw rows with all kernels of the (possibly
    /// truncated) path; `limit` bounds the cross Gram matrices.
    pub fn predict(&self, x: MatrixRef<'_>, limit: &MemoryLimit) -> Result<Matrix> {
        check_columns(self.n_features(), x)?;
        let s = self.path.len();
        if s == 0 {
            return Ok(self.constant(x.rows(), &self.intercept));
        }
        let last = &self.path[s - 1];
        let coef: Vec<&Matrix> = vec![&last.alpha; s];
        predict_rows(
            &self.kernels,
            &coef,
            &last.bias,
            self.standardizer.as_ref(),
            &self.x_train,
            x,
            limit,
        )
    }

    /// `rows` rows of the values `b`.
    fn constant(&self, rows: usize, b: &[f64]) -> Matrix {
        let mut o = Matrix::zeros(rows, b.len());
        for i in 0..rows {
            o.row_mut(i).copy_from_slice(b);
        }
        o
    }

    /// Decision values of every model of the path on raw rows: index `k` uses the first
    /// `k` kernels (`0`: the intercept alone).
    pub(crate) fn predict_path(
        &self,
        x: MatrixRef<'_>,
        limit: &MemoryLimit,
    ) -> Result<Vec<Matrix>> {
        let owned = standardized(self.standardizer.as_ref(), self.n_features(), x)?;
        let xs = owned.as_ref().map_or(x, Matrix::view);
        let k = self.n_outputs();
        let s_all = self.path.len();
        let mut outs = Vec::with_capacity(s_all + 1);
        outs.push(self.constant(x.rows(), &self.intercept));
        for p in &self.path {
            outs.push(self.constant(x.rows(), &p.bias));
        }
        let n = self.x_train.rows;
        for t in 0..s_all {
            // Kernel t contributes K_t(x, X) alpha_s to every model s >= t + 1.
            let width = k * (s_all - t);
            let mut a = Matrix::zeros(n, width);
            for (q, p) in self.path[t..].iter().enumerate() {
                for i in 0..n {
                    for c in 0..k {
                        a.set(i, q * k + c, p.alpha.get(i, c));
                    }
                }
            }
            let zero = vec![0.0; width];
            let c = predict_rows_std(
                std::slice::from_ref(&self.kernels[t]),
                &[&a],
                &zero,
                &self.x_train,
                xs,
                limit,
            )?;
            for (q, out) in outs[t + 1..].iter_mut().enumerate() {
                for i in 0..x.rows() {
                    let row = c.row(i);
                    for (cc, o) in out.row_mut(i).iter_mut().enumerate() {
                        *o += row[q * k + cc];
                    }
                }
            }
        }
        Ok(outs)
    }

    /// Keeps the first `s` kernels of the path (no retraining: their refit is stored).
    pub(crate) fn truncate(&mut self, s: usize) {
        let s = s.min(self.path.len());
        self.path.truncate(s);
        self.kernels.truncate(s);
        self.dictionary_index.truncate(s);
        self.improvements.truncate(s);
    }

    /// Chooses the path length with the smallest validation loss (the fewest kernels among
    /// ties), truncates the model to it and returns it with the loss of every length
    /// `0..=path.len()`.
    pub(crate) fn select_on_validation(
        &mut self,
        x_val: MatrixRef<'_>,
        y_val: &Matrix,
        metric: ValidationMetric,
        limit: &MemoryLimit,
    ) -> Result<(usize, Vec<f64>)> {
        check::len(
            || "rows of the validation targets".into(),
            x_val.rows(),
            y_val.rows,
        )?;
        check::len(
            || "columns of the validation targets (the model's outputs)".into(),
            self.n_outputs(),
            y_val.cols,
        )?;
        let preds = self.predict_path(x_val, limit)?;
        let losses: Vec<f64> = preds.iter().map(|p| metric.loss(p, y_val)).collect();
        let best = best_index(&losses);
        self.truncate(best);
        Ok((best, losses))
    }

    /// The chosen kernels in order with the improvement each brought (for `inspect`).
    pub(crate) fn kernels(&self) -> Vec<(String, f64)> {
        self.kernels
            .iter()
            .zip(&self.improvements)
            .map(|(k, i)| (k.name.clone(), *i))
            .collect()
    }
}

/// Index of the smallest value (the first among ties).
pub(crate) fn best_index(losses: &[f64]) -> usize {
    let mut best = 0;
    for (i, &l) in losses.iter().enumerate() {
        if l < losses[best] {
            best = i;
        }
    }
    best
}

impl DecisionFunction for GompModel {
    fn decision(&self, x: MatrixRef<'_>, limit: &MemoryLimit) -> Result<Matrix> {
        self.predict(x, limit)
    }
    fn n_outputs(&self) -> usize {
        GompModel::n_outputs(self)
    }
    fn validate(&self) -> Result<()> {
        GompModel::validate(self)
    }
}

impl BatchLearner for GompModel {
    fn input(&self) -> BatchInput<'_> {
        BatchInput::Rows(self)
    }

    fn describe(&self, s: &mut Summary, _feature_names: &[String]) {
        s.learner = "MKL-GOMP (Sindhwani & Lozano 2012)".into();
        s.settings = vec![
            ("lambda".into(), num(self.lambda)),
            ("eps".into(), format!("{:e}", self.eps)),
            ("outputs".into(), self.n_outputs().to_string()),
            ("dictionary".into(), self.dictionary_size.to_string()),
            ("standardize".into(), yes_no(self.standardizer.is_some())),
        ];
        s.headline = format!(
            "MKL-GOMP: lambda {}, {} of {} kernels chosen ({}), training residual {:.6}",
            num(self.lambda),
            self.n_kernels(),
            self.dictionary_size,
            gomp_stop_text(self.stop, None, self.eps),
            self.path.last().map_or(f64::NAN, |p| p.residual)
        );
        s.columns = vec!["improvement".into()];
        s.ranked = true;
        s.kernels = value_rows(self.kernels());
    }
}

/// Why a GOMP path stopped, in words.
fn gomp_stop_text(stop: GompStop, max_kernels: Option<usize>, eps: f64) -> String {
    match stop {
        GompStop::Eps => format!("stopped: best improvement <= eps = {eps:e}"),
        GompStop::MaxKernels => match max_kernels {
            Some(k) => format!("stopped: max_kernels = {k} reached"),
            None => "stopped: max_kernels reached".to_string(),
        },
        GompStop::Exhausted => "stopped: every kernel of the dictionary chosen".to_string(),
        GompStop::Cancelled => "stopped: cancelled".to_string(),
    }
}
