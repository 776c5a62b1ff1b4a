//! Wrapper MKL: kernel weights `d` on the simplex around an inner SVM solver
//! (docs/formulas.md, "Wrapper MKL"; the baselines of martins2011 Sec. 4.1, Figure 2).
//!
//! Both methods minimize
//!
//! ```text
//! J(d) = min_w 1/2 sum_m ||w_m||^2 / d_m + C sum_i loss_i      over d >= 0, sum_m d_m = 1,
//! ```
//!
//! the squared l1 block-norm problem (SPOM's squared l2,1 regularizer) written over `d`. An
//! [`InnerSolver`] returns `J(d)` and its gradient `dJ/dd_m = -||w_m||^2 / (2 d_m^2)` from
//! an SVM solved at `d`, warm-started from an earlier solution; the outer loops are
//!
//! - [`simplemkl()`]: the reduced gradient of Rakotomamonjy et al. (2008, Alg. 1) with moves to
//!   the largest feasible step while they descend and a golden-section line search;
//! - [`gauss_seidel()`]: alternation between the SVM and the closed form
//!   `d_m = ||w_m|| / sum_k ||w_k||` (the p = 1 case of Kloft et al. 2011).
//!
//! Both stop when the relative MKL duality gap
//! `(max_m S_m - sum_m d_m S_m) / (2 J)`, `S_m = -2 dJ/dd_m` falls below `tol`, or at the
//! outer-iteration cap (a status, not an error). The inner solvers are [`svm_inner`] (exact
//! SMO on vector tasks) and, for sequences, structured PEGASOS
//! ([`crate::pipeline::sequence::wrapper`]). On tables, [`grams`] runs
//! one fit on training Gram matrices for the model on rows ([`WrapperModel`]) and the model
//! on the caller's kernel matrices ([`PrecomputedWrapperModel`]).

pub(crate) mod gauss_seidel;
pub(crate) mod grams;
pub(crate) mod model;
pub(crate) mod precomputed;
pub(crate) mod simplemkl;
pub(crate) mod svm_inner;
#[cfg(test)]
mod tests;

pub(crate) use gauss_seidel::gauss_seidel;
pub(crate) use model::{WrapperModel, WrapperModelParams};
pub(crate) use precomputed::PrecomputedWrapperModel;
pub(crate) use simplemkl::simplemkl;

use crate::error::{Error, Result};
use crate::run::{Control, Observer, RunInfo, RunRecorder, RunStatus, StepUnit};
use crate::trained::summary::num;
use serde::{Deserialize, Serialize};

/// The two wrapper methods.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WrapperMethod {
    /// Reduced gradient with line search (Rakotomamonjy et al. 2008).
    SimpleMkl,
    /// Alternating SVM and closed-form weights (Kloft et al. 2011, p = 1).
    GaussSeidel,
}

impl WrapperMethod {
    /// `simplemkl` or `gauss-seidel`.
    pub fn name(self) -> &'static str {
        match self {
            WrapperMethod::SimpleMkl => "simplemkl",
            WrapperMethod::GaussSeidel => "gauss-seidel",
        }
    }
}

/// The wrappers' short name and description (for the models' summaries).
fn wrapper_names(method: WrapperMethod) -> (&'static str, &'static str) {
    match method {
        WrapperMethod::SimpleMkl => (
            "SimpleMKL",
            "SimpleMKL: reduced gradient over SVMs (Rakotomamonjy et al. 2008)",
        ),
        WrapperMethod::GaussSeidel => (
            "Gauss-Seidel MKL",
            "Gauss-Seidel MKL: alternating SVMs and closed-form weights (Kloft et al. 2011)",
        ),
    }
}

/// A wrapper's headline: C, kernels (with weight 0), the last `J(d)` and the iterations,
/// the relative MKL and SVM duality gaps, convergence.
fn wrapper_headline(
    name: &str,
    c: f64,
    weights: &[f64],
    objective: &[f64],
    (mkl_gap, svm_gap): (f64, f64),
    converged: bool,
) -> String {
    format!(
        "{name}: C {}, {} kernels ({} with weight 0), J {:.6} after {} iterations, relative \
         MKL gap {:.2e}, SVM duality gap {:.2e}{}",
        num(c),
        weights.len(),
        weights.iter().filter(|t| **t == 0.0).count(),
        objective.last().copied().unwrap_or(f64::NAN),
        objective.len().saturating_sub(1),
        mkl_gap,
        svm_gap,
        if converged { "" } else { " (not converged)" }
    )
}

