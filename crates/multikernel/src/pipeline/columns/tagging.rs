//! Training sequence taggers over CRF++ templates ([`crate::task::tagging`]), one feature
//! group per template:
//! - [`TaggerLearner::Online`]: SPOM (martins2011 Alg. 1) with the structured hinge or the
//!   CRF loss; `l2` is the plain structured SVM / l2 CRF trained online, `l21sq`, `l21` or
//!   `l2q` make the templates compete (a template is dropped when its group norm is 0). The
//!   averaged iterate of the epoch that tags the development sentences best is kept.
//! - [`TaggerLearner::CuttingPlane`]: the 1-slack cutting-plane structural SVM (Joachims et
//!   al. 2009; mao-tsang Alg. 1 with one template weight), l2-regularized, in batch.
//! - [`TaggerLearner::Lbfgs`]: the l2 CRF in batch by L-BFGS ([`crate::solver::batch`]),
//!   the optimum SPOM's CRF loss aims at (CRFsuite's `-a lbfgs` with `c2 = 1 / (2 C)`).

use crate::data::columns::ColumnSentence;
use crate::error::{Error, Result};
use crate::kernel::MemoryLimit;
use crate::run::{Control, Observer, RunInfo, RunRecorder, RunStatus, StepUnit};
use crate::solver::adagrad::AdagradLearner;
use crate::solver::batch::{self, LbfgsParams};
use crate::solver::cutting_plane::{self, CuttingPlaneParams};
use crate::solver::online::engine::OnlineLearner;
use crate::solver::online::params::{OnlineParams, OnlineSteps, StepSchedule};
use crate::task::chain::{
    forward_backward, forward_backward_at, stable_marginals, viterbi, viterbi_at,
};
use crate::task::structured::{StructLoss, StructuredOnline};
use crate::task::tagging::{
    decode_chain, is_chunk_scheme, TagFeaturizer, TagScores, TaggingTask, TemplateFile,
};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::time::Instant;

mod memory;
use crate::data::MatrixRef;
use crate::task::TaskKind;
use crate::trained::{KernelRow, Summary, TrainedModel};
pub use memory::LabelMemory;
use std::borrow::Cow;
use std::ops::Range;

/// A template whose weight is below this share of the total is pruned (mao-tsang;
/// docs/formulas.md, "Multi-template learning").
pub(crate) const PRUNE_SHARE: f64 = 1e-5;

/// The learner of a tagger.
#[derive(Debug, Clone, PartialEq)]
pub enum TaggerLearner {
    /// SPOM over the template groups (`params.epochs` is the most epochs run).
    Online {
        params: OnlineParams,
        loss: StructLoss,
    },
    /// The 1-slack cutting-plane structural SVM with the squared block-norm regularizer
    /// `1/2 (sum_j ||w_j||^q)^(2/q)` over the templates: `q = 2` is the plain l2 structural
    /// SVM, other `q >= 1` multi-template learning (mao-tsang Alg. 1 and problem (11)).
    CuttingPlane { params: CuttingPlaneParams, q: f64 },
    /// The l2 CRF `lambda/2 ||w||^2 + (1/N) sum_i L_crf` minimized in batch by L-BFGS.
    Lbfgs { params: LbfgsParams },
}

/// What to train.
#[derive(Debug, Clone, PartialEq)]
pub struct TaggerSpec {
    pub learner: TaggerLearner,
    /// Minimum count of a template expansion in training (CRF++ `-f`; 1 keeps all).
    pub min_count: usize,
    /// Online: also compute the training objective `lambda/2 ||w||^2 + (1/N) sum L` of the
    /// weights each epoch would keep (one more pass over the training sentences per epoch),
    /// into [`TaggerFit::objectives`].
    pub track_objective: bool,
    /// Online with averaging: restart the average after this epoch, so the averaged weights
    /// are those of the later epochs' iterates only (averaged SGD); 0 averages every round
    /// (Alg. 1 as in the paper).
    pub average_from: usize,
    /// Online: choose the initial step size `eta0` before training ([`Calibration`]);
    /// `None` trains with the params' `eta0`.
    pub calibrate: Option<Calibration>,
    /// Refuse to train when the structures sized by the labels would exceed this
    /// ([`LabelMemory::training`], checked before they are allocated).
    pub memory: MemoryLimit,
}

/// The initial step size chosen from a grid by short runs, before the full run (Bottou 2012,
/// "Stochastic gradient descent tricks", Sec. 5.2: pick the step that works best on a short
/// run; crfsgd and CRFsuite's l2sgd do this on a sample of the training set). Each `eta0` of
/// the grid trains `epochs` epochs from scratch; the one whose weights tag the development
/// sentences best is kept (without development sentences: the lowest training objective
/// `lambda Omega + (1/N) sum L`); ties go to the first in the grid.
#[derive(Debug, Clone, PartialEq)]
pub struct Calibration {
    pub eta0_grid: Vec<f64>,
    pub epochs: usize,
}

impl Calibration {
    fn validate(&self) -> Result<()> {
        if self.eta0_grid.is_empty() || self.epochs == 0 {
            return Err(Error::param(
                "calibration",
                format!("{:?}, {} epochs", self.eta0_grid, self.epochs),
                "at least one eta0 and one epoch",
            ));
        }
        if let Some(e) = self
            .eta0_grid
            .iter()
            .find(|e| !(e.is_finite() && **e > 0.0))
        {
            return Err(Error::param("eta0", e, "a positive number"));
        }
        Ok(())
    }
}

/// A trained tagger: the featurizer and one weight per (template expansion, label) and per
/// label pair.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaggerModel {
    pub featurizer: TagFeaturizer,
    pub weights: Vec<f64>,
    /// How it was trained (learner and settings, for `inspect`).
    #[serde(default)]
    pub learner: String,
    /// Multi-template learning: the weight `mu_j` of each group (summing to 1); empty for
    /// SPOM.
    #[serde(default)]
    pub template_weights: Vec<f64>,
    /// The loss it was trained with (`None` in model files written before this field: then
    /// read from [`TaggerModel::learner`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss: Option<StructLoss>,
    /// How the learner, C and q were chosen, when the structured selection ran
    /// (`estimator::structured_auto`; absent otherwise, and in older files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selection: Option<crate::select::SelectionRecord>,
}

/// What `predict --marginals` prints for one sentence (CRF++'s `crf_test -v1` / `-v2`).
#[derive(Debug, Clone, PartialEq)]
pub struct SentenceMarginals {
    /// The best label sequence (Viterbi), as label slots.
    pub best: Vec<usize>,
    /// `p(y_i = y | x)` for each token `i` and label slot `y` (`n x L`, row-major).
    pub token: Vec<f64>,
    /// `p(best | x) = exp(s(best) - log Z)`.
    pub sequence: f64,
}

impl TaggerModel {
    /// The l2 norm of each group's weights (the bigram group first when present, then the
    /// unigram templates in file order).
    pub fn group_norms(&self) -> Vec<f64> {
        self.featurizer.layout().group_norms(&self.weights)
    }

    /// The name of each group (its template line).
    pub(crate) fn group_names(&self) -> Vec<String> {
        self.featurizer
            .groups()
            .into_iter()
            .map(|g| g.name)
            .collect()
    }

