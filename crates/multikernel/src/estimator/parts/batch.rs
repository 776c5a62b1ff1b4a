//! The batch CRF (the `lbfgs` learner: the l2 CRF of martins2011 eq. 2-3 minimized by
//! L-BFGS) over parts of the sentences held apart (the Python package's
//! `multikernel.dask.fit_dask`): at every point L-BFGS evaluates, each part returns the CRF
//! losses of its sentences summed and the sum of their gradients ([`PartGradient`],
//! [`CompiledPart::crf_gradient`]); the loop adds the parts' sums in the parts' order and
//! scales them once (`add_parts`: `lambda/2 ||w||^2 + (1/n) sum L` and `lambda w + (1/n)
//! sum dL/dw`, as one process's `solver::batch::objective` does).
//!
//! One part holding every sentence gives the one-process fit bit for bit. The losses and
//! the marginals are real numbers, so several parts add them in another grouping: the
//! objective agrees with one process's to its last bits at the same point (tested within
//! 1e-12 relative), and the iterates, which depend on every bit, to L-BFGS's tolerances.

use super::CompiledPart;
use crate::error::{Error, Result};
use crate::solver::batch::objective::{loss_sums, scaled};
use crate::task::structured::StructLoss;

/// A part's share of the batch CRF's objective at a point: `loss`, the sum of its
/// sentences' CRF losses; the sum of their gradients, its non-zero entries (`indices`
/// strictly increasing, with their `values`); `examples`, how many sentences.
#[derive(Debug, Clone, PartialEq)]
pub struct PartGradient {
    pub loss: f64,
    pub indices: Vec<u64>,
    pub values: Vec<f64>,
    pub examples: usize,
}

impl CompiledPart {
    /// The part's CRF losses summed and the sum of their gradients at the weights `w`
    /// (every weight of the model; computed in parallel, in a fixed grouping).
    pub fn crf_gradient(&self, w: &[f64]) -> Result<PartGradient> {
        if w.len() != self.dim {
            return Err(Error::shape("weights", self.dim, w.len()));
        }
        // The separations' dense accumulator, all zeros again when this returns.
        let mut dense = self.scratch.lock().unwrap_or_else(|e| e.into_inner());
        dense.resize(self.dim, 0.0);
        let sums = self.task.crf_sums(w, &mut dense[..]);
        let mut indices = Vec::new();
        let mut values = Vec::new();
        for (j, v) in dense.iter_mut().enumerate() {
            if *v != 0.0 {
                indices.push(j as u64);
                values.push(*v);
                *v = 0.0;
            }
        }
        let (examples, loss) = sums?;
        Ok(PartGradient {
            loss,
            indices,
            values,
            examples,
        })
    }
}

impl super::PartTask {
    /// The number of sentences, and the CRF losses' sum at `w` with their gradients' sum
    /// written into `grad`.
    fn crf_sums(&self, w: &[f64], grad: &mut [f64]) -> Result<(usize, f64)> {
        use super::PartTask::*;
        use crate::task::structured::StructuredTask;
        fn of<T: StructuredTask>(t: &T, w: &[f64], grad: &mut [f64]) -> Result<(usize, f64)> {
            Ok((
                t.n_examples(),
                loss_sums(t, StructLoss::Crf, w, Some(grad))?,
            ))
        }
        match self {
            Tagging(t) => of(t, w, grad),
            Trees(t) => of(t, w, grad),
            Projective(t) => of(t, w, grad),
        }
    }
}

/// Every part's [`PartGradient`] at the weights given (`None`: stop).
pub type EvaluateParts<'f> = dyn FnMut(&[f64]) -> Result<Option<Vec<PartGradient>>> + 'f;

/// The batch objective `lambda/2 ||w||^2 + (1/n) sum_i L_i` at `w` of the `n` sentences the
/// `parts` hold, added in the parts' order, and its gradient written into `grad`; an error
/// for parts that do not hold `n` sentences in all, or whose sums are malformed (indices
/// that do not increase or leave the `grad.len()` weights, values that are not finite).
pub(crate) fn add_parts(
    parts: &[PartGradient],
    n: usize,
    lambda: f64,
    w: &[f64],
    grad: &mut [f64],
) -> Result<f64> {
    let dim = grad.len();
    let held: usize = parts.iter().map(|p| p.examples).sum();
    if held != n {
        return Err(Error::data(format!(
            "the parts' gradients sum over {held} sentences; the fit has {n}"
        )));
    }
    grad.iter_mut().for_each(|g| *g = 0.0);
    let mut total = 0.0;
    for (k, p) in parts.iter().enumerate() {
        if p.indices.len() != p.values.len() {
            return Err(Error::data(format!(
                "part {k}'s gradient: {} indices and {} values",
                p.indices.len(),
                p.values.len()
            )));
        }
        if !p.loss.is_finite() || p.values.iter().any(|v| !v.is_finite()) {
            return Err(Error::data(format!(
                "part {k}'s gradient: a value is not finite"
            )));
        }
        if p.indices.windows(2).any(|q| q[0] >= q[1])
            || p.indices.last().is_some_and(|&j| j >= dim as u64)
        {
            return Err(Error::data(format!(
                "part {k}'s gradient: indices must increase and stay below {dim}"
            )));
        }
        total += p.loss;
        for (&j, v) in p.indices.iter().zip(&p.values) {
            grad[j as usize] += v;
        }
    }
    Ok(scaled(lambda, n, w, total, Some(grad)))
}
