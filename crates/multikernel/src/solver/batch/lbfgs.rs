//! L-BFGS (Nocedal 1980; Liu & Nocedal 1989) on the batch objective of [`mod@super::objective`]:
//! the l2-regularized CRF of martins2011 eq. 2-3 trained in batch, the optimum SPOM's CRF loss
//! aims at and the trainer CRFsuite users know (`-a lbfgs`, `c2 = 1 / (2 C)`).
//!
//! The iterations are [`super::quasi_newton::minimize`] (the two-loop recursion with a
//! backtracking line search, in place on the parameter vector); this module supplies the
//! objective and its gradient, evaluated together once per point.

#[cfg(test)]
use super::objective::objective_grad;
use super::quasi_newton::{minimize, AfterIteration, LbfgsParams, Objective, Stop};
#[cfg(test)]
use crate::error::Error;
use crate::error::Result;
use crate::run::RunStatus;
#[cfg(test)]
use crate::task::structured::{explicit_layout, StructLoss, StructuredTask};
use std::time::Instant;

/// The minimizer found and how it was found.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct BatchFit {
    pub weights: Vec<f64>,
    /// `F(w)` at `weights`.
    pub objective: f64,
    /// l2 norm of the gradient at `weights`.
    pub grad_norm: f64,
    pub iterations: u64,
    /// Objective (and gradient) evaluations, line search included.
    pub evaluations: u64,
    /// Why the iterations stopped.
    pub stop: String,
    /// The same as a run's status: converged (the gradient, the objective's change, or no
    /// decrease left for the line search), the iteration limit, or cancelled.
    pub status: RunStatus,
    pub seconds: f64,
}

/// Minimizes `lambda/2 ||w||^2 + (1/N) sum_i L(w; x_i, y_i)` by L-BFGS from `w = 0`. The
/// loss must be smooth for L-BFGS to make sense: [`StructLoss::Crf`] (the hinge is refused).
/// (The tagger's learner runs [`minimize_from_zero`] on the same objective.)
#[cfg(test)]
pub(crate) fn fit_lbfgs<T: StructuredTask + ?Sized>(
    task: &T,
    loss: StructLoss,
    params: &LbfgsParams,
) -> Result<BatchFit> {
    params.validate()?;
    if loss != StructLoss::Crf {
        return Err(Error::unsupported(
            "L-BFGS needs a smooth loss: the CRF loss (the structured hinge trains by the \
             cutting plane or SPOM)",
        ));
    }
    let dim = explicit_layout(task).total();
    let mut eval = |w: &[f64], g: &mut [f64]| -> Result<f64> {
        objective_grad(task, loss, params.lambda, w, Some(g))
    };
    minimize_from_zero(dim, &mut eval, params, &mut |_, _| false)
}

/// L-BFGS from `w = 0` over `dim` weights on any evaluation of the batch objective and its
/// gradient (`eval`: one process's [`objective_grad`], or the sums of parts of the
/// examples computed elsewhere), timed and described.
pub(crate) fn minimize_from_zero(
    dim: usize,
    eval: &mut Objective<'_>,
    params: &LbfgsParams,
    after: &mut AfterIteration<'_>,
) -> Result<BatchFit> {
    params.validate()?;
    let start = Instant::now();
    let mut weights = vec![0.0; dim];
    let mut evaluations = 0u64;
    let mut counted = |w: &[f64], g: &mut [f64]| -> Result<f64> {
        evaluations += 1;
        eval(w, g)
    };
    let run = minimize(&mut weights, &mut counted, params, after)?;
    let (stop, status) = match run.stop {
        Stop::Gradient => ("converged (gradient norm)", RunStatus::Converged),
        Stop::Cost => ("converged (objective change)", RunStatus::Converged),
        Stop::Iterations => ("iteration limit", RunStatus::IterationLimit),
        Stop::LineSearch => ("line search found no decrease", RunStatus::Converged),
        Stop::Cancelled => ("cancelled", RunStatus::Cancelled),
    };
    Ok(BatchFit {
        weights,
        objective: run.value,
        grad_norm: run.grad_norm,
        iterations: run.iterations,
        evaluations,
        stop: stop.to_string(),
        status,
        seconds: start.elapsed().as_secs_f64(),
    })
}
