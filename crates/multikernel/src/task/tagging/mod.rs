//! Sequence labeling with CRF++ feature templates (mao-tsang Sec. 3; martins2011 Sec. 4.1
//! with templates as groups): a first-order chain whose unigram parts are a token's template
//! features conjoined with its label, and whose label-pair parts are the bigram template `B`.
//!
//! Each template is one feature group:
//! - the bigram template: one group of `L x L` label-pair weights (when the file has a `B`
//!   line; every plain `B` line shares it);
//! - each unigram template `t`: one weight per (expansion seen in training, label), i.e.
//!   `n_t x L` weights, `n_t` the template's distinct expansions.
//!
//! - each bigram template with macros `b` (`B01:%x[0,0]`): one weight per (expansion at
//!   token `i` seen in training, label pair `(y_{i-1}, y_i)`), `m_b x L x L` weights (CRF++'s
//!   bigram features; positions `i >= 1`).
//!
//! Parameters are laid out as `[B (L x L) | U_1 (n_1 x L) | U_2 (n_2 x L) | ... | B_1 (m_1 x L
//! x L) | ...]` (the macro bigram groups last, so models without them keep their layout); expansion
//! `j` of the observation index (all unigram templates, in order) with label `y` is at
//! `offset + j L + y`. A token is stored once, as the sparse row of its expansions, and the
//! task scores its `L` unigram parts by [`crate::task::structured::PartScorer::Conjoined`]:
//!
//! ```text
//! s(y) = sum_i sum_{t} theta_t[x_t(i), y_i] + sum_{i>0} theta_B[y_{i-1}, y_i]
//!        + sum_{i>0} sum_{b} theta_b[x_b(i), y_{i-1}, y_i].
//! ```
//!
//! The macro bigram features are explicit parts of the task (one per position `i >= 1` and
//! label pair, its kept expansions); decoding and marginals then use position-dependent
//! label-pair scores ([`crate::task::chain::viterbi_at`], `forward_backward_at`).
//!
//! Expansions are the strings CRF++ builds (`U01:word/_B-1`), kept as 64-bit hashes
//! (FNV-1a, then the splitmix64 finalizer): stable across platforms and releases, so a saved
//! model reads the same features. Expansions never seen in training are dropped at
//! prediction, as CRF++ does. Labels are sorted by their bytes (CRF++'s order).

pub(crate) mod convert;
pub(crate) mod counts;
pub(crate) mod dicts;
pub(crate) mod eval;
pub(crate) mod keys;
pub(crate) mod templates;

pub use counts::TagCounts;
pub use dicts::FeatureValue;
pub(crate) use dicts::TokenFeatures;
pub use eval::{is_chunk_scheme, ChunkCounts, TagScores};
pub(crate) use keys::FeatureKeys;
pub use templates::TemplateFile;
pub(crate) use templates::{Template, TemplateKind};

use crate::data::columns::ColumnSentence;
use crate::error::{Error, Result};
use crate::features::{GroupLayout, SparseRows, SparseVector};
use crate::task::chain::{
    forward_backward, forward_backward_at, hamming, loss_augmented_viterbi,
    loss_augmented_viterbi_at, viterbi, viterbi_at,
};
use crate::task::online::{ExplicitGroup, GroupRole};
use crate::task::structured::{
    Augmented, Conjoined, Counts, PartMap, PartMarginals, StructLoss, StructuredTask,
};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// What a tagger trains on: sentences in the column format (labels in the last column),
/// development sentences that choose the epoch, the templates, the expansion count cutoff.
#[derive(Debug, Clone, PartialEq)]
pub struct TagData {
    pub train: Vec<ColumnSentence>,
    pub dev: Vec<ColumnSentence>,
    pub templates: TemplateFile,
    /// Minimum count of a template expansion in training (CRF++ `-f`; 1 keeps all).
    pub min_count: usize,
}

impl TagData {
    pub fn new(train: Vec<ColumnSentence>, templates: TemplateFile) -> TagData {
        TagData {
            train,
            dev: Vec::new(),
            templates,
            min_count: 1,
        }
    }
}

