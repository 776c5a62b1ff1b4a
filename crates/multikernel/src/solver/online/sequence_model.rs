//! A trained sequence labeler (SPOM, Alg. 3 of Martins et al. 2011, on a first-order chain):
//! unigram scores from a kernel expansion over support characters,
//!
//! ```text
//! f(x_i, y) = sum_g sum_{(k, w) in group g} w sum_j K_k(x_i, x_j) a_g[j, y],
//! ```
//!
//! and label-pair scores `W[y_i, y_{i+1}]` (the bigram group, its weight beta0 included);
//! words are decoded by Viterbi (eq. 1). A kernel group is one base kernel (MKL, single
//! kernels) or a fixed combination of base kernels (the plain average baseline).

use crate::data::ocr::{label_char, OcrData};
use crate::data::Matrix;
use crate::error::{Error, Result};
use crate::kernel::binary::expansion_scores;
use crate::kernel::{FittedKernel, MemoryLimit};
use crate::task::chain::viterbi;
use crate::task::sequence::SeqLoss;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::ops::Range;

/// A kernel group: base kernels (indices into the model's kernels) with fixed factors, e.g.
/// `[(0, 1.0)]` for one kernel, `[(0, 1/3), (1, 1/3), (2, 1/3)]` for an average.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelGroup {
    pub name: String,
    pub components: Vec<(usize, f64)>,
}

impl KernelGroup {
    /// One group per base kernel (MKL and single-kernel rows).
    pub fn separate(kernels: &[FittedKernel]) -> Vec<KernelGroup> {
        kernels
            .iter()
            .enumerate()
            .map(|(k, f)| KernelGroup {
                name: f.name.clone(),
                components: vec![(k, 1.0)],
            })
            .collect()
    }

    /// One group holding the plain average `(1/M) sum_k K_k`.
    pub fn average(kernels: &[FittedKernel]) -> Vec<KernelGroup> {
        let w = 1.0 / kernels.len().max(1) as f64;
        vec![KernelGroup {
            name: format!(
                "average({})",
                kernels
                    .iter()
                    .map(|k| k.name.as_str())
                    .collect::<Vec<_>>()
                    .join(" + ")
            ),
            components: (0..kernels.len()).map(|k| (k, w)).collect(),
        }]
    }
}

/// The trained sequence model.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SequenceModel {
    pub loss: SeqLoss,
    /// Label names (`a`..`z` for OCR).
    pub labels: Vec<String>,
    /// Input columns (pixels) the kernels expect.
    pub n_features: usize,
    pub kernels: Vec<FittedKernel>,
    pub groups: Vec<KernelGroup>,
    /// Support characters (rows), shared by all groups.
    pub support: Matrix,
    /// Index of each support character among the training characters.
    pub support_rows: Vec<usize>,
    /// Per group: coefficients `n_support x n_labels` (support-major); empty for a group whose
    /// norm is zero.
    pub coef: Vec<Vec<f64>>,
    /// Label-pair scores `W[a * L + b]` (effective, beta0 included).
    pub transitions: Vec<f64>,
    /// Norms of the regularized groups (kernel groups, then the bigram group when beta0 is
    /// learned) and the kernel weights they imply, with their names.
    pub group_norms: Vec<f64>,
    pub weight_names: Vec<String>,
    pub weights: Vec<f64>,
    /// How it was trained (regularizer, lambda, C, eta0, epochs, radius, ...).
    pub training: serde_json::Value,
}

impl SequenceModel {
    pub fn n_labels(&self) -> usize {
        self.labels.len()
    }

    /// Per base kernel, the combined coefficients `sum_g w_gk a_g` (`n_support x L`), `None`
    /// for kernels no non-zero group uses.
    pub fn kernel_coefs(&self) -> Vec<Option<Matrix>> {
        let (n, l) = (self.support.rows, self.n_labels());
        let mut out: Vec<Option<Matrix>> = vec![None; self.kernels.len()];
        for (g, c) in self.groups.iter().zip(&self.coef) {
            if c.is_empty() {
                continue;
            }
            for &(k, w) in &g.components {
                let m = out[k].get_or_insert_with(|| Matrix::zeros(n, l));
                for (o, v) in m.data.iter_mut().zip(c) {
                    *o += w * v;
                }
            }
        }
        out
    }

    /// Unigram scores (`n x L`) of the rows of `x`.
    pub fn unary_scores(&self, x: &Matrix, limit: &MemoryLimit) -> Result<Matrix> {
        if x.cols != self.n_features {
            return Err(Error::invalid(format!(
                "the model expects {} pixels per character, the data has {}",
                self.n_features, x.cols
            )));
        }
        let coefs = self.kernel_coefs();
        expansion_scores(
            &self.kernels,
            &self.support,
            &coefs,
            self.n_labels(),
            x,
            limit,
        )
    }

    /// The best label sequence of each word (`words` index rows of `x`), by Viterbi.
    pub fn predict_words(
        &self,
        x: &Matrix,
        words: &[Range<usize>],
        limit: &MemoryLimit,
    ) -> Result<Vec<Vec<usize>>> {
        if let Some(w) = words.iter().find(|w| w.end > x.rows || w.start > w.end) {
            return Err(Error::invalid(format!(
                "word {w:?} is outside the {} characters given",
                x.rows
            )));
        }
        let s = self.unary_scores(x, limit)?;
        Ok(decode_words(&s, &self.transitions, words))
    }

    /// Predicted words of an OCR data set, spelled out.
    pub fn predict_ocr(&self, data: &OcrData, limit: &MemoryLimit) -> Result<Vec<String>> {
        let p = self.predict_words(&data.x, &data.words, limit)?;
        Ok(p.iter()
            .map(|w| w.iter().map(|&y| label_char(y)).collect())
            .collect())
    }

    /// Per-character accuracy (a fraction) on an OCR data set.
    pub fn char_accuracy(&self, data: &OcrData, limit: &MemoryLimit) -> Result<f64> {
        let p = self.predict_words(&data.x, &data.words, limit)?;
        Ok(char_accuracy(&p, data))
    }

    /// Names and weights of the kernel groups (and beta0 when learned).
    pub fn kernel_weights(&self) -> Vec<(String, f64)> {
        self.weight_names
            .iter()
            .cloned()
            .zip(self.weights.iter().copied())
            .collect()
    }
}

/// Viterbi on each word given unigram scores (`n x L`) and label-pair scores.
pub fn decode_words(scores: &Matrix, trans: &[f64], words: &[Range<usize>]) -> Vec<Vec<usize>> {
    let l = scores.cols;
    words
        .par_iter()
        .map(|w| viterbi(&scores.data[w.start * l..w.end * l], trans, l).1)
        .collect()
}

/// Fraction of characters whose predicted label is right.
pub fn char_accuracy(pred: &[Vec<usize>], data: &OcrData) -> f64 {
    let mut right = 0usize;
    let mut total = 0usize;
    for (w, p) in pred.iter().enumerate() {
        let gold = data.word_labels(w);
        total += gold.len();
        right += p.iter().zip(gold).filter(|(a, b)| a == b).count();
    }
    if total == 0 {
        0.0
    } else {
        right as f64 / total as f64
    }
}
