//! The slow twin of the `q = 1` working-set solver ([`super::saddle`]): problem (6) as a
//! conic program solved from scratch by the interior-point solver clarabel. With `Q^j = L_j
//! L_j^T` (an eigen factor, eigenvalues below `drop` times the largest dropped), the
//! constraint `1/2 alpha^T Q^j alpha <= theta`, i.e. `||L_j^T alpha||^2 <= 2 theta * 1`, is a
//! rotated second-order cone, written as the standard cone
//!
//! ```text
//! ( (theta + 1)/sqrt2, (theta - 1)/sqrt2, L_j^T alpha )   in SOC(rank_j + 2).
//! ```
//!
//! Clarabel minimizes `theta - b^T alpha` subject to `s = h - G x in K` (`x = (alpha,
//! theta)`; `K`: the nonnegative orthant for `alpha >= 0` and the cap, then one cone per
//! template). Stationarity in `theta` reads `1 = sum_j (z_j0 + z_j1)/sqrt2` with `z_j` the
//! cone's dual: the template weights are `mu_j = (z_j0 + z_j1)/sqrt2`. The library solved
//! every working set this way before the warm-started solver; the tests compare the two.

use super::project_capped_simplex;
use crate::error::{Error, Result};
use rayon::prelude::*;

/// `q = 1`: the conic program of the module docs; returns alpha and mu.
pub(crate) fn solve_conic(
    grams: &[Vec<f64>],
    b: &[f64],
    c: f64,
    max_iter: usize,
) -> Result<(Vec<f64>, Vec<f64>)> {
    // Tight tolerances first; an interior point that stalls on a badly conditioned
    // working set gets clarabel's defaults, then a coarser eigen factor.
    let mut last = None;
    for (tight, drop) in [(true, 1e-9), (false, 1e-9), (false, 1e-6)] {
        match solve_conic_with(grams, b, c, tight, drop, max_iter) {
            Ok(v) => return Ok(v),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| Error::Numerical("the working-set QCQP failed".into())))
}

