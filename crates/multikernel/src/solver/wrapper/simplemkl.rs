//! SimpleMKL: reduced gradient descent on the simplex (Rakotomamonjy et al. 2008, Alg. 1;
//! docs/formulas.md "Wrapper MKL").
//!
//! Each outer iteration, with `mu` the largest weight and `G = dJ/dd` from the last solve:
//! 1. the reduced gradient's descent direction `D` (`D_m = 0` where `d_m = 0` and the reduced
//!    gradient is positive, `D_m = -(G_m - G_mu)` for the others, `D_mu = -sum D_m`);
//! 2. while `J` at the largest feasible step `gamma_max = min_{D_m < 0} -d_m / D_m` is below
//!    the current `J`, move there (one weight reaches zero and leaves the direction);
//! 3. a golden-section line search on `[0, gamma_max]` (each trial an inner solve,
//!    warm-started from the current point), keeping the best point evaluated.

use super::{clean_weights, InnerSolve, InnerSolver, OnStep, Tally, WrapperParams, WrapperResult};
use crate::error::Result;
use crate::run::{Observer, RunStatus, StopOnly};

/// Line-search trials at most per outer iteration.
const MAX_TRIALS: usize = 40;

/// `(sqrt(5) - 1) / 2`.
const GOLDEN: f64 = 0.618_033_988_749_894_9;

/// The reduced-gradient descent direction at `d` (step 1 of the module docs) with `mu`, the
/// index of the largest weight; `None` when the direction is zero (a stationary point).
pub(crate) fn descent_direction(d: &[f64], gradient: &[f64]) -> Option<(Vec<f64>, usize)> {
    let m = d.len();
    let mu = (0..m)
        .max_by(|&a, &b| d[a].total_cmp(&d[b]).then(b.cmp(&a)))
        .expect("at least one kernel");
    let mut dir = vec![0.0; m];
    let mut sum = 0.0;
    for k in 0..m {
        if k == mu {
            continue;
        }
        let reduced = gradient[k] - gradient[mu];
        if d[k] > 0.0 || reduced < 0.0 {
            dir[k] = -reduced;
            sum += dir[k];
        }
    }
    dir[mu] = -sum;
    let scale = dir.iter().fold(0.0f64, |a, v| a.max(v.abs()));
    (scale > 0.0).then_some((dir, mu))
}

/// The largest step along `dir` that keeps `d` non-negative, and the weight that reaches
/// zero there.
fn max_step(d: &[f64], dir: &[f64]) -> Option<(f64, usize)> {
    d.iter()
        .zip(dir)
        .enumerate()
        .filter(|&(_, (_, &v))| v < 0.0)
        .map(|(k, (&w, &v))| (-w / v, k))
        .min_by(|a, b| a.0.total_cmp(&b.0))
}

fn step_to(d: &[f64], dir: &[f64], gamma: f64, zero_below: f64) -> Vec<f64> {
    let mut out: Vec<f64> = d
        .iter()
        .zip(dir)
        .map(|(w, v)| (w + gamma * v).max(0.0))
        .collect();
    clean_weights(&mut out, zero_below);
    out
}

