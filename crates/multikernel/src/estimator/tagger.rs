//! A sequence tagger from sentences in memory: tokens as feature dicts (one feature group
//! per key, `crate::task::tagging::dicts`) or as columns with CRF++ templates (one group
//! per template, `crate::task::tagging`), labels per token. The learners are those of
//! `multikernel train --task sequence --format columns`: SPOM (martins2011 Alg. 1 with the
//! structured hinge, eq. 4, or the CRF loss, eq. 3) and multi-template learning
//! (mao-tsang Alg. 1, problem (6)/(11)), through the same [`fit`](super::fit()), so the same
//! sentences and settings give the same model as the command line.
//!
//! The Python package's `SequenceTagger` calls only this module: [`Settings`](super::Settings) (the
//! settings named as in [`super::registry`]), [`training_data`] (then [`fit()`](super::fit())) and
//! [`SequenceTagger`] (predict, marginals, the groups and their weights, bytes).

use crate::data::columns::ColumnSentence;
use crate::error::{Error, Result};
use crate::model::Model;
use crate::task::tagging::{FeatureKeys, TagData, TemplateFile, TokenFeatures};
use std::path::Path;

pub mod parts;

/// CoNLL-U to the tagger's columns (`multikernel tag --from-conllu`).
pub use crate::task::tagging::convert::{from_conllu, LabelColumn};
pub use crate::task::tagging::{is_chunk_scheme, ChunkCounts, FeatureValue, TagScores};

