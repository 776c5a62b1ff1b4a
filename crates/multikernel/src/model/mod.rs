//! Trained models as users see them: one [`Model`] type, whatever the learner, that
//! predicts, gives decision values, describes itself ([`Summary`]) and round-trips through
//! bytes and files ([`file`](mod@file)).
//!
//! Each variant wraps the trained model of one learner, which answers for itself in its own
//! folder (`solver/NAME/` or `pipeline/INPUT/`, through a crate-private trait): `Model`
//! picks the variant and adds what every model shares (the column check, the classes of a
//! prediction, the selection notes of the summary). The squared-loss batch learners are
//! wrapped by [`BatchModel`], which adds the task, the class names and the feature names.
//! Adding a learner adds one variant here and its arm in the two matches that pick it.

pub mod batch_model;
pub mod file;
pub mod score;
pub mod summary;

pub use batch_model::{BatchModel, DecisionFunction};
pub use score::ScoreAccumulator;
pub use summary::{KernelRow, Summary};
/// The trained models of the structured learners, as a [`Model`] holds them (the shells
/// use them from here, never from `solver`).
pub mod structured {
    pub use crate::pipeline::columns::tagging::{SentenceMarginals, TaggerModel};
    pub use crate::pipeline::sequence::SequenceModel;
    pub use crate::pipeline::treebank::parser::ParserModel;
}

use crate::data::rows::{Schema, TargetSchema};
use crate::data::{Matrix, MatrixRef, Targets};
use crate::error::{Error, Result};
use crate::kernel::MemoryLimit;
use crate::pipeline::columns::tagging::TaggerModel;
use crate::pipeline::sequence::SequenceModel;
use crate::pipeline::table::vector_model::KernelMachine;
use crate::pipeline::treebank::parser::ParserModel;
use crate::select::SelectionRecord;
use crate::solver::gomp::GompModel;
use crate::solver::lp_mkl::{LpMklModel, PrecomputedLpModel};
use crate::solver::mirror_descent::PolyMklModel;
use crate::solver::wrapper::{PrecomputedWrapperModel, WrapperModel};
use crate::task::{Prediction, TaskKind};
use crate::trained::TrainedModel;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::ops::Range;
use std::path::Path;

/// Any trained model. The serialized form names the variant in its `kind` field
/// (`kernel-machine`, `sequence`, `gomp`, `lp-mkl`, `poly-mkl`, `parser`, `tagger`,
/// `precomputed`, `wrapper`, `precomputed-wrapper`), as model files have since version 1.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", content = "model", rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Model {
    /// Online proximal MKL on vector data (Alg. 1 of Martins et al. 2011).
    KernelMachine(KernelMachine),
    /// SPOM on sequences (Alg. 3, first-order chain).
    Sequence(SequenceModel),
    /// MKL-GOMP (Sindhwani & Lozano 2012, Sec. 3).
    Gomp(BatchModel<GompModel>),
    /// lp-norm MKL for the squared loss (Kloft et al. 2011).
    LpMkl(BatchModel<LpMklModel>),
    /// Polynomial product-kernel MKL by randomized mirror descent or UCD (Afkanpour et al.
    /// 2013, Alg. 2).
    PolyMkl(BatchModel<PolyMklModel>),
    /// An arc-factored dependency parser with templates as groups (SPOM, martins2011 Sec.
    /// 4.2) and its relation labeler.
    Parser(ParserModel),
    /// A sequence tagger over CRF++ templates, one group per template (SPOM or
    /// multi-template learning).
    Tagger(TaggerModel),
    /// lp-norm MKL on kernel matrices the caller computed: predicts from test-by-train
    /// kernel matrices ([`Model::decision_kernels`]), not from rows.
    Precomputed(BatchModel<PrecomputedLpModel>),
    /// Wrapper MKL (SimpleMKL or Gauss-Seidel) around the exact SMO solver: SVMs with
    /// kernel weights on the simplex.
    Wrapper(BatchModel<WrapperModel>),
    /// Wrapper MKL (SimpleMKL, Rakotomamonjy et al. 2008, or Gauss-Seidel) on kernel
    /// matrices the caller computed: predicts from test-by-train kernel matrices
    /// ([`Model::decision_kernels`]), not from rows.
    PrecomputedWrapper(BatchModel<PrecomputedWrapperModel>),
}

