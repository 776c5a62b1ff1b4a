//! The squared-loss batch learners as models that predict labels: MKL-GOMP (`GompModel`,
//! Sindhwani & Lozano 2012, Sec. 3), lp-norm MKL (`LpMklModel`, Kloft et al. 2011),
//! polynomial MKL by randomized mirror descent or UCD (`PolyMklModel`, Afkanpour et al. 2013,
//! Alg. 2), wrapper MKL (`WrapperModel`) and the two learners on precomputed kernels.
//!
//! Each solves a *squared-loss* problem on real targets and returns decision values, from
//! rows ([`DecisionFunction`]) or from test-by-train kernel matrices ([`KernelDecision`]);
//! [`BatchModel`] adds what turns them into predictions of the task (the task kind, the
//! class names, the feature names a test file must match):
//!
//! - regression: the targets as they are, the decision value is the prediction;
//! - binary: targets `-1` (class 0) / `+1` (class 1, the "positive" class of the readers'
//!   natural order), prediction by the sign (`> 0` is class 1);
//! - multiclass: one-hot targets (`1` in the column of the class, `0` elsewhere; the
//!   "multivariate mode" of MKL-GOMP and shared kernel weights for lp-MKL), prediction by
//!   the largest output (the first among ties).
//!
//! `encode_targets` builds the target matrix, `decode` maps decision values back. Each
//! learner implements its decision trait and the crate's batch-learner trait (what it
//! predicts from, its part of the [`Summary`]) in its own solver folder;
//! `BatchModel` answers for all of them as a `Model` variant.

use crate::data::{Matrix, MatrixRef};
use crate::error::{Error, Result};
use crate::kernel::MemoryLimit;
use crate::select::SelectionRecord;
use crate::task::targets::{decode, expected_outputs};
use crate::task::{Prediction, TaskKind};
use crate::trained::summary::Summary;
use crate::trained::{computes_its_own_kernels, task_name, BatchInput, BatchLearner, TrainedModel};
pub use crate::trained::{DecisionFunction, KernelDecision};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// A batch learner together with what predicting labels needs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BatchModel<L> {
    pub task: TaskKind,
    /// Class names (binary: index 1 is the positive class, target `+1`); empty for
    /// regression.
    pub classes: Vec<String>,
    /// One name per training feature; test rows must have as many.
    pub feature_names: Vec<String>,
    /// The trained solver model.
    pub learner: L,
    /// How the settings were chosen, when `train` selected them (built-in selection).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selection: Option<SelectionRecord>,
}

impl<L> BatchModel<L> {
    /// Decision values of raw rows by `learner` (the model's), after checking the feature
    /// count.
    fn decision_by(
        &self,
        learner: &dyn DecisionFunction,
        x: MatrixRef<'_>,
        limit: &MemoryLimit,
    ) -> Result<Matrix> {
        if x.cols() != self.feature_names.len() {
            return Err(Error::shape(
                "features of the data (the model's)",
                self.feature_names.len(),
                x.cols(),
            ));
        }
        let f = learner.decision(x, limit)?;
        if f.rows != x.rows() || f.cols != expected_outputs(self.task, self.classes.len()) {
            return Err(Error::Numerical(format!(
                "internal: the learner returned {}x{} decision values for {} rows",
                f.rows,
                f.cols,
                x.rows()
            )));
        }
        Ok(f)
    }

    /// Checks that the task, the classes, the features and the learner (the model's, seen
    /// through `input`) agree: afterwards prediction on rows of the right width cannot
    /// panic.
    fn validate_learner(&self, input: BatchInput<'_>) -> Result<()> {
        input.validate()?;
        if let Some(learner) = input.rows() {
            // The learner takes rows as wide as the feature list: its own checks agree.
            let d = self.feature_names.len();
            let none = MatrixRef::new(0, d, &[]).expect("an empty view");
            if let Err(e) = learner.decision(none, &MemoryLimit::default()) {
                return Err(Error::model(
                    "<in memory>",
                    format!("the learner does not take the {d} features of the model: {e}"),
                ));
            }
        }
        check_outputs(self.task, &self.classes, input.n_outputs())
    }
}

impl<L: DecisionFunction> BatchModel<L> {
    /// Decision values of raw rows, after checking the feature count.
    pub(crate) fn decision(&self, x: MatrixRef<'_>, limit: &MemoryLimit) -> Result<Matrix> {
        self.decision_by(&self.learner, x, limit)
    }

