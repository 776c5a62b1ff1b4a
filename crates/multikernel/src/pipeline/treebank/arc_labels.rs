//! Relation labels as a second stage (McDonald, Lerman & Pereira 2006, "two-stage" labeled
//! parsing): once the tree is known, each arc `h -> d` gets the relation that scores best
//! under a multiclass linear model over arc features (templates of their own, default
//! [`LABEL_TEMPLATES`]).
//!
//! Training is the averaged multiclass hinge by subgradient steps of size 1 (Crammer &
//! Singer's loss with cost 1 for a wrong relation, i.e. the perceptron with a margin), over
//! the gold arcs of the training sentences in a seeded random order; the averaged weights
//! are kept (Collins 2002). Weights are a dense `features x relations` matrix, so scoring an
//! arc reads one contiguous row per feature.

use crate::error::{Error, Result};
use crate::task::parse::{ArcFeaturizer, ParseSentence, Support, TemplateSet};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use std::path::Path;

/// The default templates of the labeler.
pub(crate) const LABEL_TEMPLATES: &str = include_str!("../../task/parse/labels.templates");

/// The default label template set.
pub(crate) fn default_label_templates() -> TemplateSet {
    TemplateSet::parse(LABEL_TEMPLATES, Path::new("<label templates>"))
        .expect("the label templates parse")
}

/// A trained relation labeler.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ArcLabeler {
    pub featurizer: ArcFeaturizer,
    /// The relations, in index order.
    pub labels: Vec<String>,
    /// `weights[f * labels.len() + y]`.
    pub weights: Vec<f64>,
}

impl ArcLabeler {
    /// Relation scores of arc `h -> d` of the coded sentence into `out` (one per label).
    fn scores(&self, feats: &[(usize, f64)], out: &mut [f64]) {
        let l = self.labels.len();
        out.iter_mut().for_each(|o| *o = 0.0);
        for &(f, v) in feats {
            for (o, w) in out.iter_mut().zip(&self.weights[f * l..(f + 1) * l]) {
                *o += v * w;
            }
        }
    }

    /// The relation of every token of `s` given its `heads`.
    pub(crate) fn label(&self, s: &ParseSentence, heads: &[usize]) -> Vec<String> {
        let c = self.featurizer.code(s);
        let mut feats = Vec::new();
        let mut scores = vec![0.0; self.labels.len()];
        heads
            .iter()
            .enumerate()
            .map(|(k, &h)| {
                feats.clear();
                self.featurizer.arc_features(&c, h, k + 1, &mut feats);
                self.scores(&feats, &mut scores);
                let best = argmax(&scores, usize::MAX);
                self.labels[best].clone()
            })
            .collect()
    }

    /// Checks the stored sizes.
    pub(crate) fn validate(&self) -> std::result::Result<(), String> {
        let want = self.featurizer.layout().total() * self.labels.len();
        if self.weights.len() != want {
            return Err(format!(
                "the labeler has {} weights; its features and relations need {want}",
                self.weights.len()
            ));
        }
        if self.labels.is_empty() {
            return Err("the labeler has no relation".into());
        }
        if self.weights.iter().any(|w| !w.is_finite()) {
            return Err("the labeler has a weight that is not finite".into());
        }
        Ok(())
    }
}

/// The first index of the largest score, skipping `skip`.
fn argmax(scores: &[f64], skip: usize) -> usize {
    let mut best = usize::MAX;
    for (y, &s) in scores.iter().enumerate() {
        if y != skip && (best == usize::MAX || s > scores[best]) {
            best = y;
        }
    }
    best
}

/// Trains the labeler on the gold arcs and relations of `train`, `epochs` passes.
pub(crate) fn train_labeler(
    train: &[ParseSentence],
    templates: TemplateSet,
    epochs: usize,
    seed: u64,
) -> Result<ArcLabeler> {
    let featurizer = ArcFeaturizer::fit(templates, Support::Gold, train)?;
    let arcs = gold_arcs(train, &featurizer)?;
    train_on_arcs(featurizer, arcs, epochs, seed)
}

/// The gold arcs of some training sentences, each with its relation and its features under
/// the labeler's featurizer, sentence by sentence and token by token.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct GoldArcs {
    pub relations: Vec<String>,
    pub features: Vec<Vec<(usize, f64)>>,
}

impl GoldArcs {
    /// These arcs followed by `later`'s (two parts of the sentences, in their order).
    pub(crate) fn extend(&mut self, later: GoldArcs) {
        self.relations.extend(later.relations);
        self.features.extend(later.features);
    }
}

/// The gold arcs of `train` under `featurizer` (an error for a sentence without relations).
pub(crate) fn gold_arcs(train: &[ParseSentence], featurizer: &ArcFeaturizer) -> Result<GoldArcs> {
    let mut arcs = GoldArcs::default();
    for (i, s) in train.iter().enumerate() {
        let rels = s
            .deprels
            .as_ref()
            .ok_or_else(|| Error::data(format!("training sentence {i} has no relations")))?;
        let heads = s
            .heads
            .as_ref()
            .ok_or_else(|| Error::data(format!("training sentence {i} has no gold heads")))?;
        let codes = featurizer.code(s);
        for (k, r) in rels.iter().enumerate() {
            let mut f = Vec::new();
            featurizer.arc_features(&codes, heads[k], k + 1, &mut f);
            arcs.relations.push(r.clone());
            arcs.features.push(f);
        }
    }
    Ok(arcs)
}