/// Labels in a model file: each a JSON string when it is UTF-8 (the form of model files
/// before labels were bytes, which still load), else an array of its bytes, so that labels
/// in EUC-JP, Shift_JIS or Latin-1 round-trip unchanged.
pub(crate) mod label_bytes {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    #[derive(Serialize, Deserialize)]
    #[serde(untagged)]
    enum Label {
        Text(String),
        Bytes(Vec<u8>),
    }

    pub(crate) fn serialize<S: Serializer>(labels: &[Vec<u8>], s: S) -> Result<S::Ok, S::Error> {
        let out: Vec<Label> = labels
            .iter()
            .map(|l| match std::str::from_utf8(l) {
                Ok(t) => Label::Text(t.to_string()),
                Err(_) => Label::Bytes(l.clone()),
            })
            .collect();
        out.serialize(s)
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Vec<u8>>, D::Error> {
        Ok(Vec::<Label>::deserialize(d)?
            .into_iter()
            .map(|l| match l {
                Label::Text(t) => t.into_bytes(),
                Label::Bytes(b) => b,
            })
            .collect())
    }
}

/// The stable 64-bit key of an expansion (its bytes; for UTF-8 data the same key as the
/// string's, so older model files keep their features).
pub(crate) fn expansion_key(s: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in s {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^ (h >> 31)
}

/// Maps sentences in the column format to feature rows: the templates, the label set and
/// every unigram template's expansions seen in training.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TagFeaturizer {
    pub templates: TemplateFile,
    /// Observation columns (the training data's columns minus the label).
    pub n_columns: usize,
    /// The labels, sorted by their bytes (index = label slot). Stored in the model file as
    /// JSON strings when they are UTF-8 (as older model files have them), as arrays of
    /// bytes otherwise (`label_bytes`).
    #[serde(with = "label_bytes")]
    pub labels: Vec<Vec<u8>>,
    /// Per unigram template (file order): the sorted keys of its expansions; expansion `k`
    /// of template `t` is observation feature `starts[t] + k`.
    keys: Vec<Vec<u64>>,
    /// Per bigram template with macros (file order): the sorted keys of its expansions at
    /// tokens `i >= 1`; expansion `k` of template `b` is bigram feature `bstarts[b] + k`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    bigram_keys: Vec<Vec<u64>>,
    /// Minimum count of an expansion in training (CRF++ `-f`).
    pub min_count: usize,
}

/// Calls `f(expansion, value)` for each expansion of template `t` (the `j`-th unigram or
/// bigram template) at token `pos` of `s`: the template's one expansion, value 1; with
/// feature dicts (`dicts`), template `j` reads key `j`: one expansion per attribute in the
/// token's cell, the text of the template over an empty cell then the attribute's suffix,
/// with the attribute's value (none for an empty cell; [`dicts::cell_entries`]).
fn for_each_expansion(
    s: &ColumnSentence,
    pos: usize,
    (j, t): (usize, &Template),
    dicts: bool,
    buf: &mut Vec<u8>,
    mut f: impl FnMut(&[u8], f64),
) {
    if !dicts {
        t.expand(s.len(), pos, |i, c| &s.tokens[i][c], buf);
        f(buf, 1.0);
        return;
    }
    t.expand(1, 0, |_, _| &[][..], buf);
    let prefix = buf.len();
    for (suffix, x) in dicts::cell_entries(&s.tokens[pos][j]) {
        buf.truncate(prefix);
        buf.extend_from_slice(suffix);
        f(buf, x);
    }
}

/// One row per position of `positions`: the kept expansions of `templates` there with
/// their values ([`for_each_expansion`]), template `t`'s expansion `k` at column `k` past
/// the kept expansions of the templates before it (`keys[t]`, sorted).
fn expansion_rows<'a>(
    s: &ColumnSentence,
    positions: std::ops::Range<usize>,
    templates: impl Iterator<Item = &'a Template>,
    keys: &[Vec<u64>],
    dicts: bool,
) -> SparseRows {
    let templates: Vec<&Template> = templates.collect();
    let mut rows = SparseRows::new();
    let mut buf = Vec::new();
    let mut entries = Vec::with_capacity(keys.len());
    for pos in positions {
        entries.clear();
        let mut start = 0;
        for (j, (t, keys)) in templates.iter().zip(keys).enumerate() {
            for_each_expansion(s, pos, (j, t), dicts, &mut buf, |e, v| {
                if let Ok(k) = keys.binary_search(&expansion_key(e)) {
                    entries.push((start + k, v));
                }
            });
            start += keys.len();
        }
        // Several attributes of one key in a token come in the cell's order.
        if dicts {
            entries.sort_unstable_by_key(|e| e.0);
        }
        rows.push_entries(&entries);
    }
    rows
}

