//! The arc-factored tree task over explicit features: the test task of the structured seam
//! (the module docs of `task::tree`). It trains on the synthetic trees of `synthetic` in the
//! unit tests (`estimator/tests/structured.rs`, the seam end to end); the parser of
//! `pipeline::treebank` uses `task::parse` instead.

use super::{is_tree, Enumeration, TreeDecoder, TreeTask};
use crate::error::{Error, Result};
use crate::features::{Alphabet, SparseVector};
use crate::task::online::ExplicitGroup;
use serde::{Deserialize, Serialize};

/// The root's word and tag in features.
pub(crate) const ROOT: &str = "<root>";

/// A sentence with its tree: `words[k]`, `tags[k]` and `heads[k]` belong to token `k + 1`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct TreeSentence {
    pub words: Vec<String>,
    pub tags: Vec<String>,
    pub heads: Vec<usize>,
}

impl TreeSentence {
    pub(crate) fn len(&self) -> usize {
        self.words.len()
    }

    fn word(&self, t: usize) -> &str {
        if t == 0 {
            ROOT
        } else {
            &self.words[t - 1]
        }
    }

    fn tag(&self, t: usize) -> &str {
        if t == 0 {
            ROOT
        } else {
            &self.tags[t - 1]
        }
    }

    /// Checks the lengths and that `heads` is a tree rooted at 0.
    #[cfg(test)]
    pub(crate) fn check(&self) -> Result<()> {
        let n = self.len();
        if self.tags.len() != n || self.heads.len() != n {
            return Err(Error::shape(
                "tags and heads of a sentence",
                n,
                if self.tags.len() != n {
                    self.tags.len()
                } else {
                    self.heads.len()
                },
            ));
        }
        if !is_tree(&self.heads) {
            return Err(Error::data(format!(
                "heads {:?} do not form a tree rooted at 0",
                self.heads
            )));
        }
        Ok(())
    }
}

/// An arc feature template: one group of explicit parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub(crate) enum ArcTemplate {
    /// The head's word.
    HeadWord,
    /// The modifier's word.
    ModWord,
    /// Head word and modifier word.
    HeadModWord,
    /// Head tag and modifier tag.
    HeadModTag,
    /// Direction of the arc and its length (capped at 4).
    DirDist,
}

impl ArcTemplate {
    /// Every template, in group order.
    #[cfg(test)]
    pub(crate) const ALL: [ArcTemplate; 5] = [
        ArcTemplate::HeadWord,
        ArcTemplate::ModWord,
        ArcTemplate::HeadModWord,
        ArcTemplate::HeadModTag,
        ArcTemplate::DirDist,
    ];

    #[cfg(test)]
    pub(crate) fn name(self) -> &'static str {
        match self {
            ArcTemplate::HeadWord => "hw",
            ArcTemplate::ModWord => "mw",
            ArcTemplate::HeadModWord => "hw,mw",
            ArcTemplate::HeadModTag => "ht,mt",
            ArcTemplate::DirDist => "dir,dist",
        }
    }

    /// The template's feature string for arc `h -> m` of `s`.
    pub(crate) fn feature(self, s: &TreeSentence, h: usize, m: usize) -> String {
        match self {
            ArcTemplate::HeadWord => s.word(h).to_string(),
            ArcTemplate::ModWord => s.word(m).to_string(),
            ArcTemplate::HeadModWord => format!("{}|{}", s.word(h), s.word(m)),
            ArcTemplate::HeadModTag => format!("{}|{}", s.tag(h), s.tag(m)),
            ArcTemplate::DirDist => {
                let dir = if h < m { 'R' } else { 'L' };
                format!("{dir}{}", h.abs_diff(m).min(4))
            }
        }
    }
}

/// Maps arcs to sparse features: one alphabet per template, grown on training sentences and
/// then frozen (features never seen in training are dropped); global indices follow the
/// templates' order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct ArcFeaturizer {
    pub templates: Vec<ArcTemplate>,
    pub alphabets: Vec<Alphabet>,
}

impl ArcFeaturizer {
    /// Grows one alphabet per template over every arc of `train`, then freezes them.
    pub(crate) fn fit(templates: &[ArcTemplate], train: &[TreeSentence]) -> ArcFeaturizer {
        let mut alphabets = vec![Alphabet::new(); templates.len()];
        for s in train {
            let n = s.len();
            for h in 0..=n {
                for m in 1..=n {
                    if h != m {
                        for (t, a) in templates.iter().zip(alphabets.iter_mut()) {
                            a.intern(&t.feature(s, h, m));
                        }
                    }
                }
            }
        }
        alphabets.iter_mut().for_each(Alphabet::freeze);
        ArcFeaturizer {
            templates: templates.to_vec(),
            alphabets,
        }
    }

    /// The parameter layout: one group per template.
    #[cfg(test)]
    pub(crate) fn layout(&self) -> crate::features::GroupLayout {
        crate::features::GroupLayout::new(self.alphabets.iter().map(Alphabet::len))
    }

    /// One regularized group per template, named after it.
    #[cfg(test)]
    pub(crate) fn groups(&self) -> Vec<ExplicitGroup> {
        self.templates
            .iter()
            .zip(&self.alphabets)
            .map(|(t, a)| ExplicitGroup {
                name: t.name().to_string(),
                len: a.len(),
                role: crate::task::online::GroupRole::Regularized,
            })
            .collect()
    }

    /// The features of arc `h -> m` of `s` (global indices of [`ArcFeaturizer::layout`]).
    #[cfg(test)]
    pub(crate) fn arc_features(&self, s: &TreeSentence, h: usize, m: usize) -> SparseVector {
        let mut offset = 0;
        let mut pairs = Vec::with_capacity(self.templates.len());
        for (t, a) in self.templates.iter().zip(&self.alphabets) {
            if let Some(j) = a.get(&t.feature(s, h, m)) {
                pairs.push((offset + j, 1.0));
            }
            offset += a.len();
        }
        SparseVector::from_pairs(pairs)
    }
}

impl TreeTask<Enumeration> {
    /// The task over `sentences` with the featurizer's arc features, decoded by enumeration.
    pub(crate) fn new(sentences: Vec<TreeSentence>, featurizer: &ArcFeaturizer) -> Result<Self> {
        TreeTask::with_decoder(sentences, featurizer, Enumeration)
    }
}

impl<D: TreeDecoder> TreeTask<D> {
    /// Checks every sentence (a tree, at most `decoder.max_tokens()` tokens, not empty) and
    /// computes its arc features once.
    pub(crate) fn with_decoder(
        sentences: Vec<TreeSentence>,
        featurizer: &ArcFeaturizer,
        decoder: D,
    ) -> Result<Self> {
        for (i, s) in sentences.iter().enumerate() {
            s.check()
                .map_err(|e| Error::data(format!("sentence {i}: {e}")))?;
        }
        let features = sentences
            .iter()
            .map(|s| {
                let n1 = s.len() + 1;
                (0..n1 * n1)
                    .map(|r| {
                        let (h, m) = (r / n1, r % n1);
                        if m == 0 || h == m {
                            SparseVector::new()
                        } else {
                            featurizer.arc_features(s, h, m)
                        }
                    })
                    .collect()
            })
            .collect();
        let heads = sentences.into_iter().map(|s| s.heads).collect();
        TreeTask::from_features(heads, features, featurizer.groups(), decoder)
    }
}
