//! Limited-memory BFGS (Nocedal 1980; Liu & Nocedal 1989) for a smooth function given with
//! its gradient: the direction by the two-loop recursion (Nocedal & Wright 2006, Alg. 7.4,
//! with the initial Hessian `gamma I`, `gamma = s'y / y'y` of the newest pair, eq. 7.20), the
//! step by backtracking from 1 until the Armijo condition holds (Alg. 3.1, the trial step from
//! the quadratic interpolation of Sec. 3.5, kept within [0.1, 0.5] of the last). The first
//! step is `1 / ||g||` long, as in liblbfgs. Everything works in place on `dim`-long buffers
//! (`2 m + 4` of them): no allocation per iteration.
//!
//! Stops on the gradient's norm, on the change of the objective in one iteration, on
//! CRFsuite's relative decrease over the last [`PAST`] iterations (`(f_{k - PAST} - f_k) /
//! |f_k| < delta`), on the iteration limit, or when the line search finds no decrease.

use super::vector::{axpy, axpy_dot, diff_dot, dot, fill, scale};
use crate::error::{Error, Result};

/// Iterations the relative-decrease test looks back (CRFsuite's `past`).
pub(crate) const PAST: usize = 10;

/// Armijo's sufficient-decrease constant.
const C1: f64 = 1e-4;

/// Trial steps of one line search at most.
const MAX_TRIALS: usize = 40;

/// Settings of the batch CRF's L-BFGS fit (`solver::batch::fit_lbfgs`).
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
    /// Stop when the objective decreased by less than this fraction of its value over the
    /// last `PAST` iterations (CRFsuite's `delta`, 1e-5 there; 0 turns the test off).
    pub delta: f64,
}

impl Default for LbfgsParams {
    fn default() -> Self {
        LbfgsParams {
            lambda: 1e-3,
            max_iter: 500,
            memory: 10,
            tol_grad: 1e-5,
            tol_cost: 1e-10,
            delta: 1e-7,
        }
    }
}

impl LbfgsParams {
    /// Checks the values before any work starts.
    pub(crate) fn validate(&self) -> Result<()> {
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
        for (name, v) in [
            ("tol_grad", self.tol_grad),
            ("tol_cost", self.tol_cost),
            ("delta", self.delta),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(Error::param(name, v, "a finite number >= 0"));
            }
        }
        Ok(())
    }
}

/// Why [`minimize`] stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stop {
    Gradient,
    Cost,
    Iterations,
    LineSearch,
    /// The caller's `after` asked to stop.
    Cancelled,
}

/// The result of [`minimize`] (the minimizer is left in its `x`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Minimized {
    pub value: f64,
    pub grad_norm: f64,
    pub iterations: u64,
    pub stop: Stop,
}

/// A function to minimize: the value at `x`, its gradient written into `g`.
pub(crate) type Objective<'a> = dyn FnMut(&[f64], &mut [f64]) -> Result<f64> + 'a;

/// Told after each iteration (iterations so far, the objective reached); `true` stops the
/// minimization there ([`Stop::Cancelled`]), the iterate kept.
pub(crate) type AfterIteration<'a> = dyn FnMut(u64, f64) -> bool + 'a;