fn solve_conic_with(
    grams: &[Vec<f64>],
    b: &[f64],
    c: f64,
    tight: bool,
    drop: f64,
    max_iter: usize,
) -> Result<(Vec<f64>, Vec<f64>)> {
    use clarabel::algebra::CscMatrix;
    use clarabel::solver::{
        DefaultSettingsBuilder, DefaultSolver, IPSolver, SolverStatus, SupportedConeT,
    };
    let r = b.len();
    let n = r + 1; // beta = alpha / C, theta
    let s2 = std::f64::consts::FRAC_1_SQRT_2;
    // Scaled so that the cap is 1 and the largest Gram diagonal 1: with alpha = C beta and
    // Q^j = kappa Q'^j, the objective divided by C^2 kappa is (b / (C kappa))^T beta -
    // theta' under 1/2 beta^T Q'^j beta <= theta' (the same template weights).
    let kappa = grams
        .iter()
        .flat_map(|q| (0..r).map(move |i| q[i * r + i]))
        .fold(0.0, f64::max);
    if kappa <= 0.0 {
        return Ok((vec![0.0; r], vec![0.0; grams.len()]));
    }
    // Factors L_j^T (rank_j x r) of the active templates.
    let factors: Vec<Option<Vec<Vec<f64>>>> = grams
        .par_iter()
        .map(|q| -> Result<Option<Vec<Vec<f64>>>> {
            let top = (0..r).map(|i| q[i * r + i]).fold(0.0, f64::max);
            if top <= 0.0 {
                return Ok(None);
            }
            let m = faer::Mat::<f64>::from_fn(r, r, |i, j| q[i * r + j] / kappa);
            let evd = m.self_adjoint_eigen(faer::Side::Lower).map_err(|e| {
                Error::Numerical(format!("eigendecomposition of a template's Gram: {e:?}"))
            })?;
            let s = evd.S().column_vector();
            let u = evd.U();
            let big = (0..r).map(|k| s[k]).fold(0.0, f64::max);
            let rows: Vec<Vec<f64>> = (0..r)
                .filter(|&k| s[k] > drop * big)
                .map(|k| {
                    let root = s[k].sqrt();
                    (0..r).map(|i| root * u[(i, k)]).collect()
                })
                .collect();
            Ok(Some(rows))
        })
        .collect::<Result<_>>()?;
    // Rows of G (as triplets) and h, cones in order.
    let mut trip: Vec<(usize, usize, f64)> = Vec::new();
    let mut h = Vec::new();
    let mut cones = Vec::new();
    for k in 0..r {
        trip.push((h.len(), k, -1.0)); // s = alpha >= 0
        h.push(0.0);
    }
    for k in 0..r {
        trip.push((h.len(), k, 1.0)); // s = C - sum alpha >= 0
    }
    h.push(1.0);
    cones.push(SupportedConeT::NonnegativeConeT(r + 1));
    let mut cone_rows = Vec::new();
    for f in factors.iter() {
        let Some(rows) = f else {
            cone_rows.push(None);
            continue;
        };
        let start = h.len();
        trip.push((start, r, -s2));
        h.push(s2);
        trip.push((start + 1, r, -s2));
        h.push(-s2);
        for (i, row) in rows.iter().enumerate() {
            for (k, &v) in row.iter().enumerate() {
                if v != 0.0 {
                    trip.push((start + 2 + i, k, -v));
                }
            }
            h.push(0.0);
        }
        cones.push(SupportedConeT::SecondOrderConeT(rows.len() + 2));
        cone_rows.push(Some(start));
    }
    let m = h.len();
    trip.sort_unstable_by_key(|&(i, j, _)| (j, i));
    let mut colptr = vec![0usize; n + 1];
    for &(_, j, _) in &trip {
        colptr[j + 1] += 1;
    }
    for j in 0..n {
        colptr[j + 1] += colptr[j];
    }
    let rowval: Vec<usize> = trip.iter().map(|t| t.0).collect();
    let nzval: Vec<f64> = trip.iter().map(|t| t.2).collect();
    let g = CscMatrix::new(m, n, colptr, rowval, nzval);
    let p = CscMatrix::<f64>::zeros((n, n));
    let mut lin: Vec<f64> = b.iter().map(|v| -v / (c * kappa)).collect();
    lin.push(1.0);
    let eps = if tight { 1e-10 } else { 1e-8 };
    let settings = DefaultSettingsBuilder::default()
        .verbose(false)
        .max_iter(max_iter.min(500) as u32)
        .tol_gap_abs(eps)
        .tol_gap_rel(eps)
        .tol_feas(eps)
        .build()
        .map_err(|e| Error::Numerical(format!("clarabel settings: {e:?}")))?;
    let mut solver = DefaultSolver::new(&p, &lin, &g, &h, &cones, settings)
        .map_err(|e| Error::Numerical(format!("clarabel refused the QCQP: {e:?}")))?;
    solver.solve();
    match solver.solution.status {
        SolverStatus::Solved | SolverStatus::AlmostSolved => {}
        s => {
            return Err(Error::Numerical(format!(
                "the working-set QCQP over {r} cuts ended with clarabel status {s:?}"
            )))
        }
    }
    let x = &solver.solution.x;
    let z = &solver.solution.z;
    let mut alpha: Vec<f64> = x[..r].iter().map(|v| c * v.max(0.0)).collect();
    project_capped_simplex(&mut alpha, c);
    let mut mu: Vec<f64> = cone_rows
        .iter()
        .map(|st| st.map_or(0.0, |s| ((z[s] + z[s + 1]) * s2).max(0.0)))
        .collect();
    let total: f64 = mu.iter().sum();
    if total > 0.0 {
        mu.iter_mut().for_each(|v| *v /= total);
    }
    // Polish: an interior point gets the value to the tolerance but the multipliers only
    // to about its square root. At the template weights mu, alpha solves the l2 dual with
    // the Gram sum_j mu_j Q^j; the pairwise solver finishes it from the conic solution.
    let mut k = vec![0.0; r * r];
    for (q, &m) in grams.iter().zip(&mu) {
        if m > 0.0 {
            for (kv, qv) in k.iter_mut().zip(q) {
                *kv += m * qv;
            }
        }
    }
    let polished = crate::solver::cutting_plane::qp::solve(&k, b, c, &alpha, 1e-13, 1_000_000);
    Ok((polished.alpha, mu))
}
