//! Block-norm regularizers (martins2011 Sec. 2.2 and 3.2): `Omega(x) = phi(b)` with
//! `b_m = ||x_m||`, their proxes through Prop. 1.

use super::groups::{group_norm, Groups};
use super::ops::{prox_power, prox_squared_l1, sanitize, soft};
use super::regularizer::{prox_blocks, BlockRegularizer, ProxStep, Regularizer};
use crate::error::{Error, Result};

/// `Omega(z) = 1/2 ||z||^2` (every coordinate): plain l2 regularization, the sum-of-kernels
/// case q = 2 of martins2011 eq. 6. `prox_{tau Omega}(x) = x / (1 + tau)`.
///
/// As a block regularizer, `phi(b) = 1/2 ||b||^2`, equal to `Omega` when the groups partition
/// the coordinates.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct L2Sq;

impl BlockRegularizer for L2Sq {
    fn value_norms(&self, b: &[f64]) -> f64 {
        0.5 * b.iter().map(|v| v * v).sum::<f64>()
    }
    fn prox_norms(&self, b: &mut [f64], tau: f64) {
        let f = 1.0 / (1.0 + sanitize(tau));
        for v in b.iter_mut() {
            *v *= f;
        }
    }
}

impl Regularizer for L2Sq {
    fn value(&self, x: &[f64], _groups: &Groups) -> f64 {
        0.5 * x.iter().map(|v| v * v).sum::<f64>()
    }
    fn prox(&self, x: &mut [f64], _groups: &Groups, tau: f64) {
        self.prox_norms(x, tau);
    }
    fn as_block(&self) -> Option<&dyn BlockRegularizer> {
        Some(self)
    }
    fn steps(&self) -> Vec<ProxStep<'_>> {
        vec![ProxStep {
            weight: 1.0,
            reg: self,
        }]
    }
}

/// Group lasso, `Omega(z) = ||z||_{2,1} = sum_m ||z_m||` (martins2011 Sec. 2.2). Its prox
/// soft-thresholds the block norms (eq. 11 on `b`, via Prop. 1).
///
/// Overlapping groups are allowed (hierarchical / overlapping group lasso, Sec. 3.2 "Other
/// variants"): the prox is then computed as one group-wise step per group, smaller groups
/// first. That composition is the exact prox when the groups are tree-structured (any two
/// disjoint or nested; Jenatton, Mairal, Obozinski and Bach 2011, "Proximal methods for
/// hierarchical sparse coding", JMLR 12), and an approximation for general overlaps. As a block regularizer
/// ([`Regularizer::as_block`]) it assumes disjoint groups.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct GroupLasso;

impl BlockRegularizer for GroupLasso {
    fn value_norms(&self, b: &[f64]) -> f64 {
        b.iter().sum()
    }
    fn prox_norms(&self, b: &mut [f64], tau: f64) {
        let t = sanitize(tau);
        for v in b.iter_mut() {
            *v = soft(*v, t);
        }
    }
}

impl Regularizer for GroupLasso {
    fn value(&self, x: &[f64], groups: &Groups) -> f64 {
        groups.norms(x).iter().sum()
    }
    fn prox(&self, x: &mut [f64], groups: &Groups, tau: f64) {
        let t = sanitize(tau);
        if t == 0.0 {
            return;
        }
        groupwise(x, groups, |b| soft(b, t));
    }
    fn as_block(&self) -> Option<&dyn BlockRegularizer> {
        Some(self)
    }
    fn steps(&self) -> Vec<ProxStep<'_>> {
        vec![ProxStep {
            weight: 1.0,
            reg: self,
        }]
    }
}

/// Squared group lasso, `Omega(z) = 1/2 (sum_m ||z_m||)^2 = 1/2 ||z||_{2,1}^2`: the sparse MKL
/// regularizer of martins2011 Sec. 2.2. Its prox is Alg. 2 on the block norms, then a
/// rescaling of each block (Prop. 1), O(M log M).
///
/// Needs disjoint groups ([`Regularizer::check`] rejects overlaps). If called with
/// overlapping groups anyway, the prox keeps each coordinate only in the first group that
/// lists it (see `Groups::first_owner`); it is then not the prox of [`Regularizer::value`].
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SquaredL21;

