//! What a learner trains on ([`TrainingData`]) and the in-memory door's dispatch: each kind
//! of data to its learner family's fit (`spec::Family`), the template tagger's and the
//! parser's pipelines around the learner their family gives.

use super::fitted::Fitted;
use super::spec::{CheckedSpec, ParserSettings, Task};
use crate::data::{Dataset, MatrixRef, SequenceData, TableRef, Targets};
use crate::error::{Error, Result};
use crate::model::Model;
use crate::pipeline::treebank::parser::{fit_parser, ParserSpec};
use crate::run::{Observer, StepUnit};
use crate::task::parse::ParseData;
use crate::task::tagging::TagData;
use crate::task::TaskKind;

/// What a learner trains on.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum TrainingData<'a> {
    /// Rows of a table (binary, multiclass, regression).
    Table(TableRef<'a>),
    /// Sequences with a label per position.
    Sequences(&'a SequenceData),
    /// Sentences with their trees, the templates, and sentences that choose the epoch.
    Treebank(&'a ParseData),
    /// Sentences in the column format with CRF++ templates (a template tagger).
    Tagged(&'a TagData),
    /// Kernel matrices the caller computed on the training rows, with their targets.
    Kernels(KernelData<'a>),
}

/// Training kernel matrices (`n x n` each, `n` the targets' rows; finite, symmetric and
/// positive semidefinite) and the targets of a task (binary, multiclass, regression).
#[derive(Debug, Clone, Copy)]
pub struct KernelData<'a> {
    pub kernels: &'a [MatrixRef<'a>],
    pub targets: &'a Targets,
    pub task: TaskKind,
}

impl<'a> From<KernelData<'a>> for TrainingData<'a> {
    fn from(d: KernelData<'a>) -> Self {
        TrainingData::Kernels(d)
    }
}

impl<'a> From<&'a TagData> for TrainingData<'a> {
    fn from(d: &'a TagData) -> Self {
        TrainingData::Tagged(d)
    }
}

impl<'a> From<&'a ParseData> for TrainingData<'a> {
    fn from(d: &'a ParseData) -> Self {
        TrainingData::Treebank(d)
    }
}

impl<'a> From<TableRef<'a>> for TrainingData<'a> {
    fn from(t: TableRef<'a>) -> Self {
        TrainingData::Table(t)
    }
}

impl<'a> From<&'a Dataset> for TrainingData<'a> {
    fn from(d: &'a Dataset) -> Self {
        TrainingData::Table(d.view())
    }
}

impl<'a> From<&'a SequenceData> for TrainingData<'a> {
    fn from(d: &'a SequenceData) -> Self {
        TrainingData::Sequences(d)
    }
}

/// [`fit`](super::fit()) from a spec already checked: the arm of each learner and task.
pub(crate) fn fit_checked(
    data: TrainingData<'_>,
    validation: Option<TableRef<'_>>,
    spec: &CheckedSpec,
    observer: &dyn Observer,
) -> Result<Fitted> {
    let family = spec.learner.family();
    let learner = spec.learner.kind();
    if validation.is_some() && !family.takes_validation() {
        return Err(Error::unsupported(format!(
            "validation rows choose MKL-GOMP's path length; the {} learner does not take them",
            spec.learner.kind()
        )));
    }
    match (data, spec.task) {
        (TrainingData::Kernels(_), _) => Err(Error::data(
            "kernel matrices train with a precomputed-kernel spec (FitRequest::precomputed)",
        )),
        (TrainingData::Sequences(seq), Task::Sequence) => {
            family.fit_sequences(learner, seq, spec, observer)
        }
        (TrainingData::Tagged(d), Task::Sequence) => Ok(fit_tagging(d, spec, observer)?.fitted),
        (TrainingData::Tagged(_), t) => Err(Error::data(format!(
            "tagged sentences given for a {t} task (use the sequence task)"
        ))),
        (TrainingData::Treebank(tb), Task::Parsing) => Ok(fit_parsing(tb, spec, observer)?.fitted),
        (TrainingData::Treebank(_), t) => Err(Error::data(format!(
            "sentences with trees given for a {t} task (use the parsing task)"
        ))),
        (_, Task::Parsing) => Err(Error::data(
            "the parsing task needs sentences with trees (CoNLL-U)",
        )),
        (TrainingData::Sequences(_), t) => Err(Error::data(format!(
            "sequences given for a {t} task (use the sequence task)"
        ))),
        (TrainingData::Table(_), Task::Sequence) => Err(Error::data(
            "a table of rows given for the sequence task (sequences are needed)",
        )),
        (TrainingData::Table(table), task) => {
            let kind = task
                .vector_kind()
                .ok_or_else(|| Error::data("a vector task needs a table"))?;
            if table.is_empty() {
                return Err(Error::data("the training set has no rows"));
            }
            if table.weights().is_some() && !family.takes_weights() {
                return Err(Error::unsupported(format!(
                    "the {learner} learner does not take row weights (sample_weight, \
                     class_weight); the learners that do: {WEIGHTED_LEARNERS}"
                )));
            }
            family.fit_table(learner, table, kind, validation, spec, observer)
        }
    }
}

