//! Sequence labeling with a first-order chain (Sec. 2.3 and 4.1 of Martins et al. 2011):
//! unigram parts scored by the kernel groups (the learner's scores `sum_m f_m(x_i, y)`),
//! bigram parts by a label-pair weight matrix `W` (`L x L`), so that
//!
//! ```text
//! f(x, y) = sum_i sum_m f_m(x_i, y_i) + sum_i W[y_i, y_{i+1}].
//! ```
//!
//! `W` is an explicit group of the online learner: with `beta0` fixed at 1 it gets plain l2
//! shrinkage (`W <- W / (1 + eta lambda)` each round, the regularizer `lambda/2 ||W||^2`); with
//! `beta0` learned it is one more group of the MKL regularizer (its weight is `beta0`).
//!
//! Losses: the structured hinge loss (eq. 4) with the Hamming cost, by loss-augmented Viterbi,
//! and the CRF loss (eq. 3), by forward-backward in log space.

use crate::error::{Error, Result};
use crate::params::ScaledVec;
use crate::task::chain::{
    forward_backward, hamming, loss_augmented_viterbi, sequence_score, viterbi,
};
use crate::task::online::{ExplicitGroup, Gradient, GroupRole, OnlineTask};
use serde::{Deserialize, Serialize};
use std::ops::Range;

/// The loss of a sequence task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SeqLoss {
    /// Structured hinge with the Hamming cost: `max_y' f(y') + c(y', y) - f(y)` (eq. 4).
    Hinge,
    /// CRF (log) loss: `log sum_y' exp f(y') - f(y)` (eq. 3).
    Crf,
}

impl std::str::FromStr for SeqLoss {
    type Err = Error;
    fn from_str(s: &str) -> Result<SeqLoss> {
        match s {
            "hinge" | "structured-hinge" | "svm" => Ok(SeqLoss::Hinge),
            "crf" | "logistic" => Ok(SeqLoss::Crf),
            _ => Err(Error::invalid(format!(
                "unknown sequence loss '{s}': expected hinge (structured SVM) or crf"
            ))),
        }
    }
}

impl std::fmt::Display for SeqLoss {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            SeqLoss::Hinge => "hinge",
            SeqLoss::Crf => "crf",
        })
    }
}

/// Name of the label-pair group in reports (its kernel weight is `beta0`).
pub const BIGRAM_GROUP: &str = "beta0";

/// A first-order chain task over training words: word `i` covers the training points
/// (characters) `words[i]`, labelled `labels[p]`.
#[derive(Debug, Clone)]
pub struct SequenceTask {
    pub loss: SeqLoss,
    /// Label of each training point (0..n_labels).
    pub labels: Vec<usize>,
    /// The points of each word (consecutive, in order).
    pub words: Vec<Range<usize>>,
    pub n_labels: usize,
    /// Learn `beta0` inside the MKL regularizer instead of fixing it at 1.
    pub learn_beta0: bool,
    /// Cost of one wrong label in the Hamming cost of the hinge loss (1 in the paper).
    pub cost: f64,
}

impl SequenceTask {
    /// Checks that the words tile the points in order and the labels are in range.
    pub fn new(
        loss: SeqLoss,
        labels: Vec<usize>,
        words: Vec<Range<usize>>,
        n_labels: usize,
        learn_beta0: bool,
    ) -> Result<SequenceTask> {
        if n_labels < 2 {
            return Err(Error::invalid("sequence labeling needs at least 2 labels"));
        }
        let mut next = 0;
        for (w, r) in words.iter().enumerate() {
            if r.start != next || r.end <= r.start {
                return Err(Error::invalid(format!(
                    "word {w} covers points {r:?}: words must be non-empty runs of consecutive \
                     points starting at {next}"
                )));
            }
            next = r.end;
        }
        if next != labels.len() {
            return Err(Error::invalid(format!(
                "the words cover {next} points but there are {} labels",
                labels.len()
            )));
        }
        if let Some(&y) = labels.iter().find(|&&y| y >= n_labels) {
            return Err(Error::invalid(format!("label {y} is not below {n_labels}")));
        }
        Ok(SequenceTask {
            loss,
            labels,
            words,
            n_labels,
            learn_beta0,
            cost: 1.0,
        })
    }