/// A test metric and its value.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Score {
    /// `accuracy` (a fraction), `mse`, or `token_accuracy` for sequences.
    pub metric: &'static str,
    pub value: f64,
    /// Rows (or tokens) scored.
    pub n: usize,
}

impl Model {
    /// The variant's model, which answers every question about it.
    fn trained(&self) -> &dyn TrainedModel {
        match self {
            Model::KernelMachine(m) => m,
            Model::Sequence(m) => m,
            Model::Gomp(m) => m,
            Model::LpMkl(m) => m,
            Model::PolyMkl(m) => m,
            Model::Parser(m) => m,
            Model::Tagger(m) => m,
            Model::Precomputed(m) => m,
            Model::Wrapper(m) => m,
            Model::PrecomputedWrapper(m) => m,
        }
    }

    /// [`Model::trained`], to change.
    fn trained_mut(&mut self) -> &mut dyn TrainedModel {
        match self {
            Model::KernelMachine(m) => m,
            Model::Sequence(m) => m,
            Model::Gomp(m) => m,
            Model::LpMkl(m) => m,
            Model::PolyMkl(m) => m,
            Model::Parser(m) => m,
            Model::Tagger(m) => m,
            Model::Precomputed(m) => m,
            Model::Wrapper(m) => m,
            Model::PrecomputedWrapper(m) => m,
        }
    }

