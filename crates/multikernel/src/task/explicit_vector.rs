//! A vector task whose kernels are partly explicit feature groups: a kernel with a feature map
//! `z_g` (a linear kernel, or an approximated one: [`crate::kernel::feature_map`]) is one
//! regularized explicit group `W_g` (`D_g x outputs`, feature major) instead of a kernel group
//! over an `n x n` Gram matrix; its scores are `z_g(x_i)^T W_g`. martins2011 Sec. 2.3: kernel
//! and explicit groups are both blocks of `theta`, and Alg. 1's subgradient and proximal
//! steps treat them alike (the gradient of block `g` is `z_g(x_i) (dLoss/dscore)^T`).
//!
//! The mapped rows are stored when they fit ([`MappedRows::Stored`]) or recomputed from the
//! training rows at each use ([`MappedRows::OnTheFly`]: memory bounded by the rows and the
//! maps, at the cost of evaluating the map, e.g. `D` cosines, again in every round).
//!
//! With a linear kernel the two forms are the same model (`k(x, x') = z(x) . z(x')`): the
//! iterates agree up to rounding, which the tests of `pipeline::table::vector` check.

use crate::data::Matrix;
use crate::kernel::FeatureMap;
use crate::params::ScaledVec;
use crate::task::online::{ExplicitGroup, Gradient, GroupRole, OnlineTask};
use crate::task::VectorTask;
use std::ops::Range;

/// The mapped training rows `z_g(x_i)` of the feature groups.
pub(crate) enum MappedRows<'a> {
    /// Computed once: per group `n x D_g`.
    Stored(&'a [Matrix]),
    /// Computed from the training rows `x` at each use.
    OnTheFly {
        x: &'a Matrix,
        maps: &'a [FeatureMap],
    },
}

impl MappedRows<'_> {
    fn dims(&self) -> Vec<usize> {
        match self {
            MappedRows::Stored(z) => z.iter().map(|z| z.cols).collect(),
            MappedRows::OnTheFly { maps, .. } => maps.iter().map(FeatureMap::dim).collect(),
        }
    }

    /// Calls `f` with `z_g(x_i)` of every group.
    fn with_row<R>(&self, i: usize, f: impl FnOnce(&[&[f64]]) -> R) -> R {
        match self {
            MappedRows::Stored(z) => {
                let rows: Vec<&[f64]> = z.iter().map(|z| z.row(i)).collect();
                f(&rows)
            }
            MappedRows::OnTheFly { x, maps } => {
                let total = maps.iter().map(FeatureMap::dim).sum();
                let mut buf = vec![0.0; total];
                let mut rest = buf.as_mut_slice();
                for map in maps.iter() {
                    let (head, tail) = rest.split_at_mut(map.dim());
                    map.map_row(x.row(i), head);
                    rest = tail;
                }
                let mut rows: Vec<&[f64]> = Vec::with_capacity(maps.len());
                let mut rest = buf.as_slice();
                for map in maps.iter() {
                    let (head, tail) = rest.split_at(map.dim());
                    rows.push(head);
                    rest = tail;
                }
                f(&rows)
            }
        }
    }
}

/// `out[y] += scale * sum_d z[d] w[d * l + y]` for a feature-major block `w` (`l = out.len()`).
fn add_scores(z: &[f64], w: &[f64], scale: f64, out: &mut [f64]) {
    let l = out.len();
    if l == 1 {
        out[0] += scale * crate::linalg::dot(z, w);
        return;
    }
    for (d, &zd) in z.iter().enumerate() {
        if zd != 0.0 {
            for (o, &c) in out.iter_mut().zip(&w[d * l..(d + 1) * l]) {
                *o += scale * zd * c;
            }
        }
    }
}

/// [`VectorTask`] plus explicit feature groups (module docs). The inner task's explicit
/// groups (the bias) come first, then one group per feature map.
pub(crate) struct ExplicitVectorTask<'a> {
    inner: &'a VectorTask,
    rows: MappedRows<'a>,
    dims: Vec<usize>,
    names: Vec<String>,
    first: usize,
}

impl<'a> ExplicitVectorTask<'a> {
    /// `rows` gives `z_g` of every training row (as many rows as `inner` has examples),
    /// `names[g]` names group `g`.
    pub(crate) fn new(inner: &'a VectorTask, rows: MappedRows<'a>, names: Vec<String>) -> Self {
        let dims = rows.dims();
        debug_assert_eq!(dims.len(), names.len());
        ExplicitVectorTask {
            inner,
            rows,
            dims,
            names,
            first: inner.explicit_groups().len(),
        }
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
            self.dims
                .iter()
                .zip(&self.names)
                .map(|(&d, name)| ExplicitGroup {
                    name: name.clone(),
                    len: d * l,
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
        self.rows.with_row(i, |z| {
            let mut s = scores.to_vec();
            for (g, zg) in z.iter().enumerate() {
                let block = &explicit[self.first + g];
                add_scores(zg, block.coef(), block.scale(), &mut s);
            }
            let loss = self.inner.loss_grad(i, &s, &explicit[..self.first], grad);
            if grad.scores.iter().any(|&g| g != 0.0) {
                let gs = std::mem::take(&mut grad.scores);
                for (g, zg) in z.iter().enumerate() {
                    grad.push_outer(self.first + g, zg, &gs);
                }
                grad.scores = gs;
            }
            loss
        })
    }
    fn loss_at_zero(&self) -> f64 {
        self.inner.loss_at_zero()
    }
}