/// The learners whose fit on a table honours row weights.
pub(crate) const WEIGHTED_LEARNERS: &str =
    "lp-mkl, online, simplemkl and gauss-seidel (and the built-in selection)";

/// A structured fit with what its development sentences said of it.
pub(crate) struct ScoredFit {
    pub fitted: Fitted,
    /// The development score (tagging: accuracy, or chunk F1 for a chunk scheme; parsing:
    /// UAS; percent) of the model returned; `None` without development sentences.
    pub dev_score: Option<f64>,
    /// The online learner: the epoch kept (0 for the cutting plane).
    pub best_epoch: usize,
}

/// The development score of the model kept: the epoch's (online, `best_epoch` from 1) or
/// the only one (the cutting plane, `best_epoch` 0).
fn kept_score(scores: &[f64], best_epoch: usize) -> Option<f64> {
    scores.get(best_epoch.saturating_sub(1)).copied()
}

/// A template tagger (mao-tsang Sec. 3 / martins2011 Sec. 4.1 with templates as groups):
/// SPOM (averaged iterate of the epoch that tags the development sentences best) or
/// multi-template learning by the cutting plane.
pub(crate) fn fit_tagging(
    data: &TagData,
    spec: &CheckedSpec,
    observer: &dyn Observer,
) -> Result<ScoredFit> {
    use crate::pipeline::columns::tagging::{fit_tagger, TaggerSpec};
    if data.train.is_empty() {
        return Err(Error::data("the training set has no sentences"));
    }
    let n = data.train.len();
    let (learner, lambda) = spec.learner.family().tagger(spec.learner.kind(), spec, n)?;
    let tagger = TaggerSpec {
        learner,
        min_count: data.min_count,
        track_objective: false,
        average_from: 0,
        calibrate: None,
        memory: spec.memory,
    };
    let dev = (!data.dev.is_empty()).then_some(data.dev.as_slice());
    let fit = fit_tagger(&data.train, dev, data.templates.clone(), &tagger, observer)?;
    Ok(scored_tagging(fit, data.min_count, spec, lambda))
}

