//! Any [`StructuredTask`] as an [`OnlineTask`]: the seam the online learner (Alg. 1 / SPOM of
//! martins2011) consumes, so SPOM trains a structured task without knowing its parts.
//!
//! Per example the adapter
//! 1. scores every part: the kernel parts are the learner's kernel scores of the example's
//!    points and label slots (the same layout, copied), a parameter part is its explicit
//!    parameter, an explicit part takes `<theta, phi_r>` over the explicit groups;
//! 2. takes the loss and its gradient in part space ([`try_loss_grad`]);
//! 3. maps the gradient back by the chain rule: `dL/ds_r` of a kernel part is the gradient of
//!    its point and label's score, of a parameter part the gradient of its parameter; an
//!    explicit part adds `dL/ds_r * phi_r` to the explicit groups (entries in part order, then
//!    feature order).

use super::loss::{try_loss_grad, StructLoss};
use super::{check_parts, explicit_layout, Conjoined, StructuredTask};
use crate::error::{Error, Result};
use crate::features::{GroupLayout, SparseRows};
use crate::params::ScaledVec;
use crate::task::online::{ExplicitGroup, Gradient, OnlineTask};
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};

/// A structured task with a loss, seen by the online learner. An example whose loss cannot
/// be computed (`try_loss_grad` says `None`: no CRF marginals) counts as loss 0 with a zero
/// gradient, and is counted ([`Self::skipped`]), never a NaN in the learner's sums.
#[derive(Debug)]
pub(crate) struct StructuredOnline<'a, T: StructuredTask> {
    task: &'a T,
    loss: StructLoss,
    groups: Vec<ExplicitGroup>,
    layout: GroupLayout,
    loss_at_zero: f64,
    skipped: AtomicU64,
}

impl<T: StructuredTask> Clone for StructuredOnline<'_, T> {
    fn clone(&self) -> Self {
        StructuredOnline {
            task: self.task,
            loss: self.loss,
            groups: self.groups.clone(),
            layout: self.layout.clone(),
            loss_at_zero: self.loss_at_zero,
            skipped: AtomicU64::new(self.skipped()),
        }
    }
}

impl<'a, T: StructuredTask> StructuredOnline<'a, T> {
    /// Checks the task's part mapping ([`check_parts`]) and, for the CRF loss, that the task
    /// has marginals.
    pub(crate) fn new(task: &'a T, loss: StructLoss) -> Result<Self> {
        check_parts(task)?;
        let mut adapter = Self::new_unchecked(task, loss)?;
        adapter.loss_at_zero = task.loss_at_zero(loss);
        Ok(adapter)
    }

    /// [`Self::new`] without the parts' check and with `L(0)` left NaN.
    fn new_unchecked(task: &'a T, loss: StructLoss) -> Result<Self> {
        if loss == StructLoss::Crf
            && task.n_examples() > 0
            && task.marginals(0, &vec![0.0; task.n_parts(0)]).is_none()
        {
            return Err(Error::unsupported(
                "the CRF loss needs marginals, which this task does not compute",
            ));
        }
        let groups = task.explicit_groups();
        Ok(StructuredOnline {
            task,
            loss,
            layout: explicit_layout(task),
            groups,
            loss_at_zero: f64::NAN,
            skipped: AtomicU64::new(0),
        })
    }

    /// [`Self::new`] with `L(0)` given (`loss_at_zero`: of all the data, when `task` is a part
    /// of it; it sets the projection's radius, martins2010 App. E) rather than computed.
    pub(crate) fn with_loss_at_zero(
        task: &'a T,
        loss: StructLoss,
        loss_at_zero: f64,
    ) -> Result<Self> {
        check_parts(task)?;
        let mut adapter = Self::new_unchecked(task, loss)?;
        adapter.loss_at_zero = loss_at_zero;
        Ok(adapter)
    }

    /// How many times the loss of an example could not be computed so far (each counted
    /// as loss 0 with no gradient).
    pub(crate) fn skipped(&self) -> u64 {
        self.skipped.load(Ordering::Relaxed)
    }

    /// Appends the effective values `theta_j`, `j` in `range` (global indices), to `out`:
    /// `scale * coef` of each group the range meets.
    fn parameter_scores(&self, range: Range<usize>, explicit: &[ScaledVec], out: &mut Vec<f64>) {
        let mut j = range.start;
        while j < range.end {
            let Some((g, k)) = self.layout.locate(j) else {
                return;
            };
            let b = &explicit[g];
            let len = (range.end - j).min(b.len() - k);
            let s = b.scale();
            out.extend(b.coef()[k..k + len].iter().map(|c| s * c));
            j += len;
        }
    }

