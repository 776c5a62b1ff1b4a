//! The exact inner solver of the wrappers on vector tasks: SMO ([`crate::solver::smo`]) on
//! the combined kernel `K_d = sum_m d_m K_m`, for binary C-SVC, one-vs-rest multiclass
//! (one machine per class, `J` and its gradient summed over the machines, as SimpleMKL's
//! multiclass mode shares one `d`) and epsilon-SVR.
//!
//! At the SVM's optimum, `J(d)` is its dual objective `sum_i a_i - 1/2 beta^T K_d beta`
//! (SVR: `-eps sum |beta_i| + z^T beta - 1/2 beta^T K_d beta`) with `beta` the machine's
//! coefficients, and `dJ/dd_m = -1/2 beta^T K_m beta` (Danskin: the dual optimum does not
//! move to first order).

use super::{InnerSolve, InnerSolver};
use crate::data::Matrix;
use crate::error::{Error, Result};
use crate::linalg::dot;
use crate::run::{Observer, RunStatus};
use crate::solver::smo::svm::{svc_from, svr_from};
use crate::solver::smo::{SmoParams, SvmFit};
use rayon::prelude::*;

/// The labels of the task.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum SvmTask {
    /// `+1` / `-1` per row.
    Binary(Vec<f64>),
    /// A class index `< k` per row; one machine per class against the rest.
    OneVsRest { classes: Vec<usize>, k: usize },
    /// Real targets with the epsilon-insensitive loss.
    Regression { z: Vec<f64>, epsilon: f64 },
}

impl SvmTask {
    /// Rows.
    pub(crate) fn len(&self) -> usize {
        match self {
            SvmTask::Binary(y) => y.len(),
            SvmTask::OneVsRest { classes, .. } => classes.len(),
            SvmTask::Regression { z, .. } => z.len(),
        }
    }

    /// Machines (one per class for one-vs-rest, else one).
    pub(crate) fn machines(&self) -> usize {
        match self {
            SvmTask::OneVsRest { k, .. } => *k,
            _ => 1,
        }
    }
}

/// SMO on `sum_m d_m K_m` (module docs). State: one fit per machine.
pub(crate) struct SvmInner<'a> {
    kernels: &'a [Matrix],
    task: SvmTask,
    c: f64,
    params: SmoParams,
    combined: Matrix,
    /// Row weights (`None`: all 1): row `i`'s box is `C w_i`.
    row_weights: Option<Vec<f64>>,
}

impl<'a> SvmInner<'a> {
    /// Checks the kernels (`n x n` each, finite, symmetric), C and the labels.
    pub(crate) fn new(
        kernels: &'a [Matrix],
        task: SvmTask,
        c: f64,
        params: SmoParams,
    ) -> Result<Self> {
        if kernels.is_empty() {
            return Err(Error::param("kernels", "none", "at least one kernel"));
        }
        if !(c.is_finite() && c > 0.0) {
            return Err(Error::param("C", c, "a positive number"));
        }
        let n = task.len();
        if n == 0 {
            return Err(Error::data("the training set has no rows"));
        }
        for (m, k) in kernels.iter().enumerate() {
            if k.rows != n || k.cols != n {
                return Err(Error::data(format!(
                    "kernel matrix {m} must be n x n with n = {n} rows; found {} x {}",
                    k.rows, k.cols
                )));
            }
            if let Some(v) = k.data.iter().position(|v| !v.is_finite()) {
                return Err(Error::data(format!(
                    "kernel matrix {m} has a non-finite value at ({}, {})",
                    v / n,
                    v % n
                )));
            }
        }
        match &task {
            SvmTask::Binary(y) if y.iter().any(|&v| v != 1.0 && v != -1.0) => {
                return Err(Error::data("binary labels must be +1 or -1"));
            }
            SvmTask::OneVsRest { classes, k } => {
                if let Some(&bad) = classes.iter().find(|&&l| l >= *k) {
                    return Err(Error::data(format!("class {bad} of {k} classes")));
                }
            }
            SvmTask::Regression { z, epsilon } => {
                if z.iter().any(|v| !v.is_finite()) {
                    return Err(Error::data("the targets contain a non-finite value"));
                }
                if !(epsilon.is_finite() && *epsilon >= 0.0) {
                    return Err(Error::param("epsilon", epsilon, "a number >= 0"));
                }
            }
            _ => {}
        }
        Ok(SvmInner {
            kernels,
            task,
            c,
            params,
            combined: Matrix::zeros(n, n),
            row_weights: None,
        })
    }

