//! Sequence labeling with a first-order chain (Sec. 2.3 and 4.1 of Martins et al. 2011) as a
//! [`StructuredTask`]: unigram parts scored by the kernel groups (the learner's scores
//! `sum_m f_m(x_i, y)`), bigram parts by a label-pair weight matrix `W` (`L x L`), so that
//!
//! ```text
//! f(x, y) = sum_i sum_m f_m(x_i, y_i) + sum_i W[y_i, y_{i+1}].
//! ```
//!
//! Parts of a word of `n` positions over `L` labels: the unigram parts `(k, y)` at
//! `k * L + y` (kernel-scored at training point `k` with label slot `y`), then the label-pair
//! parts `(a, b)` at `n * L + a * L + b`, tied across positions (each one explicit parameter:
//! entry `a * L + b` of the one explicit group). So part scores are `[unary (n x L) | W (L x L)]`, the layout
//! of [`crate::task::chain`].
//!
//! `W` is an explicit group of the online learner: with `beta0` fixed at 1 it gets plain l2
//! shrinkage (`W <- W / (1 + eta lambda)` each round, the regularizer `lambda/2 ||W||^2`); with
//! `beta0` learned it is one more group of the MKL regularizer (its weight is `beta0`).
//!
//! Losses (through [`crate::task::structured::loss`]): the structured hinge (eq. 4) with the
//! Hamming cost, by loss-augmented Viterbi, and the CRF loss (eq. 3), by forward-backward in
//! log space.

use crate::error::{Error, Result};
use crate::features::SparseVector;
use crate::task::chain::{
    forward_backward, hamming, loss_augmented_viterbi, sequence_score, viterbi,
};
use crate::task::online::{ExplicitGroup, GroupRole};
use crate::task::structured::{
    Augmented, Counts, PartMap, PartMarginals, StructLoss, StructuredTask,
};
use std::ops::Range;

/// The loss of a sequence task (the structured losses; kept under its old name).
pub use crate::task::structured::StructLoss as SeqLoss;

/// Name of the label-pair group in reports (its kernel weight is `beta0`).
pub(crate) const BIGRAM_GROUP: &str = "beta0";

/// A first-order chain task over training words: word `i` covers the training points
/// (characters) `words[i]`, labelled `labels[p]`.
#[derive(Debug, Clone)]
pub(crate) struct SequenceTask {
    /// Label of each training point (0..n_labels).
    pub labels: Vec<usize>,
    /// The points of each word (consecutive, in order).
    pub words: Vec<Range<usize>>,
    pub n_labels: usize,
    /// Learn `beta0` inside the MKL regularizer instead of fixing it at 1.
    pub learn_beta0: bool,
    /// Cost of one wrong label in the Hamming cost of the hinge loss (1 in the paper).
    pub cost: f64,
    /// The gold label sequence of each word.
    gold: Vec<Vec<usize>>,
}

impl SequenceTask {
    /// Checks that the words tile the points in order and the labels are in range.
    pub(crate) fn new(
        labels: Vec<usize>,
        words: Vec<Range<usize>>,
        n_labels: usize,
        learn_beta0: bool,
    ) -> Result<SequenceTask> {
        if n_labels < 2 {
            return Err(Error::data(format!(
                "sequence labeling needs at least 2 labels, found {n_labels}"
            )));
        }
        let mut next = 0;
        for (w, r) in words.iter().enumerate() {
            if r.start != next || r.end <= r.start {
                return Err(Error::data(format!(
                    "sequence {w} covers points {r:?}: sequences must be non-empty runs of \
                     consecutive points starting at {next}"
                )));
            }
            next = r.end;
        }
        if next != labels.len() {
            return Err(Error::shape(
                "labels of the points the sequences cover",
                next,
                labels.len(),
            ));
        }
        if let Some(&y) = labels.iter().find(|&&y| y >= n_labels) {
            return Err(Error::data(format!("label {y} is not below {n_labels}")));
        }
        let gold = words.iter().map(|r| labels[r.clone()].to_vec()).collect();
        Ok(SequenceTask {
            labels,
            words,
            n_labels,
            learn_beta0,
            cost: 1.0,
            gold,
        })
    }

    /// Unigram and label-pair scores of word `i` from its part scores.
    fn split<'s>(&self, i: usize, scores: &'s [f64]) -> (&'s [f64], &'s [f64]) {
        scores.split_at(self.words[i].len() * self.n_labels)
    }
}

