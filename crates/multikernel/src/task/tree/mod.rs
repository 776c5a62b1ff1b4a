//! An arc-factored dependency-tree task (martins2011 Sec. 4.2; McDonald et al. 2005) over short
//! sentences: the test task of the structured seam (issue 10 item 3), which the parsing issue
//! grows into a parser.
//!
//! A sentence has tokens `1..=n` and the artificial root `0`; an output gives each token `m`
//! its head `h(m)` in `0..=n`. Parts are the arcs `(h, m)`, laid out as the
//! `(n + 1) x (n + 1)` arc matrix (part `h * (n + 1) + m`; the entries with `m = 0` or
//! `h = m` are never used and have no features), so the part scores of a sentence *are* its
//! arc-score matrix and
//!
//! ```text
//! s(y) = sum_m s(h(m), m),    c(y, y') = cost * #{m : h(m) != h'(m)}  (Hamming on heads).
//! ```
//!
//! Arcs are scored by explicit sparse features, one group per template ([`ArcTemplate`]: head
//! word, modifier word, their pair, tag pair, direction and distance), so the group-sparse
//! regularizers select templates.
//!
//! Decoding is behind [`TreeDecoder`]. [`Enumeration`] scores every tree: every head
//! assignment in which following heads from any token reaches the root without a cycle (the
//! root may have several children; trees need not be projective). There are `(n + 1)^(n - 1)`
//! of them (Cayley), 1,296 for `n = 5`, the largest length it accepts
//! ([`MAX_ENUMERATED_TOKENS`]). Because the Hamming cost is arc-factored, loss-augmented
//! decoding is decoding with `cost` added to every non-gold arc, so any decoder (Eisner,
//! Chu-Liu-Edmonds) gives it for free.

pub(crate) mod chu_liu_edmonds;
#[cfg(test)]
mod decoder_tests;
pub(crate) mod eisner;
mod elimination;
pub(crate) mod marginals;
#[cfg(test)]
mod marginals_tests;
mod scores;
#[cfg(test)]
pub(crate) mod synthetic;

pub use chu_liu_edmonds::ChuLiuEdmonds;
pub use eisner::Eisner;

#[cfg(test)]
mod arc_task;
#[cfg(test)]
pub(crate) use arc_task::{ArcFeaturizer, ArcTemplate, TreeSentence};

use crate::error::{Error, Result};
use crate::features::{SparseRows, SparseVector};
use crate::task::online::ExplicitGroup;
use crate::task::structured::{Augmented, Counts, PartMap, PartMarginals, StructuredTask};
use std::sync::OnceLock;

/// The longest sentence [`Enumeration`] decodes.
pub(crate) const MAX_ENUMERATED_TOKENS: usize = 5;

/// Whether `heads` (head of token `k + 1` at `k`) is a tree rooted at 0: heads in range, no
/// self-loop, and every token reaches 0.
pub fn is_tree(heads: &[usize]) -> bool {
    let n = heads.len();
    if heads.iter().enumerate().any(|(k, &h)| h > n || h == k + 1) {
        return false;
    }
    (1..=n).all(|m| {
        let mut t = m;
        for _ in 0..=n {
            if t == 0 {
                return true;
            }
            t = heads[t - 1];
        }
        t == 0
    })
}

/// Whether a tree is projective: no two arcs cross when drawn above the sentence with the
/// root at position 0 (equivalently, every token between a head and its dependent descends
/// from the head).
pub fn is_projective(heads: &[usize]) -> bool {
    let span = |k: usize| {
        let (h, d) = (heads[k], k + 1);
        (h.min(d), h.max(d))
    };
    (0..heads.len()).all(|a| {
        let (l1, r1) = span(a);
        (0..heads.len()).all(|b| {
            let (l2, r2) = span(b);
            !(l1 < l2 && l2 < r1 && r1 < r2)
        })
    })
}

/// Every tree over `n <= MAX_ENUMERATED_TOKENS` tokens, in lexicographic order of the head
/// vectors; `None` for longer sentences.
pub(crate) fn all_trees(n: usize) -> Option<&'static [Vec<usize>]> {
    static TREES: OnceLock<Vec<Vec<Vec<usize>>>> = OnceLock::new();
    let table = TREES.get_or_init(|| {
        (0..=MAX_ENUMERATED_TOKENS)
            .map(|n| {
                let total = (n + 1).pow(n as u32);
                (0..total)
                    .map(|code| {
                        (0..n)
                            .map(|k| (code / (n + 1).pow((n - 1 - k) as u32)) % (n + 1))
                            .collect::<Vec<usize>>()
                    })
                    .filter(|h| is_tree(h))
                    .collect()
            })
            .collect()
    });
    table.get(n).map(Vec::as_slice)
}

