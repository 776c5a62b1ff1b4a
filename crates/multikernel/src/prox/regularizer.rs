//! The [`Regularizer`] and [`BlockRegularizer`] traits (the `Omega` of martins2011 eq. 9) and
//! the block-norm reduction of Prop. 1.

use super::groups::Groups;
use crate::error::Result;

/// A regularizer `Omega` with its value and proximity operator
/// `prox_{tau Omega}(x) = argmin_z 1/2 ||z - x||^2 + tau Omega(z)` (martins2011 eq. 10).
pub trait Regularizer: Send + Sync + std::fmt::Debug {
    /// `Omega(x)` for the given group structure.
    fn value(&self, x: &[f64], groups: &Groups) -> f64;

    /// In place: `x <- prox_{tau Omega}(x)`, `tau >= 0` (a negative or NaN `tau` acts as 0).
    fn prox(&self, x: &mut [f64], groups: &Groups, tau: f64);

    /// `Some(..)` when `Omega` depends on `x` only through the block norms `b_m = ||x_m||`
    /// (Prop. 1 of martins2011), enabling the O(1)-per-group path of kernelized groups, where
    /// only the norms are known. The reduction is valid for pairwise disjoint groups (for
    /// `super::L2Sq`, whose value involves every coordinate, groups that also cover all
    /// coordinates); `prox_blocks` applies it.
    fn as_block(&self) -> Option<&dyn BlockRegularizer> {
        None
    }

    /// The proximal steps of Alg. 1 (lines 6-8, martins2011): writing
    /// `Omega = sum_j w_j Omega_j`, one step `prox_{eta lambda w_j Omega_j}` per term, in order.
    /// A plain regularizer is one step of weight 1; `super::Composite`, `super::ElasticNet`
    /// and `super::SparseGroupLasso` list their parts. The steps' own `steps()` are
    /// themselves (they are never composite).
    fn steps(&self) -> Vec<ProxStep<'_>>;

    /// Checks that the regularizer's parameters are valid and that `groups` suits it for
    /// vectors of length `dim` (indices in range; disjoint groups where the prox needs them).
    /// Callers that build groups or parameters from user input call this once before
    /// training; `value` and `prox` never fail.
    fn check(&self, groups: &Groups, dim: usize) -> Result<()> {
        groups.check(dim)
    }
}

/// `Omega(x) = phi(b)`, `b` the vector of block norms `b_m = ||x_m||` (Prop. 1, martins2011).
pub trait BlockRegularizer: Send + Sync + std::fmt::Debug {
    /// `phi(b)` for block norms `b` (all `>= 0`).
    fn value_norms(&self, b: &[f64]) -> f64;

    /// In place: `b` (all `>= 0`) `<- prox_{tau phi}(b)` (all `>= 0`, each `<=` its input).
    /// The caller rescales each block by `new / old` (0 where `old` is 0); see
    /// `prox_blocks` and `block_factors`.
    fn prox_norms(&self, b: &mut [f64], tau: f64);
}

/// One proximal step of Alg. 1: `x <- prox_{tau * weight * reg}(x)`.
#[derive(Debug, Clone, Copy)]
pub struct ProxStep<'a> {
    /// Weight `w_j` of the term in `Omega = sum_j w_j Omega_j`.
    pub weight: f64,
    /// The term `Omega_j`.
    pub reg: &'a dyn Regularizer,
}

impl ProxStep<'_> {
    /// Applies the step: `x <- prox_{tau weight Omega_j}(x)` (nothing when the weight is 0).
    pub(crate) fn apply(&self, x: &mut [f64], groups: &Groups, tau: f64) {
        if self.weight > 0.0 {
            self.reg.prox(x, groups, tau * self.weight);
        }
    }
}

/// Rescaling factors of Prop. 1: `new_m / old_m`, and 0 where `old_m = 0` (a zero block stays
/// zero whatever its factor).
pub(crate) fn block_factors(old: &[f64], new: &[f64]) -> Vec<f64> {
    old.iter()
        .zip(new)
        .map(|(&o, &n)| if o > 0.0 { n / o } else { 0.0 })
        .collect()
}

/// `x <- prox_{tau Omega}(x)` for `Omega(x) = phi(||x_1||, ..., ||x_M||)` by Prop. 1 of
/// martins2011: `[prox(x)]_m = [prox_{tau phi}(b)]_m x_m / b_m`. Exact for disjoint groups;
/// coordinates in no group are left unchanged.
pub(crate) fn prox_blocks(reg: &dyn BlockRegularizer, x: &mut [f64], groups: &Groups, tau: f64) {
    let old = groups.norms(x);
    let mut new = old.clone();
    reg.prox_norms(&mut new, tau);
    groups.scale_blocks(x, &block_factors(&old, &new));
}