    /// The label-pair scores `W` (effective values) of the explicit group.
    pub fn transitions(&self, explicit: &[ScaledVec]) -> Vec<f64> {
        let w = &explicit[0];
        let s = w.scale();
        w.coef().iter().map(|c| s * c).collect()
    }

    /// Loss of word `i` and its gradient, given unigram scores and label-pair scores.
    /// `grad_unary` (`len x L`) and `grad_trans` (`L x L`) are overwritten.
    pub fn word_loss(
        &self,
        i: usize,
        unary: &[f64],
        trans: &[f64],
        grad_unary: &mut [f64],
        grad_trans: &mut [f64],
    ) -> f64 {
        let l = self.n_labels;
        let gold = &self.labels[self.words[i].clone()];
        grad_unary.iter_mut().for_each(|g| *g = 0.0);
        grad_trans.iter_mut().for_each(|g| *g = 0.0);
        let gold_score = sequence_score(unary, trans, l, gold);
        match self.loss {
            SeqLoss::Hinge => {
                let (aug, pred) = loss_augmented_viterbi(unary, trans, l, gold, self.cost);
                if hamming(&pred, gold) == 0 {
                    return 0.0;
                }
                for (k, (&p, &g)) in pred.iter().zip(gold).enumerate() {
                    if p != g {
                        grad_unary[k * l + p] += 1.0;
                        grad_unary[k * l + g] -= 1.0;
                    }
                }
                for k in 1..gold.len() {
                    grad_trans[pred[k - 1] * l + pred[k]] += 1.0;
                    grad_trans[gold[k - 1] * l + gold[k]] -= 1.0;
                }
                (aug - gold_score).max(0.0)
            }
            SeqLoss::Crf => {
                let m = forward_backward(unary, trans, l);
                grad_unary.copy_from_slice(&m.node);
                grad_trans.copy_from_slice(&m.edge);
                for (k, &g) in gold.iter().enumerate() {
                    grad_unary[k * l + g] -= 1.0;
                    if k > 0 {
                        grad_trans[gold[k - 1] * l + g] -= 1.0;
                    }
                }
                (m.log_z - gold_score).max(0.0)
            }
        }
    }
}

/// The best label sequence of a word given its unigram scores (`len x L`) and the label-pair
/// scores (`L x L`): Viterbi (eq. 1).
pub fn decode(unary: &[f64], trans: &[f64], n_labels: usize) -> Vec<usize> {
    viterbi(unary, trans, n_labels).1
}

