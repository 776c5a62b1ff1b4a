//! SPOM for dependency parsing (martins2011 Sec. 4.2): the online proximal learner (Alg. 1)
//! over the arc-factored tree task, one explicit group per arc template, with the structured
//! hinge loss (eq. 4; loss-augmented decoding by Chu-Liu-Edmonds, non-projective, or Eisner,
//! projective) or the CRF loss (eq. 3; single-root arc marginals by the matrix-tree theorem or
//! by inside-outside over Eisner's chart, [`crate::task::tree::marginals`]). Either way the
//! model predicts with the decoder. With the `l2` regularizer it is the plain structured SVM
//! (or CRF); with `l21`, `l21sq` or `l2q` the template groups compete.
//!
//! Features are indexed once before training ([`ParserFit::index_seconds`]); the returned
//! weights are the averaged iterate of the epoch that scored best on the development
//! sentences (the last epoch without them).

use crate::checkpoint::{decode, encode};
use crate::data::MatrixRef;
use crate::error::{Error, Result};
use crate::kernel::MemoryLimit;
use crate::pipeline::treebank::arc_labels::{default_label_templates, train_labeler, ArcLabeler};
use crate::run::{Control, Observer, RunInfo, RunRecorder, RunStatus, StepUnit};
use crate::solver::cutting_plane::{fit_block_norm, CuttingPlaneParams};
use crate::solver::online::engine::{epoch_report, EngineSnapshot, OnlineLearner, SnapshotRef};
use crate::solver::online::params::{OnlineParams, OnlineSteps};
pub use crate::task::parse::TreeKind;
use crate::task::parse::{tree_task, ArcFeaturizer, ParseSentence, Support, TemplateSet};
use crate::task::structured::{evaluate_explicit, StructLoss, StructuredOnline};
use crate::task::tree::{ChuLiuEdmonds, Eisner, TreeDecoder};
use crate::task::TaskKind;
use crate::trained::{KernelRow, Summary, TrainedModel};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::ops::Range;
use std::time::Instant;

impl TreeKind {
    fn decode(self, n: usize, arc: &[f64]) -> Vec<usize> {
        match self {
            TreeKind::NonProjective => ChuLiuEdmonds::default().decode(n, arc),
            TreeKind::Projective => Eisner::default().decode(n, arc),
        }
    }

    fn max_tokens(self) -> usize {
        match self {
            TreeKind::NonProjective => ChuLiuEdmonds::default().max_tokens(),
            TreeKind::Projective => Eisner::default().max_tokens(),
        }
    }
}

/// What to train: the features' support, the trees, and the online learner's settings
/// (`params.epochs` is the most epochs run).
#[derive(Debug, Clone, PartialEq)]
pub struct ParserSpec {
    pub support: Support,
    pub trees: TreeKind,
    pub params: OnlineParams,
    /// The loss SPOM minimizes (the cutting plane always uses the hinge).
    pub loss: StructLoss,
    /// Train the relation labeler too (when the training sentences have relations).
    pub labels: bool,
    /// Train the arcs by the 1-slack cutting plane with this block norm `q` over the
    /// templates (multi-template learning, mao-tsang Alg. 1; `q = 2` the l2 structural SVM)
    /// instead of SPOM.
    pub cutting_plane: Option<(CuttingPlaneParams, f64)>,
}

/// Passes of the relation labeler over the training arcs.
pub(crate) const LABELER_EPOCHS: usize = 10;

/// A trained arc-factored parser: the featurizer and one weight per feature, and the
/// relation labeler.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ParserModel {
    pub featurizer: ArcFeaturizer,
    pub weights: Vec<f64>,
    pub trees: TreeKind,
    /// The relation labeler (second stage), when training had relations.
    pub labeler: Option<ArcLabeler>,
    /// How the learner, C and q were chosen, when the structured selection ran
    /// (`estimator::structured_auto`; absent otherwise, and in older files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selection: Option<crate::select::SelectionRecord>,
}

impl ParserModel {
    /// The l2 norm of each template's weights, in template order.
    pub fn group_norms(&self) -> Vec<f64> {
        self.featurizer.layout().group_norms(&self.weights)
    }

    /// Templates with a non-zero weight.
    pub fn templates_kept(&self) -> usize {
        self.group_norms().iter().filter(|&&n| n > 0.0).count()
    }