    /// Predictions of raw rows: classes (indices into `classes`) or values.
    pub fn predict(&self, x: MatrixRef<'_>, limit: &MemoryLimit) -> Result<Vec<Prediction>> {
        decode(self.task, &self.decision(x, limit)?)
    }
}

/// What a model on precomputed kernels answers when given rows.
fn takes_kernels_not_rows() -> Error {
    Error::unsupported(
        "a model on precomputed kernels predicts from test-by-train kernel matrices, not from \
         rows: use decision_kernels / predict_kernels",
    )
}

/// The task, the class names and the learner's number of outputs agree.
fn check_outputs(task: TaskKind, classes: &[String], n_outputs: usize) -> Result<()> {
    match task {
        TaskKind::Binary if classes.len() != 2 => {
            return Err(Error::shape("classes of a binary model", 2, classes.len()))
        }
        TaskKind::Multiclass if classes.len() < 2 => {
            return Err(Error::data("a multiclass model needs at least 2 classes"))
        }
        TaskKind::Regression if !classes.is_empty() => {
            return Err(Error::shape(
                "classes of a regression model",
                0,
                classes.len(),
            ))
        }
        _ => {}
    }
    let want = expected_outputs(task, classes.len());
    if n_outputs != want {
        return Err(Error::shape("outputs of the learner", want, n_outputs));
    }
    Ok(())
}

/// Every batch learner's model: the task, classes and feature names are the wrapper's; what
/// it predicts from (rows or kernel matrices) and its description are the learner's.
impl<L: BatchLearner> TrainedModel for BatchModel<L> {
    fn task(&self) -> Option<TaskKind> {
        Some(self.task)
    }

    /// The feature names; none for a model on kernel matrices, which takes no rows.
    fn feature_names(&self) -> &[String] {
        if self.learner.input().rows().is_some() {
            &self.feature_names
        } else {
            &[]
        }
    }

