//! A tagger trained by the cutting plane over parts of its sentences held apart (other
//! processes or machines; the Python package's `multikernel.dask.fit_dask`), giving the model
//! of one process on all of them:
//!
//! 1. feature dicts only: each part's keys ([`PartKeys::of`]), merged in the parts' order
//!    ([`PartKeys::merge`]: keys in order of first appearance, as over all sentences);
//! 2. each part's sentences in the tagger's columns ([`TagPart::new`]) and their expansion
//!    counts ([`TagPart::counts`]), merged in any order ([`TagCounts::merge`]) into the
//!    featurizer ([`TagCounts::part_featurizer`], the same as one process builds);
//! 3. each part compiled against it ([`TagPart::compile`]) and kept where it is;
//! 4. the loop ([`fit_parts`]) runs the master problem here and asks for the separation at
//!    each point: every part's unscaled sums ([`CompiledPart::separate_at`], [`PartSums`](crate::estimator::parts::PartSums)),
//!    added and scaled once. With CRF++ templates or string features (binary features,
//!    integer sums) the cuts are bit for bit those of one process, so is the model.
//!
//! The loop, the parts' sums and the replicas of the point where the parts are: the
//! parent module's `parts` ([`crate::estimator::parts`]), shared with the parser's parts.
//! The other learners over the same compiled parts: the online learner by iterative
//! parameter mixing ([`fit_passes`]) and the batch CRF by L-BFGS, the parts' losses and
//! gradients added at each point ([`fit_lbfgs_parts`]).

use super::{check_labels, column_sentences, Sentences};
use crate::data::columns::ColumnSentence;
use crate::error::{Error, Result};
use crate::estimator::fit::scored_tagging;
use crate::estimator::fitted::Fitted;
use crate::estimator::parts::batch::{add_parts, EvaluateParts};
use crate::estimator::parts::online::{run_passes, OnlinePlan, PassParts};
use crate::estimator::parts::{CompiledPart, PartLayout, PartTask, PartsSeparator, SeparateParts};
use crate::estimator::spec::{CheckedSpec, LearnerSpec, Task};
use crate::pipeline::columns::tagging::{
    fit_batch_crf, fit_cutting_plane, spom_description, TaggerFit, TaggerLearner, TaggerModel,
};
use crate::run::Observer;
use crate::solver::cutting_plane::{self, Examples};
use crate::task::tagging::{FeatureKeys, TagFeaturizer, TaggingTask, TemplateFile};
use std::path::Path;

pub use crate::task::tagging::TagCounts;

/// The keys of a part's feature-dict tokens, in order of first appearance.
#[derive(Debug, Clone, PartialEq)]
pub struct PartKeys(FeatureKeys);

impl PartKeys {
    /// The keys of sentences of feature dicts (none at all allowed in a part); an error for
    /// columns, or a value that is not finite.
    pub fn of(x: Sentences<'_>) -> Result<PartKeys> {
        match x {
            Sentences::Dicts(d) => Ok(PartKeys(FeatureKeys::collect(d)?)),
            Sentences::Columns(_) => Err(Error::unsupported(
                "tokens given as columns read templates, not feature keys",
            )),
        }
    }

    /// The keys of this part's sentences followed by `later`'s.
    pub fn merge(self, later: PartKeys) -> PartKeys {
        PartKeys(self.0.merge(later.0))
    }

    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        serde_json::to_vec(&self.0).map_err(|e| Error::data(format!("feature keys: {e}")))
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<PartKeys> {
        let keys: FeatureKeys =
            serde_json::from_slice(bytes).map_err(|e| Error::data(format!("feature keys: {e}")))?;
        if keys.names.len() != keys.real.len() {
            return Err(Error::data(format!(
                "feature keys: {} names and {} kinds",
                keys.names.len(),
                keys.real.len()
            )));
        }
        let distinct: std::collections::HashSet<&String> = keys.names.iter().collect();
        if distinct.len() != keys.names.len() {
            return Err(Error::data("feature keys: a key is named twice"));
        }
        Ok(PartKeys(keys))
    }
}

/// How a part's tokens become the tagger's columns: CRF++ template text (tokens given as
/// columns) and a name for it in errors, or the keys of all parts (feature dicts).
#[derive(Debug, Clone, Copy)]
pub enum PartFormat<'a> {
    Templates { text: &'a str, origin: &'a str },
    Keys(&'a PartKeys),
}

/// A part of the training sentences in the tagger's columns (labels last).
#[derive(Debug, Clone)]
pub struct TagPart {
    train: Vec<ColumnSentence>,
    templates: TemplateFile,
}

