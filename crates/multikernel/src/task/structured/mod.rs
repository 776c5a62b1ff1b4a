//! The structured-task seam (martins2011 Sec. 2; ARCHITECTURE.md "The seams"): what a
//! structured output is, how it decomposes into parts, and what a learner may ask of it.
//!
//! An example `x_i` has parts `r = 0..n_parts(i)` (a label at a position, a label pair, an
//! arc). A model scores every part, and an output `y` is scored by its part counts:
//!
//! ```text
//! s(y) = sum_r Phi_r(x_i, y) s_r,        Phi(x_i, y) = the joint feature in part space.
//! ```
//!
//! Parts may be *tied*: the chain's label-pair part `W[a, b]` is one part that occurs at every
//! position, so `Phi` is a sparse vector of part *counts*, not of 0/1 indicators.
//!
//! How a part is scored from the parameters is a separate, explicit mapping,
//! [`StructuredTask::part_map`] (per part, [`PartMap::scorer`]):
//! - [`PartScorer::Kernel`]: `sum_m f_m(x_p, y)`, the kernel groups at training point `p`
//!   with label slot `y` (the OCR unigram parts; Alg. 3 of martins2011 keeps one coefficient
//!   per training point and label);
//! - [`PartScorer::Parameter`]: one explicit parameter `theta_j` (the unit feature vector
//!   `e_j`): the chain's label pairs;
//! - [`PartScorer::Explicit`]: `<theta, phi_r>` with a sparse feature vector `phi_r` over the
//!   task's explicit parameter groups (global indices of their [`GroupLayout`]): a parser's
//!   template features.
//! - [`PartScorer::Conjoined`]: `sum_j x_j theta[offset + j L + y]`, an observation row `x`
//!   conjoined with label slot `y` of `L` (a CRF++ unigram template's features: one weight per
//!   observation feature and label); the row is stored once for all `L` labels.
//!
//! So the gradient of a loss in part space, `dL/ds_r`, turns into parameter gradients by
//! that mapping (the chain rule through `s_r`), which is all a learner needs:
//! - the online learner (Alg. 1 / SPOM) through [`StructuredOnline`], an adapter that makes
//!   any structured task a [`crate::task::OnlineTask`];
//! - a cutting-plane learner (mao-tsang Alg. 1, Joachims et al. 2009) through
//!   [`StructuredTask::loss_augmented_decode`], which returns the output together with its
//!   joint feature.
//!
//! The losses over the trait are in [`loss`]: the structured hinge (eq. 4 of martins2011) by
//! loss-augmented decoding, and the CRF loss (eq. 3) by marginals.

pub(crate) mod adapter;
pub(crate) mod loss;
#[cfg(test)]
pub(crate) mod testing;

pub(crate) use adapter::StructuredOnline;
pub(crate) use loss::loss_grad;
pub use loss::StructLoss;

use crate::error::{Error, Result};
use crate::features::{GroupLayout, SparseRows, SparseVector};
use crate::task::online::ExplicitGroup;
use std::ops::Range;

/// How one part is scored from the parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum PartScorer<'a> {
    /// `sum_m f_m(x_point, label)`: the kernel groups at training point `point` with label
    /// slot `label` (below [`StructuredTask::n_labels`]).
    Kernel { point: usize, label: usize },
    /// `theta_j`: one explicit parameter (global index `j`), i.e. the unit feature vector
    /// `e_j` (the chain's label pairs, a bias).
    Parameter(usize),
    /// `<theta, phi>`: a sparse feature vector (sorted `(index, value)` entries) over the
    /// explicit groups (global indices of the layout of [`StructuredTask::explicit_groups`]).
    Explicit(&'a [(usize, f64)]),
    /// `sum_j x_j theta[offset + j * n_labels + label]`: observation row `x` (sorted
    /// `(j, x_j)` entries) conjoined with a label.
    Conjoined {
        row: &'a [(usize, f64)],
        label: usize,
        n_labels: usize,
        offset: usize,
    },
}

