//! L-BFGS (Nocedal 1980; Liu & Nocedal 1989) on the batch objective of [`mod@super::objective`]:
//! the l2-regularized CRF of martins2011 eq. 2-3 trained in batch, the optimum SPOM's CRF loss
//! aims at and the trainer CRFsuite users know (`-a lbfgs`, `c2 = 1 / (2 C)`).
//!
//! The iterations are argmin's L-BFGS with the More-Thuente line search; this module only
//! supplies the objective and its gradient, evaluated together once per point (the line search
//! asks for the value and the gradient at the same point separately).

use super::objective::objective_grad;
use crate::error::{Error, Result};
use crate::task::structured::{explicit_layout, StructLoss, StructuredTask};
use argmin::core::{CostFunction, Executor, Gradient, State, TerminationReason};
use argmin::solver::linesearch::MoreThuenteLineSearch;
use argmin::solver::quasinewton::LBFGS;
use std::sync::Mutex;
use std::time::Instant;

/// Settings of [`fit_lbfgs`].
#[derive(Debug, Clone, PartialEq)]
pub struct LbfgsParams {
    /// `lambda` of `lambda/2 ||w||^2 + (1/N) sum L` (`1 / (C N)`).
    pub lambda: f64,
    /// Iterations at most.
    pub max_iter: u64,
    /// Correction pairs kept (CRFsuite's `num_memories`, 6 there).
    pub memory: usize,
    /// Stop when the gradient's l2 norm is below this.
    pub tol_grad: f64,
    /// Stop when an iteration changes the objective by less than this (absolute).
    pub tol_cost: f64,
}

impl Default for LbfgsParams {
    fn default() -> Self {
        LbfgsParams {
            lambda: 1e-3,
            max_iter: 500,
            memory: 10,
            tol_grad: 1e-5,
            tol_cost: 1e-10,
        }
    }
}

impl LbfgsParams {
    /// Checks the values before any work starts.
    pub fn validate(&self) -> Result<()> {
        if !(self.lambda.is_finite() && self.lambda > 0.0) {
            return Err(Error::param(
                "lambda",
                self.lambda,
                "a positive number (C = 1/(lambda N) > 0)",
            ));
        }
        if self.max_iter == 0 {
            return Err(Error::param("max_iter", 0, "at least 1"));
        }
        if self.memory == 0 {
            return Err(Error::param("memory", 0, "at least 1 correction pair"));
        }
        for (name, v) in [("tol_grad", self.tol_grad), ("tol_cost", self.tol_cost)] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(Error::param(name, v, "a finite number >= 0"));
            }
        }
        Ok(())
    }
}

/// The minimizer found and how it was found.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchFit {
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
    pub seconds: f64,
}

/// A point with its objective value and gradient.
type Evaluated = (Vec<f64>, f64, Vec<f64>);

/// The objective as argmin sees it, with the last point's value and gradient cached.
struct Problem<'a, T: StructuredTask + ?Sized> {
    task: &'a T,
    loss: StructLoss,
    lambda: f64,
    last: Mutex<Option<Evaluated>>,
    evaluations: Mutex<u64>,
}

impl<T: StructuredTask + ?Sized> Problem<'_, T> {
    fn eval(&self, w: &[f64]) -> std::result::Result<(f64, Vec<f64>), argmin::core::Error> {
        let mut last = self.last.lock().expect("objective cache");
        if let Some((p, f, g)) = last.as_ref() {
            if p.as_slice() == w {
                return Ok((*f, g.clone()));
            }
        }
        let mut g = vec![0.0; w.len()];
        let f = objective_grad(self.task, self.loss, self.lambda, w, Some(&mut g))
            .map_err(|e| argmin::core::Error::msg(e.to_string()))?;
        *self.evaluations.lock().expect("evaluation count") += 1;
        *last = Some((w.to_vec(), f, g.clone()));
        Ok((f, g))
    }
}

impl<T: StructuredTask + ?Sized> CostFunction for Problem<'_, T> {
    type Param = Vec<f64>;
    type Output = f64;
    fn cost(&self, w: &Vec<f64>) -> std::result::Result<f64, argmin::core::Error> {
        Ok(self.eval(w)?.0)
    }
}

impl<T: StructuredTask + ?Sized> Gradient for Problem<'_, T> {
    type Param = Vec<f64>;
    type Gradient = Vec<f64>;
    fn gradient(&self, w: &Vec<f64>) -> std::result::Result<Vec<f64>, argmin::core::Error> {
        Ok(self.eval(w)?.1)
    }
}

/// Minimizes `lambda/2 ||w||^2 + (1/N) sum_i L(w; x_i, y_i)` by L-BFGS from `w = 0`. The
/// loss must be smooth for L-BFGS to make sense: [`StructLoss::Crf`] (the hinge is refused).
pub fn fit_lbfgs<T: StructuredTask + ?Sized>(
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
    let start = Instant::now();
    let dim = explicit_layout(task).total();
    let problem = Problem {
        task,
        loss,
        lambda: params.lambda,
        last: Mutex::new(None),
        evaluations: Mutex::new(0),
    };
    // Evaluate at 0 first so an error of the task (no marginals, bad parts) is ours, not
    // argmin's.
    problem
        .eval(&vec![0.0; dim])
        .map_err(|e| Error::Numerical(e.to_string()))?;
    let numerical = |e: argmin::core::Error| Error::Numerical(format!("L-BFGS: {e}"));
    let solver = LBFGS::new(MoreThuenteLineSearch::new(), params.memory)
        .with_tolerance_grad(params.tol_grad)
        .map_err(numerical)?
        .with_tolerance_cost(params.tol_cost)
        .map_err(numerical)?;
    let res = Executor::new(problem, solver)
        .configure(|s| s.param(vec![0.0; dim]).max_iters(params.max_iter))
        .run()
        .map_err(numerical)?;
    let state = res.state();
    let iterations = state.get_iter();
    let stop = match state.get_termination_reason() {
        Some(TerminationReason::SolverConverged) => "converged".to_string(),
        Some(TerminationReason::MaxItersReached) => "iteration limit".to_string(),
        Some(r) => r.text().to_string(),
        None => "running".to_string(),
    };
    let weights = state
        .get_best_param()
        .cloned()
        .ok_or_else(|| Error::Numerical("L-BFGS returned no parameters".into()))?;
    let problem = res
        .problem
        .problem
        .ok_or_else(|| Error::Numerical("L-BFGS kept no problem".into()))?;
    let evaluations = *problem.evaluations.lock().expect("evaluation count");
    let (objective, grad) = problem
        .eval(&weights)
        .map_err(|e| Error::Numerical(e.to_string()))?;
    let grad_norm = grad.iter().map(|g| g * g).sum::<f64>().sqrt();
    Ok(BatchFit {
        weights,
        objective,
        grad_norm,
        iterations,
        evaluations,
        stop,
        seconds: start.elapsed().as_secs_f64(),
    })
}