impl TagFeaturizer {
    /// Collects the label set and the expansions of every unigram template over `train`
    /// (labels in the last column), keeping expansions seen at least `min_count` times.
    pub fn fit(
        templates: TemplateFile,
        train: &[ColumnSentence],
        min_count: usize,
    ) -> Result<TagFeaturizer> {
        TagCounts::of(templates, train)?.featurizer(min_count)
    }

    pub(crate) fn n_labels(&self) -> usize {
        self.labels.len()
    }

    /// Whether the label-pair (bigram) group exists.
    pub(crate) fn has_bigram(&self) -> bool {
        self.templates.has_bigram()
    }

    /// Global index of observation feature 0 with label 0 (after the bigram group).
    pub(crate) fn offset(&self) -> usize {
        if self.has_bigram() {
            self.n_labels() * self.n_labels()
        } else {
            0
        }
    }

    /// Expansions kept per unigram template.
    pub(crate) fn features_per_template(&self) -> Vec<usize> {
        self.keys.iter().map(Vec::len).collect()
    }

    /// The templates (unigram, then bigram with macros) that kept no expansion: none was
    /// seen `min_count` times in training (or, with feature dicts, the template's cell was
    /// always empty). They add nothing to the model.
    pub(crate) fn empty_templates(&self) -> Vec<&Template> {
        let unigrams = self.templates.unigrams().zip(&self.keys);
        let bigrams = self.templates.bigram_macros().zip(&self.bigram_keys);
        unigrams
            .chain(bigrams)
            .filter(|(_, k)| k.is_empty())
            .map(|(t, _)| t)
            .collect()
    }

    /// Whether bigram templates with macros are present.
    pub(crate) fn has_bigram_macros(&self) -> bool {
        !self.bigram_keys.is_empty()
    }

    /// Global index of bigram feature 0 with label pair (0, 0) (after the unigram groups).
    pub(crate) fn bigram_offset(&self) -> usize {
        self.offset() + self.keys.iter().map(Vec::len).sum::<usize>() * self.n_labels()
    }

    /// The bigram feature rows of a sentence: row `i - 1` holds the kept expansions of the
    /// bigram templates with macros at token `i` (`i >= 1`, value 1); `n - 1` rows.
    pub(crate) fn bigram_rows(&self, s: &ColumnSentence) -> SparseRows {
        expansion_rows(
            s,
            1..s.len(),
            self.templates.bigram_macros(),
            &self.bigram_keys,
            false,
        )
    }

    /// The position-dependent label-pair scores of a sentence (`(n - 1) x L x L`): the
    /// plain bigram weights `plain` (`L x L`, or none) plus, at each token `i >= 1`, the
    /// weights of its bigram expansions, read from the global `weights`.
    pub(crate) fn positional_transitions(
        &self,
        s: &ColumnSentence,
        plain: Option<&[f64]>,
        weights: &[f64],
    ) -> Vec<f64> {
        let l2 = self.n_labels() * self.n_labels();
        let base = self.bigram_offset();
        let rows = self.bigram_rows(s);
        let mut out = vec![0.0; s.len().saturating_sub(1) * l2];
        for (r, t) in out.chunks_mut(l2).enumerate() {
            if let Some(p) = plain {
                t.copy_from_slice(p);
            }
            for &(j, x) in rows.row(r) {
                for (o, w) in t
                    .iter_mut()
                    .zip(&weights[base + j * l2..base + (j + 1) * l2])
                {
                    *o += x * w;
                }
            }
        }
        out
    }

    /// Explicit label-pair parts of a sentence of `n` tokens: one per token `i >= 1` and label
    /// pair with bigram templates with macros, `(n - 1) L^2`; 0 without them.
    pub(crate) fn pair_parts_of(&self, n: usize) -> usize {
        if self.has_bigram_macros() {
            n.saturating_sub(1)
                .saturating_mul(self.n_labels())
                .saturating_mul(self.n_labels())
        } else {
            0
        }
    }