    /// Appends `<theta, phi_r>` of every row to `out` (summed in the row's order).
    fn row_scores(&self, rows: &SparseRows, explicit: &[ScaledVec], out: &mut Vec<f64>) {
        out.extend((0..rows.n_rows()).map(|r| {
            let mut s = 0.0;
            for &(j, v) in rows.row(r) {
                if let Some((g, k)) = self.layout.locate(j) {
                    s += v * explicit[g].get(k);
                }
            }
            s
        }));
    }

    /// The `n_labels` effective parameters from global index `j` (one group holds them all
    /// when the task aligns its conjoined groups, as it must) into `buf`.
    fn label_block(&self, j: usize, n_labels: usize, explicit: &[ScaledVec], buf: &mut [f64]) {
        match self.layout.locate(j) {
            Some((g, k)) if k + n_labels <= explicit[g].len() => {
                let b = &explicit[g];
                let s = b.scale();
                for (o, c) in buf.iter_mut().zip(&b.coef()[k..k + n_labels]) {
                    *o = s * c;
                }
            }
            _ => {
                for (y, o) in buf.iter_mut().enumerate() {
                    *o = self
                        .layout
                        .locate(j + y)
                        .map_or(0.0, |(g, k)| explicit[g].get(k));
                }
            }
        }
    }

    /// Appends the scores of every conjoined part to `out` (row, then label).
    fn conjoined_scores(&self, c: &Conjoined<'_>, explicit: &[ScaledVec], out: &mut Vec<f64>) {
        let l = c.n_labels;
        let mut block = vec![0.0; l];
        for r in 0..c.rows.n_rows() {
            let start = out.len();
            out.resize(start + l, 0.0);
            for &(j, x) in c.rows.row(r) {
                self.label_block(c.offset + j * l, l, explicit, &mut block);
                for (o, w) in out[start..].iter_mut().zip(&block) {
                    *o += x * w;
                }
            }
        }
    }
}

impl<T: StructuredTask> OnlineTask for StructuredOnline<'_, T> {
    fn n_examples(&self) -> usize {
        self.task.n_examples()
    }
    fn n_points(&self) -> usize {
        self.task.n_points()
    }
    fn n_labels(&self) -> usize {
        self.task.n_labels()
    }
    fn points(&self, i: usize) -> Range<usize> {
        self.task.part_map(i).points
    }
    fn explicit_groups(&self) -> Vec<ExplicitGroup> {
        self.groups.clone()
    }
    fn loss_grad(
        &self,
        i: usize,
        scores: &[f64],
        explicit: &[ScaledVec],
        grad: &mut Gradient,
    ) -> f64 {
        let map = self.task.part_map(i);
        let k = map.n_kernel_parts();
        let p = map.parameters.len();
        let mut part_scores = Vec::with_capacity(map.n_parts());
        part_scores.extend_from_slice(&scores[..k]);
        self.parameter_scores(map.parameters.clone(), explicit, &mut part_scores);
        if let Some(rows) = map.explicit {
            self.row_scores(rows, explicit, &mut part_scores);
        }
        if let Some(c) = &map.conjoined {
            self.conjoined_scores(c, explicit, &mut part_scores);
        }
        let mut part_grad = vec![0.0; part_scores.len()];
        let Some(loss) = try_loss_grad(self.task, self.loss, i, &part_scores, &mut part_grad)
        else {
            self.skipped.fetch_add(1, Ordering::Relaxed);
            return 0.0;
        };
        grad.scores[..k].copy_from_slice(&part_grad[..k]);
        for (j, &g) in map.parameters.clone().zip(&part_grad[k..k + p]) {
            if g != 0.0 {
                if let Some((group, idx)) = self.layout.locate(j) {
                    grad.explicit.push((group, idx, g));
                }
            }
        }
        let e = map.n_explicit_parts();
        if let Some(c) = &map.conjoined {
            let l = c.n_labels;
            for (r, gs) in part_grad[k + p + e..].chunks(l).enumerate() {
                if gs.iter().all(|&g| g == 0.0) {
                    continue;
                }
                for &(j, x) in c.rows.row(r) {
                    for (y, &g) in gs.iter().enumerate() {
                        if g != 0.0 {
                            if let Some((group, idx)) = self.layout.locate(c.offset + j * l + y) {
                                grad.explicit.push((group, idx, g * x));
                            }
                        }
                    }
                }
            }
        }
        if let Some(rows) = map.explicit {
            for (r, &g) in part_grad[k + p..k + p + e].iter().enumerate() {
                if g == 0.0 {
                    continue;
                }
                for &(j, v) in rows.row(r) {
                    if let Some((group, idx)) = self.layout.locate(j) {
                        grad.explicit.push((group, idx, g * v));
                    }
                }
            }
        }
        loss
    }
    fn loss_at_zero(&self) -> f64 {
        self.loss_at_zero
    }
}
