//! The expansion counts a featurizer is built from ([`TagCounts`]), taken over any part of
//! the training sentences and merged: the featurizer of sentences held apart (parts on other
//! processes or machines) is then the featurizer of all of them together. Counts are kept
//! per template sorted by their expansion's key, so merging is a sorted merge and gives the
//! same counts in any order and grouping of the parts.

use super::{expansion_key, for_each_expansion, TagFeaturizer, Template, TemplateFile};
use crate::data::columns::ColumnSentence;
use crate::error::{Error, Result};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// An expansion's key and the times it was seen.
type KeyCount = (u64, u64);

/// What some training sentences (labels in the last column) say of a featurizer: their
/// width, their labels, and every template expansion with its count.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TagCounts {
    templates: TemplateFile,
    /// Columns of every token, the label's included; `None` for no tokens.
    width: Option<usize>,
    /// Sorted by their bytes, once each.
    labels: Vec<Vec<u8>>,
    /// Per unigram template (file order): its expansions' keys with counts, sorted by key.
    unigrams: Vec<Vec<KeyCount>>,
    /// Per bigram template with macros (file order), its expansions at tokens `i >= 1`.
    bigrams: Vec<Vec<KeyCount>>,
}

/// The keys of `all`, sorted, each with the times it occurs.
fn run_lengths(mut all: Vec<u64>) -> Vec<KeyCount> {
    all.sort_unstable();
    let mut out: Vec<KeyCount> = Vec::new();
    for k in all {
        match out.last_mut() {
            Some((last, n)) if *last == k => *n += 1,
            _ => out.push((k, 1)),
        }
    }
    out
}

