//! Wrapper MKL on kernel matrices the caller computed (MKLpy's way, the Python package's
//! `kernels="precomputed"`): SimpleMKL (Rakotomamonjy et al. 2008) or Gauss-Seidel (Kloft
//! et al. 2011, p = 1) around the exact SMO solver on training Gram matrices `K_m`
//! (`n x n`), through the same fit as the model on rows ([`super::grams::fit_grams`]). The
//! model keeps the weights `d`, one SVM's coefficients and bias per machine, and predicts
//! from test-by-train matrices `K_m(X_test, X_train)` (`n_test x n`):
//!
//! ```text
//! f(x) = sum_m d_m K_m(x, X_train) coef + b
//! ```

use super::grams::fit_grams;
use super::{wrapper_headline, wrapper_names};
use super::{WrapperMethod, WrapperModelParams};
use crate::data::{Matrix, MatrixRef};
use crate::error::Result;
use crate::run::{Control, Observer, RunInfo, RunStatus};
use crate::solver::check;
use crate::solver::ridge::decision_from_kernels;
use crate::task::TaskKind;
use crate::trained::summary::{num, value_rows};
use crate::trained::{BatchInput, BatchLearner, KernelDecision, Summary};
use serde::{Deserialize, Serialize};

const ORIGIN: &str = "<wrapper MKL on precomputed kernels>";

/// A trained SimpleMKL or Gauss-Seidel model over precomputed kernels.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PrecomputedWrapperModel {
    pub method: WrapperMethod,
    /// Training points (the columns of every test matrix).
    pub n_train: usize,
    /// One name per kernel (`K0`, `K1`, ... unless the caller named them).
    pub kernel_names: Vec<String>,
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