    /// Parts of a sentence of `n` tokens ([`TaggingTask`]'s `n_parts`): the plain label
    /// pairs (`L^2`, with a `B` line), the explicit label-pair parts and `n L` unigram parts.
    pub(crate) fn parts_of(&self, n: usize) -> usize {
        let l = self.n_labels();
        let plain = if self.has_bigram() { l * l } else { 0 };
        plain
            .saturating_add(self.pair_parts_of(n))
            .saturating_add(n.saturating_mul(l))
    }

    /// The label-pair parts [`TaggingTask::new`] builds for `sentences` (which must have the
    /// observation columns: [`TagFeaturizer::check_sentences`]), counted without building
    /// them: the positions (tokens `i >= 1`) and the heap bytes, exactly (`L^2` rows per
    /// position, each with the position's kept bigram expansions: [`SparseRows::bytes_for`]).
    /// `(0, 0)` without bigram templates with macros.
    pub fn pair_part_bytes(&self, sentences: &[ColumnSentence]) -> (usize, usize) {
        if !self.has_bigram_macros() {
            return (0, 0);
        }
        let l2 = self.n_labels().saturating_mul(self.n_labels());
        sentences
            .par_iter()
            .map(|s| {
                let b = self.bigram_rows(s);
                let bytes = SparseRows::bytes_for(
                    b.n_rows().saturating_mul(l2),
                    b.n_entries().saturating_mul(l2),
                );
                (b.n_rows(), bytes)
            })
            .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1.saturating_add(b.1)))
    }

    /// The parameter groups: the bigram group (if any), then one per unigram template.
    pub(crate) fn groups(&self) -> Vec<ExplicitGroup> {
        let l = self.n_labels();
        let mut out = Vec::new();
        if self.has_bigram() {
            let name = self
                .templates
                .templates
                .iter()
                .find(|t| t.kind == TemplateKind::Bigram)
                .map_or("B".to_string(), |t| t.text.clone());
            out.push(ExplicitGroup {
                name,
                len: l * l,
                role: GroupRole::Regularized,
            });
        }
        for (t, k) in self.templates.unigrams().zip(&self.keys) {
            out.push(ExplicitGroup {
                name: t.text.clone(),
                len: k.len() * l,
                role: GroupRole::Regularized,
            });
        }
        for (t, k) in self.templates.bigram_macros().zip(&self.bigram_keys) {
            out.push(ExplicitGroup {
                name: t.text.clone(),
                len: k.len() * l * l,
                role: GroupRole::Regularized,
            });
        }
        out
    }

    pub(crate) fn layout(&self) -> GroupLayout {
        GroupLayout::new(self.groups().iter().map(|g| g.len))
    }

    /// Index of the group of unigram template `u` (0-based among the unigram templates).
    #[cfg(test)]
    pub(crate) fn unigram_group(&self, u: usize) -> usize {
        u + usize::from(self.has_bigram())
    }

    /// The feature rows of a sentence: one row per token, its kept expansions (value 1).
    /// Tokens need at least [`TagFeaturizer::n_columns`] columns (checked by the caller).
    pub(crate) fn rows(&self, s: &ColumnSentence) -> SparseRows {
        expansion_rows(
            s,
            0..s.len(),
            self.templates.unigrams(),
            &self.keys,
            self.templates.keys.is_some(),
        )
    }

    /// The attributes of `sentences` the featurizer kept, each once in order of first
    /// occurrence: its name and its observation feature (expansion `k` of unigram template
    /// `t` is feature `k` past the kept expansions of the templates before it, as in
    /// [`TagFeaturizer::rows`]). With feature dicts, named as python-crfsuite names them
    /// (`k`, `k:v`, or the attribute's own name; [`dicts::attribute_name`]); with columns,
    /// the template's expansion (`U01:the`).
    pub(crate) fn attributes(&self, sentences: &[ColumnSentence]) -> Vec<(String, usize)> {
        let names = self.templates.keys.as_ref().map(|k| &k.names);
        let dicts = names.is_some();
        let templates: Vec<&Template> = self.templates.unigrams().collect();
        let mut seen = std::collections::HashSet::new();
        let mut out = Vec::new();
        let mut buf = Vec::new();
        for s in sentences {
            for pos in 0..s.len() {
                let mut start = 0;
                for (j, (t, keys)) in templates.iter().zip(&self.keys).enumerate() {
                    let prefix = if dicts {
                        t.expand(1, 0, |_, _| &[][..], &mut buf);
                        buf.len()
                    } else {
                        0
                    };
                    for_each_expansion(s, pos, (j, t), dicts, &mut buf, |e, _| {
                        if let Ok(k) = keys.binary_search(&expansion_key(e)) {
                            if seen.insert(start + k) {
                                let name = match names {
                                    Some(n) => dicts::attribute_name(&n[j], &e[prefix..]),
                                    None => String::from_utf8_lossy(e).into_owned(),
                                };
                                out.push((name, start + k));
                            }
                        }
                    });
                    start += keys.len();
                }
            }
        }
        out
    }

    /// The label slot of each token's last column; `None` for a label not seen in training.
    pub(crate) fn label_ids(&self, s: &ColumnSentence) -> Vec<Option<usize>> {
        s.last_column()
            .into_iter()
            .map(|l| self.labels.binary_search_by(|x| x.as_slice().cmp(l)).ok())
            .collect()
    }

    /// Checks that every token has the observation columns the templates read.
    pub(crate) fn check_sentences(&self, sentences: &[ColumnSentence]) -> Result<()> {
        for s in sentences {
            if let Some(t) = s.tokens.iter().find(|t| t.len() < self.n_columns) {
                return Err(Error::data(format!(
                    "the sentence at line {} has a token with {} columns; the model reads {} \
                     observation columns",
                    s.line,
                    t.len(),
                    self.n_columns
                )));
            }
        }
        Ok(())
    }

    /// Checks a featurizer read from a file.
    pub(crate) fn validate(&self) -> std::result::Result<(), String> {
        let u = self.templates.unigrams().count();
        if self.keys.len() != u {
            return Err(format!(
                "the tagger has expansions for {} unigram templates; it has {u}",
                self.keys.len()
            ));
        }
        if self.labels.len() < 2 || self.labels.windows(2).any(|w| w[0] >= w[1]) {
            return Err("the tagger's labels are not at least 2 sorted distinct strings".into());
        }
        if let Some(k) = &self.templates.keys {
            k.validate(u)?;
            if k.names.len() != self.n_columns {
                return Err("the tagger's feature keys are not its observation columns".into());
            }
        }
        let b = self.templates.bigram_macros().count();
        if self.bigram_keys.len() != b {
            return Err(format!(
                "the tagger has expansions for {} bigram templates with macros; it has {b}",
                self.bigram_keys.len()
            ));
        }
        if self
            .keys
            .iter()
            .chain(&self.bigram_keys)
            .any(|k| k.windows(2).any(|w| w[0] >= w[1]))
        {
            return Err("the tagger's expansion keys are not sorted and distinct".into());
        }
        if self
            .templates
            .templates
            .iter()
            .any(|t| t.columns_needed() > self.n_columns)
        {
            return Err("a template reads a column the tagger does not have".into());
        }
        Ok(())
    }
}

