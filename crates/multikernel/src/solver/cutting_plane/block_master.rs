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
//! 1/2 alpha^T Q^j alpha <= theta` for every template `j`, a quadratically constrained program.
//! It is solved as the MKL saddle point over `alpha` and the template weights `mu` (the duals
//! of the constraints, a point of the simplex) by [`saddle`]: mirror steps on `mu` around the
//! pairwise QP with the Gram `sum_j mu_j Q^j`, both warm-started from the previous cut's
//! solution, stopped on the duality gap. The Grams are kept packed and grown by one row per
//! cut ([`grams`]); nothing is factored. (The interior-point solution of the conic program,
//! by clarabel, is the tests' slow twin.) The primal is (7): `w_j = mu_j v_j`.
//!
//! **q > 1** (problem (11)): with `q* = q/(q-1)` and `n_j = sqrt(alpha^T Q^j alpha) = ||v_j||`,
//! `max_{alpha in A}  b^T alpha - 1/2 (sum_j n_j^q*)^(2/q*)`, a smooth concave problem solved
//! by projected gradient ascent with backtracking (the projection onto `A` by sorting) until
//! the duality gap is below the tolerance. The primal is the gradient of the conjugate
//! `1/2 ||v||_{q*}^2` (the paper's (12)-(13)): `w_j = S^(2/q* - 1) n_j^(q* - 2) v_j`,
//! `S = sum_k n_k^q*`. `q = 2` is the plain l2 structural SVM (`w = sum_r alpha_r a_r`).
//!
//! Template weights for every `q`: `mu_j = ||w_j|| / sum_k ||w_k||` (for `q = 1` the saddle
//! point's `mu`, which agrees).

pub mod grams;
pub mod saddle;

#[cfg(test)]
mod conic;

use super::{Cut, MasterProblem, MasterSolution};
use crate::error::{Error, Result};
use crate::features::GroupLayout;
use grams::PackedGrams;

/// Projected-gradient steps of a `q > 1` solve at most before the polish.
const PG_STEPS: usize = 300;

/// The block-norm master (module docs).
#[derive(Debug, Clone)]
pub struct BlockNormMaster {
    q: f64,
    layout: GroupLayout,
    grams: PackedGrams,
    alpha: Vec<f64>,
    mu: Vec<f64>,
    /// The mirror step carried from one `q = 1` solve to the next.
    eta: f64,
    tol: f64,
    /// `q = 1`: a duality gap at which the saddle point stops whatever its relative size.
    abs_tol: f64,
    max_iter: usize,
    stats: MasterStats,
}

/// What the working-set solves of a run cost, summed over the cuts.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct MasterStats {
    /// Solves (one per cut).
    pub solves: usize,
    /// `q = 1`: mirror steps on the template weights; `q > 1`: gradient and polish steps.
    pub steps: usize,
    /// Pairwise QPs solved.
    pub qp_solves: usize,
    /// Solves that stopped at the step limit before the gap reached the tolerance.
    pub unconverged: usize,
}

impl BlockNormMaster {
    /// A master for block norm `q >= 1` (finite) over the groups of `layout`; `tol` is the
    /// relative duality gap at which the solvers stop, `max_iter` the most gradient steps
    /// (`q > 1`) or mirror steps on the template weights (`q = 1`).
    pub fn new(q: f64, layout: GroupLayout, tol: f64, max_iter: usize) -> Result<Self> {
        if !(q.is_finite() && q >= 1.0) {
            return Err(Error::param("q", q, "a finite block norm q >= 1"));
        }
        Ok(BlockNormMaster {
            q,
            grams: PackedGrams::new(layout.n_groups()),
            layout,
            alpha: Vec::new(),
            mu: Vec::new(),
            eta: 1.0,
            stats: MasterStats::default(),
            tol: tol.max(1e-12),
            abs_tol: 0.0,
            max_iter: max_iter.max(1),
        })
    }

    /// `q = 1` also stops when the saddle point's duality gap is at most `abs_tol` (in the
    /// objective's units), whatever its relative size.
    pub fn with_abs_tol(mut self, abs_tol: f64) -> Self {
        self.abs_tol = if abs_tol.is_finite() {
            abs_tol.max(0.0)
        } else {
            0.0
        };
        self
    }