    /// The task the model predicts: `binary`, `multiclass`, `regression`, `sequence` or
    /// `parsing`.
    pub fn task_name(&self) -> &'static str {
        self.trained().task_name()
    }

    /// The vector task kind; `None` for a sequence model.
    pub(crate) fn vector_task(&self) -> Option<TaskKind> {
        self.trained().task()
    }

    /// Names of the input columns the model was trained on (empty for a sequence model,
    /// whose inputs are only counted: [`Model::n_features`]).
    pub fn feature_names(&self) -> &[String] {
        self.trained().feature_names()
    }

    /// Number of input columns.
    pub fn n_features(&self) -> usize {
        self.trained().n_features()
    }

    /// Class names (binary: the second is the positive class), the label alphabet of a
    /// sequence model, or nothing for regression. A tagger's labels are bytes in its data's
    /// encoding: shown here decoded as UTF-8, with U+FFFD for bytes that are not.
    pub fn classes(&self) -> Cow<'_, [String]> {
        self.trained().classes()
    }

    /// What a data file for this vector model must hold: the feature columns (by name) and
    /// the target. `None` for a sequence model.
    pub fn schema(&self) -> Option<Schema> {
        let task = self.vector_task()?;
        Some(Schema {
            feature_names: self.feature_names().to_vec(),
            target: match task {
                TaskKind::Regression => TargetSchema::Real,
                _ => TargetSchema::Classes(self.classes().to_vec()),
            },
        })
    }

    /// Rows of the model's width, for a model that predicts rows (the error says what a
    /// model of sequences, sentences or kernel matrices takes instead).
    fn check_rows(&self, x: MatrixRef<'_>) -> Result<()> {
        if let Some(refusal) = self.trained().rows_refusal() {
            return Err(refusal);
        }
        let d = self.n_features();
        if x.cols() != d {
            return Err(Error::shape(
                "features of the data (the model's)",
                d,
                x.cols(),
            ));
        }
        Ok(())
    }

    /// Predictions as targets: values (regression), or class indices with the class names.
    fn targets(&self, pred: &[Prediction]) -> Result<Targets> {
        if self.vector_task() == Some(TaskKind::Regression) {
            return Ok(Targets::Real(pred.iter().map(Prediction::value).collect()));
        }
        let y: Vec<usize> = pred.iter().map(Prediction::class).collect();
        let classes = self.classes();
        let k = classes.len();
        if let Some(bad) = y.iter().find(|&&c| c >= k) {
            return Err(Error::model(
                "<in memory>",
                format!("predicted class {bad} of {k}"),
            ));
        }
        Ok(Targets::Classes {
            classes: classes.to_vec(),
            y,
        })
    }

    /// Decision values from test-by-train kernel matrices (`test[m]` is `K_m(X_test,
    /// X_train)`, read in place) for a model trained on precomputed kernels.
    pub fn decision_kernels(&self, test: &[MatrixRef<'_>]) -> Result<Matrix> {
        self.trained().decision_kernels(test)
    }

    /// Predictions (class indices with the class names, or values) from test-by-train
    /// kernel matrices, for a model trained on precomputed kernels.
    pub fn predict_kernels(&self, test: &[MatrixRef<'_>]) -> Result<Targets> {
        let pred = self.trained().predict_kernels(test)?;
        self.targets(&pred)
    }

    /// Decision values of raw rows (`rows x outputs`: one column for binary and regression,
    /// one per class for multiclass). Binary: positive means the second class. Regression:
    /// the predicted values. The memory limit bounds the cross Gram blocks.
    pub fn decision_function_with(&self, x: MatrixRef<'_>, limit: &MemoryLimit) -> Result<Matrix> {
        self.check_rows(x)?;
        self.trained().decision_rows(x, limit)
    }

    /// [`Model::decision_function_with`] under the default memory limit (8 GiB).
    pub fn decision_function(&self, x: MatrixRef<'_>) -> Result<Matrix> {
        self.decision_function_with(x, &MemoryLimit::default())
    }

    /// Predictions of raw rows: class indices (with the class names) or values.
    pub fn predict_with(&self, x: MatrixRef<'_>, limit: &MemoryLimit) -> Result<Targets> {
        self.check_rows(x)?;
        let pred = self.trained().predict_rows(x, limit)?;
        self.targets(&pred)
    }

    /// [`Model::predict_with`] under the default memory limit (8 GiB).
    pub fn predict(&self, x: MatrixRef<'_>) -> Result<Targets> {
        self.predict_with(x, &MemoryLimit::default())
    }

    /// The best label sequence of each span of rows of `x` (a sequence model).
    pub fn predict_sequences_with(
        &self,
        x: MatrixRef<'_>,
        spans: &[Range<usize>],
        limit: &MemoryLimit,
    ) -> Result<Vec<Vec<usize>>> {
        self.trained().predict_sequences(x, spans, limit)
    }

    /// The test metric of a vector model on labelled rows: accuracy or mean squared error
    /// (one chunk of a [`ScoreAccumulator`]).
    pub fn score_with(
        &self,
        x: MatrixRef<'_>,
        targets: &Targets,
        limit: &MemoryLimit,
    ) -> Result<Score> {
        let mut acc = ScoreAccumulator::new(self);
        acc.push(x, targets, limit)?;
        Ok(acc.finish())
    }

    /// Checks that every shape stored in the model agrees (run on every model read from a
    /// file or bytes): afterwards, prediction on rows of the right width cannot panic.
    pub(crate) fn validate(&self) -> Result<()> {
        self.trained().validate()
    }

    /// The model as bytes (the model-file format, [`file`](mod@file)).
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        file::to_bytes(self)
    }

    /// A model from bytes written by [`Model::to_bytes`] or read from a model file (either
    /// format version), checked with `Model::validate`.
    pub fn from_bytes(bytes: &[u8]) -> Result<Model> {
        file::from_bytes(bytes, "<bytes>")
    }

    /// Writes the model file atomically (a temporary file renamed into place).
    pub fn save(&self, path: &Path) -> Result<()> {
        file::save(path, self)
    }

    /// Reads and checks a model file.
    pub fn load(path: &Path) -> Result<Model> {
        file::load(path)
    }

    /// How the model's settings were chosen, when `train` selected them.
    pub fn selection(&self) -> Option<&SelectionRecord> {
        self.trained().selection()
    }

    /// Stores how the settings were chosen (table models, taggers and parsers; other models
    /// ignore it).
    pub(crate) fn set_selection(&mut self, record: SelectionRecord) {
        self.trained_mut().set_selection(record);
    }

    /// The model's self-description.
    pub fn summary(&self) -> Summary {
        let mut s = self.trained().summary();
        if let Some(r) = self.selection() {
            s.notes.push(r.headline());
            if let Some(why) = &r.learner_choice {
                s.notes.push(format!("learner: {why}"));
            }
            s.notes.extend(r.candidate_lines());
        }
        s
    }
}
