//! The working-set problem of multi-template learning (mao-tsang problems (6) and (11);
//! docs/formulas.md "Multi-template learning"): the 1-slack structural SVM over cuts
//! `<w, a_r> >= b_r - xi` with the squared block-norm regularizer over the templates
//! (groups `j` of the layout)
//!
//! ```text
//! min_w  1/2 (sum_j ||w_j||^q)^(2/q) + C max(0, max_r (b_r - <w, a_r>)),
//! ```
//!
//! solved in its dual over the capped simplex `A = {alpha >= 0, sum_r alpha_r <= C}`, with
//! the per-template Gram matrices `Q^j_rs = <a_r^(j), a_s^(j)>` and `v_j = sum_r alpha_r a_r^(j)`.
//!
//! **q = 1** (problem (6)): `max_{alpha in A, theta}  b^T alpha - theta  s.t.
//! 1/2 alpha^T Q^j alpha <= theta` for every template `j`, a quadratically constrained program,
//! solved by the interior-point conic solver clarabel. With `Q^j = L_j L_j^T` (an eigen factor,
//! eigenvalues below `1e-12` of the largest dropped), the constraint `||L_j^T alpha||^2 <= 2
//! theta * 1` is a rotated second-order cone, written as the standard cone
//!
//! ```text
//! ( (theta + 1)/sqrt2, (theta - 1)/sqrt2, L_j^T alpha )   in SOC(rank_j + 2).
//! ```
//!
//! Clarabel minimizes `theta - b^T alpha` subject to `s = h - G x in K` (`x = (alpha,
//! theta)`; `K`: the nonnegative orthant for `alpha >= 0` and the cap, then one cone per
//! template). Stationarity in `theta` reads `1 = sum_j (z_j0 + z_j1)/sqrt2` with `z_j` the
//! cone's dual: the template weights are `mu_j = (z_j0 + z_j1)/sqrt2`, a point of the simplex
//! (renormalized against round-off), zero for templates whose constraint is slack. The primal
//! is (7): `w_j = mu_j v_j`.
//!
//! **q > 1** (problem (11)): with `q* = q/(q-1)` and `n_j = sqrt(alpha^T Q^j alpha) = ||v_j||`,
//! `max_{alpha in A}  b^T alpha - 1/2 (sum_j n_j^q*)^(2/q*)`, a smooth concave problem solved
//! by projected gradient ascent with backtracking (the projection onto `A` by sorting) until
//! the duality gap is below the tolerance. The primal is the gradient of the conjugate
//! `1/2 ||v||_{q*}^2` (the paper's (12)-(13)): `w_j = S^(2/q* - 1) n_j^(q* - 2) v_j`,
//! `S = sum_k n_k^q*`. `q = 2` is the plain l2 structural SVM (`w = sum_r alpha_r a_r`).
//!
//! Template weights for every `q`: `mu_j = ||w_j|| / sum_k ||w_k||` (for `q = 1` the cone
//! duals above, which agree).

use super::{Cut, MasterProblem, MasterSolution};
use crate::error::{Error, Result};
use crate::features::GroupLayout;
use rayon::prelude::*;

/// Projected-gradient steps of a `q > 1` solve at most before the polish.
const PG_STEPS: usize = 300;

/// The block-norm master (module docs).
#[derive(Debug, Clone)]
pub struct BlockNormMaster {
    q: f64,
    layout: GroupLayout,
    /// `grams[j][r][s] = Q^j_rs` for `s <= r`.
    grams: Vec<Vec<Vec<f64>>>,
    alpha: Vec<f64>,
    mu: Vec<f64>,
    tol: f64,
    max_iter: usize,
}

impl BlockNormMaster {
    /// A master for block norm `q >= 1` (finite) over the groups of `layout`; `tol` is the
    /// relative duality gap at which the solvers stop, `max_iter` the most gradient steps
    /// (`q > 1`) or interior-point iterations (`q = 1`).
    pub fn new(q: f64, layout: GroupLayout, tol: f64, max_iter: usize) -> Result<Self> {
        if !(q.is_finite() && q >= 1.0) {
            return Err(Error::param("q", q, "a finite block norm q >= 1"));
        }
        Ok(BlockNormMaster {
            q,
            grams: vec![Vec::new(); layout.n_groups()],
            layout,
            alpha: Vec::new(),
            mu: Vec::new(),
            tol: tol.max(1e-12),
            max_iter: max_iter.max(1),
        })
    }

    /// The template weights of the last solve (summing to 1; all 0 before the first).
    pub fn mu(&self) -> &[f64] {
        &self.mu
    }