impl BlockRegularizer for SquaredL21 {
    fn value_norms(&self, b: &[f64]) -> f64 {
        let s: f64 = b.iter().sum();
        0.5 * s * s
    }
    fn prox_norms(&self, b: &mut [f64], tau: f64) {
        prox_squared_l1(b, tau);
    }
}

impl Regularizer for SquaredL21 {
    fn value(&self, x: &[f64], groups: &Groups) -> f64 {
        self.value_norms(&groups.norms(x))
    }
    fn prox(&self, x: &mut [f64], groups: &Groups, tau: f64) {
        prox_disjoint(self, x, groups, tau);
    }
    fn as_block(&self) -> Option<&dyn BlockRegularizer> {
        Some(self)
    }
    fn steps(&self) -> Vec<ProxStep<'_>> {
        vec![ProxStep {
            weight: 1.0,
            reg: self,
        }]
    }
    fn check(&self, groups: &Groups, dim: usize) -> Result<()> {
        groups.check_disjoint(dim, "the squared l2,1 regularizer (l21sq)")
    }
}

/// Separable l2,q regularizer `Omega(z) = 1/q sum_m ||z_m||^q`, `q >= 1` (non-sparse MKL in
/// the separable form of martins2011 Sec. 3.2: same regularization path as `1/2 ||z||_{2,q}^2`
/// of eq. 6 up to a change of lambda). `q = 1` is the group lasso; `q = 2` is [`L2Sq`] on the
/// grouped coordinates.
///
/// The prox solves, per block, `b - b0 + tau b^(q-1) = 0` on `[0, b0]` with a safeguarded
/// Newton method ([`prox_power`]). With overlapping groups it makes one group-wise step per
/// group, smaller groups first (exact for q = 1 on tree-structured groups, an approximation
/// otherwise). A `q` below 1 or NaN is rejected by [`Regularizer::check`] and acts as 1.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct L2q {
    /// Block norm q >= 1 (docs/formulas.md "Notation").
    pub q: f64,
}

impl L2q {
    fn block_value(&self, b: f64) -> f64 {
        let q = self.q_eff();
        if q == 1.0 {
            b
        } else {
            b.powf(q) / q
        }
    }
    fn q_eff(&self) -> f64 {
        if self.q.is_nan() || self.q < 1.0 {
            1.0
        } else {
            self.q
        }
    }
}

impl BlockRegularizer for L2q {
    fn value_norms(&self, b: &[f64]) -> f64 {
        b.iter().map(|&v| self.block_value(v)).sum()
    }
    fn prox_norms(&self, b: &mut [f64], tau: f64) {
        let q = self.q_eff();
        for v in b.iter_mut() {
            *v = prox_power(*v, tau, q);
        }
    }
}

impl Regularizer for L2q {
    fn value(&self, x: &[f64], groups: &Groups) -> f64 {
        self.value_norms(&groups.norms(x))
    }
    fn prox(&self, x: &mut [f64], groups: &Groups, tau: f64) {
        let t = sanitize(tau);
        if t == 0.0 {
            return;
        }
        let q = self.q_eff();
        groupwise(x, groups, |b| prox_power(b, t, q));
    }
    fn as_block(&self) -> Option<&dyn BlockRegularizer> {
        Some(self)
    }
    fn steps(&self) -> Vec<ProxStep<'_>> {
        vec![ProxStep {
            weight: 1.0,
            reg: self,
        }]
    }
    fn check(&self, groups: &Groups, dim: usize) -> Result<()> {
        if !(self.q.is_finite() && self.q >= 1.0) {
            return Err(Error::param(
                "q",
                self.q,
                "a finite number >= 1 (the block norm of l2q)",
            ));
        }
        groups.check(dim)
    }
}

