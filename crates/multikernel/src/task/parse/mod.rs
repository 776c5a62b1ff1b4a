//! Dependency parsing with feature templates as groups (martins2011 Sec. 4.2): arc-factored
//! trees over real sentences, one parameter group per arc template, so the group-sparse
//! regularizers of the online learner select templates.
//!
//! - [`templates`]: the template language and the default template file;
//! - [`arcs`]: arc features from templates, indexed once per sentence;
//! - [`ParseSentence`]: what the parser reads of a sentence (the CoNLL-U columns the
//!   templates use, gold heads and relations when known);
//! - [`tree_task`]: sentences and a featurizer as a [`TreeTask`] for any learner of the
//!   structured seam;
//! - [`eval`]: attachment scores as parsers report them (punctuation excluded, and without
//!   the `ig` arcs of the Turkish treebank).

pub(crate) mod arcs;
pub(crate) mod eval;
pub(crate) mod templates;

pub(crate) use arcs::ArcFeaturizer;
pub use arcs::Support;
pub use eval::{score_parses, AttachmentCounts, AttachmentScores};
pub use templates::TemplateSet;

use crate::data::conllu::ConlluSentence;
use crate::error::Result;
use crate::features::SparseRows;
use crate::task::tree::{TreeDecoder, TreeTask};

/// What the parser trains on: sentences with their trees, development sentences that choose
/// the epoch (may be empty), the templates, which arcs define the features, and which trees
/// are decoded.
#[derive(Debug, Clone)]
pub struct ParseData {
    pub train: Vec<ParseSentence>,
    pub dev: Vec<ParseSentence>,
    pub templates: TemplateSet,
    pub support: Support,
    pub trees: TreeKind,
}

impl ParseData {
    /// Training sentences with the default templates, gold-arc features and
    /// non-projective trees.
    pub fn new(train: Vec<ParseSentence>) -> ParseData {
        ParseData {
            train,
            dev: Vec::new(),
            templates: TemplateSet::default_set(),
            support: Support::Gold,
            trees: TreeKind::NonProjective,
        }
    }
}

/// Which trees a parser outputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TreeKind {
    /// Any tree (Chu-Liu-Edmonds).
    #[default]
    NonProjective,
    /// Projective trees (Eisner).
    Projective,
}

/// One token as templates see it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ParseToken {
    pub form: String,
    pub lemma: String,
    /// Coarse tag (UPOS).
    pub upos: String,
    /// Fine tag (XPOS).
    pub xpos: String,
    /// Morphological features, `Name=Value|...` or `_`.
    pub feats: String,
    /// False when MISC says `SpaceAfter=No`.
    pub space_after: bool,
}

impl ParseToken {
    /// Punctuation (UPOS `PUNCT`): left out of attachment scores, as parsers report them.
    pub(crate) fn is_punctuation(&self) -> bool {
        self.upos == "PUNCT"
    }
}

/// A sentence to parse: its tokens, and its gold tree and relations when known.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ParseSentence {
    pub tokens: Vec<ParseToken>,
    /// `heads[k]` is the head of token `k + 1` (0 = root).
    pub heads: Option<Vec<usize>>,
    pub deprels: Option<Vec<String>>,
}

impl From<&ConlluSentence> for ParseSentence {
    fn from(s: &ConlluSentence) -> Self {
        ParseSentence {
            tokens: s
                .tokens
                .iter()
                .map(|t| ParseToken {
                    form: t.form.clone(),
                    lemma: t.lemma.clone(),
                    upos: t.upos.clone(),
                    xpos: t.xpos.clone(),
                    feats: t.feats.clone(),
                    space_after: t.space_after(),
                })
                .collect(),
            heads: s.heads(),
            deprels: Some(s.deprels()),
        }
    }
}

impl ParseSentence {
    pub fn len(&self) -> usize {
        self.tokens.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }

    /// Which tokens attachment scores count: all but punctuation (UPOS `PUNCT`).
    pub(crate) fn scored(&self) -> Vec<bool> {
        self.tokens.iter().map(|t| !t.is_punctuation()).collect()
    }
}

/// The arc features of every sentence (in parallel; the featurizer is frozen).
pub(crate) fn sentence_features(
    featurizer: &ArcFeaturizer,
    sentences: &[ParseSentence],
) -> Vec<SparseRows> {
    use rayon::prelude::*;
    sentences
        .par_iter()
        .map(|s| featurizer.sentence_rows(s))
        .collect()
}

/// Sentences with gold heads as a [`TreeTask`] over the featurizer's template groups, decoded
/// by `decoder`; the metric counts non-punctuation tokens. Fails on a sentence without
/// heads or one the decoder cannot handle.
pub(crate) fn tree_task<D: TreeDecoder>(
    featurizer: &ArcFeaturizer,
    sentences: &[ParseSentence],
    decoder: D,
) -> Result<TreeTask<D>> {
    let heads = sentences
        .iter()
        .enumerate()
        .map(|(i, s)| {
            s.heads
                .clone()
                .ok_or_else(|| crate::error::Error::data(format!("sentence {i} has no gold heads")))
        })
        .collect::<Result<Vec<_>>>()?;
    let features = sentence_features(featurizer, sentences);
    TreeTask::from_features(heads, features, featurizer.groups(), decoder)?
        .with_scored(sentences.iter().map(ParseSentence::scored).collect())
}