/// Minimizes `f` from `x` (overwritten by the minimizer); `f(x, g)` returns the value and
/// writes the gradient into `g`; `after` is told each iteration and may stop the run.
/// Uses `params`' memory, iteration limit and tolerances (`lambda` is not read). Fails when
/// `f` fails or returns a non-finite value at the start.
pub(crate) fn minimize(
    x: &mut Vec<f64>,
    f: &mut Objective<'_>,
    params: &LbfgsParams,
    after: &mut AfterIteration<'_>,
) -> Result<Minimized> {
    let dim = x.len();
    let mut g = vec![0.0; dim];
    let mut fx = f(x, &mut g)?;
    if !fx.is_finite() || g.iter().any(|v| !v.is_finite()) {
        return Err(Error::Numerical(
            "L-BFGS: the objective or its gradient is not finite at the start".into(),
        ));
    }
    let m = params.memory;
    let mut s_mem: Vec<Vec<f64>> = Vec::new();
    let mut y_mem: Vec<Vec<f64>> = Vec::new();
    let mut rho: Vec<f64> = Vec::new();
    let mut newest = 0usize; // slot of the newest pair
    let mut alpha = vec![0.0; m];
    let (mut d, mut xt, mut gt) = (vec![0.0; dim], vec![0.0; dim], vec![0.0; dim]);
    let mut history = vec![fx];
    let mut iterations = 0u64;
    let stop = loop {
        let gnorm = dot(&g, &g).sqrt();
        if gnorm <= params.tol_grad {
            break Stop::Gradient;
        }
        if iterations >= params.max_iter {
            break Stop::Iterations;
        }
        // Direction: d = -H g by the two-loop recursion (pairs newest first, then oldest
        // first).
        d.copy_from_slice(&g);
        let k = s_mem.len();
        let order: Vec<usize> = (0..k).map(|j| (newest + k - j) % k).collect();
        // Each update of d fused with the next pair's dot product over it (one pass).
        if let Some(&first) = order.first() {
            let mut sd = dot(&s_mem[first], &d);
            for (j, &i) in order.iter().enumerate() {
                alpha[i] = rho[i] * sd;
                match order.get(j + 1) {
                    Some(&next) => sd = axpy_dot(&mut d, -alpha[i], &y_mem[i], &s_mem[next]),
                    None => axpy(&mut d, -alpha[i], &y_mem[i]),
                }
            }
            let yy = dot(&y_mem[newest], &y_mem[newest]);
            let gamma = 1.0 / (rho[newest] * yy);
            scale(&mut d, gamma);
            let mut yd = dot(&y_mem[order[k - 1]], &d);
            for j in (0..k).rev() {
                let i = order[j];
                let c = alpha[i] - rho[i] * yd;
                match j.checked_sub(1) {
                    Some(prev) => yd = axpy_dot(&mut d, c, &s_mem[i], &y_mem[order[prev]]),
                    None => axpy(&mut d, c, &s_mem[i]),
                }
            }
        }
        scale(&mut d, -1.0);
        let mut gd = dot(&g, &d);
        if gd >= 0.0 || gd.is_nan() {
            // Not a descent direction (rounding): forget the pairs, steepest descent.
            s_mem.clear();
            y_mem.clear();
            rho.clear();
            fill(&mut d, |j| -g[j]);
            gd = -gnorm * gnorm;
        }
        let mut step = if s_mem.is_empty() { 1.0 / gnorm } else { 1.0 };
        // Backtracking line search (Armijo).
        let mut accepted = None;
        for _ in 0..MAX_TRIALS {
            fill(&mut xt, |j| x[j] + step * d[j]);
            let ft = f(&xt, &mut gt)?;
            if ft.is_finite() && ft <= fx + C1 * step * gd {
                accepted = Some(ft);
                break;
            }
            let next = if ft.is_finite() {
                -gd * step * step / (2.0 * (ft - fx - gd * step))
            } else {
                0.1 * step
            };
            step = next.clamp(0.1 * step, 0.5 * step);
        }
        let Some(ft) = accepted else {
            break Stop::LineSearch;
        };
        iterations += 1;
        // The new pair s = x_t - x, y = g_t - g, kept when s'y > 0 (always for a strictly
        // convex f); the oldest pair makes room.
        let sy = diff_dot(&xt, x, &gt, &g);
        if sy > 0.0 {
            let slot = if s_mem.len() < m {
                s_mem.push(vec![0.0; dim]);
                y_mem.push(vec![0.0; dim]);
                rho.push(0.0);
                s_mem.len() - 1
            } else {
                (newest + 1) % m
            };
            fill(&mut s_mem[slot], |j| xt[j] - x[j]);
            fill(&mut y_mem[slot], |j| gt[j] - g[j]);
            rho[slot] = 1.0 / sy;
            newest = slot;
        }
        std::mem::swap(x, &mut xt);
        std::mem::swap(&mut g, &mut gt);
        let change = fx - ft;
        fx = ft;
        history.push(fx);
        if after(iterations, fx) {
            break Stop::Cancelled;
        }
        if change.abs() < params.tol_cost {
            break Stop::Cost;
        }
        if history.len() > PAST {
            let old = history[history.len() - 1 - PAST];
            if (old - fx) / fx.abs().max(f64::MIN_POSITIVE) < params.delta {
                break Stop::Cost;
            }
        }
    };
    Ok(Minimized {
        value: fx,
        grad_norm: dot(&g, &g).sqrt(),
        iterations,
        stop,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> LbfgsParams {
        LbfgsParams {
            tol_grad: 1e-10,
            tol_cost: 0.0,
            delta: 0.0,
            ..LbfgsParams::default()
        }
    }

    /// A strictly convex quadratic `1/2 x'Ax - b'x` (A diagonally dominant, ill-conditioned):
    /// the minimizer solves `Ax = b`, checked by the residual; a memory of one pair works too.
    #[test]
    fn quadratic_reaches_the_solution_of_the_linear_system() {
        let n = 30;
        let a: Vec<f64> = (0..n * n)
            .map(|k| {
                let (i, j) = (k / n, k % n);
                if i == j {
                    1.0 + 100.0 * (i as f64) / n as f64 + n as f64
                } else {
                    ((i * 7 + j * 3) % 5) as f64 * 0.2 * if (i + j) % 2 == 0 { 1.0 } else { -1.0 }
                }
            })
            .collect();
        // Symmetrize.
        let a: Vec<f64> = (0..n * n)
            .map(|k| 0.5 * (a[k] + a[(k % n) * n + k / n]))
            .collect();
        let b: Vec<f64> = (0..n).map(|i| (i as f64).sin()).collect();
        for memory in [1, 5, 10] {
            let mut f = |x: &[f64], g: &mut [f64]| -> Result<f64> {
                let mut v = 0.0;
                for i in 0..n {
                    let ax: f64 = (0..n).map(|j| a[i * n + j] * x[j]).sum();
                    g[i] = ax - b[i];
                    v += 0.5 * x[i] * ax - b[i] * x[i];
                }
                Ok(v)
            };
            let mut x = vec![0.0; n];
            let p = LbfgsParams {
                memory,
                tol_grad: 1e-8,
                ..params()
            };
            let r = minimize(&mut x, &mut f, &p, &mut |_, _| false).unwrap();
            assert_eq!(r.stop, Stop::Gradient, "{r:?}");
            for i in 0..n {
                let ax: f64 = (0..n).map(|j| a[i * n + j] * x[j]).sum();
                assert!((ax - b[i]).abs() < 1e-8, "memory {memory} row {i}");
            }
        }
    }

    /// Rosenbrock's function (not convex): the minimum at (1, 1) from (-1.2, 1).
    #[test]
    fn rosenbrock_reaches_its_minimum() {
        let mut f = |x: &[f64], g: &mut [f64]| -> Result<f64> {
            let (a, b) = (x[0], x[1]);
            g[0] = -2.0 * (1.0 - a) - 400.0 * a * (b - a * a);
            g[1] = 200.0 * (b - a * a);
            Ok((1.0 - a).powi(2) + 100.0 * (b - a * a).powi(2))
        };
        let mut x = vec![-1.2, 1.0];
        let r = minimize(&mut x, &mut f, &params(), &mut |_, _| false).unwrap();
        assert!(
            (x[0] - 1.0).abs() < 1e-6 && (x[1] - 1.0).abs() < 1e-6,
            "{x:?} {r:?}"
        );
        assert!(r.iterations < 200);
    }

    /// The relative-decrease test stops a slow descent early; the iteration limit holds; a
    /// non-finite start fails.
    #[test]
    fn stopping_rules() {
        let mut f = |x: &[f64], g: &mut [f64]| -> Result<f64> {
            g[0] = 4.0 * x[0].powi(3);
            Ok(1.0 + x[0].powi(4))
        };
        let mut x = vec![3.0];
        let loose = LbfgsParams {
            delta: 1e-3,
            ..params()
        };
        let r = minimize(&mut x, &mut f, &loose, &mut |_, _| false).unwrap();
        assert_eq!(r.stop, Stop::Cost);
        let mut y = vec![3.0];
        let one = LbfgsParams {
            max_iter: 1,
            ..params()
        };
        let r1 = minimize(&mut y, &mut f, &one, &mut |_, _| false).unwrap();
        assert_eq!((r1.stop, r1.iterations), (Stop::Iterations, 1));
        assert!(r1.value < 82.0);
        let mut bad = |_: &[f64], _: &mut [f64]| -> Result<f64> { Ok(f64::NAN) };
        assert!(minimize(&mut vec![0.0], &mut bad, &params(), &mut |_, _| false).is_err());
        // The callback sees each iteration's objective and stops the run where it asks.
        let mut seen = Vec::new();
        let mut z = vec![3.0];
        let r = minimize(&mut z, &mut f, &params(), &mut |k, v| {
            seen.push((k, v));
            k == 3
        })
        .unwrap();
        assert_eq!((r.stop, r.iterations), (Stop::Cancelled, 3));
        assert_eq!(seen.len(), 3);
        assert_eq!(seen[2], (3, r.value));
        assert!(seen.windows(2).all(|p| p[1].1 <= p[0].1));
    }
}