    /// The relations of every sentence's arcs (`None` without a labeler).
    pub fn label(
        &self,
        sentences: &[ParseSentence],
        heads: &[Vec<usize>],
    ) -> Option<Vec<Vec<String>>> {
        use rayon::prelude::*;
        let lab = self.labeler.as_ref()?;
        Some(
            sentences
                .par_iter()
                .zip(heads.par_iter())
                .map(|(s, h)| lab.label(s, h))
                .collect(),
        )
    }

    /// Checks the stored sizes and values (a model read from a file).
    pub(crate) fn validate(&self) -> std::result::Result<(), String> {
        let want = self.featurizer.layout().total();
        if self.weights.len() != want {
            return Err(format!(
                "the parser has {} weights; its templates' features need {want}",
                self.weights.len()
            ));
        }
        if self.weights.iter().any(|w| !w.is_finite()) {
            return Err("the parser has a weight that is not finite".into());
        }
        if let Some(l) = &self.labeler {
            l.validate()?;
        }
        Ok(())
    }

    /// The best tree of every sentence (in parallel); an error for a sentence longer than
    /// the decoder handles or empty.
    pub fn parse(&self, sentences: &[ParseSentence]) -> Result<Vec<Vec<usize>>> {
        use rayon::prelude::*;
        let max = self.trees.max_tokens();
        if let Some((i, s)) = sentences
            .iter()
            .enumerate()
            .find(|(_, s)| s.is_empty() || s.len() > max)
        {
            return Err(Error::data(format!(
                "sentence {} has {} tokens; the parser handles 1 to {max}",
                i + 1,
                s.len()
            )));
        }
        Ok(sentences
            .par_iter()
            .map_init(Vec::new, |scores, s| {
                let rows = self.featurizer.sentence_rows(s);
                scores.clear();
                rows.mul_dense(&self.weights, scores);
                self.trees.decode(s.len(), scores)
            })
            .collect())
    }
}

/// A trained parser with what training measured.
#[derive(Debug, Clone)]
pub struct ParserFit {
    pub model: ParserModel,
    /// The epoch whose averaged weights were kept (1-based; 0 for the cutting plane).
    pub best_epoch: usize,
    /// Status (completed, or cancelled by the observer), epochs run, seconds.
    pub run: RunInfo,
    /// Unlabeled attachment (percent, punctuation excluded) on the development sentences
    /// after each epoch (empty without them).
    pub dev_uas: Vec<f64>,
    /// Seconds to build the featurizer and index the features of every sentence.
    pub index_seconds: f64,
    /// Seconds of each training epoch (evaluation on the development set excluded).
    pub epoch_seconds: Vec<f64>,
    /// Seconds to train the relation labeler (0 without relations).
    pub labeler_seconds: f64,
    /// Cutting plane: the template weights `mu` (empty for SPOM), and the seconds in
    /// loss-augmented decoding and in the working-set problem.
    pub template_weights: Vec<f64>,
    pub decode_seconds: f64,
    pub master_seconds: f64,
}

/// Trains a parser on `train` (gold heads required) with `templates`; with `dev`, keeps the
/// epoch that parses it best. `observer` sees each epoch and may stop the run between
/// examples (the best epoch so far is returned; the weights reached when no epoch finished).
pub fn fit_parser(
    train: &[ParseSentence],
    dev: Option<&[ParseSentence]>,
    templates: TemplateSet,
    spec: &ParserSpec,
    observer: &dyn Observer,
) -> Result<ParserFit> {
    match spec.trees {
        TreeKind::NonProjective => fit_with(
            train,
            dev,
            templates,
            spec,
            ChuLiuEdmonds::default(),
            observer,
        ),
        TreeKind::Projective => fit_with(train, dev, templates, spec, Eisner::default(), observer),
    }
}