/// One solve of the inner SVM at kernel weights `d`.
#[derive(Debug, Clone)]
pub struct InnerSolve<S> {
    /// The inner solver's state (its dual or primal variables), to warm-start the next solve.
    pub state: S,
    /// `J(d)`.
    pub objective: f64,
    /// `dJ/dd_m = -||w_m||^2 / (2 d_m^2)` (`-1/2 beta^T K_m beta` for a kernel machine with
    /// coefficients `beta`).
    pub gradient: Vec<f64>,
    /// The SVM's duality gap, where the inner solver has one (SMO).
    pub gap: Option<f64>,
    /// Passes over the training data this solve made (PEGASOS epochs; SMO counts none).
    pub passes: f64,
    /// How the inner run ended.
    pub status: RunStatus,
}

/// An SVM solver at given kernel weights: what the outer loops need.
pub(crate) trait InnerSolver {
    /// Warm-start state (dual variables, coefficients).
    type State: Clone;

    /// Number of kernels `M`.
    fn n_kernels(&self) -> usize;

    /// Solves the SVM with kernel `sum_m d[m] K_m`, from `start` (cold when `None`).
    fn solve(
        &mut self,
        d: &[f64],
        start: Option<&Self::State>,
        observer: &dyn Observer,
    ) -> Result<InnerSolve<Self::State>>;
}

/// Settings of the outer loops.
#[derive(Debug, Clone, PartialEq)]
pub struct WrapperParams {
    /// Stop when the relative MKL duality gap is at most this (SimpleMKL's default 0.01).
    pub tol: f64,
    /// Outer iterations at most (then status IterationLimit).
    pub max_iter: usize,
    /// Starting weights (the uniform `1/M` when `None`).
    pub start: Option<Vec<f64>>,
    /// Weights below this (relative to the largest) are set to zero after each step.
    pub zero_below: f64,
    /// Stop when no weight moves by more than this in an outer iteration (a stalled
    /// descent: the inner solutions are not accurate enough to go further).
    pub weight_tol: f64,
    /// Golden-section steps of SimpleMKL's line search.
    pub line_search_steps: usize,
}

impl Default for WrapperParams {
    fn default() -> Self {
        WrapperParams {
            tol: 0.01,
            max_iter: 100,
            start: None,
            zero_below: 1e-8,
            weight_tol: 1e-6,
            line_search_steps: 4,
        }
    }
}

impl WrapperParams {
    /// Checks the settings and returns the starting weights for `m` kernels.
    pub(crate) fn start_weights(&self, m: usize) -> Result<Vec<f64>> {
        if m == 0 {
            return Err(Error::param("kernels", "none", "at least one kernel"));
        }
        if !(self.tol.is_finite() && self.tol > 0.0) {
            return Err(Error::param("tol", self.tol, "a positive number"));
        }
        if !(self.weight_tol.is_finite() && self.weight_tol >= 0.0) {
            return Err(Error::param("weight_tol", self.weight_tol, "a number >= 0"));
        }
        if self.max_iter == 0 {
            return Err(Error::param("max_iter", 0, "at least 1"));
        }
        if !(self.zero_below.is_finite() && (0.0..1.0).contains(&self.zero_below)) {
            return Err(Error::param(
                "zero_below",
                self.zero_below,
                "a number in [0, 1)",
            ));
        }
        match &self.start {
            None => Ok(vec![1.0 / m as f64; m]),
            Some(d) => {
                if d.len() != m {
                    return Err(Error::shape("starting kernel weights", m, d.len()));
                }
                let sum: f64 = d.iter().sum();
                if d.iter().any(|v| !(v.is_finite() && *v >= 0.0)) || sum <= 0.0 {
                    return Err(Error::data(
                        "the starting kernel weights must be finite, >= 0 and not all zero",
                    ));
                }
                Ok(d.iter().map(|v| v / sum).collect())
            }
        }
    }
}

/// One outer iteration of a wrapper.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WrapperStep {
    pub iteration: usize,
    /// `J(d)` at the iteration's weights.
    pub objective: f64,
    /// The relative MKL duality gap there.
    pub gap: f64,
    pub weights: Vec<f64>,
    /// Inner solves so far (line-search trials included).
    pub solves: usize,
    /// Passes over the data so far (every inner solve's).
    pub passes: f64,
    pub seconds: f64,
}

