//! The batch objective `F(w) = lambda/2 ||w||^2 + (1/N) sum_i L(w; x_i, y_i)` (martins2011
//! eq. 2 with `Omega = 1/2 ||w||^2`; eq. 3 for the CRF loss, eq. 4 for the structured hinge)
//! of a structured task whose parts are all scored by explicit parameters (a template
//! tagger), and its (sub)gradient `lambda w + (1/N) sum_i dL_i/dw`.
//!
//! The per-example part-space gradient of [`loss_grad`] is mapped back to the parameters by
//! the chain rule through the part map ([`PartScorer`]). Examples are summed in a fixed
//! number of contiguous chunks (in parallel), each in order, and the chunks in order, so the
//! value does not depend on the number of threads.

use crate::error::{Error, Result};
use crate::task::structured::{
    explicit_layout, explicit_scores, loss_grad, PartScorer, StructLoss, StructuredTask,
};
use rayon::prelude::*;

/// Chunks the examples are cut into (each with its own dense gradient buffer).
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
pub fn objective_grad<T: StructuredTask + ?Sized>(
    task: &T,
    loss: StructLoss,
    lambda: f64,
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
    let parts: Vec<(f64, Vec<f64>)> = (0..n.div_ceil(chunk))
        .into_par_iter()
        .map(|c| -> Result<(f64, Vec<f64>)> {
            let mut g = if want_grad {
                vec![0.0; dim]
            } else {
                Vec::new()
            };
            let (mut scores, mut pg) = (Vec::new(), Vec::new());
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
                    add_part_gradient(task, i, &pg, &mut g);
                }
            }
            Ok((sum, g))
        })
        .collect::<Result<_>>()?;
    let inv_n = 1.0 / n as f64;
    let mut total = 0.0;
    for (s, _) in &parts {
        total += s;
    }
    let sq: f64 = w.iter().map(|v| v * v).sum();
    let value = 0.5 * lambda * sq + inv_n * total;
    if let Some(out) = grad {
        for (o, wj) in out.iter_mut().zip(w) {
            *o = lambda * wj;
        }
        for (_, g) in &parts {
            for (o, gj) in out.iter_mut().zip(g) {
                *o += inv_n * gj;
            }
        }
    }
    Ok(value)
}

/// `g += sum_r part_grad[r] d s_r / dw` for example `i` (dense `g`, global indices).
fn add_part_gradient<T: StructuredTask + ?Sized>(
    task: &T,
    i: usize,
    part_grad: &[f64],
    g: &mut [f64],
) {
    let map = task.part_map(i);
    for (r, &d) in part_grad.iter().enumerate() {
        if d == 0.0 {
            continue;
        }
        match map.scorer(r) {
            PartScorer::Kernel { .. } => {} // rejected by explicit_scores
            PartScorer::Parameter(j) => g[j] += d,
            PartScorer::Explicit(f) => f.iter().for_each(|&(j, v)| g[j] += d * v),
            PartScorer::Conjoined {
                row,
                label,
                n_labels,
                offset,
            } => row
                .iter()
                .for_each(|&(j, x)| g[offset + j * n_labels + label] += d * x),
        }
    }
}