    /// Templates kept: for multi-template learning those with `mu_j / sum mu >= 1e-5`
    /// (`PRUNE_SHARE`), otherwise those with a non-zero group norm.
    pub fn templates_kept(&self) -> usize {
        if self.template_weights.is_empty() {
            self.group_norms().iter().filter(|&&n| n > 0.0).count()
        } else {
            let total: f64 = self.template_weights.iter().sum();
            self.template_weights
                .iter()
                .filter(|&&m| total > 0.0 && m / total >= PRUNE_SHARE)
                .count()
        }
    }

    /// Checks the stored sizes and values (a model read from a file).
    pub(crate) fn validate(&self) -> std::result::Result<(), String> {
        self.featurizer.validate()?;
        let want = self.featurizer.layout().total();
        if self.weights.len() != want {
            return Err(format!(
                "the tagger has {} weights; its templates' features need {want}",
                self.weights.len()
            ));
        }
        if self.weights.iter().any(|w| !w.is_finite()) {
            return Err("the tagger has a weight that is not finite".into());
        }
        if !self.template_weights.is_empty()
            && (self.template_weights.len() != self.featurizer.layout().n_groups()
                || self
                    .template_weights
                    .iter()
                    .any(|m| !(m.is_finite() && *m >= 0.0)))
        {
            return Err("the tagger's template weights are not one number >= 0 per group".into());
        }
        Ok(())
    }

    /// Whether the model was trained with the CRF loss (its scores are then log-potentials
    /// of a conditional random field, and marginals are probabilities).
    pub(crate) fn is_crf(&self) -> bool {
        match self.loss {
            Some(l) => l == StructLoss::Crf,
            None => self.learner.starts_with("SPOM, crf loss"),
        }
    }

    /// The label-pair scores (`L x L`; zeros without a bigram template).
    fn transitions(&self) -> Vec<f64> {
        let l = self.featurizer.n_labels();
        if self.featurizer.has_bigram() {
            self.weights[..l * l].to_vec()
        } else {
            vec![0.0; l * l]
        }
    }

    /// The position-dependent label-pair scores of a sentence with bigram templates with
    /// macros (`(n - 1) x L x L`).
    fn positional(&self, s: &ColumnSentence) -> Vec<f64> {
        let l = self.featurizer.n_labels();
        let plain = self.featurizer.has_bigram().then(|| &self.weights[..l * l]);
        self.featurizer
            .positional_transitions(s, plain, &self.weights)
    }

    /// The unigram scores of a sentence (`n x L`).
    fn unary(&self, s: &ColumnSentence) -> Vec<f64> {
        let f = &self.featurizer;
        let l = f.n_labels();
        let nt = f.offset();
        let rows = f.rows(s);
        let mut unary = vec![0.0; s.len() * l];
        for (r, u) in unary.chunks_mut(l).enumerate() {
            for &(j, x) in rows.row(r) {
                let w = &self.weights[nt + j * l..nt + (j + 1) * l];
                for (o, wy) in u.iter_mut().zip(w) {
                    *o += x * wy;
                }
            }
        }
        unary
    }

    /// The best label sequence of every sentence (in parallel), as label slots. Tokens need
    /// the observation columns the model reads; an error otherwise. Under the default memory
    /// limit ([`TaggerModel::tag_ids_with`]).
    pub fn tag_ids(&self, sentences: &[ColumnSentence]) -> Result<Vec<Vec<usize>>> {
        self.tag_ids_with(sentences, &MemoryLimit::default())
    }

    /// [`TaggerModel::tag_ids`], refused before any work when the sentences' buffers sized
    /// by the labels ([`LabelMemory::applying`]) exceed `limit`.
    pub fn tag_ids_with(
        &self,
        sentences: &[ColumnSentence],
        limit: &MemoryLimit,
    ) -> Result<Vec<Vec<usize>>> {
        self.featurizer.check_sentences(sentences)?;
        LabelMemory::applying(self, sentences, false).check(limit, "tagging")?;
        let l = self.featurizer.n_labels();
        let trans = self.transitions();
        Ok(sentences
            .par_iter()
            .map(|s| {
                if self.featurizer.has_bigram_macros() {
                    viterbi_at(&self.unary(s), &self.positional(s), l).1
                } else {
                    decode_chain(&self.unary(s), &trans, l)
                }
            })
            .collect())
    }

    /// The best labels of every sentence with their probabilities under the CRF
    /// `p(y | x) = exp(s(y) - log Z(x))` (martins2011 eq. 3; Lafferty et al. 2001): each
    /// token's label marginals by forward-backward and the best sequence's probability.
    /// Scores so large that the sentence's score or `log Z` overflow or cancel (weights
    /// near 1e300) are recomputed by `stable_marginals`; scores that are not finite
    /// numbers (weights whose sum overflows) are an error naming the sentence's line, as is
    /// a model trained with the hinge loss, whose scores are no log-probabilities.
    /// Under the default memory limit ([`TaggerModel::marginals_with`]).
    pub fn marginals(&self, sentences: &[ColumnSentence]) -> Result<Vec<SentenceMarginals>> {
        self.marginals_with(sentences, &MemoryLimit::default())
    }

    /// [`TaggerModel::marginals`], refused before any work when the sentences' buffers sized
    /// by the labels ([`LabelMemory::applying`]) exceed `limit`.
    pub fn marginals_with(
        &self,
        sentences: &[ColumnSentence],
        limit: &MemoryLimit,
    ) -> Result<Vec<SentenceMarginals>> {
        if !self.is_crf() {
            return Err(Error::unsupported(format!(
                "marginals need a tagger trained with the CRF loss (train --loss crf); this \
                 one was trained by {}: its scores are not log-probabilities",
                if self.learner.is_empty() {
                    "another loss"
                } else {
                    &self.learner
                }
            )));
        }
        self.featurizer.check_sentences(sentences)?;
        LabelMemory::applying(self, sentences, true).check(limit, "the marginals of a tagger")?;
        let l = self.featurizer.n_labels();
        let trans = self.transitions();
        let largest = self.weights.iter().fold(0.0f64, |m, w| m.max(w.abs()));
        let each: Vec<Result<SentenceMarginals>> = sentences
            .par_iter()
            .map(|s| {
                let unary = self.unary(s);
                let positional = self
                    .featurizer
                    .has_bigram_macros()
                    .then(|| self.positional(s));
                let pairs = positional.as_deref().unwrap_or(&trans);
                if let Some(bad) = unary.iter().chain(pairs).find(|v| !v.is_finite()) {
                    return Err(Error::data(format!(
                        "the sentence at line {}: a score of the model is {bad}, not a finite \
                         number (the weights, up to {largest:e} in magnitude, overflow when \
                         added): the model cannot give probabilities",
                        s.line
                    )));
                }
                let (score, best, m) = match &positional {
                    Some(t) => {
                        let (score, best) = viterbi_at(&unary, t, l);
                        (score, best, forward_backward_at(&unary, t, l))
                    }
                    None => {
                        let (score, best) = viterbi(&unary, &trans, l);
                        (score, best, forward_backward(&unary, &trans, l))
                    }
                };
                let sequence = (score - m.log_z).exp();
                let valid = |p: f64| (0.0..=1.0 + 1e-9).contains(&p);
                if valid(sequence)
                    && m.node.iter().all(|&p| valid(p))
                    && m.node
                        .chunks_exact(l)
                        .all(|r| (r.iter().sum::<f64>() - 1.0).abs() < 1e-6)
                {
                    return Ok(SentenceMarginals {
                        best,
                        token: m.node,
                        sequence,
                    });
                }
                // Scores near the largest float: the sentence's score or log Z overflowed
                // or cancelled.
                let l2 = l * l;
                let pairs_at = |i: usize| match &positional {
                    Some(t) => &t[(i - 1) * l2..i * l2],
                    None => &trans[..],
                };
                let (sequence, token) =
                    stable_marginals(&unary, pairs_at, l, &best).ok_or_else(|| {
                        Error::data(format!(
                            "the sentence at line {}: the model's scores differ by more than \
                             the floating-point range (weights up to {largest:e} in \
                             magnitude): its probabilities cannot be computed",
                            s.line
                        ))
                    })?;
                Ok(SentenceMarginals {
                    best,
                    token,
                    sequence,
                })
            })
            .collect();
        // The first failing sentence in file order, whatever the threads' order.
        each.into_iter().collect()
    }