/// `sum_m arc[h(m) * (n + 1) + m]`.
pub(crate) fn tree_score(arc: &[f64], heads: &[usize]) -> f64 {
    let n1 = heads.len() + 1;
    heads
        .iter()
        .enumerate()
        .map(|(k, &h)| arc[h * n1 + k + 1])
        .sum()
}

/// Inference over dependency trees from an arc-score matrix (`(n + 1) x (n + 1)`, row = head,
/// column = modifier): `Enumeration` (every tree, short sentences), [`Eisner`] (projective
/// trees) and [`ChuLiuEdmonds`] (all trees). Loss-augmented decoding under the Hamming cost
/// is decoding of augmented scores (`TreeTask`), so it needs nothing more of a decoder.
pub trait TreeDecoder: Sync + std::fmt::Debug {
    /// The longest sentence it decodes.
    fn max_tokens(&self) -> usize;

    /// The best tree's heads.
    fn decode(&self, n: usize, arc: &[f64]) -> Vec<usize>;

    /// `log Z` over trees and the arc marginals (same layout as `arc`), if available.
    fn marginals(&self, _n: usize, _arc: &[f64]) -> Option<PartMarginals> {
        None
    }
}

/// Decoding by scoring every tree ([`all_trees`]); ties go to the first tree in
/// lexicographic order of the heads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Enumeration;

impl TreeDecoder for Enumeration {
    fn max_tokens(&self) -> usize {
        MAX_ENUMERATED_TOKENS
    }

    fn decode(&self, n: usize, arc: &[f64]) -> Vec<usize> {
        best_of(all_trees(n).unwrap_or(&[]), arc)
    }

    fn marginals(&self, n: usize, arc: &[f64]) -> Option<PartMarginals> {
        Some(marginals_of(n, all_trees(n)?, arc))
    }
}

/// Enumeration of the trees of one kind only: with one root child (`single_root`, the trees
/// [`ChuLiuEdmonds`] and [`Eisner`] return by default) and / or projective ones
/// ([`is_projective`]): the slow twin of the decoders and of their marginals.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg(test)]
pub(crate) struct EnumerationOf {
    pub single_root: bool,
    pub projective: bool,
}

#[cfg(test)]
impl EnumerationOf {
    /// Every tree of the kind over `n <= MAX_ENUMERATED_TOKENS` tokens, in lexicographic order
    /// of the heads; `None` for longer sentences.
    pub(crate) fn trees(&self, n: usize) -> Option<Vec<Vec<usize>>> {
        Some(
            all_trees(n)?
                .iter()
                .filter(|t| !self.single_root || t.iter().filter(|&&h| h == 0).count() == 1)
                .filter(|t| !self.projective || is_projective(t))
                .cloned()
                .collect(),
        )
    }
}

#[cfg(test)]
impl TreeDecoder for EnumerationOf {
    fn max_tokens(&self) -> usize {
        MAX_ENUMERATED_TOKENS
    }

    fn decode(&self, n: usize, arc: &[f64]) -> Vec<usize> {
        best_of(&self.trees(n).unwrap_or_default(), arc)
    }

    fn marginals(&self, n: usize, arc: &[f64]) -> Option<PartMarginals> {
        Some(marginals_of(n, &self.trees(n)?, arc))
    }
}

/// The best of `trees` (ties: the first).
fn best_of(trees: &[Vec<usize>], arc: &[f64]) -> Vec<usize> {
    let mut best = f64::NEG_INFINITY;
    let mut arg: Option<&Vec<usize>> = None;
    for t in trees {
        let s = tree_score(arc, t);
        if arg.is_none() || s > best {
            best = s;
            arg = Some(t);
        }
    }
    arg.cloned().unwrap_or_default()
}

/// `log Z` and the arc marginals by summing over `trees`, by their definition.
fn marginals_of(n: usize, trees: &[Vec<usize>], arc: &[f64]) -> PartMarginals {
    let scores: Vec<f64> = trees.iter().map(|t| tree_score(arc, t)).collect();
    let m = scores.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let log_z = m + scores.iter().map(|s| (s - m).exp()).sum::<f64>().ln();
    let n1 = n + 1;
    let mut expected = vec![0.0; n1 * n1];
    for (t, s) in trees.iter().zip(&scores) {
        let p = (s - log_z).exp();
        for (k, &h) in t.iter().enumerate() {
            expected[h * n1 + k + 1] += p;
        }
    }
    PartMarginals { log_z, expected }
}