/// Label-conjoined parts: row `r` of `rows` (an observation, e.g. a token's template
/// features) with label slot `y` is one part, scored `sum_j x_j theta[offset + j L + y]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Conjoined<'a> {
    pub rows: &'a SparseRows,
    pub n_labels: usize,
    /// Global index of observation feature 0 with label 0.
    pub offset: usize,
}

impl Conjoined<'_> {
    /// One past the largest parameter index a part uses (`offset` without entries).
    pub(crate) fn dim(&self) -> usize {
        if self.rows.n_entries() == 0 {
            self.offset
        } else {
            self.offset + self.rows.dim() * self.n_labels
        }
    }
}

/// How the parts of one example are scored, in four consecutive blocks:
/// 1. kernel parts, one per training point of `points` and label slot: part `k * L + y` is
///    point `points.start + k` with label `y` (`L` = `n_labels`);
/// 2. parameter parts, one per explicit parameter of `parameters` (global indices, in order);
/// 3. explicit parts, one per row of `explicit` (its sparse feature vector);
/// 4. conjoined parts, one per row of `conjoined` and label: part `r * L' + y` of the block
///    is row `r` with label `y` (`L'` = the block's `n_labels`).
#[derive(Debug, Clone, PartialEq)]
pub struct PartMap<'a> {
    /// Consecutive training points of the kernel parts (empty for a task without them).
    pub points: Range<usize>,
    pub n_labels: usize,
    /// Explicit parameters that are parts by themselves.
    pub parameters: Range<usize>,
    /// Feature vectors of the remaining parts (`None`: no such parts).
    pub explicit: Option<&'a SparseRows>,
    /// Label-conjoined parts (`None`: no such parts).
    pub conjoined: Option<Conjoined<'a>>,
}

impl PartMap<'_> {
    /// Kernel parts (`points.len() * n_labels`).
    pub(crate) fn n_kernel_parts(&self) -> usize {
        self.points.len() * self.n_labels
    }

    /// Rows of `explicit`.
    pub(crate) fn n_explicit_parts(&self) -> usize {
        self.explicit.map_or(0, SparseRows::n_rows)
    }

    /// Rows of `conjoined` times its labels.
    pub(crate) fn n_conjoined_parts(&self) -> usize {
        self.conjoined.map_or(0, |c| c.rows.n_rows() * c.n_labels)
    }

    pub(crate) fn n_parts(&self) -> usize {
        self.n_kernel_parts()
            + self.parameters.len()
            + self.n_explicit_parts()
            + self.n_conjoined_parts()
    }

    /// How part `part` (below [`PartMap::n_parts`]) is scored.
    pub(crate) fn scorer(&self, part: usize) -> PartScorer<'_> {
        let k = self.n_kernel_parts();
        let p = self.parameters.len();
        if part < k {
            PartScorer::Kernel {
                point: self.points.start + part / self.n_labels,
                label: part % self.n_labels,
            }
        } else if part < k + p {
            PartScorer::Parameter(self.parameters.start + part - k)
        } else if part < k + p + self.n_explicit_parts() {
            PartScorer::Explicit(self.explicit.map_or(&[], |e| e.row(part - k - p)))
        } else {
            let r = part - k - p - self.n_explicit_parts();
            match self.conjoined {
                Some(c) => PartScorer::Conjoined {
                    row: c.rows.row(r / c.n_labels),
                    label: r % c.n_labels,
                    n_labels: c.n_labels,
                    offset: c.offset,
                },
                None => PartScorer::Explicit(&[]),
            }
        }
    }
}

/// The result of loss-augmented decoding: `y_hat = argmax_y s(y) + c(y_i, y)`.
#[derive(Debug, Clone, PartialEq)]
pub struct Augmented<O> {
    pub output: O,
    /// `s(y_hat) + c(y_i, y_hat)`.
    pub score: f64,
    /// `Phi(x_i, y_hat)`: the output's part counts.
    pub feature: SparseVector,
}