    /// The multipliers of the last solve.
    pub fn alpha(&self) -> &[f64] {
        &self.alpha
    }

    /// `Q^j_rs` for all groups at once, for the new cut `r` against `s = 0..=r`.
    fn extend(&mut self, cuts: &[Cut], dim: usize) {
        let ng = self.layout.n_groups();
        let ends: Vec<usize> = (0..ng).map(|g| self.layout.range(g).end).collect();
        for r in self.grams.first().map_or(0, Vec::len)..cuts.len() {
            let mut dense = vec![0.0; dim];
            cuts[r].a.add_scaled_to(&mut dense, 1.0);
            let rows: Vec<Vec<f64>> = (0..=r)
                .into_par_iter()
                .map(|s| {
                    let mut per = vec![0.0; ng];
                    let mut g = 0;
                    for (j, v) in cuts[s].a.iter() {
                        while g < ng && j >= ends[g] {
                            g += 1;
                        }
                        if g < ng {
                            per[g] += v * dense[j];
                        }
                    }
                    per
                })
                .collect();
            for (g, gram) in self.grams.iter_mut().enumerate() {
                gram.push(rows.iter().map(|p| p[g]).collect());
            }
        }
    }

    /// `Q^j` of group `g` as a dense `r x r` matrix (row-major).
    fn dense_gram(&self, g: usize) -> Vec<f64> {
        let rows = &self.grams[g];
        let r = rows.len();
        let mut m = vec![0.0; r * r];
        for i in 0..r {
            for j in 0..=i {
                m[i * r + j] = rows[i][j];
                m[j * r + i] = rows[i][j];
            }
        }
        m
    }
}

/// `Q alpha` for a dense row-major `r x r` matrix.
fn mat_vec(q: &[f64], alpha: &[f64]) -> Vec<f64> {
    let r = alpha.len();
    (0..r)
        .map(|i| {
            q[i * r..(i + 1) * r]
                .iter()
                .zip(alpha)
                .map(|(a, b)| a * b)
                .sum()
        })
        .collect()
}

/// The Euclidean projection onto `{x >= 0, sum x <= c}`.
pub fn project_capped_simplex(x: &mut [f64], c: f64) {
    for v in x.iter_mut() {
        *v = v.max(0.0);
    }
    let sum: f64 = x.iter().sum();
    if sum <= c {
        return;
    }
    let mut u: Vec<f64> = x.to_vec();
    u.sort_unstable_by(|a, b| b.total_cmp(a));
    let mut acc = 0.0;
    let mut tau = 0.0;
    for (k, &v) in u.iter().enumerate() {
        acc += v;
        let t = (acc - c) / (k + 1) as f64;
        if v - t > 0.0 {
            tau = t;
        }
    }
    for v in x.iter_mut() {
        *v = (*v - tau).max(0.0);
    }
}

/// What one template contributes at `alpha`: `Q^j alpha` and `n_j = sqrt(alpha^T Q^j alpha)`.
struct Block {
    q_alpha: Vec<f64>,
    norm: f64,
}

fn blocks(grams: &[Vec<f64>], alpha: &[f64]) -> Vec<Block> {
    grams
        .iter()
        .map(|q| {
            let q_alpha = mat_vec(q, alpha);
            let sq: f64 = q_alpha.iter().zip(alpha).map(|(a, b)| a * b).sum();
            Block {
                q_alpha,
                norm: sq.max(0.0).sqrt(),
            }
        })
        .collect()
}

/// The factors `f_j` of the primal `w_j = f_j v_j` for `q > 1` (module docs).
fn primal_factors(norms: &[f64], q: f64) -> Vec<f64> {
    if q == 2.0 {
        return vec![1.0; norms.len()];
    }
    let qs = q / (q - 1.0);
    let s: f64 = norms.iter().map(|n| n.powf(qs)).sum();
    if s <= 0.0 {
        return vec![0.0; norms.len()];
    }
    let lead = s.powf(2.0 / qs - 1.0);
    norms
        .iter()
        .map(|&n| {
            if n > 0.0 {
                lead * n.powf(qs - 2.0)
            } else {
                0.0
            }
        })
        .collect()
}

/// Primal value `Omega(w) + C max(0, max_r (b_r - <w, a_r>))` of `w_j = f_j v_j`, computed in
/// cut space: `||w_j|| = f_j n_j`, `<w, a_r> = sum_j f_j (Q^j alpha)_r`.
fn primal_value(bl: &[Block], f: &[f64], b: &[f64], c: f64, q: f64) -> f64 {
    let omega = 0.5
        * bl.iter()
            .zip(f)
            .map(|(k, fj)| (fj * k.norm).powf(q))
            .sum::<f64>()
            .powf(2.0 / q);
    let worst = (0..b.len())
        .map(|r| {
            b[r] - bl
                .iter()
                .zip(f)
                .map(|(k, fj)| fj * k.q_alpha[r])
                .sum::<f64>()
        })
        .fold(0.0, f64::max);
    omega + c * worst
}