    /// The best labels of every sentence (bytes, in the training data's encoding). Under the
    /// default memory limit (`TaggerModel::tag_with`).
    pub fn tag(&self, sentences: &[ColumnSentence]) -> Result<Vec<Vec<Vec<u8>>>> {
        self.tag_with(sentences, &MemoryLimit::default())
    }

    /// [`TaggerModel::tag`] under `limit` ([`TaggerModel::tag_ids_with`]).
    pub(crate) fn tag_with(
        &self,
        sentences: &[ColumnSentence],
        limit: &MemoryLimit,
    ) -> Result<Vec<Vec<Vec<u8>>>> {
        Ok(self
            .tag_ids_with(sentences, limit)?
            .into_iter()
            .map(|y| {
                y.into_iter()
                    .map(|k| self.featurizer.labels[k].clone())
                    .collect()
            })
            .collect())
    }

    /// Tags `sentences` and scores the labels against their last column (token accuracy,
    /// chunk counts). A gold label the model never saw counts as wrong; the number of such
    /// tokens is returned beside the scores. Under the default memory limit
    /// (`TaggerModel::evaluate_with`).
    pub fn evaluate(&self, sentences: &[ColumnSentence]) -> Result<(TagScores, usize)> {
        self.evaluate_with(sentences, &MemoryLimit::default())
    }

    /// [`TaggerModel::evaluate`] under `limit` ([`TaggerModel::tag_ids_with`]).
    pub(crate) fn evaluate_with(
        &self,
        sentences: &[ColumnSentence],
        limit: &MemoryLimit,
    ) -> Result<(TagScores, usize)> {
        let predicted = self.tag_with(sentences, limit)?;
        let gold: Vec<Vec<&[u8]>> = sentences.iter().map(|s| s.last_column()).collect();
        let unseen = gold
            .iter()
            .flatten()
            .filter(|l| {
                self.featurizer
                    .labels
                    .binary_search_by(|x| x.as_slice().cmp(l))
                    .is_err()
            })
            .count();
        Ok((TagScores::of(&gold, &predicted), unseen))
    }

    /// The development score used to pick epochs and hyper-parameters: chunk F1 for chunk
    /// labels, token accuracy otherwise (percent). Under the default memory limit
    /// (`TaggerModel::dev_score_with`).
    pub fn dev_score(&self, sentences: &[ColumnSentence]) -> Result<f64> {
        self.dev_score_with(sentences, &MemoryLimit::default())
    }

    /// [`TaggerModel::dev_score`] under `limit` ([`TaggerModel::tag_ids_with`]).
    pub(crate) fn dev_score_with(
        &self,
        sentences: &[ColumnSentence],
        limit: &MemoryLimit,
    ) -> Result<f64> {
        let (s, _) = self.evaluate_with(sentences, limit)?;
        Ok(100.0
            * if is_chunk_scheme(&self.featurizer.labels) {
                s.chunks.f1()
            } else {
                s.accuracy()
            })
    }
}

/// A trained tagger with what training measured.
#[derive(Debug, Clone)]
pub struct TaggerFit {
    pub model: TaggerModel,
    /// Status, steps (epochs or cuts), seconds.
    pub run: RunInfo,
    /// The epoch whose averaged weights were kept (online; 0 for the cutting plane).
    pub best_epoch: usize,
    /// The development score (percent) after each epoch (online) or at the end (cutting
    /// plane); empty without development sentences.
    pub dev_scores: Vec<f64>,
    /// Seconds to build the featurizer and the features of every sentence.
    pub index_seconds: f64,
    /// Seconds of training proper (decoding, updates, working-set problems).
    pub train_seconds: f64,
    /// Cutting plane: cuts in the working set and `J(w)` at the end.
    pub cuts: usize,
    /// The cutting plane's `J(w)`; L-BFGS's `lambda/2 ||w||^2 + (1/N) sum L`; online, with
    /// `track_objective`, the kept epoch's training objective (NaN otherwise).
    pub objective: f64,
    /// Online with `track_objective`: the training objective `lambda/2 ||w||^2 + (1/N) sum L`
    /// (l2 regularizer; `lambda Omega + ...` for the others) of the weights of each epoch
    /// (averaged when the run averages); L-BFGS: its final objective.
    pub objectives: Vec<f64>,
    /// Cutting plane: seconds in loss-augmented decoding and in the working-set problem.
    pub decode_seconds: f64,
    pub master_seconds: f64,
    /// Online: the initial step size trained with (the calibrated one when calibrating);
    /// NaN for the batch learners.
    pub eta0: f64,
    /// Online with [`TaggerSpec::calibrate`]: each `eta0` tried and its score (development
    /// accuracy, or minus the training objective).
    pub calibration: Vec<(f64, f64)>,
}

