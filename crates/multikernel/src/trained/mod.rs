//! The seam between [`Model`](crate::model::Model) and the learners: every trained model
//! implements [`TrainedModel`] in its learner's own folder (`solver/NAME/` or
//! `pipeline/INPUT/`), and `Model` only picks the variant's `&dyn TrainedModel`. What most
//! models share is a default method: no kernel-matrix prediction, no sequence prediction, no
//! selection record.
//!
//! The squared-loss batch learners are wrapped in `model::BatchModel`, which implements
//! [`TrainedModel`] once for every [`BatchLearner`]: a learner says whether it predicts from
//! rows ([`DecisionFunction`]) or from kernel matrices ([`KernelDecision`]) and describes
//! itself; the wrapper adds the task, the classes and the feature names.
//!
//! [`Summary`] (re-exported by `model`) is what every model says about itself.

pub(crate) mod summary;

pub use summary::{KernelRow, Summary, SHOWN_KERNELS};

use crate::data::{Matrix, MatrixRef};
use crate::error::{Error, Result};
use crate::kernel::MemoryLimit;
use crate::select::SelectionRecord;
use crate::task::{Prediction, TaskKind};
use std::borrow::Cow;
use std::ops::Range;

/// What every trained model answers, whatever its learner. `Model`'s methods delegate here
/// after their shared checks: a model that takes rows gets rows of its width only
/// ([`TrainedModel::rows_refusal`] and the column count are checked first).
pub(crate) trait TrainedModel {
    /// The vector task kind; `None` for a model of sequences, sentences or trees.
    fn task(&self) -> Option<TaskKind>;

    /// The task's name: `binary`, `multiclass`, `regression`, or `sequence` for a model
    /// without a vector task.
    fn task_name(&self) -> &'static str {
        match self.task() {
            Some(t) => task_name(t),
            None => "sequence",
        }
    }

    /// Names of the input columns the model was trained on (none by default).
    fn feature_names(&self) -> &[String] {
        &[]
    }

    /// Number of input columns: the feature names unless the model only counts them.
    fn n_features(&self) -> usize {
        self.feature_names().len()
    }

    /// Class names, a sequence model's label alphabet, or nothing (regression).
    fn classes(&self) -> Cow<'_, [String]>;

    /// Why the model predicts no rows (it labels sequences, parses sentences, or reads
    /// kernel matrices), as the error to give; `None` for a model of rows.
    fn rows_refusal(&self) -> Option<Error> {
        None
    }

    /// Decision values of rows as wide as the model's features (`rows x outputs`).
    fn decision_rows(&self, _x: MatrixRef<'_>, _limit: &MemoryLimit) -> Result<Matrix> {
        Err(self.rows_refusal().unwrap_or_else(no_rows))
    }

    /// Predictions of rows as wide as the model's features: class indices or values.
    fn predict_rows(&self, _x: MatrixRef<'_>, _limit: &MemoryLimit) -> Result<Vec<Prediction>> {
        Err(self.rows_refusal().unwrap_or_else(no_rows))
    }

    /// Decision values from test-by-train kernel matrices (a model on precomputed kernels).
    fn decision_kernels(&self, _test: &[MatrixRef<'_>]) -> Result<Matrix> {
        Err(computes_its_own_kernels("decision_function"))
    }

    /// Predictions from test-by-train kernel matrices (a model on precomputed kernels).
    fn predict_kernels(&self, _test: &[MatrixRef<'_>]) -> Result<Vec<Prediction>> {
        Err(computes_its_own_kernels("predict"))
    }

    /// The best label sequence of each span of rows of `x` (a sequence model).
    fn predict_sequences(
        &self,
        _x: MatrixRef<'_>,
        _spans: &[Range<usize>],
        _limit: &MemoryLimit,
    ) -> Result<Vec<Vec<usize>>> {
        Err(Error::unsupported(
            "a vector model predicts rows: use predict",
        ))
    }

    /// Checks that every stored shape agrees (a model read from a file or bytes).
    fn validate(&self) -> Result<()>;

    /// How the settings were chosen, when `train` selected them (table models, taggers and
    /// parsers).
    fn selection(&self) -> Option<&SelectionRecord> {
        None
    }

    /// Stores how the settings were chosen; models without a record ignore it.
    fn set_selection(&mut self, _record: SelectionRecord) {}

    /// The learner's self-description (without the selection record, which `Model` adds).
    fn summary(&self) -> Summary;
}

/// The name of a vector task kind.
pub(crate) fn task_name(t: TaskKind) -> &'static str {
    match t {
        TaskKind::Binary => "binary",
        TaskKind::Multiclass => "multiclass",
        TaskKind::Regression => "regression",
    }
}