    fn classes(&self) -> Cow<'_, [String]> {
        Cow::Borrowed(&self.classes)
    }

    fn rows_refusal(&self) -> Option<Error> {
        let on_kernels = self.learner.input().rows().is_none();
        on_kernels.then(takes_kernels_not_rows)
    }

    fn decision_rows(&self, x: MatrixRef<'_>, limit: &MemoryLimit) -> Result<Matrix> {
        let learner = self
            .learner
            .input()
            .rows()
            .ok_or_else(takes_kernels_not_rows)?;
        self.decision_by(learner, x, limit)
    }

    fn predict_rows(&self, x: MatrixRef<'_>, limit: &MemoryLimit) -> Result<Vec<Prediction>> {
        decode(self.task, &self.decision_rows(x, limit)?)
    }

    fn decision_kernels(&self, test: &[MatrixRef<'_>]) -> Result<Matrix> {
        let learner = self.learner.input().kernels();
        learner
            .ok_or_else(|| computes_its_own_kernels("decision_function"))?
            .decision_kernels(test)
    }

    fn predict_kernels(&self, test: &[MatrixRef<'_>]) -> Result<Vec<Prediction>> {
        let learner = self.learner.input().kernels();
        let learner = learner.ok_or_else(|| computes_its_own_kernels("predict"))?;
        decode(self.task, &learner.decision_kernels(test)?)
    }

    fn validate(&self) -> Result<()> {
        self.validate_learner(self.learner.input())
    }

    fn selection(&self) -> Option<&SelectionRecord> {
        self.selection.as_ref()
    }

    fn set_selection(&mut self, record: SelectionRecord) {
        self.selection = Some(record);
    }

    /// The task, the classes and the feature count, then the learner's part
    /// ([`BatchLearner::describe`]).
    fn summary(&self) -> Summary {
        let mut s = Summary {
            learner: String::new(),
            task: task_name(self.task).into(),
            classes: self.classes.clone(),
            n_features: self.feature_names.len(),
            settings: Vec::new(),
            headline: String::new(),
            columns: Vec::new(),
            ranked: false,
            kernels: Vec::new(),
            notes: Vec::new(),
        };
        self.learner.describe(&mut s, &self.feature_names);
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::Targets;
    use crate::solver::gomp::GompModel;
    use crate::solver::lp_mkl::LpMklModel;
    use crate::solver::mirror_descent::PolyMklModel;
    use crate::task::targets::encode_targets;

    fn classes(names: &[&str], y: &[usize]) -> Targets {
        Targets::Classes {
            classes: names.iter().map(|s| s.to_string()).collect(),
            y: y.to_vec(),
        }
    }

    #[test]
    fn binary_targets_are_plus_minus_one_and_decode_by_sign() {
        let (c, y) = encode_targets(TaskKind::Binary, &classes(&["M", "R"], &[0, 1, 1])).unwrap();
        assert_eq!(c, vec!["M", "R"]);
        assert_eq!((y.rows, y.cols), (3, 1));
        assert_eq!(y.data, vec![-1.0, 1.0, 1.0]);
        // Decoding the targets themselves gives the classes back.
        let p = decode(TaskKind::Binary, &y).unwrap();
        assert_eq!(
            p,
            vec![
                Prediction::Class(0),
                Prediction::Class(1),
                Prediction::Class(1)
            ]
        );
        // Zero is the negative class.
        let p = decode(TaskKind::Binary, &Matrix::from_vec(2, 1, vec![0.0, 1e-9])).unwrap();
        assert_eq!(p, vec![Prediction::Class(0), Prediction::Class(1)]);
    }

    #[test]
    fn multiclass_targets_are_one_hot_and_decode_by_argmax() {
        let t = classes(&["1", "2", "3", "5"], &[2, 0, 3, 1, 2]);
        let (_, y) = encode_targets(TaskKind::Multiclass, &t).unwrap();
        assert_eq!((y.rows, y.cols), (5, 4));
        // Brute force: every row sums to one and has its one at the class.
        let Targets::Classes { y: idx, .. } = &t else {
            unreachable!()
        };
        for (i, &c) in idx.iter().enumerate() {
            for j in 0..4 {
                assert_eq!(y.get(i, j), if j == c { 1.0 } else { 0.0 });
            }
        }
        let p = decode(TaskKind::Multiclass, &y).unwrap();
        let back: Vec<usize> = p.iter().map(Prediction::class).collect();
        assert_eq!(&back, idx);
    }

    #[test]
    fn mismatched_targets_are_refused() {
        let three = classes(&["a", "b", "c"], &[0, 1, 2]);
        let e = encode_targets(TaskKind::Binary, &three).unwrap_err();
        assert!(e.to_string().contains("exactly 2 classes"), "{e}");
        let e = encode_targets(TaskKind::Multiclass, &Targets::Real(vec![1.0])).unwrap_err();
        assert!(e.to_string().contains("class labels"), "{e}");
        let e = encode_targets(TaskKind::Regression, &three).unwrap_err();
        assert!(e.to_string().contains("real targets"), "{e}");
        assert!(decode(TaskKind::Binary, &Matrix::zeros(2, 3)).is_err());
    }

    #[test]
    fn regression_targets_pass_through() {
        let (c, y) = encode_targets(TaskKind::Regression, &Targets::Real(vec![1.5, -2.0])).unwrap();
        assert!(c.is_empty());
        assert_eq!(y.data, vec![1.5, -2.0]);
        let p = decode(TaskKind::Regression, &y).unwrap();
        assert_eq!(p, vec![Prediction::Value(1.5), Prediction::Value(-2.0)]);
    }

    /// Rows in `[-1, 1]^3` with the binary label `sign(x0 + 0.5 x1)` (deterministic).
    fn separable(n: usize) -> (Matrix, Targets) {
        let mut rows = Vec::new();
        let mut y = Vec::new();
        for i in 0..n {
            let t = i as f64;
            let r = vec![
                (t * 0.37).sin(),
                (t * 0.91 + 1.0).cos(),
                (t * 1.7).sin() * 0.5,
            ];
            y.push(usize::from(r[0] + 0.5 * r[1] > 0.0));
            rows.push(r);
        }
        let targets = Targets::Classes {
            classes: vec!["neg".into(), "pos".into()],
            y,
        };
        (Matrix::from_rows(&rows), targets)
    }

    fn binary<L>(classes: &[String], names: &[String], learner: L) -> BatchModel<L> {
        BatchModel {
            task: TaskKind::Binary,
            classes: classes.to_vec(),
            feature_names: names.to_vec(),
            learner,
            selection: None,
        }
    }

    fn accuracy_of<L: DecisionFunction>(m: &BatchModel<L>, x: &Matrix, t: &Targets) -> f64 {
        let Targets::Classes { y, .. } = t else {
            unreachable!()
        };
        let p = m.predict(x.view(), &MemoryLimit::default()).unwrap();
        let hits = p
            .iter()
            .zip(y)
            .filter(|&(p, &c)| *p == Prediction::Class(c))
            .count();
        hits as f64 / y.len() as f64
    }

    /// Saves, loads and compares the decision values of a reloaded model.
    fn round_trip(model: crate::model::Model, x: &Matrix) -> crate::model::Model {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.model");
        model.save(&path).unwrap();
        let back = crate::model::Model::load(&path).unwrap();
        let lim = MemoryLimit::default();
        let (a, b) = match (&model, &back) {
            (crate::model::Model::Gomp(a), crate::model::Model::Gomp(b)) => (
                a.decision(x.view(), &lim).unwrap(),
                b.decision(x.view(), &lim).unwrap(),
            ),
            (crate::model::Model::LpMkl(a), crate::model::Model::LpMkl(b)) => (
                a.decision(x.view(), &lim).unwrap(),
                b.decision(x.view(), &lim).unwrap(),
            ),
            (crate::model::Model::PolyMkl(a), crate::model::Model::PolyMkl(b)) => (
                a.decision(x.view(), &lim).unwrap(),
                b.decision(x.view(), &lim).unwrap(),
            ),
            _ => panic!("the model came back as another kind"),
        };
        assert_eq!((a.rows, a.cols), (b.rows, b.cols));
        for (u, v) in a.data.iter().zip(&b.data) {
            assert!((u - v).abs() <= 1e-9 * (1.0 + u.abs()), "{u} vs {v}");
        }
        back
    }

    #[test]
    fn batch_models_learn_and_survive_model_files() {
        use crate::kernel::KernelSpec;
        use crate::solver::gomp::GompModelParams;
        use crate::solver::lp_mkl::{LpMklModelParams, LpMklParams};
        use crate::solver::mirror_descent::{MirrorDescentParams, SolverOptions};
        let (x, t) = separable(60);
        let names: Vec<String> = (0..3).map(|j| format!("f{j}")).collect();
        let (classes, y) = encode_targets(TaskKind::Binary, &t).unwrap();
        let specs: Vec<KernelSpec> = vec!["perfeature:linear".parse().unwrap()];
        let (g, _) = GompModel::fit(
            x.view(),
            &names,
            &y,
            &specs,
            &GompModelParams::default(),
            &(),
        )
        .unwrap();
        let g = binary(&classes, &names, g);
        assert!(accuracy_of(&g, &x, &t) > 0.9);
        // The label depends on features 0 and 1 only: they are chosen first.
        let mut first: Vec<usize> = g.learner.dictionary_index[..2].to_vec();
        first.sort();
        assert_eq!(first, vec![0, 1]);
        round_trip(crate::model::Model::Gomp(g), &x);

        let lp = LpMklParams {
            p: f64::INFINITY,
            lambda: 0.1,
            ..LpMklParams::default()
        };
        let params = LpMklModelParams {
            lp,
            ..LpMklModelParams::default()
        };
        let (l, _) = LpMklModel::fit(x.view(), &names, &y, &specs, &params, &()).unwrap();
        let l = binary(&classes, &names, l);
        assert!(accuracy_of(&l, &x, &t) > 0.9);
        // p = inf is written as "inf" and read back.
        let back = round_trip(crate::model::Model::LpMkl(l), &x);
        let crate::model::Model::LpMkl(back) = back else {
            unreachable!()
        };
        assert_eq!(back.learner.p, "inf");

        let md = MirrorDescentParams {
            degree: 2,
            solver: SolverOptions {
                lambda: 0.1,
                max_iter: 200,
                ..SolverOptions::default()
            },
            ..MirrorDescentParams::default()
        };
        let p = binary(
            &classes,
            &names,
            PolyMklModel::fit(x.view(), &y.data, &md, &()).unwrap().0,
        );
        assert!(accuracy_of(&p, &x, &t) > 0.9);
        round_trip(crate::model::Model::PolyMkl(p.clone()), &x);

        // A test matrix with the wrong number of features is refused, not a panic.
        let e = p.decision(Matrix::zeros(2, 4).view(), &MemoryLimit::default());
        assert!(matches!(
            e,
            Err(Error::ShapeMismatch {
                expected: 3,
                found: 4,
                ..
            })
        ));
    }
}