/// Dependency trees as a `StructuredTask` with explicit arc features: the gold heads of each
/// sentence, the features of every part of its arc matrix, and a decoder.
#[derive(Debug, Clone)]
pub(crate) struct TreeTask<D: TreeDecoder = Enumeration> {
    heads: Vec<Vec<usize>>,
    /// Per sentence, which tokens the metric counts (all, unless [`TreeTask::with_scored`]).
    scored: Vec<Vec<bool>>,
    /// Per sentence, the features of every part of its arc matrix (one row per part).
    features: Vec<SparseRows>,
    groups: Vec<ExplicitGroup>,
    decoder: D,
    /// Cost of one wrong head (1: the Hamming cost).
    pub cost: f64,
}

impl<D: TreeDecoder> TreeTask<D> {
    /// The task from precomputed arc features: `features[i]` has one row per part of
    /// sentence `i`'s arc matrix (`(n + 1)^2` rows, part `h * (n + 1) + m`), over the global
    /// indices of `groups`. Checks that each `heads[i]` is a tree the decoder can handle.
    pub(crate) fn from_features(
        heads: Vec<Vec<usize>>,
        features: Vec<SparseRows>,
        groups: Vec<ExplicitGroup>,
        decoder: D,
    ) -> Result<Self> {
        if heads.len() != features.len() {
            return Err(Error::shape(
                "sentences with arc features",
                heads.len(),
                features.len(),
            ));
        }
        for (i, (h, f)) in heads.iter().zip(&features).enumerate() {
            let n = h.len();
            if n == 0 || n > decoder.max_tokens() {
                return Err(Error::data(format!(
                    "sentence {i} has {n} tokens; the decoder handles 1 to {}",
                    decoder.max_tokens()
                )));
            }
            if !is_tree(h) {
                return Err(Error::data(format!(
                    "sentence {i}: the heads {h:?} do not form a tree rooted at 0"
                )));
            }
            if f.n_rows() != (n + 1) * (n + 1) {
                return Err(Error::shape(
                    format!("arc-feature rows of sentence {i}"),
                    (n + 1) * (n + 1),
                    f.n_rows(),
                ));
            }
        }
        Ok(TreeTask {
            scored: heads.iter().map(|h| vec![true; h.len()]).collect(),
            heads,
            features,
            groups,
            decoder,
            cost: 1.0,
        })
    }

    /// Counts only the tokens marked `true` in the metric (punctuation excluded from the
    /// attachment score, as parsers report it); one mask per sentence.
    pub(crate) fn with_scored(mut self, scored: Vec<Vec<bool>>) -> Result<Self> {
        if scored.len() != self.heads.len()
            || scored
                .iter()
                .zip(&self.heads)
                .any(|(s, h)| s.len() != h.len())
        {
            return Err(Error::data(
                "a scored-token mask must have one entry per token of every sentence",
            ));
        }
        self.scored = scored;
        Ok(self)
    }

    /// The gold heads of every sentence.
    #[cfg(test)]
    pub(crate) fn heads(&self) -> &[Vec<usize>] {
        &self.heads
    }

    /// Arc scores with `cost` added to every arc that is not in the gold tree.
    fn augmented(&self, i: usize, scores: &[f64]) -> Vec<f64> {
        let gold = &self.heads[i];
        let n1 = gold.len() + 1;
        let mut arc = scores.to_vec();
        for (r, a) in arc.iter_mut().enumerate() {
            let (h, m) = (r / n1, r % n1);
            if m > 0 && gold[m - 1] != h {
                *a += self.cost;
            }
        }
        arc
    }
}

impl<D: TreeDecoder> StructuredTask for TreeTask<D> {
    type Output = Vec<usize>;

    fn n_examples(&self) -> usize {
        self.heads.len()
    }
    fn n_parts(&self, i: usize) -> usize {
        let n1 = self.heads[i].len() + 1;
        n1 * n1
    }
    fn part_map(&self, i: usize) -> PartMap<'_> {
        PartMap {
            points: 0..0,
            n_labels: 0,
            parameters: 0..0,
            explicit: Some(&self.features[i]),
            conjoined: None,
        }
    }
    fn explicit_groups(&self) -> Vec<ExplicitGroup> {
        self.groups.clone()
    }
    fn gold(&self, i: usize) -> &Vec<usize> {
        &self.heads[i]
    }
    fn joint_feature(&self, i: usize, y: &Vec<usize>) -> SparseVector {
        let n1 = self.heads[i].len() + 1;
        y.iter()
            .enumerate()
            .map(|(k, &h)| (h * n1 + k + 1, 1.0))
            .collect()
    }
    fn score(&self, _i: usize, scores: &[f64], y: &Vec<usize>) -> f64 {
        tree_score(scores, y)
    }
    fn decode(&self, i: usize, scores: &[f64]) -> Vec<usize> {
        self.decoder.decode(self.heads[i].len(), scores)
    }
    fn loss_augmented_decode(&self, i: usize, scores: &[f64]) -> Augmented<Vec<usize>> {
        let arc = self.augmented(i, scores);
        let output = self.decoder.decode(self.heads[i].len(), &arc);
        Augmented {
            score: tree_score(&arc, &output),
            feature: self.joint_feature(i, &output),
            output,
        }
    }
    fn cost(&self, i: usize, y: &Vec<usize>) -> f64 {
        let gold = &self.heads[i];
        self.cost * gold.iter().zip(y).filter(|(a, b)| a != b).count() as f64
    }
    fn marginals(&self, i: usize, scores: &[f64]) -> Option<PartMarginals> {
        self.decoder.marginals(self.heads[i].len(), scores)
    }
    /// Unlabeled attachment: scored tokens with the right head.
    fn metric(&self, i: usize, y: &Vec<usize>) -> Counts {
        let gold = &self.heads[i];
        let scored = &self.scored[i];
        let mut c = Counts::default();
        for ((a, b), &s) in gold.iter().zip(y).zip(scored) {
            if s {
                c.total += 1;
                c.correct += usize::from(a == b);
            }
        }
        c
    }
}

