//! The SMO iteration on libsvm's general dual (module docs of [`super`]).

use crate::data::MatrixRef;
use crate::error::{Error, Result};
use crate::run::{Observer, RunStatus};

/// `a_ij` below this is replaced by it (a non-positive-definite pair; libsvm's TAU).
const TAU: f64 = 1e-12;

/// Settings of [`smo`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SmoParams {
    /// Stop when the maximal violation `m(a) - M(a)` is at most this (libsvm's `-e`).
    pub tol: f64,
    /// Iterations at most (`None`: `max(10^7, 100 n)`, libsvm's cap).
    pub max_iter: Option<u64>,
}

impl Default for SmoParams {
    fn default() -> Self {
        SmoParams {
            tol: 1e-3,
            max_iter: None,
        }
    }
}

/// The dual problem: variable `t` uses row `index[t]` of the kernel matrix, with sign
/// `y[t]`, linear term `p[t]` and upper bound `c[t]`.
#[derive(Debug, Clone)]
pub struct SmoProblem<'a> {
    /// The training kernel matrix (`n x n`, symmetric).
    pub kernel: MatrixRef<'a>,
    pub index: Vec<usize>,
    pub y: Vec<f64>,
    pub p: Vec<f64>,
    pub c: Vec<f64>,
    /// Starting point (feasible: inside the box and `y^T a = 0`), e.g. the solution at
    /// neighbouring kernel weights (the wrappers' warm start); zeros when `None`.
    pub start: Option<Vec<f64>>,
}

/// The result of [`smo`].
#[derive(Debug, Clone, PartialEq)]
pub struct SmoSolution {
    pub alpha: Vec<f64>,
    /// The offset: decision values are `sum_t y_t a_t K(x, index[t]) - rho`.
    pub rho: f64,
    /// The dual objective `1/2 a^T Q a + p^T a` (minimized).
    pub objective: f64,
    /// The maximal violation `m(a) - M(a)` at the returned point.
    pub violation: f64,
    pub iterations: u64,
    /// Converged, or IterationLimit, or Cancelled by the observer.
    pub status: RunStatus,
}

impl SmoProblem<'_> {
    fn q(&self, t: usize, s: usize) -> f64 {
        self.y[t] * self.y[s] * self.kernel.row(self.index[t])[self.index[s]]
    }

    fn check(&self) -> Result<()> {
        let m = self.index.len();
        let n = self.kernel.rows();
        if self.kernel.cols() != n {
            return Err(Error::shape(
                "columns of the kernel matrix",
                n,
                self.kernel.cols(),
            ));
        }
        for (what, len) in [
            ("signs", self.y.len()),
            ("linear terms", self.p.len()),
            ("bounds", self.c.len()),
        ] {
            if len != m {
                return Err(Error::shape(
                    format!("{what} of the dual (one per variable)"),
                    m,
                    len,
                ));
            }
        }
        if let Some(&i) = self.index.iter().find(|&&i| i >= n) {
            return Err(Error::shape("kernel rows (an index of the dual)", n, i + 1));
        }
        if let Some(&c) = self.c.iter().find(|c| !(c.is_finite() && **c > 0.0)) {
            return Err(Error::param("C", c, "a positive number"));
        }
        if self.y.iter().any(|&y| y != 1.0 && y != -1.0) {
            return Err(Error::data("the signs of the dual must be +1 or -1"));
        }
        if self.kernel.data().iter().any(|v| !v.is_finite()) {
            return Err(Error::data("the kernel matrix has a non-finite value"));
        }
        if let Some(a) = &self.start {
            if a.len() != m {
                return Err(Error::shape("starting point of the dual", m, a.len()));
            }
            let sum: f64 = a.iter().zip(&self.y).map(|(a, y)| a * y).sum();
            let scale: f64 = self.c.iter().fold(0.0, |s, c| s + c);
            if a.iter().zip(&self.c).any(|(a, c)| !(*a >= 0.0 && a <= c))
                || sum.abs() > 1e-9 * scale
            {
                return Err(Error::data(
                    "the starting point of the dual is not feasible (0 <= a <= C, y^T a = 0)",
                ));
            }
        }
        Ok(())
    }
}

