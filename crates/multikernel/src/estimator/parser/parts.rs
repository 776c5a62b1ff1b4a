//! A parser trained by the cutting plane (multi-template learning, mao-tsang Alg. 1) over
//! parts of its sentences held apart (other processes or machines; the Python package's
//! `multikernel.dask.fit_dask`), giving the model of one process on all of them:
//!
//! 1. each part's attribute values ([`ParsePart::values`]), each attribute's in order of
//!    first appearance, merged in the parts' order ([`PartValues::merge`]): the alphabets
//!    one process grows sentence by sentence;
//! 2. each part's feature keys under those alphabets ([`ParsePart::keys`]), per template in
//!    order of first appearance, merged in the parts' order ([`PartArcKeys::merge`]) into
//!    the featurizer ([`ParseFeaturizer::of_parts`]) of the arcs and of the relation
//!    labeler, the same as one process builds;
//! 3. each part compiled against it ([`ParsePart::compile`]) and kept where it is;
//! 4. the loop ([`fit_parser_parts`]) runs the master problem here and asks for the
//!    separation at each point ([`crate::estimator::parts`]: every part's unscaled sums,
//!    added and scaled once). The arc features are counts, so the sums are integers, the
//!    cuts bit for bit those of one process, and so is the model;
//! 5. the relation labeler (the second stage, a perceptron over the gold arcs in one
//!    seeded order) needs every gold arc in one place: each part's arcs with their
//!    features ([`ParsePart::gold_arcs`]) come here, are joined in the parts' order
//!    ([`PartArcs::merge`]) and the labeler trains here as in one process. They are the
//!    only data that leaves the parts in full (about as many numbers as the sentences'
//!    tokens times the labeler's templates).

use super::{training_data, Treebank};
use crate::data::conllu::Heads;
use crate::error::{Error, Result};
use crate::estimator::fitted::Fitted;
use crate::estimator::parts::online::{run_passes, OnlinePlan, PassParts};
use crate::estimator::parts::{CompiledPart, PartLayout, PartTask, PartsSeparator, SeparateParts};
use crate::estimator::spec::{LearnerSpec, Task};
use crate::model::Model;
use crate::pipeline::treebank::arc_labels::{
    default_label_templates, gold_arcs, train_on_arcs, GoldArcs,
};
use crate::pipeline::treebank::parser::{ParserModel, LABELER_EPOCHS};
use crate::run::Observer;
use crate::solver::cutting_plane::{self, Examples};
use crate::task::parse::{tree_task, ArcFeaturizer, ParseSentence, Support, TemplateSet, TreeKind};
use crate::task::tree::{ChuLiuEdmonds, Eisner};
use serde::{Deserialize, Serialize};

/// A part of a parser's training sentences (every one with its tree).
#[derive(Debug, Clone)]
pub struct ParsePart {
    train: Vec<ParseSentence>,
    templates: TemplateSet,
    support: Support,
    trees: TreeKind,
}

/// The attribute values of a part's sentences (or of several parts, merged), for the arcs'
/// templates and for the labeler's, and whether every sentence has relations.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PartValues {
    arcs: Vec<Vec<String>>,
    labels: Vec<Vec<String>>,
    relations: bool,
}

/// The feature keys of a part's sentences (or of several parts, merged), per template of
/// the arcs and of the labeler.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PartArcKeys {
    arcs: Vec<Vec<u64>>,
    labels: Vec<Vec<u64>>,
}

/// The featurizer of all the parts: the arcs' and, when every sentence has relations, the
/// labeler's; and the trees decoded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ParseFeaturizer {
    arcs: ArcFeaturizer,
    labels: Option<ArcFeaturizer>,
    trees: TreeKind,
}

/// The gold arcs of a part's sentences with their relations and labeler features (or of
/// several parts, joined in their order).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PartArcs(GoldArcs);

fn json<T: Serialize>(what: &str, value: &T) -> Result<Vec<u8>> {
    serde_json::to_vec(value).map_err(|e| Error::data(format!("{what}: {e}")))
}

fn from_json<T: serde::de::DeserializeOwned>(what: &str, bytes: &[u8]) -> Result<T> {
    serde_json::from_slice(bytes).map_err(|e| Error::data(format!("{what}: {e}")))
}

impl ParsePart {
    /// The part's sentences, one CoNLL-U block each with its tree, under the arc
    /// `templates` (their text and a name for it in errors; `None`: the default
    /// templates), projective trees or any; errors as [`training_data`]'s (sentences
    /// counted within the part).
    pub fn new(
        blocks: &[String],
        templates: Option<(&str, &str)>,
        projective: bool,
    ) -> Result<ParsePart> {
        let treebank = Treebank::from_blocks(blocks, Heads::Required)?;
        let data = training_data(&treebank, templates, projective)?;
        Ok(ParsePart {
            train: data.train,
            templates: data.templates,
            support: data.support,
            trees: data.trees,
        })
    }