/// Sentences in memory: each a list of tokens.
#[derive(Debug, Clone, Copy)]
pub enum Sentences<'a> {
    /// Each token a feature dict (key, value pairs).
    Dicts(&'a [Vec<TokenFeatures>]),
    /// Each token its observation columns (strings), read by CRF++ templates.
    Columns(&'a [Vec<Vec<String>>]),
}

impl Sentences<'_> {
    pub(crate) fn len(&self) -> usize {
        match self {
            Sentences::Dicts(s) => s.len(),
            Sentences::Columns(s) => s.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn tokens(&self, i: usize) -> usize {
        match self {
            Sentences::Dicts(s) => s[i].len(),
            Sentences::Columns(s) => s[i].len(),
        }
    }
}

/// Refuses `y` unless it has one label list per sentence and one label per token.
fn check_labels(x: Sentences<'_>, y: &[Vec<String>]) -> Result<()> {
    if x.len() != y.len() {
        return Err(Error::shape(
            "label lists (one per sentence of X)",
            x.len(),
            y.len(),
        ));
    }
    for (i, labels) in y.iter().enumerate() {
        if labels.len() != x.tokens(i) {
            return Err(Error::data(format!(
                "sentence {i} has {} tokens but {} labels",
                x.tokens(i),
                labels.len()
            )));
        }
    }
    Ok(())
}

/// Column sentences from token columns (plus the labels as the last column); an error for
/// tokens of different widths.
fn column_sentences(
    x: &[Vec<Vec<String>>],
    labels: Option<&[Vec<String>]>,
    width: Option<usize>,
) -> Result<Vec<ColumnSentence>> {
    let mut want = width;
    x.iter()
        .enumerate()
        .map(|(i, s)| {
            let tokens = s
                .iter()
                .enumerate()
                .map(|(t, token)| {
                    match want {
                        None => want = Some(token.len()),
                        Some(w) if labels.is_some() && token.len() != w => {
                            return Err(Error::data(format!(
                                "sentence {i}, token {t} has {} columns; the first token has {w}",
                                token.len()
                            )))
                        }
                        Some(w) if token.len() < w => {
                            return Err(Error::data(format!(
                                "sentence {i}, token {t} has {} columns; the tagger reads {w}",
                                token.len()
                            )))
                        }
                        Some(_) => {}
                    }
                    let mut cells: Vec<Vec<u8>> =
                        token.iter().map(|c| c.clone().into_bytes()).collect();
                    if let Some(l) = labels {
                        cells.push(l[i][t].clone().into_bytes());
                    }
                    Ok(cells)
                })
                .collect::<Result<Vec<_>>>()?;
            Ok(ColumnSentence { tokens, line: i })
        })
        .collect()
}

/// A tagger's training data from sentences `x` with labels `y` (one per token), for
/// [`fit()`](super::fit()) with a sequence spec (see
/// [`Settings::structured_spec`](super::Settings::structured_spec)). Feature dicts need no
/// templates; columns need `templates`: the text of a CRF++ template file and a name for
/// it in errors.
///
/// ```
/// use multikernel::estimator::tagger::{training_data, FeatureValue, Sentences, SequenceTagger};
/// use multikernel::estimator::{fit, LearnerKind, Settings, Task};
/// let word = |w: &str| vec![("word".to_string(), FeatureValue::Text(w.into()))];
/// let x = vec![vec![word("the"), word("dog")], vec![word("a"), word("cat")]];
/// let y: Vec<Vec<String>> = vec![vec!["DET".into(), "NOUN".into()]; 2];
/// let spec = Settings::new().structured_spec(Task::Sequence, LearnerKind::Online, 10.0, 0)?;
/// let fitted = fit(&training_data(Sentences::Dicts(&x), &y, None)?, &spec, &())?;
/// let tagger = SequenceTagger::new(fitted.model)?;
/// assert_eq!(tagger.predict(Sentences::Dicts(&x))?, y);
/// let back = SequenceTagger::from_bytes(&tagger.to_bytes()?)?;
/// assert_eq!(back.templates(), ["B", "word"]);
/// # Ok::<(), multikernel::Error>(())
/// ```
pub fn training_data(
    x: Sentences<'_>,
    y: &[Vec<String>],
    templates: Option<(&str, &str)>,
) -> Result<TagData> {
    check_labels(x, y)?;
    let (train, templates) = match (x, templates) {
        (Sentences::Dicts(_), Some(_)) => {
            return Err(Error::unsupported(
                "templates read columns; tokens given as feature dicts need none (each key is \
                 a template)",
            ))
        }
        (Sentences::Columns(_), None) => {
            return Err(Error::unsupported(
                "tokens given as columns need templates (CRF++ template text, lines like \
                 U00:%x[0,0] and B)",
            ))
        }
        (Sentences::Dicts(d), None) => {
            let keys = FeatureKeys::fit(d)?;
            (keys.columns(d, Some(y))?, keys.templates())
        }
        (Sentences::Columns(c), Some((text, origin))) => {
            let t = TemplateFile::parse(text.as_bytes(), Path::new(origin))?;
            (column_sentences(c, Some(y), None)?, t)
        }
    };
    if let Some(i) = train.iter().position(ColumnSentence::is_empty) {
        return Err(Error::data(format!("sentence {i} has no tokens")));
    }
    Ok(TagData::new(train, templates))
}

/// A trained tagger ([`Model::Tagger`]) on sentences in memory.
#[derive(Debug, Clone)]
pub struct SequenceTagger {
    model: Model,
}

impl SequenceTagger {
    /// The tagger of a model; an error for a model of another kind.
    pub fn new(model: Model) -> Result<SequenceTagger> {
        match model {
            Model::Tagger(_) => Ok(SequenceTagger { model }),
            _ => Err(Error::unsupported(format!(
                "a {} model is not a sequence tagger",
                model.summary().learner
            ))),
        }
    }

    /// The tagger from model bytes ([`Model::from_bytes`]; a tagger's model file).
    pub fn from_bytes(bytes: &[u8]) -> Result<SequenceTagger> {
        SequenceTagger::new(Model::from_bytes(bytes)?)
    }

    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        self.model.to_bytes()
    }

    pub fn model(&self) -> &Model {
        &self.model
    }

    fn inner(&self) -> &crate::pipeline::columns::tagging::TaggerModel {
        match &self.model {
            Model::Tagger(m) => m,
            _ => unreachable!("checked by new"),
        }
    }

    /// Whether it reads feature dicts (else columns).
    pub fn reads_dicts(&self) -> bool {
        self.inner().featurizer.templates.keys.is_some()
    }

    /// The labels, sorted (the order of [`SequenceTagger::predict_marginals`]).
    pub fn classes(&self) -> Vec<String> {
        self.inner()
            .featurizer
            .labels
            .iter()
            .map(|l| String::from_utf8_lossy(l).into_owned())
            .collect()
    }

    /// The feature groups: `B` (the label pairs) first when present, then each key (feature
    /// dicts) or template line (columns).
    pub fn templates(&self) -> Vec<String> {
        let m = self.inner();
        let mut names = m.group_names();
        if let Some(k) = &m.featurizer.templates.keys {
            let skip = usize::from(m.featurizer.has_bigram());
            for (n, key) in names[skip..].iter_mut().zip(&k.names) {
                n.clone_from(key);
            }
        }
        names
    }

    /// Each group's learned weight, in [`SequenceTagger::templates`] order: the kernel
    /// weight `mu_j` of multi-template learning (summing to 1), or the group norm
    /// `||w_j||` of SPOM (0 for a template the regularizer dropped).
    pub fn template_weights(&self) -> Vec<f64> {
        let m = self.inner();
        if m.template_weights.is_empty() {
            m.group_norms()
        } else {
            m.template_weights.clone()
        }
    }

    /// Whether it was trained with the CRF loss (then it gives marginals).
    pub fn is_crf(&self) -> bool {
        self.inner().is_crf()
    }

    fn sentences(&self, x: Sentences<'_>) -> Result<Vec<ColumnSentence>> {
        let f = &self.inner().featurizer;
        match (x, &f.templates.keys) {
            (Sentences::Dicts(d), Some(keys)) => keys.columns(d, None),
            (Sentences::Columns(c), None) => column_sentences(c, None, Some(f.n_columns)),
            (Sentences::Dicts(_), None) => Err(Error::unsupported(
                "this tagger was trained on token columns with templates; give columns",
            )),
            (Sentences::Columns(_), Some(_)) => Err(Error::unsupported(
                "this tagger was trained on feature dicts; give feature dicts",
            )),
        }
    }

    /// The best label sequence of each sentence (Viterbi).
    pub fn predict(&self, x: Sentences<'_>) -> Result<Vec<Vec<String>>> {
        let labels = self.classes();
        Ok(self
            .inner()
            .tag_ids(&self.sentences(x)?)?
            .into_iter()
            .map(|y| y.into_iter().map(|k| labels[k].clone()).collect())
            .collect())
    }

    /// Each token's label probabilities `p(y_i = l | x)` under the CRF (forward-backward;
    /// martins2011 eq. 3), in [`SequenceTagger::classes`] order; an error for a tagger
    /// trained with the hinge loss.
    pub fn predict_marginals(&self, x: Sentences<'_>) -> Result<Vec<Vec<Vec<f64>>>> {
        let l = self.inner().featurizer.n_labels();
        Ok(self
            .inner()
            .marginals(&self.sentences(x)?)?
            .into_iter()
            .map(|m| m.token.chunks(l).map(<[f64]>::to_vec).collect())
            .collect())
    }

    /// The non-zero weight of every state feature (attribute, label) whose attribute occurs
    /// in `x`, attributes in order of first occurrence, labels in
    /// [`SequenceTagger::classes`] order: sklearn-crfsuite's `state_features_` over the
    /// attributes of `x` (the training sentences give them all). Attributes of feature
    /// dicts are named as python-crfsuite names them ([`FeatureValue`]): `k:v` for a string
    /// `v` of key `k`, `k` for a number or boolean, a nested or string attribute by its
    /// full name; of columns, by the template's expansion (`U01:the`). A token's score for
    /// a label is the sum of its attributes' weights times their values (a number's value,
    /// else 1); with [`SequenceTagger::transition_features`], a label sequence's score is
    /// what [`SequenceTagger::predict`] maximizes. An error for templates with bigram macros
    /// (features of label pairs and tokens, which neither list holds).
    pub fn state_features(&self, x: Sentences<'_>) -> Result<Vec<(String, String, f64)>> {
        self.refuse_bigram_macros()?;
        self.state_features_of(&self.attributes(x)?)
    }

    /// The attributes of the sentences `x` that the tagger has features of, named as
    /// [`SequenceTagger::state_features`] names them, each with its feature's index, in
    /// order of first appearance.
    fn attributes(&self, x: Sentences<'_>) -> Result<Vec<(String, usize)>> {
        Ok(self.inner().featurizer.attributes(&self.sentences(x)?))
    }

    /// [`SequenceTagger::state_features`] over `attributes`, each an attribute's name and
    /// its feature's index in order of first appearance (for sentences held in parts, the
    /// parts' `parts::TagPart::attributes` one after the other; an index seen before is
    /// dropped).
    pub fn state_features_of(
        &self,
        attributes: &[(String, usize)],
    ) -> Result<Vec<(String, String, f64)>> {
        self.refuse_bigram_macros()?;
        let m = self.inner();
        let f = &m.featurizer;
        let labels = self.classes();
        let (l, offset) = (f.n_labels(), f.offset());
        let mut out = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for (name, j) in attributes {
            if !seen.insert(*j) {
                continue;
            }
            let w = m
                .weights
                .get(offset + j * l..offset + (j + 1) * l)
                .ok_or_else(|| Error::data(format!("attribute {name}: no feature {j}")))?;
            for (label, &w) in labels.iter().zip(w) {
                if w != 0.0 {
                    out.push((name.clone(), label.clone(), w));
                }
            }
        }
        Ok(out)
    }

    fn refuse_bigram_macros(&self) -> Result<()> {
        if self.inner().featurizer.has_bigram_macros() {
            return Err(Error::unsupported(
                "the tagger's templates include bigram templates with macros (B01:%x[0,0]), \
                 whose features are of label pairs and tokens: state and transition features \
                 do not hold them",
            ));
        }
        Ok(())
    }

    /// The non-zero weight of every label pair `(from, to)` (sklearn-crfsuite's
    /// `transition_features_`; none without the template `B`).
    pub fn transition_features(&self) -> Vec<(String, String, f64)> {
        let m = self.inner();
        if !m.featurizer.has_bigram() {
            return Vec::new();
        }
        let labels = self.classes();
        let l = labels.len();
        let mut out = Vec::new();
        for (a, from) in labels.iter().enumerate() {
            for (b, to) in labels.iter().enumerate() {
                let w = m.weights[a * l + b];
                if w != 0.0 {
                    out.push((from.clone(), to.clone(), w));
                }
            }
        }
        out
    }
}

/// Token accuracy and conlleval's chunk counts of predicted label lists against gold ones
/// ([`TagScores`]); an error unless they have the same sentences and lengths.
pub fn tag_scores(gold: &[Vec<String>], predicted: &[Vec<String>]) -> Result<TagScores> {
    if gold.len() != predicted.len() {
        return Err(Error::shape(
            "predicted label lists (one per gold sentence)",
            gold.len(),
            predicted.len(),
        ));
    }
    if let Some(i) = (0..gold.len()).find(|&i| gold[i].len() != predicted[i].len()) {
        return Err(Error::data(format!(
            "sentence {i} has {} gold labels but {} predicted",
            gold[i].len(),
            predicted[i].len()
        )));
    }
    Ok(TagScores::of(gold, predicted))
}

#[cfg(test)]
mod tests;
