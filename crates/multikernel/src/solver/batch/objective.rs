//! The batch objective `F(w) = lambda/2 ||w||^2 + (1/N) sum_i L(w; x_i, y_i)` (martins2011
//! eq. 2 with `Omega = 1/2 ||w||^2`; eq. 3 for the CRF loss, eq. 4 for the structured hinge)
//! of a structured task whose parts are all scored by explicit parameters (a template
//! tagger), and its (sub)gradient `lambda w + (1/N) sum_i dL_i/dw`.
//!
//! The per-example part-space gradient of `loss_grad` is mapped back to the parameters by
//! the chain rule through the part map (`PartScorer`). The losses and part gradients are
//! computed in a fixed number of contiguous chunks of examples (in parallel); the losses are
//! summed in each chunk in order and the chunks in order, and the part gradients mapped back
//! example by example in order, so neither depends on the number of threads. No dense
//! buffer is kept per chunk: the part gradients are `O(tokens x labels)`.

use crate::error::{Error, Result};
use crate::task::structured::{
    explicit_layout, explicit_scores, loss_grad, PartScorer, StructLoss, StructuredTask,
};
use rayon::prelude::*;

/// Chunks the examples are cut into (in parallel; each keeps its examples' part-space
/// gradients, mapped back to the parameters in example order afterwards).
const CHUNKS: usize = 8;

/// `F(w)` alone.
pub fn objective<T: StructuredTask + ?Sized>(
    task: &T,
    loss: StructLoss,
    lambda: f64,
    w: &[f64],
) -> Result<f64> {
    objective_grad(task, loss, lambda, w, None)
}

/// `F(w)`, and its (sub)gradient written into `grad` when given (same length as `w`). Fails
/// on a `w` of the wrong length, a task with kernel-scored parts, a CRF loss on a task
/// without marginals, or a non-finite value.
pub(crate) fn objective_grad<T: StructuredTask + ?Sized>(
    task: &T,
    loss: StructLoss,
    lambda: f64,
    w: &[f64],
    mut grad: Option<&mut [f64]>,
) -> Result<f64> {
    let total = loss_sums(task, loss, w, grad.as_deref_mut())?;
    Ok(scaled(lambda, task.n_examples(), w, total, grad))
}

/// The unscaled sums of [`objective_grad`]: `sum_i L(w; x_i, y_i)`, returned, and `sum_i
/// dL_i/dw` written into `grad` when given (overwritten). What a part of the examples
/// contributes; [`scaled`] makes the objective of the sums of all of them, and of one part
/// holding every example the very bits of [`objective_grad`].
pub(crate) fn loss_sums<T: StructuredTask + ?Sized>(
    task: &T,
    loss: StructLoss,
    w: &[f64],
    grad: Option<&mut [f64]>,
) -> Result<f64> {
    let dim = explicit_layout(task).total();
    if w.len() != dim {
        return Err(Error::shape(
            "parameters of the batch objective",
            dim,
            w.len(),
        ));
    }
    let n = task.n_examples();
    if n == 0 {
        return Err(Error::data("no training examples"));
    }
    let want_grad = grad.is_some();
    let chunk = n.div_ceil(CHUNKS);
    // Per chunk: the loss sum and the part-space gradients of its examples, concatenated.
    let parts: Vec<(f64, Vec<f64>)> = (0..n.div_ceil(chunk))
        .into_par_iter()
        .map(|c| -> Result<(f64, Vec<f64>)> {
            let (mut scores, mut pg) = (Vec::new(), Vec::new());
            let mut all = Vec::new();
            let mut sum = 0.0;
            for i in c * chunk..((c + 1) * chunk).min(n) {
                explicit_scores(task, i, w, &mut scores)?;
                pg.clear();
                pg.resize(scores.len(), 0.0);
                let l = loss_grad(task, loss, i, &scores, &mut pg);
                if !l.is_finite() {
                    return Err(Error::Numerical(format!(
                        "the {loss} loss of example {i} is not finite"
                    )));
                }
                sum += l;
                if want_grad {
                    all.extend_from_slice(&pg);
                }
            }
            Ok((sum, all))
        })
        .collect::<Result<_>>()?;
    let mut total = 0.0;
    for (s, _) in &parts {
        total += s;
    }
    if let Some(out) = grad {
        out.iter_mut().for_each(|o| *o = 0.0);
        // Mapped back to the parameters example by example, in order (deterministic).
        for (c, (_, pg)) in parts.iter().enumerate() {
            let mut at = 0;
            for i in c * chunk..((c + 1) * chunk).min(n) {
                let np = task.n_parts(i);
                add_part_gradient(task, i, &pg[at..at + np], out);
                at += np;
            }
        }
    }
    Ok(total)
}

/// The objective `lambda/2 ||w||^2 + (1/n) total` of `n` examples whose losses sum to
/// `total`, and the gradient `lambda w + (1/n) grad` in place of the gradient sum `grad`.
pub(crate) fn scaled(
    lambda: f64,
    n: usize,
    w: &[f64],
    total: f64,
    grad: Option<&mut [f64]>,
) -> f64 {
    let inv_n = 1.0 / n as f64;
    let sq: f64 = w.iter().map(|v| v * v).sum();
    let value = 0.5 * lambda * sq + inv_n * total;
    if let Some(out) = grad {
        for (o, wj) in out.iter_mut().zip(w) {
            *o = lambda * wj + inv_n * *o;
        }
    }
    value
}

/// `g += sum_r part_grad[r] d s_r / dw` for example `i` (dense `g`, global indices). The
/// label-conjoined parts are walked row by row: each observation feature adds one
/// contiguous run of `n_labels` entries.
pub(crate) fn add_part_gradient<T: StructuredTask + ?Sized>(
    task: &T,
    i: usize,
    part_grad: &[f64],
    g: &mut [f64],
) {
    let map = task.part_map(i);
    let head = map.n_kernel_parts() + map.parameters.len() + map.n_explicit_parts();
    for (r, &d) in part_grad[..head].iter().enumerate() {
        if d == 0.0 {
            continue;
        }
        match map.scorer(r) {
            PartScorer::Kernel { .. } => {} // rejected by explicit_scores
            PartScorer::Parameter(j) => g[j] += d,
            PartScorer::Explicit(f) => f.iter().for_each(|&(j, v)| g[j] += d * v),
            PartScorer::Conjoined { .. } => unreachable!("conjoined parts come last"),
        }
    }
    if let Some(c) = map.conjoined {
        let l = c.n_labels;
        for (r, d) in part_grad[head..].chunks_exact(l).enumerate() {
            for &(j, x) in c.rows.row(r) {
                let at = c.offset + j * l;
                for (o, dy) in g[at..at + l].iter_mut().zip(d) {
                    *o += x * dy;
                }
            }
        }
    }
}