    /// The template weights of the last solve (summing to 1; all 0 before the first).
    pub fn mu(&self) -> &[f64] {
        &self.mu
    }

    /// The multipliers of the last solve.
    pub fn alpha(&self) -> &[f64] {
        &self.alpha
    }

    /// What the solves so far cost.
    pub fn stats(&self) -> MasterStats {
        self.stats
    }
}

/// The Euclidean projection onto `{x >= 0, sum x <= c}`.
pub fn project_capped_simplex(x: &mut [f64], c: f64) {
    for v in x.iter_mut() {
        *v = v.max(0.0);
    }
    let sum: f64 = x.iter().sum();
    if sum > c {
        project_onto_sum(x, c);
    }
}

/// The Euclidean projection onto `{x >= 0, sum x = c}`: `x_k <- max(x_k - tau, 0)` with the
/// threshold `tau` found by sorting.
pub(crate) fn project_onto_sum(x: &mut [f64], c: f64) {
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

fn blocks(grams: &PackedGrams, alpha: &[f64]) -> Vec<Block> {
    grams
        .products(alpha)
        .into_iter()
        .map(|q_alpha| {
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
    fn solve_smooth(&mut self, b: &[f64], c: f64) -> Vec<f64> {
        let r = b.len();
        let mut alpha = self.alpha.clone();
        alpha.resize(r, 0.0);
        if alpha.iter().all(|&a| a == 0.0) {
            // Start from the newest cut with a small mass.
            alpha[r - 1] = c.min(1.0) * 1e-3;
        }
        project_capped_simplex(&mut alpha, c);
        let mut step = 1.0;
        let mut bl = blocks(&self.grams, &alpha);
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
                let nb = blocks(&self.grams, &next);
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
        self.polish_smooth(b, c, alpha)
    }

    /// Polishes the multipliers of `q > 1`: at the optimum, alpha also solves the l2 dual
    /// with the Gram `sum_j f_j Q^j` (`f_j` the primal factors at alpha: both problems have
    /// the same gradient there), so the pairwise solver is run on it, the factors updated,
    /// and so on while the dual value improves (for `q = 2` one round is exact).
    fn polish_smooth(&mut self, b: &[f64], c: f64, start: Vec<f64>) -> Vec<f64> {
        let mut alpha = start;
        let mut bl = blocks(&self.grams, &alpha);
        let mut d = dual_value_q(&bl, b, &alpha, self.q);
        for _ in 0..50 {
            let f = primal_factors(&bl.iter().map(|k| k.norm).collect::<Vec<_>>(), self.q);
            let k = self.grams.combine(&f);
            self.stats.qp_solves += 1;
            self.stats.steps += 1;
            let next = super::qp::solve(&k, b, c, &alpha, 1e-14, 1_000_000).alpha;
            let nb = blocks(&self.grams, &next);
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
        self.grams.extend(cuts, &self.layout, dim);
        let b: Vec<f64> = cuts.iter().map(|k| k.b).collect();
        self.stats.solves += 1;
        let (alpha, factors, value) = if self.q == 1.0 {
            let sol = saddle::solve(
                &self.grams,
                &b,
                c,
                saddle::Warm {
                    alpha: &self.alpha,
                    mu: &self.mu,
                    eta: self.eta,
                },
                saddle::Stop {
                    tol: self.tol,
                    abs_tol: self.abs_tol,
                    max_steps: self.max_iter,
                },
            );
            self.eta = sol.eta;
            self.stats.steps += sol.steps;
            self.stats.qp_solves += sol.qp_solves;
            self.stats.unconverged += usize::from(!sol.converged);
            (sol.alpha, sol.mu, sol.lower)
        } else {
            let alpha = self.solve_smooth(&b, c);
            let bl = blocks(&self.grams, &alpha);
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
        self.grams.retain(keep);
        super::retain_kept(&mut self.alpha, keep);
    }
}

#[cfg(test)]
mod tests;