impl StructuredTask for SequenceTask {
    type Output = Vec<usize>;

    fn n_examples(&self) -> usize {
        self.words.len()
    }
    fn n_parts(&self, i: usize) -> usize {
        let l = self.n_labels;
        self.words[i].len() * l + l * l
    }
    fn part_map(&self, i: usize) -> PartMap<'_> {
        PartMap {
            points: self.words[i].clone(),
            n_labels: self.n_labels,
            parameters: 0..self.n_labels * self.n_labels,
            explicit: None,
            conjoined: None,
        }
    }
    fn explicit_groups(&self) -> Vec<ExplicitGroup> {
        vec![ExplicitGroup {
            name: BIGRAM_GROUP.into(),
            len: self.n_labels * self.n_labels,
            role: if self.learn_beta0 {
                GroupRole::Regularized
            } else {
                GroupRole::L2Shrink
            },
        }]
    }
    fn n_points(&self) -> usize {
        self.labels.len()
    }
    fn n_labels(&self) -> usize {
        self.n_labels
    }
    fn gold(&self, i: usize) -> &Vec<usize> {
        &self.gold[i]
    }
    fn joint_feature(&self, i: usize, y: &Vec<usize>) -> SparseVector {
        let l = self.n_labels;
        let base = self.words[i].len() * l;
        let mut pairs: Vec<(usize, f64)> = y
            .iter()
            .enumerate()
            .map(|(k, &v)| (k * l + v, 1.0))
            .collect();
        pairs.extend(y.windows(2).map(|p| (base + p[0] * l + p[1], 1.0)));
        SparseVector::from_pairs(pairs)
    }
    /// The chain's own order of summation ([`sequence_score`]).
    fn score(&self, i: usize, scores: &[f64], y: &Vec<usize>) -> f64 {
        let (unary, trans) = self.split(i, scores);
        sequence_score(unary, trans, self.n_labels, y)
    }
    fn decode(&self, i: usize, scores: &[f64]) -> Vec<usize> {
        let (unary, trans) = self.split(i, scores);
        viterbi(unary, trans, self.n_labels).1
    }
    fn loss_augmented_decode(&self, i: usize, scores: &[f64]) -> Augmented<Vec<usize>> {
        let (unary, trans) = self.split(i, scores);
        let (score, output) =
            loss_augmented_viterbi(unary, trans, self.n_labels, &self.gold[i], self.cost);
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
        let (unary, trans) = self.split(i, scores);
        let m = forward_backward(unary, trans, self.n_labels);
        let mut expected = m.node;
        expected.extend_from_slice(&m.edge);
        Some(PartMarginals {
            log_z: m.log_z,
            expected,
        })
    }
    fn metric(&self, i: usize, y: &Vec<usize>) -> Counts {
        let gold = &self.gold[i];
        Counts::new(gold.len() - hamming(y, gold), gold.len())
    }
    /// L(0): the average word length times the cost (hinge: every label wrong attains the
    /// maximum) or times log L (CRF: the uniform distribution); martins2010 App. E.
    fn loss_at_zero(&self, loss: StructLoss) -> f64 {
        let avg_len = self.labels.len() as f64 / self.words.len().max(1) as f64;
        match loss {
            StructLoss::Hinge => avg_len * self.cost,
            StructLoss::Crf => avg_len * (self.n_labels as f64).ln(),
        }
    }
    /// The number of labels times the cost (hinge) or times `log L` (CRF).
    fn loss_at_zero_total(&self, loss: StructLoss) -> f64 {
        self.labels.len() as f64
            * match loss {
                StructLoss::Hinge => self.cost,
                StructLoss::Crf => (self.n_labels as f64).ln(),
            }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::ScaledVec;
    use crate::task::online::{Gradient, OnlineTask};
    use crate::task::structured::testing::check_example;
    use crate::task::structured::{PartScorer, StructuredOnline};
    use rand::{Rng, SeedableRng};

    fn task() -> SequenceTask {
        // Two words over 3 labels: [0, 2, 1] and [1, 1].
        SequenceTask::new(vec![0, 2, 1, 1, 1], vec![0..3, 3..5], 3, false).unwrap()
    }

    /// All label sequences of length n over l labels.
    fn all_sequences(n: usize, l: usize) -> Vec<Vec<usize>> {
        (0..l.pow(n as u32))
            .map(|code| (0..n).map(|k| (code / l.pow(k as u32)) % l).collect())
            .collect()
    }

    /// Decoders, marginals and both losses against enumeration; gradients against finite
    /// differences (task::structured::testing).
    #[test]
    fn chain_matches_enumeration_and_finite_differences() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let t = task();
        for _ in 0..30 {
            for i in 0..2 {
                let n = t.words[i].len();
                let s: Vec<f64> = (0..t.n_parts(i))
                    .map(|_| rng.gen_range(-1.5..1.5))
                    .collect();
                check_example(&t, i, &s, &all_sequences(n, 3));
            }
        }
    }

    /// The part mapping: unigram parts are kernel-scored at the word's points, label pairs
    /// are entries of the bigram group; a tied pair is counted once per occurrence.
    #[test]
    fn parts_and_joint_features() {
        let t = task();
        assert_eq!(t.n_parts(1), 2 * 3 + 9);
        let map = t.part_map(1);
        assert_eq!(map.n_parts(), t.n_parts(1));
        assert_eq!(map.scorer(4), PartScorer::Kernel { point: 4, label: 1 });
        assert_eq!(map.scorer(6 + 5), PartScorer::Parameter(5));
        let phi = t.joint_feature(0, &vec![1, 1, 1]);
        assert_eq!(phi.entries(), &[(1, 1.0), (4, 1.0), (7, 1.0), (9 + 4, 2.0)]);
    }

    /// Through the online adapter: at zero scores the hinge loss of each word is its length
    /// (all labels wrong); the gradient is in integer counts, unigram entries in the kernel
    /// scores and label pairs as entries of group 0.
    #[test]
    fn zero_model_loss_and_groups() {
        let t = task();
        let a = StructuredOnline::new(&t, SeqLoss::Hinge).unwrap();
        assert_eq!(a.loss_at_zero(), 2.5);
        let mut g = Gradient {
            scores: vec![0.0; 9],
            explicit: Vec::new(),
            ..Default::default()
        };
        let w = vec![ScaledVec::zeros(9, false)];
        assert_eq!(a.loss_grad(0, &[0.0; 9], &w, &mut g), 3.0);
        assert!(g.scores.iter().all(|v| v.fract() == 0.0));
        assert_eq!(g.scores.iter().filter(|v| **v != 0.0).count(), 6);
        assert!(g.explicit.iter().all(|&(grp, j, _)| grp == 0 && j < 9));
        assert_eq!(a.explicit_groups()[0].role, GroupRole::L2Shrink);
        let c = StructuredOnline::new(&t, SeqLoss::Crf).unwrap();
        assert!((c.loss_at_zero() - 2.5 * 3f64.ln()).abs() < 1e-12);
        // The generic L(0) (decoding at zero scores) agrees with the chain's closed form.
        let generic = |loss| {
            (0..2)
                .map(|i| {
                    let z = vec![0.0; t.n_parts(i)];
                    match loss {
                        SeqLoss::Hinge => t.loss_augmented_decode(i, &z).score,
                        SeqLoss::Crf => t.marginals(i, &z).unwrap().log_z,
                    }
                })
                .sum::<f64>()
                / 2.0
        };
        assert!((generic(SeqLoss::Hinge) - 2.5).abs() < 1e-12);
        assert!((generic(SeqLoss::Crf) - 2.5 * 3f64.ln()).abs() < 1e-12);
        let mut b = task();
        b.learn_beta0 = true;
        assert_eq!(b.explicit_groups()[0].role, GroupRole::Regularized);
    }

    #[test]
    fn rejects_inconsistent_words() {
        let bad = |labels: Vec<usize>, word: Range<usize>| {
            SequenceTask::new(labels, vec![word], 2, false).unwrap_err()
        };
        assert!(matches!(
            bad(vec![0, 1], 0..1),
            Error::ShapeMismatch {
                expected: 1,
                found: 2,
                ..
            }
        ));
        assert!(matches!(bad(vec![0, 1], 1..2), Error::Data(m) if m.contains("starting at 0")));
        assert!(matches!(bad(vec![0, 5], 0..2), Error::Data(m) if m.contains("label 5")));
        assert!("crf".parse::<SeqLoss>().is_ok());
        assert!(matches!(
            "cfr".parse::<SeqLoss>(),
            Err(Error::InvalidParameter { name, .. }) if name == "loss"
        ));
    }
}
