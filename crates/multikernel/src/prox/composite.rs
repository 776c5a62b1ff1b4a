//! Regularizers that act inside groups (l1, sparse group lasso) and the composite
//! `Omega = sum_j w_j Omega_j` of martins2011 eq. 9, handled by J proximal steps (Alg. 1).

use super::block::{check_sigma, GroupLasso};
use super::groups::Groups;
use super::ops::{sanitize, soft_threshold};
use super::regularizer::{ProxStep, Regularizer};
use crate::error::{Error, Result};

/// Lasso, `Omega(z) = ||z||_1` over every coordinate; prox = soft threshold (eq. 11).
/// Not a block regularizer: it sees individual coordinates.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct L1;

impl Regularizer for L1 {
    fn value(&self, x: &[f64], _groups: &Groups) -> f64 {
        x.iter().map(|v| v.abs()).sum()
    }
    fn prox(&self, x: &mut [f64], _groups: &Groups, tau: f64) {
        soft_threshold(x, tau);
    }
    fn steps(&self) -> Vec<ProxStep<'_>> {
        vec![ProxStep {
            weight: 1.0,
            reg: self,
        }]
    }
}

/// Sparse group lasso (Friedman et al. 2010; martins2011 Sec. 3.2 "Other variants"):
/// `Omega(z) = sigma ||z||_1 + (1 - sigma) sum_m ||z_m||`, `sigma in [0, 1]`.
///
/// Note the weight convention: `sigma` multiplies the l1 term here (martins2011 writes
/// `sigma ||.||_{2,1} + (1 - sigma) ||.||_1`, the other way round).
///
/// Prox: soft threshold by `tau sigma` within groups, then group soft threshold by
/// `tau (1 - sigma)` (the two steps Alg. 1 takes). This composition is the exact prox of the
/// sum for disjoint, and more generally tree-structured, groups (the l1 term is a sum over
/// singleton groups, the leaves of the tree).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct SparseGroupLasso {
    /// Weight of the l1 term, in [0, 1].
    pub sigma: f64,
}

impl SparseGroupLasso {
    fn sigma_eff(&self) -> f64 {
        if self.sigma.is_nan() {
            0.0
        } else {
            self.sigma.clamp(0.0, 1.0)
        }
    }
}

impl Regularizer for SparseGroupLasso {
    fn value(&self, x: &[f64], groups: &Groups) -> f64 {
        let s = self.sigma_eff();
        s * L1.value(x, groups) + (1.0 - s) * GroupLasso.value(x, groups)
    }
    fn prox(&self, x: &mut [f64], groups: &Groups, tau: f64) {
        let t = sanitize(tau);
        if t == 0.0 {
            return;
        }
        for step in self.steps() {
            step.apply(x, groups, t);
        }
    }
    fn steps(&self) -> Vec<ProxStep<'_>> {
        let s = self.sigma_eff();
        vec![
            ProxStep {
                weight: s,
                reg: &L1,
            },
            ProxStep {
                weight: 1.0 - s,
                reg: &GroupLasso,
            },
        ]
    }
    fn check(&self, groups: &Groups, dim: usize) -> Result<()> {
        check_sigma(self.sigma, "sparse-group")?;
        groups.check(dim)
    }
}

/// A weighted sum `Omega = sum_j w_j Omega_j` (martins2011 eq. 9, J > 1).
///
/// `value` is the weighted sum. `prox` applies the parts' proxes in sequence with step
/// `tau w_j`, which is what Alg. 1 does each round (lines 6-8). That composition is the exact
/// prox of the sum only in special cases: l1 followed by group lasso on tree-structured
/// groups (the sparse group lasso), or a degree-1 homogeneous part followed by [`super::L2Sq`]
/// (e.g. group lasso then ridge). For the squared l2,1 plus ridge (elastic net) and for
/// general overlapping groups it is an approximation that agrees with the exact prox to first
/// order in tau; [`super::ElasticNet`] has the exact prox of its sum.
#[derive(Debug, Default)]
#[cfg_attr(not(test), allow(dead_code))] // the tests use it
pub(crate) struct Composite {
    /// `(w_j, Omega_j)`, applied in this order. Weights must be finite and `>= 0`.
    pub parts: Vec<(f64, Box<dyn Regularizer>)>,
}

impl Composite {
    /// A composite from its parts.
    #[cfg_attr(not(test), allow(dead_code))] // the tests use it
    pub(crate) fn new(parts: Vec<(f64, Box<dyn Regularizer>)>) -> Composite {
        Composite { parts }
    }
}

impl Regularizer for Composite {
    fn value(&self, x: &[f64], groups: &Groups) -> f64 {
        self.parts
            .iter()
            .filter(|(w, _)| *w > 0.0)
            .map(|(w, r)| w * r.value(x, groups))
            .sum()
    }
    fn prox(&self, x: &mut [f64], groups: &Groups, tau: f64) {
        let t = sanitize(tau);
        if t == 0.0 {
            return;
        }
        for step in self.steps() {
            step.apply(x, groups, t);
        }
    }
    fn steps(&self) -> Vec<ProxStep<'_>> {
        self.parts
            .iter()
            .flat_map(|(w, r)| {
                r.steps().into_iter().map(move |s| ProxStep {
                    weight: w * s.weight,
                    reg: s.reg,
                })
            })
            .collect()
    }
    fn check(&self, groups: &Groups, dim: usize) -> Result<()> {
        for (j, (w, r)) in self.parts.iter().enumerate() {
            if !(w.is_finite() && *w >= 0.0) {
                return Err(Error::param(
                    "weight",
                    w,
                    format!("a finite number >= 0 (part {j} of the composite regularizer)"),
                ));
            }
            r.check(groups, dim)?;
        }
        groups.check(dim)
    }
}
