//! The trained tagger ([`TaggerModel`]): Viterbi tags, marginals by forward-backward,
//! the group norms and summaries, as a [`TrainedModel`].

use super::LabelMemory;
use crate::data::columns::ColumnSentence;
use crate::data::MatrixRef;
use crate::error::{Error, Result};
use crate::kernel::MemoryLimit;
use crate::solver::cutting_plane::PRUNE_SHARE;
use crate::task::chain::{
    forward_backward, forward_backward_at, stable_marginals, viterbi, viterbi_at,
};
use crate::task::structured::StructLoss;
use crate::task::tagging::{decode_chain, is_chunk_scheme, TagFeaturizer, TagScores};
use crate::task::TaskKind;
use crate::trained::{KernelRow, Summary, TrainedModel};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::ops::Range;

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
    /// (the cutting plane's `PRUNE_SHARE`, below which it prunes), otherwise those with a non-zero group norm.
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