    /// The same solver with row weights (`None`: unweighted): checked, one per row.
    pub(crate) fn with_row_weights(mut self, w: Option<Vec<f64>>) -> Result<Self> {
        if let Some(w) = &w {
            crate::data::weights::check_row_weights(w, self.task.len())?;
        }
        self.row_weights = w;
        Ok(self)
    }

    /// `sum_m d_m K_m` into the buffer.
    fn combine(&mut self, d: &[f64]) {
        let n = self.combined.cols.max(1);
        let kernels = self.kernels;
        self.combined
            .data
            .par_chunks_mut(n)
            .enumerate()
            .for_each(|(i, row)| {
                row.iter_mut().for_each(|v| *v = 0.0);
                for (k, &w) in kernels.iter().zip(d) {
                    if w != 0.0 {
                        for (o, v) in row.iter_mut().zip(k.row(i)) {
                            *o += w * v;
                        }
                    }
                }
            });
    }

    fn machine(
        &self,
        index: usize,
        start: Option<&SvmFit>,
        observer: &dyn Observer,
    ) -> Result<SvmFit> {
        let k = self.combined.view();
        let start = start.map(|f| f.solution.alpha.as_slice());
        let w = self.row_weights.as_deref();
        match &self.task {
            SvmTask::Binary(y) => svc_from(k, y, self.c, w, start, &self.params, observer),
            SvmTask::OneVsRest { classes, .. } => {
                let y: Vec<f64> = classes
                    .iter()
                    .map(|&l| if l == index { 1.0 } else { -1.0 })
                    .collect();
                svc_from(k, &y, self.c, w, start, &self.params, observer)
            }
            SvmTask::Regression { z, epsilon } => {
                svr_from(k, z, self.c, *epsilon, w, start, &self.params, observer)
            }
        }
    }
}

/// `beta^T K beta`: the rows in parallel, summed in row order (the same bits whatever the
/// threads, so the same seed gives the same model).
fn quad(k: &Matrix, beta: &[f64]) -> f64 {
    let rows: Vec<f64> = (0..k.rows)
        .into_par_iter()
        .map(|i| beta[i] * dot(k.row(i), beta))
        .collect();
    rows.iter().sum()
}

impl InnerSolver for SvmInner<'_> {
    type State = Vec<SvmFit>;

    fn n_kernels(&self) -> usize {
        self.kernels.len()
    }

    fn solve(
        &mut self,
        d: &[f64],
        start: Option<&Vec<SvmFit>>,
        observer: &dyn Observer,
    ) -> Result<InnerSolve<Vec<SvmFit>>> {
        if d.len() != self.kernels.len() {
            return Err(Error::shape("kernel weights", self.kernels.len(), d.len()));
        }
        self.combine(d);
        let mut fits = Vec::with_capacity(self.task.machines());
        for machine in 0..self.task.machines() {
            let from = start.and_then(|s| s.get(machine));
            fits.push(self.machine(machine, from, observer)?);
        }
        let objective: f64 = fits.iter().map(|f| -f.solution.objective).sum();
        let gradient: Vec<f64> = self
            .kernels
            .iter()
            .map(|k| fits.iter().map(|f| -0.5 * quad(k, &f.coef)).sum())
            .collect();
        let gap = fits.iter().map(|f| f.gap).sum();
        let status = fits
            .iter()
            .map(|f| f.solution.status)
            .find(|s| *s != RunStatus::Converged)
            .unwrap_or(RunStatus::Converged);
        Ok(InnerSolve {
            state: fits,
            objective,
            gradient,
            gap: Some(gap),
            passes: 0.0,
            status,
        })
    }
}