    /// The attribute values of the part's sentences, to merge with the other parts'.
    pub fn values(&self) -> PartValues {
        PartValues {
            arcs: ArcFeaturizer::values_of(&self.templates, &self.train),
            labels: ArcFeaturizer::values_of(&default_label_templates(), &self.train),
            relations: self.train.iter().all(|s| s.deprels.is_some()),
        }
    }

    /// The feature keys of the part's sentences under the merged `values` of all parts.
    pub fn keys(&self, values: &PartValues) -> Result<PartArcKeys> {
        Ok(PartArcKeys {
            arcs: ArcFeaturizer::keys_of(&self.templates, self.support, &values.arcs, &self.train)?,
            labels: ArcFeaturizer::keys_of(
                &default_label_templates(),
                Support::Gold,
                &values.labels,
                &self.train,
            )?,
        })
    }

    /// The part's sentences featurized by the featurizer of all parts.
    pub fn compile(&self, featurizer: &ParseFeaturizer) -> Result<CompiledPart> {
        if featurizer.arcs.templates != self.templates || featurizer.trees != self.trees {
            return Err(Error::data(
                "the featurizer was built under other templates or trees than this part's",
            ));
        }
        let f = &featurizer.arcs;
        let task = match self.trees {
            TreeKind::NonProjective => {
                PartTask::Trees(tree_task(f, &self.train, ChuLiuEdmonds::default())?)
            }
            TreeKind::Projective => {
                PartTask::Projective(tree_task(f, &self.train, Eisner::default())?)
            }
        };
        Ok(CompiledPart::new(task, featurizer.dim()))
    }

    /// The part's gold arcs with their relations and labeler features (`None` when the
    /// featurizer has no labeler: some sentence of some part had no relations).
    pub fn gold_arcs(&self, featurizer: &ParseFeaturizer) -> Result<Option<PartArcs>> {
        featurizer
            .labels
            .as_ref()
            .map(|f| gold_arcs(&self.train, f).map(PartArcs))
            .transpose()
    }
}

impl PartValues {
    /// These values followed by `later`'s (two parts, in their order).
    pub fn merge(mut self, later: PartValues) -> PartValues {
        ArcFeaturizer::merge_values(&mut self.arcs, later.arcs);
        ArcFeaturizer::merge_values(&mut self.labels, later.labels);
        self.relations &= later.relations;
        self
    }

    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        json("attribute values", self)
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<PartValues> {
        from_json("attribute values", bytes)
    }
}

impl PartArcKeys {
    /// These keys followed by `later`'s (two parts, in their order).
    pub fn merge(mut self, later: PartArcKeys) -> PartArcKeys {
        ArcFeaturizer::merge_keys(&mut self.arcs, later.arcs);
        ArcFeaturizer::merge_keys(&mut self.labels, later.labels);
        self
    }

    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        json("feature keys", self)
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<PartArcKeys> {
        from_json("feature keys", bytes)
    }
}

impl ParseFeaturizer {
    /// The featurizer of all the parts from their merged `values` and `keys`, under the
    /// parts' `templates` and trees (as [`ParsePart::new`] took them): the one a parser
    /// trained in one process on all the sentences has.
    pub fn of_parts(
        templates: Option<(&str, &str)>,
        projective: bool,
        values: PartValues,
        keys: PartArcKeys,
    ) -> Result<ParseFeaturizer> {
        let set = match templates {
            Some((text, origin)) => TemplateSet::parse(text, std::path::Path::new(origin))?,
            None => TemplateSet::default_set(),
        };
        let arcs = ArcFeaturizer::of_parts(set, Support::Gold, values.arcs, keys.arcs)?;
        let labels = values
            .relations
            .then(|| {
                ArcFeaturizer::of_parts(
                    default_label_templates(),
                    Support::Gold,
                    values.labels,
                    keys.labels,
                )
            })
            .transpose()?;
        Ok(ParseFeaturizer {
            arcs,
            labels,
            trees: if projective {
                TreeKind::Projective
            } else {
                TreeKind::NonProjective
            },
        })
    }

    /// The number of arc weights.
    pub fn dim(&self) -> usize {
        self.arcs.layout().total()
    }

    /// The arc weights, one group per template (what a
    /// [`crate::estimator::parts::PointReplica`] rebuilds).
    pub fn layout(&self) -> PartLayout {
        PartLayout(self.arcs.layout().clone())
    }

    /// Whether the parser labels arcs (every training sentence had relations).
    pub(crate) fn labeled(&self) -> bool {
        self.labels.is_some()
    }

    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        json("featurizer", self)
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<ParseFeaturizer> {
        from_json("featurizer", bytes)
    }
}

