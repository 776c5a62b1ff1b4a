//! The restricted problem of the cutting-plane loop ([`MasterProblem`]): the working set's
//! cuts, the l2 master ([`L2Master`]: the dual QP of [`super::qp`] over the capped
//! simplex), what it returns and what a checkpoint keeps of it.

use super::{block_master, qp};
use crate::error::{Error, Result};
use crate::features::{GroupLayout, SparseVector};
use serde::{Deserialize, Serialize};

/// A constraint of the 1-slack working set: `<w, a> >= b - xi`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Cut {
    /// `1/n sum_i [Phi(x_i, y_i) - Phi(x_i, y_hat_i)]` in the explicit parameter space.
    pub a: SparseVector,
    /// `1/n sum_i c(y_i, y_hat_i)`.
    pub b: f64,
}

/// The restricted problem over a working set.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct MasterSolution {
    /// The weights (global indices of the explicit groups).
    pub w: Vec<f64>,
    /// The restricted problem's optimal value (its dual value).
    pub value: f64,
    /// `<a_r, w>` for every cut `r` of the working set, when the master has them at hand
    /// from its Gram matrices (cheaper than a pass over the cuts' features); the loop
    /// takes the slack `xi = max_r b_r - <a_r, w>` from them.
    pub margins: Option<Vec<f64>>,
    /// The regularizer `Omega(w)` of the returned `w`, when the master has it from its Gram
    /// matrices (else the loop computes [`MasterProblem::regularizer`], a pass over `w`).
    pub regularizer: Option<f64>,
    /// The factor of each group in `w_j = sum_r (alpha_r f_g(j)) a_r[j]` (the template
    /// weights' scaling of a block-norm master); empty: 1 for every group.
    pub factors: Vec<f64>,
}

/// Solves the problem restricted to the cuts so far: the seam where the multi-template
/// learner puts its QCQP. Cuts are only appended between calls, so a master may cache what
/// it computed for earlier ones.
pub(crate) trait MasterProblem {
    fn solve(&mut self, cuts: &[Cut], c: f64, dim: usize) -> Result<MasterSolution>;

    /// The multipliers of the last solve, one per cut.
    fn alpha(&self) -> &[f64];

    /// Forgets the cuts whose `keep` entry is false (the loop drops them from its working
    /// set too), keeping what it cached for the others.
    fn retain(&mut self, keep: &[bool]);

    /// The regularizer `Omega(w)` of the problem the master restricts (the objective is
    /// `Omega(w) + C xi`); the plain l2 structural SVM's `1/2 ||w||^2` unless overridden.
    fn regularizer(&self, w: &[f64]) -> f64 {
        0.5 * w.iter().map(|v| v * v).sum::<f64>()
    }

    /// Told before each solve how far the outer loop is from its optimum: the best
    /// objective seen minus the best lower bound (a master value). A master solved by an
    /// iterative method may stop its next solve at a fraction of it (inexact cutting
    /// planes); the default ignores it.
    fn outer_gap(&mut self, _gap: f64) {}

    /// Hands back the weights of an earlier solution, which the loop no longer needs: a
    /// master may fill the next solution's weights into it (no allocation per cut). The
    /// default drops it.
    fn recycle(&mut self, _w: Vec<f64>) {}

    /// The master's state after a solve, for a checkpoint of the loop ([`checkpoint`]):
    /// what its next solves depend on besides the cuts. `None` (the default): this master
    /// keeps no checkpoints. What it caches of the cuts is not in it: after
    /// [`MasterProblem::restore`] the next solve computes it again from the cuts, to the
    /// same bits.
    fn snapshot(&self) -> Option<MasterSnapshot> {
        None
    }

    /// Puts a master with no cuts yet where [`MasterProblem::snapshot`] found one of the
    /// same kind and settings; the next solve gets every cut held.
    fn restore(&mut self, _snap: MasterSnapshot) -> Result<()> {
        Err(Error::unsupported(
            "this working-set problem keeps no checkpoints",
        ))
    }
}