/// Solves the dual by SMO with second-order working-set selection (Fan, Chen & Lin 2005).
/// The observer is polled every 1,000 iterations; a stop returns the current point with
/// status Cancelled.
pub fn smo(
    problem: &SmoProblem<'_>,
    params: &SmoParams,
    observer: &(impl Observer + ?Sized),
) -> Result<SmoSolution> {
    problem.check()?;
    if !(params.tol.is_finite() && params.tol > 0.0) {
        return Err(Error::param("tol", params.tol, "a positive number"));
    }
    let m = problem.index.len();
    let (y, c) = (&problem.y, &problem.c);
    let qd: Vec<f64> = (0..m).map(|t| problem.q(t, t)).collect();
    let mut a = problem.start.clone().unwrap_or_else(|| vec![0.0; m]);
    // Gradient G = Q a + p.
    let mut g = problem.p.clone();
    for (s, &a_s) in a.iter().enumerate() {
        if a_s != 0.0 {
            for (t, gt) in g.iter_mut().enumerate() {
                *gt += problem.q(t, s) * a_s;
            }
        }
    }
    let max_iter = params.max_iter.unwrap_or((100 * m as u64).max(10_000_000));
    let up = |t: usize, a: &[f64]| if y[t] > 0.0 { a[t] < c[t] } else { a[t] > 0.0 };
    let low = |t: usize, a: &[f64]| if y[t] > 0.0 { a[t] > 0.0 } else { a[t] < c[t] };
    let mut iterations = 0u64;
    // Iterations since the observer was last polled (first poll before the first one).
    let mut since_poll = 999u32;
    let mut qi = vec![0.0; m];
    let mut qj = vec![0.0; m];
    let (status, violation) = loop {
        // i: the most violating variable of I_up (largest -y_t G_t).
        let mut gmax = f64::NEG_INFINITY;
        let mut i = usize::MAX;
        for t in 0..m {
            if up(t, &a) && -y[t] * g[t] >= gmax {
                gmax = -y[t] * g[t];
                i = t;
            }
        }
        // j: among I_low, the largest decrease of the objective (second order); gmin the
        // smallest -y_t G_t of I_low.
        let mut gmin = f64::INFINITY;
        let mut j = usize::MAX;
        let mut best = f64::INFINITY;
        if i != usize::MAX {
            for (t, q) in qi.iter_mut().enumerate() {
                *q = problem.q(i, t);
            }
        }
        for t in 0..m {
            if !low(t, &a) {
                continue;
            }
            let v = -y[t] * g[t];
            gmin = gmin.min(v);
            if i == usize::MAX {
                continue;
            }
            let b = gmax - v;
            if b > 0.0 {
                let quad = qd[i] + qd[t] - 2.0 * y[i] * y[t] * qi[t];
                let obj = -(b * b) / if quad > 0.0 { quad } else { TAU };
                if obj <= best {
                    best = obj;
                    j = t;
                }
            }
        }
        let violation = (gmax - gmin).max(0.0);
        if i == usize::MAX || j == usize::MAX || gmax - gmin < params.tol {
            break (RunStatus::Converged, violation);
        }
        if iterations >= max_iter {
            break (RunStatus::IterationLimit, violation);
        }
        since_poll += 1;
        if since_poll == 1000 {
            since_poll = 0;
            if observer.should_stop() {
                break (RunStatus::Cancelled, violation);
            }
        }
        iterations += 1;
        for (t, q) in qj.iter_mut().enumerate() {
            *q = problem.q(j, t);
        }
        let (old_i, old_j) = (a[i], a[j]);
        let (ci, cj) = (c[i], c[j]);
        if y[i] != y[j] {
            let quad = (qd[i] + qd[j] + 2.0 * qi[j]).max(TAU);
            let delta = (-g[i] - g[j]) / quad;
            let diff = a[i] - a[j];
            a[i] += delta;
            a[j] += delta;
            if diff > 0.0 {
                if a[j] < 0.0 {
                    a[j] = 0.0;
                    a[i] = diff;
                }
            } else if a[i] < 0.0 {
                a[i] = 0.0;
                a[j] = -diff;
            }
            if diff > ci - cj {
                if a[i] > ci {
                    a[i] = ci;
                    a[j] = ci - diff;
                }
            } else if a[j] > cj {
                a[j] = cj;
                a[i] = cj + diff;
            }
        } else {
            let quad = (qd[i] + qd[j] - 2.0 * qi[j]).max(TAU);
            let delta = (g[i] - g[j]) / quad;
            let sum = a[i] + a[j];
            a[i] -= delta;
            a[j] += delta;
            if sum > ci {
                if a[i] > ci {
                    a[i] = ci;
                    a[j] = sum - ci;
                }
            } else if a[j] < 0.0 {
                a[j] = 0.0;
                a[i] = sum;
            }
            if sum > cj {
                if a[j] > cj {
                    a[j] = cj;
                    a[i] = sum - cj;
                }
            } else if a[i] < 0.0 {
                a[i] = 0.0;
                a[j] = sum;
            }
        }
        let (di, dj) = (a[i] - old_i, a[j] - old_j);
        for t in 0..m {
            g[t] += qi[t] * di + qj[t] * dj;
        }
    };
    let objective = 0.5
        * a.iter()
            .zip(&g)
            .zip(&problem.p)
            .map(|((a, g), p)| a * (g + p))
            .sum::<f64>();
    Ok(SmoSolution {
        rho: rho(&a, &g, y, c),
        alpha: a,
        objective,
        violation,
        iterations,
        status,
    })
}

/// The offset: the mean of `y_t G_t` over free variables, else the middle of the bounds
/// the variables at their bounds give (libsvm's rule).
fn rho(a: &[f64], g: &[f64], y: &[f64], c: &[f64]) -> f64 {
    let (mut ub, mut lb) = (f64::INFINITY, f64::NEG_INFINITY);
    let (mut free, mut sum) = (0usize, 0.0);
    for t in 0..a.len() {
        let yg = y[t] * g[t];
        if a[t] >= c[t] {
            if y[t] < 0.0 {
                ub = ub.min(yg);
            } else {
                lb = lb.max(yg);
            }
        } else if a[t] <= 0.0 {
            if y[t] > 0.0 {
                ub = ub.min(yg);
            } else {
                lb = lb.max(yg);
            }
        } else {
            free += 1;
            sum += yg;
        }
    }
    if free > 0 {
        sum / free as f64
    } else {
        (ub + lb) / 2.0
    }
}