/// The chain over sentences with template features, as a `StructuredTask`: parts
/// `[B (L x L, when present) | unigram parts (n x L, conjoined)]`, Hamming cost.
#[derive(Debug, Clone)]
pub struct TaggingTask {
    rows: Vec<SparseRows>,
    /// Per sentence, with bigram templates with macros: one explicit part per token `i >= 1`
    /// and label pair, its global feature indices (`(n - 1) L^2` rows); empty otherwise.
    pair_parts: Vec<SparseRows>,
    gold: Vec<Vec<usize>>,
    n_labels: usize,
    bigram: bool,
    groups: Vec<ExplicitGroup>,
    /// Cost of one wrong label.
    pub cost: f64,
}

impl TaggingTask {
    /// The task over labelled sentences; an error for a label the featurizer has not seen.
    pub fn new(featurizer: &TagFeaturizer, sentences: &[ColumnSentence]) -> Result<TaggingTask> {
        featurizer.check_sentences(sentences)?;
        let gold = sentences
            .iter()
            .map(|s| {
                featurizer
                    .label_ids(s)
                    .into_iter()
                    .collect::<Option<Vec<usize>>>()
                    .ok_or_else(|| {
                        Error::data(format!(
                            "the sentence at line {} has a label not seen in training",
                            s.line
                        ))
                    })
            })
            .collect::<Result<Vec<_>>>()?;
        if let Some(s) = sentences.iter().find(|s| s.is_empty()) {
            return Err(Error::data(format!(
                "the sentence at line {} is empty",
                s.line
            )));
        }
        let rows = sentences.par_iter().map(|s| featurizer.rows(s)).collect();
        let l = featurizer.n_labels();
        let pair_parts = if featurizer.has_bigram_macros() {
            let base = featurizer.bigram_offset();
            sentences
                .par_iter()
                .map(|s| {
                    let b = featurizer.bigram_rows(s);
                    // Exactly the bytes `TagFeaturizer::pair_part_bytes` counts (the memory
                    // guard's estimate): no reallocation.
                    let mut parts =
                        SparseRows::with_capacity(b.n_rows() * l * l, b.n_entries() * l * l);
                    let mut entries = Vec::new();
                    for r in 0..b.n_rows() {
                        for pair in 0..l * l {
                            entries.clear();
                            entries.extend(
                                b.row(r).iter().map(|&(j, x)| (base + j * l * l + pair, x)),
                            );
                            parts.push_entries(&entries);
                        }
                    }
                    parts
                })
                .collect()
        } else {
            Vec::new()
        };
        Ok(TaggingTask {
            rows,
            pair_parts,
            gold,
            n_labels: featurizer.n_labels(),
            bigram: featurizer.has_bigram(),
            groups: featurizer.groups(),
            cost: 1.0,
        })
    }