/// `D(alpha) = b^T alpha - 1/2 (sum_j n_j^q*)^(2/q*)` for `q > 1`.
fn dual_value_q(bl: &[Block], b: &[f64], alpha: &[f64], q: f64) -> f64 {
    let qs = q / (q - 1.0);
    let lin: f64 = b.iter().zip(alpha).map(|(x, y)| x * y).sum();
    let s: f64 = bl.iter().map(|k| k.norm.powf(qs)).sum();
    lin - 0.5 * s.powf(2.0 / qs)
}

/// Gradient of the dual for `q > 1`: `b - S^(2/q*-1) sum_j n_j^(q*-2) Q^j alpha`.
fn dual_gradient_q(bl: &[Block], b: &[f64], q: f64) -> Vec<f64> {
    let f = primal_factors(&bl.iter().map(|k| k.norm).collect::<Vec<_>>(), q);
    let mut g = b.to_vec();
    for (k, fj) in bl.iter().zip(&f) {
        if *fj != 0.0 {
            for (gr, qa) in g.iter_mut().zip(&k.q_alpha) {
                *gr -= fj * qa;
            }
        }
    }
    g
}

impl BlockNormMaster {
    /// `q > 1`: projected gradient ascent with backtracking from the previous multipliers.
    fn solve_smooth(&self, grams: &[Vec<f64>], b: &[f64], c: f64) -> Vec<f64> {
        let r = b.len();
        let mut alpha = self.alpha.clone();
        alpha.resize(r, 0.0);
        if alpha.iter().all(|&a| a == 0.0) {
            // Start from the newest cut with a small mass.
            alpha[r - 1] = c.min(1.0) * 1e-3;
        }
        project_capped_simplex(&mut alpha, c);
        let mut step = 1.0;
        let mut bl = blocks(grams, &alpha);
        let mut d = dual_value_q(&bl, b, &alpha, self.q);
        // Gradient steps bring alpha near the optimum; the fixed-point polish finishes it.
        for _ in 0..self.max_iter.min(PG_STEPS) {
            let f = primal_factors(&bl.iter().map(|k| k.norm).collect::<Vec<_>>(), self.q);
            let p = primal_value(&bl, &f, b, c, self.q);
            if p - d <= self.tol * (1.0 + d.abs()) {
                break;
            }
            let g = dual_gradient_q(&bl, b, self.q);
            let mut improved = false;
            for _ in 0..60 {
                let mut next: Vec<f64> =
                    alpha.iter().zip(&g).map(|(a, gr)| a + step * gr).collect();
                project_capped_simplex(&mut next, c);
                let nb = blocks(grams, &next);
                let nd = dual_value_q(&nb, b, &next, self.q);
                let moved: f64 = next
                    .iter()
                    .zip(&alpha)
                    .zip(&g)
                    .map(|((x, a), gr)| (x - a) * gr)
                    .sum();
                let dist: f64 = next.iter().zip(&alpha).map(|(x, a)| (x - a).powi(2)).sum();
                if nd >= d + 0.5 * moved - 1e-15 * d.abs().max(1.0) && dist > 0.0 {
                    improved = nd > d;
                    alpha = next;
                    bl = nb;
                    d = nd;
                    step *= 2.0;
                    break;
                }
                step *= 0.5;
            }
            if !improved {
                break;
            }
        }
        self.polish_smooth(grams, b, c, alpha)
    }

    /// Polishes the multipliers of `q > 1`: at the optimum, alpha also solves the l2 dual
    /// with the Gram `sum_j f_j Q^j` (`f_j` the primal factors at alpha: both problems have
    /// the same gradient there), so the pairwise solver is run on it, the factors updated,
    /// and so on while the dual value improves (for `q = 2` one round is exact).
    fn polish_smooth(&self, grams: &[Vec<f64>], b: &[f64], c: f64, start: Vec<f64>) -> Vec<f64> {
        let r = b.len();
        let mut alpha = start;
        let mut bl = blocks(grams, &alpha);
        let mut d = dual_value_q(&bl, b, &alpha, self.q);
        for _ in 0..50 {
            let f = primal_factors(&bl.iter().map(|k| k.norm).collect::<Vec<_>>(), self.q);
            let mut k = vec![0.0; r * r];
            for (q, &fj) in grams.iter().zip(&f) {
                if fj > 0.0 {
                    for (kv, qv) in k.iter_mut().zip(q) {
                        *kv += fj * qv;
                    }
                }
            }
            let next = super::qp::solve(&k, b, c, &alpha, 1e-14, 1_000_000).alpha;
            let nb = blocks(grams, &next);
            let nd = dual_value_q(&nb, b, &next, self.q);
            if nd.is_nan() || nd <= d {
                break;
            }
            let change: f64 = next.iter().zip(&alpha).map(|(x, y)| (x - y).abs()).sum();
            alpha = next;
            bl = nb;
            d = nd;
            if change <= 1e-14 * c.max(1.0) {
                break;
            }
        }
        alpha
    }

