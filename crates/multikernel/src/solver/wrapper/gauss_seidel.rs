//! Gauss-Seidel wrapper MKL: alternate the SVM at fixed weights and the closed-form weights
//! `d_m = ||w_m|| / sum_k ||w_k||` (docs/formulas.md "Wrapper MKL"; Kloft et al. 2011 with p = 1,
//! the alternation of martins2011's Figure 2), with `||w_m|| = d_m sqrt(-2 dJ/dd_m)`.

use super::{clean_weights, InnerSolver, OnStep, Tally, WrapperParams, WrapperResult};
use crate::error::Result;
use crate::run::{Observer, RunStatus, StopOnly};

/// The closed-form weights from a solve at `d` with gradient `gradient`; `None` when every
/// block norm is zero (the SVM's `w` is zero: nothing to weigh).
pub(crate) fn closed_form_weights(d: &[f64], gradient: &[f64]) -> Option<Vec<f64>> {
    let norms: Vec<f64> = d
        .iter()
        .zip(gradient)
        .map(|(w, g)| w * (-2.0 * g).max(0.0).sqrt())
        .collect();
    let sum: f64 = norms.iter().sum();
    (sum > 0.0 && sum.is_finite()).then(|| norms.iter().map(|v| v / sum).collect())
}

/// Gauss-Seidel (module docs) from `params.start` (uniform by default); `on_step` and the
/// observer as in [`super::simplemkl()`].
pub(crate) fn gauss_seidel<I: InnerSolver>(
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
        let Some(mut next) = closed_form_weights(&d, &cur.gradient) else {
            return Ok(tally.finish(d, cur, RunStatus::Converged));
        };
        clean_weights(&mut next, params.zero_below);
        let moved = next
            .iter()
            .zip(&d)
            .fold(0.0f64, |a, (x, y)| a.max((x - y).abs()));
        let solve = inner.solve(&next, Some(&cur.state), &stop)?;
        tally.count(&solve);
        d = next;
        cur = solve;
        if moved <= params.weight_tol {
            tally.record(&d, &cur, params, on_step, observer);
            return Ok(tally.finish(d, cur, RunStatus::Converged));
        }
    }
}