/// Trains the labeler over `featurizer`'s features on the gold `arcs` of all the training
/// sentences, `epochs` passes in a seeded random order.
pub(crate) fn train_on_arcs(
    featurizer: ArcFeaturizer,
    arcs: GoldArcs,
    epochs: usize,
    seed: u64,
) -> Result<ArcLabeler> {
    let dim_features = featurizer.layout().total();
    if let Some(&(j, _)) = arcs
        .features
        .iter()
        .flatten()
        .find(|&&(j, _)| j >= dim_features)
    {
        return Err(Error::data(format!(
            "a gold arc's feature {j} is past the labeler's {dim_features} features"
        )));
    }
    if arcs.relations.len() != arcs.features.len() {
        return Err(Error::data(format!(
            "{} relations for {} gold arcs",
            arcs.relations.len(),
            arcs.features.len()
        )));
    }
    let mut labels: Vec<String> = Vec::new();
    let mut index = std::collections::HashMap::new();
    let gold: Vec<usize> = arcs
        .relations
        .into_iter()
        .map(|r| {
            *index.entry(r).or_insert_with_key(|r| {
                labels.push(r.clone());
                labels.len() - 1
            })
        })
        .collect();
    if labels.is_empty() {
        return Err(Error::data("no training token to learn relations from"));
    }
    let feats = arcs.features;
    let l = labels.len();
    let dim = dim_features * l;
    let mut w = vec![0.0; dim];
    // Averaging (Daume's trick): avg = w - u / c, u accumulating c * update.
    let mut u = vec![0.0; dim];
    let mut c = 1.0;
    let mut order: Vec<usize> = (0..gold.len()).collect();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut scores = vec![0.0; l];
    // With one relation there is nothing to learn.
    let passes = if l > 1 { epochs.max(1) } else { 0 };
    for _ in 0..passes {
        order.shuffle(&mut rng);
        for &a in &order {
            let y = gold[a];
            let f = &feats[a];
            scores.iter_mut().for_each(|s| *s = 0.0);
            for &(j, v) in f {
                for (s, wj) in scores.iter_mut().zip(&w[j * l..(j + 1) * l]) {
                    *s += v * wj;
                }
            }
            let other = argmax(&scores, y);
            if scores[other] + 1.0 > scores[y] {
                for &(j, v) in f {
                    w[j * l + y] += v;
                    w[j * l + other] -= v;
                    u[j * l + y] += c * v;
                    u[j * l + other] -= c * v;
                }
            }
            c += 1.0;
        }
    }
    let weights = w.iter().zip(&u).map(|(w, u)| w - u / c).collect();
    Ok(ArcLabeler {
        featurizer,
        labels,
        weights,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::parse::ParseToken;

    fn tok(form: &str, upos: &str) -> ParseToken {
        ParseToken {
            form: form.into(),
            lemma: form.into(),
            upos: upos.into(),
            xpos: upos.into(),
            feats: "_".into(),
            space_after: true,
        }
    }

    /// Relations determined by the dependent's tag are learned exactly, and the averaged
    /// weights label held-out arcs of the same kind.
    #[test]
    fn learns_relations_that_follow_the_tags() {
        let sent = |words: &[(&str, &str)], heads: Vec<usize>| ParseSentence {
            tokens: words.iter().map(|(w, t)| tok(w, t)).collect(),
            deprels: Some(
                words
                    .iter()
                    .zip(&heads)
                    .map(|((_, t), &h)| match (*t, h) {
                        (_, 0) => "root".to_string(),
                        ("DET", _) => "det".into(),
                        ("ADJ", _) => "amod".into(),
                        _ => "obj".into(),
                    })
                    .collect(),
            ),
            heads: Some(heads),
        };
        let train = vec![
            sent(
                &[("the", "DET"), ("dog", "NOUN"), ("ran", "VERB")],
                vec![2, 3, 0],
            ),
            sent(
                &[
                    ("a", "DET"),
                    ("big", "ADJ"),
                    ("cat", "NOUN"),
                    ("sat", "VERB"),
                ],
                vec![3, 3, 4, 0],
            ),
            sent(
                &[
                    ("saw", "VERB"),
                    ("the", "DET"),
                    ("red", "ADJ"),
                    ("car", "NOUN"),
                ],
                vec![0, 4, 4, 1],
            ),
        ];
        let lab = train_labeler(&train, default_label_templates(), 10, 1).unwrap();
        lab.validate().unwrap();
        for s in &train {
            assert_eq!(
                &lab.label(s, s.heads.as_ref().unwrap()),
                s.deprels.as_ref().unwrap()
            );
        }
        let new = sent(
            &[
                ("a", "DET"),
                ("red", "ADJ"),
                ("dog", "NOUN"),
                ("ran", "VERB"),
            ],
            vec![3, 3, 4, 0],
        );
        assert_eq!(
            &lab.label(&new, new.heads.as_ref().unwrap()),
            new.deprels.as_ref().unwrap()
        );
        assert!(train_labeler(
            &[ParseSentence {
                deprels: None,
                ..train[0].clone()
            }],
            default_label_templates(),
            1,
            1
        )
        .is_err());
    }
}
