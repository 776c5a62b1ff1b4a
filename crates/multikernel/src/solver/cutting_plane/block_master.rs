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
//! `max_{alpha in A}  b^T alpha - 1/2 (sum_j n_j^q*)^(2/q*)`. The conjugate's variational
//! form over template weights `theta` in the unit `l_r` ball turns it into the same saddle
//! point with another set and Gram weights ([`saddle::Geometry`]: `theta_j Q^j` for `q < 2`,
//! `Q^j / theta_j` for `q > 2`), solved by the same warm-started steps; the primal is
//! `w_j = f_j v_j` with `f_j` the Gram's weight, at the optimum the gradient of the conjugate
//! `1/2 ||v||_{q*}^2` (the paper's (12)-(13)): `w_j = S^(2/q* - 1) n_j^(q* - 2) v_j`,
//! `S = sum_k n_k^q*`. `q = 2` is the plain l2 structural SVM (`w = sum_r alpha_r a_r`): one
//! warm-started QP.
//!
//! With [`BlockNormMaster::inexact`] (as [`super::fit_block_norm`] runs it), a solve far from
//! the optimum of the outer loop stops early: at a tenth of the outer gap
//! (best objective minus best master value; [`MasterProblem::outer_gap`]), at most 1 % of
//! its value, never tighter than the absolute tolerance (inexact cutting planes: the next cut
//! changes the problem anyway, and near the end the absolute tolerance rules).
//!
//! Template weights for every `q`: `mu_j = ||w_j|| / sum_k ||w_k||` (for `q = 1` the saddle
//! point's `mu`, which agrees).

pub(crate) mod grams;
pub(crate) mod saddle;

#[cfg(test)]
mod conic;

use super::{Cut, MasterProblem, MasterSnapshot, MasterSolution};
use crate::error::{Error, Result};
use crate::features::GroupLayout;
use grams::PackedGrams;

/// With [`BlockNormMaster::inexact`], a solve stops once its gap is this share of the outer
/// loop's gap (or smaller than the absolute tolerance): far from the optimum the working set
/// need not be solved to the end, since the next cut changes it anyway; near it the absolute
/// tolerance rules.
pub(crate) const OUTER_SHARE: f64 = 0.1;

/// ... but never looser than this share of the last solve's value (the first solves, when the
/// outer gap is unknown or huge, still give multipliers worth cutting at).
const OUTER_CAP: f64 = 0.01;

/// The block-norm master (module docs).
#[derive(Debug, Clone)]
pub(crate) struct BlockNormMaster {
    q: f64,
    layout: GroupLayout,
    grams: PackedGrams,
    alpha: Vec<f64>,
    mu: Vec<f64>,
    /// The template weights `theta` of the last saddle-point solve (`q = 1`: `mu`).
    theta: Vec<f64>,
    /// The step carried from one saddle-point solve to the next.
    eta: f64,
    tol: f64,
    /// `q = 1`: a duality gap at which the saddle point stops whatever its relative size.
    abs_tol: f64,
    /// The outer loop's gap at the last solve ([`MasterProblem::outer_gap`]; 0 until told).
    outer_gap: f64,
    /// The share of the outer gap a solve may stop at (0: solved to `tol`, `abs_tol`).
    outer_share: f64,
    /// The last solve's value (0 before the first).
    value: f64,
    max_iter: usize,
    stats: MasterStats,
    /// A weights buffer handed back by the loop ([`MasterProblem::recycle`]).
    spare: Vec<f64>,
}