/// What an outer loop returns.
#[derive(Debug, Clone)]
pub struct WrapperResult<S> {
    pub weights: Vec<f64>,
    /// The inner solve at `weights`.
    pub solve: InnerSolve<S>,
    pub steps: Vec<WrapperStep>,
    /// Status (converged on the gap or a stalled descent, iteration limit, cancelled), outer
    /// iterations, seconds and the trace of `J`.
    pub run: RunInfo,
}

/// Sees each outer iteration's record and the inner solve at its weights; may stop the run.
pub(crate) type OnStep<'a, S> = dyn FnMut(&WrapperStep, &InnerSolve<S>) -> Control + 'a;

/// The relative MKL duality gap at a solve: `(max_m S_m - sum_m d_m S_m) / (2 |J|)` with
/// `S_m = -2 dJ/dd_m` (the SVM's objective minus the MKL dual bound, Rakotomamonjy et al.
/// 2008, Sec. 4.2), 0 when `J` is 0.
pub(crate) fn relative_gap(d: &[f64], gradient: &[f64], objective: f64) -> f64 {
    let s: Vec<f64> = gradient.iter().map(|g| -2.0 * g).collect();
    let max = s.iter().fold(f64::NEG_INFINITY, |a, &b| a.max(b));
    let mean: f64 = d.iter().zip(&s).map(|(d, s)| d * s).sum();
    let gap = 0.5 * (max - mean).max(0.0);
    if objective.abs() > 0.0 {
        gap / objective.abs()
    } else {
        0.0
    }
}

/// Sets weights below `zero_below * max` to zero and renormalizes to the simplex.
fn clean_weights(d: &mut [f64], zero_below: f64) {
    let max = d.iter().fold(0.0f64, |a, &b| a.max(b));
    for v in d.iter_mut() {
        if *v < zero_below * max || *v < 0.0 {
            *v = 0.0;
        }
    }
    let sum: f64 = d.iter().sum();
    if sum > 0.0 {
        d.iter_mut().for_each(|v| *v /= sum);
    }
}

/// Counts solves and passes and keeps the outer trace: shared by the two loops.
struct Tally {
    rec: RunRecorder,
    solves: usize,
    passes: f64,
    steps: Vec<WrapperStep>,
}

impl Tally {
    fn new(max_iter: usize) -> Tally {
        Tally {
            rec: RunRecorder::new(StepUnit::Iteration, Some(max_iter as u64)),
            solves: 0,
            passes: 0.0,
            steps: Vec::new(),
        }
    }

    fn count<S>(&mut self, s: &InnerSolve<S>) {
        self.solves += 1;
        self.passes += s.passes;
    }

    /// Records the iteration at `d` with its solve; tells `on_step` and the observer; the
    /// status that ends the run here, if any (the observer, the gap, the iteration cap, an
    /// inner run cancelled).
    fn record<S>(
        &mut self,
        d: &[f64],
        solve: &InnerSolve<S>,
        params: &WrapperParams,
        on_step: &mut OnStep<'_, S>,
        observer: &dyn Observer,
    ) -> Option<RunStatus> {
        let gap = relative_gap(d, &solve.gradient, solve.objective);
        self.steps.push(WrapperStep {
            iteration: self.steps.len(),
            objective: solve.objective,
            gap,
            weights: d.to_vec(),
            solves: self.solves,
            passes: self.passes,
            seconds: self.rec.seconds(),
        });
        let hook = on_step(self.steps.last().expect("just pushed"), solve);
        let outer = self.rec.step(Some(solve.objective), observer);
        if hook == Control::Stop
            || outer == Control::Stop
            || solve.status == RunStatus::Cancelled
            || observer.should_stop()
        {
            Some(RunStatus::Cancelled)
        } else if gap <= params.tol {
            Some(RunStatus::Converged)
        } else if self.steps.len() > params.max_iter {
            Some(RunStatus::IterationLimit)
        } else {
            None
        }
    }

    fn finish<S>(
        self,
        weights: Vec<f64>,
        solve: InnerSolve<S>,
        status: RunStatus,
    ) -> WrapperResult<S> {
        WrapperResult {
            weights,
            solve,
            steps: self.steps,
            run: self.rec.finish(status),
        }
    }
}