    /// Heap bytes of the explicit label-pair parts of every sentence (what
    /// [`TagFeaturizer::pair_part_bytes`] estimates before they are built).
    pub fn pair_part_heap_bytes(&self) -> usize {
        self.pair_parts.iter().map(SparseRows::heap_bytes).sum()
    }

    /// Explicit label-pair parts of sentence `i` (0 without bigram templates with macros).
    fn n_pair_parts(&self, i: usize) -> usize {
        self.pair_parts.get(i).map_or(0, SparseRows::n_rows)
    }

    /// The position-dependent label-pair scores (`(n - 1) x L x L`) from part scores: the
    /// plain pair parts (if any) plus each position's explicit pair parts.
    fn positional(&self, i: usize, scores: &[f64]) -> Vec<f64> {
        let l2 = self.n_labels * self.n_labels;
        let nt = self.n_trans();
        let pairs = &scores[nt..nt + self.n_pair_parts(i)];
        let mut out = pairs.to_vec();
        if self.bigram {
            for t in out.chunks_mut(l2) {
                t.iter_mut().zip(&scores[..l2]).for_each(|(o, p)| *o += p);
            }
        }
        out
    }

    fn n_trans(&self) -> usize {
        if self.bigram {
            self.n_labels * self.n_labels
        } else {
            0
        }
    }

    /// Label-pair and unigram scores of a sentence from its part scores (zeros for the
    /// label pairs without a bigram template).
    fn split<'s>(&self, scores: &'s [f64]) -> (std::borrow::Cow<'s, [f64]>, &'s [f64]) {
        let (t, u) = scores.split_at(self.n_trans());
        debug_assert!(
            self.pair_parts.is_empty(),
            "positional label pairs: use positional"
        );
        if self.bigram {
            (std::borrow::Cow::Borrowed(t), u)
        } else {
            (
                std::borrow::Cow::Owned(vec![0.0; self.n_labels * self.n_labels]),
                u,
            )
        }
    }
}

/// The best label sequence of a sentence from its unigram scores (`n x L`) and label-pair
/// scores (`L x L`): Viterbi.
pub(crate) fn decode_chain(unary: &[f64], trans: &[f64], n_labels: usize) -> Vec<usize> {
    viterbi(unary, trans, n_labels).1
}

impl StructuredTask for TaggingTask {
    type Output = Vec<usize>;