/// What the working-set solves of a run cost, summed over the cuts.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct MasterStats {
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
    /// `1/2 (sum_j n_j^q)^(2/q)` of the template norms `n_j` (mao-tsang eq. (5)).
    fn block_norm(&self, norms: &[f64]) -> f64 {
        0.5 * norms
            .iter()
            .map(|n| n.powf(self.q))
            .sum::<f64>()
            .powf(2.0 / self.q)
    }

    /// A master for block norm `q >= 1` (finite) over the groups of `layout`; `tol` is the
    /// relative duality gap at which the solvers stop, `max_iter` the most gradient steps
    /// (`q > 1`) or mirror steps on the template weights (`q = 1`).
    pub(crate) fn new(q: f64, layout: GroupLayout, tol: f64, max_iter: usize) -> Result<Self> {
        if !(q.is_finite() && q >= 1.0) {
            return Err(Error::param("q", q, "a finite block norm q >= 1"));
        }
        Ok(BlockNormMaster {
            q,
            grams: PackedGrams::new(layout.n_groups()),
            layout,
            alpha: Vec::new(),
            mu: Vec::new(),
            theta: Vec::new(),
            eta: 1.0,
            stats: MasterStats::default(),
            tol: tol.max(1e-12),
            abs_tol: 0.0,
            outer_gap: 0.0,
            outer_share: 0.0,
            value: 0.0,
            max_iter: max_iter.max(1),
            spare: Vec::new(),
        })
    }

    /// Solves stop at [`OUTER_SHARE`] of the outer loop's gap when that is looser than the
    /// tolerances (inexact cutting planes; module docs). Off by default: a master solved to
    /// its tolerances walks the same cuts as the plain l2 loop.
    pub(crate) fn inexact(mut self) -> Self {
        self.outer_share = OUTER_SHARE;
        self
    }

    /// `q != 2` also stops when the saddle point's duality gap is at most `abs_tol` (in the
    /// objective's units), whatever its relative size.
    pub(crate) fn with_abs_tol(mut self, abs_tol: f64) -> Self {
        self.abs_tol = if abs_tol.is_finite() {
            abs_tol.max(0.0)
        } else {
            0.0
        };
        self
    }

    /// The template weights of the last solve (summing to 1; all 0 before the first).
    pub(crate) fn mu(&self) -> &[f64] {
        &self.mu
    }
}