fn fit_with<D: TreeDecoder + Clone>(
    train: &[ParseSentence],
    dev: Option<&[ParseSentence]>,
    templates: TemplateSet,
    spec: &ParserSpec,
    decoder: D,
    observer: &dyn Observer,
) -> Result<ParserFit> {
    if train.is_empty() {
        return Err(Error::data("no training sentences"));
    }
    spec.params.validate()?;
    let mut rec = RunRecorder::new(StepUnit::Epoch, Some(spec.params.steps.epochs as u64));
    let start = Instant::now();
    let featurizer = ArcFeaturizer::fit(templates, spec.support, train)?;
    let task = tree_task(&featurizer, train, decoder.clone())?;
    let dev_task = dev
        .filter(|d| !d.is_empty())
        .map(|d| tree_task(&featurizer, d, decoder.clone()))
        .transpose()?;
    let index_seconds = start.elapsed().as_secs_f64();
    if let Some((cp, q)) = &spec.cutting_plane {
        if spec.loss != StructLoss::Hinge {
            return Err(Error::param(
                "loss",
                spec.loss,
                "hinge: the cutting plane trains the structured SVM",
            ));
        }
        let t = Instant::now();
        let (m, run, mu) = fit_block_norm(&task, cp, *q, observer)?;
        let train_seconds = t.elapsed().as_secs_f64();
        let dev_uas = match &dev_task {
            Some(d) => vec![100.0 * evaluate_explicit(d, &m.weights)?.value()],
            None => Vec::new(),
        };
        let t = Instant::now();
        let labeler = train_labels(train, spec)?;
        return Ok(ParserFit {
            labeler_seconds: t.elapsed().as_secs_f64(),
            model: ParserModel {
                selection: None,
                featurizer,
                weights: m.weights,
                trees: spec.trees,
                labeler,
            },
            best_epoch: 0,
            run,
            dev_uas,
            index_seconds,
            epoch_seconds: vec![train_seconds],
            template_weights: mu,
            decode_seconds: m.decode_seconds,
            master_seconds: m.master_seconds,
        });
    }
    let adapter = StructuredOnline::new(&task, spec.loss)?;
    let params = OnlineParams {
        steps: OnlineSteps {
            epochs: 1,
            ..spec.params.steps
        },
        ..spec.params.clone()
    };
    let mut learner = OnlineLearner::new(&adapter, &[], params.clone())?;
    let mut best: Option<(f64, usize, Vec<f64>)> = None;
    let mut dev_uas = Vec::new();
    let mut epoch_seconds = Vec::new();
    let mut status = RunStatus::Completed;
    let ck = observer.checkpoints();
    let mut first = 1;
    if let Some(bytes) = ck
        .map(|c| c.resume(CHECKPOINT_FAMILY))
        .transpose()?
        .flatten()
    {
        let saved: SavedEpochs = decode(CHECKPOINT_FAMILY, &bytes)?;
        learner.restore(saved.engine)?;
        first = learner.epochs_done() + 1;
        if first > spec.params.steps.epochs + 1 || saved.dev_uas.len() > first {
            return Err(Error::data(
                "the checkpoint's epochs do not fit this run's".to_string(),
            ));
        }
        if let Some(c) = ck {
            c.resumed_at(first as u64 - 1)?;
        }
        best = saved.best;
        dev_uas = saved.dev_uas;
        rec.set_steps(first as u64 - 1);
    }
    for epoch in first..=spec.params.steps.epochs {
        let t = Instant::now();
        let skipped_before = adapter.skipped();
        if learner.epoch_observed(observer) == Control::Stop {
            status = RunStatus::Cancelled;
            break;
        }
        epoch_seconds.push(t.elapsed().as_secs_f64());
        rec.add_skipped(adapter.skipped() - skipped_before);
        let objective = progressive_objective(&learner, &params, epoch);
        let w = learner
            .state()
            .explicit_values(spec.params.steps.averaging)
            .concat();
        let score = match &dev_task {
            Some(d) => {
                let uas = 100.0 * evaluate_explicit(d, &w)?.value();
                dev_uas.push(uas);
                uas
            }
            None => epoch as f64,
        };
        if best.as_ref().is_none_or(|(b, _, _)| score > *b) {
            best = Some((score, epoch, w));
        }
        if let Some(c) = ck.filter(|c| epoch < spec.params.steps.epochs && c.due(epoch as u64)) {
            let saved = SavedEpochsRef {
                engine: learner.snapshot(),
                best: &best,
                dev_uas: &dev_uas,
            };
            c.save(CHECKPOINT_FAMILY, epoch as u64, &encode(&saved)?)?;
        }
        if rec.step(objective, observer) == Control::Stop {
            if epoch < spec.params.steps.epochs {
                status = RunStatus::Cancelled;
            }
            break;
        }
    }
    // Stopped before the first epoch ended: the weights reached so far, as epoch 0 (the
    // run contract: a stop returns the model reached, with status cancelled).
    let (_, best_epoch, weights) = best.unwrap_or_else(|| {
        let w = learner
            .state()
            .explicit_values(spec.params.steps.averaging)
            .concat();
        (f64::NAN, 0, w)
    });
    let t = Instant::now();
    let labeler = train_labels(train, spec)?;
    let labeler_seconds = t.elapsed().as_secs_f64();
    Ok(ParserFit {
        labeler_seconds,
        model: ParserModel {
            selection: None,
            featurizer,
            weights,
            trees: spec.trees,
            labeler,
        },
        best_epoch,
        run: rec.finish(status),
        dev_uas,
        index_seconds,
        epoch_seconds,
        template_weights: Vec::new(),
        decode_seconds: 0.0,
        master_seconds: 0.0,
    })
}