/// The Gibbs distribution `p(y) = exp(s(y) - log Z)` of an example: `log Z` and the expected
/// part counts `E_p[Phi(x_i, y)]` (dense, one entry per part).
#[derive(Debug, Clone, PartialEq)]
pub struct PartMarginals {
    pub log_z: f64,
    pub expected: Vec<f64>,
}

/// Correct / total counts of a metric (token accuracy, unlabeled attachment score).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub correct: usize,
    pub total: usize,
}

impl Counts {
    pub(crate) fn new(correct: usize, total: usize) -> Counts {
        Counts { correct, total }
    }

    /// The fraction correct (0 when there is nothing to count).
    pub(crate) fn value(&self) -> f64 {
        if self.total == 0 {
            0.0
        } else {
            self.correct as f64 / self.total as f64
        }
    }
}

impl std::ops::Add for Counts {
    type Output = Counts;
    fn add(self, o: Counts) -> Counts {
        Counts::new(self.correct + o.correct, self.total + o.total)
    }
}

impl std::iter::Sum for Counts {
    fn sum<I: Iterator<Item = Counts>>(iter: I) -> Counts {
        iter.fold(Counts::default(), |a, b| a + b)
    }
}

/// A structured prediction task over training examples: parts, decoding, loss-augmented
/// decoding, cost, marginals and metric (ARCHITECTURE.md "The seams"). Example `i`'s gold output is
/// [`StructuredTask::gold`]; costs and metrics compare against it.
///
/// Implementations: the first-order chain ([`crate::task::sequence::SequenceTask`]) and the
/// arc-factored tree task ([`crate::task::tree::TreeTask`]). A new decoder (Eisner,
/// Chu-Liu-Edmonds) is a new implementation of [`StructuredTask::decode`] and
/// [`StructuredTask::loss_augmented_decode`]; the learners do not change.
pub trait StructuredTask: Sync {
    /// An output (a label sequence, a head per token).
    type Output: Clone + PartialEq + std::fmt::Debug + Send + Sync;

    fn n_examples(&self) -> usize;

    /// Parts of example `i`; part scores are vectors of this length.
    fn n_parts(&self, i: usize) -> usize {
        self.part_map(i).n_parts()
    }

    /// How the parts of example `i` are scored from the parameters.
    fn part_map(&self, i: usize) -> PartMap<'_>;

    /// The explicit parameter groups, in the order of their global index layout.
    fn explicit_groups(&self) -> Vec<ExplicitGroup>;

    /// Training points (rows of the Gram matrices) of kernel-scored parts; 0 for a task whose
    /// parts are all explicit.
    fn n_points(&self) -> usize {
        0
    }

    /// Label slots per training point of kernel-scored parts.
    fn n_labels(&self) -> usize {
        0
    }

    /// The gold output of example `i`.
    fn gold(&self, i: usize) -> &Self::Output;

    /// `Phi(x_i, y)`: the part counts of output `y` (a sparse vector over parts).
    fn joint_feature(&self, i: usize, y: &Self::Output) -> SparseVector;

    /// `s(y) = <Phi(x_i, y), scores>`.
    fn score(&self, i: usize, scores: &[f64], y: &Self::Output) -> f64 {
        self.joint_feature(i, y).dot(scores)
    }

    /// `argmax_y s(y)` (eq. 1 of martins2011).
    fn decode(&self, i: usize, scores: &[f64]) -> Self::Output;

    /// `argmax_y s(y) + c(y_i, y)` with the output's score and joint feature (the decoding
    /// step of the structured hinge, eq. 4; line 6 of Alg. 3).
    fn loss_augmented_decode(&self, i: usize, scores: &[f64]) -> Augmented<Self::Output>;

    /// `c(y_i, y)`: the cost of predicting `y` for example `i` (0 for the gold output).
    fn cost(&self, i: usize, y: &Self::Output) -> f64;