impl PrecomputedWrapperModel {
    /// Fits on the training Gram matrices `grams` (`n x n` each, finite, symmetric; the
    /// caller checks positive semidefiniteness) named `kernel_names`, with the encoded
    /// targets `y` of `task` ([`crate::task::targets::encode_targets`]); `params` as in
    /// [`fit_grams`]. A cancelled run gives the model of the last accepted weights.
    pub fn fit(
        grams: &[Matrix],
        kernel_names: &[String],
        y: &Matrix,
        task: TaskKind,
        params: &WrapperModelParams,
        observer: &dyn Observer,
    ) -> Result<(PrecomputedWrapperModel, RunInfo)> {
        check::len(
            || "kernel names (one per kernel)".into(),
            grams.len(),
            kernel_names.len(),
        )?;
        let (fit, run) = fit_grams(grams, y, task, params, observer, &mut |_| Control::Continue)?;
        let model = PrecomputedWrapperModel {
            method: params.method,
            n_train: y.rows,
            kernel_names: kernel_names.to_vec(),
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

    /// Decision values `n_test x outputs` from the test-by-train matrices (`test[m]` is
    /// `K_m(X_test, X_train)`, `n_test x n_train`), read in place.
    pub(crate) fn decision(&self, test: &[MatrixRef<'_>]) -> Result<Matrix> {
        decision_from_kernels(test, self.n_train, &self.weights, &self.coef, &self.bias)
    }

    /// Outputs: 1, or the number of classes of a multiclass model.
    pub(crate) fn n_outputs(&self) -> usize {
        self.bias.len()
    }

    /// Kernel names with their weights.
    pub(crate) fn kernels(&self) -> Vec<(String, f64)> {
        self.kernel_names
            .iter()
            .cloned()
            .zip(self.weights.iter().copied())
            .collect()
    }

    /// Checks that the stored arrays agree and hold finite numbers (a model read from a
    /// file).
    pub(crate) fn validate(&self) -> Result<()> {
        check::shared_coef(
            ORIGIN,
            self.kernel_names.len(),
            self.n_train,
            &self.weights,
            &self.coef,
            &self.bias,
        )?;
        check::positive(ORIGIN, "C", self.c)?;
        if let Some(e) = self.epsilon {
            if !(e.is_finite() && e >= 0.0) {
                return Err(crate::error::Error::model(
                    ORIGIN,
                    format!("epsilon is {e}, not a finite number >= 0"),
                ));
            }
        }
        Ok(())
    }
}

impl KernelDecision for PrecomputedWrapperModel {
    fn decision_kernels(&self, test: &[MatrixRef<'_>]) -> Result<Matrix> {
        self.decision(test)
    }
    fn n_outputs(&self) -> usize {
        PrecomputedWrapperModel::n_outputs(self)
    }
    fn validate(&self) -> Result<()> {
        PrecomputedWrapperModel::validate(self)
    }
}

impl BatchLearner for PrecomputedWrapperModel {
    fn input(&self) -> BatchInput<'_> {
        BatchInput::Kernels(self)
    }

    fn describe(&self, s: &mut Summary, _feature_names: &[String]) {
        let (name, what) = wrapper_names(self.method);
        s.learner = format!("{what}, on precomputed kernels");
        s.settings = vec![
            ("C".into(), num(self.c)),
            ("outputs".into(), self.n_outputs().to_string()),
            ("training points".into(), self.n_train.to_string()),
        ];
        if let Some(e) = self.epsilon {
            s.settings.push(("epsilon".into(), num(e)));
        }
        s.headline = wrapper_headline(
            &format!("{name} on precomputed kernels"),
            self.c,
            &self.weights,
            &self.objective,
            (self.mkl_gap, self.svm_gap),
            self.converged,
        );
        s.columns = vec!["weight".into()];
        s.kernels = value_rows(self.kernels());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    /// A Gaussian and a linear Gram matrix of 24 points on a line, labels by the sign of
    /// `sin(3 x)`, and the test-by-train matrices of 5 other points.
    fn problem() -> (Vec<Matrix>, Vec<Matrix>, Matrix) {
        let train: Vec<f64> = (0..24).map(|i| -1.0 + i as f64 / 12.0).collect();
        let test: Vec<f64> = (0..5).map(|i| -0.9 + i as f64 * 0.4).collect();
        let gram = |a: &[f64], b: &[f64], f: &dyn Fn(f64, f64) -> f64| {
            let mut k = Matrix::zeros(a.len(), b.len());
            for (i, &x) in a.iter().enumerate() {
                for (j, &z) in b.iter().enumerate() {
                    k.set(i, j, f(x, z));
                }
            }
            k
        };
        let rbf = |x: f64, z: f64| (-(x - z).powi(2) * 4.0).exp();
        let lin = |x: f64, z: f64| x * z;
        let y = Matrix::from_vec(
            24,
            1,
            train
                .iter()
                .map(|x| if (3.0 * x).sin() >= 0.0 { 1.0 } else { -1.0 })
                .collect(),
        );
        (
            vec![gram(&train, &train, &rbf), gram(&train, &train, &lin)],
            vec![gram(&test, &train, &rbf), gram(&test, &train, &lin)],
            y,
        )
    }

    #[test]
    fn predict_never_panics_on_a_model_that_validates() {
        let (grams, test, y) = problem();
        let names = vec!["rbf".to_string(), "lin".to_string()];
        let (model, _) = PrecomputedWrapperModel::fit(
            &grams,
            &names,
            &y,
            TaskKind::Binary,
            &WrapperModelParams::default(),
            &(),
        )
        .unwrap();
        model.validate().unwrap();
        // The Gaussian kernel separates sin(3x); the linear one cannot.
        assert!(model.weights[0] > 0.5, "{:?}", model.weights);
        let views: Vec<MatrixRef<'_>> = test.iter().map(|m| m.view()).collect();
        let f = model.decision(&views).unwrap();
        assert_eq!((f.rows, f.cols), (5, 1));
        let v = serde_json::to_value(&model).unwrap();
        let (refused, accepted) = crate::solver::check::mangle::check_copies(
            &v,
            300,
            3,
            PrecomputedWrapperModel::validate,
            |m: &PrecomputedWrapperModel| m.decision(&views),
        );
        assert!(
            refused > 80 && accepted > 10,
            "{refused} refused, {accepted} accepted"
        );
        // Specific breakages.
        let mut bad = model.clone();
        bad.weights[1] = -0.5;
        assert!(matches!(bad.validate(), Err(Error::Model { .. })));
        let mut bad = model.clone();
        bad.kernel_names.pop();
        assert!(bad.validate().is_err());
        let mut bad = model.clone();
        bad.c = 0.0;
        assert!(bad.validate().is_err());
        let mut bad = model;
        bad.epsilon = Some(f64::NAN);
        assert!(bad.validate().is_err());
    }
}