/// Elastic-net MKL (Tomioka and Suzuki 2010; martins2011 Sec. 3.2 "Other variants"):
/// `Omega(z) = sigma/2 sum_m ||z_m||^2 + (1 - sigma)/2 (sum_m ||z_m||)^2`, `sigma in [0, 1]`
/// (the first term is `sigma/2 ||z||^2` when the groups cover every coordinate).
///
/// [`Regularizer::prox`] is the exact prox of the sum: completing the square and using the
/// 2-homogeneity of the squared l2,1 norm `h`,
/// `prox_{tau Omega}(x) = prox_{tau (1-sigma)/(1 + tau sigma) h}(x) / (1 + tau sigma)`.
/// [`Regularizer::steps`] gives instead the two steps Alg. 1 takes (J = 2): `sigma` on
/// [`L2Sq`], then `1 - sigma` on [`SquaredL21`]. Composing those two proxes differs from the
/// exact prox at second order in tau (a splitting, as in Alg. 1). Needs disjoint groups
/// (same caveat as [`SquaredL21`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct ElasticNet {
    /// Weight of the ridge term, in [0, 1].
    pub sigma: f64,
}

impl ElasticNet {
    fn sigma_eff(&self) -> f64 {
        if self.sigma.is_nan() {
            0.0
        } else {
            self.sigma.clamp(0.0, 1.0)
        }
    }
}

impl BlockRegularizer for ElasticNet {
    fn value_norms(&self, b: &[f64]) -> f64 {
        let s = self.sigma_eff();
        let sum: f64 = b.iter().sum();
        let sq: f64 = b.iter().map(|v| v * v).sum();
        0.5 * s * sq + 0.5 * (1.0 - s) * sum * sum
    }
    fn prox_norms(&self, b: &mut [f64], tau: f64) {
        let t = sanitize(tau);
        if t == 0.0 {
            return;
        }
        let s = self.sigma_eff();
        let shrink = 1.0 + t * s;
        prox_squared_l1(b, t * (1.0 - s) / shrink);
        for v in b.iter_mut() {
            *v /= shrink;
        }
    }
}

impl Regularizer for ElasticNet {
    fn value(&self, x: &[f64], groups: &Groups) -> f64 {
        self.value_norms(&groups.norms(x))
    }
    fn prox(&self, x: &mut [f64], groups: &Groups, tau: f64) {
        prox_disjoint(self, x, groups, tau);
    }
    fn as_block(&self) -> Option<&dyn BlockRegularizer> {
        Some(self)
    }
    fn steps(&self) -> Vec<ProxStep<'_>> {
        let s = self.sigma_eff();
        vec![
            ProxStep {
                weight: s,
                reg: &L2Sq,
            },
            ProxStep {
                weight: 1.0 - s,
                reg: &SquaredL21,
            },
        ]
    }
    fn check(&self, groups: &Groups, dim: usize) -> Result<()> {
        check_sigma(self.sigma, "elastic")?;
        groups.check_disjoint(dim, "the elastic-net regularizer (elastic)")
    }
}

/// Rejects a mixing weight outside [0, 1].
pub(crate) fn check_sigma(sigma: f64, what: &str) -> Result<()> {
    if (0.0..=1.0).contains(&sigma) {
        Ok(())
    } else {
        Err(Error::param(
            "sigma",
            sigma,
            format!("a number in [0, 1] (the mixing weight of {what})"),
        ))
    }
}

/// Prop. 1 on disjoint groups; overlapping groups are first made disjoint by
/// [`Groups::first_owner`].
fn prox_disjoint(reg: &dyn BlockRegularizer, x: &mut [f64], groups: &Groups, tau: f64) {
    if sanitize(tau) == 0.0 {
        return;
    }
    if groups.is_disjoint(x.len()) {
        prox_blocks(reg, x, groups, tau);
    } else {
        prox_blocks(reg, x, &groups.first_owner(x.len()), tau);
    }
}

/// Applies a separable block map `b -> new_b` group by group (each block scaled by
/// `new_b / b`). Disjoint groups: in index order (the order does not matter). Overlapping
/// groups: smaller groups first, each step seeing the result of the previous ones.
pub(crate) fn groupwise(x: &mut [f64], groups: &Groups, map: impl Fn(f64) -> f64) {
    let disjoint = groups.is_disjoint(x.len());
    let mut step = |g: &[usize]| {
        let b = group_norm(x, g);
        if b > 0.0 {
            let f = map(b) / b;
            if f != 1.0 {
                for &i in g {
                    x[i] *= f;
                }
            }
        }
    };
    if disjoint {
        for g in &groups.members {
            step(g);
        }
    } else {
        for m in groups.order_by_size() {
            step(&groups.members[m]);
        }
    }
}
