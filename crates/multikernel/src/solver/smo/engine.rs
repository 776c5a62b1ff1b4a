//! The SMO iteration on libsvm's general dual (module docs of [`super`]).

use crate::error::{Error, Result};
use crate::run::{Observer, RunStatus};

use super::problem::SmoProblem;
use super::state::State;

/// Settings of `smo`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SmoParams {
    /// Stop when the maximal violation `m(a) - M(a)` is at most this (libsvm's `-e`).
    pub tol: f64,
    /// Iterations at most (`None`: `max(10^7, 100 n)`, libsvm's cap).
    pub max_iter: Option<u64>,
    /// Shrink the active set (libsvm's `-h 1`; module docs of `solver::smo`): the same
    /// solution up to `tol`, reached faster when many variables sit at a bound.
    pub shrinking: bool,
}

impl Default for SmoParams {
    fn default() -> Self {
        SmoParams {
            tol: 1e-3,
            max_iter: None,
            shrinking: true,
        }
    }
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

/// Solves the dual by SMO with second-order working-set selection (Fan, Chen & Lin 2005)
/// and, when `params.shrinking`, libsvm's shrinking. The observer is polled every 1,000
/// iterations; a stop returns the current point with status Cancelled.
pub(crate) fn smo(
    problem: &SmoProblem<'_>,
    params: &SmoParams,
    observer: &dyn Observer,
) -> Result<SmoSolution> {
    problem.check()?;
    let tol = params.tol;
    if !(tol.is_finite() && tol > 0.0) {
        return Err(Error::param("tol", tol, "a positive number"));
    }
    let m = problem.index.len();
    let mut st = State::new(problem);
    let max_iter = params.max_iter.unwrap_or((100 * m as u64).max(10_000_000));
    let mut iterations = 0u64;
    // Iterations since the observer was last polled (first poll before the first one).
    let mut since_poll = 999u32;
    // Iterations to the next shrinking (libsvm's counter).
    let mut to_shrink = m.min(1000) + 1;
    let mut unshrunk = false;
    let (status, violation) = loop {
        if params.shrinking {
            to_shrink -= 1;
            if to_shrink == 0 {
                to_shrink = m.min(1000);
                st.shrink(tol, &mut unshrunk);
            }
        }
        let mut pick = st.select();
        if pick.pair.is_none() || pick.violation < tol {
            // Converged on the active set: check on the whole set.
            if st.active < m {
                st.reconstruct();
                pick = st.select();
            }
            if pick.pair.is_none() || pick.violation < tol {
                break (RunStatus::Converged, pick.violation);
            }
            to_shrink = 1;
        }
        if iterations >= max_iter {
            break (RunStatus::IterationLimit, pick.violation);
        }
        since_poll += 1;
        if since_poll == 1000 {
            since_poll = 0;
            if observer.should_stop() {
                break (RunStatus::Cancelled, pick.violation);
            }
        }
        iterations += 1;
        let (i, j) = pick.pair.expect("a pair when not converged");
        st.step(i, j);
    };
    // The violation over the whole set, the objective and the offset need the whole
    // gradient.
    let violation = if st.active < m {
        st.reconstruct();
        st.select().violation
    } else {
        violation
    };
    Ok(SmoSolution {
        rho: st.rho(),
        objective: st.objective(),
        alpha: st.alpha(),
        violation,
        iterations,
        status,
    })
}