/// A tagger's fit with its notes (the times, the cuts or the epoch kept, the development
/// score, the templates `min_count` emptied).
pub(crate) fn scored_tagging(
    fit: crate::pipeline::columns::tagging::TaggerFit,
    min_count: usize,
    spec: &CheckedSpec,
    lambda: f64,
) -> ScoredFit {
    let mut notes = vec![format!(
        "features indexed in {:.2} s, trained in {:.2} s{}",
        fit.index_seconds,
        fit.train_seconds,
        match (fit.best_epoch, fit.dev_scores.is_empty()) {
            // The batch CRF: its iterations and why it stopped (the model's description).
            (0, dev) if fit.run.unit == StepUnit::Iteration && fit.cuts == 0 => format!(
                "; {}{}",
                fit.model.learner,
                if dev {
                    String::new()
                } else {
                    format!("; development score {:.2}", fit.dev_scores[0])
                }
            ),
            (0, true) => format!(
                "; {} cuts ({:.2} s decoding, {:.2} s in the working-set problem)",
                fit.cuts, fit.decode_seconds, fit.master_seconds
            ),
            (0, false) => format!(
                "; {} cuts ({:.2} s decoding, {:.2} s in the working-set problem); \
                 development score {:.2}",
                fit.cuts, fit.decode_seconds, fit.master_seconds, fit.dev_scores[0]
            ),
            (e, true) => format!("; epoch {e} kept"),
            (e, false) => format!(
                "; epoch {e} of {} kept (development score {:.2})",
                fit.run.steps,
                fit.dev_scores[e - 1]
            ),
        }
    )];
    if !spec.standardize {
        notes.push("standardize = false has no effect on a template tagger".into());
    }
    let empty = fit.model.featurizer.empty_templates();
    if min_count > 1 && !empty.is_empty() {
        let names: Vec<&str> = empty.iter().map(|t| t.text.as_str()).collect();
        notes.push(format!(
            "warning: min_count {} kept no expansion of {} of the {} templates with \
             observations ({}): none was seen {} times in training, so they add nothing to \
             the model",
            min_count,
            empty.len(),
            fit.model.featurizer.features_per_template().len()
                + fit.model.featurizer.templates.bigram_macros().count(),
            names.join(", "),
            min_count
        ));
    }
    let dev_score = kept_score(&fit.dev_scores, fit.best_epoch);
    ScoredFit {
        fitted: Fitted {
            notes,
            ..Fitted::new(Model::Tagger(fit.model), fit.run, lambda)
        },
        dev_score,
        best_epoch: fit.best_epoch,
    }
}

/// The parser (martins2011 Sec. 4.2): SPOM over the template groups with the spec's
/// regularizer, structured hinge or CRF loss (`--loss crf`: single-root arc marginals),
/// Chu-Liu-Edmonds (or Eisner) decoding, the averaged iterate
/// of the epoch that parses the development sentences best (the last epoch without them),
/// and a relation labeler when the sentences have relations.
pub(crate) fn fit_parsing(
    data: &ParseData,
    spec: &CheckedSpec,
    observer: &dyn Observer,
) -> Result<ScoredFit> {
    if data.train.is_empty() {
        return Err(Error::data("the training set has no sentences"));
    }
    let n = data.train.len();
    let ParserSettings {
        params,
        cutting_plane,
        loss,
        lambda,
    } = spec.learner.family().parser(spec.learner.kind(), spec, n)?;
    let parser = ParserSpec {
        support: data.support,
        trees: data.trees,
        params,
        loss,
        labels: true,
        cutting_plane,
    };
    let dev = (!data.dev.is_empty()).then_some(data.dev.as_slice());
    let fit = fit_parser(&data.train, dev, data.templates.clone(), &parser, observer)?;
    let dev_note =
        |uas: Option<&f64>| uas.map_or(String::new(), |u| format!(" (development UAS {u:.2})"));
    let mut notes = vec![if fit.best_epoch == 0 {
        format!(
            "features indexed in {:.2} s; {} cuts ({:.2} s decoding, {:.2} s in the working-set \
             problem){}",
            fit.index_seconds,
            fit.run.steps,
            fit.decode_seconds,
            fit.master_seconds,
            dev_note(fit.dev_uas.first())
        )
    } else {
        format!(
            "features indexed in {:.2} s; epoch {} of {} kept{}",
            fit.index_seconds,
            fit.best_epoch,
            fit.run.steps,
            dev_note(fit.dev_uas.get(fit.best_epoch - 1))
        )
    }];
    if !spec.standardize {
        notes.push("standardize = false has no effect on a parser".into());
    }
    let dev_score = kept_score(&fit.dev_uas, fit.best_epoch);
    Ok(ScoredFit {
        fitted: Fitted {
            notes,
            ..Fitted::new(Model::Parser(fit.model), fit.run, lambda)
        },
        dev_score,
        best_epoch: fit.best_epoch,
    })
}