impl TagPart {
    /// The part's sentences `x` with labels `y`; errors as `training_data`'s (sentence
    /// numbers count within the part).
    pub fn new(x: Sentences<'_>, y: &[Vec<String>], format: PartFormat<'_>) -> Result<TagPart> {
        check_labels(x, y)?;
        let (train, templates) = match (x, format) {
            (Sentences::Dicts(d), PartFormat::Keys(keys)) => {
                let keys = keys.0.clone().nonempty()?;
                (keys.columns(d, Some(y))?, keys.templates())
            }
            (Sentences::Columns(c), PartFormat::Templates { text, origin }) => (
                column_sentences(c, Some(y), None)?,
                TemplateFile::parse(text.as_bytes(), Path::new(origin))?,
            ),
            (Sentences::Dicts(_), PartFormat::Templates { .. }) => {
                return Err(Error::unsupported(
                    "templates read columns; tokens given as feature dicts take the merged \
                     feature keys",
                ))
            }
            (Sentences::Columns(_), PartFormat::Keys(_)) => {
                return Err(Error::unsupported(
                    "tokens given as columns need templates (CRF++ template text)",
                ))
            }
        };
        if let Some(i) = train.iter().position(ColumnSentence::is_empty) {
            return Err(Error::data(format!("sentence {i} has no tokens")));
        }
        Ok(TagPart { train, templates })
    }

    /// The part's expansion counts, to merge with the other parts'.
    pub fn counts(&self) -> Result<TagCounts> {
        TagCounts::of(self.templates.clone(), &self.train)
    }

    /// The attributes of the part's sentences that `featurizer` has features of, each with
    /// its feature's index, in order of first appearance (`SequenceTagger::attributes`).
    pub fn attributes(&self, featurizer: &PartFeaturizer) -> Vec<(String, usize)> {
        featurizer.0.attributes(&self.train)
    }

    /// The part's sentences featurized by the featurizer of all parts.
    pub fn compile(&self, featurizer: &PartFeaturizer) -> Result<CompiledPart> {
        if featurizer.0.templates != self.templates {
            return Err(Error::data(
                "the featurizer was built under other templates than this part's",
            ));
        }
        let task = TaggingTask::new(&featurizer.0, &self.train)?;
        Ok(CompiledPart::new(PartTask::Tagging(task), featurizer.dim()))
    }
}

impl TagCounts {
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        serde_json::to_vec(self).map_err(|e| Error::data(format!("expansion counts: {e}")))
    }

    /// Counts from [`TagCounts::to_bytes`], checked.
    pub fn from_bytes(bytes: &[u8]) -> Result<TagCounts> {
        let c: TagCounts = serde_json::from_slice(bytes)
            .map_err(|e| Error::data(format!("expansion counts: {e}")))?;
        c.validate()
            .map_err(|e| Error::data(format!("expansion counts: {e}")))?;
        Ok(c)
    }
}

/// The featurizer of all the parts (their labels and kept expansions).
#[derive(Debug, Clone, PartialEq)]
pub struct PartFeaturizer(TagFeaturizer);

impl From<TagFeaturizer> for PartFeaturizer {
    fn from(f: TagFeaturizer) -> Self {
        PartFeaturizer(f)
    }
}

impl TagCounts {
    /// The featurizer of the counted sentences (expansions seen at least `min_count`
    /// times), as one process builds it.
    pub fn part_featurizer(self, min_count: usize) -> Result<PartFeaturizer> {
        Ok(PartFeaturizer(self.featurizer(min_count)?))
    }
}

impl PartFeaturizer {
    /// The number of weights of a model over these features.
    pub fn dim(&self) -> usize {
        self.0.layout().total()
    }

    /// The model's weights, one group per template (what a
    /// [`crate::estimator::parts::PointReplica`] rebuilds).
    pub fn layout(&self) -> PartLayout {
        PartLayout(self.0.layout())
    }

    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        serde_json::to_vec(&self.0).map_err(|e| Error::data(format!("featurizer: {e}")))
    }

    /// A featurizer from [`PartFeaturizer::to_bytes`], checked.
    pub fn from_bytes(bytes: &[u8]) -> Result<PartFeaturizer> {
        let f: TagFeaturizer =
            serde_json::from_slice(bytes).map_err(|e| Error::data(format!("featurizer: {e}")))?;
        f.validate()
            .map_err(|e| Error::data(format!("featurizer: {e}")))?;
        Ok(PartFeaturizer(f))
    }
}

/// The checked sequence spec of a fit over parts of `n` sentences, its tagger's learner and
/// lambda; an error for another task or no sentences.
fn parts_learner(spec: &LearnerSpec, n: usize) -> Result<(CheckedSpec, TaggerLearner, f64)> {
    let spec = spec.check()?;
    if spec.task != Task::Sequence {
        return Err(Error::unsupported(format!(
            "a tagger's parts train a sequence spec, not a {} one",
            spec.task
        )));
    }
    if n == 0 {
        return Err(Error::data("the training set has no sentences"));
    }
    let (learner, lambda) = spec
        .learner
        .family()
        .tagger(spec.learner.kind(), &spec, n)?;
    Ok((spec, learner, lambda))
}