    fn n_examples(&self) -> usize {
        self.rows.len()
    }
    fn n_parts(&self, i: usize) -> usize {
        self.n_trans() + self.n_pair_parts(i) + self.rows[i].n_rows() * self.n_labels
    }
    fn part_map(&self, i: usize) -> PartMap<'_> {
        let nt = self.n_trans();
        PartMap {
            points: 0..0,
            n_labels: self.n_labels,
            parameters: 0..nt,
            explicit: self.pair_parts.get(i),
            conjoined: Some(Conjoined {
                rows: &self.rows[i],
                n_labels: self.n_labels,
                offset: nt,
            }),
        }
    }
    fn explicit_groups(&self) -> Vec<ExplicitGroup> {
        self.groups.clone()
    }
    fn gold(&self, i: usize) -> &Vec<usize> {
        &self.gold[i]
    }
    fn joint_feature(&self, i: usize, y: &Vec<usize>) -> SparseVector {
        let l = self.n_labels;
        let nt = self.n_trans();
        let np = self.n_pair_parts(i);
        let mut pairs: Vec<(usize, f64)> = y
            .iter()
            .enumerate()
            .map(|(k, &v)| (nt + np + k * l + v, 1.0))
            .collect();
        if self.bigram {
            pairs.extend(y.windows(2).map(|p| (p[0] * l + p[1], 1.0)));
        }
        if np > 0 {
            pairs.extend(
                y.windows(2)
                    .enumerate()
                    .map(|(k, p)| (nt + k * l * l + p[0] * l + p[1], 1.0)),
            );
        }
        debug_assert_eq!(y.len(), self.rows[i].n_rows());
        SparseVector::from_pairs(pairs)
    }
    fn decode(&self, i: usize, scores: &[f64]) -> Vec<usize> {
        if !self.pair_parts.is_empty() {
            let unary = &scores[self.n_trans() + self.n_pair_parts(i)..];
            return viterbi_at(unary, &self.positional(i, scores), self.n_labels).1;
        }
        let (trans, unary) = self.split(scores);
        viterbi(unary, &trans, self.n_labels).1
    }
    fn loss_augmented_decode(&self, i: usize, scores: &[f64]) -> Augmented<Vec<usize>> {
        let (score, output) = if self.pair_parts.is_empty() {
            let (trans, unary) = self.split(scores);
            loss_augmented_viterbi(unary, &trans, self.n_labels, &self.gold[i], self.cost)
        } else {
            let unary = &scores[self.n_trans() + self.n_pair_parts(i)..];
            let t = self.positional(i, scores);
            loss_augmented_viterbi_at(unary, &t, self.n_labels, &self.gold[i], self.cost)
        };
        Augmented {
            feature: self.joint_feature(i, &output),
            output,
            score,
        }
    }
    fn cost(&self, i: usize, y: &Vec<usize>) -> f64 {
        self.cost * hamming(y, &self.gold[i]) as f64
    }
    fn marginals(&self, i: usize, scores: &[f64]) -> Option<PartMarginals> {
        if !self.pair_parts.is_empty() {
            let l2 = self.n_labels * self.n_labels;
            let unary = &scores[self.n_trans() + self.n_pair_parts(i)..];
            let m = forward_backward_at(unary, &self.positional(i, scores), self.n_labels);
            let mut expected = Vec::with_capacity(self.n_parts(i));
            if self.bigram {
                let mut plain = vec![0.0; l2];
                for e in m.edge.chunks(l2) {
                    plain.iter_mut().zip(e).for_each(|(p, v)| *p += v);
                }
                expected.extend_from_slice(&plain);
            }
            expected.extend_from_slice(&m.edge);
            expected.extend_from_slice(&m.node);
            return Some(PartMarginals {
                log_z: m.log_z,
                expected,
            });
        }
        let (trans, unary) = self.split(scores);
        let m = forward_backward(unary, &trans, self.n_labels);
        let mut expected = if self.bigram { m.edge } else { Vec::new() };
        expected.extend_from_slice(&m.node);
        Some(PartMarginals {
            log_z: m.log_z,
            expected,
        })
    }
    fn metric(&self, i: usize, y: &Vec<usize>) -> Counts {
        let gold = &self.gold[i];
        Counts::new(gold.len() - hamming(y, gold), gold.len())
    }
    /// The number of tokens times the cost (hinge) or times `log L` (CRF): over the number
    /// of sentences, the average sentence length times it ([`StructuredTask::loss_at_zero`]).
    fn loss_at_zero_total(&self, loss: StructLoss) -> f64 {
        let tokens: usize = self.gold.iter().map(Vec::len).sum();
        let per = match loss {
            StructLoss::Hinge => self.cost,
            StructLoss::Crf => (self.n_labels as f64).ln(),
        };
        tokens as f64 * per
    }
}

#[cfg(test)]
mod tests;