/// What a model that takes rows answers when given kernel matrices; `door` is the method
/// that takes rows.
pub(crate) fn computes_its_own_kernels(door: &str) -> Error {
    Error::unsupported(format!(
        "this model computes its own kernels: give it rows ({door})"
    ))
}

/// What a model without [`TrainedModel::rows_refusal`] answers when it does not implement a
/// prediction on rows.
fn no_rows() -> Error {
    Error::unsupported("this model does not predict rows")
}

/// A trained learner that maps raw rows to decision values (`n x outputs`).
pub trait DecisionFunction {
    /// Decision values of raw rows (`x.rows x n_outputs()`).
    fn decision(&self, x: MatrixRef<'_>, limit: &MemoryLimit) -> Result<Matrix>;
    /// Number of outputs (1, or the number of classes of a multiclass model).
    fn n_outputs(&self) -> usize;
    /// Checks that every stored shape agrees (a model read from a file).
    fn validate(&self) -> Result<()>;
}

/// A trained learner on kernel matrices the caller computed: decision values from
/// test-by-train matrices (`test[m]` is `K_m(X_test, X_train)`), not from rows.
pub trait KernelDecision {
    /// Decision values (`n_test x n_outputs()`), the matrices read in place.
    fn decision_kernels(&self, test: &[MatrixRef<'_>]) -> Result<Matrix>;
    /// Number of outputs (1, or the number of classes of a multiclass model).
    fn n_outputs(&self) -> usize;
    /// Checks that every stored shape agrees (a model read from a file).
    fn validate(&self) -> Result<()>;
}

/// What a squared-loss batch learner predicts from.
#[derive(Clone, Copy)]
pub(crate) enum BatchInput<'a> {
    /// Raw rows.
    Rows(&'a dyn DecisionFunction),
    /// Test-by-train kernel matrices the caller computed.
    Kernels(&'a dyn KernelDecision),
}

impl<'a> BatchInput<'a> {
    /// The learner on rows; `None` on kernel matrices.
    pub(crate) fn rows(self) -> Option<&'a dyn DecisionFunction> {
        match self {
            BatchInput::Rows(learner) => Some(learner),
            BatchInput::Kernels(_) => None,
        }
    }

    /// The learner on kernel matrices; `None` on rows.
    pub(crate) fn kernels(self) -> Option<&'a dyn KernelDecision> {
        match self {
            BatchInput::Rows(_) => None,
            BatchInput::Kernels(learner) => Some(learner),
        }
    }

    /// The learner's number of outputs.
    pub(crate) fn n_outputs(self) -> usize {
        match self {
            BatchInput::Rows(learner) => learner.n_outputs(),
            BatchInput::Kernels(learner) => learner.n_outputs(),
        }
    }

    /// The learner's own check of its stored shapes.
    pub(crate) fn validate(self) -> Result<()> {
        match self {
            BatchInput::Rows(learner) => learner.validate(),
            BatchInput::Kernels(learner) => learner.validate(),
        }
    }
}

/// A squared-loss batch learner as `model::BatchModel` wraps it: what it predicts from and
/// how it describes itself.
pub(crate) trait BatchLearner {
    /// The learner as a predictor of rows or of kernel matrices.
    fn input(&self) -> BatchInput<'_>;

    /// Fills the learner's part of `s` (the learner, settings, headline, kernel table and
    /// notes); the wrapper has set the task, the classes and the feature count.
    /// `feature_names` are the model's input columns.
    fn describe(&self, s: &mut Summary, feature_names: &[String]);
}
