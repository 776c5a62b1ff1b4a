//! The seam between the online learner (Alg. 1 / SPOM) and a task: what an example is, which
//! explicit parameter groups the task owns, and the loss with its gradient in score space.

use crate::params::ScaledVec;
use serde::{Deserialize, Serialize};
use std::ops::Range;

/// How an explicit parameter group is regularized.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum GroupRole {
    /// Takes part in the (MKL) regularizer like a kernel group.
    Regularized,
    /// Not regularized (a bias).
    Unregularized,
    /// Plain l2 shrinkage w <- w / (1 + eta lambda) each round, outside the MKL prox (a group
    /// whose weight beta is fixed at 1).
    L2Shrink,
}

/// An explicit (non-kernelized) parameter group a task owns: a bias, a label-pair matrix, ...
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExplicitGroup {
    pub name: String,
    pub len: usize,
    pub role: GroupRole,
}

/// The loss side of Alg. 1: what an example is and the (sub)gradient of its loss.
///
/// An example covers a range of consecutive training points (one point for a vector task, the
/// characters of a word for sequence labeling). Each point has `n_labels` unigram scores
/// `sum_m f_m(x_p, y)`, computed by the learner from the kernel groups; the task adds whatever its
/// explicit groups contribute.
pub trait OnlineTask: Sync {
    fn n_examples(&self) -> usize;
    /// Training points (rows of the Gram matrices).
    fn n_points(&self) -> usize;
    fn n_labels(&self) -> usize;
    /// The training points of example `i`.
    fn points(&self, i: usize) -> Range<usize>;
    fn explicit_groups(&self) -> Vec<ExplicitGroup>;
    /// Loss of example `i` given the kernel scores of its points (`len * n_labels`, row major)
    /// and the explicit groups; writes dLoss/dscore into `grad.scores` (same layout, zeroed by
    /// the caller) and pushes explicit-gradient entries (group, index, value) into
    /// `grad.explicit` (emptied by the caller; repeated indices are summed) or dense rank-one
    /// gradients into `grad.outer` ([`Gradient::push_outer`]).
    fn loss_grad(
        &self,
        i: usize,
        scores: &[f64],
        explicit: &[ScaledVec],
        grad: &mut Gradient,
    ) -> f64;
    /// Average loss of the zero model, L(0), for the projection radius.
    fn loss_at_zero(&self) -> f64;
}

/// Gradient of one example's loss.
#[derive(Debug, Default, Clone)]
pub struct Gradient {
    pub scores: Vec<f64>,
    pub explicit: Vec<(usize, usize, f64)>,
    /// Dense rank-one gradients of explicit groups (a mapped row `z` times the loss's
    /// gradient `v` in score space), applied in `O(D L)` without the sort the sparse entries
    /// of `explicit` need; their vectors live in `outer_values`.
    pub outer: Vec<OuterGradient>,
    /// The vectors `z` and `v` of the entries of `outer`.
    pub outer_values: Vec<f64>,
}

/// The gradient `z v^T` of explicit group `group` (feature-major: entry `d * v.len() + y` is
/// `z[d] v[y]`), its vectors at `z` and `v` in [`Gradient::outer_values`].
#[derive(Debug, Clone, PartialEq)]
pub struct OuterGradient {
    pub group: usize,
    pub z: Range<usize>,
    pub v: Range<usize>,
}

impl Gradient {
    /// Empties the gradient for the next example (keeping its buffers).
    pub(crate) fn clear_explicit(&mut self) {
        self.explicit.clear();
        self.outer.clear();
        self.outer_values.clear();
    }

    /// Adds the rank-one gradient `z v^T` of explicit group `group`.
    pub(crate) fn push_outer(&mut self, group: usize, z: &[f64], v: &[f64]) {
        let start = self.outer_values.len();
        self.outer_values.extend_from_slice(z);
        self.outer_values.extend_from_slice(v);
        let mid = start + z.len();
        self.outer.push(OuterGradient {
            group,
            z: start..mid,
            v: mid..mid + v.len(),
        });
    }
}
