//! A vector task whose kernels are partly explicit feature groups: a kernel with a feature map
//! `z_g` (a linear kernel, or an approximated one: [`crate::kernel::feature_map`]) is one
//! regularized explicit group `W_g` (`D_g x outputs`, feature major) instead of a kernel group
//! over an `n x n` Gram matrix; its scores are `z_g(x_i)^T W_g`. martins2011 Sec. 2.3: kernel
//! and explicit groups are both blocks of `theta`, and Alg. 1's subgradient and proximal
//! steps treat them alike (the gradient of block `g` is `z_g(x_i) (dLoss/dscore)^T`).
//!
//! With a linear kernel the two forms are the same model (`k(x, x') = z(x) . z(x')`): the
//! iterates agree up to rounding, which the tests of `solver::online::vector` check.

use crate::data::Matrix;
use crate::params::ScaledVec;
use crate::task::online::{ExplicitGroup, Gradient, GroupRole, OnlineTask};
use crate::task::VectorTask;
use std::ops::Range;

/// [`VectorTask`] plus explicit feature groups (module docs). The inner task's explicit
/// groups (the bias) come first, then one group per feature matrix.
pub struct ExplicitVectorTask<'a> {
    inner: &'a VectorTask,
    /// Per group: the mapped training rows, `n x D_g`.
    features: &'a [Matrix],
    names: Vec<String>,
    first: usize,
}

impl<'a> ExplicitVectorTask<'a> {
    /// `features[g]` holds `z_g` of every training row (as many rows as `inner` has
    /// examples), `names[g]` names the group.
    pub fn new(inner: &'a VectorTask, features: &'a [Matrix], names: Vec<String>) -> Self {
        debug_assert_eq!(features.len(), names.len());
        debug_assert!(features.iter().all(|z| z.rows == inner.n_examples()));
        ExplicitVectorTask {
            inner,
            features,
            names,
            first: inner.explicit_groups().len(),
        }
    }

    /// Index of the first feature group among the explicit groups.
    pub fn first_feature_group(&self) -> usize {
        self.first
    }
}

impl OnlineTask for ExplicitVectorTask<'_> {
    fn n_examples(&self) -> usize {
        self.inner.n_examples()
    }
    fn n_points(&self) -> usize {
        self.inner.n_points()
    }
    fn n_labels(&self) -> usize {
        self.inner.n_labels()
    }
    fn points(&self, i: usize) -> Range<usize> {
        self.inner.points(i)
    }
    fn explicit_groups(&self) -> Vec<ExplicitGroup> {
        let l = self.inner.n_labels();
        let mut groups = self.inner.explicit_groups();
        groups.extend(
            self.features
                .iter()
                .zip(&self.names)
                .map(|(z, name)| ExplicitGroup {
                    name: name.clone(),
                    len: z.cols * l,
                    role: GroupRole::Regularized,
                }),
        );
        groups
    }
    fn loss_grad(
        &self,
        i: usize,
        scores: &[f64],
        explicit: &[ScaledVec],
        grad: &mut Gradient,
    ) -> f64 {
        let l = self.inner.n_labels();
        let mut s = scores.to_vec();
        for (g, z) in self.features.iter().enumerate() {
            let block = &explicit[self.first + g];
            let (scale, coef) = (block.scale(), block.coef());
            for (d, &zd) in z.row(i).iter().enumerate() {
                if zd != 0.0 {
                    let w = &coef[d * l..(d + 1) * l];
                    for (o, &c) in s.iter_mut().zip(w) {
                        *o += scale * zd * c;
                    }
                }
            }
        }
        let loss = self.inner.loss_grad(i, &s, &explicit[..self.first], grad);
        let gs = &grad.scores;
        if gs.iter().any(|&g| g != 0.0) {
            for (g, z) in self.features.iter().enumerate() {
                for (d, &zd) in z.row(i).iter().enumerate() {
                    if zd != 0.0 {
                        for (y, &gy) in gs.iter().enumerate() {
                            if gy != 0.0 {
                                grad.explicit.push((self.first + g, d * l + y, zd * gy));
                            }
                        }
                    }
                }
            }
        }
        loss
    }
    fn loss_at_zero(&self) -> f64 {
        self.inner.loss_at_zero()
    }
}