    /// `q = 1`: the conic program of the module docs; returns alpha and mu.
    fn solve_conic(&self, grams: &[Vec<f64>], b: &[f64], c: f64) -> Result<(Vec<f64>, Vec<f64>)> {
        // Tight tolerances first; an interior point that stalls on a badly conditioned
        // working set gets clarabel's defaults, then a coarser eigen factor.
        let mut last = None;
        for (tight, drop) in [(true, 1e-9), (false, 1e-9), (false, 1e-6)] {
            match self.solve_conic_with(grams, b, c, tight, drop) {
                Ok(v) => return Ok(v),
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| Error::Numerical("the working-set QCQP failed".into())))
    }

    fn solve_conic_with(
        &self,
        grams: &[Vec<f64>],
        b: &[f64],
        c: f64,
        tight: bool,
        drop: f64,
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
            .max_iter(self.max_iter.min(500) as u32)
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
        let polished = super::qp::solve(&k, b, c, &alpha, 1e-13, 1_000_000);
        Ok((polished.alpha, mu))
    }
}

impl MasterProblem for BlockNormMaster {
    fn solve(&mut self, cuts: &[Cut], c: f64, dim: usize) -> Result<MasterSolution> {
        if self.layout.total() != dim {
            return Err(Error::shape(
                "parameters of the block-norm master's layout",
                dim,
                self.layout.total(),
            ));
        }
        self.extend(cuts, dim);
        let b: Vec<f64> = cuts.iter().map(|k| k.b).collect();
        let grams: Vec<Vec<f64>> = (0..self.layout.n_groups())
            .map(|g| self.dense_gram(g))
            .collect();
        let (alpha, factors, value) = if self.q == 1.0 {
            let (alpha, mu) = self.solve_conic(&grams, &b, c)?;
            let bl = blocks(&grams, &alpha);
            let theta = bl.iter().map(|k| 0.5 * k.norm * k.norm).fold(0.0, f64::max);
            let lin: f64 = b.iter().zip(&alpha).map(|(x, y)| x * y).sum();
            (alpha, mu, lin - theta)
        } else {
            let alpha = self.solve_smooth(&grams, &b, c);
            let bl = blocks(&grams, &alpha);
            let f = primal_factors(&bl.iter().map(|k| k.norm).collect::<Vec<_>>(), self.q);
            let value = dual_value_q(&bl, &b, &alpha, self.q);
            (alpha, f, value)
        };
        if !value.is_finite() || alpha.iter().any(|a| !a.is_finite()) {
            return Err(Error::Numerical(format!(
                "the working-set problem over {} cuts has a non-finite solution",
                cuts.len()
            )));
        }
        let mut w = vec![0.0; dim];
        for (cut, &a) in cuts.iter().zip(&alpha) {
            if a != 0.0 {
                cut.a.add_scaled_to(&mut w, a);
            }
        }
        for (g, f) in factors.iter().enumerate() {
            for v in &mut w[self.layout.range(g)] {
                *v *= f;
            }
        }
        let norms: Vec<f64> = (0..self.layout.n_groups())
            .map(|g| {
                w[self.layout.range(g)]
                    .iter()
                    .map(|v| v * v)
                    .sum::<f64>()
                    .sqrt()
            })
            .collect();
        let total: f64 = norms.iter().sum();
        self.mu = if self.q == 1.0 {
            factors
        } else if total > 0.0 {
            norms.iter().map(|n| n / total).collect()
        } else {
            vec![0.0; norms.len()]
        };
        self.alpha = alpha;
        Ok(MasterSolution { w, value })
    }

    fn alpha(&self) -> &[f64] {
        &self.alpha
    }

    fn retain(&mut self, keep: &[bool]) {
        for gram in &mut self.grams {
            super::retain_triangle(gram, keep);
        }
        super::retain_kept(&mut self.alpha, keep);
    }
}

#[cfg(test)]
mod tests;