#[cfg(test)]
mod tests {
    use super::synthetic::{SyntheticTrees, TreeGenerator};
    use super::*;
    use crate::task::structured::testing::check_example;
    use rand::{Rng, SeedableRng};

    /// Cayley's formula: (n + 1)^(n - 1) trees rooted at 0 over n tokens; each is a tree and
    /// no two are equal.
    #[test]
    fn enumerates_every_tree() {
        for n in 1..=MAX_ENUMERATED_TOKENS {
            let t = all_trees(n).unwrap();
            assert_eq!(t.len(), (n + 1).pow(n as u32 - 1), "n = {n}");
            assert!(t.iter().all(|h| is_tree(h)));
            assert!(t.windows(2).all(|w| w[0] < w[1]));
        }
        assert!(all_trees(MAX_ENUMERATED_TOKENS + 1).is_none());
        assert!(!is_tree(&[2, 1]));
        assert!(!is_tree(&[1]));
        assert!(is_tree(&[0, 1, 1]));
        assert!(is_tree(&[3, 0, 2])); // non-projective arcs are trees too
    }

    /// Decoding, loss-augmented decoding, marginals and both losses against enumeration, with
    /// finite-difference gradients, on random arc scores of sentences of 1 to 5 tokens.
    #[test]
    fn tree_task_matches_enumeration_and_finite_differences() {
        let data: SyntheticTrees = TreeGenerator {
            train: 12,
            test: 0,
            ..TreeGenerator::default()
        }
        .generate(4);
        let f = ArcFeaturizer::fit(&ArcTemplate::ALL, &data.train);
        let task = TreeTask::new(data.train.clone(), &f).unwrap();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
        for i in 0..task.n_examples() {
            let n = task.heads()[i].len();
            let s: Vec<f64> = (0..task.n_parts(i))
                .map(|_| rng.gen_range(-2.0..2.0))
                .collect();
            check_example(&task, i, &s, all_trees(n).unwrap());
        }
    }

    #[test]
    fn features_and_rejected_sentences() {
        let s = TreeSentence {
            words: vec!["a".into(), "b".into()],
            tags: vec!["X".into(), "Y".into()],
            heads: vec![0, 1],
        };
        let f = ArcFeaturizer::fit(&ArcTemplate::ALL, std::slice::from_ref(&s));
        // Arcs 0->1, 0->2, 1->2, 2->1: heads root/a/b, modifiers a/b.
        assert_eq!(f.alphabets[0].len(), 3);
        assert_eq!(f.alphabets[1].len(), 2);
        assert_eq!(f.alphabets[4].names(), &["R1", "R2", "L1"]);
        let v = f.arc_features(&s, 2, 1);
        assert_eq!(v.len(), 5);
        let layout = f.layout();
        assert_eq!(layout.n_groups(), 5);
        // An unseen word drops its word features only.
        let mut u = s.clone();
        u.words[0] = "zzz".into();
        assert_eq!(f.arc_features(&u, 2, 1).len(), 3);
        let cycle = TreeSentence {
            heads: vec![2, 1],
            ..s.clone()
        };
        assert!(matches!(
            TreeTask::new(vec![cycle], &f),
            Err(Error::Data(m)) if m.contains("tree")
        ));
        let long = TreeSentence {
            words: vec!["a".into(); 6],
            tags: vec!["X".into(); 6],
            heads: vec![0, 1, 2, 3, 4, 5],
        };
        assert!(
            matches!(TreeTask::new(vec![long], &f), Err(Error::Data(m)) if m.contains("6 tokens"))
        );
    }
}
