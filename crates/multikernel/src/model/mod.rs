//! Trained models as users see them: one [`Model`] type, whatever the learner, that
//! predicts, gives decision values, describes itself ([`Summary`]) and round-trips through
//! bytes and files ([`file`](mod@file)).
//!
//! Each variant wraps the trained model of one learner (in its solver folder); the
//! squared-loss batch learners are wrapped by [`BatchModel`], which adds the task, the class
//! names and the feature names. Adding a learner adds one variant here.

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
use crate::solver::gomp::{GompModel, GompStop};
use crate::solver::lp_mkl::{p_label, LpMklModel, PrecomputedLpModel};
use crate::solver::mirror_descent::PolyMklModel;
use crate::solver::wrapper::{PrecomputedWrapperModel, WrapperMethod, WrapperModel};
use crate::task::{Prediction, TaskKind};
use serde::{Deserialize, Serialize};
use std::ops::Range;
use std::path::Path;
use summary::num;

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
    /// The task the model predicts: `binary`, `multiclass`, `regression`, `sequence` or
    /// `parsing`.
    pub fn task_name(&self) -> &'static str {
        match (self, self.vector_task()) {
            (Model::Parser(_), _) => "parsing",
            (_, Some(TaskKind::Binary)) => "binary",
            (_, Some(TaskKind::Multiclass)) => "multiclass",
            (_, Some(TaskKind::Regression)) => "regression",
            (_, None) => "sequence",
        }
    }

    /// The vector task kind; `None` for a sequence model.
    pub(crate) fn vector_task(&self) -> Option<TaskKind> {
        match self {
            Model::KernelMachine(m) => Some(m.task),
            Model::Sequence(_) | Model::Parser(_) | Model::Tagger(_) => None,
            Model::Gomp(m) => Some(m.task),
            Model::LpMkl(m) => Some(m.task),
            Model::PolyMkl(m) => Some(m.task),
            Model::Precomputed(m) => Some(m.task),
            Model::Wrapper(m) => Some(m.task),
            Model::PrecomputedWrapper(m) => Some(m.task),
        }
    }

    /// Names of the input columns the model was trained on (empty for a sequence model,
    /// whose inputs are only counted: [`Model::n_features`]).
    pub fn feature_names(&self) -> &[String] {
        match self {
            Model::KernelMachine(m) => &m.feature_names,
            Model::Sequence(_) | Model::Parser(_) | Model::Tagger(_) => &[],
            Model::Gomp(m) => &m.feature_names,
            Model::LpMkl(m) => &m.feature_names,
            Model::PolyMkl(m) => &m.feature_names,
            Model::Precomputed(_) | Model::PrecomputedWrapper(_) => &[],
            Model::Wrapper(m) => &m.feature_names,
        }
    }

    /// Number of input columns.
    pub fn n_features(&self) -> usize {
        match self {
            Model::Sequence(m) => m.n_features,
            _ => self.feature_names().len(),
        }
    }

    /// Class names (binary: the second is the positive class), the label alphabet of a
    /// sequence model, or nothing for regression. A tagger's labels are bytes in its data's
    /// encoding: shown here decoded as UTF-8, with U+FFFD for bytes that are not.
    pub fn classes(&self) -> std::borrow::Cow<'_, [String]> {
        use std::borrow::Cow;
        if let Model::Tagger(m) = self {
            return Cow::Owned(
                m.featurizer
                    .labels
                    .iter()
                    .map(|l| String::from_utf8_lossy(l).into_owned())
                    .collect(),
            );
        }
        Cow::Borrowed(match self {
            Model::KernelMachine(m) => &m.classes,
            Model::Sequence(m) => &m.labels,
            Model::Parser(m) => m.labeler.as_ref().map_or(&[], |l| &l.labels),
            Model::Tagger(_) => &[],
            Model::Gomp(m) => &m.classes,
            Model::LpMkl(m) => &m.classes,
            Model::PolyMkl(m) => &m.classes,
            Model::Precomputed(m) => &m.classes,
            Model::Wrapper(m) => &m.classes,
            Model::PrecomputedWrapper(m) => &m.classes,
        })
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

    fn vector_only(&self) -> Result<()> {
        match self {
            Model::Sequence(_) => Err(Error::unsupported(
                "a sequence model labels sequences: use predict_sequences",
            )),
            Model::Parser(_) => Err(parser_refusal()),
            Model::Tagger(_) => Err(tagger_refusal()),
            Model::Precomputed(_) | Model::PrecomputedWrapper(_) => Err(Error::unsupported(
                "a model on precomputed kernels predicts from test-by-train kernel matrices, \
                 not from rows: use decision_kernels / predict_kernels",
            )),
            _ => Ok(()),
        }
    }

    /// Decision values from test-by-train kernel matrices (`test[m]` is `K_m(X_test,
    /// X_train)`, read in place) for a model trained on precomputed kernels.
    pub fn decision_kernels(&self, test: &[MatrixRef<'_>]) -> Result<Matrix> {
        match self {
            Model::Precomputed(m) => m.decision_kernels(test),
            Model::PrecomputedWrapper(m) => m.decision_kernels(test),
            _ => Err(Error::unsupported(
                "this model computes its own kernels: give it rows (decision_function)",
            )),
        }
    }

    /// Predictions (class indices with the class names, or values) from test-by-train
    /// kernel matrices, for a model trained on precomputed kernels.
    pub fn predict_kernels(&self, test: &[MatrixRef<'_>]) -> Result<Targets> {
        let (pred, task, classes) = match self {
            Model::Precomputed(m) => (m.predict_kernels(test)?, m.task, &m.classes),
            Model::PrecomputedWrapper(m) => (m.predict_kernels(test)?, m.task, &m.classes),
            _ => {
                return Err(Error::unsupported(
                    "this model computes its own kernels: give it rows (predict)",
                ))
            }
        };
        Ok(match task {
            TaskKind::Regression => Targets::Real(pred.iter().map(Prediction::value).collect()),
            _ => Targets::Classes {
                classes: classes.clone(),
                y: pred.iter().map(Prediction::class).collect(),
            },
        })
    }

    /// Decision values of raw rows (`rows x outputs`: one column for binary and regression,
    /// one per class for multiclass). Binary: positive means the second class. Regression:
    /// the predicted values. The memory limit bounds the cross Gram blocks.
    pub fn decision_function_with(&self, x: MatrixRef<'_>, limit: &MemoryLimit) -> Result<Matrix> {
        self.vector_only()?;
        self.check_columns(x)?;
        match self {
            Model::KernelMachine(m) => {
                let mut s = m.scores(x, limit)?;
                if let (TaskKind::Regression, Some(t)) = (m.task, &m.target_scaler) {
                    s.data.iter_mut().for_each(|v| *v = t.invert(*v));
                }
                Ok(s)
            }
            Model::Gomp(m) => m.decision(x, limit),
            Model::LpMkl(m) => m.decision(x, limit),
            Model::PolyMkl(m) => m.decision(x, limit),
            Model::Wrapper(m) => m.decision(x, limit),
            Model::Precomputed(_) | Model::PrecomputedWrapper(_) => {
                unreachable!("refused above")
            }
            Model::Sequence(_) | Model::Parser(_) | Model::Tagger(_) => {
                unreachable!("refused above")
            }
        }
    }

    /// [`Model::decision_function_with`] under the default memory limit (8 GiB).
    pub fn decision_function(&self, x: MatrixRef<'_>) -> Result<Matrix> {
        self.decision_function_with(x, &MemoryLimit::default())
    }

    /// Predictions of raw rows: class indices (with the class names) or values.
    pub fn predict_with(&self, x: MatrixRef<'_>, limit: &MemoryLimit) -> Result<Targets> {
        self.vector_only()?;
        self.check_columns(x)?;
        let pred: Vec<Prediction> = match self {
            Model::KernelMachine(m) => m.predict(x, limit)?,
            Model::Gomp(m) => m.predict(x, limit)?,
            Model::LpMkl(m) => m.predict(x, limit)?,
            Model::PolyMkl(m) => m.predict(x, limit)?,
            Model::Wrapper(m) => m.predict(x, limit)?,
            Model::Precomputed(_) | Model::PrecomputedWrapper(_) => {
                unreachable!("refused above")
            }
            Model::Sequence(_) | Model::Parser(_) | Model::Tagger(_) => {
                unreachable!("refused above")
            }
        };
        Ok(match self.vector_task() {
            Some(TaskKind::Regression) => {
                Targets::Real(pred.iter().map(Prediction::value).collect())
            }
            _ => {
                let y: Vec<usize> = pred.iter().map(Prediction::class).collect();
                let k = self.classes().len();
                if let Some(bad) = y.iter().find(|&&c| c >= k) {
                    return Err(Error::model(
                        "<in memory>",
                        format!("predicted class {bad} of {k}"),
                    ));
                }
                Targets::Classes {
                    classes: self.classes().to_vec(),
                    y,
                }
            }
        })
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
        match self {
            Model::Sequence(m) => m.predict(x, spans, limit),
            Model::Parser(_) => Err(parser_refusal()),
            Model::Tagger(_) => Err(tagger_refusal()),
            _ => Err(Error::unsupported(
                "a vector model predicts rows: use predict",
            )),
        }
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

    fn check_columns(&self, x: MatrixRef<'_>) -> Result<()> {
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

    /// Checks that every shape stored in the model agrees (run on every model read from a
    /// file or bytes): afterwards, prediction on rows of the right width cannot panic.
    pub fn validate(&self) -> Result<()> {
        match self {
            Model::KernelMachine(m) => m.validate(),
            Model::Sequence(m) => m.validate(),
            Model::Gomp(m) => m.validate(),
            Model::LpMkl(m) => m.validate(),
            Model::PolyMkl(m) => m.validate(),
            Model::Precomputed(m) => m.validate_kernels(),
            Model::PrecomputedWrapper(m) => m.validate_kernels(),
            Model::Wrapper(m) => m.validate(),
            Model::Parser(m) => m.validate().map_err(|e| Error::model("<model>", e)),
            Model::Tagger(m) => m.validate().map_err(|e| Error::model("<model>", e)),
        }
    }

    /// The model as bytes (the model-file format, [`file`](mod@file)).
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        file::to_bytes(self)
    }

    /// A model from bytes written by [`Model::to_bytes`] or read from a model file (either
    /// format version), checked with [`Model::validate`].
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
    pub fn selection(&self) -> Option<&crate::select::SelectionRecord> {
        match self {
            Model::KernelMachine(m) => m.selection.as_ref(),
            Model::Gomp(m) => m.selection.as_ref(),
            Model::LpMkl(m) => m.selection.as_ref(),
            Model::PolyMkl(m) => m.selection.as_ref(),
            Model::Precomputed(m) => m.selection.as_ref(),
            Model::Wrapper(m) => m.selection.as_ref(),
            Model::PrecomputedWrapper(m) => m.selection.as_ref(),
            _ => None,
        }
    }

    /// Stores how the settings were chosen (table models; other models ignore it).
    pub fn set_selection(&mut self, record: crate::select::SelectionRecord) {
        match self {
            Model::KernelMachine(m) => m.selection = Some(record),
            Model::Gomp(m) => m.selection = Some(record),
            Model::LpMkl(m) => m.selection = Some(record),
            Model::PolyMkl(m) => m.selection = Some(record),
            Model::Precomputed(m) => m.selection = Some(record),
            Model::Wrapper(m) => m.selection = Some(record),
            Model::PrecomputedWrapper(m) => m.selection = Some(record),
            _ => {}
        }
    }

    /// The model's self-description.
    pub fn summary(&self) -> Summary {
        let mut s = self.summary_of_learner();
        if let Some(r) = self.selection() {
            s.notes.push(r.headline());
            if let Some(why) = &r.learner_choice {
                s.notes.push(format!("learner: {why}"));
            }
            s.notes.extend(r.candidate_lines());
        }
        s
    }

    fn summary_of_learner(&self) -> Summary {
        match self {
            Model::KernelMachine(m) => online_summary(m),
            Model::Sequence(m) => sequence_summary(m),
            Model::Gomp(m) => gomp_summary(m),
            Model::LpMkl(m) => lp_summary(m),
            Model::PolyMkl(m) => poly_summary(m),
            Model::Precomputed(m) => precomputed_summary(m),
            Model::Wrapper(m) => wrapper_summary(m),
            Model::PrecomputedWrapper(m) => precomputed_wrapper_summary(m),
            Model::Parser(m) => parser_summary(m),
            Model::Tagger(m) => tagger_summary(m),
        }
    }
}

/// What a parser answers when asked for rows or sequences.
fn parser_refusal() -> Error {
    Error::unsupported("a parser parses sentences: use the parser (Model::Parser) on CoNLL-U data")
}

/// What a tagger answers when asked for rows or numeric sequences.
fn tagger_refusal() -> Error {
    Error::unsupported(
        "a template tagger labels sentences in the column format: use the tagger \
         (Model::Tagger) on column data",
    )
}

fn tagger_summary(m: &TaggerModel) -> Summary {
    let norms = m.group_norms();
    let kept = norms.iter().filter(|&&n| n > 0.0).count();
    let f = &m.featurizer;
    let layout = f.layout();
    let mut settings = vec![
        ("learner".to_string(), m.learner.clone()),
        ("labels".to_string(), f.labels.len().to_string()),
        ("weights".to_string(), layout.total().to_string()),
        ("observation_columns".to_string(), f.n_columns.to_string()),
    ];
    if f.min_count > 1 {
        settings.push(("min_count".to_string(), f.min_count.to_string()));
    }
    Summary {
        learner: "sequence tagger, CRF++ templates as groups".into(),
        task: "sequence".into(),
        classes: f
            .labels
            .iter()
            .map(|l| String::from_utf8_lossy(l).into_owned())
            .collect(),
        n_features: f.n_columns,
        settings,
        headline: format!(
            "{kept} of {} templates kept (non-zero weights); {} pruned",
            norms.len(),
            norms.len() - kept
        ),
        columns: if m.template_weights.is_empty() {
            vec!["norm".into(), "weights".into()]
        } else {
            vec!["norm".into(), "weights".into(), "mu".into()]
        },
        ranked: false,
        kernels: m
            .group_names()
            .into_iter()
            .enumerate()
            .map(|(g, name)| KernelRow {
                name: if norms[g] > 0.0 {
                    name
                } else {
                    format!("{name} (pruned)")
                },
                values: std::iter::once(norms[g])
                    .chain(std::iter::once(layout.len_of(g) as f64))
                    .chain(m.template_weights.get(g).copied())
                    .collect(),
            })
            .collect(),
        notes: Vec::new(),
    }
}

fn parser_summary(m: &ParserModel) -> Summary {
    let norms = m.group_norms();
    let kept = norms.iter().filter(|&&n| n > 0.0).count();
    let f = &m.featurizer;
    let mut settings = vec![
        ("trees".to_string(), format!("{:?}", m.trees).to_lowercase()),
        (
            "support".to_string(),
            format!("{:?}", f.support).to_lowercase(),
        ),
        ("features".to_string(), f.layout().total().to_string()),
    ];
    if let Some(l) = &m.labeler {
        settings.push(("relations".to_string(), l.labels.len().to_string()));
    }
    Summary {
        learner: "SPOM parser, templates as groups (Martins et al. 2011, Sec. 4.2)".into(),
        task: "parsing".into(),
        classes: m.labeler.as_ref().map_or(Vec::new(), |l| l.labels.clone()),
        n_features: f.templates.templates.len(),
        settings,
        headline: format!(
            "{kept} of {} templates kept (non-zero weights); {} pruned",
            norms.len(),
            norms.len() - kept
        ),
        columns: vec!["norm".into(), "features".into()],
        ranked: false,
        kernels: f
            .templates
            .templates
            .iter()
            .enumerate()
            .map(|(g, t)| KernelRow {
                name: if norms[g] > 0.0 {
                    t.name.clone()
                } else {
                    format!("{} (pruned)", t.name)
                },
                values: vec![norms[g], f.layout().len_of(g) as f64],
            })
            .collect(),
        notes: Vec::new(),
    }
}

fn yes_no(b: bool) -> String {
    if b { "on" } else { "off" }.to_string()
}

fn online_summary(m: &KernelMachine) -> Summary {
    let t = &m.training;
    let mut settings = vec![
        ("loss".to_string(), m.loss.to_string()),
        ("regularizer".to_string(), t.reg.to_string()),
        ("lambda".to_string(), num(t.lambda)),
        ("C".to_string(), num(t.c)),
        ("eta0".to_string(), format!("{}", t.eta0)),
        ("schedule".to_string(), t.schedule.to_string()),
        ("epochs".to_string(), t.epochs.to_string()),
        ("seed".to_string(), t.seed.to_string()),
        ("average".to_string(), yes_no(t.averaging)),
        ("bias".to_string(), yes_no(t.bias)),
        ("standardize".to_string(), yes_no(m.standardizer.is_some())),
    ];
    if let Some(r) = t.projection_radius {
        settings.push(("projection_radius".to_string(), num(r)));
    }
    let zero = m.weights.iter().filter(|w| **w == 0.0).count();
    // Explicit groups keep weights over their feature maps, not support points.
    let explicit: usize = m.primal.iter().map(|w| w.len() / m.n_outputs.max(1)).sum();
    let points = match (m.support.rows, explicit) {
        (0, e) if e > 0 => format!("{e} explicit features"),
        (s, 0) => format!("{s} support points"),
        (s, e) => format!("{s} support points and {e} explicit features"),
    };
    Summary {
        learner: "online proximal MKL (Martins et al. 2011, Alg. 1)".into(),
        task: TaskName::of(m.task).into(),
        classes: m.classes.clone(),
        n_features: m.feature_names.len(),
        settings,
        headline: format!(
            "trained on {} rows: {} kernels ({zero} with weight 0), {points}, objective {}",
            t.n_train,
            m.kernels.len(),
            t.final_objective
                .map_or("-".to_string(), |o| format!("{o:.6}"))
        ),
        columns: vec!["weight".into(), "norm".into()],
        ranked: false,
        kernels: m
            .kernels
            .iter()
            .zip(&m.weights)
            .zip(&m.group_norms)
            .map(|((k, w), n)| KernelRow {
                name: k.name.clone(),
                values: vec![*w, *n],
            })
            .collect(),
        notes: Vec::new(),
    }
}

/// Task names of vector task kinds.
struct TaskName;

impl TaskName {
    fn of(t: TaskKind) -> &'static str {
        match t {
            TaskKind::Binary => "binary",
            TaskKind::Multiclass => "multiclass",
            TaskKind::Regression => "regression",
        }
    }
}

fn sequence_summary(m: &SequenceModel) -> Summary {
    let t = &m.training;
    let mut settings = vec![
        ("loss".to_string(), m.loss.to_string()),
        ("regularizer".to_string(), t.reg.to_string()),
        ("lambda".to_string(), num(t.lambda)),
        ("C".to_string(), num(t.c)),
        ("eta0".to_string(), format!("{}", t.eta0)),
        ("schedule".to_string(), t.schedule.to_string()),
        ("epochs".to_string(), t.epochs.to_string()),
        ("seed".to_string(), t.seed.to_string()),
        ("average".to_string(), yes_no(t.averaging)),
        ("learn_beta0".to_string(), yes_no(t.learn_beta0)),
    ];
    if let Some(r) = t.projection_radius {
        settings.push(("projection_radius".to_string(), num(r)));
    }
    let learner = match &t.wrapper {
        None => "SPOM on sequences (Martins et al. 2011, Alg. 3)".to_string(),
        Some(w) => {
            settings.push(("wrapper".to_string(), w.method.name().to_string()));
            settings.push((
                "inner_epochs".to_string(),
                format!("{} then {} per call", w.first_epochs, w.warm_epochs),
            ));
            settings.push((
                "outer_iterations".to_string(),
                w.outer_iterations.to_string(),
            ));
            settings.push(("inner_solves".to_string(), w.inner_solves.to_string()));
            settings.push(("status".to_string(), w.status.clone()));
            format!(
                "{} around structured PEGASOS on sequences (wrapper MKL)",
                match w.method {
                    crate::solver::wrapper::WrapperMethod::SimpleMkl =>
                        "SimpleMKL (Rakotomamonjy et al. 2008)",
                    crate::solver::wrapper::WrapperMethod::GaussSeidel =>
                        "Gauss-Seidel (Kloft et al. 2011)",
                }
            )
        }
    };
    Summary {
        learner,
        task: "sequence".into(),
        classes: m.labels.clone(),
        n_features: m.n_features,
        settings,
        headline: format!(
            "trained on {} sequences ({} positions): {} kernel groups, {} support positions, \
             objective {}",
            t.n_train_sequences,
            t.n_train_positions,
            m.groups.len(),
            m.support.rows,
            t.final_objective
                .map_or("-".to_string(), |o| format!("{o:.6}"))
        ),
        columns: vec!["weight".into(), "norm".into()],
        ranked: false,
        kernels: m
            .weight_names
            .iter()
            .zip(&m.weights)
            .zip(&m.group_norms)
            .map(|((name, w), n)| KernelRow {
                name: name.clone(),
                values: vec![*w, *n],
            })
            .collect(),
        notes: Vec::new(),
    }
}

fn batch_base<L>(m: &BatchModel<L>, learner: &str) -> Summary {
    Summary {
        learner: learner.into(),
        task: TaskName::of(m.task).into(),
        classes: m.classes.clone(),
        n_features: m.feature_names.len(),
        settings: Vec::new(),
        headline: String::new(),
        columns: Vec::new(),
        ranked: false,
        kernels: Vec::new(),
        notes: Vec::new(),
    }
}

/// Why a GOMP path stopped, in words.
pub(crate) fn gomp_stop_text(stop: GompStop, max_kernels: Option<usize>, eps: f64) -> String {
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

fn gomp_summary(m: &BatchModel<GompModel>) -> Summary {
    let g = &m.learner;
    let mut s = batch_base(m, "MKL-GOMP (Sindhwani & Lozano 2012)");
    s.settings = vec![
        ("lambda".into(), num(g.lambda)),
        ("eps".into(), format!("{:e}", g.eps)),
        ("outputs".into(), g.n_outputs().to_string()),
        ("dictionary".into(), g.dictionary_size.to_string()),
        ("standardize".into(), yes_no(g.standardizer.is_some())),
    ];
    s.headline = format!(
        "MKL-GOMP: lambda {}, {} of {} kernels chosen ({}), training residual {:.6}",
        num(g.lambda),
        g.n_kernels(),
        g.dictionary_size,
        gomp_stop_text(g.stop, None, g.eps),
        g.path.last().map_or(f64::NAN, |p| p.residual)
    );
    s.columns = vec!["improvement".into()];
    s.ranked = true;
    s.kernels = value_rows(g.kernels());
    s
}

fn lp_summary(m: &BatchModel<LpMklModel>) -> Summary {
    let l = &m.learner;
    let mut s = batch_base(m, "lp-norm MKL, squared loss (Kloft et al. 2011)");
    s.settings = vec![
        ("p".into(), l.p.clone()),
        ("lambda".into(), num(l.lambda)),
        ("outputs".into(), l.n_outputs().to_string()),
        ("standardize".into(), yes_no(l.standardizer.is_some())),
    ];
    s.headline = format!(
        "lp-MKL: p {}, lambda {}, {} kernels ({} with weight 0), objective {:.6} after {} \
         steps{}",
        l.p,
        num(l.lambda),
        l.kernels.len(),
        l.theta.iter().filter(|t| **t == 0.0).count(),
        l.objective.last().copied().unwrap_or(f64::NAN),
        l.objective.len(),
        if l.converged { "" } else { " (not converged)" }
    );
    s.columns = vec!["theta".into()];
    let mut rows: Vec<KernelRow> = value_rows(l.kernels());
    rows.sort_by(|a, b| b.values[0].total_cmp(&a.values[0]));
    s.kernels = rows;
    s
}

/// The wrappers' short name and description.
fn wrapper_names(method: WrapperMethod) -> (&'static str, &'static str) {
    match method {
        WrapperMethod::SimpleMkl => (
            "SimpleMKL",
            "SimpleMKL: reduced gradient over SVMs (Rakotomamonjy et al. 2008)",
        ),
        WrapperMethod::GaussSeidel => (
            "Gauss-Seidel MKL",
            "Gauss-Seidel MKL: alternating SVMs and closed-form weights (Kloft et al. 2011)",
        ),
    }
}

/// A wrapper's headline: C, kernels (with weight 0), the last `J(d)` and the iterations,
/// the relative MKL and SVM duality gaps, convergence.
fn wrapper_headline(
    name: &str,
    c: f64,
    weights: &[f64],
    objective: &[f64],
    (mkl_gap, svm_gap): (f64, f64),
    converged: bool,
) -> String {
    format!(
        "{name}: C {}, {} kernels ({} with weight 0), J {:.6} after {} iterations, relative \
         MKL gap {:.2e}, SVM duality gap {:.2e}{}",
        num(c),
        weights.len(),
        weights.iter().filter(|t| **t == 0.0).count(),
        objective.last().copied().unwrap_or(f64::NAN),
        objective.len().saturating_sub(1),
        mkl_gap,
        svm_gap,
        if converged { "" } else { " (not converged)" }
    )
}

fn wrapper_summary(m: &BatchModel<WrapperModel>) -> Summary {
    let l = &m.learner;
    let (name, what) = wrapper_names(l.method);
    let mut s = batch_base(m, what);
    s.settings = vec![
        ("C".into(), num(l.c)),
        ("outputs".into(), l.n_outputs().to_string()),
        ("standardize".into(), yes_no(l.standardizer.is_some())),
    ];
    if let Some(e) = l.epsilon {
        s.settings.push(("epsilon".into(), num(e)));
    }
    s.headline = wrapper_headline(
        name,
        l.c,
        &l.weights,
        &l.objective,
        (l.mkl_gap, l.svm_gap),
        l.converged,
    );
    s.columns = vec!["weight".into()];
    s.kernels = value_rows(l.kernel_weights());
    s
}

fn precomputed_wrapper_summary(m: &BatchModel<PrecomputedWrapperModel>) -> Summary {
    let l = &m.learner;
    let (name, what) = wrapper_names(l.method);
    let mut s = batch_base(m, &format!("{what}, on precomputed kernels"));
    s.settings = vec![
        ("C".into(), num(l.c)),
        ("outputs".into(), l.n_outputs().to_string()),
        ("training points".into(), l.n_train.to_string()),
    ];
    if let Some(e) = l.epsilon {
        s.settings.push(("epsilon".into(), num(e)));
    }
    s.headline = wrapper_headline(
        &format!("{name} on precomputed kernels"),
        l.c,
        &l.weights,
        &l.objective,
        (l.mkl_gap, l.svm_gap),
        l.converged,
    );
    s.columns = vec!["weight".into()];
    s.kernels = value_rows(l.kernels());
    s
}

/// Kernel rows of one value each (a weight), in the order given.
fn value_rows(pairs: Vec<(String, f64)>) -> Vec<KernelRow> {
    pairs
        .into_iter()
        .map(|(name, v)| KernelRow {
            name,
            values: vec![v],
        })
        .collect()
}

fn precomputed_summary(m: &BatchModel<PrecomputedLpModel>) -> Summary {
    let l = &m.learner;
    let s_ = &l.solution;
    let mut s = batch_base(
        m,
        "lp-norm MKL on precomputed kernels, squared loss (Kloft et al. 2011)",
    );
    s.settings = vec![
        ("p".into(), p_label(s_.p)),
        ("lambda".into(), num(s_.lambda)),
        ("outputs".into(), l.n_outputs().to_string()),
        ("training points".into(), l.n_train.to_string()),
    ];
    s.headline = format!(
        "lp-MKL on precomputed kernels: p {}, lambda {}, {} kernels ({} with weight 0), \
         objective {:.6} after {} steps{}",
        p_label(s_.p),
        num(s_.lambda),
        l.kernel_names.len(),
        s_.theta.iter().filter(|t| **t == 0.0).count(),
        s_.objective.last().copied().unwrap_or(f64::NAN),
        s_.iterations,
        if s_.converged { "" } else { " (not converged)" }
    );
    s.columns = vec!["theta".into()];
    s.kernels = value_rows(l.kernels());
    s
}

fn poly_summary(m: &BatchModel<PolyMklModel>) -> Summary {
    let p = &m.learner;
    let ucd = p.sampling == "ucd";
    let lp = p.sampling == "lp-mkl";
    let mut s = batch_base(
        m,
        if ucd {
            "polynomial product-kernel MKL by uniform coordinate descent (Afkanpour et al. 2013)"
        } else if lp {
            "polynomial product-kernel MKL by lp-MKL (p = 2) over the explicit product kernels \
             (the objective of Afkanpour et al. 2013)"
        } else {
            "polynomial product-kernel MKL by randomized mirror descent (Afkanpour et al. 2013)"
        },
    );
    let count = if p.kernel_count < 9.0e15 {
        format!("{}", p.kernel_count as u64)
    } else {
        format!("{:e}", p.kernel_count)
    };
    s.settings = vec![
        ("sampling".into(), p.sampling.clone()),
        ("degree".into(), p.degree.to_string()),
        ("lambda".into(), num(p.lambda)),
        ("eta0".into(), format!("{}", p.eta0)),
        ("iterations".into(), p.iterations.to_string()),
    ];
    if !p.rho2.is_empty() {
        let r: Vec<String> = p.rho2.iter().map(|v| v.to_string()).collect();
        s.settings.push(("rho2".into(), r.join(",")));
    }
    s.headline = if lp {
        format!(
            "lp-MKL (p = 2): degree {}, lambda {}, {count} product kernels, {} alternating \
             steps, objective {:.6}",
            p.degree,
            num(p.lambda),
            p.iterations,
            p.objective,
        )
    } else {
        format!(
            "{}: degree {}, lambda {}, {count} product kernels, {} iterations (eta0 {}), \
             objective {:.6}",
            if ucd { "UCD" } else { "mirror descent" },
            p.degree,
            num(p.lambda),
            p.iterations,
            p.eta0,
            p.objective,
        )
    };
    s.notes
        .push(format!("kernels with their own weight: {}", p.terms.len()));
    s.columns = vec!["weight".into()];
    s.kernels = value_rows(p.kernels());
    if p.base_names.first().is_some_and(|n| n.starts_with('x')) {
        let shown = summary::SHOWN_KERNELS;
        let legend: Vec<String> = m
            .feature_names
            .iter()
            .take(shown)
            .enumerate()
            .map(|(i, f)| format!("x{} = {f}", i + 1))
            .collect();
        let more = if m.feature_names.len() > shown {
            format!(", ... {} more", m.feature_names.len() - shown)
        } else {
            String::new()
        };
        s.notes.push(format!("inputs: {}{more}", legend.join(", ")));
    }
    s
}