impl PartArcs {
    /// These arcs followed by `later`'s (two parts, in their order).
    pub fn merge(mut self, later: PartArcs) -> PartArcs {
        self.0.extend(later.0);
        self
    }

    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        json("gold arcs", &self.0)
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<PartArcs> {
        from_json("gold arcs", bytes).map(PartArcs)
    }
}

/// Multi-template learning (the `mtl` learner of `spec`, a parsing spec) over `n`
/// sentences held in parts: `featurizer` is the parts' merged featurizer, `separate` gives
/// every part's sums at a point (`None`: stop), and `arcs` the gold arcs of all the parts
/// in their order (`None` exactly when the featurizer has no labeler). The model is the one
/// [`fit`](crate::estimator::fit()) trains on all the sentences in one process.
pub fn fit_parser_parts<'f>(
    featurizer: ParseFeaturizer,
    n: usize,
    spec: &LearnerSpec,
    separate: &'f mut SeparateParts<'f>,
    arcs: Option<PartArcs>,
    observer: &dyn Observer,
) -> Result<Fitted> {
    let spec = spec.check()?;
    if spec.task != Task::Parsing {
        return Err(Error::unsupported(format!(
            "a parser's parts train a parsing spec, not a {} one",
            spec.task
        )));
    }
    if n == 0 {
        return Err(Error::data("the training set has no sentences"));
    }
    let settings = spec
        .learner
        .family()
        .parser(spec.learner.kind(), &spec, n)?;
    let Some((params, q)) = settings.cutting_plane else {
        return Err(Error::unsupported(format!(
            "the {} learner trains on all the sentences in one process; over parts, the \
             cutting plane (learner mtl) does",
            spec.learner.kind()
        )));
    };
    if arcs.is_some() != featurizer.labeled() {
        return Err(Error::data(
            "the gold arcs come with a featurizer that labels arcs, and only with one",
        ));
    }
    params.validate()?;
    let examples = Examples {
        n,
        groups: featurizer.arcs.groups(),
    };
    let separation_step = params
        .separation_step
        .unwrap_or(cutting_plane::SEPARATION_STEP);
    let mut separator = PartsSeparator::new(separate, n, featurizer.dim(), separation_step);
    let (m, run, _mu) =
        cutting_plane::fit_block_norm_with(&examples, &params, q, &mut separator, observer)?;
    let labeler = match (featurizer.labels, arcs) {
        (Some(f), Some(a)) => Some(train_on_arcs(f, a.0, LABELER_EPOCHS, settings.params.seed)?),
        _ => None,
    };
    let model = ParserModel {
        selection: None,
        featurizer: featurizer.arcs,
        weights: m.weights,
        trees: featurizer.trees,
        labeler,
    };
    Ok(Fitted {
        notes: vec![format!(
            "{} cuts ({:.2} s in the parts' separations, {:.2} s in the working-set problem)",
            run.steps, m.decode_seconds, m.master_seconds
        )],
        ..Fitted::new(Model::Parser(model), run, settings.lambda)
    })
}

/// The online learner (`online` of `spec`, a parsing spec) over sentences held in parts,
/// by iterative parameter mixing ([`crate::estimator::parts::online`]): `plan` is
/// [`OnlinePlan::new`] of `spec` with the parts' `L(0)`, `pass` runs each epoch's passes,
/// `arcs` as [`fit_parser_parts`]'s (the labeler trains here). The averaged weights of the
/// last epoch are kept, as one process keeps them without development sentences; with one
/// part the model is the one [`fit`](crate::estimator::fit()) trains in one process.
pub fn fit_parser_passes<'f>(
    featurizer: ParseFeaturizer,
    spec: &LearnerSpec,
    plan: &OnlinePlan,
    pass: &'f mut PassParts<'f>,
    arcs: Option<PartArcs>,
    observer: &dyn Observer,
) -> Result<Fitted> {
    plan.check_spec(spec, Task::Parsing)?;
    if arcs.is_some() != featurizer.labeled() {
        return Err(Error::data(
            "the gold arcs come with a featurizer that labels arcs, and only with one",
        ));
    }
    let dim = featurizer.dim();
    let done = run_passes(plan, dim, pass, observer)?;
    let params = &plan.params;
    let weights = done.weights(params, dim)?;
    let labeler = match (featurizer.labels, arcs) {
        (Some(f), Some(a)) => Some(train_on_arcs(f, a.0, LABELER_EPOCHS, params.seed)?),
        _ => None,
    };
    let model = ParserModel {
        selection: None,
        featurizer: featurizer.arcs,
        weights,
        trees: featurizer.trees,
        labeler,
    };
    Ok(Fitted {
        notes: vec![format!(
            "epoch {} of {} kept; {} parts' passes mixed each epoch",
            done.epochs, done.run.steps, done.parts
        )],
        ..Fitted::new(Model::Parser(model), done.run, params.lambda)
    })
}

#[cfg(test)]
mod tests;