    /// `log Z` and expected part counts, for the CRF loss (eq. 3); `None` when the task has
    /// no marginal inference.
    fn marginals(&self, _i: usize, _scores: &[f64]) -> Option<PartMarginals> {
        None
    }

    /// Correct / total of prediction `y` against the gold output (token accuracy, UAS).
    fn metric(&self, i: usize, y: &Self::Output) -> Counts;

    /// `L(0)`, the average loss of the zero model (martins2010 App. E): the average largest
    /// cost (hinge) or the average `log |Y(x_i)|` (CRF); NaN when the CRF loss is not
    /// available. [`Self::loss_at_zero_total`] over the number of examples.
    fn loss_at_zero(&self, loss: StructLoss) -> f64 {
        self.loss_at_zero_total(loss) / self.n_examples().max(1) as f64
    }

    /// The examples' losses at the zero model, summed (the numerator of
    /// [`Self::loss_at_zero`]; parts of the data held apart add theirs). The default decodes
    /// every example at zero scores.
    fn loss_at_zero_total(&self, loss: StructLoss) -> f64 {
        (0..self.n_examples())
            .map(|i| {
                let zeros = vec![0.0; self.n_parts(i)];
                match loss {
                    StructLoss::Hinge => self.loss_augmented_decode(i, &zeros).score,
                    StructLoss::Crf => self.marginals(i, &zeros).map_or(f64::NAN, |m| m.log_z),
                }
            })
            .sum()
    }
}

/// The layout of a task's explicit groups in one global index space.
pub(crate) fn explicit_layout<T: StructuredTask + ?Sized>(task: &T) -> GroupLayout {
    GroupLayout::new(task.explicit_groups().iter().map(|g| g.len))
}

/// Checks the part mapping of every example against the task's declared sizes: kernel parts
/// at training points below `n_points` with `n_labels` label slots, parameter parts and
/// explicit features inside the layout. After this, learners index without bounds surprises.
pub(crate) fn check_parts<T: StructuredTask + ?Sized>(task: &T) -> Result<()> {
    let total = explicit_layout(task).total();
    for i in 0..task.n_examples() {
        let map = task.part_map(i);
        let pts = &map.points;
        if pts.end > task.n_points() || pts.start > pts.end {
            return Err(Error::data(format!(
                "example {i} refers to training points {pts:?} of {}",
                task.n_points()
            )));
        }
        if !pts.is_empty() && map.n_labels != task.n_labels() {
            return Err(Error::shape(
                format!("label slots of the kernel parts of example {i}"),
                task.n_labels(),
                map.n_labels,
            ));
        }
        if map.n_parts() != task.n_parts(i) {
            return Err(Error::shape(
                format!("parts of example {i}"),
                task.n_parts(i),
                map.n_parts(),
            ));
        }
        if map.conjoined.is_some_and(|c| c.n_labels == 0) {
            return Err(Error::data(format!(
                "example {i} has label-conjoined parts without labels"
            )));
        }
        let dim = map
            .explicit
            .map_or(0, SparseRows::dim)
            .max(map.parameters.end)
            .max(map.conjoined.map_or(0, |c| c.dim()));
        if dim > total || map.parameters.start > map.parameters.end {
            return Err(Error::shape(
                format!("explicit parameters the parts of example {i} use"),
                total,
                dim,
            ));
        }
    }
    Ok(())
}

/// Part scores of example `i` from explicit weights `w` (global indices) into `out`; an error
/// for a kernel-scored part (a learner over explicit groups only).
pub(crate) fn explicit_scores<T: StructuredTask + ?Sized>(
    task: &T,
    i: usize,
    w: &[f64],
    out: &mut Vec<f64>,
) -> Result<()> {
    let map = task.part_map(i);
    if map.n_kernel_parts() > 0 {
        return Err(Error::unsupported(
            "this learner scores parts by explicit features only; the task has kernel-scored \
             parts",
        ));
    }
    out.clear();
    out.extend_from_slice(&w[map.parameters.clone()]);
    if let Some(e) = map.explicit {
        e.mul_dense(w, out);
    }
    if let Some(c) = map.conjoined {
        conjoined_scores(&c, |j| &w[j..j + c.n_labels], out);
    }
    Ok(())
}