/// A master's state between solves (a checkpoint's; [`MasterProblem::snapshot`]): the
/// multipliers of the last solve, and for the block-norm master the template weights `mu`
/// and `theta`, the step carried to the next saddle-point solve, the last value and the
/// counters of [`block_master::MasterStats`] (solves, steps, QPs, unconverged).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct MasterSnapshot {
    pub alpha: Vec<f64>,
    #[serde(default)]
    pub mu: Vec<f64>,
    #[serde(default)]
    pub theta: Vec<f64>,
    #[serde(default)]
    pub eta: f64,
    #[serde(default)]
    pub value: f64,
    #[serde(default)]
    pub stats: [usize; 4],
}

/// Keeps the entries `r` with `keep[r]`.
pub(crate) fn retain_kept(values: &mut Vec<f64>, keep: &[bool]) {
    let mut it = keep.iter();
    values.retain(|_| *it.next().unwrap_or(&true));
}

/// A cut whose multiplier stayed 0 for this many consecutive solves leaves the working set.
pub(crate) const INACTIVE_SOLVES: usize = 5;

/// The l2 master: the dual QP over the capped simplex ([`qp::solve`]), the Gram matrix of the
/// cuts kept between calls (packed, one row appended per cut: [`block_master::grams`]) and
/// warm-started from the previous multipliers.
#[derive(Debug, Clone, Default)]
pub(crate) struct L2Master {
    gram: block_master::grams::PackedGrams,
    alpha: Vec<f64>,
    /// A weights buffer handed back by the loop ([`MasterProblem::recycle`]).
    spare: Vec<f64>,
    tol: f64,
    max_iter: usize,
}

impl L2Master {
    pub(crate) fn new(tol: f64, max_iter: usize) -> L2Master {
        L2Master {
            gram: block_master::grams::PackedGrams::new(1),
            alpha: Vec::new(),
            spare: Vec::new(),
            tol,
            max_iter,
        }
    }
}

impl MasterProblem for L2Master {
    fn alpha(&self) -> &[f64] {
        &self.alpha
    }

    fn retain(&mut self, keep: &[bool]) {
        self.gram.retain(keep);
        retain_kept(&mut self.alpha, keep);
    }

    fn recycle(&mut self, w: Vec<f64>) {
        self.spare = w;
    }

    fn snapshot(&self) -> Option<MasterSnapshot> {
        Some(MasterSnapshot {
            alpha: self.alpha.clone(),
            ..MasterSnapshot::default()
        })
    }

    fn restore(&mut self, snap: MasterSnapshot) -> Result<()> {
        self.gram = block_master::grams::PackedGrams::new(1);
        self.alpha = snap.alpha;
        Ok(())
    }

    fn solve(&mut self, cuts: &[Cut], c: f64, dim: usize) -> Result<MasterSolution> {
        if u32::try_from(dim).is_err() {
            return Err(Error::unsupported(format!(
                "the cutting plane's working set indexes features with 32 bits; this task has \
                 {dim} parameters"
            )));
        }
        self.gram.extend(cuts, &GroupLayout::new(vec![dim]));
        let r = cuts.len();
        let g = self.gram.combine(&[1.0]);
        let b: Vec<f64> = cuts.iter().map(|k| k.b).collect();
        let sol = qp::solve(&g, &b, c, &self.alpha, self.tol, self.max_iter);
        if !sol.value.is_finite() {
            return Err(Error::Numerical(format!(
                "the working-set QP over {r} cuts has a non-finite value"
            )));
        }
        let w = self
            .gram
            .weights_into(&sol.alpha, &[1.0], std::mem::take(&mut self.spare));
        let margins: Vec<f64> = (0..r)
            .map(|i| (0..r).map(|j| g[i * r + j] * sol.alpha[j]).sum())
            .collect();
        let regularizer = 0.5
            * margins
                .iter()
                .zip(&sol.alpha)
                .map(|(m, a)| m * a)
                .sum::<f64>();
        self.alpha = sol.alpha;
        Ok(MasterSolution {
            w,
            value: sol.value,
            margins: Some(margins),
            regularizer: Some(regularizer.max(0.0)),
            factors: Vec::new(),
        })
    }
}