/// The Euclidean projection onto `{x >= 0, sum x <= c}`.
#[cfg(test)]
pub(crate) fn project_capped_simplex(x: &mut [f64], c: f64) {
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

impl MasterProblem for BlockNormMaster {
    fn solve(&mut self, cuts: &[Cut], c: f64, dim: usize) -> Result<MasterSolution> {
        if self.layout.total() != dim {
            return Err(Error::shape(
                "parameters of the block-norm master's layout",
                dim,
                self.layout.total(),
            ));
        }
        if u32::try_from(dim).is_err() {
            return Err(Error::unsupported(format!(
                "the multi-template working set indexes features with 32 bits; this task has \
                 {dim} parameters"
            )));
        }
        self.grams.extend(cuts, &self.layout);
        let b: Vec<f64> = cuts.iter().map(|k| k.b).collect();
        self.stats.solves += 1;
        let (alpha, factors, value, quad_forms) = if self.q == 2.0 {
            // No template weights: the l2 dual with the Gram sum_j Q^j, warm-started.
            let k = self.grams.combine(&vec![1.0; self.layout.n_groups()]);
            let sol = super::qp::solve(&k, &b, c, &self.alpha, 1e-12, 10_000_000);
            self.stats.qp_solves += 1;
            let quad_forms = self.grams.quad_forms(&sol.alpha);
            (
                sol.alpha,
                vec![1.0; self.layout.n_groups()],
                sol.value,
                quad_forms,
            )
        } else {
            let geometry = saddle::Geometry::new(self.q);
            let sol = saddle::solve(
                &self.grams,
                &b,
                c,
                geometry,
                saddle::Warm {
                    alpha: &self.alpha,
                    mu: &self.theta,
                    eta: self.eta,
                },
                saddle::Stop {
                    tol: self.tol,
                    abs_tol: self
                        .abs_tol
                        .max((self.outer_share * self.outer_gap).min(OUTER_CAP * self.value.abs())),
                    max_steps: self.max_iter,
                },
            );
            self.eta = sol.eta;
            self.stats.steps += sol.steps;
            self.stats.qp_solves += sol.qp_solves;
            self.stats.unconverged += usize::from(!sol.converged);
            let factors = geometry.factors(&sol.mu);
            self.theta = sol.mu;
            (sol.alpha, factors, sol.lower, sol.quad_forms)
        };
        if !value.is_finite() || alpha.iter().any(|a| !a.is_finite()) {
            return Err(Error::Numerical(format!(
                "the working-set problem over {} cuts has a non-finite solution",
                cuts.len()
            )));
        }
        let w = self
            .grams
            .weights_into(&alpha, &factors, std::mem::take(&mut self.spare));
        // <a_r, w> = sum_j f_j (Q^j alpha)_r and ||w_j|| = f_j sqrt(alpha^T Q^j alpha), from
        // the Grams (no pass over the features).
        let mut margins = vec![0.0; b.len()];
        for (qa, f) in self.grams.products(&alpha).iter().zip(&factors) {
            if *f != 0.0 {
                for (m, v) in margins.iter_mut().zip(qa) {
                    *m += f * v;
                }
            }
        }
        let norms: Vec<f64> = quad_forms
            .iter()
            .zip(&factors)
            .map(|(qf, f)| f.abs() * qf.sqrt())
            .collect();
        let total: f64 = norms.iter().sum();
        self.mu = if self.q == 1.0 {
            factors.clone()
        } else if total > 0.0 {
            norms.iter().map(|n| n / total).collect()
        } else {
            vec![0.0; norms.len()]
        };
        self.alpha = alpha;
        self.value = value;
        Ok(MasterSolution {
            w,
            value,
            margins: Some(margins),
            regularizer: Some(self.block_norm(&norms)),
            factors,
        })
    }

    fn alpha(&self) -> &[f64] {
        &self.alpha
    }

    fn outer_gap(&mut self, gap: f64) {
        self.outer_gap = if gap.is_nan() { f64::INFINITY } else { gap };
    }

    /// `1/2 (sum_j ||w_j||^q)^(2/q)` (mao-tsang eq. (5); `q = 1`: the squared l2,1 norm).
    fn regularizer(&self, w: &[f64]) -> f64 {
        self.block_norm(&self.layout.group_norms(w))
    }

    fn retain(&mut self, keep: &[bool]) {
        self.grams.retain(keep);
        super::retain_kept(&mut self.alpha, keep);
    }

    fn recycle(&mut self, w: Vec<f64>) {
        self.spare = w;
    }

    fn snapshot(&self) -> Option<MasterSnapshot> {
        let s = &self.stats;
        Some(MasterSnapshot {
            alpha: self.alpha.clone(),
            mu: self.mu.clone(),
            theta: self.theta.clone(),
            eta: self.eta,
            value: self.value,
            stats: [s.solves, s.steps, s.qp_solves, s.unconverged],
        })
    }

    /// The Grams are emptied: the next solve computes them again from the cuts
    /// ([`grams::PackedGrams::extend`]: each entry from its two cuts, to the same bits).
    fn restore(&mut self, snap: MasterSnapshot) -> Result<()> {
        let groups = self.layout.n_groups();
        if ![&snap.mu, &snap.theta]
            .iter()
            .all(|v| v.is_empty() || v.len() == groups)
            || !snap.eta.is_finite()
            || !snap.value.is_finite()
        {
            return Err(Error::data(format!(
                "the checkpoint's working-set state does not fit this run's {groups} templates"
            )));
        }
        let [solves, steps, qp_solves, unconverged] = snap.stats;
        self.grams = PackedGrams::new(groups);
        self.alpha = snap.alpha;
        self.mu = snap.mu;
        self.theta = snap.theta;
        self.eta = snap.eta;
        self.value = snap.value;
        self.stats = MasterStats {
            solves,
            steps,
            qp_solves,
            unconverged,
        };
        Ok(())
    }
}

#[cfg(test)]
mod tests;