/// Marks in `reads` every explicit weight [`explicit_scores`] reads for the examples of
/// `task`: the parameters that are parts, the explicit rows' entries, and the `n_labels`
/// weights of each conjoined entry. Scores taken at weights equal to `w` wherever `reads`
/// holds are `w`'s scores (what a process that decodes these examples needs of the point).
pub(crate) fn explicit_reads<T: StructuredTask + ?Sized>(task: &T, reads: &mut [bool]) {
    for i in 0..task.n_examples() {
        let map = task.part_map(i);
        reads[map.parameters.clone()].fill(true);
        if let Some(e) = map.explicit {
            for r in 0..e.n_rows() {
                for &(j, _) in e.row(r) {
                    reads[j] = true;
                }
            }
        }
        if let Some(c) = map.conjoined {
            let l = c.n_labels;
            for r in 0..c.rows.n_rows() {
                for &(j, _) in c.rows.row(r) {
                    let from = c.offset + j * l;
                    reads[from..from + l].fill(true);
                }
            }
        }
    }
}

/// Appends the scores of every conjoined part (row-major: row, then label) to `out`;
/// `weights(j)` gives the `n_labels` consecutive parameters from global index `j`.
pub(crate) fn conjoined_scores<'w>(
    c: &Conjoined<'_>,
    weights: impl Fn(usize) -> &'w [f64],
    out: &mut Vec<f64>,
) {
    let l = c.n_labels;
    for r in 0..c.rows.n_rows() {
        let start = out.len();
        out.resize(start + l, 0.0);
        for &(j, x) in c.rows.row(r) {
            let ws = weights(c.offset + j * l);
            for (o, wy) in out[start..].iter_mut().zip(ws) {
                *o += x * wy;
            }
        }
    }
}

/// `sum_r counts_r phi_r`: a part-space vector (the joint feature, a gradient) mapped into the
/// explicit parameter space (global indices); kernel parts are skipped.
#[cfg(test)]
pub(crate) fn explicit_feature<T: StructuredTask + ?Sized>(
    task: &T,
    i: usize,
    counts: &SparseVector,
) -> SparseVector {
    let mut pairs = Vec::new();
    explicit_pairs(task, i, counts, &mut pairs);
    SparseVector::from_pairs(pairs)
}

/// [`explicit_feature`]'s entries appended to `pairs` as they come (unsorted, an index
/// possibly repeated): for a caller that sums them into a dense vector anyway.
pub(crate) fn explicit_pairs<T: StructuredTask + ?Sized>(
    task: &T,
    i: usize,
    counts: &SparseVector,
    pairs: &mut Vec<(usize, f64)>,
) {
    let map = task.part_map(i);
    for (r, c) in counts.iter() {
        match map.scorer(r) {
            PartScorer::Kernel { .. } => {}
            PartScorer::Parameter(j) => pairs.push((j, c)),
            PartScorer::Explicit(f) => pairs.extend(f.iter().map(|&(j, v)| (j, c * v))),
            PartScorer::Conjoined {
                row,
                label,
                n_labels,
                offset,
            } => pairs.extend(
                row.iter()
                    .map(|&(j, v)| (offset + j * n_labels + label, c * v)),
            ),
        }
    }
}

/// Decodes every example with explicit weights `w` and sums the metric (examples in
/// parallel).
pub(crate) fn evaluate_explicit<T: StructuredTask + ?Sized>(task: &T, w: &[f64]) -> Result<Counts> {
    use rayon::prelude::*;
    (0..task.n_examples())
        .into_par_iter()
        .map_init(Vec::new, |scores, i| {
            explicit_scores(task, i, w, scores)?;
            Ok(task.metric(i, &task.decode(i, scores)))
        })
        .try_reduce(Counts::default, |a, b| Ok(a + b))
}