/// The sorted merge of two sorted key counts, counts of equal keys added.
fn merge_counts(a: Vec<KeyCount>, b: Vec<KeyCount>) -> Vec<KeyCount> {
    let mut out = Vec::with_capacity(a.len().max(b.len()));
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].0.cmp(&b[j].0) {
            std::cmp::Ordering::Less => {
                out.push(a[i]);
                i += 1;
            }
            std::cmp::Ordering::Greater => {
                out.push(b[j]);
                j += 1;
            }
            std::cmp::Ordering::Equal => {
                out.push((a[i].0, a[i].1 + b[j].1));
                i += 1;
                j += 1;
            }
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

impl TagCounts {
    /// The counts of `train` (labels in the last column) under `templates`: an error for
    /// tokens without an observation column, of different widths, or with fewer columns
    /// than the templates read.
    pub(crate) fn of(templates: TemplateFile, train: &[ColumnSentence]) -> Result<TagCounts> {
        let width = train
            .iter()
            .flat_map(|s| s.tokens.first())
            .map(Vec::len)
            .next();
        if let Some(width) = width {
            if width < 2 {
                return Err(Error::data(
                    "training tokens need an observation column and a label column (found 1 \
                     column)",
                ));
            }
            templates.check_columns(width - 1)?;
            if let Some(s) = train
                .iter()
                .find(|s| s.tokens.iter().any(|t| t.len() != width))
            {
                return Err(Error::data(format!(
                    "the sentence at line {} has tokens with other than {width} columns",
                    s.line
                )));
            }
        }
        let mut labels: Vec<Vec<u8>> = train
            .iter()
            .flat_map(|s| s.last_column())
            .map(<[u8]>::to_vec)
            .collect();
        labels.sort_unstable();
        labels.dedup();
        let dicts = templates.keys.is_some();
        // The `j`-th template's expansions (reading feature dicts' key `j` when `dict`) at
        // tokens `first..`.
        let count = |(j, t): (usize, &&Template), dict: bool, first: usize| {
            let mut all: Vec<u64> = Vec::new();
            let mut buf = Vec::new();
            for s in train {
                for pos in first..s.len() {
                    for_each_expansion(s, pos, (j, t), dict, &mut buf, |e, _| {
                        all.push(expansion_key(e));
                    });
                }
            }
            run_lengths(all)
        };
        let unigrams: Vec<&Template> = templates.unigrams().collect();
        let bigrams: Vec<&Template> = templates.bigram_macros().collect();
        let unigrams = unigrams
            .par_iter()
            .enumerate()
            .map(|(j, t)| count((j, t), dicts, 0))
            .collect();
        let bigrams = bigrams
            .par_iter()
            .enumerate()
            .map(|(j, t)| count((j, t), false, 1))
            .collect();
        Ok(TagCounts {
            templates,
            width,
            labels,
            unigrams,
            bigrams,
        })
    }

    /// The counts of two parts' sentences together: an error when they were taken under
    /// other templates or from tokens of other widths.
    pub fn merge(self, other: TagCounts) -> Result<TagCounts> {
        if self.templates != other.templates {
            return Err(Error::data(
                "counts taken under other templates cannot be merged (every part of the \
                 sentences is counted under the same templates)",
            ));
        }
        let width = match (self.width, other.width) {
            (Some(a), Some(b)) if a != b => {
                return Err(Error::data(format!(
                    "one part of the training sentences has tokens of {a} columns, another of \
                     {b}"
                )))
            }
            (a, b) => a.or(b),
        };
        let mut labels = self.labels;
        labels.extend(other.labels);
        labels.sort_unstable();
        labels.dedup();
        let merged = |a: Vec<Vec<KeyCount>>, b: Vec<Vec<KeyCount>>| -> Vec<Vec<KeyCount>> {
            a.into_iter()
                .zip(b)
                .map(|(a, b)| merge_counts(a, b))
                .collect()
        };
        Ok(TagCounts {
            width,
            labels,
            unigrams: merged(self.unigrams, other.unigrams),
            bigrams: merged(self.bigrams, other.bigrams),
            templates: self.templates,
        })
    }

    /// Checks counts read from elsewhere: one list per template, each sorted by key with
    /// positive counts, the labels sorted and distinct, a width the templates can read.
    pub(crate) fn validate(&self) -> std::result::Result<(), String> {
        let unigrams = self.templates.unigrams().count();
        let bigrams = self.templates.bigram_macros().count();
        if self.unigrams.len() != unigrams || self.bigrams.len() != bigrams {
            return Err(format!(
                "counts of {} unigram and {} bigram templates for templates with {unigrams} and \
                 {bigrams}",
                self.unigrams.len(),
                self.bigrams.len()
            ));
        }
        let sorted =
            |c: &[KeyCount]| c.windows(2).all(|p| p[0].0 < p[1].0) && c.iter().all(|k| k.1 > 0);
        if !self.unigrams.iter().chain(&self.bigrams).all(|c| sorted(c)) {
            return Err(
                "expansion counts must be sorted by key, each key once, counts positive".into(),
            );
        }
        if !self.labels.windows(2).all(|p| p[0] < p[1]) {
            return Err("labels must be sorted and distinct".into());
        }
        match self.width {
            Some(w) if w < 2 => Err(format!("tokens of {w} columns (at least 2)")),
            Some(w) => self
                .templates
                .check_columns(w - 1)
                .map_err(|e| e.to_string()),
            None if !self.labels.is_empty() || self.unigrams.iter().any(|c| !c.is_empty()) => {
                Err("counts with no tokens hold labels or expansions".into())
            }
            None => Ok(()),
        }
    }

    /// The featurizer of the counted sentences: the labels, and the expansions seen at
    /// least `min_count` times (CRF++ `-f`). An error for fewer than 2 labels, no tokens,
    /// or a `min_count` that keeps no expansion of any template.
    pub(crate) fn featurizer(self, min_count: usize) -> Result<TagFeaturizer> {
        let width = self
            .width
            .ok_or_else(|| Error::data("no training tokens"))?;
        if self.labels.len() < 2 {
            return Err(Error::data(format!(
                "sequence labeling needs at least 2 labels in training, found {}",
                self.labels.len()
            )));
        }
        // The kept keys of a template and the count of its most frequent expansion.
        let kept = |counts: &[KeyCount]| -> (Vec<u64>, u64) {
            let keys = counts
                .iter()
                .filter(|c| c.1 >= min_count.max(1) as u64)
                .map(|c| c.0)
                .collect();
            (keys, counts.iter().map(|c| c.1).max().unwrap_or(0))
        };
        let (keys, most): (Vec<Vec<u64>>, Vec<u64>) = self.unigrams.iter().map(|c| kept(c)).unzip();
        let (bigram_keys, bigram_most): (Vec<Vec<u64>>, Vec<u64>) =
            self.bigrams.iter().map(|c| kept(c)).unzip();
        // A count cutoff that keeps no expansion of any template leaves a model that does
        // not read the tokens (at most the label pairs): refused, with the largest count.
        let observed = keys.iter().chain(&bigram_keys);
        if min_count > 1 && observed.clone().count() > 0 && observed.clone().all(Vec::is_empty) {
            let largest = most.iter().chain(&bigram_most).max().copied().unwrap_or(0);
            let names: Vec<&str> = self
                .templates
                .unigrams()
                .chain(self.templates.bigram_macros())
                .map(|t| t.text.as_str())
                .collect();
            return Err(Error::param(
                "min_count",
                min_count,
                format!(
                    "at most {largest}, the count of the most frequent template expansion in \
                     training: {min_count} keeps no expansion of any template ({}), and the \
                     model would not read the tokens",
                    names.join(", ")
                ),
            ));
        }
        Ok(TagFeaturizer {
            n_columns: width - 1,
            templates: self.templates,
            labels: self.labels,
            keys,
            bigram_keys,
            min_count: min_count.max(1),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The slow twin of the merge: counting the keys of both lists one by one.
    fn by_hand(a: &[KeyCount], b: &[KeyCount]) -> Vec<KeyCount> {
        let mut all: std::collections::BTreeMap<u64, u64> = Default::default();
        for &(k, n) in a.iter().chain(b) {
            *all.entry(k).or_default() += n;
        }
        all.into_iter().collect()
    }

    #[test]
    fn merged_counts_are_the_counts_of_both_lists() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(3);
        for _ in 0..200 {
            let mut list =
                |len: usize| run_lengths((0..len).map(|_| rng.gen_range(0..12u64)).collect());
            let (a, b) = (list(7), list(4));
            assert_eq!(merge_counts(a.clone(), b.clone()), by_hand(&a, &b));
            assert_eq!(merge_counts(b.clone(), a.clone()), by_hand(&a, &b));
        }
        assert_eq!(run_lengths(vec![5, 1, 5, 5]), vec![(1, 1), (5, 3)]);
    }
}