/// SimpleMKL (module docs) from `params.start` (uniform by default). `on_step` sees every
/// outer iteration (the first at the starting weights); the observer sees the progress
/// (one step per outer iteration) and may stop the run, which also ends the inner solve
/// under way.
pub(crate) fn simplemkl<I: InnerSolver>(
    inner: &mut I,
    params: &WrapperParams,
    observer: &dyn Observer,
    on_step: &mut OnStep<'_, I::State>,
) -> Result<WrapperResult<I::State>> {
    let mut d = params.start_weights(inner.n_kernels())?;
    let stop = StopOnly(observer);
    let mut tally = Tally::new(params.max_iter);
    let mut cur = inner.solve(&d, None, &stop)?;
    tally.count(&cur);
    loop {
        if let Some(status) = tally.record(&d, &cur, params, on_step, observer) {
            return Ok(tally.finish(d, cur, status));
        }
        let Some((mut dir, mu)) = descent_direction(&d, &cur.gradient) else {
            return Ok(tally.finish(d, cur, RunStatus::Converged));
        };
        let before = d.clone();
        // 2. Moves to the boundary while they descend.
        let mut last: Option<(f64, InnerSolve<I::State>)> = None;
        while let Some((gamma, hit)) = max_step(&d, &dir) {
            let d_max = step_to(&d, &dir, gamma, params.zero_below);
            let trial = inner.solve(&d_max, Some(&cur.state), &stop)?;
            tally.count(&trial);
            if trial.status == RunStatus::Cancelled {
                return Ok(tally.finish(d, cur, RunStatus::Cancelled));
            }
            if trial.objective >= cur.objective {
                last = Some((gamma, trial));
                break;
            }
            d = d_max;
            cur = trial;
            dir[mu] += dir[hit];
            dir[hit] = 0.0;
        }
        // 3. Golden-section search on [0, gamma_max] from the current point; every trial
        // warm-starts from it; the best point evaluated is kept.
        if let Some((gamma_max, at_max)) = last {
            let mut best: Option<(f64, InnerSolve<I::State>)> = None;
            let mut best_obj = cur.objective;
            if at_max.objective < best_obj {
                best_obj = at_max.objective;
                best = Some((gamma_max, at_max));
            }
            let mut eval = |gamma: f64, tally: &mut Tally| -> Result<InnerSolve<I::State>> {
                let s = inner.solve(
                    &step_to(&d, &dir, gamma, params.zero_below),
                    Some(&cur.state),
                    &stop,
                )?;
                tally.count(&s);
                Ok(s)
            };
            let (mut a, mut b) = (0.0, gamma_max);
            let mut x1 = b - GOLDEN * (b - a);
            let mut x2 = a + GOLDEN * (b - a);
            let mut f1 = f64::NAN;
            let mut f2 = f64::NAN;
            let mut cancelled = false;
            // At least `line_search_steps` trials; more, shrinking toward 0, until one
            // descends (a good step can be far below gamma_max), at most MAX_TRIALS.
            let mut k = 0;
            while k < MAX_TRIALS
                && (k < params.line_search_steps || best.is_none())
                && b - a > 1e-12 * gamma_max
            {
                // The first two steps evaluate both interior points, each later one the
                // new point of the shrunk interval.
                let (x, first) = if k == 0 {
                    (x1, true)
                } else if k == 1 {
                    (x2, false)
                } else if f1 <= f2 {
                    b = x2;
                    x2 = x1;
                    f2 = f1;
                    x1 = b - GOLDEN * (b - a);
                    (x1, true)
                } else {
                    a = x1;
                    x1 = x2;
                    f1 = f2;
                    x2 = a + GOLDEN * (b - a);
                    (x2, false)
                };
                let s = eval(x, &mut tally)?;
                if s.status == RunStatus::Cancelled {
                    cancelled = true;
                    break;
                }
                if first {
                    f1 = s.objective;
                } else {
                    f2 = s.objective;
                }
                if s.objective < best_obj {
                    best_obj = s.objective;
                    best = Some((x, s));
                }
                k += 1;
            }
            if cancelled {
                return Ok(tally.finish(d, cur, RunStatus::Cancelled));
            }
            if let Some((gamma, solve)) = best {
                d = step_to(&d, &dir, gamma, params.zero_below);
                cur = solve;
            }
        }
        let moved = d
            .iter()
            .zip(&before)
            .fold(0.0f64, |a, (x, y)| a.max((x - y).abs()));
        if moved <= params.weight_tol {
            // No descent found: refresh the solve at d (more inner work for an inexact
            // solver), and stop if that leaves the direction where it was.
            let again = inner.solve(&d, Some(&cur.state), &stop)?;
            tally.count(&again);
            let same = again.objective >= cur.objective;
            cur = again;
            if same {
                tally.record(&d, &cur, params, on_step, observer);
                return Ok(tally.finish(d, cur, RunStatus::Converged));
            }
        }
    }
}