/// Trains a tagger on `train` (labels in the last column) with `templates`; with `dev`,
/// keeps the online epoch that tags it best. `observer` sees each epoch (or cut) and may
/// stop the run (the best weights so far are returned: the weights reached when no epoch ended).
pub fn fit_tagger(
    train: &[ColumnSentence],
    dev: Option<&[ColumnSentence]>,
    templates: TemplateFile,
    spec: &TaggerSpec,
    observer: &dyn Observer,
) -> Result<TaggerFit> {
    if train.is_empty() {
        return Err(Error::data("no training sentences"));
    }
    match &spec.learner {
        TaggerLearner::Online { params, .. } => {
            params.validate()?;
            if let Some(c) = &spec.calibrate {
                c.validate()?;
            }
        }
        TaggerLearner::CuttingPlane { params, q } => {
            params.validate()?;
            if !(q.is_finite() && *q >= 1.0) {
                return Err(Error::param("q", q, "a finite block norm q >= 1"));
            }
        }
        TaggerLearner::Lbfgs { params } => params.validate()?,
    }
    let start = Instant::now();
    let featurizer = TagFeaturizer::fit(templates, train, spec.min_count)?;
    let dev = dev.filter(|d| !d.is_empty());
    if let Some(d) = dev {
        featurizer.check_sentences(d)?;
    }
    // Before the label-pair parts and the learner's vectors are allocated.
    LabelMemory::training(&featurizer, train, dev, spec)
        .check(&spec.memory, "training a tagger")?;
    let task = TaggingTask::new(&featurizer, train)?;
    let index_seconds = start.elapsed().as_secs_f64();
    let t = Instant::now();
    match &spec.learner {
        TaggerLearner::Online { params, loss } => {
            let mut params = params.clone();
            let mut calibration = Vec::new();
            if let Some(cal) = &spec.calibrate {
                let mut best: Option<(f64, f64)> = None;
                for &eta0 in &cal.eta0_grid {
                    let short = OnlineParams {
                        steps: OnlineSteps {
                            eta0,
                            epochs: cal.epochs,
                            ..params.steps
                        },
                        ..params.clone()
                    };
                    let track = dev.is_none();
                    let run =
                        online_epochs(&task, &featurizer, *loss, &short, spec, track, dev, &())?;
                    let score = match dev {
                        Some(_) => run.best_score,
                        None => -run.kept_objective,
                    };
                    calibration.push((eta0, score));
                    if best.is_none_or(|(b, _)| score > b) {
                        best = Some((score, eta0));
                    }
                }
                params.steps.eta0 = best.map_or(params.steps.eta0, |b| b.1);
            }
            let run = online_epochs(
                &task,
                &featurizer,
                *loss,
                &params,
                spec,
                spec.track_objective,
                dev,
                observer,
            )?;
            let (best_epoch, weights) = run.best;
            Ok(TaggerFit {
                model: TaggerModel {
                    selection: None,
                    featurizer,
                    weights,
                    template_weights: Vec::new(),
                    loss: Some(*loss),
                    learner: spom_description(
                        *loss,
                        &params,
                        best_epoch,
                        !calibration.is_empty(),
                        "",
                    ),
                },
                run: run.info,
                best_epoch,
                dev_scores: run.dev_scores,
                index_seconds,
                train_seconds: t.elapsed().as_secs_f64() - run.eval_seconds,
                cuts: 0,
                objective: run.kept_objective,
                objectives: run.objectives,
                decode_seconds: 0.0,
                master_seconds: 0.0,
                eta0: params.steps.eta0,
                calibration,
            })
        }
        TaggerLearner::Lbfgs { params } => {
            let dim = crate::task::structured::explicit_layout(&task).total();
            let mut eval = |w: &[f64], g: &mut [f64]| -> Result<f64> {
                batch::objective::objective_grad(&task, StructLoss::Crf, params.lambda, w, Some(g))
            };
            let mut fit = fit_batch_crf(featurizer, dim, &mut eval, params, observer)?;
            if let Some(d) = dev {
                fit.dev_scores = vec![fit.model.dev_score_with(d, &spec.memory)?];
            }
            fit.index_seconds = index_seconds;
            Ok(fit)
        }
        TaggerLearner::CuttingPlane { params: p, q } => {
            let examples = cutting_plane::Examples::of(&task)?;
            let mut separator =
                cutting_plane::LocalSeparator::new(&task, examples.layout().total());
            let mut fit =
                fit_cutting_plane(featurizer, &examples, (p, *q), &mut separator, observer)?;
            if let Some(d) = dev {
                fit.dev_scores = vec![fit.model.dev_score_with(d, &spec.memory)?];
            }
            fit.index_seconds = index_seconds;
            Ok(fit)
        }
    }
}

/// The batch CRF by L-BFGS from zero over the `dim` weights of `featurizer`, the objective
/// and its gradient evaluated by `eval` (in this process, or summed over parts of the
/// sentences elsewhere: `estimator::tagger::parts`), each iteration reported to `observer`
/// with its objective (which may stop the run at the iterate reached). The fit's index
/// seconds and development scores are left for the caller.
pub(crate) fn fit_batch_crf(
    featurizer: TagFeaturizer,
    dim: usize,
    eval: &mut batch::Objective<'_>,
    params: &LbfgsParams,
    observer: &dyn Observer,
) -> Result<TaggerFit> {
    let mut rec = RunRecorder::new(StepUnit::Iteration, Some(params.max_iter));
    let fit = batch::minimize_from_zero(dim, eval, params, &mut |_, value| {
        rec.step(Some(value), observer) == Control::Stop
    })?;
    let run = rec.finish(fit.status);
    let model = TaggerModel {
        selection: None,
        featurizer,
        weights: fit.weights,
        template_weights: Vec::new(),
        loss: Some(StructLoss::Crf),
        learner: format!(
            "L-BFGS l2 CRF, lambda {:e}, {} iterations ({}), gradient norm {:.2e}",
            params.lambda, fit.iterations, fit.stop, fit.grad_norm
        ),
    };
    Ok(TaggerFit {
        model,
        run,
        best_epoch: 0,
        dev_scores: Vec::new(),
        index_seconds: 0.0,
        train_seconds: fit.seconds,
        cuts: 0,
        objective: fit.objective,
        objectives: vec![fit.objective],
        decode_seconds: 0.0,
        master_seconds: 0.0,
        eta0: f64::NAN,
        calibration: Vec::new(),
    })
}

/// How an online tagger was trained (the model's `learner`): the loss, the regularizer and
/// its constant, the steps, the averaged epoch kept, then `more` (e.g. how parts were mixed).
pub(crate) fn spom_description(
    loss: StructLoss,
    params: &OnlineParams,
    best_epoch: usize,
    calibrated: bool,
    more: &str,
) -> String {
    format!(
        "SPOM, {} loss, reg {}, lambda {:e}, {} eta0 {}{}, averaged epoch {best_epoch}{}{more}",
        loss,
        params.reg,
        params.lambda,
        params.steps.schedule,
        params.steps.eta0,
        if calibrated { " (calibrated)" } else { "" },
        if params.steps.shards > 1 {
            format!(", {} shards", params.steps.shards)
        } else if params.steps.batch > 1 {
            format!(", batch {}", params.steps.batch)
        } else {
            String::new()
        },
    )
}

/// Multi-template learning by the cutting plane (mao-tsang Alg. 1 with the squared block
/// norm `q`) over `examples`, the sentences featurized by `featurizer` and decoded by
/// `separator` (in this process, or parts of them elsewhere: `estimator::tagger::parts`).
/// The fit's index seconds and development scores are left for the caller.
pub(crate) fn fit_cutting_plane(
    featurizer: TagFeaturizer,
    examples: &cutting_plane::Examples,
    (p, q): (&CuttingPlaneParams, f64),
    separator: &mut dyn cutting_plane::Separator,
    observer: &dyn Observer,
) -> Result<TaggerFit> {
    let t = Instant::now();
    let (cp, run, mu) = cutting_plane::fit_block_norm_with(examples, p, q, separator, observer)?;
    let train_seconds = t.elapsed().as_secs_f64();
    let model = TaggerModel {
        selection: None,
        featurizer,
        weights: cp.weights,
        template_weights: mu,
        loss: Some(StructLoss::Hinge),
        learner: format!(
            "cutting plane, q {q}, C {:e}, epsilon {:e}, {} cuts",
            p.c, p.epsilon, cp.cuts
        ),
    };
    Ok(TaggerFit {
        model,
        run,
        best_epoch: 0,
        dev_scores: Vec::new(),
        index_seconds: 0.0,
        train_seconds,
        cuts: cp.cuts,
        objective: cp.objective,
        objectives: Vec::new(),
        decode_seconds: cp.decode_seconds,
        master_seconds: cp.master_seconds,
        eta0: f64::NAN,
        calibration: Vec::new(),
    })
}