/// The objective of the epoch just run: `lambda Omega(theta)` at its end plus its progressive
/// loss (each sentence's loss before its update, averaged), which costs no second pass over
/// the sentences; `None` when the epoch had no rounds or the value is not finite.
fn progressive_objective<T: crate::task::online::OnlineTask>(
    learner: &OnlineLearner<'_, T>,
    params: &OnlineParams,
    epoch: usize,
) -> Option<f64> {
    let (sum, rounds) = learner.progressive_loss();
    if rounds == 0 {
        return None;
    }
    let report = epoch_report(learner.state(), params, epoch, sum / rounds as f64, 0.0);
    report.objective.is_finite().then_some(report.objective)
}

/// The learner family name of the parser's checkpoints.
pub(crate) const CHECKPOINT_FAMILY: &str = "parser";

/// The parser's state at an epoch boundary (a checkpoint): the learner's, the best epoch so
/// far (its score, number and averaged weights) and the development scores.
#[derive(serde::Serialize)]
struct SavedEpochsRef<'a> {
    engine: SnapshotRef<'a>,
    best: &'a Option<(f64, usize, Vec<f64>)>,
    dev_uas: &'a [f64],
}

/// A [`SavedEpochsRef`] read back.
#[derive(serde::Deserialize)]
struct SavedEpochs {
    engine: EngineSnapshot,
    best: Option<(f64, usize, Vec<f64>)>,
    dev_uas: Vec<f64>,
}

/// The relation labeler, when asked for and the training sentences have relations.
fn train_labels(train: &[ParseSentence], spec: &ParserSpec) -> Result<Option<ArcLabeler>> {
    if spec.labels && train.iter().all(|s| s.deprels.is_some()) {
        Ok(Some(train_labeler(
            train,
            default_label_templates(),
            LABELER_EPOCHS,
            spec.params.seed,
        )?))
    } else {
        Ok(None)
    }
}

/// What a parser answers when asked for rows or sequences.
fn parser_refusal() -> Error {
    Error::unsupported("a parser parses sentences: use the parser (Model::Parser) on CoNLL-U data")
}

impl TrainedModel for ParserModel {
    fn task(&self) -> Option<TaskKind> {
        None
    }

    fn selection(&self) -> Option<&crate::select::SelectionRecord> {
        self.selection.as_ref()
    }

    fn set_selection(&mut self, record: crate::select::SelectionRecord) {
        self.selection = Some(record);
    }

    fn task_name(&self) -> &'static str {
        "parsing"
    }

    /// The relation labels (none without a labeler).
    fn classes(&self) -> Cow<'_, [String]> {
        Cow::Borrowed(self.labeler.as_ref().map_or(&[], |l| &l.labels))
    }

    fn rows_refusal(&self) -> Option<Error> {
        Some(parser_refusal())
    }

    fn predict_sequences(
        &self,
        _x: MatrixRef<'_>,
        _spans: &[Range<usize>],
        _limit: &MemoryLimit,
    ) -> Result<Vec<Vec<usize>>> {
        Err(parser_refusal())
    }

    fn validate(&self) -> Result<()> {
        ParserModel::validate(self).map_err(|e| Error::model("<model>", e))
    }

    fn summary(&self) -> Summary {
        let norms = self.group_norms();
        let kept = norms.iter().filter(|&&n| n > 0.0).count();
        let f = &self.featurizer;
        let mut settings = vec![
            (
                "trees".to_string(),
                format!("{:?}", self.trees).to_lowercase(),
            ),
            (
                "support".to_string(),
                format!("{:?}", f.support).to_lowercase(),
            ),
            ("features".to_string(), f.layout().total().to_string()),
        ];
        if let Some(l) = &self.labeler {
            settings.push(("relations".to_string(), l.labels.len().to_string()));
        }
        Summary {
            learner: "SPOM parser, templates as groups (Martins et al. 2011, Sec. 4.2)".into(),
            task: "parsing".into(),
            classes: self
                .labeler
                .as_ref()
                .map_or(Vec::new(), |l| l.labels.clone()),
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
}