/// Multi-template learning (the `mtl` learner of `spec`, a sequence spec) over `n`
/// sentences held in parts: `featurizer` is the parts' merged featurizer, `separate` gives
/// every part's [`PartSums`](crate::estimator::parts::PartSums) at a
/// [`Point`](crate::estimator::parts::Point) (`None`: stop). The model is the one
/// [`fit`](crate::estimator::fit()) trains on all the sentences in one process.
pub fn fit_parts<'f>(
    featurizer: PartFeaturizer,
    n: usize,
    spec: &LearnerSpec,
    separate: &'f mut SeparateParts<'f>,
    observer: &dyn Observer,
) -> Result<Fitted> {
    let (spec, learner, lambda) = parts_learner(spec, n)?;
    let TaggerLearner::CuttingPlane { params, q } = learner else {
        return Err(Error::unsupported(format!(
            "the {} learner trains on all the sentences in one process; over parts, the \
             cutting plane (learner mtl) does",
            spec.learner.kind()
        )));
    };
    params.validate()?;
    let min_count = featurizer.0.min_count;
    let examples = Examples {
        n,
        groups: featurizer.0.groups(),
    };
    let separation_step = params
        .separation_step
        .unwrap_or(cutting_plane::SEPARATION_STEP);
    let mut separator =
        PartsSeparator::new(separate, n, examples.layout().total(), separation_step);
    let fit = fit_cutting_plane(
        featurizer.0,
        &examples,
        (&params, q),
        &mut separator,
        observer,
    )?;
    Ok(scored_tagging(fit, min_count, &spec, lambda).fitted)
}

/// The batch CRF (the `lbfgs` learner of `spec`, a sequence spec) over `n` sentences held in
/// parts ([`crate::estimator::parts::batch`]): `featurizer` is the parts' merged featurizer,
/// `evaluate` gives every part's
/// [`PartGradient`](crate::estimator::parts::batch::PartGradient) at the weights L-BFGS
/// evaluates (`None`: stop), added in the parts' order. With one part the model is the one
/// [`fit`](crate::estimator::fit()) trains in one process, bit for bit; with several, the
/// same up to the rounding of the sums' grouping.
pub fn fit_lbfgs_parts<'f>(
    featurizer: PartFeaturizer,
    n: usize,
    spec: &LearnerSpec,
    evaluate: &'f mut EvaluateParts<'f>,
    observer: &dyn Observer,
) -> Result<Fitted> {
    let (spec, learner, lambda) = parts_learner(spec, n)?;
    let TaggerLearner::Lbfgs { params } = learner else {
        return Err(Error::unsupported(format!(
            "fit_lbfgs_parts trains the batch CRF (learner lbfgs), not {}",
            spec.learner.kind()
        )));
    };
    params.validate()?;
    let min_count = featurizer.0.min_count;
    let dim = featurizer.dim();
    let mut eval = |w: &[f64], g: &mut [f64]| -> Result<f64> {
        let parts = evaluate(w)?.ok_or_else(|| Error::data("the evaluation stopped"))?;
        add_parts(&parts, n, params.lambda, w, g)
    };
    let fit = fit_batch_crf(featurizer.0, dim, &mut eval, &params, observer)?;
    Ok(scored_tagging(fit, min_count, &spec, lambda).fitted)
}

/// The online learner (`online` of `spec`, a sequence spec) over sentences held in parts,
/// by iterative parameter mixing ([`crate::estimator::parts::online`]): `plan` is
/// [`OnlinePlan::new`] of `spec` with the parts' `L(0)`, `pass` runs each epoch's passes.
/// The averaged weights of the last epoch are kept, as one process keeps them without
/// development sentences; with one part the model is the one
/// [`fit`](crate::estimator::fit()) trains in one process.
pub fn fit_passes<'f>(
    featurizer: PartFeaturizer,
    spec: &LearnerSpec,
    plan: &OnlinePlan,
    pass: &'f mut PassParts<'f>,
    observer: &dyn Observer,
) -> Result<Fitted> {
    let checked = spec.check()?;
    plan.check_spec(spec, Task::Sequence)?;
    let started = std::time::Instant::now();
    let dim = featurizer.dim();
    let min_count = featurizer.0.min_count;
    let done = run_passes(plan, dim, pass, observer)?;
    let params = &plan.params;
    let weights = done.weights(params, dim)?;
    let mixed = if done.parts > 1 {
        format!(", {} parts mixed", done.parts)
    } else {
        String::new()
    };
    let fit = TaggerFit {
        model: TaggerModel {
            selection: None,
            featurizer: featurizer.0,
            weights,
            template_weights: Vec::new(),
            loss: Some(plan.loss),
            learner: spom_description(plan.loss, params, done.epochs, false, &mixed),
        },
        run: done.run,
        best_epoch: done.epochs,
        dev_scores: Vec::new(),
        index_seconds: 0.0,
        train_seconds: started.elapsed().as_secs_f64(),
        cuts: 0,
        objective: f64::NAN,
        objectives: Vec::new(),
        decode_seconds: 0.0,
        master_seconds: 0.0,
        eta0: params.steps.eta0,
        calibration: Vec::new(),
    };
    Ok(scored_tagging(fit, min_count, &checked, params.lambda).fitted)
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod online_tests;

#[cfg(test)]
mod batch_tests;