/// The online learner of a tagger: SPOM with one step size for every coordinate (Alg. 1,
/// the proximal steps of the group regularizers), or per-coordinate AdaGrad steps (l2).
enum Spom<'a> {
    Prox(OnlineLearner<'a, StructuredOnline<'a, TaggingTask>>),
    AdaGrad(AdagradLearner<'a, TaggingTask>),
}

impl Spom<'_> {
    fn epoch_observed(&mut self, observer: &dyn Observer) -> Result<Control> {
        match self {
            Spom::Prox(l) => Ok(l.epoch_observed(observer)),
            Spom::AdaGrad(l) => l.epoch_observed(observer),
        }
    }

    fn restart_average(&mut self) {
        match self {
            Spom::Prox(l) => l.restart_average(),
            Spom::AdaGrad(l) => l.restart_average(),
        }
    }

    /// The weights in the global layout (averaged when asked).
    fn weights(&mut self, averaged: bool) -> Vec<f64> {
        match self {
            Spom::Prox(l) => l.state().explicit_values(averaged).concat(),
            Spom::AdaGrad(l) => l.weights(averaged),
        }
    }

    /// The learner at an epoch boundary, for a checkpoint (SPOM's state by reference).
    fn snapshot(&mut self) -> SpomSnapshotRef<'_> {
        match self {
            Spom::Prox(l) => SpomSnapshotRef::Prox(l.snapshot()),
            Spom::AdaGrad(l) => SpomSnapshotRef::AdaGrad(l.snapshot()),
        }
    }

    /// Puts the learner where [`Self::snapshot`] found one of the same kind.
    fn restore(&mut self, snap: SpomSnapshot) -> Result<()> {
        match (self, snap) {
            (Spom::Prox(l), SpomSnapshot::Prox(v)) => l.restore(v),
            (Spom::AdaGrad(l), SpomSnapshot::AdaGrad(a)) => l.restore(a),
            _ => Err(Error::data(
                "the checkpoint holds the state of the other step schedule (adagrad or not)",
            )),
        }
    }
}

/// The learner family name of the template tagger's online checkpoints.
pub(crate) const CHECKPOINT_FAMILY: &str = "tagger";

/// A tagger's online learner at an epoch boundary, as saved.
#[derive(Serialize)]
enum SpomSnapshotRef<'a> {
    Prox(crate::solver::online::engine::SnapshotRef<'a>),
    AdaGrad(crate::solver::adagrad::AdagradSnapshot),
}

/// A [`SpomSnapshotRef`] read back.
#[derive(Deserialize)]
enum SpomSnapshot {
    Prox(crate::solver::online::engine::EngineSnapshot),
    AdaGrad(crate::solver::adagrad::AdagradSnapshot),
}

/// [`online_epochs`] at an epoch boundary (a checkpoint): the learner, the epochs done, the
/// best epoch so far, the development scores and the tracked objectives (NaN as `None`).
#[derive(Serialize, Deserialize)]
struct SavedEpochs<L> {
    learner: L,
    epoch: usize,
    best: Option<(f64, usize, Vec<f64>)>,
    dev_scores: Vec<f64>,
    objectives: Vec<Option<f64>>,
    kept_objective: Option<f64>,
}

/// What [`online_epochs`] found.
struct OnlineRun {
    /// The kept epoch and its (averaged) weights; epoch 0 and the weights reached when
    /// stopped before the first epoch ended.
    best: (usize, Vec<f64>),
    best_score: f64,
    dev_scores: Vec<f64>,
    objectives: Vec<f64>,
    kept_objective: f64,
    eval_seconds: f64,
    info: RunInfo,
}

/// SPOM for `params.epochs` epochs on the tagging task, keeping the epoch whose weights tag
/// `dev` best (the last without `dev`); with `track`, the training objective of each epoch's
/// weights.
#[allow(clippy::too_many_arguments)]
fn online_epochs(
    task: &TaggingTask,
    featurizer: &TagFeaturizer,
    loss: StructLoss,
    params: &OnlineParams,
    spec: &TaggerSpec,
    track: bool,
    dev: Option<&[ColumnSentence]>,
    observer: &dyn Observer,
) -> Result<OnlineRun> {
    let adapter = StructuredOnline::new(task, loss)?;
    let one = OnlineParams {
        steps: OnlineSteps {
            epochs: 1,
            ..params.steps
        },
        ..params.clone()
    };
    let mut learner = if params.steps.schedule == StepSchedule::AdaGrad {
        Spom::AdaGrad(AdagradLearner::new(task, loss, &one)?)
    } else {
        Spom::Prox(OnlineLearner::new(&adapter, &[], one)?)
    };
    let mut rec = RunRecorder::new(StepUnit::Epoch, Some(params.steps.epochs as u64));
    let mut best: Option<(f64, usize, Vec<f64>)> = None;
    let mut dev_scores = Vec::new();
    let mut status = RunStatus::Completed;
    let mut eval_seconds = 0.0;
    let mut objectives = Vec::new();
    let mut kept_objective = f64::NAN;
    let ck = observer.checkpoints();
    let mut first = 1;
    if let Some(bytes) = ck
        .map(|c| c.resume(CHECKPOINT_FAMILY))
        .transpose()?
        .flatten()
    {
        let saved: SavedEpochs<SpomSnapshot> =
            crate::checkpoint::decode(CHECKPOINT_FAMILY, &bytes)?;
        if saved.epoch > params.steps.epochs {
            return Err(Error::data(format!(
                "the checkpoint is after epoch {}, beyond the run's {} epochs",
                saved.epoch, params.steps.epochs
            )));
        }
        learner.restore(saved.learner)?;
        if let Some(c) = ck {
            c.resumed_at(saved.epoch as u64)?;
        }
        first = saved.epoch + 1;
        best = saved.best;
        dev_scores = saved.dev_scores;
        objectives = saved
            .objectives
            .iter()
            .map(|o| o.unwrap_or(f64::NAN))
            .collect();
        kept_objective = saved.kept_objective.unwrap_or(f64::NAN);
        rec.set_steps(saved.epoch as u64);
    }
    for epoch in first..=params.steps.epochs {
        if learner.epoch_observed(observer)? == Control::Stop {
            status = RunStatus::Cancelled;
            break;
        }
        if epoch == spec.average_from {
            learner.restart_average();
        }
        let e = Instant::now();
        let w = learner.weights(params.steps.averaging);
        if track {
            objectives.push(online_objective(task, loss, params, &w)?);
        }
        let score = match dev {
            Some(d) => {
                let m = TaggerModel {
                    selection: None,
                    featurizer: featurizer.clone(),
                    weights: w.clone(),
                    learner: String::new(),
                    template_weights: Vec::new(),
                    loss: Some(loss),
                };
                let s = m.dev_score_with(d, &spec.memory)?;
                dev_scores.push(s);
                s
            }
            None => epoch as f64,
        };
        if best.as_ref().is_none_or(|(b, _, _)| score > *b) {
            best = Some((score, epoch, w));
            kept_objective = objectives.last().copied().unwrap_or(f64::NAN);
        }
        eval_seconds += e.elapsed().as_secs_f64();
        if let Some(c) = ck.filter(|c| epoch < params.steps.epochs && c.due(epoch as u64)) {
            let finite = |v: f64| v.is_finite().then_some(v);
            let saved = SavedEpochs {
                learner: learner.snapshot(),
                epoch,
                best: best.clone(),
                dev_scores: dev_scores.clone(),
                objectives: objectives.iter().map(|&o| finite(o)).collect(),
                kept_objective: finite(kept_objective),
            };
            c.save(
                CHECKPOINT_FAMILY,
                epoch as u64,
                &crate::checkpoint::encode(&saved)?,
            )?;
        }
        if rec.step(None, observer) == Control::Stop {
            if epoch < params.steps.epochs {
                status = RunStatus::Cancelled;
            }
            break;
        }
    }
    // Stopped before the first epoch ended: the weights reached so far, as epoch 0 (the
    // run contract: a stop returns the model reached, with status cancelled).
    let best = best.unwrap_or_else(|| (f64::NAN, 0, learner.weights(params.steps.averaging)));
    let best_score = best.0;
    Ok(OnlineRun {
        best: (best.1, best.2),
        best_score,
        dev_scores,
        objectives,
        kept_objective,
        eval_seconds,
        info: rec.finish(status),
    })
}