impl OnlineTask for SequenceTask {
    fn n_examples(&self) -> usize {
        self.words.len()
    }
    fn n_points(&self) -> usize {
        self.labels.len()
    }
    fn n_labels(&self) -> usize {
        self.n_labels
    }
    fn points(&self, i: usize) -> Range<usize> {
        self.words[i].clone()
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
    fn loss_grad(
        &self,
        i: usize,
        scores: &[f64],
        explicit: &[ScaledVec],
        grad: &mut Gradient,
    ) -> f64 {
        let l = self.n_labels;
        let trans = self.transitions(explicit);
        let mut gt = vec![0.0; l * l];
        let loss = self.word_loss(i, scores, &trans, &mut grad.scores, &mut gt);
        for (j, &g) in gt.iter().enumerate() {
            if g != 0.0 {
                grad.explicit.push((0, j, g));
            }
        }
        loss
    }
    /// L(0): the average word length times the cost (hinge: every label wrong attains the
    /// maximum) or times log L (CRF: the uniform distribution); martins2010 App. E.
    fn loss_at_zero(&self) -> f64 {
        let avg_len = self.labels.len() as f64 / self.words.len().max(1) as f64;
        match self.loss {
            SeqLoss::Hinge => avg_len * self.cost,
            SeqLoss::Crf => avg_len * (self.n_labels as f64).ln(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    fn task(loss: SeqLoss) -> SequenceTask {
        // Two words over 3 labels: [0, 2, 1] and [1, 1].
        SequenceTask::new(loss, vec![0, 2, 1, 1, 1], vec![0..3, 3..5], 3, false).unwrap()
    }

    /// Brute-force loss of a word: max / log-sum-exp over all label sequences.
    fn brute_loss(t: &SequenceTask, i: usize, unary: &[f64], trans: &[f64]) -> f64 {
        let l = t.n_labels;
        let gold = &t.labels[t.words[i].clone()];
        let n = gold.len();
        let mut vals = Vec::new();
        for code in 0..l.pow(n as u32) {
            let y: Vec<usize> = (0..n).map(|k| (code / l.pow(k as u32)) % l).collect();
            let s = sequence_score(unary, trans, l, &y);
            vals.push(match t.loss {
                SeqLoss::Hinge => s + t.cost * hamming(&y, gold) as f64,
                SeqLoss::Crf => s,
            });
        }
        let m = vals.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let top = match t.loss {
            SeqLoss::Hinge => m,
            SeqLoss::Crf => m + vals.iter().map(|v| (v - m).exp()).sum::<f64>().ln(),
        };
        top - sequence_score(unary, trans, l, gold)
    }

    /// Losses equal their enumeration; gradients match central finite differences (the
    /// hinge is piecewise linear: random scores avoid its kinks almost surely).
    #[test]
    fn losses_and_gradients_match_enumeration_and_finite_differences() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        for loss in [SeqLoss::Hinge, SeqLoss::Crf] {
            let t = task(loss);
            for _ in 0..30 {
                for i in 0..2 {
                    let n = t.words[i].len();
                    let l = 3;
                    let u: Vec<f64> = (0..n * l).map(|_| rng.gen_range(-1.5..1.5)).collect();
                    let w: Vec<f64> = (0..l * l).map(|_| rng.gen_range(-1.0..1.0)).collect();
                    let mut gu = vec![0.0; n * l];
                    let mut gw = vec![0.0; l * l];
                    let v = t.word_loss(i, &u, &w, &mut gu, &mut gw);
                    let want = brute_loss(&t, i, &u, &w);
                    assert!((v - want).abs() < 1e-10, "{loss}: {v} vs {want}");
                    let h = 1e-6;
                    for k in 0..n * l {
                        let (mut up, mut um) = (u.clone(), u.clone());
                        up[k] += h;
                        um[k] -= h;
                        let fd =
                            (brute_loss(&t, i, &up, &w) - brute_loss(&t, i, &um, &w)) / (2.0 * h);
                        assert!(
                            (fd - gu[k]).abs() < 1e-5,
                            "{loss} unary {k}: {fd} vs {}",
                            gu[k]
                        );
                    }
                    for k in 0..l * l {
                        let (mut wp, mut wm) = (w.clone(), w.clone());
                        wp[k] += h;
                        wm[k] -= h;
                        let fd =
                            (brute_loss(&t, i, &u, &wp) - brute_loss(&t, i, &u, &wm)) / (2.0 * h);
                        assert!(
                            (fd - gw[k]).abs() < 1e-5,
                            "{loss} trans {k}: {fd} vs {}",
                            gw[k]
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn zero_model_loss_and_groups() {
        let t = task(SeqLoss::Hinge);
        assert_eq!(t.loss_at_zero(), 2.5);
        // At zero scores the hinge loss of each word is its length (all labels wrong).
        let mut g = Gradient {
            scores: vec![0.0; 9],
            explicit: Vec::new(),
        };
        let w = vec![ScaledVec::zeros(9, false)];
        assert_eq!(t.loss_grad(0, &[0.0; 9], &w, &mut g), 3.0);
        assert_eq!(t.explicit_groups()[0].role, GroupRole::L2Shrink);
        let c = task(SeqLoss::Crf);
        assert!((c.loss_at_zero() - 2.5 * 3f64.ln()).abs() < 1e-12);
        let mut b = task(SeqLoss::Hinge);
        b.learn_beta0 = true;
        assert_eq!(b.explicit_groups()[0].role, GroupRole::Regularized);
    }

    #[test]
    fn rejects_inconsistent_words() {
        assert!(SequenceTask::new(
            SeqLoss::Hinge,
            vec![0, 1],
            std::iter::once(0..1).collect(),
            2,
            false
        )
        .is_err());
        assert!(SequenceTask::new(
            SeqLoss::Hinge,
            vec![0, 1],
            std::iter::once(1..2).collect(),
            2,
            false
        )
        .is_err());
        assert!(SequenceTask::new(
            SeqLoss::Hinge,
            vec![0, 5],
            std::iter::once(0..2).collect(),
            2,
            false
        )
        .is_err());
        assert!("crf".parse::<SeqLoss>().is_ok());
        assert!("cfr"
            .parse::<SeqLoss>()
            .unwrap_err()
            .to_string()
            .contains("crf"));
    }
}