/// The online learner's objective `lambda Omega(w) + (1/N) sum L` at explicit weights `w`
/// (global layout): the batch objective of [`batch::objective`] for the l2 regularizer, the
/// group-norm regularizer's value otherwise.
fn online_objective(
    task: &TaggingTask,
    loss: StructLoss,
    params: &OnlineParams,
    w: &[f64],
) -> Result<f64> {
    let data = batch::objective(task, loss, 0.0, w)?;
    let norms = crate::task::structured::explicit_layout(task).group_norms(w);
    let omega = crate::solver::online::regularizer_value(&params.reg, &norms);
    Ok(params.lambda * omega + data)
}

/// What a tagger answers when asked for rows or numeric sequences.
fn tagger_refusal() -> Error {
    Error::unsupported(
        "a template tagger labels sentences in the column format: use the tagger \
         (Model::Tagger) on column data",
    )
}

impl TrainedModel for TaggerModel {
    fn task(&self) -> Option<TaskKind> {
        None
    }

    fn selection(&self) -> Option<&crate::select::SelectionRecord> {
        self.selection.as_ref()
    }

    fn set_selection(&mut self, record: crate::select::SelectionRecord) {
        self.selection = Some(record);
    }

    /// The labels are bytes in the data's encoding: decoded as UTF-8, with U+FFFD for bytes
    /// that are not.
    fn classes(&self) -> Cow<'_, [String]> {
        Cow::Owned(
            self.featurizer
                .labels
                .iter()
                .map(|l| String::from_utf8_lossy(l).into_owned())
                .collect(),
        )
    }

    fn rows_refusal(&self) -> Option<Error> {
        Some(tagger_refusal())
    }

    fn predict_sequences(
        &self,
        _x: MatrixRef<'_>,
        _spans: &[Range<usize>],
        _limit: &MemoryLimit,
    ) -> Result<Vec<Vec<usize>>> {
        Err(tagger_refusal())
    }

    fn validate(&self) -> Result<()> {
        TaggerModel::validate(self).map_err(|e| Error::model("<model>", e))
    }

    fn summary(&self) -> Summary {
        let norms = self.group_norms();
        let kept = norms.iter().filter(|&&n| n > 0.0).count();
        let f = &self.featurizer;
        let layout = f.layout();
        let mut settings = vec![
            ("learner".to_string(), self.learner.clone()),
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
            classes: self.classes().into_owned(),
            n_features: f.n_columns,
            settings,
            headline: format!(
                "{kept} of {} templates kept (non-zero weights); {} pruned",
                norms.len(),
                norms.len() - kept
            ),
            columns: if self.template_weights.is_empty() {
                vec!["norm".into(), "weights".into()]
            } else {
                vec!["norm".into(), "weights".into(), "mu".into()]
            },
            ranked: false,
            kernels: self
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
                        .chain(self.template_weights.get(g).copied())
                        .collect(),
                })
                .collect(),
            notes: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::columns::parse_columns;
    use crate::prox::RegSpec;
    use std::path::Path;

    /// A toy chunking task the features determine: the label is the second column's tag
    /// with B-/I- by whether the previous token has the same tag.
    fn data() -> Vec<ColumnSentence> {
        let mut text = String::new();
        let words = ["a", "b", "c", "d"];
        let mut state = 11u64;
        for _ in 0..40 {
            let n = 3 + (state % 5) as usize;
            let mut prev = "";
            for _ in 0..n {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let w = words[(state >> 40) as usize % 4];
                let tag = if w == "a" || w == "b" { "X" } else { "Y" };
                let bi = if prev == tag { "I" } else { "B" };
                text.push_str(&format!("{w} {tag} {bi}-{tag}\n"));
                prev = tag;
            }
            text.push('\n');
        }
        parse_columns(text.as_bytes(), Path::new("toy"))
            .unwrap()
            .sentences
    }

    fn templates() -> TemplateFile {
        TemplateFile::parse(
            b"U00:%x[0,0]\nU01:%x[-1,1]/%x[0,1]\nU02:%x[0,1]\nB\n",
            Path::new("t"),
        )
        .unwrap()
    }

    /// Bigram templates with macros through the model: a CRF tagger trained with them (its
    /// model file round-trips) decodes and gives marginals equal to enumerating every label
    /// sequence of short sentences with `s(y) = <w, Phi(x, y)>` (Phi from the task's parts).
    /// Token marginals `P(y_k = l)` by enumeration: every labelling `all[m]` of `n` tokens
    /// with its score `scores[m]`, normalized by softmax (row-major `n x l`); also the
    /// largest score and `z = sum_m exp(scores[m] - max)`.
    fn token_marginals(
        all: &[Vec<usize>],
        scores: &[f64],
        n: usize,
        l: usize,
    ) -> (Vec<f64>, f64, f64) {
        let max = scores.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let z: f64 = scores.iter().map(|v| (v - max).exp()).sum();
        let mut token = vec![0.0; n * l];
        for (y, v) in all.iter().zip(scores) {
            for (k, &yk) in y.iter().enumerate() {
                token[k * l + yk] += (v - max).exp() / z;
            }
        }
        (token, max, z)
    }

    #[test]
    fn bigram_macro_models_match_enumeration_and_round_trip() {
        use crate::task::structured::{explicit_feature, StructuredTask};
        let d = data();
        let tpl = TemplateFile::parse(
            b"U00:%x[0,0]\nB\nB01:%x[0,1]\nB02:%x[-1,0]/%x[0,0]\n",
            Path::new("t"),
        )
        .unwrap();
        let fit = fit_tagger(
            &d[..30],
            None,
            tpl,
            &TaggerSpec {
                learner: TaggerLearner::Online {
                    params: OnlineParams {
                        reg: RegSpec::L2,
                        lambda: 1e-3,
                        steps: OnlineSteps {
                            epochs: 5,
                            averaging: true,
                            ..OnlineSteps::default()
                        },
                        ..OnlineParams::default()
                    },
                    loss: StructLoss::Crf,
                },
                min_count: 1,
                track_objective: false,
                average_from: 0,
                calibrate: None,
                memory: MemoryLimit::default(),
            },
            &(),
        )
        .unwrap();
        let m = fit.model;
        assert!(m.featurizer.has_bigram_macros());
        let json = serde_json::to_string(&m).unwrap();
        let back: TaggerModel = serde_json::from_str(&json).unwrap();
        assert_eq!(back, m);
        assert!(back.validate().is_ok());
        assert_eq!(serde_json::to_string(&back).unwrap(), json);
        let short: Vec<ColumnSentence> = d.iter().filter(|s| s.len() <= 5).cloned().collect();
        assert!(short.len() >= 5);
        let task = TaggingTask::new(&m.featurizer, &short).unwrap();
        let l = m.featurizer.n_labels();
        let got = m.marginals(&short).unwrap();
        let ids = m.tag_ids(&short).unwrap();
        for (i, s) in short.iter().enumerate() {
            let n = s.len();
            let all: Vec<Vec<usize>> = (0..l.pow(n as u32))
                .map(|code| (0..n).map(|k| (code / l.pow(k as u32)) % l).collect())
                .collect();
            let scores: Vec<f64> = all
                .iter()
                .map(|y| explicit_feature(&task, i, &task.joint_feature(i, y)).dot(&m.weights))
                .collect();
            let (token, max, z) = token_marginals(&all, &scores, n, l);
            let g = &got[i];
            for (a, b) in g.token.iter().zip(&token) {
                assert!((a - b).abs() < 1e-9, "{a} vs {b}");
            }
            let best = all.iter().position(|y| *y == ids[i]).unwrap();
            assert!((scores[best] - max).abs() < 1e-9);
            assert!((g.sequence - (scores[best] - max).exp() / z).abs() < 1e-9);
        }
    }

    #[test]
    fn every_learner_learns_the_toy_task() {
        let d = data();
        let (train, test) = d.split_at(30);
        let online = |reg, loss| TaggerLearner::Online {
            params: OnlineParams {
                reg,
                lambda: 1e-3,
                steps: OnlineSteps {
                    epochs: 10,
                    averaging: true,
                    ..OnlineSteps::default()
                },
                ..OnlineParams::default()
            },
            loss,
        };
        for learner in [
            online(RegSpec::L2, StructLoss::Hinge),
            online(RegSpec::L2, StructLoss::Crf),
            online(RegSpec::L21Sq, StructLoss::Hinge),
            TaggerLearner::CuttingPlane {
                params: CuttingPlaneParams {
                    c: 10.0,
                    ..CuttingPlaneParams::default()
                },
                q: 2.0,
            },
            TaggerLearner::Lbfgs {
                params: LbfgsParams {
                    lambda: 1e-3,
                    ..LbfgsParams::default()
                },
            },
        ] {
            let spec = TaggerSpec {
                learner: learner.clone(),
                min_count: 1,
                track_objective: false,
                average_from: 0,
                calibrate: None,
                memory: MemoryLimit::default(),
            };
            let fit = fit_tagger(train, Some(test), templates(), &spec, &()).unwrap();
            let (s, unseen) = fit.model.evaluate(test).unwrap();
            assert_eq!(unseen, 0);
            assert!(s.accuracy() > 0.99, "{learner:?}: {}", s.accuracy());
            assert!(s.chunks.f1() > 0.99);
            assert!(fit.model.validate().is_ok());
            assert_eq!(fit.model.group_names()[0], "B");
            let json = serde_json::to_string(&fit.model).unwrap();
            let back: TaggerModel = serde_json::from_str(&json).unwrap();
            assert_eq!(
                back.tag_ids(test).unwrap(),
                fit.model.tag_ids(test).unwrap()
            );
        }
    }

    /// Marginals against enumerating every label sequence of short sentences, with random
    /// weights: `s(y) = <w, Phi(x, y)>` from the task's joint feature (not the decoder's
    /// scores), `p(y) = exp s(y) / sum exp s(y')`, token marginals as sums of `p(y)`.
    #[test]
    fn marginals_match_enumeration_and_hinge_models_are_refused() {
        use rand::{Rng, SeedableRng};
        let d = data();
        let f = TagFeaturizer::fit(templates(), &d, 1).unwrap();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let weights: Vec<f64> = (0..f.layout().total())
            .map(|_| rng.gen_range(-1.5..1.5))
            .collect();
        let short: Vec<ColumnSentence> = d.iter().filter(|s| s.len() <= 5).cloned().collect();
        assert!(short.len() >= 5);
        let mut m = TaggerModel {
            selection: None,
            featurizer: f.clone(),
            weights: weights.clone(),
            learner: String::new(),
            template_weights: Vec::new(),
            loss: Some(StructLoss::Crf),
        };
        let got = m.marginals(&short).unwrap();
        let l = f.n_labels();
        assert!(f.has_bigram());
        for (s, g) in short.iter().zip(&got) {
            let n = s.len();
            let all: Vec<Vec<usize>> = (0..l.pow(n as u32))
                .map(|code| (0..n).map(|k| (code / l.pow(k as u32)) % l).collect())
                .collect();
            // s(y): each token's kept expansions with its label, each label pair.
            let rows = f.rows(s);
            let nt = f.offset();
            let scores: Vec<f64> = all
                .iter()
                .map(|y| {
                    let mut v = 0.0;
                    for (k, &yk) in y.iter().enumerate() {
                        for &(j, x) in rows.row(k) {
                            v += x * weights[nt + j * l + yk];
                        }
                        if k > 0 {
                            v += weights[y[k - 1] * l + yk];
                        }
                    }
                    v
                })
                .collect();
            let (token, max, z) = token_marginals(&all, &scores, n, l);
            for (a, b) in g.token.iter().zip(&token) {
                assert!((a - b).abs() < 1e-9, "{a} vs {b}");
            }
            for k in 0..n {
                let sum: f64 = g.token[k * l..(k + 1) * l].iter().sum();
                assert!((sum - 1.0).abs() < 1e-9);
            }
            // The decoded sequence has the highest score (two may tie).
            let best = all.iter().position(|y| *y == g.best).unwrap();
            assert!(scores[best] >= max - 1e-9, "{} < {max}", scores[best]);
            let p_best = (scores[best] - max).exp() / z;
            assert!(
                (g.sequence - p_best).abs() < 1e-9,
                "{} vs {p_best}",
                g.sequence
            );
        }
        // The decoder's labels are the marginals' best sequence.
        let ids = m.tag_ids(&short).unwrap();
        assert!(ids.iter().zip(&got).all(|(a, g)| *a == g.best));
        m.loss = Some(StructLoss::Hinge);
        let e = m.marginals(&short).unwrap_err().to_string();
        assert!(e.contains("CRF loss"), "{e}");
        // Older model files have no loss field: the learner's description tells.
        m.loss = None;
        m.learner = "SPOM, crf loss, reg l2, lambda 1e-3, averaged epoch 3".into();
        assert!(m.marginals(&short).is_ok());
        m.learner = "cutting plane, q 2, C 1e0, epsilon 1e-3, 5 cuts".into();
        assert!(m.marginals(&short).is_err());
    }

    /// SPOM's per-epoch objectives (tracked on request) never go below the L-BFGS optimum of
    /// the same l2 CRF, and the L-BFGS run reports its own objective.
    #[test]
    fn online_objectives_stay_above_the_batch_optimum() {
        let d = data();
        let (train, test) = d.split_at(30);
        let lambda = 1e-2;
        let spec = |learner| TaggerSpec {
            learner,
            min_count: 1,
            track_objective: true,
            average_from: 0,
            calibrate: None,
            memory: MemoryLimit::default(),
        };
        let restarted = |learner| TaggerSpec {
            average_from: 2,
            ..spec(learner)
        };
        let batch = fit_tagger(
            train,
            None,
            templates(),
            &spec(TaggerLearner::Lbfgs {
                params: LbfgsParams {
                    lambda,
                    ..LbfgsParams::default()
                },
            }),
            &(),
        )
        .unwrap();
        assert_eq!(batch.objectives, vec![batch.objective]);
        let online = fit_tagger(
            train,
            Some(test),
            templates(),
            &spec(TaggerLearner::Online {
                params: OnlineParams {
                    reg: RegSpec::L2,
                    lambda,
                    steps: OnlineSteps {
                        epochs: 5,
                        averaging: true,
                        ..OnlineSteps::default()
                    },
                    ..OnlineParams::default()
                },
                loss: StructLoss::Crf,
            }),
            &(),
        )
        .unwrap();
        assert_eq!(online.objectives.len(), 5);
        for f in &online.objectives {
            assert!(*f >= batch.objective - 1e-12, "{f} < {}", batch.objective);
        }
        assert_eq!(online.objective, online.objectives[online.best_epoch - 1]);
        // Averaged SGD: Bottou's schedule, the average restarted after epoch 2 (the weights
        // kept after epoch 2 are then the last iterate, those after epoch 3 a new average).
        let asgd = fit_tagger(
            train,
            Some(test),
            templates(),
            &restarted(TaggerLearner::Online {
                params: OnlineParams {
                    reg: RegSpec::L2,
                    lambda,
                    steps: OnlineSteps {
                        eta0: 0.1,
                        schedule: crate::solver::online::StepSchedule::Bottou,
                        epochs: 5,
                        averaging: true,
                        ..OnlineSteps::default()
                    },
                    ..OnlineParams::default()
                },
                loss: StructLoss::Crf,
            }),
            &(),
        )
        .unwrap();
        assert_eq!(asgd.objectives.len(), 5);
        for f in &asgd.objectives {
            assert!(*f >= batch.objective - 1e-12, "{f} < {}", batch.objective);
        }
        // Per-coordinate AdaGrad steps, the same restart: the tracked objective is the
        // objective of the kept weights, never below the optimum, and falls with the epochs
        // once the average restarted.
        let ada_params = OnlineParams {
            reg: RegSpec::L2,
            lambda,
            steps: OnlineSteps {
                eta0: 0.5,
                schedule: crate::solver::online::StepSchedule::AdaGrad,
                epochs: 6,
                averaging: true,
                ..OnlineSteps::default()
            },
            ..OnlineParams::default()
        };
        let ada = fit_tagger(
            train,
            Some(test),
            templates(),
            &restarted(TaggerLearner::Online {
                params: ada_params.clone(),
                loss: StructLoss::Crf,
            }),
            &(),
        )
        .unwrap();
        assert_eq!(ada.objectives.len(), 6);
        for f in &ada.objectives {
            assert!(*f >= batch.objective - 1e-12, "{f} < {}", batch.objective);
        }
        assert!(
            ada.objectives[5] < ada.objectives[2],
            "{:?}",
            ada.objectives
        );
        let task = TaggingTask::new(&ada.model.featurizer, train).unwrap();
        let kept = batch::objective(&task, StructLoss::Crf, lambda, &ada.model.weights).unwrap();
        assert!((kept - ada.objective).abs() <= 1e-12 * kept);
        assert!(
            ada.model.learner.contains("adagrad"),
            "{}",
            ada.model.learner
        );
        // A group regularizer with per-coordinate steps: refused, before any epoch.
        let l21 = fit_tagger(
            train,
            None,
            templates(),
            &spec(TaggerLearner::Online {
                params: OnlineParams {
                    reg: RegSpec::L21Sq,
                    ..ada_params
                },
                loss: StructLoss::Hinge,
            }),
            &(),
        );
        assert!(matches!(l21, Err(Error::Unsupported(_))), "{l21:?}");
    }

    /// The calibration keeps the grid's best `eta0` by the dev score of its short runs (or
    /// the training objective without dev sentences), and the full run is then the plain
    /// run at that `eta0`, to the bit. Bad grids are refused.
    #[test]
    fn calibration_keeps_the_best_step_and_trains_with_it() {
        let d = data();
        let (train, test) = d.split_at(30);
        let params = OnlineParams {
            reg: RegSpec::L2,
            lambda: 1e-2,
            steps: OnlineSteps {
                epochs: 4,
                averaging: true,
                schedule: crate::solver::online::StepSchedule::Bottou,
                ..OnlineSteps::default()
            },
            ..OnlineParams::default()
        };
        let learner = |eta0| TaggerLearner::Online {
            params: OnlineParams {
                steps: OnlineSteps {
                    eta0,
                    ..params.steps
                },
                ..params.clone()
            },
            loss: StructLoss::Crf,
        };
        let spec = |eta0, calibrate| TaggerSpec {
            learner: learner(eta0),
            min_count: 1,
            track_objective: false,
            average_from: 2,
            calibrate,
            memory: MemoryLimit::default(),
        };
        let grid = Calibration {
            eta0_grid: vec![1e-7, 0.5],
            epochs: 2,
        };
        for dev in [Some(test), None] {
            let cal =
                fit_tagger(train, dev, templates(), &spec(1.0, Some(grid.clone())), &()).unwrap();
            assert_eq!(cal.calibration.len(), 2);
            // The first best score wins (the toy's dev accuracy may tie: decoding ignores
            // the weights' scale); without dev sentences the objective tells them apart.
            let (e0, s0) = cal.calibration[0];
            let (e1, s1) = cal.calibration[1];
            assert_eq!(cal.eta0, if s1 > s0 { e1 } else { e0 });
            if dev.is_none() {
                assert_eq!(cal.eta0, 0.5, "{:?}", cal.calibration);
            }
            let plain = fit_tagger(train, dev, templates(), &spec(cal.eta0, None), &()).unwrap();
            assert_eq!(cal.model.weights, plain.model.weights);
            assert_eq!(plain.eta0, cal.eta0);
            assert!(plain.calibration.is_empty());
            let want = format!("eta0 {} (calibrated)", cal.eta0);
            assert!(cal.model.learner.contains(&want), "{}", cal.model.learner);
        }
        // Without dev sentences the score is minus the training objective of the short run.
        let short = fit_tagger(
            train,
            None,
            templates(),
            &TaggerSpec {
                learner: TaggerLearner::Online {
                    params: OnlineParams {
                        steps: OnlineSteps {
                            eta0: 0.5,
                            epochs: 2,
                            ..params.steps
                        },
                        ..params.clone()
                    },
                    loss: StructLoss::Crf,
                },
                track_objective: true,
                ..spec(0.5, None)
            },
            &(),
        )
        .unwrap();
        let cal = fit_tagger(
            train,
            None,
            templates(),
            &spec(1.0, Some(grid.clone())),
            &(),
        )
        .unwrap();
        assert_eq!(cal.calibration[1].1, -short.objective);
        for bad in [
            Calibration {
                eta0_grid: vec![],
                epochs: 2,
            },
            Calibration {
                eta0_grid: vec![0.1, -1.0],
                epochs: 2,
            },
            Calibration {
                eta0_grid: vec![0.1],
                epochs: 0,
            },
        ] {
            assert!(
                fit_tagger(train, Some(test), templates(), &spec(1.0, Some(bad)), &()).is_err()
            );
        }
    }
}
